/*
 * common/rm_pattern_dir.c: the directory store of learned patterns: one file "<id>.pattern" per key,
 * read through rm_file (regular file, the pattern size cap), written atomically (rm_tmpfile, fsync,
 * rename). The modification time of a file is its LRU clock: refreshed at each read and write.
 * Used by the MPI library (per-user directory) and by rankmapd (one directory per uid in its state).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rm_file.h"
#include "rm_pattern.h"
#include "rm_tmpfile.h"

int rm_pattern_dir_default(char *buf, size_t len)
{
	const char *v = getenv("RANKMAP_LEARN_DIR"), *sub = "";
	int n;

	if (!v || !*v) {
		v = getenv("XDG_CACHE_HOME"), sub = "/rankmap";
		if (!v || !*v)
			v = getenv("HOME"), sub = "/.cache/rankmap";
		if (!v || !*v) {
			errno = ENOENT;
			return -1;
		}
	}
	n = snprintf(buf, len, "%s%s", v, sub);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* mkdir -p with mode 0700 for the parts that do not exist. */
static int make_dirs(const char *dir)
{
	char p[4096];
	size_t n = strlen(dir);

	if (n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		char c = p[i];

		p[i] = 0;
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			return -1;
		p[i] = c;
	}
	return 0;
}

int rm_pattern_dir_check(const char *dir, uid_t owner, int create, rm_error_t *err)
{
	struct stat st;

	if (stat(dir, &st) != 0) {
		if (errno != ENOENT || !create || make_dirs(dir) != 0 || stat(dir, &st) != 0)
			return rm_error_set(err, dir, 0, 0, "cannot use the pattern directory: %s", strerror(errno));
	}
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return rm_error_set(err, dir, 0, 0, "not a directory");
	}
	if (st.st_uid != owner) {
		errno = EPERM;
		return rm_error_set(err, dir, 0, 0, "refused: owned by uid %u, not by uid %u", (unsigned)st.st_uid,
				    (unsigned)owner);
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		errno = EPERM;
		return rm_error_set(err, dir, 0, 0, "refused: writable by %s (mode %03o)",
				    st.st_mode & S_IWOTH ? "everyone" : "its group", (unsigned)(st.st_mode & 0777));
	}
	return 0;
}

static int file_of(const char *dir, const char *id, const char *suffix, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s.pattern%s", dir, id, suffix);

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int rm_pattern_dir_get(const char *dir, const rm_pattern_key_t *k, rm_pattern_t **out, rm_error_t *err)
{
	char id[17], path[4200];
	size_t len = 0;
	char *text;
	rm_pattern_t *p;

	*out = NULL;
	rm_pattern_key_id(k, id);
	if (file_of(dir, id, "", path, sizeof(path)) != 0)
		return rm_error_set(err, dir, 0, 0, "path too long");
	if (access(path, F_OK) != 0 && errno == ENOENT)
		return 0;
	if (!(text = rm_file_read(path, RM_FILE_PATTERN, &len, err)))
		return -1;
	p = rm_pattern_parse(text, len, path, err);
	free(text);
	if (!p)
		return -1;
	if (!rm_pattern_key_equal(&p->key, k)) { /* another key with the same identifier: not ours */
		rm_pattern_free(p);
		return 0;
	}
	utimensat(AT_FDCWD, path, NULL, 0); /* LRU clock; a read-only directory is fine */
	*out = p;
	return 1;
}

/* Keeps an unreadable file that is about to be replaced, as <id>.pattern.bad. */
static void keep_bad(const char *dir, const char *id, const char *path)
{
	char badp[4200];
	size_t len = 0;
	char *text = rm_file_read(path, RM_FILE_PATTERN, &len, NULL);
	rm_pattern_t *p = text ? rm_pattern_parse(text, len, path, NULL) : NULL;

	if (!p && access(path, F_OK) == 0 && file_of(dir, id, ".bad", badp, sizeof(badp)) == 0)
		rename(path, badp);
	rm_pattern_free(p);
	free(text);
}

int rm_pattern_dir_put(const char *dir, const rm_pattern_t *p, size_t max_bytes, rm_error_t *err)
{
	char id[17], path[4200], tmp[4300];
	size_t len = 0, off = 0;
	char *text = rm_pattern_format(p, &len);
	int fd, rc = 0;

	if (!text)
		return rm_error_set(err, dir, 0, 0, "out of memory");
	rm_pattern_key_id(&p->key, id);
	if (max_bytes > 0 && len > max_bytes) { /* would evict everything else and still not fit: refused */
		free(text);
		errno = EFBIG;
		return rm_error_set(err, dir, 0, 0,
				    "pattern %s is %zu bytes, more than the %zu bytes this directory may hold: not "
				    "stored (the patterns kept are unchanged)",
				    id, len, max_bytes);
	}
	if (file_of(dir, id, "", path, sizeof(path)) != 0 ||
	    (fd = rm_tmpfile_beside(path, 0600, tmp, sizeof(tmp))) < 0) {
		rc = rm_error_set(err, dir, 0, 0, "cannot create a file: %s", strerror(errno));
		free(text);
		return rc;
	}
	while (off < len && rc == 0) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			rc = rm_error_set(err, tmp, 0, 0, "write failed: %s", w < 0 ? strerror(errno) : "no space");
		else
			off += (size_t)w;
	}
	if (rc == 0 && fsync(fd) != 0)
		rc = rm_error_set(err, tmp, 0, 0, "fsync failed: %s", strerror(errno));
	if (close(fd) != 0 && rc == 0)
		rc = rm_error_set(err, tmp, 0, 0, "close failed: %s", strerror(errno));
	if (rc == 0)
		keep_bad(dir, id, path);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = rm_error_set(err, path, 0, 0, "rename failed: %s", strerror(errno));
	if (rc != 0)
		unlink(tmp);
	free(text);
	if (rc == 0 && max_bytes > 0) {
		rm_error_t ignore = { 0 };

		rm_pattern_dir_evict(dir, max_bytes, id, &ignore);
	}
	return rc;
}

/* Is name "<16 hex>.pattern"? Copies the id into id. */
static int pattern_name(const char *name, char id[17])
{
	if (strlen(name) != 24 || strcmp(name + 16, ".pattern") || strspn(name, "0123456789abcdef") != 16)
		return 0;
	memcpy(id, name, 16);
	id[16] = 0;
	return 1;
}

typedef struct entry {
	char id[17];
	struct timespec mtime;
	off_t size;
} entry_t;

static int by_age(const void *a, const void *b)
{
	const entry_t *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return (x->mtime.tv_nsec > y->mtime.tv_nsec) - (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

/* The pattern files of dir (array, caller frees), oldest first. */
static entry_t *scan(const char *dir, size_t *n, rm_error_t *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	entry_t *v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d)
		return rm_error_set(err, dir, 0, 0, "cannot read the directory: %s", strerror(errno)), NULL;
	while ((de = readdir(d))) {
		struct stat st;
		char id[17];

		if (!pattern_name(de->d_name, id) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (*n == cap) {
			entry_t *nv = realloc(v, sizeof(*v) * (cap = cap ? 2 * cap : 16));

			if (!nv)
				break;
			v = nv;
		}
		memcpy(v[*n].id, id, 17);
		v[*n].mtime = st.st_mtim, v[*n].size = st.st_size;
		++*n;
	}
	closedir(d);
	if (!v)
		v = calloc(1, sizeof(*v));
	if (v)
		qsort(v, *n, sizeof(*v), by_age);
	return v;
}

/* Removes the oldest patterns (never keep) until dir holds at most max_bytes. Returns how many. */
int rm_pattern_dir_evict(const char *dir, size_t max_bytes, const char *keep, rm_error_t *err)
{
	size_t n = 0, total = 0;
	entry_t *v = scan(dir, &n, err);
	int removed = 0;
	char path[4200];

	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++)
		total += (size_t)v[i].size;
	for (size_t i = 0; i < n && total > max_bytes; i++) {
		if (keep && !strcmp(v[i].id, keep))
			continue;
		if (file_of(dir, v[i].id, "", path, sizeof(path)) == 0 && unlink(path) == 0)
			total -= (size_t)v[i].size, removed++;
	}
	free(v);
	return removed;
}

int rm_pattern_dir_forget(const char *dir, const char *id, rm_error_t *err)
{
	size_t n = 0;
	entry_t *v = scan(dir, &n, err);
	int removed = 0;
	char path[4200];

	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++)
		if ((!strcmp(id, "all") || !strcmp(v[i].id, id)) &&
		    file_of(dir, v[i].id, "", path, sizeof(path)) == 0 && unlink(path) == 0)
			removed++;
	free(v);
	return removed;
}

int rm_pattern_dir_list(const char *dir, rm_pattern_t ***out, size_t *n, size_t *bad, rm_error_t *err)
{
	size_t m = 0;
	entry_t *v = scan(dir, &m, err);
	rm_pattern_t **ps;
	char path[4200];

	*out = NULL, *n = 0;
	if (bad)
		*bad = 0;
	if (!v)
		return -1;
	if (!(ps = calloc(m + 1, sizeof(*ps)))) {
		free(v);
		return rm_error_set(err, dir, 0, 0, "out of memory");
	}
	for (size_t i = m; i-- > 0;) { /* newest first */
		size_t len = 0;
		char *text = file_of(dir, v[i].id, "", path, sizeof(path)) == 0
				     ? rm_file_read(path, RM_FILE_PATTERN, &len, NULL)
				     : NULL;
		rm_pattern_t *p = text ? rm_pattern_parse(text, len, path, NULL) : NULL;

		free(text);
		if (p)
			ps[(*n)++] = p;
		else if (bad)
			++*bad;
	}
	free(v);
	*out = ps;
	return 0;
}
