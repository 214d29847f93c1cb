/*
 * tests/mpi/distgraph.c: weighted distributed graph topologies and a neighbourhood alltoall.
 *
 * Usage: distgraph [-n] [-g]    (-n: reorder=0; -g: MPI_Dist_graph_create instead of _adjacent)
 *        distgraph -c CASES      (several cases in one job: tests/mpi/cases.h)
 *
 * Vertex k (of p ranks, p >= 4 and even) talks heavily (weight 100) with its partner k + p/2 and
 * lightly (weight 1) with k - 1 and k + 1 (mod p). Checks: MPI_Dist_graph_neighbors of new rank k
 * returns vertex k's lists and weights (in the given order for _adjacent, as sets for the general
 * form); MPI_Neighbor_alltoall delivers, from each in-neighbour s, the value s * 1000 + k.
 * Rank 0 prints "moved=M heavy_cross_identity=A heavy_cross_mapped=B": heavy pairs on different
 * virtual hosts (RANKMAP_FAKE_*), computed here from the fake placement.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "cases.h"
#include "fakeplace.h"

static int errors;

/* The lists of vertex k: out (and, the graph being symmetric, in) neighbours and weights. */
static void lists(int k, int p, int *nb, int *w)
{
	nb[0] = (k + p / 2) % p, w[0] = 100;
	nb[1] = (k + 1) % p, w[1] = 1;
	nb[2] = (k + p - 1) % p, w[2] = 1;
}

static int contains(const int *v, const int *w, int n, int x, int wx)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x && w[i] == wx)
			return 1;
	return 0;
}

static void check_lists(MPI_Comm g, int me, int p, int general)
{
	int in = -1, out = -1, weighted = 0, exp[3], ew[3], src[3], sw[3], dst[3], dw[3];

	lists(me, p, exp, ew);
	MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted);
	CHECK(in == 3 && out == 3 && weighted, "rank %d: in %d out %d weighted %d\n", me, in, out, weighted);
	if (in != 3 || out != 3)
		return;
	MPI_Dist_graph_neighbors(g, 3, src, sw, 3, dst, dw);
	for (int i = 0; i < 3; i++) {
		if (general) {
			CHECK(contains(src, sw, 3, exp[i], ew[i]), "rank %d: source %d missing\n", me, exp[i]);
			CHECK(contains(dst, dw, 3, exp[i], ew[i]), "rank %d: destination %d missing\n", me, exp[i]);
		} else {
			CHECK(src[i] == exp[i] && sw[i] == ew[i], "rank %d: source %d is %d/%d\n", me, i, src[i],
			      sw[i]);
			CHECK(dst[i] == exp[i] && dw[i] == ew[i], "rank %d: dest %d is %d/%d\n", me, i, dst[i], dw[i]);
		}
	}
	int sb[3], rb[3] = { -1, -1, -1 };

	for (int i = 0; i < 3; i++)
		sb[i] = me * 1000 + dst[i];
	MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, g);
	for (int i = 0; i < 3; i++)
		CHECK(rb[i] == src[i] * 1000 + me, "rank %d: from source %d got %d\n", me, src[i], rb[i]);
}

/* One case (cases.h): [-n] [-g] in args[0..argc). Returns this rank's failed checks, -1 for bad usage. */
static int one_case(int argc, char **argv, int casenum)
{
	int reorder = 1, general = 0, wrank, p;

	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	errors = 0;
	for (int a = 0; a < argc; a++)
		reorder = argv[a][1] == 'n' ? 0 : reorder, general |= argv[a][1] == 'g';
	if (p < 4 || p % 2) {
		if (wrank == 0)
			fprintf(stderr, "distgraph: needs an even number of ranks >= 4\n");
		return -1;
	}
	int nb[3], w[3], me, *owner = calloc((size_t)p, sizeof(int));
	MPI_Comm g;

	lists(wrank, p, nb, w);
	if (general)
		MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &wrank, (int[]){ 3 }, nb, w, MPI_INFO_NULL, reorder, &g);
	else
		MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, nb, w, 3, nb, w, MPI_INFO_NULL, reorder, &g);
	MPI_Comm_rank(g, &me);
	check_lists(g, me, p, general);
	MPI_Allgather(&wrank, 1, MPI_INT, owner, 1, MPI_INT, g);
	int moved = 0, hc_id = 0, hc_map = 0, all_errors = 0;

	for (int k = 0; k < p; k++) {
		int j = (k + p / 2) % p;

		moved += owner[k] != k;
		if (j > k) {
			hc_id += fake_host_of(k, p) != fake_host_of(j, p);
			hc_map += fake_host_of(owner[k], p) != fake_host_of(owner[j], p);
		}
	}
	MPI_Reduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (wrank == 0) {
		case_prefix(casenum);
		printf("moved=%d heavy_cross_identity=%d heavy_cross_mapped=%d errors=%d\n", moved, hc_id, hc_map,
		       all_errors);
	}
	MPI_Comm_free(&g);
	free(owner);
	return errors;
}

int main(int argc, char **argv)
{
	return cases_program(argc, argv, one_case);
}
