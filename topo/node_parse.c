/*
 * topo/node_parse.c: hwloc's parsers run on host files in a child process, never in the caller's.
 *
 * An hwloc XML topology or topology diff comes from a host (a registration, a file of a directory): a
 * file that crashes or hangs hwloc's parser (hwloc 2.9's libxml backend dies on <!DOCTYPE topology []>)
 * must cost that host, not the daemon or the command that loads it. The bytes go to a child (common's
 * rm_child_srv: one fork serves a whole load, one request per new hardware), which parses them as the
 * caller would and sends back hwloc's own export of the result; the caller only ever parses that export.
 * When the child dies on an input, that input fails with the reason, and the next one starts a new child.
 * Inputs whose normalised form is a known node type never reach a parser (node_hwloc.c), so a load of
 * 10,000 copies of one machine costs one fork. A threaded program (rankmapd) has its parser children
 * exec'd instead of forked (topo_parse_program: rankmapd runs itself with --hwloc-parser-child).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_private.h"
#include "rm_child.h"

#define PARSE_WALL_MS 30000.0             /* one input: hwloc parses megabytes in well under a second */
#define PARSE_MEM ((size_t)2 << 30)       /* address space the child may add to its parent's */
#define PARSE_MAX_OUT ((size_t)256 << 20) /* an export larger than this is refused */
/* the highest PU or NUMA node index a topology may hold (Linux's NR_CPUS is at most 8,192 on x86-64) */
#define PARSE_MAX_INDEX 65535

/* The caller's bytes, NUL-terminated (hwloc wants the size including the NUL). */
static char *zcopy(const char *buf, size_t len)
{
	char *z = len < (size_t)0x7fffffff ? malloc(len + 1) : NULL;

	if (z) {
		memcpy(z, buf, len);
		z[len] = '\0';
	}
	return z;
}

/* A malloc'd copy of an export of xlen bytes (NUL included), without its NUL. */
static void *export_copy(const char *xml, int xlen, size_t *len)
{
	char *out = xlen > 0 ? malloc((size_t)xlen) : NULL;

	if (out) {
		*len = (size_t)xlen - 1;
		memcpy(out, xml, *len);
		out[*len] = '\0';
	}
	return out;
}

static void *child_diff(const char *buf, size_t len, size_t *out_len, rm_error_t *err)
{
	hwloc_topology_diff_t diff = NULL;
	char *z = zcopy(buf, len), *ref = NULL, *xml = NULL;
	hwloc_topology_t keep = NULL;
	void *out = NULL;
	int xlen = 0;

	/* a topology keeps hwloc's XML components loaded until the export is freed */
	if (hwloc_topology_init(&keep) < 0)
		keep = NULL;
	if (z && keep && hwloc_topology_diff_load_xmlbuffer(z, (int)len + 1, &diff, &ref) == 0 &&
	    hwloc_topology_diff_export_xmlbuffer(diff, ref, &xml, &xlen) == 0)
		out = export_copy(xml, xlen, out_len);
	if (xml)
		hwloc_free_xmlbuffer(keep, xml);
	if (diff)
		hwloc_topology_diff_destroy(diff);
	if (keep)
		hwloc_topology_destroy(keep);
	free(ref);
	free(z);
	if (!out)
		rm_error_set(err, "", 0, 0, "hwloc cannot parse it");
	errno = out ? 0 : EINVAL;
	return out;
}

/* No index above PARSE_MAX_INDEX in set. An index no machine has (fuzz_hwloc_xml: a misspelt os_index
 * left hwloc a processor at bit 2^32-1 of the root's cpuset, beyond int, where hwloc_bitmap_last gives
 * -1) makes hwloc's export write every word of the bitmap: 17-30 s and hundreds of megabytes for one
 * 13 KB file. */
static int index_ok(hwloc_const_bitmap_t set)
{
	int last = set ? hwloc_bitmap_last(set) : -1;

	return !set || hwloc_bitmap_iszero(set) || (last >= 0 && last <= PARSE_MAX_INDEX);
}

/* Set in the child only (child_parse never runs in the caller's process). */
static hwloc_topology_t keep_loaded;

/* The child's work for one request: [kind][bytes] -> hwloc's export of what it parsed. */
static void *child_parse(void *arg, const void *req, size_t reqlen, size_t *out_len, rm_error_t *err)
{
	const char *r = req, *buf = r + 1;
	size_t len = reqlen - 1;
	hwloc_topology_t topo;
	char *xml = NULL;
	void *out = NULL;
	int xlen = 0;

	(void)arg;
	/* one topology kept for the child's life keeps hwloc's components (its XML plugins) loaded: else
	 * every request would load and unload them */
	if (!keep_loaded && hwloc_topology_init(&keep_loaded) < 0)
		keep_loaded = NULL;
	if (reqlen < 1) {
		errno = EINVAL;
		return rm_error_set(err, "", 0, 0, "empty request"), NULL;
	}
	if (r[0] == TOPO_PARSE_DIFF)
		return child_diff(buf, len, out_len, err);
	if (hwloc_topology_init(&topo) < 0) {
		errno = ENOMEM;
		return rm_error_set(err, "", 0, 0, "hwloc_topology_init failed"), NULL;
	}
	if (r[0] == TOPO_PARSE_ALL_TYPES)
		hwloc_topology_set_all_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (topo_hwloc_load_bytes(topo, buf, len) == 0) {
		hwloc_obj_t root = hwloc_get_root_obj(topo);

		if (!root || !index_ok(root->cpuset) || !index_ok(root->complete_cpuset) ||
		    !index_ok(root->complete_nodeset)) {
			hwloc_topology_destroy(topo);
			errno = EDOM; /* (not EINVAL: the caller shows this text, not its guess at hwloc's reason) */
			return rm_error_set(err, "", 0, 0, "a PU or NUMA node index above %d: no machine has one",
					    PARSE_MAX_INDEX),
			       NULL;
		}
		if (hwloc_topology_export_xmlbuffer(topo, &xml, &xlen, 0) == 0) {
			out = export_copy(xml, xlen, out_len);
			hwloc_free_xmlbuffer(topo, xml);
		}
	}
	hwloc_topology_destroy(topo);
	if (!out)
		rm_error_set(err, "", 0, 0, "hwloc cannot parse it");
	errno = out ? 0 : EINVAL;
	return out;
}

/* topo_parse_program: the program parser children are (NULL: forks) */
static char *parse_path;
static char **parse_argv;

/* Frees the program and arguments topo_parse_program kept (back to forking). */
static void parse_program_clear(void)
{
	for (size_t i = 0; parse_argv && parse_argv[i]; i++)
		free(parse_argv[i]);
	free(parse_argv);
	free(parse_path);
	parse_argv = NULL;
	parse_path = NULL;
}

int topo_parse_program(const char *path, char *const argv[])
{
	size_t n = 0;

	parse_program_clear();
	if (!path && !argv)
		return 0;
	while (argv && argv[n])
		n++;
	if (!path || !n) {
		errno = EINVAL;
		return -1;
	}
	if (!(parse_path = strdup(path)) || !(parse_argv = calloc(n + 1, sizeof(*parse_argv))))
		goto oom;
	for (size_t i = 0; i < n; i++)
		if (!(parse_argv[i] = strdup(argv[i])))
			goto oom;
	return 0;
oom: /* nothing kept: parser children stay forks */
	parse_program_clear();
	errno = ENOMEM;
	return -1;
}

static const rm_child_limits_t parse_limits = { .wall_ms = PARSE_WALL_MS,
						.mem_bytes = PARSE_MEM,
						.max_out = PARSE_MAX_OUT };

void topo_parse_serve(const char *parent)
{
	rm_child_srv_serve(parent, child_parse, NULL, &parse_limits);
}

char *topo_parse_guarded(struct topo_cluster *c, int kind, const char *buf, size_t len, const char *source,
			 size_t *out_len, rm_error_t *err)
{
	rm_error_t e = { 0 };
	char *req, *out;
	int saved;

	if (!c->parser && (!(c->parser = rm_child_srv_create("hwloc's parser", child_parse, NULL, &parse_limits)) ||
			   (parse_path && rm_child_srv_exec(c->parser, parse_path, parse_argv) < 0))) {
		rm_child_srv_destroy(c->parser);
		c->parser = NULL;
		errno = ENOMEM;
		return rm_error_set(err, source, 0, 0, "out of memory"), NULL;
	}
	if (!(req = malloc(len + 1))) {
		errno = ENOMEM;
		return rm_error_set(err, source, 0, 0, "out of memory"), NULL;
	}
	req[0] = (char)kind;
	memcpy(req + 1, buf, len);
	out = rm_child_srv_call(c->parser, req, len + 1, out_len, &e);
	saved = errno;
	free(req);
	if (out) { /* the answer comes without its NUL */
		char *z = realloc(out, *out_len + 1);

		if (z) {
			z[*out_len] = '\0';
			return z;
		}
		free(out);
		errno = ENOMEM;
		return rm_error_set(err, source, 0, 0, "out of memory"), NULL;
	}
	if (saved == EINVAL) /* hwloc refused the input: the caller explains why */
		rm_error_set(err, source, 0, 0, "hwloc cannot parse it");
	else if (saved == EDOM) /* hwloc parsed it, and child_parse refused it: its own reason */
		rm_error_set(err, source, 0, 0, "malformed hwloc XML topology (%s)", e.text);
	else /* crashed, hung, too large: named, and this input only */
		rm_error_set(err, source, 0, 0, "%s %s", e.source, e.text);
	errno = saved;
	return NULL;
}

void topo_parse_end(struct topo_cluster *c)
{
	if (c && c->parser) {
		rm_child_srv_destroy(c->parser);
		c->parser = NULL;
	}
}

/* ---- hwloc in this process: loading bytes, explaining a refusal ---------------------------------- */

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
	/* a format newer than this hwloc's (hwloc 3.0's XML in hwloc 2.9): the version named */
	{
		const char *v = memmem(buf, len < 4096 ? len : 4096, "<topology version=\"", 19);
		unsigned major = 0, minor = 0, api = hwloc_get_api_version();

		if (v && sscanf(v + 19, "%u.%u\"", &major, &minor) == 2 && major > 2)
			return rm_error_set(
				err, source, 0, 0,
				"hwloc XML version %u.%u (from a newer hwloc), which this hwloc (API %u.%u) "
				"cannot import",
				major, minor, api >> 16, (api >> 8) & 0xff);
	}
	return rm_error_set(err, source, 0, 0, "malformed hwloc XML topology (hwloc cannot parse it)");
}

/* Loads XML bytes into topo; hwloc is given a NUL-terminated copy, size including the NUL (as
 * hwloc_topology_export_xmlbuffer() produces), since callers' buffers need not be terminated.
 * Disallowed PUs are kept: XML gathered in a job's cpuset still describes the whole machine. Unless the
 * caller chose filters, I/O devices are kept as hwloc calls them important (GPUs, co-processors,
 * network and OpenFabrics devices, the PCI devices and bridges that lead to them): the GPU and NIC model
 * (node_gpu.c) reads them. A node whose XML has none costs nothing more. */
int topo_hwloc_load_bytes(hwloc_topology_t topo, const char *buf, size_t len)
{
	enum hwloc_type_filter_e f;
	char *z;
	int r;

	if (len >= (size_t)0x7fffffff || !(z = malloc(len + 1)))
		return -1;
	memcpy(z, buf, len);
	z[len] = '\0';
	r = hwloc_topology_set_flags(topo, hwloc_topology_get_flags(topo) | HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
	if (r == 0 && hwloc_topology_get_type_filter(topo, HWLOC_OBJ_PCI_DEVICE, &f) == 0 &&
	    f == HWLOC_TYPE_FILTER_KEEP_NONE)
		r = hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	if (r == 0)
		r = hwloc_topology_set_xmlbuffer(topo, z, (int)len + 1);
	if (r == 0)
		r = hwloc_topology_load(topo);
	free(z);
	return r;
}
