/*
 * plugin/spank/spank_bind.c: CPU lists, the binding plan asked of rankmapd, and sched_setaffinity.
 */
#define _GNU_SOURCE
#include "spank_bind.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>
#include <jansson.h>

#include "rm_client.h"
#include "mapping.h"

#define LIST_MAX_IDS (1u << 20)

/* Parses one "a" or "a-b" item at *p (advanced past it). Returns 0 or -1. */
static int list_item(const char **p, const char *start, uint32_t max_id, uint32_t *lo, uint32_t *hi, rm_error_t *err)
{
	char *end;
	unsigned long a, b;

	if (!isdigit((unsigned char)**p))
		return rm_error_set(err, "cpu list", 0, (int)(*p - start) + 1, "expected a number in '%s'", start);
	a = strtoul(*p, &end, 10);
	b = a;
	if (*end == '-') {
		if (!isdigit((unsigned char)end[1]))
			return rm_error_set(err, "cpu list", 0, (int)(end - start) + 2, "expected a number in '%s'",
					    start);
		b = strtoul(end + 1, &end, 10);
	}
	if (a > b || b > max_id)
		return rm_error_set(err, "cpu list", 0, (int)(*p - start) + 1, "bad range %lu-%lu in '%s' (max %u)", a,
				    b, start, max_id);
	*lo = (uint32_t)a;
	*hi = (uint32_t)b;
	*p = end;
	return 0;
}

uint32_t *rm_spank_list_parse(const char *list, uint32_t max_id, size_t *n, rm_error_t *err)
{
	const char *p = list;
	uint8_t *seen;
	uint32_t *ids;
	size_t cnt = 0;

	if (max_id >= LIST_MAX_IDS)
		max_id = LIST_MAX_IDS - 1;
	seen = calloc((size_t)max_id + 1, 1);
	if (!seen)
		return NULL;
	while (p && *p) {
		uint32_t lo = 0, hi = 0;
		if (list_item(&p, list, max_id, &lo, &hi, err) < 0) {
			free(seen);
			errno = EINVAL;
			return NULL;
		}
		for (uint32_t i = lo; i <= hi; i++)
			seen[i] = 1;
		if (*p == ',' && p[1])
			p++;
		else if (*p) {
			rm_error_set(err, "cpu list", 0, (int)(p - list) + 1, "unexpected '%c' in '%s'", *p, list);
			free(seen);
			errno = EINVAL;
			return NULL;
		}
	}
	for (uint32_t i = 0; i <= max_id; i++)
		cnt += seen[i];
	if (cnt == 0) {
		free(seen);
		errno = EINVAL;
		rm_error_set(err, "cpu list", 0, 1, "empty list");
		return NULL;
	}
	ids = malloc(cnt * sizeof(*ids));
	if (ids) {
		*n = 0;
		for (uint32_t i = 0; i <= max_id; i++)
			if (seen[i])
				ids[(*n)++] = i;
	}
	free(seen);
	return ids;
}

int rm_spank_list_format(const uint32_t *ids, size_t n, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n;) {
		size_t j = i;
		int w;
		while (j + 1 < n && ids[j + 1] == ids[j] + 1)
			j++;
		w = j > i ? snprintf(buf + off, len - off, "%s%u-%u", off ? "," : "", ids[i], ids[j])
			  : snprintf(buf + off, len - off, "%s%u", off ? "," : "", ids[i]);
		if (w < 0 || (size_t)w >= len - off) {
			errno = ENOSPC;
			return -1;
		}
		off += (size_t)w;
		i = j + 1;
	}
	return 0;
}

int rm_spank_bind_apply(const char *plan, uint32_t local_id, char *cpus, size_t len, rm_error_t *err)
{
	const char *p = plan;
	char entry[4096];
	uint32_t *ids;
	size_t n = 0, elen;
	cpu_set_t *set;
	size_t setsize;
	int rc;

	for (uint32_t i = 0; i < local_id && p; i++) {
		p = strchr(p, ';');
		if (p)
			p++;
	}
	if (!p || !*p || *p == ';') {
		errno = EINVAL;
		return rm_error_set(err, RM_SPANK_BIND_PLAN_ENV, 0, 0, "no entry for local task %u", local_id);
	}
	elen = strcspn(p, ";");
	if (elen >= sizeof(entry)) {
		errno = EINVAL;
		return rm_error_set(err, RM_SPANK_BIND_PLAN_ENV, 0, 0, "entry %u too long", local_id);
	}
	memcpy(entry, p, elen);
	entry[elen] = '\0';
	ids = rm_spank_list_parse(entry, CPU_SETSIZE * 16 - 1, &n, err);
	if (!ids)
		return -1;
	setsize = CPU_ALLOC_SIZE(ids[n - 1] + 1);
	set = CPU_ALLOC(ids[n - 1] + 1);
	if (!set) {
		free(ids);
		return -1;
	}
	CPU_ZERO_S(setsize, set);
	for (size_t i = 0; i < n; i++)
		CPU_SET_S(ids[i], setsize, set);
	rc = sched_setaffinity(0, setsize, set);
	if (rc < 0) {
		int e = errno;
		rm_error_set(err, "sched_setaffinity", 0, 0, "CPUs %s: %s", entry, strerror(e));
		errno = e;
	} else {
		snprintf(cpus, len, "%s", entry);
	}
	CPU_FREE(set);
	free(ids);
	return rc;
}

/* ---- the plan ---- */

/* The allocated cores on this host: first PU (logical index, the daemon's slot numbering) and OS CPU
 * list of each, from hwloc (or the test-only synthetic RANKMAP_FAKE_NODE, as registered by slurmd). */
typedef struct bind_cores {
	size_t n;
	uint32_t *core; /* Slurm's core index = hwloc logical core index */
	uint32_t *pu;   /* first PU of the core (logical) */
	char **cpus;    /* OS CPU list of the core */
} bind_cores_t;

static void cores_free(bind_cores_t *c)
{
	for (size_t i = 0; c->cpus && i < c->n; i++)
		free(c->cpus[i]);
	free(c->cpus);
	free(c->core);
	free(c->pu);
}

static int cores_fill(bind_cores_t *c, hwloc_topology_t topo, rm_error_t *err)
{
	int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);

	c->pu = calloc(c->n, sizeof(*c->pu));
	c->cpus = calloc(c->n, sizeof(*c->cpus));
	if (!c->pu || !c->cpus)
		return rm_error_set(err, "memory", 0, 0, "out of memory");
	for (size_t i = 0; i < c->n; i++) {
		hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, c->core[i]), pu;
		char buf[1024];
		if (!core)
			return rm_error_set(err, "S_STEP_ALLOC_CORES", 0, 0,
					    "core %u does not exist on this host "
					    "(%d cores)",
					    c->core[i], ncores);
		pu = hwloc_get_next_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU, NULL);
		if (!pu || hwloc_bitmap_list_snprintf(buf, sizeof(buf), core->cpuset) < 0)
			return rm_error_set(err, "hwloc", 0, 0, "core %u has no PU", c->core[i]);
		c->pu[i] = pu->logical_index;
		c->cpus[i] = strdup(buf);
		if (!c->cpus[i])
			return rm_error_set(err, "memory", 0, 0, "out of memory");
	}
	return 0;
}

static int cores_load(bind_cores_t *c, const char *alloc, rm_error_t *err)
{
	const char *fake = getenv("RANKMAP_FAKE_NODE");
	hwloc_topology_t topo;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	c->core = rm_spank_list_parse(alloc, LIST_MAX_IDS - 1, &c->n, err);
	if (!c->core)
		return -1;
	if (hwloc_topology_init(&topo) < 0)
		return rm_error_set(err, "hwloc", 0, 0, "init failed");
	if ((fake && *fake && hwloc_topology_set_synthetic(topo, fake) < 0) || hwloc_topology_load(topo) < 0)
		rm_error_set(err, "hwloc", 0, 0, "cannot load this host's topology");
	else
		rc = cores_fill(c, topo, err);
	hwloc_topology_destroy(topo);
	return rc;
}

/* Edges among the local tasks: the user's pattern restricted to them (read by rm_spank_pattern_edges, in a
 * child process as the user), or a chain in rank order. NULL with *why set on failure. */
static rm_spank_edge_t *plan_edges(const rm_spank_bind_req_t *req, size_t *n, int *why, rm_error_t *err)
{
	rm_spank_edge_t *e;

	*n = 0;
	if (!req->pattern) {
		if (!(e = malloc(sizeof(*e) * (req->ntasks + 1u))))
			return rm_error_set(err, "memory", 0, 0, "out of memory"), NULL;
		for (uint32_t i = 0; i + 1 < req->ntasks; i++)
			e[(*n)++] = (rm_spank_edge_t){ .a = i, .b = i + 1, .w = 1.0 };
		return e;
	}
	if (!(e = rm_spank_pattern_edges(req, n, err)))
		*why = RM_SPANK_PLAN_BAD_PATTERN;
	return e;
}

/* Asks rankmapd to map the tasks onto the allocated cores (the typed map request, the cores' slots in
 * their order); returns each task's core position (malloc'd: the daemon answers in the request's order)
 * or NULL. */
static uint32_t *plan_request(const rm_spank_bind_req_t *req, const bind_cores_t *c, const rm_spank_edge_t *e,
			      size_t ne, int *why, rm_error_t *err)
{
	rm_slot_t *slots = malloc(sizeof(*slots) * (c->n + 1));
	uint32_t *src = malloc(sizeof(*src) * (ne + 1)), *dst = malloc(sizeof(*dst) * (ne + 1)), *pos = NULL;
	double *w = malloc(sizeof(*w) * (ne + 1));
	rm_map_answer_t a = { 0 };

	if (!slots || !src || !dst || !w) {
		rm_error_set(err, "memory", 0, 0, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < c->n; i++)
		slots[i] = (rm_slot_t){ req->node, (int32_t)c->pu[i] };
	for (size_t k = 0; k < ne; k++)
		src[k] = e[k].a, dst[k] = e[k].b, w[k] = e[k].w;
	rm_map_request_t q = { .n = req->ntasks,
			       .nedges = ne,
			       .src = src,
			       .dst = dst,
			       .w = w,
			       .slots = slots,
			       .nslots = c->n,
			       .engine = req->algo };
	rm_client_opts_t o = { .servers = req->socket,
			       .timeout_ms = req->timeout_ms,
			       .munge_socket = req->munge_socket && *req->munge_socket ? req->munge_socket : NULL,
			       .server_uid = req->server_uid && *req->server_uid ? req->server_uid : NULL };

	if (rm_client_map(&o, &q, &a, NULL, err) < 0) {
		if (!a.resp)
			*why = RM_SPANK_PLAN_UNREACHABLE;
		goto out;
	}
	pos = a.slot; /* task i runs on core position slot[i] */
	a.slot = NULL;
out:
	rm_map_answer_free(&a);
	free(slots), free(src), free(dst), free(w);
	return pos;
}

char *rm_spank_bind_plan(const rm_spank_bind_req_t *req, int *why, rm_error_t *err)
{
	bind_cores_t c = { 0 };
	uint32_t *pos = NULL;
	char *plan = NULL;
	size_t len = 0, off = 0;
	rm_spank_edge_t *edges;
	size_t ne = 0;

	*why = RM_SPANK_PLAN_FAILED;
	if (!(edges = plan_edges(req, &ne, why, err))) /* first: a bad pattern is said as such */
		return NULL;
	if (cores_load(&c, req->alloc_cores, err) < 0)
		goto out;
	if (req->ntasks > c.n) {
		rm_error_set(err, "--rankmap-bind", 0, 0, "%u tasks on %zu allocated cores (%s)", req->ntasks, c.n,
			     req->alloc_cores);
		goto out;
	}
	if (!(pos = plan_request(req, &c, edges, ne, why, err)))
		goto out;
	for (uint32_t i = 0; i < req->ntasks; i++)
		len += strlen(c.cpus[pos[i]]) + 1;
	plan = malloc(len + 1);
	for (uint32_t i = 0; plan && i < req->ntasks; i++)
		off += (size_t)sprintf(plan + off, "%s%s", i ? ";" : "", c.cpus[pos[i]]);
out:
	free(edges);
	free(pos);
	cores_free(&c);
	return plan;
}
