/*
 * topo/net_ib.c: the InfiniBand fabric: lifecycle, the merge of a build (net_ib_build.c) into the fabric
 * as one new subnet, file loading with format detection, and queries.
 * Parsers: net_ib_topofile.c, net_ib_ports.c, net_ib_live.c, net_ib_namemap.c; graph: net_ib_graph.c;
 * report: net_ib_report.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"

/* The file formats, tried in this order by detection. */
static const struct ib_format *const formats[] = { &ib_format_topofile, &ib_format_ports, &ib_format_site };

struct topo_fabric *topo_fabric_create(void)
{
	struct topo_fabric *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->max_level = -1;
	f->leaf_table_max = IB_LEAF_TABLE_MAX;
	f->eager_work_max = IB_EAGER_WORK_MAX;
	pthread_mutex_init(&f->cache_lock, NULL);
	return f;
}

void topo_fabric_fork_prepare(struct topo_fabric *f)
{
	if (f)
		pthread_mutex_lock(&f->cache_lock);
}

void topo_fabric_fork_parent(struct topo_fabric *f)
{
	if (f)
		pthread_mutex_unlock(&f->cache_lock);
}

void topo_fabric_fork_child(struct topo_fabric *f)
{
	if (f)
		pthread_mutex_init(&f->cache_lock, NULL);
}

void topo_fabric_destroy(struct topo_fabric *f)
{
	size_t i;

	if (!f)
		return;
	ib_graph_reset(f);
	ib_nodes_free(f->nodes, f->nnodes);
	free(f->links);
	for (i = 0; i < f->nsubnets; i++)
		free(f->subnet_source[i]);
	free(f->subnet_source);
	ib_u64map_free(&f->name_by_guid);
	ib_u64map_free(&f->subnet_of_switch);
	ib_u64map_free(&f->rail_override);
	ib_hwloc_names_free(f);
	for (i = 0; i < f->nmap_names; i++)
		free(f->map_names[i]);
	free(f->map_names);
	for (i = 0; i < f->nnvl; i++)
		free(f->nvl_name[i]);
	for (i = 0; i < f->nnvl_host; i++)
		free(f->nvl_host[i]);
	free(f->nvl_name);
	free(f->nvl_host);
	free(f->nvl_off);
	pthread_mutex_destroy(&f->cache_lock);
	free(f);
}

/* ---- merging a build into the fabric as a new subnet ---- */

static int merge_build(struct topo_fabric *f, struct ib_build *b, const char *source)
{
	size_t i, nn = f->nnodes + b->nnodes, nl = f->nlinks + b->nlinks;
	struct ib_node *nodes = f->nodes;
	struct ib_link *links = f->links;
	char **src, *s = strdup(source);

	if (!s)
		return -1;
	if (nn > f->nodes_cap && !(nodes = realloc(f->nodes, nn * sizeof(*nodes))))
		goto fail;
	f->nodes = nodes;
	f->nodes_cap = nn > f->nodes_cap ? nn : f->nodes_cap;
	if (nl > f->links_cap && !(links = realloc(f->links, nl * sizeof(*links))))
		goto fail;
	f->links = links;
	f->links_cap = nl > f->links_cap ? nl : f->links_cap;
	if (!(src = realloc(f->subnet_source, (f->nsubnets + 1) * sizeof(*src))))
		goto fail;
	f->subnet_source = src;
	for (i = 0; i < b->nlinks; i++) {
		struct ib_link l = b->links[i];

		l.node[0] += (uint32_t)f->nnodes;
		l.node[1] += (uint32_t)f->nnodes;
		f->links[f->nlinks + i] = l;
	}
	for (i = 0; i < b->nnodes; i++) {
		struct ib_node *nd = &f->nodes[f->nnodes + i];
		unsigned p;

		*nd = b->nodes[i];
		nd->subnet = f->nsubnets;
		for (p = 0; nd->port_link && p <= nd->nports; p++)
			if (nd->port_link[p] != IB_NONE)
				nd->port_link[p] += (uint32_t)f->nlinks;
	}
	f->subnet_source[f->nsubnets++] = s;
	f->nnodes = nn;
	f->nlinks = nl;
	free(b->nodes);
	b->nodes = NULL;
	b->nnodes = 0;
	ib_graph_reset(f);
	return 0;
fail:
	free(s);
	errno = ENOMEM;
	return -1;
}

/* A switch already known from another subnet means the same subnet loaded twice. */
static int check_new_subnet(const struct topo_fabric *f, const struct ib_build *b, const char *source)
{
	size_t i;

	for (i = 0; i < b->nnodes; i++) {
		uint32_t s;

		if (b->nodes[i].type != IBN_SW ||
		    (s = ib_u64map_get(&f->subnet_of_switch, b->nodes[i].guid)) == IB_NONE)
			continue;
		errno = EEXIST;
		return rm_error_set(
			b->err, source, 0, 0,
			"switch %016llx \"%s\" is already part of the subnet loaded from %s: the same subnet "
			"loaded twice?",
			(unsigned long long)b->nodes[i].guid, b->nodes[i].desc, f->subnet_source[s]);
	}
	return 0;
}

/* Merges a finished build, or fails leaving the fabric unchanged. Frees the build either way. */
int ib_fabric_add_build(struct topo_fabric *f, struct ib_build *b, const char *source)
{
	size_t i, first = f->nnodes;
	int rc = 0;

	if (!b->nnodes) {
		errno = EINVAL;
		rc = rm_error_set(b->err, source, 0, 0, "no InfiniBand nodes found");
	} else if (check_new_subnet(f, b, source) < 0) {
		rc = -1;
	} else if (merge_build(f, b, source) < 0) {
		rc = rm_error_set(b->err, source, 0, 0, "out of memory");
	} else {
		/* best effort: a failure here only weakens the duplicate-subnet check */
		for (i = first; i < f->nnodes; i++)
			if (f->nodes[i].type == IBN_SW)
				ib_u64map_put(&f->subnet_of_switch, f->nodes[i].guid, f->nodes[i].subnet);
	}
	ib_build_free(b);
	return rc;
}

/* ---- file loading ---- */

/* First meaningful line decides: topology file or ports report. Reads without cutting the buffer. */
static const struct ib_format *detect(const char *p, const char *end, int *line)
{
	char s[256];
	size_t i;

	for (*line = 1; p < end; (*line)++) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((e ? e : end) - p);
		const char *t;

		if (n >= sizeof(s))
			n = sizeof(s) - 1;
		memcpy(s, p, n);
		s[n] = '\0';
		p = e ? e + 1 : end;
		while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
			s[--n] = '\0';
		t = ib_skip_ws(s);
		if (ib_line_is_noise(t))
			continue;
		for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
			if (formats[i]->detect(t))
				return formats[i];
		return NULL;
	}
	*line = 0;
	return NULL;
}

int topo_fabric_load_file(struct topo_fabric *f, const char *path, rm_error_t *err)
{
	struct ib_build b = { .source = path, .err = err };
	const struct ib_format *fmt;
	struct ib_lines ln;
	size_t len;
	char *buf = ib_read_file(path, RM_FILE_IB, &len, err);
	int line, rc, midline;

	if (!buf)
		return -1;
	ln = (struct ib_lines){ buf, buf + len, 0 };
	fmt = detect(buf, buf + len, &line);
	if (!fmt) {
		free(buf);
		errno = EINVAL;
		if (!line)
			return rm_error_set(err, path, 0, 0, "empty file: no InfiniBand nodes found");
		return rm_error_set(err, path, line, 1,
				    "not ibnetdiscover output (expected a topology file or a -p ports report) nor a "
				    "site fabric file");
	}
	midline = len && buf[len - 1] != '\n'; /* before the parser cuts the lines in place */
	rc = fmt->parse(&b, &ln);
	if (rc < 0 && err && midline && !strcmp(err->source, path)) {
		size_t n = strlen(err->text);

		snprintf(err->text + n, sizeof(err->text) - n, " (the file ends in mid-line: truncated?)");
	}
	free(buf);
	if (rc < 0) {
		ib_build_free(&b);
		return -1;
	}
	if (ib_fabric_add_build(f, &b, path) < 0)
		return -1;
	if (fmt == &ib_format_ports)
		f->has_ports_subnet = 1;
	return 0;
}

int topo_fabric_load_node_name_map(struct topo_fabric *f, const char *path, rm_error_t *err)
{
	if (ib_namemap_load(f, path, err) < 0)
		return -1;
	ib_graph_reset(f);
	return 0;
}

int topo_fabric_finalize(struct topo_fabric *f, rm_error_t *err)
{
	if (f->finalized)
		return 0;
	ib_graph_reset(f);
	if (ib_graph_build(f, err) < 0 || ib_namemap_count_unmatched(f) < 0) {
		ib_graph_reset(f);
		rm_error_set(err, "InfiniBand fabric", 0, 0, "out of memory"); /* first error wins */
		return -1;
	}
	f->finalized = 1;
	return 0;
}

/* ---- queries ---- */

size_t topo_fabric_nhosts(const struct topo_fabric *f)
{
	return f->nhosts;
}

const char *topo_fabric_host_name(const struct topo_fabric *f, size_t i)
{
	return i < f->nhosts ? f->hosts[i].name : NULL;
}

long topo_fabric_host_leaf(const struct topo_fabric *f, size_t i)
{
	return i < f->nhosts ? f->hosts[i].leaf : -1;
}

size_t topo_fabric_nswitches(const struct topo_fabric *f)
{
	return f->nsw;
}

const char *topo_fabric_switch_name(const struct topo_fabric *f, long s)
{
	const char *m;

	if (s < 0 || (size_t)s >= f->nsw)
		return NULL;
	m = ib_namemap_lookup(f, f->nodes[f->sw_node[s]].guid);
	return m ? m : f->nodes[f->sw_node[s]].desc;
}

uint64_t topo_fabric_switch_guid(const struct topo_fabric *f, long s)
{
	return s >= 0 && (size_t)s < f->nsw ? f->nodes[f->sw_node[s]].guid : 0;
}

long topo_fabric_switch_subnet(const struct topo_fabric *f, long s)
{
	return s >= 0 && (size_t)s < f->nsw ? (long)f->nodes[f->sw_node[s]].subnet : -1;
}

size_t topo_fabric_switch_neighbors(const struct topo_fabric *f, long s, const uint32_t **nbrs)
{
	if (s < 0 || (size_t)s >= f->nsw) {
		*nbrs = NULL;
		return 0;
	}
	*nbrs = f->adj + f->adj_off[s];
	return f->adj_off[s + 1] - f->adj_off[s];
}

size_t topo_fabric_host_nports(const struct topo_fabric *f, size_t h)
{
	return h < f->nhosts ? f->hosts[h].n : 0;
}

long topo_fabric_host_port_switch(const struct topo_fabric *f, size_t h, size_t i)
{
	return h < f->nhosts && i < f->hosts[h].n ? f->att[f->hosts[h].first + i].sw : -1;
}

void topo_fabric_set_hop_limits(struct topo_fabric *f, size_t table_max, double eager_work_max)
{
	f->leaf_table_max = table_max;
	f->eager_work_max = eager_work_max;
	ib_graph_reset(f);
}

int topo_fabric_set_rail(struct topo_fabric *f, uint64_t guid, unsigned r)
{
	if (!guid || r >= TOPO_MAX_RAILS)
		return errno = EINVAL, -1;
	if (ib_u64map_put(&f->rail_override, guid, r) < 0)
		return errno = ENOMEM, -1;
	ib_graph_reset(f);
	return 0;
}

int topo_fabric_add_nvlink_domain(struct topo_fabric *f, const char *name, const char *const *hosts, size_t n)
{
	char **nn = realloc(f->nvl_name, (f->nnvl + 1) * sizeof(*nn)), **nh;
	size_t *no, i;

	if (nn)
		f->nvl_name = nn;
	no = nn ? realloc(f->nvl_off, (f->nnvl + 2) * sizeof(*no)) : NULL;
	if (no)
		f->nvl_off = no;
	nh = no ? realloc(f->nvl_host, (f->nnvl_host + n + 1) * sizeof(*nh)) : NULL;
	if (!nh)
		return errno = ENOMEM, -1;
	f->nvl_host = nh;
	if (!f->nnvl)
		f->nvl_off[0] = 0;
	for (i = 0; i < n; i++)
		if (!(nh[f->nnvl_host + i] = strdup(hosts[i])))
			goto oom;
	if (!(f->nvl_name[f->nnvl] = strdup(name)))
		goto oom;
	f->nnvl_host += n;
	f->nvl_off[++f->nnvl] = f->nnvl_host;
	return 0;
oom:
	while (i)
		free(nh[f->nnvl_host + --i]);
	return errno = ENOMEM, -1;
}

size_t topo_fabric_nvlink_domains(const topo_fabric_t *f)
{
	return f ? f->nnvl : 0;
}

const char *topo_fabric_nvlink_domain(const topo_fabric_t *f, size_t d, const char *const **hosts, size_t *n)
{
	*hosts = (const char *const *)f->nvl_host + f->nvl_off[d];
	*n = f->nvl_off[d + 1] - f->nvl_off[d];
	return f->nvl_name[d];
}

uint64_t topo_fabric_rail_unmatched(const struct topo_fabric *f)
{
	struct ib_u64map hca = { 0 };
	uint64_t miss = 0;
	size_t i;

	if (!f->rail_override.n)
		return 0;
	for (i = 0; i < f->nnodes; i++) {
		const struct ib_node *nd = &f->nodes[i];

		if (nd->type == IBN_CA && ((nd->guid && ib_u64map_put(&hca, nd->guid, 1) < 0) ||
					   (nd->port_guid && ib_u64map_put(&hca, nd->port_guid, 1) < 0))) {
			ib_u64map_free(&hca);
			return errno = ENOMEM, UINT64_MAX;
		}
	}
	for (i = 0; i < f->rail_override.cap && !miss; i++)
		if (f->rail_override.keys[i] && ib_u64map_get(&hca, f->rail_override.keys[i]) == IB_NONE)
			miss = f->rail_override.keys[i];
	ib_u64map_free(&hca);
	return miss;
}

void topo_fabric_set_tree(struct topo_fabric *f, int on)
{
	f->no_tree = !on;
	ib_graph_reset(f);
}

int topo_fabric_switch_level(const struct topo_fabric *f, long s)
{
	return s >= 0 && (size_t)s < f->nsw ? f->sw_level[s] : -1;
}

size_t topo_fabric_nsubnets(const struct topo_fabric *f)
{
	return f->nsubnets;
}

/* With dragonfly groups: two levels, the leaf and its group (a Dragonfly+ group's spines are inside
 * it; the groups' union is the root). */
int topo_fabric_network_levels(const struct topo_fabric *f)
{
	return f->ngroups && f->nlevels ? 2 : f->nlevels;
}

long topo_fabric_leaf_group(const struct topo_fabric *f, long leaf, int k)
{
	if (leaf < 0 || (size_t)leaf >= f->nsw || k < 0 || k >= topo_fabric_network_levels(f) || f->sw_level[leaf] != 0)
		return -1;
	if (f->ngroups && k == 1)
		return f->dfgroup[leaf] == IB_NONE ? -1 : (long)f->dfgroup[leaf];
	return k == 0 ? leaf : (long)f->group[(size_t)k * f->nsw + (size_t)leaf];
}
