/*
 * order/order_bbb_weave.c: the hierarchical BBB weave.
 *
 * A block (axis 0 is the chain axis, the fastest link) is cut in two, each half again, down to single
 * cells; the weave visits the first half completely, then the second, at every level, so every
 * prefix of the weave is a union of whole sub-boxes of the cut tree plus part of one. The cut rule
 * makes slabs two routers thick along the chain axis (the chain axis is cut while it is longer than
 * two), then halves the slab's cross-section, the axis of largest extent times link cost first, and
 * pairs the last two cells along the chain axis: the first steps of the weave use the cheapest link,
 * windows of a slab or more are slab stacks (thick), and the block ends on its far chain face.
 *
 * Which path runs through each half is found bottom-up over end-point pairs: for every sub-box shape,
 * the set of (first cell, last cell) pairs that such a hierarchical Hamiltonian path can have, closed
 * under the box's mirror symmetries and reversal, with one representative path per pair. Two halves
 * join where the first half's last cell is next to the second half's first cell. Any axis may be cut
 * (parity often requires it), but a cut other than the rule's costs a penalty proportional to the
 * cells it spans, a straight run of three steps through a join costs half that, and the
 * representative of each pair is the one of least penalty: the weave turns whenever the cut rule
 * lets it (in a 4x2x8 block always; with a 3-wide cross-section, slab changes keep a run of three,
 * since avoiding it needs cuts that cost small jobs about 4 % in hop). Shapes are memoised; the
 * work is O(n^3) at worst for n cells, so blocks are limited to ORDER_BBB_HIER_MAX.
 */
#include <stdlib.h>
#include <string.h>

#include "order_bbb.h"

#define HW_MAX_SHAPES 64

/* How a pair (s, e) of a shape is obtained. */
struct hw_how {
	int8_t kind;        /* 0 none, 1 leaf, 2 join, 3 derived */
	int8_t first;       /* join: child visited first (0 low, 1 high); derived: transform */
	int8_t axis;        /* join: split axis */
	int32_t a, b;       /* join: pair ids in first and second child; derived: base pair id */
	int8_t fdir, ldir;  /* direction of the first and last step (2 * axis + negative), -1: none */
	int8_t lead, trail; /* straight steps at the start and at the end (capped at 3) */
	float score;        /* penalties: cells times the cut's rank, straight runs of three */
};

#define HW_RUN_PENALTY 0.5f /* per cell of the joined box, for a straight run longer than two */

static int8_t hw_cap(int v)
{
	return (int8_t)(v > 3 ? 3 : v);
}

/* Step facts of the path A ++ junction step j ++ B (na, nb cells) into out; returns the straight
 * run through the junction. */
static int hw_chain(const struct hw_how *A, int na, int j, const struct hw_how *B, int nb, struct hw_how *out)
{
	int ra = (na > 1 && A->ldir == j) ? A->trail : 0, rb = (nb > 1 && B->fdir == j) ? B->lead : 0;

	out->fdir = (int8_t)(na > 1 ? A->fdir : j);
	out->lead = na == 1 ? hw_cap(1 + rb) : (A->lead >= na - 1 && A->fdir == j) ? hw_cap(A->lead + 1 + rb) : A->lead;
	out->ldir = (int8_t)(nb > 1 ? B->ldir : j);
	out->trail = nb == 1                                ? hw_cap(1 + ra)
		     : (B->trail >= nb - 1 && B->ldir == j) ? hw_cap(B->trail + 1 + ra)
							    : B->trail;
	return ra + 1 + rb;
}

struct hw_shape {
	int w[3];
	int n;
	int h[3];           /* extent of the low half when split along each axis (0: not split) */
	int child[3][2];    /* shape indices of the low and high halves per split axis */
	struct hw_how *how; /* n * n, pair id = s * n + e */
	int *by_start;      /* CSR: pairs grouped by start cell */
	int *start_off;     /* n + 1 */
};

struct hw {
	struct hw_shape shape[HW_MAX_SHAPES];
	int nshapes;
	const double *cost;
};

static void hw_xyz(const int w[3], int c, int l[3])
{
	l[2] = c % w[2];
	l[1] = (c / w[2]) % w[1];
	l[0] = c / (w[2] * w[1]);
}

static int hw_cell(const int w[3], const int l[3])
{
	return (l[0] * w[1] + l[1]) * w[2] + l[2];
}

/* Applies transform t (bits 0-2: mirror axis, bit 3: reverse) to a pair id. */
static int hw_transform_pair(const struct hw_shape *S, int p, int t)
{
	int s = p / S->n, e = p % S->n, ls[3], le[3], d, tmp;

	hw_xyz(S->w, s, ls);
	hw_xyz(S->w, e, le);
	for (d = 0; d < 3; d++)
		if (t & (1 << d)) {
			ls[d] = S->w[d] - 1 - ls[d];
			le[d] = S->w[d] - 1 - le[d];
		}
	s = hw_cell(S->w, ls);
	e = hw_cell(S->w, le);
	if (t & 8) {
		tmp = s;
		s = e;
		e = tmp;
	}
	return s * S->n + e;
}

static int hw_shape_get(struct hw *H, const int w[3]);

/* Low half of a cut of extent n: the middle, made even when that keeps slabs two thick. */
static int hw_half(int n, int chain)
{
	int h = n / 2;

	if (chain && n > 2 && (h & 1))
		h++;
	return h;
}

/* The cut rule: fills axes[] with every axis that can be cut, the rule's choice first, then by
 * extent times cost; h[] with the low half of each. Returns how many (0 for a single cell). */
static int hw_cuts(const int w[3], const double cost[3], int axes[3], int h[3])
{
	int d, k = 0, i, j, pref = -1;
	double v[3];

	for (d = 0; d < 3; d++)
		v[d] = w[d] >= 2 ? w[d] * cost[d] : -1;
	if (w[0] > 2)
		pref = 0;                /* slabs along the chain axis */
	else if (w[1] >= 2 || w[2] >= 2) /* cross-section; ties: the dearer link outermost */
		pref = (v[1] > v[2] + 1e-9 || (v[1] > v[2] - 1e-9 && cost[1] >= cost[2])) ? 1 : 2;
	else if (w[0] == 2)
		pref = 0; /* the innermost pair along the chain axis */
	if (pref < 0)
		return 0;
	axes[k++] = pref;
	for (d = 0; d < 3; d++)
		if (d != pref && w[d] >= 2)
			axes[k++] = d;
	for (i = 2; i < k; i++)
		for (j = i; j > 1 && v[axes[j]] > v[axes[j - 1]]; j--) {
			int t = axes[j];

			axes[j] = axes[j - 1];
			axes[j - 1] = t;
		}
	for (i = 0; i < k; i++)
		h[i] = hw_half(w[axes[i]], axes[i] == 0);
	return k;
}

/* Builds the pair table of a composite shape from its halves. */
static int hw_join(struct hw *H, int si, int a, int rank)
{
	struct hw_shape *S = &H->shape[si];
	int f, p;

	for (f = 0; f < 2; f++) {
		const struct hw_shape *A = &H->shape[S->child[a][f]], *B = &H->shape[S->child[a][!f]];
		int offA = f ? S->h[a] : 0, offB = f ? 0 : S->h[a];

		for (p = 0; p < A->n * A->n; p++) {
			int le[3], ls[3], lb[3], s2, q, k;

			if (!A->how[p].kind)
				continue;
			hw_xyz(A->w, p % A->n, le);
			if (le[a] != (f ? 0 : A->w[a] - 1))
				continue; /* last cell not on the face towards B */
			memcpy(lb, le, sizeof(lb));
			lb[a] = f ? B->w[a] - 1 : 0;
			s2 = hw_cell(B->w, lb);
			hw_xyz(A->w, p / A->n, ls);
			ls[a] += offA;
			for (k = B->start_off[s2]; k < B->start_off[s2 + 1]; k++) {
				int le2[3], id;

				q = B->by_start[k];
				hw_xyz(B->w, q % B->n, le2);
				le2[a] += offB;
				id = hw_cell(S->w, ls) * S->n + hw_cell(S->w, le2);
				struct hw_how c;
				float sc = A->how[p].score + B->how[q].score + (float)(S->n * rank);

				if (hw_chain(&A->how[p], A->n, 2 * a + f, &B->how[q], B->n, &c) > 2)
					sc += HW_RUN_PENALTY * (float)S->n;
				if (!S->how[id].kind || sc < S->how[id].score) {
					S->how[id] = c;
					S->how[id].score = sc;
					S->how[id].kind = 2;
					S->how[id].first = (int8_t)f;
					S->how[id].axis = (int8_t)a;
					S->how[id].a = p;
					S->how[id].b = q;
				}
			}
		}
	}
	return 0;
}

/* Step facts of a path under transform t (mirrors, then reversal). */
static void hw_transform_steps(const struct hw_how *in, int t, struct hw_how *out)
{
	int f = in->fdir, l = in->ldir;

	if (f >= 0 && (t & (1 << (f / 2))))
		f ^= 1;
	if (l >= 0 && (t & (1 << (l / 2))))
		l ^= 1;
	if (t & 8) {
		out->fdir = (int8_t)(l >= 0 ? l ^ 1 : -1);
		out->ldir = (int8_t)(f >= 0 ? f ^ 1 : -1);
		out->lead = in->trail;
		out->trail = in->lead;
	} else {
		out->fdir = (int8_t)f;
		out->ldir = (int8_t)l;
		out->lead = in->lead;
		out->trail = in->trail;
	}
}

/* Closes the pair table under the 16 symmetries and indexes it by start cell. */
static int hw_close(struct hw_shape *S)
{
	int p, t, nn = S->n * S->n, k = 0;
	struct hw_how *base = malloc((size_t)nn * sizeof(*base));

	if (!base)
		return -1;
	memcpy(base, S->how, (size_t)nn * sizeof(*base));
	for (p = 0; p < nn; p++)
		if (base[p].kind == 1 || base[p].kind == 2)
			for (t = 1; t < 16; t++) {
				int q = hw_transform_pair(S, p, t);

				if (!S->how[q].kind || (S->how[q].kind == 3 && base[p].score < S->how[q].score)) {
					hw_transform_steps(&base[p], t, &S->how[q]);
					S->how[q].kind = 3;
					S->how[q].first = (int8_t)t;
					S->how[q].a = p;
					S->how[q].score = base[p].score;
				}
			}
	free(base);
	S->start_off = calloc((size_t)S->n + 1, sizeof(int));
	for (p = 0; S->start_off && p < nn; p++)
		if (S->how[p].kind)
			S->start_off[p / S->n + 1]++;
	for (p = 0; S->start_off && p < S->n; p++)
		S->start_off[p + 1] += S->start_off[p];
	S->by_start = malloc(((size_t)(S->start_off ? S->start_off[S->n] : 0) + 1) * sizeof(int));
	if (!S->start_off || !S->by_start)
		return -1;
	for (p = 0; p < nn; p++)
		if (S->how[p].kind)
			S->by_start[k++] = p;
	return 0;
}

/* Returns the index of shape w, building it (and its halves) on first use; -1 on failure. */
static int hw_shape_get(struct hw *H, const int w[3])
{
	struct hw_shape *S;
	int i, si, half[3], c0, c1, k, nax, axes[3], hs[3];

	for (i = 0; i < H->nshapes; i++)
		if (!memcmp(H->shape[i].w, w, sizeof(int) * 3))
			return i;
	if (H->nshapes == HW_MAX_SHAPES)
		return -1;
	si = H->nshapes++;
	S = &H->shape[si];
	memset(S, 0, sizeof(*S));
	memcpy(S->w, w, sizeof(S->w));
	S->n = w[0] * w[1] * w[2];
	S->how = calloc((size_t)S->n * (size_t)S->n, sizeof(struct hw_how));
	if (!S->how)
		return -1;
	nax = hw_cuts(w, H->cost, axes, hs);
	if (nax == 0) {
		S->how[0].kind = 1;
		S->how[0].fdir = S->how[0].ldir = -1;
		return hw_close(S) < 0 ? -1 : si;
	}
	for (k = 0; k < nax; k++) {
		int a = axes[k];

		memcpy(half, w, sizeof(half));
		half[a] = hs[k];
		c0 = hw_shape_get(H, half);
		half[a] = w[a] - hs[k];
		c1 = hw_shape_get(H, half);
		S = &H->shape[si];
		if (c0 < 0 || c1 < 0)
			return -1;
		S->h[a] = hs[k];
		S->child[a][0] = c0;
		S->child[a][1] = c1;
		if (hw_join(H, si, a, k) < 0)
			return -1;
	}
	return hw_close(S) < 0 ? -1 : si;
}

/* Writes the cells of pair p of shape si to out (local coordinates, 3 ints per cell). */
static void hw_emit(const struct hw *H, int si, int p, int *out)
{
	const struct hw_shape *S = &H->shape[si];
	const struct hw_how *how = &S->how[p];
	int i, d;

	if (how->kind == 1) {
		out[0] = out[1] = out[2] = 0;
	} else if (how->kind == 3) {
		int t = how->first;

		hw_emit(H, si, how->a, out);
		for (i = 0; i < S->n; i++)
			for (d = 0; d < 3; d++)
				if (t & (1 << d))
					out[3 * i + d] = S->w[d] - 1 - out[3 * i + d];
		for (i = 0; (t & 8) && i < S->n / 2; i++)
			for (d = 0; d < 3; d++) {
				int tmp = out[3 * i + d];

				out[3 * i + d] = out[3 * (S->n - 1 - i) + d];
				out[3 * (S->n - 1 - i) + d] = tmp;
			}
	} else {
		int f = how->first, a = how->axis, ca = S->child[a][f], cb = S->child[a][!f];
		int na = H->shape[ca].n, offa = f ? S->h[a] : 0, offb = f ? 0 : S->h[a];

		hw_emit(H, ca, how->a, out);
		hw_emit(H, cb, how->b, out + 3 * na);
		for (i = 0; i < S->n; i++)
			out[3 * i + a] += i < na ? offa : offb;
	}
}

static void hw_free(struct hw *H)
{
	int i;

	for (i = 0; i < H->nshapes; i++) {
		free(H->shape[i].how);
		free(H->shape[i].by_start);
		free(H->shape[i].start_off);
	}
}

int order_bbb_weave_hier(order_weave_t *wv, const double cost[3])
{
	static const int ends[4][2] = { { 0, 0 }, { 1, 0 }, { 0, 1 }, { 1, 1 } };
	struct hw H;
	int si, i, p = -1, *out, n = wv->w[0] * wv->w[1] * wv->w[2];

	if (n > ORDER_BBB_HIER_MAX)
		return -1;
	memset(&H, 0, sizeof(H));
	H.cost = cost;
	si = hw_shape_get(&H, wv->w);
	for (i = 0; si >= 0 && i < 4; i++) {
		int le[3] = { wv->w[0] - 1, ends[i][0] * (wv->w[1] - 1), ends[i][1] * (wv->w[2] - 1) };
		int q = hw_cell(wv->w, le);

		const struct hw_how *c = &H.shape[si].how[q], *b = p >= 0 ? &H.shape[si].how[p] : NULL;

		/* start at cell 0, end on a corner of the far chain face; least penalty, then a first
		 * step along the chain axis (the cheapest link) */
		if (c->kind &&
		    (!b || c->score < b->score || (c->score == b->score && c->fdir / 2 == 0 && b->fdir / 2 != 0)))
			p = q;
	}
	out = p >= 0 ? malloc((size_t)n * 3 * sizeof(int)) : NULL;
	if (out) {
		hw_emit(&H, si, p, out);
		for (i = 0; i < 3 * n; i++)
			wv->cell[i] = (int16_t)out[i];
		free(out);
	}
	hw_free(&H);
	return out ? 0 : -1;
}
