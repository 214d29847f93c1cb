/*
 * tests/unit/test_topo_target.c: targets built from a cluster (topo_target_from_slots/_from_hosts):
 * levels, depth-first numbering, costs, net_dist for a torus and an irregular fabric, bad slots.
 * Fabrics are written here as ibnetdiscover topology files; expected levels and costs are derived by
 * hand from the cost formula in topo/cost.c's header.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_private.h"
#include "tests/harness.h"

static char tmp[256];

static double xfer(const topo_costs_t *k, double bw)
{
	return k->ref_bytes / (bw * 1000.0);
}

/* A switch block of an ibnetdiscover topology file. peers[i] is "S-<guid>" or "H-<guid>". */
static void sw(FILE *f, unsigned long guid, int nports, const char **peers, const int *pport)
{
	int p;

	fprintf(f, "switchguid=0x%lx(%lx)\nSwitch\t%d \"S-%016lx\"\t\t# \"sw%lx\" base port 0 lid %lu lmc 0\n", guid,
		guid, nports, guid, guid, guid & 0xfff);
	for (p = 0; p < nports; p++)
		if (peers[p])
			fprintf(f, "[%d]\t\"%s\"[%d]\t\t# lid 1 4xQDR\n", p + 1, peers[p], pport[p]);
	fputc('\n', f);
}

static void ca(FILE *f, unsigned long guid, const char *host, unsigned long swguid, int swport)
{
	fprintf(f, "caguid=0x%lx\nCa\t1 \"H-%016lx\"\t\t# \"%s HCA-1\"\n", guid, guid, host);
	fprintf(f, "[1](%lx) \t\"S-%016lx\"[%d]\t\t# lid 5 lmc 0 \"sw\" lid 1 4xQDR\n\n", guid, swguid, swport);
}

/* 2 spines (0x51, 0x52), 4 leaves (0x11..0x14), 2 hosts per leaf h1..h8. */
static void write_fattree(const char *path)
{
	FILE *f = fopen(path, "w");
	char names[16][32];
	const char *peers[8];
	int pport[8], s, l, h;

	for (s = 0; s < 2; s++) {
		for (l = 0; l < 4; l++) {
			snprintf(names[l], sizeof(names[l]), "S-%016x", 0x11 + l);
			peers[l] = names[l];
			pport[l] = 3 + s;
		}
		sw(f, 0x51 + s, 4, peers, pport);
	}
	for (l = 0; l < 4; l++) {
		for (h = 0; h < 2; h++) {
			snprintf(names[h], sizeof(names[h]), "H-%016x", 0x100 + 2 * l + h);
			peers[h] = names[h];
			pport[h] = 1;
		}
		for (s = 0; s < 2; s++) {
			snprintf(names[2 + s], sizeof(names[2 + s]), "S-%016x", 0x51 + s);
			peers[2 + s] = names[2 + s];
			pport[2 + s] = l + 1;
		}
		sw(f, 0x11 + l, 4, peers, pport);
	}
	for (l = 0; l < 4; l++)
		for (h = 0; h < 2; h++) {
			char name[16];

			snprintf(name, sizeof(name), "h%d", 2 * l + h + 1);
			ca(f, 0x100 + 2 * l + h, name, 0x11 + l, h + 1);
		}
	fclose(f);
}

/* A chain of three switches A - B - C, two hosts on each: not a tree of uniform costs. */
static void write_chain(const char *path)
{
	FILE *f = fopen(path, "w");
	const char *pa[3] = { "H-0000000000000201", "H-0000000000000202", "S-00000000000000b2" };
	const char *pb[4] = { "H-0000000000000203", "H-0000000000000204", "S-00000000000000b1", "S-00000000000000b3" };
	const char *pc[3] = { "H-0000000000000205", "H-0000000000000206", "S-00000000000000b2" };
	int qa[3] = { 1, 1, 3 }, qb[4] = { 1, 1, 3, 3 }, qc[3] = { 1, 1, 4 };
	int i;

	sw(f, 0xb1, 3, pa, qa);
	sw(f, 0xb2, 4, pb, qb);
	sw(f, 0xb3, 3, pc, qc);
	for (i = 0; i < 6; i++) {
		char name[16];

		snprintf(name, sizeof(name), "c%d", i + 1);
		ca(f, 0x201 + i, name, 0xb1 + i / 2, i % 2 + 1);
	}
	fclose(f);
}

/* Every pair of slots: the target's distance is the cluster's cost-model distance. */
static void check_all_pairs(topo_cluster_t c, const topo_target_t *t, const char *what)
{
	uint32_t a, b;
	size_t bad = 0;

	for (a = 0; a < t->nslots; a++)
		for (b = 0; b < t->nslots; b++)
			if (fabs(topo_target_distance(t, a, b) - topo_slot_distance(c, t->slot[a], t->slot[b])) > 1e-6)
				bad++;
	check(bad == 0, "%s: %zu pairs differ from topo_slot_distance", what, bad);
}

/* Groups of every level are contiguous ranges of slots, numbered in order. */
static void check_depth_first(const topo_target_t *t, const char *what)
{
	uint32_t s;
	int l, ok = 1;

	for (l = 0; l < t->nlevels; l++) {
		ok &= t->group[l] == 0;
		for (s = 1; s < t->nslots; s++) {
			uint32_t g0 = t->group[(s - 1) * t->nlevels + l], g1 = t->group[s * t->nlevels + l];

			ok &= g1 == g0 || g1 == g0 + 1;
		}
		ok &= t->group[(t->nslots - 1) * t->nlevels + l] + 1 == t->ngroups[l];
	}
	ok &= t->ngroups[t->nlevels - 1] == t->nslots && t->ngroups[0] == 1;
	check(ok, "%s: depth-first numbering", what);
}

static topo_cluster_t fattree_cluster(void)
{
	topo_cluster_t c = topo_cluster_create();
	char path[400];
	rm_error_t err;

	rm_error_clear(&err);
	snprintf(path, sizeof(path), "%s/fattree.topo", tmp);
	write_fattree(path);
	check(topo_load_ib_file(c, path, &err) == 0, "fat tree: %s", err.text);
	check(topo_load_hwloc_spec(c, "synthetic:pack:2 core:2 pu:2@h1,h2,h3,h4,h5,h6,h7,h8", &err) == 0, "hw");
	check(topo_cluster_finalize(c, &err) == 0, "finalize: %s", err.text);
	return c;
}

static void test_fattree(void)
{
	topo_cluster_t c = fattree_cluster();
	const char *all[] = { "h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8" };
	const char *mixed[] = { "h3", "h1", "h2", "h4" };
	static const char *names[] = { "root", "leaf", "host", "package", "core", "pu" };
	topo_costs_t *k = topo_cluster_costs(c);
	double want[6];
	topo_target_t *t;
	rm_error_t err;
	char buf[256];
	int l;

	rm_error_clear(&err);
	check(topo_nhosts(c) == 8, "8 hosts, got %zu", topo_nhosts(c));
	check(topo_host_hops(c, topo_host_find(c, "h1"), topo_host_find(c, "h2")) == 2, "same leaf: 2 hops");
	check(topo_host_hops(c, topo_host_find(c, "h1"), topo_host_find(c, "h8")) == 4, "across spine: 4");
	want[0] = k->lat_net + 2 * k->lat_hop + xfer(k, k->bw_net);
	want[1] = k->lat_net + xfer(k, k->bw_net);
	want[2] = k->lat_host + xfer(k, k->bw_host);
	want[3] = k->lat_numa + xfer(k, k->bw_numa);
	want[4] = k->lat_core + xfer(k, k->bw_core);
	want[5] = 0;
	t = topo_target_from_hosts(c, all, 8, 0, &err);
	check(t != NULL, "target: %s", err.text);
	if (!t)
		goto out;
	check(t->nslots == 64 && t->nlevels == 6 && t->nhosts == 8 && t->host_level == 2, "shape %u/%d", t->nslots,
	      t->nlevels);
	for (l = 0; l < 6 && t->nlevels == 6; l++) {
		static const uint32_t ng[] = { 1, 4, 8, 16, 32, 64 };

		check(!strcmp(t->level_name[l], names[l]) && t->ngroups[l] == ng[l], "level %d: %s(%u)", l,
		      t->level_name[l], t->ngroups[l]);
		check(fabs(t->cost[l] - want[l]) < 1e-9, "cost %s: %g, want %g", names[l], t->cost[l], want[l]);
	}
	check(t->kind[1] == TOPO_LEVEL_NETWORK && t->kind[2] == TOPO_LEVEL_HOST && t->kind[5] == TOPO_LEVEL_PU,
	      "kinds");
	check(t->net_dist == NULL, "a fat tree is a tree: no net_dist");
	check(topo_target_tleaf_string(t, buf, sizeof(buf)) == 0 && !strncmp(buf, "tleaf 5 4 ", 10),
	      "uniform: tleaf '%s'", buf);
	check_depth_first(t, "fat tree");
	check_all_pairs(c, t, "fat tree");
	topo_target_destroy(t);

	/* h3 and h4 share a leaf: depth-first puts h4 right after h3, then h1, h2 */
	t = topo_target_from_hosts(c, mixed, 4, 1, &err);
	check(t && t->nslots == 16 && t->nlevels == 5, "per-core target");
	if (t) {
		check(!strcmp(t->level_name[4], "core") && t->kind[4] == TOPO_LEVEL_CORE, "leaf level is cores");
		check(!strcmp(t->host_name[t->slot_host[0]], "h3") && !strcmp(t->host_name[t->slot_host[4]], "h4") &&
			      !strcmp(t->host_name[t->slot_host[8]], "h1"),
		      "depth-first keeps the given order where it can");
		check(t->slot_pu_os[1] == 2, "second core's first PU is PU 2 (os %u)", t->slot_pu_os[1]);
		check_depth_first(t, "per core");
		check_all_pairs(c, t, "per core");
	}
	topo_target_destroy(t);
out:
	topo_cluster_destroy(c);
}

static void test_irregular(void)
{
	topo_cluster_t c = topo_cluster_create();
	char path[400];
	rm_error_t err;
	topo_target_t *t;
	topo_slot_t slots[6];
	long h1, h3, h5;
	int i;

	rm_error_clear(&err);
	snprintf(path, sizeof(path), "%s/chain.topo", tmp);
	write_chain(path);
	check(topo_load_ib_file(c, path, &err) == 0, "chain: %s", err.text);
	check(topo_load_hwloc_spec(c, "synthetic:core:2 pu:1@c1,c2,c3,c4,c5,c6", &err) == 0, "hw");
	check(topo_cluster_finalize(c, &err) == 0, "finalize: %s", err.text);
	h1 = topo_host_find(c, "c1");
	h3 = topo_host_find(c, "c3");
	h5 = topo_host_find(c, "c5");
	check(topo_host_hops(c, h1, h3) == 3 && topo_host_hops(c, h1, h5) == 4, "chain hops %d %d",
	      topo_host_hops(c, h1, h3), topo_host_hops(c, h1, h5));
	for (i = 0; i < 6; i++)
		slots[i] = (topo_slot_t){ (uint32_t)topo_host_find(c, (char[]){ 'c', (char)('1' + i), 0 }), 0 };
	t = topo_target_from_slots(c, slots, 6, &err);
	check(t != NULL, "target: %s", err.text);
	if (t) {
		check(t->net_dist != NULL, "irregular fabric gets net_dist");
		check_all_pairs(c, t, "chain");
		check_depth_first(t, "chain");
	}
	topo_target_destroy(t);
	topo_cluster_destroy(c);
}

static void test_torus(void)
{
	topo_cluster_t c = topo_cluster_create();
	const char *hosts[] = { "n000", "n001", "n096", "n006", "n016" };
	/* router distances from n000 by hand: same router; x 3 -> 1 with wrap; z 3 (no wrap) at cost 1;
	 * y 2 on a wrapped 4 at cost 2 -> 4 */
	const double hops[] = { 0, 0, 1, 3, 4 };
	char path[400];
	rm_error_t err;
	topo_target_t *t;
	topo_costs_t *k = topo_cluster_costs(c);
	FILE *f;
	int i;

	rm_error_clear(&err);
	snprintf(path, sizeof(path), "%s/torus.conf", tmp);
	f = fopen(path, "w");
	fprintf(f,
		"dims = 4x4x4\nwrap = yes,yes,no\nlink_cost = 1,2,1\nnodes_per_router = 2\n"
		"host_pattern = n{id:3}\n");
	fclose(f);
	check(topo_load_torus(c, path, &err) == 0, "torus: %s", err.text);
	check(topo_load_hwloc_spec(c, "synthetic:core:2 pu:1@n000,n001,n096,n006,n016", &err) == 0, "hw");
	check(topo_cluster_finalize(c, &err) == 0, "finalize");
	check(topo_nhosts(c) == 128, "every torus node is a host: %zu", topo_nhosts(c));
	check(topo_torus(c) && topo_torus(c)->dims[1] == 4, "spec");
	for (i = 1; i < 5; i++) {
		topo_slot_t a = { (uint32_t)topo_host_find(c, "n000"), 0 },
			    b = { (uint32_t)topo_host_find(c, hosts[i]), 0 };
		/* cost.c: injection (lat_net + ref_bytes / bw_net), then per hop of link cost 1 its latency
		 * and one more link transfer (hop-bytes): lat_hop + ref_bytes / bw_hop */
		double want = k->lat_net + xfer(k, k->bw_net) + hops[i] * (k->lat_hop + xfer(k, k->bw_hop));

		check(fabs(topo_slot_distance(c, a, b) - want) < 1e-9, "n000-%s: %g want %g", hosts[i],
		      topo_slot_distance(c, a, b), want);
	}
	{ /* with the defaults by hand: 4.82 + 4.82 base, 0.15 + 7194 B * 0.00067 us/B = 4.97 per hop */
		topo_slot_t a = { (uint32_t)topo_host_find(c, "n000"), 0 },
			    b = { (uint32_t)topo_host_find(c, "n006"), 0 };

		check(fabs(topo_slot_distance(c, a, b) - (9.64 + 3 * 4.97)) < 1e-9, "n000-n006 = 24.55 us: %g",
		      topo_slot_distance(c, a, b));
	}
	t = topo_target_from_hosts(c, hosts, 5, 0, &err);
	check(t != NULL, "torus target: %s", err.text);
	if (t) {
		check(t->net_dist != NULL, "a torus gets net_dist");
		/* block levels by hand: the 4x4x4 router box is halved along its longest side, x first on
		 * ties: block1 2x4x4, block2 2x2x4, block3 2x2x2 (then 1x2x2, 1x1x2, routers). Routers:
		 * n000/n001 0 = (0,0,0), n096 48 = (3,0,0), n006 3 = (0,0,3), n016 8 = (0,2,0).
		 * block1 (x/2): {n000 n001 n006 n016} {n096}: 2 groups; block2 (x/2, y/2): n016 leaves
		 * the first: 3; block3 (x/2, y/2, z/2): n006 leaves n000's: 4; finer blocks and routers
		 * add no branch (4 groups each) and are dropped; then the 5 hosts. */
		check(t->nlevels >= 5 && !strcmp(t->level_name[1], "block1") && t->ngroups[1] == 2 &&
			      !strcmp(t->level_name[2], "block2") && t->ngroups[2] == 3 &&
			      !strcmp(t->level_name[3], "block3") && t->ngroups[3] == 4 && t->host_level == 4 &&
			      t->ngroups[4] == 5,
		      "torus block levels (%s %u, %s %u)", t->level_name[1], t->ngroups[1], t->level_name[2],
		      t->ngroups[2]);
		check_all_pairs(c, t, "torus");
	}
	topo_target_destroy(t);
	topo_cluster_destroy(c);
}

static void test_flat_and_single(void)
{
	topo_cluster_t c = topo_cluster_create();
	const char *one[] = { "a" }, *two[] = { "a", "b" };
	topo_target_t *t;
	rm_error_t err;

	rm_error_clear(&err);
	topo_load_hwloc_spec(c, "synthetic:pack:1 l3:1 l2:4 core:1 pu:2@a,b", &err);
	topo_cluster_finalize(c, &err);
	t = topo_target_from_hosts(c, one, 1, 0, &err);
	check(t && t->nlevels == 4 && t->host_level == 1 && !strcmp(t->level_name[2], "l2"),
	      "single host: root, host, l2 (= core), pu");
	if (t)
		check_all_pairs(c, t, "single host");
	topo_target_destroy(t);
	t = topo_target_from_hosts(c, two, 2, 0, &err);
	check(t && t->nlevels == 4 && t->ngroups[1] == 2 && !t->net_dist, "flat network: root, host, l2, pu");
	if (t)
		check_all_pairs(c, t, "flat");
	topo_target_destroy(t);
	topo_cluster_destroy(c);
}

static void test_bad(void)
{
	topo_cluster_t c = topo_cluster_create();
	const char *unknown[] = { "h1", "zz" }, *nohw[] = { "h1", "h3" };
	topo_slot_t s[3];
	rm_error_t err;
	char path[400];

	rm_error_clear(&err);
	topo_load_hwloc_spec(c, "synthetic:core:2 pu:1@h1,h2", NULL);
	s[0] = (topo_slot_t){ 0, 0 };
	check(!topo_target_from_slots(c, s, 1, &err) && strstr(err.text, "finalized"), "not finalized");
	snprintf(path, sizeof(path), "%s/fattree.topo", tmp);
	topo_load_ib_file(c, path, NULL);
	topo_cluster_finalize(c, NULL);
	rm_error_clear(&err);
	check(!topo_target_from_hosts(c, unknown, 2, 0, &err) && !strcmp(err.source, "zz"), "unknown host named");
	rm_error_clear(&err);
	check(!topo_target_from_hosts(c, nohw, 2, 0, &err) && !strcmp(err.source, "h3") && strstr(err.text, "hardware"),
	      "fabric-only host has no hardware: %s", err.text);
	rm_error_clear(&err);
	s[1] = (topo_slot_t){ 0, 5 };
	check(!topo_target_from_slots(c, s, 2, &err) && strstr(err.text, "no PU 5"), "PU out of range: %s", err.text);
	rm_error_clear(&err);
	s[1] = (topo_slot_t){ 1, 0 };
	s[2] = (topo_slot_t){ 0, 0 };
	check(!topo_target_from_slots(c, s, 3, &err) && strstr(err.text, "twice"), "duplicate slot: %s", err.text);
	rm_error_clear(&err);
	s[2] = (topo_slot_t){ 99999, 0 };
	check(!topo_target_from_slots(c, s, 3, &err) && strstr(err.text, "no host"), "bad host index");
	check(!topo_target_from_slots(c, s, 0, NULL) && errno == EINVAL, "no slots");
	topo_cluster_destroy(c);
}

int main(void)
{
	char path[400];

	snprintf(tmp, sizeof(tmp), "/tmp/rankmap-target.XXXXXX");
	if (!mkdtemp(tmp)) {
		fail("mkdtemp");
		return harness_done();
	}
	test_fattree();
	test_irregular();
	test_torus();
	test_flat_and_single();
	test_bad();
	snprintf(path, sizeof(path), "rm -rf %s", tmp);
	if (system(path) != 0)
		fail("cleanup");
	return harness_done();
}
