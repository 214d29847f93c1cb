/*
 * Fuzz target: hwloc topology diffs (<host>.diff.xml applied to the reference XML it names) through
 * topo_load_hwloc_dir, on a directory holding a real reference (tests/data/daemon/hwloc/bonobo001.xml)
 * and the input as bonobo002.diff.xml.
 */
#include "fuzz_util.h"
#include "topo.h"

static char dir[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char src[4096], *xml;
	size_t len = 0;
	FILE *f;

	setenv("HWLOC_HIDE_ERRORS", "2", 1);
	snprintf(src, sizeof(src), "%s/daemon/hwloc/bonobo001.xml", fz_data());
	if (!(f = fopen(src, "r")))
		fz_die(src);
	xml = malloc(1 << 22);
	if (!xml)
		fz_die("malloc");
	len = fread(xml, 1, 1 << 22, f);
	fclose(f);
	snprintf(dir, sizeof(dir), "%s/hwloc", fz_dir());
	if (mkdir(dir, 0700) < 0)
		fz_die(dir);
	fz_write(dir, "bonobo001.xml", xml, len);
	free(xml);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t err = { 0 };

	if (!c)
		fz_die("topo_cluster_create");
	fz_write(dir, "bonobo002.diff.xml", data, size);
	if (topo_load_hwloc_dir(c, dir, &err) == 0)
		(void)topo_cluster_finalize(c, &err);
	topo_cluster_destroy(c);
	return 0;
}
