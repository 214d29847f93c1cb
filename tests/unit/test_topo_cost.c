/*
 * tests/unit/test_topo_cost.c: the cost model: defaults from REFERENCE.md section 4 (LogGP on DDR
 * InfiniBand), the ordering of levels, and slot distances inside a node by common ancestor, written
 * out by hand from the formula latency + ref_bytes / bandwidth.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "cluster_private.h"
#include "tests/harness.h"

static double at(double lat, double bw, double bytes)
{
	return lat + bytes / (bw * 1000.0);
}

static void test_defaults(void)
{
	topo_costs_t k;
	double core, cache, numa, host, net;

	topo_costs_default(&k);
	check(fabs(k.lat_net - (1.84 + 2 * 1.49)) < 1e-12, "lat_net = L + 2o = 4.82 us");
	check(fabs(k.bw_net - 1.0 / 0.00067 / 1000.0) < 1e-12, "bw_net = 1/G");
	check(fabs(k.ref_bytes - 4.82 / 0.00067) < 1e-6 && k.ref_bytes > 7000 && k.ref_bytes < 7300,
	      "ref_bytes ~ 7 KB, where latency equals transfer");
	core = at(k.lat_core, k.bw_core, k.ref_bytes);
	cache = at(k.lat_cache, k.bw_cache, k.ref_bytes);
	numa = at(k.lat_numa, k.bw_numa, k.ref_bytes);
	host = at(k.lat_host, k.bw_host, k.ref_bytes);
	net = at(k.lat_net, k.bw_net, k.ref_bytes);
	check(0 < core && core < cache && cache < numa && numa < host && host < net,
	      "closer levels are cheaper: %g %g %g %g %g", core, cache, numa, host, net);
	check(fabs(at(k.lat_net, k.bw_net, k.ref_bytes) - 2 * k.lat_net) < 1e-9, "latency == transfer at ref_bytes");
	check(k.lat_hop > 0.1 && k.lat_hop < 0.25, "hop latency in the 150-200 ns range");
	/* a torus link is a link of the same network: bw_hop = 1/G, so a hop of link cost 1 costs its
	 * latency plus one more transfer of ref_bytes: 0.15 + 7194 B * 0.00067 us/B = 0.15 + 4.82 us */
	check(fabs(k.bw_hop - k.bw_net) < 1e-12, "bw_hop = 1/G");
	check(fabs(topo_torus_hop_cost(&k) - 4.97) < 1e-9, "torus hop = 4.97 us: %g", topo_torus_hop_cost(&k));
	k.bw_hop = 2 * k.bw_net;
	check(fabs(topo_torus_hop_cost(&k) - (0.15 + 4.82 / 2)) < 1e-9, "twice the link bandwidth: half the transfer");
}

static void test_node(void)
{
	topo_cluster_t c = topo_cluster_create();
	topo_costs_t *k = topo_cluster_costs(c);
	rm_error_t err;
	topo_slot_t a = { 0, 0 };
	double d;

	rm_error_clear(&err);
	/* PUs 0-1: one core; 0-2: same L2; 0-4: same package (L3 per package); 0-8: other package */
	check(topo_load_hwloc_synthetic(c, "n", "pack:2 l3:1 l2:2 core:2 pu:2", &err) == 0, "load: %s", err.text);
	check(topo_load_hwloc_synthetic(c, "m", "pack:2 l3:1 l2:2 core:2 pu:2", &err) == 0, "second host");
	check(topo_cluster_finalize(c, &err) == 0, "finalize");
	check(topo_slot_distance(c, a, a) == 0, "same slot");
	d = topo_slot_distance(c, a, (topo_slot_t){ 0, 1 });
	check(fabs(d - at(k->lat_core, k->bw_core, k->ref_bytes)) < 1e-12, "SMT siblings: %g", d);
	d = topo_slot_distance(c, a, (topo_slot_t){ 0, 2 });
	check(fabs(d - at(k->lat_cache, k->bw_cache, k->ref_bytes)) < 1e-12, "shared L2: %g", d);
	d = topo_slot_distance(c, a, (topo_slot_t){ 0, 4 });
	check(fabs(d - at(k->lat_cache, k->bw_cache, k->ref_bytes)) < 1e-12, "shared L3: %g", d);
	d = topo_slot_distance(c, a, (topo_slot_t){ 0, 8 });
	check(fabs(d - at(k->lat_host, k->bw_host, k->ref_bytes)) < 1e-12, "other package: %g", d);
	d = topo_slot_distance(c, a, (topo_slot_t){ 1, 3 });
	check(fabs(d - at(k->lat_net, k->bw_net, k->ref_bytes)) < 1e-12, "other host, flat network: %g", d);
	check(topo_slot_distance(c, a, (topo_slot_t){ 0, 16 }) < 0 && errno == EINVAL, "PU out of range");
	check(topo_slot_distance(c, a, (topo_slot_t){ 7, 0 }) < 0, "host out of range");
	/* changing the parameters changes the distances */
	k->lat_core = 1.0;
	k->bw_core = 1.0;
	k->ref_bytes = 1000;
	d = topo_slot_distance(c, a, (topo_slot_t){ 0, 1 });
	check(fabs(d - 2.0) < 1e-12, "custom parameters: %g", d);
	topo_cluster_destroy(c);

	/* no L3: PUs of one package share the package only */
	c = topo_cluster_create();
	k = topo_cluster_costs(c);
	topo_load_hwloc_synthetic(c, "p", "pack:2 core:2 pu:1", NULL);
	topo_cluster_finalize(c, NULL);
	d = topo_slot_distance(c, a, (topo_slot_t){ 0, 1 });
	check(fabs(d - at(k->lat_numa, k->bw_numa, k->ref_bytes)) < 1e-12, "same package: %g", d);
	topo_cluster_destroy(c);
}

int main(void)
{
	test_defaults();
	test_node();
	return harness_done();
}
