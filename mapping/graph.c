/*
 * mapping/graph.c: communication graphs in CSR form, built from edge lists.
 *
 * An undirected edge {u, v} is stored twice (u -> v and v -> u) with the same weight. Edges given in
 * both directions, or several times, are summed: the weight of a pair is the total traffic between
 * the two ranks. Self loops are dropped, as are pairs whose weight sums to zero.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mapping_private.h"

/* LogGP parameters of REFERENCE.md section 4 (DDR InfiniBand), microseconds. */
#define LOGGP_L 1.84
#define LOGGP_O 1.49
#define LOGGP_G 0.00067

double map_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double map_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int map_metric_parse(const char *s, map_metric_t *out)
{
	static const struct {
		const char *name;
		map_metric_t m;
	} tab[] = {
		{ "default", MAP_METRIC_DEFAULT },   { "bytes", MAP_METRIC_BYTES },   { "size", MAP_METRIC_BYTES },
		{ "messages", MAP_METRIC_MESSAGES }, { "msgs", MAP_METRIC_MESSAGES }, { "loggp", MAP_METRIC_LOGGP },
	};
	size_t i;

	for (i = 0; s && i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (!strcmp(s, tab[i].name)) {
			*out = tab[i].m;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

double map_metric_weight(map_metric_t m, double bytes, double msgs, int has_msgs)
{
	if (!has_msgs)
		return bytes;
	switch (m) {
	case MAP_METRIC_MESSAGES: return msgs;
	case MAP_METRIC_LOGGP: return msgs * (LOGGP_L + 2 * LOGGP_O) + bytes * LOGGP_G;
	default: return bytes;
	}
}

map_graph_t *map_graph_alloc(uint32_t n, uint64_t nadj, int with_metrics)
{
	map_graph_t *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->n = n;
	g->xadj = calloc((size_t)n + 1, sizeof(*g->xadj));
	g->adj = malloc((nadj ? nadj : 1) * sizeof(*g->adj));
	g->w = malloc((nadj ? nadj : 1) * sizeof(*g->w));
	if (with_metrics) {
		g->bytes = malloc((nadj ? nadj : 1) * sizeof(double));
		g->msgs = malloc((nadj ? nadj : 1) * sizeof(double));
	}
	if (!g->xadj || !g->adj || !g->w || (with_metrics && (!g->bytes || !g->msgs))) {
		map_graph_destroy(g);
		errno = ENOMEM;
		return NULL;
	}
	return g;
}

void map_graph_destroy(map_graph_t *g)
{
	if (!g)
		return;
	free(g->xadj);
	free(g->adj);
	free(g->w);
	free(g->bytes);
	free(g->msgs);
	free(g->cart);
	free(g);
}

struct half_edge {
	uint32_t v;
	double w, b, m;
};

static int half_cmp(const void *a, const void *b)
{
	const struct half_edge *x = a, *y = b;

	return (x->v > y->v) - (x->v < y->v);
}

static int check_edges(uint32_t n, size_t nedges, const uint32_t *src, const uint32_t *dst, const double *w,
		       const double *bytes, const double *msgs, const char *source, rm_error_t *err)
{
	size_t e;

	for (e = 0; e < nedges; e++) {
		if (src[e] >= n || dst[e] >= n)
			return rm_error_set(err, source, 0, 0, "edge %zu joins %u and %u, but there are %u ranks", e,
					    src[e], dst[e], n);
		if ((w && !(w[e] >= 0 && isfinite(w[e]))) || (bytes && !(bytes[e] >= 0 && isfinite(bytes[e]))) ||
		    (msgs && !(msgs[e] >= 0 && isfinite(msgs[e]))))
			return rm_error_set(err, source, 0, 0, "edge %zu (%u-%u) has a negative or non-finite weight",
					    e, src[e], dst[e]);
	}
	return 0;
}

/* Sorts each vertex's half edges by neighbour, merges duplicates and drops zero weights; compacts. */
static void merge_rows(map_graph_t *g, struct half_edge *he, const uint64_t *start)
{
	uint64_t out = 0;
	uint32_t u;

	for (u = 0; u < g->n; u++) {
		uint64_t i, b = start[u], e = start[u + 1];

		g->xadj[u] = out;
		if (e - b > 1)
			qsort(he + b, e - b, sizeof(*he), half_cmp);
		for (i = b; i < e;) {
			struct half_edge acc = he[i++];

			while (i < e && he[i].v == acc.v) {
				acc.w += he[i].w;
				acc.b += he[i].b;
				acc.m += he[i].m;
				i++;
			}
			if (!(acc.w > 0))
				continue;
			g->adj[out] = acc.v;
			g->w[out] = acc.w;
			if (g->bytes) {
				g->bytes[out] = acc.b;
				g->msgs[out] = acc.m;
			}
			out++;
		}
	}
	g->xadj[g->n] = out;
}

/* Sum of column c (w, bytes or msgs) over g's undirected edges, each counted once. */
static double column_total(const map_graph_t *g, const double *c)
{
	double total = 0;
	uint64_t k;
	uint32_t u;

	for (u = 0; u < g->n; u++)
		for (k = g->xadj[u]; k < g->xadj[u + 1]; k++)
			if (g->adj[k] > u)
				total += c[k];
	return total;
}

/* The total traffic must be a finite double: costs, gains and breakdowns are sums of it. */
static int check_total(const map_graph_t *g, const char *source, rm_error_t *err)
{
	const char *col = !isfinite(column_total(g, g->w))                   ? "weights"
			  : g->bytes && !isfinite(column_total(g, g->bytes)) ? "byte counts"
			  : g->msgs && !isfinite(column_total(g, g->msgs))   ? "message counts"
									     : NULL;

	if (!col)
		return 0;
	errno = EINVAL;
	return rm_error_set(err, source, 0, 0,
			    "the %s sum to more than a double holds (total weight not finite): "
			    "scale them down",
			    col);
}

map_graph_t *map_graph_from_edges_metric(uint32_t n, size_t nedges, const uint32_t *src, const uint32_t *dst,
					 const double *w, const double *bytes, const double *msgs, map_metric_t metric,
					 const char *source, rm_error_t *err)
{
	uint64_t *start, *fill;
	struct half_edge *he;
	map_graph_t *g;
	size_t e;

	if (check_edges(n, nedges, src, dst, w, bytes, msgs, source, err) < 0) {
		errno = EINVAL;
		return NULL;
	}
	start = calloc((size_t)n + 2, sizeof(*start));
	fill = calloc((size_t)n + 1, sizeof(*fill));
	he = malloc((2 * nedges + 1) * sizeof(*he));
	g = map_graph_alloc(n, 2 * (uint64_t)nedges, bytes != NULL);
	if (!start || !fill || !he || !g) {
		free(start), free(fill), free(he), map_graph_destroy(g);
		rm_error_set(err, "edges", 0, 0, "out of memory for %zu edges", nedges);
		errno = ENOMEM;
		return NULL;
	}
	for (e = 0; e < nedges; e++) {
		if (src[e] == dst[e])
			continue;
		start[src[e] + 1]++;
		start[dst[e] + 1]++;
	}
	for (e = 0; e < n; e++)
		start[e + 1] += start[e];
	for (e = 0; e < nedges; e++) {
		struct half_edge h;

		if (src[e] == dst[e])
			continue;
		h.b = bytes ? bytes[e] : 0;
		h.m = msgs ? msgs[e] : 0;
		h.w = w ? w[e] : map_metric_weight(metric, h.b, h.m, msgs != NULL);
		h.v = dst[e];
		he[start[src[e]] + fill[src[e]]++] = h;
		h.v = src[e];
		he[start[dst[e]] + fill[dst[e]]++] = h;
	}
	merge_rows(g, he, start);
	free(start), free(fill), free(he);
	if (check_total(g, source, err) < 0) {
		map_graph_destroy(g);
		return NULL;
	}
	return g;
}

map_graph_t *map_graph_from_edges(uint32_t n, size_t nedges, const uint32_t *src, const uint32_t *dst, const double *w,
				  rm_error_t *err)
{
	static const double one = 1.0;
	double *ones = NULL;
	map_graph_t *g;
	size_t e;

	if (!w) {
		ones = malloc((nedges + 1) * sizeof(*ones));
		if (!ones) {
			errno = ENOMEM;
			return NULL;
		}
		for (e = 0; e < nedges; e++)
			ones[e] = one;
	}
	g = map_graph_from_edges_metric(n, nedges, src, dst, w ? w : ones, NULL, NULL, MAP_METRIC_DEFAULT, "edges",
					err);
	free(ones);
	return g;
}
