/*
 * mapping/quality.c: auto's quality mode, for callers that allow more time than the default budget.
 *
 * auto first runs its portfolio at the default budget (auto.c); the quality mode returns that result
 * unless its rounds find a mapping no costlier, and the rounds start from nothing the default's budget
 * could cut (so that a seed gives one result). The rest of the budget goes to rounds of searches, run
 * on up to QUALITY_MAX_THREADS threads (the machine's online CPUs), each with its own seed: QUALITY_ITEMS
 * constructions a round until a round has found a mapping (restarts from the default's result instead,
 * when a construction did not fit a share), then QUALITY_RESTART_ITEMS restarts a round:
 *
 *  - a multilevel construction (multilevel.c: hierarchical multisection by multilevel recursive
 *    bisection, coarsening by size-constrained label propagation, each tree node's split then improved
 *    by QUALITY_VCYCLES V-cycles), followed by
 *    refine.c's hierarchy-aware swap search and its iterated local search, run on every level of a
 *    V-cycle that coarsens the mapping itself (mlrefine.c: pairs of ranks of one lowest group become
 *    one vertex, so the coarse levels swap pairs, quadruples, ... by the whole mapping's hierarchical
 *    objective; at the best peer's CPU time, one seed each: powerlaw-1k 0.9924 of the best peer instead
 *    of 1.0022, mesh2d-4k 1.0059 instead of 1.0126, mesh3d-16k 1.0170 instead of 1.0192, powerlaw-8k
 *    1.0086 instead of 1.0099, rand1024 1.0040 instead of 1.0041);
 *  - after the first round that found a mapping, every item restarts the
 *    iterated local search from the rounds' best mapping so far, with a fresh seed and two to five
 *    random moves a step, on every level of mlrefine.c's V-cycle too (a fresh matching of the best
 *    mapping's pairs each time: Walshaw's iterated multilevel refinement; its kicks move a rank next to one of its neighbours, in any group of the
 *    tree: the swap neighbourhoods N_C^d of von Kirchbach, Schulz and Traeff, "Better process mapping
 *    and sparse quadratic assignment", SEA 2017, with d = 1 and C the groups of the lowest level).
 *    Before the tenth round of RESULTS.md every second item of a later round was a new construction;
 *    at the best peer's CPU time none of them won after the first round on rand1024, mesh2d-4k,
 *    mesh3d-16k or powerlaw-8k, and a round of two restarts gives the chain of restarts twice the
 *    time: rand1024 1.0000 of VieM instead of 1.0004 (6 seeds), mesh2d-4k 0.9923 of SharedMap instead
 *    of 0.9939 (6), powerlaw-8k 1.0027 instead of 1.0036 (2), mesh3d-16k 0.9955 against 0.9956 (4).
 *    Two a round, not one per thread, so that a seed gives one result whatever the number of threads.
 *
 * refine.c's gains are those of the tree's distances, which for a tree target are the Steiner-tree
 * gains of Mt-KaHyPar's process mapping (Heuer, Maas, Schlag, Schulz, Seemaier, Sanders, "Multilevel
 * process mapping", and the Steiner tree metric of Mt-KaHyPar, 2023-2024): the cost change of a swap is
 * computed from the two ranks' edges alone. SharedMap (Schulz and Woydt, 2024) is the model of the
 * multisection. No code is taken from VieM, KaHIP, Mt-KaHyPar or SharedMap.
 *
 * The budget is CPU time, all threads together: each item gets an equal share of what is left at its
 * round's start (CPU time of its own thread), and the next round starts only with QUALITY_MIN_SHARE_MS
 * a share left. The budget is planned over QUALITY_PLAN_ROUNDS rounds (map_quality_share): an item's
 * share is at most an eighth of the first round's (but never less than QUALITY_BUILD_FIT constructions),
 * and the round that would leave less than QUALITY_PLAN_LAST shares takes the rest: more rounds of
 * shorter searches, restarted from the best so far (every second until the tenth round), instead of
 * one round of four long searches each from its own construction. At the best peer's CPU time (tests/bench/mapping,
 * RESULTS.md, ninth round): rand1024 0.12 % cheaper (10 seeds), powerlaw-8k 0.27 % (2 seeds),
 * powerlaw-1k 0.32 %, rand128 0.27 % (4 seeds each), mesh3d-16k 0.27 % (1 seed), mesh2d-4k (8 seeds)
 * and cg128 equal. The rounds stop at the budget, after QUALITY_MAX_ROUNDS rounds, or after
 * QUALITY_STALL_ROUNDS rounds in a row that found nothing cheaper. Items are numbered and the best is
 * chosen by (cost, number) after each round, so the result is the same for a seed whatever the number
 * of threads, unless the budget cuts a search short. A construction is skipped (the item restarts the
 * local search instead) when the first construction took more CPU time than the item's share (the
 * construction's own time: the whole item's, which equals a share, skipped every construction of the
 * later rounds, by a few microseconds; on mesh2d-4k 0.3 % costlier over 8 seeds).
 *
 * The stronger construction (map_quality_reps, from a budget that holds QUALITY_REPS_MARGIN times four of
 * its constructions at QUALITY_BUILD_FIT each, so that a later round is left when they take longer than
 * estimated; a first round of them that found nothing turns the plain form back on): each tree node's split is made QUALITY_SPLIT_REPS times, each a fresh multilevel
 * partition with QUALITY_REPS_VCYCLES V-cycles, and the smallest cut kept (multilevel.c: split). The
 * splits below the top vary most: on mesh3d-16k the best of 4 of each 1,024-rank group's 16-way split
 * cut 2-6 % less than the first, where 8 more V-cycles are rarely kept (about 30 % of them cut less), and
 * the construction alone cost 19,980,935 after one search instead of 20,124,988 (4 seeds, 2.3 times the
 * time). At the best peer's CPU time (tests/bench/mapping, RESULTS.md, tenth round), against the plain
 * form: mesh3d-16k 0.9963 of SharedMap instead of 1.0023 (2 seeds), powerlaw-8k 1.0036 instead of 1.0059
 * (2), rand1024 1.0005 instead of 1.0025 (4), mesh2d-4k 0.9955 instead of 0.9990 (4).
 *
 * Small budgets (rankmapctl map's offline default, engine.c: 100 ms at 128 to 2,500 ranks): until a round
 * has found a mapping, a round has only as many items as leave each QUALITY_BUILD_FIT times a
 * construction's CPU time (QUALITY_BUILD_MS_PER_RANK a rank until one was measured), at least one; when
 * even one item's share is below that, its construction tries QUALITY_FEW_TRIES initial partitions
 * instead of 24 (on rand1024 of tests/bench/mapping 33 ms instead of 70, its raw cost 0.3 % higher).
 * Four items cut short by their deadline found nothing at 100 ms on rand1024 (mean of 5 seeds 1,691,839,
 * the default's); one construction of 8 tries and its search: 1,672,155 (1.5 % above the best peer).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapping_private.h"

#define QUALITY_ITEMS 4         /* a round's items until one found a mapping */
#define QUALITY_RESTART_ITEMS 2 /* and then: restarts from the best (whatever the number of threads) */
#define QUALITY_MAX_THREADS 8
#define QUALITY_MAX_ROUNDS 256
#define QUALITY_STALL_ROUNDS 32
#define QUALITY_MIN_SHARE_MS 1.0
#define QUALITY_BUILD_MS_PER_RANK 0.08 /* a construction's CPU time, about, before one was measured */
#define QUALITY_BUILD_FIT 1.25         /* an item's share: at least this many times a construction, if it can */
#define QUALITY_FEW_TRIES 8            /* a construction's initial partitions when one with its own 24 does not fit */
#define QUALITY_PLAN_ROUNDS 8          /* the budget's rounds, planned (map_quality_share) */
#define QUALITY_PLAN_LAST 1.5          /* a round with less than this many planned shares left takes the rest */
#define QUALITY_VCYCLES MAP_QUALITY_VCYCLES /* multilevel.c's V-cycles per tree node's split (mapping_private.h) */
/* The stronger construction (map_quality_reps): each tree node's split made QUALITY_SPLIT_REPS times with
 * QUALITY_REPS_VCYCLES V-cycles each, about QUALITY_REPS_COST times the plain one's CPU time. */
#define QUALITY_SPLIT_REPS 4
#define QUALITY_REPS_VCYCLES 2
#define QUALITY_REPS_COST 2.5
#define QUALITY_REPS_MARGIN 1.4 /* the stronger form when the budget holds this many times four of them */

struct item {
	const map_ctx_t *ctx;
	const uint32_t *best; /* start of a restart */
	uint32_t *perm;
	unsigned seed;
	int restart, strength, on_main, tries; /* tries: initial partitions of a construction (0: its own) */
	int reps;                              /* each split's partitions (map_multilevel_reps; 1: the plain form) */
	/* on_main: run by the calling thread (its clock counts it) */ /* strength: kicks + 1 random moves a step of the restarted local search */
	double share, cpu, cost, build; /* build: the construction's CPU time (restarts: 0) */
	int rc;
};

struct worker {
	struct item *items;
	size_t first, step, count;
	int on_main;
};

static void run_item(struct item *it)
{
	map_ctx_t sub = *it->ctx;
	rm_error_t ignore;
	double t0 = map_now_ms();
	uint32_t n = sub.g->n;

	rm_error_clear(&ignore);
	sub.err = &ignore;
	sub.opt.seed = it->seed;
	sub.deadline = t0 + it->share;
	it->rc = 0;
	if (it->restart)
		memcpy(it->perm, it->best, (size_t)n * sizeof(*it->perm));
	else if (map_multilevel_reps(&sub, it->seed, it->tries, it->reps > 1 ? QUALITY_REPS_VCYCLES : QUALITY_VCYCLES,
				     it->reps, 1, it->perm) < 0 ||
		 map_repair(sub.g, sub.t, it->perm) < 0)
		it->rc = -1;
	it->build = it->restart ? 0 : map_now_ms() - t0;
	if (it->rc == 0 && map_mlrefine_run(&sub, it->perm, it->restart ? it->strength : 1) < 0)
		it->rc = -1;
	it->cost = it->rc == 0 ? map_cost(sub.g, sub.t, it->perm) : -1;
	it->cpu = map_now_ms() - t0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	size_t i;

	for (i = w->first; i < w->count; i += w->step) {
		w->items[i].on_main = w->on_main;
		run_item(&w->items[i]);
	}
	return NULL;
}

static size_t nthreads(void)
{
	long c = sysconf(_SC_NPROCESSORS_ONLN);

	if (c < 1)
		c = 1;
	return c > QUALITY_MAX_THREADS ? QUALITY_MAX_THREADS : c > QUALITY_ITEMS ? QUALITY_ITEMS : (size_t)c;
}

/* Runs the items on up to nt threads (the calling thread is one of them); returns the CPU time that the
 * other threads took (the calling thread's own is on its clock). */
static double run_round(struct item *items, size_t ni, size_t nt)
{
	pthread_t th[QUALITY_ITEMS];
	struct worker w[QUALITY_ITEMS];
	size_t i, started = 0;
	double cpu = 0;

	for (i = 0; i < nt; i++)
		w[i] = (struct worker){ items, i, nt, ni, i == 0 };
	for (i = 1; i < nt; i++) {
		if (pthread_create(&th[i], NULL, worker_main, &w[i]) != 0)
			break;
		started = i;
	}
	worker_main(&w[0]);
	for (i = 1; i <= started; i++)
		pthread_join(th[i], NULL);
	for (i = started + 1; i < nt; i++) { /* the items of threads that did not start */
		size_t j;

		for (j = i; j < ni; j += nt) {
			items[j].on_main = 1;
			run_item(&items[j]);
		}
	}
	for (i = 0; i < ni; i++)
		if (!items[i].on_main)
			cpu += items[i].cpu;
	return cpu;
}

/* An item's share of a round (mapping_private.h). */
double map_quality_share(double left, size_t ni, double build, double first, int *capped)
{
	double plan = first / QUALITY_PLAN_ROUNDS;

	if (plan < QUALITY_BUILD_FIT * build)
		plan = QUALITY_BUILD_FIT * build;
	*capped = left / (double)ni > QUALITY_PLAN_LAST * plan;
	return *capped ? plan : left / (double)ni;
}

/* The construction's form for a quality mode of left ms (mapping_private.h). */
int map_quality_reps(double left, double build)
{
	return left >= QUALITY_REPS_MARGIN * QUALITY_ITEMS * QUALITY_BUILD_FIT * QUALITY_REPS_COST * build
		       ? QUALITY_SPLIT_REPS
		       : 1;
}

int map_auto_quality(const map_ctx_t *ctx, uint32_t *perm)
{
	uint32_t n = ctx->g->n, *mem, *cur;
	struct item items[QUALITY_ITEMS];
	double anchor = map_cost(ctx->g, ctx->t, perm), best = -1, spent = 0, ml_cpu = -1;
	double build = QUALITY_BUILD_MS_PER_RANK * n; /* a construction's CPU time: estimated, then measured */
	size_t nt = nthreads(), i;
	unsigned round, stall = 0, k = 0;
	int tries, reps = 0; /* reps: the constructions' form, chosen at the first round */
	double first = 0;    /* an item's share of the first round without a plan */
	int capped;

	if (n < 2 || ctx->t->nlevels < 2)
		return 0;
	mem = malloc(((size_t)QUALITY_ITEMS + 1) * n * sizeof(*mem));
	if (!mem) {
		errno = ENOMEM;
		return rm_error_set(ctx->err, "auto", 0, 0, "out of memory");
	}
	cur = mem + (size_t)QUALITY_ITEMS * n; /* the best of the rounds (best: its cost, -1 for none) */
	for (round = 0; round < QUALITY_MAX_ROUNDS && stall < QUALITY_STALL_ROUNDS; round++) {
		/* CPU left: the budget less this thread's time since the start and the other threads' */
		double left = ctx->deadline - map_now_ms() - spent, share;
		size_t ni = best >= 0 ? QUALITY_RESTART_ITEMS : QUALITY_ITEMS, won;

		if (!reps && (reps = map_quality_reps(left, build)) > 1)
			build *= QUALITY_REPS_COST;
		/* until a round has found a mapping, as many items as leave each a construction and time
		 * for its search (small budgets: one construction taken to its end beats four cut short) */
		while (best < 0 && ni > 1 && left / (double)ni < QUALITY_BUILD_FIT * build)
			ni--;
		if (round == 0)
			first = left / (double)ni;
		share = map_quality_share(left, ni, build, first, &capped), won = ni;
		if (share < QUALITY_MIN_SHARE_MS)
			break;
		tries = best < 0 && share < QUALITY_BUILD_FIT * build ? QUALITY_FEW_TRIES : 0;
		for (i = 0; i < ni; i++, k++) {
			/* restarts from the rounds' best (from the default's result only when no construction
			 * fits the share: the rounds then depend on nothing that the default's budget cut) */
			items[i] = (struct item){
				.ctx = ctx, .best = best >= 0 ? cur : perm, .perm = mem + i * n, .share = share
			};
			items[i].seed = ctx->opt.seed * 2654435761u + k + 1;
			items[i].restart = best >= 0 || ml_cpu > share;
			items[i].strength = 1 + (int)(k / 3 % 4); /* two to five kicks a step */
			items[i].tries = tries;
			items[i].reps = reps;
		}
		spent += run_round(items, ni, nt < ni ? nt : ni);
		for (i = 0; i < ni; i++) {
			if (!items[i].restart && ml_cpu < 0)
				ml_cpu = build = items[i].build;
			if (items[i].rc == 0 && items[i].cost >= 0 &&
			    (best < 0 || items[i].cost < best * (1 - 1e-12)) &&
			    (won == ni || items[i].cost < items[won].cost))
				won = i;
		}
		if (best < 0 && won == ni && reps > 1) { /* (no stronger construction fitted: the plain form) */
			reps = 1;
			build /= QUALITY_REPS_COST;
			ml_cpu = -1;
		}
		if (won < ni) {
			best = items[won].cost;
			memcpy(cur, items[won].perm, (size_t)n * sizeof(*cur));
			stall = 0;
		} else {
			stall++;
		}
	}
	if (best >= 0 && best <= anchor) /* (the default's result stays only when strictly cheaper) */
		memcpy(perm, cur, (size_t)n * sizeof(*perm));
	free(mem);
	return 0;
}
