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
#define COL_W 125       /* leaf column */
#define BOX_W 118       /* switch box */
#define BOX_H 44
#define PER_ROW 12      /* switches or leaves per row */
#define ROW_H 80        /* upper switch row */
#define HOSTS_H 118     /* host box */
#define BAND_H (48 + BOX_H + 14 + HOSTS_H + 16)
#define MAX_DRAWN 300   /* links drawn one by one up to this many */
#define LIST_LINE 17    /* characters per line of a host list */
#define LIST_LINES 5

static const struct { const char *name, *colour; } speed_colours[] = {
	{ "SDR", "#9e9e9e" }, { "DDR", "#8d6e63" }, { "QDR", "#1e88e5" }, { "FDR10", "#00897b" },
	{ "FDR", "#00acc1" }, { "EDR", "#43a047" },  { "HDR", "#8e24aa" }, { "NDR", "#f57c00" },
	{ "XDR", "#3949ab" },
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
	topo_link_info_t *links;  /* the fabric's cables (topo_fabric_link) */
	size_t nlinks;
	topo_swtree_t *t;
	FILE *out;
	double *x, *y;            /* per switch: centre of the box's top edge */
	size_t *uplinks, *bad_up; /* per switch: links to the level above, of which below the norm */
	uint8_t *up_speed;        /* per switch: speed of its uplinks (the most common) */
	uint8_t *nspeed, *nwidth; /* per subnet: the norm */
	int width, height, bus, nbands, upper_rows;
	size_t pre, suf;          /* length of the prefix and suffix all switch names share (not shown) */
	size_t first_kept;
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

/* Prefix and suffix every kept switch name shares (shown once in the caption, not in each box). */
static void common_affixes(struct svg *g)
{
	const char *first = NULL;
	size_t s, pre = 0, suf = 0, len = 0;

	for (s = 0; s < g->t->nsw; s++) {
		const char *n = g->t->name[s];
		size_t l = strlen(n), k;

		if (!g->t->kept[s])
			continue;
		if (!first) {
			first = n, len = l, pre = suf = l, g->first_kept = s;
			continue;
		}
		for (k = 0; k < pre && n[k] == first[k]; k++)
			;
		pre = k;
		for (k = 0; k < suf && k < l && n[l - 1 - k] == first[len - 1 - k]; k++)
			;
		suf = k;
	}
	if (pre + suf >= len) /* one switch, or names that are prefixes of each other */
		pre = suf = 0;
	g->pre = pre >= 4 ? pre : 0;
	g->suf = suf >= 4 ? suf : 0;
}

/* A switch name without the common affixes, cut in the middle to n characters. */
static void esc_name(const struct svg *g, FILE *f, const char *name, size_t n)
{
	char buf[256];
	size_t l = strlen(name), k = l > g->pre + g->suf ? l - g->pre - g->suf : l;
	const char *p = l > g->pre + g->suf ? name + g->pre : name;

	if (k > n && n > 6 && n < sizeof(buf)) {
		memcpy(buf, p, n / 2 - 1);
		memcpy(buf + n / 2 - 1, "..", 2);
		memcpy(buf + n / 2 + 1, p + k - (n - n / 2 - 1), n - n / 2 - 1);
		k = n;
	} else {
		k = k < sizeof(buf) - 1 ? k : sizeof(buf) - 1;
		memcpy(buf, p, k);
	}
	buf[k] = '\0';
	esc(f, buf);
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
	size_t s, i, n, widest = 1;
	int k, y = 84;

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
		for (s = 0, i = 0; s < g->t->nsw; s++) {
			if (!g->t->kept[s] || g->t->level[s] != k)
				continue;
			g->x[s] = row_x(g, i, n);
			g->y[s] = k > 0 ? y + (double)(i / PER_ROW) * ROW_H : y + (double)(i / PER_ROW) * BAND_H + 48;
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
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		   "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\">\n"
		   "<title>rankmap: InfiniBand fabric</title>\n"
		   "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		g->width, g->height + extra_h, g->width, g->height + extra_h);
	fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"bold\">InfiniBand fabric: %zu hosts under "
		   "%zu leaf switches", MARGIN, g->t->nplaced, g->nleaves);
	for (k = 1; k <= g->t->max_level && k < 8; k++)
		if (k == 1)
			fprintf(f, ", %zu spine%s", per[k], per[k] == 1 ? "" : "s");
		else
			fprintf(f, ", %zu level-%d switch%s", per[k], k, per[k] == 1 ? "" : "es");
	fprintf(f, " (%zu subnet%s)</text>\n", g->t->nsubnets, g->t->nsubnets > 1 ? "s" : "");
	for (k = 1; k < TOPO_IB_NSPEEDS; k++) {
		if (!present[k])
			continue;
		fprintf(f, "<line x1=\"%d\" y1=\"46\" x2=\"%d\" y2=\"46\" stroke=\"%s\" stroke-width=\"4\"/>"
			   "<text x=\"%d\" y=\"50\">%s</text>\n", x, x + 22, topo_report_svg_speed_colour(topo_fabric_speed_name((unsigned)k)),
			x + 26, topo_fabric_speed_name((unsigned)k));
		x += 72, nsp++;
	}
	fprintf(f, "<line x1=\"%d\" y1=\"46\" x2=\"%d\" y2=\"46\" stroke=\"#d50000\" stroke-width=\"2.5\" "
		   "stroke-dasharray=\"5,3\"/><text x=\"%d\" y=\"50\" fill=\"#d50000\">below the subnet's usual "
		   "speed/width</text>\n", x, x + 22, x + 26);
	fprintf(f, "<text x=\"%d\" y=\"66\" fill=\"#555555\">%s Hover a box for details.", MARGIN,
		g->bus ? "Links bundled: each switch has one stub onto the bus with its uplink count."
		       : "Every switch-to-switch link is drawn (dotted arcs: links within a level).");
	if (g->pre || g->suf) {
		fprintf(f, " Switch names shown without their common ");
		if (g->pre)
			fprintf(f, "prefix %.*s%s", (int)g->pre, g->t->name[g->first_kept], g->suf ? " and " : "");
		if (g->suf)
			fprintf(f, "suffix %s", g->t->name[g->first_kept] + strlen(g->t->name[g->first_kept]) - g->suf);
		fprintf(f, ".");
	}
	fprintf(f, "</text>\n");
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
		my = (g->y[a] < g->y[b] ? g->y[a] : g->y[b]) - 18 - (g->x[a] > g->x[b] ? g->x[a] - g->x[b] : g->x[b] - g->x[a]) / 12;
		fprintf(g->out, "<path d=\"M%.1f %.1f Q%.1f %.1f %.1f %.1f\" fill=\"none\" stroke=\"%s\" "
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
		     bad ? "#d50000" : topo_report_svg_speed_colour(topo_fabric_speed_name(l->speed)), bad ? 2.5 : 1.2, bad);
	}
	if (!g->bus) {
		svg_lateral(g);
		return;
	}
	for (s = 0, bus_y = 0; s < (long)g->t->nsw; s++)
		if (g->t->kept[s] && g->t->level[s] == 0 && g->y[s] - 32 > bus_y)
			bus_y = g->y[s] - 32;
	line(g->out, MARGIN - 8, 84 + BOX_H + 12, MARGIN - 8, bus_y, "#607d8b", 3, 0);
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
			     g->bad_up[s] ? "#d50000" : topo_report_svg_speed_colour(topo_fabric_speed_name(g->up_speed[s])), 3, 0);
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
	double x = g->x[s], y = g->y[s];

	fprintf(f, "<g><title>");
	esc(f, g->t->desc[s]);
	fprintf(f, "\nSlurm name %s\nGUID 0x%016llx, subnet %ld, level %d\n%zu neighbouring switches, %zu uplinks, "
		   "%u unconnected ports", g->t->name[s], (unsigned long long)g->t->guid[s], g->t->subnet[s],
		g->t->level[s], n, g->uplinks[s], unc);
	if (g->bad_up[s])
		fprintf(f, "\n%zu uplinks below the subnet's usual speed/width", g->bad_up[s]);
	fprintf(f, "</title>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"4\" fill=\"%s\" "
		   "stroke=\"%s\" stroke-width=\"%s\"/>\n", x - BOX_W / 2.0, y, BOX_W, BOX_H,
		g->t->level[s] == 0 ? "#e3f2fd" : "#eceff1", g->bad_up[s] ? "#d50000" : "#37474f",
		g->bad_up[s] ? "2" : "1");
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-weight=\"bold\" font-size=\"10\">",
		x, y + 13);
	esc_name(g, f, g->t->name[s], 20);
	fprintf(f, "</text>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">", x, y + 26);
	if (g->t->level[s] == 0 && g->uplinks[s])
		fprintf(f, "%u down, %zu up, %.2g:1", down, g->uplinks[s], (double)down / (double)g->uplinks[s]);
	else if (g->t->level[s] == 0)
		fprintf(f, "%u down, no uplink", down);
	else
		fprintf(f, "level %d, %zu links", g->t->level[s], n);
	fprintf(f, "</text>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\" fill=\"%s\">",
		x, y + 38, g->bad_up[s] ? "#d50000" : "#e65100");
	if (g->bad_up[s])
		fprintf(f, "%zu slow/narrow uplink%s", g->bad_up[s], g->bad_up[s] > 1 ? "s" : "");
	else if (unc)
		fprintf(f, "%u unconnected port%s", unc, unc > 1 ? "s" : "");
	fprintf(f, "</text></g>\n");
}

/* The box under a leaf: host count, the compressed list wrapped on commas, GUID-named count. */
static void svg_hosts(struct svg *g, double cx, double top, const char *const *hosts, size_t n, const char *what)
{
	FILE *f = g->out;
	const char **named = malloc((n + 1) * sizeof(*named));
	char *all = hostlist_compress(hosts, n), *list, *p, *q;
	size_t i, k = 0;
	int lines = 0;

	for (i = 0; named && i < n; i++)
		if (strncmp(hosts[i], "0x", 2))
			named[k++] = hosts[i];
	list = named ? hostlist_compress(named, k) : NULL;
	fprintf(f, "<g><title>%zu %s: ", n, what);
	esc(f, all ? all : "");
	fprintf(f, "</title>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"3\" fill=\"#fafafa\" "
		   "stroke=\"#90a4ae\"/>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-weight=\"bold\">%zu %s"
		   "</text>\n", cx - BOX_W / 2.0, top, BOX_W, HOSTS_H, cx, top + 15, n, n == 1 ? "host" : "hosts");
	for (p = list; p && *p && lines < LIST_LINES; lines++) {
		size_t len = strlen(p), cut = len;

		if (len > LIST_LINE) { /* cut after the last top-level comma that fits */
			int depth = 0;

			for (q = p, cut = 0; q < p + LIST_LINE; q++) {
				depth += *q == '[' ? 1 : *q == ']' ? -1 : 0;
				if (*q == ',' && depth == 0)
					cut = (size_t)(q - p) + 1;
			}
			if (!cut)
				cut = LIST_LINE;
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">", cx, top + 31 + lines * 13);
		q = strndup(p, cut);
		esc(f, lines == LIST_LINES - 1 && len > cut ? "..." : q);
		free(q);
		fprintf(f, "</text>\n");
		p += cut;
	}
	if (n > k)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\" fill=\"#d50000\">%s%zu "
			   "named by GUID</text>\n", cx, top + HOSTS_H - 8, k ? "+ " : "", n - k);
	fprintf(f, "</g>\n");
	free(list);
	free(all);
	free(named);
}

static void svg_boxes(struct svg *g)
{
	long s;

	for (s = 0; s < (long)g->t->nsw; s++) {
		if (!g->t->kept[s])
			continue;
		svg_switch(g, s);
		if (g->t->level[s] == 0)
			svg_hosts(g, g->x[s], g->y[s] + BOX_H + 14, g->t->host + g->t->host_off[s],
				  g->t->host_off[s + 1] - g->t->host_off[s], "hosts");
	}
	if (g->t->nunplaced) {
		fprintf(g->out, "<text x=\"%d\" y=\"%d\" fill=\"#d50000\">%zu hosts hang on no switch:</text>\n", MARGIN,
			g->height - MARGIN - 52, g->t->nunplaced);
		fprintf(g->out, "<text x=\"%d\" y=\"%d\" fill=\"#d50000\" font-size=\"10\">", MARGIN, g->height - MARGIN - 36);
		esc_cut(g->out, g->t->unplaced[0], 40);
		fprintf(g->out, "%s</text>\n", g->t->nunplaced > 1 ? " ..." : "");
	}
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
	fprintf(f, "<line x1=\"0\" y1=\"%d\" x2=\"100%%\" y2=\"%d\" stroke=\"#b0bec5\"/>\n<svg x=\"0\" y=\"%d\"%s", y, y,
		y + 6, p + 4);
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
	if (svg_uplinks(g) < 0)
		return rm_error_set(err, "svg", 0, 0, "out of memory");
	common_affixes(g);
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
		fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
			   "width=\"%d\" height=\"%d\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n"
			   "<title>rankmap cluster</title>\n<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" "
			   "fill=\"white\"/>\n<text x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"bold\">%s</text>\n",
			w, 40 + h + 12, MARGIN, extra ? "3D torus (no InfiniBand fabric loaded)" : "no InfiniBand fabric loaded");
		embed(f, extra, 40);
		fprintf(f, "</svg>\n");
	}
	svg_free(&g);
	if (rc == 0 && ferror(f))
		rc = rm_error_set(err, "svg", 0, 0, "write error");
	return rc;
}
