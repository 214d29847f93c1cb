/*
 * tests/harness.h: the tiny test harness of rankmap's unit tests.
 *
 * check(cond, fmt, ...) records a pass or a failure (with file and line);
 * skip(fmt, ...) records a check that could not run here, with its reason ("SKIP - reason (file:line)"):
 * a skip is not a pass, tests/run.sh lists it and fails it in CI unless it is allowed there
 * (tests/README.md);
 * harness_done() prints "N passed, N failed" (", N skipped" when there were skips) as the last line
 * and returns the exit code.
 */
#ifndef RANKMAP_TEST_HARNESS_H
#define RANKMAP_TEST_HARNESS_H

#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>

static int harness_passed, harness_failed, harness_skipped;

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

static inline void harness_skip(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	harness_skipped++;
	fputs("SKIP - ", stdout);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fprintf(stdout, " (%s:%d)\n", file, line);
	fflush(stdout);
}

#define check(cond, ...) harness_report(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define fail(...) harness_report(0, __FILE__, __LINE__, __VA_ARGS__)
#define skip(...) harness_skip(__FILE__, __LINE__, __VA_ARGS__)

/* Directory of test data, overridable with RANKMAP_TEST_DATA. */
static inline const char *harness_data_dir(void)
{
	const char *d = getenv("RANKMAP_TEST_DATA");
	return d ? d : "tests/data";
}

static inline int harness_done(void)
{
	if (harness_skipped)
		printf("%d passed, %d failed, %d skipped\n", harness_passed, harness_failed, harness_skipped);
	else
		printf("%d passed, %d failed\n", harness_passed, harness_failed);
	return harness_failed ? 1 : 0;
}

#endif
