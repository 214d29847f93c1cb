/*
 * tests/unit/test_map_cost.c: tleaf targets, the cost and breakdown of mappings, permutation checks
 * and files. The identity costs are the reference table's, checked against hand derivations below.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapping.h"
#include "tests/harness.h"

static map_graph_t *cart(const char *spec)
{
	map_cart_t c;

	if (map_cart_parse(spec, &c, NULL) < 0)
		return NULL;
	return map_graph_cart(&c, NULL);
}

static double identity_cost(const map_graph_t *g, const topo_target_t *t)
{
	uint32_t *p = malloc((size_t)g->n * sizeof(*p)), i;
	double c;

	for (i = 0; i < g->n; i++)
		p[i] = i;
	c = map_cost(g, t, p);
	free(p);
	return c;
}

static void test_tleaf(void)
{
	topo_target_t *t = topo_target_from_tleaf("tleaf 3 8 100 2 10 4 1", NULL);
	rm_error_t err;
	char buf[128];

	check(t && t->nslots == 64 && t->nlevels == 4, "8 nodes x 2 sockets x 4 cores: 64 slots, 4 levels");
	/* slots 0 and 3: same socket (distance 1); 0 and 4: other socket (10); 0 and 8: other node (100) */
	check(t && topo_target_distance(t, 0, 3) == 1 && topo_target_distance(t, 0, 4) == 10 &&
		      topo_target_distance(t, 0, 8) == 100 && topo_target_distance(t, 63, 0) == 100 &&
		      topo_target_distance(t, 5, 5) == 0,
	      "tleaf distances");
	check(t && t->ngroups[0] == 1 && t->ngroups[1] == 8 && t->ngroups[2] == 16 && t->ngroups[3] == 64, "groups");
	check(t && topo_target_tleaf_string(t, buf, sizeof(buf)) == 0 && !strcmp(buf, "tleaf 3 8 100 2 10 4 1"),
	      "tleaf string round trip (%s)", buf);
	check(t && topo_target_tleaf_string(t, buf, 8) < 0, "short buffer refused");
	topo_target_destroy(t);
	rm_error_clear(&err);
	check(!topo_target_from_tleaf("tleaf 3 8 100 2 10 4", &err) && strstr(err.source, "cost of level 3"),
	      "missing cost names the field (%s)", err.source);
	rm_error_clear(&err);
	check(!topo_target_from_tleaf("tleaf 2 0 5 2 1", &err) && strstr(err.source, "arity of level 1"),
	      "zero arity names the field (%s)", err.source);
	rm_error_clear(&err);
	check(!topo_target_from_tleaf("tleaf 1 4 x", &err) && strstr(err.source, "cost of level 1"), "bad cost");
	check(!topo_target_from_tleaf("torus 4 4", NULL) && !topo_target_from_tleaf("tleaf", NULL) &&
		      !topo_target_from_tleaf("tleaf 1 4 1 9", NULL) &&
		      !topo_target_from_tleaf("tleaf 2 99999 1 99999 1", NULL),
	      "malformed tleaf strings rejected");
	topo_target_destroy(NULL);
}

/* cart2d 8x4 weights 10/1 on tleaf 4 2 14 2 10 2 2 4 1 (leaf groups of 4, 8, 16, 32 slots).
 * Row i (ranks 4i..4i+3) fills leaf group i: the 32 dimension-1 edges cost 1 each -> 32. The 32
 * dimension-0 edges (weight 10) join rows i and i+1: rows 0-1, 2-3, 4-5, 6-7 share a group of 8
 * (cost 2), rows 1-2 and 5-6 a group of 16 (cost 10), rows 3-4 and 7-0 only the root (cost 14):
 * 4 edges x 10 x (2 + 10 + 2 + 14 + 2 + 10 + 2 + 14) = 2240. Total 2272 (the figure). */
static void test_identity_costs(void)
{
	static const struct {
		const char *cart, *tleaf;
		double cost;
	} cases[] = {
		{ "8x4:1,1:10,1", "tleaf 4 2 14 2 10 2 2 4 1", 2272 },
		{ "4x4x2:1,1,1:10,1,1", "tleaf 4 2 14 2 10 2 2 4 1", 3920 },
		{ "16x8", "tleaf 4 2 14 8 10 2 2 4 1", 1504 },
		{ "16x16x4:1,1,1:4,2,1", "tleaf 4 8 14 8 10 2 2 8 1", 57344 },
		{ "64x64x16", "tleaf 4 64 14 64 10 2 2 8 1", 1646592 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		map_graph_t *g = cart(cases[i].cart);
		topo_target_t *t = topo_target_from_tleaf(cases[i].tleaf, NULL);
		double c = g && t ? identity_cost(g, t) : -1;

		check(c == cases[i].cost, "identity cost of %s on %s: %.0f, expected %.0f", cases[i].cart,
		      cases[i].tleaf, c, cases[i].cost);
		map_graph_destroy(g);
		topo_target_destroy(t);
	}
}

/* alltoall_16x2: an all-to-all (weight 1) in each column of a 16x2 grid (rank = 2 * row + col). Per
 * column, 16 ranks of one parity: a leaf group of 4 holds 2 of them (8 pairs, cost 1), a group of 8
 * holds 4 (4 pairs across its two leaves, x4 groups, cost 2), a group of 16 holds 8 (16 pairs across,
 * x2, cost 10), the root 64 pairs at cost 14: 8 + 32 + 320 + 896 = 1256 per column, 2512 in all. */
static void test_alltoall(void)
{
	uint32_t s[240], d[240], i, j, n = 0;
	map_graph_t *g;
	topo_target_t *t = topo_target_from_tleaf("tleaf 4 2 14 2 10 2 2 4 1", NULL);
	double bd[5];
	uint32_t p[32];

	for (i = 0; i < 32; i++)
		for (j = i + 2; j < 32; j += 2)
			s[n] = i, d[n++] = j;
	g = map_graph_from_edges(32, n, s, d, NULL, NULL);
	check(g && t && identity_cost(g, t) == 2512, "alltoall_16x2 identity cost 2512");
	for (i = 0; i < 32; i++)
		p[i] = i;
	map_breakdown(g, t, p, bd);
	check(bd[0] == 128 && bd[1] == 64 && bd[2] == 32 && bd[3] == 16 && bd[4] == 0,
	      "breakdown by level: 128 / 64 / 32 / 16 / 0 (%g %g %g %g %g)", bd[0], bd[1], bd[2], bd[3], bd[4]);
	map_graph_destroy(g);
	topo_target_destroy(t);
}

static void test_perms(void)
{
	uint32_t good[] = { 3, 0, 2, 1 }, dup[] = { 0, 1, 1, 2 }, out[] = { 0, 1, 2, 9 }, *r, n = 0;
	char tmpl[] = "/tmp/rankmap-perm-XXXXXX";
	rm_error_t err;
	FILE *f;
	int fd;

	check(map_check_perm(good, 4, 4) == 0, "bijection accepted");
	check(map_check_perm(good, 4, 8) == 0, "fewer ranks than slots accepted");
	check(map_check_perm(dup, 4, 4) < 0, "duplicate slot rejected");
	check(map_check_perm(out, 4, 8) < 0, "slot out of range rejected");
	check(map_check_perm(good, 4, 3) < 0, "more ranks than slots rejected");
	fd = mkstemp(tmpl);
	close(fd);
	check(map_perm_write(tmpl, good, 4, NULL) == 0, "perm written");
	r = map_perm_read(tmpl, &n, NULL);
	check(r && n == 4 && !memcmp(r, good, sizeof(good)), "perm read back");
	free(r);
	f = fopen(tmpl, "w");
	fprintf(f, "# comment\n3\n0\nx\n");
	fclose(f);
	rm_error_clear(&err);
	check(!map_perm_read(tmpl, &n, &err) && err.line == 4, "bad perm line named (line %d)", err.line);
	unlink(tmpl);
}

static int net_freed;

static void count_free(void *ctx)
{
	net_freed++;
	free(ctx);
}

static double const_dist(const topo_target_t *t, uint32_t a, uint32_t b)
{
	return a == b ? 0 : 50;
}

/* topo_target_destroy frees every field (checked under SANITIZE=1) and calls net_free once. */
static void test_destroy(void)
{
	topo_target_t *t = calloc(1, sizeof(*t));
	char buf[64];
	uint32_t s;
	int l;

	t->nslots = 4, t->nlevels = 3, t->host_level = 1, t->nhosts = 2;
	t->group = malloc(12 * sizeof(*t->group));
	t->ngroups = malloc(3 * sizeof(*t->ngroups));
	t->cost = malloc(3 * sizeof(*t->cost));
	t->kind = malloc(3 * sizeof(*t->kind));
	t->level_name = malloc(3 * sizeof(*t->level_name));
	t->host_name = malloc(2 * sizeof(*t->host_name));
	t->slot_host = malloc(4 * sizeof(*t->slot_host));
	t->slot = malloc(4 * sizeof(*t->slot));
	t->slot_pu_os = malloc(4 * sizeof(*t->slot_pu_os));
	for (l = 0; l < 3; l++)
		t->level_name[l] = strdup(l == 0 ? "root" : l == 1 ? "host" : "pu"), t->ngroups[l] = l ? 2 * l : 1;
	t->cost[0] = 0, t->cost[1] = 1, t->cost[2] = 0;
	t->host_name[0] = strdup("a"), t->host_name[1] = strdup("b");
	for (s = 0; s < 4; s++) {
		t->group[s * 3] = 0, t->group[s * 3 + 1] = s / 2, t->group[s * 3 + 2] = s;
		t->slot_host[s] = s / 2, t->slot[s].host = s / 2, t->slot[s].pu = s % 2, t->slot_pu_os[s] = s % 2;
	}
	t->net_dist = const_dist;
	t->net_ctx = malloc(16);
	t->net_free = count_free;
	check(topo_target_distance(t, 0, 1) == 1 && topo_target_distance(t, 0, 2) == 50, "net_dist across hosts");
	check(topo_target_tleaf_string(t, buf, sizeof(buf)) < 0, "no tleaf string with net_dist");
	topo_target_destroy(t);
	check(net_freed == 1, "net_free called once");
}

int main(void)
{
	test_destroy();
	test_tleaf();
	test_identity_costs();
	test_alltoall();
	test_perms();
	return harness_done();
}
