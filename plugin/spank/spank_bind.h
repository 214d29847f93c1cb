/*
 * plugin/spank/spank_bind.h: --rankmap-bind, the core binding of a step's tasks.
 *
 * Once per node (user_init, in slurmstepd) the plugin asks rankmapd to map the node's tasks onto the
 * cores the step was allocated there (S_STEP_ALLOC_CORES), weighting task pairs by the user's pattern
 * (--rankmap-pattern) or, without one, by a chain in rank order (rank r talks to r-1 and r+1). The
 * answer is turned into one OS CPU list per local task and handed to the tasks in the step environment
 * (RANKMAP_BIND_PLAN="cpus;cpus;..."); each task binds itself with sched_setaffinity in task_init.
 *
 * Error rule: 0 on success, -1 with errno set on failure and the caller's rm_error_t filled.
 */
#ifndef RANKMAP_SPANK_BIND_H
#define RANKMAP_SPANK_BIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rm_error.h"

#define RM_SPANK_BIND_PLAN_ENV "RANKMAP_BIND_PLAN"   /* set by user_init for the tasks */
#define RM_SPANK_BIND_ERROR_ENV "RANKMAP_BIND_ERROR" /* why there is no plan (for the one warning) */
#define RM_SPANK_BIND_CPUS_ENV "RANKMAP_BIND_CPUS"   /* each task: the CPUs it was bound to */

/* Parses a Slurm/Linux CPU list ("0-3,8,10-11") into a malloc'd array of ascending, distinct ids
 * (caller frees), count in *n; ids above max_id are errors. Returns the array or NULL (EINVAL, with err
 * naming the column; ENOMEM). An empty list is an error. */
uint32_t *rm_spank_list_parse(const char *list, uint32_t max_id, size_t *n, rm_error_t *err);

/* Writes ids (ascending) as a compact list "0-3,8" into buf. Returns 0 or -1 (ENOSPC). */
int rm_spank_list_format(const uint32_t *ids, size_t n, char *buf, size_t len);

/* Everything the plan needs, gathered by the caller from the SPANK handle. */
typedef struct rm_spank_bind_req {
	const char *socket;       /* rankmapd (a server list) */
	const char *munge_socket; /* munged's socket for TCP (NULL or "": libmunge's default) */
	const char *server_uid;   /* TCP: the uid rankmapd runs as (NULL or "": $RANKMAP_SERVER_UID, else root) */
	int timeout_ms;
	const char *node;        /* SLURMD_NODENAME */
	const char *alloc_cores; /* S_STEP_ALLOC_CORES */
	uint32_t ntasks;         /* local tasks */
	const uint32_t *global;  /* global rank of each local task (ntasks) */
	uint32_t total_tasks;    /* tasks of the step (pattern size) */
	const char *pattern;     /* --rankmap-matrix (absolute) or NULL */
	const char *pattern_opt; /* the name the user gave it by (rm_spank_pattern_opt), for messages; NULL:
				  * --rankmap-matrix */
	const char *metric;      /* --rankmap-metric or NULL */
	const char *algo;        /* mapping engine */
	uid_t uid;               /* the job's user: the pattern is read as this user */
	gid_t gid;
	const gid_t *gids; /* the user's supplementary groups (set when read as root), ngids of them */
	int ngids;
	int pattern_timeout_ms; /* bound of the pattern read (<= 0: RM_SPANK_PATTERN_TIMEOUT_MS) */
} rm_spank_bind_req_t;

#define RM_SPANK_PATTERN_TIMEOUT_MS 10000
#define RM_SPANK_PATTERN_MEM ((size_t)4 << 30) /* memory of the pattern reader, above its size at fork */

/* One edge among a node's tasks: local task indices a < b, weight w. */
typedef struct rm_spank_edge {
	uint32_t a, b;
	double w;
} rm_spank_edge_t;

/* Reads req->pattern and returns the edges among the node's tasks (req->global), malloc'd, *n of them.
 * The file is read in a child process (common/rm_child.h) that first becomes req->uid/req->gid for good,
 * then opens the file without blocking (a regular file within the pattern size cap, common/rm_file.h)
 * and parses it, within req->pattern_timeout_ms, RM_SPANK_PATTERN_MEM of memory and as much CPU time: a FIFO,
 * a device, an endless or enormous file, or one the user may not read costs an error, never a blocked
 * or growing slurmstepd. Returns the edges (never NULL on success, *n may be 0) or NULL with err naming
 * the file. */
rm_spank_edge_t *rm_spank_pattern_edges(const rm_spank_bind_req_t *req, size_t *n, rm_error_t *err);

/* Why rm_spank_bind_plan gave no plan. */
enum { RM_SPANK_PLAN_FAILED = 0, RM_SPANK_PLAN_UNREACHABLE = 1, RM_SPANK_PLAN_BAD_PATTERN = 2 };

/* Computes the plan: reads the pattern (rm_spank_pattern_edges), asks rankmapd, translates cores to OS CPUs
 * (hwloc, this host). Returns a malloc'd RANKMAP_BIND_PLAN value (ntasks CPU lists separated by ';', in
 * local task order) or NULL with err saying why (daemon unreachable, bad pattern, more tasks than cores,
 * unknown core...) and *why set: RM_SPANK_PLAN_UNREACHABLE when the daemon did not answer at all (no
 * socket, refused, timed out), RM_SPANK_PLAN_BAD_PATTERN when the pattern could not be read, else
 * RM_SPANK_PLAN_FAILED. */
char *rm_spank_bind_plan(const rm_spank_bind_req_t *req, int *why, rm_error_t *err);

/* Binds the calling process to entry local_id of plan with sched_setaffinity. On success writes the CPU
 * list into cpus (size len). Returns 0 or -1 (EINVAL: no such entry; sched_setaffinity's errno). */
int rm_spank_bind_apply(const char *plan, uint32_t local_id, char *cpus, size_t len, rm_error_t *err);

#endif
