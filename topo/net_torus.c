/*
 * topo/net_torus.c: the 3D torus (struct topo_torus_model): its config file, host naming (table or
 * pattern), link-cost-weighted distances and its part of the report.
 *
 * Config format (documented in conf/torus.conf.example):
 *   # comment
 *   dims = 17x8x24              router extents x, y, z (required, each >= 1)
 *   wrap = yes,yes,no           per dimension, or one value for all (default yes)
 *   link_cost = 1,2,0.67        cost of one hop per dimension (default 1,1,1)
 *   nodes_per_router = 2        (default 1)
 *   host_pattern = nid{id:5}    names every node: {x} {y} {z} {n} {id} {router}, ":W" zero-pads
 *   [hosts]                     then one line per host: NAME X Y Z [N]
 * Nodes are numbered router-major: ((x * Y + y) * Z + z) * nodes_per_router + n.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_private.h"
#include "rm_file.h"
#include "rm_text.h"

#define TORUS_MAX_DIM (1 << 20)
/* At most 2^20 nodes (over six times Fugaku's 158,976): a 2-line file declares them all, and naming
 * them by host_pattern costs about 100 bytes a node, so the declared size is bounded before that. */
#define TORUS_MAX_NODES (1L << 20)
#define TORUS_MAX_NPR 1024

enum torus_naming { NAMING_COORDS = 0, NAMING_TABLE, NAMING_PATTERN };

struct topo_torus_model {
	topo_torus_spec_t spec;
	long nnodes;
	enum torus_naming naming;
	char *pattern; /* host_pattern, NULL if none */
	size_t nhosts, hosts_cap;
	char **names;    /* nhosts */
	long *host_node; /* nhosts */
	long *htab;      /* open addressing: host index + 1, 0 = empty */
	size_t hcap;     /* power of two */
};

/* ---- spec ------------------------------------------------------------------------------------ */

static int spec_check(const topo_torus_spec_t *s, const char *src, int line, rm_error_t *err)
{
	long n = 1;
	int d;

	for (d = 0; d < 3; d++) {
		if (s->dims[d] < 1 || s->dims[d] > TORUS_MAX_DIM)
			return rm_error_set(err, src, line, 0, "dimension %c is %d: must be 1 to %d", "xyz"[d],
					    s -> dims[d], TORUS_MAX_DIM);
		if (!(s->link_cost[d] > 0) || s->link_cost[d] > 1e9)
			return rm_error_set(err, src, line, 0, "link cost of %c is %g: must be > 0", "xyz"[d],
					    s -> link_cost[d]);
		n *= s->dims[d];
	}
	if (s->nodes_per_router < 1 || s->nodes_per_router > TORUS_MAX_NPR)
		return rm_error_set(err, src, line, 0, "nodes per router is %d: must be 1 to %d", s->nodes_per_router,
				    TORUS_MAX_NPR);
	if (n * s->nodes_per_router > TORUS_MAX_NODES)
		return rm_error_set(err, src, line, 0, "torus has %ld nodes: at most %ld supported",
				    n * s->nodes_per_router, TORUS_MAX_NODES);
	return 0;
}

static struct topo_torus_model *model_new(void)
{
	struct topo_torus_model *t = calloc(1, sizeof(*t));
	int d;

	if (!t)
		return NULL;
	for (d = 0; d < 3; d++) {
		t->spec.wrap[d] = 1;
		t->spec.link_cost[d] = 1.0;
	}
	t->spec.nodes_per_router = 1;
	return t;
}

struct topo_torus_model *topo_torus_model_from_spec(const topo_torus_spec_t *spec, rm_error_t *err)
{
	struct topo_torus_model *t;
	int d;

	if (!spec) {
		rm_error_set(err, "torus", 0, 0, "no torus spec given");
		errno = EINVAL;
		return NULL;
	}
	if (spec_check(spec, "torus", 0, err) < 0) {
		errno = EINVAL;
		return NULL;
	}
	t = model_new();
	if (!t) {
		rm_error_set(err, "torus", 0, 0, "out of memory");
		return NULL;
	}
	t->spec = *spec;
	for (d = 0; d < 3; d++)
		t->spec.wrap[d] = spec->wrap[d] ? 1 : 0;
	t->nnodes = (long)spec->dims[0] * spec->dims[1] * spec->dims[2] * spec->nodes_per_router;
	return t;
}

void topo_torus_model_destroy(struct topo_torus_model *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nhosts; i++)
		free(t->names[i]);
	free(t->names);
	free(t->host_node);
	free(t->htab);
	free(t->pattern);
	free(t);
}

const topo_torus_spec_t *topo_torus_model_spec(const struct topo_torus_model *t)
{
	return t ? &t->spec : NULL;
}

size_t topo_torus_model_nhosts(const struct topo_torus_model *t)
{
	return t ? t->nhosts : 0;
}

const char *topo_torus_model_host_name(const struct topo_torus_model *t, size_t i)
{
	if (!t || i >= t->nhosts) {
		errno = ENOENT;
		return NULL;
	}
	return t->names[i];
}

size_t topo_torus_host_names(topo_cluster_t c, const char **names, size_t nnodes)
{
	const struct topo_torus_model *t = c ? c->torus : NULL;
	size_t i, n = 0;

	for (i = 0; names && i < nnodes; i++)
		names[i] = NULL;
	for (i = 0; t && names && i < t->nhosts; i++) {
		long node = t->host_node[i];

		if (node >= 0 && (size_t)node < nnodes && !names[node]) {
			names[node] = t->names[i];
			n++;
		}
	}
	return n;
}

/* ---- host hash --------------------------------------------------------------------------------- */

static size_t hash_str(const char *s)
{
	size_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/* Returns the host index of name, or -1. */
static long host_lookup(const struct topo_torus_model *t, const char *name)
{
	size_t i;

	if (!t->hcap)
		return -1;
	for (i = hash_str(name) & (t->hcap - 1); t->htab[i]; i = (i + 1) & (t->hcap - 1))
		if (!strcmp(t->names[t->htab[i] - 1], name))
			return t->htab[i] - 1;
	return -1;
}

static void hash_insert(struct topo_torus_model *t, long host)
{
	size_t i = hash_str(t->names[host]) & (t->hcap - 1);

	while (t->htab[i])
		i = (i + 1) & (t->hcap - 1);
	t->htab[i] = host + 1;
}

static int hash_grow(struct topo_torus_model *t)
{
	size_t cap = t->hcap ? t->hcap * 2 : 64, i;
	long *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -1;
	free(t->htab);
	t->htab = tab;
	t->hcap = cap;
	for (i = 0; i < t->nhosts; i++)
		hash_insert(t, (long)i);
	return 0;
}

/* Adds a host (name copied). Returns 0, or -1 on allocation failure. Caller checks duplicates. */
static int host_add(struct topo_torus_model *t, const char *name, long node)
{
	if (t->nhosts == t->hosts_cap) {
		size_t cap = t->hosts_cap ? t->hosts_cap * 2 : 64;
		char **nm = realloc(t->names, cap * sizeof(*nm));
		long *hn;

		if (!nm)
			return -1;
		t->names = nm;
		hn = realloc(t->host_node, cap * sizeof(*hn));
		if (!hn)
			return -1;
		t->host_node = hn;
		t->hosts_cap = cap;
	}
	t->names[t->nhosts] = strdup(name);
	if (!t->names[t->nhosts])
		return -1;
	t->host_node[t->nhosts] = node;
	t->nhosts++;
	if ((t->nhosts + 1) * 2 > t->hcap)
		return hash_grow(t);
	hash_insert(t, (long)t->nhosts - 1);
	return 0;
}

long topo_torus_model_host_node(const struct topo_torus_model *t, const char *name)
{
	long h;

	if (!t || !name) {
		errno = EINVAL;
		return -1;
	}
	h = host_lookup(t, name);
	if (h < 0) {
		errno = ENOENT;
		return -1;
	}
	return t->host_node[h];
}

/* ---- distance ---------------------------------------------------------------------------------- */

static void node_coords(const topo_torus_spec_t *s, long node, int c[3])
{
	long r = node / s->nodes_per_router;

	c[2] = (int)(r % s->dims[2]);
	r /= s->dims[2];
	c[1] = (int)(r % s->dims[1]);
	c[0] = (int)(r / s->dims[1]);
}

double topo_torus_model_distance(const struct topo_torus_model *t, long a, long b)
{
	int ca[3], cb[3], d;
	double dist = 0;

	if (!t || a < 0 || b < 0 || a >= t->nnodes || b >= t->nnodes)
		return -1.0;
	node_coords(&t->spec, a, ca);
	node_coords(&t->spec, b, cb);
	for (d = 0; d < 3; d++) {
		int h = abs(ca[d] - cb[d]);

		if (t->spec.wrap[d] && t->spec.dims[d] - h < h)
			h = t->spec.dims[d] - h;
		dist += h * t->spec.link_cost[d];
	}
	return dist;
}

/* ---- report ------------------------------------------------------------------------------------ */

json_t *topo_torus_model_report(const struct topo_torus_model *t)
{
	static const char *naming[] = { "coordinates", "table", "pattern" };
	const topo_torus_spec_t *s;

	if (!t)
		return NULL;
	s = &t->spec;
	return json_pack("{s:[iii],s:[bbb],s:[fff],s:i,s:I,s:I,s:I,s:s,s:s?}", "dims", s->dims[0], s->dims[1],
			 s->dims[2], "wrap", s->wrap[0], s->wrap[1], s->wrap[2], "link_cost", s->link_cost[0],
			 s->link_cost[1], s->link_cost[2], "nodes_per_router", s->nodes_per_router, "routers",
			 (json_int_t)(t->nnodes / s->nodes_per_router), "nodes", (json_int_t)t->nnodes, "hosts",
			 (json_int_t)t->nhosts, "naming", naming[t->naming], "host_pattern", t->pattern);
}

/* ---- config file ------------------------------------------------------------------------------- */

struct loader {
	struct topo_torus_model *t;
	const char *path;
	int line;
	int have_dims;
	int in_hosts;
	unsigned char *node_used; /* nnodes, while reading the [hosts] table */
	rm_error_t *err;
};

static int lerr(struct loader *L, const char *fmt, const char *a, const char *b)
{
	return rm_error_set(L->err, L->path, L->line, 0, fmt, a, b);
}

/* Parses "XxYxZ" into dims, as long (strtol saturates on overflow): the caller range-checks them
 * before any conversion. Returns 0 or -1. */
static int parse_dims3(const char *s, long dims[3])
{
	int d;

	for (d = 0; d < 3; d++) {
		char *end;
		long v;

		while (isspace((unsigned char)*s))
			s++;
		if (!isdigit((unsigned char)*s) && *s != '-')
			return -1;
		v = strtol(s, &end, 10);
		if (end == s)
			return -1;
		dims[d] = v;
		s = end;
		while (isspace((unsigned char)*s))
			s++;
		if (d < 2 && *s != 'x' && *s != 'X')
			return -1;
		if (d < 2)
			s++;
	}
	return *s ? -1 : 0;
}

/* Splits a comma- or space-separated list into at most 3 fields; returns the number found or -1. */
static int split3(char *s, char *f[3])
{
	int n = 0;
	char *tok, *save = NULL;

	for (tok = strtok_r(s, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		if (n == 3)
			return -1;
		f[n++] = tok;
	}
	return n;
}

static int key_dims(struct loader *L, char *val)
{
	long v[3];
	int d;

	if (parse_dims3(val, v) < 0)
		return lerr(L, "dims: expected XxYxZ (e.g. 17x8x24), got '%s'%s", val, "");
	for (d = 0; d < 3; d++) {
		if (v[d] == LONG_MAX || v[d] == LONG_MIN)
			return rm_error_set(L->err, L->path, L->line, 0,
					    "dimension %c is out of range: must be 1 to %d", "xyz"[d], TORUS_MAX_DIM);
		if (v[d] < 1 || v[d] > TORUS_MAX_DIM)
			return rm_error_set(L->err, L->path, L->line, 0, "dimension %c is %ld: must be 1 to %d",
					    "xyz"[d], v[d], TORUS_MAX_DIM);
		L->t->spec.dims[d] = (int)v[d];
	}
	L->have_dims = 1;
	return 0;
}

static int parse_bool(const char *s)
{
	if (!strcasecmp(s, "yes") || !strcasecmp(s, "true") || !strcmp(s, "1") || !strcasecmp(s, "on"))
		return 1;
	if (!strcasecmp(s, "no") || !strcasecmp(s, "false") || !strcmp(s, "0") || !strcasecmp(s, "off"))
		return 0;
	return -1;
}

static int key_wrap(struct loader *L, char *val)
{
	char *f[3];
	int n = split3(val, f), d;

	if (n != 1 && n != 3)
		return lerr(L, "wrap: expected one value or three (x,y,z) of yes/no%s%s", "", "");
	for (d = 0; d < 3; d++) {
		int b = parse_bool(f[n == 1 ? 0 : d]);

		if (b < 0)
			return lerr(L, "wrap: '%s' is not yes/no%s", f[n == 1 ? 0 : d], "");
		L->t->spec.wrap[d] = b;
	}
	return 0;
}

static int key_link_cost(struct loader *L, char *val)
{
	char *f[3];
	int n = split3(val, f), d;

	if (n != 3)
		return lerr(L, "link_cost: expected three costs CX,CY,CZ%s%s", "", "");
	for (d = 0; d < 3; d++) {
		char *end;
		double v = strtod(f[d], &end);

		if (end == f[d] || *end || !(v > 0) || v > 1e9)
			return lerr(L, "link_cost: '%s' is not a positive number%s", f[d], "");
		L->t->spec.link_cost[d] = v;
	}
	return 0;
}

static int key_npr(struct loader *L, char *val)
{
	char *end;
	long v = strtol(val, &end, 10);

	if (end == val || *end || v < 1 || v > TORUS_MAX_NPR)
		return lerr(L, "nodes_per_router: '%s' is not an integer from 1 to 1024%s", val, "");
	L->t->spec.nodes_per_router = (int)v;
	return 0;
}

/* Checks the placeholders of a host pattern; returns 0 or -1 with the error set. */
static int pattern_check(struct loader *L, const char *p)
{
	static const char *names[] = { "x", "y", "z", "n", "id", "router" };
	const char *q;
	size_t i;

	for (q = p; *q; q++) {
		char ph[16];
		size_t len;
		int known = 0;

		if (*q == '}')
			return lerr(L, "host_pattern: '}' without '{' in '%s'%s", p, "");
		if (*q != '{')
			continue;
		len = strcspn(q + 1, ":}");
		if (q[1 + len] == '\0' || len >= sizeof(ph))
			return lerr(L, "host_pattern: unterminated or unknown placeholder in '%s'%s", p, "");
		memcpy(ph, q + 1, len);
		ph[len] = '\0';
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			known |= !strcmp(ph, names[i]);
		if (!known)
			return lerr(L, "host_pattern: unknown placeholder {%s} (use x, y, z, n, id, router)%s", ph, "");
		q += 1 + len;
		if (*q == ':') {
			char *end;
			long w = strtol(q + 1, &end, 10);

			if (end == q + 1 || *end != '}' || w < 1 || w > 12)
				return lerr(L, "host_pattern: bad zero-pad width in '%s'%s", p, "");
			q = end;
		}
	}
	return 0;
}

static int key_pattern(struct loader *L, char *val)
{
	if (L->t->pattern)
		return lerr(L, "host_pattern given twice%s%s", "", "");
	if (!*val || pattern_check(L, val) < 0)
		return lerr(L, "host_pattern: empty%s%s", "", "");
	L->t->pattern = strdup(val);
	return L->t->pattern ? 0 : lerr(L, "out of memory%s%s", "", "");
}

/* The config keys: one table, name -> parser. */
static const struct torus_key {
	const char *name;
	int (*parse)(struct loader *L, char *val);
} torus_keys[] = {
	{ "dims", key_dims },
	{ "wrap", key_wrap },
	{ "link_cost", key_link_cost },
	{ "nodes_per_router", key_npr },
	{ "host_pattern", key_pattern },
};

/* Renders the pattern for node id into buf. */
static void pattern_render(const struct topo_torus_model *t, long id, char *buf, size_t len)
{
	const char *p = t->pattern;
	int c[3];
	size_t o = 0;

	node_coords(&t->spec, id, c);
	while (*p && o + 1 < len) {
		long v;
		int w = 0;

		if (*p != '{') {
			buf[o++] = *p++;
			continue;
		}
		p++;
		if (!strncmp(p, "id", 2))
			v = id;
		else if (!strncmp(p, "router", 6))
			v = id / t->spec.nodes_per_router;
		else if (*p == 'n')
			v = id % t->spec.nodes_per_router;
		else
			v = c[*p - 'x'];
		p += strcspn(p, ":}");
		if (*p == ':')
			w = (int)strtol(p + 1, NULL, 10);
		p = strchr(p, '}') + 1;
		o += (size_t)snprintf(buf + o, len - o, "%0*ld", w, v);
		if (o >= len)
			o = len - 1;
	}
	buf[o] = '\0';
}

/* Names every node by the host pattern; duplicates (a pattern that does not separate nodes) fail. */
static int pattern_expand(struct loader *L)
{
	struct topo_torus_model *t = L->t;
	char buf[256];
	long id;

	for (id = 0; id < t->nnodes; id++) {
		pattern_render(t, id, buf, sizeof(buf));
		if (host_lookup(t, buf) >= 0)
			return rm_error_set(L->err, L->path, 0, 0,
					    "host_pattern '%s' gives the name '%s' to two nodes (use {id} or "
					    "all of {x},{y},{z}%s)",
					    t->pattern, buf, t->spec.nodes_per_router > 1 ? ",{n}" : "");
		if (host_add(t, buf, id) < 0)
			return rm_error_set(L->err, L->path, 0, 0, "out of memory");
	}
	return 0;
}

/* Parses one "NAME X Y Z [N]" row of the [hosts] table. */
static int host_row(struct loader *L, char *s)
{
	struct topo_torus_model *t = L->t;
	char *f[6], *save = NULL, *tok;
	int n = 0, d, c[4] = { 0, 0, 0, 0 };
	long node;

	for (tok = strtok_r(s, " \t", &save); tok && n < 6; tok = strtok_r(NULL, " \t", &save))
		f[n++] = tok;
	if (n < 4 || n > 5)
		return lerr(L, "host row: expected NAME X Y Z [N], got %s fields%s", n < 4 ? "too few" : "too many",
			    "");
	if (n == 4 && t->spec.nodes_per_router > 1)
		return lerr(L, "host '%s': node index N missing (nodes_per_router > 1)%s", f[0], "");
	for (d = 0; d < n - 1; d++) {
		char *end;
		long v = strtol(f[d + 1], &end, 10);
		int lim = d < 3 ? t->spec.dims[d] : t->spec.nodes_per_router;

		if (end == f[d + 1] || *end)
			return lerr(L, "host '%s': coordinate '%s' is not an integer", f[0], f[d + 1]);
		if (v < 0 || v >= lim)
			return rm_error_set(L->err, L->path, L->line, 0,
					    "host '%s': %c = %ld is outside the torus (0 to %d)", f[0], "xyzn"[d], v,
					    lim - 1);
		c[d] = (int)v;
	}
	if (host_lookup(t, f[0]) >= 0)
		return lerr(L, "duplicate host '%s'%s", f[0], "");
	node = (((long)c[0] * t->spec.dims[1] + c[1]) * t->spec.dims[2] + c[2]) * t->spec.nodes_per_router + c[3];
	if (L->node_used[node])
		return rm_error_set(L->err, L->path, L->line, 0,
				    "host '%s': position (%d,%d,%d,%d) already taken by another host", f[0], c[0], c[1],
				    c[2], c[3]);
	L->node_used[node] = 1;
	if (host_add(t, f[0], node) < 0)
		return lerr(L, "out of memory%s%s", "", "");
	return 0;
}

/* Starts the [hosts] table: the spec must be complete and valid. */
static int hosts_begin(struct loader *L)
{
	if (!L->have_dims)
		return lerr(L, "[hosts] before 'dims =': the table needs the dimensions first%s%s", "", "");
	if (L->t->pattern)
		return lerr(L, "[hosts] table and host_pattern are exclusive%s%s", "", "");
	if (spec_check(&L->t->spec, L->path, L->line, L->err) < 0)
		return -1;
	L->t->nnodes = (long)L->t->spec.dims[0] * L->t->spec.dims[1] * L->t->spec.dims[2] * L->t->spec.nodes_per_router;
	L->node_used = calloc((size_t)L->t->nnodes, 1);
	if (!L->node_used)
		return lerr(L, "out of memory%s%s", "", "");
	L->t->naming = NAMING_TABLE;
	L->in_hosts = 1;
	return 0;
}

/* Parses one line of the config. */
static int config_line(struct loader *L, char *line)
{
	char *s = rm_config_line(line), *key, *val;
	size_t i;

	if (!*s)
		return 0;
	if (!strcmp(s, "[hosts]"))
		return L->in_hosts ? lerr(L, "[hosts] given twice%s%s", "", "") : hosts_begin(L);
	if (L->in_hosts)
		return host_row(L, s);
	if (rm_kv_split(s, &key, &val) < 0)
		return lerr(L, "expected 'key = value' or [hosts], got '%s'%s", s, "");
	for (i = 0; i < sizeof(torus_keys) / sizeof(torus_keys[0]); i++)
		if (!strcmp(key, torus_keys[i].name))
			return torus_keys[i].parse(L, val);
	return lerr(L, "unknown key '%s' (dims, wrap, link_cost, nodes_per_router, host_pattern)%s", key, "");
}

/* Checks the spec after the whole file is read and names nodes by pattern. */
static int config_finish(struct loader *L)
{
	struct topo_torus_model *t = L->t;

	if (!L->have_dims)
		return rm_error_set(L->err, L->path, 0, 0, "missing 'dims = XxYxZ'");
	if (!L->in_hosts) {
		if (spec_check(&t->spec, L->path, 0, L->err) < 0)
			return -1;
		t->nnodes = (long)t->spec.dims[0] * t->spec.dims[1] * t->spec.dims[2] * t->spec.nodes_per_router;
	} else if (t->nhosts == 0) {
		return rm_error_set(L->err, L->path, L->line, 0, "[hosts] table is empty");
	}
	if (t->pattern) {
		t->naming = NAMING_PATTERN;
		return pattern_expand(L);
	}
	return 0;
}

struct topo_torus_model *topo_torus_model_load(const char *path, rm_error_t *err)
{
	struct loader L = { .path = path, .err = err };
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	int rc = 0;

	if (!path) {
		errno = EINVAL;
		rm_error_set(err, "torus", 0, 0, "no file name");
		return NULL;
	}
	if (!(f = rm_file_fopen(path, RM_FILE_TORUS, NULL, err)))
		return NULL;
	L.t = model_new();
	if (!L.t) {
		fclose(f);
		rm_error_set(err, path, 0, 0, "out of memory");
		return NULL;
	}
	while (rc == 0 && (got = getline(&line, &cap, f)) >= 0) {
		L.line++;
		if ((size_t)got != strlen(line))
			rc = lerr(&L, "binary data (NUL byte) in a text file%s%s", "", "");
		else
			rc = config_line(&L, line);
	}
	if (rc == 0)
		rc = rm_file_stream_error(f, path, RM_FILE_TORUS, err);
	free(line);
	fclose(f);
	if (rc == 0)
		rc = config_finish(&L);
	free(L.node_used);
	if (rc < 0) {
		topo_torus_model_destroy(L.t);
		errno = EINVAL;
		return NULL;
	}
	return L.t;
}
