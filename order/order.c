/*
 * order/order.c: the method table, option parsing, router-to-node expansion, and the two simple
 * orderings (xyz: node-id order; mdf: minimum dimension first, snaking).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "order_private.h"

#define ORDER_CHUNK_NODES 128 /* "block" size reported for unblocked methods */

static const struct order_method {
	const char *name;
	order_method_fn fn;
	int takes_block; /* accepts ":AxBxC" */
	/* the block extents when none is given, or NULL: 2 along every axis longer than 1 */
	void (*default_block)(const topo_torus_spec_t *spec, int ext[3]);
} order_methods[] = {
	{ "xyz", order_method_xyz, 0, NULL },
	{ "mdf", order_method_mdf, 0, NULL },
	{ "gray", order_method_gray, 1, NULL },
	{ "hilbert", order_method_hilbert, 0, NULL },
	{ "bbb", order_method_bbb, 1, order_bbb_default_block },
};

#define NMETHODS (sizeof(order_methods) / sizeof(order_methods[0]))

const char *const *order_method_names(void)
{
	static const char *const names[] = { "xyz", "mdf", "gray", "hilbert", "bbb", NULL };

	return names;
}

void order_opts_default(order_opts_t *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->axes[0] = -1;
}

#define DIMS_MAX (1 << 20) /* one extent; the torus as a whole is bounded by topo_set_torus */

/* Parses "AxBxC" (positive integers) into v; returns 0, -1 when malformed, or -2 when an extent is not
 * in 1..DIMS_MAX (checked on the long strtol returns, saturated on overflow, before any conversion). */
static int parse_triple(const char *s, int v[3], const char **end)
{
	int d;

	for (d = 0; d < 3; d++) {
		char *e;
		long x;

		if (!isdigit((unsigned char)*s))
			return -1;
		x = strtol(s, &e, 10);
		if (x < 1 || x > DIMS_MAX)
			return -2;
		v[d] = (int)x;
		s = e;
		if (d < 2) {
			if (*s != 'x' && *s != 'X')
				return -1;
			s++;
		}
	}
	*end = s;
	return 0;
}

int order_parse_dims(const char *s, topo_torus_spec_t *spec, rm_error_t *err)
{
	const char *end;
	int v[3], rc = s ? parse_triple(s, v, &end) : -1;

	if (rc == -2) {
		errno = ERANGE;
		return rm_error_set(err, "--dims", 0, 0, "'%s': every extent must be 1 to %d", s, DIMS_MAX);
	}
	if (rc < 0 || (*end && *end != ':')) {
		errno = EINVAL;
		return rm_error_set(err, "--dims", 0, 0,
				    "'%s': expected XxYxZ[:NODES_PER_ROUTER] with positive integers", s ? s : "");
	}
	memcpy(spec->dims, v, sizeof(v));
	if (*end == ':') {
		char *e;
		long n = strtol(end + 1, &e, 10);

		if (e == end + 1 || *e || n < 1 || n > 1024) {
			errno = EINVAL;
			return rm_error_set(err, "--dims", 0, 0, "'%s': nodes per router must be 1 to 1024", s);
		}
		spec->nodes_per_router = (int)n;
	} else {
		spec->nodes_per_router = 1;
	}
	return 0;
}

int order_parse_link_cost(const char *s, topo_torus_spec_t *spec, rm_error_t *err)
{
	double c[3];
	int d;

	for (d = 0; s && d < 3; d++) {
		char *e;

		c[d] = strtod(s, &e);
		if (e == s || !(c[d] > 0) || c[d] > 1e9 || (d < 2 && *e != ',') || (d == 2 && *e))
			break;
		s = e + 1;
	}
	if (d < 3) {
		errno = EINVAL;
		return rm_error_set(err, "--link-cost", 0, 0, "expected three positive costs CX,CY,CZ");
	}
	memcpy(spec->link_cost, c, sizeof(c));
	return 0;
}

int order_parse_axes(const char *s, int axes[3], rm_error_t *err)
{
	int seen = 0, i;

	if (!s || strlen(s) != 3)
		goto bad;
	for (i = 0; i < 3; i++) {
		int a = tolower((unsigned char)s[i]) - 'x';

		if (a < 0 || a > 2 || (seen & (1 << a)))
			goto bad;
		seen |= 1 << a;
		axes[i] = a;
	}
	return 0;
bad:
	errno = EINVAL;
	return rm_error_set(err, "--axes", 0, 0, "'%s': expected a permutation of x, y, z such as zyx", s ? s : "");
}

int order_method_xyz(order_ctx_t *ctx, rm_error_t *err)
{
	uint32_t r;

	for (r = 0; r < ctx->nrouters; r++)
		ctx->router[r] = r;
	return 0;
}

int order_method_mdf(order_ctx_t *ctx, rm_error_t *err)
{
	const topo_torus_spec_t *s = ctx->spec;
	int n[3], c[3], g[3], i;
	uint32_t r;

	for (i = 0; i < 3; i++)
		n[i] = s->dims[ctx->axes[i]];
	for (r = 0; r < ctx->nrouters; r++) {
		order_snake3(r, n, c);
		for (i = 0; i < 3; i++)
			g[ctx->axes[i]] = c[i];
		ctx->router[r] = order_router_index(s, g);
	}
	return 0;
}

/* Default axis order: mdf shortest dimension first; the block methods fastest link first, the
 * slowest last (the paper's reasoning: on the XE6 z, then x, then the single-link y; its literal
 * "z, then y, then x" is --axes zyx, which simulates slightly worse there, see tests/bench).
 * Ties keep z, y, x order for links and x, y, z for dimensions. */
static void default_axes(const topo_torus_spec_t *s, const char *method, int axes[3])
{
	int i, j, by_dims = !strcmp(method, "mdf");

	for (i = 0; i < 3; i++)
		axes[i] = by_dims ? i : 2 - i;
	for (i = 1; i < 3; i++)
		for (j = i; j > 0; j--) {
			int a = axes[j - 1], b = axes[j];
			int swap = by_dims ? s->dims[b] < s->dims[a] : s->link_cost[b] < s->link_cost[a];

			if (!swap)
				break;
			axes[j - 1] = b;
			axes[j] = a;
		}
}

/* Resolves "name[:AxBxC]" to a method and its block extents. */
static const struct order_method *find_method(const char *method, int ext[3], rm_error_t *err)
{
	size_t i, len = strcspn(method, ":");

	for (i = 0; i < NMETHODS; i++)
		if (strlen(order_methods[i].name) == len && !strncmp(method, order_methods[i].name, len))
			break;
	if (i == NMETHODS) {
		rm_error_set(err, "--method", 0, 0, "unknown ordering '%s' (xyz, mdf, gray, hilbert, bbb)", method);
		return NULL;
	}
	if (method[len] == ':') {
		const char *end;

		if (!order_methods[i].takes_block) {
			rm_error_set(err, "--method", 0, 0, "'%s' takes no block extents", order_methods[i].name);
			return NULL;
		}
		if (parse_triple(method + len + 1, ext, &end) < 0 || *end) {
			rm_error_set(err, "--method", 0, 0, "'%s': block extents must be AxBxC, e.g. %s:4x2x8", method,
				     order_methods[i].name);
			return NULL;
		}
	}
	return &order_methods[i];
}

/* Checks block extents against the torus. */
static int check_block(const topo_torus_spec_t *s, const int ext[3], const char *method, rm_error_t *err)
{
	int d;

	for (d = 0; d < 3; d++)
		if (ext[d] < 1 || ext[d] > s->dims[d])
			return rm_error_set(err, "--method", 0, 0,
					    "'%s': block extent %d in %c does not fit the torus (%d routers)", method,
					    ext[d], "xyz"[d], s -> dims[d]);
	return 0;
}

/* Expands the router order to nodes; unblocked methods get chunks of ORDER_CHUNK_NODES. */
static int expand_nodes(order_t *o, order_ctx_t *ctx)
{
	uint32_t npr = (uint32_t)o->spec.nodes_per_router, p, n, b;
	uint32_t chunk = ORDER_CHUNK_NODES / npr ? ORDER_CHUNK_NODES / npr : 1;

	if (!ctx->nblocks) {
		for (p = 0; p < ctx->nrouters; p++)
			ctx->rblock[p] = p / chunk;
		ctx->nblocks = (ctx->nrouters + chunk - 1) / chunk;
	}
	if (!ctx->group) {
		ctx->group = malloc((size_t)ctx->nblocks * 2 * sizeof(uint32_t));
		if (!ctx->group)
			return -1;
		for (b = 0; b < ctx->nblocks; b++) {
			ctx->group[2 * b] = b / 8;
			ctx->group[2 * b + 1] = b / 64;
		}
	}
	for (p = 0; p < ctx->nrouters; p++)
		for (n = 0; n < npr; n++) {
			o->node[(size_t)p * npr + n] = ctx->router[p] * npr + n;
			o->block[(size_t)p * npr + n] = ctx->rblock[p];
		}
	o->nblocks = ctx->nblocks;
	o->block_group = ctx->group;
	ctx->group = NULL;
	return 0;
}

/* Allocates the order and the context arrays. */
static order_t *order_alloc(const topo_torus_spec_t *spec, order_ctx_t *ctx)
{
	order_t *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->spec = *spec;
	ctx->nrouters = (uint32_t)spec->dims[0] * (uint32_t)spec->dims[1] * (uint32_t)spec->dims[2];
	o->nnodes = (size_t)ctx->nrouters * (size_t)spec->nodes_per_router;
	o->node = malloc(o->nnodes * sizeof(uint32_t));
	o->block = malloc(o->nnodes * sizeof(uint32_t));
	ctx->router = malloc((size_t)ctx->nrouters * sizeof(uint32_t));
	ctx->rblock = calloc((size_t)ctx->nrouters, sizeof(uint32_t));
	if (!o->node || !o->block || !ctx->router || !ctx->rblock) {
		free(ctx->router);
		free(ctx->rblock);
		order_destroy(o);
		return NULL;
	}
	return o;
}

/* Validates the spec as the torus loader does (the order may be built from a CLI spec). */
static int check_spec(const topo_torus_spec_t *s, rm_error_t *err)
{
	double n = 1;
	int d;

	for (d = 0; d < 3; d++) {
		if (s->dims[d] < 1)
			return rm_error_set(err, "torus", 0, 0, "dimension %c is %d: must be >= 1", "xyz"[d],
					    s -> dims[d]);
		if (!(s->link_cost[d] > 0))
			return rm_error_set(err, "torus", 0, 0, "link cost of %c must be > 0", "xyz"[d]);
		n *= s->dims[d];
	}
	if (s->nodes_per_router < 1)
		return rm_error_set(err, "torus", 0, 0, "nodes per router must be >= 1");
	if (n * s->nodes_per_router > 4e9)
		return rm_error_set(err, "torus", 0, 0, "torus too large for 32-bit node indices");
	return 0;
}

order_t *order_build(const topo_torus_spec_t *spec, const char *method, const order_opts_t *opts, rm_error_t *err)
{
	order_opts_t def;
	order_ctx_t ctx = { .spec = spec, .source = method };
	const struct order_method *m;
	order_t *o;
	int ext[3] = { 0, 0, 0 };

	if (!opts) {
		order_opts_default(&def);
		opts = &def;
	}
	if (!spec || !method || check_spec(spec, err) < 0 || !(m = find_method(method, ext, err))) {
		errno = EINVAL;
		return NULL;
	}
	if (!ext[0])
		memcpy(ext, opts->block, sizeof(ext));
	if (!ext[0] && m->default_block)
		m->default_block(spec, ext);
	else if (!ext[0])
		for (int d = 0; d < 3; d++)
			ext[d] = spec->dims[d] < 2 ? 1 : 2;
	if (m->takes_block && check_block(spec, ext, method, err) < 0) {
		errno = EINVAL;
		return NULL;
	}
	if (opts->axes[0] >= 0)
		memcpy(ctx.axes, opts->axes, sizeof(ctx.axes));
	else
		default_axes(spec, m->name, ctx.axes);
	memcpy(ctx.ext, ext, sizeof(ext));
	o = order_alloc(spec, &ctx);
	if (!o) {
		rm_error_set(err, "order", 0, 0, "out of memory for %d x %d x %d routers", spec->dims[0], spec->dims[1],
			     spec->dims[2]);
		return NULL;
	}
	snprintf(o->method, sizeof(o->method), "%s", m->name);
	memcpy(o->axes, ctx.axes, sizeof(o->axes));
	if (m->takes_block)
		memcpy(o->block_ext, ext, sizeof(ext));
	if (m->fn(&ctx, err) < 0 || expand_nodes(o, &ctx) < 0) {
		rm_error_set(err, "order", 0, 0, "cannot build ordering '%s'", method);
		order_destroy(o);
		o = NULL;
	}
	free(ctx.router);
	free(ctx.rblock);
	free(ctx.group);
	return o;
}

void order_destroy(order_t *o)
{
	if (!o)
		return;
	free(o->node);
	free(o->block);
	free(o->block_group);
	free(o);
}
