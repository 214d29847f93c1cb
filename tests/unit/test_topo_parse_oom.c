/*
 * tests/unit/test_topo_parse_oom.c: topo_parse_program (topo/node_parse.c) keeps nothing and leaks nothing
 * when it fails, whichever of its copies runs out of memory (rankmapd then exits, under LeakSanitizer too).
 *
 * Allocation failures are injected here, in this program only: it defines strdup, which the static topo
 * library then calls, and makes the N-th call fail (ENOMEM). Each failure is checked three ways: the call
 * returns -1 with ENOMEM; the bytes glibc's malloc holds (mallinfo2) are those held before the call (the
 * sanitized build has its own allocator: there LeakSanitizer checks at exit instead); and hwloc's parser
 * still works afterwards, as a fork. A later call replaces an earlier one, and (NULL, NULL) frees it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "rm_file.h"
#include "topo.h"
#include "tests/harness.h"

/* strdup's calls from now until it fails: 0 never fails, N fails the N-th call (1 = the next one) */
static int fail_at;

char *strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p;

	if (fail_at > 0 && --fail_at == 0) {
		errno = ENOMEM;
		return NULL;
	}
	if ((p = malloc(n)))
		memcpy(p, s, n);
	return p;
}

static size_t held(void)
{
	return mallinfo2().uordblks;
}

/* hwloc's parser (a child process) reads a node's XML into a new cluster: 1 when it does */
static int parser_works(const char *xml, size_t len)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err = { 0 };
	int ok = c && topo_load_hwloc_xmlbuf(c, "bonobo001", xml, len, "test", &err) == 0 && topo_nhosts(c) == 1;

	topo_cluster_destroy(c);
	return ok;
}

int main(int argc, char **argv0)
{
	char *const argv[] = { "rankmapd", "--hwloc-parser-child", "--and-one-more", NULL };
	char path[4096];
	rm_error_t err = { 0 };
	size_t len = 0, before;
	char *xml;
	int k, rc, e, calls = 0;

	/* Started as the parser child: a failure path that kept this program (/proc/self/exe) would start this
	 * test again from every parse, each starting more (a fork bomb, seen once): fail that parse instead. */
	if (argc > 1 && !strcmp(argv0[1], "--hwloc-parser-child"))
		return 3;
	snprintf(path, sizeof(path), "%s/daemon/hwloc/bonobo001.xml", harness_data_dir());
	xml = rm_file_read(path, RM_FILE_HWLOC, &len, &err);
	check(xml != NULL, "read %s", path);
	if (!xml)
		return harness_done();
	check(parser_works(xml, len), "hwloc's parser (a fork) reads bonobo001.xml");

	/* how many strdup calls one successful topo_parse_program makes (path and each argument) */
	fail_at = 1000;
	check(topo_parse_program("/proc/self/exe", argv) == 0, "topo_parse_program succeeds");
	calls = 1000 - fail_at;
	fail_at = 0;
	check(calls == 4, "one copy of the path and one per argument (%d strdup calls)", calls);
	check(topo_parse_program(NULL, NULL) == 0, "(NULL, NULL) goes back to forks");

	for (k = 1; k <= calls; k++) {
		before = held();
		fail_at = k;
		errno = 0;
		rc = topo_parse_program("/proc/self/exe", argv);
		e = errno;
		fail_at = 0;
		check(rc == -1 && e == ENOMEM, "copy %d of %d fails: -1, ENOMEM (got %d, %s)", k, calls, rc,
		      strerror(e));
		check(held() == before, "copy %d of %d fails: nothing kept (%zu bytes held before, %zu after)", k,
		      calls, before, held());
		check(parser_works(xml, len), "copy %d of %d failed: hwloc's parser is still a working fork", k, calls);
	}

	/* a failure after a success drops the earlier program too (nothing half-replaced) */
	before = held();
	check(topo_parse_program("/bin/false", argv) == 0, "a program set");
	fail_at = 3;
	check(topo_parse_program("/proc/self/exe", argv) == -1, "replacing it fails at the third copy");
	fail_at = 0;
	check(held() == before, "nothing of either kept (%zu bytes held before, %zu after)", before, held());
	check(parser_works(xml, len), "the parser is a fork, not /bin/false");

	/* replacing a program frees the earlier one */
	before = held();
	check(topo_parse_program("/bin/false", argv) == 0 && topo_parse_program("/proc/self/exe", argv) == 0 &&
		      topo_parse_program(NULL, NULL) == 0,
	      "set, replaced, cleared");
	check(held() == before, "set, replaced and cleared: nothing kept (%zu bytes before, %zu after)", before,
	      held());
	errno = 0;
	check(topo_parse_program("/proc/self/exe", (char *[]){ NULL }) == -1 && errno == EINVAL,
	      "no arguments: EINVAL");
	free(xml);
	return harness_done();
}
