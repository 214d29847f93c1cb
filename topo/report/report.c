/*
 * topo/report/report.c: the cluster summary (topo_report.h): hardware per node type, the fabric's and the
 * torus's reports, the hop-count histogram between hosts and the anomalies.
 *
 * The histogram never builds a host-by-host matrix: hosts are grouped by leaf switch (torus router) and
 * one hop count (distance) is taken per pair of groups, from a representative host of each (hosts under
 * the same two leaves are the same distance apart; a host with HCAs on several leaves counts under the
 * leaf of its first). Beyond 4096 groups it samples random host pairs instead and says so.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "topo_report.h"
#include "topo_view.h"

#define MAX_EXACT_LEAVES 4096
#define SAMPLE_PAIRS 200000

/* ---- hardware ---------------------------------------------------------------------------------- */

struct sig {
	size_t type; /* index of the node type */
	unsigned packages, numa, cores, pus;
	unsigned long long mem, mem_gib;
	char model[128]; /* CPU model with runs of blanks squeezed */
	size_t group;
};

static void type_sig(const topo_type_info_t *t, size_t type, struct sig *s)
{
	hwloc_obj_t pkg = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_PACKAGE, 0);
	const char *m = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
	size_t o;

	s->type = type;
	s->packages = t->npackages;
	s->numa = (unsigned)hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_NUMANODE);
	s->cores = t->ncores;
	s->pus = t->npus;
	s->mem = hwloc_get_root_obj(t->topo)->total_memory;
	s->mem_gib = (s->mem + (1ULL << 29)) >> 30;
	for (o = 0; m && *m && o + 1 < sizeof(s->model); m++)
		if (*m != ' ' || (o > 0 && s->model[o - 1] != ' '))
			s->model[o++] = *m;
	while (o > 0 && s->model[o - 1] == ' ')
		o--;
	s->model[o] = '\0';
}

static int cmp_sig(const void *pa, const void *pb)
{
	const struct sig *a = pa, *b = pb;

	if (a->packages != b->packages)
		return a->packages < b->packages ? -1 : 1;
	if (a->numa != b->numa)
		return a->numa < b->numa ? -1 : 1;
	if (a->cores != b->cores)
		return a->cores < b->cores ? -1 : 1;
	if (a->pus != b->pus)
		return a->pus < b->pus ? -1 : 1;
	if (a->mem_gib != b->mem_gib) /* a few MiB reserved differently do not make another type */
		return a->mem_gib < b->mem_gib ? -1 : 1;
	return strcmp(a->model, b->model);
}

static int cmp_hosts_desc(const void *pa, const void *pb)
{
	json_int_t a = json_integer_value(json_object_get(*(json_t *const *)pa, "hosts"));
	json_int_t b = json_integer_value(json_object_get(*(json_t *const *)pb, "hosts"));

	return a > b ? -1 : a < b;
}

static json_t *group_entry(const struct sig *s, const char **names, size_t n)
{
	char *list = hostlist_compress(names, n);
	json_t *e =
		json_pack("{s:I, s:s, s:i, s:i, s:i, s:i, s:I, s:s}", "hosts", (json_int_t)n, "host_list",
			  list ? list : "", "packages", (int)s->packages, "numa_nodes", (int)s->numa, "cores",
			  (int)s->cores, "pus", (int)s->pus, "memory_bytes", (json_int_t)s->mem, "cpu_model", s->model);

	free(list);
	return e;
}

/* Sorts the entries of arr by decreasing host count. */
static json_t *sorted_by_hosts(json_t *arr)
{
	size_t i, n = json_array_size(arr);
	json_t **v = malloc((n ? n : 1) * sizeof(*v)), *out = json_array();

	if (!v || !out) {
		free(v);
		json_decref(out);
		json_decref(arr);
		return NULL;
	}
	for (i = 0; i < n; i++)
		v[i] = json_array_get(arr, i);
	qsort(v, n, sizeof(*v), cmp_hosts_desc);
	for (i = 0; i < n; i++)
		json_array_append(out, v[i]);
	free(v);
	json_decref(arr);
	return out;
}

/* Hosts grouped by node type signature: group of every host, then one entry per group. */
static json_t *group_hosts(topo_cluster_t c, const struct sig *s, size_t ntypes, size_t ngroups)
{
	size_t nh = topo_nhosts(c), *gr = malloc((ntypes ? ntypes : 1) * sizeof(*gr));
	size_t *cnt = calloc(ngroups + 1, sizeof(*cnt)), *hg = malloc((nh ? nh : 1) * sizeof(*hg)), h, g;
	const char **names = malloc((nh ? nh : 1) * sizeof(*names));
	json_t *arr = json_array();

	if (!gr || !cnt || !hg || !names || !arr)
		goto out;
	for (g = 0; g < ntypes; g++) /* group of each type index */
		gr[s[g].type] = s[g].group;
	for (h = 0; h < nh; h++) {
		long t = topo_host_type(c, h);

		hg[h] = t >= 0 && (size_t)t < ntypes ? gr[t] : ngroups;
		if (hg[h] < ngroups)
			cnt[hg[h] + 1]++;
	}
	for (g = 1; g < ngroups; g++) /* cnt[g] = start of group g */
		cnt[g] += cnt[g - 1];
	for (h = 0; h < nh; h++)
		if (hg[h] < ngroups)
			names[cnt[hg[h]]++] = topo_host_name(c, h);
	for (g = 0, h = 0; g < ntypes; g++) { /* cnt[k] is now the end of group k */
		if (g && s[g].group == s[g - 1].group)
			continue;
		json_array_append_new(arr, group_entry(&s[g], names + h, cnt[s[g].group] - h));
		h = cnt[s[g].group];
	}
out:
	free(gr);
	free(cnt);
	free(hg);
	free(names);
	return arr ? sorted_by_hosts(arr) : NULL;
}

static json_t *node_types(topo_cluster_t c)
{
	size_t i, ngroups = 0, nt = topo_cluster_ntypes(c);
	struct sig *s = calloc(nt ? nt : 1, sizeof(*s));
	topo_type_info_t ti;
	json_t *arr;

	if (!s)
		return NULL;
	for (i = 0; i < nt; i++)
		if (topo_cluster_type_info(c, i, &ti) == 0)
			type_sig(&ti, i, &s[i]);
	qsort(s, nt, sizeof(*s), cmp_sig);
	for (i = 0; i < nt; i++) {
		if (i && cmp_sig(&s[i - 1], &s[i]))
			ngroups++;
		s[i].group = ngroups;
	}
	arr = nt ? group_hosts(c, s, nt, ngroups + 1) : json_array();
	free(s);
	return arr;
}

/* ---- hop histogram ------------------------------------------------------------------------------- */

struct leafhost {
	long leaf;
	size_t host;
};

static int cmp_leafhost(const void *pa, const void *pb)
{
	const struct leafhost *a = pa, *b = pb;

	if (a->leaf != b->leaf)
		return a->leaf < b->leaf ? -1 : 1;
	return a->host < b->host ? -1 : a->host > b->host;
}

typedef double (*pair_dist_t)(topo_cluster_t c, size_t a, size_t b);

static double fabric_dist(topo_cluster_t c, size_t a, size_t b)
{
	return topo_host_hops(c, a, b);
}

static double torus_dist(topo_cluster_t c, size_t a, size_t b)
{
	return topo_torus_node_distance(c, topo_host_torus_node(c, a), topo_host_torus_node(c, b));
}

static void hist_add(json_t *h, double d, json_int_t pairs)
{
	char key[32];
	json_t *v;

	if (pairs <= 0)
		return;
	if (d < 0)
		strcpy(key, "unconnected");
	else
		snprintf(key, sizeof(key), "%g", d);
	v = json_object_get(h, key);
	json_object_set_new(h, key, json_integer(pairs + (v ? json_integer_value(v) : 0)));
}

/* Random host pairs (deterministic generator) when there are too many groups for every pair. */
static void hist_sample(topo_cluster_t c, const struct leafhost *v, size_t n, pair_dist_t dist, json_t *h)
{
	uint64_t x = 88172645463325252ULL;
	size_t i;

	for (i = 0; i < SAMPLE_PAIRS && n > 1; i++) {
		size_t a, b;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		a = (size_t)(x % n);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b = (size_t)(x % n);
		if (a != b)
			hist_add(h, dist(c, v[a].host, v[b].host), 1);
	}
}

/* Exact: one distance per pair of groups (leaf switches, torus routers), times the host pairs under
 * them. v is sorted by group; group -1 holds hosts attached to nothing. */
static void hist_exact(topo_cluster_t c, const struct leafhost *v, size_t n, pair_dist_t dist, json_t *h)
{
	size_t i, j, ni, nj;

	for (i = 0; i < n; i += ni) {
		for (ni = 1; i + ni < n && v[i + ni].leaf == v[i].leaf; ni++)
			;
		if (v[i].leaf < 0) { /* unconnected to everyone */
			hist_add(h, -1, (json_int_t)(ni * (ni - 1) / 2 + ni * (n - i - ni)));
			continue;
		}
		if (ni > 1)
			hist_add(h, dist(c, v[i].host, v[i + 1].host), (json_int_t)(ni * (ni - 1) / 2));
		for (j = i + ni; j < n; j += nj) {
			for (nj = 1; j + nj < n && v[j + nj].leaf == v[j].leaf; nj++)
				;
			hist_add(h, v[j].leaf < 0 ? -1 : dist(c, v[i].host, v[j].host), (json_int_t)(ni * nj));
		}
	}
}

/* Hosts of the network with their group: leaf switch (fabric) or router (torus). */
static size_t network_hosts(topo_cluster_t c, int torus, struct leafhost *v)
{
	const topo_torus_spec_t *spec = topo_torus(c);
	const topo_fabric_t *f = topo_cluster_fabric(c);
	size_t i, n = 0, nh = topo_nhosts(c);

	for (i = 0; i < nh; i++) {
		long node = topo_host_torus_node(c, i), fh = topo_host_fabric_host(c, i);

		if (torus && node >= 0)
			v[n].leaf = node / spec->nodes_per_router;
		else if (!torus && fh >= 0)
			v[n].leaf = topo_fabric_host_leaf(f, (size_t)fh);
		else
			continue;
		v[n++].host = i;
	}
	qsort(v, n, sizeof(*v), cmp_leafhost);
	return n;
}

static void hop_histogram(topo_cluster_t c, json_t *r)
{
	struct leafhost *v = malloc((topo_nhosts(c) ? topo_nhosts(c) : 1) * sizeof(*v));
	json_t *h = json_object();
	const topo_fabric_t *f = topo_cluster_fabric(c);
	int torus = !f && topo_torus(c);
	const char *unit = torus ? "torus routers" : "leaf switches";
	size_t i, n, ngroups = 0;
	char method[160];

	snprintf(method, sizeof(method), "no network");
	if (v && h && (f || topo_torus(c))) {
		n = network_hosts(c, torus, v);
		for (i = 0; i < n; i++)
			ngroups += !i || v[i].leaf != v[i - 1].leaf;
		if (ngroups <= MAX_EXACT_LEAVES) {
			hist_exact(c, v, n, torus ? torus_dist : fabric_dist, h);
			snprintf(method, sizeof(method), "exact: one %s per pair of the %zu %s",
				 torus ? "link-cost-weighted torus distance" : "hop count", ngroups, unit);
		} else {
			hist_sample(c, v, n, torus ? torus_dist : fabric_dist, h);
			snprintf(method, sizeof(method), "sampled: %d random host pairs (%zu %s)", SAMPLE_PAIRS,
				 ngroups, unit);
		}
	}
	free(v);
	json_object_set_new(r, "hop_histogram", h ? h : json_object());
	json_object_set_new(r, "hop_histogram_method", json_string(method));
}

/* ---- anomalies and the whole report ------------------------------------------------------------ */

static void host_anomalies(topo_cluster_t c, json_t *an)
{
	const topo_fabric_t *f = topo_cluster_fabric(c);
	int has_fabric = f && topo_fabric_nhosts(f) > 0; /* not just a node-name map */
	size_t i, nh = topo_nhosts(c);
	char text[512];

	for (i = 0; i < nh; i++) {
		const char *name = topo_host_name(c, i);
		long type = topo_host_type(c, i), fh = topo_host_fabric_host(c, i), node = topo_host_torus_node(c, i);

		if (type < 0 && (fh >= 0 || node >= 0)) {
			snprintf(text, sizeof(text), "host %s is in the %s but has no hardware (hwloc) data", name,
				 fh >= 0 ? "fabric" : "torus");
			json_array_append_new(an, json_pack("{s:s, s:s}", "kind", "no_hardware", "text", text));
		} else if (type >= 0 && has_fabric && fh < 0) {
			snprintf(text, sizeof(text), "host %s has hardware data but no HCA in the fabric", name);
			json_array_append_new(an, json_pack("{s:s, s:s}", "kind", "not_in_fabric", "text", text));
		}
	}
}

static void hardware_totals(topo_cluster_t c, json_t *r)
{
	json_int_t with = 0, pkgs = 0, cores = 0, pus = 0;
	topo_type_info_t t;
	size_t i;

	for (i = 0; i < topo_nhosts(c); i++) {
		long type = topo_host_type(c, i);

		if (type < 0 || topo_cluster_type_info(c, (size_t)type, &t) < 0)
			continue;
		with++;
		pkgs += t.npackages;
		cores += t.ncores;
		pus += t.npus;
	}
	json_object_set_new(r, "hosts", json_integer((json_int_t)topo_nhosts(c)));
	json_object_set_new(r, "hosts_with_hardware", json_integer(with));
	json_object_set_new(r, "packages", json_integer(pkgs));
	json_object_set_new(r, "cores", json_integer(cores));
	json_object_set_new(r, "pus", json_integer(pus));
}

/* Copies the fabric's headline keys to the top level (0 / empty without a fabric). */
static void fabric_part(topo_cluster_t c, json_t *r, json_t *an)
{
	static const char *const ints[] = { "switches", "hca_ports", "subnets", "links", "unconnected_switch_ports" };
	const topo_fabric_t *fab = topo_cluster_fabric(c);
	json_t *f = fab ? topo_fabric_report(fab) : NULL, *v;
	size_t i;

	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		v = f ? json_object_get(f, ints[i]) : NULL;
		json_object_set_new(r, ints[i], v ? json_incref(v) : json_integer(0));
	}
	v = f ? json_object_get(f, "switches_per_level") : NULL;
	json_object_set_new(r, "switches_per_level", v ? json_incref(v) : json_array());
	v = f ? json_object_get(f, "link_rates") : NULL;
	json_object_set_new(r, "link_rates", v ? json_incref(v) : json_object());
	v = f ? json_object_get(f, "anomalies") : NULL;
	if (v)
		json_array_extend(an, v);
	json_object_set_new(r, "fabric", f ? f : json_null());
}

json_t *topo_cluster_report(topo_cluster_t c)
{
	json_t *r = json_object(), *an = json_array(), *types, *torus;

	if (!r || !an) {
		json_decref(r);
		json_decref(an);
		errno = ENOMEM;
		return NULL;
	}
	hardware_totals(c, r);
	types = node_types(c);
	json_object_set_new(r, "node_types", types ? types : json_array());
	fabric_part(c, r, an);
	torus = topo_torus_report(c);
	json_object_set_new(r, "torus", torus ? torus : json_null());
	if (torus && json_is_array(json_object_get(torus, "anomalies")))
		json_array_extend(an, json_object_get(torus, "anomalies"));
	hop_histogram(c, r);
	host_anomalies(c, an);
	topo_anomalies_report(c, an);
	json_object_set_new(r, "anomalies", an);
	return r;
}
