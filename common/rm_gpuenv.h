/*
 * common/rm_gpuenv.h: which GPU a process drives, from the device variables that GPU runtimes read and
 * that Slurm sets. Pure parsing: no hardware is looked at (the caller matches the result against its
 * model of the node: topo/'s GPUs).
 *
 * The variables and what each accepts (the runtimes' own documentation):
 *   CUDA_VISIBLE_DEVICES  NVIDIA, "CUDA Environment Variables" (CUDA Programming Guide, appendix 5.2):
 *                         a comma-separated sequence of integer indices or GPU UUIDs as nvidia-smi -L
 *                         prints them (GPU-8932f937-...; a unique prefix is enough), MIG devices as
 *                         MIG-<GPU-UUID>/<GI>/<CI> or MIG-<UUID>; the first invalid entry ends the
 *                         list (0,2,-1,1 makes 0 and 2 visible); set but empty: no device. No ranges.
 *   ROCR_VISIBLE_DEVICES  AMD ROCm, "ROCm environment variables" (GPU isolation): device indices or
 *                         UUIDs (0,GPU-4b2c1a9f...).
 *   HIP_VISIBLE_DEVICES   AMD HIP: device indices (HIP also reads CUDA_VISIBLE_DEVICES, same meaning).
 *   GPU_DEVICE_ORDINAL    AMD OpenCL and HIP: device indices (Slurm sets it too).
 *   ZE_AFFINITY_MASK      Intel Level Zero specification, "Affinity Mask": a comma-separated list of
 *                         device[.subdevice] indices (0,1.2).
 *   SLURM_STEP_GPUS, SLURM_JOB_GPUS  Slurm (srun(1) and sbatch(1), OUTPUT ENVIRONMENT VARIABLES): the
 *                         global GPU indices of the step's (job's) GPUs on this node. Slurm numbers a
 *                         node's GPUs by sorting them by PCI bus id (gres.conf(5), Links), as NVML does.
 *                         Slurm's gres plugin also sets CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES,
 *                         ZE_AFFINITY_MASK and GPU_DEVICE_ORDINAL for each task (per task with
 *                         --gpu-bind or --gpus-per-task), with indices relative to the step's GPUs when
 *                         cgroup ConstrainDevices hides the others, global ones otherwise (Slurm's
 *                         gres.html, "GPU Management").
 *
 * Error rule: common/rm_error.h.
 */
#ifndef RANKMAP_RM_GPUENV_H
#define RANKMAP_RM_GPUENV_H

#include <stddef.h>
#include <stdint.h>

#include "rm_error.h"

#define RM_GPU_UUID_LEN 96

/* One device named by a variable: by index (in the numbering that variable uses) or by UUID. */
typedef struct rm_gpu_id {
	int32_t index;              /* >= 0, or -1 when named by UUID */
	int32_t sub;                /* ZE_AFFINITY_MASK's sub-device (tile), -1 when none */
	char uuid[RM_GPU_UUID_LEN]; /* "GPU-..." (a GPU, maybe a prefix), "MIG-..." (a MIG device); "" by index */
} rm_gpu_id_t;

/* The grammar a variable's value follows. */
typedef enum rm_gpu_syntax {
	RM_GPU_SYNTAX_CUDA,  /* indices and UUIDs; the first invalid entry ends the list */
	RM_GPU_SYNTAX_ROCR,  /* indices and UUIDs (ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES) */
	RM_GPU_SYNTAX_INDEX, /* indices only (GPU_DEVICE_ORDINAL) */
	RM_GPU_SYNTAX_ZE,    /* device[.subdevice] */
	RM_GPU_SYNTAX_SLURM  /* indices and ranges a-b (SLURM_STEP_GPUS, SLURM_JOB_GPUS) */
} rm_gpu_syntax_t;

/* Parses value (a variable named name, for messages) into ids (at most max entries; the rest are
 * counted), *n the number of devices listed. An empty value lists none (*n = 0). Slurm's "NoDevFiles"
 * (a GPU allocation without device files) lists none. Returns 0, or -1 (EINVAL) with err naming the
 * variable and the column of the first bad entry: a first entry that is no device, and with every
 * syntax but CUDA's any bad entry. */
int rm_gpu_list_parse(const char *name, const char *value, rm_gpu_syntax_t syntax, rm_gpu_id_t *ids, size_t max,
		      size_t *n, rm_error_t *err);

/* Where the result's index comes from. */
typedef enum rm_gpu_ns {
	RM_GPU_NS_NONE = 0,
	RM_GPU_NS_PCI,  /* the node's i-th GPU by PCI bus id (Slurm's, NVML's numbering) */
	RM_GPU_NS_UUID, /* named by UUID (id.uuid) */
} rm_gpu_ns_t;

/* Which GPU this process drives. */
typedef struct rm_gpu_pick {
	rm_gpu_ns_t ns;
	rm_gpu_id_t id;
	char source[96]; /* the variable(s) it was read from, "CUDA_VISIBLE_DEVICES=2" */
} rm_gpu_pick_t;

/* Reads the variables through get(name, arg) (getenv-like; NULL when unset) and finds the one GPU the
 * process drives:
 *   - each of CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL and
 *     ZE_AFFINITY_MASK that is set is parsed; a variable listing exactly one device names it; a UUID
 *     wins over an index; two variables naming different devices are ambiguous (an error);
 *   - an index is taken against the step's GPUs (SLURM_STEP_GPUS, else SLURM_JOB_GPUS, a list G) when
 *     Slurm set them: i is global when i is in G (and i >= |G| or G[i] = i), relative (G[i]) when
 *     i < |G| and i is not in G, else ambiguous; without G it is the node's i-th GPU;
 *   - with none of the runtime variables set, SLURM_STEP_GPUS (else SLURM_JOB_GPUS) listing one GPU
 *     names it.
 * Returns 1 with *pick filled; 0 when no variable names any GPU (the caller may still take the one GPU
 * a node has); -1 (EINVAL) with err saying why (a malformed value, several devices visible, ambiguous
 * variables, no device visible). */
int rm_gpu_env_pick(const char *(*get)(const char *name, void *arg), void *arg, rm_gpu_pick_t *pick, rm_error_t *err);

/* Whether uuid (a GPU's full UUID, "GPU-..." or bare hex) is named by want (a UUID or a prefix of one,
 * "GPU-" optional on either side, case-insensitive), as CUDA matches abbreviated UUIDs. */
int rm_gpu_uuid_match(const char *want, const char *uuid);

#endif
