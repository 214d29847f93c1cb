/*
 * rankmapctl: the command-line client of rankmap, for users and admins.
 * Dispatches to one subcommand per file (daemon/ctl/ctl_*.c, see ctl.h).
 */
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "rm_client.h"
#include "rm_file.h"

struct subcommand {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "report", ctl_report_main, "summarise a cluster: hardware, fabric, hop counts, anomalies" },
	{ "map", ctl_map_main, "map a communication pattern onto slots (TreeMatch, Scotch, ...)" },
	{ "order", ctl_order_main, "compute a torus (MDF, Gray, Hilbert, BBB) or fat-tree node ordering for Slurm" },
	{ "simulate", ctl_simulate_main, "simulate allocation from a free list to compare orderings" },
	{ "slurm-topology", ctl_slurm_topology_main, "write Slurm topology.conf from InfiniBand data" },
	{ "slurm-gres", ctl_slurm_gres_main, "write Slurm gres.conf lines for the GPUs of hwloc data" },
	{ "explain", ctl_explain_main, "show where a job's traffic flows, before and after reordering" },
	{ "patterns", ctl_patterns_main, "list, show or forget the communication patterns learned by MPI jobs" },
	{ "distance", ctl_distance_main, "distance between hosts or slots" },
	{ "ping", ctl_ping_main, "check that rankmapd answers" },
	{ "register", ctl_register_main, "send this node's hwloc topology to rankmapd" },
	{ "reload", ctl_reload_main, "ask rankmapd to reload its sources" },
};

#define NSUB (sizeof(subcommands) / sizeof(subcommands[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"Usage: rankmapctl COMMAND [OPTIONS]...\n"
		"       rankmapctl help COMMAND   (or rankmapctl COMMAND --help)\n"
		"       rankmapctl -V | --version\n\n"
		"Topology-aware placement and MPI rank reordering for HPC clusters.\n\n"
		"Commands:\n");
	for (i = 0; i < NSUB; i++)
		fprintf(f, "  %-16s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(f,
		"\nMost commands work offline on files, or through rankmapd: without files they ask it, at\n"
		"-s/--server HOST:PORT[,HOST:PORT...] (TCP, authenticated with MUNGE) or /PATH (a Unix socket;\n"
		"--socket is the old name of the same option), else $RANKMAP_SERVER, else $RANKMAP_SOCKET, else\n"
		"the default socket " RM_SOCKET_DEFAULT
		".\n"
		"Options every command takes: -s/--server, --server-uid, -t/--timeout MS, --progress,\n"
		"-V/--version, -h/--help, and -j/--json where it prints JSON.\n"
		"Errors start 'rankmapctl COMMAND:'. Exit status: 0 success, 1 error, 2 usage error.\n\n"
		"Environment: RANKMAP_SERVER (the daemon's servers), RANKMAP_SOCKET (its socket),\n"
		"RANKMAP_MUNGE_SOCKET (munged's socket), RANKMAP_CLUSTER (report's cluster\n"
		"file). Input files must be regular files (a FIFO or a device is refused at once) within\n"
		"a size cap per kind, in bytes or with a K, M or G suffix:\n");
	rm_file_print_limits(f, "  ");
}

/* Runs subcommand sub with argv[0] = "rankmapctl NAME", so that getopt's own messages ("unrecognized
 * option") carry the same prefix as every other error. */
static int run(const struct subcommand *sub, int argc, char **argv)
{
	char prog[64];

	snprintf(prog, sizeof(prog), "rankmapctl %s", sub->name);
	argv[0] = prog;
	return sub->main(argc, argv);
}

static const struct subcommand *find(const char *name)
{
	size_t i;

	for (i = 0; i < NSUB; i++)
		if (!strcmp(name, subcommands[i].name))
			return &subcommands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct subcommand *sub;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help") && argc > 2) { /* rankmapctl help CMD: CMD --help */
		char help[] = "--help", *hargv[3] = { argv[2], help, NULL };

		if (argc > 3 || !(sub = find(argv[2]))) {
			fprintf(stderr, "rankmapctl help: unknown command '%s' (try 'rankmapctl --help')\n", argv[2]);
			return 2;
		}
		return run(sub, 2, hargv);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("rankmapctl %s\n", RANKMAP_VERSION);
		return 0;
	}
	if ((sub = find(argv[1])))
		return run(sub, argc - 1, argv + 1);
	fprintf(stderr, "rankmapctl: unknown command '%s' (try 'rankmapctl --help')\n", argv[1]);
	return 2;
}
