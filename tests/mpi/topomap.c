/*
 * tests/mpi/topomap.c: what other people's MPI test suites check of topology calls, in one
 * program: MPI_Cart_map / MPI_Graph_map agree with the constructors, the communicators they make work,
 * distributed graphs with weights, MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY, many calls in one run.
 *
 * Usage: topomap [-r ROUNDS] [-d]     (-d: distributed graphs with reorder=1 only, ROUNDS times)
 *        topomap -e                   (instead: 30 Cartesian shapes, MPI_Cart_map on rank 0 only)
 *        topomap -c CASES             (several cases in one job: tests/mpi/cases.h)
 *
 * One round (p ranks of MPI_COMM_WORLD, p >= 3):
 *   - Cartesian, 1 to 3 dimensions, periodic, not periodic and mixed, on all p ranks and on p - 1 ranks
 *     (fewer than the communicator: the last rank gets MPI_COMM_NULL), each on a fresh duplicate of
 *     MPI_COMM_WORLD: create then map (MPI_Cart_map on the same communicator answers the new rank of
 *     MPI_Cart_create), and map then create (MPI_Cart_map first, a different shape, then the
 *     constructor must put the rank where the map said). The new communicator: MPI_Topo_test,
 *     MPI_Cart_coords / MPI_Cart_rank round trip, MPI_Cart_shift against coordinates computed here, a
 *     value exchanged along each dimension with MPI_Sendrecv, MPI_Cart_sub rows and MPI_Comm_dup keeping
 *     the topology.
 *   - Graph (a ring), on p and on p - 1 ranks, create then map and map then create, MPI_Graph_neighbors
 *     and a token passed around the ring.
 *   - Distributed graphs (_adjacent and the general form) with weights, MPI_UNWEIGHTED, and
 *     MPI_WEIGHTS_EMPTY on a rank without edges: neighbour counts, the weighted flag, the lists, and
 *     MPI_Neighbor_alltoall.
 * Every check runs on every rank. Rank 0 prints "calls=N reordered=R errors=E": the topology
 * constructor calls of the run, how many of the map/create pairs put some rank elsewhere than its old
 * rank (the test-only placement makes the library reorder), and every rank's failed checks.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"

static int errors, calls, reordered;

/* 1 on every rank when some rank's new rank differs from its rank in MPI_COMM_WORLD. */
static int any_moved(int newrank, int wrank)
{
	int mine = newrank >= 0 && newrank != wrank, any = 0;

	MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return any;
}

/* Checks a Cartesian communicator of ndims dims/periods: coordinates, shifts, one exchange per
 * dimension, a sub-communicator and a duplicate. */
static void check_cart(MPI_Comm c, int ndims, const int *dims, const int *periods)
{
	int me, n, st = MPI_UNDEFINED, coords[3], back = -1;

	MPI_Comm_rank(c, &me);
	MPI_Comm_size(c, &n);
	MPI_Topo_test(c, &st);
	CHECK(st == MPI_CART, "Topo_test %d\n", st);
	MPI_Cart_coords(c, me, ndims, coords);
	MPI_Cart_rank(c, coords, &back);
	CHECK(back == me, "Cart_rank(Cart_coords(%d)) = %d\n", me, back);
	for (int d = 0; d < ndims; d++) {
		int src = -1, dst = -1, exp_src, exp_dst, nb[3], got = -1;

		MPI_Cart_shift(c, d, 1, &src, &dst);
		memcpy(nb, coords, sizeof(nb));
		nb[d] = coords[d] + 1;
		if (nb[d] >= dims[d])
			nb[d] = periods[d] ? 0 : -1;
		if (nb[d] < 0)
			exp_dst = MPI_PROC_NULL;
		else
			MPI_Cart_rank(c, nb, &exp_dst);
		nb[d] = coords[d] - 1;
		if (nb[d] < 0)
			nb[d] = periods[d] ? dims[d] - 1 : -1;
		if (nb[d] < 0)
			exp_src = MPI_PROC_NULL;
		else
			MPI_Cart_rank(c, nb, &exp_src);
		CHECK(src == exp_src && dst == exp_dst, "rank %d dim %d: shift %d,%d, expected %d,%d\n", me, d, src,
		      dst, exp_src, exp_dst);
		MPI_Sendrecv(&me, 1, MPI_INT, dst, 7, &got, 1, MPI_INT, src, 7, c, MPI_STATUS_IGNORE);
		CHECK(src == MPI_PROC_NULL ? got == -1 : got == src, "rank %d dim %d: got %d from %d\n", me, d, got,
		      src);
	}
	int remain[3] = { 1, 0, 0 }, sn = 0, dn = 0, dst = MPI_UNDEFINED;
	MPI_Comm sub, dup;

	MPI_Cart_sub(c, remain, &sub);
	MPI_Comm_size(sub, &sn);
	CHECK(sn == dims[0], "Cart_sub: %d ranks, %d expected\n", sn, dims[0]);
	MPI_Comm_free(&sub);
	MPI_Comm_dup(c, &dup);
	MPI_Topo_test(dup, &dst);
	MPI_Cartdim_get(dup, &dn);
	CHECK(dst == MPI_CART && dn == ndims, "Comm_dup: topology %d, %d dims\n", dst, dn);
	MPI_Comm_free(&dup);
}

/* One Cartesian pair on a fresh duplicate of MPI_COMM_WORLD: n ranks (p or p - 1), ndims, periodicity
 * kind (0 none, 1 all, 2 the first only); map_first: MPI_Cart_map before MPI_Cart_create. */
static void cart_pair(int n, int ndims, int kind, int map_first)
{
	int dims[3] = { 0, 0, 0 }, periods[3], wrank, p, mapped = -2, cr = MPI_UNDEFINED;
	MPI_Comm w, c;

	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	w = MPI_COMM_WORLD;
	MPI_Dims_create(n, ndims, dims);
	for (int d = 0; d < ndims; d++)
		periods[d] = kind == 1 || (kind == 2 && d == 0);
	if (map_first)
		MPI_Cart_map(w, ndims, dims, periods, &mapped);
	MPI_Cart_create(w, ndims, dims, periods, 1, &c);
	calls++;
	if (c != MPI_COMM_NULL)
		MPI_Comm_rank(c, &cr);
	if (!map_first)
		MPI_Cart_map(w, ndims, dims, periods, &mapped);
	CHECK(mapped == cr, "Cart %dd n=%d periods %d %s: Cart_map %d, Cart_create %d (world rank %d)\n", ndims, n,
	      kind, map_first ? "map first" : "create first", mapped, cr, wrank);
	int out = c == MPI_COMM_NULL, nout = 0;

	MPI_Allreduce(&out, &nout, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	CHECK(nout == p - n, "Cart n=%d: %d ranks left out\n", n, nout);
	reordered += any_moved(cr == MPI_UNDEFINED ? -1 : cr, wrank);
	if (c != MPI_COMM_NULL) {
		check_cart(c, ndims, dims, periods);
		MPI_Comm_free(&c);
	}
}

/* A ring of n nodes (n <= p) as Graph_create arguments. */
static void ring(int n, int *index, int *edges)
{
	for (int i = 0; i < n; i++) {
		index[i] = 2 * (i + 1);
		edges[2 * i] = (i + n - 1) % n;
		edges[2 * i + 1] = (i + 1) % n;
	}
}

static void graph_pair(int n, int map_first)
{
	int *index = malloc(sizeof(int) * (size_t)n), *edges = malloc(sizeof(int) * 2 * (size_t)n);
	int wrank, mapped = -2, gr = MPI_UNDEFINED;
	MPI_Comm w, g;

	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	ring(n, index, edges);
	w = MPI_COMM_WORLD;
	if (map_first)
		MPI_Graph_map(w, n, index, edges, &mapped);
	MPI_Graph_create(w, n, index, edges, 1, &g);
	calls++;
	if (g != MPI_COMM_NULL)
		MPI_Comm_rank(g, &gr);
	if (!map_first)
		MPI_Graph_map(w, n, index, edges, &mapped);
	CHECK(mapped == gr, "Graph n=%d %s: Graph_map %d, Graph_create %d (world rank %d)\n", n,
	      map_first ? "map first" : "create first", mapped, gr, wrank);
	reordered += any_moved(gr == MPI_UNDEFINED ? -1 : gr, wrank);
	if (g != MPI_COMM_NULL) {
		int st = MPI_UNDEFINED, nn = -1, nb[2] = { -1, -1 }, tok = -1;

		MPI_Topo_test(g, &st);
		MPI_Graph_neighbors_count(g, gr, &nn);
		MPI_Graph_neighbors(g, gr, 2, nb);
		CHECK(st == MPI_GRAPH && nn == 2 && nb[0] == (gr + n - 1) % n && nb[1] == (gr + 1) % n,
		      "graph rank %d: topology %d, %d neighbours %d %d\n", gr, st, nn, nb[0], nb[1]);
		MPI_Sendrecv(&gr, 1, MPI_INT, nb[1], 9, &tok, 1, MPI_INT, nb[0], 9, g, MPI_STATUS_IGNORE);
		CHECK(tok == nb[0], "graph rank %d: token %d from %d\n", gr, tok, nb[0]);
		MPI_Comm_free(&g);
	}
	free(index);
	free(edges);
}

/* Neighbour counts, weighted flag and an alltoall on a distributed graph where new rank v has in- and
 * out-neighbours v - 1 and v + 1 (mod p) of weights w (NULL: unweighted), except rank `empty`, which
 * has no edges at all (and the ranks next to it lose their edge to it). */
static void check_dist(MPI_Comm g, int p, int empty, int weighted)
{
	int me, in = -1, out = -1, wf = -1, exp = 0, nb[2], cnt = 0;

	MPI_Comm_rank(g, &me);
	for (int s = -1; s <= 1; s += 2) {
		int j = (me + p + s) % p;

		if (me != empty && j != empty)
			nb[cnt++] = j;
	}
	exp = cnt;
	MPI_Dist_graph_neighbors_count(g, &in, &out, &wf);
	CHECK(in == exp && out == exp && !wf == !weighted,
	      "dist rank %d: in %d out %d weighted %d, expected %d %d %d\n", me, in, out, wf, exp, exp, weighted);
	if (in != exp || out != exp || exp == 0) /* MPICH 4.0 crashes listing a weighted vertex without edges */
		return;
	int src[2], sw[2], dst[2], dw[2], send[2], recv[2] = { -1, -1 };

	MPI_Dist_graph_neighbors(g, 2, src, wf ? sw : MPI_UNWEIGHTED, 2, dst, wf ? dw : MPI_UNWEIGHTED);
	for (int i = 0; i < exp; i++) {
		CHECK((src[i] == nb[0] || src[i] == nb[exp - 1]) && (dst[i] == nb[0] || dst[i] == nb[exp - 1]),
		      "dist rank %d: neighbour %d/%d\n", me, src[i], dst[i]);
		CHECK(!weighted || (sw[i] == 1 + (src[i] + me) % 3 && dw[i] == 1 + (dst[i] + me) % 3),
		      "dist rank %d: weights %d %d\n", me, sw[i], dw[i]);
		send[i] = me * 1000 + dst[i];
	}
	MPI_Neighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, g);
	for (int i = 0; i < exp; i++)
		CHECK(recv[i] == src[i] * 1000 + me, "dist rank %d: got %d from %d\n", me, recv[i], src[i]);
}

/* kind 0: weights, 1: MPI_UNWEIGHTED, 2: weights with MPI_WEIGHTS_EMPTY on the rank without edges. */
static void dist_pair(int general, int kind, int reorder)
{
	int p, wrank, nb[2], w[2], cnt = 0, empty = kind == 2 ? 1 : -1;
	MPI_Comm g;

	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	for (int s = -1; s <= 1; s += 2) {
		int j = (wrank + p + s) % p;

		if (wrank != empty && j != empty)
			nb[cnt] = j, w[cnt++] = 1 + (j + wrank) % 3;
	}
	const int *wt = kind == 1 ? MPI_UNWEIGHTED : cnt == 0 ? MPI_WEIGHTS_EMPTY : w;

	if (general)
		MPI_Dist_graph_create(MPI_COMM_WORLD, cnt ? 1 : 0, &wrank, &cnt, nb, wt, MPI_INFO_NULL, reorder, &g);
	else
		MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, cnt, nb, wt, cnt, nb, wt, MPI_INFO_NULL, reorder, &g);
	calls++;
	check_dist(g, p, empty, kind != 1);
	MPI_Comm_free(&g);
}

/* Many shapes on one communicator (-e): rank 0 alone asks MPI_Cart_map for the first 20 of 30 shapes
 * (promises of rank 0 only), then every rank creates all 30 twice (the second time from what the
 * communicator remembers). What rank 0 remembers beyond the others must never make it take another
 * branch than they do (the job would hang), and rank 0 gets, for each promised shape, the rank the map
 * answered. */
static void many_shapes(void)
{
	int p, wrank, promised[30];

	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	for (int pass = 0; pass < 3; pass++) {
		for (int s = 0; s < 30; s++) {
			int k = 1 + s % p, pos = (s / p) % 3, per = (s / p / 3) % 2, dims[3] = { 1, 1, 1 };
			int periods[3] = { per, per, per }, cr = MPI_UNDEFINED;
			MPI_Comm c;

			dims[pos] = k;
			if (pass == 0) {
				if (wrank == 0 && s < 20)
					MPI_Cart_map(MPI_COMM_WORLD, 3, dims, periods, &promised[s]);
				continue;
			}
			MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 1, &c);
			calls++;
			if (c != MPI_COMM_NULL) {
				MPI_Comm_rank(c, &cr);
				MPI_Comm_free(&c);
			}
			CHECK(wrank != 0 || s >= 20 || cr == promised[s],
			      "shape %d pass %d: Cart_map %d, Cart_create %d\n", s, pass, promised[s], cr);
		}
	}
}

static int one_case(int argc, char **argv, int casenum)
{
	int rounds = 1, dist_only = 0, evict = 0, wrank, p, all = 0;

	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	errors = calls = reordered = 0;
	for (int a = 0; a < argc; a++) {
		if (strcmp(argv[a], "-r") == 0 && a + 1 < argc)
			rounds = atoi(argv[++a]);
		else if (strcmp(argv[a], "-d") == 0)
			dist_only = 1;
		else if (strcmp(argv[a], "-e") == 0)
			evict = 1;
		else
			return -1;
	}
	if (p < 3 || rounds < 1)
		return -1;
	if (evict)
		many_shapes();
	for (int r = 0; r < rounds && !evict; r++) {
		for (int nd = 1; nd <= 3 && !dist_only; nd++)
			for (int kind = 0; kind < 3; kind++) {
				cart_pair(p, nd, kind, 0);
				cart_pair(p - 1, nd, kind, 1);
				cart_pair(p, nd, kind, 1);
				cart_pair(p - 1, nd, kind, 0);
			}
		for (int mf = 0; mf < 2 && !dist_only; mf++) {
			graph_pair(p, mf);
			graph_pair(p - 1, !mf);
		}
		for (int general = 0; general < 2; general++)
			for (int kind = 0; kind < 3; kind++)
				dist_pair(general, kind, 1);
	}
	MPI_Reduce(&errors, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (wrank == 0) {
		case_prefix(casenum);
		printf("calls=%d reordered=%d errors=%d\n", calls, reordered, all);
	}
	return errors;
}

int main(int argc, char **argv)
{
	return cases_program(argc, argv, one_case);
}
