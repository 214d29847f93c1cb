/* tests/unit/test_hostlist.c: Slurm host list expansion and compression (common/hostlist.c).
 * Expected lists are written by hand from Slurm's documented syntax. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "tests/harness.h"

/* Expands expr and compares with the space-separated names in want. */
static void expect_expand(const char *expr, const char *want)
{
	rm_error_t err;
	size_t n = 0, i = 0;
	char **h, buf[4096], *tok, *save = NULL;

	rm_error_clear(&err);
	h = hostlist_expand(expr, &n, 0, &err);
	if (!h) {
		fail("expand '%s' failed: %s", expr, err.text);
		return;
	}
	snprintf(buf, sizeof(buf), "%s", want);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save), i++)
		check(i < n && !strcmp(h[i], tok), "expand '%s': #%zu is '%s', want '%s'", expr, i,
		      i < n ? h[i] : "(none)", tok);
	check(i == n && h[n] == NULL, "expand '%s': %zu names, want %zu", expr, n, i);
	hostlist_free(h);
}

static void expect_bad(const char *expr, int column, const char *frag)
{
	rm_error_t err;
	size_t n;
	char **h;

	rm_error_clear(&err);
	h = hostlist_expand(expr, &n, 0, &err);
	check(h == NULL, "'%s' rejected", expr);
	hostlist_free(h);
	check(strstr(err.text, frag) != NULL, "'%s': '%s' in '%s'", expr, frag, err.text);
	check(column == 0 || err.column == column, "'%s': column %d, got %d", expr, column, err.column);
}

/* Compresses the space-separated names and compares with want; then expands back. */
static void expect_compress(const char *names, const char *want)
{
	char buf[4096], *v[256], *tok, *save = NULL, *got, **back;
	size_t n = 0, m = 0, i;

	snprintf(buf, sizeof(buf), "%s", names);
	for (tok = strtok_r(buf, " ", &save); tok && n < 256; tok = strtok_r(NULL, " ", &save))
		v[n++] = tok;
	got = hostlist_compress((const char *const *)v, n);
	check(got && !strcmp(got, want), "compress '%s': got '%s', want '%s'", names, got ? got : "NULL", want);
	back = got ? hostlist_expand(got, &m, 0, NULL) : NULL;
	check(back && m == n, "round trip of '%s': %zu names", names, m);
	for (i = 0; back && i < n && i < m; i++)
		check(!strcmp(back[i], v[i]), "round trip #%zu: '%s' vs '%s'", i, back[i], v[i]);
	hostlist_free(back);
	free(got);
}

int main(void)
{
	expect_expand("node[1-3,7],login01", "node1 node2 node3 node7 login01");
	expect_expand("n[001-003]", "n001 n002 n003");
	expect_expand("n[08-10]", "n08 n09 n10");
	expect_expand("n[8-10]", "n8 n9 n10");
	expect_expand("r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2");
	expect_expand("c0-0c[0-1]s3", "c0-0c0s3 c0-0c1s3");
	expect_expand("single", "single");
	expect_expand("a,b,c", "a b c");
	expect_expand("x[5]", "x5");

	expect_bad("node[1-3", 5, "unbalanced");
	expect_bad("node1-3]", 8, "unbalanced ']'");
	expect_bad("node[3-1]", 6, "range goes down");
	expect_bad("node[a-b]", 6, "bad character");
	expect_bad("node[]", 5, "empty brackets");
	expect_bad("node[1,]", 0, "empty range");
	expect_bad("a,,b", 3, "empty host name");
	expect_bad("a,", 2, "trailing");
	expect_bad("n[[1]]", 3, "nested");
	expect_bad("n[1-2000000]", 0, "too many hosts");
	{
		size_t n;

		check(hostlist_expand("n[1-10]", &n, 5, NULL) == NULL, "max_hosts honoured");
	}

	expect_compress("node1 node2 node3 node7", "node[1-3,7]");
	expect_compress("n001 n002", "n[001-002]");
	expect_compress("n099 n100 n101", "n[099-101]");
	expect_compress("n8 n9 n10 n11", "n[8-11]");
	expect_compress("n3 n1 n2", "n[3,1-2]");
	expect_compress("a b c", "a,b,c");
	expect_compress("login01", "login01");
	expect_compress("n1 n01", "n1,n01");
	expect_compress("n1 n2 m1 n3", "n[1-2],m1,n3");
	expect_compress("c0-0c0s1n0 c0-0c0s1n1 c0-0c0s2n0", "c0-0c0s1n[0-1],c0-0c0s2n0");
	{
		char *e = hostlist_compress(NULL, 0);

		check(e && !strcmp(e, ""), "empty list compresses to ''");
		free(e);
	}
	return harness_done();
}
