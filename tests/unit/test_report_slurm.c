/*
 * tests/unit/test_report_slurm.c: the switch tree behind slurm-topology and the pictures
 * (topo/report/topo_slurm.h, topo/report/report_svg.h). Expected values derived by hand from the fabric files
 * (tests/data/ib/small-3level.ports: 4 leaves, 4 aggregation switches in 2 pods, 1 core).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/harness.h"
#include "report_svg.h"
#include "topo.h"
#include "topo_slurm.h"

static topo_cluster_t load(const char *ib, const char *map)
{
	topo_cluster_t c = topo_cluster_create();
	char path[512];
	rm_error_t err;

	rm_error_clear(&err);
	snprintf(path, sizeof(path), "%s/%s", harness_data_dir(), ib);
	if (!c || topo_load_ib_file(c, path, &err) < 0) {
		fail("load %s", path);
		return c;
	}
	if (map) {
		snprintf(path, sizeof(path), "%s/%s", harness_data_dir(), map);
		check(topo_load_node_name_map(c, path, &err) == 0, "node-name map %s", path);
	}
	check(topo_cluster_finalize(c, &err) == 0, "finalize %s", ib);
	return c;
}

static long by_name(const topo_swtree_t *t, const char *name)
{
	size_t s;

	for (s = 0; s < t->nsw; s++)
		if (!strcmp(t->name[s], name))
			return (long)s;
	return -1;
}

/* The switch whose description is desc (the fabric file's, independent of the naming rule). */
static long by_desc(const topo_swtree_t *t, const char *desc)
{
	size_t s;

	for (s = 0; s < t->nsw; s++)
		if (t->desc[s] && !strcmp(t->desc[s], desc))
			return (long)s;
	return -1;
}

static void test_sanitise(void)
{
	char b[64];

	check(!strcmp(topo_slurm_sanitise("MF0;A09-P1-IBLEAF-04-04:MQM9701/U1", b, sizeof(b)),
		      "MF0_A09-P1-IBLEAF-04-04_MQM9701_U1"),
	      "NDR name: %s", b);
	check(!strcmp(topo_slurm_sanitise("Voltaire 4036 # 4036-8C9E", b, sizeof(b)), "Voltaire_4036_4036-8C9E"),
	      "blanks and # squeezed: %s", b);
	check(!strcmp(topo_slurm_sanitise("  \"quoted\" ", b, sizeof(b)), "quoted"), "quotes and edges: %s", b);
	check(!strcmp(topo_slurm_sanitise("", b, sizeof(b)), ""), "empty stays empty");
	check(!strcmp(topo_slurm_sanitise("abcdefgh", b, 5), "abcd"), "cut to the buffer: %s", b);
}

static void test_three_levels(void)
{
	topo_cluster_t c = load("ib/small-3level.ports", NULL);
	topo_swtree_t *t = topo_swtree_build(c, 0, NULL);
	long core, agg, leaf;
	size_t *ch = NULL, n, s, kept = 0;

	check(t != NULL, "tree of small-3level");
	if (!t) {
		topo_cluster_destroy(c);
		return;
	}
	core = by_desc(t, "core-1"), agg = by_desc(t, "agg-b2"), leaf = by_desc(t, "leaf-a2");
	check(core >= 0 && agg >= 0 && leaf >= 0, "switch descriptions kept");
	/* GUIDs (by hand from the file): core-1 ...01, agg-a1..b2 ...10-13, leaf-a1..b2 ...20-23 */
	check(core >= 0 && !strcmp(t->name[core], "ibsw1") && agg >= 0 && !strcmp(t->name[agg], "ibsw5") && leaf >= 0 &&
		      !strcmp(t->name[leaf], "ibsw7"),
	      "names ibsw<N> by GUID rank");
	check(t->max_level == 2 && t->nplaced == 8 && t->nunplaced == 0, "3 levels, 8 hosts placed");
	check(leaf >= 0 && t->level[leaf] == 0 && t->host_off[leaf + 1] - t->host_off[leaf] == 2 &&
		      !strcmp(t->host[t->host_off[leaf]], "node03") &&
		      !strcmp(t->host[t->host_off[leaf] + 1], "node04"),
	      "leaf-a2 holds node03, node04 in order");
	n = agg >= 0 ? topo_swtree_children(c, t, (size_t)agg, &ch) : 0;
	check(n == 2 && ((!strcmp(t->desc[ch[0]], "leaf-b1") && !strcmp(t->desc[ch[1]], "leaf-b2")) ||
			 (!strcmp(t->desc[ch[0]], "leaf-b2") && !strcmp(t->desc[ch[1]], "leaf-b1"))),
	      "agg-b2 lists leaf-b1 and leaf-b2 (%zu children)", n);
	free(ch);
	n = core >= 0 ? topo_swtree_children(c, t, (size_t)core, &ch) : 0;
	check(n == 4, "core-1 lists the 4 aggregation switches (%zu)", n);
	free(ch);
	for (s = 0; s < t->nsw; s++)
		kept += t->kept[s];
	check(kept == 9 && t->nroots == 1 && core >= 0 && t->is_root[core], "9 switches kept, core-1 the only root");
	check(t->ntrees == 1, "one tree (%zu)", t->ntrees);
	topo_swtree_destroy(t);
	topo_cluster_destroy(c);
}

/* n2 has an HCA in each of subnet-a.topo (leaf a-1) and subnet-b.ports (leaf b-2, n2 alone). */
static void test_per_subnet(void)
{
	topo_cluster_t c = topo_cluster_create();
	topo_swtree_t *t;
	char a[512], b[512];
	long s1, s2;
	int flags;

	snprintf(a, sizeof(a), "%s/ib/subnet-a.topo", harness_data_dir());
	snprintf(b, sizeof(b), "%s/ib/subnet-b.ports", harness_data_dir());
	check(c && topo_load_ib_file(c, a, NULL) == 0 && topo_load_ib_file(c, b, NULL) == 0 &&
		      topo_cluster_finalize(c, NULL) == 0,
	      "two subnets loaded");
	for (flags = 0; flags <= TOPO_SWTREE_PER_SUBNET; flags += TOPO_SWTREE_PER_SUBNET) {
		t = topo_swtree_build(c, flags, NULL);
		s1 = t ? by_desc(t, "a-1") : -1, s2 = t ? by_desc(t, "b-2") : -1;
		check(s1 >= 0 && s2 >= 0 && t->kept[s1] && t->kept[s2] == (flags != 0) &&
			      (!flags ||
			       (t->host_off[s2 + 1] - t->host_off[s2] == 1 && !strcmp(t->host[t->host_off[s2]], "n2"))),
		      "flags %d: b-2 %s", flags,
		      flags ? "holds n2 (its first leaf in subnet B)" : "dropped (n2 under a-1)");
		topo_swtree_destroy(t);
	}
	topo_cluster_destroy(c);
}

static void test_dual_rail_and_names(void)
{
	topo_cluster_t c = load("ib/small-2level.topo", "ib/small-2level.map");
	topo_swtree_t *t = topo_swtree_build(c, 0, NULL);

	check(t && t->nmultihomed == 1 && t->nguid_named == 0 && t->nplaced == 7,
	      "one dual-HCA host, no GUID name with the map, 7 hosts placed");
	check(t && by_name(t, "rack3-leaf") >= 0, "switch named by the node-name map");
	check(t && t->nroots == 2 && t->ntrees == 1, "two spines are roots of one tree");
	topo_swtree_destroy(t);
	topo_cluster_destroy(c);
	c = load("reports/names.topo", "reports/names.map");
	t = topo_swtree_build(c, 0, NULL);
	check(t && by_name(t, "Leaf_A_0000000000009101") >= 0 && by_name(t, "Leaf_A_0000000000009102") >= 0 &&
		      by_name(t, "Leaf_A") < 0,
	      "equal map names both get their GUID");
	check(t && by_name(t, "ibsw4") >= 0 && by_name(t, "core_switch_1_rack_7") >= 0,
	      "map names sanitised, the unmapped switch ibsw4");
	check(t && t->order && !strcmp(t->name[t->order[0]], "Leaf_A_0000000000009101") &&
		      !strcmp(t->name[t->order[3]], "ibsw4"),
	      "switches in order of their names");
	topo_swtree_destroy(t);
	topo_cluster_destroy(c);
	c = load("ib/small-2level.topo", NULL);
	t = topo_swtree_build(c, TOPO_SWTREE_NAMED_ONLY, NULL);
	check(t && t->nguid_host == 1 && !strcmp(t->guid_host[0].name, "0x0002c90300000020") &&
		      t->guid_host[0].leaf == by_desc(t, "leaf-2") && t->nplaced == 6,
	      "named only: the generic HCA left out, listed with its leaf");
	topo_swtree_destroy(t);
	topo_cluster_destroy(c);
	test_per_subnet();
}

static void test_svg(void)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	rm_error_clear(&err);
	check(topo_swtree_build(c, 0, &err) == NULL && rm_error_isset(&err), "no fabric: no tree, error set");
	check(topo_cluster_finalize(c, NULL) == 0 &&
		      topo_report_svg(c, "<svg width=\"50\" height=\"20\"></svg>", f, &err) == 0,
	      "picture of an empty cluster");
	fclose(f);
	check(buf && strstr(buf, "no InfiniBand fabric") && strstr(buf, "<svg x=\"0\" y=\"46\" width=\"50\""),
	      "says so, and embeds the extra picture below");
	free(buf);
	topo_cluster_destroy(c);
	check(!strcmp(topo_report_svg_speed_colour("NDR"), "#f57c00") &&
		      !strcmp(topo_report_svg_speed_colour("nonsense"), "#888888"),
	      "speed colours");
}

int main(void)
{
	test_sanitise();
	test_three_levels();
	test_dual_rail_and_names();
	test_svg();
	return harness_done();
}
