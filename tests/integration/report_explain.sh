#!/bin/sh
# tests/integration/report_explain.sh: `rankmapctl explain`, traffic per level before and after
# reordering. Expected amounts are derived by hand in the pattern files' comments and below.
. "$(dirname "$0")/../lib.sh"

R=$BIN/rankmapctl
T=$(mktmp) || exit 1
trap 'rm -rf "$T"' EXIT
P=$DATA/reports/explain-levels.mtx
CL=$DATA/example/cluster.conf
H='fourmi[001-002,017]'

# field JSON PATH: one number out of the JSON object (python3 reads it, not our code).
field() { python3 -c "import json,sys; o=json.load(open(sys.argv[1])); e=sys.argv[2].split(':'); v=eval('o' + e[0]); print(format(v, e[1]) if len(e) > 1 else v)" "$1" "$2"; }

"$R" explain --pattern "$P" --cluster "$CL" --hosts "$H" --perm "$DATA/reports/explain-swap.perm" --json >"$T/swap.json"
expect "explain --perm --json runs" test -s "$T/swap.json"
# identity: 1 inside a socket, 10 across sockets, 100 across nodes under one leaf, 1000 above the leaves
for c in "socket 1" "node 10" "leaf 100" "above 1000"; do
	set -- $c
	expect "before: $1 carries $2" test "$(field "$T/swap.json" "['classes']['$1']['before']")" = "$2.0"
done
# the permutation swaps ranks 2 and 16: the 1000 between ranks 0 and 16 now stays in rank 0's socket
for c in "socket 1001" "node 10" "leaf 100" "above 0"; do
	set -- $c
	expect "after the swap: $1 carries $2" test "$(field "$T/swap.json" "['classes']['$1']['after']")" = "$2.0"
done
expect "percentages: 1000 of 1111 above the leaves is 90.0%" \
	test "$(field "$T/swap.json" "['classes']['above']['before_percent']:.1f")" = "90.0"

"$R" explain --pattern "$P" --cluster "$CL" --hosts "$H" --perm "$DATA/reports/explain-swap.perm" >"$T/swap.txt"
expect "text: the leaf row shows 100 before and after" \
	grep -Eq "under one leaf switch, across nodes +100 +9\.0% +100 +9\.0%" "$T/swap.txt"
expect "text: the above row shows 1000 before, 0 after" \
	grep -Eq "above the leaf switches \(spines and up\) +1000 +90\.0% +0 +0\.0%" "$T/swap.txt"
# text and JSON agree on every level row
check_rows() {
	python3 - "$T/swap.json" "$T/swap.txt" <<'EOP'
import json, re, sys
o = json.load(open(sys.argv[1]))
rows = {}
for line in open(sys.argv[2]):
    m = re.match(r'^\s+(\S+)\s+(\S+)\s+([\d.e+]+)\s+[\d.]+%\s+([\d.e+]+)\s+[\d.]+%$', line)
    if m and m.group(1) != 'LEVEL':
        rows[m.group(1)] = (float(m.group(3)), float(m.group(4)))
bad = [l['level'] for l in o['levels'] if rows.get(l['level']) != (l['before'], l['after'])]
print('mismatch', bad) if bad else None
sys.exit(1 if bad or len(rows) != len(o['levels']) else 0)
EOP
}
expect "text and JSON give the same numbers per level" check_rows

# ring of 8 ranks (weight 5 per pair) on tleaf 2 2 10 4 1: identity puts 2 pairs across the halves
# (3-4, 7-0): 10 at the root, 30 inside; interleaving (rank i -> slot (i%2)*4 + i/2) puts all 40 across.
printf '%s\n' 0 4 1 5 2 6 3 7 >"$T/inter.perm"
"$R" explain --pattern "$DATA/patterns/ring8.mtx" --topology 'tleaf 2 2 10 4 1' --perm "$T/inter.perm" --json >"$T/ring.json"
expect "tleaf: root before 10" test "$(field "$T/ring.json" "['levels'][0]['before']")" = "10.0"
expect "tleaf: root after 40" test "$(field "$T/ring.json" "['levels'][0]['after']")" = "40.0"
expect "tleaf: no classes (levels without kind)" test "$(field "$T/ring.json" "['classes'].__len__()")" = "0"
"$R" explain --pattern "$DATA/patterns/ring8.mtx" --topology 'tleaf 2 2 10 4 1' --algo scotch --json >"$T/scotch.json"
expect "--algo scotch never sends more across the root than identity" \
	python3 -c "import json; o=json.load(open('$T/scotch.json')); exit(0 if o['levels'][0]['after'] <= 10 else 1)"

# errors
expect_fail "--perm with the wrong rank count is refused" "$R" explain --pattern "$P" --cluster "$CL" --hosts "$H" --perm "$T/inter.perm"
expect "... naming the file" sh -c "'$R' explain --pattern '$P' --cluster '$CL' --hosts '$H' --perm '$T/inter.perm' 2>&1 | grep -q inter.perm"
printf '%s\n' 0 0 1 2 3 4 5 6 >"$T/dup.perm"
expect_fail "--perm with a repeated slot is refused" "$R" explain --pattern "$DATA/patterns/ring8.mtx" --topology 'tleaf 2 2 10 4 1' --perm "$T/dup.perm"
expect_fail "unknown host is refused" "$R" explain --pattern "$P" --cluster "$CL" --hosts 'nosuch[1-3]'
expect_fail "--cluster without --hosts is a usage error" "$R" explain --pattern "$P" --cluster "$CL"
expect_fail "more ranks than slots is refused" "$R" explain --pattern "$P" --topology 'tleaf 1 8 1'
expect_fail "a bad pattern is refused" "$R" explain --pattern "$DATA/bad/patterns/bad-nan.mtx" --topology 'tleaf 1 8 1'

# --cart as in map: an 8x4 periodic halo exchange has 2 x 32 = 64 neighbour pairs; with weights 10,1
# the 32 pairs along the first dimension weigh 10: 32 x 10 + 32 = 352 (counted here, not by rankmap)
cart_total() { "$R" explain --cart "$1" --topology 'tleaf 2 4 10 8 1' --json |
	python3 -c "import json, sys; r = json.load(sys.stdin); sys.exit(not (r['ranks'] == 32 and r['total'] == $2))"; }
expect "--cart 8x4: 32 ranks, 64 pairs" cart_total 8x4 64
expect "--cart 8x4:1,1:10,1: total 352" cart_total 8x4:1,1:10,1 352
expect_fail "--pattern and --cart together: usage error" "$R" explain --pattern "$P" --cart 8x4 --topology 'tleaf 1 32 1'
expect_fail "a bad --cart spec is refused" "$R" explain --cart 8xq --topology 'tleaf 1 32 1'
finish
