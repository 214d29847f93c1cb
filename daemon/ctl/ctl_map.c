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
		"    rankmapctl map - map a communication matrix onto a job's slots\n\n"
		"SYNOPSIS\n"
		"    rankmapctl map (--matrix FILE | --cart DIMS[:PERIODS[:WEIGHTS]])\n"
		"                   [--topology 'tleaf ...' | --cluster FILE | --server LIST]\n"
		"                   [--hosts LIST] [--per-pu | --slots core|gpu] [--engine NAME] [--metric METRIC]\n"
		"                   [--budget MS] [--seed N] [--out PERM] [--rankfile FILE]\n"
		"                   [--slurm-hostfile FILE] [-j|--json] [-t|--timeout MS] [--progress]\n\n"
		"DESCRIPTION\n"
		"    Chooses which slot each MPI rank runs on so that heavy traffic stays close in the\n"
		"    machine, and reports the cost (sum over rank pairs of traffic x distance) beside the\n"
		"    unreordered placement (rank i on slot i). The result is always a bijection onto\n"
		"    distinct slots and never costs more than the unreordered placement. Among placements\n"
		"    of equal cost, it is the one whose rank order follows the slot order (groups of slots\n"
		"    sorted by the smallest rank they hold, where that costs nothing), whatever the engine.\n"
		"    Without --topology and --cluster, rankmapd maps (its model of the cluster is used):\n"
		"    at --server, else $RANKMAP_SERVER, else $RANKMAP_SOCKET, else " RM_SOCKET_DEFAULT
		".\n\n"
		"OPTIONS\n"
		"    --matrix FILE       the communication matrix (traffic between ranks; --pattern is its\n"
		"                        old name): Matrix Market, coordinate or array, general or symmetric,\n"
		"                        real, integer or pattern (keywords in any case; rows are sending\n"
		"                        ranks, 1-based; a general matrix's two directions are summed, a\n"
		"                        symmetric one's value is the pair's), as RANKMAP_TRACE writes it\n"
		"                        (message counts in the file its '%% rankmap-messages:' header\n"
		"                        names; rankmap's older two-column traces are read too), or\n"
		"                        TreeMatch's dense text (N lines of N numbers)\n"
		"    --cart SPEC         a Cartesian halo exchange instead: DIMS as 8x4x2, PERIODS as\n"
		"                        1,1,0 (default all periodic), WEIGHTS as 10,1,1 per dimension\n"
		"                        (default 1); ranks in MPI row-major order\n"
		"    --topology TLEAF    the slots as a Scotch tree leaf: 'tleaf N a1 c1 ... aN cN' (N\n"
		"                        levels, arity a_i, cost c_i between slots that first differ at\n"
		"                        level i), e.g. 'tleaf 3 8 100 2 10 4 1'\n"
		"    --cluster FILE      the slots from a cluster description (hwloc, InfiniBand, torus;\n"
		"                        see rankmapctl report); one slot per core\n"
		"    --hosts LIST        with --cluster or the daemon: the job's hosts as a Slurm host list,\n"
		"                        in order (node[01-04],login1); default every host with hardware data\n"
		"    --per-pu            one slot per PU (hardware thread) instead of per core\n"
		"    --slots KIND        core (one slot per core, the default unless the cluster file says\n"
		"                        `slots = gpu`) or gpu: one slot per GPU of the hosts, costs from\n"
		"                        the GPU links and NICs (topo/COST-GPU.md); each rank's line names\n"
		"                        its host, GPU, PCI bus id and nearest cores (the PUs to bind to)\n"
		"    --engine NAME       (--algo is its old name)\n"
		"                        treematch  TreeMatch (Jeannot-Mercier), bottom-up grouping over the\n"
		"                                   levels of the target\n"
		"                        scotch     Scotch 7 static mapping (default strategy), repaired\n"
		"                                   into one rank per slot; at most 8,192 ranks (beyond,\n"
		"                                   an error: its CPU time grows as n^2 there)\n"
		"                        bisect     recursive bipartitioning along the target tree\n"
		"                        refine     local search from the identity\n"
		"                        auto       the above within the budget, refined, best kept (default)\n"
		"                        identity   rank i on slot i\n"
		"    --metric METRIC     which weight of a matrix with message counts: bytes (default),\n"
		"                        messages, or loggp (messages x (L + 2o) + bytes x G, DDR InfiniBand)\n"
		"    --budget MS         time budget of auto and refine, in CPU milliseconds of all their\n"
		"                        threads together, at most 60000. Default, when rankmapctl maps\n"
		"                        (--topology, --cluster): 0.025 ms per rank up to 512 ranks, 0.04\n"
		"                        above, at least 100 ms, 0.06 from 4,096 ranks, at most 1 s (the\n"
		"                        offline default; the same as a job's from 2,500 to 4,095 ranks\n"
		"                        and from 25,000). Through rankmapd: rankmapd's\n"
		"                        default, which is a job's (as the MPI library's and SPANK's: the\n"
		"                        same rule at least 2 ms instead of 100). Given more than twice a\n"
		"                        job's default (and at least 20 ms), auto spends the rest in its\n"
		"                        quality mode: multilevel constructions (hierarchical multisection)\n"
		"                        and swap searches with several seeds on the machine's cores, the\n"
		"                        cheapest kept; never worse than at a job's default budget\n"
		"    --seed N            seed of the randomised steps (default 0); results are\n"
		"                        reproducible for a seed unless the budget cuts the search\n"
		"    --out PERM          write the permutation there ('-': standard output, and the\n"
		"                        summary goes to standard error)\n"
		"    --rankfile FILE     write an Open MPI rankfile (mpirun(1) --rankfile): 'rank R=HOST\n"
		"                        slot=N', N the logical core of HOST (with --per-pu the logical\n"
		"                        hardware thread: run mpirun with --use-hwthread-cpus)\n"
		"    --slurm-hostfile FILE  write a Slurm host list: line R is rank R's host, for\n"
		"                        SLURM_HOSTFILE=FILE srun --distribution=arbitrary (binding within\n"
		"                        the host is left to Slurm's --cpu-bind)\n"
		"  -j, --json              print the summary as one JSON object: ranks, slots, engine (the\n"
		"                          engine that produced the result: what auto chose; the requested\n"
		"                          'algo' key of older versions is gone), cost, identity_cost,\n"
		"                          improvement, time_ms, target, breakdown and identity_breakdown\n"
		"                          (traffic per level), and warnings (strings) when there are "
		"any\n" CTL_DAEMON_HELP
		"  -h, --help              this text\n\n"
		"EXAMPLES\n"
		"    rankmapctl map --cart 8x4:1,1:10,1 --topology 'tleaf 4 2 14 2 10 2 2 4 1' --json\n"
		"    rankmapctl map --matrix app.mtx --metric messages --cluster /etc/rankmap/cluster.conf \\\n"
		"                   --hosts 'node[01-08]' --engine auto --out app.perm --rankfile app.rf\n"
		"    rankmapctl map --matrix app.mtx --hosts \"$SLURM_JOB_NODELIST\" --slurm-hostfile hosts\n"
		"    SLURM_HOSTFILE=hosts srun --distribution=arbitrary -n 64 ./app\n\n"
		"WARNINGS\n"
		"    Hosts that no InfiniBand subnet joins (the job spans unconnected subnets) are\n"
		"    mapped with a warning naming such a pair (on standard error, or in --json's\n"
		"    warnings); traffic between them is costed at twice the largest network distance\n"
		"    of the job's hosts, so heavy traffic stays within each connected group.\n\n"
		"EXIT STATUS\n"
		"    0 success, 1 bad input (matrix, target, more ranks than slots), 2 usage error\n");
}

struct map_args {
	const char *pattern, *cart, *tleaf, *cluster, *hosts, *algo, *metric, *out, *rankfile, *hostfile, *slots;
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
		{ "matrix", required_argument, NULL, 'p' },   { "pattern", required_argument, NULL, 'p' },
		{ "cart", required_argument, NULL, 'c' },     { "topology", required_argument, NULL, 'T' },
		{ "cluster", required_argument, NULL, 'C' },  { "hosts", required_argument, NULL, 'H' },
		{ "per-pu", no_argument, NULL, 'P' },         { "slots", required_argument, NULL, 'K' },
		{ "engine", required_argument, NULL, 'a' },   { "algo", required_argument, NULL, 'a' },
		{ "metric", required_argument, NULL, 'm' },   { "budget", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 'S' },     { "out", required_argument, NULL, 'o' },
		{ "rankfile", required_argument, NULL, 'R' }, { "slurm-hostfile", required_argument, NULL, 'F' },
		{ "json", no_argument, NULL, 'j' },           CTL_DAEMON_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },           { NULL, 0, NULL, 0 },
	};
	double v;
	int c;

	memset(a, 0, sizeof(*a));
	a->algo = "auto";
	optind = 1;
	while ((c = getopt_long(argc, argv, CTL_SHORTOPTS "j", opts, NULL)) != -1) {
		if (ctl_daemon_opt(&a->d, c, optarg, "map"))
			continue;
		switch (c) {
		case 'p': a->pattern = optarg; break;
		case 'c': a->cart = optarg; break;
		case 'T': a->tleaf = optarg; break;
		case 'C': a->cluster = optarg; break;
		case 'H': a->hosts = optarg; break;
		case 'P': a->per_pu = 1; break;
		case 'K':
			if (strcmp(optarg, "core") && strcmp(optarg, "gpu"))
				return usage_error("--slots: expected core or gpu, not '%s'", optarg);
			a->slots = optarg;
			break;
		case 'a': a->algo = optarg; break;
		case 'm': a->metric = optarg; break;
		case 'o': a->out = optarg; break;
		case 'R': a->rankfile = optarg; break;
		case 'F': a->hostfile = optarg; break;
		case 'j': a->json = 1; break;
		case 'b':
			if (parse_number(optarg, &v) < 0 || !(v > 0))
				return usage_error("--budget: expected a positive number of milliseconds, not '%s'",
						   optarg);
			if (v > MAP_MAX_BUDGET_MS)
				return usage_error("--budget: at most 60000 ms (one minute), not '%s'", optarg);
			a->budget = v;
			break;
		case 'S':
			if (parse_number(optarg, &v) < 0 || v < 0 || v > 4294967295.0 || v != (unsigned)v)
				return usage_error("--seed: expected a non-negative integer, not '%s'", optarg);
			a->seed = (unsigned)v;
			break;
		case 'h': map_usage(stdout); return 0;
		default: return ctl_usage_hint("map");
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!a->pattern == !a->cart)
		return usage_error("%s", "give exactly one of --matrix and --cart");
	if (ctl_daemon_set(&a->d) && (a->tleaf || a->cluster))
		return usage_error("%s", "--server replaces --topology and --cluster (the daemon's model is used)");
	if (a->tleaf && a->cluster)
		return usage_error("%s", "give one of --topology, --cluster and --server");
	if (!a->tleaf && !a->cluster)
		ctl_daemon_default(&a->d);
	if (a->per_pu && a->slots && !strcmp(a->slots, "gpu"))
		return usage_error("%s", "--per-pu and --slots gpu exclude each other");
	if ((a->hosts || a->per_pu || a->slots) && a->tleaf)
		return usage_error("%s", "--hosts, --per-pu and --slots need --cluster or the daemon, not --topology");
	if ((a->rankfile || a->hostfile) && a->tleaf)
		return usage_error(
			"%s", "--rankfile and --slurm-hostfile need hosts: --cluster or the daemon, not --topology");
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

/* The summary: ranks, slots, engine (the one that produced the result: what auto chose), cost,
 * identity_cost, improvement, time_ms (then target and the breakdowns, added by the caller). New
 * reference. */
static json_t *summary_new(const struct map_args *a, uint32_t ranks, size_t slots, const char *engine, double cost,
			   double idcost, double time_ms)
{
	return json_pack("{s:I, s:I, s:s, s:f, s:f, s:f, s:f}", "ranks", (json_int_t)ranks, "slots", (json_int_t)slots,
			 "engine", engine, "cost", cost, "identity_cost", idcost, "improvement",
			 idcost > 0 ? 1 - cost / idcost : 0.0, "time_ms", time_ms);
}

static double num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* A string field of o, or dflt. */
static const char *str_or(const json_t *o, const char *k, const char *dflt)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v ? v : dflt;
}

/* With GPU slots: one line per rank, its host, GPU and nearest cores. */
static void print_placement(FILE *f, const json_t *s)
{
	json_t *e;
	size_t r;

	json_array_foreach (json_object_get(s, "placement"), r, e) {
		fprintf(f, "rank %zu: host %s gpu %s (index %d", r, str_or(e, "host", "?"), str_or(e, "gpu", "?"),
			(int)json_integer_value(json_object_get(e, "index")));
		if (json_object_get(e, "busid"))
			fprintf(f, ", %s", str_or(e, "busid", "?"));
		fprintf(f, ")");
		if (json_object_get(e, "cpus"))
			fprintf(f, " cpus %s", str_or(e, "cpus", "?"));
		if (json_object_get(e, "nic"))
			fprintf(f, " nic %s", str_or(e, "nic", "?"));
		fprintf(f, "\n");
	}
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
	print_placement(f, s);
}

/* Where the slots are, for --rankfile and --slurm-hostfile: host name and logical core (or PU) per slot. */
struct map_slots {
	const char **host;
	unsigned *cpu;
};

/* Writes the permutation (--out), the rankfile and host list, and prints the summary; returns the exit
 * status. */
static int map_output(const struct map_args *a, const uint32_t *perm, uint32_t n, const json_t *summary,
		      const struct map_slots *where)
{
	FILE *sum = a->out && !strcmp(a->out, "-") ? stderr : stdout;
	rm_error_t err;
	uint32_t i;

	rm_error_clear(&err);
	if ((a->rankfile || a->hostfile) &&
	    ctl_write_placement("map", a->rankfile, a->hostfile, perm, n, where->host, where->cpu, a->per_pu))
		return 1;
	if (a->out && !strcmp(a->out, "-")) {
		for (i = 0; i < n; i++)
			printf("%u\n", perm[i]);
	} else if (a->out && map_perm_write(a->out, perm, n, &err) < 0) {
		return report_error(&err, a->out);
	}
	if (a->json) {
		ctl_print_json(sum, summary, 0);
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
static int map_run(const struct map_args *a, const map_graph_t *g, const topo_target_t *t, const unsigned *cpu,
		   const json_t *gpus, rm_error_t *err)
{
	struct map_slots where = { NULL, (unsigned *)cpu };
	ctl_progress_t *prog;
	map_options_t opt = { .time_budget_ms = a->budget > 0 ? a->budget : map_offline_budget_ms(g->n),
			      .seed = a->seed }; /* offline: at least 100 ms by default (mapping.h) */
	uint32_t *perm = malloc(((size_t)g->n + 1) * sizeof(*perm)), *id = malloc(((size_t)g->n + 1) * sizeof(*id)), i;
	double *bd = calloc(t->nlevels, sizeof(double)), *idbd = calloc(t->nlevels, sizeof(double));
	char tleaf[1024];
	map_result_t res;
	json_t *s = NULL;
	int rc = 1, mc;

	if (!perm || !id || !bd || !idbd)
		goto out;
	if ((a->rankfile || a->hostfile) && t->host_name && cpu &&
	    (where.host = malloc(((size_t)t->nslots + 1) * sizeof(*where.host))))
		for (i = 0; i < t->nslots; i++)
			where.host[i] = t->host_name[t->slot_host[i]];
	if ((a->rankfile || a->hostfile) && !where.host)
		goto out;
	prog = ctl_progress_start("map", &a->d, "mapping");
	mc = map_compute(a->algo, g, t, &opt, perm, &res, err);
	ctl_progress_stop(prog);
	if (mc < 0) {
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
	if (gpus) { /* rank r runs on slot perm[r]: its GPU */
		json_t *pl = json_array();

		for (i = 0; pl && i < g->n; i++)
			json_array_append(pl, json_array_get(gpus, perm[i]));
		json_object_set_new(s, "slot_kind", json_string("gpu"));
		json_object_set_new(s, "placement", pl);
	}
	rc = map_output(a, perm, g->n, s, &where);
out:
	json_decref(s);
	free(perm), free(id), free(bd), free(idbd), free(where.host);
	return rc;
}

static int map_offline(const struct map_args *a, const map_graph_t *g)
{
	rm_error_t err;
	topo_target_t *t;
	unsigned *cpu = NULL;
	json_t *gpus = NULL;
	int rc;

	rm_error_clear(&err);
	t = ctl_load_target_kind(a->tleaf, a->cluster, a->hosts, a->per_pu, a->slots, &cpu, &gpus, &err);
	if (!t)
		rc = report_error(&err, a->tleaf ? "--topology" : a->cluster);
	else if (g->n > t->nslots)
		rc = (fprintf(stderr, "rankmapctl map: the pattern has %u ranks but the target only %u slots\n", g->n,
			      t->nslots),
		      1);
	else
		rc = map_run(a, g, t, cpu, gpus, &err);
	topo_target_destroy(t);
	json_decref(gpus);
	free(cpu);
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
	if (req && a->slots)
		json_object_set_new(req, "slot_kind", json_string(a->slots));
	return req;
}

/* For --rankfile and --slurm-hostfile through the daemon: each slot's host and logical core (per PU:
 * the PU itself) from the answer's [host, pu] slots. A core's logical index is pu / (pus / cores) of
 * the host, exact when every core of the host has as many PUs: a host where they differ is an error. */
static int remote_slots(const struct map_args *a, const json_t *slots, struct map_slots *w)
{
	json_t *resp = NULL, *h, *sl, *by_name = json_object();
	size_t i, ns = json_array_size(slots);
	int rc = -1;

	w->host = calloc(ns + 1, sizeof(*w->host));
	w->cpu = calloc(ns + 1, sizeof(*w->cpu));
	if (!w->host || !w->cpu || !by_name) {
		fprintf(stderr, "rankmapctl map: out of memory\n");
		goto out;
	}
	if (!a->per_pu && !(resp = ctl_call("map", &a->d, rm_proto_request("hosts", 1), CTL_DAEMON_TIMEOUT_MS)))
		goto out;
	json_array_foreach (json_object_get(resp, "hosts"), i, h) /* name -> host, one lookup per slot */
		if (json_string_value(json_object_get(h, "name")))
			json_object_set(by_name, json_string_value(json_object_get(h, "name")), h);
	json_array_foreach (slots, i, sl) {
		const char *name = json_string_value(json_array_get(sl, 0));
		json_int_t pu = json_integer_value(json_array_get(sl, 1)), pus, cores;

		if (!name || pu < 0) {
			fprintf(stderr, "rankmapctl map: rankmapd sent a malformed slot %zu\n", i);
			goto out;
		}
		w->host[i] = name;
		w->cpu[i] = (unsigned)pu;
		if (a->per_pu)
			continue;
		h = json_object_get(by_name, name);
		pus = json_integer_value(json_object_get(h, "pus"));
		cores = json_integer_value(json_object_get(h, "cores"));
		if (cores <= 0 || pus < cores || pus % cores) {
			fprintf(stderr,
				"rankmapctl map: --rankfile: host %s has %lld PUs on %lld cores: its cores cannot be "
				"numbered from rankmapd's answer; map offline with --cluster, or use --per-pu\n",
				name, (long long)pus, (long long)cores);
			goto out;
		}
		w->cpu[i] = (unsigned)(pu / (pus / cores));
	}
	rc = 0;
out:
	json_decref(by_name);
	json_decref(resp);
	return rc;
}

static int map_remote(const struct map_args *a, const map_graph_t *g)
{
	struct map_slots where = { NULL, NULL };
	json_t *hosts = remote_hosts(a), *resp, *s, *p;
	uint32_t *perm;
	size_t i;
	int rc = 1;

	ctl_progress_t *prog;

	if (!hosts)
		return 1;
	prog = ctl_progress_start("map", &a->d, "rankmapd is mapping");
	resp = ctl_call("map", &a->d, map_request(a, g, hosts), CTL_DAEMON_TIMEOUT_MS);
	ctl_progress_stop(prog);
	if (!resp)
		return 1;
	p = json_object_get(resp, "permutation");
	s = summary_new(a, g->n, json_array_size(json_object_get(resp, "slots")),
			json_string_value(json_object_get(resp, "engine")) ?: "?", num(resp, "cost"),
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
		if (json_object_get(resp, "gpus")) { /* GPU slots: each rank's host and GPU */
			json_t *pl = json_array(), *sl = json_object_get(resp, "slots");

			for (i = 0; pl && i < g->n; i++)
				json_array_append_new(
					pl, json_pack("{s:o, s:o, s:o}", "host",
						      json_incref(json_array_get(json_array_get(sl, perm[i]), 0)
									  ?: json_null()),
						      "gpu",
						      json_incref(json_array_get(json_object_get(resp, "gpu_names"),
										 perm[i])
									  ?: json_null()),
						      "index",
						      json_incref(json_array_get(json_object_get(resp, "gpus"), perm[i])
									  ?: json_null())));
			json_object_set_new(s, "slot_kind", json_string("gpu"));
			json_object_set_new(s, "placement", pl);
		}
		if (!(a->rankfile || a->hostfile) || remote_slots(a, json_object_get(resp, "slots"), &where) == 0)
			rc = map_output(a, perm, g->n, s, &where);
		free(perm);
		free(where.host);
		free(where.cpu);
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
		return ctl_usage_error("map", "unknown --engine '%s' (%s)", a.algo, map_algorithm_list());
	rm_error_clear(&err);
	g = load_graph(&a, &err);
	if (!g)
		return report_error(&err, a.pattern ? a.pattern : "--cart");
	rc = ctl_daemon_set(&a.d) ? map_remote(&a, g) : map_offline(&a, g);
	map_graph_destroy(g);
	return rc;
}
