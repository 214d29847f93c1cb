/*
 * mapping/multilevel.c: hierarchical multisection by multilevel k-way partitioning, the construction of
 * auto's quality mode (quality.c).
 *
 * The target is a tree, so a mapping's cost is the sum over the tree's levels of the traffic cut at
 * that level times the distance step there: placing ranks well is cutting the graph well at each level,
 * top down. Each tree node (a level and its contiguous range of slots) splits its ranks among its
 * children, parts of exactly the sizes the children hold (fewer ranks than slots: the first children
 * are filled first, so the job stays compact), by a multilevel k-way partition of the graph its ranks
 * induce; each child then recurses. This is hierarchical multisection (Schulz and Woydt, SharedMap,
 * 2024; von Kirchbach, Schulz and Traeff, "Better process mapping and sparse quadratic assignment",
 * SEA 2017 / JEA 2020, whose top-down construction it is), our implementation:
 *
 *  - a node's k-way split is recursive bisection: the children are halved, the ranks bisected into
 *    exactly the two halves' sizes, each side split again, then k-way FM over the node's graph at exact
 *    sizes polishes across the bisections' boundaries;
 *  - each bisection (and k-way split of 2) is multilevel: heavy-edge matching in a seeded random order
 *    (or, in the quality mode, size-constrained label propagation: lp_coarsen),
 *    the rating w(u,v) / (c(u) c(v)) (c the ranks a coarse vertex holds) so that clusters stay even, no
 *    cluster above an eighth of the smallest part (the quality mode's on a graph with hubs:
 *    a 32nd, ml_quality_cluster_div), until the graph is small (ML_COARSE_PER_PART x parts,
 *    and at least ML_COARSE_MIN vertices) or stops shrinking;
 *  - initial partition of the coarsest graph: greedy growing of each part by strongest connection,
 *    ML_INIT_TRIES seeded tries each balanced and refined by FM, the smallest cut kept;
 *  - uncoarsening: at every level, sizes first (diffusion: an overfull part's excess moves downhill to
 *    neighbouring parts, best gain first), then greedy k-way moves and k-way Fiduccia-Mattheyses
 *    (negative moves too, best prefix kept, a pass ending after ML_FM_STALL moves without a new best)
 *    within ML_IMBALANCE of the sizes; at the finest level within ML_FINE_IMBALANCE, then exact sizes
 *    (the excess diffused away, least loss first), FM again within one rank of them (its pairs of moves
 *    are exchanges) and exact sizes again (exact_fm). Before, the finest level's FM worked within one
 *    rank only, where a move must wait for its partner: the construction alone on tests/bench/mapping,
 *    0.5 % cheaper on mesh2d-4k (mean of 24 seeds) and 0.85 % on mesh3d-16k (6 seeds), for 9-11 % more
 *    time (RESULTS.md, eighth round). The relaxed balance is the usual one of multilevel partitioners (Sanders and Schulz,
 *    "Engineering multilevel graph partitioning algorithms", ESA 2011, refine within an imbalance
 *    epsilon); the slots here need exact sizes, hence the repair and the second FM.
 *    From ML_FLOW_MIN_RANKS ranks (4,096: a job's first call below is unchanged), on every level of at
 *    least ML_FLOW_MIN_LEVEL vertices, flow refinement after FM (ml_flow.c: minimum cuts of band regions
 *    between pairs of parts, KaFFPa's and Mt-KaHyPar's flows) within the level's bounds; at a finest
 *    level, FM at exact sizes but for one and flows within ML_IMBALANCE (flow_level) instead of
 *    ML_FINE_IMBALANCE; and after ml_kway's k-way FM across the bisections (flow_level).
 *    Measured (tests/bench/mapping, auto at the default budget, RESULTS.md's eighth round): 1.4 %
 *    cheaper on mesh2d-4k and 1.3 % on mesh3d-16k (means of 8 seeds), 0.3 % on powerlaw-8k (4 seeds),
 *    the construction 1.5-2x slower.
 *  - V-cycles: each node's k-way split is then run again ML_DEFAULT_VCYCLES times as a V-cycle:
 *    coarsening that never joins two parts of the split, the split itself as the coarsest level's
 *    partition, k-way FM on the way up; a V-cycle is kept only when it cuts less. Measured
 *    (tests/bench/mapping): in the quality mode at the best peer's CPU time, 0.6 % cheaper on
 *    rand1024, 0.8 % on powerlaw-1k, 0.1 % on mesh2d-4k; in auto's default portfolio, with 16 initial
 *    partitions instead of 24 to keep its time, 2.3 % cheaper on mesh2d-4k (mean of 5 seeds).
 *
 *  - in the quality mode's stronger form, each node's split (its k-way partition and V-cycles) is made
 *    several times, each from the rng where the last left it, and the smallest cut kept (split): a
 *    multi-start of the whole multilevel partition, which varies far more than its V-cycles improve.
 *
 * The swaps between the parts that exact sizes forbid as moves are left to refine.c's hierarchy-aware
 * swap search, which quality.c runs on the result. Time O((ranks + edges) x levels x passes), memory
 * O(ranks + edges). Deterministic for a seed without a deadline; with one, the lighter and stronger forms'
 * extra V-cycles and the flows' pairs stop at 70 % of the time (ML_STRONG_SHARE), so that how many run
 * depends on the machine's speed. No code is taken from those projects.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ml_private.h"

#define ML_COARSE_PER_PART 24
#define ML_COARSE_MIN 160 /* the coarsest graph keeps at least this many vertices */
#define ML_CLUSTER_DIV 8  /* no cluster above 1/8 of the smallest part (matching, auto's portfolio) */
#define ML_INIT_TRIES 24  /* the quality mode's; auto's default portfolio: ML_DEFAULT_TRIES */
#define ML_DEFAULT_TRIES 16
#define ML_DEFAULT_VCYCLES 4
/* map_multilevel_fast's (auto's default portfolio above 4,096 ranks): 12 and 3, paid by ML_FM_STALL
 * (ml_fm.c), about half the default budget there; with 8 and 2 auto's default gave on tests/bench/mapping
 * mesh3d-16k 20,552,434 (12 seeds) and powerlaw-8k 13,748,067 (6 seeds), with 12 and 3 20,387,336 and
 * 13,708,575 (RESULTS.md, eighth round). The first V-cycle always, the other two only while the
 * construction has used less than ML_STRONG_SHARE of its time: with flow refinement on (from 4,096 ranks)
 * all three took powerlaw-8k's construction to 387 CPU ms, past a job's default of 328 ms, where auto
 * then kept TreeMatch's mapping (14,272,600 on seeds 0-3, 1.053 of SharedMap); with the guard 13,771,500
 * (1.016), and at rankmapctl map's offline default (492 ms) the same as before (13,707,025 against
 * 13,703,775); mesh3d-16k equal at both (20,343,375 / 20,341,900 at 655 ms, 4 seeds). */
/* map_multilevel_strong's tries and V-cycles (auto at 4,096 ranks with 1.5 times a job's default, the
 * offline one): 48 initial partitions and 6 V-cycles, the last 2 only while the construction has used
 * less than ML_STRONG_SHARE of its time to the deadline (so that a slower machine drops them on the
 * later tree nodes instead of running past the deadline, where auto would keep TreeMatch's). On
 * tests/bench/mapping's mesh2d-4k at 246 ms (RESULTS.md, ninth round), means of seeds 0-63: 16 and 4
 * 2,367,664 at 165 ms, 48 and 4 2,353,145, 48 and 6 2,347,403; the construction takes 112, 165 and 192
 * CPU ms here. Its coarsening is label propagation (the quality mode's, ml_lp_coarsen) since the tenth
 * round: 1.0179 of SharedMap on seeds 0-39 instead of 1.0211 (2,340,622 against 2,347,994), and the
 * construction takes 150 CPU ms instead of 180 (seeds 0-2), further from the deadline. */
#define ML_STRONG_TRIES 48
#define ML_STRONG_XVCYCLES 2
#define ML_STRONG_SHARE 0.7
#define ML_FAST_TRIES 12
#define ML_FAST_VCYCLES 3
#define ML_IMBALANCE 0.03
#define ML_FLOW_MIN_RANKS 4096 /* flow refinement by default from this many ranks (map_multilevel_vc) */
#define ML_FLOW_MIN_LEVEL 64   /* flow refinement on levels of at least this many vertices */
#define ML_FINE_IMBALANCE 0.03 /* the finest level's FM first, then exact sizes (exact_fm) */

double ml_fine_imbalance = ML_FINE_IMBALANCE;
/* The quality mode's construction (map_multilevel_flow with label propagation) on a graph with hubs
 * (has_hubs): no cluster above 1/32 of the smallest part of the partition being computed, instead of
 * ML_CLUSTER_DIV's 1/8. Label propagation
 * on a power-law graph grows clusters around the hubs up to the limit, and a bisection's halves are
 * large (4,096 ranks at the top of tests/bench/mapping's powerlaw-8k, clusters of up to 513): the coarse
 * graph of the first bisection had 36 vertices, the split's initial partitions were made of a few hub
 * neighbourhoods, and neither FM, flows nor V-cycles recovered from them. Measured with the quality
 * mode's construction alone (24 initial partitions, 4 V-cycles, flows), top-level 8-way cut of powerlaw-8k
 * (kaffpa strong with --imbalance=0: 740,055 and 738,999 on seeds 0 and 1), means of seeds 0-3 / 4-7:
 * 1/8 761,082 / 762,542, 1/16 763,507, 1/24 748,138, 1/32 747,115 / 748,071, 1/40 746,765, 1/64
 * 750,963; the whole construction's cost 13,736,834 / 13,743,647 at 1/8 and 13,626,437 / 13,654,774 at
 * 1/32 (-0.8 % / -0.65 %), its CPU time 436 -> 524 ms. mesh3d-16k's top-level cut 378,696 -> 373,566
 * (cost 20,358,113 -> 20,339,722), rand1024 88,775 -> 87,922, mesh2d-4k's cost 2,377,371 -> 2,369,831
 * (seeds 0-3). The quality mode (auto at 3 s), seeds 0-3: powerlaw-8k 13,688,651 -> 13,592,246 (-0.70 %;
 * at 10 s, seeds 0-1, -0.66 %); but mesh2d-4k, seeds 0-11, 2,306,337 -> 2,320,737 (+0.6 %), hence only
 * on graphs with hubs, where the large clusters are hub neighbourhoods. Only tests change it, to
 * compare. */
#define ML_HUB_RATIO 8
uint32_t ml_quality_cluster_div = 32;
#define ML_VCYCLE_MIN_PER_PART ML_COARSE_PER_PART /* V-cycles only where the split's graph coarsens */

/* The finest level after its FM within ML_FINE_IMBALANCE: exact sizes (the excess diffused away, least
 * loss first), FM within one vertex of them (its pairs of moves are exchanges), exact sizes again. Without
 * again, the exact sizes only (a finest level where flows ran, and the end of ml_kway). */
static int exact_fm(const struct lgraph *h, uint32_t k, const uint32_t *tgt, int again, uint32_t *part, double *wt,
		    double *cap, double *lo, double *conn, uint32_t *tl)
{
	uint32_t i, pass;

	for (pass = 0; pass < (again ? 2u : 1u); pass++) {
		if (pass) {
			ml_bounds(h, k, tgt, 0, part, wt, cap, lo);
			ml_widen(k, wt, cap, lo);
			if (ml_kway_fm(h, k, cap, lo, part, wt, conn, tl) < 0)
				return -1;
		}
		for (i = 0; i < k; i++)
			cap[i] = tgt[i];
		if (ml_diffuse(h, k, tgt, cap, part, wt, conn, tl) < 0 || ml_balance(h, k, tgt, part, wt, conn, tl) < 0)
			return -1;
	}
	return 0;
}

/* Flow refinement (ml_flow.c) of a partition at exact sizes but for one (a finest level's, and ml_kway's
 * after its k-way FM across the bisections), where a band would hold a vertex or two: within
 * ML_IMBALANCE, then sizes and FM again at exact sizes but for one, the result kept only when it cuts less
 * than before (saved: scratch of h->n). */
static int flow_level(struct ml *M, const struct lgraph *hl, uint32_t k, const uint32_t *tgt, uint32_t *part,
		      double *wt, double *cap, double *lo, double *conn, uint32_t *tl, uint32_t *saved)
{
	double c0;
	int r;

	memcpy(saved, part, (size_t)hl->n * sizeof(*part));
	c0 = ml_cut_of(hl, part);
	ml_bounds(hl, k, tgt, ML_IMBALANCE, part, wt, cap, lo);
	ml_widen(k, wt, cap, lo);
	if ((r = ml_flow_refine(M, hl, k, cap, lo, part, wt)) < 0)
		return -1;
	if (r > 0) {
		ml_bounds(hl, k, tgt, 0, part, wt, cap, lo);
		if (ml_diffuse(hl, k, tgt, cap, part, wt, conn, tl) < 0)
			return -1;
		ml_widen(k, wt, cap, lo);
		if (ml_kway_fm(hl, k, cap, lo, part, wt, conn, tl) < 0)
			return -1;
		if (ml_cut_of(hl, part) >= c0)
			memcpy(part, saved, (size_t)hl->n * sizeof(*part));
	}
	ml_bounds(hl, k, tgt, 0, part, wt, cap, lo);
	ml_widen(k, wt, cap, lo);
	return 0;
}

/* Multilevel k-way partition of h into parts of exactly tgt[0..k-1] vertices (sum = h->n). With init (a
 * partition of h at those sizes), a V-cycle instead: coarsening matches only vertices of one part of
 * init, so that init projects exactly onto the coarsest graph, where it replaces the initial
 * partitioning, and the uncoarsening refines it with a fresh hierarchy of clusters (the iterated
 * multilevel scheme of Walshaw, "Multilevel refinement for combinatorial optimisation problems", Annals
 * of Operations Research 131, 2004; the V-cycles of Sanders and Schulz, "Engineering multilevel graph
 * partitioning algorithms", ESA 2011). init may be part. */
static int ml_partition(struct ml *M, struct lgraph *h, uint32_t k, const uint32_t *tgt, const uint32_t *init,
			uint32_t *part)
{
	struct lgraph *lv[64];
	uint32_t *cmaps[64], *cps[64], nl = 1, i, mint = UINT32_MAX, *tl = NULL, *best = NULL, *front = NULL,
				       *ord = NULL;
	double *wt = NULL, *cap = NULL, *lo = NULL, *conn = NULL, bestcut = -1;
	int rc = -1, stop = 0, l, try;

	lv[0] = h;
	cps[0] = NULL;
	if (init) { /* (a copy: init may be part, which the levels overwrite) */
		if (!(cps[0] = malloc(((size_t)h->n + 1) * sizeof(uint32_t)))) {
			M->oom = 1;
			return -1;
		}
		memcpy(cps[0], init, (size_t)h->n * sizeof(uint32_t));
	}
	for (i = 0; i < k; i++)
		if (tgt[i] < mint)
			mint = tgt[i];
	while (nl < 64 && lv[nl - 1]->n > ML_COARSE_PER_PART * k && lv[nl - 1]->n > ML_COARSE_MIN && mint >= 3) {
		if (map_now_ms() > M->deadline) {
			M->late = 1;
			goto out;
		}
		cmaps[nl - 1] = malloc((size_t)lv[nl - 1]->n * sizeof(uint32_t));
		if (!cmaps[nl - 1]) {
			M->oom = 1;
			break;
		}
		lv[nl] = (M->lp ? ml_lp_coarsen : ml_coarsen)(M, lv[nl - 1], mint / M->cdiv + 1, cps[nl - 1],
							      cmaps[nl - 1], &stop);
		if (!lv[nl]) {
			free(cmaps[nl - 1]);
			break;
		}
		cps[nl] = NULL;
		if (init) { /* init on the coarse graph (each cluster lies in one part) */
			uint32_t u;

			if (!(cps[nl] = malloc(((size_t)lv[nl]->n + 1) * sizeof(uint32_t)))) {
				ml_lg_free(lv[nl]), free(cmaps[nl - 1]);
				M->oom = 1;
				break;
			}
			for (u = 0; u < lv[nl - 1]->n; u++)
				cps[nl][cmaps[nl - 1][u]] = cps[nl - 1][u];
		}
		nl++;
	}
	if (M->oom)
		goto out;
	{
		struct lgraph *hc = lv[nl - 1];
		size_t sz = (size_t)hc->n > k ? (size_t)hc->n : k;

		wt = malloc((size_t)k * sizeof(*wt));
		cap = malloc((size_t)k * sizeof(*cap));
		lo = malloc((size_t)k * sizeof(*lo));
		conn = calloc(sz > h->n ? sz : h->n, sizeof(*conn));
		tl = malloc(((size_t)h->n + k) * sizeof(*tl));
		front = malloc(((size_t)h->n + 1) * sizeof(*front));
		best = malloc(((size_t)h->n + 1) * sizeof(*best));
		ord = malloc(((size_t)h->n + 1) * sizeof(*ord));
		if (!wt || !cap || !lo || !conn || !tl || !front || !best || !ord)
			goto out;
		for (try = 0; try < (init ? 1 : M->tries) && (try == 0 || map_now_ms() <= M->deadline); try++) {
			double c;

			if (init)
				memcpy(part, cps[nl - 1], (size_t)hc->n * sizeof(*part));
			else
				ml_grow(M, hc, k, tgt, part, conn, front);
			memset(conn, 0, (size_t)k * sizeof(*conn));
			ml_bounds(hc, k, tgt, ML_IMBALANCE, part, wt, cap, lo);
			if (ml_diffuse(hc, k, tgt, cap, part, wt, conn, tl) < 0)
				goto out;
			ml_widen(k, wt, cap, lo);
			if (ml_kway_fm(hc, k, cap, lo, part, wt, conn, tl) < 0)
				goto out;
			c = ml_cut_of(hc, part);
			if (bestcut < 0 || c < bestcut) {
				bestcut = c;
				memcpy(best, part, (size_t)hc->n * sizeof(*best));
			}
		}
		memset(conn, 0, (size_t)k * sizeof(*conn));
		memcpy(part, best, (size_t)hc->n * sizeof(*part));
	}
	for (l = (int)nl - 1; l >= 0; l--) {
		const struct lgraph *hl = lv[l];
		/* flows on this level; the finest level's FM then works at exact sizes but for one, and its flows
		 * within ML_IMBALANCE (flow_level): the finest level within ml_fine_imbalance and then flows
		 * within it was 0.5 % costlier on mesh2d-4k at auto's default (8 seeds, RESULTS.md) */
		int flows = M->flow && hl->n >= (uint32_t)M->flow;
		double fine = flows ? 0 : ml_fine_imbalance;

		if (map_now_ms() > M->deadline) { /* (every level: the budget holds within a level's time) */
			M->late = 1;
			goto out;
		}
		if (l < (int)nl - 1) { /* project the partition of level l+1 onto level l */
			uint32_t u;

			for (u = 0; u < hl->n; u++)
				best[u] = part[cmaps[l][u]];
			memcpy(part, best, (size_t)hl->n * sizeof(*part));
		}
		/* sizes first (the finest level: within ML_FINE_IMBALANCE, then exact; see below), then the cut */
		ml_bounds(hl, k, tgt, l ? ML_IMBALANCE : fine, part, wt, cap, lo);
		if (ml_diffuse(hl, k, tgt, cap, part, wt, conn, tl) < 0)
			goto out;
		ml_widen(k, wt, cap, lo);
		ml_shuffle(M, ord, hl->n);
		ml_kway_pass(hl, k, cap, ord, part, wt, conn, tl);
		if (ml_kway_fm(hl, k, cap, lo, part, wt, conn, tl) < 0)
			goto out;
		if (flows && l > 0 && ml_flow_refine(M, hl, k, cap, lo, part, wt) < 0)
			goto out;
		if (flows && l == 0 && flow_level(M, hl, k, tgt, part, wt, cap, lo, conn, tl, best) < 0)
			goto out;
		if (l == 0 && exact_fm(hl, k, tgt, fine > 0, part, wt, cap, lo, conn, tl) < 0)
			goto out;
	}
	rc = 0;
out:
	free(cps[0]);
	for (i = 1; i < nl; i++)
		ml_lg_free(lv[i]), free(cmaps[i - 1]), free(cps[i]);
	free(wt), free(cap), free(lo), free(conn), free(tl), free(best), free(front), free(ord);
	if (rc < 0 && !M->late)
		M->oom = 1;
	return rc;
}

/* A k-way partition by recursive multilevel bisection (each half of the parts gets its exact share),
 * then k-way FM over the whole graph at exact sizes but for one, for what the bisections left across
 * their boundaries. */
static int ml_kway(struct ml *M, struct lgraph *h, uint32_t k, const uint32_t *tgt, uint32_t *part)
{
	uint32_t mid = k / 2, t2[2] = { 0, 0 }, i, side, *vs = NULL, *loc = NULL, *sub = NULL, *tl = NULL;
	double *wt = NULL, *cap = NULL, *lo = NULL, *conn = NULL;
	int rc = -1;

	if (k <= 2)
		return ml_partition(M, h, k, tgt, NULL, part);
	for (i = 0; i < k; i++)
		t2[i >= mid] += tgt[i];
	if (ml_partition(M, h, 2, t2, NULL, part) < 0)
		return -1;
	vs = malloc(((size_t)h->n + 1) * sizeof(*vs));
	loc = malloc(((size_t)h->n + 1) * sizeof(*loc));
	sub = malloc(((size_t)h->n + 1) * sizeof(*sub));
	wt = malloc((size_t)k * sizeof(*wt)), cap = malloc((size_t)k * sizeof(*cap));
	lo = malloc((size_t)k * sizeof(*lo)), conn = calloc(k, sizeof(*conn));
	tl = malloc(((size_t)h->n + k) * sizeof(*tl));
	if (!vs || !loc || !sub || !wt || !cap || !lo || !conn || !tl)
		goto out;
	for (i = 0; i < h->n; i++)
		loc[i] = NONE;
	for (side = 0; side < 2; side++) {
		uint32_t n = 0, j, p0 = side ? mid : 0, kk = side ? k - mid : mid;
		struct lgraph *s;

		for (i = 0; i < h->n; i++)
			if (part[i] == side)
				vs[n++] = i;
		if (!(s = ml_lg_induced(h, vs, n, loc)))
			goto out;
		j = ml_kway(M, s, kk, tgt + p0, sub) < 0;
		ml_lg_free(s);
		if (j)
			goto out;
		for (j = 0; j < n; j++)
			sub[j] += p0, loc[vs[j]] = sub[j]; /* (loc borrowed for the new parts) */
		for (j = 0; j < n; j++)
			vs[j] = loc[vs[j]];
		for (i = 0, j = 0; i < h->n; i++)
			if (part[i] == side)
				loc[i] = NONE, part[i] = vs[j++] | 0x80000000u;
	}
	for (i = 0; i < h->n; i++)
		part[i] &= 0x7fffffffu;
	ml_bounds(h, k, tgt, 0, part, wt, cap, lo);
	ml_widen(k, wt, cap, lo);
	if (ml_kway_fm(h, k, cap, lo, part, wt, conn, tl) < 0)
		goto out;
	if (M->flow && h->n >= (uint32_t)M->flow && flow_level(M, h, k, tgt, part, wt, cap, lo, conn, tl, vs) < 0)
		goto out;
	if (exact_fm(h, k, tgt, 0, part, wt, cap, lo, conn, tl) < 0) /* exact sizes */
		goto out;
	rc = 0;
out:
	free(vs), free(loc), free(sub), free(wt), free(cap), free(lo), free(conn), free(tl);
	if (rc < 0 && !M->late)
		M->oom = 1;
	return rc;
}

/* M->vcycles V-cycles (ml_partition with init) on the k-way split part of h (and M->xvcycles more while
 * the CPU time is before M->xuntil), each kept when its cut is smaller, so that the split a child recurses on is at least as good; none where h would not coarsen
 * (there a V-cycle is the k-way FM that ml_kway ran already). The cut is the objective of this tree
 * node: every pair of its children is at the same distance. */
static int vcycles(struct ml *M, struct lgraph *h, uint32_t k, const uint32_t *tgt, uint32_t *part)
{
	uint32_t *p2;
	double c0;
	int v;

	if (M->vcycles <= 0 || h->n <= ML_VCYCLE_MIN_PER_PART * k || h->n <= ML_COARSE_MIN)
		return 0;
	if (!(p2 = malloc((size_t)h->n * sizeof(*p2))))
		return -1;
	c0 = ml_cut_of(h, part);
	for (v = 0; v < M->vcycles || (v < M->vcycles + M->xvcycles && map_now_ms() < M->xuntil); v++) {
		double c1;

		if (ml_partition(M, h, k, tgt, part, p2) < 0) {
			free(p2);
			return -1;
		}
		c1 = ml_cut_of(h, p2);
		if (c1 < c0)
			memcpy(part, p2, (size_t)h->n * sizeof(*p2)), c0 = c1;
	}
	free(p2);
	return 0;
}

/* A tree node's k-way split of h: ml_kway and its V-cycles, M->reps times with the rng going on (each
 * a fresh multilevel partition), the smallest cut kept. The first is the split that one would give. */
static int split(struct ml *M, struct lgraph *h, uint32_t k, const uint32_t *tgt, uint32_t *part)
{
	uint32_t *p2;
	double c0;
	int r;

	if (ml_kway(M, h, k, tgt, part) < 0 || vcycles(M, h, k, tgt, part) < 0)
		return -1;
	if (M->reps <= 1)
		return 0;
	if (!(p2 = malloc(((size_t)h->n + 1) * sizeof(*p2))))
		return M->oom = 1, -1;
	c0 = ml_cut_of(h, part);
	for (r = 1; r < M->reps; r++) {
		double c1;

		if (ml_kway(M, h, k, tgt, p2) < 0 || vcycles(M, h, k, tgt, p2) < 0) {
			free(p2);
			return -1;
		}
		if ((c1 = ml_cut_of(h, p2)) < c0)
			memcpy(part, p2, (size_t)h->n * sizeof(*p2)), c0 = c1;
	}
	free(p2);
	return 0;
}

/* Places ranks vs[0..n-1] in the subtree of level lev spanning slots [lo, hi). */
static int place(struct ml *M, int lev, uint32_t lo, uint32_t hi, uint32_t *vs, uint32_t n)
{
	const topo_target_t *t = M->t;
	uint32_t k = 0, s, i, *bound = NULL, *tgt = NULL, *part = NULL, *cnt = NULL, left = n, *sorted = NULL;
	struct lgraph *h = NULL;
	int rc = -1;

	if (!n)
		return 0;
	if (map_now_ms() > M->deadline) {
		M->late = 1;
		return -1;
	}
	if (lev >= t->nlevels - 2 || hi - lo <= 1) { /* the slots of one group: every order costs the same */
		for (i = 0; i < n; i++)
			M->perm[vs[i]] = lo + i;
		return 0;
	}
	bound = malloc(((size_t)(hi - lo) + 1) * sizeof(*bound));
	if (!bound)
		return -1;
	for (s = lo; s < hi; s++) /* the children: runs of one group of level lev + 1 */
		if (s == lo ||
		    t->group[(size_t)s * t->nlevels + lev + 1] != t->group[(size_t)(s - 1) * t->nlevels + lev + 1])
			bound[k++] = s;
	bound[k] = hi;
	if (k == 1) {
		rc = place(M, lev + 1, lo, hi, vs, n);
		free(bound);
		return rc;
	}
	tgt = malloc((size_t)k * sizeof(*tgt));
	cnt = calloc(k + 1, sizeof(*cnt));
	part = malloc((size_t)n * sizeof(*part));
	sorted = malloc((size_t)n * sizeof(*sorted));
	if (!tgt || !cnt || !part || !sorted)
		goto out;
	for (i = 0; i < k; i++) { /* fill the first children first */
		uint32_t capi = bound[i + 1] - bound[i];

		tgt[i] = left < capi ? left : capi;
		left -= tgt[i];
	}
	while (k > 1 && tgt[k - 1] == 0)
		k--; /* (children left empty take no part) */
	for (i = 0; i < n; i++)
		M->loc[vs[i]] = i;
	h = ml_induced(M, vs, n);
	for (i = 0; i < n; i++)
		M->loc[vs[i]] = NONE;
	if (!h)
		goto out;
	if (k == 1) {
		for (i = 0; i < n; i++)
			part[i] = 0;
	} else if (split(M, h, k, tgt, part) < 0) {
		goto out;
	}
	ml_lg_free(h);
	h = NULL;
	for (i = 0; i < n; i++)
		cnt[part[i] + 1]++;
	for (i = 0; i < k; i++)
		cnt[i + 1] += cnt[i];
	for (i = 0; i < n; i++)
		sorted[cnt[part[i]]++] = vs[i];
	memcpy(vs, sorted, (size_t)n * sizeof(*vs));
	free(sorted), sorted = NULL;
	free(part), part = NULL;
	for (i = 0, s = 0; i < k; i++) {
		if (place(M, lev + 1, bound[i], bound[i + 1], vs + s, tgt[i]) < 0)
			goto out;
		s += tgt[i];
	}
	rc = 0;
out:
	ml_lg_free(h);
	free(bound), free(tgt), free(cnt), free(part), free(sorted);
	return rc;
}

static int ml_run(const map_ctx_t *ctx, unsigned seed, int tries, int nvcycles, int xvcycles, int reps, int lp,
		  int flow, int guard, uint32_t cdiv, uint32_t *perm);

int map_multilevel(const map_ctx_t *ctx, unsigned seed, uint32_t *perm)
{
	return ml_run(ctx, seed, ML_DEFAULT_TRIES, ML_DEFAULT_VCYCLES, 0, 1, 0, -1, 1, ML_CLUSTER_DIV, perm);
}

int map_multilevel_strong(const map_ctx_t *ctx, unsigned seed, uint32_t *perm)
{
	return ml_run(ctx, seed, ML_STRONG_TRIES, ML_DEFAULT_VCYCLES, ML_STRONG_XVCYCLES, 1, 1, -1, 1, ML_CLUSTER_DIV,
		      perm);
}

int map_multilevel_fast(const map_ctx_t *ctx, unsigned seed, uint32_t *perm)
{
	return ml_run(ctx, seed, ML_FAST_TRIES, 1, ML_FAST_VCYCLES - 1, 1, 1, -1, 1, ML_CLUSTER_DIV, perm);
}

int map_multilevel_vc(const map_ctx_t *ctx, unsigned seed, int tries, int nvcycles, int lp, uint32_t *perm)
{
	return map_multilevel_flow(ctx, seed, tries, nvcycles, lp, -1, perm);
}

/* Whether g has hubs: a rank with more than ML_HUB_RATIO times the mean number of neighbours (the
 * power-law graphs of tests/bench/mapping: 16-37 times; its meshes, stencils and random graphs at most
 * 2.1). O(ranks). */
static int has_hubs(const map_graph_t *g)
{
	uint64_t most = 0;
	uint32_t u;

	for (u = 0; u < g->n; u++)
		if (g->xadj[u + 1] - g->xadj[u] > most)
			most = g->xadj[u + 1] - g->xadj[u];
	return g->n && (double)most > ML_HUB_RATIO * (double)g->xadj[g->n] / g->n;
}

int map_multilevel_flow(const map_ctx_t *ctx, unsigned seed, int tries, int nvcycles, int lp, int flow, uint32_t *perm)
{
	return ml_run(ctx, seed, tries, nvcycles, 0, 1, lp, flow, 0,
		      lp && has_hubs(ctx->g) ? ml_quality_cluster_div : ML_CLUSTER_DIV, perm);
}

int map_multilevel_reps(const map_ctx_t *ctx, unsigned seed, int tries, int nvcycles, int reps, int lp, uint32_t *perm)
{
	return ml_run(ctx, seed, tries, nvcycles, 0, reps, lp, -1, 0,
		      lp && has_hubs(ctx->g) ? ml_quality_cluster_div : ML_CLUSTER_DIV, perm);
}

/* guard: the flows' pairs too stop at ML_STRONG_SHARE of the time (auto's portfolio, whose construction must
 * end within its budget; the quality mode's items end at their deadline, where a construction cut short is
 * only one item lost: there the guard cost mesh3d-16k 0.17 % at the best peer's CPU time, 2 seeds) */
static int ml_run(const map_ctx_t *ctx, unsigned seed, int tries, int nvcycles, int xvcycles, int reps, int lp,
		  int flow, int guard, uint32_t cdiv, uint32_t *perm)
{
	struct ml M;
	uint32_t n = ctx->g->n, i, *vs;
	double now = map_now_ms();
	int rc;

	memset(&M, 0, sizeof(M));
	M.g = ctx->g, M.t = ctx->t, M.perm = perm, M.deadline = ctx->deadline, M.vcycles = nvcycles;
	M.xvcycles = xvcycles, M.xuntil = now + ML_STRONG_SHARE * (ctx->deadline - now);
	M.funtil = guard ? M.xuntil : ctx->deadline;
	M.tries = tries > 0 ? tries : ML_INIT_TRIES, M.lp = lp, M.reps = reps > 1 ? reps : 1;
	M.cdiv = cdiv ? cdiv : ML_CLUSTER_DIV;
	if (flow < 0)
		flow = n >= ML_FLOW_MIN_RANKS;
	M.flow = flow ? ML_FLOW_MIN_LEVEL : 0;
	M.rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)seed * 0xd1b54a32d192ed03ull + 1);
	M.loc = malloc(((size_t)n + 1) * sizeof(*M.loc));
	vs = malloc(((size_t)n + 1) * sizeof(*vs));
	if (!M.loc || !vs) {
		free(M.loc), free(vs);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < n; i++)
		M.loc[i] = NONE, vs[i] = i;
	rc = place(&M, 0, 0, ctx->t->nslots, vs, n);
	free(M.loc), free(vs);
	if (M.late) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (rc < 0 || M.oom) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int map_ml_lp_level(const map_graph_t *g, unsigned seed, uint32_t maxc, uint32_t *cmap, uint32_t *nc, uint64_t *cw,
		    double *cew)
{
	struct ml M;
	struct lgraph *h, *hc;
	uint32_t i, *vs = malloc(((size_t)g->n + 1) * sizeof(*vs));
	int stop = 0, rc = -1;

	memset(&M, 0, sizeof(M));
	M.g = g, M.rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)seed * 0xd1b54a32d192ed03ull + 1);
	M.loc = malloc(((size_t)g->n + 1) * sizeof(*M.loc));
	if (!vs || !M.loc) {
		free(vs), free(M.loc);
		return -1;
	}
	for (i = 0; i < g->n; i++)
		vs[i] = i, M.loc[i] = i;
	h = ml_induced(&M, vs, g->n);
	if (h && (hc = ml_lp_coarsen(&M, h, maxc, NULL, cmap, &stop))) {
		*nc = hc->n, *cw = 0, *cew = 0;
		for (i = 0; i < hc->n; i++)
			*cw += hc->c[i];
		for (i = 0; i < hc->xadj[hc->n]; i++)
			*cew += hc->w[i];
		ml_lg_free(hc);
		rc = 0;
	} else if (h && stop) {
		*nc = g->n, *cw = g->n, *cew = -1;
		rc = 0;
	}
	ml_lg_free(h);
	free(vs), free(M.loc);
	return rc;
}
