/*
 * tests/bench/pmpi/msgrate.c: a message-rate loop for the tracer's overhead.
 *
 * Usage: msgrate MESSAGES REPEATS [cart]   (2 ranks or more; pairs (2i, 2i+1) exchange)
 * With "cart" the loop runs on a 1-D periodic MPI_Cart_create(reorder=1) communicator of all ranks
 * instead of MPI_COMM_WORLD (what RANKMAP_LEARN counts: sends on a topology communicator).
 * Each repeat: the even rank of a pair sends MESSAGES 8-byte messages (in windows of 64 sends, then
 * MPI_Waitall) and the odd rank receives them, then one acknowledgement back. The sender's windows
 * alternate between MPI_Isend (through whatever library is preloaded) and PMPI_Isend (straight into the
 * MPI library), so that the wrapper's own cost is measured inside one process, under the same load.
 * Rank 0 prints "best_us_per_msg=X best_cpu_us_per_msg=Y isend_ns=Z pisend_ns=P wrap_ns=W ...": the best
 * repeat's wall time (slowest rank), the sending rank 0's CPU time per message, the cost of one
 * MPI_Isend and of one PMPI_Isend call on rank 0 over the fastest window of 64 calls of each kind (robust
 * on a shared machine: a window during which the process was descheduled or the queue was full is simply
 * not the fastest), the median over adjacent pairs of windows of their difference per call: what the
 * wrapper adds to one MPI_Isend, and "win_msg_ns=M": the loop's cost per message from its fastest
 * windows (sends or receives, and their MPI_Waitall; the sender's PMPI_Isend windows only), the slower
 * of the two sides: as robust to other load as the figures above.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WIN 64

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000, reps = argc > 2 ? atoi(argv[2]) : 5, rank, size;
	double best = 1e30, best_cpu = 1e30, best_win = 1e30, best_pwin = 1e30, best_full = 1e30, buf[WIN], ack = 0,
	       last = 0;
	MPI_Request req[WIN];
	/* per pair of full windows (MPI_Isend, then PMPI_Isend): their difference */
	double *diff = malloc(sizeof(double) * (size_t)(reps * (n / WIN / 2 + 1) + 1));
	int ndiff = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm comm = MPI_COMM_WORLD;

	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 3 && argv[3][0] == 'c') {
		int per = 1;

		MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &per, 1, &comm);
	}
	MPI_Comm_rank(comm, &rank);
	int peer = rank ^ 1;

	for (int i = 0; i < WIN; i++)
		buf[i] = i;
	for (int r = 0; r < reps; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime(), c0 = cpu_s(), dt, mx;

		if (peer < size) {
			for (int done = 0, w = 0; done < n; done += WIN, w++) {
				int k = n - done < WIN ? n - done : WIN, direct = w % 2;
				double ws = MPI_Wtime(), w0 = ws;

				for (int i = 0; i < k; i++) {
					if (rank % 2)
						MPI_Irecv(&buf[i], 1, MPI_DOUBLE, peer, 0, comm, &req[i]);
					else if (direct)
						PMPI_Isend(&buf[i], 1, MPI_DOUBLE, peer, 0, comm, &req[i]);
					else
						MPI_Isend(&buf[i], 1, MPI_DOUBLE, peer, 0, comm, &req[i]);
				}
				w0 = MPI_Wtime() - w0;
				if (k == WIN && !direct && w0 < best_win)
					best_win = w0;
				if (k == WIN && direct && w0 < best_pwin)
					best_pwin = w0;
				if (k == WIN && direct && last > 0 && diff)
					diff[ndiff++] = last - w0;
				last = k == WIN && !direct ? w0 : 0;
				MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
				ws = MPI_Wtime() - ws; /* the window's sends and their completion */
				if (k == WIN && (direct || rank % 2) && ws < best_full)
					best_full = ws;
			}
			if (rank % 2)
				MPI_Send(&ack, 1, MPI_DOUBLE, peer, 1, comm);
			else
				MPI_Recv(&ack, 1, MPI_DOUBLE, peer, 1, comm, MPI_STATUS_IGNORE);
		}
		dt = MPI_Wtime() - t0;
		if (cpu_s() - c0 < best_cpu)
			best_cpu = cpu_s() - c0;
		MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		if (mx < best)
			best = mx;
	}
	if (diff && ndiff)
		qsort(diff, (size_t)ndiff, sizeof(double), cmp_d);
	double full = 0;

	MPI_Reduce(&best_full, &full, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD); /* the slower side's */
	if (rank == 0)
		printf("best_us_per_msg=%.4f best_cpu_us_per_msg=%.4f isend_ns=%.2f pisend_ns=%.2f wrap_ns=%.2f "
		       "win_msg_ns=%.2f\n",
		       best * 1e6 / n, best_cpu * 1e6 / n, best_win * 1e9 / WIN, best_pwin * 1e9 / WIN,
		       diff && ndiff ? diff[ndiff / 2] * 1e9 / WIN : 0.0, full * 1e9 / WIN);
	free(diff);
	if (comm != MPI_COMM_WORLD)
		MPI_Comm_free(&comm);
	MPI_Finalize();
	return 0;
}
