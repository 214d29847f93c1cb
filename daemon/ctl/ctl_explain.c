/*
 * daemon/ctl/ctl_explain.c: `rankmapctl explain`: where a job's traffic flows before reordering (rank i on
 * slot i) and after (a given permutation, or one computed with --algo), by level of the machine:
 * inside one socket, inside one node across sockets, under one leaf switch across nodes, and through
 * the spines (or higher network levels). Numbers come from map_breakdown() over the target's levels.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_common.h"
#include "mapping.h"
#include "topo.h"

static void ex_usage(FILE *f)
{
	fprintf(f,
		"NAME\n"
		"    rankmapctl explain - show where a job's traffic flows, before and after reordering\n\n"
		"SYNOPSIS\n"
		"    rankmapctl explain --pattern FILE (--cluster FILE --hosts LIST | --topology 'tleaf ...')\n"
		"                       [--perm FILE | --algo NAME] [--metric METRIC] [--per-pu] [--json]\n\n"
		"DESCRIPTION\n"
		"    Splits the job's communication volume by the deepest level of the machine each rank pair\n"
		"    shares: the same socket (package, and below: cache, core), the same node across sockets,\n"
		"    the same leaf switch (or torus router) across nodes, and above the leaf switches (spines,\n"
		"    core switches, several torus hops). It does so for the unreordered placement (rank i on\n"
		"    slot i, as the job's slots come in --hosts order, one slot per core) and for the\n"
		"    reordered one: the permutation in --perm (one line per rank: its slot, as written by\n"
		"    rankmapctl map --out), or else the one --algo computes (default auto). Traffic leaving\n"
		"    the leaf switches is what competes for the fabric's uplinks; moving it down is the point\n"
		"    of reordering.\n\n"
		"OPTIONS\n"
		"    --pattern FILE      communication pattern: Matrix Market (one weight column, or bytes\n"
		"                        then messages as the rankmap tracer writes) or TreeMatch dense text\n"
		"    --cluster FILE      the machine (see rankmapctl report); with --hosts LIST, the job's\n"
		"                        hosts in order (Slurm host list, e.g. node[01-04])\n"
		"    --topology TLEAF    a Scotch tree leaf instead of a cluster: 'tleaf N a1 c1 ... aN cN'\n"
		"                        (its levels have no kind: traffic is shown per level only)\n"
		"    --perm FILE         the reordered placement to explain\n"
		"    --algo NAME         compute it: treematch, scotch, refine, auto (default), identity\n"
		"    --metric METRIC     bytes (default: first weight column), messages, loggp\n"
		"    --per-pu            one slot per PU (hardware thread) instead of per core\n"
		"    --json              one JSON object: ranks, slots, metric, algo, levels [{level, kind,\n"
		"                        class, before, after}], classes {socket, node, leaf, above: {before,\n"
		"                        after, before_percent, after_percent}}, total\n"
		"    -h, --help          this text\n\n"
		"EXAMPLES\n"
		"    rankmapctl explain --pattern app.mtx --cluster /etc/rankmap/cluster.conf \\\n"
		"                       --hosts 'node[01-08]' --perm app.perm\n"
		"    rankmapctl explain --pattern app.mtx --topology 'tleaf 3 4 100 2 10 8 1' --algo scotch\n\n"
		"EXIT STATUS\n"
		"    0 success, 1 bad input (pattern, permutation, target), 2 usage error\n");
}

struct ex_args {
	const char *pattern, *cluster, *hosts, *tleaf, *perm, *algo, *metric;
	int json, per_pu;
};

static int ex_usage_error(const char *fmt, const char *arg)
{
	return ctl_usage_error("explain", fmt, arg);
}

static int ex_parse(int argc, char **argv, struct ex_args *a)
{
	static const struct option lo[] = {
		{ "pattern", required_argument, NULL, 'p' }, { "cluster", required_argument, NULL, 'C' },
		{ "hosts", required_argument, NULL, 'H' },   { "topology", required_argument, NULL, 't' },
		{ "perm", required_argument, NULL, 'P' },    { "algo", required_argument, NULL, 'a' },
		{ "metric", required_argument, NULL, 'm' },  { "per-pu", no_argument, NULL, 'u' },
		{ "json", no_argument, NULL, 'j' },          { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	memset(a, 0, sizeof(*a));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'p': a->pattern = optarg; break;
		case 'C': a->cluster = optarg; break;
		case 'H': a->hosts = optarg; break;
		case 't': a->tleaf = optarg; break;
		case 'P': a->perm = optarg; break;
		case 'a': a->algo = optarg; break;
		case 'm': a->metric = optarg; break;
		case 'u': a->per_pu = 1; break;
		case 'j': a->json = 1; break;
		case 'h': ex_usage(stdout); return 0;
		default: return ex_usage_error("%s", "invalid option");
		}
	}
	if (optind < argc)
		return ex_usage_error("unexpected argument '%s'", argv[optind]);
	if (!a->pattern)
		return ex_usage_error("%s", "--pattern is required");
	if (!a->tleaf == !a->cluster)
		return ex_usage_error("%s", "give exactly one of --cluster (with --hosts) and --topology");
	if (a->cluster && !a->hosts)
		return ex_usage_error("%s", "--cluster needs --hosts LIST (the job's hosts, in order)");
	if ((a->hosts || a->per_pu) && !a->cluster)
		return ex_usage_error("%s", "--hosts and --per-pu need --cluster");
	if (a->perm && a->algo)
		return ex_usage_error("%s", "give --perm or --algo, not both");
	return -1;
}

/* The after-placement: read from --perm (checked against the pattern and the target) or computed. */
static int ex_perm(const struct ex_args *a, const map_graph_t *g, const topo_target_t *t, uint32_t *perm,
		   char *algo, size_t algolen, rm_error_t *err)
{
	map_result_t res;
	uint32_t n = 0, *p;

	if (!a->perm) {
		if (map_compute(a->algo ? a->algo : "auto", g, t, NULL, perm, &res, err) < 0)
			return -1;
		snprintf(algo, algolen, "%s", res.algo);
		return 0;
	}
	if (!(p = map_perm_read(a->perm, &n, err)))
		return -1;
	if (n != g->n || map_check_perm(p, n, t->nslots) < 0) {
		rm_error_set(err, a->perm, 0, 0, "%u lines: not a placement of the pattern's %u ranks on distinct "
			     "slots below %u", n, g->n, t->nslots);
		free(p);
		return -1;
	}
	memcpy(perm, p, (size_t)n * sizeof(*perm));
	free(p);
	snprintf(algo, algolen, "file %s", a->perm);
	return 0;
}

/* ---- classes and output ------------------------------------------------------------------------- */

enum { CL_SOCKET, CL_NODE, CL_LEAF, CL_ABOVE, CL_COUNT, CL_NONE = -1 };
static const char *const class_name[CL_COUNT] = { "socket", "node", "leaf", "above" };
static const char *const class_text[CL_COUNT] = { "inside one socket", "inside one node, across sockets",
						  "under one leaf switch, across nodes",
						  "above the leaf switches (spines and up)" };

/* Class of traffic whose deepest shared level is l (CL_NONE for levels without a kind). */
static int level_class(const topo_target_t *t, int l)
{
	switch (t->kind[l]) {
	case TOPO_LEVEL_ROOT:
		return t->nlevels > 1 && t->kind[1] == TOPO_LEVEL_OTHER ? CL_NONE : CL_ABOVE;
	case TOPO_LEVEL_NETWORK:
		return l + 1 < t->nlevels && t->kind[l + 1] == TOPO_LEVEL_HOST ? CL_LEAF : CL_ABOVE;
	case TOPO_LEVEL_HOST:
		return CL_NODE;
	case TOPO_LEVEL_PACKAGE:
	case TOPO_LEVEL_NUMA:
	case TOPO_LEVEL_CACHE:
	case TOPO_LEVEL_CORE:
	case TOPO_LEVEL_PU:
		return CL_SOCKET;
	default:
		return CL_NONE;
	}
}

static double pct(double part, double total)
{
	return total > 0 ? 100.0 * part / total : 0.0;
}

struct ex_result {
	double *before, *after;      /* per level */
	double cb[CL_COUNT], ca[CL_COUNT], total;
	int classed;                 /* the target's levels have kinds */
	char algo[160];
	const char *metric;
};

static void ex_print_json(const map_graph_t *g, const topo_target_t *t, const struct ex_result *r)
{
	json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:f}", "ranks", (json_int_t)g->n, "slots", (json_int_t)t->nslots,
			      "metric", r->metric, "algo", r->algo, "total", r->total);
	json_t *lv = json_array(), *cl = json_object();
	int l, k;

	for (l = 0; l < t->nlevels; l++) {
		k = level_class(t, l);
		json_array_append_new(lv, json_pack("{s:s, s:s, s:f, s:f, s:f, s:f}", "level",
						    t->level_name[l] ? t->level_name[l] : "", "class",
						    k == CL_NONE ? "" : class_name[k], "before", r->before[l], "after",
						    r->after[l], "before_percent", pct(r->before[l], r->total),
						    "after_percent", pct(r->after[l], r->total)));
	}
	for (k = 0; r->classed && k < CL_COUNT; k++)
		json_object_set_new(cl, class_name[k],
				    json_pack("{s:f, s:f, s:f, s:f}", "before", r->cb[k], "after", r->ca[k], "before_percent",
					      pct(r->cb[k], r->total), "after_percent", pct(r->ca[k], r->total)));
	json_object_set_new(o, "levels", lv);
	json_object_set_new(o, "classes", cl);
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(o);
}

static void ex_print_text(const map_graph_t *g, const topo_target_t *t, const struct ex_result *r)
{
	int l, k;

	printf("%u ranks on %u slots; traffic in %s, total %.6g\n", g->n, t->nslots, r->metric, r->total);
	printf("before: rank i on slot i; after: %s\n\n", r->algo);
	if (r->classed) {
		printf("  %-42s %14s %7s %14s %7s\n", "WHERE THE TRAFFIC FLOWS", "BEFORE", "%", "AFTER", "%");
		for (k = 0; k < CL_COUNT; k++)
			printf("  %-42s %14.6g %6.1f%% %14.6g %6.1f%%\n", class_text[k], r->cb[k], pct(r->cb[k], r->total),
			       r->ca[k], pct(r->ca[k], r->total));
		putchar('\n');
	}
	printf("  %-12s %-8s %14s %7s %14s %7s\n", "LEVEL", "CLASS", "BEFORE", "%", "AFTER", "%");
	for (l = 0; l < t->nlevels; l++) {
		k = level_class(t, l);
		printf("  %-12s %-8s %14.6g %6.1f%% %14.6g %6.1f%%\n", t->level_name[l] ? t->level_name[l] : "?",
		       k == CL_NONE ? "-" : class_name[k], r->before[l], pct(r->before[l], r->total), r->after[l],
		       pct(r->after[l], r->total));
	}
}

static int ex_run(const struct ex_args *a, const map_graph_t *g, const topo_target_t *t, rm_error_t *err)
{
	struct ex_result r = { .metric = a->metric && strcmp(a->metric, "bytes") ? a->metric : "bytes" };
	uint32_t *perm = malloc(((size_t)g->n + 1) * sizeof(*perm)), i;
	int l, k, rc = -1;

	r.before = calloc((size_t)t->nlevels, sizeof(double));
	r.after = calloc((size_t)t->nlevels, sizeof(double));
	if (!perm || !r.before || !r.after) {
		rm_error_set(err, "explain", 0, 0, "out of memory");
		goto out;
	}
	for (i = 0; i < g->n; i++)
		perm[i] = i;
	map_breakdown(g, t, perm, r.before);
	if (ex_perm(a, g, t, perm, r.algo, sizeof(r.algo), err) < 0)
		goto out;
	map_breakdown(g, t, perm, r.after);
	r.classed = 1;
	for (l = 0; l < t->nlevels; l++) {
		r.total += r.before[l];
		k = level_class(t, l);
		if (k == CL_NONE) {
			r.classed = 0;
			continue;
		}
		r.cb[k] += r.before[l];
		r.ca[k] += r.after[l];
	}
	if (a->json)
		ex_print_json(g, t, &r);
	else
		ex_print_text(g, t, &r);
	rc = fflush(stdout) ? -1 : 0;
out:
	free(perm);
	free(r.before);
	free(r.after);
	return rc;
}

int ctl_explain_main(int argc, char **argv)
{
	struct ex_args a;
	map_metric_t metric = MAP_METRIC_BYTES;
	map_graph_t *g = NULL;
	topo_target_t *t = NULL;
	rm_error_t err;
	char buf[RM_ERROR_SOURCE_LEN + RM_ERROR_TEXT_LEN + 32];
	int rc = ex_parse(argc, argv, &a);

	if (rc >= 0)
		return rc;
	if (a.metric && map_metric_parse(a.metric, &metric) < 0)
		return ex_usage_error("unknown --metric '%s' (bytes, messages, loggp)", a.metric);
	rm_error_clear(&err);
	rc = 1;
	if (!(g = map_graph_load(a.pattern, metric, &err)) || !(t = ctl_load_target(a.tleaf, a.cluster, a.hosts, a.per_pu, &err)))
		fprintf(stderr, "rankmapctl explain: %s\n", rm_error_format(&err, buf, sizeof(buf)));
	else if (g->n > t->nslots)
		fprintf(stderr, "rankmapctl explain: the pattern has %u ranks but the job only %u slots\n", g->n,
			t->nslots);
	else if (ex_run(&a, g, t, &err) < 0)
		fprintf(stderr, "rankmapctl explain: %s\n", rm_error_format(&err, buf, sizeof(buf)));
	else
		rc = 0;
	topo_target_destroy(t);
	map_graph_destroy(g);
	return rc;
}
