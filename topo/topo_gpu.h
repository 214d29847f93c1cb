/*
 * topo/topo_gpu.h: GPUs and NICs of the cluster's hosts, their locality and the GPU link matrix, and
 * targets with one slot per GPU (issue #25). Part of topo/'s public interface (with topo.h).
 *
 * Where it comes from: every host's hwloc tree is loaded with its I/O devices (PCI devices and the
 * "important" OS devices: GPUs, co-processors, network and OpenFabrics devices; bridges only on the
 * way to them), so a node whose XML holds none costs nothing more. The GPU/NIC model is computed once
 * per node type (hosts with the same hardware share it) when the type is created; queries are O(1).
 *
 *  - A GPU is one PCI device with OS devices of a GPU backend (CUDA, NVML, RSMI, LevelZero, OpenCL:
 *    by the OS device's subtype, else its name prefix cuda/nvml/rsmi/ze/opencl). The OS devices of
 *    all backends under one PCI device are ONE physical GPU (cuda0 + nvml0 + opencl0d0), unless one
 *    backend shows several devices there (MI300A in TPX/CPX mode: 3 or 6 RSMI devices per APU): then
 *    the k-th device of each backend is partition k. DRM devices alone (card0, renderD128: a BMC's
 *    VGA) are not GPUs. GPUs are numbered in PCI bus id order, then partition.
 *  - A NIC is one PCI device with network or OpenFabrics OS devices (mlx5_0 + ib0 are one NIC).
 *  - GPU memory shown as NUMA nodes (hwloc 1.x XML such as Sierra's: NUMA nodes without CPUs; hwloc
 *    2's "GPUMemory" subtype) is counted apart from host memory (topo_host_memory).
 *  - Links: hwloc's bandwidth matrices between GPU OS devices ("XGMIBandwidth", "NVLinkBandwidth",
 *    "XeLinkBandwidth"; through NVSwitches for DGX-class nodes) and "XGMIHops"; a site file
 *    (topo_load_gpu_links) overrides them where hwloc is wrong (MI250X, hwloc issue 775).
 *  - hwloc 3.0 XML (<topology version="3.0">) is translated to the 2.x form before hwloc 2.x reads
 *    it (topo/node_hwloc_v3.c says what changes).
 *
 * Strings and arrays returned are borrowed from the cluster and live as long as its node type (until
 * the cluster is destroyed or the host's hardware is replaced). Host indices are the cluster's (topo.h).
 * The cost model of GPU slots is in topo/COST-GPU.md.
 */
#ifndef RANKMAP_TOPO_GPU_H
#define RANKMAP_TOPO_GPU_H

#include <stddef.h>
#include <stdint.h>
#include <hwloc.h>

#include "topo.h"

/* ---- GPUs and NICs of a host (topo/node_gpu.c) ------------------------------------------------- */

/* GPU backends (bit mask of topo_gpu_t.backends). */
enum {
	TOPO_GPU_CUDA = 1u << 0,
	TOPO_GPU_NVML = 1u << 1,
	TOPO_GPU_RSMI = 1u << 2,
	TOPO_GPU_LEVELZERO = 1u << 3,
	TOPO_GPU_OPENCL = 1u << 4,
};

typedef enum topo_nic_kind {
	TOPO_NIC_OPENFABRICS = 0, /* an InfiniBand/RoCE HCA (OpenFabrics OS device), e.g. mlx5_0 */
	TOPO_NIC_SLINGSHOT,       /* HPE Slingshot (Cassini, PCI vendor 17db; subtype Slingshot; hsn/hsi/cxi) */
	TOPO_NIC_EFA,             /* AWS Elastic Fabric Adapter: an OpenFabrics device of PCI vendor 1d0f or named
				   * efa / rdmap (the ENA Ethernet of the same vendor is Ethernet) */
	TOPO_NIC_ETHERNET         /* any other network interface */
} topo_nic_kind_t;

/* "openfabrics", "slingshot", "efa", "ethernet". */
const char *topo_nic_kind_name(topo_nic_kind_t k);

typedef struct topo_gpu {
	unsigned index;     /* 0 .. ngpus-1 on its host: PCI bus id order, then partition */
	const char *name;   /* its main OS device: the first of rsmi*, cuda*, ze*, nvml*, opencl* ("rsmi0") */
	const char *osdevs; /* every OS device name of this GPU, space-separated ("cuda0 nvml0 opencl0d0") */
	unsigned backends;  /* TOPO_GPU_* bits */
	const char *busid;  /* PCI bus id "0000:c1:00.0" */
	unsigned partition; /* index among the GPUs of its PCI device (0 when it is alone) */
	const char *uuid;   /* NVIDIAUUID / AMDUUID / LevelZeroUUID info when present and not all zeros, else NULL,
			     * of the XML that created the node type: per host, topo_host_gpu_uuid */
	const char *model;  /* GPUModel info (or the PCI device's), NULL when none */
	int numa;           /* OS index of the host NUMA node its locality holds (the first), -1 when none */
	int package;        /* logical index of its package, -1 when none */
	hwloc_const_cpuset_t locality; /* cpuset of its first non-I/O ancestor (hwloc's locality) */
	hwloc_const_cpuset_t cpuset;   /* its nearest cores: the locality's cores split evenly (in GPU order)
					* among the GPUs of the same locality; the PUs a rank on it binds to */
	unsigned ncores;               /* cores in cpuset */
	unsigned npus;                 /* PUs in cpuset */
	const unsigned *pu_os;         /* npus: PU OS indices of cpuset, ascending */
	uint32_t first_pu;             /* logical index of cpuset's first PU: the GPU slot's topo_slot_t.pu */
	int nic;                       /* index of its nearest NIC (deepest common ancestor; high-speed kinds before
			       * Ethernet; ties spread evenly), -1 when the host has none */
	uint64_t memory;               /* bytes of the GPU memory NUMA node hwloc attaches to it, 0 when none */
} topo_gpu_t;

typedef struct topo_nic {
	unsigned index;     /* 0 .. nnics-1 on its host, PCI bus id order */
	const char *name;   /* OpenFabrics device name (mlx5_0, rdmap197s0) if any, else the interface (hsi0) */
	const char *netdev; /* its network interface name (ib0, hsi0), NULL when none */
	topo_nic_kind_t kind;
	const char *busid; /* PCI bus id */
	int numa;          /* as topo_gpu_t */
	int package;
	hwloc_const_cpuset_t locality;
	/* OpenFabrics NodeGUID info (0 when none) and port GUIDs (the interface part of Port<N>GID0 infos)
	 * as recorded in the XML that created this node type: hosts whose XML differs only in <info>
	 * elements share the type, so these are that first host's; each host's own GUIDs are
	 * topo_host_guids(c, h) (topo.h), which the report and the fabric use */
	uint64_t node_guid;
	size_t nports;
	const uint64_t *port_guids;
	unsigned ngpus; /* GPUs whose nearest NIC this is */
} topo_nic_t;

/* GPUs of host h (0 without hardware data or GPUs); GPU i (borrowed), NULL when out of range. */
size_t topo_host_ngpus(topo_cluster_t c, size_t h);
const topo_gpu_t *topo_host_gpu(topo_cluster_t c, size_t h, size_t i);
/* NICs of host h; NIC i (borrowed), NULL when out of range. */
size_t topo_host_nnics(topo_cluster_t c, size_t h);
const topo_nic_t *topo_host_nic(topo_cluster_t c, size_t h, size_t i);
/* The UUID host h's own XML gives GPU i (NVIDIAUUID, AMDUUID or LevelZeroUUID info, not all zeros),
 * NULL when none. Borrowed. UUIDs are each host's: topo_gpu_t.uuid is that of the host whose XML
 * created the node type. */
const char *topo_host_gpu_uuid(topo_cluster_t c, size_t h, size_t i);
/* Index of the GPU of host h that id names: a decimal index ("3"), an OS device name of any backend
 * ("rsmi3", "cuda3", "nvml3"), a PCI bus id ("0000:c1:00.0" or "c1:00.0", first partition) or a UUID
 * (host h's own, topo_host_gpu_uuid; exact, or with or without NVIDIA's "GPU-"). -1 (errno ENOENT) when none. */
long topo_host_gpu_find(topo_cluster_t c, size_t h, const char *id);

/* Host memory in bytes (NUMA nodes holding CPUs, and memory-only nodes that are not GPU memory) and
 * host NUMA nodes; GPU memory NUMA nodes apart (*gpu_numa, *gpu_bytes; either may be NULL). */
uint64_t topo_host_memory(topo_cluster_t c, size_t h, unsigned *nnuma, unsigned *gpu_numa, uint64_t *gpu_bytes);

/* ---- the GPU link matrix ----------------------------------------------------------------------- */

typedef struct topo_gpu_links {
	unsigned n;         /* GPUs of the host: the matrices are n x n, row-major, by GPU index */
	const double *bw;   /* GB/s of the direct link (NVLink, xGMI, XeLink; through NVSwitches), 0 when none */
	const int *hops;    /* hops of that link (XGMIHops or the site file), -1 unknown, 0 on the diagonal */
	const char *source; /* where bw comes from: "XGMIBandwidth", "NVLinkBandwidth", "NVLinkBandwidth via
			      * NVSwitch", "XeLinkBandwidth", "site file <path>" or "none" */
	unsigned nswitches; /* NVSwitches (PCI devices in the NVLink matrix that are not GPUs) */
	int asymmetric;     /* 1 when hwloc's matrix has bw[i][j] != bw[j][i] (an anomaly; the larger is used) */
} topo_gpu_links_t;

/* Fills *out with host h's link matrix, site overrides applied. 0, or -1 (EINVAL: out of range). */
int topo_host_gpu_links(topo_cluster_t c, size_t h, topo_gpu_links_t *out);

/*
 * Site link overrides (topo_load_gpu_links; cluster file key `gpu_links = FILE`). Lines, # comments:
 *   model <text>                 the following lines apply to hosts whose GPU model contains <text>
 *                                (case-insensitive) and whose GPU count is given by `gpus`
 *   gpus <n>                     ... and that have n GPUs
 *   link <a> <b> <GB/s> [hops]   GPUs a and b (indices) joined by a link of that bandwidth (both ways)
 *   nolink <a> <b>               no direct link between a and b
 * Pairs a section does not name keep hwloc's values. The documented MI250X example is in
 * topo/COST-GPU.md and conf/gpu-links-mi250x.conf. Errors name the file and line.
 */
int topo_load_gpu_links(topo_cluster_t c, const char *path, rm_error_t *err);

/* ---- GPU slots and their costs (topo/target_gpu.c) --------------------------------------------- */

/* The kind of slot a request maps onto: cores (the default) or GPUs (one rank per GPU). */
typedef enum topo_slot_kind { TOPO_SLOTS_CORE = 0, TOPO_SLOTS_GPU = 1 } topo_slot_kind_t;
/* "core" or "gpu" (any case) into *out: 0, or -1 (EINVAL). */
int topo_slot_kind_parse(const char *s, topo_slot_kind_t *out);
const char *topo_slot_kind_name(topo_slot_kind_t k);
/* The slot kind a cluster file asks for by default (`slots = gpu`); TOPO_SLOTS_CORE otherwise. */
topo_slot_kind_t topo_cluster_slot_kind(topo_cluster_t c);

/* One GPU slot: GPU gpu (topo_gpu_t.index) of cluster host host. */
typedef struct topo_gpu_slot {
	uint32_t host;
	uint32_t gpu;
} topo_gpu_slot_t;

/* Cost between GPUs a and b of host h (microseconds; 0 when a == b; negative when out of range), from
 * their link (site file, then hwloc's matrix), else the PCIe and inter-package path (COST-GPU.md). */
double topo_gpu_pair_cost(topo_cluster_t c, size_t h, unsigned a, unsigned b);
/* Network part of the cost for traffic leaving host h through its NIC nic (-1: none): the NIC's
 * bandwidth is shared by the GPUs that use it (topo_nic_t.ngpus): (ngpus - 1) * ref_bytes / bw_net.
 * Microseconds added to the host-to-host network cost; the rail the NIC is on is topo_gpu_rail's, and
 * topo_gpu_net_cost combines both. */
double topo_gpu_nic_cost(topo_cluster_t c, size_t h, int nic);

/* Rail (topo_view.h) of the nearest NIC of GPU gpu of host h: that NIC's node or port GUID, as host h's
 * own XML gives it (topo_host_guids), in the fabric. -1: errno ENOENT when the fabric has fewer than
 * two rails, or the GPU no NIC, or its NIC no GUID in the fabric; EINVAL when out of range. */
long topo_gpu_rail(topo_cluster_t c, size_t h, unsigned gpu);
/* Network cost between GPU ga of host ha and GPU gb of host hb (ha != hb; 0 when equal): each direction
 * on the rail of its source GPU's NIC (topo_host_rail_cost; the default rail, topo_host_net_cost, where
 * topo_gpu_rail has none), the mean of the two, plus the larger NIC sharing term (topo_gpu_nic_cost).
 * A GPU target's distance across hosts is this (COST-GPU.md). Negative when out of range. */
double topo_gpu_net_cost(topo_cluster_t c, size_t ha, unsigned ga, size_t hb, unsigned gb);

/* A target with one slot per given GPU (in that order unless depth-first order needs renumbering, as
 * topo_target_from_slots): levels root, the network levels, host, then GPU groups inside a host
 * derived from the link matrix (GPUs joined by the fastest links first, e.g. the two GCDs of an MI250X
 * package), then the GPUs. t->slot[i].pu is the GPU's first_pu, t->slot_gpu[i] the GPU index, and
 * t->slot_pu_os[i] its first PU's OS index; bind to topo_host_gpu(c, slot.host, slot_gpu)->cpuset.
 * Errors name the host or GPU. Caller owns it (topo_target_destroy). */
topo_target_t *topo_target_from_gpu_slots(topo_cluster_t c, const topo_gpu_slot_t *slots, size_t n, rm_error_t *err);
/* Every GPU of the named hosts, in host order then GPU index. A host without GPUs is an error naming it. */
topo_target_t *topo_target_from_gpus(topo_cluster_t c, const char *const *hosts, size_t nhosts, rm_error_t *err);

#endif
