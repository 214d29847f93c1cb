/*
 * mapping/tm_private.h: internals of the TreeMatch engine (treematch.c, tm_group.c).
 */
#ifndef RANKMAP_TM_PRIVATE_H
#define RANKMAP_TM_PRIVATE_H

#include "mapping_private.h"

struct tm_types;

/* The units of one level: a CSR graph over n units of which the first nreal may have edges (the rest
 * are virtual, zero-traffic padding). type (NULL: all alike) is the profile each unit was formed for
 * (tm_types.c); only units of the same type may trade places. */
typedef struct tm_units {
	uint32_t n, nreal;
	const uint64_t *xadj;
	const uint32_t *adj;
	const double *w;
	const uint32_t *type;
	int ranks; /* 1: the units are the ranks (the finest level) */
} tm_units_t;

/* The uniform tree TreeMatch works on: levels 0 (root) .. L-1 (leaves), arities, costs. */
struct tm_tree {
	int L;
	uint32_t A[64];
	double cost[64];
};

/* Profiles of the virtual positions (tm_types.c). Ranks fill real slots compactly (the children with
 * most real slots first); the type of a position is the multiset of its children's types, a leaf's
 * is 1 when it gets a rank, 0 otherwise (hole or spare slot). Positions of one type hold the same
 * shape of subtree, so groups formed for a type may go to any position of that type. */
typedef struct tm_types {
	int L;
	uint32_t *ptype[64]; /* per depth: type of each position */
	uint32_t ntypes[64]; /* per depth: number of types */
	uint32_t *child[64]; /* per depth d < L-1: the A[d+1] child types of each type, sorted */
	uint32_t *load[64];  /* per depth: ranks under a position of each type */
	uint32_t *count[64]; /* per depth: positions of each type */
} tm_types_t;

/* Computes the types for n ranks on a virtual tree of V leaves (vslot: real slot or UINT32_MAX). Returns
 * 1 when they are not uniform (typed grouping needed), 0 when every depth has one type, -1 (ENOMEM). */
int tm_types_build(tm_types_t *ty, const struct tm_tree *tr, const uint32_t *vslot, uint64_t V, uint32_t n);
void tm_types_free(tm_types_t *ty);
/* Typed greedy grouping of the units of depth l into the positions of depth l-1: every group gets the
 * child types of a position's type; gtype[g] receives the type of group g. */
int tm_group_typed(const tm_units_t *u, uint32_t a, uint32_t *members, const tm_types_t *ty, int l, uint32_t *gtype);

/* A group being grown (tm_group.c, tm_types.c): members so far, and the free candidates with their
 * traffic to the group (conn; cand lists those with conn > 0, conn is reset by the caller). */
typedef struct tm_grow {
	const tm_units_t *u;
	double *deg, *conn;
	unsigned char *used;
	uint32_t *cand, ncand, *members, pos;
} tm_grow_t;
/* Adds unit x to the group: marks it used and adds its free neighbours' traffic to conn. */
void tm_grow_add(tm_grow_t *g, uint32_t x);
/* Traffic from candidate y to the other free candidates: how much a group that takes y can still gain
 * (ties: closes squares and cubes in grids). */
double tm_grow_lookahead(const tm_grow_t *g, uint32_t y);

/* Groups u's units into u->n / a groups of a: members[g * a + p] is the p-th unit of group g.
 * Exhaustive for tiny levels, greedy plus swaps otherwise (stopping the swaps at deadline).
 * Returns 0 or -1 (ENOMEM). */
int tm_group_level(const tm_units_t *u, uint32_t a, uint32_t *members, int mode, double deadline,
		   const struct tm_types *ty, int l, uint32_t *gtype);
/* tm_group.c: greedy growth of groups, and pairwise swaps between groups that keep more traffic
 * inside them. */
int tm_group_greedy(const tm_units_t *u, uint32_t a, uint32_t *members, int mode);
int tm_group_improve(const tm_units_t *u, uint32_t a, uint32_t *members, double deadline);
/* tm_kl.c: Kernighan-Lin passes between each group and the groups it talks to most (small arities). */
int tm_group_kl(const tm_units_t *u, uint32_t a, uint32_t *members, double deadline);

#endif
