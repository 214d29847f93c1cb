/*
 * topo/target_cluster.c: a target (topo.h) over a set of slots of a finalized cluster.
 *
 * Candidate levels, outermost first: root; the network (fabric switch groups from the widest down to
 * the leaf switch, or torus routers); host; package, die, NUMA node, L3, L2, L1; core; PU. Every slot
 * gets a raw key per level (missing hardware levels inherit their parent's group); groups are nested
 * (a group is a (parent group, key) pair) and numbered densely, slots are sorted depth-first (stable,
 * so an input already depth-first keeps its order), and levels that never branch are dropped.
 * cost[l] is the largest cost-model distance observed between slots whose deepest common level is l.
 * A torus, or a fabric whose distances the tree does not capture exactly, gets net_dist.
 *
 * A torus also gets block levels above its routers, so that tree-based engines (TreeMatch) see its
 * locality: the router box is bisected recursively, each step halving (rounding up) its longest side,
 * and each step is a level ("block1" the coarsest). Routers close in the torus share small blocks;
 * the exact (wrapped, link-cost-weighted) distances stay in net_dist.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_private.h"

#define NONE UINT64_MAX         /* "no object of this type above the PU": inherit */
#define UNATTACHED (1ULL << 62) /* network key of a host outside the network: its own group */
#define MAX_MATRIX_GROUPS 4096  /* network groups up to which distances are checked exactly */

struct cand {
	topo_level_kind_t kind;
	const char *name;
	hwloc_obj_type_t hw; /* hardware levels */
	int net;             /* network levels: fabric k (>= 0), -1 torus router, -2 none, -10 - k torus
				* block level k (struct build's block[k]) */
};

static const struct cand hw_levels[] = {
	{ TOPO_LEVEL_PACKAGE, "package", HWLOC_OBJ_PACKAGE, -2 }, { TOPO_LEVEL_NUMA, "die", HWLOC_OBJ_DIE, -2 },
	{ TOPO_LEVEL_NUMA, "numa", HWLOC_OBJ_NUMANODE, -2 },      { TOPO_LEVEL_CACHE, "l3", HWLOC_OBJ_L3CACHE, -2 },
	{ TOPO_LEVEL_CACHE, "l2", HWLOC_OBJ_L2CACHE, -2 },        { TOPO_LEVEL_CACHE, "l1", HWLOC_OBJ_L1CACHE, -2 },
	{ TOPO_LEVEL_CORE, "core", HWLOC_OBJ_CORE, -2 },          { TOPO_LEVEL_PU, "pu", HWLOC_OBJ_PU, -2 },
};
#define NHW (sizeof(hw_levels) / sizeof(hw_levels[0]))
#define MAXBLOCKS 24 /* torus block levels at most (2^24 routers) */
#define MAXCAND (NHW + 34)

struct build {
	struct topo_cluster *c;
	const topo_slot_t *slots;
	size_t n;
	int net_mode;            /* 0 flat, 1 fabric, 2 torus */
	int block[MAXBLOCKS][3]; /* torus block levels: block sides in routers, coarsest first */
	struct cand cand[MAXCAND];
	int ncand, host_cand;
	uint32_t *ids;            /* n * ncand nested dense ids, in input order */
	uint32_t *count;          /* ncand */
	size_t *order;            /* sorted (depth-first) position -> input index */
	int keep[MAXCAND], nkeep; /* kept candidate levels */
	struct topo_conn conn;    /* fabric connectivity of the target's hosts (by target-local host) */
	int cut;                  /* some of them cannot reach each other (conn.cut) */
	rm_error_t *err;
};

/* ---- raw keys ------------------------------------------------------------------------------------ */

static uint64_t hw_key(hwloc_topology_t topo, hwloc_obj_t pu, hwloc_obj_type_t type)
{
	hwloc_obj_t o;

	if (type == HWLOC_OBJ_PU)
		return pu->logical_index;
	if (type == HWLOC_OBJ_NUMANODE) {
		for (o = hwloc_get_next_obj_by_type(topo, type, NULL); o; o = hwloc_get_next_obj_by_type(topo, type, o))
			if (o->cpuset && hwloc_bitmap_isset(o->cpuset, pu->os_index))
				return o->logical_index;
		return NONE;
	}
	o = hwloc_get_ancestor_obj_by_type(topo, type, pu);
	return o ? o->logical_index : NONE;
}

static uint64_t net_key(struct build *b, const struct topo_host *h, size_t hi, int net)
{
	struct topo_cluster *c = b->c;
	long leaf, g;

	if (net == -1 || net <= -10) {
		const topo_torus_spec_t *s = topo_torus_model_spec(c->torus);
		long r = h->torus_node / s->nodes_per_router;
		const int *side;
		uint64_t key = 0;
		int d, co[3];

		if (h->torus_node < 0)
			return UNATTACHED | hi;
		if (net == -1)
			return (uint64_t)r;
		side = b->block[-10 - net];
		for (d = 2; d >= 0; d--) /* router coordinates, z fastest (as net_torus.c numbers them) */
			co[d] = (int)(r % s->dims[d]), r /= s->dims[d];
		for (d = 0; d < 3; d++)
			key = key * (uint64_t)((s->dims[d] + side[d] - 1) / side[d]) + (uint64_t)(co[d] / side[d]);
		return key;
	}
	if (h->fabric_host < 0 || (leaf = topo_fabric_host_leaf(c->fabric, (size_t)h->fabric_host)) < 0)
		return UNATTACHED | hi;
	g = net == 0 ? leaf : topo_fabric_leaf_group(c->fabric, leaf, net);
	return g < 0 ? UNATTACHED | (uint64_t)leaf : (uint64_t)g;
}

static uint64_t raw_key(struct build *b, size_t i, int l, hwloc_obj_t pu)
{
	const struct cand *k = &b->cand[l];
	const struct topo_host *h = &b->c->hosts[b->slots[i].host];

	if (l == 0)
		return 0;
	if (l == b->host_cand)
		return b->slots[i].host;
	if (l < b->host_cand)
		return net_key(b, h, b->slots[i].host, k->net);
	return hw_key(h->type->topo, pu, k->hw);
}

/* ---- candidate levels -------------------------------------------------------------------------- */

static void add_cand(struct build *b, topo_level_kind_t kind, const char *name, hwloc_obj_type_t hw, int net)
{
	struct cand *k = &b->cand[b->ncand++];

	k->kind = kind;
	k->name = name;
	k->hw = hw;
	k->net = net;
}

/* The network model: fabric when every host of the target is in it, else torus likewise, else flat. */
static void choose_net(struct build *b)
{
	size_t i, in_fabric = 0, in_torus = 0;

	for (i = 0; i < b->n; i++) {
		const struct topo_host *h;

		if (b->slots[i].host >= b->c->nhosts) /* reported by check_slots */
			return;
		h = &b->c->hosts[b->slots[i].host];
		in_fabric += h->fabric_host >= 0;
		in_torus += h->torus_node >= 0;
	}
	b->net_mode = 0;
	if (b->c->torus && in_torus == b->n)
		b->net_mode = 2;
	else if (b->c->fabric && in_fabric > 0)
		b->net_mode = 1;
}

/* Torus block levels (see the top of the file): halve the longest side until blocks are routers. */
static void add_torus_blocks(struct build *b)
{
	static const char *names[MAXBLOCKS] = {
		"block1",  "block2",  "block3",  "block4",  "block5",  "block6",  "block7",  "block8",
		"block9",  "block10", "block11", "block12", "block13", "block14", "block15", "block16",
		"block17", "block18", "block19", "block20", "block21", "block22", "block23", "block24",
	};
	const topo_torus_spec_t *s = topo_torus_model_spec(b->c->torus);
	int side[3] = { s->dims[0], s->dims[1], s->dims[2] }, k, d, longest;

	for (k = 0; k < MAXBLOCKS; k++) {
		for (longest = 0, d = 1; d < 3; d++)
			if (side[d] > side[longest])
				longest = d;
		if (side[longest] <= 1)
			return;
		side[longest] = (side[longest] + 1) / 2;
		if (side[0] * side[1] * side[2] == 1)
			return; /* the finest block is the router itself */
		memcpy(b->block[k], side, sizeof(side));
		add_cand(b, TOPO_LEVEL_NETWORK, names[k], HWLOC_OBJ_MACHINE, -10 - k);
	}
}

static void make_cands(struct build *b)
{
	static const char *group_names[] = { "leaf",   "group1", "group2", "group3", "group4",
					     "group5", "group6", "group7", "group8", "group9" };
	int k, K;
	size_t j;

	b->ncand = 0;
	add_cand(b, TOPO_LEVEL_ROOT, "root", HWLOC_OBJ_MACHINE, -2);
	if (b->net_mode == 1) {
		K = topo_fabric_network_levels(b->c->fabric);
		if (K > 10)
			K = 10;
		for (k = K - 1; k >= 0; k--) /* with dragonfly groups, level 1 is the group: "dgroup" */
			add_cand(b, TOPO_LEVEL_NETWORK,
				 k == 1 && topo_fabric_ngroups(b->c->fabric) ? TOPO_DGROUP_LEVEL : group_names[k],
				 HWLOC_OBJ_MACHINE, k);
		if (K <= 0)
			add_cand(b, TOPO_LEVEL_NETWORK, "leaf", HWLOC_OBJ_MACHINE, 0);
	} else if (b->net_mode == 2) {
		add_torus_blocks(b);
		add_cand(b, TOPO_LEVEL_NETWORK, "router", HWLOC_OBJ_MACHINE, -1);
	}
	b->host_cand = b->ncand;
	add_cand(b, TOPO_LEVEL_HOST, "host", HWLOC_OBJ_MACHINE, -2);
	for (j = 0; j < NHW; j++)
		b->cand[b->ncand++] = hw_levels[j];
}

/* ---- nested dense ids ---------------------------------------------------------------------------- */

struct pairmap {
	uint64_t *raw;
	uint32_t *parent, *val; /* val: id + 1, 0 = empty */
	size_t cap;
};

static uint32_t pair_id(struct pairmap *m, uint32_t parent, uint64_t raw, uint32_t *next)
{
	uint64_t h = (raw * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)parent * 0xC2B2AE3D27D4EB4FULL);
	size_t i = (size_t)(h ^ (h >> 29)) & (m->cap - 1);

	for (; m->val[i]; i = (i + 1) & (m->cap - 1))
		if (m->raw[i] == raw && m->parent[i] == parent)
			return m->val[i] - 1;
	m->raw[i] = raw;
	m->parent[i] = parent;
	m->val[i] = ++*next;
	return *next - 1;
}

static int check_slots(struct build *b, hwloc_obj_t *pus)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		const topo_slot_t *s = &b->slots[i];
		const struct topo_host *h = s->host < b->c->nhosts ? &b->c->hosts[s->host] : NULL;

		errno = EINVAL;
		if (!h)
			return rm_error_set(b->err, "slots", 0, 0, "slot %zu: no host %u in the cluster", i, s->host);
		if (!h->type)
			return rm_error_set(b->err, "slots", 0, 0, "slot %zu: host %s has no hardware data", i,
					    h->name);
		pus[i] = hwloc_get_obj_by_type(h->type->topo, HWLOC_OBJ_PU, s->pu);
		if (!pus[i])
			return rm_error_set(b->err, "slots", 0, 0, "slot %zu: host %s has no PU %u (it has %u)", i,
					    h->name, s->pu, h->type->npus);
	}
	return 0;
}

static int nest_ids(struct build *b)
{
	struct pairmap m;
	hwloc_obj_t *pus = malloc(b->n * sizeof(*pus));
	size_t i, nc = (size_t)b->ncand;
	int l, r = -1;

	m.cap = 16;
	while (m.cap < b->n * 2)
		m.cap *= 2;
	m.raw = malloc(m.cap * sizeof(*m.raw));
	m.parent = malloc(m.cap * sizeof(*m.parent));
	m.val = malloc(m.cap * sizeof(*m.val));
	b->ids = malloc(b->n * nc * sizeof(*b->ids));
	b->count = calloc(nc, sizeof(*b->count));
	if (!pus || !m.raw || !m.parent || !m.val || !b->ids || !b->count) {
		errno = ENOMEM;
		rm_error_set(b->err, "target", 0, 0, "out of memory for %zu slots", b->n);
		goto out;
	}
	if (check_slots(b, pus) < 0)
		goto out;
	for (l = 0; l < b->ncand; l++) {
		memset(m.val, 0, m.cap * sizeof(*m.val));
		for (i = 0; i < b->n; i++) {
			uint32_t parent = l ? b->ids[i * nc + (size_t)l - 1] : 0;

			b->ids[i * nc + (size_t)l] = pair_id(&m, parent, raw_key(b, i, l, pus[i]), &b->count[l]);
		}
	}
	r = 0;
out:
	free(pus);
	free(m.raw);
	free(m.parent);
	free(m.val);
	return r;
}

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct build *b = arg;
	size_t a = *(const size_t *)pa, c = *(const size_t *)pb, nc = (size_t)b->ncand;
	const uint32_t *ra = b->ids + a * nc, *rc = b->ids + c * nc;
	size_t l;

	for (l = 0; l < nc; l++)
		if (ra[l] != rc[l])
			return ra[l] < rc[l] ? -1 : 1;
	return a < c ? -1 : a > c;
}

/* Sorts slots depth-first and renumbers ids in that order (b->ids becomes sorted rows). */
static int sort_depth_first(struct build *b)
{
	size_t i, l, nc = (size_t)b->ncand;
	uint32_t *sorted = malloc(b->n * nc * sizeof(*sorted));

	b->order = malloc(b->n * sizeof(*b->order));
	if (!sorted || !b->order) {
		free(sorted);
		errno = ENOMEM;
		return rm_error_set(b->err, "target", 0, 0, "out of memory");
	}
	for (i = 0; i < b->n; i++)
		b->order[i] = i;
	qsort_r(b->order, b->n, sizeof(*b->order), cmp_rows, b);
	for (i = 0; i < b->n; i++) {
		const uint32_t *row = b->ids + b->order[i] * nc, *prev = i ? b->ids + b->order[i - 1] * nc : NULL;
		int changed = !prev;

		for (l = 0; l < nc; l++) {
			changed = changed || row[l] != prev[l];
			sorted[i * nc + l] = !prev ? 0 : sorted[(i - 1) * nc + l] + (changed ? 1 : 0);
		}
		if (prev && !changed) {
			const topo_slot_t *s = &b->slots[b->order[i]];

			free(sorted);
			errno = EINVAL;
			return rm_error_set(b->err, "slots", 0, 0, "slot (host %s, PU %u) is listed twice",
					    b->c->hosts[s->host].name, s->pu);
		}
	}
	free(b->ids);
	b->ids = sorted;
	return 0;
}

/* ---- levels kept ------------------------------------------------------------------------------- */

static uint32_t cand_count(const struct build *b, int l)
{
	return b->ids[(b->n - 1) * (size_t)b->ncand + (size_t)l] + 1;
}

/* Runs of candidate levels with equal group counts are the same partition: keep one per run (the
 * root, the host level, the slot level and a dragonfly group level are always kept: explain tells
 * traffic inside one group from traffic across groups by that level, even when the slots are all in
 * one group). */
static void choose_levels(struct build *b)
{
	int s = 0, e, l, leaf = b->ncand - 1;

	b->nkeep = 0;
	while (s < b->ncand) {
		int kept = 0;

		for (e = s; e + 1 < b->ncand && cand_count(b, e + 1) == cand_count(b, s); e++)
			;
		for (l = s; l <= e; l++)
			if (l == 0 || l == b->host_cand || l == leaf || !strcmp(b->cand[l].name, TOPO_DGROUP_LEVEL)) {
				b->keep[b->nkeep++] = l;
				kept = 1;
			}
		if (!kept)
			b->keep[b->nkeep++] = s;
		s = e + 1;
	}
}

/* Deepest kept level (index into keep[]) shared by sorted slots i and j. */
static int common_kept(const struct build *b, size_t i, size_t j)
{
	const uint32_t *ri = b->ids + i * (size_t)b->ncand, *rj = b->ids + j * (size_t)b->ncand;
	int k = 0;

	while (k + 1 < b->nkeep && ri[b->keep[k + 1]] == rj[b->keep[k + 1]])
		k++;
	return k;
}

static topo_slot_t sorted_slot(const struct build *b, size_t i)
{
	return b->slots[b->order[i]];
}

/* cost[k]: the largest distance between adjacent slots whose deepest common kept level is k; levels
 * without such a pair take the next deeper level's cost. */
static int level_costs(struct build *b, double *cost)
{
	size_t i;
	int k;

	for (k = 0; k < b->nkeep; k++)
		cost[k] = -1.0;
	for (i = 0; i + 1 < b->n; i++) {
		topo_slot_t sa = sorted_slot(b, i), sb = sorted_slot(b, i + 1);
		double d = topo_slot_distance(b->c, sa, sb);

		k = common_kept(b, i, i + 1);
		if (d < 0 && b->cut)
			continue; /* a pair the fabric does not connect: penalty distance (apply_cut) */
		if (d < 0) {
			errno = EHOSTUNREACH;
			return rm_error_set(b->err, "slots", 0, 0, "hosts %s and %s are not connected",
					    b->c->hosts[sa.host].name, b->c->hosts[sb.host].name);
		}
		if (d > cost[k])
			cost[k] = d;
	}
	cost[b->nkeep - 1] = 0.0;
	for (k = b->nkeep - 2; k >= 0; k--)
		if (cost[k] < cost[k + 1])
			cost[k] = cost[k + 1];
	return 0;
}

/* ---- network distances that are not a tree ---------------------------------------------------- */

struct netmat {
	uint32_t ngroups;
	uint32_t *host_group; /* target host -> network group */
	float *m;             /* ngroups x ngroups */
};

struct nettorus {
	topo_torus_spec_t spec;
	long *node;            /* target host -> torus node */
	double lat, hop, xfer; /* distance: lat + hop * (link-cost-weighted hops) + xfer */
};

static double netmat_dist(const topo_target_t *t, uint32_t ha, uint32_t hb)
{
	const struct netmat *x = t->net_ctx;

	return x->m[(size_t)x->host_group[ha] * x->ngroups + x->host_group[hb]];
}

static void netmat_free(void *p)
{
	struct netmat *x = p;

	free(x->host_group);
	free(x->m);
	free(x);
}

static double nettorus_dist(const topo_target_t *t, uint32_t ha, uint32_t hb)
{
	const struct nettorus *x = t->net_ctx;
	long ra = x->node[ha] / x->spec.nodes_per_router, rb = x->node[hb] / x->spec.nodes_per_router;
	double dist = 0;
	int d, ca[3], cb[3];

	for (d = 2; d >= 0; d--) {
		ca[d] = (int)(ra % x->spec.dims[d]);
		cb[d] = (int)(rb % x->spec.dims[d]);
		ra /= x->spec.dims[d];
		rb /= x->spec.dims[d];
	}
	for (d = 0; d < 3; d++) {
		int h = abs(ca[d] - cb[d]);

		if (x->spec.wrap[d] && x->spec.dims[d] - h < h)
			h = x->spec.dims[d] - h;
		dist += h * x->spec.link_cost[d];
	}
	return x->lat + x->xfer + dist * x->hop; /* the order of topo_host_net_cost: same rounding */
}

static void nettorus_free(void *p)
{
	struct nettorus *x = p;

	free(x->node);
	free(x);
}

static int attach_torus(struct build *b, topo_target_t *t)
{
	struct nettorus *x = calloc(1, sizeof(*x));
	const topo_costs_t *k = &b->c->costs;
	size_t i;

	if (!x || !(x->node = malloc(t->nhosts * sizeof(*x->node)))) {
		free(x);
		return -1;
	}
	x->spec = *topo_torus_model_spec(b->c->torus);
	for (i = 0; i < b->n; i++)
		x->node[t->slot_host[i]] = b->c->hosts[t->slot[i].host].torus_node;
	x->lat = k->lat_net;
	x->hop = topo_torus_hop_cost(k); /* latency and hop-bytes transfer (cost.c) */
	x->xfer = k->bw_net > 0 ? k->ref_bytes / (k->bw_net * 1000.0) : 0.0;
	t->net_ctx = x;
	t->net_dist = nettorus_dist;
	t->net_free = nettorus_free;
	return 0;
}

/* m[g1][g2]: network cost between representative hosts of groups g1 and g2 (rep2: a second host of
 * the group, for the diagonal); lo/hi: range of those costs per deepest common kept level. */
static int fill_matrix(struct build *b, const topo_target_t *t, uint32_t G, const size_t *rep, const size_t *rep2,
		       float *m, double *lo, double *hi)
{
	uint32_t g1, g2;
	int k;

	for (k = 0; k < b->nkeep; k++)
		lo[k] = INFINITY, hi[k] = -1.0;
	for (g1 = 0; g1 < G; g1++)
		for (g2 = 0; g2 < G; g2++) {
			size_t j = g1 == g2 ? rep2[g1] : rep[g2];
			uint32_t ha = sorted_slot(b, rep[g1]).host, hb;
			double d = 0.0;

			if (j != SIZE_MAX && b->cut &&
			    !topo_conn_linked(&b->conn, b->conn.sig[t->slot_host[rep[g1]]],
					      b->conn.sig[t->slot_host[j]])) {
				d = -1.0; /* not connected: the penalty, once known (apply_cut) */
			} else if (j != SIZE_MAX) {
				hb = sorted_slot(b, j).host;
				if ((d = topo_host_net_cost(b->c, ha, hb)) < 0) {
					errno = EHOSTUNREACH;
					return rm_error_set(b->err, "slots", 0, 0, "hosts %s and %s are not connected",
							    b->c->hosts[ha].name, b->c->hosts[hb].name);
				}
				k = common_kept(b, rep[g1], j);
				lo[k] = d < lo[k] ? d : lo[k];
				hi[k] = d > hi[k] ? d : hi[k];
			}
			m[(size_t)g1 * G + g2] = (float)d;
		}
	return 0;
}

/* Network classes of the sorted slots in cls[]: the leaf-level network group (leaf switch, host outside
 * the fabric) of each slot's host, split by fabric signature when some hosts are not connected (hosts of
 * one leaf group are then not interchangeable). Returns the class count, 0 when out of memory. */
static uint32_t net_classes(struct build *b, const topo_target_t *t, int gl, uint32_t *cls)
{
	size_t i, nc = (size_t)b->ncand;
	struct pairmap m;
	uint32_t G = 0;

	if (!b->cut) {
		for (i = 0; i < b->n; i++)
			cls[i] = b->ids[i * nc + (size_t)gl];
		return cand_count(b, gl);
	}
	m.cap = 16;
	while (m.cap < b->n * 2)
		m.cap *= 2;
	m.raw = malloc(m.cap * sizeof(*m.raw));
	m.parent = malloc(m.cap * sizeof(*m.parent));
	m.val = calloc(m.cap, sizeof(*m.val));
	for (i = 0; m.raw && m.parent && m.val && i < b->n; i++)
		cls[i] = pair_id(&m, b->ids[i * nc + (size_t)gl], b->conn.sig[t->slot_host[i]], &G);
	if (!m.raw || !m.parent || !m.val)
		G = 0;
	free(m.raw), free(m.parent), free(m.val);
	return G;
}

/* Distances between the network classes (net_classes) of the target, by representative hosts. Raises
 * cost[] to the largest distance seen per level; when distances within one level differ, or some hosts
 * are not connected, the tree is not exact and t gets net_dist over this matrix. */
static int attach_matrix(struct build *b, topo_target_t *t, double *cost)
{
	int gl = b->host_cand - 1, k, irregular = b->cut;
	uint32_t G = 0, g1, *cls = NULL;
	size_t *rep = NULL, *rep2 = NULL, i;
	double lo[MAXCAND], hi[MAXCAND];
	struct netmat *x = NULL;
	float *m = NULL;

	if (b->net_mode != 1 || gl < 1)
		return 0;
	if (!(cls = malloc(b->n * sizeof(*cls))) || !(G = net_classes(b, t, gl, cls)))
		goto nomem;
	if (G > MAX_MATRIX_GROUPS) {
		free(cls);
		return 0;
	}
	rep = malloc(G * sizeof(*rep));
	rep2 = malloc(G * sizeof(*rep2));
	m = malloc((size_t)G * G * sizeof(*m));
	if (!rep || !rep2 || !m)
		goto nomem;
	for (g1 = 0; g1 < G; g1++)
		rep[g1] = rep2[g1] = SIZE_MAX;
	for (i = 0; i < b->n; i++) {
		uint32_t g = cls[i];

		if (rep[g] == SIZE_MAX)
			rep[g] = i;
		else if (rep2[g] == SIZE_MAX && sorted_slot(b, i).host != sorted_slot(b, rep[g]).host)
			rep2[g] = i;
	}
	if (fill_matrix(b, t, G, rep, rep2, m, lo, hi) < 0) {
		free(rep), free(rep2), free(m), free(cls);
		return -1;
	}
	for (k = b->nkeep - 2; k >= 0; k--) {
		irregular |= hi[k] >= 0 && hi[k] - lo[k] > 1e-9 * hi[k];
		if (hi[k] > cost[k])
			cost[k] = hi[k];
		if (cost[k] < cost[k + 1])
			cost[k] = cost[k + 1];
	}
	free(rep2);
	rep2 = NULL;
	if (!irregular) {
		free(rep), free(m), free(cls);
		return 0;
	}
	if (!(x = calloc(1, sizeof(*x))) || !(x->host_group = malloc(t->nhosts * sizeof(uint32_t))))
		goto nomem;
	for (i = 0; i < b->n; i++)
		x->host_group[t->slot_host[i]] = cls[i];
	x->ngroups = G;
	x->m = m;
	free(rep), free(cls);
	t->net_ctx = x;
	t->net_dist = netmat_dist;
	t->net_free = netmat_free;
	return 0;
nomem:
	free(rep), free(rep2), free(m), free(x), free(cls);
	errno = ENOMEM;
	return rm_error_set(b->err, "target", 0, 0, "out of memory");
}

/* ---- hosts the fabric does not connect ----------------------------------------------------------- */

/* b->conn over the target's hosts (target-local numbering), b->cut when some pair is not connected.
 * Beyond TOPO_CONN_MAX_SIGS signatures the check is skipped (an unconnected pair then fails the build). */
static int check_connected(struct build *b, const topo_target_t *t)
{
	size_t *hosts, i;
	int r = 0;

	if (b->net_mode != 1)
		return 0;
	if (!(hosts = malloc(t->nhosts * sizeof(*hosts))))
		return errno = ENOMEM, -1;
	for (i = 0; i < b->n; i++)
		hosts[t->slot_host[i]] = t->slot[i].host;
	if (topo_conn_build(b->c, hosts, t->nhosts, &b->conn) < 0)
		r = errno == E2BIG ? 0 : -1;
	else
		b->cut = b->conn.cut[0] != SIZE_MAX;
	free(hosts);
	return r;
}

/* Unconnected pairs get twice the largest network distance of the target (at least the one-switch
 * network cost): in the net_dist matrix, and as the root's cost, the level where such pairs meet (hosts
 * of one top-level switch group are connected), so that tree-based engines keep heavy traffic within a
 * group too. Sets t->warning. */
static int apply_cut(struct build *b, topo_target_t *t)
{
	const topo_costs_t *k = &b->c->costs;
	double base = k->lat_net + (k->bw_net > 0 ? k->ref_bytes / (k->bw_net * 1000.0) : 0.0);
	double pen = 2.0 * (t->cost[0] > base ? t->cost[0] : base);
	size_t i;

	if (t->net_dist == netmat_dist) {
		struct netmat *x = t->net_ctx;

		for (i = 0; i < (size_t)x->ngroups * x->ngroups; i++)
			if (x->m[i] < 0)
				x->m[i] = (float)pen;
	}
	t->cost[0] = pen;
	if (!(t->warning = topo_conn_message(&b->conn, (const char *const *)t->host_name, pen)))
		return errno = ENOMEM, -1;
	return 0;
}

/* ---- the links of a dragonfly's routes (target_links.c) --------------------------------------------- */

/* The fabric index of each target host, for target_links.c (a dragonfly's routes). */
static int attach_links(struct build *b, topo_target_t *t)
{
	size_t i;
	long *fh;
	int r = 0;

	if (b->net_mode != 1 || b->cut || !topo_fabric_ngroups(b->c->fabric))
		return 0;
	if (!(fh = malloc(t->nhosts * sizeof(*fh))))
		return errno = ENOMEM, -1;
	for (i = 0; i < b->n; i++)
		r |= (fh[t->slot_host[i]] = b->c->hosts[t->slot[i].host].fabric_host) < 0;
	r = r ? 0 : topo_links_attach(b->c, t, fh);
	free(fh);
	return r;
}

/* ---- assembling the target ----------------------------------------------------------------------- */

static int alloc_target(topo_target_t *t, size_t n, int nl, uint32_t nhosts)
{
	t->nslots = (uint32_t)n;
	t->nlevels = nl;
	t->nhosts = nhosts;
	t->group = malloc(n * (size_t)nl * sizeof(*t->group));
	t->ngroups = malloc((size_t)nl * sizeof(*t->ngroups));
	t->cost = malloc((size_t)nl * sizeof(*t->cost));
	t->kind = malloc((size_t)nl * sizeof(*t->kind));
	t->level_name = calloc((size_t)nl, sizeof(*t->level_name));
	t->slot_host = malloc(n * sizeof(*t->slot_host));
	t->slot = malloc(n * sizeof(*t->slot));
	t->slot_pu_os = malloc(n * sizeof(*t->slot_pu_os));
	t->given = malloc(n * sizeof(*t->given));
	t->host_name = calloc(nhosts, sizeof(*t->host_name));
	return t->group && t->ngroups && t->cost && t->kind && t->level_name && t->slot_host && t->slot &&
			       t->slot_pu_os && t->given && t->host_name
		       ? 0
		       : -1;
}

static int fill_levels(struct build *b, topo_target_t *t)
{
	size_t i, nc = (size_t)b->ncand;
	int k, leaf = b->ncand - 1, leaf_is_core = cand_count(b, leaf - 1) == cand_count(b, leaf);

	for (k = 0; k < b->nkeep; k++) {
		const struct cand *cd = &b->cand[b->keep[k]];
		int core = b->keep[k] == leaf && leaf_is_core;

		t->ngroups[k] = cand_count(b, b->keep[k]);
		t->kind[k] = core ? TOPO_LEVEL_CORE : cd->kind;
		if (!(t->level_name[k] = strdup(core ? "core" : cd->name)))
			return -1;
		if (b->keep[k] == b->host_cand)
			t->host_level = k;
	}
	for (i = 0; i < b->n; i++) {
		const uint32_t *row = b->ids + i * nc;
		topo_slot_t s = sorted_slot(b, i);
		hwloc_obj_t pu = hwloc_get_obj_by_type(b->c->hosts[s.host].type->topo, HWLOC_OBJ_PU, s.pu);

		for (k = 0; k < b->nkeep; k++)
			t->group[i * (size_t)b->nkeep + (size_t)k] = row[b->keep[k]];
		t->slot[i] = s;
		t->given[b->order[i]] = (uint32_t)i;
		t->slot_pu_os[i] = pu->os_index;
		t->slot_host[i] = row[b->host_cand];
		if (!t->host_name[t->slot_host[i]] &&
		    !(t->host_name[t->slot_host[i]] = strdup(b->c->hosts[s.host].name)))
			return -1;
	}
	return 0;
}

static topo_target_t *assemble(struct build *b)
{
	topo_target_t *t = calloc(1, sizeof(*t));

	if (!t || alloc_target(t, b->n, b->nkeep, cand_count(b, b->host_cand)) < 0 || fill_levels(b, t) < 0) {
		topo_target_destroy(t);
		errno = ENOMEM;
		rm_error_set(b->err, "target", 0, 0, "out of memory");
		return NULL;
	}
	if (check_connected(b, t) < 0 || level_costs(b, t->cost) < 0 || attach_matrix(b, t, t->cost) < 0 ||
	    (b->cut && apply_cut(b, t) < 0) || (b->net_mode == 2 && attach_torus(b, t) < 0) || attach_links(b, t) < 0) {
		int e = errno;

		topo_target_destroy(t);
		errno = e ? e : ENOMEM;
		rm_error_set(b->err, "target", 0, 0, "out of memory");
		return NULL;
	}
	return t;
}

topo_target_t *topo_target_from_slots(topo_cluster_t c, const topo_slot_t *slots, size_t n, rm_error_t *err)
{
	struct build b;
	topo_target_t *t = NULL;

	memset(&b, 0, sizeof(b));
	b.c = c;
	b.slots = slots;
	b.n = n;
	b.err = err;
	errno = EINVAL;
	if (!c->finalized)
		return rm_error_set(err, "target", 0, 0, "the cluster is not finalized"), NULL;
	if (n == 0 || n > UINT32_MAX - 1)
		return rm_error_set(err, "slots", 0, 0, "%zu slots: need 1 to 4294967294", n), NULL;
	choose_net(&b);
	make_cands(&b);
	if (nest_ids(&b) == 0 && sort_depth_first(&b) == 0) {
		choose_levels(&b);
		t = assemble(&b);
	}
	free(b.ids);
	free(b.count);
	free(b.order);
	topo_conn_free(&b.conn);
	return t;
}

/* Appends the slots of one host: the first PU of every core, or every PU. */
static size_t host_slots(hwloc_topology_t topo, uint32_t h, int per_core, topo_slot_t *out)
{
	int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE), i;
	size_t n = 0;

	if (per_core && ncores > 0) {
		for (i = 0; i < ncores; i++) {
			hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)i);
			hwloc_obj_t pu =
				hwloc_get_next_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU, NULL);

			if (pu)
				out[n++] = (topo_slot_t){ h, pu->logical_index };
		}
		return n;
	}
	for (i = 0; i < hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU); i++)
		out[n++] = (topo_slot_t){ h, (uint32_t)i };
	return n;
}

topo_target_t *topo_target_from_hosts(topo_cluster_t c, const char *const *hosts, size_t nhosts, int per_core,
				      rm_error_t *err)
{
	size_t i, n = 0, total = 0;
	topo_slot_t *slots;
	topo_target_t *t;
	long h;

	for (i = 0; i < nhosts; i++) {
		if ((h = topo_host_find(c, hosts[i])) < 0) {
			errno = ENOENT;
			return rm_error_set(err, hosts[i], 0, 0, "unknown host"), NULL;
		}
		if (!c->hosts[h].type) {
			errno = ENOENT;
			return rm_error_set(err, hosts[i], 0, 0, "host has no hardware data"), NULL;
		}
		total += c->hosts[h].type->npus;
	}
	if (!(slots = malloc((total ? total : 1) * sizeof(*slots)))) {
		errno = ENOMEM;
		return rm_error_set(err, "target", 0, 0, "out of memory"), NULL;
	}
	for (i = 0; i < nhosts; i++) {
		h = topo_host_find(c, hosts[i]);
		n += host_slots(c->hosts[h].type->topo, (uint32_t)h, per_core, slots + n);
	}
	t = topo_target_from_slots(c, slots, n, err);
	free(slots);
	return t;
}
