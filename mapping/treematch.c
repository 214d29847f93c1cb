/*
 * mapping/treematch.c: TreeMatch (Jeannot and Mercier), bottom-up grouping over the target's levels,
 * implemented on sparse graphs (REFERENCE.md section 1).
 *
 * The target is embedded in a uniform tree whose arity at each level is the largest number of
 * children any group of that level has (a uniform target embeds exactly). Starting from the ranks,
 * padded with virtual zero-traffic vertices to the number of leaves, each level groups its units into
 * groups of its arity so as to keep the most traffic inside groups: exhaustively when the number of
 * possible groupings is small, otherwise greedily (grow a group from the heaviest free unit by adding
 * the free unit most connected to it) followed by improving swaps between groups. Groups are then
 * aggregated (edge weights summed) into the units of the level above. Finally the tree of groups is
 * laid onto the target top-down and the virtual vertices dropped. Memory is O(edges + slots).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tm_private.h"

/* Number of ways to split nu units into groups of a, capped at cap + 1. */
static double groupings(uint32_t nu, uint32_t a, double cap)
{
	double count = 1;
	uint32_t left = nu;

	while (left > a && count <= cap) {
		/* the lowest free unit picks a - 1 partners among left - 1: C(left - 1, a - 1) */
		double c = 1;
		uint32_t k;

		for (k = 1; k < a; k++)
			c = c * (left - k) / k;
		count *= c;
		left -= a;
	}
	return count;
}

struct exh {
	uint32_t nu, a;
	const double *m;   /* nu x nu */
	uint32_t *cur, *best;
	unsigned char *used;
	double best_in;
};

static void exh_rec(struct exh *x, uint32_t pos, double inside)
{
	uint32_t i, first;

	if (pos == x->nu) {
		if (inside > x->best_in) {
			x->best_in = inside;
			memcpy(x->best, x->cur, x->nu * sizeof(*x->cur));
		}
		return;
	}
	if (pos % x->a == 0) { /* new group: start it with the lowest free unit */
		for (first = 0; x->used[first]; first++)
			;
		x->used[first] = 1;
		x->cur[pos] = first;
		exh_rec(x, pos + 1, inside);
		x->used[first] = 0;
		return;
	}
	for (i = x->cur[pos - 1] + 1; i < x->nu; i++) {
		uint32_t k, g0 = pos - pos % x->a, need = x->a - 1 - pos % x->a, avail = 0;
		double add = 0;

		if (x->used[i])
			continue;
		for (k = i + 1; k < x->nu && avail < need; k++)
			avail += !x->used[k];
		if (avail < need)
			break; /* the group cannot be completed from here on */
		for (k = g0; k < pos; k++)
			add += x->m[(size_t)x->cur[k] * x->nu + i];
		x->used[i] = 1;
		x->cur[pos] = i;
		exh_rec(x, pos + 1, inside + add);
		x->used[i] = 0;
	}
}

/* Optimal grouping of a small level by enumeration. */
static int group_exhaustive(const tm_units_t *u, uint32_t a, uint32_t *members)
{
	struct exh x = { .nu = u->n, .a = a, .best_in = -1 };
	double *m = calloc((size_t)u->n * u->n, sizeof(*m));
	uint32_t i;

	x.cur = calloc(u->n, sizeof(*x.cur));
	x.best = members;
	x.used = calloc(u->n, 1);
	if (!m || !x.cur || !x.used) {
		free(m), free(x.cur), free(x.used);
		return -1;
	}
	for (i = 0; i < u->nreal; i++) {
		uint64_t k;

		for (k = u->xadj[i]; k < u->xadj[i + 1]; k++)
			m[(size_t)i * u->n + u->adj[k]] = u->w[k];
	}
	x.m = m;
	exh_rec(&x, 0, 0);
	free(m), free(x.cur), free(x.used);
	return 0;
}

/* Groups the units of one level into groups of a: members[g * a + p]. */
int tm_group_level(const tm_units_t *u, uint32_t a, uint32_t *members, double deadline)
{
	if (a == 1) {
		uint32_t i;

		for (i = 0; i < u->n; i++)
			members[i] = i;
		return 0;
	}
	if (u->n <= 16 && groupings(u->n, a, 20000) <= 20000)
		return group_exhaustive(u, a, members);
	if (tm_group_greedy(u, a, members) < 0)
		return -1;
	return tm_group_improve(u, a, members, deadline);
}

/* Child index of every slot at every level, in one pass: calls back with (slot, level, index). Fills
 * A[l] with the largest arity of level l (A[0] = 1). */
static void child_indices(const topo_target_t *t, uint32_t *A, uint64_t *vleaf, const uint64_t *stride)
{
	int L = t->nlevels, l;
	uint32_t s, c[64] = { 0 };

	for (l = 0; l < L; l++)
		A[l] = 1;
	for (s = 0; s < t->nslots; s++) {
		const uint32_t *gs = t->group + (size_t)s * L, *gp = gs - L;

		if (vleaf)
			vleaf[s] = 0;
		for (l = 1; l < L; l++) {
			if (s == 0 || gs[l - 1] != gp[l - 1])
				c[l] = 0;
			else if (gs[l] != gp[l])
				c[l]++;
			if (c[l] + 1 > A[l])
				A[l] = c[l] + 1;
			if (vleaf)
				vleaf[s] += c[l] * stride[l];
		}
	}
}

/* The uniform tree the target embeds in: arities A[], number of leaves (returned, 0 if too large) and
 * the real slot of every virtual leaf (*vslot, UINT32_MAX for holes). */
static uint64_t virtual_tree(const topo_target_t *t, uint32_t *A, uint32_t **vslot)
{
	uint64_t stride[64], V = 1, *vleaf, cap = 4 * (uint64_t)t->nslots + (1u << 20);
	int l;
	uint32_t s;

	child_indices(t, A, NULL, NULL);
	for (l = t->nlevels - 1; l >= 1; l--) {
		stride[l] = V;
		V *= A[l];
		if (V > cap)
			return 0;
	}
	vleaf = malloc(((size_t)t->nslots + 1) * sizeof(*vleaf));
	*vslot = malloc(V * sizeof(**vslot));
	if (!vleaf || !*vslot) {
		free(vleaf), free(*vslot);
		*vslot = NULL;
		return 0;
	}
	child_indices(t, A, vleaf, stride);
	memset(*vslot, 0xff, V * sizeof(**vslot));
	for (s = 0; s < t->nslots; s++)
		(*vslot)[vleaf[s]] = s;
	free(vleaf);
	return V;
}

/* The units of the level above: one per group, edges summed between groups. Caller frees the arrays
 * (xadj, adj, w) of *out. */
static int aggregate(const tm_units_t *u, uint32_t a, const uint32_t *members, tm_units_t *out)
{
	uint32_t ng = u->n / a, g, p, *grp = malloc((size_t)u->n * sizeof(*grp)), *mark, *pos;
	uint64_t cnt = 0, nadj = u->xadj[u->nreal] + 1, *xadj = malloc(((size_t)ng + 1) * sizeof(*xadj));
	uint32_t *adj = malloc(nadj * sizeof(*adj));
	double *w = malloc(nadj * sizeof(*w));

	mark = calloc(ng + 1, sizeof(*mark));
	pos = malloc((size_t)(ng + 1) * sizeof(*pos));
	if (!grp || !xadj || !adj || !w || !mark || !pos) {
		free(grp), free(xadj), free(adj), free(w), free(mark), free(pos);
		return -1;
	}
	for (g = 0; g < ng; g++)
		for (p = 0; p < a; p++)
			grp[members[(size_t)g * a + p]] = g;
	for (g = 0; g < ng; g++) {
		xadj[g] = cnt;
		for (p = 0; p < a; p++) {
			uint32_t m = members[(size_t)g * a + p];
			uint64_t k;

			for (k = m < u->nreal ? u->xadj[m] : 0; m < u->nreal && k < u->xadj[m + 1]; k++) {
				uint32_t y = grp[u->adj[k]];

				if (y == g)
					continue;
				if (mark[y] != g + 1) {
					mark[y] = g + 1;
					pos[y] = (uint32_t)(cnt - xadj[g]);
					adj[cnt] = y;
					w[cnt++] = 0;
				}
				w[xadj[g] + pos[y]] += u->w[k];
			}
		}
	}
	xadj[ng] = cnt;
	free(grp), free(mark), free(pos);
	out->n = out->nreal = ng;
	out->xadj = xadj, out->adj = adj, out->w = w;
	return 0;
}

static void units_free(tm_units_t *u, const map_graph_t *g)
{
	if (u->xadj != g->xadj) {
		free((void *)u->xadj), free((void *)u->adj), free((void *)u->w);
	}
}

/* Lays the groups onto the virtual tree top-down: vid[unit] of the leaf units (ranks first). */
static uint32_t *assign_top_down(uint32_t **members, const uint32_t *A, int L, uint64_t V)
{
	uint32_t *vid = calloc(1, sizeof(*vid)), *next;
	uint64_t nunits = 1, i;
	int l;

	for (l = 1; vid && l < L; l++) {
		next = malloc((nunits * A[l] + 1) * sizeof(*next));
		if (!next)
			break;
		for (i = 0; i < nunits * A[l]; i++)
			next[members[l][i]] = vid[i / A[l]] * A[l] + (uint32_t)(i % A[l]);
		free(vid);
		vid = next;
		nunits *= A[l];
	}
	if (l < L) {
		free(vid);
		return NULL;
	}
	(void)V;
	return vid;
}

int map_engine_treematch(const map_ctx_t *ctx, uint32_t *perm)
{
	const map_graph_t *g = ctx->g;
	int L = ctx->t->nlevels, l, rc = 0;
	uint32_t A[64], *vslot = NULL, *members[64] = { 0 }, *vid, r;
	tm_units_t cur;
	uint64_t V;

	if (L < 2 || L > 64)
		return map_engine_identity(ctx, perm);
	V = virtual_tree(ctx->t, A, &vslot);
	if (!V || V >= UINT32_MAX) {
		errno = ENOMEM;
		return rm_error_set(ctx->err, "treematch", 0, 0, "target too large or too irregular");
	}
	cur = (tm_units_t){ .n = (uint32_t)V, .nreal = g->n, .xadj = g->xadj, .adj = g->adj, .w = g->w };
	for (l = L - 1; rc == 0 && l >= 1; l--) {
		tm_units_t next;

		members[l] = malloc((size_t)cur.n * sizeof(uint32_t));
		rc = members[l] ? tm_group_level(&cur, A[l], members[l], ctx->deadline) : -1;
		if (rc == 0 && l > 1) {
			rc = aggregate(&cur, A[l], members[l], &next);
			units_free(&cur, g);
			if (rc == 0)
				cur = next;
			else
				cur.xadj = g->xadj;
		}
	}
	if (l == 0 || rc < 0)
		units_free(&cur, g);
	vid = rc == 0 ? assign_top_down(members, A, L, V) : NULL;
	for (r = 0; vid && r < g->n; r++)
		perm[r] = vslot[vid[r]];
	for (l = 1; l < L; l++)
		free(members[l]);
	free(vslot);
	if (!vid) {
		errno = ENOMEM;
		return rm_error_set(ctx->err, "treematch", 0, 0, "out of memory");
	}
	free(vid);
	return 0;
}
