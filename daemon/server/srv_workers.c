/*
 * daemon/server/srv_workers.c: a small pool of threads running the requests that take time (map, report,
 * register, reload, ...), so that the event loop keeps answering ping and accepting clients.
 * Jobs go in through the fair scheduler (srv_sched.c: one queue per user, served in turn by n regular
 * workers, and one reserve worker beyond them for users with nothing running while all n are busy);
 * finished jobs come back through a list and an eventfd that wakes the loop. With isolation = process, each thread owns a worker process (srv_child.c) and hands it
 * the requests that run engines; the rest (register, reload, hosts, internal jobs) run in the thread.
 * Stopping never waits on a stuck request: a second eventfd wakes threads waiting on their process,
 * which is killed, and threads busy in the daemon itself get SRV_STOP_WAIT_MS.
 * A handler may defer its job (srv_job_defer of srv_defer.c: `register`, answered by the committer of srv_commit.c
 * once its batch is durable); the worker then takes its next job, and the job comes back to the loop
 * when it is answered. The committer starts and stops with the pool.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "rm_client.h"
#include "srv.h"

typedef struct worker {
	struct srv_workers *w;
	pthread_t th;
	srv_child_t *child; /* isolation = process: this thread's worker process */
	int reserve;        /* the reserve worker (the last one) */
} worker_t;

struct srv_workers {
	srv_ctx_t *ctx;
	pthread_mutex_t lock;
	pthread_cond_t cond;  /* regular workers wait here */
	pthread_cond_t rcond; /* the reserve worker waits here */
	srv_sched_t *sched;   /* queued and running jobs */
	srv_job_t *done;      /* finished, newest first */
	int pending;
	int stopping;
	int efd;
	int stop_fd;  /* eventfd, readable once stopping */
	int nthreads; /* started, the reserve (the last of n + 1) included */
	worker_t *wk; /* [n + 1] */
};

void srv_job_free(srv_job_t *job)
{
	if (!job)
		return;
	json_decref(job->req);
	json_decref(job->id);
	free(job->payload);
	free(job->text);
	free(job->out);
	free(job);
}

/* Parses a raw frame, checks its envelope and finds its handler (all off the event loop). */
static json_t *parse_and_run(srv_workers_t *w, srv_job_t *job)
{
	rm_error_t err = { 0 };
	char buf[RM_ERROR_TEXT_LEN + 64];
	json_t *resp = NULL;
	int flags = 0;

	job->req = srv_frame_parse(w->ctx, job->payload, job->payload_len, &err);
	free(job->payload);
	job->payload = NULL;
	if (!job->req)
		return rm_proto_error(NULL, RM_ERR_BAD_FRAME, "%s", rm_error_format(&err, buf, sizeof(buf)));
	job->handler = srv_request_lookup(w->ctx, job->req, &job->peer, &flags, &resp);
	if (!job->handler)
		return resp;
	return job->handler(w->ctx, job->req, json_object_get(job->req, "id"), &job->peer);
}

/* Encodes resp (stolen) as the job's answer; counts and logs a refusal. */
static void answer(srv_workers_t *w, srv_job_t *job, json_t *resp)
{
	if (!resp)
		resp = rm_proto_error(job->id, RM_ERR_INTERNAL, "the request could not be answered");
	if (json_is_false(json_object_get(resp, "ok"))) {
		__atomic_add_fetch(&w->ctx->n_errors, 1, __ATOMIC_RELAXED);
		srv_log_refused(json_string_value(json_object_get(job->req, "type")), &job->peer, resp);
	}
	job->out = rm_frame_encode(resp, &job->out_len);
	json_decref(resp);
	json_decref(job->req); /* freed here, not on the event loop */
	json_decref(job->id);
	job->req = job->id = NULL;
}

/* Hands a finished job back to the loop (caller holds w->lock). */
static void give_back(srv_workers_t *w, srv_job_t *job)
{
	uint64_t one = 1;

	job->next = w->done;
	w->done = job;
	if (write(w->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		srv_log(SRV_LOG_ERR, "eventfd write: %s", strerror(errno));
}

/* A deferred job's answer (job->complete, called through srv_job_complete from any thread). */
static void complete(srv_job_t *job, json_t *resp)
{
	srv_workers_t *w = job->pool;

	answer(w, job, resp);
	pthread_mutex_lock(&w->lock);
	if (--job->holds == 0)
		give_back(w, job);
	pthread_mutex_unlock(&w->lock);
}

/* Runs a job; returns -1 when the pool stopped while the job's worker process had it, 1 when its handler
 * deferred it (srv_job_defer). */
static int run_job(worker_t *wk, srv_job_t *job)
{
	srv_workers_t *w = wk->w;
	json_t *resp;

	if (job->internal) {
		job->internal(w->ctx);
		return 0;
	}
	if (wk->child && job->payload && !job->flags) /* a large frame: one that runs here is parsed here only */
		job->flags = srv_request_peek(job->payload, job->payload_len);
	if (wk->child &&
	    (job->payload ? job->flags < 0 || (job->flags & SRV_REQ_ISOLATED) : (job->flags & SRV_REQ_ISOLATED))) {
		switch (srv_child_run(wk->child, job)) {
		case SRV_CHILD_STOPPED: return -1;
		case SRV_CHILD_DONE:
			free(job->payload);
			job->payload = NULL;
			return 0;
		default: /* SRV_CHILD_DELEGATE: runs here */ break;
		}
	}
	free(job->text); /* the worker process had it, or it runs here on job->req */
	job->text = NULL;
	job->pool = w;
	job->complete = complete;
	srv_job_running(job);
	resp = job->payload ? parse_and_run(w, job) : job->handler(w->ctx, job->req, job->id, &job->peer);
	if (srv_job_ran()) { /* deferred, answered by srv_job_complete (maybe already): not ours to touch */
		json_decref(resp);
		return 1;
	}
	answer(w, job, resp);
	return 0;
}

static void *worker_main(void *arg)
{
	worker_t *wk = arg;
	srv_workers_t *w = wk->w;
	srv_job_t *job = NULL;
	int rc;

	if (wk->child)
		srv_child_start(wk->child); /* forked by this thread: the process dies with it */
	for (;;) {
		pthread_mutex_lock(&w->lock);
		while (!w->stopping && !(job = srv_sched_pop(w->sched, wk->reserve)))
			pthread_cond_wait(wk->reserve ? &w->rcond : &w->cond, &w->lock);
		if (w->stopping) {
			pthread_mutex_unlock(&w->lock);
			break;
		}
		if (srv_sched_reserve_wanted(w->sched)) /* this was the last free regular worker */
			pthread_cond_signal(&w->rcond);
		pthread_mutex_unlock(&w->lock);

		if ((rc = run_job(wk, job)) < 0) {
			srv_job_free(job); /* stopping: the scheduler is not used any more */
			break;
		}

		pthread_mutex_lock(&w->lock);
		srv_sched_done(w->sched, job); /* a deferred job no longer holds a worker */
		if (rc == 0 || --job->holds == 0)
			give_back(w, job);
		pthread_cond_broadcast(&w->cond); /* a job held back by max_workers_per_uid may start */
		pthread_mutex_unlock(&w->lock);
	}
	srv_child_free(wk->child);
	wk->child = NULL;
	return NULL;
}

srv_workers_t *srv_workers_start(srv_ctx_t *ctx, int n, rm_error_t *err)
{
	srv_workers_t *w = calloc(1, sizeof(*w));
	int i, e;

	if (!w || !(w->wk = calloc((size_t)n + 1, sizeof(worker_t)))) {
		free(w);
		rm_error_set(err, "workers", 0, 0, "no memory");
		return NULL;
	}
	w->ctx = ctx;
	if (!(w->sched = srv_sched_create(n, ctx->cfg.max_workers_per_uid))) {
		free(w->wk);
		free(w);
		rm_error_set(err, "workers", 0, 0, "no memory");
		return NULL;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	pthread_cond_init(&w->rcond, NULL);
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	w->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->efd < 0 || w->stop_fd < 0) {
		rm_error_set(err, "workers", 0, 0, "eventfd: %s", strerror(errno));
		srv_workers_stop(w);
		return NULL;
	}
	if (!(ctx->commit = srv_commit_start(ctx, err))) {
		srv_workers_stop(w);
		return NULL;
	}
	for (i = 0; i <= n; i++) { /* n regular workers, then the reserve */
		w->wk[i].w = w;
		w->wk[i].reserve = i == n;
		if (ctx->cfg.isolation == SRV_ISOLATE_PROCESS &&
		    !(w->wk[i].child = srv_child_new(ctx, w->stop_fd, err))) {
			srv_workers_stop(w);
			return NULL;
		}
		if ((e = pthread_create(&w->wk[i].th, NULL, worker_main, &w->wk[i]))) {
			rm_error_set(err, "workers", 0, 0, "pthread_create: %s", strerror(e));
			srv_child_free(w->wk[i].child);
			w->wk[i].child = NULL;
			srv_workers_stop(w);
			return NULL;
		}
		w->nthreads = i + 1;
	}
	return w;
}

int srv_workers_notify_fd(srv_workers_t *w, int *fd)
{
	*fd = w->efd;
	return 0;
}

void srv_workers_submit(srv_workers_t *w, srv_job_t *job)
{
	pthread_mutex_lock(&w->lock);
	srv_sched_push(w->sched, job);
	w->pending++;
	pthread_cond_signal(&w->cond);
	if (srv_sched_reserve_wanted(w->sched)) /* every regular worker is busy: a newcomer's job */
		pthread_cond_signal(&w->rcond);
	pthread_mutex_unlock(&w->lock);
}

srv_job_t *srv_workers_done(srv_workers_t *w)
{
	srv_job_t *list, *rev = NULL, *next;
	uint64_t v;
	int n = 0;

	if (read(w->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		srv_log(SRV_LOG_ERR, "eventfd read: %s", strerror(errno));
	pthread_mutex_lock(&w->lock);
	list = w->done;
	w->done = NULL;
	for (; list; list = next, n++) { /* back to submission order */
		next = list->next;
		list->next = rev;
		rev = list;
	}
	w->pending -= n;
	pthread_mutex_unlock(&w->lock);
	return rev;
}

int srv_workers_pending(srv_workers_t *w)
{
	int n;

	pthread_mutex_lock(&w->lock);
	n = w->pending;
	pthread_mutex_unlock(&w->lock);
	return n;
}

/* Waits for the threads until SRV_STOP_WAIT_MS from now, then for the committer of registrations (which
 * answers what the workers queued). Returns how many are still running; their worker processes are
 * killed (the thread is busy in the daemon, not with them). */
static int join_threads(srv_workers_t *w)
{
	struct timespec dl;
	pid_t pid;
	int i, left = 0;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_nsec += SRV_STOP_WAIT_MS * 1000000L;
	dl.tv_sec += dl.tv_nsec / 1000000000L;
	dl.tv_nsec %= 1000000000L;
	for (i = 0; i < w->nthreads; i++) {
		if (pthread_timedjoin_np(w->wk[i].th, NULL, &dl) == 0)
			continue;
		left++;
		if ((pid = srv_child_pid(w->wk[i].child)) > 0)
			kill(pid, SIGKILL);
	}
	if (left)
		return left;
	if (srv_commit_stop(w->ctx->commit, &dl) < 0)
		return 1; /* the committer, still syncing */
	w->ctx->commit = NULL;
	return 0;
}

int srv_workers_stop(srv_workers_t *w)
{
	srv_job_t *j, *next;
	uint64_t one = 1;
	int left;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_cond_broadcast(&w->rcond);
	pthread_mutex_unlock(&w->lock);
	if (w->stop_fd >= 0 && write(w->stop_fd, &one, sizeof(one)) < 0)
		srv_log(SRV_LOG_ERR, "eventfd write: %s", strerror(errno));
	if ((left = join_threads(w))) {
		srv_log(SRV_LOG_WARNING, "%d worker thread%s still running a request after %d ms: not waiting", left,
			left > 1 ? "s are" : " is", SRV_STOP_WAIT_MS);
		return -1;
	}
	for (j = srv_sched_drain(w->sched); j; j = next) {
		next = j->next;
		srv_job_free(j);
	}
	srv_sched_destroy(w->sched);
	for (j = w->done; j; j = next) {
		next = j->next;
		srv_job_free(j);
	}
	if (w->efd >= 0)
		close(w->efd);
	if (w->stop_fd >= 0)
		close(w->stop_fd);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	pthread_cond_destroy(&w->rcond);
	free(w->wk);
	free(w);
	return 0;
}
