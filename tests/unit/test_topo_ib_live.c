/*
 * tests/unit/test_topo_ib_live.c: the fabric from libibnetdisc, checked against the ibsim net file
 * tests/data/ib/ibsim-fattree.net. Expectations by hand from that file: 6 switches (leaf1-4 level 0,
 * spine1-2 level 1), 8 hosts node01..node08, two per leaf (node01-02 leaf1, ..., node07-08 leaf4);
 * 16 links (8 host links, 8 uplinks); hops 2 under one leaf, 4 across; 4 pairs at 2 hops, 24 at 4;
 * leaf3-spine1 is 1xQDR (one narrow link), leaf4-spine2 4xDDR (one slow link); unconnected ports
 * 4 x (12 - 4) + 2 x (8 - 4) = 40. What the ports support is known from libibnetdisc only (live, cache):
 * ibsim's ports support 1x to 12x and SDR to QDR, so every link could be wider (iblinkinfo says
 * "Could be 12X" on all 16; topo_ibsim.sh compares with iblinkinfo) and the DDR link could be faster:
 * 1 slow_link, 15 narrow_link; from ibnetdiscover's text files (active rates only) the two links below
 * the subnet's norm are below_norm_link notes, and nothing is slow or narrow.
 *
 * Without arguments (the unit-test runner) it loads ib/ibsim-fattree.cache, the cache that
 * `ibnetdiscover --cache` wrote against ibsim. With `--live CACHE [FILE...]`, run by
 * tests/integration/topo_ibsim.sh under LD_PRELOAD=libumad2sim.so with ibsim running, it discovers the
 * fabric live (topo_fabric_load_live), writes CACHE with ibnd_cache_fabric and reloads it
 * (topo_fabric_load_cache), and compares with each FILE (ibnetdiscover's outputs for the same
 * simulated fabric: topology file, -s -p ports report, -g grouped file) through the file parsers.
 * With `--speeds [FILE...]`, against ibsim running ib/ibsim-speeds.net, it checks the decoding of the
 * extended link speeds (FDR, EDR, HDR) of live discovery.
 */
#include <string.h>

#include <infiniband/ibnetdisc.h>

#include "../harness.h"
#include "net_ib_private.h"

static long host(const struct topo_fabric *f, const char *name)
{
	size_t i;

	for (i = 0; i < topo_fabric_nhosts(f); i++)
		if (!strcmp(topo_fabric_host_name(f, i), name))
			return (long)i;
	return -1;
}

static int hops(const struct topo_fabric *f, int a, int b)
{
	char na[16], nb[16];
	long x, y;

	snprintf(na, sizeof(na), "node%02d", a);
	snprintf(nb, sizeof(nb), "node%02d", b);
	x = host(f, na);
	y = host(f, nb);
	return x < 0 || y < 0 ? -99 : topo_fabric_hops(f, (size_t)x, (size_t)y);
}

static size_t anomalies(json_t *r, const char *kind)
{
	json_t *e;
	size_t i, n = 0;

	json_array_foreach (json_object_get(r, "anomalies"), i, e)
		n += !strcmp(json_string_value(json_object_get(e, "kind")), kind);
	return n;
}

/* Checks a finalized fabric against the net file; returns its report (new reference). */
static json_t *check_fattree(const struct topo_fabric *f, const char *what)
{
	size_t s, bad = 0;
	int a, b, badhops = 0;
	json_t *r, *h;

	check(topo_fabric_nhosts(f) == 8, "%s: 8 hosts (%zu)", what, topo_fabric_nhosts(f));
	check(topo_fabric_nswitches(f) == 6, "%s: 6 switches", what);
	for (s = 0; s < topo_fabric_nswitches(f); s++) {
		const char *n = topo_fabric_switch_name(f, (long)s);
		int want = !strncmp(n, "leaf", 4) ? 0 : !strncmp(n, "spine", 5) ? 1 : -5;

		bad += topo_fabric_switch_level(f, (long)s) != want;
	}
	check(bad == 0, "%s: leaf/spine levels", what);
	for (a = 1; a <= 8; a++)
		for (b = 1; b <= 8; b++)
			badhops += hops(f, a, b) != (a == b ? 0 : (a + 1) / 2 == (b + 1) / 2 ? 2 : 4);
	check(badhops == 0, "%s: hop counts (%d wrong)", what, badhops);
	for (a = 1; a <= 8; a += 2) {
		char leaf[16];
		long l = topo_fabric_host_leaf(f, (size_t)host(f, a == 1   ? "node01"
								  : a == 3 ? "node03"
								  : a == 5 ? "node05"
									   : "node07"));

		snprintf(leaf, sizeof(leaf), "leaf%d", (a + 1) / 2);
		check(l >= 0 && !strcmp(topo_fabric_switch_name(f, l), leaf), "%s: leaf of node%02d", what, a);
	}
	r = topo_fabric_report(f);
	h = json_object_get(r, "hop_histogram");
	check(json_array_size(h) == 2 && json_integer_value(json_object_get(json_array_get(h, 0), "hops")) == 2 &&
		      json_integer_value(json_object_get(json_array_get(h, 0), "pairs")) == 4 &&
		      json_integer_value(json_object_get(json_array_get(h, 1), "hops")) == 4 &&
		      json_integer_value(json_object_get(json_array_get(h, 1), "pairs")) == 24,
	      "%s: hop histogram [2: 4, 4: 24]", what);
	check(json_integer_value(json_object_get(r, "links")) == 16, "%s: 16 links", what);
	check(json_integer_value(json_object_get(r, "unconnected_switch_ports")) == 40, "%s: 40 unconnected ports",
	      what);
	if (json_integer_value(json_object_get(r, "links_with_supported_rates")) == 16)
		check(anomalies(r, "slow_link") == 1 && anomalies(r, "narrow_link") == 15 &&
			      anomalies(r, "below_norm_link") == 0,
		      "%s (supported rates known): 1 link could be faster, 15 wider (%zu, %zu, %zu)", what,
		      anomalies(r, "slow_link"), anomalies(r, "narrow_link"), anomalies(r, "below_norm_link"));
	else
		check(json_integer_value(json_object_get(r, "links_with_supported_rates")) == 0 &&
			      anomalies(r, "slow_link") == 0 && anomalies(r, "narrow_link") == 0 &&
			      anomalies(r, "below_norm_link") == 2,
		      "%s (supported rates unknown): 2 links below the norm, none slow (%zu, %zu, %zu)", what,
		      anomalies(r, "slow_link"), anomalies(r, "narrow_link"), anomalies(r, "below_norm_link"));
	check(json_integer_value(json_object_get(json_object_get(r, "link_speeds"), "DDR")) == 1, "%s: one DDR link",
	      what);
	return r;
}

typedef int (*loader_t)(struct topo_fabric *, const char *, rm_error_t *);

static json_t *load_and_check(loader_t load, const char *path, const char *what)
{
	struct topo_fabric *f = topo_fabric_create();
	json_t *r = NULL;
	rm_error_t err;
	char buf[600];

	rm_error_clear(&err);
	if (load(f, path, &err) < 0 || topo_fabric_finalize(f, &err) < 0)
		fail("%s: %s", what, rm_error_format(&err, buf, sizeof(buf)));
	else
		r = check_fattree(f, what);
	topo_fabric_destroy(f);
	return r;
}

static int load_live(struct topo_fabric *f, const char *unused, rm_error_t *err)
{
	return topo_fabric_load_live(f, NULL, 0, err);
}

/* Same fabric both ways: the reports agree except for where they came from and, against a text file
 * (which gives no supported rates), the link verdicts. */
static void same(json_t *a, json_t *b, const char *what)
{
	json_t *ca = json_deep_copy(a), *cb = json_deep_copy(b);

	json_object_del(ca, "subnet_sources");
	json_object_del(cb, "subnet_sources");
	if (!json_equal(json_object_get(ca, "links_with_supported_rates"),
			json_object_get(cb, "links_with_supported_rates"))) {
		json_object_del(ca, "links_with_supported_rates");
		json_object_del(cb, "links_with_supported_rates");
		json_object_del(ca, "anomalies");
		json_object_del(cb, "anomalies");
	}
	check(ca && cb && json_equal(ca, cb), "%s: reports agree", what);
	json_decref(ca);
	json_decref(cb);
}

static void live(const char *cache, char **files, int nfiles)
{
	json_t *rl = load_and_check(load_live, NULL, "live"), *rc, *rt;
	struct ibnd_config cfg;
	ibnd_fabric_t *fab;

	memset(&cfg, 0, sizeof(cfg));
	fab = ibnd_discover_fabric(NULL, 0, NULL, &cfg);

	check(fab != NULL, "ibnd_discover_fabric for the cache");
	if (fab) {
		check(ibnd_cache_fabric(fab, cache, IBND_CACHE_FABRIC_FLAG_DEFAULT) == 0, "ibnd_cache_fabric %s",
		      cache);
		ibnd_destroy_fabric(fab);
	}
	rc = load_and_check(topo_fabric_load_cache, cache, "cache written live");
	same(rl, rc, "live vs cache");
	for (; nfiles > 0; nfiles--, files++) {
		rt = load_and_check(topo_fabric_load_file, *files, *files);
		same(rl, rt, *files);
		json_decref(rt);
	}
	json_decref(rl);
	json_decref(rc);
}

/* ib/ibsim-speeds.net by hand: one link each of 4x EDR, 4x HDR, 4x FDR and 1x QDR. Live discovery
 * must decode the extended speeds, and agree with ibnetdiscover's topology file of the same fabric. */
static void speeds(char **files, int nfiles)
{
	static const char *const rates[] = { "4x EDR", "4x HDR", "4x FDR", "1x QDR" };
	struct topo_fabric *f = topo_fabric_create();
	json_t *r = NULL, *rt, *lr;
	rm_error_t err;
	size_t i;

	rm_error_clear(&err);
	if (topo_fabric_load_live(f, NULL, 0, &err) < 0 || topo_fabric_finalize(f, &err) < 0)
		fail("speeds live: %s", err.text);
	else
		r = topo_fabric_report(f);
	topo_fabric_destroy(f);
	if (!r)
		return;
	lr = json_object_get(r, "link_rates");
	check(json_object_size(lr) == 4, "4 link rates");
	for (i = 0; i < 4; i++)
		check(json_integer_value(json_object_get(lr, rates[i])) == 1, "one %s link", rates[i]);
	/* ibsim's ports support up to 12x and HDR where they have extended speeds: as iblinkinfo says, the
	 * 4x EDR and 4x FDR links could be faster (HDR), the other two only wider */
	check(anomalies(r, "slow_link") == 2 && anomalies(r, "narrow_link") == 2, "2 links could be faster, 2 wider");
	for (; nfiles > 0; nfiles--, files++) {
		f = topo_fabric_create();
		if (topo_fabric_load_file(f, *files, &err) < 0 || topo_fabric_finalize(f, &err) < 0) {
			fail("%s: %s", *files, err.text);
		} else {
			rt = topo_fabric_report(f);
			same(r, rt, *files);
			json_decref(rt);
		}
		topo_fabric_destroy(f);
	}
	json_decref(r);
}

int main(int argc, char **argv)
{
	char path[512];

	if (argc >= 3 && !strcmp(argv[1], "--live")) {
		live(argv[2], argv + 3, argc - 3);
	} else if (argc >= 2 && !strcmp(argv[1], "--speeds")) {
		speeds(argv + 2, argc - 2);
	} else {
		snprintf(path, sizeof(path), "%s/ib/ibsim-fattree.cache", harness_data_dir());
		json_decref(load_and_check(topo_fabric_load_cache, path, "checked-in cache"));
	}
	return harness_done();
}
