/*
 * tests/unit/test_map_links.c: link loads on a dragonfly target (topo/target_links.c) and the swaps that
 * lower the busiest link without raising the cost (mapping/linkload.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "mapping_private.h"

static char path_buf[512];

static const char *data(const char *rel)
{
	snprintf(path_buf, sizeof(path_buf), "%s/%s", harness_data_dir(), rel);
	return path_buf;
}

static topo_cluster_t df_cluster(void)
{
	topo_cluster_t c = topo_cluster_create();
	char spec[1024];
	size_t n = 0;
	int i;
	rm_error_t err;

	rm_error_clear(&err);
	n = (size_t)snprintf(spec, sizeof(spec), "synthetic:core:2 pu:1@");
	for (i = 0; i < 80; i++)
		n += (size_t)snprintf(spec + n, sizeof(spec) - n, "%sn%03d", i ? "," : "", i);
	if (topo_load_ib_file(c, data("ib/df-5x4x4.topo"), &err) < 0 || topo_load_hwloc_spec(c, spec, &err) < 0 ||
	    topo_cluster_finalize(c, &err) < 0) {
		fail("df cluster: %s", err.text);
		topo_cluster_destroy(c);
		return NULL;
	}
	return c;
}

/* The job of fabric_bench's busy state s30 under rankmap's blocks (tests/bench/PLACEMENT.md): 16 hosts,
 * 8 in group 2 and 8 in group 3 of df-5x4x4 (hosts n032-n047 and n048-n063 by the file's switch names
 * df-g2-sw*, df-g3-sw*), 2 on each router; its halo 8x4, dimension 0 16 times heavier. */
static void test_s30(void)
{
	topo_cluster_t c = df_cluster();
	const char *hosts[] = { "n035", "n039", "n040", "n042", "n043", "n044", "n045", "n046",
				"n049", "n051", "n054", "n055", "n056", "n060", "n062", "n063" };
	const char *algos[] = { "treematch", "scotch", "auto" };
	map_cart_t cart;
	map_graph_t *g;
	topo_target_t *t;
	topo_links_t *links;
	uint32_t perm[32], base[32];
	rm_error_t err;
	int a;

	if (!c)
		return;
	rm_error_clear(&err);
	t = topo_target_from_hosts(c, hosts, 16, 1, &err);
	check(t && t->links, "s30: a target with links (%s)", t ? "none" : err.text);
	if (!t || !t->links) {
		topo_target_destroy(t);
		topo_cluster_destroy(c);
		return;
	}
	links = t->links;
	/* 2 groups of 4 routers: 8 routers hold the hosts (the gateways are among them), 2 x 4 x 4 local
	 * cables in the square tables, 4 pair entries */
	check(links->nhosts == 16 && links->ngroups == 2 && links->nleaves == 8 && links->nlocal == 32 &&
		      links->nlinks == 16 + 32 + 4,
	      "s30: 16 hosts, 2 groups, 8 routers (%u, %u, %u)", links->nhosts, links->ngroups, links->nleaves);
	check(links->gateway[1] != UINT32_MAX && links->gateway[2] != UINT32_MAX &&
		      links->leaf_group[links->gateway[1]] == 0 && links->leaf_group[links->gateway[2]] == 1,
	      "s30: each group's router of the global link");
	map_cart_parse("8x4:1,1:16,1", &cart, NULL);
	g = map_graph_cart(&cart, NULL);
	for (a = 0; g && a < 3; a++) {
		map_result_t r0, r1;
		uint64_t at0, at1;
		double m0, m1;

		t->links = NULL; /* the engines as they were: bytes x hops only */
		map_compute(algos[a], g, t, NULL, base, &r0, &err);
		t->links = links;
		m0 = map_link_load_max(g, t, base, &at0);
		map_compute(algos[a], g, t, NULL, perm, &r1, &err);
		m1 = map_link_load_max(g, t, perm, &at1);
		printf("# s30 %s: cost %g, busiest link %llu at %g; with link loads: cost %g, busiest %llu at %g\n",
		       algos[a], r0.cost, (unsigned long long)at0, m0, r1.cost, (unsigned long long)at1, m1);
		check(map_check_perm(perm, 32, t->nslots) == 0, "s30 %s: a permutation", algos[a]);
		check(at0 >= links->nhosts, "s30 %s: bytes x hops alone makes a router cable the busiest (link %llu)",
		      algos[a], (unsigned long long)at0);
		check(m1 < m0 && at1 < links->nhosts,
		      "s30 %s: the busiest link is a host cable now (%g < %g, link %llu)", algos[a], m1, m0,
		      (unsigned long long)at1);
		check(r1.cost <= r0.cost * (1 + 1e-3), "s30 %s: cost %g within 0.1 %% of %g", algos[a], r1.cost,
		      r0.cost);
	}
	map_graph_destroy(g);
	topo_target_destroy(t);
	topo_cluster_destroy(c);
}

/* The search is bounded: 80 hosts of all 5 groups, a 16x10 halo. Its visits are counted (not timed): at
 * the largest bound (2^21), at a job's budget of 1 ms (2^16 a millisecond) and below the floor (2^16), the
 * search never passes its bound by more than one step, and from a poor start it is the bound that stops
 * it. Its CPU time printed. */
static void test_bounded(void)
{
	static const struct {
		double budget_ms;
		uint64_t max_work;
	} cases[] = { { 1e9, 1ull << 21 }, { 1, 1ull << 16 }, { 0.001, 1ull << 16 } };
	topo_cluster_t c = df_cluster();
	const char *hosts[80];
	char names[80][8];
	map_cart_t cart;
	map_graph_t *g;
	topo_target_t *t;
	uint32_t perm[160], i, maxdeg = 0;
	double t0, c0, c1;
	map_ll_stats_t st;
	uint64_t step;
	size_t j;
	int r;

	if (!c)
		return;
	for (i = 0; i < 80; i++) {
		snprintf(names[i], sizeof(names[i]), "n%03u", i);
		hosts[i] = names[i];
	}
	t = topo_target_from_hosts(c, hosts, 80, 1, NULL);
	map_cart_parse("16x10:1,1:16,1", &cart, NULL);
	g = map_graph_cart(&cart, NULL);
	check(t && t->links && t->links->ngroups == 5 && g, "80 hosts: a target with 5 groups");
	if (t && t->links && g) {
		for (i = 0; i < g->n; i++)
			maxdeg =
				g->xadj[i + 1] - g->xadj[i] > maxdeg ? (uint32_t)(g->xadj[i + 1] - g->xadj[i]) : maxdeg;
		/* one step at most: an exchange of two hosts of 2 slots, its edges walked four times (cost before
		 * and after, loads off and on) and twice more when it is undone, the links measured, the counters */
		step = 6ull * 4 * maxdeg + 2 * t->links->nlinks + 4;
		for (j = 0; j < sizeof(cases) / sizeof(cases[0]); j++) {
			for (i = 0; i < 160; i++)
				perm[i] = (i * 37u) % 160; /* a poor start: much to lower */
			c0 = map_cost(g, t, perm);
			t0 = map_now_ms();
			r = map_linkload_refine_stats(g, t, perm, cases[j].budget_ms, &st);
			c1 = map_cost(g, t, perm);
			printf("# 160 ranks on 80 hosts, budget %g ms: link loads search %.1f ms CPU, %llu of %llu "
			       "visits, "
			       "cost %g -> %g\n",
			       cases[j].budget_ms, map_now_ms() - t0, (unsigned long long)st.work,
			       (unsigned long long)st.max_work, c0, c1);
			check(r == 0 && map_check_perm(perm, 160, t->nslots) == 0 && c1 <= c0 * (1 + 1e-3),
			      "80 hosts, budget %g ms: a permutation, cost within 0.1 %%", cases[j].budget_ms);
			check(st.max_work == cases[j].max_work && st.work >= st.max_work &&
				      st.work <= st.max_work + step,
			      "budget %g ms: bound %llu visits (want %llu), stopped by it after %llu (at most one step "
			      "of %llu more)",
			      cases[j].budget_ms, (unsigned long long)st.max_work,
			      (unsigned long long)cases[j].max_work, (unsigned long long)st.work,
			      (unsigned long long)step);
		}
	}
	map_graph_destroy(g);
	topo_target_destroy(t);
	topo_cluster_destroy(c);
}

/* No links where the routes are not known: a flat network, a fat tree without groups. */
static void test_none(void)
{
	topo_cluster_t c = topo_cluster_create();
	const char *hosts[] = { "a", "b" };
	topo_target_t *t;
	map_graph_t *g;
	map_cart_t cart;
	uint32_t perm[4] = { 0, 1, 2, 3 };

	topo_load_hwloc_spec(c, "synthetic:core:2 pu:1@a,b", NULL);
	topo_cluster_finalize(c, NULL);
	t = topo_target_from_hosts(c, hosts, 2, 1, NULL);
	map_cart_parse("2x2", &cart, NULL);
	g = map_graph_cart(&cart, NULL);
	check(t && !t->links && map_link_load_max(g, t, perm, NULL) < 0, "flat network: no links");
	map_graph_destroy(g);
	topo_target_destroy(t);
	topo_cluster_destroy(c);
}

int main(void)
{
	test_s30();
	test_bounded();
	test_none();
	return harness_done();
}
