/* common/rm_error.c: the shared error record (see rm_error.h). */
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
	return buf;
}
