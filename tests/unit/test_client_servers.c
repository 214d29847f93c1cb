/*
 * tests/unit/test_client_servers.c: server lists of the client library (rm_client_server_count,
 * _entry, _parse: each bad entry refused with a message naming it), the form check of the TCP
 * authentication frame (rm_auth_frame_check), and a one-entry list whose connection is refused: the
 * error names the entry, and every try stays within the timeout.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

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

/* A port nothing listens on: the one-entry error names it; two such entries stay within the timeout. */
static void refused(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char entry[64], two[160];
	rm_error_t err = { 0 };
	rm_client_info_t info;
	json_t *resp = NULL;
	struct timespec t0, t1;

	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	close(fd); /* the port is free now: connections are refused */
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
}

int main(void)
{
	lists();
	entries();
	auth_frames();
	refused();
	return harness_done();
}
