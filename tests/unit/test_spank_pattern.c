/*
 * tests/unit/test_spank_pattern.c: the --rankmap-pattern read of slurmstepd (plugin/spank/spank_pattern.c)
 * and the step's path resolution (spank_path_resolve).
 *
 * The edges are checked against the pattern file the test writes (not against the parser's output);
 * a FIFO and a symlink to /dev/zero must be refused at once; a file the job's user may not read must be
 * refused even though this test runs as root (the reader becomes the user); an engine-free child that
 * overruns is covered by test_rm_child.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "spank_bind.h"
#include "spank_opts.h"
#include "tests/harness.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The pattern: 4 ranks, edges 1-2 (5), 2-3 (3), 3-4 (7), 1-4 (1), 1-based as Matrix Market writes. */
static const char pattern[] =
	"%%MatrixMarket matrix coordinate real general\n"
	"4 4 4\n1 2 5\n2 3 3\n3 4 7\n1 4 1\n";

static int write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	fclose(f);
	return chmod(path, mode);
}

/* Finds the edge (a, b) in e (either order). Returns its weight or -1. */
static double edge(const rm_spank_edge_t *e, size_t n, uint32_t a, uint32_t b)
{
	for (size_t i = 0; i < n; i++)
		if ((e[i].a == a && e[i].b == b) || (e[i].a == b && e[i].b == a))
			return e[i].w;
	return -1;
}

static void test_edges(const char *dir)
{
	char path[4096];
	uint32_t global[3] = { 3, 1, 2 }; /* local tasks 0, 1, 2 are ranks 3, 1, 2 (0-based) */
	rm_spank_bind_req_t req = { .ntasks = 3,
				    .global = global,
				    .total_tasks = 4,
				    .pattern = path,
				    .uid = getuid(),
				    .gid = getgid(),
				    .pattern_timeout_ms = 5000 };
	rm_error_t err = { 0 };
	rm_spank_edge_t *e;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/p.mtx", dir);
	check(write_file(path, pattern, 0644) == 0, "pattern written");
	e = rm_spank_pattern_edges(&req, &n, &err);
	check(e && n == 2, "two edges among ranks 1, 2, 3 (%zu: %s)", n, err.text);
	/* file edges 2-3 (ranks 1,2 -> local 1,2) weight 3, and 3-4 (ranks 2,3 -> local 2,0) weight 7 */
	check(e && edge(e, n, 1, 2) == 3 && edge(e, n, 0, 2) == 7, "weights as in the file (%g, %g)",
	      e ? edge(e, n, 1, 2) : -1, e ? edge(e, n, 0, 2) : -1);
	check(e && edge(e, n, 0, 1) < 0, "no edge between ranks 3 and 1");
	free(e);
}

static void test_refused(const char *dir)
{
	char path[4096], fifo[4096];
	uint32_t global[2] = { 0, 1 };
	rm_spank_bind_req_t req = { .ntasks = 2,
				    .global = global,
				    .total_tasks = 4,
				    .pattern = path,
				    .uid = getuid(),
				    .gid = getgid(),
				    .pattern_timeout_ms = 5000 };
	rm_error_t err = { 0 };
	size_t n;
	double t0;

	snprintf(fifo, sizeof(fifo), "%s/q.mtx", dir);
	snprintf(path, sizeof(path), "%s", fifo);
	check(mkfifo(fifo, 0644) == 0, "FIFO made");
	t0 = now_s();
	check(!rm_spank_pattern_edges(&req, &n, &err), "a FIFO is refused");
	check(strstr(err.text, "not a regular file (a FIFO)") && !strcmp(err.source, path), "named: %s: %s", err.source,
	      err.text);
	check(now_s() - t0 < 2, "at once (%.2f s)", now_s() - t0);
	{ /* the submission check (srun, sbatch, salloc) refuses it the same way */
		rm_spank_job_t job = { 0 };
		rm_error_clear(&err);
		t0 = now_s();
		check(rm_spank_job_set(&job, RM_SPANK_OPT_PATTERN, fifo, 1, &err) < 0 && strstr(err.text, "a FIFO"),
		      "submission: a FIFO is refused (%s)", err.text);
		check(now_s() - t0 < 2, "at once (%.2f s)", now_s() - t0);
	}

	snprintf(path, sizeof(path), "%s/zero.mtx", dir);
	check(symlink("/dev/zero", path) == 0, "symlink to /dev/zero made");
	rm_error_clear(&err);
	t0 = now_s();
	check(!rm_spank_pattern_edges(&req, &n, &err) && strstr(err.text, "character device"),
	      "a symlink to /dev/zero is refused (%s)", err.text);
	check(now_s() - t0 < 2, "at once (%.2f s)", now_s() - t0);

	snprintf(path, sizeof(path), "%s/missing.mtx", dir);
	rm_error_clear(&err);
	check(!rm_spank_pattern_edges(&req, &n, &err) && strstr(err.text, "No such file"), "a missing file (%s)",
	      err.text);

	snprintf(path, sizeof(path), "%s/bad.mtx", dir);
	write_file(path, "%%MatrixMarket matrix coordinate real general\n4 4 1\n1 9 1\n", 0644);
	rm_error_clear(&err);
	check(!rm_spank_pattern_edges(&req, &n, &err) && err.line == 3, "a bad line is named (%s:%d: %s)", err.source,
	      err.line, err.text);
}

/* Run as root, the reader must still be refused a file only root may read when the job's user is not. */
static void test_as_user(const char *dir)
{
	char path[4096];
	uint32_t global[2] = { 0, 1 };
	gid_t gids[1] = { 65534 };
	rm_spank_bind_req_t req = { .ntasks = 2,
				    .global = global,
				    .total_tasks = 4,
				    .pattern = path,
				    .uid = 65534,
				    .gid = 65534,
				    .gids = gids,
				    .ngids = 1,
				    .pattern_timeout_ms = 5000 };
	rm_error_t err = { 0 };
	rm_spank_edge_t *e;
	size_t n;

	if (geteuid() != 0) {
		fail("test_as_user needs root (it reads a file as uid 65534)");
		return;
	}
	snprintf(path, sizeof(path), "%s/private.mtx", dir);
	check(write_file(path, pattern, 0600) == 0, "root-only pattern written");
	check(!rm_spank_pattern_edges(&req, &n, &err) && strstr(err.text, "Permission denied"),
	      "as uid 65534: refused (%s)", err.text);
	chmod(path, 0644);
	rm_error_clear(&err);
	e = rm_spank_pattern_edges(&req, &n, &err);
	check(e && n == 1 && edge(e, n, 0, 1) == 5, "as uid 65534, readable: edge 0-1 weight 5 (%s)", err.text);
	free(e);
	check(getuid() == 0 && geteuid() == 0, "the caller is still root");
}

static void test_resolve(void)
{
	char out[64];
	rm_error_t err = { 0 };

	check(spank_path_resolve("/home/u/A", "q.mtx", out, sizeof(out), NULL, &err) == 0 &&
		      !strcmp(out, "/home/u/A/q.mtx"),
	      "relative: joined (%s)", out);
	check(spank_path_resolve("/", "q.mtx", out, sizeof(out), NULL, &err) == 0 && !strcmp(out, "/q.mtx"),
	      "root dir (%s)", out);
	check(spank_path_resolve(NULL, "/abs/q.mtx", out, sizeof(out), NULL, &err) == 0 && !strcmp(out, "/abs/q.mtx"),
	      "absolute: kept (%s)", out);
	check(spank_path_resolve(NULL, "q.mtx", out, sizeof(out), NULL, &err) < 0 && errno == EINVAL &&
		      strstr(err.text, "SLURM_SUBMIT_DIR"),
	      "no directory: refused (%s)", err.text);
	rm_error_clear(&err);
	check(spank_path_resolve("rel", "q.mtx", out, sizeof(out), NULL, &err) < 0, "relative directory: refused");
	rm_error_clear(&err);
	check(spank_path_resolve("/a/very/long/directory/name/that/does/not/fit", "into/sixty/four.mtx", out,
				 sizeof(out), NULL, &err) < 0 &&
		      errno == ENAMETOOLONG,
	      "too long: refused");
}

int main(void)
{
	char dir[] = "/tmp/rankmap-test-pattern.XXXXXX";
	char cmd[256];

	if (!mkdtemp(dir)) {
		fail("mkdtemp");
		return harness_done();
	}
	chmod(dir, 0755);
	test_edges(dir);
	test_refused(dir);
	test_as_user(dir);
	test_resolve();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fail("cleanup of %s", dir);
	return harness_done();
}
