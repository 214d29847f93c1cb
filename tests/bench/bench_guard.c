/*
 * tests/bench/bench_guard.c: what the engine guard (mapping/map_guard.c: map_compute in a forked child
 * with limits, as the MPI library's root rank runs it by default) costs over map_compute in the
 * caller's process, in one run, at 16, 64 and 1,024 ranks (2D periodic grids on 'tleaf' machines of
 * 8-core hosts), and with the calling process holding 1 GiB of touched memory (fork copies its page
 * tables: the cost grows with the caller's size, as in a real MPI rank).
 *
 * Each figure is the median wall time of ITERS calls (BENCH_GUARD_ITERS, default 200), unguarded and
 * guarded calls alternated so that both see the same load; extra_us is guarded - unguarded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mapping.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[n / 2];
}

/* Times one instance; prints a line. Returns 0, or -1 when a call failed. */
static int run(const char *cart, const char *tleaf, const char *label, int iters)
{
	map_cart_t c;
	map_graph_t *g = map_cart_parse(cart, &c, NULL) == 0 ? map_graph_cart(&c, NULL) : NULL;
	topo_target_t *t = topo_target_from_tleaf(tleaf, NULL);
	rm_child_limits_t lim = { .wall_ms = 121000, .cpu_s = 60, .mem_bytes = (size_t)8192 << 20 };
	double *off = malloc(sizeof(double) * (size_t)iters), *on = malloc(sizeof(double) * (size_t)iters);
	uint32_t *perm = g ? malloc(sizeof(uint32_t) * g->n) : NULL;
	map_result_t res;
	int rc = 0;

	if (!g || !t || !off || !on || !perm) {
		fprintf(stderr, "bench_guard: cannot build %s\n", cart);
		return -1;
	}
	for (int i = 0; i < iters && rc == 0; i++) {
		double t0 = now_us();
		rc |= map_compute_guarded("auto", g, t, NULL, NULL, perm, &res, NULL);
		double t1 = now_us();
		rc |= map_compute_guarded("auto", g, t, NULL, &lim, perm, &res, NULL);
		off[i] = t1 - t0, on[i] = now_us() - t1;
	}
	double a = median(off, iters), b = median(on, iters);
	printf("%-22s %6u %12.1f %12.1f %10.1f\n", label, g->n, a, b, b - a);
	free(off), free(on), free(perm);
	map_graph_destroy(g);
	topo_target_destroy(t);
	return rc;
}

int main(void)
{
	const char *e = getenv("BENCH_GUARD_ITERS");
	int iters = e && atoi(e) > 0 ? atoi(e) : 200, rc = 0;
	size_t big = (size_t)1 << 30;
	char *ballast;

	printf("Engine guard: map_compute (auto) unguarded vs in a forked child with limits; median of %d calls\n",
	       iters);
	printf("%-22s %6s %12s %12s %10s\n", "caller", "ranks", "unguarded_us", "guarded_us", "extra_us");
	rc |= run("4x4", "tleaf 2 2 10 8 1", "small process", iters);
	rc |= run("8x8", "tleaf 2 8 10 8 1", "small process", iters);
	rc |= run("32x32", "tleaf 2 128 10 8 1", "small process", iters / 4 > 0 ? iters / 4 : 1);
	ballast = malloc(big);
	if (ballast) {
		memset(ballast, 1, big); /* touched: page tables exist for all of it */
		rc |= run("4x4", "tleaf 2 2 10 8 1", "process with 1 GiB", iters / 4 > 0 ? iters / 4 : 1);
		rc |= run("8x8", "tleaf 2 8 10 8 1", "process with 1 GiB", iters / 4 > 0 ? iters / 4 : 1);
		free(ballast);
	}
	return rc ? 1 : 0;
}
