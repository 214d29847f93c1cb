/*
 * daemon/ctl/ctl_map.c: `rankmapctl map`, maps a communication pattern onto slots offline and writes the
 * permutation (one line per rank: the slot of rank i), with the cost against the identity.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_common.h"
#include "rm_client.h"
#include "hostlist.h"
#include "mapping.h"
#include "topo.h"

static void map_usage(FILE *f)
{
	fprintf(f,
		"NAME\n"
		"    rankmapctl map - map a communication pattern onto a job's slots\n\n"
		"SYNOPSIS\n"
		"    rankmapctl map (--pattern FILE | --cart DIMS[:PERIODS[:WEIGHTS]])\n"
		"                   (--topology 'tleaf ...' | --cluster FILE [--hosts LIST] [--per-pu])\n"
		"                   [--algo NAME] [--metric METRIC] [--budget MS] [--seed N]\n"
		"                   [--out PERM] [--json]\n"
		"    rankmapctl map (--pattern FILE | --cart SPEC) --socket PATH [--hosts LIST] [--per-pu] ...\n\n"
		"DESCRIPTION\n"
		"    Chooses which slot each MPI rank runs on so that heavy traffic stays close in the\n"
		"    machine, and reports the cost (sum over rank pairs of traffic x distance) beside the\n"
		"    unreordered placement (rank i on slot i). The result is always a bijection onto\n"
		"    distinct slots and never costs more than the unreordered placement. Among placements\n"
		"    of equal cost, it is the one whose rank order follows the slot order (groups of slots\n"
		"    sorted by the smallest rank they hold, where that costs nothing), whatever the engine.\n\n"
		"OPTIONS\n"
		"    --pattern FILE      communication pattern: Matrix Market coordinate (general or\n"
		"                        symmetric; one weight column, or two: bytes then messages, as\n"
		"                        the rankmap tracer writes) or TreeMatch's dense text (N lines of\n"
		"                        N numbers). Ranks are rows, 1-based in Matrix Market.\n"
		"    --cart SPEC         a Cartesian halo exchange instead: DIMS as 8x4x2, PERIODS as\n"
		"                        1,1,0 (default all periodic), WEIGHTS as 10,1,1 per dimension\n"
		"                        (default 1); ranks in MPI row-major order\n"
		"    --topology TLEAF    the slots as a Scotch tree leaf: 'tleaf N a1 c1 ... aN cN' (N\n"
		"                        levels, arity a_i, cost c_i between slots that first differ at\n"
		"                        level i), e.g. 'tleaf 3 8 100 2 10 4 1'\n"
		"    --cluster FILE      the slots from a cluster description (hwloc, InfiniBand, torus;\n"
		"                        see rankmapctl report); one slot per core\n"
		"    --hosts LIST        with --cluster: the job's hosts as a Slurm host list, in order\n"
		"                        (node[01-04],login1); default every host with hardware data\n"
		"    --per-pu            with --cluster: one slot per PU (hardware thread) instead\n"
		"    --socket PATH       map in rankmapd: its model replaces --cluster (--hosts and --per-pu\n"
		"                        apply to it); the pattern is read here and sent. Without --topology\n"
		"                        and --cluster, RANKMAP_SERVER or RANKMAP_SOCKET names it. Same "
		"output.\n" CTL_DAEMON_HELP
		"    --algo NAME         treematch  TreeMatch (Jeannot-Mercier), bottom-up grouping over the\n"
		"                                   levels of the target\n"
		"                        scotch     Scotch 7 static mapping (default strategy), repaired\n"
		"                                   into one rank per slot; at most 8,192 ranks (beyond,\n"
		"                                   an error: its CPU time grows as n^2 there)\n"
		"                        bisect     recursive bipartitioning along the target tree\n"
		"                        refine     local search from the identity\n"
		"                        auto       the above within the budget, refined, best kept (default)\n"
		"                        identity   rank i on slot i\n"
		"    --metric METRIC     which weight of a two-column pattern: bytes (default), messages,\n"
		"                        or loggp (messages x (L + 2o) + bytes x G, DDR InfiniBand)\n"
		"    --budget MS         time budget of auto and refine, in CPU milliseconds (default:\n"
		"                        0.025 ms per rank up to 512 ranks, 0.04 above;\n"
		"                        at least 2 ms, at most 1 s)\n"
		"    --seed N            seed of the randomised steps (default 0); results are\n"
		"                        reproducible for a seed unless the budget cuts the search\n"
		"    --out PERM          write the permutation there ('-': standard output, and the\n"
		"                        summary goes to standard error)\n"
		"    --json              print the summary as one JSON object: ranks, slots, algo,\n"
		"                        engine, cost, identity_cost, improvement, time_ms, target,\n"
		"                        breakdown and identity_breakdown (traffic per level), and\n"
		"                        warnings (an array of strings) when there are any\n"
		"    -h, --help          this text\n\n"
		"EXAMPLES\n"
		"    rankmapctl map --cart 8x4:1,1:10,1 --topology 'tleaf 4 2 14 2 10 2 2 4 1' --json\n"
		"    rankmapctl map --pattern app.mtx --metric messages --cluster /etc/rankmap/cluster.conf \\\n"
		"                   --hosts 'node[01-08]' --algo auto --out app.perm\n\n"
		"WARNINGS\n"
		"    Hosts that no InfiniBand subnet joins (the job spans unconnected subnets) are\n"
		"    mapped with a warning naming such a pair (on standard error, or in --json's\n"
		"    warnings); traffic between them is costed at twice the largest network distance\n"
		"    of the job's hosts, so heavy traffic stays within each connected group.\n\n"
		"EXIT STATUS\n"
		"    0 success, 1 bad input (pattern, target, more ranks than slots), 2 usage error\n");
}

struct map_args {
	const char *pattern, *cart, *tleaf, *cluster, *hosts, *algo, *metric, *out;
	ctl_daemon_t d;
	double budget;
	unsigned seed;
	int json, per_pu;
};

static int usage_error(const char *fmt, const char *arg)
{
	return ctl_usage_error("map", fmt, arg);
}

static int parse_number(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return end == s || *end || errno ? -1 : 0;
}

/* Parses the options; returns -1 to go on, else the exit status. */
static int map_parse(int argc, char **argv, struct map_args *a)
{
	static const struct option opts[] = {
		{ "pattern", required_argument, NULL, 'p' },
		{ "cart", required_argument, NULL, 'c' },
		{ "topology", required_argument, NULL, 't' },
		{ "cluster", required_argument, NULL, 'C' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "per-pu", no_argument, NULL, 'P' },
		{ "algo", required_argument, NULL, 'a' },
		{ "metric", required_argument, NULL, 'm' },
		{ "budget", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 's' },
		{ "out", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'j' },
		CTL_DAEMON_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double v;
	int c;

	memset(a, 0, sizeof(*a));
	a->algo = "auto";
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (ctl_daemon_opt(&a->d, c, optarg))
			continue;
		switch (c) {
		case 'p': a->pattern = optarg; break;
		case 'c': a->cart = optarg; break;
		case 't': a->tleaf = optarg; break;
		case 'C': a->cluster = optarg; break;
		case 'H': a->hosts = optarg; break;
		case 'P': a->per_pu = 1; break;
		case 'a': a->algo = optarg; break;
		case 'm': a->metric = optarg; break;
		case 'o': a->out = optarg; break;
		case 'j': a->json = 1; break;
		case 'b':
			if (parse_number(optarg, &v) < 0 || !(v > 0))
				return usage_error("--budget: expected a positive number of milliseconds, not '%s'",
						   optarg);
			a->budget = v;
			break;
		case 's':
			if (parse_number(optarg, &v) < 0 || v < 0 || v > 4294967295.0 || v != (unsigned)v)
				return usage_error("--seed: expected a non-negative integer, not '%s'", optarg);
			a->seed = (unsigned)v;
			break;
		case 'h': map_usage(stdout); return 0;
		default: return usage_error("%s", "invalid option");
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!a->pattern == !a->cart)
		return usage_error("%s", "give exactly one of --pattern and --cart");
	if (ctl_daemon_set(&a->d) && (a->tleaf || a->cluster))
		return usage_error("%s", "--socket replaces --topology and --cluster (the daemon's model is used)");
	if (!a->tleaf && !a->cluster)
		ctl_daemon_env(&a->d);
	if (!ctl_daemon_set(&a->d) && !a->tleaf == !a->cluster)
		return usage_error("%s", "give exactly one of --topology and --cluster");
	if ((a->hosts || a->per_pu) && !a->cluster && !ctl_daemon_set(&a->d))
		return usage_error("%s", "--hosts and --per-pu need --cluster");
	return -1;
}

static int report_error(const rm_error_t *err, const char *what)
{
	return ctl_fail("map", err, what);
}

static map_graph_t *load_graph(const struct map_args *a, rm_error_t *err)
{
	map_metric_t metric = MAP_METRIC_DEFAULT;
	map_cart_t cart;

	if (a->metric && map_metric_parse(a->metric, &metric) < 0) {
		rm_error_set(err, "--metric", 0, 0, "unknown metric '%s' (bytes, messages, loggp)", a->metric);
		return NULL;
	}
	if (a->pattern)
		return map_graph_load(a->pattern, metric, err);
	if (map_cart_parse(a->cart, &cart, err) < 0)
		return NULL;
	return map_graph_cart(&cart, err);
}

/* ---- the summary object, from either path, and its renderings ----------------------------------- */

static json_t *breakdown_json(const topo_target_t *t, const double *traffic)
{
	json_t *arr = json_array();
	int l;

	for (l = 0; arr && l < t->nlevels; l++)
		json_array_append_new(arr, json_pack("{s:s, s:f, s:f}", "level",
						     t->level_name && t->level_name[l] ? t->level_name[l] : "",
						     "traffic", traffic[l], "distance", t->cost[l]));
	return arr;
}

/* The summary: ranks, slots, algo, engine, cost, identity_cost, improvement, time_ms (then target and
 * the breakdowns, added by the caller). New reference. */
static json_t *summary_new(const struct map_args *a, uint32_t ranks, size_t slots, const char *engine, double cost,
			   double idcost, double time_ms)
{
	return json_pack("{s:I, s:I, s:s, s:s, s:f, s:f, s:f, s:f}", "ranks", (json_int_t)ranks, "slots",
			 (json_int_t)slots, "algo", a->algo, "engine", engine, "cost", cost, "identity_cost", idcost,
			 "improvement", idcost > 0 ? 1 - cost / idcost : 0.0, "time_ms", time_ms);
}

static double num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static void print_text(FILE *f, const json_t *s)
{
	json_t *bd = json_object_get(s, "breakdown"), *id = json_object_get(s, "identity_breakdown"), *e;
	const char *tleaf = json_string_value(json_object_get(s, "target"));
	double cost = num(s, "cost"), idc = num(s, "identity_cost");
	size_t l;

	fprintf(f, "ranks %.0f, slots %.0f", num(s, "ranks"), num(s, "slots"));
	if (tleaf)
		fprintf(f, ", target %s", tleaf);
	fprintf(f, "\nengine %s: cost %.6g, identity %.6g (%+.1f%%), %.1f ms\n",
		json_string_value(json_object_get(s, "engine")), cost, idc, idc > 0 ? 100 * (cost / idc - 1) : 0.0,
		num(s, "time_ms"));
	fprintf(f, "%-16s %10s %14s %14s\n", "traffic by level", "distance", "mapped", "identity");
	json_array_foreach (bd, l, e) {
		const char *name = json_string_value(json_object_get(e, "level"));

		fprintf(f, "  %-14s %10.4g %14.6g %14.6g\n", name && *name ? name : "?", num(e, "distance"),
			num(e, "traffic"), num(json_array_get(id, l), "traffic"));
	}
}

/* Writes the permutation (--out) and prints the summary; returns the exit status. */
static int map_output(const struct map_args *a, const uint32_t *perm, uint32_t n, const json_t *summary)
{
	FILE *sum = a->out && !strcmp(a->out, "-") ? stderr : stdout;
	rm_error_t err;
	uint32_t i;

	rm_error_clear(&err);
	if (a->out && !strcmp(a->out, "-")) {
		for (i = 0; i < n; i++)
			printf("%u\n", perm[i]);
	} else if (a->out && map_perm_write(a->out, perm, n, &err) < 0) {
		return report_error(&err, a->out);
	}
	if (a->json) {
		json_dumpf(summary, sum, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', sum);
	} else {
		json_t *w;
		size_t i;

		json_array_foreach (json_object_get(summary, "warnings"), i, w)
			fprintf(stderr, "rankmapctl map: warning: %s\n", json_string_value(w));
		print_text(sum, summary);
	}
	return 0;
}

/* ---- offline ---------------------------------------------------------------------------------- */

/* Computes the mapping here; returns the exit status. */
static int map_run(const struct map_args *a, const map_graph_t *g, const topo_target_t *t, rm_error_t *err)
{
	map_options_t opt = { .time_budget_ms = a->budget, .seed = a->seed };
	uint32_t *perm = malloc(((size_t)g->n + 1) * sizeof(*perm)), *id = malloc(((size_t)g->n + 1) * sizeof(*id)), i;
	double *bd = calloc(t->nlevels, sizeof(double)), *idbd = calloc(t->nlevels, sizeof(double));
	char tleaf[1024];
	map_result_t res;
	json_t *s = NULL;
	int rc = 1;

	if (!perm || !id || !bd || !idbd)
		goto out;
	if (map_compute(a->algo, g, t, &opt, perm, &res, err) < 0) {
		rc = report_error(err, "map");
		goto out;
	}
	for (i = 0; i < g->n; i++)
		id[i] = i;
	map_breakdown(g, t, perm, bd);
	map_breakdown(g, t, id, idbd);
	if (!(s = summary_new(a, g->n, t->nslots, res.algo, res.cost, res.identity_cost, res.time_ms)))
		goto out;
	if (topo_target_tleaf_string(t, tleaf, sizeof(tleaf)) == 0)
		json_object_set_new(s, "target", json_string(tleaf));
	json_object_set_new(s, "breakdown", breakdown_json(t, bd));
	json_object_set_new(s, "identity_breakdown", breakdown_json(t, idbd));
	if (t->warning)
		json_object_set_new(s, "warnings", json_pack("[s]", t->warning));
	rc = map_output(a, perm, g->n, s);
out:
	json_decref(s);
	free(perm), free(id), free(bd), free(idbd);
	return rc;
}

static int map_offline(const struct map_args *a, const map_graph_t *g)
{
	rm_error_t err;
	topo_target_t *t;
	int rc;

	rm_error_clear(&err);
	t = ctl_load_target(a->tleaf, a->cluster, a->hosts, a->per_pu, &err);
	if (!t)
		rc = report_error(&err, a->tleaf ? "--topology" : a->cluster);
	else if (g->n > t->nslots)
		rc = (fprintf(stderr, "rankmapctl map: the pattern has %u ranks but the target only %u slots\n", g->n,
			      t->nslots),
		      1);
	else
		rc = map_run(a, g, t, &err);
	topo_target_destroy(t);
	return rc;
}

/* ---- through rankmapd ------------------------------------------------------------------------- */

/* The job's hosts for the daemon: --hosts expanded, else every host of its model with hardware. */
static json_t *remote_hosts(const struct map_args *a)
{
	json_t *list = json_array(), *resp, *h;
	rm_error_t err;
	char **names;
	size_t i, n = 0;

	rm_error_clear(&err);
	if (a->hosts) {
		if (!(names = hostlist_expand(a->hosts, &n, 0, &err)))
			return json_decref(list), report_error(&err, "--hosts"), NULL;
		for (i = 0; i < n; i++)
			json_array_append_new(list, json_string(names[i]));
		hostlist_free(names);
		return list;
	}
	if (!(resp = ctl_call("map", &a->d, rm_proto_request("hosts", 1), CTL_DAEMON_TIMEOUT_MS)))
		return json_decref(list), NULL;
	json_array_foreach (json_object_get(resp, "hosts"), i, h)
		if (json_integer_value(json_object_get(h, "pus")) > 0)
			json_array_append(list, json_object_get(h, "name"));
	json_decref(resp);
	if (!json_array_size(list)) {
		fprintf(stderr, "rankmapctl map: no host of rankmapd's model has hardware data\n");
		return json_decref(list), NULL;
	}
	return list;
}

/* The typed map request (rm_client.h) of the job's hosts (stolen). */
static json_t *map_request(const struct map_args *a, const map_graph_t *g, json_t *hosts)
{
	rm_map_request_t q = { .per_pu = a->per_pu, .engine = a->algo, .seed = a->seed, .breakdown = 1 };
	json_t *req;

	if (a->budget > 0)
		q.time_budget_ms = a->budget;
	req = ctl_map_request(a->pattern ? g : NULL, a->cart, hosts, "hosts", &q);
	json_decref(hosts);
	return req;
}

static int map_remote(const struct map_args *a, const map_graph_t *g)
{
	json_t *hosts = remote_hosts(a), *resp, *s, *p;
	uint32_t *perm;
	size_t i;
	int rc = 1;

	if (!hosts || !(resp = ctl_call("map", &a->d, map_request(a, g, hosts), CTL_DAEMON_TIMEOUT_MS)))
		return 1;
	p = json_object_get(resp, "permutation");
	s = summary_new(a, g->n, json_array_size(json_object_get(resp, "slots")),
			json_string_value(json_object_get(resp, "algorithm")) ?: "?", num(resp, "cost"),
			num(resp, "identity_cost"), num(resp, "time_ms"));
	if (s && json_object_get(resp, "target"))
		json_object_set(s, "target", json_object_get(resp, "target"));
	json_object_set(s, "breakdown", json_object_get(resp, "breakdown"));
	json_object_set(s, "identity_breakdown", json_object_get(resp, "identity_breakdown"));
	if (json_array_size(json_object_get(resp, "warnings")))
		json_object_set(s, "warnings", json_object_get(resp, "warnings"));
	if (s && json_array_size(p) == g->n && (perm = calloc((size_t)g->n + 1, sizeof(*perm)))) {
		for (i = 0; i < g->n; i++)
			perm[i] = (uint32_t)json_integer_value(json_array_get(p, i));
		rc = map_output(a, perm, g->n, s);
		free(perm);
	} else {
		fprintf(stderr, "rankmapctl map: rankmapd at %s sent a malformed answer\n", ctl_daemon_name(&a->d));
	}
	json_decref(s);
	json_decref(resp);
	return rc;
}

int ctl_map_main(int argc, char **argv)
{
	struct map_args a;
	map_graph_t *g = NULL;
	rm_error_t err;
	int rc = map_parse(argc, argv, &a);

	if (rc >= 0)
		return rc;
	if (!map_algorithm_find(a.algo))
		return ctl_usage_error("map", "unknown --algo '%s' (%s)", a.algo, map_algorithm_list());
	rm_error_clear(&err);
	g = load_graph(&a, &err);
	if (!g)
		return report_error(&err, a.pattern ? a.pattern : "--cart");
	rc = ctl_daemon_set(&a.d) ? map_remote(&a, g) : map_offline(&a, g);
	map_graph_destroy(g);
	return rc;
}
