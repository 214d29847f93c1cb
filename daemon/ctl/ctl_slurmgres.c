/*
 * daemon/ctl/ctl_slurmgres.c: `rankmapctl slurm-gres`: Slurm's gres.conf lines for the GPUs of hwloc
 * XML files, from the GPU model (topo/topo_gpu.h), through topo/report/topo_gres.h.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_common.h"
#include "hostlist.h"
#include "topo.h"
#include "topo_gres.h"

static void usage(FILE *f)
{
	fprintf(f,
		"NAME\n"
		"    rankmapctl slurm-gres - write Slurm's gres.conf lines for the GPUs of hwloc data\n\n"
		"SYNOPSIS\n"
		"    rankmapctl slurm-gres --hwloc SPEC... | --cluster FILE [--hosts LIST] [--type NAME]\n"
		"                          [--dev-root DIR] [--strict] [--out FILE]\n\n"
		"DESCRIPTION\n"
		"    Writes one gres.conf(5) line per GPU of each host, for Slurm 22.05 and later:\n"
		"        NodeName=<hosts> Name=gpu Type=<type> File=<device> Cores=<cores> Links=<counts>\n"
		"    GPUs are the hosts' GPUs as rankmapctl report counts them (one per PCI device across the\n"
		"    CUDA, NVML, RSMI, LevelZero and OpenCL devices hwloc recorded), in PCI bus id order, which\n"
		"    is how Slurm numbers a node's GPUs (gres.conf(5), Links).\n"
		"      Type    the GPU model (hwloc's GPUModel) in lower case, other characters than letters,\n"
		"              digits, '.' and '-' made '_', as Slurm's AutoDetect names it\n"
		"              (\"nvidia_h100_80gb_hbm3\"); --type replaces it.\n"
		"      File    the DRM render node hwloc recorded for the GPU when there is one, else\n"
		"              /dev/nvidia<k> for NVIDIA GPUs (k: the GPU's rank among the node's NVIDIA GPUs,\n"
		"              NVML's index, the device minor number on usual installs) and\n"
		"              /dev/dri/renderD<128+k> for AMD and Intel GPUs. hwloc does not record device\n"
		"              minor numbers: check them (nvidia-smi -q, /sys/class/drm) or use Slurm's\n"
		"              AutoDetect=nvml|rsmi|oneapi where the node has the library.\n"
		"      Cores   the logical core numbers (lstopo's Core L#, as Slurm counts cores) of the NUMA\n"
		"              node(s) the GPU is attached to.\n"
		"      Links   for each GPU of the node in order: -1 for the GPU itself, 0 without a direct\n"
		"              link, else the link's bandwidth in units of the node's narrowest link (NVLink,\n"
		"              xGMI, XeLink from hwloc's matrices or the cluster file's gpu_links site file:\n"
		"              an MI250X's quad, dual and single xGMI links give 4, 2 and 1). Left out on\n"
		"              nodes without link data.\n"
		"    Hosts with the same lines share them (NodeName= a compressed host list); a comment line\n"
		"    before each group gives the model and the Gres= that slurm.conf's NodeName needs.\n\n"
		"OPTIONS\n"
		"    --hwloc SPEC        an hwloc XML file, a directory of <host>.xml, or live (this host);\n"
		"                        repeatable.\n"
		"    --cluster FILE      a cluster file: its hwloc sources and its gpu_links site file.\n"
		"    --strict            fail on the first hwloc file that cannot be loaded (default: such\n"
		"                        hosts are left out, with a warning from the loader).\n"
		"    --hosts LIST        only these hosts (a Slurm host list, node[01-16]); each must have\n"
		"                        hardware data.\n"
		"    --type NAME         Type= for every GPU (letters, digits, '.', '_', '-').\n"
		"    --dev-root DIR      put DIR (absolute) before every File= path (a test root, a chroot).\n"
		"    --out FILE          write there (atomically) instead of standard output.\n"
		"  -V, --version           print rankmapctl's version and exit\n"
		"  -h, --help              this text.\n\n"
		"EXAMPLES\n"
		"    rankmapctl slurm-gres --hwloc /var/lib/hwloc --out /etc/slurm/gres.conf\n"
		"    rankmapctl slurm-gres --hwloc live --hosts $(hostname -s)\n\n"
		"EXIT STATUS\n"
		"    0 success, 1 a source could not be read (the message names the file and line), a named\n"
		"    host is unknown, or no host has a GPU; 2 usage error.\n");
}

struct sg_opts {
	ctl_sources_t src;
	ctl_daemon_t d;
	const char *out, *hosts, *type, *dev_root;
};

static int sg_usage_error(const char *msg, const char *arg)
{
	return ctl_usage_error("slurm-gres", msg, arg);
}

static int name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
		      *s == '_' || *s == '-'))
			return 0;
	return 1;
}

static int sg_parse(int argc, char **argv, struct sg_opts *o)
{
	enum { O_HOSTS = 0x300, O_TYPE, O_ROOT };
	static const struct option lo[] = { CTL_SOURCE_LONGOPTS,
					    { "hosts", required_argument, NULL, O_HOSTS },
					    { "type", required_argument, NULL, O_TYPE },
					    { "dev-root", required_argument, NULL, O_ROOT },
					    { "out", required_argument, NULL, 'o' },
					    { "help", no_argument, NULL, 'h' },
					    CTL_DAEMON_LONGOPTS,
					    { NULL, 0, NULL, 0 } };
	int ch, r;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((ch = getopt_long(argc, argv, CTL_SHORTOPTS "o:", lo, NULL)) != -1) {
		if ((r = ctl_sources_opt(&o->src, "slurm-gres", ch, optarg)) == 2)
			return 2;
		if (r || ctl_daemon_opt(&o->d, ch, optarg, "slurm-gres"))
			continue;
		switch (ch) {
		case O_HOSTS: o->hosts = optarg; break;
		case O_TYPE: o->type = optarg; break;
		case O_ROOT: o->dev_root = optarg; break;
		case 'o': o->out = optarg; break;
		case 'h': usage(stdout); return 0;
		default: return ctl_usage_hint("slurm-gres");
		}
	}
	if (optind < argc)
		return sg_usage_error("unexpected argument '%s'", argv[optind]);
	if (ctl_daemon_set(&o->d))
		return sg_usage_error("%s", "rankmapd is not asked: give --hwloc or --cluster");
	if (!o->src.nhwloc && !o->src.cluster)
		return sg_usage_error("%s", "give --hwloc SPEC or --cluster FILE");
	if (o->type && !name_ok(o->type))
		return sg_usage_error("--type '%s': use letters, digits, '.', '_' and '-' only", o->type);
	if (o->dev_root && (o->dev_root[0] != '/' || strpbrk(o->dev_root, " \t\n,")))
		return sg_usage_error("--dev-root '%s': an absolute path without blanks or commas", o->dev_root);
	return -1;
}

static int sg_emit(topo_cluster_t c, const topo_gres_opts_t *go, FILE *f, long *lines, rm_error_t *err)
{
	*lines = topo_slurm_gres_write(c, go, f, err);
	return *lines < 0 ? -1 : 0;
}

int ctl_slurm_gres_main(int argc, char **argv)
{
	struct sg_opts o;
	topo_gres_opts_t go = { 0 };
	topo_cluster_t c = NULL;
	char **hosts = NULL, *tmp;
	size_t nhosts = 0;
	long lines = 0;
	rm_error_t err = { 0 };
	FILE *f;
	int rc = sg_parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (o.hosts && !(hosts = hostlist_expand(o.hosts, &nhosts, 1000000, &err)))
		return ctl_usage_error("slurm-gres", "--hosts: %s", err.text);
	go = (topo_gres_opts_t){
		.dev_root = o.dev_root, .type = o.type, .hosts = (const char *const *)hosts, .nhosts = nhosts
	};
	rc = 1;
	if (!(c = topo_cluster_create()))
		fprintf(stderr, "rankmapctl slurm-gres: out of memory\n");
	else if (ctl_sources_load(c, &o.src, &err) != 0)
		ctl_fail("slurm-gres", &err, "slurm-gres");
	else if (!o.out || !strcmp(o.out, "-")) {
		if (sg_emit(c, &go, stdout, &lines, &err) < 0 || fflush(stdout))
			ctl_fail("slurm-gres", &err, "standard output");
		else
			rc = 0;
	} else if ((f = ctl_atomic_open(o.out, &tmp, &err))) {
		int erc = sg_emit(c, &go, f, &lines, &err);

		if (ctl_atomic_commit(f, tmp, o.out, erc, &err) < 0)
			ctl_fail("slurm-gres", &err, o.out);
		else
			rc = 0;
	} else {
		ctl_fail("slurm-gres", &err, o.out);
	}
	if (rc == 0 && lines == 0) {
		fprintf(stderr,
			"rankmapctl slurm-gres: no host has a GPU in its hwloc data (GPUs are PCI devices "
			"with CUDA, NVML, RSMI, LevelZero or OpenCL OS devices: export with I/O devices, "
			"lstopo --whole-io)\n");
		rc = 1;
	}
	hostlist_free(hosts);
	topo_cluster_destroy(c);
	return rc;
}
