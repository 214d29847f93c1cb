/*
 * plugin/mpi/pmpi_local.c: the parts of local mapping that need heavy libraries, loaded on demand.
 *
 * The preloaded library holds no engine or fabric library of its own: Scotch (the scotch engine, and the
 * auto engine when it tries Scotch) and libibnetdisc/libibmad (a cluster file that asks for a live or
 * cached InfiniBand fabric) are in librankmap_local.so, beside this library, which the root opens the
 * first time it maps in its own process (never when rankmapd maps, never on the other ranks). This file
 * defines the three functions the core libraries call there (map_engine_scotch, topo_fabric_load_live,
 * topo_fabric_load_cache): each opens the helper once and calls its own copy.
 *
 * Opening it costs about 0.5 ms of CPU: MPI_Init opens it ahead on MPI_COMM_WORLD's
 * rank 0, the usual root, when that rank would map in its own process with Scotch (no rankmapd named,
 * RANKMAP_ALGO auto or scotch, not tracing), so that the first topology call does not pay it; any other
 * root opens it at its first such call.
 *
 * The helper holds its own Scotch (linked statically; plugin/mpi/module.mk), and every symbol but the
 * three is local to it (plugin/mpi/rankmap_local.map, -Bsymbolic): an application that defines functions
 * of the same names (its own Scotch, say) neither captures the helper's calls nor sees its own calls
 * captured. It is opened RTLD_LOCAL without RTLD_DEEPBIND: the helper and the program then share one
 * libc, so what the helper allocates for the caller is freed by the same malloc under any allocator the
 * program interposes; its references to libibnetdisc/libibmad (shared) resolve to the process's first
 * copies of those.
 *
 * Without the helper (not installed, no memory), the function fails with an error naming the file, and the
 * call continues unreordered with the one warning every failure gets.
 * Not built under SMPI: the simulation links every object (plugin/mpi/smpi.mk).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rm_error.h"

#ifndef RANKMAP_SMPI

#include "pmpi.h"

struct map_ctx;
struct topo_fabric;
/* Prototypes of mapping/mapping_private.h and topo/topo_private.h, which only their folders include. */
int map_engine_scotch(const struct map_ctx *ctx, uint32_t *perm);
int topo_fabric_load_live(struct topo_fabric *f, const char *ca, int port, rm_error_t *err);
int topo_fabric_load_cache(struct topo_fabric *f, const char *path, rm_error_t *err);

typedef int (*engine_fn)(const struct map_ctx *, uint32_t *);
typedef int (*live_fn)(struct topo_fabric *, const char *, int, rm_error_t *);
typedef int (*cache_fn)(struct topo_fabric *, const char *, rm_error_t *);

static struct {
	void *handle;
	engine_fn scotch;
	live_fn live;
	cache_fn cache;
	char why[256 + PATH_MAX]; /* why it could not be opened ("" before the first try) */
	int tried;
} helper;

/* The helper's path: RANKMAP_LOCAL_LIB, else librankmap_local.so in this library's directory. */
static void helper_path(char *buf, size_t len)
{
	const char *env = getenv("RANKMAP_LOCAL_LIB");
	Dl_info info;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	if (dladdr((void *)helper_path, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
		const char *slash = strrchr(info.dli_fname, '/');

		snprintf(buf, len, "%.*s/" RMP_LOCAL_LIB, (int)(slash - info.dli_fname), info.dli_fname);
		return;
	}
	snprintf(buf, len, RMP_LOCAL_LIB);
}

int rmp_local_load(rm_error_t *err)
{
	if (!helper.tried) {
		char path[PATH_MAX];
		/* lazy: Scotch binds only the functions it calls. RTLD_LOCAL, not RTLD_DEEPBIND: the helper's own
		 * symbols (its static Scotch, its copy of mapping/ and topo/) are local to it and bound inside it
		 * (version script, -Bsymbolic), so the program's look-alikes cannot capture them; and its libc is
		 * the program's, so memory it allocates for the caller (a fabric's tables) comes from the same
		 * malloc the caller frees with, whatever allocator the program interposes (jemalloc, tcmalloc). */
		int flags = RTLD_LAZY | RTLD_LOCAL;
		helper.tried = 1;
		helper_path(path, sizeof(path));
		helper.handle = dlopen(path, flags);
		if (helper.handle) {
			helper.scotch = (engine_fn)dlsym(helper.handle, "map_engine_scotch");
			helper.live = (live_fn)dlsym(helper.handle, "topo_fabric_load_live");
			helper.cache = (cache_fn)dlsym(helper.handle, "topo_fabric_load_cache");
			if (!helper.scotch || !helper.live || !helper.cache) {
				snprintf(helper.why, sizeof(helper.why), "%s: not rankmap's local mapping helper",
					 path);
				dlclose(helper.handle);
				helper.handle = NULL;
			}
		} else {
			const char *e = dlerror();

			snprintf(helper.why, sizeof(helper.why), "%s", e ? e : path);
		}
	}
	if (helper.handle)
		return 0;
	errno = ENOENT;
	return rm_error_set(err, RMP_LOCAL_LIB, 0, 0, "cannot load the local mapping helper: %s", helper.why);
}

int rmp_local_loaded(void)
{
	return helper.handle != NULL;
}

void rmp_local_prefetch(void)
{
	const char *algo = getenv("RANKMAP_ENGINE"), *trace = getenv("RANKMAP_TRACE");
	int rank = -1;
	rm_error_t ignore = { 0 };

	if (!algo || !*algo) /* RANKMAP_ALGO: the engine's old name, read when RANKMAP_ENGINE is unset */
		algo = getenv("RANKMAP_ALGO");
	if (rmp_disabled() || (trace && *trace) || rmp_env_server() ||
	    (algo && *algo && strcasecmp(algo, "auto") != 0 && strcasecmp(algo, "scotch") != 0))
		return;
	if (PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS && rank == 0)
		rmp_local_load(&ignore); /* a failure is reported by the call that needs the helper */
}

int map_engine_scotch(const struct map_ctx *ctx, uint32_t *perm)
{
	if (rmp_local_load(map_ctx_error(ctx)) != 0)
		return -1;
	return helper.scotch(ctx, perm);
}

int topo_fabric_load_live(struct topo_fabric *f, const char *ca, int port, rm_error_t *err)
{
	if (rmp_local_load(err) != 0)
		return -1;
	return helper.live(f, ca, port, err);
}

int topo_fabric_load_cache(struct topo_fabric *f, const char *path, rm_error_t *err)
{
	if (rmp_local_load(err) != 0)
		return -1;
	return helper.cache(f, path, err);
}

#else /* SMPI: the engines are linked into the program */
#include "pmpi.h"

int rmp_local_load(rm_error_t *err)
{
	(void)err;
	return 0;
}

int rmp_local_loaded(void)
{
	return 1;
}

void rmp_local_prefetch(void)
{
}
#endif
