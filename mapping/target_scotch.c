/*
 * mapping/target_scotch.c: Scotch target architectures from topo_target_t (see target_scotch.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "target_scotch.h"

/* Integer distances D[l] for Scotch from the level costs cost[] (t->cost, or as raised by net_costs):
 * the costs themselves when they are small integers, else scaled so that the largest is 1000. Every
 * level above the slots gets at least 1. Returns the scale (D per unit of cost). */
static double integer_costs(const topo_target_t *t, const double *cost, SCOTCH_Num *D)
{
	double max = 0, scale = 1;
	int l, integral = 1;

	for (l = 0; l < t->nlevels; l++) {
		if (cost[l] > max)
			max = cost[l];
		if (cost[l] != floor(cost[l]))
			integral = 0;
	}
	if (!integral || max > 1e6)
		scale = max > 0 ? 1000.0 / max : 1;
	for (l = 0; l < t->nlevels; l++) {
		double v = floor(cost[l] * scale + 0.5);

		D[l] = l == t->nlevels - 1 ? 0 : (SCOTCH_Num)(v < 1 ? 1 : v);
	}
	return scale;
}

/* Whether the decomposition target gets direct host-hub links for net_dist. */
static int has_net_links(const topo_target_t *t)
{
	return t->net_dist && t->slot_host && t->host_level >= 0 && t->host_level < t->nlevels - 1 &&
	       t->nhosts <= TOPO_SCOTCH_MAX_NET_HOSTS;
}

/* cost[l] = t->cost[l], except that the network levels (above the host level) are raised to the
 * largest net_dist between two hosts of the target. t->cost[] only samples adjacent slots, and a torus
 * pair can be farther apart than any adjacent one: in the decomposition graph the path between two
 * hosts through the root costs twice the root's cost, so a root cost below some net_dist would make
 * that host pair look closer than it is. O(nhosts^2), nhosts <= TOPO_SCOTCH_MAX_NET_HOSTS. */
static void net_costs(const topo_target_t *t, double *cost)
{
	double max = 0;
	uint32_t a, b;
	int l;

	for (l = 0; l < t->nlevels; l++)
		cost[l] = t->cost[l];
	if (!has_net_links(t))
		return;
	for (a = 0; a < t->nhosts; a++)
		for (b = a + 1; b < t->nhosts; b++) {
			double d = t->net_dist(t, a, b);

			if (d > max)
				max = d;
		}
	for (l = 0; l < t->host_level; l++)
		if (cost[l] < max)
			cost[l] = max;
}

/* Arity of each level when every group of the level above has the same number of children; 0 when the
 * tree is not uniform. */
static int uniform_arities(const topo_target_t *t, SCOTCH_Num *ar)
{
	uint32_t s, *count;
	int l, ok = 1;

	for (l = 1; ok && l < t->nlevels; l++) {
		uint32_t g;

		count = calloc(t->ngroups[l - 1], sizeof(*count));
		if (!count)
			return 0;
		for (s = 0; s < t->nslots; s++) {
			const uint32_t *gs = t->group + (size_t)s * t->nlevels;

			if (s == 0 || gs[l] != gs[l - t->nlevels])
				count[gs[l - 1]]++;
		}
		ar[l - 1] = count[0];
		for (g = 1; g < t->ngroups[l - 1]; g++)
			if (count[g] != count[0])
				ok = 0;
		free(count);
	}
	return ok;
}

struct hub_graph {
	SCOTCH_Num nv, ne, *vert, *edge, *edlo;
};

/* Adds the edge a-b (weight w) in both directions; degrees were counted beforehand into fill. */
static void hub_edge(struct hub_graph *h, SCOTCH_Num *fill, SCOTCH_Num a, SCOTCH_Num b, SCOTCH_Num w)
{
	h->edge[fill[a]] = b, h->edlo[fill[a]++] = w;
	h->edge[fill[b]] = a, h->edlo[fill[b]++] = w;
}

/* Node of slot s at level l: the slot itself at the deepest level, else the hub of its group. */
static SCOTCH_Num hub_of(const topo_target_t *t, const SCOTCH_Num *off, uint32_t s, int l)
{
	return l == t->nlevels - 1 ? (SCOTCH_Num)s : off[l] + (SCOTCH_Num)t->group[(size_t)s * t->nlevels + l];
}

/* Visits each tree edge (node at level l, l >= 1, to its parent) exactly once, and each host pair. */
static void hub_edges(const topo_target_t *t, const SCOTCH_Num *off, const SCOTCH_Num *D, double scale,
		      const SCOTCH_Num *hhub, struct hub_graph *h, SCOTCH_Num *fill, int count_only)
{
	uint32_t s, a, b;
	int l, L = t->nlevels;

	for (s = 0; s < t->nslots; s++) {
		for (l = 1; l < L; l++) {
			const uint32_t *gs = t->group + (size_t)s * L;
			SCOTCH_Num w = D[l - 1] - D[l] > 0 ? D[l - 1] - D[l] : 1;

			if (s > 0 && l < L - 1 && gs[l] == gs[l - L])
				continue; /* this group's edge was added at its first slot */
			if (count_only)
				fill[hub_of(t, off, s, l)]++, fill[hub_of(t, off, s, l - 1)]++;
			else
				hub_edge(h, fill, hub_of(t, off, s, l), hub_of(t, off, s, l - 1), w);
		}
	}
	if (!hhub)
		return;
	for (a = 0; a < t->nhosts; a++)
		for (b = a + 1; b < t->nhosts; b++) {
			SCOTCH_Num ha = hhub[a], hb = hhub[b];
			double nd = t->net_dist(t, a, b) * scale;
			SCOTCH_Num w = (SCOTCH_Num)floor(2 * nd - 2 * D[t->host_level] + 0.5);

			if (count_only)
				fill[ha]++, fill[hb]++;
			else
				hub_edge(h, fill, ha, hb, w > 0 ? w : 1);
		}
}

/* The decomposition is built by randomised recursive bipartitioning, by default in Scotch's
 * threaded, unseeded global context: the same target gave a different architecture from run to run.
 * It is built in a context of its own, deterministic and with a fixed seed, so that the same target
 * always gives the same architecture (and the same mapping). */
static int deco_build(SCOTCH_Arch *arch, SCOTCH_Graph *graph, SCOTCH_Num n, SCOTCH_Num *list)
{
	SCOTCH_Context sctx;
	SCOTCH_Graph cg;
	int rc = -1;

	if (SCOTCH_contextInit(&sctx) != 0)
		return -1;
	SCOTCH_contextOptionSetNum(&sctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
	SCOTCH_contextOptionSetNum(&sctx, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1);
	SCOTCH_contextRandomSeed(&sctx, 1);
	if (SCOTCH_graphInit(&cg) == 0) {
		if (SCOTCH_contextBindGraph(&sctx, graph, &cg) == 0)
			rc = SCOTCH_archBuild2(arch, &cg, n, list) == 0 ? 0 : -1;
		SCOTCH_graphExit(&cg);
	}
	SCOTCH_contextExit(&sctx);
	return rc;
}

static int build_deco(const topo_target_t *t, const SCOTCH_Num *D, double scale, SCOTCH_Arch *arch, rm_error_t *err)
{
	struct hub_graph h = { 0 };
	SCOTCH_Num off[64], *fill, *list, *hhub = NULL, i;
	SCOTCH_Graph graph;
	int l, rc = -1;

	h.nv = (SCOTCH_Num)t->nslots;
	for (l = 0; l < t->nlevels - 1; l++)
		off[l] = h.nv, h.nv += (SCOTCH_Num)t->ngroups[l];
	if (has_net_links(t)) { /* the hub of each target-local host */
		hhub = malloc(((size_t)t->nhosts + 1) * sizeof(*hhub));
		if (!hhub)
			return rm_error_set(err, "scotch target", 0, 0, "out of memory");
		for (i = 0; i < (SCOTCH_Num)t->nslots; i++)
			hhub[t->slot_host[i]] = hub_of(t, off, (uint32_t)i, t->host_level);
	}
	fill = calloc((size_t)h.nv + 1, sizeof(*fill));
	h.vert = malloc(((size_t)h.nv + 1) * sizeof(*h.vert));
	list = malloc(((size_t)t->nslots + 1) * sizeof(*list));
	if (!fill || !h.vert || !list)
		goto out;
	hub_edges(t, off, D, scale, hhub, &h, fill, 1);
	for (h.vert[0] = 0, i = 0; i < h.nv; i++)
		h.vert[i + 1] = h.vert[i] + fill[i], fill[i] = h.vert[i];
	h.ne = h.vert[h.nv];
	h.edge = malloc(((size_t)h.ne + 1) * sizeof(*h.edge));
	h.edlo = malloc(((size_t)h.ne + 1) * sizeof(*h.edlo));
	if (!h.edge || !h.edlo)
		goto out;
	hub_edges(t, off, D, scale, hhub, &h, fill, 0);
	for (i = 0; i < (SCOTCH_Num)t->nslots; i++)
		list[i] = i;
	if (SCOTCH_graphInit(&graph) == 0) {
		if (SCOTCH_graphBuild(&graph, 0, h.nv, h.vert, NULL, NULL, NULL, h.ne, h.edge, h.edlo) == 0 &&
		    deco_build(arch, &graph, (SCOTCH_Num)t->nslots, list) == 0)
			rc = 0;
		SCOTCH_graphExit(&graph);
	}
out:
	if (rc < 0)
		rm_error_set(err, "scotch target", 0, 0, "cannot build the Scotch target (%u slots)", t->nslots);
	free(fill), free(h.vert), free(h.edge), free(h.edlo), free(list), free(hhub);
	return rc;
}

int topo_target_scotch_arch(const topo_target_t *t, SCOTCH_Arch *arch, rm_error_t *err)
{
	SCOTCH_Num D[64], ar[64], link[64];
	double cost[64], scale;
	int l, rc;

	if (!t || !arch || t->nlevels < 1 || t->nlevels > 64 || t->nslots == 0 || t->nslots > INT32_MAX / 4) {
		errno = EINVAL;
		return rm_error_set(err, "scotch target", 0, 0, "invalid target");
	}
	if (SCOTCH_archInit(arch) != 0) {
		errno = ENOMEM;
		return rm_error_set(err, "scotch target", 0, 0, "SCOTCH_archInit failed");
	}
	net_costs(t, cost);
	scale = integer_costs(t, cost, D);
	if (t->nlevels == 1)
		rc = SCOTCH_archCmplt(arch, 1);
	else if (!t->net_dist && uniform_arities(t, ar)) {
		for (l = 0; l < t->nlevels - 1; l++)
			link[l] = D[l];
		rc = SCOTCH_archTleaf(arch, t->nlevels - 1, ar, link);
	} else {
		rc = build_deco(t, D, scale, arch, err);
	}
	if (rc != 0) {
		SCOTCH_archExit(arch);
		errno = EINVAL;
		return rm_error_set(err, "scotch target", 0, 0, "Scotch rejected the target");
	}
	return 0;
}
