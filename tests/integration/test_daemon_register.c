/*
 * Registrations through a real rankmapd:
 *  - a registration of a host the cluster file defines statically replaces its hardware (hosts and
 *    report show the registered PUs and cores), also after a restart, and the static node type it left
 *    empty is gone from the report;
 *  - 40 simultaneous registrations of one host are all saved, and the saved file is exactly one of the
 *    XML texts sent, with no temporary file left.
 * Expected values come from the XML text (PU and Core objects counted with strstr) and the cluster
 * file's synthetic descriptions, never from the daemon's own output.
 */
#include "test_daemon_util.h"

#define NREG 40

/* Objects of a type ("PU", "Core") in a host's XML text, counted independently of hwloc. */
static int count_objs(const char *xmlhost, const char *type)
{
	char *xml = td_xml(xmlhost), pat[64], *p;
	int n = 0;

	snprintf(pat, sizeof(pat), "type=\"%s\"", type);
	for (p = xml; p && (p = strstr(p, pat)); p++)
		n++;
	free(xml);
	return xml ? n : -1;
}

/* The "pus" or "cores" the daemon lists for host, -1 when it does not list it. */
static int host_field(tdaemon_t *d, const char *host, const char *field)
{
	json_t *r = td_call(d->sock, rm_proto_request("hosts", 2)), *h;
	size_t i;
	int n = -1;

	json_array_foreach (json_object_get(r, "hosts"), i, h)
		if (!strcmp(json_string_value(json_object_get(h, "name")), host))
			n = (int)json_integer_value(json_object_get(h, field));
	json_decref(r);
	return n;
}

/* Node types of the report with no host, and whether one has exactly pus PUs. */
static int report_types(tdaemon_t *d, int pus, int *empty)
{
	json_t *r = td_call(d->sock, rm_proto_request("report", 3)), *t;
	size_t i;
	int found = 0;

	*empty = 0;
	json_array_foreach (json_object_get(json_object_get(r, "report"), "node_types"), i, t) {
		if (json_integer_value(json_object_get(t, "hosts")) == 0)
			(*empty)++;
		else if (json_integer_value(json_object_get(t, "pus")) == pus)
			found = 1;
	}
	json_decref(r);
	return found;
}

static void check_static_override(tdaemon_t *d, const char *when)
{
	int pus = count_objs("mirage001", "PU"), cores = count_objs("mirage001", "Core"), empty = 0;

	check(host_field(d, "static01", "pus") == pus && host_field(d, "static01", "cores") == cores,
	      "%s: static01 has the registered hardware, %d PUs and %d cores (got %d, %d)", when, pus, cores,
	      host_field(d, "static01", "pus"), host_field(d, "static01", "cores"));
	check(host_field(d, "static02", "pus") == 4 && host_field(d, "static02", "cores") == 4,
	      "%s: static02 keeps its static hardware (pack:1 core:4 pu:1)", when);
	check(!report_types(d, 2, &empty) && empty == 0,
	      "%s: the report has no node type left from static01's static hardware (%d empty)", when, empty);
}

static void test_static_override(const char *data)
{
	char extra[1024], path[512];
	tdaemon_t d;
	json_t *r;
	FILE *f;

	check(td_setup(&d, NULL) == 0, "temporary directory");
	snprintf(path, sizeof(path), "%s/cluster.conf", d.dir);
	if (!(f = fopen(path, "w"))) {
		fail("cannot write %s", path);
		return;
	}
	fprintf(f, "hwloc = synthetic:pack:1 core:2 pu:1@static01\nhwloc = synthetic:pack:1 core:4 pu:1@static02\n");
	fclose(f);
	snprintf(extra, sizeof(extra), "cluster = %s\nhwloc_dir = %s/daemon/hwloc\n", path, data);
	f = fopen(d.conf, "a");
	fputs(extra, f);
	fclose(f);
	if (td_start(&d, NULL) < 0) {
		fail("rankmapd did not start; log in %s", d.log);
		return;
	}
	check(host_field(&d, "static01", "pus") == 2, "static01 starts with its static 2 PUs");
	r = td_call(d.sock, td_register_req("static01", "mirage001"));
	check(json_is_true(json_object_get(r, "ok")) && json_is_true(json_object_get(r, "saved")),
	      "register of a statically defined host: ok and saved: %s", td_msg(r));
	json_decref(r);
	check_static_override(&d, "after register");
	r = td_call(d.sock, rm_proto_request("reload", 4));
	check(json_is_true(json_object_get(r, "ok")), "reload ok: %s", td_msg(r));
	json_decref(r);
	check_static_override(&d, "after reload");
	check(td_stop(&d, SIGTERM) == 0, "daemon stops");
	check(td_start(&d, NULL) == 0, "daemon restarts");
	check_static_override(&d, "after restart");
	r = td_call(d.sock, td_register_req("bonobo001", "mirage001"));
	check(json_is_true(json_object_get(r, "ok")) &&
		      host_field(&d, "bonobo001", "pus") == count_objs("mirage001", "PU"),
	      "a host of hwloc_dir is overridden too: %s", td_msg(r));
	json_decref(r);
	td_cleanup(&d);
}

/* 40 clients register one host at once, half with one XML, half with another. */
static void test_concurrent(void)
{
	static const char *const xmls[2] = { "mirage001", "bonobo010" };
	char path[512], *want[2], *got;
	pid_t pids[NREG];
	tdaemon_t d;
	size_t len, wlen[2];
	int i, st, saved = 0, answered = 0;

	check(td_setup(&d, "worker_threads = 8\n") == 0, "temporary directory");
	if (td_start(&d, NULL) < 0) {
		fail("rankmapd did not start; log in %s", d.log);
		return;
	}
	for (i = 0; i < NREG; i++) {
		if ((pids[i] = fork()) == 0) {
			json_t *r = td_call(d.sock, td_register_req("same01", xmls[i % 2]));
			_exit(!r                                          ? 3
			      : !json_is_true(json_object_get(r, "ok"))   ? 2
			      : json_is_true(json_object_get(r, "saved")) ? 0
									  : 1);
		}
	}
	for (i = 0; i < NREG; i++) {
		if (pids[i] > 0 && waitpid(pids[i], &st, 0) == pids[i] && WIFEXITED(st)) {
			answered += WEXITSTATUS(st) != 3;
			saved += WEXITSTATUS(st) == 0;
		}
	}
	check(answered == NREG, "all %d registrations answered (%d)", NREG, answered);
	check(saved == NREG, "all %d simultaneous registrations of one host saved (%d)", NREG, saved);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/plafrim/hwloc/%s.xml", harness_data_dir(), xmls[i]);
		want[i] = td_slurp(path, &wlen[i]);
	}
	snprintf(path, sizeof(path), "%s/registrations/same01.xml", d.state);
	got = td_slurp(path, &len);
	check(got && ((len == wlen[0] && !memcmp(got, want[0], len)) || (len == wlen[1] && !memcmp(got, want[1], len))),
	      "the saved registration is exactly one of the XML texts sent (%zu bytes)", len);
	snprintf(path, sizeof(path), "ls -a '%s/registrations' | grep -q tmp", d.state);
	check(system(path) != 0, "no temporary file left in registrations/");
	free(got);
	free(want[0]);
	free(want[1]);
	td_cleanup(&d);
}

int main(void)
{
	char *data = realpath(harness_data_dir(), NULL);

	signal(SIGPIPE, SIG_IGN);
	test_static_override(data ? data : ".");
	test_concurrent();
	free(data);
	return harness_done();
}
