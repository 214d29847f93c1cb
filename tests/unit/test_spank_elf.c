/*
 * tests/unit/test_spank_elf.c: the SPANK plugin's ELF reader and MPI detection (plugin/spank/spank_elf.c).
 *
 * Expected DT_NEEDED lists come from binutils' readelf (an independent reader) run on real system
 * binaries; malformed files (empty, text, truncated, corrupted headers) must fail cleanly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/harness.h"
#include "spank_elf.h"

#define MAXN 64

typedef struct names {
	int n;
	char s[MAXN][128];
} names_t;

static int collect(const char *name, void *arg)
{
	names_t *l = arg;
	if (l->n < MAXN)
		snprintf(l->s[l->n++], sizeof(l->s[0]), "%s", name);
	return 0;
}

/* DT_NEEDED of path according to readelf; -1 when readelf is missing. */
static int readelf_needed(const char *path, names_t *out)
{
	char cmd[512], line[512];
	FILE *p;

	out->n = 0;
	snprintf(cmd, sizeof(cmd), "readelf -d '%s' 2>/dev/null", path);
	if (!(p = popen(cmd, "r")))
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *a = strstr(line, "(NEEDED)"), *b, *e;
		if (!a || !(b = strchr(a, '[')) || !(e = strchr(b, ']')))
			continue;
		*e = '\0';
		snprintf(out->s[out->n++], sizeof(out->s[0]), "%s", b + 1);
	}
	return pclose(p) == 0 ? 0 : -1;
}

static void check_against_readelf(const char *path)
{
	names_t ours = { 0 }, ref = { 0 };
	rm_error_t err = { 0 };
	int rc;

	if (access(path, R_OK) != 0 || readelf_needed(path, &ref) < 0) {
		skip("%s: missing, or no readelf (make deps installs it)", path);
		return;
	}
	rc = rm_spank_elf_needed(path, collect, &ours, NULL, 0, &err);
	check(rc == 0, "%s: rm_spank_elf_needed returned %d (%s)", path, rc, err.text);
	check(ours.n == ref.n, "%s: %d entries, readelf says %d", path, ours.n, ref.n);
	for (int i = 0; i < ours.n && i < ref.n; i++)
		check(!strcmp(ours.s[i], ref.s[i]), "%s: entry %d is %s, readelf says %s", path, i, ours.s[i],
		      ref.s[i]);
}

static void test_sonames(void)
{
	check(rm_spank_mpi_from_soname("libmpi.so.40") == RM_SPANK_MPI_OPENMPI, "libmpi.so.40");
	check(rm_spank_mpi_from_soname("libmpi_mpifh.so.40") == RM_SPANK_MPI_OPENMPI, "libmpi_mpifh.so.40");
	check(rm_spank_mpi_from_soname("libmpich.so.12") == RM_SPANK_MPI_MPICH, "libmpich.so.12");
	check(rm_spank_mpi_from_soname("libmpichfort.so.12") == RM_SPANK_MPI_MPICH, "libmpichfort.so.12");
	check(rm_spank_mpi_from_soname("libmpi.so.12") == RM_SPANK_MPI_MPICH, "libmpi.so.12 is the MPICH ABI");
	check(rm_spank_mpi_from_soname("libc.so.6") == RM_SPANK_MPI_NONE, "libc");
	check(rm_spank_mpi_from_soname("libmpigood.so") == RM_SPANK_MPI_NONE, "libmpigood is not MPI");
	check(rm_spank_mpi_from_soname("libmpich") == RM_SPANK_MPI_NONE, "no .so");
	check(!strcmp(rm_spank_mpi_name(RM_SPANK_MPI_OPENMPI), "openmpi") &&
		      !strcmp(rm_spank_mpi_name(RM_SPANK_MPI_MPICH), "mpich"),
	      "names");
}

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(buf, 1, len, f);
		fclose(f);
	}
}

/* Copies the first len bytes of src to dst, then overwrites [off, off+n) with junk. */
static void corrupt_copy(const char *src, const char *dst, size_t len, size_t off, size_t n)
{
	unsigned char *buf = malloc(len);
	FILE *f = fopen(src, "rb");
	size_t got = f ? fread(buf, 1, len, f) : 0;

	if (f)
		fclose(f);
	for (size_t i = off; i < off + n && i < got; i++)
		buf[i] = 0xff;
	write_file(dst, buf, got);
	free(buf);
}

static void test_malformed(void)
{
	char dir[] = "/tmp/rankmap-spank-elf.XXXXXX", p[256];
	static const char *const names[] = { "empty", "text", "trunc", "phoff", "dyn", NULL };
	names_t l = { 0 };

	if (!mkdtemp(dir)) {
		fail("mkdtemp");
		return;
	}
	snprintf(p, sizeof(p), "%s/empty", dir);
	write_file(p, "", 0);
	snprintf(p, sizeof(p), "%s/text", dir);
	write_file(p, "#!/bin/sh\necho hi\n", 18);
	snprintf(p, sizeof(p), "%s/trunc", dir);
	corrupt_copy("/usr/bin/ompi_info", p, 100, 100, 0); /* header only */
	snprintf(p, sizeof(p), "%s/phoff", dir);
	corrupt_copy("/usr/bin/ompi_info", p, 1 << 20, 32, 8); /* e_phoff far away */
	snprintf(p, sizeof(p), "%s/dyn", dir);
	corrupt_copy("/usr/bin/ompi_info", p, 1 << 20, 64, 1024); /* program headers destroyed */
	for (int i = 0; names[i]; i++) {
		rm_error_t err = { 0 };
		int rc;
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		errno = 0;
		rc = rm_spank_elf_needed(p, collect, &l, NULL, 0, &err);
		check(rc == -1 && errno == ENOEXEC, "%s: rc %d errno %d", names[i], rc, errno);
		check(strstr(err.source, names[i]) != NULL, "%s: error names the file ('%s')", names[i], err.source);
		check(rm_spank_mpi_detect(p, NULL) == RM_SPANK_MPI_NONE, "%s: no MPI", names[i]);
		unlink(p);
	}
	check(rm_spank_elf_needed("/nonexistent/x", collect, &l, NULL, 0, NULL) == -1 && errno == ENOENT,
	      "missing file");
	rmdir(dir);
}

static void test_detect(void)
{
	check(rm_spank_mpi_detect("/usr/bin/ompi_info", NULL) == RM_SPANK_MPI_OPENMPI, "ompi_info is Open MPI");
	check(rm_spank_mpi_detect("/usr/bin/mpichversion", NULL) == RM_SPANK_MPI_MPICH, "mpichversion is MPICH");
	check(rm_spank_mpi_detect("/bin/ls", NULL) == RM_SPANK_MPI_NONE, "ls has no MPI");
	check(rm_spank_mpi_detect("/sbin/ldconfig", NULL) == RM_SPANK_MPI_NONE, "static ldconfig has no MPI");
}

static void test_which(void)
{
	char out[4096];

	check(rm_spank_which("ls", "/nonexistent:/bin:/usr/bin", out, sizeof(out)) == 0 && !strcmp(out, "/bin/ls"),
	      "ls found in /bin (%s)", out);
	check(rm_spank_which("./relative/prog", "/bin", out, sizeof(out)) == 0 && !strcmp(out, "./relative/prog"),
	      "a path with a slash is kept");
	check(rm_spank_which("no-such-program-xyz", "/bin:/usr/bin", out, sizeof(out)) == -1 && errno == ENOENT,
	      "missing program");
	check(rm_spank_which("", "/bin", out, sizeof(out)) == -1, "empty name");
	check(rm_spank_which("ls", "/bin", out, 4) == -1, "too small a buffer");
}

int main(void)
{
	test_sonames();
	check_against_readelf("/usr/bin/ompi_info");
	check_against_readelf("/usr/bin/mpichversion");
	check_against_readelf("/bin/ls");
	check_against_readelf("/usr/lib/x86_64-linux-gnu/libmpi_mpifh.so.40");
	check_against_readelf("/usr/sbin/slurmd");
	test_malformed();
	test_detect();
	test_which();
	return harness_done();
}
