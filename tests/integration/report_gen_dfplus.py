#!/usr/bin/env python3
"""tests/integration/report_gen_dfplus.py G L H S: an InfiniBand Dragonfly+ as an ibnetdiscover topology
file on standard output: G groups, each L leaves of H hosts under S spines (every leaf cabled to every
spine of its group), spine s of each group cabled to spine s of every other group (S x G(G-1)/2 global
links). Hosts are d000, d001, ... leaf by leaf, group by group."""
import sys

G, L, H, S = (int(a) for a in sys.argv[1:5])
out = []


def guid(g, kind, i):
    return 0x500000 + g * 0x1000 + (0x800 if kind == 's' else 0) + i


def host(g, l, h):
    return (g * L + l) * H + h


for g in range(G):
    for l in range(L):
        x = guid(g, 'l', l)
        out += [f'switchguid=0x{x:x}({x:x})', f'Switch\t{H + S} "S-{x:016x}"\t\t# "dfp{g}-leaf{l}" base port 0 lid 1 lmc 0']
        for h in range(H):
            n = host(g, l, h)
            out.append(f'[{h + 1}]\t"H-{0x600000 + n:016x}"[1]({0x600000 + n:x}) \t\t# "d{n:03d} HCA-1" lid 9 4xNDR')
        for s in range(S):
            out.append(f'[{H + 1 + s}]\t"S-{guid(g, "s", s):016x}"[{1 + l}]\t\t# "dfp{g}-spine{s}" lid 2 4xNDR')
        out.append('')
    for s in range(S):
        x = guid(g, 's', s)
        out += [f'switchguid=0x{x:x}({x:x})', f'Switch\t{L + G - 1} "S-{x:016x}"\t\t# "dfp{g}-spine{s}" base port 0 lid 2 lmc 0']
        for l in range(L):
            out.append(f'[{1 + l}]\t"S-{guid(g, "l", l):016x}"[{H + 1 + s}]\t\t# "dfp{g}-leaf{l}" lid 1 4xNDR')
        others = [o for o in range(G) if o != g]
        for k, o in enumerate(others):
            port_there = L + 1 + [x for x in range(G) if x != o].index(g)
            out.append(f'[{L + 1 + k}]\t"S-{guid(o, "s", s):016x}"[{port_there}]\t\t# "dfp{o}-spine{s}" lid 2 4xNDR')
        out.append('')
for g in range(G):
    for l in range(L):
        for h in range(H):
            n = host(g, l, h)
            out += [f'Ca\t1 "H-{0x600000 + n:016x}"\t\t# "d{n:03d} HCA-1"',
                    f'[1]({0x600000 + n:x}) \t"S-{guid(g, "l", l):016x}"[{h + 1}]\t\t# lid 9 lmc 0 "dfp{g}-leaf{l}" lid 1 4xNDR', '']
print('\n'.join(out))
