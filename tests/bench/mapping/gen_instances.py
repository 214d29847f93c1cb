#!/usr/bin/env python3
"""tests/bench/mapping/gen_instances.py: the mapping benchmark's instances, as files any mapper reads.

    gen_instances.py OUTDIR [--only TEXT] [--large] [--list]

For every instance NAME it writes into OUTDIR (formats in tests/bench/mapping/README.md):

    NAME.graph         the communication graph, Metis format with integer edge weights (header
                       "n m 1"; as VieM, KaHIP, SharedMap and Mt-KaHyPar read it); a Cartesian halo
                       exchange carries one comment line "% rankmap-cart: SPEC" (rankmapctl --cart)
    NAME.mtx           the same graph as a symmetric integer Matrix Market file (rankmapctl --matrix)
    NAME.tleaf         the machine, one line: a Scotch tree leaf "tleaf L a1 c1 ... aL cL"
    NAME.hierarchy     the machine for VieM / SharedMap: "hierarchy=a_L:...:a_1" and
                       "distance=c_L:...:c_1", bottom-up as their command lines take them
    NAME.target.graph  the machine as a complete target graph (Metis, weights = distances) for
                       Mt-KaHyPar's process mapping, only when it has at most 1,024 slots

and OUTDIR/instances.txt, one line per instance: NAME RANKS SLOTS "TLEAF".

Everything is deterministic (a fixed xorshift generator, no library random); ranks of the irregular
families are shuffled so that the identity placement is not accidentally good. --large adds the
65,536-rank Cartesian instance (the issue's tiling target; the 1M-rank speed target is
tests/bench/bench_scale.c's), --list prints the names only.
"""
import os
import sys

MASK = (1 << 64) - 1


class Rng:
    """xorshift64 as tests/bench/bench_mapping.c's rnd()."""

    def __init__(self, seed):
        self.s = seed & MASK or 1

    def next(self):
        s = self.s
        s ^= (s << 13) & MASK
        s ^= s >> 7
        s ^= (s << 17) & MASK
        self.s = s
        return (s >> 11) & 0xFFFFFFFF


class Graph:
    def __init__(self, n):
        self.n = n
        self.w = {}  # (a, b) with a < b -> weight
        self.cart = None

    def add(self, a, b, w):
        if a == b or w <= 0:
            return
        if a > b:
            a, b = b, a
        self.w[(a, b)] = self.w.get((a, b), 0) + int(w)

    def shuffled(self, rng):
        """The same graph with ranks renamed by a random permutation."""
        p = list(range(self.n))
        for i in range(self.n - 1, 0, -1):
            j = rng.next() % (i + 1)
            p[i], p[j] = p[j], p[i]
        h = Graph(self.n)
        for (a, b), w in self.w.items():
            h.add(p[a], p[b], w)
        return h


# ---- families ----------------------------------------------------------------------------------


def random_sparse(n):
    """bench_mapping.c's "random sparse": each rank talks to 4 random ranks, weights 1..100."""
    rng = Rng(0x9E3779B97F4A7C15 ^ n)
    g = Graph(n)
    for i in range(n):
        for _ in range(4):
            j = rng.next() % n
            g.add(i, j, 1 + rng.next() % 100)
    return g


def cart(dims, periods=None, weights=None):
    """Halo exchange of a Cartesian grid in MPI row-major order (as map_graph_cart builds it)."""
    nd = len(dims)
    periods = periods or [1] * nd
    weights = weights or [1] * nd
    n = 1
    for d in dims:
        n *= d
    g = Graph(n)
    stride = [1] * nd
    for d in range(nd - 2, -1, -1):
        stride[d] = stride[d + 1] * dims[d + 1]
    for r in range(n):
        rest = r
        x = [0] * nd
        for d in range(nd - 1, -1, -1):
            x[d] = rest % dims[d]
            rest //= dims[d]
        for d in range(nd):
            if x[d] + 1 < dims[d]:
                g.add(r, r + stride[d], weights[d])
            elif periods[d] and dims[d] > 2:
                g.add(r, r - x[d] * stride[d], weights[d])
            elif periods[d] and dims[d] == 2:
                pass  # extent 2: the one edge counts both exchanges (below)
        for d in range(nd):
            if periods[d] and dims[d] == 2 and x[d] == 0:
                g.add(r, r + stride[d], weights[d])  # second exchange over the wrap-around
    g.cart = "x".join(map(str, dims)) + ":" + ",".join(map(str, periods)) + ":" + ",".join(map(str, weights))
    return g


def stencil27(dims, wdim):
    """27-point stencil on a non-periodic 3D grid, anisotropic: an offset's weight is the product of the
    per-dimension weights of the dimensions it moves along (faces heavy, corners light)."""
    nx, ny, nz = dims
    g = Graph(nx * ny * nz)
    for x in range(nx):
        for y in range(ny):
            for z in range(nz):
                r = (x * ny + y) * nz + z
                for dx in (-1, 0, 1):
                    for dy in (-1, 0, 1):
                        for dz in (-1, 0, 1):
                            X, Y, Z = x + dx, y + dy, z + dz
                            if (dx, dy, dz) == (0, 0, 0) or not (0 <= X < nx and 0 <= Y < ny and 0 <= Z < nz):
                                continue
                            w = 1
                            for dd, wd in zip((dx, dy, dz), wdim):
                                if dd:
                                    w *= wd
                            g.add(r, (X * ny + Y) * nz + Z, w)
    return g


def knn_mesh(n, dim, k, seed):
    """An irregular unstructured mesh's dual graph, approximated: n random points in the unit square or
    cube, each joined to its k nearest (bucket grid search), the weight of a face 10..100 (its area);
    then shuffled (a partitioner's block numbering has no geometric order)."""
    rng = Rng(seed)
    pts = [tuple(rng.next() / 2.0**32 for _ in range(dim)) for _ in range(n)]
    cells = max(1, int(round((n / 2.0) ** (1.0 / dim))))
    buckets = {}
    for i, p in enumerate(pts):
        buckets.setdefault(tuple(min(cells - 1, int(c * cells)) for c in p), []).append(i)
    g = Graph(n)
    for i, p in enumerate(pts):
        home = tuple(min(cells - 1, int(c * cells)) for c in p)
        rad = 1
        while True:
            cand = []
            rngs = [range(max(0, h - rad), min(cells, h + rad + 1)) for h in home]
            if dim == 2:
                keys = [(a, b) for a in rngs[0] for b in rngs[1]]
            else:
                keys = [(a, b, c) for a in rngs[0] for b in rngs[1] for c in rngs[2]]
            for key in keys:
                cand.extend(buckets.get(key, ()))
            if len(cand) > k or rad >= cells:
                break
            rad += 1
        cand.sort(key=lambda j: (sum((a - b) ** 2 for a, b in zip(p, pts[j])), j))
        for j in cand[1 : k + 1]:
            g.add(i, j, 10 + (i * 7919 + j * 104729) % 91)
    return g.shuffled(Rng(seed ^ 0x5BD1E995))


def power_law(n, m, seed):
    """Preferential attachment (Barabasi-Albert, m edges per new rank), weights 1..100: a few hub
    ranks (masters, I/O aggregators) talk to many; shuffled."""
    rng = Rng(seed)
    g = Graph(n)
    targets = list(range(m))
    ends = []
    for v in range(m, n):
        chosen = set()
        for t in targets:
            chosen.add(t)
        for t in chosen:
            g.add(v, t, 1 + rng.next() % 100)
        ends.extend(chosen)
        ends.extend([v] * len(chosen))
        targets = []
        while len(targets) < m:
            t = ends[rng.next() % len(ends)]
            if t not in targets:
                targets.append(t)
    return g.shuffled(Rng(seed ^ 0x2545F491))


def md_halo(dims):
    """Molecular dynamics halo exchange on a periodic 3D domain decomposition: 26 neighbours, faces
    100, edges 10, corners 1 (the volumes of the halo regions)."""
    nx, ny, nz = dims
    g = Graph(nx * ny * nz)
    for x in range(nx):
        for y in range(ny):
            for z in range(nz):
                r = (x * ny + y) * nz + z
                for dx in (-1, 0, 1):
                    for dy in (-1, 0, 1):
                        for dz in (-1, 0, 1):
                            nzr = abs(dx) + abs(dy) + abs(dz)
                            if nzr == 0:
                                continue
                            s = (((x + dx) % nx) * ny + (y + dy) % ny) * nz + (z + dz) % nz
                            if s > r:  # each unordered pair once per offset
                                g.add(r, s, (100, 10, 1)[nzr - 1])
    return g


def cg_solver(n, seed):
    """A CG solver's sparse matrix-vector product on an unstructured partition: a 2D mesh of the
    blocks with irregular boundary lengths (20..200), a few long-range couplings (1..10), and the
    dot products' allreduce (recursive doubling, weight 1 per pair, every step)."""
    rng = Rng(seed)
    side = 1
    while side * side < n:
        side += 1
    g = Graph(n)
    for r in range(n):
        x, y = r // side, r % side
        if y + 1 < side and r + 1 < n:
            g.add(r, r + 1, 20 + rng.next() % 181)
        if r + side < n:
            g.add(r, r + side, 20 + rng.next() % 181)
        if x + 1 < side and y + 1 < side and r + side + 1 < n and rng.next() % 3 == 0:
            g.add(r, r + side + 1, 20 + rng.next() % 60)
        if rng.next() % 8 == 0:
            g.add(r, rng.next() % n, 1 + rng.next() % 10)
    k = 1
    while k < n:
        for r in range(n):
            if r ^ k < n:
                g.add(r, r ^ k, 1)
        k <<= 1
    return g.shuffled(Rng(seed ^ 0x61C88647))


# ---- the instances -------------------------------------------------------------------------------

# name, builder, tleaf (the machine; "tleaf L a1 c1 ... aL cL", level 1 at the top), large
INSTANCES = [
    ("rand128", lambda: random_sparse(128), "tleaf 4 2 14 8 10 2 2 4 1", 0),
    ("rand1024", lambda: random_sparse(1024), "tleaf 4 8 14 8 10 2 2 8 1", 0),
    ("md128", lambda: md_halo((8, 4, 4)), "tleaf 3 8 10 2 2 8 1", 0),
    ("cg128", lambda: cg_solver(128, 0xC6), "tleaf 3 4 10 4 2 8 1", 0),
    ("stencil2d-40x36", lambda: cart([40, 36], [0, 0], [1, 1]), "tleaf 3 30 10 2 2 24 1", 0),
    ("mesh2d-4k", lambda: knn_mesh(4096, 2, 6, 0x4D4553), "tleaf 4 4 14 16 10 2 2 32 1", 0),
    ("mesh3d-16k", lambda: knn_mesh(16384, 3, 8, 0x4D3344), "tleaf 4 16 14 16 10 2 2 32 1", 0),
    ("powerlaw-1k", lambda: power_law(1024, 3, 0x504C31), "tleaf 3 32 10 2 2 16 1", 0),
    ("powerlaw-8k", lambda: power_law(8192, 4, 0x504C38), "tleaf 4 8 14 16 10 2 2 32 1", 0),
    ("stencil27-16x16x16", lambda: stencil27((16, 16, 16), (8, 4, 1)), "tleaf 3 64 10 2 3 32 1", 0),
    ("stencil27-24x20x18", lambda: stencil27((24, 20, 18), (1, 2, 6)), "tleaf 4 5 14 36 10 2 3 24 1", 0),
    ("cart2d-60x48", lambda: cart([60, 48], [1, 1], [1, 1]), "tleaf 3 60 10 2 2 24 1", 0),
    ("cart3d-24x20x18", lambda: cart([24, 20, 18], [1, 1, 1], [1, 1, 1]), "tleaf 4 5 14 36 10 2 3 24 1", 0),
    ("cart3d-64x64x16", lambda: cart([64, 64, 16]), "tleaf 4 64 14 64 10 2 2 8 1", 1),
]


def parse_tleaf(s):
    f = s.split()
    if f[0] != "tleaf" or len(f) != 2 + 2 * int(f[1]):
        raise ValueError("bad tleaf '%s'" % s)
    L = int(f[1])
    return [int(f[2 + 2 * i]) for i in range(L)], [int(f[3 + 2 * i]) for i in range(L)]


def write_instance(outdir, name, g, tleaf):
    arity, cost = parse_tleaf(tleaf)
    slots = 1
    for a in arity:
        slots *= a
    if g.n > slots:
        raise ValueError("%s: %d ranks but %d slots" % (name, g.n, slots))
    adj = [[] for _ in range(g.n)]
    for (a, b), w in g.w.items():
        adj[a].append((b, w))
        adj[b].append((a, w))
    with open(os.path.join(outdir, name + ".graph"), "w") as f:
        if g.cart:
            f.write("% rankmap-cart: " + g.cart + "\n")
        f.write("%d %d 1\n" % (g.n, len(g.w)))
        for lst in adj:
            lst.sort()
            f.write(" ".join("%d %d" % (v + 1, w) for v, w in lst) + "\n")
    with open(os.path.join(outdir, name + ".mtx"), "w") as f:
        f.write("%%MatrixMarket matrix coordinate integer symmetric\n")
        f.write("%d %d %d\n" % (g.n, g.n, len(g.w)))
        for (a, b), w in sorted(g.w.items()):
            f.write("%d %d %d\n" % (b + 1, a + 1, w))
    with open(os.path.join(outdir, name + ".tleaf"), "w") as f:
        f.write(tleaf + "\n")
    with open(os.path.join(outdir, name + ".hierarchy"), "w") as f:
        f.write("hierarchy=%s\n" % ":".join(map(str, reversed(arity))))
        f.write("distance=%s\n" % ":".join(map(str, reversed(cost))))
    if slots <= 1024:
        write_target_graph(os.path.join(outdir, name + ".target.graph"), arity, cost)
    return g.n, slots


def write_target_graph(path, arity, cost):
    """The complete graph of the slots, each edge weighted by the tleaf distance."""
    slots = 1
    for a in arity:
        slots *= a
    below = []  # slots under one group of level l+1
    s = slots
    for a in arity:
        s //= a
        below.append(s)
    with open(path, "w") as f:
        f.write("%d %d 1\n" % (slots, slots * (slots - 1) // 2))
        for u in range(slots):
            row = []
            for v in range(slots):
                if u == v:
                    continue
                lev = 0
                while u // below[lev] == v // below[lev]:
                    lev += 1
                row.append("%d %d" % (v + 1, cost[lev]))
            f.write(" ".join(row) + "\n")


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    only = None
    if "--only" in argv:
        only = argv[argv.index("--only") + 1]
        args.remove(only)
    large = "--large" in argv
    todo = [i for i in INSTANCES if (large or not i[3]) and (only is None or only in i[0])]
    if "--list" in argv:
        for name, _, tleaf, _ in todo:
            print(name, tleaf)
        return 0
    if len(args) != 1:
        sys.stderr.write("usage: gen_instances.py OUTDIR [--only TEXT] [--large] [--list]\n")
        return 2
    outdir = args[0]
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "instances.txt"), "w") as lst:
        for name, build, tleaf, _ in todo:
            n, slots = write_instance(outdir, name, build(), tleaf)
            lst.write('%s %d %d "%s"\n' % (name, n, slots, tleaf))
            print("%-22s %8d ranks %8d slots  %s" % (name, n, slots, tleaf), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
