/*
 * mapping/cost.c: the cost of a mapping, its breakdown by level, permutation checks and the repair
 * that turns any engine output into a bijection onto distinct slots.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"

double map_cost(const map_graph_t *g, const topo_target_t *t, const uint32_t *perm)
{
	double total = 0;
	uint32_t u;

	for (u = 0; u < g->n; u++) {
		uint64_t k;

		for (k = g->xadj[u]; k < g->xadj[u + 1]; k++)
			if (g->adj[k] > u)
				total += g->w[k] * topo_target_distance(t, perm[u], perm[g->adj[k]]);
	}
	return total;
}

void map_breakdown(const map_graph_t *g, const topo_target_t *t, const uint32_t *perm, double *per_level)
{
	uint32_t u;

	memset(per_level, 0, (size_t)t->nlevels * sizeof(*per_level));
	for (u = 0; u < g->n; u++) {
		uint64_t k;

		for (k = g->xadj[u]; k < g->xadj[u + 1]; k++)
			if (g->adj[k] > u)
				per_level[topo_target_common_level(t, perm[u], perm[g->adj[k]])] += g->w[k];
	}
}

int map_check_perm(const uint32_t *perm, uint32_t n, uint32_t nslots)
{
	unsigned char *used;
	uint32_t i;

	if (!perm || n > nslots) {
		errno = EINVAL;
		return -1;
	}
	used = calloc((size_t)nslots + 1, 1);
	if (!used)
		return -1;
	for (i = 0; i < n; i++) {
		if (perm[i] >= nslots || used[perm[i]]) {
			free(used);
			errno = EINVAL;
			return -1;
		}
		used[perm[i]] = 1;
	}
	free(used);
	return 0;
}

double map_rank_cost(const map_graph_t *g, const topo_target_t *t, const uint32_t *perm, uint32_t r, uint32_t s,
		     uint32_t skip)
{
	double c = 0;
	uint64_t k;

	for (k = g->xadj[r]; k < g->xadj[r + 1]; k++)
		if (g->adj[k] != skip)
			c += g->w[k] * topo_target_distance(t, s, perm[g->adj[k]]);
	return c;
}

/* Disjoint-set "next free slot" structures: nx[i] leads to the smallest free slot >= i (nslots: none),
 * pv[i] to the largest free slot <= i, shifted by one (0: none). */
static uint32_t find_next(uint32_t *nx, uint32_t i)
{
	uint32_t r = i, tmp;

	while (nx[r] != r)
		r = nx[r];
	while (nx[i] != r)
		tmp = nx[i], nx[i] = r, i = tmp;
	return r;
}

static void take_slot(uint32_t *nx, uint32_t *pv, uint32_t s)
{
	nx[s] = s + 1;
	pv[s + 1] = s;
}

static uint32_t nearest_free(uint32_t *nx, uint32_t *pv, uint32_t nslots, uint32_t s)
{
	uint32_t up = find_next(nx, s), down = find_next(pv, s + 1);

	if (up == nslots)
		return down - 1;
	if (down == 0)
		return up;
	return (up - s) <= (s + 1 - down) ? up : down - 1;
}

/* Slot of the heaviest neighbour of r that is already placed (placed[] flags), or UINT32_MAX. */
static uint32_t anchor_slot(const map_graph_t *g, const uint32_t *perm, const unsigned char *placed, uint32_t r)
{
	uint32_t best = UINT32_MAX;
	double bw = -1;
	uint64_t k;

	for (k = g->xadj[r]; k < g->xadj[r + 1]; k++)
		if (placed[g->adj[k]] && g->w[k] > bw)
			bw = g->w[k], best = perm[g->adj[k]];
	return best;
}

long map_repair(const map_graph_t *g, const topo_target_t *t, uint32_t *perm)
{
	uint32_t n = g->n, ns = t->nslots, i, *nx, *pv;
	unsigned char *placed;
	long moved = 0;

	nx = malloc(((size_t)ns + 2) * sizeof(*nx));
	pv = malloc(((size_t)ns + 2) * sizeof(*pv));
	placed = calloc((size_t)n + 1, 1);
	if (!nx || !pv || !placed) {
		free(nx), free(pv), free(placed);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i <= ns + 1; i++)
		nx[i] = i, pv[i] = i;
	for (i = 0; i < n; i++) {
		if (perm[i] < ns && nx[perm[i]] == perm[i]) {
			take_slot(nx, pv, perm[i]);
			placed[i] = 1;
		}
	}
	for (i = 0; i < n; i++) {
		uint32_t a;

		if (placed[i])
			continue;
		a = anchor_slot(g, perm, placed, i);
		perm[i] = nearest_free(nx, pv, ns, a == UINT32_MAX ? 0 : a);
		take_slot(nx, pv, perm[i]);
		placed[i] = 1;
		moved++;
	}
	free(nx), free(pv), free(placed);
	return moved;
}
