/*
 * topo/cost.c: the cost model over slots (PUs) of the cluster.
 *
 * distance(a, b) = latency + ref_bytes / bandwidth of the level where a and b first share an
 * ancestor (in microseconds; bandwidth in GB/s = 1000 bytes/us):
 *   same core (SMT siblings)        lat_core / bw_core
 *   a shared cache                  lat_cache / bw_cache
 *   same package, die or NUMA group lat_numa / bw_numa
 *   same host, across packages      lat_host / bw_host
 *   other host                      lat_net + lat_hop * (hops - 2)     / bw_net   (InfiniBand hops)
 *                                   lat_net                            / bw_net   (flat network)
 *   other host on a 3D torus        lat_net + ref_bytes / bw_net
 *                                   + D * (lat_hop + ref_bytes / bw_hop)
 *       where D is the torus distance: the sum over the three dimensions of (shortest, wrapped) hops
 *       times that dimension's link cost.
 *
 * The torus term is hop-bytes: a message crossing D links occupies every one of them for its
 * transfer time, so on a torus, whose links are shared by neighbouring traffic and limit it, the
 * bandwidth it consumes grows with the hops (not only its latency). The base term is the injection
 * (HCA to HCA); each hop adds its switch latency and one more link transfer. A fat tree is left as it
 * was (latency per extra switch hop only): it has full bisection bandwidth, so an extra hop up the
 * tree uses links that are provisioned for it rather than links shared with neighbours.
 *
 * Defaults (REFERENCE.md section 4, LogGP on DDR InfiniBand: L = 1.84 us, o = 1.49 us,
 * G = 0.00067 us/byte):
 *   lat_net  = L + 2o = 4.82 us, bw_net = 1/G = 1.49 GB/s;
 *   lat_hop  = 0.15 us: the low end of the 150-200 ns per hop measured on Gemini, also the order of
 *              an InfiniBand switch traversal;
 *   lat_host = 0.09 us: the 90 ns inside a node quoted with it, for the farthest pair in a node;
 *   closer pairs are cheaper in steps: lat_numa 0.06, lat_cache 0.04, lat_core 0.02 us, and
 *   bandwidths bw_host 10, bw_numa 20, bw_cache 30, bw_core 50 GB/s (orders of magnitude of
 *   inter-socket links, memory and caches of the same era);
 *   ref_bytes = (L + 2o) / G = 7194 bytes: the size where latency and transfer cost the same on the
 *              network ("one message costs about as much as 7 KB of payload");
 *   bw_hop   = 1/G = 1.49 GB/s: a torus link is a link of the same network, so one hop of link cost 1
 *              costs lat_hop + ref_bytes * G = 0.15 + 4.82 = 4.97 us (one more link transfer).
 * With these, every intra-node distance is below every network distance, as the Rashti load rules
 * require, and each closer level is strictly cheaper.
 */
#include <errno.h>

#include "cluster_private.h"

void topo_costs_default(topo_costs_t *k)
{
	const double L = 1.84, o = 1.49, G = 0.00067;

	k->lat_core = 0.02;
	k->bw_core = 50.0;
	k->lat_cache = 0.04;
	k->bw_cache = 30.0;
	k->lat_numa = 0.06;
	k->bw_numa = 20.0;
	k->lat_host = 0.09;
	k->bw_host = 10.0;
	k->lat_net = L + 2 * o;
	k->bw_net = 1.0 / G / 1000.0;
	k->lat_hop = 0.15;
	k->ref_bytes = (L + 2 * o) / G;
	k->bw_hop = 1.0 / G / 1000.0;
	k->lat_gpu = 1.5;      /* GPU-to-GPU over NVLink/xGMI (topo/COST-GPU.md) */
	k->lat_gpu_pcie = 2.5; /* GPU-to-GPU through the PCIe root complex */
	k->bw_gpu_pcie = 25.0; /* PCIe 4.0 x16: 31.5 GB/s raw, about 25 usable */
}

topo_costs_t *topo_cluster_costs(topo_cluster_t c)
{
	return &c->costs;
}

double topo_level_cost(double lat, double bw, double bytes)
{
	return lat + (bw > 0 ? bytes / (bw * 1000.0) : 0.0);
}

static double level_cost(double lat, double bw, double bytes)
{
	return lat + (bw > 0 ? bytes / (bw * 1000.0) : 0.0);
}

double topo_torus_hop_cost(const topo_costs_t *k)
{
	return level_cost(k->lat_hop, k->bw_hop, k->ref_bytes);
}

double topo_host_net_cost(struct topo_cluster *c, size_t a, size_t b)
{
	const topo_costs_t *k = &c->costs;
	const struct topo_host *ha = &c->hosts[a], *hb = &c->hosts[b];
	double extra = 0.0;

	if (c->torus && ha->torus_node >= 0 && hb->torus_node >= 0) {
		double d = topo_torus_model_distance(c->torus, ha->torus_node, hb->torus_node);

		return level_cost(k->lat_net, k->bw_net, k->ref_bytes) + d * topo_torus_hop_cost(k);
	}
	if (c->fabric && ha->fabric_host >= 0 && hb->fabric_host >= 0) {
		int hops = topo_fabric_hops(c->fabric, (size_t)ha->fabric_host, (size_t)hb->fabric_host);

		if (hops < 0)
			return -1.0;
		extra = hops > 2 ? hops - 2 : 0;
	}
	return level_cost(k->lat_net + k->lat_hop * extra, k->bw_net, k->ref_bytes);
}

/* Cost of two distinct PUs of one host, from their deepest common ancestor. */
static double host_cost(const topo_costs_t *k, hwloc_obj_t anc)
{
	switch (anc->type) {
	case HWLOC_OBJ_CORE: return level_cost(k->lat_core, k->bw_core, k->ref_bytes);
	case HWLOC_OBJ_L1CACHE:
	case HWLOC_OBJ_L2CACHE:
	case HWLOC_OBJ_L3CACHE:
	case HWLOC_OBJ_L4CACHE:
	case HWLOC_OBJ_L5CACHE:
	case HWLOC_OBJ_L1ICACHE:
	case HWLOC_OBJ_L2ICACHE:
	case HWLOC_OBJ_L3ICACHE: return level_cost(k->lat_cache, k->bw_cache, k->ref_bytes);
	case HWLOC_OBJ_PACKAGE:
	case HWLOC_OBJ_DIE: return level_cost(k->lat_numa, k->bw_numa, k->ref_bytes);
	case HWLOC_OBJ_GROUP:
		/* a group inside a package is a NUMA/die group; one spanning packages is host-wide */
		return anc->parent && hwloc_get_ancestor_obj_by_type(NULL, HWLOC_OBJ_PACKAGE, anc)
			       ? level_cost(k->lat_numa, k->bw_numa, k->ref_bytes)
			       : level_cost(k->lat_host, k->bw_host, k->ref_bytes);
	default: return level_cost(k->lat_host, k->bw_host, k->ref_bytes);
	}
}

double topo_slot_distance(topo_cluster_t c, topo_slot_t a, topo_slot_t b)
{
	const struct topo_host *ha, *hb;
	hwloc_obj_t pa, pb;

	if (a.host >= c->nhosts || b.host >= c->nhosts)
		return errno = EINVAL, -1.0;
	ha = &c->hosts[a.host];
	hb = &c->hosts[b.host];
	if ((ha->type && a.pu >= ha->type->npus) || (hb->type && b.pu >= hb->type->npus))
		return errno = EINVAL, -1.0;
	if (a.host != b.host)
		return topo_host_net_cost(c, a.host, b.host);
	if (a.pu == b.pu)
		return 0.0;
	if (!ha->type)
		return errno = EINVAL, -1.0;
	pa = hwloc_get_obj_by_type(ha->type->topo, HWLOC_OBJ_PU, a.pu);
	pb = hwloc_get_obj_by_type(ha->type->topo, HWLOC_OBJ_PU, b.pu);
	if (!pa || !pb)
		return errno = EINVAL, -1.0;
	return host_cost(&c->costs, hwloc_get_common_ancestor_obj(ha->type->topo, pa, pb));
}
