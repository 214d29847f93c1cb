#define _GNU_SOURCE
/*
 * mapping/tm_group.c: TreeMatch's greedy grouping of one level, and swaps between groups.
 *
 * Greedy: seeds are taken by decreasing traffic; a group grows by the free unit with the most
 * traffic to it (ties: less traffic elsewhere, then the earliest discovered); when no free unit talks to the group,
 * it is padded with the least-communicating free unit (virtual units first).
 * Improve: a unit x of group A is swapped with a unit y of the group B that x talks to most when
 * the traffic kept inside groups grows: gain = c(x,B) - c(x,A) + c(y,A) - c(y,B) - 2 w(x,y).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tm_private.h"

#define IMPROVE_PASSES 4

struct greedy {
	tm_grow_t g;
	int mode;
};

static int by_deg_desc(const void *a, const void *b, void *arg)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const double *sort_key = arg;

	if (sort_key[x] != sort_key[y])
		return sort_key[x] > sort_key[y] ? -1 : 1;
	return (x > y) - (x < y);
}

void tm_grow_add(tm_grow_t *g, uint32_t x)
{
	const tm_units_t *u = g->u;
	uint64_t k;

	g->used[x] = 1;
	g->members[g->pos++] = x;
	for (k = x < u->nreal ? u->xadj[x] : 0; x < u->nreal && k < u->xadj[x + 1]; k++) {
		uint32_t y = u->adj[k];

		if (g->used[y])
			continue;
		if (g->conn[y] == 0)
			g->cand[g->ncand++] = y;
		g->conn[y] += u->w[k];
	}
}

double tm_grow_lookahead(const tm_grow_t *g, uint32_t y)
{
	const tm_units_t *u = g->u;
	double score = 0;
	uint64_t k;

	for (k = y < u->nreal ? u->xadj[y] : 0; y < u->nreal && k < u->xadj[y + 1]; k++)
		if (g->conn[u->adj[k]] > 0 && !g->used[u->adj[k]])
			score += u->w[k];
	return score;
}

/* Best free candidate (most traffic to the group), UINT32_MAX if none; drops used entries. Ties go
 * to the candidate with more traffic to the other candidates (mode 0: closes squares and cubes in
 * grids), then less traffic elsewhere, then discovery order. */
static uint32_t greedy_pick(struct greedy *s)
{
	uint32_t i, j = 0, best = UINT32_MAX;
	double max = 0, bscore = -1;

	for (i = 0; i < s->g.ncand; i++) {
		uint32_t y = s->g.cand[i];

		if (s->g.used[y]) {
			s->g.conn[y] = 0;
			continue;
		}
		s->g.cand[j++] = y;
		if (s->g.conn[y] > max)
			max = s->g.conn[y];
	}
	s->g.ncand = j;
	for (i = 0; i < s->g.ncand; i++) {
		uint32_t y = s->g.cand[i];
		double score;

		if (s->g.conn[y] < max * (1 - 1e-12))
			continue;
		score = s->mode == 0 ? tm_grow_lookahead(&s->g, y) : 0;
		if (best == UINT32_MAX || score > bscore || (score == bscore && s->g.deg[y] < s->g.deg[best]))
			best = y, bscore = score;
	}
	return best;
}

static void deg_of(const tm_units_t *u, double *deg)
{
	uint32_t i;

	for (i = 0; i < u->n; i++) {
		uint64_t k;

		deg[i] = 0;
		for (k = i < u->nreal ? u->xadj[i] : 0; i < u->nreal && k < u->xadj[i + 1]; k++)
			deg[i] += u->w[k];
	}
}

int tm_group_greedy(const tm_units_t *u, uint32_t a, uint32_t *members, int mode)
{
	struct greedy s = { .g = { .u = u, .members = members }, .mode = mode };
	uint32_t *order = malloc((size_t)u->n * sizeof(*order)), seed = 0, fill = u->n, g, i;

	s.g.deg = malloc((size_t)u->n * sizeof(double));
	s.g.conn = calloc(u->n, sizeof(double));
	s.g.used = calloc(u->n, 1);
	s.g.cand = malloc(((size_t)u->xadj[u->nreal] + 1) * sizeof(uint32_t));
	if (!order || !s.g.deg || !s.g.conn || !s.g.used || !s.g.cand) {
		free(order), free(s.g.deg), free(s.g.conn), free(s.g.used), free(s.g.cand);
		errno = ENOMEM;
		return -1;
	}
	deg_of(u, s.g.deg);
	for (i = 0; i < u->n; i++)
		order[i] = i;
	qsort_r(order, u->n, sizeof(*order), by_deg_desc, s.g.deg);
	for (g = 0; g < u->n / a; g++) {
		while (s.g.used[order[seed]])
			seed++;
		tm_grow_add(&s.g, order[seed]);
		for (i = 1; i < a; i++) {
			uint32_t y = greedy_pick(&s);

			if (y == UINT32_MAX) {
				while (s.g.used[order[fill - 1]])
					fill--;
				y = order[fill - 1];
			}
			tm_grow_add(&s.g, y);
		}
		for (i = 0; i < s.g.ncand; i++)
			s.g.conn[s.g.cand[i]] = 0;
		s.g.ncand = 0;
	}
	free(order), free(s.g.deg), free(s.g.conn), free(s.g.used), free(s.g.cand);
	return 0;
}

struct improve {
	const tm_units_t *u;
	uint32_t a, *members, *grp, *slot; /* slot: position of a unit in members */
	double *gconn;
	uint32_t *touched, ntouched;
	/* per unit: all its traffic, and its traffic inside its group (kept up to date by do_swap) */
	double *wdeg, *own;
	/* clock: swaps so far; stamp[g]: the clock when group g, a member of it or a neighbour of a member
	 * last changed (swapped or its own traffic moved); since[x]: the clock when unit x was last looked
	 * at. A unit whose own group and neighbours' groups all have stamps <= since[x] would be looked at
	 * in the very state that made it fail: a later pass skips it. */
	uint32_t clock, *stamp, *since;
};

/* Traffic of unit y to groups A and B and to unit x. */
static void unit_conn(const struct improve *m, uint32_t y, uint32_t A, uint32_t B, uint32_t x, double *cA, double *cB,
		      double *wxy)
{
	const tm_units_t *u = m->u;
	uint64_t k;

	double a = 0, b = 0, c = 0;

	for (k = y < u->nreal ? u->xadj[y] : 0; y < u->nreal && k < u->xadj[y + 1]; k++) {
		uint32_t z = u->adj[k], gz = m->grp[z];

		/* the same sums as with branches (adding 0 changes none), without branches to mispredict */
		c += u->w[k] * (z == x);
		a += u->w[k] * (gz == A);
		b += u->w[k] * (gz == B);
	}
	*cA = a, *cB = b, *wxy = c;
}

/* Best swap partner of x in group B; returns its gain (<= 0: none) and the partner in *best. */
static double best_partner(const struct improve *m, uint32_t x, uint32_t A, uint32_t B, uint32_t *best)
{
	double base = m->gconn[B] - m->gconn[A], bg = 0;
	uint32_t p;

	for (p = 0; p < m->a; p++) {
		uint32_t y = m->members[(size_t)B * m->a + p];
		double cA, cB, wxy, gain;

		if (m->u->type && m->u->type[y] != m->u->type[x])
			continue; /* typed groups keep their shapes */
		/* c(y,A) <= all of y's traffic but c(y,B): a y whose gain cannot pass the best is skipped (by a
		 * margin far above the rounding of the two sums) */
		if (base + m->wdeg[y] - 2 * m->own[y] <
		    bg + 1e-12 * (m->gconn[B] + 1) - 1e-9 * (m->wdeg[y] + fabs(base) + 1))
			continue;
		unit_conn(m, y, A, B, x, &cA, &cB, &wxy);
		gain = base + cA - cB - 2 * wxy;
		if (gain > bg + 1e-12 * (m->gconn[B] + 1)) {
			bg = gain;
			*best = y;
		}
	}
	return bg;
}

/* Traffic of unit x inside group g. */
static double conn_to(const struct improve *m, uint32_t x, uint32_t g)
{
	const tm_units_t *u = m->u;
	double c = 0;
	uint64_t k;

	for (k = x < u->nreal ? u->xadj[x] : 0; x < u->nreal && k < u->xadj[x + 1]; k++)
		if (m->grp[u->adj[k]] == g)
			c += u->w[k];
	return c;
}

/* Unit x (not y) leaves group from for group to: its neighbours' own traffic follows. */
static void own_move(struct improve *m, uint32_t x, uint32_t y, uint32_t from, uint32_t to)
{
	const tm_units_t *u = m->u;
	uint64_t k;

	for (k = x < u->nreal ? u->xadj[x] : 0; x < u->nreal && k < u->xadj[x + 1]; k++) {
		uint32_t z = u->adj[k];

		if (z == y || z == x)
			continue;
		if (m->grp[z] == from)
			m->own[z] -= u->w[k];
		else if (m->grp[z] == to)
			m->own[z] += u->w[k];
	}
}

/* Stamps the groups of x and of its neighbours with the clock. */
static void stamp_around(struct improve *m, uint32_t x)
{
	const tm_units_t *u = m->u;
	uint64_t k;

	m->stamp[m->grp[x]] = m->clock;
	for (k = x < u->nreal ? u->xadj[x] : 0; x < u->nreal && k < u->xadj[x + 1]; k++)
		m->stamp[m->grp[u->adj[k]]] = m->clock;
}

/* 1 when something unit x's last look read changed since (see struct improve). */
static int changed_around(const struct improve *m, uint32_t x)
{
	const tm_units_t *u = m->u;
	uint32_t s = m->since[x], c = m->stamp[m->grp[x]] > s;
	uint64_t k;

	for (k = u->xadj[x]; k < u->xadj[x + 1]; k++)
		c |= m->stamp[m->grp[u->adj[k]]] > s;
	return (int)c;
}

static void do_swap(struct improve *m, uint32_t x, uint32_t y)
{
	uint32_t gx = m->grp[x], sx = m->slot[x];

	m->clock++;
	m->stamp[gx] = m->stamp[m->grp[y]] = m->clock;

	own_move(m, x, y, gx, m->grp[y]);
	own_move(m, y, x, m->grp[y], gx);

	m->grp[x] = m->grp[y], m->slot[x] = m->slot[y];
	m->grp[y] = gx, m->slot[y] = sx;
	m->members[m->slot[x]] = x;
	m->members[m->slot[y]] = y;
	m->own[x] = conn_to(m, x, m->grp[x]);
	m->own[y] = conn_to(m, y, m->grp[y]);
	stamp_around(m, x);
	stamp_around(m, y);
}

/* Tries to move unit x into the group it talks to most (by a swap); returns 1 when it did. */
static int improve_unit(struct improve *m, uint32_t x)
{
	const tm_units_t *u = m->u;
	uint32_t A = m->grp[x], B1 = UINT32_MAX, B2 = UINT32_MAX, i, y = 0;
	uint64_t k;
	double gain = 0;

	m->ntouched = 0;
	for (k = u->xadj[x]; k < u->xadj[x + 1]; k++) {
		uint32_t gz = m->grp[u->adj[k]];

		m->touched[m->ntouched] = gz; /* kept when new (no branch) */
		m->ntouched += m->gconn[gz] == 0;
		m->gconn[gz] += u->w[k];
	}
	for (i = 0; i < m->ntouched; i++) {
		uint32_t B = m->touched[i];

		if (B == A || m->gconn[B] <= m->gconn[A])
			continue;
		if (B1 == UINT32_MAX || m->gconn[B] > m->gconn[B1])
			B2 = B1, B1 = B;
		else if (B2 == UINT32_MAX || m->gconn[B] > m->gconn[B2])
			B2 = B;
	}
	if (B1 != UINT32_MAX)
		gain = best_partner(m, x, A, B1, &y);
	if (gain <= 0 && B2 != UINT32_MAX)
		gain = best_partner(m, x, A, B2, &y);
	for (i = 0; i < m->ntouched; i++)
		m->gconn[m->touched[i]] = 0;
	if (gain <= 0)
		return 0;
	do_swap(m, x, y);
	return 1;
}

int tm_group_improve(const tm_units_t *u, uint32_t a, uint32_t *members, double deadline)
{
	struct improve m = { .u = u, .a = a, .members = members };
	uint32_t i, pass, moved = 1;
	uint64_t maxdeg = 1;

	for (i = 0; i < u->nreal; i++)
		if (u->xadj[i + 1] - u->xadj[i] > maxdeg)
			maxdeg = u->xadj[i + 1] - u->xadj[i];
	m.grp = malloc((size_t)u->n * sizeof(uint32_t));
	m.slot = malloc((size_t)u->n * sizeof(uint32_t));
	m.gconn = calloc(u->n / a + 1, sizeof(double));
	m.touched = malloc((maxdeg + 1) * sizeof(uint32_t));
	m.wdeg = calloc((size_t)u->n + 1, sizeof(double));
	m.own = calloc((size_t)u->n + 1, sizeof(double));
	m.stamp = calloc(u->n / a + 1, sizeof(uint32_t));
	m.since = calloc((size_t)u->n + 1, sizeof(uint32_t));
	if (!m.grp || !m.slot || !m.gconn || !m.touched || !m.wdeg || !m.own || !m.stamp || !m.since) {
		free(m.grp), free(m.slot), free(m.gconn), free(m.touched), free(m.wdeg), free(m.own), free(m.stamp),
			free(m.since);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < u->n; i++) {
		m.grp[members[i]] = i / a;
		m.slot[members[i]] = i;
	}
	for (i = 0; i < u->nreal; i++) {
		uint64_t k;

		for (k = u->xadj[i]; k < u->xadj[i + 1]; k++)
			m.wdeg[i] += u->w[k];
		m.own[i] = conn_to(&m, i, m.grp[i]);
	}
	for (pass = 0; moved && pass < IMPROVE_PASSES && map_now_ms() < deadline; pass++)
		for (moved = 0, i = 0; i < u->nreal; i++) {
			if (pass > 0 && !changed_around(&m, i))
				continue; /* it would fail again */
			m.since[i] = m.clock;
			moved += (uint32_t)improve_unit(&m, i);
		}
	free(m.grp), free(m.slot), free(m.gconn), free(m.touched), free(m.wdeg), free(m.own), free(m.stamp),
		free(m.since);
	return 0;
}
