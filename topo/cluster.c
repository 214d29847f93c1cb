/*
 * topo/cluster.c: the cluster container: lifecycle, host table (name -> index hash), finalize (joins
 * hardware, fabric and torus hosts by name), host queries, and the thin wrappers over the fabric and
 * torus loaders. Its node types are node_type.c's registry. A failed load leaves the cluster as it was.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_private.h"

static uint64_t hash_name(const char *s)
{
	return topo_hash_bytes(TOPO_HASH_SEED, s, strlen(s));
}

topo_cluster_t topo_cluster_create(void)
{
	struct topo_cluster *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->host_index = calloc(1, sizeof(struct cluster_index));
	if (!c->host_index) {
		free(c);
		return NULL;
	}
	topo_costs_default(&c->costs);
	pthread_mutex_init(&c->gpu_lock, NULL);
	return c;
}

void topo_cluster_fork_prepare(topo_cluster_t c)
{
	if (c) {
		pthread_mutex_lock(&c->gpu_lock);
		topo_fabric_fork_prepare(c->fabric);
	}
}

void topo_cluster_fork_parent(topo_cluster_t c)
{
	if (c) {
		topo_fabric_fork_parent(c->fabric);
		pthread_mutex_unlock(&c->gpu_lock);
	}
}

void topo_cluster_fork_child(topo_cluster_t c)
{
	if (c) {
		topo_fabric_fork_child(c->fabric);
		pthread_mutex_init(&c->gpu_lock, NULL);
	}
}

void topo_cluster_destroy(topo_cluster_t c)
{
	struct cluster_index *ix;
	size_t i;

	if (!c)
		return;
	topo_parse_end(c);
	for (i = 0; i < c->nhosts; i++) {
		topo_cluster_free_owned(c, c->hosts[i].name);
		topo_cluster_free_owned(c, c->hosts[i].guids);
	}
	free(c->arena);
	free(c->hosts);
	topo_gpu_merged_free(c);
	topo_gpu_overrides_free(c->gpu_links);
	pthread_mutex_destroy(&c->gpu_lock);
	topo_anomalies_truncate(c, 0);
	for (i = 0; i < c->ntypes; i++)
		topo_nodetype_free(c->types[i]);
	free(c->types);
	ix = c->host_index;
	free(ix->hslot);
	free(ix->tslot);
	free(ix);
	if (!topo_netshare_release(c)) {
		topo_fabric_destroy(c->fabric);
		topo_torus_model_destroy(c->torus);
	}
	free(c);
}

int topo_netshare_release(struct topo_cluster *c)
{
	struct topo_netshare *s = c->net;

	if (!s)
		return 0;
	c->net = NULL;
	if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return 1; /* others still use them */
	free(s);
	return 0;
}

/* ---- host table ----------------------------------------------------------------------------- */

static void host_insert(struct cluster_index *ix, const struct topo_host *hosts, size_t h)
{
	size_t m = ix->hcap - 1, i = hash_name(hosts[h].name) & m;

	while (ix->hslot[i])
		i = (i + 1) & m;
	ix->hslot[i] = (uint32_t)h + 1;
}

static int host_index_grow(struct topo_cluster *c)
{
	struct cluster_index *ix = c->host_index;
	size_t cap = ix->hcap ? ix->hcap * 2 : 64, h;
	uint32_t *n = calloc(cap, sizeof(*n));

	if (!n)
		return -1;
	free(ix->hslot);
	ix->hslot = n;
	ix->hcap = cap;
	for (h = 0; h < c->nhosts; h++)
		host_insert(ix, c->hosts, h);
	return 0;
}

int topo_cluster_replace_hw(topo_cluster_t c, int on)
{
	c->replace_hw = on != 0;
	return 0;
}

int topo_cluster_keep_parser(topo_cluster_t c, int on)
{
	c->keep_parser = on != 0;
	return 0;
}

long topo_host_find(topo_cluster_t c, const char *name)
{
	struct cluster_index *ix = c->host_index;
	size_t m, i;

	if (ix->hcap && name) {
		m = ix->hcap - 1;
		for (i = hash_name(name) & m; ix->hslot[i]; i = (i + 1) & m)
			if (!strcmp(c->hosts[ix->hslot[i] - 1].name, name))
				return (long)ix->hslot[i] - 1;
	}
	errno = ENOENT;
	return -1;
}

long topo_cluster_add_host(struct topo_cluster *c, const char *name)
{
	struct cluster_index *ix = c->host_index;
	int saved = errno;
	long h = topo_host_find(c, name);
	struct topo_host *nh;

	errno = saved;
	if (h >= 0)
		return h;
	if (c->nhosts >= UINT32_MAX - 1) {
		errno = EOVERFLOW;
		return -1;
	}
	if ((c->nhosts + 1) * 2 > ix->hcap && host_index_grow(c) < 0)
		return -1;
	if (c->nhosts == c->hosts_cap) {
		size_t cap = c->hosts_cap ? c->hosts_cap * 2 : 64;

		nh = realloc(c->hosts, cap * sizeof(*nh));
		if (!nh)
			return -1;
		c->hosts = nh;
		c->hosts_cap = cap;
	}
	nh = &c->hosts[c->nhosts];
	nh->name = strdup(name);
	if (!nh->name)
		return -1;
	nh->type = NULL;
	nh->guids = NULL;
	nh->fabric_host = -1;
	nh->torus_node = -1;
	host_insert(ix, c->hosts, c->nhosts);
	return (long)c->nhosts++;
}

void topo_cluster_free_owned(struct topo_cluster *c, void *p)
{
	if (p && !(c->arena && (char *)p >= c->arena && (char *)p < c->arena + c->arena_len))
		free(p);
}

static size_t guids_size(const struct topo_guids *g)
{
	return g ? (topo_guids_bytes(g) + 7) & ~(size_t)7 : 0;
}

/* Gives the empty dst src's host table: names and GUIDs copied into one block (dst's arena: a derived
 * model costs one allocation, not two per host), the name index copied slot for slot (the same host
 * indices), positions in the fabric and torus kept, no hardware. -1 on ENOMEM (dst left empty). */
int topo_cluster_copy_table(struct topo_cluster *dst, const struct topo_cluster *src)
{
	struct cluster_index *dix = dst->host_index, *six = src->host_index;
	size_t h, len = 0, at = 0;

	if (dst->nhosts || dst->arena || !src->nhosts)
		return dst->nhosts || dst->arena ? -1 : 0;
	for (h = 0; h < src->nhosts; h++)
		len += guids_size(src->hosts[h].guids) + ((strlen(src->hosts[h].name) + 8) & ~(size_t)7);
	if (!(dst->hosts = malloc(src->hosts_cap * sizeof(*dst->hosts))) ||
	    !(dix->hslot = malloc(six->hcap * sizeof(*dix->hslot))) || !(dst->arena = malloc(len)))
		return -1;
	dst->arena_len = len;
	dst->hosts_cap = src->hosts_cap;
	dix->hcap = six->hcap;
	memcpy(dix->hslot, six->hslot, six->hcap * sizeof(*dix->hslot));
	for (h = 0; h < src->nhosts; h++) {
		struct topo_host *d = &dst->hosts[h];
		size_t nl = strlen(src->hosts[h].name) + 1, gl = guids_size(src->hosts[h].guids);

		*d = src->hosts[h];
		d->type = NULL;
		d->guids = gl ? (struct topo_guids *)(dst->arena + at) : NULL;
		if (gl)
			memcpy(d->guids, src->hosts[h].guids, topo_guids_bytes(src->hosts[h].guids));
		at += gl;
		d->name = dst->arena + at;
		memcpy(d->name, src->hosts[h].name, nl);
		at += (nl + 7) & ~(size_t)7;
	}
	dst->nhosts = src->nhosts;
	return 0;
}

/* ---- finalize --------------------------------------------------------------------------------- */

/*
 * Joining by name: an exact match first; else a fabric or torus name with a domain ("n1.cluster")
 * matches the host named by its short name ("n1"), and a short name matches the only host whose name
 * is that short name plus a domain. Anything else becomes a new host.
 */
struct shortmap {
	uint32_t *slot;  /* host index + 1, 0 = empty */
	char *ambiguous; /* several hosts have this short name: no match */
	size_t cap;
};

static uint64_t hash_short(const char *s, size_t n)
{
	return topo_hash_bytes(TOPO_HASH_SEED, s, n);
}

static size_t short_len(const char *name)
{
	const char *dot = strchr(name, '.');

	return dot && dot != name ? (size_t)(dot - name) : 0;
}

/* Index of the hosts that have a domain, by short name. Empty (cap 0) when none or out of memory. */
static void shortmap_build(struct topo_cluster *c, struct shortmap *m)
{
	size_t h, n = 0, i;

	memset(m, 0, sizeof(*m));
	for (h = 0; h < c->nhosts; h++)
		n += short_len(c->hosts[h].name) > 0;
	if (!n)
		return;
	for (m->cap = 16; m->cap < 2 * n; m->cap *= 2)
		;
	m->slot = calloc(m->cap, sizeof(*m->slot));
	m->ambiguous = calloc(m->cap, 1);
	if (!m->slot || !m->ambiguous) {
		free(m->slot);
		free(m->ambiguous);
		memset(m, 0, sizeof(*m));
		return;
	}
	for (h = 0; h < c->nhosts; h++) {
		const char *name = c->hosts[h].name;
		size_t len = short_len(name);

		if (!len)
			continue;
		for (i = hash_short(name, len) & (m->cap - 1); m->slot[i]; i = (i + 1) & (m->cap - 1)) {
			const char *o = c->hosts[m->slot[i] - 1].name;

			if (short_len(o) == len && !strncmp(o, name, len))
				break;
		}
		if (m->slot[i])
			m->ambiguous[i] = 1;
		else
			m->slot[i] = (uint32_t)h + 1;
	}
}

static long shortmap_find(const struct topo_cluster *c, const struct shortmap *m, const char *name)
{
	size_t len = strlen(name), i;

	if (!m->cap)
		return -1;
	for (i = hash_short(name, len) & (m->cap - 1); m->slot[i]; i = (i + 1) & (m->cap - 1)) {
		const char *o = c->hosts[m->slot[i] - 1].name;

		if (short_len(o) == len && !strncmp(o, name, len))
			return m->ambiguous[i] ? -1 : (long)m->slot[i] - 1;
	}
	return -1;
}

static long join_name(struct topo_cluster *c, const struct shortmap *m, const char *name)
{
	long h = topo_host_find(c, name);
	size_t len = short_len(name);
	char *s;

	if (h < 0 && len && (s = strndup(name, len))) {
		h = topo_host_find(c, s);
		free(s);
	}
	if (h < 0 && !len)
		h = shortmap_find(c, m, name);
	return h >= 0 ? h : topo_cluster_add_host(c, name);
}

/* Adds every fabric and torus host; on allocation failure the hosts added so far stay (harmless:
 * hosts without data) and -1 is returned. */
static int join_hosts(struct topo_cluster *c, struct shortmap *m, rm_error_t *err)
{
	size_t i, n;
	long h;

	for (i = 0; i < c->nhosts; i++) {
		c->hosts[i].fabric_host = -1;
		c->hosts[i].torus_node = c->torus ? topo_torus_model_host_node(c->torus, c->hosts[i].name) : -1;
	}
	n = c->fabric ? topo_fabric_nhosts(c->fabric) : 0;
	for (i = 0; i < n; i++) {
		const char *name = topo_fabric_host_name(c->fabric, i);

		if (!name || (h = join_name(c, m, name)) < 0)
			return rm_error_set(err, "finalize", 0, 0, "cannot add fabric host %zu", i);
		c->hosts[h].fabric_host = (long)i;
	}
	n = c->torus ? topo_torus_model_nhosts(c->torus) : 0;
	for (i = 0; i < n; i++) {
		const char *name = topo_torus_model_host_name(c->torus, i);

		if (!name || (h = join_name(c, m, name)) < 0)
			return rm_error_set(err, "finalize", 0, 0, "cannot add torus host %zu", i);
		c->hosts[h].torus_node = topo_torus_model_host_node(c->torus, name);
	}
	return 0;
}

int topo_cluster_finalize(topo_cluster_t c, rm_error_t *err)
{
	struct shortmap m;
	int r;

	if (c->fabric && topo_guids_to_fabric(c) < 0)
		return rm_error_set(err, "finalize", 0, 0, "out of memory");
	if (c->fabric && topo_fabric_finalize(c->fabric, err) < 0)
		return -1;
	shortmap_build(c, &m);
	r = join_hosts(c, &m, err);
	free(m.slot);
	free(m.ambiguous);
	if (r < 0) {
		errno = ENOMEM;
		return -1;
	}
	c->finalized = 1;
	return 0;
}

/* ---- host queries ---------------------------------------------------------------------------- */

size_t topo_nhosts(topo_cluster_t c)
{
	return c->nhosts;
}

const char *topo_host_name(topo_cluster_t c, size_t h)
{
	return h < c->nhosts ? c->hosts[h].name : NULL;
}

hwloc_topology_t topo_host_hwloc(topo_cluster_t c, size_t h)
{
	return h < c->nhosts && c->hosts[h].type ? c->hosts[h].type->topo : NULL;
}

unsigned topo_host_npus(topo_cluster_t c, size_t h)
{
	return h < c->nhosts && c->hosts[h].type ? c->hosts[h].type->npus : 0;
}

long topo_host_pu_by_os(topo_cluster_t c, size_t h, unsigned long os)
{
	const struct topo_nodetype *t = h < c->nhosts ? c->hosts[h].type : NULL;
	hwloc_obj_t o;

	if (!t)
		return -1;
	if (t->pu_logical) /* the table covers every OS index of the tree */
		return os < t->pu_os_end ? t->pu_logical[os] : -1;
	o = os <= UINT_MAX ? hwloc_get_pu_obj_by_os_index(t->topo, (unsigned)os) : NULL;
	return o ? (long)o->logical_index : -1;
}

unsigned topo_host_ncores(topo_cluster_t c, size_t h)
{
	return h < c->nhosts && c->hosts[h].type ? c->hosts[h].type->ncores : 0;
}

int topo_host_hops(topo_cluster_t c, size_t a, size_t b)
{
	if (a >= c->nhosts || b >= c->nhosts)
		return -1;
	if (a == b)
		return 0;
	if (!c->fabric || c->hosts[a].fabric_host < 0 || c->hosts[b].fabric_host < 0)
		return -1;
	return topo_fabric_hops(c->fabric, (size_t)c->hosts[a].fabric_host, (size_t)c->hosts[b].fabric_host);
}

/* ---- fabric and torus wrappers --------------------------------------------------------------- */

typedef int (*fabric_loader_t)(struct topo_fabric *f, const char *arg, rm_error_t *err);

/* Creates the fabric on first use; a failed first load drops it again. */
static int with_fabric(struct topo_cluster *c, fabric_loader_t load, const char *arg, rm_error_t *err)
{
	int fresh = !c->fabric;

	if (fresh && !(c->fabric = topo_fabric_create())) {
		errno = ENOMEM;
		return rm_error_set(err, arg, 0, 0, "out of memory");
	}
	if (load(c->fabric, arg, err) < 0) {
		int saved = errno;

		if (fresh) {
			topo_fabric_destroy(c->fabric);
			c->fabric = NULL;
		}
		errno = saved ? saved : EINVAL;
		return -1;
	}
	c->finalized = 0;
	return 0;
}

int topo_load_ib_file(topo_cluster_t c, const char *path, rm_error_t *err)
{
	return with_fabric(c, topo_fabric_load_file, path, err);
}

int topo_load_ib_cache(topo_cluster_t c, const char *path, rm_error_t *err)
{
	return with_fabric(c, topo_fabric_load_cache, path, err);
}

int topo_load_node_name_map(topo_cluster_t c, const char *path, rm_error_t *err)
{
	return with_fabric(c, topo_fabric_load_node_name_map, path, err);
}

int topo_load_ib_live(topo_cluster_t c, const char *ca, int port, rm_error_t *err)
{
	int fresh = !c->fabric;

	if (fresh && !(c->fabric = topo_fabric_create())) {
		errno = ENOMEM;
		return rm_error_set(err, "libibnetdisc", 0, 0, "out of memory");
	}
	if (topo_fabric_load_live(c->fabric, ca, port, err) < 0) {
		int saved = errno;

		if (fresh) {
			topo_fabric_destroy(c->fabric);
			c->fabric = NULL;
		}
		errno = saved ? saved : EIO;
		return -1;
	}
	c->finalized = 0;
	return 0;
}

static void set_torus(struct topo_cluster *c, struct topo_torus_model *t)
{
	topo_torus_model_destroy(c->torus);
	c->torus = t;
	c->finalized = 0;
}

int topo_load_torus(topo_cluster_t c, const char *path, rm_error_t *err)
{
	struct topo_torus_model *t = topo_torus_model_load(path, err);

	if (!t)
		return -1;
	set_torus(c, t);
	return 0;
}

int topo_set_torus(topo_cluster_t c, const topo_torus_spec_t *spec, rm_error_t *err)
{
	struct topo_torus_model *t = topo_torus_model_from_spec(spec, err);

	if (!t)
		return -1;
	set_torus(c, t);
	return 0;
}

const topo_torus_spec_t *topo_torus(topo_cluster_t c)
{
	return c->torus ? topo_torus_model_spec(c->torus) : NULL;
}
