/*
 * topo/report/report_svg.c: the fabric as a layered SVG picture (report_svg.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "report_svg.h"
#include "topo_slurm.h"
#include "topo_view.h"

#define MARGIN 20
#define COL_W 152   /* leaf column */
#define BOX_W 144   /* switch box */
#define BOX_H 58    /* name, ports, lateral links, problem */
#define PER_ROW 12  /* switches or leaves per row */
#define ROW_H 94    /* upper switch row */
#define HOSTS_H 150 /* host box */
#define BAND_H (48 + BOX_H + 14 + HOSTS_H + 16)
#define MAX_DRAWN 300    /* links drawn one by one up to this many */
#define LIST_LINES 8     /* lines of a host box under its count: host list, then problems */
#define RED "#d50000"    /* a warning: could be faster or wider, no hwloc data, no HCA */
#define ORANGE "#ef6c00" /* a note: below the subnet's usual rate, what the ports support unknown */

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
	size_t *uplinks, *bad_up; /* per switch: links to the level above, of which with a verdict */
	uint8_t *worst_up;        /* per switch: the worst verdict of its uplinks (link_is_bad) */
	const char **nohca;       /* the cluster's hosts with no HCA in the fabric (borrowed) */
	size_t nnohca;
	int any_hw;        /* some host has hardware (hwloc) data: the others are flagged */
	uint8_t *up_speed; /* per switch: speed of its uplinks (the most common) */
	struct hca_link {  /* an HCA cable with a verdict (link_is_bad) */
		long leaf;
		const char *host;
		unsigned width, speed;
		int bad; /* 2: could be faster or wider; 1: below the subnet's norm */
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

/* Estimated advance of character ch in DejaVu Sans, in em, on the generous side (m, w, M, W nearly
 * square); 0 for a UTF-8 continuation byte (the character was counted). Text is sized and cut with it so
 * that it never leaves its box. */
static double char_em(unsigned char ch)
{
	return (ch & 0xc0) == 0x80                                                          ? 0
	       : ch == 'm' || ch == 'w' || ch == 'M' || ch == 'W'                           ? 0.96
	       : ch >= 'A' && ch <= 'Z'                                                     ? 0.76
	       : (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z')                       ? 0.64
	       : ch == ' ' || ch == ',' || ch == '.' || ch == ':' || ch == '[' || ch == ']' ? 0.4
											    : 0.8;
}

/* Estimated width of s at size px (bold ~10 % wider). */
static double text_width(const char *s, double size, int bold)
{
	double w = 0;

	for (; *s; s++)
		w += char_em((unsigned char)*s);
	return w * size * (bold ? 1.1 : 1.0);
}

/* s cut at the end to fit maxw at size px, "..." appended when cut, into buf (len >= 8). */
static const char *fit(const char *s, double size, int bold, double maxw, char *buf, size_t len)
{
	size_t n = strlen(s);

	snprintf(buf, len, "%s", s);
	if (text_width(buf, size, bold) <= maxw)
		return buf;
	for (n = n < len - 4 ? n : len - 4; n > 0; n--) {
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) /* not inside a UTF-8 character */
			n--;
		memcpy(buf, s, n);
		strcpy(buf + n, "...");
		if (text_width(buf, size, bold) <= maxw)
			return buf;
	}
	return strcpy(buf, "...");
}

/* A centred text line at (x, y) that fits maxw (cut with "...", see fit), with an optional tooltip. */
static void box_text_title(FILE *f, double x, double y, double size, int bold, const char *colour, const char *s,
			   double maxw, const char *cls, const char *title)
{
	char buf[256];

	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"%g\"%s", x, y, size,
		bold ? " font-weight=\"bold\"" : "");
	if (colour)
		fprintf(f, " fill=\"%s\"", colour);
	if (cls)
		fprintf(f, " class=\"%s\"", cls);
	fputc('>', f);
	esc(f, fit(s, size, bold, maxw, buf, sizeof(buf)));
	if (title) {
		fputs("<title>", f);
		esc(f, title);
		fputs("</title>", f);
	}
	fputs("</text>\n", f);
}

static void box_text(FILE *f, double x, double y, double size, int bold, const char *colour, const char *s, double maxw)
{
	box_text_title(f, x, y, size, bold, colour, s, maxw, NULL, NULL);
}

/* The problem mark at (x, y): a filled circle with "!" in colour (the legend explains it). */
static void mark(FILE *f, double x, double y, const char *colour)
{
	fprintf(f,
		"<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"7\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" "
		"text-anchor=\"middle\" font-size=\"11\" font-weight=\"bold\" fill=\"white\">!</text>\n",
		x, y, colour, x, y + 4);
}

/* The fabric's cables (topo_fabric_link: rates, the subnet's norm and the verdict). */
static int svg_links_load(struct svg *g)
{
	size_t i;

	g->links = malloc((g->nlinks = topo_fabric_nlinks(g->f)) * sizeof(*g->links) + 1);
	if (!g->links)
		return -1;
	for (i = 0; i < g->nlinks; i++)
		topo_fabric_link(g->f, i, &g->links[i]);
	return 0;
}

/* 2 when the link could be faster or wider (red), 1 when it is only below its subnet's norm with what
 * its ends support unknown (orange), else 0 (topo_view.h's verdict). */
static int link_is_bad(const struct svg *g, const topo_link_info_t *l)
{
	(void)g;
	return l->verdict & (TOPO_LINK_COULD_BE_FASTER | TOPO_LINK_COULD_BE_WIDER)        ? 2
	       : l->verdict & (TOPO_LINK_SLOWER_THAN_NORM | TOPO_LINK_NARROWER_THAN_NORM) ? 1
											  : 0;
}

static const char *bad_colour(int bad)
{
	return bad == 2 ? RED : ORANGE;
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
		g->bad_up[lo] += link_is_bad(g, l) != 0;
		if (link_is_bad(g, l) > g->worst_up[lo])
			g->worst_up[lo] = (uint8_t)link_is_bad(g, l);
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
	int k, y = g->top = g->t->nsubnets > 1 ? 146 : 132;

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
	g->height = y + g->nbands * BAND_H + MARGIN; /* + the boxes of hosts outside the leaves (svg_fabric) */
}

/* ---- drawing ------------------------------------------------------------------------------------- */

static void line(FILE *f, double x1, double y1, double x2, double y2, const char *colour, double w, int dashed)
{
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\"%s/>\n",
		x1, y1, x2, y2, colour, w, dashed ? " stroke-dasharray=\"5,3\"" : "");
}

/* Title (every host of the cluster counted: those under a leaf, on no switch, with no HCA in the fabric),
 * the speed legend and the problem legend. */
static void svg_header(struct svg *g, int extra_h)
{
	FILE *f = g->out;
	size_t s, per[8] = { 0 };
	int k, x = MARGIN;
	uint8_t present[TOPO_IB_NSPEEDS] = { 0 };
	char title[400];
	int o;

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
	o = snprintf(title, sizeof(title), "%zu hosts: %zu under %zu leaf switches", topo_nhosts(g->c), g->t->nplaced,
		     g->nleaves);
	for (k = 1; k <= g->t->max_level && k < 8 && o > 0 && (size_t)o < sizeof(title); k++)
		if (k == 1)
			o += snprintf(title + o, sizeof(title) - (size_t)o, ", %zu spine%s", per[k],
				      per[k] == 1 ? "" : "s");
		else
			o += snprintf(title + o, sizeof(title) - (size_t)o, ", %zu level-%d switch%s", per[k], k,
				      per[k] == 1 ? "" : "es");
	if (g->t->nunplaced && o > 0 && (size_t)o < sizeof(title))
		o += snprintf(title + o, sizeof(title) - (size_t)o, ", %zu on no switch", g->t->nunplaced);
	if (g->nnohca && o > 0 && (size_t)o < sizeof(title))
		o += snprintf(title + o, sizeof(title) - (size_t)o, ", %zu with no HCA in the fabric", g->nnohca);
	if (o > 0 && (size_t)o < sizeof(title))
		snprintf(title + o, sizeof(title) - (size_t)o, " (%zu subnet%s)", g->t->nsubnets,
			 g->t->nsubnets > 1 ? "s" : "");
	fprintf(f, "<text class=\"headline\" x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"bold\">", MARGIN);
	esc(f, title);
	fprintf(f, "</text>\n");
	for (k = 1; k < TOPO_IB_NSPEEDS; k++) {
		if (!present[k])
			continue;
		fprintf(f,
			"<line x1=\"%d\" y1=\"46\" x2=\"%d\" y2=\"46\" stroke=\"%s\" stroke-width=\"4\"/>"
			"<text x=\"%d\" y=\"50\">%s</text>\n",
			x, x + 22, topo_report_svg_speed_colour(topo_fabric_speed_name((unsigned)k)), x + 26,
			topo_fabric_speed_name((unsigned)k));
		x += 72;
	}
	line(f, x, 46, x + 22, 46, RED, 2.5, 1);
	fprintf(f, "<text x=\"%d\" y=\"50\" fill=\"%s\">could be faster or wider</text>\n", x + 26, RED);
	x = MARGIN;
	line(f, x, 64, x + 22, 64, ORANGE, 2.5, 1);
	fprintf(f,
		"<text x=\"%d\" y=\"68\" fill=\"%s\">below the subnet's usual rate (what the ports support is "
		"unknown)</text>\n",
		x + 26, ORANGE);
	mark(f, x + 11, 82, RED);
	fprintf(f,
		"<text x=\"%d\" y=\"86\">a box with problems: they are named in it (red: warning, orange: "
		"note)</text>\n",
		x + 26);
	fprintf(f, "<text x=\"%d\" y=\"102\" fill=\"#555555\">%s</text>\n", MARGIN,
		g->bus ? "Links bundled: each switch has one stub onto the bus, with its uplink count."
		       : "Every switch-to-switch link is drawn; a link within a level joins neighbours,");
	fprintf(f, "<text x=\"%d\" y=\"116\" fill=\"#555555\">%s</text>\n", MARGIN,
		g->bus ? "Hover a box for details."
		       : "else both boxes name the switch at its other end. Hover a box for details.");
	if (g->t->nsubnets > 1)
		fprintf(f,
			"<text x=\"%d\" y=\"130\" fill=\"#555555\">Subnets side by side, each in order of switch "
			"names; a host in several subnets is drawn in each.</text>\n",
			MARGIN);
}
/* Links between kept switches of one level: a short line between neighbours of one row; any other is
 * named in both switch boxes (svg_switch), never drawn across the picture. */
static void svg_lateral(struct svg *g)
{
	size_t i;

	for (i = 0; i < g->nlinks; i++) {
		const topo_link_info_t *l = &g->links[i];
		long a = l->sw[0], b = l->sw[1], t;
		int bad = link_is_bad(g, l);

		if (a < 0 || b < 0 || a == b || !g->t->kept[a] || !g->t->kept[b] || g->t->level[a] != g->t->level[b])
			continue;
		if (g->x[a] > g->x[b])
			t = a, a = b, b = t;
		if (g->y[a] != g->y[b] || g->x[b] - g->x[a] > COL_W + 0.5) /* not neighbours: named in the boxes */
			continue;
		fprintf(g->out,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"%s>"
			"<title>lateral link %s - %s</title></line>\n",
			g->x[a] + BOX_W / 2.0, g->y[a] + BOX_H / 2.0, g->x[b] - BOX_W / 2.0, g->y[b] + BOX_H / 2.0,
			bad ? bad_colour(bad) : "#546e7a", bad ? "2.5" : "2", bad ? " stroke-dasharray=\"5,3\"" : "",
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
		     bad ? bad_colour(bad) : topo_report_svg_speed_colour(topo_fabric_speed_name(l->speed)),
		     bad ? 2.5 : 1.2, bad);
	}
	svg_lateral(g);
	if (!g->bus)
		return;
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
			     g->bad_up[s] ? bad_colour(g->worst_up[s])
					  : topo_report_svg_speed_colour(topo_fabric_speed_name(g->up_speed[s])),
			     3, 0);
			line(g->out, MARGIN - 8, bus_y, g->x[s], bus_y, "#607d8b", 2, 0);
			fprintf(g->out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%zu up</text>\n", g->x[s] + 4,
				g->y[s] - 6, g->uplinks[s]);
		}
	}
}

/* "<> ibsw8, ibsw9": the switches of switch s's level it is linked to and that are not its neighbours in
 * the row (those links are drawn); the worst verdict of those links in *bad. */
static void lateral_names(struct svg *g, long s, char *buf, size_t len, int *bad)
{
	size_t i, o = 0;

	buf[0] = '\0';
	*bad = 0;
	for (i = 0; i < g->nlinks && o < len; i++) {
		const topo_link_info_t *l = &g->links[i];
		long p = l->sw[0] == s ? l->sw[1] : l->sw[1] == s ? l->sw[0] : -1;

		if (p < 0 || p == s || !g->t->kept[p] || g->t->level[p] != g->t->level[s] ||
		    (g->y[p] == g->y[s] && fabs(g->x[p] - g->x[s]) <= COL_W + 0.5))
			continue;
		if (!strstr(buf, g->t->name[p]))
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "lateral: ", g->t->name[p]);
		*bad = link_is_bad(g, l) > *bad ? link_is_bad(g, l) : *bad;
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
	const char *colour = g->worst_up[s] ? bad_colour(g->worst_up[s]) : "#37474f";
	char buf[64], lat[512];
	int lbad;

	lateral_names(g, s, lat, sizeof(lat), &lbad);
	fprintf(f, "<g><title>");
	esc(f, g->t->name[s]);
	fprintf(f, ": ");
	esc(f, g->t->desc[s] && g->t->desc[s][0] ? g->t->desc[s] : "(no description)");
	fprintf(f,
		"\nGUID 0x%016llx, subnet %ld, level %d\n%zu neighbouring switches, %zu uplinks, "
		"%u unconnected ports",
		(unsigned long long)g->t->guid[s], g->t->subnet[s], g->t->level[s], n, g->uplinks[s], unc);
	if (g->bad_up[s])
		fprintf(f, "\n%zu uplinks %s", g->bad_up[s],
			g->worst_up[s] == 2 ? "could be faster or wider" : "below the subnet's usual rate");
	if (lat[0]) {
		fputc('\n', f);
		esc(f, lat);
	}
	fprintf(f,
		"</title>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"4\" fill=\"%s\" "
		"stroke=\"%s\" stroke-width=\"%s\"/>\n",
		x - BOX_W / 2.0, y, BOX_W, BOX_H, g->t->level[s] == 0 ? "#e3f2fd" : "#eceff1", colour,
		g->bad_up[s] ? "2" : "1");
	box_text(f, x, y + 14, 11, 1, NULL, g->t->name[s], w);
	if (g->t->level[s] == 0 && g->uplinks[s])
		snprintf(buf, sizeof(buf), "%u down, %zu up, %.2g:1", down, g->uplinks[s],
			 (double)down / (double)g->uplinks[s]);
	else if (g->t->level[s] == 0)
		snprintf(buf, sizeof(buf), "%u down, no uplink", down);
	else
		snprintf(buf, sizeof(buf), "level %d, %zu links", g->t->level[s], n);
	box_text(f, x, y + 27, 10, 0, NULL, buf, w);
	if (lat[0])
		box_text(f, x, y + 40, 9, 0, lbad ? bad_colour(lbad) : "#455a64", lat, w);
	buf[0] = '\0';
	if (g->bad_up[s])
		snprintf(buf, sizeof(buf), "%zu uplink%s %s", g->bad_up[s], g->bad_up[s] > 1 ? "s" : "",
			 g->worst_up[s] == 2 ? "could be faster" : "below the norm");
	else if (unc)
		snprintf(buf, sizeof(buf), "%u unconnected port%s", unc, unc > 1 ? "s" : "");
	if (buf[0])
		box_text(f, x, y + 52, 9, 0, g->bad_up[s] ? bad_colour(g->worst_up[s]) : "#e65100", buf, w);
	fprintf(f, "</g>\n");
	if (g->bad_up[s])
		mark(f, x + BOX_W / 2.0 - 2, y + 2, bad_colour(g->worst_up[s]));
}

/* Length of the next line of a compressed host list that fits maxw at 10 px: up to the last break
 * that fits, a break being after a comma (between hosts, or between the numbers of a range) or before
 * the '[' of a range; else up to the first break (the line is then cut with "..." by fit): a line never
 * ends inside a name or a number. */
static size_t list_cut(const char *p, double maxw)
{
	size_t i, best = 0, first = 0;
	double w = 0;

	for (i = 0; p[i]; i++) {
		size_t cand = p[i] == ',' ? i + 1 : p[i] == '[' && i > 0 ? i : 0;

		if (cand && cand <= i && w <= maxw) /* before '[': the width so far */
			best = cand;
		w += char_em((unsigned char)p[i]) * 10;
		if (cand > i && w <= maxw) /* after ',' */
			best = cand;
		if (cand && !first)
			first = cand;
		if (w > maxw && best)
			return best;
	}
	return w <= maxw || !first ? i : first;
}

/* The lines of a host box under its count: its host list, then a header and the hosts of each problem,
 * each list wrapped between items (list_cut). */
struct box_line {
	char *text; /* owned */
	const char *colour, *cls;
};

/* Appends the wrapped lines of list (at most max) to out[*n]; when cut, the last line is "..." or, with
 * keep, its own start followed by "...". */
static void wrap_list(const char *list, int max, const char *colour, const char *cls, int keep, struct box_line *out,
		      int *n)
{
	const char *p = list;
	char *t;
	int k;

	for (k = 0; p && *p && k < max; k++) {
		size_t cut = list_cut(p, BOX_W - 8);

		t = k == max - 1 && p[cut] && !keep ? strdup("...") : strndup(p, cut);
		if (t && k == max - 1 && p[cut] && keep && (t = realloc(t, cut + 4)))
			strcpy(t + cut, "...");
		out[(*n)++] = (struct box_line){ t, colour, cls };
		p += cut;
	}
}

/* Lines a compressed list takes when wrapped. */
static int wrapped_lines(const char *list)
{
	int k = 0;

	for (; list && *list; k++)
		list += list_cut(list, BOX_W - 8);
	return k;
}

/* Hosts of names[0..n) without hardware (hwloc) data in the cluster, into out; returns their count. */
static size_t without_hwloc(struct svg *g, const char *const *names, size_t n, const char **out)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		long h = topo_host_find(g->c, names[i]);

		if (h >= 0 && topo_host_type(g->c, (size_t)h) < 0)
			out[k++] = names[i];
	}
	return k;
}

/* The box under leaf s: host count, the compressed list wrapped between items, then the hosts with
 * problems named in colour without hovering: HCA cables that could be faster or wider (red) or are
 * below the subnet's norm (orange), hosts without hwloc data (red), hosts named by GUID (red); a mark
 * and a red or orange border when there is any. */
static void svg_hosts(struct svg *g, long s, double cx, double top, const char *const *hosts, size_t n)
{
	FILE *f = g->out;
	const char **named = malloc((n + 1) * sizeof(*named)), **warn = malloc((n + 1) * sizeof(*warn));
	const char **note = malloc((n + 1) * sizeof(*note)), **nohw = malloc((n + 1) * sizeof(*nohw));
	char *all = hostlist_compress(hosts, n), *list, *plist[3], buf[64];
	size_t i, k = 0, nw = 0, nn = 0, nh = 0;
	int nprob, worst, maxl, nl = 0;
	struct box_line bl[LIST_LINES + 4];

	for (i = 0; named && i < n; i++)
		if (strncmp(hosts[i], "0x", 2))
			named[k++] = hosts[i];
	for (i = g->hca_off[s]; warn && note && i < g->hca_off[s + 1]; i++)
		if (g->hca[i].bad == 2 && (!nw || strcmp(warn[nw - 1], g->hca[i].host)))
			warn[nw++] = g->hca[i].host;
		else if (g->hca[i].bad == 1 && (!nn || strcmp(note[nn - 1], g->hca[i].host)))
			note[nn++] = g->hca[i].host;
	if (nohw && g->any_hw) /* a cluster without any hwloc data is not 500 problems */
		nh = without_hwloc(g, hosts, n, nohw);
	worst = nw || nh || n > k ? 2 : nn ? 1 : 0;
	list = named ? hostlist_compress(named, k) : NULL;
	for (i = 0; i < 3; i++) /* the problems' host lists */
		plist[i] = (i == 0   ? nw
			    : i == 1 ? nn
				     : nh)
				   ? hostlist_compress(i == 0   ? warn
						       : i == 1 ? note
								: nohw,
						       i == 0   ? nw
						       : i == 1 ? nn
								: nh)
				   : NULL;
	for (i = 0, nprob = n > k; i < 3; i++) /* the problems first: a header and up to 2 lines of hosts */
		if (plist[i])
			nprob += 1 + (wrapped_lines(plist[i]) < 2 ? wrapped_lines(plist[i]) : 2);
	maxl = LIST_LINES - nprob; /* the host list gets what is left (its tooltip has it all), one line at least */
	wrap_list(list, maxl < 1 ? 1 : maxl, NULL, NULL, 0, bl, &nl);
	for (i = 0; i < 3; i++) {
		static const char *const what[] = { "could be faster:", "below the norm:", "no hwloc data:" };

		if (!plist[i])
			continue;
		snprintf(buf, sizeof(buf), "%zu %s", i == 0 ? nw : i == 1 ? nn : nh, what[i]);
		bl[nl++] = (struct box_line){ strdup(buf), i == 1 ? ORANGE : RED, "problem" };
		wrap_list(plist[i], 2, i == 1 ? ORANGE : RED, "problem", 1, bl, &nl);
	}
	if (n > k) {
		snprintf(buf, sizeof(buf), "%s%zu named by GUID", k ? "+ " : "", n - k);
		bl[nl++] = (struct box_line){ strdup(buf), RED, "problem" };
	}
	if (nw || nn) {
		fprintf(f, "<g class=\"bad-hca\"><title>%zu HCA link%s %s</title>\n", nw + nn, nw + nn > 1 ? "s" : "",
			nw ? "could be faster or wider" : "below the subnet's usual rate");
		line(f, cx, top - 14, cx, top, nw ? RED : ORANGE, 2.5, 1);
		fprintf(f, "</g>\n");
	}
	fprintf(f, "<g><title>%zu hosts: ", n);
	esc(f, all ? all : "");
	fprintf(f,
		"</title>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"3\" fill=\"#fafafa\" "
		"stroke=\"%s\"%s/>\n",
		cx - BOX_W / 2.0, top, BOX_W, HOSTS_H, worst ? bad_colour(worst) : "#90a4ae",
		worst ? " stroke-width=\"2\"" : "");
	snprintf(buf, sizeof(buf), "%zu %s", n, n == 1 ? "host" : "hosts");
	box_text(f, cx, top + 15, 11, 1, NULL, buf, BOX_W - 8);
	for (i = 0; i < (size_t)nl; i++) {
		box_text_title(f, cx, top + 31 + (double)i * 13, 10, 0, bl[i].colour, bl[i].text ? bl[i].text : "",
			       BOX_W - 8, bl[i].cls, NULL);
		free(bl[i].text);
	}
	fprintf(f, "</g>\n");
	if (worst)
		mark(f, cx + BOX_W / 2.0 - 2, top + 2, bad_colour(worst));
	free(list);
	for (i = 0; i < 3; i++)
		free(plist[i]);
	free(all);
	free(named);
	free(warn);
	free(note);
	free(nohw);
}

/* A box of its own for hosts outside the leaves: with no HCA in the fabric (hwloc data only), or
 * hanging on no switch; drawn at (x, top), red, with a mark. */
static void svg_host_list_box(struct svg *g, double x, double top, double w, const char *what, const char **hosts,
			      size_t n)
{
	FILE *f = g->out;
	char *list = hostlist_compress(hosts, n), *p, *q, buf[160];
	int lines = 0;

	fprintf(f, "<g class=\"outside\"><title>%zu %s: ", n, what);
	esc(f, list ? list : "");
	fprintf(f,
		"</title>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" rx=\"3\" fill=\"#fff5f5\" "
		"stroke=\"%s\" stroke-width=\"2\"/>\n",
		x, top, w, HOSTS_H / 2, RED);
	snprintf(buf, sizeof(buf), "%zu %s", n, what);
	box_text(f, x + w / 2, top + 16, 11, 1, RED, buf, w - 8);
	for (p = list; p && *p && lines < 3; lines++) {
		size_t cut = strlen(p) > 60 ? 60 : strlen(p);

		while (cut < strlen(p) && cut > 1 && p[cut - 1] != ',')
			cut--;
		if (cut <= 1)
			cut = strlen(p) > 60 ? 60 : strlen(p);
		q = strndup(p, cut);
		box_text(f, x + w / 2, top + 32 + lines * 13, 10, 0, NULL,
			 lines == 2 && p[cut] ? "..."
			 : q                  ? q
					      : "",
			 w - 8);
		free(q);
		p += cut;
	}
	fprintf(f, "</g>\n");
	mark(f, x + w - 2, top + 2, RED);
	free(list);
}

static void svg_boxes(struct svg *g)
{
	double y = g->height - MARGIN - (g->t->nunplaced || g->nnohca ? HOSTS_H / 2 : 0);
	double w = (g->width - 2 * MARGIN - 20) / 2.0;
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
	if (g->nnohca)
		svg_host_list_box(g, MARGIN, y, w, "hosts with no HCA in the fabric", g->nohca, g->nnohca);
	if (g->t->nunplaced)
		svg_host_list_box(g, MARGIN + w + 20, y, w, "hosts on no switch", (const char **)g->t->unplaced,
				  g->t->nunplaced);
}

static int cmp_hca(const void *a, const void *b)
{
	const struct hca_link *x = a, *y = b;

	return x->leaf < y->leaf ? -1 : x->leaf > y->leaf ? 1 : strcmp(x->host, y->host);
}

/* HCA cables on kept leaves with a verdict, grouped by leaf; and the cluster's hosts with no HCA in the
 * fabric. Returns 0, -1 on no memory. */
static int svg_hca_links(struct svg *g)
{
	size_t h, i, nh = topo_fabric_nhosts(g->f), cap = 0;

	g->hca_off = calloc(g->t->nsw + 2, sizeof(*g->hca_off));
	g->nohca = malloc((topo_nhosts(g->c) + 1) * sizeof(*g->nohca));
	if (!g->hca_off || !g->nohca)
		return -1;
	for (h = 0; h < topo_nhosts(g->c); h++) {
		if (topo_host_fabric_host(g->c, h) < 0)
			g->nohca[g->nnohca++] = topo_host_name(g->c, h);
		g->any_hw |= topo_host_type(g->c, h) >= 0;
	}
	for (h = 0; h < nh; h++)
		for (i = 0; i < topo_fabric_host_nports(g->f, h); i++) {
			long s = topo_fabric_host_port_switch(g->f, h, i), li = topo_fabric_host_port_link(g->f, h, i);
			topo_link_info_t l;
			int bad;

			if (s < 0 || li < 0 || !g->t->kept[s] || g->t->level[s] != 0 ||
			    topo_fabric_link(g->f, (size_t)li, &l) < 0 || !(bad = link_is_bad(g, &l)))
				continue;
			if (g->nhca == cap) {
				struct hca_link *n = realloc(g->hca, (cap = cap ? 2 * cap : 64) * sizeof(*n));

				if (!n)
					return -1;
				g->hca = n;
			}
			g->hca[g->nhca++] =
				(struct hca_link){ s, topo_fabric_host_name(g->f, h), l.width, l.speed, bad };
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
	free(g->links);
	free(g->hca);
	free(g->hca_off);
	free(g->worst_up);
	free(g->nohca);
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
	g->worst_up = calloc(n, 1);
	if (!g->worst_up || !g->x || !g->y || !g->uplinks || !g->bad_up || !g->up_speed || svg_links_load(g) < 0)
		return rm_error_set(err, "svg", 0, 0, "out of memory");
	svg_layout(g);
	if (svg_uplinks(g) < 0 || svg_hca_links(g) < 0)
		return rm_error_set(err, "svg", 0, 0, "out of memory");
	if (g->nnohca || g->t->nunplaced)
		g->height += HOSTS_H / 2 + 10;
	if (extra_dim(extra, "width") > g->width)
		g->width = extra_dim(extra, "width");
	svg_header(g, eh ? eh + 12 : 0);
	svg_links(g);
	svg_boxes(g);
	embed(g->out, extra, g->height);
	fprintf(g->out, "</svg>\n");
	return 0;
}

/* The GPU picture above extra, as one <svg> element (caller frees); NULL without GPUs. */
static char *with_gpus(topo_cluster_t c, const char *extra)
{
	int gw = 0, gh = 0, ew = extra_dim(extra, "width"), eh = extra_dim(extra, "height");
	char *gpu = topo_report_svg_gpus(c, &gw, &gh), *out = NULL;
	const char *e = extra ? strstr(extra, "<svg") : NULL;
	size_t len, o;

	if (!gpu)
		return NULL;
	len = strlen(gpu) + (e ? strlen(e) : 0) + 512;
	if ((out = malloc(len))) {
		o = (size_t)snprintf(out, len,
				     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">\n"
				     "<svg x=\"0\" y=\"0\"%s",
				     gw > ew ? gw : ew, gh + (e ? eh + 12 : 0), gpu + 4);
		if (e && o < len)
			o += (size_t)snprintf(out + o, len - o, "<svg x=\"0\" y=\"%d\"%s", gh + 12, e + 4);
		if (o < len)
			snprintf(out + o, len - o, "</svg>\n");
	}
	free(gpu);
	return out;
}

int topo_report_svg(topo_cluster_t c, const char *extra, FILE *f, rm_error_t *err)
{
	struct svg g = { .c = c, .f = topo_cluster_fabric(c), .out = f };
	char *both = with_gpus(c, extra);
	int rc = 0, w, h;

	if (both)
		extra = both;
	w = extra_dim(extra, "width");
	h = extra_dim(extra, "height");

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
			extra && !both ? "3D torus (no InfiniBand fabric loaded)" : "no InfiniBand fabric loaded");
		embed(f, extra, 40);
		fprintf(f, "</svg>\n");
	}
	svg_free(&g);
	free(both);
	if (rc == 0 && ferror(f))
		rc = rm_error_set(err, "svg", 0, 0, "write error");
	return rc;
}
