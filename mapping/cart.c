/*
 * mapping/cart.c: Cartesian specs ("8x4:1,0:10,1") and the halo-exchange graph of such a grid.
 *
 * Ranks follow MPI_Cart_create's row-major order: the last dimension varies fastest. Every rank
 * exchanges with its +1 and -1 neighbour in each dimension (wrapping in periodic dimensions). The
 * graph is built from the +1 direction only, so each neighbour pair is one edge; a periodic dimension
 * of extent 2 produces the pair twice (0 -> 1 and the wrap 1 -> 0), and the merge sums both
 * exchanges into one edge of weight 2w, which is what such a halo exchange really sends.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"

static int parse_dims(const char *s, size_t len, map_cart_t *c, rm_error_t *err)
{
	const char *p = s, *end = s + len;

	c->ndims = 0;
	while (p < end) {
		char *q;
		long v;

		if (c->ndims == MAP_CART_MAXDIMS)
			return rm_error_set(err, "cart dims", 0, (int)(p - s) + 1, "more than %d dimensions",
					    MAP_CART_MAXDIMS);
		errno = 0;
		v = strtol(p, &q, 10);
		if (q == p || errno || v < 1 || v > INT_MAX || (q < end && *q != 'x' && *q != 'X'))
			return rm_error_set(err, "cart dims", 0, (int)(p - s) + 1,
					    "expected a positive extent, as in 8x4x2");
		c->dims[c->ndims++] = (int)v;
		p = q < end ? q + 1 : q;
		if (q < end && p == end)
			return rm_error_set(err, "cart dims", 0, (int)(q - s) + 1, "missing extent after 'x'");
	}
	if (!c->ndims)
		return rm_error_set(err, "cart dims", 0, 1, "no dimensions (expected e.g. 8x4)");
	return 0;
}

/* Parses a comma list of ndims numbers; periods (integer 0/1) or weights (> 0, finite). */
static int parse_list(const char *field, const char *s, size_t len, int ndims, int is_period, map_cart_t *c,
		      rm_error_t *err)
{
	const char *p = s, *end = s + len;
	int i;

	for (i = 0; i < ndims; i++) {
		char *q;
		double v;

		errno = 0;
		v = strtod(p, &q);
		if (q == p || q > end || errno || (q < end && *q != ','))
			return rm_error_set(err, field, 0, (int)(p - s) + 1, "expected %d comma-separated %s", ndims,
					    is_period ? "periods (0 or 1)" : "weights");
		if (is_period ? (v != 0 && v != 1) : !(v > 0 && isfinite(v)))
			return rm_error_set(err, field, 0, (int)(p - s) + 1, "%s %d must be %s", field, i + 1,
					    is_period ? "0 or 1" : "a positive number");
		if (is_period)
			c->periods[i] = (int)v;
		else
			c->weights[i] = v;
		p = q + (q < end);
		if ((i + 1 < ndims) != (q < end))
			return rm_error_set(err, field, 0, (int)(q - s) + 1, "expected %d values, one per dimension",
					    ndims);
	}
	return 0;
}

int map_cart_parse(const char *spec, map_cart_t *out, rm_error_t *err)
{
	const char *c1, *c2;
	size_t len;
	int i, rc;

	memset(out, 0, sizeof(*out));
	if (!spec) {
		errno = EINVAL;
		return rm_error_set(err, "cart", 0, 0, "no Cartesian spec");
	}
	len = strlen(spec);
	c1 = strchr(spec, ':');
	c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	rc = parse_dims(spec, c1 ? (size_t)(c1 - spec) : len, out, err);
	for (i = 0; rc == 0 && i < out->ndims; i++) {
		out->periods[i] = 1;
		out->weights[i] = 1.0;
	}
	if (rc == 0 && c1)
		rc = parse_list("cart periods", c1 + 1, c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1), out->ndims, 1, out,
				err);
	if (rc == 0 && c2) {
		if (strchr(c2 + 1, ':'))
			rc = rm_error_set(err, "cart", 0, 0, "too many ':' fields (DIMS[:PERIODS[:WEIGHTS]])");
		else
			rc = parse_list("cart weights", c2 + 1, strlen(c2 + 1), out->ndims, 0, out, err);
	}
	if (rc == 0) {
		double total = 1;

		for (i = 0; i < out->ndims; i++)
			total *= out->dims[i];
		if (total > (double)UINT32_MAX - 1)
			rc = rm_error_set(err, "cart dims", 0, 0, "%.0f ranks is too many", total);
	}
	if (rc < 0)
		errno = EINVAL;
	return rc;
}

map_graph_t *map_graph_cart(const map_cart_t *c, rm_error_t *err)
{
	uint32_t n = 1, r, *src, *dst;
	size_t ne = 0, cap;
	double *w;
	map_graph_t *g;
	int d;

	if (!c || c->ndims < 1 || c->ndims > MAP_CART_MAXDIMS) {
		errno = EINVAL;
		rm_error_set(err, "cart", 0, 0, "invalid Cartesian spec");
		return NULL;
	}
	for (d = 0; d < c->ndims; d++)
		n *= (uint32_t)c->dims[d];
	cap = (size_t)n * c->ndims + 1;
	src = malloc(cap * sizeof(*src));
	dst = malloc(cap * sizeof(*dst));
	w = malloc(cap * sizeof(*w));
	if (!src || !dst || !w) {
		free(src), free(dst), free(w);
		errno = ENOMEM;
		rm_error_set(err, "cart", 0, 0, "out of memory for %u ranks", n);
		return NULL;
	}
	for (r = 0; r < n; r++) {
		uint32_t stride = 1, rest = r;

		for (d = c->ndims - 1; d >= 0; d--) {
			uint32_t ext = (uint32_t)c->dims[d], x = rest % ext;

			rest /= ext;
			if (x + 1 < ext || (c->periods[d] && ext > 1)) {
				src[ne] = r;
				dst[ne] = x + 1 < ext ? r + stride : r - x * stride;
				w[ne++] = c->weights[d];
			}
			stride *= ext;
		}
	}
	g = map_graph_from_edges_metric(n, ne, src, dst, w, NULL, NULL, MAP_METRIC_DEFAULT, "cart weights", err);
	free(src), free(dst), free(w);
	if (g && (g->cart = malloc(sizeof(*g->cart))))
		*g->cart = *c; /* (without it, auto does not tile: no error) */
	return g;
}
