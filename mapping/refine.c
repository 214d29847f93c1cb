/*
 * mapping/refine.c: the "refine" engine, local search on a mapping.
 *
 * A move swaps rank r with whatever occupies slot c (another rank, or nothing when there are more
 * slots than ranks). Its gain comes from the sparse graph alone: only the edges of the two ranks
 * change length. Candidate slots for r are the slots of the lowest groups (the groups just above the
 * slots) that hold r's neighbours: moving r next to the ranks it talks to. A work queue holds the
 * ranks to examine (all at first, then the neighbours of every rank that moved); each takes its best
 * improving move. At the local optimum, an iterated local search follows: kicks + 1 random kicks (a rank
 * to a random slot near one of its neighbours), local repair from the queue, kept when the cost did
 * not rise and undone otherwise; up to ILS_ITERS_PER_RANK kicks per rank, until max(ILS_MIN_STALL,
 * ranks) kicks in a row bring nothing, or the deadline. The
 * result is never worse than the start, and deterministic for a seed unless the deadline cuts it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"

#define NO_RANK UINT32_MAX
#define ILS_ITERS_PER_RANK 8
#define ILS_MIN_ITERS 1000
#define ILS_MIN_STALL 200 /* stop after max(this, ranks) kicks in a row without a strict gain */

struct refine {
	const map_graph_t *g;
	const topo_target_t *t;
	uint32_t *perm, *inv; /* inv[slot]: rank or NO_RANK */
	uint32_t *lo, *hi;    /* slot range of each lowest group */
	uint32_t *stamp, cur;
	int lev; /* level of the lowest groups */
	uint32_t *queue, qhead, qlen;
	unsigned char *inq;
	uint32_t *log, nlog, logcap; /* pairs of slots exchanged since the last accept */
	int logging;
	uint64_t rng;
	double tol;
	double *wr; /* scratch: weight of the edge to each neighbour of the rank examined */
	int fast;   /* lowest groups lie inside hosts: candidates of a group share costs */
};

static uint32_t low_group(const struct refine *R, uint32_t slot)
{
	return R->t->group[(size_t)slot * R->t->nlevels + R->lev];
}

static uint32_t rnd(struct refine *R)
{
	R->rng ^= R->rng << 13, R->rng ^= R->rng >> 7, R->rng ^= R->rng << 17;
	return (uint32_t)(R->rng >> 16);
}

static void push(struct refine *R, uint32_t r)
{
	uint32_t n = R->g->n;

	if (r == NO_RANK || R->inq[r])
		return;
	R->inq[r] = 1;
	R->queue[(R->qhead + R->qlen++) % n] = r;
}

static void push_neighbours(struct refine *R, uint32_t r)
{
	uint64_t k;

	if (r == NO_RANK)
		return;
	push(R, r);
	for (k = R->g->xadj[r]; k < R->g->xadj[r + 1]; k++)
		push(R, R->g->adj[k]);
}

/* Cost change when r (on its slot) and the occupant of slot c exchange places. */
static double swap_delta(const struct refine *R, uint32_t r, uint32_t c)
{
	uint32_t s = R->perm[r], r2 = R->inv[c];
	double d;

	d = map_rank_cost(R->g, R->t, R->perm, r, c, r2) - map_rank_cost(R->g, R->t, R->perm, r, s, r2);
	if (r2 != NO_RANK)
		d += map_rank_cost(R->g, R->t, R->perm, r2, s, r) - map_rank_cost(R->g, R->t, R->perm, r2, c, r);
	return d;
}

/* Exchanges the occupants of slots s and c (either may be empty), logging it when asked. */
static void swap_slots(struct refine *R, uint32_t s, uint32_t c)
{
	uint32_t r1 = R->inv[s], r2 = R->inv[c];

	R->inv[s] = r2, R->inv[c] = r1;
	if (r1 != NO_RANK)
		R->perm[r1] = c;
	if (r2 != NO_RANK)
		R->perm[r2] = s;
	if (!R->logging)
		return;
	if (R->nlog + 2 > R->logcap) {
		uint32_t cap = R->logcap ? 2 * R->logcap : 256, *nl = realloc(R->log, cap * sizeof(*nl));

		if (!nl) {
			R->logging = -1; /* cannot undo any more: keep whatever happens */
			return;
		}
		R->log = nl, R->logcap = cap;
	}
	R->log[R->nlog++] = s;
	R->log[R->nlog++] = c;
}

/* Applies the best move found for rank r: to slot best (swapping with its occupant), then queues the
 * neighbours of both. Returns bd, the move's cost change, or 0 when there is none (best NO_RANK). */
static double take_move(struct refine *R, uint32_t r, uint32_t best, double bd)
{
	uint32_t r2;

	if (best == NO_RANK)
		return 0;
	r2 = R->inv[best];
	swap_slots(R, R->perm[r], best);
	push_neighbours(R, r);
	push_neighbours(R, r2);
	return bd;
}

/* refine_rank (below) with exact costs for every candidate (targets where a lowest group spans hosts). */
static double refine_rank_exact(struct refine *R, uint32_t r)
{
	const map_graph_t *g = R->g;
	uint32_t own = low_group(R, R->perm[r]), best = NO_RANK, c;
	double bd = 0;
	uint64_t k;

	R->cur++;
	R->stamp[own] = R->cur;
	for (k = g->xadj[r]; k < g->xadj[r + 1]; k++) {
		uint32_t gv = low_group(R, R->perm[g->adj[k]]);

		if (R->stamp[gv] == R->cur)
			continue;
		R->stamp[gv] = R->cur;
		for (c = R->lo[gv]; c < R->hi[gv]; c++) {
			double d = swap_delta(R, r, c);

			if (d < bd - R->tol) {
				bd = d;
				best = c;
			}
		}
	}
	return take_move(R, r, best, bd);
}

/* Cost of r on any slot of lowest group gv, counting a neighbour inside gv at sibling distance
 * (exact for every slot of gv except the neighbour's own, whose occupant the caller handles). */
static double group_cost(const struct refine *R, uint32_t r, uint32_t gv)
{
	const map_graph_t *g = R->g;
	double c = 0, sib = R->t->cost[R->lev];
	uint32_t any = R->lo[gv];
	uint64_t k;

	for (k = g->xadj[r]; k < g->xadj[r + 1]; k++) {
		uint32_t ps = R->perm[g->adj[k]];

		c += g->w[k] * (low_group(R, ps) == gv ? sib : topo_target_distance(R->t, any, ps));
	}
	return c;
}

/* Cost change of the occupant r2 of slot c moving to slot s (edges to r excluded). */
static double occupant_delta(const struct refine *R, uint32_t r2, uint32_t s, uint32_t c, uint32_t r)
{
	const map_graph_t *g = R->g;
	double d = 0;
	uint64_t k;

	for (k = g->xadj[r2]; k < g->xadj[r2 + 1]; k++) {
		uint32_t v = g->adj[k], pv = R->perm[v];

		if (v != r)
			d += g->w[k] * (topo_target_distance(R->t, s, pv) - topo_target_distance(R->t, c, pv));
	}
	return d;
}

/* Best exchange of r with a slot of lowest group gv: updates *bd / *best. wr[] holds r's edge
 * weights by neighbour; here is r's current cost. */
static void try_group(struct refine *R, uint32_t r, uint32_t gv, double here, uint32_t *best, double *bd)
{
	double there = group_cost(R, r, gv), sib = R->t->cost[R->lev];
	uint32_t s = R->perm[r], c;

	/* r gains nothing by going there (its edge to the occupant only adds): leave such exchanges to
	 * the occupant's own turn */
	if (there >= here)
		return;

	for (c = R->lo[gv]; c < R->hi[gv]; c++) {
		uint32_t r2 = R->inv[c];
		double d, w2 = r2 == NO_RANK ? 0 : R->wr[r2];

		/* r: from s to c; its edge to r2 keeps its length and is left out on both sides */
		d = (there - w2 * sib) - (here - w2 * topo_target_distance(R->t, s, c));
		if (r2 != NO_RANK)
			d += occupant_delta(R, r2, s, c, r);
		if (d < *bd - R->tol) {
			*bd = d;
			*best = c;
		}
	}
}

/* Best move of rank r; applies it and returns its (negative) cost change, or 0. */
static double refine_rank(struct refine *R, uint32_t r)
{
	const map_graph_t *g = R->g;
	uint32_t own = low_group(R, R->perm[r]), best = NO_RANK;
	double bd = 0, here;
	uint64_t k;

	if (!R->fast)
		return refine_rank_exact(R, r);
	R->cur++;
	R->stamp[own] = R->cur;
	for (k = g->xadj[r]; k < g->xadj[r + 1]; k++)
		R->wr[g->adj[k]] += g->w[k];
	here = map_rank_cost(g, R->t, R->perm, r, R->perm[r], NO_RANK);
	for (k = g->xadj[r]; k < g->xadj[r + 1]; k++) {
		uint32_t gv = low_group(R, R->perm[g->adj[k]]);

		if (R->stamp[gv] == R->cur)
			continue;
		R->stamp[gv] = R->cur;
		try_group(R, r, gv, here, &best, &bd);
	}
	for (k = g->xadj[r]; k < g->xadj[r + 1]; k++)
		R->wr[g->adj[k]] = 0;
	return take_move(R, r, best, bd);
}

/* Processes the work queue until it is empty or the deadline; returns the total cost change. */
static double local_search(struct refine *R, double deadline, long *moves)
{
	double total = 0;
	uint32_t steps = 0;

	while (R->qlen) {
		uint32_t r = R->queue[R->qhead];
		double d;

		R->qhead = (R->qhead + 1) % R->g->n;
		R->qlen--;
		R->inq[r] = 0;
		d = refine_rank(R, r);
		total += d;
		*moves += d < 0;
		if ((++steps & 255) == 0 && map_now_ms() >= deadline)
			break;
	}
	return total;
}

/* Random kick: rank r exchanges with a random slot of a random neighbour's lowest group. */
static double perturb(struct refine *R)
{
	const map_graph_t *g = R->g;
	uint32_t r = rnd(R) % g->n, deg = (uint32_t)(g->xadj[r + 1] - g->xadj[r]), v, gv, c;
	double d;

	if (!deg)
		return 0;
	v = g->adj[g->xadj[r] + rnd(R) % deg];
	gv = low_group(R, R->perm[v]);
	c = R->lo[gv] + rnd(R) % (R->hi[gv] - R->lo[gv]);
	if (c == R->perm[r])
		return 0;
	d = swap_delta(R, r, c);
	push_neighbours(R, R->inv[c]);
	swap_slots(R, R->perm[r], c);
	push_neighbours(R, r);
	return d;
}

static void undo(struct refine *R)
{
	int logging = R->logging;

	R->logging = 0;
	while (R->nlog >= 2) {
		R->nlog -= 2;
		swap_slots(R, R->log[R->nlog], R->log[R->nlog + 1]);
	}
	R->logging = logging;
}

/* Iterated local search: kick, repair locally, keep when not worse, else undo. */
static void ils(struct refine *R, double deadline, long *moves, int strength)
{
	uint64_t iters = (uint64_t)R->g->n * ILS_ITERS_PER_RANK, i, stall = 0;
	uint64_t max_stall = R->g->n > ILS_MIN_STALL ? R->g->n : ILS_MIN_STALL;
	long m;

	if (iters < ILS_MIN_ITERS)
		iters = ILS_MIN_ITERS;
	R->logging = 1;
	for (i = 0; i < iters && stall < max_stall && R->logging > 0; i++) {
		double d;

		if (map_now_ms() >= deadline)
			break;
		R->nlog = 0;
		m = 0;
		d = perturb(R);
		for (int s = 0; s < strength; s++)
			d += perturb(R);
		d += local_search(R, deadline, &m);
		stall = d < -R->tol ? 0 : stall + 1;
		if (d <= R->tol)
			*moves += m;
		else
			undo(R);
		while (R->qlen) { /* a deadline may leave work queued */
			R->inq[R->queue[R->qhead]] = 0;
			R->qhead = (R->qhead + 1) % R->g->n;
			R->qlen--;
		}
	}
	R->logging = 0;
}

static int refine_init(struct refine *R, const map_ctx_t *ctx, uint32_t *perm)
{
	const topo_target_t *t = ctx->t;
	uint32_t s, ng;
	double wsum = 0;
	uint64_t k;

	memset(R, 0, sizeof(*R));
	R->g = ctx->g, R->t = t, R->perm = perm;
	R->lev = t->nlevels >= 2 ? t->nlevels - 2 : 0;
	R->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)ctx->opt.seed * 0x2545f4914f6cdd1dull);
	ng = t->ngroups[R->lev];
	R->inv = malloc((size_t)t->nslots * sizeof(*R->inv));
	R->lo = malloc((size_t)ng * sizeof(*R->lo));
	R->hi = calloc(ng, sizeof(*R->hi));
	R->stamp = calloc(ng, sizeof(*R->stamp));
	R->queue = malloc((size_t)ctx->g->n * sizeof(*R->queue));
	R->inq = calloc(ctx->g->n, 1);
	R->wr = calloc(ctx->g->n, sizeof(*R->wr));
	if (!R->inv || !R->lo || !R->hi || !R->stamp || !R->queue || !R->inq || !R->wr)
		return -1;
	R->fast = !t->slot_net_dist && !t->slot_host_dist &&
		  (!t->net_dist || t->host_level < 0 || R->lev >= t->host_level);
	memset(R->inv, 0xff, (size_t)t->nslots * sizeof(*R->inv));
	for (s = 0; s < ctx->g->n; s++)
		R->inv[perm[s]] = s;
	for (s = t->nslots; s-- > 0;) {
		uint32_t gs = low_group(R, s);

		R->lo[gs] = s;
		if (!R->hi[gs])
			R->hi[gs] = s + 1;
	}
	for (k = 0; k < ctx->g->xadj[ctx->g->n]; k++)
		wsum += ctx->g->w[k];
	R->tol = 1e-12 * (wsum + 1) * (t->cost[0] + 1);
	return 0;
}

static void refine_free(struct refine *R)
{
	free(R->inv), free(R->lo), free(R->hi), free(R->stamp), free(R->queue), free(R->inq), free(R->log);
	free(R->wr);
}

long map_refine_run(const map_ctx_t *ctx, uint32_t *perm, int kicks)
{
	struct refine R;
	long moves = 0;
	uint32_t r;

	if (ctx->t->nlevels < 2 || ctx->g->n < 2)
		return 0;
	if (refine_init(&R, ctx, perm) < 0) {
		refine_free(&R);
		errno = ENOMEM;
		return -1;
	}
	for (r = 0; r < ctx->g->n; r++)
		push(&R, r);
	local_search(&R, ctx->deadline, &moves);
	if (kicks > 0 && map_now_ms() < ctx->deadline)
		ils(&R, ctx->deadline, &moves, kicks);
	refine_free(&R);
	return moves;
}

int map_engine_refine(const map_ctx_t *ctx, uint32_t *perm)
{
	uint32_t i;

	if (ctx->opt.start) {
		if (map_check_perm(ctx->opt.start, ctx->g->n, ctx->t->nslots) < 0)
			return rm_error_set(ctx->err, "refine", 0, 0,
					    "the start mapping is not a bijection onto slots");
		memcpy(perm, ctx->opt.start, (size_t)ctx->g->n * sizeof(*perm));
	} else {
		for (i = 0; i < ctx->g->n; i++)
			perm[i] = i;
	}
	if (map_refine_run(ctx, perm, 1) < 0)
		return rm_error_set(ctx->err, "refine", 0, 0, "out of memory");
	return 0;
}
