/*
 * plugin/mpi/pmpi_trace_mpi.c: the MPI entry points the tracer intercepts. Each forwards to its PMPI_
 * twin and, when RANKMAP_TRACE is set, counts what was sent (pmpi_trace.c), and with RANKMAP_LEARN adds
 * it to the learning counters (pmpi_learn.c); otherwise the cost is two predictable branches.
 */
#include "pmpi_learn.h"

int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);

	if (rc == MPI_SUCCESS) {
		rmp_trace_init();
		rmp_learn_init(argc, argv);
	}
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);

	if (rc == MPI_SUCCESS) {
		rmp_trace_init();
		rmp_learn_init(argc, argv);
	}
	return rc;
}

int MPI_Finalize(void)
{
	rmp_learn_finalize();
	rmp_trace_finalize();
	return PMPI_Finalize();
}

/* ---- blocking and non-blocking sends ------------------------------------------------------ */

/* The tracer (RANKMAP_TRACE), then the learning counters (RANKMAP_LEARN): one test of a global each. */
#define TRACE_SEND(comm, dest, count, type)                       \
	do {                                                      \
		rmp_trace_send(comm, dest, count, type);          \
		if (rmp_learn_active)                             \
			rmp_learn_count(comm, dest, count, type); \
	} while (0)

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
	TRACE_SEND(comm, dest, count, type);
	return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
	TRACE_SEND(comm, dest, count, type);
	return PMPI_Bsend(buf, count, type, dest, tag, comm);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
	TRACE_SEND(comm, dest, count, type);
	return PMPI_Ssend(buf, count, type, dest, tag, comm);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
	TRACE_SEND(comm, dest, count, type);
	return PMPI_Rsend(buf, count, type, dest, tag, comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
	TRACE_SEND(comm, dest, count, type);
	return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
	TRACE_SEND(comm, dest, count, type);
	return PMPI_Ibsend(buf, count, type, dest, tag, comm, req);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
	TRACE_SEND(comm, dest, count, type);
	return PMPI_Issend(buf, count, type, dest, tag, comm, req);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
	TRACE_SEND(comm, dest, count, type);
	return PMPI_Irsend(buf, count, type, dest, tag, comm, req);
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
		 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
	TRACE_SEND(comm, dest, scount, stype);
	return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int source, int rtag,
			 MPI_Comm comm, MPI_Status *status)
{
	TRACE_SEND(comm, dest, count, type);
	return PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, status);
}

/* ---- persistent sends ------------------------------------------------------------------------ */

#define TRACE_PERSIST(rc, req, comm, dest, count, type)                         \
	do {                                                                    \
		if ((rc) == MPI_SUCCESS && rmp_trace_on())                      \
			rmp_trace_persist_add(*(req), comm, dest, count, type); \
	} while (0)

int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
	int rc = PMPI_Send_init(buf, count, type, dest, tag, comm, req);

	TRACE_PERSIST(rc, req, comm, dest, count, type);
	return rc;
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
	int rc = PMPI_Bsend_init(buf, count, type, dest, tag, comm, req);

	TRACE_PERSIST(rc, req, comm, dest, count, type);
	return rc;
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
	int rc = PMPI_Ssend_init(buf, count, type, dest, tag, comm, req);

	TRACE_PERSIST(rc, req, comm, dest, count, type);
	return rc;
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
	int rc = PMPI_Rsend_init(buf, count, type, dest, tag, comm, req);

	TRACE_PERSIST(rc, req, comm, dest, count, type);
	return rc;
}

int MPI_Start(MPI_Request *req)
{
	if (rmp_trace_on())
		rmp_trace_persist_start(*req);
	return PMPI_Start(req);
}

int MPI_Startall(int n, MPI_Request reqs[])
{
	if (rmp_trace_on())
		for (int i = 0; i < n; i++)
			rmp_trace_persist_start(reqs[i]);
	return PMPI_Startall(n, reqs);
}

int MPI_Request_free(MPI_Request *req)
{
	if (rmp_trace_on())
		rmp_trace_persist_del(*req);
	return PMPI_Request_free(req);
}

/* ---- neighbourhood collectives (what each process sends to each out-neighbour) --------------- */

#define TRACE_NEIGH(comm, count, type, counts, types)                          \
	do {                                                                   \
		if (rmp_trace_on())                                            \
			rmp_trace_neighbors(comm, count, type, counts, types); \
		if (rmp_learn_active)                                          \
			rmp_learn_neighbors(comm, count, type, counts, types); \
	} while (0)

#ifndef RANKMAP_SMPI /* SMPI has no neighbourhood collectives */
int MPI_Neighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
			   MPI_Comm comm)
{
	TRACE_NEIGH(comm, scount, stype, NULL, NULL);
	return PMPI_Neighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int MPI_Neighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
			    const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
	TRACE_NEIGH(comm, scount, stype, NULL, NULL);
	return PMPI_Neighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
}

int MPI_Neighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
			  MPI_Comm comm)
{
	TRACE_NEIGH(comm, scount, stype, NULL, NULL);
	return PMPI_Neighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int MPI_Neighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
			   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
	TRACE_NEIGH(comm, 0, stype, scounts, NULL);
	return PMPI_Neighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
}

int MPI_Neighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[], const MPI_Datatype stypes[],
			   void *rbuf, const int rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[],
			   MPI_Comm comm)
{
	TRACE_NEIGH(comm, 0, MPI_BYTE, scounts, stypes);
	return PMPI_Neighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
}

int MPI_Ineighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
			    MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	TRACE_NEIGH(comm, scount, stype, NULL, NULL);
	return PMPI_Ineighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
}

int MPI_Ineighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
			     const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	TRACE_NEIGH(comm, scount, stype, NULL, NULL);
	return PMPI_Ineighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req);
}

int MPI_Ineighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
			   MPI_Comm comm, MPI_Request *req)
{
	TRACE_NEIGH(comm, scount, stype, NULL, NULL);
	return PMPI_Ineighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
}

int MPI_Ineighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
			    const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
			    MPI_Request *req)
{
	TRACE_NEIGH(comm, 0, stype, scounts, NULL);
	return PMPI_Ineighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req);
}

int MPI_Ineighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
			    const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
			    const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Request *req)
{
	TRACE_NEIGH(comm, 0, MPI_BYTE, scounts, stypes);
	return PMPI_Ineighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, req);
}
#endif
