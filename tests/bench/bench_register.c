/*
 * tests/bench/bench_register.c: 10,000 nodes registering with rankmapd as slurmd starts.
 *
 * Starts a real rankmapd whose static source is a 2-level fat tree of 10,000 hosts (an ibnetdiscover file:
 * 250 leaves of 40 hosts, 8 spines), then 16 clients register every host back to back, each with its own
 * copy of a PlaFRIM node's hwloc XML (HostName changed), through the client library over the Unix socket.
 * Every "ok" is checked, and the model's registered count at the end. Prints the time until all are in the
 * model (target 60 s) and the daemon's CPU per registration (its own and its reaped children's: the hwloc
 * parse children) over the first thousand and the last, beside their ratio (flat: at most 1.5).
 * Environment: B (build dir: the rankmapd measured), BENCH_HOSTS (default 10000; the targets are for
 * 10,000), BENCH_CLIENTS (16). Exit status 1 when a target is missed or a registration fails.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/bench/bench_util.h"
#include "tests/integration/test_daemon_util.h"

#define PER_LEAF 40
#define UPLINKS 8
#define TARGET_S 60.0
#define TARGET_FLAT 1.5
#define TEMPLATE "tests/data/plafrim/hwloc/bonobo001.xml"

static int nhosts = 10000, nclients = 16;

typedef struct run {
	const char *sock;
	const char *tmpl;
	size_t tlen;
	const char *at, *end; /* the HostName value in the template */
	pid_t daemon;
	long next, done, errors;
	double *cpu_at; /* daemon CPU (us) when done reached k * 1000 */
	double *t_at;   /* and the time (s) */
	pthread_mutex_t lock;
} run_t;

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

	while (xml && (h = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED)) < nhosts) {
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
		if (!json_is_true(json_object_get(resp, "ok"))) {
			if (__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED) < 3)
				fprintf(stderr, "register %s: %s\n", name, resp ? td_msg(resp) : "no answer");
		}
		json_decref(resp);
		d = __atomic_add_fetch(&r->done, 1, __ATOMIC_RELAXED);
		if (d % 1000 == 0 && d / 1000 <= nhosts / 1000) {
			r->cpu_at[d / 1000] = bench_cpu_us(r->daemon, 1);
			r->t_at[d / 1000] = bench_now_s();
		}
	}
	free(xml);
	return NULL;
}

int main(void)
{
	const char *e;
	char fabric[400], extra[600];
	pthread_t th[256];
	tdaemon_t d;
	run_t r = { 0 };
	json_t *resp;
	double t0, total, first, last, load[1];
	long reg, k, i;
	int fail = 0;

	if ((e = getenv("BENCH_HOSTS")) && atoi(e) >= 1000)
		nhosts = atoi(e);
	if ((e = getenv("BENCH_CLIENTS")) && atoi(e) > 0 && atoi(e) <= 256)
		nclients = atoi(e);
	if (td_setup(&d, NULL) < 0)
		return 1;
	snprintf(fabric, sizeof(fabric), "%s/fabric.topo", d.dir);
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
	r.cpu_at[0] = bench_cpu_us(d.pid, 1);
	r.t_at[0] = t0 = bench_now_s();
	for (i = 0; i < nclients; i++)
		pthread_create(&th[i], NULL, client, &r);
	for (i = 0; i < nclients; i++)
		pthread_join(th[i], NULL);
	total = bench_now_s() - t0;
	resp = td_call(d.sock, rm_proto_request("report", 1));
	reg = (long)json_integer_value(json_object_get(json_object_get(resp, "daemon"), "registered"));
	json_decref(resp);
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
	printf("  (wall per 1000: first %.2f s, last %.2f s; errors %ld; model reports %ld registered)\n",
	       r.t_at[1] - r.t_at[0], r.t_at[k] - r.t_at[k - 1], r.errors, reg);
	if (getloadavg(load, 1) == 1)
		printf("  (load average %.1f on 2 CPUs: wall times stretch on a busy machine; the CPU figures do "
		       "not)\n",
		       load[0]);
	if (r.errors || reg != nhosts) {
		printf("FAILED: %ld registrations refused, %ld of %d in the model\n", r.errors, reg, nhosts);
		fail = 1;
	}
	if (nhosts == 10000 && (total > TARGET_S || last > TARGET_FLAT * first)) {
		printf("TARGET MISSED\n");
		fail = 1;
	}
	td_cleanup(&d);
	return fail;
}
