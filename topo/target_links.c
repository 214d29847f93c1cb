/*
 * topo/target_links.c: the links of a dragonfly target's routes (topo_links_t, topo.h), so that a mapping's
 * load on each link can be counted (mapping/linkload.c): the busiest link, not only bytes times hops.
 *
 * Built by target_cluster.c for a target whose hosts are all in a fabric with dragonfly groups. Rates
 * come from the fabric's paths (topo_fabric_path): a global path gives the source HCA port's rate and
 * the sum of the pair's global links; host cables and the router cables inside a group take the HCA
 * rate seen (all the same when no path leaves a group: then only their ratio, 1, matters).
 */
#include <errno.h>
#include <stdlib.h>

#include "cluster_private.h"

void topo_links_free(topo_links_t *x)
{
	if (!x)
		return;
	free(x->host_leaf);
	free(x->leaf_group);
	free(x->leaf_local);
	free(x->group_nleaves);
	free(x->local_base);
	free(x->gateway);
	free(x->rate);
	free(x);
}

/* Rates: host and router cables at the HCA rate a global path shows (1 when none does), global links at
 * their pair's summed rate (from one host of each group). */
static void fill_rates(topo_cluster_t c, topo_links_t *x, const long *fabric_host)
{
	size_t *rep = malloc(x->ngroups * sizeof(*rep));
	double host = 0;
	uint32_t h, ga, gb;
	uint64_t i;

	for (ga = 0; rep && ga < x->ngroups; ga++)
		rep[ga] = SIZE_MAX;
	for (h = 0; rep && h < x->nhosts; h++)
		if (rep[x->leaf_group[x->host_leaf[h]]] == SIZE_MAX)
			rep[x->leaf_group[x->host_leaf[h]]] = h;
	for (i = x->nhosts + x->nlocal; i < x->nlinks; i++)
		x->rate[i] = 0;
	for (ga = 0; rep && ga < x->ngroups; ga++)
		for (gb = ga + 1; gb < x->ngroups; gb++) {
			struct topo_fabric_path p;

			if (topo_fabric_path(c->fabric, (size_t)fabric_host[rep[ga]], (size_t)fabric_host[rep[gb]], -1,
					     &p) < 0 ||
			    !p.global)
				continue;
			if (p.host_gbps > host)
				host = p.host_gbps;
			x->rate[x->nhosts + x->nlocal + (uint64_t)ga * x->ngroups + gb] = p.global_gbps;
		}
	free(rep);
	if (host <= 0)
		host = 1;
	for (i = 0; i < x->nhosts + x->nlocal; i++)
		x->rate[i] = host;
	for (; i < x->nlinks; i++)
		if (x->rate[i] <= 0)
			x->rate[i] = host;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* Index of v in the sorted distinct array a[0 .. n-1] (v is there). */
static uint32_t find(const long *a, size_t n, long v)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] <= v)
			lo = mid;
		else
			hi = mid;
	}
	return (uint32_t)lo;
}

static size_t uniq(long *a, size_t n)
{
	size_t i, m = 0;

	qsort(a, n, sizeof(*a), cmp_long);
	for (i = 0; i < n; i++)
		if (!m || a[m - 1] != a[i])
			a[m++] = a[i];
	return m;
}

/* The switches (sw) and groups (grp, raw numbers) of the hosts and gateways, sorted and distinct, and the
 * gateway switch of each pair of groups (gw, ngroups^2, -1 none). 0, 1 (no model: a host without a group,
 * too many groups), -1 (ENOMEM). */
static int collect(const struct topo_fabric *f, const long *fabric_host, uint32_t nh, long **sw, size_t *nsw,
		   long **grp, size_t *ng, long **gw)
{
	size_t G, i, n = 0;
	uint32_t h;

	*sw = malloc(nh * sizeof(**sw));
	*grp = malloc(nh * sizeof(**grp));
	if (!*sw || !*grp)
		return errno = ENOMEM, -1;
	for (h = 0; h < nh; h++) {
		(*sw)[h] = topo_fabric_host_leaf(f, (size_t)fabric_host[h]);
		if ((*sw)[h] < 0 || ((*grp)[h] = topo_fabric_switch_dgroup(f, (*sw)[h])) < 0)
			return 1;
	}
	G = *ng = uniq(*grp, nh);
	if (G > TOPO_LINKS_MAX_GROUPS)
		return 1;
	if (!(*gw = malloc(G * G * sizeof(**gw))))
		return errno = ENOMEM, -1;
	topo_fabric_group_gateways(f, *grp, G, *gw);
	for (i = 0; i < G * G; i++)
		n += (*gw)[i] >= 0;
	if (n) {
		long *more = realloc(*sw, (nh + n) * sizeof(**sw));

		if (!more)
			return errno = ENOMEM, -1; /* *sw is still the caller's to free */
		*sw = more;
	}
	for (i = 0, n = nh; i < G * G; i++)
		if ((*gw)[i] >= 0)
			(*sw)[n++] = (*gw)[i];
	*nsw = uniq(*sw, n);
	return 0;
}

static int build(topo_cluster_t c, topo_target_t *t, const long *fabric_host, topo_links_t *x, long *sw, size_t nsw,
		 long *grp, size_t G, const long *gw)
{
	uint32_t h, l, g;
	size_t i;
	uint64_t local = 0;

	x->nhosts = t->nhosts, x->nleaves = (uint32_t)nsw, x->ngroups = (uint32_t)G;
	x->host_leaf = malloc(t->nhosts * sizeof(*x->host_leaf));
	x->leaf_group = malloc(nsw * sizeof(*x->leaf_group));
	x->leaf_local = malloc(nsw * sizeof(*x->leaf_local));
	x->group_nleaves = calloc(G, sizeof(*x->group_nleaves));
	x->local_base = malloc(G * sizeof(*x->local_base));
	x->gateway = malloc(G * G * sizeof(*x->gateway));
	if (!x->host_leaf || !x->leaf_group || !x->leaf_local || !x->group_nleaves || !x->local_base || !x->gateway)
		return errno = ENOMEM, -1;
	for (h = 0; h < t->nhosts; h++)
		x->host_leaf[h] = find(sw, nsw, topo_fabric_host_leaf(c->fabric, (size_t)fabric_host[h]));
	for (l = 0; l < nsw; l++) {
		g = find(grp, G, topo_fabric_switch_dgroup(c->fabric, sw[l]));
		x->leaf_group[l] = g;
		x->leaf_local[l] = x->group_nleaves[g]++;
	}
	for (i = 0; i < G * G; i++)
		x->gateway[i] = gw[i] >= 0 ? find(sw, nsw, gw[i]) : UINT32_MAX;
	for (g = 0; g < G; g++) {
		x->local_base[g] = local;
		local += (uint64_t)x->group_nleaves[g] * x->group_nleaves[g];
	}
	if (local > TOPO_LINKS_MAX_LOCAL)
		return 1; /* groups of too many routers for a square table each */
	x->nlocal = local;
	x->nlinks = x->nhosts + local + (uint64_t)G * G;
	if (!(x->rate = malloc(x->nlinks * sizeof(*x->rate))))
		return errno = ENOMEM, -1;
	fill_rates(c, x, fabric_host);
	return 0;
}

int topo_links_attach(topo_cluster_t c, topo_target_t *t, const long *fabric_host)
{
	topo_links_t *x;
	long *sw = NULL, *grp = NULL, *gw = NULL;
	size_t nsw = 0, G = 0;
	int r;

	if (t->nhosts < 2)
		return 0; /* nothing to route */
	if (!(x = calloc(1, sizeof(*x))))
		return errno = ENOMEM, -1;
	r = collect(c->fabric, fabric_host, t->nhosts, &sw, &nsw, &grp, &G, &gw);
	if (r == 0)
		r = build(c, t, fabric_host, x, sw, nsw, grp, G, gw);
	free(sw), free(grp), free(gw);
	if (r != 0) {
		topo_links_free(x);
		return r < 0 ? -1 : 0;
	}
	t->links = x;
	return 0;
}
