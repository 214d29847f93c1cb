/*
 * topo/report/report_svg.h: the pictures of `rankmapctl report --svg FILE`.
 *
 * The fabric is drawn as a layered graph built from the switch tree of topo_slurm.h: the upper
 * levels (core, spines) as rows of switches at the top, the leaf switches below, and under each leaf
 * ONE box for its hosts (count, compressed host list, hosts named by GUID) rather than a dot per
 * host, so that 600 or 10,000 hosts stay readable. Leaves wrap into bands of at most 12 per row.
 * Links between switches are coloured by speed (legend at the top); with few links (one band, at
 * most 300 links) each switch-to-switch link is drawn, else every switch has one uplink stub onto a
 * shared bus labelled with its uplink count, and its <title> (tooltip) lists its neighbours.
 * Problems are visible without hovering, each in colour with a mark ("!" in a circle) and a legend:
 * links that could be faster or wider (both ends support more: libibnetdisc) dashed red, links below
 * their subnet's usual rate where what the ports support is unknown dashed orange (both drawn
 * individually in both modes); in each host box, the hosts whose HCA cable is such a link, the hosts
 * without hwloc data (when the cluster has some) and those named by GUID, by name (compressed list);
 * every host of the cluster is drawn: the headline counts them all, and hosts with no HCA in the fabric
 * or on no switch get boxes of their own. Links within a level are short lines between neighbours of a
 * row; a box names its other lateral peers. No text leaves its box: lines are measured (a generous
 * DejaVu Sans estimate) and cut with "..." (full text in the box's tooltip). Switch names are those of
 * topology.conf and of the text report (topo_slurm.h).
 *
 * Error rule as in topo.h: 0 on success, -1 with err set.
 */
#ifndef RANKMAP_REPORT_SVG_H
#define RANKMAP_REPORT_SVG_H

#include <stdio.h>

#include "topo.h"

/* Writes one standalone SVG document to f: the fabric picture when the cluster has a fabric with
 * hosts, then extra (a complete <svg> element or document such as order/'s torus ordering picture,
 * may be NULL) embedded below it. A cluster with neither gets a picture that says so. The cluster must
 * be finalized. Returns 0, or -1 with err set (allocation or write failure). */
int topo_report_svg(topo_cluster_t c, const char *extra, FILE *f, rm_error_t *err);

/* The GPU nodes' picture (report_svg_gpu.c): one panel per node type with GPUs (its GPUs by NUMA
 * node, each one's nearest NIC, the GPU links as arcs), as a standalone <svg> element (caller frees)
 * of *width x *height; NULL when no host has a GPU. topo_report_svg draws it above `extra`. */
char *topo_report_svg_gpus(topo_cluster_t c, int *width, int *height);

/* Speed colour used by the picture for an InfiniBand speed name ("QDR", "NDR", ...); "#888888" for
 * unknown names. Exported for the legend of text outputs and for tests. */
const char *topo_report_svg_speed_colour(const char *speed);

#endif
