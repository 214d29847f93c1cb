/*
 * plugin/mpi/pmpi.h: internals of the rankmap PMPI library (librankmap_mpi_<mpi>.so).
 *
 * The library is preloaded into unmodified MPI programs. It defines MPI_Cart_create, MPI_Graph_create,
 * MPI_Dist_graph_create(_adjacent), MPI_Cart_map and MPI_Graph_map (pmpi_topo.c; exported through
 * pmpi_entry.h) which, with reorder=1, read the environment and agree to go on (pmpi_env.c), learn where
 * every process runs (pmpi_place.c), build the communication graph (pmpi_graph.c), map it through
 * rankmapd (pmpi_daemon.c) or at one root (engines and fabric libraries in librankmap_local.so, opened
 * on demand by pmpi_local.c) and create the reordered communicator (pmpi_reorder.c), remembering on the
 * communicator what was settled (pmpi_memo.c). A tracer of point-to-point traffic (pmpi_trace.c) and
 * learning (pmpi_learn*.c) are observers of the core (pmpi_core.c), whose hooks the wrappers of
 * pmpi_wrap.c call; they share one persistent-request table (pmpi_persist.c) and one neighbour table
 * (pmpi_nbr.c), declared in pmpi_obs.h. Nothing declared here names a feature: each observer's state in a
 * call is its own (rmp_call_state). pmpi_check.c makes every wrapper pass straight through under an MPI
 * the library was not built for. Only MPI_* symbols are exported (rankmap_mpi.map).
 *
 * Rules: nothing here exits, aborts or prints, except rmp_warn(), which prints one line prefixed
 * "rankmap: " from one rank. Every collective decision is taken together (an allreduce or a broadcast
 * from the root) so that all ranks take the same branch. Nothing is O(p^2) at any rank.
 *
 * Built three ways: Open MPI and MPICH (shared objects), and SimGrid SMPI (-DRANKMAP_SMPI, a static
 * archive built by plugin/mpi/smpi.mk): code that SMPI cannot run is guarded by RANKMAP_SMPI.
 *
 * Error rule: functions return 0 on success and -1 on failure, filling the caller's rm_error_t.
 */
#ifndef RANKMAP_PMPI_H
#define RANKMAP_PMPI_H

#include <limits.h>
#include <mpi.h>
#include <stdint.h>

#include "mapping.h"
#include "rm_error.h"
#include "rm_slot.h"
#include "topo.h"

/* Everything declared below is internal: hidden, so that calls and data accesses inside the library are
 * direct (no PLT or GOT indirection on the tracer's hot path). The MPI_ entry points keep their default
 * visibility from mpi.h, and the version script exports only them. */
#pragma GCC visibility push(hidden)

#define RMP_HOST_LEN 64

/* Settings read from the environment at each topology call (see rmp_env_read for the names). */
typedef struct rmp_env {
	int disable;           /* RANKMAP_DISABLE=1 */
	int verbose;           /* RANKMAP_VERBOSE=1: rank 0 prints the mapping outcome */
	const char *report;    /* RANKMAP_REPORT=FILE: rank 0 appends the outcome line */
	const char *algo;      /* RANKMAP_ENGINE (old name RANKMAP_ALGO), default "auto" */
	double budget_ms;      /* RANKMAP_TIME_BUDGET_MS for "auto"/"refine" (<= 0: 1 ms + 5 us per rank) */
	const char *pattern;   /* RANKMAP_MATRIX (old name RANKMAP_PATTERN): recorded traffic as weights */
	map_metric_t metric;   /* RANKMAP_METRIC */
	const char *cluster;   /* RANKMAP_CLUSTER: cluster file (network, hardware) */
	const char *socket;    /* rmp_env_server(): rankmapd (a server list, rm_client.h) */
	int timeout_ms;        /* RANKMAP_TIMEOUT_MS: every try of one daemon call together (default 5000) */
	int fake_hosts;        /* test-only RANKMAP_FAKE_HOSTS (0: real placement) */
	const char *fake_node; /* test-only RANKMAP_FAKE_NODE: hwloc synthetic string */
	int fake_cyclic;       /* test-only RANKMAP_FAKE_PLACEMENT=cyclic */
	const char *fake_xml;  /* test-only RANKMAP_FAKE_XML: hwloc XML file of each virtual (or real) host */
	int slots;             /* RANKMAP_SLOTS: RMP_SLOTS_AUTO (default), RMP_SLOTS_CORE or RMP_SLOTS_GPU */
	int guard;             /* RANKMAP_GUARD: 1 fork (default): the root maps in a child process; 0 off */
	unsigned guard_cpu;    /* RANKMAP_GUARD_CPU: the child's CPU seconds (default RMP_GUARD_CPU) */
	size_t guard_mem;      /* RANKMAP_GUARD_MEM: the child's memory in MiB (default RMP_GUARD_MEM) */
} rmp_env_t;

/* Most PUs a test-only virtual host (RANKMAP_FAKE_NODE) may have: hwloc builds every object of a synthetic
 * topology, and 'core:99999999' took the job forever. Above the largest common nodes (768 PUs: 2 x 192 cores x 2
 * threads); 4096 PUs (pack:4 core:1024) map in about a second. */
#define RMP_FAKE_NODE_PUS 4096
/* RANKMAP_SLOTS: auto maps onto GPUs when every rank drives one (pmpi_gpu.c), onto cores when none does */
#define RMP_SLOTS_AUTO 0
#define RMP_SLOTS_CORE 1
#define RMP_SLOTS_GPU 2
#define RMP_GUARD_CPU 60   /* s; the child's wall-clock bound is 2 x CPU + 1 s */
#define RMP_GUARD_MEM 8192 /* MiB above the process's size at fork */

/* Reads the environment into env. Returns 0, or -1 with err naming the bad variable. */
int rmp_env_read(rmp_env_t *env, rm_error_t *err);
/* rankmapd as the environment names it: RANKMAP_SERVER (a list, tried in order), else RANKMAP_SOCKET, else
 * NULL (borrowed). The one place the library reads it: the mapping, the learned pattern's lookup and its
 * store at MPI_Finalize all go to the same daemons. */
const char *rmp_env_server(void);
/* True when RANKMAP_DISABLE=1 (cheap, for the fast path). */
int rmp_disabled(void);
/* Set once this process warned that the ranks' RANKMAP_DISABLE/RANKMAP_TRACE differ (rmp_agree): the
 * tracer's own agreement at MPI_Finalize then does not warn again. */
extern int rmp_mixed_warned;

/* A pointer to one rank's state (the tracer's, the learner's), zero-initialised: one per process, or,
 * under SMPI, where every rank may run in one address space, one per world rank. The slot does not own
 * what it points to. */
typedef struct rmp_slot {
#ifdef RANKMAP_SMPI
	void **by_rank; /* world-size entries, allocated at the first set, never freed */
	int n;
#else
	void *p;
#endif
} rmp_slot_t;

/* The calling rank's pointer (borrowed), NULL when none is set. Inline: the tracer's hot path. */
static inline void *rmp_slot_get(const rmp_slot_t *s)
{
#ifdef RANKMAP_SMPI
	int r = 0;

	if (!s->by_rank)
		return NULL;
	PMPI_Comm_rank(MPI_COMM_WORLD, &r);
	return r < s->n ? s->by_rank[r] : NULL;
#else
	return s->p;
#endif
}
/* Sets the calling rank's pointer (NULL clears it). Returns what the owner's switch in rmp_active should
 * hold (the owner writes it: the slot knows no feature): p itself, or under SMPI the table once some rank
 * set one (it is not cleared then: the other ranks may still have theirs). Under SMPI the first non-NULL
 * set allocates the table; without memory for it the set is dropped (rmp_slot_get then returns NULL). */
void *rmp_slot_set(rmp_slot_t *s, void *p);

/* Set at load time (pmpi_check.c) when the program's MPI is not the one this library was built for: every
 * wrapper then passes straight through to PMPI_ (the topology calls test it before anything else). */
extern int rmp_foreign;
/* The one warning about it (the launcher's rank 0, once); nothing when the MPI matches. */
void rmp_foreign_warn(void);

#define RMP_OBSERVERS_MAX 4   /* features registered as observers (pmpi_core.c) */
#define RMP_CALL_OBS_WORDS 16 /* each observer's opaque state in a call, in 64-bit words */

/* One intercepted topology call. */
typedef struct rmp_call {
	const char *fn; /* "MPI_Cart_create"... */
	MPI_Comm comm;
	int rank, size;
	uint32_t nverts; /* vertices of the graph: ranks of the new communicator (<= size) */
	rmp_env_t env;
	rm_error_t err; /* this rank's first error */
	double t0;      /* PMPI_Wtime at entry */
	double t_map;   /* PMPI_Wtime when the root starts placement and mapping */
	double cpu_map; /* the process's CPU time (ms) at that moment */
	char **dhosts;  /* root, RANKMAP_SOCKET: the daemon's host names (NULL-terminated) */
	int *codes;     /* root: per rank, its new rank, -1 left out, RMP_CODE_FAILED (scattered) */
	size_t ndhosts;
	char warning[400]; /* root: the target's warning (topo_target_t.warning, or rankmapd's "warnings"),
				 * "" when none; it goes into the report line, never on a line of its own */
	int observed;      /* set by an observer at call_begin: every call takes the full path and the agreement
		       * (no verdict remembered by the communicator, no one-host shortcut) */
	int plain;         /* this rank's setting asks for the plain call (RANKMAP_DISABLE, a tracing run); the
			    * agreement makes it job-wide: plain for all when any rank asks for it */
	int weighted;      /* the call carried weights of its own */
	int gpus;          /* the agreement's maximum of rmp_gpu_local over the ranks (0: no rank names a GPU) */
	/* each observer's state for this call (rmp_call_state): zero at rmp_call_begin, the observer's alone */
	uint64_t obs[RMP_OBSERVERS_MAX][RMP_CALL_OBS_WORDS];
	/* what the communicator remembers (pmpi_memo.c) */
	uint64_t envh; /* hash of the RANKMAP_* environment at the call */
	uint64_t key;  /* Cartesian and graph calls: the call's key (kind, arguments, envh); 0 for dist graphs */
} rmp_call_t;

#define RMP_CODE_FAILED (-2)
#define RMP_CODE_PLACE (-3) /* the placement failed: no call on this communicator can reorder */
#define RMP_CODE_SAME (-4)  /* Cartesian and graph calls: every rank keeps its rank (the unreordered call) */

/* Prints "rankmap: <fn>: <error>; continuing without reordering" on stderr (the caller decides that
 * exactly one rank calls it), the first time this process meets that error text only (one line per
 * distinct cause over the run), unless RANKMAP_VERBOSE=1. */
void rmp_warn(const rmp_call_t *call);
/* The text of call->err as rmp_warn prints it (without the function name). */
void rmp_error_text(const rmp_call_t *call, char *buf, size_t len);

/* Collective over call->comm: combines every rank's local status (local_fail, or an error already in
 * call->err) and an argument hash, and each observer's vote (rmp_observer_t.vote). Returns 0 when every
 * rank succeeded with the same hash, after each observer's agreed hook saw the votes' maxima. Otherwise returns -1 (and
 * frees call->codes): either exactly one rank (the lowest failing one, or rank 0 for differing
 * arguments) has printed the warning, or nothing is to be done and nothing was printed: some rank's
 * MPI_Cart_map/MPI_Graph_map promised the unreordered placement for this call, or every rank runs on one
 * host and none is bound to a single PU (then the communicator remembers it: pmpi_memo.c). */
int rmp_agree(rmp_call_t *call, int local_fail, uint64_t hash);

/* CPU time used by this process and its reaped children (the guarded engine), in milliseconds. */
double rmp_cpu_ms(void);

/* FNV-1a over ints, chained from h. */
uint64_t rmp_hash_ints(uint64_t h, const int *v, size_t n);
#define RMP_HASH_INIT 14695981039346656037ULL

/* Where the ranks of a communicator run, known at the root (pmpi_place.c). Every rank's slot is named
 * once, in rank order (slot[r], rm_slot.h): what rankmapd is sent, and what the report prints. Mapping
 * here builds the target over those slots (target->given[r] is rank r's target slot); through rankmapd
 * the real placement needs no hardware at the root (the daemon holds it): no cluster, no target. */
typedef struct rmp_place {
	rm_slot_t *slot;            /* rank -> its slot (host, PU in pu_index's numbering or RM_SLOT_ANY) */
	rm_slot_pu_t pu_index;      /* OS indices (real placement through rankmapd) or logical (target's) */
	char (*host)[RMP_HOST_LEN]; /* storage of the host names slot[] points to (real placement) */
	int32_t *pu_os;             /* rank -> OS index of its PU, as resolved (here, or by rankmapd) */
	uint8_t *bound;             /* rank -> 1 when the process is bound to that one PU, 0 when assumed */
	topo_cluster_t cluster;     /* local mapping (and the test-only placement): else NULL */
	topo_target_t *target;      /* one slot per rank of the communicator, or NULL */
	uint32_t *slot_rank;        /* target slot -> rank occupying it */
	uint32_t *rank_slot;        /* rank -> target slot (target->given) */
	size_t hw_bytes;            /* hardware descriptions (hwloc XML) the root gathered for the call */
	int gpu_slots;              /* the slots are the ranks' GPUs (target from topo_target_from_gpu_slots) */
	uint32_t *gpu;              /* gpu_slots: rank -> its GPU's index on its host (topo_gpu_t.index) */
	char **gpu_ids;             /* gpu_slots through rankmapd: rank -> its GPU as the map request names it */
} rmp_place_t;

/* ---- GPUs (pmpi_gpu.c) -------------------------------------------------------------------------------
 * Which GPU each rank drives, from its own device variables (common/rm_gpuenv.h), and the GPU slots of a
 * call: a rank's slot is its GPU when every rank drives a known GPU of its host; reordering only
 * renumbers, the device variables are never touched. */
/* This rank's GPU status (local, RANKMAP_SLOTS=core: 0): 0 no variable names a GPU, 1 one GPU named, 2 the
 * variables are unusable (malformed, several devices, ambiguous). */
int rmp_gpu_local(const rmp_call_t *call);
/* One rank's GPU as the root receives it. */
#define RMP_GPU_UUID 48
typedef struct rmp_gpu_rec {
	int32_t status; /* rmp_gpu_local's */
	int32_t index;  /* the node's GPU in PCI order, -1 when named by UUID */
	char uuid[RMP_GPU_UUID];
} rmp_gpu_rec_t;
/* Collective when call->gpus != 0: every rank's record gathered at the root (*recs, call->size of them;
 * NULL elsewhere and when no rank names a GPU). 0, or -1 at the root (out of memory). */
int rmp_gpu_gather(rmp_call_t *call, rmp_gpu_rec_t **recs);
/* Root: each rank's GPU (gpu[r], its index on cluster host host[r]) when every rank drives a distinct,
 * known GPU of its host: returns 1. Returns 0 for core slots: no rank names a GPU (why = ""), or the
 * fallback (why says which rank and why, for the one warning). */
int rmp_gpu_resolve(rmp_call_t *call, topo_cluster_t c, const int32_t *host, const rmp_gpu_rec_t *recs, uint32_t *gpu,
		    char *why, size_t len);

/* Root: the one warning of a job whose GPUs cannot be its slots (mixed, unknown, shared, or refused by
 * rankmapd): it maps onto cores. Once per process and cause; it also goes into the report line. */
void rmp_gpu_fallback_warn(rmp_call_t *call, const char *why);
/* Root, through rankmapd (which holds the hosts' GPUs): the GPU of each rank as the map request names it
 * (*ids: call->size strings, an index "3" or a UUID; free each and the array) when every rank names a GPU
 * and no two the same one of a host: returns 1. Returns 0 for core slots (why as rmp_gpu_resolve). The
 * daemon resolves the names on its model: two ranks on one GPU named two ways (a UUID and an index) are
 * seen there, and rmp_daemon_map then maps onto core slots with one warning. */
int rmp_gpu_daemon_ids(rmp_call_t *call, const char *const *host, const rmp_gpu_rec_t *recs, char ***ids, char *why,
		       size_t len);

/* Collective: every rank takes part; on the root (rank 0) fills pl. Returns this rank's status
 * (0 or -1 with call->err set); the root's status reaches the others through rmp_reorder's codes. */
int rmp_place_gather(rmp_call_t *call, rmp_place_t *pl);
/* Frees what pl holds (root). */
void rmp_place_free(rmp_place_t *pl);

/* Builds a graph at the root from edges gathered from every rank (collective; local edges are
 * borrowed). weights NULL: all 1. Edges of weight <= 0 are dropped. Returns the graph on the root,
 * NULL elsewhere and on failure (call->err set at the root). *root_fail says whether the root failed. */
map_graph_t *rmp_graph_gather(rmp_call_t *call, size_t nedges, const int *src, const int *dst, const int *weights,
			      int *root_fail);
/* Root only: the graph of a Cartesian call (pattern file if RANKMAP_PATTERN is set). */
map_graph_t *rmp_graph_cart(rmp_call_t *call, int ndims, const int dims[], const int periods[]);
/* Root only: the graph of MPI_Graph_create arguments (pattern file if RANKMAP_PATTERN is set). */
map_graph_t *rmp_graph_graph(rmp_call_t *call, int nnodes, const int index[], const int edges[]);

/* The whole reordering after the graph is known (collective; call only after rmp_agree succeeded).
 * g is the root's graph (NULL elsewhere, consumed), root_fail the root's status so far. Placement,
 * mapping, then one Scatter of new ranks (or of failure codes) and the split. On success returns 0
 * and *newcomm is the reordered communicator (MPI_COMM_NULL on ranks left out when nverts < size);
 * on failure returns -1 (the root printed one warning) and *newcomm is untouched. */
int rmp_reorder(rmp_call_t *call, map_graph_t *g, int root_fail, MPI_Comm *newcomm);

/* rankmapd (pmpi_daemon.c), root only. The daemon's host names (NULL-terminated, free with
 * rmp_free_names), or NULL with call->err set. */
char **rmp_daemon_hosts(rmp_call_t *call, size_t *n_out);
void rmp_free_names(char **names);
/* Maps g through the daemon's `map` request (rm_client_map) onto the ranks' slots pl->slot, in rank order:
 * vrank[v] = rank of the process that should run vertex v (the daemon answers in the request's order).
 * Fills res (daemon's cost, the cost where the ranks are, "rankmapd:<engine>") and pl->pu_os. 0 or -1. */
int rmp_daemon_map(rmp_call_t *call, const map_graph_t *g, rmp_place_t *pl, uint32_t *vrank, map_result_t *res);

/* Starts a topology call: fills call and reads the environment. Returns 0 when reordering should be
 * attempted (every rank decides the same, from the environment and the collective check done later);
 * -1 for the plain call (intercommunicator, one rank, RANKMAP_DISABLE, RANKMAP_TRACE). */
int rmp_call_begin(rmp_call_t *call, const char *fn, MPI_Comm comm);

/* After rmp_call_begin returned 0: sets call->key (kind, argument hash args) and looks the call up in
 * what comm remembers (local). Returns 1 when the outcome is known (*newrank: this rank's new rank, -1
 * left out, RMP_MEMO_PLAIN the unreordered call; call->codes freed), 0 to go on with rmp_agree. */
int rmp_call_memo(rmp_call_t *call, int kind, uint64_t args, int *newrank);

/* What a communicator remembers of its topology calls (pmpi_memo.c). Kinds of calls: */
#define RMP_KIND_CART 1
#define RMP_KIND_GRAPH 2
#define RMP_KIND_DIST 3
#define RMP_MEMO_MISS 0
#define RMP_MEMO_HIT 1
#define RMP_MEMO_PLAIN INT32_MIN /* a remembered outcome: the unreordered call */
/* Hash of every RANKMAP_* variable of the environment (never 0). */
uint64_t rmp_env_hash(void);
/* The key of a call (never 0). */
uint64_t rmp_memo_key(int kind, uint64_t args, uint64_t envh);
/* RMP_MEMO_HIT when comm has a verdict for envh (*newrank = RMP_MEMO_PLAIN) or, when results, a result
 * for key (*newrank: this rank's new rank, -1 left out, or RMP_MEMO_PLAIN); else RMP_MEMO_MISS. Local. */
int rmp_memo_lookup(MPI_Comm comm, uint64_t envh, uint64_t key, int results, int *newrank);
/* Whether this rank promised the unreordered placement for key (MPI_Cart_map/MPI_Graph_map). Local. */
int rmp_memo_promised(MPI_Comm comm, uint64_t key);
void rmp_memo_promise(MPI_Comm comm, uint64_t key);
/* Called on every rank of comm together: the outcome of call key, or the verdict for envh. */
void rmp_memo_result(MPI_Comm comm, uint64_t key, int newrank);
/* cause: the warning's text where it was printed (NULL elsewhere), repeated under RANKMAP_VERBOSE=1 */
void rmp_memo_verdict(MPI_Comm comm, uint64_t envh, const char *cause);
/* The verdict's cause on this rank ("" when none). */
const char *rmp_memo_cause(MPI_Comm comm);
/* MPI_Cart_map / MPI_Graph_map: replaces *newrank (the MPI library's answer) by the constructor's. */
void rmp_map_answer(MPI_Comm comm, int kind, uint64_t args, int nverts, int *newrank);
/* The argument hashes the constructors and the map functions share. */
uint64_t rmp_cart_hash(int ndims, const int dims[], const int periods[]);
uint64_t rmp_graph_hash(int nnodes, const int index[], const int edges[]);

/* Size of a datatype in bytes; the common predefined ones without a call into the MPI library. */
static inline int rmp_type_size(MPI_Datatype type)
{
	int sz = 0;

	if (type == MPI_DOUBLE || type == MPI_INT64_T || type == MPI_UINT64_T || type == MPI_LONG)
		return 8;
	if (type == MPI_INT || type == MPI_FLOAT || type == MPI_UNSIGNED)
		return 4;
	if (type == MPI_BYTE || type == MPI_CHAR)
		return 1;
	PMPI_Type_size(type, &sz);
	return sz > 0 ? sz : 0;
}

/* An election by MPI_MAX of the lowest rank with some property: RMP_ELECT(rank) from the ranks that have
 * it, 0 from the others; the maximum is RMP_ELECT(lowest such rank), or 0 when none has it. Positive
 * and below 2^63, so the same whether the MPI library compares MPI_UINT64_T as unsigned or as signed. */
#define RMP_ELECT(rank) ((uint64_t)INT64_MAX - (uint64_t)(rank))

/* ---- local mapping's heavy part (pmpi_local.c) ----------------------------------------------------------
 * Scotch and the InfiniBand fabric libraries live in a helper beside this library, opened the first time
 * the root maps in its own process. */
#define RMP_LOCAL_LIB "librankmap_local.so"
/* Opens the helper (once; later calls return the first outcome). 0, or -1 with err naming it. */
int rmp_local_load(rm_error_t *err);
/* Whether it is open. */
int rmp_local_loaded(void);
/* MPI_Init: opens it ahead on MPI_COMM_WORLD's rank 0 when that rank would map with Scotch in its own
 * process (no rankmapd named, RANKMAP_ALGO auto or scotch, not disabled or tracing). */
void rmp_local_prefetch(void);

/* ---- observers (pmpi_core.c) -------------------------------------------------------------------------
 * A feature (the tracer, pmpi_trace.c; learning, pmpi_learn*.c) is an observer: it registers its hooks
 * once, from a constructor, and the core calls them; the core never names a feature. Every hook may be
 * NULL. The send hooks are called only while *active (the feature's switch in rmp_active) is non-NULL;
 * the send wrappers' straight path tests the switches themselves (rmp_send_quick). */
#define RMP_VOTE_WORDS 2 /* an observer's words in the agreement's MPI_MAX allreduce */
struct rmp_persist;
struct rmp_persist_note;
typedef struct rmp_observer {
	const char *name;
	int order;     /* init in increasing order, finalize in decreasing order */
	void **active; /* the feature's switch in rmp_active */
	/* MPI_Init/MPI_Init_thread succeeded; MPI_Finalize is about to run */
	void (*init)(const int *argc, char ***argv);
	void (*finalize)(void);
	/* a topology call: every rank, after rmp_call_begin read the environment; plain: nonzero when the
	 * feature keeps every call unreordered (asked first, before anything is allocated) */
	int (*plain)(void);
	void (*call_begin)(rmp_call_t *call);
	/* the agreement: this rank's words (combined by MPI_MAX over the call's ranks), then their maxima */
	void (*vote)(const rmp_call_t *call, uint64_t v[RMP_VOTE_WORDS]);
	void (*agreed)(rmp_call_t *call, const uint64_t v[RMP_VOTE_WORDS]);
	/* root: weights of a Cartesian call's dimensions, of a graph call's edges; 1 when applied */
	int (*cart_weights)(rmp_call_t *call, int ndims, const int periods[], double weights[]);
	int (*graph_weights)(rmp_call_t *call, map_graph_t *g);
	/* every rank, after the real constructor returned newcomm (MPI_COMM_NULL on ranks left out) */
	void (*created)(rmp_call_t *call, MPI_Comm newcomm, int ndims, const int periods[]);
	/* root: the feature's words in the report line (" key=value"), "" when it has none */
	void (*report)(const rmp_call_t *call, char *buf, size_t len);
	/* sends: count elements of type to rank dest of comm; neighbourhood collectives: counts[i] (or
	 * count) elements of types[i] (or type) to out-neighbour i; a persistent send made (*_init) and
	 * started (the shared table's entry, pmpi_persist.c, and this observer's note in it) */
	void (*send)(MPI_Comm comm, int dest, int count, MPI_Datatype type);
	void (*neighbors)(MPI_Comm comm, int count, MPI_Datatype type, const int counts[], const MPI_Datatype types[]);
	void (*persist_add)(const struct rmp_persist *p, struct rmp_persist_note *note);
	void (*persist_start)(const struct rmp_persist *p, struct rmp_persist_note *note);
} rmp_observer_t;

/* Registers o (kept, never copied); at most RMP_OBSERVERS_MAX. */
void rmp_observer_add(const rmp_observer_t *o);
int rmp_observer_count(void);
/* The i-th observer (registry order: the index of its note in a persistent request's entry). */
const rmp_observer_t *rmp_observer_at(int i);
/* The hooks of every observer, in order. */
void rmp_obs_init(const int *argc, char ***argv);
/* Nonzero when some observer keeps every call unreordered (rmp_observer_t.plain). */
int rmp_obs_plain(void);
/* o's state in call (RMP_CALL_OBS_WORDS words, zero at rmp_call_begin), NULL when o is not registered. */
void *rmp_call_state(rmp_call_t *call, const rmp_observer_t *o);
/* Every observer's report words, concatenated into buf. */
void rmp_obs_report(const rmp_call_t *call, char *buf, size_t len);
void rmp_obs_finalize(void);
void rmp_obs_call_begin(rmp_call_t *call);
/* v: RMP_VOTE_WORDS words per observer (rmp_observer_count()) */
void rmp_obs_vote(const rmp_call_t *call, uint64_t *v);
void rmp_obs_agreed(rmp_call_t *call, const uint64_t *v);
int rmp_obs_cart_weights(rmp_call_t *call, int ndims, const int periods[], double weights[]);
int rmp_obs_graph_weights(rmp_call_t *call, map_graph_t *g);
void rmp_obs_created(rmp_call_t *call, MPI_Comm newcomm, int ndims, const int periods[]);
/* The send hooks (rmp_send_slow, pmpi_learn.h, walks them inline). */
typedef struct rmp_send_hook {
	void **active;
	void (*fn)(MPI_Comm comm, int dest, int count, MPI_Datatype type);
} rmp_send_hook_t;
extern rmp_send_hook_t rmp_send_hooks[RMP_OBSERVERS_MAX];
extern int rmp_nsend_hooks;
void rmp_obs_neighbors(MPI_Comm comm, int n, MPI_Datatype type, const int counts[], const MPI_Datatype types[]);

#pragma GCC visibility pop

#endif
