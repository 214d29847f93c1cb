/*
 * daemon/server/srv_commit.c: registrations made durable together (group commit).
 *
 * A `register` is checked and parsed into the pool by the worker that runs it (srv_req_register), which
 * then writes the node's XML to a temporary file of its own (srv_state_stage) and queues it here; the
 * worker goes on to its next job and the client waits. One thread, the committer, takes every
 * registration queued as one batch: each file fsync'ed and renamed into place, the registrations
 * directory fsync'ed once, the registrations recorded, the model updated once (srv_model_update, which
 * writes state.json once), and only then is each registration of the batch answered. Registrations
 * that arrive while a batch commits make the next one, so a burst (slurmd starting on every node) costs
 * one fsync per file and two or three per batch instead of four per registration, and the workers keep
 * parsing while the disk syncs. A client is never answered before its registration is durable (or
 * told it is not: "saved": false and why).
 *
 * A handler that no worker thread runs (the fuzzers call handlers directly) commits its registration at
 * once, as a batch of one. At most SRV_COMMIT_MAX registrations wait (each holds a file descriptor):
 * beyond that a worker waits for the committer to take them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rm_client.h"
#include "srv.h"

#define SRV_COMMIT_MAX 256

typedef struct item {
	struct item *next;
	srv_job_t *job;   /* answered through srv_workers_complete; NULL: answered by the handler */
	const char *host; /* these three and id are borrowed from the request, alive until the answer */
	const char *xml;
	size_t len;
	const json_t *id;
	srv_peer_t peer;
	unsigned long seq; /* the pool sequence that includes it */
	srv_staged_t file;
	rm_error_t serr; /* why it is not saved */
	json_t *resp;    /* a handler's answer (job NULL) */
} item_t;

struct srv_commit {
	srv_ctx_t *ctx;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;  /* the committer waits for registrations */
	pthread_cond_t space; /* workers wait for room */
	item_t *head, *tail;
	size_t n;
	int stopping;
};

/* Does model m hold host's registration? If not, why goes to why. */
static int host_applied(srv_model_t *m, const char *host, char *why, size_t len)
{
	long h = m ? topo_host_find(m->cluster, host) : -1;
	const char *e = m ? json_string_value(json_object_get(m->reg_ignored, host)) : NULL;

	snprintf(why, len, "%s", e ? e : "the host is not in the model");
	return h >= 0 && topo_host_npus(m->cluster, (size_t)h) > 0 && !e;
}

/* The answer to one registration of a batch whose model update returned rc (err). */
static json_t *answer(item_t *it, srv_model_t *m, int rc, rm_error_t *err, unsigned long gen)
{
	char msg[600], who[128];
	int saved = it->file.ok;
	json_t *resp;

	if (rc < 0)
		return rm_proto_error(it->id, RM_ERR_FAILED, "model rebuild failed: %s",
				      rm_error_format(err, msg, sizeof(msg)));
	if (!host_applied(m, it->host, msg, sizeof(msg))) /* never "ok" for a registration the model ignores */
		return rm_proto_error(it->id, RM_ERR_FAILED, "registration of %s not applied: %s", it->host, msg);
	srv_log(SRV_LOG_INFO, "registered %s (%s)%s", it->host, srv_peer_describe(&it->peer, who, sizeof(who)),
		saved ? "" : " [NOT SAVED]");
	resp = rm_proto_ok(it->id);
	json_object_set_new(resp, "host", json_string(it->host));
	json_object_set_new(resp, "saved", json_boolean(saved));
	if (!saved)
		json_object_set_new(resp, "save_error", json_string(rm_error_format(&it->serr, msg, sizeof(msg))));
	json_object_set_new(resp, "generation", json_integer((json_int_t)gen));
	return resp;
}

static int by_seq(const void *a, const void *b)
{
	unsigned long x = (*(item_t *const *)a)->seq, y = (*(item_t *const *)b)->seq;

	return x < y ? -1 : x > y;
}

/* Commits v[0..n) (in pool order: a host registered twice keeps its later registration), updates the
 * model once, and answers each. */
static void commit_batch(srv_ctx_t *ctx, item_t **v, size_t n, srv_staged_t **files, rm_error_t **errs)
{
	rm_error_t uerr = { 0 };
	unsigned long seq = 0, gen;
	char msg[600];
	srv_model_t *m;
	size_t i;
	int rc;

	qsort(v, n, sizeof(*v), by_seq);
	for (i = 0; i < n; i++) {
		files[i] = &v[i]->file;
		errs[i] = &v[i]->serr;
	}
	srv_state_commit_registrations(ctx, files, n, errs);
	for (i = 0; i < n; i++) {
		item_t *it = v[i];
		if (!it->file.ok) /* keep serving: the registration holds in memory until the next restart */
			srv_log(SRV_LOG_ERR, "registration of %s not saved: %s", it->host,
				rm_error_format(&it->serr, msg, sizeof(msg)));
		srv_reg_put(ctx, it->host, it->file.ok ? it->file.path : NULL, it->xml, it->len);
		if (it->seq > seq)
			seq = it->seq;
	}
	rc = srv_model_update(ctx, seq, &uerr); /* once for the batch */
	m = srv_model_get(ctx);
	pthread_mutex_lock(&ctx->model_lock);
	gen = ctx->generation;
	pthread_mutex_unlock(&ctx->model_lock);
	for (i = 0; i < n; i++) {
		item_t *it = v[i];
		json_t *resp = answer(it, m, rc, &uerr, gen);
		if (it->job) {
			srv_workers_complete(it->job, resp);
			free(it);
		} else {
			it->resp = resp;
		}
	}
	srv_model_put(m);
}

/* Commits a batch taken from the queue (a list of n), in one go when memory allows. */
static void commit_list(srv_ctx_t *ctx, item_t *list, size_t n)
{
	item_t **v = calloc(n, sizeof(*v)), *next;
	srv_staged_t **files = calloc(n, sizeof(*files));
	rm_error_t **errs = calloc(n, sizeof(*errs));
	size_t i = 0;

	if (v && files && errs) {
		for (; list; list = list->next)
			v[i++] = list;
		commit_batch(ctx, v, i, files, errs);
	} else {
		for (; list; list = next) { /* out of memory: one by one */
			item_t *one = list;
			srv_staged_t *f;
			rm_error_t *e;
			next = list->next;
			commit_batch(ctx, &one, 1, &f, &e);
		}
	}
	free(v);
	free(files);
	free(errs);
}

static void *committer(void *arg)
{
	srv_commit_t *c = arg;
	item_t *batch;
	size_t n;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->head && !c->stopping)
			pthread_cond_wait(&c->cond, &c->lock);
		if (!c->head)
			break; /* stopping, and everything queued is committed */
		batch = c->head;
		n = c->n;
		c->head = c->tail = NULL;
		c->n = 0;
		pthread_cond_broadcast(&c->space);
		pthread_mutex_unlock(&c->lock);
		commit_list(c->ctx, batch, n);
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

srv_commit_t *srv_commit_start(srv_ctx_t *ctx, rm_error_t *err)
{
	srv_commit_t *c = calloc(1, sizeof(*c));
	int e;

	if (!c) {
		rm_error_set(err, "registrations", 0, 0, "no memory");
		return NULL;
	}
	c->ctx = ctx;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	pthread_cond_init(&c->space, NULL);
	if ((e = pthread_create(&c->th, NULL, committer, c))) {
		rm_error_set(err, "registrations", 0, 0, "pthread_create: %s", strerror(e));
		pthread_mutex_destroy(&c->lock);
		pthread_cond_destroy(&c->cond);
		pthread_cond_destroy(&c->space);
		free(c);
		return NULL;
	}
	return c;
}

int srv_commit_stop(srv_commit_t *c, const struct timespec *deadline)
{
	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	c->stopping = 1;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (pthread_timedjoin_np(c->th, NULL, deadline) != 0)
		return -1;
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	pthread_cond_destroy(&c->space);
	free(c);
	return 0;
}

json_t *srv_commit_register(srv_ctx_t *ctx, const char *host, const char *xml, size_t len, unsigned long seq,
			    const json_t *id, const srv_peer_t *peer)
{
	srv_commit_t *c = ctx->commit;
	item_t *it = calloc(1, sizeof(*it));
	srv_staged_t *f;
	rm_error_t *e;
	json_t *resp;

	if (!it)
		return rm_proto_error(id, RM_ERR_INTERNAL, "out of memory");
	it->host = host;
	it->xml = xml;
	it->len = len;
	it->id = id;
	it->peer = *peer;
	it->seq = seq;
	srv_state_stage_registration(ctx, host, xml, len, &it->file, &it->serr); /* fd -1 when it failed */
	if (c && (it->job = srv_workers_defer())) {
		pthread_mutex_lock(&c->lock);
		while (c->n >= SRV_COMMIT_MAX)
			pthread_cond_wait(&c->space, &c->lock);
		if (c->tail)
			c->tail->next = it;
		else
			c->head = it;
		c->tail = it;
		c->n++;
		pthread_cond_signal(&c->cond);
		pthread_mutex_unlock(&c->lock);
		return NULL;
	}
	commit_batch(ctx, &it, 1, &f, &e);
	resp = it->resp;
	free(it);
	return resp;
}
