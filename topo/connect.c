/*
 * topo/connect.c: whether a set of hosts can all reach each other over the InfiniBand fabric.
 *
 * Hosts are grouped by signature: the set of fabric components (topo_fabric_host_components: a connected
 * set of switches of one subnet, or a back-to-back cable) their HCA ports are cabled into. A host outside
 * the fabric has the flat signature: the cost model gives it the flat network's distance to every host.
 * Two fabric hosts reach each other exactly when their signatures share a component, which is what
 * topo_fabric_hops finds by BFS. Distinct signatures are few (one per combination of subnets a host is
 * on), so every pair of signatures is tested: time O(hosts + signatures^2 x ports), memory O(hosts),
 * never hosts^2. The relation is not transitive (A and B on subnet 1, B and C on subnet 2, A and C on
 * none), which is why pairs of signatures, not only neighbours, are tested.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_private.h"

struct sigtab {
	uint32_t *slot; /* cap: signature + 1, 0 empty */
	uint64_t *hash; /* nsig */
	size_t cap, ncomp_cap, nsig_cap;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Grows k's per-signature arrays to hold nsig + 1 signatures and the pool to hold need components. */
static int conn_grow(struct topo_conn *k, struct sigtab *t, size_t need)
{
	if (k->nsig + 1 >= t->nsig_cap) {
		size_t cap = t->nsig_cap ? 2 * t->nsig_cap : 16;
		size_t *count = realloc(k->count, cap * sizeof(*count)), *first, *off;
		uint64_t *hash;
		uint8_t *flat;

		if (count)
			k->count = count;
		first = count ? realloc(k->first, cap * sizeof(*first)) : NULL;
		if (first)
			k->first = first;
		off = first ? realloc(k->off, (cap + 1) * sizeof(*off)) : NULL;
		if (off)
			k->off = off;
		flat = off ? realloc(k->flat, cap) : NULL;
		if (flat)
			k->flat = flat;
		hash = flat ? realloc(t->hash, cap * sizeof(*hash)) : NULL;
		if (!hash)
			return -1;
		t->hash = hash;
		t->nsig_cap = cap;
	}
	if (need > t->ncomp_cap) {
		size_t cap = need > 2 * t->ncomp_cap ? need : 2 * t->ncomp_cap;
		uint32_t *comp = realloc(k->comp, cap * sizeof(*comp));

		if (!comp)
			return -1;
		k->comp = comp;
		t->ncomp_cap = cap;
	}
	return 0;
}

/* The signature of components v[0 .. m-1] (sorted; flat: outside the fabric), added when new. */
static long sig_of(struct topo_conn *k, struct sigtab *t, const uint32_t *v, size_t m, int flat)
{
	uint64_t h = topo_hash_bytes(TOPO_HASH_SEED + (uint64_t)flat, v, m * sizeof(*v));
	size_t i = (size_t)(h ^ (h >> 31)) & (t->cap - 1), s;

	for (; t->slot[i]; i = (i + 1) & (t->cap - 1)) {
		s = t->slot[i] - 1;
		if (t->hash[s] == h && k->flat[s] == flat && k->off[s + 1] - k->off[s] == m &&
		    !memcmp(k->comp + k->off[s], v, m * sizeof(*v)))
			return (long)s;
	}
	if (k->nsig >= TOPO_CONN_MAX_SIGS)
		return errno = E2BIG, -1;
	if (conn_grow(k, t, k->off[k->nsig] + m) < 0)
		return errno = ENOMEM, -1;
	s = k->nsig++;
	memcpy(k->comp + k->off[s], v, m * sizeof(*v));
	k->off[s + 1] = k->off[s] + m;
	k->flat[s] = (uint8_t)flat;
	k->count[s] = 0;
	k->first[s] = SIZE_MAX;
	t->hash[s] = h;
	t->slot[i] = (uint32_t)s + 1;
	return (long)s;
}

int topo_conn_linked(const struct topo_conn *k, size_t s, size_t t)
{
	size_t i = k->off[s], j = k->off[t];

	if (k->flat[s] || k->flat[t])
		return 1;
	while (i < k->off[s + 1] && j < k->off[t + 1]) {
		if (k->comp[i] == k->comp[j])
			return 1;
		if (k->comp[i] < k->comp[j])
			i++;
		else
			j++;
	}
	return 0;
}

/* k->cut: the first unconnected pair, by signature pairs in order of their first hosts. */
static void find_cut(struct topo_conn *k)
{
	size_t s, t, i;

	k->cut[0] = k->cut[1] = SIZE_MAX;
	for (s = 0; s < k->nsig; s++) {
		if (k->count[s] >= 2 && !topo_conn_linked(k, s, s)) {
			for (i = k->first[s] + 1; k->sig[i] != s; i++)
				;
			k->cut[0] = k->first[s], k->cut[1] = i;
			return;
		}
		for (t = 0; t < s; t++)
			if (!topo_conn_linked(k, s, t)) {
				k->cut[0] = k->first[t], k->cut[1] = k->first[s];
				return;
			}
	}
}

/* Signature of every host (memory: the hosts' components once per distinct set). */
static int conn_sigs(struct topo_cluster *c, const size_t *hosts, struct topo_conn *k, struct sigtab *t)
{
	uint32_t buf[64], *v = buf;
	size_t i, m, max = 64;
	long s;

	for (i = 0; i < k->n; i++) {
		long fh = hosts[i] < c->nhosts && c->fabric ? c->hosts[hosts[i]].fabric_host : -1;

		m = 0;
		if (fh >= 0 && (m = topo_fabric_host_components(c->fabric, (size_t)fh, v, max)) > max) {
			uint32_t *w = malloc(m * sizeof(*w));

			if (!w)
				goto nomem;
			if (v != buf)
				free(v);
			v = w, max = m;
			m = topo_fabric_host_components(c->fabric, (size_t)fh, v, max);
		}
		qsort(v, m, sizeof(*v), cmp_u32);
		if ((s = sig_of(k, t, v, m, fh < 0)) < 0)
			goto fail;
		k->sig[i] = (uint32_t)s;
		if (!k->count[s]++)
			k->first[s] = i;
	}
	if (v != buf)
		free(v);
	return 0;
nomem:
	errno = ENOMEM;
fail:
	if (v != buf)
		free(v);
	return -1;
}

int topo_conn_build(struct topo_cluster *c, const size_t *hosts, size_t n, struct topo_conn *k)
{
	struct sigtab t = { 0 };
	int r = -1;

	memset(k, 0, sizeof(*k));
	k->n = n;
	k->cut[0] = k->cut[1] = SIZE_MAX;
	t.cap = 16;
	while (t.cap < 2 * n)
		t.cap *= 2;
	k->sig = malloc((n ? n : 1) * sizeof(*k->sig));
	t.slot = calloc(t.cap, sizeof(*t.slot));
	if (!k->sig || !t.slot || conn_grow(k, &t, 16) < 0) {
		errno = ENOMEM;
		goto out;
	}
	k->off[0] = 0;
	if (conn_sigs(c, hosts, k, &t) < 0)
		goto out;
	find_cut(k);
	r = 0;
out:
	free(t.slot);
	free(t.hash);
	return r;
}

void topo_conn_free(struct topo_conn *k)
{
	free(k->sig);
	free(k->count);
	free(k->first);
	free(k->off);
	free(k->comp);
	free(k->flat);
	memset(k, 0, sizeof(*k));
}

int topo_hosts_connected(topo_cluster_t c, const size_t *hosts, size_t n, size_t *a, size_t *b)
{
	struct topo_conn k;
	size_t i;
	int r;

	errno = EINVAL;
	if (!c || !c->finalized || (n && !hosts))
		return -1;
	for (i = 0; i < n; i++)
		if (hosts[i] >= c->nhosts)
			return -1;
	if (topo_conn_build(c, hosts, n, &k) < 0) {
		topo_conn_free(&k);
		return -1;
	}
	r = k.cut[0] == SIZE_MAX;
	if (!r && a)
		*a = hosts[k.cut[0]];
	if (!r && b)
		*b = hosts[k.cut[1]];
	topo_conn_free(&k);
	return r;
}

/* ---- the warning -------------------------------------------------------------------------------- */

static uint32_t uf_find(uint32_t *p, uint32_t x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

static int cmp_size_desc(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x > y ? -1 : x < y;
}

/* Sizes of the groups of hosts the fabric joins (signatures joined by shared components; the hosts of a
 * signature that reaches nothing, not even itself, are a group each), largest first. Returns the group
 * count, or 0 when out of memory. *sizes: caller frees. */
static size_t group_sizes(const struct topo_conn *k, size_t **sizes)
{
	uint32_t *p = malloc((k->nsig + 1) * sizeof(*p)), s, t;
	size_t *sum = calloc(k->nsig + 1, sizeof(*sum)), *members = calloc(k->nsig + 1, sizeof(*members));
	size_t *out = malloc((k->n + 1) * sizeof(*out)), ng = 0, i;

	if (!p || !sum || !members || !out) {
		free(p), free(sum), free(members), free(out);
		return 0;
	}
	for (s = 0; s < k->nsig; s++)
		p[s] = s;
	for (s = 0; s < k->nsig; s++)
		for (t = 0; t < s; t++)
			if (topo_conn_linked(k, s, t))
				p[uf_find(p, s)] = uf_find(p, t);
	for (s = 0; s < k->nsig; s++) {
		members[uf_find(p, s)]++;
		sum[uf_find(p, s)] += k->count[s];
	}
	for (s = 0; s < k->nsig; s++) {
		if (!members[s])
			continue;
		if (members[s] == 1 && !topo_conn_linked(k, s, s))
			for (i = 0; i < k->count[s]; i++)
				out[ng++] = 1;
		else
			out[ng++] = sum[s];
	}
	qsort(out, ng, sizeof(*out), cmp_size_desc);
	free(p), free(sum), free(members);
	*sizes = out;
	return ng;
}

/* Hosts that cannot reach at least one other host of the set. */
static size_t cut_off(const struct topo_conn *k)
{
	size_t s, t, n = 0;

	for (s = 0; s < k->nsig; s++) {
		int cut = k->count[s] >= 2 && !topo_conn_linked(k, s, s);

		for (t = 0; !cut && t < k->nsig; t++)
			cut = t != s && !topo_conn_linked(k, s, t);
		n += cut ? k->count[s] : 0;
	}
	return n;
}

char *topo_conn_message(const struct topo_conn *k, const char *const *names, double penalty)
{
	size_t *sz = NULL, ng = group_sizes(k, &sz), i;
	char list[160] = "", *msg = NULL;
	size_t len = 0;

	if (!ng)
		return NULL;
	for (i = 0; i < ng && i < 8 && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%zu",
					!i            ? ""
					: i + 1 == ng ? " and "
						      : ", ",
					sz[i]);
	if (ng > 8 && len < sizeof(list))
		snprintf(list + len, sizeof(list) - len, " and %zu more", ng - 8);
	if (ng > 1)
		i = (size_t)asprintf(
			&msg,
			"hosts %s and %s cannot reach each other over InfiniBand (no subnet joins "
			"them): the %zu hosts form %zu groups of %s hosts that the fabric does not connect; "
			"traffic between the groups is costed at twice the largest network distance "
			"(%.4g us)",
			names[k->cut[0]], names[k->cut[1]], k->n, ng, list, penalty);
	else
		i = (size_t)asprintf(&msg,
				     "hosts %s and %s cannot reach each other over InfiniBand (no subnet joins "
				     "them): %zu of the %zu hosts have no fabric path to some other host of the set; "
				     "traffic between such pairs is costed at twice the largest network distance "
				     "(%.4g us)",
				     names[k->cut[0]], names[k->cut[1]], cut_off(k), k->n, penalty);
	free(sz);
	return (int)i < 0 ? NULL : msg;
}
