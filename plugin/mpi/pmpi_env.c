/*
 * plugin/mpi/pmpi_env.c: the environment of the PMPI library, its single warning, and the collective
 * decisions every rank takes together.
 *
 * Variables:
 *   RANKMAP_DISABLE=1        no reordering: the plain calls of the MPI library underneath (a topology call
 *                            still joins the agreement, so that ranks set differently take one path)
 *   RANKMAP_ENGINE=NAME      mapping engine (mapping/: auto, treematch, scotch, refine, identity);
 *                            RANKMAP_ALGO is its old name, read when RANKMAP_ENGINE is not set
 *   RANKMAP_TIME_BUDGET_MS=T time the "auto" and "refine" engines may use (default 1 ms + 5 us/rank:
 *                            the call runs inside the application's start-up; at most 60000 ms; more
 *                            than twice auto's own default turns its quality mode on, mapping/quality.c)
 *   RANKMAP_MATRIX=FILE      a communication matrix (Matrix Market, RANKMAP_TRACE's output) used as
 *                            weights; RANKMAP_PATTERN is its old name, read when RANKMAP_MATRIX is not
 *                            set ("pattern" alone means a learned pattern, RANKMAP_LEARN)
 *   RANKMAP_METRIC=M         bytes | messages | loggp: which weight of the matrix
 *   RANKMAP_CLUSTER=FILE     cluster description (network, hardware), topo_load_cluster_file
 *   RANKMAP_SERVER=LIST      rankmapd: HOST:PORT[,HOST:PORT...] (TCP, MUNGE; RANKMAP_MUNGE_SOCKET names
 *                            munged's socket) or /socket entries, tried in order; wins over
 *   RANKMAP_SOCKET=PATH      rankmapd socket (network distances from the daemon)
 *   RANKMAP_TIMEOUT_MS=MS    one daemon call, every server of the list included (default 5000; the
 *                            SPANK plugin exports its own timeout)
 *   RANKMAP_TRACE=FILE       record point-to-point traffic, written at MPI_Finalize (only when every rank
 *                            traces; the ranks agree there)
 *   RANKMAP_VERBOSE=1        rank 0 prints one line with the mapping outcome
 *   RANKMAP_REPORT=FILE      rank 0 appends that line to FILE
 *   RANKMAP_GUARD=fork|off   fork (default): the root runs the mapping engine in a child process
 *                            (mapping/map_guard.c) with CPU, memory and wall-clock limits, so that an
 *                            engine's crash, endless loop or runaway memory costs one warning and no
 *                            reordering, never the job; off: in the rank's own process
 *   RANKMAP_GUARD_CPU=S      the child's CPU-time limit in seconds (default 60); it is stopped after
 *                            2 x S + 1 seconds of wall-clock time in any case
 *   RANKMAP_GUARD_MEM=MIB    the child's memory limit (RLIMIT_AS above the rank's size at fork), MiB
 *                            (default 8192)
 *   RANKMAP_LEARN=1          use and record learned patterns (pmpi_learn.c; read once, at MPI_Init)
 *   RANKMAP_LEARN_DIR=DIR    the per-user pattern directory (default $XDG_CACHE_HOME/rankmap, else
 *                            ~/.cache/rankmap), used when there is no daemon
 *   RANKMAP_SLOTS=auto|core|gpu  what a rank's slot is: gpu, the GPU it drives (its device variables,
 *                            common/rm_gpuenv.h; costs between GPUs, topo/topo_gpu.h); core, the PU it
 *                            runs on; auto (default): gpu when every rank drives a known GPU, core when
 *                            none does, and core with one warning when some do (pmpi_gpu.c)
 *   RANKMAP_LOCAL_LIB=PATH   the local mapping helper (default librankmap_local.so beside this library;
 *                            pmpi_local.c), opened by a root that maps Scotch or an InfiniBand fabric itself
 * Test-only (they invent a placement so that one machine can exercise multi-node mapping):
 *   RANKMAP_FAKE_HOSTS=N     ranks are spread over N virtual hosts (1 to 1000000; those beyond the
 *                            call's ranks would hold none and are not built)
 *   RANKMAP_FAKE_NODE=DESC   hwloc synthetic description of each virtual host ('pack:2 core:4', at most
 *                            RMP_FAKE_NODE_PUS PUs: a bigger one is refused, never built); without
 *                            RANKMAP_FAKE_HOSTS, the hardware of every real host (ranks then fill its
 *                            PUs in rank order; the SMPI variant uses this for simulated hosts)
 *   RANKMAP_FAKE_PLACEMENT=block|cyclic
 *   RANKMAP_FAKE_XML=FILE    an hwloc XML file (a recorded GPU node) as the hardware of each virtual host,
 *                            or without RANKMAP_FAKE_HOSTS of every real host; the ranks' device
 *                            variables (CUDA_VISIBLE_DEVICES...) then name GPUs of that file
 *   RANKMAP_FAKE_ENGINE_FAULT=segv|hang|sleep|oom   the engine crashes, spins, blocks or grows (read by
 *                            mapping/map_guard.c, guarded or not: with RANKMAP_GUARD=off it hits the job)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#ifndef RANKMAP_SMPI
#include <sched.h>
#endif

#include "pmpi.h"

static const char *env_str(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* The value of name, else of old, its former spelling (a documented alias: one name per concept). */
static const char *env_alias(const char *name, const char *old)
{
	const char *v = env_str(name);

	return v ? v : env_str(old);
}

/* The PUs per host an hwloc synthetic description makes: the product of its levels' arities ("pack:2
 * core:4", "pack:2(memory=1GB) core:4 pu:2", bare "2 4"; a level hwloc would refuse counts 1, hwloc says why),
 * ULLONG_MAX past RMP_FAKE_NODE_PUS (the product is not carried further). */
static unsigned long long fake_node_pus(const char *d)
{
	unsigned long long pus = 1;

	while (*d) {
		const char *tok = d + strspn(d, " \t"), *end = tok + strcspn(tok, " \t"), *colon = tok;

		while (colon < end && *colon != ':' && *colon != '(')
			colon++;
		const char *num = colon < end && *colon == ':' ? colon + 1 : tok; /* "core:4", or a bare "4" */

		if (num < end && *num >= '0' && *num <= '9') {
			unsigned long long n = strtoull(num, NULL, 10);

			if (n > RMP_FAKE_NODE_PUS || (n && pus > RMP_FAKE_NODE_PUS / n))
				return ULLONG_MAX;
			pus *= n ? n : 1;
		}
		d = end;
	}
	return pus;
}

static int env_fake(rmp_env_t *env, rm_error_t *err)
{
	const char *v = env_str("RANKMAP_FAKE_HOSTS");
	char *end;

	if (v) {
		long n = strtol(v, &end, 10);

		if (*end || n < 1 || n > 1000000)
			return rm_error_set(err, "RANKMAP_FAKE_HOSTS", 0, 0, "'%s' is not a host count >= 1", v);
		env->fake_hosts = (int)n;
	}
	env->fake_node = env_str("RANKMAP_FAKE_NODE");
	if (env->fake_node) {
		unsigned long long pus = fake_node_pus(env->fake_node);

		if (pus > RMP_FAKE_NODE_PUS)
			return rm_error_set(err, "RANKMAP_FAKE_NODE", 0, 0,
					    "'%.64s' describes more than %d PUs per host: not built", env->fake_node,
					    RMP_FAKE_NODE_PUS);
	}
	env->fake_xml = env_str("RANKMAP_FAKE_XML");
	if (env->fake_xml && env->fake_node)
		return rm_error_set(err, "RANKMAP_FAKE_XML", 0, 0,
				    "give RANKMAP_FAKE_XML or RANKMAP_FAKE_NODE, not both");
	v = env_str("RANKMAP_FAKE_PLACEMENT");
	if (v && strcmp(v, "cyclic") == 0)
		env->fake_cyclic = 1;
	else if (v && strcmp(v, "block") != 0)
		return rm_error_set(err, "RANKMAP_FAKE_PLACEMENT", 0, 0, "'%s' is not block or cyclic", v);
	return 0;
}

/* Parses an unsigned count in [1, max]. Returns 0 or -1. */
static int env_count(const char *v, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long n;

	if (!v || *v < '0' || *v > '9')
		return -1;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n < 1 || n > max)
		return -1;
	*out = n;
	return 0;
}

/* RANKMAP_GUARD, RANKMAP_GUARD_CPU, RANKMAP_GUARD_MEM. */
static int env_guard(rmp_env_t *env, rm_error_t *err)
{
	const char *v = env_str("RANKMAP_GUARD");
	unsigned long n;

	env->guard = 1, env->guard_cpu = RMP_GUARD_CPU, env->guard_mem = RMP_GUARD_MEM;
	if (v && strcmp(v, "off") == 0)
		env->guard = 0;
	else if (v && strcmp(v, "fork") != 0)
		return rm_error_set(err, "RANKMAP_GUARD", 0, 0, "'%s' is not fork or off", v);
	if ((v = env_str("RANKMAP_GUARD_CPU"))) {
		if (env_count(v, 86400, &n) != 0)
			return rm_error_set(err, "RANKMAP_GUARD_CPU", 0, 0, "'%s' is not 1 to 86400 seconds", v);
		env->guard_cpu = (unsigned)n;
	}
	if ((v = env_str("RANKMAP_GUARD_MEM"))) {
		if (env_count(v, 1ul << 30, &n) != 0)
			return rm_error_set(err, "RANKMAP_GUARD_MEM", 0, 0, "'%s' is not a size in MiB >= 1", v);
		env->guard_mem = (size_t)n;
	}
#ifdef RANKMAP_SMPI
	env->guard = 0; /* simulated ranks are threads of one process: nothing to fork */
#endif
	return 0;
}

int rmp_env_read(rmp_env_t *env, rm_error_t *err)
{
	const char *v;

	memset(env, 0, sizeof(*env));
	env->disable = rmp_disabled();
	v = env_str("RANKMAP_VERBOSE");
	env->verbose = v && strcmp(v, "0") != 0;
	env->report = env_str("RANKMAP_REPORT");
	v = env_alias("RANKMAP_ENGINE", "RANKMAP_ALGO"); /* an engine's name, whatever its case: "Auto" is auto */
	env->algo = v ? map_algorithm_find(v) : "auto";
	if (!env->algo)
		return rm_error_set(err, env_str("RANKMAP_ENGINE") ? "RANKMAP_ENGINE" : "RANKMAP_ALGO", 0, 0,
				    "'%s' is not an engine (%s)", v, map_algorithm_list());
	v = env_str("RANKMAP_TIME_BUDGET_MS");
	if (v) {
		char *end;

		env->budget_ms = strtod(v, &end);
		if (*end || !(env->budget_ms > 0))
			return rm_error_set(err, "RANKMAP_TIME_BUDGET_MS", 0, 0, "'%s' is not a positive time", v);
		if (env->budget_ms > MAP_MAX_BUDGET_MS)
			return rm_error_set(err, "RANKMAP_TIME_BUDGET_MS", 0, 0, "'%s' is more than %d ms (one minute)",
					    v, MAP_MAX_BUDGET_MS);
	}
	env->pattern = env_alias("RANKMAP_MATRIX", "RANKMAP_PATTERN");
	env->cluster = env_str("RANKMAP_CLUSTER");
	env->socket = rmp_env_server();
	env->timeout_ms = 0;
	v = env_str("RANKMAP_TIMEOUT_MS");
	if (v) {
		char *end;
		long t = strtol(v, &end, 10);

		if (*end || t < 1 || t > 600000)
			return rm_error_set(err, "RANKMAP_TIMEOUT_MS", 0, 0, "'%s' is not a number of milliseconds", v);
		env->timeout_ms = (int)t;
	}
	v = env_str("RANKMAP_METRIC");
	env->metric = MAP_METRIC_DEFAULT;
	if (v && map_metric_parse(v, &env->metric) != 0)
		return rm_error_set(err, "RANKMAP_METRIC", 0, 0, "'%s' is not bytes, messages or loggp", v);
	if (env_guard(env, err) != 0)
		return -1;
	v = env_str("RANKMAP_SLOTS");
	if (!v || !strcasecmp(v, "auto"))
		env->slots = RMP_SLOTS_AUTO;
	else if (!strcasecmp(v, "core"))
		env->slots = RMP_SLOTS_CORE;
	else if (!strcasecmp(v, "gpu"))
		env->slots = RMP_SLOTS_GPU;
	else
		return rm_error_set(err, "RANKMAP_SLOTS", 0, 0, "'%s' is not auto, core or gpu", v);
	return env_fake(env, err);
}

static int agree(rmp_call_t *call, int local_fail, uint64_t hash);

int rmp_agree(rmp_call_t *call, int local_fail, uint64_t hash)
{
	int rc = agree(call, local_fail, hash);

	if (rc != 0) {
		free(call->codes);
		call->codes = NULL;
	}
	return rc;
}

/* This process's host (SLURMD_NODENAME, else the host name, as pmpi_place.c names it) as a hash, computed
 * once, and whether it is bound to a single PU now. Under SMPI: 0, 0 (the one-host rule is off). */
static void host_of(uint64_t *hash, int *bound)
{
	*hash = 0, *bound = 0;
#ifndef RANKMAP_SMPI
	static uint64_t cached;
	cpu_set_t set;

	if (!cached) {
		char name[RMP_HOST_LEN] = "localhost";
		const char *slurm = getenv("SLURMD_NODENAME");

		if (slurm && *slurm)
			snprintf(name, sizeof(name), "%s", slurm);
		else if (gethostname(name, sizeof(name) - 1) != 0)
			snprintf(name, sizeof(name), "localhost");
		name[sizeof(name) - 1] = 0;
		cached = RMP_HASH_INIT;
		for (const char *c = name; *c; c++)
			cached = (cached ^ (unsigned char)*c) * 1099511628211ULL;
		cached = cached ? cached : 1;
	}
	*hash = cached;
	*bound = sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) == 1;
#endif
}

/* The agreement's fixed words; each observer's RMP_VOTE_WORDS follow them. */
#define AGREE_WORDS 11
#define AGREE_MAX (AGREE_WORDS + RMP_VOTE_WORDS * RMP_OBSERVERS_MAX)

static int agree(rmp_call_t *call, int local_fail, uint64_t hash)
{
	/* max of (hash, ~hash) is (hash, ~hash) only when all hashes are equal (compared as signed or as
	 * unsigned: ~ reverses either order); the third entry elects the lowest failing rank. The elections
	 * stay below 2^63 (RMP_ELECT): MPICH 4.0's MPI_MAX compares MPI_UINT64_T as signed, and a failure
	 * elected as UINT64_MAX - rank was lost beside the zeros of the ranks that did not fail. The fourth
	 * says whether some rank's MPI_Cart_map/MPI_Graph_map promised the unreordered placement of this call;
	 * the fifth and sixth whether every rank runs on the same host (same trick as the hash), the seventh
	 * whether some rank is bound to a single PU or drives a known GPU, the eighth the ranks' GPU status
	 * (rmp_gpu_local: 0 when no rank names a GPU, and the GPUs are then not gathered). The ninth says
	 * whether some rank asks for the plain call (RANKMAP_DISABLE, RANKMAP_TRACE), the tenth elects the
	 * lowest rank that does not (it warns, once, when the settings differ), the eleventh whether some rank
	 * is observed (RANKMAP_LEARN): the settings of the ranks may differ, the path they take may not. Then
	 * each observer's words (rmp_observer_t.vote), so that no feature adds a collective of its own. */
	int fail = local_fail || rm_error_isset(&call->err), bound = 0,
	    nw = AGREE_WORDS + RMP_VOTE_WORDS * rmp_observer_count();
	uint64_t host = 0, in[AGREE_MAX], out[AGREE_MAX];

	int gpu = rmp_gpu_local(call);

	host_of(&host, &bound);
	bound |= gpu == 1; /* a rank on a GPU has a place on its host, bound or not */
	in[0] = hash, in[1] = ~hash, in[2] = fail ? RMP_ELECT(call->rank) : 0;
	in[3] = (uint64_t)(call->key && rmp_memo_promised(call->comm, call->key));
	in[4] = host, in[5] = ~host, in[6] = (uint64_t)bound, in[7] = (uint64_t)gpu;
	in[8] = (uint64_t)(call->plain != 0), in[9] = call->plain ? 0 : RMP_ELECT(call->rank);
	in[10] = (uint64_t)(call->observed != 0);
	rmp_obs_vote(call, in + AGREE_WORDS);
	if (PMPI_Allreduce(in, out, nw, MPI_UINT64_T, MPI_MAX, call->comm) != MPI_SUCCESS) {
		/* With MPI_ERRORS_ARE_FATAL we never get here; with ERRORS_RETURN every rank sees it. */
		if (call->rank == 0) {
			rm_error_set(&call->err, "MPI", 0, 0, "MPI_Allreduce failed");
			rmp_warn(call);
		}
		return -1;
	}
	if (out[8] != 0) { /* some rank disabled or tracing: the plain call for all (then remembered) */
		if (out[9] != 0 && RMP_ELECT(call->rank) == out[9]) {
			rm_error_t e = { 0 };
			rmp_call_t w = *call;

			rm_error_set(
				&e, "RANKMAP_DISABLE", 0, 0,
				"some ranks ask for the plain call (RANKMAP_DISABLE, or a run that never reorders), "
				"not all: every rank takes it");
			w.err = e;
			rmp_warn(&w);
			rmp_mixed_warned = 1;
		}
		if (call->key)
			rmp_memo_result(call->comm, call->key, RMP_MEMO_PLAIN);
		return -1;
	}
	call->observed = out[10] != 0; /* some rank learns: the full path for all, nothing remembered */
	if (out[2] != 0) {
		if (RMP_ELECT(call->rank) == out[2])
			rmp_warn(call);
		return -1;
	}
	if (out[0] != hash || out[1] != ~hash) {
		if (call->rank == 0) {
			rm_error_set(&call->err, "arguments", 0, 0, "ranks passed different arguments");
			rmp_warn(call);
		}
		return -1;
	}
	if (out[3] != 0) { /* MPI_Cart_map/MPI_Graph_map answered the unreordered placement: keep it */
		if (!call->observed)
			rmp_memo_result(call->comm, call->key, RMP_MEMO_PLAIN);
		return -1;
	}
	/* One host, no rank bound to a PU: where a rank runs on the host is the scheduler's choice from one
	 * moment to the next, so no order of the ranks is better than another (real placement only). */
	if (out[4] == host && out[5] == ~host && out[6] == 0 && host != 0 && !call->env.fake_hosts &&
	    !call->env.fake_node && !call->env.fake_xml &&
	    !call->observed) { /* an observed call (learning) still takes the path */
		rmp_memo_verdict(call->comm, call->envh, NULL);
		return -1;
	}
	call->gpus = (int)out[7];
	rmp_obs_agreed(call, out + AGREE_WORDS);
	return 0;
}

int rmp_call_begin(rmp_call_t *call, const char *fn, MPI_Comm comm)
{
	memset(call, 0, sizeof(*call));
	call->fn = fn;
	call->comm = comm;
	if (rmp_foreign) { /* another MPI's program: no MPI call of ours (pmpi_check.c) */
		rmp_foreign_warn();
		return -1;
	}
	call->t0 = PMPI_Wtime();
	if (comm == MPI_COMM_NULL)
		return -1;
	int inter = 0;

	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return -1; /* the real call reports the error */
	PMPI_Comm_rank(comm, &call->rank);
	PMPI_Comm_size(comm, &call->size);
	if (call->size < 2)
		return -1; /* nothing can move: the plain call, at no cost */
	call->envh = rmp_env_hash();
	/* disabled, or a tracing run (it never reorders): this rank asks for the plain call, which the
	 * agreement makes job-wide (a rank that went its own way would leave the others in a collective) */
	call->plain = rmp_disabled() || rmp_obs_plain();
	if (rmp_env_read(&call->env, &call->err) != 0)
		return 0; /* reported collectively by rmp_agree */
	/* the root's scatter buffer, allocated now so that a failure is part of rmp_agree's decision */
	if (call->rank == 0 && !(call->codes = malloc(sizeof(int) * (size_t)call->size)))
		rm_error_set(&call->err, "rankmap", 0, 0, "out of memory for %d ranks", call->size);
	rmp_obs_call_begin(call);
	return 0;
}

int rmp_call_memo(rmp_call_t *call, int kind, uint64_t args, int *newrank)
{
	if (kind != RMP_KIND_DIST)
		call->key = rmp_memo_key(kind, args, call->envh);
	/* an observed call (learning records every call) takes the full path and the agreement it rides on */
	if (call->observed || rm_error_isset(&call->err) ||
	    rmp_memo_lookup(call->comm, call->envh, call->key, kind != RMP_KIND_DIST, newrank) != RMP_MEMO_HIT)
		return 0;
	const char *cause = rmp_memo_cause(call->comm);

	if (call->env.verbose && *newrank == RMP_MEMO_PLAIN && *cause) { /* the rank that warned, again */
		fprintf(stderr, "rankmap: %s: %s (known); continuing without reordering\n", call->fn, cause);
		fflush(stderr);
	}
	free(call->codes);
	call->codes = NULL;
	return 1;
}
