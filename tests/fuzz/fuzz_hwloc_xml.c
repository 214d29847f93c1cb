/*
 * Fuzz target: hwloc XML as rankmapd's `register` receives it (topo_load_hwloc_xmlbuf: hwloc's parser,
 * then rankmap's normalisation, node-type sharing and counts), finalize, and a per-core target.
 */
#include "fuzz_util.h"
#include "topo.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	setenv("HWLOC_HIDE_ERRORS", "2", 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err = { 0 };
	const char *host = "node1";

	if (!c)
		fz_die("topo_cluster_create");
	if (topo_load_hwloc_xmlbuf(c, NULL, (const char *)data, size, "fuzz", &err) == 0 &&
	    topo_cluster_finalize(c, &err) == 0 && topo_nhosts(c) > 0) {
		host = topo_host_name(c, 0);
		topo_target_destroy(topo_target_from_hosts(c, &host, 1, 1, &err));
	}
	topo_cluster_destroy(c);
	return 0;
}
