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
	uint32_t *pick;                 /* scratch: the job's hosts */
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

/* Smallest aligned run of 2^i domains with room, best fit; else first fit. Domains are numbered in
 * block order (the caller numbers them so). */
static void block(hs_t *S, uint32_t want, uint32_t *k)
{
	uint32_t span, d, e, best = UINT32_MAX, bspan = 0;
	size_t bfree = 0;

	for (span = 1; span <= S->ndom && best == UINT32_MAX; span *= 2)
		for (d = 0; d + span <= S->ndom; d += span) {
			size_t fr = 0;

			for (e = d; e < d + span; e++)
				fr += S->dom_free[e];
			if (fr >= want && (best == UINT32_MAX || fr < bfree))
				best = d, bspan = span, bfree = fr;
		}
	for (d = best; best != UINT32_MAX && d < best + bspan && *k < want; d++)
		fill_unit(S, S->m->domain, d, want, k);
	while (*k < want) { /* no run has room: the domains with most free hosts first (fewest domains) */
		uint32_t most = 0;

		for (d = 1; d < S->ndom; d++)
			if (S->dom_free[d] > S->dom_free[most])
				most = d;
		if (!S->dom_free[most])
			break;
		fill_unit(S, S->m->domain, most, want, k);
	}
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
	free(S->pick);
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
	S->pick = malloc((m->n + 1) * sizeof(*S->pick));
	S->heap = malloc((m->n + 1) * sizeof(*S->heap));
	if (!S->busy || !S->pos || !S->dom_free || !S->leaf_free || !S->cnt || !S->pick || !S->heap)
		return -1;
	for (h = 0; h < m->n; h++) {
		S->pos[m->order[h]] = (uint32_t)h;
		S->dom_free[m->domain[h]]++;
		S->leaf_free[m->leaf[h]]++;
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
