/*
 * mapping/scotch.c: the "scotch" engine, Scotch 7 static mapping (SCOTCH_graphMap) onto the target
 * of mapping/target_scotch.c with Scotch's default mapping strategy, in a Scotch context of its own
 * (deterministic mode, seeded with map_options_t.seed, one thread).
 *
 * Scotch's contract on loads: it adds and compares edge loads times target distances in SCOTCH_Num
 * (32 bits in Debian's build), e.g. a vertex's edge-load sum times the distance between the two
 * halves of a bipartition, or a whole cut. Past 2^31 they wrap, its diffusion bipartitioner then
 * computes NaN and aborts (bgraph_bipart_df.c). So the integer loads are bounded: the sum of all arc
 * loads times the largest distance stays under SCOTCH_LOAD_LIMIT, a quarter of SCOTCH_Num's range.
 * The distances get at most min(1000, LIMIT / (2 arcs)) and the loads what is left, up to 1000, in
 * proportion to the traffic (at least 1 each).
 *
 * One thread: in Scotch 7.0.3 (and 7.0.8), when that bipartitioner aborts, its threads can leave
 * their loop at different passes (the abort flag is read after a barrier while another thread may
 * already set it in the next pass); their barriers then pair up wrongly, and the process hangs
 * for good or a thread writes into freed memory (SIGSEGV). With one thread no barrier can be missed.
 * One thread also keeps the result the same on any machine (the threads split the work by count),
 * and Scotch neither spawns threads nor pins the caller's thread to a core inside a user's job.
 *
 * Scotch balances load but does not promise one vertex per terminal: the result goes through
 * map_compute's repair (map_repair) like every engine's.
 *
 * Scale: at most MAP_SCOTCH_MAX_RANKS ranks (mapping_private.h), whoever asks (--algo, RANKMAP_ALGO,
 * a daemon request, auto); larger graphs get an error naming the limit and the engines that take them.
 * Measured on Cartesian graphs onto tleaf targets (tests/bench/bench_scale.c; CPU time): 9 ms at 1,024
 * ranks, 44 ms at 4,096, 0.15 s at 8,192, 0.53 s at 16,384, 2.4 s at 32,768, 12 s at 65,536. The growth
 * exponent is 1.15 from 1,024 to 4,096 (n log n: 1.17), 1.7 to 8,192, then 2.2 to 2.4: libscotch's
 * recursive bipartitioning onto the target's tree (its own gmap shows the same).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "mapping_private.h"
#include "target_scotch.h"

#define SCOTCH_WEIGHT_MAX 1000.0
#define SCOTCH_DIST_MAX 1000.0
#define SCOTCH_LOAD_LIMIT ((double)((SCOTCH_Num)1 << (sizeof(SCOTCH_Num) * 8 - 3)))

/* The largest distance the target may get for ne arcs of load at least 1 (half the load budget). */
static SCOTCH_Num scotch_dcap(uint64_t ne)
{
	double d = SCOTCH_LOAD_LIMIT / (2.0 * (double)(ne ? ne : 1));

	return (SCOTCH_Num)(d > SCOTCH_DIST_MAX ? SCOTCH_DIST_MAX : floor(d));
}

/* Integer loads for g's arcs: w / wmax * top, at least 1, with top (<= SCOTCH_WEIGHT_MAX) such that
 * their sum times dmax stays under SCOTCH_LOAD_LIMIT. */
static void scotch_loads(const map_graph_t *g, SCOTCH_Num dmax, SCOTCH_Num *edlo)
{
	uint64_t ne = g->xadj[g->n], k;
	double wmax = 0, wsum = 0, top;

	if (dmax < 1)
		dmax = 1; /* a one-slot target */
	for (k = 0; k < ne; k++)
		if (g->w[k] > wmax)
			wmax = g->w[k];
	for (k = 0; k < ne && wmax > 0; k++)
		wsum += g->w[k] / wmax;
	/* sum <= ne + wsum * top <= LIMIT / dmax; scotch_dcap left at least ne for the rest */
	top = wsum > 0 ? floor((SCOTCH_LOAD_LIMIT / (double)dmax - (double)ne) / wsum) : 1;
	if (top > SCOTCH_WEIGHT_MAX)
		top = SCOTCH_WEIGHT_MAX;
	for (k = 0; k < ne; k++) {
		double v = wmax > 0 ? floor(g->w[k] / wmax * top + 0.5) : 1;

		edlo[k] = v < 1 ? 1 : (SCOTCH_Num)v;
	}
}

static int scotch_graph(const map_graph_t *g, SCOTCH_Num dmax, SCOTCH_Graph *sg, SCOTCH_Num **vert, SCOTCH_Num **edge,
			SCOTCH_Num **edlo)
{
	uint64_t ne = g->xadj[g->n], k;
	uint32_t i;

	*vert = malloc(((size_t)g->n + 1) * sizeof(**vert));
	*edge = malloc((ne + 1) * sizeof(**edge));
	*edlo = malloc((ne + 1) * sizeof(**edlo));
	if (!*vert || !*edge || !*edlo)
		return -1;
	for (i = 0; i <= g->n; i++)
		(*vert)[i] = (SCOTCH_Num)g->xadj[i];
	for (k = 0; k < ne; k++)
		(*edge)[k] = (SCOTCH_Num)g->adj[k];
	scotch_loads(g, dmax, *edlo);
	if (SCOTCH_graphInit(sg) != 0)
		return -1;
	if (SCOTCH_graphBuild(sg, 0, (SCOTCH_Num)g->n, *vert, NULL, NULL, NULL, (SCOTCH_Num)ne, *edge, *edlo)) {
		SCOTCH_graphExit(sg);
		return -1;
	}
	return 0;
}

/* Maps sg onto arch in a Scotch context of its own: one thread, deterministic, seeded, no global
 * state. */
static int scotch_map(SCOTCH_Graph *sg, SCOTCH_Arch *arch, unsigned seed, SCOTCH_Num *part)
{
	SCOTCH_Context sctx;
	SCOTCH_Graph cg;
	SCOTCH_Strat strat;
	int rc = -1;

	if (SCOTCH_contextInit(&sctx) != 0)
		return -1;
	if (SCOTCH_contextThreadSpawn(&sctx, 1, NULL) != 0) {
		SCOTCH_contextExit(&sctx);
		return -1;
	}
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
	uint64_t ne = ctx->g->xadj[ctx->g->n];
	map_scotch_arch_t arch;
	SCOTCH_Graph sg;
	uint32_t i;
	int rc = -1;

	if (ctx->g->n == 0)
		return 0;
	if (ctx->g->n > MAP_SCOTCH_MAX_RANKS) {
		errno = E2BIG;
		return rm_error_set(ctx->err, "scotch", 0, 0,
				    "%u ranks is beyond Scotch's scale (at most %u: its recursive bipartitioning grows "
				    "as n^2 above that, 12 s of CPU at 65,536 ranks); use treematch, bisect or auto",
				    ctx->g->n, (unsigned)MAP_SCOTCH_MAX_RANKS);
	}
	if (ne > INT32_MAX || ctx->g->n > INT32_MAX || scotch_dcap(ne) < 1) {
		errno = E2BIG;
		return rm_error_set(ctx->err, "scotch", 0, 0, "graph too large for Scotch's integer loads");
	}
	if (map_scotch_arch_init(&arch, ctx->t, scotch_dcap(ne), ctx->err) < 0)
		return -1;
	part = malloc(((size_t)ctx->g->n + 1) * sizeof(*part));
	if (part && scotch_graph(ctx->g, arch.dmax, &sg, &vert, &edge, &edlo) == 0) {
		rc = scotch_map(&sg, arch.arch, ctx->opt.seed, part);
		SCOTCH_graphExit(&sg);
	}
	for (i = 0; rc == 0 && i < ctx->g->n; i++)
		perm[i] = part[i] >= 0 ? (uint32_t)part[i] : UINT32_MAX;
	map_scotch_arch_exit(&arch);
	free(vert), free(edge), free(edlo), free(part);
	if (rc < 0) {
		errno = ENOMEM;
		rm_error_set(ctx->err, "scotch", 0, 0, "SCOTCH_graphMap failed");
	}
	return rc;
}
