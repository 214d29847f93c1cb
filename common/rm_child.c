/*
 * common/rm_child.c: a function run in a forked child under limits, its result read back through a pipe
 * within a bounded time (see rm_child.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "rm_child.h"

#define CHILD_MAGIC 0x726d6368u /* "rmch" */
#define CHILD_MAX_OUT_DEFAULT ((size_t)256 << 20)

/* What the child writes first; then len bytes: the result (status 0) or an rm_error_t (status 1). */
typedef struct child_head {
	uint32_t magic;
	int32_t status;
	int32_t err_no;
	uint32_t pad;
	uint64_t len;
} child_head_t;

/* ---- the child ---- */

enum { IO_READ, IO_WRITE, IO_SEND };

/* Reads (IO_READ) or writes (IO_WRITE: write(2), IO_SEND: send(2) with MSG_NOSIGNAL) all len bytes of buf,
 * going on after EINTR. 0, or -1 on an error or end of file. */
static int io_full(int fd, void *buf, size_t len, int op)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = op == IO_READ   ? read(fd, p, len)
			    : op == IO_SEND ? send(fd, p, len, MSG_NOSIGNAL)
					    : write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n, len -= (size_t)n;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	return io_full(fd, (void *)buf, len, IO_WRITE);
}

/* Fatal signals back to their default action, nothing blocked: a crash ends the child at once. */
static void child_signals(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,  SIGABRT, SIGXCPU, SIGPIPE,
				    SIGTERM, SIGINT, SIGHUP, SIGALRM, SIGUSR1, SIGUSR2, SIGCHLD };
	sigset_t none;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Leaves the pipe on descriptor 3, stdin/stdout/stderr on /dev/null, and closes everything else. */
static int child_fds(int wfd)
{
	int fd = fcntl(wfd, F_DUPFD, 3), null = open("/dev/null", O_RDWR);

	if (fd < 0)
		return -1;
	for (int i = 0; i < 3; i++) {
		if (null >= 0)
			dup2(null, i);
		else
			close(i);
	}
	if (fd != 3 && dup2(fd, 3) < 0)
		return -1;
	if (close_range(4, ~0U, 0) < 0) {
		struct rlimit r;
		int max = getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < 65536 ? (int)r.rlim_cur : 65536;

		for (int i = 4; i < max; i++)
			close(i);
	}
	return 3;
}

/* The size of the address space now, in bytes (0 when unknown). */
static size_t vm_size(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

static void set_limit(int what, rlim_t soft, rlim_t hard)
{
	struct rlimit r;

	if (getrlimit(what, &r) != 0)
		return;
	if (r.rlim_max != RLIM_INFINITY && hard > r.rlim_max)
		hard = r.rlim_max;
	if (soft > hard)
		soft = hard;
	r.rlim_cur = soft, r.rlim_max = hard;
	setrlimit(what, &r);
}

static void child_limits(const rm_child_limits_t *lim)
{
	set_limit(RLIMIT_CORE, 0, 0);
	if (lim->cpu_s)
		set_limit(RLIMIT_CPU, lim->cpu_s, (rlim_t)lim->cpu_s + 1);
	if (lim->mem_bytes) {
		size_t now = vm_size(), as = now + lim->mem_bytes;

		if (as > now)
			set_limit(RLIMIT_AS, as, as);
	}
}

/* A child's start: its signals, death with its parent (exit 127 when the parent is already gone), its
 * descriptors (exit 126 when they cannot be set up) and limits. Returns its end of the pipe or socket. */
static int child_start(pid_t parent, int wfd, const rm_child_limits_t *lim)
{
	int fd;

	child_signals();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	if ((fd = child_fds(wfd)) < 0)
		_exit(126);
	child_limits(lim);
	return fd;
}

static __attribute__((noreturn)) void child_main(pid_t parent, int wfd, rm_child_fn fn, void *arg,
						 const rm_child_limits_t *lim)
{
	rm_error_t err;
	child_head_t h = { .magic = CHILD_MAGIC };
	size_t len = 0;
	void *out;
	int fd;

	fd = child_start(parent, wfd, lim);
	memset(&err, 0, sizeof(err));
	errno = 0;
	out = fn(arg, &len, &err);
	if (!out) {
		h.status = 1, h.err_no = errno ? errno : EIO, h.len = sizeof(err);
		if (!rm_error_isset(&err))
			rm_error_set(&err, "", 0, 0, "%s", strerror(h.err_no));
		out = &err, len = sizeof(err);
	}
	h.len = len;
	if (write_all(fd, &h, sizeof(h)) < 0 || write_all(fd, out, len) < 0)
		_exit(125);
	_exit(h.status);
}

/* ---- the parent ---- */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* What the parent has read so far. */
typedef struct child_read {
	child_head_t head;
	size_t got_head;
	char *buf;
	size_t got;
	int complete, too_big, timed_out;
} child_read_t;

/* Reads what is available on fd into r. Returns 1 to go on, 0 at end of file or on error. */
static int read_some(int fd, child_read_t *r, size_t max_out)
{
	ssize_t n;

	if (r->got_head < sizeof(r->head)) {
		n = read(fd, (char *)&r->head + r->got_head, sizeof(r->head) - r->got_head);
		if (n > 0 && (r->got_head += (size_t)n) == sizeof(r->head)) {
			if (r->head.magic != CHILD_MAGIC || (r->head.status == 0 && r->head.len > max_out) ||
			    (r->head.status != 0 && r->head.len != sizeof(rm_error_t))) {
				r->too_big = r->head.magic == CHILD_MAGIC;
				return 0;
			}
			if (!(r->buf = malloc(r->head.len ? r->head.len : 1)))
				return 0;
			r->complete = r->head.len == 0;
		}
	} else if (r->got < r->head.len) {
		n = read(fd, r->buf + r->got, r->head.len - r->got);
		if (n > 0 && (r->got += (size_t)n) == r->head.len)
			r->complete = 1;
	} else {
		char c;
		n = read(fd, &c, 1); /* anything after the result is a protocol error */
		if (n > 0)
			r->complete = 0;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	return n > 0;
}

/* Reads a child's answer into r until end of file, an error, the deadline (r->timed_out) or, with
 * until_complete, a complete or too big answer. */
static void read_until(int fd, double deadline, size_t max_out, child_read_t *r, int until_complete)
{
	while (!until_complete || (!r->complete && !r->too_big)) {
		double left = deadline - now_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int rc;

		if (left <= 0) {
			r->timed_out = 1;
			return;
		}
		rc = poll(&p, 1, left > 1e6 ? 1000000 : (int)left + 1);
		if (rc < 0 && errno != EINTR)
			return;
		if (rc > 0 && !read_some(fd, r, max_out))
			return;
	}
}

/* Reads the child's answer until end of file or the deadline (then the child is killed). */
static void read_answer(int fd, pid_t pid, double deadline, size_t max_out, child_read_t *r)
{
	read_until(fd, deadline, max_out, r, 0);
	if (r->timed_out)
		kill(pid, SIGKILL);
}

/* Reaps the child: waits for it until the deadline, then kills it. Returns its wait status, or -1 when
 * it is not ours to reap (SIGCHLD ignored, or reaped by someone else); *cpu_s: the CPU time it used. */
static int reap(pid_t pid, double deadline, double *cpu_s)
{
	struct rusage ru;
	int st = 0;

	memset(&ru, 0, sizeof(ru));
	for (;;) {
		pid_t w = wait4(pid, &st, WNOHANG, &ru);

		if (w == 0 && now_ms() >= deadline) {
			kill(pid, SIGKILL);
			while ((w = wait4(pid, &st, 0, &ru)) < 0 && errno == EINTR)
				;
		}
		if (w == pid) {
			*cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
				 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
			return st;
		}
		if (w < 0 && errno != EINTR)
			return -1;
		if (w == 0)
			usleep(1000);
	}
}

/* The error of a child that gave no complete result. */
static void child_failed(const char *what, const child_read_t *r, int st, double cpu_s, const rm_child_limits_t *lim,
			 rm_error_t *err)
{
	int sig = st >= 0 && WIFSIGNALED(st) ? WTERMSIG(st) : 0;

	if (r->timed_out) {
		rm_error_set(err, what, 0, 0, "no result within %.0f ms (stopped)", lim->wall_ms);
		errno = ETIMEDOUT;
	} else if (sig == SIGXCPU || (sig == SIGKILL && lim->cpu_s && cpu_s >= lim->cpu_s)) {
		rm_error_set(err, what, 0, 0, "CPU time limit of %u s reached (stopped)", lim->cpu_s);
		errno = ETIMEDOUT;
	} else if (r->too_big) {
		rm_error_set(err, what, 0, 0, "result larger than %zu bytes", lim->max_out);
		errno = EMSGSIZE;
	} else if (sig) {
		rm_error_set(err, what, 0, 0, "crashed (signal %d, %s)", sig, strsignal(sig));
		errno = ECHILD;
	} else {
		rm_error_set(err, what, 0, 0, "ended (status %d) without a result",
			     st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		errno = ECHILD;
	}
}

void *rm_child_run(const char *what, rm_child_fn fn, void *arg, const rm_child_limits_t *lim, size_t *len,
		   rm_error_t *err)
{
	rm_child_limits_t l = *lim;
	child_read_t r = { 0 };
	double deadline;
	double cpu_s = 0;
	int p[2], st, e;
	pid_t pid, self = getpid();

	if (!fn || !(lim->wall_ms > 0)) {
		errno = EINVAL;
		rm_error_set(err, what, 0, 0, "no function or no time limit");
		return NULL;
	}
	if (!l.max_out)
		l.max_out = CHILD_MAX_OUT_DEFAULT;
	if (pipe2(p, O_CLOEXEC) < 0)
		p[0] = p[1] = -1, pid = -1;
	else if ((pid = fork()) < 0)
		e = errno, close(p[0]), close(p[1]), errno = e;
	if (pid < 0) {
		e = errno;
		rm_error_set(err, what, 0, 0, "cannot start a child process: %s", strerror(e));
		errno = e;
		return NULL;
	}
	if (pid == 0)
		child_main(self, p[1], fn, arg, &l);
	close(p[1]);
	deadline = now_ms() + l.wall_ms;
	read_answer(p[0], pid, deadline, l.max_out, &r);
	close(p[0]);
	st = reap(pid, r.timed_out ? 0 : deadline, &cpu_s);
	if (r.complete && !r.timed_out && r.head.status == 0) {
		*len = r.head.len;
		return r.buf;
	}
	if (r.complete && !r.timed_out) { /* the function's own error */
		rm_error_t ce;
		memcpy(&ce, r.buf, sizeof(ce));
		ce.source[sizeof(ce.source) - 1] = ce.text[sizeof(ce.text) - 1] = '\0';
		rm_error_set(err, ce.source[0] ? ce.source : what, ce.line, ce.column, "%s", ce.text);
		errno = r.head.err_no ? r.head.err_no : EIO;
	} else {
		child_failed(what, &r, st, cpu_s, &l, err);
	}
	e = errno;
	free(r.buf);
	errno = e;
	return NULL;
}

/* ---- a child serving requests one after another ---- */

struct rm_child_srv {
	char what[96];
	rm_child_req_fn fn;
	void *arg;
	rm_child_limits_t lim;
	pid_t pid; /* 0: no child */
	int fd;    /* the parent's end of the socket pair */
	unsigned forks;
	char *path;  /* rm_child_srv_exec: the program children are, else NULL (forks) */
	char **argv; /* its arguments, with two free slots at the end (the caller's pid, NULL) */
};

/* The descriptor of the request socket in a child (forked or exec'd). */
#define SRV_FD 3

static int read_full(int fd, void *buf, size_t len)
{
	return io_full(fd, buf, len, IO_READ);
}

/* The child's loop: [u64 length][request] in, [child_head][answer or rm_error_t] out, until end of file. */
static __attribute__((noreturn)) void srv_loop(int fd, rm_child_req_fn fn, void *arg)
{
	for (;;) {
		child_head_t h = { .magic = CHILD_MAGIC };
		uint64_t rl;
		char *req;
		void *out;
		size_t len = 0;
		rm_error_t err;

		if (read_full(fd, &rl, sizeof(rl)) < 0)
			_exit(0);
		if (rl > ((uint64_t)1 << 34) || !(req = malloc(rl ? (size_t)rl : 1)) ||
		    read_full(fd, req, (size_t)rl) < 0)
			_exit(124);
		memset(&err, 0, sizeof(err));
		errno = 0;
		out = fn(arg, req, (size_t)rl, &len, &err);
		free(req);
		if (!out) {
			h.status = 1, h.err_no = errno ? errno : EIO;
			if (!rm_error_isset(&err))
				rm_error_set(&err, "", 0, 0, "%s", strerror(h.err_no));
			len = sizeof(err);
		}
		h.len = len;
		if (write_all(fd, &h, sizeof(h)) < 0 || write_all(fd, out ? out : (void *)&err, len) < 0)
			_exit(125);
		free(out);
	}
}

static __attribute__((noreturn)) void srv_child_main(pid_t parent, int sfd, rm_child_srv_t *s)
{
	srv_loop(child_start(parent, sfd, &s->lim), s->fn, s->arg);
}

void rm_child_srv_serve(const char *parent, rm_child_req_fn fn, void *arg, const rm_child_limits_t *lim)
{
	rm_child_limits_t l = *lim;
	char *end;
	long ppid = parent ? strtol(parent, &end, 10) : 0;

	if (!parent || *end || ppid <= 1)
		_exit(127);
	l.cpu_s = 0; /* as for a forked server: wall_ms bounds each request */
	srv_loop(child_start((pid_t)ppid, SRV_FD, &l), fn, arg);
}

rm_child_srv_t *rm_child_srv_create(const char *what, rm_child_req_fn fn, void *arg, const rm_child_limits_t *lim)
{
	rm_child_srv_t *s;

	if (!fn || !lim || !(lim->wall_ms > 0)) {
		errno = EINVAL;
		return NULL;
	}
	if (!(s = calloc(1, sizeof(*s))))
		return NULL;
	snprintf(s->what, sizeof(s->what), "%s", what ? what : "child");
	s->fn = fn, s->arg = arg, s->lim = *lim, s->fd = -1;
	s->lim.cpu_s = 0;
	if (!s->lim.max_out)
		s->lim.max_out = CHILD_MAX_OUT_DEFAULT;
	return s;
}

int rm_child_srv_exec(rm_child_srv_t *s, const char *path, char *const argv[])
{
	size_t n = 0;
	char **v;

	if (!s || !path || !argv || !argv[0] || s->path) {
		errno = EINVAL;
		return -1;
	}
	while (argv[n])
		n++;
	if (!(v = calloc(n + 2, sizeof(*v))) || !(s->path = strdup(path))) {
		free(v);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!(v[i] = strdup(argv[i]))) {
			while (i--)
				free(v[i]);
			free(v), free(s->path), s->path = NULL;
			errno = ENOMEM;
			return -1;
		}
	s->argv = v;
	return 0;
}

/* Starts s->path with the child's end of the socket on SRV_FD, stdin, stdout and stderr on /dev/null,
 * nothing else open (where glibc can close the rest; the program closes it itself anyway), fatal signals
 * at their default action and none blocked. posix_spawn runs no code of the caller in the child (no
 * fork handler, no allocation) before exec. Returns the pid, or -1 with errno set. */
static pid_t srv_spawn(rm_child_srv_t *s, int fd, pid_t self)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,  SIGABRT, SIGXCPU, SIGPIPE,
				    SIGTERM, SIGINT, SIGHUP, SIGALRM, SIGUSR1, SIGUSR2, SIGCHLD };
	extern char **environ;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t def, none;
	char ppid[24];
	size_t n = 0;
	pid_t pid = -1;
	int rc, moved = -1;

	if (fd == SRV_FD && (fd = moved = fcntl(fd, F_DUPFD_CLOEXEC, SRV_FD + 1)) < 0)
		return -1; /* dup2 onto itself would keep its close-on-exec flag */
	while (s->argv[n])
		n++;
	snprintf(ppid, sizeof(ppid), "%ld", (long)self);
	s->argv[n] = ppid;
	sigemptyset(&def);
	sigemptyset(&none);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&def, sigs[i]);
	if ((rc = posix_spawn_file_actions_init(&fa)) == 0) {
		if ((rc = posix_spawnattr_init(&at)) == 0) {
			if (!(rc = posix_spawn_file_actions_adddup2(&fa, fd, SRV_FD)) &&
			    !(rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0)) &&
			    !(rc = posix_spawn_file_actions_adddup2(&fa, 0, 1)) &&
			    !(rc = posix_spawn_file_actions_adddup2(&fa, 0, 2)) &&
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
			    !(rc = posix_spawn_file_actions_addclosefrom_np(&fa, SRV_FD + 1)) &&
#endif
			    !(rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)) &&
			    !(rc = posix_spawnattr_setsigdefault(&at, &def)) &&
			    !(rc = posix_spawnattr_setsigmask(&at, &none)))
				rc = posix_spawn(&pid, s->path, &fa, &at, s->argv, environ);
			posix_spawnattr_destroy(&at);
		}
		posix_spawn_file_actions_destroy(&fa);
	}
	s->argv[n] = NULL;
	if (moved >= 0)
		close(moved);
	if (rc) {
		errno = rc;
		return -1;
	}
	return pid;
}

unsigned rm_child_srv_forks(const rm_child_srv_t *s)
{
	return s ? s->forks : 0;
}

static int srv_start(rm_child_srv_t *s, rm_error_t *err)
{
	pid_t self = getpid();
	int sp[2], e;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		sp[0] = sp[1] = -1, s->pid = -1;
	else if ((s->pid = s->path ? srv_spawn(s, sp[1], self) : fork()) < 0)
		e = errno, close(sp[0]), close(sp[1]), errno = e;
	if (s->pid < 0) {
		e = errno;
		s->pid = 0;
		rm_error_set(err, s->what, 0, 0, "cannot start a child process: %s", strerror(e));
		errno = e;
		return -1;
	}
	if (s->pid == 0)
		srv_child_main(self, sp[1], s);
	close(sp[1]);
	s->fd = sp[0];
	s->forks++;
	return 0;
}

/* Ends the child: closes its socket (it exits at end of file), kills it when kill_it, reaps it. Returns
 * its wait status (-1: not ours to reap). */
static int srv_stop(rm_child_srv_t *s, int kill_it, double *cpu_s)
{
	int st;

	if (!s->pid)
		return -1;
	if (kill_it)
		kill(s->pid, SIGKILL);
	close(s->fd);
	st = reap(s->pid, now_ms() + (kill_it ? 0 : 1000), cpu_s);
	s->pid = 0, s->fd = -1;
	return st;
}

static int send_all(int fd, const void *buf, size_t len)
{
	return io_full(fd, (void *)buf, len, IO_SEND);
}

void *rm_child_srv_call(rm_child_srv_t *s, const void *req, size_t reqlen, size_t *len, rm_error_t *err)
{
	child_read_t r = { 0 };
	uint64_t rl = reqlen;
	double deadline, cpu_s = 0;
	int st, e, sent;

	if (!s->pid && srv_start(s, err) < 0)
		return NULL;
	deadline = now_ms() + s->lim.wall_ms;
	sent = send_all(s->fd, &rl, sizeof(rl)) == 0 && send_all(s->fd, req, reqlen) == 0;
	if (sent)
		read_until(s->fd, deadline, s->lim.max_out, &r, 1);
	if (r.complete && r.head.status == 0) {
		*len = r.head.len;
		return r.buf;
	}
	if (r.complete) { /* the function's own error: the child goes on */
		rm_error_t ce;
		memcpy(&ce, r.buf, sizeof(ce));
		ce.source[sizeof(ce.source) - 1] = ce.text[sizeof(ce.text) - 1] = '\0';
		rm_error_set(err, ce.source[0] ? ce.source : s->what, ce.line, ce.column, "%s", ce.text);
		errno = r.head.err_no ? r.head.err_no : EIO;
	} else {
		st = srv_stop(s, 1, &cpu_s);
		if (!r.timed_out && !r.too_big && st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			st = 0; /* killed by us after it stopped answering: report how it ended instead */
		child_failed(s->what, &r, st, cpu_s, &s->lim, err);
	}
	e = errno;
	free(r.buf);
	errno = e;
	return NULL;
}

void rm_child_srv_destroy(rm_child_srv_t *s)
{
	double cpu_s;

	if (!s)
		return;
	srv_stop(s, 0, &cpu_s);
	for (size_t i = 0; s->argv && s->argv[i]; i++)
		free(s->argv[i]);
	free(s->argv);
	free(s->path);
	free(s);
}
