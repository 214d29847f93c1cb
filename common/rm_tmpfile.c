/* common/rm_tmpfile.c: unique temporary files for atomic writes (see rm_tmpfile.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rm_tmpfile.h"

/* A 64-bit mix (splitmix64's finaliser) of the clock, the pid, the thread's stack and a counter. */
static uint64_t next_random(void)
{
	static uint64_t counter;
	struct timespec ts;
	uint64_t x;

	clock_gettime(CLOCK_REALTIME, &ts);
	x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)&ts ^
	    (__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ULL);
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

int rm_tmpfile_beside(const char *path, mode_t mode, char *tmp, size_t tmplen)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0, n, i, try, fd;
	uint64_t r;

	for (try = 0; try < 100; try++) {
		n = snprintf(tmp, tmplen, "%.*s.%s.tmp.XXXXXX", dirlen, path, path + dirlen);
		if (n < 0 || (size_t)n >= tmplen) {
			errno = ENAMETOOLONG;
			return -1;
		}
		for (r = next_random(), i = n - 6; i < n; i++, r /= 62)
			tmp[i] = chars[r % 62];
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1; /* errno EEXIST */
}
