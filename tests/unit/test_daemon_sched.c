/*
 * tests/unit/test_daemon_sched.c: rankmapd's fair service (daemon/server/srv_sched.c). Worked cases first:
 * one user alone uses every regular worker (a daemon with one active user runs at full speed); the attack
 * it answers (user A keeps every regular worker on long maps; B's map must start at once, on the reserve
 * worker); the reserve never serves a user with something running, never an internal job, never while a
 * regular worker is free; round robin between users; max_workers_per_uid (the reserve's job counted);
 * internal jobs first; draining. Then long random runs of arrivals (users' and internal jobs) and
 * completions for many users and pool sizes, each decision checked against the rule stated in srv.h,
 * worked out here from a plain list of every job: a regular worker starts the oldest internal job if any,
 * else the oldest job of a user with the fewest jobs running among those with jobs waiting, below its cap;
 * the reserve starts only the oldest job of a user with nothing running, only while every regular worker
 * is busy; no worker stays idle while a job that the rule allows it waits; no user runs more than its
 * cap; every job starts exactly once.
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

static srv_job_t *internal_job(void)
{
	srv_job_t *j = job(0);

	j->conn_id = 0; /* no connection: the daemon's own (reload, fabric refresh) */
	return j;
}

static uid_t uid_of(const srv_job_t *j)
{
	return j ? j->peer.uid : (uid_t)-1;
}

#define REG 0 /* srv_sched_pop's second argument: a regular worker asks */
#define RES 1 /* the reserve worker asks */

static void test_one_user_alone(void)
{
	srv_sched_t *s = srv_sched_create(4, 0);
	srv_job_t *got[4];
	int i, n = 0;

	njobs = 0;
	for (i = 0; i < 6; i++)
		srv_sched_push(s, job(1000));
	for (i = 0; i < 4; i++)
		n += (got[i] = srv_sched_pop(s, REG)) != NULL && uid_of(got[i]) == 1000;
	check(n == 4, "one user alone: its jobs start on every one of the 4 regular workers (%d did)", n);
	check(srv_sched_pop(s, RES) == NULL, "but not on the reserve: the user has jobs running");
	check(srv_sched_running(s, 1000) == 4, "4 running");
	srv_sched_done(s, got[2]);
	check(srv_sched_pop(s, REG) == &jobs[4], "a freed worker takes its next job, in order");
	srv_job_t *left = srv_sched_drain(s);
	check(left == &jobs[5] && !left->next, "drain: its last job");
	srv_sched_destroy(s);
}

static void test_issue_case(void)
{
	srv_sched_t *s = srv_sched_create(2, 0);
	srv_job_t *a1, *a2, *a3, *b1, *b2, *c1, *in;

	njobs = 0;
	a1 = job(1000), a2 = job(1000), a3 = job(1000);
	srv_sched_push(s, a1);
	srv_sched_push(s, a2);
	srv_sched_push(s, a3);
	check(srv_sched_pop(s, RES) == NULL, "the reserve waits while a regular worker is free");
	check(srv_sched_pop(s, REG) == a1 && srv_sched_pop(s, REG) == a2, "A's two long maps hold both workers");
	check(srv_sched_pop(s, REG) == NULL, "no third regular worker");
	check(srv_sched_pop(s, RES) == NULL, "A's third does not get the reserve: A has maps running");
	check(srv_sched_reserve_wanted(s) == 0, "nothing for the reserve");
	in = internal_job();
	srv_sched_push(s, in);
	check(srv_sched_pop(s, RES) == NULL, "an internal job does not get the reserve either");
	b1 = job(2000);
	srv_sched_push(s, b1);
	check(srv_sched_reserve_wanted(s), "B arrives: the reserve is wanted");
	check(srv_sched_pop(s, RES) == b1, "B's map starts at once on the reserve, although A's third came first");
	b2 = job(2000), c1 = job(3000);
	srv_sched_push(s, b2);
	srv_sched_push(s, c1);
	check(srv_sched_pop(s, RES) == NULL, "the reserve runs one job at a time: C waits");
	srv_sched_done(s, b1);
	check(srv_sched_pop(s, REG) == NULL, "B's end frees no regular worker");
	check(srv_sched_pop(s, RES) == c1, "the reserve goes to C (nothing running), not to B's second");
	srv_sched_done(s, a1);
	check(srv_sched_pop(s, REG) == in, "A's first ends: the internal job goes first");
	srv_sched_done(s, in);
	check(uid_of(srv_sched_pop(s, REG)) == 2000, "then B (nothing running) before A (one running)");
	check(srv_sched_running(s, 1000) == 1 && srv_sched_running(s, 2000) == 1 && srv_sched_running(s, 3000) == 1,
	      "one each");
	srv_sched_done(s, c1);
	srv_sched_done(s, a2);
	check(srv_sched_pop(s, REG) == a3, "A's third once a regular worker is free");
	check(srv_sched_pop(s, RES) == NULL, "the reserve stays idle while a regular worker is free");
	srv_sched_done(s, a3);
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
	for (i = 0; i < 9; i++) { /* the one regular worker only (the reserve left aside) */
		srv_job_t *j = srv_sched_pop(s, REG);

		order[i] = uid_of(j);
		check(j && srv_sched_pop(s, REG) == NULL, "one regular worker: one job at a time");
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
	check((got[0] = srv_sched_pop(s, REG)) && (got[1] = srv_sched_pop(s, REG)), "two of A's start");
	check(srv_sched_pop(s, REG) == NULL, "max_workers_per_uid 2: the third waits with two workers free");
	in = internal_job();
	srv_sched_push(s, in);
	check(srv_sched_pop(s, REG) == in, "internal jobs go first");
	srv_sched_push(s, job(0));
	got[2] = srv_sched_pop(s, REG);
	check(uid_of(got[2]) == 0 && got[2]->conn_id, "root is a user like the others: its job takes the free worker");
	srv_sched_done(s, got[0]);
	got[3] = srv_sched_pop(s, REG);
	check(uid_of(got[3]) == 7, "one of A's ended: its third starts on the freed worker");
	srv_job_t *left = srv_sched_drain(s);
	for (i = 0; left; left = left->next)
		i++;
	check(i == 1 && srv_sched_queued(s) == 0, "drain returns the one job still queued (%d)", i);
	srv_sched_destroy(s);

	s = srv_sched_create(2, 1); /* the reserve's job counts against the cap */
	njobs = 0;
	srv_sched_push(s, job(1));
	srv_sched_push(s, job(2));
	srv_sched_push(s, job(3));
	srv_sched_push(s, job(3));
	check(uid_of(srv_sched_pop(s, REG)) == 1 && uid_of(srv_sched_pop(s, REG)) == 2, "users 1 and 2 on the workers");
	check(uid_of(srv_sched_pop(s, RES)) == 3, "user 3's first on the reserve");
	srv_sched_done(s, &jobs[0]);
	check(srv_sched_pop(s, REG) == NULL, "cap 1: user 3's second waits although a regular worker is free");
	srv_sched_done(s, &jobs[2]);
	check(srv_sched_pop(s, REG) == &jobs[3], "and starts once its first ended");
	srv_sched_destroy(s);
}

/* ---- random run against the rule ---------------------------------------------------------------- */

typedef struct model {
	int state[MAXJ]; /* 0 not yet pushed, 1 queued, 2 running, 3 done */
	int where[MAXJ]; /* running on: REG or RES */
	long seq[MAXJ];  /* push order */
} model_t;

static int running_of(const model_t *m, uid_t uid)
{
	int i, n = 0;

	for (i = 0; i < njobs; i++)
		n += m->state[i] == 2 && jobs[i].conn_id && jobs[i].peer.uid == uid;
	return n;
}

/* The fewest jobs running among users with a job queued, or -1 when no user's job is queued. */
static int fewest(const model_t *m)
{
	int i, best = -1;

	for (i = 0; i < njobs; i++)
		if (m->state[i] == 1 && jobs[i].conn_id) {
			int r = running_of(m, jobs[i].peer.uid);
			if (best < 0 || r < best)
				best = r;
		}
	return best;
}

/* The oldest queued job of uid (internal: conn_id 0), or -1. */
static int oldest(const model_t *m, int internal, uid_t uid)
{
	int i, k = -1;

	for (i = 0; i < njobs; i++)
		if (m->state[i] == 1 && (!jobs[i].conn_id) == internal && (internal || jobs[i].peer.uid == uid) &&
		    (k < 0 || m->seq[i] < m->seq[k]))
			k = i;
	return k;
}

static void random_run(int workers, int cap, int users, unsigned seed)
{
	srv_sched_t *s = srv_sched_create(workers, cap);
	static model_t m;
	int effcap = cap > 0 ? cap : 1 << 20, reg = 0, res = 0, steps, bad = 0, i, starts[2] = { 0, 0 };
	long seq = 0;

	srand(seed);
	memset(&m, 0, sizeof(m));
	njobs = 0;
	for (steps = 0; steps < 4000 && !bad; steps++) {
		int op = rand() % 3;

		if (op == 0 && njobs < MAXJ) { /* arrival: a user's job, now and then an internal one */
			srv_job_t *j = rand() % 16 ? job((uid_t)(100 + rand() % users)) : internal_job();

			m.state[j - jobs] = 1, m.seq[j - jobs] = seq++;
			srv_sched_push(s, j);
		} else if (op == 1 && reg + res) { /* a random running job ends */
			int k = rand() % (reg + res), n = 0;

			for (i = 0; i < njobs; i++)
				if (m.state[i] == 2 && n++ == k)
					break;
			m.state[i] = 3;
			*(m.where[i] == RES ? &res : &reg) -= 1;
			srv_sched_done(s, &jobs[i]);
		}
		/* free workers take what the rule allows, until it allows nothing */
		for (;;) {
			int f = fewest(&m), in = oldest(&m, 1, 0), want, kind, k, r;
			int reg_ok = reg < workers && (in >= 0 || (f >= 0 && f < effcap));
			int res_ok = !res && reg == workers && f == 0;
			srv_job_t *j = reg < workers ? srv_sched_pop(s, REG) : NULL;

			kind = REG;
			if (!j && reg_ok) {
				fail("workers %d: an idle regular worker while a job may start (fewest %d, internal "
				     "%d, "
				     "running %d)",
				     workers, f, in >= 0, reg);
				bad = 1;
				break;
			}
			if (!j) {
				if (srv_sched_reserve_wanted(s) != res_ok) {
					fail("reserve_wanted says %d, the rule %d", srv_sched_reserve_wanted(s),
					     res_ok);
					bad = 1;
				}
				j = srv_sched_pop(s, RES);
				kind = RES;
				if (!j && res_ok) {
					fail("workers %d: the reserve idle while a user with nothing running waits and "
					     "every regular worker is busy",
					     workers);
					bad = 1;
				}
			}
			if (!j)
				break;
			k = (int)(j - jobs);
			r = j->conn_id ? running_of(&m, j->peer.uid) : -1;
			want = kind == REG ? (in >= 0 ? in : -2) : -2;
			if (kind == REG && in < 0)
				want = j->conn_id && r == f && f < effcap ? oldest(&m, 0, j->peer.uid) : -3;
			if (kind == RES)
				want = res_ok && j->conn_id && r == 0 ? oldest(&m, 0, j->peer.uid) : -3;
			if (k < 0 || k >= MAXJ || m.state[k] != 1 || k != want) {
				fail("workers %d: %s worker started job %d (uid %u, internal %d, state %d, its user "
				     "runs "
				     "%d, fewest %d, regular busy %d, reserve busy %d); the rule: job %d",
				     workers, kind == RES ? "the reserve" : "a regular", k, (unsigned)j->peer.uid,
				     !j->conn_id, m.state[k], r, f, reg, res, want);
				bad = 1;
				break;
			}
			m.state[k] = 2, m.where[k] = kind;
			*(kind == RES ? &res : &reg) += 1;
			starts[kind]++;
			if (j->conn_id && running_of(&m, j->peer.uid) > effcap) {
				fail("uid %u runs %d jobs, above its cap %d", (unsigned)j->peer.uid,
				     running_of(&m, j->peer.uid), effcap);
				bad = 1;
			}
		}
	}
	check(!bad,
	      "workers %d, cap %d, %d users: %d jobs (%d started on regular workers, %d on the reserve), every "
	      "start as the rule says",
	      workers, cap, users, njobs, starts[REG], starts[RES]);
	printf("# workers %d, cap %d, %d users: %d jobs, %d started on regular workers, %d on the reserve\n", workers,
	       cap, users, njobs, starts[REG], starts[RES]);
	check(users < 2 || starts[RES] > 0, "the reserve was used (%d)", starts[RES]);
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
	test_one_user_alone();
	test_issue_case();
	test_round_robin();
	test_cap_and_internal();
	random_run(1, 0, 1, 1); /* one user: the reserve never used */
	random_run(1, 0, 3, 1);
	random_run(2, 0, 1, 8);
	random_run(2, 0, 2, 2);
	random_run(2, 0, 5, 3);
	random_run(4, 0, 7, 4);
	random_run(4, 2, 7, 5);
	random_run(8, 3, 40, 6);
	random_run(16, 0, 300, 7); /* more users than the hash's first size: it grows */
	return harness_done();
}
