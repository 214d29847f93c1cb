/*
 * topo/report/topo_gres.h: Slurm's gres.conf lines for the GPUs of a cluster's hosts (`rankmapctl
 * slurm-gres`), from the GPU model (topo/topo_gpu.h).
 *
 * One line per GPU, in the node's GPU order (PCI bus id order, Slurm's own device numbering: gres.conf(5),
 * Links), in the grammar of gres.conf(5) as Slurm 22.05 reads it:
 *   NodeName=<hosts> Name=gpu Type=<type> File=<device> Cores=<cores> Links=<counts>
 *   - NodeName: the hosts whose lines are the same, as a compressed host list (n[1-4]);
 *   - Type: the GPU's model (hwloc's GPUModel), lower case, characters other than letters, digits, '.',
 *     '-' and '_' made '_', as Slurm's AutoDetect names types ("nvidia_h100_80gb_hbm3");
 *   - File: the device file the GPU's driver creates: the DRM render node hwloc recorded for it
 *     (renderD<N>) when there is one, else /dev/nvidia<k> for an NVIDIA GPU (CUDA or NVML backend: k its
 *     rank among the node's NVIDIA GPUs, NVML's index, which is the minor number on usual installs) and
 *     /dev/dri/renderD<128+k> for an AMD or Intel GPU (RSMI, LevelZero, OpenCL: k its rank among them);
 *     a prefix (dev_root) is put in front of every path;
 *   - Cores: Slurm's logical core indices (hwloc's logical core numbers, "Core L#") of the cores of the
 *     NUMA node(s) the GPU is attached to (its locality widened to the smallest object that holds
 *     memory), as AutoDetect takes the GPU's NUMA affinity;
 *   - Links: for each GPU of the node in order, the number of links to it, -1 for the GPU itself and 0
 *     for no direct link: the link's bandwidth divided by the node's narrowest link's, rounded (hwloc's
 *     NVLinkBandwidth / XGMIBandwidth, or the site link file: the MI250X's quad, dual and single xGMI links
 *     give 4, 2 and 1). Omitted on nodes without link data.
 * A comment line before each group names the hosts' GPU model and the slurm.conf Gres= it needs.
 *
 * Error rule as in topo.h: 0 on success, -1 with errno set; pointer-returning functions return NULL.
 */
#ifndef RANKMAP_TOPO_GRES_H
#define RANKMAP_TOPO_GRES_H

#include <stdio.h>

#include "rm_error.h"
#include "topo.h"

typedef struct topo_gres_opts {
	const char *dev_root;     /* put before every File= path (NULL or "": none) */
	const char *type;         /* Type= for every GPU (NULL: from the model) */
	const char *const *hosts; /* only these hosts (NULL: every host with GPUs), nhosts of them */
	size_t nhosts;
} topo_gres_opts_t;

/* Writes the gres.conf lines of the finalized cluster c to f. Returns the number of GPU lines written
 * (0 when no host has a GPU), or -1 with err set (a named host unknown or without hardware, a write
 * error, out of memory). */
long topo_slurm_gres_write(topo_cluster_t c, const topo_gres_opts_t *o, FILE *f, rm_error_t *err);

/* Slurm's type name for a GPU model into buf (see above). Returns buf. */
const char *topo_gres_type(const char *model, char *buf, size_t len);

#endif
