/*
 * common/rm_pattern.c: the learned pattern record, its key, its text form and the running average
 * (see rm_pattern.h). The per-user directory store is in rm_pattern_dir.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm_pattern.h"
#include "rm_text.h"

int rm_pattern_is_cart(const rm_pattern_key_t *k)
{
	return strncmp(k->shape, "cart ", 5) == 0;
}

int rm_pattern_shape_cart(rm_pattern_key_t *k, int ndims, const int periods[])
{
	int n;

	if (ndims < 1 || ndims > RM_PATTERN_MAXDIMS) {
		errno = EINVAL;
		return -1;
	}
	n = snprintf(k->shape, sizeof(k->shape), "cart %d ", ndims);
	for (int d = 0; d < ndims; d++)
		n += snprintf(k->shape + n, sizeof(k->shape) - (size_t)n, "%s%d", d ? "," : "", periods[d] != 0);
	return 0;
}

void rm_pattern_shape_graph(rm_pattern_key_t *k, uint32_t ranks, uint64_t entries, uint64_t hash)
{
	snprintf(k->shape, sizeof(k->shape), "graph %" PRIu32 " %" PRIu64 " %016" PRIx64, ranks, entries, hash);
}

int rm_pattern_key_equal(const rm_pattern_key_t *a, const rm_pattern_key_t *b)
{
	return a->uid == b->uid && a->order == b->order && !strcmp(a->program, b->program) && !strcmp(a->fn, b->fn) &&
	       !strcmp(a->shape, b->shape);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 1099511628211ULL;
	}
	return h;
}

void rm_pattern_key_id(const rm_pattern_key_t *k, char id[17])
{
	uint64_t h = 14695981039346656037ULL;
	uint32_t v[2] = { k->uid, k->order };

	h = fnv(h, v, sizeof(v));
	h = fnv(h, k->program, strlen(k->program) + 1);
	h = fnv(h, k->fn, strlen(k->fn) + 1);
	h = fnv(h, k->shape, strlen(k->shape) + 1);
	snprintf(id, 17, "%016" PRIx64, h);
}

rm_pattern_t *rm_pattern_new(const rm_pattern_key_t *k, size_t nedges)
{
	rm_pattern_t *p;

	if (nedges > RM_PATTERN_MAX_EDGES) {
		errno = EINVAL;
		return NULL;
	}
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->key = *k;
	p->nedges = nedges;
	if (nedges &&
	    (!(p->edge = calloc(2 * nedges, sizeof(double))) || !(p->ends = calloc(2 * nedges, sizeof(uint32_t))))) {
		free(p->edge);
		free(p);
		return NULL;
	}
	return p;
}

void rm_pattern_free(rm_pattern_t *p)
{
	if (!p)
		return;
	free(p->edge);
	free(p->ends);
	free(p);
}

static rm_pattern_t *copy(const rm_pattern_t *run)
{
	rm_pattern_t *p = rm_pattern_new(&run->key, run->nedges);

	if (!p)
		return NULL;
	double *e = p->edge;
	uint32_t *ends = p->ends;

	*p = *run;
	p->edge = e, p->ends = ends;
	if (run->nedges) {
		memcpy(e, run->edge, sizeof(double) * 2 * run->nedges);
		memcpy(ends, run->ends, sizeof(uint32_t) * 2 * run->nedges);
	}
	return p;
}

double rm_pattern_distance(const rm_pattern_t *a, const rm_pattern_t *b)
{
	size_t n = a->ndims ? (size_t)a->ndims : a->nedges;
	double ta = 0, tb = 0, d = 0;

	if (a->ndims != b->ndims || a->nedges != b->nedges)
		return 1;
	for (size_t i = 0; i < n; i++) {
		ta += a->ndims ? a->dim[i][0] + a->dim[i][1] : a->edge[2 * i];
		tb += b->ndims ? b->dim[i][0] + b->dim[i][1] : b->edge[2 * i];
	}
	if (!(ta > 0) || !(tb > 0))
		return 0;
	for (size_t i = 0; i < n; i++) {
		double x = a->ndims ? a->dim[i][0] + a->dim[i][1] : a->edge[2 * i];
		double y = b->ndims ? b->dim[i][0] + b->dim[i][1] : b->edge[2 * i];

		d += fabs(x / ta - y / tb);
	}
	return d / 2 < 1 ? d / 2 : 1;
}

int rm_pattern_usable(const rm_pattern_t *p, uint32_t ranks, uint64_t cmdline, const char **why)
{
	const char *w = NULL;

	if (p->drift > RM_PATTERN_DRIFT_MAX)
		w = "unstable";
	else if (p->ranks == ranks && p->cmdline && cmdline && p->cmdline != cmdline)
		w = "input-changed";
	if (why)
		*why = w;
	return !w;
}

static double avg(double old, double now, double a)
{
	return (1.0 - a) * old + a * now;
}

rm_pattern_t *rm_pattern_merge(rm_pattern_t *stored, const rm_pattern_t *run, time_t now)
{
	rm_pattern_t *p = stored;

	if (!stored || !rm_pattern_key_equal(&stored->key, &run->key) || stored->ndims != run->ndims ||
	    stored->nedges != run->nedges || stored->runs == 0 ||
	    (run->nedges && memcmp(stored->ends, run->ends, sizeof(uint32_t) * 2 * run->nedges))) {
		if (!(p = copy(run)))
			return NULL;
		p->runs = 1;
		p->drift = 0;
	} else {
		double a = 1.0 / (double)(stored->runs + 1);

		p->drift = rm_pattern_distance(stored, run); /* before the average moves */
		p->cmdline = run->cmdline;

		if (a < RM_PATTERN_EMA)
			a = RM_PATTERN_EMA;
		for (int d = 0; d < p->ndims; d++)
			for (int j = 0; j < 4; j++)
				p->dim[d][j] = avg(p->dim[d][j], run->dim[d][j], a);
		for (size_t i = 0; i < 2 * p->nedges; i++)
			p->edge[i] = avg(p->edge[i], run->edge[i], a);
		for (int j = 0; j < 2; j++)
			p->other[j] = avg(p->other[j], run->other[j], a);
		p->runs = stored->runs < UINT32_MAX ? stored->runs + 1 : stored->runs;
		p->ranks = run->ranks;
		if (run->path[0])
			memcpy(p->path, run->path, sizeof(p->path));
	}
	p->updated = (int64_t)now;
	return p;
}

/* ---- text form --------------------------------------------------------------------------------- */

typedef struct sbuf {
	char *s;
	size_t len, cap;
	int oom;
} sbuf_t;

static void put(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf_t *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len)
			break;
		size_t ncap = 2 * b->cap + (size_t)n + 64;
		char *s = realloc(b->s, ncap);

		if (!s) {
			b->oom = 1;
			return;
		}
		b->s = s, b->cap = ncap;
	}
	b->len += (size_t)n;
}

char *rm_pattern_format(const rm_pattern_t *p, size_t *len)
{
	sbuf_t b = { .cap = 1024 + 48 * p->nedges };

	if (!(b.s = malloc(b.cap)))
		return NULL;
	b.s[0] = 0;
	put(&b,
	    "# rankmap learned pattern (rankmapctl patterns show)\nrankmap-pattern = %d\nuid = %" PRIu32
	    "\nprogram = %s\npath = %s\nfn = %s\norder = %" PRIu32 "\nshape = %s\nruns = %" PRIu32
	    "\nupdated = %" PRId64 "\nranks = %" PRIu32 "\n",
	    RM_PATTERN_VERSION, p->key.uid, p->key.program, p->path, p->key.fn, p->key.order, p->key.shape, p->runs,
	    p->updated, p->ranks);
	for (int d = 0; d < p->ndims; d++)
		put(&b, "dim = %d %.17g %.17g %.17g %.17g\n", d, p->dim[d][0], p->dim[d][1], p->dim[d][2],
		    p->dim[d][3]);
	if (!rm_pattern_is_cart(&p->key)) {
		put(&b, "edges = %zu\n", p->nedges);
		for (size_t i = 0; i < p->nedges; i++)
			put(&b, "edge = %u %u %.17g %.17g\n", p->ends[2 * i], p->ends[2 * i + 1], p->edge[2 * i],
			    p->edge[2 * i + 1]);
	}
	put(&b, "other = %.17g %.17g\n", p->other[0], p->other[1]);
	put(&b, "cmdline = %016" PRIx64 "\ndrift = %.17g\n", p->cmdline, p->drift);
	if (b.oom) {
		free(b.s);
		errno = ENOMEM;
		return NULL;
	}
	if (len)
		*len = b.len;
	return b.s;
}

typedef struct parse {
	const char *src;
	int line;
	rm_error_t *err;
	rm_pattern_t *p;
	size_t len;           /* bytes of the text: bounds the declared edges */
	int ndims_shape;      /* from the shape (Cartesian) */
	unsigned long granks; /* from the shape (graphs) */
	int seen_dims;
	size_t seen_edges;
	unsigned have; /* bit per required field */
} parse_t;

enum {
	F_VERSION = 1,
	F_UID = 2,
	F_PROGRAM = 4,
	F_FN = 8,
	F_ORDER = 16,
	F_SHAPE = 32,
	F_RUNS = 64,
	F_UPDATED = 128,
	F_RANKS = 256,
	F_OTHER = 512,
	F_EDGES = 1024,
	F_ALL = 1023
};

static int bad(parse_t *ps, const char *field, const char *what)
{
	errno = EINVAL;
	return rm_error_set(ps->err, ps->src, ps->line, 0, "field '%s': %s", field, what);
}

/* An unsigned integer within max. */
static int get_u64(parse_t *ps, const char *field, const char *v, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	if (*v < '0' || *v > '9')
		return bad(ps, field, "not a non-negative integer");
	unsigned long long x = strtoull(v, &end, 10);

	if (*end || errno || x > max)
		return bad(ps, field, errno || x > max ? "out of range" : "not a non-negative integer");
	*out = x;
	return 0;
}

/* n finite non-negative numbers separated by blanks, nothing after. */
static int get_nums(parse_t *ps, const char *field, const char *v, double *out, int n)
{
	char *end;

	for (int i = 0; i < n; i++) {
		out[i] = strtod(v, &end);
		if (end == v || !isfinite(out[i]) || out[i] < 0 || out[i] > 1e300)
			return bad(ps, field, "expected finite non-negative numbers");
		v = end;
	}
	while (*v == ' ' || *v == '\t')
		v++;
	return *v ? bad(ps, field, "trailing characters") : 0;
}

static int get_str(parse_t *ps, const char *field, const char *v, char *out, size_t cap)
{
	if (strlen(v) >= cap)
		return bad(ps, field, "too long");
	strcpy(out, v);
	return 0;
}

/* shape: "cart N p,p,..." or "graph R E HASH" */
static int get_shape(parse_t *ps, const char *v)
{
	rm_pattern_t *p = ps->p;
	int n = 0, pos = 0;

	if (get_str(ps, "shape", v, p->key.shape, sizeof(p->key.shape)) != 0)
		return -1;
	if (sscanf(v, "cart %d %n", &n, &pos) == 1 && pos > 0) {
		int per[RM_PATTERN_MAXDIMS];
		const char *q = v + pos;
		rm_pattern_key_t k;

		if (n < 1 || n > RM_PATTERN_MAXDIMS)
			return bad(ps, "shape", "dimensions out of 1..16");
		for (int d = 0; d < n; d++, q += 2) {
			if ((q[0] != '0' && q[0] != '1') || q[1] != (d == n - 1 ? 0 : ','))
				return bad(ps, "shape", "periods must be 0 or 1, one per dimension");
			per[d] = q[0] == '1';
		}
		rm_pattern_shape_cart(&k, n, per);
		if (strcmp(k.shape, v))
			return bad(ps, "shape", "not in canonical form");
		ps->ndims_shape = n;
		return 0;
	}
	unsigned long r = 0, e = 0;
	char hash[32];

	if (sscanf(v, "graph %lu %lu %20s", &r, &e, hash) != 3 || r == 0 || r > (1ul << 24) ||
	    e > RM_PATTERN_MAX_EDGES || strlen(hash) != 16 || strspn(hash, "0123456789abcdef") != 16)
		return bad(ps, "shape", "expected 'cart NDIMS PERIODS' or 'graph RANKS ENTRIES HASH'");
	ps->granks = r;
	return 0;
}

/* The traffic lines: dim (Cartesian), edges and edge (graphs). */
static int field_traffic(parse_t *ps, const char *key, const char *v)
{
	rm_pattern_t *p = ps->p;
	uint64_t u = 0;
	double x[4];

	if (!strcmp(key, "dim")) {
		char *end;
		long d = strtol(v, &end, 10);

		if (!(ps->have & F_SHAPE) || !ps->ndims_shape)
			return bad(ps, key, "a 'dim' line needs a Cartesian shape before it");
		if (end == v || d != ps->seen_dims || d >= ps->ndims_shape)
			return bad(ps, key, "dimensions must come in order, one per dimension of the shape");
		if (get_nums(ps, key, end, x, 4) != 0)
			return -1;
		memcpy(p->dim[d], x, sizeof(x));
		p->ndims = ++ps->seen_dims;
	} else if (!strcmp(key, "edges")) {
		if (!(ps->have & F_SHAPE) || ps->ndims_shape || (ps->have & F_EDGES))
			return bad(ps, key, "'edges' needs a graph shape before it, once");
		/* each entry takes at least 14 bytes ("edge=0 0 0 0\n"): a larger count cannot be in this text */
		if (get_u64(ps, key, v, RM_PATTERN_MAX_EDGES, &u) != 0)
			return -1;
		if (u > ps->len / 14)
			return bad(ps, key, "more entries than the file can hold");
		if (u && (!(p->edge = calloc(2 * (size_t)u, sizeof(double))) ||
			  !(p->ends = calloc(2 * (size_t)u, sizeof(uint32_t)))))
			return rm_error_set(ps->err, ps->src, ps->line, 0, "out of memory for %" PRIu64 " entries", u);
		p->nedges = (size_t)u, ps->have |= F_EDGES;
	} else if (!strcmp(key, "edge")) {
		if (ps->seen_edges >= p->nedges)
			return bad(ps, key, "more 'edge' lines than 'edges' declares");
		unsigned long a, b;
		int pos = 0;

		if (sscanf(v, "%lu %lu %n", &a, &b, &pos) != 2 || a >= ps->granks || b >= ps->granks)
			return bad(ps, key, "expected VERTEX NEIGHBOUR (ranks of the shape) BYTES MESSAGES");
		p->ends[2 * ps->seen_edges] = (uint32_t)a, p->ends[2 * ps->seen_edges + 1] = (uint32_t)b;
		if (get_nums(ps, key, v + pos, &p->edge[2 * ps->seen_edges], 2) != 0)
			return -1;
		ps->seen_edges++;
	}
	return 0;
}

static int field(parse_t *ps, const char *key, const char *v)
{
	rm_pattern_t *p = ps->p;
	uint64_t u = 0;

	if (!strcmp(key, "rankmap-pattern")) {
		if (get_u64(ps, key, v, 1000, &u) != 0 || u != RM_PATTERN_VERSION)
			return rm_error_isset(ps->err) ? -1 : bad(ps, key, "unsupported version");
		ps->have |= F_VERSION;
	} else if (!strcmp(key, "uid")) {
		if (get_u64(ps, key, v, UINT32_MAX, &u) != 0)
			return -1;
		p->key.uid = (uint32_t)u, ps->have |= F_UID;
	} else if (!strcmp(key, "program")) {
		if (!*v || get_str(ps, key, v, p->key.program, sizeof(p->key.program)) != 0)
			return rm_error_isset(ps->err) ? -1 : bad(ps, key, "empty");
		ps->have |= F_PROGRAM;
	} else if (!strcmp(key, "path")) {
		return get_str(ps, key, v, p->path, sizeof(p->path));
	} else if (!strcmp(key, "fn")) {
		if (strncmp(v, "MPI_", 4) || get_str(ps, key, v, p->key.fn, sizeof(p->key.fn)) != 0)
			return rm_error_isset(ps->err) ? -1 : bad(ps, key, "not an MPI function name");
		ps->have |= F_FN;
	} else if (!strcmp(key, "order")) {
		if (get_u64(ps, key, v, 1u << 20, &u) != 0)
			return -1;
		p->key.order = (uint32_t)u, ps->have |= F_ORDER;
	} else if (!strcmp(key, "shape")) {
		if (get_shape(ps, v) != 0)
			return -1;
		ps->have |= F_SHAPE;
	} else if (!strcmp(key, "runs") || !strcmp(key, "ranks")) {
		if (get_u64(ps, key, v, UINT32_MAX, &u) != 0)
			return -1;
		*(key[1] == 'u' ? &p->runs : &p->ranks) = (uint32_t)u;
		ps->have |= key[1] == 'u' ? F_RUNS : F_RANKS;
	} else if (!strcmp(key, "updated")) {
		if (get_u64(ps, key, v, INT64_MAX, &u) != 0)
			return -1;
		p->updated = (int64_t)u, ps->have |= F_UPDATED;
	} else if (!strcmp(key, "dim") || !strcmp(key, "edges") || !strcmp(key, "edge")) {
		return field_traffic(ps, key, v);
	} else if (!strcmp(key, "cmdline")) {
		char *end;

		errno = 0;
		p->cmdline = strtoull(v, &end, 16);
		if (strlen(v) != 16 || strspn(v, "0123456789abcdef") != 16 || *end || errno)
			return bad(ps, key, "expected 16 hex digits");
	} else if (!strcmp(key, "drift")) {
		if (get_nums(ps, key, v, &p->drift, 1) != 0)
			return -1;
		if (p->drift > 1)
			return bad(ps, key, "out of 0..1");
	} else if (!strcmp(key, "other")) {
		if (get_nums(ps, key, v, p->other, 2) != 0)
			return -1;
		ps->have |= F_OTHER;
	} else {
		return bad(ps, key, "unknown field");
	}
	return 0;
}

/* After the last line: every required field, and as many dims / edges as the shape says. */
static int complete(parse_t *ps)
{
	static const char *names[] = { "rankmap-pattern", "uid",  "program", "fn",    "order",
				       "shape",           "runs", "updated", "ranks", "other" };

	ps->line = 0;
	for (int i = 0; i < 10; i++)
		if (!(ps->have & (1u << i))) {
			errno = EINVAL;
			return rm_error_set(ps->err, ps->src, 0, 0, "missing field '%s' (truncated?)", names[i]);
		}
	if (ps->ndims_shape && ps->seen_dims != ps->ndims_shape)
		return bad(ps, "dim", "fewer 'dim' lines than the shape's dimensions (truncated?)");
	if (!ps->ndims_shape) {
		unsigned long r, e;

		if (!(ps->have & F_EDGES) || ps->seen_edges != ps->p->nedges)
			return bad(ps, "edge", "fewer 'edge' lines than 'edges' declares (truncated?)");
		if (sscanf(ps->p->key.shape, "graph %lu %lu", &r, &e) != 2 || e != ps->p->nedges)
			return bad(ps, "edges", "does not match the shape's entry count");
	}
	return 0;
}

rm_pattern_t *rm_pattern_parse(const char *text, size_t len, const char *source, rm_error_t *err)
{
	parse_t ps = { .src = source ? source : "pattern", .err = err, .len = len };
	char buf[1024];
	size_t i = 0;

	if (!(ps.p = calloc(1, sizeof(*ps.p))))
		return NULL;
	if (len > 0 && text[len - 1] != '\n') { /* every line of the text form ends with one */
		for (size_t j = 0; j < len; j++)
			ps.line += text[j] == '\n';
		ps.line++;
		errno = EINVAL;
		rm_error_set(err, ps.src, ps.line, 0, "truncated: the last line does not end");
		goto fail;
	}
	while (i < len) {
		size_t n = 0;

		ps.line++;
		while (i < len && text[i] != '\n' && n < sizeof(buf) - 1)
			buf[n++] = text[i++];
		buf[n] = 0;
		if (i < len && text[i] != '\n') {
			bad(&ps, "line", "longer than 1023 bytes");
			goto fail;
		}
		if (n != strlen(buf)) {
			bad(&ps, "line", "contains a NUL byte");
			goto fail;
		}
		i++;
		char *s = rm_config_line(buf), *key, *val;

		if (!*s)
			continue;
		if (rm_kv_split(s, &key, &val) != 0) {
			bad(&ps, s, "expected 'key = value'");
			goto fail;
		}
		if (field(&ps, key, val) != 0)
			goto fail;
	}
	if (complete(&ps) == 0)
		return ps.p;
fail:
	rm_pattern_free(ps.p);
	return NULL;
}
