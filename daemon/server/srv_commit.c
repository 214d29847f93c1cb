/*
 * daemon/server/srv_commit.c: registrations made durable together (group commit).
 *
 * A `register` is checked and parsed into the pool by the worker that runs it (srv_req_register), which
 * then writes the node's XML to a temporary file of its own (srv_state_stage) and queues it here; the
 * worker goes on to its next job and the client waits. One thread, the committer, takes every
 * registration queued as one batch: every file fsync'ed (by SRV_COMMIT_SYNCERS threads at once) and
 * renamed into place, the registrations directory fsync'ed once, the registrations recorded, the model
 * updated once (srv_model_update, which writes state.json once), and only then is each registration of
 * the batch answered. Registrations that arrive while a batch commits make the next one, so a burst
 * (slurmd starting on every node) costs about one fsync per registration instead of three, and the
 * workers keep parsing while the disk syncs. A client is never answered before its registration is
 * durable (or told it is not: "saved": false and why).
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
/* threads that fsync the files of a batch together: a disk serves concurrent fsyncs far faster than
 * the same ones in turn (7.3 ms a file in turn, 1.6 ms with 8 at once, on the 2-core test machine's disk
 * while other work wrote to it) */
#define SRV_COMMIT_SYNCERS 8

typedef struct item {
	struct item *next;
	srv_job_t *job;   /* answered through srv_job_complete; NULL: answered by the handler */
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
	/* the files of the batch being synced: [next, n) not taken yet, left not synced yet (under slock) */
	pthread_mutex_t slock;
	pthread_cond_t work;   /* syncers wait here */
	pthread_cond_t synced; /* the committer waits here */
	srv_staged_t **sfiles;
	rm_error_t **serrs;
	size_t snext, sn, sleft;
	int sstop;
	int nsyncers;
	pthread_t syncer[SRV_COMMIT_SYNCERS];
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

/* Takes the next file of the batch and syncs it, until none is left to take (caller holds slock). */
static void sync_some(srv_commit_t *c)
{
	size_t i;

	while (c->snext < c->sn) {
		i = c->snext++;
		pthread_mutex_unlock(&c->slock);
		srv_state_sync(c->sfiles[i], c->serrs[i]); /* a file staged with an error is left as it is */
		pthread_mutex_lock(&c->slock);
		if (--c->sleft == 0)
			pthread_cond_signal(&c->synced);
	}
}

static void *syncer(void *arg)
{
	srv_commit_t *c = arg;

	pthread_mutex_lock(&c->slock);
	while (!c->sstop) {
		sync_some(c);
		if (!c->sstop)
			pthread_cond_wait(&c->work, &c->slock);
	}
	pthread_mutex_unlock(&c->slock);
	return NULL;
}

/* Syncs files[0..n): with the syncers (c not NULL), all at once, else in turn. */
static void sync_all(srv_commit_t *c, srv_staged_t **files, rm_error_t **errs, size_t n)
{
	size_t i;

	if (!c || !c->nsyncers || n < 2) {
		for (i = 0; i < n; i++)
			srv_state_sync(files[i], errs[i]);
		return;
	}
	pthread_mutex_lock(&c->slock);
	c->sfiles = files;
	c->serrs = errs;
	c->snext = 0;
	c->sn = c->sleft = n;
	for (i = 1; i < n && i <= (size_t)c->nsyncers; i++) /* as many as there are files beyond ours */
		pthread_cond_signal(&c->work);
	sync_some(c); /* the committer takes its share */
	while (c->sleft)
		pthread_cond_wait(&c->synced, &c->slock);
	c->sn = c->snext = 0;
	c->sfiles = NULL;
	c->serrs = NULL;
	pthread_mutex_unlock(&c->slock);
}

static int by_seq(const void *a, const void *b)
{
	unsigned long x = (*(item_t *const *)a)->seq, y = (*(item_t *const *)b)->seq;

	return x < y ? -1 : x > y;
}

/* Commits v[0..n) (in pool order: a host registered twice keeps its later registration), updates the
 * model once, and answers each. */
static void commit_batch(srv_ctx_t *ctx, srv_commit_t *c, item_t **v, size_t n, srv_staged_t **files, rm_error_t **errs)
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
	sync_all(c, files, errs, n);                        /* every file's data durable, at once */
	srv_state_place_registrations(ctx, files, n, errs); /* renamed, the directory fsync'ed once */
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
			srv_job_complete(it->job, resp);
			free(it);
		} else {
			it->resp = resp;
		}
	}
	srv_model_put(m);
}

/* Commits a batch taken from the queue (a list of n), in one go when memory allows. */
static void commit_list(srv_commit_t *c, item_t *list, size_t n)
{
	item_t **v = calloc(n, sizeof(*v)), *next;
	srv_staged_t **files = calloc(n, sizeof(*files));
	rm_error_t **errs = calloc(n, sizeof(*errs));
	size_t i = 0;

	if (v && files && errs) {
		for (; list; list = list->next)
			v[i++] = list;
		commit_batch(c->ctx, c, v, i, files, errs);
	} else {
		for (; list; list = next) { /* out of memory: one by one */
			item_t *one = list;
			srv_staged_t *f;
			rm_error_t *e;
			next = list->next;
			commit_batch(c->ctx, c, &one, 1, &f, &e);
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
		commit_list(c, batch, n);
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static void destroy(srv_commit_t *c)
{
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	pthread_cond_destroy(&c->space);
	pthread_mutex_destroy(&c->slock);
	pthread_cond_destroy(&c->work);
	pthread_cond_destroy(&c->synced);
	free(c);
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
	pthread_mutex_init(&c->slock, NULL);
	pthread_cond_init(&c->work, NULL);
	pthread_cond_init(&c->synced, NULL);
	if ((e = pthread_create(&c->th, NULL, committer, c))) {
		rm_error_set(err, "registrations", 0, 0, "pthread_create: %s", strerror(e));
		destroy(c);
		return NULL;
	}
	while (c->nsyncers < SRV_COMMIT_SYNCERS && /* fewer syncers (none): the committer syncs more itself */
	       pthread_create(&c->syncer[c->nsyncers], NULL, syncer, c) == 0)
		c->nsyncers++;
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
	pthread_mutex_lock(&c->slock);
	c->sstop = 1;
	pthread_cond_broadcast(&c->work);
	pthread_mutex_unlock(&c->slock);
	while (c->nsyncers > 0) /* idle now: nothing left to sync */
		if (pthread_timedjoin_np(c->syncer[--c->nsyncers], NULL, deadline) != 0)
			return -1;
	destroy(c);
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
	if (c && (it->job = srv_job_defer())) {
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
	commit_batch(ctx, NULL, &it, 1, &f, &e);
	resp = it->resp;
	free(it);
	return resp;
}
