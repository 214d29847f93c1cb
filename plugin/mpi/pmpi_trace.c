/*
 * plugin/mpi/pmpi_trace.c: the traffic tracer (RANKMAP_TRACE=PATH).
 *
 * Each process counts, per destination, the bytes and messages it sends, in an open-addressing hash
 * table keyed by the destination's rank in MPI_COMM_WORLD: memory grows with the number of peers a
 * process really talks to, never with the job size. Ranks of other communicators are translated
 * through the world view of the communicator's neighbour table (pmpi_nbr.c), cached on the communicator
 * (an attribute), built on first use. Persistent requests
 * are remembered at *_init in the table the observers share (pmpi_persist.c; the destination's world
 * rank in the tracer's note) and counted at each MPI_Start. At MPI_Finalize rank 0 gathers every table
 * and writes two standard Matrix Market files (coordinate integer general; row = sender, column =
 * receiver, 1-based MPI_COMM_WORLD ranks; one value per entry): the bytes at PATH, the messages at
 * PATH's name without ".mtx" + ".messages.mtx", named in PATH's header ("% rankmap-messages: NAME",
 * which the pattern reader follows for the messages and loggp metrics). Each is written to a temporary
 * file renamed into place, the messages first, so readers never see a partial pattern.
 *
 * State: one context per process (per rank under SMPI without privatization: RANKMAP_SMPI).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmpi_obs.h"
#include "rm_tmpfile.h"

typedef struct trace_ent {
	int64_t peer; /* world rank + 1; 0: empty */
	uint64_t bytes, msgs;
} trace_ent_t;

typedef struct trace_ctx {
	char *path;
	int wrank, wsize;
	trace_ent_t *tab;
	size_t cap, used;
	int keyval;         /* comm attribute: its neighbour table's world view (rmp_nbr_t, pmpi_nbr.c) */
	MPI_Comm last_comm; /* one-entry cache of the last non-world communicator and its table */
	rmp_nbr_t *last_map;
} trace_ctx_t;

static rmp_slot_t trace_slot; /* the tracer's context: one per process (per rank under SMPI) */

static trace_ctx_t *ctx_get(void)
{
	return rmp_slot_get(&trace_slot);
}

static void ctx_set(trace_ctx_t *t)
{
	rmp_active.trace = rmp_slot_set(&trace_slot, t);
}

static int map_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
	rmp_nbr_t *m = val;
	trace_ctx_t *t = ctx_get();

	(void)comm, (void)keyval, (void)extra;
	if (t && t->last_map == m) /* the handle may be reused by the next communicator */
		t->last_comm = MPI_COMM_NULL, t->last_map = NULL;
	if (m) {
		rmp_nbr_free(m);
		free(m);
	}
	return MPI_SUCCESS;
}

static void rmp_trace_init(void)
{
	const char *p = getenv("RANKMAP_TRACE");
	trace_ctx_t *t;

	if (!p || !*p || rmp_disabled() || ctx_get())
		return;
	t = calloc(1, sizeof(*t));
	if (!t)
		return;
	t->path = strdup(p);
	t->cap = 64;
	t->tab = calloc(t->cap, sizeof(*t->tab));
	PMPI_Comm_rank(MPI_COMM_WORLD, &t->wrank);
	PMPI_Comm_size(MPI_COMM_WORLD, &t->wsize);
	if (!t->path || !t->tab ||
	    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, map_delete, &t->keyval, NULL) != MPI_SUCCESS) {
		free(t->path);
		free(t->tab);
		free(t);
		return;
	}
	ctx_set(t);
}

/* The neighbour table of comm with its world view (the translation of comm's ranks to world ranks). */
static rmp_nbr_t *map_build(MPI_Comm comm)
{
	rmp_nbr_t *m = calloc(1, sizeof(*m));

	if (m)
		rmp_nbr_world_build(m, comm);
	return m;
}

/* World rank of rank r of comm, or -1 (not traceable). */
static int world_rank(trace_ctx_t *t, MPI_Comm comm, int r)
{
	if (comm == MPI_COMM_WORLD)
		return r;
	if (comm == MPI_COMM_NULL || r < 0)
		return -1;
	rmp_nbr_t *m = NULL;
	int flag = 0;

	if (comm == t->last_comm && t->last_map)
		m = t->last_map;
	else {
		PMPI_Comm_get_attr(comm, t->keyval, &m, &flag);
		if (!flag) {
			m = map_build(comm);
			if (!m)
				return -1;
			PMPI_Comm_set_attr(comm, t->keyval, m);
		}
		t->last_comm = comm, t->last_map = m;
	}
	return rmp_nbr_world(m, r);
}

static void tab_grow(trace_ctx_t *t)
{
	size_t ncap = t->cap * 2;
	trace_ent_t *n = calloc(ncap, sizeof(*n));

	if (!n)
		return;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->tab[i].peer)
			continue;
		size_t j = (size_t)t->tab[i].peer * 0x9E3779B97F4A7C15ULL & (ncap - 1);

		while (n[j].peer)
			j = (j + 1) & (ncap - 1);
		n[j] = t->tab[i];
	}
	free(t->tab);
	t->tab = n;
	t->cap = ncap;
}

static void count(trace_ctx_t *t, int wdest, uint64_t bytes)
{
	int64_t key = (int64_t)wdest + 1;

	if (4 * (t->used + 1) > 3 * t->cap)
		tab_grow(t);
	size_t j = (size_t)key * 0x9E3779B97F4A7C15ULL & (t->cap - 1);

	while (t->tab[j].peer && t->tab[j].peer != key)
		j = (j + 1) & (t->cap - 1);
	if (!t->tab[j].peer) {
		if (4 * (t->used + 1) > 3 * t->cap + 1)
			return; /* could not grow: drop rather than loop forever */
		t->tab[j].peer = key;
		t->used++;
	}
	t->tab[j].bytes += bytes;
	t->tab[j].msgs++;
}

static void rmp_trace_bytes(MPI_Comm comm, int dest, uint64_t bytes)
{
	trace_ctx_t *t = ctx_get();
	int w;

	if (!t || dest == MPI_PROC_NULL || (w = world_rank(t, comm, dest)) < 0)
		return;
	count(t, w, bytes);
}

static void rmp_trace_send(MPI_Comm comm, int dest, int n, MPI_Datatype type)
{
	trace_ctx_t *t = ctx_get();
	int w;

	if (!t || dest == MPI_PROC_NULL || (w = world_rank(t, comm, dest)) < 0)
		return;
	count(t, w, (uint64_t)(n > 0 ? n : 0) * (uint64_t)rmp_type_size(type));
}

/* ---- persistent requests (the shared table, pmpi_persist.c) ------------------------------------ */

/* At *_init: the destination's world rank, in the note (not set: not traceable). */
static void trace_persist_add(const rmp_persist_t *p, rmp_persist_note_t *note)
{
	trace_ctx_t *t = ctx_get();
	int w;

	if (t && (w = world_rank(t, p->comm, p->dest)) >= 0)
		note->gen = (unsigned)w, note->set = 1;
}

static void trace_persist_start(const rmp_persist_t *p, rmp_persist_note_t *note)
{
	trace_ctx_t *t = ctx_get();

	if (t && note->set)
		count(t, (int)note->gen, p->bytes);
}

/* ---- neighbourhood collectives -------------------------------------------------------------- */

static void rmp_trace_neighbors(MPI_Comm comm, int n, MPI_Datatype type, const int counts[], const MPI_Datatype types[])
{
	int nn = 0, sz = 0, status = MPI_UNDEFINED, *v;

	if (!ctx_get())
		return;
	PMPI_Topo_test(comm, &status);
	v = rmp_out_neighbors(comm, status, &nn);
	if (!types)
		PMPI_Type_size(type, &sz);
	for (int i = 0; i < nn; i++) {
		if (types)
			PMPI_Type_size(types[i], &sz);
		int c = counts ? counts[i] : n;

		rmp_trace_bytes(comm, v[i], (uint64_t)(c > 0 ? c : 0) * (uint64_t)(sz > 0 ? sz : 0));
	}
	free(v);
}

/* ---- writing the pattern at MPI_Finalize ------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The messages file beside PATH: PATH's name without a final ".mtx", then ".messages.mtx". */
static char *messages_path(const char *path)
{
	size_t len = strlen(path), stem = len > 4 && !strcmp(path + len - 4, ".mtx") ? len - 4 : len;
	char *m = malloc(stem + sizeof(".messages.mtx"));

	if (m) {
		memcpy(m, path, stem);
		strcpy(m + stem, ".messages.mtx");
	}
	return m;
}

/* Rank 0: writes one column (col 1: bytes, 2: messages) of the gathered triples (sender ranks in order)
 * as a Matrix Market file at path, atomically; companion: the messages file's name, named in a header
 * comment of the bytes file. Returns 0 or -1. */
static int write_matrix(const trace_ctx_t *t, const char *path, int col, const char *companion, const uint64_t *all,
			const int *cnt, long total)
{
	char tmp[4096];
	FILE *f;
	long k = 0;
	int fd = rm_tmpfile_beside(path, 0666, tmp, sizeof(tmp)); /* unique even across nodes */

	if (fd < 0)
		return -1;
	if (!(f = fdopen(fd, "w"))) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	fprintf(f,
		"%%%%MatrixMarket matrix coordinate integer general\n"
		"%% rankmap trace: row = sending rank, column = receiving rank (MPI_COMM_WORLD, 1-based)\n"
		"%% value: %s sent\n",
		col == 1 ? "bytes" : "messages");
	if (companion)
		fprintf(f, "%% rankmap-messages: %s\n", companion);
	fprintf(f, "%d %d %ld\n", t->wsize, t->wsize, total);
	for (int r = 0; r < t->wsize; r++)
		for (int i = 0; i < cnt[r]; i++, k++)
			fprintf(f, "%d %llu %llu\n", r + 1, (unsigned long long)all[3 * k],
				(unsigned long long)all[3 * k + col]);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Rank 0: writes the pattern as two standard Matrix Market files of one value per entry: the message
 * counts beside PATH first (messages_path), then the bytes at PATH, whose header names the messages
 * file (mapping/pattern_mtx.c reads both when a metric needs messages). */
static void write_pattern(const trace_ctx_t *t, const uint64_t *all, const int *cnt, long total)
{
	char *mpath = messages_path(t->path);
	const char *base = mpath ? strrchr(mpath, '/') : NULL;

	if (mpath && write_matrix(t, mpath, 2, NULL, all, cnt, total) == 0)
		write_matrix(t, t->path, 1, base ? base + 1 : mpath, all, cnt, total);
	free(mpath);
}

/* Collective over MPI_COMM_WORLD, on every rank, tracing or not (the settings of the ranks may differ, the
 * path they take may not): whether every rank traces. 1 when all do, 0 when none does or some do not (the
 * lowest rank that does not trace warns, unless rmp_agree already did: one warning per job). */
static int trace_everywhere(trace_ctx_t *t)
{
	int init = 0, fin = 0, rank = 0;
	uint64_t in[3], out[3];

	if (PMPI_Initialized(&init) != MPI_SUCCESS || !init || PMPI_Finalized(&fin) != MPI_SUCCESS || fin)
		return 0;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	in[0] = t != NULL, in[1] = t == NULL, in[2] = t ? 0 : RMP_ELECT(rank);
	if (PMPI_Allreduce(in, out, 3, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
		return 0;
	if (out[0] && out[1] && out[2] == RMP_ELECT(rank) && !rmp_mixed_warned) {
		fprintf(stderr,
			"rankmap: MPI_Finalize: RANKMAP_TRACE: set on some ranks, not on all: no trace "
			"is written\n");
		fflush(stderr);
	}
	return out[0] && !out[1];
}

/* Collective over MPI_COMM_WORLD: gathers every table to rank 0, which writes the pattern. */
static void rmp_trace_finalize(void)
{
	trace_ctx_t *t = ctx_get();
	int every = trace_everywhere(t);

	if (!t)
		return;
	if (!every) { /* some rank does not trace: no gather (it would not join), nothing written */
		PMPI_Comm_free_keyval(&t->keyval);
		free(t->tab);
		free(t->path);
		free(t);
		ctx_set(NULL);
		return;
	}
	uint64_t *mine = malloc(sizeof(uint64_t) * 3 * (t->used + 1));
	int n = 0, *cnt = NULL, *rc3 = NULL, *dis = NULL;
	uint64_t *all = NULL;
	long total = 0;

	for (size_t i = 0; mine && i < t->cap; i++)
		if (t->tab[i].peer) {
			mine[3 * n] = (uint64_t)t->tab[i].peer; /* 1-based already */
			mine[3 * n + 1] = t->tab[i].bytes;
			mine[3 * n + 2] = t->tab[i].msgs;
			n++;
		}
	if (mine)
		qsort(mine, (size_t)n, 3 * sizeof(uint64_t), cmp_u64);
	if (t->wrank == 0) {
		cnt = calloc((size_t)t->wsize, sizeof(int));
		rc3 = calloc((size_t)t->wsize, sizeof(int));
		dis = calloc((size_t)t->wsize, sizeof(int));
	}
	PMPI_Gather(&n, 1, MPI_INT, cnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
	int go = 1;

	if (t->wrank == 0) {
		for (int r = 0; cnt && rc3 && dis && r < t->wsize; r++)
			rc3[r] = 3 * cnt[r], dis[r] = (int)(3 * total), total += cnt[r];
		all = cnt && rc3 && dis && 3 * total < INT32_MAX ? malloc(sizeof(uint64_t) * 3 * (size_t)(total + 1))
								 : NULL;
		go = all != NULL;
	}
	PMPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (go)
		PMPI_Gatherv(mine, 3 * n, MPI_UINT64_T, all, rc3, dis, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (go && t->wrank == 0)
		write_pattern(t, all, cnt, total);
	free(all);
	free(cnt);
	free(rc3);
	free(dis);
	free(mine);
	PMPI_Comm_free_keyval(&t->keyval);
	free(t->tab);
	free(t->path);
	free(t);
	ctx_set(NULL);
}

/* The tracer as an observer of the core (pmpi_core.c): started at MPI_Init, written at MPI_Finalize after
 * the observers that come after it (learning) have finished. */
static void trace_init(const int *argc, char ***argv)
{
	(void)argc, (void)argv;
	rmp_trace_init();
}

/* A tracing run (RANKMAP_TRACE set) never reorders: the recorded pattern is the program's own order. */
static int trace_plain(void)
{
	const char *p = getenv("RANKMAP_TRACE");

	return p && *p;
}

static const rmp_observer_t trace_observer = {
	.name = "trace",
	.order = 10,
	.active = &rmp_active.trace,
	.init = trace_init,
	.plain = trace_plain,
	.finalize = rmp_trace_finalize,
	.send = rmp_trace_send,
	.neighbors = rmp_trace_neighbors,
	.persist_add = trace_persist_add,
	.persist_start = trace_persist_start,
};

__attribute__((constructor)) static void trace_register(void)
{
	rmp_observer_add(&trace_observer);
}
