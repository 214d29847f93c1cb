/*
 * topo/topo_view.h: a read-only view of a finalized cluster's parts, for the views of the model
 * (topo/report/: the cluster report, the SVG pictures, Slurm's topology.conf) and for tests.
 *
 * Nothing here changes the model. The fabric is reached through an opaque const handle; its hosts
 * are numbered 0 .. topo_fabric_nhosts()-1 (not the cluster's host numbers: see topo_host_fabric_host)
 * and its switches densely 0 .. topo_fabric_nswitches()-1 in load order.
 *
 * Error rule as in topo.h: functions returning an index return -1 when there is none (errno set);
 * pointer-returning functions return NULL (errno set); strings are borrowed from the cluster and live
 * as long as it does.
 */
#ifndef RANKMAP_TOPO_VIEW_H
#define RANKMAP_TOPO_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "topo.h"

typedef struct topo_fabric topo_fabric_t;

/* ---- the cluster's parts (cluster.c) ------------------------------------------------------------ */

/* The cluster's InfiniBand fabric (borrowed), NULL when none was loaded. */
const topo_fabric_t *topo_cluster_fabric(topo_cluster_t c);
/* Index of cluster host h in the fabric, -1 when it has no HCA there. */
long topo_host_fabric_host(topo_cluster_t c, size_t h);
/* Node index of cluster host h in the torus (router-major, topo.h), -1 when it is not a torus node. */
long topo_host_torus_node(topo_cluster_t c, size_t h);
/* Link-cost-weighted hop distance between two torus node indices (0 inside one router); negative
 * without a torus. */
double topo_torus_node_distance(topo_cluster_t c, long a, long b);
/* The torus's part of the cluster report (a new reference; rankmapctl report's "torus" object), NULL
 * without a torus. */
json_t *topo_torus_report(topo_cluster_t c);
/* Appends the load-time anomalies of the hardware data to the array an (borrowed): hosts whose files
 * could not be read or applied (bad_host_file, bad_reference, diff_hunk) and, once per cluster, the
 * hosts whose data was gathered in a restricted cpuset (restricted_cpuset). */
void topo_anomalies_report(topo_cluster_t c, json_t *an);

/* Distinct node hardware: hosts with the same hwloc tree (info elements aside) share one node type. */
typedef struct topo_type_info {
	hwloc_topology_t topo; /* borrowed, shared by the type's hosts */
	unsigned npus, ncores, npackages;
	size_t nhosts; /* hosts of the cluster with this type */
} topo_type_info_t;

/* Number of node types. */
size_t topo_cluster_ntypes(topo_cluster_t c);
/* Fills *info for type i; 0, or -1 (EINVAL) when i is out of range. */
int topo_cluster_type_info(topo_cluster_t c, size_t i, topo_type_info_t *info);
/* Type index of host h, -1 when the host has no hardware data. */
long topo_host_type(topo_cluster_t c, size_t h);

/* ---- the fabric (net_ib*.c) --------------------------------------------------------------------- */

/* Hosts the fabric knows, their names (node-name map, first word of the HCA description, or the GUID
 * "0x..." for generic HCAs), leaf switch (dense index of the switch its port on its lowest rail reaches, -1), and links
 * between two hosts' HCAs (0 for the same host, -1 if unconnected). */
size_t topo_fabric_nhosts(const topo_fabric_t *f);
const char *topo_fabric_host_name(const topo_fabric_t *f, size_t i);
long topo_fabric_host_leaf(const topo_fabric_t *f, size_t i);
int topo_fabric_hops(const topo_fabric_t *f, size_t a, size_t b);
/* Connected HCA ports of host h, and the dense switch at the other end of its i-th port (-1 when the
 * peer is not a switch): a host with HCAs on several leaves (rails, subnets) hangs under each. */
size_t topo_fabric_host_nports(const topo_fabric_t *f, size_t h);
long topo_fabric_host_port_switch(const topo_fabric_t *f, size_t h, size_t i);
/* 1 when host h is named only by an HCA GUID ("0x...": a generic HCA description and no node-name
 * map entry), else 0. */
int topo_fabric_host_guid_named(const topo_fabric_t *f, size_t h);
/* Width (lanes, 0 unknown) and speed rank (0 unknown) of the cable on host h's i-th connected port;
 * -1 (EINVAL) when out of range. */
int topo_fabric_host_port_rate(const topo_fabric_t *f, size_t h, size_t i, unsigned *width, unsigned *speed);
/* Index of the cable on host h's i-th connected port (for topo_fabric_link); -1 (EINVAL) when out of range. */
long topo_fabric_host_port_link(const topo_fabric_t *f, size_t h, size_t i);

/* ---- rails (net_ib_rails.c) ---------------------------------------------------------------------
 * Every connected HCA port of a host is on a rail, 0 .. topo_fabric_nrails()-1, found from the fabric at
 * finalize. A port's label is the last word of its HCA's description split into a stem and the number
 * that ends it ("a08-dgx-04-c01 mlx5_4": "mlx5_" 4; "node7 HCA-5": "HCA-" 5), or, when the description is
 * one word, the port's rank in its host (by subnet, node GUID, port). Every leaf switch takes the label
 * most of its ports have; a stem's labels taken by leaves, in numeric order, are its rails 0, 1, ...
 * (mlx5_0/1/4/5 and HCA-1/2/5/6 both give rails 0-3, and a host without mlx5_4 still has mlx5_5 on
 * rail 3); a port is on its leaf's rail: the leaf group its cable reaches, whatever the port's own
 * label. Each subnet's rails are distinct (rails are numbered by that rank, then subnet). A port with
 * no switch (back to back) takes its own label's rank. An override (topo_fabric_set_rail: the cluster
 * file's "rail = GUID N", or a site fabric file's "rail N") wins. A fabric whose hosts have one HCA
 * each, all alike, has one rail, 0. */
#define TOPO_MAX_RAILS 64
/* Number of rails (0 without hosts). */
size_t topo_fabric_nrails(const topo_fabric_t *f);
/* Rail of host h's i-th connected port (i as topo_fabric_host_nports), -1 (EINVAL) out of range. */
long topo_fabric_host_port_rail(const topo_fabric_t *f, size_t h, size_t i);
/* Index i of host h's first connected port on rail r, -1 (ENOENT) when it has none there. */
long topo_fabric_host_rail_port(const topo_fabric_t *f, size_t h, unsigned r);
/* Node GUID and port GUID (0 when unknown) of the HCA of host h's i-th connected port; 0 out of range. */
uint64_t topo_fabric_host_port_guid(const topo_fabric_t *f, size_t h, size_t i);
uint64_t topo_fabric_host_port_port_guid(const topo_fabric_t *f, size_t h, size_t i);
/* Rail of the HCA whose node or port GUID is guid, -1 (ENOENT) when no host HCA has it. */
long topo_fabric_guid_rail(const topo_fabric_t *f, uint64_t guid);
/* Links between host a's HCA port on rail r and host b's on rail r (2 under one leaf, 0 for a == b),
 * -1 when either has no port on r or they are not connected over it. */
int topo_fabric_rail_hops(const topo_fabric_t *f, size_t a, size_t b, unsigned r);
/* The rail host-to-host costs use when no slot picks one (the documented default, topo/cost.c): the
 * smallest rail on which both hosts have a port and are connected; -1 when there is none (then the
 * hosts' closest HCA pair is used, as for fabrics of several subnets). */
long topo_fabric_default_rail(const topo_fabric_t *f, size_t a, size_t b);
/* Multi-node NVLink domains (e.g. a GB200 NVL72 rack: the hosts whose GPUs share one NVLink fabric), as the
 * cluster file's nvlink_domain lines give them, in their order: the count, and domain d's name and hosts
 * (*hosts[0 .. *n), as written; not necessarily fabric hosts). */
size_t topo_fabric_nvlink_domains(const topo_fabric_t *f);
const char *topo_fabric_nvlink_domain(const topo_fabric_t *f, size_t d, const char *const **hosts, size_t *n);
/* Leaf (dense switch) of host h's port on rail r, -1 when none. topo_fabric_host_leaf is the leaf of
 * the host's port on its lowest rail. */
long topo_fabric_host_rail_leaf(const topo_fabric_t *f, size_t h, unsigned r);

/* ---- dragonfly groups (net_ib_groups.c) ----------------------------------------------------------
 * Groups of switches densely linked inside and sparsely between (Kim et al. 2008's dragonfly,
 * InfiniBand Dragonfly+, Slingshot). Found at finalize when the fabric is not a tree: a switch-to-switch
 * link is local when its ends are on different levels (leaf to spine inside a Dragonfly+ group) or when
 * both are leaves and share a neighbour switch (a triangle: the all-to-all routers of a dragonfly group);
 * a link between two non-leaf switches of one level, or between two leaves with no common neighbour,
 * is global. Groups are the connected components of the local links; they are kept when there are at
 * least two, each has at least two switches, and global links are fewer than local ones; else the
 * fabric has no groups (fat trees, tori: 0). A site fabric file (net_ib_site.c) names the groups
 * itself ("switch NAME group G"); its groups are taken as written.
 * Groups are numbered 0 .. ngroups-1 in the order of their smallest dense switch. */
size_t topo_fabric_ngroups(const topo_fabric_t *f);
/* Group of dense switch s, -1 when the fabric has no groups (or s is out of range / in none). */
long topo_fabric_switch_group(const topo_fabric_t *f, long s);
/* Group of host h (the group of topo_fabric_host_leaf), -1 when none. */
long topo_fabric_host_group(const topo_fabric_t *f, size_t h);
/* Switches and hosts (by topo_fabric_host_group) of group g; 0 out of range. */
size_t topo_fabric_group_nswitches(const topo_fabric_t *f, size_t g);
size_t topo_fabric_group_nhosts(const topo_fabric_t *f, size_t g);
/* "fabric" (found from the links), "site file" (named by a site fabric file), NULL without groups. */
const char *topo_fabric_groups_source(const topo_fabric_t *f);
/* Global links between two groups: cables (parallel cables counted), the sum of their rates in Gb/s
 * (width x lane rate, topo_view's link rates; 0 when unknown) and the slowest one's rate. */
typedef struct topo_group_links {
	size_t g1, g2; /* g1 < g2 */
	unsigned count;
	double gbps, min_gbps;
} topo_group_links_t;
/* Group pairs with at least one global link (sorted by g1, g2; O(global links) memory). */
size_t topo_fabric_ngroup_pairs(const topo_fabric_t *f);
/* Pair i of that list; 0, or -1 (EINVAL) out of range. */
int topo_fabric_group_pair(const topo_fabric_t *f, size_t i, topo_group_links_t *out);
/* Global links between groups g1 and g2 (either order; count 0 when none); 0, or -1 (EINVAL) when a
 * group is out of range. O(log pairs). */
int topo_fabric_group_links(const topo_fabric_t *f, size_t g1, size_t g2, topo_group_links_t *out);
/* Total global links (cables) of the fabric. */
size_t topo_fabric_nglobal_links(const topo_fabric_t *f);

/* Dense switch count, name (node-name map entry, else description), level (0 leaf, 1 spine, ...; -1
 * when no host is reachable), GUID and subnet (0 / -1 when out of range). */
size_t topo_fabric_nswitches(const topo_fabric_t *f);
const char *topo_fabric_switch_name(const topo_fabric_t *f, long s);
int topo_fabric_switch_level(const topo_fabric_t *f, long s);
uint64_t topo_fabric_switch_guid(const topo_fabric_t *f, long s);
/* Switch s's node-name map entry (NULL when the map has none), and its node description ("" when it
 * has none; NULL out of range). */
const char *topo_fabric_switch_mapped_name(const topo_fabric_t *f, long s);
const char *topo_fabric_switch_desc(const topo_fabric_t *f, long s);
long topo_fabric_switch_subnet(const topo_fabric_t *f, long s);
/* Switches linked to switch s (parallel links merged), sorted; *nbrs borrowed. Returns the count. */
size_t topo_fabric_switch_neighbors(const topo_fabric_t *f, long s, const uint32_t **nbrs);
/* Ports of switch s cabled to hosts' HCAs (not to switches or SHARP aggregation nodes), and its
 * unconnected ports (declared ports without a link, or those a ports report listed). */
unsigned topo_fabric_switch_host_ports(const topo_fabric_t *f, long s);
unsigned topo_fabric_switch_unconnected(const topo_fabric_t *f, long s);

/* Subnets loaded, and the source each came from (file path, "libibnetdisc", ...; NULL out of range). */
size_t topo_fabric_nsubnets(const topo_fabric_t *f);
const char *topo_fabric_subnet_source(const topo_fabric_t *f, size_t subnet);

/* Link speeds are ranked 1 .. TOPO_IB_NSPEEDS-1 by lane rate (SDR, DDR, QDR, FDR10, FDR, EDR, HDR,
 * NDR, XDR); 0 is unknown. */
#define TOPO_IB_NSPEEDS 10
/* Name of a speed rank ("QDR", ...; speed names[0] for 0, "unknown" out of range). */
const char *topo_fabric_speed_name(unsigned speed);

/* What is wrong with a cable (topo_link_info_t.verdict), as iblinkinfo's "Could be": it runs below what
 * both its ends support (known from libibnetdisc, live or its cache: LinkSpeedSupported,
 * LinkSpeedExtSupported, LinkWidthSupported), or, when what they support is unknown (ibnetdiscover's
 * text formats give the active rate only), below the most common speed / width of its subnet: a milder
 * verdict, since a DDR card runs at DDR in a QDR fabric by design. A link whose ends are known to
 * support no more than it runs at has no verdict, whatever the norm. */
enum {
	TOPO_LINK_COULD_BE_FASTER = 1,
	TOPO_LINK_COULD_BE_WIDER = 2,
	TOPO_LINK_SLOWER_THAN_NORM = 4,
	TOPO_LINK_NARROWER_THAN_NORM = 8
};

/* One cable: the dense switch at each end (-1 when that end is not a switch), its subnet, width in
 * lanes (0 unknown) and speed rank, the widest width and fastest speed both ends support (0 unknown),
 * the subnet's norm (most common speed and width) and the verdict (TOPO_LINK_* flags, 0 when fine). */
typedef struct topo_link_info {
	long sw[2];
	size_t subnet;
	unsigned width, speed;
	unsigned max_width, max_speed;
	unsigned norm_width, norm_speed;
	unsigned verdict;
} topo_link_info_t;

/* Number of links, and link i; 0, or -1 (EINVAL) when i is out of range. */
size_t topo_fabric_nlinks(const topo_fabric_t *f);
int topo_fabric_link(const topo_fabric_t *f, size_t i, topo_link_info_t *info);

/* Host pairs per hop count (links between two hosts' HCAs: 2 under one leaf switch), over weight[h]
 * copies of each fabric host h (NULL: each host once; copies of one host are 0 apart). Exact in a tree
 * (O(hosts + leaves x levels)) and, outside one, up to 4096 leaf switches (one BFS per leaf); hosts with
 * several HCAs are counted one by one up to 4096 of them, else under their leaf (lowest rail; "approximate");
 * beyond 4096 leaves outside a tree, 200,000 random pairs ("sampled"). */
#define TOPO_HOPS_MAX 256
#define TOPO_HOPS_UNCONNECTED (TOPO_HOPS_MAX + 1)
enum { TOPO_HOP_HIST_EXACT, TOPO_HOP_HIST_APPROXIMATE, TOPO_HOP_HIST_SAMPLED };
typedef struct topo_hop_hist {
	uint64_t pairs[TOPO_HOPS_UNCONNECTED + 1]; /* [d]: pairs d links apart; [TOPO_HOPS_UNCONNECTED] */
	int kind;                                  /* TOPO_HOP_HIST_* */
	int tree, levels;                          /* the fabric is a tree (hops from its groups) */
	size_t nleaves, sampled_pairs;
} topo_hop_hist_t;
/* 0, or -1 (ENOMEM; EINVAL when the fabric is not finalized). */
int topo_fabric_hop_histogram(const topo_fabric_t *f, const uint32_t *weight, topo_hop_hist_t *h);
/* How the histogram was made, for the report's "hop_histogram_method" ("exact: ...", "approximate:
 * ...", "sampled: ..."). */
void topo_hop_hist_method(const topo_hop_hist_t *h, char *buf, size_t len);

/* The fabric's part of the cluster report (new reference): switches per level, HCA ports, subnets,
 * link speeds, anomalies. NULL on allocation failure. */
json_t *topo_fabric_report(const topo_fabric_t *f);
/* The same with the switches named names[dense switch index] (the names of Slurm's topology.conf and of
 * the picture: topo_slurm.h's topo_swtree_t name), their descriptions in "description"; names NULL:
 * as topo_fabric_report (node-name map, else description). */
json_t *topo_fabric_report_named(const topo_fabric_t *f, const char *const *names);

#endif
