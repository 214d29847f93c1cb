#!/bin/sh
# tests/integration/report_rails.sh: rails and dragonfly groups in `rankmapctl report` (JSON and text)
# and `rankmapctl explain`, site fabric files and the cluster file's rail lines. Expected figures are
# derived here from the data files with python (leaf names IBLEAF-RR-PP of the NDR capture, switch
# names df-gG-swS of the generated dragonfly), never from rankmapctl's output.
. "$(dirname "$0")/../lib.sh"

R=$BIN/rankmapctl
CHK="python3 $TOP/tests/integration/report_text_check.py"
NDR=$DATA/ib/ndr-fattree-582ca.ibnetdiscover
DF=$DATA/ib/df-5x4x4.topo
T=$(mktmp) || exit 1
trap 'rm -rf "$T"' EXIT

expect "ndr: report --json runs" sh -c "'$R' report --ib '$NDR' --json >'$T/ndr.json'"
expect "ndr: report text runs" sh -c "'$R' report --ib '$NDR' >'$T/ndr.txt'"
expect "ndr: the text shows the JSON's numbers (rails too)" $CHK "$T/ndr.json" "$T/ndr.txt"
# per IBLEAF-RR: the HCA ports cabled to those leaves (SHARP aggregation nodes are no HCA); 4 RR
# values; each host has at most one port per rail (hosts == ports)
expect "ndr: 4 rails, HCA ports per rail as the leaves' names say" python3 -c "
import json, re, sys
ports, sw = {}, None
for line in open(sys.argv[1]):
    m = re.match(r'^Switch\s.*# \"([^\"]*)\"', line)
    if m:
        sw = re.search(r'IBLEAF-(\d+)-', m.group(1))
        continue
    if sw and re.match(r'^\[\d+\]\s+\"H-', line) and 'Aggregation Node' not in line:
        ports[sw.group(1)] = ports.get(sw.group(1), 0) + 1
rails = json.load(open(sys.argv[2]))['fabric']['rails']
got = sorted(e['hca_ports'] for e in rails)
ok = len(ports) == 4 and sorted(ports.values()) == got and all(e['hosts'] == e['hca_ports'] for e in rails)
sys.exit(0 if ok else print(sorted(ports.values()), got) or 1)" "$NDR" "$T/ndr.json"

expect "df: report --json runs" sh -c "'$R' report --ib '$DF' --json >'$T/df.json'"
expect "df: report text runs" sh -c "'$R' report --ib '$DF' >'$T/df.txt'"
expect "df: the text shows the JSON's numbers (groups, pairs)" $CHK "$T/df.json" "$T/df.txt"
# groups from the switch names; global links: cables between switches of two groups (each seen twice)
expect "df: 5 groups, 10 global links, one per pair, as the switch names say" python3 -c "
import json, re, sys
g, cur, glob, pairs = {}, None, 0, {}
text = open(sys.argv[1]).read()
for m in re.finditer(r'^Switch\s.*\"S-([0-9a-f]+)\"\s+# \"df-g(\d+)-', text, re.M):
    g[m.group(1)] = m.group(2)
for line in text.splitlines():
    m = re.match(r'^Switch\s.*\"S-([0-9a-f]+)\"', line)
    if m:
        cur = m.group(1)
        continue
    m = re.match(r'^\[\d+\]\s+\"S-([0-9a-f]+)\"', line)
    if m and g[cur] != g[m.group(1)]:
        glob += 1
        k = tuple(sorted((g[cur], g[m.group(1)])))
        pairs[k] = pairs.get(k, 0) + 1
d = json.load(open(sys.argv[2]))['fabric']['dragonfly']
want = (len(set(g.values())), glob // 2, len(pairs), sorted(set(pairs.values())))
got = (d['groups'], d['global_links'], len(d['global_links_per_pair']), sorted({e['links'] * 2 for e in d['global_links_per_pair']}))
sys.exit(0 if want == got else print(want, got) or 1)" "$DF" "$T/df.json"
# the pictures' headlines name the rails and the groups; the pictures stay well formed
expect "ndr: report --svg runs" sh -c "'$R' report --ib '$NDR' --svg '$T/ndr.svg' >/dev/null"
expect "df: report --svg runs" sh -c "'$R' report --ib '$DF' --svg '$T/df.svg' >/dev/null"
expect "ndr: the picture's headline says 4 rails" grep -q 'class="headline"[^<]*, 4 rails<' "$T/ndr.svg"
expect "df: the picture's headline says 5 groups, 10 global links" grep -q 'class="headline"[^<]*5 dragonfly groups, 10 global links<' "$T/df.svg"
expect "df: the picture's text stays in its boxes" python3 "$TOP/tests/integration/report_svg_check.py" svg "$T/df.svg" --in-boxes
expect "ndr: a fat tree shows no dragonfly groups" python3 -c "
import json, sys; sys.exit(json.load(open(sys.argv[1]))['fabric']['dragonfly'] is not None)" "$T/ndr.json"

# InfiniBand Dragonfly+ (written here): 3 groups, each 2 leaves (2 hosts each) under 2 spines; spine s
# of every group is cabled to spine s of every other group: 3 pairs x 2 = 6 global links
python3 - "$T/dfplus.topo" <<'EOP'
import sys
G, out = 3, []
def sw(g, kind, i): return 0x300000 + g * 0x100 + (0x10 if kind == 's' else 0) + i
for g in range(G):
    for l in range(2):
        out.append(f'switchguid=0x{sw(g,"l",l):x}({sw(g,"l",l):x})')
        out.append(f'Switch\t4 "S-{sw(g,"l",l):016x}"\t\t# "dfp-g{g}-leaf{l}" base port 0 lid 1 lmc 0')
        for h in range(2):
            n = (g * 2 + l) * 2 + h
            out.append(f'[{h+1}]\t"H-{0x400000+n:016x}"[1]({0x400000+n:x}) \t\t# "p{n:02d} HCA-1" lid 5 4xNDR')
        for s in range(2):
            out.append(f'[{3+s}]\t"S-{sw(g,"s",s):016x}"[{1+l}]\t\t# "dfp-g{g}-spine{s}" lid 2 4xNDR')
        out.append('')
    for s in range(2):
        out.append(f'switchguid=0x{sw(g,"s",s):x}({sw(g,"s",s):x})')
        out.append(f'Switch\t4 "S-{sw(g,"s",s):016x}"\t\t# "dfp-g{g}-spine{s}" base port 0 lid 2 lmc 0')
        for l in range(2):
            out.append(f'[{1+l}]\t"S-{sw(g,"l",l):016x}"[{3+s}]\t\t# "dfp-g{g}-leaf{l}" lid 1 4xNDR')
        p = 3
        for o in range(G):
            if o != g:
                # port on the other spine: 3 for the lower-numbered other group, 4 for the higher
                op = 3 + sorted(x for x in range(G) if x != o).index(g)
                out.append(f'[{p}]\t"S-{sw(o,"s",s):016x}"[{op}]\t\t# "dfp-g{o}-spine{s}" lid 2 4xNDR')
                p += 1
        out.append('')
for g in range(G):
    for l in range(2):
        for h in range(2):
            n = (g * 2 + l) * 2 + h
            out.append(f'Ca\t1 "H-{0x400000+n:016x}"\t\t# "p{n:02d} HCA-1"')
            out.append(f'[1]({0x400000+n:x}) \t"S-{sw(g,"l",l):016x}"[{h+1}]\t\t# lid 5 lmc 0 "dfp-g{g}-leaf{l}" lid 1 4xNDR')
            out.append('')
open(sys.argv[1], 'w').write('\n'.join(out) + '\n')
EOP
expect "Dragonfly+: report --json runs" sh -c "'$R' report --ib '$T/dfplus.topo' --json >'$T/dfplus.json'"
expect "Dragonfly+: 3 groups of 4 switches and 4 hosts, 6 global links, 2 per pair" python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))['fabric']['dragonfly']
ok = d and d['groups'] == 3 and d['global_links'] == 6 and [e['links'] for e in d['global_links_per_pair']] == [2, 2, 2]
ok = ok and all(e['switches'] == 4 and e['hosts'] == 4 for e in d['group_list'])
sys.exit(0 if ok else print(d) or 1)" "$T/dfplus.json"

# explain on the dragonfly: hosts n000-n015 are group 0 (df-g0-*), n016-n031 group 1
cat >"$T/df.conf" <<EOC
hwloc = synthetic:pack:1 core:4 pu:1@n[000-079]
ib = $DF
EOC
expect "explain: one group, no global traffic" sh -c "'$R' explain --cart 8x8:1,1 --cluster '$T/df.conf' --hosts 'n[000-015]' --json >'$T/ex1.json'"
expect "explain: two groups" sh -c "'$R' explain --cart 8x8:1,1 --cluster '$T/df.conf' --hosts 'n[000-003],n[016-019],n[004-007],n[020-023]' --json >'$T/ex2.json'"
expect "explain: classes leaf, group, global (no 'above'), global 0 inside one group, > 0 across, not more after" python3 -c "
import json, sys
a, b = (json.load(open(p))['classes'] for p in sys.argv[1:3])
ok = set(a) == {'socket', 'node', 'leaf', 'group', 'global'} and a['global']['before'] == 0 and a['group']['before'] > 0
ok = ok and b['global']['before'] > 0 and b['global']['after'] <= b['global']['before']
sys.exit(0 if ok else print(a, b) or 1)" "$T/ex1.json" "$T/ex2.json"
expect "explain: the text names the classes" sh -c "'$R' explain --cart 8x8:1,1 --cluster '$T/df.conf' --hosts 'n[000-031]' | grep -q 'across a global link between groups'"
expect "explain: a fat tree keeps its 'above' class" sh -c "'$R' explain --cart 4x4:1,1 --cluster '$DATA/example/cluster.conf' --hosts 'fourmi[001-002,017]' --json | python3 -c 'import json,sys; sys.exit(\"above\" not in json.load(sys.stdin)[\"classes\"])'"

# site fabric file: two groups, errors name file and line
cat >"$T/site.fabric" <<EOS
# two groups of two switches (Slingshot-like), one pair of parallel global cables
switch e0 group east
switch e1 group east
switch w0 group west
switch w1 group west
link e0 e1 rate 4xHDR
link w0 w1 rate 4xHDR
link e1 w0 rate 4xHDR count 2
host x0 switch e0 rate 4xHDR
host x1 switch w1 rate 4xHDR
EOS
expect "site file: 2 groups, 2 global links, source 'site file'" sh -c "'$R' report --ib '$T/site.fabric' --json | python3 -c '
import json,sys; d=json.load(sys.stdin)[\"fabric\"][\"dragonfly\"]; sys.exit(not (d[\"groups\"] == 2 and d[\"global_links\"] == 2 and d[\"source\"] == \"site file\"))'"
printf 'switch a\nlink a b\n' >"$T/bad.fabric"
expect_fail "site file: unknown switch refused" "$R" report --ib "$T/bad.fabric"
expect "site file: the error names file and line" sh -c "'$R' report --ib '$T/bad.fabric' 2>&1 | grep -q '$T/bad.fabric:2: unknown switch .b.'"

# cluster file rail lines: one HCA moved to rail 5 gives 6 rails; a bad line names file and line
g=$(grep -m1 'a08-p1-dgx-04-c01 mlx5_0' "$NDR" | sed -n 's/.*"H-\([0-9a-f]*\)".*/\1/p')
printf 'ib = %s\nrail = 0x%s 5\n' "$NDR" "$g" >"$T/rail.conf"
expect "rail line: the HCA $g moves to rail 5 (6 rails)" sh -c "'$R' report --cluster '$T/rail.conf' --json | python3 -c '
import json,sys; r=json.load(sys.stdin)[\"fabric\"][\"rails\"]; sys.exit(not (len(r) == 6 and r[5][\"hca_ports\"] == 1))'"
printf 'ib = %s\nrail = 0x%s\n' "$NDR" "$g" >"$T/badrail.conf"
expect "rail line: a missing rail number names file and line" sh -c "'$R' report --cluster '$T/badrail.conf' 2>&1 | grep -q 'badrail.conf:2: rail: expected'"
finish
