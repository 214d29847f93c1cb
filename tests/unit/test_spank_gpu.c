/*
 * tests/unit/test_spank_gpu.c: --rankmap-bind=gpu's choices on recorded GPU nodes (plugin/spank/spank_gpu.c),
 * read through hwloc's HWLOC_XMLFILE as slurmstepd would: the compute GPUs counted once per PCI device in
 * PCI order, a GPU found by index or by UUID, its nearest cores (checked against the GPU's locality as
 * hwloc gives it), its nearest NIC (checked against the tree: same NUMA node or package, NICs equally near
 * shared out) and the transport variables for that NIC.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spank_gpu.h"
#include "topo.h"
#include "topo_gpu.h"
#include "tests/harness.h"

#ifndef TOP
#define TOP "."
#endif

static hwloc_topology_t load(const char *xml)
{
	char path[512];
	hwloc_topology_t t;
	rm_error_t err = { 0 };

	snprintf(path, sizeof(path), "%s/tests/data/gpu/%s", getenv("RANKMAP_TOP") ? getenv("RANKMAP_TOP") : TOP, xml);
	setenv("HWLOC_XMLFILE", path, 1);
	if (rm_spank_gpu_topology(&t, &err) < 0) {
		fail("%s does not load: %s", path, err.text);
		exit(harness_done());
	}
	return t;
}

static rm_gpu_pick_t by_index(int i)
{
	rm_gpu_pick_t p = { .ns = RM_GPU_NS_PCI, .id = { .index = i, .sub = -1 } };

	snprintf(p.source, sizeof(p.source), "CUDA_VISIBLE_DEVICES=%d", i);
	return p;
}

static const char *var(const rm_spank_nic_var_t *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return v[i].value;
	return NULL;
}

/* The GPU's locality as a CPU list (what --rankmap-bind=gpu must bind to with every core allocated). */
static void locality(hwloc_topology_t t, hwloc_obj_t g, char *buf, size_t len)
{
	hwloc_bitmap_list_snprintf(buf, len, hwloc_get_non_io_ancestor_obj(t, g)->cpuset);
}

static void tioga(void)
{
	hwloc_topology_t t = load("mpibind/eas-tioga.xml");
	size_t ng = 0, nn = 0;
	hwloc_obj_t *g = rm_spank_gpu_list(t, &ng), *nic = rm_spank_nic_list(t, &nn);
	int uses[8] = { 0 };

	check(ng == 8, "MI250X blade: 8 GCDs (got %zu)", ng);
	check(nn == 4, "MI250X blade: the 4 Slingshot NICs, not the management Ethernet (got %zu)", nn);
	for (size_t i = 0; i + 1 < ng; i++)
		check(g[i]->attr->pcidev.bus < g[i + 1]->attr->pcidev.bus, "GPUs in PCI bus order");
	for (int i = 0; i < (int)ng; i++) {
		rm_spank_gpu_place_t p;
		rm_gpu_pick_t pick = by_index(i);
		rm_error_t err = { 0 };
		char loc[1024];
		rm_spank_nic_var_t v[RM_SPANK_NIC_VARS];
		size_t nv;

		if (rm_spank_gpu_place(t, &pick, NULL, &p, &err) < 0) {
			fail("GPU %d: %s", i, err.text);
			continue;
		}
		locality(t, g[i], loc, sizeof(loc));
		hwloc_bitmap_t mine = hwloc_bitmap_alloc(), l = hwloc_bitmap_alloc();

		hwloc_bitmap_list_sscanf(mine, p.cpus);
		hwloc_bitmap_list_sscanf(l, loc);
		check(p.gpu == i && !hwloc_bitmap_iszero(mine) && hwloc_bitmap_isincluded(mine, l),
		      "GPU %d: bound to its share of its locality %s (got %s)", i, loc, p.cpus);
		hwloc_bitmap_free(mine);
		hwloc_bitmap_free(l);
		check(p.nic >= 0 && hwloc_bitmap_isequal(hwloc_get_non_io_ancestor_obj(t, nic[p.nic])->nodeset,
							 hwloc_get_non_io_ancestor_obj(t, g[i])->nodeset),
		      "GPU %d: its NIC (%s) is on its NUMA node", i, p.nic_name);
		check(p.slingshot && !strncmp(p.nic_name, "hsi", 3) && p.nic_index == p.nic_name[3] - '0',
		      "GPU %d: a Slingshot NIC, Cray MPICH index from its name (%s, %d)", i, p.nic_name, p.nic_index);
		if (p.nic >= 0)
			uses[p.nic]++;
		nv = rm_spank_nic_vars(&p, 8, v);
		char want[64];

		snprintf(want, sizeof(want), "%d:0,1,2,3,4,5,6,7", p.nic_index);
		check(var(v, nv, "MPICH_OFI_NIC_POLICY") && !strcmp(var(v, nv, "MPICH_OFI_NIC_POLICY"), "USER") &&
			      var(v, nv, "MPICH_OFI_NIC_MAPPING") && !strcmp(var(v, nv, "MPICH_OFI_NIC_MAPPING"), want),
		      "GPU %d: Cray MPICH's mapping %s (got %s)", i, want,
		      var(v, nv, "MPICH_OFI_NIC_MAPPING") ? var(v, nv, "MPICH_OFI_NIC_MAPPING") : "none");
		check(var(v, nv, "UCX_NET_DEVICES") && !strcmp(var(v, nv, "UCX_NET_DEVICES"), p.nic_name) &&
			      !var(v, nv, "OMPI_MCA_btl_openib_if_include") &&
			      !strcmp(var(v, nv, "RANKMAP_NIC"), p.nic_name),
		      "GPU %d: UCX names the interface, no openib device", i);
	}
	for (size_t k = 0; k < nn; k++)
		check(uses[k] == 2, "NIC %zu serves two GCDs (got %d)", k, uses[k]);
	{ /* by UUID: ROCm's GPU-<hex> against the OS device's AMDUUID */
		rm_gpu_pick_t pick = { .ns = RM_GPU_NS_UUID, .source = "ROCR_VISIBLE_DEVICES" };
		rm_spank_gpu_place_t p;
		const char *u = NULL;

		for (hwloc_obj_t c = g[5]->io_first_child; c && !u; c = c->next_sibling)
			if (c->type == HWLOC_OBJ_OS_DEVICE)
				u = hwloc_obj_get_info_by_name(c, "AMDUUID");
		snprintf(pick.id.uuid, sizeof(pick.id.uuid), "GPU-%s", u ? u : "none");
		check(u && rm_spank_gpu_place(t, &pick, NULL, &p, NULL) == 0 && p.gpu == 5,
		      "GPU 5 found by its UUID %s", pick.id.uuid);
		snprintf(pick.id.uuid, sizeof(pick.id.uuid), "GPU-ffffffff");
		rm_error_t err = { 0 };

		check(rm_spank_gpu_place(t, &pick, NULL, &p, &err) == -1 && strstr(err.text, "GPU-ffffffff"),
		      "an unknown UUID is an error naming it (%s)", err.text);
	}
	{ /* the step's cores: only allocated ones, else the package's; an index past the GPUs */
		rm_gpu_pick_t pick = by_index(0);
		rm_spank_gpu_place_t p;
		rm_error_t err = { 0 };
		hwloc_bitmap_t s = hwloc_bitmap_alloc(), alloc = hwloc_bitmap_alloc();

		for (int c = 0; c < 4; c++)
			hwloc_bitmap_or(alloc, alloc, hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, (unsigned)c)->cpuset);
		check(rm_spank_gpu_place(t, &pick, "0-3", &p, &err) == 0, "cores 0-3 allocated (%s)", err.text);
		hwloc_bitmap_list_sscanf(s, p.cpus);
		check(!hwloc_bitmap_iszero(s) && hwloc_bitmap_isincluded(s, alloc), "bound inside the allocation (%s)",
		      p.cpus);
		hwloc_bitmap_free(s);
		hwloc_bitmap_free(alloc);
		pick = by_index(8);
		check(rm_spank_gpu_place(t, &pick, NULL, &p, &err) == -1 && strstr(err.text, "GPU 8 does not exist") &&
			      !strcmp(err.source, "CUDA_VISIBLE_DEVICES=8"),
		      "GPU 8 of 8 is an error naming the variable (%s: %s)", err.source, err.text);
		rm_error_clear(&err);
		pick = by_index(0);
		check(rm_spank_gpu_place(t, &pick, "9999", &p, &err) == -1 && strstr(err.text, "core 9999"),
		      "a core the host lacks (%s)", err.text);
	}
	free(g);
	free(nic);
	hwloc_topology_destroy(t);
}

static void h100(void)
{
	hwloc_topology_t t = load("flux-core/ipa20.xml");
	size_t ng = 0, nn = 0;
	hwloc_obj_t *g = rm_spank_gpu_list(t, &ng), *nic = rm_spank_nic_list(t, &nn);

	check(ng == 4, "H100 node: 4 GPUs, each counted once over its CUDA, NVML and OpenCL devices (got %zu)", ng);
	check(nn == 4, "H100 node: 4 ConnectX functions (got %zu)", nn);
	for (int i = 0; i < (int)ng; i++) {
		rm_gpu_pick_t pick = by_index(i);
		rm_spank_gpu_place_t p;
		rm_spank_nic_var_t v[RM_SPANK_NIC_VARS];
		char want[80];

		if (rm_spank_gpu_place(t, &pick, NULL, &p, NULL) < 0 || p.nic < 0) {
			fail("H100 GPU %d not placed", i);
			continue;
		}
		hwloc_obj_t gp =
			hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, hwloc_get_non_io_ancestor_obj(t, g[i]));
		hwloc_obj_t np = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE,
								hwloc_get_non_io_ancestor_obj(t, nic[p.nic]));

		check(gp == np, "H100 GPU %d: its NIC %s is on its package", i, p.nic_name);
		size_t nv = rm_spank_nic_vars(&p, 4, v);

		snprintf(want, sizeof(want), "%s:1", p.nic_name);
		check(!strncmp(p.nic_name, "mlx5_", 5) && var(v, nv, "UCX_NET_DEVICES") &&
			      !strcmp(var(v, nv, "UCX_NET_DEVICES"), want) &&
			      var(v, nv, "OMPI_MCA_btl_openib_if_include") &&
			      !strcmp(var(v, nv, "OMPI_MCA_btl_openib_if_include"), want) &&
			      !var(v, nv, "MPICH_OFI_NIC_POLICY"),
		      "H100 GPU %d: UCX and openib get %s, Cray MPICH nothing", i, want);
	}
	free(g);
	free(nic);
	hwloc_topology_destroy(t);
}

static void lassen(void)
{
	hwloc_topology_t t = load("mpibind/coral-lassen.xml");
	size_t ng = 0, nn = 0;
	hwloc_obj_t *g = rm_spank_gpu_list(t, &ng), *nic = rm_spank_nic_list(t, &nn);
	rm_spank_gpu_place_t p[4];

	check(ng == 4 && nn == 4, "AC922: 4 V100, 4 ConnectX ports (got %zu, %zu)", ng, nn);
	for (int i = 0; i < 4 && i < (int)ng; i++) {
		rm_gpu_pick_t pick = by_index(i);

		check(rm_spank_gpu_place(t, &pick, NULL, &p[i], NULL) == 0 && p[i].nic >= 0, "AC922 GPU %d placed", i);
	}
	/* the two GPUs of a socket see the same two ports of their socket's card equally near: one each */
	check(strcmp(p[0].nic_name, p[1].nic_name) && strcmp(p[2].nic_name, p[3].nic_name),
	      "GPUs sharing a dual-port card get one port each (%s %s %s %s)", p[0].nic_name, p[1].nic_name,
	      p[2].nic_name, p[3].nic_name);
	for (int i = 0; i < 4 && i < (int)ng; i++) {
		hwloc_obj_t gp =
			hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, hwloc_get_non_io_ancestor_obj(t, g[i]));
		hwloc_obj_t np = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE,
								hwloc_get_non_io_ancestor_obj(t, nic[p[i].nic]));

		check(gp == np, "AC922 GPU %d: its port %s is on its socket", i, p[i].nic_name);
	}
	free(g);
	free(nic);
	hwloc_topology_destroy(t);
}

/* The plugin's choices (its own reading of hwloc) agree with the model's (topo/topo_gpu.h): the same GPUs
 * in the same order, each GPU's nearest NIC and its cores (every core allocated). */
static void agree_with_model(const char *xml)
{
	char path[512];
	rm_error_t err = { 0 };
	topo_cluster_t c = topo_cluster_create();
	hwloc_topology_t t = load(xml);
	size_t ng = 0;
	hwloc_obj_t *g = rm_spank_gpu_list(t, &ng);

	snprintf(path, sizeof(path), "tests/data/gpu/%s", xml);
	if (!c || topo_load_hwloc_xml(c, path, "h", &err) < 0 || topo_cluster_finalize(c, &err) < 0) {
		fail("%s: the model does not load: %s", xml, err.text);
		goto out;
	}
	check(topo_host_ngpus(c, 0) == ng && ng > 0, "%s: %zu GPUs, the model %zu", xml, ng, topo_host_ngpus(c, 0));
	for (size_t i = 0; i < ng && i < topo_host_ngpus(c, 0); i++) {
		const topo_gpu_t *mg = topo_host_gpu(c, 0, i);
		const topo_nic_t *mn = mg->nic >= 0 ? topo_host_nic(c, 0, (size_t)mg->nic) : NULL;
		rm_gpu_pick_t pick = by_index((int)i);
		rm_spank_gpu_place_t p;
		char cpus[1024];

		hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), mg->cpuset);
		check(rm_spank_gpu_place(t, &pick, NULL, &p, NULL) == 0 &&
			      !strncmp(p.gpu_desc, mg->busid, strlen(mg->busid)) && !strcmp(p.cpus, cpus) &&
			      !strcmp(p.nic_name, mn ? mn->name : ""),
		      "%s GPU %zu: plugin %s cpus %s nic %s, model %s cpus %s nic %s", xml, i, p.gpu_desc, p.cpus,
		      p.nic_name, mg->busid, cpus, mn ? mn->name : "");
	}
out:
	free(g);
	hwloc_topology_destroy(t);
	topo_cluster_destroy(c);
}

int main(void)
{
	static const char *const xmls[] = { "mpibind/eas-tioga.xml",
					    "mpibind/coral-lassen.xml",
					    "mpibind/g4dnmetal.xml",
					    "flux-core/ipa20.xml",
					    "hwloc/nvidiaDGX2.xml",
					    "hwloc/power8gpudistances.xml",
					    "hwloc/32em64t-2n8c2t-pci-wholeio.xml" };

	for (size_t i = 0; i < sizeof(xmls) / sizeof(xmls[0]); i++)
		agree_with_model(xmls[i]);
	tioga();
	h100();
	lassen();
	return harness_done();
}
