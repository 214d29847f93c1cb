/*
 * topo/topo_private.h: internals of topo/, shared by its source files only.
 *
 * Ownership inside topo/: the cluster*.c, node_*.c, topo_hash.c, connect.c, cost.c and target*.c
 * files hold the cluster container and the hardware side (cluster_private.h); net_ib*.c the fabric
 * (struct topo_fabric, defined in net_ib_private.h); net_torus.c the torus (struct topo_torus_model,
 * defined there).
 * The cluster only talks to the fabric and the torus through the functions declared below and in
 * topo_view.h (the read-only queries that topo/report/ uses too).
 */
#ifndef RANKMAP_TOPO_PRIVATE_H
#define RANKMAP_TOPO_PRIVATE_H

#include <jansson.h>
#include <pthread.h>

#include "topo.h"
#include "topo_view.h"
#include "topo_gpu.h"

struct topo_fabric;      /* net_ib*.c */
struct topo_torus_model; /* net_torus.c */

/* ---- fabric, implemented in net_ib*.c ------------------------------------------------------- */

/* New empty fabric; NULL on allocation failure. */
struct topo_fabric *topo_fabric_create(void);
void topo_fabric_destroy(struct topo_fabric *f);
/* Around fork(): take the fabric's cache lock, release it in the parent, re-initialise it in the
 * child (see topo_cluster_fork_prepare). NULL f is fine. */
void topo_fabric_fork_prepare(struct topo_fabric *f);
void topo_fabric_fork_parent(struct topo_fabric *f);
void topo_fabric_fork_child(struct topo_fabric *f);
/* Parsers add one subnet each (see topo_load_ib_file / _live / _cache / topo_load_node_name_map). */
int topo_fabric_load_file(struct topo_fabric *f, const char *path, rm_error_t *err);
int topo_fabric_load_live(struct topo_fabric *f, const char *ca, int port, rm_error_t *err);
int topo_fabric_load_cache(struct topo_fabric *f, const char *path, rm_error_t *err);
int topo_fabric_load_node_name_map(struct topo_fabric *f, const char *path, rm_error_t *err);
/* HCA names from the hosts' hwloc XML: guids[i] (node or port GUID) belongs to host names[i] (borrowed:
 * the cluster's host names, which outlive the fabric's use of them). Used at finalize for an HCA whose
 * description is generic and that has no node-name map entry; a GUID two hosts claim names nothing.
 * node_of[i] (may be NULL) is the node GUID of port GUID guids[i] when known (0 otherwise), so that a
 * node-name map keyed by node GUID names the HCA ports of a -p ports report (copied).
 * gen identifies the set: a different gen than the last call's redoes the next finalize. -1 on ENOMEM. */
int topo_fabric_set_hwloc_names(struct topo_fabric *f, unsigned long gen, const uint64_t *guids,
				const char *const *names, const uint64_t *node_of, size_t n);
/* Names hosts (node-name map, else first word of the HCA description, else the hwloc XML holding its
 * GUID, else the GUID), computes
 * switch levels, the leaf switch of each host and switch-to-switch hop counts. Idempotent. */
int topo_fabric_finalize(struct topo_fabric *f, rm_error_t *err);
/* The HCA with node or port GUID guid is on rail r (the cluster file's "rail = GUID N"), whatever the
 * fabric suggests; takes effect at the next finalize. 0, or -1 (ENOMEM; EINVAL when r >=
 * TOPO_MAX_RAILS or guid is 0). */
int topo_fabric_set_rail(struct topo_fabric *f, uint64_t guid, unsigned r);
/* Adds an NVLink domain: name and its hosts (copied), after those added before (the cluster file's
 * "nvlink_domain = NAME HOSTLIST", which checks names and overlaps). 0, or -1 (ENOMEM). */
int topo_fabric_add_nvlink_domain(struct topo_fabric *f, const char *name, const char *const *hosts, size_t n);
/* The first rail override (topo_fabric_set_rail) whose GUID is no loaded HCA's node or port GUID, 0 when
 * every one names an HCA; UINT64_MAX with errno ENOMEM. O(nodes + overrides). */
uint64_t topo_fabric_rail_unmatched(const struct topo_fabric *f);
/* The path between fabric hosts a and b on rail r (r < 0: the default rail, topo_fabric_default_rail,
 * else the closest HCA pair): links between the HCAs (hops; 0 for a == b), whether the two leaves are
 * one switch, in one dragonfly group or in two (global), and for a global path the links between the two
 * groups (count, summed Gb/s) and the rate of a's HCA port (Gb/s, 0 unknown). 0, or -1 when not connected
 * (ENOENT) or out of range (EINVAL). net_ib_rails.c. */
struct topo_fabric_path {
	int hops;
	int same_switch, global;
	unsigned global_count;
	double global_gbps, host_gbps;
};
int topo_fabric_path(const struct topo_fabric *f, size_t a, size_t b, long r, struct topo_fabric_path *p);
/* 1 when the finalized fabric has CAs with a generic description (named, or left unnamed, by hosts'
 * hwloc GUIDs): a host's GUIDs may then change the fabric's names. */
int topo_fabric_names_by_guid(const struct topo_fabric *f);
/* Group of switch s at "network level" k above the leaves (k = 0: the leaf itself; k = 1: leaves that
 * share a spine set, ...), for building target hierarchies; number of such levels in *nlevels. With
 * dragonfly groups (topo_view.h) there are two levels: the leaf, and k = 1 its dragonfly group number. */
int topo_fabric_network_levels(const struct topo_fabric *f);
/* The dragonfly group of switch s (dense index), -1 when none; and, for the n groups of groups[] (sorted,
 * distinct), gw[a * n + b] = the switch of group a that holds the first global link to group b (in the
 * fabric's link order), -1 when none: one pass over the fabric's links (net_ib_groups.c). */
long topo_fabric_switch_dgroup(const struct topo_fabric *f, long s);
void topo_fabric_group_gateways(const struct topo_fabric *f, const long *groups, size_t n, long *gw);
long topo_fabric_leaf_group(const struct topo_fabric *f, long leaf, int k);
/* The fabric components host h's HCA ports are cabled into, as ids (distinct, unsorted) in out[0 ..
 * max-1]: a connected set of switches of one subnet (its smallest switch index), or one back-to-back
 * HCA cable (nswitches + its smaller HCA node). Two hosts can reach each other over the fabric exactly
 * when they share an id. Returns how many there are (more than max: call again with a larger out). */
size_t topo_fabric_host_components(const struct topo_fabric *f, size_t h, uint32_t *out, size_t max);

/* ---- torus, implemented in net_torus.c ------------------------------------------------------ */

struct topo_torus_model *topo_torus_model_load(const char *path, rm_error_t *err);
struct topo_torus_model *topo_torus_model_from_spec(const topo_torus_spec_t *spec, rm_error_t *err);
void topo_torus_model_destroy(struct topo_torus_model *t);
const topo_torus_spec_t *topo_torus_model_spec(const struct topo_torus_model *t);
/* Hosts named by the torus config (table or pattern); 0 when nodes are named by coordinates. */
size_t topo_torus_model_nhosts(const struct topo_torus_model *t);
const char *topo_torus_model_host_name(const struct topo_torus_model *t, size_t i);
/* Node index (router-major: ((x * Y + y) * Z + z) * nodes_per_router + n) of a host name, -1 if none. */
long topo_torus_model_host_node(const struct topo_torus_model *t, const char *name);
/* Link-cost-weighted hop distance between two node indices (0 inside one router). */
double topo_torus_model_distance(const struct topo_torus_model *t, long a, long b);
/* The torus's part of `rankmapctl report` (new reference). */
json_t *topo_torus_model_report(const struct topo_torus_model *t);

/* ---- the cluster -------------------------------------------------------------------------------- */

struct topo_nodetype; /* one parsed hwloc tree shared by all hosts with identical hardware */

/* InfiniBand GUIDs from a host's hwloc XML: node GUIDs v[0 .. nnode-1], port GUIDs after them. */
struct topo_guids {
	uint32_t n, nnode;
	uint32_t uuid_len; /* bytes after v[n]: the host's GPU UUIDs, "osdev\0uuid\0" pairs (node_guid.c) */
	uint64_t v[];
};
/* Bytes of g, its GPU UUIDs included (0 for NULL). */
size_t topo_guids_bytes(const struct topo_guids *g);
/* The UUID the host's XML gives the OS device named osdev, NULL when none. */
const char *topo_guids_uuid(const struct topo_guids *g, const char *osdev);

struct topo_host {
	char *name;
	struct topo_nodetype *type; /* NULL without hardware data */
	struct topo_guids *guids;   /* from its hwloc XML (owned), NULL when none */
	long fabric_host;           /* index in the fabric, -1 */
	long torus_node;            /* node index in the torus, -1 */
};

struct topo_cluster {
	struct topo_host *hosts;
	size_t nhosts, hosts_cap;
	void *host_index; /* name -> index hash (cluster.c) */
	struct topo_nodetype **types;
	size_t ntypes, types_cap;
	struct topo_fabric *fabric; /* NULL until an IB source is loaded */
	struct topo_torus_model *torus;
	topo_costs_t costs;
	int finalized;
	int replace_hw;            /* hardware loaded for a host replaces what it had (topo_cluster_replace_hw) */
	int strict;                /* a bad host file fails the load (topo_cluster_set_strict) */
	topo_anomaly_t *anomalies; /* load anomalies, strings owned (node_anomaly.c) */
	size_t nanomalies, anomalies_cap;
	unsigned long guid_gen;              /* bumped whenever hosts' GUIDs change (node_guid.c) */
	struct rm_child_srv *parser;         /* hwloc's parsers in a child, during a load (node_parse.c) */
	int keep_parser;                     /* the parser outlives each buffer load (topo_cluster_keep_parser) */
	struct topo_netshare *net;           /* fabric and torus shared with derived clusters (cluster_derive.c) */
	struct topo_gpu_override *gpu_links; /* site GPU link overrides (node_gpu_links.c), NULL */
	struct merged *gpu_merged;           /* link matrices with overrides applied (node_gpu_links.c) */
	pthread_mutex_t gpu_lock;            /* guards gpu_merged (filled by const queries) */
	topo_slot_kind_t slots;              /* the cluster file's `slots` (default for requests) */
	char *arena; /* one block holding copied host names and GUIDs (topo_cluster_copy_table) */
	size_t arena_len;
};

/* Frees p, a host's name or GUIDs of c, unless it lives in c's arena (cluster.c). */
void topo_cluster_free_owned(struct topo_cluster *c, void *p);

/* The fabric and torus of clusters derived from one another. */
struct topo_netshare {
	long refs;
	struct topo_fabric *fabric;
	struct topo_torus_model *torus;
};

/* Drops c's reference on a fabric and torus it shares (cluster.c): 1 when other clusters still
 * use them (do not destroy them), 0 when c may destroy them (it held the last reference, or none). */
int topo_netshare_release(struct topo_cluster *c);

/* Adds a host, or returns the existing index; -1 on allocation failure (cluster.c). */
long topo_cluster_add_host(struct topo_cluster *c, const char *name);

#endif
