/*
 * plugin/mpi/pmpi_learn_send.c: where a learning run's sends are counted (RANKMAP_LEARN=1).
 *
 * The hot path itself is in pmpi_learn.h, inlined into the MPI_ send wrappers: a send of the same
 * (destination, communicator, datatype, count) as the last one only bumps the one-entry cache's message
 * count. This file holds its other case (a miss: find the counters of (comm, dest) by a scan of the
 * records and a search of the record's neighbours, then refill the cache), the flush that turns the
 * cache's messages into bytes, and the persistent sends (MPI_Send_init & co. started by
 * MPI_Start/MPI_Startall), which never pass through the cache.
 *
 * Persistent sends: a small open-addressing table keyed by the request handle, one entry per live
 * persistent send request (made at *_init, emptied at MPI_Request_free, freed at the finalize), holding
 * the request's communicator, destination and bytes, and its counters, looked up once and again only
 * when the records change (l->gen). MPI_Start of a request that is not in the table (a persistent
 * receive, a request made before learning began) counts nothing. Nothing is allocated per message.
 */
#include <stdlib.h>
#include <string.h>

#include "pmpi_learn.h"

/* Slot of rank r in a sorted (rank, slot) array, or -1. */
static int find_slot(const int *nb, int n, int r)
{
	if (n <= 8) {
		for (int i = 0; i < n; i++)
			if (nb[2 * i] == r)
				return nb[2 * i + 1];
		return -1;
	}
	int lo = 0, hi = n - 1;

	while (lo <= hi) {
		int mid = (lo + hi) >> 1;

		if (nb[2 * mid] < r)
			lo = mid + 1;
		else if (nb[2 * mid] > r)
			hi = mid - 1;
		else {
			while (mid > 0 && nb[2 * (mid - 1)] == r) /* duplicates: the first slot */
				mid--;
			return nb[2 * mid + 1];
		}
	}
	return -1;
}

/* The counters (bytes, messages) of a send to rank dest (>= 0) of comm: its slot's, or the record's
 * "other" when dest is not a neighbour; NULL when comm is not tracked. Sends on MPI_COMM_WORLD are
 * matched against l->world's neighbours by world rank. */
static uint64_t *counters(rmp_learn_t *l, MPI_Comm comm, int dest)
{
	if (comm == MPI_COMM_NULL)
		return NULL;
	for (int i = l->n; i-- > 0;) {
		rmp_learn_rec_t *c = &l->rec[i];

		if (c->comm == comm) {
			int s = find_slot(c->nb, c->nnb, dest);

			return s >= 0 ? &c->cnt[2 * s] : c->other;
		}
	}
	if (comm == MPI_COMM_WORLD && l->world) {
		int s = find_slot(l->world->wnb, l->world->nnb, dest);

		return s >= 0 ? &l->world->cnt[2 * s] : l->world->other;
	}
	return NULL;
}

void rmp_learn_flush(rmp_learn_t *l)
{
	rmp_learn_hit_t *h = rmp_learn_entry(l);

	if (h->dest != RMP_LEARN_NOHIT && h->cnt) {
		h->cnt[0] += h->msgs * h->bytes;
		h->cnt[1] += h->msgs;
	}
	h->dest = RMP_LEARN_NOHIT;
	h->msgs = 0;
}

void rmp_learn_invalidate(rmp_learn_t *l)
{
	rmp_learn_flush(l);
	l->gen++;
}

void rmp_learn_miss(rmp_learn_t *l, MPI_Comm comm, int dest, int n, MPI_Datatype type)
{
	rmp_learn_hit_t *h = rmp_learn_entry(l);
	int same = dest == h->dest && comm == h->comm && type == h->type; /* only the count changed */
	uint64_t *k = same ? h->cnt : NULL, size = 0;

	rmp_learn_flush(l);
	if (dest < 0) /* MPI_PROC_NULL is negative in every MPI: nothing is sent */
		return;
	if (!same)
		k = counters(l, comm, dest);
	if (k && k != l->untracked) /* untracked: messages only, no size asked */
		size = (uint64_t)rmp_type_size(type);
	*h = (rmp_learn_hit_t){ .comm = comm,
				.dest = dest,
				.count = n,
				.type = type,
				.msgs = 1,
				.bytes = (uint64_t)(n > 0 ? n : 0) * size,
				.cnt = k ? k : l->untracked };
}

/* ---- persistent sends ------------------------------------------------------------------------------ */

typedef struct persist_ent {
	uint64_t key; /* request handle bits + 2; 0: empty, 1: deleted */
	MPI_Comm comm;
	int dest;
	unsigned gen;   /* l->gen when cnt was looked up */
	uint64_t bytes; /* of one start (asked once, at *_init) */
	uint64_t *cnt;  /* NULL: untracked */
} persist_ent_t;

struct rmp_learn_persist {
	size_t cap, used; /* used: live and deleted entries (a rebuild drops the deleted ones); cap: 2^k */
	persist_ent_t ent[];
};

static uint64_t req_key(MPI_Request req)
{
	uint64_t k = 0;

	memcpy(&k, &req, sizeof(req) < sizeof(k) ? sizeof(req) : sizeof(k));
	return k + 2;
}

/* The entry of key, or NULL; with insert, a free entry for it (growing the table), NULL without memory. */
static persist_ent_t *persist_find(rmp_learn_t *l, uint64_t key, int insert)
{
	rmp_learn_persist_t *t = l->persist;

	if (insert && (!t || 2 * (t->used + 1) > t->cap)) { /* rebuilt at twice the live entries or more */
		size_t live = 0, cap = 16;

		for (size_t i = 0; t && i < t->cap; i++)
			live += t->ent[i].key > 1;
		while (cap < 4 * (live + 1))
			cap *= 2;
		rmp_learn_persist_t *nt = calloc(1, sizeof(*nt) + cap * sizeof(persist_ent_t));

		if (!nt)
			return NULL;
		nt->cap = cap;
		l->persist = nt;
		for (size_t i = 0; t && i < t->cap; i++)
			if (t->ent[i].key > 1)
				*persist_find(l, t->ent[i].key, 1) = t->ent[i];
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

void rmp_learn_persist_add(rmp_learn_t *l, MPI_Request req, MPI_Comm comm, int dest, int n, MPI_Datatype type)
{
	persist_ent_t *e;

	if (!l || req == MPI_REQUEST_NULL || dest < 0 || !(e = persist_find(l, req_key(req), 1)))
		return;
	e->comm = comm, e->dest = dest, e->gen = l->gen;
	e->cnt = counters(l, comm, dest);
	e->bytes = (uint64_t)(n > 0 ? n : 0) * (uint64_t)rmp_type_size(type);
}

void rmp_learn_persist_start(rmp_learn_t *l, MPI_Request req)
{
	persist_ent_t *e;

	if (!l || !l->persist || req == MPI_REQUEST_NULL || !(e = persist_find(l, req_key(req), 0)))
		return;
	if (e->gen != l->gen) /* a record was made or stopped counting since the lookup */
		e->cnt = counters(l, e->comm, e->dest), e->gen = l->gen;
	if (e->cnt)
		e->cnt[0] += e->bytes, e->cnt[1]++;
	else
		l->untracked[1]++; /* messages only, as rmp_learn_miss counts them */
}

void rmp_learn_persist_del(rmp_learn_t *l, MPI_Request req)
{
	persist_ent_t *e;

	if (l && l->persist && req != MPI_REQUEST_NULL && (e = persist_find(l, req_key(req), 0)))
		e->key = 1;
}

void rmp_learn_persist_free(rmp_learn_t *l)
{
	free(l->persist);
	l->persist = NULL;
}
