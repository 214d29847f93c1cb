#!/usr/bin/env python3
"""tests/integration/report_topo_check.py: independent checks of a Slurm topology.conf.

  report_topo_check.py CONF --expected FILE      same switches with the same members (lists expanded)
  report_topo_check.py CONF --invariants [--hosts N] [--topofile IBNETDISCOVER_TOPOLOGY_FILE]
                        [--all-leaves]  (hosts may sit under several leaves; each leaf lists exactly
                                         the hosts cabled to it)
  report_topo_check.py CONF --list-hosts             the hosts of the leaves, one a line
  report_topo_check.py CONF --slurm-levels FILE      FILE (scontrol show topology) has every switch at
                                                     the level the tree implies, and no other switch

Invariants: every line is SwitchName=<name> with exactly one of Nodes= / Switches=; names use only
[A-Za-z0-9._-] and are unique; every listed switch is defined; the switch graph has no cycle; every
host is under exactly one leaf; no host is an HCA GUID (0x + 16 hex digits: Slurm knows no such
node); with --hosts, that many hosts. With --topofile, the tree is checked against the raw
ibnetdiscover topology file, parsed here independently of rankmap: each leaf's hosts are attached to
that switch, every named host of the file is listed and every GUID-only HCA is named in a comment,
each upper switch lists exactly the switches linked to it one level below (levels by BFS from the
switches with hosts), and a switch named ibsw<N> is the N-th switch of the file in GUID order.
Host lists are expanded here (Slurm syntax, own code). Prints one line per problem; exit 1 if any.
"""
import re
import sys
from collections import deque

NAME_RE = re.compile(r'^[A-Za-z0-9._-]+$')
GUID_RE = re.compile(r'^0x[0-9a-f]{16}$')


def split_top(s):
    out, depth, cur = [], 0, ''
    for ch in s:
        if ch == '[':
            depth += 1
        elif ch == ']':
            depth -= 1
        if ch == ',' and depth == 0:
            out.append(cur)
            cur = ''
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def expand(expr):
    names = []
    for part in split_top(expr):
        m = re.match(r'^(.*)\[([^\]]*)\](.*)$', part)
        if not m:
            names.append(part)
            continue
        pre, ranges, post = m.groups()
        for r in ranges.split(','):
            if '-' in r:
                lo, hi = r.split('-')
                w = len(lo) if lo.startswith('0') else 0
                for v in range(int(lo), int(hi) + 1):
                    names.append(f'{pre}{v:0{w}d}{post}')
            else:
                names.append(pre + r + post)
    return names


def parse_conf(path):
    sw, guid, problems, last_guid = {}, {}, [], None
    for no, line in enumerate(open(path), 1):
        line = line.strip()
        if line.startswith('#'):
            m = re.search(r' guid (0x[0-9a-f]{16}),', line)
            last_guid = int(m.group(1), 16) if m else None
            continue
        if not line:
            continue
        kv = dict(tok.split('=', 1) for tok in line.split())
        name = kv.get('SwitchName')
        if not name or len(kv) != 2 or (('Nodes' in kv) == ('Switches' in kv)):
            problems.append(f'{path}:{no}: not SwitchName=... with one of Nodes=/Switches=: {line}')
            continue
        if not NAME_RE.match(name):
            problems.append(f'{path}:{no}: switch name {name!r} is not valid for Slurm')
        if name in sw:
            problems.append(f'{path}:{no}: switch {name} defined twice')
        kind = 'Nodes' if 'Nodes' in kv else 'Switches'
        sw[name] = (kind, expand(kv[kind]))
        if last_guid is not None:
            guid[name] = last_guid
        last_guid = None
    return sw, guid, problems


def invariants(sw, nhosts, multi=False):
    problems, seen = [], {}
    for name, (kind, members) in sw.items():
        if kind == 'Nodes':
            for h in members:
                if GUID_RE.match(h):
                    problems.append(f'leaf {name} lists the HCA GUID {h} as a host')
                if h in seen and not multi:
                    problems.append(f'host {h} under two leaves: {seen[h]} and {name}')
                seen[h] = name
        else:
            for c in members:
                if c not in sw:
                    problems.append(f'switch {name} lists undefined switch {c}')
    state = {}

    def visit(n, stack):
        if state.get(n) == 1:
            problems.append(f'cycle through switch {n}')
            return
        if state.get(n) == 2 or n not in sw:
            return
        state[n] = 1
        if sw[n][0] == 'Switches':
            for c in sw[n][1]:
                visit(c, stack)
        state[n] = 2
    for n in sw:
        visit(n, [])
    if nhosts is not None and len(seen) != nhosts:
        problems.append(f'{len(seen)} hosts under leaves, expected {nhosts}')
    return problems, seen


GENERIC = ('mellanox', 'nvidia', 'connectx', 'connect-ib', 'infinihost', 'intel', 'qlogic', 'unknown',
           'localhost')


def host_name(desc, guid):
    w = desc.split()
    if not w or re.match(r'^MT\d', w[0]) or w[0].lower() in GENERIC:
        return f'0x{guid:016x}'
    return w[0]


def parse_topofile(path):
    """Switch adjacency (by GUID) and hosts per switch from an ibnetdiscover topology file."""
    adj, hosts, cur, cur_type = {}, {}, None, None
    for line in open(path):
        m = re.match(r'^(Switch|Ca)\s+\d+\s+"([SH])-([0-9a-f]+)"\s*#\s*"([^"]*)"', line)
        if m:
            cur_type, cur = m.group(1), int(m.group(3), 16)
            if cur_type == 'Switch':
                adj.setdefault(cur, set())
                hosts.setdefault(cur, set())
            continue
        m = re.match(r'^\[\d+\](?:\([0-9a-f]+\))?\s+"([SH])-([0-9a-f]+)"\[\d+\](?:\([0-9a-f]+\))?\s*#\s*"([^"]*)"',
                     line)
        if not m or cur_type != 'Switch':
            continue
        peer = int(m.group(2), 16)
        if m.group(1) == 'S':
            adj[cur].add(peer)
        elif 'Aggregation Node' not in m.group(3):
            hosts[cur].add(host_name(m.group(3), peer))
    return adj, hosts


def switch_levels(adj, leaves):
    """Level of each switch reached from the leaves: hops from the nearest leaf (breadth first)."""
    level, q = {s: 0 for s in leaves}, deque(leaves)
    while q:
        s = q.popleft()
        for t in adj[s]:
            if t not in level:
                level[t] = level[s] + 1
                q.append(t)
    return level


def check_topofile(sw, guid, seen, path, multi=False, conf=None):
    problems = []
    adj, hosts = parse_topofile(path)
    guid_only = {h for hs in hosts.values() for h in hs if GUID_RE.match(h)}
    comments = open(conf).read() if conf else ''
    for h in sorted(guid_only):
        if not re.search(rf'^#\s+{h} on ', comments, re.M):
            problems.append(f'GUID-only HCA {h} is not listed in a comment')
    rank = {g: i + 1 for i, g in enumerate(sorted(adj))}
    for name, g in guid.items():
        m = re.match(r'^ibsw(\d+)$', name)
        if m and rank.get(g) != int(m.group(1)):
            problems.append(f'switch {name} (0x{g:016x}) is switch {rank.get(g)} of the file in GUID order')
    level = switch_levels(adj, [s for s, h in hosts.items() if h])
    hosts = {g: {h for h in hs if h not in guid_only} for g, hs in hosts.items()}
    name_of = {g: n for n, g in guid.items()}
    all_hosts = set().union(*hosts.values()) if hosts else set()
    missing = all_hosts - set(seen)
    if missing:
        problems.append(f'{len(missing)} hosts of {path} not listed, e.g. {sorted(missing)[:3]}')
    for g, h in hosts.items():
        if g not in name_of and h and level.get(g) == 0 and not h <= set(seen):
            problems.append(f'leaf 0x{g:016x} left out although hosts {sorted(h - set(seen))[:3]} are nowhere else')
    for name, (kind, members) in sw.items():
        g = guid.get(name)
        if g not in adj:
            problems.append(f'switch {name}: no GUID comment matching a switch of {path}')
            continue
        if kind == 'Nodes':
            stray = set(members) - hosts[g]
            if stray:
                problems.append(f'leaf {name} lists hosts not attached to it: {sorted(stray)[:3]}')
            if multi and set(members) != hosts[g]:
                problems.append(f'leaf {name} lists {len(members)} hosts, {len(hosts[g])} are cabled to it')
        else:
            # switches left out must be ones whose hosts are all listed under other leaves
            want = {name_of[t] for t in adj[g] if level.get(t) == level[g] - 1 and t in name_of}
            if set(members) != want:
                problems.append(f'switch {name} lists {sorted(members)}, the file links it to {sorted(want)} '
                                'one level below')
    return problems


def check_slurm_levels(sw, path):
    """Compares `scontrol show topology` output with the levels the file implies."""
    level, problems = {}, []

    def lev(n):
        if n not in level:
            kind, members = sw[n]
            level[n] = 0 if kind == 'Nodes' else 1 + max(lev(c) for c in members)
        return level[n]
    got = {}
    for line in open(path):
        m = re.match(r'^SwitchName=(\S+) Level=(\d+)', line.strip())
        if m:
            got[m.group(1)] = int(m.group(2))
    for n in sw:
        if got.get(n) != lev(n):
            problems.append(f'Slurm reports switch {n} at level {got.get(n)}, expected {lev(n)}')
    for n in set(got) - set(sw):
        problems.append(f'Slurm reports a switch {n} not in the file')
    for p in problems:
        print(p)
    return 1 if problems else 0


def main():
    args = sys.argv[1:]
    conf = args.pop(0)
    sw, guid, problems = parse_conf(conf)
    if '--list-hosts' in args:
        listed = {}
        for kind, members in sw.values():
            if kind == 'Nodes':
                listed.update((m, None) for m in members)
        print('\n'.join(listed))
        return 0
    if '--slurm-levels' in args:
        return check_slurm_levels(sw, args[args.index('--slurm-levels') + 1])
    if '--expected' in args:
        exp, _, p2 = parse_conf(args[args.index('--expected') + 1])
        problems += p2
        got = {n: (k, sorted(m)) for n, (k, m) in sw.items()}
        want = {n: (k, sorted(m)) for n, (k, m) in exp.items()}
        for n in sorted(set(got) | set(want)):
            if got.get(n) != want.get(n):
                problems.append(f'switch {n}: got {got.get(n)}, expected {want.get(n)}')
    if '--invariants' in args:
        nh = int(args[args.index('--hosts') + 1]) if '--hosts' in args else None
        multi = '--all-leaves' in args
        p2, seen = invariants(sw, nh, multi)
        problems += p2
        if '--topofile' in args:
            problems += check_topofile(sw, guid, seen, args[args.index('--topofile') + 1], multi, conf)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
