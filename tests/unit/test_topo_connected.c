/*
 * tests/unit/test_topo_connected.c: topo_hosts_connected() and targets over hosts that the InfiniBand
 * fabric does not connect (tests/data/ib/subnet-a.topo: n1-n3; subnet-c.topo: m1-m2; subnet-d.topo: n3
 * and m1). The query is checked against an independent source, the hop counts of topo_host_hops (BFS
 * over the switch graph), on every subset of the hosts: it answers 1 exactly when every pair has a hop
 * count, and the pair it names has none. Includes the non-transitive case (n1-n3 and n3-m1 share a
 * subnet, n1-m1 none), which a check of neighbours only would miss.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_private.h"
#include "tests/harness.h"

/* A cluster with the given subnets of tests/data/ib and hardware for n1-n3, m1, m2 and z1 (z1 on no
 * subnet: the flat network). */
static topo_cluster_t load(const char *const *subnets, size_t n)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err = { 0 };
	char path[512];
	size_t i;

	if (topo_load_hwloc_spec(c, "synthetic:pack:1 core:2 pu:1@n1,n2,n3,m1,m2,z1", &err) < 0)
		fail("hwloc: %s", err.text);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/ib/%s", harness_data_dir(), subnets[i]);
		if (topo_load_ib_file(c, path, &err) < 0)
			fail("%s: %s", path, err.text);
	}
	if (topo_cluster_finalize(c, &err) < 0)
		fail("finalize: %s", err.text);
	return c;
}

static size_t host(topo_cluster_t c, const char *name)
{
	long h = topo_host_find(c, name);

	check(h >= 0, "host %s", name);
	return h < 0 ? 0 : (size_t)h;
}

/* Every subset of the cluster's hosts against the pairwise hop counts. */
static void every_subset(topo_cluster_t c, const char *what)
{
	size_t nh = topo_nhosts(c), hosts[16], n, i, j, a, b;
	unsigned mask, bad = 0, subsets = 0;

	if (nh > 12)
		return fail("%s: %zu hosts", what, nh);
	for (mask = 1; mask < (1u << nh); mask++) {
		int expect = 1, got;

		for (n = 0, i = 0; i < nh; i++)
			if (mask & (1u << i))
				hosts[n++] = i;
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++)
				expect &= topo_host_hops(c, hosts[i], hosts[j]) >= 0 ||
					  topo_host_fabric_host(c, hosts[i]) < 0 ||
					  topo_host_fabric_host(c, hosts[j]) < 0;
		a = b = SIZE_MAX;
		got = topo_hosts_connected(c, hosts, n, &a, &b);
		subsets++;
		if (got != expect || (!got && (a == b || a >= nh || b >= nh || topo_host_hops(c, a, b) >= 0 ||
					       !(mask & (1u << a)) || !(mask & (1u << b))))) {
			if (bad++ < 3)
				fail("%s: subset %#x: got %d (pair %zu, %zu), hop counts say %d", what, mask, got, a, b,
				     expect);
		}
	}
	check(!bad, "%s: %u of %u subsets disagree with the hop counts", what, bad, subsets);
}

static void two_subnets(void)
{
	static const char *const ib[] = { "subnet-a.topo", "subnet-c.topo" };
	topo_cluster_t c = load(ib, 2);
	size_t set[6], a = SIZE_MAX, b = SIZE_MAX;

	set[0] = host(c, "n1"), set[1] = host(c, "n2"), set[2] = host(c, "n3");
	check(topo_hosts_connected(c, set, 3, NULL, NULL) == 1, "n1-n3 are connected");
	set[3] = host(c, "m1"), set[4] = host(c, "m2");
	check(topo_hosts_connected(c, set, 5, &a, &b) == 0, "n1-n3, m1-m2 are not");
	check(a == host(c, "n1") && b == host(c, "m1"), "the first unconnected pair: n1 and m1 (got %zu, %zu)", a, b);
	set[0] = host(c, "z1"), set[1] = host(c, "m2");
	check(topo_hosts_connected(c, set, 2, NULL, NULL) == 1, "a host outside the fabric reaches every host");
	check(topo_hosts_connected(c, set, 0, NULL, NULL) == 1, "no host: connected");
	set[0] = 99;
	errno = 0;
	check(topo_hosts_connected(c, set, 1, NULL, NULL) == -1 && errno == EINVAL, "a host out of range: EINVAL");
	every_subset(c, "subnets a, c");
	topo_cluster_destroy(c);
}

static void not_transitive(void)
{
	static const char *const ib[] = { "subnet-a.topo", "subnet-c.topo", "subnet-d.topo" };
	topo_cluster_t c = load(ib, 3);
	size_t set[3] = { host(c, "n1"), host(c, "n3"), host(c, "m1") }, a = SIZE_MAX, b = SIZE_MAX;

	check(topo_host_hops(c, set[0], set[1]) > 0 && topo_host_hops(c, set[1], set[2]) > 0 &&
		      topo_host_hops(c, set[0], set[2]) < 0,
	      "the data: n1-n3 and n3-m1 share a subnet, n1-m1 none");
	check(topo_hosts_connected(c, set, 3, &a, &b) == 0, "n1, n3, m1: not all connected");
	check(a == set[0] && b == set[2], "the pair named is n1 and m1 (got %zu, %zu)", a, b);
	every_subset(c, "subnets a, c, d");
	topo_cluster_destroy(c);
}

static void back_to_back(void)
{
	static const char *const ib[] = { "back-to-back.topo" };
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err = { 0 };
	char path[512];

	snprintf(path, sizeof(path), "%s/ib/%s", harness_data_dir(), ib[0]);
	if (topo_load_ib_file(c, path, &err) < 0 || topo_cluster_finalize(c, &err) < 0)
		fail("%s: %s", path, err.text);
	else
		every_subset(c, "back to back");
	topo_cluster_destroy(c);
}

/* Slot distance in the target between the first slots of two named hosts. */
static double tdist(const topo_target_t *t, const char *x, const char *y)
{
	uint32_t i, a = UINT32_MAX, b = UINT32_MAX;

	for (i = 0; i < t->nslots; i++) {
		const char *n = t->host_name[t->slot_host[i]];

		if (a == UINT32_MAX && !strcmp(n, x))
			a = i;
		if (b == UINT32_MAX && !strcmp(n, y))
			b = i;
	}
	return a == UINT32_MAX || b == UINT32_MAX ? NAN : topo_target_distance(t, a, b);
}

/* Targets: an unconnected set is built, with a warning and a penalty twice its largest network distance;
 * a connected one has no warning. */
static void targets(void)
{
	static const char *const ib[] = { "subnet-a.topo", "subnet-c.topo", "subnet-d.topo" };
	static const char *const cut[] = { "n1", "n2", "n3", "m1", "m2" }, *const whole[] = { "n1", "n2", "n3" };
	static const char *const three[] = { "n1", "n3", "m1" };
	topo_cluster_t c = load(ib, 3);
	rm_error_t err = { 0 };
	topo_target_t *t = topo_target_from_hosts(c, cut, 5, 1, &err), *u;
	double far = 0, d;
	uint32_t i, j;

	if (!t) {
		fail("target over unconnected hosts: %s", err.text);
		topo_cluster_destroy(c);
		return;
	}
	check(t->warning && strstr(t->warning, "hosts n1 and m1 cannot reach each other"), "warning: %s",
	      t->warning ? t->warning : "(none)");
	check(t->warning && strstr(t->warning, "5 of the 5 hosts"), "non-transitive: each lacks a path: %s",
	      t->warning ? t->warning : "(none)");
	for (i = 0; i < 5; i++)
		for (j = 0; j < 5; j++) {
			long a = topo_host_find(c, cut[i]), b = topo_host_find(c, cut[j]);
			topo_slot_t sa = { (uint32_t)a, 0 }, sb = { (uint32_t)b, 0 };

			if (i != j && (d = topo_slot_distance(c, sa, sb)) > far)
				far = d;
		}
	d = tdist(t, "n1", "m1");
	check(fabs(d - 2 * far) < 1e-6 * far, "n1-m1 at twice the largest network distance %g: %g", far, d);
	check(fabs(tdist(t, "m2", "n2") - 2 * far) < 1e-6 * far, "m2-n2 too: %g", tdist(t, "m2", "n2"));
	d = tdist(t, "n3", "m1");
	check(d > 0 && d < 2 * far, "n3-m1 (subnet d) at their network distance: %g", d);
	d = topo_slot_distance(c, (topo_slot_t){ (uint32_t)host(c, "n1"), 0 },
			       (topo_slot_t){ (uint32_t)host(c, "n2"), 0 });
	check(fabs(tdist(t, "n1", "n2") - d) < 1e-6 * d, "n1-n2 unchanged: %g, %g", tdist(t, "n1", "n2"), d);
	check(t->cost[0] >= 2 * far - 1e-9, "the root's cost is the penalty: %g", t->cost[0]);
	u = topo_target_from_hosts(c, three, 3, 1, &err);
	check(u && u->warning && strstr(u->warning, "hosts n1 and m1") && strstr(u->warning, "2 of the 3 hosts"),
	      "n1, n3, m1: n3 reaches both, 2 hosts are cut off: %s", u && u->warning ? u->warning : err.text);
	topo_target_destroy(u);
	u = topo_target_from_hosts(c, whole, 3, 1, &err);
	check(u && !u->warning, "a connected set has no warning");
	topo_target_destroy(u);
	topo_target_destroy(t);
	topo_cluster_destroy(c);
}

static void groups_message(void)
{
	static const char *const ib[] = { "subnet-a.topo", "subnet-c.topo" };
	static const char *const hosts[] = { "n1", "m1", "n2", "m2", "n3" };
	topo_cluster_t c = load(ib, 2);
	rm_error_t err = { 0 };
	topo_target_t *t = topo_target_from_hosts(c, hosts, 5, 1, &err);

	check(t && t->warning && strstr(t->warning, "hosts n1 and m1 cannot reach each other") &&
		      strstr(t->warning, "the 5 hosts form 2 groups of 3 and 2 hosts"),
	      "two groups: %s", t && t->warning ? t->warning : err.text);
	topo_target_destroy(t);
	topo_cluster_destroy(c);
}

int main(void)
{
	two_subnets();
	not_transitive();
	back_to_back();
	targets();
	groups_message();
	return harness_done();
}
