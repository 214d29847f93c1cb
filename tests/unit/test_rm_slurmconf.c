/*
 * tests/unit/test_rm_slurmconf.c: common/rm_slurmconf (the NodeName= names of slurm.conf and its
 * Includes), and its errors: one inside an included file, or a missing included file, names that file
 * and line and then each Include line that led there ("included from FILE:LINE, from FILE:LINE"), as a
 * C compiler does. The files are written here; expected names and lines are those of the text written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hostlist.h"
#include "rm_slurmconf.h"
#include "tests/harness.h"

static char dir[] = "/tmp/rankmap-slurmconf.XXXXXX";

/* Writes text to dir/name; returns the path (static buffer of the caller's choice). */
static const char *put(const char *name, const char *text, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", dir, name);
	if ((f = fopen(path, "w"))) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

/* Reads path; returns the formatted error ("" when it loaded), the names' count in *n. */
static const char *load(const char *path, size_t *n, char *msg, size_t len)
{
	rm_error_t err = { 0 };
	char **v = rm_slurm_conf_nodes(path, n, &err);

	msg[0] = '\0';
	if (!v)
		rm_error_format(&err, msg, len);
	hostlist_free(v);
	return msg;
}

int main(void)
{
	char main_p[512], mid_p[512], deep_p[512], miss_p[512], top_p[512], long_p[512], p[512], want[2048];
	char msg[1024], longname[300];
	size_t n = 0;

	if (!mkdtemp(dir) || mkdir(strcat(strcpy(p, dir), "/sub"), 0700) < 0) {
		fail("scratch directory: %s", strerror(errno));
		return harness_done();
	}
	put("sub/inc.conf", "NodeName=b1 CPUs=4\n\nNodeName=bad[1- CPUs=4\n", p, sizeof(p));
	put("sub/ok.conf", "NodeName=b[1-3]\n", p, sizeof(p));
	put("main.conf", "ClusterName=c\nNodeName=a[1-2]\nInclude sub/ok.conf\nInclude sub/inc.conf\n", main_p,
	    sizeof(main_p));
	put("mid.conf", "# a comment\n\nNodeName=m1\nInclude \\\n  sub/inc.conf\n", mid_p, sizeof(mid_p));
	put("deep.conf", "NodeName=d1\nInclude mid.conf\n", deep_p, sizeof(deep_p));
	put("missing.conf", "NodeName=x1\n\n\n\ninclude none.conf\n", miss_p, sizeof(miss_p));
	put("top.conf", "NodeName=t1\nNodeName=bad[\n", top_p, sizeof(top_p));
	put("good.conf", "NodeName=a[1-2]\nInclude sub/ok.conf\n", p, sizeof(p));

	check(!*load(p, &n, msg, sizeof(msg)) && n == 5, "an Include is followed: 5 names (%zu; %s)", n, msg);

	/* an error inside an included file: its own file and line, then the Include line */
	load(main_p, &n, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s/sub/inc.conf:3:", dir);
	check(!strncmp(msg, want, strlen(want)) && strstr(msg, "NodeName=bad[1-"),
	      "the error names the included file and its line 3: %s", msg);
	snprintf(want, sizeof(want), "(included from %s:4)", main_p);
	check(strlen(msg) > strlen(want) && !strcmp(msg + strlen(msg) - strlen(want), want),
	      "and the including file and the Include's line 4: %s", msg);

	/* two levels, the Include of mid.conf on a continued line (3 and 4: its first line, 4) */
	load(deep_p, &n, msg, sizeof(msg));
	snprintf(want, sizeof(want), "(included from %s:4, from %s:2)", mid_p, deep_p);
	check(!strncmp(msg, dir, strlen(dir)) && strstr(msg, "/sub/inc.conf:3:") && strstr(msg, want),
	      "nested: innermost first, each Include's file and line: %s", msg);

	/* a missing included file: named, with the line that includes it */
	load(miss_p, &n, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s/none.conf", dir);
	check(!strncmp(msg, want, strlen(want)), "a missing included file is named: %s", msg);
	snprintf(want, sizeof(want), "(included from %s:5)", miss_p);
	check(strstr(msg, want) != NULL, "with the including file and line 5: %s", msg);

	/* an error in the file itself has no include chain */
	load(top_p, &n, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s:2:", top_p);
	check(!strncmp(msg, want, strlen(want)) && !strstr(msg, "included from"), "top-level error as before: %s", msg);

	/* a long error text is cut, the chain never */
	memset(longname, 'z', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	snprintf(want, sizeof(want), "NodeName=%.200s[1-\n", longname);
	put("sub/long.conf", want, p, sizeof(p));
	put("long.conf", "Include sub/long.conf\n", long_p, sizeof(long_p));
	load(long_p, &n, msg, sizeof(msg));
	snprintf(want, sizeof(want), "(included from %s:1)", long_p);
	check(strlen(msg) > strlen(want) && !strcmp(msg + strlen(msg) - strlen(want), want) && strstr(msg, "..."),
	      "a long error keeps the whole chain: %s", msg);

	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	check(system(p) == 0, "scratch directory removed");
	return harness_done();
}
