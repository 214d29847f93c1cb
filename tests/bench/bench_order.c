/* tests/bench/bench_order.c: the orderings on the 68-cabinet XE6 geometry of Albing et al. (17x8x24
 * routers, 2 nodes each, link costs x 1, y 2, z 0.67), simulated side by side on the same synthetic
 * job mixes (several seeds), with the targets:
 *   - bbb beats every other ordering on weighted hop (lower) and thickness (higher) for the 32-128
 *     and 256+ node classes, and is within 5 % of the best hop on 2-16 node jobs;
 *   - every ordering of a 100,000-node torus is built in under 100 ms.
 * Exit status 1 when a target is missed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "order.h"

#define NSEEDS 4
#define NJOBS 2000

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Mean over seeds of each method's per-class results. */
static int simulate_all(const topo_torus_spec_t *s, const char *const *m, int nm, sim_result_t *avg)
{
	int k, seed, c;

	memset(avg, 0, sizeof(*avg) * (size_t)nm);
	for (seed = 1; seed <= NSEEDS; seed++) {
		sim_jobs_t jobs;
		size_t n = (size_t)s->dims[0] * s->dims[1] * s->dims[2] * s->nodes_per_router;

		if (sim_jobs_synthetic(&jobs, n, NJOBS, (uint64_t)seed, 0.9, NULL) < 0)
			return -1;
		for (k = 0; k < nm; k++) {
			order_t *o = order_build(s, m[k], NULL, NULL);
			sim_result_t r;

			if (!o || sim_run(o, &jobs, &r, NULL) < 0)
				return -1;
			for (c = 0; c < SIM_NCLASSES; c++) {
				avg[k].cls[c].jobs += r.cls[c].jobs;
				avg[k].cls[c].hop += r.cls[c].hop / NSEEDS;
				avg[k].cls[c].thickness += r.cls[c].thickness / NSEEDS;
				avg[k].cls[c].interference += r.cls[c].interference / NSEEDS;
				avg[k].cls[c].pieces += r.cls[c].pieces / NSEEDS;
			}
			order_destroy(o);
		}
		sim_jobs_free(&jobs);
	}
	return 0;
}

/* Prints one metric row per class and checks the targets; returns the number missed. */
static int report(const char *const *m, int nm, const sim_result_t *r)
{
	int c, k, missed = 0, bbb = nm - 1;

	printf("%-8s %-13s", "class", "metric");
	for (k = 0; k < nm; k++)
		printf(" %9s", m[k]);
	printf("   target for bbb\n");
	for (c = 0; c < 3; c++) {
		double best_hop = 1e300, best_other_hop = 1e300, best_other_th = -1;
		int ok_hop, ok_th = 1;

		for (k = 0; k < nm; k++) {
			best_hop = r[k].cls[c].hop < best_hop ? r[k].cls[c].hop : best_hop;
			if (k != bbb) {
				best_other_hop = r[k].cls[c].hop < best_other_hop ? r[k].cls[c].hop : best_other_hop;
				best_other_th =
					r[k].cls[c].thickness > best_other_th ? r[k].cls[c].thickness : best_other_th;
			}
		}
		printf("%-8s %-13s", sim_class_name(c), "hop");
		for (k = 0; k < nm; k++)
			printf(" %9.3f", r[k].cls[c].hop);
		if (c == 0) {
			ok_hop = r[bbb].cls[c].hop <= 1.05 * best_hop;
			printf("   <= 1.05 x best = %.3f (ratio %.3f): %s\n", 1.05 * best_hop,
			       r[bbb].cls[c].hop / best_hop, ok_hop ? "MET" : "MISSED");
		} else {
			ok_hop = r[bbb].cls[c].hop < best_other_hop;
			printf("   < best other %.3f (ratio %.3f): %s\n", best_other_hop,
			       r[bbb].cls[c].hop / best_other_hop, ok_hop ? "MET" : "MISSED");
		}
		printf("%-8s %-13s", "", "thickness");
		for (k = 0; k < nm; k++)
			printf(" %9.3f", r[k].cls[c].thickness);
		if (c > 0) {
			ok_th = r[bbb].cls[c].thickness > best_other_th;
			printf("   > best other %.3f (ratio %.3f): %s", best_other_th,
			       r[bbb].cls[c].thickness / best_other_th, ok_th ? "MET" : "MISSED");
		}
		printf("\n%-8s %-13s", "", "interference");
		for (k = 0; k < nm; k++)
			printf(" %9.3f", r[k].cls[c].interference);
		printf("\n%-8s %-13s", "", "pieces");
		for (k = 0; k < nm; k++)
			printf(" %9.3f", r[k].cls[c].pieces);
		printf("\n");
		missed += !ok_hop + !ok_th;
	}
	return missed;
}

/* Build time of each ordering on a 100,000-node torus (best of 3). */
static int build_times(const char *const *m, int nm)
{
	topo_torus_spec_t s = { { 50, 40, 25 }, { 1, 1, 1 }, { 1, 2, 0.67 }, 2 };
	int k, rep, missed = 0;

	printf("\nbuild time, 50x40x25 routers x 2 = 100,000 nodes (best of 3), target < 100 ms\n");
	for (k = 0; k < nm; k++) {
		double best = 1e300;

		for (rep = 0; rep < 3; rep++) {
			double t0 = now_ms();
			order_t *o = order_build(&s, m[k], NULL, NULL);
			double t = now_ms() - t0;

			if (!o)
				return 1;
			order_destroy(o);
			best = t < best ? t : best;
		}
		printf("  %-8s %8.2f ms   target 100 ms   ratio %.3f   %s\n", m[k], best, best / 100,
		       best < 100 ? "MET" : "MISSED");
		missed += best >= 100;
	}
	return missed;
}

int main(void)
{
	static const char *const m[] = { "xyz", "mdf", "gray", "hilbert", "bbb" };
	topo_torus_spec_t xe6 = { { 17, 8, 24 }, { 1, 1, 1 }, { 1, 2, 0.67 }, 2 };
	sim_result_t r[5];
	int missed;

	printf("XE6 68 cabinets: 17x8x24 routers, 2 nodes per router, link costs x 1, y 2, z 0.67\n"
	       "synthetic mix: %d jobs x %d seeds, load 0.9; means per job (hop: lower is better,\n"
	       "thickness: higher is better)\n\n",
	       NJOBS, NSEEDS);
	if (simulate_all(&xe6, m, 5, r) < 0) {
		fprintf(stderr, "bench_order: simulation failed\n");
		return 1;
	}
	{
		int ext[3];

		order_bbb_default_block(&xe6, ext);
		printf("bbb default block %dx%dx%d routers (x, y, z), slab weave; gray 2x2x2 blocks\n\n", ext[0],
		       ext[1], ext[2]);
	}
	missed = report(m, 5, r);
	missed += build_times(m, 5);
	printf("\n%s: %d target(s) missed\n", missed ? "SOME TARGETS MISSED" : "ALL TARGETS MET", missed);
	return missed ? 1 : 0;
}
