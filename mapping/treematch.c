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
 *
 * Irregular targets (hosts of different sizes, different cache levels per node type) embed with holes,
 * and fewer ranks than slots leave spare slots: then every position gets a type (tm_types.c: how many
 * ranks go below it, and how they split among its children) and each level forms groups of the
 * shapes its positions need, so that no rank lands in a hole. The published algorithm assumes a
 * uniform tree; this is our extension of it.
 *
 * Large groups (more than TM_FACTOR_MIN units: 16-core packages, 64-host switches) are formed in
 * factors, as a multilevel clustering does: groups of d (a divisor of a, at most TM_FACTOR_MIN), then
 * groups of a / d of those, then swaps and KL at arity a (issue 31). Greedy growth of 16 units at once
 * wanders: on a 3D grid it closes a 2x2x2 cube, then spends its last 8 units on any side and leaves
 * holes that later groups fill badly (90 % of the traffic a tiling keeps at 1M ranks, 2.4x the
 * time of 8-core packages in the swaps and KL that mend it); by factors, cubes pair up into 2x2x4
 * blocks. Up to TM_FLAT_MAX_RANKS ranks (TM_FLAT_MAX_UNITS units above the finest level) a level is
 * also grouped flat, and the grouping that keeps more traffic inside wins (not always the better
 * whole mapping: tests/bench/SCALE.md); odd factors (24 = 8 x 3, 40 = 8 x 5) often lose to flat.
 *
 * Variants used by auto (tm_map): lookahead or discovery-order ties, cheap levels merged into their
 * children, bipartitioning above the finest level, and multilevel refinement of the positions of
 * every coarse level on the way down.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tm_private.h"

/* Largest number of groupings of one level that is enumerated (optimal); greedy + swaps + KL above. */
#define TM_EXHAUSTIVE_MAX 1000
/* Groups of more units than this are formed in factors of at most this many (group_factored). */
#define TM_FACTOR_MIN 8
/* Up to this many units, a level grouped in factors is also grouped flat, and the better one kept: up
 * to TM_FLAT_MAX_RANKS at the finest level, where a flat grouping costs the most (16-core packages at
 * 65,536 ranks: 2.5x the time of 8-core ones with it, 1.1x without), TM_FLAT_MAX_UNITS above. */
#define TM_FLAT_MAX_RANKS 16384
#define TM_FLAT_MAX_UNITS 131072

static int aggregate(const tm_units_t *u, uint32_t a, const uint32_t *members, tm_units_t *out);

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
	const double *m; /* nu x nu */
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

/* Greedy growth, single swaps, then KL passes at arity a. */
static int group_flat(const tm_units_t *u, uint32_t a, uint32_t *members, int mode, double deadline)
{
	if (tm_group_greedy(u, a, members, mode) < 0 || tm_group_improve(u, a, members, deadline) < 0)
		return -1;
	return tm_group_kl(u, a, members, deadline);
}

/* The divisor of a by which a level of more than TM_FACTOR_MIN units per group is grouped first (the
 * largest one up to TM_FACTOR_MIN), or 0 (a is small, or has no such divisor). */
static uint32_t factor_of(uint32_t a)
{
	uint32_t d;

	for (d = a > TM_FACTOR_MIN ? TM_FACTOR_MIN : 1; d >= 2; d--)
		if (a % d == 0)
			return d;
	return 0;
}

/* Traffic kept inside the groups of members (grp: scratch of u->n entries). */
static double kept_inside(const tm_units_t *u, uint32_t a, const uint32_t *members, uint32_t *grp)
{
	double in = 0;
	uint32_t i;

	for (i = 0; i < u->n; i++)
		grp[members[i]] = i / a;
	for (i = 0; i < u->nreal; i++) {
		uint64_t k;

		for (k = u->xadj[i]; k < u->xadj[i + 1]; k++)
			in += u->w[k] * (grp[u->adj[k]] == grp[i]);
	}
	return in;
}

/* a = d * e: groups of d (greedy and swaps: KL runs once, at arity a), those aggregated and grouped by
 * e (tm_group_level: again by factors if e is large), then each group of a is the d * e units of e
 * groups of d, brought to a local optimum of swaps and KL passes at arity a. */
static int group_factored(const tm_units_t *u, uint32_t a, uint32_t d, uint32_t *members, int mode, double deadline)
{
	uint32_t e = a / d, n2 = u->n / d, *m1 = malloc(((size_t)u->n + 1) * sizeof(*m1)), *m2, g, p, q;
	tm_units_t up = { 0 };
	int rc = -1;

	m2 = malloc(((size_t)n2 + 1) * sizeof(*m2));
	if (m1 && m2 && tm_group_greedy(u, d, m1, mode) == 0 && tm_group_improve(u, d, m1, deadline) == 0 &&
	    aggregate(u, d, m1, &up) == 0 && tm_group_level(&up, e, m2, mode, deadline, NULL, 0, NULL) == 0) {
		for (g = 0; g < u->n / a; g++)
			for (p = 0; p < e; p++)
				for (q = 0; q < d; q++)
					members[(size_t)g * a + p * d + q] = m1[(size_t)m2[(size_t)g * e + p] * d + q];
		rc = tm_group_improve(u, a, members, deadline) < 0 ? -1 : tm_group_kl(u, a, members, deadline);
	}
	free(m1), free(m2);
	if (up.xadj)
		free((void *)up.xadj), free((void *)up.adj), free((void *)up.w);
	if (rc < 0)
		errno = ENOMEM;
	return rc;
}

/* A large arity, in factors (group_factored), and up to TM_FLAT_MAX_RANKS or TM_FLAT_MAX_UNITS units
 * also flat: the grouping that keeps more traffic inside wins, the flat one when they are equal. */
static int group_large(const tm_units_t *u, uint32_t a, uint32_t d, uint32_t *members, int mode, double deadline)
{
	uint32_t *flat, *grp;
	int rc = -1;

	if (group_factored(u, a, d, members, mode, deadline) < 0)
		return -1;
	if (u->n > (u->ranks ? TM_FLAT_MAX_RANKS : TM_FLAT_MAX_UNITS))
		return 0;
	flat = malloc(((size_t)u->n + 1) * sizeof(*flat));
	grp = malloc(((size_t)u->n + 1) * sizeof(*grp));
	if (flat && grp && group_flat(u, a, flat, mode, deadline) == 0) {
		if (kept_inside(u, a, flat, grp) >= kept_inside(u, a, members, grp))
			memcpy(members, flat, (size_t)u->n * sizeof(*members));
		rc = 0;
	}
	free(flat), free(grp);
	if (rc < 0)
		errno = ENOMEM;
	return rc;
}

/* Groups the units of one level into groups of a: members[g * a + p]. With types (ty, u->type), the
 * groups take the shapes of the positions of depth l - 1 and gtype receives their types. */
int tm_group_level(const tm_units_t *u, uint32_t a, uint32_t *members, int mode, double deadline, const tm_types_t *ty,
		   int l, uint32_t *gtype)
{
	uint32_t d = factor_of(a);

	if (a == 1 && !ty) {
		uint32_t i;

		for (i = 0; i < u->n; i++)
			members[i] = i;
		return 0;
	}
	if (ty) {
		if (tm_group_typed(u, a, members, ty, l, gtype) < 0)
			return -1;
	} else if (u->n <= 16 && groupings(u->n, a, TM_EXHAUSTIVE_MAX) <= TM_EXHAUSTIVE_MAX) {
		return group_exhaustive(u, a, members);
	} else if (d && u->n > a) {
		return group_large(u, a, d, members, mode, deadline);
	} else {
		return group_flat(u, a, members, mode, deadline);
	}
	if (a == 1)
		return 0;
	if (tm_group_improve(u, a, members, deadline) < 0)
		return -1;
	return tm_group_kl(u, a, members, deadline);
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
	if (u->xadj && u->xadj != g->xadj) {
		free((void *)u->xadj), free((void *)u->adj), free((void *)u->w);
	}
	u->xadj = NULL;
}

/* The virtual tree cut at depth l, as a target whose slots are the units of that depth. */
static topo_target_t *truncated_target(const struct tm_tree *tr, int l)
{
	topo_target_t *T = calloc(1, sizeof(*T));
	uint32_t P = 1, s;
	int k;

	for (k = 1; k <= l; k++)
		P *= tr->A[k];
	if (!T)
		return NULL;
	T->nslots = P, T->nlevels = l + 1, T->host_level = -1;
	T->group = malloc((size_t)P * (l + 1) * sizeof(*T->group));
	T->ngroups = malloc((l + 1) * sizeof(*T->ngroups));
	T->cost = malloc((l + 1) * sizeof(*T->cost));
	if (!T->group || !T->ngroups || !T->cost) {
		topo_target_destroy(T);
		return NULL;
	}
	for (k = 0, P = 1; k <= l; k++) {
		P *= k ? tr->A[k] : 1;
		T->ngroups[k] = P;
		T->cost[k] = k < l ? tr->cost[k] : 0;
	}
	for (s = 0; s < T->nslots; s++)
		for (k = 0; k <= l; k++)
			T->group[(size_t)s * (l + 1) + k] = s / (T->nslots / T->ngroups[k]);
	return T;
}

/* Multilevel refinement: moves whole groups of depth l (units of u) between positions. */
static void refine_level(const map_ctx_t *ctx, const struct tm_tree *tr, const tm_units_t *u, int l, uint32_t *vid)
{
	topo_target_t *T = truncated_target(tr, l);
	map_graph_t view = { .n = u->n, .xadj = (uint64_t *)u->xadj, .adj = (uint32_t *)u->adj, .w = (double *)u->w };
	map_ctx_t sub = *ctx;

	if (!T || u->nreal != u->n)
		goto out;
	sub.g = &view;
	sub.t = T;
	map_refine_run(&sub, vid, 0);
out:
	topo_target_destroy(T);
}

/* Orders the a entries of idx by increasing key (stable insertion sort: ties keep TreeMatch's order). */
static void sort_by(uint32_t *idx, uint32_t a, const uint32_t *key)
{
	uint32_t i, j;

	for (i = 1; i < a; i++) {
		uint32_t v = idx[i];

		for (j = i; j > 0 && key[idx[j - 1]] > key[v]; j--)
			idx[j] = idx[j - 1];
		idx[j] = v;
	}
}

/* Children of one group (members m[0..a)) onto the positions base*a + q; with types, each child goes to
 * a position of its own type (the multisets agree by construction). */
static void place_children(const tm_types_t *ty, const uint32_t *utype, int l, const uint32_t *m, uint32_t a,
			   uint32_t base, uint32_t *next, uint32_t *ci, uint32_t *pi)
{
	uint32_t q;

	for (q = 0; q < a; q++)
		ci[q] = m[q], pi[q] = base * a + q;
	if (ty) {
		sort_by(ci, a, utype);
		sort_by(pi, a, ty->ptype[l]);
	}
	for (q = 0; q < a; q++)
		next[ci[q]] = pi[q];
}

/* Lays the groups onto the virtual tree top-down from depth l0 - 1, whose units sit at vid[] (NULL:
 * depth 0, the root): returns vid[unit] of the leaf units (ranks first). With types (ty, utype[l]: the
 * type of each unit of depth l), children go to positions of their type; with units (mlrefine), the
 * positions of each coarse level are refined before going down. Takes ownership of vid. */
static uint32_t *assign_top_down(const map_ctx_t *ctx, const struct tm_tree *tr, uint32_t **members,
				 const tm_units_t *units, const tm_types_t *ty, uint32_t **utype, int l0, uint32_t *vid,
				 uint64_t nunits)
{
	uint32_t *next, *ci = NULL, *pi = NULL, amax = 1;
	uint64_t g;
	int l;

	if (!vid)
		vid = calloc(1, sizeof(*vid)), nunits = 1, l0 = 1;
	for (l = l0; l < tr->L; l++)
		amax = tr->A[l] > amax ? tr->A[l] : amax;
	ci = malloc(amax * sizeof(*ci));
	pi = malloc(amax * sizeof(*pi));
	for (l = l0; vid && ci && pi && l < tr->L; l++) {
		uint32_t a = tr->A[l];

		next = malloc((nunits * a + 1) * sizeof(*next));
		if (!next)
			break;
		for (g = 0; g < nunits; g++)
			place_children(ty, ty ? utype[l] : NULL, l, members[l] + g * a, a, vid[g], next, ci, pi);
		free(vid);
		vid = next;
		nunits *= a;
		if (units && l < tr->L - 1 && units[l].xadj)
			refine_level(ctx, tr, &units[l], l, vid);
	}
	free(ci), free(pi);
	if (l < tr->L) {
		free(vid);
		return NULL;
	}
	return vid;
}

/* Bottom-up phase: groups the levels L-1 down to lstop (members[l]) and, when keep, keeps the units
 * of every depth in units[] (units[L-1] is the rank graph; units[lstop - 1] the coarsest when
 * lstop > 1). With types, utype[L-1] holds the leaf units' types and utype[l - 1] receives those of
 * the groups formed at level l. */
static int bottom_up(const map_ctx_t *ctx, const struct tm_tree *tr, uint64_t V, int mode, uint32_t **members,
		     tm_units_t *units, int keep, int lstop, const tm_types_t *ty, uint32_t **utype)
{
	const map_graph_t *g = ctx->g;
	int l, rc = 0;
	tm_units_t cur = { .n = (uint32_t)V, .nreal = g->n, .xadj = g->xadj, .adj = g->adj, .w = g->w, .ranks = 1 };

	for (l = tr->L - 1; rc == 0 && l >= lstop; l--) {
		tm_units_t next = { 0 };

		cur.type = ty ? utype[l] : NULL;
		members[l] = malloc((size_t)cur.n * sizeof(uint32_t));
		if (ty && members[l])
			utype[l - 1] = malloc(((size_t)cur.n / tr->A[l] + 1) * sizeof(uint32_t));
		rc = members[l] && (!ty || utype[l - 1])
			     ? tm_group_level(&cur, tr->A[l], members[l], mode, 1e300, ty, l, ty ? utype[l - 1] : NULL)
			     : -1;
		if (rc == 0 && l > 1)
			rc = aggregate(&cur, tr->A[l], members[l], &next);
		if (keep)
			units[l] = cur;
		else
			units_free(&cur, g);
		cur = next;
	}
	cur.type = ty && lstop > 1 ? utype[lstop - 1] : NULL;
	if (rc == 0 && lstop > 1)
		units[lstop - 1] = cur;
	else
		units_free(&cur, g);
	return rc;
}

/* Hybrid (mode 3): the finest level grouped bottom-up, then the coarse units placed top-down by
 * recursive bipartitioning (bisect.c) on the tree above them. Returns vid of the coarse units. */
static uint32_t *coarse_bisect(const map_ctx_t *ctx, const struct tm_tree *tr, const tm_units_t *u, int depth)
{
	topo_target_t *T = truncated_target(tr, depth);
	map_graph_t view = { .n = u->n, .xadj = (uint64_t *)u->xadj, .adj = (uint32_t *)u->adj, .w = (double *)u->w };
	uint32_t *vid = malloc(((size_t)u->n + 1) * sizeof(*vid));
	map_ctx_t sub = *ctx;

	if (!T || !vid || T->nslots != u->n) {
		topo_target_destroy(T);
		free(vid);
		return NULL;
	}
	sub.g = &view;
	sub.t = T;
	if (map_engine_bisect(&sub, vid) < 0 || map_check_perm(vid, u->n, T->nslots) < 0) {
		free(vid);
		vid = NULL;
	}
	topo_target_destroy(T);
	return vid;
}

/* The tree TreeMatch groups over. With merge, a level whose cost step (cost[l-1] - cost[l]) is under
 * a quarter of the step above it is merged into its children: its grouping matters little, and
 * grouping straight at the combined arity serves the expensive level better (refine.c then
 * splits the merged groups). */
static void tm_tree_build(const topo_target_t *t, const uint32_t *A, int merge, struct tm_tree *tr)
{
	int l, L = t->nlevels;
	uint32_t arity = 1;

	tr->L = 1;
	tr->A[0] = 1;
	tr->cost[0] = t->cost[0];
	for (l = 1; l < L; l++) {
		double step = t->cost[l - 1] - t->cost[l], up = l >= 2 ? t->cost[l - 2] - t->cost[l - 1] : 0;

		arity *= A[l];
		if (merge && l >= 2 && l < L - 1 && step < 0.25 * up)
			continue; /* level l's groups vanish: their children join the next kept level */
		tr->A[tr->L] = arity;
		tr->cost[tr->L] = t->cost[l];
		tr->L++;
		arity = 1;
	}
}

/* Leaf unit types for typed grouping: ranks 1, virtual units 0. */
static uint32_t *leaf_types(uint64_t V, uint32_t n)
{
	uint32_t *t = malloc((V + 1) * sizeof(*t));
	uint64_t i;

	for (i = 0; t && i < V; i++)
		t[i] = i < n;
	return t;
}

int tm_map(const map_ctx_t *ctx, uint32_t *perm, int mode, int mlrefine)
{
	const map_graph_t *g = ctx->g;
	int l, rc, lstop, typed, trc;
	uint32_t A[64], *vslot = NULL, *members[64] = { 0 }, *vid = NULL, *cvid = NULL, *utype[64] = { 0 }, r;
	tm_units_t units[64];
	tm_types_t ty;
	struct tm_tree tr;
	uint64_t V;

	if (ctx->t->nlevels < 2 || ctx->t->nlevels > 64)
		return map_engine_identity(ctx, perm);
	V = virtual_tree(ctx->t, A, &vslot);
	if (!V || V >= UINT32_MAX) {
		errno = ENOMEM;
		return rm_error_set(ctx->err, "treematch", 0, 0, "target too large or too irregular");
	}
	tm_tree_build(ctx->t, A, mode >= 2, &tr);
	trc = tm_types_build(&ty, &tr, vslot, V, g->n);
	typed = trc == 1; /* on failure: untyped, holes repaired after */
	lstop = mode == 3 && tr.L >= 3 && !typed ? tr.L - 1 : 1;
	mlrefine = mlrefine && !typed; /* moving a subtree to a position of another shape would not fit */
	if (typed)
		utype[tr.L - 1] = leaf_types(V, g->n);
	memset(units, 0, sizeof(units));
	rc = typed && !utype[tr.L - 1] ? -1
				       : bottom_up(ctx, &tr, V, mode >= 2 ? 0 : mode, members, units,
						   mlrefine || lstop > 1, lstop, typed ? &ty : NULL, utype);
	if (rc == 0 && lstop > 1) {
		cvid = coarse_bisect(ctx, &tr, &units[lstop - 1], lstop - 1);
		if (cvid && mlrefine)
			refine_level(ctx, &tr, &units[lstop - 1], lstop - 1, cvid);
		if (cvid)
			vid = assign_top_down(ctx, &tr, members, mlrefine ? units : NULL, NULL, NULL, lstop, cvid,
					      units[lstop - 1].n);
	} else if (rc == 0) {
		vid = assign_top_down(ctx, &tr, members, mlrefine ? units : NULL, typed ? &ty : NULL, utype, 1, NULL,
				      1);
	}
	for (r = 0; vid && r < g->n; r++)
		perm[r] = vslot[vid[r]];
	for (l = 0; l < tr.L; l++) {
		free(members[l]), free(utype[l]);
		units_free(&units[l], g);
	}
	if (trc >= 0)
		tm_types_free(&ty);
	free(vslot);
	if (!vid) {
		errno = ENOMEM;
		return rm_error_set(ctx->err, "treematch", 0, 0, "out of memory");
	}
	free(vid);
	return 0;
}

int map_engine_treematch(const map_ctx_t *ctx, uint32_t *perm)
{
	return tm_map(ctx, perm, 0, 0);
}
