/*
 * mapping/perm.c: permutation files. One line per rank, the slot index of rank i (decimal); blank
 * lines and # comments are ignored when reading.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping_private.h"
#include "rm_file.h"

int map_perm_write(const char *path, const uint32_t *perm, uint32_t n, rm_error_t *err)
{
	FILE *f = fopen(path, "w");
	uint32_t i;
	int e;

	if (!f) {
		e = errno;
		rm_error_set(err, path, 0, 0, "%s", strerror(e));
		errno = e;
		return -1;
	}
	for (i = 0; i < n; i++)
		fprintf(f, "%u\n", perm[i]);
	if (ferror(f) | fclose(f)) {
		e = errno ? errno : EIO;
		rm_error_set(err, path, 0, 0, "write failed: %s", strerror(e));
		errno = e;
		return -1;
	}
	return 0;
}

static int perm_push(uint32_t **p, uint32_t *n, uint32_t *cap, uint32_t v)
{
	if (*n == *cap) {
		uint32_t nc = *cap ? 2 * *cap : 256, *np = realloc(*p, (size_t)nc * sizeof(*np));

		if (!np)
			return -1;
		*p = np;
		*cap = nc;
	}
	(*p)[(*n)++] = v;
	return 0;
}

uint32_t *map_perm_read(const char *path, uint32_t *n_out, rm_error_t *err)
{
	FILE *f = rm_file_fopen(path, RM_FILE_PERM, NULL, err);
	uint32_t *p = NULL, n = 0, cap = 0;
	char *line = NULL, *q, *s;
	size_t lcap = 0;
	int lineno = 0, rc = 0;

	if (!f)
		return NULL;
	while (rc == 0 && getline(&line, &lcap, f) >= 0) {
		unsigned long v;

		lineno++;
		for (s = line; isspace((unsigned char)*s); s++)
			;
		if (*s == '\0' || *s == '#')
			continue;
		errno = 0;
		v = strtoul(s, &q, 10);
		while (isspace((unsigned char)*q))
			q++;
		if (!isdigit((unsigned char)*s) || errno || v >= UINT32_MAX || (*q && *q != '#'))
			rc = rm_error_set(err, path, lineno, 0, "expected one slot index per line");
		else if (n >= MAP_MAX_RANKS)
			rc = rm_error_set(err, path, lineno, 0, "more than %u ranks", MAP_MAX_RANKS);
		else if (perm_push(&p, &n, &cap, (uint32_t)v) < 0)
			rc = rm_error_set(err, path, lineno, 0, "out of memory");
	}
	if (rc == 0)
		rc = rm_file_stream_error(f, path, RM_FILE_PERM, err);
	free(line);
	fclose(f);
	if (rc == 0 && n == 0)
		rc = rm_error_set(err, path, 0, 0, "empty permutation file");
	if (rc < 0) {
		free(p);
		errno = EINVAL;
		return NULL;
	}
	*n_out = n;
	return p;
}
