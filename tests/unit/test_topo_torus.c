/* tests/unit/test_topo_torus.c: the torus model (topo/net_torus.c): config files, host naming,
 * distances, and every bad-input file of tests/data/torus (expected line and text in its first
 * comment line "# LINE: fragment"). Expected values are worked out by hand in the comments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/harness.h"
#include "topo_private.h"

static struct topo_torus_model *load(const char *name, rm_error_t *err)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/torus/%s", harness_data_dir(), name);
	rm_error_clear(err);
	return topo_torus_model_load(path, err);
}

static void test_xe6(void)
{
	rm_error_t err;
	struct topo_torus_model *t = load("xe6.conf", &err);
	const topo_torus_spec_t *s;
	json_t *rep;

	check(t != NULL, "xe6.conf loads: %s", err.text);
	if (!t)
		return;
	s = topo_torus_model_spec(t);
	check(s->dims[0] == 17 && s->dims[1] == 8 && s->dims[2] == 24, "dims 17x8x24");
	check(s->nodes_per_router == 2 && s->wrap[0] && s->wrap[1] && s->wrap[2], "npr 2, wraps");
	check(fabs(s->link_cost[1] - 2) < 1e-12 && fabs(s->link_cost[2] - 0.67) < 1e-12, "link costs");
	/* 17*8*24 routers * 2 = 6528 nodes, all named by the pattern */
	check(topo_torus_model_nhosts(t) == 6528, "6528 hosts, got %zu", topo_torus_model_nhosts(t));
	check(topo_torus_model_host_node(t, "nid00100") == 100, "nid00100 is node 100");
	check(topo_torus_model_host_node(t, "nid06527") == 6527, "last node");
	check(topo_torus_model_host_node(t, "nid06528") == -1, "no node 6528");
	/* node 6526 = router (16,7,23): one wrap hop in each dimension from (0,0,0): 1 + 2 + 0.67 */
	check(fabs(topo_torus_model_distance(t, 0, 6526) - 3.67) < 1e-9, "wrap distance %g",
	      topo_torus_model_distance(t, 0, 6526));
	check(topo_torus_model_distance(t, 0, 1) == 0, "same router: 0");
	/* node 2 = router (0,0,1); node 48 = router (0,1,0): y hop costs 2 */
	check(fabs(topo_torus_model_distance(t, 0, 2) - 0.67) < 1e-12, "z hop");
	check(fabs(topo_torus_model_distance(t, 0, 48) - 2) < 1e-12, "y hop");
	rep = topo_torus_model_report(t);
	check(rep && json_integer_value(json_object_get(rep, "nodes")) == 6528, "report nodes");
	check(rep && !strcmp(json_string_value(json_object_get(rep, "naming")), "pattern"), "naming");
	json_decref(rep);
	topo_torus_model_destroy(t);
}

static void test_table_and_mesh(void)
{
	rm_error_t err;
	struct topo_torus_model *t = load("small-table.conf", &err);

	check(t != NULL, "small-table.conf loads: %s", err.text);
	if (t) {
		/* (1,1,1,n=1): ((1*2+1)*3+1)*2+1 = 21 */
		check(topo_torus_model_host_node(t, "c1-0c1s1n1") == 21, "table host node");
		check(topo_torus_model_nhosts(t) == 22, "22 table rows");
		check(!strcmp(topo_torus_model_host_name(t, 0), "c0-0c0s0n0"), "first host");
		topo_torus_model_destroy(t);
	}
	t = load("mesh.conf", &err);
	check(t != NULL, "mesh.conf loads: %s", err.text);
	if (t) {
		const topo_torus_spec_t *s = topo_torus_model_spec(t);
		/* x has no wrap: (0,0,0) to (4,0,0) is 4 hops of cost 2; router (4,0,0) = node 48 */
		check(!s->wrap[0] && s->wrap[1], "wrap no,yes,yes");
		check(fabs(topo_torus_model_distance(t, 0, 48) - 8) < 1e-12, "mesh x distance %g",
		      topo_torus_model_distance(t, 0, 48));
		/* z wraps: (0,0,0) to (0,0,3) is one hop of cost 1 */
		check(fabs(topo_torus_model_distance(t, 0, 3) - 1) < 1e-12, "z wrap");
		check(topo_torus_model_nhosts(t) == 0, "no names");
		topo_torus_model_destroy(t);
	}
}

/* Every bad-*.conf: load fails and the error has the line and text of its first comment. */
static void test_bad_files(void)
{
	static const char *bad[] = { "bad-zero-dim.conf",  "bad-negative-dim.conf",  "bad-outside.conf",
				     "bad-duplicate.conf", "bad-same-position.conf", "bad-missing-n.conf",
				     "bad-key.conf",       "bad-pattern.conf",       "bad-pattern-dup.conf",
				     "bad-cost.conf",      "bad-no-dims.conf",       "bad-table-first.conf",
				     "bad-huge-dim.conf",  "bad-overflow-dim.conf" };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char path[512], first[256] = "", *frag;
		rm_error_t err;
		struct topo_torus_model *t;
		FILE *f;
		int line;

		snprintf(path, sizeof(path), "%s/bad/torus-conf/%s", harness_data_dir(), bad[i]);
		f = fopen(path, "r");
		if (!f || !fgets(first, sizeof(first), f)) {
			fail("cannot read %s", path);
			if (f)
				fclose(f);
			continue;
		}
		fclose(f);
		first[strcspn(first, "\n")] = '\0';
		line = atoi(first + 2);
		frag = strchr(first, ':') + 2;
		rm_error_clear(&err);
		t = topo_torus_model_load(path, &err);
		check(t == NULL, "%s is rejected", bad[i]);
		topo_torus_model_destroy(t);
		check(err.line == line, "%s: error on line %d, got %d (%s)", bad[i], line, err.line, err.text);
		check(strstr(err.text, frag) != NULL, "%s: '%s' in '%s'", bad[i], frag, err.text);
		check(strstr(err.source, bad[i]) != NULL, "%s: error names the file", bad[i]);
	}
	{
		rm_error_t err;

		check(load("no-such-file.conf", &err) == NULL && strstr(err.text, "cannot open"), "missing file");
	}
}

static void test_spec(void)
{
	topo_torus_spec_t s = { { 4, 0, 2 }, { 1, 1, 1 }, { 1, 1, 1 }, 1 };
	rm_error_t err;
	struct topo_torus_model *t;

	rm_error_clear(&err);
	check(topo_torus_model_from_spec(&s, &err) == NULL, "zero dim rejected");
	check(strstr(err.text, "dimension y") != NULL, "names the dimension: %s", err.text);
	s.dims[1] = 3;
	s.link_cost[2] = -1;
	rm_error_clear(&err);
	check(topo_torus_model_from_spec(&s, &err) == NULL, "negative cost rejected");
	s.link_cost[2] = 0.5;
	s.wrap[2] = 0;
	t = topo_torus_model_from_spec(&s, NULL);
	check(t != NULL, "valid spec");
	if (t) {
		/* router (3,2,1) = node (3*3+2)*2+1 = 23: x wraps to 1 hop, y wraps to 1 hop (3-2),
		 * z mesh 1 hop of 0.5 */
		check(fabs(topo_torus_model_distance(t, 0, 23) - 2.5) < 1e-12, "spec distance %g",
		      topo_torus_model_distance(t, 0, 23));
		check(topo_torus_model_distance(t, 0, 24) < 0, "out of range node");
		check(topo_torus_model_nhosts(t) == 0 && topo_torus_model_host_node(t, "x") == -1, "no hosts");
		topo_torus_model_destroy(t);
	}
}

int main(void)
{
	test_xe6();
	test_table_and_mesh();
	test_bad_files();
	test_spec();
	return harness_done();
}
