/*
 * One slot identity through rankmapd (daemon/PROTOCOL.md, `map`: index, pu_index, null PUs): a real
 * rankmapd on a temporary socket, asked through the client library's typed call (rm_client_map) and by
 * hand (the older target-order answer).
 *  - The answer in the request's order: slots given in a scrambled order get vertex v on the caller's
 *    slot slot[v], the same slot the target-order answer names for v (two answers of one engine).
 *    With treematch and with identity (the target's depth-first order): same slots, same costs.
 *  - OS PU indices (pu_index "os"), unknown PUs (null) and PUs given twice are resolved by the rule the
 *    MPI library documents (free PUs of the host, logical order, request order); the OS numbering is
 *    read from the host's XML file here, not from the daemon.
 *  - Errors name the field: an OS index the host lacks, more slots than PUs, index "request" with hosts,
 *    an unknown pu_index. Engine names are case-insensitive.
 */
#include "test_daemon_util.h"

/* Edges of an 8-vertex pattern: heavy pairs (i, i + 4) and a light ring. */
static uint32_t src8[16], dst8[16];
static double w8[16];

static void pattern8(rm_map_request_t *q)
{
	for (uint32_t i = 0; i < 4; i++)
		src8[i] = i, dst8[i] = i + 4, w8[i] = 100.0;
	for (uint32_t i = 0; i < 8; i++)
		src8[4 + i] = i, dst8[4 + i] = (i + 1) % 8, w8[4 + i] = 1.0;
	q->n = 8, q->nedges = 12, q->src = src8, q->dst = dst8, q->w = w8;
}

/* The OS indices of a host's PUs in logical order (their order in its XML file). Returns their count. */
static int xml_pu_os(const char *host, int *os, int max)
{
	char path[512], line[4096];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/daemon/hwloc/%s.xml", harness_data_dir(), host);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "type=\"PU\" os_index=\"");
		if (p && n < max)
			os[n++] = atoi(p + strlen("type=\"PU\" os_index=\""));
	}
	fclose(f);
	return n;
}

static const rm_slot_t scrambled[8] = {
	{ "bonobo002", 3 }, { "bonobo001", 0 }, { "bonobo002", 0 }, { "bonobo001", 5 },
	{ "bonobo001", 2 }, { "bonobo002", 1 }, { "bonobo001", 1 }, { "bonobo002", 6 }
};

/* Maps scrambled slots with engine, in the request's order (typed) and in the target's (by hand), and
 * checks that both put every vertex on the same slot. Returns the typed answer (the caller frees it). */
static void both_orders(tdaemon_t *d, const char *engine, rm_map_answer_t *a)
{
	rm_client_opts_t o = { .servers = d->sock };
	rm_map_request_t q = { .slots = scrambled, .nslots = 8, .engine = engine };
	rm_error_t err = { 0 };
	json_t *old, *r, *slots, *perm;
	int same = 1;

	pattern8(&q);
	check(rm_client_map(&o, &q, a, NULL, &err) == 0, "%s: typed map of scrambled slots: %s", engine, err.text);
	check(a->slot && !json_object_get(a->resp, "slots"), "%s: the request-order answer leaves the slots out",
	      engine);
	old = rm_map_request_json(&q); /* the same request, answered in the target's order (older clients) */
	json_object_del(old, "index");
	r = td_call(d->sock, old);
	check(r && json_is_true(json_object_get(r, "ok")), "%s: target-order map ok: %s", engine, td_msg(r));
	slots = json_object_get(r, "slots");
	perm = json_object_get(r, "permutation");
	for (uint32_t v = 0; a->slot && v < 8 && json_array_size(perm) == 8; v++) {
		json_t *s = json_array_get(slots, (size_t)json_integer_value(json_array_get(perm, v)));
		const rm_slot_t *mine = &scrambled[a->slot[v]];

		same &= !strcmp(json_string_value(json_array_get(s, 0)), mine->host) &&
			json_integer_value(json_array_get(s, 1)) == mine->pu;
	}
	check(same && json_array_size(perm) == 8,
	      "%s: vertex v runs on the caller's slot slot[v], the slot the target-order answer names", engine);
	check(json_number_value(json_object_get(r, "cost")) == a->cost &&
		      json_number_value(json_object_get(r, "identity_cost")) == a->given_cost,
	      "%s: both answers cost the same (%g, %g)", engine, json_number_value(json_object_get(r, "cost")),
	      a->cost);
	json_decref(r);
}

static void test_request_order(tdaemon_t *d)
{
	rm_client_opts_t o = { .servers = d->sock };
	rm_map_request_t q = { .slots = scrambled, .nslots = 8, .engine = "TreeMatch" };
	rm_map_answer_t a;
	rm_error_t err = { 0 };
	int same = 1;

	both_orders(d, "treematch", &a);
	for (uint32_t i = 0; a.slot && i < 4; i++)
		same &= !strcmp(scrambled[a.slot[i]].host, scrambled[a.slot[i + 4]].host);
	check(a.slot && same, "every heavy pair shares a host");
	rm_map_answer_free(&a);
	both_orders(d, "identity", &a); /* the target's depth-first order, whatever the order given */
	rm_map_answer_free(&a);

	pattern8(&q);
	check(rm_client_map(&o, &q, &a, NULL, &err) == 0 && !strcmp(a.engine, "treematch"),
	      "engine names are case-insensitive: TreeMatch is %s (%s)", a.engine, err.text);
	rm_map_answer_free(&a);
}

static void test_pu_resolution(tdaemon_t *d)
{
	rm_client_opts_t o = { .servers = d->sock };
	int os[64], n = xml_pu_os("bonobo001", os, 64);
	rm_slot_t s[4] = {
		{ "bonobo001", 0 }, { "bonobo001", RM_SLOT_ANY }, { "bonobo001", 0 }, { "bonobo001", RM_SLOT_ANY }
	};
	rm_map_request_t q = { .slots = s, .nslots = 4, .pu_index = RM_SLOT_PU_OS, .engine = "identity" };
	rm_map_answer_t a;
	rm_error_t err = { 0 };

	check(n >= 4, "bonobo001's XML lists %d PUs", n);
	if (n < 4)
		return;
	s[0].pu = s[2].pu = os[3]; /* logical PU 3, by its OS index, twice */
	uint32_t src[2] = { 0, 2 }, dst[2] = { 1, 3 };
	double w[2] = { 1, 1 };

	q.n = 4, q.nedges = 2, q.src = src, q.dst = dst, q.w = w;
	check(rm_client_map(&o, &q, &a, NULL, &err) == 0, "OS indices, null and shared PUs: %s", err.text);
	check(a.pu_os && a.pu_os[0] == os[3] && a.pu_os[1] == os[0] && a.pu_os[2] == os[1] && a.pu_os[3] == os[2],
	      "resolved: the PU given, then the free PUs in logical order, in request order (OS %d %d %d %d; got "
	      "%d %d %d %d)",
	      os[3], os[0], os[1], os[2], a.pu_os ? a.pu_os[0] : -9, a.pu_os ? a.pu_os[1] : -9,
	      a.pu_os ? a.pu_os[2] : -9, a.pu_os ? a.pu_os[3] : -9);
	rm_map_answer_free(&a);

	s[0].pu = 4096;
	rm_error_clear(&err);
	check(rm_client_map(&o, &q, &a, NULL, &err) < 0 && !strcmp(err.source, RM_ERR_NOT_FOUND) &&
		      strstr(err.text, "bonobo001") && strstr(err.text, "OS index 4096"),
	      "an OS index the host lacks is named: %s: %s", err.source, err.text);
	rm_map_answer_free(&a);

	rm_slot_t many[65];
	for (int i = 0; i <= n && i < 65; i++)
		many[i] = (rm_slot_t){ "bonobo001", RM_SLOT_ANY };
	q.slots = many, q.nslots = (size_t)n + 1;
	rm_error_clear(&err);
	check(rm_client_map(&o, &q, &a, NULL, &err) < 0 && !strcmp(err.source, RM_ERR_BAD_REQUEST) &&
		      strstr(err.text, "more slots on host bonobo001"),
	      "more slots than PUs is refused, naming the host: %s", err.text);
	rm_map_answer_free(&a);
}

static void test_errors(tdaemon_t *d)
{
	json_t *r, *q = rm_proto_request("map", 7);

	json_object_set_new(q, "cart", json_string("2x2"));
	json_object_set_new(q, "hosts", json_pack("[s]", "bonobo001"));
	json_object_set_new(q, "index", json_string("request"));
	r = td_call(d->sock, q);
	check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST) && strstr(td_msg(r), "index"), "index request with hosts: %s",
	      td_msg(r));
	json_decref(r);
	q = rm_proto_request("map", 8);
	json_object_set_new(q, "cart", json_string("2x2"));
	json_object_set_new(
		q, "slots",
		json_pack("[[si][si][si][si]]", "bonobo001", 0, "bonobo001", 1, "bonobo001", 2, "bonobo001", 3));
	json_object_set_new(q, "pu_index", json_string("physical"));
	r = td_call(d->sock, q);
	check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST) && strstr(td_msg(r), "pu_index"), "unknown pu_index: %s",
	      td_msg(r));
	json_decref(r);
	/* bonobo003 is in the fabric, with no hardware data: a PU far beyond anything, and a null one (which
	 * makes the daemon look for free PUs), are refused naming the host, and the daemon keeps serving */
	static const long far[] = { 40, 2000000000 };
	for (size_t k = 0; k < sizeof(far) / sizeof(far[0]); k++) {
		q = rm_proto_request("map", 9);
		json_object_set_new(q, "cart", json_string("2"));
		json_object_set_new(q, "slots", json_pack("[[si][sn]]", "bonobo003", (int)far[k], "bonobo003"));
		r = td_call(d->sock, q);
		check(r && !strcmp(td_code(r), RM_ERR_BAD_REQUEST) && strstr(td_msg(r), "bonobo003") &&
			      strstr(td_msg(r), "no hardware data"),
		      "a host with no hardware data, PU %ld and null: refused naming it (%s)", far[k],
		      r ? td_msg(r) : "no answer");
		json_decref(r);
	}
	q = rm_proto_request("ping", 10);
	r = td_call(d->sock, q);
	check(r && json_is_true(json_object_get(r, "ok")), "the daemon still answers after them");
	json_decref(r);
}

int main(void)
{
	tdaemon_t d;
	char extra[4096], *data = realpath(harness_data_dir(), NULL);

	snprintf(extra, sizeof(extra), "hwloc_dir = %s/daemon/hwloc\nib_file = %s/plafrim/ib/ib-subnet0.txt\n",
		 data ? data : ".", data ? data : ".");
	signal(SIGPIPE, SIG_IGN);
	check(td_setup(&d, extra) == 0, "temporary directory");
	if (td_start(&d, NULL) < 0) {
		fail("rankmapd (%s) did not start; log in %s", td_bin(), d.log);
		return harness_done();
	}
	test_request_order(&d);
	test_pu_resolution(&d);
	test_errors(&d);
	check(td_stop(&d, SIGTERM) == 0, "SIGTERM stops cleanly (exit 0)");
	td_cleanup(&d);
	free(data);
	return harness_done();
}
