/*
 * order/order_export.c: writing an order as a node list, a Slurm host list, Slurm node weights, a
 * Slurm topology.conf (one leaf switch per block, blocks grouped upward) or an SVG picture.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "order.h"

static const struct {
	const char *name;
	order_format_t fmt;
} formats[] = {
	{ "list", ORDER_FMT_LIST },       { "slurm-nodes", ORDER_FMT_SLURM_NODES },
	{ "weights", ORDER_FMT_WEIGHTS }, { "topology.conf", ORDER_FMT_TOPOLOGY },
	{ "svg", ORDER_FMT_SVG },
};

int order_format_parse(const char *name, order_format_t *fmt)
{
	size_t i;

	for (i = 0; name && i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(name, formats[i].name)) {
			*fmt = formats[i].fmt;
			return 0;
		}
	errno = EINVAL;
	return -1;
}

int order_pattern_name(const topo_torus_spec_t *spec, const char *pattern, uint32_t node, char *buf, size_t len)
{
	const char *p = pattern;
	size_t o = 0;
	int c[3];

	order_node_coords(spec, node, c);
	while (*p && o + 1 < len) {
		long v;
		int w = 0;
		size_t k = strcspn(p + 1, ":}");

		if (*p != '{') {
			buf[o++] = *p++;
			continue;
		}
		if (!strncmp(p + 1, "id", k) && k == 2)
			v = node;
		else if (k == 6 && !strncmp(p + 1, "router", 6))
			v = node / (uint32_t)spec->nodes_per_router;
		else if (k == 1 && p[1] == 'n')
			v = node % (uint32_t)spec->nodes_per_router;
		else if (k == 1 && p[1] >= 'x' && p[1] <= 'z')
			v = c[p[1] - 'x'];
		else
			goto bad;
		p += 1 + k;
		if (*p == ':') {
			char *end;

			w = (int)strtol(p + 1, &end, 10);
			if (end == p + 1 || w < 1 || w > 12)
				goto bad;
			p = end;
		}
		if (*p != '}')
			goto bad;
		p++;
		o += (size_t)snprintf(buf + o, len - o, "%0*ld", w, v);
		if (o >= len)
			o = len - 1;
	}
	buf[o] = '\0';
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

/* Name of a node into buf (the names table first, else the pattern). */
static int node_name(const order_t *o, const order_names_t *nm, uint32_t node, char *buf, size_t len)
{
	if (nm && nm->names && nm->names[node]) {
		snprintf(buf, len, "%s", nm->names[node]);
		return 0;
	}
	return order_pattern_name(&o->spec, nm && nm->pattern ? nm->pattern : "nid{id:5}", node, buf, len);
}

/* Names of positions [from, to) as a compressed host list (malloc'd). */
static char *names_compressed(const order_t *o, const order_names_t *nm, size_t from, size_t to)
{
	char **v = calloc(to - from + 1, sizeof(char *)), buf[256], *res = NULL;
	size_t i, n = 0;

	if (!v)
		return NULL;
	for (i = from; i < to; i++) {
		if (node_name(o, nm, o->node[i], buf, sizeof(buf)) < 0 || !(v[n] = strdup(buf)))
			goto out;
		n++;
	}
	res = hostlist_compress((const char *const *)v, n);
out:
	while (n)
		free(v[--n]);
	free(v);
	return res;
}

static int write_list(const order_t *o, const order_names_t *nm, FILE *f)
{
	int named = nm && (nm->names || nm->pattern);
	char buf[256];
	size_t i;

	for (i = 0; i < o->nnodes; i++) {
		uint32_t node = o->node[i];
		int c[3];

		if (named) {
			if (node_name(o, nm, node, buf, sizeof(buf)) < 0)
				return -1;
			fprintf(f, "%s\n", buf);
			continue;
		}
		order_node_coords(&o->spec, node, c);
		fprintf(f, "%d %d %d %u\n", c[0], c[1], c[2], node % (uint32_t)o->spec.nodes_per_router);
	}
	return 0;
}

static int write_weights(const order_t *o, const order_names_t *nm, FILE *f)
{
	char buf[256];
	size_t i;

	fprintf(f, "# Slurm node weights from rankmap ordering '%s': the lowest weight is allocated first\n",
		o->method);
	for (i = 0; i < o->nnodes; i++) {
		if (node_name(o, nm, o->node[i], buf, sizeof(buf)) < 0)
			return -1;
		fprintf(f, "NodeName=%s Weight=%zu\n", buf, i + 1);
	}
	return 0;
}

/* Writes one switch line per run of consecutive ids in key[0..n) (children named child%u). */
static int write_level(FILE *f, const uint32_t *key, size_t stride, size_t n, const char *name, const char *child,
		       uint32_t *nruns)
{
	size_t i = 0;
	char **v;
	uint32_t run = 0;

	v = malloc((n + 1) * sizeof(char *));
	if (!v)
		return -1;
	while (i < n) {
		size_t j = i, k, m = 0;
		char *list;

		while (j < n && key[j * stride] == key[i * stride])
			j++;
		for (k = i; k < j; k++) {
			char tmp[32];

			snprintf(tmp, sizeof(tmp), "%s%zu", child, k);
			v[m++] = strdup(tmp);
		}
		list = hostlist_compress((const char *const *)v, m);
		fprintf(f, "SwitchName=%s%u Switches=%s\n", name, run++, list ? list : "");
		free(list);
		while (m)
			free(v[--m]);
		i = j;
	}
	free(v);
	*nruns = run;
	return 0;
}

static int write_topology(const order_t *o, const order_names_t *nm, FILE *f)
{
	size_t i = 0;
	uint32_t b = 0, ncol, nslab, *colgrp;

	fprintf(f, "# Slurm topology.conf from rankmap ordering '%s' (%u blocks)\n", o->method, o->nblocks);
	while (i < o->nnodes) {
		size_t j = i;
		char *list;

		while (j < o->nnodes && o->block[j] == o->block[i])
			j++;
		list = names_compressed(o, nm, i, j);
		if (!list)
			return -1;
		fprintf(f, "SwitchName=blk%u Nodes=%s\n", b++, list);
		free(list);
		i = j;
	}
	if (write_level(f, o->block_group, 2, o->nblocks, "grp", "blk", &ncol) < 0)
		return -1;
	/* level 2: the slab of each level-1 group, taken from its first block */
	colgrp = malloc((size_t)ncol * sizeof(uint32_t));
	if (!colgrp)
		return -1;
	for (i = 0, b = 0; i < o->nblocks; i++)
		if (i == 0 || o->block_group[2 * i] != o->block_group[2 * (i - 1)])
			colgrp[b++] = o->block_group[2 * i + 1];
	if (write_level(f, colgrp, 1, ncol, "sup", "grp", &nslab) < 0) {
		free(colgrp);
		return -1;
	}
	free(colgrp);
	fprintf(f, "SwitchName=top Switches=sup[0-%u]\n", nslab ? nslab - 1 : 0);
	return 0;
}

/* SVG: one panel per z-slice (x across, y down), routers shaded by block, the path drawn inside
 * each slice, circles where it leaves a slice. */
static int write_svg(const order_t *o, FILE *f)
{
	const topo_torus_spec_t *s = &o->spec;
	int X = s->dims[0], Y = s->dims[1], Z = s->dims[2], cs = 12, gap = 16, cols, pw, ph;
	uint32_t npr = (uint32_t)s->nodes_per_router;
	size_t p, R = o->nnodes / npr;

	cols = Z < 6 ? Z : 6;
	pw = X * cs + gap;
	ph = Y * cs + gap + 12;
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">\n"
		"<title>rankmap ordering %s on %dx%dx%d</title>\n",
		cols * pw + gap, ((Z + cols - 1) / cols) * ph + gap + 20, o->method, X, Y, Z);
	fprintf(f, "<text x=\"%d\" y=\"16\" font-size=\"12\">ordering %s: z-slices, x across, y down</text>\n", gap,
		o->method);
	for (p = 0; p < R; p++) {
		int c[3], px, py;
		uint32_t b = o->block[p * npr];

		order_node_coords(s, o->node[p * npr], c);
		px = gap + (c[2] % cols) * pw + c[0] * cs;
		py = 30 + (c[2] / cols) * ph + c[1] * cs;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"hsl(%u,60%%,%d%%)\"/>\n", px, py,
			cs, cs, (b * 47) % 360, 70 + (int)(b % 3) * 8);
	}
	for (p = 0; p < (size_t)Z; p++)
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"9\">z=%zu</text>\n", gap + (int)(p % (size_t)cols) * pw,
			28 + (int)(p / (size_t)cols) * ph, p);
	fprintf(f, "<path fill=\"none\" stroke=\"black\" stroke-width=\"1.2\" d=\"");
	for (p = 1; p < R; p++) {
		int a[3], c[3];

		order_node_coords(s, o->node[(p - 1) * npr], a);
		order_node_coords(s, o->node[p * npr], c);
		if (a[2] != c[2])
			continue;
		fprintf(f, "M%d %d L%d %d ", gap + (a[2] % cols) * pw + a[0] * cs + cs / 2,
			30 + (a[2] / cols) * ph + a[1] * cs + cs / 2, gap + (c[2] % cols) * pw + c[0] * cs + cs / 2,
			30 + (c[2] / cols) * ph + c[1] * cs + cs / 2);
	}
	fprintf(f, "\"/>\n");
	for (p = 1; p < R; p++) {
		int a[3], c[3];

		order_node_coords(s, o->node[(p - 1) * npr], a);
		order_node_coords(s, o->node[p * npr], c);
		if (a[2] != c[2])
			fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"2.5\" fill=\"black\"/>\n",
				gap + (a[2] % cols) * pw + a[0] * cs + cs / 2,
				30 + (a[2] / cols) * ph + a[1] * cs + cs / 2);
	}
	fprintf(f, "</svg>\n");
	return 0;
}

int order_write(const order_t *o, order_format_t fmt, const order_names_t *names, FILE *f, rm_error_t *err)
{
	char *list;
	int rc = 0;

	if (names && names->pattern) {
		char buf[256];

		if (order_pattern_name(&o->spec, names->pattern, 0, buf, sizeof(buf)) < 0)
			return rm_error_set(err, "--host-pattern", 0, 0,
					    "'%s': placeholders are {x} {y} {z} {n} {id} {router}, with :W to pad",
					    names->pattern);
	}
	switch (fmt) {
	case ORDER_FMT_LIST: rc = write_list(o, names, f); break;
	case ORDER_FMT_SLURM_NODES:
		list = names_compressed(o, names, 0, o->nnodes);
		rc = list ? 0 : -1;
		if (list)
			fprintf(f, "%s\n", list);
		free(list);
		break;
	case ORDER_FMT_WEIGHTS: rc = write_weights(o, names, f); break;
	case ORDER_FMT_TOPOLOGY: rc = write_topology(o, names, f); break;
	case ORDER_FMT_SVG: rc = write_svg(o, f); break;
	}
	if (rc == 0 && (fflush(f) != 0 || ferror(f)))
		rc = -1;
	if (rc < 0)
		rm_error_set(err, "output", 0, 0, "cannot write the order: %s", strerror(errno ? errno : EIO));
	return rc;
}
