/*
 * common/rm_file.c: input files opened without blocking and read within a size cap (see rm_file.h).
 */
#define _GNU_SOURCE /* fopencookie */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "rm_file.h"

#define MiB ((size_t)1 << 20)

static const struct {
	const char *name, *env, *what;
	size_t def;
} kinds[RM_FILE_KINDS] = {
	[RM_FILE_HWLOC] = { "hwloc", "RANKMAP_FILE_LIMIT_HWLOC", "hwloc XML, diffs, registrations", 64 * MiB },
	[RM_FILE_IB] = { "ib", "RANKMAP_FILE_LIMIT_IB", "ibnetdiscover output, fabric caches", 1024 * MiB },
	[RM_FILE_NAMEMAP] = { "namemap", "RANKMAP_FILE_LIMIT_NAMEMAP", "node-name maps", 64 * MiB },
	[RM_FILE_PATTERN] = { "pattern", "RANKMAP_FILE_LIMIT_PATTERN", "patterns (.mtx, dense)", 2048 * MiB },
	[RM_FILE_SWF] = { "swf", "RANKMAP_FILE_LIMIT_SWF", "SWF workload traces", 1024 * MiB },
	[RM_FILE_CONFIG] = { "config", "RANKMAP_FILE_LIMIT_CONFIG", "cluster files, rankmapd.conf, state", 1 * MiB },
	[RM_FILE_PERM] = { "perm", "RANKMAP_FILE_LIMIT_PERM", "permutation files", 256 * MiB },
	[RM_FILE_TORUS] = { "torus", "RANKMAP_FILE_LIMIT_TORUS", "torus files", 64 * MiB },
};

static size_t set_limits[RM_FILE_KINDS];

const char *rm_file_kind_name(rm_file_kind_t kind)
{
	return (unsigned)kind < RM_FILE_KINDS ? kinds[kind].name : "file";
}

int rm_file_parse_size(const char *s, size_t *out)
{
	unsigned long long v, mult = 1;
	char *end;

	if (!s || !isdigit((unsigned char)*s)) {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k':
	case 'K': mult = 1ULL << 10, end++; break;
	case 'm':
	case 'M': mult = 1ULL << 20, end++; break;
	case 'g':
	case 'G': mult = 1ULL << 30, end++; break;
	default: break;
	}
	if (*end || v == 0) {
		errno = EINVAL;
		return -1;
	}
	if (v > SIZE_MAX / mult) {
		errno = ERANGE;
		return -1;
	}
	*out = (size_t)(v * mult);
	return 0;
}

size_t rm_file_limit(rm_file_kind_t kind)
{
	size_t v;
	const char *e;

	if ((unsigned)kind >= RM_FILE_KINDS)
		return 0;
	if (set_limits[kind])
		return set_limits[kind];
	e = getenv(kinds[kind].env);
	if (e && rm_file_parse_size(e, &v) == 0)
		return v;
	return kinds[kind].def;
}

/* "64M", "1G": a size in the largest unit that divides it. */
static const char *size_text(size_t v, char *buf, size_t len)
{
	if (v % (1u << 30) == 0)
		snprintf(buf, len, "%zuG", v >> 30);
	else if (v % (1u << 20) == 0)
		snprintf(buf, len, "%zuM", v >> 20);
	else if (v % (1u << 10) == 0)
		snprintf(buf, len, "%zuK", v >> 10);
	else
		snprintf(buf, len, "%zu", v);
	return buf;
}

void rm_file_print_limits(FILE *f, const char *indent)
{
	char d[32], now[32];
	int k;

	for (k = 0; k < RM_FILE_KINDS; k++)
		fprintf(f, "%s%-27s %-36s default %-5s (now %s)\n", indent, kinds[k].env, kinds[k].what,
			size_text(kinds[k].def, d, sizeof(d)),
			size_text(rm_file_limit((rm_file_kind_t)k), now, sizeof(now)));
}

int rm_file_set_limit(rm_file_kind_t kind, size_t bytes)
{
	if ((unsigned)kind >= RM_FILE_KINDS || bytes == 0) {
		errno = EINVAL;
		return -1;
	}
	set_limits[kind] = bytes;
	return 0;
}

static const char *type_name(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISDIR(m))
		return "a directory";
	return "not a plain file";
}

/* Refuses anything but a regular file of at most the kind's cap. */
static int check_stat(const char *path, const struct stat *st, rm_file_kind_t kind, rm_error_t *err)
{
	size_t cap = rm_file_limit(kind);

	if (!S_ISREG(st->st_mode)) {
		errno = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
		return rm_error_set(err, path, 0, 0, "not a regular file (%s)", type_name(st->st_mode));
	}
	if ((unsigned long long)st->st_size > cap) {
		errno = EFBIG;
		return rm_error_set(err, path, 0, 0,
				    "file too large: %lld bytes, the limit for %s files is %zu (RANKMAP_FILE_LIMIT_%s)",
				    (long long)st->st_size, kinds[kind].name, cap, kinds[kind].env + 19);
	}
	return 0;
}

int rm_file_open(const char *path, rm_file_kind_t kind, size_t *size, rm_error_t *err)
{
	struct stat st;
	int fd, e, fl;

	if (!path || !*path || (unsigned)kind >= RM_FILE_KINDS) {
		errno = EINVAL;
		return rm_error_set(err, path ? path : "(null)", 0, 0, "no file name");
	}
	/* stat first: a FIFO or a device is refused without being opened at all */
	if (stat(path, &st) < 0) {
		e = errno;
		rm_error_set(err, path, 0, 0, "cannot open: %s", strerror(e));
		errno = e;
		return -1;
	}
	if (check_stat(path, &st, kind, err) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		e = errno;
		rm_error_set(err, path, 0, 0, "cannot open: %s", strerror(e));
		errno = e;
		return -1;
	}
	/* the file may have been replaced between stat and open: check what was opened */
	if (fstat(fd, &st) < 0 || check_stat(path, &st, kind, err) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (size)
		*size = (size_t)st.st_size;
	return fd;
}

/* A stream of rm_file_fopen(): the fd, and how far it may be read. */
struct capped {
	int fd;
	unsigned long long pos, cap;
};

static ssize_t capped_read(void *cookie, char *buf, size_t n)
{
	struct capped *c = cookie;
	ssize_t r;

	if (c->pos > c->cap) {
		errno = EFBIG;
		return -1;
	}
	if (n > c->cap + 1 - c->pos) /* one byte past the cap tells "grew too large" from "exactly at it" */
		n = (size_t)(c->cap + 1 - c->pos);
	do
		r = read(c->fd, buf, n);
	while (r < 0 && errno == EINTR);
	if (r > 0)
		c->pos += (unsigned long long)r;
	if (c->pos > c->cap) {
		errno = EFBIG;
		return -1;
	}
	return r;
}

static int capped_seek(void *cookie, off64_t *off, int whence)
{
	struct capped *c = cookie;
	off_t r = lseek(c->fd, (off_t)*off, whence);

	if (r < 0)
		return -1;
	*off = r;
	c->pos = (unsigned long long)r;
	return 0;
}

static int capped_close(void *cookie)
{
	struct capped *c = cookie;
	int r = close(c->fd);

	free(c);
	return r;
}

FILE *rm_file_fopen(const char *path, rm_file_kind_t kind, size_t *size, rm_error_t *err)
{
	static const cookie_io_functions_t io = { .read = capped_read, .seek = capped_seek, .close = capped_close };
	struct capped *c;
	FILE *f = NULL;
	int fd = rm_file_open(path, kind, size, err), e;

	if (fd < 0)
		return NULL;
	if ((c = malloc(sizeof(*c)))) {
		*c = (struct capped){ .fd = fd, .pos = 0, .cap = rm_file_limit(kind) };
		f = fopencookie(c, "r", io);
	}
	if (!f) {
		e = c ? errno : ENOMEM;
		free(c);
		close(fd);
		rm_error_set(err, path, 0, 0, "%s", strerror(e));
		errno = e;
	}
	return f;
}

int rm_file_stream_error(FILE *f, const char *path, rm_file_kind_t kind, rm_error_t *err)
{
	int e = errno;

	if (!ferror(f))
		return 0;
	if (e == EFBIG)
		rm_error_set(err, path, 0, 0, "file too large: it grew past the limit for %s files (%zu bytes)",
			     rm_file_kind_name(kind), rm_file_limit(kind));
	else
		rm_error_set(err, path, 0, 0, "read error: %s", strerror(e ? e : EIO));
	errno = e ? e : EIO;
	return -1;
}

/* Reads fd to its end into *buf (grown as needed, never past cap + 1 bytes). Returns the length, or -1. */
static ssize_t read_all(int fd, char **buf, size_t *cap_buf, size_t cap)
{
	size_t len = 0;

	for (;;) {
		ssize_t r;

		if (len + 1 >= *cap_buf) {
			size_t nc = *cap_buf * 2;
			char *nb;

			if (nc > cap + 2)
				nc = cap + 2;
			if (nc <= *cap_buf) { /* at the cap and still reading: too large */
				errno = EFBIG;
				return -1;
			}
			nb = realloc(*buf, nc);
			if (!nb)
				return -1;
			*buf = nb, *cap_buf = nc;
		}
		r = read(fd, *buf + len, *cap_buf - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return (ssize_t)len;
		len += (size_t)r;
		if (len > cap) {
			errno = EFBIG;
			return -1;
		}
	}
}

char *rm_file_read(const char *path, rm_file_kind_t kind, size_t *len, rm_error_t *err)
{
	size_t size = 0, cap = rm_file_limit(kind), bsize;
	char *buf;
	ssize_t n;
	int fd = rm_file_open(path, kind, &size, err), e;

	if (fd < 0)
		return NULL;
	bsize = size + 1 < 4096 ? 4096 : size + 2;
	buf = malloc(bsize);
	n = buf ? read_all(fd, &buf, &bsize, cap) : -1;
	e = errno;
	close(fd);
	if (n < 0) {
		free(buf);
		if (e == EFBIG)
			rm_error_set(err, path, 0, 0, "file too large: it grew past the limit for %s files (%zu bytes)",
				     kinds[kind].name, cap);
		else
			rm_error_set(err, path, 0, 0, "%s", buf ? strerror(e) : "out of memory");
		errno = e;
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = (size_t)n;
	return buf;
}

int rm_dir_check(const char *path, rm_error_t *err)
{
	struct stat st;
	int e;

	if (!path || !*path) {
		errno = EINVAL;
		return rm_error_set(err, "(null)", 0, 0, "no directory name");
	}
	if (stat(path, &st) < 0) {
		e = errno;
		rm_error_set(err, path, 0, 0, "cannot open: %s", strerror(e));
		errno = e;
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return rm_error_set(err, path, 0, 0, "not a directory (%s)",
				    S_ISREG(st.st_mode) ? "a regular file" : type_name(st.st_mode));
	}
	return 0;
}
