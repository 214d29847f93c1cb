/*
 * Starts a real rankmapd on a temporary socket and state directory and sends every request type:
 * ping, hosts, report, distance, map, order, slurm_topology's host list, register, reload; then the permission check (a client
 * running as nobody), registration surviving kill -9, a failed save, a second instance on the same
 * state directory, and configuration errors naming file and line.
 * Expected values come from the input files (PU counts read from the XML text) or from properties
 * (bijection, cost not above identity, hop counts symmetric), never from the daemon's own output.
 */
#include "test_daemon_util.h"

#include <pwd.h>

static const char *const hosts4[] = { "bonobo001", "bonobo002", "mirage001", "fourmi004" };

/* PUs of a host, counted in its XML text independently of hwloc. */
static int count_pus(const char *host)
{
	char path[512], line[4096];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/plafrim/hwloc/%s.xml", harness_data_dir(), host);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "type=\"PU\""))
			n++;
	fclose(f);
	return n;
}

static json_t *req(const char *type)
{
	return rm_proto_request(type, 42);
}

static void test_ping_hosts(tdaemon_t *d)
{
	json_t *r = td_call(d->sock, req("ping")), *h;
	size_t i, j, found = 0;

	check(r && json_is_true(json_object_get(r, "ok")), "ping ok");
	check(json_integer_value(json_object_get(r, "id")) == 42, "ping echoes the id");
	check(json_integer_value(json_object_get(r, "version")) == 1, "ping has version 1");
	json_decref(r);
	r = td_call(d->sock, req("hosts"));
	check(r && json_is_true(json_object_get(r, "ok")), "hosts ok: %s", td_msg(r));
	json_array_foreach (json_object_get(r, "hosts"), i, h) {
		for (j = 0; j < 4; j++) {
			if (strcmp(json_string_value(json_object_get(h, "name")), hosts4[j]))
				continue;
			found++;
			check(json_integer_value(json_object_get(h, "pus")) == count_pus(hosts4[j]),
			      "%s has %d PUs as in its XML (got %lld)", hosts4[j], count_pus(hosts4[j]),
			      (long long)json_integer_value(json_object_get(h, "pus")));
		}
	}
	check(found == 4, "the 4 hwloc hosts are listed (found %zu)", found);
	json_decref(r);
	r = td_call(d->sock, req("report"));
	check(r && json_is_true(json_object_get(r, "ok")), "report ok: %s", td_msg(r));
	check(json_is_object(json_object_get(r, "daemon")), "report has the daemon's status");
	check(json_integer_value(json_object_get(json_object_get(r, "daemon"), "hosts")) >= 4, "report counts hosts");
	check(json_integer_value(json_object_get(json_object_get(r, "report"), "hosts_with_hardware")) == 4,
	      "cluster report: the 4 hwloc hosts have hardware data");
	json_decref(r);
}

static json_t *distance(tdaemon_t *d, const char *field, json_t *a, json_t *b)
{
	json_t *q = req("distance");

	json_object_set_new(q, field, json_pack("[oo]", a, b));
	return td_call(d->sock, q);
}

static void test_distance(tdaemon_t *d)
{
	json_t *ab = distance(d, "hosts", json_string("bonobo001"), json_string("fourmi004"));
	json_t *ba = distance(d, "hosts", json_string("fourmi004"), json_string("bonobo001"));
	json_t *aa = distance(d, "slots", json_pack("[si]", "bonobo001", 3), json_pack("[si]", "bonobo001", 3));
	json_t *in = distance(d, "slots", json_pack("[si]", "bonobo001", 0), json_pack("[si]", "bonobo001", 7));
	json_t *bad = distance(d, "hosts", json_string("bonobo001"), json_string("nosuchhost"));
	json_t *badpu = distance(d, "slots", json_pack("[si]", "bonobo001", 0), json_pack("[si]", "bonobo001", 999));
	long long hab = json_integer_value(json_object_get(ab, "hops"));

	check(json_is_true(json_object_get(ab, "ok")), "distance between hosts ok: %s", td_msg(ab));
	check(hab >= 2 && hab == json_integer_value(json_object_get(ba, "hops")), "hops symmetric and >= 2 (%lld)",
	      hab);
	check(json_real_value(json_object_get(aa, "distance")) == 0.0, "a slot is at distance 0 from itself");
	check(json_integer_value(json_object_get(aa, "hops")) == 0, "same host: 0 hops");
	check(json_number_value(json_object_get(in, "distance")) > 0 &&
		      json_number_value(json_object_get(in, "distance")) <
			      json_number_value(json_object_get(ab, "distance")),
	      "inside a host is closer than across the fabric");
	check(!strcmp(td_code(bad), RM_ERR_NOT_FOUND) && strstr(td_msg(bad), "nosuchhost"), "unknown host named: %s",
	      td_msg(bad));
	check(!strcmp(td_code(badpu), RM_ERR_NOT_FOUND), "PU out of range refused: %s", td_code(badpu));
	json_decref(ab);
	json_decref(ba);
	json_decref(aa);
	json_decref(in);
	json_decref(bad);
	json_decref(badpu);
}

static int is_perm(const json_t *p, size_t n, size_t nslots)
{
	char seen[4096] = { 0 };
	size_t i;

	if (json_array_size(p) != n || nslots > sizeof(seen))
		return 0;
	for (i = 0; i < n; i++) {
		json_int_t s = json_integer_value(json_array_get(p, i));
		if (s < 0 || (size_t)s >= nslots || seen[s]++)
			return 0;
	}
	return 1;
}

static double slot_distance(tdaemon_t *d, const json_t *slots, json_int_t a, json_int_t b)
{
	json_t *r = distance(d, "slots", json_incref(json_array_get(slots, (size_t)a)),
			     json_incref(json_array_get(slots, (size_t)b)));
	double v = json_number_value(json_object_get(r, "distance"));

	json_decref(r);
	return v;
}

/* 8 ranks: heavy pairs (i, i+4), a light ring. Identity splits every heavy pair across the host. */
static void test_map_pattern(tdaemon_t *d)
{
	json_t *q = req("map"), *edges = json_array(), *r, *perm, *slots;
	double dmin = 1e300;
	int i, j, ok = 1;

	for (i = 0; i < 4; i++)
		json_array_append_new(edges, json_pack("[iif]", i, i + 4, 100.0));
	for (i = 0; i < 8; i++)
		json_array_append_new(edges, json_pack("[iif]", i, (i + 1) % 8, 1.0));
	json_object_set_new(q, "pattern", json_pack("{s:i, s:o}", "n", 8, "edges", edges));
	json_object_set_new(q, "hosts", json_pack("[s]", "bonobo001"));
	json_object_set_new(q, "engine", json_string("treematch"));
	r = td_call(d->sock, q);
	check(r && json_is_true(json_object_get(r, "ok")), "map ok: %s", td_msg(r));
	check(!strcmp(json_string_value(json_object_get(r, "engine")) ?: "", "treematch") &&
		      json_equal(json_object_get(r, "algorithm"), json_object_get(r, "engine")),
	      "the answer names its engine as engine, and as algorithm (the old name) for older clients");
	perm = json_object_get(r, "permutation");
	slots = json_object_get(r, "slots");
	check(json_array_size(slots) == (size_t)count_pus("bonobo001"), "one slot per core of bonobo001");
	check(is_perm(perm, 8, json_array_size(slots)), "permutation is a bijection onto slots");
	check(json_number_value(json_object_get(r, "cost")) < json_number_value(json_object_get(r, "identity_cost")),
	      "cost %g below identity cost %g", json_number_value(json_object_get(r, "cost")),
	      json_number_value(json_object_get(r, "identity_cost")));
	for (i = 0; i < 8; i++)
		for (j = i + 1; j < 8; j++) {
			double v = slot_distance(d, slots, i, j);
			dmin = v < dmin ? v : dmin;
		}
	for (i = 0; i < 4 && json_array_size(perm) == 8; i++)
		ok &= slot_distance(d, slots, json_integer_value(json_array_get(perm, (size_t)i)),
				    json_integer_value(json_array_get(perm, (size_t)i + 4))) == dmin;
	check(ok, "every heavy pair sits at the smallest distance the host offers (%g)", dmin);
	json_decref(r);
}

static void test_map_cart_and_errors(tdaemon_t *d)
{
	json_t *q = req("map"), *r;

	json_object_set_new(q, "cart", json_string("4x2"));
	json_object_set_new(q, "hosts", json_pack("[s]", "mirage001"));
	json_object_set_new(q, "engine", json_string("identity"));
	json_object_set_new(q, "algorithm", json_string("identity"));
	r = td_call(d->sock, q);
	check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST) && strstr(td_msg(r), "'engine' and 'algorithm'"),
	      "engine and its old name algorithm together: refused, both named: %s", td_msg(r));
	json_decref(r);
	q = req("map");

	json_object_set_new(q, "cart", json_string("4x2"));
	json_object_set_new(q, "hosts", json_pack("[s]", "mirage001"));
	r = td_call(d->sock, q);
	check(r && json_is_true(json_object_get(r, "ok")), "map cart ok: %s", td_msg(r));
	check(is_perm(json_object_get(r, "permutation"), 8, json_array_size(json_object_get(r, "slots"))),
	      "cart permutation is a bijection");
	check(json_number_value(json_object_get(r, "cost")) <= json_number_value(json_object_get(r, "identity_cost")),
	      "cart cost not above identity");
	json_decref(r);

	q = req("map");
	json_object_set_new(q, "cart", json_string("4x2"));
	json_object_set_new(q, "pattern", json_pack("{s:i, s:[]}", "n", 2, "edges"));
	json_object_set_new(q, "hosts", json_pack("[s]", "mirage001"));
	r = td_call(d->sock, q);
	check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST) && strstr(td_msg(r), "pattern"), "pattern+cart refused: %s",
	      td_msg(r));
	json_decref(r);

	q = req("map");
	json_object_set_new(q, "pattern", json_pack("{s:i, s:[[iii]]}", "n", 2, "edges", 0, 5, 1));
	json_object_set_new(q, "hosts", json_pack("[s]", "mirage001"));
	r = td_call(d->sock, q);
	check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST) && strstr(td_msg(r), "edges[0]"), "bad edge named: %s",
	      td_msg(r));
	json_decref(r);

	q = req("map");
	json_object_set_new(q, "cart", json_string("64x64"));
	json_object_set_new(q, "hosts", json_pack("[s]", "mirage001"));
	r = td_call(d->sock, q);
	check(r && !json_is_true(json_object_get(r, "ok")), "more ranks than slots refused: %s", td_msg(r));
	json_decref(r);

	q = req("map");
	json_object_set_new(q, "cart", json_string("2x2"));
	json_object_set_new(q, "hosts", json_pack("[s]", "mirage001"));
	json_object_set_new(q, "colour", json_string("blue"));
	r = td_call(d->sock, q);
	check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST) && strstr(td_msg(r), "colour"), "unknown field named: %s",
	      td_msg(r));
	json_decref(r);

	q = req("map");
	json_object_set_new(q, "cart", json_string("2x2"));
	json_object_set_new(q, "hosts", json_pack("[s]", "mirage001"));
	json_object_set_new(q, "time_budget_ms", json_real(1e9));
	r = td_call(d->sock, q);
	check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST) && strstr(td_msg(r), "time_budget_ms"), "huge budget refused: %s",
	      td_msg(r));
	json_decref(r);

	q = req("map");
	json_object_set_new(q, "cart", json_integer(4));
	json_object_set_new(q, "hosts", json_pack("[s]", "mirage001"));
	r = td_call(d->sock, q);
	check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST) && strstr(td_msg(r), "'cart'"), "wrong type named: %s",
	      td_msg(r));
	json_decref(r);
}

/* The compact form gives the same graph, hence the same result, as JSON triples. */
static void test_map_edges_text(tdaemon_t *d)
{
	json_t *a = req("map"), *b = req("map"), *ra, *rb, *e = json_array();
	char text[1024];
	int i, len = 0;

	for (i = 0; i < 8; i++) {
		json_array_append_new(e, json_pack("[iif]", i, (i + 3) % 8, 1.0 + i));
		len += snprintf(text + len, sizeof(text) - (size_t)len, "%d %d %g\n", i, (i + 3) % 8, 1.0 + i);
	}
	json_object_set_new(a, "pattern", json_pack("{s:i, s:o}", "n", 8, "edges", e));
	json_object_set_new(b, "pattern", json_pack("{s:i, s:s}", "n", 8, "edges_text", text));
	json_object_set_new(a, "hosts", json_pack("[s]", "bonobo002"));
	json_object_set_new(b, "hosts", json_pack("[s]", "bonobo002"));
	json_object_set_new(a, "algorithm", json_string("scotch")); /* the engine's old name, still accepted */
	json_object_set_new(b, "engine", json_string("scotch"));
	ra = td_call(d->sock, a);
	rb = td_call(d->sock, b);
	check(json_is_true(json_object_get(rb, "ok")), "edges_text accepted: %s", td_msg(rb));
	check(json_number_value(json_object_get(ra, "identity_cost")) ==
			      json_number_value(json_object_get(rb, "identity_cost")) &&
		      json_equal(json_object_get(ra, "permutation"), json_object_get(rb, "permutation")),
	      "edges_text and JSON edges give the same graph and mapping");
	check(!strcmp(json_string_value(json_object_get(ra, "engine")) ?: "", "scotch") &&
		      !strcmp(json_string_value(json_object_get(rb, "engine")) ?: "", "scotch"),
	      "algorithm (the old name) and engine choose the same engine");
	json_decref(ra);
	json_decref(rb);
	a = req("map");
	json_object_set_new(a, "pattern", json_pack("{s:i, s:s}", "n", 8, "edges_text", "0 1 1\n2 9 1\n"));
	json_object_set_new(a, "hosts", json_pack("[s]", "bonobo002"));
	ra = td_call(d->sock, a);
	check(!strcmp(td_code(ra), RM_ERR_BAD_REQUEST) && strstr(td_msg(ra), "edge 1"), "bad text edge named: %s",
	      td_msg(ra));
	json_decref(ra);
}

static void test_order(tdaemon_t *d)
{
	json_t *q = req("order"), *r, *o;
	int ok = 1, seen[64] = { 0 };
	size_t i;

	json_object_set_new(q, "method", json_string("hilbert"));
	json_object_set_new(q, "dims", json_pack("[iii]", 4, 4, 4));
	r = td_call(d->sock, q);
	check(r && json_is_true(json_object_get(r, "ok")), "order ok: %s", td_msg(r));
	o = json_object_get(r, "order");
	check(json_array_size(o) == 64, "order lists the 64 nodes");
	for (i = 0; i < json_array_size(o); i++) {
		json_int_t n = json_integer_value(json_array_get(o, i));
		ok &= n >= 0 && n < 64 && !seen[n]++;
		if (i) { /* consecutive nodes of a Hilbert curve are neighbours: one hop, no wrap needed */
			json_int_t p = json_integer_value(json_array_get(o, i - 1));
			int dx = abs((int)(n / 16 - p / 16)), dy = abs((int)(n / 4 % 4 - p / 4 % 4)),
			    dz = abs((int)(n % 4 - p % 4));
			ok &= dx + dy + dz == 1;
		}
	}
	check(ok, "hilbert order is a permutation with unit steps");
	json_decref(r);
	q = req("order");
	json_object_set_new(q, "method", json_string("zigzag"));
	json_object_set_new(q, "dims", json_pack("[iii]", 4, 4, 4));
	r = td_call(d->sock, q);
	check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST), "unknown method refused: %s", td_msg(r));
	json_decref(r);
}

static json_t *slurm_topology(tdaemon_t *d, const char *nodes)
{
	json_t *q = req("slurm_topology");

	json_object_set_new(q, "nodes", json_string(nodes));
	return td_call(d->sock, q);
}

/* slurm_topology's nodes, a Slurm host list: empty or malformed is bad_request naming the field; its
 * expansion is bounded (100,000 names, or twice the model's hosts), refused beyond without expanding it
 * (was: "" answered internal, x[0-999999] expanded a million names a request). */
static void test_slurm_topology_nodes(tdaemon_t *d)
{
	static const char *const bad[] = { "", "x[0-999999]", "x[0-999][0-999]", "bad[", "a,,b", "nosuch[1-9]" };
	json_t *r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = slurm_topology(d, bad[i]);
		check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST) && !strncmp(td_msg(r), "nodes: ", 7) &&
			      (i == 0 || i > 2 || strstr(td_msg(r), "more than 100000 host names")),
		      "slurm_topology nodes '%s': bad_request naming the field (%s: %s)", bad[i], td_code(r),
		      td_msg(r));
		json_decref(r);
	}
	{ /* long names: their bytes are bounded too (a 1 KB request made 100 MB of names) */
		char pat[1100];

		memset(pat, 'n', 1000), strcpy(pat + 1000, "[0-99999]");
		r = slurm_topology(d, pat);
		check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST) &&
			      strstr(td_msg(r), "nodes: a host name pattern of 1009"),
		      "a 1,009-character name pattern: bad_request (%s: %.80s)", td_code(r), td_msg(r));
		json_decref(r);
		memset(pat, 'n', 200), strcpy(pat + 200, "[0-99999]");
		r = slurm_topology(d, pat);
		check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST) && strstr(td_msg(r), "MiB of names"),
		      "100,000 names of 205 characters: bad_request, bounded in bytes (%s: %.120s)", td_code(r),
		      td_msg(r));
		json_decref(r);
	}
	r = slurm_topology(d, "nosuch[1-500],bonobo001");
	check(json_is_true(json_object_get(r, "ok")) && json_integer_value(json_object_get(r, "missing")) >= 500,
	      "names the fabric lacks are served, each counted missing (%s, missing %lld)", td_code(r),
	      (long long)json_integer_value(json_object_get(r, "missing")));
	json_decref(r);
	r = td_call(d->sock, req("ping"));
	check(json_is_true(json_object_get(r, "ok")), "the daemon still answers");
	json_decref(r);
}

/* PUs the daemon reports for host, -1 when it does not list it. */
static int host_pus(tdaemon_t *d, const char *host)
{
	json_t *r = td_call(d->sock, req("hosts")), *h;
	size_t i;
	int n = -1;

	json_array_foreach (json_object_get(r, "hosts"), i, h)
		if (!strcmp(json_string_value(json_object_get(h, "name")), host))
			n = (int)json_integer_value(json_object_get(h, "pus"));
	json_decref(r);
	return n;
}

static int log_has(tdaemon_t *d, const char *s)
{
	char *text = td_slurp(d->log, NULL);
	int r = text && strstr(text, s);

	free(text);
	return r;
}

static void test_register_persist(tdaemon_t *d)
{
	json_t *r = td_call(d->sock, td_register_req("newnode01", "fourmi012"));
	long long gen = json_integer_value(json_object_get(r, "generation"));

	check(json_is_true(json_object_get(r, "ok")) && json_is_true(json_object_get(r, "saved")), "register ok: %s",
	      td_msg(r));
	json_decref(r);
	check(host_pus(d, "newnode01") == count_pus("fourmi012"), "registered host in the model with its PUs");
	r = td_call(d->sock, td_register_req("../etc", "fourmi012"));
	check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST) && strstr(td_msg(r), "host"), "bad host name refused: %s",
	      td_msg(r));
	json_decref(r);
	r = req("register");
	json_object_set_new(r, "host", json_string("badxml"));
	json_object_set_new(r, "xml", json_string("<topology><object type=\"Machine\">"));
	r = td_call(d->sock, r);
	check(!strcmp(td_code(r), RM_ERR_BAD_REQUEST) && strstr(td_msg(r), "xml"), "broken XML refused: %s", td_msg(r));
	json_decref(r);
	check(host_pus(d, "badxml") < 0, "a refused registration leaves no trace");

	check(WIFSIGNALED(td_stop(d, SIGKILL)), "daemon killed with SIGKILL");
	check(td_start(d, NULL) == 0, "restart after kill -9 serves (stale socket removed)");
	r = td_call(d->sock, req("ping"));
	check(json_integer_value(json_object_get(r, "generation")) > gen,
	      "model generation continues after restart "
	      "(%lld after %lld)",
	      (long long)json_integer_value(json_object_get(r, "generation")), gen);
	json_decref(r);
	check(host_pus(d, "newnode01") == count_pus("fourmi012"), "registration survived kill -9");
	r = td_call(d->sock, req("reload"));
	check(json_is_true(json_object_get(r, "ok")) && json_integer_value(json_object_get(r, "generation")) >= 2,
	      "reload ok, new generation: %s", td_msg(r));
	json_decref(r);
	check(host_pus(d, "newnode01") == count_pus("fourmi012"), "registration survives reload");
}

/* The registrations directory replaced by a file: saving fails, serving goes on. */
static void test_failed_save(tdaemon_t *d)
{
	char regs[400], moved[400];
	json_t *r;
	int fd;

	snprintf(regs, sizeof(regs), "%s/registrations", d->state);
	snprintf(moved, sizeof(moved), "%s/registrations.moved", d->state);
	if (rename(regs, moved) < 0 || (fd = open(regs, O_CREAT | O_WRONLY, 0600)) < 0) {
		fail("cannot set up the failed-save case: %s", strerror(errno));
		return;
	}
	close(fd);
	r = td_call(d->sock, td_register_req("newnode02", "mirage001"));
	check(json_is_true(json_object_get(r, "ok")) && json_is_false(json_object_get(r, "saved")) &&
		      json_is_string(json_object_get(r, "save_error")),
	      "failed save reported in the response");
	json_decref(r);
	check(host_pus(d, "newnode02") == count_pus("mirage001"), "unsaved registration still serves");
	check(td_ping(d->sock) == 0, "daemon keeps serving after a failed save");
	check(log_has(d, "not saved"), "failed save logged");
	unlink(regs);
	rename(moved, regs);
}

/* A client running as nobody may ping but not register or reload. */
static void test_permissions(tdaemon_t *d)
{
	struct passwd *pw = getpwnam("nobody");
	pid_t pid;
	int st = 0;

	if (!pw || getuid() != 0) {
		fail("permission test needs root and user nobody");
		return;
	}
	pid = fork();
	if (pid == 0) {
		json_t *a, *b;
		int bad = 0;
		if (setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
			_exit(10);
		a = td_call(d->sock, td_register_req("intruder", "mirage001"));
		b = td_call(d->sock, req("reload"));
		bad |= strcmp(td_code(a), RM_ERR_PERMISSION) ? 1 : 0;
		bad |= strcmp(td_code(b), RM_ERR_PERMISSION) ? 2 : 0;
		bad |= td_ping(d->sock) ? 4 : 0;
		_exit(bad);
	}
	waitpid(pid, &st, 0);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "nobody: register/reload denied, ping allowed (status %d)",
	      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	check(host_pus(d, "intruder") < 0, "denied registration not applied");
}

static void test_second_instance(tdaemon_t *d)
{
	tdaemon_t d2 = *d;
	int st = 0;

	snprintf(d2.sock, sizeof(d2.sock), "%s/sock2", d->dir);
	snprintf(d2.log, sizeof(d2.log), "%s/log2", d->dir);
	check(td_start(&d2, &st) < 0 && d2.pid == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1,
	      "second instance on the same state directory exits 1");
	check(log_has(&d2, "another rankmapd"), "and says why");
	if (d2.pid)
		td_stop(&d2, SIGKILL);
	check(td_ping(d->sock) == 0, "first instance unaffected");
}

static void test_config_errors(void)
{
	tdaemon_t d;
	int st = 0;

	td_setup(&d, "max_clients = 0\n");
	check(td_start(&d, &st) < 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1, "out-of-bounds setting: exit 1");
	check(log_has(&d, "rankmapd.conf:4") && log_has(&d, "max_clients"), "error names file, line and setting");
	td_cleanup(&d);
	td_setup(&d, "colour = blue\n");
	check(td_start(&d, &st) < 0 && log_has(&d, "rankmapd.conf:4") && log_has(&d, "unknown setting 'colour'"),
	      "unknown setting named");
	td_cleanup(&d);
	td_setup(&d, NULL);
	memset(d.sock, 'x', sizeof(d.sock) - 1);
	d.sock[0] = '/';
	d.sock[150] = 0;
	check(td_start(&d, &st) < 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1 && log_has(&d, "the limit is 107"),
	      "socket path longer than sun_path refused clearly");
	td_cleanup(&d);
	td_setup(&d, "hwloc_dir = /nonexistent/dir\n");
	check(td_start(&d, &st) < 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1 && log_has(&d, "/nonexistent/dir"),
	      "missing source named");
	td_cleanup(&d);
}

/* A daemon with a torus source and registration disabled; a bad torus file stops the start. */
static void test_torus_source(const char *data)
{
	tdaemon_t d;
	char extra[1024];
	json_t *r, *dims;
	int st = 0;

	snprintf(extra, sizeof(extra), "torus = %s/torus/mesh.conf\nallow_register = no\n", data);
	td_setup(&d, extra);
	check(td_start(&d, NULL) == 0, "daemon with a torus source starts");
	r = req("order");
	json_object_set_new(r, "method", json_string("xyz"));
	r = td_call(d.sock, r);
	check(json_is_true(json_object_get(r, "ok")), "order on the model's torus: %s", td_msg(r));
	dims = json_pack("[iii]", 5, 3, 4);
	check(json_equal(json_object_get(r, "dims"), dims), "the torus of mesh.conf (5x3x4)");
	json_decref(dims);
	check(json_array_size(json_object_get(r, "order")) == 60, "its 60 nodes are ordered");
	json_decref(r);
	r = td_call(d.sock, td_register_req("node1", "mirage001"));
	check(!strcmp(td_code(r), RM_ERR_PERMISSION) && strstr(td_msg(r), "allow_register"),
	      "registration disabled by the config: %s", td_msg(r));
	json_decref(r);
	td_cleanup(&d);
	snprintf(extra, sizeof(extra), "torus = %s/bad/torus-conf/bad-zero-dim.conf\n", data);
	td_setup(&d, extra);
	check(td_start(&d, &st) < 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1 && log_has(&d, "bad-zero-dim.conf:2"),
	      "a bad torus file stops the start, naming file and line");
	td_cleanup(&d);
}

int main(void)
{
	tdaemon_t d;
	char extra[4096], *data = realpath(harness_data_dir(), NULL);

	/* absolute paths: the config's relative paths would be relative to its own directory */
	snprintf(extra, sizeof(extra), "hwloc_dir = %s/daemon/hwloc\nib_file = %s/plafrim/ib/ib-subnet0.txt\n",
		 data ? data : ".", data ? data : ".");
	signal(SIGPIPE, SIG_IGN);
	check(td_setup(&d, extra) == 0, "temporary directory");
	if (td_start(&d, NULL) < 0) {
		fail("rankmapd (%s) did not start; log in %s", td_bin(), d.log);
		return harness_done();
	}
	test_ping_hosts(&d);
	test_distance(&d);
	test_map_pattern(&d);
	test_map_cart_and_errors(&d);
	test_map_edges_text(&d);
	test_order(&d);
	test_slurm_topology_nodes(&d);
	test_permissions(&d);
	test_register_persist(&d);
	test_failed_save(&d);
	test_second_instance(&d);
	check(td_stop(&d, SIGTERM) == 0, "SIGTERM stops cleanly (exit 0)");
	check(access(d.sock, F_OK) < 0, "socket removed at stop");
	td_cleanup(&d);
	test_config_errors();
	test_torus_source(data ? data : ".");
	free(data);
	return harness_done();
}
