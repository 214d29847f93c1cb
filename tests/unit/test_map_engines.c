/*
 * tests/unit/test_map_engines.c: every engine's own output, before map_compute repairs it: slots in
 * range, and a bijection where the engine promises one (all but scotch: Scotch balances load and may
 * put two ranks on one terminal, map_compute's repair makes it a bijection, see mapping/scotch.c);
 * map_compute keeps the engine asked for (res.algo names it: an engine replaced by the identity fails),
 * returns its mapping with ties ordered (test_map_ties.c tests that rule) and a bijection that never
 * costs more than the identity; optimality against brute force on
 * small instances (all permutations, n <= 8); the figures of the reference table (TreeMatch and Scotch measured elsewhere on the same instances); irregular targets, fewer
 * ranks than slots, bad arguments, determinism.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping.h"
#include "mapping_private.h" /* the engines themselves (map_engine_*), called here without map_compute */
#include "target_scotch.h"
#include "tests/harness.h"

static const char *const engines[] = { "identity", "treematch", "scotch", "refine", "bisect", "auto" };
#define NENG (sizeof(engines) / sizeof(engines[0]))

/* The engines of engines[], in the same order: bijective when the engine promises a bijection by
 * itself, timed when its result depends on where the deadline cuts its search (refine's and auto's
 * iterated local search), so that map_compute's run need not repeat it exactly. */
static const struct {
	map_engine_fn fn;
	int bijective, timed;
} engine_fns[] = {
	{ map_engine_identity, 1, 0 }, { map_engine_treematch, 1, 0 }, { map_engine_scotch, 0, 0 },
	{ map_engine_refine, 1, 1 },   { map_engine_bisect, 1, 0 },    { map_engine_auto, 1, 1 },
};

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return (uint32_t)(*s >> 11);
}

/* A random graph of n ranks with about m edges, weights 1..20. */
static map_graph_t *random_graph(uint32_t n, uint32_t m, uint64_t seed)
{
	uint32_t s[64], d[64], i;
	double w[64];

	for (i = 0; i < m && i < 64; i++) {
		s[i] = rnd(&seed) % n;
		d[i] = rnd(&seed) % n;
		w[i] = 1 + rnd(&seed) % 20;
	}
	return map_graph_from_edges(n, i, s, d, w, NULL);
}

/* Minimum cost over all injective maps of the n ranks into the slots (Heap's algorithm over the slot
 * permutations; the first n entries are the mapping). At most 10 slots. */
static double brute_force(const map_graph_t *g, const topo_target_t *t)
{
	uint32_t ns = t->nslots, a[10] = { 0 }, c[10] = { 0 }, i = 0;
	double best;

	if (ns > 10)
		return NAN;
	for (i = 0; i < ns; i++)
		a[i] = i;
	best = map_cost(g, t, a);
	i = 0;
	while (i < ns) {
		if (c[i] < i) {
			uint32_t j = i % 2 ? c[i] : 0, tmp = a[j];
			double cost;

			a[j] = a[i], a[i] = tmp;
			cost = map_cost(g, t, a);
			if (cost < best)
				best = cost;
			c[i]++;
			i = 0;
		} else {
			c[i++] = 0;
		}
	}
	return best;
}

/* A two-level target built by hand: hosts of the given sizes (slot distance 1 inside a host, hcost
 * between hosts). Irregular when sizes differ. */
static topo_target_t *hosts_target(const uint32_t *sizes, uint32_t nh, double hcost)
{
	topo_target_t *t = calloc(1, sizeof(*t));
	uint32_t h, k, s = 0, ns = 0;

	for (h = 0; h < nh; h++)
		ns += sizes[h];
	t->nslots = ns, t->nlevels = 3, t->host_level = -1;
	t->group = malloc((size_t)ns * 3 * sizeof(*t->group));
	t->ngroups = malloc(3 * sizeof(*t->ngroups));
	t->cost = malloc(3 * sizeof(*t->cost));
	t->ngroups[0] = 1, t->ngroups[1] = nh, t->ngroups[2] = ns;
	t->cost[0] = hcost, t->cost[1] = 1, t->cost[2] = 0;
	for (h = 0; h < nh; h++)
		for (k = 0; k < sizes[h]; k++, s++) {
			t->group[s * 3] = 0;
			t->group[s * 3 + 1] = h;
			t->group[s * 3 + 2] = s;
		}
	return t;
}

/* Runs engine e itself into raw (g->n entries), as map_compute would but without its repair and
 * identity guard; checks that every entry is a slot and, when the engine promises one, a bijection.
 * Returns the engine's return code. */
static int run_raw(size_t e, const map_graph_t *g, const topo_target_t *t, const map_options_t *opt, uint32_t *raw,
		   const char *what)
{
	map_ctx_t ctx = { .g = g, .t = t, .opt = *opt };
	uint32_t i, out = 0;
	rm_error_t err;
	int rc;

	rm_error_clear(&err);
	ctx.err = &err;
	ctx.deadline = map_now_ms() + opt->time_budget_ms;
	for (i = 0; i < g->n; i++)
		raw[i] = i;
	rc = engine_fns[e].fn(&ctx, raw);
	check(rc == 0, "%s: %s itself succeeds (%s)", what, engines[e], err.text);
	for (i = 0; rc == 0 && i < g->n; i++)
		out += raw[i] >= t->nslots;
	check(rc != 0 || out == 0, "%s: %s itself puts every rank on a slot (%u outside)", what, engines[e], out);
	if (engine_fns[e].bijective)
		check(rc != 0 || map_check_perm(raw, g->n, t->nslots) == 0, "%s: %s itself returns a bijection", what,
		      engines[e]);
	return rc;
}

/* Per engine: cases run, and cases where its own mapping cost more than the identity (replaced). */
static unsigned runs[NENG], replaced[NENG];

/* No engine may be replaced by the identity in more than one case in ten: an engine that is broken
 * (replaced always, or often) fails here even though map_compute's guard hides it from users. */
static void test_replacements(void)
{
	size_t e;

	for (e = 0; e < NENG; e++)
		check(runs[e] > 0 && replaced[e] * 10 <= runs[e], "%s replaced by the identity in %u of %u cases",
		      engines[e], replaced[e], runs[e]);
}

/* Runs every engine, by itself (run_raw) and through map_compute; checks that map_compute kept the
 * engine (res.algo), its bijection, cost consistency and the identity guard, and that it returned the
 * engine's own mapping (repaired, for scotch) when the engine does not depend on its deadline.
 * Returns auto's cost. */
static double run_all(const map_graph_t *g, const topo_target_t *t, const char *what, double *best_out)
{
	uint32_t *p = malloc(((size_t)g->n + 1) * sizeof(*p)), *raw = malloc(((size_t)g->n + 1) * sizeof(*raw));
	map_options_t opt = { .time_budget_ms = 2000 };
	double auto_cost = -1, best = INFINITY;
	map_result_t res;
	size_t e;

	for (e = 0; e < NENG; e++) {
		rm_error_t err;
		int rc, rawrc;
		double own;

		rawrc = run_raw(e, g, t, &opt, raw, what);
		rm_error_clear(&err);
		rc = map_compute(engines[e], g, t, &opt, p, &res, &err);
		check(rc == 0, "%s: %s succeeds (%s)", what, engines[e], err.text);
		/* what map_compute makes of the engine's output: repaired, then its ties ordered (ties.c) */
		own = rawrc == 0 && map_repair(g, t, raw) >= 0 && map_order_ties(g, t, raw) >= 0 ? map_cost(g, t, raw)
												 : NAN;
		runs[e]++;
		if (!engine_fns[e].timed && own > res.identity_cost) {
			/* a heuristic may lose to the identity on a small case: then, and only then, the
			 * guard replaces it (counted: an engine replaced often fails in test_replacements) */
			replaced[e]++;
			check(!strcmp(res.algo, "identity"),
			      "%s: %s costs %g > identity %g, so map_compute keeps the identity", what, engines[e], own,
			      res.identity_cost);
		} else {
			check(!strcmp(res.algo, engines[e]),
			      "%s: %s kept by map_compute, not replaced by %s (own cost %g after repair, identity %g)",
			      what, engines[e], res.algo, own, res.identity_cost);
		}
		check(map_check_perm(p, g->n, t->nslots) == 0, "%s: %s returns a bijection", what, engines[e]);
		check(res.cost <= res.identity_cost, "%s: %s never worse than the identity", what, engines[e]);
		check(fabs(res.cost - map_cost(g, t, p)) < 1e-9 * (1 + res.cost), "%s: %s reports its cost", what,
		      engines[e]);
		if (rawrc == 0 && !engine_fns[e].timed && !strcmp(res.algo, engines[e]) && map_repair(g, t, raw) >= 0)
			check(!memcmp(raw, p, g->n * sizeof(*p)),
			      "%s: map_compute returns %s's own mapping%s, ties ordered", what, engines[e],
			      engine_fns[e].bijective ? "" : ", repaired");
		if (res.cost < best)
			best = res.cost;
		if (!strcmp(engines[e], "auto"))
			auto_cost = res.cost;
	}
	free(p);
	free(raw);
	if (best_out)
		*best_out = best;
	return auto_cost;
}

static void test_brute_force(void)
{
	static const char *const targets[] = { "tleaf 2 2 10 4 1", "tleaf 3 2 20 2 5 2 1", "tleaf 2 4 7 2 1" };
	uint32_t ti, k, misses = 0, trials = 0;

	for (ti = 0; ti < 3; ti++) {
		topo_target_t *t = topo_target_from_tleaf(targets[ti], NULL);

		for (k = 0; k < 12; k++) {
			uint32_t n = k % 3 == 0 ? 6 : 8; /* some with fewer ranks than slots */
			map_graph_t *g = random_graph(n, 6 + k, 1000 + k * 7 + ti);
			double opt = brute_force(g, t), best, au;
			char what[96];

			snprintf(what, sizeof(what), "%s, %u ranks, graph %u", targets[ti], n, k);
			au = run_all(g, t, what, &best);
			check(best >= opt - 1e-9, "%s: nothing beats the brute-force optimum %g", what, opt);
			trials++;
			misses += au > opt + 1e-9;
			map_graph_destroy(g);
		}
		topo_target_destroy(t);
	}
	/* auto's iterated local search is expected to find the optimum of these tiny cases. Under
	 * AddressSanitizer (engines 20-50x slower) the search its CPU budget allows is shorter: one miss in 36
	 * was seen in 1 of 3 runs (the quality mode's items are bounded by CPU time), so one is allowed there
	 * and said; the plain build allows none. */
#if defined(__SANITIZE_ADDRESS__)
	const uint32_t allowed = 1;
#else
	const uint32_t allowed = 0;
#endif
	check(misses <= allowed, "auto optimal in %u of %u brute-forced cases (%u misses allowed in this build)",
	      trials - misses, trials, allowed);
}

static map_graph_t *cart(const char *spec)
{
	map_cart_t c;

	return map_cart_parse(spec, &c, NULL) == 0 ? map_graph_cart(&c, NULL) : NULL;
}

/* The reference table: Scotch and TreeMatch figures measured elsewhere on the same instances; auto must
 * not be worse. */
static void test_issue_table(void)
{
	static const struct {
		const char *cart, *tleaf;
		double peer;
	} cases[] = {
		{ "8x4:1,1:10,1", "tleaf 4 2 14 2 10 2 2 4 1", 784 },
		{ "4x4x2:1,1,1:10,1,1", "tleaf 4 2 14 2 10 2 2 4 1", 768 },
		{ "16x8", "tleaf 4 2 14 8 10 2 2 4 1", 1216 },
		{ "16x16x4:1,1,1:4,2,1", "tleaf 4 8 14 8 10 2 2 8 1", 34816 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		map_graph_t *g = cart(cases[i].cart);
		topo_target_t *t = topo_target_from_tleaf(cases[i].tleaf, NULL);
		double au = run_all(g, t, cases[i].cart, NULL);

		check(au <= cases[i].peer, "%s: auto %g <= best peer %g", cases[i].cart, au, cases[i].peer);
		map_graph_destroy(g);
		topo_target_destroy(t);
	}
}

static void test_irregular(void)
{
	static const uint32_t sizes[] = { 2, 4, 3, 1 };
	topo_target_t *t = hosts_target(sizes, 4, 10);
	map_graph_t *g = random_graph(8, 14, 77), *g10 = random_graph(10, 20, 78);
	double opt = brute_force(g, t), best, au;
	map_scotch_arch_t arch;
	SCOTCH_ArchDom d0, d1;
	uint32_t a, b, bad;

	au = run_all(g, t, "hosts 2+4+3+1, 8 ranks", &best);
	check(best >= opt - 1e-9 && au <= opt + 1e-9, "irregular target: auto finds the optimum %g (%g)", opt, au);
	run_all(g10, t, "hosts 2+4+3+1, 10 ranks", NULL);
	/* the Scotch target of an irregular tree: terminal i is slot i, at the target's distances */
	check(map_scotch_arch_init(&arch, t, 1000, NULL) == 0 && arch.has_sub, "padded tleaf restricted to the slots");
	check(SCOTCH_archSize(arch.arch) == (SCOTCH_Num)t->nslots, "%d terminals for %u slots",
	      (int)SCOTCH_archSize(arch.arch), t->nslots);
	for (a = 0, bad = 0; a < t->nslots; a++)
		for (b = 0; b < t->nslots; b++) {
			SCOTCH_archDomTerm(arch.arch, &d0, a);
			SCOTCH_archDomTerm(arch.arch, &d1, b);
			bad += SCOTCH_archDomDist(arch.arch, &d0, &d1) != (SCOTCH_Num)topo_target_distance(t, a, b);
		}
	check(bad == 0, "Scotch distances are the target's for every slot pair (%u differ)", bad);
	map_scotch_arch_exit(&arch);
	map_graph_destroy(g);
	map_graph_destroy(g10);
	topo_target_destroy(t);
}

/* Hosts of 4 and 2 slots: the padded tree (2 hosts of 4) has 8 terminals and the slots are its first 6, so
 * terminal i is slot i; terminals 6 and 7 are no slot and the target must still be restricted to the slots
 * (it was not: Scotch then mapped ranks onto them and the repair scattered them; issue #26 item 5, the NDR
 * capture's 11+5 hosts over two leaves). */
static void test_prefix_padding(void)
{
	static const uint32_t sizes[] = { 4, 2 };
	topo_target_t *t = hosts_target(sizes, 2, 10);
	map_graph_t *g = random_graph(6, 10, 79);
	map_scotch_arch_t arch;
	int rc = map_scotch_arch_init(&arch, t, 1000, NULL);
	SCOTCH_Num size = rc == 0 ? SCOTCH_archSize(arch.arch) : -1;

	check(rc == 0 && arch.has_sub && size == (SCOTCH_Num)t->nslots,
	      "slots filling the padded tree's first terminals: restricted to them (%d terminals for %u slots)",
	      (int)size, t->nslots);
	if (rc == 0)
		map_scotch_arch_exit(&arch);
	run_all(g, t, "hosts 4+2, 6 ranks", NULL);
	map_graph_destroy(g);
	topo_target_destroy(t);
}

/* auto at its default budget; under AddressSanitizer, which runs the engines 20-50x slower, at 100 ms, about
 * the search that the default's 2 ms of CPU buy in the plain build (at 2 ms the sanitized auto lost to
 * bisect in 1 of 2 runs: its portfolio was cut after one candidate) */
#if defined(__SANITIZE_ADDRESS__)
static const map_options_t sanitized_opt = { .time_budget_ms = 100 };
#else
static const map_options_t sanitized_opt = { 0 };
#endif

/* Hosts of 8, 12, 16 and 8 slots (44), 40 ranks of a 5x8 halo exchange: the irregular tree and the
 * spare slots are where Scotch's balancing and TreeMatch's padding hurt; auto must match Scotch. */
static void test_irregular_vs_scotch(void)
{
	static const uint32_t sizes[] = { 8, 12, 16, 8 };
	topo_target_t *t = hosts_target(sizes, 4, 10);
	map_graph_t *g = cart("5x8:1,1:10,1");
	uint32_t p[40];
	map_result_t rs, ra, rb;
	int rc;

	check(map_compute("scotch", g, t, NULL, p, &rs, NULL) == 0 && map_check_perm(p, 40, 44) == 0 &&
		      !strcmp(rs.algo, "scotch"),
	      "scotch maps (result from %s)", rs.algo);
	check(map_compute("bisect", g, t, NULL, p, &rb, NULL) == 0 && map_check_perm(p, 40, 44) == 0 &&
		      !strcmp(rb.algo, "bisect"),
	      "bisect maps (result from %s)", rb.algo);
	check(map_compute("auto", g, t, &sanitized_opt, p, &ra, NULL) == 0 && map_check_perm(p, 40, 44) == 0 &&
		      !strcmp(ra.algo, "auto"),
	      "auto maps (result from %s)", ra.algo);
	check(ra.cost <= rs.cost && ra.cost <= rb.cost, "irregular: auto %g <= scotch %g and bisect %g", ra.cost,
	      rs.cost, rb.cost);
	/* typed TreeMatch: every rank on a real slot, without repair moves changing its groups */
	rc = map_compute("treematch", g, t, NULL, p, &ra, NULL);
	check(rc == 0 && map_check_perm(p, 40, 44) == 0 && ra.cost < ra.identity_cost && !strcmp(ra.algo, "treematch"),
	      "irregular: treematch %g (result from %s)", ra.cost, ra.algo);
	map_graph_destroy(g);
	topo_target_destroy(t);
}

static void test_bad_args(void)
{
	topo_target_t *t = topo_target_from_tleaf("tleaf 2 2 10 2 1", NULL);
	map_graph_t *g = random_graph(6, 8, 5), *empty = map_graph_from_edges(4, 0, NULL, NULL, NULL, NULL);
	uint32_t p[8] = { 7, 7, 7, 7, 7, 7, 7, 7 }, bad[4] = { 0, 0, 1, 2 };
	map_options_t opt = { .start = bad };
	rm_error_t err;
	size_t e;

	rm_error_clear(&err);
	check(map_compute("auto", g, t, NULL, p, NULL, &err) < 0 && strstr(err.text, "6 ranks") &&
		      strstr(err.text, "4 slots"),
	      "more ranks than slots: error names both counts (%s)", err.text);
	check(p[0] == 0 && p[5] == 5, "on failure perm holds the identity");
	rm_error_clear(&err);
	check(map_compute("metis", empty, t, NULL, p, NULL, &err) < 0 && strstr(err.text, "metis"), "unknown engine");
	rm_error_clear(&err);
	check(map_compute("refine", empty, t, &opt, p, NULL, &err) < 0, "refine rejects a start that is no bijection");
	for (e = 0; e < NENG; e++)
		check(map_compute(engines[e], empty, t, NULL, p, NULL, NULL) == 0 && map_check_perm(p, 4, 4) == 0,
		      "%s: a graph without edges maps", engines[e]);
	for (e = 0; map_algorithms()[e]; e++)
		;
	check(e >= 5, "engine table lists %zu names", e);
	map_graph_destroy(g);
	map_graph_destroy(empty);
	topo_target_destroy(t);
}

/* Scotch beyond MAP_SCOTCH_MAX_RANKS: an explicit request is refused at once, naming the limit (its CPU
 * grows as n^2 past it: seconds to minutes); at the limit it maps; auto with a budget that would let
 * Scotch run leaves it out and maps. CPU times, not wall times: the machine may be shared. */
static void test_scotch_scale(void)
{
	topo_target_t *t = topo_target_from_tleaf("tleaf 4 32 14 16 10 2 2 8 1", NULL);   /* 8,192 slots */
	topo_target_t *big = topo_target_from_tleaf("tleaf 4 36 14 16 10 2 2 8 1", NULL); /* 9,216 */
	map_cart_t cart;
	map_graph_t *g = NULL, *gbig = NULL;
	map_options_t opt = { .time_budget_ms = 800 }; /* enough for Scotch in auto below the limit */
	uint32_t *p = malloc(9216 * sizeof(*p)), i, ident = 1;
	map_result_t res;
	rm_error_t err;
	double c0;

	if (map_cart_parse("128x64", &cart, NULL) == 0)
		g = map_graph_cart(&cart, NULL);
	if (map_cart_parse("96x96", &cart, NULL) == 0)
		gbig = map_graph_cart(&cart, NULL);
	if (!t || !big || !g || !gbig || !p) {
		fail("scotch scale: instances");
		goto out;
	}
	rm_error_clear(&err);
	check(g->n == MAP_SCOTCH_MAX_RANKS && map_compute("scotch", g, t, NULL, p, &res, &err) == 0 &&
		      !strcmp(res.algo, "scotch") && res.cost < res.identity_cost,
	      "scotch maps %u ranks (its limit): %s", g->n, err.text);
	rm_error_clear(&err);
	c0 = map_now_ms();
	check(map_compute("scotch", gbig, big, NULL, p, &res, &err) < 0 && strstr(err.text, "beyond Scotch's scale") &&
		      strstr(err.text, "8192") && strstr(err.text, "9216 ranks"),
	      "scotch refuses 9,216 ranks naming the limit (%s)", err.text);
	check(map_now_ms() - c0 < 500, "the refusal is immediate (%.0f ms of CPU)", map_now_ms() - c0);
	for (i = 0; i < gbig->n; i++)
		ident &= p[i] == i;
	check(ident, "refused: perm holds the identity");
	rm_error_clear(&err);
	c0 = map_now_ms();
	check(map_compute("auto", gbig, big, &opt, p, &res, &err) == 0 &&
		      map_check_perm(p, gbig->n, big->nslots) == 0 && map_now_ms() - c0 < 10000,
	      "auto with a budget that would give Scotch its turn maps 9,216 ranks (%s)", err.text);
out:
	free(p);
	map_graph_destroy(g);
	map_graph_destroy(gbig);
	topo_target_destroy(t);
	topo_target_destroy(big);
}

static void test_refine_start_and_determinism(void)
{
	topo_target_t *t = topo_target_from_tleaf("tleaf 3 4 20 2 5 4 1", NULL);
	map_graph_t *g = cart("4x8:1,1:3,1");
	uint32_t start[32], p1[32], p2[32], i;
	map_options_t opt = { .time_budget_ms = 5000, .seed = 42, .start = start };
	map_result_t r1, r2;

	for (i = 0; i < 32; i++)
		start[i] = (i * 13) % 32; /* a scattered start */
	map_compute("refine", g, t, &opt, p1, &r1, NULL);
	check(r1.cost <= map_cost(g, t, start), "refine never worse than its start (%g)", r1.cost);
	opt.start = NULL;
	map_compute("auto", g, t, &opt, p1, &r1, NULL);
	map_compute("auto", g, t, &opt, p2, &r2, NULL);
	check(r1.cost == r2.cost && !memcmp(p1, p2, sizeof(p1)), "auto is deterministic for a seed");
	map_graph_destroy(g);
	topo_target_destroy(t);
}

int main(void)
{
	test_brute_force();
	test_issue_table();
	test_irregular();
	test_irregular_vs_scotch();
	test_prefix_padding();
	test_bad_args();
	test_refine_start_and_determinism();
	test_replacements();
	test_scotch_scale();
	return harness_done();
}
