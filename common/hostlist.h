/*
 * common/hostlist.h: Slurm-style host lists ("node[1-5,7],login01").
 *
 * Error rule: 0 on success, -1 with errno set; pointer-returning functions return NULL.
 */
#ifndef RANKMAP_HOSTLIST_H
#define RANKMAP_HOSTLIST_H

#include <stddef.h>

#include "rm_error.h"

/* Expands a host list expression into names. Returns a NULL-terminated array of malloc'd strings
 * (free with hostlist_free), count in *n. Errors (unbalanced brackets, bad ranges, more than
 * max_hosts names; 0 = 1,000,000) name the column. */
char **hostlist_expand(const char *expr, size_t *n, size_t max_hosts, rm_error_t *err);
/* Frees the result of hostlist_expand. */
void hostlist_free(char **hosts);
/* Compresses names into the shortest Slurm host list, keeping the given order where ranges allow
 * (node1,node2,node3,node7 -> node[1-3,7]; zero padding kept: n001,n002 -> n[001-002]).
 * Returns a malloc'd string. */
char *hostlist_compress(const char *const *hosts, size_t n);

#endif
