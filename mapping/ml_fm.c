/*
 * mapping/ml_fm.c: one level of the multilevel construction's k-way partitions (multilevel.c): the
 * initial partition by greedy growing, greedy k-way moves, k-way Fiduccia-Mattheyses with a gain heap,
 * exact sizes at the finest level (balance), diffusion of an overfull part's excess, and the size bounds
 * of a level.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ml_private.h"

#define ML_PASSES 4
/* A pass of FM (fm2, ml_kway_fm) stops after this many moves in a row without a new best prefix. It
 * was the larger of 64 and an eighth of the level's vertices; 32 (tests/bench/mapping, the construction
 * alone, 6 seeds each, means): mesh3d-16k's lighter form 18 % faster at the same cost (21.016 M against
 * 21.012 M), powerlaw-8k's 16 % faster, 0.4 % costlier, mesh2d-4k's full form 10 % faster and the same
 * mappings on 24 seeds. With ML_FINE_IMBALANCE (multilevel.c) as well, in less time than before:
 * mesh3d-16k 0.8 % and mesh2d-4k 0.5 % cheaper, powerlaw-8k 0.05 % costlier (RESULTS.md, eighth round). */
#define ML_FM_STALL 32

/* Cut of a partition (each edge counted twice). */
double ml_cut_of(const struct lgraph *h, const uint32_t *part)
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
void ml_grow(struct ml *M, const struct lgraph *h, uint32_t k, const uint32_t *tgt, uint32_t *part, double *conn,
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
				uint32_t start = ml_rnd(M) % n, j;

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

/* u's connection to each part: conn[p] += the weight of u's edges into p, for the parts listed in
 * tl[0..return-1] (conn[] all 0 before, and to be zeroed by the caller through tl). */
static uint32_t part_conn(const struct lgraph *h, const uint32_t *part, uint32_t u, double *conn, uint32_t *tl)
{
	uint32_t nt = 0;
	uint64_t e;

	for (e = h->xadj[u]; e < h->xadj[u + 1]; e++) {
		uint32_t p = part[h->adj[e]];

		if (conn[p] == 0)
			tl[nt++] = p;
		conn[p] += h->w[e];
	}
	return nt;
}

/* Greedy k-way moves: each vertex, in the order ord, to the part it is most connected to, within cap[].
 * wt[] is each part's weight (kept up to date). scratch: conn (k doubles, zero), tl (k). */
void ml_kway_pass(const struct lgraph *h, uint32_t k, const double *cap, const uint32_t *ord, uint32_t *part,
		  double *wt, double *conn, uint32_t *tl)
{
	uint32_t n = h->n, i;
	int pass;

	for (pass = 0; pass < ML_PASSES; pass++) {
		uint32_t moved = 0;

		for (i = 0; i < n; i++) {
			uint32_t u = ord[i], own = part[u], best = own, nt = 0, t;
			double bg = 0;

			nt = part_conn(h, part, u, conn, tl);
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

/* v's gain (the weight of its edges into the other part less that into its own) and its number of
 * edges into the other part, from scratch. */
static void fm2_gain(const struct lgraph *h, const uint32_t *part, uint32_t v, double *gain, uint32_t *next)
{
	uint64_t e;
	double g = 0;
	uint32_t x = 0;

	for (e = h->xadj[v]; e < h->xadj[v + 1]; e++)
		if (part[h->adj[e]] != part[v])
			g += h->w[e], x++;
		else
			g -= h->w[e];
	gain[v] = g, next[v] = x;
}

#ifdef ML_FM_CHECK
/* Built only into tests/unit/test_ml_fm_cache.c, which includes this file with ML_FM_CHECK defined: after
 * every move, each neighbour's cached gain and count (fm2) or part connections (k-way) are compared with
 * their values from scratch; mismatches are counted, not fixed. */
unsigned long ml_fm_checked, ml_fm_stale;

static void fm2_check(const struct lgraph *h, const uint32_t *part, const double *gain, const uint32_t *next,
		      uint32_t x)
{
	uint64_t e;
	double g = 0;
	uint32_t c = 0;

	for (e = h->xadj[x]; e < h->xadj[x + 1]; e++)
		if (part[h->adj[e]] != part[x])
			g += h->w[e], c++;
		else
			g -= h->w[e];
	ml_fm_checked++;
	if (c != next[x] || g - gain[x] > 1e-9 * (1 + (g < 0 ? -g : g)) || gain[x] - g > 1e-9 * (1 + (g < 0 ? -g : g)))
		ml_fm_stale++;
}
#define FM2_CHECK(h, part, gain, next, x) fm2_check(h, part, gain, next, x)
#else
#define FM2_CHECK(h, part, gain, next, x) ((void)0)
#endif

/* An addressable max-heap of vertices by gain[] (pos[v]: v's index, NONE outside). */
struct iheap {
	uint32_t *a, *pos, n;
	const double *key;
};

static void ih_set(struct iheap *H, uint32_t i, uint32_t v)
{
	H->a[i] = v, H->pos[v] = i;
}

static void ih_up(struct iheap *H, uint32_t i)
{
	uint32_t v = H->a[i];

	for (; i > 0 && H->key[H->a[(i - 1) / 2]] < H->key[v]; i = (i - 1) / 2)
		ih_set(H, i, H->a[(i - 1) / 2]);
	ih_set(H, i, v);
}

static void ih_down(struct iheap *H, uint32_t i)
{
	uint32_t v = H->a[i], c;

	while ((c = 2 * i + 1) < H->n) {
		if (c + 1 < H->n && H->key[H->a[c + 1]] > H->key[H->a[c]])
			c++;
		if (H->key[H->a[c]] <= H->key[v])
			break;
		ih_set(H, i, H->a[c]), i = c;
	}
	ih_set(H, i, v);
}

/* v's key changed (or v is new: pushed). */
static void ih_update(struct iheap *H, uint32_t v)
{
	if (H->pos[v] == NONE) {
		ih_set(H, H->n++, v);
		ih_up(H, H->n - 1);
	} else {
		ih_up(H, H->pos[v]);
		ih_down(H, H->pos[v]);
	}
}

static void ih_remove(struct iheap *H, uint32_t v)
{
	uint32_t i = H->pos[v], last = H->a[--H->n];

	H->pos[v] = NONE;
	if (i == H->n)
		return;
	ih_set(H, i, last);
	ih_up(H, i);
	ih_down(H, H->pos[last]);
}

/* ml_kway_fm for two parts, with a gain cache: a move changes only its neighbours' gains, by twice the
 * edge's weight, so that a move costs O(its degree x log n) instead of the sum of its neighbours'
 * degrees (the gain bookkeeping of Fiduccia and Mattheyses, "A linear-time heuristic for improving
 * network partitions", DAC 1982), each vertex once in an addressable heap. */
static int fm2(const struct lgraph *h, const double *cap, const double *lo, uint32_t *part, double *wt)
{
	uint32_t n = h->n, u, *logv = malloc(((size_t)n + 1) * sizeof(*logv)),
		 *next = malloc(((size_t)n + 1) * sizeof(*next));
	double *gain = malloc(((size_t)n + 1) * sizeof(*gain));
	unsigned char *locked = calloc((size_t)n + 1, 1);
	uint32_t stall_max = ML_FM_STALL;
	struct iheap H = { malloc(((size_t)n + 1) * sizeof(uint32_t)), malloc(((size_t)n + 1) * sizeof(uint32_t)), 0,
			   gain };
	int pass, rc = -1;

	if (!logv || !next || !gain || !locked || !H.a || !H.pos)
		goto out;
	for (u = 0; u < n; u++)
		H.pos[u] = NONE;
	for (pass = 0; pass < ML_PASSES; pass++) {
		double cur = 0, best = 0;
		uint32_t nlog = 0, bestpos = 0, stall = 0;

		memset(locked, 0, n);
		for (u = 0; u < n; u++) {
			fm2_gain(h, part, u, gain, next);
			if (next[u])
				ih_set(&H, H.n++, u);
		}
		for (u = H.n / 2; u-- > 0;) /* (heapify) */
			ih_down(&H, u);
		while (H.n && stall < stall_max) {
			uint32_t v = H.a[0], from = part[v], to = 1 - from;
			uint64_t e;

			ih_remove(&H, v);
			if (wt[from] - h->c[v] < lo[from] || wt[to] + h->c[v] > cap[to])
				continue; /* (back when a neighbour's move changes its gain) */
			locked[v] = 1;
			logv[nlog++] = v;
			wt[from] -= h->c[v], wt[to] += h->c[v];
			part[v] = to;
			cur += gain[v];
			if (cur > best + 1e-9 * (1 + best))
				best = cur, bestpos = nlog, stall = 0;
			else
				stall++;
			for (e = h->xadj[v]; e < h->xadj[v + 1]; e++) {
				uint32_t x = h->adj[e];

				if (x == v || locked[x])
					continue;
				if (part[x] == to)
					gain[x] -= 2 * h->w[e], next[x]--;
				else
					gain[x] += 2 * h->w[e], next[x]++;
				FM2_CHECK(h, part, gain, next, x);
				if (next[x])
					ih_update(&H, x);
				else if (H.pos[x] != NONE)
					ih_remove(&H, x);
			}
		}
		while (H.n)
			H.pos[H.a[--H.n]] = NONE;
		while (nlog > bestpos) { /* back to the best prefix */
			uint32_t v = logv[--nlog];

			wt[part[v]] -= h->c[v], wt[1 - part[v]] += h->c[v];
			part[v] = 1 - part[v];
		}
		if (best <= 0)
			break;
	}
	rc = 0;
out:
	free(logv), free(next), free(gain), free(locked), free(H.a), free(H.pos);
	return rc;
}

/* The k-way gain cache: each vertex's connection to each part it has edges into, in slots at the
 * vertex's own edge offsets (at most its degree of them), so that a move updates its neighbours' entries
 * in O(their number of adjacent parts) and their best moves are found without their edges. */
struct kslot {
	uint32_t p, cnt;
	double conn;
};

struct kcache {
	struct kslot *s;     /* vertex u's slots: s[xadj[u] .. xadj[u] + ns[u]) */
	uint32_t *ns, *pidx; /* pidx: scratch, a part's slot (k, NONE) */
};

static void kc_build(const struct lgraph *h, const uint32_t *part, struct kcache *C, uint32_t u)
{
	struct kslot *s = C->s + h->xadj[u];
	uint32_t ns = 0, j;
	uint64_t e;

	for (e = h->xadj[u]; e < h->xadj[u + 1]; e++) {
		uint32_t p = part[h->adj[e]];

		if (C->pidx[p] == NONE)
			C->pidx[p] = ns, s[ns++] = (struct kslot){ p, 0, 0 };
		s[C->pidx[p]].cnt++, s[C->pidx[p]].conn += h->w[e];
	}
	for (j = 0; j < ns; j++)
		C->pidx[s[j].p] = NONE;
	C->ns[u] = ns;
}

/* x lost (sign -1) or gained (+1) an edge of weight w into part p. */
static void kc_add(const struct lgraph *h, struct kcache *C, uint32_t x, uint32_t p, double w, int sign)
{
	struct kslot *s = C->s + h->xadj[x];
	uint32_t j, ns = C->ns[x];

	for (j = 0; j < ns && s[j].p != p; j++)
		;
	if (sign > 0) {
		if (j == ns)
			s[C->ns[x]++] = (struct kslot){ p, 0, 0 };
		s[j].cnt++, s[j].conn += w;
	} else if (j < ns && !--s[j].cnt) { /* (no edge into p left: the slot goes, the order kept) */
		memmove(s + j, s + j + 1, (ns - j - 1) * sizeof(*s));
		C->ns[x]--;
	} else if (j < ns) {
		s[j].conn -= w;
	}
}

#ifdef ML_FM_CHECK
/* x's cached connections against its edges (see fm2_check): every part it has edges into once, with the
 * right count and weight, and no other. */
static void kc_check(const struct lgraph *h, const uint32_t *part, const struct kcache *C, uint32_t x)
{
	const struct kslot *s = C->s + h->xadj[x];
	uint32_t j, i, cnt;
	uint64_t e;
	double w;
	int bad = 0;

	for (j = 0; j < C->ns[x] && !bad; j++) {
		for (i = 0; i < j; i++)
			bad |= s[i].p == s[j].p;
		for (cnt = 0, w = 0, e = h->xadj[x]; e < h->xadj[x + 1]; e++)
			if (part[h->adj[e]] == s[j].p)
				cnt++, w += h->w[e];
		bad |= cnt != s[j].cnt || w - s[j].conn > 1e-9 * (1 + w) || s[j].conn - w > 1e-9 * (1 + w);
	}
	for (e = h->xadj[x]; e < h->xadj[x + 1] && !bad; e++) {
		for (j = 0; j < C->ns[x] && s[j].p != part[h->adj[e]]; j++)
			;
		bad |= j == C->ns[x];
	}
	ml_fm_checked++;
	ml_fm_stale += bad;
}
#define KC_CHECK(h, part, C, x) kc_check(h, part, C, x)
#else
#define KC_CHECK(h, part, C, x) ((void)0)
#endif

/* The best move of u (to a part with room, its own part keeping at least lo[]), from the cache: *to,
 * or NONE. */
static double kc_best(const struct lgraph *h, const uint32_t *part, const double *wt, const double *cap,
		      const double *lo, const struct kcache *C, uint32_t u, uint32_t *to)
{
	const struct kslot *s = C->s + h->xadj[u];
	uint32_t own = part[u], ns = C->ns[u], j;
	double bg = -1e300, co = 0;

	*to = NONE;
	if (wt[own] - h->c[u] < lo[own])
		return bg;
	for (j = 0; j < ns; j++)
		if (s[j].p == own)
			co = s[j].conn;
	for (j = 0; j < ns; j++) {
		uint32_t p = s[j].p;

		if (p != own && wt[p] + h->c[u] <= cap[p] && s[j].conn - co > bg)
			bg = s[j].conn - co, *to = p;
	}
	return bg;
}

/* k-way Fiduccia-Mattheyses: moves by best gain, negative ones too (each vertex once a pass), then
 * the best prefix of the pass is kept; passes until one gains nothing. Each vertex's connections to
 * the parts are cached (struct kcache, rebuilt each pass), a move updating only its neighbours'; a
 * heap entry whose gain fell since it was pushed goes back with its current gain. Returns -1 when out
 * of memory. */
int ml_kway_fm(const struct lgraph *h, uint32_t k, const double *cap, const double *lo, uint32_t *part, double *wt,
	       double *conn, uint32_t *tl)
{
	uint32_t n = h->n, u, *logv = malloc(((size_t)n + 1) * sizeof(*logv)),
		 *logp = malloc(((size_t)n + 1) * sizeof(*logp));
	unsigned char *locked = calloc((size_t)n + 1, 1);
	uint32_t stall_max = ML_FM_STALL;
	struct heap H = { 0 };
	struct kcache C = { malloc(((size_t)h->xadj[n] + 1) * sizeof(struct kslot)),
			    malloc(((size_t)n + 1) * sizeof(uint32_t)), malloc(((size_t)k + 1) * sizeof(uint32_t)) };
	int pass, rc = -1;

	(void)conn, (void)tl;
	if (k == 2) {
		free(logv), free(logp), free(locked), free(C.s), free(C.ns), free(C.pidx);
		return fm2(h, cap, lo, part, wt);
	}
	if (!logv || !logp || !locked || !C.s || !C.ns || !C.pidx)
		goto out;
	for (u = 0; u < k; u++)
		C.pidx[u] = NONE;
	for (pass = 0; pass < ML_PASSES; pass++) {
		double cur = 0, best = 0;
		uint32_t nlog = 0, bestpos = 0, stall = 0, to, to2;

		H.n = 0;
		memset(locked, 0, n);
		for (u = 0; u < n; u++) {
			double gn;

			kc_build(h, part, &C, u);
			gn = kc_best(h, part, wt, cap, lo, &C, u, &to);
			if (to != NONE && hpush(&H, gn, u) < 0)
				goto out;
		}
		while (H.n && stall < stall_max) {
			struct hitem it = hpop(&H);
			uint32_t from;
			double gn;
			uint64_t e;

			if (locked[it.v])
				continue;
			gn = kc_best(h, part, wt, cap, lo, &C, it.v, &to);
			if (to == NONE)
				continue;
			if (gn < it.gain - 1e-12 * (1 + (it.gain < 0 ? -it.gain : it.gain))) { /* stale */
				if (hpush(&H, gn, it.v) < 0)
					goto out;
				continue;
			}
			from = part[it.v];
			locked[it.v] = 1;
			logv[nlog] = it.v, logp[nlog++] = from;
			wt[from] -= h->c[it.v], wt[to] += h->c[it.v];
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
				kc_add(h, &C, x, from, h->w[e], -1);
				kc_add(h, &C, x, to, h->w[e], +1);
				KC_CHECK(h, part, &C, x);
				gx = kc_best(h, part, wt, cap, lo, &C, x, &to2);
				if (to2 != NONE && hpush(&H, gx, x) < 0)
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
	free(logv), free(logp), free(locked), free(H.a), free(C.s), free(C.ns), free(C.pidx);
	return rc;
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
int ml_balance(const struct lgraph *h, uint32_t k, const uint32_t *tgt, uint32_t *part, double *wt, double *conn,
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

			if (part[u] != p)
				continue;
			nt = part_conn(h, part, u, conn, tl);
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
int ml_diffuse(const struct lgraph *h, uint32_t k, const uint32_t *tgt, const double *cap, uint32_t *part, double *wt,
	       double *conn, uint32_t *tl)
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

			if (wt[own] <= cap[own])
				continue;
			nt = part_conn(h, part, u, conn, tl);
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
void ml_bounds(const struct lgraph *h, uint32_t k, const uint32_t *tgt, double frac, const uint32_t *part, double *wt,
	       double *cap, double *lo)
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

/* After ml_diffuse: a part still outside its bounds keeps what it holds (it may not grow past it, nor
 * shrink below it), so that FM never makes it worse. */
void ml_widen(uint32_t k, const double *wt, double *cap, double *lo)
{
	uint32_t i;

	for (i = 0; i < k; i++) {
		if (cap[i] < wt[i])
			cap[i] = wt[i];
		if (lo[i] > wt[i])
			lo[i] = wt[i];
	}
}
