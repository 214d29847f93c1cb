/*
 * order/sim.c: the allocation simulator. Jobs arrive in submit order and start first-come first-served;
 * a job takes the first free nodes of the ordering (skipping busy ones), runs, and leaves. At start,
 * each job is measured: mean pairwise weighted hop distance (coordinate histograms: O(k + dims)),
 * thickness (internal router links per router), interference (hops of its rank-to-next-rank
 * dimension-ordered routes that enter routers holding other jobs' nodes) and pieces (connected
 * components of its routers).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"

static const char *class_names[SIM_NCLASSES] = { "2-16", "32-128", "256+", "all" };

const char *sim_class_name(int c)
{
	return (c >= 0 && c < SIM_NCLASSES) ? class_names[c] : "?";
}

int sim_class_of(uint32_t nodes)
{
	if (nodes >= 2 && nodes <= 16)
		return 0;
	if (nodes >= 32 && nodes <= 128)
		return 1;
	if (nodes >= 256)
		return 2;
	return -1;
}

/* Sum over pairs of the ring (or line) distance, from a histogram of D coordinates. O(D). */
static double pair_sum(const double *h, int D, int wrap)
{
	double s = 0, cnt = 0, w = 0, cnt_lo = 0, w_lo = 0;
	int j, lo = 0, half = D / 2;

	for (j = 0; j < D; j++) {
		if (wrap)
			while (lo < j - half) {
				cnt_lo += h[lo];
				w_lo += (double)lo * h[lo];
				lo++;
			}
		if (h[j] != 0) {
			double near_c = cnt - cnt_lo, near_w = w - w_lo;

			s += h[j] * ((double)j * near_c - near_w);
			s += h[j] * ((double)(D - j) * cnt_lo + w_lo);
		}
		cnt += h[j];
		w += (double)j * h[j];
	}
	return s;
}

double sim_mean_hop(const topo_torus_spec_t *spec, const uint32_t *nodes, size_t k, double *hist)
{
	double total = 0;
	size_t i;
	int d, off = 0;

	if (k < 2)
		return 0;
	for (i = 0; i < k; i++) {
		int c[3];

		order_node_coords(spec, nodes[i], c);
		hist[c[0]] += 1;
		hist[spec->dims[0] + c[1]] += 1;
		hist[spec->dims[0] + spec->dims[1] + c[2]] += 1;
	}
	for (d = 0; d < 3; d++) {
		total += spec->link_cost[d] * pair_sum(hist + off, spec->dims[d], spec->wrap[d]);
		memset(hist + off, 0, (size_t)spec->dims[d] * sizeof(double));
		off += spec->dims[d];
	}
	return total / ((double)k * (double)(k - 1) / 2);
}

/* ---- machine state ------------------------------------------------------------------------------ */

struct running {
	double end;
	uint32_t *pos; /* positions in the order held by the job */
	uint32_t k;
};

struct sim {
	const order_t *o;
	const topo_torus_spec_t *s;
	uint32_t nrouters;
	unsigned char *busy; /* per position */
	uint32_t *busy_r;    /* busy nodes per router */
	uint32_t *own_r;     /* this job's nodes per router (valid where stamp_r == stamp) */
	uint32_t *stamp_r, *seen_r, stamp;
	uint32_t *queue;
	double *hist;
	uint32_t *nodes; /* scratch: the job's nodes */
	size_t nfree;
	struct running *heap; /* min-heap on end time */
	size_t nrun;
	double acc[SIM_NCLASSES][4];
	size_t cnt[SIM_NCLASSES];
};

static void heap_push(struct sim *S, struct running r)
{
	size_t i = S->nrun++;

	while (i > 0 && S->heap[(i - 1) / 2].end > r.end) {
		S->heap[i] = S->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	S->heap[i] = r;
}

static struct running heap_pop(struct sim *S)
{
	struct running top = S->heap[0], last = S->heap[--S->nrun];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= S->nrun)
			break;
		if (c + 1 < S->nrun && S->heap[c + 1].end < S->heap[c].end)
			c++;
		if (S->heap[c].end >= last.end)
			break;
		S->heap[i] = S->heap[c];
		i = c;
	}
	if (S->nrun)
		S->heap[i] = last;
	return top;
}

static uint32_t router_of(const struct sim *S, uint32_t node)
{
	return node / (uint32_t)S->s->nodes_per_router;
}

/* Neighbour router of r one step along dimension d (dir +1/-1), or UINT32_MAX at a mesh edge. */
static uint32_t neighbour(const topo_torus_spec_t *s, uint32_t r, int d, int dir)
{
	int c[3];

	order_node_coords(s, r * (uint32_t)s->nodes_per_router, c);
	c[d] += dir;
	if (c[d] < 0 || c[d] >= s->dims[d]) {
		if (!s->wrap[d])
			return UINT32_MAX;
		c[d] = (c[d] + s->dims[d]) % s->dims[d];
	}
	return ((uint32_t)c[0] * (uint32_t)s->dims[1] + (uint32_t)c[1]) * (uint32_t)s->dims[2] + (uint32_t)c[2];
}

/* Thickness and pieces of the job's routers (stamped). */
static void shape_metrics(struct sim *S, uint32_t k, double *thick, double *pieces)
{
	uint32_t i, nr = 0, links = 0, comps = 0;
	int d;

	for (i = 0; i < k; i++) {
		uint32_t r = router_of(S, S->nodes[i]);

		if (S->seen_r[r] == S->stamp)
			continue;
		S->seen_r[r] = S->stamp;
		nr++;
		for (d = 0; d < 3; d++) {
			uint32_t v = S->s->dims[d] > 1 ? neighbour(S->s, r, d, 1) : UINT32_MAX;

			if (v != UINT32_MAX && v != r && S->stamp_r[v] == S->stamp)
				links++;
		}
	}
	/* components: BFS over stamped routers; seen_r goes from stamp to stamp + 1 */
	for (i = 0; i < k; i++) {
		uint32_t r = router_of(S, S->nodes[i]), qh = 0, qt = 0;

		if (S->seen_r[r] != S->stamp)
			continue;
		comps++;
		S->seen_r[r] = S->stamp + 1;
		S->queue[qt++] = r;
		while (qh < qt) {
			uint32_t u = S->queue[qh++];

			for (d = 0; d < 6; d++) {
				uint32_t v = neighbour(S->s, u, d / 2, (d & 1) ? -1 : 1);

				if (v != UINT32_MAX && S->stamp_r[v] == S->stamp && S->seen_r[v] == S->stamp) {
					S->seen_r[v] = S->stamp + 1;
					S->queue[qt++] = v;
				}
			}
		}
	}
	*thick = nr ? (double)links / nr : 0;
	*pieces = comps;
}

/* Share of the hops of consecutive-rank routes (x, then y, then z, shortest way round) that enter a
 * router holding nodes of other jobs. */
static double interference(struct sim *S, uint32_t k)
{
	const topo_torus_spec_t *s = S->s;
	double hops = 0, foreign = 0;
	uint32_t i;

	for (i = 0; i + 1 < k; i++) {
		uint32_t r = router_of(S, S->nodes[i]), t = router_of(S, S->nodes[i + 1]);
		int a[3], b[3], d;

		order_node_coords(s, r * (uint32_t)s->nodes_per_router, a);
		order_node_coords(s, t * (uint32_t)s->nodes_per_router, b);
		for (d = 0; d < 3; d++) {
			int delta = b[d] - a[d], dir = delta > 0 ? 1 : -1, n = abs(delta);

			if (s->wrap[d] && n > s->dims[d] - n) {
				n = s->dims[d] - n;
				dir = -dir;
			}
			while (n-- > 0) {
				r = neighbour(s, r, d, dir);
				hops++;
				if (S->busy_r[r] > (S->stamp_r[r] == S->stamp ? S->own_r[r] : 0))
					foreign++;
			}
		}
	}
	return hops > 0 ? foreign / hops : 0;
}

/* Starts a job: takes the first k free positions, measures, and schedules its end. */
static int start_job(struct sim *S, const sim_job_t *j, double now)
{
	struct running run = { .end = now + j->runtime, .k = j->nodes };
	uint32_t i, n = 0, p;
	double m[4];
	int c;

	run.pos = malloc((size_t)j->nodes * sizeof(uint32_t));
	if (!run.pos)
		return -1;
	S->stamp += 2;
	for (p = 0; n < j->nodes; p++) {
		uint32_t node, r;

		if (S->busy[p])
			continue;
		node = S->o->node[p];
		r = router_of(S, node);
		S->busy[p] = 1;
		S->busy_r[r]++;
		if (S->stamp_r[r] != S->stamp) {
			S->stamp_r[r] = S->stamp;
			S->own_r[r] = 0;
		}
		S->own_r[r]++;
		run.pos[n] = p;
		S->nodes[n++] = node;
	}
	S->nfree -= j->nodes;
	m[0] = sim_mean_hop(S->s, S->nodes, n, S->hist);
	shape_metrics(S, n, &m[1], &m[3]);
	m[2] = interference(S, n);
	for (c = sim_class_of(j->nodes);; c = SIM_NCLASSES - 1) {
		if (c >= 0) {
			for (i = 0; i < 4; i++)
				S->acc[c][i] += m[i];
			S->cnt[c]++;
		}
		if (c == SIM_NCLASSES - 1)
			break;
	}
	heap_push(S, run);
	return 0;
}

static void end_job(struct sim *S)
{
	struct running r = heap_pop(S);
	uint32_t i;

	for (i = 0; i < r.k; i++) {
		S->busy[r.pos[i]] = 0;
		S->busy_r[router_of(S, S->o->node[r.pos[i]])]--;
	}
	S->nfree += r.k;
	free(r.pos);
}

static int sim_alloc(struct sim *S, const order_t *o, size_t njobs)
{
	size_t hd = (size_t)o->spec.dims[0] + o->spec.dims[1] + o->spec.dims[2];

	S->o = o;
	S->s = &o->spec;
	S->nrouters = (uint32_t)(o->nnodes / (size_t)o->spec.nodes_per_router);
	S->nfree = o->nnodes;
	S->busy = calloc(o->nnodes, 1);
	S->busy_r = calloc(S->nrouters, sizeof(uint32_t));
	S->own_r = calloc(S->nrouters, sizeof(uint32_t));
	S->stamp_r = calloc(S->nrouters, sizeof(uint32_t));
	S->seen_r = calloc(S->nrouters, sizeof(uint32_t));
	S->queue = malloc(S->nrouters * sizeof(uint32_t));
	S->hist = calloc(hd, sizeof(double));
	S->nodes = malloc(o->nnodes * sizeof(uint32_t));
	S->heap = malloc((njobs + 1) * sizeof(struct running));
	return (S->busy && S->busy_r && S->own_r && S->stamp_r && S->seen_r && S->queue && S->hist && S->nodes &&
		S->heap)
		       ? 0
		       : -1;
}

static void sim_free(struct sim *S)
{
	while (S->heap && S->nrun)
		free(heap_pop(S).pos);
	free(S->busy);
	free(S->busy_r);
	free(S->own_r);
	free(S->stamp_r);
	free(S->seen_r);
	free(S->queue);
	free(S->hist);
	free(S->nodes);
	free(S->heap);
}

static void finish_stats(struct sim *S, sim_result_t *res)
{
	int c, i;

	for (c = 0; c < SIM_NCLASSES; c++) {
		double *v[4] = { &res->cls[c].hop, &res->cls[c].thickness, &res->cls[c].interference,
				 &res->cls[c].pieces };

		res->cls[c].jobs = S->cnt[c];
		for (i = 0; i < 4; i++)
			*v[i] = S->cnt[c] ? S->acc[c][i] / (double)S->cnt[c] : 0;
	}
}

int sim_run(const order_t *o, const sim_jobs_t *jobs, sim_result_t *res, rm_error_t *err)
{
	struct sim S;
	size_t q = 0;
	double t = 0, work = 0, wait = 0, first = 0;
	int rc = 0;

	memset(&S, 0, sizeof(S));
	memset(res, 0, sizeof(*res));
	if (!o || !jobs || sim_alloc(&S, o, jobs->njobs) < 0) {
		sim_free(&S);
		errno = ENOMEM;
		return rm_error_set(err, "simulate", 0, 0, "out of memory");
	}
	if (jobs->njobs)
		first = t = jobs->job[0].submit;
	while (rc == 0 && (q < jobs->njobs || S.nrun)) {
		const sim_job_t *j = q < jobs->njobs ? &jobs->job[q] : NULL;

		if (j && j->nodes > o->nnodes) {
			rc = rm_error_set(err, "simulate", 0, 0, "job %zu needs %u nodes, the torus has %zu", q + 1,
					  j->nodes, o->nnodes);
		} else if (j && j->submit <= t && j->nodes <= S.nfree) {
			rc = start_job(&S, j, t);
			work += (double)j->nodes * j->runtime;
			wait += t - j->submit;
			q++;
		} else if (j && j->submit > t && (!S.nrun || j->submit < S.heap[0].end)) {
			t = j->submit;
		} else {
			t = S.heap[0].end > t ? S.heap[0].end : t;
			end_job(&S);
		}
	}
	if (rc == 0) {
		finish_stats(&S, res);
		res->makespan = t - first;
		res->utilisation = res->makespan > 0 ? work / ((double)o->nnodes * res->makespan) : 0;
		res->mean_wait = jobs->njobs ? wait / (double)jobs->njobs : 0;
	}
	sim_free(&S);
	return rc;
}
