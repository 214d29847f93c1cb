/*
 * topo/net_ib_private.h: the InfiniBand fabric model (struct topo_fabric) and the internals shared by
 * topo/net_ib*.c. The rest of topo/ talks to the fabric only through topo_private.h's "fabric" section,
 * plus the read-only helpers declared at the end of this file.
 *
 * Model. A fabric is a set of subnets (one per loaded file, live discovery or cache). Each subnet holds
 * nodes (switches, channel adapters, routers) keyed by GUID and links between (node, port) pairs with
 * a width (lanes) and a speed. topo_fabric_finalize() derives:
 *   - hosts: every CA that is not a SHARP aggregation node ("... Aggregation Node"), named by the
 *     node-name map (node or port GUID), else by the first word of its description, else by its GUID
 *     "0x%016llx" when the description is generic: empty, "MT<digits> ..." (e.g. "MT4129 ConnectX7
 *     Mellanox Technologies"), or starting with a vendor/product word (Mellanox, NVIDIA, ConnectX,
 *     Connect-IB, InfiniHost, Intel, QLogic, Unknown) or "localhost" (several machines share it).
 *     Generic HCAs are report anomalies. CAs with the same name are one host, across subnets too;
 *   - a ports report names nodes by port GUID (that is all it shows): a switch's ports share one, so
 *     a switch is one node, but an HCA port is its own CA node (joined into a host by name);
 *   - a subnet is refused when one of its switch GUIDs is already loaded (the same subnet twice);
 *   - dense switch indices 0 .. nsw-1 in load order, and the switch-to-switch adjacency (CSR);
 *   - switch levels: leaves (level 0) are switches with a host attached; upper levels by a multi-source
 *     BFS from the leaves (spines 1, cores 2, ...); switches no leaf reaches get level -1;
 *   - unconnected switch ports: declared ports without a link (topology file, libibnetdisc), or the
 *     ports a ports report lists without a peer;
 *   - the rail of every HCA port (net_ib_rails.c) and the leaf switch of every host (its port on its
 *     lowest rail), and host-to-host hop counts on one rail (net_ib_hops.c): 2 + the switch hops
 *     between the two hosts' leaves on the lowest rail both reach each other on (the closest pair of
 *     HCA ports sharing a subnet when they have no common rail);
 *   - dragonfly groups and the global links per group pair (net_ib_groups.c, topo_view.h).
 *     In a tree (no leaf-to-leaf links, and each group of level k >= 1 has a switch of level k whose
 *     descending paths reach all its leaves: make_tree) leaf-to-leaf hops are 2k, k the first level
 *     whose group holds both leaves, with no table and no BFS. Otherwise leaf-to-leaf hops are a uint8 table when there are at most IB_LEAF_TABLE_MAX leaves (16 MiB at
 *     most), filled at finalize when that takes at most IB_EAGER_WORK_MAX BFS steps, else row by row on
 *     first use (one BFS per source leaf, under a mutex); beyond IB_LEAF_TABLE_MAX leaves, BFS rows
 *     over all switches on demand in a small round-robin cache. No host x host matrix anywhere;
 *   - network levels for target hierarchies: the group of a leaf at level k >= 1 is the connected
 *     component of the leaf among switches of level <= k (a pod at k = 1 in a 3-level fat tree, the
 *     whole subnet at the top level; in a 2-level fat tree k = 1 holds every leaf). A group is named by
 *     its representative: the smallest dense switch index in it. k = 0 is the leaf itself.
 */
#ifndef RANKMAP_NET_IB_PRIVATE_H
#define RANKMAP_NET_IB_PRIVATE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rm_file.h"
#include "topo_private.h"

#define IB_NONE UINT32_MAX
#define IB_MAX_PORTS 254       /* IB switches have at most 254 external ports */
#define IB_LEAF_TABLE_MAX 4096 /* leaves for the precomputed uint8 leaf-to-leaf table (16 MiB) */
#define IB_EAGER_WORK_MAX 4e8  /* BFS steps (leaves x (switches + adjacency)) to fill it at finalize */
#define IB_ROW_CACHE 64        /* BFS rows kept when there is no leaf table */
#define IB_HOPS_INF 0xff

enum ib_node_type { IBN_CA = 1, IBN_SW = 2, IBN_RT = 3 };

/* Link speeds, in increasing order of lane rate. */
enum ib_speed {
	IB_SPEED_UNKNOWN = 0,
	IB_SPEED_SDR,
	IB_SPEED_DDR,
	IB_SPEED_QDR,
	IB_SPEED_FDR10,
	IB_SPEED_FDR,
	IB_SPEED_EDR,
	IB_SPEED_HDR,
	IB_SPEED_NDR,
	IB_SPEED_XDR,
	IB_SPEED_COUNT
};

struct ib_node {
	uint64_t guid;      /* node GUID (the port GUID for a CA known only from a ports report) */
	uint64_t port_guid; /* a port GUID of a CA (0 if unknown), for node-name map look-ups */
	char *desc;         /* node description (owned), "" if none */
	uint32_t subnet;
	uint32_t lid;        /* switch port 0 or first CA port LID, 0 if unknown */
	uint32_t *port_link; /* [0 .. nports]: link index per port, IB_NONE when unconnected (owned) */
	uint16_t nports;     /* declared or highest seen port number */
	uint8_t type;        /* enum ib_node_type */
	uint8_t declared;    /* port count declared by the source (topology file, libibnetdisc) */
	uint8_t aggregation; /* CA that is a SHARP aggregation node: not a host */
	uint8_t generic;     /* CA whose description names no host and nothing else names (finalize) */
	uint8_t hwloc_named; /* generic CA named through a host's hwloc XML GUIDs (finalize) */
	uint16_t down_ports; /* ports a ports report lists as unconnected */
	long host;           /* host index (finalize), -1 */
	long sw;             /* dense switch index (finalize), -1 */
	uint32_t site_group; /* switch: dragonfly group named by a site fabric file, IB_NONE */
	uint8_t site_rail;   /* CA: rail named by a site fabric file, IB_RAIL_NONE */
};
#define IB_RAIL_NONE 0xff

struct ib_link {
	uint32_t node[2];
	uint16_t port[2];
	uint8_t width; /* lanes: 1, 2, 4, 8, 12; 0 unknown */
	uint8_t speed; /* enum ib_speed */
	/* The fastest speed and widest width both ends support (LinkSpeedSupported, LinkSpeedExtSupported,
	 * LinkWidthSupported of each port: libibnetdisc, live or its cache file), 0 when unknown: every
	 * text format of ibnetdiscover (topology file, -p ports report, --full) gives the active rate only.
	 * As iblinkinfo's "Could be": a link is slow or narrow only against these (ib_link_verdict). */
	uint8_t max_width, max_speed;
};

/* uint64 -> uint32 open-addressing map; key 0 is never stored (GUID 0 is invalid). */
struct ib_u64map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

/* string -> uint32 open-addressing map; keys are borrowed. */
struct ib_strmap {
	const char **keys;
	uint32_t *vals;
	size_t cap, n;
};

/* One attachment of a host: an HCA port and the switch (or CA) at the other end. */
struct ib_attach {
	uint32_t ca; /* node index of the HCA */
	uint32_t subnet;
	long sw;          /* dense switch index of the peer, -1 if the peer is not a switch */
	uint32_t peer_ca; /* node index of a directly connected CA (back-to-back), IB_NONE */
	uint16_t port;    /* HCA port number */
	uint8_t rail;     /* rail (net_ib_rails.c) */
};

struct ib_host {
	char *name;        /* owned */
	uint32_t first, n; /* attachments att[first .. first+n-1] */
	long leaf;         /* dense switch index of the attachment on the host's lowest rail (first switch
			    * attachment before rails are known), -1 */
};

/* Global links between two dragonfly groups (net_ib_groups.c). */
struct ib_gpair {
	uint32_t g1, g2; /* g1 < g2 */
	uint32_t count;
	double gbps, min_gbps;
};

/* Nodes and links of one source, built by a parser and merged into the fabric on success only. */
struct ib_build {
	const char *source; /* file path or "libibnetdisc" for errors */
	struct ib_node *nodes;
	size_t nnodes, nodes_cap;
	struct ib_link *links;
	size_t nlinks, links_cap;
	struct ib_u64map by_guid;
	rm_error_t *err;
};

struct topo_fabric {
	struct ib_node *nodes;
	size_t nnodes, nodes_cap;
	struct ib_link *links;
	size_t nlinks, links_cap;
	uint32_t nsubnets;
	char **subnet_source;              /* nsubnets, owned */
	struct ib_u64map subnet_of_switch; /* switch GUID -> subnet, to refuse one subnet loaded twice */
	/* node-name map */
	struct ib_u64map name_by_guid; /* GUID -> index in map_names */
	char **map_names;
	size_t nmap_names, map_names_cap;
	/* HCA GUIDs from hosts' hwloc XML (topo_fabric_set_hwloc_names) */
	struct ib_u64map hw_by_guid; /* GUID -> index in hw_names, IB_HW_AMBIGUOUS when two hosts claim it */
	const char **hw_names;       /* borrowed names */
	uint64_t *hw_node_of;        /* parallel to hw_names: node GUID of a port GUID, 0 if none (owned) */
	size_t map_unmatched;        /* node-name map entries no node, port or hwloc-paired GUID matched */
	uint8_t has_ports_subnet;    /* a subnet came from a -p ports report (port GUIDs only) */
	unsigned long hw_gen;
	struct ib_u64map rail_override; /* HCA node or port GUID -> rail (topo_fabric_set_rail) */
	/* NVLink domains (topo_fabric_add_nvlink_domain): domain d is nvl_name[d], its hosts
	 * nvl_host[nvl_off[d] .. nvl_off[d + 1]) (all owned) */
	char **nvl_name, **nvl_host;
	size_t *nvl_off;
	size_t nnvl, nnvl_host;
	/* finalize results */
	int finalized;
	struct ib_host *hosts;
	size_t nhosts;
	struct ib_strmap host_by_name;
	struct ib_attach *att;
	size_t natt;
	uint32_t *sw_node; /* nsw: node index of dense switch s */
	size_t nsw;
	uint32_t *adj_off, *adj; /* CSR switch adjacency (nsw + 1 offsets), parallel links merged */
	int *sw_level;           /* nsw */
	int max_level;           /* -1 without switches */
	long *leaf_of_sw;        /* nsw: leaf index or -1 */
	uint32_t *leaf_sw;       /* nleaves: dense switch index */
	size_t nleaves;
	uint8_t *leaf_hops; /* nleaves^2 or NULL (then BFS rows on demand) */
	uint8_t *row_ready; /* nleaves flags when leaf_hops rows are filled lazily, else NULL */
	uint32_t *group;    /* (max_level + 1) * nsw: representative switch per level */
	int nlevels;
	uint8_t *norm_speed, *norm_width; /* nsubnets: most common known speed and width of its links */
	size_t nrails;                    /* rails of the hosts' ports (net_ib_rails.c) */
	uint32_t *dfgroup;                /* nsw: dragonfly group per switch, IB_NONE; NULL without groups */
	size_t ngroups;
	uint32_t *group_nsw, *group_nhosts; /* ngroups */
	struct ib_gpair *gpairs;            /* group pairs with global links, sorted */
	size_t ngpairs, nglobal;
	int groups_site;       /* groups named by a site fabric file */
	int tree;              /* hops between leaves follow from the groups (make_tree, net_ib_graph.c) */
	int no_tree;           /* tests: never take the fabric for a tree (topo_fabric_set_tree) */
	size_t leaf_table_max; /* IB_LEAF_TABLE_MAX unless changed (topo_fabric_set_hop_limits) */
	double eager_work_max; /* IB_EAGER_WORK_MAX unless changed */
	/* BFS row cache for large fabrics (mutable through const queries) */
	pthread_mutex_t cache_lock;
	uint8_t *row_cache;  /* IB_ROW_CACHE rows of nsw */
	uint32_t *bfs_queue; /* nsw, scratch of BFS under cache_lock */
	uint8_t *bfs_dist;   /* nsw, scratch of BFS under cache_lock */
	long row_src[IB_ROW_CACHE];
	unsigned row_next;
};

/* ---- net_ib_util.c ---- */
int ib_u64map_put(struct ib_u64map *m, uint64_t key, uint32_t val);
/* Value of key, IB_NONE when absent. */
uint32_t ib_u64map_get(const struct ib_u64map *m, uint64_t key);
void ib_u64map_free(struct ib_u64map *m);
int ib_strmap_put(struct ib_strmap *m, const char *key, uint32_t val);
uint32_t ib_strmap_get(const struct ib_strmap *m, const char *key);
void ib_strmap_free(struct ib_strmap *m);
/* Lines of a file read into memory; ib_next_line() cuts the buffer in place and returns the next
 * line without its end of line (NULL at the end), counting lines in ->lineno. */
struct ib_lines {
	char *p, *end;
	int lineno;
};
char *ib_next_line(struct ib_lines *ln);
/* Reads a whole file into a NUL-terminated malloc'd buffer through rm_file (a regular file within the
 * cap of its kind: RM_FILE_IB or RM_FILE_NAMEMAP); NULL with err set (naming path). */
char *ib_read_file(const char *path, rm_file_kind_t kind, size_t *len, rm_error_t *err);
/* Parses a GUID (0x... or bare hex, up to 16 digits) at *p, advancing *p; 0 and -1 on error. */
int ib_parse_guid(const char **p, uint64_t *guid);
/* Parses "4xNDR", "4x NDR", "4X", "NDR"...; returns 0 on success, -1 if not a width/speed. */
int ib_parse_width(const char *s, uint8_t *width);
int ib_parse_speed(const char *s, uint8_t *speed);
const char *ib_speed_name(uint8_t speed);
_Static_assert(IB_SPEED_COUNT == TOPO_IB_NSPEEDS, "topo_view.h's speed ranks are enum ib_speed");
/* The node at the other end of port p of node n (nodes and links of a build or a fabric), and its port
 * there in *peer_port (may be NULL); IB_NONE when the port is not connected. */
uint32_t ib_port_peer(const struct ib_node *nodes, const struct ib_link *links, uint32_t n, unsigned p,
		      unsigned *peer_port);
/* The most common known speed and width of each subnet's links into f->norm_speed / norm_width (finalize);
 * 0 or -1 (ENOMEM). */
int ib_link_norms(struct topo_fabric *f);
/* What is wrong with link l (TOPO_LINK_* of topo_view.h): could be faster or wider (below what both ends
 * support, when that is known), or below its subnet's norm (the most common speed / width, f->norm_*)
 * when what the ends support is unknown. 0 when nothing. */
unsigned ib_link_verdict(const struct topo_fabric *f, const struct ib_link *l);
/* Link rate in Gb/s per lane x lanes (0 when unknown). */
double ib_link_gbps(const struct ib_link *l);
/* Unconnected ports of switch nd: declared ports without a link, or those a ports report listed. */
unsigned ib_unconnected_ports(const struct ib_node *nd);
char *ib_strndup(const char *s, size_t n);
/* Lines every format skips (s starts at the first non-blank): empty, # comments, -s "DR path" lines
 * and "ibwarn: " messages of captures that mixed in stderr. */
int ib_line_is_noise(const char *s);
const char *ib_skip_ws(const char *p);

/* ---- build (net_ib_build.c) ---- */
/* Frees n nodes' descriptions and port tables, then the array (a build's, a fabric's). */
void ib_nodes_free(struct ib_node *nodes, size_t n);
/* Adds a node to the build (desc copied); returns its index or IB_NONE with err set. */
uint32_t ib_build_add_node(struct ib_build *b, int line, uint8_t type, uint64_t guid, const char *desc, size_t desclen,
			   unsigned nports);
/* Connects (a, pa) to (b, pb); checks port ranges and conflicting duplicate links. A link already
 * recorded from the other side is accepted once. Returns 0 or -1 with err set (naming line). */
int ib_build_link(struct ib_build *b, int line, uint32_t a, unsigned pa, uint32_t bn, unsigned pb, uint8_t width,
		  uint8_t speed);
/* Grows the port table of node n to hold port p (when the source does not declare port counts). */
int ib_build_grow_ports(struct ib_build *b, int line, uint32_t n, unsigned p);
void ib_build_free(struct ib_build *b);
/* True for a CA description that is a SHARP aggregation node. */
int ib_desc_is_aggregation(const char *desc);
/* Merges a finished build into f as a new subnet, or fails leaving f unchanged (an empty build is an
 * error naming source). Frees the build either way (net_ib.c). */
int ib_fabric_add_build(struct topo_fabric *f, struct ib_build *b, const char *source);

/* ---- parsers: net_ib_topofile.c, net_ib_ports.c, net_ib_live.c, net_ib_namemap.c ---- */
struct ib_format {
	const char *name;
	/* Scores how likely the first lines look like this format (0: not at all). */
	int (*detect)(const char *line);
	int (*parse)(struct ib_build *b, struct ib_lines *ln);
};
extern const struct ib_format ib_format_topofile;
extern const struct ib_format ib_format_ports;
/* Fills b from a libibnetdisc fabric (ibnd_fabric_t *), 0 or -1 with b->err set. */
int ib_build_from_ibnd(struct ib_build *b, void *ibnd_fabric);
/* Parses a node-name map into f (all or nothing). */
int ib_namemap_load(struct topo_fabric *f, const char *path, rm_error_t *err);
/* Name of a GUID in the node-name map, NULL if none. */
const char *ib_namemap_lookup(const struct topo_fabric *f, uint64_t guid);
#define IB_HW_AMBIGUOUS (IB_NONE - 1)
/* Host whose hwloc XML holds this GUID, NULL if none or several (topo_fabric_set_hwloc_names). */
const char *ib_hwloc_lookup(const struct topo_fabric *f, uint64_t guid);
/* Node GUID hwloc XML pairs with port GUID guid (its host's only HCA), 0 when unknown. */
uint64_t ib_hwloc_node_of(const struct topo_fabric *f, uint64_t guid);
/* Counts the node-name map entries that name no node of f (f->map_unmatched); -1 on ENOMEM. */
int ib_namemap_count_unmatched(struct topo_fabric *f);
void ib_hwloc_names_free(struct topo_fabric *f);

/* ---- net_ib_graph.c ---- */
/* Frees the finalize results (idempotent). */
void ib_graph_reset(struct topo_fabric *f);
int ib_graph_build(struct topo_fabric *f, rm_error_t *err);
/* BFS from dense switch src: dist[nsw] (IB_HOPS_INF unreachable); queue is nsw scratch. */
void ib_bfs(const struct topo_fabric *f, uint32_t *queue, uint8_t *dist, long src);
/* Fills row i of the leaf table (under cache_lock, or during finalize). */
void ib_fill_leaf_row(struct topo_fabric *f, size_t i);
/* Hops between dense switches s and t, IB_HOPS_INF when unreachable (net_ib_hops.c). */
unsigned ib_switch_hops(const struct topo_fabric *f, long s, long t);
/* Hops between leaf switches s and t of a tree (f->tree): 2k, k the first level whose group holds both;
 * IB_HOPS_INF when none does. O(levels). */
unsigned ib_tree_leaf_hops(const struct topo_fabric *f, long s, long t);
/* True when a CA description names no host (vendor strings, empty). */
int ib_desc_is_generic(const char *desc);

/* ---- net_ib_rails.c, net_ib_groups.c ---- */
/* Rails of every attachment (f->att[].rail, f->nrails) and each host's leaf on its lowest rail; 0 or
 * -1 (ENOMEM). After the attachments, before the levels. */
int ib_make_rails(struct topo_fabric *f);
/* Dragonfly groups (topo_view.h); after levels and make_tree. 0 or -1 (ENOMEM). */
int ib_make_groups(struct topo_fabric *f);
void ib_groups_reset(struct topo_fabric *f);
/* Global-link pair of groups g1 != g2, NULL when they have none. */
const struct ib_gpair *ib_gpair_find(const struct topo_fabric *f, uint32_t g1, uint32_t g2);
/* Hops between two attachments (2 under one switch, 1 back to back), IB_HOPS_INF when not connected. */
unsigned ib_att_hops(const struct topo_fabric *f, const struct ib_attach *x, const struct ib_attach *y);
/* Site fabric files (net_ib_site.c). */
extern const struct ib_format ib_format_site;

/* ---- read-only queries: topo_view.h; for tests also ---- */
/* Hop-count strategy limits (defaults IB_LEAF_TABLE_MAX, IB_EAGER_WORK_MAX): the largest leaf count
 * with a leaf-to-leaf table, and the most BFS work to fill it at finalize rather than lazily. Takes
 * effect at the next finalize (tests use it to force each strategy). */
void topo_fabric_set_hop_limits(struct topo_fabric *f, size_t table_max, double eager_work_max);
/* Tests: on = 0 makes finalize treat the fabric as no tree (leaf table or BFS rows, as for any graph),
 * to compare the two; 1 (the default) checks. Drops the finalize results like the call above. */
void topo_fabric_set_tree(struct topo_fabric *f, int on);

#endif
