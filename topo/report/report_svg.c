/*
 * topo/report/report_svg.c: the fabric as a layered SVG picture (report_svg.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "report_svg.h"
#include "topo_slurm.h"
#include "topo_view.h"

#define MARGIN 20
#define COL_W 125 /* leaf column */
#define BOX_W 118 /* switch box */
#define BOX_H 44
#define PER_ROW 12  /* switches or leaves per row */
#define ROW_H 80    /* upper switch row */
#define HOSTS_H 118 /* host box */
#define BAND_H (48 + BOX_H + 14 + HOSTS_H + 16)
#define MAX_DRAWN 300 /* links drawn one by one up to this many */
#define LIST_LINE 17  /* characters per line of a host list */
#define LIST_LINES 5

static const struct {
	const char *name, *colour;
} speed_colours[] = {
	{ "SDR", "#9e9e9e" }, { "DDR", "#8d6e63" }, { "QDR", "#1e88e5" }, { "FDR10", "#00897b" }, { "FDR", "#00acc1" },
	{ "EDR", "#43a047" }, { "HDR", "#8e24aa" }, { "NDR", "#f57c00" }, { "XDR", "#3949ab" },
};

const char *topo_report_svg_speed_colour(const char *speed)
{
	size_t i;

	for (i = 0; speed && i < sizeof(speed_colours) / sizeof(speed_colours[0]); i++)
		if (!strcmp(speed, speed_colours[i].name))
			return speed_colours[i].colour;
	return "#888888";
}

struct svg {
	topo_cluster_t c;
	const topo_fabric_t *f;
	topo_link_info_t *links; /* the fabric's cables (topo_fabric_link) */
	size_t nlinks;
	topo_swtree_t *t;
	FILE *out;
	double *x, *y;            /* per switch: centre of the box's top edge */
	size_t *uplinks, *bad_up; /* per switch: links to the level above, of which below the norm */
	uint8_t *up_speed;        /* per switch: speed of its uplinks (the most common) */
	uint8_t *nspeed, *nwidth; /* per subnet: the norm */
	struct hca_link {         /* an HCA cable below its subnet's usual speed or width */
		long leaf;
		const char *host;
		unsigned width, speed;
	} * hca;
	size_t nhca, *hca_off; /* hca[] sorted by leaf: leaf s has hca[hca_off[s] .. hca_off[s + 1]) */
	int width, height, bus, nbands, upper_rows;
	int top; /* y of the first row of switches (below the caption lines) */
	size_t nleaves, ndrawn;
};

/* Writes s with XML special characters escaped. */
static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\t')
				fputc(*s, f);
		}
	}
}

/* Writes at most n characters of s (escaped), with "..." when cut. */
static void esc_cut(FILE *f, const char *s, size_t n)
{
	char buf[128];

	if (strlen(s) <= n || n + 4 > sizeof(buf)) {
		esc(f, s);
		return;
	}
	memcpy(buf, s, n - 2);
	strcpy(buf + n - 2, "...");
	esc(f, buf);
}

/* Estimated width of s in DejaVu Sans at size px (bold ~8 % wider): generous per-class advances. */
static double text_width(const char *s, double size, int bold)
{
	double w = 0;

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		w += ch >= 'A' && ch <= 'Z'                                                       ? 0.74
		     : (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z')                       ? 0.64
		     : ch == ' ' || ch == ',' || ch == '.' || ch == ':' || ch == '[' || ch == ']' ? 0.4
												  : 0.7;
	}
	return w * size * (bold ? 1.08 : 1.0);
}

/* A centred text line at (x, y) that stays within maxw: squeezed with textLength when estimated wider. */
static void box_text(FILE *f, double x, double y, double size, int bold, const char *colour, const char *s, double maxw)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"%g\"%s", x, y, size,
		bold ? " font-weight=\"bold\"" : "");
	if (colour)
		fprintf(f, " fill=\"%s\"", colour);
	if (text_width(s, size, bold) > maxw)
		fprintf(f, " textLength=\"%.1f\" lengthAdjust=\"spacingAndGlyphs\"", maxw);
	fputc('>', f);
	esc(f, s);
	fputs("</text>\n", f);
}

/* name cut in the middle to at most n characters ("MF0_A09..MQM9701_U1") into buf. */
static const char *short_name(const char *name, char *buf, size_t n)
{
	size_t k = strlen(name);

	if (k <= n || n < 7) {
		snprintf(buf, n + 1 > 2 ? n + 1 : 2, "%s", name);
		return buf;
	}
	memcpy(buf, name, n / 2 - 1);
	memcpy(buf + n / 2 - 1, "..", 2);
	memcpy(buf + n / 2 + 1, name + k - (n - n / 2 - 1), n - n / 2 - 1);
	buf[n] = '\0';
	return buf;
}

/* Most common speed and width of each subnet's links (the norm a link is compared with). */
static int svg_norms(struct svg *g)
{
	size_t s, i, nsub = topo_fabric_nsubnets(g->f);

	g->nspeed = calloc(nsub + 1, 1);
	g->nwidth = calloc(nsub + 1, 1);
	g->links = malloc((g->nlinks = topo_fabric_nlinks(g->f)) * sizeof(*g->links) + 1);
	if (!g->nspeed || !g->nwidth || !g->links)
		return -1;
	for (i = 0; i < g->nlinks; i++)
		topo_fabric_link(g->f, i, &g->links[i]);
	for (s = 0; s < nsub; s++) {
		size_t sc[TOPO_IB_NSPEEDS] = { 0 }, wc[16] = { 0 }, bs = 0, bw = 0;
		int k;

		for (i = 0; i < g->nlinks; i++) {
			const topo_link_info_t *l = &g->links[i];

			if (l->subnet == s) {
				sc[l->speed < TOPO_IB_NSPEEDS ? l->speed : 0]++;
				wc[l->width < 16 ? l->width : 0]++;
			}
		}
		for (k = 1; k < TOPO_IB_NSPEEDS; k++)
			if (sc[k] > bs)
				bs = sc[k], g->nspeed[s] = (uint8_t)k;
		for (k = 1; k < 16; k++)
			if (wc[k] > bw)
				bw = wc[k], g->nwidth[s] = (uint8_t)k;
	}
	return 0;
}

static int link_is_bad(const struct svg *g, const topo_link_info_t *l)
{
	size_t s = l->subnet;

	return (l->speed && l->speed < g->nspeed[s]) || (l->width && l->width < g->nwidth[s]);
}

/* The lower and upper dense switch of a link between two kept switches one level apart, else -1. */
static int tree_link(const struct svg *g, const topo_link_info_t *l, long *lo, long *hi)
{
	long a = l->sw[0], b = l->sw[1];

	if (a < 0 || b < 0 || !g->t->kept[a] || !g->t->kept[b])
		return -1;
	if (g->t->level[a] == g->t->level[b] + 1)
		*lo = b, *hi = a;
	else if (g->t->level[b] == g->t->level[a] + 1)
		*lo = a, *hi = b;
	else
		return -1;
	return 0;
}

/* Uplink counts and speeds per switch (the most common speed of its uplinks); decides between drawn
 * links and the bus. Returns 0, or -1 when out of memory. */
static int svg_uplinks(struct svg *g)
{
	uint32_t *cnt = calloc(g->t->nsw * TOPO_IB_NSPEEDS + 1, sizeof(*cnt)), *c;
	size_t i, k;
	long lo, hi, s;

	if (!cnt)
		return -1;
	for (i = 0; i < g->nlinks; i++) {
		const topo_link_info_t *l = &g->links[i];

		if (tree_link(g, l, &lo, &hi) < 0)
			continue;
		g->uplinks[lo]++;
		g->bad_up[lo] += link_is_bad(g, l);
		cnt[(size_t)lo * TOPO_IB_NSPEEDS + l->speed]++;
		g->ndrawn++;
	}
	for (s = 0; s < (long)g->t->nsw; s++) {
		c = cnt + (size_t)s * TOPO_IB_NSPEEDS;
		for (k = 0; g->uplinks[s] && k < TOPO_IB_NSPEEDS; k++)
			if (c[k] > c[g->up_speed[s]])
				g->up_speed[s] = (uint8_t)k;
	}
	free(cnt);
	g->bus = g->nbands > 1 || g->ndrawn > MAX_DRAWN || g->upper_rows > g->t->max_level;
	return 0;
}

/* ---- layout ---------------------------------------------------------------------------------------- */

static double row_x(const struct svg *g, size_t i, size_t n)
{
	size_t inrow = n < PER_ROW ? n : PER_ROW, col = i % PER_ROW;

	if (i / PER_ROW == (n - 1) / PER_ROW) /* last row: may be shorter */
		inrow = n - (n - 1) / PER_ROW * PER_ROW;
	return (g->width - (double)inrow * COL_W) / 2 + (double)col * COL_W + COL_W / 2.0;
}

/* Positions: upper levels from the top, one or more rows each; leaves in bands below. */
static void svg_layout(struct svg *g)
{
	size_t o, s, i, n, sub, widest = 1;
	int k, y = g->top = g->t->nsubnets > 1 ? 100 : 84;

	for (k = g->t->max_level; k >= 0; k--) {
		for (s = 0, n = 0; s < g->t->nsw; s++)
			n += g->t->kept[s] && g->t->level[s] == k;
		if (k > 0)
			g->upper_rows += (int)((n + PER_ROW - 1) / PER_ROW);
		else
			g->nleaves = n;
		widest = n > widest ? n : widest;
	}
	g->nbands = (int)((g->nleaves + PER_ROW - 1) / PER_ROW);
	g->width = 2 * MARGIN + (int)(widest < PER_ROW ? widest : PER_ROW) * COL_W;
	if (g->width < 760)
		g->width = 760;
	for (k = g->t->max_level; k >= 0; k--) {
		for (s = 0, n = 0; s < g->t->nsw; s++)
			n += g->t->kept[s] && g->t->level[s] == k;
		for (sub = 0, i = 0; sub < g->t->nsubnets; sub++)
			for (o = 0; o < g->t->nsw; o++) {
				s = g->t->order[o];
				if (!g->t->kept[s] || g->t->level[s] != k || g->t->subnet[s] != (long)sub)
					continue;
				g->x[s] = row_x(g, i, n);
				g->y[s] = k > 0 ? y + (double)(i / PER_ROW) * ROW_H
						: y + (double)(i / PER_ROW) * BAND_H + 48;
				i++;
			}
		y += k > 0 ? (int)((n + PER_ROW - 1) / PER_ROW) * ROW_H : 0;
	}
	g->height = y + g->nbands * BAND_H + (g->t->nunplaced ? 70 : 0) + MARGIN;
}

/* ---- drawing ------------------------------------------------------------------------------------- */

static void svg_header(struct svg *g, int extra_h)
{
	FILE *f = g->out;
	size_t s, per[8] = { 0 }, nsp = 0;
	int k, x = MARGIN;
	uint8_t present[TOPO_IB_NSPEEDS] = { 0 };

	for (s = 0; s < g->t->nsw; s++)
		if (g->t->kept[s] && g->t->level[s] >= 0 && g->t->level[s] < 8)
			per[g->t->level[s]]++;
	for (s = 0; s < g->nlinks; s++)
		present[g->links[s].speed] = 1;
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\">\n"
		"<title>rankmap: InfiniBand fabric</title>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		g->width, g->height + extra_h, g->width, g->height + extra_h);
	fprintf(f,
		"<text x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"bold\">InfiniBand fabric: %zu hosts under "
		"%zu leaf switches",
		MARGIN, g->t->nplaced, g->nleaves);
	for (k = 1; k <= g->t->max_level && k < 8; k++)
		if (k == 1)
			fprintf(f, ", %zu spine%s", per[k], per[k] == 1 ? "" : "s");
		else
			fprintf(f, ", %zu level-%d switch%s", per[k], k, per[k] == 1 ? "" : "es");
	fprintf(f, " (%zu subnet%s)</text>\n", g->t->nsubnets, g->t->nsubnets > 1 ? "s" : "");
	for (k = 1; k < TOPO_IB_NSPEEDS; k++) {
		if (!present[k])
			continue;
		fprintf(f,
			"<line x1=\"%d\" y1=\"46\" x2=\"%d\" y2=\"46\" stroke=\"%s\" stroke-width=\"4\"/>"
			"<text x=\"%d\" y=\"50\">%s</text>\n",
			x, x + 22, topo_report_svg_speed_colour(topo_fabric_speed_name((unsigned)k)), x + 26,
			topo_fabric_speed_name((unsigned)k));
		x += 72, nsp++;
	}
	fprintf(f,
		"<line x1=\"%d\" y1=\"46\" x2=\"%d\" y2=\"46\" stroke=\"#d50000\" stroke-width=\"2.5\" "
		"stroke-dasharray=\"5,3\"/><text x=\"%d\" y=\"50\" fill=\"#d50000\">slow or narrow: below the "
		"subnet's usual speed/width</text>\n",
		x, x + 22, x + 26);
	fprintf(f, "<text x=\"%d\" y=\"66\" fill=\"#555555\">%s Hover a box for details.", MARGIN,
		g->bus ? "Links bundled: each switch has one stub onto the bus with its uplink count."
		       : "Every switch-to-switch link is drawn (dotted arcs: links within a level).");
	fprintf(f, "</text>\n");
	if (g->t->nsubnets > 1)
		fprintf(f,
			"<text x=\"%d\" y=\"80\" fill=\"#555555\">Subnets side by side, each in order of switch "
			"names; a host in several subnets is drawn in each.</text>\n",
			MARGIN);
}

static void line(FILE *f, double x1, double y1, double x2, double y2, const char *colour, double w, int dashed)
{
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\"%s/>\n",
		x1, y1, x2, y2, colour, w, dashed ? " stroke-dasharray=\"5,3\"" : "");
}

/* Links between kept switches of one level (leaf to leaf): grey dotted arcs above the boxes. */
static void svg_lateral(struct svg *g)
{
	size_t i;

	for (i = 0; i < g->nlinks; i++) {
		const topo_link_info_t *l = &g->links[i];
		long a = l->sw[0], b = l->sw[1];
		double mx, my;

		if (a < 0 || b < 0 || a == b || !g->t->kept[a] || !g->t->kept[b] || g->t->level[a] != g->t->level[b])
			continue;
		mx = (g->x[a] + g->x[b]) / 2;
		my = (g->y[a] < g->y[b] ? g->y[a] : g->y[b]) - 18 -
		     (g->x[a] > g->x[b] ? g->x[a] - g->x[b] : g->x[b] - g->x[a]) / 12;
		fprintf(g->out,
			"<path d=\"M%.1f %.1f Q%.1f %.1f %.1f %.1f\" fill=\"none\" stroke=\"%s\" "
			"stroke-width=\"1.5\" stroke-dasharray=\"2,2\"><title>lateral link %s - %s</title></path>\n",
			g->x[a], g->y[a], mx, my, g->x[b], g->y[b], link_is_bad(g, l) ? "#d50000" : "#546e7a",
			g->t->name[a], g->t->name[b]);
	}
}

/* Links: each one, or stubs onto per-row buses joined by a trunk on the left; bad links always. */
static void svg_links(struct svg *g)
{
	size_t i, nbad = 0;
	long lo, hi, s;
	double bus_y;

	for (i = 0; i < g->nlinks; i++) {
		const topo_link_info_t *l = &g->links[i];
		int bad;

		if (tree_link(g, l, &lo, &hi) < 0)
			continue;
		bad = link_is_bad(g, l);
		if (g->bus && (!bad || nbad++ >= 100))
			continue;
		line(g->out, g->x[lo], g->y[lo], g->x[hi], g->y[hi] + BOX_H,
		     bad ? "#d50000" : topo_report_svg_speed_colour(topo_fabric_speed_name(l->speed)), bad ? 2.5 : 1.2,
		     bad);
	}
	if (!g->bus) {
		svg_lateral(g);
		return;
	}
	for (s = 0, bus_y = 0; s < (long)g->t->nsw; s++)
		if (g->t->kept[s] && g->t->level[s] == 0 && g->y[s] - 32 > bus_y)
			bus_y = g->y[s] - 32;
	line(g->out, MARGIN - 8, g->top + BOX_H + 12, MARGIN - 8, bus_y, "#607d8b", 3, 0);
	for (s = 0; s < (long)g->t->nsw; s++) {
		if (!g->t->kept[s])
			continue;
		if (g->t->level[s] > 0) { /* down to the bus under its row */
			bus_y = g->y[s] + BOX_H + 12;
			line(g->out, g->x[s], g->y[s] + BOX_H, g->x[s], bus_y, "#607d8b", 2, 0);
			line(g->out, MARGIN - 8, bus_y, g->x[s], bus_y, "#607d8b", 2, 0);
		}
		if (g->uplinks[s]) { /* up to the bus above it */
			bus_y = g->t->level[s] > 0 ? g->y[s] - ROW_H + BOX_H + 12 : g->y[s] - 32;
			line(g->out, g->x[s], g->y[s], g->x[s], bus_y,
			     g->bad_up[s] ? "#d50000"
					  : topo_report_svg_speed_colour(topo_fabric_speed_name(g->up_speed[s])),
			     3, 0);
			line(g->out, MARGIN - 8, bus_y, g->x[s], bus_y, "#607d8b", 2, 0);
			fprintf(g->out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%zu up</text>\n", g->x[s] + 4,
				g->y[s] - 6, g->uplinks[s]);
		}
	}
}

static void svg_switch(struct svg *g, long s)
{
	FILE *f = g->out;
	unsigned unc = topo_fabric_switch_unconnected(g->f, s);
	unsigned down = g->t->level[s] == 0 ? topo_fabric_switch_host_ports(g->f, s) : 0;
	const uint32_t *nb;
	size_t n = topo_fabric_switch_neighbors(g->f, s, &nb);
	double x = g->x[s], y = g->y[s], w = BOX_W - 8;
	char buf[64];

	fprintf(f, "<g><title>");
	esc(f, g->t->name[s]);
	fprintf(f, ": ");
	esc(f, g->t->desc[s] && g->t->desc[s][0] ? g->t->desc[s] : "(no description)");
	fprintf(f,
		"\nGUID 0x%016llx, subnet %ld, level %d\n%zu neighbouring switches, %zu uplinks, "
		"%u unconnected ports",
		(unsigned long long)g->t->guid[s], g->t->subnet[s], g->t->level[s], n, g->uplinks[s], unc);
	if (g->bad_up[s])
		fprintf(f, "\n%zu uplinks below the subnet's usual speed/width", g->bad_up[s]);
	fprintf(f,
		"</title>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"4\" fill=\"%s\" "
		"stroke=\"%s\" stroke-width=\"%s\"/>\n",
		x - BOX_W / 2.0, y, BOX_W, BOX_H, g->t->level[s] == 0 ? "#e3f2fd" : "#eceff1",
		g->bad_up[s] ? "#d50000" : "#37474f", g->bad_up[s] ? "2" : "1");
	box_text(f, x, y + 13, 10, 1, NULL, short_name(g->t->name[s], buf, 18), w);
	if (g->t->level[s] == 0 && g->uplinks[s])
		snprintf(buf, sizeof(buf), "%u down, %zu up, %.2g:1", down, g->uplinks[s],
			 (double)down / (double)g->uplinks[s]);
	else if (g->t->level[s] == 0)
		snprintf(buf, sizeof(buf), "%u down, no uplink", down);
	else
		snprintf(buf, sizeof(buf), "level %d, %zu links", g->t->level[s], n);
	box_text(f, x, y + 26, 10, 0, NULL, buf, w);
	buf[0] = '\0';
	if (g->bad_up[s])
		snprintf(buf, sizeof(buf), "%zu slow/narrow uplink%s", g->bad_up[s], g->bad_up[s] > 1 ? "s" : "");
	else if (unc)
		snprintf(buf, sizeof(buf), "%u unconnected port%s", unc, unc > 1 ? "s" : "");
	if (buf[0])
		box_text(f, x, y + 38, 9, 0, g->bad_up[s] ? "#d50000" : "#e65100", buf, w);
	fprintf(f, "</g>\n");
}

/* Length of the next line of a compressed host list: up to the last comma between hosts that fits in
 * LIST_LINE characters, else the last comma between the numbers of a range, else before the '[' of a
 * name too long for a line, else the whole item (then squeezed): a line never ends inside a name or a
 * number. */
static size_t list_cut(const char *p)
{
	size_t len = strlen(p), top = 0, inner = 0, bracket = 0, i;
	int depth = 0;

	if (len <= LIST_LINE)
		return len;
	for (i = 0; i < LIST_LINE; i++) {
		if (p[i] == '[' && depth++ == 0 && !bracket)
			bracket = i;
		depth -= p[i] == ']';
		if (p[i] == ',')
			*(depth ? &inner : &top) = i + 1;
	}
	if (top || inner)
		return top ? top : inner;
	for (; p[i] && p[i] != ',' && (p[i] != '[' || bracket); i++)
		;
	if (p[i] == '[' && i > 0)
		return i;
	return p[i] ? i + 1 : len;
}

/* The HCA cables of leaf s below the norm, as a title ("bonobo023 4x DDR, ..."). */
static void hca_title(struct svg *g, long s)
{
	size_t i, n = g->hca_off[s + 1] - g->hca_off[s];

	fprintf(g->out, "<title>%zu HCA link%s below the subnet's usual %ux %s:", n, n > 1 ? "s" : "",
		g->nwidth[g->t->subnet[s]], topo_fabric_speed_name(g->nspeed[g->t->subnet[s]]));
	for (i = g->hca_off[s]; i < g->hca_off[s + 1] && i < g->hca_off[s] + 40; i++) {
		fprintf(g->out, "%s ", i > g->hca_off[s] ? "," : "");
		esc(g->out, g->hca[i].host);
		fprintf(g->out, " %ux %s", g->hca[i].width, topo_fabric_speed_name(g->hca[i].speed));
	}
	fprintf(g->out, "%s</title>", n > 40 ? ", ..." : "");
}

/* The box under leaf s: host count, the compressed list wrapped between items, GUID-named count, and
 * the leaf's slow or narrow HCA cables (a red dashed link from the leaf, as the legend says). */
static void svg_hosts(struct svg *g, long s, double cx, double top, const char *const *hosts, size_t n)
{
	FILE *f = g->out;
	const char **named = malloc((n + 1) * sizeof(*named));
	char *all = hostlist_compress(hosts, n), *list, *p, *q, buf[64];
	size_t i, k = 0, nbad = g->hca_off[s + 1] - g->hca_off[s];
	int lines = 0, maxl = nbad ? LIST_LINES - 1 : LIST_LINES;

	for (i = 0; named && i < n; i++)
		if (strncmp(hosts[i], "0x", 2))
			named[k++] = hosts[i];
	list = named ? hostlist_compress(named, k) : NULL;
	if (nbad) {
		fprintf(f, "<g class=\"bad-hca\">");
		hca_title(g, s);
		fprintf(f, "\n");
		line(f, cx, top - 14, cx, top, "#d50000", 2.5, 1);
	}
	fprintf(f, "<g><title>%zu hosts: ", n);
	esc(f, all ? all : "");
	fprintf(f,
		"</title>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"3\" fill=\"#fafafa\" "
		"stroke=\"%s\"%s/>\n",
		cx - BOX_W / 2.0, top, BOX_W, HOSTS_H, nbad ? "#d50000" : "#90a4ae",
		nbad ? " stroke-width=\"2\" stroke-dasharray=\"5,3\"" : "");
	snprintf(buf, sizeof(buf), "%zu %s", n, n == 1 ? "host" : "hosts");
	box_text(f, cx, top + 15, 11, 1, NULL, buf, BOX_W - 8);
	for (p = list; p && *p && lines < maxl; lines++) {
		size_t cut = list_cut(p);

		q = strndup(p, cut);
		box_text(f, cx, top + 31 + lines * 13, 10, 0, NULL,
			 lines == maxl - 1 && p[cut] ? "..."
			 : q                         ? q
						     : "",
			 BOX_W - 8);
		free(q);
		p += cut;
	}
	if (nbad) {
		snprintf(buf, sizeof(buf), "%zu slow/narrow HCA link%s", nbad, nbad > 1 ? "s" : "");
		box_text(f, cx, top + HOSTS_H - 22, 10, 0, "#d50000", buf, BOX_W - 8);
	}
	if (n > k) {
		snprintf(buf, sizeof(buf), "%s%zu named by GUID", k ? "+ " : "", n - k);
		box_text(f, cx, top + HOSTS_H - 8, 10, 0, "#d50000", buf, BOX_W - 8);
	}
	fprintf(f, "</g>\n%s", nbad ? "</g>\n" : "");
	free(list);
	free(all);
	free(named);
}

static void svg_boxes(struct svg *g)
{
	size_t o;
	long s;

	for (o = 0; o < g->t->nsw; o++) {
		s = (long)g->t->order[o];
		if (!g->t->kept[s])
			continue;
		svg_switch(g, s);
		if (g->t->level[s] == 0)
			svg_hosts(g, s, g->x[s], g->y[s] + BOX_H + 14, g->t->host + g->t->host_off[s],
				  g->t->host_off[s + 1] - g->t->host_off[s]);
	}
	if (g->t->nunplaced) {
		fprintf(g->out, "<text x=\"%d\" y=\"%d\" fill=\"#d50000\">%zu hosts hang on no switch:</text>\n",
			MARGIN, g->height - MARGIN - 52, g->t->nunplaced);
		fprintf(g->out, "<text x=\"%d\" y=\"%d\" fill=\"#d50000\" font-size=\"10\">", MARGIN,
			g->height - MARGIN - 36);
		esc_cut(g->out, g->t->unplaced[0], 40);
		fprintf(g->out, "%s</text>\n", g->t->nunplaced > 1 ? " ..." : "");
	}
}

static int cmp_hca(const void *a, const void *b)
{
	const struct hca_link *x = a, *y = b;

	return x->leaf < y->leaf ? -1 : x->leaf > y->leaf ? 1 : strcmp(x->host, y->host);
}

/* HCA cables on kept leaves below their subnet's norm, grouped by leaf. Returns 0, -1 on no memory. */
static int svg_hca_links(struct svg *g)
{
	size_t h, i, nh = topo_fabric_nhosts(g->f), cap = 0;
	unsigned w, sp;

	g->hca_off = calloc(g->t->nsw + 2, sizeof(*g->hca_off));
	if (!g->hca_off)
		return -1;
	for (h = 0; h < nh; h++)
		for (i = 0; i < topo_fabric_host_nports(g->f, h); i++) {
			long s = topo_fabric_host_port_switch(g->f, h, i);
			topo_link_info_t l = { .sw = { s, -1 } };

			if (s < 0 || !g->t->kept[s] || g->t->level[s] != 0 ||
			    topo_fabric_host_port_rate(g->f, h, i, &w, &sp) < 0)
				continue;
			l.subnet = (size_t)g->t->subnet[s], l.width = w, l.speed = sp;
			if (!link_is_bad(g, &l))
				continue;
			if (g->nhca == cap) {
				struct hca_link *n = realloc(g->hca, (cap = cap ? 2 * cap : 64) * sizeof(*n));

				if (!n)
					return -1;
				g->hca = n;
			}
			g->hca[g->nhca++] = (struct hca_link){ s, topo_fabric_host_name(g->f, h), w, sp };
			g->hca_off[s + 1]++;
		}
	if (g->nhca)
		qsort(g->hca, g->nhca, sizeof(*g->hca), cmp_hca);
	for (i = 0; i < g->t->nsw; i++)
		g->hca_off[i + 1] += g->hca_off[i];
	return 0;
}

/* ---- the document ----------------------------------------------------------------------------------- */

/* Height and width of an embedded <svg> from its attributes (0 when absent). */
static int extra_dim(const char *extra, const char *attr)
{
	const char *p = extra ? strstr(extra, "<svg") : NULL, *end = p ? strchr(p, '>') : NULL, *a;
	char key[16];

	if (!p || !end)
		return 0;
	snprintf(key, sizeof(key), " %s=\"", attr);
	a = strstr(p, key);
	return a && a < end ? atoi(a + strlen(key)) : 0;
}

/* Embeds extra below y: its <svg> element (XML prolog dropped) with x and y added. */
static void embed(FILE *f, const char *extra, int y)
{
	const char *p = extra ? strstr(extra, "<svg") : NULL;

	if (!p)
		return;
	fprintf(f, "<line x1=\"0\" y1=\"%d\" x2=\"100%%\" y2=\"%d\" stroke=\"#b0bec5\"/>\n<svg x=\"0\" y=\"%d\"%s", y,
		y, y + 6, p + 4);
	if (p[strlen(p) - 1] != '\n')
		fputc('\n', f);
}

static void svg_free(struct svg *g)
{
	topo_swtree_destroy(g->t);
	free(g->x);
	free(g->y);
	free(g->uplinks);
	free(g->bad_up);
	free(g->up_speed);
	free(g->nspeed);
	free(g->nwidth);
	free(g->links);
	free(g->hca);
	free(g->hca_off);
}

static int svg_fabric(struct svg *g, const char *extra, rm_error_t *err)
{
	size_t n;
	int eh = extra_dim(extra, "height");

	if (!(g->t = topo_swtree_build(g->c, TOPO_SWTREE_PER_SUBNET, err)))
		return -1;
	n = g->t->nsw + 1;
	g->x = calloc(n, sizeof(*g->x));
	g->y = calloc(n, sizeof(*g->y));
	g->uplinks = calloc(n, sizeof(*g->uplinks));
	g->bad_up = calloc(n, sizeof(*g->bad_up));
	g->up_speed = calloc(n, 1);
	if (!g->x || !g->y || !g->uplinks || !g->bad_up || !g->up_speed || svg_norms(g) < 0)
		return rm_error_set(err, "svg", 0, 0, "out of memory");
	svg_layout(g);
	if (svg_uplinks(g) < 0 || svg_hca_links(g) < 0)
		return rm_error_set(err, "svg", 0, 0, "out of memory");
	if (extra_dim(extra, "width") > g->width)
		g->width = extra_dim(extra, "width");
	svg_header(g, eh ? eh + 12 : 0);
	svg_links(g);
	svg_boxes(g);
	embed(g->out, extra, g->height);
	fprintf(g->out, "</svg>\n");
	return 0;
}

int topo_report_svg(topo_cluster_t c, const char *extra, FILE *f, rm_error_t *err)
{
	struct svg g = { .c = c, .f = topo_cluster_fabric(c), .out = f };
	int rc = 0, w = extra_dim(extra, "width"), h = extra_dim(extra, "height");

	if (g.f && topo_fabric_nhosts(g.f) > 0) {
		rc = svg_fabric(&g, extra, err);
	} else {
		w = w > 400 ? w : 400;
		fprintf(f,
			"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
			"width=\"%d\" height=\"%d\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n"
			"<title>rankmap cluster</title>\n<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" "
			"fill=\"white\"/>\n<text x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"bold\">%s</text>\n",
			w, 40 + h + 12, MARGIN,
			extra ? "3D torus (no InfiniBand fabric loaded)" : "no InfiniBand fabric loaded");
		embed(f, extra, 40);
		fprintf(f, "</svg>\n");
	}
	svg_free(&g);
	if (rc == 0 && ferror(f))
		rc = rm_error_set(err, "svg", 0, 0, "write error");
	return rc;
}
