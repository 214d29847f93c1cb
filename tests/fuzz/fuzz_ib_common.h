/*
 * tests/fuzz/fuzz_ib_common.h: runs one ibnetdiscover parser of topo/net_ib*.c on a buffer (without
 * format detection, so each target reaches its parser with every input), merges the result as a
 * subnet, and finalizes the fabric (host naming, switch levels, hop tables) and queries it.
 */
#ifndef RANKMAP_FUZZ_IB_COMMON_H
#define RANKMAP_FUZZ_IB_COMMON_H

#include "fuzz_util.h"
#include "topo/net_ib_private.h"

static void fz_ib_query(struct topo_fabric *f)
{
	size_t n = topo_fabric_nhosts(f), i;

	for (i = 0; i < n && i < 64; i++) {
		(void)topo_fabric_host_name(f, i);
		(void)topo_fabric_hops(f, i, n - 1 - i);
		(void)topo_fabric_host_leaf(f, i);
	}
	for (i = 0; i < topo_fabric_nswitches(f) && i < 64; i++) {
		(void)topo_fabric_switch_name(f, (long)i);
		(void)topo_fabric_switch_group(f, (long)i);
	}
	for (i = 0; i < n && i < 16; i++) { /* rails and paths (net_ib_rails.c, net_ib_hops.c) */
		struct topo_fabric_path p;
		topo_group_links_t gl;

		(void)topo_fabric_rail_hops(f, i, n - 1 - i, (unsigned)(i % (topo_fabric_nrails(f) + 1)));
		(void)topo_fabric_path(f, i, n - 1 - i, -1, &p);
		(void)topo_fabric_host_group(f, i);
		(void)topo_fabric_group_links(f, i % (topo_fabric_ngroups(f) + 1), 0, &gl);
	}
	json_decref(topo_fabric_report(f));
}

static void fz_ib_parse(const struct ib_format *fmt, const uint8_t *data, size_t size)
{
	rm_error_t err = { 0 };
	struct ib_build b = { .source = "fuzz", .err = &err };
	struct topo_fabric *f = topo_fabric_create();
	char *buf = fz_string(data, size);
	struct ib_lines ln = { buf, buf + size, 0 };

	if (!f)
		fz_die("topo_fabric_create");
	if (fmt->parse(&b, &ln) < 0) {
		ib_build_free(&b);
	} else if (ib_fabric_add_build(f, &b, "fuzz") == 0 && topo_fabric_finalize(f, &err) == 0) {
		fz_ib_query(f);
	}
	free(buf);
	topo_fabric_destroy(f);
}

#endif
