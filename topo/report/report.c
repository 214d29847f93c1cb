/*
 * topo/report/report.c: the cluster summary (topo_report.h): hardware per node type, the fabric's and the
 * torus's reports, the hop-count histogram between hosts and the anomalies.
 *
 * The histogram never looks at host pairs one by one. On a fabric it is topo_fabric_hop_histogram's
 * (topo/net_ib_hist.c: by the tree's switch groups, O(hosts + leaves x levels); outside a tree per
 * pair of leaves up to 4096, else 200,000 sampled pairs, and the method says which). On a torus whose
 * routers all hold as many hosts it is in closed form (per-dimension hop counts multiplied out);
 * unevenly filled, one distance per pair of routers up to 4096 of them, else sampled pairs, said so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "topo_report.h"
#include "topo_gpu.h"
#include "topo_slurm.h"
#include "topo_view.h"

#define MAX_EXACT_LEAVES 4096
#define SAMPLE_PAIRS 200000

/* ---- hardware ---------------------------------------------------------------------------------- */

struct sig {
	size_t type; /* index of the node type */
	long host;   /* a host of that type (for its GPUs and NICs, topo_gpu.h) */
	unsigned packages, numa, cores, pus, gpus, nics, gpu_numa;
	unsigned long long mem, mem_gib, gpu_mem;
	char model[128]; /* CPU model with runs of blanks squeezed */
	size_t group;
};

static void type_sig(topo_cluster_t c, const topo_type_info_t *t, size_t type, long host, struct sig *s)
{
	uint64_t gpu_mem = 0;
	hwloc_obj_t pkg = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_PACKAGE, 0);
	const char *m = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
	size_t o;

	s->type = type;
	s->packages = t->npackages;
	s->host = host;
	s->cores = t->ncores;
	s->pus = t->npus;
	/* GPU memory NUMA nodes (hwloc 1.x Sierra, GPUMemory) are not host NUMA nodes nor host memory */
	s->mem = host >= 0 ? topo_host_memory(c, (size_t)host, &s->numa, &s->gpu_numa, &gpu_mem) : 0;
	s->gpu_mem = gpu_mem;
	s->gpus = host >= 0 ? (unsigned)topo_host_ngpus(c, (size_t)host) : 0;
	s->nics = host >= 0 ? (unsigned)topo_host_nnics(c, (size_t)host) : 0;
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
	if (a->gpus != b->gpus)
		return a->gpus < b->gpus ? -1 : 1;
	if (a->nics != b->nics)
		return a->nics < b->nics ? -1 : 1;
	return strcmp(a->model, b->model);
}

static int cmp_hosts_desc(const void *pa, const void *pb)
{
	json_int_t a = json_integer_value(json_object_get(*(json_t *const *)pa, "hosts"));
	json_int_t b = json_integer_value(json_object_get(*(json_t *const *)pb, "hosts"));

	return a > b ? -1 : a < b;
}

/* The GPUs of host h: index, name, OS devices, backends, bus id, model, NUMA node, nearest cores
 * (PU OS indices) and NIC (not UUIDs: they are each host's, topo_host_gpu_uuid). */
static json_t *gpu_list(topo_cluster_t c, size_t h)
{
	static const char *be[] = { "CUDA", "NVML", "RSMI", "LevelZero", "OpenCL" };
	json_t *arr = json_array();
	size_t i, b;

	for (i = 0; arr && i < topo_host_ngpus(c, h); i++) {
		const topo_gpu_t *g = topo_host_gpu(c, h, i);
		const topo_nic_t *nic = g->nic >= 0 ? topo_host_nic(c, h, (size_t)g->nic) : NULL;
		json_t *bk = json_array();
		char cpus[1024];

		for (b = 0; b < sizeof(be) / sizeof(be[0]); b++)
			if (g->backends & (1u << b))
				json_array_append_new(bk, json_string(be[b]));
		if (hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), g->cpuset) < 0)
			cpus[0] = '\0';
		json_array_append_new(arr, json_pack("{s:i, s:s, s:s, s:o, s:s, s:i, s:s*, s:i, s:i, s:s, s:i, s:s*}",
						     "index", (int)g->index, "name", g->name, "osdevs", g->osdevs,
						     "backends", bk, "busid", g->busid, "partition", (int)g->partition,
						     "model", g->model, "numa", g->numa, "package", g->package, "cpus",
						     cpus, "cores", (int)g->ncores, "nic", nic ? nic->name : NULL));
	}
	return arr;
}

static json_t *nic_list(topo_cluster_t c, size_t h)
{
	json_t *arr = json_array();
	size_t i;

	/* no GUIDs: they are each host's own (topo_host_guids), not the node type's */
	for (i = 0; arr && i < topo_host_nnics(c, h); i++) {
		const topo_nic_t *n = topo_host_nic(c, h, i);

		json_array_append_new(arr,
				      json_pack("{s:i, s:s, s:s*, s:s, s:s, s:i, s:i}", "index", (int)n->index, "name",
						n->name, "netdev", n->netdev, "kind", topo_nic_kind_name(n->kind),
						"busid", n->busid, "numa", n->numa, "gpus", (int)n->ngpus));
	}
	return arr;
}

/* The link matrix summary of host h: source, bandwidths of the linked pairs, pairs without a link. */
static json_t *link_summary(topo_cluster_t c, size_t h)
{
	topo_gpu_links_t l;
	double lo = 0, hi = 0;
	json_int_t linked = 0, pairs = 0;
	json_t *bws = json_array();
	unsigned i, j;

	if (topo_host_gpu_links(c, h, &l) < 0 || l.n < 2)
		return json_decref(bws), json_null();
	for (i = 0; i < l.n; i++)
		for (j = i + 1; j < l.n; j++) {
			double b = l.bw[(size_t)i * l.n + j];
			size_t k;

			pairs++;
			if (!(b > 0))
				continue;
			lo = linked && lo < b ? lo : b;
			hi = b > hi ? b : hi;
			linked++;
			for (k = 0; k < json_array_size(bws) && json_real_value(json_array_get(bws, k)) != b; k++)
				;
			if (k == json_array_size(bws))
				json_array_append_new(bws, json_real(b));
		}
	{
		json_t *r = json_pack("{s:s, s:I, s:I, s:f, s:f, s:o, s:i, s:b}", "source", l.source, "pairs", pairs,
				      "linked_pairs", linked, "min_gbps", lo, "max_gbps", hi, "distinct_gbps", bws,
				      "nvswitches", (int)l.nswitches, "asymmetric", l.asymmetric);
		json_t *m = l.n <= 64 ? json_array() : NULL; /* the whole matrix for nodes of up to 64 GPUs */

		for (i = 0; m && i < l.n; i++) {
			json_t *row = json_array();

			for (j = 0; row && j < l.n; j++)
				json_array_append_new(row, json_real(l.bw[(size_t)i * l.n + j]));
			json_array_append_new(m, row);
		}
		if (r && m)
			json_object_set_new(r, "matrix_gbps", m);
		return r;
	}
}

static json_t *group_entry(topo_cluster_t c, const struct sig *s, const char **names, size_t n)
{
	char *list = hostlist_compress(names, n);
	json_t *e = json_pack("{s:I, s:s, s:i, s:i, s:i, s:i, s:I, s:s, s:i, s:i, s:i, s:I}", "hosts", (json_int_t)n,
			      "host_list", list ? list : "", "packages", (int)s->packages, "numa_nodes", (int)s->numa,
			      "cores", (int)s->cores, "pus", (int)s->pus, "memory_bytes", (json_int_t)s->mem,
			      "cpu_model", s->model, "gpus", (int)s->gpus, "nics", (int)s->nics,
			      "gpu_memory_numa_nodes", (int)s->gpu_numa, "gpu_memory_bytes", (json_int_t)s->gpu_mem);

	if (e && s->host >= 0 && (s->gpus || s->nics)) {
		json_object_set_new(e, "gpu_list", gpu_list(c, (size_t)s->host));
		json_object_set_new(e, "nic_list", nic_list(c, (size_t)s->host));
		json_object_set_new(e, "gpu_links", link_summary(c, (size_t)s->host));
	}
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
		json_array_append_new(arr, group_entry(c, &s[g], names + h, cnt[s[g].group] - h));
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
	long *host = malloc((nt ? nt : 1) * sizeof(*host)), t;
	topo_type_info_t ti;
	json_t *arr;

	if (!s || !host) {
		free(s);
		free(host);
		return NULL;
	}
	for (i = 0; i < nt; i++)
		host[i] = -1;
	for (i = topo_nhosts(c); i-- > 0;) /* a host of each type: the first */
		if ((t = topo_host_type(c, i)) >= 0 && (size_t)t < nt)
			host[t] = (long)i;
	for (i = 0; i < nt; i++)
		if (topo_cluster_type_info(c, i, &ti) == 0)
			type_sig(c, &ti, i, host[i], &s[i]);
	free(host);
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

/* One distance and its host pairs (torus); merged by distance before they become histogram entries. */
struct dpairs {
	double d;
	json_int_t pairs;
};

static int cmp_dpairs(const void *pa, const void *pb)
{
	const struct dpairs *a = pa, *b = pb;

	return a->d < b->d ? -1 : a->d > b->d;
}

/* Appends {key: d, pairs} to the array h (key "hops" an integer, "distance" a number; d < 0: null, no
 * path). Callers add in increasing order of d, the pairs with no path last. */
static void hist_add(json_t *h, const char *key, double d, json_int_t pairs)
{
	json_t *v;

	if (pairs <= 0)
		return;
	v = d < 0 ? json_null() : !strcmp(key, "hops") ? json_integer((json_int_t)d) : json_real(d);
	json_array_append_new(h, json_pack("{s:o, s:I}", key, v, "pairs", pairs));
}

/* Sorts v[0..n) by distance and adds each distance once. */
static void hist_flush(json_t *h, struct dpairs *v, size_t n)
{
	size_t i, j;

	qsort(v, n, sizeof(*v), cmp_dpairs);
	for (i = 0; i < n; i = j) {
		json_int_t p = 0;

		for (j = i; j < n && v[j].d == v[i].d; j++)
			p += v[j].pairs;
		hist_add(h, "distance", v[i].d, p);
	}
}

/* The fabric: cluster hosts as copies of their fabric hosts (topo_fabric_hop_histogram). */
static void fabric_histogram(topo_cluster_t c, const topo_fabric_t *f, json_t *h, char *method, size_t len)
{
	size_t i, nf = topo_fabric_nhosts(f);
	uint32_t *w = calloc(nf + 1, sizeof(*w));
	topo_hop_hist_t *hist = malloc(sizeof(*hist));

	if (w && hist) {
		for (i = 0; i < topo_nhosts(c); i++) {
			long fh = topo_host_fabric_host(c, i);

			if (fh >= 0 && (size_t)fh < nf)
				w[fh]++;
		}
		if (topo_fabric_hop_histogram(f, w, hist) == 0) {
			for (i = 0; i <= TOPO_HOPS_UNCONNECTED; i++)
				if (hist->pairs[i])
					hist_add(h, "hops", i == TOPO_HOPS_UNCONNECTED ? -1 : (double)i,
						 (json_int_t)hist->pairs[i]);
			topo_hop_hist_method(hist, method, len);
		}
	}
	free(w);
	free(hist);
}

/* Link-cost-weighted distance of per-dimension hop counts q, summed in the order of
 * topo_torus_node_distance (same rounding, same keys). */
static double torus_qdist(const topo_torus_spec_t *s, const int q[3])
{
	double dist = 0;
	int d;

	for (d = 0; d < 3; d++)
		dist += q[d] * s->link_cost[d];
	return dist;
}

static void router_coords(const topo_torus_spec_t *s, long r, int c[3])
{
	c[2] = (int)(r % s->dims[2]);
	r /= s->dims[2];
	c[1] = (int)(r % s->dims[1]);
	c[0] = (int)(r / s->dims[1]);
}

/* Hops along dimension d between coordinates a and b. */
static int torus_hops(const topo_torus_spec_t *s, int d, int a, int b)
{
	int h = abs(a - b);

	return s->wrap[d] && s->dims[d] - h < h ? s->dims[d] - h : h;
}

/* Every router holds w hosts: ordered router pairs per hop count along each dimension, multiplied out
 * (O(routers) at most, usually far less). */
static int torus_closed_form(const topo_torus_spec_t *s, long nrouters, json_int_t w, json_t *h)
{
	json_int_t *per[3] = { NULL, NULL, NULL };
	struct dpairs *v = NULL;
	size_t n = 0, cap;
	int d, a, q[3];

	for (d = 0; d < 3; d++) { /* per[d][k]: ordered coordinate pairs k hops apart along d */
		per[d] = calloc((size_t)s->dims[d] + 1, sizeof(json_int_t));
		if (!per[d])
			goto oom;
		for (a = 0; a < s->dims[d]; a++) {
			int b;

			if (s->wrap[d]) { /* the same from every coordinate */
				per[d][torus_hops(s, d, 0, a)] += s->dims[d];
				continue;
			}
			for (b = 0; b < s->dims[d]; b++)
				per[d][torus_hops(s, d, a, b)]++;
		}
	}
	cap = ((size_t)s->dims[0] + 1) * ((size_t)s->dims[1] + 1) * ((size_t)s->dims[2] + 1);
	if (!(v = malloc(cap * sizeof(*v))))
		goto oom;
	for (q[0] = 0; q[0] < s->dims[0]; q[0]++)
		for (q[1] = 0; per[0][q[0]] && q[1] < s->dims[1]; q[1]++)
			for (q[2] = 0; per[1][q[1]] && q[2] < s->dims[2]; q[2]++) {
				json_int_t ordered = per[0][q[0]] * per[1][q[1]] * per[2][q[2]];

				if (!ordered)
					continue;
				if (!q[0] && !q[1] && !q[2]) /* the same router */
					v[n++] = (struct dpairs){ 0, (json_int_t)nrouters * (w * (w - 1) / 2) };
				else
					v[n++] = (struct dpairs){ torus_qdist(s, q), ordered / 2 * w * w };
			}
	hist_flush(h, v, n);
	free(v);
	for (d = 0; d < 3; d++)
		free(per[d]);
	return 0;
oom:
	for (d = 0; d < 3; d++)
		free(per[d]);
	return -1;
}

/* Hosts per router uneven, at most MAX_EXACT_LEAVES routers with hosts: every pair of them, counted per
 * hop vector (O(routers^2), no key per pair). */
static int torus_router_pairs(const topo_torus_spec_t *s, const long *rt, const json_int_t *w, size_t nr, json_t *h)
{
	size_t dz = (size_t)s->dims[2], dy = (size_t)s->dims[1], i, j, n = 0;
	json_int_t *cnt = calloc((size_t)s->dims[0] * dy * dz, sizeof(*cnt));
	struct dpairs *v = NULL;
	int a[3], b[3], q[3];

	if (!cnt)
		return -1;
	for (i = 0; i < nr; i++) {
		cnt[0] += w[i] * (w[i] - 1) / 2;
		router_coords(s, rt[i], a);
		for (j = i + 1; j < nr; j++) {
			router_coords(s, rt[j], b);
			cnt[((size_t)torus_hops(s, 0, a[0], b[0]) * dy + (size_t)torus_hops(s, 1, a[1], b[1])) * dz +
			    (size_t)torus_hops(s, 2, a[2], b[2])] += w[i] * w[j];
		}
	}
	if (!(v = malloc((size_t)s->dims[0] * dy * dz * sizeof(*v))))
		return free(cnt), -1;
	for (i = 0; i < (size_t)s->dims[0] * dy * dz; i++) {
		if (!cnt[i])
			continue;
		q[0] = (int)(i / (dy * dz));
		q[1] = (int)(i / dz % dy);
		q[2] = (int)(i % dz);
		v[n++] = (struct dpairs){ torus_qdist(s, q), cnt[i] };
	}
	hist_flush(h, v, n);
	free(v);
	free(cnt);
	return 0;
}

/* Random host pairs (deterministic generator): routers unevenly filled and too many for every pair. */
static void torus_sample(topo_cluster_t c, const long *nodes, size_t n, json_t *h)
{
	uint64_t x = 88172645463325252ULL;
	struct dpairs *v = malloc(SAMPLE_PAIRS * sizeof(*v));
	size_t i, k = 0;

	for (i = 0; v && i < SAMPLE_PAIRS && n > 1; i++) {
		size_t a, b;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		a = (size_t)(x % n);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b = (size_t)(x % n);
		if (a != b)
			v[k++] = (struct dpairs){ topo_torus_node_distance(c, nodes[a], nodes[b]), 1 };
	}
	if (v)
		hist_flush(h, v, k);
	free(v);
}

static int cmp_long(const void *pa, const void *pb)
{
	long a = *(const long *)pa, b = *(const long *)pb;

	return a < b ? -1 : a > b;
}

/* The torus: in closed form when every router holds as many hosts, else router pairs, else sampled. */
static void torus_histogram(topo_cluster_t c, json_t *h, char *method, size_t len)
{
	const topo_torus_spec_t *s = topo_torus(c);
	long nrouters = (long)s->dims[0] * s->dims[1] * s->dims[2];
	size_t i, n = 0, nr = 0, nh = topo_nhosts(c);
	long *nodes = malloc((nh + 1) * sizeof(*nodes)), *rt = malloc((nh + 1) * sizeof(*rt));
	json_int_t *w = malloc((nh + 1) * sizeof(*w));
	int uniform;

	if (!nodes || !rt || !w)
		goto out;
	for (i = 0; i < nh; i++)
		if ((nodes[n] = topo_host_torus_node(c, i)) >= 0)
			n++;
	qsort(nodes, n, sizeof(*nodes), cmp_long);
	for (i = 0; i < n; i++) { /* routers with hosts, and their host counts */
		long r = nodes[i] / s->nodes_per_router;

		if (!nr || rt[nr - 1] != r) {
			rt[nr] = r;
			w[nr++] = 0;
		}
		w[nr - 1]++;
	}
	uniform = nr == (size_t)nrouters;
	for (i = 1; uniform && i < nr; i++)
		uniform = w[i] == w[0];
	if (uniform && torus_closed_form(s, nrouters, w[0], h) == 0)
		snprintf(method, len,
			 "exact: link-cost-weighted torus distances in closed form (%ld torus routers, %lld hosts "
			 "each)",
			 nrouters, (long long)w[0]);
	else if (nr <= MAX_EXACT_LEAVES && torus_router_pairs(s, rt, w, nr, h) == 0)
		snprintf(method, len, "exact: one link-cost-weighted torus distance per pair of the %zu torus routers",
			 nr);
	else {
		torus_sample(c, nodes, n, h);
		snprintf(method, len, "sampled: %d random host pairs (%zu torus routers)", SAMPLE_PAIRS, nr);
	}
out:
	free(nodes);
	free(rt);
	free(w);
}

static void hop_histogram(topo_cluster_t c, json_t *r)
{
	json_t *h = json_array();
	const topo_fabric_t *f = topo_cluster_fabric(c);
	char method[200];

	snprintf(method, sizeof(method), "no network");
	if (h && f)
		fabric_histogram(c, f, h, method, sizeof(method));
	else if (h && topo_torus(c))
		torus_histogram(c, h, method, sizeof(method));
	json_object_set_new(r, "hop_histogram", h ? h : json_array());
	json_object_set_new(r, "hop_histogram_method", json_string(method));
}

/* ---- distance between two hosts ---------------------------------------------------------------- */

json_t *topo_distance_json(topo_cluster_t c, size_t a, size_t b, double d)
{
	int hops = topo_host_hops(c, a, b);
	const topo_fabric_t *f = topo_cluster_fabric(c);
	json_t *o = json_pack("{s:o, s:o, s:b}", "hops", hops >= 0 ? json_integer(hops) : json_null(), "distance",
			      d < 0 ? json_null() : json_real(d), "same_host", a == b);
	char note[400];
	size_t out;

	if (hops >= 0)
		return o;
	if (!f || !topo_fabric_nhosts(f)) {
		json_object_set_new(o, "hops_unknown", json_string("no_fabric"));
		snprintf(note, sizeof(note), "no InfiniBand fabric is loaded: no hop count");
	} else if (topo_host_fabric_host(c, a) < 0 || topo_host_fabric_host(c, b) < 0) {
		out = topo_host_fabric_host(c, a) < 0 ? a : b;
		json_object_set_new(o, "hops_unknown", json_string("not_in_fabric"));
		snprintf(note, sizeof(note),
			 "host %.200s has no HCA in the InfiniBand fabric: no hop count; the distance is the cost "
			 "model's flat network between hosts",
			 topo_host_name(c, out));
	} else {
		json_object_set_new(o, "hops_unknown", json_string("not_connected"));
		snprintf(note, sizeof(note),
			 "\"%.150s\" and \"%.150s\" are not connected: no InfiniBand subnet joins them",
			 topo_host_name(c, a), topo_host_name(c, b));
	}
	json_object_set_new(o, "note", json_string(note));
	return o;
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
			json_array_append_new(an, json_pack("{s:s, s:s, s:s, s:s}", "kind", "no_hardware", "text", text,
							    "host", name, "network", fh >= 0 ? "fabric" : "torus"));
		} else if (type >= 0 && has_fabric && fh < 0) {
			snprintf(text, sizeof(text), "host %s has hardware data but no HCA in the fabric", name);
			json_array_append_new(
				an, json_pack("{s:s, s:s, s:s}", "kind", "not_in_fabric", "text", text, "host", name));
		}
	}
}

static void hardware_totals(topo_cluster_t c, json_t *r)
{
	json_int_t with = 0, pkgs = 0, cores = 0, pus = 0, gpus = 0, nics = 0;
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
		gpus += (json_int_t)topo_host_ngpus(c, i);
		nics += (json_int_t)topo_host_nnics(c, i);
	}
	json_object_set_new(r, "hosts", json_integer((json_int_t)topo_nhosts(c)));
	json_object_set_new(r, "hosts_with_hardware", json_integer(with));
	json_object_set_new(r, "packages", json_integer(pkgs));
	json_object_set_new(r, "cores", json_integer(cores));
	json_object_set_new(r, "pus", json_integer(pus));
	json_object_set_new(r, "gpus", json_integer(gpus));
	json_object_set_new(r, "nics", json_integer(nics));
}

/* GPU anomalies, once per node type group (read from the report's own entries): GPUs with no NIC on
 * their NUMA node, and hwloc link matrices that are not symmetric. */
static void gpu_anomalies(json_t *types, json_t *an)
{
	json_t *e, *g, *n;
	size_t i, j;
	char text[1024];

	json_array_foreach (types, i, e) {
		const char *list = json_string_value(json_object_get(e, "host_list"));
		json_t *links = json_object_get(e, "gpu_links"), *bad = json_array();
		size_t len = 0;

		json_array_foreach (json_object_get(e, "gpu_list"), j, g) {
			json_int_t numa = json_integer_value(json_object_get(g, "numa"));
			const char *nic = json_string_value(json_object_get(g, "nic"));
			int local = 0;
			size_t k;

			json_array_foreach (json_object_get(e, "nic_list"), k, n)
				if (nic && !strcmp(nic, json_string_value(json_object_get(n, "name"))))
					local = json_integer_value(json_object_get(n, "numa")) == numa;
			if (!local) {
				json_array_append_new(bad, json_string(json_string_value(json_object_get(g, "name"))));
				if (len < 200)
					len += (size_t)snprintf(text + len, 210 - len, "%s%s", len ? ", " : "",
								json_string_value(json_object_get(g, "name")));
			}
		}
		if (json_array_size(bad)) {
			char msg[1400];

			snprintf(msg, sizeof(msg), "GPUs with no NIC on their NUMA node on hosts %s: %s", list, text);
			json_array_append_new(an, json_pack("{s:s, s:s, s:s, s:o}", "kind", "gpu_no_local_nic", "text",
							    msg, "host_list", list, "gpus", bad));
		} else {
			json_decref(bad);
		}
		if (json_is_true(json_object_get(links, "asymmetric"))) {
			snprintf(text, sizeof(text),
				 "hosts %s: hwloc's GPU link matrix %s is not symmetric (the larger "
				 "value of each pair is used)",
				 list, json_string_value(json_object_get(links, "source")));
			json_array_append_new(an, json_pack("{s:s, s:s, s:s}", "kind", "gpu_links_asymmetric", "text",
							    text, "host_list", list));
		}
	}
}

/* Copies the fabric's headline keys to the top level (0 / empty without a fabric). */
static void fabric_part(topo_cluster_t c, json_t *r, json_t *an)
{
	static const char *const ints[] = { "switches", "hca_ports", "subnets", "links", "unconnected_switch_ports" };
	const topo_fabric_t *fab = topo_cluster_fabric(c);
	topo_swtree_t *t = fab && topo_fabric_nhosts(fab) ? topo_swtree_build(c, 0, NULL) : NULL;
	json_t *f = fab ? topo_fabric_report_named(fab, t ? (const char *const *)t->name : NULL) : NULL, *v;
	size_t i;

	topo_swtree_destroy(t); /* switches named as topology.conf and the picture name them */
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
	json_t *r = json_object(), *an = json_array(), *types, *torus, *a;
	size_t i;

	if (!r || !an) {
		json_decref(r);
		json_decref(an);
		errno = ENOMEM;
		return NULL;
	}
	json_object_set_new(r, "schema_version", json_integer(TOPO_REPORT_SCHEMA_VERSION));
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
	gpu_anomalies(json_object_get(r, "node_types"), an);
	topo_anomalies_report(c, an);
	json_array_foreach (an, i, a) /* a warning unless its source said otherwise (below_norm_link: a note) */
		if (!json_object_get(a, "severity"))
			json_object_set_new(a, "severity", json_string("warning"));
	json_object_set_new(r, "anomalies", an);
	return r;
}
