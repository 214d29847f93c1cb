/*
 * daemon/client/json_out.c: JSON text as rankmap writes it (rm_client.h): every real number in its
 * shortest form that reads back to the same double (9.94, not jansson's %.17g 9.9399999999999995),
 * for rankmapd's frames and rankmapctl's --json alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm_client.h"

/* The shortest "%.{p}g" of v that strtod reads back as v, into buf (at least 32 bytes), with ".0"
 * added when it would read as an integer. Returns its length. */
static size_t shortest(double v, char *buf)
{
	int p, n = 0;

	for (p = 1; p <= 17; p++) {
		n = snprintf(buf, 32, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".eEni")) /* "inf"/"nan" never reach JSON: jansson refuses them */
		n += snprintf(buf + n, 32 - (size_t)n, ".0");
	return (size_t)n;
}

size_t rm_json_shorten_reals(char *s, size_t len)
{
	size_t r = 0, w = 0;
	int in_str = 0;

	while (r < len) {
		char ch = s[r];

		if (in_str) {
			s[w++] = s[r++];
			if (ch == '\\' && r < len)
				s[w++] = s[r++];
			else if (ch == '"')
				in_str = 0;
			continue;
		}
		if (ch == '"') {
			in_str = 1;
			s[w++] = s[r++];
		} else if (ch == '-' || (ch >= '0' && ch <= '9')) {
			size_t e = r, k;
			char tok[40], out[32];

			while (e < len && s[e] && strchr("+-0123456789.eE", s[e]))
				e++;
			memcpy(tok, s + r, e - r < sizeof(tok) ? e - r : 0);
			tok[e - r < sizeof(tok) ? e - r : 0] = '\0';
			if (strpbrk(tok, ".eE")) { /* a real (an integer has none of these) */
				k = shortest(strtod(tok, NULL), out);
				if (k <= e - r) { /* never longer: jansson's %.17g has at least as many digits */
					memcpy(s + w, out, k);
					w += k;
					r = e;
					continue;
				}
			}
			memmove(s + w, s + r, e - r);
			w += e - r;
			r = e;
		} else
			s[w++] = s[r++];
	}
	return w;
}

char *rm_json_dumps(const json_t *j, size_t flags)
{
	char *s = json_dumps(j, flags | JSON_REAL_PRECISION(17));

	if (s)
		s[rm_json_shorten_reals(s, strlen(s))] = '\0';
	return s;
}

int rm_json_print(FILE *f, const json_t *j, size_t flags)
{
	char *s = rm_json_dumps(j, flags);
	int rc = s && fputs(s, f) >= 0 && fputc('\n', f) != EOF ? 0 : -1;

	free(s);
	return rc;
}
