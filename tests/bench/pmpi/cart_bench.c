/*
 * tests/bench/pmpi/cart_bench.c: time of MPI_Cart_create on MPI_COMM_WORLD (2D periodic grid from
 * MPI_Dims_create), or of MPI_Dist_graph_create_adjacent with the same grid's four neighbours, reorder
 * given on the command line.
 *
 * Usage: cart_bench REORDER ITERATIONS [cart|dist]
 * Each iteration: barrier, the create call, MPI_Comm_free; the time of an iteration is the slowest
 * rank's. Rank 0 prints "median_ms=M min_ms=N" over the iterations (after one warm-up call), then
 * "first_ms=F" (the warm-up call: the process's first topology call, slowest rank) and the memory the
 * ranks hold after the calls: "heap_kb_max=H heap_kb_root=R" (malloc'ed bytes in use, mallinfo2: what the
 * library keeps beside the program, the largest rank and rank 0) and "rss_kb_max=S" (resident set, VmRSS).
 */
#include <malloc.h>
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
	int dims[2] = { 0, 0 }, periods[2] = { 1, 1 }, dist = argc > 3 && argv[3][0] == 'd';
	int nb[4], w[4] = { 1, 1, 1, 1 };

	MPI_Init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Dims_create(size, 2, dims);
	{ /* the grid's four neighbours of this rank (row-major, periodic) */
		int r = rank / dims[1], c = rank % dims[1];
		nb[0] = ((r + dims[0] - 1) % dims[0]) * dims[1] + c, nb[1] = ((r + 1) % dims[0]) * dims[1] + c;
		nb[2] = r * dims[1] + (c + dims[1] - 1) % dims[1], nb[3] = r * dims[1] + (c + 1) % dims[1];
	}
	if (iters < 1)
		iters = 1;
	double *t = malloc(sizeof(double) * (size_t)iters), first = 0;

	for (int i = -1; i < iters; i++) {
		MPI_Comm cart;
		double t0, dt, mx;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		if (dist)
			MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 4, nb, w, 4, nb, w, MPI_INFO_NULL, reorder,
						       &cart);
		else
			MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, reorder, &cart);
		dt = MPI_Wtime() - t0;
		MPI_Comm_free(&cart);
		MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		if (i >= 0)
			t[i] = mx * 1e3;
		else
			first = mx * 1e3;
	}
	qsort(t, (size_t)iters, sizeof(double), cmp);
	double med = t[iters / 2], lo = t[0];

	free(t);
	{ /* memory held after the calls: heap in use, resident set (VmRSS) */
		long mem[2] = { (long)(mallinfo2().uordblks / 1024), 0 }, mx[2], root = mem[0];
		char line[256];
		FILE *f = fopen("/proc/self/status", "r");

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "VmRSS: %ld", &mem[1]) == 1)
				break;
		if (f)
			fclose(f);
		MPI_Reduce(mem, mx, 2, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
		if (rank == 0)
			printf("median_ms=%.3f min_ms=%.3f first_ms=%.3f heap_kb_max=%ld heap_kb_root=%ld "
			       "rss_kb_max=%ld\n",
			       med, lo, first, mx[0], root, mx[1]);
	}
	MPI_Finalize();
	return 0;
}
