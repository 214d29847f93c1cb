/*
 * daemon/ctl/ctl_common.c: what the rankmapctl subcommands share (see ctl_common.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl_common.h"
#include "hostlist.h"
#include "rm_client.h"
#include "rm_tmpfile.h"
#include "order.h"
#include "mapping.h"

int ctl_fail(const char *cmd, const rm_error_t *err, const char *what)
{
	char buf[RM_ERROR_SOURCE_LEN + RM_ERROR_TEXT_LEN + 32];
	int e = errno;

	fprintf(stderr, "rankmapctl%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	if (err && rm_error_isset(err))
		fprintf(stderr, "%s\n", rm_error_format(err, buf, sizeof(buf)));
	else
		fprintf(stderr, "%s: %s\n", what ? what : "error", strerror(e));
	return 1;
}

int ctl_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rankmapctl %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'rankmapctl %s --help'.\n", cmd);
	return 2;
}

int ctl_daemon_opt(ctl_daemon_t *d, int c, const char *arg)
{
	switch (c) {
	case CTL_OPT_SOCKET: d->socket = arg; return 1;
	case CTL_OPT_SERVER_UID: /* read by the client library (rm_auth_server_uid) wherever rankmapctl calls it */
		return setenv(RM_SERVER_UID_ENV, arg, 1) == 0 ? 1 : -1;
	default: return 0;
	}
}

int ctl_daemon_set(const ctl_daemon_t *d)
{
	return d->socket != NULL;
}

int ctl_daemon_env(ctl_daemon_t *d)
{
	if (!ctl_daemon_set(d))
		d->socket = rm_client_socket_from_env();
	return ctl_daemon_set(d);
}

const char *ctl_daemon_name(const ctl_daemon_t *d)
{
	return d->socket ? d->socket : "(no daemon)";
}

const char *ctl_socket(const char *opt)
{
	return opt ? opt : rm_client_socket_from_env();
}

void ctl_failover_note(const char *cmd, const rm_client_info_t *info)
{
	if (info->nfailed > 0 && info->server >= 0)
		fprintf(stderr, "rankmapctl %s: warning: %s%s; answered by %s\n", cmd, info->failed,
			info->nfailed > 1 ? " (and more)" : "", info->entry);
}

json_t *ctl_call(const char *cmd, const ctl_daemon_t *d, json_t *req, int timeout_ms)
{
	const char *socket = d->socket ? d->socket : RM_SOCKET_DEFAULT;
	rm_client_opts_t o = { .servers = socket, .timeout_ms = timeout_ms };
	rm_client_info_t info;
	rm_error_t err = { 0 };
	json_t *resp = NULL;
	char msg[RM_ERROR_SOURCE_LEN + RM_ERROR_TEXT_LEN + 32];

	if (!req) {
		fprintf(stderr, "rankmapctl %s: out of memory\n", cmd);
		return NULL;
	}
	if (rm_client_call_opts(&o, req, &resp, &info, &err) == 0) {
		ctl_failover_note(cmd, &info);
		return resp;
	}
	rm_error_format(&err, msg, sizeof(msg));
	if (resp) /* the daemon answered with an error */
		fprintf(stderr, "rankmapctl %s: rankmapd at %s: %s\n", cmd, socket, msg);
	else if (strstr(msg, socket)) /* the client library names the socket */
		fprintf(stderr, "rankmapctl %s: %s\n", cmd, msg);
	else
		fprintf(stderr, "rankmapctl %s: rankmapd at %s: %s\n", cmd, socket, msg);
	json_decref(resp);
	return NULL;
}

void ctl_print_last_reload(FILE *f, const json_t *lr)
{
	time_t at = (time_t)json_integer_value(json_object_get(lr, "at"));
	char when[64];

	if (!json_is_object(lr) || !at) {
		fprintf(f, "last reload: none since start\n");
		return;
	}
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&at));
	if (json_is_true(json_object_get(lr, "ok")))
		fprintf(f, "last reload: %s, ok\n", when);
	else
		fprintf(f, "last reload: %s, FAILED (the previous model serves): %s\n", when,
			json_string_value(json_object_get(lr, "error"))
				? json_string_value(json_object_get(lr, "error"))
				: "?");
}

FILE *ctl_open_output(const char *cmd, const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdout;
	if (!(f = fopen(path, "w")))
		fprintf(stderr, "rankmapctl %s: %s: cannot create the output file: %s\n", cmd, path, strerror(errno));
	return f;
}

int ctl_close_output(const char *cmd, FILE *f, const char *path, int rc)
{
	int bad = f == stdout ? fflush(f) != 0 : fclose(f) != 0;

	if (bad && rc == 0) {
		fprintf(stderr, "rankmapctl %s: %s: write failed: %s\n", cmd, f == stdout ? "standard output" : path,
			strerror(errno));
		return 1;
	}
	return rc;
}

void ctl_print_json(FILE *f, const json_t *o, size_t flags)
{
	json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | flags);
	fputc('\n', f);
}

char **ctl_job_hosts(topo_cluster_t c, const char *list, size_t *n, rm_error_t *err)
{
	size_t h, k = 0, nh = topo_nhosts(c);
	char **names;

	if (list)
		return hostlist_expand(list, n, 0, err);
	names = calloc(nh + 1, sizeof(*names));
	for (h = 0; names && h < nh; h++) {
		if (topo_host_npus(c, h) == 0)
			continue;
		names[k] = strdup(topo_host_name(c, h));
		if (!names[k++]) {
			hostlist_free(names);
			return NULL;
		}
	}
	if (names && k == 0) {
		rm_error_set(err, "--cluster", 0, 0, "no host of the cluster has hardware data");
		hostlist_free(names);
		return NULL;
	}
	*n = k;
	return names;
}

topo_target_t *ctl_load_target(const char *tleaf, const char *cluster, const char *hosts, int per_pu, rm_error_t *err)
{
	topo_cluster_t c;
	topo_target_t *t = NULL;
	char **names = NULL;
	size_t n = 0;

	if (tleaf)
		return topo_target_from_tleaf(tleaf, err);
	if (!(c = topo_cluster_create()))
		return NULL;
	if (topo_load_cluster_file(c, cluster, err) == 0 && topo_cluster_finalize(c, err) == 0)
		names = ctl_job_hosts(c, hosts, &n, err);
	if (names)
		t = topo_target_from_hosts(c, (const char *const *)names, n, !per_pu, err);
	hostlist_free(names);
	topo_cluster_destroy(c);
	return t;
}

int ctl_sources_opt(ctl_sources_t *s, const char *cmd, int c, const char *arg)
{
	switch (c) {
	case CTL_OPT_HWLOC:
	case CTL_OPT_IB:
		if ((c == CTL_OPT_HWLOC ? s->nhwloc : s->nib) >= CTL_MAX_SOURCES)
			return ctl_usage_error(cmd, "at most %d --%s options", CTL_MAX_SOURCES,
					       c == CTL_OPT_HWLOC ? "hwloc" : "ib");
		if (c == CTL_OPT_HWLOC)
			s->hwloc[s->nhwloc++] = arg;
		else
			s->ib[s->nib++] = arg;
		return 1;
	case CTL_OPT_IB_CACHE: s->ib_cache = arg; return 1;
	case CTL_OPT_IB_LIVE: s->ib_live = 1; return 1;
	case CTL_OPT_NAME_MAP: s->name_map = arg; return 1;
	case CTL_OPT_TORUS: s->torus = arg; return 1;
	case CTL_OPT_CLUSTER: s->cluster = arg; return 1;
	case CTL_OPT_STRICT: s->strict = 1; return 1;
	default: return 0;
	}
}

int ctl_sources_any(const ctl_sources_t *s)
{
	return s->nhwloc || s->nib || s->ib_cache || s->ib_live || s->torus || s->cluster;
}

int ctl_sources_load(topo_cluster_t c, const ctl_sources_t *s, rm_error_t *err)
{
	int i;

	topo_cluster_set_strict(c, s->strict);
	if (s->cluster && topo_load_cluster_file(c, s->cluster, err) < 0)
		return -1;
	for (i = 0; i < s->nhwloc; i++)
		if (topo_load_hwloc_spec(c, s->hwloc[i], err) < 0)
			return -1;
	if (s->name_map && topo_load_node_name_map(c, s->name_map, err) < 0)
		return -1;
	for (i = 0; i < s->nib; i++)
		if (topo_load_ib_file(c, s->ib[i], err) < 0)
			return -1;
	if (s->ib_cache && topo_load_ib_cache(c, s->ib_cache, err) < 0)
		return -1;
	if (s->ib_live && topo_load_ib_live(c, NULL, 0, err) < 0)
		return -1;
	if (s->torus && topo_load_torus(c, s->torus, err) < 0)
		return -1;
	return topo_cluster_finalize(c, err);
}

FILE *ctl_atomic_open(const char *path, char **tmp, rm_error_t *err)
{
	size_t len = strlen(path) + 32;
	FILE *f = NULL;
	int fd;

	if (!(*tmp = malloc(len))) {
		rm_error_set(err, path, 0, 0, "out of memory");
		return NULL;
	}
	fd = rm_tmpfile_beside(path, 0666, *tmp, len); /* a name of its own: concurrent writers never share it */
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		rm_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(*tmp);
		}
		free(*tmp);
		*tmp = NULL;
	}
	return f;
}

int ctl_atomic_commit(FILE *f, char *tmp, const char *path, int rc, rm_error_t *err)
{
	if (fclose(f) != 0 || rc < 0 || rename(tmp, path) < 0) {
		rm_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
		unlink(tmp);
		rc = -1;
	}
	free(tmp);
	return rc;
}

int ctl_torus_request(json_t *req, const ctl_torus_args_t *t, rm_error_t *err)
{
	topo_torus_spec_t spec = { .link_cost = { 1, 1, 1 } };
	int mesh = t->mesh;

	if (t->axes)
		json_object_set_new(req, "axes", json_string(t->axes));
	if (!t->dims)
		return 0;
	if (order_parse_dims(t->dims, &spec, err) < 0 || (t->cost && order_parse_link_cost(t->cost, &spec, err) < 0))
		return -1;
	json_object_update_new(req, json_pack("{s:[iii], s:[bbb], s:[fff], s:i}", "dims", spec.dims[0], spec.dims[1],
					      spec.dims[2], "wrap", !mesh, !mesh, !mesh, "link_cost", spec.link_cost[0],
					      spec.link_cost[1], spec.link_cost[2], "nodes_per_router",
					      spec.nodes_per_router));
	return 0;
}

int ctl_torus_opt(ctl_torus_args_t *t, int c, const char *arg)
{
	switch (c) {
	case CTL_OPT_TORUS: t->torus = arg; return 1;
	case CTL_OPT_DIMS: t->dims = arg; return 1;
	case CTL_OPT_LINK_COST: t->cost = arg; return 1;
	case CTL_OPT_MESH: t->mesh = 1; return 1;
	case CTL_OPT_AXES: t->axes = arg; return 1;
	case CTL_OPT_METHOD: t->method = arg; return 1;
	default: return ctl_daemon_opt(&t->d, c, arg);
	}
}

int ctl_torus_check(ctl_torus_args_t *t, const char *cmd)
{
	if (!t->torus && !t->dims)
		ctl_daemon_env(&t->d);
	if (ctl_daemon_set(&t->d) && t->torus)
		return ctl_usage_error(cmd, "--socket replaces --torus (the daemon's torus is used)");
	if (ctl_daemon_set(&t->d) && !t->dims && (t->cost || t->mesh))
		return ctl_usage_error(cmd, "with --socket, --link-cost and --mesh need --dims");
	if (!ctl_daemon_set(&t->d) && !t->torus == !t->dims) {
		fprintf(stderr, "rankmapctl %s: give exactly one of --torus FILE and --dims XxYxZ\n", cmd);
		return 2;
	}
	return -1;
}

json_t *ctl_map_request(const map_graph_t *g, const char *cart, const json_t *where, const char *key,
			rm_map_request_t *q)
{
	size_t n = json_array_size(where), ne = g ? g->xadj[g->n] : 0, i, k = 0;
	int slots = !strcmp(key, "slots"), bad = 0;
	rm_slot_t *sl = calloc(n + 1, sizeof(*sl));
	const char **names = calloc(n + 1, sizeof(*names));
	uint32_t *src = malloc((ne + 1) * sizeof(*src)), *dst = malloc((ne + 1) * sizeof(*dst)), u;
	double *w = malloc((ne + 1) * sizeof(*w));
	json_t *req = NULL;

	for (u = 0; g && src && dst && w && u < g->n; u++)
		for (uint64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++)
			if (g->adj[e] > u)
				src[k] = u, dst[k] = g->adj[e], w[k++] = g->w[e];
	for (i = 0; sl && names && i < n; i++) {
		const json_t *v = json_array_get(where, i);

		if (slots) {
			sl[i].host = json_string_value(json_array_get(v, 0));
			sl[i].pu = (int32_t)json_integer_value(json_array_get(v, 1));
		} else
			names[i] = json_string_value(v);
		bad |= slots ? !sl[i].host : !names[i];
	}
	q->n = g ? g->n : 0, q->nedges = k, q->src = src, q->dst = dst, q->w = w, q->cart = g ? NULL : cart;
	q->slots = slots ? sl : NULL, q->nslots = slots ? n : 0;
	q->hosts = slots ? NULL : names, q->nhosts = slots ? 0 : n;
	if (sl && names && src && dst && w && !bad)
		req = rm_map_request_json(q);
	free(sl), free(names), free(src), free(dst), free(w);
	q->slots = NULL, q->hosts = NULL, q->src = q->dst = NULL, q->w = NULL;
	return req;
}
