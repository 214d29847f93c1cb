/*
 * plugin/mpi/pmpi_learn.c: what a learning run records (RANKMAP_LEARN=1), and its cost.
 *
 * Each topology communicator created by a call with reorder=1 gets a record (at most RMP_LEARN_COMMS per
 * process; later ones are not learned): its neighbours in a small sorted array, each with a slot, and
 * two counters per slot (bytes, messages). Slots are the neighbourhood collectives' order: Cartesian
 * 2d = the -1 neighbour of dimension d, 2d + 1 the +1 neighbour; graphs: the i-th out-neighbour (when the
 * communicator reports no graph, as under SMPI, the i-th neighbour of its vertex in the call's structure,
 * sent by the root: structure_neighbours). A send
 * on the communicator finds its slot by a scan (<= 8 neighbours) or a binary search, then adds to two
 * counters (through a one-entry cache, so that a loop to one neighbour does not search): no hash, no
 * lock, no allocation, nothing sent. Sends on MPI_COMM_WORLD are matched against the world ranks of the
 * last record's neighbours. Sends to ranks that are not neighbours go to the record's "other" counters;
 * sends on other communicators are only counted (messages) in the process's "untracked". Persistent
 * sends count at each MPI_Start. The counting itself is in pmpi_learn.h and pmpi_learn_send.c.
 *
 * At MPI_Finalize every record is reduced, in creation order, over a private duplicate of the call's
 * communicator made at creation (so the user may free theirs), to the call's root, which turns it into a
 * per-rank pattern and merges it into the store (pmpi_learn_key.c).
 *
 * State: one context per process (per rank under SMPI, as the tracer's).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmpi.h"
#include "pmpi_learn.h"

/* ---- the hot path ------------------------------------------------------------------------------ */

static void learn_send(MPI_Comm comm, int dest, int n, MPI_Datatype type)
{
	rmp_learn_count(comm, dest, n, type);
}

void rmp_learn_neighbors(MPI_Comm comm, int n, MPI_Datatype type, const int counts[], const MPI_Datatype types[])
{
	rmp_learn_t *l = rmp_learn_ctx();

	for (int i = l ? l->n : 0; i-- > 0;) {
		rmp_learn_rec_t *c = &l->rec[i];

		if (c->comm != comm)
			continue;
		int sz = types ? 0 : rmp_type_size(type);

		for (int s = 0; s < c->nslots; s++) {
			int k = counts ? counts[s] : n;

			if (types)
				sz = rmp_type_size(types[s]);
			uint64_t *t = &c->cnt[2 * s];

			t[0] += (uint64_t)(k > 0 ? k : 0) * (uint64_t)sz;
			t[1]++;
		}
		return;
	}
}

int MPI_Comm_free(MPI_Comm *comm)
{
	rmp_learn_t *l = rmp_active.learn ? rmp_learn_ctx() : NULL;

	for (int i = 0; l && comm && i < l->n; i++)
		if (l->rec[i].comm == *comm && *comm != MPI_COMM_NULL) {
			rmp_learn_invalidate(l);        /* the cache's counts go to the record first */
			l->rec[i].comm = MPI_COMM_NULL; /* the handle may be reused: stop counting, keep the counts */
			if (l->world == &l->rec[i])
				l->world = NULL;
		}
	return PMPI_Comm_free(comm);
}

/* ---- tracking a new communicator ---------------------------------------------------------------- */

/* The topology newcomm reports. Cartesian calls (cart) are MPI_CART without asking (SMPI has no
 * MPI_Topo_test); under SMPI graphs report none (its graph constructors return plain duplicates). */
static int topo_kind(MPI_Comm newcomm, int cart)
{
	int status = cart ? MPI_CART : MPI_UNDEFINED;

#ifndef RANKMAP_SMPI
	if (!cart && newcomm != MPI_COMM_NULL)
		PMPI_Topo_test(newcomm, &status);
#else
	(void)newcomm;
#endif
	return status;
}

/* Root: the send buffer of structure_neighbours: at displs[r] the neighbours of verts[r]. NULL on failure. */
static int *structure_lists(const rmp_learn_rec_t *c, const int *verts, int size, int *counts, int *displs)
{
	long total = 0;
	int *send;

	for (int r = 0; r < size; r++) {
		int64_t x = verts[r];

		counts[r] = c->xadj && x >= 0 && (uint64_t)x < c->gn ? (int)(c->xadj[x + 1] - c->xadj[x]) : 0;
		displs[r] = (int)total, total += counts[r];
		if (total >= INT32_MAX)
			return NULL;
	}
	send = malloc(sizeof(int) * (size_t)(total + 1));
	for (int r = 0; send && r < size; r++)
		for (int i = 0; i < counts[r]; i++)
			send[displs[r] + i] = (int)c->adj[c->xadj[verts[r]] + (uint64_t)i];
	return send;
}

/* Graph calls whose communicator reports no graph topology (SMPI's constructors return plain duplicates;
 * programs keep their own neighbour lists): the neighbours of this process's vertex (its rank in the new
 * communicator: a graph's vertices are the new ranks) in the call's structure, which the root keeps
 * (c->xadj, c->adj: both directions of every edge, sorted). The root sends each process its list.
 * Collective over c->priv. Returns the list (malloc'ed; NULL on failure), *n its length. */
static int *structure_neighbours(const rmp_learn_rec_t *c, int *n)
{
	int size = 0, go = 1, *verts = NULL, *counts = NULL, *displs = NULL, *send = NULL, *v;

	*n = 0;
	PMPI_Comm_size(c->priv, &size);
	if (c->rank == 0) {
		verts = malloc(sizeof(int) * (size_t)size);
		counts = malloc(sizeof(int) * (size_t)size);
		displs = malloc(sizeof(int) * (size_t)size);
	}
	PMPI_Gather(&c->vertex, 1, MPI_INT, verts, 1, MPI_INT, 0, c->priv);
	if (c->rank == 0)
		go = verts && counts && displs && (send = structure_lists(c, verts, size, counts, displs));
	PMPI_Bcast(&go, 1, MPI_INT, 0, c->priv);
	if (go)
		PMPI_Scatter(counts, 1, MPI_INT, n, 1, MPI_INT, 0, c->priv);
	v = go ? malloc(sizeof(int) * (size_t)(*n + 1)) : NULL;
	if (go) { /* the lists go out only when every rank can take its own */
		int got = v != NULL;

		PMPI_Allreduce(&got, &go, 1, MPI_INT, MPI_MIN, c->priv);
	}
	if (go)
		PMPI_Scatterv(send, counts, displs, MPI_INT, v, *n, MPI_INT, 0, c->priv);
	else
		free(v), v = NULL;
	free(verts), free(counts), free(displs), free(send);
	if (!v)
		*n = 0;
	return v;
}

/* Fills c's neighbour tables (this process's part): from the list given (v, n; taken over), else from
 * newcomm's topology (status). 0 or -1 (out of memory). */
static int rec_neighbours(rmp_learn_rec_t *c, MPI_Comm newcomm, int status, int *v, int n)
{
	if (!v)
		v = rmp_out_neighbors(newcomm, status, &n);
	c->nslots = n;
	c->slot_rank = v;
	c->cnt = calloc((size_t)(2 * n + 2), sizeof(uint64_t));
	if (!c->cnt || (n && !v))
		return -1;
	return rmp_nbr_neighbours(&c->nbr, newcomm, v, n);
}

int rmp_learn_room(const rmp_call_t *call)
{
	rmp_learn_t *l = rmp_learn_of((rmp_call_t *)call)->on ? rmp_learn_ctx() : NULL;

	return !l ? 2 : l->n < RMP_LEARN_COMMS ? 0 : 1;
}

void rmp_learn_agreed(rmp_call_t *call, uint64_t worst, uint64_t lowest)
{
	rmp_learn_of(call)->track = worst == 0;
	if (worst == 2 && lowest == RMP_ELECT(call->rank)) {
		rm_error_t e = { 0 };

		rm_error_set(&e, "RANKMAP_LEARN", 0, 0, "set on some ranks of %s's communicator, not on all", call->fn);
		rmp_learn_warn(&e, "this call is not learned");
	}
}

/* Graph calls take their neighbours from the call's structure (structure_neighbours) where the library's
 * graph constructors return plain communicators: under SMPI (pmpi_topo.c). Elsewhere the communicator
 * reports its graph (a communicator that did not would count its sends as "other"). Decided by the build,
 * so every rank takes the same branch without asking the others. */
#ifdef RANKMAP_SMPI
#define GRAPH_FROM_STRUCTURE 1
#else
#define GRAPH_FROM_STRUCTURE 0
#endif

void rmp_learn_track(rmp_call_t *call, MPI_Comm newcomm, int ndims, const int periods[])
{
	rmp_learn_t *l = rmp_learn_ctx();
	MPI_Comm priv = MPI_COMM_NULL;
	int *given = NULL, ng = 0;
	rmp_learn_call_t *lc = rmp_learn_of(call);

	/* every rank of the call takes the same branch (lc->track was agreed by rmp_agree): the records
	 * are made together or not at all */
	if (!lc->track || !l || PMPI_Comm_dup(call->comm, &priv) != MPI_SUCCESS) {
		free(lc->xadj), free(lc->adj);
		lc->xadj = NULL, lc->adj = NULL;
		return;
	}
	rmp_learn_rec_t *c = &l->rec[l->n++];

	memset(c, 0, sizeof(*c));
	c->comm = newcomm;
	c->priv = priv;
	c->rank = call->rank;
	c->nverts = call->nverts;
	c->order = lc->order;
	snprintf(c->fn, sizeof(c->fn), "%s", call->fn);
	c->ndims = ndims;
	for (int d = 0; d < ndims && d < RM_PATTERN_MAXDIMS; d++)
		c->periods[d] = periods[d] != 0;
	c->xadj = lc->xadj, c->adj = lc->adj, c->gn = lc->n, c->ghash = lc->hash;
	lc->xadj = NULL, lc->adj = NULL;
	rmp_learn_invalidate(l); /* the world record may change, newcomm may be a cached handle */
	c->vertex = -1;
	if (newcomm != MPI_COMM_NULL)
		PMPI_Comm_rank(newcomm, &c->vertex);
	if (!ndims && GRAPH_FROM_STRUCTURE)
		given = structure_neighbours(c, &ng); /* collective over c->priv */
	if (newcomm != MPI_COMM_NULL) {
		if (rec_neighbours(c, newcomm, topo_kind(newcomm, ndims > 0), given, ng) != 0)
			c->nslots = 0, c->nbr.nrank = 0, c->nbr.nworld = 0; /* counts go to "other" */
		l->world = c;
	} else {
		free(given);
	}
}

void rmp_learn_finalize(void)
{
	rmp_learn_t *l = rmp_learn_ctx();

	if (!l)
		return;
	rmp_learn_flush(l); /* the cache's counts into the records before they are collected */
	for (int i = 0; i < l->n; i++) {
		rmp_learn_rec_t *c = &l->rec[i];

		rmp_learn_collect(c); /* collective over c->priv (pmpi_learn_key.c) */
		PMPI_Comm_free(&c->priv);
		rmp_nbr_free(&c->nbr), free(c->cnt), free(c->slot_rank), free(c->xadj), free(c->adj);
	}
	free(l);
	rmp_learn_ctx_set(NULL); /* under SMPI rmp_active.learn stays: other ranks may still learn */
}

/* ---- learning as an observer of the core (pmpi_core.c) ---------------------------------------------- */

/* The agreement's words: the worst room (rmp_learn_room) and the election of the lowest rank that learns. */
static void learn_vote(const rmp_call_t *call, uint64_t v[RMP_VOTE_WORDS])
{
	int room = rmp_learn_room(call);

	v[0] = (uint64_t)room;
	v[1] = room < 2 ? RMP_ELECT(call->rank) : 0;
}

static void learn_agreed(rmp_call_t *call, const uint64_t v[RMP_VOTE_WORDS])
{
	rmp_learn_agreed(call, v[0], v[1]);
}

/* Root: the pattern used, in the report line (RANKMAP_LEARN: its id and runs, or "none"). */
static void learn_report(const rmp_call_t *call, char *buf, size_t len)
{
	const rmp_learn_call_t *lc = rmp_learn_of((rmp_call_t *)call);

	if (lc->on)
		snprintf(buf, len, " learned=%s", lc->used);
	else if (len)
		buf[0] = '\0';
}

static const rmp_observer_t learn_observer = {
	.name = "learn",
	.order = 20,
	.active = &rmp_active.learn,
	.init = rmp_learn_init,
	.finalize = rmp_learn_finalize,
	.call_begin = rmp_learn_call_begin,
	.vote = learn_vote,
	.agreed = learn_agreed,
	.cart_weights = rmp_learn_cart_weights,
	.graph_weights = rmp_learn_graph_weights,
	.created = rmp_learn_track,
	.report = learn_report,
	.send = learn_send,
	.neighbors = rmp_learn_neighbors,
	.persist_add = rmp_learn_persist_add,
	.persist_start = rmp_learn_persist_start,
};

__attribute__((constructor)) static void learn_register(void)
{
	rmp_learn_self(&learn_observer);
	rmp_observer_add(&learn_observer);
}
