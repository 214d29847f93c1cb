/*
 * order/order.h: node orderings of a 3D torus for allocation from a free list (Albing et al., BBB),
 * their export to Slurm, and an allocation simulator that ranks them.
 *
 * A torus is described by a topo_torus_spec_t (topo/topo.h). Nodes are numbered router-major:
 * node = ((x * Y + y) * Z + z) * nodes_per_router + n. An ordering is a permutation of all nodes;
 * the nodes of one router are always consecutive. Methods are chosen by name from a table:
 * "xyz", "mdf", "gray[:AxBxC]", "hilbert", "bbb[:AxBxC]".
 *
 * Error rule: 0 on success, -1 with errno set on failure; pointer-returning functions return NULL.
 * Functions taking an rm_error_t fill it (may be NULL); the first error wins. No exit(), no printing
 * (the export functions write to the FILE the caller gives). Memory and time O(nodes).
 */
#ifndef RANKMAP_ORDER_H
#define RANKMAP_ORDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "rm_error.h"
#include "topo.h"

/* ---- options and result ---------------------------------------------------------------------- */

typedef struct order_opts {
	int block[3]; /* block extents in x, y, z for gray/bbb; 0 = default (gray 2x2x2, bbb from costs) */
	int axes[3];  /* block/traversal axis order, fastest first (0 = x, 1 = y, 2 = z); axes[0] = -1:
			* default (bbb and gray: by link cost, fastest link first; mdf: shortest dimension first) */
} order_opts_t;

typedef struct order {
	topo_torus_spec_t spec;
	char method[32]; /* method name, e.g. "bbb" */
	size_t nnodes;
	uint32_t *node;  /* nnodes: node index at each position of the order */
	uint32_t *block; /* nnodes: block id of each position (consecutive chunks for unblocked methods) */
	uint32_t nblocks;
	uint32_t *block_group; /* nblocks * 2: ids of the block's groups one and two levels up */
	int block_ext[3];      /* extents of a full block in x, y, z (0 when the method has no blocks) */
	int axes[3];           /* axis order used, fastest first */
} order_t;

/* Fills opts with defaults (no block given, default axes). */
void order_opts_default(order_opts_t *opts);

/* Parses "XxYxZ[:NODES_PER_ROUTER]" into spec dims and nodes per router (wrap all, costs 1 unless
 * already set: only dims and nodes_per_router are written). Errors name the option "--dims". */
int order_parse_dims(const char *s, topo_torus_spec_t *spec, rm_error_t *err);
/* Parses "CX,CY,CZ" (positive numbers) into spec->link_cost. */
int order_parse_link_cost(const char *s, topo_torus_spec_t *spec, rm_error_t *err);
/* Parses an axis order such as "zyx" (fastest first) into axes[3]. */
int order_parse_axes(const char *s, int axes[3], rm_error_t *err);

/* Builds the ordering named by method ("bbb", "bbb:4x2x8", "gray:3x2x2", ...). opts may be NULL.
 * Returns a new order (free with order_destroy), or NULL with err set (unknown method, block extents
 * that do not fit the torus, ...). */
order_t *order_build(const topo_torus_spec_t *spec, const char *method, const order_opts_t *opts, rm_error_t *err);
/* Frees an order. NULL is fine. */
void order_destroy(order_t *o);

/* Method names in table order, NULL-terminated (static storage). */
const char *const *order_method_names(void);

/* Default BBB block extents (x, y, z) for a torus: slow dimensions short, fast ones long, balanced
 * cost, about 128 nodes per block; an odd dimension gets 3- or 5-wide blocks (the balanced extent
 * rounded down to odd), so it splits without a 1-wide slice. 17x8x24 routers, costs 1,2,0.67, two
 * nodes per router: 3x2x8. */
void order_bbb_default_block(const topo_torus_spec_t *spec, int ext[3]);

/* Router coordinates of a node index. */
static inline void order_node_coords(const topo_torus_spec_t *s, uint32_t node, int c[3])
{
	uint32_t r = node / (uint32_t)s->nodes_per_router;

	c[2] = (int)(r % (uint32_t)s->dims[2]);
	r /= (uint32_t)s->dims[2];
	c[1] = (int)(r % (uint32_t)s->dims[1]);
	c[0] = (int)(r / (uint32_t)s->dims[1]);
}

/* Hops between two router coordinates along dimension d (wrap-around honoured). */
static inline int order_dim_hops(const topo_torus_spec_t *s, int d, int a, int b)
{
	int h = a > b ? a - b : b - a;

	if (s->wrap[d] && s->dims[d] - h < h)
		h = s->dims[d] - h;
	return h;
}

/* ---- torus config (order_torus.c) --------------------------------------------------------------- */

/* A torus as the orderings need it: the spec and, when the config names hosts, names[node]. */
typedef struct order_torus {
	topo_torus_spec_t spec;
	size_t nnodes;
	char **names; /* nnodes entries (NULL where the table names no host), or NULL */
} order_torus_t;

/* Loads a torus config file (format in conf/torus.conf.example) through topo's torus model.
 * Returns 0, or -1 with err naming the file and line. Free with order_torus_free. */
int order_torus_load(const char *path, order_torus_t *t, rm_error_t *err);
void order_torus_free(order_torus_t *t);
/* The CLI's torus: a config file (path), or dims "XxYxZ[:N]" with optional link costs "CX,CY,CZ"
 * (exactly one of path and dims). A link_cost given with a file overrides the file's. mesh != 0
 * turns wrap-around off in every dimension. Returns 0 or -1 with err set. */
int order_torus_setup(const char *path, const char *dims, const char *link_cost, int mesh, order_torus_t *t,
		      rm_error_t *err);

/* ---- export (order_export.c) ------------------------------------------------------------------ */

/* Output formats of `rankmapctl order`. */
typedef enum order_format {
	ORDER_FMT_LIST = 0,    /* "x y z n" per line, or the host name */
	ORDER_FMT_SLURM_NODES, /* one compressed host list in order */
	ORDER_FMT_WEIGHTS,     /* NodeName=... Weight=... lowest first */
	ORDER_FMT_TOPOLOGY,    /* Slurm topology.conf: a leaf switch per block, groups upward */
	ORDER_FMT_SVG          /* picture of the path through z-slices, blocks shaded */
} order_format_t;

/* Parses a format name ("list", "slurm-nodes", "weights", "topology.conf", "svg"); -1 (EINVAL). */
int order_format_parse(const char *name, order_format_t *fmt);

/* Host names of the nodes: names[node] (borrowed strings, NULL entries allowed) or a pattern. */
typedef struct order_names {
	const char *const *names; /* nnodes entries, or NULL */
	const char *pattern;      /* used when names is NULL or an entry is NULL; NULL: "nid{id:5}" */
} order_names_t;

/* Renders the host name of a node by pattern ({x} {y} {z} {n} {id} {router}, ":W" zero-pads) into
 * buf. Returns 0, or -1 (EINVAL) on a malformed pattern. */
int order_pattern_name(const topo_torus_spec_t *spec, const char *pattern, uint32_t node, char *buf, size_t len);
/* Writes the order in the given format to f. names may be NULL (pattern "nid{id:5}"; the list format
 * then prints coordinates). Returns 0, or -1 on a write error or a bad pattern. */
int order_write(const order_t *o, order_format_t fmt, const order_names_t *names, FILE *f, rm_error_t *err);

/* ---- simulator (sim.c, sim_swf.c) ---------------------------------------------------------------- */

typedef struct sim_job {
	double submit;  /* seconds */
	double runtime; /* seconds, > 0 */
	uint32_t nodes; /* >= 1 */
} sim_job_t;

typedef struct sim_jobs {
	sim_job_t *job;
	size_t njobs;
	size_t skipped; /* SWF jobs dropped (larger than the machine, cancelled, no size) */
} sim_jobs_t;

/* Draws a reproducible synthetic job mix for a machine of nnodes nodes: njobs jobs with sizes from
 * the three classes (2-16, 32-128, 256+ nodes), exponential run times, Poisson arrivals that keep the
 * machine about `load` busy (0 < load <= 1). Returns 0 or -1. jobs owned by the caller (sim_jobs_free). */
int sim_jobs_synthetic(sim_jobs_t *jobs, size_t nnodes, size_t njobs, uint64_t seed, double load, rm_error_t *err);
/* Reads a Parallel Workloads Archive SWF trace: 18 fields a line, ';' comment lines. Job size is the
 * allocated processor count (else the requested one) divided by procs_per_node, rounded up; jobs
 * larger than max_nodes or without size or run time are skipped (counted). A malformed line is an
 * error naming the file and line. The file is opened through rm_file (a regular file within
 * RANKMAP_FILE_LIMIT_SWF); jobs take 24 bytes each, less than their line, so memory follows the file. */
int sim_jobs_swf(sim_jobs_t *jobs, const char *path, unsigned procs_per_node, size_t max_nodes, rm_error_t *err);
void sim_jobs_free(sim_jobs_t *jobs);

#define SIM_NCLASSES 4 /* 2-16, 32-128, 256+, all */

/* Per-class results of one simulation. */
typedef struct sim_class_stats {
	size_t jobs;
	double hop;          /* mean pairwise link-cost-weighted hop distance between the job's nodes */
	double thickness;    /* links inside the allocation per router */
	double interference; /* share of rank-to-next-rank route hops through other jobs' routers */
	double pieces;       /* connected pieces of the allocation (1 = one piece) */
} sim_class_stats_t;

typedef struct sim_result {
	sim_class_stats_t cls[SIM_NCLASSES];
	double utilisation; /* busy node-seconds / (nodes * makespan) */
	double mean_wait;   /* seconds */
	double makespan;
} sim_result_t;

/* Class names: "2-16", "32-128", "256+", "all". */
const char *sim_class_name(int c);
/* Class of a job size: 0..2, or -1 when it falls in no class (it still counts in "all"). */
int sim_class_of(uint32_t nodes);

/* Runs the jobs FCFS on the ordering: each job takes the first free nodes in order, skipping busy
 * ones. Returns 0, or -1 (a job larger than the machine, allocation failure). */
int sim_run(const order_t *o, const sim_jobs_t *jobs, sim_result_t *res, rm_error_t *err);

/* Mean pairwise weighted hop distance of a node set, O(k + sum of dims): exported for tests.
 * hist is scratch of dims[0] + dims[1] + dims[2] doubles (zeroed on entry, zeroed on return). */
double sim_mean_hop(const topo_torus_spec_t *spec, const uint32_t *nodes, size_t k, double *hist);

/* ---- the simulator on a switched fabric (sim_hosts.c) -----------------------------------------------
 *
 * The same FCFS simulator on a list of hosts instead of a torus: a job waits until k hosts are free,
 * then a policy picks them. Each host is under a leaf switch and in a domain whose crossing is the
 * costly hop: the dragonfly group (global links) or, on a fat tree, the leaf itself (the spine). Start
 * times do not depend on the policy (a job starts as soon as k hosts are free, whichever they are), so
 * only locality differs. Policies:
 *   SIM_HOSTS_FIRST_FIT  the first free hosts of an order (Slurm's free list: node names without
 *                        weights, rankmap's order with them);
 *   SIM_HOSTS_SPREAD     a model of topology/tree with TopologyParam=Dragonfly: one leaf when a leaf
 *                        has room (best fit), else one host at a time from every leaf with free hosts
 *                        in turn ("spread over as many leaf switches as possible");
 *   SIM_HOSTS_BLOCK      a model of topology/block: blocks are the domains in order; a job takes the
 *                        smallest aligned run of 2^i blocks with room (if none has room, all domains),
 *                        the domain holding the most of its hosts first, each domain's hosts in order.
 *                        A job that must span exactly two domains (one shared global link) is split in
 *                        segments of a divisor of its size that the two hold: of those at least a
 *                        quarter of the job (16: 8+8 or 12+4, not 13+3), the split whose hosts span the
 *                        fewest leaves, then the largest segment (else the largest divisor); the run
 *                        whose split spans the fewest leaves first, then the largest segment, then best
 *                        fit (fewest free hosts); what Slurm 24.05's --segment asks of topology/block,
 *                        sized here by rankmap.
 * Measures per job, for its all-pairs traffic and its rank-to-next-rank (ring) traffic: the fraction
 * that crosses domains, and the fraction that leaves a leaf. */
typedef enum sim_hosts_policy { SIM_HOSTS_FIRST_FIT = 0, SIM_HOSTS_SPREAD, SIM_HOSTS_BLOCK } sim_hosts_policy_t;

typedef struct sim_hosts {
	size_t n;               /* hosts 0 .. n-1 */
	const uint32_t *order;  /* n: the host at each position of the free list */
	const uint32_t *leaf;   /* n: dense leaf id of each host */
	const uint32_t *domain; /* n: dense domain id of each host (group, or leaf on a fat tree) */
	sim_hosts_policy_t policy;
} sim_hosts_t;

#define SIM_HOSTS_NMEASURES 4
/* "domain_pairs", "domain_ring", "leaf_pairs", "leaf_ring" */
extern const char *const sim_hosts_measure_names[SIM_HOSTS_NMEASURES];

typedef struct sim_hosts_result {
	size_t jobs[SIM_NCLASSES];
	double m[SIM_NCLASSES][SIM_HOSTS_NMEASURES]; /* means over the class's jobs of more than one host */
	double mean_wait;
} sim_hosts_result_t;

/* Runs the jobs (each at most n hosts, else an error) FCFS under the policy. Returns 0, or -1 with err
 * set. O(jobs x n) time at worst, O(n) memory. */
int sim_hosts_run(const sim_hosts_t *m, const sim_jobs_t *jobs, sim_hosts_result_t *res, rm_error_t *err);

/* ---- simulation results as JSON (sim_json.c) ------------------------------------------------------ */

/* Built the same way by `rankmapctl simulate` offline and by rankmapd's `simulate` request, so that
 * both print the same thing. Metrics of a job-size class, in the order of the JSON object and of the
 * text table: hop, thickness, interference, pieces. */
#define SIM_NMETRICS 4
extern const char *const sim_metric_names[SIM_NMETRICS];

/* {"torus": {"dims", "link_cost", "nodes_per_router"}, "jobs", "skipped", "methods": {METHOD:
 * {"utilisation", "mean_wait", "classes": {CLASS: {"jobs", "hop", "thickness", "interference",
 * "pieces"}}}}} for nm methods with their results. Returns a new reference, NULL when out of memory. */
json_t *sim_result_json(const char *const *methods, int nm, const sim_result_t *res, const sim_jobs_t *jobs,
			const topo_torus_spec_t *spec);

#endif
