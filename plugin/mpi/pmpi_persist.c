/*
 * plugin/mpi/pmpi_persist.c: what the observers share about a rank's traffic: the persistent send
 * requests (one table for the tracer and learning) and the out-neighbours of a communicator (one lookup).
 *
 * Persistent sends: *_init remembers the request's communicator, destination and bytes per start in a
 * small open-addressing table keyed by the request handle (one entry per live persistent send request,
 * made at *_init, emptied at MPI_Request_free, freed at MPI_Finalize; nothing allocated per message);
 * MPI_Start/MPI_Startall hand each started entry to the active observers' persist_start hooks, with the
 * observer's own note in the entry (the tracer keeps the destination's world rank there, learning its
 * counters and when it looked them up). A request not in the table (a persistent receive, one made before
 * any observer was active) counts nothing. Under SMPI each rank has its own table (rmp_slot_t).
 */
#include <stdlib.h>
#include <string.h>

#include "pmpi_obs.h"

struct rmp_active rmp_active __attribute__((aligned(64)));

struct rmp_persist_tab {
	size_t cap, used; /* used: live and deleted entries (a rebuild drops the deleted ones); cap: 2^k */
	rmp_persist_t ent[];
};

static rmp_slot_t persist_slot;

static uint64_t req_key(MPI_Request req)
{
	uint64_t k = 0;

	memcpy(&k, &req, sizeof(req) < sizeof(k) ? sizeof(req) : sizeof(k));
	return k + 2; /* 0 and 1 mark empty and deleted entries */
}

/* The entry of key in *tp, or NULL; with insert, a fresh entry for it (growing the table), NULL without
 * memory. */
static rmp_persist_t *find(struct rmp_persist_tab **tp, uint64_t key, int insert)
{
	struct rmp_persist_tab *t = *tp;

	if (insert && (!t || 2 * (t->used + 1) > t->cap)) { /* rebuilt at twice the live entries or more */
		size_t live = 0, cap = 16;

		for (size_t i = 0; t && i < t->cap; i++)
			live += t->ent[i].key > 1;
		while (cap < 4 * (live + 1))
			cap *= 2;
		struct rmp_persist_tab *nt = calloc(1, sizeof(*nt) + cap * sizeof(rmp_persist_t));

		if (!nt)
			return NULL;
		nt->cap = cap;
		*tp = nt;
		for (size_t i = 0; t && i < t->cap; i++)
			if (t->ent[i].key > 1)
				*find(tp, t->ent[i].key, 1) = t->ent[i];
		free(t);
		t = nt;
	}
	if (!t)
		return NULL;
	/* the product's high bits: handles that are aligned pointers (Open MPI) differ only above their low bits */
	size_t j = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - __builtin_ctzll(t->cap))), tomb = SIZE_MAX;

	for (; t->ent[j].key; j = (j + 1) & (t->cap - 1)) {
		if (t->ent[j].key == key)
			return &t->ent[j];
		if (t->ent[j].key == 1 && tomb == SIZE_MAX)
			tomb = j;
	}
	if (!insert)
		return NULL;
	if (tomb != SIZE_MAX)
		j = tomb;
	else
		t->used++;
	t->ent[j].key = key;
	return &t->ent[j];
}

void rmp_obs_persist_add(MPI_Request req, MPI_Comm comm, int dest, int n, MPI_Datatype type)
{
	struct rmp_persist_tab *t0 = rmp_slot_get(&persist_slot), *t = t0;
	/* MPI_PROC_NULL is negative in every MPI: nothing is ever sent */
	rmp_persist_t *e = req != MPI_REQUEST_NULL && dest >= 0 ? find(&t, req_key(req), 1) : NULL;

	if (t != t0) /* made or grown */
		rmp_slot_set(&persist_slot, t);
	if (!e)
		return;
	uint64_t key = e->key;

	memset(e, 0, sizeof(*e));
	e->key = key, e->comm = comm, e->dest = dest;
	e->bytes = (uint64_t)(n > 0 ? n : 0) * (uint64_t)rmp_type_size(type);
	for (int i = 0; i < rmp_observer_count(); i++) {
		const rmp_observer_t *o = rmp_observer_at(i);

		if (*o->active && o->persist_add)
			o->persist_add(e, &e->note[i]);
	}
}

static rmp_persist_t *lookup(MPI_Request req)
{
	struct rmp_persist_tab *t = rmp_slot_get(&persist_slot);

	return t && req != MPI_REQUEST_NULL ? find(&t, req_key(req), 0) : NULL;
}

void rmp_obs_persist_start(MPI_Request req)
{
	rmp_persist_t *e = lookup(req);

	for (int i = 0; e && i < rmp_observer_count(); i++) {
		const rmp_observer_t *o = rmp_observer_at(i);

		if (*o->active && o->persist_start)
			o->persist_start(e, &e->note[i]);
	}
}

void rmp_obs_persist_del(MPI_Request req)
{
	rmp_persist_t *e = lookup(req);

	if (e)
		e->key = 1;
}

void rmp_persist_free(void)
{
	free(rmp_slot_get(&persist_slot));
	rmp_slot_set(&persist_slot, NULL);
}

int *rmp_out_neighbors(MPI_Comm comm, int status, int *n)
{
	int *v = NULL, me = 0;

	*n = 0;
	if (status == MPI_CART) {
		int nd = 0;

		PMPI_Cartdim_get(comm, &nd);
		v = malloc(sizeof(int) * (size_t)(2 * nd + 1));
		for (int d = 0; v && d < nd; d++)
			PMPI_Cart_shift(comm, d, 1, &v[2 * d], &v[2 * d + 1]);
		*n = v ? 2 * nd : 0;
	} else if (status == MPI_GRAPH) {
		PMPI_Comm_rank(comm, &me);
		PMPI_Graph_neighbors_count(comm, me, n);
		v = malloc(sizeof(int) * (size_t)(*n + 1));
		if (v)
			PMPI_Graph_neighbors(comm, me, *n, v);
#ifndef RANKMAP_SMPI /* SMPI has no distributed graphs */
	} else if (status == MPI_DIST_GRAPH) {
		int in = 0, out = 0, w = 0;

		PMPI_Dist_graph_neighbors_count(comm, &in, &out, &w);
		int *src = malloc(sizeof(int) * (size_t)(in + 1));

		v = malloc(sizeof(int) * (size_t)(out + 1));
		/* MPI_UNWEIGHTED is a sentinel address that GCC takes for a zero-sized array */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
		if (src && v)
			PMPI_Dist_graph_neighbors(comm, in, src, MPI_UNWEIGHTED, out, v, MPI_UNWEIGHTED);
#pragma GCC diagnostic pop
		free(src);
		*n = src && v ? out : 0;
#endif
	}
	if (!v)
		*n = 0;
	return v;
}
