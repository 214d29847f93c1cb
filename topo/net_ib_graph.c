/*
 * topo/net_ib_graph.c: what topo_fabric_finalize() derives from the nodes and links: hosts and their
 * attachments, dense switches and their adjacency, switch levels, leaf-to-leaf hops and the leaf groups
 * of the network levels (choices documented in net_ib_private.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"

#define IB_TREE_TRIES 4 /* switches of a group tried as its common top (make_tree) */
#define IB_TREE_DONE 0x10
#define IB_TREE_HAS_TOP 0x20

void ib_graph_reset(struct topo_fabric *f)
{
	size_t i;

	for (i = 0; i < f->nhosts; i++)
		free(f->hosts[i].name);
	free(f->hosts);
	ib_strmap_free(&f->host_by_name);
	free(f->att);
	free(f->sw_node);
	free(f->adj_off);
	free(f->adj);
	free(f->sw_level);
	free(f->leaf_of_sw);
	free(f->leaf_sw);
	free(f->leaf_hops);
	free(f->group);
	free(f->row_cache);
	free(f->row_ready);
	free(f->bfs_queue);
	free(f->bfs_dist);
	free(f->norm_speed);
	free(f->norm_width);
	ib_groups_reset(f);
	f->nrails = 0;
	f->norm_speed = f->norm_width = NULL;
	f->hosts = NULL;
	f->att = NULL;
	f->sw_node = f->adj_off = f->adj = f->leaf_sw = f->group = f->bfs_queue = NULL;
	f->sw_level = NULL;
	f->leaf_of_sw = NULL;
	f->leaf_hops = f->row_cache = f->row_ready = f->bfs_dist = NULL;
	f->tree = 0;
	f->nhosts = f->natt = f->nsw = f->nleaves = 0;
	f->max_level = -1;
	f->nlevels = 0;
	f->row_next = 0;
	for (i = 0; i < IB_ROW_CACHE; i++)
		f->row_src[i] = -1;
	for (i = 0; i < f->nnodes; i++)
		f->nodes[i].host = f->nodes[i].sw = -1;
	f->finalized = 0;
}

/* Vendor strings that name no host: "MT4129 ConnectX7   Mellanox Technologies", "Mellanox
 * Technologies Aggregation Node", "ConnectX-6 ...", "localhost ...", an empty description. */
int ib_desc_is_generic(const char *desc)
{
	static const char *const prefixes[] = { "Mellanox",  "NVIDIA", "Nvidia", "ConnectX", "Connect-IB", "InfiniHost",
						"localhost", "Intel",  "QLogic", "Unknown",  NULL };
	const char *p = ib_skip_ws(desc);
	int i;

	if (!*p || *p == '(')
		return 1;
	if (p[0] == 'M' && p[1] == 'T' && p[2] >= '0' && p[2] <= '9')
		return 1;
	for (i = 0; prefixes[i]; i++)
		if (!strncmp(p, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/* Host name of CA node n (malloc'd); sets the node's generic flag. */
static char *ca_host_name(struct topo_fabric *f, struct ib_node *nd)
{
	const char *m = ib_namemap_lookup(f, nd->guid);
	const char *p;
	char buf[24];
	size_t len;

	if (!m && nd->port_guid)
		m = ib_namemap_lookup(f, nd->port_guid);
	if (!m && ib_hwloc_node_of(f, nd->guid)) /* a -p port whose host's hwloc XML gives the node GUID */
		m = ib_namemap_lookup(f, ib_hwloc_node_of(f, nd->guid));
	nd->generic = nd->hwloc_named = 0;
	if (m)
		return strdup(m);
	if (ib_desc_is_generic(nd->desc) && (m = ib_hwloc_lookup(f, nd->guid)) != NULL) {
		nd->hwloc_named = 1;
		return strdup(m);
	}
	if (ib_desc_is_generic(nd->desc) && nd->port_guid && (m = ib_hwloc_lookup(f, nd->port_guid)) != NULL) {
		nd->hwloc_named = 1;
		return strdup(m);
	}
	if (ib_desc_is_generic(nd->desc)) {
		nd->generic = 1;
		snprintf(buf, sizeof(buf), "0x%016llx", (unsigned long long)nd->guid);
		return strdup(buf);
	}
	p = ib_skip_ws(nd->desc);
	for (len = 0; p[len] && p[len] != ' ' && p[len] != '\t'; len++)
		;
	return ib_strndup(p, len);
}

static int is_host(const struct ib_node *nd)
{
	return nd->type == IBN_CA && !nd->aggregation;
}

static const struct ib_node *peer(const struct topo_fabric *f, const struct ib_node *nd, unsigned p)
{
	return &f->nodes[ib_port_peer(f->nodes, f->links, (uint32_t)(nd - f->nodes), p, NULL)];
}

/* Hosts by name; counts each host's connected ports in hosts[].n. */
static int make_hosts(struct topo_fabric *f)
{
	size_t i, cap = 0;

	for (i = 0; i < f->nnodes; i++) {
		struct ib_node *nd = &f->nodes[i];
		char *name;
		uint32_t h;
		unsigned p;

		if (!is_host(nd))
			continue;
		if (!(name = ca_host_name(f, nd)))
			return -1;
		h = ib_strmap_get(&f->host_by_name, name);
		if (h == IB_NONE) {
			if (f->nhosts == cap) {
				struct ib_host *nh = realloc(f->hosts, (cap = cap ? cap * 2 : 256) * sizeof(*nh));

				if (!nh)
					return free(name), -1;
				f->hosts = nh;
			}
			h = (uint32_t)f->nhosts;
			f->hosts[h] = (struct ib_host){ name, 0, 0, -1 };
			if (ib_strmap_put(&f->host_by_name, name, h) < 0)
				return free(name), -1;
			f->nhosts++;
		} else {
			free(name);
		}
		nd->host = h;
		for (p = 1; nd->port_link && p <= nd->nports; p++)
			f->hosts[h].n += nd->port_link[p] != IB_NONE;
	}
	return 0;
}

/* Attachments of every host, contiguous per host. */
static int make_attachments(struct topo_fabric *f)
{
	size_t i, off = 0;

	for (i = 0; i < f->nhosts; i++) {
		f->hosts[i].first = (uint32_t)off;
		off += f->hosts[i].n;
		f->hosts[i].n = 0;
	}
	f->natt = off;
	f->att = malloc((off ? off : 1) * sizeof(*f->att));
	if (!f->att)
		return -1;
	for (i = 0; i < f->nnodes; i++) {
		const struct ib_node *nd = &f->nodes[i];
		unsigned p;

		if (nd->host < 0)
			continue;
		for (p = 1; nd->port_link && p <= nd->nports; p++) {
			struct ib_host *h = &f->hosts[nd->host];
			const struct ib_node *o;

			if (nd->port_link[p] == IB_NONE)
				continue;
			o = peer(f, nd, p);
			f->att[h->first + h->n++] =
				(struct ib_attach){ (uint32_t)i, nd->subnet,
						    o->sw,       o->type == IBN_CA ? (uint32_t)(o - f->nodes) : IB_NONE,
						    (uint16_t)p, 0 };
			if (h->leaf < 0 && o->sw >= 0)
				h->leaf = o->sw;
		}
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Dense switches and their adjacency (CSR, parallel links merged). */
static int make_switches(struct topo_fabric *f)
{
	size_t i, s, nadj = 0;

	for (i = 0; i < f->nnodes; i++)
		f->nsw += f->nodes[i].type == IBN_SW;
	f->sw_node = malloc((f->nsw + 1) * sizeof(*f->sw_node));
	f->adj_off = calloc(f->nsw + 1, sizeof(*f->adj_off));
	if (!f->sw_node || !f->adj_off)
		return -1;
	for (i = 0, s = 0; i < f->nnodes; i++)
		if (f->nodes[i].type == IBN_SW) {
			f->sw_node[s] = (uint32_t)i;
			f->nodes[i].sw = (long)s++;
		}
	for (i = 0; i < f->nlinks; i++) {
		const struct ib_node *a = &f->nodes[f->links[i].node[0]], *b = &f->nodes[f->links[i].node[1]];

		if (a->sw >= 0 && b->sw >= 0 && a != b) {
			f->adj_off[a->sw + 1]++;
			f->adj_off[b->sw + 1]++;
			nadj += 2;
		}
	}
	for (s = 0; s < f->nsw; s++)
		f->adj_off[s + 1] += f->adj_off[s];
	f->adj = malloc((nadj ? nadj : 1) * sizeof(*f->adj));
	if (!f->adj)
		return -1;
	{
		uint32_t *fill = malloc((f->nsw + 1) * sizeof(*fill));

		if (!fill)
			return -1;
		memcpy(fill, f->adj_off, (f->nsw + 1) * sizeof(*fill));
		for (i = 0; i < f->nlinks; i++) {
			const struct ib_node *a = &f->nodes[f->links[i].node[0]], *b = &f->nodes[f->links[i].node[1]];

			if (a->sw >= 0 && b->sw >= 0 && a != b) {
				f->adj[fill[a->sw]++] = (uint32_t)b->sw;
				f->adj[fill[b->sw]++] = (uint32_t)a->sw;
			}
		}
		free(fill);
	}
	return 0;
}

/* Sorts each adjacency row and drops repeated neighbours (parallel links) in place. */
static void dedupe_adjacency(struct topo_fabric *f)
{
	uint32_t s, out = 0, start;

	for (s = 0, start = 0; s < f->nsw; s++) {
		uint32_t end = f->adj_off[s + 1], j, row = out;

		qsort(f->adj + start, end - start, sizeof(*f->adj), cmp_u32);
		for (j = start; j < end; j++)
			if (out == row || f->adj[out - 1] != f->adj[j])
				f->adj[out++] = f->adj[j];
		f->adj_off[s] = row;
		start = end;
	}
	f->adj_off[f->nsw] = out;
}

/* BFS from switch src over all switches: dist[] (IB_HOPS_INF unreachable, saturating at 254). */
void ib_bfs(const struct topo_fabric *f, uint32_t *queue, uint8_t *dist, long src)
{
	size_t head = 0, tail = 0;

	memset(dist, IB_HOPS_INF, f->nsw);
	dist[src] = 0;
	queue[tail++] = (uint32_t)src;
	while (head < tail) {
		uint32_t u = queue[head++], j;
		uint8_t d = dist[u] < 254 ? dist[u] + 1 : 254;

		for (j = f->adj_off[u]; j < f->adj_off[u + 1]; j++) {
			if (dist[f->adj[j]] == IB_HOPS_INF) {
				dist[f->adj[j]] = d;
				queue[tail++] = f->adj[j];
			}
		}
	}
}

/* Row i of the leaf table from one BFS (caller holds cache_lock or is finalize). */
void ib_fill_leaf_row(struct topo_fabric *f, size_t i)
{
	size_t j;

	ib_bfs(f, f->bfs_queue, f->bfs_dist, f->leaf_sw[i]);
	for (j = 0; j < f->nleaves; j++)
		f->leaf_hops[i * f->nleaves + j] = f->bfs_dist[f->leaf_sw[j]];
}

/* Leaves: switches with a host; levels by multi-source BFS from them. */
static int make_levels(struct topo_fabric *f)
{
	size_t i, head = 0, tail = 0;
	uint32_t *q = malloc((f->nsw + 1) * sizeof(*q));

	f->sw_level = malloc((f->nsw + 1) * sizeof(*f->sw_level));
	f->leaf_of_sw = malloc((f->nsw + 1) * sizeof(*f->leaf_of_sw));
	f->leaf_sw = malloc((f->nsw + 1) * sizeof(*f->leaf_sw));
	if (!q || !f->sw_level || !f->leaf_of_sw || !f->leaf_sw)
		return free(q), -1;
	for (i = 0; i < f->nsw; i++) {
		f->sw_level[i] = -1;
		f->leaf_of_sw[i] = -1;
	}
	for (i = 0; i < f->natt; i++)
		if (f->att[i].sw >= 0 && f->sw_level[f->att[i].sw] < 0)
			f->sw_level[f->att[i].sw] = 0;
	for (i = 0; i < f->nsw; i++)
		if (f->sw_level[i] == 0) {
			f->leaf_of_sw[i] = (long)f->nleaves;
			f->leaf_sw[f->nleaves++] = (uint32_t)i;
			q[tail++] = (uint32_t)i;
		}
	while (head < tail) {
		uint32_t u = q[head++], j;

		if (f->sw_level[u] > f->max_level)
			f->max_level = f->sw_level[u];
		for (j = f->adj_off[u]; j < f->adj_off[u + 1]; j++)
			if (f->sw_level[f->adj[j]] < 0) {
				f->sw_level[f->adj[j]] = f->sw_level[u] + 1;
				q[tail++] = f->adj[j];
			}
	}
	free(q);
	return 0;
}

/* Leaf-to-leaf hop table when small enough (filled now if cheap, else lazily), else a BFS row cache;
 * none for a tree (hops from the leaf groups, ib_switch_hops). */
static int make_hops(struct topo_fabric *f)
{
	size_t i;
	double work = (double)f->nleaves * (double)(f->nsw + f->adj_off[f->nsw]);

	f->bfs_queue = malloc((f->nsw + 1) * sizeof(*f->bfs_queue));
	f->bfs_dist = malloc(f->nsw + 1);
	if (!f->bfs_queue || !f->bfs_dist)
		return -1;
	if (f->tree || f->nleaves > f->leaf_table_max) {
		f->row_cache = malloc((size_t)IB_ROW_CACHE * (f->nsw + 1));
		return f->row_cache ? 0 : -1;
	}
	f->leaf_hops = malloc(f->nleaves * f->nleaves + 1);
	if (!f->leaf_hops)
		return -1;
	if (work > f->eager_work_max) {
		f->row_ready = calloc(f->nleaves + 1, 1);
		return f->row_ready ? 0 : -1;
	}
	for (i = 0; i < f->nleaves; i++)
		ib_fill_leaf_row(f, i);
	return 0;
}

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x)
		x = parent[x] = parent[parent[x]];
	return x;
}

/* group[k * nsw + s]: smallest switch of s's component among switches of level <= k. */
static int make_groups(struct topo_fabric *f)
{
	size_t k, s;
	uint32_t *parent;

	f->nlevels = f->nleaves ? f->max_level + 1 : 0;
	if (!f->nlevels)
		return 0;
	f->group = malloc((size_t)f->nlevels * f->nsw * sizeof(*f->group));
	parent = malloc(f->nsw * sizeof(*parent));
	if (!f->group || !parent)
		return free(parent), -1;
	for (k = 0; k < (size_t)f->nlevels; k++) {
		for (s = 0; s < f->nsw; s++)
			parent[s] = (uint32_t)s;
		for (s = 0; s < f->nsw; s++) {
			uint32_t j;

			if (f->sw_level[s] < 0 || (size_t)f->sw_level[s] > k)
				continue;
			for (j = f->adj_off[s]; j < f->adj_off[s + 1]; j++) {
				uint32_t t = f->adj[j], rs, rt;

				if (f->sw_level[t] < 0 || (size_t)f->sw_level[t] > k)
					continue;
				rs = uf_find(parent, (uint32_t)s);
				rt = uf_find(parent, t);
				if (rs != rt)
					parent[rs > rt ? rs : rt] = rs < rt ? rs : rt;
			}
		}
		for (s = 0; s < f->nsw; s++)
			f->group[k * f->nsw + s] = f->sw_level[s] >= 0 && (size_t)f->sw_level[s] <= k
							   ? uf_find(parent, (uint32_t)s)
							   : IB_NONE;
	}
	free(parent);
	return 0;
}

/* Leaves the down-closure of switch s reaches (edges to the level below only), marking with stamp. */
static size_t down_leaves(const struct topo_fabric *f, uint32_t s, uint32_t *stack, uint32_t *mark, uint32_t stamp)
{
	size_t top = 0, leaves = 0;

	stack[top++] = s;
	mark[s] = stamp;
	while (top) {
		uint32_t u = stack[--top], j;

		leaves += f->sw_level[u] == 0;
		for (j = f->adj_off[u]; j < f->adj_off[u + 1]; j++) {
			uint32_t v = f->adj[j];

			if (f->sw_level[v] == f->sw_level[u] - 1 && mark[v] != stamp) {
				mark[v] = stamp;
				stack[top++] = v;
			}
		}
	}
	return leaves;
}

/*
 * Is the fabric a tree for hop counts: no two leaves linked, and every group of level k >= 1 that has a
 * switch of level k has one whose strictly descending paths reach every leaf of the group (a spine of
 * a 2-level fat tree, a pod's aggregation switch, a core switch; IB_TREE_TRIES tries per group). Then
 * two leaves are 2k switch hops apart, k the first level whose group holds both: at most 2k through
 * that switch, and at least 2k because a path between leaves of different level-(k-1) groups climbs
 * to level k and back (adjacent switches' levels differ by at most one). O(levels x (switches +
 * links)).
 */
static int make_tree(struct topo_fabric *f)
{
	uint32_t *cnt, *mark, *stack, stamp = 0;
	uint8_t *state; /* per group: tries so far (low bits), IB_TREE_DONE, IB_TREE_HAS_TOP */
	size_t i, k, s;
	int tree = 1;

	f->tree = 0;
	if (!f->nlevels || f->no_tree)
		return 0;
	for (i = 0; i < f->nleaves; i++)
		for (s = f->adj_off[f->leaf_sw[i]]; s < f->adj_off[f->leaf_sw[i] + 1]; s++)
			if (f->sw_level[f->adj[s]] == 0)
				return 0; /* leaves linked to each other */
	cnt = malloc(f->nsw * sizeof(*cnt));
	mark = calloc(f->nsw, sizeof(*mark));
	stack = malloc(f->nsw * sizeof(*stack));
	state = malloc(f->nsw);
	if (!cnt || !mark || !stack || !state) {
		tree = -1;
		goto out;
	}
	for (k = 1; tree == 1 && k < (size_t)f->nlevels; k++) {
		const uint32_t *g = f->group + k * f->nsw;

		memset(cnt, 0, f->nsw * sizeof(*cnt));
		memset(state, 0, f->nsw);
		for (i = 0; i < f->nleaves; i++)
			cnt[g[f->leaf_sw[i]]]++;
		for (s = 0; s < f->nsw; s++) {
			uint8_t *st;

			if (f->sw_level[s] != (int)k)
				continue;
			st = &state[g[s]];
			*st |= IB_TREE_HAS_TOP;
			if ((*st & IB_TREE_DONE) || (*st & 7) >= IB_TREE_TRIES)
				continue;
			(*st)++;
			if (down_leaves(f, (uint32_t)s, stack, mark, ++stamp) == cnt[g[s]])
				*st |= IB_TREE_DONE;
		}
		for (i = 0; i < f->nleaves; i++)
			if ((state[g[f->leaf_sw[i]]] & (IB_TREE_HAS_TOP | IB_TREE_DONE)) == IB_TREE_HAS_TOP)
				tree = 0;
	}
	f->tree = tree == 1;
out:
	free(cnt);
	free(mark);
	free(stack);
	free(state);
	return tree < 0 ? -1 : 0;
}

int ib_graph_build(struct topo_fabric *f, rm_error_t *err)
{
	if (make_switches(f) < 0 || make_hosts(f) < 0 || make_attachments(f) < 0 || ib_make_rails(f) < 0)
		goto oom;
	dedupe_adjacency(f);
	if (make_levels(f) < 0 || make_groups(f) < 0 || make_tree(f) < 0 || make_hops(f) < 0 || ib_link_norms(f) < 0 ||
	    ib_make_groups(f) < 0)
		goto oom;
	return 0;
oom:
	errno = ENOMEM;
	return rm_error_set(err, "InfiniBand fabric", 0, 0, "out of memory building the switch graph");
}
