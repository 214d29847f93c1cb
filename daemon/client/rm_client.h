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
 * IPv4 address or [IPv6]; PORT 1..65535, RM_PORT_DEFAULT when ":PORT" is left out). Over TCP a connection
 * opens with a handshake of MUNGE credentials (rm_client_auth, protocol version 2): the client checks the
 * server's first, then sends its own, bound to that server and connection; then the connection carries
 * requests as on the Unix socket. A call moves to the next entry when one cannot be
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
#include <stdio.h>
#include <jansson.h>
#include <sys/socket.h>

#include "rm_error.h"
#include "rm_slot.h"

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

/* ---- JSON text (json_out.c) ----
 * rankmapd's frames and rankmapctl's --json write every real number in its shortest form that reads
 * back as the same double (9.94, not 9.9399999999999995): */
/* Rewrites the reals of the JSON text s[0..len) (as jansson writes it) in place, in their shortest
 * round-trip form; strings are left alone. Returns the new length (never more than len). */
size_t rm_json_shorten_reals(char *s, size_t len);
/* json_dumps(j, flags) with shortest reals; malloc'ed (free), NULL on failure. */
char *rm_json_dumps(const json_t *j, size_t flags);
/* Writes j (json_dumps flags) with shortest reals and a newline to f. Returns 0, -1 on failure. */
int rm_json_print(FILE *f, const json_t *j, size_t flags);

/* The version of the JSON documents rankmapd answers and rankmapctl prints ("schema_version" in each:
 * rankmapd's responses, rankmapctl's --json objects; the JSON Schema docs/json-schema.json). Raised
 * when a key changes meaning or disappears, not when one is added. */
#define RM_SCHEMA_VERSION 1

/* Builds a request {"version":1,"type":type,"id":id}. Returns a new reference (NULL on ENOMEM). */
json_t *rm_proto_request(const char *type, json_int_t id);

/* Builds an error response for id (borrowed; NULL: JSON null). Returns a new reference. */
json_t *rm_proto_error(const json_t *id, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Builds a success response {"version":1,"id":id,"ok":true} for id (borrowed). New reference. */
json_t *rm_proto_ok(const json_t *id);

/* Sends payload (len bytes, borrowed) as one frame, as is (the TCP authentication frame is not JSON),
 * within timeout_ms (< 0: no limit). Returns 0, or -1 (EMSGSIZE, ETIMEDOUT, EPIPE...). */
int rm_frame_send_raw(int fd, const void *payload, size_t len, int timeout_ms, rm_error_t *err);

/* ---- TCP authentication, protocol version 2 (proto.c, auth_payload.c; PROTOCOL.md "TCP and MUNGE") ---- */

/* A TCP connection opens with a handshake that binds the client's credential to one server and one
 * connection, and lets the client authenticate the server before it sends any credential:
 *   1. client -> server: the hello, "rankmap-hello 2 CNONCE" (CNONCE: RM_AUTH_NONCE_HEX lowercase hex
 *      digits, fresh);
 *   2. server -> client: {"version":1,"id":null,"ok":true,"auth":"munge","auth_version":2,"cred":C}, C a
 *      MUNGE credential made by the daemon whose payload is "rankmap-server 2 CNONCE SNONCE IDENT NAME":
 *      SNONCE fresh, IDENT the connection's server end as the server sees it ("A.B.C.D:P", "[V6]:P"), NAME
 *      the daemon's server_name or "-";
 *   3. the client checks C: decoded by its munged (so made with the site's key), of the expected server
 *      uid, answering its CNONCE, for the endpoint it dialed (IDENT = its peer address, or NAME = the
 *      host it dialed); otherwise it sends nothing more;
 *   4. client -> server: a MUNGE credential restricted to the server uid (MUNGE_OPT_UID_RESTRICTION)
 *      whose payload is "rankmap-client 2 CNONCE SNONCE IDENT";
 *   5. the server checks it is that payload for this connection and restricted to its own uid, and
 *      answers as version 1 did ({"ok":true,"auth":"munge","uid":U,"gid":G}).
 * Credentials are at most RM_AUTH_FRAME_MAX bytes; the hello is exactly RM_AUTH_HELLO_LEN bytes. */
#define RM_AUTH_VERSION 2
#define RM_AUTH_FRAME_MAX 4096
#define RM_AUTH_NONCE_HEX 32
#define RM_AUTH_HELLO_PREFIX "rankmap-hello 2 "
#define RM_AUTH_HELLO_LEN (sizeof(RM_AUTH_HELLO_PREFIX) - 1 + RM_AUTH_NONCE_HEX)
#define RM_AUTH_SERVER_PREFIX "rankmap-server 2 "
#define RM_AUTH_CLIENT_PREFIX "rankmap-client 2 "
/* Longest identity ("[V6]:PORT") and server name; longest payload of either credential. */
#define RM_AUTH_IDENT_MAX 64
#define RM_AUTH_NAME_MAX 255
#define RM_AUTH_PAYLOAD_MAX 512
/* The uid rankmapd runs as, as clients expect it: a number or a user name (default "0", root). */
#define RM_SERVER_UID_ENV "RANKMAP_SERVER_UID"

/* Checks the form of an authentication frame's payload (a credential) before anything else looks at
 * it: "MUNGE:" base64 ":", at most RM_AUTH_FRAME_MAX bytes. Returns 0, or -1 with the reason in why (len
 * bytes). Pure: no allocation, no I/O. */
int rm_auth_frame_check(const char *payload, size_t len, char *why, size_t whylen);
/* Checks a hello (the first frame over TCP): exactly RM_AUTH_HELLO_PREFIX and RM_AUTH_NONCE_HEX lowercase
 * hex digits. Returns 0 with the nonce in cnonce (RM_AUTH_NONCE_HEX + 1 bytes), or -1 with the reason in
 * why: a request without authentication, a version 1 client (a credential without a hello), another
 * version, anything else. Pure. */
int rm_auth_hello_check(const char *payload, size_t len, char *cnonce, char *why, size_t whylen);
/* Writes a fresh nonce of RM_AUTH_NONCE_HEX lowercase hex digits (getrandom) into buf (at least
 * RM_AUTH_NONCE_HEX + 1 bytes). Returns 0, or -1 (errno). */
int rm_auth_nonce(char *buf);
/* The server's payload of step 2 (name NULL or "": "-"), written into buf. Returns its length, or -1
 * (ENAMETOOLONG, EINVAL for a name that is not a plain host name). */
int rm_auth_server_payload(char *buf, size_t len, const char *cnonce, const char *snonce, const char *ident,
			   const char *name);
/* The parts of a server's payload. */
typedef struct rm_auth_server {
	char cnonce[RM_AUTH_NONCE_HEX + 1], snonce[RM_AUTH_NONCE_HEX + 1];
	char ident[RM_AUTH_IDENT_MAX + 1];
	char name[RM_AUTH_NAME_MAX + 1]; /* "" when the server has none ("-") */
} rm_auth_server_t;
/* Parses a server's payload strictly (prefix, two nonces, an identity, a name; single spaces; no other
 * byte). Returns 0, or -1 with the reason in why. Pure. */
int rm_auth_server_parse(const void *payload, size_t len, rm_auth_server_t *out, char *why, size_t whylen);
/* The client's payload of step 4, written into buf. Returns its length, or -1 (ENAMETOOLONG). */
int rm_auth_client_payload(char *buf, size_t len, const char *cnonce, const char *snonce, const char *ident);
/* Formats a socket address as "A.B.C.D:P" or "[V6]:P" (an IPv4-mapped IPv6 address as IPv4) into buf;
 * "?" for another family. Returns buf. */
char *rm_auth_format_addr(const struct sockaddr *sa, char *buf, size_t len);
/* The server uid clients expect: spec (a number or a user name), else $RANKMAP_SERVER_UID, else 0.
 * Returns 0 with *uid set, or -1 (EINVAL) with err naming the value. */
int rm_auth_server_uid(const char *spec, unsigned *uid, rm_error_t *err);
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
	const char *server_uid;   /* TCP: uid rankmapd runs as (number or name; NULL: $RANKMAP_SERVER_UID, else 0) */
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

/* Authenticates a connected TCP socket (protocol version 2, above): sends a hello, checks the server's
 * credential (made with the site's MUNGE key by server_uid (NULL: rm_auth_server_uid's default), answering
 * the hello, for the endpoint dialed: the socket's peer address, or host, the name dialed, equal to the
 * server's server_name), and only then sends a credential restricted to server_uid and bound to this
 * server and connection, made through munge_socket (NULL: libmunge's default); waits for the daemon's
 * answer, all within timeout_ms. Returns 0 once the daemon accepted it; -1 with err: source "munge" when
 * no credential could be made or checked (munged down: named), "auth" when the server is not the rankmapd
 * expected (nothing was sent to it) or refused, the daemon's code ("busy"...) when it refused, "socket"
 * on I/O errors. */
int rm_client_auth(int fd, const char *host, const char *munge_socket, const char *server_uid, int timeout_ms,
		   rm_error_t *err);

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

/* ---- the map request, typed (client_map.c) ------------------------------------------------------ */

/* A map request: a communication pattern (n vertices; nedges edges src[k] - dst[k] of weight w[k], or a
 * Cartesian spec cart) onto slots (the caller's, in its own order: rank order, core order) or onto every
 * core (per_core) or PU of the named hosts. Everything is borrowed. Zero-initialise, then set. */
typedef struct rm_map_request {
	uint32_t n;
	size_t nedges;
	const uint32_t *src, *dst;
	const double *w;
	const char *cart; /* instead of the edges: "8x8", "8x4:1,0"... */
	const rm_slot_t *slots;
	size_t nslots;
	rm_slot_pu_t pu_index;   /* how the slots' PUs count; RM_SLOT_ANY: a free PU of the host */
	const char *const *gpus; /* GPU slots (slot_kind gpu): slot i is [slots[i].host, gpus[i]], a GPU index
				  * as text ("3") or a name the daemon knows (OS device, bus id, UUID);
				  * slots[i].pu and pu_index unused. NULL: PU slots */
	const char *const *hosts;
	size_t nhosts;
	int per_pu;            /* hosts: every PU rather than every core */
	const char *engine;    /* NULL: "auto" */
	double time_budget_ms; /* <= 0: the daemon's default */
	long seed;
	int breakdown; /* ask for the traffic per level (in answer->resp) */
} rm_map_request_t;

/* The daemon's answer. slot[v] is where vertex v runs: an index into the request's slots (the caller's
 * order, whatever order the daemon's target has), or for a hosts request into the answer's "slots"
 * ([host, logical PU] pairs, in resp). pu_os[i] (slots requests): the OS index of the PU of the
 * request's slot i, as the daemon resolved it (RM_SLOT_ANY filled in). */
typedef struct rm_map_answer {
	uint32_t n;
	uint32_t *slot;
	int32_t *pu_os;      /* nslots of the request, NULL for a hosts request */
	double cost;         /* model cost of the mapping */
	double given_cost;   /* slots: of vertex v on slot v (where the ranks are now); hosts: on slot v */
	double time_ms;      /* the engine's time */
	char engine[64];     /* the engine that produced the result */
	const char *warning; /* the daemon's first warning (inside resp), NULL when none */
	json_t *resp;        /* the whole response (breakdown, target, slots...), owned */
} rm_map_answer_t;

/* Sends q to the daemon as one `map` request (rm_client_call_opts: o and info as there) and checks the
 * answer: a permutation of q->n distinct slots within range. Returns 0 with *a filled (free it with
 * rm_map_answer_free), or -1 with err set (the daemon's code and message, or "rankmapd" for a malformed
 * answer) and *a empty; a->resp then holds the daemon's error response when one came. */
int rm_client_map(const rm_client_opts_t *o, const rm_map_request_t *q, rm_map_answer_t *a, rm_client_info_t *info,
		  rm_error_t *err);
/* The map request q as JSON (a new reference, NULL on ENOMEM): what rm_client_map sends. */
json_t *rm_map_request_json(const rm_map_request_t *q);
void rm_map_answer_free(rm_map_answer_t *a);

#endif
