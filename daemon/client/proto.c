/*
 * daemon/client/proto.c: frames (4-byte big-endian length + JSON object) and the common request and
 * response shapes. See rm_client.h and PROTOCOL.md.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include "rm_client.h"

typedef struct growbuf {
	char *buf;
	size_t len, cap;
} growbuf_t;

static int grow_append(const char *data, size_t n, void *arg)
{
	growbuf_t *g = arg;

	if (g->len + n > g->cap) {
		size_t cap = g->cap * 2 > g->len + n ? g->cap * 2 : g->len + n + 256;
		char *nb;
		if (cap > (size_t)RM_FRAME_MAX_HARD + RM_FRAME_HEADER || !(nb = realloc(g->buf, cap)))
			return -1;
		g->buf = nb;
		g->cap = cap;
	}
	memcpy(g->buf + g->len, data, n);
	g->len += n;
	return 0;
}

char *rm_frame_encode(const json_t *obj, size_t *len)
{
	growbuf_t g = { NULL, RM_FRAME_HEADER, 0 };
	size_t n;

	if (!json_is_object(obj)) {
		errno = EINVAL;
		return NULL;
	}
	g.cap = 1024;
	if (!(g.buf = malloc(g.cap)))
		return NULL;
	if (json_dump_callback(obj, grow_append, &g, JSON_COMPACT | JSON_REAL_PRECISION(17)) < 0) {
		free(g.buf);
		errno = g.len > RM_FRAME_MAX_HARD ? EMSGSIZE : ENOMEM;
		return NULL;
	}
	g.len = RM_FRAME_HEADER + rm_json_shorten_reals(g.buf + RM_FRAME_HEADER, g.len - RM_FRAME_HEADER);
	n = g.len - RM_FRAME_HEADER;
	g.buf[0] = (char)(n >> 24);
	g.buf[1] = (char)(n >> 16);
	g.buf[2] = (char)(n >> 8);
	g.buf[3] = (char)n;
	*len = g.len;
	return g.buf;
}

uint32_t rm_frame_length(const unsigned char hdr[RM_FRAME_HEADER])
{
	return (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
}

json_t *rm_frame_parse(const char *payload, size_t len, rm_error_t *err)
{
	json_error_t jerr;
	json_t *obj = json_loadb(payload, len, JSON_REJECT_DUPLICATES, &jerr);

	if (!obj) {
		rm_error_set(err, "frame", jerr.line, jerr.column, "invalid JSON: %s", jerr.text);
		errno = EPROTO;
		return NULL;
	}
	if (!json_is_object(obj)) {
		json_decref(obj);
		rm_error_set(err, "frame", 0, 0, "frame is not a JSON object");
		errno = EPROTO;
		return NULL;
	}
	return obj;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for events on fd until deadline (< 0: none). Returns 0 when ready, -1 (ETIMEDOUT, ...). */
static int wait_fd(int fd, short events, long long deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r, tmo;

	for (;;) {
		tmo = -1;
		if (deadline >= 0) {
			long long left = deadline - now_ms();
			if (left <= 0) {
				errno = ETIMEDOUT;
				return -1;
			}
			tmo = left > 60000 ? 60000 : (int)left;
		}
		r = poll(&p, 1, tmo);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

static int send_all(int fd, const char *buf, size_t len, long long deadline)
{
	while (len) {
		ssize_t w = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			buf += w;
			len -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (wait_fd(fd, POLLOUT, deadline) < 0)
				return -1;
			continue;
		}
		return -1;
	}
	return 0;
}

/* Reads exactly len bytes. A clean close before any byte gives ECONNRESET too. */
static int recv_all(int fd, char *buf, size_t len, long long deadline)
{
	while (len) {
		ssize_t r = recv(fd, buf, len, MSG_DONTWAIT);
		if (r > 0) {
			buf += r;
			len -= (size_t)r;
			continue;
		}
		if (r == 0) {
			errno = ECONNRESET;
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if (wait_fd(fd, POLLIN, deadline) < 0)
				return -1;
			continue;
		}
		return -1;
	}
	return 0;
}

int rm_frame_send(int fd, const json_t *obj, int timeout_ms, rm_error_t *err)
{
	long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	size_t len;
	char *buf = rm_frame_encode(obj, &len);
	int rc, e;

	if (!buf)
		return rm_error_set(err, "frame", 0, 0, "cannot encode request: %s", strerror(errno));
	rc = send_all(fd, buf, len, deadline);
	e = errno;
	free(buf);
	if (rc < 0) {
		rm_error_set(err, "socket", 0, 0, "send: %s", strerror(e));
		errno = e;
	}
	return rc;
}

int rm_frame_send_raw(int fd, const void *payload, size_t len, int timeout_ms, rm_error_t *err)
{
	long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	unsigned char hdr[RM_FRAME_HEADER] = { (unsigned char)(len >> 24), (unsigned char)(len >> 16),
					       (unsigned char)(len >> 8), (unsigned char)len };
	int e;

	if (!len || len > RM_FRAME_MAX_HARD) {
		errno = EMSGSIZE;
		return rm_error_set(err, "frame", 0, 0, "frame of %zu bytes outside 1..%u", len, RM_FRAME_MAX_HARD);
	}
	if (send_all(fd, (const char *)hdr, sizeof(hdr), deadline) == 0 && send_all(fd, payload, len, deadline) == 0)
		return 0;
	e = errno;
	rm_error_set(err, "socket", 0, 0, "send: %s", strerror(e));
	errno = e;
	return -1;
}

/* The armor of a MUNGE credential: "MUNGE:", base64 (RFC 4648 alphabet and '=' padding), ":". */
#define MUNGE_PREFIX "MUNGE:"

int rm_auth_frame_check(const char *payload, size_t len, char *why, size_t whylen)
{
	size_t i, pl = strlen(MUNGE_PREFIX);

	if (len > RM_AUTH_FRAME_MAX) {
		snprintf(why, whylen, "authentication frame of %zu bytes (at most %d)", len, RM_AUTH_FRAME_MAX);
		return -1;
	}
	if (len && payload[0] == '{') {
		snprintf(why, whylen, "a request without a MUNGE credential: over TCP the first frame must be one");
		return -1;
	}
	if (len < pl + 2 || memcmp(payload, MUNGE_PREFIX, pl) || payload[len - 1] != ':') {
		snprintf(why, whylen, "the first frame is not a MUNGE credential (\"MUNGE:...:\")");
		return -1;
	}
	for (i = pl; i < len - 1; i++) {
		unsigned char c = (unsigned char)payload[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
		      c == '/' || c == '=')) {
			snprintf(why, whylen, "MUNGE credential with a byte 0x%02x at offset %zu outside base64", c, i);
			return -1;
		}
	}
	return 0;
}

json_t *rm_frame_recv(int fd, size_t max_len, int timeout_ms, rm_error_t *err)
{
	long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	unsigned char hdr[RM_FRAME_HEADER];
	uint32_t n;
	char *buf;
	json_t *obj;
	int e;

	if (!max_len)
		max_len = RM_FRAME_MAX_DEFAULT;
	if (recv_all(fd, (char *)hdr, sizeof(hdr), deadline) < 0)
		goto io_error;
	n = rm_frame_length(hdr);
	if (n == 0 || n > max_len) {
		rm_error_set(err, "frame", 0, 0, "frame length %u outside 1..%zu", n, max_len);
		errno = n ? EMSGSIZE : EPROTO;
		return NULL;
	}
	buf = malloc(n);
	if (!buf)
		return NULL;
	if (recv_all(fd, buf, n, deadline) < 0) {
		e = errno;
		free(buf);
		errno = e;
		goto io_error;
	}
	obj = rm_frame_parse(buf, n, err);
	free(buf);
	return obj;
io_error:
	e = errno;
	rm_error_set(err, "socket", 0, 0, "receive: %s", e == ECONNRESET ? "connection closed by peer" : strerror(e));
	errno = e;
	return NULL;
}

json_t *rm_proto_request(const char *type, json_int_t id)
{
	return json_pack("{s:i, s:s, s:I}", "version", RM_PROTO_VERSION, "type", type, "id", id);
}

json_t *rm_proto_ok(const json_t *id)
{
	return json_pack("{s:i, s:i, s:O, s:b}", "version", RM_PROTO_VERSION, "schema_version", RM_SCHEMA_VERSION, "id",
			 id ? (json_t *)id : json_null(), "ok", 1);
}

json_t *rm_proto_error(const json_t *id, const char *code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rm_utf8_fix(msg); /* jansson takes only UTF-8: a message cut mid-character would be no answer at all */
	return json_pack("{s:i, s:i, s:O, s:b, s:{s:s, s:s}}", "version", RM_PROTO_VERSION, "schema_version",
			 RM_SCHEMA_VERSION, "id", id ? (json_t *)id : json_null(), "ok", 0, "error", "code", code,
			 "message", msg);
}

int rm_proto_check_response(const json_t *resp, rm_error_t *err)
{
	json_t *ok = json_object_get(resp, "ok");
	const char *code = NULL, *msg = NULL;

	if (!json_is_boolean(ok)) {
		errno = EPROTO;
		return rm_error_set(err, "response", 0, 0, "malformed response: no \"ok\" field");
	}
	if (json_is_true(ok))
		return 0;
	if (json_unpack((json_t *)resp, "{s:{s:s, s:s}}", "error", "code", &code, "message", &msg) < 0) {
		errno = EPROTO;
		return rm_error_set(err, "response", 0, 0, "malformed error response");
	}
	errno = EREMOTEIO;
	return rm_error_set(err, code, 0, 0, "%s", msg);
}
