/*
 * rankmapd: the cluster's topology service. Holds the machine model built by topo/ and answers
 * rankmapctl, the MPI library and the Slurm plugin over a Unix socket (daemon/PROTOCOL.md).
 *
 * main() is the list of set-up steps and the tear-down in reverse. Signal handlers only set flags:
 * SIGTERM/SIGINT stop, SIGHUP reloads the sources.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "srv.h"
#include "rm_file.h"

/* The configuration read without --config (make's SYSCONFDIR, Makefile): when it does not exist, the
 * built-in defaults serve (those of --print-config). */
#ifndef RANKMAP_DEFAULT_CONFIG
#define RANKMAP_DEFAULT_CONFIG "/usr/local/etc/rankmap/rankmapd.conf"
#endif

static volatile sig_atomic_t stop_flag, reload_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	reload_flag = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rankmapd [--config FILE] [--socket PATH] [--state-dir DIR] [--foreground]\n"
		"       rankmapd --help | --version\n\n"
		"rankmapd holds the cluster's topology model (hwloc node trees, InfiniBand fabric, torus)\n"
		"and answers placement, mapping and distance requests on a Unix socket and on TCP ('listen',\n"
		"clients authenticated with MUNGE).\n\n"
		"Options:\n"
		"  -c, --config FILE     configuration file (rankmapd.conf(5)); default " RANKMAP_DEFAULT_CONFIG
		"\n"
		"                        when it exists, else the built-in defaults (--print-config)\n"
		"  -s, --socket PATH     listen on PATH (overrides 'socket' of the file)\n"
		"  -d, --state-dir DIR   keep registrations and caches in DIR (overrides 'state_dir')\n"
		"  -f, --foreground      stay in the foreground and log to stderr (default: syslog)\n"
		"  -v, --verbose         log debug messages\n"
		"      --print-config    print the effective configuration and exit\n"
		"  -h, --help            show this help and exit\n"
		"  -V, --version         show the version and exit\n\n"
		"Signals: SIGTERM or SIGINT stop cleanly; SIGHUP reloads every source.\n"
		"The daemon does not fork: run it under systemd (rankmapd.service, Type=notify: it\n"
		"reports readiness on NOTIFY_SOCKET once it serves) or in the background from a shell.\n\n"
		"Exit status: 0 after a clean stop, 1 on a set-up error, 2 on a usage error.\n\n"
		"Environment: every file the daemon reads (configuration, cluster and torus files, hwloc\n"
		"XML, ibnetdiscover output, registrations, caches) must be a regular file (a FIFO or a\n"
		"device is refused at once: the source fails and `reload` answers with the error) within\n"
		"a size cap per kind, in bytes or with a K, M or G suffix (set them in the service's\n"
		"environment, e.g. in /etc/default/rankmapd, the unit's EnvironmentFile):\n");
	rm_file_print_limits(f, "  ");
}

typedef struct opts {
	const char *config, *socket, *state_dir;
	int foreground, verbose, print_config;
} opts_t;

/* argv[1] of rankmapd run as its own hwloc parser child (argv[2]: the daemon's pid); not an option */
#define PARSER_CHILD_ARG "--hwloc-parser-child"

/* Returns 0 to go on, 1 to exit 0 (help/version), 2 on a usage error. */
static int parse_args(int argc, char **argv, opts_t *o)
{
	static const struct option lo[] = { { "config", required_argument, NULL, 'c' },
					    { "socket", required_argument, NULL, 's' },
					    { "state-dir", required_argument, NULL, 'd' },
					    { "foreground", no_argument, NULL, 'f' },
					    { "verbose", no_argument, NULL, 'v' },
					    { "print-config", no_argument, NULL, 'P' },
					    { "help", no_argument, NULL, 'h' },
					    { "version", no_argument, NULL, 'V' },
					    { NULL, 0, NULL, 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "c:s:d:fvhV", lo, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 's': o->socket = optarg; break;
		case 'd': o->state_dir = optarg; break;
		case 'f': o->foreground = 1; break;
		case 'v': o->verbose = 1; break;
		case 'P': o->print_config = 1; break;
		case 'h': usage(stdout); return 1;
		case 'V': printf("rankmapd %s (protocol version %d)\n", RANKMAP_VERSION, 1); return 1;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rankmapd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return 0;
}

static int configure(srv_ctx_t *ctx, const opts_t *o, rm_error_t *err)
{
	const char *path = o->config;

	srv_config_defaults(&ctx->cfg);
	if (!path && access(RANKMAP_DEFAULT_CONFIG, F_OK) == 0)
		path = RANKMAP_DEFAULT_CONFIG; /* exists: read it, and say so when it is bad */
	if (path && srv_config_load(&ctx->cfg, path, err) < 0)
		return -1;
	if (o->socket) {
		free(ctx->cfg.socket_path);
		ctx->cfg.socket_path = strdup(o->socket);
	}
	if (o->state_dir) {
		free(ctx->cfg.state_dir);
		ctx->cfg.state_dir = strdup(o->state_dir);
	}
	ctx->cfg.foreground = o->foreground;
	if (o->verbose)
		ctx->cfg.log_level = SRV_LOG_DEBUG;
	return srv_config_check(&ctx->cfg, err);
}

static int install_signals(void)
{
	struct sigaction sa = { 0 };

	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;
	if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
		return -1;
	sa.sa_handler = on_hup;
	if (sigaction(SIGHUP, &sa, NULL) < 0)
		return -1;
	sa.sa_handler = SIG_IGN;
	return sigaction(SIGPIPE, &sa, NULL);
}

/* Each client is a descriptor (and up to SRV_DRAIN_SLOTS refused ones being drained): raise the soft
 * open-file limit towards that if needed. */
static void raise_fd_limit(int max_clients)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)max_clients + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur < want)
		srv_log(SRV_LOG_WARNING, "open-file limit %lu is below max_clients + 64 = %lu",
			(unsigned long)rl.rlim_cur, (unsigned long)want);
}

static int ctx_init(srv_ctx_t *ctx)
{
	const char *faults = getenv("RANKMAP_TEST_FAULTS"); /* test-only, read once here (srv_fault.c) */

	memset(ctx, 0, sizeof(*ctx));
	ctx->test_faults = faults && !strcmp(faults, "1");
	ctx->lock_fd = ctx->listen_fd = -1;
	ctx->n_tcp = 0;
	ctx->started_at = srv_now_ms();
	pthread_mutex_init(&ctx->model_lock, NULL);
	pthread_mutex_init(&ctx->reg_lock, NULL);
	pthread_mutex_init(&ctx->build_lock, NULL);
	pthread_mutex_init(&ctx->pool_lock, NULL);
	pthread_mutex_init(&ctx->ib_lock, NULL);
	ctx->registrations = json_object();
	return ctx->registrations ? 0 : -1;
}

static void ctx_fini(srv_ctx_t *ctx)
{
	srv_model_put(ctx->model);
	srv_model_pool_free(ctx);
	json_decref(ctx->registrations);
	json_decref(ctx->ib_status);
	free(ctx->ib_cache_path);
	srv_config_free(&ctx->cfg);
	pthread_mutex_destroy(&ctx->model_lock);
	pthread_mutex_destroy(&ctx->reg_lock);
	pthread_mutex_destroy(&ctx->build_lock);
	pthread_mutex_destroy(&ctx->pool_lock);
	pthread_mutex_destroy(&ctx->ib_lock);
}

/* Loads the saved registrations and builds the first model (from the fabric cache when there is one,
 * so a restart serves at once; the live fabric is refreshed in the background afterwards). */
static int first_model(srv_ctx_t *ctx, rm_error_t *err)
{
	rm_error_t ierr = { 0 };
	char msg[600];

	if (asprintf(&ctx->ib_cache_path, "%s/ib-live.cache", ctx->cfg.state_dir) < 0)
		return rm_error_set(err, "rankmapd", 0, 0, "out of memory");
	srv_state_load_generation(ctx);
	if (srv_state_load_registrations(ctx, err) < 0)
		return -1;
	srv_model_pool_restore(ctx); /* each saved registration parsed once (a child parses new hardware) */
	if (ctx->cfg.ib_live && access(ctx->ib_cache_path, R_OK) < 0 && srv_model_ib_discover(ctx, &ierr) < 0)
		srv_log(SRV_LOG_WARNING, "fabric discovery: %s", rm_error_format(&ierr, msg, sizeof(msg)));
	return srv_model_rebuild(ctx, 0, err);
}

/* Opens the Unix socket (when configured) and every TCP listener, and starts the threads that decode
 * MUNGE credentials when there is a TCP listener. Returns 0, or -1 with err (what was opened stays in
 * ctx for close_listeners). */
#define AUTH_THREADS 2

static int open_listeners(srv_ctx_t *ctx, rm_error_t *err)
{
	int i, fd;

	if (ctx->cfg.socket_path) {
		ctx->listen_fd = srv_sock_listen(ctx->cfg.socket_path, ctx->cfg.socket_mode, &ctx->sock_dev,
						 &ctx->sock_ino, err);
		if (ctx->listen_fd < 0)
			return -1;
	}
	for (i = 0; i < ctx->cfg.n_listen; i++) {
		if ((fd = srv_net_listen(ctx->cfg.listen[i], err)) < 0)
			return -1;
		ctx->tcp_fd[ctx->n_tcp++] = fd;
	}
	if (ctx->n_tcp && !(ctx->auth = srv_auth_start(ctx->cfg.munge_socket, AUTH_THREADS, err)))
		return -1;
	return 0;
}

static void close_listeners(srv_ctx_t *ctx)
{
	int i;

	srv_auth_stop(ctx->auth);
	ctx->auth = NULL;
	for (i = 0; i < ctx->n_tcp; i++)
		close(ctx->tcp_fd[i]);
	ctx->n_tcp = 0;
	if (ctx->listen_fd >= 0) {
		srv_sock_unlink(ctx->cfg.socket_path, ctx->sock_dev, ctx->sock_ino);
		close(ctx->listen_fd);
	}
	ctx->listen_fd = -1;
}

/* "unix PATH, tcp A:P, tcp B:Q" for the start-up line. */
static void describe_listeners(const srv_ctx_t *ctx, char *buf, size_t len)
{
	size_t n = 0;
	int i;

	buf[0] = '\0';
	if (ctx->cfg.socket_path)
		n += (size_t)snprintf(buf, len, "unix %s", ctx->cfg.socket_path);
	for (i = 0; i < ctx->cfg.n_listen && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%stcp %s", n ? ", " : "", ctx->cfg.listen[i]);
}

/* 1 once the log goes to syslog (not in the foreground): a start-up error is then also printed on
 * stderr, for whoever started rankmapd; in the foreground the log is stderr and it is printed once. */
static int log_to_syslog;

static int fail(const char *step, const rm_error_t *err)
{
	char msg[600], safe[4 * sizeof(msg)];

	rm_error_format(err, msg, sizeof(msg));
	if (log_to_syslog) {
		srv_log_escape(msg, safe, sizeof(safe));
		fprintf(stderr, "rankmapd: %s: %s\n", step, safe);
	}
	srv_log(SRV_LOG_ERR, "%s: %s", step, msg);
	return 1;
}

int main(int argc, char **argv)
{
	opts_t o = { 0 };
	srv_ctx_t ctx;
	rm_error_t err = { 0 };
	char where[1024];
	int rc = 1;

	/* hwloc's parser child (node_parse.c): this program again, exec'd clean rather than forked from the
	 * threaded daemon (a fork can inherit a lock another thread held: GCC 12's ASan runtime hung there) */
	if (argc == 3 && strcmp(argv[1], PARSER_CHILD_ARG) == 0)
		topo_parse_serve(argv[2]);
	if ((rc = parse_args(argc, argv, &o)))
		return rc == 1 ? 0 : 2;
	rc = 1;
	/* without /proc (a bare chroot) the parser child stays a fork, as in rankmapctl */
	if (access("/proc/self/exe", X_OK) == 0 &&
	    topo_parse_program("/proc/self/exe", (char *[]){ argv[0], PARSER_CHILD_ARG, NULL }) < 0) {
		fprintf(stderr, "rankmapd: out of memory\n");
		return 1;
	}
	if (ctx_init(&ctx) < 0)
		return 1;
	if (configure(&ctx, &o, &err) < 0) {
		fail("configuration", &err);
		goto out_ctx;
	}
	if (o.print_config) {
		srv_config_print(&ctx.cfg, stdout);
		rc = 0;
		goto out_ctx;
	}
	srv_log_open(ctx.cfg.foreground, ctx.cfg.log_level);
	log_to_syslog = !ctx.cfg.foreground;
	srv_notify_init();
	if (!ctx.cfg.path)
		srv_log(SRV_LOG_NOTICE, "no configuration file (%s does not exist): built-in defaults",
			RANKMAP_DEFAULT_CONFIG);
	if (srv_state_init(ctx.cfg.state_dir, &err) < 0) {
		fail("state directory", &err);
		goto out_log;
	}
	if ((ctx.lock_fd = srv_lock_state_dir(ctx.cfg.state_dir, &err)) < 0) {
		fail("lock", &err);
		goto out_log;
	}
	raise_fd_limit(ctx.cfg.max_clients + SRV_DRAIN_SLOTS);
	if (install_signals() < 0) {
		rm_error_set(&err, "sigaction", 0, 0, "%s", strerror(errno));
		fail("signals", &err);
		goto out_lock;
	}
	if (first_model(&ctx, &err) < 0) {
		fail("model", &err);
		goto out_lock;
	}
	if (open_listeners(&ctx, &err) < 0) {
		fail("socket", &err);
		goto out_sock;
	}
	if (!(ctx.workers = srv_workers_start(&ctx, ctx.cfg.workers, &err))) {
		fail("workers", &err);
		goto out_sock;
	}
	describe_listeners(&ctx, where, sizeof(where));
	srv_log(SRV_LOG_NOTICE, "rankmapd %s serving %s (state %s, %d workers and a reserve one, isolation %s)",
		RANKMAP_VERSION, where, ctx.cfg.state_dir, ctx.cfg.workers,
		ctx.cfg.isolation == SRV_ISOLATE_PROCESS ? "process" : "thread");
	if (ctx.test_faults)
		srv_log(SRV_LOG_WARNING,
			"RANKMAP_TEST_FAULTS=1: test-only fault engines enabled (never in production)");
	{
		char ready[sizeof(where) + 64];

		snprintf(ready, sizeof(ready), "READY=1\nSTATUS=serving %s", where);
		srv_notify(ready);
	}
	rc = srv_loop_run(&ctx, &stop_flag, &reload_flag) < 0 ? 1 : 0;
	srv_log(SRV_LOG_NOTICE, "stopping");
	srv_notify("STOPPING=1");

	if (srv_workers_stop(ctx.workers) < 0) { /* a thread is stuck in a request: leave without it */
		if (ctx.cfg.socket_path)
			srv_sock_unlink(ctx.cfg.socket_path, ctx.sock_dev, ctx.sock_ino);
		fflush(stderr);
		_exit(rc);
	}
out_sock:
	close_listeners(&ctx);
out_lock:
	close(ctx.lock_fd); /* releases the flock; the file stays (removing it would race a new instance) */
out_log:
	srv_log_close();
out_ctx:
	ctx_fini(&ctx);
	return rc;
}
