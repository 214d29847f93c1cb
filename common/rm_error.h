/*
 * common/rm_error.h: the error record shared by every rankmap parser and loader.
 *
 * Error rule for all of rankmap's public headers: functions return 0 on success and -1 with errno set
 * on failure; functions returning a pointer return NULL on failure. Parsers and loaders also fill a
 * caller-owned rm_error_t (may be NULL) with file, line, column and a message; the first error wins,
 * so a later, more generic failure never overwrites the precise one.
 */
#ifndef RANKMAP_RM_ERROR_H
#define RANKMAP_RM_ERROR_H

#include <stddef.h>

#define RM_ERROR_TEXT_LEN 256
#define RM_ERROR_SOURCE_LEN 256

typedef struct rm_error {
	char source[RM_ERROR_SOURCE_LEN]; /* file path, or a field/request name; "" if none */
	int line;                         /* 1-based, 0 if not applicable */
	int column;                       /* 1-based, 0 if not applicable */
	char text[RM_ERROR_TEXT_LEN];
} rm_error_t;

/* Clears err (no-op on NULL). */
void rm_error_clear(rm_error_t *err);

/* Records an error if err is non-NULL and holds none yet (the first error wins).
 * Always returns -1 so callers can write `return rm_error_set(...)`. Does not touch errno. */
int rm_error_set(rm_error_t *err, const char *source, int line, int column, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* True when err holds an error. */
int rm_error_isset(const rm_error_t *err);

/* Formats "source:line:column: text" (parts omitted when unset) into buf, cut on a character boundary
 * when it does not fit; returns buf. */
const char *rm_error_format(const rm_error_t *err, char *buf, size_t len);

/* ---- UTF-8: error texts end up in JSON, which takes only well-formed UTF-8 --------------------------- */

/* Makes s well-formed UTF-8 in place: a character cut at the end (by a truncation) is removed, any other
 * byte that does not belong to a well-formed character becomes '?'. Returns s. rm_error_set and
 * rm_error_format apply it to everything they write. */
char *rm_utf8_fix(char *s);
/* Length in bytes of the longest prefix of s of at most max bytes that ends on a character boundary:
 * for echoing a name cut to a size, as in printf("'%.*s'", rm_utf8_prefix(name, 64), name). */
int rm_utf8_prefix(const char *s, size_t max);

#endif
