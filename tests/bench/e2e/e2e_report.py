"""tests/bench/e2e/e2e_report.py: the table, the target checks and the SVG bar chart of `make bench-e2e`.

report(results, outdir, elapsed) prints the table (also written to table.txt), writes chart.svg and
returns True when every target is met. A result is a dict: scenario, group, seed, label (block, cyclic,
an engine name, "<engine> unweighted"), start (placement the run started from), time (simulated s or
None), offnode (share of bytes between hosts), warn (rankmap warnings printed by the run).
"""
import os

TOL = 0.005          # 0.5 %: simulated times are exact, this only absorbs rounding of tie cases
ORDER = ["block", "cyclic", "treematch", "scotch", "auto",
         "treematch unweighted", "scotch unweighted", "auto unweighted"]
COLORS = {"block": "#7f7f7f", "cyclic": "#bcbd22", "treematch": "#1f77b4", "scotch": "#2ca02c",
          "auto": "#d62728", "treematch unweighted": "#aec7e8", "scotch unweighted": "#98df8a",
          "auto unweighted": "#ff9896"}


def rows_of(results):
    """Per scenario, per label: the worst time over the starting placements (None if a run failed)."""
    table = {}
    for r in results:
        sc = table.setdefault(r["scenario"], dict(group=r["group"], seed=r["seed"], weights=r.get("weights", ""),
                                                   cells={}))
        c = sc["cells"].setdefault(r["label"], dict(time=0.0, offnode=0.0, starts=[], warn=[]))
        if r["time"] is None or c["time"] is None:
            c["time"] = None
        else:
            c["time"] = max(c["time"], r["time"])
            c["offnode"] = max(c["offnode"], r["offnode"])
        c["starts"].append(r["start"])
        c["warn"] += r["warn"]
    return table


def pct(base, t):
    if base is None or t is None or base <= 0:
        return "n/a"
    return "%+.1f %%" % (100.0 * (base - t) / base)


def format_table(table):
    lines = ["%-50s %-21s %12s %10s %10s %8s  %s" % ("scenario", "placement", "sim. time", "vs block",
                                                   "vs cyclic", "offnode", "seed figure")]
    lines.append("-" * len(lines[0]))
    for name, sc in table.items():
        b = sc["cells"].get("block", {}).get("time")
        cy = sc["cells"].get("cyclic", {}).get("time")
        first = True
        for label in ORDER:
            c = sc["cells"].get(label)
            if not c:
                continue
            t = c["time"]
            ts = "FAILED" if t is None else "%.3f ms" % (t * 1e3)
            flag = " (fallback: %s)" % c["warn"][0][9:70] if c["warn"] else ""
            lines.append("%-50s %-21s %12s %10s %10s %7.0f%%  %s%s" % (
                name if first else "", label, ts, "" if label == "block" else pct(b, t),
                "" if label == "cyclic" else pct(cy, t), 100 * c["offnode"], sc["seed"] if first else "", flag))
            first = False
        lines.append("%-50s weights: %s" % ("", sc["weights"]))
    return lines


def reordered(sc, weighted=True):
    return {k: v for k, v in sc["cells"].items()
            if k not in ("block", "cyclic") and (k.endswith("unweighted") != weighted)}


def check_targets(table, elapsed):
    """Returns [(target, met, evidence)]."""
    out = []
    worst, bad = None, []
    for name, sc in table.items():
        b, cy = sc["cells"]["block"]["time"], sc["cells"]["cyclic"]["time"]
        best = min(x for x in (b, cy) if x is not None) if (b or cy) else None
        for label, c in reordered(sc).items():
            if c["time"] is None or best is None or c["time"] > best * (1 + TOL) or c["warn"]:
                bad.append("%s/%s" % (name, label))
            elif best:
                g = (best - c["time"]) / best
                worst = g if worst is None else min(worst, g)
    out.append(("reordered (weighted; worst of the block and cyclic starts) never worse than the better of "
                "block and cyclic", not bad,
                "violations: " + ", ".join(bad) if bad else "smallest gain over the better one: %+.1f %%"
                % (100 * (worst or 0))))
    for name, sc in table.items():
        b, cy = sc["cells"]["block"]["time"], sc["cells"]["cyclic"]["time"]
        rs = reordered(sc)
        if sc["group"] == "ring":
            ok = all(c["time"] is not None and b is not None and c["time"] <= b * (1 + TOL) for c in rs.values())
            ev = ", ".join("%s recovers %s of cyclic's loss" % (k, rec(b, cy, c["time"])) for k, c in rs.items())
            out.append(("ring of rings: cyclic's loss recovered completely (%s)" % name, ok, ev))
        if sc["group"] == "heavy":
            gains = {k: (b - c["time"]) / b for k, c in rs.items() if c["time"] is not None and b}
            ok = len(gains) == len(rs) and all(g >= 0.40 for g in gains.values())
            out.append(("heavy dimension: >= 40 %% less than block (%s)" % name, ok,
                        ", ".join("%s %.1f %%" % (k, 100 * g) for k, g in gains.items())))
        if sc["group"] in ("heavy", "scale"):  # unbalanced patterns, run weighted and unweighted
            uw = reordered(sc, weighted=False)
            pairs = [(k, c["time"], uw.get(k + " unweighted", {}).get("time")) for k, c in rs.items()]
            ok = all(w is not None and u is not None and w < u for _, w, u in pairs)
            out.append(("weighted beats unweighted (%s)" % name, ok, ", ".join(
                "%s %s vs %s" % (k, ms(w), ms(u)) for k, w, u in pairs)))
    out.append(("whole bench under 15 minutes", elapsed < 900, "%.0f s" % elapsed))
    uw = ["%s/%s" % (n, k) for n, sc in table.items() for k, c in reordered(sc, weighted=False).items()
          if c["time"] is not None and c["time"] > min(sc["cells"]["block"]["time"], sc["cells"]["cyclic"]["time"])]
    out.append(("(information, not a target) unweighted runs worse than the better plain placement", None,
                ", ".join(uw) if uw else "none"))
    return out


def rec(b, cy, t):
    if None in (b, cy, t) or cy <= b:
        return "n/a"
    return "%.0f %%" % (100.0 * (cy - t) / (cy - b))


def ms(t):
    return "FAILED" if t is None else "%.3f ms" % (t * 1e3)


def svg(table, path):
    """Grouped bars: every scenario's times relative to its block time (block = 100 %), log scale."""
    import math
    names = list(table)
    labels = [k for k in ORDER if any(k in sc["cells"] for sc in table.values())]
    bw, gap, left, top, h = 9, 14, 60, 40, 300
    gw = bw * len(labels) + gap
    width = left + gw * len(names) + 200
    vals = [100 * c["time"] / sc["cells"]["block"]["time"] for sc in table.values() for c in sc["cells"].values()
            if c["time"] and sc["cells"]["block"]["time"]]
    lo = 10 ** math.floor(math.log10(max(min(vals + [100]), 0.01)))
    hi = 10 ** math.ceil(math.log10(max(vals + [100]) * 1.01))
    y = lambda v: top + h - h * (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
         'font-size="10">' % (width, top + h + 230),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="20" font-size="14">Simulated communication time relative to block placement '
         '(SimGrid SMPI; log scale, lower is better)</text>' % left]
    v = lo
    while v <= hi * 1.001:
        o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/><text x="%d" y="%.1f" '
                 'text-anchor="end">%g %%</text>' % (left, left + gw * len(names), y(v), y(v),
                                                     "#888" if v == 100 else "#ddd", left - 4, y(v) + 3, v))
        v *= 10
    for i, name in enumerate(names):
        sc, x0 = table[name], left + i * gw + gap / 2
        b = sc["cells"]["block"]["time"]
        for j, k in enumerate(labels):
            c = sc["cells"].get(k)
            if not c or not b or c["time"] is None:
                continue
            v = 100 * c["time"] / b
            o.append('<rect x="%.1f" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s / %s: %.3f ms (%.0f %%)'
                     '</title></rect>' % (x0 + j * bw, y(v), bw - 1, top + h - y(v), COLORS[k], esc(name), k,
                                          c["time"] * 1e3, v))
        o.append('<text transform="translate(%.1f,%d) rotate(45)">%s</text>' % (x0 + 4, top + h + 10, esc(name)))
    for j, k in enumerate(labels):
        yy = top + 14 * j
        o.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>'
                 % (width - 190, yy, COLORS[k], width - 175, yy + 9, k))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def report(results, outdir, elapsed):
    table = rows_of(results)
    lines = format_table(table)
    lines.append("")
    targets = check_targets(table, elapsed)
    for t, ok, ev in targets:
        lines.append("%-11s %s: %s" % ("NOTE" if ok is None else "TARGET met" if ok else "TARGET MISS", t, ev))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(outdir, "table.txt"), "w") as f:
        f.write(text)
    svg(table, os.path.join(outdir, "chart.svg"))
    print(text, end="")
    print("e2e: table %s, chart %s" % (os.path.join(outdir, "table.txt"), os.path.join(outdir, "chart.svg")))
    return all(ok is not False for _, ok, _ in targets)
