/*
 * daemon/ctl_slurmtopo.c: `rankmapctl slurm-topology`: Slurm's topology.conf from InfiniBand data
 * (ibnetdiscover files, a libibnetdisc cache or live discovery), through topo/topo_slurm.h.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
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
		"    Switches with no host below them are left out. Switch names are the node-name map entry,\n"
		"    else the switch's description, with characters other than letters, digits, '.', '_' and\n"
		"    '-' replaced by '_'; names that collide get _<GUID> appended. Hosts are named by the\n"
		"    node-name map, else by the first word of their HCA description; HCAs with a generic\n"
		"    description (\"MT4129 ConnectX7 ...\") keep their GUID as name (0x...) and are counted in\n"
		"    the header and on standard error: give a node-name map to name them.\n\n"
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
	const char *ib[MAX_IB];
	int nib, live, all_leaves;
	const char *cache, *map, *cluster, *top, *out;
};

static int st_usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "rankmapctl slurm-topology: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nTry 'rankmapctl slurm-topology --help'.\n");
	return 2;
}

static int st_parse(int argc, char **argv, struct st_opts *o)
{
	static const struct option lo[] = {
		{ "ib", required_argument, NULL, 'i' },       { "ib-cache", required_argument, NULL, 'c' },
		{ "ib-live", no_argument, NULL, 'l' },        { "node-name-map", required_argument, NULL, 'm' },
		{ "cluster", required_argument, NULL, 'C' },  { "top", required_argument, NULL, 't' },
		{ "out", required_argument, NULL, 'o' },      { "all-leaves", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "ho:", lo, NULL)) != -1) {
		switch (ch) {
		case 'i':
			if (o->nib >= MAX_IB)
				return st_usage_error("at most %s --ib options", "64");
			o->ib[o->nib++] = optarg;
			break;
		case 'c': o->cache = optarg; break;
		case 'l': o->live = 1; break;
		case 'm': o->map = optarg; break;
		case 'C': o->cluster = optarg; break;
		case 't': o->top = optarg; break;
		case 'o': o->out = optarg; break;
		case 'a': o->all_leaves = 1; break;
		case 'h': usage(stdout); return 0;
		default: return st_usage_error("%s", "invalid option");
		}
	}
	if (optind < argc)
		return st_usage_error("unexpected argument '%s'", argv[optind]);
	if (!o->nib && !o->cache && !o->live && !o->cluster)
		return st_usage_error("%s", "no fabric: give --ib, --ib-cache, --ib-live or --cluster");
	if (o->top) {
		char buf[256];

		if (!topo_slurm_sanitise(o->top, buf, sizeof(buf))[0] || strcmp(buf, o->top))
			return st_usage_error("--top '%s': use letters, digits, '.', '_' and '-' only", o->top);
	}
	return -1;
}

static int st_load(topo_cluster_t c, const struct st_opts *o, rm_error_t *err)
{
	int i;

	if (o->cluster && topo_load_cluster_file(c, o->cluster, err) < 0)
		return -1;
	if (o->map && topo_load_node_name_map(c, o->map, err) < 0)
		return -1;
	for (i = 0; i < o->nib; i++)
		if (topo_load_ib_file(c, o->ib[i], err) < 0)
			return -1;
	if (o->cache && topo_load_ib_cache(c, o->cache, err) < 0)
		return -1;
	if (o->live && topo_load_ib_live(c, NULL, 0, err) < 0)
		return -1;
	return topo_cluster_finalize(c, err);
}

/* Writes to out atomically (temporary file in the same directory, renamed), or to stdout. */
static int st_write(topo_cluster_t c, const topo_swtree_t *t, const struct st_opts *o, rm_error_t *err)
{
	char *tmp;
	FILE *f;
	int rc;

	if (!o->out || !strcmp(o->out, "-"))
		return topo_slurm_topology_write(c, t, o->top, stdout, err) < 0 || fflush(stdout) ? -1 : 0;
	tmp = malloc(strlen(o->out) + 16);
	if (!tmp)
		return -1;
	sprintf(tmp, "%s.tmp.%ld", o->out, (long)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		rm_error_set(err, o->out, 0, 0, "cannot write: %m");
		free(tmp);
		return -1;
	}
	rc = topo_slurm_topology_write(c, t, o->top, f, err);
	if (fclose(f) != 0 || rc < 0 || rename(tmp, o->out) < 0) {
		rm_error_set(err, o->out, 0, 0, "cannot write: %m");
		unlink(tmp);
		rc = -1;
	}
	free(tmp);
	return rc;
}

static void st_warnings(const topo_swtree_t *t, const char *top)
{
	if (t->ntrees > 1 && !top)
		fprintf(stderr, "rankmapctl slurm-topology: warning: %zu separate switch trees (no switch reaches every "
				"host): Slurm will not place a job across them; --top NAME joins them\n", t->ntrees);
	if (t->nguid_named)
		fprintf(stderr, "rankmapctl slurm-topology: warning: %zu hosts named by HCA GUID (generic HCA "
				"description); give --node-name-map to name them\n", t->nguid_named);
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
	char buf[RM_ERROR_SOURCE_LEN + RM_ERROR_TEXT_LEN + 32];
	int rc = st_parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	rm_error_clear(&err);
	if (!(c = topo_cluster_create())) {
		fprintf(stderr, "rankmapctl slurm-topology: out of memory\n");
		return 1;
	}
	rc = 1;
	if (st_load(c, &o, &err) == 0 && (t = topo_swtree_build(c, o.all_leaves, &err)) && st_write(c, t, &o, &err) == 0) {
		st_warnings(t, o.top);
		rc = 0;
	} else {
		fprintf(stderr, "rankmapctl slurm-topology: %s\n", rm_error_format(&err, buf, sizeof(buf)));
	}
	topo_swtree_destroy(t);
	topo_cluster_destroy(c);
	return rc;
}
