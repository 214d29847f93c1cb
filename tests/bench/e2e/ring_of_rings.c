/*
 * tests/bench/e2e/ring_of_rings.c: the ring-of-rings benchmark of Mercier and Jeannot (EuroMPI 2011).
 *
 *   ring_of_rings [--ring N] [--token BYTES] [--laps L] [--gather BYTES] [--iters N]
 *                 [--topo dist|graph|none] [--weights on|off] [--pattern-out FILE]
 *
 * Ranks form rings of N consecutive ranks (8 rings of 8 for 64 ranks). Every iteration the first rank
 * of each ring sends a token of BYTES around its ring L times, then the ring leaders run an Allgather
 * of --gather bytes each. With --topo dist (default) the program declares this pattern with
 * MPI_Dist_graph_create_adjacent(reorder=1, weights in KiB per iteration) and runs on the returned
 * communicator, keeping its own neighbour lists; --topo graph declares the same graph with
 * MPI_Graph_create (every process passes all of it; MPI_Graph_create has no weights). --weights off
 * declares the dist graph MPI_UNWEIGHTED while the traffic stays as unequal (what learned patterns recover).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_common.h"

typedef struct opts {
	int ring, laps, iters, topo, weighted; /* topo: 0 none, 1 dist (adjacent), 2 graph */
	double token, gather;
	const char *pattern_out;
} opts_t;

static int parse(int argc, char **argv, opts_t *o)
{
	*o = (opts_t){ .ring = 8, .laps = 4, .iters = 10, .topo = 1, .weighted = 1, .token = 65536, .gather = 65536 };
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (!strcmp(k, "--ring"))
			o->ring = atoi(v);
		else if (!strcmp(k, "--token"))
			o->token = atof(v);
		else if (!strcmp(k, "--laps"))
			o->laps = atoi(v);
		else if (!strcmp(k, "--gather"))
			o->gather = atof(v);
		else if (!strcmp(k, "--iters"))
			o->iters = atoi(v);
		else if (!strcmp(k, "--topo"))
			o->topo = !strcmp(v, "none") ? 0 : !strcmp(v, "graph") ? 2 : !strcmp(v, "dist") ? 1 : -1;
		else if (!strcmp(k, "--weights"))
			o->weighted = !strcmp(v, "on") ? 1 : !strcmp(v, "off") ? 0 : -1;
		else if (!strcmp(k, "--pattern-out"))
			o->pattern_out = v;
		else
			return -1;
	}
	return o->topo >= 0 && o->weighted >= 0 && o->ring >= 2 && o->laps >= 1 && o->iters >= 1 && o->token >= 1 &&
			       o->gather >= 1
		       ? 0
		       : -1;
}

/* The logical pattern of rank `me`: right neighbour, and every other leader for a leader. */
static int pattern(int me, int size, const opts_t *o, e2e_edge_t *e)
{
	int base = me - me % o->ring, n = 0;

	e[n++] = (e2e_edge_t){ base + (me - base + 1) % o->ring, o->token * o->laps };
	if (me == base)
		for (int l = 0; l < size; l += o->ring)
			if (l != me)
				e[n++] = (e2e_edge_t){ l, o->gather };
	return n;
}

/* Creates the dist-graph communicator of the pattern (symmetric: in = out). */
static MPI_Comm make_comm(int me, int size, const opts_t *o, const e2e_edge_t *e, int n)
{
	int base = me - me % o->ring, nb[2 + 4096], w[2 + 4096], k = 0;
	MPI_Comm c;

	if (n > 4096)
		MPI_Abort(MPI_COMM_WORLD, 5);
	nb[k] = e[0].peer; /* right */
	w[k++] = (int)(e[0].bytes / 1024) + 1;
	nb[k] = base + (me - base + o->ring - 1) % o->ring; /* left */
	w[k++] = (int)(e[0].bytes / 1024) + 1;
	for (int i = 1; i < n; i++) {
		nb[k] = e[i].peer;
		w[k++] = (int)(e[i].bytes / 1024) + 1;
	}
	const int *wp = o->weighted ? w : MPI_UNWEIGHTED;

	if (MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, k, nb, wp, k, nb, wp, MPI_INFO_NULL, 1, &c) != MPI_SUCCESS)
		MPI_Abort(MPI_COMM_WORLD, 3);
	(void)size;
	return c;
}

/* Creates the same graph with MPI_Graph_create: every process passes every vertex's edges (right, left,
 * and the other leaders for a leader). */
static MPI_Comm make_graph(int size, const opts_t *o)
{
	int nl = size / o->ring, *index = malloc(sizeof(int) * (size_t)size);
	int *edges = malloc(sizeof(int) * ((size_t)size * 2 + (size_t)nl * (size_t)nl));
	MPI_Comm c;

	if (!index || !edges)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int v = 0, k = 0; v < size; v++) {
		int base = v - v % o->ring;

		edges[k++] = base + (v - base + 1) % o->ring;
		edges[k++] = base + (v - base + o->ring - 1) % o->ring;
		for (int l = 0; v == base && l < size; l += o->ring)
			if (l != v)
				edges[k++] = l;
		index[v] = k;
	}
	if (MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &c) != MPI_SUCCESS)
		MPI_Abort(MPI_COMM_WORLD, 3);
	free(index);
	free(edges);
	return c;
}

static double run(MPI_Comm comm, const opts_t *o)
{
	int me, size;
	MPI_Comm leaders;
	char *tok = calloc(1, (size_t)o->token);
	char *gs = calloc(1, (size_t)o->gather), *gr;
	double t0;

	MPI_Comm_rank(comm, &me);
	MPI_Comm_size(comm, &size);
	gr = calloc(size / o->ring + 1, (size_t)o->gather);
	if (!tok || !gs || !gr)
		MPI_Abort(comm, 2);
	int base = me - me % o->ring, right = base + (me - base + 1) % o->ring;
	int left = base + (me - base + o->ring - 1) % o->ring;
	MPI_Comm_split(comm, me == base ? 0 : MPI_UNDEFINED, me, &leaders);
	MPI_Barrier(comm);
	t0 = MPI_Wtime();
	for (int it = 0; it < o->iters; it++) {
		for (int l = 0; l < o->laps; l++) {
			if (me == base) {
				MPI_Send(tok, (int)o->token, MPI_BYTE, right, 1, comm);
				MPI_Recv(tok, (int)o->token, MPI_BYTE, left, 1, comm, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(tok, (int)o->token, MPI_BYTE, left, 1, comm, MPI_STATUS_IGNORE);
				MPI_Send(tok, (int)o->token, MPI_BYTE, right, 1, comm);
			}
		}
		if (leaders != MPI_COMM_NULL)
			MPI_Allgather(gs, (int)o->gather, MPI_BYTE, gr, (int)o->gather, MPI_BYTE, leaders);
	}
	t0 = MPI_Wtime() - t0;
	if (leaders != MPI_COMM_NULL)
		MPI_Comm_free(&leaders);
	free(tok);
	free(gs);
	free(gr);
	return t0;
}

int main(int argc, char **argv)
{
	opts_t o;
	int me, size, n;
	e2e_edge_t *e;
	MPI_Comm comm = MPI_COMM_WORLD;
	double t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (parse(argc, argv, &o) < 0 || size % o.ring) {
		if (me == 0)
			fprintf(stderr,
				"usage: ring_of_rings [--ring N] [--token B] [--laps L] [--gather B] "
				"[--iters N] [--topo dist|graph|none] [--weights on|off] [--pattern-out FILE] "
				"(ranks a multiple of N)\n");
		MPI_Finalize();
		return 2;
	}
	e = malloc(sizeof(*e) * (size / o.ring + 2));
	if (!e)
		MPI_Abort(MPI_COMM_WORLD, 2);
	n = pattern(me, size, &o, e);
	if (o.topo) { /* each process declares its own vertex; afterwards it plays vertex = its new rank */
		comm = o.topo == 2 ? make_graph(size, &o) : make_comm(me, size, &o, e, n);
		MPI_Comm_rank(comm, &me);
		n = pattern(me, size, &o, e);
	}
	t = run(comm, &o);
	e2e_report(comm, t, e, n);
	if (o.pattern_out && e2e_write_pattern(comm, o.pattern_out, e, n, o.iters) < 0)
		MPI_Abort(MPI_COMM_WORLD, 4);
	if (comm != MPI_COMM_WORLD)
		MPI_Comm_free(&comm);
	free(e);
	MPI_Finalize();
	return 0;
}
