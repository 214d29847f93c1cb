/*
 * common/rm_tmpfile.h: the temporary file of an atomic write (write it, then rename it over the
 * target). Each call makes a new name, so writers of one target never share a temporary file.
 *
 * Error rule: a file descriptor (>= 0) on success, -1 with errno set on failure. Nothing here prints.
 */
#ifndef RANKMAP_RM_TMPFILE_H
#define RANKMAP_RM_TMPFILE_H

#include <stddef.h>
#include <sys/types.h>

/* Creates a new file beside path (same directory, so rename() is atomic), named
 * "<dir>/.<base>.tmp.XXXXXX" with a fresh random suffix, opened O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC
 * | O_NOFOLLOW with mode (less the umask). tmp (tmplen bytes) receives the name. Returns the file
 * descriptor (the caller closes it and renames or unlinks the file), or -1 with errno set
 * (ENAMETOOLONG when the name does not fit in tmp). */
int rm_tmpfile_beside(const char *path, mode_t mode, char *tmp, size_t tmplen);

#endif
