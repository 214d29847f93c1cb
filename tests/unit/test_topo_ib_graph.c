/*
 * tests/unit/test_topo_ib_graph.c: the switch graph. Hop counts from the leaf table filled at
 * finalize, from the same table filled lazily, from BFS rows on demand (the large-fabric paths,
 * forced with topo_fabric_set_hop_limits) and from the switch groups of a tree (make_tree) must agree on
 * real fabrics, also when two threads query; a back-to-back pair of HCAs is 1 hop
 * apart; the accessors for reports (neighbours, HCA ports per host) match the hand-written fabric;
 * finalize is idempotent and can be redone after more loads.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "net_ib_private.h"
#include "topo_view.h"

static struct topo_fabric *load_tree(const char *rel, size_t table_max, double eager, int tree)
{
	struct topo_fabric *f = topo_fabric_create();
	char path[512];
	rm_error_t err;

	rm_error_clear(&err);
	snprintf(path, sizeof(path), "%s/%s", harness_data_dir(), rel);
	topo_fabric_set_hop_limits(f, table_max, eager);
	topo_fabric_set_tree(f, tree);
	if (topo_fabric_load_file(f, path, &err) < 0 || topo_fabric_finalize(f, &err) < 0) {
		fail("%s: %s", rel, err.text);
		topo_fabric_destroy(f);
		return NULL;
	}
	return f;
}

static struct topo_fabric *load(const char *rel, size_t table_max, double eager)
{
	return load_tree(rel, table_max, eager, 0);
}

static long host(const struct topo_fabric *f, const char *name)
{
	size_t i;

	for (i = 0; i < topo_fabric_nhosts(f); i++)
		if (!strcmp(topo_fabric_host_name(f, i), name))
			return (long)i;
	return -1;
}

struct job {
	const struct topo_fabric *table, *lazy;
	size_t first, step, mismatches;
};

static void *compare(void *arg)
{
	struct job *j = arg;
	size_t a, b, n = topo_fabric_nhosts(j->table);

	for (a = j->first; a < n; a += j->step)
		for (b = 0; b < n; b++)
			j->mismatches += topo_fabric_hops(j->table, a, b) != topo_fabric_hops(j->lazy, a, b);
	return NULL;
}

/* Mode 1: lazily filled leaf table; mode 2: BFS row cache; mode 3: the tree's groups (tree says whether
 * the fabric is one). Compared with the eager table. */
static void table_vs_bfs(const char *rel, int mode, int tree)
{
	struct topo_fabric *t = load(rel, IB_LEAF_TABLE_MAX, IB_EAGER_WORK_MAX);
	struct topo_fabric *l = mode == 1   ? load(rel, IB_LEAF_TABLE_MAX, 0)
				: mode == 2 ? load(rel, 0, 0)
					    : load_tree(rel, IB_LEAF_TABLE_MAX, IB_EAGER_WORK_MAX, 1);
	struct job jobs[2];
	pthread_t th;

	if (!t || !l)
		goto out;
	check(t->leaf_hops && !t->row_ready && !t->tree, "%s: eager table", rel);
	if (mode == 3)
		check(l->tree == tree && (l->leaf_hops == NULL) == tree, "%s: %s", rel,
		      tree ? "a tree, no table" : "no tree");
	else
		check(mode == 1 ? l->leaf_hops && l->row_ready : !l->leaf_hops && l->row_cache, "%s: mode %d", rel,
		      mode);
	jobs[0] = (struct job){ t, l, 0, 2, 0 };
	jobs[1] = (struct job){ t, l, 1, 2, 0 };
	if (pthread_create(&th, NULL, compare, &jobs[1]) != 0) {
		fail("pthread_create");
		goto out;
	}
	compare(&jobs[0]);
	pthread_join(th, NULL);
	check(jobs[0].mismatches + jobs[1].mismatches == 0, "%s mode %d: hops agree (%zu differ)", rel, mode,
	      jobs[0].mismatches + jobs[1].mismatches);
	check(ib_switch_hops(t, 0, (long)t->nsw - 1) == ib_switch_hops(l, 0, (long)l->nsw - 1),
	      "%s mode %d: switch hops agree", rel, mode);
out:
	topo_fabric_destroy(t);
	topo_fabric_destroy(l);
}

/* topo_fabric_hop_histogram against every pair of host copies (host h counted 1 + h % 3 times) by
 * topo_fabric_hops; sampled (no tree, no leaf table): about 200,000 pairs at hop counts that occur. */
static void hist_vs_pairs(const char *rel, int tree, int sampled)
{
	struct topo_fabric *f = load_tree(rel, sampled ? 0 : IB_LEAF_TABLE_MAX, IB_EAGER_WORK_MAX, tree);
	uint64_t want[TOPO_HOPS_UNCONNECTED + 1] = { 0 }, total = 0;
	topo_hop_hist_t h;
	uint32_t *w;
	size_t a, b, n, d, bad = 0;

	if (!f)
		return;
	n = topo_fabric_nhosts(f);
	w = malloc((n + 1) * sizeof(*w));
	for (a = 0; a < n; a++)
		w[a] = 1 + a % 3;
	for (a = 0; a < n; a++) {
		want[0] += w[a] * (w[a] - 1) / 2;
		for (b = a + 1; b < n; b++) {
			int hops = topo_fabric_hops(f, a, b);

			want[hops < 0 ? TOPO_HOPS_UNCONNECTED : (size_t)hops] += (uint64_t)w[a] * w[b];
		}
	}
	check(f->tree == tree, "%s: tree %d", rel, tree);
	check(topo_fabric_hop_histogram(f, w, &h) == 0, "%s: histogram", rel);
	for (d = 0; d <= TOPO_HOPS_UNCONNECTED; d++) {
		total += h.pairs[d];
		bad += sampled ? h.pairs[d] && !want[d] : h.pairs[d] != want[d];
	}
	if (sampled)
		check(h.kind == TOPO_HOP_HIST_SAMPLED && !bad && total == h.sampled_pairs && total > 199000 &&
			      total <= 200000,
		      "%s: sampled %llu pairs at hop counts that occur (%zu not)", rel, (unsigned long long)total, bad);
	else
		check(h.kind == TOPO_HOP_HIST_EXACT && !bad, "%s tree %d: exact, %zu hop counts differ from every pair",
		      rel, tree, bad);
	free(w);
	topo_fabric_destroy(f);
}

static void back_to_back(void)
{
	struct topo_fabric *f = load("ib/back-to-back.topo", IB_LEAF_TABLE_MAX, IB_EAGER_WORK_MAX);
	long a, b;

	if (!f)
		return;
	a = host(f, "alpha");
	b = host(f, "beta");
	check(a >= 0 && b >= 0 && topo_fabric_hops(f, (size_t)a, (size_t)b) == 1, "back to back: 1 hop");
	check(topo_fabric_host_leaf(f, (size_t)a) == -1 && topo_fabric_nswitches(f) == 0, "back to back: no leaf");
	check(topo_fabric_host_nports(f, (size_t)a) == 1 && topo_fabric_host_port_switch(f, (size_t)a, 0) == -1,
	      "back to back: port peer is not a switch");
	topo_fabric_destroy(f);
}

/* small-2level.topo: spine-1 links leaf-1, leaf-2, leaf-3; dual has ports on leaf-1 and leaf-2. */
static void accessors(void)
{
	struct topo_fabric *f = load("ib/small-2level.topo", IB_LEAF_TABLE_MAX, IB_EAGER_WORK_MAX);
	const uint32_t *nb;
	size_t s, n, i;
	long d;
	char path[512];
	rm_error_t err;

	if (!f)
		return;
	for (s = 0; s < topo_fabric_nswitches(f); s++)
		if (!strcmp(topo_fabric_switch_name(f, (long)s), "spine-1"))
			break;
	n = topo_fabric_switch_neighbors(f, (long)s, &nb);
	check(n == 3, "spine-1 has 3 neighbours");
	for (i = 0; i < n; i++)
		check(!strncmp(topo_fabric_switch_name(f, nb[i]), "leaf-", 5) && (i == 0 || nb[i - 1] < nb[i]),
		      "neighbours are leaves, sorted");
	check(topo_fabric_switch_guid(f, (long)s) == 0x5001 && topo_fabric_switch_subnet(f, (long)s) == 0,
	      "spine-1 GUID and subnet");
	d = host(f, "dual");
	check(d >= 0 && topo_fabric_host_nports(f, (size_t)d) == 2, "dual: 2 HCA ports");
	check(!strcmp(topo_fabric_switch_name(f, topo_fabric_host_port_switch(f, (size_t)d, 0)), "leaf-1") &&
		      !strcmp(topo_fabric_switch_name(f, topo_fabric_host_port_switch(f, (size_t)d, 1)), "leaf-2"),
	      "dual hangs under leaf-1 and leaf-2");
	rm_error_clear(&err);
	check(topo_fabric_finalize(f, &err) == 0 && topo_fabric_nhosts(f) == 7, "finalize twice");
	snprintf(path, sizeof(path), "%s/ib/back-to-back.topo", harness_data_dir());
	check(topo_fabric_load_file(f, path, &err) == 0 && topo_fabric_finalize(f, &err) == 0, "load after finalize");
	check(topo_fabric_nhosts(f) == 9 && topo_fabric_nsubnets(f) == 2, "second subnet adds 2 hosts");
	check(topo_fabric_hops(f, (size_t)host(f, "h1"), (size_t)host(f, "alpha")) == -1, "no path across subnets");
	check(topo_fabric_hops(f, (size_t)host(f, "h1"), (size_t)host(f, "h2")) == 2, "hops still right");
	topo_fabric_destroy(f);
}

int main(void)
{
	int mode;

	for (mode = 1; mode <= 3; mode++) {
		table_vs_bfs("plafrim/ib/ib-subnet0.txt", mode, 0); /* leaves cabled to leaves */
		table_vs_bfs("ib/ndr-fattree-582ca.ibnetdiscover", mode, 1);
		table_vs_bfs("ib/small-3level.ports", mode, 1);
	}
	hist_vs_pairs("plafrim/ib/ib-subnet0.txt", 0, 0);
	hist_vs_pairs("plafrim/ib/ib-subnet0.txt", 0, 1);
	hist_vs_pairs("ib/ndr-fattree-582ca.ibnetdiscover", 1, 0);
	hist_vs_pairs("ib/ndr-fattree-582ca.ibnetdiscover", 0, 0);
	hist_vs_pairs("ib/ndr-fattree-582ca.ibnetdiscover", 0, 1);
	hist_vs_pairs("ib/small-3level.ports", 1, 0);
	hist_vs_pairs("ib/small-3level.ports", 0, 0);
	hist_vs_pairs("ib/small-2level.topo", 1, 0);
	hist_vs_pairs("ib/small-2level.topo", 0, 0);
	hist_vs_pairs("ib/back-to-back.topo", 0, 0); /* no switch */
	back_to_back();
	accessors();
	return harness_done();
}
