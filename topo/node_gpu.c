/*
 * topo/node_gpu.c: the GPUs, NICs and GPU link matrix of a node type, computed once from its hwloc
 * tree (loaded with its I/O devices, node_parse.c), and the queries of topo_gpu.h over them.
 *
 * What counts as a GPU, a NIC and GPU memory is stated in topo_gpu.h. The model of a type is a few
 * small arrays (GPUs, NICs, an n x n matrix for n GPUs); a node without I/O devices gets an empty one.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cluster_private.h"

/* ---- the per-type model's allocations ------------------------------------------------------------- */

/* Every allocation of a model is recorded so that one call frees it. */
static void *keep(struct topo_gpumodel *m, void *p)
{
	if (!p)
		return NULL;
	if (m->nallocs == m->allocs_cap) {
		size_t cap = m->allocs_cap ? m->allocs_cap * 2 : 32;
		void **n = realloc(m->allocs, cap * sizeof(*n));

		if (!n) {
			free(p);
			return NULL;
		}
		m->allocs = n;
		m->allocs_cap = cap;
	}
	m->allocs[m->nallocs++] = p;
	return p;
}

static char *keep_str(struct topo_gpumodel *m, const char *s)
{
	return s ? keep(m, strdup(s)) : NULL;
}

void topo_gpumodel_free(struct topo_gpumodel *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nallocs; i++)
		free(m->allocs[i]);
	for (i = 0; i < m->nsets; i++)
		hwloc_bitmap_free(m->sets[i]);
	free(m->sets);
	free(m->allocs);
	free(m);
}

static hwloc_bitmap_t keep_set(struct topo_gpumodel *m, hwloc_const_bitmap_t src)
{
	hwloc_bitmap_t b;

	if (m->nsets == m->sets_cap) {
		size_t cap = m->sets_cap ? m->sets_cap * 2 : 16;
		hwloc_bitmap_t *n = realloc(m->sets, cap * sizeof(*n));

		if (!n)
			return NULL;
		m->sets = n;
		m->sets_cap = cap;
	}
	if (!(b = src ? hwloc_bitmap_dup(src) : hwloc_bitmap_alloc()))
		return NULL;
	m->sets[m->nsets++] = b;
	return b;
}

/* ---- classifying OS devices ------------------------------------------------------------------------ */

static const struct {
	const char *subtype, *prefix;
	unsigned bit;
	int rank; /* which backend names the GPU: lowest first */
} backends[] = {
	{ "RSMI", "rsmi", TOPO_GPU_RSMI, 0 },         { "CUDA", "cuda", TOPO_GPU_CUDA, 1 },
	{ "LevelZero", "ze", TOPO_GPU_LEVELZERO, 2 }, { "NVML", "nvml", TOPO_GPU_NVML, 3 },
	{ "OpenCL", "opencl", TOPO_GPU_OPENCL, 4 },
};
#define NBACKENDS (sizeof(backends) / sizeof(backends[0]))

/* The backend slot of a GPU OS device, -1 when it is none (a DRM card, a disk, a NIC). */
static int gpu_backend(hwloc_obj_t o)
{
	size_t i;

	for (i = 0; i < NBACKENDS; i++)
		if (o->subtype && !strcasecmp(o->subtype, backends[i].subtype))
			return (int)i;
	for (i = 0; i < NBACKENDS; i++) {
		size_t l = strlen(backends[i].prefix);

		if (o->name && !strncmp(o->name, backends[i].prefix, l) && isdigit((unsigned char)o->name[l]))
			return (int)i;
	}
	return -1;
}

static int is_net(hwloc_obj_t o)
{
	return o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK || o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
}

/* The PCI device an OS device hangs under, NULL when none. */
static hwloc_obj_t pci_of(hwloc_obj_t o)
{
	for (o = o->parent; o && hwloc_obj_type_is_io(o->type); o = o->parent)
		if (o->type == HWLOC_OBJ_PCI_DEVICE)
			return o;
	return NULL;
}

static void busid_of(hwloc_obj_t pci, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
		 pci->attr->pcidev.dev, pci->attr->pcidev.func);
}

static int numa_of(hwloc_topology_t topo, hwloc_obj_t loc)
{
	hwloc_obj_t n = NULL;

	while ((n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n)))
		if (n->cpuset && !hwloc_bitmap_iszero(n->cpuset) && hwloc_bitmap_intersects(n->cpuset, loc->cpuset))
			return (int)n->os_index;
	return -1;
}

static int package_of(hwloc_topology_t topo, hwloc_obj_t loc)
{
	hwloc_obj_t p =
		loc->type == HWLOC_OBJ_PACKAGE ? loc : hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, loc);

	if (!p) /* a locality above the packages: the package holding its first PU */
		p = hwloc_get_next_obj_covering_cpuset_by_type(topo, loc->cpuset, HWLOC_OBJ_PACKAGE, NULL);
	if (!p) {
		int pu = hwloc_bitmap_first(loc->cpuset);
		hwloc_obj_t o = pu >= 0 ? hwloc_get_pu_obj_by_os_index(topo, (unsigned)pu) : NULL;

		p = o ? hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, o) : NULL;
	}
	return p ? (int)p->logical_index : -1;
}

/* The UUID infos of a GPU OS device; all-zero values (MI300A partitions) are none. */
static const char *uuid_of(hwloc_obj_t o)
{
	static const char *names[] = { "NVIDIAUUID", "AMDUUID", "LevelZeroUUID", "UUID" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = hwloc_obj_get_info_by_name(o, names[i]), *p;

		if (!v)
			continue;
		for (p = strncasecmp(v, "GPU-", 4) ? v : v + 4; *p && (*p == '0' || *p == '-'); p++)
			;
		if (*p)
			return v;
	}
	return NULL;
}

static int nonempty(const char *s)
{
	return s && *s;
}

/* ---- building the model ---------------------------------------------------------------------------- */

struct gpu_build {
	hwloc_obj_t pci;
	unsigned partition;
	hwloc_obj_t dev[NBACKENDS]; /* its OS device of each backend, NULL */
};

static int cmp_busid(hwloc_obj_t a, hwloc_obj_t b)
{
	const struct hwloc_pcidev_attr_s *x = &a->attr->pcidev, *y = &b->attr->pcidev;

	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	if (x->bus != y->bus)
		return x->bus < y->bus ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

static int cmp_gpu_build(const void *pa, const void *pb)
{
	const struct gpu_build *a = pa, *b = pb;
	int r = cmp_busid(a->pci, b->pci);

	return r ? r : (a->partition > b->partition) - (a->partition < b->partition);
}

static int cmp_pci(const void *pa, const void *pb)
{
	return cmp_busid(*(hwloc_obj_t const *)pa, *(hwloc_obj_t const *)pb);
}

/* Collects the GPUs: per PCI device, the k-th OS device of each backend is partition k. */
static struct gpu_build *collect_gpus(hwloc_topology_t topo, size_t *n)
{
	struct gpu_build *v = NULL;
	size_t cap = 0, i;
	hwloc_obj_t o = NULL;

	*n = 0;
	while ((o = hwloc_get_next_osdev(topo, o))) {
		int be = gpu_backend(o);
		hwloc_obj_t pci = be >= 0 ? pci_of(o) : NULL;
		unsigned k = 0;

		if (!pci)
			continue;
		for (i = 0; i < *n; i++) /* the first partition of pci that has no device of this backend */
			if (v[i].pci == pci && v[i].partition == k) {
				if (!v[i].dev[be])
					break;
				k++;
				i = (size_t)-1; /* rescan for partition k */
			}
		if (i < *n) {
			v[i].dev[be] = o;
			continue;
		}
		if (*n == cap) {
			struct gpu_build *nv = realloc(v, (cap = cap ? cap * 2 : 8) * sizeof(*nv));

			if (!nv) {
				free(v);
				return NULL;
			}
			v = nv;
		}
		memset(&v[*n], 0, sizeof(v[*n]));
		v[*n].pci = pci;
		v[*n].partition = k;
		v[(*n)++].dev[be] = o;
	}
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_gpu_build);
	return v ? v : calloc(1, sizeof(*v));
}

static topo_nic_kind_t nic_kind(hwloc_obj_t pci, hwloc_obj_t ofed, hwloc_obj_t net)
{
	const char *n = net ? net->name : "";

	/* Amazon's vendor id 1d0f also names its ENA Ethernet adapters: EFA is an OpenFabrics device there */
	if (ofed && (pci->attr->pcidev.vendor_id == 0x1d0f ||
		     (ofed->name && (!strncmp(ofed->name, "efa", 3) || !strncmp(ofed->name, "rdmap", 5)))))
		return TOPO_NIC_EFA;
	if (pci->attr->pcidev.vendor_id == 0x17db || (net && net->subtype && !strcasecmp(net->subtype, "Slingshot")) ||
	    (n && (!strncmp(n, "hsn", 3) || !strncmp(n, "cxi", 3))))
		return TOPO_NIC_SLINGSHOT;
	if (ofed)
		return TOPO_NIC_OPENFABRICS;
	return TOPO_NIC_ETHERNET;
}

/* The port GUIDs of an OpenFabrics device (interface part of Port<N>GID0). */
static size_t port_guids(struct topo_gpumodel *m, hwloc_obj_t o, const uint64_t **out)
{
	uint64_t *v = o->infos_count ? keep(m, calloc(o->infos_count, sizeof(*v))) : NULL;
	unsigned i;
	size_t n = 0;

	*out = v;
	for (i = 0; v && i < o->infos_count; i++) {
		const char *name = o->infos[i].name, *val = o->infos[i].value;
		unsigned long long hi[8];
		const char *p;
		int k = 0;

		if (strncmp(name, "Port", 4) || !(p = strstr(name, "GID0")) || p[4])
			continue;
		for (p = val; *p && k < 8; k++) { /* fe80:0000:0000:0000:0002:c903:0002:a0cf */
			char *e;

			hi[k] = strtoull(p, &e, 16);
			if (e == p)
				break;
			p = *e == ':' ? e + 1 : e;
		}
		if (k == 8)
			v[n++] = (uint64_t)hi[4] << 48 | (uint64_t)hi[5] << 32 | (uint64_t)hi[6] << 16 | hi[7];
	}
	return n;
}

static uint64_t node_guid(hwloc_obj_t o)
{
	const char *v = o ? hwloc_obj_get_info_by_name(o, "NodeGUID") : NULL;
	uint64_t g = 0;

	for (; v && *v; v++)
		if (isxdigit((unsigned char)*v))
			g = g << 4 |
			    (uint64_t)(isdigit((unsigned char)*v) ? *v - '0' : tolower((unsigned char)*v) - 'a' + 10);
	return g;
}

static int build_nics(struct topo_gpumodel *m, hwloc_topology_t topo, hwloc_obj_t **nic_pci)
{
	hwloc_obj_t o = NULL, *pcis = NULL;
	size_t n = 0, cap = 0, i;

	while ((o = hwloc_get_next_osdev(topo, o))) {
		hwloc_obj_t pci = is_net(o) ? pci_of(o) : NULL;

		if (!pci)
			continue;
		for (i = 0; i < n && pcis[i] != pci; i++)
			;
		if (i < n)
			continue;
		if (n == cap) {
			hwloc_obj_t *np = realloc(pcis, (cap = cap ? cap * 2 : 8) * sizeof(*np));

			if (!np)
				return free(pcis), -1;
			pcis = np;
		}
		pcis[n++] = pci;
	}
	if (n)
		qsort(pcis, n, sizeof(*pcis), cmp_pci);
	m->nnics = n;
	m->nics = n ? keep(m, calloc(n, sizeof(*m->nics))) : NULL;
	if (n && !m->nics)
		return free(pcis), -1;
	for (i = 0; i < n; i++) {
		topo_nic_t *x = &m->nics[i];
		hwloc_obj_t ofed = NULL, net = NULL, c, loc = hwloc_get_non_io_ancestor_obj(topo, pcis[i]);
		char bus[32];

		for (c = NULL; (c = hwloc_get_next_osdev(topo, c));)
			if (pci_of(c) == pcis[i]) {
				if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && !ofed)
					ofed = c;
				else if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && !net)
					net = c;
			}
		busid_of(pcis[i], bus, sizeof(bus));
		x->index = (unsigned)i;
		x->name = keep_str(m, ofed ? ofed->name : net->name);
		x->netdev = net ? keep_str(m, net->name) : NULL;
		x->kind = nic_kind(pcis[i], ofed, net);
		x->busid = keep_str(m, bus);
		x->numa = numa_of(topo, loc);
		x->package = package_of(topo, loc);
		x->locality = keep_set(m, loc->cpuset);
		x->node_guid = node_guid(ofed);
		x->nports = ofed ? port_guids(m, ofed, &x->port_guids) : 0;
		if (!x->name || !x->busid || !x->locality)
			return free(pcis), -1;
	}
	*nic_pci = pcis;
	return 0;
}

/* Depth of the deepest common ancestor of two objects (larger: closer). hwloc's helper compares
 * depths, which I/O objects do not have in order: walk the parent chains instead. */
static int common_depth(hwloc_obj_t a, hwloc_obj_t b)
{
	hwloc_obj_t x, y;
	int d = 0;

	for (x = a; x; x = x->parent) {
		for (y = b; y && y != x; y = y->parent)
			;
		if (y)
			break;
	}
	for (; x; x = x->parent)
		d++;
	return d;
}

/* Nearest NIC of each GPU: deepest common ancestor, high-speed kinds before Ethernet, then the NIC
 * with fewest GPUs so far, then the lowest index. */
static void nearest_nics(struct topo_gpumodel *m, hwloc_topology_t topo, const struct gpu_build *g,
			 hwloc_obj_t *nic_pci)
{
	size_t i, j;
	int fast = 0;

	for (j = 0; j < m->nnics; j++)
		fast |= m->nics[j].kind != TOPO_NIC_ETHERNET;
	for (i = 0; i < m->ngpus; i++) {
		long best = -1;
		int bd = -1;

		for (j = 0; j < m->nnics; j++) {
			int d;

			if (fast && m->nics[j].kind == TOPO_NIC_ETHERNET)
				continue;
			d = common_depth(g[i].pci, nic_pci[j]);
			if (d > bd || (d == bd && m->nics[j].ngpus < m->nics[best].ngpus)) {
				bd = d;
				best = (long)j;
			}
		}
		m->gpus[i].nic = (int)best;
		if (best >= 0)
			m->nics[best].ngpus++;
	}
}

/* Splits the cores of each locality evenly among its GPUs, in GPU order. */
static int gpu_cores(struct topo_gpumodel *m, hwloc_topology_t topo)
{
	size_t i, j;

	for (i = 0; i < m->ngpus; i++) {
		topo_gpu_t *g = &m->gpus[i];
		unsigned share = 0, nshare = 0, ncores, k, first, count;
		hwloc_bitmap_t set = keep_set(m, NULL);
		hwloc_obj_t core = NULL;
		int pu, depth;
		unsigned *os;

		if (!set)
			return -1;
		for (j = 0; j < m->ngpus; j++)
			if (hwloc_bitmap_isequal(m->gpus[j].locality, g->locality)) {
				share += j < i;
				nshare++;
			}
		depth = hwloc_get_nbobjs_inside_cpuset_by_type(topo, g->locality, HWLOC_OBJ_CORE) > 0
				? hwloc_get_type_depth(topo, HWLOC_OBJ_CORE)
				: hwloc_get_type_depth(topo, HWLOC_OBJ_PU);
		ncores = (unsigned)hwloc_get_nbobjs_inside_cpuset_by_depth(topo, g->locality, depth);
		if (ncores >= nshare) {
			first = share * ncores / nshare;
			count = (share + 1) * ncores / nshare - first;
		} else { /* more GPUs than cores: they share */
			first = share % (ncores ? ncores : 1);
			count = ncores ? 1 : 0;
		}
		for (k = 0; k < first + count; k++) {
			core = hwloc_get_obj_inside_cpuset_by_depth(topo, g->locality, depth, k);
			if (core && k >= first)
				hwloc_bitmap_or(set, set, core->cpuset);
		}
		hwloc_bitmap_and(set, set, g->locality);
		g->cpuset = set;
		g->ncores = count;
		g->npus = (unsigned)hwloc_bitmap_weight(set);
		os = keep(m, calloc(g->npus ? g->npus : 1, sizeof(*os)));
		if (!os)
			return -1;
		k = 0;
		hwloc_bitmap_foreach_begin(pu, set) os[k++] = (unsigned)pu;
		hwloc_bitmap_foreach_end();
		g->pu_os = os;
		core = g->npus ? hwloc_get_pu_obj_by_os_index(topo, os[0]) : NULL;
		g->first_pu = core ? core->logical_index : 0;
	}
	return 0;
}

/* Index of the GPU whose OS devices include o, -1. */
static long gpu_of_obj(const struct gpu_build *g, size_t n, hwloc_obj_t o)
{
	size_t i, b;

	for (i = 0; i < n; i++)
		for (b = 0; b < NBACKENDS; b++)
			if (g[i].dev[b] == o || (o->type == HWLOC_OBJ_PCI_DEVICE && g[i].pci == o && !g[i].partition))
				return (long)i;
	return -1;
}

/* The GPU-to-GPU bandwidth and hop matrices from hwloc's distances. */
static int build_links(struct topo_gpumodel *m, hwloc_topology_t topo, const struct gpu_build *g)
{
	static const char *bwnames[] = { "XGMIBandwidth", "NVLinkBandwidth", "XeLinkBandwidth" };
	size_t n = m->ngpus, i, j, k;
	unsigned nr;

	m->bw = keep(m, calloc(n * n + 1, sizeof(*m->bw)));
	m->hops = keep(m, calloc(n * n + 1, sizeof(*m->hops)));
	if (!m->bw || !m->hops)
		return -1;
	for (i = 0; i < n * n; i++)
		m->hops[i] = i % (n + 1) ? -1 : 0;
	m->source = "none";
	for (k = 0; k < sizeof(bwnames) / sizeof(bwnames[0]) && n; k++) {
		struct hwloc_distances_s *d = NULL;
		long *idx;
		double sw_a, sw_b;

		nr = 1;
		if (hwloc_distances_get_by_name(topo, bwnames[k], &nr, &d, 0) < 0 || nr == 0)
			continue;
		if (!(idx = calloc(d->nbobjs, sizeof(*idx)))) {
			hwloc_distances_release(topo, d);
			return -1;
		}
		m->source = bwnames[k];
		for (i = 0; i < d->nbobjs; i++) {
			idx[i] = gpu_of_obj(g, n, d->objs[i]);
			if (idx[i] < 0 && d->objs[i]->type == HWLOC_OBJ_PCI_DEVICE)
				m->nswitches++, idx[i] = -2; /* an NVSwitch */
		}
		for (i = 0; i < d->nbobjs; i++)
			for (j = 0; j < d->nbobjs; j++) {
				double v = (double)d->values[i * d->nbobjs + j] / 1000.0, w;

				if (i == j || idx[i] < 0 || idx[j] < 0)
					continue;
				w = (double)d->values[j * d->nbobjs + i] / 1000.0;
				if (v != w)
					m->asymmetric = 1;
				if (v > m->bw[idx[i] * n + idx[j]])
					m->bw[idx[i] * n + idx[j]] = v;
			}
		for (i = 0; i < d->nbobjs && m->nswitches; i++) /* through the NVSwitches */
			for (j = 0; j < d->nbobjs; j++) {
				size_t s;

				if (i == j || idx[i] < 0 || idx[j] < 0 || m->bw[idx[i] * n + idx[j]] > 0)
					continue;
				sw_a = sw_b = 0;
				for (s = 0; s < d->nbobjs; s++)
					if (idx[s] == -2) {
						sw_a += (double)d->values[i * d->nbobjs + s] / 1000.0;
						sw_b += (double)d->values[j * d->nbobjs + s] / 1000.0;
					}
				if (sw_a > 0 && sw_b > 0) {
					m->bw[idx[i] * n + idx[j]] = sw_a < sw_b ? sw_a : sw_b;
					m->hops[idx[i] * n + idx[j]] = 2;
					m->source = "NVLinkBandwidth via NVSwitch";
				}
			}
		free(idx);
		hwloc_distances_release(topo, d);
		break;
	}
	nr = 1;
	{
		struct hwloc_distances_s *d = NULL;

		if (n && hwloc_distances_get_by_name(topo, "XGMIHops", &nr, &d, 0) == 0 && nr == 1) {
			long *idx = calloc(d->nbobjs, sizeof(*idx));

			for (i = 0; idx && i < d->nbobjs; i++)
				idx[i] = gpu_of_obj(g, n, d->objs[i]);
			for (i = 0; idx && i < d->nbobjs; i++)
				for (j = 0; j < d->nbobjs; j++)
					if (i != j && idx[i] >= 0 && idx[j] >= 0)
						m->hops[idx[i] * n + idx[j]] = (int)d->values[i * d->nbobjs + j];
			free(idx);
			hwloc_distances_release(topo, d);
		}
	}
	for (i = 0; i < n; i++) /* a link hwloc gives without hops is one hop */
		for (j = 0; j < n; j++)
			if (i != j && m->bw[i * n + j] > 0 && m->hops[i * n + j] < 0)
				m->hops[i * n + j] = 1;
	return 0;
}

/* Host and GPU memory from the NUMA nodes. */
static void memory(struct topo_gpumodel *m, hwloc_topology_t topo)
{
	hwloc_obj_t n = NULL;

	while ((n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n))) {
		int gpu = (n->subtype && !strcasecmp(n->subtype, "GPUMemory")) || !n->cpuset ||
			  hwloc_bitmap_iszero(n->cpuset);

		if (gpu) {
			m->gpu_numa++;
			m->gpu_mem += n->attr->numanode.local_memory;
		} else {
			m->host_numa++;
			m->host_mem += n->attr->numanode.local_memory;
		}
	}
}

/* GPU memory NUMA nodes next to each GPU (hwloc 1.x Sierra: memory-only nodes; 2.x: GPUMemory nodes
 * attached under the GPU's locality), matched in order. */
static void gpu_memory(struct topo_gpumodel *m, hwloc_topology_t topo)
{
	hwloc_obj_t n = NULL;
	size_t i = 0;

	while ((n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n)) && i < m->ngpus) {
		if ((n->subtype && !strcasecmp(n->subtype, "GPUMemory")) || !n->cpuset ||
		    hwloc_bitmap_iszero(n->cpuset))
			m->gpus[i++].memory = n->attr->numanode.local_memory;
	}
	if (i && i != m->ngpus) /* no one-to-one match: say nothing */
		for (i = 0; i < m->ngpus; i++)
			m->gpus[i].memory = 0;
}

struct topo_gpumodel *topo_gpumodel_build(hwloc_topology_t topo)
{
	struct topo_gpumodel *m = calloc(1, sizeof(*m));
	struct gpu_build *g = NULL;
	hwloc_obj_t *nic_pci = NULL;
	size_t n = 0, i, b;

	if (!m || !(g = collect_gpus(topo, &n)) || build_nics(m, topo, &nic_pci) < 0)
		goto fail;
	m->ngpus = n;
	m->gpus = n ? keep(m, calloc(n, sizeof(*m->gpus))) : NULL;
	if (n && !m->gpus)
		goto fail;
	for (i = 0; i < n; i++) {
		topo_gpu_t *x = &m->gpus[i];
		hwloc_obj_t loc = hwloc_get_non_io_ancestor_obj(topo, g[i].pci), main = NULL;
		char bus[32], names[512] = "";
		size_t len = 0;

		for (b = 0; b < NBACKENDS; b++)
			if (g[i].dev[b]) {
				x->backends |= backends[b].bit;
				if (!main)
					main = g[i].dev[b];
				len += (size_t)snprintf(names + len, len < sizeof(names) ? sizeof(names) - len : 0,
							"%s%s", len ? " " : "", g[i].dev[b]->name);
				if (!x->uuid && uuid_of(g[i].dev[b]))
					x->uuid = keep_str(m, uuid_of(g[i].dev[b]));
				if (!x->model && nonempty(hwloc_obj_get_info_by_name(g[i].dev[b], "GPUModel")))
					x->model = keep_str(m, hwloc_obj_get_info_by_name(g[i].dev[b], "GPUModel"));
			}
		busid_of(g[i].pci, bus, sizeof(bus));
		x->index = (unsigned)i;
		x->name = keep_str(m, main->name);
		x->osdevs = keep_str(m, names);
		x->busid = keep_str(m, bus);
		x->partition = g[i].partition;
		if (!x->model && i && g[i - 1].pci == g[i].pci) /* a partition: its device's model */
			x->model = m->gpus[i - 1].model;
		if (!x->model && nonempty(hwloc_obj_get_info_by_name(g[i].pci, "PCIDevice")))
			x->model = keep_str(m, hwloc_obj_get_info_by_name(g[i].pci, "PCIDevice"));
		x->numa = numa_of(topo, loc);
		x->package = package_of(topo, loc);
		x->locality = keep_set(m, loc->cpuset);
		if (!x->name || !x->osdevs || !x->busid || !x->locality)
			goto fail;
	}
	if (gpu_cores(m, topo) < 0 || build_links(m, topo, g) < 0)
		goto fail;
	nearest_nics(m, topo, g, nic_pci);
	memory(m, topo);
	gpu_memory(m, topo);
	free(g);
	free(nic_pci);
	return m;
fail:
	free(g);
	free(nic_pci);
	topo_gpumodel_free(m);
	return NULL;
}

/* ---- queries (topo_gpu.h) ------------------------------------------------------------------------ */

const char *topo_nic_kind_name(topo_nic_kind_t k)
{
	switch (k) {
	case TOPO_NIC_OPENFABRICS: return "openfabrics";
	case TOPO_NIC_SLINGSHOT: return "slingshot";
	case TOPO_NIC_EFA: return "efa";
	default: return "ethernet";
	}
}

static const struct topo_gpumodel *model_of(topo_cluster_t c, size_t h)
{
	return h < c->nhosts && c->hosts[h].type ? c->hosts[h].type->gpu : NULL;
}

size_t topo_host_ngpus(topo_cluster_t c, size_t h)
{
	const struct topo_gpumodel *m = model_of(c, h);

	return m ? m->ngpus : 0;
}

const topo_gpu_t *topo_host_gpu(topo_cluster_t c, size_t h, size_t i)
{
	const struct topo_gpumodel *m = model_of(c, h);

	return m && i < m->ngpus ? &m->gpus[i] : NULL;
}

size_t topo_host_nnics(topo_cluster_t c, size_t h)
{
	const struct topo_gpumodel *m = model_of(c, h);

	return m ? m->nnics : 0;
}

const topo_nic_t *topo_host_nic(topo_cluster_t c, size_t h, size_t i)
{
	const struct topo_gpumodel *m = model_of(c, h);

	return m && i < m->nnics ? &m->nics[i] : NULL;
}

/* Is word w (length l) one of the space-separated words of s? */
static int has_word(const char *s, const char *w, size_t l)
{
	while (s && *s) {
		size_t k = strcspn(s, " ");

		if (k == l && !strncmp(s, w, l))
			return 1;
		s += k;
		s += *s == ' ';
	}
	return 0;
}

long topo_host_gpu_find(topo_cluster_t c, size_t h, const char *id)
{
	const struct topo_gpumodel *m = model_of(c, h);
	size_t i, l = id ? strlen(id) : 0;
	char *e;
	unsigned long v;

	if (!m || !l)
		return errno = ENOENT, -1;
	errno = 0;
	v = strtoul(id, &e, 10);
	if (!*e && !errno && isdigit((unsigned char)id[0]))
		return v < m->ngpus ? (long)v : (errno = ENOENT, -1);
	for (i = 0; i < m->ngpus; i++) {
		const topo_gpu_t *g = &m->gpus[i];
		size_t bl = strlen(g->busid);
		const char *u = topo_host_gpu_uuid(c, h, i);

		if (has_word(g->osdevs, id, l))
			return (long)i;
		if (!g->partition && (!strcasecmp(g->busid, id) || (l == bl - 5 && !strcasecmp(g->busid + 5, id))))
			return (long)i;
		if (u && (!strcasecmp(u, id) || (!strncasecmp(id, "GPU-", 4) && !strcasecmp(u, id + 4)) ||
			  (!strncasecmp(u, "GPU-", 4) && !strcasecmp(u + 4, id))))
			return (long)i;
	}
	return errno = ENOENT, -1;
}

const char *topo_host_gpu_uuid(topo_cluster_t c, size_t h, size_t i)
{
	const topo_gpu_t *g = topo_host_gpu(c, h, i);
	const char *s, *u, *p;
	char name[128];

	if (!g)
		return NULL;
	for (s = g->osdevs; *s;) { /* the host's own UUID of any of the GPU's OS devices */
		size_t k = strcspn(s, " ");

		if (k < sizeof(name)) {
			memcpy(name, s, k);
			name[k] = '\0';
			if ((u = topo_guids_uuid(c->hosts[h].guids, name))) {
				for (p = strncasecmp(u, "GPU-", 4) ? u : u + 4; *p == '0' || *p == '-'; p++)
					;
				if (*p)
					return u;
			}
		}
		s += k;
		s += *s == ' ';
	}
	return NULL;
}

uint64_t topo_host_memory(topo_cluster_t c, size_t h, unsigned *nnuma, unsigned *gpu_numa, uint64_t *gpu_bytes)
{
	const struct topo_gpumodel *m = model_of(c, h);

	if (nnuma)
		*nnuma = m ? m->host_numa : 0;
	if (gpu_numa)
		*gpu_numa = m ? m->gpu_numa : 0;
	if (gpu_bytes)
		*gpu_bytes = m ? m->gpu_mem : 0;
	return m ? m->host_mem : 0;
}
