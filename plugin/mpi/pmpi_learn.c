/*
 * plugin/mpi/pmpi_learn.c: what a learning run records (RANKMAP_LEARN=1), and its cost.
 *
 * Each topology communicator created by a call with reorder=1 gets a record (at most RMP_LEARN_COMMS per
 * process; later ones are not learned): its neighbours in a small sorted array, each with a slot, and
 * two counters per slot (bytes, messages). Slots are the neighbourhood collectives' order: Cartesian
 * 2d = the -1 neighbour of dimension d, 2d + 1 the +1 neighbour; graphs: the i-th out-neighbour (when the
 * communicator reports no graph, as under SMPI, the i-th neighbour of its vertex in the call's structure,
 * sent by the root: structure_neighbours). A send
 * on the communicator finds its slot by a scan (<= 8 neighbours) or a binary search, then adds to two
 * counters (through a one-entry cache, so that a loop to one neighbour does not search): no hash, no
 * lock, no allocation, nothing sent. Sends on MPI_COMM_WORLD are matched against the world ranks of the
 * last record's neighbours. Sends to ranks that are not neighbours go to the record's "other" counters;
 * sends on other communicators are only counted (messages) in the process's "untracked". Persistent
 * sends count at each MPI_Start. The counting itself is in pmpi_learn.h and pmpi_learn_send.c.
 *
 * At MPI_Finalize every record is reduced, in creation order, over a private duplicate of the call's
 * communicator made at creation (so the user may free theirs), to the call's root, which turns it into a
 * per-rank pattern and merges it into the store (pmpi_learn_key.c).
 *
 * State: one context per process (per rank under SMPI, as the tracer's).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmpi.h"
#include "pmpi_learn.h"

static rmp_slot_t learn_slot;

rmp_learn_t *rmp_learn_ctx(void)
{
	return rmp_slot_get(&learn_slot);
}

static void ctx_set(rmp_learn_t *l)
{
	rmp_slot_set(&learn_slot, l, &rmp_active.learn);
}

#define FNV_PRIME 1099511628211ULL
#define INPUT_FILES_MAX 16      /* input files looked at per run */
#define INPUT_SAMPLE 4096       /* bytes read at each end of one */
#define CMDLINE_MAX (64 * 1024) /* bytes of /proc/self/cmdline read */

static uint64_t fold(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * FNV_PRIME;
	return h;
}

/* The hash of the program's arguments (argv[1..]; without them, /proc/self/cmdline's), never 0. */
static uint64_t cmdline_hash(const int *argc, char ***argv)
{
	uint64_t h = RMP_HASH_INIT;

	if (argc && argv && *argv && *argc > 0) {
		for (int i = 1; i < *argc && (*argv)[i]; i++)
			h = fold(h, (*argv)[i], strlen((*argv)[i]) + 1);
		return h | 1;
	}
	FILE *f = fopen("/proc/self/cmdline", "r");
	int c, first = 1;

	if (!f)
		return 0;
	while ((c = getc(f)) != EOF) {
		if (!first)
			h = (h ^ (unsigned char)c) * FNV_PRIME;
		first &= c != 0; /* argv[0] (the program is in the key) */
	}
	fclose(f);
	return h | 1;
}

/* Folds into h the size and both ends' first INPUT_SAMPLE bytes of the regular file open as fd (read
 * with pread: the offset of a shared descriptor such as standard input does not move). 1 folded, 0 not
 * a regular file. */
static int fold_file(uint64_t *h, int fd)
{
	struct stat st;
	char buf[INPUT_SAMPLE];
	ssize_t n;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	*h = fold(*h, &st.st_size, sizeof(st.st_size));
	if ((n = pread(fd, buf, sizeof(buf), 0)) > 0)
		*h = fold(*h, buf, (size_t)n);
	if (st.st_size > INPUT_SAMPLE && (n = pread(fd, buf, sizeof(buf), st.st_size - INPUT_SAMPLE)) > 0)
		*h = fold(*h, buf, (size_t)n);
	return 1;
}

/* Folds one argument into h when it names a regular file ("FILE" or "--opt=FILE"). 1 folded, else 0. */
static int fold_arg(uint64_t *h, const char *arg)
{
	const char *eq = arg[0] == '-' ? strchr(arg, '=') : NULL;
	const char *path = eq ? eq + 1 : arg;
	struct stat st;
	int fd, done;

	/* only regular files are opened: opening a device may have effects (a tape rewinds, a watchdog arms) */
	if (!*path || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) < 0)
		return 0;
	done = fold_file(h, fd);
	close(fd);
	return done;
}

/* The program's input: the files its arguments name, and standard input when it is a file (size and
 * samples; at most INPUT_FILES_MAX files), folded into h. Only the roots of topology calls ask (lazily:
 * a million ranks do not all open the input). */
static uint64_t inputs_hash(uint64_t h)
{
	char *buf = malloc(CMDLINE_MAX + 1);
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), files = fold_file(&h, 0);
	ssize_t len = 0, n;

	while (buf && fd >= 0 && len < CMDLINE_MAX && (n = read(fd, buf + len, (size_t)(CMDLINE_MAX - len))) > 0)
		len += n;
	if (fd >= 0)
		close(fd);
	if (buf) {
		buf[len] = 0;
		for (char *a = buf + strlen(buf) + 1; a < buf + len && files < INPUT_FILES_MAX; a += strlen(a) + 1)
			files += fold_arg(&h, a);
	}
	free(buf);
	return h;
}

uint64_t rmp_learn_cmdline(rmp_learn_t *l)
{
	if (!l || !l->cmdline)
		return 0;
	if (!l->inputs) {
		l->cmdline = inputs_hash(l->cmdline) | 1;
		l->inputs = 1;
	}
	return l->cmdline;
}

void rmp_learn_init(const int *argc, char ***argv)
{
	const char *v = getenv("RANKMAP_LEARN");

	if (!v || !*v || !strcmp(v, "0") || !strcmp(v, "off") || rmp_disabled() || rmp_learn_ctx())
		return;
	rmp_learn_t *l = calloc(1, sizeof(*l));

	if (l) {
		rmp_learn_entry(l)->dest = RMP_LEARN_NOHIT;
		l->cmdline = cmdline_hash(argc, argv);
		ctx_set(l);
	}
}

/* ---- the hot path ------------------------------------------------------------------------------ */

void rmp_learn_send(MPI_Comm comm, int dest, int n, MPI_Datatype type)
{
	if (rmp_active.learn)
		rmp_learn_count(comm, dest, n, type);
}

void rmp_learn_neighbors(MPI_Comm comm, int n, MPI_Datatype type, const int counts[], const MPI_Datatype types[])
{
	rmp_learn_t *l = rmp_learn_ctx();

	for (int i = l ? l->n : 0; i-- > 0;) {
		rmp_learn_rec_t *c = &l->rec[i];

		if (c->comm != comm)
			continue;
		int sz = types ? 0 : rmp_type_size(type);

		for (int s = 0; s < c->nslots; s++) {
			int k = counts ? counts[s] : n;

			if (types)
				sz = rmp_type_size(types[s]);
			uint64_t *t = &c->cnt[2 * s];

			t[0] += (uint64_t)(k > 0 ? k : 0) * (uint64_t)sz;
			t[1]++;
		}
		return;
	}
}

int MPI_Comm_free(MPI_Comm *comm)
{
	rmp_learn_t *l = rmp_active.learn ? rmp_learn_ctx() : NULL;

	for (int i = 0; l && comm && i < l->n; i++)
		if (l->rec[i].comm == *comm && *comm != MPI_COMM_NULL) {
			rmp_learn_invalidate(l);        /* the cache's counts go to the record first */
			l->rec[i].comm = MPI_COMM_NULL; /* the handle may be reused: stop counting, keep the counts */
			if (l->world == &l->rec[i])
				l->world = NULL;
		}
	return PMPI_Comm_free(comm);
}

/* ---- tracking a new communicator ---------------------------------------------------------------- */

static int cmp_pair(const void *a, const void *b)
{
	const int *x = a, *y = b;

	return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* The topology newcomm reports. Cartesian calls (cart) are MPI_CART without asking (SMPI has no
 * MPI_Topo_test); under SMPI graphs report none (its graph constructors return plain duplicates). */
static int topo_kind(MPI_Comm newcomm, int cart)
{
	int status = cart ? MPI_CART : MPI_UNDEFINED;

#ifndef RANKMAP_SMPI
	if (!cart && newcomm != MPI_COMM_NULL)
		PMPI_Topo_test(newcomm, &status);
#else
	(void)newcomm;
#endif
	return status;
}

/* The out-neighbours of this process in newcomm, of topology status, in slot order (malloc'ed), *n their
 * count. */
static int *neighbours(MPI_Comm newcomm, int status, int *n)
{
	int *v = NULL, me = 0;

	*n = 0;
	if (status == MPI_CART) {
		int nd = 0;

		PMPI_Cartdim_get(newcomm, &nd);
		v = malloc(sizeof(int) * (size_t)(2 * nd + 1));
		for (int d = 0; v && d < nd; d++)
			PMPI_Cart_shift(newcomm, d, 1, &v[2 * d], &v[2 * d + 1]);
		*n = v ? 2 * nd : 0;
	} else if (status == MPI_GRAPH) {
		PMPI_Comm_rank(newcomm, &me);
		PMPI_Graph_neighbors_count(newcomm, me, n);
		v = malloc(sizeof(int) * (size_t)(*n + 1));
		if (v)
			PMPI_Graph_neighbors(newcomm, me, *n, v);
#ifndef RANKMAP_SMPI
	} else if (status == MPI_DIST_GRAPH) {
		int in = 0, out = 0, w = 0;

		PMPI_Dist_graph_neighbors_count(newcomm, &in, &out, &w);
		int *src = malloc(sizeof(int) * (size_t)(in + 1));

		v = malloc(sizeof(int) * (size_t)(out + 1));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
		if (src && v)
			PMPI_Dist_graph_neighbors(newcomm, in, src, MPI_UNWEIGHTED, out, v, MPI_UNWEIGHTED);
#pragma GCC diagnostic pop
		free(src);
		*n = src && v ? out : 0;
#endif
	}
	if (!v)
		*n = 0;
	return v;
}

/* Sorted (rank, slot) pairs of the valid entries of v (n slots). */
static int *pairs(const int *v, int n, int *np)
{
	int *p = malloc(sizeof(int) * (size_t)(2 * n + 2)), k = 0;

	for (int s = 0; p && s < n; s++)
		if (v[s] >= 0)
			p[2 * k] = v[s], p[2 * k + 1] = s, k++;
	if (p)
		qsort(p, (size_t)k, 2 * sizeof(int), cmp_pair);
	*np = p ? k : 0;
	return p;
}

/* Root: the send buffer of structure_neighbours: at displs[r] the neighbours of verts[r]. NULL on failure. */
static int *structure_lists(const rmp_learn_rec_t *c, const int *verts, int size, int *counts, int *displs)
{
	long total = 0;
	int *send;

	for (int r = 0; r < size; r++) {
		int64_t x = verts[r];

		counts[r] = c->xadj && x >= 0 && (uint64_t)x < c->gn ? (int)(c->xadj[x + 1] - c->xadj[x]) : 0;
		displs[r] = (int)total, total += counts[r];
		if (total >= INT32_MAX)
			return NULL;
	}
	send = malloc(sizeof(int) * (size_t)(total + 1));
	for (int r = 0; send && r < size; r++)
		for (int i = 0; i < counts[r]; i++)
			send[displs[r] + i] = (int)c->adj[c->xadj[verts[r]] + (uint64_t)i];
	return send;
}

/* Graph calls whose communicator reports no graph topology (SMPI's constructors return plain duplicates;
 * programs keep their own neighbour lists): the neighbours of this process's vertex (its rank in the new
 * communicator: a graph's vertices are the new ranks) in the call's structure, which the root keeps
 * (c->xadj, c->adj: both directions of every edge, sorted). The root sends each process its list.
 * Collective over c->priv. Returns the list (malloc'ed; NULL on failure), *n its length. */
static int *structure_neighbours(const rmp_learn_rec_t *c, int *n)
{
	int size = 0, go = 1, *verts = NULL, *counts = NULL, *displs = NULL, *send = NULL, *v;

	*n = 0;
	PMPI_Comm_size(c->priv, &size);
	if (c->rank == 0) {
		verts = malloc(sizeof(int) * (size_t)size);
		counts = malloc(sizeof(int) * (size_t)size);
		displs = malloc(sizeof(int) * (size_t)size);
	}
	PMPI_Gather(&c->vertex, 1, MPI_INT, verts, 1, MPI_INT, 0, c->priv);
	if (c->rank == 0)
		go = verts && counts && displs && (send = structure_lists(c, verts, size, counts, displs));
	PMPI_Bcast(&go, 1, MPI_INT, 0, c->priv);
	if (go)
		PMPI_Scatter(counts, 1, MPI_INT, n, 1, MPI_INT, 0, c->priv);
	v = go ? malloc(sizeof(int) * (size_t)(*n + 1)) : NULL;
	if (go) { /* the lists go out only when every rank can take its own */
		int got = v != NULL;

		PMPI_Allreduce(&got, &go, 1, MPI_INT, MPI_MIN, c->priv);
	}
	if (go)
		PMPI_Scatterv(send, counts, displs, MPI_INT, v, *n, MPI_INT, 0, c->priv);
	else
		free(v), v = NULL;
	free(verts), free(counts), free(displs), free(send);
	if (!v)
		*n = 0;
	return v;
}

/* Fills c's neighbour tables (this process's part): from the list given (v, n; taken over), else from
 * newcomm's topology (status). 0 or -1 (out of memory). */
static int rec_neighbours(rmp_learn_rec_t *c, MPI_Comm newcomm, int status, int *v, int n)
{
	int nw = 0;

	if (!v)
		v = neighbours(newcomm, status, &n);
	MPI_Group g, wg;

	c->nslots = n;
	c->slot_rank = v;
	c->cnt = calloc((size_t)(2 * n + 2), sizeof(uint64_t));
	c->nb = pairs(v, n, &c->nnb);
	int *w = malloc(sizeof(int) * (size_t)(n + 1));

	if (!c->cnt || !c->nb || !w || (n && !v)) {
		free(w);
		return -1;
	}
	for (int s = 0; s < n; s++)
		w[s] = MPI_UNDEFINED;
	PMPI_Comm_group(newcomm, &g);
	PMPI_Comm_group(MPI_COMM_WORLD, &wg);
	int *valid = malloc(sizeof(int) * (size_t)(n + 1));

	for (int s = 0; valid && s < n; s++)
		valid[s] = v[s] >= 0 ? v[s] : MPI_PROC_NULL;
	if (valid && n)
		PMPI_Group_translate_ranks(g, n, valid, wg, w);
	PMPI_Group_free(&g);
	PMPI_Group_free(&wg);
	free(valid);
	for (int s = 0; s < n; s++)
		if (w[s] == MPI_UNDEFINED || w[s] == MPI_PROC_NULL)
			w[s] = -1;
	c->wnb = pairs(w, n, &nw);
	free(w);
	return c->wnb ? 0 : -1;
}

int rmp_learn_room(const rmp_call_t *call)
{
	rmp_learn_t *l = call->learn ? rmp_learn_ctx() : NULL;

	return !l ? 2 : l->n < RMP_LEARN_COMMS ? 0 : 1;
}

void rmp_learn_agreed(rmp_call_t *call, uint64_t worst, uint64_t lowest)
{
	call->track = worst == 0;
	if (worst == 2 && lowest == RMP_ELECT(call->rank)) {
		rm_error_t e = { 0 };

		rm_error_set(&e, "RANKMAP_LEARN", 0, 0, "set on some ranks of %s's communicator, not on all", call->fn);
		rmp_learn_warn(&e, "this call is not learned");
	}
}

/* Graph calls take their neighbours from the call's structure (structure_neighbours) where the library's
 * graph constructors return plain communicators: under SMPI (pmpi_topo.c). Elsewhere the communicator
 * reports its graph (a communicator that did not would count its sends as "other"). Decided by the build,
 * so every rank takes the same branch without asking the others. */
#ifdef RANKMAP_SMPI
#define GRAPH_FROM_STRUCTURE 1
#else
#define GRAPH_FROM_STRUCTURE 0
#endif

void rmp_learn_track(rmp_call_t *call, MPI_Comm newcomm, int ndims, const int periods[])
{
	rmp_learn_t *l = rmp_learn_ctx();
	MPI_Comm priv = MPI_COMM_NULL;
	int *given = NULL, ng = 0;

	/* every rank of the call takes the same branch (call->track was agreed by rmp_agree): the records
	 * are made together or not at all */
	if (!call->track || !l || PMPI_Comm_dup(call->comm, &priv) != MPI_SUCCESS) {
		free(call->lxadj), free(call->ladj);
		call->lxadj = NULL, call->ladj = NULL;
		return;
	}
	rmp_learn_rec_t *c = &l->rec[l->n++];

	memset(c, 0, sizeof(*c));
	c->comm = newcomm;
	c->priv = priv;
	c->rank = call->rank;
	c->nverts = call->nverts;
	c->order = call->learn_order;
	snprintf(c->fn, sizeof(c->fn), "%s", call->fn);
	c->ndims = ndims;
	for (int d = 0; d < ndims && d < RM_PATTERN_MAXDIMS; d++)
		c->periods[d] = periods[d] != 0;
	c->xadj = call->lxadj, c->adj = call->ladj, c->gn = call->ln, c->ghash = call->lhash;
	call->lxadj = NULL, call->ladj = NULL;
	rmp_learn_invalidate(l); /* the world record may change, newcomm may be a cached handle */
	c->vertex = -1;
	if (newcomm != MPI_COMM_NULL)
		PMPI_Comm_rank(newcomm, &c->vertex);
	if (!ndims && GRAPH_FROM_STRUCTURE)
		given = structure_neighbours(c, &ng); /* collective over c->priv */
	if (newcomm != MPI_COMM_NULL) {
		if (rec_neighbours(c, newcomm, topo_kind(newcomm, ndims > 0), given, ng) != 0)
			c->nslots = 0, c->nnb = 0; /* counts go to "other" */
		l->world = c;
	} else {
		free(given);
	}
}

void rmp_learn_finalize(void)
{
	rmp_learn_t *l = rmp_learn_ctx();

	if (!l)
		return;
	rmp_learn_flush(l); /* the cache's counts into the records before they are collected */
	for (int i = 0; i < l->n; i++) {
		rmp_learn_rec_t *c = &l->rec[i];

		rmp_learn_collect(c); /* collective over c->priv (pmpi_learn_key.c) */
		PMPI_Comm_free(&c->priv);
		free(c->nb), free(c->wnb), free(c->cnt), free(c->slot_rank), free(c->xadj), free(c->adj);
	}
	rmp_learn_persist_free(l);
	free(l);
	ctx_set(NULL); /* under SMPI rmp_active.learn stays: other ranks may still learn */
}
