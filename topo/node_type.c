/*
 * topo/node_type.c: the node-type registry. Hosts whose XML is identical once the <info .../> elements
 * (host name, addresses, GUIDs, cgroup, ...) are left out share one parsed hwloc tree (struct
 * topo_nodetype). The check hashes the normalised bytes and compares them exactly, so a replicated node
 * costs one read and one scan of its file, not an hwloc parse (10,000 replicated nodes load in well
 * under a second). A shared tree keeps the infos of the first host that brought it. The cluster's
 * types[] and their key index live here; the loaders (node_hwloc.c, node_hwloc_diff.c) and
 * cluster_derive.c register types through it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "cluster_private.h"

/* Copies buf without its <info .../> elements into a new string. */
static char *normalise(const char *buf, size_t len, size_t *out_len)
{
	char *out = malloc(len + 1), *o = out;
	const char *p = buf, *end = buf + len;

	if (!out)
		return NULL;
	while (p < end) {
		const char *s = memmem(p, (size_t)(end - p), "<info ", 6), *e;

		if (!s || !(e = memmem(s, (size_t)(end - s), "/>", 2))) {
			memcpy(o, p, (size_t)(end - p));
			o += end - p;
			break;
		}
		memcpy(o, p, (size_t)(s - p));
		o += s - p;
		p = e + 2;
	}
	*o = '\0';
	*out_len = (size_t)(o - out);
	return out;
}

uint64_t topo_hwloc_xml_type_key(const char *buf, size_t len)
{
	uint64_t h = TOPO_HASH_SEED;
	const char *p = buf, *end = buf + len;

	while (p < end) { /* the bytes normalise() keeps, hashed as they come */
		const char *s = memmem(p, (size_t)(end - p), "<info ", 6), *e;

		if (!s || !(e = memmem(s, (size_t)(end - s), "/>", 2))) {
			h = topo_hash_bytes(h, p, (size_t)(end - p));
			break;
		}
		h = topo_hash_bytes(h, p, (size_t)(s - p));
		p = e + 2;
	}
	return h ? h : 1;
}

/* ---- restricted cpusets ------------------------------------------------------------------------ */

/* PUs of the tree outside the allowed cpuset (the XML was gathered inside a restricted cpuset). */
static unsigned disallowed_pus(hwloc_topology_t topo)
{
	hwloc_bitmap_t d = hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(topo));
	int w;

	if (!d)
		return 0;
	hwloc_bitmap_andnot(d, d, hwloc_topology_get_allowed_cpuset(topo));
	w = hwloc_bitmap_weight(d);
	hwloc_bitmap_free(d);
	return w > 0 ? (unsigned)w : 0;
}

/* The value of attribute name in the element starting at tag (up to its '>'), parsed as a cpuset. */
static hwloc_bitmap_t tag_cpuset(const char *tag, const char *end, const char *name)
{
	const char *gt = memchr(tag, '>', (size_t)(end - tag)), *a, *q;
	char pat[40], val[1024];
	hwloc_bitmap_t b;

	snprintf(pat, sizeof(pat), " %s=\"", name);
	if (!gt || !(a = memmem(tag, (size_t)(gt - tag), pat, strlen(pat))))
		return NULL;
	a += strlen(pat);
	if (!(q = memchr(a, '"', (size_t)(gt - a))) || (size_t)(q - a) >= sizeof(val))
		return NULL;
	memcpy(val, a, (size_t)(q - a));
	val[q - a] = '\0';
	if (!(b = hwloc_bitmap_alloc()))
		return NULL;
	if (hwloc_bitmap_sscanf(b, val) < 0) {
		hwloc_bitmap_free(b);
		return NULL;
	}
	return b;
}

/* hwloc 1.x XML gathered in a restricted cpuset leaves the disallowed PUs out of the tree; its root
 * still says which were online (online_cpuset, a 1.x attribute). Returns how many are left out. */
static unsigned v1_missing_pus(hwloc_topology_t topo, const char *buf, size_t len)
{
	const char *root = memmem(buf, len, "<object ", 8);
	hwloc_bitmap_t online = root ? tag_cpuset(root, buf + len, "online_cpuset") : NULL;
	int w;

	if (!online)
		return 0;
	hwloc_bitmap_andnot(online, online, hwloc_topology_get_topology_cpuset(topo));
	w = hwloc_bitmap_weight(online);
	hwloc_bitmap_free(online);
	return w > 0 ? (unsigned)w : 0;
}

/* ---- node types -------------------------------------------------------------------------------- */

/* t->pu_logical: OS index -> logical index of the type's PUs, when OS indices are dense enough (at most
 * 16 entries per PU: a real machine numbers its PUs 0..n-1 with few holes). Without it (or without
 * memory) topo_host_pu_by_os asks hwloc, which scans the PUs. */
static void pu_table(struct topo_nodetype *t)
{
	unsigned end = 0, i;
	hwloc_obj_t pu = NULL;

	/* a PU of unknown OS index (HWLOC_UNKNOWN_INDEX, e.g. a synthetic description's index 4294967295)
	 * has none to be found by: left out of the table (its slot was written past the table's end) */
	while ((pu = hwloc_get_next_obj_by_type(t->topo, HWLOC_OBJ_PU, pu)))
		if (pu->os_index != HWLOC_UNKNOWN_INDEX)
			end = pu->os_index + 1 > end ? pu->os_index + 1 : end;
	if (end == 0 || end / 16 > t->npus || !(t->pu_logical = malloc(sizeof(*t->pu_logical) * end)))
		return;
	for (i = 0; i < end; i++)
		t->pu_logical[i] = -1;
	while ((pu = hwloc_get_next_obj_by_type(t->topo, HWLOC_OBJ_PU, pu)))
		if (pu->os_index != HWLOC_UNKNOWN_INDEX)
			t->pu_logical[pu->os_index] = (int32_t)pu->logical_index;
	t->pu_os_end = end;
}

void topo_nodetype_free(struct topo_nodetype *t)
{
	if (!t)
		return;
	if (t->shared && __atomic_sub_fetch(t->shared, 1, __ATOMIC_ACQ_REL) > 0) {
		free(t); /* other clusters still use its tree */
		return;
	}
	free(t->shared);
	topo_gpumodel_free(t->gpu);
	free(t->pu_logical);
	if (t->topo)
		hwloc_topology_destroy(t->topo);
	free(t->norm);
	free(t);
}

/* Wraps a loaded topology (taken) and its normalised key (taken) into a type, registered in the
 * cluster; or returns the existing type with that key (both freed then). NULL on error. */
struct topo_nodetype *topo_nodetype_intern(struct topo_cluster *c, hwloc_topology_t topo, char *norm, size_t norm_len,
					   const char *source, rm_error_t *err)
{
	uint64_t key = topo_hash_bytes(TOPO_HASH_SEED, norm, norm_len);
	struct topo_nodetype *t = topo_cluster_find_type(c, key, norm, norm_len);
	int npus;

	if (t) {
		if (topo)
			hwloc_topology_destroy(topo);
		free(norm);
		return t;
	}
	npus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	if (npus <= 0) {
		rm_error_set(err, source, 0, 0, "hwloc topology has no PU");
		goto fail;
	}
	if (!(t = calloc(1, sizeof(*t)))) {
		rm_error_set(err, source, 0, 0, "out of memory");
		goto fail;
	}
	t->topo = topo;
	t->key = key;
	t->norm = norm;
	t->norm_len = norm_len;
	t->npus = (unsigned)npus;
	t->ncores = (unsigned)hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	t->npackages = (unsigned)hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
	if (t->ncores == 0) /* hwloc trees without cores: count PUs as cores */
		t->ncores = t->npus;
	t->disallowed_pus = disallowed_pus(topo);
	pu_table(t);
	if (!(t->gpu = topo_gpumodel_build(topo))) {
		free(t);
		rm_error_set(err, source, 0, 0, "out of memory");
		goto fail;
	}
	if (topo_cluster_add_type(c, t) == 0)
		return t;
	topo_gpumodel_free(t->gpu);
	free(t);
	rm_error_set(err, source, 0, 0, "out of memory");
fail:
	hwloc_topology_destroy(topo);
	free(norm);
	errno = errno ? errno : EINVAL;
	return NULL;
}

struct topo_nodetype *topo_hwloc_type_from_xml(struct topo_cluster *c, const char *buf, size_t len, const char *source,
					       rm_error_t *err)
{
	size_t norm_len, canon_len;
	char *norm = normalise(buf, len, &norm_len), *canon;
	struct topo_nodetype *t;
	hwloc_topology_t topo;
	rm_error_t perr = { 0 };
	unsigned missing;

	if (!norm) {
		rm_error_set(err, source, 0, 0, "out of memory");
		return NULL;
	}
	t = topo_cluster_find_type(c, topo_hash_bytes(TOPO_HASH_SEED, norm, norm_len), norm, norm_len);
	if (t) {
		free(norm);
		return t;
	}
	/* hwloc 3.0 XML is translated to the 2.x form first (node_hwloc_v3.c) */
	if (topo_hwloc_is_v3(buf, len)) {
		size_t v2len;
		char *v2 = topo_hwloc_v3_to_v2(buf, len, &v2len);

		if (!v2) {
			free(norm);
			rm_error_set(err, source, 0, 0, "out of memory");
			return NULL;
		}
		canon = topo_parse_guarded(c, TOPO_PARSE_TOPO, v2, v2len, source, &canon_len, &perr);
		free(v2);
	} else {
		/* hwloc parses the host's bytes in a child; this process parses only hwloc's export of them */
		canon = topo_parse_guarded(c, TOPO_PARSE_TOPO, buf, len, source, &canon_len, &perr);
	}
	if (!canon) {
		free(norm);
		if (errno == EINVAL) {
			topo_hwloc_xml_error(buf, len, source, err);
		} else {
			int e = errno == EDOM ? EINVAL : errno; /* (EDOM: refused by node_parse.c, its text given) */

			rm_error_set(err, source, 0, 0, "%s", perr.text);
			errno = e;
		}
		return NULL;
	}
	if (hwloc_topology_init(&topo) < 0) {
		free(canon);
		free(norm);
		rm_error_set(err, source, 0, 0, "hwloc_topology_init failed");
		return NULL;
	}
	if (topo_hwloc_load_bytes(topo, canon, canon_len) < 0) {
		hwloc_topology_destroy(topo);
		free(canon);
		free(norm);
		rm_error_set(err, source, 0, 0, "hwloc cannot read back its own export of this file");
		return NULL;
	}
	free(canon);
	missing = v1_missing_pus(topo, buf, len);
	if ((t = topo_nodetype_intern(c, topo, norm, norm_len, source, err)))
		t->missing_pus = missing;
	return t;
}

/* ---- the cluster's types[] and their key index --------------------------------------------------- */

static void type_insert(struct cluster_index *ix, struct topo_nodetype **types, size_t t)
{
	size_t m = ix->tcap - 1, i = types[t]->key & m;

	while (ix->tslot[i])
		i = (i + 1) & m;
	ix->tslot[i] = (uint32_t)t + 1;
}

static int type_index_rebuild(struct topo_cluster *c, size_t cap)
{
	struct cluster_index *ix = c->host_index;
	uint32_t *n = calloc(cap, sizeof(*n));
	size_t t;

	if (!n)
		return -1;
	free(ix->tslot);
	ix->tslot = n;
	ix->tcap = cap;
	for (t = 0; t < c->ntypes; t++)
		type_insert(ix, c->types, t);
	return 0;
}

struct topo_nodetype *topo_cluster_find_type(struct topo_cluster *c, uint64_t key, const char *norm, size_t len)
{
	struct cluster_index *ix = c->host_index;
	size_t m, i;

	if (!ix->tcap)
		return NULL;
	m = ix->tcap - 1;
	for (i = key & m; ix->tslot[i]; i = (i + 1) & m) {
		struct topo_nodetype *t = c->types[ix->tslot[i] - 1];

		if (t->key == key && t->norm_len == len && !memcmp(t->norm, norm, len))
			return t;
	}
	return NULL;
}

int topo_cluster_add_type(struct topo_cluster *c, struct topo_nodetype *t)
{
	struct cluster_index *ix = c->host_index;

	if ((c->ntypes + 1) * 2 > ix->tcap && type_index_rebuild(c, ix->tcap ? ix->tcap * 2 : 64) < 0)
		return -1;
	if (c->ntypes == c->types_cap) {
		size_t cap = c->types_cap ? c->types_cap * 2 : 16;
		struct topo_nodetype **n = realloc(c->types, cap * sizeof(*n));

		if (!n)
			return -1;
		c->types = n;
		c->types_cap = cap;
	}
	c->types[c->ntypes] = t;
	t->index = c->ntypes;
	type_insert(ix, c->types, c->ntypes);
	c->ntypes++;
	return 0;
}

void topo_cluster_drop_types(struct topo_cluster *c, size_t ntypes_before)
{
	struct cluster_index *ix = c->host_index;
	size_t t, n = ntypes_before;

	for (t = ntypes_before; t < c->ntypes; t++) {
		if (c->types[t]->nhosts) {
			c->types[t]->index = n;
			c->types[n++] = c->types[t];
		} else {
			topo_nodetype_free(c->types[t]);
		}
	}
	if (n == c->ntypes)
		return;
	c->ntypes = n;
	if (type_index_rebuild(c, ix->tcap) < 0) { /* keep the old table: rebuild in place */
		memset(ix->tslot, 0, ix->tcap * sizeof(*ix->tslot));
		for (t = 0; t < c->ntypes; t++)
			type_insert(ix, c->types, t);
	}
}
