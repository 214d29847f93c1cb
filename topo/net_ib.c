/*
 * topo/net_ib.c: the InfiniBand fabric: lifecycle, loaders and queries (see net_ib_private.h).
 * Early skeleton: an empty fabric with working accessors; the parsers follow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"

struct topo_fabric *topo_fabric_create(void)
{
	struct topo_fabric *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->max_level = -1;
	pthread_mutex_init(&f->cache_lock, NULL);
	return f;
}

void topo_fabric_destroy(struct topo_fabric *f)
{
	if (!f)
		return;
	pthread_mutex_destroy(&f->cache_lock);
	free(f);
}

static int unsupported(const char *src, rm_error_t *err)
{
	errno = ENOTSUP;
	return rm_error_set(err, src, 0, 0, "InfiniBand loader unsupported in this build yet");
}

int topo_fabric_load_file(struct topo_fabric *f, const char *path, rm_error_t *err)
{
	return unsupported(path, err);
}

int topo_fabric_load_live(struct topo_fabric *f, const char *ca, int port, rm_error_t *err)
{
	return unsupported("libibnetdisc", err);
}

int topo_fabric_load_cache(struct topo_fabric *f, const char *path, rm_error_t *err)
{
	return unsupported(path, err);
}

int topo_fabric_load_node_name_map(struct topo_fabric *f, const char *path, rm_error_t *err)
{
	return unsupported(path, err);
}

int topo_fabric_finalize(struct topo_fabric *f, rm_error_t *err)
{
	f->finalized = 1;
	return 0;
}

size_t topo_fabric_nhosts(const struct topo_fabric *f)
{
	return f->nhosts;
}

const char *topo_fabric_host_name(const struct topo_fabric *f, size_t i)
{
	return i < f->nhosts ? f->hosts[i].name : NULL;
}

int topo_fabric_hops(const struct topo_fabric *f, size_t a, size_t b)
{
	if (a >= f->nhosts || b >= f->nhosts)
		return -1;
	return a == b ? 0 : -1;
}

long topo_fabric_host_leaf(const struct topo_fabric *f, size_t i)
{
	return i < f->nhosts ? f->hosts[i].leaf : -1;
}

int topo_fabric_network_levels(const struct topo_fabric *f)
{
	return f->nlevels;
}

long topo_fabric_leaf_group(const struct topo_fabric *f, long leaf, int k)
{
	return -1;
}

json_t *topo_fabric_report(const struct topo_fabric *f)
{
	return json_pack("{s:i, s:i, s:i, s:[]}", "switches", 0, "hca_ports", 0, "subnets", 0, "anomalies");
}
