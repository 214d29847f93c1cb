/*
 * daemon/ctl/ctl_order.c: `rankmapctl order`, a torus node ordering (xyz, mdf, gray, hilbert, bbb) or the
 * fat-tree order of an InfiniBand fabric (fattree) for Slurm's free list, as a node list, a host list,
 * node weights, a topology.conf or (torus) an SVG picture.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_common.h"
#include "hostlist.h"
#include "rm_client.h"
#include "order.h"
#include "topo_slurm.h"

static void order_usage(FILE *f)
{
	fprintf(f,
		"NAME\n"
		"    rankmapctl order - compute a 3D torus or fat-tree node ordering for allocation\n\n"
		"SYNOPSIS\n"
		"    rankmapctl order (--torus FILE | --dims XxYxZ[:NODES_PER_ROUTER]) [--link-cost CX,CY,CZ]\n"
		"                     [--mesh] [--method METHOD] [--axes AXES] [--format FORMAT]\n"
		"                     [--host-pattern PATTERN] [--output FILE]\n"
		"    rankmapctl order [--server LIST] [--dims ...] [options as above]\n"
		"    rankmapctl order --method fattree [--ib FILE... | --ib-cache FILE | --ib-live | --cluster FILE\n"
		"                     | --server LIST] [--node-name-map FILE] [--strict]\n"
		"                     [--nodes HOSTLIST | --slurm-conf FILE] [--format FORMAT] [--output FILE]\n\n"
		"DESCRIPTION\n"
		"    A scheduler that allocates nodes from a free list in a fixed order places jobs as\n"
		"    compactly as that order is (Albing et al., EuroMPI 2011). This prints such an order.\n"
		"    Nodes are (x, y, z, n): router coordinates and node index in the router; the nodes\n"
		"    of a router always come together. Given neither --torus nor --dims, the order is computed\n"
		"    by rankmapd on its model's torus: the daemon of --server, else $RANKMAP_SERVER, else\n"
		"    $RANKMAP_SOCKET, else its default socket " RM_SOCKET_DEFAULT
		".\n\n"
		"    --method fattree orders the hosts of an InfiniBand fabric instead (ibnetdiscover output, a\n"
		"    -p ports report, a libibnetdisc cache or a site fabric file, as slurm-topology reads them):\n"
		"    hosts in leaf order, the leaves in the order the spines reach them (depth first from the\n"
		"    top switches, each switch's children in order of their names; on a dragonfly group by\n"
		"    group), so consecutive nodes share a leaf, then a spine. A host is under its first leaf,\n"
		"    as in slurm-topology's tree; HCAs named only by their GUID are left out (give\n"
		"    --node-name-map). It is the order of slurm-topology --format weights. Without fabric\n"
		"    options it is rankmapd's (--server, else $RANKMAP_SERVER, ...: its model's fabric).\n\n"
		"OPTIONS\n"
		"    --torus FILE        torus config (as torus.conf.example, installed): dims, wrap, link costs,\n"
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
		"                        fattree the fabric's fat-tree order (above; the fabric options, else\n"
		"                                rankmapd's fabric)\n"
		"    --axes AXES         block and traversal axis order, fastest first, e.g. zyx (default:\n"
		"                        fastest link first; mdf: shortest dimension first)\n"
		"    --format FORMAT     list           one node per line: \"x y z n\", or its host name\n"
		"                                       when the config or --host-pattern names hosts\n"
		"                                       (fattree: the host name)\n"
		"                        slurm-nodes    the host names in order, as one Slurm host list\n"
		"                        weights        NodeName=... Weight=... (lowest weight first)\n"
		"                        topology.conf  Slurm topology.conf: a leaf switch per block,\n"
		"                                       blocks grouped upward (fattree: the fabric's\n"
		"                                       switch tree, as slurm-topology writes it)\n"
		"                        svg            picture: the path through each z-slice, blocks\n"
		"                                       shaded (torus methods only)\n"
		"    --host-pattern P    names nodes: {x} {y} {z} {n} {id} {router}, \":W\" zero-pads\n"
		"                        (default for names when the config has none: nid{id:5})\n"
		"    --output FILE       write there instead of standard output\n"
		"    --ib FILE, --ib-cache FILE, --ib-live, --node-name-map FILE, --cluster FILE, --strict\n"
		"                        the fabric of --method fattree, as for rankmapctl slurm-topology\n"
		"    --nodes HOSTLIST    fattree: keep only these hosts (Slurm's nodes, e.g. node[001-128]);\n"
		"                        the others are listed in a comment (weights) and counted on stderr\n"
		"    --slurm-conf FILE   fattree: keep only the nodes slurm.conf FILE defines (NodeName=\n"
		"                        lines and Include files)\n"
		"    --server LIST       compute the order in rankmapd: its model's torus (and host names)\n"
		"                        replace --torus; --dims still describes another torus. Without\n"
		"                        --torus and --dims, the default: $RANKMAP_SERVER, else\n"
		"                        $RANKMAP_SOCKET, else " RM_SOCKET_DEFAULT
		".\n"
		"                        fattree: its model's fabric replaces the fabric options (the\n"
		"                        same order, through its slurm_topology request).\n" CTL_DAEMON_HELP
		"    -h, --help          this text\n\n"
		"EXAMPLES\n"
		"    rankmapctl order --dims 17x8x24:2 --link-cost 1,2,0.67 --method bbb --format weights\n"
		"    rankmapctl order --torus /etc/rankmap/torus.conf --format topology.conf\n"
		"    rankmapctl order --dims 8x4x8 --method gray:3x2x2 --format svg --output order.svg\n"
		"    rankmapctl order --method fattree --ib fabric.txt --slurm-conf /etc/slurm/slurm.conf \\\n"
		"                     --format weights\n\n"
		"EXIT STATUS\n"
		"    0 success, 1 bad input (config file, block extents that do not fit; a fabric file that\n"
		"    cannot be read: the message names the file and line; a node list that keeps no host),\n"
		"    2 usage error\n");
}

static int method_ok(const char *m);

struct order_args {
	ctl_torus_args_t t;
	ctl_sources_t src; /* --method fattree: the fabric */
	const char *format, *pattern, *output, *nodes, *slurm_conf;
	int fattree;
};

/* --method fattree: the fabric options and no torus option. Returns -1 when consistent, else 2. */
static int fattree_check(struct order_args *a)
{
	a->fattree = 1;
	if (a->t.torus || a->t.dims || a->t.cost || a->t.mesh || a->t.axes || a->pattern)
		return ctl_usage_error("order", "%s",
				       "--method fattree takes no torus option (--torus, --dims, --link-cost, --mesh, "
				       "--axes, --host-pattern)");
	if (ctl_daemon_set(&a->t.d) && ctl_sources_any(&a->src))
		return ctl_usage_error("order", "%s", "--server replaces --ib, --ib-cache, --ib-live and --cluster");
	if (!ctl_sources_any(&a->src))
		ctl_daemon_default(&a->t.d); /* no fabric given: rankmapd's ($RANKMAP_SERVER, ..., its socket) */
	if (a->nodes && a->slurm_conf)
		return ctl_usage_error("order", "%s", "give --nodes or --slurm-conf, not both");
	return -1;
}

/* Parses the options; returns -1 on success, else the exit status. */
static int order_parse(int argc, char **argv, struct order_args *a)
{
	static const struct option opts[] = {
		CTL_TORUS_LONGOPTS,
		CTL_IB_LONGOPTS,
		{ "nodes", required_argument, NULL, 'N' },
		{ "slurm-conf", required_argument, NULL, 'S' },
		{ "format", required_argument, NULL, 'f' },
		{ "host-pattern", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, r;

	memset(a, 0, sizeof(*a));
	a->t.method = "bbb";
	a->format = "list";
	optind = 1;
	while ((c = getopt_long(argc, argv, CTL_SHORTOPTS, opts, NULL)) != -1) {
		if (c == CTL_OPT_IB && a->src.nib >= 64)
			return ctl_usage_error("order", "at most %s --ib options", "64");
		if (ctl_torus_opt(&a->t, c, optarg, "order")) /* first: --torus is a torus option here */
			continue;
		if ((r = ctl_sources_opt(&a->src, "order", c, optarg)) == 2)
			return 2;
		if (r)
			continue;
		switch (c) {
		case 'N': a->nodes = optarg; break;
		case 'S': a->slurm_conf = optarg; break;
		case 'f': a->format = optarg; break;
		case 'p': a->pattern = optarg; break;
		case 'o': a->output = optarg; break;
		case 'h': order_usage(stdout); return 0;
		default: return ctl_usage_hint("order");
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rankmapctl order: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!strcmp(a->t.method, "fattree"))
		return fattree_check(a);
	if (ctl_sources_any(&a->src) || a->nodes || a->slurm_conf)
		return ctl_usage_error("order", "%s",
				       "--ib, --ib-cache, --ib-live, --node-name-map, --cluster, --strict, --nodes "
				       "and --slurm-conf are for --method fattree");
	if (ctl_torus_check(&a->t, "order") >= 0)
		return 2;
	if (!method_ok(a->t.method)) {
		fprintf(stderr,
			"rankmapctl order: unknown method '%s' (xyz, mdf, gray[:AxBxC], hilbert, "
			"bbb[:AxBxC], fattree)\n",
			a->t.method);
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
	return ctl_fail("order", err, NULL);
}

/* The order computed here from the torus files or dims: 0, or -1 with err set. */
static int order_local(const struct order_args *a, const order_opts_t *opts, order_torus_t *t, order_t **o,
		       rm_error_t *err)
{
	if (order_torus_setup(a->t.torus, a->t.dims, a->t.cost, a->t.mesh, t, err) < 0)
		return -1;
	*o = order_build(&t->spec, a->t.method, opts, err);
	return *o ? 0 : -1;
}

/* The `order` request for the arguments (dims, link costs, wrap only when --dims is given). */
static json_t *order_request(const struct order_args *a, rm_error_t *err)
{
	json_t *req = rm_proto_request("order", 1);
	json_object_set_new(req, "method", json_string(a->t.method));
	if (ctl_torus_request(req, &a->t, err) < 0) {
		json_decref(req);
		return NULL;
	}
	return req;
}

/* Reads a JSON array of n integers into a new uint32_t array; NULL when it is not one. */
static uint32_t *u32_array(const json_t *v, size_t n)
{
	uint32_t *a = calloc(n ? n : 1, sizeof(*a));
	size_t i;

	for (i = 0; a && i < n; i++) {
		json_t *e = json_array_get(v, i);

		if (json_array_size(v) != n || !json_is_integer(e) || json_integer_value(e) < 0) {
			free(a);
			return NULL;
		}
		a[i] = (uint32_t)json_integer_value(e);
	}
	return a;
}

/* Rebuilds the order (and the host names of the nodes) from the daemon's answer: 0 or -1. */
static int order_from_json(const json_t *r, order_t **out, order_torus_t *t)
{
	order_t *o = calloc(1, sizeof(*o));
	topo_torus_spec_t *s = &t->spec;
	json_t *hosts = json_object_get(r, "hosts"), *h;
	size_t i;
	int ok;

	if (!o)
		return -1;
	ok = json_unpack((json_t *)r, "{s:[iii], s:i, s:[bbb], s:[FFF], s:[iii], s:[iii]}", "dims", &s->dims[0],
			 &s->dims[1], &s->dims[2], "nodes_per_router", &s->nodes_per_router, "wrap", &s->wrap[0],
			 &s->wrap[1], &s->wrap[2], "link_cost", &s->link_cost[0], &s->link_cost[1], &s->link_cost[2],
			 "block_ext", &o->block_ext[0], &o->block_ext[1], &o->block_ext[2], "axes", &o->axes[0],
			 &o->axes[1], &o->axes[2]) == 0;
	o->spec = *s;
	snprintf(o->method, sizeof(o->method), "%s", json_string_value(json_object_get(r, "method")) ?: "?");
	o->nnodes = t->nnodes = json_array_size(json_object_get(r, "order"));
	o->nblocks = (uint32_t)json_integer_value(json_object_get(r, "nblocks"));
	o->node = u32_array(json_object_get(r, "order"), o->nnodes);
	o->block = u32_array(json_object_get(r, "block"), o->nnodes);
	o->block_group = u32_array(json_object_get(r, "block_group"), 2 * (size_t)o->nblocks);
	*out = o;
	if (!ok || !o->node || !o->block || !o->block_group)
		return -1;
	if (json_array_size(hosts) == o->nnodes && (t->names = calloc(o->nnodes, sizeof(char *))))
		json_array_foreach (hosts, i, h)
			if (json_is_string(h))
				t->names[i] = strdup(json_string_value(h));
	return 0;
}

/* The order computed by rankmapd: 0, or -1 after printing the error. */
static int order_remote(const struct order_args *a, order_torus_t *t, order_t **o)
{
	rm_error_t err = { 0 };
	json_t *req = order_request(a, &err), *resp;
	int rc;

	if (!req)
		return order_fail(&err), -1;
	if (!(resp = ctl_call("order", &a->t.d, req, CTL_DAEMON_TIMEOUT_MS)))
		return -1;
	if ((rc = order_from_json(resp, o, t)) < 0)
		fprintf(stderr, "rankmapctl order: rankmapd at %s sent a malformed order\n", ctl_daemon_name(&a->t.d));
	json_decref(resp);
	return rc;
}

/* Writes the order in the chosen format to --output or standard output. Returns the exit status. */
static int order_output(const struct order_args *a, const order_t *o, const order_torus_t *t, order_format_t fmt)
{
	order_names_t names = { (const char *const *)t->names, a->pattern };
	rm_error_t err;
	FILE *out = ctl_open_output("order", a->output);
	int rc;

	if (!out)
		return 1;
	rm_error_clear(&err);
	rc = order_write(o, fmt, (names.names || names.pattern) ? &names : NULL, out, &err) < 0 ? order_fail(&err) : 0;
	return ctl_close_output("order", out, a->output, rc);
}

/* The hosts of a tree in fat-tree order, in the chosen format. Returns the exit status. */
static int fattree_write(const struct order_args *a, topo_cluster_t c, const topo_swtree_t *t, order_format_t fmt,
			 rm_error_t *err)
{
	FILE *out = ctl_open_output("order", a->output);
	int rc;

	if (!out)
		return 1;
	switch (fmt) {
	case ORDER_FMT_TOPOLOGY: rc = topo_slurm_write(c, t, TOPO_SLURM_TREE, NULL, out, err); break;
	case ORDER_FMT_SLURM_NODES:
		rc = topo_slurm_order_write(c, t, TOPO_SLURM_ORDER_HOSTLIST, "order --method fattree", out, err);
		break;
	case ORDER_FMT_WEIGHTS:
		rc = topo_slurm_order_write(c, t, TOPO_SLURM_ORDER_WEIGHTS, "order --method fattree", out, err);
		break;
	default: rc = topo_slurm_order_write(c, t, TOPO_SLURM_ORDER_LIST, "order --method fattree", out, err); break;
	}
	return ctl_close_output("order", out, a->output, rc < 0 ? order_fail(err) : 0);
}

/* Writes rankmapd's fat-tree order (text: its weights, or its tree for topology.conf) in the format. */
static int fattree_remote_write(const char *text, order_format_t fmt, FILE *out)
{
	char *copy, *line, *save = NULL, **names;
	size_t n = 0;
	int rc = 0;

	if (fmt == ORDER_FMT_WEIGHTS || fmt == ORDER_FMT_TOPOLOGY)
		return fputs(text, out) < 0 ? -1 : 0;
	copy = strdup(text);
	for (const char *p = text; (p = strstr(p, "NodeName=")); p += 9) /* what the daemon sent, not 20+ a line */
		n++;
	names = calloc(n + 1, sizeof(*names));
	n = 0;
	if (!copy || !names) {
		free(copy);
		free(names);
		return -1;
	}
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "NodeName=", 9)) {
			line[9 + strcspn(line + 9, " ")] = '\0';
			names[n++] = line + 9;
		}
	if (fmt == ORDER_FMT_SLURM_NODES) {
		char *l = hostlist_compress((const char *const *)names, n);

		rc = l && fprintf(out, "%s\n", l) > 0 ? 0 : -1;
		free(l);
	} else {
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = fprintf(out, "%s\n", names[i]) < 0 ? -1 : 0;
	}
	free(names);
	free(copy);
	return rc;
}

/* --method fattree through rankmapd: its model's fabric. Returns the exit status. */
static int order_fattree_remote(const struct order_args *a, order_format_t fmt, const char *const *keep, size_t nkeep)
{
	struct ctl_swtree_summary w;
	const char *text;
	json_t *resp = ctl_slurm_topology_call("order", &a->t.d, fmt == ORDER_FMT_TOPOLOGY ? "tree" : "weights", 0,
					       NULL, keep, nkeep, &w, &text);
	FILE *out;
	int rc = 1;

	if (!resp)
		return 1;
	if ((out = ctl_open_output("order", a->output))) {
		rc = fattree_remote_write(text, fmt, out);
		if (rc < 0)
			fprintf(stderr, "rankmapctl order: cannot write the order\n");
		rc = ctl_close_output("order", out, a->output, rc < 0 ? 1 : 0);
	}
	if (rc == 0)
		ctl_swtree_warnings("order", &w, a->nodes ? "nodes" : "slurm-conf", 0, 0);
	json_decref(resp);
	return rc;
}

/* --method fattree: the fabric's hosts in fat-tree order. Returns the exit status. */
static int order_fattree(const struct order_args *a, order_format_t fmt)
{
	struct ctl_swtree_summary w;
	topo_swtree_t *t = NULL;
	topo_cluster_t c;
	rm_error_t err;
	size_t nkeep;
	int bad, rc = 1;
	char **keep = ctl_keep_nodes("order", a->nodes, a->slurm_conf, &nkeep, &bad);

	if (bad)
		return 1;
	rm_error_clear(&err);
	if (fmt == ORDER_FMT_SVG) {
		hostlist_free(keep);
		return ctl_usage_error("order", "%s", "--format svg draws torus orders only (not --method fattree)");
	}
	if (ctl_daemon_set(&a->t.d)) {
		rc = order_fattree_remote(a, fmt, (const char *const *)keep, nkeep);
		hostlist_free(keep);
		return rc;
	}
	if (!(c = topo_cluster_create())) {
		hostlist_free(keep);
		fprintf(stderr, "rankmapctl order: out of memory\n");
		return 1;
	}
	if (ctl_sources_load(c, &a->src, &err) < 0 ||
	    !(t = topo_swtree_build_keep(c, TOPO_SWTREE_NAMED_ONLY, (const char *const *)keep, nkeep, &err)))
		order_fail(&err);
	else if ((rc = fattree_write(a, c, t, fmt, &err)) == 0) {
		ctl_swtree_summarise(t, &w);
		ctl_swtree_warnings("order", &w, a->nodes ? "nodes" : "slurm-conf", 0, 0);
	}
	topo_swtree_destroy(t);
	topo_cluster_destroy(c);
	hostlist_free(keep);
	return rc;
}

int ctl_order_main(int argc, char **argv)
{
	struct order_args a;
	order_opts_t opts;
	order_torus_t t = { 0 };
	order_format_t fmt;
	order_t *o = NULL;
	rm_error_t err;
	int rc = order_parse(argc, argv, &a);

	if (rc >= 0)
		return rc;
	rm_error_clear(&err);
	order_opts_default(&opts);
	if (order_format_parse(a.format, &fmt) < 0) {
		fprintf(stderr,
			"rankmapctl order: unknown format '%s' (list, slurm-nodes, weights, "
			"topology.conf, svg)\n",
			a.format);
		return 2;
	}
	if (a.fattree)
		return order_fattree(&a, fmt);
	if (a.t.axes && order_parse_axes(a.t.axes, opts.axes, &err) < 0) {
		order_fail(&err);
		return 2;
	}
	if (ctl_daemon_set(&a.t.d))
		rc = order_remote(&a, &t, &o) < 0 ? 1 : order_output(&a, o, &t, fmt);
	else
		rc = order_local(&a, &opts, &t, &o, &err) < 0 ? order_fail(&err) : order_output(&a, o, &t, fmt);
	order_destroy(o);
	order_torus_free(&t);
	return rc;
}
