/*
 * topo/net_ib_hops.c: hop counts between switches and between hosts. In a tree (make_tree,
 * net_ib_graph.c) leaf-to-leaf hops are twice the first level whose group holds both leaves; otherwise
 * they come from the leaf table (filled at finalize, or row by row on first use); beyond IB_LEAF_TABLE_MAX leaves from
 * BFS rows computed on demand and kept in a small cache (IB_ROW_CACHE rows, round robin); hops of a
 * switch that is no leaf by one BFS. Lazy state is guarded by a mutex, so concurrent const queries
 * are safe.
 */
#include <errno.h>
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

unsigned ib_att_hops(const struct topo_fabric *f, const struct ib_attach *x, const struct ib_attach *y)
{
	unsigned d;

	if (x->subnet != y->subnet)
		return IB_HOPS_INF;
	if (x->peer_ca == y->ca)
		return 1;
	if (x->sw < 0 || y->sw < 0)
		return IB_HOPS_INF;
	d = ib_switch_hops(f, x->sw, y->sw);
	return d == IB_HOPS_INF ? IB_HOPS_INF : d + 2;
}

int topo_fabric_rail_hops(const struct topo_fabric *f, size_t a, size_t b, unsigned r)
{
	const struct ib_host *ha, *hb;
	unsigned best = IB_HOPS_INF;
	uint32_t i, j;

	if (!f->finalized || a >= f->nhosts || b >= f->nhosts)
		return errno = EINVAL, -1;
	ha = &f->hosts[a];
	hb = &f->hosts[b];
	for (i = 0; i < ha->n; i++) {
		const struct ib_attach *x = &f->att[ha->first + i];

		if (x->rail != r)
			continue;
		if (a == b)
			return 0;
		for (j = 0; j < hb->n; j++) {
			const struct ib_attach *y = &f->att[hb->first + j];
			unsigned d;

			if (y->rail == r && (d = ib_att_hops(f, x, y)) < best)
				best = d;
		}
	}
	return best == IB_HOPS_INF ? (errno = ENOENT, -1) : (int)best;
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

long topo_fabric_default_rail(const struct topo_fabric *f, size_t a, size_t b)
{
	unsigned r;

	if (!f->finalized || a >= f->nhosts || b >= f->nhosts)
		return errno = EINVAL, -1;
	for (r = 0; r < f->nrails; r++)
		if (topo_fabric_rail_hops(f, a, b, r) >= 0)
			return (long)r;
	return errno = ENOENT, -1;
}

/* The attachments of a and b that give the path of topo_fabric_path (rail r, or the closest pair). */
static int path_atts(const struct topo_fabric *f, size_t a, size_t b, long r, const struct ib_attach **xa,
		     const struct ib_attach **xb)
{
	const struct ib_host *ha = &f->hosts[a], *hb = &f->hosts[b];
	unsigned best = IB_HOPS_INF;
	uint32_t i, j;

	*xa = *xb = NULL;
	for (i = 0; i < ha->n; i++) {
		const struct ib_attach *x = &f->att[ha->first + i];

		if (r >= 0 && x->rail != r)
			continue;
		for (j = 0; j < hb->n; j++) {
			const struct ib_attach *y = &f->att[hb->first + j];
			unsigned d;

			if (r >= 0 && y->rail != r)
				continue;
			if (a == b)
				d = x == y ? 0 : IB_HOPS_INF;
			else
				d = ib_att_hops(f, x, y);
			if (d < best) {
				best = d;
				*xa = x, *xb = y;
			}
		}
	}
	return best == IB_HOPS_INF ? -1 : (int)best;
}

int topo_fabric_path(const struct topo_fabric *f, size_t a, size_t b, long r, struct topo_fabric_path *p)
{
	const struct ib_attach *x, *y;
	const struct ib_gpair *gp;
	int d = -1;

	memset(p, 0, sizeof(*p));
	if (!f->finalized || a >= f->nhosts || b >= f->nhosts)
		return errno = EINVAL, -1;
	if (r < 0)
		r = topo_fabric_default_rail(f, a, b);
	if (r >= 0)
		d = path_atts(f, a, b, r, &x, &y);
	if (d < 0)
		d = path_atts(f, a, b, -1, &x, &y);
	if (d < 0)
		return errno = ENOENT, -1;
	p->hops = d;
	p->same_switch = x->sw >= 0 && x->sw == y->sw;
	if (f->dfgroup && x->sw >= 0 && y->sw >= 0 && f->dfgroup[x->sw] != IB_NONE && f->dfgroup[y->sw] != IB_NONE &&
	    f->dfgroup[x->sw] != f->dfgroup[y->sw]) {
		const struct ib_node *nd = &f->nodes[x->ca];

		p->global = 1;
		if ((gp = ib_gpair_find(f, f->dfgroup[x->sw], f->dfgroup[y->sw])) != NULL) {
			p->global_count = gp->count;
			p->global_gbps = gp->gbps;
		}
		if (nd->port_link && x->port <= nd->nports && nd->port_link[x->port] != IB_NONE)
			p->host_gbps = ib_link_gbps(&f->links[nd->port_link[x->port]]);
	}
	return 0;
}
