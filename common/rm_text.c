/*
 * common/rm_text.c: small helpers for the line-oriented config files.
 */
#include <ctype.h>
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
