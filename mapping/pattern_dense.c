/*
 * mapping/pattern_dense.c: TreeMatch's dense communication matrix: N lines of N numbers (the first
 * line fixes N), blank lines and # comments ignored. Entry (i, j) is the traffic from i to j. When
 * the matrix is symmetric, the weight of the pair {i, j} is m[i][j]; otherwise it is m[i][j] + m[j][i],
 * the total traffic. Only non-zero entries are kept, so memory follows the pattern, not N^2. Nothing
 * is sized by N before the N rows have been read: memory follows what the file holds, and N (the
 * first row's length) is at most MAP_MAX_RANKS.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"
#include "rm_file.h"

struct dense_entry {
	uint32_t i, j;
	double v;
};

struct dense_state {
	struct dense_entry *e;
	size_t n, cap;
	uint32_t N, row;
	uint32_t max; /* most ranks (values a row) allowed */
};

static int dense_push(struct dense_state *s, uint32_t i, uint32_t j, double v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		struct dense_entry *ne = realloc(s->e, cap * sizeof(*ne));

		if (!ne)
			return -1;
		s->e = ne;
		s->cap = cap;
	}
	s->e[s->n].i = i, s->e[s->n].j = j, s->e[s->n].v = v;
	s->n++;
	return 0;
}

static int is_blank(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return *p == '\0' || *p == '#';
}

/* Parses one row; the first row fixes N. */
static int dense_row(struct dense_state *s, char *line, const char *path, int lineno, rm_error_t *err)
{
	uint32_t col = 0;
	char *p = line, *q;

	for (;;) {
		double v;

		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0' || *p == '#')
			break;
		errno = 0;
		v = strtod(p, &q);
		if (q == p || (*q && !isspace((unsigned char)*q) && *q != '#'))
			return rm_error_set(err, path, lineno, (int)(p - line) + 1, "expected a number");
		if (!(v >= 0 && isfinite(v)))
			return rm_error_set(err, path, lineno, (int)(p - line) + 1, "negative or non-finite weight");
		if (s->N && col >= s->N)
			return rm_error_set(err, path, lineno, (int)(p - line) + 1, "more than %u values", s->N);
		if (col >= s->max)
			return rm_error_set(err, path, lineno, (int)(p - line) + 1,
					    s->max < MAP_MAX_RANKS
						    ? "more than %u values, the number of ranks expected"
						    : "more than %u values: at most that many ranks are supported",
					    s->max);
		if (v != 0 && s->row != col && dense_push(s, s->row, col, v) < 0)
			return rm_error_set(err, path, lineno, 0, "out of memory");
		col++;
		p = q;
	}
	if (!s->N)
		s->N = col;
	else if (col != s->N)
		return rm_error_set(err, path, lineno, 0, "%u values, expected %u (one per rank)", col, s->N);
	if (s->row >= s->N)
		return rm_error_set(err, path, lineno, 0, "more than %u rows", s->N);
	s->row++;
	return 0;
}

static int pair_cmp(const void *a, const void *b)
{
	const struct dense_entry *x = a, *y = b;
	uint32_t xl = x->i < x->j ? x->i : x->j, xh = x->i ^ x->j ^ xl;
	uint32_t yl = y->i < y->j ? y->i : y->j, yh = y->i ^ y->j ^ yl;

	if (xl != yl)
		return xl < yl ? -1 : 1;
	if (xh != yh)
		return xh < yh ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* True when every (i, j) entry has a matching (j, i) entry of the same value. */
static int dense_symmetric(struct dense_entry *e, size_t n)
{
	size_t k;

	if (n == 0)
		return 1; /* no entries (e may be NULL: qsort must not see it) */
	if (n % 2)
		return 0;
	qsort(e, n, sizeof(*e), pair_cmp);
	for (k = 0; k < n; k += 2)
		if (e[k].i != e[k + 1].j || e[k].j != e[k + 1].i || e[k].v != e[k + 1].v)
			return 0;
	return 1;
}

static map_graph_t *dense_graph(struct dense_state *s, const char *path, rm_error_t *err)
{
	int sym = dense_symmetric(s->e, s->n);
	uint32_t *src = malloc((s->n + 1) * sizeof(*src)), *dst = malloc((s->n + 1) * sizeof(*dst));
	double *w = malloc((s->n + 1) * sizeof(*w));
	map_graph_t *g = NULL;
	size_t k, m = 0;

	if (src && dst && w) {
		for (k = 0; k < s->n; k++) {
			if (sym && s->e[k].i > s->e[k].j)
				continue;
			src[m] = s->e[k].i, dst[m] = s->e[k].j, w[m++] = s->e[k].v;
		}
		g = map_graph_from_edges_metric(s->N, m, src, dst, w, NULL, NULL, MAP_METRIC_DEFAULT, path, err);
	} else {
		errno = ENOMEM;
	}
	free(src), free(dst), free(w);
	return g;
}

map_graph_t *map_pattern_dense_load(FILE *f, uint32_t max_ranks, const char *path, rm_error_t *err)
{
	struct dense_state s = { .max = max_ranks < MAP_MAX_RANKS ? max_ranks : MAP_MAX_RANKS };
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, rc = 0;
	map_graph_t *g = NULL;

	while (rc == 0 && getline(&line, &cap, f) >= 0) {
		lineno++;
		if (!is_blank(line))
			rc = dense_row(&s, line, path, lineno, err);
	}
	if (rc == 0)
		rc = rm_file_stream_error(f, path, RM_FILE_PATTERN, err);
	free(line);
	if (rc == 0 && s.N == 0)
		rc = rm_error_set(err, path, lineno + 1, 0, "empty pattern (no matrix rows)");
	if (rc == 0 && s.row < s.N)
		rc = rm_error_set(err, path, lineno + 1, 0, "truncated matrix: %u of %u rows", s.row, s.N);
	if (rc == 0)
		g = dense_graph(&s, path, err);
	free(s.e);
	if (!g && errno != ENOMEM)
		errno = EINVAL;
	return g;
}
