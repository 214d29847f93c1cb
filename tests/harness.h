/*
 * tests/harness.h: the tiny test harness of rankmap's unit tests.
 *
 * check(cond, fmt, ...) records a pass or a failure (with file and line);
 * harness_done() prints "N passed, N failed" as the last line and returns the exit code.
 */
#ifndef RANKMAP_TEST_HARNESS_H
#define RANKMAP_TEST_HARNESS_H

#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>

static int harness_passed, harness_failed;

static inline void harness_report(int ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		harness_passed++;
		return;
	}
	harness_failed++;
	fprintf(stdout, "FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

#define check(cond, ...) harness_report(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define fail(...) harness_report(0, __FILE__, __LINE__, __VA_ARGS__)

/* Directory of test data, overridable with RANKMAP_TEST_DATA. */
static inline const char *harness_data_dir(void)
{
	const char *d = getenv("RANKMAP_TEST_DATA");
	return d ? d : "tests/data";
}

static inline int harness_done(void)
{
	printf("%d passed, %d failed\n", harness_passed, harness_failed);
	return harness_failed ? 1 : 0;
}

#endif
