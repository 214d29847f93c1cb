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
#include <time.h>

#include "ctl.h"
#include "ctl_common.h"
#include "hostlist.h"
#include "rm_client.h"
#include "rm_pattern.h"
#include "mapping.h"
#include "topo.h"

static void ex_usage(FILE *f)
{
	fprintf(f,
		"NAME\n"
		"    rankmapctl explain - show where a job's traffic flows, before and after reordering\n\n"
		"SYNOPSIS\n"
		"    rankmapctl explain (--matrix FILE | --cart SPEC)\n"
		"                       (--cluster FILE --hosts LIST | --topology 'tleaf ...')\n"
		"                       [--perm FILE | --engine NAME] [--metric METRIC] [--per-pu] [-j|--json]\n"
		"    rankmapctl explain (--matrix FILE | --cart SPEC) --server LIST [--hosts LIST] ...\n"
		"    rankmapctl explain --learned ID|auto [--cart SPEC] [--learn-dir DIR] ...\n\n"
		"DESCRIPTION\n"
		"    Splits the job's communication volume by the deepest level of the machine each rank pair\n"
		"    shares: the same socket (package, and below: cache, core), the same node across sockets,\n"
		"    the same leaf switch (or torus router) across nodes, and above the leaf switches (spines,\n"
		"    core switches, several torus hops). It does so for the unreordered placement (rank i on\n"
		"    slot i, as the job's slots come in --hosts order, one slot per core) and for the\n"
		"    reordered one: the permutation in --perm (one line per rank: its slot, as written by\n"
		"    rankmapctl map --out), or else the one --engine computes (default auto). Traffic leaving\n"
		"    the leaf switches is what competes for the fabric's uplinks; moving it down is the point\n"
		"    of reordering.\n\n"
		"OPTIONS\n"
		"    --matrix FILE       the communication matrix (--pattern is its old name), as rankmapctl\n"
		"                        map --matrix reads it: Matrix Market or TreeMatch dense text\n"
		"    --cart SPEC         a Cartesian halo exchange instead of --matrix, as rankmapctl map\n"
		"                        --cart: DIMS as 8x4x2[:PERIODS as 1,1,0[:WEIGHTS as 10,1,1]]\n"
		"    --cluster FILE      the machine (see rankmapctl report); with --hosts LIST, the job's\n"
		"                        hosts in order (Slurm host list, e.g. node[01-04])\n"
		"    --topology TLEAF    a Scotch tree leaf instead of a cluster: 'tleaf N a1 c1 ... aN cN'\n"
		"                        (its levels have no kind: traffic is shown per level only)\n"
		"    --learned ID|auto   the pattern the MPI library learned (RANKMAP_LEARN=1) gives the\n"
		"                        weights: ID as in its report line (learned=ID/runs=N) or in\n"
		"                        rankmapctl patterns list; auto: the newest that fits --cart. A\n"
		"                        Cartesian pattern weighs the dimensions of --cart (its dimensions\n"
		"                        and periods must be the pattern's); a graph pattern is the graph.\n"
		"                        Prints which pattern, the runs merged, the last update and the\n"
		"                        traffic between ranks that are not neighbours in the topology\n"
		"    --learn-dir DIR     where --learned looks (default: rankmapd with --socket/--server,\n"
		"                        else $RANKMAP_LEARN_DIR, $XDG_CACHE_HOME/rankmap, ~/.cache/rankmap)\n"
		"    --perm FILE         the reordered placement to explain\n"
		"    --engine NAME       compute it: treematch, scotch, refine, auto (default), identity\n"
		"                        (--algo is its old name)\n"
		"    --metric METRIC     bytes (default: first weight column), messages, loggp\n"
		"    --per-pu            one slot per PU (hardware thread) instead of per core\n"
		"    --slots KIND        core (the default unless the cluster file says `slots = gpu`) or\n"
		"                        gpu: one slot per GPU of the hosts, GPU link and NIC costs\n"
		"    --server LIST       ask rankmapd: its model replaces --cluster (--hosts, default every\n"
		"                        host with hardware data, and --per-pu apply to it), the pattern is\n"
		"                        read here and sent; without --cluster and --topology, RANKMAP_SOCKET\n"
		"                        names the socket. Same output.\n"
		"  -j, --json            one JSON object: ranks, slots, metric, engine (the engine, or 'file\n"
		"                        PERM'; 'algo' in older versions), levels [{level, kind,\n"
		"                        class, before, after}], classes {socket, node, leaf, above: {before,\n"
		"                        after, before_percent, after_percent}}, total; with --learned,\n"
		"                        learned {pattern, fn, order, shape, runs, updated, updated_unix, drift, "
		"stable,\n"
		"                        ranks, weights, not_neighbours {bytes, msgs, bytes_percent}}\n" CTL_DAEMON_HELP
		"  -h, --help              this text\n\n"
		"EXAMPLES\n"
		"    rankmapctl explain --matrix app.mtx --cluster /etc/rankmap/cluster.conf \\\n"
		"                       --hosts 'node[01-08]' --perm app.perm\n"
		"    rankmapctl explain --matrix app.mtx --topology 'tleaf 3 4 100 2 10 8 1' --engine scotch\n"
		"    rankmapctl explain --learned 34a8d59add837254 --cart 8x4x4:1,1,1 --topology 'tleaf 2 16 10 8 "
		"1'\n\n"
		"EXIT STATUS\n"
		"    0 success, 1 bad input (pattern, permutation, target), 2 usage error\n");
}

struct ex_args {
	const char *pattern, *cart, *cluster, *hosts, *tleaf, *perm, *algo, *metric, *learned, *learn_dir, *slots;
	ctl_daemon_t d;
	int json, per_pu;
	rm_pattern_t *lp;            /* --learned: the pattern */
	double lw[MAP_CART_MAXDIMS]; /* its weights per dimension (Cartesian) */
	char cartbuf[512];           /* --cart with the learned weights (sent to rankmapd) */
};

static int ex_usage_error(const char *fmt, const char *arg)
{
	return ctl_usage_error("explain", fmt, arg);
}

static int ex_parse(int argc, char **argv, struct ex_args *a)
{
	static const struct option lo[] = { { "matrix", required_argument, NULL, 'p' },
					    { "pattern", required_argument, NULL, 'p' },
					    { "cluster", required_argument, NULL, 'C' },
					    { "hosts", required_argument, NULL, 'H' },
					    { "topology", required_argument, NULL, 'T' },
					    { "perm", required_argument, NULL, 'P' },
					    { "engine", required_argument, NULL, 'a' },
					    { "algo", required_argument, NULL, 'a' },
					    { "metric", required_argument, NULL, 'm' },
					    { "per-pu", no_argument, NULL, 'u' },
					    { "slots", required_argument, NULL, 'K' },
					    { "json", no_argument, NULL, 'j' },
					    { "help", no_argument, NULL, 'h' },
					    { "cart", required_argument, NULL, 'c' },
					    CTL_DAEMON_LONGOPTS,
					    { "learned", required_argument, NULL, 'L' },
					    { "learn-dir", required_argument, NULL, 'D' },
					    { NULL, 0, NULL, 0 } };
	int ch;

	memset(a, 0, sizeof(*a));
	optind = 1;
	while ((ch = getopt_long(argc, argv, CTL_SHORTOPTS "j", lo, NULL)) != -1) {
		if (ctl_daemon_opt(&a->d, ch, optarg, "explain"))
			continue;
		switch (ch) {
		case 'c': a->cart = optarg; break;
		case 'L': a->learned = optarg; break;
		case 'D': a->learn_dir = optarg; break;
		case 'p': a->pattern = optarg; break;
		case 'C': a->cluster = optarg; break;
		case 'H': a->hosts = optarg; break;
		case 'T': a->tleaf = optarg; break;
		case 'P': a->perm = optarg; break;
		case 'a': a->algo = optarg; break;
		case 'm': a->metric = optarg; break;
		case 'u': a->per_pu = 1; break;
		case 'K':
			if (strcmp(optarg, "core") && strcmp(optarg, "gpu"))
				return ex_usage_error("--slots: expected core or gpu, not '%s'", optarg);
			a->slots = optarg;
			break;
		case 'j': a->json = 1; break;
		case 'h': ex_usage(stdout); return 0;
		default: return ctl_usage_hint("explain");
		}
	}
	if (optind < argc)
		return ex_usage_error("unexpected argument '%s'", argv[optind]);
	if (a->learned && a->pattern)
		return ex_usage_error(
			"%s", "--learned gives the weights: use it with --cart (or alone for a graph), not --matrix");
	if (!a->learned && !a->pattern == !a->cart)
		return ex_usage_error("%s", "give exactly one of --matrix and --cart (or --learned)");
	if (a->learn_dir && !a->learned)
		return ex_usage_error("%s", "--learn-dir needs --learned");
	if (ctl_daemon_set(&a->d) && (a->tleaf || a->cluster))
		return ex_usage_error("%s", "--socket replaces --cluster and --topology (the daemon's model is used)");
	if (!a->tleaf && !a->cluster)
		ctl_daemon_env(&a->d);
	if (!ctl_daemon_set(&a->d) && !a->tleaf == !a->cluster)
		return ex_usage_error("%s", "give exactly one of --cluster (with --hosts), --topology and --socket");
	if (a->cluster && !a->hosts)
		return ex_usage_error("%s", "--cluster needs --hosts LIST (the job's hosts, in order)");
	if ((a->hosts || a->per_pu) && !a->cluster && !ctl_daemon_set(&a->d))
		return ex_usage_error("%s", "--hosts and --per-pu need --cluster or --socket");
	if (a->perm && a->algo)
		return ex_usage_error("%s", "give --perm or --engine, not both");
	return -1;
}

/* The after-placement: read from --perm (checked against the pattern and the target) or computed. */
static int ex_perm(const struct ex_args *a, const map_graph_t *g, const topo_target_t *t, uint32_t *perm, char *algo,
		   size_t algolen, rm_error_t *err)
{
	map_result_t res;
	uint32_t n = 0, *p;

	if (!a->perm) {
		ctl_progress_t *prog = ctl_progress_start("explain", &a->d, "mapping");
		int rc = map_compute(a->algo ? a->algo : "auto", g, t, NULL, perm, &res, err);

		ctl_progress_stop(prog);
		if (rc < 0)
			return -1;
		snprintf(algo, algolen, "%s", res.algo);
		return 0;
	}
	if (!(p = map_perm_read(a->perm, &n, err)))
		return -1;
	if (n != g->n || map_check_perm(p, n, t->nslots) < 0) {
		rm_error_set(err, a->perm, 0, 0,
			     "%u lines: not a placement of the pattern's %u ranks on distinct "
			     "slots below %u",
			     n, g->n, t->nslots);
		free(p);
		return -1;
	}
	memcpy(perm, p, (size_t)n * sizeof(*perm));
	free(p);
	snprintf(algo, algolen, "file %s", a->perm);
	return 0;
}

static double pct(double part, double total)
{
	return total > 0 ? 100.0 * part / total : 0.0;
}

/* ---- --learned: a pattern the MPI library learned ---------------------------------------------- */

/* Whether p fits the Cartesian spec c (its dimensions and periods), or, c NULL, is a graph's. */
static int ex_fits(const rm_pattern_t *p, const map_cart_t *c)
{
	rm_pattern_key_t k;

	if (!c)
		return !rm_pattern_is_cart(&p->key);
	memset(&k, 0, sizeof(k));
	return rm_pattern_shape_cart(&k, c->ndims, c->periods) == 0 && !strcmp(k.shape, p->key.shape);
}

/* A graph pattern's graph: its entries weighed by metric, floored as the MPI library does. */
static map_graph_t *ex_learned_graph(const rm_pattern_t *p, map_metric_t metric, rm_error_t *err)
{
	unsigned long n = 0;
	uint32_t *src = malloc(sizeof(uint32_t) * (p->nedges + 1)), *dst = malloc(sizeof(uint32_t) * (p->nedges + 1));
	double *w = malloc(sizeof(double) * (p->nedges + 1)), max = 0;
	map_graph_t *g = NULL;

	if (sscanf(p->key.shape, "graph %lu", &n) != 1 || !src || !dst || !w) {
		rm_error_set(err, "explain", 0, 0, "out of memory");
		goto out;
	}
	for (size_t e = 0; e < p->nedges; e++) {
		src[e] = p->ends[2 * e], dst[e] = p->ends[2 * e + 1];
		w[e] = map_metric_weight(metric, p->edge[2 * e], p->edge[2 * e + 1], 1);
		max = w[e] > max ? w[e] : max;
	}
	for (size_t e = 0; e < p->nedges; e++)
		w[e] = w[e] > RM_PATTERN_MIN_WEIGHT * max ? w[e] : RM_PATTERN_MIN_WEIGHT * max;
	g = map_graph_from_edges((uint32_t)n, p->nedges, src, dst, w, err);
out:
	free(src), free(dst), free(w);
	return g;
}

/* The Cartesian grid of c weighed per dimension by p (the MPI library's rule); a->cart becomes the
 * weighted spec (for rankmapd). */
static map_graph_t *ex_learned_cart(struct ex_args *a, map_cart_t *c, map_metric_t metric, rm_error_t *err)
{
	const rm_pattern_t *p = a->lp;
	double max = 0;
	int n;

	for (int d = 0; d < c->ndims; d++) {
		a->lw[d] = map_metric_weight(metric, p->dim[d][0] + p->dim[d][1], p->dim[d][2] + p->dim[d][3], 1);
		max = a->lw[d] > max ? a->lw[d] : max;
	}
	n = snprintf(a->cartbuf, sizeof(a->cartbuf), "%d", c->dims[0]);
	for (int d = 1; d < c->ndims; d++)
		n += snprintf(a->cartbuf + n, sizeof(a->cartbuf) - (size_t)n, "x%d", c->dims[d]);
	for (int d = 0; d < c->ndims; d++)
		n += snprintf(a->cartbuf + n, sizeof(a->cartbuf) - (size_t)n, "%s%d", d ? "," : ":",
			      c->periods[d] != 0);
	for (int d = 0; d < c->ndims; d++) {
		a->lw[d] = max > 0 && a->lw[d] / max > RM_PATTERN_MIN_WEIGHT ? a->lw[d] / max
			   : max > 0                                         ? RM_PATTERN_MIN_WEIGHT
									     : 1;
		c->weights[d] = a->lw[d];
		n += snprintf(a->cartbuf + n, sizeof(a->cartbuf) - (size_t)n, "%s%.9g", d ? "," : ":", a->lw[d]);
	}
	a->cart = a->cartbuf;
	return map_graph_cart(c, err);
}

/* The pattern --learned names (16 hex digits, or the report's "ID/runs=N"; "auto": the newest that
 * fits --cart) and its graph. NULL with err set, or unset when an error was printed already. */
static map_graph_t *ex_learned(struct ex_args *a, map_metric_t metric, rm_error_t *err)
{
	const char *l = a->learned, *what = a->learn_dir ? a->learn_dir : "the pattern store";
	ctl_daemon_t none = { 0 };
	map_cart_t cart;
	rm_pattern_t **ps;
	size_t n = 0, bad = 0, i;
	char id[17] = "";
	int any = !strcmp(l, "auto");

	if (!strcmp(l, "none"))
		return rm_error_set(err, "--learned", 0, 0, "the mapping used no learned pattern (learned=none)"), NULL;
	if (!any && (strspn(l, "0123456789abcdef") != 16 || (l[16] && l[16] != '/' && l[16] != ':')))
		return rm_error_set(err, "--learned", 0, 0, "'%s' is not a pattern id (16 hex digits) or auto", l),
		       NULL;
	memcpy(id, l, any ? 0 : 16);
	if (a->cart && map_cart_parse(a->cart, &cart, err) < 0)
		return NULL;
	if (!(ps = ctl_patterns_load("explain", a->learn_dir ? &none : &a->d, a->learn_dir, -1, 0, any ? NULL : id, &n,
				     &bad)))
		return NULL;
	for (i = 0; i < n && !a->lp; i++)
		if (!any || ex_fits(ps[i], a->cart ? &cart : NULL))
			a->lp = ps[i], ps[i] = NULL;
	for (i = 0; i < n; i++)
		rm_pattern_free(ps[i]);
	free(ps);
	if (!a->lp)
		return rm_error_set(err, "--learned", 0, 0,
				    any ? "no learned pattern in %s fits %s" : "no learned pattern %s in %s",
				    any ? what : id, any ? (a->cart ? a->cart : "a graph") : what),
		       NULL;
	rm_pattern_key_id(&a->lp->key, id);
	if (rm_pattern_is_cart(&a->lp->key) && !a->cart)
		return rm_error_set(err, "--learned", 0, 0,
				    "pattern %s is a Cartesian call's (%s): give --cart with its "
				    "dimensions",
				    id, a->lp->key.shape),
		       NULL;
	if (!ex_fits(a->lp, a->cart ? &cart : NULL))
		return rm_error_set(err, "--learned", 0, 0, "pattern %s was learned for '%s', which --cart %s is not",
				    id, a->lp->key.shape, a->cart ? a->cart : "(none: a graph)"),
		       NULL;
	return a->cart ? ex_learned_cart(a, &cart, metric, err) : ex_learned_graph(a->lp, metric, err);
}

/* Bytes per rank the pattern saw between neighbours. */
static double ex_neighbour_bytes(const rm_pattern_t *p)
{
	double b = 0;

	for (int d = 0; d < p->ndims; d++)
		b += p->dim[d][0] + p->dim[d][1];
	for (size_t e = 0; e < p->nedges; e++)
		b += p->edge[2 * e];
	return b;
}

static json_t *ex_learned_json(const struct ex_args *a)
{
	const rm_pattern_t *p = a->lp;
	char id[17], t[32];
	time_t tt = (time_t)p->updated;
	struct tm tm;
	json_t *w = json_array();

	rm_pattern_key_id(&p->key, id);
	strftime(t, sizeof(t), "%Y-%m-%d %H:%M:%S", gmtime_r(&tt, &tm));
	for (int d = 0; d < p->ndims; d++)
		json_array_append_new(w, json_real(a->lw[d]));
	return json_pack("{s:s, s:s, s:I, s:s, s:I, s:s, s:I, s:I, s:f, s:b, s:o, s:{s:f, s:f, s:f}}", "pattern", id,
			 "fn", p->key.fn, "order", (json_int_t)p->key.order, "shape", p->key.shape, "runs",
			 (json_int_t)p->runs, "updated", t, "updated_unix", (json_int_t)p->updated, "ranks",
			 (json_int_t)p->ranks, "drift", p->drift, "stable", p->drift <= RM_PATTERN_DRIFT_MAX, "weights",
			 w, "not_neighbours", "bytes", p->other[0], "msgs", p->other[1], "bytes_percent",
			 pct(p->other[0], p->other[0] + ex_neighbour_bytes(p)));
}

static void ex_learned_text(const struct ex_args *a)
{
	const rm_pattern_t *p = a->lp;
	char id[17], t[32];
	time_t tt = (time_t)p->updated;
	struct tm tm;

	rm_pattern_key_id(&p->key, id);
	strftime(t, sizeof(t), "%Y-%m-%d %H:%M:%S", gmtime_r(&tt, &tm));
	printf("learned pattern %s: %s, topology call #%u, %s, of %s\n", id, p->key.fn, p->key.order, p->key.shape,
	       p->path[0] ? p->path : p->key.program);
	printf("  runs merged %u, last update %s UTC, last run %u ranks\n", p->runs, t, p->ranks);
	if (p->drift > RM_PATTERN_DRIFT_MAX)
		printf("  unstable: the last run drifted %.0f %% from the average; the MPI library does not apply it\n"
		       "  until runs agree again (their mappings were unweighted)\n",
		       100 * p->drift);
	if (p->ndims) {
		printf("  weights per dimension (what reordering weighs):");
		for (int d = 0; d < p->ndims; d++)
			printf(" %.3g", a->lw[d]);
		printf("\n");
	} else {
		printf("  weights: its %zu entries, %s per rank of the learned runs\n", p->nedges, "traffic");
	}
	printf("  traffic to ranks that are not neighbours in the topology (not weighed by the mapping):\n"
	       "    %.6g bytes, %.6g messages per rank (%.1f %% of the bytes)\n\n",
	       p->other[0], p->other[1], pct(p->other[0], p->other[0] + ex_neighbour_bytes(p)));
}

/* ---- classes and output ------------------------------------------------------------------------- */

enum { CL_SOCKET, CL_NODE, CL_LEAF, CL_ABOVE, CL_COUNT, CL_NONE = -1 };
static const char *const class_name[CL_COUNT] = { "socket", "node", "leaf", "above" };
static const char *const class_text[CL_COUNT] = { "inside one socket", "inside one node, across sockets",
						  "under one leaf switch, across nodes",
						  "above the leaf switches (spines and up)" };

/* What the output needs of the target: its slots and its levels' names and kinds (borrowed). Offline it
 * is the target's; through rankmapd it comes from the answer, whatever the shape of the target. */
struct ex_view {
	uint32_t nslots;
	int nlevels;
	const char *const *name;       /* nlevels, entries may be NULL */
	const topo_level_kind_t *kind; /* nlevels */
};

/* Class of traffic whose deepest shared level is l (CL_NONE for levels without a kind). */
static int level_class(const struct ex_view *t, int l)
{
	switch (t->kind[l]) {
	case TOPO_LEVEL_ROOT: return t->nlevels > 1 && t->kind[1] == TOPO_LEVEL_OTHER ? CL_NONE : CL_ABOVE;
	case TOPO_LEVEL_NETWORK: return l + 1 < t->nlevels && t->kind[l + 1] == TOPO_LEVEL_HOST ? CL_LEAF : CL_ABOVE;
	case TOPO_LEVEL_HOST: return CL_NODE;
	case TOPO_LEVEL_PACKAGE:
	case TOPO_LEVEL_NUMA:
	case TOPO_LEVEL_CACHE:
	case TOPO_LEVEL_CORE:
	case TOPO_LEVEL_PU: return CL_SOCKET;
	default: return CL_NONE;
	}
}

struct ex_result {
	double *before, *after; /* per level */
	double cb[CL_COUNT], ca[CL_COUNT], total;
	int classed; /* the target's levels have kinds */
	char algo[160];
	const char *metric;
	const char *warning; /* the target's (hosts the fabric does not connect), NULL */
};

static void ex_print_json(const struct ex_args *a, const map_graph_t *g, const struct ex_view *t,
			  const struct ex_result *r)
{
	json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:f}", "ranks", (json_int_t)g->n, "slots", (json_int_t)t->nslots,
			      "metric", r->metric, "engine", r->algo, "total", r->total);
	json_t *lv = json_array(), *cl = json_object();
	int l, k;

	for (l = 0; l < t->nlevels; l++) {
		k = level_class(t, l);
		json_array_append_new(lv,
				      json_pack("{s:s, s:s, s:f, s:f, s:f, s:f}", "level", t->name[l] ? t->name[l] : "",
						"class", k == CL_NONE ? "" : class_name[k], "before", r->before[l],
						"after", r->after[l], "before_percent", pct(r->before[l], r->total),
						"after_percent", pct(r->after[l], r->total)));
	}
	for (k = 0; r->classed && k < CL_COUNT; k++)
		json_object_set_new(cl, class_name[k],
				    json_pack("{s:f, s:f, s:f, s:f}", "before", r->cb[k], "after", r->ca[k],
					      "before_percent", pct(r->cb[k], r->total), "after_percent",
					      pct(r->ca[k], r->total)));
	json_object_set_new(o, "levels", lv);
	json_object_set_new(o, "classes", cl);
	if (r->warning)
		json_object_set_new(o, "warnings", json_pack("[s]", r->warning));
	if (a->lp)
		json_object_set_new(o, "learned", ex_learned_json(a));
	ctl_print_json(stdout, o, 0);
	json_decref(o);
}

static void ex_print_text(const struct ex_args *a, const map_graph_t *g, const struct ex_view *t,
			  const struct ex_result *r)
{
	int l, k;

	if (a->lp)
		ex_learned_text(a);

	printf("%u ranks on %u slots; traffic in %s, total %.6g\n", g->n, t->nslots, r->metric, r->total);
	printf("before: rank i on slot i; after: %s\n\n", r->algo);
	if (r->classed) {
		printf("  %-42s %14s %7s %14s %7s\n", "WHERE THE TRAFFIC FLOWS", "BEFORE", "%", "AFTER", "%");
		for (k = 0; k < CL_COUNT; k++)
			printf("  %-42s %14.6g %6.1f%% %14.6g %6.1f%%\n", class_text[k], r->cb[k],
			       pct(r->cb[k], r->total), r->ca[k], pct(r->ca[k], r->total));
		putchar('\n');
	}
	printf("  %-12s %-8s %14s %7s %14s %7s\n", "LEVEL", "CLASS", "BEFORE", "%", "AFTER", "%");
	for (l = 0; l < t->nlevels; l++) {
		k = level_class(t, l);
		printf("  %-12s %-8s %14.6g %6.1f%% %14.6g %6.1f%%\n", t->name[l] ? t->name[l] : "?",
		       k == CL_NONE ? "-" : class_name[k], r->before[l], pct(r->before[l], r->total), r->after[l],
		       pct(r->after[l], r->total));
	}
}

/* Sums the levels into classes and prints r. Returns 0, or -1 on a write error. */
static int ex_finish(const struct ex_args *a, const map_graph_t *g, const struct ex_view *t, struct ex_result *r)
{
	int l, k;

	r->classed = 1;
	for (l = 0; l < t->nlevels; l++) {
		r->total += r->before[l];
		k = level_class(t, l);
		if (k == CL_NONE) {
			r->classed = 0;
			continue;
		}
		r->cb[k] += r->before[l];
		r->ca[k] += r->after[l];
	}
	if (r->warning && !a->json)
		fprintf(stderr, "rankmapctl explain: warning: %s\n", r->warning);
	if (a->json)
		ex_print_json(a, g, t, r);
	else
		ex_print_text(a, g, t, r);
	return fflush(stdout) ? -1 : 0;
}

static int ex_run(const struct ex_args *a, const map_graph_t *g, const topo_target_t *t, rm_error_t *err)
{
	struct ex_result r = { .metric = a->metric && strcmp(a->metric, "bytes") ? a->metric : "bytes",
			       .warning = t->warning };
	struct ex_view v = { t->nslots, t->nlevels, (const char *const *)t->level_name, t->kind };
	uint32_t *perm = malloc(((size_t)g->n + 1) * sizeof(*perm)), i;
	int rc = -1;

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
	rc = ex_finish(a, g, &v, &r);
out:
	free(perm);
	free(r.before);
	free(r.after);
	return rc;
}

/* ---- through rankmapd ----------------------------------------------------------------------------- */

/* Kind of a level the daemon's breakdown names (the level names of topo's cluster targets). */
static topo_level_kind_t kind_of(const char *name)
{
	static const struct {
		const char *name;
		topo_level_kind_t kind;
	} kinds[] = {
		{ "root", TOPO_LEVEL_ROOT }, { "host", TOPO_LEVEL_HOST }, { "package", TOPO_LEVEL_PACKAGE },
		{ "die", TOPO_LEVEL_NUMA },  { "numa", TOPO_LEVEL_NUMA }, { "l3", TOPO_LEVEL_CACHE },
		{ "l2", TOPO_LEVEL_CACHE },  { "l1", TOPO_LEVEL_CACHE },  { "core", TOPO_LEVEL_CORE },
		{ "pu", TOPO_LEVEL_PU },
	};
	size_t i;

	for (i = 0; name && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(name, kinds[i].name))
			return kinds[i].kind;
	return TOPO_LEVEL_NETWORK; /* leaf, router, spine levels, torus blocks */
}

/* The map request for the daemon: the pattern, the job's slots as hosts (or slots), breakdown on. */
static json_t *ex_request(const struct ex_args *a, const map_graph_t *g, json_t *where, const char *key,
			  const char *algo)
{
	rm_map_request_t q = { .per_pu = a->per_pu, .engine = algo, .breakdown = 1 };
	json_t *req = ctl_map_request(a->cart ? NULL : g, a->cart, where, key, &q);

	json_decref(where);
	return req;
}

/* The job's hosts: --hosts expanded, else every host of the daemon's model with hardware data. */
static json_t *ex_hosts(const struct ex_args *a)
{
	json_t *list = json_array(), *resp, *h;
	rm_error_t err = { 0 };
	char **names;
	size_t i, n = 0;

	if (a->hosts) {
		if (!(names = hostlist_expand(a->hosts, &n, 0, &err)))
			return json_decref(list), ctl_fail("explain", &err, "--hosts"), NULL;
		for (i = 0; i < n; i++)
			json_array_append_new(list, json_string(names[i]));
		hostlist_free(names);
		return list;
	}
	if (!(resp = ctl_call("explain", &a->d, rm_proto_request("hosts", 1), CTL_DAEMON_TIMEOUT_MS)))
		return json_decref(list), NULL;
	json_array_foreach (json_object_get(resp, "hosts"), i, h)
		if (json_integer_value(json_object_get(h, "pus")) > 0)
			json_array_append(list, json_object_get(h, "name"));
	json_decref(resp);
	return list;
}

/* With --perm: the daemon's breakdown of rank i on slots[perm[i]] (an identity map on those slots). */
static json_t *ex_remote_perm(const struct ex_args *a, const map_graph_t *g, const json_t *slots, rm_error_t *err)
{
	uint32_t n = 0, *p = map_perm_read(a->perm, &n, err), i;
	json_t *given = json_array(), *resp = NULL;

	if (!p)
		return json_decref(given), NULL;
	if (n != g->n || map_check_perm(p, n, (uint32_t)json_array_size(slots)) < 0)
		rm_error_set(err, a->perm, 0, 0,
			     "%u lines: not a placement of the pattern's %u ranks on distinct "
			     "slots below %zu",
			     n, g->n, json_array_size(slots));
	else {
		for (i = 0; i < n; i++)
			json_array_append(given, json_array_get(slots, p[i]));
		resp = ctl_call("explain", &a->d, ex_request(a, g, json_incref(given), "slots", "identity"),
				CTL_DAEMON_TIMEOUT_MS);
	}
	free(p);
	json_decref(given);
	return resp;
}

/* Copies a breakdown's traffic into v; -1 when it does not have the view's levels. */
static int ex_levels(const json_t *bd, const struct ex_view *t, double *v)
{
	size_t l;

	if (json_array_size(bd) != (size_t)t->nlevels)
		return -1;
	for (l = 0; l < (size_t)t->nlevels; l++)
		v[l] = json_number_value(json_object_get(json_array_get(bd, l), "traffic"));
	return 0;
}

/* The view of the daemon's answer, whatever the shape of its target (tree, torus, mesh): its slots, and
 * the levels of its identity breakdown, named in resp (borrowed) and classed by name. The caller frees
 * *name and *kind. Returns 0, or -1 when the answer has no named levels or memory runs out. */
static int ex_remote_view(const json_t *resp, struct ex_view *v, const char ***name, topo_level_kind_t **kind)
{
	const json_t *bd = json_object_get(resp, "identity_breakdown");
	size_t l, nl = json_array_size(bd);

	*name = calloc(nl + 1, sizeof(**name));
	*kind = calloc(nl + 1, sizeof(**kind));
	if (!nl || nl > INT_MAX || !*name || !*kind)
		return -1;
	for (l = 0; l < nl; l++) {
		if (!((*name)[l] = json_string_value(json_object_get(json_array_get(bd, l), "level"))))
			return -1;
		(*kind)[l] = kind_of((*name)[l]);
	}
	v->nslots = (uint32_t)json_array_size(json_object_get(resp, "slots"));
	v->nlevels = (int)nl;
	v->name = *name;
	v->kind = *kind;
	return 0;
}

/* explain through rankmapd: the same numbers from the daemon's model. Returns the exit status. */
static int ex_remote(const struct ex_args *a, const map_graph_t *g)
{
	struct ex_result r = { .metric = a->metric && strcmp(a->metric, "bytes") ? a->metric : "bytes" };
	json_t *hosts = ex_hosts(a), *resp, *after = NULL;
	struct ex_view v;
	const char **name = NULL;
	topo_level_kind_t *kind = NULL;
	rm_error_t err = { 0 };
	int rc = 1;

	if (!hosts || !(resp = ctl_call("explain", &a->d,
					ex_request(a, g, hosts, "hosts",
						   a->perm   ? "identity"
						   : a->algo ? a->algo
							     : "auto"),
					CTL_DAEMON_TIMEOUT_MS)))
		return 1;
	if (a->perm && !(after = ex_remote_perm(a, g, json_object_get(resp, "slots"), &err)))
		goto out;
	if (ex_remote_view(resp, &v, &name, &kind) < 0 || !(r.before = calloc((size_t)v.nlevels, sizeof(double))) ||
	    !(r.after = calloc((size_t)v.nlevels, sizeof(double))) ||
	    ex_levels(json_object_get(resp, "identity_breakdown"), &v, r.before) < 0 ||
	    ex_levels(after ? json_object_get(after, "identity_breakdown") : json_object_get(resp, "breakdown"), &v,
		      r.after) < 0) {
		rm_error_set(&err, "explain", 0, 0, "rankmapd at %s sent a malformed answer", ctl_daemon_name(&a->d));
		goto out;
	}
	if (a->perm)
		snprintf(r.algo, sizeof(r.algo), "file %s", a->perm);
	else
		snprintf(r.algo, sizeof(r.algo), "%s", json_string_value(json_object_get(resp, "engine")) ?: "?");
	r.warning = json_string_value(json_array_get(json_object_get(resp, "warnings"), 0));
	rc = ex_finish(a, g, &v, &r) < 0;
out:
	if (rc && rm_error_isset(&err))
		ctl_fail("explain", &err, "explain");
	free(name);
	free(kind);
	free(r.before);
	free(r.after);
	json_decref(after);
	json_decref(resp);
	return rc;
}

/* The pattern: --pattern's file, or the Cartesian exchange of --cart. */
static map_graph_t *ex_graph(struct ex_args *a, map_metric_t metric, rm_error_t *err)
{
	map_cart_t cart;

	if (a->learned)
		return ex_learned(a, metric, err);
	if (a->pattern)
		return map_graph_load(a->pattern, metric, err);
	if (map_cart_parse(a->cart, &cart, err) < 0)
		return NULL;
	return map_graph_cart(&cart, err);
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
	if (!(g = ex_graph(&a, metric, &err))) {
		if (rm_error_isset(&err)) /* else printed already */
			fprintf(stderr, "rankmapctl explain: %s\n", rm_error_format(&err, buf, sizeof(buf)));
	} else if (ctl_daemon_set(&a.d))
		rc = ex_remote(&a, g);
	else if (!(t = ctl_load_target_kind(a.tleaf, a.cluster, a.hosts, a.per_pu, a.slots, NULL, NULL, &err)))
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
	rm_pattern_free(a.lp);
	return rc;
}
