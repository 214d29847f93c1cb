/*
 * daemon/server/srv_log.c: rankmapd's log, to stderr in the foreground or to syslog (daemon facility).
 * The destination is chosen once at start-up, before any thread exists.
 */
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
	if (!log_dest.to_stderr) {
		syslog(level, "%s", msg);
		return;
	}
	fprintf(stderr, "rankmapd[%d]: %s: %s\n", (int)getpid(), names[level & 7], msg);
}

long long srv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
