/*
 * tests/mpi/cart_halo.c: Cartesian halo exchange, checking that a (possibly reordered) Cartesian
 * communicator is consistent.
 *
 * Usage: cart_halo [-n] [-d] [-p] [-w FILE] NDIMS D1 .. Dn P1 .. Pn
 *        cart_halo -c CASES
 *   -n  reorder=0 (default reorder=1)
 *   -d  rank 0 passes the dims reversed (ranks disagree: the library must fall back; the program is
 *       then erroneous, so the halo checks are skipped)
 *   -p  also run a traffic phase (point-to-point of several kinds and a neighbourhood alltoall) along
 *       dimension CART_HALO_TRAFFIC_DIM (a compile-time choice, default 0: rebuilding the program with
 *       another value makes "the same program with another pattern" for the learning tests)
 *   -w  after MPI_Cart_create, wait until FILE exists (tests that act while the job runs)
 *   -c  several cases in one job, one after another (tests/mpi/cases.h): each "run" line of CASES
 *       holds the arguments above. A case with -d should come last: the program is erroneous from there
 *       on.
 *
 * Checks, at every rank: MPI_Cart_rank(MPI_Cart_coords(me)) == me; for each dimension the halo data
 * received from MPI_Cart_shift's source carries the coordinates one step below ours (periodic wrap,
 * MPI_PROC_NULL at open borders) and the world rank that really holds that Cartesian rank.
 * Rank 0 prints "moved=M cross_identity=A cross_mapped=B cross0_identity=C cross0_mapped=D
 * crossT_identity=E crossT_mapped=F": M ranks
 * changed, and the number of grid edges (C, D: of dimension 0 only; E, F: of the traffic dimension) whose ends sit on different
 * virtual hosts (RANKMAP_FAKE_*), for the identity placement and the one obtained, computed here
 * independently from the fake placement's definition.
 * Exit status 0 when every check passed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cases.h"
#include "fakeplace.h"

#define MAXD 8
#ifndef CART_HALO_TRAFFIC_DIM
#define CART_HALO_TRAFFIC_DIM 0
#endif

static int errors;

/* Row-major Cartesian rank of coords (with periodic wrap), -1 outside an open border. */
static int cart_rank(int nd, const int *dims, const int *per, const int *c)
{
	int r = 0;

	for (int d = 0; d < nd; d++) {
		int x = c[d];

		if (x < 0 || x >= dims[d]) {
			if (!per[d])
				return -1;
			x = (x % dims[d] + dims[d]) % dims[d];
		}
		r = r * dims[d] + x;
	}
	return r;
}

/* Grid edges (each dimension, +1 direction; only dimension only_dim when >= 0) whose ends are on
 * different hosts, given owner[]. */
static long cross_edges(int nd, const int *dims, const int *per, int n, const int *owner, int size, int only_dim)
{
	long cross = 0;
	int c[MAXD];

	for (int k = 0; k < n; k++) {
		for (int d = nd - 1, r = k; d >= 0; d--)
			c[d] = r % dims[d], r /= dims[d];
		for (int d = 0; d < nd; d++) {
			if ((dims[d] == 2 && per[d] && c[d] == 1) || (only_dim >= 0 && d != only_dim))
				continue; /* extent-2 periodic: one edge, not two */
			c[d]++;
			int j = cart_rank(nd, dims, per, c);

			c[d]--;
			if (j >= 0 && j != k && fake_host_of(owner[k], size) != fake_host_of(owner[j], size))
				cross++;
		}
	}
	return cross;
}

static void halo(MPI_Comm cart, int nd, const int *dims, const int *per, int me, const int *owner)
{
	int c[MAXD], back[MAXD];

	MPI_Cart_coords(cart, me, nd, c);
	MPI_Cart_rank(cart, c, back);
	CHECK(back[0] == me, "Cart_rank(Cart_coords(%d)) = %d\n", me, back[0]);
	for (int d = 0; d < nd; d++) {
		int src, dst, out[MAXD + 1], in[MAXD + 1];

		MPI_Cart_shift(cart, d, 1, &src, &dst);
		memcpy(out, c, sizeof(int) * (size_t)nd);
		MPI_Comm_rank(MPI_COMM_WORLD, &out[nd]);
		for (int i = 0; i <= nd; i++)
			in[i] = -7;
		MPI_Sendrecv(out, nd + 1, MPI_INT, dst, d, in, nd + 1, MPI_INT, src, d, cart, MPI_STATUS_IGNORE);
		int expect[MAXD];

		memcpy(expect, c, sizeof(int) * (size_t)nd);
		expect[d]--;
		int j = cart_rank(nd, dims, per, expect);

		CHECK((j < 0) == (src == MPI_PROC_NULL), "dim %d: source %d, expected %d\n", d, src, j);
		if (j < 0)
			continue;
		CHECK(src == j, "dim %d: Cart_shift source %d, grid says %d\n", d, src, j);
		expect[d] = (expect[d] + dims[d]) % dims[d];
		CHECK(memcmp(in, expect, sizeof(int) * (size_t)nd) == 0, "dim %d: data from wrong coordinates\n", d);
		CHECK(in[nd] == owner[j], "dim %d: data from world rank %d, expected %d\n", d, in[nd], owner[j]);
	}
}

/* Traffic of several kinds along dimension 0 (the tracer test counts it): per iteration, to the +1
 * neighbour: one MPI_Send of 100 ints, one MPI_Isend of 10 doubles, one persistent send of 1 int;
 * then one neighbourhood alltoall of 2 ints per neighbour. */
static void traffic(MPI_Comm cart, int iters)
{
	int src, dst, a[100] = { 0 }, b[100], one = 1, got;
	double x[10] = { 0 }, y[10];
	MPI_Request r[2], ps, pr;

	int nd0;

	MPI_Cartdim_get(cart, &nd0);
	MPI_Cart_shift(cart, CART_HALO_TRAFFIC_DIM < nd0 ? CART_HALO_TRAFFIC_DIM : 0, 1, &src, &dst);
	MPI_Send_init(&one, 1, MPI_INT, dst, 3, cart, &ps);
	MPI_Recv_init(&got, 1, MPI_INT, src, 3, cart, &pr);
	for (int it = 0; it < iters; it++) {
		MPI_Irecv(y, 10, MPI_DOUBLE, src, 2, cart, &r[0]);
		MPI_Isend(x, 10, MPI_DOUBLE, dst, 2, cart, &r[1]);
		if (dst != MPI_PROC_NULL)
			MPI_Send(a, 100, MPI_INT, dst, 1, cart);
		if (src != MPI_PROC_NULL)
			MPI_Recv(b, 100, MPI_INT, src, 1, cart, MPI_STATUS_IGNORE);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
		MPI_Start(&pr);
		MPI_Start(&ps);
		MPI_Wait(&ps, MPI_STATUS_IGNORE);
		MPI_Wait(&pr, MPI_STATUS_IGNORE);
	}
	MPI_Request_free(&ps);
	MPI_Request_free(&pr);
	int nd;

	MPI_Cartdim_get(cart, &nd);
	int *sb = calloc((size_t)(4 * nd), sizeof(int)), *rb = calloc((size_t)(4 * nd), sizeof(int));

	MPI_Neighbor_alltoall(sb, 2, MPI_INT, rb, 2, MPI_INT, cart);
	free(sb);
	free(rb);
}

/* Options of one case. */
typedef struct {
	int reorder, disagree, phase, nd, dims[MAXD], per[MAXD];
	const char *wait_file;
} opts_t;

/* Parses [-n] [-d] [-p] [-w FILE] NDIMS D1..Dn P1..Pn from args[0..n). Returns 0, or -1 on bad usage. */
static int parse_opts(int n, char **args, opts_t *o)
{
	int a = 0;

	memset(o, 0, sizeof(*o));
	o->reorder = 1;
	for (; a < n && args[a][0] == '-'; a++) {
		char c = args[a][1];

		o->reorder = c == 'n' ? 0 : o->reorder, o->disagree |= c == 'd', o->phase |= c == 'p';
		if (c == 'w' && a + 1 < n)
			o->wait_file = args[++a];
	}
	o->nd = a < n ? atoi(args[a++]) : 0;
	if (o->nd < 1 || o->nd > MAXD || n - a < 2 * o->nd)
		return -1;
	for (int d = 0; d < o->nd; d++)
		o->dims[d] = atoi(args[a + d]), o->per[d] = atoi(args[a + o->nd + d]);
	return 0;
}

/* Every rank waits until path exists (at most 120 s), without spinning in MPI. */
static void wait_for(const char *path)
{
	for (int i = 0; i < 2400 && access(path, F_OK) != 0; i++)
		usleep(50000);
}

/* One Cartesian communicator: creates it, checks it, and rank 0 prints the result line (prefixed with
 * "case=K " when casenum > 0). Returns the number of failed checks of this rank. */
static int run_case(const opts_t *o, int casenum, int wrank, int wsize)
{
	int nd = o->nd, dims[MAXD], pass[MAXD];
	const int *per = o->per;

	errors = 0;
	memcpy(dims, o->dims, sizeof(dims));
	for (int d = 0; d < nd; d++)
		pass[d] = o->disagree && wrank == 0 ? dims[nd - 1 - d] : dims[d];
	MPI_Comm cart;

	MPI_Cart_create(MPI_COMM_WORLD, nd, pass, per, o->reorder, &cart);
	if (o->wait_file)
		wait_for(o->wait_file);
	if (o->disagree) /* the fallback keeps each rank's own dims: check against what this rank passed */
		memcpy(dims, pass, sizeof(dims));
	int n = 1, me = -1;

	for (int d = 0; d < nd; d++)
		n *= dims[d];
	int *owner = calloc((size_t)wsize, sizeof(int)), mine = wrank;

	if (cart != MPI_COMM_NULL) {
		MPI_Comm_rank(cart, &me);
		MPI_Allgather(&mine, 1, MPI_INT, owner, 1, MPI_INT, cart);
		if (!o->disagree)
			halo(cart, nd, dims, per, me, owner);
		if (o->phase)
			traffic(cart, 10);
	}
	CHECK((cart == MPI_COMM_NULL) == (n < wsize && me < 0), "membership\n");
	/* rank 0 of the world may be outside the grid: send the owner table from cart rank 0 */
	int root_has = cart != MPI_COMM_NULL && me == 0, from = -1, tmp = root_has ? wrank : -1;

	MPI_Allreduce(&tmp, &from, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Bcast(owner, n, MPI_INT, from, MPI_COMM_WORLD);
	int moved = 0, *ident = malloc(sizeof(int) * (size_t)n);

	for (int k = 0; k < n; k++)
		moved += owner[k] != k, ident[k] = k;
	int all_errors = 0;

	MPI_Reduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (wrank == 0) {
		int td = CART_HALO_TRAFFIC_DIM < nd ? CART_HALO_TRAFFIC_DIM : 0;

		case_prefix(casenum);
		printf("moved=%d cross_identity=%ld cross_mapped=%ld cross0_identity=%ld cross0_mapped=%ld "
		       "crossT_identity=%ld crossT_mapped=%ld errors=%d\n",
		       moved, cross_edges(nd, dims, per, n, ident, wsize, -1),
		       cross_edges(nd, dims, per, n, owner, wsize, -1), cross_edges(nd, dims, per, n, ident, wsize, 0),
		       cross_edges(nd, dims, per, n, owner, wsize, 0), cross_edges(nd, dims, per, n, ident, wsize, td),
		       cross_edges(nd, dims, per, n, owner, wsize, td), all_errors);
		fflush(stdout);
	}
	if (cart != MPI_COMM_NULL)
		MPI_Comm_free(&cart);
	free(owner);
	free(ident);
	return errors;
}

/* One case (cases.h): parses args and runs it. */
static int one_case(int n, char **args, int casenum)
{
	int wrank, wsize;
	opts_t o;

	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &wsize);
	if (parse_opts(n, args, &o) != 0) {
		if (wrank == 0)
			fprintf(stderr, "usage: cart_halo [-n] [-d] [-p] [-w FILE] NDIMS D1..Dn P1..Pn | -c CASES\n");
		return -1;
	}
	return run_case(&o, casenum, wrank, wsize);
}

int main(int argc, char **argv)
{
	return cases_program(argc, argv, one_case);
}
