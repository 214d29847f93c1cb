/*
 * common/rm_slot.h: a slot, where one process runs, named once: its host and its PU (later its GPU).
 *
 * The MPI library (each rank's host and the PU it is bound to), the SPANK plugin (a step's allocated
 * cores) and rankmapctl describe their slots with this type, in their own order (rank order, core
 * order); the client library sends them in that order (rm_client_map, daemon/client/rm_client.h), and
 * rankmapd answers in that order too: vertex v runs on the caller's slot placement[v]. Only the daemon
 * translates between the caller's order and its target's (topo_target_t.given), once.
 *
 * The PU is an index of the host's hwloc tree: logical (hwloc's numbering, the default) or OS (the
 * numbering of sched_getaffinity, taskset and Slurm's core lists), as the caller says once for all its
 * slots. RM_SLOT_ANY: not known (the process is not bound to one PU); the daemon then gives it a free PU
 * of its host, in the caller's order.
 *
 * Error rule: functions return 0 on success, -1 with errno set on failure. Nothing is allocated.
 */
#ifndef RANKMAP_RM_SLOT_H
#define RANKMAP_RM_SLOT_H

#include <stddef.h>
#include <stdint.h>

#define RM_SLOT_ANY (-1)

typedef struct rm_slot {
	const char *host; /* host name (borrowed) */
	int32_t pu;       /* PU index (logical or OS, as the caller says), RM_SLOT_ANY when not known */
} rm_slot_t;

/* How the PU indices of a list of slots count. */
typedef enum rm_slot_pu { RM_SLOT_PU_LOGICAL = 0, RM_SLOT_PU_OS = 1 } rm_slot_pu_t;

/* The wire name of a numbering ("logical", "os"), and back: 0 with *out set, or -1 (EINVAL). */
const char *rm_slot_pu_name(rm_slot_pu_t pu);
int rm_slot_pu_parse(const char *name, rm_slot_pu_t *out);

/* "host:pu" ("host:any" for RM_SLOT_ANY) into buf (len bytes, truncated). Returns buf. */
char *rm_slot_format(const rm_slot_t *s, char *buf, size_t len);

#endif
