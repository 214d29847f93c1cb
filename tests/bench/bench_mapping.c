/*
 * tests/bench/bench_mapping.c: rankmap's mapping engines beside Scotch and the identity, in one run.
 *
 * For every instance it prints the identity cost, Scotch 7 (default strategy, run here through the
 * "scotch" engine's raw output, before any repair; "*" marks a result that was not one rank per
 * slot and had to be repaired), our TreeMatch, refine (from the identity) and auto, with times, the
 * peer figures of the reference table (TreeMatch and Scotch figures measured on the same
 * instances elsewhere, test_map_engines.c) where there are some, and the ratio auto / best peer (best of
 * identity, Scotch measured here, TreeMatch ours, and the figures). "ok" means auto is <= every
 * peer figure; the speed targets (128 ranks <= 5 ms, 1,024 <= 50 ms, 65,536 <= 2 s) are checked on auto's
 * CPU time (cpu-ms), since the machine may be shared; wall times (ms) are printed too. Under every
 * Cartesian instance on a tleaf, a line gives its structured-tiling limit (tests/cart_limit.h: the best
 * nested boxes, one shape per level) and the boxes, with auto / limit and treematch / limit; at 65,536
 * ranks issue 29's target: auto within 1 % of the limit in under 1,000 cpu-ms.
 *
 * BENCH_MAPPING_QUICK=1 skips the 65,536-rank instances; BENCH_MAPPING_ONLY=TEXT runs the instances whose
 * name contains TEXT; BENCH_MAPPING_BUDGET=MS gives auto that budget (CPU ms) instead of the default.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mapping.h"
#include "mapping_private.h"
#include "tests/cart_limit.h"

struct instance {
	const char *name;
	const char *cart; /* Cartesian spec, or NULL */
	const char *tleaf;
	double ref_identity, ref_scotch, ref_tm; /* the reference table, 0 when none */
	int kind; /* 0 cart, 1 alltoall 16x2, 2 random, 3 rings of rings, 4 hypercube, 5 app */
	uint32_t n;
};

static const struct instance instances[] = {
	{ "cart2d 8x4 w10/1", "8x4:1,1:10,1", "tleaf 4 2 14 2 10 2 2 4 1", 2272, 784, 784, 0, 0 },
	{ "cart3d 4x4x2 w10/1/1", "4x4x2:1,1,1:10,1,1", "tleaf 4 2 14 2 10 2 2 4 1", 3920, 768, 768, 0, 0 },
	{ "alltoall_16x2", NULL, "tleaf 4 2 14 2 10 2 2 4 1", 2512, 1456, 1456, 1, 32 },
	{ "cart2d 16x8", "16x8", "tleaf 4 2 14 8 10 2 2 4 1", 1504, 1216, 1216, 0, 0 },
	{ "cart3d 16x16x4 w4/2/1", "16x16x4:1,1,1:4,2,1", "tleaf 4 8 14 8 10 2 2 8 1", 57344, 39688, 34816, 0, 0 },
	{ "cart3d 64x64x16", "64x64x16", "tleaf 4 64 14 64 10 2 2 8 1", 1646592, 1178723, 0, 0, 0 },
	{ "random sparse 128", NULL, "tleaf 4 2 14 8 10 2 2 4 1", 0, 0, 0, 2, 128 },
	{ "random sparse 1024", NULL, "tleaf 4 8 14 8 10 2 2 8 1", 0, 0, 0, 2, 1024 },
	{ "rings of rings 8x8", NULL, "tleaf 3 8 100 2 10 4 1", 0, 0, 0, 3, 64 },
	{ "rings of rings 32x32", NULL, "tleaf 4 8 14 8 10 2 2 8 1", 0, 0, 0, 3, 1024 },
	{ "hypercube 2^7", NULL, "tleaf 4 2 14 8 10 2 2 4 1", 0, 0, 0, 4, 128 },
	{ "hypercube 2^10", NULL, "tleaf 4 8 14 8 10 2 2 8 1", 0, 0, 0, 4, 1024 },
	{ "app irregular 1024", NULL, "tleaf 4 8 14 8 10 2 2 8 1", 0, 0, 0, 5, 1024 },
	{ "app irregular 65536", NULL, "tleaf 4 64 14 64 10 2 2 8 1", 0, 0, 0, 5, 65536 },
	{ "cart2d 16x16 on mixed", "16x16:1,1:10,1", "mixed", 0, 0, 0, 0, 0 },
	{ "random sparse on mixed", NULL, "mixed", 0, 0, 0, 2, 256 },
};

/* "mixed": an irregular cluster, 4 switches of 6 hosts with 8, 12, 16, 8, 12, 16 cores in 2 packages
 * (288 slots), distances 14 across switches, 10 across hosts, 2 across packages, 1 inside one. */
static topo_target_t *mixed_target(void)
{
	static const uint32_t cores[] = { 8, 12, 16, 8, 12, 16 };
	topo_target_t *t = calloc(1, sizeof(*t));
	uint32_t sw, h, p, c, s = 0, host = 0, pkg = 0;

	t->nlevels = 5, t->host_level = -1, t->nslots = 4 * 72;
	t->group = malloc((size_t)t->nslots * 5 * sizeof(*t->group));
	t->ngroups = malloc(5 * sizeof(*t->ngroups));
	t->cost = malloc(5 * sizeof(*t->cost));
	t->ngroups[0] = 1, t->ngroups[1] = 4, t->ngroups[2] = 24, t->ngroups[3] = 48, t->ngroups[4] = t->nslots;
	t->cost[0] = 14, t->cost[1] = 10, t->cost[2] = 2, t->cost[3] = 1, t->cost[4] = 0;
	for (sw = 0; sw < 4; sw++)
		for (h = 0; h < 6; h++, host++)
			for (p = 0; p < 2; p++, pkg++)
				for (c = 0; c < cores[h] / 2; c++, s++) {
					uint32_t *gr = t->group + (size_t)s * 5;

					gr[0] = 0, gr[1] = sw, gr[2] = host, gr[3] = pkg, gr[4] = s;
				}
	return t;
}

/* Deterministic generator (xorshift). */
static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return (uint32_t)(*s >> 11);
}

struct edges {
	uint32_t *s, *d;
	double *w;
	size_t n, cap;
};

static void add(struct edges *e, uint32_t a, uint32_t b, double w)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 1024;
		e->s = realloc(e->s, e->cap * sizeof(*e->s));
		e->d = realloc(e->d, e->cap * sizeof(*e->d));
		e->w = realloc(e->w, e->cap * sizeof(*e->w));
		if (!e->s || !e->d || !e->w)
			abort();
	}
	e->s[e->n] = a, e->d[e->n] = b, e->w[e->n++] = w;
}

/* Families other than Cartesian grids. The ranks are shuffled for the random graphs so that the
 * identity is not accidentally good. */
static void family(const struct instance *in, struct edges *e)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ in->n;
	uint32_t n = in->n, i, j, k, rings, len;

	switch (in->kind) {
	case 1: /* all-to-all inside each column of a 16x2 grid (rank = row * 2 + col) */
		for (i = 0; i < 32; i++)
			for (j = i + 2; j < 32; j += 2)
				add(e, i, j, 1);
		break;
	case 2: /* random sparse: each rank talks to 4 random ranks, weights 1..100 */
		for (i = 0; i < n; i++)
			for (k = 0; k < 4; k++)
				add(e, i, rnd(&seed) % n, 1 + rnd(&seed) % 100);
		break;
	case 3: /* rings of rings: rings of len ranks (token passing), ring leaders in a ring, lighter */
		rings = (uint32_t)sqrt((double)n), len = n / rings;
		for (i = 0; i < rings; i++) {
			for (j = 0; j < len; j++)
				add(e, i * len + j, i * len + (j + 1) % len, 10);
			add(e, i * len, ((i + 1) % rings) * len, 1);
		}
		break;
	case 4: /* hypercube */
		for (i = 0; i < n; i++)
			for (k = 1; k < n; k <<= 1)
				if (!(i & k))
					add(e, i, i | k, 1);
		break;
	default: /* application-like: 3D-ish stencil on a shuffled ordering, plus a few heavy hubs */
		for (i = 0; i < n; i++) {
			uint32_t p = (uint32_t)(((uint64_t)i * 2654435761u) % n);

			add(e, p, (uint32_t)(((uint64_t)((i + 1) % n) * 2654435761u) % n), 50);
			add(e, p, (uint32_t)(((uint64_t)((i + 16) % n) * 2654435761u) % n), 20);
			add(e, p, (uint32_t)(((uint64_t)((i + 256) % n) * 2654435761u) % n), 5);
			if (rnd(&seed) % 16 == 0)
				add(e, p, rnd(&seed) % n, 1 + rnd(&seed) % 10);
		}
		break;
	}
}

static map_graph_t *build(const struct instance *in)
{
	struct edges e = { 0 };
	map_cart_t c;
	map_graph_t *g;

	if (in->cart) {
		if (map_cart_parse(in->cart, &c, NULL) < 0)
			return NULL;
		return map_graph_cart(&c, NULL);
	}
	family(in, &e);
	g = map_graph_from_edges(in->n, e.n, e.s, e.d, e.w, NULL);
	free(e.s), free(e.d), free(e.w);
	return g;
}

/* Raw Scotch (default strategy) without repair; *bad counts ranks sharing a slot. */
static double run_scotch(const map_graph_t *g, const topo_target_t *t, uint32_t *perm, double *ms, long *bad)
{
	map_ctx_t ctx = { .g = g, .t = t, .deadline = 1e300 };
	double t0 = map_now_ms();

	*bad = 0;
	if (map_engine_scotch(&ctx, perm) < 0)
		return NAN;
	*ms = map_now_ms() - t0;
	if (map_check_perm(perm, g->n, t->nslots) < 0)
		*bad = map_repair(g, t, perm);
	return map_cost(g, t, perm);
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Runs an engine with the default budget; *ms is the wall time, *cpu the CPU time. */
static double run(const char *algo, const map_graph_t *g, const topo_target_t *t, uint32_t *perm, double *ms,
		  double *cpu)
{
	map_result_t res;
	map_options_t opt = { 0 };
	double c0 = cpu_ms();

	if (getenv("BENCH_MAPPING_BUDGET") && !strcmp(algo, "auto"))
		opt.time_budget_ms = atof(getenv("BENCH_MAPPING_BUDGET"));

	if (map_compute(algo, g, t, &opt, perm, &res, NULL) < 0)
		return NAN;
	*ms = res.time_ms;
	if (cpu)
		*cpu = cpu_ms() - c0;
	return res.cost;
}

static double min_pos(double a, double b)
{
	if (!(a > 0))
		return b;
	if (!(b > 0))
		return a;
	return a < b ? a : b;
}

/* The structured-tiling limit of a Cartesian instance on a tleaf (tests/cart_limit.h), 0 if none; the
 * shapes of its boxes, level by level, in shapes. */
static double tiling_limit(const struct instance *in, char *shapes, size_t len)
{
	struct cart_limit c = { 0 };
	map_cart_t mc;
	const char *p = in->tleaf + strlen("tleaf");
	int used = 0;

	if (!in->cart || strncmp(in->tleaf, "tleaf ", 6) || map_cart_parse(in->cart, &mc, NULL) < 0 ||
	    mc.ndims > CL_MAXD)
		return 0;
	c.nl = (int)strtol(p, (char **)&p, 10);
	if (c.nl < 1 || c.nl > CL_MAXL)
		return 0;
	for (int l = 0; l < c.nl; l++) {
		c.arity[l] = (uint32_t)strtoul(p, (char **)&p, 10);
		c.dist[l] = strtod(p, (char **)&p);
	}
	c.nd = mc.ndims;
	for (int d = 0; d < c.nd; d++)
		c.dims[d] = (uint32_t)mc.dims[d], c.periods[d] = mc.periods[d], c.weights[d] = mc.weights[d];
	if (!cart_limit(&c))
		return 0;
	shapes[0] = 0;
	for (int l = 0; l + 1 < c.nl; l++)
		for (int d = 0; d < c.nd; d++)
			used += snprintf(shapes + used, len - (size_t)used, "%u%s", c.box[l][d],
					 d + 1 < c.nd   ? "x"
					 : l + 2 < c.nl ? " / "
							: "");
	return c.best;
}

static int bench_one(const struct instance *in)
{
	map_graph_t *g = build(in);
	topo_target_t *t = strcmp(in->tleaf, "mixed") ? topo_target_from_tleaf(in->tleaf, NULL) : mixed_target();
	double id, sc, tm, rf, au, msc = 0, mtm = 0, mrf = 0, mau = 0, cau = 0, peer, limit, lim;
	char shapes[256];
	uint32_t *perm;
	long bad = 0;
	int ok;

	if (!g || !t)
		return printf("%-24s cannot build the instance\n", in->name), 1;
	perm = malloc((size_t)t->nslots * sizeof(*perm));
	id = run("identity", g, t, perm, &mau, NULL);
	sc = run_scotch(g, t, perm, &msc, &bad);
	tm = run("treematch", g, t, perm, &mtm, NULL);
	rf = run("refine", g, t, perm, &mrf, NULL);
	au = run("auto", g, t, perm, &mau, &cau);
	peer = min_pos(min_pos(min_pos(id, sc), min_pos(tm, in->ref_scotch)), in->ref_tm);
	limit = g->n <= 128 ? 5 : g->n <= 1024 ? 50 : 2000;
	ok = au <= peer && cau <= limit;
	printf("%-24s %6u %9.0f %9.0f%s %7.1f %9.0f %6.1f %9.0f %6.1f %9.0f %7.1f %7.1f  %9.0f %9.0f  %5.3f %s%s\n",
	       in->name, g->n, id, sc, bad ? "*" : " ", msc, tm, mtm, rf, mrf, au, mau, cau, in->ref_scotch, in->ref_tm,
	       au / peer, ok ? "ok" : (au <= peer ? "SLOW" : "WORSE"), au < peer ? " (better)" : "");
	if ((lim = tiling_limit(in, shapes, sizeof(shapes))) > 0) {
		int tok = g->n < 65536 || (au <= 1.01 * lim && cau < 1000); /* issue 29's target at 65,536 ranks */

		printf("    structured-tiling limit %.0f (boxes %s): auto / limit %.4f, treematch / limit %.4f%s%s\n",
		       lim, shapes, au / lim, tm / lim,
		       g->n >= 65536 ? " (target: auto <= 1.01 in < 1,000 cpu-ms)" : "",
		       g->n >= 65536 ? (tok ? "  ok" : "  MISSED") : "");
		ok &= tok;
	}
	fflush(stdout);
	free(perm);
	map_graph_destroy(g);
	topo_target_destroy(t);
	return !ok;
}

int main(void)
{
	size_t i;
	int bad = 0, quick = getenv("BENCH_MAPPING_QUICK") != NULL;

	printf("%-24s %6s %9s %10s %7s %9s %6s %9s %6s %9s %7s %7s  %9s %9s  %5s\n", "instance", "ranks", "identity",
	       "scotch", "ms", "treematch", "ms", "refine", "ms", "auto", "ms", "cpu-ms", "issue:sc", "issue:tm",
	       "ratio");
	for (i = 0; i < sizeof(instances) / sizeof(instances[0]); i++) {
		uint32_t n = instances[i].n ? instances[i].n : 65536;

		if (getenv("BENCH_MAPPING_ONLY") && !strstr(instances[i].name, getenv("BENCH_MAPPING_ONLY")))
			continue;
		if (quick && n >= 65536 && (instances[i].n || strstr(instances[i].name, "64x64")))
			continue;
		bad += bench_one(&instances[i]);
	}
	printf("ratio = auto / best peer (identity, Scotch here, TreeMatch ours, issue figures); speed targets "
	       "(checked on auto's CPU time, the machine may be shared): 128 ranks <= 5 ms, 1,024 <= 50 ms, "
	       "65,536 <= 2,000 ms\n");
	printf("%s\n", bad ? "some targets missed" : "all targets met");
	return 0;
}
