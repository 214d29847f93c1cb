/*
 * tests/unit/test_rm_file.c: common/rm_file: FIFOs, devices, symlinks to them, directories and
 * oversized files are refused at once with the path in the error; regular files are read whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "tests/harness.h"
#include "rm_file.h"

static char dir[512];

static const char *at(const char *name)
{
	static char buf[4][640];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* The open is refused, errno is set and the error names the path and says why. */
static void refused(const char *path, rm_file_kind_t kind, const char *why)
{
	rm_error_t err = { 0 };
	size_t len;
	char *b;

	errno = 0;
	b = rm_file_read(path, kind, &len, &err);
	check(!b, "%s: read should be refused", path);
	check(errno != 0, "%s: errno set", path);
	check(!strcmp(err.source, path), "%s: error names the file (got '%s')", path, err.source);
	check(strstr(err.text, why) != NULL, "%s: error says '%s' (got '%s')", path, why, err.text);
	free(b);
	memset(&err, 0, sizeof(err));
	check(rm_file_fopen(path, kind, NULL, &err) == NULL && rm_error_isset(&err), "%s: fopen refused too", path);
}

/* Streams read whole files, rewind, and fail (not grow) when the file grows past the cap after the open;
 * /proc files (size 0 in stat, more when read) are held to the cap too. */
static void stream_checks(void)
{
	rm_error_t err = { 0 };
	char line[64] = "", big[256];
	size_t size = 99, n;
	FILE *f, *w;

	f = rm_file_fopen(at("good.txt"), RM_FILE_PERM, &size, &err);
	check(f && size == 12, "stream opened, size at open");
	if (f) {
		check(fgets(line, sizeof(line), f) && !strcmp(line, "hello\n"), "stream reads");
		rewind(f);
		check(fgets(line, sizeof(line), f) && !strcmp(line, "hello\n"), "stream rewinds");
		while (fgets(line, sizeof(line), f))
			;
		check(rm_file_stream_error(f, at("good.txt"), RM_FILE_PERM, &err) == 0, "no stream error at EOF");
		fclose(f);
	}
	check(rm_file_set_limit(RM_FILE_PERM, 100) == 0, "set perm limit");
	write_file(at("grow.txt"), "hello\n");
	f = rm_file_fopen(at("grow.txt"), RM_FILE_PERM, NULL, &err);
	memset(big, 'x', sizeof(big));
	w = fopen(at("grow.txt"), "a");
	check(f && w && fwrite(big, 1, sizeof(big), w) == sizeof(big), "file grown after the open");
	if (w)
		fclose(w);
	if (f) {
		for (n = 0; fgets(line, sizeof(line), f); n += strlen(line))
			;
		check(n <= 100, "no more than the cap read (%zu)", n);
		check(rm_file_stream_error(f, at("grow.txt"), RM_FILE_PERM, &err) < 0 && errno == EFBIG &&
			      strstr(err.text, "grew past") && !strcmp(err.source, at("grow.txt")),
		      "growth past the cap is an error naming the file (%s)", err.text);
		fclose(f);
	}
	memset(&err, 0, sizeof(err));
	check(rm_file_set_limit(RM_FILE_NAMEMAP, 16) == 0, "set namemap limit");
	check(rm_file_read("/proc/self/maps", RM_FILE_NAMEMAP, &n, &err) == NULL && strstr(err.text, "grew past"),
	      "a /proc file longer than the cap is refused (%s)", err.text);
	unlink(at("grow.txt"));
	check(!strcmp(rm_file_kind_name(RM_FILE_TORUS), "torus"), "torus kind");
}

int main(void)
{
	rm_error_t err = { 0 };
	size_t len = 0, v;
	char *b;
	const char *tmp = getenv("TMPDIR");

	alarm(20); /* a FIFO that blocks the open would hang here: fail instead */
	snprintf(dir, sizeof(dir), "%s/rankmap-test-rmfile.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		fail("mkdtemp");
		return harness_done();
	}
	write_file(at("good.txt"), "hello\nworld\n");
	b = rm_file_read(at("good.txt"), RM_FILE_CONFIG, &len, &err);
	check(b && len == 12 && !strcmp(b, "hello\nworld\n"), "regular file read whole");
	free(b);
	write_file(at("empty.txt"), "");
	b = rm_file_read(at("empty.txt"), RM_FILE_CONFIG, &len, &err);
	check(b && len == 0 && b[0] == '\0', "empty file reads as an empty string");
	free(b);

	check(mkfifo(at("fifo.mtx"), 0600) == 0, "mkfifo");
	refused(at("fifo.mtx"), RM_FILE_PATTERN, "FIFO");
	check(symlink(at("fifo.mtx"), at("link.mtx")) == 0, "symlink");
	refused(at("link.mtx"), RM_FILE_PATTERN, "FIFO");
	refused("/dev/zero", RM_FILE_IB, "character device");
	check(symlink("/dev/zero", at("zero.txt")) == 0, "symlink to /dev/zero");
	refused(at("zero.txt"), RM_FILE_NAMEMAP, "character device");
	refused(dir, RM_FILE_HWLOC, "directory");
	refused(at("missing.xml"), RM_FILE_HWLOC, "No such file");
	check(symlink(at("loop1"), at("loop2")) == 0 && symlink(at("loop2"), at("loop1")) == 0, "symlink loop");
	refused(at("loop1"), RM_FILE_HWLOC, "symbolic links");

	stream_checks();

	check(rm_file_set_limit(RM_FILE_CONFIG, 8) == 0, "set limit");
	check(rm_file_limit(RM_FILE_CONFIG) == 8, "limit read back");
	refused(at("good.txt"), RM_FILE_CONFIG, "too large");
	check(rm_file_set_limit(RM_FILE_CONFIG, 0) < 0, "zero limit refused");

	setenv("RANKMAP_FILE_LIMIT_SWF", "3K", 1);
	check(rm_file_limit(RM_FILE_SWF) == 3072, "environment limit with suffix");
	setenv("RANKMAP_FILE_LIMIT_SWF", "junk", 1);
	check(rm_file_limit(RM_FILE_SWF) == (size_t)1 << 30, "bad environment limit keeps the default");
	check(rm_file_parse_size("2G", &v) == 0 && v == (size_t)2 << 30, "parse 2G");
	check(rm_file_parse_size("99999999999999999999G", &v) < 0, "overflow refused");
	check(rm_file_parse_size("-1", &v) < 0 && rm_file_parse_size("", &v) < 0, "bad sizes refused");

	memset(&err, 0, sizeof(err));
	check(rm_dir_check(dir, &err) == 0, "directory accepted");
	check(rm_dir_check(at("good.txt"), &err) < 0 && errno == ENOTDIR && strstr(err.text, "not a directory"),
	      "file as directory refused");
	memset(&err, 0, sizeof(err));
	check(rm_dir_check(at("fifo.mtx"), &err) < 0 && strstr(err.text, "FIFO"), "FIFO as directory refused");

	unlink(at("good.txt")), unlink(at("empty.txt")), unlink(at("fifo.mtx")), unlink(at("link.mtx"));
	unlink(at("zero.txt")), unlink(at("loop1")), unlink(at("loop2"));
	rmdir(dir);
	return harness_done();
}
