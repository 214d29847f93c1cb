/* Fuzz target: torus config files (topo/net_torus.c) through topo_load_torus, finalize, distances. */
#include "fuzz_util.h"
#include "topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err = { 0 };
	size_t i, n;

	if (!c)
		fz_die("topo_cluster_create");
	if (topo_load_torus(c, fz_path(data, size), &err) == 0 && topo_cluster_finalize(c, &err) == 0) {
		n = topo_nhosts(c);
		for (i = 0; i < n && i < 64; i++) {
			(void)topo_host_name(c, i);
			(void)topo_host_hops(c, i, n - 1 - i);
		}
	}
	topo_cluster_destroy(c);
	return 0;
}
