/*
 * daemon/client/rm_client.h: the client library of rankmapd, its one public header. rankmapctl, the MPI
 * library (inside users' MPI processes), the SPANK plugin (inside slurmstepd) and the fuzzers use it;
 * rankmapd uses its wire format. See daemon/PROTOCOL.md.
 *
 * Wire format. A frame is a 4-byte big-endian length followed by that many bytes of one JSON object
 * (UTF-8, jansson). Every request carries "version" (RM_PROTO_VERSION), "type" and "id"; every response
 * carries "version", "id" (copied from the request, null when it could not be read) and "ok"; a failed
 * request gets "ok": false and "error": {"code": "...", "message": "..."}.
 *
 * Servers. Where a call takes a server, it takes a list "ENTRY[,ENTRY...]" tried in order: an entry that
 * starts with '/' is the path of rankmapd's Unix socket; any other is HOST:PORT over TCP (HOST a name, an
 * IPv4 address or [IPv6]; PORT 1..65535, RM_PORT_DEFAULT when ":PORT" is left out). Over TCP the first
 * frame of a connection is a fresh MUNGE credential (rm_client_auth); the daemon answers it, then the
 * connection carries requests as on the Unix socket. A call moves to the next entry when one cannot be
 * reached (bad entry, unresolvable name, refused, timed out), refuses the credential (code "auth") or
 * answers "busy", "shutting_down" or "no_model"; every try together stays within the call's timeout.
 *
 * Calls, one request per call (connect, send, receive, close):
 *
 *     json_t *req = rm_proto_request("distance", 1), *resp = NULL;
 *     rm_error_t err = { 0 };
 *     json_object_set_new(req, "hosts", json_pack("[ss]", "n1", "n2"));
 *     if (rm_client_call(rm_client_socket_from_env(), req, &resp, 2000, &err) == 0) {
 *             ... json_object_get(resp, "distance") ...
 *             json_decref(resp);
 *     }
 *
 * Error rule: 0 on success, -1 with errno set and err filled (may be NULL) on failure; the first error
 * wins; pointer-returning functions return NULL. Nothing here exits, prints, installs signal handlers,
 * raises SIGPIPE (MSG_NOSIGNAL) or keeps global state; every blocking step (connect, send, receive) is
 * bounded by the timeout: safe inside MPI processes and slurmstepd.
 */
#ifndef RANKMAP_RM_CLIENT_H
#define RANKMAP_RM_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "rm_error.h"

/* ---- wire format (proto.c) ------------------------------------------------------------------- */

#define RM_PROTO_VERSION 1
#define RM_FRAME_HEADER 4
/* Default and hard limits on the JSON payload of one frame, in bytes. */
#define RM_FRAME_MAX_DEFAULT (16u << 20)
#define RM_FRAME_MAX_HARD (1u << 30)

/* Error codes carried in error.code (PROTOCOL.md lists when each is used). */
#define RM_ERR_BAD_FRAME "bad_frame"       /* length 0 or not JSON / not an object */
#define RM_ERR_TOO_LARGE "frame_too_large" /* length above the daemon's limit */
#define RM_ERR_BAD_VERSION "bad_version"
#define RM_ERR_BAD_REQUEST "bad_request" /* missing or invalid field (message names it) */
#define RM_ERR_UNKNOWN_TYPE "unknown_type"
#define RM_ERR_PERMISSION "permission_denied"
#define RM_ERR_NOT_FOUND "not_found" /* unknown host or slot */
#define RM_ERR_NO_MODEL "no_model"   /* the daemon has no usable model yet */
#define RM_ERR_FAILED "failed"       /* the request was valid but could not be served */
#define RM_ERR_TIMEOUT "timeout"
#define RM_ERR_BUSY "busy" /* too many clients */
#define RM_ERR_SHUTDOWN "shutting_down"
#define RM_ERR_INTERNAL "internal"
#define RM_ERR_AUTH "auth" /* TCP: credential missing, invalid, expired, replayed... */

/* Encodes obj as one frame (header + compact JSON). Returns a malloc'ed buffer the caller frees and
 * stores its size in *len; NULL (EINVAL, EMSGSIZE or ENOMEM) on failure. obj is borrowed. */
char *rm_frame_encode(const json_t *obj, size_t *len);

/* Decodes a 4-byte header. */
uint32_t rm_frame_length(const unsigned char hdr[RM_FRAME_HEADER]);

/* Parses a frame payload (without header) as a JSON object. Returns a new reference, or NULL with err
 * holding the jansson error (source "frame", line/column of the payload). */
json_t *rm_frame_parse(const char *payload, size_t len, rm_error_t *err);

/* Sends obj as one frame on a blocking or non-blocking socket, waiting at most timeout_ms in total
 * (< 0: no limit). Returns 0, or -1 (ETIMEDOUT, EPIPE, ...). obj is borrowed. */
int rm_frame_send(int fd, const json_t *obj, int timeout_ms, rm_error_t *err);

/* Receives one frame within timeout_ms (< 0: no limit) whose payload is at most max_len bytes
 * (0: RM_FRAME_MAX_DEFAULT). Returns a new reference to the JSON object, or NULL: ETIMEDOUT, EMSGSIZE
 * (frame above max_len), ECONNRESET (peer closed, possibly mid-frame), EPROTO (not a JSON object). */
json_t *rm_frame_recv(int fd, size_t max_len, int timeout_ms, rm_error_t *err);

/* Builds a request {"version":1,"type":type,"id":id}. Returns a new reference (NULL on ENOMEM). */
json_t *rm_proto_request(const char *type, json_int_t id);

/* Builds an error response for id (borrowed; NULL: JSON null). Returns a new reference. */
json_t *rm_proto_error(const json_t *id, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Builds a success response {"version":1,"id":id,"ok":true} for id (borrowed). New reference. */
json_t *rm_proto_ok(const json_t *id);

/* Sends payload (len bytes, borrowed) as one frame, as is (the TCP authentication frame is not JSON),
 * within timeout_ms (< 0: no limit). Returns 0, or -1 (EMSGSIZE, ETIMEDOUT, EPIPE...). */
int rm_frame_send_raw(int fd, const void *payload, size_t len, int timeout_ms, rm_error_t *err);

/* ---- TCP authentication frame (proto.c) ------------------------------------------------------- */

/* The first frame on a TCP connection: its payload is a MUNGE credential, as munge_encode() armors it
 * ("MUNGE:" base64 ":"), whose own payload is RM_AUTH_PAYLOAD, and at most RM_AUTH_FRAME_MAX bytes. */
#define RM_AUTH_FRAME_MAX 4096
#define RM_AUTH_PAYLOAD "rankmap-auth 1"
/* Checks the form of an authentication frame's payload before anything else looks at it. Returns 0,
 * or -1 with the reason in why (len bytes). Pure: no allocation, no I/O. */
int rm_auth_frame_check(const char *payload, size_t len, char *why, size_t whylen);
/* munged's socket path, written into buf (len bytes): path when it is set and non-empty, else libmunge's
 * default. Used by both ends of the connection. */
void rm_auth_munge_path(const char *path, char *buf, size_t len);
/* Whether something accepts connections at munged's socket path, asked without libmunge (whose retries
 * take seconds when munged is down). Returns 0 when it does; -1 with errno set (ENAMETOOLONG, ENOENT,
 * ECONNREFUSED...) and err (may be NULL) saying munged is not running there. */
int rm_auth_munged_alive(const char *path, rm_error_t *err);

/* Checks a response: returns 0 when "ok" is true; -1 (EPROTO for a malformed response, EREMOTEIO for
 * a daemon error) with err->source = the error code and err->text = its message. */
int rm_proto_check_response(const json_t *resp, rm_error_t *err);

/* ---- client calls (client.c) ------------------------------------------------------------------ */
/* Environment variables naming the daemon (a server list, or a socket path), MUNGE's socket, and the
 * compiled-in defaults. 7117/tcp: unprivileged, not one of Slurm's (6817-6819) nor in /etc/services. */
#define RM_SERVER_ENV "RANKMAP_SERVER"
#define RM_SOCKET_ENV "RANKMAP_SOCKET"
#define RM_MUNGE_SOCKET_ENV "RANKMAP_MUNGE_SOCKET"
#define RM_SOCKET_DEFAULT "/run/rankmapd/rankmapd.sock"
#define RM_PORT_DEFAULT 7117
/* Default timeout of one call in milliseconds. */
#define RM_CLIENT_TIMEOUT_MS 5000
/* Most entries a server list may have. */
#define RM_SERVERS_MAX 16

/* Returns $RANKMAP_SERVER when set and non-empty, else $RANKMAP_SOCKET when set and non-empty, else
 * NULL (borrowed from the environment). */
const char *rm_client_socket_from_env(void);
/* Returns $RANKMAP_MUNGE_SOCKET when set and non-empty, else NULL (libmunge's default socket). */
const char *rm_client_munge_socket_from_env(void);

/* The number of entries of a server list (0 for NULL or ""). */
int rm_client_server_count(const char *list);
/* Copies entry i of list into buf (len bytes; surrounding blanks removed). Returns 0, or -1 (ERANGE)
 * when there is no such entry or it does not fit. */
int rm_client_server_entry(const char *list, int i, char *buf, size_t len);
/* Splits a TCP entry "HOST:PORT", "[V6]:PORT", "HOST" into host (hlen bytes) and *port. Returns 0, or -1
 * (EINVAL) with err naming the entry: empty host, bad port, port outside 1..65535, a Unix path. */
int rm_client_server_parse(const char *entry, char *host, size_t hlen, int *port, rm_error_t *err);

/* Options of rm_client_open() and rm_client_call_opts(); zero-initialise, then set what you need. */
typedef struct rm_client_opts {
	const char *servers;      /* server list (NULL: rm_client_socket_from_env(), then RM_SOCKET_DEFAULT) */
	const char *munge_socket; /* munged's socket for TCP (NULL: $RANKMAP_MUNGE_SOCKET, else libmunge's) */
	int timeout_ms;           /* every try together (<= 0: RM_CLIENT_TIMEOUT_MS) */
} rm_client_opts_t;

/* What a call did with the list (may be NULL where taken). */
typedef struct rm_client_info {
	int server;                     /* index of the entry that answered, -1 when none did */
	int nfailed;                    /* entries tried before, that failed */
	char entry[256];                /* the entry that answered */
	char failed[RM_ERROR_TEXT_LEN]; /* "ENTRY: reason" of the first entry that failed ("" if none) */
} rm_client_info_t;

/* Connects to the daemon's Unix socket within timeout_ms (< 0: no limit). Returns a connected,
 * close-on-exec socket the caller closes, or -1 (ENAMETOOLONG, ENOENT, ECONNREFUSED, ETIMEDOUT...). */
int rm_client_connect(const char *socket_path, int timeout_ms, rm_error_t *err);

/* Sends request on a connected socket and waits for its response, both within timeout_ms. The request
 * is borrowed. On success *response is a new reference (the caller decrefs) whose "ok" may be true or
 * false: use rm_proto_check_response(). Returns 0 or -1. */
int rm_client_exchange(int fd, const json_t *request, json_t **response, int timeout_ms, rm_error_t *err);

/* Authenticates a connected TCP socket: sends a fresh MUNGE credential made through munge_socket (NULL:
 * libmunge's default) and waits for the daemon's answer, within timeout_ms. Returns 0 once the daemon
 * accepted it; -1 with err: source "munge" when no credential could be made (munged down: named), the
 * daemon's code ("auth", "busy"...) when it refused, "socket" on I/O errors. */
int rm_client_auth(int fd, const char *munge_socket, int timeout_ms, rm_error_t *err);

/* Connects to the first entry of o->servers that answers (and, over TCP, accepts the credential), all
 * within o->timeout_ms. Each entry gets at most its share of the time left (time left / entries left)
 * to connect and authenticate. Returns a connected, close-on-exec socket (the caller closes it), or -1
 * with err: the entry and reason for a one-entry list, else "no server answered: E1: why; E2: why". */
int rm_client_open(const rm_client_opts_t *o, rm_client_info_t *info, rm_error_t *err);

/* rm_client_call() over a server list with options: connects as rm_client_open() does, sends request
 * (stolen), and moves to the next entry when the connection fails before the response or the daemon
 * answers "busy", "shutting_down" or "no_model". Returns as rm_client_call(); info (may be NULL) says
 * which entry answered and why the ones before failed (for the caller's one warning). */
int rm_client_call_opts(const rm_client_opts_t *o, json_t *request, json_t **response, rm_client_info_t *info,
			rm_error_t *err);

/* One round trip: connect to socket_path (a server list; NULL: rm_client_socket_from_env(), then
 * RM_SOCKET_DEFAULT; MUNGE's socket from $RANKMAP_MUNGE_SOCKET),
 * send request (stolen: the call always decrefs it; a missing "version" or "id" is filled in), receive
 * the response within timeout_ms in total (<= 0: RM_CLIENT_TIMEOUT_MS), close. Returns 0 only when the
 * daemon answered "ok": true, with *response a new reference; returns -1 otherwise, with err->source
 * the daemon's error code (or "socket"/"frame") and err->text its message; *response is then the
 * daemon's error response (new reference) when one was received, else NULL. */
int rm_client_call(const char *socket_path, json_t *request, json_t **response, int timeout_ms, rm_error_t *err);

#endif
