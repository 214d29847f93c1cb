/*
 * mapping/map_guard.c: map_compute() in a child process with limits (common/rm_child.h), so that an
 * engine's crash, endless loop or runaway allocation costs the caller one error instead of its process.
 *
 * The child writes back the map_result_t followed by the permutation (g->n entries); the parent checks
 * the size and that the permutation is a bijection onto the target's slots before using it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapping.h"

#define FAULT_OOM_MAX ((size_t)1 << 30)

typedef struct guard_job {
	const char *algo;
	const map_graph_t *g;
	const topo_target_t *t;
	const map_options_t *opt;
} guard_job_t;

/* Test-only fault injection (RANKMAP_FAKE_ENGINE_FAULT). Returns 0 to go on, -1 for an engine error. */
static int fake_fault(rm_error_t *err)
{
	const char *f = getenv("RANKMAP_FAKE_ENGINE_FAULT");

	if (!f || !*f)
		return 0;
	if (!strcmp(f, "segv")) {
		raise(SIGSEGV);
	} else if (!strcmp(f, "hang")) {
		for (volatile unsigned long i = 0;; i++)
			;
	} else if (!strcmp(f, "sleep")) {
		for (;;)
			pause();
	} else if (!strcmp(f, "oom")) {
		for (size_t total = 0; total < FAULT_OOM_MAX; total += (size_t)64 << 20) {
			char *p = malloc((size_t)64 << 20);
			if (!p) {
				errno = ENOMEM;
				return rm_error_set(err, "map", 0, 0, "out of memory after %zu MiB", total >> 20);
			}
			memset(p, 1, (size_t)64 << 20); /* kept: the fault is the growth */
		}
	}
	return 0;
}

/* The child's work: map, then return [map_result_t][perm]. */
static void *guard_child(void *arg, size_t *len, rm_error_t *err)
{
	const guard_job_t *j = arg;
	size_t n = (size_t)j->g->n, size = sizeof(map_result_t) + n * sizeof(uint32_t);
	char *out = malloc(size);
	map_result_t res;

	if (!out) {
		errno = ENOMEM;
		rm_error_set(err, "map", 0, 0, "out of memory");
		return NULL;
	}
	memset(&res, 0, sizeof(res));
	if (fake_fault(err) != 0 ||
	    map_compute(j->algo, j->g, j->t, j->opt, (uint32_t *)(out + sizeof(res)), &res, err) != 0) {
		int e = errno;
		free(out);
		errno = e;
		return NULL;
	}
	memcpy(out, &res, sizeof(res));
	*len = size;
	return out;
}

static void identity(uint32_t *perm, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		perm[i] = i;
}

int map_compute_guarded(const char *algo, const map_graph_t *g, const topo_target_t *t, const map_options_t *opt,
			const rm_child_limits_t *lim, uint32_t *perm, map_result_t *res, rm_error_t *err)
{
	guard_job_t job = { algo, g, t, opt };
	rm_child_limits_t l;
	char what[64];
	size_t len = 0, n;
	char *out;

	if (!g || !t || !perm) {
		errno = EINVAL;
		return rm_error_set(err, "map", 0, 0, "missing graph, target or output array");
	}
	n = g->n;
	if (!lim) { /* unguarded: the same work in this process */
		if (fake_fault(err) != 0) {
			identity(perm, g->n);
			return -1;
		}
		return map_compute(algo, g, t, opt, perm, res, err);
	}
	l = *lim;
	l.max_out = sizeof(map_result_t) + n * sizeof(uint32_t);
	snprintf(what, sizeof(what), "engine '%.32s'", algo ? algo : "(null)");
	out = rm_child_run(what, guard_child, &job, &l, &len, err);
	if (out && (len != l.max_out || map_check_perm((uint32_t *)(out + sizeof(map_result_t)), g->n, t->nslots))) {
		rm_error_set(err, what, 0, 0, "returned a malformed mapping");
		free(out);
		out = NULL;
		errno = EPROTO;
	}
	if (!out) {
		int e = errno;
		identity(perm, g->n);
		errno = e;
		return -1;
	}
	memcpy(perm, out + sizeof(map_result_t), n * sizeof(uint32_t));
	if (res) {
		memcpy(res, out, sizeof(*res));
		res->algo[sizeof(res->algo) - 1] = '\0';
	}
	free(out);
	return 0;
}
