/*
 * mapping/engine.c: the engine table and map_compute, which wraps every engine with the same
 * guarantees: sizes checked, output repaired into a bijection, ties between equal-cost mappings broken the
 * same way (ties.c: rank order follows slot order), then on a target whose routes are known (t->links: a
 * dragonfly) the busiest link's load lowered by swaps that keep the cost (linkload.c; the tie order then
 * yields to the lower load), never worse than the identity.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mapping_private.h"

/* The engines by name, the one list: the table, map_algorithms() and map_algorithm_list() expand it. */
#define MAP_ENGINES(X)                       \
	X("treematch", map_engine_treematch) \
	X("scotch", map_engine_scotch)       \
	X("refine", map_engine_refine)       \
	X("auto", map_engine_auto)           \
	X("bisect", map_engine_bisect)       \
	X("identity", map_engine_identity)
#define ENGINE_ENTRY(name, fn) { name, fn },
#define ENGINE_NAME(name, fn) name,
#define ENGINE_LISTED(name, fn) ", " name

rm_error_t *map_ctx_error(const struct map_ctx *ctx)
{
	return ctx->err;
}

static const struct map_engine {
	const char *name;
	map_engine_fn fn;
} engines[] = { MAP_ENGINES(ENGINE_ENTRY) };

#define NENGINES (sizeof(engines) / sizeof(engines[0]))

const char *const *map_algorithms(void)
{
	static const char *const names[] = { MAP_ENGINES(ENGINE_NAME) NULL };

	return names;
}

const char *map_algorithm_list(void)
{
	static const char list[] = MAP_ENGINES(ENGINE_LISTED);

	return list + 2; /* without the first ", " */
}

static const struct map_engine *find_engine(const char *name)
{
	size_t i;

	for (i = 0; name && i < NENGINES; i++)
		if (!strcasecmp(engines[i].name, name)) /* "Auto" is auto: names are case-insensitive */
			return &engines[i];
	return NULL;
}

const char *map_algorithm_find(const char *name)
{
	const struct map_engine *e = find_engine(name);

	return e ? e->name : NULL;
}

static int check_args(const char *algo, const map_graph_t *g, const topo_target_t *t, uint32_t *perm, rm_error_t *err)
{
	if (!g || !t || !perm || t->nlevels < 1 || !t->group) {
		errno = EINVAL;
		return rm_error_set(err, "map", 0, 0, "missing graph, target or output array");
	}
	if (g->n > t->nslots) {
		errno = EINVAL;
		return rm_error_set(err, "map", 0, 0, "%u ranks but only %u slots in the target", g->n, t->nslots);
	}
	if (!find_engine(algo)) {
		errno = EINVAL;
		return rm_error_set(err, "algo", 0, 0, "unknown engine '%s' (%s)", algo ? algo : "(null)",
				    map_algorithm_list());
	}
	return 0;
}

/* Default budget in CPU milliseconds: 0.025 per rank up to 512 ranks (at least 2), 0.04 above (41 at
 * 1,024), at most MAP_DEFAULT_BUDGET_MS. Chosen so that auto's total time, its constructions included,
 * meets rankmap's speed targets (128 ranks <= 5 ms, 1,024 <= 50 ms, 65,536 <= 2 s). */
static double default_budget(uint32_t n)
{
	double b = n <= 512 ? 0.025 * n : 0.04 * n;

	return b < 2 ? 2 : b > MAP_DEFAULT_BUDGET_MS ? MAP_DEFAULT_BUDGET_MS : b;
}

double map_default_budget_ms(uint32_t n)
{
	return default_budget(n);
}

/* The offline default (mapping.h): the in-job default, at least MAP_OFFLINE_MIN_BUDGET_MS. From 2,500
 * ranks on the two are the same (0.04 ms a rank reaches 100 ms there), so the rule changes nothing where
 * the peers of tests/bench/mapping take less than 20 x 100 ms = 2 s: the smallest peer time from 1,024
 * ranks on is 2.15 s (SharedMap, rand1024). Below, 100 ms lets auto's quality mode take one multilevel
 * construction to its end (RESULTS.md, fifth round: within 2 % of the best peer on rand128, cg128,
 * powerlaw-1k and rand1024, where the in-job default is 2.6-7.2 % above). From MAP_OFFLINE_LARGE_RANKS
 * ranks on, MAP_OFFLINE_LARGE_MS_PER_RANK (0.06 ms) a rank, at most MAP_DEFAULT_BUDGET_MS: auto's
 * multilevel candidate then has 1.5 times a job's default, enough for its stronger form at 4,096 ranks
 * (auto.c: ml_candidate; RESULTS.md, ninth round), and every instance of tests/bench/mapping from 4,096
 * ranks on stays at least 20x faster than its best peer (the closest: cart3d-24x20x18, 8,640 ranks,
 * 0.52 s against SharedMap's 11.87 s, 22.9x; mesh2d-4k 0.25 s against 6.22 s, 25x). */
double map_offline_budget_ms(uint32_t n)
{
	double b = default_budget(n);

	if (n >= MAP_OFFLINE_LARGE_RANKS && MAP_OFFLINE_LARGE_MS_PER_RANK * n > b)
		b = MAP_OFFLINE_LARGE_MS_PER_RANK * n > MAP_DEFAULT_BUDGET_MS ? MAP_DEFAULT_BUDGET_MS
									      : MAP_OFFLINE_LARGE_MS_PER_RANK * n;
	return b < MAP_OFFLINE_MIN_BUDGET_MS ? MAP_OFFLINE_MIN_BUDGET_MS : b;
}

int map_compute(const char *algo, const map_graph_t *g, const topo_target_t *t, const map_options_t *opt,
		uint32_t *perm, map_result_t *res, rm_error_t *err)
{
	double t0 = map_now_ms(), w0 = map_wall_ms(), idcost, cost;
	const struct map_engine *e;
	map_ctx_t ctx;
	uint32_t i;
	int rc, replaced = 0;

	if (perm && g)
		for (i = 0; i < g->n; i++)
			perm[i] = i;
	if (check_args(algo, g, t, perm, err) < 0)
		return -1;
	e = find_engine(algo);
	memset(&ctx, 0, sizeof(ctx));
	ctx.g = g;
	ctx.t = t;
	if (opt)
		ctx.opt = *opt;
	if (!(ctx.opt.time_budget_ms <= MAP_MAX_BUDGET_MS)) { /* (NaN too) */
		errno = EINVAL;
		return rm_error_set(err, "time_budget_ms", 0, 0,
				    "%g ms is more than the most an engine may take, %d ms", ctx.opt.time_budget_ms,
				    MAP_MAX_BUDGET_MS);
	}
	ctx.default_ms = default_budget(g->n);
	if (ctx.opt.time_budget_ms <= 0)
		ctx.opt.time_budget_ms = ctx.default_ms;
	ctx.deadline = t0 + ctx.opt.time_budget_ms;
	ctx.err = err;
	idcost = map_cost(g, t, perm);
	if (!isfinite(idcost)) { /* weights x distances beyond a double: no cost could be compared or reported */
		errno = EDOM;
		return rm_error_set(err, "cost", 0, 0,
				    "the cost of a placement overflows a double (the weights times "
				    "the target's distances): scale the weights down");
	}
	rc = e->fn(&ctx, perm);
	if (rc == 0 && (map_repair(g, t, perm) < 0 || map_order_ties(g, t, perm) < 0 ||
			(strcmp(e->name, "identity") && map_linkload_refine(g, t, perm, ctx.opt.time_budget_ms) < 0)))
		rc = rm_error_set(err, algo, 0, 0, "out of memory");
	cost = rc == 0 ? map_cost(g, t, perm) : idcost;
	if (rc < 0 || cost > idcost || map_check_perm(perm, g->n, t->nslots) < 0) {
		for (i = 0; i < g->n; i++)
			perm[i] = i;
		cost = idcost;
		replaced = 1;
	}
	if (res) {
		res->cost = cost;
		res->identity_cost = idcost;
		res->time_ms = map_wall_ms() - w0;
		snprintf(res->algo, sizeof(res->algo), "%s", replaced ? "identity" : e->name);
	}
	return rc;
}
