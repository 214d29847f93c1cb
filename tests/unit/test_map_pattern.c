/*
 * tests/unit/test_map_pattern.c: pattern files (Matrix Market, TreeMatch dense), Cartesian specs and
 * their graphs, edge lists, metrics. Expected values are derived by hand in the comments.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/harness.h"
#include "mapping.h"

static const char *path(const char *name)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/patterns/%s", harness_data_dir(), name);
	return buf;
}

/* Weight of edge u-v in g, 0 when absent; also checks the reverse entry has the same weight. */
static double edge_w(const map_graph_t *g, uint32_t u, uint32_t v)
{
	double a = 0, b = 0;
	uint64_t k;

	for (k = g->xadj[u]; k < g->xadj[u + 1]; k++)
		if (g->adj[k] == v)
			a = g->w[k];
	for (k = g->xadj[v]; k < g->xadj[v + 1]; k++)
		if (g->adj[k] == u)
			b = g->w[k];
	return a == b ? a : -1;
}

static uint64_t nedges(const map_graph_t *g)
{
	return g->xadj[g->n] / 2;
}

static void test_mtx(void)
{
	map_graph_t *g = map_graph_load(path("ring8.mtx"), MAP_METRIC_DEFAULT, NULL), *h;
	uint32_t i;

	check(g && g->n == 8 && nedges(g) == 8, "ring8: 8 ranks, 8 undirected edges");
	/* general: both directions summed, 2 + 3 = 5 */
	for (i = 0; g && i < 8; i++)
		check(edge_w(g, i, (i + 1) % 8) == 5, "ring8 edge %u-%u weighs 5", i, (i + 1) % 8);
	h = map_graph_load(path("ring8-sym.mtx"), MAP_METRIC_DEFAULT, NULL);
	check(h && h->n == 8 && nedges(h) == 8, "ring8-sym: 8 edges");
	for (i = 0; g && h && i < 8; i++)
		check(edge_w(h, i, (i + 1) % 8) == 5, "symmetric form gives the same weights");
	for (i = 0; g && i < g->n; i++) /* sorted, no self loops */
		for (uint64_t k = g->xadj[i]; k + 1 < g->xadj[i + 1]; k++)
			check(g->adj[k] < g->adj[k + 1] && g->adj[k] != i, "row %u sorted, no self loop", i);
	map_graph_destroy(g);
	map_graph_destroy(h);
	g = map_graph_load(path("pattern4.mtx"), MAP_METRIC_DEFAULT, NULL);
	check(g && g->n == 4 && nedges(g) == 3 && edge_w(g, 1, 2) == 1, "pattern field: weight 1");
	map_graph_destroy(g);
	g = map_graph_load(path("selfloop.mtx"), MAP_METRIC_DEFAULT, NULL);
	check(g && g->n == 3 && nedges(g) == 2 && edge_w(g, 0, 0) == 0, "self loops ignored");
	map_graph_destroy(g);
	g = map_graph_load(path("disconnected.mtx"), MAP_METRIC_DEFAULT, NULL);
	check(g && g->n == 8 && nedges(g) == 8 && edge_w(g, 3, 4) == 0, "two components load");
	map_graph_destroy(g);
}

static void test_metrics(void)
{
	map_graph_t *g;
	map_metric_t m;

	/* traced.mtx: 1-2: bytes 1000+1000, msgs 10+10; 3-4: 70000 bytes, 1 msg; 1-3: 10 bytes, 100 msgs */
	g = map_graph_load(path("traced.mtx"), MAP_METRIC_BYTES, NULL);
	check(g && edge_w(g, 0, 1) == 2000 && edge_w(g, 2, 3) == 70000 && edge_w(g, 0, 2) == 10, "bytes metric");
	check(g && g->bytes && g->msgs, "both metric columns kept");
	map_graph_destroy(g);
	g = map_graph_load(path("traced.mtx"), MAP_METRIC_MESSAGES, NULL);
	check(g && edge_w(g, 0, 1) == 20 && edge_w(g, 2, 3) == 1 && edge_w(g, 0, 2) == 100, "messages metric");
	map_graph_destroy(g);
	/* loggp: msgs * (1.84 + 2 * 1.49) + bytes * 0.00067 = 1 * 4.82 + 70000 * 0.00067 = 51.72 */
	g = map_graph_load(path("traced.mtx"), MAP_METRIC_LOGGP, NULL);
	check(g && fabs(edge_w(g, 2, 3) - 51.72) < 1e-9, "loggp metric 3-4 = 51.72 (%g)", g ? edge_w(g, 2, 3) : 0);
	map_graph_destroy(g);
	check(map_metric_parse("messages", &m) == 0 && m == MAP_METRIC_MESSAGES, "parse messages");
	check(map_metric_parse("loggp", &m) == 0 && m == MAP_METRIC_LOGGP, "parse loggp");
	check(map_metric_parse("volume", &m) < 0, "unknown metric rejected");
	g = map_graph_load(path("ring8.mtx"), MAP_METRIC_MESSAGES, NULL);
	check(!g, "messages metric on a one-column file is an error");
	map_graph_destroy(g);
}

/* The Matrix Market format as specified: keywords in any case, the array format (general: every value
 * column by column; symmetric: the lower triangle), and message counts in a second file named by a
 * "% rankmap-messages:" header (what RANKMAP_TRACE writes). */
static void test_mtx_spec(void)
{
	map_graph_t *g, *h;

	/* array4.mtx, by hand: 1-2 = 2 + 3, 1-4 = 1 + 1, 2-3 = 4 + 0, 3-4 = 5 + 6; no other pair */
	g = map_graph_load(path("array4.mtx"), MAP_METRIC_DEFAULT, NULL);
	check(g && g->n == 4 && nedges(g) == 4, "array general: 4 ranks, 4 edges");
	check(g && edge_w(g, 0, 1) == 5 && edge_w(g, 0, 3) == 2 && edge_w(g, 1, 2) == 4 && edge_w(g, 2, 3) == 11,
	      "array general: directions summed, column-major order");
	/* array4-sym.mtx: lower triangle 2-1 = 5, 4-1 = 2, 3-2 = 4, 4-3 = 11 (zeros and diagonal dropped) */
	h = map_graph_load(path("array4-sym.mtx"), MAP_METRIC_DEFAULT, NULL);
	check(h && h->n == 4 && nedges(h) == 4, "array symmetric: 4 edges");
	check(h && edge_w(h, 0, 1) == 5 && edge_w(h, 0, 3) == 2 && edge_w(h, 1, 2) == 4 && edge_w(h, 2, 3) == 11,
	      "array symmetric: lower triangle, column by column");
	map_graph_destroy(g);
	map_graph_destroy(h);
	g = map_graph_load(path("mixed-case.mtx"), MAP_METRIC_DEFAULT, NULL);
	check(g && g->n == 4 && nedges(g) == 1 && edge_w(g, 0, 1) == 7, "banner keywords in any case");
	map_graph_destroy(g);
	/* traced2.mtx + traced2.messages.mtx hold what traced.mtx holds in two columns */
	for (int m = MAP_METRIC_BYTES; m <= MAP_METRIC_LOGGP; m++) {
		g = map_graph_load(path("traced.mtx"), (map_metric_t)m, NULL);
		h = map_graph_load(path("traced2.mtx"), (map_metric_t)m, NULL);
		check(g && h && nedges(h) == 3 && edge_w(g, 0, 1) == edge_w(h, 0, 1) &&
			      edge_w(g, 2, 3) == edge_w(h, 2, 3) && edge_w(g, 0, 2) == edge_w(h, 0, 2),
		      "metric %d: bytes file + messages file read as the two-column trace", m);
		map_graph_destroy(g);
		map_graph_destroy(h);
	}
	g = map_graph_load(path("traced2.mtx"), MAP_METRIC_MESSAGES, NULL);
	check(g && edge_w(g, 0, 1) == 20 && edge_w(g, 2, 3) == 1 && edge_w(g, 0, 2) == 100,
	      "messages from the messages file");
	map_graph_destroy(g);
}

static void test_dense(void)
{
	map_graph_t *g = map_graph_load(path("dense4.txt"), MAP_METRIC_DEFAULT, NULL);

	/* symmetric: pair weight = m[i][j] */
	check(g && g->n == 4 && nedges(g) == 4, "dense4: 4 ranks, 4 edges");
	check(g && edge_w(g, 0, 1) == 10 && edge_w(g, 0, 2) == 1 && edge_w(g, 2, 3) == 10, "dense4 weights");
	map_graph_destroy(g);
	/* not symmetric: 0-1 = 4 + 1, 1-2 = 2 + 0 */
	g = map_graph_load(path("dense3-asym.txt"), MAP_METRIC_DEFAULT, NULL);
	check(g && g->n == 3 && edge_w(g, 0, 1) == 5 && edge_w(g, 1, 2) == 2 && edge_w(g, 0, 2) == 0,
	      "asymmetric dense: directions summed");
	map_graph_destroy(g);
}

/* tests/data/bad/patterns/NAME is refused with an error at LINE that says TEXT. */
static void expect_error(const char *name, int line, const char *text)
{
	char bad[512];
	rm_error_t err;
	map_graph_t *g;

	snprintf(bad, sizeof(bad), "%s/bad/patterns/%s", harness_data_dir(), name);
	rm_error_clear(&err);
	g = map_graph_load(bad, MAP_METRIC_DEFAULT, &err);
	check(!g, "%s rejected", name);
	check(strstr(err.source, name) != NULL, "%s: error names the file (%s)", name, err.source);
	check(err.line == line, "%s: error at line %d (got %d: %s)", name, line, err.line, err.text);
	check(strstr(err.text, text) != NULL, "%s: error says '%s' (%s)", name, text, err.text);
	map_graph_destroy(g);
}

static void test_errors(void)
{
	rm_error_t err;

	expect_error("bad-truncated.mtx", 6, "truncated");
	expect_error("bad-negative.mtx", 4, "negative");
	expect_error("bad-nan.mtx", 5, "non-finite");
	expect_error("bad-index.mtx", 3, "out of range");
	expect_error("bad-text.mtx", 4, "");
	expect_error("bad-banner.mtx", 1, "malformed Matrix Market banner");
	expect_error("bad-skew.mtx", 1, "skew-symmetric matrices are refused");
	expect_error("bad-hermitian.mtx", 1, "hermitian matrices are refused");
	expect_error("bad-complex.mtx", 1, "complex values are refused");
	expect_error("bad-array-pattern.mtx", 1, "coordinate format");
	expect_error("bad-array-two.mtx", 5, "one value per line");
	{
		char bad[512];
		map_graph_t *g;

		snprintf(bad, sizeof(bad), "%s/bad/patterns/bad-companion.mtx", harness_data_dir());
		g = map_graph_load(bad, MAP_METRIC_DEFAULT, NULL);
		check(g && g->n == 4 && nedges(g) == 2, "bad-companion.mtx: bytes alone load");
		map_graph_destroy(g);
		rm_error_clear(&err);
		g = map_graph_load(bad, MAP_METRIC_MESSAGES, &err);
		check(!g && strstr(err.source, "bad-companion.messages.mtx") &&
			      strstr(err.text, "not the same entries"),
		      "messages file with other entries refused, naming it (%s: %s)", err.source, err.text);
		map_graph_destroy(g);
	}
	expect_error("bad-dense.txt", 3, "values");
	expect_error("bad-dense-short.txt", 3, "truncated");
	rm_error_clear(&err);
	check(!map_graph_load(path("no-such-file.mtx"), MAP_METRIC_DEFAULT, &err) && rm_error_isset(&err),
	      "missing file is an error");
}

/* Declared sizes: bounded by MAP_MAX_RANKS, by the file's size, and by the caller's count. */
static void test_declared(void)
{
	rm_error_t err;
	map_graph_t *g;

	rm_error_clear(&err);
	g = map_graph_load(path("../bad/declared-mtx-ranks/pattern.mtx"), MAP_METRIC_DEFAULT, &err);
	check(!g && err.line == 2 && strstr(err.text, "declares 400000000 ranks"), "N over 16M refused (%s)", err.text);
	rm_error_clear(&err);
	g = map_graph_load(path("../bad/declared-mtx-entries/pattern.mtx"), MAP_METRIC_DEFAULT, &err);
	check(!g && err.line == 2 && strstr(err.text, "declares 400000000 entries"), "NNZ over the file refused (%s)",
	      err.text);
	/* ring8.mtx: 8 ranks, accepted with 8, refused with 7 before its graph is built */
	g = map_graph_load_max(path("ring8.mtx"), MAP_METRIC_DEFAULT, 8, NULL);
	check(g && g->n == 8, "8 ranks within a bound of 8");
	map_graph_destroy(g);
	rm_error_clear(&err);
	g = map_graph_load_max(path("ring8.mtx"), MAP_METRIC_DEFAULT, 7, &err);
	check(!g && strstr(err.text, "more than the 7 expected"), "8 ranks over a bound of 7 (%s)", err.text);
	rm_error_clear(&err);
	g = map_graph_load_max(path("dense4.txt"), MAP_METRIC_DEFAULT, 3, &err);
	check(!g && strstr(err.text, "more than 3 values"), "dense row of 4 over a bound of 3 (%s)", err.text);
	g = map_graph_load_max(path("dense4.txt"), MAP_METRIC_DEFAULT, 4, NULL);
	check(g && g->n == 4, "dense 4 within a bound of 4");
	map_graph_destroy(g);
}

static void test_cart(void)
{
	map_cart_t c;
	map_graph_t *g;
	rm_error_t err;

	check(map_cart_parse("8x4", &c, NULL) == 0 && c.ndims == 2 && c.dims[0] == 8 && c.dims[1] == 4 &&
		      c.periods[0] == 1 && c.weights[1] == 1,
	      "8x4: defaults periodic, weight 1");
	check(map_cart_parse("8x4:1,0:10,1", &c, NULL) == 0 && c.periods[1] == 0 && c.weights[0] == 10, "full spec");
	rm_error_clear(&err);
	check(map_cart_parse("8x0", &c, &err) < 0 && strstr(err.source, "dims"), "zero extent names dims");
	rm_error_clear(&err);
	check(map_cart_parse("8x4:1", &c, &err) < 0 && strstr(err.source, "periods"), "short periods list");
	rm_error_clear(&err);
	check(map_cart_parse("8x4:1,1:10,-1", &c, &err) < 0 && strstr(err.source, "weights"), "negative weight");
	check(map_cart_parse("8x4:1,2", &c, NULL) < 0, "period 2 rejected");
	check(map_cart_parse("x4", &c, NULL) < 0 && map_cart_parse("", &c, NULL) < 0, "empty dims rejected");
	check(map_cart_parse("8x4:1,1:1,1:1", &c, NULL) < 0, "extra field rejected");

	/* 8x4 periodic, weights 10/1: 64 edges; rank = i*4 + j; (0,0)-(1,0) is 0-4 weight 10, (0,0)-(0,1)
	 * is 0-1 weight 1, the wrap (0,3)-(0,0) is 3-0 weight 1, (7,0)-(0,0) is 28-0 weight 10 */
	map_cart_parse("8x4:1,1:10,1", &c, NULL);
	g = map_graph_cart(&c, NULL);
	check(g && g->n == 32 && nedges(g) == 64, "8x4 torus: 64 edges");
	check(g && edge_w(g, 0, 4) == 10 && edge_w(g, 0, 1) == 1 && edge_w(g, 3, 0) == 1 && edge_w(g, 28, 0) == 10,
	      "row-major order, weights per dimension");
	map_graph_destroy(g);
	/* 4x4x2 periodic: the extent-2 dimension gives one edge per pair weighing both exchanges (2w) */
	map_cart_parse("4x4x2:1,1,1:10,1,1", &c, NULL);
	g = map_graph_cart(&c, NULL);
	check(g && g->n == 32 && nedges(g) == 32 + 32 + 16, "4x4x2: 80 edges");
	check(g && edge_w(g, 0, 1) == 2 && edge_w(g, 0, 2) == 1 && edge_w(g, 0, 8) == 10, "extent-2 edge weighs 2");
	map_graph_destroy(g);
	/* non-periodic 3x1: a path 0-1-2; extent 1 periodic gives nothing */
	map_cart_parse("3x1:0,1", &c, NULL);
	g = map_graph_cart(&c, NULL);
	check(g && g->n == 3 && nedges(g) == 2 && edge_w(g, 0, 2) == 0, "mesh 3x1 is a path");
	map_graph_destroy(g);
}

static void test_edges(void)
{
	uint32_t s[] = { 0, 1, 2, 2, 3 }, d[] = { 1, 0, 2, 3, 9 };
	double w[] = { 1, 2, 7, 4, 1 }, bad[] = { 1, -1, 1, 1, 1 };
	map_graph_t *g;
	rm_error_t err;

	g = map_graph_from_edges(4, 4, s, d, w, NULL);
	check(g && nedges(g) == 2 && edge_w(g, 0, 1) == 3 && edge_w(g, 2, 3) == 4, "duplicates summed, loops dropped");
	map_graph_destroy(g);
	rm_error_clear(&err);
	check(!map_graph_from_edges(4, 5, s, d, w, &err) && rm_error_isset(&err), "vertex out of range");
	check(!map_graph_from_edges(4, 4, s, d, bad, NULL), "negative weight rejected");
	g = map_graph_from_edges(4, 0, s, d, w, NULL);
	check(g && g->n == 4 && nedges(g) == 0, "graph without edges");
	map_graph_destroy(g);
}

/* --dump FILE METRIC: prints the graph rankmap reads from FILE, "n N" then one line "u v weight" per
 * undirected edge (0-based, u < v), for tests/integration/mtx_readers.sh to compare with other readers. */
static int dump(const char *file, const char *metric_name)
{
	map_metric_t metric;
	rm_error_t err;
	map_graph_t *g;
	uint64_t k;
	uint32_t u;

	rm_error_clear(&err);
	if (map_metric_parse(metric_name, &metric) < 0 || !(g = map_graph_load(file, metric, &err))) {
		fprintf(stderr, "%s:%d: %s\n", err.source, err.line, err.text);
		return 1;
	}
	printf("n %u\n", g->n);
	for (u = 0; u < g->n; u++)
		for (k = g->xadj[u]; k < g->xadj[u + 1]; k++)
			if (g->adj[k] > u)
				printf("%u %u %.17g\n", u, g->adj[k], g->w[k]);
	map_graph_destroy(g);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--dump"))
		return dump(argv[2], argv[3]);
	test_mtx();
	test_metrics();
	test_mtx_spec();
	test_dense();
	test_errors();
	test_declared();
	test_cart();
	test_edges();
	return harness_done();
}
