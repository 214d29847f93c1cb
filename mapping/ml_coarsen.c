/*
 * mapping/ml_coarsen.c: the graphs of the multilevel construction (multilevel.c) and their coarsening:
 * the graph a set of ranks induces, heavy-edge matching, size-constrained label propagation, and the
 * contraction both end in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ml_private.h"

void ml_lg_free(struct lgraph *h)
{
	if (!h)
		return;
	free(h->xadj), free(h->adj), free(h->c), free(h->w);
	free(h);
}

struct lgraph *ml_lg_alloc(uint32_t n, uint64_t nadj)
{
	struct lgraph *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->n = n;
	h->xadj = calloc((size_t)n + 1, sizeof(*h->xadj));
	h->adj = malloc((nadj ? nadj : 1) * sizeof(*h->adj));
	h->w = malloc((nadj ? nadj : 1) * sizeof(*h->w));
	h->c = malloc(((size_t)n + 1) * sizeof(*h->c));
	if (!h->xadj || !h->adj || !h->w || !h->c) {
		ml_lg_free(h);
		return NULL;
	}
	return h;
}

/* The graph the ranks vs[0..n-1] induce (M->loc set for them). */
struct lgraph *ml_induced(struct ml *M, const uint32_t *vs, uint32_t n)
{
	const map_graph_t *g = M->g;
	uint64_t nadj = 0, k, pos = 0;
	struct lgraph *h;
	uint32_t i;

	for (i = 0; i < n; i++)
		for (k = g->xadj[vs[i]]; k < g->xadj[vs[i] + 1]; k++)
			nadj += M->loc[g->adj[k]] != NONE;
	if (!(h = ml_lg_alloc(n, nadj)))
		return NULL;
	for (i = 0; i < n; i++) {
		h->c[i] = 1;
		for (k = g->xadj[vs[i]]; k < g->xadj[vs[i] + 1]; k++) {
			uint32_t l = M->loc[g->adj[k]];

			if (l != NONE)
				h->adj[pos] = l, h->w[pos++] = g->w[k];
		}
		h->xadj[i + 1] = pos;
	}
	return h;
}

/* The graph that the vertices vs[0..n-1] of h induce (loc: scratch of h->n entries, all NONE, left so). */
struct lgraph *ml_lg_induced(const struct lgraph *h, const uint32_t *vs, uint32_t n, uint32_t *loc)
{
	uint64_t nadj = 0, k, pos = 0;
	struct lgraph *s;
	uint32_t i;

	for (i = 0; i < n; i++)
		loc[vs[i]] = i;
	for (i = 0; i < n; i++)
		for (k = h->xadj[vs[i]]; k < h->xadj[vs[i] + 1]; k++)
			nadj += loc[h->adj[k]] != NONE;
	if ((s = ml_lg_alloc(n, nadj)))
		for (i = 0; i < n; i++) {
			s->c[i] = h->c[vs[i]];
			for (k = h->xadj[vs[i]]; k < h->xadj[vs[i] + 1]; k++)
				if (loc[h->adj[k]] != NONE)
					s->adj[pos] = loc[h->adj[k]], s->w[pos++] = h->w[k];
			s->xadj[i + 1] = pos;
		}
	for (i = 0; i < n; i++)
		loc[vs[i]] = NONE;
	return s;
}

/* ord[0..n-1]: a seeded random order of 0..n-1. */
void ml_shuffle(struct ml *M, uint32_t *ord, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		ord[i] = i;
	for (i = n; i > 1; i--) {
		uint32_t j = ml_rnd(M) % i, x = ord[i - 1];

		ord[i - 1] = ord[j], ord[j] = x;
	}
}

/* The coarse graph of h under cmap (vertex v of h -> coarse vertex cmap[v], 0..nc-1): each coarse vertex
 * holds its members' ranks and the sum of their edges to each other coarse vertex, members and
 * neighbours in the order they come (so a matched pair u < v lists u's edges first). NULL when out of
 * memory. O(n + edges). */
static struct lgraph *contract(const struct lgraph *h, const uint32_t *cmap, uint32_t nc)
{
	uint32_t n = h->n, i, u, *start = calloc((size_t)nc + 2, sizeof(*start)),
		 *mem = malloc(((size_t)n + 1) * sizeof(*mem)), *slot = malloc(((size_t)nc + 1) * sizeof(*slot)),
		 *touched = malloc(((size_t)nc + 1) * sizeof(*touched));
	double *acc = malloc(((size_t)nc + 1) * sizeof(*acc));
	struct lgraph *hc = NULL;
	uint64_t e, pos = 0;

	if (!start || !mem || !slot || !touched || !acc || !(hc = ml_lg_alloc(nc, h->xadj[n])))
		goto out;
	for (u = 0; u < n; u++) /* members of each coarse vertex, in order (a counting sort) */
		start[cmap[u] + 2]++;
	for (i = 0; i < nc; i++)
		start[i + 2] += start[i + 1];
	for (u = 0; u < n; u++)
		mem[start[cmap[u] + 1]++] = u;
	for (i = 0; i < nc; i++)
		slot[i] = NONE;
	for (i = 0; i < nc; i++) {
		uint32_t nt = 0, t, j;

		hc->c[i] = 0;
		for (j = start[i]; j < start[i + 1]; j++) {
			uint32_t x = mem[j];

			hc->c[i] += h->c[x];
			for (e = h->xadj[x]; e < h->xadj[x + 1]; e++) {
				uint32_t cv = cmap[h->adj[e]];

				if (cv == i)
					continue;
				if (slot[cv] == NONE)
					slot[cv] = nt, touched[nt] = cv, acc[nt++] = 0;
				acc[slot[cv]] += h->w[e];
			}
		}
		for (t = 0; t < nt; t++) {
			hc->adj[pos] = touched[t], hc->w[pos++] = acc[t];
			slot[touched[t]] = NONE;
		}
		hc->xadj[i + 1] = pos;
	}
out:
	free(start), free(mem), free(slot), free(touched), free(acc);
	return hc;
}

/* One level of heavy-edge matching: cmap[v] = coarse vertex of v; returns the coarse graph, or NULL
 * (oom, or too little shrinking: *stop set). With cp (a V-cycle's partition), only vertices of one part
 * are matched. */
struct lgraph *ml_coarsen(struct ml *M, const struct lgraph *h, uint32_t maxc, const uint32_t *cp, uint32_t *cmap,
			  int *stop)
{
	uint32_t n = h->n, *order = malloc((size_t)n * sizeof(*order)), *match = malloc((size_t)n * sizeof(*match));
	uint32_t nc = 0, i, u;
	struct lgraph *hc = NULL;
	uint64_t k;

	*stop = 0;
	if (!order || !match)
		goto out;
	ml_shuffle(M, order, n);
	for (i = 0; i < n; i++)
		match[i] = NONE;
	for (i = 0; i < n; i++) {
		uint32_t best = NONE;
		double br = 0;

		u = order[i];
		if (match[u] != NONE)
			continue;
		for (k = h->xadj[u]; k < h->xadj[u + 1]; k++) {
			uint32_t v = h->adj[k];
			double r;

			if (match[v] != NONE || v == u || h->c[u] + h->c[v] > maxc || (cp && cp[u] != cp[v]))
				continue;
			r = h->w[k] / ((double)h->c[u] * h->c[v]);
			if (r > br)
				br = r, best = v;
		}
		match[u] = best == NONE ? u : best;
		if (best != NONE)
			match[best] = u;
	}
	for (i = 0; i < n; i++) /* (order: now the last unmatched vertex seen beside each vertex) */
		order[i] = NONE;
	for (u = 0; u < n; u++) { /* two hops: unmatched vertices beside the same heaviest neighbour pair up
				    (the leaves of a hub in a power-law graph have no unmatched neighbour) */
		uint32_t x = NONE, v;
		double bw = 0;

		if (match[u] != u)
			continue;
		for (k = h->xadj[u]; k < h->xadj[u + 1]; k++)
			if (h->w[k] > bw)
				bw = h->w[k], x = h->adj[k];
		if (x == NONE)
			continue;
		v = order[x];
		if (v != NONE && match[v] == v && h->c[u] + h->c[v] <= maxc && (!cp || cp[u] == cp[v])) {
			match[u] = v, match[v] = u;
			order[x] = NONE;
		} else {
			order[x] = u;
		}
	}
	for (u = 0; u < n; u++) /* coarse vertices numbered in the order of their first member */
		if (match[u] >= u)
			cmap[u] = cmap[match[u]] = nc++;
	if (nc > n - n / 10) { /* under 10 % fewer: coarsening has done what it can */
		*stop = 1;
		goto out;
	}
	hc = contract(h, cmap, nc);
out:
	if (!*stop && !hc)
		M->oom = 1;
	free(order), free(match);
	return hc;
}

/* Size-constrained label propagation (Meyerhenke, Sanders, Schulz, "Partitioning complex networks via
 * size-constrained clustering", SEA 2014): every vertex, in a seeded random order, joins the cluster of
 * its neighbours it is most connected to while that cluster stays within maxc (with cp: only clusters
 * of its own part), LP_ROUNDS rounds; the clusters are contracted. Same contract as coarsen. */
#define LP_ROUNDS 3
struct lgraph *ml_lp_coarsen(struct ml *M, const struct lgraph *h, uint32_t maxc, const uint32_t *cp, uint32_t *cmap,
			     int *stop)
{
	uint32_t n = h->n, nc = 0, i, u, r, *cl = malloc(((size_t)n + 1) * sizeof(*cl)),
		 *ord = malloc(((size_t)n + 1) * sizeof(*ord)), *cw = malloc(((size_t)n + 1) * sizeof(*cw)),
		 *tl = malloc(((size_t)n + 1) * sizeof(*tl));
	double *conn = calloc((size_t)n + 1, sizeof(*conn));
	struct lgraph *hc = NULL;
	uint64_t e;

	*stop = 0;
	if (!cl || !ord || !cw || !tl || !conn)
		goto out;
	for (u = 0; u < n; u++)
		cl[u] = u, cw[u] = h->c[u];
	ml_shuffle(M, ord, n);
	for (r = 0; r < LP_ROUNDS; r++) {
		uint32_t moved = 0;

		for (i = 0; i < n; i++) {
			uint32_t own, best, nt = 0, t;
			double bc;

			u = ord[i], own = cl[u], best = own;
			for (e = h->xadj[u]; e < h->xadj[u + 1]; e++) {
				uint32_t v = h->adj[e], c = cl[v];

				if (v == u || (cp && cp[v] != cp[u]))
					continue;
				if (conn[c] == 0)
					tl[nt++] = c;
				conn[c] += h->w[e];
			}
			bc = conn[own];
			for (t = 0; t < nt; t++) {
				uint32_t c = tl[t];

				if (c != own && cw[c] + h->c[u] <= maxc && conn[c] > bc)
					bc = conn[c], best = c;
			}
			for (t = 0; t < nt; t++)
				conn[tl[t]] = 0;
			conn[own] = 0;
			if (best != own) {
				cw[own] -= h->c[u], cw[best] += h->c[u];
				cl[u] = best;
				moved++;
			}
		}
		if (!moved)
			break;
	}
	for (u = 0; u < n; u++)
		tl[u] = NONE;
	for (u = 0; u < n; u++) {
		if (tl[cl[u]] == NONE)
			tl[cl[u]] = nc++;
		cmap[u] = tl[cl[u]];
	}
	if (nc > n - n / 10) {
		*stop = 1;
		goto out;
	}
	hc = contract(h, cmap, nc);
out:
	if (!*stop && !hc)
		M->oom = 1;
	free(cl), free(ord), free(cw), free(tl), free(conn);
	return hc;
}
