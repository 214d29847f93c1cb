/*
 * mapping/pattern_mtx.c: Matrix Market coordinate patterns, and map_graph_load's format detection.
 *
 * Accepted: "%%MatrixMarket matrix coordinate real|integer|pattern general|symmetric", % comments, a
 * size line "N N NNZ", then NNZ lines "i j [bytes [messages]]" (1-based). A general matrix lists each
 * direction separately: the edge weight of a pair is the sum of both directions (the total traffic).
 * A symmetric matrix lists each pair once. Diagonal entries (self loops) are ignored.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mapping_private.h"
#include "rm_file.h"

struct mtx_edges {
	size_t n, cap;
	uint32_t *src, *dst;
	double *b, *m;
};

static int edges_push(struct mtx_edges *e, uint32_t s, uint32_t d, double b, double m)
{
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 1024;
		uint32_t *ns = realloc(e->src, cap * sizeof(*ns)), *nd;
		double *nb, *nm;

		if (ns)
			e->src = ns;
		nd = realloc(e->dst, cap * sizeof(*nd));
		if (nd)
			e->dst = nd;
		nb = realloc(e->b, cap * sizeof(*nb));
		if (nb)
			e->b = nb;
		nm = realloc(e->m, cap * sizeof(*nm));
		if (nm)
			e->m = nm;
		if (!ns || !nd || !nb || !nm)
			return -1;
		e->cap = cap;
	}
	e->src[e->n] = s, e->dst[e->n] = d, e->b[e->n] = b, e->m[e->n] = m;
	e->n++;
	return 0;
}

static void edges_free(struct mtx_edges *e)
{
	free(e->src), free(e->dst), free(e->b), free(e->m);
}

/* Reads the banner; sets *pattern and *symmetric. */
static int mtx_banner(const char *line, const char *path, int *pattern, int *symmetric, rm_error_t *err)
{
	char obj[32], fmt[32], field[32], sym[32];

	if (sscanf(line, "%%%%MatrixMarket %31s %31s %31s %31s", obj, fmt, field, sym) != 4)
		return rm_error_set(err, path, 1, 0, "malformed MatrixMarket banner");
	if (strcasecmp(obj, "matrix") || strcasecmp(fmt, "coordinate"))
		return rm_error_set(err, path, 1, 0, "only 'matrix coordinate' Matrix Market files are supported");
	if (strcasecmp(field, "real") && strcasecmp(field, "integer") && strcasecmp(field, "pattern"))
		return rm_error_set(err, path, 1, 0, "unsupported field '%s' (real, integer or pattern)", field);
	if (strcasecmp(sym, "general") && strcasecmp(sym, "symmetric"))
		return rm_error_set(err, path, 1, 0, "unsupported symmetry '%s' (general or symmetric)", sym);
	*pattern = !strcasecmp(field, "pattern");
	*symmetric = !strcasecmp(sym, "symmetric");
	return 0;
}

static int blank_or_comment(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0' || *s == '%';
}

/* Parses one entry line; *ncols is fixed by the first entry (0 = not yet known). */
static int mtx_entry(const char *line, const char *path, int lineno, uint64_t n, int pattern, int *ncols,
		     struct mtx_edges *e, rm_error_t *err)
{
	double v[3] = { 1, 0, 0 };
	unsigned long long i, j;
	int k = 0, used;
	const char *p = line;

	if (sscanf(p, "%llu %llu%n", &i, &j, &used) < 2)
		return rm_error_set(err, path, lineno, 0, "expected 'row column [weights]'");
	p += used;
	while (k < 3 && sscanf(p, "%lf%n", &v[k], &used) == 1) {
		p += used;
		k++;
	}
	if (!blank_or_comment(p) || k > 2 || (pattern && k))
		return rm_error_set(err, path, lineno, 0, "unexpected text after the entry");
	if (!pattern && k == 0)
		return rm_error_set(err, path, lineno, 0, "missing weight");
	if (*ncols == 0)
		*ncols = pattern ? 1 : k;
	else if (!pattern && k != *ncols)
		return rm_error_set(err, path, lineno, 0, "%d weight columns, earlier entries had %d", k, *ncols);
	if (i < 1 || j < 1 || i > n || j > n)
		return rm_error_set(err, path, lineno, 0, "index out of range 1..%llu", (unsigned long long)n);
	if (!(v[0] >= 0 && isfinite(v[0])) || !(v[1] >= 0 && isfinite(v[1])))
		return rm_error_set(err, path, lineno, 0, "negative or non-finite weight");
	if (i == j)
		return 0;
	if (edges_push(e, (uint32_t)(i - 1), (uint32_t)(j - 1), v[0], v[1]) < 0)
		return rm_error_set(err, path, lineno, 0, "out of memory");
	return 0;
}

/* Reads the size line "N N NNZ" and bounds it before anything is allocated: N by MAP_MAX_RANKS, NNZ by
 * the file's size (an entry line is at least "i j\n", 4 bytes). */
static int mtx_size(const char *line, const char *path, int lineno, uint64_t size, uint32_t max_ranks, uint64_t *n,
		    uint64_t *nnz, rm_error_t *err)
{
	unsigned long long r, c, z;
	int used;

	if (sscanf(line, "%llu %llu %llu%n", &r, &c, &z, &used) != 3 || !blank_or_comment(line + used))
		return rm_error_set(err, path, lineno, 0, "expected the size line 'N N NNZ'");
	if (r != c)
		return rm_error_set(err, path, lineno, 0, "matrix is %llux%llu, a pattern must be square", r, c);
	if (r == 0)
		return rm_error_set(err, path, lineno, 0, "invalid number of ranks %llu", r);
	if (r > MAP_MAX_RANKS)
		return rm_error_set(err, path, lineno, 0, "declares %llu ranks: at most %u are supported", r,
				    MAP_MAX_RANKS);
	if (r > max_ranks)
		return rm_error_set(err, path, lineno, 0, "declares %llu ranks, more than the %u expected", r,
				    max_ranks);
	if (z > (size + 1) / 4)
		return rm_error_set(err, path, lineno, 0,
				    "declares %llu entries, but a file of %llu bytes holds at most %llu", z,
				    (unsigned long long)size, (unsigned long long)(size + 1) / 4);
	*n = r;
	*nnz = z;
	return 0;
}

map_graph_t *map_pattern_mtx_load(FILE *f, uint64_t size, uint32_t max_ranks, const char *path, map_metric_t metric,
				  rm_error_t *err)
{
	struct mtx_edges e = { 0 };
	uint64_t n = 0, nnz = 0, seen = 0;
	int lineno = 0, pattern = 0, symmetric = 0, ncols = 0, rc = 0, have_size = 0;
	char *line = NULL;
	size_t cap = 0;
	map_graph_t *g = NULL;

	while (rc == 0 && getline(&line, &cap, f) >= 0) {
		lineno++;
		if (lineno == 1)
			rc = mtx_banner(line, path, &pattern, &symmetric, err);
		else if (blank_or_comment(line))
			continue;
		else if (!have_size)
			rc = mtx_size(line, path, lineno, size, max_ranks, &n, &nnz, err), have_size = 1;
		else if (seen++ >= nnz)
			rc = rm_error_set(err, path, lineno, 0, "more entries than the %llu declared",
					  (unsigned long long)nnz);
		else
			rc = mtx_entry(line, path, lineno, n, pattern, &ncols, &e, err);
	}
	if (rc == 0)
		rc = rm_file_stream_error(f, path, RM_FILE_PATTERN, err);
	free(line);
	if (rc == 0 && !have_size)
		rc = rm_error_set(err, path, lineno + 1, 0, "truncated file: no size line");
	if (rc == 0 && seen < nnz)
		rc = rm_error_set(err, path, lineno + 1, 0, "truncated file: %llu of %llu entries",
				  (unsigned long long)seen, (unsigned long long)nnz);
	if (rc == 0 && ncols < 2 && (metric == MAP_METRIC_MESSAGES || metric == MAP_METRIC_LOGGP))
		rc = rm_error_set(err, path, 0, 0, "this metric needs two weight columns (bytes, messages)");
	if (rc == 0)
		g = map_graph_from_edges_metric((uint32_t)n, e.n, e.src, e.dst, NULL, e.b, ncols == 2 ? e.m : NULL,
						metric, path, err);
	(void)symmetric; /* both directions are summed either way; symmetric files list each pair once */
	edges_free(&e);
	if (!g && errno != ENOMEM)
		errno = EINVAL;
	return g;
}

map_graph_t *map_graph_load(const char *path, map_metric_t metric, rm_error_t *err)
{
	return map_graph_load_max(path, metric, MAP_MAX_RANKS, err);
}

map_graph_t *map_graph_load_max(const char *path, map_metric_t metric, uint32_t max_ranks, rm_error_t *err)
{
	FILE *f;
	char head[16] = "";
	map_graph_t *g;
	int c;
	size_t k = 0, size = 0;

	if (max_ranks > MAP_MAX_RANKS)
		max_ranks = MAP_MAX_RANKS;
	if (!(f = rm_file_fopen(path, RM_FILE_PATTERN, &size, err)))
		return NULL;
	while ((c = fgetc(f)) != EOF && k + 1 < sizeof(head))
		head[k++] = (char)c;
	head[k] = '\0';
	rewind(f);
	if (!strncmp(head, "%%MatrixMarket", 14))
		g = map_pattern_mtx_load(f, size, max_ranks, path, metric, err);
	else if (metric == MAP_METRIC_MESSAGES || metric == MAP_METRIC_LOGGP) {
		rm_error_set(err, path, 0, 0, "a dense pattern has one metric; use Matrix Market for two");
		errno = EINVAL;
		g = NULL;
	} else
		g = map_pattern_dense_load(f, max_ranks, path, err);
	fclose(f);
	return g;
}
