/*
 * topo/net_ib.c: the InfiniBand fabric: lifecycle, the build every source fills (nodes, links, checks)
 * and its merge into the fabric as one new subnet, file loading with format detection, and queries.
 * Parsers: net_ib_topofile.c, net_ib_ports.c, net_ib_live.c, net_ib_namemap.c; graph: net_ib_graph.c;
 * report: net_ib_report.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"

/* The file formats, tried in this order by detection. */
static const struct ib_format *const formats[] = { &ib_format_topofile, &ib_format_ports };

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

static void free_nodes(struct ib_node *nodes, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(nodes[i].desc);
		free(nodes[i].port_link);
	}
	free(nodes);
}

void topo_fabric_destroy(struct topo_fabric *f)
{
	size_t i;

	if (!f)
		return;
	ib_graph_reset(f);
	free_nodes(f->nodes, f->nnodes);
	free(f->links);
	for (i = 0; i < f->nsubnets; i++)
		free(f->subnet_source[i]);
	free(f->subnet_source);
	ib_u64map_free(&f->name_by_guid);
	ib_u64map_free(&f->subnet_of_switch);
	ib_hwloc_names_free(f);
	for (i = 0; i < f->nmap_names; i++)
		free(f->map_names[i]);
	free(f->map_names);
	pthread_mutex_destroy(&f->cache_lock);
	free(f);
}

/* ---- the build ---- */

void ib_build_free(struct ib_build *b)
{
	free_nodes(b->nodes, b->nnodes);
	free(b->links);
	ib_u64map_free(&b->by_guid);
	memset(b, 0, sizeof(*b));
}

static const char *type_name(uint8_t type)
{
	return type == IBN_SW ? "switch" : type == IBN_RT ? "router" : "channel adapter";
}

static int oom(struct ib_build *b, int line)
{
	errno = ENOMEM;
	return rm_error_set(b->err, b->source, line, 0, "out of memory");
}

int ib_build_grow_ports(struct ib_build *b, int line, uint32_t n, unsigned p)
{
	struct ib_node *nd = &b->nodes[n];
	uint32_t *pl;
	unsigned i;

	if (p <= nd->nports && nd->port_link)
		return 0;
	if (nd->declared) {
		errno = EINVAL;
		return rm_error_set(b->err, b->source, line, 0, "port %u beyond the %u ports of %s %016llx \"%s\"", p,
				    nd->nports, type_name(nd->type), (unsigned long long)nd->guid, nd->desc);
	}
	if (p > IB_MAX_PORTS) {
		errno = EINVAL;
		return rm_error_set(b->err, b->source, line, 0, "port number %u out of range (1-%d)", p, IB_MAX_PORTS);
	}
	pl = realloc(nd->port_link, (p + 1) * sizeof(*pl));
	if (!pl)
		return oom(b, line);
	for (i = nd->port_link ? nd->nports + 1u : 0; i <= p; i++)
		pl[i] = IB_NONE;
	nd->port_link = pl;
	nd->nports = (uint16_t)p;
	return 0;
}

static int same_node(const struct ib_node *nd, uint8_t type, const char *desc, size_t desclen)
{
	return nd->type == type && strlen(nd->desc) == desclen && !memcmp(nd->desc, desc, desclen);
}

/* A node seen again: same type and description is the same node, anything else a duplicate GUID. */
static uint32_t existing_node(struct ib_build *b, int line, uint32_t i, uint8_t type, const char *desc, size_t desclen,
			      unsigned nports)
{
	struct ib_node *nd = &b->nodes[i];

	if (!same_node(nd, type, desc, desclen) || (nports && nd->declared && nports != nd->nports)) {
		errno = EINVAL;
		rm_error_set(b->err, b->source, line, 0,
			     "duplicate GUID %016llx: already declared as %s \"%s\", now as %s \"%.*s\"",
			     (unsigned long long)nd->guid, type_name(nd->type), nd->desc, type_name(type), (int)desclen,
			     desc);
		return IB_NONE;
	}
	if (nports && !nd->declared) {
		if (nports < nd->nports) {
			errno = EINVAL;
			rm_error_set(b->err, b->source, line, 0, "port %u beyond the %u ports of %s %016llx",
				     nd->nports, nports, type_name(type), (unsigned long long)nd->guid);
			return IB_NONE;
		}
		if (ib_build_grow_ports(b, line, i, nports) < 0)
			return IB_NONE;
		nd->declared = 1;
	}
	return i;
}

uint32_t ib_build_add_node(struct ib_build *b, int line, uint8_t type, uint64_t guid, const char *desc, size_t desclen,
			   unsigned nports)
{
	uint32_t i = ib_u64map_get(&b->by_guid, guid);
	struct ib_node *nd;

	if (i != IB_NONE)
		return existing_node(b, line, i, type, desc, desclen, nports);
	if (nports > IB_MAX_PORTS) {
		errno = EINVAL;
		rm_error_set(b->err, b->source, line, 0, "port count %u out of range (1-%d)", nports, IB_MAX_PORTS);
		return IB_NONE;
	}
	if (b->nnodes == b->nodes_cap) {
		size_t ncap = b->nodes_cap ? b->nodes_cap * 2 : 64;
		struct ib_node *nn = realloc(b->nodes, ncap * sizeof(*nn));

		if (!nn)
			return oom(b, line), IB_NONE;
		b->nodes = nn;
		b->nodes_cap = ncap;
	}
	nd = &b->nodes[b->nnodes];
	memset(nd, 0, sizeof(*nd));
	nd->guid = guid;
	nd->type = type;
	nd->host = nd->sw = -1;
	nd->desc = ib_strndup(desc, desclen);
	if (!nd->desc || ib_u64map_put(&b->by_guid, guid, (uint32_t)b->nnodes) < 0) {
		free(nd->desc);
		return oom(b, line), IB_NONE;
	}
	nd->aggregation = type == IBN_CA && ib_desc_is_aggregation(nd->desc);
	b->nnodes++;
	if (nports) {
		if (ib_build_grow_ports(b, line, (uint32_t)b->nnodes - 1, nports) < 0)
			return IB_NONE;
		nd->declared = 1;
	}
	return (uint32_t)b->nnodes - 1;
}

static int link_conflict(struct ib_build *b, int line, uint32_t n, unsigned p)
{
	const struct ib_node *nd = &b->nodes[n];
	unsigned pp = 0;
	const struct ib_node *o = &b->nodes[ib_port_peer(b->nodes, b->links, n, p, &pp)];

	errno = EINVAL;
	return rm_error_set(b->err, b->source, line, 0,
			    "port %u of %s %016llx \"%s\" is already connected to port %u of %016llx \"%s\"", p,
			    type_name(nd->type), (unsigned long long)nd->guid, nd->desc, pp,
			    (unsigned long long)o->guid, o->desc);
}

static int check_port(struct ib_build *b, int line, uint32_t n, unsigned p)
{
	if (p == 0 || p > IB_MAX_PORTS) {
		errno = EINVAL;
		return rm_error_set(b->err, b->source, line, 0, "port number %u out of range (1-%d)", p, IB_MAX_PORTS);
	}
	return ib_build_grow_ports(b, line, n, p);
}

int ib_build_link(struct ib_build *b, int line, uint32_t a, unsigned pa, uint32_t bn, unsigned pb, uint8_t width,
		  uint8_t speed)
{
	struct ib_link *l;
	uint32_t la, lb;

	if (check_port(b, line, a, pa) < 0 || check_port(b, line, bn, pb) < 0)
		return -1;
	if (a == bn && pa == pb) {
		errno = EINVAL;
		return rm_error_set(b->err, b->source, line, 0, "port %u is linked to itself", pa);
	}
	la = b->nodes[a].port_link[pa];
	lb = b->nodes[bn].port_link[pb];
	if (la != IB_NONE || lb != IB_NONE) {
		if (la != lb)
			return link_conflict(b, line, la != IB_NONE ? a : bn, la != IB_NONE ? pa : pb);
		l = &b->links[la];
		if (!l->width)
			l->width = width;
		if (!l->speed)
			l->speed = speed;
		return 0;
	}
	if (b->nlinks == b->links_cap) {
		size_t ncap = b->links_cap ? b->links_cap * 2 : 128;
		struct ib_link *nl = realloc(b->links, ncap * sizeof(*nl));

		if (!nl)
			return oom(b, line);
		b->links = nl;
		b->links_cap = ncap;
	}
	l = &b->links[b->nlinks];
	*l = (struct ib_link){ { a, bn }, { (uint16_t)pa, (uint16_t)pb }, width, speed, 0, 0 };
	b->nodes[a].port_link[pa] = b->nodes[bn].port_link[pb] = (uint32_t)b->nlinks++;
	return 0;
}

int ib_desc_is_aggregation(const char *desc)
{
	return strstr(desc, "Aggregation Node") != NULL;
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
	int line, rc;

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
				    "not ibnetdiscover output (expected a topology file or a -p ports report)");
	}
	rc = fmt->parse(&b, &ln);
	if (rc < 0 && err && len && buf[len - 1] != '\n' && !strcmp(err->source, path)) {
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

int topo_fabric_network_levels(const struct topo_fabric *f)
{
	return f->nlevels;
}

long topo_fabric_leaf_group(const struct topo_fabric *f, long leaf, int k)
{
	if (leaf < 0 || (size_t)leaf >= f->nsw || k < 0 || k >= f->nlevels || f->sw_level[leaf] != 0)
		return -1;
	return k == 0 ? leaf : (long)f->group[(size_t)k * f->nsw + (size_t)leaf];
}
