/*
 * plugin/mpi/pmpi_place.c: where the ranks of a communicator run, as a topo target at the root.
 *
 * Real placement: every rank reports its host (SLURMD_NODENAME, else gethostname(); under SMPI the
 * processor name) and the PU it is bound to (its affinity mask when that holds a single CPU, else
 * unknown): its slot (rm_slot.h), named once. Through rankmapd that is all: the root sends the slots in
 * rank order with OS PU indices, and the daemon, which holds every registered host's hardware, resolves
 * them (daemon/server/srv_map.c: unknown and shared PUs get the free PUs of their host in rank order).
 * Mapping here, one leader per host exports its hwloc tree as XML; the root fetches one XML per node
 * type (topo_hwloc_xml_type_key: the XML without its infos, such as HostName), so identical nodes cost
 * one transfer, and resolves the PUs itself by the same rule.
 * Records are fixed-size, O(p) at the root only.
 *
 * Test-only placement (RANKMAP_FAKE_HOSTS / RANKMAP_FAKE_NODE / RANKMAP_FAKE_PLACEMENT): computed at
 * the root from rank numbers, no communication.
 *
 * Connectivity: RANKMAP_CLUSTER (a cluster file: fabric, torus, hardware) when set, else a flat
 * network above the hosts (pmpi_daemon.c adds rankmapd's view when RANKMAP_SERVER or RANKMAP_SOCKET is set).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "pmpi.h"
#include "topo_gpu.h"

typedef struct rmp_rec {
	char host[RMP_HOST_LEN];
	int32_t cpu;     /* OS index of the single PU this rank is bound to, -1 if unknown */
	int32_t xml_len; /* length of the leader's hwloc XML (0: not a leader or failed) */
	uint64_t xml_hash;
} rmp_rec_t;

/* What the root collects before building the cluster. */
typedef struct rmp_gather {
	rmp_rec_t *rec; /* size records (real placement) */
	char *xml;      /* concatenated XMLs of the requested leaders */
	int *xml_off;   /* size: offset of rank r's XML in xml, -1 if none */
	size_t xml_len; /* bytes of xml */
} rmp_gather_t;

#define RMP_RECORDS_ONLY 1 /* gather_real's broadcast: no hardware to gather */

/* A leader's XML by its node-type key (topo_hwloc_xml_type_key), for sorting and binary search. */
typedef struct rmp_tree {
	uint64_t key;
	int rank;
} rmp_tree_t;

static int cmp_key(const void *a, const void *b)
{
	const rmp_tree_t *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

static int cmp_tree(const void *a, const void *b)
{
	const rmp_tree_t *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static void local_identity(rmp_rec_t *rec)
{
	const char *slurm = getenv("SLURMD_NODENAME");

	memset(rec, 0, sizeof(*rec));
	rec->cpu = -1;
#ifdef RANKMAP_SMPI
	int len = 0;
	char name[MPI_MAX_PROCESSOR_NAME];

	PMPI_Get_processor_name(name, &len);
	snprintf(rec->host, sizeof(rec->host), "%.*s", (int)sizeof(rec->host) - 1, name);
	(void)slurm;
#else
	cpu_set_t set;

	if (slurm && *slurm)
		snprintf(rec->host, sizeof(rec->host), "%s", slurm);
	else if (gethostname(rec->host, sizeof(rec->host) - 1) != 0)
		snprintf(rec->host, sizeof(rec->host), "localhost");
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) == 1) {
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set)) {
				rec->cpu = i;
				break;
			}
	}
#endif
}

#ifndef RANKMAP_SMPI
/* The machine's hwloc tree as XML, discovered once per process (discovery reads /sys and takes tens
 * of milliseconds; the hardware does not change during a job). Process-wide cache, never freed. */
static char *live_cache;
static int live_cache_len;

/* The live hwloc tree as XML (malloc'ed copy), NULL on failure. */
static char *live_xml(int *len)
{
	hwloc_topology_t topo;
	char *buf = NULL, *out;
	int blen = 0;

	*len = 0;
	if (!live_cache && hwloc_topology_init(&topo) == 0) {
		if (hwloc_topology_load(topo) == 0 && hwloc_topology_export_xmlbuffer(topo, &buf, &blen, 0) == 0) {
			live_cache = malloc((size_t)blen + 1);
			if (live_cache) {
				memcpy(live_cache, buf, (size_t)blen);
				live_cache[blen] = 0;
				live_cache_len = blen;
			}
			hwloc_free_xmlbuffer(topo, buf);
		}
		hwloc_topology_destroy(topo);
	}
	if (!live_cache || !(out = malloc((size_t)live_cache_len + 1)))
		return NULL;
	memcpy(out, live_cache, (size_t)live_cache_len + 1);
	*len = live_cache_len;
	return out;
}

#endif

static int cmp_host(const void *a, const void *b, void *base);

/* Root: leader[r] = 1 for the lowest rank of each host (records sorted by host name, O(p log p)).
 * Host leaders are chosen here rather than through MPI_Comm_split_type: a shared-memory communicator
 * created and freed inside the program's topology call made Open MPI 4.1's treematch component hang in
 * the program's next MPI_Dist_graph_create (ompi_comm_nextcid; MPICH's distgraph1 at 7 ranks). */
static int pick_leaders(rmp_call_t *call, rmp_rec_t *rec, int *leader)
{
	int *ord = malloc(sizeof(int) * (size_t)call->size);

	if (!ord)
		return -1;
	for (int r = 0; r < call->size; r++)
		ord[r] = r, leader[r] = 0;
	qsort_r(ord, (size_t)call->size, sizeof(int), cmp_host, rec);
	for (int i = 0; i < call->size; i++) {
		int lo = ord[i];

		if (i > 0 && strcmp(rec[ord[i - 1]].host, rec[lo].host) == 0)
			continue;
		for (int k = i + 1; k < call->size && strcmp(rec[ord[k]].host, rec[lo].host) == 0; k++)
			lo = ord[k] < lo ? ord[k] : lo;
		leader[lo] = 1;
	}
	free(ord);
	return 0;
}

/* Root: which ranks send their XML (one per distinct node type: hosts whose XML differs only in its
 * infos, such as HostName, send one), their counts and offsets. O(p log p): the leaders sorted by key. */
static int plan_xml(rmp_call_t *call, rmp_gather_t *ga, int *req, int *counts, int *displs)
{
	size_t total = 0;
	int n = 0;
	rmp_tree_t *lead = malloc(sizeof(*lead) * (size_t)call->size);

	if (!lead)
		return -1;
	for (int r = 0; r < call->size; r++) {
		ga->xml_off[r] = -1;
		displs[r] = 0;
		if (ga->rec[r].xml_len > 0)
			lead[n].key = ga->rec[r].xml_hash, lead[n++].rank = r;
	}
	qsort(lead, (size_t)n, sizeof(*lead), cmp_tree);
	for (int i = 0; i < n; i++) {
		int r = lead[i].rank;

		if (i > 0 && lead[i - 1].key == lead[i].key)
			continue;
		req[r] = 1;
		counts[r] = ga->rec[r].xml_len;
		displs[r] = ga->xml_off[r] = (int)total;
		total += (size_t)counts[r];
		if (total > (size_t)INT32_MAX) {
			free(lead);
			return -1;
		}
	}
	free(lead);
	ga->xml_len = total;
	ga->xml = malloc(total + 1);
	return ga->xml ? 0 : -1;
}

/* Collective: gathers every rank's record, then (mapping here) one XML per distinct hardware tree, at the
 * root: the root names one leader per host, the leaders export their hardware and send its length and
 * hash, the root asks one leader per distinct tree for its XML. Through rankmapd, the records only. */
static int gather_real(rmp_call_t *call, rmp_gather_t *ga)
{
	rmp_rec_t me;
	char *xml = NULL;
	int len = 0, want = 0, lead = 0, rc = 0;
	int *req = NULL, *counts = NULL, *displs = NULL;
	int64_t lh[2] = { 0, 0 }, *alh = NULL; /* (XML length, hash) of every rank, 0 on non-leaders */

	local_identity(&me);
	if (call->rank == 0) {
		size_t n = (size_t)call->size;

		ga->rec = malloc(sizeof(rmp_rec_t) * n);
		ga->xml_off = malloc(sizeof(int) * n);
		req = calloc(n, sizeof(int));
		counts = calloc(n, sizeof(int));
		displs = calloc(n, sizeof(int));
		alh = calloc(2 * n, sizeof(int64_t));
		if (!ga->rec || !req || !counts || !displs || !ga->xml_off || !alh)
			rc = -1;
	}
	/* the root's buffers, first: a root that could not allocate them would otherwise gather into nothing
	 * while the others send (every rank takes the path the root's status says: unreordered, one warning) */
	PMPI_Bcast(&rc, 1, MPI_INT, 0, call->comm);
	if (rc != 0)
		goto out;
	PMPI_Gather(&me, (int)sizeof(me), MPI_BYTE, ga->rec, (int)sizeof(me), MPI_BYTE, 0, call->comm);
	/* the root decides for all (the environment may differ between ranks): through rankmapd, which
	 * holds the hardware, the records are all it needs */
	if (call->rank == 0 && rc == 0)
		rc = call->env.socket ? RMP_RECORDS_ONLY : pick_leaders(call, ga->rec, req);
	PMPI_Bcast(&rc, 1, MPI_INT, 0, call->comm);
	if (rc == RMP_RECORDS_ONLY) {
		rc = 0;
		goto out;
	}
	if (rc == 0) {
		PMPI_Scatter(req, 1, MPI_INT, &lead, 1, MPI_INT, 0, call->comm);
#ifndef RANKMAP_SMPI
		if (lead && (xml = live_xml(&len)))
			lh[0] = len, lh[1] = (int64_t)topo_hwloc_xml_type_key(xml, (size_t)len);
#else
		(void)lead;
#endif
		PMPI_Gather(lh, 2, MPI_INT64_T, alh, 2, MPI_INT64_T, 0, call->comm);
		for (int r = 0; call->rank == 0 && r < call->size; r++) {
			ga->rec[r].xml_len = (int32_t)alh[2 * r];
			ga->rec[r].xml_hash = (uint64_t)alh[2 * r + 1];
			req[r] = 0;
		}
		if (call->rank == 0)
			rc = plan_xml(call, ga, req, counts, displs);
		PMPI_Bcast(&rc, 1, MPI_INT, 0, call->comm);
	}
	if (rc == 0) {
		PMPI_Scatter(req, 1, MPI_INT, &want, 1, MPI_INT, 0, call->comm);
		PMPI_Gatherv(xml, want ? len : 0, MPI_CHAR, ga->xml, counts, displs, MPI_CHAR, 0, call->comm);
	}
out:
	free(displs);
	free(req);
	free(counts);
	free(alh);
	free(xml);
	if (rc)
		rm_error_set(&call->err, "placement", 0, 0, "cannot gather the hardware of %d ranks", call->size);
	return rc;
}

/* Root: the name of virtual host h (the cluster's h-th host when a cluster file is loaded). */
static int fake_host_name(rmp_call_t *call, topo_cluster_t c, int h, char *buf, size_t len)
{
	size_t nh = call->env.socket ? call->ndhosts : call->env.cluster ? topo_nhosts(c) : 0;

	if (nh == 0) {
		snprintf(buf, len, "rmfake%d", h);
		return 0;
	}
	if ((size_t)h >= nh)
		return rm_error_set(&call->err, "RANKMAP_FAKE_HOSTS", 0, 0,
				    "%d virtual hosts, but the cluster has only %zu hosts", call->env.fake_hosts, nh);
	snprintf(buf, len, "%s", call->env.socket ? call->dhosts[h] : topo_host_name(c, (size_t)h));
	return 0;
}

/* Root: makes sure host name has hardware data (from the cluster file, else xml, else desc). The
 * caller finalizes the cluster after the last load. Returns 0 or -1. */
static int ensure_hw(rmp_call_t *call, topo_cluster_t c, const char *name, const char *xml, size_t len,
		     const char *desc)
{
	long h = topo_host_find(c, name);

	if (h >= 0 && topo_host_npus(c, (size_t)h) > 0)
		return 0;
	if (xml)
		return topo_load_hwloc_xmlbuf(c, name, xml, len, "hwloc XML gathered from the host", &call->err);
	if (call->env.fake_xml) /* test-only: a recorded node's XML */
		return topo_load_hwloc_xml(c, call->env.fake_xml, name, &call->err);
	if (desc)
		return topo_load_hwloc_synthetic(c, name, desc, &call->err);
	return rm_error_set(&call->err, name, 0, 0, "no hardware description for this host");
}

/* Root: cluster index of a host that must exist after finalize, or -1. */
static long host_index(rmp_call_t *call, topo_cluster_t c, const char *name)
{
	long h = topo_host_find(c, name);

	if (h < 0 || topo_host_npus(c, (size_t)h) == 0) {
		rm_error_set(&call->err, name, 0, 0, "host has no hardware description");
		return -1;
	}
	return h;
}

/* The synthetic description of a virtual host: RANKMAP_FAKE_NODE (hwloc wants PUs as the last level:
 * 'pack:2 core:4' becomes 'pack:2 core:4 pu:1'), else one core per rank of the host. */
static void fake_desc(const rmp_call_t *call, int per, char *buf, size_t len)
{
	const char *d = call->env.fake_node, *last;

	if (!d) {
		snprintf(buf, len, "core:%d pu:1", per);
		return;
	}
	last = strrchr(d, ' ');
	last = last ? last + 1 : d;
	snprintf(buf, len, "%s%s", d, strncasecmp(last, "pu", 2) == 0 ? "" : " pu:1");
}

/* Root, test-only placement without a cluster: every virtual host shares one synthetic tree, loaded
 * once through the "synthetic:<desc>@host,host..." spec. */
static int fake_hosts_flat(rmp_call_t *call, topo_cluster_t c, const char *desc, int n)
{
	size_t len = strlen(desc) + 32 + (size_t)n * 16, off;
	char *spec = malloc(len);

	if (!spec)
		return rm_error_set(&call->err, "placement", 0, 0, "out of memory");
	off = (size_t)snprintf(spec, len, "synthetic:%s@", desc);
	for (int h = 0; h < n; h++)
		off += (size_t)snprintf(spec + off, len - off, "%srmfake%d", h ? "," : "", h);
	int rc = topo_load_hwloc_spec(c, spec, &call->err);

	free(spec);
	return rc;
}

/* Root, test-only placement: host and logical PU of every rank from its number. */
static int where_fake(rmp_call_t *call, topo_cluster_t c, int32_t *host, int32_t *pu)
{
	int n = call->env.fake_hosts, size = call->size;
	int per = (size + n - 1) / n, rc = 0;

	char name[RMP_HOST_LEN], desc[512];

	/* the cluster's host count is checked against the value given; then the hosts past the ranks, which
	 * hold none (block and cyclic alike put rank r on host r when n >= size), are not built, so that
	 * RANKMAP_FAKE_HOSTS=1000000 costs what the ranks cost */
	if ((call->env.cluster || call->env.socket) && fake_host_name(call, c, n - 1, name, sizeof(name)) != 0)
		return -1;
	if (n > size && size > 0)
		n = size;
	long *hidx = malloc(sizeof(long) * (size_t)n);

	if (!hidx)
		return rm_error_set(&call->err, "placement", 0, 0, "out of memory");
	fake_desc(call, per, desc, sizeof(desc));
	if (!call->env.cluster && !call->env.socket && !call->env.fake_xml)
		rc = fake_hosts_flat(call, c, desc, n);
	for (int h = 0; h < n && rc == 0 && !call->env.cluster && !call->env.socket && call->env.fake_xml; h++) {
		snprintf(name, sizeof(name), "rmfake%d", h); /* one parsed tree for all: identical contents */
		rc = topo_load_hwloc_xml(c, call->env.fake_xml, name, &call->err);
	}
	for (int h = 0; h < n && rc == 0 && (call->env.cluster || call->env.socket); h++)
		rc = fake_host_name(call, c, h, name, sizeof(name)) || ensure_hw(call, c, name, NULL, 0, desc);
	if (rc == 0)
		rc = topo_cluster_finalize(c, &call->err);
	for (int h = 0; h < n && rc == 0; h++)
		if (fake_host_name(call, c, h, name, sizeof(name)) != 0 || (hidx[h] = host_index(call, c, name)) < 0)
			rc = -1;
	for (int r = 0; r < size && rc == 0; r++) {
		int h = call->env.fake_cyclic ? r % n : r / per;

		host[r] = (int32_t)hidx[h];
		pu[r] = call->env.fake_cyclic ? r / n : r % per;
	}
	free(hidx);
	return rc ? -1 : 0;
}

static int cmp_host(const void *a, const void *b, void *base)
{
	const rmp_rec_t *rec = base;

	return strcmp(rec[*(const int *)a].host, rec[*(const int *)b].host);
}

/* Root: loads the hardware of every distinct host once (hosts sorted by name), then finalizes; tree: the
 * ranks whose XML was gathered, sorted by key (one per key). */
static int load_real_hosts(rmp_call_t *call, topo_cluster_t c, const rmp_gather_t *ga, const rmp_tree_t *tree,
			   int ntrees)
{
	char desc[512] = "";

	if (call->env.fake_node)
		fake_desc(call, 1, desc, sizeof(desc));
	int *ord = malloc(sizeof(int) * (size_t)call->size), rc = 0;

	if (!ord)
		return rm_error_set(&call->err, "placement", 0, 0, "out of memory");
	for (int r = 0; r < call->size; r++)
		ord[r] = r;
	qsort_r(ord, (size_t)call->size, sizeof(int), cmp_host, ga->rec);
	for (int i = 0; i < call->size && rc == 0; i++) {
		const rmp_rec_t *rec = &ga->rec[ord[i]];
		const char *xml = NULL;
		size_t len = 0;

		if (i > 0 && strcmp(ga->rec[ord[i - 1]].host, rec->host) == 0)
			continue;
		rmp_tree_t want = { rec->xml_hash, -1 };
		const rmp_tree_t *t =
			rec->xml_hash ? bsearch(&want, tree, (size_t)ntrees, sizeof(*tree), cmp_key) : NULL;

		if (t)
			xml = ga->xml + ga->xml_off[t->rank], len = (size_t)ga->rec[t->rank].xml_len;
		if (call->env.fake_node ||
		    call->env.fake_xml) /* test-only hardware overrides what the hosts reported */
			xml = NULL;
		rc = ensure_hw(call, c, rec->host, xml, len, desc[0] ? desc : NULL);
	}
	free(ord);
	return rc ? -1 : topo_cluster_finalize(c, &call->err);
}

/* Root, real placement: cluster host index and logical PU (-1 unknown) of every rank. A host finds its
 * XML by its key among the gathered ones (binary search: O(p log p) in all). */
static int where_real(rmp_call_t *call, topo_cluster_t c, const rmp_gather_t *ga, int32_t *host, int32_t *pu)
{
	int ntrees = 0;
	rmp_tree_t *tree = malloc(sizeof(*tree) * (size_t)call->size);

	if (!tree)
		return rm_error_set(&call->err, "placement", 0, 0, "out of memory");
	for (int r = 0; r < call->size; r++)
		if (ga->xml_off[r] >= 0)
			tree[ntrees].key = ga->rec[r].xml_hash, tree[ntrees++].rank = r;
	qsort(tree, (size_t)ntrees, sizeof(*tree), cmp_tree);
	int rc = load_real_hosts(call, c, ga, tree, ntrees);

	free(tree);
	for (int r = 0; r < call->size && rc == 0; r++) {
		const rmp_rec_t *rec = &ga->rec[r];
		long h = host_index(call, c, rec->host);

		if (h < 0)
			return -1;
		host[r] = (int32_t)h;
		pu[r] = -1;
		if (rec->cpu >= 0 && !call->env.fake_node && !call->env.fake_xml)
			pu[r] = (int32_t)topo_host_pu_by_os(c, (size_t)h, (unsigned long)rec->cpu);
	}
	return rc;
}

/* Root: gives ranks of unknown PU (unbound, or sharing a PU with a lower rank) the free PUs of their
 * host, in rank order. Fails when a host has more ranks than PUs. */
static int assign_pus(rmp_call_t *call, topo_cluster_t c, const int32_t *host, int32_t *pu)
{
	size_t nh = topo_nhosts(c);
	uint8_t **used = calloc(nh, sizeof(*used));
	unsigned *next = calloc(nh, sizeof(unsigned));
	int rc = 0;

	if (!used || !next)
		rc = rm_error_set(&call->err, "placement", 0, 0, "out of memory");
	for (int r = 0; r < call->size && rc == 0; r++) {
		size_t h = (size_t)host[r];
		unsigned np = topo_host_npus(c, h);

		if (!used[h] && !(used[h] = calloc(np, 1)))
			rc = rm_error_set(&call->err, "placement", 0, 0, "out of memory");
		else if (pu[r] >= 0 && (unsigned)pu[r] < np && !used[h][pu[r]])
			used[h][pu[r]] = 1;
		else if (pu[r] >= 0 && call->env.fake_hosts)
			rc = rm_error_set(&call->err, "RANKMAP_FAKE_NODE", 0, 0,
					  "host %s has %u PUs, fewer than its %d ranks", topo_host_name(c, h), np,
					  pu[r] + 1);
		else
			pu[r] = -1;
	}
	for (int r = 0; r < call->size && rc == 0; r++) {
		size_t h = (size_t)host[r];
		unsigned np = topo_host_npus(c, h);

		if (pu[r] >= 0)
			continue;
		while (next[h] < np && used[h][next[h]])
			next[h]++;
		if (next[h] >= np)
			rc = rm_error_set(&call->err, topo_host_name(c, h), 0, 0,
					  "more ranks on this host than its %u PUs", np);
		else
			used[h][next[h]] = 1, pu[r] = (int32_t)next[h];
	}
	for (size_t h = 0; used && h < nh; h++)
		free(used[h]);
	free(used);
	free(next);
	return rc;
}

/* Root: the slots of every rank, allocated (host storage only for the real placement). 0 or -1. */
static int alloc_slots(rmp_call_t *call, rmp_place_t *pl, int hosts)
{
	size_t n = (size_t)call->size;

	pl->slot = malloc(sizeof(*pl->slot) * n);
	pl->pu_os = malloc(sizeof(*pl->pu_os) * n);
	pl->bound = calloc(n, 1);
	pl->host = hosts ? malloc(sizeof(*pl->host) * n) : NULL;
	if (!pl->slot || !pl->pu_os || !pl->bound || (hosts && !pl->host))
		return rm_error_set(&call->err, "placement", 0, 0, "out of memory");
	return 0;
}

/* Root: the target over the ranks' slots (rank r's is target->given[r]), and every rank's slot. */
static int make_target(rmp_call_t *call, rmp_place_t *pl, const int32_t *host, const int32_t *pu,
		       const rmp_gather_t *ga)
{
	size_t n = (size_t)call->size;
	topo_slot_t *slots = malloc(sizeof(*slots) * n);

	pl->slot_rank = malloc(sizeof(uint32_t) * n);
	pl->rank_slot = malloc(sizeof(uint32_t) * n);
	if (!slots || !pl->slot_rank || !pl->rank_slot || alloc_slots(call, pl, 0) != 0) {
		free(slots);
		return rm_error_set(&call->err, "placement", 0, 0, "out of memory");
	}
	for (size_t r = 0; r < n; r++)
		slots[r] = (topo_slot_t){ (uint32_t)host[r], (uint32_t)pu[r] };
	pl->target = topo_target_from_slots(pl->cluster, slots, n, &call->err);
	free(slots);
	if (!pl->target || pl->target->nslots != n || !pl->target->given)
		return rm_error_set(&call->err, "placement", 0, 0, "cannot build the target of %zu slots", n);
	pl->pu_index = RM_SLOT_PU_LOGICAL;
	for (uint32_t r = 0; r < n; r++) {
		uint32_t s = pl->target->given[r];

		pl->rank_slot[r] = s, pl->slot_rank[s] = r;
		pl->slot[r] = (rm_slot_t){ topo_host_name(pl->cluster, (size_t)host[r]), pu[r] };
		pl->pu_os[r] = (int32_t)pl->target->slot_pu_os[s];
		pl->bound[r] =
			ga && ga->rec && !call->env.fake_node && !call->env.fake_xml && ga->rec[r].cpu == pl->pu_os[r];
	}
	return 0;
}

/* Root: the target over the ranks' GPUs (gpu[r] on host host[r]: rmp_gpu_resolve), each rank's slot the
 * GPU's first PU. The device variables are not touched: a rank keeps its GPU and only its number changes. */
static int make_gpu_target(rmp_call_t *call, rmp_place_t *pl, const int32_t *host, const uint32_t *gpu)
{
	size_t n = (size_t)call->size;
	topo_gpu_slot_t *gs = malloc(sizeof(*gs) * n);

	pl->slot_rank = malloc(sizeof(uint32_t) * n);
	pl->rank_slot = malloc(sizeof(uint32_t) * n);
	pl->gpu = malloc(sizeof(uint32_t) * n);
	if (!gs || !pl->slot_rank || !pl->rank_slot || !pl->gpu || alloc_slots(call, pl, 0) != 0) {
		free(gs);
		return rm_error_set(&call->err, "placement", 0, 0, "out of memory");
	}
	for (size_t r = 0; r < n; r++)
		gs[r] = (topo_gpu_slot_t){ (uint32_t)host[r], gpu[r] };
	pl->target = topo_target_from_gpu_slots(pl->cluster, gs, n, &call->err);
	free(gs);
	if (!pl->target || pl->target->nslots != n || !pl->target->given)
		return rm_error_set(&call->err, "placement", 0, 0, "cannot build the target of %zu GPU slots", n);
	pl->pu_index = RM_SLOT_PU_LOGICAL;
	pl->gpu_slots = 1;
	for (uint32_t r = 0; r < n; r++) {
		uint32_t s = pl->target->given[r];

		pl->rank_slot[r] = s, pl->slot_rank[s] = r;
		pl->slot[r] =
			(rm_slot_t){ topo_host_name(pl->cluster, (size_t)host[r]), (int32_t)pl->target->slot[s].pu };
		pl->pu_os[r] = (int32_t)pl->target->slot_pu_os[s];
		pl->gpu[r] = gpu[r];
		pl->bound[r] = 0;
	}
	return 0;
}

/* Root: GPU slots when every rank drives a known GPU (make_gpu_target), else core slots (make_target). */
static int make_slots(rmp_call_t *call, rmp_place_t *pl, const int32_t *host, int32_t *pu, const rmp_gather_t *ga,
		      const rmp_gpu_rec_t *grecs)
{
	char why[200] = "";
	uint32_t *gpu = NULL;
	int g = 0;

	if (call->env.slots != RMP_SLOTS_CORE) {
		if (!(gpu = malloc(sizeof(uint32_t) * (size_t)call->size)))
			return rm_error_set(&call->err, "placement", 0, 0, "out of memory");
		g = rmp_gpu_resolve(call, pl->cluster, host, grecs, gpu, why, sizeof(why));
		if (g == 0 && !why[0] && call->env.slots == RMP_SLOTS_GPU)
			snprintf(why, sizeof(why), "RANKMAP_SLOTS=gpu, but no rank names a GPU");
	}
	int rc = g == 1 ? make_gpu_target(call, pl, host, gpu) : 0;

	free(gpu);
	if (g == 1)
		return rc;
	if (why[0])
		rmp_gpu_fallback_warn(call, why);
	rc = assign_pus(call, pl->cluster, host, pu);
	return rc == 0 ? make_target(call, pl, host, pu, ga) : rc;
}

/* Root, real placement through rankmapd: every rank's slot as it reported it (host, OS PU or
 * RM_SLOT_ANY), for the daemon to resolve; no hardware here. */
static int daemon_slots(rmp_call_t *call, rmp_place_t *pl, const rmp_gather_t *ga)
{
	if (alloc_slots(call, pl, 1) != 0)
		return -1;
	pl->pu_index = RM_SLOT_PU_OS;
	for (int r = 0; r < call->size; r++) {
		const rmp_rec_t *rec = &ga->rec[r];
		/* test-only hardware: PUs unknown */
		int32_t cpu = call->env.fake_node || call->env.fake_xml ? RM_SLOT_ANY : rec->cpu;

		memcpy(pl->host[r], rec->host, RMP_HOST_LEN);
		pl->host[r][RMP_HOST_LEN - 1] = 0;
		pl->slot[r] = (rm_slot_t){ pl->host[r], cpu < 0 ? RM_SLOT_ANY : cpu };
		pl->pu_os[r] = pl->slot[r].pu;
		pl->bound[r] = cpu >= 0;
	}
	return 0;
}

/* Root: the cluster's connectivity (cluster file, or nothing: a flat network). With rankmapd the
 * daemon maps with its own model; locally only the hardware is needed, and the daemon's host names
 * for the test-only placement. */
static int load_network(rmp_call_t *call, topo_cluster_t c)
{
	if (call->env.socket && call->env.fake_hosts && !(call->dhosts = rmp_daemon_hosts(call, &call->ndhosts)))
		return -1;
	if (call->env.socket)
		return topo_cluster_finalize(c, &call->err);
	if (call->env.cluster && topo_load_cluster_file(c, call->env.cluster, &call->err) != 0)
		return -1;
	return topo_cluster_finalize(c, &call->err);
}

int rmp_place_gather(rmp_call_t *call, rmp_place_t *pl)
{
	rmp_gather_t ga = { 0 };
	rmp_gpu_rec_t *grecs = NULL;
	int rc = 0;
	int32_t *host = NULL, *pu = NULL;

	memset(pl, 0, sizeof(*pl));
	int grc = rmp_gpu_gather(call, &grecs); /* collective when some rank names a GPU (the agreement said) */

	if (!call->env.fake_hosts)
		rc = gather_real(call, &ga); /* collective: every rank reads the same environment */
	if (rc == 0)
		rc = grc;
	if (call->rank != 0 || rc != 0)
		goto out;
	pl->hw_bytes = ga.xml_len;
	if (call->env.socket && !call->env.fake_hosts) {
		rc = daemon_slots(call, pl, &ga);
		if (rc == 0 && call->env.slots != RMP_SLOTS_CORE) {
			char why[200] = "";
			const char **hosts = malloc(sizeof(*hosts) * ((size_t)call->size + 1));

			for (int r = 0; hosts && r < call->size; r++)
				hosts[r] = pl->slot[r].host;
			pl->gpu_slots =
				hosts && rmp_gpu_daemon_ids(call, hosts, grecs, &pl->gpu_ids, why, sizeof(why)) == 1;
			free(hosts);
			if (!pl->gpu_slots && (why[0] || call->env.slots == RMP_SLOTS_GPU))
				rmp_gpu_fallback_warn(call,
						      why[0] ? why : "RANKMAP_SLOTS=gpu, but no rank names a GPU");
			if (pl->gpu_slots && !(pl->gpu = calloc((size_t)call->size, sizeof(uint32_t))))
				rc = rm_error_set(&call->err, "placement", 0, 0, "out of memory");
		}
		goto out;
	}
	pl->cluster = topo_cluster_create();
	host = malloc(sizeof(int32_t) * (size_t)call->size);
	pu = malloc(sizeof(int32_t) * (size_t)call->size);
	if (!pl->cluster || !host || !pu) {
		rc = rm_error_set(&call->err, "placement", 0, 0, "out of memory");
		goto out;
	}
	rc = load_network(call, pl->cluster);
	if (rc == 0)
		rc = call->env.fake_hosts ? where_fake(call, pl->cluster, host, pu)
					  : where_real(call, pl->cluster, &ga, host, pu);
	if (rc == 0)
		rc = make_slots(call, pl, host, pu, &ga, grecs);
out:
	free(grecs);
	free(host);
	free(pu);
	free(ga.rec);
	free(ga.xml);
	free(ga.xml_off);
	return rc ? -1 : 0;
}

void rmp_place_free(rmp_place_t *pl)
{
	topo_target_destroy(pl->target);
	topo_cluster_destroy(pl->cluster);
	free(pl->slot_rank);
	free(pl->rank_slot);
	free(pl->slot);
	free(pl->host);
	free(pl->pu_os);
	free(pl->bound);
	free(pl->gpu);
	for (int r = 0; pl->gpu_ids && pl->gpu_ids[r]; r++)
		free(pl->gpu_ids[r]);
	free(pl->gpu_ids);
	memset(pl, 0, sizeof(*pl));
}
