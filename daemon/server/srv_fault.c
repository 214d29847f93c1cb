/*
 * daemon/server/srv_fault.c: test-only engine faults, so that the tests of worker isolation do not depend on
 * a library bug staying unfixed. Enabled only when rankmapd starts with RANKMAP_TEST_FAULTS=1 in its
 * environment (read once in main; a client cannot turn it on, and the daemon logs a warning at start).
 * Then a `map` request whose engine is one of these misbehaves where the engine would run:
 *   test:segv   dereferences a null pointer          test:abort  calls abort()
 *   test:spin   burns CPU forever                    test:sleep  blocks forever without CPU
 *   test:hog    allocates and touches memory until malloc fails, then answers `internal` "out of
 *               memory"; it stops at worker_memory_limit + 256 MiB and answers `failed` if no limit
 *               stopped it (so that a test can tell, and the machine is not exhausted).
 *   test:nap:MS sleeps MS milliseconds (1 .. 600000) without CPU, then answers `failed` "test:nap: slept
 *               MS ms": a long map that ends, in either isolation mode, whatever the machine's load.
 * Each logs "test fault test:NAME starts in pid N" first, so that a test knows when the fault holds its
 * worker (however loaded the machine) instead of sleeping a fixed time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rm_client.h"
#include "srv.h"

#define HOG_CHUNK (16u << 20)

static json_t *hog(srv_ctx_t *ctx, const json_t *id)
{
	size_t max = ctx->cfg.worker_memory_limit + (256u << 20), n = 0, i;
	char **chunks = calloc(max / HOG_CHUNK + 1, sizeof(*chunks));
	json_t *resp;

	if (!chunks)
		return rm_proto_error(id, RM_ERR_INTERNAL, "out of memory");
	while (n < max / HOG_CHUNK && (chunks[n] = malloc(HOG_CHUNK)))
		memset(chunks[n++], 1, HOG_CHUNK);
	if (n < max / HOG_CHUNK)
		resp = rm_proto_error(id, RM_ERR_INTERNAL, "out of memory after %zu MiB (worker_memory_limit %zu MiB)",
				      n * (HOG_CHUNK >> 20), ctx->cfg.worker_memory_limit >> 20);
	else
		resp = rm_proto_error(id, RM_ERR_FAILED, "test:hog was not stopped: %zu MiB allocated",
				      n * (HOG_CHUNK >> 20));
	for (i = 0; i < n; i++)
		free(chunks[i]);
	free(chunks);
	return resp;
}

json_t *srv_test_fault(srv_ctx_t *ctx, const char *algo, const json_t *id)
{
	volatile unsigned long spin = 0;

	if (!ctx->test_faults || strncmp(algo, "test:", 5))
		return NULL;
	/* a test waits for this line (not a fixed sleep) to know the fault has its worker */
	srv_log(SRV_LOG_NOTICE, "test fault %.32s starts in pid %d", algo, (int)getpid());
	algo += 5;
	if (!strcmp(algo, "segv"))
		*(volatile int *)(uintptr_t)spin = 1;
	if (!strcmp(algo, "abort"))
		abort();
	if (!strcmp(algo, "spin"))
		for (;;)
			spin++;
	if (!strcmp(algo, "sleep"))
		for (;;)
			pause();
	if (!strcmp(algo, "hog"))
		return hog(ctx, id);
	if (!strncmp(algo, "nap:", 4)) {
		char *end;
		long ms = strtol(algo + 4, &end, 10);
		struct timespec ts;

		if (end == algo + 4 || *end || ms < 1 || ms > 600000)
			return rm_proto_error(id, RM_ERR_BAD_REQUEST, "engine: test:nap:MS wants 1 .. 600000 ms");
		ts.tv_sec = ms / 1000, ts.tv_nsec = ms % 1000 * 1000000L;
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		return rm_proto_error(id, RM_ERR_FAILED, "test:nap: slept %ld ms", ms);
	}
	return rm_proto_error(id, RM_ERR_BAD_REQUEST, "engine: unknown test fault 'test:%s'", algo);
}
