/*
 * daemon/ctl/ctl_report.c: `rankmapctl report`: loads a cluster from files (or the live fabric) and prints
 * topo_cluster_report() as aligned text, or as the JSON object itself with --json. The text is rendered
 * from that same JSON object, so the two always agree.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_common.h"
#include "rm_client.h"
#include "order.h"
#include "report_svg.h"
#include "topo.h"
#include "topo_report.h"

_Static_assert(TOPO_REPORT_SCHEMA_VERSION == RM_SCHEMA_VERSION, "one schema version for every JSON output");

#define MAX_PER_KIND 20 /* anomalies shown per kind in text without --all; --json has them all */

static void usage(FILE *f)
{
	fprintf(f,
		"NAME\n"
		"    rankmapctl report - summarise a cluster: hardware, fabric, hop counts, anomalies\n\n"
		"SYNOPSIS\n"
		"    rankmapctl report [--hwloc PATH]... [--ib FILE]... [--ib-cache FILE] [--ib-live]\n"
		"                      [--node-name-map FILE] [--torus FILE] [--cluster FILE] [--strict]\n"
		"                      [--json] [--all] [--svg FILE] [--order METHOD]\n"
		"    rankmapctl report --server LIST [--json] [--all] [--svg FILE] [--order METHOD]\n\n"
		"DESCRIPTION\n"
		"    Loads the node hardware (hwloc), the InfiniBand fabric and an optional 3D torus, joins them\n"
		"    by host name and prints what a cluster administrator checks: hosts, packages, cores and PUs\n"
		"    per node type, switches per level, HCA ports, subnets, link rates, the histogram of hop\n"
		"    counts between hosts, and anomalies: hosts in the fabric without hardware data and the\n"
		"    reverse, links that could be faster or wider (both ends support more: known from live\n"
		"    discovery or a libibnetdisc cache, as iblinkinfo's \"Could be\"), unconnected switch ports,\n"
		"    generic HCA names; and notes: links below their subnet's usual speed or width where what\n"
		"    their ends support is unknown (ibnetdiscover's text files give the active rate only).\n"
		"    Without any source option, the report comes from rankmapd when --server, RANKMAP_SERVER or\n"
		"    RANKMAP_SOCKET names it, else from the cluster file named by RANKMAP_CLUSTER, else from\n"
		"    rankmapd at its default socket " RM_SOCKET_DEFAULT
		".\n\n"
		"OPTIONS\n"
		"    --hwloc PATH        hwloc data: a directory of <host>.xml files (and <host>.diff.xml\n"
		"                        topology diffs), one XML file, \"synthetic:<desc>[@host,...]\" or\n"
		"                        \"live\" (this machine). Repeatable.\n"
		"    --ib FILE           ibnetdiscover output, topology file or -p ports report (-s verbose\n"
		"                        lines are skipped). One subnet per file; repeatable.\n"
		"    --ib-cache FILE     a libibnetdisc cache file (ibnetdiscover --cache).\n"
		"    --ib-live           discover the fabric now through libibnetdisc (default port).\n"
		"    --node-name-map FILE\n"
		"                        lines '0xGUID \"name\"' naming HCAs (and so hosts).\n"
		"    --torus FILE        3D torus description (dims, wrap, link_cost, nodes_per_router, hosts).\n"
		"    --cluster FILE      a cluster file (key = value lines: hwloc, ib, ib_cache, node_name_map,\n"
		"                        torus, strict and cost parameters); loaded before the options above.\n"
		"    --strict            fail on the first hwloc file that cannot be read or applied. By\n"
		"                        default such a host is left out and listed as an anomaly (kind\n"
		"                        bad_host_file, bad_reference or diff_hunk, with file, line and reason)\n"
		"                        and the rest of the cluster loads.\n"
		"  -j, --json            print one JSON object instead of text (keys hosts, hosts_with_hardware,\n"
		"                        switches, hca_ports, subnets, cores, pus, anomalies, ...; schema in\n"
		"                        share/rankmap/rankmap.schema.json, \"schema_version\" 1).\n"
		"    --all               list every anomaly and every leaf switch in the text (default: the\n"
		"                        first 20 of each kind and 40 leaves, then a count).\n"
		"    --svg FILE          also draw the cluster into FILE (SVG): the fabric as a layered graph,\n"
		"                        hosts grouped in one box per leaf switch (count and host list),\n"
		"                        links coloured by speed, anomalies in red; with a torus, the torus\n"
		"                        order picture below it.\n"
		"    --order METHOD      torus ordering summarised and drawn (xyz, mdf, gray, hilbert, bbb;\n"
		"                        default bbb, see rankmapctl order).\n"
		"    --server LIST       ask rankmapd instead: its model replaces the source options (same\n"
		"                        output, --svg included: the daemon draws the picture).\n" CTL_DAEMON_HELP
		"    -h, --help          print this help.\n\n"
		"EXAMPLES\n"
		"    rankmapctl report --cluster cluster.conf          # rankmap(7), CLUSTER FILES\n"
		"    rankmapctl report --hwloc /var/lib/hwloc --ib fabric.txt --node-name-map names.map --json\n"
		"    rankmapctl report --server /run/rankmapd/rankmapd.sock\n\n"
		"EXIT STATUS\n"
		"    0 success, 1 a source could not be loaded (the message names the file and line),\n"
		"    2 usage error.\n");
}

struct opts {
	ctl_sources_t src;
	int json, all;
	const char *svg, *order;
	ctl_daemon_t d;
};

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = { CTL_SOURCE_LONGOPTS,
					    { "json", no_argument, NULL, 'j' },
					    { "all", no_argument, NULL, 'a' },
					    { "svg", required_argument, NULL, 'G' },
					    { "order", required_argument, NULL, 'o' },
					    CTL_DAEMON_LONGOPTS,
					    { "help", no_argument, NULL, 'h' },
					    { NULL, 0, NULL, 0 } };
	int ch, r;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((ch = getopt_long(argc, argv, CTL_SHORTOPTS "j", lo, NULL)) != -1) {
		if ((r = ctl_sources_opt(&o->src, "report", ch, optarg)) == 2)
			return 2;
		if (r || ctl_daemon_opt(&o->d, ch, optarg, "report"))
			continue;
		switch (ch) {
		case 'j': o->json = 1; break;
		case 'a': o->all = 1; break;
		case 'G': o->svg = optarg; break;
		case 'o': o->order = optarg; break;
		case 'h': usage(stdout); return 0;
		default: fprintf(stderr, "Try 'rankmapctl report --help'.\n"); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rankmapctl report: unexpected argument '%s'\nTry 'rankmapctl report --help'.\n",
			argv[optind]);
		return 2;
	}
	if (ctl_daemon_set(&o->d) && ctl_sources_any(&o->src))
		return ctl_usage_error("report",
				       "--server replaces --hwloc, --ib, --ib-cache, --ib-live, --torus "
				       "and --cluster (the daemon's model is used)");
	if (!ctl_sources_any(&o->src) && !ctl_daemon_env(&o->d))
		o->src.cluster = getenv("RANKMAP_CLUSTER");
	if (!ctl_sources_any(&o->src) && !ctl_daemon_set(&o->d))
		ctl_daemon_default(&o->d); /* no files: ask rankmapd at its default socket */
	return -1;
}

/* ---- text rendering of the report object ------------------------------------------------------ */

struct table {
	int ncols;
	size_t nrows, cap;
	char **cells; /* nrows * ncols, row 0 the header */
};

static void row(struct table *t, ...)
{
	va_list ap;
	int i;

	if (t->nrows == t->cap) {
		char **n = realloc(t->cells, (t->cap = t->cap ? t->cap * 2 : 16) * (size_t)t->ncols * sizeof(*n));

		if (!n)
			return;
		t->cells = n;
	}
	va_start(ap, t);
	for (i = 0; i < t->ncols; i++) {
		const char *s = va_arg(ap, const char *);

		t->cells[t->nrows * (size_t)t->ncols + (size_t)i] = strdup(s ? s : "");
	}
	va_end(ap);
	t->nrows++;
}

/* Prints the table with columns aligned (numbers right-aligned), then frees it. */
static void table_print(struct table *t)
{
	size_t w[16] = { 0 }, r, n;
	int c;

	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols; c++)
			if (t->cells[r * (size_t)t->ncols + (size_t)c] &&
			    (n = strlen(t->cells[r * (size_t)t->ncols + (size_t)c])) > w[c])
				w[c] = n;
	for (r = 0; r < t->nrows; r++) {
		fputs("  ", stdout);
		for (c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * (size_t)t->ncols + (size_t)c];
			int num = s && s[0] >= '0' && s[0] <= '9' && strspn(s, "0123456789.") == strlen(s);

			s = s ? s : "";
			if (c == t->ncols - 1)
				printf("%s", s);
			else if (num && r > 0)
				printf("%*s  ", (int)w[c], s);
			else
				printf("%-*s  ", (int)w[c], s);
		}
		putchar('\n');
	}
	for (r = 0; r < t->nrows * (size_t)t->ncols; r++)
		free(t->cells[r]);
	free(t->cells);
}

static const char *num(char *buf, json_t *v)
{
	if (json_is_integer(v))
		snprintf(buf, 32, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, 32, "%g", json_real_value(v));
	else
		snprintf(buf, 32, "-");
	return buf;
}

/* The GPUs and NICs of a node type: each GPU's bus id, NUMA node, nearest cores and NIC; the NICs; the
 * link matrix summary. */
static void print_gpus(const json_t *e)
{
	json_t *g, *n, *l = json_object_get(e, "gpu_links");
	size_t i;

	if (!json_array_size(json_object_get(e, "gpu_list")) && !json_array_size(json_object_get(e, "nic_list")))
		return;
	printf("\nGPUs and NICs of %s\n", json_string_value(json_object_get(e, "host_list")));
	json_array_foreach (json_object_get(e, "gpu_list"), i, g)
		printf("  GPU %-3lld %-10s %s  NUMA %-3lld cpus %-20s NIC %s%s%s\n",
		       (long long)json_integer_value(json_object_get(g, "index")),
		       json_string_value(json_object_get(g, "name")), json_string_value(json_object_get(g, "busid")),
		       (long long)json_integer_value(json_object_get(g, "numa")),
		       json_string_value(json_object_get(g, "cpus")),
		       json_string_value(json_object_get(g, "nic")) ? json_string_value(json_object_get(g, "nic"))
								    : "-",
		       json_string_value(json_object_get(g, "model")) ? "  " : "",
		       json_string_value(json_object_get(g, "model")) ? json_string_value(json_object_get(g, "model"))
								      : "");
	json_array_foreach (json_object_get(e, "nic_list"), i, n)
		printf("  NIC %-3lld %-10s %s  NUMA %-3lld %-11s GPUs %lld\n",
		       (long long)json_integer_value(json_object_get(n, "index")),
		       json_string_value(json_object_get(n, "name")), json_string_value(json_object_get(n, "busid")),
		       (long long)json_integer_value(json_object_get(n, "numa")),
		       json_string_value(json_object_get(n, "kind")),
		       (long long)json_integer_value(json_object_get(n, "gpus")));
	if (json_is_object(l))
		printf("  links: %s, %lld of %lld pairs linked, %.0f to %.0f GB/s%s%s\n",
		       json_string_value(json_object_get(l, "source")),
		       (long long)json_integer_value(json_object_get(l, "linked_pairs")),
		       (long long)json_integer_value(json_object_get(l, "pairs")),
		       json_number_value(json_object_get(l, "min_gbps")),
		       json_number_value(json_object_get(l, "max_gbps")),
		       json_integer_value(json_object_get(l, "nvswitches")) ? ", through NVSwitches" : "",
		       json_is_true(json_object_get(l, "asymmetric")) ? ", ASYMMETRIC" : "");
}

static void print_hardware(json_t *r)
{
	struct table t = { .ncols = 7 };
	char b[7][64];
	size_t i;
	json_t *e;

	printf("Cluster\n");
	t.ncols = 2;
	row(&t, "hosts", num(b[0], json_object_get(r, "hosts")));
	row(&t, "hosts with hardware", num(b[0], json_object_get(r, "hosts_with_hardware")));
	row(&t, "packages", num(b[0], json_object_get(r, "packages")));
	row(&t, "cores", num(b[0], json_object_get(r, "cores")));
	row(&t, "PUs", num(b[0], json_object_get(r, "pus")));
	if (json_integer_value(json_object_get(r, "gpus")) || json_integer_value(json_object_get(r, "nics"))) {
		row(&t, "GPUs", num(b[0], json_object_get(r, "gpus")));
		row(&t, "NICs", num(b[0], json_object_get(r, "nics")));
	}
	table_print(&t);
	if (!json_array_size(json_object_get(r, "node_types")))
		return;
	printf("\nNode types\n");
	t = (struct table){ .ncols = 7 };
	row(&t, "HOSTS", "PACKAGES", "NUMA", "CORES", "PUS", "MEMORY", "CPU MODEL / HOSTS");
	json_array_foreach (json_object_get(r, "node_types"), i, e) {
		snprintf(b[5], sizeof(b[5]), "%.1f GiB",
			 (double)json_integer_value(json_object_get(e, "memory_bytes")) / (1024.0 * 1024 * 1024));
		row(&t, num(b[0], json_object_get(e, "hosts")), num(b[1], json_object_get(e, "packages")),
		    num(b[2], json_object_get(e, "numa_nodes")), num(b[3], json_object_get(e, "cores")),
		    num(b[4], json_object_get(e, "pus")), b[5], json_string_value(json_object_get(e, "cpu_model")));
		row(&t, "", "", "", "", "", "", json_string_value(json_object_get(e, "host_list")));
	}
	table_print(&t);
	json_array_foreach (json_object_get(r, "node_types"), i, e)
		print_gpus(e);
}

/* "k1 v1, k2 v2" from a JSON object of counts. */
static void print_counts(const char *label, json_t *obj)
{
	const char *k;
	json_t *v;
	int first = 1;

	if (!json_object_size(obj))
		return;
	printf("  %-26s", label);
	json_object_foreach (obj, k, v) {
		printf("%s%s: %lld", first ? "" : ", ", k, (long long)json_integer_value(v));
		first = 0;
	}
	putchar('\n');
}

static void print_network(json_t *r)
{
	json_t *v, *tor = json_object_get(r, "torus");
	struct table t = { .ncols = 2 };
	char b[3][64], lv[256] = "";
	size_t i, len = 0;

	if (json_is_object(json_object_get(r, "fabric")) && json_integer_value(json_object_get(r, "subnets")) > 0) {
		printf("\nInfiniBand fabric\n");
		json_array_foreach (json_object_get(r, "switches_per_level"), i, v)
			len += (size_t)snprintf(lv + len, len < sizeof(lv) ? sizeof(lv) - len : 0, "%s%lld",
						i ? ", " : "", (long long)json_integer_value(v));
		row(&t, "subnets", num(b[0], json_object_get(r, "subnets")));
		row(&t, "switches", num(b[1], json_object_get(r, "switches")));
		row(&t, "switches per level", lv[0] ? lv : "-");
		row(&t, "HCA ports", num(b[2], json_object_get(r, "hca_ports")));
		row(&t, "links", num(b[0], json_object_get(r, "links")));
		row(&t, "unconnected switch ports", num(b[1], json_object_get(r, "unconnected_switch_ports")));
		table_print(&t);
		print_counts("link rates", json_object_get(r, "link_rates"));
	}
	if (json_is_object(tor)) {
		json_t *d = json_object_get(tor, "dims"), *w = json_object_get(tor, "wrap");
		json_t *lc = json_object_get(tor, "link_cost");

		printf("\n3D torus\n");
		printf("  dims %lldx%lldx%lld, wrap %s,%s,%s, link cost %g,%g,%g, %lld nodes per router, "
		       "%lld nodes, %lld named hosts\n",
		       (long long)json_integer_value(json_array_get(d, 0)),
		       (long long)json_integer_value(json_array_get(d, 1)),
		       (long long)json_integer_value(json_array_get(d, 2)),
		       json_is_true(json_array_get(w, 0)) ? "yes" : "no",
		       json_is_true(json_array_get(w, 1)) ? "yes" : "no",
		       json_is_true(json_array_get(w, 2)) ? "yes" : "no", json_number_value(json_array_get(lc, 0)),
		       json_number_value(json_array_get(lc, 1)), json_number_value(json_array_get(lc, 2)),
		       (long long)json_integer_value(json_object_get(tor, "nodes_per_router")),
		       (long long)json_integer_value(json_object_get(tor, "nodes")),
		       (long long)json_integer_value(json_object_get(tor, "hosts")));
	}
}

#define MAX_LEAF_ROWS 40 /* leaf switches listed in text; --json has them all */

/* Fabric structure: one row per leaf switch (ports down to hosts, up, unconnected, ratio). */
static void print_leaves(json_t *r, int all)
{
	json_t *leaves = json_object_get(json_object_get(r, "fabric"), "leaves"), *e;
	struct table t = { .ncols = 7 };
	char b[5][32];
	size_t i;

	if (!json_array_size(leaves))
		return;
	printf("\nLeaf switches: %zu\n", json_array_size(leaves));
	row(&t, "DOWN", "UP", "LATERAL", "UNCONNECTED", "OVERSUB", "SWITCH", "DESCRIPTION");
	json_array_foreach (leaves, i, e) {
		json_t *o = json_object_get(e, "oversubscription");

		if (i == MAX_LEAF_ROWS && !all)
			break;
		if (json_is_number(o))
			snprintf(b[4], sizeof(b[4]), "%.2f:1", json_number_value(o));
		else
			snprintf(b[4], sizeof(b[4]), "no uplink");
		row(&t, num(b[0], json_object_get(e, "down_ports")), num(b[1], json_object_get(e, "up_ports")),
		    num(b[2], json_object_get(e, "lateral_ports")), num(b[3], json_object_get(e, "unconnected_ports")),
		    b[4], json_string_value(json_object_get(e, "switch")),
		    json_string_value(json_object_get(e, "description")));
	}
	table_print(&t);
	if (json_array_size(leaves) > MAX_LEAF_ROWS && !all)
		printf("  ... and %zu more leaf switches (--all lists them)\n",
		       json_array_size(leaves) - MAX_LEAF_ROWS);
}

/* Anomalies of one kind in the report (the JSON lists them all; the text counts them). */
static json_int_t kind_count(json_t *r, const char *kind)
{
	json_t *e;
	json_int_t n = 0;
	size_t i;

	json_array_foreach (json_object_get(r, "anomalies"), i, e) {
		const char *k = json_string_value(json_object_get(e, "kind"));

		n += k && !strcmp(k, kind);
	}
	return n;
}

/* "k1: v1, k2: v2" from a JSON object of counts, into buf. */
static const char *counts_str(json_t *obj, char *buf, size_t len)
{
	const char *k;
	json_t *v;
	size_t o = 0;

	buf[0] = '\0';
	json_object_foreach (obj, k, v)
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%s: %lld", o ? ", " : "", k,
					      (long long)json_integer_value(v));
	return buf;
}

/* Link quality: speed and width distributions, links below the norm, unconnected ports. */
static void print_link_quality(json_t *r)
{
	json_t *f = json_object_get(r, "fabric");
	struct table t = { .ncols = 2 };
	char b[4][32], lists[2][256];

	if (!json_is_object(f) || !json_integer_value(json_object_get(f, "links")))
		return;
	printf("\nLink quality\n");
	row(&t, "link speeds", counts_str(json_object_get(f, "link_speeds"), lists[0], sizeof(lists[0])));
	row(&t, "link widths", counts_str(json_object_get(f, "link_widths"), lists[1], sizeof(lists[1])));
	snprintf(b[0], sizeof(b[0]), "%lld", (long long)kind_count(r, "slow_link"));
	snprintf(b[1], sizeof(b[1]), "%lld", (long long)kind_count(r, "narrow_link"));
	snprintf(b[2], sizeof(b[2]), "%lld", (long long)kind_count(r, "unknown_speed_link"));
	snprintf(lists[0], sizeof(lists[0]), "%lld of %lld",
		 (long long)json_integer_value(json_object_get(f, "links_with_supported_rates")),
		 (long long)json_integer_value(json_object_get(f, "links")));
	row(&t, "links whose ends' supported rates are known", lists[0]);
	row(&t, "links that could be faster", b[0]);
	row(&t, "links that could be wider", b[1]);
	snprintf(lists[1], sizeof(lists[1]), "%lld", (long long)kind_count(r, "below_norm_link"));
	row(&t, "links below the subnet norm (supported unknown)", lists[1]);
	row(&t, "links of unknown speed", b[2]);
	row(&t, "unconnected switch ports", num(b[3], json_object_get(f, "unconnected_switch_ports")));
	snprintf(b[3], sizeof(b[3]), "%lld", (long long)kind_count(r, "unconnected_hca"));
	row(&t, "hosts without a connected HCA port", b[3]);
	table_print(&t);
}

/* Coverage: which hosts the hardware and fabric sources do not both know. */
static void print_coverage(json_t *r)
{
	struct table t = { .ncols = 2 };
	char b[3][32];

	printf("\nCoverage\n");
	snprintf(b[0], sizeof(b[0]), "%lld", (long long)kind_count(r, "no_hardware"));
	snprintf(b[1], sizeof(b[1]), "%lld", (long long)kind_count(r, "not_in_fabric"));
	snprintf(b[2], sizeof(b[2]), "%lld", (long long)kind_count(r, "generic_hca"));
	row(&t, "network hosts without hardware data", b[0]);
	row(&t, "hosts with hardware data but no HCA", b[1]);
	row(&t, "HCAs named only by GUID", b[2]);
	table_print(&t);
}

/* The histogram is an array in increasing order of hops (or torus distance), hops null last. */
static void print_hops(json_t *r)
{
	json_t *h = json_object_get(r, "hop_histogram"), *e, *d;
	int torus = strstr(json_string_value(json_object_get(r, "hop_histogram_method")) ?: "", "torus") != NULL;
	struct table t = { .ncols = 2 };
	size_t i;
	char b[2][32];

	if (!json_array_size(h))
		return;
	printf("\nHop counts between hosts (%s)\n", json_string_value(json_object_get(r, "hop_histogram_method")));
	row(&t, torus ? "DISTANCE" : "HOPS", "HOST PAIRS");
	json_array_foreach (h, i, e) {
		d = json_object_get(e, torus ? "distance" : "hops");
		if (json_is_null(d))
			snprintf(b[0], sizeof(b[0]), "unconnected");
		else
			num(b[0], d);
		row(&t, b[0], num(b[1], json_object_get(e, "pairs")));
	}
	table_print(&t);
}

/* The anomalies of one severity ("warning": Anomalies, "note": Notes), at most MAX_PER_KIND of each kind
 * unless all. */
static void print_anomalies(json_t *r, const char *severity, const char *title, int all)
{
	json_t *an = json_object_get(r, "anomalies"), *e, *shown = json_object();
	struct table t = { .ncols = 2 };
	size_t i, n = 0;
	const char *k;
	json_t *v;

	json_array_foreach (an, i, e) {
		const char *sev = json_string_value(json_object_get(e, "severity"));

		n += !strcmp(sev ? sev : "warning", severity);
	}
	if (!n && strcmp(severity, "warning")) {
		json_decref(shown);
		return;
	}
	printf("\n%s: %zu\n", title, n);
	if (!n) {
		json_decref(shown);
		return;
	}
	row(&t, "KIND", "DESCRIPTION");
	json_array_foreach (an, i, e) {
		const char *kind = json_string_value(json_object_get(e, "kind"));
		const char *sev = json_string_value(json_object_get(e, "severity"));
		json_int_t c = json_integer_value(json_object_get(shown, kind ? kind : "?"));

		if (strcmp(sev ? sev : "warning", severity))
			continue;
		json_object_set_new(shown, kind ? kind : "?", json_integer(c + 1));
		if (c < MAX_PER_KIND || all)
			row(&t, kind, json_string_value(json_object_get(e, "text")));
	}
	table_print(&t);
	json_object_foreach (shown, k, v)
		if (json_integer_value(v) > MAX_PER_KIND && !all)
			printf("  ... and %lld more %s (--all lists them)\n",
			       (long long)json_integer_value(v) - MAX_PER_KIND, k);
	json_decref(shown);
}

/* ---- torus order and pictures ------------------------------------------------------------------- */

/* Adds "torus_order" (method, nodes, blocks, block_extent, axes) to the report; NULL order on error. */
static order_t *torus_order(topo_cluster_t c, const struct opts *o, json_t *r, rm_error_t *err)
{
	const topo_torus_spec_t *spec = topo_torus(c);
	order_t *ord;

	if (!spec)
		return NULL;
	ord = order_build(spec, o->order ? o->order : "bbb", NULL, err);
	if (!ord) { /* the order library names its own option; here it is --order */
		snprintf(err->source, sizeof(err->source), "--order");
		return NULL;
	}
	json_object_set_new(r, "torus_order",
			    json_pack("{s:s, s:I, s:I, s:[iii], s:s#}", "method", ord->method, "nodes",
				      (json_int_t)ord->nnodes, "blocks", (json_int_t)ord->nblocks, "block_extent",
				      ord->block_ext[0], ord->block_ext[1], ord->block_ext[2], "axes",
				      (const char[]){ "xyz"[ord->axes[0]], "xyz"[ord->axes[1]], "xyz"[ord->axes[2]] },
				      (size_t)3));
	return ord;
}

/* Writes the pictures to path (a temporary file renamed): the fabric, and the torus order below. */
static int write_svg(topo_cluster_t c, const order_t *ord, const char *path, rm_error_t *err)
{
	char *extra = NULL, *tmp = NULL;
	size_t len = 0;
	FILE *m = ord ? open_memstream(&extra, &len) : NULL, *f;
	int rc = -1;

	if (m) {
		order_write(ord, ORDER_FMT_SVG, NULL, m, err);
		fclose(m);
	}
	if ((f = ctl_atomic_open(path, &tmp, err)))
		rc = ctl_atomic_commit(f, tmp, path, topo_report_svg(c, extra, f, err), err);
	free(extra);
	return rc;
}

static void print_torus_order(json_t *r)
{
	json_t *t = json_object_get(r, "torus_order"), *e;

	if (!json_is_object(t))
		return;
	e = json_object_get(t, "block_extent");
	printf("\nTorus order\n  method %s, %lld nodes in %lld blocks of %lldx%lldx%lld routers, axes %s (fastest "
	       "first)\n",
	       json_string_value(json_object_get(t, "method")),
	       (long long)json_integer_value(json_object_get(t, "nodes")),
	       (long long)json_integer_value(json_object_get(t, "blocks")),
	       (long long)json_integer_value(json_array_get(e, 0)), (long long)json_integer_value(json_array_get(e, 1)),
	       (long long)json_integer_value(json_array_get(e, 2)), json_string_value(json_object_get(t, "axes")));
}

/* Prints the report object: itself with --json, else as text. Returns the exit status. */
static int render(json_t *r, const struct opts *o)
{
	if (o->json) {
		ctl_print_json(stdout, r, 0);
	} else {
		print_hardware(r);
		print_network(r);
		print_leaves(r, o->all);
		print_link_quality(r);
		print_coverage(r);
		print_torus_order(r);
		print_hops(r);
		print_anomalies(r, "warning", "Anomalies", o->all);
		print_anomalies(r, "note", "Notes", o->all);
	}
	return ctl_close_output("report", stdout, NULL, 0);
}

/* The report, its torus order and pictures; prints the report. Returns the exit status. */
static int report(topo_cluster_t c, const struct opts *o, rm_error_t *err)
{
	json_t *r = topo_cluster_report(c);
	order_t *ord = NULL;
	int rc = 1;

	if (!r) {
		rm_error_set(err, "report", 0, 0, "out of memory");
		return 1;
	}
	if (topo_torus(c) && !(ord = torus_order(c, o, r, err)))
		goto out;
	if (o->svg && write_svg(c, ord, o->svg, err) < 0)
		goto out;
	rc = render(r, o);
out:
	order_destroy(ord);
	json_decref(r);
	return rc;
}

/* The torus order summary from the daemon's `order` answer, as torus_order() puts it in the report. */
static int remote_torus_order(const struct opts *o, json_t *r)
{
	json_t *req = rm_proto_request("order", 1), *resp, *ax, *e;
	char axes[4] = "";
	size_t i;

	json_object_set_new(req, "method", json_string(o->order ? o->order : "bbb"));
	if (!(resp = ctl_call("report", &o->d, req, CTL_DAEMON_TIMEOUT_MS)))
		return -1;
	ax = json_object_get(resp, "axes");
	json_array_foreach (ax, i, e)
		if (i < 3 && json_integer_value(e) >= 0 && json_integer_value(e) < 3)
			axes[i] = "xyz"[json_integer_value(e)];
	json_object_set_new(r, "torus_order",
			    json_pack("{s:O, s:I, s:O, s:O, s:s}", "method", json_object_get(resp, "method"), "nodes",
				      (json_int_t)json_array_size(json_object_get(resp, "order")), "blocks",
				      json_object_get(resp, "nblocks"), "block_extent",
				      json_object_get(resp, "block_ext"), "axes", axes));
	json_decref(resp);
	return 0;
}

/* The report from rankmapd: the same object, rendered the same way. Returns the exit status. */
/* Writes the daemon's picture (its answer's "svg") to path, through a temporary file. 0, or 1 after a
 * message. */
static int remote_svg(const struct opts *o, json_t *resp)
{
	json_t *svg = json_object_get(resp, "svg");
	char *tmp = NULL;
	rm_error_t err;
	FILE *f;

	rm_error_clear(&err);
	if (!json_is_string(svg)) {
		fprintf(stderr, "rankmapctl report: rankmapd at %s sent no picture (a daemon older than --svg)\n",
			ctl_daemon_name(&o->d));
		return 1;
	}
	if (!(f = ctl_atomic_open(o->svg, &tmp, &err)) ||
	    ctl_atomic_commit(
		    f, tmp, o->svg,
		    fwrite(json_string_value(svg), 1, json_string_length(svg), f) == json_string_length(svg) ? 0 : -1,
		    &err) < 0)
		return ctl_fail("report", &err, o->svg);
	return 0;
}

static int report_remote(const struct opts *o)
{
	json_t *req = rm_proto_request("report", 1), *resp, *r;
	int rc = 1;

	if (o->svg) { /* the daemon draws it: it has the model, files or registrations alike */
		json_object_set_new(req, "svg", json_true());
		if (o->order)
			json_object_set_new(req, "order", json_string(o->order));
	}
	if (!(resp = ctl_call("report", &o->d, req, CTL_DAEMON_TIMEOUT_MS)))
		return 1;
	r = json_object_get(resp, "report");
	if (o->svg && remote_svg(o, resp) != 0)
		;
	else if (!json_is_object(r))
		fprintf(stderr, "rankmapctl report: rankmapd at %s sent no cluster report\n", ctl_daemon_name(&o->d));
	else if (!json_is_object(json_object_get(r, "torus")) || remote_torus_order(o, r) == 0) {
		rc = render(r, o); /* exactly the offline form; the daemon's own status goes to stderr */
		if (rc == 0 && !o->json) {
			fprintf(stderr, "rankmapctl report: rankmapd at %s: ", ctl_daemon_name(&o->d));
			ctl_print_last_reload(stderr, json_object_get(json_object_get(resp, "daemon"), "last_reload"));
		}
	}
	json_decref(resp);
	return rc;
}

int ctl_report_main(int argc, char **argv)
{
	struct opts o;
	int rc = parse_opts(argc, argv, &o);
	topo_cluster_t c;
	rm_error_t err;

	if (rc >= 0)
		return rc;
	if (ctl_daemon_set(&o.d))
		return report_remote(&o);
	rm_error_clear(&err);
	if (!(c = topo_cluster_create())) {
		fprintf(stderr, "rankmapctl report: out of memory\n");
		return 1;
	}
	if (ctl_sources_load(c, &o.src, &err) < 0 || (rc = report(c, &o, &err)) != 0) {
		if (rm_error_isset(&err))
			ctl_fail("report", &err, NULL);
		rc = 1;
	}
	topo_cluster_destroy(c);
	return rc;
}
