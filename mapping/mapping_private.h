/*
 * mapping/mapping_private.h: internals shared by the files of mapping/.
 *
 * graph.c          graph allocation, edge lists -> CSR, metrics, clocks
 * cart.c           Cartesian specs and their halo-exchange graphs
 * pattern_mtx.c    Matrix Market loader and format detection (map_graph_load)
 * pattern_dense.c  TreeMatch dense text loader
 * cost.c           cost, breakdown, permutation checks and the bijection repair
 * perm.c           permutation files
 * engine.c         the engine table and map_compute (identity guard, budget, timing)
 * map_guard.c      map_compute_guarded: map_compute in a child process under limits (rm_child)
 * ties.c           the tie rule: among equal-cost mappings, rank order follows slot order
 * treematch.c      TreeMatch: virtual tree, bottom-up grouping, aggregation, top-down placement
 * tm_group.c       TreeMatch's greedy grouping of one level and swaps between groups
 * tm_kl.c          Kernighan-Lin passes between pairs of groups
 * tm_types.c       shapes of positions for irregular targets and spare slots (typed grouping)
 * scotch.c         Scotch static mapping in its own context
 * target_scotch.c  Scotch target architectures from topo_target_t (target_scotch.h)
 * refine.c         swap-based local search and iterated local search
 * bisect.c         recursive bipartitioning along the target tree (greedy growing + FM)
 * linkload.c       loads of the links of known routes (dragonfly), and swaps that lower the busiest
 * auto.c           portfolio of the above within a time budget; above the default budget, quality.c
 * quality.c        auto's quality mode: multilevel constructions and local searches on threads
 * multilevel.c     hierarchical multisection by multilevel k-way partitioning
 */
#ifndef RANKMAP_MAPPING_PRIVATE_H
#define RANKMAP_MAPPING_PRIVATE_H

#include <stdint.h>
#include <stdio.h>

#include "mapping.h"

/* Default time budget of "refine" and "auto" (milliseconds). */
#define MAP_DEFAULT_BUDGET_MS 1000.0
/* Above this many ranks nothing dense (n x n) may be allocated. */
#define MAP_DENSE_MAX 4096

/* Everything an engine sees. perm has g->n entries; the engine writes a mapping into it (it need not be
 * a bijection: map_compute repairs it) and returns 0 or -1 (err set). */
typedef struct map_ctx {
	const map_graph_t *g;
	const topo_target_t *t;
	map_options_t opt; /* defaults filled in */
	double deadline;   /* thread CPU time (map_now_ms) after which refining stops */
	double default_ms; /* the default budget for this graph (auto's quality mode starts above it) */
	rm_error_t *err;
} map_ctx_t;

typedef int (*map_engine_fn)(const map_ctx_t *ctx, uint32_t *perm);

/* Engines. The identity is inline: the table (engine.c) and the engines that fall back on it (auto.c,
 * treematch.c) each use it, and none of them calls the others' files for it. */
static inline int map_engine_identity(const map_ctx_t *ctx, uint32_t *perm)
{
	uint32_t i;

	for (i = 0; i < ctx->g->n; i++)
		perm[i] = i;
	return 0;
}
int map_engine_treematch(const map_ctx_t *ctx, uint32_t *perm);
int map_engine_scotch(const map_ctx_t *ctx, uint32_t *perm);
int map_engine_refine(const map_ctx_t *ctx, uint32_t *perm);
int map_engine_auto(const map_ctx_t *ctx, uint32_t *perm);
int map_engine_bisect(const map_ctx_t *ctx, uint32_t *perm);
/* tiling.c: nested boxes of a Cartesian grid (g->cart) on a uniform target of its size; an error
 * (EINVAL) for other graphs and targets. */
int map_engine_tiling(const map_ctx_t *ctx, uint32_t *perm);

/* linkload.c: lowers the busiest link's load (t->links) by swaps that raise the cost by at most 0.1 % in
 * all; the input back when it cannot. Its work is bounded in proportion to budget_ms (the caller's time
 * budget; deterministic: counted in visits, not timed). A no-op without t->links. 0, or -1 (ENOMEM). */
int map_linkload_refine(const map_graph_t *g, const topo_target_t *t, uint32_t *perm, double budget_ms);
/* ... and what its search did: visits made, and the most it could make (both 0 where no search ran). A
 * search stops after the step that reaches max_work, so work exceeds it by at most one step (one
 * exchange's edges, twice, and the links once). */
typedef struct {
	uint64_t work, max_work;
} map_ll_stats_t;
int map_linkload_refine_stats(const map_graph_t *g, const topo_target_t *t, uint32_t *perm, double budget_ms,
			      map_ll_stats_t *st);

/* CPU time of the calling thread in milliseconds: budgets and deadlines are counted in it, so that a
 * loaded machine (or other threads of rankmapd) does not change what the search does. */
double map_now_ms(void);
/* Wall clock (monotonic) in milliseconds, for map_result_t.time_ms. */
double map_wall_ms(void);

/* graph.c: an empty graph with n vertices and room for nadj adjacency entries (NULL on failure). */
map_graph_t *map_graph_alloc(uint32_t n, uint64_t nadj, int with_metrics);
/* Builds a graph from edges with two optional metric arrays (bytes, msgs, may be NULL); w is the
 * weight (may be NULL when metrics are given: then w = metric chosen). Errors (an edge out of range, a
 * bad weight, weights whose total is not a finite double) name source. */
map_graph_t *map_graph_from_edges_metric(uint32_t n, size_t nedges, const uint32_t *src, const uint32_t *dst,
					 const double *w, const double *bytes, const double *msgs, map_metric_t metric,
					 const char *source, rm_error_t *err);

/* pattern_dense.c: loads TreeMatch's dense format from an open file (path for errors). Nothing is
 * sized by N before N rows are read, so memory follows the file's content; N is at most max_ranks. */
map_graph_t *map_pattern_dense_load(FILE *f, uint32_t max_ranks, const char *path, rm_error_t *err);
/* pattern_mtx.c: loads a Matrix Market coordinate file from an open file of size bytes: the declared
 * N must be at most max_ranks (itself at most MAP_MAX_RANKS) and NNZ at most what size bytes can
 * hold, checked before any allocation. */
map_graph_t *map_pattern_mtx_load(FILE *f, uint64_t size, uint32_t max_ranks, const char *path, map_metric_t metric,
				  rm_error_t *err);

/* cost.c: turns any perm (duplicates, out-of-range slots) into a bijection onto distinct slots, keeping
 * the first holder of each slot and moving the others to the free slot closest to their neighbours'
 * slots (or the lowest free slot). Returns the number of ranks moved, -1 on allocation failure. */
long map_repair(const map_graph_t *g, const topo_target_t *t, uint32_t *perm);
/* Cost contribution of rank r placed on slot s, other ranks as in perm (slot_rank: inverse, UINT32_MAX
 * for empty slots); edges to `skip` are ignored. */
double map_rank_cost(const map_graph_t *g, const topo_target_t *t, const uint32_t *perm, uint32_t r, uint32_t s,
		     uint32_t skip);

/* ties.c: moves perm (a bijection), at no extra cost, to a mapping whose rank order follows the slot order:
 * each level's groups sorted by their smallest rank, each sort kept when it costs no more. Returns the
 * number of levels sorted, -1 (errno ENOMEM) on allocation failure (perm unchanged). */
long map_order_ties(const map_graph_t *g, const topo_target_t *t, uint32_t *perm);

/* treematch.c: TreeMatch with a tie-breaking mode (0: lookahead, 1: discovery order, 2: lookahead on a
 * tree whose cheap levels are merged into their children, 3: as 2 for the finest level only, the
 * coarse units then placed by recursive bipartitioning) and, when
 * mlrefine, multilevel refinement of the positions of every coarse level on the way down. */
int tm_map(const map_ctx_t *ctx, uint32_t *perm, int mode, int mlrefine);

/* multilevel.c: a mapping by hierarchical multisection (each tree node's ranks split among its children
 * by a multilevel k-way partition, exact sizes), deterministic for seed; perm is a bijection onto
 * slots. Returns 0, or -1: errno ENOMEM, or ETIMEDOUT past ctx->deadline (checked between partitions). */
int map_multilevel(const map_ctx_t *ctx, unsigned seed, uint32_t *perm);
/* map_multilevel for auto's default portfolio above 4,096 ranks, where its budget is too short for 16
 * initial partitions and 4 V-cycles: 12 and 3, coarsening by label propagation. */
int map_multilevel_fast(const map_ctx_t *ctx, unsigned seed, uint32_t *perm);
/* map_multilevel with 48 initial partitions instead of 16, 6 V-cycles instead of 4 (the last 2 only
 * while it has used less than 70 % of its time to the deadline) and coarsening by label propagation: auto's at 4,096 ranks when
 * its budget is at least 1.45 times a job's default (the offline default there: 1.5 times). */
int map_multilevel_strong(const map_ctx_t *ctx, unsigned seed, uint32_t *perm);
/* The same with tries initial partitions of each coarsest graph (0: ML_INIT_TRIES, 24), nvcycles
 * V-cycles on each tree node's split (multilevel.c: vcycles) and, lp set, coarsening by label
 * propagation instead of matching: the quality mode's construction is (0, MAP_QUALITY_VCYCLES, 1);
 * map_multilevel, auto's default portfolio's, is (16, 4, 0): as fast as (24, 0, 0), and cheaper. */
int map_multilevel_vc(const map_ctx_t *ctx, unsigned seed, int tries, int nvcycles, int lp, uint32_t *perm);
/* map_multilevel_vc with flow refinement (ml_flow.c) chosen: flow 1 on, 0 off, -1 the default
 * (map_multilevel_vc's: on from ML_FLOW_MIN_RANKS ranks, 4,096, so that a job's first call below that
 * runs as before). */
int map_multilevel_flow(const map_ctx_t *ctx, unsigned seed, int tries, int nvcycles, int lp, int flow, uint32_t *perm);
/* map_multilevel_vc with each tree node's split made reps times (each a fresh multilevel k-way partition
 * and its nvcycles V-cycles), the smallest cut kept: the quality mode's stronger form (quality.c). */
int map_multilevel_reps(const map_ctx_t *ctx, unsigned seed, int tries, int nvcycles, int reps, int lp, uint32_t *perm);
/* The quality mode's V-cycles per tree node's split (quality.c). 8 instead of 4 (tests/bench/mapping,
 * RESULTS.md, eighth round): at the best peer's CPU time mesh3d-16k 0.9 % cheaper (2 seeds), powerlaw-1k
 * 0.3 % (4 seeds), powerlaw-8k 0.1 % (1 seed), rand1024 0.1 % (6 seeds), mesh2d-4k equal (4 seeds); at
 * rankmapctl map's offline default of 100 ms, rand1024 0.35 % and powerlaw-1k 0.2 % cheaper (5 seeds). */
#define MAP_QUALITY_VCYCLES 8
/* For tests: one level of multilevel.c's label-propagation coarsening of g (clusters of at most maxc
 * ranks): cmap[rank] = its cluster, *nc clusters, *cw their total weight (ranks), *cew the coarse
 * graph's total edge weight (both directions; -1 when it shrank by under 10 % and was not built).
 * Returns 0, or -1 when out of memory. */
int map_ml_lp_level(const map_graph_t *g, unsigned seed, uint32_t maxc, uint32_t *cmap, uint32_t *nc, uint64_t *cw,
		    double *cew);
/* quality.c: the form of the quality mode's constructions for a budget of left ms and a plain
 * construction's estimated CPU time build: QUALITY_SPLIT_REPS (4) partitions of each split when left
 * holds 1.4 times four items of 1.25 times the stronger form's (2.5 times build), else 1 (the plain
 * form; also when a first round of the stronger form found nothing). */
int map_quality_reps(double left, double build);
/* quality.c: improves perm (a bijection, auto's result at the default budget) with the rest of the
 * budget (ctx->deadline, CPU time of all threads together); never returns a costlier perm. Returns 0,
 * or -1 (err set) when out of memory. */
int map_auto_quality(const map_ctx_t *ctx, uint32_t *perm);
/* quality.c: an item's share of a round's CPU time (ms), given left ms for ni items, a construction's
 * build ms and first, an item's share of the first round without a plan (its left / ni): left / ni, or
 * the plan, first / QUALITY_PLAN_ROUNDS but at least QUALITY_BUILD_FIT x build, where left / ni is more
 * than QUALITY_PLAN_LAST x that (*capped then 1, else 0; the last round takes what is left). */
double map_quality_share(double left, size_t ni, double build, double first, int *capped);

/* refine.c: improves perm in place (must be a bijection) until no gain or the deadline, then (kicks > 0)
 * by iterated local search, kicks + 1 random moves a step (1: two, the engines' own strength). Returns the number of improving moves, -1 on allocation failure. */
long map_refine_run(const map_ctx_t *ctx, uint32_t *perm, int kicks);
/* mlrefine.c: map_refine_run on every level of a V-cycle that coarsens the mapping itself (pairs of
 * ranks within a lowest group), coarsest first; on targets it does not fit, map_refine_run alone. Same
 * contract as map_refine_run. */
long map_mlrefine_run(const map_ctx_t *ctx, uint32_t *perm, int kicks);

#endif
