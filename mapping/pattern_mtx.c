/*
 * mapping/pattern_mtx.c: Matrix Market patterns, and map_graph_load's format detection.
 *
 * The format as NIST specifies it (https://math.nist.gov/MatrixMarket/formats.html), keywords in any
 * case: "%%MatrixMarket matrix coordinate|array real|integer|pattern general|symmetric", % comment
 * lines anywhere after the banner, then the size line and the entries.
 *   coordinate: size "N N NNZ", then NNZ lines "i j [value]" (1-based; no value for the pattern field:
 *               every entry weighs 1).
 *   array:      size "N N", then one value per line in column-major order: all N*N of them (general)
 *               or the lower triangle, diagonal included, column by column (symmetric). No pattern field.
 * The matrix must be square (ranks x ranks); complex fields and skew-symmetric or hermitian symmetry are
 * refused (traffic is real and never negative), as are negative and non-finite values.
 * A general matrix holds each direction separately: the edge weight of a pair is the sum of both
 * directions (the total traffic). A symmetric matrix holds each pair once, below the diagonal (or
 * above, for coordinate), and that value is the pair's weight. Diagonal entries (self loops) are ignored.
 *
 * Two weights per entry: a header comment "% rankmap-messages: NAME" (before the size line) names a
 * second Matrix Market file beside this one (NAME has no '/') holding the message counts of the same
 * entries in the same order; the values of this file are bytes. That is what RANKMAP_TRACE writes
 * (pmpi_trace.c), and it is read only when the metric needs messages. rankmap's older traces, a
 * coordinate file with two values per entry (bytes then messages), are still read.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mapping_private.h"
#include "rm_file.h"

#define MTX_COMPANION_KEY "% rankmap-messages:"

struct mtx_edges {
	size_t n, cap;
	uint32_t *src, *dst;
	double *b, *m;
};

/* What the banner and the header comments say, and what the entries showed. */
struct mtx_head {
	int array, pattern, symmetric;
	int ncols;           /* values per entry: 0 until the first entry, then 1 or 2 */
	char companion[256]; /* "% rankmap-messages: NAME", "" when absent */
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

/* Reads the banner (keywords in any case) into h. */
static int mtx_banner(const char *line, const char *path, struct mtx_head *h, rm_error_t *err)
{
	char id[32], obj[32], fmt[32], field[32], sym[32], extra[2];
	int k = sscanf(line, "%31s %31s %31s %31s %31s %1s", id, obj, fmt, field, sym, extra);

	if (k < 5 || strcasecmp(id, "%%MatrixMarket"))
		return rm_error_set(err, path, 1, 0,
				    "malformed Matrix Market banner: expected '%%%%MatrixMarket matrix "
				    "coordinate|array FIELD SYMMETRY'");
	if (k > 5 && extra[0] != '%')
		return rm_error_set(err, path, 1, 0, "unexpected text after the banner's symmetry '%s'", sym);
	if (strcasecmp(obj, "matrix"))
		return rm_error_set(err, path, 1, 0, "object '%s' is not supported: a pattern is a 'matrix'", obj);
	if (strcasecmp(fmt, "coordinate") && strcasecmp(fmt, "array"))
		return rm_error_set(err, path, 1, 0, "unknown format '%s' (coordinate or array)", fmt);
	if (!strcasecmp(sym, "skew-symmetric") || !strcasecmp(sym, "hermitian"))
		return rm_error_set(err, path, 1, 0,
				    "%s matrices are refused: traffic is never negative nor complex (general or "
				    "symmetric)",
				    sym);
	if (!strcasecmp(field, "complex"))
		return rm_error_set(err, path, 1, 0,
				    "complex values are refused: traffic is real (real, integer or "
				    "pattern)");
	if (strcasecmp(field, "real") && strcasecmp(field, "integer") && strcasecmp(field, "pattern"))
		return rm_error_set(err, path, 1, 0, "unknown field '%s' (real, integer or pattern)", field);
	if (strcasecmp(sym, "general") && strcasecmp(sym, "symmetric"))
		return rm_error_set(err, path, 1, 0, "unknown symmetry '%s' (general or symmetric)", sym);
	h->array = !strcasecmp(fmt, "array");
	h->pattern = !strcasecmp(field, "pattern");
	h->symmetric = !strcasecmp(sym, "symmetric");
	if (h->array && h->pattern)
		return rm_error_set(err, path, 1, 0, "the pattern field needs the coordinate format, not array");
	return 0;
}

static int blank_or_comment(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0' || *s == '%';
}

/* A header comment "% rankmap-messages: NAME": records NAME (a file beside this one). */
static int mtx_comment(const char *line, const char *path, int lineno, struct mtx_head *h, rm_error_t *err)
{
	size_t klen = strlen(MTX_COMPANION_KEY), len;
	const char *p = line;

	while (isspace((unsigned char)*p))
		p++;
	if (strncasecmp(p, MTX_COMPANION_KEY, klen))
		return 0;
	p += klen;
	while (isspace((unsigned char)*p))
		p++;
	len = strcspn(p, " \t\r\n");
	if (len == 0 || len >= sizeof(h->companion) || memchr(p, '/', len) || !blank_or_comment(p + len) ||
	    (len <= 2 && p[0] == '.' && (len == 1 || p[1] == '.')))
		return rm_error_set(err, path, lineno, 0,
				    "'%s' needs the name of a file in the same directory (no '/')", MTX_COMPANION_KEY);
	memcpy(h->companion, p, len);
	h->companion[len] = '\0';
	return 0;
}

static int check_value(double v, const char *path, int lineno, rm_error_t *err)
{
	if (!(v >= 0 && isfinite(v)))
		return rm_error_set(err, path, lineno, 0, "negative or non-finite weight");
	return 0;
}

/* Parses one coordinate entry line; h->ncols is fixed by the first entry. */
static int mtx_entry(const char *line, const char *path, int lineno, uint64_t n, struct mtx_head *h,
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
	if (!blank_or_comment(p) || k > 2 || (h->pattern && k))
		return rm_error_set(err, path, lineno, 0, "unexpected text after the entry");
	if (!h->pattern && k == 0)
		return rm_error_set(err, path, lineno, 0, "missing weight");
	if (h->ncols == 0)
		h->ncols = h->pattern ? 1 : k;
	else if (!h->pattern && k != h->ncols)
		return rm_error_set(err, path, lineno, 0, "%d weight columns, earlier entries had %d", k, h->ncols);
	if (i < 1 || j < 1 || i > n || j > n)
		return rm_error_set(err, path, lineno, 0, "index out of range 1..%llu", (unsigned long long)n);
	if (check_value(v[0], path, lineno, err) < 0 || check_value(v[1], path, lineno, err) < 0)
		return -1;
	if (i == j)
		return 0;
	if (edges_push(e, (uint32_t)(i - 1), (uint32_t)(j - 1), v[0], v[1]) < 0)
		return rm_error_set(err, path, lineno, 0, "out of memory");
	return 0;
}

/* Parses the k-th value (0-based) of an array file: column-major, the whole matrix (general) or the
 * lower triangle with the diagonal (symmetric). */
static int mtx_array_value(const char *line, const char *path, int lineno, uint64_t n, uint64_t k, struct mtx_head *h,
			   struct mtx_edges *e, rm_error_t *err)
{
	uint64_t row, col;
	double v;
	int used;

	if (sscanf(line, "%lf%n", &v, &used) != 1 || !blank_or_comment(line + used))
		return rm_error_set(err, path, lineno, 0, "expected one value per line (array format)");
	if (check_value(v, path, lineno, err) < 0)
		return -1;
	h->ncols = 1;
	if (!h->symmetric) {
		row = k % n, col = k / n;
	} else { /* column col holds rows col..n-1: find col with start(col) <= k < start(col + 1) */
		uint64_t lo = 0, hi = n - 1;

		while (lo < hi) { /* start(c) = c * n - c * (c - 1) / 2 */
			uint64_t mid = (lo + hi + 1) / 2;

			if (mid * n - mid * (mid - 1) / 2 <= k)
				lo = mid;
			else
				hi = mid - 1;
		}
		col = lo;
		row = col + (k - (col * n - col * (col - 1) / 2));
	}
	if (row == col || v == 0)
		return 0;
	if (edges_push(e, (uint32_t)row, (uint32_t)col, v, 0) < 0)
		return rm_error_set(err, path, lineno, 0, "out of memory");
	return 0;
}

/* Reads the size line, "N N NNZ" (coordinate) or "N N" (array: NNZ is N*N, or N(N+1)/2 symmetric), and
 * bounds it before anything is allocated: N by max_ranks (at most MAP_MAX_RANKS), NNZ by the file's
 * size (an entry line is at least "i j\n", 4 bytes; an array value "v\n", 2 bytes). */
static int mtx_size(const char *line, const char *path, int lineno, uint64_t size, uint32_t max_ranks,
		    const struct mtx_head *h, uint64_t *n, uint64_t *nnz, rm_error_t *err)
{
	unsigned long long r, c, z = 0;
	uint64_t per = h->array ? 2 : 4;
	int used = 0, ok;

	if (h->array)
		ok = sscanf(line, "%llu %llu%n", &r, &c, &used) == 2;
	else
		ok = sscanf(line, "%llu %llu %llu%n", &r, &c, &z, &used) == 3;
	if (!ok || !blank_or_comment(line + used))
		return rm_error_set(err, path, lineno, 0, "expected the size line '%s'", h->array ? "N N" : "N N NNZ");
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
	if (h->array)
		z = h->symmetric ? r * (r + 1) / 2 : r * r;
	if (z > (size + 1) / per)
		return rm_error_set(err, path, lineno, 0,
				    "declares %llu entries, but a file of %llu bytes holds at most %llu", z,
				    (unsigned long long)size, (unsigned long long)((size + 1) / per));
	*n = r;
	*nnz = z;
	return 0;
}

/* Reads a whole Matrix Market stream into e (edges) and h (banner, header, columns); *n the ranks. */
static int mtx_read(FILE *f, uint64_t size, uint32_t max_ranks, const char *path, struct mtx_head *h, uint64_t *n,
		    struct mtx_edges *e, rm_error_t *err)
{
	uint64_t nnz = 0, seen = 0;
	int lineno = 0, rc = 0, have_size = 0;
	char *line = NULL;
	size_t cap = 0;

	memset(h, 0, sizeof(*h));
	*n = 0;
	while (rc == 0 && getline(&line, &cap, f) >= 0) {
		lineno++;
		if (lineno == 1)
			rc = mtx_banner(line, path, h, err);
		else if (blank_or_comment(line))
			rc = have_size ? 0 : mtx_comment(line, path, lineno, h, err);
		else if (!have_size)
			rc = mtx_size(line, path, lineno, size, max_ranks, h, n, &nnz, err), have_size = 1;
		else if (seen >= nnz)
			rc = rm_error_set(err, path, lineno, 0, "more entries than the %llu declared",
					  (unsigned long long)nnz);
		else if (h->array)
			rc = mtx_array_value(line, path, lineno, *n, seen++, h, e, err);
		else
			seen++, rc = mtx_entry(line, path, lineno, *n, h, e, err);
	}
	if (rc == 0)
		rc = rm_file_stream_error(f, path, RM_FILE_PATTERN, err);
	free(line);
	if (rc == 0 && lineno == 0)
		rc = rm_error_set(err, path, 1, 0, "empty file: no Matrix Market banner");
	if (rc == 0 && !have_size)
		rc = rm_error_set(err, path, lineno + 1, 0, "truncated file: no size line");
	if (rc == 0 && seen < nnz)
		rc = rm_error_set(err, path, lineno + 1, 0, "truncated file: %llu of %llu entries",
				  (unsigned long long)seen, (unsigned long long)nnz);
	return rc;
}

static int metric_needs_messages(map_metric_t metric)
{
	return metric == MAP_METRIC_MESSAGES || metric == MAP_METRIC_LOGGP;
}

/* Builds the graph of the edges read (e's columns per h->ncols). */
static map_graph_t *mtx_graph(uint64_t n, const struct mtx_edges *e, const struct mtx_head *h, const char *path,
			      map_metric_t metric, rm_error_t *err)
{
	if (h->ncols < 2 && metric_needs_messages(metric)) {
		rm_error_set(err, path, 0, 0,
			     "this metric needs message counts: a second value per entry, or a header comment "
			     "'%s FILE' naming a matrix of them",
			     MTX_COMPANION_KEY);
		return NULL;
	}
	return map_graph_from_edges_metric((uint32_t)n, e->n, e->src, e->dst, NULL, e->b, h->ncols == 2 ? e->m : NULL,
					   metric, path, err);
}

map_graph_t *map_pattern_mtx_load(FILE *f, uint64_t size, uint32_t max_ranks, const char *path, map_metric_t metric,
				  rm_error_t *err)
{
	struct mtx_edges e = { 0 };
	struct mtx_head h;
	map_graph_t *g = NULL;
	uint64_t n;

	if (mtx_read(f, size, max_ranks, path, &h, &n, &e, err) == 0)
		g = mtx_graph(n, &e, &h, path, metric, err);
	edges_free(&e);
	if (!g && errno != ENOMEM)
		errno = EINVAL;
	return g;
}

/* Reads the message counts of path's entries from its companion file (h->companion, beside path) into
 * e->m; both files must hold the same entries in the same order. */
static int mtx_companion(const char *path, uint64_t n, struct mtx_head *h, struct mtx_edges *e, rm_error_t *err)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0, csize = 0, k;
	char *cpath = malloc(dirlen + strlen(h->companion) + 1);
	struct mtx_edges m = { 0 };
	struct mtx_head ch;
	uint64_t cn = 0;
	FILE *f = NULL;
	int rc = -1;

	if (!cpath)
		return rm_error_set(err, path, 0, 0, "out of memory");
	memcpy(cpath, path, dirlen);
	strcpy(cpath + dirlen, h->companion);
	if (!(f = rm_file_fopen(cpath, RM_FILE_PATTERN, &csize, err)))
		goto out;
	if (mtx_read(f, csize, (uint32_t)n, cpath, &ch, &cn, &m, err) < 0)
		goto out;
	if (cn != n || ch.ncols != 1 || m.n != e->n) {
		rm_error_set(err, cpath, 0, 0,
			     "not the messages of %s: %llu ranks and %zu entries of one value "
			     "expected, %llu ranks and %zu entries of %d found",
			     path, (unsigned long long)n, e->n, (unsigned long long)cn, m.n, ch.ncols);
		goto out;
	}
	for (k = 0; k < m.n; k++)
		if (m.src[k] != e->src[k] || m.dst[k] != e->dst[k]) {
			rm_error_set(err, cpath, 0, 0,
				     "entry %zu is (%u, %u), in %s it is (%u, %u): not the same entries", k + 1,
				     m.src[k] + 1, m.dst[k] + 1, path, e->src[k] + 1, e->dst[k] + 1);
			goto out;
		}
	memcpy(e->m, m.b, e->n * sizeof(double));
	h->ncols = 2;
	rc = 0;
out:
	if (f)
		fclose(f);
	edges_free(&m);
	free(cpath);
	return rc;
}

/* map_pattern_mtx_load for a named file: also reads its message counts from a companion file when the
 * metric needs them. */
static map_graph_t *mtx_load_path(FILE *f, uint64_t size, uint32_t max_ranks, const char *path, map_metric_t metric,
				  rm_error_t *err)
{
	struct mtx_edges e = { 0 };
	struct mtx_head h;
	map_graph_t *g = NULL;
	uint64_t n;

	if (mtx_read(f, size, max_ranks, path, &h, &n, &e, err) == 0 &&
	    (h.ncols != 1 || !h.companion[0] || !metric_needs_messages(metric) ||
	     mtx_companion(path, n, &h, &e, err) == 0))
		g = mtx_graph(n, &e, &h, path, metric, err);
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
	if (!strncasecmp(head, "%%MatrixMarket", 14))
		g = mtx_load_path(f, size, max_ranks, path, metric, err);
	else if (metric_needs_messages(metric)) {
		rm_error_set(err, path, 0, 0, "a dense pattern has one metric; use Matrix Market for two");
		errno = EINVAL;
		g = NULL;
	} else
		g = map_pattern_dense_load(f, max_ranks, path, err);
	fclose(f);
	return g;
}
