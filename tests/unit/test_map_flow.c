/*
 * tests/unit/test_map_flow.c: flow-based refinement in the multilevel construction (mapping/ml_flow.c;
 * issue 29).
 *
 *  - on generated graphs (circulant graphs with three offsets, irregular 2D meshes with random weights and
 *    vertex weights 1-3), 2 to 8 parts, after k-way FM: the flow refinement never makes the cut larger,
 *    the part weights it keeps are the true ones, every part within its bounds, and the cut falls on
 *    some of them (FM's local optimum is not the band's minimum cut);
 *  - a 32x32 grid bisected with a jagged boundary (each row's split column off the middle by up to 3,
 *    sizes exact), then k-way FM: the flows after FM never cut more than FM, and reach the straight cut
 *    (32 edges, the grid's minimum balanced bisection) on most seeds, more often than FM alone;
 *  - the construction with flows (map_multilevel_flow, flow 1) on an irregular mesh of 4,096 ranks: a
 *    bijection onto the slots, deterministic for a seed, and different from the same seed without flows
 *    on some seed (they run); without flows by default below 4,096 ranks (map_multilevel_vc equals
 *    map_multilevel_flow with flow 0 there, the in-job path unchanged).
 * Cuts are recomputed here from the edges.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping.h"
#include "mapping_private.h"
#include "ml_private.h"
#include "tests/harness.h"

static uint64_t rng = 0x6a09e667f3bcc909ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static double cut_of(const struct lgraph *h, const uint32_t *part)
{
	double s = 0;

	for (uint32_t u = 0; u < h->n; u++)
		for (uint64_t e = h->xadj[u]; e < h->xadj[u + 1]; e++)
			if (part[h->adj[e]] != part[u])
				s += h->w[e];
	return s / 2;
}

/* A side x side grid, 4-neighbours, plus (irregular) a random third of the diagonals; weights 1 or
 * (irregular) 1-9 with halves; vertex weights 1 or (irregular) 1-3. */
static struct lgraph *grid(uint32_t side, int irregular)
{
	uint32_t n = side * side, u;
	struct lgraph *h = ml_lg_alloc(n, 6 * (uint64_t)n);
	uint64_t e = 0;
	unsigned char *diag = calloc(n, 1);

	if (!h || !diag)
		abort();
	for (u = 0; u < n; u++)
		diag[u] = irregular && rnd() % 3 == 0;
	for (u = 0; u < n; u++) {
		uint32_t x = u % side, y = u / side, nb[6], nn = 0, j;

		if (x > 0)
			nb[nn++] = u - 1;
		if (x + 1 < side)
			nb[nn++] = u + 1;
		if (y > 0)
			nb[nn++] = u - side;
		if (y + 1 < side)
			nb[nn++] = u + side;
		if (x + 1 < side && y + 1 < side && diag[u])
			nb[nn++] = u + side + 1;
		if (x > 0 && y > 0 && diag[u - side - 1])
			nb[nn++] = u - side - 1;
		h->c[u] = irregular ? 1 + u % 3 : 1;
		for (j = 0; j < nn; j++) {
			uint32_t v = nb[j], a = u < v ? u : v, b = u < v ? v : u;

			h->adj[e] = v, h->w[e++] = irregular ? 1 + (a * 31 + b * 17) % 9 + ((a ^ b) & 1 ? 0.5 : 0) : 1;
		}
		h->xadj[u + 1] = e;
	}
	free(diag);
	return h;
}

/* A circulant graph: each vertex joined to those 1, d1 and d2 away, vertex weights 1-3. */
static struct lgraph *circulant(uint32_t n)
{
	uint32_t d[3] = { 1, 2 + rnd() % 20, 25 + rnd() % 60 }, u, j;
	struct lgraph *h = ml_lg_alloc(n, 6 * (uint64_t)n);
	uint64_t e = 0;

	if (!h)
		abort();
	for (u = 0; u < n; u++) {
		h->c[u] = 1 + u % 3;
		for (j = 0; j < 6; j++) {
			uint32_t v = j & 1 ? (u + d[j / 2]) % n : (u + n - d[j / 2]) % n, a = u < v ? u : v,
				 b = u < v ? v : u;

			h->adj[e] = v, h->w[e++] = 1 + (a * 31 + b * 17) % 9 + ((a ^ b) & 1 ? 0.5 : 0);
		}
		h->xadj[u + 1] = e;
	}
	return h;
}

static void check_never_worse(void)
{
	int trial, worse = 0, fell = 0, wrongwt = 0, outside = 0, failed = 0;
	struct ml M;

	memset(&M, 0, sizeof(M));
	M.deadline = 1e300;
	for (trial = 0; trial < 32; trial++) {
		struct lgraph *h = trial % 2 ? circulant(200 + rnd() % 300) : grid(16 + rnd() % 16, 1);
		uint32_t n = h->n, k = 2 + trial % 7, u, j;
		uint32_t *part = malloc(n * sizeof(*part)), *tgt = malloc(k * sizeof(*tgt)), *tl = malloc((n + k) * 4);
		double *wt = calloc(k, sizeof(*wt)), *cap = calloc(k, sizeof(*cap)), *lo = calloc(k, sizeof(*lo)),
		       *conn = calloc(n + k, sizeof(*conn)), *w2 = calloc(k, sizeof(*w2)), c0, c1, tot = 0;
		int r;

		if (!part || !tgt || !tl || !wt || !cap || !lo || !conn || !w2) {
			failed++;
			goto next;
		}
		for (u = 0; u < n; u++) /* stripes of the vertex order, then FM: a local optimum of FM */
			part[u] = (uint32_t)((uint64_t)u * k / n), tot += h->c[u];
		for (j = 0; j < k; j++)
			tgt[j] = (uint32_t)(tot / k) + (j < (uint32_t)tot % k);
		ml_bounds(h, k, tgt, 0.03, part, wt, cap, lo);
		ml_widen(k, wt, cap, lo);
		if (ml_kway_fm(h, k, cap, lo, part, wt, conn, tl) < 0) {
			failed++;
			goto next;
		}
		c0 = cut_of(h, part);
		if ((r = ml_flow_refine(&M, h, k, cap, lo, part, wt)) < 0) {
			failed++;
			goto next;
		}
		c1 = cut_of(h, part);
		worse += c1 > c0 + 1e-9 * c0 || (r == 0 && c1 != c0);
		fell += c1 < c0;
		for (u = 0; u < n; u++)
			w2[part[u]] += h->c[u];
		for (j = 0; j < k; j++) {
			wrongwt += w2[j] != wt[j];
			outside += w2[j] > cap[j] || w2[j] < lo[j];
		}
	next:
		ml_lg_free(h);
		free(part), free(tgt), free(tl), free(wt), free(cap), free(lo), free(conn), free(w2);
	}
	check(!failed, "flow refinement: runs on 32 graphs (%d failed)", failed);
	check(!worse, "flow refinement: the cut never grows (%d of 32 grew, or changed though none fell)", worse);
	check(fell > 0, "flow refinement: the cut falls below FM's local optimum on some graphs (%d of 32)", fell);
	check(!wrongwt && !outside, "flow refinement: part weights true (%d wrong) and within bounds (%d outside)",
	      wrongwt, outside);
}

static void check_jagged_grid(void)
{
	const uint32_t side = 32;
	int seed, notworse = 0, straight = 0, fmstraight = 0, failed = 0, prev = 0;
	struct ml M;

	memset(&M, 0, sizeof(M));
	M.deadline = 1e300;
	for (seed = 0; seed < 8; seed++) {
		struct lgraph *h = grid(side, 0);
		uint32_t n = h->n, tgt[2] = { n / 2, n / 2 }, *p1 = malloc(n * sizeof(*p1)),
			 *p2 = malloc(n * sizeof(*p2)), *tl = malloc((n + 2) * 4), y, x;
		double wt[2], cap[2], lo[2], *conn = calloc(n + 2, sizeof(*conn)), cfm, cfl;

		if (!p1 || !p2 || !tl || !conn) {
			failed++;
			goto next;
		}
		for (y = 0; y < side; y++) { /* row y splits at 16 + an offset in [-3, 3], the offsets summing to 0 */
			int off = (int)(rnd() % 7) - 3;

			if (y % 2)
				off = -prev;
			prev = off;
			for (x = 0; x < side; x++)
				p1[y * side + x] = (int)x >= 16 + off;
		}
		ml_bounds(h, 2, tgt, 0.05, p1, wt, cap, lo);
		ml_widen(2, wt, cap, lo);
		if (wt[0] != n / 2 || ml_kway_fm(h, 2, cap, lo, p1, wt, conn, tl) < 0) {
			failed++;
			goto next;
		}
		cfm = cut_of(h, p1);
		memcpy(p2, p1, n * sizeof(*p1));
		if (ml_flow_refine(&M, h, 2, cap, lo, p2, wt) < 0) {
			failed++;
			goto next;
		}
		cfl = cut_of(h, p2);
		notworse += cfl <= cfm;
		straight += cfl == side, fmstraight += cfm == side;
	next:
		ml_lg_free(h);
		free(p1), free(p2), free(tl), free(conn);
	}
	check(!failed, "jagged grid bisection: runs on 8 seeds (%d failed)", failed);
	check(notworse == 8, "jagged grid bisection: the cut after the flows no larger than FM's (%d of 8)", notworse);
	check(straight >= 6 && straight > fmstraight,
	      "jagged grid bisection: after the flows the straight cut of %u edges on most seeds, more than FM "
	      "alone (%d and %d of 8)",
	      side, straight, fmstraight);
}

/* An irregular 2D mesh as a communication graph: a grid with a random third of the diagonals, random
 * weights, ranks shuffled. */
static map_graph_t *mesh_graph(uint32_t side)
{
	uint32_t n = side * side, *p = malloc(n * sizeof(*p)), *s = malloc(3 * n * sizeof(*s)),
		 *d = malloc(3 * n * sizeof(*d)), i, x, y;
	double *w = malloc(3 * n * sizeof(*w));
	size_t m = 0;
	map_graph_t *g;

	if (!p || !s || !d || !w)
		abort();
	for (i = 0; i < n; i++)
		p[i] = i;
	for (i = n; i > 1; i--) {
		uint32_t j = rnd() % i, t = p[i - 1];

		p[i - 1] = p[j], p[j] = t;
	}
	for (y = 0; y < side; y++)
		for (x = 0; x < side; x++) {
			uint32_t u = p[y * side + x];

			if (x + 1 < side)
				s[m] = u, d[m] = p[y * side + x + 1], w[m++] = 10 + rnd() % 91;
			if (y + 1 < side)
				s[m] = u, d[m] = p[(y + 1) * side + x], w[m++] = 10 + rnd() % 91;
			if (x + 1 < side && y + 1 < side && rnd() % 3 == 0)
				s[m] = u, d[m] = p[(y + 1) * side + x + 1], w[m++] = 10 + rnd() % 91;
		}
	g = map_graph_from_edges(n, m, s, d, w, NULL);
	free(p), free(s), free(d), free(w);
	return g;
}

static void check_construction(void)
{
	map_graph_t *g = mesh_graph(64), *gs = mesh_graph(32);
	topo_target_t *t = topo_target_from_tleaf("tleaf 4 4 14 16 10 2 2 32 1", NULL);
	topo_target_t *ts = topo_target_from_tleaf("tleaf 3 4 10 8 2 32 1", NULL);
	uint32_t *pa = malloc(4096 * sizeof(*pa)), *pb = malloc(4096 * sizeof(*pb)), *pc = malloc(4096 * sizeof(*pc));
	int seed, ok = 1, det = 1, differ = 0, same_small = 1;

	if (!g || !gs || !t || !ts || !pa || !pb || !pc) {
		check(0, "construction with flows: setup");
		goto out;
	}
	for (seed = 0; seed < 3; seed++) {
		map_ctx_t ctx = { .g = g, .t = t, .deadline = 1e300 }, cs = { .g = gs, .t = ts, .deadline = 1e300 };

		ok &= map_multilevel_flow(&ctx, seed, 8, 1, 1, 1, pa) == 0 && map_check_perm(pa, g->n, t->nslots) == 0;
		ok &= map_multilevel_flow(&ctx, seed, 8, 1, 1, 1, pb) == 0;
		det &= !memcmp(pa, pb, 4096 * sizeof(*pa));
		ok &= map_multilevel_flow(&ctx, seed, 8, 1, 1, 0, pc) == 0 && map_check_perm(pc, g->n, t->nslots) == 0;
		differ += memcmp(pa, pc, 4096 * sizeof(*pa)) != 0;
		ok &= map_multilevel_vc(&cs, seed, 8, 1, 0, pa) == 0 &&
		      map_multilevel_flow(&cs, seed, 8, 1, 0, 0, pb) == 0;
		same_small &= !memcmp(pa, pb, 1024 * sizeof(*pa));
	}
	check(ok, "construction with flows: a bijection onto the slots (4,096 ranks, 3 seeds)");
	check(det, "construction with flows: deterministic for a seed");
	check(differ > 0, "construction with flows: differs from the same seed without them (%d of 3)", differ);
	check(same_small, "construction below 4,096 ranks: no flows by default (same as flow 0 on 3 seeds)");
out:
	if (g)
		map_graph_destroy(g);
	if (gs)
		map_graph_destroy(gs);
	topo_target_destroy(t), topo_target_destroy(ts);
	free(pa), free(pb), free(pc);
}

int main(void)
{
	check_never_worse();
	check_jagged_grid();
	check_construction();
	return harness_done();
}
