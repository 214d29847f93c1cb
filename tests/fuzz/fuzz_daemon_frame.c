/*
 * Fuzz target: rankmapd's framing (daemon/client/proto.c): the input is a byte stream arriving on a Unix
 * socket, read frame by frame with rm_frame_recv (4-byte length, size limit, truncation, end of stream)
 * and every decoded request dispatched as the daemon would (fuzz_daemon_common.h). The stream's first
 * frame is also taken as a TCP connection's authentication frame: what the daemon checks before a
 * credential goes to munged (rm_auth_frame_check), read as the loop does (its header first: at most
 * RM_AUTH_FRAME_MAX bytes), and as the hello of TCP authentication version 2 (rm_auth_hello_check); and
 * the whole input as the payload of a server's credential, which the client parses before it sends
 * anything (rm_auth_server_parse): what parses must be exactly what rm_auth_server_payload writes; and
 * the whole input as a frame's text, whose request type the event loop peeks at (srv_request_peek).
 */
#include "fuzz_daemon_common.h"

#include <sys/socket.h>

#define FZ_MAX_STREAM (1u << 20)
#define FZ_MAX_FRAME 65536

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_daemon_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2], buf = FZ_MAX_STREAM * 2, frames = 0;
	char nonce[RM_AUTH_NONCE_HEX + 1], why[300], again[RM_AUTH_PAYLOAD_MAX + 1];
	rm_auth_server_t srv;
	rm_error_t err = { 0 };
	json_t *req;

	if (size > FZ_MAX_STREAM)
		return 0;
	if (size >= RM_FRAME_HEADER) { /* the authentication frame of a TCP connection */
		uint32_t n = rm_frame_length(data);
		if (n <= RM_AUTH_FRAME_MAX && n <= size - RM_FRAME_HEADER &&
		    rm_auth_frame_check((const char *)data + RM_FRAME_HEADER, n, why, sizeof(why)) == 0 &&
		    (n < 8 || memcmp(data + RM_FRAME_HEADER, "MUNGE:", 6) || data[RM_FRAME_HEADER + n - 1] != ':'))
			abort(); /* promised: only "MUNGE:" base64 ":" passes */
		if (n <= size - RM_FRAME_HEADER &&
		    rm_auth_hello_check((const char *)data + RM_FRAME_HEADER, n, nonce, why, sizeof(why)) == 0 &&
		    (n != RM_AUTH_HELLO_LEN || strlen(nonce) != RM_AUTH_NONCE_HEX ||
		     memcmp(data + RM_FRAME_HEADER, RM_AUTH_HELLO_PREFIX, strlen(RM_AUTH_HELLO_PREFIX))))
			abort(); /* promised: only the exact hello passes */
	}
	if (rm_auth_server_parse(data, size, &srv, why, sizeof(why)) == 0) {
		int n = rm_auth_server_payload(again, sizeof(again), srv.cnonce, srv.snonce, srv.ident, srv.name);
		if (n < 0 || (size_t)n != size || memcmp(again, data, size))
			abort(); /* promised: a payload parses only when it is exactly what a server writes */
	}
	/* the whole input as a frame's text: the type the event loop peeks at before any parse (memory safety;
	 * a frame routed on it is still parsed and checked in full where it runs) */
	if (srv_request_peek((const char *)data, size) < -1)
		abort(); /* promised: request flags, or -1 */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		fz_die("socketpair");
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (size && send(sv[0], data, size, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)size) {
		close(sv[0]), close(sv[1]);
		return 0; /* the socket buffer did not take it all: not a parser question */
	}
	shutdown(sv[0], SHUT_WR);
	while (frames++ < 64 && (req = rm_frame_recv(sv[1], FZ_MAX_FRAME, 1000, &err))) {
		if (!json_is_object(req))
			abort(); /* promised: a JSON object or NULL */
		fz_dispatch(req);
		json_decref(req);
		memset(&err, 0, sizeof(err));
	}
	close(sv[0]);
	close(sv[1]);
	return 0;
}
