/*
 * tests/unit/test_topo_rails.c: rails (topo/net_ib_rails.c), dragonfly groups (topo/net_ib_groups.c),
 * site fabric files (topo/net_ib_site.c) and the costs that go through them (topo/cost.c). Expected
 * figures come from the data files' names, never from the code under test:
 *   NDR capture: leaves are named "...IBLEAF-RR-PP" with RR the rail (a host's four HCAs reach
 *   IBLEAF-01..04 of one PP); hosts with four HCAs:
 *     grep '^Ca' ndr-fattree-582ca.ibnetdiscover | awk -F'"' '{split($4,w," "); if (w[2]!="") print w[1]}' \
 *       | sort | uniq -c | awk '$1==4' | wc -l          -> 109
 *   df-5x4x4.topo: switches are named "df-gG-swS"; 5 groups, one cable per pair of groups (10).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../harness.h"
#include "net_ib_private.h"

static char path_buf[512];

static const char *data(const char *rel)
{
	snprintf(path_buf, sizeof(path_buf), "%s/%s", harness_data_dir(), rel);
	return path_buf;
}

static struct topo_fabric *load(const char *path, rm_error_t *err)
{
	struct topo_fabric *f = topo_fabric_create();

	rm_error_clear(err);
	if (topo_fabric_load_file(f, path, err) < 0 || topo_fabric_finalize(f, err) < 0) {
		topo_fabric_destroy(f);
		return NULL;
	}
	return f;
}

static long host(const struct topo_fabric *f, const char *name)
{
	size_t i;

	for (i = 0; i < topo_fabric_nhosts(f); i++)
		if (!strcmp(topo_fabric_host_name(f, i), name))
			return (long)i;
	fail("host %s not found", name);
	return 0;
}

/* The number after "IBLEAF-" in a switch name, -1 when none. */
static int leaf_rr(const char *name)
{
	const char *p = name ? strstr(name, "IBLEAF-") : NULL;

	return p ? atoi(p + 7) : -1;
}

static void test_ndr_rails(void)
{
	rm_error_t err;
	struct topo_fabric *f = load(data("ib/ndr-fattree-582ca.ibnetdiscover"), &err);
	long rail_of_rr[100];
	size_t h, i, four = 0, bad_map = 0, leaf_not_rail0 = 0;

	if (!f) {
		fail("ndr: %s", err.text);
		return;
	}
	for (i = 0; i < 100; i++)
		rail_of_rr[i] = -1;
	check(topo_fabric_nrails(f) == 4, "ndr: 4 rails (%zu)", topo_fabric_nrails(f));
	for (h = 0; h < topo_fabric_nhosts(f); h++) {
		size_t n = topo_fabric_host_nports(f, h);
		unsigned seen = 0;

		for (i = 0; i < n; i++) {
			int rr = leaf_rr(topo_fabric_switch_name(f, topo_fabric_host_port_switch(f, h, i)));
			long r = topo_fabric_host_port_rail(f, h, i);

			if (rr < 0 || rr >= 100 || r < 0)
				continue;
			if (rail_of_rr[rr] < 0)
				rail_of_rr[rr] = r;
			bad_map += rail_of_rr[rr] != r;
			seen |= 1u << r;
		}
		four += n == 4 && seen == 0xf;
		if (topo_fabric_host_rail_port(f, h, 0) >= 0 &&
		    topo_fabric_host_leaf(f, h) != topo_fabric_host_rail_leaf(f, h, 0))
			leaf_not_rail0++;
	}
	check(bad_map == 0, "ndr: every port under an IBLEAF-RR leaf is on RR's rail (%zu not)", bad_map);
	for (i = 1; i <= 4; i++)
		for (h = i + 1; h <= 4; h++)
			check(rail_of_rr[i] >= 0 && rail_of_rr[i] != rail_of_rr[h],
			      "ndr: IBLEAF-%02zu and -%02zu are two rails", i, h);
	check(four == 109, "ndr: 109 hosts have their 4 HCAs on the 4 rails (%zu)", four);
	check(leaf_not_rail0 == 0, "ndr: a host is listed under its rail-0 leaf (%zu not)", leaf_not_rail0);
	/* a08-p1-dgx-04-c01 and -c02 share every leaf (IBLEAF-RR-04): 2 links on each rail */
	for (i = 0; i < 4; i++)
		check(topo_fabric_rail_hops(f, (size_t)host(f, "a08-p1-dgx-04-c01"),
					    (size_t)host(f, "a08-p1-dgx-04-c02"), (unsigned)i) == 2,
		      "ndr: c01-c02 2 hops on rail %zu", i);
	check(topo_fabric_ngroups(f) == 0, "ndr: a fat tree has no dragonfly groups");
	check(topo_fabric_network_levels(f) == 2, "ndr: network levels unchanged (2)");
	topo_fabric_destroy(f);
}

static void test_dragonfly(void)
{
	rm_error_t err;
	struct topo_fabric *f = load(data("ib/df-5x4x4.topo"), &err);
	long group_of_g[5] = { -1, -1, -1, -1, -1 };
	size_t s, g, bad = 0, pairs = 0;
	topo_group_links_t gl;

	if (!f) {
		fail("df: %s", err.text);
		return;
	}
	check(topo_fabric_ngroups(f) == 5, "df: 5 groups (%zu)", topo_fabric_ngroups(f));
	check(topo_fabric_nglobal_links(f) == 10, "df: 10 global links (%zu)", topo_fabric_nglobal_links(f));
	check(topo_fabric_ngroup_pairs(f) == 10, "df: every pair of groups linked once");
	check(!strcmp(topo_fabric_groups_source(f) ? topo_fabric_groups_source(f) : "", "fabric"),
	      "df: found from the fabric");
	for (s = 0; s < topo_fabric_nswitches(f); s++) {
		const char *nm = topo_fabric_switch_name(f, (long)s);
		int gg = nm && !strncmp(nm, "df-g", 4) ? atoi(nm + 4) : -1;
		long mine = topo_fabric_switch_group(f, (long)s);

		if (gg < 0 || gg > 4 || mine < 0) {
			bad++;
			continue;
		}
		if (group_of_g[gg] < 0)
			group_of_g[gg] = mine;
		bad += group_of_g[gg] != mine;
	}
	check(bad == 0, "df: switches df-gG-* form group G (%zu not)", bad);
	for (g = 0; g < 5; g++) {
		check(topo_fabric_group_nswitches(f, g) == 4 && topo_fabric_group_nhosts(f, g) == 16,
		      "df: group %zu has 4 switches and 16 hosts", g);
		for (s = g + 1; s < 5; s++)
			if (topo_fabric_group_links(f, g, s, &gl) == 0 && gl.count == 1 && gl.gbps > 0)
				pairs++;
	}
	check(pairs == 10, "df: one rated link per group pair (%zu)", pairs);
	check(topo_fabric_group_links(f, 0, 5, &gl) < 0, "df: group out of range refused");
	check(topo_fabric_network_levels(f) == 2, "df: two network levels (leaf, group)");
	topo_fabric_destroy(f);
}

/* Costs on the dragonfly: same switch < same group < across a global link, the last clearly more. */
static void test_df_costs(void)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err;
	double same, intra, global;
	size_t n000 = SIZE_MAX, n001 = SIZE_MAX, n004 = SIZE_MAX, n016 = SIZE_MAX, i;

	rm_error_clear(&err);
	check(topo_load_ib_file(c, data("ib/df-5x4x4.topo"), &err) == 0, "df cluster: %s", err.text);
	check(topo_cluster_finalize(c, &err) == 0, "df cluster finalize: %s", err.text);
	for (i = 0; i < topo_nhosts(c); i++) {
		const char *nm = topo_host_name(c, i);

		n000 = !strcmp(nm, "n000") ? i : n000;
		n001 = !strcmp(nm, "n001") ? i : n001;
		n004 = !strcmp(nm, "n004") ? i : n004;
		n016 = !strcmp(nm, "n016") ? i : n016;
	}
	if (n000 == SIZE_MAX || n001 == SIZE_MAX || n004 == SIZE_MAX || n016 == SIZE_MAX) {
		fail("df cluster: hosts n000, n001, n004, n016 (df-g0-sw0, -sw0, -sw1, df-g1-sw0)");
		topo_cluster_destroy(c);
		return;
	}
	same = topo_host_rail_cost(c, n000, n001, 0);
	intra = topo_host_rail_cost(c, n000, n004, 0);
	global = topo_host_rail_cost(c, n000, n016, 0);
	check(same > 0 && same < intra && intra < global, "df: same switch %g < same group %g < global %g", same, intra,
	      global);
	check(global > 1.3 * same, "df: a global link costs clearly more (%g vs %g, was 4.7 %% more)", global, same);
	check(topo_host_net_class(c, n000, n001) == TOPO_NET_SAME_SWITCH &&
		      topo_host_net_class(c, n000, n004) == TOPO_NET_INTRA_GROUP &&
		      topo_host_net_class(c, n000, n016) == TOPO_NET_GLOBAL,
	      "df: net classes");
	check(topo_host_rail_cost(c, n000, n016, 1) < 0, "df: no rail 1");
	/* n000's HCA: "H-0000000000200000" in df-g0-sw0's block */
	check(topo_host_guid_rail(c, n000, 0x200000) == 0 && topo_host_guid_rail(c, n001, 0x200000) < 0,
	      "df: the rail of n000's HCA by GUID, not n001's");
	check(topo_host_rail_cost(c, n000, n000, 0) == 0, "df: a host to itself costs 0");
	topo_cluster_destroy(c);
}

static const char *write_tmp(char *dir, const char *name, const char *text)
{
	static char p[600];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fp = fopen(p, "w");
	if (!fp)
		return p;
	fputs(text, fp);
	fclose(fp);
	return p;
}

static void test_site(void)
{
	char dir[] = "/tmp/rankmap-rails-XXXXXX";
	struct topo_fabric *f;
	rm_error_t err;
	topo_group_links_t gl;
	const char *p;
	static const struct {
		const char *text;
		int line;
		const char *want;
	} bad[] = {
		{ "switch a\nhost h switch b\n", 2, "unknown switch 'b'" },
		{ "switch a\nswitch a\n", 2, "switch 'a' is declared twice" },
		{ "switch a group g\nswitch b\nlink a b rate 4xFOO\n", 3, "link: rate '4xFOO'" },
		{ "switch a ports 1\nhost h switch a\nhost k switch a\n", 3, "switch 'a' has no free port" },
		{ "switch a\nhost h switch a rail 99\n", 2, "host: rail '99'" },
		{ "switch a\nlink a a\n", 2, "link: switch 'a' is linked to itself" },
		{ "switch a\nfoo b\n", 2, "unknown statement 'foo'" },
	};
	size_t i;

	if (!mkdtemp(dir)) {
		fail("mkdtemp");
		return;
	}
	p = write_tmp(dir, "site.fabric",
		      "# two groups of two switches, two global cables\n"
		      "group east\n"
		      "switch e0 group east\nswitch e1 group east\nswitch w0 group west\nswitch w1 group west\n"
		      "link e0 e1 rate 4xHDR\nlink w0 w1 rate 4xHDR\n"
		      "link e1 w0 rate 4xHDR count 2   # two parallel cables\n"
		      "host x0 switch e0 rate 4xHDR\nhost x0 switch e1 rate 4xHDR rail 1\n"
		      "host x1 switch e1 rate 4xHDR\nhost x2 switch w0 rate 4xHDR\nhost x3 switch w1 rate 4xHDR\n");
	f = load(p, &err);
	check(f != NULL, "site file loads: %s", err.text);
	if (f) {
		check(topo_fabric_ngroups(f) == 2 && topo_fabric_nglobal_links(f) == 2,
		      "site: 2 groups, 2 global cables");
		check(topo_fabric_group_links(f, 0, 1, &gl) == 0 && gl.count == 2 && gl.gbps > 0,
		      "site: 2 rated cables");
		check(!strcmp(topo_fabric_groups_source(f), "site file"), "site: groups from the file");
		check(topo_fabric_nrails(f) == 2, "site: rail 1 as written (%zu rails)", topo_fabric_nrails(f));
		/* x0: nic0 on e0 (rail 0), nic1 on e1 (rail 1 as written); x1: nic0 on e1 (rail 0) */
		check(topo_fabric_rail_hops(f, (size_t)host(f, "x0"), (size_t)host(f, "x1"), 0) == 3 &&
			      topo_fabric_rail_hops(f, (size_t)host(f, "x0"), (size_t)host(f, "x1"), 1) < 0 &&
			      topo_fabric_default_rail(f, (size_t)host(f, "x0"), (size_t)host(f, "x1")) == 0,
		      "site: x0-x1 3 hops on rail 0 (the default), none on rail 1");
		check(topo_fabric_hops(f, (size_t)host(f, "x0"), (size_t)host(f, "x3")) == 5, "site: x0-x3 5 hops");
		topo_fabric_destroy(f);
	}
	/* two site files are two subnets: their groups never merge, even with the same names */
	p = write_tmp(dir, "site2.fabric",
		      "switch f0 group east\nswitch f1 group east\nswitch v0 group west\nswitch v1 group west\n"
		      "link f0 f1\nlink v0 v1\nlink f1 v0\nhost y0 switch f0\nhost y1 switch v1\n");
	f = topo_fabric_create();
	rm_error_clear(&err);
	check(topo_fabric_load_file(f, data("ib/site-2groups.fabric"), &err) == 0 &&
		      topo_fabric_load_file(f, p, &err) == 0 && topo_fabric_finalize(f, &err) == 0,
	      "two site files load: %s", err.text);
	check(topo_fabric_ngroups(f) == 4, "two site files: 2 + 2 groups (%zu)", topo_fabric_ngroups(f));
	topo_fabric_destroy(f);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = write_tmp(dir, "bad.fabric", bad[i].text);
		f = load(p, &err);
		check(!f && strstr(err.text, bad[i].want) && !strcmp(err.source, p) && err.line == bad[i].line,
		      "site error %zu names file and line: %s:%d %s", i, err.source, err.line, err.text);
		topo_fabric_destroy(f);
	}
	unlink(write_tmp(dir, "site.fabric", ""));
	unlink(write_tmp(dir, "site2.fabric", ""));
	unlink(write_tmp(dir, "bad.fabric", ""));
	rmdir(dir);
}

/* A site file of 50,000 hosts with two NICs each: a host's second NIC line costs O(1), not a scan of
 * every host seen so far (that was minutes of CPU; linear it is well under a second). */
static void test_site_many_nics(void)
{
	char dir[] = "/tmp/rankmap-rails-XXXXXX", path[600];
	const size_t nhosts = 50000, per = 200;
	struct topo_fabric *f;
	rm_error_t err;
	clock_t t0;
	double cpu;
	size_t i, k;
	FILE *fp;

	if (!mkdtemp(dir) || snprintf(path, sizeof(path), "%s/many.fabric", dir) < 0 || !(fp = fopen(path, "w"))) {
		fail("scratch file");
		return;
	}
	for (i = 0; i < nhosts / per; i++)
		fprintf(fp, "switch a%zu\nswitch b%zu\n", i, i);
	for (k = 0; k < 2; k++)
		for (i = 0; i < nhosts; i++)
			fprintf(fp, "host h%zu switch %c%zu\n", i, k ? 'b' : 'a', i / per);
	fclose(fp);
	t0 = clock();
	f = load(path, &err);
	cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
	check(f != NULL, "many NICs: site file loads: %s", err.text);
	check(cpu < 10.0, "many NICs: %zu hosts x 2 NICs load in %.2f s of CPU (linear)", nhosts, cpu);
	topo_fabric_destroy(f);
	unlink(path);
	rmdir(dir);
}

/* A rail override moves one HCA (the cluster file's rail = GUID N). */
static void test_override(void)
{
	rm_error_t err;
	struct topo_fabric *f = load(data("ib/ndr-fattree-582ca.ibnetdiscover"), &err);
	size_t h;
	uint64_t g;

	if (!f) {
		fail("ndr: %s", err.text);
		return;
	}
	h = (size_t)host(f, "a08-p1-dgx-04-c01");
	g = topo_fabric_host_port_guid(f, h, (size_t)topo_fabric_host_rail_port(f, h, 0));
	check(g != 0 && topo_fabric_guid_rail(f, g) == 0, "override: the rail-0 HCA of c01");
	check(topo_fabric_set_rail(f, g, 7) == 0 && topo_fabric_finalize(f, &err) == 0, "override applied");
	check(topo_fabric_guid_rail(f, g) == 7 && topo_fabric_nrails(f) == 8, "override: now rail 7 (%ld)",
	      topo_fabric_guid_rail(f, g));
	check(topo_fabric_set_rail(f, g, TOPO_MAX_RAILS) < 0 && topo_fabric_set_rail(f, 0, 1) < 0,
	      "bad overrides refused");
	topo_fabric_destroy(f);
}

int main(void)
{
	test_ndr_rails();
	test_dragonfly();
	test_df_costs();
	test_site();
	test_site_many_nics();
	test_override();
	return harness_done();
}
