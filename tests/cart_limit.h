/*
 * tests/cart_limit.h: the structured-tiling limit of a Cartesian grid on a tleaf target, written for
 * the tests and benches apart from mapping/tiling.c (used by tests/unit/test_map_tiling.c and
 * tests/bench/bench_mapping.c).
 *
 * A structured tiling gives every group of level l (slots per group S_l = S_{l-1} / a_l) a box of the
 * grid of S_l points, one shape per level, each box's extents dividing its parent's. Every chain of
 * shapes is enumerated; for each, the placement is built (rank -> slot: the child box holding the rank,
 * row-major, at every level) and costed edge by edge over the grid's coordinates, with the tleaf's
 * distances. The least cost is the limit (0 when no chain exists: the extents do not divide). Meant
 * for grids of up to about 100,000 points with a few levels (every chain is costed in full).
 */
#ifndef RANKMAP_TESTS_CART_LIMIT_H
#define RANKMAP_TESTS_CART_LIMIT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CL_MAXD 8
#define CL_MAXL 8

struct cart_limit {
	int nd, nl;                                 /* dims; levels below the root */
	uint32_t dims[CL_MAXD], arity[CL_MAXL];     /* the grid; the tleaf's arities */
	int periods[CL_MAXD];                       /* 1: periodic */
	double weights[CL_MAXD], dist[CL_MAXL + 1]; /* dist[l]: slots first apart at level l; dist[nl] = 0 */
	/* out */
	double best;
	uint32_t box[CL_MAXL][CL_MAXD], cur[CL_MAXL][CL_MAXD];
	uint32_t *perm;
};

/* Slot of rank coordinates x under the chain cur. */
static uint32_t cl_slot(const struct cart_limit *c, const uint32_t *x)
{
	uint32_t slot = 0;

	for (int l = 0; l < c->nl; l++) {
		const uint32_t *parent = l ? c->cur[l - 1] : c->dims;
		uint32_t child = 0;

		for (int d = 0; d < c->nd; d++)
			child = child * (parent[d] / c->cur[l][d]) + (x[d] % parent[d]) / c->cur[l][d];
		slot = slot * c->arity[l] + child;
	}
	return slot;
}

/* Distance of two slots: the tleaf's cost at the first level where their groups differ. */
static double cl_dist(const struct cart_limit *c, uint32_t s1, uint32_t s2)
{
	uint32_t below = 1;
	int l;

	for (l = 0; l < c->nl; l++)
		below *= c->arity[l];
	for (l = 0; l < c->nl; l++) {
		below /= c->arity[l];
		if (s1 / below != s2 / below)
			return c->dist[l];
	}
	return 0;
}

/* Cost of the chain in cur: every grid edge (+1 neighbour per dimension, wrap-around where periodic;
 * an extent-2 periodic dimension counts its pair twice, as map_graph_cart's merged edge does). */
static double cl_cost(struct cart_limit *c)
{
	uint32_t n = 1, r, x[CL_MAXD], y[CL_MAXD];
	double cost = 0;
	int d;

	for (d = 0; d < c->nd; d++)
		n *= c->dims[d];
	for (r = 0; r < n; r++) {
		uint32_t rest = r;

		for (d = c->nd - 1; d >= 0; d--)
			x[d] = rest % c->dims[d], rest /= c->dims[d];
		c->perm[r] = cl_slot(c, x);
	}
	for (r = 0; r < n; r++) {
		uint32_t rest = r;

		for (d = c->nd - 1; d >= 0; d--)
			x[d] = rest % c->dims[d], rest /= c->dims[d];
		for (d = 0; d < c->nd; d++) {
			uint32_t q = 0;

			if (x[d] + 1 == c->dims[d] && !(c->periods[d] && c->dims[d] > 1))
				continue;
			memcpy(y, x, sizeof(y));
			y[d] = (x[d] + 1) % c->dims[d];
			for (int e = 0; e < c->nd; e++)
				q = q * c->dims[e] + y[e];
			cost += c->weights[d] * cl_dist(c, c->perm[r], c->perm[q]);
		}
	}
	return cost;
}

static void cl_chain(struct cart_limit *c, int l);

/* Shapes of level l: extents dividing the parent's, of product rest from dimension d on. */
static void cl_shapes(struct cart_limit *c, int l, int d, uint32_t rest)
{
	const uint32_t *parent = l ? c->cur[l - 1] : c->dims;

	if (d == c->nd) {
		if (rest == 1)
			cl_chain(c, l + 1);
		return;
	}
	for (uint32_t q = 1; q <= parent[d]; q++)
		if (parent[d] % q == 0 && rest % q == 0) {
			c->cur[l][d] = q;
			cl_shapes(c, l, d + 1, rest / q);
		}
}

static void cl_chain(struct cart_limit *c, int l)
{
	uint32_t size = 1;

	if (l == c->nl) {
		double cost = cl_cost(c);

		if (c->best == 0 || cost < c->best) {
			c->best = cost;
			memcpy(c->box, c->cur, sizeof(c->box));
		}
		return;
	}
	for (int k = l + 1; k < c->nl; k++)
		size *= c->arity[k];
	cl_shapes(c, l, 0, size);
}

/* The limit of grid dims (nd of them, periods, weights) on a tleaf of nl levels (arity[], dist[]);
 * 0 when the grid has no structured tiling (or its size is not the tleaf's). */
static double cart_limit(struct cart_limit *c)
{
	uint32_t n = 1, slots = 1;

	for (int d = 0; d < c->nd; d++)
		n *= c->dims[d];
	for (int l = 0; l < c->nl; l++)
		slots *= c->arity[l];
	c->best = 0;
	if (n != slots || !(c->perm = malloc(sizeof(*c->perm) * n)))
		return 0;
	cl_chain(c, 0);
	free(c->perm);
	c->perm = NULL;
	return c->best;
}

#endif
