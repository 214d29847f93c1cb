/*
 * Fuzz target: cluster description files (topo/cluster_file.c: topo_load_cluster_file), then finalize.
 * The input is written as <tmp>/c/cluster.conf next to <tmp>/data, a link to tests/data, so that the
 * relative paths of the seeds (../data/daemon/hwloc, ../data/ib/small-2level.topo, ...) load real
 * sources and mutations of them reach every key.
 */
#include "fuzz_util.h"
#include "topo.h"

static char dir[4096], conf[4200];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char link[4200];

	setenv("HWLOC_HIDE_ERRORS", "2", 1);
	snprintf(dir, sizeof(dir), "%s/c", fz_dir());
	snprintf(link, sizeof(link), "%s/data", fz_dir());
	if (mkdir(dir, 0700) < 0 || symlink(fz_data(), link) < 0)
		fz_die(dir);
	snprintf(conf, sizeof(conf), "%s/cluster.conf", dir);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err = { 0 };

	if (!c)
		fz_die("topo_cluster_create");
	fz_write(dir, "cluster.conf", data, size);
	if (topo_load_cluster_file(c, conf, &err) == 0)
		(void)topo_cluster_finalize(c, &err);
	topo_cluster_destroy(c);
	return 0;
}
