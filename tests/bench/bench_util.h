/* tests/bench/bench_util.h: pieces shared by the benchmarks (header-only: each bench_*.c is one program).
 *
 *   bench_now_s()                 CLOCK_MONOTONIC in seconds.
 *   bench_slurp(path, &len)       a file's content, NUL-terminated (malloc'd), its length in len; NULL
 *                                 when it cannot be read or is empty.
 *   bench_cpu_us(pid, children)   CPU time (user + system) of a process, in microseconds, from
 *                                 /proc/PID/stat; with children, plus that of the children it reaped
 *                                 (cutime, cstime). 0 when unreadable.
 *   bench_write_fabric(path, nhosts, per_leaf, uplinks, title)
 *                                 writes a two-level fat tree in ibnetdiscover topology-file form:
 *                                 ceil(nhosts / per_leaf) leaf switches, each with per_leaf hosts and one
 *                                 link to each of the uplinks spines; every host's HCA is named
 *                                 "nNNNNN HCA-1" (so registrations join the fabric by name). title, when
 *                                 not NULL, goes into a comment at the top. 0, or -1 when it cannot
 *                                 write (fclose's result otherwise).
 */
#ifndef RANKMAP_BENCH_UTIL_H
#define RANKMAP_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline char *bench_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		buf[n] = '\0';
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	return buf;
}

static inline double bench_cpu_us(pid_t pid, int children)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	long cut = 0, cst = 0;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	if (!p)
		return 0;
	n = sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %ld %ld", &ut, &st, &cut, &cst);
	if (n < 2 || (children && n != 4))
		return 0;
	if (!children)
		cut = cst = 0;
	return (double)(ut + st + (unsigned long)cut + (unsigned long)cst) * 1e6 / (double)sysconf(_SC_CLK_TCK);
}

static inline unsigned long bench_sw_guid(int spine, int i)
{
	return (spine ? 0x5000000UL : 0x1000000UL) + (unsigned long)i;
}

static inline int bench_write_fabric(const char *path, int nhosts, int per_leaf, int uplinks, const char *title)
{
	int nleaves = (nhosts + per_leaf - 1) / per_leaf, s, l, p, h;
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	if (title)
		fprintf(f, "#\n# Topology file: %s\n#\n\n", title);
	for (s = 0; s < uplinks; s++) {
		fprintf(f,
			"switchguid=0x%lx(%lx)\nSwitch\t%d \"S-%016lx\"\t\t# \"spine-%d\" enhanced port 0 lid %d lmc "
			"0\n",
			bench_sw_guid(1, s), bench_sw_guid(1, s), nleaves, bench_sw_guid(1, s), s, 1 + s);
		for (l = 0; l < nleaves; l++)
			fprintf(f, "[%d]\t\"S-%016lx\"[%d]\t\t# \"leaf-%d\" lid %d 4xHDR\n", l + 1, bench_sw_guid(0, l),
				per_leaf + s + 1, l, 100 + l);
		fputc('\n', f);
	}
	for (l = 0; l < nleaves; l++) {
		fprintf(f, "switchguid=0x%lx(%lx)\nSwitch\t%d \"S-%016lx\"\t\t# \"leaf-%d\" base port 0 lid %d lmc 0\n",
			bench_sw_guid(0, l), bench_sw_guid(0, l), per_leaf + uplinks, bench_sw_guid(0, l), l, 100 + l);
		for (p = 0; p < per_leaf && (h = l * per_leaf + p) < nhosts; p++)
			fprintf(f, "[%d]\t\"H-%016x\"[1](%x) \t\t# \"n%05d HCA-1\" lid %d 4xHDR\n", p + 1, 0x100000 + h,
				0x100000 + h, h, 1000 + h);
		for (s = 0; s < uplinks; s++)
			fprintf(f, "[%d]\t\"S-%016lx\"[%d]\t\t# \"spine-%d\" lid %d 4xHDR\n", per_leaf + s + 1,
				bench_sw_guid(1, s), l + 1, s, 1 + s);
		fputc('\n', f);
	}
	for (h = 0; h < nhosts; h++)
		fprintf(f,
			"caguid=0x%x\nCa\t1 \"H-%016x\"\t\t# \"n%05d HCA-1\"\n[1](%x) \t\"S-%016lx\"[%d]\t\t# lid %d "
			"lmc 0 \"leaf-%d\" lid %d 4xHDR\n\n",
			0x100000 + h, 0x100000 + h, h, 0x100000 + h, bench_sw_guid(0, h / per_leaf), h % per_leaf + 1,
			1000 + h, h / per_leaf, 100 + h / per_leaf);
	return fclose(f);
}

#endif
