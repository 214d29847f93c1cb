/*
 * Fuzz target: node-name maps (topo/net_ib_namemap.c) through topo_load_node_name_map, applied to a
 * real two-level fabric (tests/data/ib/small-2level.topo) so that finalize looks names up.
 */
#include "fuzz_util.h"
#include "topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char topo[4096];
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err = { 0 };
	size_t i;

	if (!topo[0])
		snprintf(topo, sizeof(topo), "%s/ib/small-2level.topo", fz_data());
	if (!c)
		fz_die("topo_cluster_create");
	if (topo_load_node_name_map(c, fz_path(data, size), &err) == 0) {
		if (topo_load_ib_file(c, topo, &err) < 0)
			fz_die(topo);
		if (topo_cluster_finalize(c, &err) == 0)
			for (i = 0; i < topo_nhosts(c); i++)
				(void)topo_host_name(c, i);
	}
	topo_cluster_destroy(c);
	return 0;
}
