/*
 * common/rm_slurmconf.c: the NodeName= lines of slurm.conf (rm_slurmconf.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hostlist.h"
#include "rm_file.h"
#include "rm_slurmconf.h"

#define SC_MAX_NAMES 1000000
#define SC_MAX_DEPTH 8
#define SC_MAX_FILES 256

typedef struct sc_names {
	char **v;
	size_t n, cap;
	size_t nfiles; /* files read so far (Include patterns can name many) */
	int included;  /* the error already says "included from" (the innermost Include named) */
} sc_names_t;

static int names_add(sc_names_t *s, char **add, size_t n)
{
	size_t i;

	if (s->n + n > SC_MAX_NAMES) {
		errno = E2BIG;
		return -1;
	}
	if (s->n + n + 1 > s->cap) {
		size_t cap = (s->n + n + 1) * 2;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v, s->cap = cap;
	}
	for (i = 0; i < n; i++)
		s->v[s->n++] = add[i], add[i] = NULL;
	s->v[s->n] = NULL;
	return 0;
}

static int read_file(const char *path, sc_names_t *s, int depth, rm_error_t *err);

/* An error inside an included file (or its absence) also names the Include line that led there, as a C
 * compiler does: "inc.conf:3:10: ... (included from slurm.conf:12, from site.conf:4)", innermost first.
 * The error's own text is cut (on a character boundary, "...") where the whole would not fit, never the
 * chain of includes. */
static void included_from(rm_error_t *err, sc_names_t *s, const char *from, int line)
{
	char add[RM_ERROR_TEXT_LEN];
	size_t tl, al;
	int k;

	if (!err || !rm_error_isset(err))
		return;
	tl = strlen(err->text);
	if (s->included && tl && err->text[tl - 1] == ')')
		tl--;
	k = snprintf(add, sizeof(add), "%s %s:%d)", s->included ? ", from" : " (included from", from, line);
	al = k < 0 ? 0 : (size_t)k < sizeof(add) ? (size_t)k : sizeof(add) - 1;
	if (tl + al >= sizeof(err->text)) { /* cut the text before it, on a character boundary */
		tl = al + 4 < sizeof(err->text) ? sizeof(err->text) - 1 - al - 3 : 0;
		while (tl && ((unsigned char)err->text[tl] & 0xc0) == 0x80)
			tl--;
		memcpy(err->text + tl, "...", tl ? 3 : 0);
		tl += tl ? 3 : 0;
	}
	if (tl + al >= sizeof(err->text))
		al = sizeof(err->text) - 1 - tl;
	memcpy(err->text + tl, add, al);
	err->text[tl + al] = '\0';
	s->included = 1;
}

/* `Include PATTERN`: every file the pattern names, relative to the including file's directory. */
static int include(const char *from, const char *arg, sc_names_t *s, int depth, int line, rm_error_t *err)
{
	char *pat;
	glob_t g;
	size_t i;
	int rc = 0;

	if (depth >= SC_MAX_DEPTH)
		return rm_error_set(err, from, line, 0, "Include nested more than %d deep", SC_MAX_DEPTH);
	if (arg[0] == '/' || !strrchr(from, '/'))
		pat = strdup(arg);
	else if (asprintf(&pat, "%.*s/%s", (int)(strrchr(from, '/') - from), from, arg) < 0)
		pat = NULL;
	if (!pat)
		return rm_error_set(err, from, line, 0, "out of memory");
	if (glob(pat, GLOB_NOCHECK, NULL, &g) != 0) {
		free(pat);
		return rm_error_set(err, from, line, 0, "Include %s: no such file", arg);
	}
	for (i = 0; i < g.gl_pathc && rc == 0; i++)
		rc = read_file(g.gl_pathv[i], s, depth + 1, err);
	if (rc < 0)
		included_from(err, s, from, line);
	globfree(&g);
	free(pat);
	return rc;
}

/* One logical line (comments and continuations already removed): its NodeName= values, or an Include. */
static int parse_line(const char *path, int line, char *text, sc_names_t *s, int depth, rm_error_t *err)
{
	char *p = text + strspn(text, " \t"), *tok, *save = NULL;

	if (!strncasecmp(p, "include", 7) && (p[7] == ' ' || p[7] == '\t')) {
		char *arg = p + 7 + strspn(p + 7, " \t"), *end = arg + strlen(arg);

		while (end > arg && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		return *arg ? include(path, arg, s, depth, line, err)
			    : rm_error_set(err, path, line, 0, "Include: no file");
	}
	for (tok = strtok_r(p, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		rm_error_t herr = { 0 };
		char **names;
		size_t n = 0;
		int rc;

		if (strncasecmp(tok, "NodeName=", 9) || !strcasecmp(tok + 9, "DEFAULT"))
			continue;
		if (!tok[9])
			return rm_error_set(err, path, line, (int)(tok - text) + 1, "NodeName=: no name");
		if (!(names = hostlist_expand(tok + 9, &n, SC_MAX_NAMES, &herr)))
			return rm_error_set(err, path, line, (int)(tok - text) + 10, "NodeName=%.*s: %s",
					    rm_utf8_prefix(tok + 9, 64), tok + 9, herr.text);
		rc = names_add(s, names, n);
		hostlist_free(names);
		if (rc < 0)
			return rm_error_set(err, path, line, 0, "%s",
					    errno == E2BIG ? "more than 1,000,000 node names" : "out of memory");
	}
	return 0;
}

/* Appends k bytes of l and a blank to the logical line (b, its length *len and capacity *cap). */
static int append(char **b, size_t *len, size_t *cap, const char *l, size_t k)
{
	if (*len + k + 2 > *cap) {
		size_t c = (*len + k + 2) * 2;
		char *t = realloc(*b, c);

		if (!t)
			return -1;
		*b = t, *cap = c;
	}
	memcpy(*b + *len, l, k);
	*len += k;
	(*b)[(*len)++] = ' ';
	(*b)[*len] = '\0';
	return 0;
}

static int read_file(const char *path, sc_names_t *s, int depth, rm_error_t *err)
{
	char *buf, *l, *next, *logical = NULL;
	size_t len = 0, ll = 0, cap = 0;
	int line = 0, first = 0, rc = 0;

	if (++s->nfiles > SC_MAX_FILES)
		return rm_error_set(err, path, 0, 0, "more than %d files included", SC_MAX_FILES);
	if (!(buf = rm_file_read(path, RM_FILE_CONFIG, &len, err)))
		return -1;
	for (l = buf; l && *l && rc == 0; l = next) {
		char *hash, *end;
		int cont;

		next = strchr(l, '\n');
		if (next)
			*next++ = '\0';
		line++;
		if ((hash = strchr(l, '#')))
			*hash = '\0';
		end = l + strlen(l);
		while (end > l && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
			end--;
		cont = end > l && end[-1] == '\\' && !hash;
		if (!ll)
			first = line;
		if (append(&logical, &ll, &cap, l, (size_t)(end - l) - (size_t)cont) < 0) {
			rc = rm_error_set(err, path, line, 0, "out of memory");
			break;
		}
		if (cont && next)
			continue;
		rc = parse_line(path, first, logical, s, depth, err);
		ll = 0;
	}
	free(logical);
	free(buf);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **rm_slurm_conf_nodes(const char *path, size_t *n, rm_error_t *err)
{
	sc_names_t s = { 0 };
	size_t i, k = 0;

	*n = 0;
	if (names_add(&s, NULL, 0) < 0 || read_file(path, &s, 0, err) < 0) {
		if (!errno)
			errno = EINVAL;
		rm_error_set(err, path, 0, 0, "out of memory");
		while (s.n)
			free(s.v[--s.n]);
		free(s.v);
		return NULL;
	}
	qsort(s.v, s.n, sizeof(*s.v), cmp_str);
	for (i = 0; i < s.n; i++) {
		if (k && !strcmp(s.v[k - 1], s.v[i]))
			free(s.v[i]);
		else
			s.v[k++] = s.v[i];
	}
	s.v[k] = NULL;
	*n = k;
	return s.v;
}
