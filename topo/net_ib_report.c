/*
 * topo/net_ib_report.c: the fabric's part of `rankmapctl report` as one JSON object:
 *
 *   switches, switches_per_level [leaf, spine, ...], switches_unreached (no path to any host),
 *   hosts, hcas, hca_ports (connected HCA ports), aggregation_nodes, subnets, subnet_sources, links,
 *   link_speeds {"QDR": n}, link_widths {"4x": n}, link_rates {"4x QDR": n},
 *   leaves [{switch, guid, down_ports, up_ports, lateral_ports, unconnected_ports, oversubscription}],
 *   unconnected_switch_ports, hop_histogram [{hops, pairs}] by increasing hops (hops null: no path),
 *   hop_histogram_method (net_ib_hist.c), hop_histogram_approximate, links_with_supported_rates,
 *   anomalies [{kind, severity, text, ...structured fields}] (docs/json-schema.json).
 *
 * Anomaly kinds: slow_link, narrow_link (could be faster / wider: both ends support more, known from
 * libibnetdisc only; iblinkinfo's "Could be"), below_norm_link (severity "note": below the most common
 * speed/width of the link's subnet when what its ends support is unknown), unknown_speed_link, unconnected_ports (per switch), generic_hca (HCA named by its GUID),
 * unconnected_hca, unreached_switch, unmatched_name_map (node-name map entries that named nothing, said
 * once when a subnet is a -p ports report: its CA ports show port GUIDs only, so a map keyed by node
 * GUID matches only through the hosts' hwloc XML).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"
#include "topo_view.h"

#define HOP_PAIRS_EXACT 4096 /* hosts beyond which the report always says whether its histogram is exact */

static json_t *anomaly(json_t *list, const char *kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Appends {kind, severity "warning", text} to list and returns it (borrowed) for the structured fields. */
static json_t *anomaly(json_t *list, const char *kind, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	json_t *a;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	a = json_pack("{s:s, s:s, s:s}", "kind", kind, "severity", "warning", "text", text);
	json_array_append_new(list, a);
	return a;
}

static json_t *guid_str(uint64_t guid)
{
	char b[24];

	snprintf(b, sizeof(b), "0x%016llx", (unsigned long long)guid);
	return json_string(b);
}

/* Display name of a node: a switch's name in names (dense index: the names of topology.conf and the
 * picture) when given, else the node-name map, else host name, else description, else GUID. */
static const char *node_name(const struct topo_fabric *f, const char *const *names, const struct ib_node *nd, char *buf,
			     size_t len)
{
	const char *m = ib_namemap_lookup(f, nd->guid);

	if (names && nd->sw >= 0 && (size_t)nd->sw < f->nsw && names[nd->sw])
		return names[nd->sw];
	if (m)
		return m;
	if (nd->host >= 0)
		return f->hosts[nd->host].name;
	if (nd->desc[0])
		return nd->desc;
	snprintf(buf, len, "0x%016llx", (unsigned long long)nd->guid);
	return buf;
}

static void count(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	json_object_set_new(obj, key, json_integer(v ? json_integer_value(v) + 1 : 1));
}

/* One end of a link, for a link anomaly: {name, type, guid, port, host (a CA's host, else absent)}. */
static json_t *link_end(const struct topo_fabric *f, const char *const *names, uint32_t n, unsigned port)
{
	const struct ib_node *nd = &f->nodes[n];
	char b[24];
	json_t *e = json_pack("{s:s, s:s, s:o, s:i}", "name", node_name(f, names, nd, b, sizeof(b)), "type",
			      nd->type == IBN_SW   ? "switch"
			      : nd->type == IBN_RT ? "router"
						   : "ca",
			      "guid", guid_str(nd->guid), "port", (int)port);

	if (nd->host >= 0)
		json_object_set_new(e, "host", json_string(f->hosts[nd->host].name));
	return e;
}

static json_t *rate(unsigned width, unsigned speed)
{
	return json_pack("{s:i, s:s}", "width", (int)width, "speed", ib_speed_name((uint8_t)speed));
}

/* The anomalies of one link from its verdict (ib_link_verdict): slow_link / narrow_link when it could be
 * faster / wider (both ends support more: could_be), below_norm_link (a note) when it is below its
 * subnet's norm and what its ends support is unknown. */
static void link_anomalies(const struct topo_fabric *f, const char *const *names, json_t *an, const struct ib_link *l,
			   uint32_t s)
{
	unsigned v = ib_link_verdict(f, l);
	uint8_t ns = f->norm_speed[s], nw = f->norm_width[s];
	char b0[24], b1[24], what[64];
	const char *n0 = node_name(f, names, &f->nodes[l->node[0]], b0, sizeof(b0));
	const char *n1 = node_name(f, names, &f->nodes[l->node[1]], b1, sizeof(b1));
	json_t *a;

	if (v & (TOPO_LINK_COULD_BE_FASTER | TOPO_LINK_COULD_BE_WIDER)) {
		snprintf(what, sizeof(what), "%ux %s", v & TOPO_LINK_COULD_BE_WIDER ? l->max_width : l->width,
			 ib_speed_name(v & TOPO_LINK_COULD_BE_FASTER ? l->max_speed : l->speed));
		a = anomaly(an, v & TOPO_LINK_COULD_BE_FASTER ? "slow_link" : "narrow_link",
			    "link %s port %u <-> %s port %u runs at %ux %s, could be %s (both ends support it)", n0,
			    l->port[0], n1, l->port[1], l->width, ib_speed_name(l->speed), what);
		json_object_set_new(a, "could_be", rate(l->max_width, l->max_speed));
	} else if (v & (TOPO_LINK_SLOWER_THAN_NORM | TOPO_LINK_NARROWER_THAN_NORM)) {
		a = anomaly(an, "below_norm_link",
			    "link %s port %u <-> %s port %u is %ux %s, %s the subnet's usual %ux %s (what its ends "
			    "support is unknown)",
			    n0, l->port[0], n1, l->port[1], l->width, ib_speed_name(l->speed),
			    v & TOPO_LINK_SLOWER_THAN_NORM ? "slower than" : "narrower than", nw, ib_speed_name(ns));
		json_object_set_new(a, "severity", json_string("note"));
	} else if (!l->speed) {
		a = anomaly(an, "unknown_speed_link", "link %s port %u <-> %s port %u has no known speed", n0,
			    l->port[0], n1, l->port[1]);
	} else
		return;
	json_object_set_new(a, "subnet", json_integer(s));
	json_object_set_new(a, "ends",
			    json_pack("[oo]", link_end(f, names, l->node[0], l->port[0]),
				      link_end(f, names, l->node[1], l->port[1])));
	json_object_set_new(a, "rate", rate(l->width, l->speed));
	json_object_set_new(a, "subnet_norm", rate(nw, ns));
	if (l->max_speed || l->max_width)
		json_object_set_new(a, "supported", rate(l->max_width, l->max_speed));
}

static void report_links(const struct topo_fabric *f, const char *const *names, json_t *r, json_t *an)
{
	json_t *speeds = json_object(), *widths = json_object(), *rates = json_object();
	size_t i, known = 0;

	for (i = 0; i < f->nlinks; i++) {
		const struct ib_link *l = &f->links[i];
		char key[32];

		snprintf(key, sizeof(key), "%ux", l->width);
		count(widths, l->width ? key : "unknown");
		count(speeds, ib_speed_name(l->speed));
		snprintf(key, sizeof(key), "%ux %s", l->width, ib_speed_name(l->speed));
		count(rates, key);
		known += l->max_speed || l->max_width;
		if (f->norm_speed)
			link_anomalies(f, names, an, l, f->nodes[l->node[0]].subnet);
	}
	json_object_set_new(r, "links", json_integer((json_int_t)f->nlinks));
	json_object_set_new(r, "links_with_supported_rates", json_integer((json_int_t)known));
	json_object_set_new(r, "link_speeds", speeds);
	json_object_set_new(r, "link_widths", widths);
	json_object_set_new(r, "link_rates", rates);
}

static json_t *leaf_entry(const struct topo_fabric *f, const char *const *names, long s, unsigned unconn)
{
	const struct ib_node *nd = &f->nodes[f->sw_node[s]];
	unsigned p, down = 0, up = 0, lateral = 0;
	char guid[24], b[24];
	json_t *e;

	for (p = 1; nd->port_link && p <= nd->nports; p++) {
		uint32_t peer = ib_port_peer(f->nodes, f->links, f->sw_node[s], p, NULL);
		const struct ib_node *o;

		if (peer == IB_NONE)
			continue;
		o = &f->nodes[peer];
		if (o->sw < 0)
			down += o->host >= 0;
		else if (f->sw_level[o->sw] > f->sw_level[s])
			up++;
		else
			lateral++;
	}
	snprintf(guid, sizeof(guid), "0x%016llx", (unsigned long long)nd->guid);
	e = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i}", "switch", node_name(f, names, nd, b, sizeof(b)),
		      "description", nd->desc, "guid", guid, "down_ports", down, "up_ports", up, "lateral_ports",
		      lateral, "unconnected_ports", unconn);
	if (up)
		json_object_set_new(e, "oversubscription", json_real((double)down / up));
	return e;
}

static void report_switches(const struct topo_fabric *f, const char *const *names, json_t *r, json_t *an)
{
	json_t *levels = json_array(), *leaves = json_array();
	size_t s, unreached = 0, total_unconn = 0;
	int k;

	for (k = 0; k <= f->max_level; k++) {
		size_t n = 0;

		for (s = 0; s < f->nsw; s++)
			n += f->sw_level[s] == k;
		json_array_append_new(levels, json_integer((json_int_t)n));
	}
	for (s = 0; s < f->nsw; s++) {
		const struct ib_node *nd = &f->nodes[f->sw_node[s]];
		unsigned u = ib_unconnected_ports(nd);
		char b[24];

		const char *name = node_name(f, names, nd, b, sizeof(b));
		char what[320];

		/* "ibsw4 (Voltaire 4036 # 4036-8C9E, 0x...)": the name of topology.conf and the picture, and
		 * what the switch says of itself */
		if (nd->desc[0] && strcmp(nd->desc, name))
			snprintf(what, sizeof(what), "%s (%.200s, 0x%016llx)", name, nd->desc,
				 (unsigned long long)nd->guid);
		else
			snprintf(what, sizeof(what), "%s (0x%016llx)", name, (unsigned long long)nd->guid);
		total_unconn += u;
		if (u)
			json_object_update_new(anomaly(an, "unconnected_ports", "switch %s: %u unconnected port%s",
						       what, u, u > 1 ? "s" : ""),
					       json_pack("{s:s, s:s, s:o, s:i}", "switch", name, "description",
							 nd->desc, "guid", guid_str(nd->guid), "ports", (int)u));
		if (f->sw_level[s] < 0) {
			unreached++;
			json_object_update_new(
				anomaly(an, "unreached_switch", "switch %s has no path to any host", what),
				json_pack("{s:s, s:s, s:o}", "switch", name, "description", nd->desc, "guid",
					  guid_str(nd->guid)));
		}
		if (f->sw_level[s] == 0)
			json_array_append_new(leaves, leaf_entry(f, names, (long)s, u));
	}
	json_object_set_new(r, "switches", json_integer((json_int_t)f->nsw));
	json_object_set_new(r, "switches_per_level", levels);
	json_object_set_new(r, "switches_unreached", json_integer((json_int_t)unreached));
	json_object_set_new(r, "leaves", leaves);
	json_object_set_new(r, "unconnected_switch_ports", json_integer((json_int_t)total_unconn));
}

static void report_cas(const struct topo_fabric *f, json_t *r, json_t *an)
{
	size_t i, hcas = 0, ports = 0, agg = 0, by_hwloc = 0;

	for (i = 0; i < f->nnodes; i++) {
		const struct ib_node *nd = &f->nodes[i];
		unsigned p, conn = 0;

		if (nd->type != IBN_CA)
			continue;
		if (nd->aggregation) {
			agg++;
			continue;
		}
		hcas++;
		for (p = 1; nd->port_link && p <= nd->nports; p++)
			conn += nd->port_link[p] != IB_NONE;
		ports += conn;
		by_hwloc += nd->hwloc_named;
		if (nd->generic)
			json_object_update_new(
				anomaly(an, "generic_hca",
					"HCA 0x%016llx has the generic description \"%s\", no node-name map "
					"entry and no hwloc XML holding its GUID: host named by its GUID",
					(unsigned long long)nd->guid, nd->desc),
				json_pack("{s:o, s:s, s:s}", "guid", guid_str(nd->guid), "description", nd->desc,
					  "host", nd->host >= 0 ? f->hosts[nd->host].name : ""));
	}
	for (i = 0; i < f->nhosts; i++)
		if (!f->hosts[i].n)
			json_object_set_new(
				anomaly(an, "unconnected_hca", "host %s has no connected HCA port", f->hosts[i].name),
				"host", json_string(f->hosts[i].name));
	json_object_set_new(r, "hosts", json_integer((json_int_t)f->nhosts));
	json_object_set_new(r, "hcas", json_integer((json_int_t)hcas));
	json_object_set_new(r, "hca_ports", json_integer((json_int_t)ports));
	json_object_set_new(r, "aggregation_nodes", json_integer((json_int_t)agg));
	json_object_set_new(r, "hcas_named_by_hwloc", json_integer((json_int_t)by_hwloc));
}

/* Host pairs per hop count (topo_fabric_hop_histogram: O(hosts + leaves x levels) in a tree), and how
 * it was made; hop_histogram_approximate when it is not exact (or, as before, on fabrics of more than
 * 4096 hosts). */
static void report_hops(const struct topo_fabric *f, json_t *r)
{
	topo_hop_hist_t *hist = malloc(sizeof(*hist));
	json_t *h = json_array();
	char method[200];
	size_t d;

	if (hist && topo_fabric_hop_histogram(f, NULL, hist) == 0) {
		for (d = 0; d <= TOPO_HOPS_UNCONNECTED; d++) /* by hop count, then the pairs with no path */
			if (hist->pairs[d])
				json_array_append_new(h, json_pack("{s:o, s:I}", "hops",
								   d == TOPO_HOPS_UNCONNECTED
									   ? json_null()
									   : json_integer((json_int_t)d),
								   "pairs", (json_int_t)hist->pairs[d]));
		topo_hop_hist_method(hist, method, sizeof(method));
		json_object_set_new(r, "hop_histogram_method", json_string(method));
		if (hist->kind != TOPO_HOP_HIST_EXACT || f->nhosts > HOP_PAIRS_EXACT)
			json_object_set_new(r, "hop_histogram_approximate",
					    json_boolean(hist->kind != TOPO_HOP_HIST_EXACT));
	}
	free(hist);
	json_object_set_new(r, "hop_histogram", h);
}

/* "rails": per rail, its HCA ports, hosts and leaf switches (a leaf counted once per rail it serves). */
static void report_rails(const struct topo_fabric *f, const char *const *names, json_t *r)
{
	json_t *rails = json_array();
	size_t rl, i, h;

	for (rl = 0; rails && rl < f->nrails; rl++) {
		json_t *e = json_object();
		size_t ports = 0, hosts = 0, leaves = 0;
		long last = -2;

		for (h = 0; h < f->nhosts; h++) {
			size_t n = 0;

			for (i = 0; i < f->hosts[h].n; i++)
				n += f->att[f->hosts[h].first + i].rail == rl;
			ports += n;
			hosts += n > 0;
		}
		for (i = 0; i < f->nsw; i++) { /* leaves whose first host port is on this rail */
			size_t a;

			if (f->sw_level[i] != 0)
				continue;
			for (a = 0; a < f->natt; a++)
				if (f->att[a].sw == (long)i) {
					if (f->att[a].rail == rl && last != (long)i)
						leaves++, last = (long)i;
					break;
				}
		}
		json_object_set_new(e, "rail", json_integer((json_int_t)rl));
		json_object_set_new(e, "hca_ports", json_integer((json_int_t)ports));
		json_object_set_new(e, "hosts", json_integer((json_int_t)hosts));
		json_object_set_new(e, "leaves", json_integer((json_int_t)leaves));
		json_array_append_new(rails, e);
	}
	(void)names;
	json_object_set_new(r, "rails", rails);
}

/* "dragonfly": groups (switches, hosts) and global links per group pair; null without groups. */
static void report_groups(const struct topo_fabric *f, json_t *r)
{
	json_t *d, *groups, *pairs;
	size_t g, i;

	if (!f->ngroups) {
		json_object_set_new(r, "dragonfly", json_null());
		return;
	}
	d = json_object();
	groups = json_array();
	pairs = json_array();
	for (g = 0; g < f->ngroups; g++) {
		json_t *e = json_object();

		json_object_set_new(e, "group", json_integer((json_int_t)g));
		json_object_set_new(e, "switches", json_integer((json_int_t)f->group_nsw[g]));
		json_object_set_new(e, "hosts", json_integer((json_int_t)f->group_nhosts[g]));
		json_array_append_new(groups, e);
	}
	for (i = 0; i < f->ngpairs; i++) {
		const struct ib_gpair *p = &f->gpairs[i];
		json_t *e = json_object();

		json_object_set_new(e, "groups", json_pack("[II]", (json_int_t)p->g1, (json_int_t)p->g2));
		json_object_set_new(e, "links", json_integer((json_int_t)p->count));
		json_object_set_new(e, "gbps", json_real(p->gbps));
		json_array_append_new(pairs, e);
	}
	json_object_set_new(d, "source", json_string(f->groups_site ? "site file" : "fabric"));
	json_object_set_new(d, "groups", json_integer((json_int_t)f->ngroups));
	json_object_set_new(d, "global_links", json_integer((json_int_t)f->nglobal));
	json_object_set_new(d, "group_pairs_linked", json_integer((json_int_t)f->ngpairs));
	json_object_set_new(d, "group_list", groups);
	json_object_set_new(d, "global_links_per_pair", pairs);
	json_object_set_new(r, "dragonfly", d);
}

json_t *topo_fabric_report(const struct topo_fabric *f)
{
	return topo_fabric_report_named(f, NULL);
}

json_t *topo_fabric_report_named(const struct topo_fabric *f, const char *const *names)
{
	json_t *r = json_object(), *an = json_array(), *src = json_array();
	uint32_t s;

	if (!r || !an || !src) {
		json_decref(r);
		json_decref(an);
		json_decref(src);
		return NULL;
	}
	for (s = 0; s < f->nsubnets; s++)
		json_array_append_new(src, json_string(f->subnet_source[s]));
	json_object_set_new(r, "subnets", json_integer(f->nsubnets));
	json_object_set_new(r, "subnet_sources", src);
	report_switches(f, names, r, an);
	report_cas(f, r, an);
	report_links(f, names, r, an);
	report_hops(f, r);
	report_rails(f, names, r);
	report_groups(f, r);
	if (f->map_unmatched && f->has_ports_subnet)
		json_object_set_new(anomaly(an, "unmatched_name_map",
					    "%zu node-name map entries matched no node or port GUID; a -p ports report "
					    "lists port GUIDs "
					    "only: key the map by port GUID, or give the hosts' hwloc XML",
					    f->map_unmatched),
				    "entries", json_integer((json_int_t)f->map_unmatched));
	json_object_set_new(r, "anomalies", an);
	return r;
}
