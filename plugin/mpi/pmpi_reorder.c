/*
 * plugin/mpi/pmpi_reorder.c: from a communication graph to the reordered communicator.
 *
 * The root maps the graph onto the slots the ranks occupy (mapping/'s map_compute): perm[v] is the slot
 * that should run vertex v, i.e. the process now on that slot gets new rank v. The mapping is kept only
 * when it costs clearly less than the current placement (vertex v on the process of rank v): at least
 * RMP_MIN_GAIN (0.5 %) less under the cost model. A mapping that merely ties with where the ranks
 * already sit, or beats it by rounding noise, is dropped: the model cannot tell such placements apart,
 * while the application (its collectives' algorithms, its own tuning) may well prefer its own order,
 * so not reordering is the safe choice. The same rule applies to a mapping computed by rankmapd. New
 * ranks are scattered (one int per rank) and the communicator is split with them as keys.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi.h"

#define RMP_MIN_GAIN 0.005 /* smallest relative model-cost gain for which a mapping is kept */

/* Whether a mapping of model cost after is worth leaving the current placement of cost before. */
static int worth_moving(double before, double after)
{
	return after < before * (1.0 - RMP_MIN_GAIN);
}

/* Root: writes the report's lines to stderr (RANKMAP_VERBOSE) and/or appends them to RANKMAP_REPORT. */
static void report_out(const rmp_call_t *call, const char *text)
{
	if (call->env.verbose) {
		fputs(text, stderr);
		fflush(stderr);
	}
	if (call->env.report) {
		FILE *f = fopen(call->env.report, "a");

		if (f) {
			fputs(text, f);
			fclose(f);
		}
	}
}

/* Root: one line describing the outcome, then one line per rank: where it runs and its new rank, like
 * Open MPI's --report-bindings (fields documented in README.md, "What the report says"). ranks: the
 * vertices of the graph (processes of the new communicator), size: the processes of the communicator
 * given; costs are the model's (edge weight times distance, cost_unit), times in milliseconds, hw_bytes
 * the hardware descriptions the root gathered for the call (0 through rankmapd, which holds them). */
static void report(const rmp_call_t *call, const rmp_place_t *pl, const char *algo, double before, double after,
		   uint32_t moved)
{
	char line[1024], obs[160], warning[sizeof(call->warning) + 16] = "";
	double now = PMPI_Wtime();

	if (!call->env.verbose && !call->env.report) /* nobody asked: no line, no per-rank buffer */
		return;
	rmp_obs_report(call, obs, sizeof(obs)); /* the features' words (e.g. the learned pattern used) */
	if (call->warning[0]) /* e.g. hosts the fabric does not connect: mapped, with a penalty distance */
		snprintf(warning, sizeof(warning), " warning=\"%s\"", call->warning);

	/* time_ms: since the call began (includes waiting for the other ranks); map_ms: the root's
	 * placement and mapping (wall time), map_cpu_ms: the CPU time it used (what remains of map_ms
	 * when the machine is not oversubscribed) */
	snprintf(line, sizeof(line),
		 "rankmap: report fn=%s ranks=%u size=%d algo=%s cost_before=%.6g cost_after=%.6g "
		 "cost_unit=weight*distance moved=%u time_ms=%.3f map_ms=%.3f map_cpu_ms=%.3f hw_bytes=%zu "
		 "slots=%s%s%s\n",
		 call->fn, call->nverts, call->size, algo, before, after, moved, (now - call->t0) * 1e3,
		 (now - call->t_map) * 1e3, rmp_cpu_ms() - call->cpu_map, pl->hw_bytes, pl->gpu_slots ? "gpu" : "core",
		 obs, warning);
	report_out(call, line);
	if (!pl->slot)
		return;
	/* one buffer for every rank's line, written at once (a file's appends stay together), sized from the
	 * host names themselves (a cluster file's names have no length limit); a line is never cut, and the
	 * buffer is never written past its end */
	size_t cap = 1, off = 0, fixed = strlen(call->fn) + 160; /* 160: the words and five numbers */

	for (int r = 0; r < call->size; r++)
		cap += fixed + (pl->slot[r].host ? strlen(pl->slot[r].host) : 1);
	char *all = malloc(cap);

	for (int r = 0; all && r < call->size; r++) {
		char gpu[24] = "";

		if (pl->gpu_slots)
			snprintf(gpu, sizeof(gpu), " gpu=%u", pl->gpu[r]);
		int k = snprintf(all + off, cap - off,
				 "rankmap: place fn=%s rank=%d new_rank=%d host=%s pu_os=%ld bound=%s%s\n", call->fn, r,
				 call->codes[r] == RMP_CODE_SAME ? r : call->codes[r],
				 pl->slot[r].host ? pl->slot[r].host : "?", (long)pl->pu_os[r],
				 pl->bound[r] ? "yes" : "no", gpu);

		if (k < 0 || (size_t)k >= cap - off) { /* cannot happen with the size above: stop, keep what fits */
			all[off] = '\0';
			break;
		}
		off += (size_t)k;
	}
	if (all)
		report_out(call, all);
	free(all);
}

/* Root: maps g here with mapping/: perm[v] = target slot of vertex v. The engine runs in a child process
 * (RANKMAP_GUARD=fork, the default): its crash, endless loop or runaway memory becomes an error here. */
static int map_local(rmp_call_t *call, const rmp_place_t *pl, const map_graph_t *g, uint32_t *perm, map_result_t *res)
{
	map_options_t opt = { .time_budget_ms = call->env.budget_ms > 0 ? call->env.budget_ms : 1.0 + 0.005 * g->n };
	rm_child_limits_t lim = { .wall_ms = (2.0 * call->env.guard_cpu + 1.0) * 1e3,
				  .cpu_s = call->env.guard_cpu,
				  .mem_bytes = call->env.guard_mem << 20 };

	/* Scotch lives in the local mapping helper (pmpi_local.c): opened here, once per process, so that the
	 * guarded child inherits it rather than opening it at every call. A failure is the engine's to
	 * report (auto then goes on without Scotch). */
	if (strcmp(call->env.algo, "scotch") == 0 || strcmp(call->env.algo, "auto") == 0) {
		rm_error_t ignore = { 0 };

		rmp_local_load(&ignore);
	}
	if (map_compute_guarded(call->env.algo, g, pl->target, &opt, call->env.guard ? &lim : NULL, perm, res,
				&call->err) != 0 ||
	    map_check_perm(perm, g->n, pl->target->nslots) != 0)
		return rm_error_set(&call->err, "mapping", 0, 0, "engine '%s' failed", call->env.algo);
	return 0;
}

/* Root: computes newrank[r] (call->codes) for every rank r of the communicator (-1: left out). */
static int compute(rmp_call_t *call, rmp_place_t *pl, const map_graph_t *g)
{
	uint32_t n = call->nverts;
	uint32_t *perm = malloc(sizeof(uint32_t) * n), *cur = malloc(sizeof(uint32_t) * n);
	int *newrank = call->codes, rc = 0;
	map_result_t res;

	memset(&res, 0, sizeof(res));
	if (!perm || !cur) {
		rc = rm_error_set(&call->err, "mapping", 0, 0, "out of memory");
		goto out;
	}
	if (g->n != n) {
		rc = rm_error_set(&call->err, "mapping", 0, 0, "graph has %u vertices, the call %u", g->n, n);
		goto out;
	}
	for (uint32_t v = 0; pl->rank_slot && v < n; v++)
		cur[v] = pl->rank_slot[v];
	call->warning[0] = 0;
	if (pl->target && pl->target->warning)
		snprintf(call->warning, sizeof(call->warning), "%s", pl->target->warning);
	double before, after;
	const char *algo;

	if (call->env.socket) {
		if (rmp_daemon_map(call, g, pl, perm, &res) != 0) { /* perm[v]: a rank here */
			rc = -1;
			goto out;
		}
		before = res.identity_cost, after = res.cost, algo = res.algo;
		if (!worth_moving(before, after)) { /* perm[v] = v: every rank stays */
			for (uint32_t v = 0; v < n; v++)
				perm[v] = v;
			after = before;
			algo = "current";
		}
	} else {
		if (map_local(call, pl, g, perm, &res) != 0) {
			rc = -1;
			goto out;
		}
		before = map_cost(g, pl->target, cur), after = map_cost(g, pl->target, perm);
		algo = res.algo[0] ? res.algo : call->env.algo;
		if (!worth_moving(before, after)) { /* never worse than, nor a tie with, where ranks are */
			memcpy(perm, cur, sizeof(uint32_t) * n);
			after = before;
			algo = "current";
		}
		for (uint32_t v = 0; v < n; v++)
			perm[v] = pl->slot_rank[perm[v]];
	}
	uint32_t moved = 0;

	for (int r = 0; r < call->size; r++)
		newrank[r] = -1;
	for (uint32_t v = 0; v < n; v++) {
		uint32_t r = perm[v];

		newrank[r] = (int)v;
		moved += r != v;
	}
	/* nothing moves: Cartesian and graph calls make the unreordered call on every rank (no split, and
	 * the outcome remembered as such) */
	for (int r = 0; moved == 0 && call->key && r < call->size; r++)
		newrank[r] = RMP_CODE_SAME;
	report(call, pl, algo, before, after, moved);
out:
	free(perm);
	free(cur);
	return rc;
}

int rmp_reorder(rmp_call_t *call, map_graph_t *g, int root_fail, MPI_Comm *newcomm)
{
	rmp_place_t pl;
	int mine = -1;

	call->t_map = PMPI_Wtime();
	call->cpu_map = rmp_cpu_ms();
	int rc = rmp_place_gather(call, &pl), place_fail = rc != 0 && !root_fail;

	if (call->rank == 0 && !root_fail && rc == 0)
		rc = compute(call, &pl, g);
	if (call->rank == 0) {
		rmp_place_free(&pl);
		rmp_free_names(call->dhosts);
		call->dhosts = NULL;
		if (root_fail || rc != 0) { /* the root's failure travels in the scattered codes */
			for (int r = 0; r < call->size; r++)
				call->codes[r] = place_fail ? RMP_CODE_PLACE : RMP_CODE_FAILED;
			rmp_warn(call);
		}
	}
	map_graph_destroy(g);
	/* codes were allocated by rmp_call_begin at the root; rmp_agree made sure they exist */
	PMPI_Scatter(call->codes, 1, MPI_INT, &mine, 1, MPI_INT, 0, call->comm);
	free(call->codes);
	call->codes = NULL;
	/* every rank got the same kind of code: what the communicator remembers is the same everywhere */
	if (mine == RMP_CODE_PLACE) { /* a property of the communicator's processes: no later call retries */
		char cause[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 64];

		if (call->rank == 0)
			rmp_error_text(call, cause, sizeof(cause));
		if (!call->observed) /* observed (job-wide, rmp_agree): nothing remembered, every call agrees */
			rmp_memo_verdict(call->comm, call->envh, call->rank == 0 ? cause : NULL);
		return -1;
	}
	if (mine == RMP_CODE_FAILED || mine == RMP_CODE_SAME) {
		if (!call->observed)
			rmp_memo_result(call->comm, call->key, RMP_MEMO_PLAIN);
		return -1;
	}
	if (PMPI_Comm_split(call->comm, mine >= 0 ? 0 : MPI_UNDEFINED, mine, newcomm) != MPI_SUCCESS)
		return -1; /* only with MPI_ERRORS_RETURN; the caller then returns the unreordered result */
	if (!call->observed)
		rmp_memo_result(call->comm, call->key, mine);
	return 0;
}
