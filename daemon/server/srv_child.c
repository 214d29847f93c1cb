/*
 * daemon/server/srv_child.c: worker processes (isolation = process). Each worker thread owns one child process
 * forked from the daemon. The child holds a copy-on-write snapshot of the model and runs the requests
 * flagged SRV_REQ_ISOLATED (map, order, simulate, report, distance: the engines and the heavy walks of
 * the model) under RLIMIT_CPU (worker_cpu_limit per request) and RLIMIT_AS (worker_memory_limit beyond
 * the daemon's size at fork). The thread waits for the answer with poll(), bounded by worker_time_limit
 * and the pool's stop descriptor. A child that dies or overruns costs that request one `internal` or
 * `timeout` error frame and one log line, and a fresh child replaces it; a child whose model is older
 * than the published one is replaced before its next request. Nothing here waits on a child that
 * might not answer: a child is only reaped after SIGKILL or after its end of the socket closed.
 *
 * Wire (a socketpair; the same binary on both ends): the thread sends a child_req_t and len bytes of
 * request payload; the child answers a child_resp_t and len bytes of encoded response frame
 * (RESP_OK, RESP_ERROR), or RESP_DELEGATE (len 0) for a request that must run in the daemon because
 * it changes state or is trivial (register, reload, hosts, ping). Before it runs a handler, the child
 * writes the request's type and id into a page shared with the thread, so that a crash is answered
 * with the right id and logged with the request's type.
 *
 * Fork safety: the child inherits only the forking thread. Right before fork() the thread takes every
 * lock the child may use (model_lock, the model's tc_lock and topo caches, ib_lock, the log lock), so
 * that none is copied in a state another thread left it in; the child re-initialises them, restores
 * default signal dispositions, closes every descriptor but its socket and stdio (the listening socket,
 * clients, the state lock), never runs atexit handlers (_exit only) and dies with its thread
 * (PR_SET_PDEATHSIG). glibc's malloc and jansson are fork-safe.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "rm_client.h"
#include "srv.h"

typedef struct child_req {
	uint32_t len;
	srv_peer_t peer;
	unsigned long counters[5];  /* n_requests, n_errors, n_connections, n_rejected, n_parses (for report) */
	srv_reload_status_t reload; /* the last reload (for report) */
	uint32_t stale;             /* a newer model was published: run no request on the old one */
} child_req_t;

/* RESP_STALE: the child's model is older than the published one and the request needs the model. */
enum { RESP_OK = 1, RESP_ERROR, RESP_DELEGATE, RESP_STALE };

typedef struct child_resp {
	uint32_t kind, len;
	uint32_t parses; /* request frames the child parsed (counted in the daemon's n_parses) */
} child_resp_t;

/* Shared with the child (MAP_SHARED): what it is running. */
typedef struct child_shm {
	char type[32];
	char id[480]; /* the request's id as JSON; "" until known */
} child_shm_t;

enum { EXIT_SETUP = 3, EXIT_NOMEM = 4 };

struct srv_child {
	srv_ctx_t *ctx;
	int stop_fd;
	pid_t pid;                /* 0: none (atomic: read by srv_workers_stop) */
	int fd;                   /* the thread's end of the socketpair */
	unsigned long generation; /* of the model the child holds */
	child_shm_t *shm;
};

/* ---- the child ---------------------------------------------------------------------------------- */

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t r;

	while (got < len) {
		r = read(fd, (char *)buf + got, len - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int write_full(int fd, struct iovec *iov, int n)
{
	ssize_t w;

	while (n > 0) {
		w = writev(fd, iov, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++, n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Records the type and id of the request about to run (for the thread, if the child dies). */
static void note_request(child_shm_t *shm, const json_t *req)
{
	const char *type = json_string_value(json_object_get(req, "type"));
	char *id = json_dumps(json_object_get(req, "id"), JSON_COMPACT | JSON_ENCODE_ANY);

	snprintf(shm->type, sizeof(shm->type), "%s", type ? type : "");
	if (id && strlen(id) < sizeof(shm->id))
		memcpy(shm->id, id, strlen(id) + 1);
	free(id);
}

/* Parses and runs one request; sends its response frame, or RESP_DELEGATE. */
static void child_serve(srv_ctx_t *ctx, int fd, child_shm_t *shm, char *payload, size_t len, const srv_peer_t *peer,
			int stale)
{
	rm_error_t err = { 0 };
	char buf[RM_ERROR_TEXT_LEN + 64], *out = NULL;
	child_resp_t r = { RESP_OK, 0, 1 };
	struct iovec iov[2];
	json_t *req, *resp = NULL;
	srv_handler_t h = NULL;
	int flags = 0;
	size_t olen = 0;

	req = srv_frame_parse(ctx, payload, len, &err);
	free(payload);
	if (!req)
		resp = rm_proto_error(NULL, RM_ERR_BAD_FRAME, "%s", rm_error_format(&err, buf, sizeof(buf)));
	else if ((h = srv_request_lookup(ctx, req, peer, &flags, &resp)) && !(flags & SRV_REQ_ISOLATED))
		r.kind = RESP_DELEGATE;
	else if (h && stale)
		r.kind = RESP_STALE; /* the thread replaces this child (a registration never forks one) */
	else if (h) {
		note_request(shm, req);
		resp = h(ctx, req, json_object_get(req, "id"), peer);
		if (!resp)
			resp = rm_proto_error(json_object_get(req, "id"), RM_ERR_INTERNAL,
					      "the request could not be answered");
	}
	if (resp) {
		if (json_is_false(json_object_get(resp, "ok")))
			r.kind = RESP_ERROR;
		if (!(out = rm_frame_encode(resp, &olen)))
			_exit(EXIT_NOMEM);
		r.len = (uint32_t)olen;
	}
	json_decref(resp);
	json_decref(req);
	iov[0] = (struct iovec){ &r, sizeof(r) };
	iov[1] = (struct iovec){ out, olen };
	if (write_full(fd, iov, olen ? 2 : 1) < 0)
		_exit(0); /* the thread gave up on this child */
	free(out);
}

/* RLIMIT_CPU for the next request: what the child used so far plus worker_cpu_limit (the soft limit
 * only: SIGXCPU ends the child; the hard limit stays, so an unprivileged daemon can do this too). */
static void cpu_limit(int seconds)
{
	struct rusage ru;
	struct rlimit rl;

	if (getrusage(RUSAGE_SELF, &ru) < 0 || getrlimit(RLIMIT_CPU, &rl) < 0)
		return;
	rl.rlim_cur = (rlim_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1 + seconds); /* used, rounded up */
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_CPU, &rl);
}

static void __attribute__((noreturn)) child_loop(srv_ctx_t *ctx, int fd, child_shm_t *shm)
{
	child_req_t q;
	char *payload;

	for (;;) {
		if (read_full(fd, &q, sizeof(q)) < 0)
			_exit(0); /* the thread closed its end: replaced or stopping */
		if (!(payload = malloc((size_t)q.len + 1)))
			_exit(EXIT_NOMEM);
		if (read_full(fd, payload, q.len) < 0)
			_exit(0);
		cpu_limit(ctx->cfg.worker_cpu_limit_s);
		ctx->n_requests = q.counters[0];
		ctx->n_errors = q.counters[1];
		ctx->n_connections = q.counters[2];
		ctx->n_rejected = q.counters[3];
		ctx->n_parses = q.counters[4];
		ctx->last_reload = q.reload;
		child_serve(ctx, fd, shm, payload, q.len, &q.peer, q.stale != 0);
	}
}

/* RLIMIT_AS: the size of the daemon at fork (VmSize) plus worker_memory_limit; no core files (a user
 * could otherwise fill the disk with copies of the model by crashing engines). */
static void child_limits(const srv_config_t *cfg)
{
	struct rlimit rl = { 0, 0 };
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	setrlimit(RLIMIT_CORE, &rl);
	if (f && fscanf(f, "%lu", &pages) == 1 && getrlimit(RLIMIT_AS, &rl) == 0) {
		rl.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + cfg->worker_memory_limit;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
			rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_AS, &rl);
	}
	if (f)
		fclose(f);
}

/* Runs in the child right after fork(); only the forking thread exists. */
static void child_setup(srv_ctx_t *ctx, srv_model_t *m, int fd, pid_t parent)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGXCPU, SIGSEGV, SIGBUS, SIGABRT };
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t none;
	size_t i;

	srv_log_fork_child();
	pthread_mutex_init(&ctx->model_lock, NULL);
	pthread_mutex_init(&ctx->reg_lock, NULL);
	pthread_mutex_init(&ctx->build_lock, NULL);
	pthread_mutex_init(&ctx->ib_lock, NULL);
	if (m) {
		pthread_mutex_init(&m->tc_lock, NULL);
		topo_cluster_fork_child(m->cluster);
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(EXIT_SETUP); /* the daemon is already gone */
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL); /* SIGPIPE stays ignored: a closed socket is EPIPE */
	if (fd != 3 && (dup2(fd, 3) < 0 || close(fd) < 0))
		_exit(EXIT_SETUP);
	close_range(4, ~0U, 0);
	srv_log_child_reopen();
	child_limits(&ctx->cfg);
}

/* ---- the thread's side ------------------------------------------------------------------------- */

srv_child_t *srv_child_new(srv_ctx_t *ctx, int stop_fd, rm_error_t *err)
{
	srv_child_t *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return rm_error_set(err, "workers", 0, 0, "no memory"), NULL;
	ch->shm = mmap(NULL, sizeof(child_shm_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ch->shm == MAP_FAILED) {
		rm_error_set(err, "workers", 0, 0, "mmap: %s", strerror(errno));
		free(ch);
		return NULL;
	}
	ch->ctx = ctx;
	ch->stop_fd = stop_fd;
	ch->fd = -1;
	return ch;
}

pid_t srv_child_pid(srv_child_t *ch)
{
	return ch ? __atomic_load_n(&ch->pid, __ATOMIC_ACQUIRE) : 0;
}

/* Forks the child under the locks it may use (see the top of the file). */
int srv_child_start(srv_child_t *ch)
{
	srv_ctx_t *ctx = ch->ctx;
	pid_t pid, parent = getpid();
	srv_model_t *m;
	int sv[2];

	if (ch->pid > 0)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		srv_log(SRV_LOG_ERR, "worker process: socketpair: %s", strerror(errno));
		return -1;
	}
	pthread_mutex_lock(&ctx->model_lock);
	if ((m = ctx->model)) {
		pthread_mutex_lock(&m->tc_lock);
		topo_cluster_fork_prepare(m->cluster);
	}
	pthread_mutex_lock(&ctx->ib_lock);
	srv_log_fork_prepare();
	pid = fork();
	if (pid == 0) {
		child_setup(ctx, m, sv[1], parent);
		child_loop(ctx, 3, ch->shm);
	}
	srv_log_fork_parent();
	pthread_mutex_unlock(&ctx->ib_lock);
	if (m) {
		topo_cluster_fork_parent(m->cluster);
		pthread_mutex_unlock(&m->tc_lock);
	}
	ch->generation = m ? m->generation : 0;
	pthread_mutex_unlock(&ctx->model_lock);
	close(sv[1]);
	if (pid < 0) {
		srv_log(SRV_LOG_ERR, "worker process: fork: %s", strerror(errno));
		close(sv[0]);
		return -1;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	ch->fd = sv[0];
	__atomic_store_n(&ch->pid, pid, __ATOMIC_RELEASE);
	return 0;
}

/* Ends the child: SIGKILL unless it already died (its socket said so), then reaps it. Returns the
 * wait status; *maxrss_kib receives its peak resident size. */
static int child_end(srv_child_t *ch, int kill_it, long *maxrss_kib)
{
	struct rusage ru = { 0 };
	int st = 0;

	if (ch->pid <= 0)
		return 0;
	if (kill_it)
		kill(ch->pid, SIGKILL);
	close(ch->fd); /* an idle child reads EOF and leaves; a dying one is already on its way */
	ch->fd = -1;
	while (wait4(ch->pid, &st, 0, &ru) < 0 && errno == EINTR)
		;
	if (maxrss_kib)
		*maxrss_kib = ru.ru_maxrss;
	__atomic_store_n(&ch->pid, 0, __ATOMIC_RELEASE);
	return st;
}

void srv_child_free(srv_child_t *ch)
{
	if (!ch)
		return;
	child_end(ch, 1, NULL);
	munmap(ch->shm, sizeof(child_shm_t));
	free(ch);
}

static unsigned long current_generation(srv_ctx_t *ctx)
{
	unsigned long g;

	pthread_mutex_lock(&ctx->model_lock);
	g = ctx->model ? ctx->model->generation : 0;
	pthread_mutex_unlock(&ctx->model_lock);
	return g;
}

/* ---- one exchange ------------------------------------------------------------------------------ */

enum { XC_OK, XC_DIED, XC_TIMEOUT, XC_STOPPED };

/* Waits until fd is ready for ev, the deadline passes or the pool stops. */
static int wait_fd(srv_child_t *ch, short ev, long long deadline)
{
	struct pollfd pf[2] = { { .fd = ch->fd, .events = ev }, { .fd = ch->stop_fd, .events = POLLIN } };
	long long left;
	int n;

	for (;;) {
		left = deadline - srv_now_ms();
		if (left <= 0)
			return XC_TIMEOUT;
		n = poll(pf, 2, left > 1000 ? 1000 : (int)left);
		if (n < 0 && errno != EINTR)
			return XC_DIED;
		if (n <= 0)
			continue;
		if (pf[1].revents)
			return XC_STOPPED;
		if (pf[0].revents & (ev | POLLHUP | POLLERR))
			return XC_OK;
	}
}

static int send_all(srv_child_t *ch, const void *a, size_t alen, const void *b, size_t blen, long long deadline)
{
	struct iovec iov[2] = { { (void *)a, alen }, { (void *)b, blen } }, *v = iov;
	int n = blen ? 2 : 1, x;
	ssize_t w;

	while (n > 0) {
		w = writev(ch->fd, v, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			if ((x = wait_fd(ch, POLLOUT, deadline)) != XC_OK)
				return x;
			continue;
		}
		if (w < 0)
			return XC_DIED;
		while (n > 0 && (size_t)w >= v->iov_len)
			w -= (ssize_t)v->iov_len, v++, n--;
		if (n > 0)
			v->iov_base = (char *)v->iov_base + w, v->iov_len -= (size_t)w;
	}
	return XC_OK;
}

static int recv_all(srv_child_t *ch, void *buf, size_t len, long long deadline)
{
	size_t got = 0;
	ssize_t r;
	int x;

	while (got < len) {
		r = read(ch->fd, (char *)buf + got, len - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN) {
			if ((x = wait_fd(ch, POLLIN, deadline)) != XC_OK)
				return x;
			continue;
		}
		if (r <= 0)
			return XC_DIED;
		got += (size_t)r;
	}
	return XC_OK;
}

/* Sends the request, receives the answer. XC_OK with *resp filled. */
static int exchange(srv_child_t *ch, const srv_job_t *job, const char *payload, size_t len, int stale,
		    child_resp_t *resp, char **out)
{
	long long deadline = srv_now_ms() + ch->ctx->cfg.worker_time_limit_s * 1000LL;
	child_req_t q = { .len = (uint32_t)len, .peer = job->peer, .stale = (uint32_t)stale };
	srv_ctx_t *ctx = ch->ctx;
	int x;

	q.counters[0] = __atomic_load_n(&ctx->n_requests, __ATOMIC_RELAXED);
	q.counters[1] = __atomic_load_n(&ctx->n_errors, __ATOMIC_RELAXED);
	q.counters[2] = __atomic_load_n(&ctx->n_connections, __ATOMIC_RELAXED);
	q.counters[3] = __atomic_load_n(&ctx->n_rejected, __ATOMIC_RELAXED);
	q.counters[4] = __atomic_load_n(&ctx->n_parses, __ATOMIC_RELAXED);
	pthread_mutex_lock(&ctx->ib_lock);
	q.reload = ctx->last_reload;
	pthread_mutex_unlock(&ctx->ib_lock);
	ch->shm->type[0] = ch->shm->id[0] = 0;
	if ((x = send_all(ch, &q, sizeof(q), payload, len, deadline)) != XC_OK)
		return x;
	if ((x = recv_all(ch, resp, sizeof(*resp), deadline)) != XC_OK)
		return x;
	if (resp->kind < RESP_OK || resp->kind > RESP_STALE || resp->len > RM_FRAME_MAX_HARD + RM_FRAME_HEADER)
		return XC_DIED;
	__atomic_add_fetch(&ctx->n_parses, resp->parses, __ATOMIC_RELAXED);
	if (!resp->len)
		return XC_OK;
	if (!(*out = malloc(resp->len)))
		return XC_DIED;
	if ((x = recv_all(ch, *out, resp->len, deadline)) != XC_OK) {
		free(*out);
		*out = NULL;
	}
	return x;
}

/* The error a died or overrun child leaves its request, logged once with the peer's uid. */
static json_t *failure(srv_child_t *ch, const srv_job_t *job, int x)
{
	const srv_config_t *cfg = &ch->ctx->cfg;
	const char *type = ch->shm->type[0] ? ch->shm->type : "a";
	json_t *id = ch->shm->id[0] ? json_loads(ch->shm->id, JSON_DECODE_ANY, NULL) : json_incref(job->id), *e;
	pid_t pid = ch->pid;
	long rss = 0;
	int st = child_end(ch, 1, &rss), sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	char why[160];

	if (x == XC_TIMEOUT || sig == SIGXCPU) {
		snprintf(why, sizeof(why), "took more than worker_%s_limit (%d s %s)", sig == SIGXCPU ? "cpu" : "time",
			 sig == SIGXCPU ? cfg->worker_cpu_limit_s : cfg->worker_time_limit_s,
			 sig == SIGXCPU ? "of CPU" : "wall-clock");
		e = rm_proto_error(id, RM_ERR_TIMEOUT, "the %s request %s: its worker process was stopped", type, why);
	} else {
		if (sig)
			snprintf(why, sizeof(why), "died of signal %d (SIG%s: %s)", sig,
				 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", strsignal(sig));
		else if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_NOMEM)
			snprintf(why, sizeof(why), "ran out of memory");
		else
			snprintf(why, sizeof(why), "exited with status %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		e = rm_proto_error(id, RM_ERR_INTERNAL,
				   "the worker process running this %s request %s (peak memory "
				   "%ld MiB, worker_memory_limit %zu MiB); the daemon goes on with a fresh one",
				   type, why, rss / 1024, cfg->worker_memory_limit >> 20);
	}
	srv_log(SRV_LOG_WARNING, "%s request of uid %u (pid %d): worker process %d %s; replaced", type,
		(unsigned)job->peer.uid, (int)job->peer.pid, (int)pid, why);
	json_decref(id);
	return e;
}

int srv_child_run(srv_child_t *ch, srv_job_t *job)
{
	child_resp_t resp = { 0 };
	char *dumped = NULL, *out = NULL;
	const char *payload = job->payload;
	size_t len = job->payload_len;
	json_t *e;
	int x;

	/* A child older than the published model still parses requests and hands back the ones that run in
	 * the daemon (register, reload...): only a request that needs the model forks a child that holds it,
	 * so a burst of registrations (a new model each) costs no fork of the daemon each. */
	int stale = ch->pid > 0 && ch->generation != current_generation(ch->ctx);

	if (!payload && job->text) /* parsed on the loop: the child gets the frame's own text */
		payload = job->text, len = job->text_len;
	if (!payload) { /* a request that does not come from a frame */
		if (!(dumped = json_dumps(job->req, JSON_COMPACT)))
			return SRV_CHILD_DELEGATE;
		payload = dumped;
		len = strlen(dumped);
	}
	if (stale && (job->flags & SRV_REQ_ISOLATED) && job->flags > 0) {
		child_end(ch, 1, NULL); /* it needs the model: a child that holds the newer one parses it, once */
		stale = 0;
	}
	if (srv_child_start(ch) < 0)
		x = XC_DIED;
	else
		x = exchange(ch, job, payload, len, stale, &resp, &out);
	if (x == XC_OK && resp.kind == RESP_STALE) {
		child_end(ch, 1, NULL); /* a newer model was published: fork a child that holds it */
		x = srv_child_start(ch) < 0 ? XC_DIED : exchange(ch, job, payload, len, 0, &resp, &out);
	}
	free(dumped);
	if (x == XC_STOPPED)
		return SRV_CHILD_STOPPED;
	if (x == XC_OK && resp.kind == RESP_DELEGATE)
		return SRV_CHILD_DELEGATE;
	if (x == XC_OK) {
		job->out = out;
		job->out_len = resp.len;
	} else {
		e = ch->pid > 0 ? failure(ch, job, x)
				: rm_proto_error(job->id, RM_ERR_INTERNAL, "no worker process could be started");
		job->out = rm_frame_encode(e, &job->out_len);
		json_decref(e);
		srv_child_start(ch); /* the next request finds a fresh child */
	}
	if (x != XC_OK || resp.kind == RESP_ERROR)
		__atomic_add_fetch(&ch->ctx->n_errors, 1, __ATOMIC_RELAXED);
	if (x == XC_OK && resp.kind == RESP_ERROR) /* a dead worker process was logged by failure() */
		srv_log_refused_frame(ch->shm->type[0] ? ch->shm->type : NULL, &job->peer, job->out, job->out_len);
	return SRV_CHILD_DONE;
}
