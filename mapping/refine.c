/*
 * mapping/refine.c: the "refine" engine, local search on a mapping.
 *
 * A move swaps rank r with whatever occupies slot c (another rank, or nothing when there are more
 * slots than ranks). Its gain comes from the sparse graph alone: only the edges of the two ranks
 * change length. Candidate slots for r are the slots of the lowest groups (the groups just above the
 * slots) that hold r's neighbours: moving r next to the ranks it talks to. Each rank takes its best
 * improving move; passes repeat until none improves or the deadline passes. Every move keeps a
 * bijection and strictly lowers the cost, so the result is never worse than the start.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"

#define NO_RANK UINT32_MAX

struct refine {
	const map_graph_t *g;
	const topo_target_t *t;
	uint32_t *perm, *inv; /* inv[slot]: rank or NO_RANK */
	uint32_t *lo, *hi;    /* slot range of each lowest group */
	uint32_t *stamp, cur;
	int lev;              /* level of the lowest groups */
};

static uint32_t low_group(const struct refine *R, uint32_t slot)
{
	return R->t->group[(size_t)slot * R->t->nlevels + R->lev];
}

/* Cost change when r (on its slot) and the occupant of slot c exchange places. */
static double swap_delta(const struct refine *R, uint32_t r, uint32_t c)
{
	uint32_t s = R->perm[r], r2 = R->inv[c];
	double d;

	d = map_rank_cost(R->g, R->t, R->perm, r, c, r2) - map_rank_cost(R->g, R->t, R->perm, r, s, r2);
	if (r2 != NO_RANK)
		d += map_rank_cost(R->g, R->t, R->perm, r2, s, r) - map_rank_cost(R->g, R->t, R->perm, r2, c, r);
	return d;
}

static void apply_swap(struct refine *R, uint32_t r, uint32_t c)
{
	uint32_t s = R->perm[r], r2 = R->inv[c];

	R->perm[r] = c;
	R->inv[c] = r;
	R->inv[s] = r2;
	if (r2 != NO_RANK)
		R->perm[r2] = s;
}

/* Best move of rank r; applies it and returns 1 when it lowers the cost. */
static int refine_rank(struct refine *R, uint32_t r)
{
	const map_graph_t *g = R->g;
	uint32_t own = low_group(R, R->perm[r]), best = NO_RANK, c;
	double bd = 0, tol = 1e-9 * (1 + map_rank_cost(g, R->t, R->perm, r, R->perm[r], NO_RANK));
	uint64_t k;

	R->cur++;
	R->stamp[own] = R->cur;
	for (k = g->xadj[r]; k < g->xadj[r + 1]; k++) {
		uint32_t gv = low_group(R, R->perm[g->adj[k]]);

		if (R->stamp[gv] == R->cur)
			continue;
		R->stamp[gv] = R->cur;
		for (c = R->lo[gv]; c < R->hi[gv]; c++) {
			double d = swap_delta(R, r, c);

			if (d < bd - tol) {
				bd = d;
				best = c;
			}
		}
	}
	if (best == NO_RANK)
		return 0;
	apply_swap(R, r, best);
	return 1;
}

static int refine_init(struct refine *R, const map_ctx_t *ctx, uint32_t *perm)
{
	const topo_target_t *t = ctx->t;
	uint32_t s, ng;

	memset(R, 0, sizeof(*R));
	R->g = ctx->g, R->t = t, R->perm = perm;
	R->lev = t->nlevels >= 2 ? t->nlevels - 2 : 0;
	ng = t->ngroups[R->lev];
	R->inv = malloc((size_t)t->nslots * sizeof(*R->inv));
	R->lo = malloc((size_t)ng * sizeof(*R->lo));
	R->hi = calloc(ng, sizeof(*R->hi));
	R->stamp = calloc(ng, sizeof(*R->stamp));
	if (!R->inv || !R->lo || !R->hi || !R->stamp)
		return -1;
	memset(R->inv, 0xff, (size_t)t->nslots * sizeof(*R->inv));
	for (s = 0; s < ctx->g->n; s++)
		R->inv[perm[s]] = s;
	for (s = t->nslots; s-- > 0;) {
		uint32_t gs = low_group(R, s);

		R->lo[gs] = s;
		if (!R->hi[gs])
			R->hi[gs] = s + 1;
	}
	return 0;
}

static void refine_free(struct refine *R)
{
	free(R->inv), free(R->lo), free(R->hi), free(R->stamp);
}

long map_refine_run(const map_ctx_t *ctx, uint32_t *perm)
{
	struct refine R;
	long moves = 0, pass_moves = 1;
	uint32_t r;

	if (ctx->t->nlevels < 2 || ctx->g->n < 2)
		return 0;
	if (refine_init(&R, ctx, perm) < 0) {
		refine_free(&R);
		errno = ENOMEM;
		return -1;
	}
	while (pass_moves > 0 && map_now_ms() < ctx->deadline) {
		pass_moves = 0;
		for (r = 0; r < ctx->g->n; r++) {
			pass_moves += refine_rank(&R, r);
			if ((r & 255) == 255 && map_now_ms() >= ctx->deadline)
				break;
		}
		moves += pass_moves;
	}
	refine_free(&R);
	return moves;
}

int map_engine_refine(const map_ctx_t *ctx, uint32_t *perm)
{
	uint32_t i;

	if (ctx->opt.start) {
		if (map_check_perm(ctx->opt.start, ctx->g->n, ctx->t->nslots) < 0)
			return rm_error_set(ctx->err, "refine", 0, 0, "the start mapping is not a bijection onto slots");
		memcpy(perm, ctx->opt.start, (size_t)ctx->g->n * sizeof(*perm));
	} else {
		for (i = 0; i < ctx->g->n; i++)
			perm[i] = i;
	}
	if (map_refine_run(ctx, perm) < 0)
		return rm_error_set(ctx->err, "refine", 0, 0, "out of memory");
	return 0;
}
