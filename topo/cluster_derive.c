/*
 * topo/cluster_derive.c: a cluster made from another by what changed, and hosts copied between clusters.
 *
 * rankmapd keeps every registered host's hardware in a pool cluster (each registration parsed once, when
 * it arrives) and publishes immutable models. A registration then needs a model that differs from the
 * current one by a few hosts: topo_cluster_derive() copies the host table (pointers and names, O(hosts)),
 * shares the node types' hwloc trees, the fabric and the torus (reference counts, never copied, never
 * finalized again) and gives the changed hosts their new hardware. Nothing is read or parsed again.
 * Where a change could alter what a full load derives (fabric names taken from hosts' GUIDs, a host
 * name that joins a fabric or torus name by its short form, a host that was a load anomaly), derive
 * refuses with EAGAIN and the caller loads from scratch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_private.h"

/* A node type of dst for src's type t: dst's own record, sharing t's hwloc tree and key. */
static struct topo_nodetype *type_share(struct topo_cluster *dst, struct topo_nodetype *t)
{
	struct topo_nodetype *n = topo_cluster_find_type(dst, t->key, t->norm, t->norm_len);

	if (n)
		return n;
	if (!t->shared) {
		if (!(t->shared = malloc(sizeof(*t->shared))))
			return NULL;
		*t->shared = 1;
	}
	if (!(n = malloc(sizeof(*n))))
		return NULL;
	*n = *t;
	n->nhosts = 0;
	__atomic_add_fetch(n->shared, 1, __ATOMIC_RELAXED);
	if (topo_cluster_add_type(dst, n) == 0)
		return n;
	topo_nodetype_free(n);
	return NULL;
}

static struct topo_guids *guids_dup(const struct topo_guids *g)
{
	size_t sz = topo_guids_bytes(g);
	struct topo_guids *n = g ? malloc(sz) : NULL;

	if (n)
		memcpy(n, g, sz);
	return n;
}

static int guids_equal(const struct topo_guids *a, const struct topo_guids *b)
{
	if (!a || !b)
		return a == b;
	return a->n == b->n && a->nnode == b->nnode && !memcmp(a->v, b->v, a->n * sizeof(a->v[0])) &&
	       a->uuid_len == b->uuid_len && !memcmp(a->v + a->n, b->v + b->n, a->uuid_len);
}

/* src's types as dst's, by src type index (filled as hosts need them). */
struct typemap {
	const struct topo_cluster *src;
	struct topo_nodetype **to;
};

static int typemap_init(struct typemap *m, const struct topo_cluster *src)
{
	m->src = src;
	m->to = calloc(src->ntypes + 1, sizeof(*m->to));
	return m->to ? 0 : -1;
}

/* Gives dst's host h the hardware (type shared) of src's host s, and its GUIDs (copied) unless
 * type_only (they are in place already). -1: ENOMEM. */
static int host_take(struct topo_cluster *dst, long h, struct typemap *m, long s, int type_only)
{
	const struct topo_host *sh = &m->src->hosts[s];
	struct topo_nodetype *t = NULL, *old;
	struct topo_guids *g = type_only ? NULL : guids_dup(sh->guids);

	if (sh->type && !(t = m->to[sh->type->index]) && (t = type_share(dst, sh->type)))
		m->to[sh->type->index] = t;
	if ((sh->type && !t) || (!type_only && sh->guids && !g)) {
		free(g);
		errno = ENOMEM;
		return -1;
	}
	old = dst->hosts[h].type;
	if (old)
		old->nhosts--;
	if (t)
		t->nhosts++;
	dst->hosts[h].type = t;
	if (!type_only) {
		topo_cluster_free_owned(dst, dst->hosts[h].guids);
		dst->hosts[h].guids = g;
	}
	return 0;
}

int topo_cluster_add_hosts_from(topo_cluster_t c, topo_cluster_t pool, rm_error_t *err)
{
	struct typemap m;
	size_t i;
	long h;
	int rc = typemap_init(&m, pool);

	for (i = 0; rc == 0 && i < pool->nhosts; i++) {
		if (!pool->hosts[i].type)
			continue;
		if ((h = topo_cluster_add_host(c, pool->hosts[i].name)) < 0 || host_take(c, h, &m, (long)i, 0) < 0)
			rc = -1;
	}
	free(m.to);
	topo_cluster_drop_types(c, 0);
	c->finalized = 0;
	c->guid_gen++;
	if (rc < 0) {
		errno = ENOMEM;
		return rm_error_set(err, "registrations", 0, 0, "out of memory");
	}
	return 0;
}

/* Length of name's short form ("n1" of "n1.cluster"), 0 when it has no domain. */
static size_t short_len(const char *name)
{
	const char *dot = strchr(name, '.');

	return dot && dot != name ? (size_t)(dot - name) : 0;
}

/* Can the update of names be applied to base without a full load? 0 yes, -1 (EAGAIN) no. */
static int derivable(struct topo_cluster *base, struct topo_cluster *pool, const char *const *names, size_t n)
{
	int by_guid = base->fabric && topo_fabric_names_by_guid(base->fabric);
	size_t i, j;

	if (!base->finalized || n > 256)
		return -1;
	for (i = 0; i < n; i++) {
		long b = topo_host_find(base, names[i]), p = topo_host_find(pool, names[i]);
		size_t sl = short_len(names[i]);

		if (p < 0)
			return -1;
		if (by_guid && !guids_equal(b >= 0 ? base->hosts[b].guids : NULL, pool->hosts[p].guids))
			return -1; /* the fabric may name an HCA after this host */
		for (j = 0; j < base->nanomalies; j++)
			if (!strcmp(base->anomalies[j].host, names[i]))
				return -1;
		if (b >= 0 || !(base->fabric || base->torus))
			continue;
		if (sl) { /* a new "n1.x": a full load would join the fabric's "n1" to it */
			char *s = strndup(names[i], sl);
			long k = s ? topo_host_find(base, s) : 0;

			free(s);
			if (k >= 0)
				return -1;
		}
	}
	if (!(base->fabric || base->torus))
		return 0;
	for (j = 0; j < base->nhosts; j++) { /* a new "n1" would take the fabric's "n1.x" */
		size_t sl = short_len(base->hosts[j].name);

		for (i = 0; sl && i < n; i++)
			if (strlen(names[i]) == sl && !strncmp(base->hosts[j].name, names[i], sl) &&
			    topo_host_find(base, names[i]) < 0)
				return -1;
	}
	return 0;
}

static int copy_anomalies(struct topo_cluster *dst, struct topo_cluster *base)
{
	size_t i;

	for (i = 0; i < base->nanomalies; i++) {
		const topo_anomaly_t *a = &base->anomalies[i];
		rm_error_t e = { 0 };

		rm_error_set(&e, a->file, a->line, 0, "%s", a->reason);
		if (topo_cluster_add_anomaly(dst, a->kind, a->host[0] ? a->host : NULL, &e) < 0)
			return -1;
	}
	return 0;
}

/* Copies base's hosts into dst (types shared, positions in the fabric and torus kept). */
static int copy_hosts(struct topo_cluster *dst, struct topo_cluster *base)
{
	struct typemap m;
	size_t i;
	int rc = typemap_init(&m, base);

	if (rc == 0)
		rc = topo_cluster_copy_table(dst, base);
	for (i = 0; rc == 0 && i < base->nhosts; i++)
		rc = host_take(dst, (long)i, &m, (long)i, 1);
	free(m.to);
	return rc;
}

static int share_net(struct topo_cluster *dst, struct topo_cluster *base)
{
	if (!base->fabric && !base->torus)
		return 0;
	if (!base->net) {
		if (!(base->net = malloc(sizeof(*base->net))))
			return -1;
		base->net->refs = 1;
		base->net->fabric = base->fabric;
		base->net->torus = base->torus;
	}
	__atomic_add_fetch(&base->net->refs, 1, __ATOMIC_RELAXED);
	dst->net = base->net;
	dst->fabric = base->fabric;
	dst->torus = base->torus;
	return 0;
}

topo_cluster_t topo_cluster_derive(topo_cluster_t base, topo_cluster_t pool, const char *const *names, size_t n,
				   rm_error_t *err)
{
	struct typemap pm = { 0 };
	struct topo_cluster *c;
	size_t i;
	long h;

	if (derivable(base, pool, names, n) < 0) {
		errno = EAGAIN;
		return rm_error_set(err, "model", 0, 0, "this update needs a full load"), NULL;
	}
	if (!(c = topo_cluster_create()))
		goto nomem;
	c->costs = base->costs;
	c->gpu_links = topo_gpu_overrides_ref(base->gpu_links);
	c->slots = base->slots;
	c->strict = base->strict;
	c->guid_gen = base->guid_gen;
	if (share_net(c, base) < 0 || copy_hosts(c, base) < 0 || copy_anomalies(c, base) < 0)
		goto nomem;
	if (typemap_init(&pm, pool) < 0)
		goto nomem;
	for (i = 0; i < n; i++) {
		long new_host = topo_host_find(c, names[i]) < 0;

		if ((h = topo_cluster_add_host(c, names[i])) < 0 ||
		    host_take(c, h, &pm, topo_host_find(pool, names[i]), 0) < 0)
			goto nomem;
		if (new_host) {
			c->hosts[h].fabric_host = -1;
			c->hosts[h].torus_node = c->torus ? topo_torus_model_host_node(c->torus, names[i]) : -1;
		}
	}
	free(pm.to);
	topo_cluster_drop_types(c, 0);
	c->finalized = 1;
	return c;
nomem:
	free(pm.to);
	topo_cluster_destroy(c);
	errno = ENOMEM;
	return rm_error_set(err, "model", 0, 0, "out of memory"), NULL;
}
