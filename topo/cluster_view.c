/*
 * topo/cluster_view.c: the cluster's read-only queries for views (topo_view.h): its fabric, the node
 * types, and where each host is in the fabric and the torus.
 */
#include <errno.h>

#include "cluster_private.h"

const topo_fabric_t *topo_cluster_fabric(topo_cluster_t c)
{
	return c->fabric;
}

long topo_host_fabric_host(topo_cluster_t c, size_t h)
{
	if (h >= c->nhosts) {
		errno = EINVAL;
		return -1;
	}
	return c->hosts[h].fabric_host;
}

long topo_host_torus_node(topo_cluster_t c, size_t h)
{
	if (h >= c->nhosts) {
		errno = EINVAL;
		return -1;
	}
	return c->hosts[h].torus_node;
}

double topo_torus_node_distance(topo_cluster_t c, long a, long b)
{
	return c->torus ? topo_torus_model_distance(c->torus, a, b) : -1.0;
}

json_t *topo_torus_report(topo_cluster_t c)
{
	return c->torus ? topo_torus_model_report(c->torus) : NULL;
}

size_t topo_cluster_ntypes(topo_cluster_t c)
{
	return c->ntypes;
}

int topo_cluster_type_info(topo_cluster_t c, size_t i, topo_type_info_t *info)
{
	const struct topo_nodetype *t;

	if (i >= c->ntypes) {
		errno = EINVAL;
		return -1;
	}
	t = c->types[i];
	*info = (topo_type_info_t){ t->topo, t->npus, t->ncores, t->npackages, t->nhosts };
	return 0;
}

long topo_host_type(topo_cluster_t c, size_t h)
{
	if (h >= c->nhosts || !c->hosts[h].type) {
		errno = h >= c->nhosts ? EINVAL : ENOENT;
		return -1;
	}
	return (long)c->hosts[h].type->index;
}
