/*
 * topo/net_ib_hops.c: hop counts between switches and between hosts. In a tree (make_tree,
 * net_ib_graph.c) leaf-to-leaf hops are twice the first level whose group holds both leaves; otherwise
 * they come from the leaf table (filled at finalize, or row by row on first use); beyond IB_LEAF_TABLE_MAX leaves from
 * BFS rows computed on demand and kept in a small cache (IB_ROW_CACHE rows, round robin); hops of a
 * switch that is no leaf by one BFS. Lazy state is guarded by a mutex, so concurrent const queries
 * are safe.
 */
#include <limits.h>
#include <string.h>

#include "net_ib_private.h"

static unsigned cached_hops(const struct topo_fabric *cf, long s, long t)
{
	struct topo_fabric *f = (struct topo_fabric *)cf; /* the cache is mutable state behind const */
	unsigned i, d;
	uint8_t *row = NULL;

	pthread_mutex_lock(&f->cache_lock);
	if (!f->row_cache) {
		ib_bfs(f, f->bfs_queue, f->bfs_dist, s);
		d = f->bfs_dist[t];
		pthread_mutex_unlock(&f->cache_lock);
		return d;
	}
	for (i = 0; i < IB_ROW_CACHE; i++)
		if (f->row_src[i] == s) {
			row = f->row_cache + (size_t)i * f->nsw;
			break;
		}
	if (!row) {
		i = f->row_next++ % IB_ROW_CACHE;
		row = f->row_cache + (size_t)i * f->nsw;
		ib_bfs(f, f->bfs_queue, row, s);
		f->row_src[i] = s;
	}
	d = row[t];
	pthread_mutex_unlock(&f->cache_lock);
	return d;
}

/* Lazily filled leaf table: computes row ls on first use. */
static unsigned lazy_leaf_hops(const struct topo_fabric *cf, long ls, long lt)
{
	struct topo_fabric *f = (struct topo_fabric *)cf;
	unsigned d;

	pthread_mutex_lock(&f->cache_lock);
	if (!f->row_ready[ls]) {
		ib_fill_leaf_row(f, (size_t)ls);
		f->row_ready[ls] = 1;
	}
	d = f->leaf_hops[(size_t)ls * f->nleaves + (size_t)lt];
	pthread_mutex_unlock(&f->cache_lock);
	return d;
}

unsigned ib_tree_leaf_hops(const struct topo_fabric *f, long s, long t)
{
	int k;

	if (s == t)
		return 0;
	for (k = 1; k < f->nlevels; k++)
		if (f->group[(size_t)k * f->nsw + (size_t)s] == f->group[(size_t)k * f->nsw + (size_t)t])
			return 2 * k < 254 ? (unsigned)(2 * k) : 254;
	return IB_HOPS_INF;
}

unsigned ib_switch_hops(const struct topo_fabric *f, long s, long t)
{
	long ls, lt;

	if (s < 0 || t < 0 || (size_t)s >= f->nsw || (size_t)t >= f->nsw)
		return IB_HOPS_INF;
	if (s == t)
		return 0;
	ls = f->leaf_of_sw[s];
	lt = f->leaf_of_sw[t];
	if (f->tree && ls >= 0 && lt >= 0)
		return ib_tree_leaf_hops(f, s, t);
	if (f->leaf_hops && ls >= 0 && lt >= 0)
		return f->row_ready ? lazy_leaf_hops(f, ls, lt) : f->leaf_hops[(size_t)ls * f->nleaves + (size_t)lt];
	return cached_hops(f, s, t); /* no leaf table, or a switch that is no leaf */
}

/* Hops on the default rail (topo_fabric_default_rail: the lowest rail both hosts reach each other
 * on); without a common rail, the closest pair of the two hosts' HCAs (hosts in several subnets). */
int topo_fabric_hops(const struct topo_fabric *f, size_t a, size_t b)
{
	const struct ib_host *ha, *hb;
	unsigned best = IB_HOPS_INF, r;
	uint32_t i, j;

	if (!f->finalized || a >= f->nhosts || b >= f->nhosts)
		return -1;
	if (a == b)
		return 0;
	for (r = 0; r < f->nrails; r++) {
		int d = topo_fabric_rail_hops(f, a, b, r);

		if (d >= 0)
			return d;
	}
	ha = &f->hosts[a];
	hb = &f->hosts[b];
	for (i = 0; i < ha->n; i++)
		for (j = 0; j < hb->n; j++) {
			unsigned d = ib_att_hops(f, &f->att[ha->first + i], &f->att[hb->first + j]);

			if (d < best)
				best = d;
		}
	return best == IB_HOPS_INF ? -1 : (int)best;
}

size_t topo_fabric_host_components(const struct topo_fabric *f, size_t h, uint32_t *out, size_t max)
{
	const struct ib_host *hh;
	size_t n = 0, i, j;

	if (!f->finalized || h >= f->nhosts)
		return 0;
	hh = &f->hosts[h];
	for (i = 0; i < hh->n; i++) {
		const struct ib_attach *x = &f->att[hh->first + i];
		uint32_t id;

		if (x->sw >= 0 && f->nlevels > 0)
			id = f->group[(size_t)(f->nlevels - 1) * f->nsw + (size_t)x->sw];
		else if (x->peer_ca != IB_NONE) /* a back-to-back cable: its own component */
			id = (uint32_t)f->nsw + (x->ca < x->peer_ca ? x->ca : x->peer_ca);
		else
			continue;
		if (id == IB_NONE)
			continue;
		for (j = 0; j < n && j < max && out[j] != id; j++)
			;
		if (j < n && j < max)
			continue; /* already listed */
		if (n < max)
			out[n] = id;
		n++;
	}
	return n;
}
