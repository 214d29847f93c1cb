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

static int u64map_grow(struct ib_u64map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64, i;
	uint64_t *keys = calloc(ncap, sizeof(*keys));
	uint32_t *vals = malloc(ncap * sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		for (j = hash_u64(m->keys[i]) & (ncap - 1); keys[j]; j = (j + 1) & (ncap - 1))
			;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = ncap;
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
	size_t ncap = m->cap ? m->cap * 2 : 64, i;
	const char **keys = calloc(ncap, sizeof(*keys));
	uint32_t *vals = malloc(ncap * sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		for (j = hash_str(m->keys[i]) & (ncap - 1); keys[j]; j = (j + 1) & (ncap - 1))
			;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = ncap;
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

char *ib_read_file(const char *path, size_t *len, rm_error_t *err)
{
	FILE *fp = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *buf = NULL, *nb;

	if (!fp) {
		int e = errno;
		rm_error_set(err, path, 0, 0, "cannot open: %s", strerror(e));
		errno = e;
		return NULL;
	}
	for (;;) {
		size_t r;

		nb = realloc(buf, cap + 1);
		if (!nb) {
			free(buf);
			fclose(fp);
			rm_error_set(err, path, 0, 0, "out of memory reading the file");
			errno = ENOMEM;
			return NULL;
		}
		buf = nb;
		r = fread(buf + n, 1, cap - n, fp);
		n += r;
		if (n < cap)
			break;
		cap *= 2;
	}
	if (ferror(fp)) {
		int e = errno ? errno : EIO;
		free(buf);
		fclose(fp);
		rm_error_set(err, path, 0, 0, "read error: %s", strerror(e));
		errno = e;
		return NULL;
	}
	fclose(fp);
	buf[n] = '\0';
	*len = n;
	return buf;
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
	[IB_SPEED_UNKNOWN] = { "unknown", 0 }, [IB_SPEED_SDR] = { "SDR", 2.5 },
	[IB_SPEED_DDR] = { "DDR", 5 },         [IB_SPEED_QDR] = { "QDR", 10 },
	[IB_SPEED_FDR10] = { "FDR10", 10.3125 }, [IB_SPEED_FDR] = { "FDR", 14.0625 },
	[IB_SPEED_EDR] = { "EDR", 25.78125 },  [IB_SPEED_HDR] = { "HDR", 53.125 },
	[IB_SPEED_NDR] = { "NDR", 106.25 },    [IB_SPEED_XDR] = { "XDR", 212.5 },
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
