/*
 * common/rm_text.h: small helpers for the line-oriented config files (cluster, torus, rankmapd).
 */
#ifndef RANKMAP_RM_TEXT_H
#define RANKMAP_RM_TEXT_H

/* Strips leading and trailing white space (isspace) from s in place: writes a '\0' after the last
 * non-space character and returns a pointer to the first one, inside s. */
char *rm_trim(char *s);

#endif
