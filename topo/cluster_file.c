/*
 * topo/cluster_file.c: cluster description files (topo_load_cluster_file).
 *
 *   # PlaFRIM, hardware and fabric
 *   hwloc = hwloc/                  directory, XML file, synthetic:<desc>[@hosts] or live
 *   ib = ib/ib-subnet0.txt          ibnetdiscover output (topology file or -p report); repeatable
 *   ib_cache = fabric.cache         libibnetdisc cache file
 *   node_name_map = names.map
 *   torus = torus.conf
 *   strict = yes                    a bad host file fails the load (default no: it becomes an anomaly)
 *   ib = site.fabric                a site fabric file (topo/net_ib_site.c) is an ib source too
 *   rail = 0xe09d7303007a4bd8 3     the HCA with this node or port GUID is on rail 3 (repeatable; applied
 *                                   after every source, whatever its line; needs a fabric)
 *   nvlink_domain = nvl72a gb[001-018]
 *                                   a multi-node NVLink domain (a GB200 NVL72 rack, ...): NAME (letters,
 *                                   digits, '.', '_', '-'; unique) and the Slurm host list of its hosts
 *                                   (each in one domain at most); repeatable, in the order written; needs
 *                                   a fabric. slurm-topology --format block writes one block per domain.
 *                                   All the lines together name at most TOPO_NVLINK_MAX_NAMES hosts while
 *                                   the file is read, and at most max(100,000, twice the fabric's hosts)
 *                                   once the fabric is loaded (hosts outside the fabric are allowed, up to
 *                                   that bound): admin input cannot make the loader hold unbounded memory.
 *   lat_net = 1.5                   any cost parameter of topo_costs_t, by name
 *
 * Relative paths are relative to the file's directory; values may be double-quoted. Every line is
 * checked before anything is loaded. Into an empty cluster the file is loaded all or nothing; into a
 * cluster that already holds data it is first loaded into a scratch cluster (so bad files and bad
 * lines change nothing), then applied line by line, where only a conflict with data already in the
 * cluster (a duplicate host) can still fail.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_private.h"
#include "hostlist.h"
#include "rm_file.h"
#include "rm_text.h"

enum key_kind {
	K_HWLOC,
	K_IB,
	K_IB_CACHE,
	K_NAME_MAP,
	K_TORUS,
	K_COST,
	K_STRICT,
	K_RAIL,
	K_GPU_LINKS,
	K_SLOTS,
	K_NVLINK
};

struct key {
	const char *name;
	enum key_kind kind;
	size_t cost_off; /* K_COST: offset in topo_costs_t */
	double min;      /* K_COST: smallest value allowed (exclusive when excl) */
	int excl;
};

/* clang-format off */
#define COST(f, min, excl) { #f, K_COST, offsetof(topo_costs_t, f), min, excl }
/* clang-format on */
static const struct key keys[] = {
	{ "hwloc", K_HWLOC, 0, 0, 0 },
	{ "ib", K_IB, 0, 0, 0 },
	{ "ib_cache", K_IB_CACHE, 0, 0, 0 },
	{ "node_name_map", K_NAME_MAP, 0, 0, 0 },
	{ "torus", K_TORUS, 0, 0, 0 },
	{ "strict", K_STRICT, 0, 0, 0 },
	{ "rail", K_RAIL, 0, 0, 0 },
	{ "nvlink_domain", K_NVLINK, 0, 0, 0 },
	COST(lat_core, 0, 0),
	COST(bw_core, 0, 1),
	COST(lat_cache, 0, 0),
	COST(bw_cache, 0, 1),
	COST(lat_numa, 0, 0),
	COST(bw_numa, 0, 1),
	COST(lat_host, 0, 0),
	COST(bw_host, 0, 1),
	COST(lat_net, 0, 0),
	COST(bw_net, 0, 1),
	COST(lat_hop, 0, 0),
	COST(ref_bytes, 0, 0),
	COST(bw_hop, 0, 1),
	COST(lat_gpu, 0, 0),
	COST(lat_gpu_pcie, 0, 0),
	COST(bw_gpu_pcie, 0, 1),
	{ "gpu_links", K_GPU_LINKS, 0, 0, 0 },
	{ "slots", K_SLOTS, 0, 0, 0 },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

struct line {
	const struct key *key;
	char *value; /* path resolved, or the spec as written */
	double num;
	uint64_t guid; /* K_RAIL */
	char **hosts;  /* K_NVLINK: the domain's hosts (value: its name) */
	size_t nhosts;
	int lineno;
};

/* dir/value unless value is absolute or not a path; malloc'd. */
static char *resolve(const char *dir, const char *value, enum key_kind kind)
{
	char *p;

	if (value[0] == '/' || !dir[0] ||
	    (kind == K_HWLOC && (!strcmp(value, "live") || !strncmp(value, "synthetic:", 10))))
		return strdup(value);
	if (!(p = malloc(strlen(dir) + strlen(value) + 2)))
		return NULL;
	sprintf(p, "%s/%s", dir, value);
	return p;
}

/* Parses one non-empty line into *out; errors name path and line. *nvl_names: the host names the file's
 * nvlink_domain lines before this one expanded to (this line's are added). */
static int parse_line(const char *path, const char *dir, int lineno, char *s, struct line *out, size_t *nvl_names,
		      rm_error_t *err)
{
	char *key, *val, *end;
	size_t i;

	errno = EINVAL;
	if (rm_kv_split(s, &key, &val) < 0)
		return rm_error_set(err, path, lineno, 0, "expected 'key = value'");
	for (i = 0; i < NKEYS && strcmp(keys[i].name, key); i++)
		;
	if (i == NKEYS)
		return rm_error_set(err, path, lineno, 0, "unknown key '%s'", key);
	if (!val[0])
		return rm_error_set(err, path, lineno, 0, "'%s' needs a value", key);
	out->key = &keys[i];
	out->lineno = lineno;
	if (keys[i].kind == K_STRICT) {
		int yes = !strcmp(val, "yes") || !strcmp(val, "true") || !strcmp(val, "1");

		if (!yes && strcmp(val, "no") && strcmp(val, "false") && strcmp(val, "0"))
			return rm_error_set(err, path, lineno, 0, "strict: expected yes or no, got '%s'", val);
		out->num = yes;
		out->value = NULL;
		return 0;
	}
	if (keys[i].kind == K_RAIL) {
		unsigned long long g;
		unsigned long r;
		char *e2;

		errno = 0;
		g = strtoull(val, &end, 16);
		r = end != val && errno != ERANGE ? strtoul(end, &e2, 10) : 0;
		if (end == val || !g || errno == ERANGE || !(*end == ' ' || *end == '\t') || e2 == end || *e2 ||
		    r >= TOPO_MAX_RAILS)
			return rm_error_set(
				err, path, lineno, 0,
				"rail: expected 'rail = GUID N' (an HCA node or port GUID, N from 0 to %d), got '%s'",
				TOPO_MAX_RAILS - 1, val);
		out->guid = g;
		out->num = (double)r;
		out->value = NULL;
		return 0;
	}
	if (keys[i].kind == K_NVLINK) {
		size_t k = strcspn(val, " \t"), j;
		char *list = val + k + strspn(val + k, " \t");
		rm_error_t herr = { 0 };
		char msg[400], bound[200];
		size_t longest, part, cap;
		int depth;

		out->hosts = NULL;
		for (j = 0; j < k; j++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", val[j]))
				break;
		if (!k || j < k || !*list || list[strcspn(list, " \t")])
			return rm_error_set(err, path, lineno, 0,
					    "nvlink_domain: expected 'nvlink_domain = NAME HOSTLIST' (NAME of letters, "
					    "digits, '.', '_' and '-'; a Slurm host list), got '%s'",
					    val);
		val[k] = '\0';
		snprintf(bound, sizeof(bound),
			 " (the nvlink_domain lines of one file name at most %d hosts in all, %zu before this line; "
			 "one line at most %d MiB of names)",
			 TOPO_NVLINK_MAX_NAMES, *nvl_names, TOPO_NVLINK_LINE_BYTES >> 20);
		if (*nvl_names >= TOPO_NVLINK_MAX_NAMES)
			return rm_error_set(
				err, path, lineno, 0,
				"nvlink_domain %s: the nvlink_domain lines before this one already name %zu "
				"hosts, the most one file may name in all (%d)",
				val, *nvl_names, TOPO_NVLINK_MAX_NAMES);
		/* a name is never longer than the comma-separated part that gives it (a [range] becomes one number
		 * no longer than its text): bound the names' length, then their bytes on this line */
		for (j = 0, longest = 0, part = 0, depth = 0;; j++) {
			if (!list[j] || (list[j] == ',' && depth == 0)) {
				longest = part > longest ? part : longest;
				part = 0;
				if (!list[j])
					break;
				continue;
			}
			depth += list[j] == '[' ? 1 : list[j] == ']' ? -1 : 0;
			part++;
		}
		if (longest > TOPO_NVLINK_NAME_MAX)
			return rm_error_set(err, path, lineno, 0,
					    "nvlink_domain %s: a host name pattern of %zu characters (at most %d)", val,
					    longest, TOPO_NVLINK_NAME_MAX);
		cap = TOPO_NVLINK_MAX_NAMES - *nvl_names;
		if (cap > TOPO_NVLINK_LINE_BYTES / (longest + 1))
			cap = TOPO_NVLINK_LINE_BYTES / (longest + 1);
		if (!(out->hosts = hostlist_expand(list, &out->nhosts, cap, &herr)))
			return rm_error_set(err, path, lineno, 0, "nvlink_domain %s: host list '%.64s%s'%s: %s", val,
					    list, strlen(list) > 64 ? "..." : "",
					    strstr(herr.text, "too many hosts") ? bound : "",
					    rm_error_format(&herr, msg, sizeof(msg)));
		*nvl_names += out->nhosts;
		if (!(out->value = strdup(val))) {
			hostlist_free(out->hosts);
			errno = ENOMEM;
			return rm_error_set(err, path, lineno, 0, "out of memory");
		}
		return 0;
	}
	if (keys[i].kind == K_SLOTS) {
		topo_slot_kind_t k;

		if (topo_slot_kind_parse(val, &k) < 0)
			return rm_error_set(err, path, lineno, 0, "slots: expected core or gpu, got '%s'", val);
		out->num = k;
		out->value = NULL;
		return 0;
	}
	if (keys[i].kind == K_COST) {
		out->num = strtod(val, &end);
		if (*end || end == val || out->num != out->num || out->num < keys[i].min ||
		    (keys[i].excl && out->num <= keys[i].min) || out->num > 1e12)
			return rm_error_set(err, path, lineno, 0, "%s: '%s' is not a number %s 0", key, val,
					    keys[i].excl ? ">" : ">=");
		out->value = NULL;
		return 0;
	}
	if (!(out->value = resolve(dir, val, keys[i].kind))) {
		errno = ENOMEM;
		return rm_error_set(err, path, lineno, 0, "out of memory");
	}
	return 0;
}

static void free_lines(struct line *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].value);
		if (v[i].key && v[i].key->kind == K_NVLINK)
			hostlist_free(v[i].hosts);
	}
	free(v);
}

struct nvl_name {
	const char *name;
	int lineno;
};

static int cmp_nvl(const void *a, const void *b)
{
	const struct nvl_name *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->lineno > y->lineno) - (x->lineno < y->lineno);
}

/* NVLink domains: names unique, each host in one domain at most. O(H log H) for H hosts in all. */
static int check_nvlink(const char *path, const struct line *v, size_t n, rm_error_t *err)
{
	struct nvl_name *a;
	size_t i, j, k = 0, nh = 0;
	int rc = 0, pass;

	for (i = 0; i < n; i++)
		if (v[i].key->kind == K_NVLINK)
			nh += v[i].nhosts + 1;
	if (!nh)
		return 0;
	if (!(a = malloc(nh * sizeof(*a))))
		return errno = ENOMEM, rm_error_set(err, path, 0, 0, "out of memory");
	for (pass = 0; pass < 2 && !rc; pass++) { /* 0: domain names, 1: hosts */
		for (i = 0, k = 0; i < n; i++)
			if (v[i].key->kind == K_NVLINK) {
				if (!pass)
					a[k++] = (struct nvl_name){ v[i].value, v[i].lineno };
				for (j = 0; pass && j < v[i].nhosts; j++)
					a[k++] = (struct nvl_name){ v[i].hosts[j], v[i].lineno };
			}
		qsort(a, k, sizeof(*a), cmp_nvl);
		for (i = 1; i < k && !rc; i++)
			if (!strcmp(a[i].name, a[i - 1].name)) {
				errno = EINVAL;
				rc = a[i].lineno == a[i - 1].lineno
					     ? rm_error_set(err, path, a[i].lineno, 0,
							    "nvlink_domain: host '%s' is listed twice", a[i].name)
				     : pass ? rm_error_set(
						      err, path, a[i].lineno, 0,
						      "nvlink_domain: host '%s' is already in the domain of line %d",
						      a[i].name, a[i - 1].lineno)
					    : rm_error_set(err, path, a[i].lineno, 0,
							   "nvlink_domain: domain '%s' is already declared on line %d",
							   a[i].name, a[i - 1].lineno);
			}
	}
	free(a);
	return rc;
}

/* Reads and checks every line of the file. Returns the lines (count in *n) or NULL. */
static struct line *read_lines(const char *path, size_t *n, rm_error_t *err)
{
	FILE *f = rm_file_fopen(path, RM_FILE_CONFIG, NULL, err);
	char buf[8192], *dir = strdup(path), *slash, *s;
	struct line *v = NULL;
	size_t cap = 0, nvl_names = 0;
	int lineno = 0, bad = 0;

	*n = 0;
	if (!f || !dir) {
		int e = f ? ENOMEM : errno;

		rm_error_set(err, path, 0, 0, "out of memory"); /* rm_file_fopen() named the problem first */
		free(dir);
		if (f)
			fclose(f);
		errno = e;
		return NULL;
	}
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		dir[0] = '\0';
	while (!bad && fgets(buf, sizeof(buf), f)) {
		lineno++;
		if (ferror(f)) /* grew past the cap: reported below */
			break;
		if (!strchr(buf, '\n') && !feof(f)) {
			bad = rm_error_set(err, path, lineno, 0, "line longer than %zu bytes", sizeof(buf) - 2);
			break;
		}
		s = rm_config_line(buf);
		if (!*s)
			continue;
		if (*n == cap) {
			struct line *nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*nv));

			if (!nv) {
				bad = rm_error_set(err, path, lineno, 0, "out of memory");
				break;
			}
			v = nv;
		}
		if (parse_line(path, dir, lineno, s, &v[*n], &nvl_names, err) < 0)
			bad = -1;
		else
			++*n;
	}
	if (!bad)
		bad = rm_file_stream_error(f, path, RM_FILE_CONFIG, err);
	if (!bad)
		bad = check_nvlink(path, v, *n, err);
	fclose(f);
	free(dir);
	if (bad) {
		free_lines(v, *n);
		errno = errno ? errno : EINVAL;
		return NULL;
	}
	if (!v && !(v = malloc(sizeof(*v)))) {
		errno = ENOMEM;
		rm_error_set(err, path, 0, 0, "out of memory");
	}
	return v;
}

/* Adds " (FILE:LINE)" to a loader's error so the user also sees which line brought the source. */
static void annotate(rm_error_t *err, const char *path, int lineno)
{
	size_t len;

	if (!err || !rm_error_isset(err) || (!strcmp(err->source, path) && err->line == lineno))
		return;
	len = strlen(err->text);
	snprintf(err->text + len, sizeof(err->text) - len, " (from %s:%d)", path, lineno);
}

static int apply_line(struct topo_cluster *c, const struct line *l, rm_error_t *err)
{
	switch (l->key->kind) {
	case K_HWLOC: return topo_load_hwloc_spec(c, l->value, err);
	case K_IB: return topo_load_ib_file(c, l->value, err);
	case K_IB_CACHE: return topo_load_ib_cache(c, l->value, err);
	case K_NAME_MAP: return topo_load_node_name_map(c, l->value, err);
	case K_TORUS: return topo_load_torus(c, l->value, err);
	case K_COST: *(double *)((char *)&c->costs + l->key->cost_off) = l->num; return 0;
	case K_STRICT: /* applied before any source (apply_strict) */ return 0;
	case K_RAIL: /* applied after every source (apply_lines) */ return 0;
	case K_NVLINK: /* applied after every source (apply_lines) */ return 0;
	case K_GPU_LINKS: return topo_load_gpu_links(c, l->value, err);
	case K_SLOTS: c->slots = (topo_slot_kind_t)l->num; return 0;
	}
	return -1;
}

static int apply_lines(struct topo_cluster *c, const char *path, const struct line *v, size_t n, rm_error_t *err)
{
	size_t i, names, fh, cap;

	for (i = 0; i < n; i++)
		if (apply_line(c, &v[i], err) < 0) {
			int e = errno;

			annotate(err, path, v[i].lineno);
			errno = e ? e : EINVAL;
			return -1;
		}
	for (i = 0; i < n; i++) { /* rails, once the fabric is loaded */
		if (v[i].key->kind != K_RAIL)
			continue;
		if (!c->fabric) {
			errno = EINVAL;
			return rm_error_set(err, path, v[i].lineno, 0,
					    "rail: no InfiniBand fabric (an ib or ib_cache line)");
		}
		if (topo_fabric_set_rail(c->fabric, v[i].guid, (unsigned)v[i].num) < 0)
			return rm_error_set(err, path, v[i].lineno, 0, "rail: out of memory");
		c->finalized = 0;
	}
	for (i = 0, names = 0; i < n; i++) { /* NVLink domains, once the fabric is loaded */
		if (v[i].key->kind != K_NVLINK)
			continue;
		if (!c->fabric) {
			errno = EINVAL;
			return rm_error_set(err, path, v[i].lineno, 0,
					    "nvlink_domain: no fabric (an ib or ib_cache line) to write blocks for");
		}
		fh = topo_fabric_nhosts(c->fabric);
		cap = fh > TOPO_NVLINK_MIN_CAP / 2 ? 2 * fh : TOPO_NVLINK_MIN_CAP;
		if ((names += v[i].nhosts) > cap) {
			errno = EINVAL;
			return rm_error_set(
				err, path, v[i].lineno, 0,
				"nvlink_domain %s: the nvlink_domain lines up to this one name %zu hosts, more "
				"than the fabric's %zu hosts allow (at most %zu: twice the fabric's hosts, and "
				"never fewer than %d)",
				v[i].value, names, fh, cap, TOPO_NVLINK_MIN_CAP);
		}
		if (topo_fabric_add_nvlink_domain(c->fabric, v[i].value, (const char *const *)v[i].hosts, v[i].nhosts) <
		    0)
			return rm_error_set(err, path, v[i].lineno, 0, "nvlink_domain: out of memory");
	}
	if (c->fabric) { /* a GUID no HCA has is a typo, not a silent no-op */
		uint64_t miss = topo_fabric_rail_unmatched(c->fabric);

		for (i = 0; miss && i < n; i++)
			if (v[i].key->kind == K_RAIL && (v[i].guid == miss || miss == UINT64_MAX)) {
				errno = miss == UINT64_MAX ? ENOMEM : EINVAL;
				return rm_error_set(err, path, v[i].lineno, 0,
						    miss == UINT64_MAX
							    ? "rail: out of memory"
							    : "rail: no HCA of the fabric has the node or port "
							      "GUID 0x%016llx",
						    (unsigned long long)miss);
			}
	}
	return 0;
}

/* `strict = yes` holds for every source of the file, whatever its line. */
static void apply_strict(struct topo_cluster *c, const struct line *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].key->kind == K_STRICT && v[i].num != 0)
			c->strict = 1; /* never turns off a caller's --strict */
}

int topo_load_cluster_file(topo_cluster_t c, const char *path, rm_error_t *err)
{
	size_t n;
	struct line *v = read_lines(path, &n, err);
	struct topo_cluster *scratch, swap;
	int empty = !c->nhosts && !c->ntypes && !c->fabric && !c->torus, r;

	if (!v)
		return -1;
	if (n == 0) {
		free(v);
		errno = EINVAL;
		return rm_error_set(err, path, 0, 0, "no source: expected hwloc, ib, ib_cache or torus lines");
	}
	if (!(scratch = topo_cluster_create())) {
		free_lines(v, n);
		errno = ENOMEM;
		return rm_error_set(err, path, 0, 0, "out of memory");
	}
	scratch->costs = c->costs;
	scratch->strict = c->strict;
	apply_strict(scratch, v, n);
	r = apply_lines(scratch, path, v, n, err);
	if (r == 0 && empty) { /* the scratch cluster becomes the cluster */
		swap = *c;
		*c = *scratch;
		*scratch = swap;
	}
	topo_cluster_destroy(scratch);
	if (r == 0 && !empty) {
		apply_strict(c, v, n);
		r = apply_lines(c, path, v, n, err);
	}
	free_lines(v, n);
	return r;
}
