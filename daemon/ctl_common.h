/*
 * daemon/ctl_common.h: pieces the rankmapctl subcommands share: error and usage messages, the
 * daemon connection (--socket PATH / RANKMAP_SOCKET), output files, JSON printing, and the target of
 * a mapping (a tleaf string, or hosts of a cluster file).
 *
 * Messages go to stderr as "rankmapctl CMD: TEXT" (or "rankmapctl CMD: FILE:LINE: TEXT" from an
 * rm_error_t). Functions returning an exit status return 1 for runtime errors, 2 for usage errors.
 */
#ifndef RANKMAP_CTL_COMMON_H
#define RANKMAP_CTL_COMMON_H

#include <jansson.h>
#include <stdio.h>

#include "rm_error.h"
#include "topo.h"

/* Timeout of a request to rankmapd from rankmapctl (mapping and simulation may take a while). */
#define CTL_DAEMON_TIMEOUT_MS 120000

/* Prints "rankmapctl CMD: " ("rankmapctl: " when cmd is NULL) + err formatted (FILE:LINE: text), or what + strerror(errno) when err is
 * not set. Returns 1. */
int ctl_fail(const char *cmd, const rm_error_t *err, const char *what);
/* Prints "rankmapctl CMD: " + the message, then "Try 'rankmapctl CMD --help'.". Returns 2. */
int ctl_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The daemon to use: opt (--socket) when given, else $RANKMAP_SOCKET, else NULL (work offline). */
const char *ctl_socket(const char *opt);
/* Sends req (stolen) to the daemon at socket and returns its "ok" response (new reference), or NULL
 * after printing an error naming the socket (unreachable daemon) or the daemon's error. */
json_t *ctl_call(const char *cmd, const char *socket, json_t *req, int timeout_ms);

/* Opens path for writing ("-" or NULL: stdout). Returns the stream or NULL after printing an error. */
FILE *ctl_open_output(const char *cmd, const char *path);
/* Closes a stream from ctl_open_output (not stdout) and checks the write. Returns rc, or 1 when rc
 * was 0 and the write failed (after printing an error). */
int ctl_close_output(const char *cmd, FILE *f, const char *path, int rc);
/* Prints o to f as indented JSON (key order kept) and a newline; flags add to JSON_INDENT(2). */
void ctl_print_json(FILE *f, const json_t *o, size_t flags);

/* The names of a job's hosts in c: the expanded Slurm host list when given, else every host with
 * hardware data. Returns a NULL-terminated array (hostlist_free), *n its length; NULL with err set. */
char **ctl_job_hosts(topo_cluster_t c, const char *list, size_t *n, rm_error_t *err);
/* A mapping target: a Scotch tleaf string, or the hosts (list, see ctl_job_hosts) of a cluster file,
 * one slot per core (per_pu: per PU). Returns a new target or NULL with err set. */
topo_target_t *ctl_load_target(const char *tleaf, const char *cluster, const char *hosts, int per_pu,
			       rm_error_t *err);

#endif
