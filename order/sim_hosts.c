/*
 * order/sim_hosts.c: the allocation simulator on a switched fabric's host list (order.h): FCFS, a
 * policy picks each job's hosts, and each job's traffic is measured by the domains and leaves it crosses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"

const char *const sim_hosts_measure_names[SIM_HOSTS_NMEASURES] = { "domain_pairs", "domain_ring", "leaf_pairs",
								   "leaf_ring" };

struct hs_run {
	double end;
	uint32_t *host;
	uint32_t k;
};

typedef struct hs {
	const sim_hosts_t *m;
	unsigned char *busy; /* per host */
	uint32_t *pos;       /* position of each host in the order */
	uint32_t ndom, nleaf;
	uint32_t *dom_free, *leaf_free; /* free hosts per domain, per leaf */
	uint32_t *cnt;                  /* scratch counts (max(ndom, nleaf)) */
	uint32_t *caps;                 /* scratch: segments per domain (ndom) */
	uint32_t *pick;                 /* scratch: the job's hosts */
	uint32_t *dom_at, *dom_host;    /* hosts of each domain in order: dom_host[dom_at[d] .. dom_at[d + 1]) */
	unsigned char *leaf_seen;       /* scratch: per leaf */
	size_t nfree;
	struct hs_run *heap;
	size_t nrun;
} hs_t;

static void take(hs_t *S, uint32_t h, uint32_t *k)
{
	S->busy[h] = 1;
	S->dom_free[S->m->domain[h]]--;
	S->leaf_free[S->m->leaf[h]]--;
	S->nfree--;
	S->pick[(*k)++] = h;
}

static void first_fit(hs_t *S, uint32_t want, uint32_t *k)
{
	size_t p;

	for (p = 0; p < S->m->n && *k < want; p++)
		if (!S->busy[S->m->order[p]])
			take(S, S->m->order[p], k);
}

/* The first free hosts in order among those whose unit (leaf or domain, by unit[]) is u. */
static void fill_unit(hs_t *S, const uint32_t *unit, uint32_t u, uint32_t want, uint32_t *k)
{
	size_t p;

	for (p = 0; p < S->m->n && *k < want; p++) {
		uint32_t h = S->m->order[p];

		if (!S->busy[h] && unit[h] == u)
			take(S, h, k);
	}
}

/* Best-fit leaf, else round robin over the leaves with free hosts (leaves in order of first host). */
static void spread(hs_t *S, uint32_t want, uint32_t *k)
{
	uint32_t l, best = UINT32_MAX;

	for (l = 0; l < S->nleaf; l++)
		if (S->leaf_free[l] >= want && (best == UINT32_MAX || S->leaf_free[l] < S->leaf_free[best]))
			best = l;
	if (best != UINT32_MAX) {
		fill_unit(S, S->m->leaf, best, want, k);
		return;
	}
	while (*k < want) {
		uint32_t before = *k;

		for (l = 0; l < S->nleaf && *k < want; l++)
			if (S->leaf_free[l])
				fill_unit(S, S->m->leaf, l, *k + 1, k);
		if (*k == before)
			return;
	}
}

static int cmp_desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x < y) - (x > y);
}

/* How many of the domains d0 .. d0 + n - 1 a split of want hosts in segments of s takes (each segment
 * inside one domain, the domains holding the most segments first), UINT32_MAX when they cannot. */
static uint32_t domains_used(const hs_t *S, uint32_t d0, uint32_t n, uint32_t want, uint32_t s)
{
	size_t segs = 0;
	uint32_t d;

	for (d = 0; d < n; d++)
		S->caps[d] = S->dom_free[d0 + d] / s;
	qsort(S->caps, n, sizeof(*S->caps), cmp_desc);
	for (d = 0; d < n && S->caps[d]; d++)
		if ((segs += S->caps[d]) >= want / s)
			return d + 1;
	return UINT32_MAX;
}

/* Leaves spanned by the first m free hosts in order of domain d (as fill_unit takes them); marks them in
 * leaf_seen so that a second domain's count adds only new leaves. O(hosts of d). */
static uint32_t leaves_of_first(hs_t *S, uint32_t d, uint32_t m)
{
	uint32_t i, got = 0, nl = 0;

	for (i = S->dom_at[d]; i < S->dom_at[d + 1] && got < m; i++) {
		uint32_t h = S->dom_host[i];

		if (S->busy[h])
			continue;
		got++;
		if (!S->leaf_seen[S->m->leaf[h]]) {
			S->leaf_seen[S->m->leaf[h]] = 1;
			nl++;
		}
	}
	return nl;
}

/* Leaves spanned by a split of want hosts over the domains d0 .. d0 + n - 1 in segments of s, taken as
 * take_segments takes them (the domain holding the most segments first, each domain once). */
static uint32_t split_leaves(hs_t *S, uint32_t d0, uint32_t n, uint32_t s, uint32_t want)
{
	uint32_t d, k = 0, nl = 0, *left = S->caps;

	for (d = 0; d < n; d++)
		left[d] = S->dom_free[d0 + d];
	while (k < want) {
		uint32_t most = 0, segs;

		for (d = 1; d < n; d++)
			if (left[d] / s > left[most] / s)
				most = d;
		segs = left[most] / s;
		if (!segs)
			break;
		if ((size_t)segs * s > want - k)
			segs = (want - k) / s;
		nl += leaves_of_first(S, d0 + most, segs * s);
		left[most] = 0;
		k += segs * s;
	}
	for (d = d0; d < d0 + n; d++) /* clear the marks */
		for (k = S->dom_at[d]; k < S->dom_at[d + 1]; k++)
			S->leaf_seen[S->m->leaf[S->dom_host[k]]] = 0;
	return nl;
}

/* The segment of a split of want hosts over the domains d0 .. d0 + n - 1 when the fewest of them that
 * hold want are two; *leaves: the leaves the split spans, UINT32_MAX when no split of the rule applies.
 * Two domains share one global link (dragonfly: the pair's; fat tree: the spine between two leaves),
 * which carries all of the job's traffic between its two parts. A job's ranks are laid out block by
 * block over its hosts and most decompositions (MPI_Dims_create's grids, halves, quarters) divide the
 * job evenly: parts that are multiples of a large divisor are whole sub-grids and cut fewer neighbour
 * pairs across that link than a split in whatever proportion the free hosts give (8+8 or 12+4 instead
 * of 13+3 or 9+7: tests/bench/PLACEMENT.md). Among the divisors s of want whose split takes two
 * domains and that are at least a quarter of want (16: 8+8, 12+4), the split spanning the fewest leaves
 * (routers) is taken, then the largest s: every message between two leaves of a group crosses two more
 * links than one inside a leaf, and with rendezvous each link's latency is paid three times before the
 * data (s27 in PLACEMENT.md); when no divisor is that large, the largest whose split takes two (else 1).
 * Over three domains or more the job's cross traffic is spread over several links, and parts as large
 * as the domains give keep the most pairs inside one (the all-pairs fraction of bench_placement).
 * O(divisors x n log n + hosts of the run). */
static uint32_t split_segment(hs_t *S, uint32_t d0, uint32_t n, uint32_t want, uint32_t *leaves)
{
	uint32_t best = 1, bl = UINT32_MAX, i, q;

	*leaves = UINT32_MAX;
	if (domains_used(S, d0, n, want, 1) != 2)
		return 1;
	for (i = 1; (uint64_t)i * i <= want; i++) {
		uint32_t c[2] = { i, want / i };

		if (want % i)
			continue;
		for (q = 0; q < 2; q++) {
			uint32_t l = UINT32_MAX;

			if ((q && c[1] == c[0]) || domains_used(S, d0, n, want, c[q]) != 2)
				continue;
			if ((uint64_t)c[q] * 4 >= want)
				l = split_leaves(S, d0, n, c[q], want);
			if (l < bl || (l == bl && c[q] > best))
				best = c[q], bl = l;
		}
	}
	*leaves = bl;
	return best;
}

/* Takes want hosts from the domains d0 .. d0 + n - 1 in segments of s, the domain holding the most
 * segments first (fewest domains; the first in order on a tie), each domain's hosts in order. */
static void take_segments(hs_t *S, uint32_t d0, uint32_t n, uint32_t s, uint32_t want, uint32_t *k)
{
	while (*k < want) {
		uint32_t d, most = d0, segs;

		for (d = d0 + 1; d < d0 + n; d++)
			if (S->dom_free[d] / s > S->dom_free[most] / s)
				most = d;
		segs = S->dom_free[most] / s;
		if (!segs)
			return;
		if ((size_t)segs * s > want - *k)
			segs = (want - *k) / s;
		fill_unit(S, S->m->domain, most, *k + segs * s, k);
	}
}

/* Smallest aligned run of 2^i domains with room: the one whose split spans the fewest leaves, then has
 * the largest segment (split_segment), then best fit (fewest free hosts); if no run has room, all domains. Its hosts in
 * those segments, the domain holding the most first (take_segments). Domains are numbered in block
 * order (the caller numbers them so). */
static void block(hs_t *S, uint32_t want, uint32_t *k)
{
	uint32_t span, d, e, best = UINT32_MAX, bspan = 0, bseg = 0, bleaves = 0, leaves;
	size_t bfree = 0;

	if (!want)
		return;
	for (span = 1; span <= S->ndom && best == UINT32_MAX; span *= 2)
		for (d = 0; d + span <= S->ndom; d += span) {
			size_t fr = 0;
			uint32_t seg;

			for (e = d; e < d + span; e++)
				fr += S->dom_free[e];
			if (fr < want)
				continue;
			seg = split_segment(S, d, span, want, &leaves);
			if (best == UINT32_MAX || leaves < bleaves ||
			    (leaves == bleaves && (seg > bseg || (seg == bseg && fr < bfree))))
				best = d, bspan = span, bfree = fr, bseg = seg, bleaves = leaves;
		}
	if (best == UINT32_MAX) /* no run has room: every domain */
		best = 0, bspan = S->ndom, bseg = split_segment(S, 0, S->ndom, want, &leaves);
	take_segments(S, best, bspan, bseg, want, k);
}

/* Fractions of the job's all-pairs and ring traffic crossing units (unit[] of its hosts). */
static void measure(hs_t *S, const uint32_t *unit, uint32_t nunit, uint32_t k, double *pairs, double *ring)
{
	double same = 0, cross = 0;
	uint32_t i;

	for (i = 0; i < k; i++)
		S->cnt[unit[S->pick[i]]]++;
	for (i = 0; i < k; i++) {
		uint32_t u = unit[S->pick[i]];

		same += (double)S->cnt[u] - 1;
		cross += unit[S->pick[(i + 1) % k]] != u;
	}
	for (i = 0; i < k; i++)
		S->cnt[unit[S->pick[i]]] = 0;
	(void)nunit;
	*pairs = 1 - same / ((double)k * (k - 1));
	*ring = cross / k;
}

static int cmp_pos(const void *a, const void *b, void *pos)
{
	const uint32_t *p = pos, x = p[*(const uint32_t *)a], y = p[*(const uint32_t *)b];

	return (x > y) - (x < y);
}

static void heap_push(hs_t *S, struct hs_run r)
{
	size_t i = S->nrun++;

	while (i > 0 && S->heap[(i - 1) / 2].end > r.end) {
		S->heap[i] = S->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	S->heap[i] = r;
}

static void heap_pop_release(hs_t *S)
{
	struct hs_run r = S->heap[0], last = S->heap[--S->nrun];
	size_t i = 0, c;
	uint32_t j;

	while ((c = 2 * i + 1) < S->nrun) {
		if (c + 1 < S->nrun && S->heap[c + 1].end < S->heap[c].end)
			c++;
		if (last.end <= S->heap[c].end)
			break;
		S->heap[i] = S->heap[c];
		i = c;
	}
	if (S->nrun)
		S->heap[i] = last;
	for (j = 0; j < r.k; j++) {
		S->busy[r.host[j]] = 0;
		S->dom_free[S->m->domain[r.host[j]]]++;
		S->leaf_free[S->m->leaf[r.host[j]]]++;
	}
	S->nfree += r.k;
	free(r.host);
}

static void hs_free(hs_t *S)
{
	while (S->nrun)
		free(S->heap[--S->nrun].host);
	free(S->heap);
	free(S->busy);
	free(S->pos);
	free(S->dom_free);
	free(S->leaf_free);
	free(S->cnt);
	free(S->caps);
	free(S->pick);
	free(S->dom_at);
	free(S->dom_host);
	free(S->leaf_seen);
}

static int hs_init(hs_t *S, const sim_hosts_t *m)
{
	size_t h;

	memset(S, 0, sizeof(*S));
	S->m = m;
	for (h = 0; h < m->n; h++) {
		S->ndom = m->domain[h] >= S->ndom ? m->domain[h] + 1 : S->ndom;
		S->nleaf = m->leaf[h] >= S->nleaf ? m->leaf[h] + 1 : S->nleaf;
	}
	S->busy = calloc(m->n + 1, 1);
	S->pos = malloc((m->n + 1) * sizeof(*S->pos));
	S->dom_free = calloc(S->ndom + 1, sizeof(*S->dom_free));
	S->leaf_free = calloc(S->nleaf + 1, sizeof(*S->leaf_free));
	S->cnt = calloc((S->ndom > S->nleaf ? S->ndom : S->nleaf) + 1, sizeof(*S->cnt));
	S->caps = malloc((S->ndom + 1) * sizeof(*S->caps));
	S->pick = malloc((m->n + 1) * sizeof(*S->pick));
	S->heap = malloc((m->n + 1) * sizeof(*S->heap));
	S->dom_at = calloc(S->ndom + 2, sizeof(*S->dom_at));
	S->dom_host = malloc((m->n + 1) * sizeof(*S->dom_host));
	S->leaf_seen = calloc(S->nleaf + 1, 1);
	if (!S->busy || !S->pos || !S->dom_free || !S->leaf_free || !S->cnt || !S->caps || !S->pick || !S->heap ||
	    !S->dom_at || !S->dom_host || !S->leaf_seen)
		return -1;
	for (h = 0; h < m->n; h++) {
		S->pos[m->order[h]] = (uint32_t)h;
		S->dom_free[m->domain[h]]++;
		S->leaf_free[m->leaf[h]]++;
		S->dom_at[m->domain[h] + 1]++;
	}
	for (h = 0; h < S->ndom; h++)
		S->dom_at[h + 1] += S->dom_at[h];
	for (h = 0; h < m->n; h++) { /* each domain's hosts in order (dom_free as the cursor, then recounted) */
		uint32_t x = m->order[h], d = m->domain[x];

		S->dom_host[S->dom_at[d] + --S->dom_free[d]] = x;
	}
	for (h = 0; h < S->ndom; h++) { /* filled back to front: reverse each domain's run */
		uint32_t a = S->dom_at[h], b = S->dom_at[h + 1];

		S->dom_free[h] = b - a;
		while (a + 1 < b) {
			uint32_t t = S->dom_host[a];

			S->dom_host[a++] = S->dom_host[--b];
			S->dom_host[b] = t;
		}
	}
	S->nfree = m->n;
	return 0;
}

int sim_hosts_run(const sim_hosts_t *m, const sim_jobs_t *jobs, sim_hosts_result_t *res, rm_error_t *err)
{
	double now = 0, wait = 0;
	hs_t S;
	size_t j;
	int c, q;

	memset(res, 0, sizeof(*res));
	if (hs_init(&S, m) < 0) {
		hs_free(&S);
		return rm_error_set(err, "simulate", 0, 0, "out of memory");
	}
	for (j = 0; j < jobs->njobs; j++) {
		const sim_job_t *job = &jobs->job[j];
		uint32_t k = 0;
		double v[SIM_HOSTS_NMEASURES];
		struct hs_run r;

		if (job->nodes > m->n) {
			hs_free(&S);
			errno = EINVAL;
			return rm_error_set(err, "simulate", 0, 0, "job %zu needs %u hosts, the fabric has %zu", j + 1,
					    job->nodes, m->n);
		}
		if (job->submit > now)
			now = job->submit;
		while (S.nrun && (S.nfree < job->nodes || S.heap[0].end <= now)) {
			if (S.heap[0].end > now)
				now = S.heap[0].end;
			heap_pop_release(&S);
		}
		wait += now - job->submit;
		if (m->policy == SIM_HOSTS_SPREAD)
			spread(&S, job->nodes, &k);
		else if (m->policy == SIM_HOSTS_BLOCK)
			block(&S, job->nodes, &k);
		else
			first_fit(&S, job->nodes, &k);
		qsort_r(S.pick, k, sizeof(*S.pick), cmp_pos, S.pos); /* ranks in the order's order */
		c = sim_class_of(k);
		if (k > 1) {
			measure(&S, m->domain, S.ndom, k, &v[0], &v[1]);
			measure(&S, m->leaf, S.nleaf, k, &v[2], &v[3]);
			for (q = 0; q < SIM_HOSTS_NMEASURES; q++) {
				if (c >= 0)
					res->m[c][q] += v[q];
				res->m[SIM_NCLASSES - 1][q] += v[q];
			}
			if (c >= 0)
				res->jobs[c]++;
			res->jobs[SIM_NCLASSES - 1]++;
		}
		r.end = now + job->runtime;
		r.k = k;
		if (!(r.host = malloc((k + 1) * sizeof(*r.host)))) {
			hs_free(&S);
			return rm_error_set(err, "simulate", 0, 0, "out of memory");
		}
		memcpy(r.host, S.pick, k * sizeof(*r.host));
		heap_push(&S, r);
	}
	for (c = 0; c < SIM_NCLASSES; c++)
		for (q = 0; q < SIM_HOSTS_NMEASURES; q++)
			res->m[c][q] = res->jobs[c] ? res->m[c][q] / (double)res->jobs[c] : 0;
	res->mean_wait = jobs->njobs ? wait / (double)jobs->njobs : 0;
	hs_free(&S);
	return 0;
}
