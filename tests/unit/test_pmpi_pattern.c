/*
 * tests/unit/test_pmpi_pattern.c: the contract between the PMPI tracer's output and mapping/'s
 * pattern loader. The text below is exactly what RANKMAP_TRACE wrote for `cart_halo -p 1 4 1` on 4
 * ranks (tests/integration/pmpi_trace.sh checks those counts by hand): a general coordinate Matrix
 * Market file, row = sender, column = receiver, values bytes then messages. Loaded with each
 * RANKMAP_METRIC, the ring's edges must carry both directions' traffic: 4856 + 8 bytes, 32 + 1
 * messages, and loggp a blend that grows with both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/harness.h"
#include "mapping.h"

static const char trace[] =
	"%%MatrixMarket matrix coordinate real general\n"
	"% rankmap trace: row = sending rank, column = receiving rank (MPI_COMM_WORLD, 1-based)\n"
	"% values: bytes messages\n"
	"4 4 8\n"
	"1 2 4856 32\n1 4 8 1\n2 1 8 1\n2 3 4856 32\n3 2 8 1\n3 4 4856 32\n4 1 4856 32\n4 3 8 1\n";

/* Weight of edge (a, b) in g, -1 if absent. */
static double weight(const map_graph_t *g, uint32_t a, uint32_t b)
{
	for (uint64_t k = g->xadj[a]; k < g->xadj[a + 1]; k++)
		if (g->adj[k] == b)
			return g->w[k];
	return -1;
}

int main(void)
{
	char path[] = "/tmp/rankmap-pmpi-pattern.XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	double loggp[4] = { 0 };

	if (!f) {
		fail("cannot create %s", path);
		return harness_done();
	}
	fputs(trace, f);
	fclose(f);
	map_metric_t metrics[] = { MAP_METRIC_BYTES, MAP_METRIC_MESSAGES, MAP_METRIC_LOGGP };
	double expect[] = { 4856 + 8, 32 + 1, -1 };

	for (int m = 0; m < 3; m++) {
		rm_error_t err = { 0 };
		map_graph_t *g = map_graph_load(path, metrics[m], &err);

		check(g != NULL, "metric %d: load failed: %s", m, err.text);
		if (!g)
			continue;
		check(g->n == 4, "metric %d: %u vertices", m, g->n);
		for (uint32_t a = 0; a < 4; a++) {
			uint32_t b = (a + 1) % 4;
			double w = weight(g, a, b);

			check(w == weight(g, b, a), "metric %d: edge %u-%u not symmetric", m, a, b);
			if (expect[m] > 0)
				check(w == expect[m], "metric %d: edge %u-%u weight %g, expected %g", m, a, b, w,
				      expect[m]);
			else
				loggp[a] = w;
			check(weight(g, a, (a + 2) % 4) < 0, "metric %d: no edge %u-%u", m, a, (a + 2) % 4);
		}
		map_graph_destroy(g);
	}
	for (int a = 0; a < 4; a++)
		check(loggp[a] > 0 && loggp[a] == loggp[0], "loggp weight of edge %d: %g", a, loggp[a]);
	unlink(path);
	return harness_done();
}
