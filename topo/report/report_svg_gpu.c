/*
 * topo/report/report_svg_gpu.c: the GPU nodes' part of `rankmapctl report --svg` (report_svg.h).
 *
 * One panel per node type that has GPUs (the first 8; the text and JSON reports list them all): its
 * GPUs as boxes grouped by NUMA node (name, bus id, nearest cores), its NICs below them with a line
 * from each GPU to its nearest NIC, and the GPU links above the boxes as arcs whose width grows with
 * their bandwidth (nodes of at most 16 GPUs; a legend gives the link matrix's source and range).
 * Anomalies are marked in red: a GPU whose NIC is on another NUMA node (or that has none).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "report_svg.h"
#include "topo_gpu.h"
#include "topo_view.h"

#define BOX_W 118
#define BOX_H 46
#define GAP 10
#define PANEL_MAX 8
#define ARCS_MAX_GPUS 16

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* A string cut to n characters with "..." (boxes are narrow; the tooltip has the whole). */
static const char *cut(const char *s, size_t n, char *buf, size_t len)
{
	if (!s)
		return "";
	if (strlen(s) <= n || n + 4 > len)
		return s;
	snprintf(buf, len, "%.*s...", (int)n, s);
	return buf;
}

/* One panel at height y for host h (hosts: its type's host list); returns its height. */
static int panel(FILE *f, topo_cluster_t c, size_t h, const char *hosts, int y, int *width)
{
	size_t n = topo_host_ngpus(c, h), nn = topo_host_nnics(c, h), i, j, nfast = 0;
	double *gx = calloc(n + 1, sizeof(*gx)), *nx = calloc(nn + 1, sizeof(*nx)), maxbw = 0;
	int arcs_h = n <= ARCS_MAX_GPUS ? 60 : 0, top = y + 40 + arcs_h, ny = top + BOX_H + 50, x = 16, prev = -2;
	topo_gpu_links_t l;
	char buf[64], cpus[256];

	if (!gx || !nx) {
		free(gx), free(nx);
		return 0;
	}
	if (topo_host_gpu_links(c, h, &l) < 0)
		l.n = 0;
	for (i = 0; i < (size_t)l.n * l.n; i++)
		maxbw = l.bw[i] > maxbw ? l.bw[i] : maxbw;
	fprintf(f, "<text x=\"16\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">", y + 18);
	esc(f, cut(hosts, 60, buf, sizeof(buf)));
	fprintf(f, ": %zu GPUs, %zu NICs<title>", n, nn);
	esc(f, hosts);
	fprintf(f, "</title></text>\n<text x=\"16\" y=\"%d\" font-size=\"11\" fill=\"#555\">links: ", y + 34);
	esc(f, l.n ? l.source : "none");
	if (maxbw > 0)
		fprintf(f, ", up to %.0f GB/s (arc width)", maxbw);
	fprintf(f, "</text>\n");
	for (i = 0; i < n; i++) { /* GPU boxes, a gap between NUMA nodes */
		const topo_gpu_t *g = topo_host_gpu(c, h, i);
		const topo_nic_t *nic = g->nic >= 0 ? topo_host_nic(c, h, (size_t)g->nic) : NULL;
		int bad = !nic || nic->numa != g->numa;

		if (prev != -2 && g->numa != prev)
			x += GAP * 2;
		prev = g->numa;
		gx[i] = x + BOX_W / 2.0;
		if (hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), g->cpuset) < 0)
			cpus[0] = '\0';
		fprintf(f,
			"<g><title>GPU %u %s (%s) %s, NUMA %d, cpus %s, NIC %s%s</title><rect x=\"%d\" y=\"%d\" "
			"width=\"%d\" height=\"%d\" rx=\"4\" fill=\"%s\" stroke=\"%s\"/>\n",
			g->index, g->name, g->osdevs, g->busid, g->numa, cpus, nic ? nic->name : "none",
			bad ? " (not on its NUMA node)" : "", x, top, BOX_W, BOX_H, bad ? "#ffebee" : "#e8f5e9",
			bad ? "#c62828" : "#2e7d32");
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%u %s</text>", x + 5, top + 15, g->index,
			cut(g->name, 11, buf, sizeof(buf)));
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\">%s NUMA %d</text>", x + 5, top + 28, g->busid + 5,
			g->numa);
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\">cpus ", x + 5, top + 40);
		esc(f, cut(cpus, 14, buf, sizeof(buf)));
		fprintf(f, "</text></g>\n");
		x += BOX_W + GAP;
	}
	*width = x > *width ? x : *width;
	for (j = 0, x = 16; j < nn; j++) { /* the NICs that some GPU uses, then the others, small */
		const topo_nic_t *nic = topo_host_nic(c, h, j);

		if (!nic->ngpus)
			continue;
		nx[j] = x + BOX_W / 2.0;
		fprintf(f,
			"<g><title>NIC %u %s (%s) %s, NUMA %d, %u GPUs</title><rect x=\"%d\" y=\"%d\" width=\"%d\" "
			"height=\"30\" rx=\"4\" fill=\"#e3f2fd\" stroke=\"#1565c0\"/><text x=\"%d\" y=\"%d\">",
			nic->index, nic->name, topo_nic_kind_name(nic->kind), nic->busid, nic->numa, nic->ngpus, x, ny,
			BOX_W, x + 5, ny + 19);
		esc(f, cut(nic->name, 7, buf, sizeof(buf)));
		fprintf(f, " %s</text></g>\n", topo_nic_kind_name(nic->kind));
		x += BOX_W + GAP;
		nfast++;
	}
	*width = x > *width ? x : *width;
	for (i = 0; i < n; i++) {
		const topo_gpu_t *g = topo_host_gpu(c, h, i);

		if (g->nic >= 0 && nx[g->nic] > 0)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#1565c0\"/>\n", gx[i],
				top + BOX_H, nx[g->nic], ny);
	}
	for (i = 0; arcs_h && maxbw > 0 && i < l.n; i++) /* links: arcs above the boxes */
		for (j = i + 1; j < l.n; j++) {
			double b = l.bw[i * l.n + j], mid = (gx[i] + gx[j]) / 2,
			       rise = 10 + (arcs_h - 14) * (j - i) / (double)n;

			if (b > 0)
				fprintf(f,
					"<path d=\"M %.1f %d Q %.1f %.1f %.1f %d\" fill=\"none\" stroke=\"#6a1b9a\" "
					"stroke-opacity=\"0.6\" stroke-width=\"%.1f\"><title>GPU %zu - GPU %zu: %.0f "
					"GB/s</title></path>\n",
					gx[i], top, mid, top - 2 * rise, gx[j], top, 0.5 + 4.0 * b / maxbw, i, j, b);
		}
	free(gx);
	free(nx);
	return ny + (nfast ? 30 : 0) + 20 - y;
}

char *topo_report_svg_gpus(topo_cluster_t c, int *width, int *height)
{
	size_t nt = topo_cluster_ntypes(c), t, h, shown = 0, len = 0;
	long *host = calloc(nt + 1, sizeof(*host));
	char *buf = NULL, *body = NULL, *out = NULL;
	size_t blen = 0;
	FILE *f = host ? open_memstream(&body, &blen) : NULL;
	int y = 0, w = 400;

	if (!f) {
		free(host);
		return NULL;
	}
	for (t = 0; t < nt; t++)
		host[t] = -1;
	for (h = topo_nhosts(c); h-- > 0;) {
		long ty = topo_host_type(c, h);

		if (ty >= 0 && (size_t)ty < nt)
			host[ty] = (long)h;
	}
	for (t = 0; t < nt && shown < PANEL_MAX; t++) {
		const char **names;
		char *list;
		size_t k = 0, i;

		if (host[t] < 0 || !topo_host_ngpus(c, (size_t)host[t]))
			continue;
		if (!(names = malloc(topo_nhosts(c) * sizeof(*names))))
			break;
		for (i = 0; i < topo_nhosts(c); i++)
			if (topo_host_type(c, i) == (long)t)
				names[k++] = topo_host_name(c, i);
		list = hostlist_compress(names, k);
		y += panel(f, c, (size_t)host[t], list ? list : topo_host_name(c, (size_t)host[t]), y, &w);
		free(list);
		free(names);
		shown++;
	}
	fclose(f);
	free(host);
	if (!shown) {
		free(body);
		return NULL;
	}
	w += 16;
	len = blen + 400;
	if ((buf = malloc(len)))
		snprintf(buf, len,
			 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"DejaVu "
			 "Sans, Arial, sans-serif\" font-size=\"12\">\n<title>GPU nodes</title>\n%s</svg>\n",
			 w, y, body);
	out = buf;
	free(body);
	*width = w;
	*height = y;
	return out;
}
