/*
 * order/order_hilbert.c: a 3D Hilbert curve for any box (not only equal powers of two).
 *
 * The generalised Hilbert ("gilbert") construction of J. Cervený: the box is given by an origin and
 * three edge vectors a (major), b, c; it is halved along its long edges (preferring even halves so
 * that the sub-curves join with one hop) and the pieces are visited in Hilbert order, each with
 * its own frame, down to single rows. Every step is one hop except where parity forces a diagonal
 * step in odd-sized boxes. Recursion depth is O(log n), time O(n).
 */
#include <stdlib.h>

#include "order_private.h"

struct hctx {
	order_ctx_t *ctx;
	uint32_t pos;
};

typedef struct {
	int x, y, z;
} vec3;

static vec3 v3(int x, int y, int z)
{
	vec3 v = { x, y, z };
	return v;
}
static vec3 vadd(vec3 a, vec3 b)
{
	return v3(a.x + b.x, a.y + b.y, a.z + b.z);
}
static vec3 vsub(vec3 a, vec3 b)
{
	return v3(a.x - b.x, a.y - b.y, a.z - b.z);
}
static vec3 vneg(vec3 a)
{
	return v3(-a.x, -a.y, -a.z);
}
static int sgn(int v)
{
	return (v > 0) - (v < 0);
}
static vec3 vsgn(vec3 a)
{
	return v3(sgn(a.x), sgn(a.y), sgn(a.z));
}
static int vlen(vec3 a)
{
	return abs(a.x + a.y + a.z);
} /* edge vectors are axis-aligned */
static int fdiv2(int v)
{
	return v >= 0 ? v / 2 : -((-v + 1) / 2);
}
static vec3 vhalf(vec3 a)
{
	return v3(fdiv2(a.x), fdiv2(a.y), fdiv2(a.z));
}

static void emit(struct hctx *H, vec3 p)
{
	int c[3] = { p.x, p.y, p.z };

	H->ctx->router[H->pos++] = order_router_index(H->ctx->spec, c);
}

static void walk(struct hctx *H, vec3 p, vec3 dir, int n)
{
	while (n-- > 0) {
		emit(H, p);
		p = vadd(p, dir);
	}
}

/* Halves an edge, rounding an odd half up to even when the edge is longer than 2. */
static vec3 even_half(vec3 a)
{
	vec3 h = vhalf(a);

	if ((vlen(h) % 2) && vlen(a) > 2)
		h = vadd(h, vsgn(a));
	return h;
}

static void gen(struct hctx *H, vec3 p, vec3 a, vec3 b, vec3 c)
{
	int w = vlen(a), h = vlen(b), d = vlen(c);
	vec3 da = vsgn(a), db = vsgn(b), dc = vsgn(c), a2, b2, c2;

	if (h == 1 && d == 1) {
		walk(H, p, da, w);
		return;
	}
	if (w == 1 && d == 1) {
		walk(H, p, db, h);
		return;
	}
	if (w == 1 && h == 1) {
		walk(H, p, dc, d);
		return;
	}
	a2 = even_half(a);
	b2 = even_half(b);
	c2 = even_half(c);
	if (2 * w > 3 * h && 2 * w > 3 * d) { /* long in a: split a only */
		gen(H, p, a2, b, c);
		gen(H, vadd(p, a2), vsub(a, a2), b, c);
	} else if (3 * h > 4 * d) { /* flat in c: split a and b */
		gen(H, p, b2, c, a2);
		gen(H, vadd(p, b2), a, vsub(b, b2), c);
		gen(H, vadd(vadd(p, vsub(a, da)), vsub(b2, db)), vneg(b2), c, vneg(vsub(a, a2)));
	} else if (3 * d > 4 * h) { /* flat in b: split a and c */
		gen(H, p, c2, a2, b);
		gen(H, vadd(p, c2), a, b, vsub(c, c2));
		gen(H, vadd(vadd(p, vsub(a, da)), vsub(c2, dc)), vneg(c2), vneg(vsub(a, a2)), b);
	} else { /* split all three */
		gen(H, p, b2, c2, a2);
		gen(H, vadd(p, b2), c, a2, vsub(b, b2));
		gen(H, vadd(vadd(p, vsub(b2, db)), vsub(c, dc)), a, vneg(b2), vneg(vsub(c, c2)));
		gen(H, vadd(vadd(vadd(p, vsub(a, da)), b2), vsub(c, dc)), vneg(c), vneg(vsub(a, a2)), vsub(b, b2));
		gen(H, vadd(vadd(p, vsub(a, da)), vsub(b2, db)), vneg(b2), c2, vneg(vsub(a, a2)));
	}
}

int order_method_hilbert(order_ctx_t *ctx, rm_error_t *err)
{
	const int *D = ctx->spec->dims;
	struct hctx H = { .ctx = ctx, .pos = 0 };
	vec3 o = v3(0, 0, 0), ex = v3(D[0], 0, 0), ey = v3(0, D[1], 0), ez = v3(0, 0, D[2]);

	if (D[0] >= D[1] && D[0] >= D[2])
		gen(&H, o, ex, ey, ez);
	else if (D[1] >= D[0] && D[1] >= D[2])
		gen(&H, o, ey, ex, ez);
	else
		gen(&H, o, ez, ex, ey);
	if (H.pos != ctx->nrouters)
		return rm_error_set(err, ctx->source, 0, 0, "internal error: hilbert covered %u of %u", H.pos,
				    ctx->nrouters);
	return 0;
}
