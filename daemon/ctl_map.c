/*
 * daemon/ctl_map.c: `rankmapctl map`, maps a communication pattern onto slots offline and writes the
 * permutation (one line per rank: the slot of rank i), with the cost against the identity.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
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
		"                   [--out PERM] [--json]\n\n"
		"DESCRIPTION\n"
		"    Chooses which slot each MPI rank runs on so that heavy traffic stays close in the\n"
		"    machine, and reports the cost (sum over rank pairs of traffic x distance) beside the\n"
		"    unreordered placement (rank i on slot i). The result is always a bijection onto\n"
		"    distinct slots and never costs more than the unreordered placement.\n\n"
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
		"    --algo NAME         treematch  TreeMatch (Jeannot-Mercier), bottom-up grouping over the\n"
		"                                   levels of the target\n"
		"                        scotch     Scotch 7 static mapping (default strategy), repaired\n"
		"                                   into one rank per slot\n"
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
		"                        breakdown and identity_breakdown (traffic per level)\n"
		"    -h, --help          this text\n\n"
		"EXAMPLES\n"
		"    rankmapctl map --cart 8x4:1,1:10,1 --topology 'tleaf 4 2 14 2 10 2 2 4 1' --json\n"
		"    rankmapctl map --pattern app.mtx --metric messages --cluster /etc/rankmap/cluster.conf \\\n"
		"                   --hosts 'node[01-08]' --algo auto --out app.perm\n\n"
		"EXIT STATUS\n"
		"    0 success, 1 bad input (pattern, target, more ranks than slots), 2 usage error\n");
}

struct map_args {
	const char *pattern, *cart, *tleaf, *cluster, *hosts, *algo, *metric, *out;
	double budget;
	unsigned seed;
	int json, per_pu;
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "rankmapctl map: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'rankmapctl map --help'.\n");
	return 2;
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
		{ "pattern", required_argument, NULL, 'p' }, { "cart", required_argument, NULL, 'c' },
		{ "topology", required_argument, NULL, 't' }, { "cluster", required_argument, NULL, 'C' },
		{ "hosts", required_argument, NULL, 'H' },   { "per-pu", no_argument, NULL, 'P' },
		{ "algo", required_argument, NULL, 'a' },    { "metric", required_argument, NULL, 'm' },
		{ "budget", required_argument, NULL, 'b' },  { "seed", required_argument, NULL, 's' },
		{ "out", required_argument, NULL, 'o' },     { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },          { NULL, 0, NULL, 0 },
	};
	double v;
	int c;

	memset(a, 0, sizeof(*a));
	a->algo = "auto";
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
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
				return usage_error("--budget: expected a positive number of milliseconds, not '%s'", optarg);
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
	if (!a->tleaf == !a->cluster)
		return usage_error("%s", "give exactly one of --topology and --cluster");
	if ((a->hosts || a->per_pu) && !a->cluster)
		return usage_error("%s", "--hosts and --per-pu need --cluster");
	return -1;
}

static int report_error(const rm_error_t *err, const char *what)
{
	char buf[640];

	if (rm_error_isset(err))
		fprintf(stderr, "rankmapctl map: %s\n", rm_error_format(err, buf, sizeof(buf)));
	else
		fprintf(stderr, "rankmapctl map: %s: %s\n", what, strerror(errno));
	return 1;
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

/* The names of the job's hosts: the expanded --hosts list, or every host with hardware data. */
static char **job_hosts(topo_cluster_t c, const char *list, size_t *n, rm_error_t *err)
{
	size_t h, k = 0, nh = topo_nhosts(c);
	char **names;

	if (list)
		return hostlist_expand(list, n, 0, err);
	names = calloc(nh + 1, sizeof(*names));
	for (h = 0; names && h < nh; h++) {
		if (topo_host_npus(c, h) == 0)
			continue;
		names[k] = strdup(topo_host_name(c, h));
		if (!names[k++]) {
			hostlist_free(names);
			return NULL;
		}
	}
	if (names && k == 0) {
		rm_error_set(err, "--cluster", 0, 0, "no host of the cluster has hardware data");
		hostlist_free(names);
		return NULL;
	}
	*n = k;
	return names;
}

static topo_target_t *load_target(const struct map_args *a, rm_error_t *err)
{
	topo_cluster_t c;
	topo_target_t *t = NULL;
	char **names = NULL;
	size_t n = 0;

	if (a->tleaf)
		return topo_target_from_tleaf(a->tleaf, err);
	c = topo_cluster_create();
	if (!c)
		return NULL;
	if (topo_load_cluster_file(c, a->cluster, err) == 0 && topo_cluster_finalize(c, err) == 0)
		names = job_hosts(c, a->hosts, &n, err);
	if (names)
		t = topo_target_from_hosts(c, (const char *const *)names, n, !a->per_pu, err);
	hostlist_free(names);
	topo_cluster_destroy(c);
	return t;
}

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

static void print_json(FILE *f, const struct map_args *a, const map_graph_t *g, const topo_target_t *t,
		       const map_result_t *res, const double *bd, const double *idbd)
{
	char tleaf[1024];
	json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:f, s:f, s:f, s:f}", "ranks", (json_int_t)g->n, "slots",
			      (json_int_t)t->nslots, "algo", a->algo, "engine", res->algo, "cost", res->cost,
			      "identity_cost", res->identity_cost, "improvement",
			      res->identity_cost > 0 ? 1 - res->cost / res->identity_cost : 0.0, "time_ms",
			      res->time_ms);

	if (!o)
		return;
	if (topo_target_tleaf_string(t, tleaf, sizeof(tleaf)) == 0)
		json_object_set_new(o, "target", json_string(tleaf));
	json_object_set_new(o, "breakdown", breakdown_json(t, bd));
	json_object_set_new(o, "identity_breakdown", breakdown_json(t, idbd));
	json_dumpf(o, f, JSON_COMPACT);
	fputc('\n', f);
	json_decref(o);
}

static void print_text(FILE *f, const map_graph_t *g, const topo_target_t *t, const map_result_t *res,
		       const double *bd, const double *idbd)
{
	char tleaf[1024];
	int l;

	fprintf(f, "ranks %u, slots %u", g->n, t->nslots);
	if (topo_target_tleaf_string(t, tleaf, sizeof(tleaf)) == 0)
		fprintf(f, ", target %s", tleaf);
	fprintf(f, "\nengine %s: cost %.6g, identity %.6g (%+.1f%%), %.1f ms\n", res->algo, res->cost,
		res->identity_cost, res->identity_cost > 0 ? 100 * (res->cost / res->identity_cost - 1) : 0.0,
		res->time_ms);
	fprintf(f, "%-16s %10s %14s %14s\n", "traffic by level", "distance", "mapped", "identity");
	for (l = 0; l < t->nlevels; l++)
		fprintf(f, "  %-14s %10.4g %14.6g %14.6g\n", t->level_name && t->level_name[l] ? t->level_name[l] : "?",
			t->cost[l], bd[l], idbd[l]);
}

/* Computes, writes and reports the mapping; returns the exit status. */
static int map_run(const struct map_args *a, const map_graph_t *g, const topo_target_t *t, rm_error_t *err)
{
	map_options_t opt = { .time_budget_ms = a->budget, .seed = a->seed };
	uint32_t *perm = malloc(((size_t)g->n + 1) * sizeof(*perm)), i;
	double *bd = calloc(t->nlevels, sizeof(double)), *idbd = calloc(t->nlevels, sizeof(double));
	FILE *sum = a->out && !strcmp(a->out, "-") ? stderr : stdout;
	map_result_t res;
	int rc = 1;

	if (!perm || !bd || !idbd)
		goto out;
	if (map_compute(a->algo, g, t, &opt, perm, &res, err) < 0) {
		rc = report_error(err, "map");
		goto out;
	}
	if (a->out && !strcmp(a->out, "-")) {
		for (i = 0; i < g->n; i++)
			printf("%u\n", perm[i]);
	} else if (a->out && map_perm_write(a->out, perm, g->n, err) < 0) {
		rc = report_error(err, a->out);
		goto out;
	}
	map_breakdown(g, t, perm, bd);
	for (i = 0; i < g->n; i++)
		perm[i] = i;
	map_breakdown(g, t, perm, idbd);
	if (a->json)
		print_json(sum, a, g, t, &res, bd, idbd);
	else
		print_text(sum, g, t, &res, bd, idbd);
	rc = 0;
out:
	free(perm), free(bd), free(idbd);
	return rc;
}

static int algo_known(const char *name)
{
	const char *const *names = map_algorithms();

	for (; *names; names++)
		if (!strcmp(*names, name))
			return 1;
	return 0;
}

int ctl_map_main(int argc, char **argv)
{
	struct map_args a;
	map_graph_t *g = NULL;
	topo_target_t *t = NULL;
	rm_error_t err;
	int rc = map_parse(argc, argv, &a);

	if (rc >= 0)
		return rc;
	if (!algo_known(a.algo))
		return usage_error("unknown --algo '%s' (treematch, scotch, bisect, refine, auto, identity)", a.algo);
	rm_error_clear(&err);
	g = load_graph(&a, &err);
	if (!g)
		return report_error(&err, a.pattern ? a.pattern : "--cart");
	t = load_target(&a, &err);
	if (!t)
		rc = report_error(&err, a.tleaf ? "--topology" : a.cluster);
	else if (g->n > t->nslots)
		rc = (fprintf(stderr, "rankmapctl map: the pattern has %u ranks but the target only %u slots\n", g->n,
			      t->nslots),
		      1);
	else
		rc = map_run(&a, g, t, &err);
	topo_target_destroy(t);
	map_graph_destroy(g);
	return rc;
}
