/*
 * plugin/mpi/pmpi_topo.c: the intercepted topology constructors.
 *
 * reorder=0, RANKMAP_DISABLE=1 or a tracing run (RANKMAP_TRACE: so that the recorded pattern is in the
 * application's own rank numbering, the one a later RANKMAP_PATTERN run maps): exactly the real call.
 * reorder=1:
 * check collectively that the ranks agree on the arguments, build the graph, reorder (pmpi_reorder.c),
 * then call the real constructor with reorder=0 on the reordered communicator. Any failure: one
 * warning and the real call with reorder=0 (the unreordered result).
 *
 * Vertex v of the graph is new rank v. Cart_create and Graph_create: the arguments describe vertices
 * by rank, so the real call on the reordered communicator gets them unchanged, and MPI_Cart_coords,
 * MPI_Cart_shift and the neighbourhood collectives follow. Dist_graph_create: edges are between
 * vertices, which are new ranks, so the arguments are passed unchanged too. Dist_graph_create_adjacent:
 * each process described its own vertex (its old rank); after reordering, vertex v is run by the
 * process that received new rank v, so the lists of old rank v travel to that process (one message
 * each on the fresh communicator) and are used there, their entries being vertex numbers, i.e. the
 * new ranks. MPI_Dist_graph_neighbors then returns, at new rank v, what old rank v passed.
 *
 * Each MPI_<fn> is an entry (pmpi_entry.h) that goes to rmp_w_<fn> below, or straight to PMPI_<fn> under
 * another MPI's program.
 *
 * Without reordering by rankmap (a failure, a verdict of pmpi_memo.c), Cart_create and Graph_create call
 * the real constructor with reorder=0, so that MPI_Cart_map/MPI_Graph_map (which answer the unreordered
 * placement then) agree with them. The distributed-graph constructors have no map function: they pass the
 * program's own reorder flag on, exactly as without the library. Open MPI 4.1's treematch component hangs
 * now and then in ompi_comm_nextcid when MPI_Dist_graph_create gets reorder=0 at 7 oversubscribed ranks
 * (MPICH's distgraph1 with every reorder set to 0 and no library: 3 runs of 6), a path the program
 * itself, passing reorder=1, never took.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi_entry.h"

/* Tells the observers the communicator the call made (collective over the call's communicator: every rank
 * that passed rmp_agree comes here; learning starts counting its traffic). Returns rc. */
static int created(rmp_call_t *call, int rc, const MPI_Comm *out, int ndims, const int periods[])
{
	rmp_obs_created(call, rc == MPI_SUCCESS ? *out : MPI_COMM_NULL, ndims, periods);
	return rc;
}

/* A call whose outcome the communicator remembers (rmp_call_memo): *split is the reordered communicator
 * to create the topology on (MPI_COMM_NULL on ranks left out). Returns 0, or -1 for the unreordered call
 * (RMP_MEMO_PLAIN, or a failed split). No gather, no mapping: one MPI_Comm_split, as the first call had. */
static int memo_split(MPI_Comm comm, int newrank, MPI_Comm *split)
{
	if (newrank == RMP_MEMO_PLAIN)
		return -1;
	return PMPI_Comm_split(comm, newrank >= 0 ? 0 : MPI_UNDEFINED, newrank, split) == MPI_SUCCESS ? 0 : -1;
}

RMP_ENTRY(Cart_create,
	  (MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *comm_cart),
	  (comm, ndims, dims, periods, reorder, comm_cart))
int rmp_w_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *comm_cart)
{
	rmp_call_t call;
	MPI_Comm split;
	int bad = 0, nr = 0;
	long long n = 1;

	if (!reorder || ndims < 1 || rmp_call_begin(&call, "MPI_Cart_create", comm) != 0)
		return PMPI_Cart_create(comm, ndims, dims, periods, reorder, comm_cart);
	bad = ndims < 1 || ndims > MAP_CART_MAXDIMS || !dims || !periods;
	for (int i = 0; !bad && i < ndims; i++)
		bad = dims[i] < 1 || (n *= dims[i]) > call.size;
	if (bad)
		rm_error_set(&call.err, "dims", 0, 0, "invalid dimensions for %d ranks", call.size);
	uint64_t h = rmp_cart_hash(ndims, dims, periods);

	if (rmp_call_memo(&call, RMP_KIND_CART, h, &nr)) {
		if (memo_split(comm, nr, &split) != 0)
			return PMPI_Cart_create(comm, ndims, dims, periods, 0, comm_cart);
		if (split == MPI_COMM_NULL)
			return *comm_cart = MPI_COMM_NULL, MPI_SUCCESS;
		int rc = PMPI_Cart_create(split, ndims, dims, periods, 0, comm_cart);

		PMPI_Comm_free(&split);
		return rc;
	}
	if (rmp_agree(&call, rm_error_isset(&call.err), h) != 0)
		return PMPI_Cart_create(comm, ndims, dims, periods, 0, comm_cart);
	call.nverts = (uint32_t)n;
	map_graph_t *g = call.rank == 0 ? rmp_graph_cart(&call, ndims, dims, periods) : NULL;

	if (rmp_reorder(&call, g, call.rank == 0 && !g, &split) != 0)
		return created(&call, PMPI_Cart_create(comm, ndims, dims, periods, 0, comm_cart), comm_cart, ndims,
			       periods);
	if (split == MPI_COMM_NULL) {
		*comm_cart = MPI_COMM_NULL;
		return created(&call, MPI_SUCCESS, comm_cart, ndims, periods);
	}
	int rc = PMPI_Cart_create(split, ndims, dims, periods, 0, comm_cart);

	PMPI_Comm_free(&split);
	return created(&call, rc, comm_cart, ndims, periods);
}

/* MPI_Cart_map and MPI_Graph_map are local (no communication; the standard does not make them
 * collective, and a program may call them on some ranks only), while the placement MPI_Cart_create would
 * apply needs every rank's host. They answer what the constructor applies for the same arguments on the
 * same communicator: the outcome of an earlier identical call when the communicator remembers one, else
 * the unreordered placement, which this rank then promises (pmpi_memo.c) and the constructor keeps. */
RMP_ENTRY(Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank),
	  (comm, ndims, dims, periods, newrank))
int rmp_w_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
	int rc = PMPI_Cart_map(comm, ndims, dims, periods, newrank);
	long long n = 1;

	if (rc != MPI_SUCCESS || ndims < 1 || ndims > MAP_CART_MAXDIMS || !dims || !periods)
		return rc;
	for (int i = 0; i < ndims; i++)
		n *= dims[i] > 0 ? dims[i] : 1;
	rmp_map_answer(comm, RMP_KIND_CART, rmp_cart_hash(ndims, dims, periods), n < INT32_MAX ? (int)n : INT32_MAX,
		       newrank);
	return rc;
}

/* The real graph constructor. SMPI 3.32 has none (its MPI_Graph_create aborts): there the library returns
 * the first nnodes ranks of comm as a plain communicator, as for distributed graphs below, and the
 * program keeps its own neighbour lists. */
static int real_graph(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *out)
{
#ifdef RANKMAP_SMPI
	int me = 0;

	(void)index, (void)edges, (void)reorder;
	PMPI_Comm_rank(comm, &me);
	return PMPI_Comm_split(comm, me < nnodes ? 0 : MPI_UNDEFINED, me, out);
#else
	return PMPI_Graph_create(comm, nnodes, index, edges, reorder, out);
#endif
}

RMP_ENTRY(Graph_create,
	  (MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *comm_graph),
	  (comm, nnodes, index, edges, reorder, comm_graph))
int rmp_w_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
		       MPI_Comm *comm_graph)
{
	rmp_call_t call;
	MPI_Comm split;
	int nr = 0;

	if (!reorder || nnodes < 1 || rmp_call_begin(&call, "MPI_Graph_create", comm) != 0)
		return real_graph(comm, nnodes, index, edges, reorder, comm_graph);
	int bad = nnodes < 1 || nnodes > call.size || !index;

	for (int i = 0; !bad && i < nnodes; i++)
		bad = index[i] < (i ? index[i - 1] : 0);
	bad = bad || (index[nnodes - 1] > 0 && !edges);
	if (bad)
		rm_error_set(&call.err, "index", 0, 0, "invalid graph of %d nodes for %d ranks", nnodes, call.size);
	uint64_t h = bad ? rmp_hash_ints(RMP_HASH_INIT, &nnodes, 1) : rmp_graph_hash(nnodes, index, edges);

	if (rmp_call_memo(&call, RMP_KIND_GRAPH, h, &nr)) {
		if (memo_split(comm, nr, &split) != 0)
			return real_graph(comm, nnodes, index, edges, 0, comm_graph);
		if (split == MPI_COMM_NULL)
			return *comm_graph = MPI_COMM_NULL, MPI_SUCCESS;
		int rc = real_graph(split, nnodes, index, edges, 0, comm_graph);

		PMPI_Comm_free(&split);
		return rc;
	}
	if (rmp_agree(&call, bad || rm_error_isset(&call.err), h) != 0)
		return real_graph(comm, nnodes, index, edges, 0, comm_graph);
	call.nverts = (uint32_t)nnodes;
	map_graph_t *g = call.rank == 0 ? rmp_graph_graph(&call, nnodes, index, edges) : NULL;

	rmp_obs_graph_weights(&call, g);
	if (rmp_reorder(&call, g, call.rank == 0 && !g, &split) != 0)
		return created(&call, real_graph(comm, nnodes, index, edges, 0, comm_graph), comm_graph, 0, NULL);
	if (split == MPI_COMM_NULL) {
		*comm_graph = MPI_COMM_NULL;
		return created(&call, MPI_SUCCESS, comm_graph, 0, NULL);
	}
	int rc = real_graph(split, nnodes, index, edges, 0, comm_graph);

	PMPI_Comm_free(&split);
	return created(&call, rc, comm_graph, 0, NULL);
}

RMP_ENTRY(Graph_map, (MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank),
	  (comm, nnodes, index, edges, newrank))
int rmp_w_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
#ifdef RANKMAP_SMPI
	/* SMPI 3.32 has no graph topologies; the library's MPI_Graph_create keeps the first nnodes ranks */
	int me = 0;

	(void)index, (void)edges;
	PMPI_Comm_rank(comm, &me);
	*newrank = me < nnodes ? me : MPI_UNDEFINED;
	return MPI_SUCCESS;
#else
	int rc = PMPI_Graph_map(comm, nnodes, index, edges, newrank);

	if (rc != MPI_SUCCESS || nnodes < 1 || !index)
		return rc;
	rmp_map_answer(comm, RMP_KIND_GRAPH, rmp_graph_hash(nnodes, index, edges), nnodes, newrank);
	return rc;
#endif
}

/* The real distributed-graph constructors (SMPI has none: its variant returns a plain duplicate and
 * programs keep their own neighbour lists). */
static int real_dist(MPI_Comm comm, int n, const int sources[], const int degrees[], const int dests[],
		     const int weights[], MPI_Info info, int reorder, MPI_Comm *out)
{
#ifdef RANKMAP_SMPI
	(void)n, (void)sources, (void)degrees, (void)dests, (void)weights, (void)info, (void)reorder;
	return PMPI_Comm_dup(comm, out);
#else
	return PMPI_Dist_graph_create(comm, n, sources, degrees, dests, weights, info, reorder, out);
#endif
}

static int real_adjacent(MPI_Comm comm, int indeg, const int sources[], const int sw[], int outdeg, const int dests[],
			 const int dw[], MPI_Info info, int reorder, MPI_Comm *out)
{
#ifdef RANKMAP_SMPI
	(void)indeg, (void)sources, (void)sw, (void)outdeg, (void)dests, (void)dw, (void)info, (void)reorder;
	return PMPI_Comm_dup(comm, out);
#else
	return PMPI_Dist_graph_create_adjacent(comm, indeg, sources, sw, outdeg, dests, dw, info, reorder, out);
#endif
}

/* Checks that ranks are in 0..size-1; sets call->err otherwise. */
static int check_ranks(rmp_call_t *call, const char *what, const int *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] < 0 || v[i] >= call->size)
			return rm_error_set(&call->err, what, 0, (int)i + 1, "rank %d outside 0..%d", v[i],
					    call->size - 1);
	return 0;
}

RMP_ENTRY(Dist_graph_create,
	  (MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[],
	   const int weights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph),
	  (comm, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph))
int rmp_w_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[],
			    const int weights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
	rmp_call_t call;
	MPI_Comm split;
	size_t ne = 0;

	if (!reorder || rmp_call_begin(&call, "MPI_Dist_graph_create", comm) != 0)
		return real_dist(comm, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph);
	int nr = 0;

	if (rmp_call_memo(&call, RMP_KIND_DIST, 0, &nr)) /* a verdict: no call on comm reorders */
		return real_dist(comm, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph);
	int bad = n < 0 || check_ranks(&call, "sources", sources, (size_t)(n > 0 ? n : 0)) != 0;

	for (int i = 0; !bad && i < n; i++)
		bad = degrees[i] < 0, ne += (size_t)degrees[i];
	bad = bad || check_ranks(&call, "destinations", destinations, ne) != 0;
	if (bad && !rm_error_isset(&call.err))
		rm_error_set(&call.err, "degrees", 0, 0, "negative degree");
	int *src = bad ? NULL : malloc(sizeof(int) * (ne + 1));

	if (!bad && !src)
		bad = rm_error_set(&call.err, "edges", 0, 0, "out of memory");
	for (size_t i = 0, k = 0; !bad && i < (size_t)n; i++)
		for (int d = 0; d < degrees[i]; d++)
			src[k++] = sources[i];
	if (rmp_agree(&call, bad || rm_error_isset(&call.err), 0) != 0) {
		free(src);
		return real_dist(comm, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph);
	}
	int root_fail = 0;
	const int *w = weights == MPI_UNWEIGHTED || weights == MPI_WEIGHTS_EMPTY ? NULL : weights;

	call.nverts = (uint32_t)call.size;
	map_graph_t *g = rmp_graph_gather(&call, ne, src, destinations, w, &root_fail);

	free(src);
	call.weighted = w != NULL;
	rmp_obs_graph_weights(&call, g);
	if (rmp_reorder(&call, g, root_fail, &split) != 0)
		return created(
			&call,
			real_dist(comm, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph),
			comm_dist_graph, 0, NULL);
	int rc = real_dist(split, n, sources, degrees, destinations, weights, info, 0, comm_dist_graph);

	PMPI_Comm_free(&split);
	return created(&call, rc, comm_dist_graph, 0, NULL);
}

/* The lists of one vertex of Dist_graph_create_adjacent, packed as ints:
 * indeg, outdeg, source-weight kind, destination-weight kind, sources, [weights], dests, [weights].
 * Weight kinds: 0 MPI_UNWEIGHTED, 1 an array, 2 MPI_WEIGHTS_EMPTY. */
static int weight_kind(const int *w)
{
	return w == MPI_UNWEIGHTED ? 0 : w == MPI_WEIGHTS_EMPTY ? 2 : 1;
}

static int *pack_lists(int indeg, const int src[], const int sw[], int outdeg, const int dst[], const int dw[],
		       int *len)
{
	int sk = weight_kind(sw), dk = weight_kind(dw);
	size_t n = 4 + (size_t)indeg * (sk == 1 ? 2 : 1) + (size_t)outdeg * (dk == 1 ? 2 : 1);
	int *p = malloc(sizeof(int) * n), *q = p + 4;

	if (!p || n > INT32_MAX)
		return free(p), NULL;
	p[0] = indeg, p[1] = outdeg, p[2] = sk, p[3] = dk;
	memcpy(q, src, sizeof(int) * (size_t)indeg), q += indeg;
	if (sk == 1)
		memcpy(q, sw, sizeof(int) * (size_t)indeg), q += indeg;
	memcpy(q, dst, sizeof(int) * (size_t)outdeg), q += outdeg;
	if (dk == 1)
		memcpy(q, dw, sizeof(int) * (size_t)outdeg);
	*len = (int)n;
	return p;
}

/* Sends this process's lists to the process now running its vertex (new rank = old rank) and
 * receives the lists of its new vertex; then creates the topology on split. */
static int move_lists(MPI_Comm split, int oldrank, const int *mine, int len, MPI_Info info, MPI_Comm *out)
{
	MPI_Request req;
	MPI_Status st;
	int n = 0;
	const int tag = 7101;

	PMPI_Isend(mine, len, MPI_INT, oldrank, tag, split, &req);
	PMPI_Probe(MPI_ANY_SOURCE, tag, split, &st); /* exactly one message comes to each rank */
	PMPI_Get_count(&st, MPI_INT, &n);
	int *p = malloc(sizeof(int) * (size_t)(n > 4 ? n : 4));

	PMPI_Recv(p ? p : (int *)mine, p ? n : 0, MPI_INT, st.MPI_SOURCE, tag, split, MPI_STATUS_IGNORE);
	PMPI_Wait(&req, MPI_STATUS_IGNORE);
	if (!p)
		return MPI_ERR_NO_MEM;
	int indeg = p[0], outdeg = p[1], *q = p + 4;
	const int *src = q, *sw, *dst, *dw;

	q += indeg;
	sw = p[2] == 0 ? MPI_UNWEIGHTED : p[2] == 2 ? MPI_WEIGHTS_EMPTY : q;
	q += p[2] == 1 ? indeg : 0;
	dst = q;
	q += outdeg;
	dw = p[3] == 0 ? MPI_UNWEIGHTED : p[3] == 2 ? MPI_WEIGHTS_EMPTY : q;
	int rc = real_adjacent(split, indeg, src, sw, outdeg, dst, dw, info, 0, out);

	free(p);
	return rc;
}

RMP_ENTRY(Dist_graph_create_adjacent,
	  (MPI_Comm comm, int indegree, const int sources[], const int sourceweights[], int outdegree,
	   const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph),
	  (comm, indegree, sources, sourceweights, outdegree, destinations, destweights, info, reorder,
	   comm_dist_graph))
int rmp_w_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
				     int outdegree, const int destinations[], const int destweights[], MPI_Info info,
				     int reorder, MPI_Comm *comm_dist_graph)
{
	rmp_call_t call;
	MPI_Comm split;
	int len = 0, *packed = NULL;

	if (!reorder || rmp_call_begin(&call, "MPI_Dist_graph_create_adjacent", comm) != 0)
		return real_adjacent(comm, indegree, sources, sourceweights, outdegree, destinations, destweights, info,
				     reorder, comm_dist_graph);
	int nr = 0;

	if (rmp_call_memo(&call, RMP_KIND_DIST, 0, &nr)) /* a verdict: no call on comm reorders */
		return real_adjacent(comm, indegree, sources, sourceweights, outdegree, destinations, destweights, info,
				     reorder, comm_dist_graph);
	int bad = indegree < 0 || outdegree < 0 ||
		  check_ranks(&call, "sources", sources, (size_t)(indegree > 0 ? indegree : 0)) != 0 ||
		  check_ranks(&call, "destinations", destinations, (size_t)(outdegree > 0 ? outdegree : 0)) != 0;

	if (!bad &&
	    !(packed = pack_lists(indegree, sources, sourceweights, outdegree, destinations, destweights, &len)))
		bad = rm_error_set(&call.err, "lists", 0, 0, "out of memory");
	if (bad && !rm_error_isset(&call.err))
		rm_error_set(&call.err, "degrees", 0, 0, "negative degree");
	int *src = bad ? NULL : malloc(sizeof(int) * ((size_t)outdegree + 1));

	for (int i = 0; src && i < outdegree; i++)
		src[i] = call.rank;
	if (rmp_agree(&call, bad || !src, 0) != 0) {
		free(src);
		free(packed);
		return real_adjacent(comm, indegree, sources, sourceweights, outdegree, destinations, destweights, info,
				     reorder, comm_dist_graph);
	}
	int root_fail = 0, k = weight_kind(destweights);

	call.nverts = (uint32_t)call.size;
	map_graph_t *g =
		rmp_graph_gather(&call, (size_t)outdegree, src, destinations, k == 1 ? destweights : NULL, &root_fail);

	free(src);
	call.weighted = k == 1;
	rmp_obs_graph_weights(&call, g);
	if (rmp_reorder(&call, g, root_fail, &split) != 0) {
		free(packed);
		return created(&call,
			       real_adjacent(comm, indegree, sources, sourceweights, outdegree, destinations,
					     destweights, info, reorder, comm_dist_graph),
			       comm_dist_graph, 0, NULL);
	}
	int rc = move_lists(split, call.rank, packed, len, info, comm_dist_graph);

	free(packed);
	PMPI_Comm_free(&split);
	return created(&call, rc, comm_dist_graph, 0, NULL);
}
