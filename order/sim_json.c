/*
 * order/sim_json.c: simulation results as JSON (see order.h).
 */
#include "order.h"

const char *const sim_metric_names[SIM_NMETRICS] = { "hop", "thickness", "interference", "pieces" };

static double metric(const sim_class_stats_t *c, int m)
{
	return m == 0 ? c->hop : m == 1 ? c->thickness : m == 2 ? c->interference : c->pieces;
}

static json_t *method_json(const sim_result_t *r)
{
	json_t *jr = json_pack("{s:f, s:f, s:{}}", "utilisation", r->utilisation, "mean_wait", r->mean_wait, "classes");
	json_t *jc = json_object_get(jr, "classes");
	int c, m;

	for (c = 0; jc && c < SIM_NCLASSES; c++) {
		json_t *o = json_pack("{s:I}", "jobs", (json_int_t)r->cls[c].jobs);

		for (m = 0; o && m < SIM_NMETRICS; m++)
			json_object_set_new(o, sim_metric_names[m], json_real(metric(&r->cls[c], m)));
		json_object_set_new(jc, sim_class_name(c), o);
	}
	return jr;
}

json_t *sim_result_json(const char *const *methods, int nm, const sim_result_t *res, const sim_jobs_t *jobs,
			const topo_torus_spec_t *s)
{
	json_t *root = json_pack("{s:{s:[iii], s:[fff], s:i}, s:I, s:I, s:{}}", "torus", "dims", s->dims[0], s->dims[1],
				 s->dims[2], "link_cost", s->link_cost[0], s->link_cost[1], s->link_cost[2],
				 "nodes_per_router", s->nodes_per_router, "jobs", (json_int_t)jobs->njobs, "skipped",
				 (json_int_t)jobs->skipped, "methods");
	json_t *jm = json_object_get(root, "methods");
	int k;

	for (k = 0; jm && k < nm; k++)
		json_object_set_new(jm, methods[k], method_json(&res[k]));
	return root;
}
