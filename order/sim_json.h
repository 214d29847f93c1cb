/*
 * daemon/lib_sim.h: the result of an allocation simulation (order/sim.c) as one JSON object, built
 * the same way by `rankmapctl simulate` offline and by rankmapd's `simulate` request, so that both
 * print the same thing.
 */
#ifndef RANKMAP_LIB_SIM_H
#define RANKMAP_LIB_SIM_H

#include <jansson.h>

#include "order.h"

/* Metrics of a job-size class, in the order of the JSON object and of the text table. */
#define RM_SIM_NMETRICS 4
extern const char *const rm_sim_metric_names[RM_SIM_NMETRICS]; /* hop, thickness, interference, pieces */

/* {"torus": {"dims", "link_cost", "nodes_per_router"}, "jobs", "skipped", "methods": {METHOD:
 * {"utilisation", "mean_wait", "classes": {CLASS: {"jobs", "hop", "thickness", "interference",
 * "pieces"}}}}} for nm methods with their results. Returns a new reference, NULL when out of memory. */
json_t *rm_sim_json(const char *const *methods, int nm, const sim_result_t *res, const sim_jobs_t *jobs,
                    const topo_torus_spec_t *spec);

#endif
