/*
 * order/order_torus.c: loads a torus config for the orderings through topo's torus model (the
 * parser lives in topo/net_torus.c, declared in topo_private.h) and maps node indices to host names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "topo_private.h"

int order_torus_load(const char *path, order_torus_t *t, rm_error_t *err)
{
	struct topo_torus_model *m = topo_torus_model_load(path, err);
	size_t i, nh;

	memset(t, 0, sizeof(*t));
	if (!m)
		return -1;
	t->spec = *topo_torus_model_spec(m);
	t->nnodes = (size_t)t->spec.dims[0] * (size_t)t->spec.dims[1] * (size_t)t->spec.dims[2] *
		    (size_t)t->spec.nodes_per_router;
	nh = topo_torus_model_nhosts(m);
	if (nh) {
		t->names = calloc(t->nnodes, sizeof(char *));
		if (!t->names) {
			topo_torus_model_destroy(m);
			return rm_error_set(err, path, 0, 0, "out of memory");
		}
		for (i = 0; i < nh; i++) {
			const char *name = topo_torus_model_host_name(m, i);
			long node = topo_torus_model_host_node(m, name);

			if (node >= 0 && (size_t)node < t->nnodes && !t->names[node])
				t->names[node] = strdup(name);
		}
	}
	topo_torus_model_destroy(m);
	return 0;
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

int order_torus_setup(const char *path, const char *dims, const char *link_cost, int mesh,
		      order_torus_t *t, rm_error_t *err)
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
