/*
 * daemon/server/srv_log.c: rankmapd's log, to stderr in the foreground or to syslog (daemon facility).
 * The destination is chosen once at start-up, before any thread exists. Messages are written under
 * one lock, which a thread about to fork a worker process holds across fork() (srv_log_fork_*), so
 * that the child never inherits syslog's or stderr's internal lock in a taken state.
 * Every message is escaped here (srv_log_escape), whatever its fields hold: a client's request type,
 * host name or file name can never start a line of its own or send a terminal escape.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "srv.h"

static struct {
	int to_stderr;
	int level;
} log_dest = { 1, SRV_LOG_INFO };

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void srv_log_fork_prepare(void)
{
	pthread_mutex_lock(&log_lock);
}

void srv_log_fork_parent(void)
{
	pthread_mutex_unlock(&log_lock);
}

void srv_log_fork_child(void)
{
	pthread_mutex_init(&log_lock, NULL);
	if (!log_dest.to_stderr)
		closelog(); /* its descriptor is closed with the others; reopened by srv_log_child_reopen() */
}

void srv_log_child_reopen(void)
{
	if (!log_dest.to_stderr)
		openlog("rankmapd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void srv_log_open(int foreground, int level)
{
	log_dest.to_stderr = foreground;
	log_dest.level = level;
	if (!foreground)
		openlog("rankmapd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void srv_log_close(void)
{
	if (!log_dest.to_stderr)
		closelog();
}

size_t srv_log_escape(const char *in, char *out, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)in;
	size_t n = 0, k;
	char e[8];

	if (!len)
		return 0;
	for (; *p; p++) {
		if (*p == '\n' || *p == '\r' || *p == '\t') {
			e[0] = '\\', e[1] = *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't', k = 2;
		} else if (*p < 0x20 || *p == 0x7f) {
			e[0] = '\\', e[1] = 'x', e[2] = hex[*p >> 4], e[3] = hex[*p & 15], k = 4;
		} else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) { /* C1 controls U+0080..U+009F (NEL, CSI) */
			p++;
			e[0] = '\\', e[1] = 'u', e[2] = '0', e[3] = '0', e[4] = hex[*p >> 4], e[5] = hex[*p & 15],
			k = 6;
		} else {
			e[0] = (char)*p, k = 1;
		}
		if (n + k >= len)
			break;
		memcpy(out + n, e, k);
		n += k;
	}
	out[n] = '\0';
	return n;
}

void srv_log(int level, const char *fmt, ...)
{
	static const char *const names[] = { "emerg", "alert", "crit", "error", "warning", "notice", "info", "debug" };
	char msg[1024], safe[4 * sizeof(msg)];
	va_list ap;

	if (level > log_dest.level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	srv_log_escape(msg, safe, sizeof(safe));
	pthread_mutex_lock(&log_lock);
	if (!log_dest.to_stderr)
		syslog(level, "%s", safe);
	else
		fprintf(stderr, "rankmapd[%d]: %s: %s\n", (int)getpid(), names[level & 7], safe);
	pthread_mutex_unlock(&log_lock);
}

/* Rate limit of srv_log_refused: lines in the current one-second window, and those not logged. */
static struct {
	pthread_mutex_t lock;
	long long window;
	unsigned logged;
	unsigned long dropped;
} refused = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0 };

/* 1 when a refusal may be logged now; *dropped receives the count to report first (0 if none). */
static int refused_admit(unsigned long *dropped)
{
	long long now = srv_now_ms() / 1000;
	int ok;

	pthread_mutex_lock(&refused.lock);
	*dropped = 0;
	if (now != refused.window) {
		refused.window = now;
		refused.logged = 0;
		*dropped = refused.dropped;
		refused.dropped = 0;
	}
	ok = refused.logged < SRV_LOG_REFUSED_MAX;
	if (ok)
		refused.logged++;
	else
		refused.dropped++;
	pthread_mutex_unlock(&refused.lock);
	return ok;
}

static void refused_line(const char *type, const srv_peer_t *peer, const json_t *resp, unsigned long dropped)
{
	const json_t *e = json_object_get(resp, "error");
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *msg = json_string_value(json_object_get(e, "message"));

	if (dropped)
		srv_log(SRV_LOG_NOTICE, "%lu more refused requests were not logged (at most %d a second)", dropped,
			SRV_LOG_REFUSED_MAX);
	int failed = code && (!strcmp(code, "failed") || !strcmp(code, "internal") || !strcmp(code, "timeout"));

	srv_log(SRV_LOG_NOTICE, "%s %s%s request of uid %u (pid %d): %s: %.300s", failed ? "failed" : "refused",
		type ? type : "a", type ? "" : "n unreadable", peer ? (unsigned)peer->uid : 0u,
		peer ? (int)peer->pid : 0, code ? code : "?", msg ? msg : "");
}

void srv_log_refused(const char *type, const srv_peer_t *peer, const json_t *resp)
{
	unsigned long dropped;

	if (refused_admit(&dropped))
		refused_line(type, peer, resp, dropped);
}

void srv_log_refused_frame(const char *type, const srv_peer_t *peer, const char *frame, size_t len)
{
	unsigned long dropped;
	json_t *resp;

	if (!refused_admit(&dropped))
		return;
	resp = len > 4 ? json_loadb(frame + 4, len - 4, 0, NULL) : NULL;
	refused_line(type, peer, resp, dropped);
	json_decref(resp);
}

long long srv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
