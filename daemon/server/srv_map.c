/*
 * daemon/server/srv_map.c: the `map` request (a communication pattern, inline edges or a Cartesian spec, onto
 * hosts or slots, with a mapping engine by name) and the `order` request (torus node orderings).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm_client.h"
#include "rm_slot.h"
#include "mapping.h"
#include "order.h"
#include "topo_gpu.h"
#include "srv.h"
#include "srv_requests.h"

#define MAP_SCHEMA                                                                                   \
	SRV_ENVELOPE                                                                                 \
	" pattern?o cart?s hosts?a slots?a per_core?b engine?s algorithm?s seed?i time_budget_ms?f " \
	"breakdown?b pu_index?s index?s slot_kind?s"
#define MAX_RANKS (1u << 24)
#define MAX_BUDGET_MS MAP_MAX_BUDGET_MS /* (mapping.h: one minute) */
#define ENGINE_DEFAULT_BUDGET_MS 1000   /* the most the engines take for time_budget_ms 0 (mapping/engine.c) */

typedef struct edges {
	size_t n, cap;
	uint32_t *src, *dst;
	double *w;
} edges_t;

static int edges_reserve(edges_t *e, size_t n)
{
	uint32_t *s, *d;
	double *w;

	if (n <= e->cap)
		return 0;
	s = realloc(e->src, n * sizeof(*s));
	if (s)
		e->src = s;
	d = realloc(e->dst, n * sizeof(*d));
	if (d)
		e->dst = d;
	w = realloc(e->w, n * sizeof(*w));
	if (w)
		e->w = w;
	if (!s || !d || !w)
		return -1;
	e->cap = n;
	return 0;
}

static void edges_free(edges_t *e)
{
	free(e->src);
	free(e->dst);
	free(e->w);
}

/* "edges": [[src, dst, weight], ...] */
static int edges_json(const json_t *edges, json_int_t n, edges_t *e, const json_t *id, json_t **error)
{
	size_t i;
	json_t *t;

	if (edges_reserve(e, json_array_size(edges) + 1) < 0)
		return *error = rm_proto_error(id, RM_ERR_INTERNAL, "out of memory"), -1;
	json_array_foreach (edges, i, t) {
		json_t *a = json_array_get(t, 0), *b = json_array_get(t, 1), *c = json_array_get(t, 2);
		if (json_array_size(t) != 3 || !json_is_integer(a) || !json_is_integer(b) || !json_is_number(c) ||
		    json_integer_value(a) < 0 || json_integer_value(a) >= n || json_integer_value(b) < 0 ||
		    json_integer_value(b) >= n || !(json_number_value(c) >= 0))
			return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST,
						       "pattern.edges[%zu]: expected [src, dst, "
						       "weight] with 0 <= src, dst < %lld and weight >= 0",
						       i, (long long)n),
			       -1;
		e->src[i] = (uint32_t)json_integer_value(a);
		e->dst[i] = (uint32_t)json_integer_value(b);
		e->w[i] = json_number_value(c);
	}
	e->n = json_array_size(edges);
	return 0;
}

/* "edges_text": "src dst weight src dst weight ..." (any whitespace): the compact form for big patterns. */
static int edges_text(const char *text, json_int_t n, edges_t *e, const json_t *id, json_t **error)
{
	const char *p = text;
	char *end;
	unsigned long long a, b;
	double w;

	for (;;) {
		while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
			p++;
		if (!*p)
			return 0;
		a = strtoull(p, &end, 10);
		if (end == p || (p = end, b = strtoull(p, &end, 10), end == p) ||
		    (p = end, w = strtod(p, &end), end == p) || a >= (unsigned long long)n ||
		    b >= (unsigned long long)n || !(w >= 0) || w == HUGE_VAL)
			return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST,
						       "pattern.edges_text: edge %zu: expected "
						       "'src dst weight' with src, dst < %lld and weight >= 0",
						       e->n, (long long)n),
			       -1;
		p = end;
		if (e->n == e->cap && edges_reserve(e, e->cap ? e->cap * 2 : 256) < 0)
			return *error = rm_proto_error(id, RM_ERR_INTERNAL, "out of memory"), -1;
		e->src[e->n] = (uint32_t)a;
		e->dst[e->n] = (uint32_t)b;
		e->w[e->n++] = w;
	}
}

/* {"n": N, "edges": [[src, dst, weight], ...]} or {"n": N, "edges_text": "..."} -> graph. NULL with
 * *error set. */
static map_graph_t *pattern_graph(const json_t *pat, uint32_t nslots, const json_t *id, json_t **error)
{
	json_error_t jerr;
	json_t *edges = NULL;
	const char *text = NULL;
	json_int_t n;
	edges_t e = { 0 };
	map_graph_t *g = NULL;
	rm_error_t err = { 0 };
	char msg[600];
	int rc;

	if (json_unpack_ex((json_t *)pat, &jerr, JSON_STRICT, "{s:I, s?o, s?s}", "n", &n, "edges", &edges, "edges_text",
			   &text) < 0 ||
	    (edges && !json_is_array(edges)) || !edges == !text)
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST,
					       "pattern: expected {\"n\": ranks, \"edges\": "
					       "[[src, dst, weight], ...]} or {\"n\": ranks, \"edges_text\": \"src dst "
					       "weight ...\"}%s%s",
					       jerr.text[0] ? ": " : "", jerr.text),
		       NULL;
	if (n < 1 || n > MAX_RANKS)
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "pattern.n: %lld outside 1..%u", (long long)n,
					       MAX_RANKS),
		       NULL;
	if (n > nslots) /* refused before any memory is spent on the graph */
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST,
					       "pattern: %lld ranks but the target only %u "
					       "slots",
					       (long long)n, nslots),
		       NULL;
	rc = edges ? edges_json(edges, n, &e, id, error) : edges_text(text, n, &e, id, error);
	if (rc == 0) {
		g = map_graph_from_edges((uint32_t)n, e.n, e.src, e.dst, e.w, &err);
		if (!g)
			*error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "pattern: %s",
						rm_error_format(&err, msg, sizeof(msg)));
	}
	edges_free(&e);
	return g;
}

/* A Cartesian spec -> its halo graph, refused before it is built when it has more ranks than the
 * nslots of the request (a short spec such as "4000x4000" would otherwise cost gigabytes). */
static map_graph_t *cart_graph(const char *spec, uint32_t nslots, const json_t *id, json_t **error)
{
	rm_error_t err = { 0 };
	map_cart_t cart;
	map_graph_t *g = NULL;
	double ranks = 1;
	char msg[600];
	int i;

	if (map_cart_parse(spec, &cart, &err) == 0) {
		for (i = 0; i < cart.ndims; i++)
			ranks *= cart.dims[i];
		if (ranks > nslots)
			rm_error_set(&err, "cart", 0, 0, "%.0f ranks but the target only %u slots", ranks, nslots);
		else
			g = map_graph_cart(&cart, &err);
	}
	if (!g)
		*error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "cart: %s", rm_error_format(&err, msg, sizeof(msg)));
	return g;
}

/* What a target is built from, after validation. */
typedef struct target_spec {
	topo_cluster_t c;
	const char **names; /* hosts mode */
	topo_slot_t *slots; /* slots mode */
	size_t n;
	int per_core;
	int gpu;                 /* slot_kind "gpu": one slot per GPU (hosts), or [host, gpu] slots */
	topo_gpu_slot_t *gslots; /* gpu slots mode */
	rm_slot_pu_t pu_index;   /* slots mode: how the request's PUs count */
	char key[SRV_TCACHE_MAX_KEY];
	int cacheable;
} target_spec_t;

static topo_target_t *build_target(void *arg, rm_error_t *err)
{
	target_spec_t *ts = arg;

	if (ts->gpu)
		return ts->names ? topo_target_from_gpus(ts->c, ts->names, ts->n, err)
				 : topo_target_from_gpu_slots(ts->c, ts->gslots, ts->n, err);
	return ts->names ? topo_target_from_hosts(ts->c, ts->names, ts->n, ts->per_core, err)
			 : topo_target_from_slots(ts->c, ts->slots, ts->n, err);
}

/* Appends s, then (when pu >= 0) ":pu", then a newline to the cache key; a key that does not fit
 * disables caching. */
static void key_add(target_spec_t *ts, size_t *len, const char *s, long pu)
{
	size_t n = strlen(s);
	char num[24];
	int w = 0;

	if (pu >= 0)
		w = snprintf(num, sizeof(num), ":%ld", pu);
	if (!ts->cacheable || *len + n + (size_t)w + 2 > sizeof(ts->key) || memchr(s, '\n', n)) {
		ts->cacheable = 0;
		return;
	}
	memcpy(ts->key + *len, s, n);
	memcpy(ts->key + *len + n, num, (size_t)w);
	*len += n + (size_t)w;
	ts->key[(*len)++] = '\n';
	ts->key[*len] = 0;
}

/* Slot i of a request: [host, pu] (pu an integer in ts->pu_index's numbering, or null: any free PU of
 * the host), or "host" (PU 0, the older form). Unknown PUs are RM_SLOT_ANY in ts->slots[i].pu, to be
 * resolved by resolve_any. 0, or -1 with *error. */
static int parse_slot(target_spec_t *ts, const json_t *v, size_t i, const json_t *id, json_t **error)
{
	const char *host = json_string_value(v);
	const json_t *p = NULL;
	long h;

	if (!host && json_unpack((json_t *)v, "[so!]", &host, &p) < 0)
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST,
					       "slots[%zu]: expected \"host\" or [\"host\", pu or null]", i),
		       -1;
	if (p && !json_is_null(p) && !json_is_integer(p))
		return *error =
			       rm_proto_error(id, RM_ERR_BAD_REQUEST, "slots[%zu]: pu: expected an integer or null", i),
		       -1;
	if ((h = topo_host_find(ts->c, host)) < 0)
		return *error = rm_proto_error(id, RM_ERR_NOT_FOUND, "slots: unknown host '%.*s'",
					       rm_utf8_prefix(host, 128), host),
		       -1;
	unsigned np = topo_host_npus(ts->c, (size_t)h);
	json_int_t pu = p && json_is_integer(p) ? json_integer_value(p) : p ? RM_SLOT_ANY : 0;

	/* A host the model knows only from the fabric or the torus has no PU to hold a rank: refused here,
	 * before any PU of it is looked up or reserved (resolve_any indexes its PUs). */
	if (np == 0)
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "slots[%zu]: host %s has no hardware data", i,
					       host),
		       -1;
	if (pu != RM_SLOT_ANY && ts->pu_index == RM_SLOT_PU_OS) {
		long l = pu >= 0 && pu <= UINT32_MAX ? topo_host_pu_by_os(ts->c, (size_t)h, (unsigned long)pu) : -1;

		if (l < 0)
			return *error =
				       rm_proto_error(id, RM_ERR_NOT_FOUND, "slots: host %s has no PU of OS index %lld",
						      host, (long long)pu),
			       -1;
		pu = l;
	}
	if (pu != RM_SLOT_ANY && (pu < 0 || pu >= (json_int_t)np))
		return *error = rm_proto_error(id, RM_ERR_NOT_FOUND, "slots: host %s has no PU %lld", host,
					       (long long)pu),
		       -1;
	ts->slots[i] = (topo_slot_t){ (uint32_t)h, (uint32_t)pu };
	return 0;
}

/* Gives slots of unknown PU (null), and with pu_index "os" slots whose PU an earlier slot already took
 * (processes bound to one PU together), the free PUs of their host in logical order, in the request's
 * order (the MPI library's rule). A host with more slots than PUs is refused. 0, or -1 with *error. */
static int resolve_any(target_spec_t *ts, const json_t *id, json_t **error)
{
	size_t nh = topo_nhosts(ts->c), i;
	uint8_t **used = calloc(nh ? nh : 1, sizeof(*used));
	unsigned *next = calloc(nh ? nh : 1, sizeof(*next));
	int rc = 0;

	for (i = 0; used && next && rc == 0 && i < ts->n; i++) { /* the PUs given, first come first served */
		topo_slot_t *s = &ts->slots[i];
		unsigned np = topo_host_npus(ts->c, s->host);

		if (!used[s->host] && !(used[s->host] = calloc(np ? np : 1, 1)))
			rc = -1;
		else if (s->pu != (uint32_t)RM_SLOT_ANY && !used[s->host][s->pu])
			used[s->host][s->pu] = 1;
		else if (s->pu != (uint32_t)RM_SLOT_ANY && ts->pu_index == RM_SLOT_PU_OS)
			s->pu = (uint32_t)RM_SLOT_ANY; /* shared: gets a free one below */
	}
	for (i = 0; used && next && rc == 0 && i < ts->n; i++) {
		topo_slot_t *s = &ts->slots[i];
		unsigned np = topo_host_npus(ts->c, s->host);

		while (s->pu == (uint32_t)RM_SLOT_ANY && next[s->host] < np && used[s->host][next[s->host]])
			next[s->host]++;
		if (s->pu != (uint32_t)RM_SLOT_ANY)
			continue;
		if (next[s->host] >= np) {
			*error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "slots: more slots on host %s than its %u PUs",
						topo_host_name(ts->c, s->host), np);
			rc = -2;
		} else
			used[s->host][s->pu = next[s->host]] = 1;
	}
	for (i = 0; used && i < nh; i++)
		free(used[i]);
	if (!used || !next || rc == -1)
		*error = rm_proto_error(id, RM_ERR_INTERNAL, "out of memory");
	free(used);
	free(next);
	return rc ? -1 : 0;
}

/* GPU slot i of a request: [host, gpu], gpu an index or a name topo_host_gpu_find knows (an OS device
 * name, PCI bus id or UUID). 0, or -1 with *error. */
static int parse_gpu_slot(target_spec_t *ts, const json_t *v, size_t i, const json_t *id, json_t **error)
{
	const char *host = NULL;
	const json_t *g = NULL;
	long h, gi = -1;

	if (json_unpack((json_t *)v, "[so!]", &host, &g) < 0 || !(json_is_integer(g) || json_is_string(g)))
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST,
					       "slots[%zu]: expected [\"host\", gpu index or name] (slot_kind gpu)", i),
		       -1;
	if ((h = topo_host_find(ts->c, host)) < 0)
		return *error = rm_proto_error(id, RM_ERR_NOT_FOUND, "slots: unknown host '%.*s'",
					       rm_utf8_prefix(host, 128), host),
		       -1;
	if (json_is_integer(g) && json_integer_value(g) >= 0 &&
	    (size_t)json_integer_value(g) < topo_host_ngpus(ts->c, (size_t)h))
		gi = (long)json_integer_value(g);
	else if (json_is_string(g))
		gi = topo_host_gpu_find(ts->c, (size_t)h, json_string_value(g));
	if (gi < 0)
		return *error = rm_proto_error(id, RM_ERR_NOT_FOUND, "slots[%zu]: host %s has no such GPU (it has %zu)",
					       i, host, topo_host_ngpus(ts->c, (size_t)h)),
		       -1;
	ts->gslots[i] = (topo_gpu_slot_t){ (uint32_t)h, (uint32_t)gi };
	return 0;
}

/* Validates the host names or [host, pu] slots of a map request into ts. 0, or -1 with *error. */
static int target_spec(target_spec_t *ts, const json_t *hosts, const json_t *slots, const json_t *id, json_t **error)
{
	size_t i, len = 0;
	int any = ts->pu_index == RM_SLOT_PU_OS;

	ts->n = json_array_size(hosts ? hosts : slots);
	ts->cacheable = 1;
	if (ts->n == 0)
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "%s: empty list", hosts ? "hosts" : "slots"), -1;
	key_add(ts, &len,
		hosts     ? (ts->gpu        ? "hosts/gpus"
			     : ts->per_core ? "hosts/cores"
					    : "hosts/pus")
		: ts->gpu ? "gpuslots"
			  : "slots",
		-1);
	if (slots && ts->gpu) {
		if (!(ts->gslots = calloc(ts->n, sizeof(*ts->gslots))))
			return *error = rm_proto_error(id, RM_ERR_INTERNAL, "out of memory"), -1;
		for (i = 0; i < ts->n; i++) {
			if (parse_gpu_slot(ts, json_array_get(slots, i), i, id, error) < 0)
				return -1;
			key_add(ts, &len, topo_host_name(ts->c, ts->gslots[i].host), ts->gslots[i].gpu);
		}
		return 0;
	}
	if (hosts && !(ts->names = calloc(ts->n, sizeof(*ts->names))))
		return *error = rm_proto_error(id, RM_ERR_INTERNAL, "out of memory"), -1;
	if (slots && !(ts->slots = calloc(ts->n, sizeof(*ts->slots))))
		return *error = rm_proto_error(id, RM_ERR_INTERNAL, "out of memory"), -1;
	for (i = 0; i < ts->n; i++) {
		if (hosts && !(ts->names[i] = json_string_value(json_array_get(hosts, i))))
			return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "hosts[%zu]: expected a host name", i),
			       -1;
		if (slots && parse_slot(ts, json_array_get(slots, i), i, id, error) < 0)
			return -1;
		if (hosts)
			key_add(ts, &len, ts->names[i], -1);
		else
			any |= ts->slots[i].pu == (uint32_t)RM_SLOT_ANY;
	}
	if (slots && any && resolve_any(ts, id, error) < 0)
		return -1;
	for (i = 0; slots && i < ts->n; i++)
		key_add(ts, &len, topo_host_name(ts->c, ts->slots[i].host), ts->slots[i].pu);
	return 0;
}

/* The target of a request: every core (per_core) or PU of the named hosts, or the listed [host, pu]
 * slots; from the model's cache when an identical one was built recently. *handle for the put. */
static const topo_target_t *request_target(srv_model_t *m, const json_t *hosts, const json_t *slots, int per_core,
					   int gpu, rm_slot_pu_t pu_index, const json_t *id, void **handle,
					   json_t **error)
{
	target_spec_t ts = { .c = m->cluster, .per_core = per_core, .gpu = gpu, .pu_index = pu_index };
	const topo_target_t *t = NULL;
	rm_error_t err = { 0 };
	char msg[600];

	*handle = NULL;
	if (target_spec(&ts, hosts, slots, id, error) == 0) {
		if (ts.cacheable)
			t = srv_model_target(m, ts.key, build_target, &ts, handle, &err);
		else if ((t = build_target(&ts, &err)))
			srv_model_target_private(t, handle);
		if (!t)
			*error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "%s", rm_error_format(&err, msg, sizeof(msg)));
	}
	free(ts.names);
	free(ts.slots);
	free(ts.gslots);
	return t;
}

/* The answer. In the target's order (index "target"): permutation[v] indexes `slots`, the target's slots
 * depth-first. In the request's order (index "request", a slots request): permutation[v] indexes the
 * request's own slots, `slots` is left out (the client has them) and `pu_os` gives the OS index of each
 * of the request's slots as resolved here. */
static json_t *map_response(const json_t *id, const topo_target_t *t, topo_cluster_t c, const uint32_t *perm,
			    uint32_t n, const map_result_t *res, int by_request)
{
	json_t *resp = rm_proto_ok(id), *p = json_array(), *sl = json_array();
	uint32_t i, *back = by_request ? malloc(((size_t)t->nslots + 1) * sizeof(*back)) : NULL;

	if (by_request && !back) {
		json_decref(resp), json_decref(p), json_decref(sl);
		return rm_proto_error(id, RM_ERR_INTERNAL, "out of memory");
	}
	for (i = 0; back && i < t->nslots; i++) /* target slot -> request slot */
		back[t->given[i]] = i;
	for (i = 0; i < n; i++)
		json_array_append_new(p, json_integer(back ? back[perm[i]] : perm[i]));
	for (i = 0; by_request && i < t->nslots; i++)
		json_array_append_new(sl, json_integer(t->slot_pu_os[t->given[i]]));
	for (i = 0; !by_request && t->slot && i < t->nslots; i++) {
		json_t *pair = json_array();
		json_array_append_new(pair, json_string_nocheck(topo_host_name(c, t->slot[i].host)));
		json_array_append_new(pair, json_integer(t->slot[i].pu));
		json_array_append_new(sl, pair);
	}
	if (t->slot_gpu) { /* GPU slots: the GPU of each slot listed (in the same order) */
		json_t *gi = json_array(), *gn = json_array();

		for (i = 0; i < t->nslots; i++) {
			uint32_t s = by_request ? t->given[i] : i;
			const topo_gpu_t *g = topo_host_gpu(c, t->slot[s].host, t->slot_gpu[s]);

			json_array_append_new(gi, json_integer(t->slot_gpu[s]));
			json_array_append_new(gn, json_string(g ? g->name : ""));
		}
		json_object_set_new(resp, "slot_kind", json_string("gpu"));
		json_object_set_new(resp, "gpus", gi);
		json_object_set_new(resp, "gpu_names", gn);
	}
	free(back);
	json_object_set_new(resp, "permutation", p);
	json_object_set_new(resp, by_request ? "pu_os" : "slots", sl);
	json_object_set_new(resp, "cost", json_real(res->cost));
	json_object_set_new(resp, "identity_cost", json_real(res->identity_cost));
	json_object_set_new(resp, "engine", json_string(res->algo));
	json_object_set_new(resp, "algorithm", json_string(res->algo)); /* its old name, for older clients */
	json_object_set_new(resp, "time_ms", json_real(res->time_ms));
	if (t->warning) /* hosts the fabric does not connect: mapped, with a penalty distance */
		json_object_set_new(resp, "warnings", json_pack("[s]", t->warning));
	return resp;
}

/* Slots request: identity_cost becomes the cost of the placement given (vertex v on the v-th slot
 * given: target slot t->given[v]), and that placement is kept when the engine found nothing cheaper
 * (the engine "identity" is vertex v on the target's v-th slot, depth-first: PROTOCOL.md). */
static void against_given(const topo_target_t *t, const map_graph_t *g, uint32_t *perm, map_result_t *res)
{
	res->identity_cost = map_cost(g, t, t->given);
	if (res->cost > res->identity_cost) {
		memcpy(perm, t->given, g->n * sizeof(*perm));
		res->cost = res->identity_cost;
		snprintf(res->algo, sizeof(res->algo), "identity");
	}
}

static json_t *breakdown_json(const topo_target_t *t, const map_graph_t *g, const uint32_t *perm)
{
	double *bd = calloc((size_t)t->nlevels + 1, sizeof(double));
	json_t *arr = json_array();
	int l;

	if (!bd)
		return arr;
	map_breakdown(g, t, perm, bd);
	for (l = 0; arr && l < t->nlevels; l++)
		json_array_append_new(arr, json_pack("{s:s, s:f, s:f}", "level",
						     t->level_name && t->level_name[l] ? t->level_name[l] : "",
						     "traffic", bd[l], "distance", t->cost[l]));
	free(bd);
	return arr;
}

/* "breakdown": true adds the target as a tleaf string and the traffic per level, mapped and identity
 * (for a slots request, like identity_cost, the placement given). */
static void add_breakdown(json_t *resp, const topo_target_t *t, const json_t *slots, const map_graph_t *g,
			  const uint32_t *perm)
{
	uint32_t *id = slots ? NULL : malloc(((size_t)g->n + 1) * sizeof(*id)), i;
	char tleaf[1024];

	if (topo_target_tleaf_string(t, tleaf, sizeof(tleaf)) == 0)
		json_object_set_new(resp, "target", json_string(tleaf));
	json_object_set_new(resp, "breakdown", breakdown_json(t, g, perm));
	for (i = 0; id && !slots && i < g->n; i++)
		id[i] = i;
	if (id || slots)
		json_object_set_new(resp, "identity_breakdown", breakdown_json(t, g, slots ? t->given : id));
	free(id);
}

/* Appends a warning to resp's "warnings" (created when missing). */
static void add_warning(json_t *resp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_warning(json_t *resp, const char *fmt, ...)
{
	json_t *w = json_object_get(resp, "warnings");
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!w) {
		w = json_array();
		json_object_set_new(resp, "warnings", w);
	}
	json_array_append_new(w, json_string(msg));
}

/* The time budget a map of peer runs with (fair service): root and slurm_user get what they ask (up to
 * MAX_BUDGET_MS), everyone else at most max_time_budget, so that one request never holds a worker far
 * beyond what a waiting MPI job can afford. *cut is set when the request asked for more. */
static double granted_budget(const srv_ctx_t *ctx, const srv_peer_t *peer, double asked, int *cut)
{
	double cap = ctx->cfg.max_time_budget_ms;

	*cut = 0;
	if (peer->uid == 0 || (ctx->cfg.has_slurm_uid && peer->uid == ctx->cfg.slurm_uid))
		return asked;
	if (asked > cap)
		*cut = 1;
	if (asked > cap || (asked <= 0 && cap < ENGINE_DEFAULT_BUDGET_MS))
		return cap;
	return asked;
}

/* The fields of a map request, validated. */
typedef struct map_req {
	json_t *pat, *hosts, *slots;
	const char *cart, *algo;
	int per_core, seed, breakdown, by_request, gpu;
	rm_slot_pu_t pu_index;
	double budget;
	const char *slot_kind;
	int pu_given; /* pu_index given: PU slots, whatever the model's default slot kind */
} map_req_t;

/* Unpacks and checks a map request's fields into q. NULL, or the error response. */
static json_t *map_fields(const json_t *req, const json_t *id, map_req_t *q)
{
	const char *pu_index = NULL, *index = NULL, *engine = NULL, *algorithm = NULL;
	json_error_t jerr;

	*q = (map_req_t){ .algo = "auto", .per_core = 1 };
	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT,
			   "{s:i, s:s, s:o, s?o, s?s, s?o, s?o, s?b, s?s, s?s, s?i, s?F, s?b, s?s, s?s, s?s}",
			   "version", &(int){ 0 }, "type", &(const char *){ NULL }, "id", &(json_t *){ NULL },
			   "pattern", &q->pat, "cart", &q->cart, "hosts", &q->hosts, "slots", &q->slots, "per_core",
			   &q->per_core, "engine", &engine, "algorithm", &algorithm, "seed", &q->seed, "time_budget_ms",
			   &q->budget, "breakdown", &q->breakdown, "pu_index", &pu_index, "index", &index, "slot_kind",
			   &q->slot_kind) < 0 ||
	    (q->hosts && !json_is_array(q->hosts)) || (q->slots && !json_is_array(q->slots)) ||
	    (q->pat && !json_is_object(q->pat)))
		return srv_request_invalid(req, id, MAP_SCHEMA, &jerr);
	if (engine && algorithm) /* algorithm: the engine's old name, still accepted alone */
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "give one of 'engine' and 'algorithm' (its old name)");
	if (engine || algorithm)
		q->algo = engine ? engine : algorithm;
	if (!q->pat == !q->cart)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "give exactly one of 'pattern' and 'cart'");
	if (!(q->budget >= 0 && q->budget <= MAX_BUDGET_MS)) /* a worker is not held longer than this */
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "time_budget_ms: %g outside 0..%d", q->budget,
				      MAX_BUDGET_MS);
	if (!q->hosts == !q->slots)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "give exactly one of 'hosts' and 'slots'");
	q->pu_given = pu_index != NULL;
	if (pu_index && (q->hosts || rm_slot_pu_parse(pu_index, &q->pu_index) < 0))
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "pu_index: '%s' is not logical or os (with slots)",
				      pu_index);
	if (q->slot_kind) {
		topo_slot_kind_t k;

		if (topo_slot_kind_parse(q->slot_kind, &k) < 0)
			return rm_proto_error(id, RM_ERR_BAD_REQUEST, "slot_kind: '%s' is not core or gpu",
					      q->slot_kind);
		q->gpu = k == TOPO_SLOTS_GPU;
		if (q->gpu && pu_index)
			return rm_proto_error(id, RM_ERR_BAD_REQUEST, "pu_index: not with slot_kind gpu");
	}
	q->by_request = index && !strcmp(index, "request");
	if (index && ((!q->by_request && strcmp(index, "target")) || (q->by_request && q->hosts)))
		return rm_proto_error(id, RM_ERR_BAD_REQUEST,
				      "index: '%s' is not target or request (request: with slots only)", index);
	return NULL;
}

json_t *srv_req_map(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	json_t *error = NULL, *resp = NULL;
	int cut = 0;
	rm_error_t err = { 0 };
	map_options_t opt = { 0 };
	map_result_t res = { 0 };
	map_graph_t *g = NULL;
	const topo_target_t *t = NULL;
	void *th = NULL;
	srv_model_t *m = NULL;
	uint32_t *perm = NULL;
	char msg[600];
	map_req_t q;

	if ((error = map_fields(req, id, &q)))
		return error;
	if (!(m = srv_model_get(ctx)))
		return rm_proto_error(id, RM_ERR_NO_MODEL, "no model loaded");
	if (!q.slot_kind && !q.pu_given) /* the model's cluster file may make GPU slots the default */
		q.gpu = topo_cluster_slot_kind(m->cluster) == TOPO_SLOTS_GPU;
	t = request_target(m, q.hosts, q.slots, q.per_core, q.gpu, q.pu_index, id, &th, &error);
	if (t)
		g = q.pat ? pattern_graph(q.pat, t->nslots, id, &error) : cart_graph(q.cart, t->nslots, id, &error);
	if (!g || !t)
		goto out;
	if (!(perm = calloc(g->n, sizeof(*perm)))) {
		error = rm_proto_error(id, RM_ERR_INTERNAL, "out of memory");
		goto out;
	}
	opt.seed = (unsigned)q.seed;
	opt.time_budget_ms = granted_budget(ctx, peer, q.budget, &cut);
	if (ctx->test_faults && (error = srv_test_fault(ctx, q.algo, id)))
		goto out;
	if (map_compute(q.algo, g, t, &opt, perm, &res, &err) < 0)
		error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "%s", rm_error_format(&err, msg, sizeof(msg)));
	else {
		if (q.slots)
			against_given(t, g, perm, &res);
		resp = map_response(id, t, m->cluster, perm, g->n, &res, q.by_request);
		if (q.breakdown)
			add_breakdown(resp, t, q.slots, g, perm);
		if (cut)
			add_warning(resp,
				    "time_budget_ms %g cut to max_time_budget %d ms (the daemon's limit for users "
				    "other than root and slurm_user)",
				    q.budget, ctx->cfg.max_time_budget_ms);
	}
out:
	free(perm);
	srv_model_target_put(m, th);
	map_graph_destroy(g);
	srv_model_put(m);
	return resp ? resp : error;
}

/* ---- order ---------------------------------------------------------------------------------------- */

#define ORDER_SCHEMA SRV_ENVELOPE " method:s dims?a wrap?a link_cost?a nodes_per_router?i axes?s"
#define ORDER_MAX_NODES (1u << 20) /* over six times the largest torus machine built (Fugaku, 158,976 nodes) */

#define ORDER_MAX_EXTENT 4096
#define ORDER_MAX_NPR 1024

/* Axis d of the request's torus: every value type- and range-checked as JSON (json_int_t) before it is
 * converted, so that 2^32 + 4 is refused rather than read as 4. 0, or -1 with *error naming the field. */
static int order_axis(const json_t *dims, const json_t *wrap, const json_t *cost, int d, topo_torus_spec_t *spec,
		      const json_t *id, json_t **error)
{
	const json_t *x = json_array_get(dims, (size_t)d), *w = wrap ? json_array_get(wrap, (size_t)d) : NULL;
	const json_t *c = cost ? json_array_get(cost, (size_t)d) : NULL;

	if (!json_is_integer(x))
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "dims[%d]: expected an integer 1..%d", d,
					       ORDER_MAX_EXTENT),
		       -1;
	if (json_integer_value(x) < 1 || json_integer_value(x) > ORDER_MAX_EXTENT)
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "dims[%d]: %lld outside 1..%d", d,
					       (long long)json_integer_value(x), ORDER_MAX_EXTENT),
		       -1;
	if (w && !json_is_boolean(w))
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "wrap[%d]: expected true or false", d), -1;
	if (c && !(json_is_number(c) && json_number_value(c) > 0 && json_number_value(c) <= 1e9))
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST,
					       "link_cost[%d]: expected a number > 0 and "
					       "<= 1e9",
					       d),
		       -1;
	spec->dims[d] = (int)json_integer_value(x);
	spec->wrap[d] = w ? json_is_true(w) : 1;
	spec->link_cost[d] = c ? json_number_value(c) : 1.0;
	return 0;
}

/* The torus: given in the request (dims, wrap, link_cost, nodes_per_router) or the model's own. */
int srv_order_spec(srv_ctx_t *ctx, const json_t *dims, const json_t *wrap, const json_t *cost, json_int_t npr,
		   topo_torus_spec_t *spec, const json_t *id, json_t **error)
{
	srv_model_t *m;
	const topo_torus_spec_t *own;
	int d;

	if (!dims) {
		m = srv_model_get(ctx);
		own = m ? topo_torus(m->cluster) : NULL;
		if (own)
			*spec = *own;
		srv_model_put(m);
		if (!own)
			return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "the model has no torus: give 'dims'"),
			       -1;
		return 0;
	}
	if (json_array_size(dims) != 3 || (wrap && json_array_size(wrap) != 3) || (cost && json_array_size(cost) != 3))
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "dims, wrap, link_cost: 3 entries each"), -1;
	for (d = 0; d < 3; d++)
		if (order_axis(dims, wrap, cost, d, spec, id, error) < 0)
			return -1;
	if (npr < 1 || npr > ORDER_MAX_NPR)
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "nodes_per_router: %lld outside 1..%d",
					       (long long)npr, ORDER_MAX_NPR),
		       -1;
	spec->nodes_per_router = (int)npr;
	if ((double)spec->dims[0] * spec->dims[1] * spec->dims[2] * npr > ORDER_MAX_NODES) /* memory of one worker */
		return *error = rm_proto_error(id, RM_ERR_BAD_REQUEST, "torus of %.0f nodes: at most %u",
					       (double)spec->dims[0] * spec->dims[1] * spec->dims[2] * npr,
					       ORDER_MAX_NODES),
		       -1;
	return 0;
}

/* The order as the response carries it: node and block of each position, block groups, torus. */
static json_t *order_response(const json_t *id, const order_t *o, const topo_torus_spec_t *spec)
{
	json_t *resp = rm_proto_ok(id), *nodes = json_array(), *blocks = json_array(), *groups = json_array();
	size_t i;

	for (i = 0; i < o->nnodes; i++) {
		json_array_append_new(nodes, json_integer(o->node[i]));
		json_array_append_new(blocks, json_integer(o->block[i]));
	}
	for (i = 0; o->block_group && i < 2 * (size_t)o->nblocks; i++)
		json_array_append_new(groups, json_integer(o->block_group[i]));
	json_object_update_new(resp, json_pack("{s:s, s:o, s:o, s:I, s:[iii], s:[iii], s:[iii], s:i, s:[bbb], "
					       "s:[fff], s:o}",
					       "method", o->method, "order", nodes, "block", blocks, "nblocks",
					       (json_int_t)o->nblocks, "block_ext", o->block_ext[0], o->block_ext[1],
					       o->block_ext[2], "axes", o->axes[0], o->axes[1], o->axes[2], "dims",
					       spec->dims[0], spec->dims[1], spec->dims[2], "nodes_per_router",
					       spec->nodes_per_router, "wrap", spec->wrap[0], spec->wrap[1],
					       spec->wrap[2], "link_cost", spec->link_cost[0], spec->link_cost[1],
					       spec->link_cost[2], "block_group", groups));
	return resp;
}

/* Adds "hosts" (the host name of each node index, null where none) when the model's torus names its
 * nodes. */
static void torus_names(srv_ctx_t *ctx, json_t *resp, size_t nnodes)
{
	srv_model_t *m = srv_model_get(ctx);
	const char **nm = m ? calloc(nnodes ? nnodes : 1, sizeof(*nm)) : NULL;
	json_t *names;
	size_t i;

	if (nm && topo_torus_host_names(m->cluster, nm, nnodes) > 0 && (names = json_array())) {
		for (i = 0; i < nnodes; i++)
			json_array_append_new(names, nm[i] ? json_string(nm[i]) : json_null());
		json_object_set_new(resp, "hosts", names);
	}
	free(nm);
	srv_model_put(m);
}

json_t *srv_req_order(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	json_t *dims = NULL, *wrap = NULL, *cost = NULL, *error = NULL, *resp;
	const char *method, *axes = NULL;
	json_int_t npr = 1;
	json_error_t jerr;
	rm_error_t err = { 0 };
	topo_torus_spec_t spec = { 0 };
	order_opts_t opts;
	order_t *o;
	char msg[600];

	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT, "{s:i, s:s, s:o, s:s, s?o, s?o, s?o, s?I, s?s}",
			   "version", &(int){ 0 }, "type", &(const char *){ NULL }, "id", &(json_t *){ NULL }, "method",
			   &method, "dims", &dims, "wrap", &wrap, "link_cost", &cost, "nodes_per_router", &npr, "axes",
			   &axes) < 0)
		return srv_request_invalid(req, id, ORDER_SCHEMA, &jerr);
	order_opts_default(&opts);
	if (srv_order_spec(ctx, dims, wrap, cost, npr, &spec, id, &error) < 0)
		return error;
	if (axes && order_parse_axes(axes, opts.axes, &err) < 0)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "axes: %s", rm_error_format(&err, msg, sizeof(msg)));
	if (!(o = order_build(&spec, method, &opts, &err)))
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "%s", rm_error_format(&err, msg, sizeof(msg)));
	resp = order_response(id, o, &spec);
	if (!dims)
		torus_names(ctx, resp, o->nnodes);
	order_destroy(o);
	return resp;
}
