/*
 * daemon/srv_workers.c: a small pool of threads running the requests that take time (map, report,
 * register, reload, ...), so that the event loop keeps answering ping and accepting clients.
 * Jobs go in through a FIFO; finished jobs come back through a second list and an eventfd that wakes
 * the loop.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "rm_client.h"
#include "srv.h"

struct srv_workers {
	srv_ctx_t *ctx;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	srv_job_t *head, *tail;    /* queued */
	srv_job_t *done;           /* finished, newest first */
	int pending;
	int stopping;
	int efd;
	int nthreads;
	pthread_t *threads;
};

void srv_job_free(srv_job_t *job)
{
	if (!job)
		return;
	json_decref(job->req);
	json_decref(job->id);
	free(job->payload);
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

	job->req = rm_frame_parse(job->payload, job->payload_len, &err);
	free(job->payload);
	job->payload = NULL;
	if (!job->req)
		return rm_proto_error(NULL, RM_ERR_BAD_FRAME, "%s", rm_error_format(&err, buf, sizeof(buf)));
	job->handler = srv_request_lookup(w->ctx, job->req, &job->peer, &flags, &resp);
	if (!job->handler)
		return resp;
	return job->handler(w->ctx, job->req, json_object_get(job->req, "id"), &job->peer);
}

static void run_job(srv_workers_t *w, srv_job_t *job)
{
	json_t *resp;

	if (job->internal) {
		job->internal(w->ctx);
		return;
	}
	resp = job->payload ? parse_and_run(w, job) : job->handler(w->ctx, job->req, job->id, &job->peer);
	if (!resp)
		resp = rm_proto_error(job->id, RM_ERR_INTERNAL, "the request could not be answered");
	if (json_is_false(json_object_get(resp, "ok")))
		__atomic_add_fetch(&w->ctx->n_errors, 1, __ATOMIC_RELAXED);
	job->out = rm_frame_encode(resp, &job->out_len);
	json_decref(resp);
	json_decref(job->req); /* freed here, not on the event loop */
	json_decref(job->id);
	job->req = job->id = NULL;
}

static void *worker_main(void *arg)
{
	srv_workers_t *w = arg;
	srv_job_t *job;
	uint64_t one = 1;

	for (;;) {
		pthread_mutex_lock(&w->lock);
		while (!w->head && !w->stopping)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stopping) {
			pthread_mutex_unlock(&w->lock);
			return NULL;
		}
		job = w->head;
		w->head = job->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->lock);

		run_job(w, job);

		pthread_mutex_lock(&w->lock);
		job->next = w->done;
		w->done = job;
		pthread_mutex_unlock(&w->lock);
		if (write(w->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			srv_log(SRV_LOG_ERR, "eventfd write: %s", strerror(errno));
	}
}

srv_workers_t *srv_workers_start(srv_ctx_t *ctx, int n, rm_error_t *err)
{
	srv_workers_t *w = calloc(1, sizeof(*w));
	int i;

	if (!w || !(w->threads = calloc((size_t)n, sizeof(pthread_t)))) {
		free(w);
		rm_error_set(err, "workers", 0, 0, "no memory");
		return NULL;
	}
	w->ctx = ctx;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->efd < 0) {
		rm_error_set(err, "workers", 0, 0, "eventfd: %s", strerror(errno));
		free(w->threads);
		free(w);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		int e = pthread_create(&w->threads[i], NULL, worker_main, w);
		if (e) {
			rm_error_set(err, "workers", 0, 0, "pthread_create: %s", strerror(e));
			w->nthreads = i;
			srv_workers_stop(w);
			return NULL;
		}
	}
	w->nthreads = n;
	return w;
}

int srv_workers_notify_fd(srv_workers_t *w, int *fd)
{
	*fd = w->efd;
	return 0;
}

void srv_workers_submit(srv_workers_t *w, srv_job_t *job)
{
	job->next = NULL;
	pthread_mutex_lock(&w->lock);
	if (w->tail)
		w->tail->next = job;
	else
		w->head = job;
	w->tail = job;
	w->pending++;
	pthread_cond_signal(&w->cond);
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

void srv_workers_stop(srv_workers_t *w)
{
	srv_job_t *j, *next;
	int i;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	for (i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	for (j = w->head; j; j = next) {
		next = j->next;
		srv_job_free(j);
	}
	for (j = w->done; j; j = next) {
		next = j->next;
		srv_job_free(j);
	}
	close(w->efd);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w->threads);
	free(w);
}
