/*
 * topo/net_ib_rails.c: rails of the hosts' HCA ports (what topo_view.h documents), found at finalize
 * from the ports' labels and the leaves they reach. Overrides (topo_fabric_set_rail, a site file's
 * "rail" word) win. O(ports log ports) time, O(ports) memory; no per-host or per-leaf table of rails.
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

/* Last word of a description when it has two words or more (the HCA's name after the host's), else
 * NULL. */
static const char *last_word(const char *d, size_t *len)
{
	size_t n = strlen(d), e;

	while (n && isspace((unsigned char)d[n - 1]))
		n--;
	e = n;
	while (n && !isspace((unsigned char)d[n - 1]))
		n--;
	*len = e - n;
	if (!*len)
		return NULL;
	{
		size_t k = n;

		while (k && isspace((unsigned char)d[k - 1]))
			k--;
		if (!k)
			return NULL; /* one word: the host's name only */
	}
	return d + n;
}

/* An HCA port's label: the stem of its description's last word and the number that ends it ("mlx5_" 4,
 * "HCA-" 5), or stem "" and the port's rank within its host when the description has no such word. */
struct label {
	uint32_t stem; /* index in the stem map */
	uint32_t num;
};

struct vote {
	long sw;
	uint32_t stem, num;
};

static int cmp_vote(const void *pa, const void *pb)
{
	const struct vote *a = pa, *b = pb;

	if (a->sw != b->sw)
		return a->sw < b->sw ? -1 : 1;
	if (a->stem != b->stem)
		return a->stem < b->stem ? -1 : 1;
	return a->num < b->num ? -1 : a->num > b->num;
}

static int att_before(const struct topo_fabric *f, const struct ib_attach *x, const struct ib_attach *y)
{
	const struct ib_node *a = &f->nodes[x->ca], *b = &f->nodes[y->ca];

	if (a->subnet != b->subnet)
		return a->subnet < b->subnet;
	if (a->guid != b->guid)
		return a->guid < b->guid;
	return x->port < y->port;
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

/* Labels of every attachment; stems interned in *stems (keys owned by *names). */
static int make_labels(struct topo_fabric *f, struct label *lab, struct ib_strmap *stems, char ***names, size_t *nnames)
{
	size_t h, i, j, cap = 0;

	for (h = 0; h < f->nhosts; h++) {
		const struct ib_host *hh = &f->hosts[h];

		for (i = 0; i < hh->n; i++) {
			const struct ib_attach *a = &f->att[hh->first + i];
			size_t len, d;
			const char *w = last_word(f->nodes[a->ca].desc, &len);
			char *stem;
			uint32_t id, num = 0;

			if (!w) { /* rank within the host, as the stem "" */
				for (j = 0; j < hh->n; j++)
					num += j != i && att_before(f, &f->att[hh->first + j], a);
				w = "";
				len = 0;
			} else {
				for (d = len; d && isdigit((unsigned char)w[d - 1]); d--)
					;
				for (j = d; j < len && j < d + 9; j++)
					num = num * 10 + (uint32_t)(w[j] - '0');
				len = d;
			}
			if (!(stem = ib_strndup(w, len)))
				return -1;
			if ((id = ib_strmap_get(stems, stem)) == IB_NONE) {
				if (*nnames == cap) {
					char **nn = realloc(*names, (cap = cap ? cap * 2 : 8) * sizeof(*nn));

					if (!nn)
						return free(stem), -1;
					*names = nn;
				}
				id = (uint32_t)*nnames;
				(*names)[(*nnames)++] = stem;
				if (ib_strmap_put(stems, stem, id) < 0)
					return -1;
			} else {
				free(stem);
			}
			lab[hh->first + i] = (struct label){ id, num };
		}
	}
	return 0;
}

static int cmp_label(const void *pa, const void *pb)
{
	const struct label *a = pa, *b = pb;

	if (a->stem != b->stem)
		return a->stem < b->stem ? -1 : 1;
	return a->num < b->num ? -1 : a->num > b->num;
}

/* Ordinal of label l among the sorted distinct labels of its stem in ord[0 .. n-1]. */
static uint32_t ordinal(const struct label *ord, size_t n, struct label l)
{
	size_t lo = 0, hi = n, first;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_label(&ord[mid], &l) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (first = lo; first && ord[first - 1].stem == l.stem; first--)
		;
	return (uint32_t)(lo - first);
}

int ib_make_rails(struct topo_fabric *f)
{
	struct label *lab = malloc((f->natt + 1) * sizeof(*lab)), *ord = malloc((f->natt + 1) * sizeof(*ord));
	struct vote *v = malloc((f->natt + 1) * sizeof(*v));
	uint32_t *key = malloc((f->natt + 1) * sizeof(*key)), *dense = NULL;
	struct ib_strmap stems = { 0 };
	char **names = NULL;
	size_t nnames = 0, h, i, j, nv = 0, nord = 0;
	long maxr = -1;
	int r = -1;

	if (!lab || !ord || !v || !key || make_labels(f, lab, &stems, &names, &nnames) < 0)
		goto out;
	for (i = 0; i < f->natt; i++)
		if (f->att[i].sw >= 0)
			v[nv++] = (struct vote){ f->att[i].sw, lab[i].stem, lab[i].num };
	qsort(v, nv, sizeof(*v), cmp_vote);
	/* each leaf's label: the one most of its ports have (ties: the first in order), kept in the leaf's
	 * first vote; the leaves' labels, sorted and distinct, give each stem's ordinals */
	for (i = 0; i < nv;) {
		size_t best = 0, e = i;
		struct vote bv = v[i];

		while (e < nv && v[e].sw == v[i].sw) {
			size_t k = e;

			while (e < nv && v[e].sw == v[k].sw && v[e].stem == v[k].stem && v[e].num == v[k].num)
				e++;
			if (e - k > best)
				best = e - k, bv = v[k];
		}
		v[i] = bv;
		ord[nord++] = (struct label){ bv.stem, bv.num };
		i = e;
	}
	for (i = 0; i < f->natt; i++)
		if (f->att[i].sw < 0)
			ord[nord++] = lab[i];
	qsort(ord, nord, sizeof(*ord), cmp_label);
	for (i = 0, j = 0; i < nord; i++)
		if (!j || cmp_label(&ord[j - 1], &ord[i]))
			ord[j++] = ord[i];
	nord = j;
	/* rail key of every port: ordinal of its leaf's label (its own without a leaf) x subnets + subnet */
	for (i = 0; i < f->natt; i++) {
		const struct ib_attach *a = &f->att[i];
		struct label l = lab[i];

		if (a->sw >= 0) {
			size_t lo = 0, hi = nv;

			while (lo < hi) { /* the leaf's first vote */
				size_t mid = lo + (hi - lo) / 2;

				if (v[mid].sw < a->sw)
					lo = mid + 1;
				else
					hi = mid;
			}
			l = (struct label){ v[lo].stem, v[lo].num };
		}
		key[i] = ordinal(ord, nord, l);
		if (key[i] >= TOPO_MAX_RAILS)
			key[i] = TOPO_MAX_RAILS - 1;
		key[i] = key[i] * f->nsubnets + a->subnet;
	}
	/* dense rails in key order (ordinal first, then subnet) */
	if (!(dense = malloc(((size_t)TOPO_MAX_RAILS * f->nsubnets + 1) * sizeof(*dense))))
		goto out;
	for (i = 0; i < (size_t)TOPO_MAX_RAILS * f->nsubnets; i++)
		dense[i] = IB_NONE;
	for (i = 0; i < f->natt; i++)
		dense[key[i]] = 0;
	for (i = 0, j = 0; i < (size_t)TOPO_MAX_RAILS * f->nsubnets; i++)
		if (dense[i] != IB_NONE)
			dense[i] = j < TOPO_MAX_RAILS ? (uint32_t)j++ : TOPO_MAX_RAILS - 1;
	for (i = 0; i < f->natt; i++) {
		uint32_t o = override_of(f, &f->nodes[f->att[i].ca]);

		f->att[i].rail = (uint8_t)(o != IB_NONE ? o : dense[key[i]]);
		if ((long)f->att[i].rail > maxr)
			maxr = f->att[i].rail;
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
	r = 0;
out:
	for (i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	ib_strmap_free(&stems);
	free(lab);
	free(ord);
	free(v);
	free(key);
	free(dense);
	return r;
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
