/*
 * mapping/tiling.c: a Cartesian grid tiled onto a uniform tree by nested boxes (one of auto's
 * candidates, for graphs that map_graph_cart built).
 *
 * Each group of the target's level l holds S_l slots (S_l = nslots / ngroups[l]); a structured tiling
 * gives each of them a box of the grid of S_l points, the same shape for every group of the level,
 * each box's extents dividing those of the box of its parent (the whole grid at the root). Then an
 * edge's cost follows from the deepest box that holds both its ends, and the mapping's cost is
 *
 *   cost[0] * W - sum over l >= 1 of (cost[l-1] - cost[l]) * (N / S_l) * inside(b_l),
 *
 * W the grid's total weight, inside(b) the weight of the edges inside one box of extents b (its
 * wrap-around links too when it spans a periodic dimension). The chain of shapes that maximises the sum
 * is found by enumerating every chain (depth first, at most TILING_MAX_VISITS steps: 10,751 at
 * 128x128x64 on 4 levels; past it the best chain so far is kept), in O(levels x dims) memory; the
 * ranks then go to their slots in O(N x levels). Every divisor of a box's size splits it into boxes
 * (take gcd(divisor, first extent) along the first dimension, and so on), so a grid of the target's
 * size on a uniform tree always has such a tiling, whatever its extents; other sizes and targets
 * (fewer ranks than slots, hosts of different sizes) are declined, and auto keeps its other
 * candidates (TreeMatch handles every shape).
 *
 * This is the best mapping by boxes of one shape per level (the "structured-tiling limit" that
 * tests/bench/bench_mapping.c prints); TreeMatch comes within 0 to 3 % of it on the bench's grids (3.1
 * % at 64x64x16 on 64-host switches), 15 % on some (48x48x48 on 24-core packages); refine.c's local
 * search runs on it as on every candidate of auto.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"

#define TILING_MAX_VISITS 1000000L

struct tiling {
	int nd, L;
	uint32_t D[MAP_CART_MAXDIMS];
	int per[MAP_CART_MAXDIMS];
	double w[MAP_CART_MAXDIMS], N;
	uint32_t S[64];
	double delta[64];
	uint32_t cur[64][MAP_CART_MAXDIMS], best[64][MAP_CART_MAXDIMS];
	double best_val;
	long visits;
};

/* Weight of the edges inside one box of extents b. */
static double inside(const struct tiling *T, const uint32_t *b)
{
	double vol = 1, s = 0;
	int d;

	for (d = 0; d < T->nd; d++)
		vol *= b[d];
	for (d = 0; d < T->nd; d++) {
		double links = b[d] - 1.0 + (b[d] == T->D[d] && T->per[d] && T->D[d] > 1);

		s += T->w[d] * links * (vol / b[d]);
	}
	return s;
}

static void chain(struct tiling *T, int l, double acc);

/* Shapes of level l: extents b[d] dividing the parent's, their product rest at dimension d. */
static void shapes(struct tiling *T, int l, int d, uint32_t rest, double acc)
{
	const uint32_t *parent = l > 1 ? T->cur[l - 1] : T->D;
	uint32_t q;

	if (++T->visits > TILING_MAX_VISITS)
		return; /* (the best chain so far stands) */
	if (d == T->nd) {
		if (rest == 1)
			chain(T, l + 1, acc + T->delta[l] * (T->N / T->S[l]) * inside(T, T->cur[l]));
		return;
	}
	for (q = 1; q <= parent[d] && q <= rest; q++)
		if (parent[d] % q == 0 && rest % q == 0) {
			T->cur[l][d] = q;
			shapes(T, l, d + 1, rest / q, acc);
		}
}

static void chain(struct tiling *T, int l, double acc)
{
	if (l == T->L) {
		if (acc > T->best_val) {
			T->best_val = acc;
			memcpy(T->best, T->cur, sizeof(T->best));
		}
		return;
	}
	shapes(T, l, 0, T->S[l], acc);
}

/* 1 when every group of level l holds the slots s with s / S_l equal (tleaf targets, and any uniform
 * tree numbered that way). */
static int uniform(const topo_target_t *t, struct tiling *T)
{
	uint32_t s;
	int l;

	for (l = 0; l < t->nlevels; l++) {
		if (!t->ngroups[l] || t->nslots % t->ngroups[l])
			return 0;
		T->S[l] = t->nslots / t->ngroups[l];
	}
	for (s = 0; s < t->nslots; s++)
		for (l = 0; l < t->nlevels; l++)
			if (t->group[(size_t)s * t->nlevels + l] != s / T->S[l])
				return 0;
	return 1;
}

int map_engine_tiling(const map_ctx_t *ctx, uint32_t *perm)
{
	const map_graph_t *g = ctx->g;
	const topo_target_t *t = ctx->t;
	struct tiling *T = calloc(1, sizeof(*T));
	uint32_t r;
	int l, d;

	if (!T) {
		errno = ENOMEM;
		return rm_error_set(ctx->err, "tiling", 0, 0, "out of memory");
	}
	if (!g->cart || g->n != t->nslots || t->nlevels < 2 || t->nlevels > 64 || !uniform(t, T)) {
		free(T);
		errno = EINVAL;
		return rm_error_set(ctx->err, "tiling", 0, 0, "not a Cartesian grid on a uniform tree of its size");
	}
	T->nd = g->cart->ndims, T->L = t->nlevels, T->N = g->n, T->best_val = -1;
	for (d = 0; d < T->nd; d++)
		T->D[d] = (uint32_t)g->cart->dims[d], T->per[d] = g->cart->periods[d], T->w[d] = g->cart->weights[d];
	for (l = 1; l < T->L; l++)
		T->delta[l] = t->cost[l - 1] - t->cost[l];
	chain(T, 1, 0);
	if (T->best_val < 0) {
		free(T);
		errno = EINVAL;
		return rm_error_set(ctx->err, "tiling", 0, 0, "the grid's extents do not divide into the levels");
	}
	for (r = 0; r < g->n; r++) {
		uint32_t x[MAP_CART_MAXDIMS], rest = r, slot = 0;

		for (d = T->nd - 1; d >= 0; d--)
			x[d] = rest % T->D[d], rest /= T->D[d];
		for (l = 1; l < T->L; l++) {
			const uint32_t *parent = l > 1 ? T->best[l - 1] : T->D, *b = T->best[l];
			uint32_t child = 0;

			for (d = 0; d < T->nd; d++) /* the child box holding x, row-major inside its parent */
				child = child * (parent[d] / b[d]) + (x[d] % parent[d]) / b[d];
			slot += child * T->S[l];
		}
		perm[r] = slot;
	}
	free(T);
	return 0;
}
