/*
 * mapping/target_scotch.c: Scotch target architectures from topo_target_t (see target_scotch.h).
 *
 * Every target becomes a Scotch "tleaf" over its tree: a uniform tree directly, any other one as
 * the tleaf whose arity at each level is the largest of that level, restricted to the target's slots
 * with SCOTCH_archSub. Both are algorithmically coded in Scotch: exact tree distances, no
 * decomposition to build, nothing quadratic.
 *
 * Not a decomposition-defined target (SCOTCH_archBuild2): it was built from a graph of the slots,
 * one hub per group and a clique of host links for net_dist, but "deco 2" is meant for a sparse
 * network graph. It estimates distances between large domains on coarsened graphs, where crossing a
 * coarse vertex costs the sum of the edges folded into it, so its domain distances grow with the
 * domains (up to 248,435 on the example cluster, against 2,000 in the graph). Times Scotch's
 * integer edge loads, they overflowed 32-bit SCOTCH_Num (see mapping/scotch.c for that contract).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "target_scotch.h"

/* Link costs for Scotch's tleaf, where two slots whose deepest common level is l are at distance
 * link[l] + link[l + 1] + ... + link[nlevels - 2]. The distances D[l] are t->cost[l] when they are
 * integers no larger than dcap, else scaled so that the largest is min(1000, dcap); link[l] is
 * D[l] - D[l + 1], at least 1 (Scotch wants distinct terminals at a positive distance: a zero
 * distance between two domains turns its diffusion bipartitioner's arithmetic into NaN). Returns the
 * largest distance, link[0] + ... + link[nlevels - 2]. */
static SCOTCH_Num link_costs(const topo_target_t *t, SCOTCH_Num dcap, SCOTCH_Num *link)
{
	double max = 0, scale = 1, top = dcap < 1000 ? (double)dcap : 1000, below = 0;
	SCOTCH_Num dmax = 0;
	int l, integral = 1;

	for (l = 0; l < t->nlevels; l++) {
		if (t->cost[l] > max)
			max = t->cost[l];
		if (t->cost[l] != floor(t->cost[l]))
			integral = 0;
	}
	if (!integral || max > (double)dcap)
		scale = max > 0 ? top / max : 1;
	for (l = t->nlevels - 2; l >= 0; l--) {
		double d = floor(t->cost[l] * scale + 0.5);

		link[l] = d - below < 1 ? 1 : (SCOTCH_Num)(d - below);
		below = d > below ? d : below;
		dmax += link[l];
	}
	return dmax;
}

/* ar[l] (l < nlevels - 1): the largest number of children of a group of level l. term[s]: slot s's
 * terminal in the tleaf of these arities, its child ranks (in slot order) read as a mixed-radix
 * number. Returns the tleaf's number of terminals (or 0 when it exceeds cap), -1 when out of memory. */
static double padded_tree(const topo_target_t *t, SCOTCH_Num *ar, SCOTCH_Num *term, double cap)
{
	uint32_t *rank = NULL, *count = NULL, s;
	double size = 1;
	int l, L = t->nlevels;

	for (s = 0; s < t->nslots; s++)
		term[s] = 0;
	for (l = 1; l < L; l++) {
		rank = malloc((size_t)t->ngroups[l] * sizeof(*rank));
		count = calloc(t->ngroups[l - 1], sizeof(*count));
		if (!rank || !count) {
			free(rank), free(count);
			return -1;
		}
		memset(rank, 0xff, (size_t)t->ngroups[l] * sizeof(*rank));
		ar[l - 1] = 0;
		for (s = 0; s < t->nslots; s++) {
			const uint32_t *gs = t->group + (size_t)s * L;

			if (rank[gs[l]] == UINT32_MAX) /* first slot of this group: its rank among siblings */
				rank[gs[l]] = count[gs[l - 1]]++;
			if ((SCOTCH_Num)count[gs[l - 1]] > ar[l - 1])
				ar[l - 1] = (SCOTCH_Num)count[gs[l - 1]];
		}
		size *= ar[l - 1];
		for (s = 0; size <= cap && s < t->nslots; s++)
			term[s] = term[s] * ar[l - 1] + (SCOTCH_Num)rank[t->group[(size_t)s * L + l]];
		free(rank), free(count);
		if (size > cap)
			return 0;
	}
	return size;
}

/* The tleaf over t's tree, restricted to t's slots when it has terminals no slot fills. */
static int build_tree(map_scotch_arch_t *a, const topo_target_t *t, const SCOTCH_Num *link, rm_error_t *err)
{
	double cap = 256.0 * t->nslots + 65536, size;
	SCOTCH_Num ar[64], *term;
	uint32_t s;
	int rc = -1;

	if (cap > MAP_SCOTCH_MAX_TERMINALS)
		cap = MAP_SCOTCH_MAX_TERMINALS;
	term = malloc(((size_t)t->nslots + 1) * sizeof(*term));
	if (!term || (size = padded_tree(t, ar, term, cap)) < 0) {
		free(term);
		errno = ENOMEM;
		return rm_error_set(err, "scotch target", 0, 0, "out of memory");
	}
	if (size == 0) {
		free(term);
		errno = EINVAL;
		return rm_error_set(
			err, "scotch target", 0, 0,
			"too irregular for a Scotch tree: the padded tree exceeds %.0f terminals for %u slots", cap,
			t->nslots);
	}
	if (SCOTCH_archTleaf(&a->tree, t->nlevels - 1, ar, link) == 0) {
		a->arch = &a->tree;
		for (s = 0; s < t->nslots && term[s] == (SCOTCH_Num)s; s++)
			;
		rc = 0;
		/* padded: keep the slots' terminals, terminal i of the sub is slot i. Also when the slots are the
		 * tree's first terminals (hosts of 4 and 2 slots: 8 terminals, slots 0-5): the rest are no slot */
		if (s < t->nslots || size > (double)t->nslots) {
			if (SCOTCH_archInit(&a->sub) != 0 ||
			    SCOTCH_archSub(&a->sub, &a->tree, (SCOTCH_Num)t->nslots, term) != 0)
				rc = -1;
			else
				a->arch = &a->sub, a->has_sub = 1;
		}
	}
	free(term);
	if (rc < 0) {
		errno = EINVAL;
		return rm_error_set(err, "scotch target", 0, 0, "Scotch rejected the target (%u slots)", t->nslots);
	}
	return 0;
}

int map_scotch_arch_init(map_scotch_arch_t *a, const topo_target_t *t, SCOTCH_Num dcap, rm_error_t *err)
{
	SCOTCH_Num link[64];

	if (!a || !t || t->nlevels < 1 || t->nlevels > 64 || t->nslots == 0 || t->nslots > INT32_MAX / 4 || dcap < 1) {
		errno = EINVAL;
		return rm_error_set(err, "scotch target", 0, 0, "invalid target");
	}
	memset(a, 0, sizeof(*a));
	if (SCOTCH_archInit(&a->tree) != 0) {
		errno = ENOMEM;
		return rm_error_set(err, "scotch target", 0, 0, "SCOTCH_archInit failed");
	}
	a->live = 1;
	a->dmax = link_costs(t, dcap, link);
	if (t->nlevels == 1) { /* one slot */
		a->arch = &a->tree;
		if (SCOTCH_archCmplt(&a->tree, 1) == 0)
			return 0;
		errno = EINVAL;
		rm_error_set(err, "scotch target", 0, 0, "Scotch rejected the target");
	} else if (build_tree(a, t, link, err) == 0) {
		return 0;
	}
	map_scotch_arch_exit(a);
	return -1;
}

void map_scotch_arch_exit(map_scotch_arch_t *a)
{
	if (!a || !a->live)
		return;
	if (a->has_sub)
		SCOTCH_archExit(&a->sub); /* the sub refers to the tree: goes first */
	SCOTCH_archExit(&a->tree);
	a->arch = NULL, a->has_sub = 0, a->live = 0;
}
