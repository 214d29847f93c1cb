/*
 * mapping/tm_private.h: internals of the TreeMatch engine (treematch.c, tm_group.c).
 */
#ifndef RANKMAP_TM_PRIVATE_H
#define RANKMAP_TM_PRIVATE_H

#include "mapping_private.h"

/* The units of one level: a CSR graph over n units of which the first nreal may have edges (the rest
 * are virtual, zero-traffic padding). */
typedef struct tm_units {
	uint32_t n, nreal;
	const uint64_t *xadj;
	const uint32_t *adj;
	const double *w;
} tm_units_t;

/* Groups u's units into u->n / a groups of a: members[g * a + p] is the p-th unit of group g.
 * Exhaustive for tiny levels, greedy plus swaps otherwise (stopping the swaps at deadline).
 * Returns 0 or -1 (ENOMEM). */
int tm_group_level(const tm_units_t *u, uint32_t a, uint32_t *members, int mode, double deadline);
/* tm_group.c: greedy growth of groups, and pairwise swaps between groups that keep more traffic
 * inside them. */
int tm_group_greedy(const tm_units_t *u, uint32_t a, uint32_t *members, int mode);
int tm_group_improve(const tm_units_t *u, uint32_t a, uint32_t *members, double deadline);
/* tm_kl.c: Kernighan-Lin passes between each group and the groups it talks to most (small arities). */
int tm_group_kl(const tm_units_t *u, uint32_t a, uint32_t *members, double deadline);

#endif
