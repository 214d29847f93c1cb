/*
 * topo/topo.h: rankmap's model of the machine.
 *
 * A cluster (topo_cluster_t) is assembled from sources: per-node hwloc trees (XML files, a directory of
 * them with *.diff.xml topology diffs, synthetic strings, the live machine), the InfiniBand fabric
 * (ibnetdiscover topology files and -p ports reports, live libibnetdisc discovery or its cache file,
 * a node-name map) and an optional 3D torus. topo_cluster_finalize() joins them; the cluster can then be
 * queried for hosts, hop counts and slot distances, and restricted to a set of slots as a
 * topo_target_t, the form the mapping engines consume.
 *
 * Error rule: functions return 0 on success and -1 with errno set on failure; functions returning a
 * pointer return NULL on failure. Loaders also fill a caller-owned rm_error_t (may be NULL) naming the
 * file and line, or the field; the first error wins. A failed load leaves the cluster as it was before
 * the call. No function here calls exit() or prints.
 *
 * Memory: nothing is quadratic in hosts; hop counts come from the switch graph (per leaf switch).
 */
#ifndef RANKMAP_TOPO_H
#define RANKMAP_TOPO_H

#include <stddef.h>
#include <stdint.h>
#include <hwloc.h>

#include "rm_error.h"

typedef struct topo_cluster *topo_cluster_t;

/* ---- lifecycle ---------------------------------------------------------------------------- */

/* Returns a new empty cluster (NULL on allocation failure). Caller owns it. */
topo_cluster_t topo_cluster_create(void);
/* Frees the cluster and everything it owns. NULL is fine. */
void topo_cluster_destroy(topo_cluster_t c);
/* Forking while other threads may query c (rankmapd's worker processes): topo_cluster_fork_prepare()
 * takes c's internal locks (the lazily filled caches of const queries) right before fork(); then the
 * parent calls topo_cluster_fork_parent() (releases them) and the child, which has one thread,
 * topo_cluster_fork_child() (re-initialises them). NULL c is fine; nothing is allocated. */
void topo_cluster_fork_prepare(topo_cluster_t c);
void topo_cluster_fork_parent(topo_cluster_t c);
void topo_cluster_fork_child(topo_cluster_t c);

/* ---- hardware sources (topo/node_hwloc.c) --------------------------------------------------- */

/* Loads one hwloc XML file. host NULL: the HostName info of the root object, else the file name
 * without ".xml". Identical contents are shared between hosts (one parsed tree per node type).
 * A host loaded twice is an error (duplicate host), unless topo_cluster_replace_hw() is on. */
int topo_load_hwloc_xml(topo_cluster_t c, const char *path, const char *host, rm_error_t *err);
/* A 64-bit hash of an hwloc XML buffer's bytes without its <info .../> elements (host name, addresses,
 * GUIDs, cgroup, ...): two buffers that topo_load_hwloc_xmlbuf would give one node type have the same
 * value. Never 0. No allocation: O(len). */
uint64_t topo_hwloc_xml_type_key(const char *buf, size_t len);
/* Same from a memory buffer (rankmapd's `register`); source names the origin in errors. */
int topo_load_hwloc_xmlbuf(topo_cluster_t c, const char *host, const char *buf, size_t len, const char *source,
			   rm_error_t *err);
/* on != 0: from now on, hardware loaded for a host that already has some replaces it (rankmapd applies
 * a node's registration over the static sources this way); 0, the default: that is a duplicate host.
 * A host twice in one load stays an error either way. Returns 0. */
int topo_cluster_replace_hw(topo_cluster_t c, int on);
/* on != 0: the child process of hwloc's parsers (node_parse.c) is kept from one topo_load_hwloc_xmlbuf
 * to the next instead of ended by each (rankmapd's pool of registrations: one fork for many new node
 * types, not one each); topo_cluster_destroy ends it. Returns 0. */
int topo_cluster_keep_parser(topo_cluster_t c, int on);
/* From now on, in this process, hwloc's parser children (node_parse.c) are the program path run with
 * argv (NULL-terminated) instead of forks of the caller: that program's main calls topo_parse_serve()
 * when it sees those arguments. For a threaded caller (rankmapd): a fork of a threaded process may wait
 * forever on a lock another thread held at fork time (GCC 12's AddressSanitizer runtime does), an exec'd
 * program starts clean. Call before any load, before other threads start. A later call replaces the
 * earlier one; path and argv both NULL go back to forks. Returns 0, or -1 (EINVAL: path or argv missing
 * or empty; ENOMEM) with nothing kept (forks again) and nothing leaked. */
int topo_parse_program(const char *path, char *const argv[]);
/* The parser child's main in such a program: parent is the argument topo_parse_program's caller appends
 * (its pid). Serves parse requests until its parent closes the connection; never returns. */
__attribute__((noreturn)) void topo_parse_serve(const char *parent);
/* Loads every <host>.xml of a directory, and every <host>.diff.xml applied to the reference XML it
 * names (hwloc topology diff, refname attribute; hwloc 1.x diffs too: each hunk is applied on its own,
 * 1.x object depths translated). An empty directory is an error; faults are isolated per host (see
 * topo_cluster_set_strict). XML is loaded with disallowed PUs included: data gathered inside a job's
 * restricted cpuset counts the whole machine, and the report names those hosts. */
int topo_load_hwloc_dir(topo_cluster_t c, const char *dir, rm_error_t *err);
/* Adds host with the hardware of an hwloc synthetic description ("pack:2 core:4 pu:1"). */
int topo_load_hwloc_synthetic(topo_cluster_t c, const char *host, const char *desc, rm_error_t *err);
/* Adds host (NULL: gethostname()) with the hardware of the machine this runs on. */
int topo_load_hwloc_live(topo_cluster_t c, const char *host, rm_error_t *err);
/* CLI convenience: spec is a directory, an XML file, "synthetic:<desc>[@host1,host2...]" or "live". */
int topo_load_hwloc_spec(topo_cluster_t c, const char *spec, rm_error_t *err);

/* ---- per-host fault isolation (topo/node_anomaly.c) ------------------------------------------- */

/*
 * By default a directory load (and the hwloc source of a cluster file) isolates faults per host: a host
 * whose files cannot be read or applied (unreadable, a FIFO, a symlink loop, empty, truncated, a bad
 * diff, a diff whose reference is bad) is left out and recorded as a load anomaly; the rest loads. A
 * directory from which no host loads is still an error (its first host's). A diff hunk that does not
 * apply is an anomaly too, the host keeping the reference's value. Strict mode restores
 * fail-on-first-error (the whole load fails and the cluster is left as it was).
 */
typedef struct topo_anomaly {
	const char *kind;   /* bad_host_file, bad_reference, diff_hunk */
	const char *host;   /* the host left out (or patched), "" when unknown */
	const char *file;   /* the file at fault */
	int line;           /* its line, 0 when unknown */
	const char *reason; /* what is wrong, without the file name */
} topo_anomaly_t;

/* strict != 0: the first bad host file fails the load; 0 (the default): per-host isolation. */
void topo_cluster_set_strict(topo_cluster_t c, int strict);
/* Returns the strict flag. */
int topo_cluster_strict(topo_cluster_t c);
/* Records a load anomaly of the given kind for host (NULL: unknown) from the error e (its source, line
 * and text are copied). Returns 0, or -1 (ENOMEM). */
int topo_cluster_add_anomaly(topo_cluster_t c, const char *kind, const char *host, const rm_error_t *e);
/* Number of load anomalies, and anomaly i (borrowed, valid until the cluster is destroyed or more
 * anomalies are added), NULL when out of range. */
size_t topo_cluster_nanomalies(topo_cluster_t c);
const topo_anomaly_t *topo_cluster_anomaly(topo_cluster_t c, size_t i);

/* ---- InfiniBand GUIDs of hosts, from their hwloc XML (topo/node_guid.c) ------------------------- */

/* The GUIDs hwloc recorded for host h's HCAs (OpenFabrics OS devices): node GUIDs (info NodeGUID,
 * "0002:c903:00fe:1234") in *node (count returned), port GUIDs (the interface part of each port's GID
 * 0, info Port<N>GID0) in *port (count in *nport). Arrays borrowed; 0 when the host has none. For a host
 * loaded from a diff, the reference's GUIDs with the diff's changes. */
size_t topo_host_guids(topo_cluster_t c, size_t h, const uint64_t **node, const uint64_t **port, size_t *nport);

/* ---- InfiniBand sources (topo/net_ib*.c) ---------------------------------------------------- */

/* Loads an ibnetdiscover output file: topology-file form or -p ports report, detected from the
 * content; -s verbose "DR path" lines are skipped. Each file is one subnet. */
int topo_load_ib_file(topo_cluster_t c, const char *path, rm_error_t *err);
/* Discovers the fabric live through libibnetdisc (ca NULL/port 0: the default port). */
int topo_load_ib_live(topo_cluster_t c, const char *ca, int port, rm_error_t *err);
/* Loads a libibnetdisc cache file (ibnd_cache_fabric / ibnetdiscover --cache). */
int topo_load_ib_cache(topo_cluster_t c, const char *path, rm_error_t *err);
/* Loads a node-name map (lines `0xGUID "name"`, # comments). Applies to every fabric of the cluster,
 * whenever it is loaded. */
int topo_load_node_name_map(topo_cluster_t c, const char *path, rm_error_t *err);

/* ---- 3D torus (topo/net_torus.c) ------------------------------------------------------------ */

typedef struct topo_torus_spec {
	int dims[3];          /* router extents in x, y, z (each >= 1) */
	int wrap[3];          /* 1 when that dimension wraps around */
	double link_cost[3];  /* cost of one hop along each dimension (anisotropy), > 0 */
	int nodes_per_router; /* >= 1 */
} topo_torus_spec_t;

/* Loads a torus config file (dims, wrap, link costs, nodes per router, hosts by table or pattern). */
int topo_load_torus(topo_cluster_t c, const char *path, rm_error_t *err);
/* Sets a torus from a spec (no host names: nodes are named by coordinates). */
int topo_set_torus(topo_cluster_t c, const topo_torus_spec_t *spec, rm_error_t *err);
/* Returns the cluster's torus spec, or NULL when it has none (borrowed). */
const topo_torus_spec_t *topo_torus(topo_cluster_t c);
/* Host names of the torus nodes, by node index (router-major: ((x * Y + y) * Z + z) * nodes_per_router
 * + n): fills names[0 .. nnodes-1] with the host the torus config names for each node (borrowed from
 * the cluster), NULL where none (the first name wins when a config names a node twice). Returns how
 * many nodes are named: 0 when the cluster has no torus or its nodes are named by coordinates. */
size_t topo_torus_host_names(topo_cluster_t c, const char **names, size_t nnodes);

/* ---- cluster files ---------------------------------------------------------------------------- */

/* Loads a cluster description: `key = value` lines, # comments, keys hwloc (as topo_load_hwloc_spec),
 * ib, ib_cache, node_name_map, torus, strict (yes/no: topo_cluster_set_strict, applied before any
 * source whatever its line), rail, nvlink_domain and the cost parameters of topo_costs_t by name.
 * Relative paths are relative to the file's directory. Used by `--cluster FILE` and RANKMAP_CLUSTER.
 * The nvlink_domain lines of one file name at most TOPO_NVLINK_MAX_NAMES hosts in all while it is read,
 * and at most max(TOPO_NVLINK_MIN_CAP, twice the fabric's hosts) once its fabric is loaded; beyond,
 * the load fails naming the file and the line where the count passed the bound. A name there is at most
 * TOPO_NVLINK_NAME_MAX characters, and one line's names at most TOPO_NVLINK_LINE_BYTES bytes (fewer names
 * for long ones: 1M names of 1,000 characters would be 1 GB). */
#define TOPO_NVLINK_MAX_NAMES 1000000
#define TOPO_NVLINK_NAME_MAX 255
#define TOPO_NVLINK_LINE_BYTES (16 << 20)
#define TOPO_NVLINK_MIN_CAP 100000
int topo_load_cluster_file(topo_cluster_t c, const char *path, rm_error_t *err);

/* ---- finalize and hosts --------------------------------------------------------------------- */

/* Joins the sources: host names from the fabric, switch levels, leaf of every host, torus coordinates.
 * An HCA the fabric has no name for (a generic description, no node-name map entry) takes the name of
 * the host whose hwloc XML holds its node or port GUID (topo_host_guids).
 * Call after loading and before any query; may be called again after more loads. */
int topo_cluster_finalize(topo_cluster_t c, rm_error_t *err);

/* ---- incremental models (topo/cluster_derive.c) ----------------------------------------------- */

/* Adds every host of pool that has hardware to c, as loads in replace mode would: node types shared with
 * pool (its hwloc trees are not copied, nothing is read or parsed), GUIDs copied. c must be finalized
 * afterwards. Returns 0, or -1 (ENOMEM) with err. */
int topo_cluster_add_hosts_from(topo_cluster_t c, topo_cluster_t pool, rm_error_t *err);
/* A new finalized cluster equal to base with hosts names[0 .. n-1] given the hardware and GUIDs they have
 * in pool (new hosts are added), as a full load of base's sources followed by those hosts' loads would
 * give, at the cost of copying base's host table: node types, fabric and torus are shared with base (load
 * nothing more into either cluster afterwards). NULL with errno EAGAIN (err set) when the change could
 * alter what a full load derives (the fabric names HCAs by hosts' GUIDs and a host's GUIDs change; a new
 * host name joins a fabric or torus host by its short form; a host that was a load anomaly; a name not in
 * pool; more than 256 names): load from scratch then. NULL with ENOMEM otherwise. Caller owns it. */
topo_cluster_t topo_cluster_derive(topo_cluster_t base, topo_cluster_t pool, const char *const *names, size_t n,
				   rm_error_t *err);

/* Number of hosts: the union of hosts with hardware data, fabric hosts and torus hosts. */
size_t topo_nhosts(topo_cluster_t c);
/* Name of host h (borrowed, valid until the cluster is destroyed). */
const char *topo_host_name(topo_cluster_t c, size_t h);
/* Index of a host by name, or -1 (errno ENOENT). */
long topo_host_find(topo_cluster_t c, const char *name);
/* Hardware tree of host h (borrowed, shared by all hosts of the same node type), NULL if unknown. */
hwloc_topology_t topo_host_hwloc(topo_cluster_t c, size_t h);
/* PUs and cores of host h (0 when it has no hardware data). */
unsigned topo_host_npus(topo_cluster_t c, size_t h);
unsigned topo_host_ncores(topo_cluster_t c, size_t h);
/* Logical index of host h's PU of OS index os (what taskset and the slots' pu_os number), or -1 when it
 * has none. O(1): a table per node type, built when the type is loaded. */
long topo_host_pu_by_os(topo_cluster_t c, size_t h, unsigned long os);
/* Number of links on the shortest fabric path between the HCAs of two hosts (2 under one leaf switch),
 * 0 for the same host, -1 when either host is not in the fabric or they are not connected. */
int topo_host_hops(topo_cluster_t c, size_t a, size_t b);

/* Whether every two of the n hosts (cluster indices) can reach each other over the network: 1 when they
 * can (a host outside the InfiniBand fabric reaches every host through the cost model's flat network, so
 * a cluster without a fabric is connected), 0 when some cannot, one such pair then in *a and *b (either
 * may be NULL); -1 with errno set (EINVAL: the cluster not finalized or a host out of range; ENOMEM;
 * E2BIG: the hosts cabled into more than 8192 distinct sets of fabric components). Complete (every pair
 * is covered: hosts A and B may share a subnet, B and C another, and A and C none) in time O(n + s^2) for
 * s distinct sets, a few per subnet combination, and memory O(n) (topo/connect.c). */
int topo_hosts_connected(topo_cluster_t c, const size_t *hosts, size_t n, size_t *a, size_t *b);

/* ---- cost model (topo/cost.c) --------------------------------------------------------------- */

/* Kinds of level a slot hierarchy has, outermost first. */
typedef enum topo_level_kind {
	TOPO_LEVEL_ROOT = 0, /* the whole set */
	TOPO_LEVEL_NETWORK,  /* a switch group, leaf switch, torus block or router */
	TOPO_LEVEL_HOST,
	TOPO_LEVEL_PACKAGE,
	TOPO_LEVEL_NUMA,
	TOPO_LEVEL_CACHE,
	TOPO_LEVEL_CORE,
	TOPO_LEVEL_PU,
	TOPO_LEVEL_OTHER /* levels of a tleaf string */
} topo_level_kind_t;

/* Per-level latency (microseconds) and bandwidth (GB/s) of the cost model, with LogGP-based defaults
 * (REFERENCE.md section 4). The distance between two slots is latency + ref_bytes / bandwidth of the
 * level where they first share an ancestor; network distance grows with hops (or torus link costs). */
typedef struct topo_costs {
	double lat_core, bw_core;   /* SMT siblings */
	double lat_cache, bw_cache; /* shared cache */
	double lat_numa, bw_numa;   /* same NUMA node / package */
	double lat_host, bw_host;   /* same host, across packages */
	double lat_net, bw_net;     /* between hosts: base cost (HCA to HCA, one switch) */
	double lat_hop;             /* each extra switch hop, or torus hop of link cost 1 */
	double ref_bytes;           /* message size the distance is quoted for */
	double bw_hop;              /* torus link bandwidth: each torus hop of link cost 1 also costs
					 * ref_bytes / bw_hop (hop-bytes; see topo/cost.c) */
	/* GPU slots (topo_gpu.h, topo/COST-GPU.md): two GPUs of a host joined by a link of bandwidth bw
	 * GB/s cost lat_gpu + ref_bytes / bw; without a link, lat_gpu_pcie + ref_bytes / bw_gpu_pcie (plus
	 * lat_host and the inter-package bandwidth bw_host when their packages differ) */
	double lat_gpu, lat_gpu_pcie, bw_gpu_pcie;
} topo_costs_t;

/* Fills costs with the defaults. */
void topo_costs_default(topo_costs_t *costs);
/* Returns the cluster's cost parameters (borrowed, modifiable before targets are built). */
topo_costs_t *topo_cluster_costs(topo_cluster_t c);

/* A slot: one PU of one host, by the PU's logical index in the host's hwloc tree. */
typedef struct topo_slot {
	uint32_t host;
	uint32_t pu;
} topo_slot_t;

/* Distance between two slots of the cluster under its cost model (0 for the same slot); a negative
 * value when a slot is invalid or the hosts are not connected. */
double topo_slot_distance(topo_cluster_t c, topo_slot_t a, topo_slot_t b);

/* ---- rails and dragonfly groups in the cost model (topo/cost.c; the fabric's rails and groups are in
 * topo_view.h) ------------------------------------------------------------------------------------ */

/* Network cost between host a's HCA on rail r and host b's HCA on rail r (cluster host indices), in the
 * units of topo_slot_distance: hops on that rail, plus the dragonfly global-link term when the two
 * leaves are in different groups. Negative (errno ENOENT) when either host has no HCA on rail r or the
 * two are not connected over it; 0 for a == b. For callers that know which NIC a slot uses (GPUs). */
double topo_host_rail_cost(topo_cluster_t c, size_t a, size_t b, unsigned r);
/* Rail of the HCA of host h whose node or port GUID is guid (hwloc's NodeGUID / PortGUID infos), -1
 * (ENOENT) when host h has no such HCA in the fabric. */
long topo_host_guid_rail(topo_cluster_t c, size_t h, uint64_t guid);
/* Where traffic between two hosts goes over the network, for explain and reports. */
typedef enum topo_net_class {
	TOPO_NET_SAME_HOST = 0,
	TOPO_NET_SAME_SWITCH, /* one leaf switch (or torus router) */
	TOPO_NET_INTRA_GROUP, /* several switches, one dragonfly group (or any multi-switch path without groups) */
	TOPO_NET_GLOBAL,      /* across a global link between two dragonfly groups */
	TOPO_NET_OTHER        /* a host outside the fabric, or not connected */
} topo_net_class_t;
/* Name of a target's dragonfly group level (a TOPO_LEVEL_NETWORK level; kept even when it does not
 * branch, so that traffic under it is inside one group and traffic above it crosses a global link). */
#define TOPO_DGROUP_LEVEL "dgroup"
/* Class of the path between cluster hosts a and b on the default rail (topo_fabric_default_rail). */
topo_net_class_t topo_host_net_class(topo_cluster_t c, size_t a, size_t b);

/* ---- targets: a set of slots with the cost model restricted to them (topo/target*.c) --------- */

/*
 * A target is a hierarchy of levels over nslots slots, level 0 the root (one group holding every
 * slot) and level nlevels-1 the slots themselves. group[s * nlevels + l] is the dense id (0 ..
 * ngroups[l]-1) of slot s's ancestor at level l. Two slots whose deepest common level is l are at
 * distance cost[l] (cost[nlevels-1] == 0), unless net_dist is set: then slots on different hosts
 * (deepest common level < host_level) are at net_dist(t, slot_host[a], slot_host[b]) (slot_net_dist(t, a, b)
 * when set); and two different slots of one host are at slot_host_dist(t, a, b) when that is set. Slots are
 * numbered depth-first, so a subtree is a contiguous range of slots.
 * The struct is public so that mapping inner loops can read it directly; build it only with the
 * functions below.
 */
/*
 * The links a target's traffic takes, where its network's routes are known from the fabric: a dragonfly
 * (topo/target_links.c). Links: each host's cable (0 .. nhosts-1), each cable between two routers (leaves)
 * of one group (nhosts + local_base[g] + i * group_nleaves[g] + j for the group's leaves i < j, numbered
 * by leaf_local), each pair of groups' global links (nhosts + nlocal + ga * ngroups + gb, ga < gb). The
 * leaves are the routers of the target's hosts and the routers that hold the global links between the
 * target's groups (gateway). A route between two hosts: both host cables; on two routers of one group,
 * their cable; in two groups, the cable from the source's router to its group's gateway towards the
 * other group (when they differ), the pair's global links, and the cable from the other gateway to the
 * destination's router (minimal routing, the first global link of the pair). Rates in Gb/s: host cables
 * at their HCA port's rate, router cables at the same rate (the model does not know them), global links
 * at the sum of the pair's links. Memory: O(hosts + leaves + sum over groups of leaves^2 + groups^2),
 * built only up to TOPO_LINKS_MAX_GROUPS groups and TOPO_LINKS_MAX_LOCAL router cables.
 */
#define TOPO_LINKS_MAX_GROUPS 64
#define TOPO_LINKS_MAX_LOCAL (1u << 16)
typedef struct topo_links {
	uint32_t nhosts, nleaves, ngroups;
	uint32_t *host_leaf;     /* nhosts: the host's router, 0 .. nleaves-1 */
	uint32_t *leaf_group;    /* nleaves: its group, 0 .. ngroups-1 */
	uint32_t *leaf_local;    /* nleaves: its index among its group's leaves */
	uint32_t *group_nleaves; /* ngroups */
	uint64_t *local_base;    /* ngroups */
	uint32_t *gateway;       /* ngroups x ngroups: [ga * ngroups + gb] the leaf of ga linked to gb, or
				  * UINT32_MAX (unknown: no cable counted inside the groups) */
	uint64_t nlocal, nlinks; /* router cables; all links */
	double *rate;            /* nlinks, Gb/s (> 0) */
} topo_links_t;
/* The cable between two different leaves of one group. */
static inline uint64_t topo_links_local(const topo_links_t *x, uint32_t la, uint32_t lb)
{
	uint32_t g = x->leaf_group[la], i = x->leaf_local[la], j = x->leaf_local[lb];

	if (i > j)
		i ^= j, j ^= i, i ^= j;
	return x->nhosts + x->local_base[g] + (uint64_t)i * x->group_nleaves[g] + j;
}
/* The links of the route between target hosts ha != hb besides their cables, in out (at most 3); their
 * number. */
static inline int topo_links_route(const topo_links_t *x, uint32_t ha, uint32_t hb, uint64_t out[3])
{
	uint32_t la = x->host_leaf[ha], lb = x->host_leaf[hb], ga, gb, wa, wb;
	int n = 0;

	if (la == lb)
		return 0;
	ga = x->leaf_group[la], gb = x->leaf_group[lb];
	if (ga == gb) {
		out[0] = topo_links_local(x, la, lb);
		return 1;
	}
	wa = x->gateway[(size_t)ga * x->ngroups + gb], wb = x->gateway[(size_t)gb * x->ngroups + ga];
	if (wa != UINT32_MAX && wa != la)
		out[n++] = topo_links_local(x, la, wa);
	out[n++] = x->nhosts + x->nlocal + (ga < gb ? (uint64_t)ga * x->ngroups + gb : (uint64_t)gb * x->ngroups + ga);
	if (wb != UINT32_MAX && wb != lb)
		out[n++] = topo_links_local(x, wb, lb);
	return n;
}

typedef struct topo_target topo_target_t;
struct topo_target {
	uint32_t nslots;
	int nlevels;
	uint32_t *group;         /* nslots * nlevels */
	uint32_t *ngroups;       /* nlevels */
	double *cost;            /* nlevels */
	topo_level_kind_t *kind; /* nlevels */
	char **level_name;       /* nlevels, e.g. "root", "leaf", "host", "package", "core" */
	int host_level;          /* level whose groups are hosts, -1 for a tleaf target */
	/* where every slot is in the cluster (NULL for a tleaf target) */
	uint32_t nhosts;      /* distinct hosts of the target */
	uint32_t *slot_host;  /* nslots: target-local host index, 0 .. nhosts-1 */
	topo_slot_t *slot;    /* nslots: cluster host index and PU logical index */
	uint32_t *given;      /* nslots: target slot of the i-th slot given to topo_target_from_slots (the one
			       * translation between a caller's order and the target's; NULL for tleaf) */
	unsigned *slot_pu_os; /* nslots: PU OS index, for binding (NULL for tleaf) */
	uint32_t *slot_gpu;   /* nslots: GPU index on its host for a GPU-slot target (topo_gpu.h), else NULL */
	char **host_name;     /* nhosts (NULL for tleaf) */
	/* optional non-tree network distance between target-local hosts */
	double (*net_dist)(const topo_target_t *t, uint32_t ha, uint32_t hb);
	void *net_ctx;
	void (*net_free)(void *net_ctx);
	/* optional: network distance between two slots of different hosts, when it depends on the slots
	 * and not only on their hosts (GPU slots whose nearest NICs are on different rails: topo_gpu.h);
	 * replaces net_dist (and the tree's cost) across hosts; it reads net_ctx */
	double (*slot_net_dist)(const topo_target_t *t, uint32_t a, uint32_t b);
	/* optional: distance between two different slots of one host when it depends on the pair and not
	 * only on their deepest common level (GPU slots: the pair's own NVLink/xGMI link or PCIe path,
	 * topo/COST-GPU.md); replaces the tree's cost at and below the host level, which stays the
	 * engines' approximation (TreeMatch, Scotch, tiling group by it; refinement and the cost of a
	 * mapping use this); it reads host_ctx, freed with host_free */
	double (*slot_host_dist)(const topo_target_t *t, uint32_t a, uint32_t b);
	void *host_ctx;
	void (*host_free)(void *host_ctx);
	/* one warning about the target for the user (owned), NULL when none: hosts the InfiniBand fabric
	 * does not connect (topo_hosts_connected); those pairs are at a penalty distance, twice the largest
	 * network distance of the target, so that mappings keep heavy traffic within each group */
	char *warning;
	/* the links of the network's routes, where they are known (a dragonfly), else NULL (owned) */
	topo_links_t *links;
};

/* Parses a Scotch tleaf string "tleaf N a1 c1 a2 c2 ... aN cN": N levels, arity a_i, and cost c_i
 * between slots that first differ at level i. Errors name the field. Caller owns the target. */
topo_target_t *topo_target_from_tleaf(const char *s, rm_error_t *err);
/* Restricts the cluster to the given slots (in that order: slot i of the target is slots[i] when the
 * order is already depth-first, else the target renumbers them depth-first and `slot` says which is
 * which, and `given` the way back: given[i] is the target slot of slots[i]). The cluster must be finalized and must outlive nothing: the target copies what it needs.
 * Hosts the InfiniBand fabric does not connect are no error: the target is built with a penalty
 * distance between them and t->warning says so (see struct topo_target). */
topo_target_t *topo_target_from_slots(topo_cluster_t c, const topo_slot_t *slots, size_t n, rm_error_t *err);
/* Convenience: every core (per_core != 0: first PU of each core) or every PU of the named hosts, in
 * the given host order. Unknown hosts and hosts without hardware data are errors naming the host. */
topo_target_t *topo_target_from_hosts(topo_cluster_t c, const char *const *hosts, size_t nhosts, int per_core,
				      rm_error_t *err);
/* Frees a target. NULL is fine. */
void topo_target_destroy(topo_target_t *t);
/* Frees a target's links (topo_links_t). NULL is fine. */
void topo_links_free(topo_links_t *x);

/* Deepest level shared by slots a and b (nlevels-1 when a == b). */
static inline int topo_target_common_level(const topo_target_t *t, uint32_t a, uint32_t b)
{
	const uint32_t *ga = t->group + (size_t)a * t->nlevels, *gb = t->group + (size_t)b * t->nlevels;
	int l = 0;

	while (l + 1 < t->nlevels && ga[l + 1] == gb[l + 1])
		l++;
	return l;
}

/* Distance between slots a and b of the target. */
static inline double topo_target_distance(const topo_target_t *t, uint32_t a, uint32_t b)
{
	int l = topo_target_common_level(t, a, b);

	if (t->host_level >= 0 && l < t->host_level) {
		if (t->slot_net_dist)
			return t->slot_net_dist(t, a, b);
		if (t->net_dist)
			return t->net_dist(t, t->slot_host[a], t->slot_host[b]);
	} else if (t->slot_host_dist && a != b) {
		return t->slot_host_dist(t, a, b);
	}
	return t->cost[l];
}

/* Writes the target as a Scotch tleaf string when it is a uniform tree without net_dist (every group
 * of a level has the same arity). Returns 0, or -1 (errno EINVAL) when it is not uniform. */
int topo_target_tleaf_string(const topo_target_t *t, char *buf, size_t len);

#endif
