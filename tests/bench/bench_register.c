/*
 * tests/bench/bench_register.c: 10,000 nodes registering with rankmapd as slurmd starts.
 *
 * Starts a real rankmapd whose static source is a 2-level fat tree of 10,000 hosts (an ibnetdiscover file:
 * 250 leaves of 40 hosts, 8 spines), then 16 clients register every host back to back, each with its own
 * copy of a PlaFRIM node's hwloc XML (HostName changed), through the client library over the Unix socket.
 * Every "ok" (and "saved") is checked, and the model's registered count at the end. Prints the time until
 * all are in the model (target 60 s) and the daemon's CPU per registration (its own, its worker
 * processes' and its reaped children's: the hwloc parse children) over the first thousand and the last,
 * beside their ratio (flat: at most 1.5), and the daemon's fsync calls per registration (its registrations
 * are made durable in batches: daemon/server/srv_commit.c).
 * The fsync count comes from a second, traced pass after the timed one: the first thousand hosts
 * register again, 16 at a time, with strace -f -c attached to the daemon (when strace is installed;
 * tracing slows system calls, so the timed pass runs without it; BENCH_STRACE=0 leaves the traced pass out).
 * Environment: B (build dir: the rankmapd measured), BENCH_HOSTS (default 10000; the targets are for
 * 10,000), BENCH_CLIENTS (16), BENCH_STRACE (1). Exit status 1 when a target is missed or a registration
 * fails.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/bench/bench_util.h"
#include "tests/integration/test_daemon_util.h"

#define PER_LEAF 40
#define UPLINKS 8
#define TARGET_S 60.0
#define TARGET_FLAT 1.5
#define TEMPLATE "tests/data/plafrim/hwloc/bonobo001.xml"
#define TRACED 1000 /* hosts registering again in the traced pass */

static int nhosts = 10000, nclients = 16;

typedef struct run {
	const char *sock;
	const char *tmpl;
	size_t tlen;
	const char *at, *end; /* the HostName value in the template */
	pid_t daemon;
	long count; /* hosts n00000 .. count - 1 register */
	int timed;  /* record cpu_at and t_at */
	long next, done, errors;
	double *cpu_at; /* daemon CPU (us) when done reached k * 1000 */
	double *t_at;   /* and the time (s) */
	pthread_mutex_t lock;
} run_t;

/* CPU (us) of the daemon, its reaped children and the children alive now (its worker processes, forked
 * by its worker threads: /proc/PID/task/TID/children). */
static double daemon_cpu_us(pid_t pid)
{
	char path[96];
	double us = bench_cpu_us(pid, 1);
	struct dirent *d;
	DIR *dp;
	FILE *f;
	int child;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(dp = opendir(path)))
		return us;
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children", (int)pid, d->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		while (fscanf(f, "%d", &child) == 1)
			us += bench_cpu_us(child, 1);
		fclose(f);
	}
	closedir(dp);
	return us;
}

/* strace -f -c on pid's fsync-type calls, its summary to out; the tracer's pid, or 0 (no strace). */
static pid_t strace_start(pid_t pid, const char *out, const char *sock)
{
	char p[32];
	pid_t t;
	int i;

	if (system("command -v strace >/dev/null 2>&1") != 0)
		return 0;
	snprintf(p, sizeof(p), "%d", (int)pid);
	if ((t = fork()) == 0) {
		execlp("strace", "strace", "-q", "-f", "-c", "-U", "name,calls", "-e",
		       "trace=fsync,fdatasync,sync_file_range,rename,renameat2", "-o", out, "-p", p, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 100 && t > 0; i++) { /* attached once a ping's answer is seen by the tracer */
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		char st[64];
		FILE *f;
		snprintf(st, sizeof(st), "/proc/%d/status", (int)pid);
		if ((f = fopen(st, "r"))) {
			char line[128];
			int traced = 0;
			while (fgets(line, sizeof(line), f))
				if (!strncmp(line, "TracerPid:", 10) && atoi(line + 10) == t)
					traced = 1;
			fclose(f);
			if (traced && td_ping(sock) == 0)
				break;
		}
		nanosleep(&ts, NULL);
	}
	return t > 0 ? t : 0;
}

/* Stops the tracer: SIGINT, on which it detaches and writes its summary. */
static void strace_stop(pid_t t)
{
	kill(t, SIGINT);
	waitpid(t, NULL, 0);
}

/* The calls of name in the summary out (0 when not listed), or -1 when it cannot be read. */
static long strace_calls(const char *out, const char *name)
{
	char line[256], fn[64];
	long calls, n = 0;
	FILE *f = fopen(out, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %63s %ld", fn, &calls) == 2 && !strcmp(fn, name))
			n = calls;
	fclose(f);
	return n;
}

static int append(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void *client(void *arg)
{
	run_t *r = arg;
	char name[32], *xml = malloc(r->tlen + 32);
	long h;

	while (xml && (h = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED)) < r->count) {
		json_t *q = rm_proto_request("register", h), *resp;
		size_t pre = (size_t)(r->at - r->tmpl), n;
		long d;

		snprintf(name, sizeof(name), "n%05ld", h);
		memcpy(xml, r->tmpl, pre);
		n = pre + (size_t)sprintf(xml + pre, "%s", name);
		memcpy(xml + n, r->end, r->tlen - (size_t)(r->end - r->tmpl));
		n += r->tlen - (size_t)(r->end - r->tmpl);
		json_object_set_new(q, "host", json_string(name));
		json_object_set_new(q, "xml", json_stringn(xml, n));
		resp = td_call(r->sock, q);
		if (!json_is_true(json_object_get(resp, "ok")) || !json_is_true(json_object_get(resp, "saved"))) {
			if (__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED) < 3)
				fprintf(stderr, "register %s: %s\n", name, resp ? td_msg(resp) : "no answer");
		}
		json_decref(resp);
		d = __atomic_add_fetch(&r->done, 1, __ATOMIC_RELAXED);
		if (r->timed && d % 1000 == 0 && d / 1000 <= nhosts / 1000) {
			r->cpu_at[d / 1000] = daemon_cpu_us(r->daemon);
			r->t_at[d / 1000] = bench_now_s();
		}
	}
	free(xml);
	return NULL;
}

int main(void)
{
	const char *e;
	char fabric[400], extra[600], trace[400];
	pthread_t th[256];
	tdaemon_t d;
	run_t r = { 0 };
	json_t *resp;
	double t0, total, first, last, load[1], load0[1];
	long reg, k, i, fsyncs = -1, renames = -1, ranges = -1, errors;
	pid_t tracer = 0;
	int fail = 0;

	if ((e = getenv("BENCH_HOSTS")) && atoi(e) >= 1000)
		nhosts = atoi(e);
	if ((e = getenv("BENCH_CLIENTS")) && atoi(e) > 0 && atoi(e) <= 256)
		nclients = atoi(e);
	if (td_setup(&d, NULL) < 0)
		return 1;
	snprintf(fabric, sizeof(fabric), "%s/fabric.topo", d.dir);
	snprintf(trace, sizeof(trace), "%s/strace.out", d.dir);
	snprintf(extra, sizeof(extra), "ib_file = %s\n", fabric);
	if (bench_write_fabric(fabric, nhosts, PER_LEAF, UPLINKS, NULL) < 0 || append(d.conf, extra) < 0 ||
	    !(r.tmpl = bench_slurp(TEMPLATE, &r.tlen)) || !(r.at = strstr(r.tmpl, "\"HostName\" value=\""))) {
		fprintf(stderr, "bench_register: cannot prepare %s (run from the top of the tree)\n", d.dir);
		td_cleanup(&d);
		return 1;
	}
	r.at += strlen("\"HostName\" value=\"");
	r.end = strchr(r.at, '"');
	if (td_start(&d, NULL) < 0) {
		fprintf(stderr, "bench_register: rankmapd does not start (log %s)\n", d.log);
		td_cleanup(&d);
		return 1;
	}
	r.sock = d.sock;
	r.daemon = d.pid;
	r.cpu_at = calloc((size_t)nhosts / 1000 + 1, sizeof(double));
	r.t_at = calloc((size_t)nhosts / 1000 + 1, sizeof(double));
	r.count = nhosts;
	r.timed = 1;
	r.cpu_at[0] = daemon_cpu_us(d.pid);
	if (getloadavg(load0, 1) != 1)
		load0[0] = -1;
	r.t_at[0] = t0 = bench_now_s();
	for (i = 0; i < nclients; i++)
		pthread_create(&th[i], NULL, client, &r);
	for (i = 0; i < nclients; i++)
		pthread_join(th[i], NULL);
	total = bench_now_s() - t0;
	if (getloadavg(load, 1) != 1)
		load[0] = -1;
	resp = td_call(d.sock, rm_proto_request("report", 1));
	reg = (long)json_integer_value(json_object_get(json_object_get(resp, "daemon"), "registered"));
	json_decref(resp);
	errors = r.errors;
	r.errors = 0;
	if (((e = getenv("BENCH_STRACE")) == NULL || strcmp(e, "0")) &&
	    (tracer = strace_start(d.pid, trace, d.sock))) { /* the traced pass: 1,000 hosts register again */
		r.next = r.done = 0;
		r.count = TRACED;
		r.timed = 0;
		for (i = 0; i < nclients; i++)
			pthread_create(&th[i], NULL, client, &r);
		for (i = 0; i < nclients; i++)
			pthread_join(th[i], NULL);
		strace_stop(tracer);
		fsyncs = strace_calls(trace, "fsync");
		ranges = strace_calls(trace, "sync_file_range");
		renames = strace_calls(trace, "rename");
	}
	k = nhosts / 1000;
	first = (r.cpu_at[1] - r.cpu_at[0]) / 1000.0;
	last = (r.cpu_at[k] - r.cpu_at[k - 1]) / 1000.0;
	printf("rankmapd: %d hosts registering, %d at a time, over a %d-host fabric (%s)\n", nhosts, nclients, nhosts,
	       td_bin());
	printf("%-44s %10s %10s %8s\n", "", "measured", "target", "ratio");
	printf("%-44s %8.1f s %8.1f s %8.2f\n", "all registered and in the model", total, TARGET_S, total / TARGET_S);
	printf("%-44s %7.2f ms\n", "daemon CPU per registration, first 1000", first / 1000.0);
	printf("%-44s %7.2f ms %10s %8.2f\n", "daemon CPU per registration, last 1000", last / 1000.0, "flat",
	       first > 0 ? last / first : 0);
	if (fsyncs >= 0)
		printf("%-44s %10.2f\n", "daemon fsync calls per registration", (double)fsyncs / TRACED);
	printf("  (wall per 1000: first %.2f s, last %.2f s; errors %ld; model reports %ld registered)\n",
	       r.t_at[1] - r.t_at[0], r.t_at[k] - r.t_at[k - 1], errors, reg);
	if (fsyncs >= 0)
		printf("  (traced pass, the first %d hosts registering again, strace -f -c on the daemon: %ld fsync, "
		       "%ld rename, %ld sync_file_range; errors %ld)\n",
		       TRACED, fsyncs, renames, ranges, r.errors);
	else
		printf("  (fsync calls not counted: BENCH_STRACE=0, or no strace)\n");
	printf("  (load average %.1f at the start of the timed pass, %.1f at its end, on %ld CPUs: the 60 s target "
	       "is for this machine unloaded; wall times stretch on a busy one, the CPU and fsync figures do not)\n",
	       load0[0], load[0], sysconf(_SC_NPROCESSORS_ONLN));
	if (errors || r.errors || reg != nhosts) {
		printf("FAILED: %ld registrations refused (%ld in the traced pass), %ld of %d in the model\n",
		       errors + r.errors, r.errors, reg, nhosts);
		fail = 1;
	}
	if (nhosts == 10000 && (total > TARGET_S || last > TARGET_FLAT * first)) {
		printf("TARGET MISSED\n");
		fail = 1;
	}
	td_cleanup(&d);
	return fail;
}
