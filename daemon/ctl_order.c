/*
 * daemon/ctl_order.c: `rankmapctl order`, a torus node ordering (xyz, mdf, gray, hilbert, bbb) for
 * Slurm's free list, as a node list, a host list, node weights, a topology.conf or an SVG picture.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "order.h"

static void order_usage(FILE *f)
{
	fprintf(f,
		"NAME\n"
		"    rankmapctl order - compute a 3D torus node ordering for allocation\n\n"
		"SYNOPSIS\n"
		"    rankmapctl order (--torus FILE | --dims XxYxZ[:NODES_PER_ROUTER]) [--link-cost CX,CY,CZ]\n"
		"                     [--mesh] [--method METHOD] [--axes AXES] [--format FORMAT]\n"
		"                     [--host-pattern PATTERN] [--output FILE]\n\n"
		"DESCRIPTION\n"
		"    A scheduler that allocates nodes from a free list in a fixed order places jobs as\n"
		"    compactly as that order is (Albing et al., EuroMPI 2011). This prints such an order.\n"
		"    Nodes are (x, y, z, n): router coordinates and node index in the router; the nodes\n"
		"    of a router always come together.\n\n"
		"OPTIONS\n"
		"    --torus FILE        torus config (see conf/torus.conf.example): dims, wrap, link costs,\n"
		"                        nodes per router, host names by table or pattern\n"
		"    --dims XxYxZ[:N]    torus of X by Y by Z routers with N nodes each (default 1)\n"
		"    --link-cost CX,CY,CZ  cost of one hop along x, y, z (default 1,1,1; overrides the file)\n"
		"    --mesh              no wrap-around links\n"
		"    --method METHOD     xyz     node-id order\n"
		"                        mdf     minimum dimension first, snaking\n"
		"                        gray[:AxBxC]    blocks (default 2x2x2) in Gray-code order,\n"
		"                                        contiguous from block to block\n"
		"                        hilbert generalised 3D Hilbert curve (any extents)\n"
		"                        bbb[:AxBxC]     basic building blocks (default; extents from the\n"
		"                                        link costs: slow dimensions short, fast ones long)\n"
		"    --axes AXES         block and traversal axis order, fastest first, e.g. zyx (default:\n"
		"                        fastest link first; mdf: shortest dimension first)\n"
		"    --format FORMAT     list           one node per line: \"x y z n\", or its host name\n"
		"                                       when the config or --host-pattern names hosts\n"
		"                        slurm-nodes    the host names in order, as one Slurm host list\n"
		"                        weights        NodeName=... Weight=... (lowest weight first)\n"
		"                        topology.conf  Slurm topology.conf: a leaf switch per block,\n"
		"                                       blocks grouped upward\n"
		"                        svg            picture: the path through each z-slice, blocks\n"
		"                                       shaded\n"
		"    --host-pattern P    names nodes: {x} {y} {z} {n} {id} {router}, \":W\" zero-pads\n"
		"                        (default for names when the config has none: nid{id:5})\n"
		"    --output FILE       write there instead of standard output\n"
		"    -h, --help          this text\n\n"
		"EXAMPLES\n"
		"    rankmapctl order --dims 17x8x24:2 --link-cost 1,2,0.67 --method bbb --format weights\n"
		"    rankmapctl order --torus /etc/rankmap/torus.conf --format topology.conf\n"
		"    rankmapctl order --dims 8x4x8 --method gray:3x2x2 --format svg --output order.svg\n\n"
		"EXIT STATUS\n"
		"    0 success, 1 bad input (config file, block extents that do not fit), 2 usage error\n");
}

static int method_ok(const char *m);

struct order_args {
	const char *torus, *dims, *cost, *method, *axes, *format, *pattern, *output;
	int mesh;
};

/* Parses the options; returns -1 on success, else the exit status. */
static int order_parse(int argc, char **argv, struct order_args *a)
{
	static const struct option opts[] = {
		{ "torus", required_argument, NULL, 't' },    { "dims", required_argument, NULL, 'd' },
		{ "link-cost", required_argument, NULL, 'c' }, { "mesh", no_argument, NULL, 'M' },
		{ "method", required_argument, NULL, 'm' },   { "axes", required_argument, NULL, 'a' },
		{ "format", required_argument, NULL, 'f' },   { "host-pattern", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },   { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->method = "bbb";
	a->format = "list";
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 't': a->torus = optarg; break;
		case 'd': a->dims = optarg; break;
		case 'c': a->cost = optarg; break;
		case 'M': a->mesh = 1; break;
		case 'm': a->method = optarg; break;
		case 'a': a->axes = optarg; break;
		case 'f': a->format = optarg; break;
		case 'p': a->pattern = optarg; break;
		case 'o': a->output = optarg; break;
		case 'h': order_usage(stdout); return 0;
		default:
			fprintf(stderr, "Try 'rankmapctl order --help'.\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rankmapctl order: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!a->torus == !a->dims) {
		fprintf(stderr, "rankmapctl order: give exactly one of --torus FILE and --dims XxYxZ\n");
		return 2;
	}
	if (!method_ok(a->method)) {
		fprintf(stderr, "rankmapctl order: unknown method '%s' (xyz, mdf, gray[:AxBxC], hilbert, "
				"bbb[:AxBxC])\n", a->method);
		return 2;
	}
	return -1;
}

/* True when METHOD names a known ordering with well-formed block extents (a usage question). */
static int method_ok(const char *m)
{
	const char *const *n = order_method_names();
	size_t len = strcspn(m, ":");
	int x, y, z, k = 0;

	for (; *n; n++)
		if (strlen(*n) == len && !strncmp(*n, m, len))
			break;
	if (!*n)
		return 0;
	return !m[len] || (sscanf(m + len + 1, "%dx%dx%d%n", &x, &y, &z, &k) == 3 && !m[len + 1 + k]);
}

static int order_fail(const rm_error_t *err)
{
	char buf[600];

	fprintf(stderr, "rankmapctl order: %s\n", rm_error_format(err, buf, sizeof(buf)));
	return 1;
}

int ctl_order_main(int argc, char **argv)
{
	struct order_args a;
	order_opts_t opts;
	order_torus_t t;
	order_format_t fmt;
	order_names_t names = { NULL, NULL };
	order_t *o;
	rm_error_t err;
	FILE *out = stdout;
	int rc = order_parse(argc, argv, &a);

	if (rc >= 0)
		return rc;
	rm_error_clear(&err);
	order_opts_default(&opts);
	if (order_format_parse(a.format, &fmt) < 0) {
		fprintf(stderr, "rankmapctl order: unknown format '%s' (list, slurm-nodes, weights, "
				"topology.conf, svg)\n", a.format);
		return 2;
	}
	if (a.axes && order_parse_axes(a.axes, opts.axes, &err) < 0) {
		order_fail(&err);
		return 2;
	}
	if (order_torus_setup(a.torus, a.dims, a.cost, a.mesh, &t, &err) < 0)
		return order_fail(&err);
	o = order_build(&t.spec, a.method, &opts, &err);
	if (!o) {
		order_torus_free(&t);
		return order_fail(&err);
	}
	names.names = (const char *const *)t.names;
	names.pattern = a.pattern;
	if (a.output && !(out = fopen(a.output, "w"))) {
		rm_error_set(&err, a.output, 0, 0, "cannot create the output file");
		rc = order_fail(&err);
	} else {
		rc = order_write(o, fmt, (names.names || names.pattern) ? &names : NULL, out, &err) < 0
			     ? order_fail(&err) : 0;
		if (out != stdout && fclose(out) != 0 && rc == 0) {
			rm_error_set(&err, a.output, 0, 0, "write failed");
			rc = order_fail(&err);
		}
	}
	order_destroy(o);
	order_torus_free(&t);
	return rc;
}
