/*
 * tests/bench/e2e/e2e_common.h: helpers shared by the SMPI benchmark programs of `make bench-e2e`.
 *
 * The programs are ordinary MPI codes. They create their topology communicator with reorder=1 and
 * then use only the communicator they get back, as an application would; whether it is reordered is
 * up to the rankmap library linked into them (RANKMAP_DISABLE=1 gives the plain placement).
 * Every program prints one line from rank 0:
 *   E2E time=<max simulated seconds of the timed loop> offnode=<share of bytes between hosts>
 */
#ifndef E2E_COMMON_H
#define E2E_COMMON_H

#include <mpi.h>
#include <stddef.h>

/* One logical edge of a program's communication pattern: bytes sent per iteration from me to peer. */
typedef struct e2e_edge {
	int peer;
	double bytes;
} e2e_edge_t;

/* Parses "8x4x2" into dims (at most maxd entries). Returns the number of dimensions, or 0. */
int e2e_parse_dims(const char *s, int *dims, int maxd);
/* Parses a comma-separated list of numbers ("65536,4096"); returns how many were read (<= max). */
int e2e_parse_list(const char *s, double *out, int max);

/* Reports the run: max over comm of `seconds`, and the share of pattern bytes that leave the host
 * (each rank passes the edges it sends along, peers in comm's numbering). Rank 0 prints the E2E line. */
void e2e_report(MPI_Comm comm, double seconds, const e2e_edge_t *edges, int nedges);

/* Writes the pattern of the whole job as a Matrix Market file (rank 0 writes; edges are gathered from
 * every rank, O(edges) memory at rank 0). Columns: bytes then messages per iteration. Returns 0 or -1. */
int e2e_write_pattern(MPI_Comm comm, const char *path, const e2e_edge_t *edges, int nedges, double iters);

#endif
