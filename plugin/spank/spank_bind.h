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
	const char *socket;        /* rankmapd */
	int timeout_ms;
	const char *node;          /* SLURMD_NODENAME */
	const char *alloc_cores;   /* S_STEP_ALLOC_CORES */
	uint32_t ntasks;           /* local tasks */
	const uint32_t *global;    /* global rank of each local task (ntasks) */
	uint32_t total_tasks;      /* tasks of the step (pattern size) */
	const char *pattern;       /* --rankmap-pattern or NULL */
	const char *metric;        /* --rankmap-metric or NULL */
	const char *algo;          /* mapping engine */
} rm_spank_bind_req_t;

/* Computes the plan: asks rankmapd, translates cores to OS CPUs (hwloc, this host). Returns a malloc'd
 * RANKMAP_BIND_PLAN value (ntasks CPU lists separated by ';', in local task order) or NULL with err
 * saying why (daemon unreachable, more tasks than cores, unknown core...); *unreachable is set to 1
 * when the daemon did not answer at all (no socket, refused, timed out), else 0. */
char *rm_spank_bind_plan(const rm_spank_bind_req_t *req, int *unreachable, rm_error_t *err);

/* Binds the calling process to entry local_id of plan with sched_setaffinity. On success writes the CPU
 * list into cpus (size len). Returns 0 or -1 (EINVAL: no such entry; sched_setaffinity's errno). */
int rm_spank_bind_apply(const char *plan, uint32_t local_id, char *cpus, size_t len, rm_error_t *err);

#endif
