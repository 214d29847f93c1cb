/*
 * mapping/linkload.c: the load a mapping puts on each link of a target whose routes are known
 * (topo_links_t: a dragonfly's host cables, router cables inside a group, global links), and a local
 * search that lowers the busiest link's load for at most 0.1 % more of the mapping's cost.
 *
 * Why: the engines minimise bytes times distance. On a dragonfly, where a router cable inside a group
 * is as fast as a host cable, two mappings of one cost can differ in which cable carries the crossings
 * between a group's routers, and one of them may make a router cable the busiest link of the job
 * (tests/bench/PLACEMENT.md: 6.2-6.6 MB on one against 5.9 MB on each host cable, 3-4 % slower).
 *
 * Load of a link: the sum of the weights of the edges whose route uses it (both directions together: a
 * communication graph is symmetric, so each direction carries half), over the link's rate. The search
 * orders mappings lexicographically by (largest load, sum of squared loads) and takes exchanges of two
 * hosts' ranks (slot for slot, hosts of as many slots) and swaps of two ranks on different hosts, as long
 * as the cost they add, all together, stays within LL_REL_EPS (0.1 %) of the input's cost (on the
 * dragonfly of tests/bench/PLACEMENT.md the equal-cost mappings all kept a router cable above the host
 * cables; 0.08 % more cost brought it down to them). map_linkload_refine checks the result's cost and
 * gives the input back otherwise. Each round takes the busiest link, the hosts and then the ranks with an
 * edge over it, and the first exchange of one of them with any other host (rank) that lowers the order;
 * it stops when none does or after LL_MAX_WORK edge and link visits (deterministic; 2^21 took 14 ms of
 * CPU from a poor start of 160 ranks in test_map_links, on a loaded machine; from the engines' mappings
 * of fabric_bench's jobs it ends long before). Memory O(ranks + links), whatever the job's size.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"

#define LL_MAX_WORK (1ull << 21) /* edge and link visits of one search, at most */
/* ... and in proportion to the caller's time budget (a job's first call: a few ms): 2^16 visits a budget
 * millisecond, about 0.45 ms of CPU (2^21 took 14 ms), at least 2^16 */
#define LL_WORK_PER_MS 65536.0
#define LL_MIN_WORK (1ull << 16)
#define LL_REL_EPS 1e-3 /* the cost may rise by this fraction at most (0.1 %) */

struct ll {
	const map_graph_t *g;
	const topo_target_t *t;
	const topo_links_t *x;
	uint32_t *perm;
	double *load;            /* nlinks: weight over rate */
	uint32_t *rank;          /* nslots: the rank on each slot, UINT32_MAX none */
	uint32_t *first, *count; /* nhosts: each host's slots (a contiguous range: slots are depth-first) */
	uint8_t *moved;          /* n: ranks of a host swap */
	double spent;            /* the cost added by the swaps taken */
	uint64_t work, max_work; /* visits so far, and the most this search may make */
};

static inline uint32_t host_of(const struct ll *s, uint32_t u)
{
	return s->t->slot_host[s->perm[u]];
}

/* Adds sign x the edge's weight to each link of the route between the hosts of u and v. */
static void route_add(struct ll *s, uint32_t hu, uint32_t hv, double w, double sign)
{
	uint64_t r[3];
	int i, n;

	if (hu == hv)
		return;
	s->load[hu] += sign * w / s->x->rate[hu];
	s->load[hv] += sign * w / s->x->rate[hv];
	for (i = 0, n = topo_links_route(s->x, hu, hv, r); i < n; i++)
		s->load[r[i]] += sign * w / s->x->rate[r[i]];
}

/* Adds sign x the edges of u (but the edge to skip) to the loads. */
static void rank_add(struct ll *s, uint32_t u, uint32_t skip, double sign)
{
	const map_graph_t *g = s->g;
	uint32_t hu = host_of(s, u);
	uint64_t k;

	for (k = g->xadj[u]; k < g->xadj[u + 1]; k++)
		if (g->adj[k] != skip)
			route_add(s, hu, host_of(s, g->adj[k]), g->w[k], sign);
	s->work += g->xadj[u + 1] - g->xadj[u];
}

/* Does an edge of u go over link l? */
static int uses(struct ll *s, uint32_t u, uint64_t l)
{
	const map_graph_t *g = s->g;
	uint32_t hu = host_of(s, u), hv;
	uint64_t k, r[3];
	int i, n;

	s->work += g->xadj[u + 1] - g->xadj[u];
	for (k = g->xadj[u]; k < g->xadj[u + 1]; k++) {
		if ((hv = host_of(s, g->adj[k])) == hu)
			continue;
		if (l == hu || l == hv)
			return 1;
		for (i = 0, n = topo_links_route(s->x, hu, hv, r); i < n; i++)
			if (r[i] == l)
				return 1;
	}
	return 0;
}

/* Change of the mapping's cost if u and v swapped slots. */
static double swap_delta(struct ll *s, uint32_t u, uint32_t v)
{
	const map_graph_t *g = s->g;
	const topo_target_t *t = s->t;
	uint32_t su = s->perm[u], sv = s->perm[v], a;
	double d = 0;
	uint64_t k;

	for (k = g->xadj[u]; k < g->xadj[u + 1]; k++)
		if ((a = g->adj[k]) != v)
			d += g->w[k] *
			     (topo_target_distance(t, sv, s->perm[a]) - topo_target_distance(t, su, s->perm[a]));
	for (k = g->xadj[v]; k < g->xadj[v + 1]; k++)
		if ((a = g->adj[k]) != u)
			d += g->w[k] *
			     (topo_target_distance(t, su, s->perm[a]) - topo_target_distance(t, sv, s->perm[a]));
	s->work += (g->xadj[u + 1] - g->xadj[u]) + (g->xadj[v + 1] - g->xadj[v]);
	return d;
}

/* The largest load (its link in *at) and the sum of squared loads. */
static double measure(const struct ll *s, uint64_t *at, double *sq)
{
	double m = -1;
	uint64_t i;

	*sq = 0;
	for (i = 0; i < s->x->nlinks; i++) {
		*sq += s->load[i] * s->load[i];
		if (s->load[i] > m * (1 + 1e-12))
			m = s->load[i], *at = i;
	}
	return m;
}

static void swap_ranks(struct ll *s, uint32_t u, uint32_t v)
{
	uint32_t tmp = s->perm[u];

	rank_add(s, u, UINT32_MAX, -1);
	rank_add(s, v, u, -1);
	s->perm[u] = s->perm[v], s->perm[v] = tmp;
	s->rank[s->perm[u]] = u, s->rank[s->perm[v]] = v;
	rank_add(s, u, UINT32_MAX, 1);
	rank_add(s, v, u, 1);
}

/* Lexicographically lower: (m, sq) against (m0, sq0). */
static int lower(double m, double sq, double m0, double sq0)
{
	if (m < m0 * (1 - 1e-9))
		return 1;
	return m <= m0 * (1 + 1e-9) && sq < sq0 * (1 - 1e-9);
}

/* Walks the edges of the ranks of hosts a and b. sign 0: returns their cost (an edge between two of them
 * counted once: half from each end); otherwise adds sign x each edge, once, to the loads, and returns 0. */
static double hosts_edges(struct ll *s, uint32_t a, uint32_t b, double sign)
{
	const map_graph_t *g = s->g;
	uint32_t hs[2] = { a, b }, i, j, u, v;
	double c = 0;
	uint64_t k;

	for (i = 0; i < 2; i++)
		for (j = s->first[hs[i]]; j < s->first[hs[i]] + s->count[hs[i]]; j++) {
			if ((u = s->rank[j]) == UINT32_MAX)
				continue;
			for (k = g->xadj[u]; k < g->xadj[u + 1]; k++) {
				v = g->adj[k];
				if (sign == 0)
					c += g->w[k] * topo_target_distance(s->t, s->perm[u], s->perm[v]) *
					     (s->moved[v] ? 0.5 : 1.0);
				else if (!s->moved[v] || v > u)
					route_add(s, host_of(s, u), host_of(s, v), g->w[k], sign);
			}
			s->work += g->xadj[u + 1] - g->xadj[u];
		}
	return c;
}

/* Exchanges what hosts a and b hold, slot for slot (their slot counts are equal). */
static void hosts_exchange(struct ll *s, uint32_t a, uint32_t b)
{
	uint32_t j, sa, sb, ra, rb;

	for (j = 0; j < s->count[a]; j++) {
		sa = s->first[a] + j, sb = s->first[b] + j;
		ra = s->rank[sa], rb = s->rank[sb];
		s->rank[sa] = rb, s->rank[sb] = ra;
		if (ra != UINT32_MAX)
			s->perm[ra] = sb;
		if (rb != UINT32_MAX)
			s->perm[rb] = sa;
	}
}

static void mark(struct ll *s, uint32_t a, uint32_t b, uint8_t on)
{
	uint32_t hs[2] = { a, b }, i, j;

	for (i = 0; i < 2; i++)
		for (j = s->first[hs[i]]; j < s->first[hs[i]] + s->count[hs[i]]; j++)
			if (s->rank[j] != UINT32_MAX)
				s->moved[s->rank[j]] = on;
}

/* Swaps hosts a and b if the cost rises by at most tol; the cost change in *d. */
static void hosts_swap(struct ll *s, uint32_t a, uint32_t b)
{
	mark(s, a, b, 1);
	hosts_edges(s, a, b, -1);
	hosts_exchange(s, a, b);
	hosts_edges(s, a, b, 1);
	mark(s, a, b, 0);
}

static double hosts_delta(struct ll *s, uint32_t a, uint32_t b)
{
	double before, after;

	mark(s, a, b, 1);
	before = hosts_edges(s, a, b, 0);
	hosts_exchange(s, a, b);
	after = hosts_edges(s, a, b, 0);
	hosts_exchange(s, a, b);
	mark(s, a, b, 0);
	return after - before;
}

/* Does a rank of host h have an edge over link l? */
static int host_uses(struct ll *s, uint32_t h, uint64_t l)
{
	uint32_t j;

	for (j = s->first[h]; j < s->first[h] + s->count[h]; j++)
		if (s->rank[j] != UINT32_MAX && uses(s, s->rank[j], l))
			return 1;
	return 0;
}

/* One round of host swaps: the first exchange of a host over the busiest link with another host of as
 * many slots that lowers the order. 1 if one was made. */
static int host_round(struct ll *s, uint64_t at, double tol, double m0, double sq0)
{
	uint32_t a, b, H = s->t->nhosts;
	double m, sq;
	uint64_t dummy;

	for (a = 0; a < H && s->work < s->max_work; a++) {
		s->work++;
		if (!host_uses(s, a, at))
			continue;
		for (b = 0; b < H && s->work < s->max_work; b++) {
			double d;

			s->work++; /* a host passed over is a step too (hosts of other slot counts: H x H) */
			if (b == a || s->count[b] != s->count[a] || (d = hosts_delta(s, a, b)) > tol)
				continue;
			hosts_swap(s, a, b);
			m = measure(s, &dummy, &sq);
			s->work += s->x->nlinks;
			if (lower(m, sq, m0, sq0)) {
				s->spent += d;
				return 1;
			}
			hosts_swap(s, a, b); /* back */
		}
	}
	return 0;
}

/* One round: the first swap of a rank over the busiest link that lowers the order. 1 if one was made. */
static int round_once(struct ll *s, double cost, double *m0, double *sq0)
{
	uint32_t n = s->g->n, u, v;
	uint64_t at = 0;
	double m, sq, tol = LL_REL_EPS * fabs(cost) - s->spent;

	*m0 = measure(s, &at, sq0);
	s->work += s->x->nlinks;
	if (host_round(s, at, tol, *m0, *sq0))
		return 1;
	for (u = 0; u < n && s->work < s->max_work; u++) {
		s->work++;
		if (!uses(s, u, at))
			continue;
		for (v = 0; v < n && s->work < s->max_work; v++) {
			uint64_t dummy;

			double d;

			s->work++;
			if (v == u || host_of(s, v) == host_of(s, u) || (d = swap_delta(s, u, v)) > tol)
				continue;
			swap_ranks(s, u, v);
			m = measure(s, &dummy, &sq);
			s->work += s->x->nlinks;
			if (lower(m, sq, *m0, *sq0)) {
				s->spent += d;
				return 1;
			}
			swap_ranks(s, u, v); /* back */
		}
	}
	return 0;
}

static int loads(struct ll *s)
{
	uint32_t u;

	if (!(s->load = calloc(s->x->nlinks, sizeof(*s->load))))
		return errno = ENOMEM, -1;
	for (u = 0; u < s->g->n; u++) {
		const map_graph_t *g = s->g;
		uint64_t k;

		for (k = g->xadj[u]; k < g->xadj[u + 1]; k++)
			if (g->adj[k] > u)
				route_add(s, host_of(s, u), host_of(s, g->adj[k]), g->w[k], 1);
	}
	return 0;
}

static void free_state(struct ll *s)
{
	free(s->load), free(s->rank), free(s->first), free(s->count), free(s->moved);
}

/* Slot -> rank, each host's range of slots, the marks of a host swap. */
static int hosts_index(struct ll *s)
{
	const topo_target_t *t = s->t;
	uint32_t i, h;

	s->rank = malloc((size_t)t->nslots * sizeof(*s->rank));
	s->first = malloc((size_t)t->nhosts * sizeof(*s->first));
	s->count = calloc(t->nhosts, sizeof(*s->count));
	s->moved = calloc(s->g->n, 1);
	if (!s->rank || !s->first || !s->count || !s->moved)
		return -1;
	for (i = 0; i < t->nslots; i++) {
		s->rank[i] = UINT32_MAX;
		if (!s->count[h = t->slot_host[i]]++)
			s->first[h] = i;
	}
	for (i = 0; i < s->g->n; i++)
		s->rank[s->perm[i]] = i;
	return 0;
}

double map_link_load_max(const map_graph_t *g, const topo_target_t *t, const uint32_t *perm, uint64_t *link)
{
	struct ll s;
	uint64_t at = 0;
	double m, sq;

	if (!g || !t || !perm || !t->links || !t->slot_host)
		return -1;
	memset(&s, 0, sizeof(s));
	s.g = g, s.t = t, s.x = t->links, s.perm = (uint32_t *)perm; /* read only here */
	if (loads(&s) < 0)
		return -1;
	m = measure(&s, &at, &sq);
	free(s.load);
	if (link)
		*link = at;
	return m;
}

int map_linkload_refine(const map_graph_t *g, const topo_target_t *t, uint32_t *perm, double budget_ms)
{
	return map_linkload_refine_stats(g, t, perm, budget_ms, NULL);
}

int map_linkload_refine_stats(const map_graph_t *g, const topo_target_t *t, uint32_t *perm, double budget_ms,
			      map_ll_stats_t *st)
{
	double w = budget_ms * LL_WORK_PER_MS;

	struct ll s;
	double cost, m0, sq0, m1, sq1;
	uint64_t at;
	uint32_t *keep;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!t->links || !t->slot_host || g->n < 2)
		return 0;
	if (!(keep = malloc((size_t)g->n * sizeof(*keep))))
		return errno = ENOMEM, -1;
	memcpy(keep, perm, (size_t)g->n * sizeof(*keep));
	memset(&s, 0, sizeof(s));
	s.g = g, s.t = t, s.x = t->links, s.perm = perm;
	s.max_work = !(w < (double)LL_MAX_WORK) ? LL_MAX_WORK : w < (double)LL_MIN_WORK ? LL_MIN_WORK : (uint64_t)w;
	if (loads(&s) < 0 || hosts_index(&s) < 0) {
		free_state(&s);
		free(keep);
		return errno = ENOMEM, -1;
	}
	cost = map_cost(g, t, perm);
	m0 = measure(&s, &at, &sq0);
	while (s.work < s.max_work && round_once(&s, cost, &m1, &sq1))
		;
	if (st)
		st->work = s.work, st->max_work = s.max_work;
	m1 = measure(&s, &at, &sq1);
	/* the cost may not rise (rounding of the deltas included), and the loads must be lower */
	if (map_cost(g, t, perm) > cost * (1 + LL_REL_EPS) || !lower(m1, sq1, m0, sq0))
		memcpy(perm, keep, (size_t)g->n * sizeof(*perm));
	free_state(&s);
	free(keep);
	return 0;
}
