/*
 * plugin/mpi/pmpi_daemon.c: mapping through rankmapd (rmp_env_server: RANKMAP_SERVER or RANKMAP_SOCKET).
 *
 * The daemon holds the cluster's model (hardware of every node, InfiniBand fabric or torus), so the
 * root sends it the communication graph and the slots the ranks occupy, in rank order, in one typed
 * `map` request (rm_client_map; daemon/PROTOCOL.md) and gets back, for every vertex, the rank whose
 * slot runs it: the answer is in the request's order, so nothing is translated here. A daemon that is down
 * or answers with an error is a failure like any other: one warning, no reordering. Only the root
 * talks to the daemon, once per topology call, with the client library's timeout.
 *
 * Failover (RANKMAP_SERVER=primary,backup): every try of one call stays within RANKMAP_TIMEOUT_MS. When
 * an entry other than the first answered, the process remembers it and tries it first from then on,
 * and says so once (at most one warning per job: only the root talks to the daemon).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm_client.h"
#include "pmpi.h"

#define RMP_DAEMON_TIMEOUT_MS 5000

/* Process-wide memory of a failover (the library has no state across topology calls otherwise): the
 * entry that answered, tried first from then on, and whether the one warning was said. */
static char failover_first[256];
static int failover_warned;

/* The list to try: the remembered entry first, then the others in their order. */
static const char *servers(const char *list, char *buf, size_t len)
{
	char e[256];
	size_t used;
	int i, n = rm_client_server_count(list);

	if (!failover_first[0] || n < 2 || len < 2)
		return list;
	used = (size_t)snprintf(buf, len, "%s", failover_first);
	for (i = 0; i < n && used < len; i++)
		if (rm_client_server_entry(list, i, e, sizeof(e)) == 0 && strcmp(e, failover_first))
			used += (size_t)snprintf(buf + used, len - used, ",%s", e);
	return used < len ? buf : list;
}

/* The client options of one call over RANKMAP_SERVER (buf: room for the reordered list). */
static rm_client_opts_t daemon_opts(const rmp_call_t *call, char *buf, size_t len)
{
	return (rm_client_opts_t){ .servers = servers(call->env.socket, buf, len),
				   .timeout_ms =
					   call->env.timeout_ms > 0 ? call->env.timeout_ms : RMP_DAEMON_TIMEOUT_MS };
}

/* After a call: remembers the entry that answered after others failed, and says so once. */
static void failover_note(const rmp_call_t *call, const rm_client_info_t *info)
{
	if (info->server > 0 && info->nfailed > 0) {
		snprintf(failover_first, sizeof(failover_first), "%s", info->entry);
		if (!failover_warned++)
			fprintf(stderr, "rankmap: %s: %s; using rankmapd at %s\n", call->fn, info->failed, info->entry);
	}
}

/* rm_client_call over RANKMAP_SERVER with the failover rules above. */
static int daemon_call(rmp_call_t *call, json_t *req, json_t **resp, rm_error_t *e)
{
	char buf[4096];
	rm_client_opts_t o = daemon_opts(call, buf, sizeof(buf));
	rm_client_info_t info;
	int rc = rm_client_call_opts(&o, req, resp, &info, e);

	failover_note(call, &info);
	return rc;
}

/* Sets call->err from a failed client call. */
static int daemon_error(rmp_call_t *call, const rm_error_t *e)
{
	char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN];

	return rm_error_set(&call->err, "rankmapd", 0, 0, "%s",
			    rm_error_isset(e) ? rm_error_format(e, buf, sizeof(buf)) : "request failed");
}

char **rmp_daemon_hosts(rmp_call_t *call, size_t *n_out)
{
	json_t *req = rm_proto_request("hosts", 1), *resp = NULL, *list;
	rm_error_t e = { 0 };
	char **names = NULL;
	size_t n;

	*n_out = 0;
	if (!req || daemon_call(call, req, &resp, &e) != 0) {
		daemon_error(call, &e);
		json_decref(resp);
		return NULL;
	}
	list = json_object_get(resp, "hosts");
	n = json_array_size(list);
	names = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; names && i < n; i++) {
		const char *s = json_string_value(json_object_get(json_array_get(list, i), "name"));

		names[i] = strdup(s ? s : "");
		if (!names[i]) {
			rmp_free_names(names);
			names = NULL;
		}
	}
	json_decref(resp);
	if (!names)
		rm_error_set(&call->err, call->env.socket, 0, 0, "rankmapd: bad 'hosts' answer");
	else
		*n_out = n;
	return names;
}

void rmp_free_names(char **names)
{
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
}

/* The graph's edges, each once (u < v), as the typed request takes them. */
typedef struct rmp_edges {
	size_t n;
	uint32_t *src, *dst;
	double *w;
} rmp_edges_t;

static int graph_edges(const map_graph_t *g, rmp_edges_t *e)
{
	size_t cap = g->xadj[g->n] / 2 + 1;

	e->n = 0;
	e->src = malloc(sizeof(uint32_t) * cap);
	e->dst = malloc(sizeof(uint32_t) * cap);
	e->w = malloc(sizeof(double) * cap);
	if (!e->src || !e->dst || !e->w)
		return -1;
	for (uint32_t u = 0; u < g->n; u++)
		for (uint64_t k = g->xadj[u]; k < g->xadj[u + 1]; k++)
			if (g->adj[k] > u && e->n < cap)
				e->src[e->n] = u, e->dst[e->n] = g->adj[k], e->w[e->n++] = g->w[k];
	return 0;
}

int rmp_daemon_map(rmp_call_t *call, const map_graph_t *g, rmp_place_t *pl, uint32_t *vrank, map_result_t *res)
{
	char buf[4096];
	rm_client_opts_t o = daemon_opts(call, buf, sizeof(buf));
	rm_client_info_t info = { .server = -1 };
	rmp_edges_t e = { 0 };
	rm_map_answer_t a;
	rm_error_t err = { 0 };
	int rc;

	if (graph_edges(g, &e) != 0) {
		free(e.src), free(e.dst), free(e.w);
		return rm_error_set(&call->err, "rankmapd", 0, 0, "out of memory building the request");
	}
	rm_map_request_t q = { .n = g->n,
			       .nedges = e.n,
			       .src = e.src,
			       .dst = e.dst,
			       .w = e.w,
			       .slots = pl->slot,
			       .nslots = (size_t)call->size,
			       .pu_index = pl->pu_index,
			       .gpus = pl->gpu_slots ? (const char *const *)pl->gpu_ids : NULL,
			       .engine = call->env.algo,
			       .time_budget_ms = call->env.budget_ms };

	rc = rm_client_map(&o, &q, &a, &info, &err);
	if (rc != 0 && pl->gpu_slots &&
	    (!strcmp(err.source, RM_ERR_BAD_REQUEST) || !strcmp(err.source, RM_ERR_NOT_FOUND))) {
		/* the daemon resolved the ranks' GPU names (UUIDs, indices) on its model and refused them (two ranks
		 * on one GPU named two ways, a UUID it does not know): core slots, one warning, as where the
		 * library resolves them itself. A refusal that is not about the GPUs (an unknown host, no
		 * hardware data) refuses the core slots too: then the first error is the one warning. */
		rm_error_t gerr = err;
		char why[200];

		rm_map_answer_free(&a);
		pl->gpu_slots = 0;
		q.gpus = NULL;
		err = (rm_error_t){ 0 };
		info = (rm_client_info_t){ .server = -1 };
		rc = rm_client_map(&o, &q, &a, &info, &err);
		if (rc == 0) {
			snprintf(why, sizeof(why), "rankmapd: %.180s", gerr.text);
			rmp_gpu_fallback_warn(call, why);
		} else {
			pl->gpu_slots = 1;
			err = gerr;
		}
	}
	free(e.src), free(e.dst), free(e.w);
	failover_note(call, &info);
	if (rc != 0) {
		rm_map_answer_free(&a);
		return daemon_error(call, &err);
	}
	for (uint32_t v = 0; v < g->n; v++) /* the answer is in the request's order: rank order */
		vrank[v] = a.slot[v];
	for (int r = 0; r < call->size; r++)
		pl->pu_os[r] = a.pu_os[r];
	/* GPU slots: the daemon names each slot's GPU by its index (in the request's order) */
	for (int r = 0; pl->gpu_slots && r < call->size; r++)
		pl->gpu[r] = (uint32_t)json_integer_value(json_array_get(json_object_get(a.resp, "gpus"), (size_t)r));
	if (a.warning)
		snprintf(call->warning, sizeof(call->warning), "%s", a.warning);
	res->cost = a.cost;
	res->identity_cost = a.given_cost;
	snprintf(res->algo, sizeof(res->algo), "rankmapd:%.22s", a.engine);
	rm_map_answer_free(&a);
	return 0;
}
