/*
 * plugin/mpi/pmpi_learn.h: internals of learning (pmpi_learn.c: records and counters; pmpi_learn_key.c:
 * keys, applying and collecting patterns; pmpi_learn_store.c: the store and its two back ends).
 * Error rule: 0 on success, -1 with err filled on failure.
 */
#ifndef RANKMAP_PMPI_LEARN_H
#define RANKMAP_PMPI_LEARN_H

#include <limits.h>

#include "pmpi.h"
#include "rm_pattern.h"

#pragma GCC visibility push(hidden)

#define RMP_LEARN_COMMS 16 /* topology communicators learned per process */

/* One tracked topology communicator. */
typedef struct rmp_learn_rec {
	MPI_Comm comm; /* the user's communicator (MPI_COMM_NULL: left out, or freed) */
	MPI_Comm priv; /* private duplicate of the call's communicator, for the finalize */
	int *nb;       /* sorted (rank in comm, slot) pairs, nnb of them */
	int *wnb;      /* the same with world ranks (sends on MPI_COMM_WORLD) */
	int nnb;
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

/* The hot path's one-entry cache: the last (communicator, destination, datatype) counted and where it
 * counted (bytes, messages). A loop sending to the same neighbour skips the search. Emptied
 * (RMP_LEARN_NOHIT) whenever a record stops counting or the world record changes. */
#define RMP_LEARN_NOHIT INT_MIN
typedef struct rmp_learn_hit {
	MPI_Comm comm;
	int dest; /* RMP_LEARN_NOHIT: empty */
	MPI_Datatype type;
	uint64_t size; /* bytes of one element of type */
	uint64_t *cnt;
} rmp_learn_hit_t;

typedef struct rmp_learn {
	rmp_learn_hit_t hit; /* first: one cache line with the hot path's other loads */
	int n;
	rmp_learn_rec_t rec[RMP_LEARN_COMMS];
	rmp_learn_rec_t *world; /* the record sends on MPI_COMM_WORLD are matched against */
	uint64_t untracked;     /* sends on communicators that are not tracked */
	int warned;             /* at most one learning warning per process */
	int calls;              /* topology calls with reorder=1 so far (their order) */
	uint64_t cmdline;       /* hash of the program's arguments (rm_pattern_usable), 0 unknown */
	int inputs;             /* cmdline includes the input files (rmp_learn_cmdline) */
} rmp_learn_t;

/* This process's (rank's) context, NULL when not learning. */
rmp_learn_t *rmp_learn_ctx(void);
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

/* Slot of rank r in a sorted (rank, slot) array, or -1. */
static inline int rmp_learn_find(const int *nb, int n, int r)
{
	if (n <= 8) {
		for (int i = 0; i < n; i++)
			if (nb[2 * i] == r)
				return nb[2 * i + 1];
		return -1;
	}
	int lo = 0, hi = n - 1;

	while (lo <= hi) {
		int mid = (lo + hi) >> 1;

		if (nb[2 * mid] < r)
			lo = mid + 1;
		else if (nb[2 * mid] > r)
			hi = mid - 1;
		else {
			while (mid > 0 && nb[2 * (mid - 1)] == r) /* duplicates: the first slot */
				mid--;
			return nb[2 * mid + 1];
		}
	}
	return -1;
}

static inline void rmp_learn_add(rmp_learn_t *l, rmp_learn_rec_t *c, int slot, MPI_Comm comm, int dest, int n,
				 MPI_Datatype type)
{
	uint64_t *k = slot >= 0 ? &c->cnt[2 * slot] : c->other, sz = (uint64_t)rmp_type_size(type);

	k[0] += (uint64_t)(n > 0 ? n : 0) * sz;
	k[1]++;
	l->hit = (rmp_learn_hit_t){ .comm = comm, .dest = dest, .type = type, .size = sz, .cnt = k };
}

/* The hot path: one send of n elements of type to rank dest of comm. Sends on communicators that are
 * not tracked are only counted (messages; no size is asked of the MPI library). */
static inline __attribute__((always_inline)) void rmp_learn_count(MPI_Comm comm, int dest, int n, MPI_Datatype type)
{
#ifdef RANKMAP_SMPI
	rmp_learn_t *l = rmp_learn_ctx();
#else
	rmp_learn_t *l = rmp_learn_active; /* the process's context itself */
#endif

	if (!l)
		return;
	if (dest == l->hit.dest && comm == l->hit.comm && type == l->hit.type) { /* the same as last time */
		l->hit.cnt[0] += (uint64_t)(n > 0 ? n : 0) * l->hit.size;
		l->hit.cnt[1]++;
		return;
	}
	if (dest < 0) /* MPI_PROC_NULL is negative in every MPI */
		return;
	for (int i = l->n; i-- > 0;) {
		rmp_learn_rec_t *c = &l->rec[i];

		if (c->comm == comm) {
			rmp_learn_add(l, c, rmp_learn_find(c->nb, c->nnb, dest), comm, dest, n, type);
			return;
		}
	}
	if (comm == MPI_COMM_WORLD && l->world) {
		rmp_learn_add(l, l->world, rmp_learn_find(l->world->wnb, l->world->nnb, dest), comm, dest, n, type);
		return;
	}
	l->untracked++;
}

#pragma GCC visibility pop

#endif
