/*
 * daemon/ctl_common.c: what the rankmapctl subcommands share (see ctl_common.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_common.h"
#include "hostlist.h"
#include "lib_client.h"

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

const char *ctl_socket(const char *opt)
{
	return opt ? opt : rm_client_socket_from_env();
}

json_t *ctl_call(const char *cmd, const char *socket, json_t *req, int timeout_ms)
{
	rm_error_t err = { 0 };
	json_t *resp = NULL;
	char msg[RM_ERROR_SOURCE_LEN + RM_ERROR_TEXT_LEN + 32];

	if (!req) {
		fprintf(stderr, "rankmapctl %s: out of memory\n", cmd);
		return NULL;
	}
	if (rm_client_call(socket, req, &resp, timeout_ms, &err) == 0)
		return resp;
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

topo_target_t *ctl_load_target(const char *tleaf, const char *cluster, const char *hosts, int per_pu,
			       rm_error_t *err)
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
