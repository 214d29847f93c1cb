#!/usr/bin/env python3
"""tests/integration/slurm_block_check.py: Slurm topology/block files (topology.conf(5), topology/block),
parsed and checked here independently of rankmap.

  slurm_block_check.py from-tree TREE         writes (stdout) the block file the documented rules give for a
                                              topology/tree file: one block per leaf switch (its Nodes=),
                                              in the file's order; BlockSizes= the smallest block's node
                                              count, then each twice the one before, up to the largest
                                              power of two of blocks
  slurm_block_check.py check BLOCKS TREE      BLOCKS has one BlockName= line per leaf of TREE with exactly
                                              its hosts, no host twice, names valid for Slurm, and a
                                              BlockSizes= line that follows the rules above (Slurm's: every
                                              block has at least the base size of nodes; each size a
                                              power of two times the one before)
  slurm_block_check.py slurm BLOCKS SHOW      SHOW (`scontrol show topology` of a slurmctld that loaded
                                              BLOCKS) lists every block of BLOCKS with its nodes, and no
                                              base block that is not in BLOCKS

Host lists are expanded with report_topo_check.py's own code. Prints one line per problem; exit 1 if any.
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_topo_check import NAME_RE, expand, parse_conf  # noqa: E402


def parse_blocks(path):
    blocks, sizes, problems = [], None, []
    for no, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        try:
            kv = dict(tok.split('=', 1) for tok in line.split())
        except ValueError:
            problems.append(f'{path}:{no}: not NAME=VALUE words: {line}')
            continue
        if 'BlockSizes' in kv:
            if len(kv) != 1 or sizes is not None:
                problems.append(f'{path}:{no}: BlockSizes= alone, once: {line}')
                continue
            sizes = [int(v) for v in kv['BlockSizes'].split(',')]
        elif set(kv) == {'BlockName', 'Nodes'}:
            blocks.append((kv['BlockName'], expand(kv['Nodes']), no))
        else:
            problems.append(f'{path}:{no}: neither BlockName=... Nodes=... nor BlockSizes=...: {line}')
    return blocks, sizes, problems


def rule_sizes(counts):
    """The BlockSizes the documented rules give for blocks of these node counts."""
    if not counts:
        return []
    sizes, k = [min(counts)], 2
    while k <= len(counts):
        sizes.append(sizes[-1] * 2)
        k *= 2
    return sizes


def leaves(tree):
    sw, _, problems = parse_conf(tree)
    return [(n, m) for n, (kind, m) in sw.items() if kind == 'Nodes'], problems


def from_tree(tree):
    lv, problems = leaves(tree)
    if problems:
        print('\n'.join(problems), file=sys.stderr)
        return 1
    print('# blocks: the leaf switches of ' + os.path.basename(tree))
    for name, _ in lv:
        nodes = [l for l in open(tree) if l.startswith(f'SwitchName={name} ')][0].split('Nodes=')[1].split()[0]
        print(f'BlockName={name} Nodes={nodes}')
    print('BlockSizes=' + ','.join(str(s) for s in rule_sizes([len(m) for _, m in lv])))
    return 0


def check(path, tree):
    blocks, sizes, problems = parse_blocks(path)
    lv, p2 = leaves(tree)
    problems += p2
    want = {n: sorted(m) for n, m in lv}
    seen = {}
    for name, nodes, no in blocks:
        if not NAME_RE.match(name):
            problems.append(f'{path}:{no}: block name {name!r} is not valid for Slurm')
        if name not in want:
            problems.append(f'{path}:{no}: block {name} is no leaf switch of {tree}')
        elif sorted(nodes) != want[name]:
            problems.append(f'{path}:{no}: block {name} has {len(nodes)} nodes, its leaf {len(want[name])} (or others)')
        for h in nodes:
            if h in seen:
                problems.append(f'{path}:{no}: node {h} in block {name} and in block {seen[h]}')
            seen[h] = name
    for n in set(want) - {b[0] for b in blocks}:
        problems.append(f'{path}: leaf {n} of {tree} is no block')
    if sizes is None:
        problems.append(f'{path}: no BlockSizes= line')
    else:
        counts = [len(b[1]) for b in blocks]
        if sizes != rule_sizes(counts):
            problems.append(f'{path}: BlockSizes={sizes}, the rules give {rule_sizes(counts)}')
        if counts and min(counts) < sizes[0]:
            problems.append(f'{path}: a block of {min(counts)} nodes, below the base block size {sizes[0]}')
        for a, b in zip(sizes, sizes[1:]):
            if b <= a or b % a or (b // a) & (b // a - 1):
                problems.append(f'{path}: BlockSizes {a} then {b}: not a power of two larger')
    for p in problems:
        print(p)
    return 1 if problems else 0


def slurm(path, show):
    blocks, _, problems = parse_blocks(path)
    got = {}
    for line in open(show):
        kv = dict(tok.split('=', 1) for tok in line.split() if '=' in tok)
        if 'BlockName' in kv and 'Nodes' in kv:
            got[kv['BlockName']] = sorted(expand(kv['Nodes']))
    if not got:
        problems.append(f'{show}: no BlockName= line (is topology/block loaded?)')
    names = {b[0] for b in blocks}
    for name, nodes, _ in blocks:
        if name not in got:
            problems.append(f'Slurm lists no block {name}')
        elif got[name] != sorted(nodes):
            problems.append(f'Slurm lists block {name} with {",".join(got[name])}, the file {",".join(sorted(nodes))}')
    # higher-level blocks Slurm forms itself are named after the base blocks they join
    for n in set(got) - names:
        if not any(n.startswith(b) for b in names):
            problems.append(f'Slurm lists a block {n} not in the file')
    for p in problems:
        print(p)
    return 1 if problems else 0


def main():
    a = sys.argv[1:]
    if len(a) == 2 and a[0] == 'from-tree':
        return from_tree(a[1])
    if len(a) == 3 and a[0] == 'check':
        return check(a[1], a[2])
    if len(a) == 3 and a[0] == 'slurm':
        return slurm(a[1], a[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main())
