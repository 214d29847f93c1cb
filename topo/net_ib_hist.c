/*
 * topo/net_ib_hist.c: the hop-count histogram between the fabric's hosts (topo_fabric_hop_histogram,
 * topo_view.h), in time that grows with hosts and leaves, never with pairs of hosts:
 *
 *   - "simple" hosts (one HCA port, cabled to a switch) are counted per leaf switch. In a tree
 *     (make_tree, net_ib_graph.c) the pairs under each group of each level follow from the groups'
 *     host counts: pairs first joined at level k are 2k + 2 links apart; O(hosts + leaves x levels).
 *     Otherwise one BFS per leaf with hosts gives every pair of leaves, up to HIST_EXACT_LEAVES leaves;
 *   - hosts with several HCA ports (rails, subnets) or a back-to-back cable are taken one by one against
 *     the leaves (in a tree: the groups of their switches at each level) and pairwise among themselves,
 *     up to HIST_EXACT_COMPLEX of them; beyond that, or beyond HIST_COMPLEX_WORK BFS steps outside a
 *     tree, each counts under the leaf of its first switch port and the result says "approximate";
 *   - beyond f->leaf_table_max leaves outside a tree, HIST_SOURCES random hosts each against
 *     HIST_PARTNERS random partners (one BFS row per source, kept by the row cache), and the result
 *     says "sampled" and how.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"
#include "topo_view.h"

#define HIST_EXACT_COMPLEX 4096
#define HIST_COMPLEX_WORK 4e8
#define HIST_SOURCES 250
#define HIST_PARTNERS 800

struct hist_ctx {
	const struct topo_fabric *f;
	const uint32_t *weight;
	topo_hop_hist_t *h;
	uint64_t *cnt;  /* nleaves: host copies counted under each leaf */
	uint32_t *cplx; /* hosts counted one by one */
	size_t ncplx;
	uint64_t in_cnt; /* host copies in cnt[] */
};

static uint64_t wt(const struct hist_ctx *x, size_t h)
{
	return x->weight ? x->weight[h] : 1;
}

static void add(topo_hop_hist_t *h, unsigned d, uint64_t pairs)
{
	h->pairs[d > TOPO_HOPS_MAX ? TOPO_HOPS_UNCONNECTED : d] += pairs;
}

static int is_simple(const struct topo_fabric *f, size_t h)
{
	return f->hosts[h].n == 1 && f->att[f->hosts[h].first].sw >= 0;
}

static uint64_t pairs_of(uint64_t n)
{
	return n * (n - (n > 0)) / 2;
}

/* Pairs among the hosts of cnt[] by the tree's groups: acc[k * nsw + group] holds the copies under each
 * group of level k (kept for the complex hosts). */
static int tree_leaf_pairs(struct hist_ctx *x, uint64_t same_host, uint64_t **accp)
{
	const struct topo_fabric *f = x->f;
	uint64_t *acc = calloc((size_t)f->nlevels * f->nsw, sizeof(*acc)), prev = 0, cur;
	size_t i;
	int k;

	if (!acc)
		return -1;
	for (k = 0; k < f->nlevels; k++) {
		uint64_t *a = acc + (size_t)k * f->nsw;

		cur = 0;
		for (i = 0; i < f->nleaves; i++)
			a[k ? f->group[(size_t)k * f->nsw + f->leaf_sw[i]] : f->leaf_sw[i]] += x->cnt[i];
		for (i = 0; i < f->nleaves; i++) { /* each group once: at its first leaf */
			uint32_t g = k ? f->group[(size_t)k * f->nsw + f->leaf_sw[i]] : f->leaf_sw[i];

			if (!(a[g] >> 63)) {
				cur += pairs_of(a[g]);
				a[g] |= (uint64_t)1 << 63; /* seen */
			}
		}
		for (i = 0; i < f->nleaves; i++) {
			uint32_t g = k ? f->group[(size_t)k * f->nsw + f->leaf_sw[i]] : f->leaf_sw[i];

			a[g] &= ~((uint64_t)1 << 63);
		}
		add(x->h, 2 * (unsigned)k + 2, k ? cur - prev : cur - same_host);
		prev = cur;
	}
	add(x->h, TOPO_HOPS_UNCONNECTED, pairs_of(x->in_cnt) - prev);
	*accp = acc;
	return 0;
}

/* Pairs among the hosts of cnt[] outside a tree: one BFS per leaf with hosts. */
static int bfs_leaf_pairs(struct hist_ctx *x, uint64_t same_host)
{
	const struct topo_fabric *f = x->f;
	uint32_t *queue = malloc((f->nsw + 1) * sizeof(*queue));
	uint8_t *dist = malloc(f->nsw + 1);
	size_t a, b;

	if (!queue || !dist)
		return free(queue), free(dist), -1;
	for (a = 0; a < f->nleaves; a++) {
		if (!x->cnt[a])
			continue;
		add(x->h, 2, pairs_of(x->cnt[a]));
		ib_bfs(f, queue, dist, f->leaf_sw[a]);
		for (b = a + 1; b < f->nleaves; b++)
			if (x->cnt[b])
				add(x->h,
				    dist[f->leaf_sw[b]] == IB_HOPS_INF ? TOPO_HOPS_UNCONNECTED
								       : dist[f->leaf_sw[b]] + 2u,
				    x->cnt[a] * x->cnt[b]);
	}
	x->h->pairs[2] -= same_host;
	free(queue);
	free(dist);
	return 0;
}

/* One complex host against the hosts of cnt[] in a tree: at each level, the copies under the distinct
 * groups of its switch ports. */
static void tree_complex_vs_leaves(struct hist_ctx *x, size_t c, const uint64_t *acc)
{
	const struct topo_fabric *f = x->f;
	const struct ib_host *hh = &f->hosts[c];
	uint64_t w = wt(x, c), prev = 0;
	int k;

	for (k = 0; k < f->nlevels; k++) {
		uint64_t cov = 0;
		uint32_t i, j;

		for (i = 0; i < hh->n; i++) {
			long s = f->att[hh->first + i].sw;
			uint32_t g;

			if (s < 0)
				continue;
			g = k ? f->group[(size_t)k * f->nsw + (size_t)s] : (uint32_t)s;
			for (j = 0; j < i; j++) { /* a group already counted */
				long t = f->att[hh->first + j].sw;

				if (t >= 0 && (k ? f->group[(size_t)k * f->nsw + (size_t)t] : (uint32_t)t) == g)
					break;
			}
			if (j == i)
				cov += acc[(size_t)k * f->nsw + g];
		}
		add(x->h, 2 * (unsigned)k + 2, w * (cov - prev));
		prev = cov;
	}
	add(x->h, TOPO_HOPS_UNCONNECTED, w * (x->in_cnt - prev));
}

/* One complex host against the hosts of cnt[] outside a tree: a BFS from each of its switch ports. */
static int bfs_complex_vs_leaves(struct hist_ctx *x, size_t c, uint32_t *queue, uint8_t *dist, uint8_t *best)
{
	const struct topo_fabric *f = x->f;
	const struct ib_host *hh = &f->hosts[c];
	uint64_t w = wt(x, c);
	size_t l;
	uint32_t i;

	memset(best, IB_HOPS_INF, f->nleaves);
	for (i = 0; i < hh->n; i++) {
		long s = f->att[hh->first + i].sw;

		if (s < 0)
			continue;
		ib_bfs(f, queue, dist, s);
		for (l = 0; l < f->nleaves; l++)
			if (dist[f->leaf_sw[l]] < best[l])
				best[l] = dist[f->leaf_sw[l]];
	}
	for (l = 0; l < f->nleaves; l++)
		if (x->cnt[l])
			add(x->h, best[l] == IB_HOPS_INF ? TOPO_HOPS_UNCONNECTED : best[l] + 2u, w * x->cnt[l]);
	return 0;
}

static int complex_pairs(struct hist_ctx *x, const uint64_t *acc)
{
	const struct topo_fabric *f = x->f;
	uint32_t *queue = NULL;
	uint8_t *dist = NULL, *best = NULL;
	size_t i, j;

	if (!acc) {
		queue = malloc((f->nsw + 1) * sizeof(*queue));
		dist = malloc(f->nsw + 1);
		best = malloc(f->nleaves + 1);
		if (!queue || !dist || !best)
			return free(queue), free(dist), free(best), -1;
	}
	for (i = 0; i < x->ncplx; i++) {
		size_t c = x->cplx[i];

		if (acc)
			tree_complex_vs_leaves(x, c, acc);
		else
			bfs_complex_vs_leaves(x, c, queue, dist, best);
		for (j = i + 1; j < x->ncplx; j++) {
			int d = topo_fabric_hops(f, c, x->cplx[j]);

			add(x->h, d < 0 ? TOPO_HOPS_UNCONNECTED : (unsigned)d, wt(x, c) * wt(x, x->cplx[j]));
		}
	}
	free(queue);
	free(dist);
	free(best);
	return 0;
}

/* The host whose copies hold position i: the first whose cumulative weight exceeds i. */
static size_t host_at(const uint64_t *cum, size_t n, uint64_t i)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cum[mid] > i)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Random host pairs: HIST_SOURCES sources, HIST_PARTNERS partners each (deterministic generator). */
static int sample(struct hist_ctx *x)
{
	const struct topo_fabric *f = x->f;
	uint64_t total = 0, r = 88172645463325252ULL, *cum;
	size_t h, s, p, n = 0;

	cum = malloc((f->nhosts + 1) * sizeof(*cum));
	if (!cum)
		return -1;
	for (h = 0; h < f->nhosts; h++)
		cum[h] = total += wt(x, h);
	for (s = 0; total > 1 && s < HIST_SOURCES; s++) {
		uint64_t ia, ib;
		size_t a, b;

		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		ia = r % total;
		a = host_at(cum, f->nhosts, ia);
		for (p = 0; p < HIST_PARTNERS; p++) {
			int d;

			r ^= r << 13, r ^= r >> 7, r ^= r << 17;
			ib = r % total;
			if (ib == ia)
				continue;
			b = host_at(cum, f->nhosts, ib);
			d = a == b ? 0 : topo_fabric_hops(f, a, b);
			add(x->h, d < 0 ? TOPO_HOPS_UNCONNECTED : (unsigned)d, 1);
			n++;
		}
	}
	free(cum);
	x->h->sampled_pairs = n;
	return 0;
}

int topo_fabric_hop_histogram(const topo_fabric_t *f, const uint32_t *weight, topo_hop_hist_t *h)
{
	struct hist_ctx x = { f, weight, h, NULL, NULL, 0, 0 };
	uint64_t same = 0, same_in = 0, *acc = NULL;
	size_t i, ncplx = 0;
	int rc = 0, approx;

	memset(h, 0, sizeof(*h));
	if (!f->finalized) {
		errno = EINVAL;
		return -1;
	}
	h->nleaves = f->nleaves;
	h->tree = f->tree;
	h->levels = f->nlevels;
	for (i = 0; i < f->nhosts; i++)
		ncplx += wt(&x, i) && !is_simple(f, i);
	if (!f->tree && f->nleaves > f->leaf_table_max) {
		h->kind = TOPO_HOP_HIST_SAMPLED;
		return sample(&x);
	}
	approx = ncplx > HIST_EXACT_COMPLEX ||
		 (!f->tree &&
		  (double)ncplx * (double)f->nleaves * (double)(f->nsw + f->adj_off[f->nsw]) > HIST_COMPLEX_WORK);
	x.cnt = calloc(f->nleaves + 1, sizeof(*x.cnt));
	x.cplx = malloc((approx ? 1 : ncplx + 1) * sizeof(*x.cplx));
	if (!x.cnt || !x.cplx) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < f->nhosts; i++) {
		uint64_t w = wt(&x, i);

		if (!w)
			continue;
		same += pairs_of(w);
		if (is_simple(f, i) || (approx && f->hosts[i].leaf >= 0)) {
			x.cnt[f->leaf_of_sw[f->hosts[i].leaf]] += w;
			x.in_cnt += w;
			same_in += pairs_of(w);
		} else if (!approx) {
			x.cplx[x.ncplx++] = (uint32_t)i;
		}
	}
	if (approx) { /* hosts without a switch port: unconnected to every other host */
		uint64_t before = 0, all = 0;

		for (i = 0; i < f->nhosts; i++)
			all += wt(&x, i);
		for (i = 0; i < f->nhosts; i++) {
			uint64_t w = wt(&x, i);

			if (w && !is_simple(f, i) && f->hosts[i].leaf < 0) {
				add(h, TOPO_HOPS_UNCONNECTED, w * (all - before - w));
				before += w;
			}
		}
	}
	h->pairs[0] = same;
	if (f->tree)
		rc = tree_leaf_pairs(&x, same_in, &acc);
	else
		rc = bfs_leaf_pairs(&x, same_in);
	if (rc == 0 && !approx)
		rc = complex_pairs(&x, f->tree ? acc : NULL);
	h->kind = approx && ncplx ? TOPO_HOP_HIST_APPROXIMATE : TOPO_HOP_HIST_EXACT;
out:
	free(acc);
	free(x.cnt);
	free(x.cplx);
	if (rc < 0)
		errno = ENOMEM;
	return rc;
}

void topo_hop_hist_method(const topo_hop_hist_t *h, char *buf, size_t len)
{
	if (h->kind == TOPO_HOP_HIST_SAMPLED)
		snprintf(buf, len,
			 "sampled: %zu random host pairs (%d random hosts x %d random partners; %zu leaf switches, "
			 "not a tree)",
			 h->sampled_pairs, HIST_SOURCES, HIST_PARTNERS, h->nleaves);
	else if (h->tree)
		snprintf(buf, len, "%s: the %zu leaf switches of a %d-level tree, hosts counted per switch group%s",
			 h->kind == TOPO_HOP_HIST_EXACT ? "exact" : "approximate", h->nleaves, h->levels,
			 h->kind == TOPO_HOP_HIST_EXACT ? ""
							: " (hosts with several HCAs under their lowest rail's leaf)");
	else
		snprintf(buf, len, "%s: one hop count per pair of the %zu leaf switches%s",
			 h->kind == TOPO_HOP_HIST_EXACT ? "exact" : "approximate", h->nleaves,
			 h->kind == TOPO_HOP_HIST_EXACT ? ""
							: " (hosts with several HCAs under their lowest rail's leaf)");
}
