/*
 * mapping/bisect.c: the "bisect" engine, top-down recursive bipartitioning along the target's own
 * tree (the dual recursive bipartitioning idea of Scotch, our implementation).
 *
 * A tree node is a level and a contiguous range of slots (slots are numbered depth-first). Its
 * children are split into two halves of about equal capacity; the node's ranks are bipartitioned
 * into parts of exactly the sizes those halves will hold, minimising the traffic between the parts,
 * and each half recurses. In a tree every pair of children of a node is at the same distance, so
 * minimising each cut is exactly the cost at that node. Irregular trees (hosts of different sizes,
 * switches with different numbers of hosts) are handled exactly: capacities are real slot counts.
 * With fewer ranks than slots, ranks fill the first half before the second, so the job stays compact.
 *
 * Bipartitioning: greedy graph growing from a pseudo-peripheral rank, then Fiduccia-Mattheyses passes
 * that move ranks alternately from each side (sizes stay exact), keeping the best prefix of moves.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"

#define FM_PASSES 6
#define FM_STALL_MIN 32 /* a pass stops after clamp(part size / 4, these) moves without a new best */
#define FM_STALL_MAX 1024
#define NONE UINT32_MAX

struct heap_item {
	double gain;
	uint32_t v;
};

struct heap {
	struct heap_item *a;
	size_t n, cap;
};

struct bis {
	const map_graph_t *g;
	const topo_target_t *t;
	uint32_t *perm;
	uint32_t *loc;       /* rank -> index in the current subset, NONE outside */
	unsigned char *side; /* by subset index */
	unsigned char *locked;
	double *gain; /* by subset index: gain of moving it to the other side */
	uint32_t *moves;
	struct heap h[2];
	int oom;
};

static void heap_push(struct bis *B, struct heap *h, double gain, uint32_t v)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 256;
		struct heap_item *na = realloc(h->a, cap * sizeof(*na));

		if (!na) {
			B->oom = 1;
			return;
		}
		h->a = na, h->cap = cap;
	}
	for (i = h->n++; i > 0 && h->a[(i - 1) / 2].gain < gain; i = (i - 1) / 2)
		h->a[i] = h->a[(i - 1) / 2];
	h->a[i].gain = gain, h->a[i].v = v;
}

static struct heap_item heap_pop(struct heap *h)
{
	struct heap_item top = h->a[0], last = h->a[--h->n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < h->n) {
		if (c + 1 < h->n && h->a[c + 1].gain > h->a[c].gain)
			c++;
		if (h->a[c].gain <= last.gain)
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	return top;
}

/* Pops the best valid entry of side s (skips stale ones); NONE when empty. */
static uint32_t best_of(struct bis *B, int s)
{
	while (B->h[s].n) {
		struct heap_item it = heap_pop(&B->h[s]);

		if (!B->locked[it.v] && B->side[it.v] == s && it.gain == B->gain[it.v])
			return it.v;
	}
	return NONE;
}

/* Gains of every subset member: traffic to the other side minus traffic to its own side. */
static void compute_gains(struct bis *B, const uint32_t *R, uint32_t nr)
{
	const map_graph_t *g = B->g;
	uint32_t i;

	for (i = 0; i < nr; i++) {
		uint64_t k;

		B->gain[i] = 0;
		for (k = g->xadj[R[i]]; k < g->xadj[R[i] + 1]; k++) {
			uint32_t j = B->loc[g->adj[k]];

			if (j != NONE)
				B->gain[i] += B->side[j] != B->side[i] ? g->w[k] : -g->w[k];
		}
	}
}

/* Moves subset member i to the other side and updates its neighbours' gains. */
static void move(struct bis *B, const uint32_t *R, uint32_t i, int push)
{
	const map_graph_t *g = B->g;
	uint64_t k;

	B->side[i] ^= 1;
	B->gain[i] = -B->gain[i];
	for (k = g->xadj[R[i]]; k < g->xadj[R[i] + 1]; k++) {
		uint32_t j = B->loc[g->adj[k]];

		if (j == NONE || j == i)
			continue;
		B->gain[j] += B->side[j] == B->side[i] ? -2 * g->w[k] : 2 * g->w[k];
		if (push && !B->locked[j])
			heap_push(B, &B->h[B->side[j]], B->gain[j], j);
	}
}

/* One FM pass with alternating sides; keeps the best balanced prefix. Returns the gain kept. */
static double fm_pass(struct bis *B, const uint32_t *R, uint32_t nr)
{
	uint32_t i, nm = 0, best_nm = 0, stall = nr / 4;
	double cum = 0, best = 0;

	stall = stall < FM_STALL_MIN ? FM_STALL_MIN : stall > FM_STALL_MAX ? FM_STALL_MAX : stall;
	B->h[0].n = B->h[1].n = 0;
	compute_gains(B, R, nr);
	for (i = 0; i < nr; i++) {
		B->locked[i] = 0;
		heap_push(B, &B->h[B->side[i]], B->gain[i], i);
	}
	for (;;) {
		uint32_t a = best_of(B, 0), b;

		if (a == NONE)
			break;
		B->locked[a] = 1;
		cum += B->gain[a];
		move(B, R, a, 1);
		b = best_of(B, 1);
		if (b == NONE) {
			move(B, R, a, 0);
			break;
		}
		B->locked[b] = 1;
		cum += B->gain[b];
		move(B, R, b, 1);
		B->moves[nm++] = a, B->moves[nm++] = b;
		if (cum > best + 1e-9 * (1 + (best > 0 ? best : -best)))
			best = cum, best_nm = nm;
		else if (nm - best_nm > 2 * stall)
			break;
	}
	while (nm > best_nm)
		move(B, R, B->moves[--nm], 0);
	return best;
}

/* Greedy graph growing: side 0 gets size0 ranks grown from a seed, the rest is side 1. */
static void grow(struct bis *B, const uint32_t *R, uint32_t nr, uint32_t size0)
{
	uint32_t got = 0, next = 0, i;

	for (i = 0; i < nr; i++)
		B->side[i] = 1, B->locked[i] = 0;
	compute_gains(B, R, nr); /* everything on side 1: gain = -(traffic inside the subset) */
	B->h[1].n = 0;
	while (got < size0) {
		uint32_t v = best_of(B, 1);

		if (v == NONE) { /* a new component: lowest remaining member */
			while (B->side[next] == 0)
				next++;
			v = next;
		}
		B->locked[v] = 1;
		move(B, R, v, 1);
		got++;
	}
}

/* Bipartitions R[0..nr) into its first size0 ranks and the rest. */
static void bisect(struct bis *B, uint32_t *R, uint32_t nr, uint32_t size0)
{
	uint32_t i, p, *tmp;
	int pass;

	if (size0 == 0 || size0 == nr)
		return;
	for (i = 0; i < nr; i++)
		B->loc[R[i]] = i;
	grow(B, R, nr, size0);
	for (pass = 0; pass < FM_PASSES && !B->oom; pass++)
		if (fm_pass(B, R, nr) <= 0)
			break;
	tmp = (uint32_t *)B->moves; /* reuse as scratch: nr entries */
	for (i = 0, p = 0; i < nr; i++)
		if (B->side[i] == 0)
			tmp[p++] = R[i];
	for (i = 0; i < nr; i++)
		if (B->side[i] == 1)
			tmp[p++] = R[i];
	memcpy(R, tmp, nr * sizeof(*R));
	for (i = 0; i < nr; i++)
		B->loc[R[i]] = NONE;
}

/* End of the child of slot lo at level l within [lo, hi): the next slot whose level-l group differs
 * (children are contiguous ranges of slots). */
static uint32_t child_end(const topo_target_t *t, int l, uint32_t lo, uint32_t hi)
{
	uint32_t gid = t->group[(size_t)lo * t->nlevels + l], s = lo + 1;

	while (s < hi && t->group[(size_t)s * t->nlevels + l] == gid)
		s++;
	return s;
}

/* Places ranks R[0..nr) on the slots [lo, hi), whose deepest common level is at least l. The
 * children of that node are the level l+1 groups; cut is one of their boundaries (or hi). */
static void place(struct bis *B, uint32_t *R, uint32_t nr, int l, uint32_t lo, uint32_t hi)
{
	const topo_target_t *t = B->t;
	uint32_t mid, cap0, size0, s, best_mid, best_diff;

	while (nr > 0 && l + 1 < t->nlevels && child_end(t, l + 1, lo, hi) >= hi)
		l++; /* a single child: go down */
	if (nr == 0 || B->oom)
		return;
	if (l + 1 >= t->nlevels || hi - lo == 1) {
		B->perm[R[0]] = lo;
		return;
	}
	/* split the children into two halves of about equal capacity */
	best_mid = child_end(t, l + 1, lo, hi);
	best_diff = UINT32_MAX;
	for (s = lo; s < hi; s = mid) {
		uint32_t diff;

		mid = child_end(t, l + 1, s, hi);
		if (mid >= hi)
			break;
		diff = (mid - lo) > (hi - mid) ? (mid - lo) - (hi - mid) : (hi - mid) - (mid - lo);
		if (diff < best_diff)
			best_diff = diff, best_mid = mid;
	}
	cap0 = best_mid - lo;
	size0 = nr < cap0 ? nr : cap0; /* fill the first half first */
	bisect(B, R, nr, size0);
	place(B, R, size0, l, lo, best_mid);
	place(B, R + size0, nr - size0, l, best_mid, hi);
}

int map_engine_bisect(const map_ctx_t *ctx, uint32_t *perm)
{
	uint32_t n = ctx->g->n, i, *R = malloc(((size_t)n + 1) * sizeof(*R));
	struct bis B = { .g = ctx->g, .t = ctx->t, .perm = perm };
	int rc = 0;

	B.loc = malloc(((size_t)n + 1) * sizeof(*B.loc));
	B.side = malloc((size_t)n + 1);
	B.locked = malloc((size_t)n + 1);
	B.gain = malloc(((size_t)n + 1) * sizeof(*B.gain));
	B.moves = malloc(((size_t)n + 2) * sizeof(*B.moves));
	if (!R || !B.loc || !B.side || !B.locked || !B.gain || !B.moves) {
		rc = -1;
	} else {
		memset(B.loc, 0xff, (size_t)n * sizeof(*B.loc));
		for (i = 0; i < n; i++)
			R[i] = i;
		place(&B, R, n, 0, 0, ctx->t->nslots);
		rc = B.oom ? -1 : 0;
	}
	free(R), free(B.loc), free(B.side), free(B.locked), free(B.gain), free(B.moves);
	free(B.h[0].a), free(B.h[1].a);
	if (rc < 0) {
		errno = ENOMEM;
		return rm_error_set(ctx->err, "bisect", 0, 0, "out of memory");
	}
	return 0;
}
