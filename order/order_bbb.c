/*
 * order/order_bbb.c: BBB, basic building blocks (Albing et al., EuroMPI 2011).
 *
 * Block extents: slow dimensions short, fast ones long, extent times link cost about equal in every
 * dimension, about BBB_BLOCK_NODES nodes per block; an odd dimension gets an odd extent, 3 or 5 as
 * in the paper, so that it splits without a 1-wide slice (17x8x24 routers with costs 1,2,0.67 and
 * two nodes per router give 3x2x8: the paper's 4x2x8 with x made odd).
 *
 * Weave (order_bbb_weave.c): the block is a stack of slabs two routers thick along the chain axis
 * (the fastest link), traversed slab after slab; inside a slab the cross-section is halved
 * recursively, the axis of largest extent times cost first, and the innermost step pairs routers
 * along the chain axis. Every prefix and every window of the weave is therefore a compact, thick
 * piece of a slab stack, and the first steps use the cheapest link. It starts at local (0,0,0) and
 * ends on the far chain face, so the blocks of a column chain with one hop. Blocks too large for the
 * pair tables, or shapes the recursion cannot weave, use a depth-first search that prefers, in
 * order: no straight run longer than two, staying inside the smallest aligned 2x2x2 (then 4x4x4,
 * ...) group, the neighbour with the fewest onward moves (Warnsdorff), turning, the faster link;
 * a search over budget falls back to the snake weave.
 *
 * Block order: the plain snake of order_blocks_layout (columns of blocks around the chain axis's
 * ring, then the next column, then the next layer). Multi-level orders over the block grid were
 * measured on the XE6 bench and all did worse on weighted hop for 32-128 and 256+ node jobs without
 * reaching the thickness targets: super-blocks of 2 or 2x2 blocks chained along z (mid hop +2 to
 * +5 %), a cost-weighted Hilbert bisection of the block grid (+1 to +4 %) or of the whole torus
 * (+4 to +11 %), columns visited in pairs or 2x2 groups (+1 to +2 %), and a helix around the x
 * ring (256+ hop +0.6 %).
 * At load 0.9 an allocation is a set of runs of the order spread over five (256+) to ten (32-128)
 * times the job's size, so 256+ hop is set by how far apart the order puts positions 100 to 3000
 * nodes apart: a column that fills a ring comes back next to where it started, which no
 * bisection order does.
 * Thickness is set by adjacency at 2 to 64 routers apart in the order, which rewards blocks
 * that are cubes in router counts (4x4 or 4x8 cross-sections: 256+ thickness 2.05 to 2.13)
 * while hop rewards cost-balanced ones (a 2- or 3-by-2 cross-section: 32-128 hop 4.83 to 4.91
 * against 5.1 to 5.4): on this geometry no layout found meets both.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "order_bbb.h"

#define BBB_BLOCK_NODES 128
#define BBB_MAX_WEAVE 512 /* larger blocks use the snake weave (search cost) */

/* An odd dimension of 3 or more takes 3- or 5-wide blocks (the paper's rule for its odd x): the
 * balanced extent rounded down to odd, so the cross-section stays no wider than balance and the
 * fast chain axis takes the rest. */
static int odd_extent(int dim, int e)
{
	if (dim % 2 == 0 || dim < 3)
		return e;
	if (e % 2 == 0)
		e--;
	return e < 3 ? 3 : e > 5 ? 5 : e;
}

void order_bbb_default_block(const topo_torus_spec_t *spec, int ext[3])
{
	double target = (double)BBB_BLOCK_NODES / spec->nodes_per_router, best = 1e300;
	double lc[3][33], le[33]; /* log(extent * cost), log(extent): no logs in the loop */
	int e[3], d, lim[3];

	if (target < 1)
		target = 1;
	for (d = 0; d < 3; d++) {
		lim[d] = spec->dims[d] < 32 ? spec->dims[d] : 32;
		ext[d] = 1;
		for (e[0] = 1; e[0] <= 32; e[0]++)
			lc[d][e[0]] = log(e[0] * spec->link_cost[d]);
	}
	for (e[0] = 1; e[0] <= 32; e[0]++)
		le[e[0]] = log(e[0]);
	for (e[0] = 1; e[0] <= lim[0]; e[0]++)
		for (e[1] = 1; e[1] <= lim[1]; e[1]++)
			for (e[2] = 1; e[2] <= lim[2]; e[2]++) {
				double g = 0, score;
				int ndims = 0;

				for (d = 0; d < 3; d++)
					if (spec->dims[d] > 1) {
						g += lc[d][e[d]];
						ndims++;
					}
				g = ndims ? g / ndims : 0;
				score = 2.0 * fabs(le[e[0]] + le[e[1]] + le[e[2]] - log(target));
				for (d = 0; d < 3; d++) {
					if (spec->dims[d] > 1)
						score += fabs(lc[d][e[d]] - g);
					if (spec->dims[d] % e[d] == 1)
						score += 0.15; /* needs a widened last block */
					else if (spec->dims[d] % e[d])
						score += 0.3; /* leaves a narrower block */
					if (e[d] % 2 && e[d] > 1)
						score += 0.1; /* odd extents weave less well */
				}
				if (score < best - 1e-9) {
					best = score;
					memcpy(ext, e, sizeof(e));
				}
			}
	for (d = 0; d < 3; d++)
		ext[d] = odd_extent(spec->dims[d], ext[d]);
}

/* ---- the weave search -------------------------------------------------------------------------- */

struct wsearch {
	int w[3];
	int n;
	double cost[3];
	unsigned char *used;
	int *path; /* cell per depth */
	int *dir;  /* direction (0..5) of the step into path[depth] */
	int *cand; /* 6 candidate directions per depth, sorted */
	int *ncand, *next;
	int *queue;
	unsigned char *seen;
	int end;
	long budget;
	int max_run;          /* straight runs longer than this are not tried (0: no limit) */
	int warnsdorff_first; /* rank moves by onward degree before group locality */
	int nlev;             /* nested groups: level L groups cells by coordinate >> shift[L][axis] */
	int shift[64][3];
};

/* Nested groups for the weave: starting from one cell, double the axis whose doubled extent costs
 * least (extent times link cost), so that every prefix of the weave fills a cost-balanced box:
 * with costs z 0.67, x 1, y 2 the groups are z2, z2x2, z4x2, z4x4, z4x4y2, ... */
static void make_groups(struct wsearch *S)
{
	int ext[3] = { 1, 1, 1 }, sh[3] = { 0, 0, 0 }, i;
	const double *cst = S->cost;

	S->nlev = 0;
	memcpy(S->shift[S->nlev++], sh, sizeof(sh));
	while (S->nlev < 64) {
		int best = -1;

		for (i = 0; i < 3; i++)
			if (ext[i] < S->w[i] && (best < 0 || 2 * ext[i] * cst[i] < 2 * ext[best] * cst[best] - 1e-9))
				best = i;
		if (best < 0)
			break;
		ext[best] *= 2;
		sh[best]++;
		memcpy(S->shift[S->nlev++], sh, sizeof(sh));
	}
}

static void cell_xyz(const struct wsearch *S, int c, int l[3])
{
	l[2] = c % S->w[2];
	l[1] = (c / S->w[2]) % S->w[1];
	l[0] = c / (S->w[2] * S->w[1]);
}

/* Neighbour of c in direction d (axis d / 2, sign by d % 2), or -1. */
static int step(const struct wsearch *S, int c, int d)
{
	int l[3], a = d / 2;

	cell_xyz(S, c, l);
	l[a] += (d & 1) ? -1 : 1;
	if (l[a] < 0 || l[a] >= S->w[a])
		return -1;
	return (l[0] * S->w[1] + l[1]) * S->w[2] + l[2];
}

/* Available degree of an unvisited cell: unvisited neighbours plus the head. */
static int avail(const struct wsearch *S, int u, int head)
{
	int d, k = 0;

	for (d = 0; d < 6; d++) {
		int v = step(S, u, d);

		if (v >= 0 && (!S->used[v] || v == head))
			k++;
	}
	return k;
}

/* After moving to head (from prev): false when a dead end or a split remainder makes the rest
 * impossible. */
static int feasible(struct wsearch *S, int head, int prev, int depth)
{
	int d, qh = 0, qt = 0, reached = 0, remaining = S->n - depth - 2;

	if (head == S->end)
		return remaining == 0;
	for (d = 0; d < 12; d++) {
		int u = step(S, d < 6 ? head : prev, d % 6);

		if (u < 0 || S->used[u])
			continue;
		if (avail(S, u, head) < (u == S->end ? 1 : 2))
			return 0;
	}
	memset(S->seen, 0, (size_t)S->n);
	S->queue[qt++] = head;
	S->seen[head] = 1;
	while (qh < qt) {
		int c = S->queue[qh++];

		for (d = 0; d < 6; d++) {
			int v = step(S, c, d);

			if (v >= 0 && !S->used[v] && !S->seen[v]) {
				S->seen[v] = 1;
				S->queue[qt++] = v;
				reached++;
			}
		}
	}
	return reached == remaining;
}

/* Level of the smallest aligned power-of-two group holding both a and b (they differ by one step). */
static int group_level(const struct wsearch *S, int a, int b)
{
	int la[3], lb[3], lvl;

	cell_xyz(S, a, la);
	cell_xyz(S, b, lb);
	for (lvl = 0; lvl < S->nlev; lvl++) {
		const int *sh = S->shift[lvl];

		if ((la[0] >> sh[0]) == (lb[0] >> sh[0]) && (la[1] >> sh[1]) == (lb[1] >> sh[1]) &&
		    (la[2] >> sh[2]) == (lb[2] >> sh[2]))
			return lvl;
	}
	return lvl;
}

/* Sorts the candidate moves from path[depth] into cand[depth*6..]. */
static void order_moves(struct wsearch *S, int depth)
{
	int c = S->path[depth], d, k = 0, i, j;
	double key[6];
	int *cd = S->cand + 6 * depth;
	int run = depth >= 2 && S->dir[depth] == S->dir[depth - 1];

	for (d = 0; d < 6; d++) {
		int v = step(S, c, d);

		if (v < 0 || S->used[v])
			continue;
		key[k] = 0;
		if (depth >= 1 && d == S->dir[depth] && run) {
			if (S->max_run)
				continue; /* a third straight step */
			key[k] += 1e6;
		}
		key[k] += (S->warnsdorff_first ? 1e2 : 1e4) * group_level(S, c, v);
		key[k] += (S->warnsdorff_first ? 1e4 : 1e2) * avail(S, v, v);
		if (depth >= 1 && d == S->dir[depth])
			key[k] += 10;
		key[k] += S->cost[d / 2];
		cd[k++] = d;
	}
	for (i = 1; i < k; i++)
		for (j = i; j > 0 && key[j] < key[j - 1]; j--) {
			double t = key[j];
			int td = cd[j];

			key[j] = key[j - 1];
			key[j - 1] = t;
			cd[j] = cd[j - 1];
			cd[j - 1] = td;
		}
	S->ncand[depth] = k;
	S->next[depth] = 0;
}

/* Depth-first search for a Hamiltonian path from cell 0 to S->end. Returns 1 when found. */
static int search(struct wsearch *S)
{
	int depth = 0;

	memset(S->used, 0, (size_t)S->n);
	S->path[0] = 0;
	S->used[0] = 1;
	S->dir[0] = -1;
	if (S->n == 1)
		return S->end == 0;
	order_moves(S, 0);
	while (depth >= 0) {
		int d, v;

		if (S->next[depth] == S->ncand[depth]) {
			S->used[S->path[depth]] = 0;
			depth--;
			continue;
		}
		if (--S->budget < 0)
			return 0;
		d = S->cand[6 * depth + S->next[depth]++];
		v = step(S, S->path[depth], d);
		S->used[v] = 1;
		if (!feasible(S, v, S->path[depth], depth)) {
			S->used[v] = 0;
			continue;
		}
		S->path[++depth] = v;
		S->dir[depth] = d;
		if (depth == S->n - 1)
			return 1;
		order_moves(S, depth);
	}
	return 0;
}

static int wsearch_alloc(struct wsearch *S)
{
	S->used = malloc((size_t)S->n);
	S->seen = malloc((size_t)S->n);
	S->path = malloc((size_t)S->n * sizeof(int));
	S->dir = malloc((size_t)S->n * sizeof(int));
	S->cand = malloc((size_t)S->n * 6 * sizeof(int));
	S->ncand = malloc((size_t)S->n * sizeof(int));
	S->next = malloc((size_t)S->n * sizeof(int));
	S->queue = malloc((size_t)S->n * sizeof(int));
	return (S->used && S->seen && S->path && S->dir && S->cand && S->ncand && S->next && S->queue) ? 0 : -1;
}

static void wsearch_free(struct wsearch *S)
{
	free(S->used);
	free(S->seen);
	free(S->path);
	free(S->dir);
	free(S->cand);
	free(S->ncand);
	free(S->next);
	free(S->queue);
}

/* The BBB weave of one block shape: the hierarchical slab weave, else a search for end cells on the
 * far chain face (same cross-section position as the start first, then the corners), else the snake
 * weave. */
static int weave_bbb(order_weave_t *wv, const double cost[3])
{
	struct wsearch S;
	static const int ends[4][2] = { { 0, 0 }, { 1, 0 }, { 0, 1 }, { 1, 1 } };
	int i, found = 0;

	if (order_bbb_weave_hier(wv, cost) == 0)
		return 0;
	memset(&S, 0, sizeof(S));
	memcpy(S.w, wv->w, sizeof(S.w));
	memcpy(S.cost, cost, sizeof(S.cost));
	S.n = wv->w[0] * wv->w[1] * wv->w[2];
	make_groups(&S);
	if (S.n > BBB_MAX_WEAVE || wsearch_alloc(&S) < 0) {
		wsearch_free(&S);
		return order_weave_snake(wv, cost);
	}
	for (i = 0; i < 16 && !found; i++) {
		int l1 = ends[i & 3][0] * (wv->w[1] - 1), l2 = ends[i & 3][1] * (wv->w[2] - 1);
		int par = (wv->w[0] - 1 + l1 + l2) & 1;

		if ((ends[i & 3][0] && wv->w[1] == 1) || (ends[i & 3][1] && wv->w[2] == 1))
			continue;
		if ((S.n % 2 == 0) != (par == 1)) /* bipartite parity of a Hamiltonian path */
			continue;
		S.end = ((wv->w[0] - 1) * wv->w[1] + l1) * wv->w[2] + l2;
		S.budget = S.n + (3L * S.n + 3000 < 2000000L / S.n ? 3L * S.n + 3000 : 2000000L / S.n);
		/* first with runs of at most two, then without the limit; each first by group locality,
		 * then by onward degree (more robust on larger blocks) */
		S.max_run = (i & 4) ? 0 : 2;
		S.warnsdorff_first = i >= 8;
		found = search(&S);
	}
	if (found)
		for (i = 0; i < S.n; i++) {
			int l[3];

			cell_xyz(&S, S.path[i], l);
			wv->cell[3 * i] = (int16_t)l[0];
			wv->cell[3 * i + 1] = (int16_t)l[1];
			wv->cell[3 * i + 2] = (int16_t)l[2];
		}
	wsearch_free(&S);
	return found ? 0 : order_weave_snake(wv, cost);
}

int order_method_bbb(order_ctx_t *ctx, rm_error_t *err)
{
	return order_blocks_layout(ctx, weave_bbb, err);
}
