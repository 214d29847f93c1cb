/*
 * topo/net_ib_groups.c: dragonfly groups of a finalized fabric and the global links between them (the
 * rules are in topo_view.h). Time O(links x degree) for the triangle test, memory O(switches + global
 * links): the group pairs are a sorted list of the pairs that have links, never a groups x groups table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"

void ib_groups_reset(struct topo_fabric *f)
{
	free(f->dfgroup);
	free(f->group_nsw);
	free(f->group_nhosts);
	free(f->gpairs);
	f->dfgroup = f->group_nsw = f->group_nhosts = NULL;
	f->gpairs = NULL;
	f->ngroups = f->ngpairs = f->nglobal = 0;
	f->groups_site = 0;
}

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x)
		x = parent[x] = parent[parent[x]];
	return x;
}

static void uf_union(uint32_t *parent, uint32_t a, uint32_t b)
{
	a = uf_find(parent, a);
	b = uf_find(parent, b);
	if (a != b)
		parent[a > b ? a : b] = a < b ? a : b;
}

/* Switches s and t (adjacent) share a neighbour: sorted adjacency rows intersect. */
static int share_neighbour(const struct topo_fabric *f, uint32_t s, uint32_t t)
{
	uint32_t i = f->adj_off[s], j = f->adj_off[t];

	while (i < f->adj_off[s + 1] && j < f->adj_off[t + 1]) {
		if (f->adj[i] == f->adj[j])
			return 1;
		if (f->adj[i] < f->adj[j])
			i++;
		else
			j++;
	}
	return 0;
}

/* Is the switch-to-switch link s-t inside a group (found from the fabric)? */
static int local_link(const struct topo_fabric *f, uint32_t s, uint32_t t)
{
	int ls = f->sw_level[s], lt = f->sw_level[t];

	if (ls < 0 || lt < 0 || ls != lt)
		return 1;
	if (ls > 0)
		return 0; /* two upper switches of one level: Dragonfly+ spines' global links */
	return share_neighbour(f, s, t);
}

/* Groups from the fabric's links into parent[] (union-find roots); 1 when they pass the checks. */
static int found_groups(const struct topo_fabric *f, uint32_t *parent)
{
	size_t s, nlocal = 0, nglobal = 0, ncomp = 0;
	uint32_t *size;
	int ok = 1;

	for (s = 0; s < f->nsw; s++)
		parent[s] = (uint32_t)s;
	for (s = 0; s < f->nsw; s++) {
		uint32_t j;

		for (j = f->adj_off[s]; j < f->adj_off[s + 1]; j++) {
			uint32_t t = f->adj[j];

			if (t <= s)
				continue;
			if (local_link(f, (uint32_t)s, t)) {
				uf_union(parent, (uint32_t)s, t);
				nlocal++;
			} else {
				nglobal++;
			}
		}
	}
	if (!nglobal || nglobal >= nlocal)
		return 0;
	if (!(size = calloc(f->nsw, sizeof(*size))))
		return -1;
	for (s = 0; s < f->nsw; s++)
		if (f->sw_level[s] >= 0)
			size[uf_find(parent, (uint32_t)s)]++;
	for (s = 0; s < f->nsw; s++)
		if (size[s]) {
			ncomp++;
			ok &= size[s] >= 2;
		}
	free(size);
	return ok && ncomp >= 2;
}

static int cmp_pair(const void *pa, const void *pb)
{
	const struct ib_gpair *a = pa, *b = pb;

	if (a->g1 != b->g1)
		return a->g1 < b->g1 ? -1 : 1;
	return a->g2 < b->g2 ? -1 : a->g2 > b->g2;
}

/* The sorted list of group pairs with global links (parallel cables counted one by one). */
static int make_pairs(struct topo_fabric *f)
{
	size_t i, n = 0, out = 0;

	for (i = 0; i < f->nlinks; i++) {
		const struct ib_link *l = &f->links[i];
		long s = f->nodes[l->node[0]].sw, t = f->nodes[l->node[1]].sw;

		n += s >= 0 && t >= 0 && f->dfgroup[s] != IB_NONE && f->dfgroup[t] != IB_NONE &&
		     f->dfgroup[s] != f->dfgroup[t];
	}
	f->gpairs = malloc((n ? n : 1) * sizeof(*f->gpairs));
	if (!f->gpairs)
		return -1;
	for (i = 0; i < f->nlinks; i++) {
		const struct ib_link *l = &f->links[i];
		long s = f->nodes[l->node[0]].sw, t = f->nodes[l->node[1]].sw;
		uint32_t a, b;
		double g;

		if (s < 0 || t < 0 || f->dfgroup[s] == IB_NONE || f->dfgroup[t] == IB_NONE ||
		    f->dfgroup[s] == f->dfgroup[t])
			continue;
		a = f->dfgroup[s] < f->dfgroup[t] ? f->dfgroup[s] : f->dfgroup[t];
		b = f->dfgroup[s] < f->dfgroup[t] ? f->dfgroup[t] : f->dfgroup[s];
		g = ib_link_gbps(l);
		f->gpairs[out++] = (struct ib_gpair){ a, b, 1, g, g };
	}
	f->nglobal = n;
	qsort(f->gpairs, n, sizeof(*f->gpairs), cmp_pair);
	for (i = 0, out = 0; i < n; i++) {
		if (out && f->gpairs[out - 1].g1 == f->gpairs[i].g1 && f->gpairs[out - 1].g2 == f->gpairs[i].g2) {
			struct ib_gpair *p = &f->gpairs[out - 1];

			p->count++;
			p->gbps += f->gpairs[i].gbps;
			if (f->gpairs[i].min_gbps < p->min_gbps)
				p->min_gbps = f->gpairs[i].min_gbps;
		} else {
			f->gpairs[out++] = f->gpairs[i];
		}
	}
	f->ngpairs = out;
	return 0;
}

int ib_make_groups(struct topo_fabric *f)
{
	uint32_t *parent, *dense;
	size_t s, h;
	int site = 0, r;

	ib_groups_reset(f);
	for (s = 0; s < f->nsw; s++)
		site |= f->nodes[f->sw_node[s]].site_group != IB_NONE;
	if (f->nsw < 4 || (f->tree && !site))
		return 0;
	parent = malloc(f->nsw * sizeof(*parent));
	dense = malloc(f->nsw * sizeof(*dense));
	f->dfgroup = malloc(f->nsw * sizeof(*f->dfgroup));
	if (!parent || !dense || !f->dfgroup)
		goto oom;
	if (site) {
		/* the site files' groups: switches of one group of one file join (root: the smallest switch);
		 * two files (two subnets) never share a group */
		struct ib_u64map first = { 0 };

		for (s = 0; s < f->nsw; s++) {
			const struct ib_node *nd = &f->nodes[f->sw_node[s]];
			uint64_t key = ((uint64_t)nd->subnet << 32 | nd->site_group) + 1; /* one file's groups */
			uint32_t at;

			parent[s] = (uint32_t)s;
			if (nd->site_group == IB_NONE)
				continue;
			at = ib_u64map_get(&first, key);
			if (at == IB_NONE) {
				if (ib_u64map_put(&first, key, (uint32_t)s) < 0) {
					ib_u64map_free(&first);
					goto oom;
				}
			} else {
				parent[s] = at;
			}
		}
		ib_u64map_free(&first);
		r = 1;
	} else if ((r = found_groups(f, parent)) < 0) {
		goto oom;
	}
	if (!r) {
		free(parent), free(dense);
		ib_groups_reset(f);
		return 0;
	}
	for (s = 0; s < f->nsw; s++)
		dense[s] = IB_NONE;
	for (s = 0; s < f->nsw; s++) {
		uint32_t root = uf_find(parent, (uint32_t)s);

		if ((site && f->nodes[f->sw_node[s]].site_group == IB_NONE) || (!site && f->sw_level[s] < 0)) {
			f->dfgroup[s] = IB_NONE;
			continue;
		}
		if (dense[root] == IB_NONE)
			dense[root] = (uint32_t)f->ngroups++;
		f->dfgroup[s] = dense[root];
	}
	f->groups_site = site;
	free(parent);
	free(dense);
	parent = dense = NULL;
	f->group_nsw = calloc(f->ngroups + 1, sizeof(*f->group_nsw));
	f->group_nhosts = calloc(f->ngroups + 1, sizeof(*f->group_nhosts));
	if (!f->group_nsw || !f->group_nhosts || make_pairs(f) < 0)
		goto oom;
	for (s = 0; s < f->nsw; s++)
		if (f->dfgroup[s] != IB_NONE)
			f->group_nsw[f->dfgroup[s]]++;
	for (h = 0; h < f->nhosts; h++)
		if (f->hosts[h].leaf >= 0 && f->dfgroup[f->hosts[h].leaf] != IB_NONE)
			f->group_nhosts[f->dfgroup[f->hosts[h].leaf]]++;
	return 0;
oom:
	free(parent);
	free(dense);
	ib_groups_reset(f);
	return -1;
}

const struct ib_gpair *ib_gpair_find(const struct topo_fabric *f, uint32_t g1, uint32_t g2)
{
	size_t lo = 0, hi = f->ngpairs;
	uint32_t a = g1 < g2 ? g1 : g2, b = g1 < g2 ? g2 : g1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ib_gpair *p = &f->gpairs[mid];

		if (p->g1 < a || (p->g1 == a && p->g2 < b))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->ngpairs && f->gpairs[lo].g1 == a && f->gpairs[lo].g2 == b ? &f->gpairs[lo] : NULL;
}

/* ---- queries ---- */

size_t topo_fabric_ngroups(const struct topo_fabric *f)
{
	return f->finalized ? f->ngroups : 0;
}

long topo_fabric_switch_group(const struct topo_fabric *f, long s)
{
	if (!f->finalized || !f->dfgroup || s < 0 || (size_t)s >= f->nsw || f->dfgroup[s] == IB_NONE)
		return errno = EINVAL, -1;
	return f->dfgroup[s];
}

long topo_fabric_host_group(const struct topo_fabric *f, size_t h)
{
	if (!f->finalized || h >= f->nhosts)
		return errno = EINVAL, -1;
	return topo_fabric_switch_group(f, f->hosts[h].leaf);
}

size_t topo_fabric_group_nswitches(const struct topo_fabric *f, size_t g)
{
	return f->finalized && g < f->ngroups ? f->group_nsw[g] : 0;
}

size_t topo_fabric_group_nhosts(const struct topo_fabric *f, size_t g)
{
	return f->finalized && g < f->ngroups ? f->group_nhosts[g] : 0;
}

const char *topo_fabric_groups_source(const struct topo_fabric *f)
{
	if (!f->finalized || !f->ngroups)
		return NULL;
	return f->groups_site ? "site file" : "fabric";
}

size_t topo_fabric_ngroup_pairs(const struct topo_fabric *f)
{
	return f->finalized ? f->ngpairs : 0;
}

static void fill_links(const struct ib_gpair *p, topo_group_links_t *out)
{
	out->g1 = p->g1;
	out->g2 = p->g2;
	out->count = p->count;
	out->gbps = p->gbps;
	out->min_gbps = p->min_gbps;
}

int topo_fabric_group_pair(const struct topo_fabric *f, size_t i, topo_group_links_t *out)
{
	if (!f->finalized || i >= f->ngpairs)
		return errno = EINVAL, -1;
	fill_links(&f->gpairs[i], out);
	return 0;
}

int topo_fabric_group_links(const struct topo_fabric *f, size_t g1, size_t g2, topo_group_links_t *out)
{
	const struct ib_gpair *p;

	if (!f->finalized || g1 >= f->ngroups || g2 >= f->ngroups)
		return errno = EINVAL, -1;
	memset(out, 0, sizeof(*out));
	out->g1 = g1 < g2 ? g1 : g2;
	out->g2 = g1 < g2 ? g2 : g1;
	if (g1 != g2 && (p = ib_gpair_find(f, (uint32_t)g1, (uint32_t)g2)) != NULL)
		fill_links(p, out);
	return 0;
}

size_t topo_fabric_nglobal_links(const struct topo_fabric *f)
{
	return f->finalized ? f->nglobal : 0;
}

long topo_fabric_switch_dgroup(const struct topo_fabric *f, long s)
{
	if (!f->finalized || !f->dfgroup || s < 0 || (size_t)s >= f->nsw || f->dfgroup[s] == IB_NONE)
		return -1;
	return (long)f->dfgroup[s];
}

/* Index of v in the sorted array a[0 .. n-1], or -1. */
static long sorted_index(const long *a, size_t n, long v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && a[lo] == v ? (long)lo : -1;
}

void topo_fabric_group_gateways(const struct topo_fabric *f, const long *groups, size_t n, long *gw)
{
	size_t i;

	for (i = 0; i < n * n; i++)
		gw[i] = -1;
	if (!f->finalized || !f->dfgroup)
		return;
	for (i = 0; i < f->nlinks; i++) { /* one pass: the first link of each pair, in link order */
		const struct ib_link *l = &f->links[i];
		long s = f->nodes[l->node[0]].sw, t = f->nodes[l->node[1]].sw, a, b;

		if (s < 0 || t < 0 || f->dfgroup[s] == IB_NONE || f->dfgroup[t] == IB_NONE ||
		    f->dfgroup[s] == f->dfgroup[t])
			continue;
		if ((a = sorted_index(groups, n, (long)f->dfgroup[s])) < 0 ||
		    (b = sorted_index(groups, n, (long)f->dfgroup[t])) < 0)
			continue;
		if (gw[(size_t)a * n + (size_t)b] < 0)
			gw[(size_t)a * n + (size_t)b] = s;
		if (gw[(size_t)b * n + (size_t)a] < 0)
			gw[(size_t)b * n + (size_t)a] = t;
	}
}
