/* tests/unit/test_order_sim.c: the allocation simulator (order/sim.c, sim_swf.c). The histogram
 * hop distance is compared with a brute-force O(k^2) sum; a small scenario's metrics are worked out
 * by hand; SWF traces parse, skip what they must, and malformed lines name file and line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "tests/harness.h"

static double brute_mean_hop(const topo_torus_spec_t *s, const uint32_t *v, size_t k)
{
	double sum = 0;
	size_t i, j;

	for (i = 0; i < k; i++)
		for (j = i + 1; j < k; j++) {
			int a[3], b[3], d;

			order_node_coords(s, v[i], a);
			order_node_coords(s, v[j], b);
			for (d = 0; d < 3; d++) {
				int h = abs(a[d] - b[d]);

				if (s->wrap[d] && s->dims[d] - h < h)
					h = s->dims[d] - h;
				sum += h * s->link_cost[d];
			}
		}
	return k > 1 ? sum / ((double)k * (k - 1) / 2) : 0;
}

static void test_mean_hop(void)
{
	static const int g[][5] = { { 17, 8, 24, 2, 1 }, { 5, 3, 7, 1, 0 }, { 4, 1, 9, 3, 1 }, { 2, 2, 2, 1, 1 } };
	uint64_t r = 12345;
	size_t gi, trial, i;

	for (gi = 0; gi < 4; gi++) {
		topo_torus_spec_t s = {
			{ g[gi][0], g[gi][1], g[gi][2] }, { g[gi][4], 1, g[gi][4] }, { 1, 2, 0.67 }, g[gi][3]
		};
		size_t n = (size_t)g[gi][0] * g[gi][1] * g[gi][2] * g[gi][3];
		double *hist = calloc((size_t)(g[gi][0] + g[gi][1] + g[gi][2]), sizeof(double));
		uint32_t *v = malloc(n * sizeof(uint32_t));

		for (trial = 0; trial < 20; trial++) {
			size_t k = 1 + trial * 7 % n;
			double a, b;

			for (i = 0; i < k; i++) {
				r = r * 6364136223846793005ULL + 1442695040888963407ULL;
				v[i] = (uint32_t)((r >> 33) % n);
			}
			a = sim_mean_hop(&s, v, k, hist);
			b = brute_mean_hop(&s, v, k);
			check(fabs(a - b) < 1e-9 * (1 + b), "geometry %zu, %zu nodes: histogram %g vs pairs %g", gi, k,
			      a, b);
		}
		for (i = 0; i < (size_t)(g[gi][0] + g[gi][1] + g[gi][2]); i++)
			if (hist[i] != 0)
				fail("scratch histogram left dirty");
		free(hist);
		free(v);
	}
}

/* A 1x1x4 ring, one node per router, node-id order. Job A (2 nodes) holds 0,1 until t=100; job B
 * (1 node) takes 2 at t=1 and runs long; job C (3 nodes, submitted at 50) waits for A, then takes
 * 0, 1, 3. C's routes: 0->1 one hop (own); 1->3 is 2 hops either way, taken upward: 1->2 (B's
 * router, foreign) ->3 (own): interference 1/3. C's pairs: 0-1 1, 0-3 1 (wrap), 1-3 2: hop 4/3.
 * Links inside C: 0-1 and 3-0: thickness 2/3; one piece. */
static void test_scenario(void)
{
	topo_torus_spec_t s = { { 1, 1, 4 }, { 1, 1, 1 }, { 1, 1, 1 }, 1 };
	sim_job_t j[3] = { { 0, 100, 2 }, { 1, 1000, 1 }, { 50, 10, 3 } };
	sim_jobs_t jobs = { j, 3, 0 };
	sim_result_t res;
	order_t *o = order_build(&s, "xyz", NULL, NULL);
	rm_error_t err;

	check(o != NULL, "xyz order");
	if (!o)
		return;
	rm_error_clear(&err);
	check(sim_run(o, &jobs, &res, &err) == 0, "simulation runs: %s", err.text);
	/* class 2-16 holds A and C: A has hop 1, thickness 1 link / 2 routers, no interference */
	check(res.cls[0].jobs == 2 && fabs(res.cls[0].hop - (1 + 4.0 / 3) / 2) < 1e-12, "A, C: hop (%g)",
	      res.cls[0].hop);
	check(fabs(res.cls[0].thickness - (0.5 + 2.0 / 3) / 2) < 1e-12, "A, C: thickness");
	check(fabs(res.cls[0].interference - 1.0 / 6) < 1e-12, "A, C: interference");
	/* all = A, B, C: interference (0 + 0 + 1/3) / 3, hop (1 + 0 + 4/3) / 3 */
	check(res.cls[3].jobs == 3, "3 jobs in all");
	check(fabs(res.cls[3].interference - 1.0 / 9) < 1e-12, "interference %g, want 1/9", res.cls[3].interference);
	check(fabs(res.cls[3].hop - (1 + 4.0 / 3) / 3) < 1e-12, "hop %g", res.cls[3].hop);
	check(fabs(res.cls[3].thickness - (0.5 + 0 + 2.0 / 3) / 3) < 1e-12, "thickness %g", res.cls[3].thickness);
	check(fabs(res.cls[3].pieces - 1) < 1e-12, "every job one piece (%g)", res.cls[3].pieces);
	/* waits: A 0, B 0, C 100 - 50 */
	check(fabs(res.mean_wait - 50.0 / 3) < 1e-9, "mean wait %g", res.mean_wait);
	/* a job larger than the machine is an error */
	j[2].nodes = 5;
	rm_error_clear(&err);
	check(sim_run(o, &jobs, &res, &err) < 0 && strstr(err.text, "needs 5 nodes"), "too big: %s", err.text);
	order_destroy(o);
}

static void test_synthetic(void)
{
	sim_jobs_t a, b;
	size_t i, same = 1, cls[3] = { 0, 0, 0 };

	check(sim_jobs_synthetic(&a, 6528, 500, 7, 0.9, NULL) == 0, "synthetic mix");
	check(sim_jobs_synthetic(&b, 6528, 500, 7, 0.9, NULL) == 0, "again, same seed");
	for (i = 0; i < 500; i++) {
		same &= a.job[i].nodes == b.job[i].nodes && a.job[i].submit == b.job[i].submit;
		if (sim_class_of(a.job[i].nodes) >= 0)
			cls[sim_class_of(a.job[i].nodes)]++;
		if (i && a.job[i].submit < a.job[i - 1].submit)
			fail("arrivals in order");
	}
	check(same, "same seed, same jobs");
	check(cls[0] + cls[1] + cls[2] == 500 && cls[0] > 150 && cls[1] > 100 && cls[2] > 30,
	      "all three classes drawn: %zu %zu %zu", cls[0], cls[1], cls[2]);
	sim_jobs_free(&b);
	check(sim_jobs_synthetic(&b, 6528, 500, 8, 0.9, NULL) == 0 &&
		      b.job[0].nodes + b.job[1].nodes + b.job[2].nodes !=
			      a.job[0].nodes + a.job[1].nodes + a.job[2].nodes,
	      "other seed, other jobs");
	sim_jobs_free(&b);
	check(sim_jobs_synthetic(&b, 6528, 10, 1, 1.5, NULL) < 0, "load > 1 rejected");
	sim_jobs_free(&a);
	sim_jobs_free(&b);
}

static void test_swf(void)
{
	char path[512];
	sim_jobs_t jobs;
	rm_error_t err;

	snprintf(path, sizeof(path), "%s/swf/small.swf", harness_data_dir());
	rm_error_clear(&err);
	/* 12 jobs, job 7 cancelled (run time -1); 4 processors per node: job 6 has 12 requested
	 * processors (allocated -1) = 3 nodes, job 9 has 3 processors = 1 node, job 8 64 = 16 */
	check(sim_jobs_swf(&jobs, path, 4, 64, &err) == 0, "small.swf: %s", err.text);
	check(jobs.njobs == 11 && jobs.skipped == 1, "11 jobs, 1 skipped (%zu, %zu)", jobs.njobs, jobs.skipped);
	if (jobs.njobs == 11) {
		check(jobs.job[5].nodes == 3 && jobs.job[5].submit == 40, "job 6: 3 nodes at 40");
		check(jobs.job[6].nodes == 16 && jobs.job[6].runtime == 400, "job 8: 16 nodes, 400 s");
		check(jobs.job[7].nodes == 1, "job 9: 1 node");
	}
	sim_jobs_free(&jobs);
	/* with a machine of 8 nodes, the two jobs over 8 nodes (64 and 40 procs) are skipped */
	rm_error_clear(&err);
	check(sim_jobs_swf(&jobs, path, 4, 8, &err) == 0 && jobs.njobs == 9 && jobs.skipped == 3,
	      "too-large jobs skipped (%zu kept, %zu skipped) %s", jobs.njobs, jobs.skipped, err.text);
	sim_jobs_free(&jobs);
	snprintf(path, sizeof(path), "%s/bad/swf/bad-fields.swf", harness_data_dir());
	rm_error_clear(&err);
	check(sim_jobs_swf(&jobs, path, 1, 64, &err) < 0 && err.line == 6 && strstr(err.source, "bad-fields"),
	      "17 fields: line 6 (%d: %s)", err.line, err.text);
	snprintf(path, sizeof(path), "%s/bad/swf/bad-number.swf", harness_data_dir());
	rm_error_clear(&err);
	check(sim_jobs_swf(&jobs, path, 1, 64, &err) < 0 && err.line == 5 && strstr(err.text, "2x0"),
	      "bad number: line 5 (%d: %s)", err.line, err.text);
	rm_error_clear(&err);
	check(sim_jobs_swf(&jobs, "/nonexistent/x.swf", 1, 64, &err) < 0 && strstr(err.text, "cannot open"),
	      "missing trace");
}

int main(void)
{
	test_mean_hop();
	test_scenario();
	test_synthetic();
	test_swf();
	return harness_done();
}
