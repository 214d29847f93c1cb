/*
 * plugin/mpi/pmpi_graph.c: the communication graph of a topology call, built at the root.
 *
 * Cartesian: the halo graph of dims/periods (mapping/'s map_graph_cart), or the recorded pattern of
 * RANKMAP_PATTERN. Graph_create: every rank holds the whole graph already; the root converts its own
 * copy. Dist_graph: each rank holds some edges; they are gathered to the root with one Gather of
 * counts and one Gatherv of (source, destination, weight) triples, O(edges) at the root only.
 *
 * RANKMAP_PATTERN applies to every topology call alike: the recorded traffic (its edges and weights)
 * replaces the call's graph, weights given to MPI_Dist_graph_create(_adjacent) included, when it has one
 * vertex per rank of the new communicator; a pattern that is missing, unreadable or of another size is
 * one warning and no reordering.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi.h"

/* Root: the recorded pattern, which must have one vertex per rank of the new communicator. */
static map_graph_t *pattern_graph(rmp_call_t *call)
{
	/* nverts bounds what the file may declare: a bad file costs no allocation of its claimed size */
	map_graph_t *g = map_graph_load_max(call->env.pattern, call->env.metric, call->nverts, &call->err);

	if (g && g->n != call->nverts) {
		rm_error_set(&call->err, call->env.pattern, 0, 0, "pattern has %u ranks, the call has %u", g->n,
			     call->nverts);
		map_graph_destroy(g);
		return NULL;
	}
	if (!g && !rm_error_isset(&call->err))
		rm_error_set(&call->err, call->env.pattern, 0, 0, "cannot load the pattern");
	return g;
}

map_graph_t *rmp_graph_cart(rmp_call_t *call, int ndims, const int dims[], const int periods[])
{
	map_cart_t cart;

	if (call->env.pattern)
		return pattern_graph(call);
	if (ndims < 1 || ndims > MAP_CART_MAXDIMS) {
		rm_error_set(&call->err, "ndims", 0, 0, "%d dimensions (supported: 1 to %d)", ndims, MAP_CART_MAXDIMS);
		return NULL;
	}
	memset(&cart, 0, sizeof(cart));
	cart.ndims = ndims;
	for (int i = 0; i < ndims; i++) {
		cart.dims[i] = dims[i];
		cart.periods[i] = periods[i] != 0;
		cart.weights[i] = 1.0;
	}
	rmp_obs_cart_weights(call, ndims, periods, cart.weights); /* an observer's (learning's) weights */
	map_graph_t *g = map_graph_cart(&cart, &call->err);

	if (!g && !rm_error_isset(&call->err))
		rm_error_set(&call->err, "dims", 0, 0, "cannot build the Cartesian graph");
	return g;
}

map_graph_t *rmp_graph_graph(rmp_call_t *call, int nnodes, const int index[], const int edges[])
{
	if (call->env.pattern)
		return pattern_graph(call);
	size_t ne = nnodes > 0 ? (size_t)index[nnodes - 1] : 0;
	uint32_t *src = malloc(sizeof(uint32_t) * (ne + 1)), *dst = malloc(sizeof(uint32_t) * (ne + 1));
	double *w = malloc(sizeof(double) * (ne + 1));
	map_graph_t *g = NULL;
	size_t k = 0;

	if (!src || !dst || !w) {
		rm_error_set(&call->err, "graph", 0, 0, "out of memory for %zu edges", ne);
		goto out;
	}
	for (int i = 0; i < nnodes; i++) {
		for (int e = i ? index[i - 1] : 0; e < index[i]; e++) {
			if (edges[e] < 0 || edges[e] >= nnodes) {
				rm_error_set(&call->err, "edges", 0, 0, "edge %d names rank %d of %d", e, edges[e],
					     nnodes);
				goto out;
			}
			src[k] = (uint32_t)i, dst[k] = (uint32_t)edges[e], w[k++] = 1.0;
		}
	}
	g = map_graph_from_edges((uint32_t)nnodes, k, src, dst, w, &call->err);
out:
	free(src);
	free(dst);
	free(w);
	return g;
}

/* Root: converts gathered (src, dst, weight) triples into a graph; NULL on error. */
static map_graph_t *triples_graph(rmp_call_t *call, const int *tri, size_t n)
{
	uint32_t *src = malloc(sizeof(uint32_t) * (n + 1)), *dst = malloc(sizeof(uint32_t) * (n + 1));
	double *w = malloc(sizeof(double) * (n + 1));
	map_graph_t *g = NULL;
	size_t k = 0;

	if (!src || !dst || !w) {
		rm_error_set(&call->err, "graph", 0, 0, "out of memory for %zu edges", n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const int *t = tri + 3 * i;

		if (t[0] < 0 || t[1] < 0 || (uint32_t)t[0] >= call->nverts || (uint32_t)t[1] >= call->nverts) {
			rm_error_set(&call->err, "edges", 0, 0, "edge %d -> %d outside 0..%u", t[0], t[1],
				     call->nverts - 1);
			goto out;
		}
		if (t[2] <= 0 || t[0] == t[1])
			continue;
		src[k] = (uint32_t)t[0], dst[k] = (uint32_t)t[1], w[k++] = (double)t[2];
	}
	g = map_graph_from_edges(call->nverts, k, src, dst, w, &call->err);
out:
	free(src);
	free(dst);
	free(w);
	return g;
}

/* Root: receive counts and displacements for the triples; returns the total or -1. */
static long plan_gather(const int *counts, int size, int *rcounts, int *displs)
{
	long total = 0;

	for (int r = 0; r < size; r++) {
		if (counts[r] < 0)
			return -1;
		rcounts[r] = 3 * counts[r];
		displs[r] = (int)(3 * total);
		total += counts[r];
		if (3 * total > INT32_MAX)
			return -1;
	}
	return total;
}

map_graph_t *rmp_graph_gather(rmp_call_t *call, size_t nedges, const int *src, const int *dst, const int *weights,
			      int *root_fail)
{
	int *tri = malloc(sizeof(int) * 3 * (nedges + 1));
	int mine = tri && nedges <= INT32_MAX / 3 ? (int)nedges : -1, go = 1;
	int *counts = NULL, *rcounts = NULL, *displs = NULL, *all = NULL;
	long total = 0;
	map_graph_t *g = NULL;

	for (int i = 0; mine > 0 && i < mine; i++)
		tri[3 * i] = src[i], tri[3 * i + 1] = dst[i], tri[3 * i + 2] = weights ? weights[i] : 1;
	if (call->rank == 0) {
		counts = malloc(sizeof(int) * (size_t)call->size);
		rcounts = malloc(sizeof(int) * (size_t)call->size);
		displs = malloc(sizeof(int) * (size_t)call->size);
	}
	PMPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, call->comm);
	if (call->rank == 0) {
		total = counts && rcounts && displs ? plan_gather(counts, call->size, rcounts, displs) : -1;
		all = total >= 0 ? malloc(sizeof(int) * 3 * (size_t)(total + 1)) : NULL;
		go = all != NULL;
	}
	PMPI_Bcast(&go, 1, MPI_INT, 0, call->comm);
	if (go)
		PMPI_Gatherv(tri, mine > 0 ? 3 * mine : 0, MPI_INT, all, rcounts, displs, MPI_INT, 0, call->comm);
	if (call->rank == 0) {
		if (!go)
			rm_error_set(&call->err, "edges", 0, 0, "cannot gather the edges (a rank failed, or too many)");
		else if (call->env.pattern) /* as for Cart and Graph: the recorded traffic replaces the call's */
			g = pattern_graph(call);
		else
			g = triples_graph(call, all, (size_t)total);
		*root_fail = g == NULL;
	}
	free(tri);
	free(counts);
	free(rcounts);
	free(displs);
	free(all);
	return g;
}
