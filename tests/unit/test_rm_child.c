/*
 * tests/unit/test_rm_child.c: common/rm_child (work in a child process under limits) and
 * mapping/map_guard (map_compute in such a child).
 *
 * Each fault is real: the child really dereferences, spins, blocks, allocates; the checks are that the
 * caller gets an error naming what happened, within a bound, and that its own state is untouched
 * (open descriptors, signal handlers, no zombie left).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "mapping.h"
#include "rm_child.h"
#include "tests/harness.h"

/* Under AddressSanitizer the child's runtime reports a SEGV or a failed allocation itself and exits
 * with status 1 before the signal or the allocator's NULL reaches rm_child: the error then says so. */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#else
#define ASAN_BUILD 0
#endif

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *ok_fn(void *arg, size_t *len, rm_error_t *err)
{
	char *s = strdup((const char *)arg);

	*len = strlen(s) + 1;
	return s;
}

static void *err_fn(void *arg, size_t *len, rm_error_t *err)
{
	errno = ENOENT;
	rm_error_set(err, "q.mtx", 3, 0, "no such thing");
	return NULL;
}

static void *segv_fn(void *arg, size_t *len, rm_error_t *err)
{
	volatile int *volatile p = (int *)arg;

	*p = 1; /* arg is NULL */
	return NULL;
}

static void *spin_fn(void *arg, size_t *len, rm_error_t *err)
{
	for (volatile unsigned long i = 0;; i++)
		;
	return NULL;
}

static void *sleep_fn(void *arg, size_t *len, rm_error_t *err)
{
	for (;;)
		pause();
	return NULL;
}

/* Allocates and touches up to 2 GiB; NULL (ENOMEM) when the limit stops it. */
static void *grow_fn(void *arg, size_t *len, rm_error_t *err)
{
	for (int i = 0; i < 32; i++) {
		char *p = malloc((size_t)64 << 20);
		if (!p) {
			errno = ENOMEM;
			rm_error_set(err, "grow", 0, 0, "out of memory after %d MiB", i * 64);
			return NULL;
		}
		memset(p, 1, (size_t)64 << 20);
	}
	return strdup("grew");
}

/* Lists the child's open descriptors (from /proc/self/fd) as "0,1,2,3". */
static void *fds_fn(void *arg, size_t *len, rm_error_t *err)
{
	char *out = calloc(1, 4096);
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int dfd = d ? dirfd(d) : -1;

	while (d && out && (e = readdir(d))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == dfd)
			continue;
		snprintf(out + strlen(out), 4096 - strlen(out), "%s%s", out[0] ? "," : "", e->d_name);
	}
	if (d)
		closedir(d);
	*len = out ? strlen(out) + 1 : 0;
	return out;
}

static void *big_fn(void *arg, size_t *len, rm_error_t *err)
{
	*len = 1 << 20;
	return calloc(1, *len);
}

static int crash_handler_ran;
static void on_segv(int sig)
{
	crash_handler_ran = 1;
}

static void test_runs(void)
{
	rm_child_limits_t lim = { .wall_ms = 5000 };
	rm_error_t err = { 0 };
	size_t len = 0;
	char *out = rm_child_run("t", ok_fn, "hello", &lim, &len, &err);

	check(out && len == 6 && !strcmp(out, "hello"), "result comes back (%s)", out ? out : "NULL");
	free(out);
	out = rm_child_run("t", err_fn, NULL, &lim, &len, &err);
	check(!out && errno == ENOENT, "the function's errno comes back (%d)", errno);
	check(!strcmp(err.source, "q.mtx") && err.line == 3 && strstr(err.text, "no such thing"),
	      "the function's error comes back (%s:%d: %s)", err.source, err.line, err.text);
	rm_error_clear(&err);
	lim.max_out = 1000;
	out = rm_child_run("t", big_fn, NULL, &lim, &len, &err);
	check(!out && errno == EMSGSIZE && strstr(err.text, "larger"), "oversized result refused (%s)", err.text);
	lim.wall_ms = 0;
	rm_error_clear(&err);
	check(!rm_child_run("t", ok_fn, "x", &lim, &len, &err) && errno == EINVAL, "no time limit: EINVAL");
}

static void test_faults(void)
{
	/* wall bound far above the CPU limit: on a shared, loaded machine a spinning child may get only a
	 * small share of a core, and the CPU limit must still be what stops it */
	rm_child_limits_t lim = { .wall_ms = 300000, .cpu_s = 1 };
	rm_error_t err = { 0 };
	size_t len;
	double t0;

	signal(SIGSEGV, on_segv); /* as an MPI library would: the child must not run it */
	check(!rm_child_run("engine 'x'", segv_fn, NULL, &lim, &len, &err) && errno == ECHILD,
	      "a crash is an error (errno %d)", errno);
	check((strstr(err.text, "crashed (signal 11") || (ASAN_BUILD && strstr(err.text, "ended (status 1)"))) &&
		      !strcmp(err.source, "engine 'x'"),
	      "crash named: %s: %s", err.source, err.text);
	check(!crash_handler_ran, "the parent's SIGSEGV handler did not run in the child");
	signal(SIGSEGV, SIG_DFL);

	rm_error_clear(&err);
	t0 = now_s();
	check(!rm_child_run("t", spin_fn, NULL, &lim, &len, &err) && errno == ETIMEDOUT,
	      "a spinning child is stopped by its CPU limit (errno %d)", errno);
	check(strstr(err.text, "CPU time limit of 1 s"), "CPU limit named: %s", err.text);
	check(now_s() - t0 < 300, "stopped before the wall bound (%.1f s)", now_s() - t0);

	rm_error_clear(&err);
	lim.cpu_s = 0, lim.wall_ms = 300;
	t0 = now_s();
	check(!rm_child_run("t", sleep_fn, NULL, &lim, &len, &err) && errno == ETIMEDOUT,
	      "a blocked child is stopped at the wall-clock bound (errno %d)", errno);
	check(strstr(err.text, "no result within 300 ms"), "wall bound named: %s", err.text);
	check(now_s() - t0 < 5, "stopped within 5 s (%.2f s)", now_s() - t0);

	rm_error_clear(&err);
	lim.wall_ms = 30000, lim.mem_bytes = (size_t)256 << 20;
	check(!rm_child_run("t", grow_fn, NULL, &lim, &len, &err), "a growing child is stopped by its memory limit");
	check(strstr(err.text, "out of memory") || strstr(err.text, "crashed") ||
		      (ASAN_BUILD && strstr(err.text, "ended (status 1)")),
	      "memory limit: %s", err.text);
	check(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "no child left behind");
}

static void test_fds(void)
{
	rm_child_limits_t lim = { .wall_ms = 5000 };
	rm_error_t err = { 0 };
	size_t len;
	int p[2], fd = open("/dev/null", O_RDONLY);
	char *out;

	check(pipe(p) == 0 && fd >= 0, "descriptors opened");
	out = rm_child_run("t", fds_fn, NULL, &lim, &len, &err);
	check(out && !strcmp(out, "0,1,2,3"), "the child holds only 0-2 and its pipe (%s)", out ? out : err.text);
	free(out);
	check(fcntl(p[0], F_GETFD) >= 0 && fcntl(fd, F_GETFD) >= 0, "the parent's descriptors are still open");
	close(p[0]), close(p[1]), close(fd);
}

/* A server's work per request: "segv" crashes, "sleep" blocks, "err" fails, anything else is echoed with
 * the child's pid (so that the caller sees which child answered). */
static void *srv_fn(void *arg, const void *req, size_t len, size_t *out_len, rm_error_t *err)
{
	char *out;

	if (len == 4 && !memcmp(req, "segv", 4))
		return segv_fn(NULL, out_len, err);
	if (len == 5 && !memcmp(req, "sleep", 5))
		return sleep_fn(NULL, out_len, err);
	if (len == 3 && !memcmp(req, "err", 3))
		return err_fn(NULL, out_len, err);
	if (asprintf(&out, "%.*s %d", (int)len, (const char *)req, (int)getpid()) < 0)
		return NULL;
	*out_len = strlen(out) + 1;
	return out;
}

/* One child serves a batch; the request it dies on costs that request only, the next starts a child. */
static void test_server(void)
{
	rm_child_limits_t lim = { .wall_ms = 2000 };
	rm_child_srv_t *s = rm_child_srv_create("parser", srv_fn, NULL, &lim);
	static const char *const reqs[] = { "a", "b", "segv", "c", "err", "d", "sleep", "e" };
	char *out[8] = { NULL }, pid_a[32] = "", pid_b[32] = "", pid_c[32] = "", pid_e[32] = "";
	rm_error_t err[8];
	int e[8];
	size_t len, i;
	double t0 = now_s();

	check(s && rm_child_srv_forks(s) == 0, "no child before the first request");
	for (i = 0; s && i < 8; i++) {
		memset(&err[i], 0, sizeof(err[i]));
		out[i] = rm_child_srv_call(s, reqs[i], strlen(reqs[i]), &len, &err[i]);
		e[i] = errno;
	}
	if (!s)
		return;
	check(out[0] && out[1] && out[3] && out[5] && out[7], "every good request is answered");
	sscanf(out[0] ? out[0] : "", "%*s %31s", pid_a), sscanf(out[1] ? out[1] : "", "%*s %31s", pid_b);
	sscanf(out[3] ? out[3] : "", "%*s %31s", pid_c), sscanf(out[7] ? out[7] : "", "%*s %31s", pid_e);
	check(*pid_a && !strcmp(pid_a, pid_b), "one child serves the requests before the crash (%s, %s)", pid_a, pid_b);
	check(!out[2] && e[2] == ECHILD &&
		      (strstr(err[2].text, "crashed (signal 11") ||
		       (ASAN_BUILD && strstr(err[2].text, "ended (status"))),
	      "the crash costs its request: %s", err[2].text);
	check(*pid_c && strcmp(pid_c, pid_a), "the next request gets a new child (%s after %s)", pid_c, pid_a);
	check(!out[4] && e[4] == ENOENT && !strcmp(err[4].text, "no such thing") && out[5] && strstr(out[5], pid_c),
	      "a function's own error is passed on and the child goes on (%s)", err[4].text);
	check(!out[6] && e[6] == ETIMEDOUT && strstr(err[6].text, "no result within 2000 ms"),
	      "a blocked request is stopped at its wall bound: %s", err[6].text);
	check(*pid_e && strcmp(pid_e, pid_c), "and the next one is served by a new child");
	check(rm_child_srv_forks(s) == 3, "3 children for 8 requests (%u)", rm_child_srv_forks(s));
	check(now_s() - t0 < 30, "within 30 s (%.1f s)", now_s() - t0);
	rm_child_srv_destroy(s);
	check(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "no child left behind");
	for (i = 0; i < 8; i++)
		free(out[i]);
}

/* A lock a thread of this process holds: a fork copies it held, an exec'd program starts without it
 * (as GCC 12's ASan allocator locks, or a library's own, in rankmapd's parser child). */
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static int held_pipe[2] = { -1, -1 }, release_pipe[2] = { -1, -1 };

static void *holder(void *arg)
{
	char c;

	(void)arg;
	pthread_mutex_lock(&held);
	if (write(held_pipe[1], "h", 1) != 1 || read(release_pipe[0], &c, 1) < 0) /* held until told */
		c = 0;
	pthread_mutex_unlock(&held);
	return NULL;
}

static void *lock_fn(void *arg, const void *req, size_t reqlen, size_t *out_len, rm_error_t *err)
{
	char *out;

	(void)arg, (void)err;
	pthread_mutex_lock(&held);
	pthread_mutex_unlock(&held);
	if (asprintf(&out, "%.*s %d %d", (int)reqlen, (const char *)req, (int)getpid(), (int)getppid()) < 0)
		return NULL;
	*out_len = strlen(out) + 1;
	return out;
}

/* rm_child_srv_exec: children are this program again (main: --serve-lock PARENT), not forks. */
static void test_exec_server(void)
{
	rm_child_limits_t lim = { .wall_ms = 2000 };
	rm_child_srv_t *f = rm_child_srv_create("forked", lock_fn, NULL, &lim);
	rm_child_srv_t *x = rm_child_srv_create("exec'd", lock_fn, NULL, &lim);
	char *argv[] = { "test_rm_child", "--serve-lock", NULL }, *out[3] = { NULL }, c;
	char mine[32];
	rm_error_t err = { 0 };
	pthread_t th;
	size_t len = 0;
	unsigned i;
	double t0;

	check(f && x && pipe(held_pipe) == 0 && pipe(release_pipe) == 0 && pthread_create(&th, NULL, holder, NULL) == 0,
	      "set up");
	if (!f || !x || held_pipe[0] < 0)
		return;
	check(read(held_pipe[0], &c, 1) == 1, "a thread holds a lock");
	check(rm_child_srv_exec(x, "/proc/self/exe", argv) == 0, "exec mode set");
	check(rm_child_srv_exec(x, "/proc/self/exe", argv) < 0 && errno == EINVAL, "set once only");
	out[0] = rm_child_srv_call(f, "f", 1, &len, &err);
	check(!out[0] && errno == ETIMEDOUT, "a forked child waits forever for the lock a thread held at fork: %s",
	      err.text);
	t0 = now_s();
	for (i = 0; i < 3; i++)
		out[i] = rm_child_srv_call(x, i == 1 ? "y" : "x", 1, &len, &err);
	snprintf(mine, sizeof(mine), " %d", (int)getpid());
	check(out[0] && out[1] && out[2] && !strncmp(out[1], "y ", 2), "an exec'd child answers every request: %s",
	      out[0] ? out[0] : err.text);
	check(out[0] && out[2] && strstr(out[0], mine) && !strcmp(out[0], out[2]),
	      "one exec'd child (its parent: this process) serves them all (%s, %s)", out[0] ? out[0] : "",
	      out[2] ? out[2] : "");
	check(rm_child_srv_forks(x) == 1, "1 child for 3 requests (%u)", rm_child_srv_forks(x));
	check(now_s() - t0 < 20, "within 20 s (%.1f s)", now_s() - t0);
	for (i = 0; i < 3; i++)
		free(out[i]);
	rm_child_srv_destroy(x);
	rm_child_srv_destroy(f);
	check(write(release_pipe[1], "x", 1) == 1 && pthread_join(th, NULL) == 0, "the lock released");
	check(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "no child left behind");
	close(held_pipe[0]), close(held_pipe[1]), close(release_pipe[0]), close(release_pipe[1]);
}

static void test_guard(void)
{
	topo_target_t *t = topo_target_from_tleaf("tleaf 2 4 10 4 1", NULL);
	uint32_t s[] = { 0, 1, 2, 3, 4, 5, 6, 0 }, d[] = { 4, 5, 6, 7, 1, 2, 3, 7 };
	double w[] = { 10, 10, 10, 10, 1, 1, 1, 1 };
	map_graph_t *g = map_graph_from_edges(8, 8, s, d, w, NULL);
	rm_child_limits_t lim = { .wall_ms = 10000, .cpu_s = 5, .mem_bytes = (size_t)1 << 30 };
	uint32_t p1[8], p2[8];
	map_result_t r1, r2;
	rm_error_t err = { 0 };

	check(t && g, "target and graph built");
	check(map_compute("treematch", g, t, NULL, p1, &r1, &err) == 0, "unguarded map");
	check(map_compute_guarded("treematch", g, t, NULL, &lim, p2, &r2, &err) == 0, "guarded map: %s", err.text);
	check(!memcmp(p1, p2, sizeof(p1)) && r1.cost == r2.cost && !strcmp(r1.algo, r2.algo),
	      "guarded result equals the unguarded one (cost %g / %g)", r1.cost, r2.cost);
	check(map_compute_guarded("nope", g, t, NULL, &lim, p2, NULL, &err) != 0 && strstr(err.text, "unknown engine"),
	      "the engine's own error comes back: %s", err.text);
	rm_error_clear(&err);
	setenv("RANKMAP_FAKE_ENGINE_FAULT", "segv", 1);
	memset(p2, 0xff, sizeof(p2));
	check(map_compute_guarded("treematch", g, t, NULL, &lim, p2, &r2, &err) != 0, "fault hook: a crash fails");
	check(strstr(err.text, "crashed") && !strcmp(err.source, "engine 'treematch'"), "named: %s: %s", err.source,
	      err.text);
	check(p2[0] == 0 && p2[7] == 7, "identity left in perm on failure");
	rm_error_clear(&err);
	setenv("RANKMAP_FAKE_ENGINE_FAULT", "sleep", 1);
	lim.wall_ms = 200;
	check(map_compute_guarded("treematch", g, t, NULL, &lim, p2, &r2, &err) != 0 && errno == ETIMEDOUT,
	      "fault hook: a hang times out (%s)", err.text);
	unsetenv("RANKMAP_FAKE_ENGINE_FAULT");
	map_graph_destroy(g);
	topo_target_destroy(t);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--serve-lock")) { /* test_exec_server's child */
		rm_child_limits_t lim = { .wall_ms = 2000 };
		rm_child_srv_serve(argv[2], lock_fn, NULL, &lim);
	}
	test_runs();
	test_faults();
	test_fds();
	test_server();
	test_exec_server();
	test_guard();
	return harness_done();
}
