/*
 * daemon/server/srv_config.c: rankmapd.conf, parsed from one table of entries (name, type, bounds, default,
 * target field). Format: `name = value` lines, `#` comments, blank lines ignored; relative paths are
 * relative to the file's directory; list entries (ib_file) may repeat. Errors name file and line.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rm_client.h"
#include "srv.h"
#include "rm_file.h"
#include "rm_text.h"

typedef enum {
	C_STR,
	C_PATH,
	C_PATHLIST,
	C_LISTEN,
	C_BOOL,
	C_INT,
	C_SIZE,
	C_MODE,
	C_MS,
	C_SEC,
	C_LOGLEVEL,
	C_ISOLATION
} ctype_t;

typedef struct centry {
	const char *name;
	ctype_t type;
	long long min, max; /* bounds of numbers (C_MS/C_SEC in ms/s, C_SIZE in bytes) */
	const char *def;    /* default as it would be written in the file (NULL: unset) */
	size_t off;         /* field of srv_config_t */
	const char *help;
} centry_t;

/* process, except in an AddressSanitizer build: GCC 12's ASan runtime does not lock its allocator
 * around fork(), so a worker process forked while another thread allocates can deadlock on its
 * first malloc (seen as requests running into worker_time_limit in the sanitized suite). Tests of
 * the isolation itself set isolation = process explicitly (tests/integration/daemon_isolation.sh). */
#if defined(__SANITIZE_ADDRESS__)
#define SRV_ISOLATION_DEFAULT "thread"
#else
#define SRV_ISOLATION_DEFAULT "process"
#endif

static const char *const isolation_modes[] = { "thread", "process" }; /* C_ISOLATION: SRV_ISOLATE_* */

#define F(x) offsetof(srv_config_t, x)

static const centry_t entries[] = {
	{ "socket", C_PATH, 0, 0, NULL, F(socket_path),
	  "Unix socket clients connect to (default " RM_SOCKET_DEFAULT " unless only listen is given)" },
	{ "listen", C_LISTEN, 0, 0, NULL, F(listen),
	  "TCP address ADDR:PORT or [V6]:PORT to listen on (repeatable; "
	  "clients authenticate with MUNGE)" },
	{ "munge_socket", C_PATH, 0, 0, NULL, F(munge_socket),
	  "munged's socket for decoding credentials (default: "
	  "libmunge's)" },
	{ "trusted_registrars", C_STR, 0, 0, NULL, F(trusted_registrars),
	  "hosts (names or addresses, comma-"
	  "separated) that may register any node over TCP" },
	/* the TCP handshake (PROTOCOL.md "TCP and MUNGE"; srv_loop.c, srv_net.c) */
	{ "server_name", C_STR, 0, 0, NULL, F(server_name),
	  "TCP: the host name clients dial, announced in the handshake (needed behind NAT or port forwarding; "
	  "unique to this daemon)" },
	{ "auth_timeout", C_MS, 100, 600000, "2s", F(auth_timeout_ms),
	  "TCP: time a client has for each of its steps of the handshake (hello, then credential)" },
	{ "max_unauth_per_addr", C_INT, 1, 100000, "32", F(max_unauth_per_addr),
	  "TCP: connections from one source address not authenticated yet" },
	{ "auth_failure_burst", C_INT, 1, 1000000, "32", F(auth_failure_burst),
	  "TCP: handshakes that cost munged work and did not complete, allowed at once from one address" },
	{ "auth_failure_rate", C_INT, 1, 1000000, "8", F(auth_failure_rate),
	  "TCP: of those, forgiven per second and address" },
	{ "socket_mode", C_MODE, 0, 0777, "0666", F(socket_mode), "permissions of the socket (octal)" },
	{ "state_dir", C_PATH, 0, 0, "/var/lib/rankmapd", F(state_dir), "registrations, fabric cache, lock" },
	{ "hwloc_dir", C_PATH, 0, 0, NULL, F(hwloc_dir), "directory of <host>.xml hwloc exports" },
	{ "strict", C_BOOL, 0, 1, "no", F(strict), "a bad hwloc file fails the load (else: an anomaly)" },
	{ "allow_register", C_BOOL, 0, 1, "yes", F(allow_register), "accept `register` requests" },
	{ "cluster", C_PATH, 0, 0, NULL, F(cluster_file), "a rankmap cluster description file" },
	{ "ib_file", C_PATHLIST, 0, 0, NULL, F(ib_files), "ibnetdiscover output (repeatable)" },
	{ "node_name_map", C_PATH, 0, 0, NULL, F(node_name_map), "GUID to host name map" },
	{ "ib_live", C_BOOL, 0, 1, "no", F(ib_live), "discover the fabric through libibnetdisc" },
	{ "ib_ca", C_STR, 0, 0, NULL, F(ib_ca), "HCA used for live discovery (default: first)" },
	{ "ib_port", C_INT, 0, 255, "0", F(ib_port), "HCA port for live discovery (0: default)" },
	{ "ib_refresh", C_SEC, 0, 7 * 86400, "600", F(ib_refresh_s), "rediscover every N seconds (0: never)" },
	{ "torus", C_PATH, 0, 0, NULL, F(torus), "3D torus configuration file" },
	{ "slurm_user", C_STR, 0, 0, NULL, F(slurm_user), "user besides root allowed to register/reload" },
	{ "max_frame_size", C_SIZE, 1024, RM_FRAME_MAX_HARD, "16M", F(max_frame), "largest request frame" },
	{ "max_clients", C_INT, 1, 100000, "4096", F(max_clients), "simultaneous connections" },
	/* memory and connection bounds (srv_limits.c); cross-checked in check_limits() */
	{ "reserved_clients", C_INT, 0, 100000, "16", F(reserved_clients),
	  "of max_clients, connections only root and slurm_user may use" },
	{ "max_clients_per_uid", C_INT, 1, 100000, "256", F(max_clients_per_uid),
	  "connections of one user (root and slurm_user: no cap)" },
	{ "max_queued_bytes", C_SIZE, 65536, 1LL << 40, "256M", F(max_queued_bytes),
	  "bytes held for clients: partial frames, queued requests, unsent responses" },
	{ "reserved_queued_bytes", C_SIZE, 0, 1LL << 40, "32M", F(reserved_queued_bytes),
	  "of max_queued_bytes, bytes only root and slurm_user may use" },
	{ "max_queued_bytes_per_uid", C_SIZE, 4096, 1LL << 40, "64M", F(max_queued_bytes_per_uid),
	  "bytes held for one user (root and slurm_user: no cap)" },
	{ "request_timeout", C_MS, 10, 3600000, "10s", F(request_timeout_ms), "time to send one frame" },
	{ "idle_timeout", C_MS, 10, 86400000, "60s", F(idle_timeout_ms), "idle connections are closed" },
	{ "worker_threads", C_INT, 1, 256, "2", F(workers),
	  "threads running map/report/register (and one reserve thread beyond them for users with nothing "
	  "running)" },
	{ "max_workers_per_uid", C_INT, 0, 256, "0", F(max_workers_per_uid),
	  "workers one user's requests may hold at once, the reserve worker included (0: no cap; every worker "
	  "serves any user, the reserve only a user with nothing running while the others are busy)" },
	{ "max_time_budget", C_MS, 1, 60000, "2s", F(max_time_budget_ms),
	  "largest map time_budget_ms granted to users other than root and slurm_user (larger requests are "
	  "cut to it, with a warning)" },
	{ "isolation", C_ISOLATION, 0, 0, SRV_ISOLATION_DEFAULT, F(isolation),
	  "where map/order/simulate/report/distance run: "
	  "process (worker processes with limits) or thread" },
	{ "worker_time_limit", C_SEC, 1, 86400, "90", F(worker_time_limit_s),
	  "wall-clock time one isolated "
	  "request may take" },
	{ "worker_cpu_limit", C_SEC, 1, 86400, "75", F(worker_cpu_limit_s),
	  "CPU time one isolated request "
	  "may use (RLIMIT_CPU)" },
	{ "worker_memory_limit", C_SIZE, 64LL << 20, 1LL << 40, "4G", F(worker_memory_limit),
	  "address space a "
	  "worker process may add to the daemon's (RLIMIT_AS)" },
	{ "pattern_quota", C_SIZE, 4096, 1LL << 34, "4M", F(pattern_quota),
	  "learned patterns kept per user; the "
	  "least recently used go beyond" },
	{ "log_level", C_LOGLEVEL, 0, 0, "info", F(log_level), "error, warning, notice, info or debug" },
};

#define NENTRIES (sizeof(entries) / sizeof(entries[0]))

static const char *const levels[] = { "error", "warning", "notice", "info", "debug" };

/* Parses a number with an optional unit suffix (k/M/G for sizes; ms/s/m/h for durations). */
static int parse_number(const centry_t *e, const char *v, long long *out)
{
	char *end;
	long long n, mul = 1;

	errno = 0;
	n = strtoll(v, &end, e->type == C_MODE ? 8 : 10);
	if (errno || end == v)
		return -1;
	if (e->type == C_SIZE) {
		if (*end == 'k' || *end == 'K')
			mul = 1024, end++;
		else if (*end == 'M')
			mul = 1024 * 1024, end++;
		else if (*end == 'G')
			mul = 1024LL * 1024 * 1024, end++;
	} else if (e->type == C_MS || e->type == C_SEC) {
		long long sec = e->type == C_MS ? 1000 : 1;
		if (!strcmp(end, "ms") && e->type == C_MS)
			mul = 1, end += 2;
		else if (*end == 's')
			mul = sec, end++;
		else if (*end == 'm')
			mul = 60 * sec, end++;
		else if (*end == 'h')
			mul = 3600 * sec, end++;
		else
			mul = sec; /* bare number: seconds */
	}
	if (*end || n < 0 || (n && mul > LLONG_MAX / n))
		return -1;
	*out = n * mul;
	return 0;
}

static int parse_bool(const char *v, long long *out)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on") || !strcmp(v, "1"))
		*out = 1;
	else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off") || !strcmp(v, "0"))
		*out = 0;
	else
		return -1;
	return 0;
}

/* Makes a relative path relative to base's directory. Returns a malloc'ed string. */
static char *resolve_path(const char *base, const char *v)
{
	const char *slash = base ? strrchr(base, '/') : NULL;
	char *p;

	if (v[0] == '/' || !slash)
		return strdup(v);
	if (asprintf(&p, "%.*s/%s", (int)(slash - base), base, v) < 0)
		return NULL;
	return p;
}

static int store_string(srv_config_t *cfg, const centry_t *e, const char *file, int line, const char *v)
{
	char *s = e->type == C_STR || e->type == C_LISTEN ? strdup(v) : resolve_path(file, v);
	char **field = (char **)((char *)cfg + e->off);

	if (!s)
		return rm_error_set(NULL, NULL, 0, 0, "no memory");
	if (e->type == C_LISTEN) {
		if (cfg->n_listen >= SRV_MAX_LISTEN) {
			free(s);
			return -1;
		}
		cfg->listen[cfg->n_listen++] = s;
		return 0;
	}
	if (e->type == C_PATHLIST) {
		char **list = (char **)((char *)cfg + e->off);
		if (cfg->n_ib_files >= SRV_MAX_IB_FILES) {
			free(s);
			return -1;
		}
		list[cfg->n_ib_files++] = s;
		return 0;
	}
	free(*field);
	*field = s;
	return 0;
}

/* A listen entry must be ADDR:PORT, [V6]:PORT or ADDR (rm_client_server_parse). */
static int check_listen(const char *v, const char *file, int line, rm_error_t *err)
{
	rm_error_t perr = { 0 };
	char host[256];
	int port;

	if (rm_client_server_parse(v, host, sizeof(host), &port, &perr) == 0)
		return 0;
	return rm_error_set(err, file, line, 0, "listen: %s", perr.text);
}

/* Sets one entry from its text value. file/line are for the error (file NULL: a default). */
static int set_entry(srv_config_t *cfg, const centry_t *e, const char *v, const char *file, int line, rm_error_t *err)
{
	void *field = (char *)cfg + e->off;
	long long n = 0;
	size_t i;

	switch (e->type) {
	case C_STR:
	case C_PATH:
	case C_PATHLIST:
	case C_LISTEN:
		if (!*v)
			return rm_error_set(err, file, line, 0, "%s: empty value", e->name);
		if (e->type == C_LISTEN && check_listen(v, file, line, err) < 0)
			return -1;
		if (store_string(cfg, e, file, line, v) < 0)
			return rm_error_set(err, file, line, 0, "%s: too many entries (at most %d)", e->name,
					    e->type == C_LISTEN ? SRV_MAX_LISTEN : SRV_MAX_IB_FILES);
		return 0;
	case C_BOOL:
		if (parse_bool(v, &n) < 0)
			return rm_error_set(err, file, line, 0, "%s: expected yes or no, got '%s'", e->name, v);
		*(int *)field = (int)n;
		return 0;
	case C_LOGLEVEL:
		for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
			if (!strcmp(v, levels[i])) {
				*(int *)field = SRV_LOG_ERR + (int)i;
				return 0;
			}
		return rm_error_set(err, file, line, 0,
				    "%s: expected one of error, warning, notice, info, debug, "
				    "got '%s'",
				    e->name, v);
	case C_ISOLATION:
		for (i = 0; i < sizeof(isolation_modes) / sizeof(isolation_modes[0]); i++)
			if (!strcmp(v, isolation_modes[i])) {
				*(int *)field = (int)i;
				return 0;
			}
		return rm_error_set(err, file, line, 0, "%s: expected process or thread, got '%s'", e->name, v);
	default: break;
	}
	if (parse_number(e, v, &n) < 0 || n < e->min || n > e->max)
		return rm_error_set(err, file, line, 0, "%s: '%s' is not a %s in %lld..%lld%s", e->name, v,
				    e->type == C_MODE ? "mode" : "number", e->min, e->max,
				    e->type == C_MS     ? " ms"
				    : e->type == C_SEC  ? " s"
				    : e->type == C_SIZE ? " bytes"
							: "");
	if (e->type == C_SIZE)
		*(size_t *)field = (size_t)n;
	else if (e->type == C_MODE)
		*(unsigned *)field = (unsigned)n;
	else
		*(int *)field = (int)n;
	return 0;
}

void srv_config_defaults(srv_config_t *cfg)
{
	size_t i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < NENTRIES; i++)
		if (entries[i].def)
			set_entry(cfg, &entries[i], entries[i].def, NULL, 0, NULL);
}

/* Parses one non-comment line "name = value". */
static int parse_line(srv_config_t *cfg, char *text, const char *path, int line, rm_error_t *err)
{
	char *name, *value;
	size_t i;

	if (rm_kv_split(text, &name, &value) < 0)
		return rm_error_set(err, path, line, 0, "expected 'name = value'");
	for (i = 0; i < NENTRIES; i++)
		if (!strcmp(name, entries[i].name))
			return set_entry(cfg, &entries[i], value, path, line, err);
	return rm_error_set(err, path, line, 0, "unknown setting '%s'", name);
}

int srv_config_load(srv_config_t *cfg, const char *path, rm_error_t *err)
{
	FILE *f = rm_file_fopen(path, RM_FILE_CONFIG, NULL, err);
	char buf[4096], *p;
	int line = 0, rc = 0;

	if (!f)
		return -1;
	free(cfg->path);
	cfg->path = strdup(path);
	while (rc == 0 && fgets(buf, sizeof(buf), f)) {
		line++;
		if (ferror(f)) /* grew past the cap: reported below */
			break;
		if (!strchr(buf, '\n') && !feof(f)) {
			rc = rm_error_set(err, path, line, 0, "line longer than %zu bytes", sizeof(buf) - 2);
			break;
		}
		p = rm_config_line(buf);
		if (*p)
			rc = parse_line(cfg, p, path, line, err);
	}
	if (rc == 0)
		rc = rm_file_stream_error(f, path, RM_FILE_CONFIG, err);
	fclose(f);
	return rc;
}

/* The limits against each other: a reserve smaller than what it is taken from, a per-user cap within
 * the global one. A frame larger than a user may ever queue is allowed but said. */
static int check_limits(const srv_config_t *cfg, const char *src, rm_error_t *err)
{
	if (cfg->reserved_clients >= cfg->max_clients)
		return rm_error_set(err, src, 0, 0, "reserved_clients (%d) must be below max_clients (%d)",
				    cfg->reserved_clients, cfg->max_clients);
	if (cfg->reserved_queued_bytes >= cfg->max_queued_bytes)
		return rm_error_set(err, src, 0, 0, "reserved_queued_bytes (%zu) must be below max_queued_bytes (%zu)",
				    cfg->reserved_queued_bytes, cfg->max_queued_bytes);
	if (cfg->max_queued_bytes_per_uid > cfg->max_queued_bytes)
		return rm_error_set(err, src, 0, 0, "max_queued_bytes_per_uid (%zu) exceeds max_queued_bytes (%zu)",
				    cfg->max_queued_bytes_per_uid, cfg->max_queued_bytes);
	if (cfg->max_frame + 4 > cfg->max_queued_bytes)
		return rm_error_set(err, src, 0, 0,
				    "max_queued_bytes (%zu) is below max_frame_size (%zu): no frame of "
				    "that size could ever be taken",
				    cfg->max_queued_bytes, cfg->max_frame);
	if (cfg->max_frame > cfg->max_queued_bytes_per_uid ||
	    cfg->max_frame > cfg->max_queued_bytes - cfg->reserved_queued_bytes)
		srv_log(SRV_LOG_NOTICE,
			"frames up to max_frame_size (%zu bytes) exceed what one user may queue "
			"(max_queued_bytes_per_uid %zu, or max_queued_bytes - reserved_queued_bytes %zu): only root "
			"and "
			"slurm_user can send them",
			cfg->max_frame, cfg->max_queued_bytes_per_uid,
			cfg->max_queued_bytes - cfg->reserved_queued_bytes);
	return 0;
}

int srv_config_check(srv_config_t *cfg, rm_error_t *err)
{
	const char *src = cfg->path ? cfg->path : "configuration";
	char *end, buf[RM_AUTH_PAYLOAD_MAX];
	struct passwd *pw;
	long uid;

	if (!cfg->socket_path && !cfg->n_listen && !(cfg->socket_path = strdup(RM_SOCKET_DEFAULT)))
		return rm_error_set(err, src, 0, 0, "out of memory");
	if (cfg->socket_path && cfg->socket_path[0] != '/')
		return rm_error_set(err, src, 0, 0, "socket: an absolute path is required");
	if (!cfg->state_dir || cfg->state_dir[0] != '/')
		return rm_error_set(err, src, 0, 0, "state_dir: an absolute path is required");
	cfg->has_slurm_uid = 0;
	if (cfg->slurm_user) {
		uid = strtol(cfg->slurm_user, &end, 10);
		if (*end == 0 && end != cfg->slurm_user && uid >= 0) {
			cfg->slurm_uid = (uid_t)uid;
		} else {
			pw = getpwnam(cfg->slurm_user);
			if (!pw)
				return rm_error_set(err, src, 0, 0, "slurm_user: no such user '%s'", cfg->slurm_user);
			cfg->slurm_uid = pw->pw_uid;
		}
		cfg->has_slurm_uid = 1;
	}
	if (check_limits(cfg, src, err) < 0)
		return -1;
	if (cfg->server_name && rm_auth_server_payload(buf, sizeof(buf), "0", "0", "0", cfg->server_name) < 0)
		return rm_error_set(err, src, 0, 0,
				    "server_name: '%.64s' is not a host name (letters, digits, '.' and '-', at most "
				    "%d bytes)",
				    cfg->server_name, RM_AUTH_NAME_MAX);
	if (cfg->ib_live && cfg->n_ib_files)
		srv_log(SRV_LOG_NOTICE, "both ib_file and ib_live are set: the files are separate subnets");
	return 0;
}

void srv_config_free(srv_config_t *cfg)
{
	size_t i;
	int j;

	for (i = 0; i < NENTRIES; i++) {
		if (entries[i].type == C_STR || entries[i].type == C_PATH) {
			char **field = (char **)((char *)cfg + entries[i].off);
			free(*field);
			*field = NULL;
		}
	}
	for (j = 0; j < cfg->n_ib_files; j++)
		free(cfg->ib_files[j]);
	cfg->n_ib_files = 0;
	for (j = 0; j < cfg->n_listen; j++)
		free(cfg->listen[j]);
	cfg->n_listen = 0;
	free(cfg->path);
	cfg->path = NULL;
}

/* A duration of ms milliseconds as the configuration writes it: whole seconds as "Ns", else "Nms". */
static void print_duration(FILE *f, const char *name, long long ms)
{
	if (ms % 1000 == 0)
		fprintf(f, "%s = %llds\n", name, ms / 1000);
	else
		fprintf(f, "%s = %lldms\n", name, ms);
}

/* A size in bytes: with the largest binary suffix G, M or k that divides it exactly, else bare bytes. */
static void print_size(FILE *f, const char *name, unsigned long long b)
{
	static const struct {
		char suffix;
		unsigned long long mul;
	} u[] = { { 'G', 1ULL << 30 }, { 'M', 1ULL << 20 }, { 'k', 1ULL << 10 } };
	size_t k;

	for (k = 0; b && k < sizeof(u) / sizeof(u[0]); k++)
		if (b % u[k].mul == 0) {
			fprintf(f, "%s = %llu%c\n", name, b / u[k].mul, u[k].suffix);
			return;
		}
	fprintf(f, "%s = %llu\n", name, b);
}

void srv_config_print(const srv_config_t *cfg, FILE *f)
{
	size_t i;
	int j;

	fprintf(f,
		"# rankmapd's settings as in effect. Units: durations in seconds (\"10s\"), in milliseconds\n"
		"# where not whole seconds (\"250ms\"); sizes in bytes, with k, M or G (2^10, 2^20, 2^30 bytes)\n"
		"# where exact (\"16M\").\n");
	for (i = 0; i < NENTRIES; i++) {
		const centry_t *e = &entries[i];
		const void *field = (const char *)cfg + e->off;
		fprintf(f, "# %s\n", e->help);
		switch (e->type) {
		case C_STR:
		case C_PATH:
			if (*(char *const *)field)
				fprintf(f, "%s = %s\n", e->name, *(char *const *)field);
			else
				fprintf(f, "#%s =\n", e->name);
			break;
		case C_LISTEN:
			for (j = 0; j < cfg->n_listen; j++)
				fprintf(f, "%s = %s\n", e->name, cfg->listen[j]);
			if (!cfg->n_listen)
				fprintf(f, "#%s =\n", e->name);
			break;
		case C_PATHLIST:
			for (j = 0; j < cfg->n_ib_files; j++)
				fprintf(f, "%s = %s\n", e->name, cfg->ib_files[j]);
			if (!cfg->n_ib_files)
				fprintf(f, "#%s =\n", e->name);
			break;
		case C_BOOL: fprintf(f, "%s = %s\n", e->name, *(const int *)field ? "yes" : "no"); break;
		case C_MODE: fprintf(f, "%s = %04o\n", e->name, *(const unsigned *)field); break;
		case C_SIZE: print_size(f, e->name, *(const size_t *)field); break;
		case C_MS: print_duration(f, e->name, *(const int *)field); break;
		case C_SEC: print_duration(f, e->name, 1000LL * *(const int *)field); break;
		case C_ISOLATION: fprintf(f, "%s = %s\n", e->name, isolation_modes[*(const int *)field]); break;
		case C_LOGLEVEL: fprintf(f, "%s = %s\n", e->name, levels[*(const int *)field - SRV_LOG_ERR]); break;
		default: fprintf(f, "%s = %d\n", e->name, *(const int *)field); break;
		}
	}
}
