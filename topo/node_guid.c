/*
 * topo/node_guid.c: the InfiniBand GUIDs hwloc records for a host's HCAs (with its GPU UUIDs: infos are each
 * host's own, while hosts that differ only in infos share a node type), and their use in naming the
 * fabric's unnamed HCAs.
 *
 * hwloc's OpenFabrics OS devices (mlx4_0, mlx5_0, hfi1_0, ...) carry infos
 *   <info name="NodeGUID" value="0002:c903:0002:a0ce"/>
 *   <info name="Port1GID0" value="fe80:0000:0000:0000:0002:c903:0002:a0cf"/>
 * in hwloc 1.x and 2.x XML alike. The node GUID names the HCA in an ibnetdiscover topology file and in
 * libibnetdisc; the interface half of a port's GID 0 is the port GUID, which names the HCA in a -p
 * ports report. Both are kept per host, read from the raw XML (hosts sharing a node type have their own
 * GUIDs), so a host whose XML holds the GUID of an HCA the fabric cannot name gives it its name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_private.h"

/* Parses "0002:c903:0002:a0ce" (16 hex digits, colons ignored) from s up to the closing quote. */
static int parse_colon_hex(const char *s, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	for (; s < end && *s != '"'; s++) {
		int d = *s >= '0' && *s <= '9'   ? *s - '0'
			: *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
			: *s >= 'A' && *s <= 'F' ? *s - 'A' + 10
			: *s == ':'              ? -2
						 : -1;

		if (d == -2)
			continue;
		if (d < 0 || ++digits > 32)
			return -1;
		v = v << 4 | (uint64_t)d; /* a GID's 32 digits leave its low 64 bits: the port GUID */
	}
	*out = v;
	return digits == 16 || digits == 32 ? 0 : -1;
}

/* Is name (up to the quote) "Port<digits>GID0"? */
static int is_port_gid0(const char *s)
{
	if (strncmp(s, "Port", 4))
		return 0;
	for (s += 4; *s >= '0' && *s <= '9'; s++)
		;
	return !strncmp(s, "GID0\"", 5);
}

static int add_guid(uint64_t **v, size_t *n, size_t *cap, uint64_t g)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*v)[i] == g)
			return 0;
	if (*n == *cap) {
		uint64_t *nv = realloc(*v, (*cap = *cap ? *cap * 2 : 8) * sizeof(*nv));

		if (!nv)
			return -1;
		*v = nv;
	}
	(*v)[(*n)++] = g;
	return 0;
}

/* A GUID block with the GPU UUID pairs u (ulen bytes, may be 0). NULL when there is nothing. */
static struct topo_guids *guids_make_u(const uint64_t *node, size_t nnode, const uint64_t *port, size_t nport,
				       const char *u, size_t ulen)
{
	struct topo_guids *g;

	if (!nnode && !nport && !ulen)
		return NULL;
	if (!(g = malloc(sizeof(*g) + (nnode + nport) * sizeof(g->v[0]) + ulen)))
		return NULL;
	g->n = (uint32_t)(nnode + nport);
	g->nnode = (uint32_t)nnode;
	g->uuid_len = (uint32_t)ulen;
	if (nnode) /* node or port may be NULL when it holds nothing */
		memcpy(g->v, node, nnode * sizeof(*node));
	if (nport)
		memcpy(g->v + nnode, port, nport * sizeof(*port));
	if (ulen)
		memcpy(g->v + g->n, u, ulen);
	return g;
}

size_t topo_guids_bytes(const struct topo_guids *g)
{
	return g ? sizeof(*g) + g->n * sizeof(g->v[0]) + g->uuid_len : 0;
}

const char *topo_guids_uuid(const struct topo_guids *g, const char *osdev)
{
	const char *p, *end;

	if (!g || !g->uuid_len || !osdev)
		return NULL;
	p = (const char *)(g->v + g->n);
	end = p + g->uuid_len;
	while (p < end) {
		const char *u = p + strlen(p) + 1;

		if (u >= end)
			break;
		if (!strcmp(p, osdev))
			return u;
		p = u + strlen(u) + 1;
	}
	return NULL;
}

/* The GPU UUIDs of an hwloc XML buffer: for each NVIDIAUUID, AMDUUID or LevelZeroUUID info, the name of
 * the OS device it belongs to (the last <object type="OSDev" ... name="..."> before it) and the value,
 * as "osdev\0uuid\0" pairs in a new buffer (length in *ulen; NULL when none). These are infos, so hosts
 * that share a node type keep their own here (topo_host_gpu_uuid). */
static char *gpu_uuids(const char *buf, size_t len, size_t *ulen)
{
	static const char tag[] = "<info name=\"";
	static const char *names[] = { "NVIDIAUUID\" value=\"", "AMDUUID\" value=\"", "LevelZeroUUID\" value=\"" };
	const char *end = buf + len, *p = buf, *scan = buf, *osdev = NULL;
	char *out = NULL;
	size_t cap = 0, i;

	*ulen = 0;
	/* one pass over the info elements (as topo_guids_from_xml): the cost of a file is linear */
	while (p < end && (p = memmem(p, (size_t)(end - p), tag, sizeof(tag) - 1))) {
		const char *best = p, *v, *q, *o, *nm, *nq;
		size_t bl = 0, need;
		char *no;

		p += sizeof(tag) - 1;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if ((size_t)(end - p) > strlen(names[i]) && !strncmp(p, names[i], strlen(names[i])))
				bl = sizeof(tag) - 1 + strlen(names[i]);
		if (!bl)
			continue;
		v = best + bl;
		p = v;
		if (!(q = memchr(v, '"', (size_t)(end - v))) || q - v > 80)
			continue;
		/* its OS device: the last one opened before it, found by a forward scan that never goes back */
		while (scan < best && (o = memmem(scan, (size_t)(best - scan), "<object type=\"OSDev\"", 20))) {
			osdev = o;
			scan = o + 20;
		}
		scan = best;
		o = osdev;
		nm = o ? memmem(o, (size_t)(best - o), " name=\"", 7) : NULL;
		if (!nm || !(nq = memchr(nm + 7, '"', (size_t)(best - nm - 7))) || nq - nm - 7 > 64)
			continue;
		need = (size_t)(nq - nm - 7) + 1 + (size_t)(q - v) + 1;
		if (*ulen + need > cap) {
			cap = (*ulen + need) * 2 + 64;
			if (!(no = realloc(out, cap))) {
				free(out);
				*ulen = 0;
				return NULL;
			}
			out = no;
		}
		memcpy(out + *ulen, nm + 7, (size_t)(nq - nm - 7));
		*ulen += (size_t)(nq - nm - 7);
		out[(*ulen)++] = '\0';
		memcpy(out + *ulen, v, (size_t)(q - v));
		*ulen += (size_t)(q - v);
		out[(*ulen)++] = '\0';
	}
	return out;
}

struct topo_guids *topo_guids_from_xml(const char *buf, size_t len, int gpus)
{
	static const char tag[] = "<info name=\"";
	const char *p = buf, *end = buf + len, *s, *v;
	uint64_t *node = NULL, *port = NULL, g;
	size_t nn = 0, np = 0, cn = 0, cp = 0;
	struct topo_guids *out;
	int bad = 0;

	while (!bad && p < end && (s = memmem(p, (size_t)(end - p), tag, sizeof(tag) - 1))) {
		int isnode;

		s += sizeof(tag) - 1;
		p = s;
		isnode = (size_t)(end - s) > 10 && !strncmp(s, "NodeGUID\"", 9);
		if (!isnode && !((size_t)(end - s) > 12 && is_port_gid0(s)))
			continue;
		v = memmem(s, (size_t)(end - s) < 64 ? (size_t)(end - s) : 64, "value=\"", 7);
		if (!v || parse_colon_hex(v + 7, end, &g) < 0 || !g)
			continue;
		bad = isnode ? add_guid(&node, &nn, &cn, g) : add_guid(&port, &np, &cp, g);
	}
	if (!bad) {
		size_t ulen = 0;
		char *u = gpus ? gpu_uuids(buf, len, &ulen) : NULL; /* a node without GPUs pays nothing */

		out = guids_make_u(node, nn, port, np, u, ulen);
		free(u);
	} else {
		out = NULL;
	}
	free(node);
	free(port);
	return out;
}

/* The GUID an info hunk changes from, and to (0, 0 when it is no GUID info). */
static int hunk_guids(hwloc_topology_diff_t h, uint64_t *from, uint64_t *to, int *isnode)
{
	const char *name, *ov, *nv;
	char q[80];

	if (h->generic.type != HWLOC_TOPOLOGY_DIFF_OBJ_ATTR ||
	    h->obj_attr.diff.generic.type != HWLOC_TOPOLOGY_DIFF_OBJ_ATTR_INFO)
		return 0;
	name = h->obj_attr.diff.string.name;
	ov = h->obj_attr.diff.string.oldvalue;
	nv = h->obj_attr.diff.string.newvalue;
	if (!name || !ov || !nv || strlen(name) > 60)
		return 0;
	*isnode = !strcmp(name, "NodeGUID");
	snprintf(q, sizeof(q), "%s\"", name);
	if (!*isnode && !is_port_gid0(q))
		return 0;
	return parse_colon_hex(ov, ov + strlen(ov), from) == 0 && parse_colon_hex(nv, nv + strlen(nv), to) == 0;
}

struct topo_guids *topo_guids_patch(const struct topo_guids *g, hwloc_topology_diff_t diff)
{
	uint64_t *v, from, to;
	struct topo_guids *out;
	size_t i, n = g ? g->n : 0;
	int isnode;

	if (!g || (!n && !g->uuid_len))
		return NULL;
	if (!(v = malloc((n ? n : 1) * sizeof(*v))))
		return NULL;
	memcpy(v, g->v, n * sizeof(*v));
	for (; diff; diff = diff->generic.next)
		if (hunk_guids(diff, &from, &to, &isnode))
			for (i = isnode ? 0 : g->nnode; i < (isnode ? g->nnode : n); i++)
				if (v[i] == from)
					v[i] = to;
	/* the reference's GPU UUIDs, as they are (a diff host keeps them: its GPUs are named by index) */
	out = guids_make_u(v, g->nnode, v + g->nnode, n - g->nnode, (const char *)(g->v + g->n), g->uuid_len);
	free(v);
	return out;
}

size_t topo_host_guids(topo_cluster_t c, size_t h, const uint64_t **node, const uint64_t **port, size_t *nport)
{
	const struct topo_guids *g = h < c->nhosts ? c->hosts[h].guids : NULL;

	*node = g ? g->v : NULL;
	*port = g ? g->v + g->nnode : NULL;
	*nport = g ? g->n - g->nnode : 0;
	return g ? g->nnode : 0;
}

int topo_guids_to_fabric(struct topo_cluster *c)
{
	size_t h, n = 0, k = 0;
	uint64_t *guids, *node_of;
	const char **names;
	int r;

	for (h = 0; h < c->nhosts; h++)
		n += c->hosts[h].guids ? c->hosts[h].guids->n : 0;
	guids = malloc((n ? n : 1) * sizeof(*guids));
	names = malloc((n ? n : 1) * sizeof(*names));
	node_of = calloc(n ? n : 1, sizeof(*node_of));
	if (!guids || !names || !node_of) {
		free(guids);
		free(names);
		free(node_of);
		errno = ENOMEM;
		return -1;
	}
	for (h = 0; h < c->nhosts; h++) {
		const struct topo_guids *g = c->hosts[h].guids;
		uint32_t i;

		for (i = 0; g && i < g->n; i++, k++) {
			guids[k] = g->v[i];
			names[k] = c->hosts[h].name;
			if (i >= g->nnode && g->nnode == 1) /* one HCA: every port GUID is one of its ports */
				node_of[k] = g->v[0];
		}
	}
	r = topo_fabric_set_hwloc_names(c->fabric, c->guid_gen, guids, names, node_of, n);
	free(guids);
	free(names);
	free(node_of);
	return r;
}
