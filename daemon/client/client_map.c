/*
 * daemon/client/client_map.c: the `map` request, typed (rm_client_map in rm_client.h). Every caller that
 * maps through rankmapd (the MPI library, the SPANK plugin, rankmapctl map and explain) builds its request
 * here, so a slot travels as one rm_slot_t from the caller to the daemon and comes back as an index into
 * the caller's own list: slots requests ask for the answer in the request's order ("index": "request").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm_client.h"

/* "src dst weight" lines: the compact form of a pattern (PROTOCOL.md "edges_text"). */
static json_t *edges_text(const rm_map_request_t *q)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	json_t *p;

	if (!m)
		return NULL;
	for (size_t k = 0; k < q->nedges; k++)
		fprintf(m, "%u %u %.17g\n", q->src[k], q->dst[k], q->w ? q->w[k] : 1.0);
	if (fclose(m) != 0) {
		free(text);
		return NULL;
	}
	p = json_pack("{s:I, s:s}", "n", (json_int_t)q->n, "edges_text", text);
	free(text);
	return p;
}

static json_t *where_json(const rm_map_request_t *q)
{
	json_t *list = json_array();

	for (size_t i = 0; list && q->slots && i < q->nslots; i++) {
		const rm_slot_t *s = &q->slots[i];

		json_t *w = q->gpus                ? json_string(q->gpus[i] ? q->gpus[i] : "")
			    : s->pu == RM_SLOT_ANY ? json_null()
						   : json_integer(s->pu);

		if (json_array_append_new(list, json_pack("[s, o]", s->host ? s->host : "", w)) < 0) {
			json_decref(list);
			return NULL;
		}
	}
	for (size_t i = 0; list && !q->slots && i < q->nhosts; i++)
		if (json_array_append_new(list, json_string(q->hosts[i] ? q->hosts[i] : "")) < 0) {
			json_decref(list);
			return NULL;
		}
	return list;
}

json_t *rm_map_request_json(const rm_map_request_t *q)
{
	json_t *req = rm_proto_request("map", 1), *pat = q->cart ? json_string(q->cart) : edges_text(q);
	json_t *where = where_json(q);
	int bad = !req || !pat || !where;

	bad = bad || json_object_set_new(req, q->cart ? "cart" : "pattern", pat) < 0;
	pat = NULL;
	bad = bad || json_object_set_new(req, q->slots ? "slots" : "hosts", where) < 0;
	where = NULL;
	if (!bad && q->slots)
		bad = json_object_set_new(req, "index", json_string("request")) < 0 ||
		      (q->gpus && json_object_set_new(req, "slot_kind", json_string("gpu")) < 0) ||
		      (!q->gpus && q->pu_index != RM_SLOT_PU_LOGICAL &&
		       json_object_set_new(req, "pu_index", json_string(rm_slot_pu_name(q->pu_index))) < 0);
	if (!bad && !q->slots)
		bad = json_object_set_new(req, "per_core", json_boolean(!q->per_pu)) < 0;
	if (!bad)
		bad = json_object_set_new(req, "engine", json_string(q->engine ? q->engine : "auto")) < 0 ||
		      (q->seed && json_object_set_new(req, "seed", json_integer(q->seed)) < 0) ||
		      (q->time_budget_ms > 0 &&
		       json_object_set_new(req, "time_budget_ms", json_real(q->time_budget_ms)) < 0) ||
		      (q->breakdown && json_object_set_new(req, "breakdown", json_true()) < 0);
	json_decref(pat);
	json_decref(where);
	if (bad) {
		json_decref(req);
		errno = ENOMEM;
		return NULL;
	}
	return req;
}

/* Reads the answer's permutation (n distinct slots below nslots) and, for slots, the PUs. 0 or -1. */
static int read_answer(const rm_map_request_t *q, rm_map_answer_t *a, rm_error_t *err)
{
	json_t *perm = json_object_get(a->resp, "permutation"), *pus = json_object_get(a->resp, "pu_os");
	size_t nslots = q->slots ? q->nslots : json_array_size(json_object_get(a->resp, "slots"));
	uint8_t *seen = calloc(nslots ? nslots : 1, 1);
	const char *engine = json_string_value(json_object_get(a->resp, "engine"));

	a->n = q->n;
	a->slot = malloc(((size_t)q->n + 1) * sizeof(*a->slot));
	a->pu_os = q->slots ? malloc((nslots + 1) * sizeof(*a->pu_os)) : NULL;
	if (!seen || !a->slot || (q->slots && !a->pu_os)) {
		free(seen);
		return rm_error_set(err, "memory", 0, 0, "out of memory");
	}
	if (json_array_size(perm) != q->n || (q->slots && json_array_size(pus) != nslots)) {
		free(seen);
		return rm_error_set(err, "rankmapd", 0, 0,
				    "malformed map answer: %zu vertices for %u, %zu PUs for %zu slots",
				    json_array_size(perm), q->n, json_array_size(pus), q->slots ? nslots : 0);
	}
	for (uint32_t v = 0; v < q->n; v++) {
		json_t *s = json_array_get(perm, v);
		json_int_t i = json_integer_value(s);

		if (!json_is_integer(s) || i < 0 || (size_t)i >= nslots || seen[i]++) {
			free(seen);
			return rm_error_set(err, "rankmapd", 0, 0, "malformed map answer: vertex %u on slot %lld", v,
					    (long long)i);
		}
		a->slot[v] = (uint32_t)i;
	}
	free(seen);
	for (size_t i = 0; q->slots && i < nslots; i++)
		a->pu_os[i] = (int32_t)json_integer_value(json_array_get(pus, i));
	a->cost = json_number_value(json_object_get(a->resp, "cost"));
	a->given_cost = json_number_value(json_object_get(a->resp, "identity_cost"));
	a->time_ms = json_number_value(json_object_get(a->resp, "time_ms"));
	snprintf(a->engine, sizeof(a->engine), "%s", engine ? engine : "?");
	a->warning = json_string_value(json_array_get(json_object_get(a->resp, "warnings"), 0));
	return 0;
}

int rm_client_map(const rm_client_opts_t *o, const rm_map_request_t *q, rm_map_answer_t *a, rm_client_info_t *info,
		  rm_error_t *err)
{
	json_t *req = rm_map_request_json(q);

	memset(a, 0, sizeof(*a));
	if (!req)
		return rm_error_set(err, "memory", 0, 0, "out of memory building the map request");
	if (rm_client_call_opts(o, req, &a->resp, info, err) != 0)
		return -1;
	if (read_answer(q, a, err) != 0) {
		json_t *resp = a->resp;

		a->resp = NULL;
		rm_map_answer_free(a);
		a->resp = resp;
		errno = EPROTO;
		return -1;
	}
	return 0;
}

void rm_map_answer_free(rm_map_answer_t *a)
{
	if (!a)
		return;
	free(a->slot);
	free(a->pu_os);
	json_decref(a->resp);
	memset(a, 0, sizeof(*a));
}
