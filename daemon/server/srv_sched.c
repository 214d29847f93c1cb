/*
 * daemon/server/srv_sched.c: which queued job a free worker runs next (fair service between users).
 *
 * Each uid has its own FIFO of jobs. A free regular worker takes the next job of the user that has the
 * fewest jobs running among those with jobs queued; users with equally many running are served in turn
 * (round robin: a user served goes to the back of its new rank). The pool is work-conserving: any
 * regular worker serves any user, so one user alone may use every one of them (a daemon whose only
 * client is slurmd registering hosts at boot, or one big job, runs at full speed).
 * Beside the regular workers there is one reserve worker (srv_workers.c starts worker_threads + 1): it
 * only takes the oldest job of a user with nothing running, and only while every regular worker is busy,
 * so a user whose first request arrives while others keep every regular worker on long work starts at
 * once, never behind them. A user's requests beyond the first wait for a regular worker.
 * max_workers_per_uid (rankmapd.conf, 0: no bound) caps the jobs one user has running, the reserve's
 * included.
 * Internal jobs of the daemon (reload, fabric refresh: no connection) go first, on regular workers, in
 * order. Root and slurm_user are users like the others here.
 *
 * Users with jobs queued sit in ready[r], r being how many jobs they have running (a doubly-linked
 * list each, oldest first): the lowest non-empty list holds the next user, in O(1) amortised per job
 * plus a scan of at most workers + 2 list heads. Users with nothing queued or running are forgotten.
 * No locks: srv_workers.c calls this under its own.
 */
#include <errno.h>
#include <stdlib.h>

#include "srv.h"

typedef struct srv_sched_user {
	uid_t uid;
	struct srv_sched_user *hnext;       /* hash chain */
	struct srv_sched_user *prev, *next; /* in ready[running] while queued > 0 */
	srv_job_t *head, *tail;             /* queued, oldest first */
	int queued, running;
} user_t;

typedef struct rlist {
	user_t *head, *tail;
} rlist_t;

struct srv_sched {
	int workers, max_per_uid;
	int running;              /* jobs on regular workers, internal ones included */
	srv_job_t *reserve_job;   /* the job on the reserve worker, or NULL */
	int queued;               /* jobs queued, internal ones included */
	srv_job_t *ihead, *itail; /* internal jobs */
	rlist_t *ready;           /* [workers + 2]: a user runs at most workers + 1 */
	user_t **tab;             /* hash of users, chained; cap a power of two */
	size_t cap, n;
};

static size_t slot(const srv_sched_t *s, uid_t uid)
{
	return ((size_t)uid * 2654435761u) & (s->cap - 1);
}

srv_sched_t *srv_sched_create(int workers, int max_per_uid)
{
	srv_sched_t *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->workers = workers < 1 ? 1 : workers;
	s->max_per_uid = max_per_uid > 0 ? max_per_uid : s->workers + 1;
	s->cap = 64;
	s->ready = calloc((size_t)s->workers + 2, sizeof(*s->ready));
	s->tab = calloc(s->cap, sizeof(*s->tab));
	if (!s->ready || !s->tab) {
		srv_sched_destroy(s);
		return NULL;
	}
	return s;
}

void srv_sched_destroy(srv_sched_t *s)
{
	size_t i;
	user_t *u, *next;

	if (!s)
		return;
	for (i = 0; s->tab && i < s->cap; i++)
		for (u = s->tab[i]; u; u = next) {
			next = u->hnext;
			free(u);
		}
	free(s->tab);
	free(s->ready);
	free(s);
}

static user_t *find(const srv_sched_t *s, uid_t uid)
{
	user_t *u;

	for (u = s->tab[slot(s, uid)]; u && u->uid != uid; u = u->hnext)
		;
	return u;
}

static void grow(srv_sched_t *s)
{
	size_t oldcap = s->cap, i;
	user_t **old = s->tab, *u, *next;

	if (!(s->tab = calloc(oldcap * 2, sizeof(*s->tab)))) {
		s->tab = old; /* longer chains, still correct */
		return;
	}
	s->cap = oldcap * 2;
	for (i = 0; i < oldcap; i++)
		for (u = old[i]; u; u = next) {
			next = u->hnext;
			u->hnext = s->tab[slot(s, u->uid)];
			s->tab[slot(s, u->uid)] = u;
		}
	free(old);
}

static user_t *get(srv_sched_t *s, uid_t uid)
{
	user_t *u = find(s, uid);

	if (u)
		return u;
	if (s->n + 1 > s->cap)
		grow(s);
	if (!(u = calloc(1, sizeof(*u))))
		return NULL;
	u->uid = uid;
	u->hnext = s->tab[slot(s, uid)];
	s->tab[slot(s, uid)] = u;
	s->n++;
	return u;
}

static void forget(srv_sched_t *s, user_t *u)
{
	user_t **p = &s->tab[slot(s, u->uid)];

	while (*p != u)
		p = &(*p)->hnext;
	*p = u->hnext;
	s->n--;
	free(u);
}

static void ready_add(srv_sched_t *s, user_t *u)
{
	rlist_t *l = &s->ready[u->running];

	u->next = NULL;
	u->prev = l->tail;
	if (l->tail)
		l->tail->next = u;
	else
		l->head = u;
	l->tail = u;
}

static void ready_del(srv_sched_t *s, user_t *u)
{
	rlist_t *l = &s->ready[u->running];

	if (u->prev)
		u->prev->next = u->next;
	else
		l->head = u->next;
	if (u->next)
		u->next->prev = u->prev;
	else
		l->tail = u->prev;
	u->prev = u->next = NULL;
}

/* Appends job to the queue head..tail; u: the user it is queued for (NULL: internal). */
static void job_append(srv_job_t **head, srv_job_t **tail, srv_job_t *job, user_t *u)
{
	job->next = NULL;
	job->sched_user = u;
	if (*tail)
		(*tail)->next = job;
	else
		*head = job;
	*tail = job;
}

void srv_sched_push(srv_sched_t *s, srv_job_t *job)
{
	user_t *u;

	s->queued++;
	if (!job->conn_id || !(u = get(s, job->peer.uid))) { /* internal, or no memory: served first */
		job_append(&s->ihead, &s->itail, job, NULL);
		return;
	}
	job_append(&u->head, &u->tail, job, u);
	if (!u->queued++)
		ready_add(s, u);
}

/* Takes u's oldest job, now running. */
static srv_job_t *take(srv_sched_t *s, user_t *u)
{
	srv_job_t *job;

	ready_del(s, u);
	job = u->head;
	if (!(u->head = job->next))
		u->tail = NULL;
	job->next = NULL;
	u->queued--;
	u->running++;
	if (u->queued)
		ready_add(s, u);
	s->queued--;
	return job;
}

int srv_sched_reserve_wanted(const srv_sched_t *s)
{
	return !s->reserve_job && s->running >= s->workers && s->ready[0].head;
}

srv_job_t *srv_sched_pop(srv_sched_t *s, int reserve)
{
	srv_job_t *job;
	user_t *u = NULL;
	int r;

	if (reserve) /* only a user with nothing running, and only while no regular worker is free */
		return srv_sched_reserve_wanted(s) ? (s->reserve_job = take(s, s->ready[0].head)) : NULL;
	if (s->running >= s->workers)
		return NULL;
	if ((job = s->ihead)) {
		if (!(s->ihead = job->next))
			s->itail = NULL;
		job->next = NULL;
		s->queued--;
		s->running++;
		return job;
	}
	for (r = 0; r < s->max_per_uid && r <= s->workers + 1 && !(u = s->ready[r].head); r++)
		;
	if (!u)
		return NULL; /* nothing queued, or every user with jobs queued is at max_workers_per_uid */
	s->running++;
	return take(s, u);
}

void srv_sched_done(srv_sched_t *s, srv_job_t *job)
{
	user_t *u = job->sched_user;

	if (job == s->reserve_job)
		s->reserve_job = NULL;
	else
		s->running--;
	job->sched_user = NULL;
	if (!u)
		return;
	if (u->queued)
		ready_del(s, u);
	u->running--;
	if (u->queued)
		ready_add(s, u);
	else if (!u->running)
		forget(s, u);
}

srv_job_t *srv_sched_drain(srv_sched_t *s)
{
	srv_job_t *list = NULL, *j, *next;
	size_t i;
	user_t *u;

	for (j = s->ihead; j; j = next) {
		next = j->next;
		j->next = list;
		list = j;
	}
	s->ihead = s->itail = NULL;
	for (i = 0; i < s->cap; i++)
		for (u = s->tab[i]; u; u = u->hnext) {
			for (j = u->head; j; j = next) {
				next = j->next;
				j->sched_user = NULL;
				j->next = list;
				list = j;
			}
			if (u->queued)
				ready_del(s, u);
			u->head = u->tail = NULL;
			u->queued = 0;
		}
	s->queued = 0;
	return list;
}

int srv_sched_running(const srv_sched_t *s, uid_t uid)
{
	const user_t *u = find(s, uid);

	return u ? u->running : 0;
}

int srv_sched_queued(const srv_sched_t *s)
{
	return s->queued;
}
