/*
 * tests/unit/test_client_servers.c: server lists of the client library (rm_client_server_count,
 * _entry, _parse: each bad entry refused with a message naming it), the form check of the TCP
 * authentication frame (rm_auth_frame_check), and a one-entry list whose connection is refused: the
 * error names the entry, and every try stays within the timeout.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "tests/harness.h"
#include "rm_client.h"

static void lists(void)
{
	char e[64];

	check(rm_client_server_count(NULL) == 0 && rm_client_server_count("") == 0, "empty lists");
	check(rm_client_server_count("a:1") == 1 && rm_client_server_count("a:1,/s, [::1]:2") == 3, "count");
	check(rm_client_server_entry("a:1,/s, [::1]:2 ", 2, e, sizeof(e)) == 0 && !strcmp(e, "[::1]:2"),
	      "entry 2 trimmed: '%s'", e);
	check(rm_client_server_entry("a:1,/s", 1, e, sizeof(e)) == 0 && !strcmp(e, "/s"), "entry 1");
	check(rm_client_server_entry("a:1,/s", 2, e, sizeof(e)) < 0, "no entry 2");
	check(rm_client_server_entry("abcdefgh:1", 0, e, 4) < 0, "entry too long for the buffer");
}

/* parse ENTRY: expect host and port, or (host NULL) an error containing msg */
static void parse(const char *entry, const char *host, int port, const char *msg)
{
	char h[256];
	int p = 0, rc;
	rm_error_t err = { 0 };

	rc = rm_client_server_parse(entry, h, sizeof(h), &p, &err);
	if (host)
		check(rc == 0 && !strcmp(h, host) && p == port, "'%s' -> %s port %d (got rc %d, '%s' %d)", entry, host,
		      port, rc, rc == 0 ? h : err.text, p);
	else
		check(rc < 0 && strstr(err.text, msg) && strstr(err.text, entry), "'%s' refused: '%s' (got '%s')",
		      entry, msg, err.text);
}

static void entries(void)
{
	parse("127.0.0.1:7117", "127.0.0.1", 7117, NULL);
	parse("svc1", "svc1", RM_PORT_DEFAULT, NULL);
	parse("[::1]:9", "::1", 9, NULL);
	parse("[fe80::1]", "fe80::1", RM_PORT_DEFAULT, NULL);
	parse("host:65535", "host", 65535, NULL);
	parse("host:99999", NULL, 0, "port '99999' is not a number in 1..65535");
	parse("host:0", NULL, 0, "port '0'");
	parse("host:", NULL, 0, "port ''");
	parse("host:12a", NULL, 0, "port '12a'");
	parse(":", NULL, 0, "empty host name");
	parse(":7117", NULL, 0, "empty host name");
	parse("::1:7117", NULL, 0, "needs brackets");
	parse("[::1", NULL, 0, "missing ']'");
	parse("[::1]x", NULL, 0, "expected ':PORT'");
	parse("/run/x.sock", NULL, 0, "a Unix socket path");
}

static void auth_frames(void)
{
	char why[200];
	const char *good = "MUNGE:AwQFAAAxXxs3p6d0QVxk0sNn5lhwHrTlo5Rm0jFR4Dq0yV8pOo2yYRQ=:";
	char big[RM_AUTH_FRAME_MAX + 2];

	check(rm_auth_frame_check(good, strlen(good), why, sizeof(why)) == 0, "a credential's form passes");
	check(rm_auth_frame_check("{\"version\":1}", 13, why, sizeof(why)) < 0 &&
		      strstr(why, "without a MUNGE credential"),
	      "a JSON request first: '%s'", why);
	check(rm_auth_frame_check("MUNGE:ab cd:", 12, why, sizeof(why)) < 0 && strstr(why, "outside base64"),
	      "a space inside: '%s'", why);
	check(rm_auth_frame_check("MUNGE:abcd", 10, why, sizeof(why)) < 0, "no final ':'");
	check(rm_auth_frame_check("MUNGE:", 6, why, sizeof(why)) < 0, "prefix alone");
	check(rm_auth_frame_check("", 0, why, sizeof(why)) < 0, "empty");
	memset(big, 'A', sizeof(big));
	memcpy(big, "MUNGE:", 6);
	big[sizeof(big) - 1] = ':';
	check(rm_auth_frame_check(big, sizeof(big), why, sizeof(why)) < 0 && strstr(why, "at most"), "too large: '%s'",
	      why);
}

/* The texts of the handshake, version 2 (auth_payload.c): what each end writes is what the other
 * accepts, and every other form is refused. */
static void auth_payloads(void)
{
	char why[300], a[RM_AUTH_NONCE_HEX + 1], b[RM_AUTH_NONCE_HEX + 1], n[RM_AUTH_NONCE_HEX + 1], hello[80];
	char buf[RM_AUTH_PAYLOAD_MAX], mut[RM_AUTH_PAYLOAD_MAX], addr[80];
	struct sockaddr_in in4 = { .sin_family = AF_INET, .sin_port = htons(7117) };
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(7117) };
	rm_auth_server_t srv;
	rm_error_t err = { 0 };
	unsigned uid = 42;
	int len, i, bad;

	check(rm_auth_nonce(a) == 0 && rm_auth_nonce(b) == 0 && strlen(a) == RM_AUTH_NONCE_HEX &&
		      strspn(a, "0123456789abcdef") == RM_AUTH_NONCE_HEX && strcmp(a, b),
	      "two nonces: 32 lowercase hex digits, different (%s %s)", a, b);
	snprintf(hello, sizeof(hello), "%s%s", RM_AUTH_HELLO_PREFIX, a);
	check(strlen(hello) == RM_AUTH_HELLO_LEN &&
		      rm_auth_hello_check(hello, strlen(hello), n, why, sizeof(why)) == 0 && !strcmp(n, a),
	      "a hello passes and gives its nonce");
	check(rm_auth_hello_check(hello, strlen(hello) - 1, n, why, sizeof(why)) < 0, "a hello one digit short");
	hello[20] = 'A';
	check(rm_auth_hello_check(hello, strlen(hello), n, why, sizeof(why)) < 0 && strstr(why, "not a rankmap hello"),
	      "a hello with an uppercase digit: '%s'", why);
	check(rm_auth_hello_check("{\"version\":1}", 13, n, why, sizeof(why)) < 0 &&
		      strstr(why, "without authentication"),
	      "a JSON request first: '%s'", why);
	check(rm_auth_hello_check("MUNGE:AAAA:", 11, n, why, sizeof(why)) < 0 && strstr(why, "version 1"),
	      "a credential first (a version 1 client): '%s'", why);
	snprintf(hello, sizeof(hello), "rankmap-hello 3 %s", a);
	check(rm_auth_hello_check(hello, strlen(hello), n, why, sizeof(why)) < 0 && strstr(why, "another TCP"),
	      "a hello of version 3: '%s'", why);
	snprintf(hello, sizeof(hello), "%s%s\n", RM_AUTH_HELLO_PREFIX, a);
	check(rm_auth_hello_check(hello, strlen(hello), n, why, sizeof(why)) < 0, "a hello with a newline");

	len = rm_auth_server_payload(buf, sizeof(buf), a, b, "10.0.0.1:7117", "svc1.example.org");
	check(len > 0 && rm_auth_server_parse(buf, (size_t)len, &srv, why, sizeof(why)) == 0 &&
		      !strcmp(srv.cnonce, a) && !strcmp(srv.snonce, b) && !strcmp(srv.ident, "10.0.0.1:7117") &&
		      !strcmp(srv.name, "svc1.example.org"),
	      "the server's payload parses back into its fields: '%s'", buf);
	len = rm_auth_server_payload(buf, sizeof(buf), a, b, "[fd00::1]:7117", NULL);
	check(len > 0 && rm_auth_server_parse(buf, (size_t)len, &srv, why, sizeof(why)) == 0 && !*srv.name &&
		      !strcmp(srv.ident, "[fd00::1]:7117"),
	      "without a server name: '-', parsed as none: '%s'", buf);
	check(rm_auth_server_payload(buf, sizeof(buf), a, b, "10.0.0.1:7117", "bad name") < 0 &&
		      rm_auth_server_payload(buf, sizeof(buf), a, b, "10.0.0.1:7117", "a_b") < 0,
	      "a server name that is not a host name is refused");
	len = rm_auth_server_payload(buf, sizeof(buf), a, b, "10.0.0.1:7117", NULL);
	for (i = 0, bad = 0; i < len - 2; i++) { /* every byte before the name changed: refused */
		memcpy(mut, buf, (size_t)len);
		mut[i] = mut[i] == 'G' ? 'H' : 'G';
		bad += rm_auth_server_parse(mut, (size_t)len, &srv, why, sizeof(why)) == 0;
		mut[i] = ' ';
		bad += buf[i] != ' ' && rm_auth_server_parse(mut, (size_t)len, &srv, why, sizeof(why)) == 0;
	}
	check(!bad, "every byte of the prefix, nonces and identity changed (to 'G', or a space): refused (%d passed)",
	      bad);
	for (i = 0; i < 5; i++) {
		static const char *const tails[] = { " ", " x", "\n", "\0", "  " };
		memcpy(mut, buf, (size_t)len);
		memcpy(mut + len, tails[i], strlen(tails[i]) + (i == 3));
		check(rm_auth_server_parse(mut, (size_t)len + strlen(tails[i]) + (i == 3), &srv, why, sizeof(why)) < 0,
		      "a server payload with something after it (#%d) is refused", i);
	}
	check(rm_auth_server_parse("rankmap-server 1 x", 18, &srv, why, sizeof(why)) < 0 &&
		      strstr(why, "not made by a rankmapd"),
	      "another version's payload: '%s'", why);
	check(rm_auth_server_parse(buf, RM_AUTH_PAYLOAD_MAX + 1, &srv, why, sizeof(why)) < 0, "a payload too long");
	len = rm_auth_client_payload(buf, sizeof(buf), a, b, "10.0.0.1:7117");
	snprintf(mut, sizeof(mut), "rankmap-client 2 %s %s 10.0.0.1:7117", a, b);
	check(len > 0 && !strcmp(buf, mut), "the client's payload: '%s'", buf);

	inet_pton(AF_INET, "10.1.2.3", &in4.sin_addr);
	check(!strcmp(rm_auth_format_addr((struct sockaddr *)&in4, addr, sizeof(addr)), "10.1.2.3:7117"), "IPv4: %s",
	      addr);
	inet_pton(AF_INET6, "fd00::5", &in6.sin6_addr);
	check(!strcmp(rm_auth_format_addr((struct sockaddr *)&in6, addr, sizeof(addr)), "[fd00::5]:7117"), "IPv6: %s",
	      addr);
	inet_pton(AF_INET6, "::ffff:10.1.2.3", &in6.sin6_addr);
	check(!strcmp(rm_auth_format_addr((struct sockaddr *)&in6, addr, sizeof(addr)), "10.1.2.3:7117"),
	      "IPv4-mapped IPv6 is written as IPv4: %s", addr);

	unsetenv(RM_SERVER_UID_ENV);
	check(rm_auth_server_uid(NULL, &uid, &err) == 0 && uid == 0, "the server uid defaults to 0 (root)");
	check(rm_auth_server_uid("1234", &uid, &err) == 0 && uid == 1234, "a number");
	check(rm_auth_server_uid("root", &uid, &err) == 0 && uid == 0, "a user name");
	setenv(RM_SERVER_UID_ENV, "77", 1);
	check(rm_auth_server_uid(NULL, &uid, &err) == 0 && uid == 77, "from " RM_SERVER_UID_ENV);
	check(rm_auth_server_uid("5", &uid, &err) == 0 && uid == 5, "a given value wins over the environment");
	setenv(RM_SERVER_UID_ENV, "no-such-user-x", 1);
	check(rm_auth_server_uid(NULL, &uid, &err) < 0 && strstr(err.text, "no-such-user-x") &&
		      !strcmp(err.source, RM_SERVER_UID_ENV),
	      "an unknown user is an error naming it and the variable: %s: %s", err.source, err.text);
	unsetenv(RM_SERVER_UID_ENV);
}

/* A port nothing listens on: the one-entry error names it; two such entries stay within the timeout. The
 * client checks munged before it connects: a listening Unix socket stands in for it (the entries fail at
 * their connection, before any MUNGE operation). */
static void refused(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), mfd = socket(AF_UNIX, SOCK_STREAM, 0);
	char entry[64], two[160], dir[] = "/tmp/rankmap-test-munge.XXXXXX";
	rm_error_t err = { 0 };
	rm_client_info_t info;
	json_t *resp = NULL;
	struct timespec t0, t1;

	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	close(fd); /* the port is free now: connections are refused */
	check(mkdtemp(dir) != NULL, "a directory for the stand-in munged socket");
	snprintf(su.sun_path, sizeof(su.sun_path), "%s/sock", dir);
	check(bind(mfd, (struct sockaddr *)&su, sizeof(su)) == 0 && listen(mfd, 8) == 0, "a stand-in munged socket");
	setenv(RM_MUNGE_SOCKET_ENV, su.sun_path, 1);
	snprintf(entry, sizeof(entry), "127.0.0.1:%d", ntohs(sa.sin_port));
	check(rm_client_call(entry, rm_proto_request("ping", 1), &resp, 1000, &err) < 0 && !resp &&
		      strstr(err.source, entry) && strstr(err.text, "Connection refused"),
	      "refused: '%s: %s'", err.source, err.text);
	snprintf(two, sizeof(two), "%s,nosuchhost.invalid:1", entry);
	memset(&err, 0, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	check(rm_client_call_opts(&(rm_client_opts_t){ .servers = two, .timeout_ms = 3000 },
				  rm_proto_request("ping", 1), &resp, &info, &err) < 0 &&
		      strstr(err.text, "no server answered") && strstr(err.text, "nosuchhost.invalid") &&
		      info.nfailed == 2 && info.server == -1,
	      "two failing entries: '%s'", err.text);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	check((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 3500, "within the timeout");
	unsetenv(RM_MUNGE_SOCKET_ENV);
	close(mfd);
	unlink(su.sun_path);
	rmdir(dir);
}

int main(void)
{
	lists();
	entries();
	auth_frames();
	auth_payloads();
	auth_payloads();
	refused();
	return harness_done();
}
