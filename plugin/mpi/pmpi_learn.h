/*
 * plugin/mpi/pmpi_learn.h: internals of learning (pmpi_learn.c: records and counters; pmpi_learn_key.c:
 * keys, applying and collecting patterns; pmpi_learn_store.c: the store and its two back ends).
 * Error rule: 0 on success, -1 with err filled on failure.
 */
#ifndef RANKMAP_PMPI_LEARN_H
#define RANKMAP_PMPI_LEARN_H

#include "pmpi.h"
#include "rm_pattern.h"

#define RMP_LEARN_COMMS 16 /* topology communicators learned per process */

/* One tracked topology communicator. */
typedef struct rmp_learn_rec {
	MPI_Comm comm;          /* the user's communicator (MPI_COMM_NULL: left out, or freed) */
	MPI_Comm priv;          /* private duplicate of the call's communicator, for the finalize */
	int *nb;                /* sorted (rank in comm, slot) pairs, nnb of them */
	int *wnb;               /* the same with world ranks (sends on MPI_COMM_WORLD) */
	int nnb;
	int nslots;             /* slots: 2 * ndims, or the out-degree */
	int *slot_rank;         /* rank of each slot's neighbour (-1: none) */
	uint64_t *cnt;          /* bytes, msgs per slot */
	uint64_t other[2];      /* bytes, msgs to ranks that are not neighbours */
	int vertex;             /* this process's rank in comm, -1 when left out */
	int rank;               /* this process's rank in the call's communicator (0: the root) */
	uint32_t nverts;
	uint32_t order;
	char fn[RM_PATTERN_FN_LEN];
	int ndims;              /* Cartesian: dimensions, periods; 0 for graphs */
	int periods[RM_PATTERN_MAXDIMS];
	uint64_t *xadj;         /* root, graphs: the call's graph structure */
	uint32_t *adj;
	uint32_t gn;
	uint64_t ghash;
} rmp_learn_rec_t;

typedef struct rmp_learn {
	int n;
	rmp_learn_rec_t rec[RMP_LEARN_COMMS];
	rmp_learn_rec_t *world; /* the record sends on MPI_COMM_WORLD are matched against */
	uint64_t untracked[2];
	int warned;             /* at most one learning warning per process */
	int calls;              /* topology calls with reorder=1 so far (their order) */
} rmp_learn_t;

/* This process's (rank's) context, NULL when not learning. */
rmp_learn_t *rmp_learn_ctx(void);
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

#endif
