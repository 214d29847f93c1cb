/*
 * mapping/mlrefine.c: refinement of a whole mapping by the hierarchical objective at every level of a
 * V-cycle that respects the mapping.
 *
 * refine.c's swap search moves one rank at a time. Here the mapping itself is coarsened: within each
 * lowest group of the tree (the groups just above the slots), the ranks it holds are matched in pairs
 * by heavy edges, every pair becomes one coarse vertex, and the lowest groups' arity halves (a level
 * whose arity reaches 1 disappears: its groups become the coarse slots). On a uniform tree whose
 * slots are numbered depth-first, a pair on coarse slot c holds fine slots 2c and 2c+1, which lie in
 * the same lowest group; the tree's distance between two coarse slots is that of their fine slots,
 * and an edge inside a pair always has the lowest level's distance, so the coarse mapping's cost is
 * the fine one's less a constant and every coarse swap (two pairs of ranks exchanging places) is
 * costed exactly by the hierarchical objective. Coarsening repeats while the lowest arity is even
 * and more than MLR_MIN_VERTICES vertices remain; then, from the coarsest level up, refine.c's swap
 * search and iterated local search run on each level, and its result is projected onto the next finer
 * one. Since the coarse level starts from the fine mapping, the result is never costlier.
 *
 * This is the iterated multilevel refinement of Walshaw ("Multilevel refinement for combinatorial
 * optimisation problems", Annals of Operations Research 131, 2004): coarsening that never joins
 * vertices the current solution separates, so that a V-cycle starts from that solution and refines
 * it by larger moves at the coarse levels. For process mapping, refining the whole mapping with the
 * hierarchical (Steiner-tree) objective on every level of the hierarchy is what Mt-KaHyPar's process
 * mapping does (Heuer, Maas, Schlag, Schulz, Seemaier, Sanders, "Multilevel process mapping", 2023),
 * where SharedMap's multisection (Schulz and Woydt, 2024) sees each split's cut only. No code is taken
 * from VieM, KaHIP, Mt-KaHyPar or SharedMap.
 *
 * Targets it does not fit (fewer ranks than slots, a tree that is not uniform, network or per-slot
 * distances, an odd lowest arity) get refine.c's search on the finest level only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"

#define MLR_MIN_VERTICES 32
#define MLR_MAX_LEVELS 40
#define NONE UINT32_MAX

struct mlr_level {
	map_graph_t *g;    /* owned (level 0: the caller's, not owned) */
	topo_target_t *t;  /* owned (level 0: the caller's) */
	uint32_t *perm;    /* owned (level 0: the caller's) */
	uint32_t *members; /* 2 * coarse n: the fine vertices of each vertex of the next level */
};

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

/* The arities and costs of t (a uniform tree whose slots are numbered depth-first), top level first;
 * returns the number of levels L (t->nlevels - 1), or -1 when t does not fit. */
static int tree_shape(const topo_target_t *t, uint32_t *ar, double *co)
{
	char buf[1024];
	int l, L = t->nlevels - 1;
	uint32_t s;

	if (L < 1 || L > 63 || topo_target_tleaf_string(t, buf, sizeof(buf)) < 0)
		return -1;
	for (l = 0; l < L; l++) {
		ar[l] = t->ngroups[l + 1] / t->ngroups[l];
		co[l] = t->cost[l];
	}
	for (l = 1; l <= L; l++) { /* depth-first numbering of every level's groups */
		uint32_t below = t->nslots / t->ngroups[l];

		for (s = 0; s < t->nslots; s++)
			if (t->group[(size_t)s * t->nlevels + l] != s / below)
				return -1;
	}
	return L;
}

static topo_target_t *make_target(const uint32_t *ar, const double *co, int L)
{
	char buf[2048];
	size_t off;
	int l;

	off = (size_t)snprintf(buf, sizeof(buf), "tleaf %d", L);
	for (l = 0; l < L && off < sizeof(buf); l++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, " %u %.17g", ar[l], co[l]);
	if (off >= sizeof(buf))
		return NULL;
	return topo_target_from_tleaf(buf, NULL);
}

/* Matches the ranks of every lowest group of size a (even) in pairs, heavy edges first; writes the
 * coarse vertex of each rank (cmap), its two members, and returns the coarse graph (NULL: no memory).
 * Coarse vertex c is pair c % (a/2) of lowest group c / (a/2), so the coarse mapping is the identity. */
static map_graph_t *pair_up(const map_graph_t *g, const uint32_t *perm, uint32_t a, uint64_t *rng, uint32_t *cmap,
			    uint32_t *members)
{
	uint32_t n = g->n, *inv = malloc((size_t)n * sizeof(*inv)), *src = NULL, *dst = NULL;
	uint32_t grp, i, nc = n / 2;
	double *w = NULL;
	size_t ne = 0;
	uint64_t k;
	map_graph_t *cg = NULL;

	if (!inv)
		return NULL;
	for (i = 0; i < n; i++)
		inv[perm[i]] = i, cmap[i] = NONE;
	for (grp = 0; grp < n / a; grp++) {
		uint32_t *r = inv + (size_t)grp * a, next = grp * (a / 2), j;

		for (j = a; j > 1; j--) { /* random order within the group */
			uint32_t x = (uint32_t)(xs(rng) % j), tmp = r[j - 1];

			r[j - 1] = r[x], r[x] = tmp;
		}
		for (j = 0; j < a; j++) {
			uint32_t u = r[j], best = NONE;
			double bw = 0;

			if (cmap[u] != NONE)
				continue;
			for (k = g->xadj[u]; k < g->xadj[u + 1]; k++) {
				uint32_t v = g->adj[k];

				if (cmap[v] == NONE && v != u && perm[v] / a == grp && g->w[k] > bw)
					bw = g->w[k], best = v;
			}
			if (best == NONE)
				continue;
			cmap[u] = cmap[best] = next;
			members[2 * next] = u, members[2 * next + 1] = best;
			next++;
		}
		for (j = 0; j < a; j++) { /* the rest, in pairs as they come (no edge joins them) */
			uint32_t u = r[j], m;

			if (cmap[u] != NONE)
				continue;
			for (m = j + 1; m < a && cmap[r[m]] != NONE; m++)
				;
			cmap[u] = cmap[r[m]] = next;
			members[2 * next] = u, members[2 * next + 1] = r[m];
			next++;
		}
	}
	free(inv);
	src = malloc((size_t)g->xadj[n] * sizeof(*src));
	dst = malloc((size_t)g->xadj[n] * sizeof(*dst));
	w = malloc((size_t)g->xadj[n] * sizeof(*w));
	if (src && dst && w) {
		for (i = 0; i < n; i++)
			for (k = g->xadj[i]; k < g->xadj[i + 1]; k++)
				if (g->adj[k] > i && cmap[g->adj[k]] != cmap[i])
					src[ne] = cmap[i], dst[ne] = cmap[g->adj[k]], w[ne] = g->w[k], ne++;
		cg = map_graph_from_edges(nc, ne, src, dst, w, NULL);
	}
	free(src), free(dst), free(w);
	return cg;
}

long map_mlrefine_run(const map_ctx_t *ctx, uint32_t *perm, int kicks)
{
	struct mlr_level lv[MLR_MAX_LEVELS];
	uint32_t ar[64], n = ctx->g->n;
	double co[64];
	int L = ctx->g->n == ctx->t->nslots && map_now_ms() < ctx->deadline ? tree_shape(ctx->t, ar, co) : -1;
	int nl = 1, i;
	uint64_t rng = 0x2545f4914f6cdd1dull ^ ((uint64_t)ctx->opt.seed * 0x9e3779b97f4a7c15ull);
	long moves = 0, m;

	memset(lv, 0, sizeof(lv));
	lv[0].g = (map_graph_t *)ctx->g, lv[0].perm = perm;
	while (L >= 1 && nl < MLR_MAX_LEVELS && ar[L - 1] % 2 == 0 && n / 2 >= MLR_MIN_VERTICES) {
		struct mlr_level *f = &lv[nl - 1], *c = &lv[nl];
		uint32_t *cmap = malloc((size_t)n * sizeof(*cmap)), v;

		c->perm = malloc((size_t)(n / 2) * sizeof(*c->perm));
		f->members = malloc((size_t)n * sizeof(*f->members));
		if (!cmap || !c->perm || !f->members) {
			free(cmap), free(c->perm), c->perm = NULL; /* refine the levels built so far */
			break;
		}
		c->g = pair_up(f->g, f->perm, ar[L - 1], &rng, cmap, f->members);
		free(cmap);
		ar[L - 1] /= 2;
		if (ar[L - 1] == 1)
			L--;
		if (!c->g || L < 1 || !(c->t = make_target(ar, co, L))) {
			map_graph_destroy(c->g), c->g = NULL;
			free(c->perm), c->perm = NULL;
			free(f->members), f->members = NULL;
			break;
		}
		n /= 2;
		for (v = 0; v < n; v++)
			c->perm[v] = v;
		nl++;
	}
	for (i = nl - 1; i >= 0; i--) {
		map_ctx_t sub = *ctx;
		double now = map_now_ms();

		sub.g = lv[i].g;
		sub.t = i ? lv[i].t : ctx->t;
		if (i) /* the coarse levels: a third of what is left each, at most */
			sub.deadline = now + (ctx->deadline - now) / 3;
		m = map_refine_run(&sub, lv[i].perm, kicks);
		if (m < 0) {
			moves = -1;
			break;
		}
		moves += m;
		if (i) { /* project: pair v on coarse slot s holds fine slots 2s and 2s + 1 */
			uint32_t v, cn = lv[i].g->n;

			for (v = 0; v < cn; v++) {
				lv[i - 1].perm[lv[i - 1].members[2 * v]] = 2 * lv[i].perm[v];
				lv[i - 1].perm[lv[i - 1].members[2 * v + 1]] = 2 * lv[i].perm[v] + 1;
			}
		}
	}
	for (i = 0; i < nl; i++) {
		free(lv[i].members);
		if (i) {
			map_graph_destroy(lv[i].g);
			topo_target_destroy(lv[i].t);
			free(lv[i].perm);
		}
	}
	return moves;
}
