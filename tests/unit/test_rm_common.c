/*
 * common/: error texts are well-formed UTF-8 whatever was cut or passed in (checked against jansson's
 * own UTF-8 check, which is what refuses them in a response), rm_utf8_prefix cuts on boundaries, and
 * rm_tmpfile_beside gives every call a file of its own.
 */
#include "tests/harness.h"
#include "common/rm_error.h"
#include "common/rm_tmpfile.h"
#include "daemon/client/rm_client.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>

/* The independent check: jansson accepts s as a JSON string. */
static int json_ok(const char *s)
{
	json_t *j = json_string(s);
	int ok = j != NULL;

	json_decref(j);
	return ok;
}

static void repeat(char *buf, size_t size, const char *prefix, const char *unit, size_t times)
{
	size_t i;

	snprintf(buf, size, "%s", prefix);
	for (i = 0; i < times; i++)
		strncat(buf, unit, size - strlen(buf) - 1);
}

static void test_error_cut(void)
{
	char big[2048], out[64];
	rm_error_t e = { 0 };
	json_t *r;
	size_t n;

	repeat(big, sizeof(big), "a", "\xe2\x82\xac", 200); /* 'a' then 200 x U+20AC: byte 256 is mid-character */
	rm_error_set(&e, big, 1, 0, "unknown field '%s'", big);
	n = strlen(e.text);
	check(json_ok(e.text), "text cut by the buffer is well-formed UTF-8");
	check(n >= sizeof(e.text) - 4 && !memcmp(e.text + n - 3, "\xe2\x82\xac", 3),
	      "only the cut character is lost (%zu bytes, ends on a whole U+20AC)", n);
	check(json_ok(e.source) && strlen(e.source) >= sizeof(e.source) - 4, "source cut on a boundary too");
	rm_error_format(&e, out, sizeof(out));
	check(json_ok(out) && strlen(out) >= sizeof(out) - 4, "rm_error_format into a small buffer: well-formed");
	r = rm_proto_error(NULL, RM_ERR_BAD_REQUEST, "%s", big);
	check(r != NULL, "rm_proto_error of a long multibyte text still makes a response");
	json_decref(r);
	r = rm_proto_error(NULL, RM_ERR_BAD_REQUEST, "x%s %s", big, big); /* byte 511 is mid-character */
	check(r != NULL && json_string_length(json_object_get(json_object_get(r, "error"), "message")) >= 508,
	      "rm_proto_error of a text cut at 511 bytes mid-character still makes a response");
	json_decref(r);
	rm_error_clear(&e);
	rm_error_set(&e, "caf\xe9.mtx", 3, 0, "bad byte \xff here");
	check(!strcmp(e.source, "caf?.mtx") && !strcmp(e.text, "bad byte ? here"), "stray bytes become '?' (%s: %s)",
	      e.source, e.text);
}

/* Every string of up to four bytes from a set covering the boundaries of RFC 3629: rm_utf8_fix leaves
 * what jansson accepts unchanged, and turns what it refuses into something it accepts. */
static void test_fix_vs_jansson(void)
{
	static const unsigned char b[] = { 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf,
					   0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff };
	size_t nb = sizeof(b), i, j, k, l, len, bad = 0, total = 0;
	char s[8], t[8];

	for (len = 1; len <= 4; len++)
		for (i = 0; i < nb; i++)
			for (j = 0; j < (len > 1 ? nb : 1); j++)
				for (k = 0; k < (len > 2 ? nb : 1); k++)
					for (l = 0; l < (len > 3 ? nb : 1); l++) {
						unsigned char v[4] = { b[i], b[j], b[k], b[l] };
						memcpy(s, v, len);
						s[len] = 0;
						memcpy(t, s, len + 1);
						rm_utf8_fix(t);
						total++;
						if (json_ok(s) ? strcmp(s, t) != 0 : !json_ok(t) || !strcmp(s, t))
							bad++;
					}
	check(bad == 0, "rm_utf8_fix agrees with jansson on %zu strings (%zu disagree)", total, bad);
}

static void test_prefix(void)
{
	const char *s = "a\xe2\x82\xac\xe2\x82\xac"; /* a, U+20AC, U+20AC: 7 bytes */
	const char *emoji = "\xf0\x9f\x98\x80!";

	check(rm_utf8_prefix(s, 3) == 1 && rm_utf8_prefix(s, 4) == 4 && rm_utf8_prefix(s, 6) == 4 &&
		      rm_utf8_prefix(s, 7) == 7 && rm_utf8_prefix(s, 100) == 7,
	      "prefix ends on character boundaries");
	check(rm_utf8_prefix(emoji, 3) == 0 && rm_utf8_prefix(emoji, 4) == 4, "a 4-byte character is kept whole");
	check(rm_utf8_prefix("plain", 3) == 3, "ASCII cut anywhere");
}

static void test_tmpfile(void)
{
	char dir[] = "/tmp/rankmap-tmpfile.XXXXXX", path[256], a[300], b[300], small[16];
	struct stat st;
	int fa, fb;

	if (!mkdtemp(dir)) {
		fail("mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/target.xml", dir);
	fa = rm_tmpfile_beside(path, 0600, a, sizeof(a));
	fb = rm_tmpfile_beside(path, 0600, b, sizeof(b));
	check(fa >= 0 && fb >= 0 && strcmp(a, b) != 0, "two calls, two files (%s, %s)", a, b);
	check(!strncmp(a, dir, strlen(dir)) && a[strlen(dir) + 1] == '.' && strstr(a, "target.xml.tmp."),
	      "beside the target, hidden: %s", a);
	check(stat(a, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600, "created with the mode");
	check(access(path, F_OK) < 0, "the target itself is untouched");
	check(rm_tmpfile_beside(path, 0600, small, sizeof(small)) < 0 && errno == ENAMETOOLONG,
	      "a name that does not fit: ENAMETOOLONG");
	if (fa >= 0)
		close(fa), unlink(a);
	if (fb >= 0)
		close(fb), unlink(b);
	rmdir(dir);
}

int main(void)
{
	test_error_cut();
	test_fix_vs_jansson();
	test_prefix();
	test_tmpfile();
	return harness_done();
}
