/*
 * plugin/mpi/pmpi_gpu.c: which GPU each rank drives, and whether a call maps onto GPU slots.
 *
 * Each rank reads its own device variables (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES,
 * HIP_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL, ZE_AFFINITY_MASK, SLURM_STEP_GPUS / SLURM_JOB_GPUS:
 * common/rm_gpuenv.h says what each runtime and Slurm accept). The agreement (rmp_agree) carries the
 * maximum of the ranks' statuses, so a job where no rank names a GPU gathers nothing more; otherwise
 * the root gathers one fixed-size record per rank (56 bytes) and resolves each against its host's GPUs
 * (topo/topo_gpu.h): a UUID (or a prefix of one, as CUDA takes it) against the GPUs' UUIDs, an index as
 * the host's GPU in PCI bus id order (Slurm's and NVML's numbering); no variable at all on a host with
 * exactly one GPU names that GPU ("the one device a rank can see").
 *
 * The slots are GPUs only when every rank of the call drives a distinct known GPU of its host: then the
 * mapping sees GPU costs (links inside a node, each GPU's NIC between nodes) and the new rank order
 * follows them. Reordering only renumbers: the device variables are read, never written, so every
 * process keeps its GPU. A mixed or unknown case maps onto cores with one warning (RANKMAP_SLOTS=gpu
 * or auto); RANKMAP_SLOTS=core never looks at GPUs. Through rankmapd the root has no hardware: it names
 * each rank's GPU in the map request ([host, "3"] or [host, UUID], slot_kind gpu: rmp_gpu_daemon_ids) and
 * the daemon resolves it on its model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi.h"
#include "rm_gpuenv.h"
#include "topo_gpu.h"

static const char *env_get(const char *name, void *arg)
{
	(void)arg;
	return getenv(name);
}

/* This rank's pick: rm_gpu_env_pick's 1 / 0 / -1. */
static int local_pick(rm_gpu_pick_t *pick)
{
	rm_error_t err = { 0 };

	return rm_gpu_env_pick(env_get, NULL, pick, &err);
}

int rmp_gpu_local(const rmp_call_t *call)
{
	rm_gpu_pick_t pick;
	int rc;

	if (call->env.slots == RMP_SLOTS_CORE)
		return 0;
	rc = local_pick(&pick);
	return rc == 1 ? 1 : rc == 0 ? 0 : 2;
}

int rmp_gpu_gather(rmp_call_t *call, rmp_gpu_rec_t **recs)
{
	rmp_gpu_rec_t me = { .index = -1 };
	rm_gpu_pick_t pick;
	int rc = 0;

	*recs = NULL;
	if (!call->gpus)
		return 0;
	me.status = rmp_gpu_local(call);
	if (me.status == 1 && local_pick(&pick) == 1) {
		if (pick.ns == RM_GPU_NS_UUID)
			snprintf(me.uuid, sizeof(me.uuid), "%.*s", RMP_GPU_UUID - 1, pick.id.uuid);
		else
			me.index = pick.id.index;
	}
	if (call->rank == 0 && !(*recs = malloc(sizeof(me) * (size_t)call->size)))
		rc = rm_error_set(&call->err, "placement", 0, 0, "out of memory for %d GPU records", call->size);
	PMPI_Gather(&me, (int)sizeof(me), MPI_BYTE, *recs, (int)sizeof(me), MPI_BYTE, 0, call->comm);
	return rc;
}

/* The GPU of host h that rec names, or -1. */
static long find_gpu(topo_cluster_t c, size_t h, const rmp_gpu_rec_t *rec)
{
	size_t n = topo_host_ngpus(c, h);
	long found = -1;

	if (rec->status == 0 && n == 1) /* no variable: the one device the rank can see */
		return 0;
	if (rec->status != 1)
		return -1;
	if (!rec->uuid[0])
		return rec->index >= 0 && (size_t)rec->index < n ? rec->index : -1;
	for (size_t i = 0; i < n; i++) {
		const char *u = topo_host_gpu_uuid(c, h, i); /* the host's own (hosts of one node type differ) */

		if (u && rm_gpu_uuid_match(rec->uuid, u)) {
			if (found >= 0)
				return -1; /* a prefix that names two GPUs names none (as CUDA) */
			found = (long)i;
		}
	}
	return found;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether two ranks share a (host, GPU): sorts the n keys. -1 on out of memory. */
static int shared_gpu(const int32_t *host, const uint32_t *gpu, size_t n, size_t *a)
{
	uint64_t *k = malloc(sizeof(*k) * (n + 1));
	int rc = 0;

	if (!k)
		return -1;
	for (size_t r = 0; r < n; r++)
		k[r] = (uint64_t)(uint32_t)host[r] << 32 | gpu[r];
	qsort(k, n, sizeof(*k), cmp_u64);
	for (size_t i = 1; i < n && !rc; i++)
		if (k[i] == k[i - 1]) {
			rc = 1;
			*a = (size_t)(k[i] & 0xffffffffu);
		}
	free(k);
	return rc;
}

int rmp_gpu_resolve(rmp_call_t *call, topo_cluster_t c, const int32_t *host, const rmp_gpu_rec_t *recs, uint32_t *gpu,
		    char *why, size_t len)
{
	size_t n = (size_t)call->size, g = 0;
	int none = 0, known = 0;

	why[0] = 0;
	if (!recs) { /* no rank names a GPU: GPU slots only when each host has one GPU, the one each rank sees */
		for (size_t r = 0; r < n; r++) {
			if (topo_host_ngpus(c, (size_t)host[r]) != 1)
				return 0;
			gpu[r] = 0;
		}
		return shared_gpu(host, gpu, n, &g) != 0 ? 0 : 1;
	}
	for (size_t r = 0; r < n; r++) {
		long i = find_gpu(c, (size_t)host[r], &recs[r]);

		if (i >= 0) {
			gpu[r] = (uint32_t)i, known++;
			continue;
		}
		if (recs[r].status == 0) {
			none++;
			continue;
		}
		const char *hn = topo_host_name(c, (size_t)host[r]);
		size_t ng = topo_host_ngpus(c, (size_t)host[r]);

		if (recs[r].status == 2)
			snprintf(why, len, "rank %zu: its device variables do not name one GPU", r);
		else if (recs[r].uuid[0])
			snprintf(why, len, "rank %zu: no GPU of %s has the UUID %s", r, hn, recs[r].uuid);
		else
			snprintf(why, len, "rank %zu: GPU %d, but %s has %zu GPUs", r, recs[r].index, hn, ng);
		return 0;
	}
	if (known == 0)
		return 0; /* nobody drives a GPU: cores, quietly */
	if (none > 0) {
		for (size_t r = 0; r < n; r++)
			if (recs[r].status == 0 && find_gpu(c, (size_t)host[r], &recs[r]) < 0) {
				snprintf(why, len, "rank %zu names no GPU while %d ranks do", r, known);
				break;
			}
		return 0;
	}
	int s = shared_gpu(host, gpu, n, &g);

	if (s != 0) {
		snprintf(why, len, s < 0 ? "out of memory" : "two ranks drive GPU %zu of one host: one rank per GPU",
			 g);
		return 0;
	}
	return 1;
}

/* A rank's (host name, GPU index) for the daemon path's check that no two ranks share a GPU. */
typedef struct host_gpu {
	const char *host;
	uint32_t gpu;
} host_gpu_t;

static int cmp_host_gpu(const void *a, const void *b)
{
	const host_gpu_t *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	return c ? c : x->gpu < y->gpu ? -1 : x->gpu > y->gpu;
}

int rmp_gpu_daemon_ids(rmp_call_t *call, const char *const *host, const rmp_gpu_rec_t *recs, char ***ids, char *why,
		       size_t len)
{
	size_t n = (size_t)call->size;
	host_gpu_t *hg = NULL;
	char **v = NULL;
	int rc = 0;

	why[0] = 0;
	*ids = NULL;
	if (!recs)
		return 0; /* no rank names a GPU: cores, quietly (rankmapd knows which hosts have one GPU only) */
	for (size_t r = 0; r < n; r++)
		if (recs[r].status != 1) {
			snprintf(why, len,
				 recs[r].status == 2 ? "rank %zu: its device variables do not name one GPU"
						     : "rank %zu names no GPU while others do",
				 r);
			return 0;
		}
	hg = malloc((n + 1) * sizeof(*hg));
	v = calloc(n + 1, sizeof(*v));
	if (!hg || !v) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	/* the same host name and index twice: two ranks on one GPU (names compared, not hashed: two hosts
	 * whose hashes collide are two hosts) */
	for (size_t r = 0; r < n; r++)
		hg[r] = (host_gpu_t){ host[r] ? host[r] : "", recs[r].uuid[0]
								      ? (uint32_t)(0x80000000u | (r & 0x7fffffffu))
								      : (uint32_t)recs[r].index };
	qsort(hg, n, sizeof(*hg), cmp_host_gpu);
	for (size_t i = 1; i < n; i++)
		if (!cmp_host_gpu(&hg[i], &hg[i - 1])) {
			snprintf(why, len, "two ranks drive GPU %u of host %s: one rank per GPU", hg[i].gpu,
				 hg[i].host);
			goto out;
		}
	for (size_t r = 0; r < n; r++) {
		char num[16];

		snprintf(num, sizeof(num), "%d", recs[r].index);
		if (!(v[r] = strdup(recs[r].uuid[0] ? recs[r].uuid : num))) {
			snprintf(why, len, "out of memory");
			goto out;
		}
	}
	*ids = v, v = NULL, rc = 1;
out:
	for (size_t r = 0; v && r < n; r++)
		free(v[r]);
	free(v);
	free(hg);
	return rc;
}

/* One warning when a call that could use GPU slots maps onto cores (the library, pmpi_place.c, or
 * rankmapd refused them, pmpi_daemon.c); the same reason again only when verbose. */
void rmp_gpu_fallback_warn(rmp_call_t *call, const char *why)
{
	static char last[256];

	snprintf(call->warning, sizeof(call->warning), "GPU slots not used: %s", why);
	if (strcmp(last, why) == 0 && !call->env.verbose)
		return;
	snprintf(last, sizeof(last), "%s", why);
	fprintf(stderr, "rankmap: %s: GPU slots not used (%s); mapping onto cores\n", call->fn, why);
	fflush(stderr);
}
