#!/usr/bin/env python3
"""tests/bench/mapping/score.py: the mapping benchmark's one scorer, independent of the code under test.

    score.py GRAPH TLEAF MAPPING...      (TLEAF: a file holding the tleaf line, or the string itself)
    score.py GRAPH TLEAF --identity

GRAPH is a Metis graph (header "n m [fmt]", fmt 1 or 11: edge weights; 10: vertex weights only, then
every edge weighs 1; '%' lines are comments), MAPPING a file of n lines, line i the slot (block, PE)
of vertex i, 0-based (rankmapctl map --out, VieM --output_filename, Mt-KaHyPar's and SharedMap's
partition files). For each mapping it prints

    cost FILE COST

COST = sum over undirected edges {u, v} of w(u, v) x dist(map(u), map(v)), dist the tleaf distance:
slots are numbered depth-first ("tleaf L a1 c1 ... aL cL": slot s lies in group s // (a_{l+1} ... a_L)
of level l), two slots whose groups first differ at level l are at c_l, and 0 apart when equal. A
mapping that puts two vertices on one slot, a slot out of range, or a line count other than n, is an
error (exit 1) naming the file and line. The cost is exact (integer weights and distances are summed
as Python integers). Nothing here comes from rankmap's sources.
"""
import sys


def die(msg):
    sys.stderr.write("score.py: %s\n" % msg)
    sys.exit(1)


def read_tleaf(arg):
    try:
        with open(arg) as f:
            s = f.read().strip()
    except OSError:
        s = arg.strip()
    f = s.split()
    try:
        if f[0] != "tleaf" or len(f) != 2 + 2 * int(f[1]) or int(f[1]) < 1:
            raise ValueError
        L = int(f[1])
        arity = [int(f[2 + 2 * i]) for i in range(L)]
        cost = [float(f[3 + 2 * i]) for i in range(L)]
    except (ValueError, IndexError):
        die("%s: not a tleaf 'tleaf L a1 c1 ... aL cL'" % arg)
    cost = [int(c) if c == int(c) else c for c in cost]
    below, s = [], 1
    for a in arity:
        s *= a
    slots = s
    for a in arity:
        s //= a
        below.append(s)  # slots under one group of level l+1
    return slots, below, cost


def read_graph(path):
    """Yields (u, v, w) once per undirected edge (u < v), after checking the header."""
    with open(path) as f:
        lines = [ln for ln in f if not ln.startswith("%")]
    if not lines:
        die("%s: empty graph file" % path)
    head = lines[0].split()
    n, m = int(head[0]), int(head[1])
    fmt = head[2] if len(head) > 2 else "0"
    ncon = int(head[3]) if len(head) > 3 else 1
    ew = fmt.endswith("1")
    vw = len(fmt) >= 2 and fmt[-2] == "1"
    if len(lines) - 1 < n:
        die("%s: %d vertex lines, the header says %d" % (path, len(lines) - 1, n))
    edges, seen = [], 0
    for u in range(n):
        tok = lines[1 + u].split()
        if vw:
            tok = tok[ncon:]
        step = 2 if ew else 1
        for i in range(0, len(tok), step):
            v = int(tok[i]) - 1
            w = int(tok[i + 1]) if ew else 1
            if not 0 <= v < n:
                die("%s: vertex %d names neighbour %d of %d" % (path, u + 1, v + 1, n))
            seen += 1
            if u < v:
                edges.append((u, v, w))
    if seen != 2 * m:
        die("%s: %d adjacency entries, the header says %d edges" % (path, seen, m))
    return n, edges


def read_mapping(path, n, slots):
    with open(path) as f:
        vals = [ln.strip() for ln in f if ln.strip()]
    if len(vals) != n:
        die("%s: %d lines, the graph has %d vertices" % (path, len(vals), n))
    used, perm = set(), []
    for i, v in enumerate(vals):
        try:
            s = int(v)
        except ValueError:
            die("%s:%d: '%s' is not a slot number" % (path, i + 1, v))
        if not 0 <= s < slots:
            die("%s:%d: slot %d outside 0..%d" % (path, i + 1, s, slots - 1))
        if s in used:
            die("%s:%d: slot %d holds two vertices" % (path, i + 1, s))
        used.add(s)
        perm.append(s)
    return perm


def cost_of(edges, perm, below, cost):
    total = 0
    L = len(below)
    for u, v, w in edges:
        a, b = perm[u], perm[v]
        if a == b:
            continue
        lev = 0
        while lev < L and a // below[lev] == b // below[lev]:
            lev += 1
        total += w * cost[lev]
    return total


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    slots, below, cost = read_tleaf(argv[2])
    n, edges = read_graph(argv[1])
    if n > slots:
        die("%s: %d vertices but %d slots" % (argv[1], n, slots))
    for m in argv[3:]:
        perm = list(range(n)) if m == "--identity" else read_mapping(m, n, slots)
        print("cost %s %s" % (m, cost_of(edges, perm, below, cost)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
