/*
 * tests/fuzz/fuzz_util.h: helpers shared by the libFuzzer targets of tests/fuzz/fuzz_*.c.
 *
 * Most of rankmap's parsers take a path: fz_path() writes the input to one memfd per process (rewritten
 * at every execution) and returns "/proc/self/fd/N", which the parsers open like any file.
 * fz_dir() is a private temporary directory for targets whose parsers resolve paths relative to the
 * file (cluster files, hwloc diffs); it lives under $TMPDIR and is removed at exit. fz_data() finds
 * tests/data (FUZZ_DATA, else ./tests/data; the targets are run from the repository top).
 * Nothing here hides a failure: a setup error aborts, so that a broken harness is never "no crashes".
 */
#ifndef RANKMAP_FUZZ_UTIL_H
#define RANKMAP_FUZZ_UTIL_H

#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static inline void fz_die(const char *what)
{
	fprintf(stderr, "fuzz harness: %s: %s\n", what, strerror(errno));
	abort();
}

/* Writes data to the process's memfd and returns its path (static buffer). */
static inline const char *fz_path(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	size_t off = 0;

	if (fd < 0) {
		if ((fd = memfd_create("rankmap-fuzz", 0)) < 0)
			fz_die("memfd_create");
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0)
		fz_die("ftruncate");
	while (off < size) {
		ssize_t n = pwrite(fd, data + off, size - off, (off_t)off);
		if (n <= 0)
			fz_die("pwrite");
		off += (size_t)n;
	}
	return path;
}

/* A NUL-terminated malloc'ed copy of the input (caller frees). */
static inline char *fz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		fz_die("malloc");
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/* Writes data to dir/name (replacing it). */
static inline void fz_write(const char *dir, const char *name, const void *data, size_t size)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "w")) || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		fz_die(path);
}

static char fz_tmpdir[4096];

static inline int fz_rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(p);
}

static inline void fz_cleanup(void)
{
	if (fz_tmpdir[0])
		nftw(fz_tmpdir, fz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The process's private temporary directory (created on first use, removed at exit). */
static inline const char *fz_dir(void)
{
	const char *t = getenv("TMPDIR");

	if (!fz_tmpdir[0]) {
		snprintf(fz_tmpdir, sizeof(fz_tmpdir), "%s/rankmap-fuzz.XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(fz_tmpdir))
			fz_die("mkdtemp");
		atexit(fz_cleanup);
	}
	return fz_tmpdir;
}

/* Absolute path of tests/data (static buffer). */
static inline const char *fz_data(void)
{
	static char path[4096];
	const char *d = getenv("FUZZ_DATA");

	if (!path[0]) {
		if (d && *d)
			snprintf(path, sizeof(path), "%s", d);
		else if (!realpath("tests/data", path))
			fz_die("tests/data (run from the repository top or set FUZZ_DATA)");
	}
	return path;
}

#endif
