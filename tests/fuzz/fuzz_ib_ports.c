/* Fuzz target: ibnetdiscover -p ports reports (topo/net_ib_ports.c), then finalize and queries. */
#include "fuzz_ib_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_ib_parse(&ib_format_ports, data, size);
	return 0;
}
