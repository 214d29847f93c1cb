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
 *
 * Rails. Hosts with several HCAs have one per rail (topo_view.h). Traffic between two hosts is costed
 * on one rail, the same on both sides: the rail a caller names (topo_host_rail_cost: a GPU's nearest
 * NIC), else the default, the lowest rail on which both hosts have a port and reach each other
 * (topo_fabric_default_rail; rail 0 on a rail-optimised fabric). Hops are those between the two HCAs
 * of that rail, no longer the minimum over every HCA pair (traffic that leaves through rail r arrives
 * on rail r). Hosts with no common rail (several subnets, each host on some) keep the closest HCA pair.
 *
 * Dragonfly groups. A path between leaves of two groups crosses a global link, and adds
 *     lat_hop + ref_bytes / (bw_net * share),  share = (summed rate of the pair's global links) /
 *                                                      (rate of the sending host's port)
 * (share = the number of global links when a rate is unknown): one more link transfer, as a torus
 * hop, on the scarce channel between the two groups, divided among the parallel cables of the pair.
 * Global channels are the expensive, few, long links of a dragonfly and minimal routing sends all of a
 * group pair's traffic over its few direct global channels (Kim, Dally, Scott, Abts, "Technology-Driven,
 * Highly-Scalable Dragonfly Topology", ISCA 2008, sections 3-4); on HPE Slingshot the global links are
 * where congestion and latency variation concentrate (De Sensi, Di Girolamo, McMahon, Roweth, Hoefler,
 * "An In-Depth Analysis of the Slingshot Interconnect", SC20). On the generated 5-group dragonfly
 * (one 4xHDR global link per group pair, 4xHDR host ports) that is 9.64 us on one switch, 9.79 us in
 * one group and 14.91 us from n000 to n016 across one global link (+55 %; hops alone gave 9.94 us).
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

/* Network cost of a fabric path (rails and dragonfly groups: see the top of the file). */
static double fabric_path_cost(const topo_costs_t *k, const struct topo_fabric_path *p)
{
	double extra = p->hops > 2 ? p->hops - 2 : 0,
	       d = level_cost(k->lat_net + k->lat_hop * extra, k->bw_net, k->ref_bytes);

	if (p->global) {
		double share = p->global_gbps > 0 && p->host_gbps > 0
				       ? p->global_gbps / p->host_gbps
				       : (p->global_count ? (double)p->global_count : 1.0);

		d += level_cost(k->lat_hop, k->bw_net * share, k->ref_bytes);
	}
	return d;
}

static double host_rail_cost(struct topo_cluster *c, size_t a, size_t b, long r)
{
	const topo_costs_t *k = &c->costs;
	const struct topo_host *ha = &c->hosts[a], *hb = &c->hosts[b];

	if (c->torus && ha->torus_node >= 0 && hb->torus_node >= 0) {
		double d = topo_torus_model_distance(c->torus, ha->torus_node, hb->torus_node);

		return level_cost(k->lat_net, k->bw_net, k->ref_bytes) + d * topo_torus_hop_cost(k);
	}
	if (c->fabric && ha->fabric_host >= 0 && hb->fabric_host >= 0) {
		struct topo_fabric_path p;

		if (topo_fabric_path(c->fabric, (size_t)ha->fabric_host, (size_t)hb->fabric_host, r, &p) < 0)
			return -1.0;
		return fabric_path_cost(k, &p);
	}
	return level_cost(k->lat_net, k->bw_net, k->ref_bytes);
}

double topo_host_net_cost(struct topo_cluster *c, size_t a, size_t b)
{
	return host_rail_cost(c, a, b, -1);
}

double topo_host_rail_cost(topo_cluster_t c, size_t a, size_t b, unsigned r)
{
	const struct topo_host *ha, *hb;

	if (a >= c->nhosts || b >= c->nhosts || r >= TOPO_MAX_RAILS)
		return errno = EINVAL, -1.0;
	if (a == b)
		return 0.0;
	ha = &c->hosts[a];
	hb = &c->hosts[b];
	if (!c->fabric || ha->fabric_host < 0 || hb->fabric_host < 0 ||
	    topo_fabric_rail_hops(c->fabric, (size_t)ha->fabric_host, (size_t)hb->fabric_host, r) < 0)
		return errno = ENOENT, -1.0;
	return host_rail_cost(c, a, b, (long)r);
}

long topo_host_guid_rail(topo_cluster_t c, size_t h, uint64_t guid)
{
	const struct topo_host *hh;
	size_t i, n;

	if (h >= c->nhosts)
		return errno = EINVAL, -1;
	hh = &c->hosts[h];
	if (!c->fabric || hh->fabric_host < 0 || !guid)
		return errno = ENOENT, -1;
	n = topo_fabric_host_nports(c->fabric, (size_t)hh->fabric_host);
	for (i = 0; i < n; i++)
		if (topo_fabric_host_port_guid(c->fabric, (size_t)hh->fabric_host, i) == guid ||
		    topo_fabric_host_port_port_guid(c->fabric, (size_t)hh->fabric_host, i) == guid)
			return topo_fabric_host_port_rail(c->fabric, (size_t)hh->fabric_host, i);
	return errno = ENOENT, -1;
}

topo_net_class_t topo_host_net_class(topo_cluster_t c, size_t a, size_t b)
{
	const struct topo_host *ha, *hb;
	struct topo_fabric_path p;

	if (a >= c->nhosts || b >= c->nhosts)
		return TOPO_NET_OTHER;
	if (a == b)
		return TOPO_NET_SAME_HOST;
	ha = &c->hosts[a];
	hb = &c->hosts[b];
	if (c->torus && ha->torus_node >= 0 && hb->torus_node >= 0)
		return topo_torus_model_distance(c->torus, ha->torus_node, hb->torus_node) > 0 ? TOPO_NET_INTRA_GROUP
											       : TOPO_NET_SAME_SWITCH;
	if (!c->fabric || ha->fabric_host < 0 || hb->fabric_host < 0 ||
	    topo_fabric_path(c->fabric, (size_t)ha->fabric_host, (size_t)hb->fabric_host, -1, &p) < 0)
		return TOPO_NET_OTHER;
	return p.global ? TOPO_NET_GLOBAL : p.same_switch || p.hops <= 2 ? TOPO_NET_SAME_SWITCH : TOPO_NET_INTRA_GROUP;
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
