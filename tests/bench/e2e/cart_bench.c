/*
 * tests/bench/e2e/cart_bench.c: Cartesian benchmarks of `make bench-e2e` (Rashti et al. 2011).
 *
 *   cart_bench --dims 8x4 [--periods 1,1] --bytes 262144,8192 [--iters N] [--mode halo|alltoall]
 *              [--dim D] [--pattern-out FILE]
 *
 * halo:     every iteration each rank exchanges bytes[d] with both neighbours of every dimension d
 *           (all messages in flight at once), as a stencil code does.
 * alltoall: MPI_Cart_sub keeps dimension D; every iteration each sub-communicator runs an Alltoall of
 *           bytes[0] per peer (the dimensional collective of the paper).
 * The communicator comes from MPI_Cart_create(reorder=1); rankmap, when linked in, reorders it.
 * --pattern-out writes the logical communication pattern (Matrix Market, bytes and messages).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_common.h"

#define MAXD 8

typedef struct opts {
	int ndims, dims[MAXD], periods[MAXD];
	double bytes[MAXD];
	int iters, alltoall, dim;
	const char *pattern_out;
} opts_t;

static int parse(int argc, char **argv, opts_t *o)
{
	double per[MAXD];
	int np = 0, nb = 0;

	memset(o, 0, sizeof(*o));
	o->iters = 10;
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (!strcmp(k, "--dims"))
			o->ndims = e2e_parse_dims(v, o->dims, MAXD);
		else if (!strcmp(k, "--periods"))
			np = e2e_parse_list(v, per, MAXD);
		else if (!strcmp(k, "--bytes"))
			nb = e2e_parse_list(v, o->bytes, MAXD);
		else if (!strcmp(k, "--iters"))
			o->iters = atoi(v);
		else if (!strcmp(k, "--mode"))
			o->alltoall = !strcmp(v, "alltoall");
		else if (!strcmp(k, "--dim"))
			o->dim = atoi(v);
		else if (!strcmp(k, "--pattern-out"))
			o->pattern_out = v;
		else
			return -1;
	}
	if (o->ndims < 1 || o->iters < 1 || o->dim < 0 || o->dim >= o->ndims || nb < 1)
		return -1;
	for (int d = 0; d < o->ndims; d++) {
		o->periods[d] = np ? (d < np ? per[d] != 0 : per[np - 1] != 0) : 1;
		if (d >= nb)
			o->bytes[d] = o->bytes[nb - 1];
	}
	return 0;
}

/* Halo exchange: returns the timed seconds; fills edges (2 per dimension). */
static double run_halo(MPI_Comm cart, const opts_t *o, e2e_edge_t *edges, int *nedges)
{
	int nbr[2 * MAXD], n = 0;
	char *sbuf[2 * MAXD], *rbuf[2 * MAXD];
	MPI_Request req[4 * MAXD];
	double t0;

	for (int d = 0; d < o->ndims; d++) {
		MPI_Cart_shift(cart, d, 1, &nbr[2 * d], &nbr[2 * d + 1]);
		for (int s = 0; s < 2; s++) {
			sbuf[2 * d + s] = calloc(1, (size_t)o->bytes[d]);
			rbuf[2 * d + s] = calloc(1, (size_t)o->bytes[d]);
			if (!sbuf[2 * d + s] || !rbuf[2 * d + s])
				MPI_Abort(cart, 2);
			if (nbr[2 * d + s] != MPI_PROC_NULL)
				edges[n++] = (e2e_edge_t){ nbr[2 * d + s], o->bytes[d] };
		}
	}
	*nedges = n;
	MPI_Barrier(cart);
	t0 = MPI_Wtime();
	for (int it = 0; it < o->iters; it++) {
		int nr = 0;

		for (int k = 0; k < 2 * o->ndims; k++)
			MPI_Irecv(rbuf[k], (int)o->bytes[k / 2], MPI_BYTE, nbr[k], k, cart, &req[nr++]);
		for (int k = 0; k < 2 * o->ndims; k++) /* what goes to the low side arrives from its high side */
			MPI_Isend(sbuf[k], (int)o->bytes[k / 2], MPI_BYTE, nbr[k], k ^ 1, cart, &req[nr++]);
		MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
	}
	t0 = MPI_Wtime() - t0;
	for (int k = 0; k < 2 * o->ndims; k++) {
		free(sbuf[k]);
		free(rbuf[k]);
	}
	return t0;
}

/* Alltoall along dimension o->dim: returns the timed seconds; edges to every member of my line. */
static double run_alltoall(MPI_Comm cart, const opts_t *o, e2e_edge_t **edges, int *nedges)
{
	int remain[MAXD] = { 0 }, n, me;
	MPI_Comm line;
	MPI_Group gl, gc;
	int *lr, *cr;
	char *sb, *rb;
	double t0;

	remain[o->dim] = 1;
	MPI_Cart_sub(cart, remain, &line);
	MPI_Comm_size(line, &n);
	MPI_Comm_rank(line, &me);
	lr = malloc(sizeof(int) * n);
	cr = malloc(sizeof(int) * n);
	*edges = malloc(sizeof(e2e_edge_t) * n);
	if (!lr || !cr || !*edges)
		MPI_Abort(cart, 2);
	for (int i = 0; i < n; i++)
		lr[i] = i;
	MPI_Comm_group(line, &gl);
	MPI_Comm_group(cart, &gc);
	MPI_Group_translate_ranks(gl, n, lr, gc, cr);
	*nedges = 0;
	for (int i = 0; i < n; i++)
		if (i != me)
			(*edges)[(*nedges)++] = (e2e_edge_t){ cr[i], o->bytes[0] };
	sb = calloc(n, (size_t)o->bytes[0]);
	rb = calloc(n, (size_t)o->bytes[0]);
	if (!sb || !rb)
		MPI_Abort(cart, 2);
	MPI_Barrier(cart);
	t0 = MPI_Wtime();
	for (int it = 0; it < o->iters; it++)
		MPI_Alltoall(sb, (int)o->bytes[0], MPI_BYTE, rb, (int)o->bytes[0], MPI_BYTE, line);
	t0 = MPI_Wtime() - t0;
	free(sb);
	free(rb);
	free(lr);
	free(cr);
	MPI_Group_free(&gl);
	MPI_Group_free(&gc);
	MPI_Comm_free(&line);
	return t0;
}

int main(int argc, char **argv)
{
	opts_t o;
	MPI_Comm cart;
	e2e_edge_t halo[2 * MAXD], *edges = halo;
	int nedges = 0, rank;
	double t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (parse(argc, argv, &o) < 0) {
		if (rank == 0)
			fprintf(stderr,
				"usage: cart_bench --dims AxB[xC...] [--periods p,...] --bytes b,... "
				"[--iters N] [--mode halo|alltoall] [--dim D] [--pattern-out FILE]\n");
		MPI_Finalize();
		return 2;
	}
	if (MPI_Cart_create(MPI_COMM_WORLD, o.ndims, o.dims, o.periods, 1, &cart) != MPI_SUCCESS ||
	    cart == MPI_COMM_NULL)
		MPI_Abort(MPI_COMM_WORLD, 3);
	if (o.alltoall)
		t = run_alltoall(cart, &o, &edges, &nedges);
	else
		t = run_halo(cart, &o, edges, &nedges);
	e2e_report(cart, t, edges, nedges);
	if (o.pattern_out && e2e_write_pattern(cart, o.pattern_out, edges, nedges, o.iters) < 0)
		MPI_Abort(MPI_COMM_WORLD, 4);
	if (edges != halo)
		free(edges);
	MPI_Comm_free(&cart);
	MPI_Finalize();
	return 0;
}
