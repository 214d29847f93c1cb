/*
 * topo/node_hwloc.c: node hardware from hwloc (XML files and buffers, directories with *.diff.xml
 * topology diffs, synthetic descriptions, the live machine).
 *
 * Node types: hosts whose XML is identical once the <info .../> elements (host name, addresses,
 * GUIDs, cgroup, ...) are left out share one parsed hwloc tree (struct topo_nodetype). The check
 * hashes the normalised bytes and compares them exactly, so a replicated node costs one read and one
 * scan of its file, not an hwloc parse (10,000 replicated nodes load in well under a second).
 * A shared tree keeps the infos of the first host that brought it.
 *
 * Loads are staged in a batch and committed only when every file is good: a failed load leaves the
 * cluster as it was.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwloc.h>
#include <hwloc/diff.h>

#include "cluster_private.h"
#include "hostlist.h"
#include "rm_file.h"

/* ---- reading and normalising XML ------------------------------------------------------------ */

/* Reads an XML file whole: a regular file within the hwloc cap (rm_file), never a FIFO or a device. */
static char *read_file(const char *path, size_t *len, rm_error_t *err)
{
	return rm_file_read(path, RM_FILE_HWLOC, len, err);
}

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

/* The root's HostName info (the first one in the file), unescaped, or NULL. Caller frees. */
static char *xml_hostname(const char *buf, size_t len)
{
	static const char tag[] = "<info name=\"HostName\" value=\"";
	const char *s = memmem(buf, len, tag, sizeof(tag) - 1), *e;
	char *out, *o;

	if (!s)
		return NULL;
	s += sizeof(tag) - 1;
	e = memchr(s, '"', len - (size_t)(s - buf));
	if (!e || e == s || !(out = malloc((size_t)(e - s) + 1)))
		return NULL;
	for (o = out; s < e; s++) {
		static const struct {
			const char *ent;
			char c;
		} ents[] = {
			{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' }, { "&apos;", '\'' }
		};
		size_t k;

		for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++)
			if (!strncmp(s, ents[k].ent, strlen(ents[k].ent)))
				break;
		if (k < sizeof(ents) / sizeof(ents[0])) {
			*o++ = ents[k].c;
			s += strlen(ents[k].ent) - 1;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

/* Explains why hwloc refused buf: a line number where we can tell. */
int topo_hwloc_xml_error(const char *buf, size_t len, const char *source, rm_error_t *err)
{
	int lines = 1;
	size_t i;

	errno = EINVAL;
	for (i = 0; i < len; i++)
		lines += buf[i] == '\n';
	if (len == 0)
		return rm_error_set(err, source, 0, 0, "empty file, not an hwloc XML topology");
	if (!memmem(buf, len, "<topology", 9))
		return rm_error_set(err, source, 1, 0, "not an hwloc XML topology (no <topology> element)");
	if (!memmem(buf, len, "</topology>", 11))
		return rm_error_set(err, source, lines, 0, "truncated hwloc XML topology (no </topology>)");
	return rm_error_set(err, source, 0, 0, "malformed hwloc XML topology (hwloc cannot parse it)");
}

/* Loads XML bytes into topo; hwloc is given a NUL-terminated copy, size including the NUL (as
 * hwloc_topology_export_xmlbuffer() produces), since callers' buffers need not be terminated.
 * Disallowed PUs are kept: XML gathered in a job's cpuset still describes the whole machine. */
int topo_hwloc_load_bytes(hwloc_topology_t topo, const char *buf, size_t len)
{
	char *z;
	int r;

	if (len >= (size_t)0x7fffffff || !(z = malloc(len + 1)))
		return -1;
	memcpy(z, buf, len);
	z[len] = '\0';
	r = hwloc_topology_set_flags(topo, hwloc_topology_get_flags(topo) | HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
	if (r == 0)
		r = hwloc_topology_set_xmlbuffer(topo, z, (int)len + 1);
	if (r == 0)
		r = hwloc_topology_load(topo);
	free(z);
	return r;
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

void topo_nodetype_free(struct topo_nodetype *t)
{
	if (!t)
		return;
	if (t->shared && __atomic_sub_fetch(t->shared, 1, __ATOMIC_ACQ_REL) > 0) {
		free(t); /* other clusters still use its tree */
		return;
	}
	free(t->shared);
	if (t->topo)
		hwloc_topology_destroy(t->topo);
	free(t->norm);
	free(t);
}

/* Wraps a loaded topology (taken) and its normalised key (taken) into a type, registered in the
 * cluster; or returns the existing type with that key (both freed then). NULL on error. */
static struct topo_nodetype *type_intern(struct topo_cluster *c, hwloc_topology_t topo, char *norm, size_t norm_len,
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
	if (topo_cluster_add_type(c, t) == 0)
		return t;
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
	/* hwloc parses the host's bytes in a child; this process parses only hwloc's export of them */
	if (!(canon = topo_parse_guarded(c, TOPO_PARSE_TOPO, buf, len, source, &canon_len, &perr))) {
		free(norm);
		if (errno == EINVAL)
			topo_hwloc_xml_error(buf, len, source, err);
		else
			rm_error_set(err, source, 0, 0, "%s", perr.text);
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
	if ((t = type_intern(c, topo, norm, norm_len, source, err)))
		t->missing_pus = missing;
	return t;
}

/* A type for a non-XML source (synthetic description, live machine) keyed by a string. */
static struct topo_nodetype *type_from_key(struct topo_cluster *c, hwloc_topology_t topo, const char *k,
					   const char *source, rm_error_t *err)
{
	char *norm = strdup(k);

	if (!norm) {
		hwloc_topology_destroy(topo);
		rm_error_set(err, source, 0, 0, "out of memory");
		return NULL;
	}
	return type_intern(c, topo, norm, strlen(norm), source, err);
}

/* ---- batches: stage hosts, then commit all or nothing ------------------------------------------ */

struct batch {
	struct topo_cluster *c;
	size_t ntypes_before;
	char **names;
	struct topo_nodetype **types;
	struct topo_guids **guids; /* per host, owned until commit (NULL entries: none) */
	size_t n, cap;
	struct topo_nameset *seen;
};

static int batch_init(struct batch *b, struct topo_cluster *c, size_t hint)
{
	memset(b, 0, sizeof(*b));
	b->c = c;
	b->ntypes_before = c->ntypes;
	b->seen = topo_nameset_create(hint);
	return b->seen ? 0 : -1;
}

static int batch_stage(struct batch *b, const char *name, struct topo_nodetype *t, const char *source, rm_error_t *err)
{
	long h = topo_host_find(b->c, name);
	int r;

	errno = EEXIST;
	if (h >= 0 && b->c->hosts[h].type && !b->c->replace_hw)
		return rm_error_set(err, source, 0, 0, "duplicate host '%s': its hardware is already loaded", name);
	if ((r = topo_nameset_add(b->seen, name)) == 0)
		return rm_error_set(err, source, 0, 0, "duplicate host '%s' in this load", name);
	if (r < 0 || (b->n == b->cap && b->cap > SIZE_MAX / 4)) {
		errno = ENOMEM;
		return rm_error_set(err, source, 0, 0, "out of memory");
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;
		char **nn = realloc(b->names, cap * sizeof(*nn));
		struct topo_nodetype **nt;
		struct topo_guids **ng;

		if (nn)
			b->names = nn;
		nt = nn ? realloc(b->types, cap * sizeof(*nt)) : NULL;
		if (nt)
			b->types = nt;
		ng = nt ? realloc(b->guids, cap * sizeof(*ng)) : NULL;
		if (!ng) {
			errno = ENOMEM;
			return rm_error_set(err, source, 0, 0, "out of memory");
		}
		b->guids = ng;
		b->cap = cap;
	}
	if (!(b->names[b->n] = strdup(name))) {
		errno = ENOMEM;
		return rm_error_set(err, source, 0, 0, "out of memory");
	}
	b->types[b->n++] = t;
	t->nhosts++;
	return 0;
}

/* Stages host name with type t and GUIDs g (taken, even on failure; may be NULL). */
static int batch_add(struct batch *b, const char *name, struct topo_nodetype *t, struct topo_guids *g,
		     const char *source, rm_error_t *err)
{
	int r = batch_stage(b, name, t, source, err);

	if (r < 0)
		free(g);
	else
		b->guids[b->n - 1] = g;
	return r;
}

static void batch_free(struct batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		free(b->names[i]);
		free(b->guids[i]);
	}
	free(b->names);
	free(b->types);
	free(b->guids);
	topo_nameset_destroy(b->seen);
}

static int batch_abort(struct batch *b)
{
	size_t i;
	int saved = errno;

	for (i = 0; i < b->n; i++)
		b->types[i]->nhosts--;
	topo_cluster_drop_types(b->c, b->ntypes_before);
	batch_free(b);
	errno = saved ? saved : EINVAL;
	return -1;
}

/* Adds the hosts first (the only step that can fail), then gives them their hardware; in replace mode
 * a host's previous node type loses it, and a type left without hosts is dropped. */
static int batch_commit(struct batch *b, const char *source, rm_error_t *err)
{
	struct topo_nodetype *old;
	size_t i, emptied = 0;
	long h;

	for (i = 0; i < b->n; i++) {
		if (topo_cluster_add_host(b->c, b->names[i]) < 0) { /* hosts added stay, without hardware */
			errno = ENOMEM;
			rm_error_set(err, source, 0, 0, "out of memory");
			return batch_abort(b);
		}
	}
	for (i = 0; i < b->n; i++) {
		h = topo_host_find(b->c, b->names[i]);
		old = b->c->hosts[h].type;
		b->c->hosts[h].type = b->types[i];
		if (old && --old->nhosts == 0)
			emptied++;
		if (b->guids[i] || b->c->hosts[h].guids) {
			topo_cluster_free_owned(b->c, b->c->hosts[h].guids);
			b->c->hosts[h].guids = b->guids[i];
			b->guids[i] = NULL;
			b->c->guid_gen++;
		}
	}
	if (emptied)
		topo_cluster_drop_types(b->c, 0);
	b->c->finalized = 0;
	batch_free(b);
	return 0;
}

/* ---- public loaders --------------------------------------------------------------------------- */

/* File name without directory and without suffix (".xml" or ".diff.xml"); caller frees. */
static char *host_of_path(const char *path, const char *suffix)
{
	const char *base = strrchr(path, '/');
	size_t n, sl = strlen(suffix);

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n > sl && !strcmp(base + n - sl, suffix))
		n -= sl;
	return strndup(base, n);
}

static int load_buf(struct batch *b, const char *host, const char *buf, size_t len, const char *source, rm_error_t *err)
{
	struct topo_nodetype *t = topo_hwloc_type_from_xml(b->c, buf, len, source, err);

	return t ? batch_add(b, host, t, topo_guids_from_xml(buf, len), source, err) : -1;
}

int topo_load_hwloc_xmlbuf(topo_cluster_t c, const char *host, const char *buf, size_t len, const char *source,
			   rm_error_t *err)
{
	struct batch b;
	char *name = host ? strdup(host) : xml_hostname(buf, len);
	int r;

	source = source ? source : "hwloc XML buffer";
	if (!name) {
		errno = EINVAL;
		return rm_error_set(err, source, 0, 0, "no host name given and no HostName info in the XML");
	}
	if (batch_init(&b, c, 1) < 0) {
		free(name);
		errno = ENOMEM;
		return rm_error_set(err, source, 0, 0, "out of memory");
	}
	r = load_buf(&b, name, buf, len, source, err);
	free(name);
	if (!c->keep_parser)
		topo_parse_end(c);
	return r < 0 ? batch_abort(&b) : batch_commit(&b, source, err);
}

int topo_load_hwloc_xml(topo_cluster_t c, const char *path, const char *host, rm_error_t *err)
{
	size_t len;
	char *buf = read_file(path, &len, err), *name = NULL;
	int r;

	if (!buf)
		return -1;
	if (!host)
		host = name = xml_hostname(buf, len);
	if (!host)
		host = name = host_of_path(path, ".xml");
	r = host ? topo_load_hwloc_xmlbuf(c, host, buf, len, path, err)
		 : rm_error_set(err, path, 0, 0, "out of memory");
	free(name);
	free(buf);
	return r;
}

/* ---- directories ----------------------------------------------------------------------------- */

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n > m && !strcmp(s + n - m, suf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Checks every entry before any is parsed: each must be a regular file within the hwloc cap (a FIFO
 * named *.xml must not block the load, nor be found only after thousands of parses). Returns 0 or -1. */
static int check_entries(const char *dir, char *const *v, size_t n, rm_error_t *err)
{
	size_t i, dl = strlen(dir);
	int fd;

	for (i = 0; i < n; i++) {
		char *path = malloc(dl + strlen(v[i]) + 2);

		if (!path) {
			errno = ENOMEM;
			return rm_error_set(err, dir, 0, 0, "out of memory");
		}
		sprintf(path, "%s/%s", dir, v[i]);
		fd = rm_file_open(path, RM_FILE_HWLOC, NULL, err);
		free(path);
		if (fd < 0)
			return -1;
		close(fd);
	}
	return 0;
}

/* Sorted names of the *.xml files of dir (NULL-terminated, count in *n); in strict mode each is checked
 * first (check_entries), else each is checked when it is read and a bad one costs its host only. */
static char **list_xml(const char *dir, size_t *n, int strict, rm_error_t *err)
{
	DIR *d;
	struct dirent *e;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (rm_dir_check(dir, err) < 0)
		return NULL;
	if (!(d = opendir(dir)))
		return rm_error_set(err, dir, 0, 0, "cannot open directory: %s", strerror(errno)), NULL;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !has_suffix(e->d_name, ".xml"))
			continue;
		if (*n + 2 > cap) {
			char **nv = realloc(v, (cap = cap ? cap * 2 : 256) * sizeof(*nv));

			if (!nv)
				break;
			v = nv;
		}
		if (!(v[*n] = strdup(e->d_name)))
			break;
		v[++*n] = NULL;
	}
	closedir(d);
	if (e) { /* stopped early: out of memory */
		while (*n)
			free(v[--*n]);
		free(v);
		errno = ENOMEM;
		return rm_error_set(err, dir, 0, 0, "out of memory"), NULL;
	}
	if (*n == 0) {
		free(v);
		errno = ENOENT;
		return rm_error_set(err, dir, 0, 0, "empty directory: no hwloc *.xml files"), NULL;
	}
	qsort(v, *n, sizeof(*v), cmp_str);
	if (strict && check_entries(dir, v, *n, err) < 0) {
		int e = errno;

		while (*n)
			free(v[--*n]);
		free(v);
		errno = e;
		return NULL;
	}
	return v;
}

/* Stages the host of one file (diffs through ds). On failure err says why and *kind which anomaly it
 * is: bad_host_file, or bad_reference for a diff whose reference cannot be loaded. */
static int load_dir_entry(struct batch *b, struct topo_diffset *ds, const char *path, const char *host,
			  const char **kind, rm_error_t *err)
{
	struct topo_nodetype *t = NULL;
	struct topo_guids *g = NULL;
	char *buf = NULL;
	int ref_bad = 0;
	size_t len;

	*kind = "bad_host_file";
	if (has_suffix(path, ".diff.xml")) {
		t = topo_diffset_host(ds, path, host, &g, &ref_bad, err);
		if (ref_bad)
			*kind = "bad_reference";
	} else if ((buf = read_file(path, &len, err)) && (t = topo_hwloc_type_from_xml(b->c, buf, len, path, err))) {
		g = topo_guids_from_xml(buf, len);
	}
	free(buf);
	return t ? batch_add(b, host, t, g, path, err) : -1;
}

/* Copies a host's error into err unless it holds one already (the first error wins). */
static void first_error(rm_error_t *err, const rm_error_t *e)
{
	if (err && !rm_error_isset(err) && rm_error_isset(e))
		*err = *e;
}

/* Loads every file of the directory into b: in strict mode stops at the first bad host (-1); else
 * each bad host becomes an anomaly and the first host error is kept in *first. */
static int load_dir_files(struct batch *b, const char *dir, char *const *files, size_t n, rm_error_t *first,
			  rm_error_t *err)
{
	struct topo_diffset *ds = topo_diffset_create(b->c);
	size_t i, dl = strlen(dir);
	int r = ds ? 0 : rm_error_set(err, dir, 0, 0, "out of memory");

	for (i = 0; i < n && r == 0; i++) {
		char *path = malloc(dl + strlen(files[i]) + 2), *host;
		const char *kind;
		rm_error_t e = { 0 };

		if (!path)
			r = rm_error_set(err, dir, 0, 0, "out of memory");
		else
			sprintf(path, "%s/%s", dir, files[i]);
		host = path ? host_of_path(files[i], has_suffix(files[i], ".diff.xml") ? ".diff.xml" : ".xml") : NULL;
		if (path && !host)
			r = rm_error_set(err, path, 0, 0, "out of memory");
		else if (host && load_dir_entry(b, ds, path, host, &kind, b->c->strict ? err : &e) < 0) {
			if (b->c->strict)
				r = -1;
			else if (topo_cluster_add_anomaly(b->c, kind, host, &e) < 0)
				r = rm_error_set(err, path, 0, 0, "out of memory");
			first_error(first, &e);
		}
		free(host);
		free(path);
	}
	topo_diffset_destroy(ds);
	return r;
}

int topo_load_hwloc_dir(topo_cluster_t c, const char *dir, rm_error_t *err)
{
	struct batch b;
	size_t n, i, anomalies_before = c->nanomalies, ntypes_before = c->ntypes;
	char **files = list_xml(dir, &n, c->strict, err);
	rm_error_t first = { 0 };
	int r = 0;

	if (!files)
		return -1;
	if (batch_init(&b, c, n) < 0) {
		r = rm_error_set(err, dir, 0, 0, "out of memory");
	} else {
		r = load_dir_files(&b, dir, files, n, &first, err);
		if (r == 0 && b.n == 0) { /* nothing usable: the first host's error is the directory's */
			first_error(err, &first);
			errno = EINVAL;
			r = -1;
		}
		r = r < 0 ? batch_abort(&b) : batch_commit(&b, dir, err);
	}
	topo_parse_end(c);
	if (r < 0)
		topo_anomalies_truncate(c, anomalies_before);
	else
		topo_cluster_drop_types(c, ntypes_before); /* references whose diffs all failed */
	for (i = 0; i < n; i++)
		free(files[i]);
	free(files);
	return r;
}

/* ---- synthetic, live, spec -------------------------------------------------------------------- */

/* Registers the hosts names[0..n-1] with the hardware topo (taken), typed by key: all or none. */
static int load_hosts(struct topo_cluster *c, char *const *names, size_t n, hwloc_topology_t topo, const char *key,
		      const char *source, rm_error_t *err)
{
	struct batch b;
	struct topo_nodetype *t;
	size_t i;

	if (batch_init(&b, c, n) < 0) {
		hwloc_topology_destroy(topo);
		errno = ENOMEM;
		return rm_error_set(err, source, 0, 0, "out of memory");
	}
	if (!(t = type_from_key(c, topo, key, source, err)))
		return batch_abort(&b);
	for (i = 0; i < n; i++)
		if (batch_add(&b, names[i], t, NULL, source, err) < 0)
			return batch_abort(&b);
	if (n == 0) { /* keep the batch from leaving an unused type */
		errno = EINVAL;
		rm_error_set(err, source, 0, 0, "no host name");
		return batch_abort(&b);
	}
	return batch_commit(&b, source, err);
}

static int load_synthetic_hosts(struct topo_cluster *c, char *const *names, size_t n, const char *desc, rm_error_t *err)
{
	hwloc_topology_t topo;
	char *key;
	int r;

	errno = EINVAL;
	if (!desc)
		return rm_error_set(err, "synthetic", 0, 0, "a description is required");
	if (hwloc_topology_init(&topo) < 0)
		return rm_error_set(err, "synthetic", 0, 0, "hwloc_topology_init failed");
	if (hwloc_topology_set_synthetic(topo, desc) < 0 || hwloc_topology_load(topo) < 0) {
		hwloc_topology_destroy(topo);
		errno = EINVAL;
		return rm_error_set(err, "synthetic", 0, 0, "invalid hwloc synthetic description '%s'", desc);
	}
	if (!(key = malloc(strlen(desc) + 11))) {
		hwloc_topology_destroy(topo);
		return rm_error_set(err, "synthetic", 0, 0, "out of memory");
	}
	sprintf(key, "synthetic:%s", desc);
	r = load_hosts(c, names, n, topo, key, "synthetic", err);
	free(key);
	return r;
}

int topo_load_hwloc_synthetic(topo_cluster_t c, const char *host, const char *desc, rm_error_t *err)
{
	char *names[1] = { (char *)host };

	if (!host || !host[0]) {
		errno = EINVAL;
		return rm_error_set(err, "synthetic", 0, 0, "a host name is required");
	}
	return load_synthetic_hosts(c, names, 1, desc, err);
}

int topo_load_hwloc_live(topo_cluster_t c, const char *host, rm_error_t *err)
{
	hwloc_topology_t topo;
	char name[256], *names[1];

	if (!host) {
		if (gethostname(name, sizeof(name)) < 0)
			return rm_error_set(err, "live", 0, 0, "gethostname: %s", strerror(errno));
		name[sizeof(name) - 1] = '\0';
		host = name;
	}
	if (hwloc_topology_init(&topo) < 0)
		return rm_error_set(err, "live", 0, 0, "hwloc_topology_init failed");
	if (hwloc_topology_load(topo) < 0) {
		hwloc_topology_destroy(topo);
		errno = EIO;
		return rm_error_set(err, "live", 0, 0, "hwloc cannot read this machine's topology");
	}
	names[0] = (char *)host;
	return load_hosts(c, names, 1, topo, "live", "live", err);
}

/* "synthetic:<desc>[@hostlist]": one host per name of the Slurm-style host list (default "node0"),
 * all of the same type. */
static int load_synthetic_spec(struct topo_cluster *c, const char *spec, rm_error_t *err)
{
	char *copy = strdup(spec + 10), *at, **names;
	size_t n = 0;
	int r;

	if (!copy)
		return rm_error_set(err, spec, 0, 0, "out of memory");
	at = strrchr(copy, '@');
	if (at)
		*at++ = '\0';
	if (!at || !*at)
		at = "node0";
	if (!(names = hostlist_expand(at, &n, 0, err))) {
		free(copy);
		errno = EINVAL;
		return -1;
	}
	r = load_synthetic_hosts(c, names, n, copy, err);
	hostlist_free(names);
	free(copy);
	return r;
}

int topo_load_hwloc_spec(topo_cluster_t c, const char *spec, rm_error_t *err)
{
	struct stat st;

	if (!strcmp(spec, "live"))
		return topo_load_hwloc_live(c, NULL, err);
	if (!strncmp(spec, "synthetic:", 10))
		return load_synthetic_spec(c, spec, err);
	if (stat(spec, &st) < 0) {
		int e = errno;

		rm_error_set(err, spec, 0, 0, "cannot open: %s", strerror(e));
		errno = e;
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return topo_load_hwloc_dir(c, spec, err);
	return topo_load_hwloc_xml(c, spec, NULL, err);
}
