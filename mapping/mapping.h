/*
 * mapping/mapping.h: communication graphs and the engines that map them onto a target's slots.
 *
 * A graph (map_graph_t) is who talks to whom and how much: symmetric, no self loops, duplicate edges
 * merged (weights summed). An engine chooses perm[rank] = slot so that heavy edges join close slots.
 * Every result is a bijection onto distinct slots and never costs more than the identity placement
 * (rank i on slot i). Engines are chosen by name: "treematch", "scotch", "refine", "auto", "identity".
 *
 * Error rule: 0 on success, -1 with errno set on failure; pointer-returning functions return NULL.
 * Parsers and engines fill a caller-owned rm_error_t (may be NULL); the first error wins.
 * Memory: O(edges + slots); nothing dense above 4,096 ranks. No exit(), no printing.
 */
#ifndef RANKMAP_MAPPING_H
#define RANKMAP_MAPPING_H

#include <stddef.h>
#include <stdint.h>

#include "rm_child.h"
#include "rm_error.h"
#include "topo.h"

/* CSR graph. Both directions of every edge are stored; w[] is the weight the engines use. */
typedef struct map_graph {
	uint32_t n;     /* vertices (ranks) */
	uint64_t *xadj; /* n + 1 offsets into adj and w */
	uint32_t *adj;  /* neighbours, sorted per vertex, no self loops, no duplicates */
	double *w;      /* weight of each adjacency entry (same value in both directions), > 0 */
	double *bytes;  /* optional metric columns from a traced pattern (NULL when absent) */
	double *msgs;
	struct map_cart *cart; /* the grid whose halo exchange this is (map_graph_cart), else NULL */
} map_graph_t;

/* Which metric of a two-metric pattern becomes w. */
typedef enum map_metric {
	MAP_METRIC_DEFAULT = 0, /* first weight column */
	MAP_METRIC_BYTES,
	MAP_METRIC_MESSAGES,
	MAP_METRIC_LOGGP /* msgs * (L + 2o) + bytes * G, REFERENCE.md section 4 */
} map_metric_t;

/* Parses "bytes", "messages", "loggp" (or "default"); -1 (EINVAL) otherwise. */
int map_metric_parse(const char *s, map_metric_t *out);
/* The weight of traffic of bytes in msgs messages under metric m (has_msgs 0: bytes only). */
double map_metric_weight(map_metric_t m, double bytes, double msgs, int has_msgs);

/* The largest number of ranks a pattern file may declare (16,777,216). Declared sizes are checked
 * against it, and against what the file's size can hold, before anything is allocated. */
#define MAP_MAX_RANKS (1u << 24)

/* Loads a pattern file: Matrix Market (coordinate or array, general or symmetric, real, integer or pattern,
 * keywords in any case; message counts from the file a "% rankmap-messages: NAME" header names, or from a
 * second value per entry: see pattern_mtx.c) or TreeMatch's dense text (N lines of N numbers), detected
 * from the content. Self loops are ignored; negative, NaN or infinite weights are errors naming file and line,
 * and so are weights whose total is not a finite double (naming the file).
 * The file is opened through rm_file (a regular file within RANKMAP_FILE_LIMIT_PATTERN, never a FIFO or
 * a device); a .mtx declaring more than MAP_MAX_RANKS ranks or more entries than its size can hold is
 * refused before anything is allocated (a dense matrix declares nothing: its memory follows the rows
 * it holds). Caller owns the graph. */
map_graph_t *map_graph_load(const char *path, map_metric_t metric, rm_error_t *err);
/* map_graph_load() for a caller that knows how many ranks the pattern may have (a job's size, a
 * target's slots): a pattern declaring more than max_ranks (at most MAP_MAX_RANKS) is refused before
 * anything of its size is allocated. */
map_graph_t *map_graph_load_max(const char *path, map_metric_t metric, uint32_t max_ranks, rm_error_t *err);
/* Builds a graph from an edge list (either direction, duplicates summed, self loops dropped). Weights
 * must be finite and >= 0, and their total a finite double; errors name "edges". */
map_graph_t *map_graph_from_edges(uint32_t n, size_t nedges, const uint32_t *src, const uint32_t *dst, const double *w,
				  rm_error_t *err);

/* A Cartesian spec: "8x4", "8x4:1,0" (periods), "8x4:1,1:10,1" (per-dimension weights). */
#define MAP_CART_MAXDIMS 16
typedef struct map_cart map_cart_t;
struct map_cart {
	int ndims;
	int dims[MAP_CART_MAXDIMS];
	int periods[MAP_CART_MAXDIMS];
	double weights[MAP_CART_MAXDIMS];
};

/* Parses a Cartesian spec; errors name the field. Default: all periodic, all weights 1. */
int map_cart_parse(const char *spec, map_cart_t *out, rm_error_t *err);
/* The halo-exchange graph of a Cartesian grid in MPI's row-major rank order (last dimension fastest).
 * A periodic dimension of extent 2 yields one edge whose weight counts both exchanges. The graph keeps a
 * copy of the spec (g->cart), from which auto tiles the grid onto uniform targets (mapping/tiling.c). */
map_graph_t *map_graph_cart(const map_cart_t *cart, rm_error_t *err);

/* Frees a graph. NULL is fine. */
void map_graph_destroy(map_graph_t *g);

/* The largest time budget an engine takes (CPU milliseconds, all its threads together): one minute.
 * map_compute refuses more (an error naming time_budget_ms). */
#define MAP_MAX_BUDGET_MS 60000

typedef struct map_options {
	double time_budget_ms; /* for "auto" and "refine"; <= 0: the default budget; at most MAP_MAX_BUDGET_MS.
				* auto given more than MAP_QUALITY_FACTOR x its default spends the rest in its
				* quality mode (multilevel constructions and local search on several threads) */
	unsigned seed;         /* for randomised steps; results are deterministic for a seed */
	const uint32_t *start; /* optional start mapping for "refine" (NULL: identity) */
} map_options_t;

typedef struct map_result {
	double cost;          /* cost of the returned mapping */
	double identity_cost; /* cost of rank i on slot i */
	double time_ms;       /* wall time of the computation */
	char algo[32];        /* engine that produced the returned mapping ("identity" if it won) */
} map_result_t;

/* Maps g onto t with the named engine: perm[i] = slot of rank i (perm has g->n entries). Requires
 * g->n <= t->nslots (more ranks than slots is an error naming both counts); with fewer ranks the engine
 * chooses the best subset of slots. Among mappings of equal cost the engine might return, the result is the one
 * whose rank order follows the slot order as far as the cost allows (mapping/ties.c), whatever the engine
 * and the weights; except on a target whose routes are known (t->links, a dragonfly), where every engine
 * but the identity then takes a mapping whose busiest link carries less, for at most 0.1 % more cost, with
 * work bounded in proportion to the time budget (mapping/linkload.c; should that raise the cost above the
 * identity's, the identity is returned, as for any engine). opt and res may be NULL. Returns 0, or -1 (unknown engine, bad
 * sizes, a cost that overflows a double, allocation failure); on failure perm holds the identity. */
int map_compute(const char *algo, const map_graph_t *g, const topo_target_t *t, const map_options_t *opt,
		uint32_t *perm, map_result_t *res, rm_error_t *err);

/* An engine's call context (mapping/mapping_private.h, private to mapping/): the error record of the
 * call, for an engine defined outside mapping/ (the MPI library's stand-in for Scotch, which loads the
 * real engine on demand: plugin/mpi/pmpi_local.c), so that no other module copies the context's layout. */
struct map_ctx;
rm_error_t *map_ctx_error(const struct map_ctx *ctx);

/* map_compute() run in a child process (common/rm_child.h) so that an engine that crashes, loops or
 * exhausts memory cannot take the caller down: lim bounds its wall-clock time, CPU time and memory (lim
 * NULL: run in this process, unguarded). The child returns perm and res through a pipe; perm is checked
 * again here. Returns 0, or -1 with err saying what happened ("engine 'scotch': crashed (signal 11,
 * Segmentation fault)", "...: no result within 5000 ms (stopped)"; errno ETIMEDOUT or ECHILD for those);
 * on failure perm holds the identity.
 * Test-only: RANKMAP_FAKE_ENGINE_FAULT=segv|hang|sleep|oom makes the engine crash, spin, block, or
 * allocate up to 1 GiB before running (guarded or not), to exercise the callers' fallbacks. */
int map_compute_guarded(const char *algo, const map_graph_t *g, const topo_target_t *t, const map_options_t *opt,
			const rm_child_limits_t *lim, uint32_t *perm, map_result_t *res, rm_error_t *err);

/* Sizes each engine takes. Scotch: at most MAP_SCOTCH_MAX_RANKS ranks, from every caller (an explicit
 * request beyond it is an error naming the limit; auto leaves it out): past that its CPU time grows as
 * n^2 to n^3 (mapping/scotch.c has the figures). treematch and bisect grow as n log n at every size;
 * refine and auto stop at their time budget (map_options_t.time_budget_ms, 1 s by default); identity
 * is O(n). */
#define MAP_SCOTCH_MAX_RANKS 8192u
/* auto's quality mode starts at a budget of this many times its default for the graph (and at least
 * MAP_QUALITY_MIN_MS): below, auto is the fast portfolio, whatever the budget. */
#define MAP_QUALITY_FACTOR 2.0
/* At 4,096 ranks (mesh-like graphs), a budget of at least this many times the default gives auto's
 * stronger construction (auto.c; the offline default, map_offline_budget_ms, is 1.5 times there). */
#define MAP_STRONG_FACTOR 1.45
#define MAP_QUALITY_MIN_MS 20.0

/* The default budget for n ranks (time_budget_ms <= 0): 0.025 ms a rank up to 512 ranks, 0.04 above, at
 * least 2 ms, at most 1 s. It is what a job's first call gets (the MPI library, the SPANK plugin,
 * rankmapd's map request): it must stay small. */
double map_default_budget_ms(uint32_t n);
/* The default budget of an offline caller (rankmapctl map computing the mapping itself, without
 * --budget; tests/bench/mapping's "offline" column): map_default_budget_ms, but at least
 * MAP_OFFLINE_MIN_BUDGET_MS, which is the same from 2,500 ranks on, and from MAP_OFFLINE_LARGE_RANKS
 * ranks on MAP_OFFLINE_LARGE_MS_PER_RANK a rank (at most 1 s, as a job's). */
#define MAP_OFFLINE_MIN_BUDGET_MS 100.0
#define MAP_OFFLINE_LARGE_RANKS 4096
#define MAP_OFFLINE_LARGE_MS_PER_RANK 0.06
double map_offline_budget_ms(uint32_t n);

/* Names of the engines, NULL-terminated (static). */
const char *const *map_algorithms(void);
/* The same names as one string, "treematch, scotch, ..." (static), for messages. */
const char *map_algorithm_list(void);
/* The engine called name, whatever its case ("Auto" is "auto"): its own spelling (static), or NULL when
 * there is none. */
const char *map_algorithm_find(const char *name);

/* Cost of a mapping: sum over undirected edges of weight x target distance. */
double map_cost(const map_graph_t *g, const topo_target_t *t, const uint32_t *perm);
/* The largest load of a link of the target's routes (t->links, a dragonfly: topo.h): the weights of the
 * edges whose route uses it, over its rate (Gb/s); its link number in *link (may be NULL). -1 when the
 * target has no links or out of memory. */
double map_link_load_max(const map_graph_t *g, const topo_target_t *t, const uint32_t *perm, uint64_t *link);
/* Traffic (sum of weights of undirected edges) per deepest common level: per_level has t->nlevels
 * entries; per_level[l] is the weight of edges whose two slots first share level l. */
void map_breakdown(const map_graph_t *g, const topo_target_t *t, const uint32_t *perm, double *per_level);
/* Checks that perm is a bijection of n ranks onto distinct slots < nslots. Returns 0 or -1. */
int map_check_perm(const uint32_t *perm, uint32_t n, uint32_t nslots);

/* Writes / reads a permutation file: one line per rank, the slot index of rank i. map_perm_write returns
 * 0 or -1 (perm borrowed); map_perm_read returns a new array of *n_out entries (the caller frees it), or
 * NULL with err naming the file and line. */
int map_perm_write(const char *path, const uint32_t *perm, uint32_t n, rm_error_t *err);
uint32_t *map_perm_read(const char *path, uint32_t *n_out, rm_error_t *err);

#endif
