/*
 * tests/bench/bench_daemon_tcp.c: rankmapd over TCP with MUNGE beside its Unix socket, in the same run
 * on the same daemon. Starts a real munged (a temporary key and socket) and a real rankmapd
 * (8 PlaFRIM nodes of 8 cores with their InfiniBand fabric, listen = 127.0.0.1:PORT), then:
 *   1. 64 concurrent clients on the Unix socket send 64-rank map requests back to back (the baseline);
 *   2. 64 concurrent TCP clients each authenticate once (rm_client_open: connect, munge_encode, the
 *      daemon's munge_decode off its loop) and send the same requests back to back;
 *   3. authentication alone: 64 clients open and authenticate connections in a loop (per connection);
 *   4. the first call of a new MPI job: a new connection, its authentication and one 64-rank map, one
 *      after the other on an otherwise idle daemon (what a job start waits for).
 * Prints requests/s and latency percentiles beside the targets: TCP >= 80 % of the Unix throughput,
 * authentication < 1 ms per connection (median), first call < 5 ms. The latencies are measured at the
 * client, so they include the client's own munge_encode: an upper bound of the daemon's share.
 * Environment: B (build dir), BENCH_SECONDS (default 3), BENCH_CLIENTS (64). Needs root (munged) and
 * munged installed; otherwise says why and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/resource.h>

#include "tests/integration/test_daemon_util.h"

#define MAXC 256
#define MAXLAT 4000000

typedef struct phase {
	const char *servers; /* the Unix socket path, or 127.0.0.1:PORT */
	const char *munge_socket;
	char *frame;
	size_t len;
	int auth_only; /* open and authenticate connections in a loop */
	long long end_us;
	double *lat;
	long nlat, errors;
	pthread_barrier_t start;
} phase_t;

typedef struct result {
	double rps, p50, p99, max;
	long n, errors;
} result_t;

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Reads one frame's payload into *buf without parsing it (the daemon is measured, not jansson). */
static int recv_raw(int fd, char **buf, size_t *cap, size_t *len)
{
	unsigned char h[4];
	size_t got = 0;
	ssize_t r;

	while (got < 4) {
		if ((r = recv(fd, h + got, 4 - got, 0)) <= 0)
			return -1;
		got += (size_t)r;
	}
	*len = rm_frame_length(h);
	if (*len > *cap && !(*buf = realloc(*buf, *cap = *len)))
		return -1;
	for (got = 0; got < *len; got += (size_t)r)
		if ((r = recv(fd, *buf + got, *len - got, 0)) <= 0)
			return -1;
	return 0;
}

static void record(phase_t *p, long long t0)
{
	long i = __atomic_fetch_add(&p->nlat, 1, __ATOMIC_RELAXED);

	if (i < MAXLAT)
		p->lat[i] = (now_us() - t0) / 1000.0;
}

/* One client: a connection opened (and authenticated) through the client library, then raw frames. */
static void *client(void *arg)
{
	phase_t *p = arg;
	rm_client_opts_t o = { .servers = p->servers, .munge_socket = p->munge_socket, .timeout_ms = 10000 };
	rm_error_t err = { 0 };
	long long t0;
	int fd = -1;
	char *buf = NULL;
	size_t cap = 0, len = 0;

	if (!p->auth_only && (fd = rm_client_open(&o, NULL, &err)) < 0)
		fprintf(stderr, "bench: %s: %s\n", p->servers, err.text);
	if (fd >= 0) /* the library's sockets are non-blocking; this client waits in recv() */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	pthread_barrier_wait(&p->start);
	while (now_us() < __atomic_load_n(&p->end_us, __ATOMIC_RELAXED)) {
		t0 = now_us();
		if (p->auth_only) {
			if ((fd = rm_client_open(&o, NULL, &err)) < 0) {
				__atomic_add_fetch(&p->errors, 1, __ATOMIC_RELAXED);
				break;
			}
			record(p, t0);
			close(fd);
			fd = -1;
			continue;
		}
		if (fd < 0 || td_send_raw(fd, p->frame, p->len) < 0 || recv_raw(fd, &buf, &cap, &len) < 0) {
			__atomic_add_fetch(&p->errors, 1, __ATOMIC_RELAXED);
			break;
		}
		if (!memmem(buf, len, "\"ok\":true", 9))
			__atomic_add_fetch(&p->errors, 1, __ATOMIC_RELAXED);
		record(p, t0);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static result_t finish_phase(phase_t *p, long long t0)
{
	result_t res = { .n = p->nlat, .errors = p->errors };
	long n = p->nlat < MAXLAT ? p->nlat : MAXLAT;

	qsort(p->lat, (size_t)n, sizeof(double), cmp_double);
	res.rps = p->nlat / ((now_us() - t0) / 1e6);
	if (n) {
		res.p50 = p->lat[n / 2];
		res.p99 = p->lat[(size_t)((n - 1) * 0.99)];
		res.max = p->lat[n - 1];
	}
	return res;
}

static result_t run_phase(const char *servers, const char *msock, const json_t *req, int nclients, double secs,
			  int auth_only)
{
	pthread_t th[MAXC];
	phase_t p = { .servers = servers, .munge_socket = msock, .auth_only = auth_only };
	result_t res;
	long long t0;
	int i;

	p.frame = rm_frame_encode(req, &p.len);
	p.lat = malloc(MAXLAT * sizeof(double));
	pthread_barrier_init(&p.start, NULL, (unsigned)nclients + 1);
	p.end_us = now_us() + 3600LL * 1000000; /* set for real once every client is connected */
	for (i = 0; i < nclients; i++)
		pthread_create(&th[i], NULL, client, &p);
	pthread_barrier_wait(&p.start);
	t0 = now_us();
	__atomic_store_n(&p.end_us, t0 + (long long)(secs * 1e6), __ATOMIC_RELAXED);
	for (i = 0; i < nclients; i++)
		pthread_join(th[i], NULL);
	res = finish_phase(&p, t0);
	free(p.lat);
	free(p.frame);
	pthread_barrier_destroy(&p.start);
	return res;
}

/* The first call of a new job: connect, authenticate, one map, close; n times one after the other. */
static result_t first_calls(const char *servers, const char *msock, const json_t *req, int n)
{
	phase_t p = { 0 };
	rm_client_opts_t o = { .servers = servers, .munge_socket = msock, .timeout_ms = 10000 };
	long long t0 = now_us(), t;
	json_t *resp;
	int i;

	p.lat = malloc((size_t)n * sizeof(double));
	for (i = 0; i < n; i++) {
		t = now_us();
		if (rm_client_call_opts(&o, json_deep_copy(req), &resp, NULL, NULL) < 0)
			p.errors++;
		json_decref(resp);
		record(&p, t);
	}
	result_t r = finish_phase(&p, t0);
	free(p.lat);
	return r;
}

/* 64 ranks: 8x8 periodic halo (weight 10) plus i <-> i+17 (weight 1), edges_text, on bonobo001..008. */
static json_t *map_req(void)
{
	json_t *q = rm_proto_request("map", 1), *hosts = json_array();
	char name[32], buf[8192];
	int i, x, y, len = 0;

	for (i = 0; i < 64; i++) {
		x = i / 8, y = i % 8;
		len += snprintf(buf + len, sizeof(buf) - (size_t)len, "%d %d 10 %d %d 10 %d %d 1\n", i,
				x * 8 + (y + 1) % 8, i, ((x + 1) % 8) * 8 + y, i, (i + 17) % 64);
	}
	for (i = 1; i <= 8; i++) {
		snprintf(name, sizeof(name), "bonobo%03d", i);
		json_array_append_new(hosts, json_string(name));
	}
	json_object_set_new(q, "pattern", json_pack("{s:i, s:s}", "n", 64, "edges_text", buf));
	json_object_set_new(q, "hosts", hosts);
	json_object_set_new(q, "engine", json_string("treematch"));
	return q;
}

/* Starts munged on dir/munge.sock with a fresh key. Returns 0, or -1 after saying why. */
static int start_munged(const char *dir, char *sock, size_t len)
{
	char cmd[4096];

	snprintf(sock, len, "%s/munge.sock", dir);
	snprintf(cmd, sizeof(cmd),
		 "head -c 1024 /dev/urandom >%s/munge.key && chmod 600 %s/munge.key && "
		 "munged --socket=%s --key-file=%s/munge.key --pid-file=%s/munge.pid --log-file=%s/munge.log "
		 "--seed-file=%s/munge.seed",
		 dir, dir, sock, dir, dir, dir, dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "bench_daemon_tcp: cannot start munged (installed? root?): %s\n", cmd);
		return -1;
	}
	return 0;
}

static void stop_munged(const char *dir)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "p=$(cat %s/munge.pid) && kill $p && while kill -0 $p 2>/dev/null; do sleep 0.05; "
		 "done",
		 dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_daemon_tcp: munged was not running at the end\n");
}

static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static void row(const char *name, const result_t *r)
{
	printf("  %-34s %9.0f %9.3f %9.3f %9.3f %7ld %s\n", name, r->rps, r->p50, r->p99, r->max, r->n,
	       r->errors ? "ERRORS" : "");
}

int main(void)
{
	struct rlimit rl = { 8192, 8192 };
	const char *s = getenv("BENCH_SECONDS"), *c = getenv("BENCH_CLIENTS");
	double secs = s ? atof(s) : 3.0;
	int nclients = c ? atoi(c) : 64, port = free_port(), rc = 0;
	char *data = realpath(harness_data_dir(), NULL), extra[4096], msock[400], tcp[64];
	json_t *map = map_req(), *one;
	result_t unix_map, tcp_map, auth, auth1, first;
	tdaemon_t d;

	signal(SIGPIPE, SIG_IGN);
	setrlimit(RLIMIT_NOFILE, &rl);
	if (nclients < 1 || nclients > MAXC)
		nclients = 64;
	if (td_setup(&d, "") < 0 || start_munged(d.dir, msock, sizeof(msock)) < 0)
		return 1;
	snprintf(tcp, sizeof(tcp), "127.0.0.1:%d", port);
	snprintf(extra, sizeof(extra),
		 "hwloc_dir = %s/plafrim/hwloc\nib_file = %s/plafrim/ib/ib-subnet0.txt\n"
		 "log_level = warning\nlisten = %s\nmunge_socket = %s\n"
		 /* every client is on 127.0.0.1: one address, which may authenticate them all at once */
		 "max_unauth_per_addr = 1024\nauth_failure_burst = 4096\n",
		 data ? data : ".", data ? data : ".", tcp, msock);
	free(data);
	FILE *f = fopen(d.conf, "a");
	if (!f || fputs(extra, f) < 0 || fclose(f) != 0 || td_start(&d, NULL) < 0) {
		fprintf(stderr, "bench_daemon_tcp: rankmapd (%s) did not start\n", td_bin());
		stop_munged(d.dir);
		td_cleanup(&d);
		return 1;
	}
	one = td_call(d.sock, json_deep_copy(map));
	if (!one || !json_is_true(json_object_get(one, "ok"))) {
		printf("map request failed: %s\n", td_msg(one));
		rc = 1;
	}
	json_decref(one);
	printf("rankmapd over TCP (MUNGE) beside its Unix socket, same daemon, same run: %d clients, %.1f s per "
	       "phase,\n64-rank map (treematch, 8 nodes x 8 cores), isolation = process, 2 workers, 2 auth threads\n",
	       nclients, secs);
	printf("  %-34s %9s %9s %9s %9s %7s\n", "", "req/s", "p50 ms", "p99 ms", "max ms", "n");
	unix_map = run_phase(d.sock, msock, map, nclients, secs, 0);
	row("map, Unix socket (baseline)", &unix_map);
	tcp_map = run_phase(tcp, msock, map, nclients, secs, 0);
	row("map, TCP (authenticated once)", &tcp_map);
	auth = run_phase(tcp, msock, map, nclients, secs, 1);
	row("connect + auth, all clients at once", &auth);
	auth1 = run_phase(tcp, msock, map, 1, secs / 3, 1);
	row("connect + auth, one after the other", &auth1);
	first = first_calls(tcp, msock, map, 200);
	row("first call: connect, auth, map", &first);
	printf("verdict:\n");
	printf("  TCP throughput %.0f %% of the Unix socket's (target >= 80 %%): %s\n",
	       unix_map.rps > 0 ? 100 * tcp_map.rps / unix_map.rps : 0,
	       tcp_map.rps > 0 && tcp_map.rps >= 0.8 * unix_map.rps ? "meets" : "MISSES");
	printf("  authentication: %.3f ms per connection, median, one at a time, at the client (target < 1 ms): %s;\n"
	       "    %d clients at once: %.0f authentications/s (%.3f ms of the machine each), their latency is "
	       "queueing\n",
	       auth1.p50, auth1.n && auth1.p50 < 1.0 ? "meets" : "MISSES", nclients, auth.rps,
	       auth.rps > 0 ? 1000 / auth.rps : 0);
	printf("  first call of a new job, auth included: median %.3f ms, p99 %.3f ms (target < 5 ms): %s\n", first.p50,
	       first.p99, first.n && first.p50 < 5.0 ? "meets" : "MISSES");
	td_stop(&d, SIGTERM);
	stop_munged(d.dir);
	td_cleanup(&d);
	json_decref(map);
	return rc || unix_map.errors || tcp_map.errors || auth.errors || auth1.errors || first.errors ? 1 : 0;
}
