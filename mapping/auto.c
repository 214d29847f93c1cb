/*
 * mapping/auto.c: the "auto" engine, a portfolio within the time budget.
 *
 * Candidates, in this order: TreeMatch with multilevel refinement (lookahead ties), the quality mode's
 * multilevel multisection (multilevel.c) on mesh-like graphs up to 16,384 ranks that are not Cartesian
 * grids (mesh_like: low, even degrees; on the 2D mesh of tests/bench/mapping it starts 8 % cheaper, on
 * random, power-law and stencil graphs it cost the others their time and lost 1-3 %; above
 * AUTO_LARGE_RANKS ranks it runs first, lighter, on every sparse graph but a grid, and first from that
 * many ranks on mesh-like ones: see ml_candidate; above AUTO_LARGE_RANKS ranks on dense graphs that are
 * not grids bisect runs first: see bisect_first),
 * the nested boxes of a Cartesian grid (tiling.c, only for graphs map_graph_cart built, on uniform targets), recursive
 * bipartitioning (bisect.c, strong on irregular trees and random graphs), the identity, two more
 * TreeMatch variants (cheap levels merged; finest level grouped, the rest bipartitioned), TreeMatch
 * with discovery-order ties, and Scotch when the budget leaves it AUTO_SCOTCH_MS_PER_RANK per rank
 * (Scotch takes seconds at 65,536 ranks). Above 16,384 ranks only TreeMatch, the tiling, the identity and Scotch
 * are considered: the others are slower and weaker there. A candidate starts only while the budget
 * left exceeds what the first one took (the first always runs, and so does the tiling: it takes
 * O(ranks x levels), 0.1 s at 1M ranks). Each is repaired into a bijection and brought to a local optimum
 * of refine.c's swaps, unless it starts AUTO_HOPELESS times worse than the best so far; the cheapest
 * then gets the rest of the budget for refine's iterated local search (up to AUTO_MLREFINE_MAX_RANKS
 * ranks on every level of mlrefine.c's V-cycle, which coarsens the mapping itself: at the default
 * budget powerlaw-1k of tests/bench/mapping 877,425 instead of 884,645, mesh2d-4k 2,379,188 instead of
 * 2,382,913, cg128 71,315 instead of 71,357), unless it is the tiling: on
 * 12 grids (tests/bench/SCALE.md) that search never improved a winning tiling, and spent the whole
 * budget on it (64x64x16 ranks: 1 s, against 0.08 s without it). auto is never worse than any
 * candidate it ran, and map_compute guarantees it is never worse than the identity.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"

#define AUTO_SCOTCH_MS_PER_RANK 0.08
#define AUTO_HOPELESS 1.2
#define AUTO_MESH_DEGREE 8.0
#define AUTO_MESH_SPREAD 0.2
#define AUTO_LARGE_RANKS 4096         /* above: the multilevel candidate on every sparse graph (ml_candidate) */
#define AUTO_LARGE_DEGREE 12.0        /* sparse: an average degree of at most this */
#define AUTO_MLREFINE_MAX_RANKS 16384 /* the final search on mlrefine.c's V-cycle up to here */
/* At exactly AUTO_LARGE_RANKS ranks, with a budget of at least this many times a job's default (the
 * offline default, mapping.h: 1.5 times; below twice, where the quality mode starts), the full form
 * with 48 initial partitions and up to 6 V-cycles (map_multilevel_strong): on tests/bench/mapping's
 * mesh2d-4k at 246 ms 2,343,691 on seeds 0-7 (1.0192 of SharedMap) and 2,347,778 on seeds 0-63, against
 * 2,357,025 and 2,367,664 with 16 and 4 at the former default of 165 ms (the budget alone: 2,365,344 on
 * seeds 0-31, against 2,366,602; RESULTS.md, ninth round). */
#define AUTO_STRONG_FACTOR MAP_STRONG_FACTOR /* (mapping.h) */

struct candidate {
	const char *name;
	map_engine_fn fn;
	int scotch, always; /* always: O(ranks) and rarely applicable, run even when the budget is spent */
	uint32_t max_ranks; /* skipped above (too slow there for what it brings) */
};

static int tm_lookahead(const map_ctx_t *ctx, uint32_t *perm)
{
	return tm_map(ctx, perm, 0, 1);
}

static int tm_discovery(const map_ctx_t *ctx, uint32_t *perm)
{
	return tm_map(ctx, perm, 1, 1);
}

static int tm_merged(const map_ctx_t *ctx, uint32_t *perm)
{
	return tm_map(ctx, perm, 2, 1);
}

static int tm_hybrid(const map_ctx_t *ctx, uint32_t *perm)
{
	return tm_map(ctx, perm, 3, 1);
}

/* Mesh-like: an average degree of at most AUTO_MESH_DEGREE and a spread of degrees (standard deviation)
 * under AUTO_MESH_SPREAD of it. */
static int mesh_like(const map_graph_t *g)
{
	double s = 0, s2 = 0, mean, var;
	uint32_t u;

	if (g->n < 2)
		return 0;
	for (u = 0; u < g->n; u++) {
		double d = (double)(g->xadj[u + 1] - g->xadj[u]);

		s += d, s2 += d * d;
	}
	mean = s / g->n, var = s2 / g->n - mean * mean;
	return mean > 0 && mean <= AUTO_MESH_DEGREE && var <= AUTO_MESH_SPREAD * AUTO_MESH_SPREAD * mean * mean;
}

/* Average degree at most AUTO_LARGE_DEGREE. */
static int sparse(const map_graph_t *g)
{
	return g->n > 0 && (double)g->xadj[g->n] <= AUTO_LARGE_DEGREE * g->n;
}

/* The quality mode's multilevel multisection (multilevel.c) with the request's seed, on mesh-like graphs
 * that are not Cartesian grids (the tiling places those); above AUTO_LARGE_RANKS ranks on every sparse
 * graph that is not a grid, in the lighter form that fits the default budget there (map_multilevel_fast:
 * tests/bench/mapping's mesh3d-16k and powerlaw-8k, neither mesh-like, start 5-10 % cheaper from it than
 * from TreeMatch). It runs first there, and on mesh-like graphs from AUTO_LARGE_RANKS ranks on (in its
 * full form at exactly that many, stronger with 1.5 times a job's default: AUTO_STRONG_FACTOR): on mesh2d-4k it wins, and first it leaves the final search the time
 * that TreeMatch and the other candidates took (80 of 164 ms, none of them won): 0.17 % cheaper on the
 * mean of 8 seeds, and on each (RESULTS.md, seventh round). */
static int ml_large(const map_graph_t *g)
{
	return !g->cart && g->n > AUTO_LARGE_RANKS && sparse(g);
}

/* Recursive bipartitioning first: above AUTO_LARGE_RANKS ranks on dense graphs (an average degree above
 * AUTO_LARGE_DEGREE) that are not Cartesian grids. On tests/bench/mapping's 27-point stencil of 8,640 ranks
 * bisect's result, at its local optimum, costs 2.6 % less than TreeMatch's, but each takes about half the
 * default budget (190 and 180 ms of 346): run second, bisect started only when TreeMatch left more than
 * its own time, which a few milliseconds decided (a budget cliff: 8.83 M at the default, 8.61 M from
 * 370 ms on; RESULTS.md, fifth and seventh rounds). Above 16,384 ranks bisect is skipped (max_ranks) and
 * TreeMatch runs first as before. */
static int bisect_first(const map_graph_t *g)
{
	return !g->cart && g->n > AUTO_LARGE_RANKS && !sparse(g);
}

static int ml_candidate(const map_ctx_t *ctx, uint32_t *perm)
{
	if (ctx->g->cart || !(mesh_like(ctx->g) || ml_large(ctx->g))) {
		errno = ENOENT;
		return -1;
	}
	if (ctx->g->n > AUTO_LARGE_RANKS)
		return map_multilevel_fast(ctx, ctx->opt.seed, perm);
	if (ctx->g->n == AUTO_LARGE_RANKS && ctx->default_ms > 0 &&
	    ctx->opt.time_budget_ms >= AUTO_STRONG_FACTOR * ctx->default_ms)
		return map_multilevel_strong(ctx, ctx->opt.seed, perm);
	return map_multilevel(ctx, ctx->opt.seed, perm);
}

static const struct candidate candidates[] = {
	{ "treematch", tm_lookahead, 0, 0, UINT32_MAX },       { "multilevel", ml_candidate, 0, 0, 16384 },
	{ "tiling", map_engine_tiling, 0, 1, UINT32_MAX },     { "bisect", map_engine_bisect, 0, 0, 16384 },
	{ "identity", map_engine_identity, 0, 0, UINT32_MAX }, { "treematch-merged", tm_merged, 0, 0, 16384 },
	{ "treematch-bisect", tm_hybrid, 0, 0, 16384 },        { "treematch-discovery", tm_discovery, 0, 0, 16384 },
	{ "scotch", map_engine_scotch, 1, 0, UINT32_MAX },
};

#define NCAND (sizeof(candidates) / sizeof(candidates[0]))

/* Runs one candidate into tmp and takes it to a local optimum, unless its raw cost is already
 * AUTO_HOPELESS times the best so far (best < 0: none yet); returns its cost (or -1). */
static double run_candidate(const map_ctx_t *ctx, const struct candidate *c, double best, uint32_t *tmp)
{
	map_ctx_t sub = *ctx;
	rm_error_t ignore;
	double raw;

	rm_error_clear(&ignore);
	sub.err = &ignore; /* a failing candidate is skipped, not reported */
	if (c->fn(&sub, tmp) < 0 || map_repair(ctx->g, ctx->t, tmp) < 0)
		return -1;
	raw = map_cost(ctx->g, ctx->t, tmp);
	if (best >= 0 && raw > AUTO_HOPELESS * best)
		return raw; /* local search would not bring it back: save the time for the others */
	if (map_refine_run(&sub, tmp, 0) < 0)
		return -1;
	return map_cost(ctx->g, ctx->t, tmp);
}

static int portfolio(const map_ctx_t *ctx, uint32_t *perm)
{
	uint32_t n = ctx->g->n, *tmp = malloc(((size_t)n + 1) * sizeof(*tmp));
	double best = -1, first_ms = -1;
	size_t i, j, won = NCAND, order[NCAND];

	if (!tmp) {
		errno = ENOMEM;
		return rm_error_set(ctx->err, "auto", 0, 0, "out of memory");
	}
	for (i = 0; i < NCAND; i++)
		order[i] = i;
	if (ml_large(ctx->g) || (n >= AUTO_LARGE_RANKS && !ctx->g->cart && mesh_like(ctx->g)))
		order[0] = 1, order[1] = 0; /* the multilevel candidate first: see ml_candidate */
	else if (bisect_first(ctx->g))      /* bisect, treematch, multilevel, tiling, then the rest */
		order[0] = 3, order[1] = 0, order[2] = 1, order[3] = 2;
	for (j = 0; j < NCAND; j++) {
		double cost, t0 = map_now_ms();

		i = order[j];

		if (candidates[i].always && !ctx->g->cart)
			continue; /* (the tiling needs a grid) */
		if (best >= 0 && t0 + first_ms >= ctx->deadline && !candidates[i].always)
			continue; /* not enough budget left for another candidate: keep what we have */
		if (n > candidates[i].max_ranks ||
		    (candidates[i].scotch && ctx->deadline - map_now_ms() < AUTO_SCOTCH_MS_PER_RANK * n))
			continue;
		cost = run_candidate(ctx, &candidates[i], best, tmp);
		if (first_ms < 0 && cost >= 0)
			first_ms = map_now_ms() - t0; /* what one candidate costs, about (the first that ran) */
		if (cost >= 0 && (best < 0 || cost < best)) {
			best = cost, won = i;
			memcpy(perm, tmp, (size_t)n * sizeof(*perm));
		}
	}
	if (won < NCAND && candidates[won].always) {
		free(tmp); /* a winning tiling, at its local optimum: see the opening comment */
		return 0;
	}
	if (best < 0) {
		free(tmp);
		return map_engine_identity(ctx, perm);
	}
	/* The iterated local search walks plateaus of equal cost; a walk that ends no cheaper than it began
	 * gives the best candidate back unchanged (an arbitrary equal-cost shuffle is not a better mapping). */
	memcpy(tmp, perm, (size_t)n * sizeof(*perm));
	if ((n <= AUTO_MLREFINE_MAX_RANKS ? map_mlrefine_run(ctx, perm, 1) : map_refine_run(ctx, perm, 1)) < 0) {
		free(tmp);
		return rm_error_set(ctx->err, "auto", 0, 0, "out of memory");
	}
	if (map_cost(ctx->g, ctx->t, perm) >= best * (1 - 1e-9))
		memcpy(perm, tmp, (size_t)n * sizeof(*perm));
	free(tmp);
	return 0;
}

/* Above MAP_QUALITY_FACTOR x the default budget: the portfolio at the default budget, then the quality
 * mode (quality.c) with the rest. */
int map_engine_auto(const map_ctx_t *ctx, uint32_t *perm)
{
	map_ctx_t d = *ctx;

	if (ctx->default_ms <= 0 || ctx->opt.time_budget_ms < MAP_QUALITY_FACTOR * ctx->default_ms ||
	    ctx->opt.time_budget_ms < MAP_QUALITY_MIN_MS)
		return portfolio(ctx, perm);
	d.opt.time_budget_ms = ctx->default_ms;
	d.deadline = map_now_ms() + ctx->default_ms;
	if (portfolio(&d, perm) < 0)
		return -1;
	return map_auto_quality(ctx, perm);
}
