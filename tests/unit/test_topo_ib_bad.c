/*
 * tests/unit/test_topo_ib_bad.c: bad InfiniBand inputs. tests/data/bad/ib-files/CASES lists each file, the
 * line its error must name and a fragment of the message. Each case loads into a fabric that already
 * holds ib/small-2level.topo; after the failed load the fabric must report exactly what it did before.
 */
#include <errno.h>
#include <string.h>

#include "../harness.h"
#include "net_ib_private.h"

static char *data(const char *rel)
{
	static char buf[2][512];
	static int k;

	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", harness_data_dir(), rel);
	return buf[k];
}

static struct topo_fabric *baseline(json_t **report)
{
	struct topo_fabric *f = topo_fabric_create();
	rm_error_t err;

	rm_error_clear(&err);
	if (topo_fabric_load_file(f, data("ib/small-2level.topo"), &err) < 0 || topo_fabric_finalize(f, &err) < 0) {
		fail("baseline: %s", err.text);
		topo_fabric_destroy(f);
		return NULL;
	}
	*report = topo_fabric_report(f);
	return f;
}

static void one_case(const char *file, int line, const char *frag)
{
	json_t *before = NULL, *after;
	struct topo_fabric *f = baseline(&before);
	char rel[300], msg[700];
	rm_error_t err;
	int rc, is_map = strstr(file, ".map") != NULL;

	if (!f)
		return;
	snprintf(rel, sizeof(rel), "bad/ib-files/%s", file);
	rm_error_clear(&err);
	errno = 0;
	rc = is_map ? topo_fabric_load_node_name_map(f, data(rel), &err) : topo_fabric_load_file(f, data(rel), &err);
	rm_error_format(&err, msg, sizeof(msg));
	check(rc == -1 && errno != 0, "%s: load fails with errno (rc %d)", file, rc);
	check(strstr(err.source, file) != NULL, "%s: error names the file: %s", file, msg);
	check(err.line == line, "%s: error names line %d: %s", file, line, msg);
	check(strstr(err.text, frag) != NULL, "%s: message has \"%s\": %s", file, frag, msg);
	rm_error_clear(&err);
	check(topo_fabric_finalize(f, &err) == 0, "%s: finalize after the failure", file);
	after = topo_fabric_report(f);
	check(json_equal(before, after), "%s: fabric unchanged by the failed load", file);
	json_decref(before);
	json_decref(after);
	topo_fabric_destroy(f);
}

static int run_cases(void)
{
	FILE *fp = fopen(data("bad/ib-files/CASES"), "r");
	char line[512], file[256], frag[256];
	int n = 0, ln;

	if (!fp) {
		fail("cannot open bad/ib-files/CASES");
		return 0;
	}
	while (fgets(line, sizeof(line), fp)) {
		int off = 0;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%255s %d %n", file, &ln, &off) < 2 || !off) {
			fail("bad CASES line: %s", line);
			continue;
		}
		snprintf(frag, sizeof(frag), "%s", line + off);
		frag[strcspn(frag, "\n")] = '\0';
		one_case(file, ln, frag);
		n++;
	}
	fclose(fp);
	return n;
}

/* Missing files and files that are not libibnetdisc caches. */
static void test_other_sources(void)
{
	struct topo_fabric *f = topo_fabric_create();
	rm_error_t err;

	rm_error_clear(&err);
	check(topo_fabric_load_file(f, data("bad/ib-files/no-such-file"), &err) < 0 && errno == ENOENT &&
		      strstr(err.text, "cannot open"),
	      "missing file: %s", err.text);
	rm_error_clear(&err);
	check(topo_fabric_load_node_name_map(f, data("bad/ib-files/no-such-map"), &err) < 0 &&
		      strstr(err.source, "no-such-map"),
	      "missing map: %s", err.text);
	rm_error_clear(&err);
	check(topo_fabric_load_cache(f, data("bad/ib-files/garbage.txt"), &err) < 0 && strstr(err.text, "cache"),
	      "garbage as a cache file: %s", err.text);
	rm_error_clear(&err);
	check(topo_fabric_load_cache(f, data("bad/ib-files/empty.txt"), &err) < 0, "empty cache file");
	rm_error_clear(&err);
	check(topo_fabric_load_cache(f, data("bad/ib-files/no-such-cache"), &err) < 0 && errno == ENOENT,
	      "missing cache file");
	rm_error_clear(&err);
	check(topo_fabric_finalize(f, &err) == 0 && topo_fabric_nhosts(f) == 0, "fabric still empty");
	/* the same subnet twice (same switch GUIDs): refused, the first copy stays */
	check(topo_fabric_load_file(f, data("ib/small-3level.ports"), &err) == 0, "3-level loads");
	check(topo_fabric_load_file(f, data("ib/small-3level.ports"), &err) < 0 && errno == EEXIST &&
		      strstr(err.text, "loaded twice") && strstr(err.text, "small-3level.ports"),
	      "same subnet twice: %s", err.text);
	rm_error_clear(&err);
	check(topo_fabric_finalize(f, &err) == 0 && topo_fabric_nsubnets(f) == 1 && topo_fabric_nhosts(f) == 8,
	      "one subnet kept");
	topo_fabric_destroy(f);
}

int main(void)
{
	int n = run_cases();

	check(n >= 15, "at least 15 bad-input cases (%d)", n);
	test_other_sources();
	return harness_done();
}
