/* Fuzz target: the GPU device variables (common/rm_gpuenv.c). Line k of the input (at most 7 lines) is the
 * value of the k-th variable (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES,
 * GPU_DEVICE_ORDINAL, ZE_AFFINITY_MASK, SLURM_STEP_GPUS, SLURM_JOB_GPUS); an empty line is an unset
 * variable, a line "=" an empty value. Each value is parsed in every syntax, then the pick is made; a pick
 * names one device (index >= 0, or a UUID of the form the parser accepts). */
#include "fuzz_util.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rm_gpuenv.h"

static const char *const names[] = { "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
				     "GPU_DEVICE_ORDINAL",   "ZE_AFFINITY_MASK",     "SLURM_STEP_GPUS",
				     "SLURM_JOB_GPUS" };
#define NVARS (sizeof(names) / sizeof(names[0]))

static const char *get(const char *name, void *arg)
{
	char **v = arg;

	for (size_t i = 0; i < NVARS; i++)
		if (!strcmp(name, names[i]))
			return v[i];
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *v[NVARS] = { 0 }, *p;
	rm_gpu_id_t ids[4];
	rm_gpu_pick_t pick;
	size_t k = 0, n;

	if (!buf)
		fz_die("malloc");
	memcpy(buf, data, size);
	buf[size] = 0;
	for (p = buf; p && k < NVARS; k++) {
		char *nl = strchr(p, '\n');

		if (nl)
			*nl = 0;
		v[k] = !*p ? NULL : !strcmp(p, "=") ? p + 1 : p;
		p = nl ? nl + 1 : NULL;
	}
	for (k = 0; k < NVARS; k++)
		for (int s = RM_GPU_SYNTAX_CUDA; v[k] && s <= RM_GPU_SYNTAX_SLURM; s++)
			(void)rm_gpu_list_parse(names[k], v[k], (rm_gpu_syntax_t)s, ids, 4, &n, NULL);
	if (rm_gpu_env_pick(get, v, &pick, NULL) == 1) {
		if (pick.ns == RM_GPU_NS_PCI && pick.id.index < 0)
			fz_die("a pick by index with a negative index");
		if (pick.ns == RM_GPU_NS_UUID && strncasecmp(pick.id.uuid, "GPU-", 4) &&
		    strncasecmp(pick.id.uuid, "MIG-", 4))
			fz_die("a pick by UUID that is no GPU- or MIG- UUID");
	}
	(void)rm_gpu_uuid_match(v[0], v[1]);
	free(buf);
	return 0;
}
