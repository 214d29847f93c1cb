/*
 * tests/unit/test_topo_report.c: topo_cluster_report() on small clusters whose figures are derived by
 * hand: the fat tree of tests/data/topo/fattree-8.topo (see its NOTES) with synthetic hardware, and a
 * torus named by pattern; tori whose histograms (closed form, per pair of routers) must equal what
 * every host pair gives, and a sampled one.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_private.h"
#include "topo_report.h"
#include "tests/harness.h"

static long geti(json_t *r, const char *k)
{
	return (long)json_integer_value(json_object_get(r, k));
}

/* The report's hop_histogram (an array of {hops or distance, pairs} that must be in strictly increasing
 * order, hops null last) as an object "%g" -> pairs ("unconnected" for null), kept in r as "_hist". */
static json_t *hist(json_t *r)
{
	json_t *arr = json_object_get(r, "hop_histogram"), *o = json_object(), *e, *d;
	double last = -1;
	size_t i;
	char key[32];

	check(json_is_array(arr), "hop_histogram is an array");
	json_array_foreach (arr, i, e) {
		d = json_object_get(e, json_object_get(e, "hops") ? "hops" : "distance");
		if (json_is_null(d))
			snprintf(key, sizeof(key), "unconnected");
		else {
			check(json_number_value(d) > last, "hop_histogram in increasing order at %zu", i);
			last = json_number_value(d);
			snprintf(key, sizeof(key), "%g", json_number_value(d));
		}
		json_object_set(o, key, json_object_get(e, "pairs"));
	}
	json_object_set_new(r, "_hist", o);
	return o;
}

/* Anomalies of a kind, about host when not NULL (the structured "host" field). */
static int count_kind(json_t *an, const char *kind, const char *host)
{
	size_t i;
	json_t *e;
	int n = 0;

	json_array_foreach (an, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "kind")), kind) &&
		    (!host || !strcmp(json_string_value(json_object_get(e, "host")) ?: "", host)))
			n++;
	return n;
}

static void test_fattree(void)
{
	topo_cluster_t c = topo_cluster_create();
	char path[512];
	rm_error_t err;
	json_t *r, *h, *types, *an;

	rm_error_clear(&err);
	snprintf(path, sizeof(path), "%s/topo/fattree-8.topo", harness_data_dir());
	check(topo_load_ib_file(c, path, &err) == 0, "fabric: %s", err.text);
	check(topo_load_hwloc_spec(c, "synthetic:pack:2 core:2 pu:2@h[1-6],x1", &err) == 0, "hw: %s", err.text);
	check(topo_cluster_finalize(c, &err) == 0, "finalize");
	r = topo_cluster_report(c);
	check(r != NULL, "report");
	if (!r)
		goto out;
	check(geti(r, "hosts") == 9 && geti(r, "hosts_with_hardware") == 7, "hosts %ld/%ld", geti(r, "hosts"),
	      geti(r, "hosts_with_hardware"));
	check(geti(r, "packages") == 14 && geti(r, "cores") == 28 && geti(r, "pus") == 56, "hardware totals");
	check(geti(r, "switches") == 6 && geti(r, "hca_ports") == 8 && geti(r, "subnets") == 1, "fabric totals");
	h = hist(r);
	check(json_object_size(h) == 2 && geti(h, "2") == 4 && geti(h, "4") == 24, "histogram 2:4 4:24");
	check(strstr(json_string_value(json_object_get(r, "hop_histogram_method")), "exact") != NULL, "exact");
	types = json_object_get(r, "node_types");
	check(json_array_size(types) == 1, "one node type");
	check(geti(json_array_get(types, 0), "hosts") == 7 &&
		      !strcmp(json_string_value(json_object_get(json_array_get(types, 0), "host_list")), "h[1-6],x1"),
	      "type: 7 hosts h[1-6],x1");
	an = json_object_get(r, "anomalies");
	check(json_is_array(an), "anomalies list");
	check(count_kind(an, "no_hardware", NULL) == 2 && count_kind(an, "no_hardware", "h7") == 1 &&
		      count_kind(an, "no_hardware", "h8") == 1,
	      "h7, h8 in the fabric without hardware");
	check(count_kind(an, "not_in_fabric", NULL) == 1 && count_kind(an, "not_in_fabric", "x1") == 1,
	      "x1 has hardware but no HCA");
	check(json_is_null(json_object_get(r, "torus")) && json_is_object(json_object_get(r, "fabric")), "parts");
	json_decref(r);
out:
	topo_cluster_destroy(c);
}

/* 2x2x2 torus, 2 nodes per router, wrapped (distance 1 per differing coordinate): 16 nodes. Pairs by
 * hand: inside a router 8 (distance 0); each router has 3 routers at distance 1, 3 at 2, 1 at 3, so
 * 8*3/2 = 12 router pairs at 1, 12 at 2, 4 at 3, each with 2*2 = 4 node pairs: 48, 48, 16. */
static void test_torus(void)
{
	topo_cluster_t c = topo_cluster_create();
	char path[] = "/tmp/rankmap-report-XXXXXX";
	int fd = mkstemp(path);
	rm_error_t err;
	json_t *r, *h;
	FILE *f;

	rm_error_clear(&err);
	f = fdopen(fd, "w");
	fprintf(f, "dims = 2x2x2\nnodes_per_router = 2\nhost_pattern = t{id:2}\n");
	fclose(f);
	check(topo_load_torus(c, path, &err) == 0, "torus: %s", err.text);
	unlink(path);
	check(topo_cluster_finalize(c, &err) == 0, "finalize");
	r = topo_cluster_report(c);
	h = hist(r);
	check(geti(r, "hosts") == 16 && geti(r, "hosts_with_hardware") == 0 && geti(r, "switches") == 0,
	      "16 torus hosts, no hardware, no fabric");
	check(geti(h, "0") == 8 && geti(h, "1") == 48 && geti(h, "2") == 48 && geti(h, "3") == 16,
	      "torus histogram 0:8 1:48 2:48 3:16 (got %ld %ld %ld %ld)", geti(h, "0"), geti(h, "1"), geti(h, "2"),
	      geti(h, "3"));
	check(count_kind(json_object_get(r, "anomalies"), "no_hardware", NULL) == 16, "every host lacks hardware");
	check(json_is_object(json_object_get(r, "torus")), "torus part");
	json_decref(r);
	topo_cluster_destroy(c);
}

/* A node-name map alone makes an empty fabric: hosts are not "missing from the fabric". */
static void test_map_only(void)
{
	topo_cluster_t c = topo_cluster_create();
	char path[] = "/tmp/rankmap-report-map-XXXXXX";
	int fd = mkstemp(path);
	json_t *r;

	if (write(fd, "0x100 \"h1\"\n", 12) != 12)
		fail("write map");
	close(fd);
	check(topo_load_hwloc_spec(c, "synthetic:core:2 pu:1@a,b", NULL) == 0, "hw");
	check(topo_load_node_name_map(c, path, NULL) == 0, "map");
	unlink(path);
	topo_cluster_finalize(c, NULL);
	r = topo_cluster_report(c);
	check(r && json_array_size(json_object_get(r, "anomalies")) == 0 && geti(r, "subnets") == 0,
	      "no anomalies without a fabric");
	json_decref(r);
	topo_cluster_destroy(c);
}

/* Loads the torus description written to f (a temporary file, path: closed and removed here) into c, and
 * finalizes c. */
static void load_torus(topo_cluster_t c, FILE *f, const char *path, const char *what)
{
	fclose(f);
	check(topo_load_torus(c, path, NULL) == 0, "%s", what);
	unlink(path);
	topo_cluster_finalize(c, NULL);
}

/* The hop histogram of a torus cluster computed the slow way: topo_torus_node_distance of every host pair
 * (a JSON object, distance "%g" -> count). */
static json_t *pair_histogram(topo_cluster_t c)
{
	json_t *want = json_object(), *v;
	size_t a, b, n = topo_nhosts(c);
	char key[32];

	for (a = 0; a < n; a++)
		for (b = a + 1; b < n; b++) {
			snprintf(key, sizeof(key), "%g",
				 topo_torus_node_distance(c, topo_host_torus_node(c, a), topo_host_torus_node(c, b)));
			v = json_object_get(want, key);
			json_object_set_new(want, key, json_integer(1 + (v ? json_integer_value(v) : 0)));
		}
	return want;
}

/* An anisotropic torus, odd and even extents, one dimension not wrapped, 2 nodes per router: the
 * closed form must give what every host pair's topo_torus_node_distance gives. */
static void test_closed_form(void)
{
	topo_cluster_t c = topo_cluster_create();
	char path[] = "/tmp/rankmap-report-big-XXXXXX";
	int fd = mkstemp(path);
	size_t n, bad = 0;
	const char *k;
	json_t *r, *h, *want, *v;
	FILE *f = fdopen(fd, "w");

	fprintf(f,
		"dims = 17x16x5\nwrap = yes,yes,no\nlink_cost = 1,2,0.67\nnodes_per_router = 2\nhost_pattern = "
		"r{id:4}\n");
	load_torus(c, f, path, "torus 17x16x5");
	n = topo_nhosts(c);
	want = pair_histogram(c);
	r = topo_cluster_report(c);
	h = hist(r);
	check(strstr(json_string_value(json_object_get(r, "hop_histogram_method")), "closed form") != NULL,
	      "method says closed form: %s", json_string_value(json_object_get(r, "hop_histogram_method")));
	json_object_foreach (want, k, v)
		bad += json_integer_value(json_object_get(h, k)) != json_integer_value(v);
	check(n == 2720 && !bad && json_object_size(h) == json_object_size(want),
	      "%zu hosts: %zu of %zu distances differ from every pair's", n, bad, json_object_size(want));
	json_decref(r);
	json_decref(want);
	topo_cluster_destroy(c);
}

/* A torus whose [hosts] table leaves routers empty or half full: every pair of occupied routers
 * (checked against every host pair), and beyond 4096 occupied routers sampled pairs, said so. */
static void test_uneven_torus(void)
{
	topo_cluster_t c = topo_cluster_create();
	char path[] = "/tmp/rankmap-report-uneven-XXXXXX";
	int fd = mkstemp(path), x, y, z, bad = 0;
	size_t n, diff = 0;
	long total = 0;
	uint64_t r = 12345;
	const char *k;
	json_t *rep, *h, *want, *v;
	FILE *f = fdopen(fd, "w");

	fprintf(f, "dims = 5x4x6\nwrap = yes,no,yes\nlink_cost = 1,2,0.5\nnodes_per_router = 2\n[hosts]\n");
	for (x = 0; x < 5; x++)
		for (y = 0; y < 4; y++)
			for (z = 0; z < 6; z++) {
				r ^= r << 13, r ^= r >> 7, r ^= r << 17;
				if (r % 3 == 0) /* empty router */
					continue;
				fprintf(f, "u%d-%d-%d-0 %d %d %d 0\n", x, y, z, x, y, z);
				if (r % 3 == 1)
					fprintf(f, "u%d-%d-%d-1 %d %d %d 1\n", x, y, z, x, y, z);
			}
	load_torus(c, f, path, "uneven torus");
	n = topo_nhosts(c);
	want = pair_histogram(c);
	rep = topo_cluster_report(c);
	h = hist(rep);
	json_object_foreach (want, k, v)
		diff += json_integer_value(json_object_get(h, k)) != json_integer_value(v);
	check(strstr(json_string_value(json_object_get(rep, "hop_histogram_method")), "per pair of the") != NULL &&
		      !diff && json_object_size(h) == json_object_size(want) && n > 40,
	      "%zu hosts on uneven routers: %zu of %zu distances differ from every pair's (%s)", n, diff,
	      json_object_size(want), json_string_value(json_object_get(rep, "hop_histogram_method")));
	json_decref(rep);
	json_decref(want);
	topo_cluster_destroy(c);

	/* 17x17x17 routers (4913 > 4096), one host on all but one: sampled; extent 17 wraps at 8 */
	c = topo_cluster_create();
	strcpy(path, "/tmp/rankmap-report-uneven-XXXXXX");
	fd = mkstemp(path);
	f = fdopen(fd, "w");
	fprintf(f, "dims = 17x17x17\n[hosts]\n");
	for (x = 0; x < 17; x++)
		for (y = 0; y < 17; y++)
			for (z = 0; z < 17; z++)
				if (x || y || z)
					fprintf(f, "s%d-%d-%d %d %d %d\n", x, y, z, x, y, z);
	load_torus(c, f, path, "big uneven torus");
	rep = topo_cluster_report(c);
	h = hist(rep);
	json_object_foreach (h, k, v) {
		bad += atoi(k) < 1 || atoi(k) > 24;
		total += (long)json_integer_value(v);
	}
	check(strstr(json_string_value(json_object_get(rep, "hop_histogram_method")), "sampled") != NULL,
	      "method says sampled: %s", json_string_value(json_object_get(rep, "hop_histogram_method")));
	check(!bad && total > 199000 && total <= 200000, "%ld sampled pairs, distances in 1..24", total);
	json_decref(rep);
	topo_cluster_destroy(c);
}

int main(void)
{
	test_fattree();
	test_closed_form();
	test_uneven_torus();
	test_map_only();
	test_torus();
	return harness_done();
}
