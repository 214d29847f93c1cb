/*
 * daemon/ctl/ctl_daemon.c: rankmapctl subcommands that talk to rankmapd: ping, register, reload, and
 * distance (through the daemon, or offline on a cluster description).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <hwloc.h>

#include "ctl.h"
#include "ctl_common.h"
#include "rm_client.h"
#include "rm_file.h"
#include "topo.h"
#include "topo_report.h"

typedef struct common_opts {
	ctl_daemon_t d; /* d.timeout_ms: --timeout, else the command's default set before parsing */
	int json;
} common_opts_t;

#define COMMON_HELP                                                                                        \
	CTL_DAEMON_HELP                                                                                    \
	"  -j, --json              print the daemon's JSON response\n  -h, --help              show this " \
	"help\n"

/* clang-format off */
#define COMMON_LONGOPTS \
	CTL_DAEMON_LONGOPTS, \
	{ "json", no_argument, NULL, 'j' }, \
	{ "help", no_argument, NULL, 'h' }
/* clang-format on */

/* Handles a common option. Returns 1 if handled, 0 if not a common option. */
static int common_opt(common_opts_t *o, int c, const char *cmd)
{
	if (c == 'j')
		return o->json = 1;
	return ctl_daemon_opt(&o->d, c, optarg, cmd);
}

/* Parses argv for a subcommand that takes only the common options. Returns -1 to go on, else the
 * exit status (after --help, or a usage error). */
static int parse_common_only(int argc, char **argv, common_opts_t *o, const char *cmd, void (*usage)(FILE *))
{
	static const struct option lo[] = { COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	int c, r;

	while ((c = getopt_long(argc, argv, CTL_SHORTOPTS "j", lo, NULL)) != -1) {
		r = common_opt(o, c, cmd);
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		if (c == 'h')
			return usage(stdout), 0;
		return usage(stderr), 2;
	}
	return -1;
}

static const char *socket_of(const common_opts_t *o)
{
	const char *s = o->d.socket ? o->d.socket : rm_client_socket_from_env();

	return s ? s : RM_SOCKET_DEFAULT;
}

/* Sends req (stolen) and returns the ok response, or NULL after printing the error. */
static json_t *call(const char *cmd, const common_opts_t *o, json_t *req, rm_client_info_t *info)
{
	rm_client_opts_t co = { .servers = socket_of(o), .timeout_ms = o->d.timeout_ms, .server_uid = o->d.server_uid };
	rm_error_t err = { 0 };
	json_t *resp = NULL;
	char msg[600];

	if (ctl_daemon_check(cmd, &o->d) < 0) {
		json_decref(req);
		return NULL;
	}
	if (rm_client_call_opts(&co, req, &resp, info, &err) == 0) {
		ctl_failover_note(cmd, info);
		return resp;
	}
	if (resp && o->json)
		ctl_print_json(stdout, resp, 0);
	json_decref(resp);
	fprintf(stderr, "rankmapctl %s: %s\n", cmd, rm_error_format(&err, msg, sizeof(msg)));
	return NULL;
}

static int print_json(json_t *resp)
{
	ctl_print_json(stdout, resp, 0);
	json_decref(resp);
	return 0;
}

/* ---- ping -------------------------------------------------------------------------------------- */

static void ping_usage(FILE *f)
{
	fprintf(f,
		"Usage: rankmapctl ping [OPTIONS]\n\n"
		"Checks that rankmapd answers, and prints its version, model generation, uptime, the\n"
		"round-trip time and the last reload's result (its time, ok or the error).\n\nOptions:\n" COMMON_HELP
		"\nExit status: 0 when the daemon answered, 1 otherwise, 2 on a usage error.\n"
		"Example: rankmapctl ping --socket /run/rankmapd/rankmapd.sock\n");
}

int ctl_ping_main(int argc, char **argv)
{
	common_opts_t o = { 0 };
	rm_client_info_t info;
	const char *tr, *peer;
	struct timespec t0, t1;
	json_t *resp;
	int rc;

	if ((rc = parse_common_only(argc, argv, &o, "ping", ping_usage)) >= 0)
		return rc;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!(resp = call("ping", &o, rm_proto_request("ping", 1), &info)))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (o.json)
		return print_json(resp);
	printf("rankmapd %s at %s: model generation %lld, up %lld s, round trip %.3f ms; ",
	       json_string_value(json_object_get(resp, "server_version")), info.entry,
	       (long long)json_integer_value(json_object_get(resp, "generation")),
	       (long long)json_integer_value(json_object_get(resp, "uptime_s")),
	       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	tr = json_string_value(json_object_get(resp, "transport"));
	peer = json_string_value(json_object_get(resp, "peer"));
	if (tr && peer && !strcmp(tr, "tcp"))
		printf("tcp from %s", peer);
	else
		printf("unix");
	printf(", uid %lld\n", (long long)json_integer_value(json_object_get(resp, "uid")));
	ctl_print_last_reload(stdout, json_object_get(resp, "last_reload"));
	json_decref(resp);
	return 0;
}

/* ---- reload ------------------------------------------------------------------------------------ */

static void reload_usage(FILE *f)
{
	fprintf(f,
		"Usage: rankmapctl reload [OPTIONS]\n\n"
		"Asks rankmapd to re-read every configured source (hwloc directory, InfiniBand files,\n"
		"live fabric, torus) and rebuild its model; the previous model keeps serving if that\n"
		"fails. Allowed to root and to the configured slurm_user only. Same as SIGHUP, but\n"
		"waits for the result.\n\nOptions:\n" COMMON_HELP
		"\nExit status: 0 on success, 1 on failure, 2 on a usage error.\n");
}

int ctl_reload_main(int argc, char **argv)
{
	common_opts_t o = { .d.timeout_ms = 120000 };
	json_t *resp, *w;
	size_t i;
	int rc;

	if ((rc = parse_common_only(argc, argv, &o, "reload", reload_usage)) >= 0)
		return rc;
	if (!(resp = call("reload", &o, rm_proto_request("reload", 1), &(rm_client_info_t){ 0 })))
		return 1;
	if (o.json)
		return print_json(resp);
	printf("reloaded: model generation %lld, %lld hosts\n",
	       (long long)json_integer_value(json_object_get(resp, "generation")),
	       (long long)json_integer_value(json_object_get(resp, "hosts")));
	json_array_foreach (json_object_get(resp, "warnings"), i, w)
		printf("warning: %s\n", json_string_value(w));
	json_decref(resp);
	return 0;
}

/* ---- register ---------------------------------------------------------------------------------- */

static void register_usage(FILE *f)
{
	fprintf(f,
		"Usage: rankmapctl register (--xml FILE | --live) [--host NAME [--force]] [OPTIONS]\n\n"
		"Sends a node's hwloc topology to rankmapd, which saves it under its state directory and\n"
		"adds the node to its model (replacing an earlier registration of the same node).\n"
		"Allowed to root and to the configured slurm_user only.\n\nOptions:\n"
		"  -x, --xml FILE      an hwloc XML export (lstopo --of xml, hwloc-gather-topology)\n"
		"  -l, --live          discover this machine with hwloc and send that\n"
		"  -H, --host NAME     the node's name (default: the HostName the XML records, short form;\n"
		"                      for --live or an XML without one, this machine's short host name)\n"
		"  -f, --force         with --xml, accept a --host that differs from the XML's HostName\n" COMMON_HELP
		"\nExit status: 0 when registered (a warning is printed if the daemon could not save it),\n"
		"1 on failure (including --host NAME against another HostName in the XML, without --force),\n"
		"2 on a usage error.\n"
		"Examples:\n  rankmapctl register --live\n"
		"  rankmapctl register --xml node042.xml\n");
}

/* The HostName info hwloc records on the root object (1.x and 2.x XML alike), short form (up to the
 * first '.') in buf; NULL when the XML has none or it does not fit. */
static const char *xml_host_name(const char *xml, size_t len, char *buf, size_t size)
{
	static const char tag[] = "<info name=\"HostName\" value=\"";
	const char *p = memmem(xml, len, tag, sizeof(tag) - 1), *q;
	size_t n;

	if (!p)
		return NULL;
	p += sizeof(tag) - 1;
	q = memchr(p, '"', len - (size_t)(p - xml));
	n = q ? strcspn(p, ".\"") : 0;
	if (!q || !n || n >= size || memchr(p, '&', n) || memchr(p, '<', n))
		return NULL;
	memcpy(buf, p, n);
	buf[n] = 0;
	return buf;
}

/* The name to register under: --host (refused against another HostName in an --xml file unless
 * force), else the XML's HostName, else this machine's short host name. NULL after a message. */
static const char *register_host(const char *host, const char *file, int force, const char *xml, size_t len, char *buf,
				 size_t size)
{
	const char *x = xml_host_name(xml, len, buf, size);

	if (host && x && file && !force && strcmp(host, x)) {
		fprintf(stderr,
			"rankmapctl register: %s records HostName \"%s\", not \"%s\" (--host): "
			"give --force to register it as %s anyway\n",
			file, x, host, host);
		return NULL;
	}
	if (host)
		return host;
	if (x)
		return x;
	if (gethostname(buf, size) < 0) {
		perror("rankmapctl register: gethostname");
		return NULL;
	}
	buf[size - 1] = 0;
	buf[strcspn(buf, ".")] = 0;
	return buf;
}

/* This machine's topology as hwloc XML (malloc'ed). */
static char *live_xml(size_t *len)
{
	hwloc_topology_t t;
	char *xml = NULL, *copy = NULL;
	int n;

	if (hwloc_topology_init(&t) < 0)
		return NULL;
	if (hwloc_topology_load(t) == 0 && hwloc_topology_export_xmlbuffer(t, &xml, &n, 0) == 0) {
		if ((copy = malloc((size_t)n + 1))) {
			memcpy(copy, xml, (size_t)n);
			copy[n] = 0;
			*len = strlen(copy);
		}
		hwloc_free_xmlbuffer(t, xml);
	}
	hwloc_topology_destroy(t);
	return copy;
}

static int do_register(const common_opts_t *o, const char *host, const char *xml, size_t len)
{
	json_t *req = rm_proto_request("register", 1), *resp;

	json_object_set_new(req, "host", json_string(host));
	json_object_set_new(req, "xml", json_stringn(xml, len));
	if (!json_object_get(req, "xml")) {
		json_decref(req);
		fprintf(stderr, "rankmapctl register: the XML is not valid UTF-8\n");
		return 1;
	}
	if (!(resp = call("register", o, req, &(rm_client_info_t){ 0 })))
		return 1;
	if (json_is_false(json_object_get(resp, "saved")))
		fprintf(stderr,
			"rankmapctl register: warning: the daemon could not save the registration "
			"(it will be lost at its next restart): %s\n",
			json_string_value(json_object_get(resp, "save_error")));
	if (o->json)
		return print_json(resp);
	printf("registered %s (model generation %lld)\n", host,
	       (long long)json_integer_value(json_object_get(resp, "generation")));
	json_decref(resp);
	return 0;
}

int ctl_register_main(int argc, char **argv)
{
	static const struct option lo[] = { { "xml", required_argument, NULL, 'x' },
					    { "live", no_argument, NULL, 'l' },
					    { "host", required_argument, NULL, 'H' },
					    { "force", no_argument, NULL, 'f' },
					    COMMON_LONGOPTS,
					    { NULL, 0, NULL, 0 } };
	common_opts_t o = { .d.timeout_ms = 60000 };
	const char *file = NULL, *host = NULL;
	char hn[256], *xml, msg[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 32];
	rm_error_t err = { 0 };
	size_t len = 0;
	int c, r, live = 0, force = 0;

	while ((c = getopt_long(argc, argv, "x:lH:f" CTL_SHORTOPTS "j", lo, NULL)) != -1) {
		r = common_opt(&o, c, "register");
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		switch (c) {
		case 'x': file = optarg; break;
		case 'l': live = 1; break;
		case 'H': host = optarg; break;
		case 'f': force = 1; break;
		case 'h': register_usage(stdout); return 0;
		default: register_usage(stderr); return 2;
		}
	}
	if (!file == !live || optind < argc) {
		fprintf(stderr, "rankmapctl register: give exactly one of --xml FILE and --live (try --help)\n");
		return 2;
	}
	xml = file ? rm_file_read(file, RM_FILE_HWLOC, &len, &err) : live_xml(&len);
	if (!xml) {
		if (file)
			fprintf(stderr, "rankmapctl register: %s\n", rm_error_format(&err, msg, sizeof(msg)));
		else
			fprintf(stderr,
				"rankmapctl register: hwloc: cannot discover or export this machine's topology\n");
		return 1;
	}
	if (!(host = register_host(host, file, force, xml, len, hn, sizeof(hn)))) {
		free(xml);
		return 1;
	}
	r = do_register(&o, host, xml, len);
	free(xml);
	return r;
}

/* ---- distance ---------------------------------------------------------------------------------- */

static void distance_usage(FILE *f)
{
	fprintf(f,
		"Usage: rankmapctl distance [OPTIONS] A B\n\n"
		"Prints the fabric hop count and the cost-model distance between two hosts or two slots.\n"
		"A and B are host names (distance between their first PUs) or HOST:PU slots (PU = logical\n"
		"index in the host's hwloc tree). Asks rankmapd, unless a source is given on the command\n"
		"line (then works offline).\n\nOptions:\n"
		"      --cluster FILE  offline: a cluster description (hwloc, ib, torus, costs)\n"
		"      --hwloc SPEC    offline: hwloc XML directory, file, synthetic:<desc>@hosts, or live\n"
		"      --ib FILE       offline: ibnetdiscover output (repeatable)\n"
		"      --torus FILE    offline: torus configuration\n" COMMON_HELP
		"\nWith --json, prints one JSON object (also offline): hops (null when unknown), distance, same_host,\n"
		"and when hops is null hops_unknown (no_fabric, not_in_fabric, not_connected) and a note.\n"
		"Exit status: 0 on success (a cluster without a fabric gives the distance alone), 1 on failure\n"
		"(unknown host, a host with no HCA in the fabric, hosts that no subnet connects, unreachable\n"
		"daemon), 2 usage.\n"
		"Examples:\n  rankmapctl distance node001 node017\n"
		"  rankmapctl distance --hwloc hwloc/ --ib fabric.txt node001:0 node001:12\n");
}

/* "host" or "host:pu" -> JSON "host" or ["host", pu]. */
static json_t *slot_arg(const char *s)
{
	const char *colon = strrchr(s, ':');
	char *end;
	long pu;

	if (!colon)
		return json_string(s);
	pu = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || pu < 0)
		return NULL;
	return json_pack("[s#, i]", s, (int)(colon - s), (int)pu);
}

typedef struct offline {
	const char *cluster, *hwloc, *torus;
	const char *ib[16];
	int nib;
} offline_t;

static int resolve(topo_cluster_t c, const json_t *v, topo_slot_t *s)
{
	const char *host = json_is_string(v) ? json_string_value(v) : json_string_value(json_array_get(v, 0));
	long h = topo_host_find(c, host);

	if (h < 0) {
		fprintf(stderr, "rankmapctl distance: unknown host '%s'\n", host);
		return -1;
	}
	s->host = (uint32_t)h;
	s->pu = json_is_array(v) ? (uint32_t)json_integer_value(json_array_get(v, 1)) : 0;
	if (topo_host_npus(c, (size_t)h) && s->pu >= topo_host_npus(c, (size_t)h)) {
		fprintf(stderr, "rankmapctl distance: host %s has no PU %u\n", host, s->pu);
		return -1;
	}
	return 0;
}

/* Prints a distance answer (the daemon's, or topo_distance_json's offline; stolen) and returns the exit
 * status: 0 with a hop count, or without one when no fabric is loaded (a torus or a flat network); 1
 * when a host has no HCA in the fabric or no subnet joins the two (the note says which, on stderr;
 * --json prints the object all the same). */
static int distance_print(json_t *r, const common_opts_t *o)
{
	json_t *hops = json_object_get(r, "hops"), *d = json_object_get(r, "distance");
	const char *why = json_string_value(json_object_get(r, "hops_unknown"));
	int rc = json_is_integer(hops) || (why && !strcmp(why, "no_fabric")) ? 0 : 1;

	if (o->json)
		ctl_print_json(stdout, r, 0);
	else if (json_is_integer(hops))
		printf("hops %lld, distance %.4g\n", (long long)json_integer_value(hops), json_number_value(d));
	else if (!rc)
		printf("distance %.4g (%s)\n", json_number_value(d), json_string_value(json_object_get(r, "note")));
	if (rc)
		fprintf(stderr, "rankmapctl distance: %s\n", json_string_value(json_object_get(r, "note")));
	json_decref(r);
	return rc;
}

static int distance_offline(const offline_t *off, json_t *a, json_t *b, const common_opts_t *o)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err = { 0 };
	topo_slot_t s[2];
	char msg[600];
	int i, rc = 1;

	if (!c)
		return 1;
	if (off->cluster && topo_load_cluster_file(c, off->cluster, &err) < 0)
		goto out;
	if (off->hwloc && (ctl_synthetic_check(off->hwloc, &err) < 0 || topo_load_hwloc_spec(c, off->hwloc, &err) < 0))
		goto out;
	for (i = 0; i < off->nib; i++)
		if (topo_load_ib_file(c, off->ib[i], &err) < 0)
			goto out;
	if ((off->torus && topo_load_torus(c, off->torus, &err) < 0) || topo_cluster_finalize(c, &err) < 0)
		goto out;
	if (resolve(c, a, &s[0]) < 0 || resolve(c, b, &s[1]) < 0) {
		topo_cluster_destroy(c);
		return 1;
	}
	rc = distance_print(topo_distance_json(c, s[0].host, s[1].host, topo_slot_distance(c, s[0], s[1])), o);
	topo_cluster_destroy(c);
	return rc;
out:
	fprintf(stderr, "rankmapctl distance: %s\n", rm_error_format(&err, msg, sizeof(msg)));
	topo_cluster_destroy(c);
	return rc;
}

static int distance_daemon(const common_opts_t *o, json_t *a, json_t *b)
{
	int slots = json_is_array(a) || json_is_array(b);
	json_t *req = rm_proto_request("distance", 1), *resp;

	json_object_set_new(req, slots ? "slots" : "hosts", json_pack("[OO]", a, b));
	if (!(resp = call("distance", o, req, &(rm_client_info_t){ 0 })))
		return 1;
	if (!json_object_get(resp, "note") && !json_is_integer(json_object_get(resp, "hops"))) /* an older daemon */
		json_object_set_new(resp, "note", json_string("the daemon knows no hop count between them"));
	return distance_print(resp, o);
}

int ctl_distance_main(int argc, char **argv)
{
	static const struct option lo[] = { { "cluster", required_argument, NULL, 'C' },
					    { "hwloc", required_argument, NULL, 'W' },
					    { "ib", required_argument, NULL, 'I' },
					    { "torus", required_argument, NULL, 'T' },
					    COMMON_LONGOPTS,
					    { NULL, 0, NULL, 0 } };
	common_opts_t o = { 0 };
	offline_t off = { 0 };
	json_t *a, *b;
	int c, r;

	while ((c = getopt_long(argc, argv, CTL_SHORTOPTS "j", lo, NULL)) != -1) {
		r = common_opt(&o, c, "distance");
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		switch (c) {
		case 'C': off.cluster = optarg; break;
		case 'W': off.hwloc = optarg; break;
		case 'T': off.torus = optarg; break;
		case 'I':
			if (off.nib == 16)
				return fprintf(stderr, "rankmapctl distance: at most 16 --ib files\n"), 2;
			off.ib[off.nib++] = optarg;
			break;
		case 'h': distance_usage(stdout); return 0;
		default: distance_usage(stderr); return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "rankmapctl distance: give two hosts or HOST:PU slots (try --help)\n");
		return 2;
	}
	a = slot_arg(argv[optind]);
	b = slot_arg(argv[optind + 1]);
	if (!a || !b) {
		json_decref(a);
		json_decref(b);
		fprintf(stderr, "rankmapctl distance: expected HOST or HOST:PU\n");
		return 2;
	}
	r = off.cluster || off.hwloc || off.nib || off.torus ? distance_offline(&off, a, b, &o)
							     : distance_daemon(&o, a, b);
	json_decref(a);
	json_decref(b);
	return r;
}
