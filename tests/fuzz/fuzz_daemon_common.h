/*
 * tests/fuzz/fuzz_daemon_common.h: an in-process rankmapd context for the daemon targets: the model of
 * tests/data/daemon (four PlaFRIM nodes' hwloc XML and the PlaFRIM fabric) built by the daemon's own
 * srv_model_rebuild, a state directory under the target's temporary directory, and the dispatch the
 * event loop and workers do (srv_request_lookup, then the handler) for one parsed request.
 * The peer is an unprivileged user, so `register` and `reload` stop at the permission check (their XML
 * is fuzzed by fuzz_hwloc_xml: validate_xml is topo_load_hwloc_xmlbuf). A requested time budget above
 * 50 ms is lowered to 50 ms (the daemon bounds it at 60 s; the fuzzer needs many executions).
 */
#ifndef RANKMAP_FUZZ_DAEMON_COMMON_H
#define RANKMAP_FUZZ_DAEMON_COMMON_H

#include "fuzz_util.h"
#include "rm_client.h"
#include "daemon/server/srv.h"
#include "daemon/server/srv_requests.h"

static srv_ctx_t fz_ctx;

static void fz_daemon_init(void)
{
	srv_ctx_t *ctx = &fz_ctx;
	rm_error_t err = { 0 };
	char buf[4300], msg[600];

	setenv("HWLOC_HIDE_ERRORS", "2", 1);
	srv_log_open(1, SRV_LOG_ERR);
	memset(ctx, 0, sizeof(*ctx));
	ctx->lock_fd = ctx->listen_fd = -1;
	pthread_mutex_init(&ctx->model_lock, NULL);
	pthread_mutex_init(&ctx->reg_lock, NULL);
	pthread_mutex_init(&ctx->build_lock, NULL);
	pthread_mutex_init(&ctx->pool_lock, NULL);
	pthread_mutex_init(&ctx->ib_lock, NULL);
	if (!(ctx->registrations = json_object()))
		fz_die("json_object");
	srv_config_defaults(&ctx->cfg);
	snprintf(buf, sizeof(buf), "%s/daemon/hwloc", fz_data());
	ctx->cfg.hwloc_dir = strdup(buf);
	snprintf(buf, sizeof(buf), "%s/plafrim/ib/ib-subnet0.txt", fz_data());
	ctx->cfg.ib_files[ctx->cfg.n_ib_files++] = strdup(buf);
	snprintf(buf, sizeof(buf), "%s/state", fz_dir());
	free(ctx->cfg.state_dir);
	ctx->cfg.state_dir = strdup(buf);
	snprintf(buf, sizeof(buf), "%s/state/ib-live.cache", fz_dir());
	ctx->ib_cache_path = strdup(buf);
	if (srv_state_init(ctx->cfg.state_dir, &err) < 0 || srv_model_rebuild(ctx, 0, &err) < 0 || !ctx->model) {
		fprintf(stderr, "fuzz harness: model: %s\n", rm_error_format(&err, msg, sizeof(msg)));
		abort();
	}
}

/* Lowers "time_budget_ms" of a map request to 50 ms at most. */
static void fz_clamp_budget(json_t *req)
{
	json_t *b = json_object_get(req, "time_budget_ms");

	if (json_is_number(b) && json_number_value(b) > 50)
		json_object_set_new(req, "time_budget_ms", json_integer(50));
}

/* Runs one request as the daemon would and checks the response is a well-formed answer. */
static void fz_dispatch(json_t *req)
{
	srv_peer_t peer = { .pid = getpid(), .uid = 4242, .gid = 4242 };
	json_t *resp = NULL, *id;
	srv_handler_t h;
	int flags = 0;
	size_t len;
	char *out;

	fz_clamp_budget(req);
	h = srv_request_lookup(&fz_ctx, req, &peer, &flags, &resp);
	if (h) {
		id = json_object_get(req, "id");
		resp = h(&fz_ctx, req, id, &peer);
	}
	if (!resp)
		return; /* the workers answer "internal" then */
	if (!json_is_object(resp) || !json_is_boolean(json_object_get(resp, "ok")) ||
	    json_integer_value(json_object_get(resp, "version")) != RM_PROTO_VERSION)
		abort(); /* every answer carries version and ok */
	if (json_is_false(json_object_get(resp, "ok")) &&
	    !json_is_string(json_object_get(json_object_get(resp, "error"), "code")))
		abort(); /* every error has a code */
	out = rm_frame_encode(resp, &len);
	free(out);
	json_decref(resp);
}

#endif
