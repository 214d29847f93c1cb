/*
 * order/order_bbb.h: internals of the BBB ordering shared by order_bbb*.c.
 */
#ifndef RANKMAP_ORDER_BBB_H
#define RANKMAP_ORDER_BBB_H

#include "order_private.h"

#define ORDER_BBB_HIER_MAX 160 /* larger blocks are woven by the search (O(n^3) pair tables) */

/* Hierarchical slab weave of wv->w (axis 0 the chain axis, cost[] the link costs of the permuted
 * axes; see order_bbb_weave.c): fills wv->cell with a path that starts at local (0,0,0) and ends on
 * the far face of axis 0. Returns 0, or -1 when the block has more than ORDER_BBB_HIER_MAX cells,
 * no such path exists, or memory runs out (wv->cell is then unspecified). */
int order_bbb_weave_hier(order_weave_t *wv, const double cost[3]);

#endif
