#!/usr/bin/env python3
"""tests/integration/report_gen_fattree.py LEAVES HOSTS_PER_LEAF SPINES: prints an ibnetdiscover
topology file of a 2-level fat tree (every leaf linked once to every spine, 4x HDR everywhere, hosts
n00000.. in leaf order), for the reports' scale tests."""
import sys
L, P, S = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])  # leaves, hosts per leaf, spines
out = []
for s in range(S):
    out.append(f'switchguid=0x{0x50000+s:x}({0x50000+s:x})')
    out.append(f'Switch\t{L} "S-{0x50000+s:016x}"\t\t# "spine-{s:02d}" enhanced port 0 lid {1+s} lmc 0')
    for l in range(L):
        out.append(f'[{l+1}]\t"S-{0x10000+l:016x}"[{P+s+1}]\t\t# "leaf-{l:03d}" lid {100+l} 4xHDR')
    out.append('')
for l in range(L):
    out.append(f'switchguid=0x{0x10000+l:x}({0x10000+l:x})')
    out.append(f'Switch\t{P+S} "S-{0x10000+l:016x}"\t\t# "leaf-{l:03d}" base port 0 lid {100+l} lmc 0')
    for p in range(P):
        h = l * P + p
        out.append(f'[{p+1}]\t"H-{0x100000+h:016x}"[1]({0x100000+h:x}) \t\t# "n{h:05d} HCA-1" lid {1000+h} 4xHDR')
    for s in range(S):
        out.append(f'[{P+s+1}]\t"S-{0x50000+s:016x}"[{l+1}]\t\t# "spine-{s:02d}" lid {1+s} 4xHDR')
    out.append('')
for l in range(L):
    for p in range(P):
        h = l * P + p
        out.append(f'caguid=0x{0x100000+h:x}\nCa\t1 "H-{0x100000+h:016x}"\t\t# "n{h:05d} HCA-1"')
        out.append(f'[1]({0x100000+h:x}) \t"S-{0x10000+l:016x}"[{p+1}]\t\t# lid {1000+h} lmc 0 "leaf-{l:03d}" lid {100+l} 4xHDR')
        out.append('')
print('\n'.join(out))
