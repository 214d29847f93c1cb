/*
 * topo/net_ib_rails.c: rails of the hosts' HCA ports (what topo_view.h documents), found at finalize:
 * each host's ports are ranked (natural order of the HCA description's last word, then node GUID, then
 * port), every leaf switch takes the rank most of its ports have, and a port is on its leaf's rail.
 * Overrides (topo_fabric_set_rail, a site file's "rail" word) win. O(ports log ports) time, O(ports)
 * memory; no per-host or per-leaf table of rails.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"

int topo_fabric_set_rail(struct topo_fabric *f, uint64_t guid, unsigned r)
{
	if (!guid || r >= TOPO_MAX_RAILS)
		return errno = EINVAL, -1;
	if (ib_u64map_put(&f->rail_override, guid, r) < 0)
		return errno = ENOMEM, -1;
	ib_graph_reset(f);
	return 0;
}

/* Last word of a description ("" when none). */
static const char *last_word(const char *d, size_t *len)
{
	size_t n = strlen(d);

	while (n && isspace((unsigned char)d[n - 1]))
		n--;
	*len = 0;
	while (n && !isspace((unsigned char)d[n - 1]))
		n--, ++*len;
	return d + n;
}

/* Natural order: digit runs compare by value. */
static int natcmp(const char *a, size_t la, const char *b, size_t lb)
{
	size_t i = 0, j = 0;

	while (i < la && j < lb) {
		if (isdigit((unsigned char)a[i]) && isdigit((unsigned char)b[j])) {
			unsigned long long x = 0, y = 0;

			while (i < la && isdigit((unsigned char)a[i]))
				x = x * 10 + (unsigned)(a[i++] - '0');
			while (j < lb && isdigit((unsigned char)b[j]))
				y = y * 10 + (unsigned)(b[j++] - '0');
			if (x != y)
				return x < y ? -1 : 1;
			continue;
		}
		if (a[i] != b[j])
			return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
		i++, j++;
	}
	return (i < la) - (j < lb);
}

static int att_before(const struct topo_fabric *f, const struct ib_attach *x, const struct ib_attach *y)
{
	const struct ib_node *a = &f->nodes[x->ca], *b = &f->nodes[y->ca];
	size_t la, lb;
	const char *wa = last_word(a->desc, &la), *wb = last_word(b->desc, &lb);
	int c = x->ca == y->ca ? 0 : natcmp(wa, la, wb, lb);

	if (c)
		return c < 0;
	if (a->guid != b->guid)
		return a->guid < b->guid;
	return x->port < y->port;
}

struct vote {
	long sw;
	uint32_t rank;
};

static int cmp_vote(const void *pa, const void *pb)
{
	const struct vote *a = pa, *b = pb;

	if (a->sw != b->sw)
		return a->sw < b->sw ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static uint32_t override_of(const struct topo_fabric *f, const struct ib_node *nd)
{
	uint32_t r = ib_u64map_get(&f->rail_override, nd->guid);

	if (r == IB_NONE && nd->port_guid)
		r = ib_u64map_get(&f->rail_override, nd->port_guid);
	if (r == IB_NONE && nd->site_rail != IB_RAIL_NONE)
		r = nd->site_rail;
	return r;
}

int ib_make_rails(struct topo_fabric *f)
{
	uint32_t *rank = malloc((f->natt + 1) * sizeof(*rank));
	struct vote *v = malloc((f->natt + 1) * sizeof(*v));
	uint32_t dense[TOPO_MAX_RAILS];
	size_t h, i, j, nv = 0;
	long maxr = -1;

	if (!rank || !v)
		return free(rank), free(v), -1;
	/* ranks within each host (insertion: hosts have a few ports) */
	for (h = 0; h < f->nhosts; h++) {
		const struct ib_host *hh = &f->hosts[h];

		for (i = 0; i < hh->n; i++) {
			uint32_t r = 0;

			for (j = 0; j < hh->n; j++)
				r += j != i && att_before(f, &f->att[hh->first + j], &f->att[hh->first + i]);
			rank[hh->first + i] = r < TOPO_MAX_RAILS ? r : TOPO_MAX_RAILS - 1;
		}
	}
	for (i = 0; i < f->natt; i++)
		if (f->att[i].sw >= 0)
			v[nv++] = (struct vote){ f->att[i].sw, rank[i] };
	qsort(v, nv, sizeof(*v), cmp_vote);
	/* the rank most ports of a leaf have (ties: the smallest), in the votes' first slot of the leaf */
	for (i = 0; i < nv;) {
		size_t best = 0, e = i;
		uint32_t br = v[i].rank;

		while (e < nv && v[e].sw == v[i].sw) {
			size_t k = e;

			while (e < nv && v[e].sw == v[k].sw && v[e].rank == v[k].rank)
				e++;
			if (e - k > best)
				best = e - k, br = v[k].rank;
		}
		v[i].rank = br;
		for (j = i + 1; j < e; j++)
			v[j].rank = IB_NONE; /* not the first of its leaf */
		i = e;
	}
	/* dense rail numbers in the order of the ranks that chose them */
	for (i = 0; i < TOPO_MAX_RAILS; i++)
		dense[i] = IB_NONE;
	for (i = 0; i < nv; i++)
		if (v[i].rank != IB_NONE)
			dense[v[i].rank] = 0;
	for (i = 0; i < f->natt; i++)
		if (f->att[i].sw < 0)
			dense[rank[i]] = 0;
	for (i = 0, j = 0; i < TOPO_MAX_RAILS; i++)
		if (dense[i] != IB_NONE)
			dense[i] = (uint32_t)j++;
	for (i = 0; i < f->natt; i++) {
		struct ib_attach *a = &f->att[i];
		uint32_t r = override_of(f, &f->nodes[a->ca]);

		if (r == IB_NONE && a->sw >= 0) {
			struct vote key = { a->sw, 0 }, *lo = v, *hi = v + nv;

			while (lo < hi) { /* first vote of the leaf */
				struct vote *mid = lo + (hi - lo) / 2;

				if (mid->sw < key.sw)
					lo = mid + 1;
				else
					hi = mid;
			}
			r = dense[lo->rank];
		} else if (r == IB_NONE) {
			r = dense[rank[i]];
		}
		a->rail = (uint8_t)r;
		if ((long)r > maxr)
			maxr = (long)r;
	}
	f->nrails = (size_t)(maxr + 1);
	/* each host's leaf: its port on the lowest rail that reaches a switch */
	for (h = 0; h < f->nhosts; h++) {
		struct ib_host *hh = &f->hosts[h];
		unsigned best = TOPO_MAX_RAILS;

		for (i = 0; i < hh->n; i++) {
			const struct ib_attach *a = &f->att[hh->first + i];

			if (a->sw >= 0 && a->rail < best) {
				best = a->rail;
				hh->leaf = a->sw;
			}
		}
	}
	free(rank);
	free(v);
	return 0;
}

/* ---- queries ---- */

size_t topo_fabric_nrails(const struct topo_fabric *f)
{
	return f->finalized ? f->nrails : 0;
}

long topo_fabric_host_port_rail(const struct topo_fabric *f, size_t h, size_t i)
{
	if (!f->finalized || h >= f->nhosts || i >= f->hosts[h].n)
		return errno = EINVAL, -1;
	return f->att[f->hosts[h].first + i].rail;
}

long topo_fabric_host_rail_port(const struct topo_fabric *f, size_t h, unsigned r)
{
	size_t i;

	if (!f->finalized || h >= f->nhosts)
		return errno = EINVAL, -1;
	for (i = 0; i < f->hosts[h].n; i++)
		if (f->att[f->hosts[h].first + i].rail == r)
			return (long)i;
	return errno = ENOENT, -1;
}

long topo_fabric_host_rail_leaf(const struct topo_fabric *f, size_t h, unsigned r)
{
	size_t i;

	if (!f->finalized || h >= f->nhosts)
		return errno = EINVAL, -1;
	for (i = 0; i < f->hosts[h].n; i++) {
		const struct ib_attach *a = &f->att[f->hosts[h].first + i];

		if (a->rail == r && a->sw >= 0)
			return a->sw;
	}
	return errno = ENOENT, -1;
}

uint64_t topo_fabric_host_port_guid(const struct topo_fabric *f, size_t h, size_t i)
{
	if (!f->finalized || h >= f->nhosts || i >= f->hosts[h].n)
		return 0;
	return f->nodes[f->att[f->hosts[h].first + i].ca].guid;
}

uint64_t topo_fabric_host_port_port_guid(const struct topo_fabric *f, size_t h, size_t i)
{
	if (!f->finalized || h >= f->nhosts || i >= f->hosts[h].n)
		return 0;
	return f->nodes[f->att[f->hosts[h].first + i].ca].port_guid;
}

long topo_fabric_guid_rail(const struct topo_fabric *f, uint64_t guid)
{
	size_t i;

	if (!f->finalized || !guid)
		return errno = EINVAL, -1;
	for (i = 0; i < f->natt; i++) { /* O(ports): callers ask once per HCA */
		const struct ib_node *nd = &f->nodes[f->att[i].ca];

		if (nd->guid == guid || nd->port_guid == guid)
			return f->att[i].rail;
	}
	return errno = ENOENT, -1;
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
