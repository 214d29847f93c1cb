/*
 * topo/cluster_private.h: internals of the cluster container and the hardware side of topo/, shared by
 * the cluster (cluster.c, cluster_derive.c, cluster_file.c, cluster_view.c), the node hardware
 * (node_type.c, node_hwloc.c, node_hwloc_diff.c, node_parse.c, node_guid.c, node_anomaly.c), the hash
 * (topo_hash.c), connectivity (connect.c), costs and targets (cost.c, target_cluster.c). Not used
 * outside topo/ (the unit tests excepted).
 */
#ifndef RANKMAP_CLUSTER_PRIVATE_H
#define RANKMAP_CLUSTER_PRIVATE_H

#include <stdint.h>

#include "topo_private.h"
#include "topo_gpu.h"

#include <hwloc/diff.h>

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
	unsigned npus, ncores, npackages; /* disallowed PUs included */
	unsigned disallowed_pus;          /* PUs in the tree outside the allowed cpuset (gathered in a job) */
	unsigned missing_pus;             /* hwloc 1.x XML: online PUs outside the allowed cpuset, left out of it */
	size_t nhosts;                    /* hosts of the cluster using this type */
	size_t index;                     /* in the cluster's types[] (topo_host_type) */
	long *shared; /* topo and norm shared with other clusters' copies (cluster_derive.c): their count */
	struct topo_gpumodel *gpu; /* GPUs, NICs, links (node_gpu.c); freed with topo */
	int32_t *pu_logical;       /* [OS index]: logical index of that PU, -1 none; freed with topo (NULL:
				    * OS indices too sparse for a table, hwloc's lookup then) */
	unsigned pu_os_end;        /* entries of pu_logical: largest OS index + 1 */
};

/* The GPUs, NICs and link matrix of a node type (node_gpu.c; topo_gpu.h says what counts). */
struct topo_gpumodel {
	size_t ngpus, nnics;
	topo_gpu_t *gpus;
	topo_nic_t *nics;
	double *bw; /* ngpus * ngpus GB/s, hwloc's */
	int *hops;  /* ngpus * ngpus */
	const char *source;
	unsigned nswitches;
	int asymmetric;
	unsigned host_numa, gpu_numa;
	uint64_t host_mem, gpu_mem;
	void **allocs; /* everything above that is allocated */
	size_t nallocs, allocs_cap;
	hwloc_bitmap_t *sets;
	size_t nsets, sets_cap;
};
/* The model of a loaded tree; NULL on ENOMEM. */
struct topo_gpumodel *topo_gpumodel_build(hwloc_topology_t topo);
void topo_gpumodel_free(struct topo_gpumodel *m);

/* Site GPU link overrides (node_gpu_links.c): sections of the files loaded. */
struct topo_gpu_override;
void topo_gpu_overrides_free(struct topo_gpu_override *o);
/* Takes one more reference on o (a derived cluster shares its base's overrides); returns o. */
struct topo_gpu_override *topo_gpu_overrides_ref(struct topo_gpu_override *o);
/* Frees the link matrices with overrides applied that queries built (cluster destroy). */
void topo_gpu_merged_free(struct topo_cluster *c);

/* The cluster's host_index (cluster.c: hslot, hosts by name) and type index (node_type.c: tslot, types
 * by key): open-addressing tables of index+1 (0 = empty); capacities are powers of two, load <= 1/2. */
struct cluster_index {
	uint32_t *hslot;
	size_t hcap;
	uint32_t *tslot;
	size_t tcap;
};

/* A 64-bit hash of len bytes, continuing from h (start with TOPO_HASH_SEED) (topo_hash.c). */
#define TOPO_HASH_SEED 1469598103934665603ULL
uint64_t topo_hash_bytes(uint64_t h, const void *p, size_t len);

/* ---- the node-type registry (node_type.c) ---- */

/* Frees a node type and its hwloc tree (the tree only with its last sharer). */
void topo_nodetype_free(struct topo_nodetype *t);
/* Wraps a loaded topology (taken) and its normalised key (taken) into a type registered in c, or
 * returns the existing type with that key (both freed then). NULL with err naming source on error. */
struct topo_nodetype *topo_nodetype_intern(struct topo_cluster *c, hwloc_topology_t topo, char *norm, size_t norm_len,
					   const char *source, rm_error_t *err);
/* The node type of an XML buffer: shared if its normalised content is known, else parsed. */
struct topo_nodetype *topo_hwloc_type_from_xml(struct topo_cluster *c, const char *buf, size_t len, const char *source,
					       rm_error_t *err);
/* Node type with this normalised XML, or NULL (O(1) expected). */
struct topo_nodetype *topo_cluster_find_type(struct topo_cluster *c, uint64_t key, const char *norm, size_t len);
/* Appends a type to the cluster; -1 on allocation failure (the type is not taken then). */
int topo_cluster_add_type(struct topo_cluster *c, struct topo_nodetype *t);
/* Frees the types at index >= ntypes_before that no host uses (roll-back of a failed load). */
void topo_cluster_drop_types(struct topo_cluster *c, size_t ntypes_before);

/* Gives the empty dst src's host table without hardware: names copied, the same host indices, positions
 * in the fabric and torus kept (cluster.c, O(hosts) without hashing). -1 on ENOMEM. */
int topo_cluster_copy_table(struct topo_cluster *dst, const struct topo_cluster *src);

/* ---- hwloc's parsers (node_parse.c), shared by node_type.c, node_hwloc.c, node_hwloc_diff.c, node_guid.c ---- */

/* Loads XML bytes into topo (flags and filters already set); -1 when hwloc refuses them. */
int topo_hwloc_load_bytes(hwloc_topology_t topo, const char *buf, size_t len);
/* hwloc 3.0 XML (node_hwloc_v3.c): 1 when buf is one; its 2.x form (caller frees; NULL on ENOMEM). */
int topo_hwloc_is_v3(const char *buf, size_t len);
char *topo_hwloc_v3_to_v2(const char *buf, size_t len, size_t *out_len);
/* Sets err to why hwloc refused buf (empty, not XML, truncated, malformed), naming source. Returns -1. */
int topo_hwloc_xml_error(const char *buf, size_t len, const char *source, rm_error_t *err);

/* hwloc's parsers in a child process. kind: TOPO_PARSE_TOPO (as topo_hwloc_load_bytes
 * with the default filters), TOPO_PARSE_ALL_TYPES (every object type kept), TOPO_PARSE_DIFF (a topology
 * diff). Returns hwloc's export of what the child parsed (XML, NUL-terminated, *out_len without the NUL;
 * caller frees), or NULL with err naming source: errno EINVAL when hwloc refused the input, EDOM when
 * hwloc parsed it and the child refused it (a PU or NUMA index above 65535; its reason in err), else
 * ECHILD (the parser crashed), ETIMEDOUT, EMSGSIZE or ENOMEM, with the reason. The child is kept for the next
 * input until topo_parse_end(c). */
enum { TOPO_PARSE_TOPO = 'X', TOPO_PARSE_ALL_TYPES = 'A', TOPO_PARSE_DIFF = 'D' };
char *topo_parse_guarded(struct topo_cluster *c, int kind, const char *buf, size_t len, const char *source,
			 size_t *out_len, rm_error_t *err);
/* Ends the cluster's parser child, if any (end of a public load call, destroy). */
void topo_parse_end(struct topo_cluster *c);

/* Per-directory cache of diff references (node_hwloc_diff.c). */
struct topo_diffset;
struct topo_diffset *topo_diffset_create(struct topo_cluster *c);
void topo_diffset_destroy(struct topo_diffset *d);
/* The node type of host from the diff at path: the reference's, with each hunk applied on its own (1.x
 * depths translated); *guids gets the host's GUIDs (owned by the caller, may be NULL). A hunk that does
 * not apply is recorded as a diff_hunk anomaly (unless strict: then it fails). NULL with err set when the
 * diff or its reference cannot be loaded; *ref_bad is then 1 when the reference is at fault. */
struct topo_nodetype *topo_diffset_host(struct topo_diffset *d, const char *path, const char *host,
					struct topo_guids **guids, int *ref_bad, rm_error_t *err);

/* GUIDs of the HCAs in an hwloc XML buffer (NodeGUID and Port<N>GID0 infos), and with gpus != 0 (the
 * node type has GPUs) its GPU UUIDs; NULL when none or out of memory. Caller frees (node_guid.c). */
struct topo_guids *topo_guids_from_xml(const char *buf, size_t len, int gpus);
/* A copy of g with the GUID changes of a diff's info hunks applied; NULL when none remain. */
struct topo_guids *topo_guids_patch(const struct topo_guids *g, hwloc_topology_diff_t diff);
/* Gives the fabric the hosts' GUIDs before it names its hosts (cluster finalize). -1 on ENOMEM. */
int topo_guids_to_fabric(struct topo_cluster *c);

/* Load anomalies (node_anomaly.c): drops those past the first n (n = 0 frees the list). The report
 * reads them through topo_anomalies_report (topo_view.h). */
void topo_anomalies_truncate(struct topo_cluster *c, size_t n);

/* Network part of the cost between two distinct hosts (lat_net + hops or torus distance + transfer);
 * negative when both are in the fabric but not connected (cost.c). */
double topo_host_net_cost(struct topo_cluster *c, size_t a, size_t b);
/* lat + bytes / (bw GB/s), in microseconds (cost.c). */
double topo_level_cost(double lat, double bw, double bytes);
/* Cost of one torus hop of link cost 1: lat_hop + ref_bytes / bw_hop (cost.c). */
double topo_torus_hop_cost(const topo_costs_t *k);

/* Connectivity of a host set over the fabric (connect.c): hosts grouped by signature, the set of fabric
 * components their HCAs are cabled into (topo_fabric_host_components); a host outside the fabric has the
 * flat signature, which reaches every host. Two hosts reach each other when their signatures share a
 * component (or either is flat). */
struct topo_conn {
	size_t n;      /* hosts checked */
	uint32_t *sig; /* n: signature of each host */
	size_t nsig;
	size_t *count, *first; /* nsig: hosts with the signature, the first of them */
	size_t *off;           /* nsig + 1: components of s are comp[off[s] .. off[s+1]-1], sorted */
	uint32_t *comp;
	uint8_t *flat; /* nsig */
	size_t cut[2]; /* an unconnected pair (indices into the hosts given), SIZE_MAX: none */
};
#define TOPO_CONN_MAX_SIGS 8192
/* Fills k for the cluster hosts hosts[0 .. n-1]. 0, or -1 with errno (ENOMEM; E2BIG beyond
 * TOPO_CONN_MAX_SIGS signatures); topo_conn_free(k) either way. */
int topo_conn_build(struct topo_cluster *c, const size_t *hosts, size_t n, struct topo_conn *k);
void topo_conn_free(struct topo_conn *k);
/* 1 when hosts of signatures s and t reach each other over the network. */
int topo_conn_linked(const struct topo_conn *k, size_t s, size_t t);
/* The warning for a set with an unconnected pair (k->cut[0] != SIZE_MAX): names that pair (names[i]: host
 * i of the set), the groups the fabric splits the set into, or how many hosts lack a path to some other,
 * and the penalty distance. A new string, NULL when out of memory. */
char *topo_conn_message(const struct topo_conn *k, const char *const *names, double penalty);

/* A small string set, for duplicate checks inside one load (topo_hash.c). */
struct topo_nameset;
struct topo_nameset *topo_nameset_create(size_t hint);
/* Returns 1 if added, 0 if already present, -1 on allocation failure. name is copied. */
int topo_nameset_add(struct topo_nameset *s, const char *name);
void topo_nameset_destroy(struct topo_nameset *s);

/* ---- the links of a dragonfly target's routes (target_links.c) ---- */
/* Sets t->links from each target host's fabric index (all >= 0). Leaves t->links NULL (and returns 0)
 * when a host's router has no dragonfly group, past TOPO_LINKS_MAX_GROUPS groups or TOPO_LINKS_MAX_LOCAL
 * router cables. 0, or -1 (ENOMEM). */
int topo_links_attach(topo_cluster_t c, topo_target_t *t, const long *fabric_host);

#endif
