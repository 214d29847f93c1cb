/*
 * plugin/mpi/pmpi_memo.c: what earlier topology calls settled on a communicator.
 *
 * A communicator carries one attribute (a private keyval) holding:
 *   - a verdict: no topology call on this communicator reorders, for the RANKMAP_* environment of hash
 *     envh (its placement failed, e.g. more ranks on a host than its PUs; or every rank runs on one host
 *     and none is bound to a PU). Set on every rank together (from the scattered codes or from
 *     rmp_agree's allreduce), so every rank later takes the same branch without communicating.
 *   - results: for Cartesian and graph calls (whose arguments are the same on every rank), the key of the
 *     call (kind, arguments, environment) and this rank's new rank (RMP_MEMO_PLAIN: the unreordered
 *     result). Also set on every rank together, at the end of a call.
 *   - promises: MPI_Cart_map / MPI_Graph_map are local, so they cannot compute a placement that needs
 *     every rank's host; without a result for the same call they answer the unreordered placement and
 *     promise it here (this rank only). The constructor puts "some rank promised" into rmp_agree's
 *     allreduce, and then keeps the unreordered placement on every rank.
 * A few entries per communicator (RMP_MEMO_MAX results and as many promises, the oldest replaced),
 * O(1) memory; a promise pushed out by RMP_MEMO_MAX later ones is forgotten (that call may then
 * reorder). MPI_Comm_dup copies the attribute (same group, same processes). Under SMPI, where ranks
 * share the process and its keyvals, nothing is remembered: every call takes the full path, and a
 * constructor called after MPI_Cart_map may reorder where the map answered the unreordered placement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi.h"

extern char **environ;

#define RMP_MEMO_MAX 16

typedef struct memo_ent {
	uint64_t key;
	int32_t newrank; /* RMP_MEMO_PLAIN: the unreordered result */
} memo_ent_t;

/* A table of RMP_MEMO_MAX entries, the oldest replaced first. The results' table changes on every rank
 * of the communicator together, so it holds the same keys everywhere (a result evicted on one rank only
 * would send that rank alone into the next call's collectives); promises, which are one rank's own, are
 * kept apart so that they never evict a result. */
typedef struct memo_tab {
	int n, next;
	memo_ent_t ent[RMP_MEMO_MAX];
} memo_tab_t;

typedef struct memo {
	uint64_t verdict_env; /* env hash of the verdict, 0: none */
	char cause[200];      /* the verdict's warning text at the rank that printed it, else "" */
	memo_tab_t results;   /* outcomes of calls, set by every rank together */
	memo_tab_t promises;  /* this rank's MPI_Cart_map / MPI_Graph_map answers */
} memo_t;

uint64_t rmp_env_hash(void)
{
	uint64_t h = RMP_HASH_INIT;

	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "RANKMAP_", 8) != 0)
			continue;
		for (const char *c = *e; *c; c++) {
			h ^= (unsigned char)*c;
			h *= 1099511628211ULL;
		}
		h ^= 0xff, h *= 1099511628211ULL; /* separator */
	}
	return h ? h : 1;
}

uint64_t rmp_memo_key(int kind, uint64_t args, uint64_t envh)
{
	int v[2] = { kind, (int)(envh >> 32) };
	uint64_t h = rmp_hash_ints(args ^ envh, v, 2);

	return h ? h : 1;
}

#ifndef RANKMAP_SMPI
static int memo_keyval = MPI_KEYVAL_INVALID;

static int memo_copy(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
	memo_t *m = malloc(sizeof(*m));

	(void)old, (void)keyval, (void)extra;
	*flag = m != NULL;
	if (m)
		memcpy(m, in, sizeof(*m));
	*(void **)out = m;
	return MPI_SUCCESS;
}

static int memo_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm, (void)keyval, (void)extra;
	free(val);
	return MPI_SUCCESS;
}

/* The communicator's memo, created when create is set; NULL when none (or without memory). */
static memo_t *memo_get(MPI_Comm comm, int create)
{
	memo_t *m = NULL;
	int flag = 0;

	if (comm == MPI_COMM_NULL)
		return NULL;
	if (memo_keyval == MPI_KEYVAL_INVALID &&
	    (!create || PMPI_Comm_create_keyval(memo_copy, memo_delete, &memo_keyval, NULL) != MPI_SUCCESS))
		return NULL;
	if (PMPI_Comm_get_attr(comm, memo_keyval, &m, &flag) == MPI_SUCCESS && flag && m)
		return m;
	if (!create || !(m = calloc(1, sizeof(*m))))
		return NULL;
	if (PMPI_Comm_set_attr(comm, memo_keyval, m) != MPI_SUCCESS) {
		free(m);
		return NULL;
	}
	return m;
}

static memo_ent_t *memo_find(memo_tab_t *t, uint64_t key)
{
	for (int i = 0; t && key && i < t->n; i++)
		if (t->ent[i].key == key)
			return &t->ent[i];
	return NULL;
}

static void memo_put(memo_tab_t *t, uint64_t key, int newrank)
{
	memo_ent_t *e = memo_find(t, key);

	if (!e && t->n < RMP_MEMO_MAX) {
		e = &t->ent[t->n++];
	} else if (!e) {
		e = &t->ent[t->next];
		t->next = (t->next + 1) % RMP_MEMO_MAX;
	}
	e->key = key, e->newrank = newrank;
}

int rmp_memo_lookup(MPI_Comm comm, uint64_t envh, uint64_t key, int results, int *newrank)
{
	memo_t *m = memo_get(comm, 0);
	memo_ent_t *e;

	if (!m)
		return RMP_MEMO_MISS;
	if (m->verdict_env == envh)
		return *newrank = RMP_MEMO_PLAIN, RMP_MEMO_HIT;
	if (!results || !(e = memo_find(&m->results, key)))
		return RMP_MEMO_MISS;
	*newrank = e->newrank;
	return RMP_MEMO_HIT;
}

int rmp_memo_promised(MPI_Comm comm, uint64_t key)
{
	memo_t *m = memo_get(comm, 0);

	return m && memo_find(&m->promises, key) != NULL;
}

void rmp_memo_promise(MPI_Comm comm, uint64_t key)
{
	memo_t *m = key ? memo_get(comm, 1) : NULL;

	if (m)
		memo_put(&m->promises, key, RMP_MEMO_PLAIN);
}

void rmp_memo_result(MPI_Comm comm, uint64_t key, int newrank)
{
	memo_t *m = key ? memo_get(comm, 1) : NULL;

	if (m)
		memo_put(&m->results, key, newrank);
}

void rmp_memo_verdict(MPI_Comm comm, uint64_t envh, const char *cause)
{
	memo_t *m = memo_get(comm, 1);

	if (m) {
		m->verdict_env = envh;
		snprintf(m->cause, sizeof(m->cause), "%s", cause ? cause : "");
	}
}

const char *rmp_memo_cause(MPI_Comm comm)
{
	memo_t *m = memo_get(comm, 0);

	return m ? m->cause : "";
}
#else
int rmp_memo_lookup(MPI_Comm comm, uint64_t envh, uint64_t key, int results, int *newrank)
{
	(void)comm, (void)envh, (void)key, (void)results, (void)newrank;
	return RMP_MEMO_MISS;
}

int rmp_memo_promised(MPI_Comm comm, uint64_t key)
{
	(void)comm, (void)key;
	return 0;
}

void rmp_memo_promise(MPI_Comm comm, uint64_t key)
{
	(void)comm, (void)key;
}

void rmp_memo_result(MPI_Comm comm, uint64_t key, int newrank)
{
	(void)comm, (void)key, (void)newrank;
}

void rmp_memo_verdict(MPI_Comm comm, uint64_t envh, const char *cause)
{
	(void)comm, (void)envh, (void)cause;
}

const char *rmp_memo_cause(MPI_Comm comm)
{
	(void)comm;
	return "";
}
#endif

uint64_t rmp_cart_hash(int ndims, const int dims[], const int periods[])
{
	uint64_t h = rmp_hash_ints(RMP_HASH_INIT, &ndims, 1);

	for (int i = 0; dims && periods && i < ndims && i <= MAP_CART_MAXDIMS; i++) {
		int p = periods[i] != 0;

		h = rmp_hash_ints(rmp_hash_ints(h, &dims[i], 1), &p, 1);
	}
	return h;
}

uint64_t rmp_graph_hash(int nnodes, const int index[], const int edges[])
{
	uint64_t h = rmp_hash_ints(RMP_HASH_INIT, &nnodes, 1);

	if (nnodes > 0 && index && (index[nnodes - 1] == 0 || edges))
		h = rmp_hash_ints(rmp_hash_ints(h, index, (size_t)nnodes), edges, (size_t)index[nnodes - 1]);
	return h;
}

/* The answer of MPI_Cart_map / MPI_Graph_map for a call of kind on comm whose arguments hash to args and
 * describe nverts vertices; *newrank holds the MPI library's answer (kept where the library would pass
 * the constructor through: RANKMAP_DISABLE, RANKMAP_TRACE, one rank, an intercommunicator). */
void rmp_map_answer(MPI_Comm comm, int kind, uint64_t args, int nverts, int *newrank)
{
	int inter = 0, rank = 0, size = 0, nr = 0;
	const char *trace = getenv("RANKMAP_TRACE");

	if (rmp_disabled() || (trace && *trace) || comm == MPI_COMM_NULL ||
	    PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return;
	PMPI_Comm_rank(comm, &rank);
	PMPI_Comm_size(comm, &size);
	if (size < 2)
		return;
	uint64_t envh = rmp_env_hash(), key = rmp_memo_key(kind, args, envh);

	if (rmp_memo_lookup(comm, envh, key, 1, &nr) == RMP_MEMO_HIT && nr != RMP_MEMO_PLAIN) {
		*newrank = nr >= 0 ? nr : MPI_UNDEFINED;
		return;
	}
	*newrank = rank < nverts ? rank : MPI_UNDEFINED; /* what the unreordered constructor gives */
	if (nr != RMP_MEMO_PLAIN)
		rmp_memo_promise(comm, key);
}
