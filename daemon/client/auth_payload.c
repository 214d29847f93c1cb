/*
 * daemon/client/auth_payload.c: the texts of the TCP handshake, protocol version 2 (see rm_client.h,
 * "TCP authentication"): the hello, the payloads of the server's and the client's MUNGE credentials,
 * nonces, and the form of an endpoint's identity. Both ends use these functions, so that what one writes
 * is exactly what the other expects; the server compares the client's payload byte for byte with the one
 * it expects, and the client parses the server's strictly. Nothing here does I/O but getrandom().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/random.h>

#include "rm_client.h"

static int is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

int rm_auth_hello_check(const char *payload, size_t len, char *cnonce, char *why, size_t whylen)
{
	size_t pl = strlen(RM_AUTH_HELLO_PREFIX);

	if (len && payload[0] == '{') {
		snprintf(why, whylen,
			 "a request without authentication: over TCP a connection opens with a hello (protocol "
			 "version %d)",
			 RM_AUTH_VERSION);
		return -1;
	}
	if (len >= 6 && !memcmp(payload, "MUNGE:", 6)) {
		snprintf(why, whylen,
			 "a credential without a hello: a client of TCP authentication version 1; this rankmapd "
			 "speaks version %d (update rankmap on the client)",
			 RM_AUTH_VERSION);
		return -1;
	}
	if (len > 14 && !memcmp(payload, "rankmap-hello ", 14) &&
	    (len < pl || memcmp(payload, RM_AUTH_HELLO_PREFIX, pl))) {
		snprintf(why, whylen, "hello of another TCP authentication version (this rankmapd speaks version %d)",
			 RM_AUTH_VERSION);
		return -1;
	}
	if (len != RM_AUTH_HELLO_LEN || memcmp(payload, RM_AUTH_HELLO_PREFIX, pl) ||
	    !is_hex(payload + pl, RM_AUTH_NONCE_HEX)) {
		snprintf(why, whylen, "the first frame is not a rankmap hello (\"%s\" and %d hex digits)",
			 RM_AUTH_HELLO_PREFIX, RM_AUTH_NONCE_HEX);
		return -1;
	}
	memcpy(cnonce, payload + pl, RM_AUTH_NONCE_HEX);
	cnonce[RM_AUTH_NONCE_HEX] = '\0';
	return 0;
}

int rm_auth_nonce(char *buf)
{
	unsigned char r[RM_AUTH_NONCE_HEX / 2];
	size_t got = 0;
	ssize_t n;
	int i;

	while (got < sizeof(r)) {
		n = getrandom(r + got, sizeof(r) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	for (i = 0; i < (int)sizeof(r); i++)
		snprintf(buf + 2 * i, 3, "%02x", r[i]);
	return 0;
}

/* A server name: a plain host name ([A-Za-z0-9.-], not empty, at most RM_AUTH_NAME_MAX bytes). */
static int name_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || n > RM_AUTH_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '.' || s[i] == '-'))
			return 0;
	return 1;
}

/* An identity: "A.B.C.D:P" or "[V6]:P" as rm_auth_format_addr writes it ([0-9a-f.:[]] only). */
static int ident_ok(const char *s, size_t n)
{
	size_t i;

	if (n < 3 || n > RM_AUTH_IDENT_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || s[i] == '.' || s[i] == ':' ||
		      s[i] == '[' || s[i] == ']'))
			return 0;
	return 1;
}

int rm_auth_server_payload(char *buf, size_t len, const char *cnonce, const char *snonce, const char *ident,
			   const char *name)
{
	int n;

	if (!name || !*name)
		name = "-";
	else if (!name_ok(name, strlen(name)))
		return errno = EINVAL, -1;
	n = snprintf(buf, len, "%s%s %s %s %s", RM_AUTH_SERVER_PREFIX, cnonce, snonce, ident, name);
	if (n < 0 || (size_t)n >= len)
		return errno = ENAMETOOLONG, -1;
	return n;
}

int rm_auth_client_payload(char *buf, size_t len, const char *cnonce, const char *snonce, const char *ident)
{
	int n = snprintf(buf, len, "%s%s %s %s", RM_AUTH_CLIENT_PREFIX, cnonce, snonce, ident);

	if (n < 0 || (size_t)n >= len)
		return errno = ENAMETOOLONG, -1;
	return n;
}

/* The next field of [p, end): up to a space (skipped) or the end. Returns its length. */
static size_t field(const char **p, const char *end, const char **start)
{
	const char *s = *p;

	*start = s;
	while (s < end && *s != ' ')
		s++;
	*p = s < end ? s + 1 : s;
	return (size_t)(s - *start);
}

int rm_auth_server_parse(const void *payload, size_t len, rm_auth_server_t *out, char *why, size_t whylen)
{
	const char *p = payload, *end = p + len, *f;
	size_t pl = strlen(RM_AUTH_SERVER_PREFIX), n;

	memset(out, 0, sizeof(*out));
	if (len > RM_AUTH_PAYLOAD_MAX || len < pl || memcmp(p, RM_AUTH_SERVER_PREFIX, pl)) {
		snprintf(why, whylen, "the server's credential was not made by a rankmapd (payload is not \"%s...\")",
			 RM_AUTH_SERVER_PREFIX);
		return -1;
	}
	p += pl;
	if ((n = field(&p, end, &f)) != RM_AUTH_NONCE_HEX || !is_hex(f, n))
		goto bad;
	memcpy(out->cnonce, f, n);
	if ((n = field(&p, end, &f)) != RM_AUTH_NONCE_HEX || !is_hex(f, n))
		goto bad;
	memcpy(out->snonce, f, n);
	n = field(&p, end, &f);
	if (!ident_ok(f, n))
		goto bad;
	memcpy(out->ident, f, n);
	n = field(&p, end, &f);
	if (p != end || f + n != end || !(n == 1 && *f == '-' ? 1 : name_ok(f, n)))
		goto bad;
	if (!(n == 1 && *f == '-'))
		memcpy(out->name, f, n);
	return 0;
bad:
	snprintf(why, whylen, "the server's credential has a malformed payload");
	return -1;
}

char *rm_auth_format_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], a, sizeof(a));
			snprintf(buf, len, "%s:%u", a, ntohs(in6->sin6_port));
		} else {
			inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
			snprintf(buf, len, "[%s]:%u", a, ntohs(in6->sin6_port));
		}
	} else {
		snprintf(buf, len, "?");
	}
	return buf;
}

int rm_auth_server_uid(const char *spec, unsigned *uid, rm_error_t *err)
{
	const char *src = "server uid";
	struct passwd pw, *res = NULL;
	char buf[4096], *end;
	unsigned long v;

	if (!spec || !*spec) {
		spec = getenv(RM_SERVER_UID_ENV);
		src = RM_SERVER_UID_ENV;
	}
	if (!spec || !*spec) {
		*uid = 0;
		return 0;
	}
	errno = 0;
	v = strtoul(spec, &end, 10);
	if (spec[0] >= '0' && spec[0] <= '9' && !*end && !errno && v < 4294967295UL) {
		*uid = (unsigned)v;
		return 0;
	}
	if (getpwnam_r(spec, &pw, buf, sizeof(buf), &res) == 0 && res) {
		*uid = (unsigned)pw.pw_uid;
		return 0;
	}
	errno = EINVAL;
	return rm_error_set(err, src, 0, 0, "'%.64s' is neither a uid nor a user name (the uid rankmapd runs as)",
			    spec);
}
