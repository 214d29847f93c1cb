/*
 * daemon/ctl/ctl_slurmtopo.c: `rankmapctl slurm-topology`: Slurm's topology.conf from InfiniBand data
 * (ibnetdiscover files, a libibnetdisc cache or live discovery), through topo/topo_slurm.h.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_common.h"
#include "topo.h"
#include "topo_slurm.h"

#define MAX_IB 64

static void usage(FILE *f)
{
	fprintf(f,
		"NAME\n"
		"    rankmapctl slurm-topology - write Slurm's topology.conf from InfiniBand data\n\n"
		"SYNOPSIS\n"
		"    rankmapctl slurm-topology [--ib FILE]... [--ib-cache FILE] [--ib-live]\n"
		"                              [--node-name-map FILE] [--cluster FILE] [--top NAME]\n"
		"                              [--all-leaves] [--out FILE]\n\n"
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
		"    Several subnets (several --ib files) give one tree each. Slurm only places a job on\n"
		"    nodes under one common switch, so hosts of different trees never share a job; --top NAME\n"
		"    adds a switch NAME above the roots of all trees to allow it.\n\n"
		"OPTIONS\n"
		"    --ib FILE           ibnetdiscover output (topology file or -p ports report); one subnet\n"
		"                        per file; repeatable.\n"
		"    --ib-cache FILE     a libibnetdisc cache file (ibnetdiscover --cache).\n"
		"    --ib-live           discover the fabric now through libibnetdisc.\n"
		"    --node-name-map FILE\n"
		"                        lines '0xGUID \"name\"' naming HCAs (hosts) and switches.\n"
		"    --cluster FILE      a cluster file; its ib, ib_cache and node_name_map keys are used.\n"
		"    --top NAME          join the trees of several subnets under a switch NAME.\n"
		"    --all-leaves        list a host with HCAs on several leaf switches (dual rail, rail-\n"
		"                        optimised fabrics) under every one of them, as slurmibtopology.sh\n"
		"                        does; Slurm accepts it and logs those nodes as multi-homed.\n"
		"    --out FILE          write there (atomically: a temporary file renamed) instead of\n"
		"                        standard output.\n"
		"    -h, --help          this text.\n\n"
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
	int all_leaves;
	const char *top, *out;
};

static int st_usage_error(const char *msg, const char *arg)
{
	return ctl_usage_error("slurm-topology", msg, arg);
}

static int st_parse(int argc, char **argv, struct st_opts *o)
{
	static const struct option lo[] = {
		CTL_IB_LONGOPTS,                              { "top", required_argument, NULL, 't' },
		{ "out", required_argument, NULL, 'o' },      { "all-leaves", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int ch, r;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "ho:", lo, NULL)) != -1) {
		if (ch == CTL_OPT_IB && o->src.nib >= MAX_IB)
			return st_usage_error("at most %s --ib options", "64");
		if ((r = ctl_sources_opt(&o->src, "slurm-topology", ch, optarg)) == 2)
			return 2;
		if (r)
			continue;
		switch (ch) {
		case 't': o->top = optarg; break;
		case 'o': o->out = optarg; break;
		case 'a': o->all_leaves = 1; break;
		case 'h': usage(stdout); return 0;
		default: return st_usage_error("%s", "invalid option");
		}
	}
	if (optind < argc)
		return st_usage_error("unexpected argument '%s'", argv[optind]);
	if (!ctl_sources_any(&o->src))
		return st_usage_error("%s", "no fabric: give --ib, --ib-cache, --ib-live or --cluster");
	if (o->top) {
		char buf[256];

		if (!topo_slurm_sanitise(o->top, buf, sizeof(buf))[0] || strcmp(buf, o->top))
			return st_usage_error("--top '%s': use letters, digits, '.', '_' and '-' only", o->top);
	}
	return -1;
}

/* Writes to out atomically (temporary file in the same directory, renamed), or to stdout. */
static int st_write(topo_cluster_t c, const topo_swtree_t *t, const struct st_opts *o, rm_error_t *err)
{
	char *tmp;
	FILE *f;

	if (!o->out || !strcmp(o->out, "-"))
		return topo_slurm_topology_write(c, t, o->top, stdout, err) < 0 || fflush(stdout) ? -1 : 0;
	if (!(f = ctl_atomic_open(o->out, &tmp, err)))
		return -1;
	return ctl_atomic_commit(f, tmp, o->out, topo_slurm_topology_write(c, t, o->top, f, err), err);
}

static void st_warnings(const topo_swtree_t *t, const char *top)
{
	if (t->ntrees > 1 && !top)
		fprintf(stderr, "rankmapctl slurm-topology: warning: %zu separate switch trees (no switch reaches every "
				"host): Slurm will not place a job across them; --top NAME joins them\n", t->ntrees);
	if (t->nguid_host)
		fprintf(stderr, "rankmapctl slurm-topology: warning: %zu HCAs named only by their GUID (first: %s) are "
				"left out of Nodes= and listed in a comment; give --node-name-map to name them\n",
			t->nguid_host, t->guid_host[0].name);
	if (t->nunplaced)
		fprintf(stderr, "rankmapctl slurm-topology: warning: %zu hosts hang on no switch and are not "
				"listed (first: %s)\n", t->nunplaced, t->unplaced[0]);
	if (t->nmultihomed && !t->all_leaves)
		fprintf(stderr, "rankmapctl slurm-topology: note: %zu hosts have HCAs on several switches; each is "
				"listed under its first (--all-leaves: under all)\n", t->nmultihomed);
}

int ctl_slurm_topology_main(int argc, char **argv)
{
	struct st_opts o;
	topo_cluster_t c;
	topo_swtree_t *t = NULL;
	rm_error_t err;
	int rc = st_parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	rm_error_clear(&err);
	if (!(c = topo_cluster_create())) {
		fprintf(stderr, "rankmapctl slurm-topology: out of memory\n");
		return 1;
	}
	rc = 1;
	if (ctl_sources_load(c, &o.src, &err) == 0 && (t = topo_swtree_build(c, (o.all_leaves ? TOPO_SWTREE_ALL_LEAVES : 0) | TOPO_SWTREE_NAMED_ONLY, &err)) && st_write(c, t, &o, &err) == 0) {
		st_warnings(t, o.top);
		rc = 0;
	} else {
		ctl_fail("slurm-topology", &err, "slurm-topology");
	}
	topo_swtree_destroy(t);
	topo_cluster_destroy(c);
	return rc;
}
