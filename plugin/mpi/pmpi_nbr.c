/*
 * plugin/mpi/pmpi_nbr.c: the neighbour table the observers share (declared in pmpi_obs.h): what
 * destination d of communicator c is, in one structure (rmp_nbr_t) with two views.
 *
 * The world view answers "which world rank is rank d of c" for any d: the tracer counts every send by
 * its destination's world rank, on any communicator, so it needs the whole translation (built at the
 * first send on c, kept on c as an attribute and freed with it). The neighbour view answers "which
 * out-neighbour index is d" (by c's rank, or by world rank for sends on MPI_COMM_WORLD) for the few
 * communicators learning tracks: only the out-neighbours matter there, so it holds O(degree) sorted
 * pairs and never the whole translation (which would cost every rank O(size) per tracked
 * communicator), and it must outlive the user's communicator (learning reduces its counters at
 * MPI_Finalize). The questions share their translation (PMPI_Group_translate_ranks, done here only)
 * and their type; each view is filled by the feature that asks it, on its own instance.
 */
#include <stdlib.h>
#include <string.h>

#include "pmpi_obs.h"

/* comm's group translated to MPI_COMM_WORLD's: out[i] = world rank of ranks[i] (-1 when none). */
static void translate(MPI_Comm comm, int n, const int *ranks, int *out)
{
	MPI_Group g, wg;

	PMPI_Comm_group(comm, &g);
	PMPI_Comm_group(MPI_COMM_WORLD, &wg);
	if (n > 0)
		PMPI_Group_translate_ranks(g, n, ranks, wg, out);
	PMPI_Group_free(&g);
	PMPI_Group_free(&wg);
	for (int i = 0; i < n; i++)
		if (out[i] == MPI_UNDEFINED || out[i] == MPI_PROC_NULL)
			out[i] = -1;
}

void rmp_nbr_world_build(rmp_nbr_t *m, MPI_Comm comm)
{
	PMPI_Comm_test_inter(comm, &m->inter);
	if (m->inter)
		return;
	PMPI_Comm_size(comm, &m->size);
	int cmp = MPI_UNEQUAL;

	PMPI_Comm_compare(comm, MPI_COMM_WORLD, &cmp);
	if (cmp == MPI_IDENT || cmp == MPI_CONGRUENT) { /* duplicates of the world, topologies on it */
		m->ident = 1;
		return;
	}
	m->world = malloc(sizeof(int) * (size_t)m->size);
	int *idx = malloc(sizeof(int) * (size_t)m->size);

	if (!m->world || !idx) {
		free(idx);
		free(m->world);
		m->world = NULL;
		m->inter = 1; /* no translation: nothing is counted rather than failing */
		return;
	}
	for (int i = 0; i < m->size; i++)
		idx[i] = i;
	translate(comm, m->size, idx, m->world);
	free(idx);
}

static int cmp_pair(const void *a, const void *b)
{
	const int *x = a, *y = b;

	return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Sorted (key, index) pairs of the valid (>= 0) entries of v (n of them). */
static int *pairs(const int *v, int n, int *np)
{
	int *p = malloc(sizeof(int) * (size_t)(2 * n + 2)), k = 0;

	for (int s = 0; p && s < n; s++)
		if (v[s] >= 0)
			p[2 * k] = v[s], p[2 * k + 1] = s, k++;
	if (p)
		qsort(p, (size_t)k, 2 * sizeof(int), cmp_pair);
	*np = p ? k : 0;
	return p;
}

int rmp_nbr_neighbours(rmp_nbr_t *m, MPI_Comm comm, const int *v, int n)
{
	int *w = malloc(sizeof(int) * (size_t)(n + 1)), *valid = malloc(sizeof(int) * (size_t)(n + 1));

	m->by_rank = pairs(v, n, &m->nrank);
	if (!w || !valid || !m->by_rank || (n && !v)) {
		free(w), free(valid);
		return -1;
	}
	for (int s = 0; s < n; s++)
		valid[s] = v[s] >= 0 ? v[s] : MPI_PROC_NULL;
	for (int s = 0; s < n; s++)
		w[s] = MPI_UNDEFINED;
	translate(comm, n, valid, w);
	m->by_world = pairs(w, n, &m->nworld);
	free(w), free(valid);
	return m->by_world ? 0 : -1;
}

int rmp_nbr_index(const int *nb, int n, int r)
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
			while (mid > 0 && nb[2 * (mid - 1)] == r) /* duplicates: the first index */
				mid--;
			return nb[2 * mid + 1];
		}
	}
	return -1;
}

void rmp_nbr_free(rmp_nbr_t *m)
{
	free(m->world), free(m->by_rank), free(m->by_world);
	memset(m, 0, sizeof(*m));
}
