/*
 * Requests to a real rankmapd that used to get a wrong answer or none, each now refused with an error
 * frame naming the field:
 *  - a pattern whose weights sum beyond a double (JSON triples and edges_text), and one whose cost
 *    (weights x distances) overflows: the answer used to be "ok" without a "cost";
 *  - long multibyte names echoed in errors (an unknown field, request type, host): a message cut in the
 *    middle of a character used to make no answer frame at all;
 *  - order and simulate with torus extents beyond an int (2^32 + 4 used to be read as 4) or of the
 *    wrong type, and nodes_per_router beyond an int.
 */
#include "test_daemon_util.h"

static json_t *map_req(json_t *edges_or_text, int n)
{
	json_t *q = rm_proto_request("map", 5);

	json_object_set_new(
		q, "pattern",
		json_pack("{s:i, s:o}", "n", n, json_is_string(edges_or_text) ? "edges_text" : "edges", edges_or_text));
	json_object_set_new(q, "hosts", json_pack("[ss]", "bonobo001", "bonobo002"));
	return q;
}

/* An error frame of code with a message containing every one of the strings (NULL-terminated). */
static int is_error(const json_t *r, const char *code, const char *s1, const char *s2)
{
	return r && json_is_false(json_object_get(r, "ok")) && !strcmp(td_code(r), code) && strstr(td_msg(r), s1) &&
	       (!s2 || strstr(td_msg(r), s2));
}

static void test_weight_overflow(tdaemon_t *d)
{
	json_t *r, *edges;
	int i;

	r = td_call(d->sock, map_req(json_pack("[[iif][iif][iif]]", 0, 1, 1e308, 1, 2, 1e308, 2, 3, 1e308), 4));
	check(is_error(r, RM_ERR_BAD_REQUEST, "pattern", "not finite"),
	      "weights of 1e308 (JSON): an error frame naming the pattern: %s", td_msg(r));
	json_decref(r);
	r = td_call(d->sock, map_req(json_string("0 1 1e308 1 2 1e308 2 3 1e308"), 4));
	check(is_error(r, RM_ERR_BAD_REQUEST, "pattern", "not finite"),
	      "weights of 1e308 (edges_text): an error frame naming the pattern: %s", td_msg(r));
	json_decref(r);
	/* 16 ranks on two hosts of 8 cores, pairs (i, i + 8) of 1e307 (total 8e307, finite): the identity
	 * puts every pair across the two hosts, whose distance (no fabric known) is above 3 */
	edges = json_array();
	for (i = 0; i < 8; i++)
		json_array_append_new(edges, json_pack("[iif]", i, i + 8, 1e307));
	r = td_call(d->sock, map_req(edges, 16));
	check(is_error(r, RM_ERR_BAD_REQUEST, "cost", "overflows"), "a cost beyond a double: an error frame: %s",
	      td_msg(r));
	json_decref(r);
	r = td_call(d->sock, map_req(json_pack("[[iif][iif]]", 0, 1, 1e300, 2, 3, 1e300), 4));
	check(r && json_is_true(json_object_get(r, "ok")) && json_is_number(json_object_get(r, "cost")),
	      "large but representable weights still map, with a cost: %s", td_msg(r));
	json_decref(r);
}

/* "abc" then 100 x U+20AC (3 bytes each): the cuts of the names echoed (64 bytes, 128 for hosts) fall
 * mid-character. */
static const char *long_name(void)
{
	static char name[512];
	int i;

	strcpy(name, "abc");
	for (i = 0; i < 100; i++)
		strcat(name, "\xe2\x82\xac");
	return name;
}

/* A well-formed error frame of code naming what. */
static int named_error(const json_t *r, const char *code, const char *what)
{
	const char *m = td_msg(r);
	json_t *again = json_string(m);
	int ok = again && is_error(r, code, what, "abc\xe2\x82\xac\xe2\x82\xac");

	json_decref(again);
	return ok;
}

static void test_multibyte_names(tdaemon_t *d)
{
	json_t *q, *r;

	q = rm_proto_request("ping", 6);
	json_object_set_new(q, long_name(), json_true());
	r = td_call(d->sock, q);
	check(named_error(r, RM_ERR_BAD_REQUEST, "unknown field"), "long multibyte unknown field: an error frame: %s",
	      r ? td_msg(r) : "(no answer)");
	json_decref(r);
	q = rm_proto_request("map", 7);
	json_object_set_new(q, "cart", json_string("2x2"));
	json_object_set_new(q, "hosts", json_pack("[s]", "bonobo001"));
	json_object_set_new(q, long_name(), json_true());
	r = td_call(d->sock, q);
	check(named_error(r, RM_ERR_BAD_REQUEST, "unknown field"), "the same in a map request (worker): %s",
	      r ? td_msg(r) : "(no answer)");
	json_decref(r);
	r = td_call(d->sock, rm_proto_request(long_name(), 8));
	check(named_error(r, RM_ERR_UNKNOWN_TYPE, "unknown request type"), "long multibyte request type: %s",
	      r ? td_msg(r) : "(no answer)");
	json_decref(r);
	q = rm_proto_request("distance", 9);
	json_object_set_new(q, "hosts", json_pack("[ss]", "bonobo001", long_name()));
	r = td_call(d->sock, q);
	check(named_error(r, RM_ERR_NOT_FOUND, "unknown host"), "long multibyte host name: %s",
	      r ? td_msg(r) : "(no answer)");
	json_decref(r);
	q = rm_proto_request("map", 10);
	json_object_set_new(q, "cart", json_string("2x2"));
	json_object_set_new(q, "hosts", json_pack("[s]", long_name()));
	r = td_call(d->sock, q);
	check(r && json_is_false(json_object_get(r, "ok")) && strstr(td_msg(r), "abc\xe2\x82\xac"),
	      "long multibyte host in a map request: an error frame: %s", r ? td_msg(r) : "(no answer)");
	json_decref(r);
}

/* An order or simulate request on dims (stolen) with nodes_per_router npr (0: not given). */
static json_t *torus_req(const char *type, json_t *dims, json_int_t npr)
{
	json_t *q = rm_proto_request(type, 11);

	if (!strcmp(type, "order"))
		json_object_set_new(q, "method", json_string("xyz"));
	else
		json_object_set_new(q, "jobs", json_integer(10));
	json_object_set_new(q, "dims", dims);
	if (npr)
		json_object_set_new(q, "nodes_per_router", json_integer(npr));
	return q;
}

static void test_torus_ranges(tdaemon_t *d)
{
	static const char *const types[] = { "order", "simulate" };
	const json_int_t big = ((json_int_t)1 << 32) + 4;
	json_t *r, *q;
	int i;

	for (i = 0; i < 2; i++) {
		r = td_call(d->sock, torus_req(types[i], json_pack("[iii]", 4, 4, 4), 0));
		check(r && json_is_true(json_object_get(r, "ok")), "%s on 4x4x4 works: %s", types[i], td_msg(r));
		json_decref(r);
		r = td_call(d->sock, torus_req(types[i], json_pack("[Iii]", big, 4, 4), 0));
		check(is_error(r, RM_ERR_BAD_REQUEST, "dims[0]", "4294967300"), "%s: dims [2^32+4, 4, 4] refused: %s",
		      types[i], td_msg(r));
		json_decref(r);
		r = td_call(d->sock, torus_req(types[i], json_pack("[iIi]", 4, -big, 4), 0));
		check(is_error(r, RM_ERR_BAD_REQUEST, "dims[1]", NULL), "%s: dims [4, -(2^32+4), 4] refused: %s",
		      types[i], td_msg(r));
		json_decref(r);
		r = td_call(d->sock, torus_req(types[i], json_pack("[iif]", 4, 4, 4.5), 0));
		check(is_error(r, RM_ERR_BAD_REQUEST, "dims[2]", "integer"), "%s: dims [4, 4, 4.5] refused: %s",
		      types[i], td_msg(r));
		json_decref(r);
		r = td_call(d->sock, torus_req(types[i], json_pack("[iii]", 4, 4, 4), ((json_int_t)1 << 32) + 1));
		check(is_error(r, RM_ERR_BAD_REQUEST, "nodes_per_router", "4294967297"),
		      "%s: nodes_per_router 2^32+1 refused: %s", types[i], td_msg(r));
		json_decref(r);
	}
	q = torus_req("order", json_pack("[iii]", 4, 4, 4), 0);
	json_object_set_new(q, "wrap", json_pack("[sbb]", "yes", 1, 1));
	r = td_call(d->sock, q);
	check(is_error(r, RM_ERR_BAD_REQUEST, "wrap[0]", NULL), "wrap that is not a boolean refused: %s", td_msg(r));
	json_decref(r);
	q = torus_req("order", json_pack("[iii]", 4, 4, 4), 0);
	json_object_set_new(q, "link_cost", json_pack("[fsf]", 1.0, "2", 1.0));
	r = td_call(d->sock, q);
	check(is_error(r, RM_ERR_BAD_REQUEST, "link_cost[1]", NULL), "link cost that is not a number refused: %s",
	      td_msg(r));
	json_decref(r);
}

int main(void)
{
	tdaemon_t d;
	char extra[1024], *data = realpath(harness_data_dir(), NULL);

	signal(SIGPIPE, SIG_IGN);
	snprintf(extra, sizeof(extra), "hwloc_dir = %s/daemon/hwloc\n", data ? data : ".");
	check(td_setup(&d, extra) == 0, "temporary directory");
	if (td_start(&d, NULL) < 0) {
		fail("rankmapd (%s) did not start; log in %s", td_bin(), d.log);
		return harness_done();
	}
	test_weight_overflow(&d);
	test_multibyte_names(&d);
	test_torus_ranges(&d);
	check(td_ping(d.sock) == 0, "the daemon still serves");
	td_cleanup(&d);
	free(data);
	return harness_done();
}
