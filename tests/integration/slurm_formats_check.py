#!/usr/bin/env python3
"""tests/integration/slurm_formats_check.py: independent checks of slurm-topology's other formats.

  slurm_formats_check.py block FILE [--tree TREE]    topology/block's topology.conf
  slurm_formats_check.py yaml FILE [--tree TREE] [--block BLOCK]   Slurm 25.05's topology.yaml
  slurm_formats_check.py weights FILE --tree TREE    NodeName=... Weight=... lines in fat-tree order
  slurm_formats_check.py leaf-order TREE             the leaves of a tree file in the order expected
                                                     below, one a line
  slurm_formats_check.py slurm-blocks FILE BLOCK     `scontrol show topology` under topology/block
                                                     lists the blocks of BLOCK with their nodes
  slurm_formats_check.py dragonfly TREE TOPOFILE [--slurm SHOW]
                                                     a dragonfly's tree: one switch per group above
                                                     exactly the group's routers, one top switch above
                                                     the groups, the global links counted right; the
                                                     groups found here from the ibnetdiscover file
                                                     (a link is inside a group when its two switches
                                                     have a common neighbour switch: the routers of a
                                                     group are linked all to all); with --slurm, the
                                                     `scontrol show topology` output has that many
                                                     switches at level 1, each with its routers

Grammars, from Slurm's manual pages (not from rankmap):
  - topology.conf(5), "topology/block": lines `BlockName=<name> Nodes=<host list>` and `BlockSizes=`;
    parameter names are case insensitive, '#' starts a comment. Each BlockSizes value is an integer;
    "Each block must have at least the planning base block size count of nodes. Successive BlockSizes
    must be a power of two larger than the prior values." Block names unique; a node in one block.
  - topology.yaml(5) (Slurm 25.05): a list of topologies; `topology` must be the first attribute and
    unique; `cluster_default` a boolean; exactly one of `block`, `flat: true`, `tree`; tree `switches`
    items with `switch` (required, at most 64 characters, unique), `children`, `nodes`; block
    `block_sizes` (the rule above) and `blocks` items with `block` (required, unique) and `nodes`.
    The structure is tests/data/slurm/topology-yaml.schema.json (JSON Schema, checked with
    python3-jsonschema); the rules a schema cannot state are checked here.
With --tree --groups, the blocks must be the switches right below the tree's top switch (the
dragonfly's groups), each with every host below it, in natural order of their names.
With --tree (a topology/tree file of the same fabric, itself checked against the fabric by
report_topo_check.py), the blocks must be its leaves with the same hosts, in the leaf order the
documentation of `slurm-topology --format block` promises: depth first from the root switches (in
natural order of their names), each switch's children in natural order, a leaf at its first visit.
Exit status: 1 when the file breaks a rule, 2 when the check cannot run (a module missing, bad usage).
Weights: distinct, 1..N, the hosts of the tree's leaves in that leaf order and, within a leaf, in
natural order. Prints one line per problem; exit status 1 if any.
"""
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_topo_check import expand, parse_conf  # noqa: E402

NAME_RE = re.compile(r'^[A-Za-z0-9._-]+$')
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def natural_key(s):
    return [(0, int(t), '') if t.isdigit() else (1, 0, t) for t in re.findall(r'\d+|\D+', s)]


def sizes_problems(sizes, blocks, where):
    """BlockSizes rules of topology.conf(5) / topology.yaml(5)."""
    problems = []
    if not sizes:
        return problems
    if any(not isinstance(s, int) or s < 1 for s in sizes):
        return [f'{where}: block sizes must be positive integers: {sizes}']
    for a, b in zip(sizes, sizes[1:]):
        q = b // a if b % a == 0 else 0
        if q < 2 or q & (q - 1):
            problems.append(f'{where}: block size {b} is not a power of two larger than {a}')
    for name, hosts in blocks:
        if len(hosts) < sizes[0]:
            problems.append(f'{where}: block {name} has {len(hosts)} nodes, fewer than the base block size {sizes[0]}')
    return problems


def blocks_problems(blocks, where):
    problems, owner = [], {}
    names = [n for n, _ in blocks]
    for n in names:
        if not NAME_RE.match(n):
            problems.append(f'{where}: block name {n!r}')
    if len(set(names)) != len(names):
        problems.append(f'{where}: block names are not unique')
    for n, hosts in blocks:
        for h in hosts:
            if h in owner:
                problems.append(f'{where}: node {h} in blocks {owner[h]} and {n}')
            owner[h] = n
    return problems


def parse_block(path):
    blocks, sizes, problems = [], None, []
    for no, line in enumerate(open(path), 1):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        kv = {}
        for tok in line.split():
            if '=' not in tok:
                problems.append(f'{path}:{no}: not key=value: {tok}')
                continue
            k, v = tok.split('=', 1)
            kv[k.lower()] = v
        if set(kv) == {'blockname', 'nodes'}:
            if sizes is not None:
                problems.append(f'{path}:{no}: BlockName after BlockSizes')
            blocks.append((kv['blockname'], expand(kv['nodes'])))
        elif set(kv) == {'blocksizes'}:
            if sizes is not None:
                problems.append(f'{path}:{no}: BlockSizes twice')
            try:
                sizes = [int(x) for x in kv['blocksizes'].split(',')]
            except ValueError:
                problems.append(f'{path}:{no}: BlockSizes={kv["blocksizes"]}: not integers')
                sizes = []
        else:
            problems.append(f'{path}:{no}: neither BlockName=... Nodes=... nor BlockSizes=...: {line}')
    problems += blocks_problems(blocks, path) + sizes_problems(sizes or [], blocks, path)
    if not blocks:
        problems.append(f'{path}: no block')
    return blocks, sizes, problems


def leaf_order(tree):
    """Leaves of a tree file in the promised order (see the module's text)."""
    sw, _, _ = parse_conf(tree)
    children = {n: set(m) for n, (k, m) in sw.items() if k == 'Switches'}
    listed = set().union(*children.values()) if children else set()
    roots = sorted((n for n in sw if n not in listed), key=natural_key)
    order, seen = [], set()

    def walk(n):
        if n in seen:
            return
        seen.add(n)
        if sw[n][0] == 'Nodes':
            order.append(n)
            return
        for c in sorted(children[n], key=natural_key):
            walk(c)
    for r in roots:
        walk(r)
    return order, sw


def hosts_below(sw, n):
    kind, members = sw[n]
    return list(members) if kind == 'Nodes' else [h for c in members for h in hosts_below(sw, c)]


def against_tree(blocks, tree, where, groups=False):
    order, sw = leaf_order(tree)
    problems = []
    want = [(n, sorted(sw[n][1], key=natural_key)) for n in order]
    if groups:
        listed = {c for k, m in sw.values() if k == 'Switches' for c in m}
        roots = [n for n in sw if n not in listed]
        if len(roots) != 1:
            return [f'{tree}: {len(roots)} top switches, a dragonfly has one']
        want = [(g, sorted(set(hosts_below(sw, g)), key=natural_key)) for g in sorted(sw[roots[0]][1], key=natural_key)]
    got = [(n, sorted(h, key=natural_key)) for n, h in blocks]
    if [n for n, _ in got] != [n for n, _ in want]:
        problems.append(f'{where}: blocks {[n for n, _ in got][:8]}..., the tree\'s leaves in order are '
                        f'{[n for n, _ in want][:8]}...')
    for (gn, gh), (wn, wh) in zip(got, want):
        if gn == wn and gh != wh:
            problems.append(f'{where}: block {gn} has {gh[:4]}..., its leaf {wh[:4]}...')
    return problems


def check_yaml(path, args):
    try:
        import yaml
        import jsonschema
    except ImportError as e:
        print(f'{e.name}: not installed (python3-yaml and python3-jsonschema: make deps installs them)')
        sys.exit(2)
    problems = []
    try:
        doc = yaml.safe_load(open(path))
    except yaml.YAMLError as e:
        return [f'{path}: not YAML: {e}']
    schema = json.load(open(os.path.join(TOP, 'tests/data/slurm/topology-yaml.schema.json')))
    for e in jsonschema.Draft202012Validator(schema).iter_errors(doc):
        problems.append(f'{path}: {"/".join(map(str, e.absolute_path))}: {e.message}')
    if problems:
        return problems
    names = [t['topology'] for t in doc]
    if len(set(names)) != len(names):
        problems.append(f'{path}: topology names are not unique: {names}')
    for t in doc:
        where = f'{path}: topology {t["topology"]}'
        if next(iter(t)) != 'topology':
            problems.append(f'{where}: `topology` is not the first attribute')
        if 'tree' in t:
            sws = [s['switch'] for s in t['tree']['switches']]
            if len(set(sws)) != len(sws):
                problems.append(f'{where}: switch names are not unique')
            for s in t['tree']['switches']:
                if ('children' in s) == ('nodes' in s):
                    problems.append(f'{where}: switch {s["switch"]} needs exactly one of children, nodes')
        if 'block' in t:
            blocks = [(b['block'], expand(b.get('nodes', ''))) for b in t['block']['blocks']]
            problems += blocks_problems(blocks, where)
            problems += sizes_problems(t['block'].get('block_sizes', []), blocks, where)
    defaults = [t['topology'] for t in doc if t.get('cluster_default')]
    if not defaults:
        problems.append(f'{path}: no topology has cluster_default: true')
    if '--tree' in args:
        tree_file = args[args.index('--tree') + 1]
        sw, _, _ = parse_conf(tree_file)
        trees = [t for t in doc if 'tree' in t]
        got = {s['switch']: ('Nodes' if 'nodes' in s else 'Switches', sorted(expand(s.get('nodes') or s.get('children'))))
               for s in trees[0]['tree']['switches']} if trees else {}
        want = {n: (k, sorted(m)) for n, (k, m) in sw.items()}
        if got != want:
            diff = sorted(n for n in set(got) | set(want) if got.get(n) != want.get(n))[:4]
            problems.append(f'{path}: the tree differs from {tree_file} at switches {diff}')
    if '--block' in args:
        bfile = args[args.index('--block') + 1]
        want, wsizes, _ = parse_block(bfile)
        blk = [t for t in doc if 'block' in t]
        got = [(b['block'], expand(b.get('nodes', ''))) for b in blk[0]['block']['blocks']] if blk else []
        if got != want or (blk and blk[0]['block'].get('block_sizes') != wsizes):
            problems.append(f'{path}: the block topology differs from {bfile}')
    return problems


def check_weights(path, tree):
    problems, rows = [], []
    for no, line in enumerate(open(path), 1):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        m = re.match(r'^NodeName=(\S+) Weight=(\d+)$', line)
        if not m:
            problems.append(f'{path}:{no}: not NodeName=<host> Weight=<n>: {line}')
            continue
        rows.append((m.group(1), int(m.group(2))))
    weights = [w for _, w in rows]
    if sorted(weights) != list(range(1, len(rows) + 1)):
        problems.append(f'{path}: weights are not 1..{len(rows)}, each once')
    got = [h for h, _ in sorted(rows, key=lambda r: r[1])]
    order, sw = leaf_order(tree)
    want = [h for leaf in order for h in sorted(sw[leaf][1], key=natural_key)]
    if got != want:
        i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        problems.append(f'{path}: host {i + 1} by weight is {got[i] if i < len(got) else None}, expected '
                        f'{want[i] if i < len(want) else None} (fat-tree order of {tree})')
    return problems


def df_groups(topofile):
    """Groups of a dragonfly from the raw file: components of the local links, a link being local when
    it joins a leaf (a switch with hosts) and an upper switch (Dragonfly+: leaf to spine), or two leaves
    with a common neighbour switch (the routers of a group are linked all to all)."""
    from report_topo_check import parse_topofile
    adj, hosts = parse_topofile(topofile)
    leaf = {s: bool(hosts.get(s)) for s in adj}
    local = {s: {t for t in adj[s] if leaf[s] != leaf[t] or (leaf[s] and leaf[t] and adj[s] & adj[t])}
             for s in adj}
    comp, groups = {}, []
    for s in sorted(adj):
        if s in comp:
            continue
        stack, g = [s], set()
        comp[s] = len(groups)
        while stack:
            u = stack.pop()
            g.add(u)
            for v in local[u]:
                if v not in comp:
                    comp[v] = len(groups)
                    stack.append(v)
        groups.append(g)
    nglobal = sum(1 for s in adj for t in adj[s] if s < t and comp[s] != comp[t])
    return groups, hosts, nglobal


def check_dragonfly(tree, topofile, args):
    sw, guid, problems = parse_conf(tree)
    groups, hosts, nglobal = df_groups(topofile)
    want = sorted(sorted(h for s in g for h in hosts.get(s, ())) for g in groups)
    want = [w for w in want if w]
    listed = {c for k, m in sw.values() if k == 'Switches' for c in m}
    roots = [n for n in sw if n not in listed]
    if len(roots) != 1:
        return problems + [f'{tree}: {len(roots)} top switches, expected one above the groups']
    gsw = sw[roots[0]][1]
    got = sorted(sorted(set(hosts_below(sw, g))) for g in gsw if g in sw)
    if got != want:
        problems.append(f'{tree}: the group switches hold hosts {[x[:3] for x in got]}..., the fabric\'s groups '
                        f'{[x[:3] for x in want]}...')
    m = re.search(r'Dragonfly: (\d+) groups \(\w+\), (\d+) global links', open(tree).read())
    if not m or (int(m.group(1)), int(m.group(2))) != (len(groups), nglobal):
        problems.append(f'{tree}: the comment says {m.groups() if m else None} groups / global links, '
                        f'the fabric has {len(groups)} / {nglobal}')
    if '--slurm' in args:
        # scontrol: SwitchName=<s> Level=<k> LinkSpeed=.. Nodes=<every node below> [Switches=<children>]
        nodes, children, top = {}, {}, None
        for line in open(args[args.index('--slurm') + 1]):
            mm = re.match(r'^SwitchName=(\S+) Level=(\d+) .*Nodes=(\S+)(?: Switches=(\S+))?', line.strip())
            if mm:
                nodes[mm.group(1)] = sorted(set(expand(mm.group(3))))
                children[mm.group(1)] = expand(mm.group(4)) if mm.group(4) else []
                if top is None or int(mm.group(2)) > top[1]:
                    top = (mm.group(1), int(mm.group(2)))
        got = sorted(nodes.get(g, []) for g in children[top[0]]) if top else []
        if got != want:
            problems.append(f'Slurm\'s top switch {top} has {len(got)} switches below it holding the hosts '
                            f'{[x[:3] for x in got]}..., the fabric has {len(want)} groups')
    return problems


def check_slurm_blocks(path, bfile):
    """`scontrol show topology` of topology/block: BlockName=<b> BlockIndex=.. Nodes=<list> ..."""
    want, _, problems = parse_block(bfile)
    got = {}
    for line in open(path):
        m = re.match(r'^BlockName=(\S+) .*Nodes=(\S+)', line.strip())
        if m:
            got[m.group(1)] = sorted(expand(m.group(2)))
    for n, hosts in want:
        if got.get(n) != sorted(hosts):
            problems.append(f'Slurm reports block {n} with {got.get(n)}, the file gives {sorted(hosts)[:4]}...')
    return problems


def parse_fabric(path):
    """Switch adjacency and hosts per switch (by GUID) of an ibnetdiscover topology file or -p ports report."""
    from report_topo_check import parse_topofile, host_name
    text = open(path).read()
    if re.search(r'^Switch\s', text, re.M):
        return parse_topofile(path)
    adj, hosts = {}, {}
    for line in text.splitlines():
        m = re.match(r"^SW\s+\d+\s+\d+\s+0x([0-9a-f]+)\s.*?-\s+(SW|CA)\s+\d+\s+\d+\s+0x([0-9a-f]+)\s.*"
                     r"\(\s*'[^']*'\s+-\s+'([^']*)'\s*\)", line)
        if not m:
            continue
        s, kind, peer = int(m.group(1), 16), m.group(2), int(m.group(3), 16)
        for x in (s, peer) if kind == 'SW' else (s,):
            adj.setdefault(x, set())
            hosts.setdefault(x, set())
        if kind == 'SW':
            adj[s].add(peer)
            adj[peer].add(s)
        else:
            hosts[s].add(host_name(m.group(4), peer))
    return adj, hosts


def runs(order, member):
    """Runs of an order in which consecutive hosts share a set (greedy: a run lasts while the sets of its
    hosts still have one in common); member[h] is the set of sets host h is in."""
    n, cur = 0, set()
    for h in order:
        m = member.get(h, set())
        if cur & m:
            cur &= m
        else:
            n, cur = n + 1, set(m)
    return n


def check_fattree_order(path, fabric, args):
    """A fat-tree order (one host a line) against the raw fabric file, derived here: every named host once
    (or those of --keep FILE); the hosts of each leaf contiguous (single-homed hosts, or with --lowest-label
    each multi-rail host under the leaf of its HCA of the lowest label: as many runs as leaves;
    multi-homed: no more runs than --max-runs N); at each level k, the hosts below one component of
    the switches up to level k contiguous (the leaves under one spine are neighbours); with --groups the
    dragonfly groups of the file contiguous."""
    adj, hosts = parse_fabric(fabric)
    order = [l.strip() for l in open(path) if l.strip() and not l.startswith('#')]
    problems = []
    member = {}
    for s, hs in hosts.items():
        for h in hs:
            if not h.startswith('0x'):
                member.setdefault(h, set()).add(s)
    want = set(member)
    if '--lowest-label' in args:
        # multi-rail hosts under the leaf of their HCA with the lowest label (mlx5_0 before mlx5_1, ...)
        low, cur = {}, None
        for line in open(fabric):
            m = re.match(r'^Ca\s+\d+\s+"H-[0-9a-f]+"\s*#\s*"(\S+)\s+(\S+)"', line)
            if m:
                cur = (m.group(1), natural_key(m.group(2)))
                continue
            m = re.match(r'^\[\d+\](?:\([0-9a-f]+\))?\s+"S-([0-9a-f]+)"', line)
            if m and cur:
                h, lab = cur
                if h in member and (h not in low or lab < low[h][0]):
                    low[h] = (lab, int(m.group(1), 16))
                cur = None
        member = {h: {low[h][1]} if h in low else m for h, m in member.items()}
    if '--keep' in args:
        want &= {l.strip() for l in open(args[args.index('--keep') + 1]) if l.strip()}
        member = {h: m for h, m in member.items() if h in want}
    if len(order) != len(set(order)):
        problems.append(f'{path}: a host is listed twice')
    if set(order) != want:
        problems.append(f'{path}: hosts {sorted(set(order) ^ want)[:5]} differ from the fabric\'s')
    multi = any(len(m) > 1 for m in member.values())
    nleaves = len({s for m in member.values() for s in m})
    got = runs(order, member)
    limit = int(args[args.index('--max-runs') + 1]) if '--max-runs' in args else nleaves
    if (got != nleaves and not multi) or got > limit:
        problems.append(f'{path}: the order crosses leaves {got} times for {nleaves} leaves (a leaf\'s hosts '
                        'are not together)')
    from report_topo_check import switch_levels
    level = switch_levels(adj, list({s for m in member.values() for s in m}))
    for k in range(1, max(level.values(), default=0) + 1):
        comp = {}
        for s in sorted(x for x in level if level[x] <= k):
            if s in comp:
                continue
            comp[s], stack = s, [s]
            while stack:
                u = stack.pop()
                for v in adj[u]:
                    if v not in comp and level.get(v, k + 1) <= k and abs(level[v] - level[u]) == 1:
                        comp[v] = s
                        stack.append(v)
        cm = {h: {comp[s] for s in m} for h, m in member.items()}
        ncomp = len({c for m in cm.values() for c in m})
        if runs(order, cm) > max(ncomp, 1) and not multi:
            problems.append(f'{path}: the hosts below the {ncomp} level-{k} parts of the tree are not together '
                            f'({runs(order, cm)} runs)')
    if '--groups' in args:
        groups, _, _ = df_groups(fabric)
        gm = {h: {i for i, g in enumerate(groups) if m & g} for h, m in member.items()}
        ng = len({i for m in gm.values() for i in m})
        if runs(order, gm) != ng:
            problems.append(f'{path}: the {ng} dragonfly groups of {fabric} are not each together '
                            f'({runs(order, gm)} runs)')
    return problems


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    path = args[0]
    if mode == 'leaf-order':
        print('\n'.join(leaf_order(path)[0]))
        return 0
    if mode == 'block':
        blocks, _, problems = parse_block(path)
        if '--tree' in args:
            problems += against_tree(blocks, args[args.index('--tree') + 1], path, '--groups' in args)
    elif mode == 'yaml':
        problems = check_yaml(path, args)
    elif mode == 'weights':
        problems = check_weights(path, args[args.index('--tree') + 1])
    elif mode == 'dragonfly':
        problems = check_dragonfly(path, args[1], args)
    elif mode == 'fattree-order':
        problems = check_fattree_order(path, args[1], args)
    elif mode == 'slurm-blocks':
        problems = check_slurm_blocks(path, args[1])
    else:
        print(f'unknown mode {mode}')
        return 2
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
