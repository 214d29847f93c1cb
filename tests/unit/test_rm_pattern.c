/*
 * tests/unit/test_rm_pattern.c: learned patterns (common/rm_pattern.h): text form round trip, the
 * running average, keys, every bad-input case of the parser (tests/data/bad/learned-patterns/), and the
 * directory store (atomic put, corrupt file kept as .bad, LRU eviction, forget, refused directories).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/harness.h"
#include "rm_file.h"
#include "rm_pattern.h"

static rm_pattern_t *cart(double b0, double b1)
{
	rm_pattern_key_t k = { .uid = 1000, .order = 0 };
	int per[3] = { 1, 0, 1 };

	strcpy(k.program, "build-id:abcd");
	strcpy(k.fn, "MPI_Cart_create");
	rm_pattern_shape_cart(&k, 3, per);
	rm_pattern_t *p = rm_pattern_new(&k, 0);

	p->ndims = 3;
	p->dim[0][1] = b0, p->dim[1][1] = b1, p->dim[2][1] = 1;
	p->other[0] = 5;
	return p;
}

static void test_roundtrip(void)
{
	rm_pattern_t *p = cart(4096, 1024), *q;
	rm_error_t err = { 0 };
	size_t len;
	char *t;

	p->runs = 3, p->updated = 1700000000, p->ranks = 128;
	strcpy(p->path, "/home/u/app");
	t = rm_pattern_format(p, &len);
	q = t ? rm_pattern_parse(t, len, "t", &err) : NULL;
	check(q && rm_pattern_key_equal(&p->key, &q->key) && q->runs == 3 && q->ndims == 3 && q->dim[0][1] == 4096 &&
		      q->other[0] == 5 && !strcmp(q->path, "/home/u/app"),
	      "Cartesian pattern round trip (%s)", err.text);
	check(!strcmp(p->key.shape, "cart 3 1,0,1"), "shape text (%s)", p->key.shape);
	rm_pattern_free(q);
	free(t);

	rm_pattern_key_t g = p->key;

	rm_pattern_shape_graph(&g, 4, 2, 0x1234);
	rm_pattern_t *gp = rm_pattern_new(&g, 2);

	gp->ends[0] = 0, gp->ends[1] = 1, gp->ends[2] = 1, gp->ends[3] = 0;
	gp->edge[0] = 10, gp->edge[1] = 1, gp->edge[2] = 20, gp->edge[3] = 2;
	t = rm_pattern_format(gp, &len);
	q = t ? rm_pattern_parse(t, len, "g", &err) : NULL;
	check(q && q->nedges == 2 && q->ends[2] == 1 && q->edge[2] == 20, "graph pattern round trip (%s)", err.text);
	rm_pattern_free(q);
	free(t);
	rm_pattern_free(gp);
	rm_pattern_free(p);
}

static void test_merge(void)
{
	rm_pattern_t *run = cart(100, 0), *m = rm_pattern_merge(NULL, run, 10);

	check(m && m != run && m->runs == 1 && m->dim[0][1] == 100 && m->updated == 10, "first run copied");
	run->dim[0][1] = 200;
	m = rm_pattern_merge(m, run, 20);
	check(m->runs == 2 && fabs(m->dim[0][1] - 150) < 1e-9, "second run: the mean (%g)", m->dim[0][1]);
	for (int i = 0; i < 20; i++)
		m = rm_pattern_merge(m, run, 30);
	run->dim[0][1] = 0; /* one odd run */
	m = rm_pattern_merge(m, run, 40);
	check(fabs(m->dim[0][1] - 200 * (1 - RM_PATTERN_EMA)) < 1, "one odd run weighs %g, not more (%g)",
	      RM_PATTERN_EMA, m->dim[0][1]);
	rm_pattern_t *other = cart(1, 1);

	other->key.order = 1;
	rm_pattern_t *r = rm_pattern_merge(m, other, 50);

	check(r != m && r->runs == 1 && r->key.order == 1, "another key replaces");
	rm_pattern_free(r);
	rm_pattern_free(m);
	rm_pattern_free(other);
	rm_pattern_free(run);
}

/* Every tests/data/bad/learned-patterns/<case>/input is refused with an error containing <case>/error. */
static void test_bad(const char *data)
{
	char dir[4096], path[4400], want[256];
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/bad/learned-patterns", data);
	if (!(d = opendir(dir))) {
		fail("cannot open %s", dir);
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "README"))
			continue;
		rm_error_t err = { 0 };
		size_t len = 0;

		snprintf(path, sizeof(path), "%s/%s/error", dir, de->d_name);
		FILE *f = fopen(path, "r");

		if (!f || !fgets(want, sizeof(want), f)) {
			fail("%s: no error file", de->d_name);
			if (f)
				fclose(f);
			continue;
		}
		fclose(f);
		want[strcspn(want, "\n")] = 0;
		snprintf(path, sizeof(path), "%s/%s/input", dir, de->d_name);
		char *t = rm_file_read(path, RM_FILE_PATTERN, &len, &err);
		rm_pattern_t *p = t ? rm_pattern_parse(t, len, de->d_name, &err) : NULL;

		check(!p && strstr(err.text, want), "bad pattern %s: '%s' (want '%s')", de->d_name, err.text, want);
		rm_pattern_free(p);
		free(t);
		n++;
	}
	closedir(d);
	check(n >= 8, "%d bad-pattern cases", n);
}

static int count_files(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += strlen(de->d_name) > strlen(suffix) &&
		     !strcmp(de->d_name + strlen(de->d_name) - strlen(suffix), suffix);
	if (d)
		closedir(d);
	return n;
}

static void test_dir(void)
{
	char tmpl[] = "/tmp/rankmap-test.XXXXXX", *dir = mkdtemp(tmpl), sub[4200], path[4300], id[17];
	rm_error_t err = { 0 };
	rm_pattern_t *p = cart(1, 2), *q = NULL;

	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	check(rm_pattern_dir_check(sub, geteuid(), 1, &err) == 0, "directory created (%s)", err.text);
	struct stat st;

	check(stat(sub, &st) == 0 && (st.st_mode & 0777) == 0700, "mode 0700");
	check(rm_pattern_dir_get(sub, &p->key, &q, &err) == 0 && !q, "nothing stored yet");
	check(rm_pattern_dir_put(sub, p, 0, &err) == 0, "put (%s)", err.text);
	check(rm_pattern_dir_get(sub, &p->key, &q, &err) == 1 && q && q->dim[1][1] == 2, "get");
	rm_pattern_free(q), q = NULL;
	check(count_files(sub, ".pattern") == 1 && count_files(sub, "XXXXXX") == 0, "one file, no temporary left");
	rm_pattern_key_id(&p->key, id);
	snprintf(path, sizeof(path), "%s/%s.pattern", sub, id);
	FILE *f = fopen(path, "w");

	fputs("rankmap-pattern = 1\nuid = x\n", f);
	fclose(f);
	rm_error_clear(&err);
	check(rm_pattern_dir_get(sub, &p->key, &q, &err) == -1 && strstr(err.source, id),
	      "corrupt file: error naming it");
	check(rm_pattern_dir_put(sub, p, 0, &err) == 0 && count_files(sub, ".bad") == 1, "corrupt file kept as .bad");
	size_t one = 0;
	char *text = rm_pattern_format(p, &one);

	free(text);
	for (int i = 0; i < 5; i++) { /* LRU: a quota of two patterns (and a half) keeps the two newest */
		rm_pattern_t *o = cart(i, i);

		o->key.order = (uint32_t)i + 1;
		usleep(10000);
		rm_pattern_dir_put(sub, o, 2 * one + one / 2, &err);
		rm_pattern_free(o);
	}
	check(count_files(sub, ".pattern") == 2, "LRU eviction to the quota (%d left)", count_files(sub, ".pattern"));
	rm_pattern_t *big = cart(7, 7);

	big->key.order = 99;
	errno = 0;
	rm_error_clear(&err);
	check(rm_pattern_dir_put(sub, big, one / 2, &err) == -1 && errno == EFBIG && strstr(err.text, "not stored"),
	      "a pattern larger than the quota is refused (%s)", err.text);
	check(count_files(sub, ".pattern") == 2 && count_files(sub, "XXXXXX") == 0,
	      "nothing removed or left behind by the refusal (%d)", count_files(sub, ".pattern"));
	rm_pattern_free(big);
	check(rm_pattern_dir_forget(sub, "all", &err) == 2 && count_files(sub, ".pattern") == 0, "forget all");
	chmod(sub, 0777);
	rm_error_clear(&err);
	check(rm_pattern_dir_check(sub, geteuid(), 0, &err) == -1 && strstr(err.text, "writable by everyone"),
	      "world-writable directory refused (%s)", err.text);
	chmod(sub, 0700);
	rm_error_clear(&err);
	check(rm_pattern_dir_check(sub, geteuid() + 1, 0, &err) == -1 && strstr(err.text, "owned by uid"),
	      "directory of another owner refused (%s)", err.text);
	char cmd[4400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	check(system(cmd) == 0, "cleanup");
	rm_pattern_free(p);
}

/* Drift: a run unlike the average marks the pattern unstable until runs agree again; another command
 * line at the same size is another input; another size is not. */
static void test_drift(void)
{
	rm_pattern_t *a = cart(400, 100), *b = cart(100, 400), *m;
	const char *why = NULL;
	rm_error_t err = { 0 };
	size_t len;
	char *t;

	a->ranks = b->ranks = 128, a->cmdline = 0x11, b->cmdline = 0x21;
	/* shares a: 400/501, 100/501, 1/501; b swaps the first two: distance 300/501 */
	check(fabs(rm_pattern_distance(a, b) - 300.0 / 501) < 1e-12, "distance of swapped shares (%g)",
	      rm_pattern_distance(a, b));
	check(rm_pattern_distance(a, a) == 0, "distance to itself 0");
	m = rm_pattern_merge(NULL, a, 1);
	check(m->drift == 0 && rm_pattern_usable(m, 128, 0x11, &why) && !why,
	      "one run: usable by the same command line");
	check(rm_pattern_usable(m, 64, 0x99, NULL), "usable at another size with other arguments (scaling)");
	check(!rm_pattern_usable(m, 128, 0x21, &why) && why && !strcmp(why, "input-changed"),
	      "not usable at the same size with other arguments (%s)", why ? why : "-");
	check(rm_pattern_usable(m, 128, 0, NULL), "unknown arguments: usable");
	m = rm_pattern_merge(m, b, 2);
	check(m->drift > RM_PATTERN_DRIFT_MAX && m->cmdline == 0x21, "a run unlike the average: drift %g", m->drift);
	check(!rm_pattern_usable(m, 128, 0x21, &why) && why && !strcmp(why, "unstable"), "unstable: not usable");
	int n = 0;

	while (!rm_pattern_usable(m, 128, 0x21, NULL) && n < 20)
		m = rm_pattern_merge(m, b, 3), n++;
	check(n > 1 && n < 20 && m->drift <= RM_PATTERN_DRIFT_MAX, "stable again after %d agreeing runs", n);
	t = rm_pattern_format(m, &len);
	rm_pattern_t *q = t ? rm_pattern_parse(t, len, "d", &err) : NULL;

	check(q && q->cmdline == 0x21 && q->drift == m->drift, "cmdline and drift round trip (%s)", err.text);
	rm_pattern_free(q);
	free(t);
	rm_pattern_free(m), rm_pattern_free(a), rm_pattern_free(b);
}

int main(int argc, char **argv)
{
	const char *data = getenv("RANKMAP_TEST_DATA");

	(void)argc, (void)argv;
	test_roundtrip();
	test_merge();
	test_drift();
	test_bad(data ? data : "tests/data");
	test_dir();
	return harness_done();
}
