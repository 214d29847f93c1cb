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
 *    cluster above an eighth of the smallest part, until the graph is small (ML_COARSE_PER_PART x parts,
 *    and at least ML_COARSE_MIN vertices) or stops shrinking;
 *  - initial partition of the coarsest graph: greedy growing of each part by strongest connection,
 *    ML_INIT_TRIES seeded tries each balanced and refined by FM, the smallest cut kept;
 *  - uncoarsening: at every level, sizes first (diffusion: an overfull part's excess moves downhill to
 *    neighbouring parts, best gain first), then greedy k-way moves and k-way Fiduccia-Mattheyses
 *    (negative moves too, best prefix kept) within ML_IMBALANCE of the sizes, exact but for one rank at
 *    the finest level (FM's pairs of moves are then exchanges); the finest level ends at exact sizes.
 *  - V-cycles: each node's k-way split is then run again ML_DEFAULT_VCYCLES times as a V-cycle:
 *    coarsening that never joins two parts of the split, the split itself as the coarsest level's
 *    partition, k-way FM on the way up; a V-cycle is kept only when it cuts less. Measured
 *    (tests/bench/mapping): in the quality mode at the best peer's CPU time, 0.6 % cheaper on
 *    rand1024, 0.8 % on powerlaw-1k, 0.1 % on mesh2d-4k; in auto's default portfolio, with 16 initial
 *    partitions instead of 24 to keep its time, 2.3 % cheaper on mesh2d-4k (mean of 5 seeds).
 *
 * The swaps between the parts that exact sizes forbid as moves are left to refine.c's hierarchy-aware
 * swap search, which quality.c runs on the result. Time O((ranks + edges) x levels x passes), memory
 * O(ranks + edges). Deterministic for a seed. No code is taken from those projects.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"

#define ML_COARSE_PER_PART 24
#define ML_COARSE_MIN 160 /* the coarsest graph keeps at least this many vertices */
#define ML_CLUSTER_DIV 8  /* no cluster above 1/8 of the smallest part */
#define ML_INIT_TRIES 24  /* the quality mode's; auto's default portfolio: ML_DEFAULT_TRIES */
#define ML_DEFAULT_TRIES 16
#define ML_DEFAULT_VCYCLES 4
#define ML_PASSES 4
#define ML_IMBALANCE 0.03
#define ML_VCYCLE_MIN_PER_PART ML_COARSE_PER_PART /* V-cycles only where the split's graph coarsens */
#define NONE UINT32_MAX

/* A graph of one level: vertex weights c (ranks held), CSR adjacency. */
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
	int tries;       /* initial partitions tried on the coarsest graph */
	int lp;          /* coarsening by label propagation (lp_coarsen), else by matching (coarsen) */
	int oom, late;
};

static uint32_t rnd(struct ml *M)
{
	M->rng ^= M->rng << 13, M->rng ^= M->rng >> 7, M->rng ^= M->rng << 17;
	return (uint32_t)(M->rng >> 16);
}

static void lg_free(struct lgraph *h)
{
	if (!h)
		return;
	free(h->xadj), free(h->adj), free(h->c), free(h->w);
	free(h);
}

static struct lgraph *lg_alloc(uint32_t n, uint64_t nadj)
{
	struct lgraph *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->n = n;
	h->xadj = calloc((size_t)n + 1, sizeof(*h->xadj));
	h->adj = malloc((nadj ? nadj : 1) * sizeof(*h->adj));
	h->w = malloc((nadj ? nadj : 1) * sizeof(*h->w));
	h->c = malloc(((size_t)n + 1) * sizeof(*h->c));
	if (!h->xadj || !h->adj || !h->w || !h->c) {
		lg_free(h);
		return NULL;
	}
	return h;
}

/* The graph the ranks vs[0..n-1] induce (M->loc set for them). */
static struct lgraph *induced(struct ml *M, const uint32_t *vs, uint32_t n)
{
	const map_graph_t *g = M->g;
	uint64_t nadj = 0, k, pos = 0;
	struct lgraph *h;
	uint32_t i;

	for (i = 0; i < n; i++)
		for (k = g->xadj[vs[i]]; k < g->xadj[vs[i] + 1]; k++)
			nadj += M->loc[g->adj[k]] != NONE;
	if (!(h = lg_alloc(n, nadj)))
		return NULL;
	for (i = 0; i < n; i++) {
		h->c[i] = 1;
		for (k = g->xadj[vs[i]]; k < g->xadj[vs[i] + 1]; k++) {
			uint32_t l = M->loc[g->adj[k]];

			if (l != NONE)
				h->adj[pos] = l, h->w[pos++] = g->w[k];
		}
		h->xadj[i + 1] = pos;
	}
	return h;
}

/* One level of heavy-edge matching: cmap[v] = coarse vertex of v; returns the coarse graph, or NULL
 * (oom, or too little shrinking: *stop set). With cp (a V-cycle's partition), only vertices of one part
 * are matched. */
static struct lgraph *coarsen(struct ml *M, const struct lgraph *h, uint32_t maxc, const uint32_t *cp, uint32_t *cmap,
			      int *stop)
{
	uint32_t n = h->n, *order = malloc((size_t)n * sizeof(*order)), *match = malloc((size_t)n * sizeof(*match));
	uint32_t nc = 0, i, u, *mark = NULL, *touched = NULL;
	double *acc = NULL;
	struct lgraph *hc = NULL;
	uint64_t k, pos = 0;

	*stop = 0;
	if (!order || !match)
		goto out;
	for (i = 0; i < n; i++)
		order[i] = i, match[i] = NONE;
	for (i = n; i > 1; i--) {
		uint32_t j = rnd(M) % i, x = order[i - 1];

		order[i - 1] = order[j], order[j] = x;
	}
	for (i = 0; i < n; i++) {
		uint32_t best = NONE;
		double br = 0;

		u = order[i];
		if (match[u] != NONE)
			continue;
		for (k = h->xadj[u]; k < h->xadj[u + 1]; k++) {
			uint32_t v = h->adj[k];
			double r;

			if (match[v] != NONE || v == u || h->c[u] + h->c[v] > maxc || (cp && cp[u] != cp[v]))
				continue;
			r = h->w[k] / ((double)h->c[u] * h->c[v]);
			if (r > br)
				br = r, best = v;
		}
		match[u] = best == NONE ? u : best;
		if (best != NONE)
			match[best] = u;
	}
	for (i = 0; i < n; i++) /* (order: now the last unmatched vertex seen beside each vertex) */
		order[i] = NONE;
	for (u = 0; u < n; u++) { /* two hops: unmatched vertices beside the same heaviest neighbour pair up
				    (the leaves of a hub in a power-law graph have no unmatched neighbour) */
		uint32_t x = NONE, v;
		double bw = 0;

		if (match[u] != u)
			continue;
		for (k = h->xadj[u]; k < h->xadj[u + 1]; k++)
			if (h->w[k] > bw)
				bw = h->w[k], x = h->adj[k];
		if (x == NONE)
			continue;
		v = order[x];
		if (v != NONE && match[v] == v && h->c[u] + h->c[v] <= maxc && (!cp || cp[u] == cp[v])) {
			match[u] = v, match[v] = u;
			order[x] = NONE;
		} else {
			order[x] = u;
		}
	}
	for (u = 0; u < n; u++) /* coarse vertices numbered in the order of their first member */
		if (match[u] >= u)
			cmap[u] = cmap[match[u]] = nc++;
	if (nc > n - n / 10) { /* under 10 % fewer: coarsening has done what it can */
		*stop = 1;
		goto out;
	}
	mark = malloc((size_t)nc * sizeof(*mark));
	touched = malloc((size_t)nc * sizeof(*touched));
	acc = malloc((size_t)nc * sizeof(*acc));
	if (!mark || !touched || !acc || !(hc = lg_alloc(nc, h->xadj[n])))
		goto out;
	for (i = 0; i < nc; i++)
		mark[i] = NONE;
	for (i = 0; i < n; i++) {
		uint32_t cu = cmap[i], nt = 0, m, t;

		if (match[i] < i)
			continue;
		hc->c[cu] = h->c[i] + (match[i] != i ? h->c[match[i]] : 0);
		for (m = 0; m < 2; m++) {
			uint32_t x = m ? match[i] : i;

			if (m && x == i)
				break;
			for (k = h->xadj[x]; k < h->xadj[x + 1]; k++) {
				uint32_t cv = cmap[h->adj[k]];

				if (cv == cu)
					continue;
				if (mark[cv] == NONE)
					mark[cv] = nt, touched[nt] = cv, acc[nt++] = 0;
				acc[mark[cv]] += h->w[k];
			}
		}
		for (t = 0; t < nt; t++) {
			hc->adj[pos] = touched[t], hc->w[pos++] = acc[t];
			mark[touched[t]] = NONE;
		}
		hc->xadj[cu + 1] = pos;
	}
out:
	if (!*stop && !hc)
		M->oom = 1;
	free(order), free(match), free(mark), free(touched), free(acc);
	return hc;
}

/* Size-constrained label propagation (Meyerhenke, Sanders, Schulz, "Partitioning complex networks via
 * size-constrained clustering", SEA 2014): every vertex, in a seeded random order, joins the cluster of
 * its neighbours it is most connected to while that cluster stays within maxc (with cp: only clusters
 * of its own part), LP_ROUNDS rounds; the clusters are contracted. Same contract as coarsen. */
#define LP_ROUNDS 3
static struct lgraph *lp_coarsen(struct ml *M, const struct lgraph *h, uint32_t maxc, const uint32_t *cp,
				 uint32_t *cmap, int *stop)
{
	uint32_t n = h->n, nc = 0, i, u, r, *cl = malloc(((size_t)n + 1) * sizeof(*cl)),
		 *ord = malloc(((size_t)n + 1) * sizeof(*ord)), *cw = malloc(((size_t)n + 1) * sizeof(*cw)),
		 *tl = malloc(((size_t)n + 1) * sizeof(*tl)), *start = NULL, *mem = NULL;
	double *conn = calloc((size_t)n + 1, sizeof(*conn));
	struct lgraph *hc = NULL;
	uint64_t e, pos = 0;

	*stop = 0;
	if (!cl || !ord || !cw || !tl || !conn)
		goto out;
	for (u = 0; u < n; u++)
		cl[u] = u, cw[u] = h->c[u], ord[u] = u;
	for (i = n; i > 1; i--) {
		uint32_t j = rnd(M) % i, x = ord[i - 1];

		ord[i - 1] = ord[j], ord[j] = x;
	}
	for (r = 0; r < LP_ROUNDS; r++) {
		uint32_t moved = 0;

		for (i = 0; i < n; i++) {
			uint32_t own, best, nt = 0, t;
			double bc;

			u = ord[i], own = cl[u], best = own;
			for (e = h->xadj[u]; e < h->xadj[u + 1]; e++) {
				uint32_t v = h->adj[e], c = cl[v];

				if (v == u || (cp && cp[v] != cp[u]))
					continue;
				if (conn[c] == 0)
					tl[nt++] = c;
				conn[c] += h->w[e];
			}
			bc = conn[own];
			for (t = 0; t < nt; t++) {
				uint32_t c = tl[t];

				if (c != own && cw[c] + h->c[u] <= maxc && conn[c] > bc)
					bc = conn[c], best = c;
			}
			for (t = 0; t < nt; t++)
				conn[tl[t]] = 0;
			conn[own] = 0;
			if (best != own) {
				cw[own] -= h->c[u], cw[best] += h->c[u];
				cl[u] = best;
				moved++;
			}
		}
		if (!moved)
			break;
	}
	for (u = 0; u < n; u++)
		tl[u] = NONE;
	for (u = 0; u < n; u++) {
		if (tl[cl[u]] == NONE)
			tl[cl[u]] = nc++;
		cmap[u] = tl[cl[u]];
	}
	if (nc > n - n / 10) {
		*stop = 1;
		goto out;
	}
	start = calloc((size_t)nc + 2, sizeof(*start));
	mem = malloc(((size_t)n + 1) * sizeof(*mem));
	if (!start || !mem || !(hc = lg_alloc(nc, h->xadj[n])))
		goto out;
	for (u = 0; u < n; u++)
		start[cmap[u] + 2]++;
	for (i = 0; i < nc; i++)
		start[i + 2] += start[i + 1];
	for (u = 0; u < n; u++)
		mem[start[cmap[u] + 1]++] = u;
	for (i = 0; i < nc; i++) /* (tl: the touched coarse neighbours, cw: their index, conn: weights) */
		cw[i] = NONE;
	for (i = 0; i < nc; i++) {
		uint32_t nt = 0, t, j;

		hc->c[i] = 0;
		for (j = start[i]; j < start[i + 1]; j++) {
			uint32_t x = mem[j];

			hc->c[i] += h->c[x];
			for (e = h->xadj[x]; e < h->xadj[x + 1]; e++) {
				uint32_t cv = cmap[h->adj[e]];

				if (cv == i)
					continue;
				if (cw[cv] == NONE)
					cw[cv] = nt, tl[nt] = cv, conn[nt++] = 0;
				conn[cw[cv]] += h->w[e];
			}
		}
		for (t = 0; t < nt; t++) {
			hc->adj[pos] = tl[t], hc->w[pos++] = conn[t];
			cw[tl[t]] = NONE;
		}
		hc->xadj[i + 1] = pos;
	}
out:
	if (!*stop && !hc)
		M->oom = 1;
	free(cl), free(ord), free(cw), free(tl), free(conn), free(start), free(mem);
	return hc;
}

/* Cut of a partition (each edge counted twice). */
static double cut_of(const struct lgraph *h, const uint32_t *part)
{
	double s = 0;
	uint32_t u;
	uint64_t k;

	for (u = 0; u < h->n; u++)
		for (k = h->xadj[u]; k < h->xadj[u + 1]; k++)
			if (part[h->adj[k]] != part[u])
				s += h->w[k];
	return s;
}

/* Greedy growing: part p takes, while it has room, the unassigned vertex most connected to it (a fresh
 * start vertex when none is connected). The last part takes the rest. conn is scratch (n). */
static void grow(struct ml *M, const struct lgraph *h, uint32_t k, const uint32_t *tgt, uint32_t *part, double *conn,
		 uint32_t *front)
{
	uint32_t n = h->n, p, u, nf;
	uint64_t e;

	for (u = 0; u < n; u++)
		part[u] = NONE, conn[u] = 0;
	for (p = 0; p + 1 < k; p++) {
		uint32_t wt = 0;

		nf = 0;
		while (wt < tgt[p]) {
			uint32_t best = NONE, bi = 0, i;
			double bc = -1;

			for (i = 0; i < nf; i++) { /* the frontier, assigned ones dropped as met */
				uint32_t v = front[i];

				if (part[v] != NONE || wt + h->c[v] > tgt[p]) {
					if (part[v] != NONE)
						front[i--] = front[--nf];
					continue;
				}
				if (conn[v] > bc)
					bc = conn[v], best = v, bi = i;
			}
			if (best == NONE) { /* nothing connected fits: a random unassigned vertex that fits */
				uint32_t start = rnd(M) % n, j;

				for (j = 0; j < n; j++) {
					uint32_t v = (start + j) % n;

					if (part[v] == NONE && wt + h->c[v] <= tgt[p]) {
						best = v;
						break;
					}
				}
				if (best == NONE)
					break;
			} else {
				front[bi] = front[--nf];
			}
			part[best] = p;
			wt += h->c[best];
			for (e = h->xadj[best]; e < h->xadj[best + 1]; e++) {
				uint32_t v = h->adj[e];

				if (part[v] != NONE)
					continue;
				if (conn[v] == 0)
					front[nf++] = v;
				conn[v] += h->w[e];
			}
		}
		for (u = 0; u < nf; u++)
			conn[front[u]] = 0;
		for (u = 0; u < n; u++)
			if (part[u] == NONE)
				conn[u] = 0;
	}
	for (u = 0; u < n; u++)
		if (part[u] == NONE)
			part[u] = k - 1;
}

/* Greedy k-way moves: each vertex, in the order ord, to the part it is most connected to, within cap[].
 * wt[] is each part's weight (kept up to date). scratch: conn (k doubles, zero), tl (k). */
static void kway_pass(const struct lgraph *h, uint32_t k, const double *cap, const uint32_t *ord, uint32_t *part,
		      double *wt, double *conn, uint32_t *tl)
{
	uint32_t n = h->n, i;
	int pass;

	for (pass = 0; pass < ML_PASSES; pass++) {
		uint32_t moved = 0;

		for (i = 0; i < n; i++) {
			uint32_t u = ord[i], own = part[u], best = own, nt = 0, t;
			double bg = 0;
			uint64_t e;

			for (e = h->xadj[u]; e < h->xadj[u + 1]; e++) {
				uint32_t p = part[h->adj[e]];

				if (conn[p] == 0)
					tl[nt++] = p;
				conn[p] += h->w[e];
			}
			for (t = 0; t < nt; t++) {
				uint32_t p = tl[t];
				double gain = conn[p] - conn[own];

				if (p != own && wt[p] + h->c[u] <= cap[p] && gain > bg)
					bg = gain, best = p;
			}
			for (t = 0; t < nt; t++)
				conn[tl[t]] = 0;
			if (best != own) {
				part[u] = best;
				wt[own] -= h->c[u], wt[best] += h->c[u];
				moved++;
			}
		}
		if (!moved)
			break;
	}
}

struct hitem {
	double gain;
	uint32_t v;
};

struct heap {
	struct hitem *a;
	size_t n, cap;
};

static int hpush(struct heap *H, double gain, uint32_t v)
{
	size_t i;

	if (H->n == H->cap) {
		size_t cap = H->cap ? 2 * H->cap : 256;
		struct hitem *na = realloc(H->a, cap * sizeof(*na));

		if (!na)
			return -1;
		H->a = na, H->cap = cap;
	}
	for (i = H->n++; i > 0 && H->a[(i - 1) / 2].gain < gain; i = (i - 1) / 2)
		H->a[i] = H->a[(i - 1) / 2];
	H->a[i] = (struct hitem){ gain, v };
	return 0;
}

static struct hitem hpop(struct heap *H)
{
	struct hitem top = H->a[0], last = H->a[--H->n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < H->n) {
		if (c + 1 < H->n && H->a[c + 1].gain > H->a[c].gain)
			c++;
		if (H->a[c].gain <= last.gain)
			break;
		H->a[i] = H->a[c], i = c;
	}
	if (H->n)
		H->a[i] = last;
	return top;
}

/* The best move of u (to a part with room, its own part keeping at least lo[]): *to, or NONE. */
static double best_move(const struct lgraph *h, const uint32_t *part, const double *wt, const double *cap,
			const double *lo, double *conn, uint32_t *tl, uint32_t u, uint32_t *to)
{
	uint32_t own = part[u], nt = 0, t;
	double bg = -1e300;
	uint64_t e;

	*to = NONE;
	for (e = h->xadj[u]; e < h->xadj[u + 1]; e++) {
		uint32_t p = part[h->adj[e]];

		if (conn[p] == 0)
			tl[nt++] = p;
		conn[p] += h->w[e];
	}
	if (wt[own] - h->c[u] >= lo[own])
		for (t = 0; t < nt; t++) {
			uint32_t p = tl[t];

			if (p != own && wt[p] + h->c[u] <= cap[p] && conn[p] - conn[own] > bg)
				bg = conn[p] - conn[own], *to = p;
		}
	for (t = 0; t < nt; t++)
		conn[tl[t]] = 0;
	return bg;
}

/* k-way Fiduccia-Mattheyses: moves by best gain, negative ones too (each vertex once a pass), then
 * the best prefix of the pass is kept; passes until one gains nothing. Returns -1 when out of memory. */
static int kway_fm(const struct lgraph *h, uint32_t k, const double *cap, const double *lo, uint32_t *part, double *wt,
		   double *conn, uint32_t *tl)
{
	uint32_t n = h->n, u, *logv = malloc(((size_t)n + 1) * sizeof(*logv)),
		 *logp = malloc(((size_t)n + 1) * sizeof(*logp));
	unsigned char *locked = calloc((size_t)n + 1, 1);
	uint32_t stall_max = n / 8 < 64 ? 64 : n / 8;
	struct heap H = { 0 };
	int pass, rc = -1;

	if (!logv || !logp || !locked)
		goto out;
	for (pass = 0; pass < ML_PASSES; pass++) {
		double cur = 0, best = 0;
		uint32_t nlog = 0, bestpos = 0, stall = 0, to;

		H.n = 0;
		memset(locked, 0, n);
		for (u = 0; u < n; u++) {
			double gn = best_move(h, part, wt, cap, lo, conn, tl, u, &to);

			if (to != NONE && hpush(&H, gn, u) < 0)
				goto out;
		}
		while (H.n && stall < stall_max) {
			struct hitem it = hpop(&H);
			double gn;
			uint64_t e;

			if (locked[it.v])
				continue;
			gn = best_move(h, part, wt, cap, lo, conn, tl, it.v, &to);
			if (to == NONE)
				continue;
			if (gn < it.gain - 1e-12 * (1 + (it.gain < 0 ? -it.gain : it.gain))) { /* stale */
				if (hpush(&H, gn, it.v) < 0)
					goto out;
				continue;
			}
			locked[it.v] = 1;
			logv[nlog] = it.v, logp[nlog++] = part[it.v];
			wt[part[it.v]] -= h->c[it.v], wt[to] += h->c[it.v];
			part[it.v] = to;
			cur += gn;
			if (cur > best + 1e-9 * (1 + best))
				best = cur, bestpos = nlog, stall = 0;
			else
				stall++;
			for (e = h->xadj[it.v]; e < h->xadj[it.v + 1]; e++) {
				uint32_t x = h->adj[e];
				double gx;

				if (locked[x])
					continue;
				gx = best_move(h, part, wt, cap, lo, conn, tl, x, &to);
				if (to != NONE && hpush(&H, gx, x) < 0)
					goto out;
			}
		}
		while (nlog > bestpos) { /* back to the best prefix */
			uint32_t v = logv[--nlog];

			wt[part[v]] -= h->c[v], wt[logp[nlog]] += h->c[v];
			part[v] = logp[nlog];
		}
		if (best <= 0)
			break;
	}
	rc = 0;
out:
	free(logv), free(logp), free(locked), free(H.a);
	return rc;
}

/* ord[0..n-1]: a seeded random order of 0..n-1. */
static void shuffle(struct ml *M, uint32_t *ord, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		ord[i] = i;
	for (i = n; i > 1; i--) {
		uint32_t j = rnd(M) % i, x = ord[i - 1];

		ord[i - 1] = ord[j], ord[j] = x;
	}
}

struct cand {
	double loss;
	uint32_t v, to;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->loss < y->loss ? -1 : x->loss > y->loss ? 1 : x->v < y->v ? -1 : x->v > y->v;
}

/* Finest level (unit weights): makes every part exactly tgt[p], moving from each overfull part the
 * vertices that lose least to the underfull part they are most connected to. */
static int balance(const struct lgraph *h, uint32_t k, const uint32_t *tgt, uint32_t *part, double *wt, double *conn,
		   uint32_t *tl)
{
	uint32_t n = h->n, p, u, nc;
	struct cand *cs = malloc(((size_t)n + 1) * sizeof(*cs));

	if (!cs)
		return -1;
	for (p = 0; p < k; p++) {
		uint32_t i, need;

		if (wt[p] <= tgt[p])
			continue;
		need = (uint32_t)(wt[p] - tgt[p]);
		nc = 0;
		for (u = 0; u < n; u++) {
			uint32_t nt = 0, t, to = NONE;
			double bc = -1;
			uint64_t e;

			if (part[u] != p)
				continue;
			for (e = h->xadj[u]; e < h->xadj[u + 1]; e++) {
				uint32_t q = part[h->adj[e]];

				if (conn[q] == 0)
					tl[nt++] = q;
				conn[q] += h->w[e];
			}
			for (t = 0; t < nt; t++)
				if (tl[t] != p && wt[tl[t]] < tgt[tl[t]] && conn[tl[t]] > bc)
					bc = conn[tl[t]], to = tl[t];
			cs[nc].loss = conn[p] - (bc > 0 ? bc : 0);
			cs[nc].v = u, cs[nc++].to = to;
			for (t = 0; t < nt; t++)
				conn[tl[t]] = 0;
		}
		qsort(cs, nc, sizeof(*cs), cand_cmp);
		for (i = 0; i < nc && need; i++) {
			uint32_t q = cs[i].to;

			if (q == NONE || wt[q] >= tgt[q]) /* its choice is full now: the first part with room */
				for (q = 0; q < k && wt[q] >= tgt[q]; q++)
					;
			if (q >= k)
				break;
			part[cs[i].v] = q;
			wt[p]--, wt[q]++, need--;
		}
	}
	free(cs);
	return 0;
}

/* Moves vertices downhill until no part is above cap: from a part above its cap to a neighbouring part
 * whose excess over its size stays below the source's (the source's excess less the vertex), best gain
 * first, pass after pass, so that an excess travels through the parts between to a part with room,
 * along the boundary. */
static int diffuse(const struct lgraph *h, uint32_t k, const uint32_t *tgt, const double *cap, uint32_t *part,
		   double *wt, double *conn, uint32_t *tl)
{
	uint32_t n = h->n, u, nc, i, p;
	struct cand *cs = malloc(((size_t)n + 1) * sizeof(*cs));
	int pass;

	if (!cs)
		return -1;
	for (pass = 0; pass < 64; pass++) {
		int over = 0;

		for (p = 0; p < k; p++)
			over |= wt[p] > cap[p];
		if (!over)
			break;
		nc = 0;
		for (u = 0; u < n; u++) {
			uint32_t own = part[u], nt = 0, t, to = NONE;
			double bg = -1e300;
			uint64_t e;

			if (wt[own] <= cap[own])
				continue;
			for (e = h->xadj[u]; e < h->xadj[u + 1]; e++) {
				uint32_t q = part[h->adj[e]];

				if (conn[q] == 0)
					tl[nt++] = q;
				conn[q] += h->w[e];
			}
			for (t = 0; t < nt; t++) {
				uint32_t q = tl[t];

				if (q != own && wt[q] + h->c[u] - tgt[q] < wt[own] - tgt[own] &&
				    conn[q] - conn[own] > bg)
					bg = conn[q] - conn[own], to = q;
			}
			for (t = 0; t < nt; t++)
				conn[tl[t]] = 0;
			if (to != NONE)
				cs[nc].loss = -bg, cs[nc].v = u, cs[nc++].to = to;
		}
		if (!nc)
			break;
		qsort(cs, nc, sizeof(*cs), cand_cmp);
		for (i = 0; i < nc; i++) {
			uint32_t v = cs[i].v, own = part[v], q = cs[i].to;

			if (wt[own] > cap[own] && wt[q] + h->c[v] - tgt[q] < wt[own] - tgt[own]) {
				part[v] = q;
				wt[own] -= h->c[v], wt[q] += h->c[v];
			}
		}
	}
	free(cs);
	return 0;
}

/* cap[] and lo[] of a level: the size give or take frac of it and one; wt[] recounted from part. */
static void bounds(const struct lgraph *h, uint32_t k, const uint32_t *tgt, double frac, const uint32_t *part,
		   double *wt, double *cap, double *lo)
{
	uint32_t i;

	for (i = 0; i < k; i++)
		wt[i] = 0;
	for (i = 0; i < h->n; i++)
		wt[part[i]] += h->c[i];
	for (i = 0; i < k; i++) {
		double slack = frac * tgt[i] + 1;

		cap[i] = tgt[i] + slack, lo[i] = tgt[i] - slack;
	}
}

/* After diffuse: a part still outside its bounds keeps what it holds (it may not grow past it, nor
 * shrink below it), so that FM never makes it worse. */
static void widen(uint32_t k, const double *wt, double *cap, double *lo)
{
	uint32_t i;

	for (i = 0; i < k; i++) {
		if (cap[i] < wt[i])
			cap[i] = wt[i];
		if (lo[i] > wt[i])
			lo[i] = wt[i];
	}
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
		lv[nl] = (M->lp ? lp_coarsen : coarsen)(M, lv[nl - 1], mint / ML_CLUSTER_DIV + 1, cps[nl - 1],
							cmaps[nl - 1], &stop);
		if (!lv[nl]) {
			free(cmaps[nl - 1]);
			break;
		}
		cps[nl] = NULL;
		if (init) { /* init on the coarse graph (each cluster lies in one part) */
			uint32_t u;

			if (!(cps[nl] = malloc(((size_t)lv[nl]->n + 1) * sizeof(uint32_t)))) {
				lg_free(lv[nl]), free(cmaps[nl - 1]);
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
				grow(M, hc, k, tgt, part, conn, front);
			memset(conn, 0, (size_t)k * sizeof(*conn));
			bounds(hc, k, tgt, ML_IMBALANCE, part, wt, cap, lo);
			if (diffuse(hc, k, tgt, cap, part, wt, conn, tl) < 0)
				goto out;
			widen(k, wt, cap, lo);
			if (kway_fm(hc, k, cap, lo, part, wt, conn, tl) < 0)
				goto out;
			c = cut_of(hc, part);
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
		/* sizes first (the finest level: exact but for one, for FM's exchanges), then the cut */
		bounds(hl, k, tgt, l ? ML_IMBALANCE : 0, part, wt, cap, lo);
		if (diffuse(hl, k, tgt, cap, part, wt, conn, tl) < 0)
			goto out;
		widen(k, wt, cap, lo);
		shuffle(M, ord, hl->n);
		kway_pass(hl, k, cap, ord, part, wt, conn, tl);
		if (kway_fm(hl, k, cap, lo, part, wt, conn, tl) < 0)
			goto out;
		if (l == 0) { /* exact sizes */
			for (i = 0; i < k; i++)
				cap[i] = tgt[i];
			if (diffuse(hl, k, tgt, cap, part, wt, conn, tl) < 0 ||
			    balance(hl, k, tgt, part, wt, conn, tl) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(cps[0]);
	for (i = 1; i < nl; i++)
		lg_free(lv[i]), free(cmaps[i - 1]), free(cps[i]);
	free(wt), free(cap), free(lo), free(conn), free(tl), free(best), free(front), free(ord);
	if (rc < 0 && !M->late)
		M->oom = 1;
	return rc;
}

/* The graph that the vertices vs[0..n-1] of h induce (loc: scratch of h->n entries, all NONE, left so). */
static struct lgraph *lg_induced(const struct lgraph *h, const uint32_t *vs, uint32_t n, uint32_t *loc)
{
	uint64_t nadj = 0, k, pos = 0;
	struct lgraph *s;
	uint32_t i;

	for (i = 0; i < n; i++)
		loc[vs[i]] = i;
	for (i = 0; i < n; i++)
		for (k = h->xadj[vs[i]]; k < h->xadj[vs[i] + 1]; k++)
			nadj += loc[h->adj[k]] != NONE;
	if ((s = lg_alloc(n, nadj)))
		for (i = 0; i < n; i++) {
			s->c[i] = h->c[vs[i]];
			for (k = h->xadj[vs[i]]; k < h->xadj[vs[i] + 1]; k++)
				if (loc[h->adj[k]] != NONE)
					s->adj[pos] = loc[h->adj[k]], s->w[pos++] = h->w[k];
			s->xadj[i + 1] = pos;
		}
	for (i = 0; i < n; i++)
		loc[vs[i]] = NONE;
	return s;
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
		if (!(s = lg_induced(h, vs, n, loc)))
			goto out;
		j = ml_kway(M, s, kk, tgt + p0, sub) < 0;
		lg_free(s);
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
	bounds(h, k, tgt, 0, part, wt, cap, lo);
	widen(k, wt, cap, lo);
	if (kway_fm(h, k, cap, lo, part, wt, conn, tl) < 0)
		goto out;
	for (i = 0; i < k; i++)
		cap[i] = tgt[i];
	if (diffuse(h, k, tgt, cap, part, wt, conn, tl) < 0 || balance(h, k, tgt, part, wt, conn, tl) < 0)
		goto out;
	rc = 0;
out:
	free(vs), free(loc), free(sub), free(wt), free(cap), free(lo), free(conn), free(tl);
	if (rc < 0 && !M->late)
		M->oom = 1;
	return rc;
}

/* M->vcycles V-cycles (ml_partition with init) on the k-way split part of h, each kept when its cut is
 * smaller, so that the split a child recurses on is at least as good; none where h would not coarsen
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
	c0 = cut_of(h, part);
	for (v = 0; v < M->vcycles; v++) {
		double c1;

		if (ml_partition(M, h, k, tgt, part, p2) < 0) {
			free(p2);
			return -1;
		}
		c1 = cut_of(h, p2);
		if (c1 < c0)
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
	h = induced(M, vs, n);
	for (i = 0; i < n; i++)
		M->loc[vs[i]] = NONE;
	if (!h)
		goto out;
	if (k == 1) {
		for (i = 0; i < n; i++)
			part[i] = 0;
	} else if (ml_kway(M, h, k, tgt, part) < 0 || vcycles(M, h, k, tgt, part) < 0) {
		goto out;
	}
	lg_free(h);
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
	lg_free(h);
	free(bound), free(tgt), free(cnt), free(part), free(sorted);
	return rc;
}

int map_multilevel(const map_ctx_t *ctx, unsigned seed, uint32_t *perm)
{
	return map_multilevel_vc(ctx, seed, ML_DEFAULT_TRIES, ML_DEFAULT_VCYCLES, 0, perm);
}

int map_multilevel_vc(const map_ctx_t *ctx, unsigned seed, int tries, int nvcycles, int lp, uint32_t *perm)
{
	struct ml M;
	uint32_t n = ctx->g->n, i, *vs;
	int rc;

	memset(&M, 0, sizeof(M));
	M.g = ctx->g, M.t = ctx->t, M.perm = perm, M.deadline = ctx->deadline, M.vcycles = nvcycles;
	M.tries = tries > 0 ? tries : ML_INIT_TRIES, M.lp = lp;
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
	h = induced(&M, vs, g->n);
	if (h && (hc = lp_coarsen(&M, h, maxc, NULL, cmap, &stop))) {
		*nc = hc->n, *cw = 0, *cew = 0;
		for (i = 0; i < hc->n; i++)
			*cw += hc->c[i];
		for (i = 0; i < hc->xadj[hc->n]; i++)
			*cew += hc->w[i];
		lg_free(hc);
		rc = 0;
	} else if (h && stop) {
		*nc = g->n, *cw = g->n, *cew = -1;
		rc = 0;
	}
	lg_free(h);
	free(vs), free(M.loc);
	return rc;
}
