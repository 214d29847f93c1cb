/*
 * tests/unit/test_daemon_sched.c: rankmapd's fair service (daemon/server/srv_sched.c). Worked cases first:
 * the attack of issue 24 (user A keeps two long maps going; B's map must start at once), round robin
 * between users, max_workers_per_uid, one worker, internal jobs first, draining. Then a long random
 * run of arrivals and completions for many users and pool sizes, each decision checked against the
 * rule stated in srv.h, worked out here from a plain list of every job: the job started belongs to a
 * user with the fewest jobs running among those with jobs waiting and is that user's oldest; the last
 * free worker goes only to a user with nothing running; no user runs more than its cap; no worker stays
 * idle while a job that the rule allows waits; every job starts exactly once.
 */
#include "tests/harness.h"

#include "daemon/server/srv_sched.c"

#define MAXJ 20000

static srv_job_t jobs[MAXJ];
static int njobs;

static srv_job_t *job(uid_t uid)
{
	srv_job_t *j = &jobs[njobs++];

	memset(j, 0, sizeof(*j));
	j->conn_id = (uint64_t)njobs; /* a connection: a user's job */
	j->peer.uid = uid;
	return j;
}

static uid_t uid_of(const srv_job_t *j)
{
	return j ? j->peer.uid : (uid_t)-1;
}

static void test_issue_case(void)
{
	srv_sched_t *s = srv_sched_create(2, 0);
	srv_job_t *a1, *a2, *b1, *b2, *got;

	njobs = 0;
	a1 = job(1000), a2 = job(1000);
	srv_sched_push(s, a1);
	srv_sched_push(s, a2);
	check(srv_sched_pop(s) == a1, "A's first map starts");
	check(srv_sched_pop(s) == NULL, "A's second map waits: the last free worker is kept for others");
	b1 = job(2000);
	srv_sched_push(s, b1);
	check(srv_sched_pop(s) == b1, "B's map starts at once although A's second was queued first");
	b2 = job(2000);
	srv_sched_push(s, b2);
	srv_sched_done(s, b1);
	got = srv_sched_pop(s);
	check(got == b2, "the freed worker goes to B (nothing running) before A (one running): uid %d",
	      (int)uid_of(got));
	srv_sched_done(s, a1);
	check(srv_sched_pop(s) == a2, "then A's second, once its first ended");
	check(srv_sched_running(s, 1000) == 1 && srv_sched_running(s, 2000) == 1, "one each");
	srv_sched_done(s, a2);
	srv_sched_done(s, b2);
	check(srv_sched_queued(s) == 0 && s->n == 0, "users with nothing left are forgotten (%zu left)", s->n);
	srv_sched_destroy(s);
}

static void test_round_robin(void)
{
	srv_sched_t *s = srv_sched_create(1, 0);
	uid_t order[9];
	int i;

	njobs = 0;
	for (i = 0; i < 3; i++) /* A queues three, then B three, then C three */
		srv_sched_push(s, job(10));
	for (i = 0; i < 3; i++)
		srv_sched_push(s, job(20));
	for (i = 0; i < 3; i++)
		srv_sched_push(s, job(30));
	for (i = 0; i < 9; i++) {
		srv_job_t *j = srv_sched_pop(s);

		order[i] = uid_of(j);
		check(j && srv_sched_pop(s) == NULL, "one worker: one job at a time");
		if (j)
			srv_sched_done(s, j);
	}
	check(order[0] == 10 && order[1] == 20 && order[2] == 30 && order[3] == 10 && order[4] == 20 &&
		      order[5] == 30 && order[8] == 30,
	      "one worker, users served in turn: %u %u %u %u %u %u ...", order[0], order[1], order[2], order[3],
	      order[4], order[5]);
	srv_sched_destroy(s);
}

static void test_cap_and_internal(void)
{
	srv_sched_t *s = srv_sched_create(4, 2);
	srv_job_t *in, *got[4];
	int i;

	njobs = 0;
	for (i = 0; i < 4; i++)
		srv_sched_push(s, job(7));
	check((got[0] = srv_sched_pop(s)) && (got[1] = srv_sched_pop(s)), "two of A's start");
	check(srv_sched_pop(s) == NULL, "max_workers_per_uid 2: the third waits with two workers free");
	in = job(0);
	in->conn_id = 0; /* an internal job (reload) */
	srv_sched_push(s, in);
	check(srv_sched_pop(s) == in, "internal jobs go first");
	srv_sched_push(s, job(0));
	got[2] = srv_sched_pop(s);
	check(uid_of(got[2]) == 0 && got[2]->conn_id, "root is a user like the others: its job takes the free worker");
	srv_sched_done(s, got[0]);
	check(srv_sched_pop(s) == NULL, "A's third waits: one of its jobs ended, but the one free worker is kept");
	srv_sched_done(s, in);
	got[3] = srv_sched_pop(s);
	check(uid_of(got[3]) == 7, "A's third starts once two workers are free");
	srv_job_t *left = srv_sched_drain(s);
	for (i = 0; left; left = left->next)
		i++;
	check(i == 1 && srv_sched_queued(s) == 0, "drain returns the one job still queued (%d)", i);
	srv_sched_destroy(s);
}

/* ---- random run against the rule ---------------------------------------------------------------- */

typedef struct model {
	int state[MAXJ]; /* 0 not yet pushed, 1 queued, 2 running, 3 done */
	long seq[MAXJ];  /* push order */
} model_t;

static int running_of(const model_t *m, uid_t uid)
{
	int i, n = 0;

	for (i = 0; i < njobs; i++)
		n += m->state[i] == 2 && jobs[i].peer.uid == uid;
	return n;
}

/* The fewest jobs running among users with a job queued, or -1 when nothing is queued. */
static int fewest(const model_t *m)
{
	int i, best = -1;

	for (i = 0; i < njobs; i++)
		if (m->state[i] == 1) {
			int r = running_of(m, jobs[i].peer.uid);
			if (best < 0 || r < best)
				best = r;
		}
	return best;
}

static void random_run(int workers, int cap, int users, unsigned seed)
{
	srv_sched_t *s = srv_sched_create(workers, cap);
	static model_t m;
	int effcap = cap > 0 ? cap : workers, running = 0, steps, bad = 0, i;
	long seq = 0;

	srand(seed);
	memset(&m, 0, sizeof(m));
	njobs = 0;
	for (steps = 0; steps < 4000 && !bad; steps++) {
		int op = rand() % 3;

		if (op == 0 && njobs < MAXJ) { /* arrival */
			srv_job_t *j = job((uid_t)(100 + rand() % users));

			m.state[j - jobs] = 1, m.seq[j - jobs] = seq++;
			srv_sched_push(s, j);
		} else if (op == 1 && running) { /* a random running job ends */
			int k = rand() % running, n = 0;

			for (i = 0; i < njobs; i++)
				if (m.state[i] == 2 && n++ == k)
					break;
			m.state[i] = 3;
			running--;
			srv_sched_done(s, &jobs[i]);
		}
		/* free workers take what the rule allows, until it allows nothing */
		for (;;) {
			srv_job_t *j = running < workers ? srv_sched_pop(s) : NULL;
			int f = fewest(&m), idle = workers - running, allowed;

			allowed = f >= 0 && idle > 0 && f < effcap && (f == 0 || workers < 2 || idle >= 2);
			if (!j) {
				if (allowed) {
					fail("workers %d: an idle worker while a job may start (fewest %d, idle %d)",
					     workers, f, idle);
					bad = 1;
				}
				break;
			}
			int k = (int)(j - jobs), r = running_of(&m, j->peer.uid);

			if (m.state[k] != 1 || !allowed || r != f) {
				fail("workers %d: job %d of uid %u started (state %d, its user runs %d, fewest %d, "
				     "idle %d)",
				     workers, k, (unsigned)j->peer.uid, m.state[k], r, f, idle);
				bad = 1;
				break;
			}
			for (i = 0; i < njobs; i++)
				if (m.state[i] == 1 && jobs[i].peer.uid == j->peer.uid && m.seq[i] < m.seq[k]) {
					fail("uid %u: job %d started before its older job %d", (unsigned)j->peer.uid, k,
					     i);
					bad = 1;
				}
			m.state[k] = 2;
			running++;
		}
	}
	for (i = 0; i < njobs && !bad; i++)
		bad = m.state[i] == 2 && running_of(&m, jobs[i].peer.uid) > effcap;
	check(!bad, "workers %d, cap %d, %d users: %d jobs, every start as the rule says", workers, cap, users, njobs);
	srv_job_t *left = srv_sched_drain(s);
	int nleft = 0, queued = 0;

	for (; left; left = left->next)
		nleft++;
	for (i = 0; i < njobs; i++)
		queued += m.state[i] == 1;
	check(nleft == queued, "drain returns every queued job (%d of %d)", nleft, queued);
	srv_sched_destroy(s);
}

int main(void)
{
	test_issue_case();
	test_round_robin();
	test_cap_and_internal();
	random_run(1, 0, 3, 1);
	random_run(2, 0, 2, 2);
	random_run(2, 0, 5, 3);
	random_run(4, 0, 7, 4);
	random_run(4, 2, 7, 5);
	random_run(8, 3, 40, 6);
	random_run(16, 0, 300, 7); /* more users than the hash's first size: it grows */
	return harness_done();
}
