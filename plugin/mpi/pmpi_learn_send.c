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
 * Persistent sends: the table the observers share (pmpi_persist.c) holds each live persistent send
 * request's communicator, destination and bytes; learning's note in its entry holds its counters, looked
 * up at *_init and again only when the records change (l->gen). Nothing is allocated per message.
 */
#include <stdlib.h>
#include <string.h>

#include "pmpi_learn.h"

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
			int s = rmp_nbr_index(c->nbr.by_rank, c->nbr.nrank, dest);

			return s >= 0 ? &c->cnt[2 * s] : c->other;
		}
	}
	if (comm == MPI_COMM_WORLD && l->world) {
		int s = rmp_nbr_index(l->world->nbr.by_world, l->world->nbr.nworld, dest);

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

/* ---- persistent sends (the shared table, pmpi_persist.c) ---------------------------------------- */

void rmp_learn_persist_add(const rmp_persist_t *p, rmp_persist_note_t *note)
{
	rmp_learn_t *l = rmp_learn_here();

	if (!l)
		return;
	note->p = counters(l, p->comm, p->dest);
	note->gen = l->gen, note->set = 1;
}

void rmp_learn_persist_start(const rmp_persist_t *p, rmp_persist_note_t *note)
{
	rmp_learn_t *l = rmp_learn_here();
	uint64_t *cnt;

	if (!l)
		return;
	if (!note->set || note->gen != l->gen) /* a record was made or stopped counting since the lookup */
		note->p = counters(l, p->comm, p->dest), note->gen = l->gen, note->set = 1;
	if ((cnt = note->p))
		cnt[0] += p->bytes, cnt[1]++;
	else
		l->untracked[1]++; /* messages only, as rmp_learn_miss counts them */
}
