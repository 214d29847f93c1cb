/*
 * common/rm_pattern.h: learned communication patterns: the record, its text form, the
 * running average that merges one run into it, and the per-user directory store.
 *
 * A pattern belongs to one topology call of one program of one user, named by its key:
 *   uid      the user who recorded it;
 *   program  "build-id:<hex>" (the executable's ELF build-id), else "file:<hash of path>:<size>:<mtime>";
 *   fn       "MPI_Cart_create", "MPI_Graph_create", "MPI_Dist_graph_create(_adjacent)";
 *   order    the call's place among the program's topology calls with reorder=1 (0, 1, ...);
 *   shape    Cartesian "cart <ndims> <p0,p1,...>" (periods): the weights carry over to other sizes and
 *            extents; graphs "graph <ranks> <edges> <hash of the edge structure>": only that graph.
 * Two keys are equal only when all five are. A pattern is applied only to a call of the same key.
 *
 * What it holds, per rank of the run (totals divided by the number of ranks):
 *   Cartesian: per dimension, bytes and messages sent towards -1 and towards +1;
 *   graphs: per adjacency entry of the call's graph (CSR order: vertex by vertex, neighbours in
 *           increasing order), bytes and messages the vertex sent to that neighbour;
 *   both: "other", traffic on the communicator to ranks that are not neighbours in its topology.
 *
 * Merging (rm_pattern_merge): new = (1 - a) * old + a * run with a = max(1 / runs, RM_PATTERN_EMA),
 * runs counting this one: the plain mean of the first four runs, then an exponential average in which
 * a run weighs 25 %, so one odd run does not erase the history.
 *
 * Drift (a program whose pattern changes between runs, e.g. with its input): each merge records how far
 * the run's traffic was from the average before it ("drift": the total variation distance between their
 * byte shares per dimension or entry, 0 the same, 1 disjoint) and the run's command line ("cmdline", a
 * hash of its arguments and of the input files they name, plugin/mpi/pmpi_learn.c). A pattern is not applied (rm_pattern_usable) while the last merge drifted by
 * more than RM_PATTERN_DRIFT_MAX (until runs agree with the average again), nor to a run of the same
 * size as the last one with another command line (its input changed; a run at another size is expected
 * to have other arguments, and its per-rank pattern carries over). Not applied means unweighted.
 *
 * Text form (one "key = value" a line, '#' comments; rm_pattern_parse checks every field):
 *     rankmap-pattern = 1
 *     uid = 1000
 *     program = build-id:3f0c...
 *     path = /home/u/app               (informational)
 *     fn = MPI_Cart_create
 *     order = 0
 *     shape = cart 3 1,1,1
 *     runs = 2
 *     updated = 1712345678             (Unix time of the last merge)
 *     ranks = 128                      (ranks of the last run)
 *     dim = 0 <bytes -1> <bytes +1> <msgs -1> <msgs +1>     (Cartesian, one line per dimension)
 *     edges = <n>                      (graphs, then n lines "edge = <vertex> <neighbour> <bytes> <msgs>")
 *     other = <bytes> <msgs>
 *     cmdline = <16 hex digits>        (optional: the last run's arguments, 0 unknown)
 *     drift = <0..1>                   (optional: the last merge's distance from the average)
 *
 * Error rule: 0 on success, -1 with errno set and err (may be NULL) filled on failure; pointer-returning
 * functions return NULL. Nothing here prints or exits.
 */
#ifndef RANKMAP_RM_PATTERN_H
#define RANKMAP_RM_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "rm_error.h"

#define RM_PATTERN_VERSION 1
#define RM_PATTERN_MAXDIMS 16
/* The largest number of adjacency entries a graph pattern may have (64M). */
#define RM_PATTERN_MAX_EDGES (1u << 26)
#define RM_PATTERN_EMA 0.25
#define RM_PATTERN_DRIFT_MAX 0.15
/* Weights from a pattern: normalised by the largest; what carried nothing weighs this much of it (the
 * graph keeps its edges). The MPI library and rankmapctl explain apply this one rule. */
#define RM_PATTERN_MIN_WEIGHT 1e-3
#define RM_PATTERN_PROGRAM_LEN 96
#define RM_PATTERN_SHAPE_LEN 96
#define RM_PATTERN_FN_LEN 40

typedef struct rm_pattern_key {
	uint32_t uid;
	char program[RM_PATTERN_PROGRAM_LEN];
	char fn[RM_PATTERN_FN_LEN];
	uint32_t order;
	char shape[RM_PATTERN_SHAPE_LEN];
} rm_pattern_key_t;

typedef struct rm_pattern {
	rm_pattern_key_t key;
	char path[256];                    /* the program's path when recorded (informational) */
	uint32_t runs;                     /* runs merged */
	int64_t updated;                   /* Unix time of the last merge */
	uint32_t ranks;                    /* ranks of the last run */
	int ndims;                         /* Cartesian: dimensions (0 for graphs) */
	double dim[RM_PATTERN_MAXDIMS][4]; /* bytes -1, bytes +1, msgs -1, msgs +1 (per rank) */
	size_t nedges;                     /* graphs: adjacency entries */
	double *edge;                      /* graphs: 2 per entry (bytes, msgs), per rank */
	uint32_t *ends;                    /* graphs: 2 per entry (vertex, neighbour): the call's structure */
	double other[2];                   /* non-neighbour traffic: bytes, msgs (per rank) */
	uint64_t cmdline;                  /* hash of the last run's arguments (0: unknown) */
	double drift;                      /* the last merge's distance from the average before it (0..1) */
} rm_pattern_t;

/* Returns 1 when the key's shape is Cartesian ("cart ..."), else 0. */
int rm_pattern_is_cart(const rm_pattern_key_t *k);
/* Fills k->shape for a Cartesian call ("cart 3 1,0,1"). Returns 0, or -1 (EINVAL: ndims out of range). */
int rm_pattern_shape_cart(rm_pattern_key_t *k, int ndims, const int periods[]);
/* Fills k->shape for a graph call ("graph <ranks> <entries> <16 hex digits>"). */
void rm_pattern_shape_graph(rm_pattern_key_t *k, uint32_t ranks, uint64_t entries, uint64_t hash);
/* Returns 1 when the two keys are equal in all five fields, else 0. */
int rm_pattern_key_equal(const rm_pattern_key_t *a, const rm_pattern_key_t *b);
/* The key's identifier: 16 hex digits of a hash of all its fields, written into id (17 bytes). The
 * store's file name is "<id>.pattern". */
void rm_pattern_key_id(const rm_pattern_key_t *k, char id[17]);

/* A new empty pattern for key k (borrowed, copied), with nedges zeroed graph entries (ends included). Caller frees it
 * with rm_pattern_free. NULL (ENOMEM, EINVAL above RM_PATTERN_MAX_EDGES). */
rm_pattern_t *rm_pattern_new(const rm_pattern_key_t *k, size_t nedges);
/* Frees p and the arrays it owns. NULL is fine. */
void rm_pattern_free(rm_pattern_t *p);

/* Merges run into *stored: stored NULL or of another shape (dimensions, entries): run replaces it (a
 * copy). Returns the merged pattern (stored itself, or a new one; the caller frees what it holds and
 * the old stored when a new one came back), NULL on ENOMEM. Sets runs and updated (now). */
rm_pattern_t *rm_pattern_merge(rm_pattern_t *stored, const rm_pattern_t *run, time_t now);

/* Whether the MPI library applies p to a call of ranks ranks in a run whose arguments hash to cmdline
 * (0: unknown). 1 yes; 0 no, *why (may be NULL) "unstable" (the last merge drifted more than
 * RM_PATTERN_DRIFT_MAX) or "input-changed" (same size as the last run, other arguments). */
int rm_pattern_usable(const rm_pattern_t *p, uint32_t ranks, uint64_t cmdline, const char **why);
/* The distance between the byte shares of a and b (dimensions, or entries, of the same shape): half
 * the sum of the absolute differences of the shares, 0 (same) to 1 (disjoint); 0 when either is empty. */
double rm_pattern_distance(const rm_pattern_t *a, const rm_pattern_t *b);

/* The text form of p (malloc'ed, NUL-terminated; the caller frees it), NULL on ENOMEM. */
char *rm_pattern_format(const rm_pattern_t *p, size_t *len);
/* Parses the text form; errors name source and line ("source:LINE: field 'x': ..."). Every number is
 * checked (finite, >= 0, within its range); edges are bounded by RM_PATTERN_MAX_EDGES and by what len
 * bytes can hold, before anything is allocated. Returns a new pattern or NULL. */
rm_pattern_t *rm_pattern_parse(const char *text, size_t len, const char *source, rm_error_t *err);

/* ---- per-user directory store (rm_pattern_dir.c) ---------------------------------------------- */

/* The per-user directory: $RANKMAP_LEARN_DIR, else $XDG_CACHE_HOME/rankmap, else $HOME/.cache/rankmap.
 * Writes it into buf. Returns 0, or -1 (ENOENT: none of them is set; ENAMETOOLONG). */
int rm_pattern_dir_default(char *buf, size_t len);
/* Checks (and with create, makes, mode 0700, parents too) a store directory: it must be a directory
 * owned by owner and not writable by others (group- or world-writable is refused). 0 or -1 (EPERM:
 * refused, naming the owner or the mode). */
int rm_pattern_dir_check(const char *dir, uid_t owner, int create, rm_error_t *err);
/* Reads the pattern of key k from dir. Returns 1 and *out (caller frees) when found; 0 when there is
 * none; -1 on error (unreadable, corrupt, truncated, too large: err names the file). The file's
 * modification time is refreshed (the LRU clock). */
int rm_pattern_dir_get(const char *dir, const rm_pattern_key_t *k, rm_pattern_t **out, rm_error_t *err);
/* Writes p into dir atomically (temporary file, fsync, rename). A corrupt file it replaces is kept
 * beside it as "<id>.pattern.bad". When max_bytes > 0, the least recently used patterns of the
 * directory are removed until the directory holds at most max_bytes; a pattern whose text alone is
 * larger than max_bytes is refused (errno EFBIG) before anything is written or removed.
 * 0 or -1 (the old file intact). */
int rm_pattern_dir_put(const char *dir, const rm_pattern_t *p, size_t max_bytes, rm_error_t *err);
/* Removes the least recently used patterns of dir (never the one with identifier keep, may be NULL)
 * until the directory holds at most max_bytes. Returns how many were removed, or -1. */
int rm_pattern_dir_evict(const char *dir, size_t max_bytes, const char *keep, rm_error_t *err);
/* Removes the pattern with identifier id (16 hex digits) or, with id "all", every pattern of dir.
 * Returns the number removed, or -1. */
int rm_pattern_dir_forget(const char *dir, const char *id, rm_error_t *err);
/* The patterns of dir, newest first: *out an array of *n patterns (caller frees each and the array).
 * Unreadable files are skipped and counted in *bad (may be NULL). 0 or -1. */
int rm_pattern_dir_list(const char *dir, rm_pattern_t ***out, size_t *n, size_t *bad, rm_error_t *err);

#endif
