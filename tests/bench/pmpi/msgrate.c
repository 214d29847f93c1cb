/*
 * tests/bench/pmpi/msgrate.c: a message-rate loop for the tracer's overhead.
 *
 * Usage: msgrate MESSAGES REPEATS [cart]   (2 ranks or more; pairs (2i, 2i+1) exchange)
 * With "cart" the loop runs on a 1-D periodic MPI_Cart_create(reorder=1) communicator of all ranks
 * instead of MPI_COMM_WORLD (what RANKMAP_LEARN counts: sends on a topology communicator).
 * Each repeat: the even rank of a pair sends MESSAGES 8-byte messages (MPI_Isend in windows of 64,
 * then MPI_Waitall) and the odd rank receives them, then one acknowledgement back. Rank 0 prints
 * "best_us_per_msg=X best_cpu_us_per_msg=Y isend_ns=Z": the best repeat's wall time (slowest rank),
 * the sending rank 0's CPU time per message, and the cost of one MPI_Isend call on rank 0 measured
 * over the fastest window of 64 calls (robust on a shared machine: a window during which the process
 * was descheduled or the queue was full is simply not the fastest).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WIN 64

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000, reps = argc > 2 ? atoi(argv[2]) : 5, rank, size;
	double best = 1e30, best_cpu = 1e30, best_win = 1e30, buf[WIN], ack = 0;
	MPI_Request req[WIN];

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
			for (int done = 0; done < n; done += WIN) {
				int k = n - done < WIN ? n - done : WIN;
				double w0 = MPI_Wtime();

				for (int i = 0; i < k; i++) {
					if (rank % 2 == 0)
						MPI_Isend(&buf[i], 1, MPI_DOUBLE, peer, 0, comm, &req[i]);
					else
						MPI_Irecv(&buf[i], 1, MPI_DOUBLE, peer, 0, comm, &req[i]);
				}
				w0 = MPI_Wtime() - w0;
				if (k == WIN && w0 < best_win)
					best_win = w0;
				MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
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
	if (rank == 0)
		printf("best_us_per_msg=%.4f best_cpu_us_per_msg=%.4f isend_ns=%.2f\n", best * 1e6 / n,
		       best_cpu * 1e6 / n, best_win * 1e9 / WIN);
	if (comm != MPI_COMM_WORLD)
		MPI_Comm_free(&comm);
	MPI_Finalize();
	return 0;
}
