/* Fuzz target: Matrix Market communication patterns (mapping/pattern_mtx.c) from an fmemopen stream,
 * with the metric chosen as the loggp blend so both weight columns are read. */
#include "fuzz_util.h"
#include "mapping.h"
#include "mapping/mapping_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rm_error_t err = { 0 };
	FILE *f;

	if (!size || !(f = fmemopen((void *)data, size, "r")))
		return 0;
	map_graph_destroy(map_pattern_mtx_load(f, size, MAP_MAX_RANKS, "fuzz", MAP_METRIC_LOGGP, &err));
	fclose(f);
	return 0;
}
