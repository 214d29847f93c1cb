/*
 * daemon/server/srv_requests.c: the request table, the envelope check, and the
 * requests about the model itself (ping, hosts, report, distance, register, reload). map and order
 * are in srv_map.c. Every request is validated with json_unpack_ex(..., JSON_STRICT, ...); when that
 * fails, srv_request_invalid() (srv_schema.c) names the offending field from the request's schema.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostlist.h"
#include "order.h"
#include "report_svg.h"
#include "rm_client.h"
#include "srv.h"
#include "srv_requests.h"
#include "topo_report.h"
#include "topo_slurm.h"

static const struct req_def {
	const char *type;
	srv_handler_t fn;
	int flags;
} requests[] = {
	{ "ping", srv_req_ping, SRV_REQ_INLINE },
	{ "hosts", srv_req_hosts, 0 },
	{ "report", srv_req_report, SRV_REQ_ISOLATED },
	{ "distance", srv_req_distance, SRV_REQ_ISOLATED },
	{ "map", srv_req_map, SRV_REQ_ISOLATED },
	{ "order", srv_req_order, SRV_REQ_ISOLATED },
	{ "simulate", srv_req_simulate, SRV_REQ_ISOLATED },
	{ "slurm_topology", srv_req_slurm_topology, SRV_REQ_ISOLATED },
	{ "register", srv_req_register, SRV_REQ_PRIVILEGED },
	{ "reload", srv_req_reload, SRV_REQ_PRIVILEGED },
	/* learned patterns (srv_patterns.c): per peer uid, root sees all */
	{ "pattern_get", srv_req_pattern_get, 0 },
	{ "pattern_put", srv_req_pattern_put, 0 },
	{ "pattern_list", srv_req_pattern_list, 0 },
	{ "pattern_forget", srv_req_pattern_forget, 0 },
};

#define NREQ (sizeof(requests) / sizeof(requests[0]))

json_t *srv_frame_parse(srv_ctx_t *ctx, const char *buf, size_t len, rm_error_t *err)
{
	__atomic_add_fetch(&ctx->n_parses, 1, __ATOMIC_RELAXED);
	return rm_frame_parse(buf, len, err);
}

/* The flags of the type named by the string value at s[i] (just past its opening quote); -1 if none. */
static int peek_type(const char *s, size_t i, size_t n)
{
	size_t st = i, k;

	while (i < n && s[i] != '"' && s[i] != '\\')
		i++;
	if (i >= n || s[i] != '"')
		return -1;
	for (k = 0; k < NREQ; k++)
		if (strlen(requests[k].type) == i - st && !memcmp(requests[k].type, s + st, i - st))
			return requests[k].flags;
	return -1;
}

int srv_request_peek(const char *s, size_t n)
{
	size_t i = 0, st;
	int depth = 0, want_key = 1, is_type = 0, esc;

	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
		i++;
	if (i >= n || s[i] != '{')
		return -1;
	for (depth = 1, i++; i < n; i++) {
		if (s[i] == '"') {
			if (depth == 1 && is_type)
				return peek_type(s, i + 1, n);
			for (st = ++i, esc = 0; i < n && s[i] != '"'; i++)
				if (s[i] == '\\')
					esc = 1, i++;
			if (i >= n)
				return -1;
			if (depth == 1 && want_key) {
				is_type = !esc && i - st == 4 && !memcmp(s + st, "type", 4);
				want_key = 0;
			}
		} else if (s[i] == '{' || s[i] == '[') {
			if (depth == 1 && is_type)
				return -1;
			depth++;
		} else if (s[i] == '}' || s[i] == ']') {
			if (--depth == 0)
				return -1;
		} else if (depth == 1 && s[i] == ',') {
			want_key = 1;
			is_type = 0;
		} else if (depth == 1 && is_type && s[i] != ':' && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' &&
			   s[i] != '\n') {
			return -1; /* "type" is not a string: the parse names the error */
		}
	}
	return -1;
}

srv_handler_t srv_request_lookup(srv_ctx_t *ctx, const json_t *req, const srv_peer_t *peer, int *flags, json_t **error)
{
	json_t *jv = json_object_get(req, "version"), *jt = json_object_get(req, "type");
	json_t *id = json_object_get(req, "id");
	size_t i;

	*error = NULL;
	if (id && !json_is_integer(id) && !json_is_string(id))
		id = NULL;
	if (!json_is_integer(jv))
		return *error = rm_proto_error(id, RM_ERR_BAD_VERSION, "missing or non-integer field 'version'"), NULL;
	if (json_integer_value(jv) != RM_PROTO_VERSION)
		return *error = rm_proto_error(id, RM_ERR_BAD_VERSION,
					       "protocol version %lld not supported "
					       "(this daemon speaks version %d)",
					       (long long)json_integer_value(jv), RM_PROTO_VERSION),
		       NULL;
	if (!id)
		return *error = rm_proto_error(NULL, RM_ERR_BAD_REQUEST, "missing field 'id' (integer or string)"),
		       NULL;
	if (!json_is_string(jt))
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "missing field 'type' (string)"), NULL;
	for (i = 0; i < NREQ; i++)
		if (!strcmp(requests[i].type, json_string_value(jt)))
			break;
	if (i == NREQ)
		return *error = rm_proto_error(id, RM_ERR_UNKNOWN_TYPE, "unknown request type '%.*s'",
					       rm_utf8_prefix(json_string_value(jt), 64), json_string_value(jt)),
		       NULL;
	if ((requests[i].flags & SRV_REQ_PRIVILEGED) && peer->uid != 0 &&
	    !(ctx->cfg.has_slurm_uid && peer->uid == ctx->cfg.slurm_uid)) {
		char who[128];
		srv_log(SRV_LOG_NOTICE, "%s refused to %s: permission_denied: only root%s%s", requests[i].type,
			srv_peer_describe(peer, who, sizeof(who)), ctx->cfg.has_slurm_uid ? " and " : "",
			ctx->cfg.has_slurm_uid ? ctx->cfg.slurm_user : "");
		return *error = rm_proto_error(id, RM_ERR_PERMISSION, "'%s' is allowed only to root%s%s",
					       requests[i].type, ctx->cfg.has_slurm_uid ? " and " : "",
					       ctx->cfg.has_slurm_uid ? ctx->cfg.slurm_user : ""),
		       NULL;
	}
	*flags = requests[i].flags;
	return requests[i].fn;
}

/* ---- ping, hosts, report -------------------------------------------------------------------------- */

json_t *srv_req_ping(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	json_error_t jerr;
	json_t *resp;
	unsigned long gen;

	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT, "{s:i, s:s, s:o}", "version", &(int){ 0 }, "type",
			   &(const char *){ NULL }, "id", &(json_t *){ NULL }) < 0)
		return srv_request_invalid(req, id, SRV_ENVELOPE, &jerr);
	pthread_mutex_lock(&ctx->model_lock);
	gen = ctx->model ? ctx->model->generation : 0;
	pthread_mutex_unlock(&ctx->model_lock);
	resp = rm_proto_ok(id);
	json_object_update_new(resp, json_pack("{s:s, s:s, s:I, s:I, s:o}", "pong", "rankmapd", "server_version",
					       RANKMAP_VERSION, "generation", (json_int_t)gen, "uptime_s",
					       (json_int_t)((srv_now_ms() - ctx->started_at) / 1000), "last_reload",
					       srv_reload_json(ctx)));
	/* who asked, as the daemon sees it: transport, peer address, authenticated uid */
	json_object_update_new(resp, json_pack("{s:s, s:s, s:I, s:I}", "transport",
					       peer->transport == SRV_PEER_TCP ? "tcp" : "unix", "peer", peer->addr,
					       "uid", (json_int_t)peer->uid, "gid", (json_int_t)peer->gid));
	return resp;
}

json_t *srv_req_hosts(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	json_error_t jerr;
	srv_model_t *m;
	json_t *list, *resp;
	size_t h, n;

	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT, "{s:i, s:s, s:o}", "version", &(int){ 0 }, "type",
			   &(const char *){ NULL }, "id", &(json_t *){ NULL }) < 0)
		return srv_request_invalid(req, id, SRV_ENVELOPE, &jerr);
	if (!(m = srv_model_get(ctx)))
		return rm_proto_error(id, RM_ERR_NO_MODEL, "no model loaded");
	n = topo_nhosts(m->cluster);
	list = json_array();
	for (h = 0; h < n; h++)
		json_array_append_new(list, json_pack("{s:s, s:i, s:i}", "name", topo_host_name(m->cluster, h), "pus",
						      (int)topo_host_npus(m->cluster, h), "cores",
						      (int)topo_host_ncores(m->cluster, h)));
	resp = rm_proto_ok(id);
	json_object_set_new(resp, "generation", json_integer((json_int_t)m->generation));
	json_object_set_new(resp, "hosts", list);
	srv_model_put(m);
	return resp;
}

static json_t *daemon_status(srv_ctx_t *ctx, const srv_model_t *m)
{
	json_t *st, *ib;

	pthread_mutex_lock(&ctx->ib_lock);
	ib = ctx->ib_status ? json_deep_copy(ctx->ib_status) : json_null();
	pthread_mutex_unlock(&ctx->ib_lock);
	st = json_pack("{s:s, s:I, s:I, s:f, s:O, s:O, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "server_version",
		       RANKMAP_VERSION, "generation", (json_int_t)m->generation, "built_at", (json_int_t)m->built_at,
		       "build_ms", m->build_ms, "sources", m->sources, "warnings", m->warnings, "hosts",
		       (json_int_t)topo_nhosts(m->cluster), "registered", (json_int_t)m->nregistered, "requests",
		       (json_int_t)__atomic_load_n(&ctx->n_requests, __ATOMIC_RELAXED), "errors",
		       (json_int_t)__atomic_load_n(&ctx->n_errors, __ATOMIC_RELAXED), "connections",
		       (json_int_t)__atomic_load_n(&ctx->n_connections, __ATOMIC_RELAXED), "rejected",
		       (json_int_t)__atomic_load_n(&ctx->n_rejected, __ATOMIC_RELAXED), "ib_live", ib);
	json_object_set_new(st, "parses", json_integer((json_int_t)__atomic_load_n(&ctx->n_parses, __ATOMIC_RELAXED)));
	json_object_set_new(st, "last_reload", srv_reload_json(ctx));
	return st;
}

/* The report's picture (topo_report_svg, with the torus order picture below it when the model has a
 * torus: method, default bbb) as one string; NULL with *error set. */
static json_t *report_svg(topo_cluster_t c, const char *method, const json_t *id, json_t **error)
{
	char *svg = NULL, *extra = NULL;
	size_t len = 0, elen = 0;
	rm_error_t err = { 0 };
	order_t *ord = NULL;
	FILE *m;
	json_t *s = NULL;

	if (topo_torus(c) && !(ord = order_build(topo_torus(c), method ? method : "bbb", NULL, &err))) {
		*error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "order: %s", err.text);
		return NULL;
	}
	if (ord && (m = open_memstream(&extra, &elen))) {
		order_write(ord, ORDER_FMT_SVG, NULL, m, &err);
		fclose(m);
	}
	if ((m = open_memstream(&svg, &len))) {
		int rc = topo_report_svg(c, extra, m, &err);

		if (fclose(m) == 0 && rc == 0)
			s = json_stringn(svg, len);
	}
	if (!s)
		*error = rm_proto_error(id, RM_ERR_INTERNAL, "svg: %s", err.text[0] ? err.text : "out of memory");
	order_destroy(ord);
	free(extra);
	free(svg);
	return s;
}

json_t *srv_req_report(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	json_error_t jerr;
	srv_model_t *m;
	json_t *resp, *rep = NULL, *svg = NULL, *error = NULL;
	const char *order = NULL;
	int want_svg = 0;

	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT, "{s:i, s:s, s:o, s?b, s?s}", "version", &(int){ 0 },
			   "type", &(const char *){ NULL }, "id", &(json_t *){ NULL }, "svg", &want_svg, "order",
			   &order) < 0)
		return srv_request_invalid(req, id, SRV_ENVELOPE " svg?b order?s", &jerr);
	if (!(m = srv_model_get(ctx)))
		return rm_proto_error(id, RM_ERR_NO_MODEL, "no model loaded");
	if (want_svg && !(svg = report_svg(m->cluster, order, id, &error))) {
		srv_model_put(m);
		return error;
	}
	rep = topo_cluster_report(m->cluster);
	resp = rm_proto_ok(id);
	json_object_set_new(resp, "daemon", daemon_status(ctx, m));
	json_object_set_new(resp, "report", rep ? rep : json_null());
	if (svg)
		json_object_set_new(resp, "svg", svg);
	srv_model_put(m);
	return resp;
}

/* ---- distance ------------------------------------------------------------------------------------- */

int srv_parse_slot(topo_cluster_t c, const json_t *v, const json_t *id, const char *field, topo_slot_t *slot,
		   json_t **error)
{
	const char *host = NULL;
	json_int_t pu = 0;
	long h;

	if (json_is_string(v))
		host = json_string_value(v);
	else if (json_unpack((json_t *)v, "[sI!]", &host, &pu) < 0)
		return *error =
			       rm_proto_error(id, RM_ERR_BAD_REQUEST, "%s: expected \"host\" or [\"host\", pu]", field),
		       -1;
	h = topo_host_find(c, host);
	if (h < 0)
		return *error = rm_proto_error(id, RM_ERR_NOT_FOUND, "%s: unknown host '%.*s'", field,
					       rm_utf8_prefix(host, 128), host),
		       -1;
	if (pu < 0 || (topo_host_npus(c, (size_t)h) && pu >= (json_int_t)topo_host_npus(c, (size_t)h)))
		return *error = rm_proto_error(id, RM_ERR_NOT_FOUND, "%s: host %s has no PU %lld", field, host,
					       (long long)pu),
		       -1;
	slot->host = (uint32_t)h;
	slot->pu = (uint32_t)pu;
	return 0;
}

#define DISTANCE_SCHEMA SRV_ENVELOPE " hosts?a slots?a"

json_t *srv_req_distance(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	json_error_t jerr;
	json_t *hosts = NULL, *slots = NULL, *pair, *resp, *error = NULL;
	topo_slot_t s[2];
	srv_model_t *m;
	double d;
	int i;

	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT, "{s:i, s:s, s:o, s?o, s?o}", "version", &(int){ 0 },
			   "type", &(const char *){ NULL }, "id", &(json_t *){ NULL }, "hosts", &hosts, "slots",
			   &slots) < 0)
		return srv_request_invalid(req, id, DISTANCE_SCHEMA, &jerr);
	pair = hosts ? hosts : slots;
	if (!pair || (hosts && slots) || json_array_size(pair) != 2)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST,
				      "give either 'hosts': [a, b] or 'slots': "
				      "[[host, pu], [host, pu]]");
	if (!(m = srv_model_get(ctx)))
		return rm_proto_error(id, RM_ERR_NO_MODEL, "no model loaded");
	for (i = 0; i < 2; i++) {
		const json_t *v = json_array_get(pair, (size_t)i);
		if ((hosts && !json_is_string(v)) ||
		    srv_parse_slot(m->cluster, v, id, hosts ? "hosts" : "slots", &s[i], &error) < 0) {
			srv_model_put(m);
			return error ? error : rm_proto_error(id, RM_ERR_BAD_REQUEST, "hosts: expected host names");
		}
	}
	d = topo_slot_distance(m->cluster, s[0], s[1]);
	resp = rm_proto_ok(id);
	json_object_update_new(resp, topo_distance_json(m->cluster, s[0].host, s[1].host, d));
	srv_model_put(m);
	return resp;
}

/* ---- register and reload ------------------------------------------------------------------------- */

#define REGISTER_SCHEMA SRV_ENVELOPE " host:s xml:s"

json_t *srv_req_register(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	const char *host, *xml;
	size_t len;
	json_error_t jerr;
	rm_error_t err = { 0 };
	char msg[600];
	unsigned long seq;

	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT, "{s:i, s:s, s:o, s:s, s:s%}", "version", &(int){ 0 },
			   "type", &(const char *){ NULL }, "id", &(json_t *){ NULL }, "host", &host, "xml", &xml,
			   &len) < 0)
		return srv_request_invalid(req, id, REGISTER_SCHEMA, &jerr);
	if (!ctx->cfg.allow_register)
		return rm_proto_error(id, RM_ERR_PERMISSION, "registration is disabled (allow_register = no)");
	if (!srv_state_host_ok(host))
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "host: '%.*s' is not a valid host name",
				      rm_utf8_prefix(host, 64), host);
	if (!srv_net_register_allowed(ctx, peer, host, msg, sizeof(msg))) {
		char who[128];
		srv_log(SRV_LOG_NOTICE, "register of %s refused to %s: permission_denied: %s", host,
			srv_peer_describe(peer, who, sizeof(who)), msg);
		return rm_proto_error(id, RM_ERR_PERMISSION, "register: %s", msg);
	}
	/* parsed once, here: in a child when the hardware is new (a crash costs this request only) */
	if (!(seq = srv_model_pool_add(ctx, host, xml, len, &err))) {
		/* a parser that hung or had no memory says nothing of the XML: refused as transient, nothing
		 * kept, so that the registrant tries again (and a backup that got the same XML agrees after) */
		int e = errno;

		rm_error_format(&err, msg, sizeof(msg));
		if (e == ETIMEDOUT || e == ENOMEM)
			return rm_proto_error(id, e == ETIMEDOUT ? RM_ERR_TIMEOUT : RM_ERR_INTERNAL,
					      "xml: %s; nothing of this registration was kept: register again", msg);
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "xml: %s", msg);
	}
	/* saved with the registrations that arrive together, the model updated once for them all; answered
	 * once durable (srv_commit.c) */
	return srv_commit_register(ctx, host, xml, len, seq, id, peer);
}

json_t *srv_reload_json(srv_ctx_t *ctx)
{
	json_t *r;

	pthread_mutex_lock(&ctx->ib_lock);
	r = !ctx->last_reload.at
		    ? json_null()
		    : json_pack("{s:I, s:b}", "at", (json_int_t)ctx->last_reload.at, "ok", ctx->last_reload.ok);
	if (r && ctx->last_reload.at && !ctx->last_reload.ok)
		json_object_set_new(r, "error", json_string(ctx->last_reload.error));
	pthread_mutex_unlock(&ctx->ib_lock);
	return r;
}

/* A request field that is a Slurm host list, expanded into at most SRV_HOSTLIST_MIN_CAP names or twice
 * the model's hosts, whichever is larger: the expansion stops at the bound (hostlist_expand counts a range
 * before expanding it), so that "x[0-999999]" costs no million names. NULL with *error (bad_request
 * naming field) when the list is malformed, empty or too long. */
char **srv_hostlist_bounded(const srv_model_t *m, const char *list, const char *field, const json_t *id, size_t *n,
			    json_t **error)
{
	size_t nh = m && m->cluster ? topo_nhosts(m->cluster) : 0;
	size_t cap = nh > SRV_HOSTLIST_MIN_CAP / 2 ? 2 * nh : SRV_HOSTLIST_MIN_CAP, longest = 0, len = 0;
	rm_error_t err = { 0 };
	char msg[600], **v;
	int depth = 0;

	if (!*list) {
		*error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "%s: empty host list", field);
		return NULL;
	}
	/* A name is never longer than the comma-separated part that gives it (each [range] becomes one
	 * number no longer than the range's text): bound the names' length, and their bytes in all */
	for (const char *p = list;; p++) {
		if (!*p || (*p == ',' && depth == 0)) {
			longest = len > longest ? len : longest;
			len = 0;
			if (!*p)
				break;
			continue;
		}
		depth += *p == '[' ? 1 : *p == ']' ? -1 : 0;
		len++;
	}
	if (longest > SRV_HOSTNAME_MAX) {
		*error =
			rm_proto_error(id, RM_ERR_BAD_REQUEST, "%s: a host name pattern of %zu characters (at most %d)",
				       field, longest, SRV_HOSTNAME_MAX);
		return NULL;
	}
	if (cap > SRV_HOSTLIST_MAX_BYTES / (longest + 1))
		cap = SRV_HOSTLIST_MAX_BYTES / (longest + 1);
	if ((v = hostlist_expand(list, n, cap, &err)))
		return v;
	rm_error_format(&err, msg, sizeof(msg));
	if (strstr(err.text, "too many hosts"))
		*error = rm_proto_error(
			id, RM_ERR_BAD_REQUEST,
			"%s: more than %zu host names (at most %d, or twice the model's %zu hosts, and %d MiB "
			"of names): %s",
			field, cap, SRV_HOSTLIST_MIN_CAP, nh, SRV_HOSTLIST_MAX_BYTES >> 20, msg);
	else
		*error = rm_proto_error(id, strstr(err.text, "out of memory") ? RM_ERR_INTERNAL : RM_ERR_BAD_REQUEST,
					"%s: %s", field, msg);
	return NULL;
}

static json_t *slurm_topology_ok(const json_t *id, const topo_swtree_t *t, const char *text)
{
	json_t *resp = rm_proto_ok(id);

	json_object_update_new(
		resp,
		json_pack("{s:s, s:I, s:I, s:s?, s:I, s:s?, s:I, s:I, s:I, s:s?}", "topology_conf", text ? text : "",
			  "trees", (json_int_t)t->ntrees, "guid_hcas", (json_int_t)t->nguid_host, "first_guid_hca",
			  t->nguid_host ? t->guid_host[0].name : NULL, "unplaced", (json_int_t)t->nunplaced,
			  "first_unplaced", t->nunplaced ? t->unplaced[0] : NULL, "multihomed",
			  (json_int_t)t->nmultihomed, "excluded", (json_int_t)t->nexcluded, "missing",
			  (json_int_t)t->nmissing, "first_missing", t->nmissing ? t->missing[0] : NULL));
	return resp;
}

/* Slurm's topology.conf from the model's fabric (topo_slurm.h), with what rankmapctl warns about. */
json_t *srv_req_slurm_topology(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	json_error_t jerr;
	rm_error_t err = { 0 };
	const char *top = NULL, *format = NULL, *nodes = NULL;
	topo_slurm_format_t fmt = TOPO_SLURM_TREE;
	int all = 0;
	srv_model_t *m;
	topo_swtree_t *t = NULL;
	json_t *resp = NULL;
	char *text = NULL, msg[600], **keep = NULL;
	size_t len = 0, nkeep = 0;
	FILE *f;

	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT, "{s:i, s:s, s:o, s?b, s?s, s?s, s?s}", "version",
			   &(int){ 0 }, "type", &(const char *){ NULL }, "id", &(json_t *){ NULL }, "all_leaves", &all,
			   "top", &top, "format", &format, "nodes", &nodes) < 0)
		return srv_request_invalid(req, id, SRV_ENVELOPE " all_leaves?b top?s format?s nodes?s", &jerr);
	if (top && (!topo_slurm_sanitise(top, msg, sizeof(msg))[0] || strcmp(msg, top)))
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "top: use letters, digits, '.', '_' and '-' only");
	if (format && topo_slurm_format_parse(format, &fmt) < 0)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "format: tree, block, yaml or weights");
	if (all && fmt != TOPO_SLURM_TREE)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "all_leaves: for format tree only");
	if (nodes && !*nodes)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST,
				      "nodes: empty host list (leave 'nodes' out for every host)");
	if (!(m = srv_model_get(ctx)))
		return rm_proto_error(id, RM_ERR_NO_MODEL, "no model loaded");
	if (nodes && !(keep = srv_hostlist_bounded(m, nodes, "nodes", id, &nkeep, &resp))) {
		srv_model_put(m);
		return resp;
	}
	t = topo_swtree_build_keep(m->cluster, (all ? TOPO_SWTREE_ALL_LEAVES : 0) | TOPO_SWTREE_NAMED_ONLY,
				   (const char *const *)keep, nkeep, &err);
	if (t && t->filtered && !t->nplaced) /* the request's own list, not the daemon, leaves nothing */
		resp = rm_proto_error(id, RM_ERR_BAD_REQUEST,
				      "nodes: none of its %zu names is a host of the fabric: nothing to write", nkeep);
	else if (t && (f = open_memstream(&text, &len))) {
		int rc = topo_slurm_write(m->cluster, t, fmt, top, f, &err);

		if (fclose(f) == 0 && rc == 0)
			resp = slurm_topology_ok(id, t, text);
	}
	if (!resp)
		resp = rm_proto_error(id, t ? RM_ERR_INTERNAL : RM_ERR_FAILED, "%s",
				      rm_error_isset(&err) ? rm_error_format(&err, msg, sizeof(msg)) : "out of memory");
	free(text);
	topo_swtree_destroy(t);
	hostlist_free(keep);
	srv_model_put(m);
	return resp;
}

/* Rediscovers the live fabric (if configured) and rebuilds the model from every source; the result is
 * kept for ping and report. */
static int reload(srv_ctx_t *ctx, rm_error_t *err)
{
	rm_error_t ierr = { 0 };
	char msg[600];
	int rc;

	if (ctx->cfg.ib_live && srv_model_ib_discover(ctx, &ierr) < 0)
		srv_log(SRV_LOG_WARNING, "fabric discovery: %s", rm_error_format(&ierr, msg, sizeof(msg)));
	rc = srv_model_rebuild(ctx, 0, err);
	msg[0] = '\0';
	if (rc < 0)
		rm_error_format(err, msg, sizeof(msg));
	pthread_mutex_lock(&ctx->ib_lock);
	ctx->last_reload.at = (long long)time(NULL);
	ctx->last_reload.ok = rc == 0;
	snprintf(ctx->last_reload.error, sizeof(ctx->last_reload.error), "%.*s",
		 rm_utf8_prefix(msg, sizeof(ctx->last_reload.error) - 1), msg);
	pthread_mutex_unlock(&ctx->ib_lock);
	return rc;
}

json_t *srv_req_reload(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	json_error_t jerr;
	rm_error_t err = { 0 };
	char msg[600];
	srv_model_t *m;
	json_t *resp;

	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT, "{s:i, s:s, s:o}", "version", &(int){ 0 }, "type",
			   &(const char *){ NULL }, "id", &(json_t *){ NULL }) < 0)
		return srv_request_invalid(req, id, SRV_ENVELOPE, &jerr);
	srv_log(SRV_LOG_NOTICE, "reload requested by uid %u (pid %d)", (unsigned)peer->uid, (int)peer->pid);
	if (reload(ctx, &err) < 0) {
		rm_error_format(&err, msg, sizeof(msg));
		srv_log(SRV_LOG_ERR, "reload failed, the previous model stays: %s", msg);
		return rm_proto_error(id, RM_ERR_FAILED, "reload failed, the previous model stays: %s", msg);
	}
	m = srv_model_get(ctx);
	resp = rm_proto_ok(id);
	json_object_set_new(resp, "generation", json_integer(m ? (json_int_t)m->generation : 0));
	json_object_set_new(resp, "hosts", json_integer(m ? (json_int_t)topo_nhosts(m->cluster) : 0));
	json_object_set_new(resp, "warnings", m ? json_incref(m->warnings) : json_array());
	srv_model_put(m);
	return resp;
}

void srv_job_reload(srv_ctx_t *ctx)
{
	rm_error_t err = { 0 };
	char msg[600];

	if (reload(ctx, &err) < 0)
		srv_log(SRV_LOG_ERR, "reload failed, the previous model stays: %s",
			rm_error_format(&err, msg, sizeof(msg)));
}

void srv_job_ib_refresh(srv_ctx_t *ctx)
{
	srv_log(SRV_LOG_DEBUG, "periodic fabric refresh");
	srv_job_reload(ctx);
}
