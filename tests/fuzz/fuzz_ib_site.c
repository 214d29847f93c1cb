/* Fuzz target: site fabric files (topo/net_ib_site.c), then finalize (rails, dragonfly groups) and queries. */
#include "fuzz_ib_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_ib_parse(&ib_format_site, data, size);
	return 0;
}
