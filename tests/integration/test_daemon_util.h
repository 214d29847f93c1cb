/*
 * tests/integration/test_daemon_util.h: starting a real rankmapd on a temporary socket and state directory
 * for the daemon tests, raw socket helpers, and clean-up (the daemon is killed by its PID).
 */
#ifndef RANKMAP_TEST_DAEMON_UTIL_H
#define RANKMAP_TEST_DAEMON_UTIL_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "tests/harness.h"
#include "rm_client.h"

typedef struct tdaemon {
	char dir[256]; /* temporary directory: conf, sock, state/, log */
	char conf[300], sock[300], state[300], log[300];
	pid_t pid;
	int nofile; /* > 0: the daemon's open-file limit (soft and hard) */
} tdaemon_t;

static inline const char *td_bin(void)
{
	static char path[512];
	const char *b = getenv("B");

	snprintf(path, sizeof(path), "%s/rankmapd", b && *b ? b : "build");
	return path;
}

/* Creates the temporary directory and writes the config (extra lines appended). */
static inline int td_setup(tdaemon_t *d, const char *extra)
{
	FILE *f;

	memset(d, 0, sizeof(*d));
	snprintf(d->dir, sizeof(d->dir), "/tmp/rankmap-dtest.XXXXXX");
	if (!mkdtemp(d->dir))
		return -1;
	chmod(d->dir, 0755);
	snprintf(d->conf, sizeof(d->conf), "%s/rankmapd.conf", d->dir);
	snprintf(d->sock, sizeof(d->sock), "%s/sock", d->dir);
	snprintf(d->state, sizeof(d->state), "%s/state", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/log", d->dir);
	if (!(f = fopen(d->conf, "w")))
		return -1;
	fprintf(f, "# written by %s\nsocket_mode = 0666\nworker_threads = 2\n%s\n", __FILE__, extra ? extra : "");
	fclose(f);
	return 0;
}

static inline int td_ping(const char *sock)
{
	json_t *resp = NULL;
	rm_error_t err = { 0 };
	int rc = rm_client_call(sock, rm_proto_request("ping", 7), &resp, 2000, &err);

	json_decref(resp);
	return rc;
}

/* Starts rankmapd (foreground, log to d->log) and waits until it answers ping. Returns 0 or -1
 * (d->pid is then 0 when the daemon exited; its exit status in *status if non-NULL). */
static inline int td_start(tdaemon_t *d, int *status)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int i, st;

	d->pid = fork();
	if (d->pid < 0)
		return -1;
	if (d->pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (d->nofile > 0) {
			struct rlimit rl = { (rlim_t)d->nofile, (rlim_t)d->nofile };
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		execl(td_bin(), "rankmapd", "--config", d->conf, "--socket", d->sock, "--state-dir", d->state,
		      "--foreground", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 1500; i++) {
		if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
			d->pid = 0;
			if (status)
				*status = st;
			return -1;
		}
		if (td_ping(d->sock) == 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

/* Stops the daemon: sig (SIGTERM or SIGKILL), then waits. Returns the wait status. */
static inline int td_stop(tdaemon_t *d, int sig)
{
	int st = 0;

	if (d->pid > 0) {
		kill(d->pid, sig);
		waitpid(d->pid, &st, 0);
		d->pid = 0;
	}
	return st;
}

static inline void td_cleanup(tdaemon_t *d)
{
	char cmd[400];

	td_stop(d, SIGKILL);
	if (getenv("RANKMAP_KEEP_TMP"))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", d->dir);
}

/* One request (stolen) through the client library; returns the response (ok or not) or NULL. */
static inline json_t *td_call(const char *sock, json_t *req)
{
	json_t *resp = NULL;
	rm_error_t err = { 0 };

	rm_client_call(sock, req, &resp, 60000, &err); /* generous: sanitized builds on a loaded machine */
	return resp;
}

static inline const char *td_code(const json_t *resp)
{
	const char *c = json_string_value(json_object_get(json_object_get(resp, "error"), "code"));
	return c ? c : (json_is_true(json_object_get(resp, "ok")) ? "ok" : "?");
}

static inline const char *td_msg(const json_t *resp)
{
	const char *m = json_string_value(json_object_get(json_object_get(resp, "error"), "message"));
	return m ? m : "";
}

static inline int td_raw_connect(const char *sock)
{
	return rm_client_connect(sock, 2000, NULL);
}

/* Sends all of buf on a (non-blocking) socket, waiting up to 5 s for room. */
static inline int td_send_raw(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	struct pollfd pf = { .fd = fd, .events = POLLOUT };
	ssize_t w;

	while (len) {
		w = send(fd, p, len, MSG_NOSIGNAL);
		if (w > 0) {
			p += w;
			len -= (size_t)w;
		} else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (poll(&pf, 1, 5000) <= 0)
				return -1;
		} else {
			return -1;
		}
	}
	return 0;
}

/* Sends a frame with the given payload text. */
static inline int td_send_text(int fd, const char *text)
{
	size_t n = strlen(text);
	unsigned char h[4] = { (unsigned char)(n >> 24), (unsigned char)(n >> 16), (unsigned char)(n >> 8),
			       (unsigned char)n };

	if (td_send_raw(fd, h, 4) < 0)
		return -1;
	return td_send_raw(fd, text, n);
}

/* Waits for EOF on fd (the daemon closed it) within ms, discarding data. Returns 1 on EOF. */
static inline int td_eof(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char b[256];
	ssize_t r;

	for (;;) {
		if (poll(&p, 1, ms) <= 0)
			return 0;
		r = recv(fd, b, sizeof(b), MSG_DONTWAIT);
		if (r == 0)
			return 1;
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			return errno == ECONNRESET;
	}
}

/* The whole file at path, NUL-terminated, in a buffer the caller frees; its length in *len if non-NULL.
 * NULL when it cannot be read. */
static inline char *td_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (len)
		*len = 0;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = n < 0 ? NULL : calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf && len)
		*len = (size_t)n;
	return buf;
}

/* The text of tests/data/plafrim/hwloc/<xmlhost>.xml (the caller frees it), NULL when unreadable. */
static inline char *td_xml(const char *xmlhost)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/plafrim/hwloc/%s.xml", harness_data_dir(), xmlhost);
	return td_slurp(path, NULL);
}

/* A new "register" request (the caller owns it) filing the XML of xmlhost under the name host; an
 * unreadable XML is sent as "" (the daemon must refuse it). */
static inline json_t *td_register_req(const char *host, const char *xmlhost)
{
	json_t *q = rm_proto_request("register", 1);
	char *xml = td_xml(xmlhost);

	json_object_set_new(q, "host", json_string(host));
	json_object_set_new(q, "xml", json_string(xml ? xml : ""));
	free(xml);
	return q;
}

#endif
