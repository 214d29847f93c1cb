/*
 * daemon/client/client.c: connecting to rankmapd's Unix socket and one request/response exchange on a
 * connected socket, with timeouts and without SIGPIPE (see rm_client.h). Server lists, TCP and MUNGE
 * are in client_net.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "rm_client.h"

/* How long a client whose send was cut off waits for the frame that says why (it is already sent). */
#define REFUSAL_WAIT_MS 1000

const char *rm_client_socket_from_env(void)
{
	const char *s = getenv(RM_SERVER_ENV);

	if (!s || !*s)
		s = getenv(RM_SOCKET_ENV);
	return s && *s ? s : NULL;
}

const char *rm_client_munge_socket_from_env(void)
{
	const char *s = getenv(RM_MUNGE_SOCKET_ENV);

	return s && *s ? s : NULL;
}

/* Waits for a non-blocking connect() to finish. */
static int connect_wait(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int r, soerr = 0;
	socklen_t sl = sizeof(soerr);

	do
		r = poll(&p, 1, timeout_ms < 0 ? -1 : timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		errno = ETIMEDOUT;
	if (r <= 0)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		return -1;
	if (soerr) {
		errno = soerr;
		return -1;
	}
	return 0;
}

/* connect(): EINPROGRESS waits for completion; EAGAIN (listen backlog full) retries until timeout. */
static int connect_retry(int fd, const struct sockaddr_un *sa, int timeout_ms)
{
	struct timespec ts = { 0, 2000000 };
	int waited = 0;

	for (;;) {
		if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
			return 0;
		if (errno == EINPROGRESS)
			return connect_wait(fd, timeout_ms);
		if (errno != EAGAIN && errno != EINTR)
			return -1;
		if (timeout_ms >= 0 && waited >= timeout_ms) {
			errno = ETIMEDOUT;
			return -1;
		}
		nanosleep(&ts, NULL);
		waited += 2;
	}
}

int rm_client_connect(const char *socket_path, int timeout_ms, rm_error_t *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, e;

	if (!socket_path || !*socket_path) {
		errno = EINVAL;
		return rm_error_set(err, "socket", 0, 0, "no socket path given");
	}
	if (strlen(socket_path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return rm_error_set(err, socket_path, 0, 0, "socket path longer than %zu bytes",
				    sizeof(sa.sun_path) - 1);
	}
	memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		e = errno;
		rm_error_set(err, socket_path, 0, 0, "socket: %s", strerror(e));
		errno = e;
		return -1;
	}
	if (connect_retry(fd, &sa, timeout_ms) == 0)
		return fd;
	e = errno;
	close(fd);
	rm_error_set(err, socket_path, 0, 0, "cannot connect to rankmapd: %s", strerror(e));
	errno = e;
	return -1;
}

/* The daemon may refuse a client (a "busy" frame, then close) before it has sent all its request: the
 * send fails with EPIPE or ECONNRESET, but the frame that says why is waiting to be read. Returns 0
 * with *response that frame, or -1 (errno kept). Waits at most REFUSAL_WAIT_MS, and not beyond timeout_ms. */
static int refused_while_sending(int fd, json_t **response, int timeout_ms)
{
	int e = errno;

	if (e == EPIPE || e == ECONNRESET) {
		if (timeout_ms < 0 || timeout_ms > REFUSAL_WAIT_MS)
			timeout_ms = REFUSAL_WAIT_MS;
		*response = rm_frame_recv(fd, RM_FRAME_MAX_DEFAULT, timeout_ms, NULL);
		if (*response)
			return 0;
	}
	errno = e;
	return -1;
}

int rm_client_exchange(int fd, const json_t *request, json_t **response, int timeout_ms, rm_error_t *err)
{
	struct timespec t0, t1;
	rm_error_t serr = { 0 };
	int left = timeout_ms, e;

	*response = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (rm_frame_send(fd, request, timeout_ms, &serr) < 0) {
		if (refused_while_sending(fd, response, timeout_ms) == 0)
			return 0;
		e = errno;
		rm_error_set(err, serr.source, serr.line, serr.column, "%s", serr.text);
		errno = e;
		return -1;
	}
	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = timeout_ms - (int)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
		if (left < 1)
			left = 1;
	}
	/* Responses can be large (report, hosts of a big cluster): accept up to the hard limit. */
	*response = rm_frame_recv(fd, RM_FRAME_MAX_HARD, left, err);
	return *response ? 0 : -1;
}
