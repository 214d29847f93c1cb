/*
 * tests/unit/test_topo_ib_mutate.c: robustness of the InfiniBand parsers. Valid inputs are mutated
 * (seeded, so every run is the same): bytes changed, ranges deleted, lines duplicated or swapped, the
 * file truncated, digits inserted. Every load must either succeed or fail with an error naming the
 * file and a line inside it, and a failed load must leave the fabric as it was (same report). Run it
 * under SANITIZE=1 or valgrind to catch memory errors too. libibnetdisc cache files are cut short or
 * changed the same way: each loads or is refused, never a crash.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "net_ib_private.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *b;
	long n;

	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, fp) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(fp);
	*len = (size_t)n;
	return b;
}

/* Start of the line holding byte i (or the buffer end). */
static size_t line_start(const char *b, size_t i)
{
	while (i > 0 && b[i - 1] != '\n')
		i--;
	return i;
}

static size_t line_end(const char *b, size_t len, size_t i)
{
	while (i < len && b[i] != '\n')
		i++;
	return i < len ? i + 1 : len;
}

/* One mutation of src into dst (capacity 2 * len + 64); returns the new length. */
static size_t mutate(const char *src, size_t len, char *dst)
{
	static const char alphabet[] = "0123456789abcdefxX[]()\"' \t\n#-SHCAWlidport4xQDR?";
	size_t i = len ? (size_t)(rnd() % len) : 0, j, n, k;

	memcpy(dst, src, len);
	switch (rnd() % 6) {
	case 0: /* change a few bytes */
		for (k = 0; k < 1 + rnd() % 3 && len; k++)
			dst[rnd() % len] = alphabet[rnd() % (sizeof(alphabet) - 1)];
		return len;
	case 1: /* delete a range */
		n = (size_t)(rnd() % 40);
		n = i + n > len ? len - i : n;
		memmove(dst + i, src + i + n, len - i - n);
		return len - n;
	case 2: /* duplicate the line at i */
		j = line_start(src, i);
		n = line_end(src, len, i) - j;
		memcpy(dst + j + n, src + j, len - j);
		return len + n;
	case 3: /* truncate */ return i;
	case 4: /* insert digits */
		n = 1 + (size_t)(rnd() % 6);
		memcpy(dst + i + n, src + i, len - i);
		for (k = 0; k < n; k++)
			dst[i + k] = (char)('0' + rnd() % 10);
		return len + n;
	default: /* swap the line at i with the next one */
		j = line_start(src, i);
		n = line_end(src, len, i);
		k = line_end(src, len, n);
		memcpy(dst + j, src + n, k - n);
		memcpy(dst + j + (k - n), src + j, n - j);
		return len;
	}
}

static int count_lines(const char *b, size_t len)
{
	int n = 1;
	size_t i;

	for (i = 0; i < len; i++)
		n += b[i] == '\n';
	return n;
}

/* Returns 1 when the load failed (as it should have, cleanly), 0 when it succeeded. */
static int one(const char *tmp, const char *buf, size_t len, int is_map, json_t *before, struct topo_fabric *f,
	       const char *base, int iter)
{
	FILE *fp = fopen(tmp, "wb");
	rm_error_t err;
	json_t *after;
	int rc;

	if (!fp || fwrite(buf, 1, len, fp) != len) {
		fail("writing %s", tmp);
		if (fp)
			fclose(fp);
		return 0;
	}
	fclose(fp);
	rm_error_clear(&err);
	rc = is_map ? topo_fabric_load_node_name_map(f, tmp, &err) : topo_fabric_load_file(f, tmp, &err);
	if (rc == 0) {
		check(!rm_error_isset(&err), "%s #%d: success without error", base, iter);
		return 0;
	}
	check(rc == -1 && rm_error_isset(&err) && !strcmp(err.source, tmp), "%s #%d: error names the file", base, iter);
	check(err.line >= 0 && err.line <= count_lines(buf, len), "%s #%d: error line %d in the file", base, iter,
	      err.line);
	rm_error_clear(&err);
	if (topo_fabric_finalize(f, &err) < 0) {
		fail("%s #%d: finalize", base, iter);
		return 1;
	}
	after = topo_fabric_report(f);
	check(json_equal(before, after), "%s #%d: fabric unchanged after a failed load", base, iter);
	json_decref(after);
	return 1;
}

static void run(const char *rel, int is_map, int iters)
{
	char path[512], tmp[] = "/tmp/rankmap-ib-mutate.XXXXXX";
	size_t len = 0, n;
	char *src, *dst;
	int fd, i, ok = 0, failed = 0;

	snprintf(path, sizeof(path), "%s/%s", harness_data_dir(), rel);
	src = slurp(path, &len);
	dst = malloc(2 * len + 64);
	fd = mkstemp(tmp);
	if (!src || !dst || fd < 0) {
		fail("set-up for %s", rel);
		goto out;
	}
	close(fd);
	for (i = 0; i < iters; i++) {
		struct topo_fabric *f = topo_fabric_create();
		rm_error_t err;
		json_t *before;

		rm_error_clear(&err);
		snprintf(path, sizeof(path), "%s/ib/subnet-a.topo", harness_data_dir());
		if (topo_fabric_load_file(f, path, &err) < 0 || topo_fabric_finalize(f, &err) < 0) {
			fail("baseline: %s", err.text);
			topo_fabric_destroy(f);
			break;
		}
		before = topo_fabric_report(f);
		n = mutate(src, len, dst);
		failed += one(tmp, dst, n, is_map, before, f, rel, i);
		ok++;
		json_decref(before);
		topo_fabric_destroy(f);
	}
	check(ok == iters, "%s: %d mutations run", rel, ok);
	printf("%s: %d mutations, %d rejected\n", rel, ok, failed);
	check(failed > iters / 10, "%s: mutations do get rejected (%d)", rel, failed);
	unlink(tmp);
out:
	free(src);
	free(dst);
}

/* libibnetdisc cache files cut short or with bytes changed: loaded or refused, never a crash. */
static void run_cache(int iters)
{
	char path[512], tmp[] = "/tmp/rankmap-ib-cache.XXXXXX";
	size_t len = 0, n, k;
	char *src, *dst;
	int fd, i, failed = 0;

	snprintf(path, sizeof(path), "%s/ib/ibsim-fattree.cache", harness_data_dir());
	src = slurp(path, &len);
	dst = malloc(len + 1);
	fd = mkstemp(tmp);
	if (!src || !dst || fd < 0 || !len) {
		fail("set-up for the cache");
		goto out;
	}
	close(fd);
	for (i = 0; i < iters; i++) {
		struct topo_fabric *f = topo_fabric_create();
		rm_error_t err;
		FILE *fp;
		int rc;

		memcpy(dst, src, len);
		n = len;
		if (i % 2)
			n = (size_t)(rnd() % len);
		else
			for (k = 0; k < 3; k++)
				dst[rnd() % len] = (char)rnd();
		fp = fopen(tmp, "wb");
		if (!fp || fwrite(dst, 1, n, fp) != n) {
			fail("writing %s", tmp);
			if (fp)
				fclose(fp);
			topo_fabric_destroy(f);
			break;
		}
		fclose(fp);
		rm_error_clear(&err);
		rc = topo_fabric_load_cache(f, tmp, &err);
		if (rc == 0)
			check(topo_fabric_finalize(f, &err) == 0, "cache #%d: finalize", i);
		else
			check(rm_error_isset(&err) && !strcmp(err.source, tmp), "cache #%d: error names the file", i);
		failed += rc < 0;
		topo_fabric_destroy(f);
	}
	printf("cache: %d mutations, %d rejected\n", iters, failed);
	check(failed > iters / 4, "cache mutations do get rejected (%d)", failed);
	unlink(tmp);
out:
	free(src);
	free(dst);
}

int main(void)
{
	run("ib/small-2level.topo", 0, 600);
	run("ib/small-3level.ports", 0, 600);
	run("ib/small-2level.map", 1, 300);
	run("ib/back-to-back.topo", 0, 200);
	run("plafrim/ib/ib-subnet0.txt", 0, 100);
	run_cache(200);
	return harness_done();
}
