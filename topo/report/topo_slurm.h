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
 *   - leaves, and the switches of each level, are written in natural order of their names;
 *   - a dragonfly (the fabric's groups, topo_view.h) is one level more: `SwitchName=group<G>
 *     Switches=<the group's roots>` per group and `SwitchName=<top, else "dragonfly"> Switches=group[..]`
 *     above them, with the advice of Slurm's topology guide in comments (TopologyPlugin=topology/tree
 *     with TopologyParam=Dragonfly: a job too large for one leaf is spread over as many leaves as
 *     possible).
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
	/* With a keep list (topo_swtree_build_keep): fabric hosts left out because the list does not name
	 * them (file servers, login nodes: no Slurm node), in natural order (borrowed from the cluster),
	 * and the listed names the fabric has no host for (borrowed from the keep list). */
	int filtered;
	const char **excluded;
	size_t nexcluded;
	const char **missing;
	size_t nmissing;
	/* Dragonfly groups of the fabric (topo_fabric_ngroups; 0 without): the tree gets one switch per
	 * group above the group's roots ("group<G>") and one top switch above the groups, so that ntrees
	 * counts a dragonfly as one tree. group[s] is switch s's group, -1 for none. */
	size_t ngroups;
	long *group;
} topo_swtree_t;

/* Builds the switch tree of a finalized cluster's fabric, hosts under their first leaf or as flags
 * (TOPO_SWTREE_*) say. Returns a new tree (free with topo_swtree_destroy) that borrows strings from
 * the cluster (keep the cluster alive), or NULL with err set when the cluster has no fabric (or on
 * allocation failure). */
topo_swtree_t *topo_swtree_build(topo_cluster_t c, int flags, rm_error_t *err);
/* The same, keeping only the hosts named in keep[0..nkeep) (Slurm's nodes: `--nodes`, `--slurm-conf`);
 * the others go to excluded[], the names of keep that no fabric host has to missing[]. keep must
 * outlive the tree. O((hosts + nkeep) log nkeep). keep NULL: no filter. */
topo_swtree_t *topo_swtree_build_keep(topo_cluster_t c, int flags, const char *const *keep, size_t nkeep,
				      rm_error_t *err);
void topo_swtree_destroy(topo_swtree_t *t);
/* Switches of level k-1 below kept switch s that are kept; *out is malloc'd (caller frees). */
size_t topo_swtree_children(topo_cluster_t c, const topo_swtree_t *t, size_t s, size_t **out);

/* Writes topology.conf for the tree to f: a comment header, then per subnet the leaves and the levels
 * above them; with top non-NULL and more than one root switch, a joining switch named top (sanitised).
 * Host and switch lists are compressed Slurm host lists. Returns 0, or -1 on a write error. */
int topo_slurm_topology_write(topo_cluster_t c, const topo_swtree_t *t, const char *top, FILE *f, rm_error_t *err);

/* ---- the other formats (slurm_export.c) -------------------------------------------------------------
 *
 * block: Slurm's topology/block plugin (23.11 and later; topology.conf(5), "topology/block"):
 *   `BlockName=<name> Nodes=<hosts>` per block, then `BlockSizes=<base>,<2 base>,...`. The blocks are
 *   the leaf switches, in the order the spines reach them (topo_swtree_leaf_order): Slurm pairs
 *   neighbouring blocks into higher-level blocks, so neighbours in the file should be neighbours in
 *   the fabric. Documented rules kept: every block has at least the base block size of nodes (the
 *   base is the smallest block), and each further size is the previous one times two (a power of two
 *   larger), up to the largest power-of-two number of blocks (at most 16 sizes).
 *   Blocks come from a topo_slurm_blocks_t, whatever forms them: leaf switches, on a dragonfly its
 *   groups (the base block is then the smallest group), and where the cluster file names multi-node
 *   NVLink domains (nvlink_domain lines, topo_fabric_nvlink_domains: GB200 NVL72 racks and the like)
 *   those domains, before anything else: one block per domain, its hosts in leaf order, the domains in
 *   the order of their first host in leaf order; hosts in no domain are in no block (named in a
 *   comment), domain hosts the tree lacks are named in a comment.
 * yaml: Slurm 25.05's topology.yaml (topology.yaml(5)): a list of topologies, each `topology: NAME`
 *   first, `cluster_default`, and exactly one of `tree:` (`switches:` items with `switch`, `children`
 *   or `nodes`), `block:` (`block_sizes`, `blocks:` items with `block`, `nodes`) or `flat: true`. One
 *   entry per format (tree is the cluster default), and a partition example (`Topology=NAME`) in
 *   comments.
 * weights: `NodeName=<host> Weight=<n>` lines for slurm.conf, lowest first: hosts in leaf order, the
 *   leaves in the order the spines reach them. */
typedef enum topo_slurm_format {
	TOPO_SLURM_TREE = 0,
	TOPO_SLURM_BLOCK,
	TOPO_SLURM_YAML,
	TOPO_SLURM_WEIGHTS,
} topo_slurm_format_t;

/* "tree", "block", "yaml", "weights"; -1 (EINVAL) for another name. */
int topo_slurm_format_parse(const char *name, topo_slurm_format_t *fmt);

/* Named sets of hosts, in the order Slurm should pair them (what a block file lists). */
typedef struct topo_slurm_blocks {
	size_t n;
	const char *kind;  /* what a block is, for comments: "leaf switch", "dragonfly group", ... */
	const char *kinds; /* the same, plural */
	const char *order; /* the order the blocks come in, for comments */
	/* NVLink domains only (NULL, 0 otherwise; arrays owned, strings borrowed): hosts of the tree in no
	 * domain, and domain hosts the tree does not list (no fabric host, or left out by the keep list) */
	const char **outside, **absent;
	size_t noutside, nabsent;
	const char **name; /* n names (borrowed, or from names) */
	char **names;      /* names made here (owned; NULL entries allowed), or NULL */
	size_t *off;       /* n + 1: hosts of block b are host[off[b] .. off[b+1]) */
	const char **host; /* borrowed host names */
} topo_slurm_blocks_t;

/* Kept leaves of t in the order the spines reach them: depth first from the root switches (in order of
 * their names; on a dragonfly by group, then name), each switch's children in order of their names, a
 * leaf at its first visit; so leaves under one switch of the level above are neighbours. Returns the count; *out (malloc'd, caller frees)
 * holds switch indices, NULL when out of memory. */
size_t topo_swtree_leaf_order(topo_cluster_t c, const topo_swtree_t *t, size_t **out);
/* The leaf switches of t (built without TOPO_SWTREE_ALL_LEAVES) as blocks, in leaf order. Borrows from
 * t. NULL with err set when out of memory. */
topo_slurm_blocks_t *topo_slurm_blocks_leaves(topo_cluster_t c, const topo_swtree_t *t, rm_error_t *err);
/* The dragonfly groups of t as blocks ("group<G>", the hosts of the group's leaves in leaf order), in
 * group order; NULL with err set when out of memory. The block format uses them when t has groups. */
topo_slurm_blocks_t *topo_slurm_blocks_groups(topo_cluster_t c, const topo_swtree_t *t, rm_error_t *err);
/* The NVLink domains of c's fabric as blocks (above); NULL with err set when out of memory. With no
 * domain, or no domain host in the tree, a block set with n == 0. */
topo_slurm_blocks_t *topo_slurm_blocks_nvlink(topo_cluster_t c, const topo_swtree_t *t, rm_error_t *err);
void topo_slurm_blocks_destroy(topo_slurm_blocks_t *b);
/* The BlockSizes the rules above give for b: fills sizes (at most 16), returns their count (0 when b
 * has no block). */
size_t topo_slurm_block_sizes(const topo_slurm_blocks_t *b, size_t sizes[16]);

/* Writes the file of the format for t (blocks from its leaves; top as for topo_slurm_topology_write).
 * Returns 0, or -1 with err set (write error, out of memory). */
int topo_slurm_write(topo_cluster_t c, const topo_swtree_t *t, topo_slurm_format_t fmt, const char *top, FILE *f,
		     rm_error_t *err);

/* The fat-tree node order (the hosts of t's leaves in leaf order, topo_swtree_leaf_order; on a dragonfly
 * group by group) as `rankmapctl order --method fattree` and `slurm-topology --format weights` write it:
 * one host a line, one compressed Slurm host list, or NodeName=<host> Weight=<n> lines (1 first) with a
 * comment header naming the command (by) and a comment line per leaf. */
typedef enum topo_slurm_order {
	TOPO_SLURM_ORDER_LIST = 0,
	TOPO_SLURM_ORDER_HOSTLIST,
	TOPO_SLURM_ORDER_WEIGHTS,
} topo_slurm_order_t;
/* Writes the order to f. Returns 0, or -1 with err set (nothing kept by the node list, write error, out
 * of memory). */
int topo_slurm_order_write(topo_cluster_t c, const topo_swtree_t *t, topo_slurm_order_t how, const char *by, FILE *f,
			   rm_error_t *err);

/* Sanitises name into buf for Slurm (see above); returns buf. An empty result stays empty. */
char *topo_slurm_sanitise(const char *name, char *buf, size_t len);

#endif
