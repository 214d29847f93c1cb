/*
 * tests/unit/test_ml_fm_cache.c: the gain caches of the multilevel construction's FM (mapping/ml_fm.c)
 * agree with gains computed from scratch.
 *
 * fm2 (two parts) keeps each vertex's gain and its number of edges into the other part, and the k-way FM
 * keeps each vertex's connection to each part; a move updates only its neighbours' entries. A wrong
 * update does not break the partition (every move is still legal), it only makes FM choose worse moves,
 * which no check on the result sees. This file includes ml_fm.c with ML_FM_CHECK defined, so that after
 * every move each updated neighbour's entry is compared with its value recomputed from its edges: on
 * random weighted graphs of 2 to 9 parts (unit and coarse vertex weights, tight and loose bounds) no
 * entry may differ, and FM must still never raise the cut nor leave a part outside its bounds.
 */
#define ML_FM_CHECK 1
#include "../../mapping/ml_fm.c"

#include "../harness.h"

static uint64_t rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (uint32_t)((rng >> 11) % n);
}

/* A random graph: a ring (connected) plus m random chords, weights 1..9, vertex weights 1 (unit) or
 * 1..4; no self-loops, no pair twice (as the construction's graphs), each edge stored both ways. */
static struct lgraph *random_graph(uint32_t n, uint32_t m, int unit)
{
	uint32_t *eu = malloc(((size_t)n + m) * sizeof(*eu)), *ev = malloc(((size_t)n + m) * sizeof(*ev)), ne = 0, i;
	double *ew = malloc(((size_t)n + m) * sizeof(*ew));
	struct lgraph *h = NULL;
	uint64_t *fill = NULL;

	if (!eu || !ev || !ew)
		goto out;
	for (i = 0; i < n; i++)
		eu[ne] = i, ev[ne] = (i + 1) % n, ew[ne++] = 1 + rnd(9);
	for (i = 0; i < m; i++) {
		uint32_t a = rnd(n), b = rnd(n);

		uint32_t j;

		for (j = n; j < ne && !((eu[j] == a && ev[j] == b) || (eu[j] == b && ev[j] == a)); j++)
			;
		if (a != b && (a + 1) % n != b && (b + 1) % n != a && j == ne) /* (no pair twice) */
			eu[ne] = a, ev[ne] = b, ew[ne++] = 1 + rnd(9);
	}
	if (!(h = ml_lg_alloc(n, 2 * (uint64_t)ne)) || !(fill = calloc((size_t)n + 1, sizeof(*fill))))
		goto out;
	for (i = 0; i < ne; i++)
		h->xadj[eu[i] + 1]++, h->xadj[ev[i] + 1]++;
	for (i = 0; i < n; i++)
		h->xadj[i + 1] += h->xadj[i];
	for (i = 0; i < n; i++)
		fill[i] = h->xadj[i], h->c[i] = unit ? 1 : 1 + rnd(4);
	for (i = 0; i < ne; i++) {
		h->adj[fill[eu[i]]] = ev[i], h->w[fill[eu[i]]++] = ew[i];
		h->adj[fill[ev[i]]] = eu[i], h->w[fill[ev[i]]++] = ew[i];
	}
out:
	free(eu), free(ev), free(ew), free(fill);
	return h;
}

static void one_case(uint32_t n, uint32_t m, uint32_t k, int unit, double slack)
{
	struct lgraph *h = random_graph(n, m, unit);
	uint32_t *part = malloc((size_t)n * sizeof(*part)), *tl = malloc(((size_t)k + 1) * sizeof(*tl)), i, p;
	double *wt = calloc(k, sizeof(*wt)), *cap = calloc(k, sizeof(*cap)), *lo = calloc(k, sizeof(*lo)),
	       *conn = calloc(k, sizeof(*conn)), total = 0, before, after, w[9] = { 0 };
	unsigned long checked = ml_fm_checked, stale = ml_fm_stale;
	int rc, in = 1;

	if (!h || !part || !tl || !wt || !cap || !lo || !conn) {
		check(0, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) /* a random balanced start: FM has much to do */
		part[i] = i % k;
	for (i = n; i > 1; i--) {
		uint32_t j = rnd(i), t = part[i - 1];

		part[i - 1] = part[j], part[j] = t;
	}
	for (i = 0; i < n; i++)
		wt[part[i]] += h->c[i], total += h->c[i];
	for (p = 0; p < k; p++) {
		double lim = total / k * slack + 4;

		cap[p] = wt[p] > lim ? wt[p] : lim; /* (the start within its bounds) */
		lo[p] = wt[p] < total / k / slack - 4 ? wt[p] : total / k / slack - 4;
	}
	before = ml_cut_of(h, part);
	rc = ml_kway_fm(h, k, cap, lo, part, wt, conn, tl);
	after = ml_cut_of(h, part);
	for (i = 0; i < n; i++)
		w[part[i]] += h->c[i];
	for (p = 0; p < k; p++)
		in &= w[p] == wt[p] && w[p] <= cap[p] && w[p] >= lo[p];
	check(rc == 0 && after <= before + 1e-9 && in,
	      "n %u, k %u, %s vertices, bounds x%.2f: FM returns a cut %g <= %g, every part within its bounds", n, k,
	      unit ? "unit" : "weighted", slack, after, before);
	check(ml_fm_checked > checked && ml_fm_stale == stale,
	      "n %u, k %u, %s vertices, bounds x%.2f: %lu cached entries after moves, %lu differ from scratch", n, k,
	      unit ? "unit" : "weighted", slack, ml_fm_checked - checked, ml_fm_stale - stale);
out:
	ml_lg_free(h);
	free(part), free(tl), free(wt), free(cap), free(lo), free(conn);
}

int main(void)
{
	static const uint32_t ks[] = { 2, 3, 4, 9 };
	static const double slacks[] = { 1.03, 1.5 };
	size_t a, b;
	int unit;

	for (a = 0; a < sizeof(ks) / sizeof(ks[0]); a++)
		for (b = 0; b < sizeof(slacks) / sizeof(slacks[0]); b++)
			for (unit = 0; unit < 2; unit++) {
				one_case(200, 600, ks[a], unit, slacks[b]);
				one_case(2000, 3000, ks[a], unit, slacks[b]);
			}
	printf("# %lu cached entries compared with their values from scratch\n", ml_fm_checked);
	return harness_done();
}
