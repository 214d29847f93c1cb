/*
 * plugin/mpi/pmpi_obs.h: what the observers of the core (the tracer, pmpi_trace.c; learning,
 * pmpi_learn*.c) and the send wrappers (pmpi_wrap.c) share, defined in pmpi_persist.c: the wrappers'
 * switches and learning's cache entry in one cache line, the one persistent-request table and the
 * out-neighbour lookup. The core (pmpi.h, pmpi_core.c) and the topology call's path do not include it.
 */
#ifndef RANKMAP_PMPI_OBS_H
#define RANKMAP_PMPI_OBS_H

#include "pmpi.h"

#pragma GCC visibility push(hidden)

/* Learning's one-entry cache (pmpi_learn.h): the last (communicator, destination, datatype, count)
 * counted, where it counts (bytes, messages) and the messages sent through it since it was filled. A
 * loop sending the same message to the same neighbour compares four values and bumps one counter: no
 * search, no multiply. The entry is flushed (msgs times the message's bytes, and msgs, added to *cnt;
 * the entry emptied: dest RMP_LEARN_NOHIT) when another send misses it (a new count for the same
 * destination only refills it, without a search), whenever a record stops counting or the world record
 * changes, and before the counters are read (rmp_learn_flush). */
#define RMP_LEARN_NOHIT INT_MIN
typedef struct rmp_learn_hit {
	MPI_Comm comm;
	int dest;  /* RMP_LEARN_NOHIT: empty */
	int count; /* elements per message (a negative one: 0 bytes, as the MPI call fails) */
	MPI_Datatype type;
	uint64_t msgs;  /* messages sent through the entry since it was filled */
	uint64_t bytes; /* of one message (0 for untracked communicators: no size is asked) */
	uint64_t *cnt;  /* bytes, messages: a slot's, a record's "other" or the process's "untracked" */
} rmp_learn_hit_t;

/* The send wrappers' state (pmpi_wrap.c, defined in pmpi_persist.c), one 64-byte cache line: trace is non-NULL while some rank
 * of the process traces (pmpi_trace.c), learn while some rank learns (pmpi_learn.c), and hit is the
 * process's learning cache entry (under SMPI each rank has its own, in its context), so that a send
 * counted by a hit touches no other line than a send with nothing on. */
struct rmp_active {
	void *trace;
	void *learn;
#ifndef RANKMAP_SMPI
	rmp_learn_hit_t hit;
#endif
};
extern struct rmp_active rmp_active;

/* One observer's note on a persistent request: what it looked up once (the tracer: the destination's
 * world rank; learning: its counters), zero until it writes it. */
typedef struct rmp_persist_note {
	void *p;
	unsigned gen;
	int set;
} rmp_persist_note_t;
/* A live persistent send request, in the one table the observers share. */
typedef struct rmp_persist {
	uint64_t key; /* request handle bits + 2; 0: empty, 1: deleted */
	MPI_Comm comm;
	int dest;
	uint64_t bytes; /* of one start */
	rmp_persist_note_t note[RMP_OBSERVERS_MAX];
} rmp_persist_t;
/* *_init succeeded (call only while some observer is active): remembers the request and gives its entry
 * to each active observer's persist_add. */
void rmp_obs_persist_add(MPI_Request req, MPI_Comm comm, int dest, int n, MPI_Datatype type);
/* MPI_Start succeeded: each active observer's persist_start with the request's entry (nothing for a
 * request the table does not hold). */
void rmp_obs_persist_start(MPI_Request req);
/* MPI_Request_free: forgets it. */
void rmp_obs_persist_del(MPI_Request req);
/* MPI_Finalize, after the observers': frees the table. */
void rmp_persist_free(void);
/* The out-neighbours of this process in comm, of topology status (MPI_Topo_test's answer), in the order
 * of the neighbourhood collectives (Cartesian: 2d the -1 neighbour of dimension d, 2d + 1 the +1 one;
 * graphs: as MPI_Graph_neighbors / the destinations); malloc'ed, *n their count; NULL (and 0) when none. */
int *rmp_out_neighbors(MPI_Comm comm, int status, int *n);

/* The neighbour table (pmpi_nbr.c): what destination d of a communicator is, one structure with two
 * views, each filled by the feature that asks it (pmpi_nbr.c says why they differ). Zero: empty. */
typedef struct rmp_nbr {
	/* world view (the tracer): rank -> world rank for every rank of the communicator */
	int inter; /* an intercommunicator, or no memory for the translation: no answer */
	int ident; /* same group as MPI_COMM_WORLD, same order: no table */
	int size;
	int *world; /* size entries (other communicators) */
	/* neighbour view (learning): the out-neighbours only, as sorted (key, out-neighbour index) pairs */
	int *by_rank;  /* key: the neighbour's rank in the communicator; nrank pairs */
	int *by_world; /* key: its rank in MPI_COMM_WORLD (sends on the world); nworld pairs */
	int nrank, nworld;
} rmp_nbr_t;
/* Fills m's world view for comm (on failure m->inter is set: nothing is answered). */
void rmp_nbr_world_build(rmp_nbr_t *m, MPI_Comm comm);
/* World rank of rank r of m's communicator, or -1. Inline: the tracer's send path. */
static inline int rmp_nbr_world(const rmp_nbr_t *m, int r)
{
	if (m->inter || r >= m->size)
		return -1;
	return m->ident ? r : m->world[r];
}
/* Fills m's neighbour view from comm's out-neighbours v[0..n) (their ranks in comm, -1 for none; the
 * index is the position in v). 0, or -1 out of memory. */
int rmp_nbr_neighbours(rmp_nbr_t *m, MPI_Comm comm, const int *v, int n);
/* Out-neighbour index of key r in sorted pairs nb (n of them: m->by_rank/nrank or m->by_world/nworld),
 * the first one when r is there more than once; -1 when r is no out-neighbour. */
int rmp_nbr_index(const int *nb, int n, int r);
/* Frees what m holds and empties it. */
void rmp_nbr_free(rmp_nbr_t *m);

#pragma GCC visibility pop

#endif
