/*
 * topo/net_ib_live.c: the fabric from libibnetdisc: live discovery (ibnd_discover_fabric, through the
 * local HCA's umad device) and its cache files (ibnd_load_fabric, as written by ibnd_cache_fabric or
 * ibnetdiscover --cache). The ibnd_fabric_t is converted into the same build the file parsers fill.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/ibnetdisc.h>

#include "net_ib_private.h"
#include "rm_file.h"

#define PORT_CAP_HAS_EXT_SPEEDS 0x4000u

static uint8_t node_type(int t)
{
	return t == IB_NODE_SWITCH ? IBN_SW : t == IB_NODE_ROUTER ? IBN_RT : IBN_CA;
}

static uint8_t width_of(unsigned w)
{
	return w == 1 ? 1 : w == 2 ? 4 : w == 4 ? 8 : w == 8 ? 12 : w == 16 ? 2 : 0;
}

/* Active speed of a port: extended speeds when the port (or switch port 0) supports them. */
static uint8_t speed_of(ibnd_port_t *p)
{
	ibnd_port_t *cap = p->node->type == IB_NODE_SWITCH && p->node->ports[0] ? p->node->ports[0] : p;
	unsigned capmask = mad_get_field(cap->info, 0, IB_PORT_CAPMASK_F);
	unsigned ext = 0, s;

	if (capmask & PORT_CAP_HAS_EXT_SPEEDS)
		ext = mad_get_field(p->info, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F);
	switch (ext) {
	case 1: return IB_SPEED_FDR;
	case 2: return IB_SPEED_EDR;
	case 4: return IB_SPEED_HDR;
	case 8: return IB_SPEED_NDR;
	default: break;
	}
	if (mad_get_field(p->ext_info, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F) == 1)
		return IB_SPEED_FDR10;
	s = mad_get_field(p->info, 0, IB_PORT_LINK_SPEED_ACTIVE_F);
	return s == 1 ? IB_SPEED_SDR : s == 2 ? IB_SPEED_DDR : s == 4 ? IB_SPEED_QDR : IB_SPEED_UNKNOWN;
}

/* The speeds port p supports, as a mask of 1 << enum ib_speed: LinkSpeedSupported, LinkSpeedExtSupported
 * when the port (or switch port 0) has extended speeds, Mellanox's FDR10; 0 when the port says nothing. */
static unsigned speeds_supported(ibnd_port_t *p)
{
	ibnd_port_t *cap = p->node->type == IB_NODE_SWITCH && p->node->ports[0] ? p->node->ports[0] : p;
	unsigned s = mad_get_field(p->info, 0, IB_PORT_LINK_SPEED_SUPPORTED_F), m = 0, ext = 0;

	if (mad_get_field(cap->info, 0, IB_PORT_CAPMASK_F) & PORT_CAP_HAS_EXT_SPEEDS)
		ext = mad_get_field(p->info, 0, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F);
	m |= s & 1 ? 1u << IB_SPEED_SDR : 0;
	m |= s & 2 ? 1u << IB_SPEED_DDR : 0;
	m |= s & 4 ? 1u << IB_SPEED_QDR : 0;
	m |= mad_get_field(p->ext_info, 0, IB_MLNX_EXT_PORT_LINK_SPEED_SUPPORTED_F) & 1 ? 1u << IB_SPEED_FDR10 : 0;
	m |= ext & 1 ? 1u << IB_SPEED_FDR : 0;
	m |= ext & 2 ? 1u << IB_SPEED_EDR : 0;
	m |= ext & 4 ? 1u << IB_SPEED_HDR : 0;
	m |= ext & 8 ? 1u << IB_SPEED_NDR : 0;
	return m;
}

/* The widths port p supports (LinkWidthSupported), as a mask of 1 << lanes. */
static unsigned widths_supported(ibnd_port_t *p)
{
	unsigned w = mad_get_field(p->info, 0, IB_PORT_LINK_WIDTH_SUPPORTED_F), m = 0, b;

	for (b = 1; b <= 16; b <<= 1)
		if (w & b)
			m |= 1u << width_of(b);
	return m & ~1u;
}

static uint8_t highest_bit(unsigned m)
{
	uint8_t k = 0;

	while (m >>= 1)
		k++;
	return k;
}

/* The fastest speed and widest width both ends of the link on pt support (0 when either end says
 * nothing), as iblinkinfo computes its "Could be". */
static void link_caps(struct ib_build *b, uint32_t a, unsigned pa, ibnd_port_t *pt, ibnd_port_t *r)
{
	struct ib_link *l = &b->links[b->nodes[a].port_link[pa]];
	unsigned sa = speeds_supported(pt), sr = speeds_supported(r);
	unsigned wa = widths_supported(pt), wr = widths_supported(r);

	l->max_speed = sa && sr ? highest_bit(sa & sr) : 0;
	l->max_width = wa && wr ? highest_bit(wa & wr) : 0;
}

static int add_nodes(struct ib_build *b, ibnd_fabric_t *fab)
{
	ibnd_node_t *n;

	for (n = fab->nodes; n; n = n->next) {
		unsigned np = n->numports > 0 && n->numports <= IB_MAX_PORTS ? (unsigned)n->numports : 0;
		uint32_t i = ib_build_add_node(b, 0, node_type(n->type), n->guid, n->nodedesc,
					       strnlen(n->nodedesc, sizeof(n->nodedesc)), np);
		int p;

		if (i == IB_NONE)
			return -1;
		for (p = 0; p <= n->numports && n->ports; p++) {
			ibnd_port_t *pt = n->ports[p];

			if (!pt)
				continue;
			if (!b->nodes[i].lid && pt->base_lid)
				b->nodes[i].lid = pt->base_lid;
			if (p > 0 && n->type != IB_NODE_SWITCH && !b->nodes[i].port_guid)
				b->nodes[i].port_guid = pt->guid;
		}
	}
	return 0;
}

static int add_links(struct ib_build *b, ibnd_fabric_t *fab)
{
	ibnd_node_t *n;

	for (n = fab->nodes; n; n = n->next) {
		uint32_t a = ib_u64map_get(&b->by_guid, n->guid);
		int p;

		for (p = 1; p <= n->numports && n->ports; p++) {
			ibnd_port_t *pt = n->ports[p], *r;
			uint32_t c;

			if (!pt || !(r = pt->remoteport) || !r->node)
				continue;
			c = ib_u64map_get(&b->by_guid, r->node->guid);
			if (c == IB_NONE) {
				errno = EINVAL;
				return rm_error_set(b->err, b->source, 0, 0,
						    "port %d of %016llx leads to an unknown node", p,
						    (unsigned long long)n->guid);
			}
			if (ib_build_link(b, 0, a, (unsigned)p, c, (unsigned)r->portnum,
					  width_of(mad_get_field(pt->info, 0, IB_PORT_LINK_WIDTH_ACTIVE_F)),
					  speed_of(pt)) < 0)
				return -1;
			link_caps(b, a, (unsigned)p, pt, r);
		}
	}
	return 0;
}

int ib_build_from_ibnd(struct ib_build *b, void *ibnd_fabric)
{
	ibnd_fabric_t *fab = ibnd_fabric;

	if (add_nodes(b, fab) < 0 || add_links(b, fab) < 0)
		return -1;
	return 0;
}

static int load_ibnd(struct topo_fabric *f, ibnd_fabric_t *fab, const char *source, rm_error_t *err)
{
	struct ib_build b = { .source = source, .err = err };
	int rc = ib_build_from_ibnd(&b, fab);

	ibnd_destroy_fabric(fab);
	if (rc < 0) {
		ib_build_free(&b);
		return -1;
	}
	return ib_fabric_add_build(f, &b, source);
}

int topo_fabric_load_live(struct topo_fabric *f, const char *ca, int port, rm_error_t *err)
{
	struct ibnd_config cfg;
	char source[128];
	ibnd_fabric_t *fab;

	/* a zeroed config means the library defaults; NULL crashes libibnetdisc 44 */
	memset(&cfg, 0, sizeof(cfg));
	snprintf(source, sizeof(source), "libibnetdisc:%s:%d", ca ? ca : "default", port);
	fab = ibnd_discover_fabric((char *)ca, port, NULL, &cfg);
	if (!fab) {
		errno = EIO;
		return rm_error_set(err, source, 0, 0,
				    "InfiniBand discovery failed (no usable HCA port, umad device or subnet manager?)");
	}
	return load_ibnd(f, fab, source, err);
}

int topo_fabric_load_cache(struct topo_fabric *f, const char *path, rm_error_t *err)
{
	ibnd_fabric_t *fab;
	char fdpath[64];
	int fd = rm_file_open(path, RM_FILE_IB, NULL, err);

	if (fd < 0)
		return -1;
	/* libibnetdisc opens the file itself: give it the checked file, not the name (which could be
	 * replaced by a FIFO between the check and its open); the path itself where /proc is missing */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	fab = ibnd_load_fabric(access(fdpath, R_OK) == 0 ? fdpath : path, 0);
	close(fd);
	if (!fab) {
		errno = EINVAL;
		return rm_error_set(err, path, 0, 0, "not a libibnetdisc cache file (ibnd_load_fabric failed)");
	}
	return load_ibnd(f, fab, path, err);
}
