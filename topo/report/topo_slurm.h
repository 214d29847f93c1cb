/*
 * topo/report/topo_slurm.h: the switch tree of a cluster's InfiniBand fabric as Slurm sees it, and Slurm's
 * topology.conf written from it (`rankmapctl slurm-topology`); the SVG pictures use the same tree.
 *
 * The tree follows what slurmibtopology.sh and topograph derive from ibnetdiscover output:
 *   - a leaf is a switch with hosts attached: `SwitchName=<leaf> Nodes=<hosts>`;
 *   - a switch at level k >= 1 (k hops from the nearest leaf) lists the switches of level k - 1 it is
 *     linked to: `SwitchName=<spine> Switches=<leaves>`; links between switches of one level are not
 *     part of the tree;
 *   - every host is under exactly one leaf: the switch of its first HCA port (a host with HCAs on
 *     several leaves or subnets, e.g. dual rail, is placed under the first; the others are reported);
 *     with TOPO_SWTREE_PER_SUBNET under its first leaf in each subnet (the pictures); with
 *     TOPO_SWTREE_ALL_LEAVES, a host is listed under every leaf one of its HCA ports is cabled to, as
 *     slurmibtopology.sh does (Slurm accepts it and logs the multi-homed nodes);
 *   - switches left without hosts below them (a rail whose hosts are all placed on another subnet,
 *     switches no host reaches) are dropped;
 *   - several subnets give one tree each; with a top name they are joined under one extra switch
 *     `SwitchName=<top> Switches=<roots>` so that Slurm may place a job across them;
 *   - switch names are short and stable: the node-name map entry when it has one (sanitised for
 *     Slurm: characters outside [A-Za-z0-9._-] become '_', runs squeezed), else ibsw<N> with N the
 *     switch's rank in GUID order among all switches of the fabric (1 = lowest GUID), so adding a switch
 *     of the same model renames none; names still equal after that get _<GUID> appended. The
 *     description and GUID go into a comment line above each SwitchName;
 *   - with TOPO_SWTREE_NAMED_ONLY, HCAs named only by their GUID (generic description, no node-name
 *     map entry: no host Slurm could know) are left out of the leaves and listed in guid_host;
 *   - leaves, and the switches of each level, are written in natural order of their names.
 * Hosts keep the fabric's names (node-name map, HCA description, or the GUID "0x..." for generic HCAs).
 *
 * Error rule as in topo.h: 0 on success, -1 with errno set; pointer-returning functions return NULL.
 */
#ifndef RANKMAP_TOPO_SLURM_H
#define RANKMAP_TOPO_SLURM_H

#include <stdio.h>

#include "topo.h"

/* topo_swtree_build flags */
enum {
	TOPO_SWTREE_ALL_LEAVES = 1, /* a host under every leaf it is cabled to (else its first leaf) */
	TOPO_SWTREE_PER_SUBNET = 2, /* a host under its first leaf in each subnet it is in */
	TOPO_SWTREE_NAMED_ONLY = 4, /* GUID-named HCAs left out of the leaves (guid_host) */
};

typedef struct topo_swtree {
	size_t nsw;             /* switches of the fabric (dense indices), kept or not */
	char **name;            /* nsw sanitised unique names (owned) */
	const char **desc;      /* nsw: the switch's description, "" when none (borrowed from the cluster) */
	size_t *order;          /* nsw: switch indices in natural order of their names */
	uint64_t *guid;         /* nsw */
	int *level;             /* nsw: 0 leaf, 1 spine, ...; -1 unreached */
	long *subnet;           /* nsw */
	unsigned char *kept;    /* nsw: 1 when the switch is in the tree */
	unsigned char *is_root; /* nsw: kept and listed by no kept switch above it */
	size_t nroots;
	size_t ntrees;         /* connected pieces of the kept tree: more than 1 means no switch
				* reaches every host (separate subnets, leaves linked only to each other) */
	size_t *host_off;      /* nsw + 1: hosts placed under leaf s are host[host_off[s] .. host_off[s+1]) */
	const char **host;     /* host names, grouped by leaf, in natural order (node2 < node10; borrowed) */
	size_t nplaced;        /* distinct hosts under some leaf */
	const char **unplaced; /* hosts attached to no switch (borrowed) */
	size_t nunplaced;
	size_t nmultihomed; /* hosts with HCA ports on several switches (placed under the first) */
	size_t nguid_named; /* hosts named by a GUID (generic HCA description, no node-name map entry) */
	struct topo_swtree_guid {
		const char *name; /* borrowed */
		long leaf;        /* the switch of its first HCA port, -1 */
	} * guid_host;            /* with TOPO_SWTREE_NAMED_ONLY: the GUID-named hosts, left out of host[], in
				* order of their names */
	size_t nguid_host;
	int max_level; /* highest level of a kept switch, -1 without one */
	size_t nsubnets;
	int all_leaves; /* TOPO_SWTREE_ALL_LEAVES was given */
	int flags;      /* as built */
} topo_swtree_t;

/* Builds the switch tree of a finalized cluster's fabric, hosts under their first leaf or as flags
 * (TOPO_SWTREE_*) say. Returns a new tree (free with topo_swtree_destroy) that borrows strings from
 * the cluster (keep the cluster alive), or NULL with err set when the cluster has no fabric (or on
 * allocation failure). */
topo_swtree_t *topo_swtree_build(topo_cluster_t c, int flags, rm_error_t *err);
void topo_swtree_destroy(topo_swtree_t *t);
/* Switches of level k-1 below kept switch s that are kept; *out is malloc'd (caller frees). */
size_t topo_swtree_children(topo_cluster_t c, const topo_swtree_t *t, size_t s, size_t **out);

/* Writes topology.conf for the tree to f: a comment header, then per subnet the leaves and the levels
 * above them; with top non-NULL and more than one root switch, a joining switch named top (sanitised).
 * Host and switch lists are compressed Slurm host lists. Returns 0, or -1 on a write error. */
int topo_slurm_topology_write(topo_cluster_t c, const topo_swtree_t *t, const char *top, FILE *f, rm_error_t *err);

/* Sanitises name into buf for Slurm (see above); returns buf. An empty result stays empty. */
char *topo_slurm_sanitise(const char *name, char *buf, size_t len);

#endif
