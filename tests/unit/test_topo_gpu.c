/*
 * tests/unit/test_topo_gpu.c: GPUs, NICs, GPU memory, link matrices and GPU-slot targets (topo_gpu.h)
 * over the recorded GPU nodes of tests/data/gpu. Every check is a property of the XML or of the model,
 * not a copy of its output: each GPU's cores lie in its locality and are its own; the hwloc 3.0 form of a
 * node gives the model its 2.x form gives; GPU memory NUMA nodes are the memory-only ones hwloc itself
 * shows; on a node whose link matrix is uniform every pair costs the same; with the MI250X site file a
 * quad-linked pair costs less than a single-linked one and shares a GPU group; bad site files are refused
 * naming file and line. (tests/integration/gpu_model.sh counts GPUs and NICs from the XML with python.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_private.h"
#include "mapping.h"
#include "tests/harness.h"

static char path_buf[1024];

static const char *data(const char *rel)
{
	snprintf(path_buf, sizeof(path_buf), "%s/gpu/%s", harness_data_dir(), rel);
	return path_buf;
}

static topo_cluster_t load(const char *rel, int ncopies, const char *links)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t e = { 0 };
	char host[32];
	int i;

	for (i = 0; i < ncopies; i++) {
		snprintf(host, sizeof(host), "g%d", i);
		if (topo_load_hwloc_xml(c, data(rel), host, &e) < 0) {
			fail("%s: %s", rel, e.text);
			topo_cluster_destroy(c);
			return NULL;
		}
	}
	if (links && topo_load_gpu_links(c, links, &e) < 0) {
		fail("%s: %s", links, e.text);
		topo_cluster_destroy(c);
		return NULL;
	}
	if (topo_cluster_finalize(c, &e) < 0) {
		fail("finalize %s: %s", rel, e.text);
		topo_cluster_destroy(c);
		return NULL;
	}
	return c;
}

static const char *gpu_files[] = {
	"mpibind/eas-tioga.xml",        "mpibind/coral-lassen.xml",
	"mpibind/g4dnmetal.xml",        "flux-core/ipa20.xml",
	"flux-core/sierra.xml",         "flux-core/tuo.SPX.xml",
	"flux-core/tuo.CPX.xml",        "hwloc/nvidiaDGX2.xml",
	"hwloc/power8gpudistances.xml", "hwloc/32em64t-2n8c2t-pci-wholeio.xml",
};

/* Properties every GPU and NIC must have. */
static void check_host(topo_cluster_t c, const char *f)
{
	hwloc_topology_t topo = topo_host_hwloc(c, 0);
	size_t n = topo_host_ngpus(c, 0), nn = topo_host_nnics(c, 0), i, j, with_nic = 0, nic_gpus = 0;

	check(n > 0, "%s: GPUs found", f);
	for (i = 0; i < n; i++) {
		const topo_gpu_t *g = topo_host_gpu(c, 0, i);
		hwloc_obj_t first;
		unsigned k;
		int ok = 1;

		check(g->index == i && g->name && strstr(g->osdevs, g->name), "%s: GPU %zu named in its OS devices", f,
		      i);
		check(g->backends != 0, "%s: GPU %zu has a backend", f, i);
		check(strlen(g->busid) == 12 && g->busid[4] == ':' && g->busid[7] == ':' && g->busid[10] == '.',
		      "%s: GPU %zu bus id %s", f, i, g->busid);
		check(!hwloc_bitmap_iszero(g->cpuset) && hwloc_bitmap_isincluded(g->cpuset, g->locality),
		      "%s: GPU %zu has nearest cores inside its locality", f, i);
		check(g->npus == (unsigned)hwloc_bitmap_weight(g->cpuset) && g->ncores > 0, "%s: GPU %zu PU count", f,
		      i);
		for (k = 0; k < g->npus; k++)
			ok &= hwloc_bitmap_isset(g->cpuset, g->pu_os[k]) && (k == 0 || g->pu_os[k - 1] < g->pu_os[k]);
		check(ok, "%s: GPU %zu pu_os lists its cpuset in order", f, i);
		first = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, g->first_pu);
		check(first && first->os_index == g->pu_os[0], "%s: GPU %zu first_pu is its first PU", f, i);
		for (j = 0; j < i; j++) {
			const topo_gpu_t *h = topo_host_gpu(c, 0, j);

			if (hwloc_bitmap_isequal(h->locality, g->locality) &&
			    (size_t)hwloc_bitmap_weight(g->locality) >= n)
				check(!hwloc_bitmap_intersects(h->cpuset, g->cpuset),
				      "%s: GPUs %zu and %zu share no core", f, j, i);
			check(strcmp(h->name, g->name), "%s: GPU names distinct", f);
			check(strcmp(h->busid, g->busid) || h->partition != g->partition,
			      "%s: (bus id, partition) distinct", f);
		}
		check(topo_host_gpu_find(c, 0, g->name) == (long)i, "%s: GPU %zu found by name %s", f, i, g->name);
		if (!g->partition)
			check(topo_host_gpu_find(c, 0, g->busid) == (long)i, "%s: GPU %zu found by bus id", f, i);
		if (topo_host_gpu_uuid(c, 0, i))
			check(topo_host_gpu_find(c, 0, topo_host_gpu_uuid(c, 0, i)) == (long)i,
			      "%s: GPU %zu found by UUID", f, i);
		check(g->nic < (int)nn, "%s: GPU %zu NIC index in range", f, i);
		with_nic += g->nic >= 0;
		if (g->nic >= 0) { /* nothing nearer: no NIC shares a deeper ancestor... its kind is a fast one */
			for (j = 0; j < nn; j++)
				if (topo_host_nic(c, 0, j)->kind != TOPO_NIC_ETHERNET)
					break;
			check(j == nn || topo_host_nic(c, 0, (size_t)g->nic)->kind != TOPO_NIC_ETHERNET,
			      "%s: GPU %zu's NIC is a high-speed one when the host has one", f, i);
		}
	}
	for (j = 0; j < nn; j++)
		nic_gpus += topo_host_nic(c, 0, j)->ngpus;
	check(nic_gpus == with_nic, "%s: NICs' GPU counts add up (%zu, %zu)", f, nic_gpus, with_nic);
	check(topo_host_gpu_find(c, 0, "no-such-gpu") < 0 && errno == ENOENT, "%s: unknown GPU id", f);
	check(topo_host_gpu(c, 0, n) == NULL && topo_host_nic(c, 0, nn) == NULL, "%s: out of range", f);
}

static void test_files(void)
{
	size_t i;

	for (i = 0; i < sizeof(gpu_files) / sizeof(gpu_files[0]); i++) {
		topo_cluster_t c = load(gpu_files[i], 1, NULL);

		if (c)
			check_host(c, gpu_files[i]);
		topo_cluster_destroy(c);
	}
}

static void test_core_only(void)
{
	topo_cluster_t c = topo_cluster_create();
	rm_error_t e = { 0 };
	unsigned nn = 9, gn = 9;
	uint64_t gb = 9;
	const char *h = "n0";

	check(topo_load_hwloc_synthetic(c, "n0", "pack:2 core:4 pu:2", &e) == 0 && topo_cluster_finalize(c, &e) == 0,
	      "synthetic node");
	check(topo_host_ngpus(c, 0) == 0 && topo_host_nnics(c, 0) == 0, "a core-only node has no GPU or NIC");
	topo_host_memory(c, 0, &nn, &gn, &gb);
	check(gn == 0 && gb == 0 && nn >= 1, "no GPU memory");
	check(!topo_target_from_gpus(c, &h, 1, &e) && strstr(e.text, "no GPU"), "GPU slots on it are refused: %s",
	      e.text);
	topo_cluster_destroy(c);
}

/* The model of a file and of its hwloc 3.0 form agree. */
static void test_v3(void)
{
	static const char *f[] = { "hwloc/nvidiaDGX2", "hwloc/power8gpudistances", "hwloc/32em64t-2n8c2t-pci-wholeio" };
	size_t i, k;
	char a[128], b[128];

	for (i = 0; i < 3; i++) {
		topo_cluster_t c2, c3;
		topo_gpu_links_t l2, l3;
		int same = 1;

		snprintf(a, sizeof(a), "%s.xml", f[i]);
		snprintf(b, sizeof(b), "%s.v3.xml", f[i]);
		c2 = load(a, 1, NULL);
		c3 = load(b, 1, NULL);
		if (!c2 || !c3) {
			topo_cluster_destroy(c2);
			topo_cluster_destroy(c3);
			continue;
		}
		check(topo_host_npus(c2, 0) == topo_host_npus(c3, 0), "%s: 3.0 XML read, same PUs", b);
		same = topo_host_ngpus(c2, 0) == topo_host_ngpus(c3, 0) &&
		       topo_host_nnics(c2, 0) == topo_host_nnics(c3, 0);
		for (k = 0; same && k < topo_host_ngpus(c2, 0); k++)
			same = !strcmp(topo_host_gpu(c2, 0, k)->busid, topo_host_gpu(c3, 0, k)->busid) &&
			       !strcmp(topo_host_gpu(c2, 0, k)->name, topo_host_gpu(c3, 0, k)->name) &&
			       hwloc_bitmap_isequal(topo_host_gpu(c2, 0, k)->cpuset, topo_host_gpu(c3, 0, k)->cpuset);
		for (k = 0; same && k < topo_host_nnics(c2, 0); k++)
			same = !strcmp(topo_host_nic(c2, 0, k)->name, topo_host_nic(c3, 0, k)->name) &&
			       topo_host_nic(c2, 0, k)->kind == topo_host_nic(c3, 0, k)->kind;
		check(same, "%s: the same GPUs and NICs as the 2.x file", b);
		if (topo_host_gpu_links(c2, 0, &l2) == 0 && topo_host_gpu_links(c3, 0, &l3) == 0)
			check(l2.n == l3.n && !memcmp(l2.bw, l3.bw, (size_t)l2.n * l2.n * sizeof(double)) &&
				      !strcmp(l2.source, l3.source),
			      "%s: the same link matrix (%s)", b, l3.source);
		topo_cluster_destroy(c2);
		topo_cluster_destroy(c3);
	}
}

/* The 3.0 -> 2.x translation of a hostile document: every tag it rewrites is one that grows (a bare
 * "<topology version=\"3.>", an empty osdev_type); the output stays inside its buffer. */
static void test_v3_growth(void)
{
	static const char *tag[] = { "<topology version=\"3.>", "<object osdev_type=\"\">" };
	size_t k, i, n = 4000;

	for (k = 0; k < 2; k++) {
		size_t tl = strlen(tag[k]), len = tl * n, out_len = 0;
		char *in = malloc(len + 1), *out;

		if (!in)
			continue;
		for (i = 0; i < n; i++)
			memcpy(in + i * tl, tag[k], tl);
		in[len] = '\0';
		out = topo_hwloc_v3_to_v2(in, len, &out_len);
		check(out && out_len < malloc_usable_size(out) && out_len > len,
		      "v3 translation of %zu growing tags '%s' stays in its buffer (%zu bytes out)", n, tag[k],
		      out_len);
		free(out);
		free(in);
	}
}

/* Sierra (hwloc 1.x): the memory-only NUMA nodes are the GPUs' HBM. */
static void test_gpu_memory(void)
{
	topo_cluster_t c = load("flux-core/sierra.xml", 1, NULL);
	hwloc_topology_t topo;
	hwloc_obj_t o = NULL;
	unsigned nn, gn, with_cpus = 0, without = 0;
	uint64_t gb, hm, total;

	if (!c)
		return;
	topo = topo_host_hwloc(c, 0);
	while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, o)))
		if (o->cpuset && !hwloc_bitmap_iszero(o->cpuset))
			with_cpus++;
		else
			without++;
	hm = topo_host_memory(c, 0, &nn, &gn, &gb);
	total = hwloc_get_root_obj(topo)->total_memory;
	check(without > 0 && gn == without && nn == with_cpus, "GPU memory NUMA nodes apart: %u host, %u GPU", nn, gn);
	check(hm + gb == total && gb > 0 && hm < total, "host memory excludes GPU memory");
	for (size_t i = 0; i < topo_host_ngpus(c, 0); i++)
		check(topo_host_gpu(c, 0, i)->memory > 0, "GPU %zu has its HBM NUMA node", i);
	topo_cluster_destroy(c);
}

/* MI300A in CPX mode: 6 GPUs per APU, each a partition of one PCI device. */
static void test_partitions(void)
{
	topo_cluster_t c = load("flux-core/tuo.CPX.xml", 1, NULL);
	topo_cluster_t spx = load("flux-core/tuo.SPX.xml", 1, NULL);
	size_t i, n;

	if (!c || !spx)
		goto out;
	n = topo_host_ngpus(c, 0);
	check(n == 6 * topo_host_ngpus(spx, 0), "CPX shows 6 GPUs per SPX GPU: %zu", n);
	for (i = 0; i < n; i++) {
		const topo_gpu_t *g = topo_host_gpu(c, 0, i), *a = topo_host_gpu(spx, 0, i / 6);

		check(!strcmp(g->busid, a->busid) && g->partition == i % 6, "CPX GPU %zu: partition %u of %s", i,
		      g->partition, g->busid);
		check(hwloc_bitmap_isincluded(g->cpuset, a->cpuset), "CPX GPU %zu's cores are within its APU's", i);
	}
out:
	topo_cluster_destroy(c);
	topo_cluster_destroy(spx);
}

/* H100 node: hwloc's NVLink matrix is uniform, so every GPU pair costs the same, and the GPU target
 * has no group level between host and GPUs. */
static void test_uniform(void)
{
	topo_cluster_t c = load("flux-core/ipa20.xml", 1, NULL);
	const char *h;
	topo_gpu_links_t l;
	topo_target_t *t;
	rm_error_t e = { 0 };
	unsigned a, b, n;
	double first = -1;
	int uniform = 1, equal = 1;

	if (!c || topo_host_gpu_links(c, 0, &l) < 0)
		goto out;
	n = l.n;
	for (a = 0; a < n; a++)
		for (b = 0; b < n; b++)
			if (a != b)
				uniform &= l.bw[a * n + b] == l.bw[1] && l.bw[1] > 0;
	check(uniform && !strcmp(l.source, "NVLinkBandwidth"), "ipa20: hwloc's NVLink matrix is uniform");
	for (a = 0; a < n; a++)
		for (b = a + 1; b < n; b++) {
			double d = topo_gpu_pair_cost(c, 0, a, b);

			if (first < 0)
				first = d;
			equal &= d == first && d > 0;
		}
	check(equal, "ipa20: every GPU pair costs the same (%g)", first);
	check(topo_host_gpu(c, 0, 0)->package != topo_host_gpu(c, 0, 2)->package,
	      "ipa20: the pairs include GPUs of different packages");
	h = topo_host_name(c, 0);
	t = topo_target_from_gpus(c, &h, 1, &e);
	check(t && t->nlevels == t->host_level + 2 && t->slot_gpu, "ipa20: no GPU group level (%d levels)",
	      t ? t->nlevels : -1);
	topo_target_destroy(t);
out:
	topo_cluster_destroy(c);
}

/* The site file's links, read back independently from the file: pairs by bandwidth. */
static int site_pairs(const char *path, double bw, unsigned (*out)[2], int max)
{
	FILE *f = fopen(path, "r");
	char line[256];
	int n = 0;

	while (f && fgets(line, sizeof(line), f) && n < max) {
		unsigned a, b;
		double v;

		if (sscanf(line, "link %u %u %lf", &a, &b, &v) == 3 && v == bw) {
			out[n][0] = a;
			out[n++][1] = b;
		}
	}
	if (f)
		fclose(f);
	return n;
}

static void test_mi250x(void)
{
	char links[1024];
	topo_cluster_t raw = load("mpibind/eas-tioga.xml", 1, NULL), c;
	unsigned quad[16][2], single[16][2];
	int nq, ns, i, j, ok = 1;
	topo_target_t *t;
	const char *hosts[4] = { "g0", "g1", "g2", "g3" };
	rm_error_t e = { 0 };
	topo_gpu_links_t l;

	snprintf(links, sizeof(links), "%s/../conf/gpu-links-mi250x.conf", harness_data_dir());
	if (access(links, R_OK) != 0)
		snprintf(links, sizeof(links), "conf/gpu-links-mi250x.conf");
	c = load("mpibind/eas-tioga.xml", 4, links);
	if (!raw || !c)
		goto out;
	/* hwloc alone: every pair alike (issue 775) */
	check(topo_gpu_pair_cost(raw, 0, 0, 1) == topo_gpu_pair_cost(raw, 0, 0, 3), "hwloc's MI250X matrix is uniform");
	nq = site_pairs(links, 200, quad, 16);
	ns = site_pairs(links, 50, single, 16);
	check(nq == 4 && ns > 0, "the site file has 4 quad pairs and single pairs (%d, %d)", nq, ns);
	for (i = 0; i < nq; i++)
		for (j = 0; j < ns; j++)
			ok &= topo_gpu_pair_cost(c, 0, quad[i][0], quad[i][1]) <
			      topo_gpu_pair_cost(c, 0, single[j][0], single[j][1]);
	check(ok, "the two GCDs of a package cost less than a single-linked pair");
	for (i = 0; i < nq; i++) { /* the quad pairs are the GCDs that share a Slingshot NIC */
		const topo_gpu_t *a = topo_host_gpu(c, 0, quad[i][0]), *b = topo_host_gpu(c, 0, quad[i][1]);

		check(a->nic >= 0 && a->nic == b->nic &&
			      topo_host_nic(c, 0, (size_t)a->nic)->kind == TOPO_NIC_SLINGSHOT,
		      "quad pair %u-%u shares a Slingshot NIC", quad[i][0], quad[i][1]);
	}
	check(topo_host_gpu_links(c, 0, &l) == 0 && strstr(l.source, "site file"), "the links come from the site file");
	t = topo_target_from_gpus(c, hosts, 4, &e);
	check(t && t->nslots == 32 && t->nhosts == 4, "4 MI250X nodes: 32 GPU slots");
	if (t) {
		uint32_t s, q, pa = 0, pb = 0, sa = 0, sb = 0;
		int all = 1;

		for (s = 0; s < t->nslots; s++) { /* each slot bound inside its GPU's cores */
			const topo_gpu_t *g = topo_host_gpu(c, t->slot[s].host, t->slot_gpu[s]);

			all &= hwloc_bitmap_isset(g->cpuset, t->slot_pu_os[s]);
			if (t->slot[s].host == 0) {
				pa = t->slot_gpu[s] == quad[0][0] ? s : pa;
				pb = t->slot_gpu[s] == quad[0][1] ? s : pb;
				sa = t->slot_gpu[s] == single[0][0] ? s : sa;
				sb = t->slot_gpu[s] == single[0][1] ? s : sb;
			}
		}
		check(all, "each GPU slot's PU is one of its GPU's nearest cores");
		check(topo_target_common_level(t, pa, pb) == t->nlevels - 2,
		      "a quad pair shares the deepest GPU group");
		check(topo_target_common_level(t, sa, sb) < t->nlevels - 2, "a single-linked pair does not");
		check(topo_target_distance(t, pa, pb) < topo_target_distance(t, sa, sb),
		      "and costs less in the target");
		for (q = 0; q < t->nslots; q++)
			if (t->slot[q].host != t->slot[pa].host)
				break;
		/* between hosts: the NIC of 2 GCDs carries both: at least the NIC term more than the network */
		check(q < t->nslots &&
			      topo_target_distance(t, pa, q) >= topo_gpu_nic_cost(c, 0, topo_host_gpu(c, 0, 0)->nic) &&
			      topo_gpu_nic_cost(c, 0, topo_host_gpu(c, 0, 0)->nic) > 0,
		      "inter-host GPU cost includes the shared NIC");
	}
	topo_target_destroy(t);
out:
	topo_cluster_destroy(raw);
	topo_cluster_destroy(c);
}

static void test_gpu_slots(void)
{
	topo_cluster_t c = load("mpibind/eas-tioga.xml", 2, NULL);
	topo_gpu_slot_t s[4] = { { 1, 5 }, { 0, 2 }, { 1, 0 }, { 0, 7 } }, dup[2] = { { 0, 1 }, { 0, 1 } },
			bad[1] = { { 0, 8 } };
	rm_error_t e = { 0 };
	topo_target_t *t;
	int i, ok = 1;

	if (!c)
		return;
	t = topo_target_from_gpu_slots(c, s, 4, &e);
	check(t && t->nslots == 4, "4 GPU slots given");
	for (i = 0; t && i < 4; i++)
		ok &= t->slot[t->given[i]].host == s[i].host && t->slot_gpu[t->given[i]] == s[i].gpu;
	check(ok, "given[] leads each given GPU slot to its target slot");
	topo_target_destroy(t);
	{ /* two quad-less GPUs per host: no GPU group level of one child each (Scotch divides by zero) */
		topo_gpu_slot_t two[4] = { { 0, 0 }, { 0, 1 }, { 1, 2 }, { 1, 3 } };
		int l, split = 1;

		t = topo_target_from_gpu_slots(c, two, 4, &e);
		for (l = t ? t->host_level + 1 : 0; t && l < t->nlevels - 1; l++)
			split &= t->ngroups[l] > t->ngroups[l - 1] && t->ngroups[l] < t->ngroups[l + 1];
		check(t && split, "every GPU group level splits its parent and is split");
		topo_target_destroy(t);
	}
	memset(&e, 0, sizeof(e));
	check(!topo_target_from_gpu_slots(c, dup, 2, &e) && strstr(e.text, "twice"), "a GPU given twice: %s", e.text);
	memset(&e, 0, sizeof(e));
	check(!topo_target_from_gpu_slots(c, bad, 1, &e) && strstr(e.text, "no GPU 8"), "GPU out of range: %s", e.text);
	topo_cluster_destroy(c);
}

/* Inside a host the target costs each GPU pair at its own link (slot_host_dist), not at the mean of the
 * group level the two first meet at: with the MI250X site file, GCDs of two packages joined by no link
 * (PCIe) cost more than a pair joined by one xGMI link, although both pairs first meet at the host
 * level. A halo whose heavy dimension is a ring of 8 (one node's GCDs) must then be mapped onto a ring
 * of linked pairs (the file's link lines read back here): the level means gave a ring with 3 PCIe
 * hops, which tests/bench/e2e/gpu_bench.py simulates 2x slower. */
static int site_linked(const char *path, unsigned a, unsigned b)
{
	FILE *f = fopen(path, "r");
	char line[256];
	int linked = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned x, y;
		double v;

		if (sscanf(line, "link %u %u %lf", &x, &y, &v) == 3 && ((x == a && y == b) || (x == b && y == a)))
			linked = 1;
	}
	if (f)
		fclose(f);
	return linked;
}

static void test_pair_exact(void)
{
	char links[1024];
	topo_cluster_t c;
	const char *hosts[4] = { "g0", "g1", "g2", "g3" };
	rm_error_t e = { 0 };
	topo_target_t *t;
	uint32_t a, b;
	int same = 1;
	double maxlinked = 0, minnolink = 1e300;

	snprintf(links, sizeof(links), "%s/../conf/gpu-links-mi250x.conf", harness_data_dir());
	if (access(links, R_OK) != 0)
		snprintf(links, sizeof(links), "conf/gpu-links-mi250x.conf");
	if (!(c = load("mpibind/eas-tioga.xml", 4, links)))
		return;
	t = topo_target_from_gpus(c, hosts, 4, &e);
	check(t != NULL, "4 MI250X nodes: %s", e.text);
	for (a = 0; t && a < t->nslots; a++)
		for (b = 0; b < t->nslots; b++) {
			double d;

			if (a == b || t->slot[a].host != t->slot[b].host)
				continue;
			d = topo_target_distance(t, a, b);
			same &= fabs(d - topo_gpu_pair_cost(c, t->slot[a].host, t->slot_gpu[a], t->slot_gpu[b])) < 1e-9;
			if (site_linked(links, t->slot_gpu[a], t->slot_gpu[b]))
				maxlinked = d > maxlinked ? d : maxlinked;
			else
				minnolink = d < minnolink ? d : minnolink;
		}
	check(t && same, "every GPU pair of one host is at its own pair cost in the target");
	check(t && maxlinked < minnolink, "a pair with no xGMI link costs more than any linked pair (%g > %g)",
	      minnolink, maxlinked);
	if (t) {
		map_cart_t cart;
		map_graph_t *g = map_cart_parse("8x4:1,1:64,1", &cart, &e) == 0 ? map_graph_cart(&cart, &e) : NULL;
		uint32_t perm[32], i, j;
		map_result_t res;
		int rings = 1, pcie = 0;

		/* a budget of its own: auto's default for 32 ranks is 2 ms of CPU, which finds the xGMI rings
		 * in the plain build and not in the sanitized one (8 PCIe hops, cost 4,282 against 3,682): what
		 * is checked is the target's pair costs, not how far 2 ms of search gets; 250 ms is 5x what the
		 * sanitized build needs */
		map_options_t mo = { .time_budget_ms = 250 };

		check(g && map_compute("auto", g, t, &mo, perm, &res, &e) == 0, "map the 8x4 halo: %s", e.text);
		for (j = 0; g && j < 4; j++) /* ring j: ranks i * 4 + j, i = 0..7 */
			for (i = 0; i < 8; i++) {
				uint32_t s1 = perm[i * 4 + j], s2 = perm[((i + 1) % 8) * 4 + j];

				rings &= t->slot[s1].host == t->slot[s2].host;
				pcie += !site_linked(links, t->slot_gpu[s1], t->slot_gpu[s2]);
			}
		check(g && rings, "each heavy ring of 8 lies on one node");
		check(g && pcie == 0, "and runs over xGMI links only (%d hops without a link)", pcie);
		map_graph_destroy(g);
	}
	topo_target_destroy(t);
	topo_cluster_destroy(c);
}

/* Two GPU node types in one target (MI250X: 8 GCDs, pairs costed apart; Lassen: 4 V100): every pair of
 * one host is at its own type's pair cost, whatever order the hosts are given in (each slot reads its
 * own type's matrix). */
static void test_pair_exact_mixed(void)
{
	static const char *const order[2][4] = { { "t0", "l0", "t1", "l1" }, { "l1", "t1", "l0", "t0" } };
	static const char *const xml[4] = { "mpibind/eas-tioga.xml", "mpibind/coral-lassen.xml",
					    "mpibind/eas-tioga.xml", "mpibind/coral-lassen.xml" };
	static const char *const name[4] = { "t0", "l0", "t1", "l1" };
	topo_cluster_t c = topo_cluster_create();
	rm_error_t e = { 0 };
	char links[1024];
	int k, ok = 1;

	snprintf(links, sizeof(links), "%s/../conf/gpu-links-mi250x.conf", harness_data_dir());
	if (access(links, R_OK) != 0)
		snprintf(links, sizeof(links), "conf/gpu-links-mi250x.conf");
	for (k = 0; k < 4 && ok; k++)
		ok = topo_load_hwloc_xml(c, data(xml[k]), name[k], &e) == 0;
	ok = ok && topo_load_gpu_links(c, links, &e) == 0 && topo_cluster_finalize(c, &e) == 0;
	check(ok, "MI250X and Lassen nodes: %s", e.text);
	for (k = 0; ok && k < 2; k++) {
		topo_target_t *t = topo_target_from_gpus(c, order[k], 4, &e);
		uint32_t a, b;
		int same = 1, pairs = 0, want_pairs;

		check(t != NULL, "target of both types (order %d): %s", k, e.text);
		for (a = 0; t && a < t->nslots; a++)
			for (b = 0; b < t->nslots; b++)
				if (a != b && t->slot[a].host == t->slot[b].host) {
					double want =
						topo_gpu_pair_cost(c, t->slot[a].host, t->slot_gpu[a], t->slot_gpu[b]);

					same &= fabs(topo_target_distance(t, a, b) - want) < 1e-9;
					pairs++;
				}
		for (a = 0, want_pairs = 0; a < 4; a++) {
			size_t ng = topo_host_ngpus(c, (size_t)topo_host_find(c, name[a]));

			want_pairs += (int)(ng * (ng - 1));
		}
		check(t && same && pairs == want_pairs && want_pairs > 0,
		      "hosts %s %s %s %s: each of the %d same-host pairs at its own type's pair cost", order[k][0],
		      order[k][1], order[k][2], order[k][3], pairs);
		topo_target_destroy(t);
	}
	topo_cluster_destroy(c);
}

/* Bad site link files: refused, naming file and line. */
static void test_bad_links(void)
{
	static const struct {
		const char *text, *what;
		int line;
	} cases[] = {
		{ "gpus 8\n", "before any 'model'", 1 },
		{ "model MI200\nlink 0 1 200\n", "'gpus' count first", 2 },
		{ "model MI200\ngpus 8\nlink 0 8 200\n", "below 8", 3 },
		{ "model MI200\ngpus 8\nlink 0 1 fast\n", "not a positive", 3 },
		{ "model MI200\ngpus 8\nlink 0 0 200\n", "must differ", 3 },
		{ "model MI200\ngpus 8\n\nnolink 0 1 5\n", "nolink", 4 },
		{ "model MI200\ngpus 8\nbandwidth 0 1 5\n", "unknown directive", 3 },
		{ "model MI200\n", "no 'gpus' line", 0 },
		/* a model of six words or more is kept whole (words past the fifth were dropped) */
		{ "model AMD Instinct MI250X GCD rev B\n", "'model AMD Instinct MI250X GCD rev B' has no 'gpus'", 0 },
		{ "model MI200\ngpus 8\nlink 0 1 200 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 "
		  "26 27 "
		  "28 29 30\n",
		  "more than 32 words", 3 },
	};
	char dir[] = "/tmp/rankmap-test-gpu.XXXXXX", path[600];
	size_t i;

	if (!mkdtemp(dir)) {
		fail("mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/links.conf", dir);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		topo_cluster_t c = topo_cluster_create();
		FILE *f = fopen(path, "w");
		rm_error_t e = { 0 };

		if (!f)
			break;
		fputs(cases[i].text, f);
		fclose(f);
		check(topo_load_gpu_links(c, path, &e) < 0 && errno == EINVAL && strstr(e.text, cases[i].what) &&
			      e.line == cases[i].line && !strcmp(e.source, path),
		      "bad link file %zu refused at line %d: %s:%d %s", i, cases[i].line, e.source, e.line, e.text);
		topo_cluster_destroy(c);
	}
	unlink(path);
	rmdir(dir);
}

/* A derived cluster (rankmapd's registrations) keeps the site links and the slot kind of its base,
 * and outlives it. */
static void test_derive(void)
{
	char links[1024];
	topo_cluster_t base, pool = topo_cluster_create(), d;
	const char *names[1] = { "g1" };
	rm_error_t e = { 0 };
	topo_gpu_links_t l;
	long h;

	snprintf(links, sizeof(links), "%s/../conf/gpu-links-mi250x.conf", harness_data_dir());
	if (access(links, R_OK) != 0)
		snprintf(links, sizeof(links), "conf/gpu-links-mi250x.conf");
	base = load("mpibind/eas-tioga.xml", 1, links);
	if (!base || topo_load_hwloc_xml(pool, data("mpibind/eas-tioga.xml"), "g1", &e) < 0 ||
	    topo_cluster_finalize(pool, &e) < 0) {
		fail("derive setup: %s", e.text);
		topo_cluster_destroy(base);
		topo_cluster_destroy(pool);
		return;
	}
	d = topo_cluster_derive(base, pool, names, 1, &e);
	topo_cluster_destroy(base);
	h = d ? topo_host_find(d, "g1") : -1;
	check(d && h >= 0 && topo_host_ngpus(d, (size_t)h) == 8, "a derived cluster has the new host's GPUs");
	check(h >= 0 && topo_host_gpu_links(d, (size_t)h, &l) == 0 && strstr(l.source, "site file"),
	      "... and the site links of its base, after the base is gone");
	topo_cluster_destroy(d);
	topo_cluster_destroy(pool);
}

/* A stored file's text (NUL-terminated; its length in *len), or NULL after a failed check. */
static char *slurp(const char *path, long *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;

	if (f && fseek(f, 0, SEEK_END) == 0 && (*len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)*len + 1)) && fread(buf, 1, (size_t)*len, f) == (size_t)*len)
		buf[*len] = '\0';
	else
		free(buf), buf = NULL;
	if (f)
		fclose(f);
	check(buf != NULL, "read %s", path);
	return buf;
}

/* Writes len bytes of buf to path. */
static void spill(const char *path, const char *buf, long len)
{
	FILE *f = fopen(path, "w");

	check(f && fwrite(buf, 1, (size_t)len, f) == (size_t)len && fclose(f) == 0, "write %s", path);
}

/* Two hosts of one node type (XML equal but for infos) keep their own GPU UUIDs. */
static void test_uuids(void)
{
	char dir[] = "/tmp/rankmap-test-uuid.XXXXXX", path[600], *buf, *at;
	topo_cluster_t c = topo_cluster_create();
	rm_error_t e = { 0 };
	long len;
	const char *u0, *u1;

	if (!mkdtemp(dir) || !(buf = slurp(data("mpibind/coral-lassen.xml"), &len))) {
		fail("setup");
		topo_cluster_destroy(c);
		return;
	}
	/* a second host: its first GPU gets another NVIDIAUUID  */
	at = strstr(buf, "<info name=\"NVIDIAUUID\" value=\"GPU-");
	snprintf(path, sizeof(path), "%s/a.xml", dir);
	spill(path, buf, len);
	check(at != NULL, "coral-lassen has an NVIDIAUUID");
	if (at)
		memcpy(at + strlen("<info name=\"NVIDIAUUID\" value=\"GPU-"), "12345678", 8);
	snprintf(path, sizeof(path), "%s/b.xml", dir);
	spill(path, buf, len);
	free(buf);
	check(topo_load_hwloc_dir(c, dir, &e) == 0 && topo_cluster_finalize(c, &e) == 0, "two hosts load: %s", e.text);
	check(topo_cluster_ntypes(c) == 1, "they share one node type");
	u0 = topo_host_gpu_uuid(c, 0, 0);
	u1 = topo_host_gpu_uuid(c, 1, 0);
	check(u0 && u1 && strcmp(u0, u1) && !strncmp(u1, "GPU-12345678", 12), "each keeps its own UUID: %s %s",
	      u0 ? u0 : "-", u1 ? u1 : "-");
	check(u1 && topo_host_gpu_find(c, 1, u1) == 0 && topo_host_gpu_find(c, 0, u1) < 0,
	      "a UUID finds the GPU on its own host only");
	topo_cluster_destroy(c);
	snprintf(path, sizeof(path), "%s/a.xml", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/b.xml", dir);
	unlink(path);
	rmdir(dir);
}

/* Rails: two H100 hosts (ipa20.xml, 4 ConnectX HCAs mlx5_0..3; the second host's GUIDs changed) on a
 * fabric written here with one rail per HCA label: on the rails of mlx5_0 and mlx5_1 both hosts are
 * under one leaf (2 links apart), on those of mlx5_2 and mlx5_3 under two leaves joined by a spine (4
 * links). A GPU's traffic to the other host leaves through its nearest NIC, on that NIC's rail, so the
 * cost between GPUs of the two hosts is the mean of the two directions' rail costs (each from the hops
 * written below and cost.c's documented fabric formula lat_net + lat_hop * (hops - 2) + ref_bytes /
 * bw_net) plus the NIC sharing term. */
static const char *rail_guid[2][4] = {
	{ "043f720300aea282", "043f720300aea283", "a088c2030009704e", "a088c20300097012" },
	{ "043f720300bea282", "043f720300bea283", "a088c2030019704e", "a088c20300197012" },
};

static int rail_split(const char *nic) /* hops between the hosts' HCAs of that label, by the file below */
{
	return !strcmp(nic, "mlx5_2") || !strcmp(nic, "mlx5_3") ? 4 : 2;
}

static void write_rail_fabric(const char *path)
{
	FILE *f = fopen(path, "w");
	/* leaf index per (host, label): 0, 1 shared; 2/3 for mlx5_2, 4/5 for mlx5_3 */
	static const int leaf_of[2][4] = { { 0, 1, 2, 4 }, { 0, 1, 3, 5 } };
	int l, h, k;

	if (!f)
		return;
	for (l = 0; l < 6; l++) {
		int port = 1;

		fprintf(f,
			"switchguid=0x10%d(10%d)\nSwitch\t8 \"S-000000000000010%d\"\t\t# \"leaf%d\" base port 0 lid %d "
			"lmc 0\n",
			l, l, l, l, 10 + l);
		for (h = 0; h < 2; h++)
			for (k = 0; k < 4; k++)
				if (leaf_of[h][k] == l)
					fprintf(f, "[%d]\t\"H-%s\"[1](%s) \t\t# \"g%d mlx5_%d\" lid %d 4xHDR\n", port++,
						rail_guid[h][k], rail_guid[h][k], h, k, 100 + h * 4 + k);
		fprintf(f, "[8]\t\"S-00000000000001ff\"[%d]\t\t# \"spine\" lid 9 4xHDR\n\n", l + 1);
	}
	fprintf(f, "switchguid=0x1ff(1ff)\nSwitch\t8 \"S-00000000000001ff\"\t\t# \"spine\" base port 0 lid 9 lmc 0\n");
	for (l = 0; l < 6; l++)
		fprintf(f, "[%d]\t\"S-000000000000010%d\"[8]\t\t# \"leaf%d\" lid %d 4xHDR\n", l + 1, l, l, 10 + l);
	fprintf(f, "\n");
	for (h = 0; h < 2; h++)
		for (k = 0; k < 4; k++) {
			int port = 1, m, n;

			for (m = 0; m < h; m++) /* port on its leaf: the order written above */
				for (n = 0; n < 4; n++)
					port += leaf_of[m][n] == leaf_of[h][k];
			for (n = 0; n < k; n++)
				port += leaf_of[h][n] == leaf_of[h][k];
			fprintf(f,
				"caguid=0x%s\nCa\t1 \"H-%s\"\t\t# \"g%d mlx5_%d\"\n[1](%s) "
				"\t\"S-000000000000010%d\"[%d]\t\t# lid %d lmc 0 \"leaf%d\" lid %d 4xHDR\n\n",
				rail_guid[h][k], rail_guid[h][k], h, k, rail_guid[h][k], leaf_of[h][k], port,
				100 + h * 4 + k, leaf_of[h][k], 10 + leaf_of[h][k]);
		}
	fclose(f);
}

static void test_rails(void)
{
	char dir[] = "/tmp/rankmap-test-rails.XXXXXX", path[600], *buf, *at;
	static const char *from[] = { "043f:7203:00ae:", "a088:c203:0009:" },
			  *to[] = { "043f:7203:00be:", "a088:c203:0019:" };
	topo_cluster_t c = topo_cluster_create();
	const topo_costs_t *k;
	rm_error_t e = { 0 };
	topo_target_t *t = NULL;
	const char *hosts[] = { "g0", "g1" };
	long len;
	size_t i, j, split = 0, mixed = 0, bad = 0;
	int x;

	if (!mkdtemp(dir) || !(buf = slurp(data("flux-core/ipa20.xml"), &len))) {
		fail("setup");
		topo_cluster_destroy(c);
		return;
	}
	snprintf(path, sizeof(path), "%s/g0.xml", dir);
	check(topo_load_hwloc_xml(c, data("flux-core/ipa20.xml"), "g0", &e) == 0, "g0 loads: %s", e.text);
	for (x = 0; x < 2; x++) /* the second host's HCAs: other GUIDs, at the same places */
		for (at = buf; (at = strstr(at, from[x])); at += strlen(from[x]))
			memcpy(at, to[x], strlen(to[x]));
	snprintf(path, sizeof(path), "%s/g1.xml", dir);
	spill(path, buf, len);
	free(buf);
	check(topo_load_hwloc_xml(c, path, "g1", &e) == 0, "g1 loads: %s", e.text);
	unlink(path);
	snprintf(path, sizeof(path), "%s/rails.topo", dir);
	write_rail_fabric(path);
	check(topo_load_ib_file(c, path, &e) == 0 && topo_cluster_finalize(c, &e) == 0, "rail fabric: %s", e.text);
	unlink(path);
	rmdir(dir);
	k = topo_cluster_costs(c);
	t = topo_target_from_gpus(c, hosts, 2, &e);
	check(t != NULL && t->nslots == 8, "a GPU target of the two hosts: %s", e.text);
	for (i = 0; t && i < t->nslots; i++)
		for (j = 0; j < t->nslots; j++) {
			size_t ha = t->slot[i].host, hb = t->slot[j].host;
			unsigned ga = t->slot_gpu[i], gb = t->slot_gpu[j];
			const topo_gpu_t *a = topo_host_gpu(c, ha, ga), *b = topo_host_gpu(c, hb, gb);
			const topo_nic_t *na = topo_host_nic(c, ha, (size_t)a->nic),
					 *nb = topo_host_nic(c, hb, (size_t)b->nic);
			double want = 0, ea, eb, got;
			int side;

			if (ha == hb || !na || !nb)
				continue;
			for (side = 0; side < 2; side++) {
				int hops = rail_split(side ? nb->name : na->name);

				want += (k->lat_net + k->lat_hop * (hops - 2) + k->ref_bytes / (k->bw_net * 1000.0)) /
					2;
			}
			ea = topo_gpu_nic_cost(c, ha, a->nic);
			eb = topo_gpu_nic_cost(c, hb, b->nic);
			want += ea > eb ? ea : eb;
			got = topo_target_distance(t, (uint32_t)i, (uint32_t)j);
			split += rail_split(na->name) == 4 && rail_split(nb->name) == 4;
			mixed += rail_split(na->name) != rail_split(nb->name);
			if (fabs(got - want) > 1e-4 * want ||
			    fabs(topo_gpu_net_cost(c, ha, ga, hb, gb) - want) > 1e-4 * want) {
				if (bad++ < 4)
					fail("GPU %zu:%u (%s) to %zu:%u (%s): %g, want %g", ha, ga, na->name, hb, gb,
					     nb->name, got, want);
			}
		}
	check(bad == 0, "GPU pairs across hosts cost as their NICs' rails say (%zu wrong)", bad);
	check(split > 0 && mixed > 0, "some pairs use only split rails (%zu), some one of each (%zu)", split, mixed);
	for (i = 0; i < topo_host_ngpus(c, 0); i++) {
		const topo_gpu_t *g = topo_host_gpu(c, 0, i);
		const topo_nic_t *n = topo_host_nic(c, 0, (size_t)g->nic);

		check(n && topo_gpu_rail(c, 0, (unsigned)i) >= 0 && topo_gpu_rail(c, 1, (unsigned)i) >= 0 &&
			      topo_gpu_rail(c, 0, (unsigned)i) == topo_gpu_rail(c, 1, (unsigned)i),
		      "GPU %zu's NIC %s: on one rail on both hosts", i, n ? n->name : "-");
	}
	if (t) { /* the engines map on it: the per-slot distance is what the result's cost sums */
		map_cart_t cart;
		map_graph_t *g = map_cart_parse("4x2:1,1:8,1", &cart, &e) == 0 ? map_graph_cart(&cart, &e) : NULL;
		uint32_t perm[8], r;
		map_result_t res;
		double sum = 0;
		uint64_t q;

		check(g && map_compute("auto", g, t, NULL, perm, &res, &e) == 0, "map on the rails target: %s", e.text);
		for (r = 0; g && r < g->n; r++)
			for (q = g->xadj[r]; q < g->xadj[r + 1]; q++)
				sum += g->w[q] * topo_target_distance(t, perm[r], perm[g->adj[q]]);
		check(g && fabs(sum / 2 - res.cost) <= 1e-6 * res.cost + 1e-9 && res.cost <= res.identity_cost,
		      "its cost (%g) sums the slots' distances (%g) and is no worse than identity (%g)", res.cost,
		      sum / 2, res.identity_cost);
		map_graph_destroy(g);
	}
	topo_target_destroy(t);
	topo_cluster_destroy(c);
}

/* NIC sharing on the MI250X blade, read from the XML text itself (not through the model): hwloc writes
 * each NUMA node's locality as a Group followed by its I/O devices, so the GCDs (rsmiN OS devices) and
 * Slingshot NICs (hsiN) listed after one Group share that locality: there, each NIC carries
 * rsmi / hsi GCDs. Each NIC's ngpus must be that count, and two GPU slots on two hosts of a flat network
 * cost lat_net + ref_bytes / bw_net (topo/cost.c) plus (sharing - 1) * ref_bytes / bw_net, each GCD
 * getting 1 / sharing of its NIC's bandwidth (COST-GPU.md, "Between hosts"). */
static void test_nic_sharing(void)
{
	topo_cluster_t c = load("mpibind/eas-tioga.xml", 2, NULL);
	const char *hosts[2] = { "g0", "g1" };
	unsigned share[64] = { 0 }; /* by hsi number */
	unsigned grp_gpu = 0, grp_nic[8], ngrp_nic = 0, i, bad = 0, checked = 0;
	rm_error_t e = { 0 };
	topo_target_t *t;
	char line[4096];
	const topo_costs_t *k;
	FILE *f = fopen(data("mpibind/eas-tioga.xml"), "r");

	if (!c || !f) {
		fail("eas-tioga");
		if (f)
			fclose(f);
		topo_cluster_destroy(c);
		return;
	}
	for (;;) {
		int end = !fgets(line, sizeof(line), f);
		const char *p;

		if (end || strstr(line, "type=\"Group\"")) { /* close the group before */
			for (i = 0; i < ngrp_nic; i++)
				if (grp_nic[i] < 64)
					share[grp_nic[i]] = grp_gpu / ngrp_nic;
			grp_gpu = ngrp_nic = 0;
			if (end)
				break;
		}
		if (strstr(line, "type=\"OSDev\"") && (p = strstr(line, "name=\"rsmi")))
			grp_gpu++;
		if (strstr(line, "type=\"OSDev\"") && (p = strstr(line, "name=\"hsi")) && ngrp_nic < 8)
			grp_nic[ngrp_nic++] = (unsigned)atoi(p + 9);
	}
	fclose(f);
	for (i = 0; i < topo_host_nnics(c, 0); i++) {
		const topo_nic_t *n = topo_host_nic(c, 0, i);
		unsigned want = n->netdev && !strncmp(n->netdev, "hsi", 3) ? share[atoi(n->netdev + 3) & 63] : 0;

		if (n->kind != TOPO_NIC_SLINGSHOT)
			continue;
		checked++;
		check(want == 2 && n->ngpus == want, "%s carries %u GCDs as the XML's NUMA groups say (model: %u)",
		      n->netdev ? n->netdev : n->name, want, n->ngpus);
	}
	check(checked == 4, "eas-tioga has 4 Slingshot NICs (%u)", checked);
	k = topo_cluster_costs(c);
	t = topo_target_from_gpus(c, hosts, 2, &e);
	check(t && t->nslots == 16, "2 MI250X nodes: 16 GPU slots: %s", e.text);
	for (i = 0; t && i < t->nslots; i++) {
		uint32_t j;

		for (j = 0; j < t->nslots; j++) {
			const topo_gpu_t *a = topo_host_gpu(c, t->slot[i].host, t->slot_gpu[i]);
			const topo_gpu_t *b = topo_host_gpu(c, t->slot[j].host, t->slot_gpu[j]);
			const topo_nic_t *na = topo_host_nic(c, t->slot[i].host, (size_t)a->nic);
			const topo_nic_t *nb = topo_host_nic(c, t->slot[j].host, (size_t)b->nic);
			unsigned sa, sb, sh;
			double xfer = k->ref_bytes / (k->bw_net * 1000.0), want;

			if (t->slot[i].host == t->slot[j].host || !na || !nb || !na->netdev || !nb->netdev)
				continue;
			sa = share[atoi(na->netdev + 3) & 63];
			sb = share[atoi(nb->netdev + 3) & 63];
			sh = sa > sb ? sa : sb;
			want = k->lat_net + xfer + (sh - 1) * xfer;
			if (fabs(topo_target_distance(t, i, j) - want) > 1e-6 * want && bad++ < 3)
				fail("GPU slots %u and %u on two hosts: %g, want %g (NICs shared by %u and %u)", i, j,
				     topo_target_distance(t, i, j), want, sa, sb);
		}
	}
	check(bad == 0, "each GCD gets half its NIC's bandwidth between hosts (%u pairs wrong)", bad);
	topo_target_destroy(t);
	topo_cluster_destroy(c);
}

int main(void)
{
	test_files();
	test_core_only();
	test_v3();
	test_v3_growth();
	test_gpu_memory();
	test_partitions();
	test_uniform();
	test_mi250x();
	test_pair_exact();
	test_pair_exact_mixed();
	test_gpu_slots();
	test_bad_links();
	test_derive();
	test_uuids();
	test_rails();
	test_nic_sharing();
	return harness_done();
}
