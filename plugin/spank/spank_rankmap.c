/*
 * plugin/spank/spank_rankmap.c: the SPANK entry points of spank_rankmap.so (Slurm 22.05).
 *
 *   srun/sbatch/salloc   slurm_spank_init registers --rankmap, --rankmap-matrix (old name
 *                        --rankmap-pattern), --rankmap-metric,
 *                        --rankmap-trace, --rankmap-bind, --rankmap-learn; their callbacks validate
 *                        the values before submission (the pattern file is parsed completely;
 *                        spank_opts.c).
 *   slurmd               slurm_spank_init registers the node's hwloc topology with rankmapd
 *                        (register=on, the default; spank_register.c); a dead daemon is logged, never
 *                        fatal.
 *   slurmstepd           slurm_spank_user_init (once per node) computes the --rankmap-bind plan
 *                        (spank_bind.c; the user's pattern is read in a child process as the user,
 *                        bounded in time and size, spank_pattern.c: a FIFO or a device can never block
 *                        or grow slurmstepd), or else probes rankmapd, so that a daemon that is down
 *                        costs one warning; slurm_spank_task_init (in each task, as the user) preloads
 *                        the rankmap MPI library matching the program's MPI (spank_elf.c), exports
 *                        RANKMAP_* (spank_task.c), and binds the task.
 *
 * SPANK gives callbacks no user pointer. The plugstack.conf arguments and the user's options are parsed
 * once per process (the first callback that needs them; one static copy, `parsed`, kept while the
 * arguments are the same) and each callback starts from a copy of it (rm_spank_ctx_t, on the stack).
 * slurmstepd forks its tasks after user_init, so task_init inherits what user_init kept there: the
 * server list in the order the step's probe found (a failover puts the server that answered first), which
 * task_init exports to the MPI library (RANKMAP_SERVER). user_init also puts that list in the step
 * environment. The one mutable static is `parsed`; no exit().
 * Failure never fails a step unless the user asked --rankmap=required; the user sees one warning at
 * most (printed by global task 0), everything else goes to the slurmd log.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "rm_error.h"
#include "spank_bind.h"
#include "spank_elf.h"
#include "spank_opts.h"
#include "spank_rm.h"

#define EXPORT __attribute__((visibility("default")))

/* SPANK_PLUGIN(rankmap, 1), spelled out to give the symbols default visibility. */
EXPORT const char plugin_name[] = "rankmap";
EXPORT const char plugin_type[] = "spank";
EXPORT const unsigned int plugin_version = SLURM_VERSION_NUMBER;
EXPORT const unsigned int spank_plugin_version = 1;

static int opt_cb(int val, const char *optarg, int remote);

/* Option descriptions (read-only; SPANK's API wants non-const pointers). */
static struct spank_option rm_options[] = {
	{ "rankmap", "[MODE]",
	  "Topology-aware MPI rank reordering (rankmap). MODE: auto (default), treematch, scotch, "
	  "off, or required (fail the step if rankmap cannot be applied).",
	  2, RM_SPANK_OPT_RANKMAP, opt_cb },
	{ "rankmap-matrix", "FILE",
	  "rankmap: weight rank pairs by this communication matrix (Matrix Market, as written by "
	  "--rankmap-trace). Implies --rankmap.",
	  1, RM_SPANK_OPT_PATTERN, opt_cb },
	{ "rankmap-pattern", "FILE", "rankmap: the old name of --rankmap-matrix.", 1, RM_SPANK_OPT_PATTERN_OLD,
	  opt_cb },
	{ "rankmap-metric", "METRIC",
	  "rankmap: which weight of the matrix to use: bytes, messages or loggp (both, LogGP-weighted). "
	  "Implies --rankmap.",
	  1, RM_SPANK_OPT_METRIC, opt_cb },
	{ "rankmap-trace", "FILE",
	  "rankmap: record the point-to-point traffic of this run into FILE at MPI_Finalize "
	  "(a traced run is not reordered). Implies --rankmap.",
	  1, RM_SPANK_OPT_TRACE, opt_cb },
	{ "rankmap-bind", "[cores|gpu]",
	  "rankmap: cores (the default): bind each task to a core of the step's allocation, placed by rankmapd "
	  "according to the pattern (or rank order); gpu: bind each task to the allocated cores nearest the GPU "
	  "it drives and name its nearest NIC to UCX, Open MPI and Cray MPICH. Implies --rankmap.",
	  2, RM_SPANK_OPT_BIND, opt_cb },
	{ "rankmap-learn", "[on|off]",
	  "rankmap: learn this program's communication pattern at each run and use it from the next one "
	  "(RANKMAP_LEARN=1; kept by rankmapd per user). off: do not, even when the site turns learning on. "
	  "Implies --rankmap (except off).",
	  2, RM_SPANK_OPT_LEARN, opt_cb },
	SPANK_OPTIONS_TABLE_END
};

/* Validates an option at submission (srun, sbatch, salloc). The value itself is read again with
 * spank_option_getopt() where it is used. */
static int opt_cb(int val, const char *optarg, int remote)
{
	rm_spank_job_t scratch = { .mode = RM_SPANK_MODE_UNSET };
	rm_error_t err = { 0 };
	char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 32];

	if (remote)
		return 0;
	if (rm_spank_job_set(&scratch, val, optarg, 1, &err) < 0) {
		/* name the option as the user typed it (--rankmap-matrix or its old name) when the error names
		 * a file */
		const char *opt = rm_spank_opt_name(val);

		if (strncmp(err.source, "--", 2))
			slurm_error("rankmap: %s: %s", opt, rm_error_format(&err, buf, sizeof(buf)));
		else
			slurm_error("rankmap: %s", rm_error_format(&err, buf, sizeof(buf)));
		return -1;
	}
	return 0;
}

/* Fills ctx->job from the options the user gave (contexts where spank_option_getopt works). */
static void ctx_read_options(rm_spank_ctx_t *ctx)
{
	for (int i = 0; rm_options[i].name; i++) {
		char *arg = NULL;
		rm_error_t err = { 0 };
		char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 32];

		if (spank_option_getopt(ctx->sp, &rm_options[i], &arg) != ESPANK_SUCCESS)
			continue;
		if (rm_spank_job_set(&ctx->job, rm_options[i].val, arg, 0, &err) < 0)
			slurm_info("rankmap: ignoring --%s: %s", rm_options[i].name,
				   rm_error_format(&err, buf, sizeof(buf)));
	}
}

/* The parsed arguments and options of this process (see the head of the file). */
static struct {
	int state;     /* 0: nothing yet; 1: conf parsed; 2: conf and the user's options */
	uint64_t args; /* hash of the plugstack.conf arguments it was parsed from */
	spank_context_t where;
	rm_spank_conf_t conf;
	rm_spank_job_t job;
	int pattern_bad;
	rm_error_t err;
} parsed;

/* Keeps ctx's arguments and options for the next callbacks of this process. */
static void ctx_keep(const rm_spank_ctx_t *ctx, uint64_t args, int with_options)
{
	parsed.conf = ctx->conf, parsed.job = ctx->job, parsed.pattern_bad = ctx->pattern_bad, parsed.err = ctx->err;
	parsed.args = args, parsed.where = ctx->where;
	parsed.state = 1 + with_options;
}

static uint64_t args_hash(int ac, char **av)
{
	uint64_t h = 14695981039346656037ULL;

	for (int i = 0; i < ac; i++)
		for (const char *c = av[i] ? av[i] : "";; c++) {
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
			if (!*c)
				break;
		}
	return h;
}

/* Builds the context of one callback. Returns 0, or -1 when the plugstack.conf arguments are bad: the
 * plugin then stays out of the way. That is said once to the user at submission (srun, sbatch, salloc
 * and slurmd report it with slurm_error); slurmstepd, which runs once per node and task, only logs it. */
static int ctx_load(rm_spank_ctx_t *ctx, spank_t sp, int ac, char **av, int with_options)
{
	char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 32];
	uint64_t h = args_hash(ac, av);
	spank_context_t where = spank_context();

	memset(ctx, 0, sizeof(*ctx));
	ctx->sp = sp;
	ctx->where = where;
	if (parsed.state >= 1 + with_options && parsed.args == h && parsed.where == where) {
		ctx->conf = parsed.conf, ctx->job = parsed.job, ctx->pattern_bad = parsed.pattern_bad,
		ctx->err = parsed.err;
		return 0; /* a bad plugstack.conf is never kept: it is parsed (and logged) again */
	}
	if (rm_spank_conf_parse(ac, av, &ctx->conf, &ctx->err) < 0) {
		rm_error_format(&ctx->err, buf, sizeof(buf));
		if (ctx->where == S_CTX_REMOTE)
			slurm_info("rankmap: plugin disabled: %s", buf);
		else
			slurm_error("rankmap: plugin disabled by a plugstack.conf error: %s", buf);
		return -1;
	}
	if (with_options)
		ctx_read_options(ctx);
	if (with_options && ctx->where == S_CTX_REMOTE)
		rm_spank_resolve_pattern(ctx);
	ctx_keep(ctx, h, with_options);
	return 0;
}

EXPORT int slurm_spank_init(spank_t sp, int ac, char **av)
{
	rm_spank_ctx_t ctx;
	spank_context_t where = spank_context();

	if (where == S_CTX_LOCAL || where == S_CTX_REMOTE || where == S_CTX_ALLOCATOR) {
		for (int i = 0; rm_options[i].name; i++)
			if (spank_option_register(sp, &rm_options[i]) != ESPANK_SUCCESS)
				slurm_error("rankmap: cannot register --%s", rm_options[i].name);
		if (where != S_CTX_REMOTE)
			ctx_load(&ctx, sp, ac, av, 0); /* reports a bad plugstack.conf at submission */
		return 0;
	}
	if (where == S_CTX_SLURMD && ctx_load(&ctx, sp, ac, av, 0) == 0 && ctx.conf.register_on)
		rm_spank_register_node(&ctx);
	return 0;
}

EXPORT int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	rm_spank_ctx_t ctx;

	if (ctx_load(&ctx, sp, ac, av, 1) < 0 || !rm_spank_job_active(&ctx.job, &ctx.conf))
		return 0;
	rm_spank_ensure_nodename(&ctx);
	if (rm_spank_job_binds(&ctx.job, &ctx.conf) == RM_SPANK_BIND_CORES)
		rm_spank_step_bind_plan(&ctx);
	else
		rm_spank_probe_daemon(&ctx);
	/* the server list in the order the probe found: the tasks, forked from this process, start from it */
	memcpy(parsed.conf.socket, ctx.conf.socket, sizeof(parsed.conf.socket));
	return 0;
}

EXPORT int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	rm_spank_ctx_t ctx;
	char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 32];

	if (ctx_load(&ctx, sp, ac, av, 1) < 0 || !rm_spank_job_active(&ctx.job, &ctx.conf))
		return 0;
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &ctx.global_id) != ESPANK_SUCCESS)
		ctx.global_id = UINT32_MAX;
	if (spank_get_item(sp, S_TASK_ID, &ctx.local_id) != ESPANK_SUCCESS)
		ctx.local_id = -1;
	rm_spank_task_preload(&ctx);
	if (rm_spank_job_binds(&ctx.job, &ctx.conf) == RM_SPANK_BIND_CORES)
		rm_spank_task_bind(&ctx);
	else if (rm_spank_job_binds(&ctx.job, &ctx.conf) == RM_SPANK_BIND_GPU)
		rm_spank_task_bind_gpu(&ctx);
	if (!rm_error_isset(&ctx.err))
		return 0;
	rm_error_format(&ctx.err, buf, sizeof(buf));
	if (ctx.job.mode == RM_SPANK_MODE_REQUIRED) {
		if (ctx.global_id == 0)
			fprintf(stderr, "rankmap: error: %s (--rankmap=required)\n", buf);
		slurm_info("rankmap: task %u: %s (--rankmap=required: failing the task)", ctx.global_id, buf);
		return -1;
	}
	if (ctx.global_id == 0)
		fprintf(stderr, "rankmap: warning: %s\n", buf);
	slurm_info("rankmap: task %u: %s", ctx.global_id, buf);
	return 0;
}
