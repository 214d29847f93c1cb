/*
 * tests/unit/map_quality_gen.h: the generated graphs and the independent cost of test_map_quality.c and
 * test_map_construct.c (static: each test has its own random sequence, from the same start).
 * Costs are recomputed from the edge list and the tleaf's arities (integer division of slot numbers),
 * not by map_cost.
 */
#ifndef RANKMAP_TESTS_MAP_QUALITY_GEN_H
#define RANKMAP_TESTS_MAP_QUALITY_GEN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mapping.h"
#include "topo.h"

struct edges {
	uint32_t *s, *d;
	double *w;
	size_t n, cap;
};

static uint64_t rng = 0x243f6a8885a308d3ull;

static inline uint32_t rnd(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static inline void add(struct edges *e, uint32_t a, uint32_t b, double w)
{
	if (a == b)
		return;
	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 1024;
		e->s = realloc(e->s, e->cap * sizeof(*e->s));
		e->d = realloc(e->d, e->cap * sizeof(*e->d));
		e->w = realloc(e->w, e->cap * sizeof(*e->w));
		if (!e->s || !e->d || !e->w)
			abort();
	}
	e->s[e->n] = a, e->d[e->n] = b, e->w[e->n++] = w;
}

static inline map_graph_t *finish(struct edges *e, uint32_t n)
{
	map_graph_t *g = map_graph_from_edges(n, e->n, e->s, e->d, e->w, NULL);

	free(e->s), free(e->d), free(e->w);
	memset(e, 0, sizeof(*e));
	return g;
}

static inline map_graph_t *gen_random(uint32_t n)
{
	struct edges e = { 0 };

	for (uint32_t i = 0; i < n; i++)
		for (int k = 0; k < 4; k++)
			add(&e, i, rnd() % n, 1 + rnd() % 100);
	return finish(&e, n);
}

/* An irregular 2D mesh: a grid with every cell joined to its right and lower neighbours, a third of
 * the diagonals, random weights, ranks shuffled. */
static inline map_graph_t *gen_mesh(uint32_t side)
{
	uint32_t n = side * side, *p = malloc(n * sizeof(*p));
	struct edges e = { 0 };

	for (uint32_t i = 0; i < n; i++)
		p[i] = i;
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = rnd() % i, x = p[i - 1];

		p[i - 1] = p[j], p[j] = x;
	}
	for (uint32_t x = 0; x < side; x++)
		for (uint32_t y = 0; y < side; y++) {
			uint32_t r = x * side + y;

			if (y + 1 < side)
				add(&e, p[r], p[r + 1], 10 + rnd() % 91);
			if (x + 1 < side)
				add(&e, p[r], p[r + side], 10 + rnd() % 91);
			if (x + 1 < side && y + 1 < side && rnd() % 3 == 0)
				add(&e, p[r], p[r + side + 1], 10 + rnd() % 40);
		}
	free(p);
	return finish(&e, n);
}

static inline map_graph_t *gen_powerlaw(uint32_t n)
{
	struct edges e = { 0 };
	uint32_t *ends = malloc(8 * (size_t)n * sizeof(*ends)), ne = 0;

	for (uint32_t v = 1; v < n; v++)
		for (int k = 0; k < 3; k++) {
			uint32_t t = ne ? ends[rnd() % ne] : 0;

			if (t == v)
				continue;
			add(&e, v, t, 1 + rnd() % 100);
			ends[ne++] = t, ends[ne++] = v;
		}
	free(ends);
	return finish(&e, n);
}

static inline map_graph_t *gen_stencil27(uint32_t nx, uint32_t ny, uint32_t nz, const double wd[3])
{
	struct edges e = { 0 };

	for (uint32_t x = 0; x < nx; x++)
		for (uint32_t y = 0; y < ny; y++)
			for (uint32_t z = 0; z < nz; z++)
				for (int d = 1; d < 27; d++) {
					int o[3] = { d / 9 - 1, d / 3 % 3 - 1, d % 3 - 1 };
					int X = (int)x + o[0], Y = (int)y + o[1], Z = (int)z + o[2];
					double w = 1;

					if ((o[0] == 0 && o[1] == 0 && o[2] == 0) || X < 0 || Y < 0 || Z < 0 ||
					    X >= (int)nx || Y >= (int)ny || Z >= (int)nz)
						continue;
					for (int k = 0; k < 3; k++)
						w *= o[k] ? wd[k] : 1;
					if ((uint32_t)((X * (int)ny + Y) * (int)nz + Z) > (x * ny + y) * nz + z)
						add(&e, (x * ny + y) * nz + z,
						    (uint32_t)((X * (int)ny + Y) * (int)nz + Z), w);
				}
	return finish(&e, nx * ny * nz);
}

/* The cost from the edges and the tleaf's arities alone. */
static inline double cost_indep(const map_graph_t *g, int L, const uint32_t *arity, const double *dist,
				const uint32_t *perm)
{
	uint64_t below[16], slots = 1;
	double total = 0;

	for (int l = 0; l < L; l++)
		slots *= arity[l];
	for (int l = 0; l < L; l++)
		slots /= arity[l], below[l] = slots;
	for (uint32_t u = 0; u < g->n; u++)
		for (uint64_t k = g->xadj[u]; k < g->xadj[u + 1]; k++) {
			uint32_t v = g->adj[k], a = perm[u], b = perm[v];
			int l = 0;

			if (v <= u || a == b)
				continue;
			while (l < L && a / below[l] == b / below[l])
				l++;
			total += g->w[k] * dist[l];
		}
	return total;
}

static inline double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct tcase {
	const char *name;
	map_graph_t *g;
	int L;
	uint32_t arity[4];
	double dist[4];
};

static inline topo_target_t *target_of(const struct tcase *c)
{
	char s[256];
	int used = snprintf(s, sizeof(s), "tleaf %d", c->L);

	for (int l = 0; l < c->L; l++)
		used += snprintf(s + used, sizeof(s) - (size_t)used, " %u %g", c->arity[l], c->dist[l]);
	return topo_target_from_tleaf(s, NULL);
}

/* The traffic between groups of per_group consecutive slots (the top level's cut). */
static inline double top_cut(const map_graph_t *g, uint32_t per_group, const uint32_t *perm)
{
	double s = 0;

	for (uint32_t u = 0; u < g->n; u++)
		for (uint64_t k = g->xadj[u]; k < g->xadj[u + 1]; k++)
			if (perm[u] / per_group != perm[g->adj[k]] / per_group)
				s += g->w[k];
	return s / 2;
}

#endif
