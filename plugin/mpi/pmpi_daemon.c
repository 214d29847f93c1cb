/*
 * plugin/mpi/pmpi_daemon.c: mapping through rankmapd (rmp_env_server: RANKMAP_SERVER or RANKMAP_SOCKET).
 *
 * The daemon holds the cluster's model (hardware of every node, InfiniBand fabric or torus), so the
 * root sends it the communication graph and the slots the ranks occupy ([host, logical PU] each) in
 * one `map` request (daemon/PROTOCOL.md) and gets back the slot of every vertex. A daemon that is down
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

/* rm_client_call over RANKMAP_SERVER with the failover rules above. */
static int daemon_call(rmp_call_t *call, json_t *req, json_t **resp, rm_error_t *e)
{
	char buf[4096];
	rm_client_opts_t o = { .servers = servers(call->env.socket, buf, sizeof(buf)),
			       .timeout_ms = call->env.timeout_ms > 0 ? call->env.timeout_ms : RMP_DAEMON_TIMEOUT_MS };
	rm_client_info_t info;
	int rc = rm_client_call_opts(&o, req, resp, &info, e);

	if (info.server > 0 && info.nfailed > 0) {
		snprintf(failover_first, sizeof(failover_first), "%s", info.entry);
		if (!failover_warned++)
			fprintf(stderr, "rankmap: %s: %s; using rankmapd at %s\n", call->fn, info.failed, info.entry);
	}
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

/* The request: {"pattern": {"n", "edges": [[u, v, w]...]}, "slots": [[host, pu]...], "algorithm"}. */
static json_t *map_request(rmp_call_t *call, const map_graph_t *g, const rmp_place_t *pl)
{
	json_t *req = rm_proto_request("map", 1), *edges = json_array(), *slots = json_array();

	for (uint32_t u = 0; req && edges && u < g->n; u++)
		for (uint64_t k = g->xadj[u]; k < g->xadj[u + 1]; k++)
			if (g->adj[k] > u)
				json_array_append_new(
					edges, json_pack("[i, i, f]", (json_int_t)u, (json_int_t)g->adj[k], g->w[k]));
	for (int r = 0; req && slots && r < call->size; r++) {
		topo_slot_t s = pl->target->slot[pl->rank_slot[r]];

		json_array_append_new(slots,
				      json_pack("[s, i]", topo_host_name(pl->cluster, s.host), (json_int_t)s.pu));
	}
	if (!req || !edges || !slots) {
		json_decref(req), json_decref(edges), json_decref(slots);
		return NULL;
	}
	json_object_set_new(req, "pattern", json_pack("{s:i, s:o}", "n", (json_int_t)g->n, "edges", edges));
	json_object_set_new(req, "slots", slots);
	json_object_set_new(req, "algorithm", json_string(call->env.algo));
	if (call->env.budget_ms > 0)
		json_object_set_new(req, "time_budget_ms", json_real(call->env.budget_ms));
	return req;
}

static int cmp_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* (cluster host << 32 | pu, rank) pairs of the placement, sorted: the rank on a slot by bsearch. */
static uint64_t *slot_keys(const rmp_call_t *call, const rmp_place_t *pl)
{
	uint64_t *key = malloc(sizeof(uint64_t) * 2 * (size_t)call->size);

	for (int r = 0; key && r < call->size; r++) {
		topo_slot_t s = pl->target->slot[pl->rank_slot[r]];

		key[2 * r] = (uint64_t)s.host << 32 | s.pu;
		key[2 * r + 1] = (uint64_t)r;
	}
	if (key)
		qsort(key, (size_t)call->size, 2 * sizeof(uint64_t), cmp_key);
	return key;
}

static long rank_of(const rmp_call_t *call, const rmp_place_t *pl, const uint64_t *keys, const char *host,
		    json_int_t pu)
{
	long h = topo_host_find(pl->cluster, host);
	uint64_t k[2] = { (uint64_t)h << 32 | (uint32_t)pu, 0 }, *hit;

	if (h < 0 || pu < 0)
		return -1;
	hit = bsearch(k, keys, (size_t)call->size, 2 * sizeof(uint64_t), cmp_key);
	return hit ? (long)hit[1] : -1;
}

int rmp_daemon_map(rmp_call_t *call, const map_graph_t *g, const rmp_place_t *pl, uint32_t *vrank, map_result_t *res)
{
	json_t *req = map_request(call, g, pl), *resp = NULL, *perm, *slots;
	rm_error_t e = { 0 };
	int rc = 0;
	uint64_t *keys = slot_keys(call, pl);

	if (!req || !keys) {
		json_decref(req);
		free(keys);
		return rm_error_set(&call->err, "rankmapd", 0, 0, "out of memory building the request");
	}
	if (daemon_call(call, req, &resp, &e) != 0) {
		json_decref(resp);
		free(keys);
		return daemon_error(call, &e);
	}
	perm = json_object_get(resp, "permutation");
	slots = json_object_get(resp, "slots");
	if (json_array_size(perm) != g->n) {
		json_decref(resp);
		free(keys);
		return rm_error_set(&call->err, call->env.socket, 0, 0,
				    "rankmapd: 'permutation' has %zu entries, not %u", json_array_size(perm), g->n);
	}
	for (uint32_t v = 0; v < g->n && rc == 0; v++) {
		json_int_t s = json_integer_value(json_array_get(perm, v)), pu = -1;
		const char *host = NULL;
		long r = json_unpack(json_array_get(slots, (size_t)s), "[sI]", &host, &pu) == 0
				 ? rank_of(call, pl, keys, host, pu)
				 : -1;

		if (r < 0)
			rc = rm_error_set(&call->err, call->env.socket, 0, 0,
					  "rankmapd: vertex %u on a slot no rank holds", v);
		else
			vrank[v] = (uint32_t)r;
	}
	free(keys);
	if (json_string_value(json_array_get(json_object_get(resp, "warnings"), 0)))
		snprintf(call->warning, sizeof(call->warning), "%s",
			 json_string_value(json_array_get(json_object_get(resp, "warnings"), 0)));
	res->cost = json_number_value(json_object_get(resp, "cost"));
	res->identity_cost = json_number_value(json_object_get(resp, "identity_cost"));
	snprintf(res->algo, sizeof(res->algo), "rankmapd:%s",
		 json_string_value(json_object_get(resp, "algorithm"))
			 ? json_string_value(json_object_get(resp, "algorithm"))
			 : "?");
	json_decref(resp);
	return rc;
}
