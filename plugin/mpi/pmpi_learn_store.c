/*
 * plugin/mpi/pmpi_learn_store.c: where learned patterns live. One interface, two back ends, each a table
 * of operations:
 *   rankmapd (rmp_env_server: RANKMAP_SERVER, a list tried in order, else RANKMAP_SOCKET): requests
 *     pattern_get and pattern_put (daemon/PROTOCOL.md); the daemon keeps them in its state directory, per
 *     uid (the peer's: from the socket, or over TCP from the MUNGE credential), bounded per user;
 *   the per-user directory (rm_pattern_dir_default: $RANKMAP_LEARN_DIR, $XDG_CACHE_HOME/rankmap,
 *     ~/.cache/rankmap), created 0700, refused when owned by someone else or writable by others.
 * With a daemon, a lookup the daemon cannot answer (down, error) falls back to the directory, and so does
 * a store (the caller warns once, naming both): the run's pattern is not lost when the daemon dies
 * between the lookup at the topology call and the store at MPI_Finalize.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmpi_learn.h"
#include "rm_client.h"

#define STORE_TIMEOUT_MS 5000

typedef struct store_ops {
	const char *name;
	int (*get)(const char *where, const rm_pattern_key_t *k, rm_pattern_t **out, rm_error_t *err);
	int (*put)(const char *where, const rm_pattern_t *p, rm_error_t *err);
} store_ops_t;

/* ---- the per-user directory --------------------------------------------------------------------- */

static int dir_path(char *buf, size_t len, rm_error_t *err)
{
	if (rm_pattern_dir_default(buf, len) != 0)
		return rm_error_set(err, "RANKMAP_LEARN_DIR", 0, 0,
				    "no pattern directory (set RANKMAP_LEARN_DIR, "
				    "XDG_CACHE_HOME or HOME)");
	return rm_pattern_dir_check(buf, geteuid(), 1, err);
}

static int dir_get(const char *where, const rm_pattern_key_t *k, rm_pattern_t **out, rm_error_t *err)
{
	char dir[4096];

	(void)where;
	if (dir_path(dir, sizeof(dir), err) != 0)
		return -1;
	return rm_pattern_dir_get(dir, k, out, err);
}

static int dir_put(const char *where, const rm_pattern_t *p, rm_error_t *err)
{
	char dir[4096];

	(void)where;
	if (dir_path(dir, sizeof(dir), err) != 0)
		return -1;
	return rm_pattern_dir_put(dir, p, 0, err);
}

/* ---- rankmapd ----------------------------------------------------------------------------------- */

static json_t *key_json(const rm_pattern_key_t *k)
{
	return json_pack("{s:s, s:s, s:I, s:s}", "program", k->program, "fn", k->fn, "order", (json_int_t)k->order,
			 "shape", k->shape);
}

static int daemon_get(const char *socket, const rm_pattern_key_t *k, rm_pattern_t **out, rm_error_t *err)
{
	json_t *req = rm_proto_request("pattern_get", 1), *resp = NULL;
	rm_error_t e = { 0 };
	int rc;

	*out = NULL;
	if (req)
		json_object_set_new(req, "key", key_json(k));
	if (rm_client_call(socket, req, &resp, STORE_TIMEOUT_MS, &e) != 0) {
		rc = !strcmp(e.source, RM_ERR_NOT_FOUND) ? 0 : -1;
		if (rc < 0)
			rm_error_set(err, socket, 0, 0, "rankmapd: %s", e.text[0] ? e.text : "pattern_get failed");
		json_decref(resp);
		return rc;
	}
	const char *text = json_string_value(json_object_get(resp, "pattern"));

	*out = text ? rm_pattern_parse(text, strlen(text), "rankmapd pattern", err) : NULL;
	if (*out && !rm_pattern_key_equal(&(*out)->key, k)) {
		rm_pattern_free(*out);
		*out = NULL;
		rm_error_set(err, socket, 0, 0, "rankmapd answered with another key's pattern");
	}
	json_decref(resp);
	return *out ? 1 : -1;
}

static int daemon_put(const char *socket, const rm_pattern_t *p, rm_error_t *err)
{
	json_t *req = rm_proto_request("pattern_put", 1), *resp = NULL;
	char *text = rm_pattern_format(p, NULL);
	rm_error_t e = { 0 };
	int rc;

	if (req && text)
		json_object_set_new(req, "pattern", json_string(text));
	free(text);
	rc = rm_client_call(socket, req, &resp, STORE_TIMEOUT_MS, &e);
	json_decref(resp);
	if (rc != 0)
		rm_error_set(err, socket, 0, 0, "rankmapd: %s", e.text[0] ? e.text : "pattern_put failed");
	return rc;
}

static const store_ops_t store_dir = { .name = "directory", .get = dir_get, .put = dir_put };
static const store_ops_t store_daemon = { .name = "rankmapd", .get = daemon_get, .put = daemon_put };

int rmp_store_get(const char *socket, const rm_pattern_key_t *k, rm_pattern_t **out, rm_error_t *err)
{
	rm_error_t derr = { 0 }, ignore = { 0 };

	*out = NULL;
	if (!socket)
		return store_dir.get(NULL, k, out, err);
	int rc = store_daemon.get(socket, k, out, &derr);

	if (rc >= 0)
		return rc;
	/* The daemon cannot answer: a pattern stored in the directory by an earlier fallback serves. No
	 * warning here: the mapping's own request to the daemon reports an unreachable daemon. */
	rc = store_dir.get(NULL, k, out, &ignore);
	return rc > 0 ? rc : 0;
}

int rmp_store_put(const char *socket, const rm_pattern_t *p, char *note, size_t notelen, rm_error_t *err)
{
	rm_error_t derr = { 0 };

	note[0] = 0;
	if (socket && store_daemon.put(socket, p, &derr) == 0)
		return 0;
	if (store_dir.put(NULL, p, err) != 0)
		return -1;
	if (socket) {
		char dir[4096] = "";

		rm_pattern_dir_default(dir, sizeof(dir));
		*err = derr;
		snprintf(note, notelen, "this run's pattern was stored in %s instead", dir);
	}
	return 0;
}
