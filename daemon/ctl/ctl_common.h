/*
 * daemon/ctl/ctl_common.h: pieces the rankmapctl subcommands share: error and usage messages, the
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

#include "rm_client.h"
#include "rm_error.h"
#include "topo.h"

/* Timeout of a request to rankmapd from rankmapctl (mapping and simulation may take a while). */
#define CTL_DAEMON_TIMEOUT_MS 120000

/* Prints "rankmapctl CMD: " ("rankmapctl: " when cmd is NULL) + err formatted (FILE:LINE: text), or what + strerror(errno) when err is
 * not set. Returns 1. */
int ctl_fail(const char *cmd, const rm_error_t *err, const char *what);
/* Prints "rankmapctl CMD: " + the message, then "Try 'rankmapctl CMD --help'.". Returns 2. */
int ctl_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* After getopt's own message (which starts "rankmapctl CMD:", rankmapctl.c sets argv[0]): prints
 * "Try 'rankmapctl CMD --help'.". Returns 2. */
int ctl_usage_hint(const char *cmd);

/* ---- the common options and the daemon connection ------------------------------------------------
 * Every subcommand takes the same common options through these: a getopt table entry
 * (CTL_DAEMON_LONGOPTS), the short options CTL_SHORTOPTS (and "j" where it has --json), their --help
 * lines (CTL_DAEMON_HELP), one handler (ctl_daemon_opt) and one struct:
 *   -s, --server LIST    rankmapd's servers (--socket PATH: the same option, its old name)
 *       --server-uid UID
 *   -t, --timeout MS     give up on rankmapd after MS milliseconds
 *       --progress       progress on standard error even when it is not a terminal
 *   -V, --version        print the version and exit
 *   -h, --help           (each subcommand's own)
 *   -j, --json           (each subcommand's own, where it has one)
 * A transport option added here reaches every subcommand without touching them. */
enum {
	CTL_OPT_SOCKET = 's',
	CTL_OPT_TIMEOUT = 't',
	CTL_OPT_VERSION = 'V',
	CTL_OPT_SERVER_UID = 0x240,
	CTL_OPT_PROGRESS
};
#define CTL_SHORTOPTS "s:t:hV"
/* clang-format off */
#define CTL_DAEMON_LONGOPTS \
	{ "server", required_argument, NULL, CTL_OPT_SOCKET }, \
	{ "socket", required_argument, NULL, CTL_OPT_SOCKET }, \
	{ "server-uid", required_argument, NULL, CTL_OPT_SERVER_UID }, \
	{ "timeout", required_argument, NULL, CTL_OPT_TIMEOUT }, \
	{ "progress", no_argument, NULL, CTL_OPT_PROGRESS }, \
	{ "version", no_argument, NULL, CTL_OPT_VERSION }
/* clang-format on */
#define CTL_DAEMON_HELP                                                                                       \
	"  -s, --server LIST       rankmapd's servers, tried in order: HOST:PORT (TCP, MUNGE), [V6]:PORT,\n"  \
	"                          or a Unix socket /PATH, comma-separated (--socket is an alias).\n"         \
	"                          Default: $RANKMAP_SERVER, else $RANKMAP_SOCKET, else " RM_SOCKET_DEFAULT   \
	"\n"                                                                                                  \
	"      --server-uid UID    over TCP, the uid (or user) rankmapd runs as: a server whose credential\n" \
	"                          is of another uid gets no credential (default: $RANKMAP_SERVER_UID,\n"     \
	"                          else 0, root)\n"                                                           \
	"  -t, --timeout MS        give up on rankmapd after MS milliseconds (default: 5000 for ping,\n"      \
	"                          120000 for the other commands)\n"                                          \
	"      --progress          report progress (elapsed seconds, phase) on standard error for work\n"     \
	"                          over 2 s, even when standard error is not a terminal\n"                    \
	"  -V, --version           print rankmapctl's version and exit\n"

typedef struct ctl_daemon {
	const char *socket;
	int timeout_ms;         /* --timeout, 0: the command's default */
	int progress;           /* --progress */
	const char *server_uid; /* --server-uid, or NULL ($RANKMAP_SERVER_UID, else 0) */
} ctl_daemon_t;

/* Records a common option (code c). Returns 1 when c is one, else 0. -V prints the version and exits
 * 0; a bad --timeout prints a usage error naming cmd and exits 2. */
int ctl_daemon_opt(ctl_daemon_t *d, int c, const char *arg, const char *cmd);
/* 1 when a daemon address was given (or taken from the environment), else 0. */
int ctl_daemon_set(const ctl_daemon_t *d);
/* Without a given address, takes $RANKMAP_SERVER, else $RANKMAP_SOCKET. Returns ctl_daemon_set(d). */
int ctl_daemon_env(ctl_daemon_t *d);
/* ctl_daemon_env, and without an address in the environment either, the default socket
 * RM_SOCKET_DEFAULT: for a command given no files, which then asks the daemon. Returns 1. */
int ctl_daemon_default(ctl_daemon_t *d);
/* The daemon's address for messages ("/run/rankmapd/rankmapd.sock"). */
const char *ctl_daemon_name(const ctl_daemon_t *d);
/* The daemon to use: opt (--socket/--server) when given, else $RANKMAP_SERVER, else $RANKMAP_SOCKET,
 * else NULL (work offline). */
const char *ctl_socket(const char *opt);
/* After a call that failed over (info->nfailed > 0), prints one warning naming the servers that failed
 * and the one that answered. */
void ctl_failover_note(const char *cmd, const rm_client_info_t *info);
/* Checks d's --server-uid: 0, or -1 after printing "rankmapctl CMD: --server-uid: ..." (a value that is
 * neither a uid nor a user name). */
int ctl_daemon_check(const char *cmd, const ctl_daemon_t *d);
/* Sends req (stolen) to the daemon d (RM_SOCKET_DEFAULT when none is set) and returns its "ok" response (new reference), or NULL after
 * printing an error naming the daemon (unreachable), the daemon's error, or a bad --server-uid.
 * timeout_ms is the command's default: --timeout replaces it. */
json_t *ctl_call(const char *cmd, const ctl_daemon_t *d, json_t *req, int timeout_ms);

/* Writes "last reload: 2026-11-24 06:31:18, ok" (or ", FAILED: why", or "none since start") for a
 * daemon's last_reload object (ping, report) to f. */
void ctl_print_last_reload(FILE *f, const json_t *last_reload);

/* Opens path for writing ("-" or NULL: stdout). Returns the stream or NULL after printing an error. */
FILE *ctl_open_output(const char *cmd, const char *path);
/* Closes a stream from ctl_open_output (not stdout) and checks the write. Returns rc, or 1 when rc
 * was 0 and the write failed (after printing an error). */
int ctl_close_output(const char *cmd, FILE *f, const char *path, int rc);
/* Prints o to f as JSON and a newline, as every --json of rankmapctl: indented by 2, key order kept,
 * reals in their shortest round-trip form, and "schema_version" (RM_SCHEMA_VERSION) first when an
 * object lacks one; flags add to JSON_INDENT(2). */
void ctl_print_json(FILE *f, const json_t *o, size_t flags);

/* The names of a job's hosts in c: the expanded Slurm host list when given, else every host with
 * hardware data. Returns a NULL-terminated array (hostlist_free), *n its length; NULL with err set. */
char **ctl_job_hosts(topo_cluster_t c, const char *list, size_t *n, rm_error_t *err);
/* A mapping target: a Scotch tleaf string, or the hosts (list, see ctl_job_hosts) of a cluster file,
 * one slot per core (per_pu: per PU). Returns a new target or NULL with err set. */
topo_target_t *ctl_load_target(const char *tleaf, const char *cluster, const char *hosts, int per_pu, rm_error_t *err);
/* ctl_load_target, and for a cluster target *cpu (malloc'd, one per slot): the logical index of the
 * slot's core (per_pu: of its PU) in its host's hwloc tree, as Open MPI's rankfile numbers them;
 * *cpu is NULL for a tleaf target. */
topo_target_t *ctl_load_target_cpus(const char *tleaf, const char *cluster, const char *hosts, int per_pu,
				    unsigned **cpu, rm_error_t *err);
/* ctl_load_target_cpus with a slot kind: slots "core", "gpu" or NULL (the cluster file's `slots`, core by
 * default). With GPU slots (one per GPU of the hosts, topo_target_from_gpus) *gpus (when not NULL) gets
 * a new JSON array, one object per target slot: {"host", "gpu" (its OS device name), "index", "busid",
 * "cpus" (the PU OS indices of its nearest cores, hwloc list form), "nic"}; NULL for core slots. */
topo_target_t *ctl_load_target_kind(const char *tleaf, const char *cluster, const char *hosts, int per_pu,
				    const char *slots, unsigned **cpu, json_t **gpus, rm_error_t *err);
/* Writes where each rank runs (rank r on slot perm[r]; slot s on host slot_host[s], logical core or,
 * per_pu, PU slot_cpu[s]): an Open MPI rankfile at rankfile ("rank R=HOST slot=N" lines, mpirun(1)) and
 * a Slurm host list at hostfile (line R: rank R's host, SLURM_HOSTFILE for srun
 * --distribution=arbitrary); either may be NULL. Each file is written atomically. Returns 0, or 1 after
 * printing an error. */
int ctl_write_placement(const char *cmd, const char *rankfile, const char *hostfile, const uint32_t *perm, uint32_t n,
			const char *const *slot_host, const unsigned *slot_cpu, int per_pu);

/* A daemon map request built by the client library's typed request (rm_map_request_json): the graph g
 * (each undirected edge once), or cart when g is NULL; where: a JSON list of host names (key "hosts") or
 * of [host, pu] slots (key "slots", the answer then in their order); q's engine, seed, budget, per_pu
 * and breakdown as set by the caller (its pattern and slots are filled here). New reference, NULL when
 * out of memory or where is malformed. */
struct map_graph;
json_t *ctl_map_request(const struct map_graph *g, const char *cart, const json_t *where, const char *key,
			rm_map_request_t *q);

/* ---- cluster sources (report, slurm-topology) ----------------------------------------------- */

#define CTL_MAX_SOURCES 256

/* Option codes of the source options, for getopt_long tables (CTL_SOURCE_LONGOPTS). */
enum {
	CTL_OPT_HWLOC = 0x200,
	CTL_OPT_IB,
	CTL_OPT_IB_CACHE,
	CTL_OPT_IB_LIVE,
	CTL_OPT_NAME_MAP,
	CTL_OPT_TORUS,
	CTL_OPT_CLUSTER,
	CTL_OPT_STRICT
};

/* clang-format off */
#define CTL_IB_LONGOPTS \
	{ "ib", required_argument, NULL, CTL_OPT_IB }, \
	{ "ib-cache", required_argument, NULL, CTL_OPT_IB_CACHE }, \
	{ "ib-live", no_argument, NULL, CTL_OPT_IB_LIVE }, \
	{ "node-name-map", required_argument, NULL, CTL_OPT_NAME_MAP }, \
	{ "strict", no_argument, NULL, CTL_OPT_STRICT }, \
	{ "cluster", required_argument, NULL, CTL_OPT_CLUSTER }
#define CTL_SOURCE_LONGOPTS \
	CTL_IB_LONGOPTS, \
	{ "hwloc", required_argument, NULL, CTL_OPT_HWLOC }, \
	{ "torus", required_argument, NULL, CTL_OPT_TORUS }
/* clang-format on */

typedef struct ctl_sources {
	const char *hwloc[CTL_MAX_SOURCES], *ib[CTL_MAX_SOURCES];
	int nhwloc, nib, ib_live;
	int strict; /* --strict: the first bad host file fails the load */
	const char *cluster, *ib_cache, *name_map, *torus;
} ctl_sources_t;

/* Records a source option (code c, argument arg). Returns 1 when c is a source option, 0 when it is
 * not, 2 (after a usage message) when there are too many --hwloc or --ib. */
int ctl_sources_opt(ctl_sources_t *s, const char *cmd, int c, const char *arg);
/* True when any source is given. */
int ctl_sources_any(const ctl_sources_t *s);
/* For an --hwloc "synthetic:DESC[@HOSTS]": 0 when hwloc accepts DESC, else -1 with err carrying hwloc's
 * own reason. Other specs: 0. */
int ctl_synthetic_check(const char *spec, rm_error_t *err);
/* Loads the sources into c (cluster file first, then hwloc, node-name map, InfiniBand files, cache,
 * live fabric, torus) and finalises it. Returns 0, or -1 with err naming the file and line. */
int ctl_sources_load(topo_cluster_t c, const ctl_sources_t *s, rm_error_t *err);

/* ---- the switch tree's node lists and warnings (slurm-topology, order --method fattree) ---------- */

struct topo_swtree;
/* What the tree's warnings need, from a local tree or from rankmapd's answer. */
struct ctl_swtree_summary {
	size_t ntrees, nguid, nunplaced, nmultihomed, nexcluded, nmissing;
	const char *first_guid, *first_unplaced, *first_missing;
};
/* The summary of a local tree (strings borrowed from it). */
void ctl_swtree_summarise(const struct topo_swtree *t, struct ctl_swtree_summary *w);
/* Warnings and notes on standard error as "rankmapctl CMD: ..."; filter names the node-list option
 * ("nodes" or "slurm-conf"); all_leaves and top silence the notes they answer. */
void ctl_swtree_warnings(const char *cmd, const struct ctl_swtree_summary *w, const char *filter, int all_leaves,
			 int top);
/* rankmapd's slurm_topology answer (format NULL: tree; keep NULL: every host): the response (json_decref
 * it), *text its file and *w its summary (both borrowed from it); NULL after printing the error as
 * "rankmapctl CMD: ...". */
json_t *ctl_slurm_topology_call(const char *cmd, const ctl_daemon_t *d, const char *format, int all_leaves,
				const char *top, const char *const *keep, size_t nkeep, struct ctl_swtree_summary *w,
				const char **text);
/* The keep list of --nodes HOSTLIST or --slurm-conf FILE (NULL without either, and on an error: then
 * *bad is set after printing it as "rankmapctl CMD: ..."). Free with hostlist_free. */
char **ctl_keep_nodes(const char *cmd, const char *nodes, const char *slurm_conf, size_t *n, int *bad);

/* ---- atomic output files ---------------------------------------------------------------------- */

/* Opens a new temporary file next to path (.<name>.tmp.XXXXXX, a name of its own: rm_tmpfile_beside);
 * *tmp receives its name (free it). NULL with err set on failure. */
FILE *ctl_atomic_open(const char *path, char **tmp, rm_error_t *err);
/* Closes f and renames tmp to path when rc is 0 (else removes tmp); frees tmp. Returns 0 or -1 with
 * err set (first error wins). */
int ctl_atomic_commit(FILE *f, char *tmp, const char *path, int rc, rm_error_t *err);

/* ---- torus options (order, simulate) ---------------------------------------------------------- */

enum { CTL_OPT_DIMS = 0x220, CTL_OPT_LINK_COST, CTL_OPT_MESH, CTL_OPT_AXES, CTL_OPT_METHOD };

/* clang-format off */
#define CTL_TORUS_LONGOPTS \
	{ "torus", required_argument, NULL, CTL_OPT_TORUS }, \
	{ "dims", required_argument, NULL, CTL_OPT_DIMS }, \
	{ "link-cost", required_argument, NULL, CTL_OPT_LINK_COST }, \
	{ "mesh", no_argument, NULL, CTL_OPT_MESH }, \
	{ "axes", required_argument, NULL, CTL_OPT_AXES }, \
	{ "method", required_argument, NULL, CTL_OPT_METHOD }, \
	CTL_DAEMON_LONGOPTS
/* clang-format on */

typedef struct ctl_torus_args {
	const char *torus, *dims, *cost, *axes, *method;
	ctl_daemon_t d;
	int mesh;
} ctl_torus_args_t;

/* Records a torus option (code c). Returns 1 when c is one, else 0. */
int ctl_torus_opt(ctl_torus_args_t *t, int c, const char *arg, const char *cmd);
/* After parsing: when neither --torus nor --dims is given, rankmapd is asked (--server, else
 * $RANKMAP_SERVER, else $RANKMAP_SOCKET, else its default socket: ctl_daemon_default); --socket excludes
 * --torus, and without --dims also --link-cost and --mesh; offline, exactly one of --torus and --dims.
 * Returns -1 when the options are consistent, else 2 after a message. */
int ctl_torus_check(ctl_torus_args_t *t, const char *cmd);

/* Fills a request's ordering fields: axes from --axes, and when --dims is given the torus (dims, wrap,
 * link_cost, nodes_per_router) from --dims, --link-cost and --mesh. Returns 0, or -1 with err set on
 * a malformed value. */
int ctl_torus_request(json_t *req, const ctl_torus_args_t *t, rm_error_t *err);

/* ---- learned patterns (ctl_patterns.c) ---------------------------------------------------------- */
struct rm_pattern;
/* The learned patterns (id NULL: all of them), newest first: through rankmapd when d is set (uid >= 0:
 * that user's, all: everyone's; root only), else in the directory dir (NULL: the per-user default).
 * Returns an array of *n patterns (the caller frees each with rm_pattern_free, then the array) and
 * counts the unreadable ones skipped in *bad; NULL after printing an error as "rankmapctl CMD: ...". */
struct rm_pattern **ctl_patterns_load(const char *cmd, const ctl_daemon_t *d, const char *dir, long long uid, int all,
				      const char *id, size_t *n, size_t *bad);

/* ---- progress on standard error ----------------------------------------------------------------
 * For work that may take more than a couple of seconds (a large map, a big fabric): a thread prints
 * "rankmapctl CMD: 3 s, PHASE..." on standard error once 2 s have passed, rewritten every second on a
 * terminal; when standard error is not a terminal only with --progress (d->progress), one line every
 * 2 s and "done in X s" at the end. Nothing is printed for shorter work. NULL (nothing to do) is a
 * valid handle: the other calls then do nothing. phase must outlive its use (a literal). */
typedef struct ctl_progress ctl_progress_t;
ctl_progress_t *ctl_progress_start(const char *cmd, const ctl_daemon_t *d, const char *phase);
void ctl_progress_phase(ctl_progress_t *p, const char *phase);
void ctl_progress_stop(ctl_progress_t *p);

#endif
