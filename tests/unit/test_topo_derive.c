/*
 * tests/unit/test_topo_derive.c: a cluster derived from another by the hosts that changed
 * (topo_cluster_derive, rankmapd's registrations) against the full load of the same sources.
 *
 * The base is PlaFRIM's hwloc directory of the daemon tests and its fabric; the pool holds registrations:
 * a host of the fabric without hardware, a host of the directory with other hardware, a host the fabric
 * does not know. The derived cluster must equal the full load (hwloc directory, the pool's hosts over
 * it, the fabric, finalize) host by host: hardware, and hops to every other host. It must outlive its
 * base (shared types and fabric), and refuse (EAGAIN) what only a full load gets right.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_private.h"
#include "tests/harness.h"

static char dir[512], ib[512], xml[512];

static topo_cluster_t load_base(void)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err = { 0 };

	if (topo_load_hwloc_dir(c, dir, &err) < 0 || topo_load_ib_file(c, ib, &err) < 0 ||
	    topo_cluster_finalize(c, &err) < 0) {
		fail("base: %s", err.text);
		topo_cluster_destroy(c);
		return NULL;
	}
	return c;
}

static int pool_add(topo_cluster_t pool, const char *file, const char *host)
{
	rm_error_t err = { 0 };

	snprintf(xml, sizeof(xml), "%s/plafrim/hwloc/%s.xml", harness_data_dir(), file);
	if (topo_load_hwloc_xml(pool, xml, host, &err) == 0)
		return 0;
	fail("pool: %s: %s", xml, err.text);
	return -1;
}

/* The full load the daemon does: directory, registrations over it, fabric, finalize. */
static topo_cluster_t load_full(topo_cluster_t pool)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err = { 0 };

	if (topo_load_hwloc_dir(c, dir, &err) < 0 || topo_cluster_add_hosts_from(c, pool, &err) < 0 ||
	    topo_load_ib_file(c, ib, &err) < 0 || topo_cluster_finalize(c, &err) < 0) {
		fail("full: %s", err.text);
		topo_cluster_destroy(c);
		return NULL;
	}
	return c;
}

/* Host by host: same names, hardware and hops to every other host. Returns the differences. */
static size_t compare(topo_cluster_t full, topo_cluster_t d)
{
	size_t n = topo_nhosts(full), a, b, bad = 0;

	if (n != topo_nhosts(d)) {
		fail("%zu hosts in the full load, %zu derived", n, topo_nhosts(d));
		return 1;
	}
	for (a = 0; a < n; a++) {
		long da = topo_host_find(d, topo_host_name(full, a));

		if (da < 0 || topo_host_npus(full, a) != topo_host_npus(d, (size_t)da) ||
		    topo_host_ncores(full, a) != topo_host_ncores(d, (size_t)da)) {
			if (bad++ < 3)
				fail("host %s differs", topo_host_name(full, a));
			continue;
		}
		for (b = 0; b < n; b++) {
			long db = topo_host_find(d, topo_host_name(full, b));

			if (topo_host_hops(full, a, b) != topo_host_hops(d, (size_t)da, (size_t)db) && bad++ < 3)
				fail("hops %s-%s: %d full, %d derived", topo_host_name(full, a),
				     topo_host_name(full, b), topo_host_hops(full, a, b),
				     topo_host_hops(d, (size_t)da, (size_t)db));
		}
	}
	return bad;
}

static void test_equal_to_full(void)
{
	static const char *const names[] = { "bonobo005", "bonobo002", "zz-new" };
	topo_cluster_t base = load_base(), pool = topo_cluster_create(), d, full;
	rm_error_t err = { 0 };
	long h;

	topo_cluster_replace_hw(pool, 1);
	if (!base || pool_add(pool, "bonobo005", "bonobo005") < 0 || pool_add(pool, "fourmi001", "bonobo002") < 0 ||
	    pool_add(pool, "devel05", "zz-new") < 0)
		goto out;
	check(topo_host_find(base, "bonobo005") >= 0 &&
		      !topo_host_npus(base, (size_t)topo_host_find(base, "bonobo005")),
	      "bonobo005 is a fabric host without hardware in the base");
	d = topo_cluster_derive(base, pool, names, 3, &err);
	check(d != NULL, "derived: %s", d ? "ok" : err.text);
	full = load_full(pool);
	if (d && full) {
		check(compare(full, d) == 0, "the derived cluster equals the full load, host by host (%zu hosts)",
		      topo_nhosts(d));
		h = topo_host_find(d, "bonobo002");
		check(h >= 0 && topo_host_ncores(d, (size_t)h) ==
					topo_host_ncores(pool, (size_t)topo_host_find(pool, "bonobo002")),
		      "bonobo002 has its registered hardware");
	}
	topo_cluster_destroy(base); /* the derived cluster shares its types and fabric: it must outlive it */
	base = NULL;
	if (d && full)
		check(compare(full, d) == 0, "and still after its base is gone");
	topo_cluster_destroy(full);
	topo_cluster_destroy(d);
out:
	topo_cluster_destroy(base);
	topo_cluster_destroy(pool);
}

static void test_refusals(void)
{
	topo_cluster_t base = load_base(), pool = topo_cluster_create(), d;
	const char *dom[] = { "bonobo001.plafrim" }, *bad[] = { "bonobo004" }, *none[] = { "nope" };
	rm_error_t err = { 0 }, e = { 0 };

	topo_cluster_replace_hw(pool, 1);
	if (!base || pool_add(pool, "bonobo001", "bonobo001.plafrim") < 0 ||
	    pool_add(pool, "bonobo004", "bonobo004") < 0)
		goto out;
	errno = 0;
	d = topo_cluster_derive(base, pool, dom, 1, &err);
	check(!d && errno == EAGAIN, "a new name that a full load joins by its short form: EAGAIN (%s)", err.text);
	topo_cluster_destroy(d);
	rm_error_set(&e, "x/bonobo004.xml", 0, 0, "bad");
	topo_cluster_add_anomaly(base, "bad_host_file", "bonobo004", &e);
	errno = 0;
	d = topo_cluster_derive(base, pool, bad, 1, &err);
	check(!d && errno == EAGAIN, "a host that was a load anomaly: EAGAIN");
	topo_cluster_destroy(d);
	errno = 0;
	d = topo_cluster_derive(base, pool, none, 1, &err);
	check(!d && errno == EAGAIN, "a name the pool lacks: EAGAIN");
	topo_cluster_destroy(d);
out:
	topo_cluster_destroy(base);
	topo_cluster_destroy(pool);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/daemon/hwloc", harness_data_dir());
	snprintf(ib, sizeof(ib), "%s/plafrim/ib/ib-subnet0.txt", harness_data_dir());
	test_equal_to_full();
	test_refusals();
	return harness_done();
}
