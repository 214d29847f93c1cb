/*
 * topo/target_gpu.c: GPU slots. The cost between two GPUs of a host and through a GPU's NIC, and targets
 * with one slot per GPU (topo_gpu.h). The model and the sources of its figures: topo/COST-GPU.md.
 *
 * A GPU target is built from the core target of the GPUs' first PUs (topo_target_from_slots gives the
 * levels above the host: network levels, their costs or net_dist, the unconnected-hosts warning), whose
 * levels below the host are replaced by GPU groups derived from the link matrix:
 *   for the distinct pair costs v1 < v2 < ... of a host's GPUs, the GPUs joined by pairs of cost <= vk
 *   (connected components) form the groups of one level, finest first, until all are one group (the
 *   host). A level's cost is the mean cost of the pairs that first meet there (max over node types).
 * So the two GCDs of an MI250X package (quad link) form a group below the host, and four H100 GPUs that
 * are all joined by equal NVLinks form none: any two cost the same.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cluster_private.h"

#define GPU_MAX_LEVELS 8 /* GPU group levels below a host */

/* ---- costs -------------------------------------------------------------------------------------- */

int topo_slot_kind_parse(const char *s, topo_slot_kind_t *out)
{
	if (s && !strcasecmp(s, "core"))
		*out = TOPO_SLOTS_CORE;
	else if (s && !strcasecmp(s, "gpu"))
		*out = TOPO_SLOTS_GPU;
	else
		return errno = EINVAL, -1;
	return 0;
}

const char *topo_slot_kind_name(topo_slot_kind_t k)
{
	return k == TOPO_SLOTS_GPU ? "gpu" : "core";
}

topo_slot_kind_t topo_cluster_slot_kind(topo_cluster_t c)
{
	return c->slots;
}

double topo_gpu_pair_cost(topo_cluster_t c, size_t h, unsigned a, unsigned b)
{
	const topo_costs_t *k = &c->costs;
	const topo_gpu_t *ga = topo_host_gpu(c, h, a), *gb = topo_host_gpu(c, h, b);
	topo_gpu_links_t l;
	double bw;

	if (!ga || !gb || topo_host_gpu_links(c, h, &l) < 0)
		return errno = EINVAL, -1.0;
	if (a == b)
		return 0.0;
	bw = l.bw[(size_t)a * l.n + b];
	if (bw > 0)
		return topo_level_cost(k->lat_gpu, bw, k->ref_bytes);
	if (ga->package == gb->package)
		return topo_level_cost(k->lat_gpu_pcie, k->bw_gpu_pcie, k->ref_bytes);
	return topo_level_cost(k->lat_gpu_pcie + k->lat_host, k->bw_gpu_pcie < k->bw_host ? k->bw_gpu_pcie : k->bw_host,
			       k->ref_bytes);
}

double topo_gpu_nic_cost(topo_cluster_t c, size_t h, int nic)
{
	const topo_nic_t *n = nic >= 0 ? topo_host_nic(c, h, (size_t)nic) : NULL;
	const topo_costs_t *k = &c->costs;

	/* the NIC's bandwidth bw_net is shared by its ngpus GPUs: a message of ref_bytes from one of them
	 * takes ngpus times its transfer time when they all send (a host without a NIC for the GPU: its
	 * traffic shares the host's one path, counted as one) */
	if (!n || n->ngpus <= 1 || !(k->bw_net > 0))
		return 0.0;
	return (double)(n->ngpus - 1) * k->ref_bytes / (k->bw_net * 1000.0);
}

/* The host of h's type whose XML created the type's NIC GUIDs: the first host of that type holding the
 * NIC's node GUID (hosts of one type list their GUIDs in the same XML order), *k its place there. ref:
 * a candidate per type index (SIZE_MAX none), tried first; else O(hosts). */
static long type_ref_host(topo_cluster_t c, size_t h, uint64_t guid, const size_t *ref, size_t *k)
{
	const struct topo_nodetype *ty = c->hosts[h].type;
	size_t i, j, nn, np, first = ref && ty ? ref[ty->index] : SIZE_MAX;
	const uint64_t *node, *port;

	for (i = first != SIZE_MAX ? first : 0; i < c->nhosts; i++) {
		if (c->hosts[i].type != ty)
			continue;
		nn = topo_host_guids(c, i, &node, &port, &np);
		for (j = 0; j < nn; j++)
			if (node[j] == guid)
				return *k = j, (long)i;
		if (first != SIZE_MAX) /* the candidate failed: scan all */
			first = SIZE_MAX, i = (size_t)-1;
	}
	return -1;
}

static long gpu_rail(topo_cluster_t c, size_t h, unsigned gpu, const size_t *ref)
{
	const topo_gpu_t *g = topo_host_gpu(c, h, gpu);
	const topo_nic_t *n = g && g->nic >= 0 ? topo_host_nic(c, h, (size_t)g->nic) : NULL;
	const uint64_t *node, *port;
	size_t i, nn, np, k;
	long r;

	if (!g)
		return errno = EINVAL, -1;
	if (!n || !c->fabric || c->hosts[h].fabric_host < 0 || topo_fabric_nrails(c->fabric) < 2 || !n->node_guid)
		return errno = ENOENT, -1;
	/* the type's GUIDs are its first host's: this host's own are at the same places in its list */
	if ((r = topo_host_guid_rail(c, h, n->node_guid)) >= 0)
		return r;
	for (i = 0; i < n->nports; i++)
		if ((r = topo_host_guid_rail(c, h, n->port_guids[i])) >= 0)
			return r;
	nn = topo_host_guids(c, h, &node, &port, &np);
	if (type_ref_host(c, h, n->node_guid, ref, &k) >= 0 && k < nn)
		return topo_host_guid_rail(c, h, node[k]);
	return errno = ENOENT, -1;
}

long topo_gpu_rail(topo_cluster_t c, size_t h, unsigned gpu)
{
	if (h >= c->nhosts)
		return errno = EINVAL, -1;
	return gpu_rail(c, h, gpu, NULL);
}

double topo_gpu_net_cost(topo_cluster_t c, size_t ha, unsigned ga, size_t hb, unsigned gb)
{
	const topo_gpu_t *a = topo_host_gpu(c, ha, ga), *b = topo_host_gpu(c, hb, gb);
	double d[2], ea, eb;
	long r[2];
	int i;

	if (!a || !b)
		return errno = EINVAL, -1.0;
	if (ha == hb)
		return 0.0;
	r[0] = topo_gpu_rail(c, ha, ga);
	r[1] = topo_gpu_rail(c, hb, gb);
	for (i = 0; i < 2; i++) {
		d[i] = r[i] >= 0 ? topo_host_rail_cost(c, ha, hb, (unsigned)r[i]) : -1.0;
		if (d[i] < 0)
			d[i] = topo_host_net_cost(c, ha, hb);
	}
	ea = topo_gpu_nic_cost(c, ha, a->nic);
	eb = topo_gpu_nic_cost(c, hb, b->nic);
	if (d[0] < 0 || d[1] < 0)
		return errno = ENOENT, -1.0;
	return (d[0] + d[1]) / 2 + (ea > eb ? ea : eb);
}

/* ---- GPU groups of a node type ------------------------------------------------------------------ */

struct gpu_levels {
	const struct topo_gpumodel *m;   /* the type (and its overrides) these were computed for */
	size_t host;                     /* a host of that type */
	int nlev;                        /* group levels below the host, finest last */
	uint32_t *grp;                   /* nlev * ngpus: group of GPU g at level l (coarsest first) */
	double cost[GPU_MAX_LEVELS + 1]; /* [0]: host level; [l + 1]: level l */
	size_t ng;                       /* GPUs of the type */
	double *pair;                    /* ng * ng: topo_gpu_pair_cost of every pair */
	int exact;                       /* some pair costs other than its level's mean */
};

static uint32_t uf_find(uint32_t *p, uint32_t x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Computes the group levels of host h's GPUs. */
static int gpu_levels_compute(topo_cluster_t c, size_t h, struct gpu_levels *gl)
{
	size_t n = topo_host_ngpus(c, h), i, j, nv = 0, k;
	double *C = malloc((n * n + 1) * sizeof(*C)), *v = malloc((n * n + 1) * sizeof(*v));
	uint32_t *parts = malloc((GPU_MAX_LEVELS * n + 1) * sizeof(*parts)), *p = malloc((n + 1) * sizeof(*p));
	double sum[GPU_MAX_LEVELS + 1];
	size_t cnt[GPU_MAX_LEVELS + 1];
	int np = 0, l;

	if (!C || !v || !parts || !p) {
		free(C), free(v), free(parts), free(p);
		return errno = ENOMEM, -1;
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			C[i * n + j] = topo_gpu_pair_cost(c, h, (unsigned)i, (unsigned)j);
			if (i < j)
				v[nv++] = C[i * n + j];
		}
	qsort(v, nv, sizeof(*v), cmp_double);
	/* partitions at each distinct threshold, finest first, until one group */
	for (k = 0; k < nv && np < GPU_MAX_LEVELS; k++) {
		size_t groups = n;

		if (k && v[k] == v[k - 1])
			continue;
		for (i = 0; i < n; i++)
			p[i] = (uint32_t)i;
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++)
				if (C[i * n + j] <= v[k]) {
					uint32_t a = uf_find(p, (uint32_t)i), b = uf_find(p, (uint32_t)j);

					if (a != b) {
						p[a > b ? a : b] = a < b ? a : b;
						groups--;
					}
				}
		if (groups <= 1)
			break;
		for (i = 0; i < n; i++)
			parts[np * n + i] = uf_find(p, (uint32_t)i);
		if (np && !memcmp(parts + np * n, parts + (np - 1) * n, n * sizeof(*parts)))
			continue;
		if (groups < n) /* all singletons is the GPU level itself */
			np++;
	}
	/* coarsest first */
	gl->nlev = np;
	gl->grp = malloc((np * n + 1) * sizeof(*gl->grp));
	if (!gl->grp) {
		free(C), free(v), free(parts), free(p);
		return errno = ENOMEM, -1;
	}
	for (l = 0; l < np; l++)
		memcpy(gl->grp + (size_t)l * n, parts + (size_t)(np - 1 - l) * n, n * sizeof(*parts));
	memset(sum, 0, sizeof(sum));
	memset(cnt, 0, sizeof(cnt));
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			int d = 0; /* deepest level (0: host, l + 1: group level l) shared by i and j */

			for (l = 0; l < np && gl->grp[(size_t)l * n + i] == gl->grp[(size_t)l * n + j]; l++)
				d = l + 1;
			sum[d] += C[i * n + j];
			cnt[d]++;
		}
	for (l = 0; l <= np; l++)
		gl->cost[l] = cnt[l] ? sum[l] / (double)cnt[l] : 0.0;
	for (i = 0; i < n; i++) /* is the level's mean every pair's cost? (MI250X: no, COST-GPU.md) */
		for (j = i + 1; j < n; j++) {
			int d = 0;

			for (l = 0; l < np && gl->grp[(size_t)l * n + i] == gl->grp[(size_t)l * n + j]; l++)
				d = l + 1;
			if (fabs(C[i * n + j] - gl->cost[d]) > 1e-9 * (gl->cost[d] + 1))
				gl->exact = 1;
		}
	gl->ng = n;
	gl->pair = C;
	free(v), free(parts), free(p);
	return 0;
}

/* ---- the target ----------------------------------------------------------------------------------- */

/* net_dist wrapper: the core target's network distance plus the NIC sharing term of either host; with
 * rails, slot_net_dist: each direction on the rail of its source GPU's NIC (COST-GPU.md). */
struct nic_net {
	double (*fn)(const topo_target_t *t, uint32_t ha, uint32_t hb); /* NULL: the tree's cost */
	void *ctx;
	void (*free_ctx)(void *ctx);
	double *extra; /* per target-local host */
	/* rails (NULL/0 without): */
	double nicmax;   /* added to the tree's costs above the host */
	double *slot_e;  /* nslots: NIC sharing term of the slot's NIC */
	int32_t *slot_r; /* nslots: index of the slot's rail in rails[], -1 none */
	uint32_t nr;     /* rails used by the slots */
	int32_t *leaf;   /* nr * nhosts: dense leaf of a target host on that rail, -1 none */
	uint32_t *nleaf; /* nr */
	float **m;       /* nr: nleaf x nleaf rail costs between leaves' hosts, < 0 none */
};

#define RAIL_MAX_LEAVES 2048 /* leaves of one rail up to which rail costs are kept (a matrix) */

static double nic_net_dist(const topo_target_t *t, uint32_t ha, uint32_t hb)
{
	const struct nic_net *w = t->net_ctx;
	topo_target_t tmp = *t;
	double e = w->extra[ha] > w->extra[hb] ? w->extra[ha] : w->extra[hb];

	tmp.net_ctx = w->ctx;
	return w->fn(&tmp, ha, hb) + e;
}

/* Network cost between the hosts of slots a and b without rails (the core target's). */
static double base_net(const topo_target_t *t, const struct nic_net *w, uint32_t a, uint32_t b)
{
	topo_target_t tmp = *t;

	if (!w->fn)
		return t->cost[topo_target_common_level(t, a, b)] - w->nicmax;
	tmp.net_ctx = w->ctx;
	return w->fn(&tmp, t->slot_host[a], t->slot_host[b]);
}

static double rail_slot_dist(const topo_target_t *t, uint32_t a, uint32_t b)
{
	const struct nic_net *w = t->net_ctx;
	uint32_t s[2] = { a, b }, ha = t->slot_host[a], hb = t->slot_host[b];
	double d = 0, base = -1, ea = w->slot_e[a], eb = w->slot_e[b];
	int i;

	for (i = 0; i < 2; i++) { /* the direction from s[i]: on its NIC's rail */
		int32_t r = w->slot_r[s[i]], la, lb;
		float x = -1;

		if (r >= 0 && (la = w->leaf[(size_t)r * t->nhosts + ha]) >= 0 &&
		    (lb = w->leaf[(size_t)r * t->nhosts + hb]) >= 0)
			x = w->m[r][(size_t)la * w->nleaf[r] + (size_t)lb];
		if (x < 0) {
			if (base < 0)
				base = base_net(t, w, a, b);
			d += base;
		} else {
			d += x;
		}
	}
	return d / 2 + (ea > eb ? ea : eb);
}

static void nic_net_free(void *p)
{
	struct nic_net *w = p;
	uint32_t r;

	for (r = 0; r < w->nr; r++)
		free(w->m[r]);
	free(w->m), free(w->nleaf), free(w->leaf), free(w->slot_r), free(w->slot_e);

	if (w->free_ctx && w->ctx)
		w->free_ctx(w->ctx);
	free(w->extra);
	free(w);
}

/* slot_host_dist: two GPUs of one host at their own pair's cost (its link, or the PCIe path), not at
 * the mean of their group level; one ng x ng matrix per node type (COST-GPU.md, "Inside the mapping"). */
struct gpu_pairs {
	uint32_t ntypes;
	uint32_t *slot_type; /* nslots: the slot's node type */
	size_t *ng;          /* ntypes */
	double **pair;       /* ntypes: ng x ng */
};

static double gpu_pair_dist(const topo_target_t *t, uint32_t a, uint32_t b)
{
	const struct gpu_pairs *p = t->host_ctx;
	uint32_t k = p->slot_type[a];

	return p->pair[k][(size_t)t->slot_gpu[a] * p->ng[k] + t->slot_gpu[b]];
}

static void gpu_pairs_free(void *v)
{
	struct gpu_pairs *p = v;
	uint32_t k;

	if (!p)
		return;
	for (k = 0; k < p->ntypes; k++)
		free(p->pair[k]);
	free(p->pair), free(p->ng), free(p->slot_type), free(p);
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* The rails of the slots' NICs and, per rail used, the rail costs between the leaves of the target's
 * hosts (by representative hosts: two hosts under the same leaves of a rail cost the same on it).
 * Returns 1 when some slot has a rail (w's rail fields set), 0 when none (fabric without rails or
 * GUIDs: nothing set), -1 on ENOMEM. */
static int attach_rails(topo_cluster_t c, const topo_target_t *t, const topo_gpu_slot_t *slots, size_t n,
			struct nic_net *w)
{
	int32_t idx[TOPO_MAX_RAILS];
	unsigned rails[TOPO_MAX_RAILS];
	size_t i, nh = t->nhosts, *host_of = NULL, *rep = NULL, *rep2 = NULL, *ref = NULL;
	long *raw = NULL, *uniq = NULL;
	uint32_t k;

	if (!c->fabric || topo_fabric_nrails(c->fabric) < 2)
		return 0;
	for (i = 0; i < TOPO_MAX_RAILS; i++)
		idx[i] = -1;
	w->slot_r = malloc((n + 1) * sizeof(*w->slot_r));
	w->slot_e = malloc((n + 1) * sizeof(*w->slot_e));
	host_of = malloc((nh + 1) * sizeof(*host_of));
	raw = malloc((nh + 1) * sizeof(*raw));
	uniq = malloc((nh + 1) * sizeof(*uniq));
	rep = malloc((nh + 1) * sizeof(*rep));
	rep2 = malloc((nh + 1) * sizeof(*rep2));
	if (!w->slot_r || !w->slot_e || !host_of || !raw || !uniq || !rep || !rep2)
		goto nomem;
	/* per node type, its first host with GUIDs: where a host's own GUIDs are matched by position */
	if (!(ref = malloc((c->ntypes + 1) * sizeof(*ref))))
		goto nomem;
	for (i = 0; i < c->ntypes; i++)
		ref[i] = SIZE_MAX;
	for (i = 0; i < c->nhosts; i++)
		if (c->hosts[i].type && c->hosts[i].guids && ref[c->hosts[i].type->index] == SIZE_MAX)
			ref[c->hosts[i].type->index] = i;
	for (i = 0; i < n; i++) {
		uint32_t s = t->given[i];
		const topo_gpu_t *g = topo_host_gpu(c, slots[i].host, slots[i].gpu);
		long r = gpu_rail(c, slots[i].host, slots[i].gpu, ref);

		host_of[t->slot_host[s]] = slots[i].host;
		w->slot_e[s] = topo_gpu_nic_cost(c, slots[i].host, g->nic);
		w->slot_r[s] = -1;
		if (r < 0 || r >= TOPO_MAX_RAILS)
			continue;
		if (idx[r] < 0) {
			idx[r] = (int32_t)w->nr;
			rails[w->nr++] = (unsigned)r;
		}
		w->slot_r[s] = idx[r];
	}
	if (!w->nr) {
		free(w->slot_r), free(w->slot_e);
		w->slot_r = NULL, w->slot_e = NULL;
		free(host_of), free(raw), free(uniq), free(rep), free(rep2), free(ref);
		return 0;
	}
	w->leaf = malloc((size_t)w->nr * nh * sizeof(*w->leaf));
	w->nleaf = calloc(w->nr, sizeof(*w->nleaf));
	w->m = calloc(w->nr, sizeof(*w->m));
	if (!w->leaf || !w->nleaf || !w->m)
		goto nomem;
	for (k = 0; k < w->nr; k++) {
		size_t L = 0, x, y, h;
		int32_t *lf = w->leaf + (size_t)k * nh;

		for (h = 0; h < nh; h++) {
			long fh = c->hosts[host_of[h]].fabric_host;

			raw[h] = fh >= 0 ? topo_fabric_host_rail_leaf(c->fabric, (size_t)fh, rails[k]) : -1;
			if (raw[h] >= 0)
				uniq[L++] = raw[h];
		}
		qsort(uniq, L, sizeof(*uniq), cmp_long);
		for (x = 0, y = 0; x < L; x++)
			if (!y || uniq[y - 1] != uniq[x])
				uniq[y++] = uniq[x];
		L = y;
		for (h = 0; h < nh; h++) {
			long *p = raw[h] >= 0 && L <= RAIL_MAX_LEAVES
					  ? bsearch(&raw[h], uniq, L, sizeof(*uniq), cmp_long)
					  : NULL;

			lf[h] = p ? (int32_t)(p - uniq) : -1;
		}
		if (L > RAIL_MAX_LEAVES || !L) /* too many leaves: this rail's slots keep the default rail */
			continue;
		for (x = 0; x < L; x++)
			rep[x] = rep2[x] = SIZE_MAX;
		for (h = 0; h < nh; h++)
			if (lf[h] >= 0) {
				if (rep[lf[h]] == SIZE_MAX)
					rep[lf[h]] = host_of[h];
				else if (rep2[lf[h]] == SIZE_MAX)
					rep2[lf[h]] = host_of[h];
			}
		if (!(w->m[k] = malloc(L * L * sizeof(**w->m))))
			goto nomem;
		w->nleaf[k] = (uint32_t)L;
		for (x = 0; x < L; x++)
			for (y = 0; y < L; y++) {
				size_t b = x == y ? rep2[x] : rep[y];

				w->m[k][x * L + y] =
					b == SIZE_MAX ? -1.0f : (float)topo_host_rail_cost(c, rep[x], b, rails[k]);
			}
	}
	free(host_of), free(raw), free(uniq), free(rep), free(rep2), free(ref);
	return 1;
nomem:
	free(host_of), free(raw), free(uniq), free(rep), free(rep2), free(ref);
	return -1;
}

struct gslot {
	uint32_t old;  /* slot index in the core target */
	uint32_t host; /* target-local host */
	uint32_t gpu;
	uint32_t key[GPU_MAX_LEVELS];
	uint32_t given; /* index in the caller's list */
};

static int cmp_gslot(const void *pa, const void *pb, void *arg)
{
	const struct gslot *a = pa, *b = pb;
	int l, K = *(const int *)arg;

	if (a->old != b->old) /* old: the host's first slot in the core target (depth-first host order) */
		return a->old < b->old ? -1 : 1;
	for (l = 0; l < K; l++)
		if (a->key[l] != b->key[l])
			return a->key[l] < b->key[l] ? -1 : 1;
	return (a->gpu > b->gpu) - (a->gpu < b->gpu);
}

/* Drops the GPU group levels that split nothing for these slots (as many groups as the level above
 * or below: one child each), as the core target has no level of arity 1 either (Scotch's tleaf
 * divides by zero on one). A level equal to the one above gives that one its cost. */
static void compact_levels(topo_target_t *t)
{
	int l = t->host_level + 1, m;
	uint32_t s;

	while (l < t->nlevels - 1) {
		int up = t->ngroups[l] == t->ngroups[l - 1], down = t->ngroups[l] == t->ngroups[l + 1];

		if (!up && !down) {
			l++;
			continue;
		}
		if (up && !down)
			t->cost[l - 1] = t->cost[l];
		free(t->level_name[l]);
		for (m = l; m + 1 < t->nlevels; m++) {
			t->ngroups[m] = t->ngroups[m + 1];
			t->cost[m] = t->cost[m + 1];
			t->kind[m] = t->kind[m + 1];
			t->level_name[m] = t->level_name[m + 1];
		}
		for (s = 0; s < t->nslots; s++) /* rows shrink in place: row s moves to s * (nlevels - 1) */
			for (m = 0; m < t->nlevels; m++)
				if (m != l)
					t->group[(size_t)s * (t->nlevels - 1) + (size_t)(m - (m > l))] =
						t->group[(size_t)s * t->nlevels + (size_t)m];
		t->nlevels--;
	}
	for (l = t->host_level + 1; l < t->nlevels - 1; l++) { /* names follow the levels kept */
		char name[32];

		snprintf(name, sizeof(name), "gpu-group%d", l - t->host_level);
		free(t->level_name[l]);
		t->level_name[l] = strdup(name);
	}
}

/* Picks for each GPU slot a PU of its cpuset that no earlier GPU slot of its host took. */
static int pick_pus(topo_cluster_t c, const topo_gpu_slot_t *slots, size_t n, topo_slot_t *out, rm_error_t *err)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		const topo_gpu_t *g = topo_host_gpu(c, slots[i].host, slots[i].gpu);
		hwloc_topology_t topo = topo_host_hwloc(c, slots[i].host);
		unsigned k;

		out[i].host = slots[i].host;
		for (k = 0; k < g->npus; k++) {
			hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, g->pu_os[k]);

			if (!pu)
				continue;
			for (j = 0; j < i; j++) /* GPUs per request are few per host: quadratic only in a host */
				if (out[j].host == slots[i].host && out[j].pu == pu->logical_index)
					break;
			if (j == i) {
				out[i].pu = pu->logical_index;
				break;
			}
		}
		if (k == g->npus) {
			errno = EINVAL;
			return rm_error_set(err, topo_host_name(c, slots[i].host), 0, 0,
					    "GPU %u (%s): no PU of its nearest cores is left for it", g->index,
					    g->name);
		}
	}
	return 0;
}

static int check_slots(topo_cluster_t c, const topo_gpu_slot_t *slots, size_t n, rm_error_t *err)
{
	size_t i;

	errno = EINVAL;
	if (!c->finalized)
		return rm_error_set(err, "target", 0, 0, "the cluster is not finalized");
	if (n == 0 || n > UINT32_MAX - 1)
		return rm_error_set(err, "slots", 0, 0, "%zu GPU slots: need 1 or more", n);
	for (i = 0; i < n; i++) {
		if (slots[i].host >= c->nhosts)
			return rm_error_set(err, "slots", 0, 0, "GPU slot %zu: host %u out of range", i, slots[i].host);
		if (slots[i].gpu >= topo_host_ngpus(c, slots[i].host))
			return rm_error_set(err, topo_host_name(c, slots[i].host), 0, 0,
					    "GPU slot %zu: the host has no GPU %u (it has %zu)", i, slots[i].gpu,
					    topo_host_ngpus(c, slots[i].host));
	}
	return 0;
}

/* The group levels of host h, cached per node type model in v (count *nv). */
static struct gpu_levels *levels_of(topo_cluster_t c, size_t h, struct gpu_levels **v, size_t *nv)
{
	const struct topo_gpumodel *m = c->hosts[h].type->gpu;
	struct gpu_levels *n;
	size_t i;

	for (i = 0; i < *nv; i++)
		if ((*v)[i].m == m)
			return &(*v)[i];
	if (!(n = realloc(*v, (*nv + 1) * sizeof(*n))))
		return NULL;
	*v = n;
	memset(&n[*nv], 0, sizeof(n[*nv]));
	n[*nv].m = m;
	n[*nv].host = h;
	if (gpu_levels_compute(c, h, &n[*nv]) < 0)
		return NULL;
	return &n[(*nv)++];
}

topo_target_t *topo_target_from_gpu_slots(topo_cluster_t c, const topo_gpu_slot_t *slots, size_t n, rm_error_t *err)
{
	topo_slot_t *core = NULL;
	topo_target_t *ct = NULL, *t = NULL;
	struct gpu_levels *lv = NULL, **of = NULL;
	struct gslot *gs = NULL;
	size_t nlv = 0, i;
	int K = 0, hl, nl, l;
	double hostcost = 0, lcost[GPU_MAX_LEVELS], nicmax = 0;
	double *extra = NULL;

	if (check_slots(c, slots, n, err) < 0)
		return NULL;
	memset(lcost, 0, sizeof(lcost));
	core = malloc(n * sizeof(*core));
	gs = calloc(n, sizeof(*gs));
	of = calloc(n, sizeof(*of));
	if (!core || !gs || !of)
		goto nomem;
	if (pick_pus(c, slots, n, core, err) < 0)
		goto fail;
	if (!(ct = topo_target_from_slots(c, core, n, err)))
		goto fail;
	hl = ct->host_level;
	/* group levels per node type (pointers into lv are taken once it stops growing) */
	for (i = 0; i < n; i++)
		if (!levels_of(c, slots[i].host, &lv, &nlv))
			goto nomem;
	for (i = 0; i < n; i++) {
		struct gpu_levels *g = levels_of(c, slots[i].host, &lv, &nlv);

		of[i] = g;
		K = g->nlev > K ? g->nlev : K;
	}
	for (i = 0; i < nlv; i++) {
		hostcost = lv[i].cost[0] > hostcost ? lv[i].cost[0] : hostcost;
		for (l = 0; l < lv[i].nlev; l++)
			lcost[l] = lv[i].cost[l + 1] > lcost[l] ? lv[i].cost[l + 1] : lcost[l];
	}
	for (l = 1; l < K; l++) /* a type with fewer levels repeats its finest: keep costs non-increasing */
		if (lcost[l] == 0 || lcost[l] > lcost[l - 1])
			lcost[l] = lcost[l - 1];
	/* the slots in their new order */
	for (i = 0; i < n; i++) {
		uint32_t s = ct->given[i];
		const struct gpu_levels *g = of[i];
		size_t ng = topo_host_ngpus(c, slots[i].host);

		gs[i].old = s;
		gs[i].host = ct->slot_host[s];
		gs[i].gpu = slots[i].gpu;
		gs[i].given = (uint32_t)i;
		for (l = 0; l < K; l++)
			gs[i].key[l] =
				g->nlev ? g->grp[(size_t)(l < g->nlev ? l : g->nlev - 1) * ng + slots[i].gpu] : 0;
	}
	/* hosts keep the core target's order: sort by (first core slot of the host, keys, GPU) */
	{
		uint32_t *first = malloc(ct->nhosts * sizeof(*first));

		if (!first)
			goto nomem;
		for (i = 0; i < ct->nhosts; i++)
			first[i] = UINT32_MAX;
		for (i = 0; i < n; i++)
			if (gs[i].old < first[gs[i].host])
				first[gs[i].host] = gs[i].old;
		for (i = 0; i < n; i++)
			gs[i].old = first[gs[i].host];
		free(first);
	}
	qsort_r(gs, n, sizeof(*gs), cmp_gslot, &K);
	for (i = 1; i < n; i++)
		if (gs[i].old == gs[i - 1].old && gs[i].gpu == gs[i - 1].gpu) {
			errno = EINVAL;
			rm_error_set(err, topo_host_name(c, slots[gs[i].given].host), 0, 0,
				     "GPU %u is given twice (GPU slots %u and %u)", gs[i].gpu, gs[i - 1].given,
				     gs[i].given);
			goto fail;
		}
	/* the new target */
	nl = hl + 1 + K + 1;
	if (!(t = calloc(1, sizeof(*t))))
		goto nomem;
	t->nslots = (uint32_t)n;
	t->nlevels = nl;
	t->host_level = hl;
	t->nhosts = ct->nhosts;
	t->group = malloc(n * (size_t)nl * sizeof(*t->group));
	t->ngroups = calloc((size_t)nl, sizeof(*t->ngroups));
	t->cost = calloc((size_t)nl, sizeof(*t->cost));
	t->kind = calloc((size_t)nl, sizeof(*t->kind));
	t->level_name = calloc((size_t)nl, sizeof(*t->level_name));
	t->slot_host = malloc(n * sizeof(*t->slot_host));
	t->slot = malloc(n * sizeof(*t->slot));
	t->slot_pu_os = malloc(n * sizeof(*t->slot_pu_os));
	t->slot_gpu = malloc(n * sizeof(*t->slot_gpu));
	t->given = malloc(n * sizeof(*t->given));
	if (!t->group || !t->ngroups || !t->cost || !t->kind || !t->level_name || !t->slot_host || !t->slot ||
	    !t->slot_pu_os || !t->slot_gpu || !t->given)
		goto nomem;
	for (l = 0; l < nl; l++) {
		char name[32];

		if (l <= hl) {
			t->kind[l] = ct->kind[l];
			t->cost[l] = ct->cost[l];
			snprintf(name, sizeof(name), "%s", ct->level_name[l]);
		} else if (l < nl - 1) {
			t->kind[l] = TOPO_LEVEL_OTHER;
			t->cost[l] = lcost[l - hl - 1];
			snprintf(name, sizeof(name), "gpu-group%d", l - hl);
		} else {
			t->kind[l] = TOPO_LEVEL_OTHER;
			snprintf(name, sizeof(name), "gpu");
		}
		if (!(t->level_name[l] = strdup(name)))
			goto nomem;
	}
	t->cost[hl] = hostcost;
	t->cost[nl - 1] = 0.0;
	for (i = 0; i < n; i++) {
		uint32_t s = ct->given[gs[i].given];

		for (l = 0; l <= hl; l++)
			t->group[i * (size_t)nl + (size_t)l] = ct->group[(size_t)s * ct->nlevels + (size_t)l];
		for (l = hl + 1; l < nl; l++) { /* dense ids: a new group where the row first differs above */
			int new_group = i == 0;
			int m;

			for (m = 0; m <= l && !new_group; m++) {
				uint32_t a = m <= hl ? t->group[i * (size_t)nl + (size_t)m]
						     : (m < nl - 1 ? gs[i].key[m - hl - 1] : gs[i].gpu);
				uint32_t b = m <= hl ? t->group[(i - 1) * (size_t)nl + (size_t)m]
						     : (m < nl - 1 ? gs[i - 1].key[m - hl - 1] : gs[i - 1].gpu);

				new_group = a != b;
			}
			t->group[i * (size_t)nl + (size_t)l] = new_group ? t->ngroups[l]++ : t->ngroups[l] - 1;
		}
		t->slot[i] = ct->slot[s];
		t->slot_host[i] = ct->slot_host[s];
		t->slot_pu_os[i] = ct->slot_pu_os[s];
		t->slot_gpu[i] = gs[i].gpu;
		t->given[gs[i].given] = (uint32_t)i;
	}
	for (l = 0; l <= hl; l++)
		t->ngroups[l] = ct->ngroups[l];
	compact_levels(t);
	/* the NIC term above the host */
	if (!(extra = calloc(ct->nhosts + 1, sizeof(*extra))))
		goto nomem;
	for (i = 0; i < n; i++) {
		const topo_gpu_t *g = topo_host_gpu(c, slots[i].host, slots[i].gpu);
		double e = topo_gpu_nic_cost(c, slots[i].host, g->nic);
		uint32_t h = ct->slot_host[ct->given[i]];

		extra[h] = e > extra[h] ? e : extra[h];
		nicmax = e > nicmax ? e : nicmax;
	}
	for (l = 0; l < hl; l++)
		t->cost[l] += nicmax;
	{
		struct nic_net *w = calloc(1, sizeof(*w));
		int rails;

		if (!w)
			goto nomem;
		w->nicmax = nicmax;
		if ((rails = attach_rails(c, t, slots, n, w)) < 0) {
			nic_net_free(w);
			goto nomem;
		}
		if (ct->net_dist || rails) {
			w->fn = ct->net_dist;
			w->ctx = ct->net_ctx;
			w->free_ctx = ct->net_free;
			w->extra = extra;
			extra = NULL;
			ct->net_ctx = NULL;
			ct->net_free = NULL;
			t->net_dist = w->fn ? nic_net_dist : NULL;
			t->slot_net_dist = rails ? rail_slot_dist : NULL;
			t->net_ctx = w;
			t->net_free = nic_net_free;
		} else {
			nic_net_free(w);
		}
	}
	/* exact pair costs inside hosts, where some type's levels average different pairs */
	for (i = 0; i < nlv && !lv[i].exact; i++)
		;
	if (i < nlv) {
		struct gpu_pairs *p = calloc(1, sizeof(*p));

		if (!p)
			goto nomem;
		t->host_ctx = p;
		t->host_free = gpu_pairs_free;
		p->slot_type = malloc(n * sizeof(*p->slot_type));
		p->ng = calloc(nlv, sizeof(*p->ng));
		p->pair = calloc(nlv, sizeof(*p->pair));
		if (!p->slot_type || !p->ng || !p->pair)
			goto nomem;
		p->ntypes = (uint32_t)nlv;
		for (i = 0; i < nlv; i++) {
			p->ng[i] = lv[i].ng;
			p->pair[i] = lv[i].pair;
			lv[i].pair = NULL;
		}
		for (i = 0; i < n; i++)
			p->slot_type[t->given[i]] = (uint32_t)(of[i] - lv);
		t->slot_host_dist = gpu_pair_dist;
	}
	t->host_name = ct->host_name;
	ct->host_name = NULL;
	t->warning = ct->warning;
	ct->warning = NULL;
	free(extra);
	for (i = 0; i < nlv; i++)
		free(lv[i].grp), free(lv[i].pair);
	free(lv);
	free(of);
	free(gs);
	free(core);
	topo_target_destroy(ct);
	return t;
nomem:
	errno = ENOMEM;
	rm_error_set(err, "target", 0, 0, "out of memory");
fail:
	free(extra);
	for (i = 0; i < nlv; i++)
		free(lv[i].grp), free(lv[i].pair);
	free(lv);
	free(of);
	free(gs);
	free(core);
	topo_target_destroy(ct);
	topo_target_destroy(t);
	return NULL;
}

topo_target_t *topo_target_from_gpus(topo_cluster_t c, const char *const *hosts, size_t nhosts, rm_error_t *err)
{
	topo_gpu_slot_t *s;
	topo_target_t *t;
	size_t i, n = 0, total = 0;
	long h;

	for (i = 0; i < nhosts; i++) {
		if ((h = topo_host_find(c, hosts[i])) < 0) {
			errno = ENOENT;
			return rm_error_set(err, hosts[i], 0, 0, "unknown host"), NULL;
		}
		if (!topo_host_ngpus(c, (size_t)h)) {
			errno = ENOENT;
			return rm_error_set(err, hosts[i], 0, 0, "host has no GPU in its hardware data"), NULL;
		}
		total += topo_host_ngpus(c, (size_t)h);
	}
	if (!(s = malloc((total ? total : 1) * sizeof(*s)))) {
		errno = ENOMEM;
		return rm_error_set(err, "target", 0, 0, "out of memory"), NULL;
	}
	for (i = 0; i < nhosts; i++) {
		size_t g;

		h = topo_host_find(c, hosts[i]);
		for (g = 0; g < topo_host_ngpus(c, (size_t)h); g++)
			s[n++] = (topo_gpu_slot_t){ (uint32_t)h, (uint32_t)g };
	}
	t = topo_target_from_gpu_slots(c, s, n, err);
	free(s);
	return t;
}
