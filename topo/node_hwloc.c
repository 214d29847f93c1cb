/*
 * topo/node_hwloc.c: node hardware from hwloc (XML files and buffers, directories with *.diff.xml
 * topology diffs, synthetic descriptions, the live machine).
 *
 * Node types (node_type.c): hosts whose XML is identical once the <info .../> elements are left out
 * share one parsed hwloc tree, so a replicated node costs one read and one scan of its file.
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

/* ---- reading XML ------------------------------------------------------------ */

/* Reads an XML file whole: a regular file within the hwloc cap (rm_file), never a FIFO or a device. */
static char *read_file(const char *path, size_t *len, rm_error_t *err)
{
	return rm_file_read(path, RM_FILE_HWLOC, len, err);
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

/* ---- node types of other sources -------------------------------------------------------------- */

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
	return topo_nodetype_intern(c, topo, norm, strlen(norm), source, err);
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

	return t ? batch_add(b, host, t, topo_guids_from_xml(buf, len, t->gpu && t->gpu->ngpus), source, err) : -1;
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
		g = topo_guids_from_xml(buf, len, t->gpu && t->gpu->ngpus);
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
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT); /* GPUs and NICs */
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
