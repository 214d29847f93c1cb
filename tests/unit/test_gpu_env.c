/*
 * tests/unit/test_gpu_env.c: the device variables of every GPU runtime and of Slurm (common/rm_gpuenv.c):
 * each variable's grammar (lists, ranges where Slurm writes them, UUIDs, MIG ids, empty, garbage with the
 * column named), and which one GPU a process drives from a whole environment.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm_gpuenv.h"
#include "tests/harness.h"

/* Lists: value, syntax, expected count (-1: error), first index, first uuid, error column. */
static const struct {
	const char *value;
	rm_gpu_syntax_t syn;
	int n;
	int first;
	const char *uuid;
	int col;
	int last;
} lists[] = {
	{ "0,1,2,3", RM_GPU_SYNTAX_CUDA, 4, 0, "", 0, 3 },
	{ "2", RM_GPU_SYNTAX_CUDA, 1, 2, "", 0, 2 },
	{ "", RM_GPU_SYNTAX_CUDA, 0, 0, "", 0, 0 },
	{ "NoDevFiles", RM_GPU_SYNTAX_CUDA, 0, 0, "", 0, 0 },
	/* CUDA: the first invalid entry ends the list */
	{ "0,2,-1,1", RM_GPU_SYNTAX_CUDA, 2, 0, "", 0, 2 },
	{ "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", RM_GPU_SYNTAX_CUDA, 1, -1,
	  "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", 0, -1 },
	{ "GPU-8932f937", RM_GPU_SYNTAX_CUDA, 1, -1, "GPU-8932f937", 0, -1 },
	{ "MIG-GPU-8932f937-d72c-4106-c12f-20bd9faed9f6/1/0", RM_GPU_SYNTAX_CUDA, 1, -1,
	  "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", 0, -1 },
	{ "MIG-c6ae8ae4-2d2f-5b0a-a0a9-4d3f4c1b5e2a", RM_GPU_SYNTAX_CUDA, 1, -1,
	  "MIG-c6ae8ae4-2d2f-5b0a-a0a9-4d3f4c1b5e2a", 0, -1 },
	{ "0-3", RM_GPU_SYNTAX_CUDA, -1, 0, "", 1, 0 }, /* no ranges in CUDA */
	{ "abc", RM_GPU_SYNTAX_CUDA, -1, 0, "", 1, 0 },
	{ "GPU-xyz", RM_GPU_SYNTAX_CUDA, -1, 0, "", 1, 0 },
	{ "0,GPU-4b2c1a9f", RM_GPU_SYNTAX_ROCR, 2, 0, "", 0, -1 },
	{ "1,x", RM_GPU_SYNTAX_ROCR, -1, 0, "", 3, 0 }, /* ROCm: a bad entry is an error */
	{ "0,2", RM_GPU_SYNTAX_INDEX, 2, 0, "", 0, 2 },
	{ "GPU-4b2c1a9f", RM_GPU_SYNTAX_INDEX, -1, 0, "", 1, 0 },
	{ "1.2", RM_GPU_SYNTAX_ZE, 1, 1, "", 0, 1 },
	{ "0,1.0,3", RM_GPU_SYNTAX_ZE, 3, 0, "", 0, 3 },
	{ "0.1.2", RM_GPU_SYNTAX_ZE, 1, 0, "", 0, 0 },
	{ "1.", RM_GPU_SYNTAX_ZE, -1, 0, "", 1, 0 },
	{ "0,,1", RM_GPU_SYNTAX_ZE, -1, 0, "", 3, 0 },
	{ "0-3,6", RM_GPU_SYNTAX_SLURM, 5, 0, "", 0, 6 },
	{ "5", RM_GPU_SYNTAX_SLURM, 1, 5, "", 0, 5 },
	{ "3-1", RM_GPU_SYNTAX_SLURM, -1, 0, "", 1, 0 },
	{ "99999999", RM_GPU_SYNTAX_SLURM, -1, 0, "", 1, 0 },
};

/* Environments: "NAME=value" entries separated by '|'; expected rc, namespace, index or uuid, error text. */
static const struct {
	const char *env;
	int rc;
	rm_gpu_ns_t ns;
	int index;
	const char *uuid;
	const char *err;
} picks[] = {
	{ "", 0, RM_GPU_NS_NONE, 0, NULL, NULL },
	{ "CUDA_VISIBLE_DEVICES=3", 1, RM_GPU_NS_PCI, 3, NULL, NULL },
	{ "ROCR_VISIBLE_DEVICES=5", 1, RM_GPU_NS_PCI, 5, NULL, NULL },
	{ "HIP_VISIBLE_DEVICES=1", 1, RM_GPU_NS_PCI, 1, NULL, NULL },
	{ "GPU_DEVICE_ORDINAL=6", 1, RM_GPU_NS_PCI, 6, NULL, NULL },
	{ "ZE_AFFINITY_MASK=2.1", 1, RM_GPU_NS_PCI, 2, NULL, NULL },
	{ "CUDA_VISIBLE_DEVICES=GPU-abcd", 1, RM_GPU_NS_UUID, -1, "GPU-abcd", NULL },
	/* a UUID wins over an index that says the same or where the index is a relative one */
	{ "CUDA_VISIBLE_DEVICES=GPU-abcd|GPU_DEVICE_ORDINAL=0", 1, RM_GPU_NS_UUID, -1, "GPU-abcd", NULL },
	/* Slurm sets every variable to the same value */
	{ "CUDA_VISIBLE_DEVICES=2|ROCR_VISIBLE_DEVICES=2|GPU_DEVICE_ORDINAL=2|ZE_AFFINITY_MASK=2|SLURM_STEP_GPUS=2", 1,
	  RM_GPU_NS_PCI, 2, NULL, NULL },
	/* relative to the step's GPUs (ConstrainDevices): position 1 of 4,6 */
	{ "CUDA_VISIBLE_DEVICES=1|SLURM_STEP_GPUS=4,6", 1, RM_GPU_NS_PCI, 6, NULL, NULL },
	/* global: 6 is one of the step's GPUs and no position */
	{ "CUDA_VISIBLE_DEVICES=6|SLURM_STEP_GPUS=4,6", 1, RM_GPU_NS_PCI, 6, NULL, NULL },
	/* both readings agree */
	{ "CUDA_VISIBLE_DEVICES=1|SLURM_STEP_GPUS=0-3", 1, RM_GPU_NS_PCI, 1, NULL, NULL },
	/* both readings possible and different */
	{ "CUDA_VISIBLE_DEVICES=1|SLURM_STEP_GPUS=1,3", -1, RM_GPU_NS_NONE, 0, NULL, "ambiguous" },
	{ "CUDA_VISIBLE_DEVICES=7|SLURM_STEP_GPUS=2,3", -1, RM_GPU_NS_NONE, 0, NULL, "neither" },
	/* the job's GPUs when the step's are unset */
	{ "CUDA_VISIBLE_DEVICES=0|SLURM_JOB_GPUS=5,7", 1, RM_GPU_NS_PCI, 5, NULL, NULL },
	/* Slurm alone */
	{ "SLURM_STEP_GPUS=3", 1, RM_GPU_NS_PCI, 3, NULL, NULL },
	{ "SLURM_STEP_GPUS=3,4", -1, RM_GPU_NS_NONE, 0, NULL, "no device variable says which" },
	/* a per-task variable narrower than Slurm's step list */
	{ "CUDA_VISIBLE_DEVICES=0,1,2,3|ROCR_VISIBLE_DEVICES=2", 1, RM_GPU_NS_PCI, 2, NULL, NULL },
	{ "CUDA_VISIBLE_DEVICES=0,1", -1, RM_GPU_NS_NONE, 0, NULL, "several devices" },
	{ "CUDA_VISIBLE_DEVICES=", -1, RM_GPU_NS_NONE, 0, NULL, "no device is visible" },
	{ "CUDA_VISIBLE_DEVICES=NoDevFiles", -1, RM_GPU_NS_NONE, 0, NULL, "no device is visible" },
	{ "CUDA_VISIBLE_DEVICES=1|ROCR_VISIBLE_DEVICES=2", -1, RM_GPU_NS_NONE, 0, NULL, "different devices" },
	{ "CUDA_VISIBLE_DEVICES=GPU-ab|ROCR_VISIBLE_DEVICES=GPU-cd", -1, RM_GPU_NS_NONE, 0, NULL, "different devices" },
	{ "CUDA_VISIBLE_DEVICES=GPU-abcd|ROCR_VISIBLE_DEVICES=GPU-ab", 1, RM_GPU_NS_UUID, -1, "GPU-abcd", NULL },
	{ "ZE_AFFINITY_MASK=x.1", -1, RM_GPU_NS_NONE, 0, NULL, "ZE_AFFINITY_MASK" },
	{ "CUDA_VISIBLE_DEVICES=0|SLURM_STEP_GPUS=a", -1, RM_GPU_NS_NONE, 0, NULL, "SLURM_STEP_GPUS" },
};

static const char *env_get(const char *name, void *arg)
{
	static char buf[8][256];
	static int k;
	const char *p = arg;
	size_t nl = strlen(name);

	while (p && *p) {
		size_t len = strcspn(p, "|");

		if (len > nl && !strncmp(p, name, nl) && p[nl] == '=') {
			k = (k + 1) % 8;
			snprintf(buf[k], sizeof(buf[k]), "%.*s", (int)(len - nl - 1), p + nl + 1);
			return buf[k];
		}
		p += len + (p[len] == '|');
	}
	return NULL;
}

int main(void)
{
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		rm_gpu_id_t ids[8];
		rm_error_t err = { 0 };
		size_t n = 99;
		int rc = rm_gpu_list_parse("VAR", lists[i].value, lists[i].syn, ids, 8, &n, &err);

		if (lists[i].n < 0) {
			check(rc == -1 && errno == EINVAL && !strcmp(err.source, "VAR") && err.column == lists[i].col,
			      "'%s' is refused at column %d (rc %d, column %d: %s)", lists[i].value, lists[i].col, rc,
			      err.column, err.text);
			continue;
		}
		check(rc == 0 && n == (size_t)lists[i].n, "'%s': %d devices (rc %d, n %zu: %s)", lists[i].value,
		      lists[i].n, rc, n, err.text);
		if (rc == 0 && n > 0) {
			check(ids[0].index == lists[i].first && !strcmp(ids[0].uuid, lists[i].uuid),
			      "'%s': first is %d '%s' (got %d '%s')", lists[i].value, lists[i].first, lists[i].uuid,
			      ids[0].index, ids[0].uuid);
			check(ids[n - 1].index == lists[i].last, "'%s': last index %d (got %d)", lists[i].value,
			      lists[i].last, ids[n - 1].index);
		}
	}
	{ /* ZE sub-devices are kept */
		rm_gpu_id_t ids[2];
		size_t n = 0;

		check(rm_gpu_list_parse("ZE_AFFINITY_MASK", "3.1", RM_GPU_SYNTAX_ZE, ids, 2, &n, NULL) == 0 && n == 1 &&
			      ids[0].index == 3 && ids[0].sub == 1,
		      "ZE 3.1 is device 3 tile 1");
		/* more entries than room: counted, not written */
		check(rm_gpu_list_parse("S", "0-99", RM_GPU_SYNTAX_SLURM, ids, 2, &n, NULL) == 0 && n == 100 &&
			      ids[1].index == 1,
		      "a range longer than the room is counted (%zu)", n);
	}
	for (size_t i = 0; i < sizeof(picks) / sizeof(picks[0]); i++) {
		rm_gpu_pick_t p;
		rm_error_t err = { 0 };
		int rc = rm_gpu_env_pick(env_get, (void *)picks[i].env, &p, &err);

		check(rc == picks[i].rc, "[%s]: rc %d (got %d: %s)", picks[i].env, picks[i].rc, rc, err.text);
		if (rc != picks[i].rc)
			continue;
		if (rc == 1) {
			check(p.ns == picks[i].ns, "[%s]: namespace %d (got %d)", picks[i].env, picks[i].ns, p.ns);
			if (picks[i].uuid)
				check(!strcmp(p.id.uuid, picks[i].uuid), "[%s]: uuid %s (got %s)", picks[i].env,
				      picks[i].uuid, p.id.uuid);
			else
				check(p.id.index == picks[i].index, "[%s]: GPU %d (got %d, from %s)", picks[i].env,
				      picks[i].index, p.id.index, p.source);
			check(p.source[0] != '\0', "[%s]: the source is named (%s)", picks[i].env, p.source);
		}
		if (picks[i].err) {
			char buf[600];

			rm_error_format(&err, buf, sizeof(buf));
			check(strstr(buf, picks[i].err) != NULL, "[%s]: error says '%s' (got '%s')", picks[i].env,
			      picks[i].err, buf);
		}
	}
	check(rm_gpu_uuid_match("GPU-8932f937", "GPU-8932F937-d72c-4106-c12f-20bd9faed9f6"), "a UUID prefix matches");
	check(rm_gpu_uuid_match("8932f937", "GPU-8932f937-d72c"), "GPU- is optional");
	check(!rm_gpu_uuid_match("GPU-8932f938", "GPU-8932f937-d72c"), "another UUID does not match");
	check(!rm_gpu_uuid_match("GPU-", "GPU-8932f937"), "an empty prefix matches nothing");
	check(!rm_gpu_uuid_match("GPU-8932f937-d72c-ffff", "GPU-8932f937-d72c"), "a longer UUID does not match");
	return harness_done();
}
