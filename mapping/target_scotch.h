/*
 * mapping/target_scotch.h: a Scotch target architecture from a topo_target_t (mapping/ only).
 *
 * Error rule: 0 on success, -1 with errno set (and err filled) on failure.
 */
#ifndef RANKMAP_TARGET_SCOTCH_H
#define RANKMAP_TARGET_SCOTCH_H

#include <stdint.h>
#include <stdio.h>
#include <scotch.h>

#include "topo.h"

/* Largest padded tree (terminals) a target may become; above it the target is refused. */
#define MAP_SCOTCH_MAX_TERMINALS (1 << 22)

/* A Scotch target whose terminal i is slot i of the topo_target_t. The struct must stay where it was
 * initialised (the restricted form refers to the tree inside it). */
typedef struct map_scotch_arch {
	SCOTCH_Arch tree;  /* tleaf over the target's tree, each level's arity its largest */
	SCOTCH_Arch sub;   /* that tleaf restricted to the target's slots, when some are missing */
	SCOTCH_Arch *arch; /* what to map onto: &tree or &sub */
	SCOTCH_Num dmax;   /* largest distance between two terminals */
	int has_sub, live;
} map_scotch_arch_t;

/* Initialises *a as Scotch's view of t: a "tleaf" with t's tree (arities padded to the largest of each
 * level, then restricted to the real slots with SCOTCH_archSub when the tree is not uniform) and link
 * costs t->cost as integers: kept when they are integers no larger than dcap, else scaled so that the
 * largest is min(1000, dcap). net_dist is not seen by Scotch (map_compute's cost and repair use it).
 * The caller bounds dcap so that its edge loads times distances fit in SCOTCH_Num. On success the
 * caller calls map_scotch_arch_exit. A tree whose padding would exceed 256 x nslots + 65536 terminals
 * (or MAP_SCOTCH_MAX_TERMINALS) is refused with EINVAL: memory stays linear in the slots. */
int map_scotch_arch_init(map_scotch_arch_t *a, const topo_target_t *t, SCOTCH_Num dcap, rm_error_t *err);
/* Frees what map_scotch_arch_init built. A zeroed or already freed struct is fine. */
void map_scotch_arch_exit(map_scotch_arch_t *a);

#endif
