/*
 * tests/bench/pmpi/cart_bench.c: time of MPI_Cart_create on MPI_COMM_WORLD (2D periodic grid from
 * MPI_Dims_create), reorder given on the command line.
 *
 * Usage: cart_bench REORDER ITERATIONS
 * Each iteration: barrier, MPI_Cart_create, MPI_Comm_free; the time of an iteration is the slowest
 * rank's. Rank 0 prints "median_ms=M min_ms=N" over the iterations (after one warm-up call).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int reorder = argc > 1 ? atoi(argv[1]) : 1, iters = argc > 2 ? atoi(argv[2]) : 10, size, rank;
	int dims[2] = { 0, 0 }, periods[2] = { 1, 1 };

	MPI_Init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Dims_create(size, 2, dims);
	if (iters < 1)
		iters = 1;
	double *t = malloc(sizeof(double) * (size_t)iters);

	for (int i = -1; i < iters; i++) {
		MPI_Comm cart;
		double t0, dt, mx;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, reorder, &cart);
		dt = MPI_Wtime() - t0;
		MPI_Comm_free(&cart);
		MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		if (i >= 0)
			t[i] = mx * 1e3;
	}
	qsort(t, (size_t)iters, sizeof(double), cmp);
	if (rank == 0)
		printf("median_ms=%.3f min_ms=%.3f\n", t[iters / 2], t[0]);
	free(t);
	MPI_Finalize();
	return 0;
}
