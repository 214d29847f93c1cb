/*
 * plugin/spank/spank_task.c: the slurmstepd side of spank_rankmap.so: node name, LD_PRELOAD and
 * RANKMAP_* in each task's environment, the binding plan (once per node) and its application (per task).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spank_bind.h"
#include "spank_gpu.h"
#include "rm_gpuenv.h"
#include "rm_client.h"
#include "spank_elf.h"
#include "spank_rm.h"

#define ENV_BUF 65536

/* Reads a variable of the step environment into a malloc'd string; NULL when unset (or ENOMEM). */
static char *step_getenv(spank_t sp, const char *name)
{
	size_t len = 4096;

	for (;;) {
		char *buf = malloc(len);
		spank_err_t rc;
		if (!buf)
			return NULL;
		rc = spank_getenv(sp, name, buf, (int)len);
		if (rc == ESPANK_SUCCESS)
			return buf;
		free(buf);
		if (rc != ESPANK_NOSPACE || len >= 16 * ENV_BUF)
			return NULL;
		len *= 4;
	}
}

void rm_spank_ensure_nodename(rm_spank_ctx_t *ctx)
{
	char *name = step_getenv(ctx->sp, "SLURMD_NODENAME");
	const char *env = getenv("SLURMD_NODENAME");

	/* slurmstepd sets it for the tasks; when it has not (older or patched Slurm), take slurmstepd's own
	 * (inherited from slurmd, which sets it) */
	if (!name && env && *env)
		spank_setenv(ctx->sp, "SLURMD_NODENAME", env, 1);
	else if (!name)
		slurm_info("rankmap: SLURMD_NODENAME unset; the MPI library will name this node by host name");
	free(name);
}

void rm_spank_resolve_pattern(rm_spank_ctx_t *ctx)
{
	char *dir, buf[PATH_MAX];

	if (!ctx->job.pattern[0] || ctx->job.pattern[0] == '/')
		return;
	dir = step_getenv(ctx->sp, "SLURM_SUBMIT_DIR");
	if (spank_path_resolve(dir, ctx->job.pattern, buf, sizeof(buf), rm_spank_pattern_opt(&ctx->job), &ctx->err) ==
	    0) {
		memcpy(ctx->job.pattern, buf, strlen(buf) + 1);
	} else {
		ctx->pattern_bad = 1;
		rm_error_set(&ctx->err, rm_spank_pattern_opt(&ctx->job), 0, 0, "cannot resolve '%s'", ctx->job.pattern);
	}
	free(dir);
}

/* Set by user_init on node 0 when rankmapd does not answer (value: why), read and removed by task_init. */
#define DAEMON_DOWN_ENV "RANKMAP_DAEMON_DOWN"

void rm_spank_probe_daemon(rm_spank_ctx_t *ctx)
{
	uint32_t nodeid = 1;
	rm_error_t err = { 0 };
	rm_client_info_t info;
	char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 32];
	json_t *req, *resp = NULL;
	int rc;

	/* One ping per step, from the first node (where task 0, the one that warns, runs): a connect to a
	 * dead daemon's socket fails at once; a live daemon answers ping inline. Any answer, even an error
	 * (busy, shutting down), means the daemon is there. */
	if (spank_get_item(ctx->sp, S_JOB_NODEID, &nodeid) != ESPANK_SUCCESS || nodeid != 0)
		return;
	if (!(req = rm_proto_request("ping", 1)))
		return;
	rc = rm_client_call_opts(
		&(rm_client_opts_t){ .servers = ctx->conf.socket,
				     .timeout_ms = ctx->conf.timeout_ms,
				     .munge_socket = ctx->conf.munge_socket[0] ? ctx->conf.munge_socket : NULL,
				     .server_uid = ctx->conf.server_uid[0] ? ctx->conf.server_uid : NULL },
		req, &resp, &info, &err);
	json_decref(resp);
	if ((rc == 0 || resp) && info.nfailed > 0) { /* failed over: the tasks go straight to the one that answered */
		slurm_info("rankmap: %s; this step uses rankmapd at %s", info.failed, info.entry);
		rm_spank_servers_first(ctx->conf.socket, info.server);
		/* the step's environment too: the tasks export it as the list the MPI library tries in order */
		spank_setenv(ctx->sp, ctx->conf.server_set ? RM_SERVER_ENV : RM_SOCKET_ENV, ctx->conf.socket, 1);
	}
	if (rc == 0 || resp)
		return;
	spank_setenv(ctx->sp, DAEMON_DOWN_ENV, rm_error_format(&err, buf, sizeof(buf)), 1);
	slurm_info("rankmap: rankmapd unreachable: %s", buf);
}

/* Task side of a dead daemon: the library is told not to try it (it reorders on its local model) and
 * the user gets the one warning. */
static void task_daemon_down(rm_spank_ctx_t *ctx, const char *why, const char *also)
{
	spank_unsetenv(ctx->sp, RM_SOCKET_ENV);
	spank_unsetenv(ctx->sp, RM_SERVER_ENV);
	rm_error_set(&ctx->err, "rankmapd", 0, 0, "unreachable (%s); %sMPI reordering uses the local model", why, also);
}

/* Finds the program the task executes. Returns 0 with its path in prog, or -1. */
static int task_program(rm_spank_ctx_t *ctx, char *prog, size_t len)
{
	int argc = 0;
	char **argv = NULL;
	char *path;
	int rc;

	if (spank_get_item(ctx->sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1 || !argv[0])
		return -1;
	path = step_getenv(ctx->sp, "PATH");
	rc = rm_spank_which(argv[0], path, prog, len);
	free(path);
	return rc;
}

/* Exports the RANKMAP_* variables of an active job. With a pattern that could not be resolved or read
 * (pattern_bad), the library is told to stay out of the way (RANKMAP_DISABLE=1): the warning is said once,
 * by task_init. */
static void task_export(rm_spank_ctx_t *ctx, int pattern_bad)
{
	rm_spank_envvar_t vars[RM_SPANK_ENV_MAX];
	size_t n;

	if (pattern_bad) {
		ctx->job.pattern[0] = '\0';
		spank_setenv(ctx->sp, "RANKMAP_DISABLE", "1", 1);
	}
	n = rm_spank_job_env(&ctx->job, &ctx->conf, vars);

	for (size_t i = 0; i < n; i++)
		if (spank_setenv(ctx->sp, vars[i].name, vars[i].value, 1) != ESPANK_SUCCESS)
			slurm_info("rankmap: cannot set %s", vars[i].name);
}

/* Prefixes of RANKMAP_BIND_ERROR: the daemon could not be reached, the pattern could not be read, or the
 * plan failed otherwise. */
#define BIND_ERR_DAEMON "daemon:"
#define BIND_ERR_PATTERN "pattern:"
#define BIND_ERR_PLAN "plan:"

/* Whether user_init found the pattern unusable (resolved here, or read there). */
static int task_pattern_bad(rm_spank_ctx_t *ctx)
{
	char *why;
	int bad;

	if (ctx->pattern_bad)
		return 1;
	why = step_getenv(ctx->sp, RM_SPANK_BIND_ERROR_ENV);
	bad = why && !strncmp(why, BIND_ERR_PATTERN, strlen(BIND_ERR_PATTERN));
	free(why);
	return bad;
}

void rm_spank_task_preload(rm_spank_ctx_t *ctx)
{
	char prog[PATH_MAX], lib[PATH_MAX];
	char *llp, *old = NULL, *val = NULL, *down = step_getenv(ctx->sp, DAEMON_DOWN_ENV);
	rm_spank_mpi_t mpi;

	if (down)
		spank_unsetenv(ctx->sp, DAEMON_DOWN_ENV);
	if (task_program(ctx, prog, sizeof(prog)) < 0) {
		slurm_verbose("rankmap: cannot locate the step's program; nothing to preload");
		goto out; /* execve will report it */
	}
	llp = step_getenv(ctx->sp, "LD_LIBRARY_PATH");
	mpi = rm_spank_mpi_detect(prog, llp);
	free(llp);
	if (mpi == RM_SPANK_MPI_NONE) {
		if (ctx->job.mode == RM_SPANK_MODE_REQUIRED)
			rm_error_set(&ctx->err, prog, 0, 0, "not linked with Open MPI or MPICH: nothing to reorder");
		goto out;
	}
	if (rm_spank_mpi_library(&ctx->conf, mpi, lib, sizeof(lib)) < 0 || access(lib, R_OK) < 0) {
		rm_error_set(&ctx->err, lib, 0, 0,
			     "%s (needed for %s, an %s program); running without rank "
			     "reordering",
			     strerror(errno), prog, mpi == RM_SPANK_MPI_OPENMPI ? "Open MPI" : "MPICH");
		goto out;
	}
	old = step_getenv(ctx->sp, "LD_PRELOAD");
	val = rm_spank_preload_prepend(lib, old);
	if (!val || spank_setenv(ctx->sp, "LD_PRELOAD", val, 1) != ESPANK_SUCCESS)
		rm_error_set(&ctx->err, "LD_PRELOAD", 0, 0, "cannot set; running without rank reordering");
	else
		task_export(ctx, task_pattern_bad(ctx));
	if (down && !rm_error_isset(&ctx->err))
		task_daemon_down(ctx, down, "");
out:
	free(old);
	free(val);
	free(down);
}

/* Gathers the node's tasks (global ranks in local order). Returns a malloc'd array or NULL. */
static uint32_t *local_ranks(spank_t sp, uint32_t *ntasks, uint32_t *total)
{
	uint32_t *g;

	if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, ntasks) != ESPANK_SUCCESS || *ntasks == 0 ||
	    spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, total) != ESPANK_SUCCESS)
		return NULL;
	g = calloc(*ntasks, sizeof(*g));
	for (uint32_t i = 0; g && i < *ntasks; i++) {
		if (spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, i, &g[i]) != ESPANK_SUCCESS) {
			free(g);
			return NULL;
		}
	}
	return g;
}

/* The step's user, whom the pattern is read as. Returns 0 or -1. */
static int plan_user(rm_spank_ctx_t *ctx, rm_spank_bind_req_t *req)
{
	gid_t *gids = NULL;
	int ngids = 0;

	if (spank_get_item(ctx->sp, S_JOB_UID, &req->uid) != ESPANK_SUCCESS ||
	    spank_get_item(ctx->sp, S_JOB_GID, &req->gid) != ESPANK_SUCCESS)
		return -1;
	if (spank_get_item(ctx->sp, S_JOB_SUPPLEMENTARY_GIDS, &gids, &ngids) == ESPANK_SUCCESS)
		req->gids = gids, req->ngids = ngids;
	return 0;
}

void rm_spank_step_bind_plan(rm_spank_ctx_t *ctx)
{
	rm_spank_bind_req_t req = { .socket = ctx->conf.socket,
				    .timeout_ms = ctx->conf.timeout_ms,
				    .munge_socket = ctx->conf.munge_socket,
				    .server_uid = ctx->conf.server_uid };
	char *node = step_getenv(ctx->sp, "SLURMD_NODENAME"), *cores = NULL, *plan = NULL;
	uint32_t *global = NULL;
	int why = RM_SPANK_PLAN_FAILED;
	rm_error_t err = { 0 };
	char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 64], msg[sizeof(buf) + 16];

	if (ctx->pattern_bad)
		err = ctx->err, why = RM_SPANK_PLAN_BAD_PATTERN;
	else if (spank_get_item(ctx->sp, S_STEP_ALLOC_CORES, &cores) != ESPANK_SUCCESS || !cores || !*cores)
		rm_error_set(&err, "S_STEP_ALLOC_CORES", 0, 0, "Slurm did not say which cores the step has");
	else if (!(global = local_ranks(ctx->sp, &req.ntasks, &req.total_tasks)))
		rm_error_set(&err, "S_JOB_LOCAL_TASK_COUNT", 0, 0, "Slurm did not list the node's tasks");
	if (!rm_error_isset(&err)) {
		req.node = node ? node : "";
		req.alloc_cores = cores;
		req.global = global;
		req.pattern = ctx->job.pattern[0] ? ctx->job.pattern : NULL;
		req.pattern_opt = rm_spank_pattern_opt(&ctx->job);
		req.metric = ctx->job.metric[0] ? ctx->job.metric : NULL;
		req.algo = ctx->job.algo[0] ? ctx->job.algo : "auto";
		req.pattern_timeout_ms = ctx->conf.pattern_timeout_ms;
		if (plan_user(ctx, &req) < 0)
			rm_error_set(&err, "S_JOB_UID", 0, 0, "Slurm did not say whose step this is");
		else
			plan = rm_spank_bind_plan(&req, &why, &err);
	}
	if (plan) {
		spank_setenv(ctx->sp, RM_SPANK_BIND_PLAN_ENV, plan, 1);
		slurm_info("rankmap: binding plan on %s (cores %s): %s", req.node, cores, plan);
	} else {
		rm_error_format(&err, buf, sizeof(buf));
		snprintf(msg, sizeof(msg), "%s%s",
			 why == RM_SPANK_PLAN_UNREACHABLE   ? BIND_ERR_DAEMON
			 : why == RM_SPANK_PLAN_BAD_PATTERN ? BIND_ERR_PATTERN
							    : BIND_ERR_PLAN,
			 buf);
		spank_setenv(ctx->sp, RM_SPANK_BIND_ERROR_ENV, msg, 1);
		slurm_info("rankmap: no binding plan on %s: %s", node ? node : "?", buf);
	}
	free(plan);
	free(global);
	free(node);
}

void rm_spank_task_bind(rm_spank_ctx_t *ctx)
{
	char *plan = step_getenv(ctx->sp, RM_SPANK_BIND_PLAN_ENV);
	char *why = plan ? NULL : step_getenv(ctx->sp, RM_SPANK_BIND_ERROR_ENV);
	rm_error_t err = { 0 };
	char cpus[4096];

	spank_unsetenv(ctx->sp, RM_SPANK_BIND_PLAN_ENV);
	spank_unsetenv(ctx->sp, RM_SPANK_BIND_ERROR_ENV);
	if (!plan) {
		const char *w = why ? why : "no binding plan";
		if (!strncmp(w, BIND_ERR_DAEMON, strlen(BIND_ERR_DAEMON))) {
			/* Say it once, here: the MPI library then reorders on its local model quietly. */
			task_daemon_down(ctx, w + strlen(BIND_ERR_DAEMON), "tasks not bound, ");
		} else {
			int pat = !strncmp(w, BIND_ERR_PATTERN, strlen(BIND_ERR_PATTERN));
			if (pat)
				w += strlen(BIND_ERR_PATTERN);
			else if (!strncmp(w, BIND_ERR_PLAN, strlen(BIND_ERR_PLAN)))
				w += strlen(BIND_ERR_PLAN);
			rm_error_set(&ctx->err, "--rankmap-bind", 0, 0, "%s; tasks not bound%s", w,
				     pat ? ", MPI ranks not reordered" : "");
		}
		free(why);
		return;
	}
	if (ctx->local_id < 0) {
		rm_error_set(&ctx->err, "--rankmap-bind", 0, 0, "no local task id; task not bound");
	} else if (rm_spank_bind_apply(plan, (uint32_t)ctx->local_id, cpus, sizeof(cpus), &err) < 0) {
		char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 32];
		rm_error_set(&ctx->err, "--rankmap-bind", 0, 0, "task %u: %s; task not bound", ctx->global_id,
			     rm_error_format(&err, buf, sizeof(buf)));
	} else {
		spank_setenv(ctx->sp, RM_SPANK_BIND_CPUS_ENV, cpus, 1);
	}
	free(plan);
}

/* ---- --rankmap-bind=gpu ---- */

/* The task's variables as rm_gpu_env_pick reads them (each fetched once, freed with the reader). */
typedef struct task_env {
	spank_t sp;
	char *val[16];
	const char *name[16];
	int n;
} task_env_t;

static const char *task_env_get(const char *name, void *arg)
{
	task_env_t *e = arg;

	for (int i = 0; i < e->n; i++)
		if (!strcmp(e->name[i], name))
			return e->val[i];
	if (e->n == 16)
		return NULL;
	e->name[e->n] = name;
	e->val[e->n] = step_getenv(e->sp, name);
	return e->val[e->n++];
}

/* Finds the task's GPU and its place; 0 or -1 with err set. */
static int gpu_place(rm_spank_ctx_t *ctx, rm_spank_gpu_place_t *pl, rm_error_t *err)
{
	task_env_t env = { .sp = ctx->sp };
	rm_gpu_pick_t pick;
	hwloc_topology_t topo;
	char *cores = NULL;
	int rc;

	rc = rm_gpu_env_pick(task_env_get, &env, &pick, err);
	for (int i = 0; i < env.n; i++)
		free(env.val[i]);
	if (rc == 0)
		return rm_error_set(err, "--rankmap-bind=gpu", 0, 0,
				    "no device variable names the task's GPU (ask Slurm for GPUs: --gpus-per-task)");
	if (rc < 0)
		return -1;
	if (spank_get_item(ctx->sp, S_STEP_ALLOC_CORES, &cores) != ESPANK_SUCCESS || !cores || !*cores)
		cores = NULL; /* every core of the node */
	if (rm_spank_gpu_topology(&topo, err) < 0)
		return -1;
	rc = rm_spank_gpu_place(topo, &pick, cores, pl, err);
	hwloc_topology_destroy(topo);
	return rc;
}

void rm_spank_task_bind_gpu(rm_spank_ctx_t *ctx)
{
	rm_spank_gpu_place_t pl;
	rm_spank_nic_var_t vars[RM_SPANK_NIC_VARS];
	rm_error_t err = { 0 };
	char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 32], cpus[4096];
	uint32_t ntasks = 0;
	size_t nv;

	if (gpu_place(ctx, &pl, &err) < 0) {
		rm_error_set(&ctx->err, "--rankmap-bind=gpu", 0, 0, "task %u: %s; task not bound", ctx->global_id,
			     rm_error_format(&err, buf, sizeof(buf)));
		return;
	}
	spank_setenv(ctx->sp, RM_SPANK_GPU_ENV, pl.gpu_desc, 1);
	if (spank_get_item(ctx->sp, S_JOB_LOCAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS)
		ntasks = 0;
	nv = rm_spank_nic_vars(&pl, ntasks, vars);
	for (size_t i = 0; i < nv; i++) /* a value the user set wins */
		spank_setenv(ctx->sp, vars[i].name, vars[i].value, 0);
	if (rm_spank_bind_apply(pl.cpus, 0, cpus, sizeof(cpus), &err) < 0)
		rm_error_set(&ctx->err, "--rankmap-bind=gpu", 0, 0, "task %u: GPU %s: %s; task not bound",
			     ctx->global_id, pl.gpu_desc, rm_error_format(&err, buf, sizeof(buf)));
	else
		spank_setenv(ctx->sp, RM_SPANK_BIND_CPUS_ENV, cpus, 1);
	slurm_info("rankmap: task %u: GPU %s, CPUs %s, NIC %s", ctx->global_id, pl.gpu_desc, pl.cpus,
		   pl.nic_name[0] ? pl.nic_name : "(none)");
}
