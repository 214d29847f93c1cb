/*
 * common/rm_text.h: small helpers for the line-oriented config files (cluster, torus, rankmapd).
 *
 * Error rule: 0 on success, -1 with errno set on failure; pointer-returning functions return a pointer
 * inside the caller's buffer (they cannot fail). Everything works in place: nothing is allocated.
 */
#ifndef RANKMAP_RM_TEXT_H
#define RANKMAP_RM_TEXT_H

/* Strips leading and trailing white space (isspace) from s in place: writes a '\0' after the last
 * non-space character and returns a pointer to the first one, inside s. */
char *rm_trim(char *s);

/* The `key = value` reader of the config files (cluster files, torus configs, rankmapd.conf), one
 * line at a time, in place:
 * rm_config_line() cuts a '#' comment and trims; returns the content inside line ("" for a blank or
 * comment-only line).
 * rm_kv_split() splits content "key = value" at the first '=': *key and *value trimmed, a value in
 * double quotes loses them. Returns 0, or -1 (errno EINVAL) when there is no '=' (the caller names
 * the file and line in its error). */
char *rm_config_line(char *line);
int rm_kv_split(char *s, char **key, char **value);

#endif
