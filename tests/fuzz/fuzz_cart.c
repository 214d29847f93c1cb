/* Fuzz target: Cartesian specs (mapping/cart.c: map_cart_parse), and the halo graph of every spec of
 * at most 65,536 ranks (map_graph_cart), whose edge count is checked against the grid's. */
#include "fuzz_util.h"
#include "mapping.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fz_string(data, size);
	rm_error_t err = { 0 };
	map_cart_t cart;
	map_graph_t *g;
	double n = 1;
	int i;

	if (map_cart_parse(s, &cart, &err) == 0) {
		if (cart.ndims < 1 || cart.ndims > MAP_CART_MAXDIMS)
			abort(); /* the parser promised a valid spec */
		for (i = 0; i < cart.ndims; i++) {
			if (cart.dims[i] < 1)
				abort();
			n *= cart.dims[i];
		}
		if (n <= 65536 && (g = map_graph_cart(&cart, &err))) {
			if (g->n != (uint32_t)n || g->xadj[g->n] > (uint64_t)g->n * 2 * (uint64_t)cart.ndims)
				abort();
			map_graph_destroy(g);
		}
	}
	free(s);
	return 0;
}
