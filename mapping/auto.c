/*
 * mapping/auto.c: the "auto" engine, a portfolio within the time budget.
 *
 * Candidates, in order: TreeMatch, the identity, and Scotch when the graph is small enough for it to
 * answer quickly (Scotch takes seconds at 65,536 ranks). Each candidate is repaired into a bijection
 * and refined (refine.c) with its share of the remaining budget; the cheapest mapping is kept, the
 * identity included, so auto is never worse than any candidate it ran.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"

#define AUTO_SCOTCH_MAX_RANKS 16384

struct candidate {
	const char *name;
	map_engine_fn fn;
	uint32_t max_ranks;
};

static const struct candidate candidates[] = {
	{ "treematch", map_engine_treematch, UINT32_MAX },
	{ "identity", map_engine_identity, UINT32_MAX },
	{ "scotch", map_engine_scotch, AUTO_SCOTCH_MAX_RANKS },
};

#define NCAND (sizeof(candidates) / sizeof(candidates[0]))

/* Runs one candidate into tmp and refines it until sub_deadline; returns its cost (or -1). */
static double run_candidate(const map_ctx_t *ctx, const struct candidate *c, double sub_deadline, uint32_t *tmp)
{
	map_ctx_t sub = *ctx;
	rm_error_t ignore;

	rm_error_clear(&ignore);
	sub.err = &ignore; /* a failing candidate is skipped, not reported */
	sub.deadline = sub_deadline;
	if (c->fn(&sub, tmp) < 0 || map_repair(ctx->g, ctx->t, tmp) < 0)
		return -1;
	if (map_refine_run(&sub, tmp) < 0)
		return -1;
	return map_cost(ctx->g, ctx->t, tmp);
}

int map_engine_auto(const map_ctx_t *ctx, uint32_t *perm)
{
	uint32_t n = ctx->g->n, *tmp = malloc(((size_t)n + 1) * sizeof(*tmp));
	double best = -1;
	size_t i, left = 0;

	if (!tmp) {
		errno = ENOMEM;
		return rm_error_set(ctx->err, "auto", 0, 0, "out of memory");
	}
	for (i = 0; i < NCAND; i++)
		left += n <= candidates[i].max_ranks;
	for (i = 0; i < NCAND; i++) {
		double now = map_now_ms(), share, cost;

		if (n > candidates[i].max_ranks)
			continue;
		share = (ctx->deadline - now) / (double)(left ? left : 1);
		left--;
		cost = run_candidate(ctx, &candidates[i], now + (share > 0 ? share : 0), tmp);
		if (cost >= 0 && (best < 0 || cost < best)) {
			best = cost;
			memcpy(perm, tmp, (size_t)n * sizeof(*perm));
		}
	}
	free(tmp);
	if (best < 0)
		return map_engine_identity(ctx, perm);
	return 0;
}
