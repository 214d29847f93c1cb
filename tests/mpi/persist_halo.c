/*
 * tests/mpi/persist_halo.c: a Cartesian halo exchange made of persistent requests, plus a few plain sends,
 * for the learning tests (RANKMAP_LEARN counts each MPI_Start of a persistent send, never one of a
 * receive, and every plain send exactly, whatever its count).
 *
 * Usage: persist_halo D0 D1 P0 P1 ITERS   (a 2-D grid, reorder=1)
 * Every rank makes one persistent send of each kind, each to a neighbour (MPI_PROC_NULL at open
 * borders, which is valid and sends nothing):
 *   dimension 0, +1: MPI_Send_init  300 doubles     dimension 0, -1: MPI_Ssend_init 200 ints
 *   dimension 1, +1: MPI_Bsend_init  50 doubles     dimension 1, -1: MPI_Rsend_init  25 ints
 * and the four matching persistent receives. Each iteration starts the receives (MPI_Startall on even
 * iterations, MPI_Start one by one on odd ones), a barrier, the dimension-0 sends one by one with
 * MPI_Start and the dimension-1 sends with MPI_Startall, then waits for all eight. Then plain sends:
 * MPI_Isend of 10, 11 or 12 doubles (the count turns each iteration) to dimension 0's +1 neighbour and
 * twice 5 ints to dimension 1's -1 neighbour (the learning cache's refill and hit). Afterwards the send
 * requests are freed and, on a duplicate of the grid (not a topology communicator), a persistent receive
 * is started again (it may reuse a freed send's handle) against plain sends: none of that is traffic of
 * the grid.
 * Rank 0 prints what the program itself sent on the grid, per rank on average (sums over ranks / size),
 * as "expect dim0=BM,BP,MM,MP dim1=BM,BP,MM,MP" (bytes to the -1 neighbour, to the +1 neighbour, then
 * messages), and "errors=N" for received data that did not match.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N0P 300 /* doubles, dimension 0, to +1 */
#define N0M 200 /* ints, dimension 0, to -1 */
#define N1P 50  /* doubles, dimension 1, to +1 */
#define N1M 25  /* ints, dimension 1, to -1 */

/* The plain sends of iteration it (see above), added to sent[]. */
static void plain(MPI_Comm cart, const int *lo, const int *hi, int it, double *sent)
{
	static double x[12], y[12];
	static int a[5], b[10];
	MPI_Request q[6];
	int c = 10 + it % 3;

	MPI_Irecv(y, 12, MPI_DOUBLE, lo[0], 30, cart, &q[0]);
	MPI_Irecv(b, 5, MPI_INT, hi[1], 31, cart, &q[1]);
	MPI_Irecv(b + 5, 5, MPI_INT, hi[1], 31, cart, &q[2]);
	MPI_Isend(x, c, MPI_DOUBLE, hi[0], 30, cart, &q[3]);
	MPI_Isend(a, 5, MPI_INT, lo[1], 31, cart, &q[4]);
	MPI_Isend(a, 5, MPI_INT, lo[1], 31, cart, &q[5]);
	MPI_Waitall(6, q, MPI_STATUSES_IGNORE);
	if (hi[0] != MPI_PROC_NULL)
		sent[1] += c * sizeof(double), sent[3]++;
	if (lo[1] != MPI_PROC_NULL)
		sent[4] += 2 * 5 * sizeof(int), sent[6] += 2;
}

int main(int argc, char **argv)
{
	int dims[2], per[2], iters, size, me, errors = 0, all_errors = 0;
	int lo[2], hi[2]; /* the -1 and +1 neighbours of each dimension */

	MPI_Init(&argc, &argv);
	if (argc < 6) {
		fprintf(stderr, "usage: persist_halo D0 D1 P0 P1 ITERS\n");
		MPI_Finalize();
		return 2;
	}
	dims[0] = atoi(argv[1]), dims[1] = atoi(argv[2]), per[0] = atoi(argv[3]), per[1] = atoi(argv[4]);
	iters = atoi(argv[5]);
	MPI_Comm cart, dup;

	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 1, &cart);
	if (cart == MPI_COMM_NULL) {
		MPI_Finalize();
		return 0;
	}
	MPI_Comm_size(cart, &size);
	MPI_Comm_rank(cart, &me);
	for (int d = 0; d < 2; d++)
		MPI_Cart_shift(cart, d, 1, &lo[d], &hi[d]);
	static double s0p[N0P], r0p[N0P], s1p[N1P], r1p[N1P];
	static int s0m[N0M], r0m[N0M], s1m[N1M], r1m[N1M];
	int bsize = 2 * (N1P * (int)sizeof(double) + MPI_BSEND_OVERHEAD);
	void *bbuf = malloc((size_t)bsize);

	MPI_Buffer_attach(bbuf, bsize);
	MPI_Request rq[8]; /* sends 0..3, receives 4..7 */

	MPI_Send_init(s0p, N0P, MPI_DOUBLE, hi[0], 10, cart, &rq[0]);
	MPI_Ssend_init(s0m, N0M, MPI_INT, lo[0], 11, cart, &rq[1]);
	MPI_Bsend_init(s1p, N1P, MPI_DOUBLE, hi[1], 12, cart, &rq[2]);
	MPI_Rsend_init(s1m, N1M, MPI_INT, lo[1], 13, cart, &rq[3]);
	MPI_Recv_init(r0p, N0P, MPI_DOUBLE, lo[0], 10, cart, &rq[4]);
	MPI_Recv_init(r0m, N0M, MPI_INT, hi[0], 11, cart, &rq[5]);
	MPI_Recv_init(r1p, N1P, MPI_DOUBLE, lo[1], 12, cart, &rq[6]);
	MPI_Recv_init(r1m, N1M, MPI_INT, hi[1], 13, cart, &rq[7]);
	/* what this rank sends on the grid: bytes to -1, to +1, messages to -1, to +1, per dimension */
	double sent[8] = { 0 }, sum[8] = { 0 };

	for (int it = 0; it < iters; it++) {
		for (int i = 0; i < N0P; i++)
			s0p[i] = me + it;
		for (int i = 0; i < N1P; i++)
			s1p[i] = me - it;
		s0m[0] = me * 7 + it, s1m[0] = me * 5 + it;
		if (it % 2 == 0)
			MPI_Startall(4, &rq[4]);
		else
			for (int i = 4; i < 8; i++)
				MPI_Start(&rq[i]);
		MPI_Barrier(cart); /* every receive is posted before the ready-mode send starts */
		MPI_Start(&rq[0]);
		MPI_Start(&rq[1]);
		MPI_Startall(2, &rq[2]);
		MPI_Waitall(8, rq, MPI_STATUSES_IGNORE);
		if (lo[0] != MPI_PROC_NULL && r0p[0] != lo[0] + it)
			errors++;
		if (hi[1] != MPI_PROC_NULL && r1m[0] != hi[1] * 5 + it)
			errors++;
		if (hi[0] != MPI_PROC_NULL)
			sent[1] += N0P * sizeof(double), sent[3]++;
		if (lo[0] != MPI_PROC_NULL)
			sent[0] += N0M * sizeof(int), sent[2]++;
		if (hi[1] != MPI_PROC_NULL)
			sent[5] += N1P * sizeof(double), sent[7]++;
		if (lo[1] != MPI_PROC_NULL)
			sent[4] += N1M * sizeof(int), sent[6]++;
		plain(cart, lo, hi, it, sent);
	}
	for (int i = 0; i < 8; i++)
		MPI_Request_free(&rq[i]);
	/* not the grid's traffic: a persistent receive on a duplicate, perhaps with a freed send's handle */
	MPI_Comm_dup(cart, &dup);
	MPI_Request pr;
	int got = -1, from = (me + size - 1) % size, to = (me + 1) % size;

	MPI_Recv_init(&got, 1, MPI_INT, from, 20, dup, &pr);
	for (int it = 0; it < 3; it++) {
		MPI_Start(&pr);
		MPI_Send(&me, 1, MPI_INT, to, 20, dup);
		MPI_Wait(&pr, MPI_STATUS_IGNORE);
		errors += got != from;
	}
	MPI_Request_free(&pr);
	MPI_Comm_free(&dup);
	MPI_Buffer_detach(&bbuf, &bsize);
	free(bbuf);
	MPI_Reduce(sent, sum, 8, MPI_DOUBLE, MPI_SUM, 0, cart);
	MPI_Reduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, 0, cart);
	if (me == 0) {
		for (int i = 0; i < 8; i++)
			sum[i] /= size;
		printf("expect dim0=%.6f,%.6f,%.6f,%.6f dim1=%.6f,%.6f,%.6f,%.6f errors=%d\n", sum[0], sum[1], sum[2],
		       sum[3], sum[4], sum[5], sum[6], sum[7], all_errors);
	}
	MPI_Comm_free(&cart);
	MPI_Finalize();
	return errors ? 1 : 0;
}
