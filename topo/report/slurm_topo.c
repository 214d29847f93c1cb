/*
 * topo/report/slurm_topo.c: the fabric's switch tree and Slurm's topology.conf (topo_slurm.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "topo_slurm.h"
#include "topo_view.h"
#include "slurm_private.h"

char *topo_slurm_sanitise(const char *name, char *buf, size_t len)
{
	size_t o = 0;

	if (!len)
		return buf;
	for (; name && *name && o + 1 < len; name++) {
		char ch = *name;
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
			 ch == '.' || ch == '_' || ch == '-';

		if (ok)
			buf[o++] = ch;
		else if (o > 0 && buf[o - 1] != '_')
			buf[o++] = '_';
	}
	while (o > 0 && buf[o - 1] == '_')
		o--;
	buf[o] = '\0';
	return buf;
}

void topo_swtree_destroy(topo_swtree_t *t)
{
	size_t s;

	if (!t)
		return;
	for (s = 0; t->name && s < t->nsw; s++)
		free(t->name[s]);
	free(t->name);
	free(t->desc);
	free(t->guid);
	free(t->level);
	free(t->subnet);
	free(t->kept);
	free(t->is_root);
	free(t->host_off);
	free(t->host);
	free(t->unplaced);
	free(t->order);
	free(t->guid_host);
	free(t->excluded);
	free(t->missing);
	free(t->group);
	free(t);
}

static int cmp_name_idx(const void *a, const void *b, void *names)
{
	char **n = names;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return strcmp(n[x], n[y]);
}

static int cmp_guid_idx(const void *a, const void *b, void *guids)
{
	const uint64_t *g = guids;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return g[x] < g[y] ? -1 : g[x] > g[y] ? 1 : x < y ? -1 : x > y;
}

/* Appends _<GUID> to every name shared by several switches (ix: scratch of nsw entries). */
static int unique_names(topo_swtree_t *t, size_t *ix)
{
	size_t i, j;

	for (i = 0; i < t->nsw; i++)
		ix[i] = i;
	qsort_r(ix, t->nsw, sizeof(*ix), cmp_name_idx, t->name);
	for (i = 0; i < t->nsw; i = j) {
		for (j = i + 1; j < t->nsw && !strcmp(t->name[ix[i]], t->name[ix[j]]); j++)
			;
		if (j - i == 1)
			continue;
		for (; i < j; i++) {
			char *n = malloc(strlen(t->name[ix[i]]) + 20);

			if (!n)
				return -1;
			sprintf(n, "%s_%016llx", t->name[ix[i]], (unsigned long long)t->guid[ix[i]]);
			free(t->name[ix[i]]);
			t->name[ix[i]] = n;
		}
	}
	return 0;
}

/* The node-name map's name (sanitised) when it has one, else ibsw<rank in GUID order>; then names
 * made unique. */
static int name_switches(topo_swtree_t *t, const topo_fabric_t *f)
{
	size_t *ix = malloc((t->nsw + 1) * sizeof(*ix)), i;
	char buf[256];
	int rc = -1;

	if (!ix)
		return -1;
	for (i = 0; i < t->nsw; i++)
		ix[i] = i;
	qsort_r(ix, t->nsw, sizeof(*ix), cmp_guid_idx, t->guid);
	for (i = 0; i < t->nsw; i++) {
		size_t s = ix[i];

		topo_slurm_sanitise(topo_fabric_switch_mapped_name(f, (long)s), buf, sizeof(buf));
		if (!buf[0])
			snprintf(buf, sizeof(buf), "ibsw%zu", i + 1);
		if (!(t->name[s] = strdup(buf)))
			goto out;
	}
	rc = unique_names(t, ix);
out:
	free(ix);
	return rc;
}

#define HOST_MAX_LEAVES 64

/* The distinct switches host h's HCA ports hang on, first port first (at most max). */
static size_t host_switches(const topo_fabric_t *f, size_t h, long *sw, size_t max)
{
	size_t p, i, n = 0;

	for (p = 0; p < topo_fabric_host_nports(f, h) && n < max; p++) {
		long s = topo_fabric_host_port_switch(f, h, p);

		for (i = 0; i < n && sw[i] != s; i++)
			;
		if (s >= 0 && i == n)
			sw[n++] = s;
	}
	return n;
}

/* The leaves host h is listed under: its first switch, the first in each subnet, or all of them. */
static size_t host_leaves(const topo_fabric_t *f, size_t h, int flags, long *sw)
{
	size_t n = host_switches(f, h, sw, HOST_MAX_LEAVES), i, j, k = 0;

	if (flags & TOPO_SWTREE_ALL_LEAVES)
		return n;
	if (flags & TOPO_SWTREE_PER_SUBNET) {
		for (i = 0; i < n; i++) {
			for (j = 0; j < k && topo_fabric_switch_subnet(f, sw[j]) != topo_fabric_switch_subnet(f, sw[i]);
			     j++)
				;
			if (j == k)
				sw[k++] = sw[i];
		}
		return k;
	}
	if (n > 0) {
		sw[0] = topo_fabric_host_leaf(f, h);
		return sw[0] >= 0;
	}
	return n;
}

/* With TOPO_SWTREE_NAMED_ONLY, host h is left out of the leaves. */
static int left_out(const topo_fabric_t *f, const topo_swtree_t *t, size_t h)
{
	return (t->flags & TOPO_SWTREE_NAMED_ONLY) && topo_fabric_host_guid_named(f, h);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* With a keep list (sorted, in keep), host h is kept when the list names it (and marked seen). */
static int not_kept(const topo_fabric_t *f, const char **keep, size_t nkeep, unsigned char *seen, size_t h)
{
	const char *name = topo_fabric_host_name(f, h);
	const char **hit;

	if (!keep)
		return 0;
	hit = name ? bsearch(&name, keep, nkeep, sizeof(*keep), cmp_str) : NULL;
	if (hit)
		seen[hit - keep] = 1;
	return !hit;
}

/* Hosts grouped under their leaves (counting sort by leaf), the others in unplaced, guid_host or
 * excluded (keep: the sorted keep list, seen: its marks). */
static int place_hosts(const topo_fabric_t *f, topo_swtree_t *t, const char **keep, size_t nkeep, unsigned char *seen)
{
	size_t nh = topo_fabric_nhosts(f), h, s, i, n, total = 0, *next;
	long sw[HOST_MAX_LEAVES];

	t->unplaced = malloc((nh + 1) * sizeof(*t->unplaced));
	t->guid_host = malloc((nh + 1) * sizeof(*t->guid_host));
	t->excluded = malloc((nh + 1) * sizeof(*t->excluded));
	next = malloc((t->nsw + 1) * sizeof(*next));
	if (!t->unplaced || !t->guid_host || !t->excluded || !next)
		goto fail;
	for (h = 0; h < nh; h++) {
		if (not_kept(f, keep, nkeep, seen, h)) {
			t->excluded[t->nexcluded++] = topo_fabric_host_name(f, h);
			continue;
		}
		t->nmultihomed += host_switches(f, h, sw, HOST_MAX_LEAVES) > 1;
		t->nguid_named += topo_fabric_host_guid_named(f, h);
		if (left_out(f, t, h)) {
			t->guid_host[t->nguid_host].leaf = topo_fabric_host_leaf(f, h);
			t->guid_host[t->nguid_host++].name = topo_fabric_host_name(f, h);
			continue;
		}
		n = host_leaves(f, h, t->flags, sw);
		for (i = 0; i < n; i++)
			t->host_off[sw[i] + 1]++;
		total += n;
		t->nplaced += n > 0;
		if (!n)
			t->unplaced[t->nunplaced++] = topo_fabric_host_name(f, h);
	}
	for (s = 0; s < t->nsw; s++)
		t->host_off[s + 1] += t->host_off[s];
	if (!(t->host = malloc((total + 1) * sizeof(*t->host))))
		goto fail;
	memcpy(next, t->host_off, (t->nsw + 1) * sizeof(*next));
	for (h = 0; h < nh; h++) {
		n = left_out(f, t, h) || not_kept(f, keep, nkeep, seen, h) ? 0 : host_leaves(f, h, t->flags, sw);
		for (i = 0; i < n; i++)
			t->host[next[sw[i]]++] = topo_fabric_host_name(f, h);
	}
	free(next);
	return 0;
fail:
	free(next);
	return -1;
}

/* kept: leaves with hosts, then level by level the switches with a kept switch one level below. */
static void keep_switches(const topo_fabric_t *f, topo_swtree_t *t)
{
	int k, changed = 1;
	size_t s;

	t->max_level = -1;
	for (s = 0; s < t->nsw; s++) {
		t->kept[s] = t->level[s] == 0 && t->host_off[s + 1] > t->host_off[s];
		if (t->kept[s])
			t->max_level = 0;
	}
	for (k = 1; changed; k++) {
		changed = 0;
		for (s = 0; s < t->nsw; s++) {
			const uint32_t *nb;
			size_t i, n;

			if (t->level[s] != k)
				continue;
			n = topo_fabric_switch_neighbors(f, (long)s, &nb);
			for (i = 0; i < n && !t->kept[s]; i++)
				t->kept[s] = t->level[nb[i]] == k - 1 && t->kept[nb[i]];
			if (t->kept[s])
				changed = 1, t->max_level = k;
		}
	}
	for (s = 0; s < t->nsw; s++)
		t->is_root[s] = t->kept[s];
	for (s = 0; s < t->nsw; s++) {
		const uint32_t *nb;
		size_t i, n;

		if (!t->kept[s] || t->level[s] < 1)
			continue;
		n = topo_fabric_switch_neighbors(f, (long)s, &nb);
		for (i = 0; i < n; i++)
			if (t->level[nb[i]] == t->level[s] - 1)
				t->is_root[nb[i]] = 0;
	}
	for (s = 0; s < t->nsw; s++)
		t->nroots += t->is_root[s];
}

static size_t uf_find(size_t *up, size_t x)
{
	while (up[x] != x)
		x = up[x] = up[up[x]];
	return x;
}

/* Connected pieces of the kept switches joined by tree links (a level apart); -1 on no memory. */
static int count_trees(const topo_fabric_t *f, topo_swtree_t *t)
{
	size_t *up = malloc((t->nsw + 1) * sizeof(*up)), s, i, n;
	const uint32_t *nb;

	if (!up)
		return -1;
	for (s = 0; s < t->nsw; s++)
		up[s] = s;
	for (s = 0; s < t->nsw; s++) {
		if (!t->kept[s] || t->level[s] < 1)
			continue;
		n = topo_fabric_switch_neighbors(f, (long)s, &nb);
		for (i = 0; i < n; i++)
			if (t->kept[nb[i]] && t->level[nb[i]] == t->level[s] - 1)
				up[uf_find(up, nb[i])] = uf_find(up, s);
	}
	for (s = 0, i = t->nsw; s < t->nsw; s++) /* the switches of all groups: one tree (groups, top) */
		if (t->kept[s] && t->group[s] >= 0) {
			if (i == t->nsw)
				i = uf_find(up, s);
			else
				up[uf_find(up, s)] = uf_find(up, i);
		}
	for (s = 0; s < t->nsw; s++)
		t->ntrees += t->kept[s] && uf_find(up, s) == s;
	free(up);
	return 0;
}

static int swtree_alloc(topo_swtree_t *t, size_t nsw)
{
	t->nsw = nsw;
	t->name = calloc(nsw + 1, sizeof(*t->name));
	t->desc = calloc(nsw + 1, sizeof(*t->desc));
	t->guid = calloc(nsw + 1, sizeof(*t->guid));
	t->level = calloc(nsw + 1, sizeof(*t->level));
	t->subnet = calloc(nsw + 1, sizeof(*t->subnet));
	t->kept = calloc(nsw + 1, sizeof(*t->kept));
	t->is_root = calloc(nsw + 1, sizeof(*t->is_root));
	t->host_off = calloc(nsw + 2, sizeof(*t->host_off));
	t->order = calloc(nsw + 1, sizeof(*t->order));
	t->group = calloc(nsw + 1, sizeof(*t->group));
	return t->name && t->desc && t->guid && t->level && t->subnet && t->kept && t->is_root && t->host_off &&
			       t->order && t->group
		       ? 0
		       : -1;
}

static int cmp_guid_host(const void *a, const void *b)
{
	return strcmp(((const struct topo_swtree_guid *)a)->name, ((const struct topo_swtree_guid *)b)->name);
}

static int cmp_natural_idx(const void *a, const void *b, void *names)
{
	char **n = names;

	return topo_slurm_cmp_natural(&n[*(const size_t *)a], &n[*(const size_t *)b]);
}

/* Sorted views: hosts of each leaf and switches by name (natural order), GUID-named hosts. */
static void sort_tree(topo_swtree_t *t)
{
	size_t s;

	for (s = 0; s < t->nsw; s++) {
		qsort(t->host + t->host_off[s], t->host_off[s + 1] - t->host_off[s], sizeof(*t->host),
		      topo_slurm_cmp_natural);
		t->order[s] = s;
	}
	qsort_r(t->order, t->nsw, sizeof(*t->order), cmp_natural_idx, t->name);
	qsort(t->guid_host, t->nguid_host, sizeof(*t->guid_host), cmp_guid_host);
	qsort(t->excluded, t->nexcluded, sizeof(*t->excluded), topo_slurm_cmp_natural);
}

topo_swtree_t *topo_swtree_build(topo_cluster_t c, int flags, rm_error_t *err)
{
	return topo_swtree_build_keep(c, flags, NULL, 0, err);
}

/* The sorted copy of keep without duplicates (its length in *n) and its marks. */
static int keep_setup(const char *const *keep, size_t *n, const char ***sorted, unsigned char **seen)
{
	size_t i, k = 0;

	*sorted = malloc((*n + 1) * sizeof(**sorted));
	*seen = calloc(*n + 1, 1);
	if (!*sorted || !*seen)
		return -1;
	memcpy(*sorted, keep, *n * sizeof(**sorted));
	qsort(*sorted, *n, sizeof(**sorted), cmp_str);
	for (i = 0; i < *n; i++)
		if (!k || strcmp((*sorted)[k - 1], (*sorted)[i]))
			(*sorted)[k++] = (*sorted)[i];
	*n = k;
	return 0;
}

static int keep_missing(topo_swtree_t *t, const char **sorted, size_t nkeep, const unsigned char *seen)
{
	size_t i;

	if (!(t->missing = malloc((nkeep + 1) * sizeof(*t->missing))))
		return -1;
	for (i = 0; i < nkeep; i++)
		if (!seen[i])
			t->missing[t->nmissing++] = sorted[i];
	qsort(t->missing, t->nmissing, sizeof(*t->missing), topo_slurm_cmp_natural);
	return 0;
}

topo_swtree_t *topo_swtree_build_keep(topo_cluster_t c, int flags, const char *const *keep, size_t nkeep,
				      rm_error_t *err)
{
	const topo_fabric_t *f = topo_cluster_fabric(c);
	const char **sorted = NULL;
	unsigned char *seen = NULL;
	topo_swtree_t *t;
	size_t s;

	if (!f || topo_fabric_nhosts(f) == 0) {
		rm_error_set(err, "--ib", 0, 0, "no InfiniBand fabric with hosts loaded");
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t || swtree_alloc(t, topo_fabric_nswitches(f)) < 0)
		goto nomem;
	t->nsubnets = topo_fabric_nsubnets(f);
	t->flags = flags;
	t->all_leaves = !!(flags & TOPO_SWTREE_ALL_LEAVES);
	for (s = 0; s < t->nsw; s++) {
		t->desc[s] = topo_fabric_switch_desc(f, (long)s);
		t->guid[s] = topo_fabric_switch_guid(f, (long)s);
		t->level[s] = topo_fabric_switch_level(f, (long)s);
		t->subnet[s] = topo_fabric_switch_subnet(f, (long)s);
		t->group[s] = topo_fabric_switch_group(f, (long)s);
	}
	t->ngroups = topo_fabric_ngroups(f);
	t->filtered = keep != NULL;
	if (keep && keep_setup(keep, &nkeep, &sorted, &seen) < 0)
		goto nomem;
	if (name_switches(t, f) < 0 || place_hosts(f, t, sorted, nkeep, seen) < 0)
		goto nomem;
	if (keep && keep_missing(t, sorted, nkeep, seen) < 0)
		goto nomem;
	keep_switches(f, t);
	if (count_trees(f, t) < 0)
		goto nomem;
	sort_tree(t);
	free(sorted);
	free(seen);
	return t;
nomem:
	free(sorted);
	free(seen);
	topo_swtree_destroy(t);
	rm_error_set(err, "slurm-topology", 0, 0, "out of memory");
	errno = ENOMEM;
	return NULL;
}

size_t topo_swtree_children(topo_cluster_t c, const topo_swtree_t *t, size_t s, size_t **out)
{
	const uint32_t *nb;
	size_t i, n = topo_fabric_switch_neighbors(topo_cluster_fabric(c), (long)s, &nb), k = 0;

	*out = malloc((n + 1) * sizeof(**out));
	if (!*out || t->level[s] < 1)
		return 0;
	for (i = 0; i < n; i++)
		if (t->kept[nb[i]] && t->level[nb[i]] == t->level[s] - 1)
			(*out)[k++] = nb[i];
	return k;
}

/* ---- topology.conf ------------------------------------------------------------------------------ */

/* Natural order: runs of digits compare by value (node2 < node10), the rest byte by byte. */
int topo_slurm_cmp_natural(const void *pa, const void *pb)
{
	const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;

	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			const char *ea = a, *eb = b;
			int c;

			while (*a == '0' && a[1] >= '0' && a[1] <= '9')
				a++;
			while (*b == '0' && b[1] >= '0' && b[1] <= '9')
				b++;
			for (ea = a; *ea >= '0' && *ea <= '9'; ea++)
				;
			for (eb = b; *eb >= '0' && *eb <= '9'; eb++)
				;
			if (ea - a != eb - b)
				return ea - a < eb - b ? -1 : 1;
			if ((c = strncmp(a, b, (size_t)(ea - a))))
				return c;
			a = ea, b = eb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++, b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

/* Slurm's host list parser gives up on numeric suffixes beyond 2^25: names whose trailing run of
 * digits is longer than 7 (HCA GUIDs "0x...") are listed as they are, the others compressed. */
static int suffix_is_short(const char *name)
{
	size_t n = strlen(name), d = 0;

	while (d < n && name[n - 1 - d] >= '0' && name[n - 1 - d] <= '9')
		d++;
	return d <= 7;
}

char *topo_slurm_list(const char *const *in, size_t n)
{
	const char **list = malloc((n + 1) * sizeof(*list));
	size_t i, k = 0, j, len = 1;
	char *l, *out = NULL;

	if (!list)
		return NULL;
	for (i = 0; i < n; i++) { /* short suffixes first, in order, then the others */
		len += strlen(in[i]) + 1;
		if (suffix_is_short(in[i]))
			list[k++] = in[i];
	}
	for (i = 0, j = k; i < n; i++)
		if (!suffix_is_short(in[i]))
			list[j++] = in[i];
	l = hostlist_compress(list, k);
	out = l ? malloc(strlen(l) + len) : NULL;
	if (out) {
		strcpy(out, l);
		for (i = k; i < n; i++)
			strcat(strcat(out, out[0] ? "," : ""), list[i]);
	}
	free(l);
	free(list);
	return out;
}

void topo_slurm_yaml_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputs("\"\n", f);
}

/* Writes "SwitchName=<name> <key>=<compressed list>" preceded by a comment line; with yaml, the same
 * switch as an item of topology.yaml's `switches:` list ("nodes:" or "children:"). */
static void write_switch(FILE *f, const topo_swtree_t *t, size_t s, const char *key, const char **list, size_t n,
			 int yaml)
{
	char *l;

	if (key[0] == 'S')
		qsort(list, n, sizeof(*list), topo_slurm_cmp_natural);
	l = topo_slurm_list(list, n);
	fprintf(f, "%s# \"%s\" guid 0x%016llx, %s, %zu %s\n", yaml ? "    " : "", t->desc[s] ? t->desc[s] : "",
		(unsigned long long)t->guid[s], t->level[s] == 0 ? "leaf" : "upper switch", n,
		key[0] == 'N' ? (n == 1 ? "host" : "hosts") : (n == 1 ? "switch" : "switches"));
	if (yaml) {
		fprintf(f, "    - switch: \"%s\"\n      %s: ", t->name[s], key[0] == 'N' ? "nodes" : "children");
		topo_slurm_yaml_string(f, l ? l : "");
	} else
		fprintf(f, "SwitchName=%s %s=%s\n", t->name[s], key, l ? l : "");
	free(l);
}

/* The kept switches of level k in a subnet, each listing its kept children. */
static int write_upper(topo_cluster_t c, const topo_swtree_t *t, FILE *f, long subnet, int k, int yaml)
{
	const char **names = malloc((t->nsw + 1) * sizeof(*names));
	size_t o, s, i, n, *ch;

	if (!names)
		return -1;
	for (o = 0; o < t->nsw; o++) {
		s = t->order[o];
		if (!t->kept[s] || t->subnet[s] != subnet || t->level[s] != k)
			continue;
		n = topo_swtree_children(c, t, s, &ch);
		if (!ch) {
			free(names);
			return -1;
		}
		for (i = 0; i < n; i++)
			names[i] = t->name[ch[i]];
		write_switch(f, t, s, "Switches", names, n, yaml);
		free(ch);
	}
	free(names);
	return 0;
}

static int write_subnet(topo_cluster_t c, const topo_swtree_t *t, FILE *f, long subnet, int yaml)
{
	size_t o, s, n = 0;
	int k;

	for (s = 0; s < t->nsw; s++)
		n += t->kept[s] && t->subnet[s] == subnet;
	if (!n)
		return 0;
	fprintf(f, "%s# subnet %ld (%s): %zu switches\n", yaml ? "    " : "\n", subnet,
		topo_fabric_subnet_source(topo_cluster_fabric(c), (size_t)subnet), n);
	for (o = 0; o < t->nsw; o++)
		if ((s = t->order[o]), t->kept[s] && t->subnet[s] == subnet && t->level[s] == 0)
			write_switch(f, t, s, "Nodes", t->host + t->host_off[s], t->host_off[s + 1] - t->host_off[s],
				     yaml);
	for (k = 1; k <= t->max_level; k++)
		if (write_upper(c, t, f, subnet, k, yaml) < 0)
			return -1;
	return 0;
}

/* A host list in comment lines of about 100 characters at most (broken between items outside
 * brackets), each starting with prefix. */
static void comment_list(FILE *f, const char *prefix, const char *const *names, size_t n)
{
	char *l = topo_slurm_list(names, n), *p, *cut, *q;
	int depth;

	for (p = l; p && *p; p = cut) {
		for (q = p, cut = NULL, depth = 0; *q && (!cut || q - p < 96); q++) {
			depth += *q == '[' ? 1 : *q == ']' ? -1 : 0;
			if (*q == ',' && depth == 0)
				cut = q + 1;
		}
		if (!*q || !cut)
			cut = q;
		fprintf(f, "%s%.*s\n", prefix, (int)(cut - p), p);
	}
	free(l);
}

/* The comment lines of the header that the tree's hosts call for (every format writes them). */
void topo_slurm_header_notes(const topo_swtree_t *t, FILE *f)
{
	size_t i;

	if (t->nmultihomed)
		fprintf(f, "# %zu hosts have HCAs on several switches: %s.\n", t->nmultihomed,
			t->all_leaves ? "each is listed under all of them (--all-leaves)"
				      : "each is listed under its first");
	if (t->nguid_named && !t->nguid_host)
		fprintf(f, "# %zu hosts are named by HCA GUID (generic description; give --node-name-map).\n",
			t->nguid_named);
	if (t->nguid_host) {
		fprintf(f,
			"# %zu HCAs are named only by their GUID (a generic description and no node-name map\n"
			"# entry): Slurm knows no such host, so they are left out of Nodes=. Name them in a\n"
			"# node-name map (--node-name-map, lines 0xGUID \"host\") to list them:\n",
			t->nguid_host);
		for (i = 0; i < t->nguid_host; i++)
			fprintf(f, "#   %s on %s\n", t->guid_host[i].name,
				t->guid_host[i].leaf >= 0 ? t->name[t->guid_host[i].leaf] : "no switch");
	}
	if (t->nunplaced) {
		fprintf(f, "# %zu hosts hang on no switch and are not listed:", t->nunplaced);
		for (i = 0; i < t->nunplaced && i < 50; i++)
			fprintf(f, " %s", t->unplaced[i]);
		fprintf(f, "%s\n", t->nunplaced > 50 ? " ..." : "");
	}
	if (t->nexcluded) {
		fprintf(f, "# %zu hosts of the fabric are not Slurm nodes (--nodes, --slurm-conf) and are left out:\n",
			t->nexcluded);
		comment_list(f, "#   ", t->excluded, t->nexcluded);
	}
	if (t->nmissing) {
		fprintf(f, "# %zu Slurm nodes have no HCA in the fabric and are on no switch:\n", t->nmissing);
		comment_list(f, "#   ", t->missing, t->nmissing);
	}
}

static void write_header(const topo_swtree_t *t, FILE *f)
{
	fprintf(f,
		"# topology.conf for Slurm's topology/tree plugin, written by rankmapctl slurm-topology.\n"
		"# Leaf switches list their hosts (Nodes=), each switch above lists the switches one level\n"
		"# below it (Switches=). %zu hosts under leaf switches.\n",
		t->nplaced);
	topo_slurm_header_notes(t, f);
}

/* One line of the tree: a switch (name) above the switches in list, with a comment line before it. */
static void write_join(FILE *f, int yaml, const char *name, const char **list, size_t n, const char *comment)
{
	char *l;

	qsort(list, n, sizeof(*list), topo_slurm_cmp_natural);
	l = topo_slurm_list(list, n);
	if (yaml)
		fprintf(f, "    # %s\n    - switch: \"%s\"\n      children: \"%s\"\n", comment, name, l ? l : "");
	else
		fprintf(f, "# %s\nSwitchName=%s Switches=%s\n", comment, name, l ? l : "");
	free(l);
}

/* A dragonfly: a switch per group above the group's roots, the top switch above the groups. */
static int write_groups(topo_cluster_t c, const topo_swtree_t *t, const char *top, int yaml, FILE *f)
{
	const topo_fabric_t *fab = topo_cluster_fabric(c);
	const char **list = malloc((t->nsw + 1) * sizeof(*list)), *in = yaml ? "    " : "";
	const char *src = topo_fabric_groups_source(fab);
	char **gname = calloc(t->ngroups + 1, sizeof(*gname)), buf[256], comment[256];
	size_t g, s, n, ng = 0;
	int rc = -1;

	if (!list || !gname)
		goto out;
	fprintf(f,
		"%s# Dragonfly: %zu groups (%s), %zu global links. Each group is one switch above its\n"
		"%s# routers, and one top switch joins the groups. In slurm.conf (Slurm's topology guide):\n"
		"%s#   TopologyPlugin=topology/tree\n"
		"%s#   TopologyParam=Dragonfly\n"
		"%s# so that a job too large for one leaf switch is spread over as many leaf switches as possible.\n",
		yaml ? "    " : "\n", t->ngroups, src ? src : "fabric", topo_fabric_nglobal_links(fab), in, in, in, in);
	for (g = 0; g < t->ngroups; g++) {
		for (s = 0, n = 0; s < t->nsw; s++)
			if (t->is_root[s] && t->group[s] == (long)g)
				list[n++] = t->name[s];
		if (!n)
			continue;
		snprintf(buf, sizeof(buf), "group%zu", g);
		snprintf(comment, sizeof(comment), "dragonfly group %zu: %zu switches of the fabric", g,
			 topo_fabric_group_nswitches(fab, g));
		if (!(gname[ng++] = strdup(buf)))
			goto out;
		write_join(f, yaml, buf, list, n, comment);
	}
	snprintf(comment, sizeof(comment), "the global links between the %zu groups", ng);
	write_join(f, yaml, top ? topo_slurm_sanitise(top, buf, sizeof(buf)) : "dragonfly", (const char **)gname, ng,
		   comment);
	rc = 0;
out:
	for (g = 0; gname && g < t->ngroups; g++)
		free(gname[g]);
	free(gname);
	free(list);
	return rc;
}

int topo_slurm_tree_body(topo_cluster_t c, const topo_swtree_t *t, const char *top, int yaml, FILE *f, rm_error_t *err)
{
	const char **roots = malloc((t->nsw + 1) * sizeof(*roots));
	size_t s, nroots = 0, sub;
	char buf[256], *l;

	if (!roots)
		return rm_error_set(err, "slurm-topology", 0, 0, "out of memory");
	for (sub = 0; sub < t->nsubnets; sub++)
		if (write_subnet(c, t, f, (long)sub, yaml) < 0) {
			free(roots);
			return rm_error_set(err, "slurm-topology", 0, 0, "out of memory");
		}
	if (t->ngroups && write_groups(c, t, top, yaml, f) < 0) {
		free(roots);
		return rm_error_set(err, "slurm-topology", 0, 0, "out of memory");
	}
	for (s = 0; s < t->nsw; s++)
		if (t->is_root[s])
			roots[nroots++] = t->name[s];
	if (t->ngroups) {
		if (t->ntrees > 1)
			fprintf(f,
				"%s# %zu switch trees outside the dragonfly's groups: Slurm will not place one job "
				"across them.\n",
				yaml ? "    " : "\n", t->ntrees - 1);
	} else if (top && t->ntrees > 1) {
		qsort(roots, nroots, sizeof(*roots), topo_slurm_cmp_natural);
		l = topo_slurm_list(roots, nroots);
		topo_slurm_sanitise(top, buf, sizeof(buf));
		if (yaml)
			fprintf(f,
				"    # joins the %zu separate trees (--top)\n    - switch: \"%s\"\n      children: "
				"\"%s\"\n",
				t->ntrees, buf, l ? l : "");
		else
			fprintf(f, "\n# joins the %zu separate trees (--top)\nSwitchName=%s Switches=%s\n", t->ntrees,
				buf, l ? l : "");
		free(l);
	} else if (t->ntrees > 1) {
		fprintf(f,
			"%s# %zu separate switch trees (no switch reaches every host): Slurm will not place one\n"
			"%s# job across them (--top NAME joins them).\n",
			yaml ? "    " : "\n", t->ntrees, yaml ? "    " : "");
	}
	free(roots);
	if (ferror(f))
		return rm_error_set(err, "slurm-topology", 0, 0, "write error");
	return 0;
}

int topo_slurm_topology_write(topo_cluster_t c, const topo_swtree_t *t, const char *top, FILE *f, rm_error_t *err)
{
	write_header(t, f);
	return topo_slurm_tree_body(c, t, top, 0, f, err);
}
