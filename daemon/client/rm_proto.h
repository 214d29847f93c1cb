/*
 * daemon/lib_proto.h: rankmapd's wire format, shared by rankmapd, rankmapctl, the MPI library and the
 * SPANK plugin.
 *
 * A frame is a 4-byte big-endian length followed by that many bytes of one JSON object (UTF-8,
 * jansson). Every request carries "version" (RM_PROTO_VERSION), "type" and "id"; every response carries
 * "version", "id" (copied from the request, null when it could not be read) and "ok"; a failed request
 * gets "ok": false and "error": {"code": "...", "message": "..."}. See daemon/PROTOCOL.md.
 *
 * Error rule: 0 on success, -1 with errno set on failure; pointer-returning functions return NULL.
 * The rm_error_t (may be NULL) names what failed; the first error wins. Nothing here exits, prints,
 * raises SIGPIPE (MSG_NOSIGNAL) or keeps global state: safe inside MPI processes and slurmstepd.
 */
#ifndef RANKMAP_LIB_PROTO_H
#define RANKMAP_LIB_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "rm_error.h"

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

#endif
