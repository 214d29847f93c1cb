/*
 * topo/net_ib_util.c: small helpers of the fabric parsers: GUID and string hash maps, line reading,
 * GUID, link width and speed parsing.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"

static size_t hash_u64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return (size_t)k;
}

static size_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return hash_u64(h);
}

static size_t hash_u64_at(const void *p)
{
	uint64_t k;

	memcpy(&k, p, sizeof(k));
	return hash_u64(k);
}

static size_t hash_str_at(const void *p)
{
	const char *k;

	memcpy(&k, p, sizeof(k));
	return hash_str(k);
}

/* Doubles an open-addressing table of *cap slots (0: creates 64): keys of ksize bytes (all-zero bytes =
 * empty slot) in *keys, values in *vals; hash(key) picks the slot. Returns 0, or -1 (ENOMEM) with the
 * table unchanged. Shared by the GUID and the string map. */
static int table_grow(void **keys, uint32_t **vals, size_t *cap, size_t ksize, size_t (*hash)(const void *))
{
	static const unsigned char empty[16];
	size_t ncap = *cap ? *cap * 2 : 64, i;
	unsigned char *nk = calloc(ncap, ksize);
	const unsigned char *ok = *keys;
	uint32_t *nv = malloc(ncap * sizeof(*nv));

	if (!nk || !nv || ksize > sizeof(empty)) {
		free(nk);
		free(nv);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < *cap; i++) {
		size_t j;

		if (!memcmp(ok + i * ksize, empty, ksize))
			continue;
		for (j = hash(ok + i * ksize) & (ncap - 1); memcmp(nk + j * ksize, empty, ksize);
		     j = (j + 1) & (ncap - 1))
			;
		memcpy(nk + j * ksize, ok + i * ksize, ksize);
		nv[j] = (*vals)[i];
	}
	free(*keys);
	free(*vals);
	*keys = nk;
	*vals = nv;
	*cap = ncap;
	return 0;
}

static int u64map_grow(struct ib_u64map *m)
{
	void *keys = m->keys;

	if (table_grow(&keys, &m->vals, &m->cap, sizeof(*m->keys), hash_u64_at) < 0)
		return -1;
	m->keys = keys;
	return 0;
}

int ib_u64map_put(struct ib_u64map *m, uint64_t key, uint32_t val)
{
	size_t j;

	if (!key) {
		errno = EINVAL;
		return -1;
	}
	if ((m->n + 1) * 2 > m->cap && u64map_grow(m) < 0)
		return -1;
	for (j = hash_u64(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
		if (m->keys[j] == key) {
			m->vals[j] = val;
			return 0;
		}
	}
	m->keys[j] = key;
	m->vals[j] = val;
	m->n++;
	return 0;
}

uint32_t ib_u64map_get(const struct ib_u64map *m, uint64_t key)
{
	size_t j;

	if (!m->cap || !key)
		return IB_NONE;
	for (j = hash_u64(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key)
			return m->vals[j];
	return IB_NONE;
}

void ib_u64map_free(struct ib_u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static int strmap_grow(struct ib_strmap *m)
{
	void *keys = (void *)m->keys;

	if (table_grow(&keys, &m->vals, &m->cap, sizeof(*m->keys), hash_str_at) < 0)
		return -1;
	m->keys = keys;
	return 0;
}

int ib_strmap_put(struct ib_strmap *m, const char *key, uint32_t val)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && strmap_grow(m) < 0)
		return -1;
	for (j = hash_str(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
		if (!strcmp(m->keys[j], key)) {
			m->vals[j] = val;
			return 0;
		}
	}
	m->keys[j] = key;
	m->vals[j] = val;
	m->n++;
	return 0;
}

uint32_t ib_strmap_get(const struct ib_strmap *m, const char *key)
{
	size_t j;

	if (!m->cap)
		return IB_NONE;
	for (j = hash_str(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
		if (!strcmp(m->keys[j], key))
			return m->vals[j];
	return IB_NONE;
}

void ib_strmap_free(struct ib_strmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

char *ib_next_line(struct ib_lines *ln)
{
	char *s = ln->p, *e;

	if (ln->p >= ln->end)
		return NULL;
	e = memchr(s, '\n', (size_t)(ln->end - s));
	if (!e)
		e = ln->end;
	ln->p = e < ln->end ? e + 1 : e;
	*e = '\0';
	if (e > s && e[-1] == '\r')
		e[-1] = '\0';
	ln->lineno++;
	return s;
}

char *ib_read_file(const char *path, rm_file_kind_t kind, size_t *len, rm_error_t *err)
{
	return rm_file_read(path, kind, len, err);
}

int ib_parse_guid(const char **p, uint64_t *guid)
{
	const char *s = *p;
	uint64_t v = 0;
	int nd = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	while (isxdigit((unsigned char)*s)) {
		int c = (unsigned char)*s++;

		if (++nd > 16)
			return -1;
		v = v << 4 | (uint64_t)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
	}
	if (!nd || !v)
		return -1;
	*guid = v;
	*p = s;
	return 0;
}

static const struct {
	const char *name;
	double lane_gbps;
} speeds[IB_SPEED_COUNT] = {
	[IB_SPEED_UNKNOWN] = { "unknown", 0 },   [IB_SPEED_SDR] = { "SDR", 2.5 },
	[IB_SPEED_DDR] = { "DDR", 5 },           [IB_SPEED_QDR] = { "QDR", 10 },
	[IB_SPEED_FDR10] = { "FDR10", 10.3125 }, [IB_SPEED_FDR] = { "FDR", 14.0625 },
	[IB_SPEED_EDR] = { "EDR", 25.78125 },    [IB_SPEED_HDR] = { "HDR", 53.125 },
	[IB_SPEED_NDR] = { "NDR", 106.25 },      [IB_SPEED_XDR] = { "XDR", 212.5 },
};

int ib_parse_speed(const char *s, uint8_t *speed)
{
	int i;

	if (!strcmp(s, "???")) {
		*speed = IB_SPEED_UNKNOWN;
		return 0;
	}
	for (i = 1; i < IB_SPEED_COUNT; i++) {
		if (!strcasecmp(s, speeds[i].name)) {
			*speed = (uint8_t)i;
			return 0;
		}
	}
	return -1;
}

/* Accepts "1x", "2x", "4x", "8x", "12x" (any case). */
int ib_parse_width(const char *s, uint8_t *width)
{
	char *end;
	long w;

	if (!isdigit((unsigned char)*s))
		return -1;
	w = strtol(s, &end, 10);
	if ((*end != 'x' && *end != 'X') || end[1] != '\0')
		return -1;
	if (w != 1 && w != 2 && w != 4 && w != 8 && w != 12)
		return -1;
	*width = (uint8_t)w;
	return 0;
}

const char *ib_speed_name(uint8_t speed)
{
	return speed < IB_SPEED_COUNT ? speeds[speed].name : "unknown";
}

int ib_link_norms(struct topo_fabric *f)
{
	size_t(*sc)[IB_SPEED_COUNT] = calloc(f->nsubnets + 1, sizeof(*sc)),
	(*wc)[13] = calloc(f->nsubnets + 1, sizeof(*wc));
	size_t i, bs, bw;
	uint32_t s;
	int k;

	f->norm_speed = calloc(f->nsubnets + 1, 1);
	f->norm_width = calloc(f->nsubnets + 1, 1);
	if (!sc || !wc || !f->norm_speed || !f->norm_width) {
		free(sc);
		free(wc);
		return -1;
	}
	for (i = 0; i < f->nlinks; i++) { /* one pass over the links, counted per subnet */
		const struct ib_link *l = &f->links[i];

		s = f->nodes[l->node[0]].subnet;
		sc[s][l->speed < IB_SPEED_COUNT ? l->speed : 0]++;
		wc[s][l->width <= 12 ? l->width : 0]++;
	}
	for (s = 0; s < f->nsubnets; s++) {
		for (k = 1, bs = 0; k < IB_SPEED_COUNT; k++)
			if (sc[s][k] > bs)
				bs = sc[s][k], f->norm_speed[s] = (uint8_t)k;
		for (k = 1, bw = 0; k <= 12; k++)
			if (wc[s][k] > bw)
				bw = wc[s][k], f->norm_width[s] = (uint8_t)k;
	}
	free(sc);
	free(wc);
	return 0;
}

unsigned ib_link_verdict(const struct topo_fabric *f, const struct ib_link *l)
{
	uint32_t s = f->nodes[l->node[0]].subnet;
	unsigned v = 0;

	if (l->max_speed && l->speed && l->speed < l->max_speed)
		v |= TOPO_LINK_COULD_BE_FASTER;
	if (l->max_width && l->width && l->width < l->max_width)
		v |= TOPO_LINK_COULD_BE_WIDER;
	if (!f->norm_speed || s >= f->nsubnets)
		return v;
	if (!l->max_speed && l->speed && l->speed < f->norm_speed[s])
		v |= TOPO_LINK_SLOWER_THAN_NORM;
	if (!l->max_width && l->width && l->width < f->norm_width[s])
		v |= TOPO_LINK_NARROWER_THAN_NORM;
	return v;
}

double ib_link_gbps(const struct ib_link *l)
{
	return l->speed < IB_SPEED_COUNT ? speeds[l->speed].lane_gbps * l->width : 0;
}

char *ib_strndup(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

const char *ib_skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

int ib_line_is_noise(const char *s)
{
	return !*s || *s == '#' || !strncmp(s, "DR path", 7) || !strncmp(s, "ibwarn: ", 8);
}

/* Unconnected ports of a switch: declared ports without a link, or those a ports report listed. */
uint32_t ib_port_peer(const struct ib_node *nodes, const struct ib_link *links, uint32_t n, unsigned p,
		      unsigned *peer_port)
{
	const struct ib_node *nd = &nodes[n];
	const struct ib_link *l;
	int side;

	if (!nd->port_link || p > nd->nports || nd->port_link[p] == IB_NONE)
		return IB_NONE;
	l = &links[nd->port_link[p]];
	side = l->node[0] == n && l->port[0] == p ? 1 : 0;
	if (peer_port)
		*peer_port = l->port[side];
	return l->node[side];
}

unsigned ib_unconnected_ports(const struct ib_node *nd)
{
	unsigned p, n = 0;

	if (!nd->declared)
		return nd->down_ports;
	for (p = 1; nd->port_link && p <= nd->nports; p++)
		n += nd->port_link[p] == IB_NONE;
	return n;
}
