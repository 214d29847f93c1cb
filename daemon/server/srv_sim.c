/*
 * daemon/server/srv_sim.c: the `simulate` request: allocation from a free list in one torus ordering (or all
 * of them, "compare") on a synthetic job mix, with the metrics per job-size class of order/sim.c.
 * The work is bounded (jobs, jobs x nodes x methods) so that one request holds a worker for seconds,
 * not minutes, and the request time limit is checked between methods.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "order.h"
#include "rm_client.h"
#include "srv.h"
#include "srv_requests.h"

#define SIM_SCHEMA                                                                               \
	SRV_ENVELOPE                                                                             \
	" method?s compare?b jobs?i seed?i load?f dims?a wrap?a link_cost?a nodes_per_router?i " \
	"axes?s"
#define SIM_MAX_JOBS 100000
#define SIM_MAX_WORK 2e9 /* jobs x nodes x methods: about 5 s of CPU on the test machine */
#define SIM_MAX_METHODS 16

typedef struct sim_req {
	const char *method, *axes;
	int compare;
	json_int_t jobs, seed, npr;
	double load;
	json_t *dims, *wrap, *cost;
} sim_req_t;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Runs each method on the jobs; returns the response or an error (new reference). */
static json_t *sim_methods(srv_ctx_t *ctx, const sim_req_t *q, const topo_torus_spec_t *spec, const order_opts_t *opts,
			   const sim_jobs_t *jobs, const json_t *id)
{
	const char *const *all = order_method_names();
	const char *methods[SIM_MAX_METHODS];
	sim_result_t res[SIM_MAX_METHODS];
	rm_error_t err = { 0 };
	double t0 = cpu_ms();
	char msg[600];
	json_t *resp;
	int nm = 0, k;

	if (q->compare)
		for (; all[nm] && nm < SIM_MAX_METHODS; nm++)
			methods[nm] = all[nm];
	else
		methods[nm++] = q->method;
	for (k = 0; k < nm; k++) {
		order_t *o = order_build(spec, methods[k], opts, &err);
		int rc = o ? sim_run(o, jobs, &res[k], &err) : -1;

		order_destroy(o);
		if (rc < 0)
			return rm_proto_error(id, RM_ERR_BAD_REQUEST, "%s", rm_error_format(&err, msg, sizeof(msg)));
		if (k + 1 < nm && cpu_ms() - t0 > ctx->cfg.request_timeout_ms)
			return rm_proto_error(id, RM_ERR_FAILED,
					      "simulation stopped after %d of %d methods: over the "
					      "request time limit of %d ms",
					      k + 1, nm, ctx->cfg.request_timeout_ms);
	}
	resp = rm_proto_ok(id);
	json_object_update_new(resp, sim_result_json(methods, nm, res, jobs, spec));
	return resp;
}

/* Checks the values of a parsed request against the bounds; NULL or an error (new reference). */
static json_t *sim_check(const sim_req_t *q, size_t nnodes, const json_t *id)
{
	const char *const *all = order_method_names();
	int nm = 1;

	if (q->compare)
		for (nm = 0; all[nm]; nm++)
			;

	if (q->compare && q->method)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "give 'method' or 'compare', not both");
	if (q->jobs < 1 || q->jobs > SIM_MAX_JOBS)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "jobs: %lld outside 1..%d", (long long)q->jobs,
				      SIM_MAX_JOBS);
	if (q->seed < 0)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "seed: must be >= 0");
	if (!(q->load >= 0.01 && q->load <= 1))
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "load: %g outside 0.01..1", q->load);
	if ((double)q->jobs * (double)nnodes * nm > SIM_MAX_WORK)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST,
				      "jobs: %lld jobs on %zu nodes%s is more work than one "
				      "request may take (jobs x nodes x methods <= %.0e)",
				      (long long)q->jobs, nnodes, q->compare ? " with every method" : "", SIM_MAX_WORK);
	return NULL;
}

json_t *srv_req_simulate(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	sim_req_t q = { .jobs = 2000, .seed = 1, .load = 0.9, .npr = 1 };
	topo_torus_spec_t spec = { 0 };
	order_opts_t opts;
	sim_jobs_t jobs;
	json_error_t jerr;
	rm_error_t err = { 0 };
	json_t *error = NULL, *resp;
	size_t nnodes;
	char msg[600];

	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT,
			   "{s:i, s:s, s:o, s?s, s?b, s?I, s?I, s?F, s?o, s?o, "
			   "s?o, s?I, s?s}",
			   "version", &(int){ 0 }, "type", &(const char *){ NULL }, "id", &(json_t *){ NULL }, "method",
			   &q.method, "compare", &q.compare, "jobs", &q.jobs, "seed", &q.seed, "load", &q.load, "dims",
			   &q.dims, "wrap", &q.wrap, "link_cost", &q.cost, "nodes_per_router", &q.npr, "axes",
			   &q.axes) < 0 ||
	    (q.dims && !json_is_array(q.dims)) || (q.wrap && !json_is_array(q.wrap)) ||
	    (q.cost && !json_is_array(q.cost)))
		return srv_request_invalid(req, id, SIM_SCHEMA, &jerr);
	if (srv_order_spec(ctx, q.dims, q.wrap, q.cost, q.npr, &spec, id, &error) < 0)
		return error;
	nnodes = (size_t)spec.dims[0] * (size_t)spec.dims[1] * (size_t)spec.dims[2] * (size_t)spec.nodes_per_router;
	if ((error = sim_check(&q, nnodes, id)))
		return error;
	if (!q.method)
		q.method = "bbb";
	order_opts_default(&opts);
	if (q.axes && order_parse_axes(q.axes, opts.axes, &err) < 0)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "axes: %s", rm_error_format(&err, msg, sizeof(msg)));
	if (sim_jobs_synthetic(&jobs, nnodes, (size_t)q.jobs, (uint64_t)q.seed, q.load, &err) < 0)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "%s", rm_error_format(&err, msg, sizeof(msg)));
	resp = sim_methods(ctx, &q, &spec, &opts, &jobs, id);
	sim_jobs_free(&jobs);
	return resp;
}
