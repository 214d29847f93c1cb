/*
 * daemon/server/srv_sock.c: the state-directory lock and the listening Unix socket, set up carefully:
 * sun_path length checked, a stale socket removed only when nobody answers on it, bind() under a
 * umask so the socket never exists with looser permissions, then chmod to the configured mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "srv.h"

int srv_lock_state_dir(const char *state_dir, rm_error_t *err)
{
	char path[4096], pid[32];
	struct stat st;
	int fd, n;

	snprintf(path, sizeof(path), "%s/rankmapd.lock", state_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return rm_error_set(err, path, 0, 0, "cannot open lock file: %s", strerror(errno));
	if (fstat(fd, &st) < 0 || srv_state_check_owner(path, &st, err) < 0) { /* planted by another user */
		close(fd);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		n = (int)pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = 0;
		pid[strcspn(pid, "\n")] = 0;
		close(fd);
		if (e == EWOULDBLOCK)
			return rm_error_set(err, path, 0, 0, "another rankmapd (pid %s) uses this state directory",
					    *pid ? pid : "unknown");
		return rm_error_set(err, path, 0, 0, "cannot lock: %s", strerror(e));
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
		srv_log(SRV_LOG_WARNING, "%s: cannot write pid: %s", path, strerror(errno));
	return fd;
}

/* Is something listening on path? 1 yes, 0 no (stale), -1 cannot tell. */
static int socket_alive(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -1;
	r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (r == 0 || errno == EAGAIN)
		return 1;
	return errno == ECONNREFUSED ? 0 : -1;
}

/* Removes a stale socket at path; refuses non-sockets and live sockets. */
static int remove_stale(const char *path, const struct sockaddr_un *sa, rm_error_t *err)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : rm_error_set(err, path, 0, 0, "cannot stat: %s", strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return rm_error_set(err, path, 0, 0, "exists and is not a socket; not removing it");
	if (socket_alive(sa) != 0)
		return rm_error_set(err, path, 0, 0, "a server is answering on this socket");
	if (unlink(path) < 0 && errno != ENOENT)
		return rm_error_set(err, path, 0, 0, "cannot remove stale socket: %s", strerror(errno));
	srv_log(SRV_LOG_NOTICE, "removed stale socket %s", path);
	return 0;
}

/* Creates the socket's directory (one level, mode 0755) when it is missing, e.g. /run/rankmapd. */
static int make_parent(const char *path, rm_error_t *err)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const char *slash = strrchr(path, '/');

	if (!slash || slash == path)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return rm_error_set(err, dir, 0, 0, "cannot create the socket's directory: %s", strerror(errno));
	return 0;
}

int srv_sock_listen(const char *path, unsigned mode, dev_t *dev, ino_t *ino, rm_error_t *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, r, e;

	if (strlen(path) >= sizeof(sa.sun_path))
		return rm_error_set(err, path, 0, 0, "socket path is %zu bytes long; the limit is %zu", strlen(path),
				    sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (make_parent(path, err) < 0 || remove_stale(path, &sa, err) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return rm_error_set(err, path, 0, 0, "socket: %s", strerror(errno));
	old = umask(0177); /* the socket is created 0600, widened below */
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	e = errno;
	umask(old);
	if (r < 0) {
		close(fd);
		return rm_error_set(err, path, 0, 0, "bind: %s", strerror(e));
	}
	if (chmod(path, mode) < 0 || listen(fd, SOMAXCONN) < 0 || lstat(path, &st) < 0) {
		e = errno;
		unlink(path);
		close(fd);
		return rm_error_set(err, path, 0, 0, "chmod/listen: %s", strerror(e));
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
	return fd;
}

void srv_sock_unlink(const char *path, dev_t dev, ino_t ino)
{
	struct stat st;

	/* Only remove the file if it is still the socket we bound (another instance may own it now). */
	if (lstat(path, &st) == 0 && st.st_ino == ino && st.st_dev == dev)
		unlink(path);
}
