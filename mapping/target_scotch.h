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

/* Initialises *arch (the caller calls SCOTCH_archExit on success) as a Scotch target whose terminal
 * domain i is slot i of t. A uniform tree without net_dist becomes a "tleaf" (costs scaled to integers
 * when needed); any other target becomes a decomposition-defined target (SCOTCH_archBuild2) built
 * from a graph of the slots and one hub per group, whose path lengths are the target's distances
 * (twice them, in integers). Net distances (net_dist) add direct host-hub links for up to
 * TOPO_SCOTCH_MAX_NET_HOSTS hosts; above that the tree distances are used. */
#define TOPO_SCOTCH_MAX_NET_HOSTS 512
int topo_target_scotch_arch(const topo_target_t *t, SCOTCH_Arch *arch, rm_error_t *err);

#endif
