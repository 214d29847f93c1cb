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
#define RM_ERR_BAD_FRAME "bad_frame"           /* length 0 or not JSON / not an object */
#define RM_ERR_TOO_LARGE "frame_too_large"     /* length above the daemon's limit */
#define RM_ERR_BAD_VERSION "bad_version"
#define RM_ERR_BAD_REQUEST "bad_request"       /* missing or invalid field (message names it) */
#define RM_ERR_UNKNOWN_TYPE "unknown_type"
#define RM_ERR_PERMISSION "permission_denied"
#define RM_ERR_NOT_FOUND "not_found"           /* unknown host or slot */
#define RM_ERR_NO_MODEL "no_model"             /* the daemon has no usable model yet */
#define RM_ERR_FAILED "failed"                 /* the request was valid but could not be served */
#define RM_ERR_TIMEOUT "timeout"
#define RM_ERR_BUSY "busy"                     /* too many clients */
#define RM_ERR_SHUTDOWN "shutting_down"
#define RM_ERR_INTERNAL "internal"

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
json_t *rm_proto_error(const json_t *id, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Builds a success response {"version":1,"id":id,"ok":true} for id (borrowed). New reference. */
json_t *rm_proto_ok(const json_t *id);

/* Checks a response: returns 0 when "ok" is true; -1 (EPROTO for a malformed response, EREMOTEIO for
 * a daemon error) with err->source = the error code and err->text = its message. */
int rm_proto_check_response(const json_t *resp, rm_error_t *err);

/* ---- client calls (client.c) ------------------------------------------------------------------ */
/* Environment variable naming the daemon's socket, and the compiled-in default path. */
#define RM_SOCKET_ENV "RANKMAP_SOCKET"
#define RM_SOCKET_DEFAULT "/run/rankmapd/rankmapd.sock"
/* Default timeout of one call in milliseconds. */
#define RM_CLIENT_TIMEOUT_MS 5000

/* Returns $RANKMAP_SOCKET when set and non-empty, else NULL (borrowed from the environment). */
const char *rm_client_socket_from_env(void);

/* Connects to the daemon's Unix socket within timeout_ms (< 0: no limit). Returns a connected,
 * close-on-exec socket the caller closes, or -1 (ENAMETOOLONG, ENOENT, ECONNREFUSED, ETIMEDOUT...). */
int rm_client_connect(const char *socket_path, int timeout_ms, rm_error_t *err);

/* Sends request on a connected socket and waits for its response, both within timeout_ms. The request
 * is borrowed. On success *response is a new reference (the caller decrefs) whose "ok" may be true or
 * false: use rm_proto_check_response(). Returns 0 or -1. */
int rm_client_exchange(int fd, const json_t *request, json_t **response, int timeout_ms, rm_error_t *err);

/* One round trip: connect to socket_path (NULL: rm_client_socket_from_env(), then RM_SOCKET_DEFAULT),
 * send request (stolen: the call always decrefs it; a missing "version" or "id" is filled in), receive
 * the response within timeout_ms in total (<= 0: RM_CLIENT_TIMEOUT_MS), close. Returns 0 only when the
 * daemon answered "ok": true, with *response a new reference; returns -1 otherwise, with err->source
 * the daemon's error code (or "socket"/"frame") and err->text its message; *response is then the
 * daemon's error response (new reference) when one was received, else NULL. */
int rm_client_call(const char *socket_path, json_t *request, json_t **response, int timeout_ms,
		   rm_error_t *err);

#endif
