#!/usr/bin/env python3
"""tests/bench/e2e/fabric_bench.py: an SMPI halo on a platform generated from the generated dragonfly
(or the NDR capture), placed by each policy of bench_placement and mapped by rankmap (issue #26 item 5).

    python3 tests/bench/e2e/fabric_bench.py [--fabric dragonfly|ndr] [--bin build/tests/e2e] [--iters 10]
                                            [--seeds 6] [--algos treematch,scotch,auto] [--out DIR]
                                            [--routing minhop|floyd] [--shared-links] [--cfg SIMGRID-OPTION]
                                            [--lat-model ib|simgrid] [--rndv-thresh BYTES]

The platform is generated from the fabric file the placement bench reads (tests/data/ib/df-5x4x4.topo;
--fabric ndr: tests/data/ib/ndr-fattree-582ca.ibnetdiscover): every switch, every switch-to-switch
cable with its rate, and each host by one cable to the switch of its leaf in rankmap's tree. Routes
(--routing minhop, the default) are those OpenSM's default engine (minhop) programs: each switch forwards
by destination, and among its ports on a shortest path to a destination takes the one with the fewest
destinations so far; every cable is a link of its own (parallel cables too), full duplex (--shared-links:
one bandwidth for both directions, SimGrid's default). On the dragonfly a message between groups takes the
single global link of its pair of groups. --routing floyd is the platform before (parallel cables summed,
SimGrid's Floyd shortest paths, shared links): on the NDR capture it sent every pair of leaves through the
same spine. Each host has RANKS_PER_HOST cores (hwloc synthetic for rankmap, core= for SimGrid).

Latency of a message (--lat-model ib, the default): how MPI over InfiniBand sends (UCX, which Open MPI 5's
pml/ucx and MPICH's ch4:ucx use): below the rendezvous threshold (UCX_RNDV_THRESH, "threshold for switching
from eager to rendezvous protocol"; --rndv-thresh, 8192 bytes by default) the message is sent eagerly and
starts after the route's latency (smpi/lat-factor 1); at and above it, rendezvous (UCX_RNDV_SCHEME get_zcopy):
the sender's RTS crosses the route, the receiver's RDMA read request crosses back, and the data follows,
three one-way latencies before the data (smpi/lat-factor 3), and the send completes only once the
receiver has matched it (smpi/send-is-detached-thresh at the threshold). --lat-model simgrid keeps SimGrid
3.32's defaults (smpi/lat-factor up to 11.64 from 64 KiB, send-is-detached-thresh 65536: the calibration
SimGrid ships as its default, not one of InfiniBand with UCX; the tables of PLACEMENT.md before "An InfiniBand latency
model" were made with it).

One representative job of NODES nodes on an idle machine and on --seeds partly busy ones (a share
BUSY of the hosts taken, drawn with seeds 26, 27, ...). Hosts are picked by the rules of bench_placement
(order/sim_hosts.c):
  slurm-names  the first free nodes in the order of their names
  slurm-df     one leaf when a leaf has room (best fit), else one node from each leaf in turn
  rankmap-wt   the first free nodes in rankmap's Weight order (slurm-topology --format weights)
  rankmap-blk  the smallest aligned run of 2^i blocks (dragonfly groups) with room, best fit; else the
               groups with the most free nodes first; a job that must span exactly two blocks takes
               parts in segments of a divisor of its size the two hold (8+8 or 12+4, not 13+3): of
               those at least a quarter of the job, the split over the fewest leaves, then the largest
               segment; the run whose split spans the fewest leaves first, then the largest segment
rankmap's order, leaves and blocks (groups; leaves on a fat tree) come from `rankmapctl slurm-topology
--format weights|tree|block`, not from this script.
The job's ranks are laid out block by block over its hosts in the scheduler's node order (Slurm's
default distribution). The program is cart_bench's 2D halo, dimension 0 heavy (Rashti's case).
Each placement runs unmapped (RANKMAP_DISABLE=1) and mapped by rankmap (RANKMAP_CLUSTER, RANKMAP_PATTERN
from one traced run, one run per RANKMAP_ALGO of --algos); a policy that picks the same hosts in the same
order as an earlier one reuses its figures (auto's time budget would otherwise make noise). Times are
SMPI simulated seconds.
Prints the table and the goal (rankmap's placements, mapped by rankmap, never slower than slurm-names;
exit status 1 when a mapped comparison is missed; the unmapped column is printed as a diagnostic) and writes DIR/results-FABRIC.json. FB_KEEP=1 keeps the scratch directory (platform, hostfiles,
RANKMAP_REPORT of every mapped run). Results and their reading: tests/bench/PLACEMENT.md.
"""
import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FABRICS = {"dragonfly": os.path.join(TOP, "tests", "data", "ib", "df-5x4x4.topo"),
           "ndr": os.path.join(TOP, "tests", "data", "ib", "ndr-fattree-582ca.ibnetdiscover")}
SMPI_CFG = ["--cfg=smpi/simulate-computation:no", "--cfg=smpi/privatization:no",
            "--cfg=smpi/host-speed:1Gf", "--cfg=smpi/auto-shared-malloc-thresh:65536",
            "--log=root.thres:critical"]
RANKS_PER_HOST = 2
NODES = 16
BUSY = 0.4  # share of the hosts busy in the busy states
DIMS, BYTES = "8x4", "262144,16384"  # dimension 0 heavy (16x)
LANE_GBPS = {"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR": 14.0625, "EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200}
LINK_LAT = "0.6us"
POLICIES = ["slurm-names", "slurm-df", "rankmap-wt", "rankmap-blk"]
EAGER_LAT, RNDV_LAT = 1.0, 3.0  # one-way route latencies before the data: eager, rendezvous (RTS + RDMA read)


def natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def parse_topo(path):
    """The cables of an ibnetdiscover file, from its switches' port lines: (host, switch GUID, GB/s) per
    HCA cable (the host is the first word of the HCA's description), {(GUID, GUID): GB/s} per pair of
    switches, parallel cables summed, and every switch-to-switch cable on its own, (GUID, port, GUID, port,
    GB/s), in the order of the file's port lines."""
    hca, sw_links, cables, seen, swg = [], {}, [], set(), None
    for ln in open(path):
        m = re.match(r'^Switch\s+\d+\s+"(S-[0-9a-f]+)"', ln)
        if m:
            swg = m.group(1)
            continue
        m = re.match(r'^\[(\d+)\]\s+"([SH]-[0-9a-f]+)"\[(\d+)\].*#\s+"([^"]+)".*\s(\d+)x(\w+)\s*$', ln)
        if not m or not swg:
            continue
        port, peer, pport, pname, width, speed = m.groups()
        gbs = int(width) * LANE_GBPS[speed] / 8
        if peer.startswith("H-"):
            hca.append((pname.split()[0], swg, gbs))
        elif (peer, int(pport)) not in seen:  # each cable once
            seen.add((swg, int(port)))
            key = tuple(sorted((swg, peer)))
            sw_links[key] = sw_links.get(key, 0) + gbs
            cables.append((swg, int(port), peer, int(pport), gbs))
    return hca, sw_links, cables


def host_cables(hca, leaf):
    """Each host's one cable, to the switch of its leaf in rankmap's tree (the switch all hosts of that leaf
    reach): {host: (switch GUID, GB/s)}. Hosts of several HCAs (rails) keep that one cable: see PLACEMENT.md."""
    reach = {}
    for h, g, gbs in hca:
        reach.setdefault(h, {})[g] = gbs
    members = {}
    for h, l in leaf.items():
        members.setdefault(l, []).append(h)
    out = {}
    for l, hs in members.items():
        common = set.intersection(*(set(reach[h]) for h in hs))
        if not common:
            raise SystemExit("no switch reaches every host of rankmap's leaf %s" % l)
        g = sorted(common)[0]
        out.update((h, (g, reach[h][g])) for h in hs)
    return out


def platform_floyd(hosts, hcab, sw_links, cores):
    """The platform before the minhop routes (kept for the figures before them): parallel cables between two
    switches summed into one link, SimGrid's Floyd routing (one shortest path per pair of points, ties broken
    by SimGrid: on the NDR capture every pair of leaves took the same spine)."""
    links = [(h, g, gbs) for h, (g, gbs) in sorted(hcab.items())]
    links += [(a, b, gbs) for (a, b), gbs in sorted(sw_links.items())]
    out = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">', '<zone id="fabric" routing="Floyd">']
    for h in hosts:
        out.append('  <host id="%s" speed="1Gf" core="%d"/>' % (h, cores))
    for s in sorted({x for a, b, _ in links for x in (a, b)} - set(hosts)):
        out.append('  <router id="%s"/>' % s)
    for i, (a, b, g) in enumerate(links):
        out.append('  <link id="l%d" bandwidth="%gGBps" latency="%s"/>' % (i, g, LINK_LAT))
    for i, (a, b, g) in enumerate(links):
        out.append('  <route src="%s" dst="%s"><link_ctn id="l%d"/></route>' % (a, b, i))
    out += ["</zone>", "</platform>"]
    return "\n".join(out) + "\n"


def minhop_routes(hosts, hcab, cables):
    """Routes as OpenSM's default engine (minhop) programs the switches: every switch forwards by destination
    (one output port per destination LID, its linear forwarding table); among the ports on a shortest path
    to a destination it takes the one with the fewest destinations assigned so far, ties to the lowest port
    number. Every cable is a port of its own (parallel cables are separate links). Destinations are routed
    in name order (a stand-in for LID order); hosts are not transit points. Returns the cables' links
    [(a, b, GB/s)] (host cables first) and {(src host, dst host): [(link index, forward?)]}: forward when
    the route crosses the link from a to b."""
    links = [(h, g, gbs) for h, (g, gbs) in sorted(hcab.items())]
    hostlink = {h: i for i, (h, _, _) in enumerate(links)}
    ports = {}  # switch -> [(port, link index, peer)]
    for a, pa, b, pb, gbs in cables:
        i = len(links)
        links.append((a, b, gbs))
        ports.setdefault(a, []).append((pa, i, b))
        ports.setdefault(b, []).append((pb, i, a))
    for h, (g, gbs) in hcab.items():
        ports.setdefault(g, []).append((1000 + hostlink[h], hostlink[h], h))  # host ports after the cables
    for s in ports:
        ports[s].sort()
    used = {s: {} for s in ports}
    lft = {s: {} for s in ports}
    for d in sorted(hosts, key=natural):
        dist, todo = {d: 0}, [d]
        while todo:  # breadth first from d, through switches only
            nxt = []
            for x in todo:
                if x != d and x not in ports:
                    continue
                for _, _, y in (ports[x] if x in ports else [(0, hostlink[d], hcab[d][0])]):
                    if y not in dist and (y in ports or y == d):
                        dist[y] = dist[x] + 1
                        nxt.append(y)
            todo = nxt
        for s in ports:
            if s not in dist:
                continue
            cand = [(used[s].get(p, 0), p, i, y) for p, i, y in ports[s] if dist.get(y, -1) == dist[s] - 1]
            n, p, i, y = min(cand)
            used[s][p] = n + 1
            lft[s][d] = (i, y)
    routes = {}
    for a in hosts:
        for d in hosts:
            if a == d:
                continue
            x, r = hcab[a][0], [(hostlink[a], True)]
            while x != d:
                i, y = lft[x][d]
                r.append((i, links[i][0] == x))
                x = y
            routes[(a, d)] = r
    return links, routes


def platform_minhop(hosts, links, routes, cores, duplex):
    """A SimGrid Full zone with minhop_routes()'s routes, one per ordered pair of hosts (a comment names each
    link's two ends: UP is from the first to the second, see fabric_links.py). duplex: each cable
    full duplex (SPLITDUPLEX: its own bandwidth each way) instead of SimGrid's default, one bandwidth shared
    by both directions."""
    out = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">', '<zone id="fabric" routing="Full">']
    for h in hosts:
        out.append('  <host id="%s" speed="1Gf" core="%d"/>' % (h, cores))
    for i, (a, b, g) in enumerate(links):
        out.append('  <link id="l%d" bandwidth="%gGBps" latency="%s"%s/> <!-- %s %s -->' % (
            i, g, LINK_LAT, ' sharing_policy="SPLITDUPLEX"' if duplex else "", a, b))
    for (a, d), r in sorted(routes.items()):
        out.append('  <route src="%s" dst="%s" symmetrical="NO">%s</route>' % (a, d, "".join(
            '<link_ctn id="l%d"%s/>' % (i, (' direction="%s"' % ("UP" if fw else "DOWN")) if duplex else "")
            for i, fw in r)))
    out += ["</zone>", "</platform>"]
    return "\n".join(out) + "\n"


def rankmap_view(rankmapctl, cluster):
    """rankmap's host order (--format weights), each host's leaf (--format tree, the switches with
    Nodes=) and dragonfly group (--format block), all from rankmapctl slurm-topology."""
    def fmt(f):
        return subprocess.check_output([rankmapctl, "slurm-topology", "--cluster", cluster, "--format", f],
                                       text=True).splitlines()
    wt = [re.match(r"^NodeName=(\S+)\s+Weight=(\d+)", ln) for ln in fmt("weights")]
    order = [m.group(1) for m in sorted((m for m in wt if m), key=lambda m: int(m.group(2)))]
    leaf, group = {}, {}
    for f, key, into in (("tree", "SwitchName", leaf), ("block", "BlockName", group)):
        for ln in fmt(f):
            m = re.match(r"^%s=(\S+)\s+Nodes=(\S+)" % key, ln)
            if m:
                for h in expand(m.group(2)):
                    into[h] = m.group(1)
    return order, leaf, group


def expand(hl):
    """Slurm hostlist n[000-003,008] -> names."""
    out = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", hl):
        m = re.match(r"^(.*)\[(.*)\]$", part)
        if not m:
            out.append(part)
            continue
        for r in m.group(2).split(","):
            a, _, b = r.partition("-")
            for i in range(int(a), int(b or a) + 1):
                out.append("%s%0*d" % (m.group(1), len(a), i))
    return out


def pick(policy, want, free, name_order, rm_order, leaf, group, groups):
    """The hosts of one job under a policy (bench_placement's rules, order/sim_hosts.c)."""
    if policy in ("slurm-names", "rankmap-wt"):
        order = name_order if policy == "slurm-names" else rm_order
        return [h for h in order if h in free][:want]
    if policy == "slurm-df":
        leaves = []
        for h in rm_order:  # leaves in order of their first host
            if leaf[h] not in leaves:
                leaves.append(leaf[h])
        nfree = {l: sum(1 for h in free if leaf[h] == l) for l in leaves}
        fit = [l for l in leaves if nfree[l] >= want]
        if fit:
            best = min(fit, key=lambda l: nfree[l])
            return [h for h in rm_order if h in free and leaf[h] == best][:want]
        got, left = [], set(free)
        while len(got) < want and left:
            for l in leaves:
                c = [h for h in rm_order if h in left and leaf[h] == l]
                if c and len(got) < want:
                    got.append(c[0])
                    left.discard(c[0])
        return got
    # rankmap-blk: groups numbered in block order (order/sim_hosts.c's block(), split_segment(), take_segments())
    nfree = {g: sum(1 for h in free if group[h] == g) for g in groups}

    def used(run, s):  # groups a split in segments of s takes, the groups holding the most first
        caps, segs = sorted((nfree[g] // s for g in run), reverse=True), 0
        for i, c in enumerate(caps):
            segs += c
            if c and segs >= want // s:
                return i + 1
        return None

    def take(run, s):  # a split in segments of s as taken: [(group, hosts)], the group holding the most first
        out, left, k = [], dict(nfree), 0
        while k < want:
            g = max(run, key=lambda g: (left[g] // s, -run.index(g)))
            segs = min(left[g] // s, (want - k) // s)
            if not segs:
                break
            out.append((g, segs * s))
            left[g] -= segs * s
            k += segs * s
        return out

    def leaves(run, s):  # leaves (routers) the split's hosts span, each group's first free hosts in order
        ls = set()
        for g, m in take(run, s):
            ls |= {leaf[h] for h in [h for h in rm_order if h in free and group[h] == g][:m]}
        return len(ls)

    def segment(run):  # two groups at fewest: among the divisors of want whose split takes two too and
        # that are at least a quarter of want, the fewest leaves, then the largest; else the largest
        if used(run, 1) != 2:
            return 1, None
        cands = [s for s in range(1, want + 1) if want % s == 0 and used(run, s) == 2]
        adm = [s for s in cands if 4 * s >= want]
        if not adm:
            return max(cands), None
        s = min(adm, key=lambda s: (leaves(run, s), -s))
        return s, leaves(run, s)

    def key(seg, nl, fr):  # fewest leaves (splits of the rule first), largest segment, best fit
        return (nl if nl is not None else float("inf"), -seg, fr)

    best = None
    span = 1
    while span <= len(groups) and best is None:
        for d in range(0, len(groups) - span + 1, span):
            run = groups[d:d + span]
            fr = sum(nfree[g] for g in run)
            if fr < want:
                continue
            seg, nl = segment(run)
            if best is None or key(seg, nl, fr) < key(best[2], best[3], best[1]):
                best = (run, fr, seg, nl)
        span *= 2
    run = best[0] if best else groups  # no run has room: every group
    s = best[2] if best else segment(groups)[0]
    got, left = [], dict(nfree)
    while len(got) < want:
        g = max(run, key=lambda g: (left[g] // s, -run.index(g)))
        segs = min(left[g] // s, (want - len(got)) // s)
        if not segs:
            break
        got += [h for h in rm_order if h in free and group[h] == g][:segs * s]
        left[g] -= segs * s
    return got


def lat_cfg():
    """SimGrid options of the latency model (the module's docstring says why)."""
    if ARGS.lat_model == "simgrid":
        return []
    t = ARGS.rndv_thresh
    return ["smpi/lat-factor:0:%g;%d:%g" % (EAGER_LAT, t, RNDV_LAT), "smpi/send-is-detached-thresh:%d" % t]


def run(binary, work, plat, hosts, label, env):
    hf = os.path.join(work, label + ".hosts")
    with open(hf, "w") as f:
        f.write("".join(h + "\n" for h in hosts for _ in range(RANKS_PER_HOST)))
    cmd = ["smpirun", "-platform", plat, "-hostfile", hf, "-np", str(len(hosts) * RANKS_PER_HOST)] + SMPI_CFG + \
          ["--cfg=" + c for c in lat_cfg() + ARGS.cfg] + \
          [binary, "--dims", DIMS, "--periods", "1,1", "--bytes", BYTES, "--iters", str(ARGS.iters)]
    p = subprocess.run(cmd, cwd=work, env=dict(os.environ, TMPDIR=work, **env), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    m = re.search(r"E2E time=([0-9.e+-]+) offnode=([0-9.]+)", p.stdout)
    if not m:
        raise SystemExit("%s: no time in the output (rc %d):\n%s\n%s" % (label, p.returncode, " ".join(cmd),
                                                                        p.stdout[-3000:]))
    warn = [ln for ln in p.stdout.splitlines() if ln.startswith("rankmap:")]
    return float(m.group(1)), float(m.group(2)), warn


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(TOP, "build", "tests", "e2e"))
    ap.add_argument("--fabric", choices=sorted(FABRICS), default="dragonfly")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--seeds", type=int, default=6, help="busy machine states (seeds 26, 27, ...)")
    ap.add_argument("--algos", default="treematch,scotch,auto", help="rankmap algorithms of the mapped runs")
    ap.add_argument("--out", default=os.path.join(TOP, "tests", "bench", "e2e", "out-fabric"))
    ap.add_argument("--routing", choices=["minhop", "floyd"], default="minhop",
                    help="minhop: OpenSM's default routes, destination based, every cable a link (default); "
                    "floyd: the platform before them (parallel cables summed, SimGrid's Floyd routes)")
    ap.add_argument("--shared-links", action="store_true",
                    help="minhop: each cable's bandwidth shared by its two directions (SimGrid's default, and the "
                    "platform before the minhop routes) instead of full duplex, as InfiniBand cables are")
    ap.add_argument("--cfg", action="append", default=[],
                    help="an extra SimGrid option for every run, e.g. smpi/lat-factor:0:1 (repeatable)")
    ap.add_argument("--lat-model", choices=["ib", "simgrid"], default="ib",
                    help="ib: eager (latency x1) below --rndv-thresh, rendezvous (x3) from it, as UCX sends over "
                    "InfiniBand (default); simgrid: SimGrid's default smpi/lat-factor (its shipped calibration)")
    ap.add_argument("--rndv-thresh", type=int, default=8192,
                    help="--lat-model ib: the eager/rendezvous threshold in bytes (UCX_RNDV_THRESH; default 8192)")
    ARGS = ap.parse_args()
    if ARGS.rndv_thresh < 1:
        raise SystemExit("--rndv-thresh: %d bytes: need at least 1" % ARGS.rndv_thresh)
    build = os.path.dirname(os.path.dirname(os.path.abspath(ARGS.bin)))
    rankmapctl = os.path.join(build, "rankmapctl")
    binary = os.path.join(os.path.abspath(ARGS.bin), "cart_bench")
    work = tempfile.mkdtemp(prefix="rankmap-fabric-bench.")
    try:
        TOPO = FABRICS[ARGS.fabric]
        shutil.copy(TOPO, os.path.join(work, "fabric.topo"))
        cluster = os.path.join(work, "rankmap.cluster")
        with open(cluster, "w") as f:
            f.write("ib = fabric.topo\n")
        rm_order, leaf, group = rankmap_view(rankmapctl, cluster)  # the fabric alone: which hosts are named
        hosts = list(rm_order)
        if set(leaf) != set(hosts) or set(group) != set(hosts):
            raise SystemExit("rankmapctl's weights, tree and blocks do not list the same hosts")
        with open(cluster, "w") as f:
            f.write("# the SMPI platform's machine for rankmap\nhwloc = synthetic:core:%d pu:1@%s\nib = fabric.topo\n"
                    % (RANKS_PER_HOST, ",".join(sorted(hosts, key=natural))))
        hca, sw_links, cables = parse_topo(TOPO)
        hcab = host_cables(hca, leaf)
        busy_n = int(BUSY * len(hosts) + 0.5)
        groups = []
        for h in rm_order:
            if group[h] not in groups:
                groups.append(group[h])
        plat = os.path.join(work, "platform.xml")
        with open(plat, "w") as f:
            if ARGS.routing == "floyd":
                f.write(platform_floyd(hosts, hcab, sw_links, RANKS_PER_HOST))
            else:
                f.write(platform_minhop(hosts, *minhop_routes(hosts, hcab, cables), RANKS_PER_HOST,
                                        not ARGS.shared_links))
        name_order = sorted(hosts, key=natural)
        pos = {h: i for i, h in enumerate(rm_order)}
        npos = {h: i for i, h in enumerate(name_order)}
        states = [("idle", set(hosts))]
        for seed in range(26, 26 + ARGS.seeds):
            states.append(("busy s%d" % seed, set(hosts) - set(random.Random(seed).sample(name_order, busy_n))))
        # the pattern: one traced run (rank to rank bytes do not depend on the placement)
        pattern = os.path.join(work, "traced.mtx")
        run(binary, work, plat, name_order[:NODES], "trace", {"RANKMAP_TRACE": pattern})
        algos = ARGS.algos.split(",")
        res = []
        print("halo %s (periodic), bytes %s per neighbour, %d iterations, %d nodes x %d ranks, on %s (SMPI, shortest "
              "paths over the fabric's links); states: idle, and %d of %d hosts busy drawn with seeds 26..%d"
              % (DIMS, BYTES, ARGS.iters, NODES, RANKS_PER_HOST, os.path.relpath(TOPO, TOP), busy_n, len(hosts),
                 25 + ARGS.seeds))
        print("simulated ms; x = ratio to slurm-names of the same state and column; "
              "span = hosts in each block / leaves\n")
        cols = ["unmapped"] + algos
        print("%-9s %-12s %-12s" % ("state", "policy", "span") + "".join(" %-16s" % c for c in cols))
        def runs(got, tag):
            t, warn = {}, []
            t["unmapped"] = run(binary, work, plat, got, tag + "_u", {"RANKMAP_DISABLE": "1"})[0]
            for al in algos:
                env = {"RANKMAP_CLUSTER": cluster, "RANKMAP_PATTERN": pattern, "RANKMAP_ALGO": al,
                       "RANKMAP_METRIC": "bytes", "RANKMAP_REPORT": os.path.join(work, tag + "_" + al + ".report")}
                x = run(binary, work, plat, got, tag + "_" + al, env)
                t[al] = x[0]
                warn += x[2]
            return t, warn

        cache = {}
        for sname, free in states:
            base = {}
            for pol in POLICIES:
                got = pick(pol, NODES, free, name_order, rm_order, leaf, group, groups)
                # Slurm lists a job's nodes in its node order: names, or the weights for rankmap's policies
                got.sort(key=(lambda h: npos[h]) if pol.startswith("slurm") else (lambda h: pos[h]))
                tag = re.sub(r"[^a-z0-9]+", "_", sname) + "_" + pol
                if tuple(got) not in cache:  # the same hosts in the same order are the same runs
                    cache[tuple(got)] = runs(got, tag)
                t, warn = cache[tuple(got)]
                if pol == "slurm-names":
                    base = dict(t)
                per = sorted((sum(1 for h in got if group[h] == g) for g in {group[h] for h in got}), reverse=True)
                span = "%s/%dl" % ("+".join(map(str, per)), len({leaf[h] for h in got}))
                print("%-9s %-12s %-12s" % (sname, pol, span) +
                      "".join(" %7.3f %5.2fx  " % (t[c] * 1e3, t[c] / base[c]) for c in cols) +
                      ("  (" + "; ".join(sorted(set(warn))) + ")" if warn else ""), flush=True)
                res.append(dict(state=sname, policy=pol, hosts=got, groups=len({group[h] for h in got}),
                                leaves=len({leaf[h] for h in got}), times=t, warn=warn))
        print("\ngeometric mean over the busy states of the ratio to slurm-names (same column):")
        for pol in POLICIES:
            line = "  %-12s" % pol
            for c in cols:
                rs = [x["times"][c] / y["times"][c] for x in res for y in res if x["policy"] == pol and
                      y["policy"] == "slurm-names" and x["state"] == y["state"] and x["state"] != "idle"]
                line += " %-8s %5.3f" % (c, math.exp(sum(math.log(r) for r in rs) / len(rs)) if rs else 1)
            print(line)
        print("\ngoal: rankmap's placements never slower than slurm-names (each state, each column; the measure "
              "is the mapped columns, the unmapped one a diagnostic)")
        missed, missed_mapped = 0, 0
        for x in res:
            if x["policy"] not in ("rankmap-wt", "rankmap-blk"):
                continue
            y = [y for y in res if y["state"] == x["state"] and y["policy"] == "slurm-names"][0]
            for c in cols:
                if x["times"][c] > y["times"][c] * 1.0001:
                    missed += 1
                    missed_mapped += c != "unmapped"
                    print("  MISSED: %s %s %s: %.3f ms against %.3f ms (%.2fx)" % (
                        x["state"], x["policy"], c, x["times"][c] * 1e3, y["times"][c] * 1e3,
                        x["times"][c] / y["times"][c]))
        os.makedirs(ARGS.out, exist_ok=True)
        with open(os.path.join(ARGS.out, "results-%s.json" % ARGS.fabric), "w") as f:
            json.dump(res, f, indent=1)
        print("mapped: %d of %d comparisons missed; unmapped (diagnostic): %d of %d" % (
            missed_mapped, 2 * len(states) * len(algos), missed - missed_mapped, 2 * len(states)))
        return 1 if missed_mapped else 0
    finally:
        if os.environ.get("FB_KEEP"):
            print("kept " + work)
            return 1
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
