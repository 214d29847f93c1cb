/*
 * daemon/server/srv_model.c: the cluster model rankmapd serves. A model is built from the configured sources
 * (cluster file, hwloc directory, ibnetdiscover files, node-name map, live fabric, torus) and the
 * nodes' registrations, then published; requests take a reference on the current model and never
 * see it change under them. register/reload/refresh build a new one and swap it in.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <infiniband/ibnetdisc.h>

#include "rm_tmpfile.h"
#include "srv.h"

srv_model_t *srv_model_get(srv_ctx_t *ctx)
{
	srv_model_t *m;

	pthread_mutex_lock(&ctx->model_lock);
	m = ctx->model;
	if (m)
		__atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ctx->model_lock);
	return m;
}

void srv_model_put(srv_model_t *m)
{
	int i;

	if (!m || __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	for (i = 0; i < SRV_TCACHE; i++) {
		free(m->tc[i].key);
		topo_target_destroy(m->tc[i].t);
	}
	pthread_mutex_destroy(&m->tc_lock);
	topo_cluster_destroy(m->cluster);
	json_decref(m->sources);
	json_decref(m->warnings);
	json_decref(m->reg_ignored);
	free(m);
}

void srv_model_publish(srv_ctx_t *ctx, srv_model_t *m)
{
	srv_model_t *old;

	pthread_mutex_lock(&ctx->model_lock);
	old = ctx->model;
	m->generation = ++ctx->generation;
	ctx->model = m;
	pthread_mutex_unlock(&ctx->model_lock);
	srv_model_put(old);
}

/* ---- target cache ------------------------------------------------------------------------------- */

/* Handles: a cache entry, or a private target tagged by its lowest bit (targets are aligned). */
#define PRIVATE_TAG 1u

const topo_target_t *srv_model_target(srv_model_t *m, const char *key,
				      topo_target_t *(*build)(void *arg, rm_error_t *err), void *arg, void **handle,
				      rm_error_t *err)
{
	srv_tcache_t *e, *victim = NULL;
	topo_target_t *t;
	int i;

	pthread_mutex_lock(&m->tc_lock);
	for (i = 0; i < SRV_TCACHE; i++) {
		e = &m->tc[i];
		if (e->key && !strcmp(e->key, key)) {
			e->refs++;
			e->used = ++m->tc_clock;
			pthread_mutex_unlock(&m->tc_lock);
			*handle = e;
			return e->t;
		}
		if (!e->refs && (!victim || !e->key || (victim->key && e->used < victim->used)))
			victim = e;
	}
	pthread_mutex_unlock(&m->tc_lock);
	/* build outside the lock; two requests may build the same target, one keeps it */
	if (!(t = build(arg, err)))
		return NULL;
	pthread_mutex_lock(&m->tc_lock);
	if (victim && !victim->refs && t->nslots <= SRV_TCACHE_MAX_SLOTS && strlen(key) < SRV_TCACHE_MAX_KEY) {
		char *k = strdup(key);
		if (k) {
			free(victim->key);
			topo_target_destroy(victim->t);
			victim->key = k;
			victim->t = t;
			victim->refs = 1;
			victim->used = ++m->tc_clock;
			pthread_mutex_unlock(&m->tc_lock);
			*handle = victim;
			return t;
		}
	}
	pthread_mutex_unlock(&m->tc_lock);
	*handle = (void *)((uintptr_t)t | PRIVATE_TAG);
	return t;
}

void srv_model_target_private(const topo_target_t *t, void **handle)
{
	*handle = (void *)((uintptr_t)t | PRIVATE_TAG);
}

void srv_model_target_put(srv_model_t *m, void *handle)
{
	uintptr_t h = (uintptr_t)handle;

	if (!handle)
		return;
	if (h & PRIVATE_TAG) {
		topo_target_destroy((topo_target_t *)(h & ~(uintptr_t)PRIVATE_TAG));
		return;
	}
	pthread_mutex_lock(&m->tc_lock);
	((srv_tcache_t *)handle)->refs--;
	pthread_mutex_unlock(&m->tc_lock);
}

/* ---- hwloc directory and cluster file, with registrations taking precedence ---------------------- */

typedef struct build {
	srv_ctx_t *ctx;
	topo_cluster_t c;
	json_t *sources;
	json_t *warnings;
	json_t *reg_ignored;
	size_t nreg;
	unsigned long reg_seq;
	rm_error_t *err;
	int failed;
} build_t;

static int has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a > b && !strcmp(s + a - b, suf);
}

/* Does the directory hold <host>.xml or <host>.diff.xml for a registered host? */
static int dir_overlaps(build_t *b, const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *d;
	char host[256];
	int hit = 0;

	if (!dp)
		return 0;
	pthread_mutex_lock(&b->ctx->reg_lock);
	while (!hit && (d = readdir(dp))) {
		size_t n = strlen(d->d_name), cut = has_suffix(d->d_name, ".diff.xml") ? 9 : 4;
		if (!has_suffix(d->d_name, ".xml") || n - cut >= sizeof(host))
			continue;
		memcpy(host, d->d_name, n - cut);
		host[n - cut] = 0;
		hit = json_object_get(b->ctx->registrations, host) != NULL;
	}
	pthread_mutex_unlock(&b->ctx->reg_lock);
	closedir(dp);
	return hit;
}

/* One file of the directory: a bad one fails the build in strict mode, else it is an anomaly. */
static int load_dir_file(build_t *b, const char *path, const char *host)
{
	rm_error_t e = { 0 };

	if (b->ctx->cfg.strict)
		return topo_load_hwloc_xml(b->c, path, host, b->err);
	if (topo_load_hwloc_xml(b->c, path, host, &e) < 0 &&
	    topo_cluster_add_anomaly(b->c, "bad_host_file", host, &e) < 0)
		return rm_error_set(b->err, path, 0, 0, "out of memory");
	return 0;
}

/* Logs one warning per host the load left out or patched partially (per-host fault isolation). */
static void log_anomalies(build_t *b)
{
	size_t i, n = topo_cluster_nanomalies(b->c);

	for (i = 0; i < n; i++) {
		const topo_anomaly_t *a = topo_cluster_anomaly(b->c, i);
		char where[RM_ERROR_SOURCE_LEN + 16];

		if (a->line > 0)
			snprintf(where, sizeof(where), "%s:%d", a->file, a->line);
		else
			snprintf(where, sizeof(where), "%s", a->file);
		srv_log(SRV_LOG_WARNING, "%s: host %s %s: %s: %s", a->kind, a->host,
			!strcmp(a->kind, "diff_hunk") ? "keeps its reference's value" : "left out", where, a->reason);
		json_array_append_new(b->warnings,
				      json_sprintf("%s: host %s: %s: %s", a->kind, a->host, where, a->reason));
	}
}

/* Loads the directory file by file, skipping registered hosts (diffs of unregistered hosts cannot be
 * loaded one by one and are skipped with a warning). */
static int load_dir_filtered(build_t *b, const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *d;
	char path[4096 + 256], host[256];
	int reg, rc = 0;

	if (!dp)
		return rm_error_set(b->err, dir, 0, 0, "cannot open: %s", strerror(errno));
	while (rc == 0 && (d = readdir(dp))) {
		size_t n = strlen(d->d_name);
		if (!has_suffix(d->d_name, ".xml") || d->d_name[0] == '.' || n - 4 >= sizeof(host))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (has_suffix(d->d_name, ".diff.xml")) {
			json_array_append_new(b->warnings, json_sprintf("%s: diff skipped (a registered node "
									"overrides this directory)",
									path));
			continue;
		}
		memcpy(host, d->d_name, n - 4);
		host[n - 4] = 0;
		pthread_mutex_lock(&b->ctx->reg_lock);
		reg = json_object_get(b->ctx->registrations, host) != NULL;
		pthread_mutex_unlock(&b->ctx->reg_lock);
		if (!reg)
			rc = load_dir_file(b, path, host);
	}
	closedir(dp);
	return rc;
}

/* ---- registrations: the pool ------------------------------------------------------------------- */

/* The pool, created on first use (caller holds pool_lock). */
static topo_cluster_t pool_get(srv_ctx_t *ctx)
{
	if (!ctx->pool && (ctx->pool = topo_cluster_create())) {
		topo_cluster_replace_hw(ctx->pool, 1); /* a node's new registration replaces its old one */
		/* one parser child for the registrations of new node types, not a fork each (a fork while other
		 * threads allocate is what GCC 12's ASan runtime cannot do safely, srv_config.c) */
		topo_cluster_keep_parser(ctx->pool, 1);
	}
	if (!ctx->pool_pending)
		ctx->pool_pending = json_array();
	if (!ctx->pool_ignored)
		ctx->pool_ignored = json_object();
	return ctx->pool && ctx->pool_pending && ctx->pool_ignored ? ctx->pool : NULL;
}

unsigned long srv_model_pool_add(srv_ctx_t *ctx, const char *host, const char *xml, size_t len, rm_error_t *err)
{
	unsigned long seq = 0;
	topo_cluster_t pool;
	int e = ENOMEM;

	pthread_mutex_lock(&ctx->pool_lock);
	if (!(pool = pool_get(ctx)))
		rm_error_set(err, "register", 0, 0, "out of memory");
	else if (topo_load_hwloc_xmlbuf(pool, host, xml, len, host, err) < 0)
		e = errno; /* the pool is as it was (topo's loads are all or nothing) */
	else if (json_array_append_new(ctx->pool_pending, json_string(host)) == 0) {
		json_object_del(ctx->pool_ignored, host);
		seq = ++ctx->pool_seq;
	} else
		rm_error_set(err, "register", 0, 0, "out of memory");
	pthread_mutex_unlock(&ctx->pool_lock);
	errno = seq ? 0 : e;
	return seq;
}

static void restore_one(void *arg, const char *host, const char *file, const char *xml, size_t len)
{
	srv_ctx_t *ctx = arg;
	rm_error_t e = { 0 };
	char msg[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 32];
	topo_cluster_t pool = pool_get(ctx);
	int rc;

	if (!pool)
		rc = rm_error_set(&e, host, 0, 0, "out of memory");
	else
		rc = file ? topo_load_hwloc_xml(pool, file, host, &e)
			  : topo_load_hwloc_xmlbuf(pool, host, xml, len, host, &e);
	if (rc < 0) { /* one bad registration must not cost the others */
		srv_log(SRV_LOG_WARNING, "registration of %s ignored: %s", host, rm_error_format(&e, msg, sizeof(msg)));
		if (ctx->pool_ignored)
			json_object_set_new(ctx->pool_ignored, host, json_string(msg));
	}
}

void srv_model_pool_restore(srv_ctx_t *ctx)
{
	pthread_mutex_lock(&ctx->pool_lock);
	srv_reg_foreach(ctx, restore_one, ctx, NULL);
	if (pool_get(ctx))
		ctx->pool_seq++;
	pthread_mutex_unlock(&ctx->pool_lock);
}

void srv_model_pool_free(srv_ctx_t *ctx)
{
	topo_cluster_destroy(ctx->pool);
	json_decref(ctx->pool_pending);
	json_decref(ctx->pool_ignored);
	ctx->pool = NULL;
	ctx->pool_pending = ctx->pool_ignored = NULL;
}

/* The registered hosts into the build (types shared with the pool: nothing is read or parsed again),
 * the ones that could not be loaded into warnings. */
static int load_registrations(build_t *b)
{
	const char *host;
	json_t *why;
	int rc = 0;

	pthread_mutex_lock(&b->ctx->pool_lock);
	if (pool_get(b->ctx)) {
		rc = topo_cluster_add_hosts_from(b->c, b->ctx->pool, b->err);
		b->nreg = topo_nhosts(b->ctx->pool);
		json_object_foreach (b->ctx->pool_ignored, host, why) {
			json_object_set(b->reg_ignored, host, why);
			json_array_append_new(b->warnings, json_sprintf("registration of %s ignored: %s", host,
									json_string_value(why)));
		}
		json_array_clear(b->ctx->pool_pending);
	}
	b->reg_seq = b->ctx->pool_seq;
	pthread_mutex_unlock(&b->ctx->pool_lock);
	return rc;
}

/* ---- live fabric -------------------------------------------------------------------------------- */

static size_t count_nodes(ibnd_fabric_t *f, int type)
{
	ibnd_node_t *n;
	size_t k = 0;

	for (n = f->nodes; n; n = n->next)
		if (!type || n->type == type)
			k++;
	return k;
}

/* Writes f as the cache file: to a temporary name of its own (two discoveries may overlap), fsync'ed and
 * renamed like every other state file. */
static int write_ib_cache(srv_ctx_t *ctx, ibnd_fabric_t *f, rm_error_t *err)
{
	char tmp[4096];
	int fd = rm_tmpfile_beside(ctx->ib_cache_path, 0600, tmp, sizeof(tmp));

	if (fd < 0)
		return rm_error_set(err, ctx->ib_cache_path, 0, 0, "cannot create a temporary file: %s",
				    strerror(errno));
	close(fd);
	unlink(tmp); /* the name stays ours; ibnd_cache_fabric refuses to overwrite a file */
	if (ibnd_cache_fabric(f, tmp, 0) < 0) {
		rm_error_set(err, tmp, 0, 0, "cannot write the fabric cache");
	} else if ((fd = open(tmp, O_RDONLY | O_CLOEXEC)) < 0 || fsync(fd) < 0) {
		rm_error_set(err, tmp, 0, 0, "cannot sync the fabric cache: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
	} else {
		close(fd);
		if (rename(tmp, ctx->ib_cache_path) == 0)
			return 0;
		rm_error_set(err, ctx->ib_cache_path, 0, 0, "cannot rename: %s", strerror(errno));
	}
	unlink(tmp);
	return -1;
}

/* Discovers the fabric with libibnetdisc and keeps it as a cache file in the state directory. */
int srv_model_ib_discover(srv_ctx_t *ctx, rm_error_t *err)
{
	struct ibnd_config icfg = { .timeout_ms = 1000, .retries = 2 };
	ibnd_fabric_t *f;
	json_t *st;
	int rc;
	long long t0 = srv_now_ms();

	f = ibnd_discover_fabric(ctx->cfg.ib_ca, ctx->cfg.ib_port, NULL, &icfg);
	if (!f)
		return rm_error_set(err, "libibnetdisc", 0, 0, "fabric discovery failed (ca %s port %d)",
				    ctx->cfg.ib_ca ? ctx->cfg.ib_ca : "default", ctx->cfg.ib_port);
	rc = write_ib_cache(ctx, f, err);
	st = json_pack("{s:b, s:I, s:I, s:I, s:f}", "ok", rc == 0, "nodes", (json_int_t)count_nodes(f, 0), "switches",
		       (json_int_t)count_nodes(f, IB_NODE_SWITCH), "cas", (json_int_t)count_nodes(f, IB_NODE_CA),
		       "discovery_ms", (double)(srv_now_ms() - t0));
	ibnd_destroy_fabric(f);
	pthread_mutex_lock(&ctx->ib_lock);
	json_decref(ctx->ib_status);
	ctx->ib_status = st;
	if (rc == 0)
		ctx->ib_cached = 1;
	pthread_mutex_unlock(&ctx->ib_lock);
	return rc;
}

/* The live fabric: from the cache of the last discovery when there is one, else discovered now. */
static int load_ib_live(build_t *b)
{
	rm_error_t e = { 0 };
	char msg[600];
	struct stat st;

	if (stat(b->ctx->ib_cache_path, &st) == 0) {
		if (topo_load_ib_cache(b->c, b->ctx->ib_cache_path, &e) == 0) {
			json_object_set_new(b->sources, "ib_live",
					    json_pack("{s:s, s:s}", "from", "cache", "cache", b->ctx->ib_cache_path));
			return 0;
		}
		srv_log(SRV_LOG_WARNING, "fabric cache unusable (%s); discovering live",
			rm_error_format(&e, msg, sizeof(msg)));
		rm_error_clear(&e);
	}
	if (topo_load_ib_live(b->c, b->ctx->cfg.ib_ca, b->ctx->cfg.ib_port, &e) == 0) {
		json_object_set_new(b->sources, "ib_live", json_pack("{s:s}", "from", "libibnetdisc"));
		return 0;
	}
	/* No fabric is a degraded model, not a reason to stop serving hardware data. */
	rm_error_format(&e, msg, sizeof(msg));
	srv_log(SRV_LOG_WARNING, "live fabric unavailable: %s", msg);
	json_array_append_new(b->warnings, json_sprintf("live fabric unavailable: %s", msg));
	return 0;
}

/* ---- building ----------------------------------------------------------------------------------- */

static int load_sources(build_t *b)
{
	const srv_config_t *cfg = &b->ctx->cfg;
	json_t *ib;
	int i;

	if (cfg->cluster_file && topo_load_cluster_file(b->c, cfg->cluster_file, b->err) < 0)
		return -1;
	if (cfg->cluster_file)
		json_object_set_new(b->sources, "cluster", json_string(cfg->cluster_file));
	if (cfg->hwloc_dir) {
		if (dir_overlaps(b, cfg->hwloc_dir) ? load_dir_filtered(b, cfg->hwloc_dir) < 0
						    : topo_load_hwloc_dir(b->c, cfg->hwloc_dir, b->err) < 0)
			return -1;
		json_object_set_new(b->sources, "hwloc_dir", json_string(cfg->hwloc_dir));
	}
	if (load_registrations(b) < 0) /* a node's registration overrides the static sources */
		return -1;
	json_object_set_new(b->sources, "registrations", json_integer((json_int_t)b->nreg));
	if (cfg->node_name_map && topo_load_node_name_map(b->c, cfg->node_name_map, b->err) < 0)
		return -1;
	if (cfg->node_name_map)
		json_object_set_new(b->sources, "node_name_map", json_string(cfg->node_name_map));
	json_object_set_new(b->sources, "ib_files", ib = json_array());
	for (i = 0; i < cfg->n_ib_files; i++) {
		if (topo_load_ib_file(b->c, cfg->ib_files[i], b->err) < 0)
			return -1;
		json_array_append_new(ib, json_string(cfg->ib_files[i]));
	}
	if (cfg->ib_live)
		load_ib_live(b);
	if (cfg->torus && topo_load_torus(b->c, cfg->torus, b->err) < 0)
		return -1;
	if (cfg->torus)
		json_object_set_new(b->sources, "torus", json_string(cfg->torus));
	return topo_cluster_finalize(b->c, b->err);
}

srv_model_t *srv_model_build(srv_ctx_t *ctx, rm_error_t *err)
{
	build_t b = { .ctx = ctx, .err = err };
	long long t0 = srv_now_ms();
	srv_model_t *m = calloc(1, sizeof(*m));

	b.c = topo_cluster_create();
	b.sources = json_object();
	b.warnings = json_array();
	b.reg_ignored = json_object();
	if (!m || !b.c || !b.sources || !b.warnings || !b.reg_ignored) {
		rm_error_set(err, "model", 0, 0, "out of memory");
		goto fail;
	}
	topo_cluster_set_strict(b.c, ctx->cfg.strict);
	if (load_sources(&b) < 0)
		goto fail;
	log_anomalies(&b);
	m->refs = 1;
	pthread_mutex_init(&m->tc_lock, NULL);
	m->cluster = b.c;
	m->sources = b.sources;
	m->warnings = b.warnings;
	m->reg_ignored = b.reg_ignored;
	m->nregistered = b.nreg;
	m->built_at = (long long)time(NULL);
	m->build_ms = (double)(srv_now_ms() - t0);
	m->reg_seq = b.reg_seq;
	return m;
fail:
	topo_cluster_destroy(b.c);
	json_decref(b.sources);
	json_decref(b.warnings);
	json_decref(b.reg_ignored);
	free(m);
	return NULL;
}

int srv_model_rebuild(srv_ctx_t *ctx, unsigned long reg_seq, rm_error_t *err)
{
	srv_model_t *m;
	char msg[600];
	rm_error_t serr = { 0 };
	int rc = 0;

	pthread_mutex_lock(&ctx->build_lock);
	if (reg_seq && ctx->built_reg_seq >= reg_seq)
		goto out; /* another build already covered this registration */
	m = srv_model_build(ctx, err);
	if (!m) {
		rc = -1;
		goto out;
	}
	ctx->built_reg_seq = m->reg_seq;
	srv_model_publish(ctx, m);
	srv_log(SRV_LOG_INFO, "model %lu: %zu hosts, %zu registered, built in %.0f ms", m->generation,
		topo_nhosts(m->cluster), m->nregistered, m->build_ms);
	if (srv_state_save_model(ctx, m, &serr) < 0)
		srv_log(SRV_LOG_ERR, "state not saved: %s", rm_error_format(&serr, msg, sizeof(msg)));
out:
	pthread_mutex_unlock(&ctx->build_lock);
	return rc;
}

/* ---- registrations applied by what changed -------------------------------------------------------- */

/* The model m_old with the pending hosts changed, or NULL (errno EAGAIN: a full build is needed). Caller
 * holds build_lock; takes pool_lock. */
static srv_model_t *derive(srv_ctx_t *ctx, srv_model_t *old, size_t *nchanged, rm_error_t *err)
{
	long long t0 = srv_now_ms();
	srv_model_t *m = calloc(1, sizeof(*m));
	const char **names = NULL;
	topo_cluster_t c = NULL;
	size_t i, n;

	pthread_mutex_lock(&ctx->pool_lock);
	*nchanged = n = ctx->pool_pending ? json_array_size(ctx->pool_pending) : 0;
	if (m && (names = calloc(n + 1, sizeof(*names)))) {
		for (i = 0; i < n; i++)
			names[i] = json_string_value(json_array_get(ctx->pool_pending, i));
		c = topo_cluster_derive(old->cluster, ctx->pool, names, n, err);
	}
	if (c) {
		m->nregistered = topo_nhosts(ctx->pool);
		m->reg_seq = ctx->pool_seq;
		m->reg_ignored = json_deep_copy(old->reg_ignored);
		for (i = 0; i < n && m->reg_ignored; i++)
			json_object_del(m->reg_ignored, names[i]);
		json_array_clear(ctx->pool_pending);
	}
	pthread_mutex_unlock(&ctx->pool_lock);
	free(names);
	m = m && c ? m : (free(m), NULL);
	if (!m) {
		topo_cluster_destroy(c);
		return NULL;
	}
	m->refs = 1;
	pthread_mutex_init(&m->tc_lock, NULL);
	m->cluster = c;
	m->sources = json_deep_copy(old->sources);
	m->warnings = json_copy(old->warnings);
	json_object_set_new(m->sources, "registrations", json_integer((json_int_t)m->nregistered));
	m->built_at = (long long)time(NULL);
	m->build_ms = (double)(srv_now_ms() - t0);
	return m;
}

int srv_model_update(srv_ctx_t *ctx, unsigned long seq, rm_error_t *err)
{
	srv_model_t *old, *m;
	rm_error_t derr = { 0 }, serr = { 0 };
	char msg[600];
	size_t nchanged = 0;
	int rc = 0, full;

	pthread_mutex_lock(&ctx->build_lock);
	if (ctx->built_reg_seq >= seq)
		goto out; /* an update for registrations that arrived together already covered this one */
	old = srv_model_get(ctx);
	m = old ? derive(ctx, old, &nchanged, &derr) : NULL;
	srv_model_put(old);
	if (!m && old && errno != EAGAIN)
		srv_log(SRV_LOG_WARNING, "model update: %s; building in full",
			rm_error_format(&derr, msg, sizeof(msg)));
	if ((full = !m) && !(m = srv_model_build(ctx, err))) {
		rc = -1;
		goto out;
	}
	ctx->built_reg_seq = m->reg_seq;
	srv_model_publish(ctx, m);
	if (full)
		srv_log(SRV_LOG_INFO, "model %lu: %zu hosts, %zu registered, built in %.0f ms (in full)", m->generation,
			topo_nhosts(m->cluster), m->nregistered, m->build_ms);
	else
		srv_log(SRV_LOG_INFO, "model %lu: %zu hosts, %zu registered, %zu changed in %.1f ms", m->generation,
			topo_nhosts(m->cluster), m->nregistered, nchanged, m->build_ms);
	if (srv_state_save_model(ctx, m, &serr) < 0)
		srv_log(SRV_LOG_ERR, "state not saved: %s", rm_error_format(&serr, msg, sizeof(msg)));
out:
	pthread_mutex_unlock(&ctx->build_lock);
	return rc;
}
