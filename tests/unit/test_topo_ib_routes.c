/*
 * tests/unit/test_topo_ib_routes.c: hop counts checked against the routes the subnet manager really
 * programmed. PlaFRIM's ibroutes-subnet0/ibroute-<lid>.txt hold every switch's linear forwarding
 * table (`ibroute` output: "0x0005 001 : (Channel Adapter portguid ...)" = destination LID, out port).
 * For every pair of hosts, the test walks the forwarding tables from the source's leaf switch to the
 * destination LID over the links of the parsed fabric, and counts the links. A route is never shorter
 * than the BFS hop count, and the SM's minimum-hop routing should make them equal.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "net_ib_private.h"

#define MAX_LID 4096

struct lft {
	uint64_t guid;
	uint8_t port[MAX_LID];
};

static struct lft tables[64];
static int ntables;

static int read_lft(const char *path)
{
	FILE *fp = fopen(path, "r");
	char line[512];
	struct lft *t;
	unsigned long long g;

	if (!fp || ntables == 64)
		return fp ? fclose(fp), -1 : -1;
	t = &tables[ntables];
	memset(t, 0, sizeof(*t));
	while (fgets(line, sizeof(line), fp)) {
		const char *p = strstr(line, " guid 0x");
		unsigned lid, port;

		if (p && sscanf(p, " guid 0x%llx", &g) == 1)
			t->guid = g;
		else if (sscanf(line, "0x%x %u :", &lid, &port) == 2 && lid < MAX_LID)
			t->port[lid] = (uint8_t)port;
	}
	fclose(fp);
	if (!t->guid)
		return -1;
	ntables++;
	return 0;
}

static const struct lft *lft_of(uint64_t guid)
{
	int i;

	for (i = 0; i < ntables; i++)
		if (tables[i].guid == guid)
			return &tables[i];
	return NULL;
}

/* The node at the other end of (node n, port p), or IB_NONE. */
static uint32_t across(const struct topo_fabric *f, uint32_t n, unsigned p)
{
	const struct ib_node *nd = &f->nodes[n];
	const struct ib_link *l;

	if (!nd->port_link || p > nd->nports || nd->port_link[p] == IB_NONE)
		return IB_NONE;
	l = &f->links[nd->port_link[p]];
	return l->node[0] == n && l->port[0] == p ? l->node[1] : l->node[0];
}

/* Links on the programmed route from CA node a to CA node b; -1 when the tables lose the packet. */
static int route_len(const struct topo_fabric *f, uint32_t a, uint32_t b)
{
	uint32_t cur = across(f, a, 1);
	int len = 1;

	while (cur != IB_NONE && f->nodes[cur].type == IBN_SW && len < 64) {
		const struct lft *t = lft_of(f->nodes[cur].guid);

		if (!t || !t->port[f->nodes[b].lid])
			return -1;
		cur = across(f, cur, t->port[f->nodes[b].lid]);
		len++;
	}
	return cur == b ? len : -1;
}

int main(void)
{
	char path[1024], dir[512];
	struct topo_fabric *f = topo_fabric_create();
	struct dirent *de;
	size_t a, b, pairs = 0, equal = 0, shorter = 0, lost = 0;
	rm_error_t err;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/plafrim/ib/ibroutes-subnet0", harness_data_dir());
	d = opendir(dir);
	check(d != NULL, "open %s", dir);
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "ibroute-", 8)) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			check(read_lft(path) == 0, "read %s", path);
		}
	if (d)
		closedir(d);
	check(ntables == 9, "9 forwarding tables, one per switch (%d)", ntables);
	snprintf(path, sizeof(path), "%s/plafrim/ib/ib-subnet0.txt", harness_data_dir());
	rm_error_clear(&err);
	if (topo_fabric_load_file(f, path, &err) < 0 || topo_fabric_finalize(f, &err) < 0) {
		fail("plafrim: %s", err.text);
		topo_fabric_destroy(f);
		return harness_done();
	}
	for (a = 0; a < f->nhosts; a++)
		for (b = 0; b < f->nhosts; b++) {
			int r, h;

			if (a == b)
				continue;
			r = route_len(f, f->att[f->hosts[a].first].ca, f->att[f->hosts[b].first].ca);
			h = topo_fabric_hops(f, a, b);
			pairs++;
			lost += r < 0;
			shorter += r >= 0 && r < h;
			equal += r == h;
		}
	printf("%zu ordered host pairs: %zu routes of BFS length, %zu lost, %zu shorter than BFS\n", pairs, equal, lost,
	       shorter);
	check(pairs == 125 * 124, "all pairs walked");
	check(lost == 0, "every route reaches its destination (%zu lost)", lost);
	check(shorter == 0, "no route shorter than the BFS hop count (%zu)", shorter);
	check(equal == pairs, "routes have the minimum hop count (%zu of %zu)", equal, pairs);
	topo_fabric_destroy(f);
	return harness_done();
}
