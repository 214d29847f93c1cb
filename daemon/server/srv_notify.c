/*
 * daemon/server/srv_notify.c: readiness for systemd (Type=notify), without libsystemd.
 *
 * The protocol is sd_notify(3)'s: when the service manager sets NOTIFY_SOCKET, the service sends
 * newline-separated VAR=VALUE assignments ("READY=1", "STATUS=...", "STOPPING=1") in one datagram to
 * that AF_UNIX socket; a path starting with '@' names a socket of the abstract namespace. rankmapd
 * says READY=1 once its socket and TCP listeners accept connections and its workers run, so units
 * ordered after it (Before=slurmd.service in the unit) start only then. Without NOTIFY_SOCKET (run
 * from a shell, or under another supervisor) nothing is sent. The variable is removed from the
 * environment at start, so that worker processes and engines never inherit it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "srv.h"

static struct sockaddr_un notify_addr;
static socklen_t notify_len; /* 0: no service manager to tell */

void srv_notify_init(void)
{
	const char *p = getenv("NOTIFY_SOCKET");
	size_t n;

	notify_len = 0;
	if (!p || (p[0] != '/' && p[0] != '@') || (n = strlen(p)) < 2 || n >= sizeof(notify_addr.sun_path)) {
		if (p)
			srv_log(SRV_LOG_WARNING, "NOTIFY_SOCKET '%.120s' is not a socket path: no readiness sent", p);
		unsetenv("NOTIFY_SOCKET");
		return;
	}
	memset(&notify_addr, 0, sizeof(notify_addr));
	notify_addr.sun_family = AF_UNIX;
	memcpy(notify_addr.sun_path, p, n);
	if (p[0] == '@')
		notify_addr.sun_path[0] = '\0'; /* abstract namespace: no terminating NUL counted */
	else
		n++;
	notify_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	unsetenv("NOTIFY_SOCKET");
}

int srv_notify(const char *state)
{
	int fd, rc;

	if (!notify_len)
		return 0;
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		rc = -1;
	else {
		rc = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (const struct sockaddr *)&notify_addr, notify_len) <
				     0
			     ? -1
			     : 0;
		close(fd);
	}
	if (rc < 0)
		srv_log(SRV_LOG_WARNING, "cannot notify the service manager: %s", strerror(errno));
	return rc;
}
