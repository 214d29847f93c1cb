/*
 * plugin/spank/spank_elf.h: which MPI a program is linked with, read from its ELF dynamic section.
 *
 * Pure C, no Slurm: the SPANK plugin calls it in task_init, the unit tests call it on real binaries.
 * Error rule: 0 on success, -1 with errno set on failure; the rm_error_t (may be NULL) names the file.
 */
#ifndef RANKMAP_SPANK_ELF_H
#define RANKMAP_SPANK_ELF_H

#include <stddef.h>

#include "rm_error.h"

typedef enum rm_spank_mpi {
	RM_SPANK_MPI_NONE = 0,
	RM_SPANK_MPI_OPENMPI, /* libmpi.so.40 (and other libmpi.so.N of Open MPI) */
	RM_SPANK_MPI_MPICH    /* libmpich.so.12, or the MPICH ABI's libmpi.so.12 */
} rm_spank_mpi_t;

/* Calls fn(name, arg) for each DT_NEEDED entry of the ELF file at path (32/64-bit, either byte order),
 * in file order; stops early when fn returns non-zero and returns that value. Also stores the
 * DT_RUNPATH (or DT_RPATH) string in runpath (size runpath_len; "" if none) when runpath is non-NULL.
 * Returns 0 after the last entry, fn's non-zero value, or -1 (ENOEXEC: not ELF or no dynamic section
 * (static), EIO/ENOENT...: unreadable) with err naming the file. */
int rm_spank_elf_needed(const char *path, int (*fn)(const char *name, void *arg), void *arg, char *runpath,
			size_t runpath_len, rm_error_t *err);

/* Classifies one shared-object name (a DT_NEEDED entry). Returns the MPI it belongs to, or NONE. */
rm_spank_mpi_t rm_spank_mpi_from_soname(const char *soname);

/* Detects the MPI of the program at path: its own DT_NEEDED entries first, then one level down (the
 * direct dependencies, found through the program's RUNPATH/RPATH with $ORIGIN, the colon-separated
 * ld_library_path (may be NULL) and the system library directories). Returns the MPI, NONE for programs
 * without MPI, statically linked programs and scripts; never fails. */
rm_spank_mpi_t rm_spank_mpi_detect(const char *path, const char *ld_library_path);

/* Finds the program a task will execute: argv0 containing a slash is taken as is (relative to the
 * current directory), otherwise it is searched in the colon-separated path_env (NULL: the default
 * /usr/local/bin:/usr/bin:/bin) for an executable regular file. Writes the path into out. Returns 0,
 * or -1 (ENOENT, ENAMETOOLONG). */
int rm_spank_which(const char *argv0, const char *path_env, char *out, size_t len);

/* "openmpi", "mpich" or "none". Static string. */
const char *rm_spank_mpi_name(rm_spank_mpi_t mpi);

#endif
