/*
 * tests/mpi/trace_split.c: traffic on a communicator whose ranks are not MPI_COMM_WORLD's, for the
 * tracer's rank translation.
 *
 * The world is split by parity, each half ordered by decreasing world rank (key = -rank); in its half,
 * sub-rank s sends one 10-byte message to sub-rank s+1 (mod the half's size). The tracer must record
 * it between the world ranks of sender and receiver. Prints "ok" from world rank 0.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int wrank, s, n;
	char out[10] = "abcdefghi", in[10];
	MPI_Comm half;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &half);
	MPI_Comm_rank(half, &s);
	MPI_Comm_size(half, &n);
	MPI_Sendrecv(out, 10, MPI_CHAR, (s + 1) % n, 0, in, 10, MPI_CHAR, (s + n - 1) % n, 0, half, MPI_STATUS_IGNORE);
	MPI_Comm_free(&half);
	if (wrank == 0)
		printf("ok\n");
	MPI_Finalize();
	return 0;
}
