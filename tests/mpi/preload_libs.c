/*
 * tests/mpi/preload_libs.c: what a rank with the rankmap library preloaded holds after its first topology
 * call, and whether the library's internals can be captured by the program's own symbols.
 *
 * Usage: preload_libs [REORDER]
 * One MPI_Cart_create (2D periodic grid, reorder given, default 1) on MPI_COMM_WORLD, timed. Every rank then
 * prints one line:
 *   rank=R first_ms=T rss_kb=K hwm_kb=H clash=C maps=a,b,...
 * first_ms: the call's time at this rank; rss_kb/hwm_kb: VmRSS and VmHWM from /proc/self/status; maps: which of
 * the watched libraries (scotch, ibnetdisc, ibmad, ibumad, udev, munge, hwloc, rankmap_local) /proc/self/maps
 * holds ("-" none); clash: how many times one of this program's own functions that share a name with a
 * function of Scotch or of the rankmap library's internals was called (built with -rdynamic, so that they are
 * in the program's dynamic symbol table, as an application linking its own copies would have them).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int clashed;

/* Same names as Scotch's (an application with its own Scotch), and as rankmap internals. Never called when
 * the library keeps to its own copies. */
int SCOTCH_graphInit(void *g);
int SCOTCH_archInit(void *a);
int SCOTCH_stratInit(void *s);
int SCOTCH_graphBuild(void *g, long a, long b, const long *c, const long *d, const long *e, const long *f, long g2,
		      const long *h, const long *i);
int map_compute(void *a, void *b, void *c, void *d);
int topo_cluster_create(void *a);
int SCOTCH_graphInit(void *g)
{
	(void)g;
	clashed++;
	return 1;
}
int SCOTCH_archInit(void *a)
{
	(void)a;
	clashed++;
	return 1;
}
int SCOTCH_stratInit(void *s)
{
	(void)s;
	clashed++;
	return 1;
}
int SCOTCH_graphBuild(void *g, long a, long b, const long *c, const long *d, const long *e, const long *f, long g2,
		      const long *h, const long *i)
{
	(void)g, (void)a, (void)b, (void)c, (void)d, (void)e, (void)f, (void)g2, (void)h, (void)i;
	clashed++;
	return 1;
}
int map_compute(void *a, void *b, void *c, void *d)
{
	(void)a, (void)b, (void)c, (void)d;
	clashed++;
	return -1;
}
int topo_cluster_create(void *a)
{
	(void)a;
	clashed++;
	return -1;
}

static long status_kb(const char *key)
{
	char line[256];
	long v = -1;
	size_t n = strlen(key);
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

static void maps(char *out, size_t len)
{
	static const char *const watch[] = { "libscotch", "libibnetdisc", "libibmad", "libibumad",
					     "libudev",   "libmunge",     "libhwloc", "librankmap_local" };
	int seen[sizeof(watch) / sizeof(watch[0])] = { 0 };
	char line[1024];
	FILE *f = fopen("/proc/self/maps", "r");

	*out = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *base = strrchr(line, '/');

		for (size_t i = 0; base && i < sizeof(watch) / sizeof(watch[0]); i++)
			if (strncmp(base + 1, watch[i], strlen(watch[i])) == 0)
				seen[i] = 1;
	}
	fclose(f);
	for (size_t i = 0; i < sizeof(watch) / sizeof(watch[0]); i++)
		if (seen[i])
			snprintf(out + strlen(out), len - strlen(out), "%s%s", *out ? "," : "", watch[i] + 3);
	if (!*out)
		snprintf(out, len, "-");
}

int main(int argc, char **argv)
{
	int reorder = argc > 1 ? atoi(argv[1]) : 1, size, rank, dims[2] = { 0, 0 }, periods[2] = { 1, 1 };
	MPI_Comm cart;
	char m[512];

	MPI_Init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Dims_create(size, 2, dims);
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();

	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, reorder, &cart);
	double t1 = MPI_Wtime();

	maps(m, sizeof(m));
	printf("rank=%d first_ms=%.3f rss_kb=%ld hwm_kb=%ld clash=%d maps=%s\n", rank, (t1 - t0) * 1e3,
	       status_kb("VmRSS"), status_kb("VmHWM"), clashed, m);
	fflush(stdout);
	if (cart != MPI_COMM_NULL)
		MPI_Comm_free(&cart);
	MPI_Finalize();
	return 0;
}
