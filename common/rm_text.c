/*
 * common/rm_text.c: small helpers for the line-oriented config files.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "rm_text.h"

char *rm_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

char *rm_config_line(char *line)
{
	line[strcspn(line, "#")] = '\0';
	return rm_trim(line);
}

int rm_kv_split(char *s, char **key, char **value)
{
	char *eq = strchr(s, '=');
	size_t n;

	if (!eq) {
		errno = EINVAL;
		return -1;
	}
	*eq = '\0';
	*key = rm_trim(s);
	*value = rm_trim(eq + 1);
	n = strlen(*value);
	if (n >= 2 && (*value)[0] == '"' && (*value)[n - 1] == '"') {
		(*value)[n - 1] = '\0';
		++*value;
	}
	return 0;
}
