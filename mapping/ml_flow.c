/*
 * mapping/ml_flow.c: flow-based refinement of a k-way partition at one level of the multilevel
 * construction (multilevel.c), after its k-way FM (ml_fm.c).
 *
 * For a pair of adjacent parts a and b (k = 2: the one pair; k > 2: the pairs that cut edges join,
 * heaviest first), a band region is grown by breadth-first search from the a-b boundary into each side,
 * on side a no heavier than what a may lose and b may take (and the same the other way), times a
 * scaling alpha. The rest of a is contracted into the source, the rest of b into the sink; a maximum
 * flow (Dinic's blocking flows, memory O(band)) gives the band's minimum cuts; at alpha 1 every one of
 * them is within the parts' bounds (a side never gives more than it may lose, nor takes more than it may
 * take). Among them the most balanced one within the bounds is taken: the residual graph's strongly
 * connected components between what the source reaches and what reaches the sink, added to the
 * source's side in an order that keeps it closed (scc_order), each prefix a minimum cut. It is kept only
 * when it cuts less than the partition did: the cut never grows and the bounds hold. The band is then
 * grown again with alpha doubled (up to ML_FLOW_ALPHA_MAX, and again at that scale while it improves),
 * until its smaller cuts break the bounds, as in KaFFPa's adaptive flow refinement (Sanders and Schulz,
 * "Engineering multilevel graph partitioning algorithms", ESA 2011: band regions whose every cut is
 * balanced, the most balanced minimum cut, the region scaled while it helps); Mt-KaHyPar's flows
 * (Gottesbueren, Heuer and Sanders, "Parallel flow-based hypergraph partitioning", SEA 2022, after
 * Gottesbueren, Hamann, Schlag and Wagner, "Advanced flow-based multilevel hypergraph partitioning", SEA
 * 2020) refine pairs of blocks the same way, scheduled by their cut. Only the edges between a and b
 * change with a move between them, so the pair's minimum cut is the k-way cut's change exactly. No code
 * is taken from those projects.
 *
 * Time per pair and round O(band x band edges) at worst (Dinic), in practice a few breadth-first
 * searches of the band, plus a scan of the two parts' boundary candidates (struct cands: bucketed by
 * part; a scan of every part's, as first written, was 63 % of a 64-part refinement of a power-law graph,
 * the review measured); the deadline is checked before each round. Memory O(n) for the band's index and
 * the candidates, O(band + band edges) for the network, O(cut edges) for the list of pairs.
 */
#include <stdlib.h>
#include <string.h>

#include "ml_private.h"

#define ML_FLOW_ALPHA_MAX 4 /* the band's scaling doubles from 1 up to this, unless its cuts break the bounds */
#define ML_FLOW_ROUNDS 8    /* rounds per pair: the band grown again while it improves */
/* at most this many pairs a part, the heaviest: all of them on the bench's meshes (a planar partition has
 * fewer than 3 a part), the heaviest sixth on a power-law graph of 64 parts where nearly all touch
 * (16,384 ranks on tleaf 3 64 10 2 2 128 1: the construction 2,134 CPU ms with every pair, against 389
 * without flows; mesh3d-16k at auto's default, 4 seeds: 20,247,675 with 6, 20,368,225 with 3, 20,247,975
 * with every pair) */
#define ML_FLOW_PAIRS_PER_PART 6
#define ML_FLOW_EPS 1e-9

/* The flow network of one band: nodes 0..nb-1 the band's vertices, nb the source, nb+1 the sink; arcs
 * in CSR (first), each with its reverse (rev) and its residual capacity. */
struct fnet {
	uint32_t nb, nn, *head, *rev, *level, *queue, *pathv;
	uint64_t *first, *it, *patha, narcs;
	double *res;
};

static void fnet_free(struct fnet *F)
{
	free(F->head), free(F->rev), free(F->level), free(F->queue), free(F->pathv);
	free(F->first), free(F->it), free(F->patha), free(F->res);
	memset(F, 0, sizeof(*F));
}

/* Breadth-first levels from the source over arcs with residual capacity; 1 when the sink is reached. */
static int fnet_bfs(struct fnet *F)
{
	uint32_t s = F->nb, t = F->nb + 1, qh = 0, qt = 0, x;
	uint64_t a;

	for (x = 0; x < F->nn; x++)
		F->level[x] = NONE;
	F->level[s] = 0, F->queue[qt++] = s;
	while (qh < qt) {
		x = F->queue[qh++];
		for (a = F->first[x]; a < F->first[x + 1]; a++) {
			uint32_t y = F->head[a];

			if (F->res[a] > ML_FLOW_EPS && F->level[y] == NONE)
				F->level[y] = F->level[x] + 1, F->queue[qt++] = y;
		}
	}
	return F->level[t] != NONE;
}

/* A blocking flow of the level graph by augmenting paths found depth-first without recursion (a dead
 * end leaves the level graph); stops once the flow reaches bound. Returns the flow added. */
static double fnet_block(struct fnet *F, double bound)
{
	uint32_t s = F->nb, t = F->nb + 1, x, depth = 0;
	double total = 0;

	for (x = 0; x < F->nn; x++)
		F->it[x] = F->first[x];
	x = s;
	for (;;) {
		if (x == t) {
			double f = 1e300;
			uint32_t i;

			for (i = 0; i < depth; i++)
				if (F->res[F->patha[i]] < f)
					f = F->res[F->patha[i]];
			for (i = 0; i < depth; i++)
				F->res[F->patha[i]] -= f, F->res[F->rev[F->patha[i]]] += f;
			total += f;
			if (total >= bound)
				return total;
			depth = 0, x = s;
			continue;
		}
		for (; F->it[x] < F->first[x + 1]; F->it[x]++) {
			uint64_t a = F->it[x];
			uint32_t y = F->head[a];

			if (F->res[a] > ML_FLOW_EPS && F->level[y] != NONE && F->level[y] == F->level[x] + 1)
				break;
		}
		if (F->it[x] == F->first[x + 1]) { /* dead end: x leaves the level graph, one step back */
			F->level[x] = NONE;
			if (!depth)
				return total;
			x = F->pathv[--depth];
			F->it[x]++;
			continue;
		}
		F->pathv[depth] = x, F->patha[depth++] = F->it[x];
		x = F->head[F->it[x]];
	}
}

/* Marks in mark[] (1) the nodes the source reaches in the residual graph (from = source), or those that
 * reach the sink (from = sink: over the reverse arcs). */
static void fnet_reach(struct fnet *F, uint32_t from, unsigned char *mark)
{
	uint32_t qh = 0, qt = 0, x;
	uint64_t a;

	memset(mark, 0, F->nn);
	mark[from] = 1, F->queue[qt++] = from;
	while (qh < qt) {
		x = F->queue[qh++];
		for (a = F->first[x]; a < F->first[x + 1]; a++) {
			uint32_t y = F->head[a];
			double r = from == F->nb ? F->res[a] : F->res[F->rev[a]];

			if (r > ML_FLOW_EPS && !mark[y])
				mark[y] = 1, F->queue[qt++] = y;
		}
	}
}

struct fscratch {
	uint32_t *idx;  /* vertex -> band index, NONE outside (n, left all NONE) */
	uint32_t *band; /* the band's vertices (n) */
	uint32_t *bfsq; /* (n) */
	unsigned char *ms, *mt;
	size_t msz;
	/* the strongly connected components of the residual graph between the two sides (scc_order) */
	uint32_t *comp, *low, *tstack, *call, ncomp;
	uint32_t nb; /* the last band's size (its vertices in band[]) */
	double *cw;  /* cw[j]: the vertex weight of components 0..j */
};

/* The strongly connected components of the residual graph among the band's vertices that neither the
 * source reaches nor reach the sink (Tarjan's algorithm, without recursion): comp[x] their number
 * (NONE for the others), in the order Tarjan completes them, every component after those it reaches, so
 * that the source's side with the first j of them is closed: a minimum cut for every j (Picard and
 * Queyranne, "On the structure of all minimum cuts in a network", 1980). cw[j]: the vertex weight of
 * components 0..j, ncomp their number. Returns 0 (-1 never: the scratch is allocated by the caller). */
static int scc_order(struct fnet *F, struct fscratch *S, const struct lgraph *h)
{
	uint32_t *idx = F->level, counter = 0, sp = 0, cs = 0, r, x;

	S->ncomp = 0;
	for (x = 0; x < F->nn; x++)
		idx[x] = NONE, S->comp[x] = NONE;
	for (r = 0; r < F->nb; r++) {
		if (S->ms[r] || S->mt[r] || idx[r] != NONE)
			continue;
		idx[r] = S->low[r] = counter++, S->tstack[sp++] = r, F->it[r] = F->first[r], S->call[cs++] = r;
		while (cs) {
			x = S->call[cs - 1];
			if (F->it[x] < F->first[x + 1]) {
				uint64_t a = F->it[x]++;
				uint32_t y = F->head[a];

				if (F->res[a] <= ML_FLOW_EPS || S->ms[y] || S->mt[y])
					continue;
				if (idx[y] == NONE) {
					idx[y] = S->low[y] = counter++, S->tstack[sp++] = y;
					F->it[y] = F->first[y], S->call[cs++] = y;
				} else if (S->comp[y] == NONE && idx[y] < S->low[x]) {
					S->low[x] = idx[y];
				}
				continue;
			}
			cs--;
			if (cs && S->low[x] < S->low[S->call[cs - 1]])
				S->low[S->call[cs - 1]] = S->low[x];
			if (S->low[x] == idx[x]) {
				double w = S->ncomp ? S->cw[S->ncomp - 1] : 0;
				uint32_t y;

				do {
					y = S->tstack[--sp];
					S->comp[y] = S->ncomp, w += h->c[S->band[y]];
				} while (y != x);
				S->cw[S->ncomp++] = w;
			}
		}
	}
	return 0;
}

/* Grows one side of the band: breadth-first from the pair's boundary bnd[] into part p, no heavier than
 * limit. Appends to band[] from *nb. */
static void grow_side(const struct lgraph *h, const uint32_t *part, uint32_t p, double limit, struct fscratch *S,
		      uint32_t *nb, const uint32_t *bnd, uint32_t nbnd)
{
	uint32_t qh = 0, qt = 0, i, start = *nb;
	double w = 0;

	for (i = 0; i < nbnd; i++) {
		uint32_t v = bnd[i];

		if (part[v] != p || S->idx[v] != NONE || w + h->c[v] > limit)
			continue;
		S->idx[v] = (*nb)++, S->band[S->idx[v]] = v, w += h->c[v];
	}
	for (qh = start, qt = *nb; qh < qt; qh++) {
		uint32_t v = S->band[qh];
		uint64_t e;

		for (e = h->xadj[v]; e < h->xadj[v + 1]; e++) {
			uint32_t x = h->adj[e];

			if (part[x] != p || S->idx[x] != NONE || w + h->c[x] > limit)
				continue;
			S->idx[x] = qt++, S->band[S->idx[x]] = x, w += h->c[x];
		}
		*nb = qt;
	}
	*nb = qt;
}

/* One round on the pair (a, b) with band limits la (side a) and lb (side b). Returns 1 when the cut
 * fell (part and wt updated), 0 when the band holds no smaller cut, 2 when its smaller minimum cuts
 * break the bounds, -1 when out of memory. */
static int flow_pair(const struct lgraph *h, uint32_t a, uint32_t b, double la, double lb, const double *cap,
		     const double *lo, uint32_t *part, double *wt, struct fscratch *S, const uint32_t *bnd,
		     uint32_t nbnd)
{
	struct fnet F;
	uint32_t nb = 0, i, s, t;
	uint64_t na = 0, *pos = NULL;
	double init = 0, flow = 0;
	int rc = -1;

	memset(&F, 0, sizeof(F));
	grow_side(h, part, a, la, S, &nb, bnd, nbnd);
	grow_side(h, part, b, lb, S, &nb, bnd, nbnd);
	if (!nb)
		return 0;
	s = nb, t = nb + 1;
	F.nb = nb, F.nn = nb + 2;
	F.first = calloc((size_t)F.nn + 1, sizeof(*F.first));
	pos = malloc(((size_t)F.nn + 1) * sizeof(*pos));
	if (!F.first || !pos)
		goto out;
	for (i = 0; i < nb; i++) { /* arcs: band neighbours, and one to the source and/or the sink */
		uint32_t v = S->band[i];
		int toa = 0, tob = 0;
		uint64_t e;

		for (e = h->xadj[v]; e < h->xadj[v + 1]; e++) {
			uint32_t x = h->adj[e];

			if (x == v)
				continue;
			if (S->idx[x] != NONE)
				F.first[i + 1]++;
			else if (part[x] == a)
				toa = 1;
			else if (part[x] == b)
				tob = 1;
		}
		F.first[i + 1] += (uint64_t)toa + (uint64_t)tob;
		F.first[s + 1] += (uint64_t)toa, F.first[t + 1] += (uint64_t)tob;
	}
	for (i = 0; i < F.nn; i++)
		F.first[i + 1] += F.first[i];
	na = F.first[F.nn];
	F.narcs = na;
	if (na >= NONE) { /* (arcs beyond 32-bit indices: this band is left alone) */
		rc = 0;
		goto out;
	}
	F.head = malloc((size_t)(na + 1) * sizeof(*F.head));
	F.rev = malloc((size_t)(na + 1) * sizeof(*F.rev));
	F.res = malloc((size_t)(na + 1) * sizeof(*F.res));
	F.level = malloc((size_t)F.nn * sizeof(*F.level));
	F.queue = malloc((size_t)F.nn * sizeof(*F.queue));
	F.pathv = malloc((size_t)F.nn * sizeof(*F.pathv));
	F.patha = malloc((size_t)F.nn * sizeof(*F.patha));
	F.it = malloc((size_t)F.nn * sizeof(*F.it));
	if (!F.head || !F.rev || !F.res || !F.level || !F.queue || !F.pathv || !F.patha || !F.it)
		goto out;
	if (S->msz < F.nn) {
		unsigned char *m1 = realloc(S->ms, F.nn), *m2;

		if (m1)
			S->ms = m1;
		m2 = realloc(S->mt, F.nn);
		if (m2)
			S->mt = m2;
		if (!m1 || !m2)
			goto out;
		S->msz = F.nn;
		free(S->comp), free(S->low), free(S->tstack), free(S->call), free(S->cw);
		S->comp = malloc((size_t)F.nn * sizeof(uint32_t)), S->low = malloc((size_t)F.nn * sizeof(uint32_t));
		S->tstack = malloc((size_t)F.nn * sizeof(uint32_t)), S->call = malloc((size_t)F.nn * sizeof(uint32_t));
		S->cw = malloc((size_t)F.nn * sizeof(double));
		if (!S->comp || !S->low || !S->tstack || !S->call || !S->cw) {
			S->msz = 0;
			goto out;
		}
	}
	memcpy(pos, F.first, ((size_t)F.nn + 1) * sizeof(*pos));
	for (i = 0; i < nb; i++) { /* each arc with its reverse: band pairs once, from the lower index */
		uint32_t v = S->band[i], side = part[v] == b;
		double wa = 0, wb = 0;
		int toa = 0, tob = 0;
		uint64_t e;

		for (e = h->xadj[v]; e < h->xadj[v + 1]; e++) {
			uint32_t x = h->adj[e], j = S->idx[x];

			if (x == v)
				continue;
			if (j != NONE) {
				if (j > i) {
					uint64_t p = pos[i]++, q = pos[j]++;

					F.head[p] = j, F.head[q] = i, F.rev[p] = (uint32_t)q, F.rev[q] = (uint32_t)p;
					F.res[p] = F.res[q] = h->w[e];
					if ((part[x] == b) != side)
						init += h->w[e];
				}
			} else if (part[x] == a) {
				wa += h->w[e], toa = 1;
			} else if (part[x] == b) {
				wb += h->w[e], tob = 1;
			}
		}
		if (toa) {
			uint64_t p = pos[i]++, q = pos[s]++;

			F.head[p] = s, F.head[q] = i, F.rev[p] = (uint32_t)q, F.rev[q] = (uint32_t)p;
			F.res[p] = F.res[q] = wa;
			if (side)
				init += wa;
		}
		if (tob) {
			uint64_t p = pos[i]++, q = pos[t]++;

			F.head[p] = t, F.head[q] = i, F.rev[p] = (uint32_t)q, F.rev[q] = (uint32_t)p;
			F.res[p] = F.res[q] = wb;
			if (!side)
				init += wb;
		}
	}
	/* the maximum flow, given up once it reaches the band's present cut (nothing to gain) */
	while (flow < init - ML_FLOW_EPS * (1 + init) && fnet_bfs(&F))
		flow += fnet_block(&F, init - flow);
	rc = 0;
	if (flow < init - ML_FLOW_EPS * (1 + init) - 1e-6) {
		uint32_t j, jbest = NONE;
		double base = wt[a], best = 0;

		fnet_reach(&F, s, S->ms);
		fnet_reach(&F, t, S->mt);
		if (scc_order(&F, S, h) < 0) {
			rc = -1;
			goto out;
		}
		/* the source's side X: what the source reaches and the first j components; a's weight then */
		for (i = 0; i < nb; i++) {
			if (part[S->band[i]] == a)
				base -= h->c[S->band[i]];
			if (S->ms[i])
				base += h->c[S->band[i]];
		}
		for (j = 0; j <= S->ncomp; j++) {
			double wa = base + (j ? S->cw[j - 1] : 0), wb = wt[a] + wt[b] - wa, dev;

			if (wa <= cap[a] + 1e-9 && wb <= cap[b] + 1e-9 && wa >= lo[a] - 1e-9 && wb >= lo[b] - 1e-9) {
				dev = wa - (cap[a] + lo[a]) / 2;
				dev = dev < 0 ? -dev : dev;
				if (jbest == NONE || dev < best)
					best = dev, jbest = j;
			}
		}
		rc = 2;
		if (jbest != NONE) {
			double wa = base + (jbest ? S->cw[jbest - 1] : 0);

			for (i = 0; i < nb; i++)
				part[S->band[i]] = S->ms[i] || (S->comp[i] != NONE && S->comp[i] < jbest) ? a : b;
			wt[b] += wt[a] - wa, wt[a] = wa;
			rc = 1;
		}
	}
out:
	for (i = 0; i < nb; i++)
		S->idx[S->band[i]] = NONE;
	S->nb = nb;
	free(pos);
	fnet_free(&F);
	return rc;
}

struct pairw {
	uint32_t a, b;
	double w;
};

static int pair_cmp(const void *x, const void *y)
{
	const struct pairw *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->b < q->b ? -1 : p->b > q->b;
}

static int pair_wcmp(const void *x, const void *y)
{
	const struct pairw *p = x, *q = y;

	if (p->w != q->w)
		return p->w > q->w ? -1 : 1;
	return pair_cmp(x, y);
}

/* The candidates of the boundaries (every vertex with a neighbour in another part, and what flows
 * moved and its neighbours), bucketed by part, so that a pair scans the candidates of its two parts only
 * (a scan of every candidate for each pair and round took most of the time with many parts: 63 % of a
 * 64-part refinement of a power-law graph, where nearly every pair of parts touches). An entry whose
 * vertex has moved to another part is moved to that part's bucket when met. */
struct cands {
	uint32_t **v, *n, *cap, k;
	uint32_t *stamp, cur; /* (n) a vertex met in this scan */
	unsigned char *in;    /* (n) a candidate */
};

static int cand_push(struct cands *C, uint32_t p, uint32_t v)
{
	if (C->n[p] == C->cap[p]) {
		uint32_t cap = C->cap[p] ? 2 * C->cap[p] : 16, *nv = realloc(C->v[p], (size_t)cap * sizeof(*nv));

		if (!nv)
			return -1;
		C->v[p] = nv, C->cap[p] = cap;
	}
	C->v[p][C->n[p]++] = v;
	return 0;
}

/* v a candidate (once). */
static int cand_add(struct cands *C, const uint32_t *part, uint32_t v)
{
	if (C->in[v])
		return 0;
	C->in[v] = 1;
	return cand_push(C, part[v], v);
}

/* u (of part a or b) is on the pair's boundary: a neighbour in the other of the two. */
static int on_pair_boundary(const struct lgraph *h, const uint32_t *part, uint32_t a, uint32_t b, uint32_t u)
{
	uint64_t e;

	for (e = h->xadj[u]; e < h->xadj[u + 1]; e++) {
		uint32_t p = part[h->adj[e]];

		if (p != part[u] && (p == a || p == b))
			return 1;
	}
	return 0;
}

/* The boundary of the pair (a, b): the vertices of a with a neighbour in b and those of b with one in a,
 * among the candidates of a and b, into bnd. -1 when out of memory. */
static int64_t pair_boundary(const struct lgraph *h, const uint32_t *part, uint32_t a, uint32_t b, struct cands *C,
			     uint32_t *bnd)
{
	uint32_t ps[2] = { a, b }, i, j, nbnd = 0;

	C->cur++;
	for (j = 0; j < 2; j++) {
		uint32_t p = ps[j];

		for (i = 0; i < C->n[p];) {
			uint32_t u = C->v[p][i], q = part[u];

			if (q != p) { /* moved: to its part's bucket */
				C->v[p][i] = C->v[p][--C->n[p]];
				if (cand_push(C, q, u) < 0)
					return -1;
			} else {
				i++;
			}
			if ((q == a || q == b) && C->stamp[u] != C->cur) {
				C->stamp[u] = C->cur;
				if (on_pair_boundary(h, part, a, b, u))
					bnd[nbnd++] = u;
			}
		}
	}
	return nbnd;
}

static void cands_free(struct cands *C)
{
	uint32_t p;

	for (p = 0; C->v && p < C->k; p++)
		free(C->v[p]);
	free(C->v), free(C->n), free(C->cap), free(C->stamp), free(C->in);
}

int ml_flow_refine(struct ml *M, const struct lgraph *h, uint32_t k, const double *cap, const double *lo,
		   uint32_t *part, double *wt)
{
	struct fscratch S;
	struct pairw *pw = NULL;
	uint32_t *bnd = NULL, u, np = 0, i, j, npairs = 0;
	struct cands C = { 0 };
	int rc = -1, improved = 0;

	memset(&S, 0, sizeof(S));
	S.idx = malloc(((size_t)h->n + 1) * sizeof(uint32_t));
	S.band = malloc(((size_t)h->n + 1) * sizeof(uint32_t));
	bnd = malloc(((size_t)h->n + 1) * sizeof(uint32_t));
	C.k = k;
	C.v = calloc((size_t)k + 1, sizeof(*C.v));
	C.n = calloc((size_t)k + 1, sizeof(*C.n));
	C.cap = calloc((size_t)k + 1, sizeof(*C.cap));
	C.stamp = calloc((size_t)h->n + 1, sizeof(*C.stamp));
	C.in = calloc((size_t)h->n + 1, 1);
	if (!S.idx || !S.band || !bnd || !C.v || !C.n || !C.cap || !C.stamp || !C.in)
		goto out;
	for (u = 0; u < h->n; u++) {
		uint64_t e;

		S.idx[u] = NONE;
		for (e = h->xadj[u]; e < h->xadj[u + 1]; e++)
			if (part[h->adj[e]] != part[u]) {
				if (cand_add(&C, part, u) < 0)
					goto out;
				break;
			}
	}
	if (k == 2) {
		if (!(pw = malloc(sizeof(*pw))))
			goto out;
		pw[0] = (struct pairw){ 0, 1, 0 }, npairs = 1;
	} else { /* the pairs that cut edges join, heaviest first */
		for (u = 0; u < h->n; u++) {
			uint64_t e;

			for (e = h->xadj[u]; e < h->xadj[u + 1]; e++)
				np += part[h->adj[e]] > part[u];
		}
		if (!(pw = malloc(((size_t)np + 1) * sizeof(*pw))))
			goto out;
		np = 0;
		for (u = 0; u < h->n; u++) {
			uint64_t e;

			for (e = h->xadj[u]; e < h->xadj[u + 1]; e++)
				if (part[h->adj[e]] > part[u])
					pw[np++] = (struct pairw){ part[u], part[h->adj[e]], h->w[e] };
		}
		qsort(pw, np, sizeof(*pw), pair_cmp);
		for (i = 0, j = 0; i < np; i++)
			if (j && pw[j - 1].a == pw[i].a && pw[j - 1].b == pw[i].b)
				pw[j - 1].w += pw[i].w;
			else
				pw[j++] = pw[i];
		npairs = j;
		qsort(pw, npairs, sizeof(*pw), pair_wcmp);
		if (npairs / ML_FLOW_PAIRS_PER_PART > k)
			npairs = ML_FLOW_PAIRS_PER_PART * k;
	}
	for (i = 0; i < npairs; i++) {
		uint32_t a = pw[i].a, b = pw[i].b, nbnd;
		double alpha = 1;
		int round;

		if (map_now_ms() > (M->funtil > 0 && M->funtil < M->deadline ? M->funtil : M->deadline))
			break; /* (in auto's portfolio, past the construction's share for extras: its rest must fit) */
		for (round = 0; round < ML_FLOW_ROUNDS && (round == 0 || map_now_ms() <= M->deadline); round++) {
			double la = wt[a] - lo[a] < cap[b] - wt[b] ? wt[a] - lo[a] : cap[b] - wt[b];
			double lb = wt[b] - lo[b] < cap[a] - wt[a] ? wt[b] - lo[b] : cap[a] - wt[a];
			int64_t nb = pair_boundary(h, part, a, b, &C, bnd);
			int r;

			if (nb < 0)
				goto out;
			if (!(nbnd = (uint32_t)nb))
				break;
			r = flow_pair(h, a, b, alpha * (la > 0 ? la : 0), alpha * (lb > 0 ? lb : 0), cap, lo, part, wt,
				      &S, bnd, nbnd);
			if (r < 0)
				goto out;
			improved |= r == 1;
			for (j = 0; r == 1 && j < S.nb;
			     j++) { /* (what moved, and its neighbours, may be boundary now) */
				uint32_t v = S.band[j];
				uint64_t e;

				if (cand_add(&C, part, v) < 0)
					goto out;
				for (e = h->xadj[v]; e < h->xadj[v + 1]; e++)
					if (cand_add(&C, part, h->adj[e]) < 0)
						goto out;
			}
			if (r == 2 || (r == 0 && alpha >= ML_FLOW_ALPHA_MAX))
				break;
			if (alpha < ML_FLOW_ALPHA_MAX)
				alpha *= 2;
		}
	}
	rc = improved;
out:
	free(S.idx), free(S.band), free(S.ms), free(S.mt), free(bnd), free(pw);
	cands_free(&C);
	free(S.comp), free(S.low), free(S.tstack), free(S.call), free(S.cw);
	return rc;
}
