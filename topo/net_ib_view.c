/*
 * topo/net_ib_view.c: the fabric's read-only queries for views (topo_view.h) that the rest of topo/
 * does not need: cables, per-switch port counts, subnet sources and speed names.
 */
#include <errno.h>
#include <string.h>

#include "net_ib_private.h"

unsigned topo_fabric_switch_host_ports(const struct topo_fabric *f, long s)
{
	const struct ib_node *nd;
	unsigned p, k = 0;

	if (s < 0 || (size_t)s >= f->nsw)
		return 0;
	nd = &f->nodes[f->sw_node[s]];
	for (p = 1; nd->port_link && p <= nd->nports; p++) {
		uint32_t peer = ib_port_peer(f->nodes, f->links, f->sw_node[s], p, NULL);

		k += peer != IB_NONE && f->nodes[peer].type == IBN_CA && !f->nodes[peer].aggregation;
	}
	return k;
}

unsigned topo_fabric_switch_unconnected(const struct topo_fabric *f, long s)
{
	return s >= 0 && (size_t)s < f->nsw ? ib_unconnected_ports(&f->nodes[f->sw_node[s]]) : 0;
}

const char *topo_fabric_subnet_source(const struct topo_fabric *f, size_t subnet)
{
	if (subnet >= f->nsubnets) {
		errno = EINVAL;
		return NULL;
	}
	return f->subnet_source[subnet];
}

const char *topo_fabric_speed_name(unsigned speed)
{
	return ib_speed_name(speed < IB_SPEED_COUNT ? (uint8_t)speed : IB_SPEED_COUNT);
}

size_t topo_fabric_nlinks(const struct topo_fabric *f)
{
	return f->nlinks;
}

int topo_fabric_link(const struct topo_fabric *f, size_t i, topo_link_info_t *info)
{
	const struct ib_link *l;

	if (i >= f->nlinks) {
		errno = EINVAL;
		return -1;
	}
	l = &f->links[i];
	info->sw[0] = f->nodes[l->node[0]].sw;
	info->sw[1] = f->nodes[l->node[1]].sw;
	info->subnet = f->nodes[l->node[0]].subnet;
	info->width = l->width;
	info->speed = l->speed < IB_SPEED_COUNT ? l->speed : 0;
	info->max_width = l->max_width;
	info->max_speed = l->max_speed < IB_SPEED_COUNT ? l->max_speed : 0;
	info->norm_width = f->norm_width && info->subnet < f->nsubnets ? f->norm_width[info->subnet] : 0;
	info->norm_speed = f->norm_speed && info->subnet < f->nsubnets ? f->norm_speed[info->subnet] : 0;
	info->verdict = ib_link_verdict(f, l);
	return 0;
}

int topo_fabric_host_guid_named(const struct topo_fabric *f, size_t h)
{
	const struct ib_host *ho;

	if (h >= f->nhosts)
		return 0;
	ho = &f->hosts[h];
	return ho->n > 0 && f->nodes[f->att[ho->first].ca].generic && !strncmp(ho->name, "0x", 2);
}

long topo_fabric_host_port_link(const struct topo_fabric *f, size_t h, size_t i)
{
	const struct ib_host *ho = h < f->nhosts ? &f->hosts[h] : NULL;
	const struct ib_node *nd;
	size_t j, k = 0;
	unsigned p;

	if (!ho || i >= ho->n) {
		errno = EINVAL;
		return -1;
	}
	/* attachments list each HCA's connected ports in port order: i is the k-th of its HCA */
	for (j = 0; j < i; j++)
		k += f->att[ho->first + j].ca == f->att[ho->first + i].ca;
	nd = &f->nodes[f->att[ho->first + i].ca];
	for (p = 1; nd->port_link && p <= nd->nports; p++)
		if (nd->port_link[p] != IB_NONE && k-- == 0)
			return (long)nd->port_link[p];
	errno = EINVAL;
	return -1;
}

int topo_fabric_host_port_rate(const struct topo_fabric *f, size_t h, size_t i, unsigned *width, unsigned *speed)
{
	long li = topo_fabric_host_port_link(f, h, i);

	if (li < 0)
		return -1;
	*width = f->links[li].width;
	*speed = f->links[li].speed < IB_SPEED_COUNT ? f->links[li].speed : 0;
	return 0;
}

const char *topo_fabric_switch_mapped_name(const struct topo_fabric *f, long s)
{
	return s >= 0 && (size_t)s < f->nsw ? ib_namemap_lookup(f, f->nodes[f->sw_node[s]].guid) : NULL;
}

const char *topo_fabric_switch_desc(const struct topo_fabric *f, long s)
{
	return s >= 0 && (size_t)s < f->nsw ? f->nodes[f->sw_node[s]].desc : NULL;
}

int topo_fabric_names_by_guid(const struct topo_fabric *f)
{
	size_t i;

	for (i = 0; i < f->nnodes; i++)
		if (f->nodes[i].type == IBN_CA && (f->nodes[i].generic || f->nodes[i].hwloc_named))
			return 1;
	return 0;
}
