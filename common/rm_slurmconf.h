/*
 * common/rm_slurmconf.h: the node names a Slurm configuration defines (the NodeName= lines of
 * slurm.conf), for the exports that must list only Slurm's nodes (`rankmapctl slurm-topology
 * --slurm-conf FILE`).
 *
 * Read as slurm.conf(5) describes the file: parameter names are case insensitive, text after '#' is a
 * comment, a line ending in '\' continues on the next; every NodeName=EXPR on a line (EXPR a Slurm host
 * list, expanded with common/hostlist.h) adds its names, except NodeName=DEFAULT; `Include FILE` lines
 * are followed (a relative FILE from the including file's directory; shell patterns as glob(3) expands
 * them; at most 8 levels deep and 256 files in all). Nothing else of the file is interpreted.
 *
 * Error rule as in rm_error.h: NULL with errno set and err naming the file and line; an error inside an
 * included file (or a missing one) names that file and line and then each Include that led there, as a
 * C compiler does: "inc.conf:3:10: NodeName=bad[1-: ... (included from slurm.conf:12, from a.conf:4)".
 */
#ifndef RANKMAP_RM_SLURMCONF_H
#define RANKMAP_RM_SLURMCONF_H

#include <stddef.h>

#include "rm_error.h"

/* The node names defined by slurm.conf at path and its Includes, sorted (strcmp), duplicates removed.
 * Returns a NULL-terminated array of malloc'd strings (free with hostlist_free), count in *n; an empty
 * array when the file defines no node. Errors: a file that cannot be read (rm_file, kind config), a bad
 * host list in NodeName= (file, line and column), more than 1,000,000 names. */
char **rm_slurm_conf_nodes(const char *path, size_t *n, rm_error_t *err);

#endif
