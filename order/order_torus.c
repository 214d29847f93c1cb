/*
 * order/order_torus.c: loads a torus config for the orderings through topo's public API (the parser
 * lives in topo/net_torus.c) and maps node indices to host names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"

/* Copies the host names of the cluster's torus nodes into t->names (left NULL when none is named). */
static int copy_names(topo_cluster_t c, order_torus_t *t, const char *path, rm_error_t *err)
{
	const char **names = calloc(t->nnodes ? t->nnodes : 1, sizeof(*names));
	size_t i;

	if (names && topo_torus_host_names(c, names, t->nnodes) > 0) {
		t->names = calloc(t->nnodes, sizeof(char *));
		for (i = 0; t->names && i < t->nnodes; i++)
			if (names[i] && !(t->names[i] = strdup(names[i])))
				break;
		if (!t->names || i < t->nnodes) {
			free(names);
			return rm_error_set(err, path, 0, 0, "out of memory");
		}
	}
	if (!names)
		return rm_error_set(err, path, 0, 0, "out of memory");
	free(names);
	return 0;
}

int order_torus_load(const char *path, order_torus_t *t, rm_error_t *err)
{
	topo_cluster_t c = topo_cluster_create();
	int rc;

	memset(t, 0, sizeof(*t));
	if (!c)
		return rm_error_set(err, path, 0, 0, "out of memory");
	if (topo_load_torus(c, path, err) < 0) {
		topo_cluster_destroy(c);
		return -1;
	}
	t->spec = *topo_torus(c);
	t->nnodes = (size_t)t->spec.dims[0] * (size_t)t->spec.dims[1] * (size_t)t->spec.dims[2] *
		    (size_t)t->spec.nodes_per_router;
	rc = copy_names(c, t, path, err);
	topo_cluster_destroy(c);
	if (rc < 0)
		order_torus_free(t);
	return rc;
}

void order_torus_free(order_torus_t *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; t->names && i < t->nnodes; i++)
		free(t->names[i]);
	free(t->names);
	memset(t, 0, sizeof(*t));
}

int order_torus_setup(const char *path, const char *dims, const char *link_cost, int mesh, order_torus_t *t,
		      rm_error_t *err)
{
	int d;

	memset(t, 0, sizeof(*t));
	if (!path == !dims) {
		errno = EINVAL;
		return rm_error_set(err, "torus", 0, 0, "give exactly one of --torus FILE and --dims XxYxZ");
	}
	if (path && order_torus_load(path, t, err) < 0)
		return -1;
	if (dims) {
		for (d = 0; d < 3; d++) {
			t->spec.wrap[d] = 1;
			t->spec.link_cost[d] = 1.0;
		}
		if (order_parse_dims(dims, &t->spec, err) < 0)
			return -1;
		t->nnodes = (size_t)t->spec.dims[0] * (size_t)t->spec.dims[1] * (size_t)t->spec.dims[2] *
			    (size_t)t->spec.nodes_per_router;
		if (t->nnodes > 100000000) {
			errno = EINVAL;
			return rm_error_set(err, "--dims", 0, 0, "'%s': more than 100,000,000 nodes", dims);
		}
	}
	if (link_cost && order_parse_link_cost(link_cost, &t->spec, err) < 0) {
		order_torus_free(t);
		return -1;
	}
	for (d = 0; mesh && d < 3; d++)
		t->spec.wrap[d] = 0;
	return 0;
}
