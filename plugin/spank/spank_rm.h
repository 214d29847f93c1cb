/*
 * plugin/spank/spank_rm.h: the context of one SPANK callback and the steps built on the SPANK API
 * (internal to spank_rankmap.so).
 *
 * Each step records a failure in ctx->err (the first error wins; its text is the one warning the user
 * sees, so it says what happens next) and returns; none of them fails by itself.
 */
#ifndef RANKMAP_SPANK_RM_H
#define RANKMAP_SPANK_RM_H

#include <stdint.h>

#include <slurm/spank.h>

#include "rm_error.h"
#include "spank_opts.h"

typedef struct rm_spank_ctx {
	spank_t sp;
	spank_context_t where;
	rm_spank_conf_t conf; /* plugstack.conf arguments */
	rm_spank_job_t job;   /* the user's options */
	uint32_t global_id;   /* task_init: this task's rank in the step */
	int local_id;         /* task_init: this task's index on the node */
	int pattern_bad;      /* slurmstepd: --rankmap-pattern could not be resolved (the reason in err) */
	rm_error_t err;       /* first failure: the one warning (or the required-mode error) */
} rm_spank_ctx_t;

/* slurmd: sends this node's hwloc topology to rankmapd (register request). Logs failures. */
void rm_spank_register_node(rm_spank_ctx_t *ctx);

/* slurmstepd: makes a relative --rankmap-pattern absolute against the step's SLURM_SUBMIT_DIR (where
 * srun, sbatch or salloc checked it), never against the job's working directory. On failure sets
 * ctx->pattern_bad and ctx->err. */
void rm_spank_resolve_pattern(rm_spank_ctx_t *ctx);

/* slurmstepd: makes sure SLURMD_NODENAME is in the step environment (the MPI library names the node
 * by it). */
void rm_spank_ensure_nodename(rm_spank_ctx_t *ctx);

/* user_init, when not binding: on the step's first node, checks that rankmapd answers a connection;
 * when it does not, tells the tasks (they warn once and keep the MPI library away from the daemon). */
void rm_spank_probe_daemon(rm_spank_ctx_t *ctx);

/* user_init: computes the node's binding plan and leaves it (or the reason there is none) in the step
 * environment for the tasks. */
void rm_spank_step_bind_plan(rm_spank_ctx_t *ctx);

/* task_init: detects the program's MPI, prepends the matching rankmap library to LD_PRELOAD and
 * exports the RANKMAP_* variables. */
void rm_spank_task_preload(rm_spank_ctx_t *ctx);

/* task_init: binds the task as the plan says. */
void rm_spank_task_bind(rm_spank_ctx_t *ctx);

/* task_init, --rankmap-bind=gpu: binds the task to the allocated cores nearest its GPU (the device
 * variables Slurm set for it, common/rm_gpuenv.h) and exports its nearest NIC (spank_gpu.h). */
void rm_spank_task_bind_gpu(rm_spank_ctx_t *ctx);

#endif
