/*
 * Requests to a real rankmapd that used to get a wrong answer or none, each now refused with an error
 * frame naming the field:
 *  - a pattern whose weights sum beyond a double (JSON triples and edges_text), and one whose cost
 *    (weights x distances) overflows: the answer used to be "ok" without a "cost";
 *  - long multibyte names echoed in errors (an unknown field, request type, host): a message cut in the
 *    middle of a character used to make no answer frame at all;
 */
#include "test_daemon_util.h"

static json_t *map_req(json_t *edges_or_text, int n)
{
	json_t *q = rm_proto_request("map", 5);

	json_object_set_new(q, "pattern", json_pack("{s:i, s:o}", "n", n,
						    json_is_string(edges_or_text) ? "edges_text" : "edges",
						    edges_or_text));
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
	check(td_ping(d.sock) == 0, "the daemon still serves");
	td_cleanup(&d);
	free(data);
	return harness_done();
}
