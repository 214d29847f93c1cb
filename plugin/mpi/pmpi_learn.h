/*
 * plugin/mpi/pmpi_learn.h: internals of learning (pmpi_learn.c: records and counters; pmpi_learn_key.c:
 * keys, applying and collecting patterns; pmpi_learn_store.c: the store and its two back ends).
 * Error rule: 0 on success, -1 with err filled on failure.
 */
#ifndef RANKMAP_PMPI_LEARN_H
#define RANKMAP_PMPI_LEARN_H

#include <limits.h>

#include "pmpi_obs.h"
#include "rm_pattern.h"

#pragma GCC visibility push(hidden)

#define RMP_LEARN_COMMS 16 /* topology communicators learned per process */

/* One tracked topology communicator. */
typedef struct rmp_learn_rec {
	MPI_Comm comm;     /* the user's communicator (MPI_COMM_NULL: left out, or freed) */
	MPI_Comm priv;     /* private duplicate of the call's communicator, for the finalize */
	rmp_nbr_t nbr;     /* its neighbour view (pmpi_nbr.c): slot of a destination, by rank or world rank */
	int nslots;        /* slots: 2 * ndims, or the out-degree */
	int *slot_rank;    /* rank of each slot's neighbour (-1: none) */
	uint64_t *cnt;     /* bytes, msgs per slot */
	uint64_t other[2]; /* bytes, msgs to ranks that are not neighbours */
	int vertex;        /* this process's rank in comm, -1 when left out */
	int rank;          /* this process's rank in the call's communicator (0: the root) */
	uint32_t nverts;
	uint32_t order;
	char fn[RM_PATTERN_FN_LEN];
	int ndims; /* Cartesian: dimensions, periods; 0 for graphs */
	int periods[RM_PATTERN_MAXDIMS];
	uint64_t *xadj; /* root, graphs: the call's graph structure */
	uint32_t *adj;
	uint32_t gn;
	uint64_t ghash;
} rmp_learn_rec_t;

typedef struct rmp_learn {
#ifdef RANKMAP_SMPI
	rmp_learn_hit_t hit; /* this rank's cache entry (elsewhere the process's is rmp_active.hit) */
#endif
	int n;
	rmp_learn_rec_t rec[RMP_LEARN_COMMS];
	rmp_learn_rec_t *world; /* the record sends on MPI_COMM_WORLD are matched against */
	uint64_t untracked[2];  /* sends on communicators that are not tracked ([1] messages; [0] stays 0) */
	unsigned gen;           /* bumped when the records change (rmp_learn_invalidate) */
	int warned;             /* at most one learning warning per process */
	int calls;              /* topology calls with reorder=1 so far (their order) */
	uint64_t cmdline;       /* hash of the program's arguments (rm_pattern_usable), 0 unknown */
	int inputs;             /* cmdline includes the input files (rmp_learn_cmdline) */
} rmp_learn_t;

/* Learning's state in one topology call (its rmp_call_state area: zero at the call's begin). */
typedef struct rmp_learn_call {
	int on;         /* this call is learned: tracked after creation, its pattern looked up */
	int track;      /* set at the agreement: every rank of the call can record it */
	uint32_t order; /* its place among the program's topology calls with reorder=1 */
	char used[48];  /* root: "<id> runs=N" of the pattern applied, "none" when there was none */
	uint64_t *xadj; /* root, graph calls: the call's graph structure (CSR) kept for the finalize */
	uint32_t *adj;
	uint32_t n;
	uint64_t hash; /* hash of that structure */
} rmp_learn_call_t;
_Static_assert(sizeof(rmp_learn_call_t) <= sizeof(((rmp_call_t *)0)->obs[0]), "learning's call state");
/* Learning's state in call (pmpi_learn_ctx.c); the observer (pmpi_learn.c) names itself there at load. */
rmp_learn_call_t *rmp_learn_of(rmp_call_t *call);
void rmp_learn_self(const rmp_observer_t *o);

/* This process's (rank's) context, NULL when not learning (pmpi_learn_ctx.c); set sets it and the send
 * wrappers' switch, rmp_active.learn. */
rmp_learn_t *rmp_learn_ctx(void);
void rmp_learn_ctx_set(rmp_learn_t *l);
/* RANKMAP_LEARN is on (1, not 0 or off). */
int rmp_learn_on(void);
/* At MPI_Init: argc/argv as given to it (may be NULL), hashed for rm_pattern_usable. */
void rmp_learn_init(const int *argc, char ***argv);
void rmp_learn_finalize(void);
/* Neighbourhood collectives: counts[i] (or n) elements of types[i] (or type) to out-neighbour i. */
void rmp_learn_neighbors(MPI_Comm comm, int n, MPI_Datatype type, const int counts[], const MPI_Datatype types[]);
/* Every rank, at a topology call: marks the call as learned (rmp_learn_call_t.on), numbers it, and marks it
 * observed (the full path) whenever RANKMAP_LEARN is on. */
void rmp_learn_call_begin(rmp_call_t *call);
/* Root: weights of a Cartesian call from its learned pattern (weights[d] set, rmp_learn_call_t.used filled).
 * Returns 1 when a pattern was applied, 0 otherwise (no pattern, or an error warned about once). */
int rmp_learn_cart_weights(rmp_call_t *call, int ndims, const int periods[], double weights[]);
/* Root: keeps the structure of the call's graph for the finalize and, for a call without weights,
 * replaces g's weights by the learned ones. Returns 1 when applied, 0 otherwise. */
int rmp_learn_graph_weights(rmp_call_t *call, map_graph_t *g);
/* This rank's part in whether the call is recorded, combined by maximum at the agreement: 0 it can record
 * it (the call is learned and the process has a record left), 1 it learns but has no record left, 2 it
 * does not learn (RANKMAP_LEARN is off here). */
int rmp_learn_room(const rmp_call_t *call);
/* After the agreement: worst, the maximum of rmp_learn_room over the ranks; lowest, the election
 * (RMP_ELECT) of the lowest rank that learns. Sets rmp_learn_call_t.track when every rank can record the call; when
 * some rank does not learn, the lowest one that does warns (once per process): the call is not learned. */
void rmp_learn_agreed(rmp_call_t *call, uint64_t worst, uint64_t lowest);
/* Collective over call->comm, after the real constructor returned newcomm (MPI_COMM_NULL on ranks left
 * out): when rmp_learn_call_t.track, starts counting the traffic on newcomm. cart: ndims/periods of a Cartesian
 * call (else 0). Every rank takes the same branch: track was agreed. */
void rmp_learn_track(rmp_call_t *call, MPI_Comm newcomm, int ndims, const int periods[]);
/* The hash of this run's arguments and input files (the files its arguments name, and standard input
 * when it is a file: their sizes and first and last 4 KiB), for rm_pattern_usable; 0 unknown. The files
 * are read once, at the first call. */
uint64_t rmp_learn_cmdline(rmp_learn_t *l);
/* Collective over c->priv: sums the counters at the root, which merges them into the store. */
void rmp_learn_collect(rmp_learn_rec_t *c);
/* Prints "rankmap: learn: <err>; <what>" once per process. */
void rmp_learn_warn(const rm_error_t *err, const char *what);

/* Fills k->uid and k->program for this process ("build-id:..." or "file:..."), path the executable's. */
int rmp_learn_program(rm_pattern_key_t *k, char *path, size_t pathlen);

/* The store (pmpi_learn_store.c): rankmapd when socket is set, else (and when the daemon fails to take
 * a pattern) the per-user directory. get: 1 found (*out, caller frees), 0 none, -1 error. */
int rmp_store_get(const char *socket, const rm_pattern_key_t *k, rm_pattern_t **out, rm_error_t *err);
/* put: 0 stored; -1 not stored. *note receives a description of a fallback that happened (may be ""). */
int rmp_store_put(const char *socket, const rm_pattern_t *p, char *note, size_t notelen, rm_error_t *err);

/* Adds what the cache entry holds to its counters and empties it (pmpi_learn_send.c). */
void rmp_learn_flush(rmp_learn_t *l);
/* The records changed (one made, one stopped counting, the world record replaced): flushes the entry and
 * makes persistent requests look up their counters again at their next start. */
void rmp_learn_invalidate(rmp_learn_t *l);
/* The hot path's other case (pmpi_learn_send.c): flushes the entry, finds the counters of (comm, dest)
 * (unless the entry had them: only the count changed) and fills the entry with this send. */
void rmp_learn_miss(rmp_learn_t *l, MPI_Comm comm, int dest, int n, MPI_Datatype type);

/* The cache entry of l: rmp_active.hit (in the cache line of the wrappers' tests), each rank's own under
 * SMPI. */
static inline rmp_learn_hit_t *rmp_learn_entry(rmp_learn_t *l)
{
#ifdef RANKMAP_SMPI
	return &l->hit;
#else
	(void)l;
	return &rmp_active.hit;
#endif
}

/* The hot path's common case: when l's cache entry is (dest, comm, type, n), counts one send in it (one
 * increment) and returns 1; else 0. */
static inline __attribute__((always_inline)) int rmp_learn_hit(rmp_learn_t *l, MPI_Comm comm, int dest, int n,
							       MPI_Datatype type)
{
	rmp_learn_hit_t *h = rmp_learn_entry(l);

	if (__builtin_expect(dest == h->dest && comm == h->comm && type == h->type && n == h->count, 1)) {
		h->msgs++;
		return 1;
	}
	return 0;
}

/* Counts one send of n elements of type to rank dest of comm, when this process (rank) learns. */
static inline __attribute__((always_inline)) void rmp_learn_count(MPI_Comm comm, int dest, int n, MPI_Datatype type)
{
#ifdef RANKMAP_SMPI
	rmp_learn_t *l = rmp_learn_ctx();
#else
	rmp_learn_t *l = rmp_active.learn; /* the process's context itself */
#endif

	if (l && !rmp_learn_hit(l, comm, dest, n, type))
		rmp_learn_miss(l, comm, dest, n, type);
}

/* The send wrappers' straight path (pmpi_wrap.c): returns 1 when this send needs nothing more (no
 * tracer, and not learning or counted by a hit in the cache), 0 when the wrapper must call
 * rmp_send_slow. With nothing on: two loads and two branches; learning, on a hit: four compares and one
 * increment more. Nothing here calls a function, so the wrappers need no stack frame on this path. */
static inline __attribute__((always_inline)) int rmp_send_quick(MPI_Comm comm, int dest, int n, MPI_Datatype type)
{
	if (__builtin_expect(rmp_active.trace != NULL, 0))
		return 0;
#ifdef RANKMAP_SMPI /* one context per rank: found by a call, in rmp_send_slow */
	(void)comm, (void)dest, (void)n, (void)type;
	return rmp_active.learn == NULL;
#else
	rmp_learn_t *l = rmp_active.learn;

	return !l || rmp_learn_hit(l, comm, dest, n, type);
#endif
}
/* The send wrappers' other path (their out-of-line half): every active observer's send hook (the tracer,
 * learning's full count), walked here rather than through a call into the core. */
static inline __attribute__((always_inline)) void rmp_send_slow(MPI_Comm comm, int dest, int n, MPI_Datatype type)
{
	for (int i = 0; i < rmp_nsend_hooks; i++)
		if (*rmp_send_hooks[i].active)
			rmp_send_hooks[i].fn(comm, dest, n, type);
}

/* This process's (rank's) context when learning, else NULL: cheap, for the wrappers. */
static inline rmp_learn_t *rmp_learn_here(void)
{
#ifdef RANKMAP_SMPI
	return rmp_active.learn ? rmp_learn_ctx() : NULL;
#else
	return rmp_active.learn;
#endif
}

/* Persistent sends (pmpi_learn_send.c): the observer's hooks on the shared table (pmpi_persist.c). add
 * looks up the counters of the request's (comm, dest) into note; start counts one message of the
 * request's bytes there (looking them up again when the records changed since). Both do nothing when
 * this rank does not learn. */
void rmp_learn_persist_add(const rmp_persist_t *p, rmp_persist_note_t *note);
void rmp_learn_persist_start(const rmp_persist_t *p, rmp_persist_note_t *note);

#pragma GCC visibility pop

#endif
