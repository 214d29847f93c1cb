/*
 * tests/unit/test_topo_cluster.c: the cluster container: host table at scale, finalize joining hardware
 * and fabric hosts by name, cluster files (good and bad), failed loads leaving the cluster unchanged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster_private.h"
#include "tests/harness.h"

static char tmp[64];

static void write_file(const char *name, const char *text, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", tmp, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void test_host_table(void)
{
	topo_cluster_t c = topo_cluster_create();
	char name[32];
	size_t i, bad = 0;

	for (i = 0; i < 100000; i++) {
		snprintf(name, sizeof(name), "node%06zu", i);
		if (topo_cluster_add_host(c, name) != (long)i)
			bad++;
	}
	check(bad == 0 && topo_nhosts(c) == 100000, "100,000 hosts added");
	for (i = 0; i < 100000; i += 7) {
		snprintf(name, sizeof(name), "node%06zu", i);
		if (topo_host_find(c, name) != (long)i || strcmp(topo_host_name(c, i), name))
			bad++;
	}
	check(bad == 0, "found by name");
	check(topo_cluster_add_host(c, "node000042") == 42 && topo_nhosts(c) == 100000, "re-adding returns index");
	check(topo_host_find(c, "node100000") == -1, "absent");
	check(topo_host_name(c, 100000) == NULL && topo_host_npus(c, 5) == 0 && !topo_host_hwloc(c, 5),
	      "out of range and no hardware");
	check(topo_host_hops(c, 1, 2) == -1 && topo_host_hops(c, 3, 3) == 0, "hops without a fabric");
	topo_cluster_destroy(c);
}

/* PlaFRIM: hwloc names vs fabric names, counted independently with ls and grep. */
static void test_plafrim(void)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err;
	char path[1200];
	size_t i, both = 0, hw_only = 0, fab_only = 0;
	long a, b;
	FILE *p;
	int want_both = -1;

	rm_error_clear(&err);
	snprintf(path, sizeof(path), "%s/example/cluster.conf", harness_data_dir());
	check(topo_load_cluster_file(c, path, &err) == 0, "example cluster: %s", err.text);
	check(topo_cluster_finalize(c, &err) == 0, "finalize: %s", err.text);
	for (i = 0; i < topo_nhosts(c); i++) {
		int hw = topo_host_hwloc(c, i) != NULL, fab = c->hosts[i].fabric_host >= 0;

		both += hw && fab;
		hw_only += hw && !fab;
		fab_only += !hw && fab;
	}
	/* hosts named both in hwloc/ and as the first word of a CA description in the ports report */
	snprintf(path, sizeof(path),
		 "cd tests/data/plafrim && ls hwloc | sed 's/.xml$//' | sort > %s/hw && "
		 "grep '^CA' ib/ib-subnet0.txt | sed \"s/.*( '\\([^ ']*\\) .*/\\1/\" | sort -u > %s/fab && "
		 "comm -12 %s/hw %s/fab | wc -l",
		 tmp, tmp, tmp, tmp);
	p = popen(path, "r");
	if (p && fscanf(p, "%d", &want_both) != 1)
		want_both = -1;
	if (p)
		pclose(p);
	check(hw_only + both == 122, "122 hosts with hardware");
	check(want_both < 0 || (size_t)want_both == both, "hosts with hardware and fabric: %zu, grep says %d", both,
	      want_both);
	check(both > 100 && fab_only >= 1 && hw_only >= 1, "both %zu, fabric only %zu, hwloc only %zu", both, fab_only,
	      hw_only);
	a = topo_host_find(c, "bonobo001");
	b = topo_host_find(c, "bonobo002");
	check(a >= 0 && b >= 0 && topo_host_hops(c, a, b) >= 2, "bonobo001-002 hops %d", topo_host_hops(c, a, b));
	check(topo_cluster_finalize(c, &err) == 0 && topo_nhosts(c) == hw_only + both + fab_only,
	      "finalize is idempotent");
	topo_cluster_destroy(c);
}

static void expect_file_error(const char *what, const char *text, const char *src, int line, const char *msg)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err;
	char path[400];

	rm_error_clear(&err);
	write_file("bad.conf", text, path, sizeof(path));
	check(topo_load_cluster_file(c, path, &err) < 0, "%s: refused", what);
	check(strstr(err.source, src ? src : "bad.conf") != NULL, "%s: source '%s'", what, err.source);
	check(line == 0 || err.line == line, "%s: line %d, want %d", what, err.line, line);
	check(strstr(err.text, msg) != NULL, "%s: '%s' lacks '%s'", what, err.text, msg);
	check(topo_nhosts(c) == 0 && c->ntypes == 0 && !c->fabric && !c->torus, "%s: cluster unchanged", what);
	topo_cluster_destroy(c);
}

static void test_cluster_files(void)
{
	topo_cluster_t c;
	rm_error_t err;
	char path[400], dir[400];

	expect_file_error("unknown key", "hwloc = synthetic:core:2 pu:1@a\nfoo = 1\n", NULL, 2, "unknown key 'foo'");
	expect_file_error("no equals", "# c\n\nhwloc synthetic:core:2 pu:1\n", NULL, 3, "key = value");
	expect_file_error("bad number", "lat_net = fast\n", NULL, 1, "lat_net");
	expect_file_error("zero bandwidth", "bw_net = 0\n", NULL, 1, "bw_net");
	expect_file_error("zero torus link bandwidth", "# torus\nbw_hop = 0\n", NULL, 2, "bw_hop");
	expect_file_error("empty value", "ib =\n", NULL, 1, "needs a value");
	expect_file_error("rail GUID beyond 64 bits", "rail = 0x1ffffffffffffffff 3\n", NULL, 1, "rail: expected");
	{ /* a rail line naming a GUID no HCA of the fabric has: refused, not silently ignored */
		char text[4400], abs[4096];

		snprintf(text, sizeof(text), "ib = %s/ib/site-2groups.fabric\n# typo\nrail = 0x1 3\n",
			 realpath(harness_data_dir(), abs) ? abs : harness_data_dir());
		expect_file_error("rail GUID no HCA has", text, NULL, 3, "no HCA of the fabric has");
	}
	expect_file_error("empty file", "# nothing\n", NULL, 0, "no source");
	expect_file_error("missing data file", "hwloc = synthetic:core:2 pu:1@a\nhwloc = nosuch.xml\n", "nosuch.xml", 0,
			  "bad.conf:2");
	expect_file_error("bad synthetic", "hwloc = synthetic:core:x@a\n", "synthetic", 0, "bad.conf:1");
	expect_file_error("garbage torus", "hwloc = synthetic:core:2 pu:1@a\ntorus = bad.conf\n", "bad.conf", 0, "");

	/* costs, quotes, relative paths, synthetic and repeated keys */
	snprintf(dir, sizeof(dir), "%s/sub", tmp);
	mkdir(dir, 0755);
	write_file("sub/n.xml", "", path, sizeof(path));
	unlink(path);
	if (system("cp tests/data/plafrim/hwloc/bonobo001.xml /tmp/rankmap-cluster-bonobo.xml") == 0) {
		snprintf(path, sizeof(path), "mv /tmp/rankmap-cluster-bonobo.xml %s/sub/b1.xml", tmp);
		check(system(path) == 0, "copy");
	}
	write_file("sub/good.conf",
		   "# a comment\nhwloc = \"b1.xml\"   # relative to this file\n"
		   "hwloc = synthetic:pack:2 core:2 pu:1@s1,s2\nlat_net = 3.5\nref_bytes=1024\nbw_hop = 3\n",
		   path, sizeof(path));
	c = topo_cluster_create();
	rm_error_clear(&err);
	check(topo_load_cluster_file(c, path, &err) == 0, "good file: %s", err.text);
	check(topo_nhosts(c) == 3 && topo_host_find(c, "bonobo001") == 0, "hosts from XML and synthetic");
	check(topo_cluster_costs(c)->lat_net == 3.5 && topo_cluster_costs(c)->ref_bytes == 1024 &&
		      topo_cluster_costs(c)->bw_hop == 3,
	      "costs set");
	/* again into the non-empty cluster: duplicates, refused */
	rm_error_clear(&err);
	check(topo_load_cluster_file(c, path, &err) < 0 && strstr(err.text, "duplicate"), "again: %s", err.text);
	check(topo_nhosts(c) == 3, "still 3 hosts");
	/* a bad file into a non-empty cluster changes nothing */
	write_file("bad2.conf", "lat_net = 9\nhwloc = synthetic:core:2 pu:1@n1\nhwloc = nosuch/\n", path, sizeof(path));
	rm_error_clear(&err);
	check(topo_load_cluster_file(c, path, &err) < 0, "bad into non-empty");
	check(topo_nhosts(c) == 3 && topo_cluster_costs(c)->lat_net == 3.5, "non-empty cluster unchanged");
	topo_cluster_destroy(c);
}

/* Fabric names are short, hwloc names may carry a domain: joined by short name when unambiguous. */
static void test_short_names(void)
{
	topo_cluster_t c = topo_cluster_create();
	char path[400];
	rm_error_t err;
	long h;

	rm_error_clear(&err);
	snprintf(path, sizeof(path), "%s/topo/fattree-8.topo", harness_data_dir());
	check(topo_load_hwloc_spec(c, "synthetic:core:2 pu:1@h1.cluster.local,h2,h3.a,h3.b", &err) == 0, "hw");
	check(topo_load_ib_file(c, path, &err) == 0, "fabric: %s", err.text);
	check(topo_cluster_finalize(c, &err) == 0, "finalize");
	h = topo_host_find(c, "h1.cluster.local");
	check(h >= 0 && c->hosts[h].fabric_host >= 0 && topo_host_find(c, "h1") < 0, "h1 joined h1.cluster.local");
	check(c->hosts[topo_host_find(c, "h2")].fabric_host >= 0, "exact name");
	h = topo_host_find(c, "h3");
	check(h >= 0 && c->hosts[h].fabric_host >= 0 && !topo_host_hwloc(c, h) &&
		      c->hosts[topo_host_find(c, "h3.a")].fabric_host < 0,
	      "ambiguous short name h3: not joined");
	check(topo_nhosts(c) == 10, "4 hwloc hosts + 6 new fabric hosts (h3..h8): %zu", topo_nhosts(c));
	topo_cluster_destroy(c);
}

int main(void)
{
	char cmd[400];

	snprintf(tmp, sizeof(tmp), "/tmp/rankmap-cluster.XXXXXX");
	if (!mkdtemp(tmp)) {
		fail("mkdtemp");
		return harness_done();
	}
	test_host_table();
	test_plafrim();
	test_cluster_files();
	test_short_names();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd) != 0)
		fail("cleanup");
	return harness_done();
}
