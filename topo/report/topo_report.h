/*
 * topo/report/topo_report.h: the cluster summary behind `rankmapctl report` (and rankmapd's report request).
 *
 * Error rule as in topo.h: functions returning a pointer return NULL on failure (errno set).
 */
#ifndef RANKMAP_TOPO_REPORT_H
#define RANKMAP_TOPO_REPORT_H

#include <jansson.h>

#include "topo.h"

/* The version of the JSON documents of rankmapctl and rankmapd (docs/json-schema.json, "schema_version"
 * in each): raised when a key changes meaning or is removed, not when one is added. */
#define TOPO_REPORT_SCHEMA_VERSION 1

/*
 * Returns a new reference to one JSON object summarising a finalized cluster:
 *   schema_version (TOPO_REPORT_SCHEMA_VERSION), hosts, hosts_with_hardware, packages, cores, pus (totals over hosts with hardware),
 *   node_types: [{hosts, host_list, packages, numa_nodes, cores, pus, memory_bytes, cpu_model}]
 *     (hosts grouped by these counts, memory to the nearest GiB and CPU model, largest group first;
 *     memory_bytes is that of one of its hosts),
 *   switches, switches_per_level, hca_ports, subnets, link_rates (from the fabric; 0/{} without one),
 *   fabric: the fabric's own report or null; torus: the torus report or null,
 *   hop_histogram: [{hops, pairs}] by increasing hops between the fabric's hosts, hops null last for
 *     pairs with no path (for a torus without a fabric: [{distance, pairs}], link-cost-weighted), hop_histogram_method: how it was
 *     counted (exact, one value per pair of leaf switches or routers; sampled beyond 4096 of them),
 *   anomalies: [{kind, severity ("warning" or "note"), text, and the fields of the kind: host, switch,
 *     guid, ends, rate, could_be, ...}]: the fabric's (links that could be faster or wider, links
 *     below the subnet norm where supported rates are unknown, unconnected ports, generic names, ...)
 *     and no_hardware (in the fabric or torus without hwloc data), not_in_fabric (hardware but no HCA
 *     in a cluster that has a fabric); docs/json-schema.json describes every kind.
 * The caller owns the result (json_decref). NULL on allocation failure.
 */
json_t *topo_cluster_report(topo_cluster_t c);

/*
 * The answer to "how far apart are hosts a and b" (cluster indices) for rankmapd's distance request and
 * `rankmapctl distance --json`, given d = topo_slot_distance of their slots: a new object
 * {hops, distance, same_host}, hops null when unknown, and then hops_unknown ("no_fabric": no fabric
 * loaded; "not_in_fabric": a host has no HCA in it, the distance being the cost model's flat network;
 * "not_connected": no subnet joins them, distance null) and note (one sentence naming the host).
 * NULL on allocation failure.
 */
json_t *topo_distance_json(topo_cluster_t c, size_t a, size_t b, double d);

#endif
