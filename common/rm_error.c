/* common/rm_error.c: the shared error record (see rm_error.h). */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rm_error.h"

void rm_error_clear(rm_error_t *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}

int rm_error_isset(const rm_error_t *err)
{
	return err && err->text[0] != '\0';
}

int rm_error_set(rm_error_t *err, const char *source, int line, int column, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->text[0] != '\0')
		return -1;
	snprintf(err->source, sizeof(err->source), "%s", source ? source : "");
	err->line = line;
	err->column = column;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	rm_utf8_fix(err->source);
	rm_utf8_fix(err->text);
	if (err->text[0] == '\0')
		snprintf(err->text, sizeof(err->text), "unknown error");
	return -1;
}

const char *rm_error_format(const rm_error_t *err, char *buf, size_t len)
{
	if (!err || !rm_error_isset(err)) {
		snprintf(buf, len, "no error");
		return buf;
	}
	if (err->source[0] && err->line > 0 && err->column > 0)
		snprintf(buf, len, "%s:%d:%d: %s", err->source, err->line, err->column, err->text);
	else if (err->source[0] && err->line > 0)
		snprintf(buf, len, "%s:%d: %s", err->source, err->line, err->text);
	else if (err->source[0])
		snprintf(buf, len, "%s: %s", err->source, err->text);
	else
		snprintf(buf, len, "%s", err->text);
	return rm_utf8_fix(buf);
}

/* Bytes of the well-formed UTF-8 character (RFC 3629: no overlong form, no surrogate, at most
 * U+10FFFF) that p starts, 1 to 4; 0 when it starts none. Reads no byte past a NUL. */
static size_t utf8_char(const unsigned char *p)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xBF;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
	else
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

/* Does p hold only the start of a character, cut by the end of the string? */
static int cut_at_end(const unsigned char *p)
{
	size_t need = *p >= 0xF0 ? 4 : *p >= 0xE0 ? 3 : 2, i;

	if (*p < 0xC2 || *p > 0xF4)
		return 0;
	for (i = 1; p[i]; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	return i < need;
}

char *rm_utf8_fix(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t n;

	while (*p) {
		if ((n = utf8_char(p))) {
			p += n;
		} else if (cut_at_end(p)) {
			*p = '\0';
			break;
		} else {
			*p++ = '?';
		}
	}
	return s;
}

int rm_utf8_prefix(const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = 0, n;

	while (p[len] && len < INT_MAX) {
		n = utf8_char(p + len);
		n = n ? n : 1; /* a stray byte stands alone (rm_utf8_fix makes it '?') */
		if (len + n > max)
			break;
		len += n;
	}
	return (int)len;
}
