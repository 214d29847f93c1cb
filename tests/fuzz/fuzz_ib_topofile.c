/* Fuzz target: ibnetdiscover topology files (topo/net_ib_topofile.c), then finalize and queries. */
#include "fuzz_ib_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_ib_parse(&ib_format_topofile, data, size);
	return 0;
}
