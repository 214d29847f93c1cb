/*
 * daemon/server/srv_requests.h: request handlers of rankmapd (srv_requests.c, srv_map.c, srv_sim.c,
 * srv_patterns.c). Each validates its request strictly and returns a response (new reference):
 * rm_proto_ok() + fields, or rm_proto_error().
 */
#ifndef RANKMAP_SRV_REQUESTS_H
#define RANKMAP_SRV_REQUESTS_H

#include "srv.h"

/* Schema of the envelope, and of each request (names, ':' required / '?' optional, type letter:
 * s string, i integer, f number, b boolean, a array, o object, I integer or string, * any). */
#define SRV_ENVELOPE "version:i type:s id:I"

/* Builds the bad_request error naming the offending field of req against schema. New reference. */
json_t *srv_request_invalid(const json_t *req, const json_t *id, const char *schema, const json_error_t *jerr);

/* A request field holding a Slurm host list (slurm_topology's nodes): expanded into at most the larger of
 * SRV_HOSTLIST_MIN_CAP and twice the model's hosts (fewer for long names, below), refused beyond without
 * expanding it all. Returns the
 * names (hostlist_free; count in *n), or NULL with *error set: bad_request naming field (empty,
 * malformed, too many names), internal when out of memory. */
#define SRV_HOSTLIST_MIN_CAP 100000
/* ... and to names of at most SRV_HOSTNAME_MAX characters, SRV_HOSTLIST_MAX_BYTES of them in all (fewer
 * names when they are long: a 1 KB request must not make 100 MB of names) */
#define SRV_HOSTNAME_MAX 255
#define SRV_HOSTLIST_MAX_BYTES (16 << 20)
char **srv_hostlist_bounded(const srv_model_t *m, const char *list, const char *field, const json_t *id, size_t *n,
			    json_t **error);

json_t *srv_req_ping(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);
json_t *srv_req_hosts(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);
json_t *srv_req_report(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);
json_t *srv_req_distance(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);
json_t *srv_req_map(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);
json_t *srv_req_order(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);
json_t *srv_req_slurm_topology(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);
json_t *srv_req_simulate(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);
json_t *srv_req_register(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);
json_t *srv_req_reload(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);
/* Learned patterns (srv_patterns.c). */
json_t *srv_req_pattern_get(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);
json_t *srv_req_pattern_put(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);
json_t *srv_req_pattern_list(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);
json_t *srv_req_pattern_forget(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);

/* Resolves a [host, pu] pair or a host name against the model: 0, or -1 with *error set. */
int srv_parse_slot(topo_cluster_t c, const json_t *v, const json_t *id, const char *field, topo_slot_t *slot,
		   json_t **error);

/* The torus of an order or simulate request: from its dims, wrap, link_cost and nodes_per_router
 * (dims NULL: the model's torus), each range-checked before conversion. 0, or -1 with *error set naming
 * the field (srv_map.c). */
int srv_order_spec(srv_ctx_t *ctx, const json_t *dims, const json_t *wrap, const json_t *cost, json_int_t npr,
		   topo_torus_spec_t *spec, const json_t *id, json_t **error);

#endif
