#!/usr/bin/env python3
"""tests/bench/e2e/gpu_bench.py: one rank per GPU on simulated GPU nodes (issue #25, "proof of gain").

    python3 tests/bench/e2e/gpu_bench.py [--bin build/tests/e2e] [--iters 3] [--out DIR]
                                         [--xml tests/data/gpu/...xml] [--links FILE|none]
                                         [--ref-bytes N]

The machine is rankmap's own model of 4 HPE Cray EX235a nodes (tests/data/gpu/mpibind/eas-tioga.xml,
8 MI250X GCDs and 4 Slingshot NICs each, with the MI250X link file conf/gpu-links-mi250x.conf), read
from `rankmapctl report --json` (GPUs, each one's nearest NIC, the link matrix) and written as a
SimGrid platform: each GPU an SMPI host; inside a node one link per xGMI pair at its bandwidth, the
other pairs through both GPUs' PCIe links (25 GB/s); between nodes GPU -> PCIe -> its NIC (25 GB/s,
Slingshot 200 Gb/s, shared by the GPUs that use it) -> a two-level fat tree (2 hosts per leaf switch,
each leaf's uplink to the spine as fast as its hosts' NICs together) -> NIC -> PCIe -> GPU.

The program is cart_bench's halo on an 8x4 grid (dimension 0 heavy: 4 MiB per neighbour, dimension 1
64 KiB), RANKMAP_DISABLE=1: placements are SMPI hostfiles, one rank per GPU:
  block          rank r on GPU r % 8 of node r / 8 (the scheduler's order)
  rankmap-gpu    rankmapctl map --slots gpu (GPU link and NIC costs)
  rankmap-core   the same request with core costs: rankmapd's map request over the GPUs' first PUs
                 ([host, pu] slots, pu_index os), which is how a GPU job is mapped without GPU costs
  best-tried     the fastest of the placements above and of hand-made ones (row-major and column-major
                 tilings of the grid onto nodes and MI250X packages; ring-links: one grid column per
                 node, its GPUs in the ring order whose slowest link is fastest, found by exhaustive
                 search over the link matrix): the best placement known here, not a proven optimum
--xml picks another recorded node (4 of them; the grid is GPUs-per-node x 4, dimension 0 heavy; the
hand-made placements are then columns-Nx1 and, for 8 GPUs, the MI250X package tiles): e.g.
flux-core/ipa20.xml (4 H100, uniform NVLink, 2 packages: GPU links and core distances disagree) or
hwloc/power8gpudistances.xml (4 P100, NVLink pairs); hwloc/nvidiaDGX2.xml cannot be mapped per GPU
(its XML has 4 PUs for 16 GPUs; README.md);
a node whose XML records no NIC gets one host NIC that all its GPUs share. --ref-bytes N sets the
cluster file's ref_bytes (the message size the costs are for, 7194 by default) for both mappings, e.g.
4194304: the heavy dimension's message size, where link bandwidth rather than latency sets the cost.
Prints the table and the issue's targets (within 1.1x of best-tried; 1.5x faster than rankmap-core
where the two differ: different placements, and rankmap-core not itself within 1.1x of best-tried, so
that a 1.5x gain exists to be had) and writes DIR/results.json.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SMPI_CFG = ["--cfg=smpi/simulate-computation:no", "--cfg=smpi/privatization:no",
            "--cfg=smpi/host-speed:1Gf", "--log=root.thres:critical"]
DIMS, BYTES, WEIGHTS = "8x4", "4194304,65536", "64,1"  # DIMS: GPUs per node x nodes (main sets it)
PCIE, NIC, LAT = "25GBps", "25GBps", "1us"
HOSTS_PER_LEAF = 2


def model(rankmapctl, cluster):
    r = json.loads(subprocess.check_output([rankmapctl, "report", "--cluster", cluster, "--json"]))
    t = r["node_types"][0]
    return expand(t["host_list"]), t["gpu_list"], t["gpu_links"]["matrix_gbps"]


def expand(hl):
    m = re.match(r"^(.*)\[(\d+)-(\d+)\]$", hl)
    if not m:
        return hl.split(",")
    return ["%s%d" % (m.group(1), i) for i in range(int(m.group(2)), int(m.group(3)) + 1)]


def platform(hosts, gpus, bw):
    n = len(gpus)
    name = lambda h, g: "%s-g%d" % (h, g)
    out = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">', '<zone id="world" routing="Full">']
    for h in hosts:
        for g in range(n):
            out.append('  <host id="%s" speed="1Gf"/>' % name(h, g))
    # a two-level fat tree: HOSTS_PER_LEAF hosts per leaf switch, each leaf's uplink to the spine as fast
    # as all its hosts' NICs together (full bisection), the switches' crossbars non-blocking
    nics = len({str(g.get("nic")) for g in gpus})
    leaves = (len(hosts) + HOSTS_PER_LEAF - 1) // HOSTS_PER_LEAF
    leaf = lambda h: hosts.index(h) // HOSTS_PER_LEAF
    for lf in range(leaves):
        out.append('  <link id="leaf-%d" bandwidth="10000GBps" latency="0.3us" sharing_policy="FATPIPE"/>' % lf)
        out.append('  <link id="up-%d" bandwidth="%dGBps" latency="%s"/>' % (
            lf, int(NIC.rstrip("GBps")) * nics * HOSTS_PER_LEAF, LAT))
    out.append('  <link id="spine" bandwidth="10000GBps" latency="0.3us" sharing_policy="FATPIPE"/>')
    for h in hosts:
        for g in range(n):
            out.append('  <link id="pcie-%s" bandwidth="%s" latency="%s"/>' % (name(h, g), PCIE, LAT))
        for nic in sorted({str(g.get("nic")) for g in gpus}):  # "None": the host's one path
            out.append('  <link id="nic-%s-%s" bandwidth="%s" latency="%s"/>' % (h, nic, NIC, LAT))
        for a in range(n):
            for b in range(a + 1, n):
                if bw[a][b] > 0:
                    out.append('  <link id="x-%s-%d-%d" bandwidth="%gGBps" latency="%s"/>' % (h, a, b, bw[a][b], LAT))
    hg = [(h, g) for h in hosts for g in range(n)]
    for i, (h1, a) in enumerate(hg):
        for (h2, b) in hg[i + 1:]:
            if h1 == h2:
                links = ["x-%s-%d-%d" % (h1, a, b)] if bw[a][b] > 0 else ["pcie-" + name(h1, a), "pcie-" + name(h2, b)]
            else:
                fabric = ["leaf-%d" % leaf(h1)] if leaf(h1) == leaf(h2) else \
                    ["leaf-%d" % leaf(h1), "up-%d" % leaf(h1), "spine", "up-%d" % leaf(h2), "leaf-%d" % leaf(h2)]
                links = ["pcie-" + name(h1, a), "nic-%s-%s" % (h1, gpus[a].get("nic"))] + fabric + \
                        ["nic-%s-%s" % (h2, gpus[b].get("nic")), "pcie-" + name(h2, b)]
            out.append('  <route src="%s" dst="%s">%s</route>' % (name(h1, a), name(h2, b),
                                                                   "".join('<link_ctn id="%s"/>' % l for l in links)))
    out += ["</zone>", "</platform>"]
    return "\n".join(out) + "\n", name


def daemon_core_map(rankmapd, cluster, work, hosts, gpus):
    """rankmapd's map over the GPUs' first PUs with core costs: [host, pu_os] slots."""
    sock, conf = os.path.join(work, "d.sock"), os.path.join(work, "d.conf")
    with open(conf, "w") as f:
        f.write("cluster = %s\nsocket_mode = 0600\n" % cluster)
    p = subprocess.Popen([rankmapd, "--config", conf, "--socket", sock, "--foreground", "--state-dir",
                          os.path.join(work, "state")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        time.sleep(0.5)
        first = [int(g["cpus"].split(",")[0].split("-")[0]) for g in gpus]
        slots = [[h, first[g]] for h in hosts for g in range(len(gpus))]
        req = {"version": 1, "type": "map", "id": 1, "cart": "%s:1,1:%s" % (DIMS, WEIGHTS), "slots": slots,
               "pu_index": "os", "index": "request", "slot_kind": "core"}
        out = subprocess.check_output([sys.executable, os.path.join(TOP, "tests", "raw_client.py"), "unix", sock,
                                       "json", json.dumps(req)], text=True)
        a = json.loads(out) if out.strip() != "closed" else {}
        if not a.get("ok"):
            raise SystemExit("rankmapd: %s" % a)
        return [tuple(slots[i]) for i in a["permutation"]], first
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)


def run(binary, work, plat, hostnames, label):
    hf = os.path.join(work, label + ".hosts")
    with open(hf, "w") as f:
        f.write("".join(h + "\n" for h in hostnames))
    cmd = ["smpirun", "-platform", plat, "-hostfile", hf, "-np", str(len(hostnames))] + SMPI_CFG + \
          [binary, "--dims", DIMS, "--bytes", BYTES, "--iters", str(ARGS.iters)]
    out = subprocess.run(cmd, cwd=work, env=dict(os.environ, RANKMAP_DISABLE="1", TMPDIR=work),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900).stdout
    m = re.search(r"E2E time=([0-9.e+-]+)", out)
    if not m:
        raise SystemExit("%s: no time in the output:\n%s" % (label, out[-2000:]))
    return float(m.group(1))


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(TOP, "build", "tests", "e2e"))
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(TOP, "tests", "bench", "e2e", "out-gpu"))
    ap.add_argument("--xml", default="mpibind/eas-tioga.xml", help="node XML under tests/data/gpu")
    ap.add_argument("--ref-bytes", type=int, default=0, help="ref_bytes of the cluster file (0: the default)")
    ap.add_argument("--links", default=None, help="site link file (default: the MI250X one for eas-tioga; none)")
    ARGS = ap.parse_args()
    global DIMS
    links = ARGS.links if ARGS.links is not None else (
        os.path.join(TOP, "conf/gpu-links-mi250x.conf") if "eas-tioga" in ARGS.xml else "none")
    build = os.path.dirname(os.path.dirname(ARGS.bin))
    rankmapctl, rankmapd = os.path.join(build, "rankmapctl"), os.path.join(build, "rankmapd")
    work = tempfile.mkdtemp(prefix="rankmap-gpu-bench.")
    try:
        os.makedirs(os.path.join(work, "hw"))
        for i in range(1, 5):
            shutil.copy(os.path.join(TOP, "tests/data/gpu", ARGS.xml), os.path.join(work, "hw", "node%d.xml" % i))
        cluster = os.path.join(work, "cluster.conf")
        with open(cluster, "w") as f:
            f.write("hwloc = hw\n" + ("gpu_links = %s\n" % links if links != "none" else "") +
                    ("ref_bytes = %d\n" % ARGS.ref_bytes if ARGS.ref_bytes > 0 else ""))
        hosts, gpus, bw = model(rankmapctl, cluster)
        DIMS = "%dx%d" % (len(gpus), len(hosts))
        xml, name = platform(hosts, gpus, bw)
        plat = os.path.join(work, "platform.xml")
        with open(plat, "w") as f:
            f.write(xml)
        n = len(gpus)
        idx = {g["name"]: g["index"] for g in gpus}
        place = {"block": [name(hosts[r // n], r % n) for r in range(len(hosts) * n)]}
        m = json.loads(subprocess.check_output([rankmapctl, "map", "--cart", "%s:1,1:%s" % (DIMS, WEIGHTS),
                                                "--cluster", cluster, "--slots", "gpu", "--json"]))
        place["rankmap-gpu"] = [name(p["host"], idx[p["gpu"]]) for p in m["placement"]]
        core, first = daemon_core_map(rankmapd, cluster, work, hosts, gpus)
        gpu_of = {(h, first[g]): g for h in hosts for g in range(n)}
        place["rankmap-core"] = [name(h, gpu_of[(h, pu)]) for h, pu in core]
        # hand-made: grid (i, j), rank i * 4 + j; nodes get 2 rows of 4 (row-major) or 8 rows of 1 column
        nh = len(hosts)
        if n == 8 and nh == 4:
            pairs = [(0, 1), (2, 3), (4, 5), (6, 7)]  # the MI250X packages (quad links, conf/gpu-links-mi250x.conf)
            place["tiles-2x4"] = [name(hosts[(r // 4) // 2], pairs[r % 4][(r // 4) % 2]) for r in range(32)]
        place["columns-%dx1" % n] = [name(hosts[r % nh], (r // nh)) for r in range(n * nh)]
        # hand-made from the link matrix alone: each node's GPUs in the ring order whose slowest hop is
        # fastest (then the largest total bandwidth), by exhaustive search: the heavy dimension is a ring
        # of n inside each node, and its time is set by its slowest hop
        if 3 <= n <= 9:
            import itertools
            hop = lambda a, b: bw[a][b] if bw[a][b] > 0 else 0  # no link: PCIe, slower than any link here
            ring = max(([0] + list(p) for p in itertools.permutations(range(1, n))),
                       key=lambda o: (min(hop(o[i], o[(i + 1) % n]) for i in range(n)),
                                      sum(hop(o[i], o[(i + 1) % n]) for i in range(n))))
            place["ring-links"] = [name(hosts[r % nh], ring[r // nh]) for r in range(n * nh)]
        res = {k: run(os.path.join(ARGS.bin, "cart_bench"), work, plat, v, k) for k, v in place.items()}
        best = min(res.values())
        os.makedirs(ARGS.out, exist_ok=True)
        print("halo %s, bytes %s, one rank per GPU, %d x %d GPUs of %s (simulated s; x best-tried)" % (
            DIMS, BYTES, len(hosts), n, ARGS.xml))
        for k, v in res.items():
            print("  %-14s %10.6f  %5.2fx" % (k, v, v / best))
        g, c = res["rankmap-gpu"], res["rankmap-core"]
        ok1 = g <= 1.1 * best
        # "where the two differ": where the placements differ and the core-cost one leaves room for a 1.5x
        # gain (it is not itself within 1.1x of the best placement tried; a node whose GPU pairs are all
        # alike, such as the H100's uniform NVLink, leaves none)
        same = place["rankmap-gpu"] == place["rankmap-core"]
        room = c > 1.1 * best
        ok2 = same or not room or c >= 1.5 * g
        print("target: rankmap-gpu within 1.1x of best-tried: %s (%.2fx)" % ("met" if ok1 else "MISSED", g / best))
        print("target: 1.5x faster than rankmap-core where they differ: %s (%.2fx)" % (
            "not applicable, the same placement" if same else
            "not applicable, rankmap-core is within 1.1x of best-tried" if not room else
            "met" if c >= 1.5 * g else "MISSED", c / g))
        with open(os.path.join(ARGS.out, "results.json"), "w") as f:
            json.dump(dict(times=res, placements=place, targets=dict(within_best=ok1, vs_core=ok2)), f, indent=1)
        return 0 if ok1 and ok2 else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
