/*
 * tests/integration/test_daemon_hardening.c: three hardening checks, each against a real rankmapd.
 *  1. Log lines: a client's newline, ESC, other C0 bytes, DEL and C1 controls in the fields that reach
 *     the log (request type, map engine, host names, refused frames parsed by the loop and by a
 *     worker) are escaped: every line of the log starts with the daemon's prefix and holds no control
 *     byte; srv_log_escape itself on every byte value, and a short buffer never splits an escape.
 *  2. The state directory: owned by another user, group- or world-writable (the directory, its
 *     registrations/ subdirectory, the lock file, a parent directory without the sticky bit) makes
 *     rankmapd refuse to start, exit 1, with an error naming the path, the owner and the mode; owned by
 *     root with mode 0700 (under /tmp, sticky) it starts.
 *  3. A pattern larger than pattern_quota (5.6 MB against the default 4 MiB, as in the 15.8 MB)
 *     is refused with bad_request naming the quota, and the user's patterns stored before are all
 *     still there; a pattern within the quota still evicts the least recently used as before.
 */
#include <pwd.h>

#include "test_daemon_util.h"
#include "rm_pattern.h"
#include "daemon/server/srv_log.c"

/* ---- 1. log lines ------------------------------------------------------------------------------ */

static void test_escape_function(void)
{
	char in[2], out[16], small[4], big[300];
	int c, bad = 0;

	for (c = 1; c < 256; c++) {
		in[0] = (char)c, in[1] = 0;
		srv_log_escape(in, out, sizeof(out));
		if (c < 0x20 || c == 0x7f)
			bad += out[0] != '\\' || strlen(out) < 2;
		else
			bad += strcmp(out, in) != 0;
		for (const char *p = out; *p; p++)
			bad += (unsigned char)*p < 0x20 || *p == 0x7f;
	}
	check(!bad, "every C0 byte and DEL escaped, every other byte kept (%d wrong)", bad);
	srv_log_escape("a\nb\x1b[31mc\x7f\t\r", big, sizeof(big));
	check(!strcmp(big, "a\\nb\\x1b[31mc\\x7f\\t\\r"), "escapes: %s", big);
	srv_log_escape("x\xc2\x85y\xc2\x9b\xc3\xa9", big, sizeof(big));
	check(!strcmp(big, "x\\u0085y\\u009b\xc3\xa9"), "UTF-8 C1 controls escaped, other characters kept: %s", big);
	srv_log_escape("ab\n", small, sizeof(small));
	check(!strcmp(small, "ab"), "a short buffer is cut before an escape, never inside one: '%s'", small);
}

/* Every line of the log file: the daemon's prefix, no control byte. Returns the number of bad lines. */
static int log_lines_bad(const char *path, int *nlines, char *first_bad, size_t len)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int bad = 0;

	*nlines = 0;
	if (!f)
		return 1;
	while ((n = getline(&line, &cap, f)) > 0) {
		int b = 0;

		++*nlines;
		if (line[n - 1] == '\n')
			line[--n] = 0;
		b = strncmp(line, "rankmapd", 8) != 0;
		for (ssize_t i = 0; i < n; i++)
			b |= (unsigned char)line[i] < 0x20 || line[i] == 0x7f ||
			     ((unsigned char)line[i] == 0xc2 && i + 1 < n && (unsigned char)line[i + 1] >= 0x80 &&
			      (unsigned char)line[i + 1] <= 0x9f);
		if (b && !bad++)
			snprintf(first_bad, len, "%s", line);
	}
	free(line);
	fclose(f);
	return bad;
}

static json_t *map_with(const char *algo, const char *host)
{
	json_t *q = rm_proto_request("map", 3);

	json_object_set_new(q, "cart", json_string("2x2"));
	json_object_set_new(q, "hosts", json_pack("[s]", host));
	json_object_set_new(q, "engine", json_string(algo));
	return q;
}

static void test_log_lines(const char *data)
{
	static const char *const evil[] = { "x\nrankmapd[1]: notice: forged line",
					    "\x1b[2J\x1b[31mred",
					    "a\rb",
					    "c\x01\x02\x07\x08\x0b\x0c\x1f",
					    "del\x7f",
					    "nel\xc2\x85line" };
	char extra[600], first[2048] = "", pad[1200];
	tdaemon_t d;
	size_t i;
	int lines = 0, bad;
	FILE *f;

	snprintf(extra, sizeof(extra), "hwloc_dir = %s/daemon/hwloc\nlog_level = debug\n", data);
	if (td_setup(&d, extra) < 0 || td_start(&d, NULL) < 0) {
		fail("rankmapd did not start");
		td_cleanup(&d);
		return;
	}
	memset(pad, 'p', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = 0;
	for (i = 0; i < sizeof(evil) / sizeof(evil[0]); i++) {
		json_t *q = rm_proto_request(evil[i], 1), *big;

		json_decref(td_call(d.sock, q));                       /* the type, parsed by the loop */
		big = rm_proto_request(evil[i], 2);                    /* the same past 512 bytes: parsed by */
		json_object_set_new(big, "padding", json_string(pad)); /* a worker */
		json_decref(td_call(d.sock, big));
		json_decref(td_call(d.sock, map_with(evil[i], "bonobo001"))); /* the engine */
		json_decref(td_call(d.sock, map_with("treematch", evil[i]))); /* a host name */
		usleep(1100000); /* refusals are logged at most 10 a second */
	}
	td_stop(&d, SIGTERM);
	bad = log_lines_bad(d.log, &lines, first, sizeof(first));
	check(lines >= 10 && !bad, "%d log lines, each one line of the daemon's with no control byte (%d bad: %s)",
	      lines, bad, first);
	if ((f = fopen(d.log, "r"))) {
		char buf[1 << 16];
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);

		buf[n] = 0;
		fclose(f);
		check(strstr(buf, "x\\nrankmapd[1]: notice: forged line") && strstr(buf, "\\x1b[2J") &&
			      strstr(buf, "a\\rb") && strstr(buf, "c\\x01\\x02\\x07") && strstr(buf, "del\\x7f") &&
			      strstr(buf, "nel\\u0085line"),
		      "the fields are logged, escaped");
	} else {
		fail("cannot read %s", d.log);
	}
	td_cleanup(&d);
}

/* ---- 2. the state directory ------------------------------------------------------------------------ */

/* Starts rankmapd on d (state directory prepared by the caller); returns 0 when it served, else its exit
 * status with the log's text in log. */
static int start_state(tdaemon_t *d, char *log, size_t len)
{
	int st = 0;
	FILE *f;

	log[0] = 0;
	if (td_start(d, &st) == 0) {
		td_stop(d, SIGTERM);
		return 0;
	}
	if ((f = fopen(d->log, "r"))) {
		size_t n = fread(log, 1, len - 1, f);
		log[n] = 0;
		fclose(f);
	}
	truncate(d->log, 0);
	return d->pid == 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_state_dir(const char *data)
{
	struct passwd *nobody = getpwnam("nobody");
	char extra[600], log[8192], path[400], want[200];
	tdaemon_t d;
	int rc;

	if (geteuid() != 0 || !nobody) {
		skip("the state directory checks need root and user nobody (run the suite as root)");
		return;
	}
	snprintf(extra, sizeof(extra), "hwloc_dir = %s/daemon/hwloc\n", data);
	if (td_setup(&d, extra) < 0) {
		fail("setup");
		return;
	}
	mkdir(d.state, 0755);
	chown(d.state, nobody->pw_uid, nobody->pw_gid);
	rc = start_state(&d, log, sizeof(log));
	snprintf(want, sizeof(want), "owned by uid %u (nobody) with mode 0755", (unsigned)nobody->pw_uid);
	check(rc == 1 && strstr(log, d.state) && strstr(log, want),
	      "state_dir owned by nobody: refused, exit 1, naming path, owner and mode (rc %d): %s", rc, log);
	chown(d.state, 0, 0);
	chmod(d.state, 0777);
	rc = start_state(&d, log, sizeof(log));
	check(rc == 1 && strstr(log, d.state) && strstr(log, "uid 0 (root) with mode 0777"),
	      "world-writable state_dir: refused (rc %d): %s", rc, log);
	chmod(d.state, 0770);
	rc = start_state(&d, log, sizeof(log));
	check(rc == 1 && strstr(log, "mode 0770"), "group-writable state_dir: refused (rc %d)", rc);
	chmod(d.state, 0700);
	snprintf(path, sizeof(path), "%s/registrations", d.state);
	mkdir(path, 0700);
	chown(path, nobody->pw_uid, nobody->pw_gid);
	rc = start_state(&d, log, sizeof(log));
	check(rc == 1 && strstr(log, path) && strstr(log, "(nobody)"),
	      "registrations/ owned by nobody: refused, naming it (rc %d): %s", rc, log);
	chown(path, 0, 0);
	snprintf(path, sizeof(path), "%s/rankmapd.lock", d.state);
	close(open(path, O_CREAT | O_WRONLY, 0644));
	chown(path, nobody->pw_uid, nobody->pw_gid);
	rc = start_state(&d, log, sizeof(log));
	check(rc == 1 && strstr(log, path) && strstr(log, "(nobody)"),
	      "a lock file planted by nobody: refused, naming it (rc %d): %s", rc, log);
	chown(path, 0, 0);
	rc = start_state(&d, log, sizeof(log));
	check(rc == 0, "owned by root, mode 0700: rankmapd starts (rc %d): %s", rc, log);
	snprintf(path, sizeof(path), "%s/p", d.dir); /* a good state directory inside nobody's directory */
	mkdir(path, 0755);
	chown(path, nobody->pw_uid, nobody->pw_gid);
	snprintf(d.state, sizeof(d.state), "%s/p/state", d.dir);
	rc = start_state(&d, log, sizeof(log));
	check(rc == 1 && strstr(log, "its parent") && strstr(log, path) && strstr(log, "(nobody)"),
	      "a parent directory owned by nobody: refused, naming it (rc %d): %s", rc, log);
	chown(path, 0, 0);
	chmod(path, 0777);
	rc = start_state(&d, log, sizeof(log));
	check(rc == 1 && strstr(log, "mode 0777"), "a world-writable parent without the sticky bit: refused (rc %d)",
	      rc);
	chmod(path, 01777);
	rc = start_state(&d, log, sizeof(log));
	check(rc == 0, "a sticky world-writable parent (as /tmp) is fine (rc %d): %s", rc, log);
	td_cleanup(&d);
}

/* ---- 3. a pattern larger than the quota -------------------------------------------------------------- */

/* A graph pattern of uid 0 with nedges entries (order distinguishes keys). */
static char *pattern_text(uint32_t order, size_t nedges)
{
	rm_pattern_key_t k = { .uid = 0, .order = order };
	rm_pattern_t *p;
	char *t;
	size_t i;

	strcpy(k.program, "build-id:feed");
	strcpy(k.fn, "MPI_Graph_create");
	rm_pattern_shape_graph(&k, (uint32_t)nedges + 1, nedges, 42);
	if (!(p = rm_pattern_new(&k, nedges)))
		return NULL;
	p->runs = 1, p->ranks = (uint32_t)nedges + 1;
	for (i = 0; i < nedges; i++) {
		p->ends[2 * i] = (uint32_t)i, p->ends[2 * i + 1] = (uint32_t)i + 1;
		p->edge[2 * i] = 1000.0 + (double)i, p->edge[2 * i + 1] = 1;
	}
	t = rm_pattern_format(p, NULL);
	rm_pattern_free(p);
	return t;
}

static json_t *put(const char *sock, const char *text)
{
	json_t *q = rm_proto_request("pattern_put", 4);

	json_object_set_new(q, "pattern", json_string(text));
	return td_call(sock, q);
}

static size_t count_patterns(const char *sock)
{
	json_t *r = td_call(sock, rm_proto_request("pattern_list", 5));
	size_t n = json_array_size(json_object_get(r, "patterns"));

	json_decref(r);
	return n;
}

static void test_pattern_quota(const char *data)
{
	char extra[600], *small1 = pattern_text(0, 100), *small2 = pattern_text(1, 100),
			 *huge = pattern_text(2, 200000);
	tdaemon_t d;
	json_t *r;

	snprintf(extra, sizeof(extra), "hwloc_dir = %s/daemon/hwloc\n", data); /* pattern_quota: the default 4M */
	if (!small1 || !small2 || !huge || td_setup(&d, extra) < 0 || td_start(&d, NULL) < 0) {
		fail("setup");
		goto out;
	}
	check(strlen(huge) > (4u << 20), "the large pattern is %zu bytes, over the 4 MiB quota", strlen(huge));
	r = put(d.sock, small1);
	check(!strcmp(td_code(r), "ok"), "a small pattern is stored (%s)", td_msg(r));
	json_decref(r);
	r = put(d.sock, small2);
	json_decref(r);
	check(count_patterns(d.sock) == 2, "two patterns stored");
	r = put(d.sock, huge);
	check(!strcmp(td_code(r), "bad_request") && strstr(td_msg(r), "pattern_quota") &&
		      strstr(td_msg(r), "4194304 bytes"),
	      "a pattern larger than pattern_quota: bad_request naming the quota (%s: %s)", td_code(r), td_msg(r));
	json_decref(r);
	check(count_patterns(d.sock) == 2, "the patterns stored before are all kept (%zu)", count_patterns(d.sock));
	td_stop(&d, SIGTERM);
	td_cleanup(&d);
out:
	free(small1), free(small2), free(huge);
}

int main(void)
{
	char *data = realpath(harness_data_dir(), NULL);

	signal(SIGPIPE, SIG_IGN);
	test_escape_function();
	test_log_lines(data ? data : ".");
	test_state_dir(data ? data : ".");
	test_pattern_quota(data ? data : ".");
	free(data);
	return harness_done();
}
