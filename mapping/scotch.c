/*
 * mapping/scotch.c: the "scotch" engine, Scotch 7 static mapping (SCOTCH_graphMap) onto the target
 * of mapping/target_scotch.c with Scotch's default mapping strategy, in a Scotch context of its own
 * (deterministic mode, seeded with map_options_t.seed).
 *
 * Edge weights become integers 1..1000 proportional to the traffic (Scotch takes integer loads).
 * Scotch balances load but does not promise one vertex per terminal: the result goes through
 * map_compute's repair (map_repair) like every engine's.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "mapping_private.h"
#include "target_scotch.h"

#define SCOTCH_WEIGHT_MAX 1000.0

static int scotch_graph(const map_graph_t *g, SCOTCH_Graph *sg, SCOTCH_Num **vert, SCOTCH_Num **edge,
			SCOTCH_Num **edlo)
{
	uint64_t ne = g->xadj[g->n], k;
	double wmax = 0;
	uint32_t i;

	if (ne > INT32_MAX || g->n > INT32_MAX)
		return -1;
	*vert = malloc(((size_t)g->n + 1) * sizeof(**vert));
	*edge = malloc((ne + 1) * sizeof(**edge));
	*edlo = malloc((ne + 1) * sizeof(**edlo));
	if (!*vert || !*edge || !*edlo)
		return -1;
	for (k = 0; k < ne; k++)
		if (g->w[k] > wmax)
			wmax = g->w[k];
	for (i = 0; i <= g->n; i++)
		(*vert)[i] = (SCOTCH_Num)g->xadj[i];
	for (k = 0; k < ne; k++) {
		double v = floor(g->w[k] / wmax * SCOTCH_WEIGHT_MAX + 0.5);

		(*edge)[k] = (SCOTCH_Num)g->adj[k];
		(*edlo)[k] = v < 1 ? 1 : (SCOTCH_Num)v;
	}
	if (SCOTCH_graphInit(sg) != 0)
		return -1;
	if (SCOTCH_graphBuild(sg, 0, (SCOTCH_Num)g->n, *vert, NULL, NULL, NULL, (SCOTCH_Num)ne, *edge, *edlo)) {
		SCOTCH_graphExit(sg);
		return -1;
	}
	return 0;
}

/* Maps sg onto arch in a Scotch context of its own: deterministic, seeded, no global state. */
static int scotch_map(SCOTCH_Graph *sg, SCOTCH_Arch *arch, unsigned seed, SCOTCH_Num *part)
{
	SCOTCH_Context sctx;
	SCOTCH_Graph cg;
	SCOTCH_Strat strat;
	int rc = -1;

	if (SCOTCH_contextInit(&sctx) != 0)
		return -1;
	SCOTCH_contextOptionSetNum(&sctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
	SCOTCH_contextOptionSetNum(&sctx, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1);
	SCOTCH_contextRandomSeed(&sctx, (SCOTCH_Num)seed);
	if (SCOTCH_graphInit(&cg) == 0) {
		if (SCOTCH_contextBindGraph(&sctx, sg, &cg) == 0 && SCOTCH_stratInit(&strat) == 0) {
			rc = SCOTCH_graphMap(&cg, arch, &strat, part) == 0 ? 0 : -1;
			SCOTCH_stratExit(&strat);
		}
		SCOTCH_graphExit(&cg);
	}
	SCOTCH_contextExit(&sctx);
	return rc;
}

int map_engine_scotch(const map_ctx_t *ctx, uint32_t *perm)
{
	SCOTCH_Num *vert = NULL, *edge = NULL, *edlo = NULL, *part = NULL;
	SCOTCH_Graph sg;
	SCOTCH_Arch arch;
	uint32_t i;
	int rc = -1;

	if (ctx->g->n == 0)
		return 0;
	if (topo_target_scotch_arch(ctx->t, &arch, ctx->err) < 0)
		return -1;
	part = malloc(((size_t)ctx->g->n + 1) * sizeof(*part));
	if (part && scotch_graph(ctx->g, &sg, &vert, &edge, &edlo) == 0) {
		rc = scotch_map(&sg, &arch, ctx->opt.seed, part);
		SCOTCH_graphExit(&sg);
	}
	for (i = 0; rc == 0 && i < ctx->g->n; i++)
		perm[i] = part[i] >= 0 ? (uint32_t)part[i] : UINT32_MAX;
	SCOTCH_archExit(&arch);
	free(vert), free(edge), free(edlo), free(part);
	if (rc < 0) {
		errno = ENOMEM;
		rm_error_set(ctx->err, "scotch", 0, 0, "SCOTCH_graphMap failed");
	}
	return rc;
}
