/*
 * daemon/server/srv_auth.c: MUNGE operations of the TCP handshake (protocol version 2, rm_client.h), off
 * the event loop. munge_encode() and munge_decode() are round trips to munged (and libmunge retries a
 * refused connection for about two seconds), so the loop hands each to a small pool of threads and goes
 * on serving; a thread, with its own munge context (MUNGE_OPT_SOCKET = munge_socket), either makes the
 * server's credential for a hello, or decodes the client's credential, checks that its payload is the one
 * expected for that connection and that it is restricted to the daemon's uid, and returns the uid, gid
 * and origin address (MUNGE_OPT_ADDR4), or the reason of the refusal, through a list the loop collects
 * when the eventfd fires. Replays, expired or rewound credentials and those made
 * with another key are refused by munged itself; munged's socket is tried with a non-blocking connect
 * first, so that a dead munged fails at once instead of after libmunge's retries.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <munge.h>

#include "rm_client.h"
#include "srv.h"

#define AUTH_MAX_THREADS 8

_Static_assert(SRV_AUTH_PAYLOAD_MAX >= RM_AUTH_PAYLOAD_MAX, "payload buffer");

struct srv_auth {
	const char *munge_socket;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	srv_auth_job_t *queue, **queue_tail;
	srv_auth_job_t *done;
	int efd;
	int stop;
	int nthreads, running;
	pthread_t th[AUTH_MAX_THREADS];
};

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The reason given for a munge error (the client sees it after "auth: "). */
static const char *refusal(munge_err_t e)
{
	switch (e) {
	case EMUNGE_CRED_REPLAYED: return "credential replayed (each credential is good for one connection)";
	case EMUNGE_CRED_EXPIRED:
		return "credential expired (older than its time-to-live: clock skew between the hosts?)";
	case EMUNGE_CRED_REWOUND: return "credential made in the future (clock skew between the hosts?)";
	case EMUNGE_CRED_INVALID:
	case EMUNGE_BAD_MAC:
	case EMUNGE_BAD_CIPHER:
	case EMUNGE_BAD_ZIP: return "invalid credential (made with another MUNGE key?)";
	case EMUNGE_BAD_CRED:
	case EMUNGE_BAD_VERSION:
	case EMUNGE_BAD_LENGTH: return "malformed MUNGE credential";
	case EMUNGE_BAD_REALM: return "credential of another MUNGE realm";
	case EMUNGE_CRED_UNAUTHORIZED: return "credential restricted to another user";
	case EMUNGE_SOCKET:
	case EMUNGE_TIMEOUT: return "munged on the server cannot be reached";
	default: return "credential refused";
	}
}

/* Whether munged answered the last operation: while it does, no probe (a probe is a connection munged
 * logs as "incomplete message header": one per operation would let a flood write munged's log). */
static int munged_answers;

/* A munge context on munged (checked alive first after munged failed, so that a dead munged fails at
 * once rather than after libmunge's retries), or NULL with job->why set. */
static munge_ctx_t job_ctx(const char *munge_socket, srv_auth_job_t *job)
{
	char path[4096];
	munge_ctx_t c;

	rm_auth_munge_path(munge_socket, path, sizeof(path));
	if (!__atomic_load_n(&munged_answers, __ATOMIC_RELAXED) && rm_auth_munged_alive(path, NULL) < 0) {
		job->munged_down = 1;
		snprintf(job->why, sizeof(job->why), "munged on the server cannot be reached (%.120s: %s)", path,
			 strerror(errno));
		return NULL;
	}
	if (!(c = munge_ctx_create()) || munge_ctx_set(c, MUNGE_OPT_SOCKET, path) != EMUNGE_SUCCESS) {
		if (c)
			munge_ctx_destroy(c);
		snprintf(job->why, sizeof(job->why), "cannot set up a munge context");
		return NULL;
	}
	return c;
}

/* Step 2 of the handshake: the server's credential of job->payload. */
static void encode(munge_ctx_t c, srv_auth_job_t *job)
{
	munge_err_t e = munge_encode(&job->cred, c, job->payload, (int)strlen(job->payload));

	if (e != EMUNGE_SUCCESS) {
		job->munged_down = e == EMUNGE_SOCKET || e == EMUNGE_TIMEOUT;
		snprintf(job->why, sizeof(job->why), "%s (munge: %.80s)",
			 job->munged_down ? "munged on the server cannot be reached"
					  : "the server cannot make its credential",
			 munge_ctx_strerror(c) ? munge_ctx_strerror(c) : munge_strerror(e));
		free(job->cred);
		job->cred = NULL;
		return;
	}
	job->len = strlen(job->cred);
	job->ok = 1;
}

/* Step 5: the client's credential must be job->payload, restricted to our uid. */
static void decode(munge_ctx_t c, srv_auth_job_t *job)
{
	char *cred = malloc(job->len + 1);
	void *payload = NULL;
	int plen = 0;
	uid_t restricted = (uid_t)-1;
	struct in_addr addr = { 0 };
	munge_err_t e;

	if (!cred) {
		snprintf(job->why, sizeof(job->why), "out of memory");
		return;
	}
	memcpy(cred, job->cred, job->len);
	cred[job->len] = '\0';
	e = munge_decode(cred, c, &payload, &plen, &job->uid, &job->gid);
	if (e != EMUNGE_SUCCESS) {
		job->munged_down = e == EMUNGE_SOCKET;
		snprintf(job->why, sizeof(job->why), "%s (munge: %.80s)", refusal(e),
			 munge_ctx_strerror(c) ? munge_ctx_strerror(c) : munge_strerror(e));
	} else if (munge_ctx_get(c, MUNGE_OPT_UID_RESTRICTION, &restricted) != EMUNGE_SUCCESS ||
		   restricted != geteuid()) {
		snprintf(job->why, sizeof(job->why),
			 "credential not restricted to this daemon's uid %u (MUNGE_OPT_UID_RESTRICTION): a client of "
			 "an older protocol?",
			 (unsigned)geteuid());
	} else if (plen != (int)strlen(job->payload) || memcmp(payload, job->payload, (size_t)plen)) {
		if (plen >= (int)strlen(RM_AUTH_CLIENT_PREFIX) &&
		    !memcmp(payload, RM_AUTH_CLIENT_PREFIX, strlen(RM_AUTH_CLIENT_PREFIX)))
			snprintf(job->why, sizeof(job->why),
				 "credential made for another server or connection (its server identity or nonce is "
				 "not this connection's)");
		else
			snprintf(job->why, sizeof(job->why),
				 "credential not made for rankmap (its payload is not "
				 "\"" RM_AUTH_CLIENT_PREFIX "...\")");
	} else {
		job->ok = 1;
		if (munge_ctx_get(c, MUNGE_OPT_ADDR4, &addr) == EMUNGE_SUCCESS)
			job->origin4 = addr.s_addr;
	}
	free(payload);
	free(cred);
}

void srv_auth_run(const char *munge_socket, srv_auth_job_t *job)
{
	long long t0 = now_us();
	munge_ctx_t c;

	job->ok = 0;
	if (!(c = job_ctx(munge_socket, job)))
		return;
	if (job->encode)
		encode(c, job);
	else
		decode(c, job);
	__atomic_store_n(&munged_answers, !job->munged_down, __ATOMIC_RELAXED);
	job->decode_ms = (double)(now_us() - t0) / 1000.0;
	munge_ctx_destroy(c);
}

static void *auth_thread(void *arg)
{
	srv_auth_t *a = arg;
	srv_auth_job_t *j;
	uint64_t one = 1;

	pthread_mutex_lock(&a->lock);
	while (!a->stop) {
		if (!(j = a->queue)) {
			pthread_cond_wait(&a->cond, &a->lock);
			continue;
		}
		if (!(a->queue = j->next))
			a->queue_tail = &a->queue;
		pthread_mutex_unlock(&a->lock);
		srv_auth_run(a->munge_socket, j);
		pthread_mutex_lock(&a->lock);
		j->next = a->done;
		a->done = j;
		if (write(a->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			srv_log(SRV_LOG_ERR, "auth: eventfd: %s", strerror(errno));
	}
	a->running--;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

srv_auth_t *srv_auth_start(const char *munge_socket, int nthreads, rm_error_t *err)
{
	srv_auth_t *a = calloc(1, sizeof(*a));
	int i;

	if (!a)
		return rm_error_set(err, "auth", 0, 0, "out of memory"), NULL;
	a->munge_socket = munge_socket;
	a->queue_tail = &a->queue;
	a->nthreads = nthreads < 1 ? 1 : nthreads > AUTH_MAX_THREADS ? AUTH_MAX_THREADS : nthreads;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	if ((a->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		free(a);
		return rm_error_set(err, "auth", 0, 0, "eventfd: %s", strerror(errno)), NULL;
	}
	for (i = 0; i < a->nthreads; i++) {
		if (pthread_create(&a->th[i], NULL, auth_thread, a) != 0) {
			rm_error_set(err, "auth", 0, 0, "cannot start a thread");
			a->nthreads = i;
			srv_auth_stop(a);
			return NULL;
		}
		pthread_detach(a->th[i]);
		a->running++;
	}
	return a;
}

int srv_auth_notify_fd(const srv_auth_t *a)
{
	return a->efd;
}

void srv_auth_submit(srv_auth_t *a, srv_auth_job_t *job)
{
	job->next = NULL;
	job->queued_us = now_us();
	pthread_mutex_lock(&a->lock);
	*a->queue_tail = job;
	a->queue_tail = &job->next;
	pthread_cond_signal(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

srv_auth_job_t *srv_auth_done(srv_auth_t *a)
{
	srv_auth_job_t *d;
	uint64_t v;

	if (read(a->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		srv_log(SRV_LOG_DEBUG, "auth: eventfd read: %s", strerror(errno));
	pthread_mutex_lock(&a->lock);
	d = a->done;
	a->done = NULL;
	pthread_mutex_unlock(&a->lock);
	return d;
}

void srv_auth_job_free(srv_auth_job_t *job)
{
	if (!job)
		return;
	free(job->cred);
	free(job);
}

static void free_list(srv_auth_job_t *j)
{
	srv_auth_job_t *next;

	for (; j; j = next) {
		next = j->next;
		srv_auth_job_free(j);
	}
}

void srv_auth_stop(srv_auth_t *a)
{
	struct timespec until;
	int left;

	if (!a)
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += SRV_STOP_WAIT_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&a->lock);
	a->stop = 1;
	pthread_cond_broadcast(&a->cond);
	while (a->running > 0 && pthread_cond_timedwait(&a->cond, &a->lock, &until) == 0)
		;
	left = a->running;
	pthread_mutex_unlock(&a->lock);
	if (left) { /* a thread is inside munge_decode: leave a to it (the process is about to exit) */
		srv_log(SRV_LOG_WARNING, "auth: %d thread(s) still waiting on munged at exit", left);
		return;
	}
	free_list(a->queue);
	free_list(a->done);
	close(a->efd);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
