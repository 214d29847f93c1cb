/*
 * tests/mpi/ring_of_rings.c: the Mercier-Jeannot ring of rings through MPI_Graph_create.
 *
 * Usage: ring_of_rings [-n] R K     (R rings of K ranks; the job has at least R*K ranks; -n: reorder=0)
 *        ring_of_rings -c CASES     (several cases in one job: tests/mpi/cases.h)
 *
 * Vertex r*K+i is member i of ring r; its neighbours are the previous and next members of its ring,
 * and for leaders (i = 0) the previous and next leaders. Checks: MPI_Graph_neighbors of every rank
 * equals that list; a token passed around each ring through the graph communicator arrives in order;
 * the leaders' Allgather sees every ring. Rank 0 prints "moved=M cross_identity=A cross_mapped=B"
 * (graph edges whose ends are on different virtual hosts, computed here from the fake placement).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "cases.h"
#include "fakeplace.h"

static int errors;

/* Neighbours of vertex v (no duplicates); returns their number. */
static int neighbours(int R, int K, int v, int *out)
{
	int r = v / K, i = v % K, n = 0;
	int cand[4] = { r * K + (i + K - 1) % K, r * K + (i + 1) % K, -1, -1 };

	if (i == 0)
		cand[2] = ((r + R - 1) % R) * K, cand[3] = ((r + 1) % R) * K;
	for (int c = 0; c < 4; c++) {
		int dup = cand[c] < 0 || cand[c] == v;

		for (int j = 0; j < n; j++)
			dup |= out[j] == cand[c];
		if (!dup)
			out[n++] = cand[c];
	}
	return n;
}

static long cross(int R, int K, const int *owner, int size)
{
	long c = 0;
	int nb[4];

	for (int v = 0; v < R * K; v++) {
		int n = neighbours(R, K, v, nb);

		for (int j = 0; j < n; j++)
			c += nb[j] > v && fake_host_of(owner[v], size) != fake_host_of(owner[nb[j]], size);
	}
	return c;
}

static void token(MPI_Comm g, int R, int K, int me)
{
	int r = me / K, i = me % K, next = r * K + (i + 1) % K, prev = r * K + (i + K - 1) % K, v = -1;

	if (K < 2)
		return;
	if (i == 0) {
		v = r * 1000;
		MPI_Send(&v, 1, MPI_INT, next, 5, g);
		MPI_Recv(&v, 1, MPI_INT, prev, 5, g, MPI_STATUS_IGNORE);
		CHECK(v == r * 1000 + K - 1, "ring %d: token came back as %d\n", r, v);
	} else {
		MPI_Recv(&v, 1, MPI_INT, prev, 5, g, MPI_STATUS_IGNORE);
		CHECK(v == r * 1000 + i - 1, "vertex %d: token %d\n", me, v);
		v++;
		MPI_Send(&v, 1, MPI_INT, next, 5, g);
	}
	MPI_Comm lead;
	int *all = calloc((size_t)R, sizeof(int));

	MPI_Comm_split(g, i == 0 ? 0 : MPI_UNDEFINED, r, &lead);
	if (lead != MPI_COMM_NULL) {
		MPI_Allgather(&r, 1, MPI_INT, all, 1, MPI_INT, lead);
		for (int q = 0; q < R; q++)
			CHECK(all[q] == q, "leaders' allgather: slot %d holds %d\n", q, all[q]);
		MPI_Comm_free(&lead);
	}
	free(all);
}

/* One case (cases.h): [-n] R K in args[0..argc). Returns this rank's failed checks, -1 for bad usage. */
static int one_case(int argc, char **argv, int casenum)
{
	int reorder = 1, a = 0, wrank, wsize;

	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &wsize);
	errors = 0;
	if (a < argc && argv[a][0] == '-')
		reorder = 0, a++;
	int R = a + 1 < argc ? atoi(argv[a]) : 0, K = a + 1 < argc ? atoi(argv[a + 1]) : 0, n = R * K;

	if (R < 1 || K < 1 || n > wsize) {
		if (wrank == 0)
			fprintf(stderr, "usage: ring_of_rings [-n] R K (R*K <= ranks) | -c CASES\n");
		return -1;
	}
	int *index = malloc(sizeof(int) * (size_t)n), *edges = malloc(sizeof(int) * 4 * (size_t)n), ne = 0;

	for (int v = 0; v < n; v++) {
		ne += neighbours(R, K, v, edges + ne);
		index[v] = ne;
	}
	MPI_Comm g;
	int me = -1, mine = wrank, *owner = calloc((size_t)wsize, sizeof(int));

	MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, reorder, &g);
	if (g != MPI_COMM_NULL) {
		int cnt = -1, got[4], exp[4], ex;

		MPI_Comm_rank(g, &me);
		MPI_Graph_neighbors_count(g, me, &cnt);
		ex = neighbours(R, K, me, exp);
		CHECK(cnt == ex, "vertex %d: %d neighbours, expected %d\n", me, cnt, ex);
		MPI_Graph_neighbors(g, me, 4, got);
		for (int j = 0; j < ex && cnt == ex; j++)
			CHECK(got[j] == exp[j], "vertex %d: neighbour %d is %d, expected %d\n", me, j, got[j], exp[j]);
		MPI_Allgather(&mine, 1, MPI_INT, owner, 1, MPI_INT, g);
		token(g, R, K, me);
	}
	int from = -1, tmp = me == 0 ? wrank : -1;

	MPI_Allreduce(&tmp, &from, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Bcast(owner, n, MPI_INT, from, MPI_COMM_WORLD);
	int moved = 0, *ident = malloc(sizeof(int) * (size_t)n), all_errors = 0;

	for (int v = 0; v < n; v++)
		moved += owner[v] != v, ident[v] = v;
	MPI_Reduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (wrank == 0) {
		case_prefix(casenum);
		printf("moved=%d cross_identity=%ld cross_mapped=%ld errors=%d\n", moved, cross(R, K, ident, wsize),
		       cross(R, K, owner, wsize), all_errors);
	}
	if (g != MPI_COMM_NULL)
		MPI_Comm_free(&g);
	free(index);
	free(edges);
	free(owner);
	free(ident);
	return errors;
}

int main(int argc, char **argv)
{
	return cases_program(argc, argv, one_case);
}
