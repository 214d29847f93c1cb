/*
 * topo/report/slurm_private.h: what the files of Slurm's exports share (slurm_topo.c, slurm_export.c).
 */
#ifndef RANKMAP_SLURM_PRIVATE_H
#define RANKMAP_SLURM_PRIVATE_H

#include <stdio.h>

#include "topo_slurm.h"

/* Natural order of two `const char *` (qsort): runs of digits by value (node2 < node10). */
int topo_slurm_cmp_natural(const void *pa, const void *pb);
/* A compressed Slurm host list of in[0..n) (malloc'd), names with long numeric suffixes listed as they
 * are. NULL when out of memory. */
char *topo_slurm_list(const char *const *in, size_t n);
/* s as a double-quoted YAML scalar ('"' and '\\' escaped), then a newline. */
void topo_slurm_yaml_string(FILE *f, const char *s);
/* The header's comment lines about the tree's hosts: multi-homed, GUID-named, unplaced, left out by
 * the keep list, Slurm nodes missing from the fabric. */
void topo_slurm_header_notes(const topo_swtree_t *t, FILE *f);
/* The switch lines of the tree (no header): topology.conf lines, or with yaml the items of a
 * topology.yaml `switches:` list (indented four spaces). Returns 0, or -1 with err set. */
int topo_slurm_tree_body(topo_cluster_t c, const topo_swtree_t *t, const char *top, int yaml, FILE *f, rm_error_t *err);

#endif
