/* Fuzz target: TreeMatch dense patterns (mapping/pattern_dense.c) from an fmemopen stream, and the
 * format detection of map_graph_load on the same input (through a memfd path). */
#include "fuzz_util.h"
#include "mapping.h"
#include "mapping/mapping_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rm_error_t err = { 0 }, err2 = { 0 };
	FILE *f;

	if (size && (f = fmemopen((void *)data, size, "r"))) {
		map_graph_destroy(map_pattern_dense_load(f, MAP_MAX_RANKS, "fuzz", &err));
		fclose(f);
	}
	map_graph_destroy(map_graph_load(fz_path(data, size), MAP_METRIC_DEFAULT, &err2));
	return 0;
}
