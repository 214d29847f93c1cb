/*
 * Fault injection against a real rankmapd: garbage, random bytes, oversized / at-limit / zero-length /
 * truncated frames, wrong versions, unknown types, a client that stalls mid-frame, a client that says
 * nothing, a client that disconnects mid-request, pipelined requests, 1,000 simultaneous connections,
 * the client cap, and ping answered while a long map runs. After each case a fresh client must get
 * its ping answered.
 */
#include "test_daemon_util.h"

#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>

#define MAX_FRAME 1048576
#define MAX_CLIENTS 1100

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sends text as one frame on a new connection and returns the response (NULL when none came). */
static json_t *exchange_text(const char *sock, const char *text)
{
	int fd = td_raw_connect(sock);
	json_t *r = NULL;

	if (fd >= 0 && td_send_text(fd, text) == 0)
		r = rm_frame_recv(fd, 0, 5000, NULL);
	if (fd >= 0)
		close(fd);
	return r;
}

static void expect_code(const char *sock, const char *text, const char *code, const char *what)
{
	json_t *r = exchange_text(sock, text);

	check(r && !strcmp(td_code(r), code), "%s: got %s (%s)", what, r ? td_code(r) : "nothing", td_msg(r));
	json_decref(r);
	check(td_ping(sock) == 0, "daemon serves after: %s", what);
}

static void test_envelopes(const char *sock)
{
	expect_code(sock, "this is not json", RM_ERR_BAD_FRAME, "garbage payload");
	expect_code(sock, "[1,2,3]", RM_ERR_BAD_FRAME, "JSON array instead of object");
	expect_code(sock, "{\"version\":2,\"type\":\"ping\",\"id\":1}", RM_ERR_BAD_VERSION, "version 2");
	expect_code(sock, "{\"type\":\"ping\",\"id\":1}", RM_ERR_BAD_VERSION, "version missing");
	expect_code(sock, "{\"version\":\"1\",\"type\":\"ping\",\"id\":1}", RM_ERR_BAD_VERSION, "version a string");
	expect_code(sock, "{\"version\":1,\"type\":\"format-disk\",\"id\":1}", RM_ERR_UNKNOWN_TYPE, "unknown type");
	expect_code(sock, "{\"version\":1,\"id\":1}", RM_ERR_BAD_REQUEST, "type missing");
	expect_code(sock, "{\"version\":1,\"type\":\"ping\"}", RM_ERR_BAD_REQUEST, "id missing");
	expect_code(sock, "{\"version\":1,\"type\":\"ping\",\"id\":{}}", RM_ERR_BAD_REQUEST, "id an object");
	expect_code(sock, "{\"version\":1,\"type\":\"ping\",\"id\":1,\"x\":0}", RM_ERR_BAD_REQUEST, "extra field");
	expect_code(sock, "{\"version\":1,\"type\":\"ping\",\"id\":1,\"id\":2}", RM_ERR_BAD_FRAME, "duplicate key");
}

/* A bad frame whose length was valid leaves the stream in sync: the same connection still works. */
static void test_same_connection(const char *sock)
{
	int fd = td_raw_connect(sock);
	json_t *a, *b, *c;

	td_send_text(fd, "{{{{");
	a = rm_frame_recv(fd, 0, 3000, NULL);
	/* two requests in one write: two responses, in order */
	td_send_text(fd, "{\"version\":1,\"type\":\"ping\",\"id\":\"first\"}");
	td_send_text(fd, "{\"version\":1,\"type\":\"ping\",\"id\":\"second\"}");
	b = rm_frame_recv(fd, 0, 3000, NULL);
	c = rm_frame_recv(fd, 0, 3000, NULL);
	check(a && !strcmp(td_code(a), RM_ERR_BAD_FRAME), "bad JSON answered on the connection");
	check(b && !strcmp(json_string_value(json_object_get(b, "id")), "first"), "pipelined: first response");
	check(c && !strcmp(json_string_value(json_object_get(c, "id")), "second"), "pipelined: second response");
	json_decref(a);
	json_decref(b);
	json_decref(c);
	close(fd);
}

static void test_sizes(const char *sock)
{
	unsigned char hdr[4];
	char *big = malloc(MAX_FRAME + 1);
	json_t *r;
	int fd;

	/* just over the limit: error frame, then the daemon closes */
	fd = td_raw_connect(sock);
	hdr[0] = (MAX_FRAME + 1) >> 24, hdr[1] = ((MAX_FRAME + 1) >> 16) & 255, hdr[2] = ((MAX_FRAME + 1) >> 8) & 255;
	hdr[3] = (MAX_FRAME + 1) & 255;
	td_send_raw(fd, hdr, 4);
	r = rm_frame_recv(fd, 0, 3000, NULL);
	check(r && !strcmp(td_code(r), RM_ERR_TOO_LARGE), "frame of limit+1 bytes refused: %s", td_code(r));
	check(td_eof(fd, 3000), "and the connection closed");
	json_decref(r);
	close(fd);
	check(td_ping(sock) == 0, "serves after an oversized frame");
	/* exactly at the limit: a valid request padded with spaces is served */
	memset(big, ' ', MAX_FRAME);
	memcpy(big, "{\"version\":1,\"type\":\"ping\",\"id\":9}", 34);
	big[MAX_FRAME] = 0;
	r = exchange_text(sock, big);
	check(r && json_is_true(json_object_get(r, "ok")), "frame of exactly the limit served");
	json_decref(r);
	free(big);
	/* 4 GiB - 1 announced */
	fd = td_raw_connect(sock);
	td_send_raw(fd, "\xff\xff\xff\xff", 4);
	r = rm_frame_recv(fd, 0, 3000, NULL);
	check(r && !strcmp(td_code(r), RM_ERR_TOO_LARGE), "4 GiB frame refused without allocating it");
	json_decref(r);
	close(fd);
	/* zero length */
	fd = td_raw_connect(sock);
	td_send_raw(fd, "\0\0\0\0", 4);
	r = rm_frame_recv(fd, 0, 3000, NULL);
	check(r && !strcmp(td_code(r), RM_ERR_BAD_FRAME), "zero-length frame refused");
	json_decref(r);
	close(fd);
	/* truncated: announces 100 bytes, sends 10, hangs up */
	fd = td_raw_connect(sock);
	td_send_raw(fd, "\0\0\0\x64{\"version\"", 14);
	close(fd);
	check(td_ping(sock) == 0, "serves after a truncated frame");
}

static void test_random_bytes(const char *sock)
{
	unsigned char buf[512];
	unsigned seed = 12345;
	int i, k, fd, alive = 1;

	for (i = 0; i < 200; i++) {
		size_t n = 1 + (size_t)(rand_r(&seed) % sizeof(buf));
		for (k = 0; k < (int)n; k++)
			buf[k] = (unsigned char)rand_r(&seed);
		if (i % 2) /* a plausible length so that the payload itself is random */
			buf[0] = 0, buf[1] = 0, buf[2] = (unsigned char)((n - 4) >> 8), buf[3] = (unsigned char)(n - 4);
		fd = td_raw_connect(sock);
		if (fd < 0) {
			alive = 0;
			break;
		}
		td_send_raw(fd, buf, n);
		if (i % 3 == 0)
			json_decref(rm_frame_recv(fd, 0, 200, NULL));
		close(fd);
	}
	check(alive && td_ping(sock) == 0, "serves after 200 connections of random bytes");
}

/* Half a frame, then silence: a timeout error after request_timeout (1 s), then the close. */
static void test_stalls(const char *sock)
{
	long long t0;
	json_t *r;
	int fd;

	fd = td_raw_connect(sock);
	td_send_raw(fd, "\0\0\0\x40{\"version\":1,", 17);
	t0 = now_ms();
	r = rm_frame_recv(fd, 0, 10000, NULL);
	check(r && !strcmp(td_code(r), RM_ERR_TIMEOUT), "stalled frame: timeout error (%s)", td_code(r));
	check(now_ms() - t0 >= 800 && now_ms() - t0 < 6000, "after about the request timeout (%lld ms)", now_ms() - t0);
	check(td_eof(fd, 2000), "stalled client disconnected");
	json_decref(r);
	close(fd);
	/* connects and says nothing: closed after idle_timeout (2 s) */
	fd = td_raw_connect(sock);
	t0 = now_ms();
	check(td_ping(sock) == 0, "others served while a client is silent");
	r = rm_frame_recv(fd, 0, 12000, NULL);
	check(r && !strcmp(td_code(r), RM_ERR_TIMEOUT), "silent client: timeout error");
	check(now_ms() - t0 >= 1800 && now_ms() - t0 < 8000, "after about the idle timeout (%lld ms)", now_ms() - t0);
	check(td_eof(fd, 2000), "silent client disconnected");
	json_decref(r);
	close(fd);
}

static json_t *map_request(int n, const char *algo, double budget)
{
	json_t *q = rm_proto_request("map", 5), *e = json_array();
	int i;

	for (i = 0; i < n; i++) {
		json_array_append_new(e, json_pack("[iif]", i, (i + 1) % n, 10.0));
		json_array_append_new(e, json_pack("[iif]", i, (i * 7 + 3) % n, 1.0));
	}
	json_object_set_new(q, "pattern", json_pack("{s:i, s:o}", "n", n, "edges", e));
	json_object_set_new(q, "hosts", json_pack("[ssss]", "bonobo001", "bonobo002", "mirage001", "fourmi004"));
	json_object_set_new(q, "engine", json_string(algo));
	if (budget > 0)
		json_object_set_new(q, "time_budget_ms", json_real(budget));
	return q;
}

/* A field of /proc/PID/status in KiB ("VmSize:", "VmRSS:"), -1 when unreadable. */
static long vm_field_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	long kb = -1;
	size_t fl = strlen(field);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, fl) && sscanf(line + fl, " %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Address space: catches memory reserved for an announced size even before it is touched. */
static long vm_size_kb(pid_t pid)
{
	return vm_field_kb(pid, "VmSize:");
}

/* 400 clients announce frames at the size limit and send a few bytes: the daemon's memory follows
 * what arrived (64 KiB chunks), not what was announced (400 MiB). */
static void test_announced_size(const char *sock, pid_t pid)
{
	enum { N = 400 };
	static int fds[N];
	unsigned char hdr[4] = { MAX_FRAME >> 24, (MAX_FRAME >> 16) & 255, (MAX_FRAME >> 8) & 255, MAX_FRAME & 255 };
	long before = vm_size_kb(pid), after;
	int i;

	for (i = 0; i < N; i++)
		if ((fds[i] = td_raw_connect(sock)) >= 0) {
			td_send_raw(fds[i], hdr, 4);
			td_send_raw(fds[i], "{\"v", 3);
		}
	usleep(300 * 1000);
	after = vm_size_kb(pid);
	check(before > 0 && after - before < 128 * 1024, "memory grew by %ld KiB for %d announced MiB", after - before,
	      N * (MAX_FRAME >> 20));
	check(td_ping(sock) == 0, "serves while %d clients hold partial frames", N);
	for (i = 0; i < N; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* A client pipelining requests without ever reading the answers: the daemon stops reading it once
 * 1 MiB of answers wait (memory stays bounded), then drops it after request_timeout without progress. */
static void test_nonreading_client(const char *sock, pid_t pid)
{
	const char *ping = "{\"version\":1,\"type\":\"hosts\",\"id\":1}";
	unsigned char frame[64];
	size_t n = strlen(ping), sent = 0;
	/* resident memory: queued answers are written, so they are resident; the address space would also
	 * count the 64 MiB arena glibc reserves for a worker thread's first allocation */
	long before = vm_field_kb(pid, "VmRSS:"), after;
	long long t0 = now_ms(), last = t0;
	int fd = td_raw_connect(sock);

	frame[0] = frame[1] = frame[2] = 0;
	frame[3] = (unsigned char)n;
	memcpy(frame + 4, ping, n);
	/* send until the daemon has taken nothing for 500 ms (the frames are tiny: partial sends are rare;
	 * a partial one only makes the daemon answer with a timeout later, which is fine here) */
	while (fd >= 0 && now_ms() - t0 < 20000 && now_ms() - last < 500) {
		ssize_t w = send(fd, frame, n + 4, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			sent++;
			last = now_ms();
		} else {
			usleep(10 * 1000);
		}
	}
	after = vm_field_kb(pid, "VmRSS:");
	check(sent > 1000 && now_ms() - last >= 500,
	      "daemon stopped reading a client that does not read (%zu requests "
	      "taken)",
	      sent);
	check(after - before < 64 * 1024, "its backlog stays bounded (%ld KiB)", after - before);
	check(td_ping(sock) == 0, "others served meanwhile");
	check(td_eof(fd, 10000), "the non-reading client is dropped after the request timeout");
	close(fd);
}

/* A client that sends a map request and hangs up before the answer; the daemon drops the answer. */
static void test_disconnect_mid_request(const char *sock)
{
	json_t *q = map_request(32, "auto", 300);
	int i, fd;

	for (i = 0; i < 5; i++) {
		fd = td_raw_connect(sock);
		rm_frame_send(fd, q, 2000, NULL);
		close(fd);
	}
	json_decref(q);
	check(td_ping(sock) == 0, "serves after clients vanished mid-request");
	q = map_request(32, "treematch", 0);
	json_t *r = td_call(sock, q);
	check(r && json_is_true(json_object_get(r, "ok")), "map still served: %s", td_msg(r));
	json_decref(r);
}

/* ping must not wait for long maps: more map requests than workers keep every worker busy for several
 * rounds (a dense random pattern keeps "auto" searching), and the loop still answers ping at once. */
#define NLONG 6
static void test_ping_during_map(const char *sock)
{
	int fd[NLONG], i, j;
	unsigned seed = 7;
	long long t0, tping, tmap;
	json_t *q = map_request(32, "auto", 1500), *e = json_array();

	for (i = 0; i < 32; i++)
		for (j = i + 1; j < 32; j++)
			json_array_append_new(e, json_pack("[iif]", i, j, (double)(1 + rand_r(&seed) % 100)));
	json_object_set_new(json_object_get(q, "pattern"), "edges", e);

	for (i = 0; i < NLONG; i++) {
		fd[i] = td_raw_connect(sock);
		rm_frame_send(fd[i], q, 2000, NULL);
	}
	json_decref(q);
	t0 = now_ms();
	check(td_ping(sock) == 0, "ping while maps run");
	tping = now_ms() - t0;
	for (i = 0; i < NLONG; i++)
		json_decref(rm_frame_recv(fd[i], 0, 60000, NULL));
	tmap = now_ms() - t0;
	for (i = 0; i < NLONG; i++)
		close(fd[i]);
	/* the claim is relative: ping comes back in a small fraction of the time the queued maps take */
	check(tmap >= 100, "the maps ran long enough to show anything (%lld ms)", tmap);
	check(tping < 1000 && tping * 4 < tmap, "ping answered in %lld ms, long before the maps (%lld ms)", tping,
	      tmap);
}

typedef struct same_arg {
	const char *sock;
	const char *algo;
	char *perm[10]; /* the permutations received, as JSON text */
} same_arg_t;

static void *same_client(void *p)
{
	same_arg_t *a = p;
	int i;

	for (i = 0; i < 10; i++) {
		json_t *r = td_call(a->sock, map_request(32, a->algo, 0));
		a->perm[i] = json_dumps(json_object_get(r, "permutation"), JSON_COMPACT);
		json_decref(r);
	}
	return NULL;
}

/* Engines run concurrently in the workers: identical requests must give identical answers (engines
 * without a time budget: refine and auto stop on the clock, so their answer may vary with load). */
static void test_concurrent_identical(const char *sock)
{
	static const char *const algos[] = { "treematch", "scotch", "identity" };
	same_arg_t args[6];
	pthread_t th[6];
	int i, j, k, same = 1;

	for (k = 0; k < 3; k++) {
		for (i = 0; i < 6; i++) {
			args[i].sock = sock;
			args[i].algo = algos[k];
			pthread_create(&th[i], NULL, same_client, &args[i]);
		}
		for (i = 0; i < 6; i++)
			pthread_join(th[i], NULL);
		for (i = 0; i < 6; i++)
			for (j = 0; j < 10; j++)
				same &= args[i].perm[j] && args[0].perm[0] && !strcmp(args[i].perm[j], args[0].perm[0]);
		check(same, "%s: 60 concurrent identical requests, one answer", algos[k]);
		for (i = 0; i < 6; i++)
			for (j = 0; j < 10; j++)
				free(args[i].perm[j]);
	}
}

/* 1,000 simultaneous connections held open, each then served; then the cap (MAX_CLIENTS). */
static void test_many_connections(const char *sock)
{
	enum { N = 1000 };
	static int fds[MAX_CLIENTS + 1];
	json_t *q = rm_proto_request("ping", 1), *r;
	int i, opened = 0, served = 0, extra;

	for (i = 0; i < N; i++)
		if ((fds[i] = td_raw_connect(sock)) >= 0)
			opened++;
	check(opened == N, "%d of %d connections opened", opened, N);
	check(td_ping(sock) == 0, "a new client is served while %d are held", N);
	for (i = 0; i < N; i++)
		if (fds[i] >= 0 && rm_frame_send(fds[i], q, 2000, NULL) == 0)
			served++;
	for (i = 0, served = 0; i < N; i++) {
		r = fds[i] >= 0 ? rm_frame_recv(fds[i], 0, 5000, NULL) : NULL;
		served += r && json_is_true(json_object_get(r, "ok"));
		json_decref(r);
	}
	check(served == N, "all %d held connections answered (%d)", N, served);
	/* fill up to the cap: the next client gets "busy" and is closed */
	for (i = N; i < MAX_CLIENTS; i++)
		fds[i] = td_raw_connect(sock);
	usleep(300 * 1000); /* let the loop accept them */
	extra = td_raw_connect(sock);
	r = extra >= 0 ? rm_frame_recv(extra, 0, 3000, NULL) : NULL;
	check(r && !strcmp(td_code(r), RM_ERR_BUSY), "client beyond max_clients gets busy (%s)", td_code(r));
	check(extra >= 0 && td_eof(extra, 2000), "and is closed");
	json_decref(r);
	if (extra >= 0)
		close(extra);
	for (i = 0; i < MAX_CLIENTS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	json_decref(q);
	usleep(200 * 1000);
	check(td_ping(sock) == 0, "served again once clients left");
}

/* A daemon whose open-file limit (64) is below max_clients: the clients it cannot take get "busy"
 * instead of hanging, and it serves again once they leave. */
static void test_fd_exhaustion(void)
{
	enum { N = 100 };
	int fds[N], i, busy = 0, ok, served = 0, none = 0;
	tdaemon_t d;
	json_t *r;

	td_setup(&d, "max_clients = 1000\nidle_timeout = 30s\n");
	d.nofile = 64;
	if (td_start(&d, NULL) < 0) {
		fail("daemon with 64 descriptors did not start; log in %s", d.log);
		td_cleanup(&d);
		return;
	}
	for (i = 0; i < N; i++)
		fds[i] = td_raw_connect(d.sock);
	usleep(300 * 1000);
	for (i = 0; i < N; i++) {
		r = NULL;
		if (fds[i] >= 0) { /* a refused client already has its busy frame; sending may fail then */
			td_send_text(fds[i], "{\"version\":1,\"type\":\"ping\",\"id\":1}");
			r = rm_frame_recv(fds[i], 0, 3000, NULL);
		}
		busy += r && !strcmp(td_code(r), RM_ERR_BUSY);
		served += r && json_is_true(json_object_get(r, "ok"));
		none += !r;
		json_decref(r);
	}
	check(busy >= N - 64 && busy < N && served + busy == N,
	      "out of descriptors: %d of %d clients told busy, %d "
	      "served, %d without answer",
	      busy, N, served, none);
	for (i = 0; i < N; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	usleep(200 * 1000);
	ok = td_ping(d.sock) == 0;
	check(ok, "serves again once clients left");
	check(d.pid > 0 && kill(d.pid, 0) == 0, "still running");
	td_cleanup(&d);
}

int main(void)
{
	struct rlimit rl = { 8192, 8192 };
	tdaemon_t d;
	char extra[4096], *data = realpath(harness_data_dir(), NULL);

	signal(SIGPIPE, SIG_IGN);
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) /* for us and the daemon we start */
		fprintf(stderr, "setrlimit: %s\n", strerror(errno));
	snprintf(extra, sizeof(extra),
		 "hwloc_dir = %s/daemon/hwloc\nmax_frame_size = %d\nmax_clients = %d\nrequest_timeout = 1s\n"
		 "idle_timeout = 2s\n",
		 data ? data : ".", MAX_FRAME, MAX_CLIENTS);
	free(data);
	check(td_setup(&d, extra) == 0, "temporary directory");
	if (td_start(&d, NULL) < 0) {
		fail("rankmapd (%s) did not start; log in %s", td_bin(), d.log);
		td_cleanup(&d);
		return harness_done();
	}
	test_envelopes(d.sock);
	test_same_connection(d.sock);
	test_sizes(d.sock);
	test_random_bytes(d.sock);
	test_stalls(d.sock);
	test_announced_size(d.sock, d.pid);
	test_nonreading_client(d.sock, d.pid);
	test_disconnect_mid_request(d.sock);
	test_ping_during_map(d.sock);
	test_concurrent_identical(d.sock);
	test_many_connections(d.sock);
	check(d.pid > 0 && kill(d.pid, 0) == 0, "daemon still running after every fault");
	check(td_stop(&d, SIGTERM) == 0, "SIGTERM stops cleanly");
	td_cleanup(&d);
	test_fd_exhaustion();
	return harness_done();
}
