/*
 * plugin/spank/spank_opts.c: plugstack.conf arguments, --rankmap* options and the task environment.
 */
#include "spank_opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapping.h"
#include "rm_file.h"
#include "rm_client.h"

static int parse_onoff(const char *v, int *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "1") || !strcmp(v, "true"))
		*out = 1;
	else if (!strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "0") || !strcmp(v, "false"))
		*out = 0;
	else
		return -1;
	return 0;
}

static int set_path(char *dst, size_t len, const char *v)
{
	if (v[0] != '/' || strlen(v) >= len)
		return -1;
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

/* Applies one NAME=VALUE argument. Returns 0 or -1 with err set. */
/* server=HOST:PORT[,HOST:PORT...] (entries may also be /socket paths): every entry is checked here, so
 * that a typo is reported when slurmd starts rather than when a job runs. */
static int conf_server(rm_spank_conf_t *c, const char *arg, const char *v, rm_error_t *err)
{
	char entry[256], host[256];
	int i, port, n = rm_client_server_count(v);
	rm_error_t perr = { 0 };

	if (n < 1 || n > RM_SERVERS_MAX || strlen(v) >= sizeof(c->socket))
		return rm_error_set(err, arg, 0, 0,
				    "bad value in plugstack.conf argument '%s' (1 to %d entries "
				    "HOST:PORT or /socket, comma-separated)",
				    arg, RM_SERVERS_MAX);
	for (i = 0; i < n; i++) {
		if (rm_client_server_entry(v, i, entry, sizeof(entry)) < 0 || !*entry)
			return rm_error_set(err, arg, 0, 0,
					    "plugstack.conf argument '%s': entry %d is empty or too "
					    "long",
					    arg, i + 1);
		if (*entry != '/' && rm_client_server_parse(entry, host, sizeof(host), &port, &perr) < 0)
			return rm_error_set(err, arg, 0, 0, "plugstack.conf argument '%s': %s", arg, perr.text);
	}
	snprintf(c->socket, sizeof(c->socket), "%s", v);
	c->server_set = 1;
	return 0;
}

static int conf_apply(rm_spank_conf_t *c, const char *arg, rm_error_t *err)
{
	const char *eq = strchr(arg, '=');
	const char *v = eq ? eq + 1 : "";
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
	int rc = -1;
	char *end;

#define IS(name) (n == strlen(name) && !strncmp(arg, name, n))
	if (!eq)
		return rm_error_set(err, arg, 0, 0, "plugstack.conf argument '%s' is not NAME=VALUE", arg);
	if (IS("socket"))
		rc = set_path(c->socket, sizeof(c->socket), v);
	else if (IS("server"))
		return conf_server(c, arg, v, err);
	else if (IS("munge_socket"))
		rc = set_path(c->munge_socket, sizeof(c->munge_socket), v);
	else if (IS("server_uid")) {
		unsigned uid;
		if (strlen(v) >= sizeof(c->server_uid) || !*v || rm_auth_server_uid(v, &uid, NULL) < 0)
			return rm_error_set(err, arg, 0, 0,
					    "bad value in plugstack.conf argument '%s' (a uid or a user name: the "
					    "uid rankmapd runs as)",
					    arg);
		snprintf(c->server_uid, sizeof(c->server_uid), "%s", v);
		rc = 0;
	} else if (IS("libdir"))
		rc = set_path(c->libdir, sizeof(c->libdir), v);
	else if (IS("default"))
		rc = parse_onoff(v, &c->default_on);
	else if (IS("bind"))
		rc = parse_onoff(v, &c->bind_default);
	else if (IS("register"))
		rc = parse_onoff(v, &c->register_on);
	else if (IS("learn"))
		rc = parse_onoff(v, &c->learn_default);
	else if (IS("timeout") || IS("pattern_timeout")) {
		long t = strtol(v, &end, 10), max = IS("timeout") ? 60000 : 600000;
		rc = (*v && !*end && t >= 1 && t <= max) ? 0 : -1;
		if (rc == 0)
			*(IS("timeout") ? &c->timeout_ms : &c->pattern_timeout_ms) = (int)t;
	} else {
		return rm_error_set(
			err, arg, 0, 0,
			"unknown plugstack.conf argument '%.*s' (known: socket, "
			"server, munge_socket, server_uid, libdir, default, bind, register, timeout, pattern_timeout, "
			"learn)",
			(int)n, arg);
	}
#undef IS
	if (rc < 0)
		return rm_error_set(err, arg, 0, 0, "bad value in plugstack.conf argument '%s' (%s)", arg,
				    !strncmp(arg, "socket", 6) || !strncmp(arg, "libdir", 6) ||
						    !strncmp(arg, "munge_socket", 12)
					    ? "an absolute path"
				    : !strncmp(arg, "timeout", 7)          ? "milliseconds, 1 to 60000"
				    : !strncmp(arg, "pattern_timeout", 15) ? "milliseconds, 1 to 600000"
									   : "on or off");
	return 0;
}

/* The built-in library directory (make's LIBDIR), kept whole in the plugin's data so that an installed
 * plugin's can be read back (tests/integration/install.sh), not folded into the code that copies it. */
static const char default_libdir[] __attribute__((used)) = RANKMAP_LIBDIR;

int rm_spank_conf_parse(int argc, char *const argv[], rm_spank_conf_t *conf, rm_error_t *err)
{
	memset(conf, 0, sizeof(*conf));
	snprintf(conf->socket, sizeof(conf->socket), "%s", RM_SOCKET_DEFAULT);
	snprintf(conf->libdir, sizeof(conf->libdir), "%s", default_libdir);
	conf->register_on = 1;
	conf->timeout_ms = RM_SPANK_TIMEOUT_DEFAULT;
	conf->pattern_timeout_ms = RM_SPANK_PATTERN_TIMEOUT_DEFAULT;
	for (int i = 0; i < argc; i++) {
		if (conf_apply(conf, argv[i], err) < 0) {
			errno = EINVAL;
			return -1;
		}
	}
	snprintf(conf->timeout_text, sizeof(conf->timeout_text), "%d", conf->timeout_ms);
	return 0;
}

/* --rankmap[=auto|treematch|scotch|off|required] */
static int job_set_mode(rm_spank_job_t *job, const char *v, rm_error_t *err)
{
	static const char *const algos[] = { "auto", "treematch", "scotch", NULL };

	if (!v || !*v || !strcmp(v, "on"))
		v = "auto";
	if (!strcmp(v, "off")) {
		job->mode = RM_SPANK_MODE_OFF;
		return 0;
	}
	if (!strcmp(v, "required")) {
		job->mode = RM_SPANK_MODE_REQUIRED;
		if (!job->algo[0])
			snprintf(job->algo, sizeof(job->algo), "auto");
		return 0;
	}
	for (int i = 0; algos[i]; i++) {
		if (!strcmp(v, algos[i])) {
			if (job->mode != RM_SPANK_MODE_REQUIRED)
				job->mode = RM_SPANK_MODE_ON;
			snprintf(job->algo, sizeof(job->algo), "%s", v);
			return 0;
		}
	}
	errno = EINVAL;
	return rm_error_set(err, "--rankmap", 0, 0,
			    "invalid value '%s' (expected auto, treematch, scotch, off or required)", v);
}

/* Parses the whole pattern file, as the MPI library will; first makes sure it is a regular file within
 * the size cap (a FIFO, a device or a symlink to one is refused without blocking). */
static int check_pattern(const char *path, rm_error_t *err)
{
	int fd = rm_file_open(path, RM_FILE_PATTERN, NULL, err);
	map_graph_t *g;

	if (fd < 0)
		return -1;
	close(fd);
	g = map_graph_load(path, MAP_METRIC_DEFAULT, err);
	if (!g) {
		int e = errno ? errno : EINVAL;
		rm_error_set(err, path, 0, 0, "cannot read the pattern: %s", strerror(e));
		errno = e;
		return -1;
	}
	map_graph_destroy(g);
	return 0;
}

/* The trace is written at MPI_Finalize: its directory must exist and be writable now. */
static int check_trace(const char *path, rm_error_t *err)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (access(dir, W_OK | X_OK) < 0) {
		int e = errno;
		rm_error_set(err, "--rankmap-trace", 0, 0, "cannot write the trace '%s': directory '%s': %s", path, dir,
			     strerror(e));
		errno = e;
		return -1;
	}
	return 0;
}

static int copy_arg(char *dst, size_t len, const char *opt, const char *v, rm_error_t *err)
{
	if (!v || !*v) {
		errno = EINVAL;
		return rm_error_set(err, opt, 0, 0, "needs a value");
	}
	if (strlen(v) >= len) {
		errno = ENAMETOOLONG;
		return rm_error_set(err, opt, 0, 0, "the value is too long");
	}
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

const char *rm_spank_opt_name(int opt)
{
	switch (opt) {
	case RM_SPANK_OPT_RANKMAP: return "--rankmap";
	case RM_SPANK_OPT_PATTERN: return "--rankmap-matrix";
	case RM_SPANK_OPT_PATTERN_OLD: return "--rankmap-pattern";
	case RM_SPANK_OPT_METRIC: return "--rankmap-metric";
	case RM_SPANK_OPT_TRACE: return "--rankmap-trace";
	case RM_SPANK_OPT_BIND: return "--rankmap-bind";
	case RM_SPANK_OPT_LEARN: return "--rankmap-learn";
	default: return "option";
	}
}

const char *rm_spank_pattern_opt(const rm_spank_job_t *job)
{
	return rm_spank_opt_name(job && job->pattern_old ? RM_SPANK_OPT_PATTERN_OLD : RM_SPANK_OPT_PATTERN);
}

int rm_spank_job_set(rm_spank_job_t *job, int opt, const char *v, int check_files, rm_error_t *err)
{
	map_metric_t m;

	switch (opt) {
	case RM_SPANK_OPT_RANKMAP: return job_set_mode(job, v, err);
	case RM_SPANK_OPT_PATTERN:
	case RM_SPANK_OPT_PATTERN_OLD:
		job->pattern_old = opt == RM_SPANK_OPT_PATTERN_OLD;
		if (copy_arg(job->pattern, sizeof(job->pattern), rm_spank_opt_name(opt), v, err) < 0)
			return -1;
		return check_files ? check_pattern(v, err) : 0;
	case RM_SPANK_OPT_METRIC:
		if (copy_arg(job->metric, sizeof(job->metric), "--rankmap-metric", v, err) < 0)
			return -1;
		if (!strcmp(v, "default") || map_metric_parse(v, &m) < 0) {
			errno = EINVAL;
			return rm_error_set(err, "--rankmap-metric", 0, 0,
					    "invalid value '%s' (expected bytes, messages or loggp)", v);
		}
		return 0;
	case RM_SPANK_OPT_TRACE:
		if (copy_arg(job->trace, sizeof(job->trace), "--rankmap-trace", v, err) < 0)
			return -1;
		return check_files ? check_trace(v, err) : 0;
	case RM_SPANK_OPT_BIND:
		if (!v || !*v || !strcmp(v, "cores"))
			job->bind = RM_SPANK_BIND_CORES;
		else if (!strcmp(v, "gpu"))
			job->bind = RM_SPANK_BIND_GPU;
		else {
			errno = EINVAL;
			return rm_error_set(err, "--rankmap-bind", 0, 0, "invalid value '%s' (expected cores or gpu)",
					    v);
		}
		return 0;
	case RM_SPANK_OPT_LEARN:
		if (!v || !*v || !strcmp(v, "on"))
			job->learn = 1;
		else if (!strcmp(v, "off"))
			job->learn = -1;
		else {
			errno = EINVAL;
			return rm_error_set(err, "--rankmap-learn", 0, 0, "invalid value '%s' (expected on or off)", v);
		}
		return 0;
	default: errno = EINVAL; return rm_error_set(err, "option", 0, 0, "unknown option %d", opt);
	}
}

int spank_path_resolve(const char *dir, const char *path, char *out, size_t len, const char *opt, rm_error_t *err)
{
	int n;

	if (!opt)
		opt = rm_spank_opt_name(RM_SPANK_OPT_PATTERN);
	if (path[0] == '/') {
		n = snprintf(out, len, "%s", path);
	} else if (!dir || dir[0] != '/') {
		errno = EINVAL;
		return rm_error_set(err, opt, 0, 0,
				    "cannot resolve the relative path '%s': the step has "
				    "no absolute SLURM_SUBMIT_DIR",
				    path);
	} else {
		n = snprintf(out, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", path);
	}
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return rm_error_set(err, opt, 0, 0, "path too long");
	}
	return 0;
}

int rm_spank_job_active(const rm_spank_job_t *job, const rm_spank_conf_t *conf)
{
	if (job->mode == RM_SPANK_MODE_OFF)
		return 0;
	if (job->mode != RM_SPANK_MODE_UNSET)
		return 1;
	return conf->default_on || job->pattern[0] || job->metric[0] || job->trace[0] || job->bind || job->learn > 0 ||
	       (conf->learn_default && job->learn == 0);
}

int rm_spank_job_learns(const rm_spank_job_t *job, const rm_spank_conf_t *conf)
{
	return rm_spank_job_active(job, conf) && (job->learn > 0 || (job->learn == 0 && conf->learn_default));
}

int rm_spank_job_binds(const rm_spank_job_t *job, const rm_spank_conf_t *conf)
{
	if (!rm_spank_job_active(job, conf))
		return 0;
	return job->bind ? job->bind : conf->bind_default ? RM_SPANK_BIND_CORES : 0;
}

/* True when lib is one of the entries of a colon/space separated list. */
static int preload_has(const char *list, const char *lib)
{
	size_t n = strlen(lib);

	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ": ");
		if (len == n && !strncmp(p, lib, n))
			return 1;
		p += len;
		p += strspn(p, ": ");
	}
	return 0;
}

char *rm_spank_preload_prepend(const char *lib, const char *existing)
{
	char *out;
	size_t len;

	if (existing && existing[strspn(existing, ": ")] == '\0')
		existing = NULL;
	if (existing && preload_has(existing, lib))
		return strdup(existing);
	len = strlen(lib) + (existing ? strlen(existing) + 1 : 0) + 1;
	out = malloc(len);
	if (!out)
		return NULL;
	snprintf(out, len, existing ? "%s:%s" : "%s", lib, existing ? existing : "");
	return out;
}

int rm_spank_mpi_library(const rm_spank_conf_t *conf, rm_spank_mpi_t mpi, char *buf, size_t len)
{
	int n;

	if (mpi == RM_SPANK_MPI_NONE) {
		errno = EINVAL;
		return -1;
	}
	n = snprintf(buf, len, "%s/librankmap_mpi_%s.so", conf->libdir, rm_spank_mpi_name(mpi));
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

size_t rm_spank_job_env(const rm_spank_job_t *job, const rm_spank_conf_t *conf, rm_spank_envvar_t *vars)
{
	size_t n = 0;

	vars[n++] = (rm_spank_envvar_t){ conf->server_set ? RM_SERVER_ENV : RM_SOCKET_ENV, conf->socket };
	vars[n++] = (rm_spank_envvar_t){ "RANKMAP_ALGO", job->algo[0] ? job->algo : "auto" };
	if (job->pattern[0])
		vars[n++] = (rm_spank_envvar_t){ "RANKMAP_PATTERN", job->pattern };
	if (job->metric[0])
		vars[n++] = (rm_spank_envvar_t){ "RANKMAP_METRIC", job->metric };
	if (job->trace[0])
		vars[n++] = (rm_spank_envvar_t){ "RANKMAP_TRACE", job->trace };
	vars[n++] = (rm_spank_envvar_t){ "RANKMAP_TIMEOUT_MS", conf->timeout_text };
	if (conf->munge_socket[0])
		vars[n++] = (rm_spank_envvar_t){ "RANKMAP_MUNGE_SOCKET", conf->munge_socket };
	if (conf->server_uid[0])
		vars[n++] = (rm_spank_envvar_t){ RM_SERVER_UID_ENV, conf->server_uid };
	if (rm_spank_job_learns(job, conf))
		vars[n++] = (rm_spank_envvar_t){ "RANKMAP_LEARN", "1" };
	/* the current names too, so that a stale RANKMAP_ENGINE or RANKMAP_MATRIX of the user's environment
	 * (which the library prefers to the old names) never overrides the job's options */
	vars[n++] = (rm_spank_envvar_t){ "RANKMAP_ENGINE", job->algo[0] ? job->algo : "auto" };
	if (job->pattern[0])
		vars[n++] = (rm_spank_envvar_t){ "RANKMAP_MATRIX", job->pattern };
	return n;
}

void rm_spank_servers_first(char *list, int i)
{
	char out[PATH_MAX], entry[PATH_MAX];
	int k, n = rm_client_server_count(list);
	size_t used;

	if (i <= 0 || i >= n || strlen(list) >= sizeof(out) ||
	    rm_client_server_entry(list, i, entry, sizeof(entry)) < 0)
		return;
	used = (size_t)snprintf(out, sizeof(out), "%s", entry);
	for (k = 0; k < n; k++)
		if (k != i && rm_client_server_entry(list, k, entry, sizeof(entry)) == 0)
			used += (size_t)snprintf(out + used, sizeof(out) - used, ",%s", entry);
	if (used < sizeof(out))
		memcpy(list, out, used + 1);
}

int rm_spank_register_retry_ms(const char *code, int tries, long left_ms)
{
	long wait;

	if (!code || strcmp(code, "timeout") || tries < 1 || tries >= RM_SPANK_REGISTER_TRIES)
		return -1;
	wait = (long)RM_SPANK_REGISTER_BACKOFF_MS << (tries - 1);
	return left_ms - wait >= RM_SPANK_REGISTER_MIN_TRY_MS ? (int)wait : -1;
}
