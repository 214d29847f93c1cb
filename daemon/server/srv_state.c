/*
 * daemon/server/srv_state.c: what rankmapd keeps across restarts, under the state directory:
 *   registrations/<host>.xml   the hwloc XML each node registered (one file per node)
 *   state.json                 the sources of the last model built, its generation and hosts
 *   ib-live.cache              the last live fabric discovery (libibnetdisc cache format)
 * Every file is written to a temporary name of its own (.<name>.tmp.XXXXXX, one per write), fsync'ed,
 * renamed over the old one, and the directory is fsync'ed, so a crash (kill -9, power loss) leaves
 * either the old or the new file, never a mix; concurrent writes of one file never share a temporary.
 * Files written together can be made durable together (srv_state_stage, then srv_state_commit): each
 * fsync'ed and renamed, then one fsync of their directory for all (the group commit of registrations,
 * srv_commit.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "rm_tmpfile.h"
#include "srv.h"
#include "rm_file.h"

int srv_state_host_ok(const char *name)
{
	const char *p;

	if (!name || !*name || name[0] == '.' || strlen(name) > 255)
		return 0;
	for (p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
		      *p == '-' || *p == '_'))
			return 0;
	return 1;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int srv_state_stage(const char *dir, const char *name, const void *data, size_t len, srv_staged_t *f, rm_error_t *err)
{
	int e;

	f->synced = f->ok = 0;
	snprintf(f->path, sizeof(f->path), "%s/%s", dir, name);
	f->fd = rm_tmpfile_beside(f->path, 0600, f->tmp, sizeof(f->tmp)); /* a name of its own: never shared */
	if (f->fd < 0)
		return rm_error_set(err, f->path, 0, 0, "cannot create a temporary file: %s", strerror(errno));
	if (write_all(f->fd, data, len) < 0) {
		e = errno;
		srv_state_unstage(f);
		return rm_error_set(err, f->tmp, 0, 0, "cannot write: %s", strerror(e ? e : EIO));
	}
#ifdef SYNC_FILE_RANGE_WRITE
	/* start the write-back now, while the file waits for its batch: its fsync then mostly waits for a
	 * write already under way (a hint only; the fsync in srv_state_sync is what makes it durable) */
	(void)sync_file_range(f->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
	return 0;
}

void srv_state_unstage(srv_staged_t *f)
{
	if (f->fd < 0)
		return;
	close(f->fd);
	unlink(f->tmp);
	f->fd = -1;
}

int srv_state_sync(srv_staged_t *f, rm_error_t *err)
{
	int e = 0;

	if (f->fd < 0)
		return -1;
	if (fsync(f->fd) < 0)
		e = errno;
	if (close(f->fd) < 0 && !e) /* closed either way */
		e = errno;
	f->fd = -1;
	if (e) {
		unlink(f->tmp);
		return rm_error_set(err, f->tmp, 0, 0, "cannot write: %s", strerror(e));
	}
	f->synced = 1;
	return 0;
}

size_t srv_state_place(const char *dir, srv_staged_t **files, size_t n, rm_error_t **errs)
{
	size_t i, renamed = 0;
	int e;

	for (i = 0; i < n; i++) {
		srv_staged_t *f = files[i];
		if (!f->synced)
			continue;
		if (rename(f->tmp, f->path) < 0) {
			e = errno;
			unlink(f->tmp);
			rm_error_set(errs[i], f->path, 0, 0, "cannot rename into place: %s", strerror(e));
			continue;
		}
		f->ok = 1;
		renamed++;
	}
	if (renamed && fsync_dir(dir) < 0) { /* one directory sync makes every rename above durable */
		e = errno;
		for (i = 0; i < n; i++)
			if (files[i]->ok) {
				files[i]->ok = 0;
				rm_error_set(errs[i], dir, 0, 0, "cannot fsync directory: %s", strerror(e));
			}
		return 0;
	}
	return renamed;
}

size_t srv_state_commit(const char *dir, srv_staged_t **files, size_t n, rm_error_t **errs)
{
	size_t i;

	for (i = 0; i < n; i++) /* every file's data durable under its temporary name */
		srv_state_sync(files[i], errs[i]);
	return srv_state_place(dir, files, n, errs);
}

int srv_state_write_file(const char *dir, const char *name, const void *data, size_t len, rm_error_t *err)
{
	srv_staged_t f, *fp = &f;

	if (srv_state_stage(dir, name, data, len, &f, err) < 0)
		return -1;
	return srv_state_commit(dir, &fp, 1, &err) == 1 ? 0 : -1;
}

/* "uid 1000 (alice)" or "uid 1000". */
static void describe_uid(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, len, "uid %u (%s)", (unsigned)uid, res->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
}

int srv_state_check_owner(const char *path, const struct stat *st, rm_error_t *err)
{
	char owner[300], self[300];

	if ((st->st_uid == geteuid() || st->st_uid == 0) && !(st->st_mode & (S_IWGRP | S_IWOTH)))
		return 0;
	describe_uid(st->st_uid, owner, sizeof(owner));
	describe_uid(geteuid(), self, sizeof(self));
	errno = EPERM;
	return rm_error_set(err, path, 0, 0,
			    "refused: owned by %s with mode %04o; it must be owned by rankmapd's %s or root and "
			    "writable by no group or other user (chown and chmod go-w it), or any of them could "
			    "plant registrations or hold the lock",
			    owner, (unsigned)(st->st_mode & 07777), self);
}

static int make_dir(const char *path, rm_error_t *err)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return rm_error_set(err, path, 0, 0, "cannot create directory: %s", strerror(errno));
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return rm_error_set(err, path, 0, 0, "not a directory");
	return srv_state_check_owner(path, &st, err);
}

/* Every directory above state_dir (resolved) must be owned by the daemon's uid or root, and writable by
 * group or others only with the sticky bit (/tmp): else its owner or writers could move the state
 * directory away and put their own in its place (munged checks its directories' parents the same way). */
static int check_parents(const char *state_dir, rm_error_t *err)
{
	char real[PATH_MAX], owner[300], *slash;
	struct stat st;

	if (!realpath(state_dir, real))
		return rm_error_set(err, state_dir, 0, 0, "cannot resolve: %s", strerror(errno));
	while ((slash = strrchr(real, '/'))) {
		if (slash == real)
			slash[1] = '\0'; /* "/" itself, last */
		else
			*slash = '\0';
		if (stat(real, &st) < 0)
			return rm_error_set(err, real, 0, 0, "cannot stat: %s", strerror(errno));
		if ((st.st_uid != geteuid() && st.st_uid != 0) ||
		    ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))) {
			describe_uid(st.st_uid, owner, sizeof(owner));
			errno = EPERM;
			return rm_error_set(err, state_dir, 0, 0,
					    "refused: its parent %s is owned by %s with mode %04o; every directory "
					    "above the state directory must be owned by rankmapd's user or root and "
					    "writable by no one else (unless sticky, as /tmp)",
					    real, owner, (unsigned)(st.st_mode & 07777));
		}
		if (!strcmp(real, "/"))
			break;
	}
	return 0;
}

int srv_state_init(const char *state_dir, rm_error_t *err)
{
	char path[4096];

	if (make_dir(state_dir, err) < 0 || check_parents(state_dir, err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/registrations", state_dir);
	return make_dir(path, err);
}

int srv_state_load_registrations(srv_ctx_t *ctx, rm_error_t *err)
{
	char dir[4096], path[4096 + 256], host[256];
	struct dirent *d;
	size_t nl;
	DIR *dp;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/registrations", ctx->cfg.state_dir);
	dp = opendir(dir);
	if (!dp)
		return rm_error_set(err, dir, 0, 0, "cannot open: %s", strerror(errno));
	while ((d = readdir(dp))) {
		nl = strlen(d->d_name);
		if (d->d_name[0] == '.' && strstr(d->d_name, ".tmp")) { /* left by a crash during a save */
			snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
			unlink(path);
			continue;
		}
		if (nl <= 4 || nl - 4 >= sizeof(host) || strcmp(d->d_name + nl - 4, ".xml") || d->d_name[0] == '.')
			continue; /* also skips other hidden files */
		memcpy(host, d->d_name, nl - 4);
		host[nl - 4] = 0;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (!srv_state_host_ok(host) || access(path, R_OK) < 0) {
			srv_log(SRV_LOG_WARNING, "%s: unreadable registration skipped", path);
			continue;
		}
		srv_reg_put(ctx, host, path, NULL, 0);
		n++;
	}
	closedir(dp);
	if (n)
		srv_log(SRV_LOG_INFO, "%d registration(s) restored from %s", n, dir);
	return 0;
}

int srv_state_stage_registration(srv_ctx_t *ctx, const char *host, const char *xml, size_t len, srv_staged_t *f,
				 rm_error_t *err)
{
	char dir[4096], name[300];

	snprintf(dir, sizeof(dir), "%s/registrations", ctx->cfg.state_dir);
	snprintf(name, sizeof(name), "%s.xml", host);
	return srv_state_stage(dir, name, xml, len, f, err);
}

size_t srv_state_place_registrations(srv_ctx_t *ctx, srv_staged_t **files, size_t n, rm_error_t **errs)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/registrations", ctx->cfg.state_dir);
	return srv_state_place(dir, files, n, errs);
}

int srv_state_save_model(srv_ctx_t *ctx, const srv_model_t *m, rm_error_t *err)
{
	json_t *st = json_pack("{s:i, s:I, s:I, s:O, s:I}", "version", 1, "generation", (json_int_t)m->generation,
			       "built_at", (json_int_t)m->built_at, "sources", m->sources, "registered",
			       (json_int_t)m->nregistered);
	char *text = st ? json_dumps(st, JSON_INDENT(1) | JSON_SORT_KEYS) : NULL;
	int rc;

	json_decref(st);
	if (!text)
		return rm_error_set(err, "state.json", 0, 0, "cannot encode the state");
	rc = srv_state_write_file(ctx->cfg.state_dir, "state.json", text, strlen(text), err);
	free(text);
	return rc;
}

void srv_state_load_generation(srv_ctx_t *ctx)
{
	char path[4096], msg[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 32], *text;
	json_error_t jerr = { .line = 0 };
	rm_error_t e = { 0 };
	json_t *st = NULL;
	json_int_t gen = 0;
	size_t len;

	snprintf(path, sizeof(path), "%s/state.json", ctx->cfg.state_dir);
	if (access(path, F_OK) < 0)
		return;
	/* through rm_file: a FIFO or a device put in place of the state must not block the start */
	if (!(text = rm_file_read(path, RM_FILE_CONFIG, &len, &e))) {
		srv_log(SRV_LOG_WARNING, "%s, model generations restart at 1", rm_error_format(&e, msg, sizeof(msg)));
		return;
	}
	st = json_loadb(text, len, 0, &jerr);
	free(text);
	if (!st || json_unpack(st, "{s:I}", "generation", &gen) < 0 || gen < 0)
		srv_log(SRV_LOG_WARNING, "%s:%d: unreadable state, model generations restart at 1", path, jerr.line);
	else
		ctx->generation = (unsigned long)gen;
	json_decref(st);
}

/* ---- registrations in memory ---------------------------------------------------------------- */

/* Saved registrations are remembered by file (memory stays O(hosts)); one that could not be saved
 * keeps its XML in memory so that it still takes effect until the next restart. */
unsigned long srv_reg_put(srv_ctx_t *ctx, const char *host, const char *file, const char *xml, size_t len)
{
	unsigned long seq;
	json_t *v = file ? json_pack("{s:s}", "file", file) : json_pack("{s:o}", "xml", json_stringn_nocheck(xml, len));

	pthread_mutex_lock(&ctx->reg_lock);
	json_object_set_new(ctx->registrations, host, v);
	seq = ++ctx->reg_seq;
	pthread_mutex_unlock(&ctx->reg_lock);
	return seq;
}

void srv_reg_foreach(srv_ctx_t *ctx, srv_reg_fn_t fn, void *arg, unsigned long *seq_out)
{
	const char *host;
	json_t *v, *x;

	pthread_mutex_lock(&ctx->reg_lock);
	json_object_foreach (ctx->registrations, host, v) {
		x = json_object_get(v, "xml");
		fn(arg, host, json_string_value(json_object_get(v, "file")), json_string_value(x),
		   json_string_length(x));
	}
	if (seq_out)
		*seq_out = ctx->reg_seq;
	pthread_mutex_unlock(&ctx->reg_lock);
}
