/*
 * daemon/ctl/ctl_simulate.c: `rankmapctl simulate`, allocation from a free list in a torus ordering,
 * on a synthetic job mix or an SWF trace, with per job-size class metrics; --compare runs every
 * ordering on the same jobs and prints one table.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_common.h"
#include "rm_client.h"
#include "order.h"

static void sim_usage(FILE *f)
{
	fprintf(f,
		"NAME\n"
		"    rankmapctl simulate - compare torus node orderings by simulating allocation\n\n"
		"SYNOPSIS\n"
		"    rankmapctl simulate (--torus FILE | --dims XxYxZ[:NODES_PER_ROUTER]) [--link-cost CX,CY,CZ]\n"
		"                        [--mesh] [--method METHOD | --compare] [--axes AXES]\n"
		"                        [--swf FILE [--procs-per-node P]] [--jobs N] [--seed S]\n"
		"                        [--load L] [--json]\n"
		"    rankmapctl simulate [--server LIST] [--dims ...] [options as above but --swf]\n\n"
		"DESCRIPTION\n"
		"    Jobs arrive and start first-come first-served; each takes the first free nodes in\n"
		"    the ordering (skipping busy ones), runs, and leaves. For each job-size class (2-16,\n"
		"    32-128, 256+ nodes, and all jobs) it reports the means over jobs of:\n"
		"      hop           pairwise hop distance between the job's nodes, weighted by the link\n"
		"                    cost of each dimension, wrap-around honoured (lower is better)\n"
		"      thickness     links between the job's routers per router (higher: less planar\n"
		"                    or stringy, more bisection)\n"
		"      interference  share of the hops of the job's rank-to-next-rank routes (dimension-\n"
		"                    ordered x, y, z) that enter routers holding other jobs' nodes\n"
		"      pieces        connected pieces of the allocation (1: one piece; fragmentation)\n\n"
		"OPTIONS\n"
		"    --torus FILE, --dims XxYxZ[:N], --link-cost CX,CY,CZ, --mesh, --axes AXES\n"
		"                        the torus and ordering options, as for rankmapctl order\n"
		"    --method METHOD     the ordering to simulate (default bbb)\n"
		"    --compare           run xyz, mdf, gray, hilbert and bbb on the same jobs, one table\n"
		"    --swf FILE          jobs from a Standard Workload Format trace (Parallel Workloads\n"
		"                        Archive); a malformed line is an error naming file and line\n"
		"    --procs-per-node P  processors per node in the trace (default 1)\n"
		"    --jobs N            synthetic jobs (default 2000): half 2-16 nodes, a third 32-128,\n"
		"                        the rest 256 and more, exponential run times\n"
		"    --seed S            seed of the synthetic mix (default 1): same seed, same jobs\n"
		"    --load L            offered load of the synthetic mix, 0 < L <= 1 (default 0.9)\n"
		"  -j, --json            print one JSON object instead of the table\n"
		"    --server LIST       simulate in rankmapd, on its model's torus (or --dims); the output is\n"
		"                        the same. Given neither --torus nor --dims, simulate asks rankmapd\n"
		"                        by default: $RANKMAP_SERVER, else $RANKMAP_SOCKET, else\n"
		"                        " RM_SOCKET_DEFAULT
		". The daemon bounds the work: at most 100000\n"
		"                        jobs, and jobs x nodes x methods at most 2e9.\n" CTL_DAEMON_HELP
		"    -h, --help          this text\n\n"
		"EXAMPLES\n"
		"    rankmapctl simulate --dims 17x8x24:2 --link-cost 1,2,0.67 --compare\n"
		"    rankmapctl simulate --torus torus.conf --swf trace.swf --procs-per-node 32 --method bbb\n\n"
		"EXIT STATUS\n"
		"    0 success, 1 bad input (config, trace, a job larger than the machine), 2 usage error\n");
}

struct sim_args {
	ctl_torus_args_t t;
	const char *swf;
	int compare, json;
	unsigned long jobs, ppn;
	unsigned long long seed;
	double load;
};

static int num_arg(const char *opt, const char *s, double lo, double hi, double *v)
{
	char *end;

	*v = strtod(s, &end);
	if (end == s || *end || !(*v >= lo) || !(*v <= hi)) {
		fprintf(stderr, "rankmapctl simulate: %s '%s': expected a number from %g to %g\n", opt, s, lo, hi);
		return -1;
	}
	return 0;
}

/* Parses the options; returns -1 on success, else the exit status. */
static int sim_parse(int argc, char **argv, struct sim_args *a)
{
	static const struct option opts[] = {
		CTL_TORUS_LONGOPTS,
		{ "compare", no_argument, NULL, 'C' },
		{ "swf", required_argument, NULL, 'W' },
		{ "procs-per-node", required_argument, NULL, 'P' },
		{ "jobs", required_argument, NULL, 'N' },
		{ "seed", required_argument, NULL, 'S' },
		{ "load", required_argument, NULL, 'L' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double v;
	int c;

	memset(a, 0, sizeof(*a));
	a->t.method = "bbb";
	a->jobs = 2000;
	a->ppn = 1;
	a->seed = 1;
	a->load = 0.9;
	optind = 1;
	while ((c = getopt_long(argc, argv, CTL_SHORTOPTS "j", opts, NULL)) != -1) {
		if (ctl_torus_opt(&a->t, c, optarg, "simulate"))
			continue;
		switch (c) {
		case 'C': a->compare = 1; break;
		case 'W': a->swf = optarg; break;
		case 'j': a->json = 1; break;
		case 'P':
			if (num_arg("--procs-per-node", optarg, 1, 1e6, &v) < 0)
				return 2;
			a->ppn = (unsigned long)v;
			break;
		case 'N':
			if (num_arg("--jobs", optarg, 1, 1e7, &v) < 0)
				return 2;
			a->jobs = (unsigned long)v;
			break;
		case 'S':
			if (num_arg("--seed", optarg, 0, 1e18, &v) < 0)
				return 2;
			a->seed = (unsigned long long)v;
			break;
		case 'L':
			if (num_arg("--load", optarg, 0.01, 1, &v) < 0)
				return 2;
			a->load = v;
			break;
		case 'h': sim_usage(stdout); return 0;
		default: return ctl_usage_hint("simulate");
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rankmapctl simulate: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (ctl_torus_check(&a->t, "simulate") >= 0)
		return 2;
	if (ctl_daemon_set(&a->t.d) && a->swf)
		return ctl_usage_error("simulate", "--swf is read offline only (the daemon simulates synthetic jobs)");
	return -1;
}

static double num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* The table, rendered from the result object (sim_result_json) whichever path produced it. */
static void print_table(const json_t *r)
{
	json_t *methods = json_object_get(r, "methods"), *m;
	const char *name;
	int c, k;

	printf("%.0f jobs%s; means per job of each class\n\n%-8s %-13s", num(r, "jobs"),
	       num(r, "skipped") > 0 ? " (some trace jobs skipped)" : "", "class", "metric");
	json_object_foreach (methods, name, m)
		printf(" %10s", name);
	printf("\n");
	for (c = 0; c < SIM_NCLASSES; c++) {
		printf("%-8s %-13s", sim_class_name(c), "jobs");
		json_object_foreach (methods, name, m)
			printf(" %10.0f",
			       num(json_object_get(json_object_get(m, "classes"), sim_class_name(c)), "jobs"));
		printf("\n");
		for (k = 0; k < SIM_NMETRICS; k++) {
			printf("%-8s %-13s", "", sim_metric_names[k]);
			json_object_foreach (methods, name, m)
				printf(" %10.3f", num(json_object_get(json_object_get(m, "classes"), sim_class_name(c)),
						      sim_metric_names[k]));
			printf("\n");
		}
	}
	printf("%-22s", "utilisation");
	json_object_foreach (methods, name, m)
		printf(" %10.3f", num(m, "utilisation"));
	printf("\n%-22s", "mean wait (s)");
	json_object_foreach (methods, name, m)
		printf(" %10.0f", num(m, "mean_wait"));
	printf("\n");
}

static int sim_print(const struct sim_args *a, const json_t *r)
{
	if (a->json)
		ctl_print_json(stdout, r, 0);
	else
		print_table(r);
	return ctl_close_output("simulate", stdout, NULL, 0);
}

static int sim_fail(const rm_error_t *err)
{
	return ctl_fail("simulate", err, NULL);
}

/* Builds and simulates each method; returns the exit status. */
static int run_methods(const struct sim_args *a, const order_torus_t *t, const sim_jobs_t *jobs,
		       const order_opts_t *opts)
{
	const char *const *all = order_method_names();
	const char *methods[16];
	sim_result_t res[16];
	rm_error_t err;
	json_t *r;
	int nm = 0, k, rc;

	rm_error_clear(&err);
	if (a->compare)
		for (; all[nm] && nm < 16; nm++)
			methods[nm] = all[nm];
	else
		methods[nm++] = a->t.method;
	for (k = 0; k < nm; k++) {
		order_t *o = order_build(&t->spec, methods[k], opts, &err);

		if (!o)
			return sim_fail(&err);
		if (sim_run(o, jobs, &res[k], &err) < 0) {
			order_destroy(o);
			return sim_fail(&err);
		}
		order_destroy(o);
	}
	if (!(r = sim_result_json(methods, nm, res, jobs, &t->spec)))
		return fprintf(stderr, "rankmapctl simulate: out of memory\n"), 1;
	rc = sim_print(a, r);
	json_decref(r);
	return rc;
}

/* The `simulate` request for the arguments. NULL with err set on a bad --dims or --link-cost. */
static json_t *sim_request(const struct sim_args *a, rm_error_t *err)
{
	json_t *req = rm_proto_request("simulate", 1);

	if (a->compare)
		json_object_set_new(req, "compare", json_true());
	else
		json_object_set_new(req, "method", json_string(a->t.method));
	json_object_update_new(req, json_pack("{s:I, s:I, s:f}", "jobs", (json_int_t)a->jobs, "seed",
					      (json_int_t)a->seed, "load", a->load));
	if (ctl_torus_request(req, &a->t, err) < 0) {
		json_decref(req);
		return NULL;
	}
	return req;
}

static int sim_remote(const struct sim_args *a)
{
	rm_error_t err;
	json_t *req, *resp;
	int rc;

	rm_error_clear(&err);
	if (!(req = sim_request(a, &err)))
		return sim_fail(&err);
	if (!(resp = ctl_call("simulate", &a->t.d, req, CTL_DAEMON_TIMEOUT_MS)))
		return 1;
	json_object_del(resp, "version");
	json_object_del(resp, "id");
	json_object_del(resp, "ok");
	rc = sim_print(a, resp);
	json_decref(resp);
	return rc;
}

int ctl_simulate_main(int argc, char **argv)
{
	struct sim_args a;
	order_opts_t opts;
	order_torus_t t;
	sim_jobs_t jobs;
	rm_error_t err;
	int rc = sim_parse(argc, argv, &a);

	if (rc >= 0)
		return rc;
	if (ctl_daemon_set(&a.t.d))
		return sim_remote(&a);
	rm_error_clear(&err);
	order_opts_default(&opts);
	if (a.t.axes && order_parse_axes(a.t.axes, opts.axes, &err) < 0) {
		sim_fail(&err);
		return 2;
	}
	if (order_torus_setup(a.t.torus, a.t.dims, a.t.cost, a.t.mesh, &t, &err) < 0)
		return sim_fail(&err);
	if (a.swf)
		rc = sim_jobs_swf(&jobs, a.swf, (unsigned)a.ppn, t.nnodes, &err);
	else
		rc = sim_jobs_synthetic(&jobs, t.nnodes, a.jobs, a.seed, a.load, &err);
	if (rc < 0) {
		order_torus_free(&t);
		return sim_fail(&err);
	}
	rc = run_methods(&a, &t, &jobs, &opts);
	sim_jobs_free(&jobs);
	order_torus_free(&t);
	return rc;
}
