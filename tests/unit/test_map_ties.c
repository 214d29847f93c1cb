/*
 * tests/unit/test_map_ties.c: map_compute's tie rule (mapping/ties.c). Among mappings of equal cost the
 * result is the one whose rank order follows the slot order: rings of ranks that every order over the
 * hosts serves equally end up ring i on host i, whatever the engine and whether or not the rings' leaders
 * are declared to talk; a sort that would cost more is not applied; free slots go last. Expected
 * placements are written from the case's structure (host of rank v = v / ranks per host), not taken
 * from the code.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping.h"
#include "mapping_private.h" /* map_order_ties, called here on hand-made mappings */
#include "tests/harness.h"

/* nrings rings of len ranks (ring weight 10 both ways) and, when leaders, an all-to-all of weight 1 among
 * the rings' first ranks: a graph every order of whole rings over equal hosts serves at the same cost. */
static map_graph_t *rings(uint32_t nrings, uint32_t len, int leaders)
{
	uint32_t n = nrings * len, m = n + nrings * nrings, k = 0;
	uint32_t *s = malloc(sizeof(*s) * m), *d = malloc(sizeof(*d) * m);
	double *w = malloc(sizeof(*w) * m);
	map_graph_t *g = NULL;

	if (s && d && w) {
		for (uint32_t v = 0; v < n; v++)
			s[k] = v, d[k] = v - v % len + (v % len + 1) % len, w[k++] = 10;
		for (uint32_t a = 0; leaders && a < nrings; a++)
			for (uint32_t b = a + 1; b < nrings; b++)
				s[k] = a * len, d[k] = b * len, w[k++] = 1;
		g = map_graph_from_edges(n, k, s, d, w, NULL);
	}
	free(s), free(d), free(w);
	return g;
}

/* Whether every rank v of perm is on host v / per_host of a target of per_host slots per host. */
static int ring_i_on_host_i(const uint32_t *perm, uint32_t n, uint32_t per_host)
{
	for (uint32_t v = 0; v < n; v++)
		if (perm[v] / per_host != v / per_host)
			return 0;
	return 1;
}

/* Rings placed in a scrambled order of hosts (and rotated within each host) cost what ring i on host i
 * costs; the rule brings them back to ring i on host i, in rank order within each host. */
static void test_scrambled_rings(void)
{
	topo_target_t *t = topo_target_from_tleaf("tleaf 2 4 10 4 1", NULL);
	static const uint32_t host_of_ring[4] = { 2, 0, 3, 1 };

	for (int leaders = 0; leaders < 2; leaders++) {
		map_graph_t *g = rings(4, 4, leaders);
		uint32_t perm[16];

		for (uint32_t v = 0; v < 16; v++)
			perm[v] = host_of_ring[v / 4] * 4 + (v % 4 + 1) % 4;
		double before = map_cost(g, t, perm);
		long sorted = map_order_ties(g, t, perm);

		check(sorted >= 1, "leaders %d: a level was sorted (%ld)", leaders, sorted);
		check(map_check_perm(perm, 16, 16) == 0, "leaders %d: still a bijection", leaders);
		check(fabs(map_cost(g, t, perm) - before) <= 1e-9 * before, "leaders %d: the cost is the same",
		      leaders);
		check(ring_i_on_host_i(perm, 16, 4), "leaders %d: ring i on host i", leaders);
		for (uint32_t v = 0; v < 16; v++)
			check(perm[v] == v, "leaders %d: rank %u on slot %u (rank order within the host)", leaders, v,
			      perm[v]);
		map_graph_destroy(g);
	}
	topo_target_destroy(t);
}

/* Every engine through map_compute, with and without the leaders' edges: the same placement, ring i on
 * host i (the models differ, every order of the rings costs the same in each). */
static void test_engines_agree(void)
{
	topo_target_t *t = topo_target_from_tleaf("tleaf 3 2 100 4 10 8 1", NULL); /* 8 hosts of 8 */

	for (const char *const *a = map_algorithms(); *a; a++) {
		uint32_t first[64], perm[64];

		for (int leaders = 0; leaders < 2; leaders++) {
			map_graph_t *g = rings(8, 8, leaders);
			map_options_t opt = { .time_budget_ms = 50 };
			map_result_t res;
			rm_error_t err;

			rm_error_clear(&err);
			check(map_compute(*a, g, t, &opt, perm, &res, &err) == 0, "%s: maps (%s)", *a, err.text);
			check(ring_i_on_host_i(perm, 64, 8), "%s, leaders %d: ring i on host i", *a, leaders);
			if (!leaders)
				memcpy(first, perm, sizeof(perm));
			else
				check(!memcmp(first, perm, sizeof(perm)),
				      "%s: the same placement with the leaders' edges", *a);
			map_graph_destroy(g);
		}
	}
	topo_target_destroy(t);
}

/* A sort that would cost more is not applied: ranks 0 and 2, 1 and 3 talk, each pair on one host. */
static void test_costlier_sort_kept(void)
{
	topo_target_t *t = topo_target_from_tleaf("tleaf 2 2 10 2 1", NULL);
	uint32_t s[2] = { 0, 1 }, d[2] = { 2, 3 }, perm[4] = { 0, 2, 1, 3 }, want[4] = { 0, 2, 1, 3 };
	double w[2] = { 5, 5 };
	map_graph_t *g = map_graph_from_edges(4, 2, s, d, w, NULL);
	double before = map_cost(g, t, perm);

	check(map_order_ties(g, t, perm) == 0, "nothing sorted");
	check(!memcmp(perm, want, sizeof(want)), "the pairs stay on their hosts");
	check(map_cost(g, t, perm) == before, "the cost is unchanged");
	map_graph_destroy(g);
	topo_target_destroy(t);
}

/* Fewer ranks than slots: a free host goes last, the ranks to the first hosts in rank order. */
static void test_free_slots_last(void)
{
	topo_target_t *t = topo_target_from_tleaf("tleaf 2 3 10 2 1", NULL);
	map_graph_t *g = rings(2, 2, 0);
	uint32_t perm[4] = { 4, 5, 0, 1 }; /* ring 0 on host 2, ring 1 on host 0, host 1 free */
	double before = map_cost(g, t, perm);

	check(map_order_ties(g, t, perm) >= 1, "sorted");
	check(map_check_perm(perm, 4, 6) == 0, "a bijection onto distinct slots");
	check(map_cost(g, t, perm) == before, "the cost is unchanged");
	check(ring_i_on_host_i(perm, 4, 2), "ring i on host i, the free host last");
	map_graph_destroy(g);
	topo_target_destroy(t);
}

int main(void)
{
	test_scrambled_rings();
	test_engines_agree();
	test_costlier_sort_kept();
	test_free_slots_last();
	return harness_done();
}
