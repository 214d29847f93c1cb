/*
 * The wire format and client library without a daemon: frames over a socketpair (round trip, header
 * byte order, size limit, truncation, garbage, timeouts), SIGPIPE never raised, connect errors, the
 * response checks, and rm_client_call's ownership rules.
 */
#include "tests/harness.h"
#include "rm_client.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_encode(void)
{
	json_t *o = json_pack("{s:i}", "a", 1);
	size_t len = 0;
	char *buf = rm_frame_encode(o, &len);

	check(buf && len == 4 + strlen("{\"a\":1}"), "frame length %zu", len);
	check(buf && buf[0] == 0 && buf[1] == 0 && buf[2] == 0 && buf[3] == 7, "big-endian header");
	check(buf && !memcmp(buf + 4, "{\"a\":1}", 7), "compact payload");
	check(rm_frame_length((const unsigned char *)"\x01\x02\x03\x04") == 0x01020304u, "header decoding");
	free(buf);
	json_decref(o);
	o = json_array();
	check(!rm_frame_encode(o, &len) && errno == EINVAL, "arrays are not frames");
	json_decref(o);
}

static void test_roundtrip(void)
{
	int sv[2];
	json_t *o = rm_proto_request("ping", 3), *r;
	rm_error_t err = { 0 };

	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	check(rm_frame_send(sv[0], o, 1000, &err) == 0, "send");
	r = rm_frame_recv(sv[1], 0, 1000, &err);
	check(r && json_equal(r, o), "received what was sent");
	check(json_integer_value(json_object_get(r, "version")) == RM_PROTO_VERSION, "request carries version 1");
	json_decref(r);
	/* garbage payload */
	check(write(sv[0], "\0\0\0\x03xyz", 7) == 7, "write garbage");
	memset(&err, 0, sizeof(err));
	r = rm_frame_recv(sv[1], 0, 1000, &err);
	check(!r && errno == EPROTO && err.text[0], "garbage payload: EPROTO, %s", err.text);
	/* silence: timeout within the bound */
	long long t0 = now_ms();
	r = rm_frame_recv(sv[1], 0, 300, NULL);
	check(!r && errno == ETIMEDOUT && now_ms() - t0 >= 250 && now_ms() - t0 < 2000, "recv timeout honoured");
	/* truncated: half a frame then close */
	check(write(sv[0], "\0\0\0\x10{\"a\"", 8) == 8, "write half");
	close(sv[0]);
	r = rm_frame_recv(sv[1], 0, 1000, NULL);
	check(!r && errno == ECONNRESET, "truncated frame: ECONNRESET");
	/* writing to a closed peer: EPIPE, no SIGPIPE (the default action would kill this test) */
	signal(SIGPIPE, SIG_DFL);
	check(rm_frame_send(sv[1], o, 1000, NULL) < 0 && errno == EPIPE, "send to a closed peer: EPIPE");
	close(sv[1]);
	/* oversized against the receiver's limit (the stream is then unusable: a fresh pair) */
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	check(rm_frame_send(sv[0], o, 1000, NULL) == 0, "send again");
	r = rm_frame_recv(sv[1], 10, 1000, &err);
	check(!r && errno == EMSGSIZE, "frame above max_len refused (errno %d)", errno);
	close(sv[0]);
	close(sv[1]);
	json_decref(o);
}

static void test_send_timeout(void)
{
	int sv[2], sz = 4096;
	char *text = memset(calloc(1, 1 << 22), 'a', (1 << 22) - 1);
	json_t *big = json_pack("{s:s%}", "x", text, (size_t)(1 << 22) - 1);
	long long t0;

	free(text);
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	t0 = now_ms();
	check(rm_frame_send(sv[0], big, 300, NULL) < 0 && errno == ETIMEDOUT,
	      "send to a reader that never reads times out");
	check(now_ms() - t0 < 2000, "within the bound");
	close(sv[0]);
	close(sv[1]);
	json_decref(big);
}

static void test_client(void)
{
	rm_error_t err = { 0 };
	json_t *resp = (json_t *)1;
	char longpath[200];

	check(rm_client_call("/nonexistent/rankmapd.sock", rm_proto_request("ping", 1), &resp, 500, &err) < 0,
	      "no daemon: -1");
	check(resp == NULL && strstr(err.source, "/nonexistent/rankmapd.sock"), "error names the socket: %s",
	      err.source);
	memset(longpath, 'x', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = 0;
	check(rm_client_connect(longpath, 100, NULL) < 0 && errno == ENAMETOOLONG, "path above sun_path refused");
	setenv(RM_SOCKET_ENV, "/x/y.sock", 1);
	check(!strcmp(rm_client_socket_from_env(), "/x/y.sock"), "socket from the environment");
	setenv(RM_SOCKET_ENV, "", 1);
	check(rm_client_socket_from_env() == NULL, "empty RANKMAP_SOCKET ignored");
	check(rm_client_call(NULL, json_array(), &resp, 100, NULL) < 0 && errno == EINVAL,
	      "non-object request refused");
}

static void test_check_response(void)
{
	rm_error_t err = { 0 };
	json_t *five = json_integer(5), *ok = rm_proto_ok(five),
	       *e = rm_proto_error(NULL, RM_ERR_NOT_FOUND, "no host %s", "n1");

	check(rm_proto_check_response(ok, &err) == 0, "ok response");
	check(json_integer_value(json_object_get(ok, "id")) == 5, "id copied");
	check(rm_proto_check_response(e, &err) < 0 && errno == EREMOTEIO, "error response");
	check(!strcmp(err.source, RM_ERR_NOT_FOUND) && !strcmp(err.text, "no host n1"), "code and message kept");
	check(json_is_null(json_object_get(e, "id")), "unknown id is null");
	json_decref(e);
	e = json_pack("{s:i}", "version", 1);
	memset(&err, 0, sizeof(err));
	check(rm_proto_check_response(e, &err) < 0 && errno == EPROTO, "malformed response detected");
	json_decref(e);
	json_decref(ok);
	json_decref(five);
}

int main(void)
{
	test_encode();
	test_roundtrip();
	test_send_timeout();
	test_client();
	test_check_response();
	return harness_done();
}
