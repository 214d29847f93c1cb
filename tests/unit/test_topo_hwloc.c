/*
 * tests/unit/test_topo_hwloc.c: node hardware from hwloc: XML files, directories with topology diffs
 * (made here with the real hwloc-diff and hwloc-compress-dir tools), synthetic, live; node type
 * sharing; bad input (truncated, garbage, empty directory, missing diff reference, duplicate host).
 * Expected values come from an independent hwloc parse of the same files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_private.h"
#include "tests/harness.h"

static char tmp[256];
static char plafrim[512];

static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* Counts objects of a type and the machine's memory with a fresh hwloc parse of path. */
static int ref_counts(const char *path, unsigned *pus, unsigned *cores, unsigned long long *mem)
{
	hwloc_topology_t t;

	if (hwloc_topology_init(&t) < 0)
		return -1;
	if (hwloc_topology_set_xml(t, path) < 0 || hwloc_topology_load(t) < 0) {
		hwloc_topology_destroy(t);
		return -1;
	}
	*pus = (unsigned)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
	*cores = (unsigned)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
	*mem = hwloc_get_root_obj(t)->total_memory;
	hwloc_topology_destroy(t);
	return 0;
}

static unsigned long long host_mem(topo_cluster_t c, const char *name)
{
	long h = topo_host_find(c, name);

	return h < 0 || !topo_host_hwloc(c, h) ? 0 : hwloc_get_root_obj(topo_host_hwloc(c, h))->total_memory;
}

static void test_file(void)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err;
	char path[600];
	unsigned pus, cores;
	unsigned long long mem;
	long h;

	rm_error_clear(&err);
	snprintf(path, sizeof(path), "%s/fourmi001.xml", plafrim);
	check(topo_load_hwloc_xml(c, path, NULL, &err) == 0, "load %s: %s", path, err.text);
	h = topo_host_find(c, "fourmi001");
	check(h == 0, "host named from HostName info");
	check(ref_counts(path, &pus, &cores, &mem) == 0, "reference parse");
	check(topo_host_npus(c, 0) == pus && topo_host_ncores(c, 0) == cores, "counts %u/%u vs %u/%u",
	      topo_host_npus(c, 0), topo_host_ncores(c, 0), pus, cores);
	check(pus > 0 && cores > 0, "non-empty node");
	/* the same file again: duplicate host, cluster unchanged */
	check(topo_load_hwloc_xml(c, path, NULL, &err) < 0 && errno == EEXIST, "duplicate host refused");
	check(strstr(err.source, "fourmi001.xml") && strstr(err.text, "duplicate"), "names file: %s: %s", err.source,
	      err.text);
	check(topo_nhosts(c) == 1 && c->ntypes == 1, "unchanged after duplicate");
	/* explicit name: shares the type */
	check(topo_load_hwloc_xml(c, path, "other", NULL) == 0, "explicit host name");
	check(topo_host_hwloc(c, 1) == topo_host_hwloc(c, 0) && c->ntypes == 1, "identical content shared");
	check(topo_host_find(c, "nosuch") == -1 && errno == ENOENT, "unknown host");
	topo_cluster_destroy(c);
}

static void test_dir(void)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err;
	char path[600];
	size_t i, checked = 0;
	unsigned pus, cores;
	unsigned long long mem;

	rm_error_clear(&err);
	check(topo_load_hwloc_dir(c, plafrim, &err) == 0, "load dir: %s", err.text);
	check(topo_nhosts(c) == 122, "122 hosts, got %zu", topo_nhosts(c));
	check(c->ntypes < 122 && c->ntypes >= 4, "node types shared: %zu", c->ntypes);
	for (i = 0; i < topo_nhosts(c); i += 7, checked++) {
		snprintf(path, sizeof(path), "%s/%s.xml", plafrim, topo_host_name(c, i));
		if (ref_counts(path, &pus, &cores, &mem) < 0) {
			fail("reference parse of %s", path);
			continue;
		}
		check(topo_host_npus(c, i) == pus && topo_host_ncores(c, i) == cores &&
			      host_mem(c, topo_host_name(c, i)) == mem,
		      "host %s matches an independent parse", topo_host_name(c, i));
	}
	check(checked > 10, "sampled hosts");
	check(topo_host_hwloc(c, topo_host_find(c, "bonobo001")) == topo_host_hwloc(c, topo_host_find(c, "bonobo002")),
	      "bonobo001/002 differ only in infos: shared");
	check(topo_host_hwloc(c, topo_host_find(c, "bonobo001")) != topo_host_hwloc(c, topo_host_find(c, "fourmi001")),
	      "different hardware: not shared");
	/* loading the directory again: every host is a duplicate, nothing changes */
	check(topo_load_hwloc_dir(c, plafrim, &err) < 0 && strstr(err.text, "duplicate"), "dir twice refused");
	check(topo_nhosts(c) == 122, "unchanged");
	topo_cluster_destroy(c);
}

/* hwloc-compress-dir turns most files into diffs against another file: same hardware expected. */
static void test_compressed_dir(void)
{
	topo_cluster_t a = topo_cluster_create(), b = topo_cluster_create();
	char dir[400], src[400];
	rm_error_t err;
	size_t i, ndiff = 0, bad = 0;

	rm_error_clear(&err);
	/* a subset keeps it quick (hwloc-compress-dir tries every pair) */
	snprintf(src, sizeof(src), "%s/subset", tmp);
	snprintf(dir, sizeof(dir), "%s/compressed", tmp);
	sh("mkdir -p %s && cp %s/bonobo00*.xml %s/devel*.xml %s/mirage00[1-4].xml %s/", src, plafrim, plafrim, plafrim,
	   src);
	if (sh("mkdir -p %s && hwloc-compress-dir %s %s >/dev/null 2>&1", dir, src, dir) != 0) {
		fail("hwloc-compress-dir failed");
		goto out;
	}
	ndiff = (size_t)sh("test $(ls %s/*.diff.xml | wc -l) -gt 10", dir) == 0;
	check(ndiff, "hwloc-compress-dir made diffs");
	check(sh("grep -q 'obj_attr_type=\"0\"' %s/*.diff.xml", dir) == 0, "some diffs change memory sizes too");
	check(topo_load_hwloc_dir(a, src, NULL) == 0, "plain dir");
	check(topo_load_hwloc_dir(b, dir, &err) == 0, "compressed dir: %s: %s", err.source, err.text);
	check(topo_nhosts(a) == topo_nhosts(b), "same hosts %zu/%zu", topo_nhosts(a), topo_nhosts(b));
	for (i = 0; i < topo_nhosts(a); i++) {
		const char *n = topo_host_name(a, i);
		long j = topo_host_find(b, n);

		if (j < 0 || topo_host_npus(a, i) != topo_host_npus(b, j) ||
		    topo_host_ncores(a, i) != topo_host_ncores(b, j) || host_mem(a, n) != host_mem(b, n))
			bad++;
	}
	check(bad == 0, "%zu hosts differ after diffs", bad);
	check(b->ntypes <= a->ntypes + 5, "diffed hosts share types too (%zu vs %zu)", b->ntypes, a->ntypes);
out:
	topo_cluster_destroy(a);
	topo_cluster_destroy(b);
}

/* A diff that changes memory (not only infos): the result is the modified XML's hardware. */
static void test_diff(void)
{
	topo_cluster_t c = topo_cluster_create();
	char dir[400], mod[400];
	rm_error_t err;
	unsigned pus, cores;
	unsigned long long mem, refmem;

	rm_error_clear(&err);
	snprintf(dir, sizeof(dir), "%s/diff", tmp);
	snprintf(mod, sizeof(mod), "%s/modified.xml", tmp);
	sh("mkdir -p %s && cp %s/bonobo001.xml %s/", dir, plafrim, dir);
	sh("sed 's/local_memory=\"33738452992\"/local_memory=\"67476905984\"/; "
	   "s/\"HostName\" value=\"bonobo001\"/\"HostName\" value=\"newhost\"/' %s/bonobo001.xml > %s",
	   dir, mod);
	check(sh("hwloc-diff --refname bonobo001.xml %s/bonobo001.xml %s %s/newhost.diff.xml >/dev/null 2>&1", dir, mod,
		 dir) == 0,
	      "hwloc-diff");
	check(ref_counts(mod, &pus, &cores, &mem) == 0, "reference parse of the modified XML");
	check(topo_load_hwloc_dir(c, dir, &err) == 0, "dir with diff: %s", err.text);
	check(topo_nhosts(c) == 2, "reference host and diffed host");
	refmem = host_mem(c, "bonobo001");
	check(host_mem(c, "newhost") == mem && mem != refmem, "diffed memory %llu == %llu (ref %llu)",
	      host_mem(c, "newhost"), mem, refmem);
	check(topo_host_npus(c, topo_host_find(c, "newhost")) == pus, "diffed PUs");
	check(c->ntypes == 2, "diffed hardware is its own type");
	topo_cluster_destroy(c);

	/* the reference is missing: error names the diff, cluster unchanged */
	c = topo_cluster_create();
	rm_error_clear(&err);
	sh("rm %s/bonobo001.xml", dir);
	check(topo_load_hwloc_dir(c, dir, &err) < 0, "missing reference refused");
	check(strstr(err.source, "newhost.diff.xml") && strstr(err.text, "bonobo001.xml") &&
		      strstr(err.text, "missing"),
	      "message: %s: %s", err.source, err.text);
	check(topo_nhosts(c) == 0 && c->ntypes == 0, "cluster unchanged");
	topo_cluster_destroy(c);
}

/* Strict: the directory is refused, the error names file and says text, the cluster is unchanged.
 * Per-host isolation (the default): with ngood good hosts beside the bad one they load and the bad one
 * is one anomaly naming its file (reason says text); with none the directory is refused the same way. */
static void expect_bad(const char *what, const char *dir, const char *file, const char *text, size_t ngood)
{
	int strict;

	for (strict = 1; strict >= 0; strict--) {
		topo_cluster_t c = topo_cluster_create();
		const topo_anomaly_t *a;
		rm_error_t err;
		size_t nh, nt;

		rm_error_clear(&err);
		topo_cluster_set_strict(c, strict);
		topo_load_hwloc_synthetic(c, "pre", "pack:1 core:2 pu:1", NULL);
		nh = topo_nhosts(c);
		nt = c->ntypes;
		if (strict || !ngood) {
			check(topo_load_hwloc_dir(c, dir, &err) < 0, "%s (strict %d): refused", what, strict);
			check(!file || strstr(err.source, file), "%s: names %s: got '%s'", what, file, err.source);
			check(strstr(err.text, text) != NULL, "%s: says '%s': got '%s'", what, text, err.text);
			check(topo_nhosts(c) == nh && c->ntypes == nt, "%s: cluster unchanged", what);
			check(topo_cluster_nanomalies(c) == 0, "%s: no anomaly left behind", what);
		} else {
			check(topo_load_hwloc_dir(c, dir, &err) == 0, "%s (isolated): loads: %s", what, err.text);
			check(topo_nhosts(c) == nh + ngood, "%s (isolated): %zu good hosts loaded (%zu)", what, ngood,
			      topo_nhosts(c) - nh);
			a = topo_cluster_anomaly(c, 0);
			check(topo_cluster_nanomalies(c) == 1 && a && strstr(a->file, file) &&
				      strstr(a->reason, text) && a->host[0],
			      "%s (isolated): one anomaly naming %s: %s %s: %s", what, file, a ? a->kind : "-",
			      a ? a->file : "-", a ? a->reason : "-");
		}
		check(topo_host_npus(c, 0) == 2, "%s: earlier host intact", what);
		topo_cluster_destroy(c);
	}
}

static void test_bad(void)
{
	char d[400];
	topo_cluster_t c;
	rm_error_t err;

	snprintf(d, sizeof(d), "%s/trunc", tmp);
	sh("mkdir -p %s && cp %s/bonobo001.xml %s/bonobo002.xml %s/ && head -c 5000 %s/fourmi001.xml > "
	   "%s/fourmi001.xml",
	   d, plafrim, plafrim, d, plafrim, d);
	expect_bad("truncated", d, "fourmi001.xml", "truncated", 2);
	snprintf(d, sizeof(d), "%s/garbage", tmp);
	sh("mkdir -p %s && cp %s/bonobo001.xml %s/ && head -c 3000 /bin/sh > %s/zz.xml", d, plafrim, d, d);
	expect_bad("garbage", d, "zz.xml", "not an hwloc XML", 1);
	snprintf(d, sizeof(d), "%s/emptyfile", tmp);
	sh("mkdir -p %s && : > %s/a.xml", d, d);
	expect_bad("empty file", d, "a.xml", "empty", 0);
	snprintf(d, sizeof(d), "%s/empty", tmp);
	sh("mkdir -p %s && touch %s/README", d, d);
	expect_bad("empty directory", d, "empty", "empty directory", 0);
	snprintf(d, sizeof(d), "%s/nosuchdir", tmp);
	expect_bad("missing directory", d, "nosuchdir", "cannot open", 0);
	snprintf(d, sizeof(d), "%s/baddiff", tmp);
	sh("mkdir -p %s && cp %s/bonobo001.xml %s/ && echo '<topologydiff refname=' > %s/x.diff.xml", d, plafrim, d, d);
	expect_bad("garbage diff", d, "x.diff.xml", "diff", 1);
	snprintf(d, sizeof(d), "%s/dupdiff", tmp);
	sh("mkdir -p %s && cp %s/bonobo001.xml %s/ && cp %s/diff/newhost.diff.xml %s/bonobo001.diff.xml", d, plafrim, d,
	   tmp, d);
	expect_bad("host as XML and diff", d, "bonobo001", "duplicate", 1);

	c = topo_cluster_create();
	rm_error_clear(&err);
	check(topo_load_hwloc_xmlbuf(c, NULL, "<topology>", 10, "request", &err) < 0 && !strcmp(err.source, "request"),
	      "buffer without host name refused: %s", err.text);
	rm_error_clear(&err);
	check(topo_load_hwloc_xmlbuf(c, "h", "<topology>", 10, "request", &err) < 0 && strstr(err.text, "truncated"),
	      "truncated buffer: %s", err.text);
	rm_error_clear(&err);
	check(topo_load_hwloc_synthetic(c, "h", "pack:2 bogus:3", &err) < 0 && strstr(err.text, "synthetic"),
	      "bad synthetic: %s", err.text);
	rm_error_clear(&err);
	check(topo_load_hwloc_spec(c, "synthetic:core:1 pu:1@n[1-", &err) < 0 && rm_error_isset(&err),
	      "bad host list refused: %s", err.text);
	rm_error_clear(&err);
	check(topo_load_hwloc_spec(c, "/nonexistent/x.xml", &err) < 0 && strstr(err.source, "/nonexistent"),
	      "missing file named");
	check(topo_nhosts(c) == 0 && c->ntypes == 0, "nothing added by failed loads");
	topo_cluster_destroy(c);
}

static void test_synthetic_live(void)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err;
	char name[256];
	long h;
	unsigned n;

	rm_error_clear(&err);
	check(topo_load_hwloc_synthetic(c, "s1", "pack:2 core:4 pu:2", &err) == 0, "synthetic: %s", err.text);
	check(topo_host_npus(c, 0) == 16 && topo_host_ncores(c, 0) == 8, "2x4x2");
	check(topo_load_hwloc_spec(c, "synthetic:pack:2 core:4 pu:2@s[2-3]", &err) == 0, "spec: %s", err.text);
	check(topo_host_find(c, "s2") == 1 && topo_host_find(c, "s3") == 2, "host list expanded");
	check(topo_nhosts(c) == 3 && c->ntypes == 1, "same description shares the type");
	check(topo_load_hwloc_spec(c, "synthetic:pack:1 core:2@s4,s1", &err) < 0 && topo_nhosts(c) == 3,
	      "spec with a duplicate adds nothing");
	rm_error_clear(&err);
#if defined(__SANITIZE_ADDRESS__)
	/* Debian 12's hwloc 2.9 loses about 1 KB in every live load that keeps I/O devices: its hwloc_pci
	 * plugin leaves libpciaccess state that is unreachable once hwloc unloads the plugin at exit (a
	 * five-line program that loads and destroys such a topology shows the same 1016 bytes; with
	 * libpciaccess preloaded, none). Under LeakSanitizer the live load skips that plugin: hwloc's Linux
	 * backend still reads the PCI devices from sysfs. (HWLOC_COMPONENTS is not set suite-wide: it would
	 * make hwloc ignore HWLOC_XMLFILE, which the GPU tests give slurmd.) */
	setenv("HWLOC_COMPONENTS", "-pci", 1);
#endif
	check(topo_load_hwloc_live(c, NULL, &err) == 0, "live: %s", err.text);
	gethostname(name, sizeof(name));
	h = topo_host_find(c, name);
	check(h >= 0, "live host named by gethostname");
	n = topo_host_npus(c, (size_t)h);
	check(n >= 1 && n <= (unsigned)sysconf(_SC_NPROCESSORS_CONF), "live PUs %u", n);
	check(topo_host_ncores(c, (size_t)h) >= 1 && topo_host_ncores(c, (size_t)h) <= n, "live cores");
	check(topo_load_hwloc_spec(c, "live", &err) < 0 && errno == EEXIST, "live twice is a duplicate");
	topo_cluster_destroy(c);
}

/* topo_host_pu_by_os (a table per node type, or hwloc's scan where OS indices are too sparse) gives what
 * hwloc's own lookup gives, for every OS index up to past the largest: interleaved SMT numbering, the
 * recorded nodes of the example cluster (PlaFRIM), and a sparse synthetic node. */
static void test_pu_by_os(void)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err;
	char dir[600];
	size_t h;
	int bad = 0, hosts = 0;

	rm_error_clear(&err);
	snprintf(dir, sizeof(dir), "%s", plafrim);
	check(topo_load_hwloc_dir(c, dir, &err) == 0, "example hosts: %s", err.text);
	check(topo_load_hwloc_synthetic(c, "smt", "pack:2 core:2 pu:2(indexes=0,4,1,5,2,6,3,7)", &err) == 0 &&
		      topo_load_hwloc_synthetic(c, "sparse", "pack:1 core:2 pu:2(indexes=0,1000,5,7)", &err) == 0,
	      "synthetic hosts: %s", err.text);
	/* index 4294967295 is hwloc's "unknown": that PU has no OS index (its table slot was written 16 GiB
	 * past the table: a crash at load) */
	check(topo_load_hwloc_synthetic(c, "unknown", "pack:1 core:2 pu:2(indexes=0,1,2,4294967295)", &err) == 0,
	      "a PU of unknown OS index loads: %s", err.text);
	for (h = 0; h < topo_nhosts(c); h++) {
		hwloc_topology_t t = topo_host_hwloc(c, h);
		hwloc_obj_t last = t ? hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, topo_host_npus(c, h) - 1) : NULL;
		unsigned long os, end = 0;

		for (hwloc_obj_t pu = NULL; t && (pu = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, pu));)
			end = pu->os_index + 1 > end ? pu->os_index + 1 : end;
		if (!t || !last)
			continue;
		hosts++;
		for (os = 0; os <= end + 1; os++) {
			hwloc_obj_t o = hwloc_get_pu_obj_by_os_index(t, (unsigned)os);

			bad += topo_host_pu_by_os(c, h, os) != (o ? (long)o->logical_index : -1);
		}
		bad += topo_host_pu_by_os(c, h, 1UL << 40) != -1;
	}
	check(hosts >= 3 && bad == 0, "PU by OS index as hwloc finds it on %d hosts (%d differ)", hosts, bad);
	check(topo_host_pu_by_os(c, (size_t)topo_host_find(c, "smt"), 4) == 1, "interleaved SMT: OS 4 is PU 1");
	check(topo_host_pu_by_os(c, (size_t)topo_host_find(c, "sparse"), 1000) == 1 &&
		      topo_host_pu_by_os(c, (size_t)topo_host_find(c, "sparse"), 999) == -1,
	      "sparse OS indices: found, and holes refused");
	check(topo_host_pu_by_os(c, (size_t)topo_host_find(c, "unknown"), 2) == 2 &&
		      topo_host_pu_by_os(c, (size_t)topo_host_find(c, "unknown"), 3) == -1 &&
		      topo_host_pu_by_os(c, (size_t)topo_host_find(c, "unknown"), 4294967295UL) == -1,
	      "a PU of unknown OS index: the others found, it is by no OS index");
	check(topo_host_pu_by_os(c, topo_nhosts(c) + 5, 0) == -1, "unknown host: -1");
	topo_cluster_destroy(c);
}

int main(void)
{
	snprintf(plafrim, sizeof(plafrim), "%s/plafrim/hwloc", harness_data_dir());
	snprintf(tmp, sizeof(tmp), "/tmp/rankmap-hwloc.XXXXXX");
	if (!mkdtemp(tmp)) {
		fail("mkdtemp");
		return harness_done();
	}
	test_file();
	test_dir();
	test_compressed_dir();
	test_diff();
	test_bad();
	test_synthetic_live();
	test_pu_by_os();
	sh("rm -rf %s", tmp);
	return harness_done();
}
