/*
 * topo/report/slurm_export.c: Slurm's other topology formats from the switch tree (topo_slurm.h):
 * topology/block's topology.conf, Slurm 25.05's topology.yaml, and node Weight lines in fat-tree order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "slurm_private.h"
#include "topo_slurm.h"
#include "topo_view.h"

#define MAX_BLOCK_SIZES 16

static const struct {
	const char *name;
	topo_slurm_format_t fmt;
} formats[] = {
	{ "tree", TOPO_SLURM_TREE },
	{ "block", TOPO_SLURM_BLOCK },
	{ "yaml", TOPO_SLURM_YAML },
	{ "weights", TOPO_SLURM_WEIGHTS },
};

int topo_slurm_format_parse(const char *name, topo_slurm_format_t *fmt)
{
	size_t i;

	for (i = 0; name && i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(name, formats[i].name)) {
			*fmt = formats[i].fmt;
			return 0;
		}
	errno = EINVAL;
	return -1;
}

/* ---- leaf order ------------------------------------------------------------------------------------ */

static int cmp_name_of(const void *a, const void *b, void *names)
{
	const char *const *n = names;

	return topo_slurm_cmp_natural(&n[*(const size_t *)a], &n[*(const size_t *)b]);
}

/* Depth first below switch s: leaves appended to out at their first visit. */
static int visit(topo_cluster_t c, const topo_swtree_t *t, size_t s, unsigned char *seen, size_t *out, size_t *n)
{
	size_t *ch, k, i;
	int rc = 0;

	if (seen[s])
		return 0;
	seen[s] = 1;
	if (t->level[s] == 0) {
		out[(*n)++] = s;
		return 0;
	}
	k = topo_swtree_children(c, t, s, &ch);
	if (!ch)
		return -1;
	qsort_r(ch, k, sizeof(*ch), cmp_name_of, t->name);
	for (i = 0; i < k && rc == 0; i++)
		rc = visit(c, t, ch[i], seen, out, n);
	free(ch);
	return rc;
}

size_t topo_swtree_leaf_order(topo_cluster_t c, const topo_swtree_t *t, size_t **out)
{
	unsigned char *seen = calloc(t->nsw + 1, 1);
	size_t o, g, n = 0;
	int rc = 0;

	*out = malloc((t->nsw + 1) * sizeof(**out));
	if (!seen || !*out)
		goto fail;
	for (g = 0; g <= t->ngroups; g++) /* on a dragonfly group by group (g = ngroups: the others) */
		for (o = 0; o < t->nsw && rc == 0; o++) {
			long sg = t->group[t->order[o]];

			if (t->is_root[t->order[o]] && (g < t->ngroups ? sg == (long)g : sg < 0 || !t->ngroups))
				rc = visit(c, t, t->order[o], seen, *out, &n);
		}
	for (o = 0; o < t->nsw && rc == 0; o++) /* kept leaves no root reaches (none in a tree) */
		if (t->kept[t->order[o]] && t->level[t->order[o]] == 0 && !seen[t->order[o]])
			seen[t->order[o]] = 1, (*out)[n++] = t->order[o];
	if (rc < 0)
		goto fail;
	free(seen);
	return n;
fail:
	free(seen);
	free(*out);
	*out = NULL;
	return 0;
}

/* ---- blocks ---------------------------------------------------------------------------------------- */

void topo_slurm_blocks_destroy(topo_slurm_blocks_t *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; b->names && i < b->n + 1; i++)
		free(b->names[i]);
	free(b->names);
	free(b->name);
	free(b->off);
	free(b->host);
	free(b->outside);
	free(b->absent);
	free(b);
}

/* Out of memory while building b: frees it, sets err and errno. Returns NULL. */
static topo_slurm_blocks_t *blocks_nomem(topo_slurm_blocks_t *b, rm_error_t *err)
{
	topo_slurm_blocks_destroy(b);
	rm_error_set(err, "slurm-topology", 0, 0, "out of memory");
	errno = ENOMEM;
	return NULL;
}

topo_slurm_blocks_t *topo_slurm_blocks_leaves(topo_cluster_t c, const topo_swtree_t *t, rm_error_t *err)
{
	topo_slurm_blocks_t *b = calloc(1, sizeof(*b));
	size_t *leaf = NULL, nl, i, h = 0;

	if (!b)
		goto nomem;
	b->kind = "leaf switch";
	b->kinds = "leaf switches";
	b->order = "the spines'";
	nl = topo_swtree_leaf_order(c, t, &leaf);
	b->name = malloc((nl + 1) * sizeof(*b->name));
	b->off = malloc((nl + 1) * sizeof(*b->off));
	b->host = malloc((t->host_off[t->nsw] + 1) * sizeof(*b->host));
	if (!leaf || !b->name || !b->off || !b->host)
		goto nomem;
	for (i = 0; i < nl; i++) {
		size_t s = leaf[i];

		b->name[b->n] = t->name[s];
		b->off[b->n++] = h;
		memcpy(b->host + h, t->host + t->host_off[s], (t->host_off[s + 1] - t->host_off[s]) * sizeof(*b->host));
		h += t->host_off[s + 1] - t->host_off[s];
	}
	b->off[b->n] = h;
	free(leaf);
	return b;
nomem:
	free(leaf);
	return blocks_nomem(b, err);
}

topo_slurm_blocks_t *topo_slurm_blocks_groups(topo_cluster_t c, const topo_swtree_t *t, rm_error_t *err)
{
	topo_slurm_blocks_t *b = calloc(1, sizeof(*b)), *leaves = topo_slurm_blocks_leaves(c, t, err);
	size_t *leaf = NULL, nl = 0, g, i, h = 0;

	if (!b || !leaves)
		goto nomem;
	b->kind = "dragonfly group";
	b->kinds = "dragonfly groups";
	b->order = "group";
	nl = topo_swtree_leaf_order(c, t, &leaf);
	b->name = calloc(t->ngroups + 1, sizeof(*b->name));
	b->names = calloc(t->ngroups + 1, sizeof(*b->names));
	b->off = malloc((t->ngroups + 1) * sizeof(*b->off));
	b->host = malloc((leaves->off[leaves->n] + 1) * sizeof(*b->host));
	if (!leaf || !b->name || !b->names || !b->off || !b->host)
		goto nomem;
	for (g = 0; g < t->ngroups; g++) { /* leaves->name[i] is leaf[i]'s: the same order */
		size_t start = h;

		for (i = 0; i < nl; i++)
			if (t->group[leaf[i]] == (long)g) {
				memcpy(b->host + h, leaves->host + leaves->off[i],
				       (leaves->off[i + 1] - leaves->off[i]) * sizeof(*b->host));
				h += leaves->off[i + 1] - leaves->off[i];
			}
		if (h == start) /* every host of the group left out */
			continue;
		if (asprintf(&b->names[b->n], "group%zu", g) < 0) {
			b->names[b->n] = NULL;
			goto nomem;
		}
		b->name[b->n] = b->names[b->n];
		b->off[b->n++] = start;
	}
	b->off[b->n] = h;
	free(leaf);
	topo_slurm_blocks_destroy(leaves);
	return b;
nomem:
	free(leaf);
	topo_slurm_blocks_destroy(leaves);
	return blocks_nomem(b, err);
}

static int cmp_pos(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

static int cmp_host_at(const void *a, const void *b, void *host)
{
	const char *const *h = host;

	return strcmp(h[*(const size_t *)a], h[*(const size_t *)b]);
}

/* Position of host name h in leaf order (leaves->host), SIZE_MAX when the tree does not list it; by[0..n)
 * holds the positions sorted by name. */
static size_t host_pos(const topo_slurm_blocks_t *leaves, const size_t *by, size_t n, const char *h)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(leaves->host[by[mid]], h);

		if (!c)
			return by[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

struct nvl_dom {
	size_t first, d; /* position of the first host in leaf order; domain index */
};

static int cmp_dom(const void *a, const void *b)
{
	const struct nvl_dom *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

topo_slurm_blocks_t *topo_slurm_blocks_nvlink(topo_cluster_t c, const topo_swtree_t *t, rm_error_t *err)
{
	const topo_fabric_t *f = topo_cluster_fabric(c);
	size_t nd = topo_fabric_nvlink_domains(f), nh = 0, d, i, k, h = 0, *pos = NULL;
	topo_slurm_blocks_t *b = calloc(1, sizeof(*b)), *leaves = topo_slurm_blocks_leaves(c, t, err);
	const char *const *dh;
	size_t *by = NULL;
	unsigned char *in = NULL;
	struct nvl_dom *dom = calloc(nd + 1, sizeof(*dom));
	int ok = 0;

	if (!b || !leaves || !dom)
		goto nomem;
	b->kind = "NVLink domain";
	b->kinds = "NVLink domains";
	b->order = "fabric";
	nh = leaves->off[leaves->n];
	by = malloc((nh + 1) * sizeof(*by));
	in = calloc(nh + 1, 1);
	b->name = malloc((nd + 1) * sizeof(*b->name));
	b->off = malloc((nd + 1) * sizeof(*b->off));
	b->host = malloc((nh + 1) * sizeof(*b->host));
	b->outside = malloc((nh + 1) * sizeof(*b->outside));
	if (!by || !in || !b->name || !b->off || !b->host || !b->outside)
		goto nomem;
	for (i = 0; i < nh; i++)
		by[i] = i;
	qsort_r(by, nh, sizeof(*by), cmp_host_at, (void *)leaves->host);
	for (d = 0, k = 0; d < nd; d++) { /* domains by the leaf order of their first host */
		size_t n, p;

		topo_fabric_nvlink_domain(f, d, &dh, &n);
		dom[k] = (struct nvl_dom){ SIZE_MAX, d };
		for (i = 0; i < n; i++)
			if ((p = host_pos(leaves, by, nh, dh[i])) != SIZE_MAX && p < dom[k].first)
				dom[k].first = p;
		b->nabsent += n;
		k += dom[k].first != SIZE_MAX;
	}
	qsort(dom, k, sizeof(*dom), cmp_dom);
	b->absent = malloc((b->nabsent + 1) * sizeof(*b->absent));
	pos = malloc((nh + 1) * sizeof(*pos));
	if (!b->absent || !pos)
		goto nomem;
	b->nabsent = 0;
	for (d = 0; d < nd; d++) { /* the absent hosts, in the file's order */
		size_t n;

		topo_fabric_nvlink_domain(f, d, &dh, &n);
		for (i = 0; i < n; i++)
			if (host_pos(leaves, by, nh, dh[i]) == SIZE_MAX)
				b->absent[b->nabsent++] = dh[i];
	}
	for (d = 0; d < k; d++) {
		size_t n, m = 0, p;

		b->name[b->n] = topo_fabric_nvlink_domain(f, dom[d].d, &dh, &n);
		for (i = 0; i < n; i++)
			if ((p = host_pos(leaves, by, nh, dh[i])) != SIZE_MAX)
				pos[m++] = p;
		qsort(pos, m, sizeof(*pos), cmp_pos);
		b->off[b->n++] = h;
		for (i = 0; i < m; i++)
			in[pos[i]] = 1, b->host[h++] = leaves->host[pos[i]];
	}
	b->off[b->n] = h;
	for (i = 0; i < nh; i++)
		if (!in[i])
			b->outside[b->noutside++] = leaves->host[i];
	ok = 1;
nomem:
	free(pos);
	free(by);
	free(in);
	free(dom);
	topo_slurm_blocks_destroy(leaves);
	return ok ? b : blocks_nomem(b, err);
}

size_t topo_slurm_block_sizes(const topo_slurm_blocks_t *b, size_t sizes[MAX_BLOCK_SIZES])
{
	size_t i, base = 0, k = 0, nb;

	for (i = 0; i < b->n; i++)
		if (!i || b->off[i + 1] - b->off[i] < base)
			base = b->off[i + 1] - b->off[i];
	if (!b->n || !base)
		return 0;
	for (nb = 1; nb <= b->n && k < MAX_BLOCK_SIZES; nb *= 2)
		sizes[k++] = base * nb;
	return k;
}

/* ---- writers --------------------------------------------------------------------------------------- */

static int write_blocks(const topo_slurm_blocks_t *b, int yaml, FILE *f)
{
	size_t sizes[MAX_BLOCK_SIZES], ns = topo_slurm_block_sizes(b, sizes), i;

	if (yaml) {
		fprintf(f, "    block_sizes:\n");
		for (i = 0; i < ns; i++)
			fprintf(f, "      - %zu\n", sizes[i]);
		fprintf(f, "    blocks:\n");
	}
	for (i = 0; i < b->n; i++) {
		char *l = topo_slurm_list(b->host + b->off[i], b->off[i + 1] - b->off[i]);

		if (!l)
			return -1;
		if (yaml) {
			fprintf(f, "    - block: \"%s\"\n      nodes: ", b->name[i]);
			topo_slurm_yaml_string(f, l);
		} else
			fprintf(f, "BlockName=%s Nodes=%s\n", b->name[i], l);
		free(l);
	}
	if (!yaml && ns) {
		fprintf(f, "BlockSizes=");
		for (i = 0; i < ns; i++)
			fprintf(f, "%s%zu", i ? "," : "", sizes[i]);
		fprintf(f, "\n");
	}
	return 0;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

/* When the smallest block sets a base block size below half the median block's, a note naming it: Slurm
 * plans every job in base blocks, so a small leaf of service nodes shrinks them all. */
static void small_base_note(const topo_slurm_blocks_t *b, const char *ind, FILE *f)
{
	size_t *sz = malloc((b->n + 1) * sizeof(*sz)), i, small = 0, median;

	if (!sz || !b->n) {
		free(sz);
		return;
	}
	for (i = 0; i < b->n; i++) {
		sz[i] = b->off[i + 1] - b->off[i];
		if (sz[i] < b->off[small + 1] - b->off[small])
			small = i;
	}
	qsort(sz, b->n, sizeof(*sz), cmp_size);
	median = sz[b->n / 2];
	if (2 * (b->off[small + 1] - b->off[small]) < median)
		fprintf(f,
			"%s# Note: %s %s (%zu nodes) sets the base block size, far below the median block (%zu\n"
			"%s# nodes); Slurm plans every job in base blocks. If its hosts are no compute nodes, leave\n"
			"%s# them out (--nodes, --slurm-conf).\n",
			ind, b->kind, b->name[small], b->off[small + 1] - b->off[small], median, ind, ind);
	free(sz);
}

/* Comment lines naming up to 50 hosts, 8 a line. */
static void host_comment(FILE *f, const char *ind, const char *head, const char *const *h, size_t n)
{
	size_t i;

	if (!n)
		return;
	fprintf(f, "%s# %zu %s:", ind, n, head);
	for (i = 0; i < n && i < 50; i++) {
		if (i % 8 == 0)
			fprintf(f, "\n%s#  ", ind);
		fprintf(f, " %s", h[i]);
	}
	fprintf(f, "%s\n", n > 50 ? " ..." : "");
}

static void block_comment(const topo_slurm_blocks_t *b, const char *ind, FILE *f)
{
	size_t sizes[MAX_BLOCK_SIZES], ns = topo_slurm_block_sizes(b, sizes);

	fprintf(f,
		"%s# Blocks: the %zu %s, in %s order (Slurm pairs neighbouring blocks into larger\n"
		"%s# ones). Block sizes: the base is the smallest block (%zu nodes; every block has at least\n"
		"%s# that many), each next size twice the previous one.\n",
		ind, b->n, b->kinds, b->order, ind, ns ? sizes[0] : 0, ind);
	small_base_note(b, ind, f);
	host_comment(f, ind, "hosts of the fabric are in no NVLink domain (nvlink_domain lines) and in no block",
		     b->outside, b->noutside);
	host_comment(f, ind,
		     "hosts of the NVLink domains are not in the fabric's tree (no HCA of that name, or left out "
		     "by --nodes/--slurm-conf) and in no block",
		     b->absent, b->nabsent);
}

static int write_block_conf(const topo_swtree_t *t, const topo_slurm_blocks_t *b, FILE *f)
{
	fprintf(f,
		"# topology.conf for Slurm's topology/block plugin (Slurm 23.11 and later; TopologyPlugin=\n"
		"# topology/block in slurm.conf), written by rankmapctl slurm-topology. %zu hosts.\n",
		b->off[b->n]);
	topo_slurm_header_notes(t, f);
	block_comment(b, "", f);
	return write_blocks(b, 0, f);
}

static int write_yaml(topo_cluster_t c, const topo_swtree_t *t, const topo_slurm_blocks_t *b, const char *top, FILE *f,
		      rm_error_t *err)
{
	fprintf(f,
		"# topology.yaml for Slurm 25.05 and later (topology.yaml(5); when it exists, Slurm ignores\n"
		"# topology.conf), written by rankmapctl slurm-topology: the same fabric three ways, %zu hosts.\n"
		"# A partition of slurm.conf chooses one by name; partitions without Topology= use the\n"
		"# cluster default (tree):\n"
		"#   PartitionName=batch Nodes=ALL Default=YES\n"
		"#   PartitionName=wide  Nodes=ALL Topology=block\n"
		"#   PartitionName=any   Nodes=ALL Topology=flat\n",
		t->nplaced);
	topo_slurm_header_notes(t, f);
	fprintf(f, "- topology: tree\n  cluster_default: true\n  tree:\n    switches:\n");
	if (topo_slurm_tree_body(c, t, top, 1, f, err) < 0)
		return -1;
	fprintf(f, "- topology: block\n  cluster_default: false\n  block:\n");
	block_comment(b, "    ", f);
	if (write_blocks(b, 1, f) < 0)
		return -1;
	fprintf(f, "- topology: flat\n  cluster_default: false\n  flat: true\n");
	return 0;
}

static void weights_header(const topo_swtree_t *t, const char *by, FILE *f)
{
	fprintf(f,
		"# Slurm node weights in fat-tree order, written by rankmapctl %s: hosts in leaf\n"
		"# order, the leaves in the order the spines reach them. Slurm allocates the lowest weight\n"
		"# first, so consecutive nodes of a job share leaves and spines (without weights, Slurm takes\n"
		"# nodes in the order of their names). Put each Weight= on the node's NodeName line in\n"
		"# slurm.conf. Note: Slurm lets node weights override topology/tree's switch choice.\n",
		by);
	topo_slurm_header_notes(t, f);
}

/* The hosts of b (leaves in leaf order) as the order format asks. */
static int write_order(const topo_swtree_t *t, const topo_slurm_blocks_t *b, topo_slurm_order_t how, const char *by,
		       FILE *f)
{
	size_t i, h, w = 0;
	char *l;

	switch (how) {
	case TOPO_SLURM_ORDER_LIST:
		for (h = 0; h < b->off[b->n]; h++)
			fprintf(f, "%s\n", b->host[h]);
		return 0;
	case TOPO_SLURM_ORDER_HOSTLIST:
		if (!(l = hostlist_compress(b->host, b->off[b->n])))
			return -1;
		fprintf(f, "%s\n", l);
		free(l);
		return 0;
	case TOPO_SLURM_ORDER_WEIGHTS: break;
	}
	weights_header(t, by, f);
	for (i = 0; i < b->n; i++) {
		fprintf(f, "# %s %s\n", b->kind, b->name[i]);
		for (h = b->off[i]; h < b->off[i + 1]; h++)
			fprintf(f, "NodeName=%s Weight=%zu\n", b->host[h], ++w);
	}
	return 0;
}

/* After a writer: frees b, and turns its result (rc) and f's state into 0 or -1 with err set. */
static int written(int rc, topo_slurm_blocks_t *b, FILE *f, rm_error_t *err)
{
	topo_slurm_blocks_destroy(b);
	if (rc < 0 || ferror(f))
		return rm_error_set(err, "slurm-topology", 0, 0, "%s", rc < 0 ? "out of memory" : "write error");
	return 0;
}

static int nothing_kept(rm_error_t *err)
{
	return rm_error_set(err, "--nodes/--slurm-conf", 0, 0,
			    "no host of the fabric is in the node list: nothing to write");
}

int topo_slurm_order_write(topo_cluster_t c, const topo_swtree_t *t, topo_slurm_order_t how, const char *by, FILE *f,
			   rm_error_t *err)
{
	topo_slurm_blocks_t *b;

	if (t->filtered && !t->nplaced)
		return nothing_kept(err);
	if (!(b = topo_slurm_blocks_leaves(c, t, err)))
		return -1;
	return written(write_order(t, b, how, by, f), b, f, err);
}

int topo_slurm_write(topo_cluster_t c, const topo_swtree_t *t, topo_slurm_format_t fmt, const char *top, FILE *f,
		     rm_error_t *err)
{
	topo_slurm_blocks_t *b;

	if (t->filtered && !t->nplaced)
		return nothing_kept(err);
	if (fmt == TOPO_SLURM_TREE)
		return topo_slurm_topology_write(c, t, top, f, err);
	if (fmt == TOPO_SLURM_WEIGHTS)
		return topo_slurm_order_write(c, t, TOPO_SLURM_ORDER_WEIGHTS, "slurm-topology", f, err);
	if (topo_fabric_nvlink_domains(topo_cluster_fabric(c))) {
		if (!(b = topo_slurm_blocks_nvlink(c, t, err)))
			return -1;
		if (!b->n) {
			topo_slurm_blocks_destroy(b);
			return rm_error_set(err, "nvlink_domain", 0, 0,
					    "no host of the NVLink domains is in the fabric's tree: no block to write");
		}
	} else if (!(b = t->ngroups ? topo_slurm_blocks_groups(c, t, err) : topo_slurm_blocks_leaves(c, t, err)))
		return -1;
	return written(fmt == TOPO_SLURM_BLOCK ? write_block_conf(t, b, f) : write_yaml(c, t, b, top, f, err), b, f,
		       err);
}
