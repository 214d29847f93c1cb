/*
 * order/order_blocks.c: the block layout shared by gray and bbb, and the gray method.
 *
 * Blocks are laid along the first axis of ctx->axes (the chain axis), then the second, then the
 * third, snaking so that the next block is always a neighbour of the previous one. Each block is
 * traversed by its weave (computed once per block shape), flipped per axis: along the chain axis in
 * the direction of travel, along the others so that the block starts as close as possible to where
 * the previous one ended (one hop when the weave allows it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "order_private.h"

#define MAX_SHAPES 32

struct segs {
	int n;
	int *start, *width;
};

/* Splits an axis of D routers into blocks of w; a remainder of 1 widens the last block (so a
 * 4-wide split of 17 is 4,4,4,5 and a 2-wide split of 9 is 2,2,2,3: no 1-wide slice). */
static int split_axis(int D, int w, struct segs *s)
{
	int n = D / w, r = D % w, i, pos = 0;

	s->n = r ? n + (r >= 2) : n;
	s->start = malloc((size_t)s->n * sizeof(int));
	s->width = malloc((size_t)s->n * sizeof(int));
	if (!s->start || !s->width)
		return -1;
	for (i = 0; i < s->n; i++) {
		s->width[i] = (i < n) ? w : r;
		if (r == 1 && i == s->n - 1)
			s->width[i] = w + 1;
		s->start[i] = pos;
		pos += s->width[i];
	}
	return 0;
}

struct layout {
	order_ctx_t *ctx;
	struct segs seg[3];
	order_weave_t shape[MAX_SHAPES];
	int nshapes;
	double cost[3];
	order_weave_fn weave;
};

/* Returns the weave of a block shape, computing it on first use. */
static const order_weave_t *get_weave(struct layout *L, const int w[3])
{
	int i;
	size_t n = (size_t)w[0] * (size_t)w[1] * (size_t)w[2];

	for (i = 0; i < L->nshapes; i++)
		if (!memcmp(L->shape[i].w, w, sizeof(int) * 3))
			return &L->shape[i];
	if (L->nshapes == MAX_SHAPES)
		return NULL;
	memcpy(L->shape[i].w, w, sizeof(int) * 3);
	L->shape[i].cell = malloc(3 * n * sizeof(int16_t));
	if (!L->shape[i].cell || L->weave(&L->shape[i], L->cost) < 0) {
		free(L->shape[i].cell);
		return NULL;
	}
	L->nshapes++;
	return &L->shape[i];
}

static int ring_dist(int a, int b, int D, int wrap)
{
	int h = abs(a - b);

	return (wrap && D - h < h) ? D - h : h;
}

/* Emits block bc (block-grid coordinates) with chain direction dir0; updates prev_end/flip. */
static int emit_block(struct layout *L, const int bc[3], int dir0, uint32_t bid, uint32_t *pos, int prev_end[3],
		      int flip[3], int first)
{
	order_ctx_t *ctx = L->ctx;
	const topo_torus_spec_t *s = ctx->spec;
	int w[3], base[3], i, c[3];
	const order_weave_t *wv;
	size_t k, n;

	for (i = 0; i < 3; i++) {
		w[i] = L->seg[i].width[bc[i]];
		base[i] = L->seg[i].start[bc[i]];
	}
	wv = get_weave(L, w);
	if (!wv)
		return -1;
	flip[0] = dir0 < 0;
	for (i = 1; !first && i < 3; i++) {
		int ax = ctx->axes[i], d0 = ring_dist(base[i], prev_end[i], s->dims[ax], s->wrap[ax]);
		int d1 = ring_dist(base[i] + w[i] - 1, prev_end[i], s->dims[ax], s->wrap[ax]);

		if (d0 != d1)
			flip[i] = d1 < d0;
	}
	n = (size_t)w[0] * (size_t)w[1] * (size_t)w[2];
	for (k = 0; k < n; k++) {
		int g[3];

		for (i = 0; i < 3; i++) {
			int l = wv->cell[3 * k + i];

			g[i] = base[i] + (flip[i] ? w[i] - 1 - l : l);
			c[ctx->axes[i]] = g[i];
		}
		ctx->router[*pos] = order_router_index(s, c);
		ctx->rblock[*pos] = bid;
		(*pos)++;
		if (k == n - 1)
			memcpy(prev_end, g, sizeof(g));
	}
	return 0;
}

static void layout_free(struct layout *L)
{
	int i;

	for (i = 0; i < 3; i++) {
		free(L->seg[i].start);
		free(L->seg[i].width);
	}
	for (i = 0; i < L->nshapes; i++)
		free(L->shape[i].cell);
}

int order_blocks_layout(order_ctx_t *ctx, order_weave_fn weave, rm_error_t *err)
{
	struct layout L = { .ctx = ctx, .weave = weave };
	int i, nb[3], bc[3], prev_end[3] = { 0, 0, 0 }, flip[3] = { 0, 0, 0 };
	uint64_t b, total, layer;
	uint32_t pos = 0;
	int rc = 0;

	for (i = 0; i < 3; i++) {
		int ax = ctx->axes[i];

		L.cost[i] = ctx->spec->link_cost[ax];
		if (split_axis(ctx->spec->dims[ax], ctx->ext[ax], &L.seg[i]) < 0) {
			layout_free(&L);
			return rm_error_set(err, ctx->source, 0, 0, "out of memory");
		}
		nb[i] = L.seg[i].n;
	}
	total = (uint64_t)nb[0] * (uint64_t)nb[1] * (uint64_t)nb[2];
	layer = (uint64_t)nb[0] * (uint64_t)nb[1];
	ctx->group = malloc((size_t)total * 2 * sizeof(uint32_t));
	if (!ctx->group)
		rc = rm_error_set(err, ctx->source, 0, 0, "out of memory");
	for (b = 0; rc == 0 && b < total; b++) {
		uint64_t row = (b / layer) * (uint64_t)nb[1] + (b % layer) / (uint64_t)nb[0];

		order_snake3(b, nb, bc);
		ctx->group[2 * b] = (uint32_t)(bc[2] * nb[1] + bc[1]);
		ctx->group[2 * b + 1] = (uint32_t)bc[2];
		if (emit_block(&L, bc, (row & 1) ? -1 : 1, (uint32_t)b, &pos, prev_end, flip, b == 0) < 0)
			rc = rm_error_set(err, ctx->source, 0, 0, "cannot weave a %dx%dx%d block", ctx->ext[0],
					  ctx->ext[1], ctx->ext[2]);
	}
	ctx->nblocks = (uint32_t)total;
	layout_free(&L);
	if (rc == 0 && pos != ctx->nrouters)
		rc = rm_error_set(err, ctx->source, 0, 0, "internal error: blocks cover %u of %u routers", pos,
				  ctx->nrouters);
	if (rc < 0)
		errno = EINVAL;
	return rc;
}

int order_weave_snake(order_weave_t *wv, const double cost[3])
{
	int n[3] = { wv->w[2], wv->w[1], wv->w[0] }, c[3];
	uint64_t k, total = (uint64_t)n[0] * (uint64_t)n[1] * (uint64_t)n[2];

	for (k = 0; k < total; k++) {
		order_snake3(k, n, c);
		wv->cell[3 * k] = (int16_t)c[2];
		wv->cell[3 * k + 1] = (int16_t)c[1];
		wv->cell[3 * k + 2] = (int16_t)c[0];
	}
	return 0;
}

int order_method_gray(order_ctx_t *ctx, rm_error_t *err)
{
	return order_blocks_layout(ctx, order_weave_snake, err);
}
