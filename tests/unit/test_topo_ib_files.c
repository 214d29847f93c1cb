/*
 * tests/unit/test_topo_ib_files.c: the InfiniBand fabric from files: the real PlaFRIM ports report,
 * the real 582-CA NDR fat tree, the single-CA capture, and small hand-written fabrics. Every expected
 * figure was derived by hand or with grep/awk on the data files (commands in the comments), never
 * from the parser's output.
 */
#include <string.h>

#include "../harness.h"
#include "net_ib_private.h"

static char path_buf[4][512];

static const char *data(int slot, const char *rel)
{
	snprintf(path_buf[slot], sizeof(path_buf[slot]), "%s/%s", harness_data_dir(), rel);
	return path_buf[slot];
}

/* Loads files (a name starting with '@' is a node-name map) and finalizes; NULL on error. */
static struct topo_fabric *load(const char *const *files)
{
	struct topo_fabric *f = topo_fabric_create();
	rm_error_t err;
	char buf[600];
	int i;

	rm_error_clear(&err);
	for (i = 0; files[i]; i++) {
		int rc = files[i][0] == '@' ? topo_fabric_load_node_name_map(f, data(0, files[i] + 1), &err)
					    : topo_fabric_load_file(f, data(0, files[i]), &err);
		if (rc < 0) {
			fail("loading %s: %s", files[i], rm_error_format(&err, buf, sizeof(buf)));
			topo_fabric_destroy(f);
			return NULL;
		}
	}
	if (topo_fabric_finalize(f, &err) < 0) {
		fail("finalize: %s", rm_error_format(&err, buf, sizeof(buf)));
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
	return -1;
}

static int hops(const struct topo_fabric *f, const char *a, const char *b)
{
	long x = host(f, a), y = host(f, b);

	return x < 0 || y < 0 ? -99 : topo_fabric_hops(f, (size_t)x, (size_t)y);
}

static json_int_t jint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	check(json_is_integer(v), "report has integer %s", key);
	return json_integer_value(v);
}

static size_t count_anomalies(json_t *r, const char *kind)
{
	json_t *a = json_object_get(r, "anomalies"), *e;
	size_t i, n = 0;

	json_array_foreach (a, i, e)
		n += !strcmp(json_string_value(json_object_get(e, "kind")), kind);
	return n;
}

/* PlaFRIM, ib-subnet0.txt (ports report with DR path lines). By awk on the file:
 *   switches:  grep -v '^DR' F | awk '$1=="SW"{print $4}' | sort -u | wc -l              -> 9
 *   CAs:       awk '$1=="CA"{print $4} $8=="CA"{print $11}' | sort -u | wc -l             -> 125
 *   links (each listed twice, keyed by sorted guid:port pairs) by speed: QDR 163, DDR 32, SDR 6
 *   unconnected ports (lines without " - "): 35; leaves (SW with a CA peer): 7, the other 2 switches
 *   (0x...8500, 0x...8548) link only to leaves.
 * Hops by hand from the switch links: bonobo* hang on the Infiniscale-IV b0e0, linked only to the
 * MT47396 4939 (devel*), linked to leaves 84fa (fourmi017..) and 8524 (fourmi001..); manumanu sits on
 * 8c9e, linked only to 852c (fourmi049..), which links to the two spines 8500/8548 like 8528
 * (fourmi033..). */
static void test_plafrim(void)
{
	const char *files[] = { "plafrim/ib/ib-subnet0.txt", NULL };
	struct topo_fabric *f = load(files);
	json_t *r, *sp;
	long leaf;

	if (!f)
		return;
	check(topo_fabric_nhosts(f) == 125, "plafrim hosts %zu", topo_fabric_nhosts(f));
	check(topo_fabric_nswitches(f) == 9, "plafrim switches");
	check(hops(f, "bonobo001", "bonobo002") == 2, "same leaf: 2 hops");
	check(hops(f, "bonobo001", "devel01") == 3, "adjacent leaves: 3 hops");
	check(hops(f, "manumanu", "fourmi049") == 3, "8c9e-852c: 3 hops");
	check(hops(f, "manumanu", "fourmi033") == 5, "8c9e-852c-spine-8528: 5 hops");
	check(hops(f, "fourmi001", "fourmi017") == 4, "8524-x-84fa: 4 hops");
	check(hops(f, "bonobo001", "fourmi001") == 4, "b0e0-4939-8524: 4 hops");
	check(hops(f, "bonobo001", "manumanu") == 7, "b0e0-4939-84fa-spine-852c-8c9e: 7 hops");
	check(hops(f, "manumanu", "manumanu") == 0, "same host: 0");
	leaf = topo_fabric_host_leaf(f, (size_t)host(f, "manumanu"));
	check(leaf >= 0 && !strcmp(topo_fabric_switch_name(f, leaf), "Voltaire 4036 # 4036-8C9E"), "leaf of manumanu");
	check(topo_fabric_switch_level(f, leaf) == 0, "leaf level 0");
	check(topo_fabric_network_levels(f) == 2, "plafrim network levels %d", topo_fabric_network_levels(f));
	r = topo_fabric_report(f);
	check(jint(r, "switches") == 9 && jint(r, "hca_ports") == 125 && jint(r, "subnets") == 1,
	      "plafrim report counts");
	check(jint(r, "links") == 201 && jint(r, "unconnected_switch_ports") == 35, "plafrim links and unconnected");
	sp = json_object_get(r, "link_speeds");
	check(json_integer_value(json_object_get(sp, "QDR")) == 163 &&
		      json_integer_value(json_object_get(sp, "DDR")) == 32 &&
		      json_integer_value(json_object_get(sp, "SDR")) == 6,
	      "plafrim speed histogram");
	sp = json_object_get(r, "switches_per_level");
	check(json_array_size(sp) == 2 && json_integer_value(json_array_get(sp, 0)) == 7 &&
		      json_integer_value(json_array_get(sp, 1)) == 2,
	      "plafrim 7 leaves, 2 spines");
	/* 38 links are below the QDR norm: 32 DDR + 6 SDR; a ports report says nothing of what the ports
	 * support, so they are notes (below_norm_link), not links that could be faster (slow_link) */
	check(count_anomalies(r, "below_norm_link") == 38 && count_anomalies(r, "slow_link") == 0,
	      "plafrim: 38 links below the norm, none known slow (%zu, %zu)", count_anomalies(r, "below_norm_link"),
	      count_anomalies(r, "slow_link"));
	check(count_anomalies(r, "generic_hca") == 0, "plafrim: no generic HCA");
	json_decref(r);
	topo_fabric_destroy(f);
}

/* NDR fat tree. By grep: `grep -c '^Switch'` 40 (`IBLEAF` in 31 descriptions, `IBSPINE` in 9);
 * `grep -c '^Ca'` 582, of which 40 "Aggregation Node"; HCAs 542: 69 "MT4129 ConnectX7 ..." and 3
 * "localhost HCA-n" are generic (named by GUID, 72 hosts), the others give 121 distinct first words
 * (awk '{print $1}' | sort -u), so 193 hosts. Leaves by awk on Switch blocks: a08-p1-dgx-04-c01 and
 * -c02 share leaves A09-P1-IBLEAF-0[1-4]-04; B11-P1-CUFM-02 hangs on B09-P1-IBLEAF-0[34]-08 only. */
static void test_ndr(void)
{
	const char *files[] = { "ib/ndr-fattree-582ca.ibnetdiscover", NULL };
	struct topo_fabric *f = load(files);
	size_t s, bad_level = 0;
	long g = -2, l1, l2;
	json_t *r;

	if (!f)
		return;
	check(topo_fabric_nswitches(f) == 40, "ndr switches");
	check(topo_fabric_nhosts(f) == 193, "ndr hosts %zu", topo_fabric_nhosts(f));
	for (s = 0; s < topo_fabric_nswitches(f); s++) {
		const char *n = topo_fabric_switch_name(f, (long)s);
		int want = strstr(n, "IBLEAF") ? 0 : strstr(n, "IBSPINE") ? 1 : -5;

		bad_level += topo_fabric_switch_level(f, (long)s) != want;
		if (want == 0) {
			long gg = topo_fabric_leaf_group(f, (long)s, 1);

			if (g == -2)
				g = gg;
			check(gg == g && gg >= 0, "2-level fat tree: every leaf in one k=1 group");
			check(topo_fabric_leaf_group(f, (long)s, 0) == (long)s, "k=0 group is the leaf");
		}
	}
	check(bad_level == 0, "IBLEAF switches are level 0, IBSPINE level 1 (%zu wrong)", bad_level);
	check(topo_fabric_network_levels(f) == 2, "ndr network levels");
	check(hops(f, "a08-p1-dgx-04-c01", "a08-p1-dgx-04-c02") == 2, "two hosts on one leaf: 2 hops");
	check(hops(f, "a08-p1-dgx-04-c01", "B11-P1-CUFM-02") == 4, "hosts on different leaves: 4 hops");
	check(hops(f, "0xe09d730300858d88", "a08-p1-dgx-04-c01") > 0, "generic HCA host named by GUID");
	l1 = topo_fabric_host_leaf(f, (size_t)host(f, "B11-P1-CUFM-02"));
	l2 = topo_fabric_host_leaf(f, (size_t)host(f, "a08-p1-dgx-04-c01"));
	check(l1 >= 0 && strstr(topo_fabric_switch_name(f, l1), "B09-P1-IBLEAF-0"), "leaf of B11-P1-CUFM-02");
	check(l2 >= 0 && strstr(topo_fabric_switch_name(f, l2), "A09-P1-IBLEAF-0"), "leaf of a08-p1-dgx-04-c01");
	r = topo_fabric_report(f);
	check(jint(r, "hcas") == 542 && jint(r, "aggregation_nodes") == 40, "ndr HCAs and aggregation nodes");
	check(jint(r, "hca_ports") == 542, "ndr HCA ports");
	check(count_anomalies(r, "generic_hca") == 72, "ndr generic HCAs %zu", count_anomalies(r, "generic_hca"));
	check(json_integer_value(json_object_get(json_object_get(r, "link_speeds"), "NDR")) == jint(r, "links"),
	      "ndr: every link NDR");
	json_decref(r);
	topo_fabric_destroy(f);
}

static void test_single_ca(void)
{
	const char *files[] = { "ib/single-ca.ibnetdiscover", NULL };
	struct topo_fabric *f = load(files);
	json_t *r;

	if (!f)
		return;
	check(topo_fabric_nhosts(f) == 1 && !strcmp(topo_fabric_host_name(f, 0), "dgx-gb200-n01-c1"), "single CA host");
	check(topo_fabric_nswitches(f) == 0, "single CA: no switch");
	check(topo_fabric_host_leaf(f, 0) == -1, "single CA: no leaf");
	check(topo_fabric_hops(f, 0, 0) == 0, "single CA: 0 hops to itself");
	check(topo_fabric_network_levels(f) == 0, "single CA: no network level");
	r = topo_fabric_report(f);
	check(jint(r, "hcas") == 1 && jint(r, "hca_ports") == 0 && count_anomalies(r, "unconnected_hca") == 1,
	      "single CA report");
	json_decref(r);
	topo_fabric_destroy(f);
}

/* small-2level.topo by hand: leaf-1 {h1, h2, dual}, leaf-2 {h4, generic, dual port 2}, leaf-3 {h5,
 * h6}; every leaf on both spines; leaf-3's uplinks are 4xDDR and 1xQDR among 4xQDR links. Ports used:
 * spines 3 of 8, leaf-1/2 5 of 12, leaf-3 4 of 12: 5+5+7+7+8 = 32 unconnected. */
static void test_small_2level(void)
{
	const char *files[] = { "ib/small-2level.topo", NULL },
		   *mapped[] = { "@ib/small-2level.map", "ib/small-2level.topo", NULL };
	struct topo_fabric *f = load(files);
	json_t *r;

	if (!f)
		return;
	check(topo_fabric_nhosts(f) == 7, "small: 7 hosts (dual-port HCA is one host)");
	check(hops(f, "h1", "h2") == 2 && hops(f, "h1", "dual") == 2 && hops(f, "dual", "h4") == 2, "same leaf: 2");
	check(hops(f, "h1", "h4") == 4 && hops(f, "h1", "h6") == 4 && hops(f, "dual", "h5") == 4, "via a spine: 4");
	check(hops(f, "0x0002c90300000020", "h4") == 2, "generic HCA named by node GUID");
	r = topo_fabric_report(f);
	check(count_anomalies(r, "below_norm_link") == 2 && count_anomalies(r, "slow_link") == 0 &&
		      count_anomalies(r, "narrow_link") == 0,
	      "one slower, one narrower link than the norm, as notes (supported rates unknown)");
	check(count_anomalies(r, "generic_hca") == 1, "one generic HCA");
	check(jint(r, "unconnected_switch_ports") == 32, "32 unconnected switch ports");
	check(jint(r, "hca_ports") == 8 && jint(r, "links") == 14, "8 HCA ports, 14 links");
	json_decref(r);
	topo_fabric_destroy(f);
	/* the map names the generic HCA by its port GUID and h6 by its node GUID; loaded before the file */
	f = load(mapped);
	if (!f)
		return;
	check(topo_fabric_nhosts(f) == 7 && hops(f, "gpu07", "h4") == 2 && hops(f, "renamed6", "h5") == 2,
	      "node-name map names hosts");
	check(!strcmp(topo_fabric_switch_name(f, topo_fabric_host_leaf(f, (size_t)host(f, "h5"))), "rack3-leaf"),
	      "node-name map names switches");
	r = topo_fabric_report(f);
	check(count_anomalies(r, "generic_hca") == 0, "mapped generic HCA no longer an anomaly");
	json_decref(r);
	topo_fabric_destroy(f);
}

/* small-3level.ports by hand: pods a (leaf-a1, leaf-a2, agg-a1, agg-a2) and b, core-1 above the 4
 * agg switches; 2 hosts per leaf (node01-02 on leaf-a1, 03-04 leaf-a2, 05-06 leaf-b1, 07-08 leaf-b2). */
static void test_small_3level(void)
{
	const char *files[] = { "ib/small-3level.ports", NULL };
	struct topo_fabric *f = load(files);
	long la1, la2, lb1;

	if (!f)
		return;
	check(topo_fabric_nhosts(f) == 8 && topo_fabric_nswitches(f) == 9, "3-level: 8 hosts, 9 switches");
	check(hops(f, "node01", "node02") == 2, "same leaf 2");
	check(hops(f, "node01", "node03") == 4, "same pod 4");
	check(hops(f, "node01", "node05") == 6 && hops(f, "node04", "node08") == 6, "across pods 6");
	check(topo_fabric_network_levels(f) == 3, "3 network levels");
	la1 = topo_fabric_host_leaf(f, (size_t)host(f, "node01"));
	la2 = topo_fabric_host_leaf(f, (size_t)host(f, "node03"));
	lb1 = topo_fabric_host_leaf(f, (size_t)host(f, "node05"));
	check(la1 != la2 && topo_fabric_leaf_group(f, la1, 0) != topo_fabric_leaf_group(f, la2, 0), "k=0: own leaf");
	check(topo_fabric_leaf_group(f, la1, 1) == topo_fabric_leaf_group(f, la2, 1), "k=1: same pod");
	check(topo_fabric_leaf_group(f, la1, 1) != topo_fabric_leaf_group(f, lb1, 1), "k=1: pods differ");
	check(topo_fabric_leaf_group(f, la1, 2) == topo_fabric_leaf_group(f, lb1, 2), "k=2: one group");
	check(topo_fabric_leaf_group(f, la1, 3) == -1, "k beyond the levels: -1");
	topo_fabric_destroy(f);
}

/* Two subnets of one cluster, by hand: A: a-1 {n1, n2} - a-2 {n3}; B: b-1 {n1, n3, n4} - b-2 {n2}.
 * Each host's HCAs are ranked by description then GUID (A's before B's here), so subnet A is rail 0 and B
 * rail 1; hops are taken on the lowest rail both hosts reach each other on (no longer the closest HCA
 * pair): n1-n2 2 (A), n1-n3 3 (A; 2 through B before rails), n2-n3 3 (A), n2-n4 3 (B), n1-n4 2 (B),
 * n3-n4 2 (B). */
static void test_subnets(void)
{
	const char *files[] = { "ib/subnet-a.topo", "ib/subnet-b.ports", NULL };
	struct topo_fabric *f = load(files);
	json_t *r;

	if (!f)
		return;
	check(topo_fabric_nhosts(f) == 4, "hosts joined across subnets by name");
	check(hops(f, "n1", "n2") == 2 && hops(f, "n1", "n3") == 3 && hops(f, "n2", "n3") == 3, "subnet hops 1");
	check(topo_fabric_nrails(f) == 2 &&
		      topo_fabric_rail_hops(f, (size_t)host(f, "n1"), (size_t)host(f, "n3"), 1) == 2,
	      "subnets are rails 0 and 1; n1-n3 on rail 1 (B) 2");
	check(hops(f, "n2", "n4") == 3 && hops(f, "n1", "n4") == 2 && hops(f, "n3", "n4") == 2, "subnet hops 2");
	r = topo_fabric_report(f);
	check(jint(r, "subnets") == 2 && jint(r, "hcas") == 7 && jint(r, "switches") == 4, "subnets report");
	json_decref(r);
	topo_fabric_destroy(f);
}

int main(void)
{
	test_plafrim();
	test_ndr();
	test_single_ca();
	test_small_2level();
	test_small_3level();
	test_subnets();
	return harness_done();
}
