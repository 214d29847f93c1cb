/*
 * plugin/spank/spank_gpu.h: --rankmap-bind=gpu, one task's GPU, its nearest cores and its nearest NIC on
 * this node, and the variables that tell each transport which NIC to use.
 *
 * In each task (task_init) the plugin reads which GPU the task drives from the device variables Slurm
 * set for it (common/rm_gpuenv.h), finds that GPU in this node's hwloc tree (the I/O devices kept), binds
 * the task to the step's allocated cores nearest to it and exports its nearest NIC. It never changes
 * which GPU a task drives.
 *
 * Error rule: 0 on success, -1 with errno set and the caller's rm_error_t filled.
 */
#ifndef RANKMAP_SPANK_GPU_H
#define RANKMAP_SPANK_GPU_H

#include <stddef.h>
#include <stdint.h>

#include <hwloc.h>

#include "rm_error.h"
#include "rm_gpuenv.h"

#define RM_SPANK_GPU_ENV "RANKMAP_GPU" /* each task: its GPU's PCI bus id and OS device names */
#define RM_SPANK_NIC_ENV "RANKMAP_NIC" /* each task: the NIC exported to the transports */

/* Loads this host's hwloc tree with its GPUs and NICs (important I/O devices kept; hwloc's own
 * HWLOC_XMLFILE is honoured). Returns 0 or -1. */
int rm_spank_gpu_topology(hwloc_topology_t *topo, rm_error_t *err);

/* The node's compute GPUs: PCI devices with a CUDA, NVML, RSMI, LevelZero or OpenCL OS device (a
 * display-only GPU is not one), in PCI bus id order (Slurm's and NVML's numbering, rm_gpuenv.h).
 * Returns a malloc'd array (*n entries; NULL with *n = 0 when there are none). */
hwloc_obj_t *rm_spank_gpu_list(hwloc_topology_t topo, size_t *n);

/* The node's NICs: PCI devices with a network or OpenFabrics OS device; when some are HPC NICs
 * (OpenFabrics: InfiniBand, RoCE, EFA; or HPE Slingshot, PCI vendor 0x17db) only those. PCI bus id order. */
hwloc_obj_t *rm_spank_nic_list(hwloc_topology_t topo, size_t *n);

/* What a task gets. */
typedef struct rm_spank_gpu_place {
	int gpu;            /* index in rm_spank_gpu_list */
	char gpu_desc[128]; /* "0000:c1:00.0 rsmi4" */
	char cpus[4096];    /* OS CPUs to bind to: the allocated cores nearest the GPU ("" when none known) */
	int nic;            /* index in rm_spank_nic_list, -1 when the node has none */
	char nic_name[64];  /* OpenFabrics name when there is one (mlx5_0), else the network interface (hsn0) */
	char nic_net[64];   /* the network interface name ("" when none) */
	int nic_port;       /* OpenFabrics port for UCX (1), 0 when not OpenFabrics */
	int slingshot;      /* HPE Slingshot (PCI vendor 0x17db): Cray MPICH's NIC index is nic_index */
	int nic_index;      /* the number in the NIC's name (hsn2: 2), -1 when none */
} rm_spank_gpu_place_t;

/* Finds pick's GPU (index in PCI order, or UUID against the OS devices' *UUID infos, a prefix allowed),
 * its nearest allocated cores (alloc: Slurm's logical core list, S_STEP_ALLOC_CORES; NULL: every core)
 * and its nearest NIC. The nearest cores are the allocated ones among the GPU's share of its locality
 * (its non-I/O ancestor's cores split evenly, in PCI order, among the GPUs of that locality: the GPU
 * slot's cores, topo_gpu_t.cpuset); when none is allocated, the allocated cores of its locality, else of
 * its package, else an error. The nearest NIC is the one whose path to the GPU in the tree is shortest; NICs equally near
 * are shared out among the GPUs that see the same ones, in PCI order. Returns 0 or -1. */
int rm_spank_gpu_place(hwloc_topology_t topo, const rm_gpu_pick_t *pick, const char *alloc, rm_spank_gpu_place_t *out,
		       rm_error_t *err);

/* One variable for the task. */
typedef struct rm_spank_nic_var {
	const char *name;
	char value[1024];
} rm_spank_nic_var_t;
#define RM_SPANK_NIC_VARS 6

/* The variables that name the NIC to each transport (ntasks: the node's tasks, for Cray MPICH's
 * mapping): UCX_NET_DEVICES, OMPI_MCA_btl_openib_if_include, MPICH_OFI_NIC_POLICY and
 * MPICH_OFI_NIC_MAPPING, RANKMAP_NIC. Returns their count. */
size_t rm_spank_nic_vars(const rm_spank_gpu_place_t *p, uint32_t ntasks, rm_spank_nic_var_t *vars);

#endif
