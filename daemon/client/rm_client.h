/*
 * daemon/lib_client.h: the client side of rankmapd, for rankmapctl, the MPI library (inside users'
 * MPI processes) and the SPANK plugin (inside slurmstepd).
 *
 * Usage, one request per call (connect, send, receive, close):
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
 * wins. Nothing here exits, prints, installs signal handlers, raises SIGPIPE or keeps global state; every
 * blocking step (connect, send, receive) is bounded by the timeout.
 */
#ifndef RANKMAP_LIB_CLIENT_H
#define RANKMAP_LIB_CLIENT_H

#include <jansson.h>

#include "lib_proto.h"
#include "rm_error.h"

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
