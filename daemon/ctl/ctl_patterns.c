/*
 * daemon/ctl/ctl_patterns.c: `rankmapctl patterns list|show|forget`: the communication patterns the MPI
 * library learned (RANKMAP_LEARN=1), offline in the per-user directory or through rankmapd (--socket).
 * Both sources give the patterns' text form (common/rm_pattern.h); one printer serves both, so the
 * output is the same, text or --json.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_common.h"
#include "rm_client.h"
#include "rm_pattern.h"

#define CMD "patterns"
#define TOP_EDGES 10

typedef struct opts {
	const char *dir;
	ctl_daemon_t d; /* --socket / --server, or the environment's */
	int json, all;
	long long uid; /* -1: the caller's */
} opts_t;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rankmapctl patterns list [OPTIONS]\n"
		"       rankmapctl patterns show ID [OPTIONS]\n"
		"       rankmapctl patterns forget ID|all [OPTIONS]\n\n"
		"The communication patterns the MPI library learned (RANKMAP_LEARN=1, srun --rankmap-learn): one\n"
		"per topology call of a program, keyed by user, program (ELF build-id), call and shape. `list`\n"
		"prints one line per pattern, `show` its per-dimension weights (Cartesian calls) or heaviest edges\n"
		"(graphs), the traffic between ranks that are not neighbours, the runs merged and the last update;\n"
		"`forget` removes one pattern, or all.\n\n"
		"Options:\n"
		"  -d, --dir DIR       the per-user directory (default: $RANKMAP_LEARN_DIR, else\n"
		"                      $XDG_CACHE_HOME/rankmap, else ~/.cache/rankmap)\n"
		"  -s, --server LIST   the patterns kept by rankmapd instead of the directory\n" CTL_DAEMON_HELP
		"  -u, --uid UID       (root, with the daemon) another user's patterns\n"
		"  -a, --all           (root, with the daemon) every user's patterns\n"
		"  -j, --json          JSON output\n"
		"  -h, --help          show this help\n\n"
		"Examples:\n"
		"  rankmapctl patterns list\n"
		"  rankmapctl patterns show 34a8d59add837254 --json\n"
		"  rankmapctl patterns forget all --server /run/rankmapd/rankmapd.sock\n\n"
		"Exit status: 0 success, 1 error (unknown pattern, unreadable directory, daemon error), 2 usage.\n");
}

/* ---- reading ------------------------------------------------------------------------------------ */

rm_pattern_t **ctl_patterns_load(const char *cmd, const ctl_daemon_t *d, const char *dir_opt, long long uid, int all,
				 const char *id, size_t *n, size_t *bad)
{
	rm_pattern_t **ps = NULL;
	rm_error_t err = { 0 };
	char dir[4096];

	*n = 0, *bad = 0;
	if (ctl_daemon_set(d)) {
		json_t *req = rm_proto_request("pattern_list", 1), *resp, *v;
		size_t i;

		if (uid >= 0)
			json_object_set_new(req, "uid", json_integer(uid));
		if (all)
			json_object_set_new(req, "all", json_true());
		if (id)
			json_object_set_new(req, "pattern", json_string(id));
		if (!(resp = ctl_call(cmd, d, req, CTL_DAEMON_TIMEOUT_MS)))
			return NULL;
		json_t *list = json_object_get(resp, "patterns");

		*bad = (size_t)json_integer_value(json_object_get(resp, "unreadable"));
		ps = calloc(json_array_size(list) + 1, sizeof(*ps));
		json_array_foreach (list, i, v) {
			const char *t = json_string_value(json_object_get(v, "text"));
			rm_pattern_t *p = t && ps ? rm_pattern_parse(t, strlen(t), "rankmapd", NULL) : NULL;

			if (p)
				ps[(*n)++] = p;
			else
				++*bad;
		}
		json_decref(resp);
		return ps;
	}
	if (dir_opt)
		snprintf(dir, sizeof(dir), "%s", dir_opt);
	else if (rm_pattern_dir_default(dir, sizeof(dir)) != 0)
		return ctl_fail(cmd, NULL, "no pattern directory (set RANKMAP_LEARN_DIR or HOME)"), NULL;
	if (access(dir, F_OK) != 0 && errno == ENOENT) /* nothing learned yet: no pattern, no error */
		return calloc(1, sizeof(*ps));
	if (rm_pattern_dir_check(dir, geteuid(), 0, &err) != 0 || rm_pattern_dir_list(dir, &ps, n, bad, &err) != 0)
		return ctl_fail(cmd, &err, dir), NULL;
	for (size_t i = 0, k = 0; id && i < *n; i++) { /* keep the one asked for */
		char pid[17];

		rm_pattern_key_id(&ps[i]->key, pid);
		if (!strcmp(pid, id))
			ps[k++] = ps[i];
		else
			rm_pattern_free(ps[i]);
		if (i == *n - 1)
			*n = k;
	}
	return ps;
}

static void free_all(rm_pattern_t **ps, size_t n)
{
	for (size_t i = 0; ps && i < n; i++)
		rm_pattern_free(ps[i]);
	free(ps);
}

/* ---- printing ----------------------------------------------------------------------------------- */

static const char *when(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	strftime(buf, len, "%Y-%m-%d %H:%M:%S", gmtime_r(&tt, &tm));
	return buf;
}

static json_t *summary_json(const rm_pattern_t *p)
{
	char pid[17], t[32];

	rm_pattern_key_id(&p->key, pid);
	return json_pack("{s:s, s:I, s:s, s:s, s:s, s:I, s:s, s:I, s:I, s:s, s:I, s:f, s:b}", "pattern", pid, "uid",
			 (json_int_t)p->key.uid, "program", p->key.program, "path", p->path, "fn", p->key.fn, "order",
			 (json_int_t)p->key.order, "shape", p->key.shape, "runs", (json_int_t)p->runs, "ranks",
			 (json_int_t)p->ranks, "updated", when(p->updated, t, sizeof(t)), "updated_unix",
			 (json_int_t)p->updated, "drift", p->drift, "stable", p->drift <= RM_PATTERN_DRIFT_MAX);
}

static void print_list(rm_pattern_t **ps, size_t n, size_t bad, int json)
{
	char pid[17], t[32];

	if (json) {
		json_t *a = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, summary_json(ps[i]));
		json_t *o = json_pack("{s:o, s:I}", "patterns", a, "unreadable", (json_int_t)bad);

		ctl_print_json(stdout, o, 0);
		json_decref(o);
		return;
	}
	if (n == 0 && bad == 0)
		return; /* nothing learned: nothing listed (as ls of an empty directory) */
	printf("%-16s  %6s  %-30s  %5s  %4s  %6s  %-19s  %s\n", "PATTERN", "UID", "CALL", "ORDER", "RUNS", "RANKS",
	       "UPDATED (UTC)", "PROGRAM");
	for (size_t i = 0; i < n; i++) {
		const rm_pattern_t *p = ps[i];

		rm_pattern_key_id(&p->key, pid);
		printf("%-16s  %6u  %-30s  %5u  %4u  %6u  %-19s  %s\n", pid, p->key.uid, p->key.fn, p->key.order,
		       p->runs, p->ranks, when(p->updated, t, sizeof(t)), p->path[0] ? p->path : p->key.program);
	}
	if (bad)
		printf("(%zu unreadable pattern file(s) skipped)\n", bad);
}

/* Indices of the heaviest entries (by bytes), at most k, into top; returns how many. */
static size_t heaviest(const rm_pattern_t *p, size_t *top, size_t k)
{
	size_t m = 0;

	for (size_t e = 0; e < p->nedges; e++) {
		size_t j = m < k ? m++ : k;

		if (j == k && p->edge[2 * e] <= p->edge[2 * top[k - 1]])
			continue;
		if (j == k)
			j = k - 1;
		while (j > 0 && p->edge[2 * top[j - 1]] < p->edge[2 * e])
			top[j] = top[j - 1], j--;
		top[j] = e;
	}
	return m;
}

static void show_one(const rm_pattern_t *p, int json)
{
	double tot[RM_PATTERN_MAXDIMS], max = 0;
	size_t top[TOP_EDGES], nt = heaviest(p, top, TOP_EDGES);

	for (int d = 0; d < p->ndims; d++)
		tot[d] = p->dim[d][0] + p->dim[d][1], max = tot[d] > max ? tot[d] : max;
	if (json) {
		json_t *o = summary_json(p), *dims = json_array(), *edges = json_array();

		for (int d = 0; d < p->ndims; d++)
			json_array_append_new(dims, json_pack("{s:i, s:f, s:f, s:f, s:f, s:f}", "dim", d, "bytes_minus",
							      p->dim[d][0], "bytes_plus", p->dim[d][1], "msgs_minus",
							      p->dim[d][2], "msgs_plus", p->dim[d][3], "weight",
							      max > 0 ? tot[d] / max : 0.0));
		for (size_t i = 0; i < nt; i++)
			json_array_append_new(edges,
					      json_pack("{s:I, s:I, s:f, s:f}", "from", (json_int_t)p->ends[2 * top[i]],
							"to", (json_int_t)p->ends[2 * top[i] + 1], "bytes",
							p->edge[2 * top[i]], "msgs", p->edge[2 * top[i] + 1]));
		json_object_set_new(o, p->ndims ? "dims" : "heaviest_edges", p->ndims ? dims : edges);
		json_decref(p->ndims ? edges : dims);
		if (!p->ndims)
			json_object_set_new(o, "edges", json_integer((json_int_t)p->nedges));
		json_object_set_new(o, "not_neighbours",
				    json_pack("{s:f, s:f}", "bytes", p->other[0], "msgs", p->other[1]));
		ctl_print_json(stdout, o, 0);
		json_decref(o);
		return;
	}
	char pid[17], t[32];

	rm_pattern_key_id(&p->key, pid);
	printf("Pattern %s\n  program        %s\n                 %s\n  call           %s, topology call #%u, %s\n"
	       "  runs merged    %u\n  last update    %s UTC\n  ranks          %u (last run)\n  user           uid "
	       "%u\n",
	       pid, p->path[0] ? p->path : "(unknown path)", p->key.program, p->key.fn, p->key.order, p->key.shape,
	       p->runs, when(p->updated, t, sizeof(t)), p->ranks, p->key.uid);
	printf("  drift          %.3f (the last run against the average before it; above %.2f the MPI library\n"
	       "                 does not apply the pattern until runs agree again: %s)\n",
	       p->drift, RM_PATTERN_DRIFT_MAX, p->drift <= RM_PATTERN_DRIFT_MAX ? "stable" : "unstable");
	if (p->ndims) {
		printf("Traffic per rank and dimension (what reordering weighs)\n  %3s  %14s  %14s  %12s  %12s  %6s\n",
		       "DIM", "BYTES TO -1", "BYTES TO +1", "MSGS TO -1", "MSGS TO +1", "WEIGHT");
		for (int d = 0; d < p->ndims; d++)
			printf("  %3d  %14.6g  %14.6g  %12.6g  %12.6g  %6.3f\n", d, p->dim[d][0], p->dim[d][1],
			       p->dim[d][2], p->dim[d][3], max > 0 ? tot[d] / max : 0.0);
	} else {
		printf("Heaviest edges of %zu (bytes and messages per rank of the run)\n  %8s  %8s  %14s  %12s\n",
		       p->nedges, "FROM", "TO", "BYTES", "MSGS");
		for (size_t i = 0; i < nt; i++)
			printf("  %8u  %8u  %14.6g  %12.6g\n", p->ends[2 * top[i]], p->ends[2 * top[i] + 1],
			       p->edge[2 * top[i]], p->edge[2 * top[i] + 1]);
	}
	printf("Traffic to ranks that are not neighbours in the topology (per rank)\n  bytes %.6g, messages %.6g\n",
	       p->other[0], p->other[1]);
}

/* ---- entry point -------------------------------------------------------------------------------- */

static int forget(const opts_t *o, const char *id)
{
	if (strcmp(id, "all") && (strlen(id) != 16 || strspn(id, "0123456789abcdef") != 16))
		return ctl_usage_error(CMD, "forget: '%s' is not a pattern id (16 hex digits) or 'all'", id);
	int removed;

	if (ctl_daemon_set(&o->d)) {
		json_t *req = rm_proto_request("pattern_forget", 1), *resp;

		json_object_set_new(req, "pattern", json_string(id));
		if (o->uid >= 0)
			json_object_set_new(req, "uid", json_integer(o->uid));
		if (o->all)
			json_object_set_new(req, "all", json_true());
		if (!(resp = ctl_call(CMD, &o->d, req, CTL_DAEMON_TIMEOUT_MS)))
			return 1;
		removed = (int)json_integer_value(json_object_get(resp, "removed"));
		json_decref(resp);
	} else {
		char dir[4096];
		rm_error_t err = { 0 };

		if (o->dir)
			snprintf(dir, sizeof(dir), "%s", o->dir);
		else if (rm_pattern_dir_default(dir, sizeof(dir)) != 0)
			return ctl_fail(CMD, NULL, "no pattern directory (set RANKMAP_LEARN_DIR or HOME)");
		if (rm_pattern_dir_check(dir, geteuid(), 0, &err) != 0 ||
		    (removed = rm_pattern_dir_forget(dir, id, &err)) < 0)
			return ctl_fail(CMD, &err, dir);
	}
	if (o->json)
		printf("{\n  \"removed\": %d\n}\n", removed);
	else
		printf("%d pattern(s) removed\n", removed);
	if (!removed && strcmp(id, "all"))
		return fprintf(stderr, "rankmapctl %s: no pattern %s\n", CMD, id), 1;
	return 0;
}

int ctl_patterns_main(int argc, char **argv)
{
	static const struct option lo[] = { { "dir", required_argument, NULL, 'd' },
					    CTL_DAEMON_LONGOPTS,
					    { "uid", required_argument, NULL, 'u' },
					    { "all", no_argument, NULL, 'a' },
					    { "json", no_argument, NULL, 'j' },
					    { "help", no_argument, NULL, 'h' },
					    { NULL, 0, NULL, 0 } };
	opts_t o = { .uid = -1 };
	int c;
	char *end;

	while ((c = getopt_long(argc, argv, "d:u:aj" CTL_SHORTOPTS, lo, NULL)) != -1) {
		switch (c) {
		case 'd': o.dir = optarg; break;
		case 'a': o.all = 1; break;
		case 'j': o.json = 1; break;
		case 'u':
			o.uid = strtoll(optarg, &end, 10);
			if (*end || o.uid < 0 || o.uid > UINT32_MAX)
				return ctl_usage_error(CMD, "--uid: '%s' is not a uid", optarg);
			break;
		case 'h': usage(stdout); return 0;
		default:
			if (ctl_daemon_opt(&o.d, c, optarg, CMD))
				break;
			return ctl_usage_hint(CMD);
		}
	}
	if (!o.dir)
		ctl_daemon_env(&o.d);
	if ((o.uid >= 0 || o.all) && !ctl_daemon_set(&o.d))
		return ctl_usage_error(CMD, "--uid and --all need the daemon (--socket)");
	const char *what = optind < argc ? argv[optind] : NULL, *id = optind + 1 < argc ? argv[optind + 1] : NULL;

	if (!what || (strcmp(what, "list") && strcmp(what, "show") && strcmp(what, "forget")))
		return ctl_usage_error(CMD, "expected list, show or forget");
	if ((!strcmp(what, "list") && id) || (strcmp(what, "list") && (!id || optind + 2 < argc)))
		return ctl_usage_error(CMD, "%s: wrong number of arguments", what);
	if (!strcmp(what, "forget"))
		return forget(&o, id);
	size_t n = 0, bad = 0;
	rm_pattern_t **ps = ctl_patterns_load(CMD, &o.d, o.dir, o.uid, o.all, id, &n, &bad);

	if (!ps)
		return 1;
	int rc = 0;

	if (!strcmp(what, "list"))
		print_list(ps, n, bad, o.json);
	else if (n == 0)
		rc = (fprintf(stderr, "rankmapctl %s: no pattern %s\n", CMD, id), 1);
	else
		show_one(ps[0], o.json);
	free_all(ps, n);
	return rc;
}
