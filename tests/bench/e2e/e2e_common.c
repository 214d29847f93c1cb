/* tests/bench/e2e/e2e_common.c: argument parsing, reporting and pattern output for the SMPI benches. */
#include "e2e_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int e2e_parse_dims(const char *s, int *dims, int maxd)
{
	int n = 0;
	char *end;

	while (*s && n < maxd) {
		long v = strtol(s, &end, 10);

		if (end == s || v < 1 || v > 1 << 20)
			return 0;
		dims[n++] = (int)v;
		if (*end == 0)
			return n;
		if (*end != 'x')
			return 0;
		s = end + 1;
	}
	return 0;
}

int e2e_parse_list(const char *s, double *out, int max)
{
	int n = 0;
	char *end;

	while (*s && n < max) {
		double v = strtod(s, &end);

		if (end == s)
			return n;
		out[n++] = v;
		if (*end != ',')
			return n;
		s = end + 1;
	}
	return n;
}

/* FNV-1a of the processor name: a host id every rank can compute alone. */
static unsigned host_hash(void)
{
	char name[MPI_MAX_PROCESSOR_NAME];
	int len = 0;
	unsigned h = 2166136261u;

	MPI_Get_processor_name(name, &len);
	for (int i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h;
}

/* With E2E_PLACEMENT set, rank 0 prints the host of every rank of comm, in rank order ("E2E placement=h0,h0,..."):
 * which order an engine chose, beside the time it gave. */
static void print_placement(MPI_Comm comm, int rank, int size)
{
	char name[MPI_MAX_PROCESSOR_NAME] = "", *all = NULL;
	int len = 0;

	if (!getenv("E2E_PLACEMENT"))
		return;
	MPI_Get_processor_name(name, &len);
	if (rank == 0 && !(all = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME)))
		MPI_Abort(comm, 2);
	MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm);
	if (rank != 0)
		return;
	printf("E2E placement=");
	for (int r = 0; r < size; r++)
		printf("%s%.*s", r ? "," : "", MPI_MAX_PROCESSOR_NAME, all + (size_t)r * MPI_MAX_PROCESSOR_NAME);
	printf("\n");
	free(all);
}

void e2e_report(MPI_Comm comm, double seconds, const e2e_edge_t *edges, int nedges)
{
	int rank, size;
	unsigned me = host_hash(), *hosts;
	double local[2] = { 0, 0 }, sum[2], tmax;

	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	hosts = malloc(sizeof(*hosts) * size);
	if (!hosts)
		MPI_Abort(comm, 2);
	MPI_Allgather(&me, 1, MPI_UNSIGNED, hosts, 1, MPI_UNSIGNED, comm);
	for (int i = 0; i < nedges; i++) {
		local[0] += edges[i].bytes;
		if (hosts[edges[i].peer] != me)
			local[1] += edges[i].bytes;
	}
	free(hosts);
	MPI_Reduce(local, sum, 2, MPI_DOUBLE, MPI_SUM, 0, comm);
	MPI_Reduce(&seconds, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
	print_placement(comm, rank, size);
	if (rank == 0)
		printf("E2E time=%.9f offnode=%.4f ranks=%d\n", tmax, sum[0] > 0 ? sum[1] / sum[0] : 0.0, size);
}

/* Rank 0's part of e2e_write_pattern: receives every rank's edges and writes them. */
static int write_all(MPI_Comm comm, const char *path, const e2e_edge_t *mine, int nmine, double iters)
{
	int size, *counts, total = 0, *displs;
	double *pairs, *local;
	FILE *f;
	int rc = 0;

	MPI_Comm_size(comm, &size);
	counts = calloc(size, sizeof(int));
	displs = calloc(size, sizeof(int));
	if (!counts || !displs)
		MPI_Abort(comm, 2);
	MPI_Gather(&nmine, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
	for (int i = 0; i < size; i++) {
		displs[i] = total * 2;
		total += counts[i];
		counts[i] *= 2;
	}
	pairs = malloc(sizeof(double) * 2 * (total + 1));
	local = malloc(sizeof(double) * 2 * (nmine + 1));
	if (!pairs || !local)
		MPI_Abort(comm, 2);
	for (int i = 0; i < nmine; i++) {
		local[2 * i] = mine[i].peer;
		local[2 * i + 1] = mine[i].bytes;
	}
	MPI_Gatherv(local, 2 * nmine, MPI_DOUBLE, pairs, counts, displs, MPI_DOUBLE, 0, comm);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		rc = -1;
	} else {
		fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n");
		fprintf(f, "%% e2e bench pattern: bytes, messages over %g iterations\n", iters);
		fprintf(f, "%d %d %d\n", size, size, total);
		for (int r = 0, k = 0; r < size; r++)
			for (int j = 0; j < counts[r] / 2; j++, k++)
				fprintf(f, "%d %d %.0f %.0f\n", r + 1, (int)pairs[2 * k] + 1, pairs[2 * k + 1] * iters,
					iters);
		rc = fclose(f) ? -1 : rc;
	}
	free(local);
	free(pairs);
	free(counts);
	free(displs);
	return rc;
}

int e2e_write_pattern(MPI_Comm comm, const char *path, const e2e_edge_t *edges, int nedges, double iters)
{
	int rank, rc = 0;
	double *local;

	MPI_Comm_rank(comm, &rank);
	if (rank == 0)
		return write_all(comm, path, edges, nedges, iters);
	MPI_Gather(&nedges, 1, MPI_INT, NULL, 0, MPI_INT, 0, comm);
	local = malloc(sizeof(double) * 2 * (nedges + 1));
	if (!local)
		MPI_Abort(comm, 2);
	for (int i = 0; i < nedges; i++) {
		local[2 * i] = edges[i].peer;
		local[2 * i + 1] = edges[i].bytes;
	}
	MPI_Gatherv(local, 2 * nedges, MPI_DOUBLE, NULL, NULL, NULL, MPI_DOUBLE, 0, comm);
	free(local);
	return rc;
}
