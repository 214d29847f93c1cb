/*
 * topo/node_hwloc_diff.c: hosts given as hwloc topology diffs (<host>.diff.xml, as hwloc-compress-dir
 * writes them), hwloc 1.x diffs included.
 *
 * A diff only changes attributes (a NUMA node's memory, an object's name, an info), never the tree: a
 * host's hardware is its reference's, with the memory changes of its hunks. Each reference is loaded
 * once per directory, with every object type kept (hunks address I/O objects too), into a probe
 * topology. Each hunk is applied on its own, as a one-hunk list through hwloc's diff API, and undone
 * after the host is typed, so one hunk that does not apply costs that hunk only (a diff_hunk anomaly;
 * the host keeps the reference's value). Only memory (size) hunks change the hardware: a host whose
 * diff changes infos and names alone shares its reference's node type without a copy.
 *
 * hwloc 1.x object depths. In 1.x, NUMA nodes were a level of the main tree and I/O depths were
 * -3 (bridges), -4 (PCI devices), -5 (OS devices); in hwloc 2 NUMA nodes hang beside the tree (depth
 * HWLOC_TYPE_DEPTH_NUMANODE) and the I/O depths moved to -4, -5, -6. A 1.x diff (DOCTYPE hwloc.dtd;
 * hwloc 2 writes hwloc2-diff.dtd, with hwloc 2 depths even against a 1.x reference) of a 1.x
 * reference (no version attribute on <topology>) is translated: the reference is scanned for the 1.x levels (the type at each nesting depth of its normal
 * objects); a 1.x depth d then names the k-th level of its type family in the hwloc 2 tree, where k
 * counts the 1.x levels of that family above d (caches: L3, L2, L1d, L1i in both), and a NUMANode
 * level names HWLOC_TYPE_DEPTH_NUMANODE with the same logical index. A memory hunk on a 1.x machine
 * without NUMA nodes goes to the NUMA node hwloc 2 gives it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_private.h"
#include "rm_file.h"

#define V1_MAX_LEVELS 64

struct probe {
	char *ref;             /* path of the reference XML */
	rm_error_t err;        /* why the reference cannot be loaded (set: it cannot) */
	hwloc_topology_t topo; /* every object type kept; hunks are applied here and undone */
	struct topo_nodetype *type;
	struct topo_guids *guids;
	int v1;                  /* hwloc 1.x XML: depths are translated */
	int nlev;                /* 1.x levels found, -1 when the tree is irregular */
	char fam[V1_MAX_LEVELS]; /* type family of each 1.x level */
};

struct topo_diffset {
	struct topo_cluster *c;
	struct probe *v;
	size_t n, cap;
	uint32_t *slot; /* open addressing on the reference path: probe index + 1 */
	size_t scap;
};

struct topo_diffset *topo_diffset_create(struct topo_cluster *c)
{
	struct topo_diffset *d = calloc(1, sizeof(*d));

	if (d)
		d->c = c;
	return d;
}

void topo_diffset_destroy(struct topo_diffset *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->n; i++) {
		free(d->v[i].ref);
		free(d->v[i].guids);
		if (d->v[i].topo)
			hwloc_topology_destroy(d->v[i].topo);
	}
	free(d->v);
	free(d->slot);
	free(d);
}

/* ---- hwloc 1.x levels ---------------------------------------------------------------------------- */

/* Family of a 1.x object type: 0 for objects outside the levels (I/O, Misc). */
static char v1_family(const char *type, size_t n)
{
	static const struct {
		const char *name;
		char fam;
	} t[] = { { "Machine", 'M' }, { "System", 'S' }, { "Socket", 'P' }, { "Package", 'P' }, { "NUMANode", 'N' },
		  { "Cache", 'C' },   { "Core", 'c' },   { "PU", 'u' },     { "Group", 'G' },   { "Misc", 0 },
		  { "Bridge", 0 },    { "PCIDev", 0 },   { "OSDev", 0 } };
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strlen(t[i].name) == n && !strncmp(type, t[i].name, n))
			return t[i].fam;
	return 'X';
}

static char v2_family(hwloc_obj_type_t type)
{
	if (hwloc_obj_type_is_cache(type))
		return 'C';
	switch (type) {
	case HWLOC_OBJ_MACHINE: return 'M';
	case HWLOC_OBJ_PACKAGE: return 'P';
	case HWLOC_OBJ_NUMANODE: return 'N';
	case HWLOC_OBJ_CORE: return 'c';
	case HWLOC_OBJ_PU: return 'u';
	case HWLOC_OBJ_GROUP: return 'G';
	default: return 0;
	}
}

/* Is buf hwloc 1.x XML (no version attribute of 2 or more on <topology>)? */
static int xml_is_v1(const char *buf, size_t len)
{
	const char *t = memmem(buf, len, "<topology", 9), *gt, *v;

	if (!t || !(gt = memchr(t, '>', len - (size_t)(t - buf))))
		return 0;
	v = memmem(t, (size_t)(gt - t), "version=\"", 9);
	return !v || atoi(v + 9) < 2;
}

/* Records the family of the object at 1.x level lev (the first seen fixes it); -1 when irregular. */
static int v1_note(struct probe *p, int lev, char fam)
{
	if (lev >= V1_MAX_LEVELS || lev > p->nlev)
		return -1;
	if (lev == p->nlev)
		p->fam[p->nlev++] = fam;
	return p->fam[lev] == fam ? 0 : -1;
}

/* Scans the normal objects' nesting in a 1.x XML buffer into p->fam (p->nlev -1 when irregular). */
static void v1_levels(struct probe *p, const char *buf, size_t len)
{
	const char *s = buf, *end = buf + len, *gt, *ty;
	unsigned char normal[256];
	int top = 0, lev = 0;
	char fam;

	p->nlev = 0;
	while (s < end && (s = memchr(s, '<', (size_t)(end - s)))) {
		if ((size_t)(end - s) >= 9 && !strncmp(s, "</object>", 9)) {
			if (top > 0 && normal[--top])
				lev--;
			s += 9;
			continue;
		}
		if ((size_t)(end - s) < 8 || strncmp(s, "<object ", 8) || !(gt = memchr(s, '>', (size_t)(end - s)))) {
			s++;
			continue;
		}
		ty = memmem(s, (size_t)(gt - s), " type=\"", 7);
		fam = ty ? v1_family(ty + 7, strcspn(ty + 7, "\"")) : 'X';

		if ((fam && v1_note(p, lev, fam) < 0) || (gt[-1] != '/' && top >= (int)sizeof(normal))) {
			p->nlev = -1;
			return;
		}
		if (gt[-1] != '/') {
			normal[top++] = fam != 0;
			lev += fam != 0;
		}
		s = gt + 1;
	}
}

/* The hwloc 2 depth of 1.x depth d1 in the probe; -1 when there is none. */
static int v1_depth(const struct probe *p, int d1, int *d2)
{
	int k = 0, j, d, depth = hwloc_topology_get_depth(p->topo);

	if (d1 < 0) {
		*d2 = d1 == -3   ? HWLOC_TYPE_DEPTH_BRIDGE
		      : d1 == -4 ? HWLOC_TYPE_DEPTH_PCI_DEVICE
		      : d1 == -5 ? HWLOC_TYPE_DEPTH_OS_DEVICE
				 : 0;
		return d1 >= -5 && d1 <= -3 ? 0 : -1;
	}
	if (p->nlev < 0 || d1 >= p->nlev)
		return -1;
	if (p->fam[d1] == 'N') {
		*d2 = HWLOC_TYPE_DEPTH_NUMANODE;
		return 0;
	}
	for (j = 0; j < d1; j++)
		k += p->fam[j] == p->fam[d1];
	for (d = 0; d < depth; d++)
		if (v2_family(hwloc_get_depth_type(p->topo, d)) == p->fam[d1] && k-- == 0) {
			*d2 = d;
			return 0;
		}
	return -1;
}

/* ---- references ---------------------------------------------------------------------------------- */

static void probe_load(struct topo_diffset *d, struct probe *p)
{
	size_t len;
	char *buf = rm_file_read(p->ref, RM_FILE_HWLOC, &len, &p->err);

	if (!buf || !(p->type = topo_hwloc_type_from_xml(d->c, buf, len, p->ref, &p->err))) {
		free(buf);
		return;
	}
	if (hwloc_topology_init(&p->topo) < 0) {
		p->topo = NULL;
		rm_error_set(&p->err, p->ref, 0, 0, "hwloc_topology_init failed");
	} else {
		/* every object type kept, parsed in the child like the type (node_parse.c) */
		size_t clen;
		char *canon = topo_parse_guarded(d->c, TOPO_PARSE_ALL_TYPES, buf, len, p->ref, &clen, &p->err);

		hwloc_topology_set_all_types_filter(p->topo, HWLOC_TYPE_FILTER_KEEP_ALL);
		if (canon && topo_hwloc_load_bytes(p->topo, canon, clen) < 0)
			rm_error_set(&p->err, p->ref, 0, 0, "hwloc cannot read back its own export of this file");
		free(canon);
	}
	p->guids = topo_guids_from_xml(buf, len, 1);
	if ((p->v1 = xml_is_v1(buf, len)))
		v1_levels(p, buf, len);
	free(buf);
}

static int slot_grow(struct topo_diffset *d)
{
	size_t cap = d->scap ? d->scap * 2 : 64, i, j;
	uint32_t *s = calloc(cap, sizeof(*s));

	if (!s)
		return -1;
	for (i = 0; i < d->n; i++) {
		for (j = topo_hash_bytes(TOPO_HASH_SEED, d->v[i].ref, strlen(d->v[i].ref)) & (cap - 1); s[j];
		     j = (j + 1) & (cap - 1))
			;
		s[j] = (uint32_t)i + 1;
	}
	free(d->slot);
	d->slot = s;
	d->scap = cap;
	return 0;
}

/* The probe of a reference path, loaded on first use; NULL when out of memory. */
static struct probe *probe_get(struct topo_diffset *d, const char *ref)
{
	size_t j;
	struct probe *p;

	if ((d->n + 1) * 2 > d->scap && slot_grow(d) < 0)
		return NULL;
	for (j = topo_hash_bytes(TOPO_HASH_SEED, ref, strlen(ref)) & (d->scap - 1); d->slot[j];
	     j = (j + 1) & (d->scap - 1))
		if (!strcmp(d->v[d->slot[j] - 1].ref, ref))
			return &d->v[d->slot[j] - 1];
	if (d->n == d->cap) {
		p = realloc(d->v, (d->cap = d->cap ? d->cap * 2 : 8) * sizeof(*p));
		if (!p)
			return NULL;
		d->v = p;
	}
	p = &d->v[d->n];
	memset(p, 0, sizeof(*p));
	if (!(p->ref = strdup(ref)))
		return NULL;
	d->slot[j] = (uint32_t)++d->n;
	probe_load(d, p);
	return p;
}

/* ---- applying a diff ----------------------------------------------------------------------------- */

/* The line of each <diff element of the file, in order (hwloc lists hunks in file order). */
static int *hunk_lines(const char *buf, size_t len, size_t *n)
{
	size_t cap = 0, i;
	int *v = NULL, line = 1;

	*n = 0;
	for (i = 0; i + 6 <= len; i++) {
		line += buf[i] == '\n';
		if (buf[i] != '<' || strncmp(buf + i, "<diff ", 6))
			continue;
		if (*n == cap) {
			int *nv = realloc(v, (cap = cap ? cap * 2 : 32) * sizeof(*nv));

			if (!nv)
				break;
			v = nv;
		}
		v[(*n)++] = line;
	}
	return v;
}

/* Parses a topology diff file read through rm_file (hwloc is never given the path to open). */
static int diff_load(struct topo_cluster *c, const char *path, hwloc_topology_diff_t *diff, char **refname, int **lines,
		     size_t *nlines, int *v1, rm_error_t *err)
{
	size_t len, clen = 0;
	char *buf = rm_file_read(path, RM_FILE_HWLOC, &len, err), *canon = NULL;
	rm_error_t perr = { 0 };
	int r, crashed;

	if (!buf)
		return -1;
	/* hwloc parses the diff in a child; this process parses only hwloc's export of it (node_parse.c) */
	canon = topo_parse_guarded(c, TOPO_PARSE_DIFF, buf, len, path, &clen, &perr);
	crashed = !canon && errno != EINVAL;
	r = canon ? hwloc_topology_diff_load_xmlbuffer(canon, (int)clen + 1, diff, refname) : -1;
	free(canon);
	if (crashed) {
		rm_error_set(err, path, 0, 0, "%s", perr.text);
	} else if (r < 0) {
		errno = EINVAL;
		if (len == 0)
			rm_error_set(err, path, 0, 0, "empty file, not an hwloc topology diff");
		else
			rm_error_set(err, path, 0, 0, "malformed hwloc topology diff (hwloc cannot parse it)");
	} else {
		*lines = hunk_lines(buf, len, nlines);
		/* hwloc 2 writes <!DOCTYPE topologydiff SYSTEM "hwloc2-diff.dtd">, 1.x "hwloc.dtd" */
		*v1 = !memmem(buf, len, "hwloc2-diff.dtd", 15) && memmem(buf, len, "\"hwloc.dtd\"", 11);
	}
	free(buf);
	return r;
}

/* Resolves the diff's reference relative to the diff's directory; caller frees. */
static char *ref_path(const char *diffpath, const char *refname)
{
	const char *slash = strrchr(diffpath, '/');
	char *p;

	if (refname[0] == '/' || !slash)
		return strdup(refname);
	if (asprintf(&p, "%.*s/%s", (int)(slash - diffpath), diffpath, refname) < 0)
		return NULL;
	return p;
}

/* A one-hunk copy of h addressed in the probe's hwloc 2 tree; -1 when no object can be named. */
static int translate(const struct probe *p, int v1, hwloc_topology_diff_t h, union hwloc_topology_diff_u *one)
{
	int depth = h->obj_attr.obj_depth;
	unsigned idx = h->obj_attr.obj_index;
	hwloc_obj_t obj;

	if (h->generic.type != HWLOC_TOPOLOGY_DIFF_OBJ_ATTR || (v1 && v1_depth(p, depth, &depth) < 0))
		return -1;
	*one = *h;
	one->obj_attr.next = NULL;
	obj = hwloc_get_obj_by_depth(p->topo, depth, idx);
	if (obj && h->obj_attr.diff.generic.type == HWLOC_TOPOLOGY_DIFF_OBJ_ATTR_SIZE &&
	    obj->type != HWLOC_OBJ_NUMANODE && obj->memory_arity == 1) { /* 1.x machine memory */
		depth = HWLOC_TYPE_DEPTH_NUMANODE;
		idx = obj->memory_first_child->logical_index;
	}
	one->obj_attr.obj_depth = depth;
	one->obj_attr.obj_index = idx;
	return 0;
}

/* Describes hunk h into buf. */
static const char *hunk_text(hwloc_topology_diff_t h, char *buf, size_t len)
{
	const union hwloc_topology_diff_obj_attr_u *a = &h->obj_attr.diff;

	if (h->generic.type != HWLOC_TOPOLOGY_DIFF_OBJ_ATTR)
		snprintf(buf, len, "a change hwloc cannot apply (too complex)");
	else if (a->generic.type == HWLOC_TOPOLOGY_DIFF_OBJ_ATTR_SIZE)
		snprintf(buf, len, "memory of the object at depth %d index %u, %llu -> %llu bytes",
			 h->obj_attr.obj_depth, h->obj_attr.obj_index, (unsigned long long)a->uint64.oldvalue,
			 (unsigned long long)a->uint64.newvalue);
	else
		snprintf(buf, len, "%s%s%s of the object at depth %d index %u, '%.60s' -> '%.60s'",
			 a->generic.type == HWLOC_TOPOLOGY_DIFF_OBJ_ATTR_INFO ? "info '" : "name",
			 a->generic.type == HWLOC_TOPOLOGY_DIFF_OBJ_ATTR_INFO && a->string.name ? a->string.name : "",
			 a->generic.type == HWLOC_TOPOLOGY_DIFF_OBJ_ATTR_INFO ? "'" : "", h->obj_attr.obj_depth,
			 h->obj_attr.obj_index, a->string.oldvalue ? a->string.oldvalue : "",
			 a->string.newvalue ? a->string.newvalue : "");
	return buf;
}

/* A hunk that does not apply: an anomaly, or in strict mode the host's error. Returns -1 when fatal. */
static int hunk_failed(struct topo_diffset *d, const struct probe *p, hwloc_topology_diff_t h, size_t k, int line,
		       const char *path, const char *host, int translated, rm_error_t *err)
{
	rm_error_t e = { 0 };
	char what[256];

	rm_error_set(&e, path, line, 0, "hunk %zu (%s) does not apply to %s: %s", k + 1,
		     hunk_text(h, what, sizeof(what)), p->ref,
		     !translated ? "no hwloc 2 object matches its hwloc 1.x depth"
				 : "the reference has no such object or another value");
	if (d->c->strict) {
		if (err && !rm_error_isset(err))
			*err = e;
		errno = EINVAL;
		return -1;
	}
	return topo_cluster_add_anomaly(d->c, "diff_hunk", host, &e);
}

/* The node type of the probe as the applied hunks left it (its memory changed). */
static struct topo_nodetype *type_of_probe(struct topo_diffset *d, const struct probe *p, const char *path,
					   rm_error_t *err)
{
	struct topo_nodetype *t;
	char *xml = NULL;
	int xlen = 0;

	if (hwloc_topology_export_xmlbuffer(p->topo, &xml, &xlen, 0) < 0 || xlen < 1) {
		errno = EINVAL;
		return rm_error_set(err, path, 0, 0, "cannot export the patched topology"), NULL;
	}
	t = topo_hwloc_type_from_xml(d->c, xml, (size_t)xlen - 1, path, err);
	hwloc_free_xmlbuffer(p->topo, xml);
	if (t && p->type->missing_pus > t->missing_pus)
		t->missing_pus = p->type->missing_pus;
	return t;
}

/* Applies each hunk of diff on its own to the probe, types the result, and undoes the hunks. */
static struct topo_nodetype *apply_hunks(struct topo_diffset *d, struct probe *p, hwloc_topology_diff_t diff, int v1,
					 const int *lines, size_t nlines, const char *path, const char *host,
					 rm_error_t *err)
{
	union hwloc_topology_diff_u *done = NULL;
	struct topo_nodetype *t = p->type;
	size_t n = 0, k, ndone = 0;
	hwloc_topology_diff_t h;
	int memory = 0, ok = 1;

	for (h = diff; h; h = h->generic.next)
		n++;
	if (n && !(done = malloc(n * sizeof(*done)))) {
		errno = ENOMEM;
		return rm_error_set(err, path, 0, 0, "out of memory"), NULL;
	}
	for (h = diff, k = 0; h && ok; h = h->generic.next, k++) {
		int tr = translate(p, v1, h, &done[ndone]) == 0;

		if (!tr || hwloc_topology_diff_apply(p->topo, &done[ndone], 0) < 0) {
			ok = hunk_failed(d, p, h, k, k < nlines ? lines[k] : 0, path, host, tr, err) == 0;
			continue;
		}
		memory |= h->obj_attr.diff.generic.type == HWLOC_TOPOLOGY_DIFF_OBJ_ATTR_SIZE;
		ndone++;
	}
	if (!ok)
		t = NULL;
	else if (memory)
		t = type_of_probe(d, p, path, err);
	while (ndone > 0)
		hwloc_topology_diff_apply(p->topo, &done[--ndone], HWLOC_TOPOLOGY_DIFF_APPLY_REVERSE);
	free(done);
	return t;
}

struct topo_nodetype *topo_diffset_host(struct topo_diffset *d, const char *path, const char *host,
					struct topo_guids **guids, int *ref_bad, rm_error_t *err)
{
	hwloc_topology_diff_t diff = NULL;
	char *refname = NULL, *ref = NULL, msg[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 32];
	struct topo_nodetype *t = NULL;
	struct probe *p = NULL;
	int *lines = NULL, v1 = 0;
	size_t nlines = 0;

	*guids = NULL;
	*ref_bad = 0;
	if (diff_load(d->c, path, &diff, &refname, &lines, &nlines, &v1, err) < 0)
		goto out;
	errno = EINVAL;
	if (!refname || !refname[0]) {
		rm_error_set(err, path, 0, 0, "topology diff names no reference (refname attribute)");
		goto out;
	}
	if (!(ref = ref_path(path, refname)) || !(p = probe_get(d, ref))) {
		errno = ENOMEM;
		rm_error_set(err, path, 0, 0, "out of memory");
		goto out;
	}
	if (rm_error_isset(&p->err)) {
		*ref_bad = 1;
		errno = access(ref, F_OK) < 0 ? ENOENT : EINVAL;
		if (errno == ENOENT)
			rm_error_set(err, path, 0, 0, "reference topology '%s' of this diff is missing", refname);
		else
			rm_error_set(err, path, 0, 0, "reference topology '%s' of this diff cannot be loaded: %s",
				     refname, rm_error_format(&p->err, msg, sizeof(msg)));
		goto out;
	}
	if ((t = apply_hunks(d, p, diff, v1 && p->v1, lines, nlines, path, host, err)))
		*guids = topo_guids_patch(p->guids, diff);
out:
	if (diff)
		hwloc_topology_diff_destroy(diff);
	free(refname);
	free(ref);
	free(lines);
	return t;
}
