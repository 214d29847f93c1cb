/*
 * daemon/server/srv_log.c: rankmapd's log, to stderr in the foreground or to syslog (daemon facility).
 * The destination is chosen once at start-up, before any thread exists. Messages are written under
 * one lock, which a thread about to fork a worker process holds across fork() (srv_log_fork_*), so
 * that the child never inherits syslog's or stderr's internal lock in a taken state.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
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

void srv_log(int level, const char *fmt, ...)
{
	static const char *const names[] = { "emerg", "alert", "crit", "error", "warning", "notice", "info",
					     "debug" };
	char msg[1024];
	va_list ap;

	if (level > log_dest.level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	if (!log_dest.to_stderr)
		syslog(level, "%s", msg);
	else
		fprintf(stderr, "rankmapd[%d]: %s: %s\n", (int)getpid(), names[level & 7], msg);
	pthread_mutex_unlock(&log_lock);
}

long long srv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
