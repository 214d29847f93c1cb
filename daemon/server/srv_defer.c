/*
 * daemon/server/srv_defer.c: deferred answers. A handler that a worker thread runs (srv_workers.c) may
 * defer its job (`register`, answered by the committer of srv_commit.c once its batch is durable): the
 * worker goes on to its next job, and whoever holds the job answers it later through the pool's
 * function (job->complete). Apart from the pool so that the committer, which the pool starts and
 * stops, calls nothing back in it.
 */
#include "srv.h"

/* The job the calling worker thread runs now, or NULL; whether its handler deferred it. */
static __thread srv_job_t *running;
static __thread int deferred;

void srv_job_running(srv_job_t *job)
{
	running = job;
	deferred = 0;
}

int srv_job_ran(void)
{
	running = NULL;
	return deferred;
}

srv_job_t *srv_job_defer(void)
{
	srv_job_t *job = running;

	if (job) {
		job->holds = 2; /* its worker, until the handler returns, and whoever answers it */
		running = NULL;
		deferred = 1;
	}
	return job;
}

void srv_job_complete(srv_job_t *job, json_t *resp)
{
	job->complete(job, resp);
}
