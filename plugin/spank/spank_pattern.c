/*
 * plugin/spank/spank_pattern.c: the user's --rankmap-pattern read inside slurmstepd, safely.
 *
 * slurmstepd runs as root and a step that blocks in it keeps its node `completing` until an admin steps
 * in. The pattern is a user's file: it is read in a child process (common/rm_child.h) that drops to the
 * user for good, refuses anything but a regular file within the size cap before reading a byte
 * (common/rm_file.h), and is stopped past its time and memory bounds. The child sends back only the
 * edges among this node's tasks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapping.h"
#include "rm_child.h"
#include "rm_file.h"
#include "spank_bind.h"

/* Becomes the job's user for good (real, effective and saved ids; the user's groups when still root). */
static int become_user(const rm_spank_bind_req_t *req, rm_error_t *err)
{
	if (geteuid() == 0 && req->uid != 0 && req->gids && setgroups((size_t)req->ngids, req->gids) < 0)
		return rm_error_set(err, "setgroups", 0, 0, "%s", strerror(errno));
	if (setresgid(req->gid, req->gid, req->gid) < 0)
		return rm_error_set(err, "setresgid", 0, 0, "%s", strerror(errno));
	if (setresuid(req->uid, req->uid, req->uid) < 0)
		return rm_error_set(err, "setresuid", 0, 0, "%s", strerror(errno));
	if (getuid() != req->uid || geteuid() != req->uid || getegid() != req->gid) {
		errno = EPERM;
		return rm_error_set(err, "setresuid", 0, 0, "could not become uid %u", (unsigned)req->uid);
	}
	return 0;
}

/* The edges of g among the node's tasks. Returns a malloc'd array (*n entries) or NULL. */
static rm_spank_edge_t *local_edges(const rm_spank_bind_req_t *req, const map_graph_t *g, size_t *n, rm_error_t *err)
{
	uint32_t *local = malloc(((size_t)g->n + 1) * sizeof(*local));
	rm_spank_edge_t *e = NULL;
	size_t cap = 0;

	*n = 0;
	if (!local)
		goto oom;
	for (uint32_t v = 0; v < g->n; v++)
		local[v] = UINT32_MAX;
	for (uint32_t i = 0; i < req->ntasks; i++)
		if (req->global[i] < g->n)
			local[req->global[i]] = i;
	for (uint32_t i = 0; i < req->ntasks; i++) {
		uint32_t u = req->global[i];
		for (uint64_t k = u < g->n ? g->xadj[u] : 0; u < g->n && k < g->xadj[u + 1]; k++) {
			uint32_t j = local[g->adj[k]];
			if (j == UINT32_MAX || j <= i)
				continue;
			if (*n == cap) {
				rm_spank_edge_t *ne = realloc(e, (cap = cap ? 2 * cap : 64) * sizeof(*e));
				if (!ne)
					goto oom;
				e = ne;
			}
			e[(*n)++] = (rm_spank_edge_t){ i, j, g->w[k] };
		}
	}
	free(local);
	return e ? e : malloc(sizeof(*e)); /* no edge: an empty, non-NULL result */
oom:
	free(local);
	free(e);
	errno = ENOMEM;
	rm_error_set(err, req->pattern, 0, 0, "out of memory");
	return NULL;
}

/* The child: as the user, checks the file without blocking, parses it, keeps the node's edges. */
static void *read_child(void *arg, size_t *len, rm_error_t *err)
{
	const rm_spank_bind_req_t *req = arg;
	map_metric_t metric = MAP_METRIC_DEFAULT;
	map_graph_t *g;
	rm_spank_edge_t *e;
	size_t n = 0;
	int fd;

	if (become_user(req, err) < 0)
		return NULL;
	if ((fd = rm_file_open(req->pattern, RM_FILE_PATTERN, NULL, err)) < 0)
		return NULL;
	close(fd);
	if (req->metric && map_metric_parse(req->metric, &metric) < 0)
		metric = MAP_METRIC_DEFAULT;
	if (!(g = map_graph_load(req->pattern, metric, err)))
		return NULL;
	e = local_edges(req, g, &n, err);
	map_graph_destroy(g);
	*len = n * sizeof(*e);
	return e;
}

rm_spank_edge_t *rm_spank_pattern_edges(const rm_spank_bind_req_t *req, size_t *n, rm_error_t *err)
{
	int ms = req->pattern_timeout_ms > 0 ? req->pattern_timeout_ms : RM_SPANK_PATTERN_TIMEOUT_MS;
	rm_child_limits_t lim = { .wall_ms = ms,
				  .cpu_s = (unsigned)(ms / 1000) + 1,
				  .mem_bytes = RM_SPANK_PATTERN_MEM,
				  .max_out = ((size_t)req->ntasks * req->ntasks / 2 + 1) * sizeof(rm_spank_edge_t) };
	rm_spank_edge_t *e;
	size_t len = 0;

	if (!req->pattern || !req->global) {
		errno = EINVAL;
		rm_error_set(err, req->pattern_opt ? req->pattern_opt : "--rankmap-matrix", 0, 0, "no matrix");
		return NULL;
	}
	e = rm_child_run(req->pattern, read_child, (void *)req, &lim, &len, err);
	if (!e)
		return NULL;
	if (len % sizeof(*e)) {
		free(e);
		errno = EPROTO;
		rm_error_set(err, req->pattern, 0, 0, "malformed answer of the pattern reader");
		return NULL;
	}
	*n = len / sizeof(*e);
	for (size_t i = 0; i < *n; i++) {
		if (e[i].a >= req->ntasks || e[i].b >= req->ntasks || !(e[i].w > 0)) {
			free(e);
			errno = EPROTO;
			rm_error_set(err, req->pattern, 0, 0, "malformed answer of the pattern reader");
			return NULL;
		}
	}
	return e;
}
