/*
 * topo/net_ib_build.c: the build every fabric source fills (nodes, links, their checks) before
 * net_ib.c merges it into the fabric as one new subnet. The parsers (net_ib_topofile.c, net_ib_ports.c,
 * net_ib_live.c) call it; it calls none of them, nor the fabric: only net_ib_util.c's helpers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"

void ib_nodes_free(struct ib_node *nodes, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(nodes[i].desc);
		free(nodes[i].port_link);
	}
	free(nodes);
}

void ib_build_free(struct ib_build *b)
{
	ib_nodes_free(b->nodes, b->nnodes);
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
	nd->site_group = IB_NONE;
	nd->site_rail = IB_RAIL_NONE;
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
