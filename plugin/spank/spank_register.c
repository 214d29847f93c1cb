/*
 * plugin/spank/spank_register.c: at slurmd start, send this node's hwloc topology to rankmapd
 * ({"type": "register", "host": NODENAME, "xml": HWLOC_XML}) so the daemon's model follows the
 * hardware. With a server list (plugstack server=A,B: a primary and a backup), the node registers with
 * every server of the list, each alone: the daemons share nothing, each keeps its own registrations.
 * Runs inside slurmd: bounded by the plugin's timeout (shared by all the servers), logs, never fails
 * slurmd. A server answering `timeout` (its hwloc parse of new hardware gave no answer in time; it kept
 * nothing) is sent the registration again after a backoff, within its share (rm_spank_register_retry_ms).
 *
 * The node name is slurmd's -N argument when given (several slurmd on one host), else the short host
 * name (Slurm's default NodeName). Test-only: RANKMAP_FAKE_NODE='<hwloc synthetic description>' in
 * slurmd's environment registers that synthetic hardware instead of the real one, so that virtual
 * nodes (slurmd -N) can look like the nodes slurm.conf declares. The export keeps the node's I/O
 * devices (GPUs, NICs, and the OpenFabrics HCAs whose NodeGUID/Port GIDs name generic HCAs in the fabric:
 * topo/node_guid.c); hwloc's HWLOC_XMLFILE in slurmd's environment registers a recorded node instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hwloc.h>
#include <jansson.h>

#include "rm_client.h"
#include "spank_rm.h"

/* Finds "-N name" / "-Nname" in slurmd's command line. Returns 0 with the name in buf, or -1. */
static int slurmd_nodename(char *buf, size_t len)
{
	char cmd[8192];
	ssize_t n;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, cmd, sizeof(cmd) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	cmd[n] = '\0';
	for (char *p = cmd; p < cmd + n; p += strlen(p) + 1) {
		const char *v = NULL;
		if (!strcmp(p, "-N") && p + strlen(p) + 1 < cmd + n)
			v = p + strlen(p) + 1;
		else if (!strncmp(p, "-N", 2) && p[2])
			v = p + 2;
		if (v && *v && strlen(v) < len) {
			memcpy(buf, v, strlen(v) + 1);
			return 0;
		}
	}
	return -1;
}

static int node_name(char *buf, size_t len)
{
	char *dot;

	if (slurmd_nodename(buf, len) == 0)
		return 0;
	if (gethostname(buf, len) < 0)
		return -1;
	buf[len - 1] = '\0';
	dot = strchr(buf, '.');
	if (dot)
		*dot = '\0';
	return 0;
}

/* Exports this host's topology (or the test-only synthetic one) as hwloc XML. Returns a string to free
 * with hwloc_free_xmlbuffer (through *topo), or NULL with err set. */
static char *node_xml(hwloc_topology_t *topo, int *len, rm_error_t *err)
{
	const char *fake = getenv("RANKMAP_FAKE_NODE");
	char *xml = NULL;

	if (hwloc_topology_init(topo) < 0)
		return rm_error_set(err, "hwloc", 0, 0, "init: %s", strerror(errno)), NULL;
	if (fake && *fake && hwloc_topology_set_synthetic(*topo, fake) < 0) {
		rm_error_set(err, "RANKMAP_FAKE_NODE", 0, 0, "bad hwloc synthetic description '%s'", fake);
		goto fail;
	}
	/* GPUs, NICs and the HCAs' GUIDs are PCI and OS devices, which hwloc's default filters drop: keep
	 * the devices hwloc calls important (GPUs, NICs, OpenFabrics HCAs, storage) and the bridges above
	 * them */
	hwloc_topology_set_io_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	if (hwloc_topology_load(*topo) < 0) {
		rm_error_set(err, "hwloc", 0, 0, "load: %s", strerror(errno));
		goto fail;
	}
	if (hwloc_topology_export_xmlbuffer(*topo, &xml, len, 0) < 0) {
		rm_error_set(err, "hwloc", 0, 0, "XML export: %s", strerror(errno));
		goto fail;
	}
	return xml;
fail:
	hwloc_topology_destroy(*topo);
	return NULL;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sends req (borrowed) to server entry within its deadline (ms, now_ms's clock), again after a backoff
 * while the daemon answers `timeout` (rm_spank_register_retry_ms). Logs the outcome once. */
static void register_one(rm_spank_ctx_t *ctx, const char *host, const char *entry, long long deadline,
			 const json_t *req)
{
	char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 32];
	rm_client_opts_t o = { .servers = entry,
			       .munge_socket = ctx->conf.munge_socket[0] ? ctx->conf.munge_socket : NULL,
			       .server_uid = ctx->conf.server_uid[0] ? ctx->conf.server_uid : NULL };
	int tries, wait, rc;

	for (tries = 1;; tries++) {
		rm_error_t err = { 0 };
		json_t *resp = NULL;
		long long left = deadline - now_ms();

		o.timeout_ms = left > 1 ? (int)left : 1;
		rc = rm_client_call_opts(&o, json_deep_copy(req), &resp, NULL, &err);
		json_decref(resp);
		if (rc == 0) {
			if (tries > 1)
				slurm_info("rankmap: registered %s's topology with rankmapd at %s (send %d of %d)",
					   host, entry, tries, RM_SPANK_REGISTER_TRIES);
			else
				slurm_info("rankmap: registered %s's topology with rankmapd at %s", host, entry);
			return;
		}
		wait = rm_spank_register_retry_ms(err.source, tries, (long)(deadline - now_ms()));
		if (wait < 0) {
			slurm_error("rankmap: registering %s with rankmapd at %s failed%s (slurmd continues): %s", host,
				    entry, tries > 1 ? " every time" : "", rm_error_format(&err, buf, sizeof(buf)));
			return;
		}
		slurm_verbose(
			"rankmap: rankmapd at %s answered timeout to %s's registration (send %d): sending "
			"it again in %d ms",
			entry, host, tries, wait);
		usleep((useconds_t)wait * 1000);
	}
}

/* Sends req (borrowed) to every server of the list in turn, each within its share of the plugin's
 * timeout. */
static void register_everywhere(rm_spank_ctx_t *ctx, const char *host, const json_t *req)
{
	char entry[256];
	int i, n = rm_client_server_count(ctx->conf.socket);
	long long deadline = now_ms() + ctx->conf.timeout_ms, left;

	for (i = 0; i < n; i++) {
		left = deadline - now_ms();
		if (rm_client_server_entry(ctx->conf.socket, i, entry, sizeof(entry)) < 0 || left < 1)
			break;
		register_one(ctx, host, entry, now_ms() + (left / (n - i) > 0 ? left / (n - i) : 1), req);
	}
}

void rm_spank_register_node(rm_spank_ctx_t *ctx)
{
	char host[256], buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 32];
	hwloc_topology_t topo;
	rm_error_t err = { 0 };
	json_t *req;
	char *xml;
	int len = 0;

	if (node_name(host, sizeof(host)) < 0) {
		slurm_error("rankmap: cannot register this node: no node name");
		return;
	}
	xml = node_xml(&topo, &len, &err);
	if (!xml) {
		slurm_error("rankmap: cannot register %s: %s", host, rm_error_format(&err, buf, sizeof(buf)));
		return;
	}
	req = rm_proto_request("register", 1);
	if (req) {
		json_object_set_new(req, "host", json_string(host));
		json_object_set_new(req, "xml",
				    json_stringn(xml, len > 0 && xml[len - 1] == '\0' ? (size_t)len - 1 : (size_t)len));
	}
	hwloc_free_xmlbuffer(topo, xml);
	hwloc_topology_destroy(topo);
	if (!req) {
		slurm_error("rankmap: cannot register %s: out of memory", host);
		return;
	}
	register_everywhere(ctx, host, req);
	json_decref(req);
}
