/*
 * daemon/server/srv_patterns.c: learned communication patterns kept by rankmapd: requests
 * pattern_get, pattern_put, pattern_list and pattern_forget (daemon/PROTOCOL.md).
 *
 * Layout: <state_dir>/patterns/<uid>/<id>.pattern, the text form of common/rm_pattern.h, one directory
 * per user, written atomically (rm_pattern_dir_put). A pattern belongs to the uid of the peer that
 * stored it (SO_PEERCRED): pattern_put refuses a pattern whose uid is another's, pattern_get and
 * pattern_list read only the peer's directory, and only root may list or forget other users' patterns
 * (uid, all). Each user's directory is bounded (pattern_quota, default 4M): storing past it removes the
 * user's least recently used patterns (the file's modification time, refreshed at every get); a
 * pattern larger than the whole quota is refused (bad_request) and nothing is removed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rm_client.h"
#include "rm_pattern.h"
#include "srv.h"
#include "srv_requests.h"

#define GET_SCHEMA "version:i type:s id:I key:o"
#define KEY_SCHEMA "program:s fn:s order:i shape:s"
#define PUT_SCHEMA "version:i type:s id:I pattern:s"
#define LIST_SCHEMA "version:i type:s id:I uid?i all?b pattern?s"
#define FORGET_SCHEMA "version:i type:s id:I pattern:s uid?i all?b"

/* <state_dir>/patterns[/<uid>] into buf, checked (and created) owned by the daemon, mode 0700. */
static int user_dir(srv_ctx_t *ctx, const json_int_t *uid, int create, char *buf, size_t len, rm_error_t *err)
{
	int n = snprintf(buf, len, "%s/patterns", ctx->cfg.state_dir);

	if (n > 0 && uid)
		n += snprintf(buf + n, len - (size_t)n, "/%lld", (long long)*uid);
	if (n < 0 || (size_t)n >= len)
		return rm_error_set(err, "state_dir", 0, 0, "path too long");
	return rm_pattern_dir_check(buf, geteuid(), create, err);
}

static json_t *store_error(const json_t *id, const rm_error_t *err)
{
	char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN];

	srv_log(SRV_LOG_WARNING, "patterns: %s", rm_error_format(err, buf, sizeof(buf)));
	return rm_proto_error(id, RM_ERR_FAILED, "%s", buf);
}

json_t *srv_req_pattern_get(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	json_error_t jerr;
	json_t *key = NULL, *resp;
	const char *program, *fn, *shape;
	json_int_t order = 0, uid = peer->uid;
	rm_pattern_key_t k;
	rm_pattern_t *p = NULL;
	rm_error_t err = { 0 };
	char dir[4096];

	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT, "{s:i, s:s, s:o, s:o}", "version", &(int){ 0 }, "type",
			   &(const char *){ NULL }, "id", &(json_t *){ NULL }, "key", &key) < 0)
		return srv_request_invalid(req, id, GET_SCHEMA, &jerr);
	if (json_unpack_ex(key, &jerr, JSON_STRICT, "{s:s, s:s, s:I, s:s}", "program", &program, "fn", &fn, "order",
			   &order, "shape", &shape) < 0)
		return srv_request_invalid(key, id, KEY_SCHEMA, &jerr);
	memset(&k, 0, sizeof(k));
	if (strlen(program) >= sizeof(k.program) || strlen(fn) >= sizeof(k.fn) || strlen(shape) >= sizeof(k.shape) ||
	    order < 0 || order > UINT32_MAX)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "field 'key': a part is too long or out of range");
	k.uid = peer->uid, k.order = (uint32_t)order;
	strcpy(k.program, program), strcpy(k.fn, fn), strcpy(k.shape, shape);
	if (user_dir(ctx, &uid, 0, dir, sizeof(dir), &err) != 0)
		return errno == ENOENT ? rm_proto_error(id, RM_ERR_NOT_FOUND, "no pattern for this key")
				       : store_error(id, &err);
	int rc = rm_pattern_dir_get(dir, &k, &p, &err);

	if (rc < 0)
		return store_error(id, &err);
	if (rc == 0)
		return rm_proto_error(id, RM_ERR_NOT_FOUND, "no pattern for this key");
	char *text = rm_pattern_format(p, NULL);

	rm_pattern_free(p);
	if (!text)
		return rm_proto_error(id, RM_ERR_INTERNAL, "out of memory");
	resp = rm_proto_ok(id);
	json_object_set_new(resp, "pattern", json_string(text));
	free(text);
	return resp;
}

json_t *srv_req_pattern_put(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	json_error_t jerr;
	const char *text;
	rm_pattern_t *p;
	rm_error_t err = { 0 };
	char dir[4096], buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN], pid[17];
	json_int_t uid = peer->uid;

	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT, "{s:i, s:s, s:o, s:s}", "version", &(int){ 0 }, "type",
			   &(const char *){ NULL }, "id", &(json_t *){ NULL }, "pattern", &text) < 0)
		return srv_request_invalid(req, id, PUT_SCHEMA, &jerr);
	if (!(p = rm_pattern_parse(text, strlen(text), "pattern", &err)))
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "field %s", rm_error_format(&err, buf, sizeof(buf)));
	if (p->key.uid != (uint32_t)peer->uid) {
		unsigned owner = p->key.uid;

		rm_pattern_free(p);
		return rm_proto_error(id, RM_ERR_PERMISSION, "a pattern of uid %u cannot be stored by uid %u", owner,
				      (unsigned)peer->uid);
	}
	if (user_dir(ctx, &uid, 1, dir, sizeof(dir), &err) != 0 ||
	    rm_pattern_dir_put(dir, p, ctx->cfg.pattern_quota, &err) != 0) {
		int big = errno == EFBIG;

		rm_pattern_free(p);
		if (big) /* larger than the whole quota: the client's to fix, nothing was touched */
			return rm_proto_error(id, RM_ERR_BAD_REQUEST, "field 'pattern': larger than pattern_quota: %s",
					      rm_error_format(&err, buf, sizeof(buf)));
		return store_error(id, &err);
	}
	rm_pattern_key_id(&p->key, pid);
	srv_log(SRV_LOG_INFO, "patterns: uid %u stored %s (%s, %u runs)", (unsigned)peer->uid, pid, p->key.fn, p->runs);
	rm_pattern_free(p);
	json_t *resp = rm_proto_ok(id);

	json_object_set_new(resp, "pattern", json_string(pid));
	return resp;
}

/* Appends the patterns of one user's directory (id NULL: all) to list. */
static int list_dir(const char *dir, uid_t uid, const char *id, json_t *list, size_t *bad, rm_error_t *err)
{
	rm_pattern_t **ps = NULL;
	size_t n = 0, b = 0;

	if (rm_pattern_dir_list(dir, &ps, &n, &b, err) != 0)
		return -1;
	*bad += b;
	for (size_t i = 0; i < n; i++) {
		char pid[17], *text = NULL;

		rm_pattern_key_id(&ps[i]->key, pid);
		if (ps[i]->key.uid == (uint32_t)uid && (!id || !strcmp(id, pid)) &&
		    (text = rm_pattern_format(ps[i], NULL)))
			json_array_append_new(list, json_pack("{s:I, s:s, s:s}", "uid", (json_int_t)uid, "pattern", pid,
							      "text", text));
		free(text);
		rm_pattern_free(ps[i]);
	}
	free(ps);
	return 0;
}

/* The uids that have a directory under <state_dir>/patterns (every one with all, else *uid). */
static json_t *users(srv_ctx_t *ctx, int all, json_int_t uid)
{
	json_t *v = json_array();
	char dir[4096];
	rm_error_t err = { 0 };
	DIR *d;
	struct dirent *de;

	if (!all) {
		json_array_append_new(v, json_integer(uid));
		return v;
	}
	if (user_dir(ctx, NULL, 0, dir, sizeof(dir), &err) != 0 || !(d = opendir(dir)))
		return v;
	while ((de = readdir(d))) {
		char *end;
		long long u = strtoll(de->d_name, &end, 10);

		if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && !*end && u <= UINT32_MAX)
			json_array_append_new(v, json_integer(u));
	}
	closedir(d);
	return v;
}

/* uid and all of a list/forget request: root may name any uid, or all; others only themselves. */
static json_t *whose(const json_t *id, const srv_peer_t *peer, json_int_t *uid, int all)
{
	if ((all || *uid != (json_int_t)peer->uid) && peer->uid != 0)
		return rm_proto_error(id, RM_ERR_PERMISSION, "only root may see or forget other users' patterns");
	if (*uid < 0 || *uid > UINT32_MAX)
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "field 'uid': out of range");
	return NULL;
}

json_t *srv_req_pattern_list(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	json_error_t jerr;
	json_int_t uid = peer->uid;
	int all = 0;
	const char *pid = NULL;
	json_t *error, *list, *uids, *u;
	size_t bad = 0, i;
	char dir[4096];

	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT, "{s:i, s:s, s:o, s?I, s?b, s?s}", "version", &(int){ 0 },
			   "type", &(const char *){ NULL }, "id", &(json_t *){ NULL }, "uid", &uid, "all", &all,
			   "pattern", &pid) < 0)
		return srv_request_invalid(req, id, LIST_SCHEMA, &jerr);
	if ((error = whose(id, peer, &uid, all)))
		return error;
	list = json_array();
	uids = users(ctx, all, uid);
	json_array_foreach (uids, i, u) {
		json_int_t x = json_integer_value(u);
		rm_error_t err = { 0 };

		if (user_dir(ctx, &x, 0, dir, sizeof(dir), &err) == 0)
			list_dir(dir, (uid_t)x, pid, list, &bad, &err);
	}
	json_decref(uids);
	json_t *resp = rm_proto_ok(id);

	json_object_set_new(resp, "patterns", list);
	json_object_set_new(resp, "unreadable", json_integer((json_int_t)bad));
	return resp;
}

json_t *srv_req_pattern_forget(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer)
{
	json_error_t jerr;
	json_int_t uid = peer->uid;
	int all = 0, removed = 0;
	const char *pid = NULL;
	json_t *error, *uids, *u;
	size_t i;
	char dir[4096];

	if (json_unpack_ex((json_t *)req, &jerr, JSON_STRICT, "{s:i, s:s, s:o, s:s, s?I, s?b}", "version", &(int){ 0 },
			   "type", &(const char *){ NULL }, "id", &(json_t *){ NULL }, "pattern", &pid, "uid", &uid,
			   "all", &all) < 0)
		return srv_request_invalid(req, id, FORGET_SCHEMA, &jerr);
	if (strcmp(pid, "all") && (strlen(pid) != 16 || strspn(pid, "0123456789abcdef") != 16))
		return rm_proto_error(id, RM_ERR_BAD_REQUEST, "field 'pattern': expected 16 hex digits or 'all'");
	if ((error = whose(id, peer, &uid, all)))
		return error;
	uids = users(ctx, all, uid);
	json_array_foreach (uids, i, u) {
		json_int_t x = json_integer_value(u);
		rm_error_t err = { 0 };
		int n;

		if (user_dir(ctx, &x, 0, dir, sizeof(dir), &err) == 0 &&
		    (n = rm_pattern_dir_forget(dir, pid, &err)) > 0)
			removed += n;
	}
	json_decref(uids);
	srv_log(SRV_LOG_INFO, "patterns: uid %u forgot %d pattern(s)", (unsigned)peer->uid, removed);
	json_t *resp = rm_proto_ok(id);

	json_object_set_new(resp, "removed", json_integer(removed));
	return resp;
}
