/*
 * daemon/ctl/ctl_slurmtopo.c: `rankmapctl slurm-topology`: Slurm's topology.conf from InfiniBand data
 * (ibnetdiscover files, a libibnetdisc cache or live discovery), through topo/report/topo_slurm.h.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_common.h"
#include "hostlist.h"
#include "rm_client.h"
#include "rm_slurmconf.h"
#include "topo.h"
#include "topo_slurm.h"

#define MAX_IB 64

static void usage(FILE *f)
{
	fprintf(f,
		"NAME\n"
		"    rankmapctl slurm-topology - write Slurm's topology.conf, topology.yaml or node weights from\n"
		"    InfiniBand data\n\n"
		"SYNOPSIS\n"
		"    rankmapctl slurm-topology [--ib FILE]... [--ib-cache FILE] [--ib-live]\n"
		"                              [--node-name-map FILE] [--cluster FILE] [--strict] [--top NAME]\n"
		"                              [--all-leaves] [--format tree|block|yaml|weights]\n"
		"                              [--nodes HOSTLIST | --slurm-conf FILE] [--out FILE]\n"
		"    rankmapctl slurm-topology --server LIST [--top NAME] [--all-leaves] [--format FORMAT]\n"
		"                              [--nodes HOSTLIST | --slurm-conf FILE] [--out FILE]\n\n"
		"DESCRIPTION\n"
		"    Writes the switch tree of the fabric in the format of Slurm's topology/tree plugin\n"
		"    (topology.conf(5)), with the structure slurmibtopology.sh and topograph derive from the\n"
		"    same ibnetdiscover output:\n"
		"      - a leaf switch (one with hosts attached) lists its hosts:\n"
		"            SwitchName=<leaf> Nodes=node[001-036]\n"
		"      - a switch k links above the nearest leaf lists the switches one level below it\n"
		"        that it is linked to:  SwitchName=<spine> Switches=<leaf>,<leaf>,...\n"
		"    Lists are compressed Slurm host lists. Every host appears under exactly one leaf: the\n"
		"    switch of its first HCA port (dual-rail hosts are listed under their first rail), or\n"
		"    with --all-leaves under every leaf it is cabled to.\n"
		"    Switches with no host below them are left out. Switch names are short and stable: the\n"
		"    node-name map entry (characters other than letters, digits, '.', '_' and '-' replaced by\n"
		"    '_'), else ibsw<N>, N the switch's rank in GUID order among all switches of the fabric,\n"
		"    so a switch added with a higher GUID renames none (a node-name map pins names for good);\n"
		"    names that collide get _<GUID> appended. A comment line above each SwitchName gives the\n"
		"    switch's description and GUID. Leaves, then the switches of each level, come in order of\n"
		"    their names; host lists are sorted and compressed. Hosts are named by the node-name map,\n"
		"    else by the first word of their HCA description. HCAs with a generic description\n"
		"    (\"MT4129 ConnectX7 ...\") and no map entry have no host name: they are left out of\n"
		"    Nodes= (Slurm would reject them as invalid hostnames), listed by GUID in a comment, and\n"
		"    counted in one warning on standard error: give a node-name map to name them.\n\n"
		"    A dragonfly (groups of switches linked all to all, few global links between\n"
		"    groups: see rankmapctl report) is one level more: SwitchName=group<G> above the\n"
		"    routers of each group and one top switch (--top NAME, else \"dragonfly\") above the\n"
		"    groups; comments give Slurm's advice for it, TopologyParam=Dragonfly.\n\n"
		"    Several subnets (several --ib files) give one tree each. Slurm only places a job on\n"
		"    nodes under one common switch, so hosts of different trees never share a job; --top NAME\n"
		"    adds a switch NAME above the roots of all trees to allow it.\n\n"
		"    Formats (--format):\n"
		"      tree     topology.conf of topology/tree (the default), as above.\n"
		"      block    topology.conf of topology/block (Slurm 23.11 and later): one\n"
		"               BlockName=<leaf> Nodes=<hosts> line per leaf switch, the leaves in the\n"
		"               order the spines reach them (Slurm pairs neighbouring blocks into larger\n"
		"               ones), then BlockSizes=: the base block size is the smallest block's node\n"
		"               count (every block must have at least that many nodes), each next size\n"
		"               twice the one before (sizes must grow by powers of two), up to the\n"
		"               largest power of two of blocks. On a dragonfly the blocks are its\n"
		"               groups (group<G>). Where the cluster file (--cluster) names multi-node\n"
		"               NVLink domains (lines 'nvlink_domain = NAME HOSTLIST', e.g. one per\n"
		"               GB200 NVL72 rack: the hosts whose GPUs share one NVLink fabric), the\n"
		"               blocks are those domains, one each (BlockName=NAME, its hosts of the\n"
		"               fabric), in the order their first host comes in fat-tree order; hosts\n"
		"               in no domain are in no block and are named in a comment, and so are\n"
		"               domain hosts the fabric lacks. All the lines together may name at\n"
		"               most max(100000, twice the fabric's hosts) hosts (1000000 while\n"
		"               the file is read); beyond, the file and line are named.\n"
		"      yaml     topology.yaml of Slurm 25.05 and later: the tree (cluster_default), the\n"
		"               blocks and flat as three named topologies, with a partition example\n"
		"               (PartitionName=... Topology=block) in comments. Slurm 25.05 is in no\n"
		"               Debian release: the file is checked against the documented grammar.\n"
		"      weights  NodeName=<host> Weight=<n> lines for slurm.conf in fat-tree order: hosts\n"
		"               in leaf order, the leaves in the order the spines reach them (depth\n"
		"               first from the top switches, children in order of their names). Slurm\n"
		"               allocates the lowest weight first and otherwise takes nodes in the\n"
		"               order of their names, whatever topology.conf says.\n\n"
		"    Only Slurm's nodes: fabric hosts that are no Slurm node (file servers, login nodes)\n"
		"    make slurmctld log \"Invalid hostnames in switch configuration\". --nodes HOSTLIST or\n"
		"    --slurm-conf FILE (its NodeName= lines and Include files) keeps only the nodes\n"
		"    named; the others are listed in a comment, and so are named nodes the fabric lacks.\n\n"
		"OPTIONS\n"
		"    --ib FILE           ibnetdiscover output (topology file or -p ports report); one subnet\n"
		"                        per file; repeatable.\n"
		"    --ib-cache FILE     a libibnetdisc cache file (ibnetdiscover --cache).\n"
		"    --ib-live           discover the fabric now through libibnetdisc.\n"
		"    --node-name-map FILE\n"
		"                        lines '0xGUID \"name\"' naming HCAs (hosts) and switches.\n"
		"    --cluster FILE      a cluster file; its ib, ib_cache and node_name_map keys are used.\n"
		"    --strict            fail on the first hwloc file of --cluster that cannot be loaded\n"
		"                        (default: such hosts are left out).\n"
		"    --top NAME          join the trees of several subnets under a switch NAME.\n"
		"    --all-leaves        list a host with HCAs on several leaf switches (dual rail, rail-\n"
		"                        optimised fabrics) under every one of them, as slurmibtopology.sh\n"
		"                        does; Slurm accepts it and logs those nodes as multi-homed\n"
		"                        (tree only: a node is in one block).\n"
		"    --format FORMAT     tree (default), block, yaml or weights (above).\n"
		"    --nodes HOSTLIST    keep only these hosts (a Slurm host list, e.g. node[001-128]).\n"
		"    --slurm-conf FILE   keep only the nodes slurm.conf FILE defines (NodeName= lines).\n"
		"    --server LIST       ask rankmapd: the fabric of its model replaces the file options\n"
		"                        (same output); without file options rankmapd is asked: at\n"
		"                        $RANKMAP_SERVER, else $RANKMAP_SOCKET, else " RM_SOCKET_DEFAULT
		".\n"
		"    --out FILE          write there (atomically: a temporary file renamed) instead of\n"
		"                        standard output.\n" CTL_DAEMON_HELP
		"  -h, --help              this text.\n\n"
		"EXAMPLES\n"
		"    ibnetdiscover > fabric.txt\n"
		"    rankmapctl slurm-topology --ib fabric.txt --node-name-map /etc/ib-node-name-map \\\n"
		"                              --out /etc/slurm/topology.conf\n\n"
		"EXIT STATUS\n"
		"    0 success, 1 a source could not be read (the message names the file and line) or the\n"
		"    fabric has no host, 2 usage error.\n");
}

struct st_opts {
	ctl_sources_t src; /* InfiniBand sources only */
	ctl_daemon_t d;
	int all_leaves;
	const char *top, *out, *nodes, *slurm_conf, *format;
	topo_slurm_format_t fmt;
};

static int st_usage_error(const char *msg, const char *arg)
{
	return ctl_usage_error("slurm-topology", msg, arg);
}

static int st_parse(int argc, char **argv, struct st_opts *o)
{
	static const struct option lo[] = { CTL_IB_LONGOPTS,
					    { "top", required_argument, NULL, 'T' },
					    { "out", required_argument, NULL, 'o' },
					    { "all-leaves", no_argument, NULL, 'a' },
					    { "format", required_argument, NULL, 'F' },
					    { "nodes", required_argument, NULL, 'N' },
					    { "slurm-conf", required_argument, NULL, 'S' },
					    { "help", no_argument, NULL, 'h' },
					    CTL_DAEMON_LONGOPTS,
					    { NULL, 0, NULL, 0 } };
	int ch, r;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((ch = getopt_long(argc, argv, CTL_SHORTOPTS "o:", lo, NULL)) != -1) {
		if (ch == CTL_OPT_IB && o->src.nib >= MAX_IB)
			return st_usage_error("at most %s --ib options", "64");
		if ((r = ctl_sources_opt(&o->src, "slurm-topology", ch, optarg)) == 2)
			return 2;
		if (r || ctl_daemon_opt(&o->d, ch, optarg, "slurm-topology"))
			continue;
		switch (ch) {
		case 'T': o->top = optarg; break;
		case 'o': o->out = optarg; break;
		case 'a': o->all_leaves = 1; break;
		case 'F': o->format = optarg; break;
		case 'N': o->nodes = optarg; break;
		case 'S': o->slurm_conf = optarg; break;
		case 'h': usage(stdout); return 0;
		default: return ctl_usage_hint("slurm-topology");
		}
	}
	if (optind < argc)
		return st_usage_error("unexpected argument '%s'", argv[optind]);
	if (o->format && topo_slurm_format_parse(o->format, &o->fmt) < 0)
		return st_usage_error("--format '%s': use tree, block, yaml or weights", o->format);
	if (o->all_leaves && o->fmt != TOPO_SLURM_TREE)
		return st_usage_error("%s", "--all-leaves is for --format tree only (a node is in one block)");
	if (o->nodes && o->slurm_conf)
		return st_usage_error("%s", "give --nodes or --slurm-conf, not both");
	if (ctl_daemon_set(&o->d) && ctl_sources_any(&o->src))
		return st_usage_error("%s", "--server replaces --ib, --ib-cache, --ib-live and --cluster");
	if (!ctl_sources_any(&o->src))
		ctl_daemon_default(&o->d); /* no files: ask rankmapd ($RANKMAP_SERVER, ..., its default socket) */
	if (o->top) {
		char buf[256];

		if (!topo_slurm_sanitise(o->top, buf, sizeof(buf))[0] || strcmp(buf, o->top))
			return st_usage_error("--top '%s': use letters, digits, '.', '_' and '-' only", o->top);
	}
	return -1;
}

/* The text of topology.conf: from the local tree (t), or rankmapd's (text). */
static int st_emit(topo_cluster_t c, const topo_swtree_t *t, const char *text, const struct st_opts *o, FILE *f,
		   rm_error_t *err)
{
	if (t)
		return topo_slurm_write(c, t, o->fmt, o->top, f, err);
	if (fputs(text, f) < 0)
		return rm_error_set(err, "slurm-topology", 0, 0, "write error");
	return 0;
}

/* Writes to out atomically (temporary file in the same directory, renamed), or to stdout. */
static int st_write(topo_cluster_t c, const topo_swtree_t *t, const char *text, const struct st_opts *o,
		    rm_error_t *err)
{
	char *tmp;
	FILE *f;

	if (!o->out || !strcmp(o->out, "-"))
		return st_emit(c, t, text, o, stdout, err) < 0 || fflush(stdout) ? -1 : 0;
	if (!(f = ctl_atomic_open(o->out, &tmp, err)))
		return -1;
	return ctl_atomic_commit(f, tmp, o->out, st_emit(c, t, text, o, f, err), err);
}

void ctl_swtree_warnings(const char *cmd, const struct ctl_swtree_summary *w, const char *filter, int all_leaves,
			 int top)
{
	if (w->ntrees > 1 && !top)
		fprintf(stderr,
			"rankmapctl %s: warning: %zu separate switch trees (no switch reaches every "
			"host): Slurm will not place a job across them%s\n",
			cmd, w->ntrees, strcmp(cmd, "slurm-topology") ? "" : "; --top NAME joins them");
	if (w->nguid)
		fprintf(stderr,
			"rankmapctl %s: warning: %zu HCAs named only by their GUID (first: %s) are "
			"left out of Nodes= and listed in a comment; give --node-name-map to name them\n",
			cmd, w->nguid, w->first_guid ? w->first_guid : "?");
	if (w->nunplaced)
		fprintf(stderr,
			"rankmapctl %s: warning: %zu hosts hang on no switch and are not "
			"listed (first: %s)\n",
			cmd, w->nunplaced, w->first_unplaced ? w->first_unplaced : "?");
	if (w->nexcluded)
		fprintf(stderr,
			"rankmapctl %s: note: %zu fabric hosts are no Slurm node (--%s) and are "
			"listed in a comment only\n",
			cmd, w->nexcluded, filter ? filter : "nodes");
	if (w->nmissing)
		fprintf(stderr,
			"rankmapctl %s: warning: %zu Slurm nodes have no HCA in the fabric (first: %s) "
			"and are on no switch\n",
			cmd, w->nmissing, w->first_missing ? w->first_missing : "?");
	if (w->nmultihomed && !all_leaves)
		fprintf(stderr,
			"rankmapctl %s: note: %zu hosts have HCAs on several switches; each is "
			"listed under its first%s\n",
			cmd, w->nmultihomed, strcmp(cmd, "slurm-topology") ? "" : " (--all-leaves: under all)");
}

void ctl_swtree_summarise(const topo_swtree_t *t, struct ctl_swtree_summary *w)
{
	*w = (struct ctl_swtree_summary){ t->ntrees,
					  t->nguid_host,
					  t->nunplaced,
					  t->nmultihomed,
					  t->nexcluded,
					  t->nmissing,
					  t->nguid_host ? t->guid_host[0].name : NULL,
					  t->nunplaced ? t->unplaced[0] : NULL,
					  t->nmissing ? t->missing[0] : NULL };
}

static void st_warnings(const struct ctl_swtree_summary *w, const struct st_opts *o)
{
	ctl_swtree_warnings("slurm-topology", w, o->nodes ? "nodes" : "slurm-conf", o->all_leaves, o->top != NULL);
}

static size_t st_num(const json_t *resp, const char *key)
{
	return (size_t)json_integer_value(json_object_get(resp, key));
}

json_t *ctl_slurm_topology_call(const char *cmd, const ctl_daemon_t *d, const char *format, int all_leaves,
				const char *top, const char *const *keep, size_t nkeep, struct ctl_swtree_summary *w,
				const char **text)
{
	json_t *req = rm_proto_request("slurm_topology", 1), *resp;

	if (all_leaves)
		json_object_set_new(req, "all_leaves", json_true());
	if (top)
		json_object_set_new(req, "top", json_string(top));
	if (format)
		json_object_set_new(req, "format", json_string(format));
	if (keep) {
		char *l = hostlist_compress(keep, nkeep);

		json_object_set_new(req, "nodes", json_string(l ? l : ""));
		free(l);
	}
	if (!(resp = ctl_call(cmd, d, req, CTL_DAEMON_TIMEOUT_MS)))
		return NULL;
	*w = (struct ctl_swtree_summary){ st_num(resp, "trees"),
					  st_num(resp, "guid_hcas"),
					  st_num(resp, "unplaced"),
					  st_num(resp, "multihomed"),
					  st_num(resp, "excluded"),
					  st_num(resp, "missing"),
					  json_string_value(json_object_get(resp, "first_guid_hca")),
					  json_string_value(json_object_get(resp, "first_unplaced")),
					  json_string_value(json_object_get(resp, "first_missing")) };
	if (!(*text = json_string_value(json_object_get(resp, "topology_conf")))) {
		fprintf(stderr, "rankmapctl %s: rankmapd at %s sent no topology.conf\n", cmd, ctl_daemon_name(d));
		json_decref(resp);
		return NULL;
	}
	return resp;
}

/* slurm-topology through rankmapd: the same text from its model's fabric. Returns the exit status. */
static int st_remote(const struct st_opts *o, const char *const *keep, size_t nkeep)
{
	struct ctl_swtree_summary w;
	rm_error_t err = { 0 };
	const char *text;
	json_t *resp = ctl_slurm_topology_call("slurm-topology", &o->d, o->format, o->all_leaves, o->top, keep, nkeep,
					       &w, &text);
	int rc = 1;

	if (!resp)
		return 1;
	if (st_write(NULL, NULL, text, o, &err) < 0)
		ctl_fail("slurm-topology", &err, "slurm-topology");
	else
		st_warnings(&w, o), rc = 0;
	json_decref(resp);
	return rc;
}

char **ctl_keep_nodes(const char *cmd, const char *nodes, const char *slurm_conf, size_t *n, int *bad)
{
	rm_error_t err = { 0 };
	char **keep = NULL;

	*n = 0, *bad = 0;
	if (nodes)
		keep = hostlist_expand(nodes, n, 0, &err);
	else if (slurm_conf)
		keep = rm_slurm_conf_nodes(slurm_conf, n, &err);
	else
		return NULL;
	if (!keep) {
		char msg[600];

		*bad = 1;
		fprintf(stderr, "rankmapctl %s: %s%s\n", cmd, nodes ? "--nodes: " : "",
			rm_error_format(&err, msg, sizeof(msg)));
	}
	return keep;
}

int ctl_slurm_topology_main(int argc, char **argv)
{
	struct st_opts o;
	topo_cluster_t c;
	topo_swtree_t *t = NULL;
	rm_error_t err;
	char **keep;
	size_t nkeep;
	int bad, rc = st_parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	keep = ctl_keep_nodes("slurm-topology", o.nodes, o.slurm_conf, &nkeep, &bad);
	if (bad)
		return 1;
	if (ctl_daemon_set(&o.d)) {
		rc = st_remote(&o, (const char *const *)keep, nkeep);
		hostlist_free(keep);
		return rc;
	}
	rm_error_clear(&err);
	if (!(c = topo_cluster_create())) {
		fprintf(stderr, "rankmapctl slurm-topology: out of memory\n");
		hostlist_free(keep);
		return 1;
	}
	rc = 1;
	if (ctl_sources_load(c, &o.src, &err) == 0 &&
	    (t = topo_swtree_build_keep(c, (o.all_leaves ? TOPO_SWTREE_ALL_LEAVES : 0) | TOPO_SWTREE_NAMED_ONLY,
					(const char *const *)keep, nkeep, &err)) &&
	    st_write(c, t, NULL, &o, &err) == 0) {
		struct ctl_swtree_summary w;

		ctl_swtree_summarise(t, &w);
		st_warnings(&w, &o);
		rc = 0;
	} else {
		ctl_fail("slurm-topology", &err, "slurm-topology");
	}
	topo_swtree_destroy(t);
	topo_cluster_destroy(c);
	hostlist_free(keep);
	return rc;
}
