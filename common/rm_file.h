/*
 * common/rm_file.h: the one way rankmap opens an input file.
 *
 * Every file a user, an admin or a job names (hwloc XML, fabric dumps, torus and cluster files,
 * patterns, SWF traces, node-name maps, configuration) is opened through rm_file_open(), which never
 * blocks and never reads without bound:
 *   - the path must name a regular file (after following symlinks): a FIFO, a socket, a device or a
 *     directory is refused at once, before anything is read (a FIFO is never opened for reading
 *     without O_NONBLOCK, so a FIFO without a writer cannot hang the caller);
 *   - its size must not exceed the cap of its kind (rm_file_limit); a file that grows past the cap
 *     while it is read is refused too (rm_file_read).
 * Each kind has a documented default cap, adjustable per process with rm_file_set_limit() or with the
 * environment variable RANKMAP_FILE_LIMIT_<KIND> (bytes, or with a K, M or G suffix), for example
 * RANKMAP_FILE_LIMIT_PATTERN=4G. Errors name the file: "q.mtx: not a regular file (a FIFO)".
 *
 * Error rule: 0 (or a valid fd / pointer) on success; -1 (or NULL) with errno set on failure, and the
 * caller's rm_error_t (may be NULL) filled with the path as source; the first error wins.
 */
#ifndef RANKMAP_RM_FILE_H
#define RANKMAP_RM_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "rm_error.h"

typedef enum rm_file_kind {
	RM_FILE_HWLOC,   /* hwloc XML and XML diffs            default 64 MiB */
	RM_FILE_IB,      /* ibnetdiscover output, fabric cache default 1 GiB  */
	RM_FILE_NAMEMAP, /* node-name maps                     default 64 MiB */
	RM_FILE_PATTERN, /* communication patterns (.mtx, dense) default 2 GiB */
	RM_FILE_SWF,     /* workload traces                    default 1 GiB  */
	RM_FILE_CONFIG,  /* cluster file, rankmapd config, state default 1 MiB */
	RM_FILE_PERM,    /* permutation files                  default 256 MiB */
	RM_FILE_TORUS,   /* torus files (with a [hosts] table) default 64 MiB */
	RM_FILE_KINDS
} rm_file_kind_t;

/* Lower-case name of a kind ("hwloc", "ib", "namemap", "pattern", "swf", "config", "perm", "torus"). */
const char *rm_file_kind_name(rm_file_kind_t kind);

/* The size cap of a kind in bytes: the value set with rm_file_set_limit(), else the environment's
 * RANKMAP_FILE_LIMIT_<KIND> when it parses, else the default above. */
size_t rm_file_limit(rm_file_kind_t kind);

/* Prints the table of caps (kind, files, default, environment variable, value in effect), one line a
 * kind, each line starting with indent: for --help texts. */
void rm_file_print_limits(FILE *f, const char *indent);

/* Sets the cap of a kind for this process (bytes > 0). Returns 0, or -1 (EINVAL). Not thread-safe
 * against concurrent opens: call it at start-up. */
int rm_file_set_limit(rm_file_kind_t kind, size_t bytes);

/* Parses a size: a decimal number of bytes with an optional K, M or G suffix (powers of 1024).
 * Returns 0 and sets *out, or -1 (EINVAL, ERANGE). */
int rm_file_parse_size(const char *s, size_t *out);

/* Opens path read-only for an input of the given kind: regular file, size within the cap, O_CLOEXEC,
 * blocking mode restored after the checks. Returns the fd (the caller closes it), or -1. *size (may be
 * NULL) receives the file's size. */
int rm_file_open(const char *path, rm_file_kind_t kind, size_t *size, rm_error_t *err);

/* rm_file_open() as a stdio stream (mode "r", seekable). Reading never goes past the kind's cap: a
 * file that grows past it while it is read makes the stream fail (ferror set, errno EFBIG), which
 * rm_file_stream_error() reports. *size (may be NULL) receives the file's size at open. Returns the
 * stream (the caller fcloses it, which closes the file), or NULL. */
FILE *rm_file_fopen(const char *path, rm_file_kind_t kind, size_t *size, rm_error_t *err);

/* After a read loop on a stream of rm_file_fopen(): returns 0 when the stream has no error, else -1
 * with err naming path ("file too large: it grew past the limit ..." or "read error: ..."). Call it
 * before anything that may change errno. */
int rm_file_stream_error(FILE *f, const char *path, rm_file_kind_t kind, rm_error_t *err);

/* Reads a whole input file into a new buffer, NUL-terminated (the NUL is not counted in *len). Refuses
 * a file that grows past the cap while it is read. Returns the buffer (the caller frees it), or NULL. */
char *rm_file_read(const char *path, rm_file_kind_t kind, size_t *len, rm_error_t *err);

/* Checks that path names a directory (after following symlinks) without opening anything in it.
 * Returns 0, or -1 (ENOTDIR, or stat's errno) with err naming the path. */
int rm_dir_check(const char *path, rm_error_t *err);

#endif
