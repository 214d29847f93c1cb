/* tests/unit/test_order_props.c: properties of the torus orderings (order/), not exact sequences:
 * every ordering is a permutation with the nodes of a router together; mdf steps one hop; gray
 * blocks are contiguous boxes; inside a BBB block consecutive routers are one hop apart, seams
 * between blocks of one column are one hop, no block is 1 wide in a dimension of 2 or more, runs
 * stay short, the weave fills slabs two routers thick along the chain axis one after the other
 * (each aligned slab-sized window is a box) starting with a step along the chain axis, and in
 * power-of-two blocks every aligned window of 2^k routers is a box; the Hilbert curve is mostly one
 * hop; bad input is rejected with a clear error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "tests/harness.h"

static topo_torus_spec_t geom(int x, int y, int z, int npr, double cx, double cy, double cz)
{
	topo_torus_spec_t s = { { x, y, z }, { 1, 1, 1 }, { cx, cy, cz }, npr };
	return s;
}

/* Plain (no wrap) and torus hop counts between the routers of two nodes. */
static int hops(const topo_torus_spec_t *s, uint32_t a, uint32_t b, int wrap)
{
	int ca[3], cb[3], d, h = 0;

	order_node_coords(s, a, ca);
	order_node_coords(s, b, cb);
	for (d = 0; d < 3; d++) {
		int k = abs(ca[d] - cb[d]);

		if (wrap && s->wrap[d] && s->dims[d] - k < k)
			k = s->dims[d] - k;
		h += k;
	}
	return h;
}

static void check_permutation(const order_t *o, const char *what)
{
	unsigned char *seen = calloc(o->nnodes, 1);
	uint32_t npr = (uint32_t)o->spec.nodes_per_router;
	size_t i, bad = 0, split = 0;

	for (i = 0; i < o->nnodes; i++) {
		if (o->node[i] >= o->nnodes || seen[o->node[i]]++)
			bad++;
		if (i % npr && o->node[i] / npr != o->node[i - 1] / npr)
			split++;
	}
	check(bad == 0, "%s: permutation of %zu nodes (%zu bad)", what, o->nnodes, bad);
	check(split == 0, "%s: nodes of a router together (%zu splits)", what, split);
	free(seen);
}

/* Every block is contiguous in the order and is a box; returns the number of bad blocks. */
static size_t check_blocks_are_boxes(const order_t *o, const char *what, int min_width_ok)
{
	uint32_t npr = (uint32_t)o->spec.nodes_per_router;
	size_t i = 0, bad = 0, narrow = 0, nb = 0;

	while (i < o->nnodes) {
		size_t j = i, k;
		int lo[3] = { 1 << 30, 1 << 30, 1 << 30 }, hi[3] = { -1, -1, -1 }, d;
		long vol = 1;

		while (j < o->nnodes && o->block[j] == o->block[i])
			j++;
		for (k = i; k < j; k++) {
			int c[3];

			order_node_coords(&o->spec, o->node[k], c);
			for (d = 0; d < 3; d++) {
				lo[d] = c[d] < lo[d] ? c[d] : lo[d];
				hi[d] = c[d] > hi[d] ? c[d] : hi[d];
			}
		}
		for (d = 0; d < 3; d++) {
			vol *= hi[d] - lo[d] + 1;
			if (o->spec.dims[d] >= 2 && hi[d] == lo[d])
				narrow++;
		}
		if ((size_t)vol * npr != j - i)
			bad++;
		nb++;
		i = j;
	}
	check(bad == 0, "%s: every block is a contiguous box (%zu bad)", what, bad);
	check(nb == o->nblocks, "%s: %zu contiguous blocks, %u block ids", what, nb, o->nblocks);
	if (min_width_ok)
		check(narrow == 0, "%s: no block 1 wide in a dimension of 2 or more (%zu)", what, narrow);
	return bad;
}

/* BBB: one hop inside blocks; seams inside a column one hop; longest straight run. */
static void check_bbb(const order_t *o, const char *what, int max_run)
{
	uint32_t npr = (uint32_t)o->spec.nodes_per_router;
	size_t p, R = o->nnodes / npr, far_in = 0, far_seam = 0, seams = 0;
	int run = 1, worst = 1, prev_dir = -1;

	for (p = 1; p < R; p++) {
		uint32_t a = o->node[(p - 1) * npr], b = o->node[p * npr];
		uint32_t ba = o->block[(p - 1) * npr], bb = o->block[p * npr];
		int ca[3], cb[3], d, dir = -1;

		if (ba == bb) {
			if (hops(&o->spec, a, b, 0) != 1)
				far_in++;
			order_node_coords(&o->spec, a, ca);
			order_node_coords(&o->spec, b, cb);
			for (d = 0; d < 3; d++)
				if (ca[d] != cb[d])
					dir = 2 * d + (cb[d] > ca[d]);
			run = (dir == prev_dir) ? run + 1 : 1;
			worst = run > worst ? run : worst;
			prev_dir = dir;
		} else {
			prev_dir = -1;
			run = 1;
			if (o->block_group[2 * ba] == o->block_group[2 * bb]) {
				seams++;
				if (hops(&o->spec, a, b, 1) != 1)
					far_seam++;
			}
		}
	}
	check(far_in == 0, "%s: consecutive routers inside a block one hop apart (%zu not)", what, far_in);
	check(seams > 0 || o->nblocks <= 1 || o->spec.dims[o->axes[0]] <= o->block_ext[o->axes[0]] + 1,
	      "%s: has seams inside columns", what);
	check(far_seam == 0, "%s: seams inside a column one hop (%zu of %zu not)", what, far_seam, seams);
	if (max_run)
		check(worst <= max_run, "%s: longest straight run %d (<= %d)", what, worst, max_run);
}

/* Bounding box of positions [i, j) (router positions); returns its volume in routers. */
static long window_box(const order_t *o, size_t i, size_t j, int ext[3])
{
	uint32_t npr = (uint32_t)o->spec.nodes_per_router;
	int lo[3] = { 1 << 30, 1 << 30, 1 << 30 }, hi[3] = { -1, -1, -1 }, d;
	long vol = 1;
	size_t p;

	for (p = i; p < j; p++) {
		int c[3];

		order_node_coords(&o->spec, o->node[p * npr], c);
		for (d = 0; d < 3; d++) {
			lo[d] = c[d] < lo[d] ? c[d] : lo[d];
			hi[d] = c[d] > hi[d] ? c[d] : hi[d];
		}
	}
	for (d = 0; d < 3; d++) {
		ext[d] = hi[d] - lo[d] + 1;
		vol *= ext[d];
	}
	return vol;
}

/* BBB slab weave: inside every block, each aligned window of one slab (the cross-section times two
 * along the chain axis) is a box two thick along the chain axis. first != 0: each block's first step
 * is along the chain axis (parity can forbid it, e.g. a 4x1x2 block must end next to its start).
 * pow2 != 0: also every aligned window of 2, 4, 8, ... routers is a box. */
static void check_bbb_slabs(const order_t *o, const char *what, int first, int pow2)
{
	uint32_t npr = (uint32_t)o->spec.nodes_per_router;
	size_t R = o->nnodes / npr, i = 0, bad_slab = 0, slabs = 0, bad_first = 0, bad_pow = 0, wins = 0;
	int a0 = o->axes[0];

	while (i < R) {
		size_t j = i, w, g;
		int ext[3], wext[3], c0[3], c1[3];
		long cross;

		while (j < R && o->block[j * npr] == o->block[i * npr])
			j++;
		window_box(o, i, j, ext);
		cross = (long)(j - i) / ext[a0];
		if (ext[a0] >= 2) {
			order_node_coords(&o->spec, o->node[i * npr], c0);
			order_node_coords(&o->spec, o->node[(i + 1) * npr], c1);
			bad_first += c0[a0] == c1[a0];
			for (w = i; w + 2 * (size_t)cross <= j; w += 2 * (size_t)cross) {
				slabs++;
				if (window_box(o, w, w + 2 * (size_t)cross, wext) != 2 * cross || wext[a0] != 2)
					bad_slab++;
			}
		}
		for (g = 2; pow2 && g <= j - i; g *= 2)
			for (w = i; w + g <= j; w += g) {
				wins++;
				bad_pow += window_box(o, w, w + g, wext) != (long)g;
			}
		i = j;
	}
	check(slabs > 0 && bad_slab == 0, "%s: every slab window is a 2-thick box (%zu of %zu not)", what, bad_slab,
	      slabs);
	check(!first || bad_first == 0, "%s: blocks start with a step along the chain axis (%zu do not)", what,
	      bad_first);
	if (pow2)
		check(wins > 0 && bad_pow == 0, "%s: aligned 2^k windows are boxes (%zu of %zu not)", what, bad_pow,
		      wins);
}

static void check_unit_steps(const order_t *o, const char *what, double min_share, int wrap)
{
	uint32_t npr = (uint32_t)o->spec.nodes_per_router;
	size_t p, R = o->nnodes / npr, one = 0;

	for (p = 1; p < R; p++)
		one += hops(&o->spec, o->node[(p - 1) * npr], o->node[p * npr], wrap) == 1;
	check(R < 2 || (double)one / (double)(R - 1) >= min_share, "%s: %.3f of steps one hop (>= %.2f)", what,
	      R < 2 ? 1.0 : (double)one / (double)(R - 1), min_share);
}

static void test_all_geometries(void)
{
	static const int g[][4] = { { 17, 8, 24, 2 }, { 5, 3, 7, 1 }, { 1, 1, 9, 1 },  { 4, 4, 4, 1 },  { 9, 1, 2, 3 },
				    { 3, 3, 3, 1 },   { 2, 2, 2, 4 }, { 6, 10, 1, 2 }, { 13, 11, 9, 1 } };
	const char *const *m;
	size_t i;

	for (i = 0; i < sizeof(g) / sizeof(g[0]); i++)
		for (m = order_method_names(); *m; m++) {
			topo_torus_spec_t s = geom(g[i][0], g[i][1], g[i][2], g[i][3], 1, 2, 0.67);
			char what[96];
			rm_error_t err;
			order_t *o;

			snprintf(what, sizeof(what), "%s on %dx%dx%d:%d", *m, g[i][0], g[i][1], g[i][2], g[i][3]);
			rm_error_clear(&err);
			o = order_build(&s, *m, NULL, &err);
			check(o != NULL, "%s builds: %s", what, err.text);
			if (!o)
				continue;
			check_permutation(o, what);
			if (!strcmp(*m, "mdf"))
				check_unit_steps(o, what, 1.0, 0);
			if (!strcmp(*m, "gray"))
				check_blocks_are_boxes(o, what, 0);
			if (!strcmp(*m, "bbb")) {
				check_blocks_are_boxes(o, what, 1);
				check_bbb(o, what, 0);
				if (o->spec.dims[o->axes[0]] >= 2)
					check_bbb_slabs(o, what, 0, 0);
			}
			if (!strcmp(*m, "hilbert"))
				check_unit_steps(o, what, 0.9, 0);
			if (!strcmp(*m, "xyz"))
				for (size_t k = 0; k < o->nnodes; k++)
					if (o->node[k] != k) {
						fail("%s: node-id order at %zu", what, k);
						break;
					}
			order_destroy(o);
		}
}

static void test_bbb_paper(void)
{
	topo_torus_spec_t s = geom(17, 8, 24, 2, 1, 2, 0.67);
	int ext[3];
	order_t *o;

	order_bbb_default_block(&s, ext);
	/* the paper's reasoning: y kept short (slow), z long (fast), extent x cost balanced: 4x2x8
	 * routers; x = 17 is odd, so (paper: "a BBB of 3 or 5 in x") 4 is rounded down to 3 */
	check(ext[0] == 3 && ext[1] == 2 && ext[2] == 8, "XE6 default block %dx%dx%d", ext[0], ext[1], ext[2]);
	o = order_build(&s, "bbb", NULL, NULL);
	check(o && o->axes[0] == 2, "blocks chain along z, the fastest link");
	if (o) {
		/* 17 = 3+3+3+3+3+2: the odd x dimension in 3-wide blocks, none 1 wide */
		check_blocks_are_boxes(o, "bbb xe6", 1);
		check_bbb(o, "bbb xe6", 0);
		check_bbb_slabs(o, "bbb xe6", 1, 0);
		order_destroy(o);
	}
	/* identical even blocks: turning whenever possible, runs of at most two */
	s = geom(8, 4, 16, 2, 1, 2, 0.67);
	o = order_build(&s, "bbb:4x2x8", NULL, NULL);
	if (o) {
		check_bbb(o, "bbb:4x2x8 on 8x4x16", 2);
		check_bbb_slabs(o, "bbb:4x2x8 on 8x4x16", 1, 1);
		order_destroy(o);
	}
	s = geom(4, 4, 4, 1, 1, 1, 1);
	o = order_build(&s, "bbb:2x2x2", NULL, NULL);
	if (o) {
		check_bbb(o, "bbb:2x2x2 on 4x4x4", 2);
		order_destroy(o);
	}
	/* a 9-wide dimension split in 2-wide blocks ends with a 3-wide one */
	s = geom(9, 4, 4, 1, 1, 1, 1);
	o = order_build(&s, "bbb:2x2x4", NULL, NULL);
	if (o) {
		check_blocks_are_boxes(o, "bbb:2x2x4 on 9x4x4", 1);
		check_bbb(o, "bbb:2x2x4 on 9x4x4", 0);
		order_destroy(o);
	}
}

static void test_gray_blocks(void)
{
	topo_torus_spec_t s = geom(6, 4, 4, 1, 1, 1, 1);
	order_t *o = order_build(&s, "gray:3x2x2", NULL, NULL);

	check(o != NULL, "gray:3x2x2 builds");
	if (!o)
		return;
	check(o->block_ext[0] == 3 && o->nblocks == 8, "gray:3x2x2 gives 8 blocks, got %u", o->nblocks);
	check_blocks_are_boxes(o, "gray:3x2x2", 1);
	/* Gray order inside a block: every step one hop */
	check_bbb(o, "gray:3x2x2 steps", 0);
	order_destroy(o);
}

static void test_axes(void)
{
	topo_torus_spec_t s = geom(4, 6, 8, 1, 1, 1, 1);
	order_opts_t opts;
	order_t *o;
	int c0[3], c1[3];

	order_opts_default(&opts);
	check(order_parse_axes("yxz", opts.axes, NULL) == 0 && opts.axes[0] == 1, "axes yxz");
	o = order_build(&s, "mdf", &opts, NULL);
	if (o) {
		order_node_coords(&s, o->node[0], c0);
		order_node_coords(&s, o->node[1], c1);
		check(c1[1] == c0[1] + 1 && c1[0] == c0[0], "mdf with axes yxz moves in y first");
		order_destroy(o);
	}
	o = order_build(&s, "mdf", NULL, NULL);
	if (o) {
		order_node_coords(&s, o->node[1], c1);
		check(c1[0] == 1, "mdf default: the shortest dimension (x, 4) first");
		order_destroy(o);
	}
}

static void test_bad_input(void)
{
	topo_torus_spec_t s = geom(17, 8, 24, 2, 1, 2, 0.67);
	rm_error_t err;
	int axes[3];

	rm_error_clear(&err);
	check(!order_build(&s, "zigzag", NULL, &err) && strstr(err.text, "unknown ordering"), "unknown: %s", err.text);
	rm_error_clear(&err);
	check(!order_build(&s, "bbb:20x2x8", NULL, &err) && strstr(err.text, "does not fit"), "block too wide: %s",
	      err.text);
	rm_error_clear(&err);
	check(!order_build(&s, "bbb:4x2", NULL, &err) && strstr(err.text, "AxBxC"), "bad extents: %s", err.text);
	rm_error_clear(&err);
	check(!order_build(&s, "hilbert:2x2x2", NULL, &err), "hilbert takes no block");
	check(order_parse_axes("xxz", axes, NULL) < 0 && order_parse_axes("xy", axes, NULL) < 0, "bad axes");
	s.dims[1] = 0;
	rm_error_clear(&err);
	check(!order_build(&s, "bbb", NULL, &err) && strstr(err.text, "dimension y"), "zero dim: %s", err.text);
	check(order_parse_dims("4x0x4", &s, NULL) < 0 && order_parse_dims("4x4", &s, NULL) < 0 &&
		      order_parse_dims("4x4x4:0", &s, NULL) < 0 && order_parse_dims("-4x4x4", &s, NULL) < 0,
	      "bad --dims");
	check(order_parse_dims("17x8x24:2", &s, NULL) == 0 && s.dims[2] == 24 && s.nodes_per_router == 2,
	      "good --dims");
	check(order_parse_link_cost("1,0,1", &s, NULL) < 0 && order_parse_link_cost("1,2", &s, NULL) < 0,
	      "bad --link-cost");
	check(order_parse_link_cost("1,2,0.67", &s, NULL) == 0 && s.link_cost[2] == 0.67, "good --link-cost");
}

int main(void)
{
	test_all_geometries();
	test_bbb_paper();
	test_gray_blocks();
	test_axes();
	test_bad_input();
	return harness_done();
}
