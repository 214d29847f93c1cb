#!/usr/bin/env python3
"""tests/bench/e2e/fabric_links.py: the bytes each link carries in the runs fabric_bench.py kept (FB_KEEP=1).

    FB_KEEP=1 python3 tests/bench/e2e/fabric_bench.py --fabric ndr      # prints "kept DIR"
    python3 tests/bench/e2e/fabric_links.py DIR [TAG...]

For each kept run (TAG as in the file names: busy_s27_rankmap-wt_treematch, busy_s28_rankmap-blk_u for an
unmapped one; default every run) it places the traced matrix's ranks as the run did (the RANKMAP_REPORT of a
mapped run, the hostfile of an unmapped one) and adds each message's bytes (all iterations) to every link of
its route, read from the platform's routes: the default platform's (a Full zone, one route per pair of hosts;
the Floyd platform of --routing floyd has no explicit routes and is refused). It prints the bytes by route
length (0: inside a host), the busiest host cable and the busiest switch-to-switch cable, each way when the
cables are full duplex. Lower bound of a run's time: the busiest link's bytes over its rate.
"""
import collections
import glob
import os
import re
import sys


def load_platform(path):
    text = open(path).read()
    if 'routing="Full"' not in text:
        raise SystemExit("%s: not a platform with explicit routes (run fabric_bench.py with --routing minhop)" % path)
    hosts = set(re.findall(r'<host id="([^"]+)"', text))
    rate = {m.group(1): float(m.group(2)) for m in re.finditer(r'<link id="([^"]+)" bandwidth="([0-9.]+)GBps"', text)}
    ends = {m.group(1): (m.group(2), m.group(3))
            for m in re.finditer(r'<link id="([^"]+)"[^>]*/> <!-- (\S+) (\S+) -->', text)}
    routes = {}
    for m in re.finditer(r'<route src="([^"]+)" dst="([^"]+)"[^>]*>(.*?)</route>', text):
        routes[(m.group(1), m.group(2))] = [
            (l, d or "") for l, d in re.findall(r'<link_ctn id="([^"]+)"(?: direction="(\w+)")?/>', m.group(3))]
    # a host cable is the first link of every route from its host
    hostlinks = {r[0][0] for r in routes.values() if r}
    return hosts, rate, routes, hostlinks, ends


def load_matrix(path):
    out, size = [], None
    for ln in open(path):
        if ln.startswith("%"):
            continue
        w = ln.split()
        if size is None:
            size = w
            continue
        out.append((int(w[0]) - 1, int(w[1]) - 1, float(w[2])))
    return out


def placement(work, tag):
    """Host of each rank (the traced matrix's numbering) in the run TAG."""
    if tag.endswith("_u"):
        return [h.strip() for h in open(os.path.join(work, tag + ".hosts")) if h.strip()]
    place = {}
    for ln in open(os.path.join(work, tag + ".report")):
        m = re.search(r"new_rank=(\d+) host=(\S+)", ln)
        if m:
            place[int(m.group(1))] = m.group(2)
    return [place[i] for i in range(len(place))]


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) >= 2 else 2
    work = sys.argv[1]
    hosts, rate, routes, hostlinks, ends = load_platform(os.path.join(work, "platform.xml"))
    mat = load_matrix(os.path.join(work, "traced.mtx"))
    tags = sys.argv[2:] or sorted(
        os.path.basename(f)[:-len(".report")] for f in glob.glob(os.path.join(work, "*.report"))) + sorted(
        os.path.basename(f)[:-len(".hosts")] for f in glob.glob(os.path.join(work, "*_u.hosts")))
    for tag in tags:
        try:
            where = placement(work, tag)
        except FileNotFoundError:
            print("%s: no such run in %s" % (tag, work))
            continue
        load, bylen = collections.Counter(), collections.Counter()
        for i, j, b in mat:
            a, c = where[i], where[j]
            if a == c:
                bylen[0] += b
                continue
            r = routes[(a, c)]
            bylen[len(r)] += b
            for link in r:
                load[link] += b
        hmax = max((v, k) for k, v in load.items() if k[0] in hostlinks)
        smax = max(((v, k) for k, v in load.items() if k[0] not in hostlinks), default=(0, ("-", "")))
        def name(k):  # link, its ends, the way it is crossed
            a, b = ends.get(k[0], ("?", "?"))
            return "%s %s" % (k[0], "%s->%s" % ((a, b) if k[1] != "DOWN" else (b, a)) if k[1] else "%s-%s" % (a, b))

        print("%-34s MB by route length %s; busiest host cable %.1f MB (%s, %g GB/s); busiest switch cable "
              "%.1f MB (%s)" % (tag, {k: round(v / 1e6, 1) for k, v in sorted(bylen.items())}, hmax[0] / 1e6,
                                name(hmax[1]), rate[hmax[1][0]], smax[0] / 1e6, name(smax[1]) if smax[0] else "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
