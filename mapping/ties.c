/*
 * mapping/ties.c: the tie rule of map_compute. Among mappings of equal model cost, the one whose rank
 * order follows the slot order.
 *
 * A model often cannot tell placements apart: every order of 16 equal rings over 16 hosts costs the
 * same when the rings only talk inside themselves (or all-to-all among them), and an engine returns
 * whichever its search met first. The program's undeclared traffic may still prefer some orders: its
 * collectives on MPI_COMM_WORLD or on communicators split by rank run their algorithms (ring,
 * recursive doubling, binomial trees) between ranks close in number. Keeping those ranks on nearby
 * slots (the target's slot order is depth-first, so close slots are close in the machine) is the
 * order MPI implementations place ranks in by default. The rule is the same for every engine, and for
 * weights declared, learned or absent, so that equal models give equal placements.
 *
 * For each level of the target, coarsest first, the groups of that level (each a run of slots) are
 * sorted by the smallest rank they hold: among groups of the same size, in slot order, the k-th
 * receives the whole contents (the same offsets) of the group with the k-th smallest rank. The result is
 * kept only when it costs no more (up to rounding) than the mapping before it (a sort may also cost
 * less: an engine's result need not be optimal); a level that moves nothing costs no evaluation. O(levels * (slots + edges)) time, O(slots + ranks) memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"

#define NONE UINT32_MAX
/* relative cost difference taken as rounding: after a sort the same distances fall on other edges */
#define TIE_TOLERANCE 1e-9

struct run {
	uint32_t start, len, key; /* slots [start, start + len) of one group; key: its smallest rank (NONE: empty) */
};

static int by_position(const void *a, const void *b)
{
	const struct run *x = a, *y = b;

	if (x->len != y->len)
		return (x->len > y->len) - (x->len < y->len);
	return (x->start > y->start) - (x->start < y->start);
}

static int by_key(const void *a, const void *b)
{
	const struct run *x = a, *y = b;

	if (x->len != y->len)
		return (x->len > y->len) - (x->len < y->len);
	if (x->key != y->key)
		return (x->key > y->key) - (x->key < y->key);
	return (x->start > y->start) - (x->start < y->start);
}

/* The groups of level l as runs of slots, each with its smallest rank (inv: rank at each slot, NONE when
 * free). Returns their number, or 0 when a group is not one run (then the level is left alone). */
static uint32_t level_runs(const topo_target_t *t, int l, const uint32_t *inv, struct run *r)
{
	uint32_t k = 0;

	for (uint32_t s = 0; s < t->nslots; s++) {
		uint32_t id = t->group[(size_t)s * t->nlevels + l];

		if (s == 0 || id != t->group[(size_t)(s - 1) * t->nlevels + l]) {
			if (k == t->ngroups[l])
				return 0; /* more runs than groups: some group is split */
			r[k++] = (struct run){ s, 0, NONE };
		}
		r[k - 1].len++;
		if (inv[s] < r[k - 1].key)
			r[k - 1].key = inv[s];
	}
	return k == t->ngroups[l] ? k : 0;
}

#define FEW_SIZES 8 /* distinct group sizes for which the runs are ordered by buckets, not qsort */

/* Orders r[0..k) (in slot order, as level_runs gives them) by position (size, then slot) and from[]
 * by contents (size, then smallest rank, then slot): the orders of by_position and by_key, in
 * O(k * sizes + ranks) with at most FEW_SIZES sizes (by_rank: scratch of n + 1 entries). Returns 0, or
 * -1 when there are more sizes (the caller sorts). */
static int order_runs(struct run *r, struct run *from, uint32_t k, uint32_t n, uint32_t *by_rank)
{
	uint32_t sizes[FEW_SIZES], ns = 0, i, j, z, out;

	for (i = 0; i < k; i++) {
		for (j = 0; j < ns && sizes[j] != r[i].len; j++)
			;
		if (j == ns) {
			if (ns == FEW_SIZES)
				return -1;
			for (j = ns++; j > 0 && sizes[j - 1] > r[i].len; j--) /* sizes kept increasing */
				sizes[j] = sizes[j - 1];
			sizes[j] = r[i].len;
		}
	}
	for (i = 0; i <= n; i++)
		by_rank[i] = NONE;
	for (i = 0; i < k; i++) /* smallest ranks are distinct: one run each */
		if (r[i].key != NONE)
			by_rank[r[i].key] = i;
	for (z = 0, out = 0; z < ns; z++) { /* contents: size, smallest rank, then the empty ones by slot */
		for (i = 0; i < n; i++)
			if (by_rank[i] != NONE && r[by_rank[i]].len == sizes[z])
				from[out++] = r[by_rank[i]];
		for (i = 0; i < k; i++)
			if (r[i].key == NONE && r[i].len == sizes[z])
				from[out++] = r[i];
	}
	if (ns > 1) { /* places: size, then slot (r is in slot order already) */
		struct run *tmp = malloc(sizeof(*tmp) * ((size_t)k + 1));

		if (!tmp)
			return -1;
		for (z = 0, out = 0; z < ns; z++)
			for (i = 0; i < k; i++)
				if (r[i].len == sizes[z])
					tmp[out++] = r[i];
		memcpy(r, tmp, sizeof(*r) * k);
		free(tmp);
	}
	return 0;
}

/* Writes into cand (a copy of the current mapping) the mapping with level l's groups sorted (runs r, k of
 * them; from is scratch of the same size, by_rank of n + 1). Returns whether any rank moved. */
static int sort_level(struct run *r, struct run *from, uint32_t k, const uint32_t *inv, uint32_t *cand, uint32_t n,
		      uint32_t *by_rank)
{
	int moved = 0;

	if (order_runs(r, from, k, n, by_rank) < 0) {
		memcpy(from, r, sizeof(*r) * k);
		qsort(r, k, sizeof(*r), by_position);  /* the places, by size then slot */
		qsort(from, k, sizeof(*from), by_key); /* the contents, by size then smallest rank */
	}
	for (uint32_t i = 0; i < k; i++) {
		if (r[i].start == from[i].start)
			continue;
		for (uint32_t j = 0; j < r[i].len; j++) {
			uint32_t v = inv[from[i].start + j];

			if (v != NONE)
				cand[v] = r[i].start + j, moved = 1;
		}
	}
	return moved;
}

long map_order_ties(const map_graph_t *g, const topo_target_t *t, uint32_t *perm)
{
	uint32_t n = g->n, ns = t->nslots, maxg = 0;
	long sorted = 0;

	for (int l = 1; l < t->nlevels; l++)
		maxg = t->ngroups[l] > maxg ? t->ngroups[l] : maxg;
	uint32_t *inv = malloc(sizeof(*inv) * ((size_t)ns + 1)), *cand = malloc(sizeof(*cand) * ((size_t)n + 1));
	uint32_t *by_rank = malloc(sizeof(*by_rank) * ((size_t)n + 1));
	struct run *r = malloc(sizeof(*r) * ((size_t)maxg + 1)), *from = malloc(sizeof(*from) * ((size_t)maxg + 1));
	double cost = map_cost(g, t, perm);

	if (!inv || !cand || !r || !from || !by_rank) {
		free(inv), free(cand), free(r), free(from), free(by_rank);
		errno = ENOMEM;
		return -1;
	}
	for (int l = 1; l < t->nlevels; l++) {
		uint32_t k;

		if (t->ngroups[l] < 2)
			continue;
		for (uint32_t s = 0; s < ns; s++)
			inv[s] = NONE;
		for (uint32_t v = 0; v < n; v++)
			inv[perm[v]] = v;
		if (!(k = level_runs(t, l, inv, r)))
			continue;
		memcpy(cand, perm, sizeof(*perm) * n);
		if (!sort_level(r, from, k, inv, cand, n, by_rank))
			continue;
		double c = map_cost(g, t, cand);

		if (c <= cost + TIE_TOLERANCE * cost) {
			memcpy(perm, cand, sizeof(*perm) * n);
			cost = c, sorted++;
		}
	}
	free(inv), free(cand), free(r), free(from), free(by_rank);
	return sorted;
}
