/*
 * plugin/mpi/pmpi_wrap.c: the MPI entry points the observers see (MPI_Init, MPI_Finalize, sends,
 * persistent sends, neighbourhood collectives). Each forwards to its PMPI_ twin and, when some observer is
 * active (the tracer, RANKMAP_TRACE; learning, RANKMAP_LEARN), calls the observers' hooks (pmpi_core.c);
 * otherwise the cost is two loads from one cache line (rmp_active) and two predictable branches, and no
 * call before the PMPI_ one (the send wrappers then need no stack frame: the PMPI_ call is a tail jump).
 * Learning's one-entry cache is tested inline (rmp_send_quick, pmpi_learn.h); nothing here calls a
 * feature by name.
 */
#include "pmpi_entry.h"
#include "pmpi_learn.h"

int MPI_Init(int *argc, char ***argv)
{
	if (rmp_foreign) {
		rmp_foreign_warn();
		return PMPI_Init(argc, argv);
	}
	int rc = PMPI_Init(argc, argv);

	if (rc == MPI_SUCCESS) {
		rmp_obs_init(argc, argv);
		rmp_local_prefetch();
	}
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	if (rmp_foreign) {
		rmp_foreign_warn();
		return PMPI_Init_thread(argc, argv, required, provided);
	}
	int rc = PMPI_Init_thread(argc, argv, required, provided);

	if (rc == MPI_SUCCESS) {
		rmp_obs_init(argc, argv);
		rmp_local_prefetch();
	}
	return rc;
}

int MPI_Finalize(void)
{
	if (rmp_foreign)
		return PMPI_Finalize();
	rmp_obs_finalize();
	rmp_persist_free();
	return PMPI_Finalize();
}

/* ---- blocking and non-blocking sends ------------------------------------------------------ */

/* The tracer (RANKMAP_TRACE), then the learning counters (RANKMAP_LEARN). SEND_WRAPPER(fn, ...) defines
 * MPI_<fn>: its straight path (rmp_send_quick: nothing on, or learning's cache hit) ends in a tail jump
 * to PMPI_<fn>; every other case jumps to counted_<fn>, out of line, which calls rmp_send_slow (the
 * tracer, learning's miss) and then PMPI_<fn>. So the wrapper itself needs no stack frame: its cost on
 * the straight path is the few instructions of rmp_send_quick. */
#define SEND_WRAPPER(fn, params, args, comm, dest, count, type)                    \
	static __attribute__((noinline)) int counted_##fn params                   \
	{                                                                          \
		rmp_send_slow(comm, dest, count, type);                            \
		return PMPI_##fn args;                                             \
	}                                                                          \
	RMP_ENTRY(fn, params, args)                                                \
	int rmp_w_##fn params                                                      \
	{                                                                          \
		if (__builtin_expect(!rmp_send_quick(comm, dest, count, type), 0)) \
			return counted_##fn args;                                  \
		return PMPI_##fn args;                                             \
	}

#define P6 (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
#define A6 (buf, count, type, dest, tag, comm)
#define P7 (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
#define A7 (buf, count, type, dest, tag, comm, req)

SEND_WRAPPER(Send, P6, A6, comm, dest, count, type)
SEND_WRAPPER(Bsend, P6, A6, comm, dest, count, type)
SEND_WRAPPER(Ssend, P6, A6, comm, dest, count, type)
SEND_WRAPPER(Rsend, P6, A6, comm, dest, count, type)
SEND_WRAPPER(Isend, P7, A7, comm, dest, count, type)
SEND_WRAPPER(Ibsend, P7, A7, comm, dest, count, type)
SEND_WRAPPER(Issend, P7, A7, comm, dest, count, type)
SEND_WRAPPER(Irsend, P7, A7, comm, dest, count, type)
SEND_WRAPPER(Sendrecv,
	     (const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
	      MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status),
	     (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status), comm, dest, scount,
	     stype)
SEND_WRAPPER(Sendrecv_replace,
	     (void *buf, int count, MPI_Datatype type, int dest, int stag, int source, int rtag, MPI_Comm comm,
	      MPI_Status *status),
	     (buf, count, type, dest, stag, source, rtag, comm, status), comm, dest, count, type)

/* ---- persistent sends ------------------------------------------------------------------------ */

/* A persistent send counts at each MPI_Start (learning: after PMPI_Start succeeded); *_init remembers
 * its destination and bytes by request handle, MPI_Request_free forgets them. Persistent receives are
 * never remembered, so starting them counts nothing. As for the sends, the wrapper's straight path is
 * one test and a tail jump with the arguments untouched (under another MPI, pmpi_check.c, a handle may
 * be wider than this library's MPI_Comm: no copy of it may be made), the counting path is out of line. */
#define PERSIST_WRAPPER(fn)                                                                                            \
	static __attribute__((noinline)) int counted_##fn(const void *buf, int count, MPI_Datatype type, int dest,     \
							  int tag, MPI_Comm comm, MPI_Request *req)                    \
	{                                                                                                              \
		int rc = PMPI_##fn(buf, count, type, dest, tag, comm, req);                                            \
                                                                                                                       \
		if (rc == MPI_SUCCESS)                                                                                 \
			rmp_obs_persist_add(*req, comm, dest, count, type);                                            \
		return rc;                                                                                             \
	}                                                                                                              \
	RMP_ENTRY(fn,                                                                                                  \
		  (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req), \
		  (buf, count, type, dest, tag, comm, req))                                                            \
	int rmp_w_##fn(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,                \
		       MPI_Request *req)                                                                               \
	{                                                                                                              \
		if (__builtin_expect(rmp_active.trace || rmp_active.learn, 0))                                         \
			return counted_##fn(buf, count, type, dest, tag, comm, req);                                   \
		return PMPI_##fn(buf, count, type, dest, tag, comm, req);                                              \
	}

PERSIST_WRAPPER(Send_init)
PERSIST_WRAPPER(Bsend_init)
PERSIST_WRAPPER(Ssend_init)
PERSIST_WRAPPER(Rsend_init)

int MPI_Start(MPI_Request *req)
{
	/* read only when something counts: under another MPI a request may be narrower than MPI_Request */
	int on = req && (rmp_active.trace || rmp_active.learn);
	MPI_Request r = on ? *req : MPI_REQUEST_NULL;
	int rc = PMPI_Start(req);

	if (rc == MPI_SUCCESS && on) /* a start that failed sent nothing */
		rmp_obs_persist_start(r);
	return rc;
}

int MPI_Startall(int n, MPI_Request reqs[])
{
	int rc = PMPI_Startall(n, reqs);

	if (rc == MPI_SUCCESS && (rmp_active.trace || rmp_active.learn)) /* persistent handles are unchanged */
		for (int i = 0; i < n; i++)
			rmp_obs_persist_start(reqs[i]);
	return rc;
}

int MPI_Request_free(MPI_Request *req)
{
	if (req && (rmp_active.trace || rmp_active.learn))
		rmp_obs_persist_del(*req);
	return PMPI_Request_free(req);
}

/* ---- neighbourhood collectives (what each process sends to each out-neighbour) --------------- */

/* NEIGH_WRAPPER(fn, params, args, count, type, counts, types): as the send wrappers, a straight tail jump
 * when nothing counts, the counting out of line. */
#define NEIGH_WRAPPER(fn, params, args, count, type, counts, types)            \
	static __attribute__((noinline)) int counted_##fn params               \
	{                                                                      \
		rmp_obs_neighbors(comm, count, type, counts, types);           \
		return PMPI_##fn args;                                         \
	}                                                                      \
	RMP_ENTRY(fn, params, args)                                            \
	int rmp_w_##fn params                                                  \
	{                                                                      \
		if (__builtin_expect(rmp_active.trace || rmp_active.learn, 0)) \
			return counted_##fn args;                              \
		return PMPI_##fn args;                                         \
	}

#ifndef RANKMAP_SMPI /* SMPI has no neighbourhood collectives */
NEIGH_WRAPPER(Neighbor_allgather,
	      (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
	       MPI_Comm comm),
	      (sbuf, scount, stype, rbuf, rcount, rtype, comm), scount, stype, NULL, NULL)

NEIGH_WRAPPER(Neighbor_allgatherv,
	      (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[], const int displs[],
	       MPI_Datatype rtype, MPI_Comm comm),
	      (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm), scount, stype, NULL, NULL)

NEIGH_WRAPPER(Neighbor_alltoall,
	      (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
	       MPI_Comm comm),
	      (sbuf, scount, stype, rbuf, rcount, rtype, comm), scount, stype, NULL, NULL)

NEIGH_WRAPPER(Neighbor_alltoallv,
	      (const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
	       const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm),
	      (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm), 0, stype, scounts, NULL)

NEIGH_WRAPPER(Neighbor_alltoallw,
	      (const void *sbuf, const int scounts[], const MPI_Aint sdispls[], const MPI_Datatype stypes[], void *rbuf,
	       const int rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm),
	      (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm), 0, MPI_BYTE, scounts, stypes)

NEIGH_WRAPPER(Ineighbor_allgather,
	      (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
	       MPI_Comm comm, MPI_Request *req),
	      (sbuf, scount, stype, rbuf, rcount, rtype, comm, req), scount, stype, NULL, NULL)

NEIGH_WRAPPER(Ineighbor_allgatherv,
	      (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[], const int displs[],
	       MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req),
	      (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req), scount, stype, NULL, NULL)

NEIGH_WRAPPER(Ineighbor_alltoall,
	      (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
	       MPI_Comm comm, MPI_Request *req),
	      (sbuf, scount, stype, rbuf, rcount, rtype, comm, req), scount, stype, NULL, NULL)

NEIGH_WRAPPER(Ineighbor_alltoallv,
	      (const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
	       const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req),
	      (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req), 0, stype, scounts, NULL)

NEIGH_WRAPPER(Ineighbor_alltoallw,
	      (const void *sbuf, const int scounts[], const MPI_Aint sdispls[], const MPI_Datatype stypes[], void *rbuf,
	       const int rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
	       MPI_Request *req),
	      (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, req), 0, MPI_BYTE, scounts, stypes)
#endif
