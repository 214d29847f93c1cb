/*
 * mapping/ml_private.h: what the four files of the multilevel construction share (mapping/multilevel.c:
 * the hierarchical multisection and its k-way partitions; mapping/ml_coarsen.c: the graphs of each level
 * and their coarsening; mapping/ml_fm.c: initial partitions and their refinement at one level;
 * mapping/ml_flow.c: flow-based refinement of pairs of parts at one level). Private to them.
 */
#ifndef RANKMAP_ML_PRIVATE_H
#define RANKMAP_ML_PRIVATE_H

#include "mapping_private.h"

#define NONE UINT32_MAX

struct lgraph {
	uint32_t n;
	uint64_t *xadj;
	uint32_t *adj, *c;
	double *w;
};

struct ml {
	const map_graph_t *g;
	const topo_target_t *t;
	uint32_t *perm;
	uint32_t *loc; /* global rank -> local index in the current subset, NONE outside */
	uint64_t rng;
	double deadline; /* thread CPU time (map_now_ms) past which the construction gives up */
	int vcycles;     /* V-cycles on each tree node's k-way split (ML_VCYCLE_MIN_PER_PART) */
	int xvcycles;    /* and up to this many more while the thread's CPU time is before xuntil */
	double xuntil;
	double funtil; /* no flow refinement of a new pair after this CPU time (ml_flow.c) */
	int tries;     /* initial partitions tried on the coarsest graph */
	int reps;      /* independent k-way partitions of each tree node's split (each with its V-cycles), the
			* smallest cut kept (at least 1) */
	int lp;        /* coarsening by label propagation (lp_coarsen), else by matching (coarsen) */
	uint32_t cdiv; /* no cluster above 1/cdiv of the smallest part (ML_CLUSTER_DIV, ml_quality_cluster_div) */
	int flow;      /* flow refinement (ml_flow_refine) after FM on levels of at least this many vertices; 0: none */
	int oom, late;
};

/* multilevel.c: the finest level's FM works within this fraction of the sizes before exact sizes and an
 * FM within one vertex of them (ML_FINE_IMBALANCE); at 0, FM within one vertex only (as before the
 * eighth round of tests/bench/mapping/RESULTS.md). Only tests change it, to compare. */
extern double ml_fine_imbalance;
/* multilevel.c: the quality mode's construction (map_multilevel_flow with label propagation) on a graph
 * with hubs keeps every cluster within 1/ml_quality_cluster_div of the smallest part (32; elsewhere
 * ML_CLUSTER_DIV, 8).
 * Only tests change it, to compare. */
extern uint32_t ml_quality_cluster_div;

static inline uint32_t ml_rnd(struct ml *M)
{
	M->rng ^= M->rng << 13, M->rng ^= M->rng >> 7, M->rng ^= M->rng << 17;
	return (uint32_t)(M->rng >> 16);
}

/* ---- mapping/ml_coarsen.c: level graphs, coarsening ---------------------------------------------- */

/* A graph of n vertices and room for nadj adjacency entries (xadj zeroed), or NULL. */
void ml_lg_free(struct lgraph *h);
struct lgraph *ml_lg_alloc(uint32_t n, uint64_t nadj);
/* The graph the ranks vs[0..n-1] induce (M->loc set for them). */
struct lgraph *ml_induced(struct ml *M, const uint32_t *vs, uint32_t n);
/* The graph that the vertices vs[0..n-1] of h induce (loc: scratch of h->n entries, all NONE, left so). */
struct lgraph *ml_lg_induced(const struct lgraph *h, const uint32_t *vs, uint32_t n, uint32_t *loc);
/* One level of heavy-edge matching: cmap[v] = coarse vertex of v; returns the coarse graph, or NULL
 * (oom, or too little shrinking: *stop set). With cp (a V-cycle's partition), only vertices of one part
 * are matched. */
struct lgraph *ml_coarsen(struct ml *M, const struct lgraph *h, uint32_t maxc, const uint32_t *cp, uint32_t *cmap,
			  int *stop);
/* Size-constrained label propagation (Meyerhenke, Sanders, Schulz, "Partitioning complex networks via
 * size-constrained clustering", SEA 2014): every vertex, in a seeded random order, joins the cluster of
 * its neighbours it is most connected to while that cluster stays within maxc (with cp: only clusters
 * of its own part), LP_ROUNDS rounds; the clusters are contracted. Same contract as coarsen. */
struct lgraph *ml_lp_coarsen(struct ml *M, const struct lgraph *h, uint32_t maxc, const uint32_t *cp, uint32_t *cmap,
			     int *stop);
/* ord[0..n-1]: a seeded random order of 0..n-1. */
void ml_shuffle(struct ml *M, uint32_t *ord, uint32_t n);

/* ---- mapping/ml_fm.c: initial partitions, moves at one level ------------------------------------- */

/* Cut of a partition (each edge counted twice). */
double ml_cut_of(const struct lgraph *h, const uint32_t *part);
/* Greedy growing: part p takes, while it has room, the unassigned vertex most connected to it (a fresh
 * start vertex when none is connected). The last part takes the rest. conn is scratch (n). */
void ml_grow(struct ml *M, const struct lgraph *h, uint32_t k, const uint32_t *tgt, uint32_t *part, double *conn,
	     uint32_t *front);
/* Greedy k-way moves: each vertex, in the order ord, to the part it is most connected to, within cap[].
 * wt[] is each part's weight (kept up to date). scratch: conn (k doubles, zero), tl (k). */
void ml_kway_pass(const struct lgraph *h, uint32_t k, const double *cap, const uint32_t *ord, uint32_t *part,
		  double *wt, double *conn, uint32_t *tl);
/* k-way Fiduccia-Mattheyses: moves by best gain, negative ones too (each vertex once a pass), then
 * the best prefix of the pass is kept; passes until one gains nothing. Returns -1 when out of memory. */
int ml_kway_fm(const struct lgraph *h, uint32_t k, const double *cap, const double *lo, uint32_t *part, double *wt,
	       double *conn, uint32_t *tl);
/* Finest level (unit weights): makes every part exactly tgt[p], moving from each overfull part the
 * vertices that lose least to the underfull part they are most connected to. */
int ml_balance(const struct lgraph *h, uint32_t k, const uint32_t *tgt, uint32_t *part, double *wt, double *conn,
	       uint32_t *tl);
/* Moves vertices downhill until no part is above cap: from a part above its cap to a neighbouring part
 * whose excess over its size stays below the source's (the source's excess less the vertex), best gain
 * first, pass after pass, so that an excess travels through the parts between to a part with room,
 * along the boundary. */
int ml_diffuse(const struct lgraph *h, uint32_t k, const uint32_t *tgt, const double *cap, uint32_t *part, double *wt,
	       double *conn, uint32_t *tl);
/* cap[] and lo[] of a level: the size give or take frac of it and one; wt[] recounted from part. */
void ml_bounds(const struct lgraph *h, uint32_t k, const uint32_t *tgt, double frac, const uint32_t *part, double *wt,
	       double *cap, double *lo);
/* After ml_diffuse: a part still outside its bounds keeps what it holds (it may not grow past it, nor
 * shrink below it), so that FM never makes it worse. */
void ml_widen(uint32_t k, const double *wt, double *cap, double *lo);

/* ---- mapping/ml_flow.c: flow-based refinement at one level --------------------------------------- */

/* For each pair of adjacent parts (k = 2: the one pair; else the pairs cut edges join, heaviest first):
 * a band around their boundary, within what each part may give and take (cap[], lo[]), the rest of each
 * part contracted into source and sink, the most balanced minimum cut by maximum flow, kept when it cuts
 * less and both parts end within cap[] and lo[]; the band grown again (up to 4x) while that helps. The
 * cut never grows; a part that changes ends within its bounds. wt[] kept up to date. Returns 1 when the
 * cut fell, 0 when not, -1 when out of memory. */
int ml_flow_refine(struct ml *M, const struct lgraph *h, uint32_t k, const double *cap, const double *lo,
		   uint32_t *part, double *wt);

#endif
