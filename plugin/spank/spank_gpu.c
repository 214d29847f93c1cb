/*
 * plugin/spank/spank_gpu.c: --rankmap-bind=gpu: a task's GPU in this node's hwloc tree, its nearest
 * allocated cores and its nearest NIC, and the variables naming that NIC to each transport.
 *
 * The variables, each with the documentation that defines it:
 *   UCX_NET_DEVICES                 UCX (and Open MPI's and MPICH's UCX paths): the devices UCX may use,
 *                                   "mlx5_0:1" for an OpenFabrics device and port, an interface name for
 *                                   TCP (Open MPI "InfiniBand / RoCE support": mpirun -x
 *                                   UCX_NET_DEVICES=mlx5_0:1; NVIDIA DOCA UCX guide).
 *   OMPI_MCA_btl_openib_if_include  Open MPI 4.x's openib BTL (the MCA parameter btl_openib_if_include,
 *                                   "device:port" list; ompi_info --param btl openib); OpenFabrics only.
 *   MPICH_OFI_NIC_POLICY=USER and   HPE Cray MPICH over libfabric/CXI (intro_mpi(3): a mapping of local
 *   MPICH_OFI_NIC_MAPPING           ranks to NIC indices, "nic:ranks; nic:ranks", e.g. "0:0,1; 1:2,3");
 *                                   Slingshot NICs only. Libfabric itself has no documented variable
 *                                   that selects a CXI device (fi_cxi(7)): the MPI picks the domain.
 *   RANKMAP_NIC                     rankmap's own: the NIC chosen (for scripts and the tests).
 * A variable the task's environment already holds is left as it is (the user's choice wins).
 */
#define _GNU_SOURCE
#include "spank_gpu.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "spank_bind.h"

#define VENDOR_HPE_CRAY 0x17db /* HPE Slingshot (Cassini) NICs */

int rm_spank_gpu_topology(hwloc_topology_t *topo, rm_error_t *err)
{
	if (hwloc_topology_init(topo) < 0)
		return rm_error_set(err, "hwloc", 0, 0, "init: %s", strerror(errno));
	hwloc_topology_set_io_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	if (hwloc_topology_load(*topo) < 0) {
		int e = errno;

		hwloc_topology_destroy(*topo);
		errno = e;
		return rm_error_set(err, "hwloc", 0, 0, "cannot load this host's topology: %s", strerror(e));
	}
	return 0;
}

/* Whether an OS device is a compute backend of a GPU. */
static int compute_osdev(hwloc_obj_t o)
{
	static const char *const prefixes[] = { "cuda", "nvml", "rsmi", "ze", "opencl" };

	if (o->type != HWLOC_OBJ_OS_DEVICE || !o->name)
		return 0;
	if (o->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU && o->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC)
		return 0;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(o->name, prefixes[i], strlen(prefixes[i])) &&
		    isdigit((unsigned char)o->name[strlen(prefixes[i])]))
			return 1;
	return 0;
}

static int net_osdev(hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_OS_DEVICE &&
	       (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK || o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS);
}

static int has_child(hwloc_obj_t pci, int (*pred)(hwloc_obj_t))
{
	for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
		if (pred(c))
			return 1;
	return 0;
}

static int openfabrics_osdev(hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_OS_DEVICE && o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
}

static int hpc_nic(hwloc_obj_t pci)
{
	return pci->attr->pcidev.vendor_id == VENDOR_HPE_CRAY || has_child(pci, openfabrics_osdev);
}

static int cmp_pci(const void *a, const void *b)
{
	const struct hwloc_pcidev_attr_s *x = &(*(const hwloc_obj_t *)a)->attr->pcidev;
	const struct hwloc_pcidev_attr_s *y = &(*(const hwloc_obj_t *)b)->attr->pcidev;
	unsigned kx = (unsigned)x->domain << 20 | (unsigned)x->bus << 12 | (unsigned)x->dev << 4 | x->func;
	unsigned ky = (unsigned)y->domain << 20 | (unsigned)y->bus << 12 | (unsigned)y->dev << 4 | y->func;

	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	return kx < ky ? -1 : kx > ky;
}

/* PCI devices with a child OS device satisfying pred, in PCI order. */
static hwloc_obj_t *pci_list(hwloc_topology_t topo, int (*pred)(hwloc_obj_t), int hpc_only, size_t *n)
{
	int total = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PCI_DEVICE);
	hwloc_obj_t *v = total > 0 ? malloc(sizeof(*v) * (size_t)total) : NULL, o = NULL;
	int any_hpc = 0;

	*n = 0;
	if (!v)
		return NULL;
	while ((o = hwloc_get_next_pcidev(topo, o)))
		if (has_child(o, pred)) {
			v[(*n)++] = o;
			any_hpc |= hpc_nic(o);
		}
	if (hpc_only && any_hpc) { /* management Ethernet does not carry MPI traffic where HPC NICs exist */
		size_t k = 0;

		for (size_t i = 0; i < *n; i++)
			if (hpc_nic(v[i]))
				v[k++] = v[i];
		*n = k;
	}
	if (*n == 0) {
		free(v);
		return NULL;
	}
	qsort(v, *n, sizeof(*v), cmp_pci);
	return v;
}

hwloc_obj_t *rm_spank_gpu_list(hwloc_topology_t topo, size_t *n)
{
	return pci_list(topo, compute_osdev, 0, n);
}

hwloc_obj_t *rm_spank_nic_list(hwloc_topology_t topo, size_t *n)
{
	return pci_list(topo, net_osdev, 1, n);
}

/* Edges between a and b in the tree (through their closest common ancestor). */
static int tree_distance(hwloc_obj_t a, hwloc_obj_t b)
{
	int da = 0;

	for (hwloc_obj_t x = a; x; x = x->parent, da++) {
		int db = 0;

		for (hwloc_obj_t y = b; y; y = y->parent, db++)
			if (x == y)
				return da + db;
	}
	return 1 << 20;
}

/* Whether GPU g names pick (by PCI index or by a *UUID info of one of its OS devices). */
static int gpu_matches(hwloc_obj_t g, size_t index, const rm_gpu_pick_t *pick)
{
	if (pick->ns == RM_GPU_NS_PCI)
		return (size_t)pick->id.index == index;
	for (hwloc_obj_t c = g->io_first_child; c; c = c->next_sibling) {
		if (c->type != HWLOC_OBJ_OS_DEVICE)
			continue;
		for (unsigned i = 0; i < c->infos_count; i++) {
			size_t len = strlen(c->infos[i].name);

			if (len >= 4 && !strcmp(c->infos[i].name + len - 4, "UUID") &&
			    rm_gpu_uuid_match(pick->id.uuid, c->infos[i].value))
				return 1;
		}
	}
	return 0;
}

static void gpu_describe(hwloc_obj_t g, char *buf, size_t len)
{
	const struct hwloc_pcidev_attr_s *p = &g->attr->pcidev;
	size_t off = (size_t)snprintf(buf, len, "%04x:%02x:%02x.%x", p->domain, p->bus, p->dev, p->func);

	for (hwloc_obj_t c = g->io_first_child; c && off < len; c = c->next_sibling)
		if (compute_osdev(c))
			off += (size_t)snprintf(buf + off, len - off, " %s", c->name);
}

/* The allocated cores' OS CPUs (alloc NULL: every core). Returns a bitmap or NULL with err set. */
static hwloc_bitmap_t alloc_set(hwloc_topology_t topo, const char *alloc, rm_error_t *err)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	uint32_t *cores;
	size_t n = 0;

	if (!set)
		return rm_error_set(err, "memory", 0, 0, "out of memory"), NULL;
	if (!alloc) {
		hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(topo));
		return set;
	}
	if (!(cores = rm_spank_list_parse(alloc, (1u << 20) - 1, &n, err))) {
		hwloc_bitmap_free(set);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		hwloc_obj_t c = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, cores[i]);

		if (!c) {
			rm_error_set(err, "S_STEP_ALLOC_CORES", 0, 0, "core %u does not exist on this host", cores[i]);
			free(cores);
			hwloc_bitmap_free(set);
			return NULL;
		}
		hwloc_bitmap_or(set, set, c->cpuset);
	}
	free(cores);
	return set;
}

/* GPU gi's share of its locality: the locality's cores split evenly, in PCI order, among the GPUs that
 * have the same locality, one core each in turn when they outnumber the cores (as topo_gpu_t.cpuset: the
 * GPU slot's cores; test_spank_gpu checks that the two agree), into out. */
static void gpu_share(hwloc_topology_t topo, hwloc_obj_t *gpus, size_t ng, size_t gi, hwloc_bitmap_t out)
{
	hwloc_obj_t loc = hwloc_get_non_io_ancestor_obj(topo, gpus[gi]), c = NULL;
	size_t pos = 0, k = 0, nc, i = 0;

	for (size_t j = 0; j < ng; j++)
		if (hwloc_get_non_io_ancestor_obj(topo, gpus[j]) == loc) {
			pos += j < gi;
			k++;
		}
	nc = (size_t)hwloc_get_nbobjs_inside_cpuset_by_type(topo, loc->cpuset, HWLOC_OBJ_CORE);
	hwloc_bitmap_zero(out);
	while ((c = hwloc_get_next_obj_inside_cpuset_by_type(topo, loc->cpuset, HWLOC_OBJ_CORE, c)) && k) {
		if (nc >= k ? i >= pos * nc / k && i < (pos + 1) * nc / k
			    : i == pos % nc) /* more GPUs than cores: shared */
			hwloc_bitmap_or(out, out, c->cpuset);
		i++;
	}
	if (hwloc_bitmap_iszero(out)) /* no cores (or fewer than GPUs): the whole locality */
		hwloc_bitmap_copy(out, loc->cpuset);
}

/* The allocated CPUs nearest GPU gi: its share of its locality, else its locality, else its package. */
static int near_cpus(hwloc_topology_t topo, hwloc_obj_t *gpus, size_t ng, size_t gi, hwloc_const_bitmap_t alloc,
		     char *buf, size_t len, rm_error_t *err)
{
	hwloc_obj_t loc = hwloc_get_non_io_ancestor_obj(topo, gpus[gi]), pkg;
	hwloc_bitmap_t s = hwloc_bitmap_alloc();
	int rc = -1;

	if (!s)
		return rm_error_set(err, "memory", 0, 0, "out of memory");
	gpu_share(topo, gpus, ng, gi, s);
	hwloc_bitmap_and(s, s, alloc);
	if (hwloc_bitmap_iszero(s))
		hwloc_bitmap_and(s, loc->cpuset, alloc);
	if (hwloc_bitmap_iszero(s) && (pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, loc)))
		hwloc_bitmap_and(s, pkg->cpuset, alloc);
	if (hwloc_bitmap_iszero(s))
		rm_error_set(err, "--rankmap-bind=gpu", 0, 0, "none of the step's cores is near the GPU");
	else if (hwloc_bitmap_list_snprintf(buf, len, s) < 0 || (size_t)hwloc_bitmap_list_snprintf(NULL, 0, s) >= len)
		rm_error_set(err, "--rankmap-bind=gpu", 0, 0, "CPU list too long");
	else
		rc = 0;
	hwloc_bitmap_free(s);
	return rc;
}

/* Bit set of the NICs nearest GPU g (at most 64 looked at). */
static uint64_t nearest_nics(hwloc_obj_t g, hwloc_obj_t *nics, size_t nn)
{
	uint64_t best = 0;
	int bd = 1 << 30;

	for (size_t i = 0; i < nn && i < 64; i++) {
		int d = tree_distance(g, nics[i]);

		if (d < bd)
			bd = d, best = 0;
		if (d == bd)
			best |= 1ULL << i;
	}
	return best;
}

/* GPU gi's NIC: among its nearest, shared out among the GPUs with the same nearest set, in PCI order. */
static int pick_nic(hwloc_obj_t *gpus, size_t ng, size_t gi, hwloc_obj_t *nics, size_t nn)
{
	uint64_t mine = nearest_nics(gpus[gi], nics, nn);
	size_t pos = 0, same = 0, k = 0, cnt = (size_t)__builtin_popcountll(mine);

	if (!mine)
		return -1;
	for (size_t i = 0; i < ng; i++)
		if (nearest_nics(gpus[i], nics, nn) == mine) {
			if (i < gi)
				pos++;
			same++;
		}
	k = pos * cnt / same;
	for (size_t i = 0; i < nn && i < 64; i++)
		if (mine >> i & 1 && k-- == 0)
			return (int)i;
	return -1;
}

static void nic_fill(hwloc_obj_t nic, rm_spank_gpu_place_t *out)
{
	const char *of = NULL, *net = NULL, *p;

	for (hwloc_obj_t c = nic->io_first_child; c; c = c->next_sibling) {
		if (!net_osdev(c) || !c->name)
			continue;
		if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && !of)
			of = c->name;
		else if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && !net)
			net = c->name;
	}
	snprintf(out->nic_name, sizeof(out->nic_name), "%s", of ? of : net ? net : "");
	snprintf(out->nic_net, sizeof(out->nic_net), "%s", net ? net : "");
	out->nic_port = of ? 1 : 0;
	out->slingshot = nic->attr->pcidev.vendor_id == VENDOR_HPE_CRAY;
	out->nic_index = -1;
	for (p = out->nic_name + strlen(out->nic_name); p > out->nic_name && isdigit((unsigned char)p[-1]); p--)
		;
	if (*p)
		out->nic_index = atoi(p);
}

int rm_spank_gpu_place(hwloc_topology_t topo, const rm_gpu_pick_t *pick, const char *alloc, rm_spank_gpu_place_t *out,
		       rm_error_t *err)
{
	size_t ng = 0, nn = 0;
	hwloc_obj_t *gpus = rm_spank_gpu_list(topo, &ng), *nics = rm_spank_nic_list(topo, &nn);
	hwloc_bitmap_t set = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->gpu = out->nic = -1;
	for (size_t i = 0; i < ng && out->gpu < 0; i++)
		if (gpu_matches(gpus[i], i, pick))
			out->gpu = (int)i;
	if (out->gpu < 0) {
		errno = ENODEV;
		if (pick->ns == RM_GPU_NS_PCI)
			rm_error_set(err, pick->source, 0, 0, "GPU %d does not exist on this host (%zu GPUs)",
				     pick->id.index, ng);
		else
			rm_error_set(err, pick->source, 0, 0, "no GPU of this host has the UUID %s", pick->id.uuid);
		goto out;
	}
	gpu_describe(gpus[out->gpu], out->gpu_desc, sizeof(out->gpu_desc));
	if (!(set = alloc_set(topo, alloc, err)) ||
	    near_cpus(topo, gpus, ng, (size_t)out->gpu, set, out->cpus, sizeof(out->cpus), err) < 0) {
		errno = EINVAL;
		goto out;
	}
	if ((out->nic = pick_nic(gpus, ng, (size_t)out->gpu, nics, nn)) >= 0)
		nic_fill(nics[out->nic], out);
	rc = 0;
out:
	if (set)
		hwloc_bitmap_free(set);
	free(gpus);
	free(nics);
	return rc;
}

size_t rm_spank_nic_vars(const rm_spank_gpu_place_t *p, uint32_t ntasks, rm_spank_nic_var_t *vars)
{
	size_t n = 0;

	if (p->nic < 0 || !p->nic_name[0])
		return 0;
	vars[n].name = "UCX_NET_DEVICES";
	if (p->nic_port)
		snprintf(vars[n++].value, sizeof(vars[0].value), "%s:%d", p->nic_name, p->nic_port);
	else
		snprintf(vars[n++].value, sizeof(vars[0].value), "%s", p->nic_name);
	if (p->nic_port) {
		vars[n].name = "OMPI_MCA_btl_openib_if_include";
		snprintf(vars[n++].value, sizeof(vars[0].value), "%s:%d", p->nic_name, p->nic_port);
	}
	if (p->slingshot && p->nic_index >= 0 && ntasks > 0) {
		/* every local rank on this task's NIC (the mapping's syntax has no ranges): each task reads
		 * its own entry, and no local rank is missing from any task's mapping */
		size_t off;

		vars[n].name = "MPICH_OFI_NIC_POLICY";
		snprintf(vars[n++].value, sizeof(vars[0].value), "USER");
		vars[n].name = "MPICH_OFI_NIC_MAPPING";
		off = (size_t)snprintf(vars[n].value, sizeof(vars[0].value), "%d:", p->nic_index);
		for (uint32_t r = 0; r < ntasks && off < sizeof(vars[0].value); r++)
			off += (size_t)snprintf(vars[n].value + off, sizeof(vars[0].value) - off, "%s%u", r ? "," : "",
						r);
		if (off >= sizeof(vars[0].value)) /* too many tasks to list: Cray MPICH chooses itself */
			n--;
		else
			n++;
	}
	vars[n].name = RM_SPANK_NIC_ENV;
	snprintf(vars[n++].value, sizeof(vars[0].value), "%s", p->nic_name);
	return n;
}
