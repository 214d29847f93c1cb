/*
 * order/order_private.h: internals shared by the ordering methods of order/.
 *
 * Every method produces a router order (routers[R], router index at each position) and a block id
 * per position; order.c expands routers to nodes (the nodes of a router stay together).
 */
#ifndef RANKMAP_ORDER_PRIVATE_H
#define RANKMAP_ORDER_PRIVATE_H

#include "order.h"

/* What a method fills. */
typedef struct order_ctx {
	const topo_torus_spec_t *spec;
	uint32_t nrouters;
	int axes[3];      /* fastest first */
	int ext[3];       /* block extents in x, y, z (gray, bbb) */
	uint32_t *router; /* nrouters: router index at each position */
	uint32_t *rblock; /* nrouters: block id at each position */
	uint32_t nblocks;
	uint32_t *group;    /* 2 per block, allocated by the method (may stay NULL) */
	const char *source; /* method string, for errors */
} order_ctx_t;

typedef int (*order_method_fn)(order_ctx_t *ctx, rm_error_t *err);

int order_method_xyz(order_ctx_t *ctx, rm_error_t *err);
int order_method_mdf(order_ctx_t *ctx, rm_error_t *err);
int order_method_gray(order_ctx_t *ctx, rm_error_t *err);
int order_method_hilbert(order_ctx_t *ctx, rm_error_t *err);
int order_method_bbb(order_ctx_t *ctx, rm_error_t *err);

static inline uint32_t order_router_index(const topo_torus_spec_t *s, const int c[3])
{
	return ((uint32_t)c[0] * (uint32_t)s->dims[1] + (uint32_t)c[1]) * (uint32_t)s->dims[2] + (uint32_t)c[2];
}

/* Boustrophedon (snake) position i of a box with extents n[0] (fastest) .. n[2] (slowest): fills c[]
 * so that consecutive positions differ by one step in one coordinate. */
static inline void order_snake3(uint64_t i, const int n[3], int c[3])
{
	uint64_t layer = (uint64_t)n[0] * (uint64_t)n[1];
	uint64_t d2 = i / layer, r = i % layer, d1 = r / (uint64_t)n[0], row;

	c[2] = (int)d2;
	c[1] = (int)((d2 & 1) ? (uint64_t)n[1] - 1 - d1 : d1);
	row = d2 * (uint64_t)n[1] + d1;
	c[0] = (int)((row & 1) ? (uint64_t)n[0] - 1 - r % (uint64_t)n[0] : r % (uint64_t)n[0]);
}

/* A block weave: the cells of a block of extents w[0] (chain axis) x w[1] x w[2], as local
 * coordinates (3 shorts per cell), starting at (0,0,0) and ending on the face l0 = w[0] - 1. */
typedef struct order_weave {
	int w[3];
	int16_t *cell; /* 3 * w0*w1*w2 */
} order_weave_t;

/* Fills wv->cell for wv->w; cost[] are the link costs of the permuted axes. Returns 0 or -1. */
typedef int (*order_weave_fn)(order_weave_t *wv, const double cost[3]);

/* Lays blocks of extents ctx->ext along the axes (ctx->axes[0] first, snaking), an axis not a
 * multiple of its extent split so that no 1-wide slice remains (the last block one wider), each
 * block traversed by its weave, flipped so that it starts next to where the previous block ended. */
int order_blocks_layout(order_ctx_t *ctx, order_weave_fn weave, rm_error_t *err);

/* Snake weave: axis 2 fastest, axis 0 slowest (a generalised Gray code; always valid). */
int order_weave_snake(order_weave_t *wv, const double cost[3]);

#endif
