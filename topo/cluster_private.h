/*
 * topo/cluster_private.h: internals of the cluster container and the hardware side of topo/
 * (cluster.c, node_hwloc.c, cost.c, target_cluster.c, report.c). Not used outside topo/.
 */
#ifndef RANKMAP_CLUSTER_PRIVATE_H
#define RANKMAP_CLUSTER_PRIVATE_H

#include <stdint.h>

#include "topo_private.h"

/*
 * One distinct node hardware: a parsed hwloc tree shared by every host whose XML is the same once
 * <info> elements (host name, addresses, GUIDs, cgroup...) are left out. key hashes that normalised
 * XML, norm holds it for an exact comparison.
 */
struct topo_nodetype {
	hwloc_topology_t topo;
	uint64_t key;
	char *norm;
	size_t norm_len;
	unsigned npus, ncores, npackages;
	size_t nhosts;               /* hosts of the cluster using this type */
	size_t index;                /* in the cluster's types[] (topo_host_type) */
};

/* A 64-bit hash of len bytes, continuing from h (start with TOPO_HASH_SEED). */
#define TOPO_HASH_SEED 1469598103934665603ULL
uint64_t topo_hash_bytes(uint64_t h, const void *p, size_t len);

/* Frees a node type and its hwloc tree (node_hwloc.c). */
void topo_nodetype_free(struct topo_nodetype *t);

/* Node type with this normalised XML, or NULL (cluster.c, O(1) expected). */
struct topo_nodetype *topo_cluster_find_type(struct topo_cluster *c, uint64_t key, const char *norm,
					     size_t len);
/* Appends a type to the cluster; -1 on allocation failure (the type is not taken then). */
int topo_cluster_add_type(struct topo_cluster *c, struct topo_nodetype *t);
/* Frees the types at index >= ntypes_before that no host uses (roll-back of a failed load). */
void topo_cluster_drop_types(struct topo_cluster *c, size_t ntypes_before);

/* Network part of the cost between two distinct hosts (lat_net + hops or torus distance + transfer);
 * negative when both are in the fabric but not connected (cost.c). */
double topo_host_net_cost(struct topo_cluster *c, size_t a, size_t b);
/* Cost of one torus hop of link cost 1: lat_hop + ref_bytes / bw_hop (cost.c). */
double topo_torus_hop_cost(const topo_costs_t *k);

/* A small string set, for duplicate checks inside one load (cluster.c). */
struct topo_nameset;
struct topo_nameset *topo_nameset_create(size_t hint);
/* Returns 1 if added, 0 if already present, -1 on allocation failure. name is copied. */
int topo_nameset_add(struct topo_nameset *s, const char *name);
void topo_nameset_destroy(struct topo_nameset *s);

#endif
