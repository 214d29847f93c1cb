/*
 * plugin/mpi/pmpi_core.c: the core of the PMPI library that every other file may use and that uses none of
 * them: the observer registry (the features register hooks here, each with its own opaque state in a
 * call, rmp_call_state; the core calls the hooks and never a feature by name), the per-rank slots, the
 * library's one warning, and small helpers (the daemon's address, hashes, CPU time).
 *
 * Files of plugin/mpi form no cycle (scripts/file_cycles.sh, tests/integration/pmpi_layers.sh): this file
 * at the bottom, the features (pmpi_trace*.c, pmpi_learn*.c) above it, the topology call's path
 * (pmpi_env.c, pmpi_memo.c, pmpi_graph.c, pmpi_place.c, pmpi_daemon.c, pmpi_reorder.c, pmpi_topo.c) and
 * the wrappers (pmpi_wrap.c) reaching the features only through the hooks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "pmpi.h"
#include "rm_client.h"

/* The observers, in registration order (constructors: the order the linker met the files in, which no
 * hook depends on: each observer says where it stands, rmp_observer_t.order). */
static const rmp_observer_t *observers[RMP_OBSERVERS_MAX];
static int nobservers;
/* The send hooks alone, with their switches, in registry order: what the wrappers' counting path walks
 * (rmp_send_slow, inlined into them), two loads per observer. */
rmp_send_hook_t rmp_send_hooks[RMP_OBSERVERS_MAX];
int rmp_nsend_hooks;

void rmp_observer_add(const rmp_observer_t *o)
{
	int i = nobservers;

	if (nobservers == RMP_OBSERVERS_MAX)
		return;
	while (i > 0 && observers[i - 1]->order > o->order) { /* kept sorted by order */
		observers[i] = observers[i - 1];
		i--;
	}
	observers[i] = o;
	nobservers++;
	rmp_nsend_hooks = 0;
	for (int k = 0; k < nobservers; k++)
		if (observers[k]->send)
			rmp_send_hooks[rmp_nsend_hooks++] =
				(rmp_send_hook_t){ observers[k]->active, observers[k]->send };
}

int rmp_observer_count(void)
{
	return nobservers;
}

const rmp_observer_t *rmp_observer_at(int i)
{
	return i >= 0 && i < nobservers ? observers[i] : NULL;
}

void rmp_obs_init(const int *argc, char ***argv)
{
	for (int i = 0; i < nobservers; i++)
		if (observers[i]->init)
			observers[i]->init(argc, argv);
}

int rmp_obs_plain(void)
{
	for (int i = 0; i < nobservers; i++)
		if (observers[i]->plain && observers[i]->plain())
			return 1;
	return 0;
}

void *rmp_call_state(rmp_call_t *call, const rmp_observer_t *o)
{
	for (int i = 0; i < nobservers; i++)
		if (observers[i] == o)
			return call->obs[i];
	return NULL;
}

void rmp_obs_report(const rmp_call_t *call, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; i < nobservers && used + 1 < len; i++)
		if (observers[i]->report) {
			observers[i]->report(call, buf + used, len - used);
			used += strlen(buf + used);
		}
}

void rmp_obs_finalize(void)
{
	for (int i = nobservers; i-- > 0;) /* the reverse of the start */
		if (observers[i]->finalize)
			observers[i]->finalize();
}

void rmp_obs_call_begin(rmp_call_t *call)
{
	for (int i = 0; i < nobservers; i++)
		if (observers[i]->call_begin)
			observers[i]->call_begin(call);
}

void rmp_obs_vote(const rmp_call_t *call, uint64_t *v)
{
	memset(v, 0, sizeof(uint64_t) * RMP_VOTE_WORDS * (size_t)nobservers);
	for (int i = 0; i < nobservers; i++)
		if (observers[i]->vote)
			observers[i]->vote(call, v + RMP_VOTE_WORDS * i);
}

void rmp_obs_agreed(rmp_call_t *call, const uint64_t *v)
{
	for (int i = 0; i < nobservers; i++)
		if (observers[i]->agreed)
			observers[i]->agreed(call, v + RMP_VOTE_WORDS * i);
}

int rmp_obs_cart_weights(rmp_call_t *call, int ndims, const int periods[], double weights[])
{
	for (int i = 0; i < nobservers; i++)
		if (observers[i]->cart_weights && observers[i]->cart_weights(call, ndims, periods, weights))
			return 1;
	return 0;
}

int rmp_obs_graph_weights(rmp_call_t *call, map_graph_t *g)
{
	int applied = 0;

	for (int i = 0; i < nobservers; i++) /* every one sees the graph (learning keeps its structure) */
		if (observers[i]->graph_weights && observers[i]->graph_weights(call, g))
			applied = 1;
	return applied;
}

void rmp_obs_created(rmp_call_t *call, MPI_Comm newcomm, int ndims, const int periods[])
{
	for (int i = 0; i < nobservers; i++)
		if (observers[i]->created)
			observers[i]->created(call, newcomm, ndims, periods);
}

void rmp_obs_neighbors(MPI_Comm comm, int n, MPI_Datatype type, const int counts[], const MPI_Datatype types[])
{
	for (int i = 0; i < nobservers; i++)
		if (*observers[i]->active && observers[i]->neighbors)
			observers[i]->neighbors(comm, n, type, counts, types);
}

const char *rmp_env_server(void)
{
	return rm_client_socket_from_env(); /* RANKMAP_SERVER, else RANKMAP_SOCKET: what every client reads */
}

int rmp_mixed_warned;

int rmp_disabled(void)
{
	const char *v = getenv("RANKMAP_DISABLE");

	return v && *v && strcmp(v, "0") != 0;
}

void *rmp_slot_set(rmp_slot_t *s, void *p)
{
#ifdef RANKMAP_SMPI
	int r = 0, n = 0;

	PMPI_Comm_rank(MPI_COMM_WORLD, &r);
	PMPI_Comm_size(MPI_COMM_WORLD, &n);
	if (!s->by_rank && p) {
		s->by_rank = calloc((size_t)n, sizeof(*s->by_rank));
		s->n = s->by_rank ? n : 0;
	}
	if (r < s->n)
		s->by_rank[r] = p;
	return s->by_rank; /* once some rank set one, never cleared: the other ranks may still have theirs */
#else
	s->p = p;
	return p;
#endif
}

/* The causes this process warned about (hashes of the error texts): one line per cause over the run. A
 * program cannot produce more than a few distinct causes; past RMP_WARN_MAX the rest are dropped. Under
 * SMPI the table is the simulation's (every rank warns in one process). */
#define RMP_WARN_MAX 64
static uint64_t warned[RMP_WARN_MAX];
static int nwarned;

/* 1 the first time this process meets the cause h (it is remembered), 0 afterwards. */
static int first_time(uint64_t h)
{
	for (int i = 0; i < nwarned; i++)
		if (warned[i] == h)
			return 0;
	if (nwarned == RMP_WARN_MAX)
		return 0;
	warned[nwarned++] = h;
	return 1;
}

void rmp_error_text(const rmp_call_t *call, char *buf, size_t len)
{
	if (rm_error_isset(&call->err))
		rm_error_format(&call->err, buf, len);
	else
		snprintf(buf, len, "unknown error");
}

void rmp_warn(const rmp_call_t *call)
{
	char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 64];
	uint64_t h = RMP_HASH_INIT;

	rmp_error_text(call, buf, sizeof(buf));
	for (const char *c = buf; *c; c++) /* the cause, whichever constructor met it */
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	if (!first_time(h) && !call->env.verbose)
		return;
	fprintf(stderr, "rankmap: %s: %s; continuing without reordering\n", call->fn, buf);
	fflush(stderr);
}

double rmp_cpu_ms(void)
{
	struct timespec ts;
	struct rusage ru;
	double ms = 0;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
		ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
	/* the guarded engine's child, once reaped, counts here */
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
		ms += (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	return ms;
}

uint64_t rmp_hash_ints(uint64_t h, const int *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t x = (uint32_t)v[i];

		for (int b = 0; b < 4; b++) {
			h ^= (x >> (8 * b)) & 0xff;
			h *= 1099511628211ULL;
		}
	}
	return h;
}
