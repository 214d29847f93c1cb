/*
 * common/hostlist.c: Slurm-style host lists (see hostlist.h).
 *
 * Expansion: comma-separated items, each a name with any number of bracket groups
 * "prefix[1-3,7]mid[01-02]suffix" (the cartesian product, leftmost group slowest). A range keeps the
 * zero padding of its lower bound ("[08-10]" gives 08 09 10). Compression: consecutive names with the
 * same prefix and number width join one bracket group, in the given order.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

#define HOSTLIST_DEFAULT_MAX 1000000

struct names {
	char **v;
	size_t n, cap, max;
};

static int names_push(struct names *N, const char *s, size_t len)
{
	if (N->n + 1 >= N->cap) {
		size_t cap = N->cap ? N->cap * 2 : 16;
		char **v = realloc(N->v, cap * sizeof(*v));

		if (!v)
			return -1;
		N->v = v;
		N->cap = cap;
	}
	N->v[N->n] = strndup(s, len);
	if (!N->v[N->n])
		return -1;
	N->v[++N->n] = NULL;
	return 0;
}

void hostlist_free(char **hosts)
{
	size_t i;

	if (!hosts)
		return;
	for (i = 0; hosts[i]; i++)
		free(hosts[i]);
	free(hosts);
}

struct hl_parse {
	const char *expr;
	rm_error_t *err;
	struct names *out;
};

static int hl_err(struct hl_parse *P, const char *at, const char *what)
{
	errno = EINVAL;
	return rm_error_set(P->err, "hostlist", 1, (int)(at - P->expr) + 1, "%s in '%s'", what, P->expr);
}

/* Expands item [s, e) with the text already built in buf[0..blen). Recursive over bracket groups. */
static int expand_item(struct hl_parse *P, const char *s, const char *e, char *buf, size_t blen, size_t bcap)
{
	const char *open = memchr(s, '[', (size_t)(e - s)), *close, *r;

	if (!open) {
		if (blen + (size_t)(e - s) >= bcap)
			return hl_err(P, s, "host name too long");
		memcpy(buf + blen, s, (size_t)(e - s));
		if (P->out->n >= P->out->max)
			return hl_err(P, s, "too many hosts");
		return names_push(P->out, buf, blen + (size_t)(e - s)) < 0 ? hl_err(P, s, "out of memory") : 0;
	}
	close = memchr(open, ']', (size_t)(e - open));
	if (!close)
		return hl_err(P, open, "unbalanced '['");
	if (open + 1 == close)
		return hl_err(P, open, "empty brackets");
	if (blen + (size_t)(open - s) >= bcap)
		return hl_err(P, s, "host name too long");
	memcpy(buf + blen, s, (size_t)(open - s));
	blen += (size_t)(open - s);
	for (r = open + 1; r < close;) {
		const char *t = r, *dash = NULL, *comma;
		unsigned long lo, hi, v;
		int width;

		comma = memchr(r, ',', (size_t)(close - r));
		if (!comma)
			comma = close;
		for (; t < comma; t++)
			if (*t == '-' && !dash)
				dash = t;
			else if (!isdigit((unsigned char)*t))
				return hl_err(P, t, "bad character in range");
		if (r == comma || dash == r || (dash && dash + 1 == comma))
			return hl_err(P, r, "empty range bound");
		if ((dash ? dash - r : comma - r) > 18 || (dash && comma - dash - 1 > 18))
			return hl_err(P, r, "number too long");
		lo = strtoul(r, NULL, 10);
		hi = dash ? strtoul(dash + 1, NULL, 10) : lo;
		if (hi < lo)
			return hl_err(P, r, "range goes down");
		if (hi - lo >= P->out->max)
			return hl_err(P, r, "too many hosts");
		width = (int)((dash ? dash : comma) - r);
		for (v = lo; v <= hi; v++) {
			int k = snprintf(buf + blen, bcap - blen, "%0*lu", width, v);

			if (k < 0 || (size_t)k >= bcap - blen)
				return hl_err(P, r, "host name too long");
			if (expand_item(P, close + 1, e, buf, blen + (size_t)k, bcap) < 0)
				return -1;
		}
		r = comma < close ? comma + 1 : close;
		if (comma < close && r == close)
			return hl_err(P, comma, "empty range bound");
	}
	return 0;
}

char **hostlist_expand(const char *expr, size_t *n, size_t max_hosts, rm_error_t *err)
{
	struct names N = { .max = max_hosts ? max_hosts : HOSTLIST_DEFAULT_MAX };
	struct hl_parse P = { .expr = expr, .err = err, .out = &N };
	const char *s = expr, *e, *open_at = NULL;
	char buf[1024];
	int depth = 0;

	if (!expr || !n) {
		errno = EINVAL;
		rm_error_set(err, "hostlist", 0, 0, "no host list given");
		return NULL;
	}
	if (names_push(&N, "", 0) < 0)
		goto fail;
	free(N.v[0]);
	N.v[0] = NULL;
	N.n = 0;
	while (*s) {
		for (e = s, depth = 0; *e && (depth || *e != ','); e++) {
			if (*e == '[')
				open_at = e;
			if (*e == '[' && ++depth > 1)
				return hl_err(&P, e, "nested '['"), hostlist_free(N.v), NULL;
			if (*e == ']' && --depth < 0)
				return hl_err(&P, e, "unbalanced ']'"), hostlist_free(N.v), NULL;
			if (isspace((unsigned char)*e))
				return hl_err(&P, e, "space"), hostlist_free(N.v), NULL;
		}
		if (depth)
			return hl_err(&P, open_at, "unbalanced '['"), hostlist_free(N.v), NULL;
		if (e == s)
			return hl_err(&P, s, "empty host name"), hostlist_free(N.v), NULL;
		if (expand_item(&P, s, e, buf, 0, sizeof(buf)) < 0)
			goto fail;
		s = *e ? e + 1 : e;
		if (*e && !*s)
			return hl_err(&P, e, "trailing ','"), hostlist_free(N.v), NULL;
	}
	*n = N.n;
	return N.v;
fail:
	hostlist_free(N.v);
	if (!rm_error_isset(err))
		rm_error_set(err, "hostlist", 0, 0, "out of memory");
	return NULL;
}

/* ---- compression ------------------------------------------------------------------------------ */

/* Splits a name into prefix length and trailing number; *digits = 0 when there is none. */
static void split_name(const char *s, size_t *plen, size_t *digits, unsigned long *num)
{
	size_t len = strlen(s), i = len;

	while (i > 0 && isdigit((unsigned char)s[i - 1]) && len - i < 18)
		i--;
	*plen = i;
	*digits = len - i;
	*num = *digits ? strtoul(s + i, NULL, 10) : 0;
}

struct sbuf {
	char *s;
	size_t len, cap;
	int oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->cap ? b->cap * 2 : 256) + n;
		char *p = realloc(b->s, cap);

		if (!p) {
			b->oom = 1;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* True when name j can join a group whose first member is i (same prefix, compatible width). */
static int same_group(const char *a, const char *b)
{
	size_t pa, da, pb, db;
	unsigned long na, nb;

	split_name(a, &pa, &da, &na);
	split_name(b, &pb, &db, &nb);
	if (!da || !db || pa != pb || strncmp(a, b, pa))
		return 0;
	if (a[pa] == '0' && da > 1) /* zero-padded group: same width */
		return db == da;
	return !(b[pb] == '0' && db > 1) && (db == da || nb > 0);
}

/* Writes one group hosts[i..j) as prefix[ranges] (or the bare name). */
static void emit_group(struct sbuf *b, const char *const *hosts, size_t i, size_t j)
{
	size_t plen, dg, k = i;
	unsigned long num;
	char tmp[64];
	int width;

	split_name(hosts[i], &plen, &dg, &num);
	width = (hosts[i][plen] == '0' && dg > 1) ? (int)dg : 0;
	sb_add(b, hosts[i], plen);
	if (j - i == 1) {
		sb_add(b, hosts[i] + plen, dg);
		return;
	}
	sb_add(b, "[", 1);
	while (k < j) {
		unsigned long lo, hi, v;
		size_t p2, d2;

		split_name(hosts[k], &p2, &d2, &lo);
		hi = lo;
		while (k + 1 < j && (split_name(hosts[k + 1], &p2, &d2, &v), v == hi + 1))
			hi = v, k++;
		k++;
		snprintf(tmp, sizeof(tmp), lo == hi ? "%0*lu" : "%0*lu-%0*lu", width, lo, width, hi);
		sb_add(b, tmp, strlen(tmp));
		if (k < j)
			sb_add(b, ",", 1);
	}
	sb_add(b, "]", 1);
}

char *hostlist_compress(const char *const *hosts, size_t n)
{
	struct sbuf b = { 0 };
	size_t i = 0;

	sb_add(&b, "", 0);
	while (i < n) {
		size_t j = i + 1;

		while (j < n && same_group(hosts[i], hosts[j]))
			j++;
		if (i)
			sb_add(&b, ",", 1);
		emit_group(&b, hosts, i, j);
		i = j;
	}
	if (b.oom) {
		free(b.s);
		errno = ENOMEM;
		return NULL;
	}
	return b.s;
}
