#!/bin/sh
# tests/integration/json_schema.sh: every JSON document of rankmapctl (--json of report, distance, map,
# explain, simulate, patterns list/show offline and through rankmapd, ping, register, reload) and every
# kind of rankmapd answer (one request of each type, two patterns stored as the MPI library stores them,
# over the Unix socket, and failures) is valid against daemon/rankmap.schema.json (python3's
# jsonschema, Draft 2020-12), carries schema_version 1, writes its reals in their shortest round-trip form,
# its hop histograms in increasing order, and (rankmapctl) is indented as every other --json.
# The checker is first shown to refuse what the issue found (9.9399999999999995, unordered keys).
. "$(dirname "$0")/../lib.sh"

R=$BIN/rankmapctl
SCHEMA=$TOP/daemon/rankmap.schema.json
CHK="python3 $TOP/tests/integration/json_schema_check.py $SCHEMA"
T=$(mktmp) || exit 1
rankmapd_cleanup "$T"
EX=$DATA/example/cluster.conf

if ! python3 -c 'import jsonschema' 2>/dev/null; then
	notok "python3-jsonschema is required (make deps installs it)"
	finish
	exit 1
fi
expect "the schema is valid JSON Schema and the checker runs" sh -c "$CHK file report /dev/null | grep 'not JSON' >/dev/null"
# the checker can fail: a report with the defects of issue 28
"$R" report --ib "$DATA/ib/small-2level.topo" --json >"$T/good.json"
python3 - "$T/good.json" "$T/bad.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r['hop_histogram'] = {str(e['hops']): e['pairs'] for e in r['hop_histogram']}  # an object, unordered
r['anomalies'][0] = {'kind': r['anomalies'][0]['kind'], 'text': 'x'}          # text only
text = json.dumps(r, indent=2).replace('"schema_version": 1,', '"schema_version": 1, "x": 9.9399999999999995,')
open(sys.argv[2], 'w').write(text)
PY
$CHK file report "$T/bad.json" >"$T/bad.out"
expect_fail "... a report with an unordered histogram, text-only anomalies and a 17-digit real is refused" \
	grep -q ' 0 problems' "$T/bad.out"
expect "... naming the 17-digit real" grep -q '9.9399999999999995 is not the shortest' "$T/bad.out"

# ---- rankmapctl, offline ------------------------------------------------------------------------
n=0
out() { n=$((n + 1)); f="$T/$1.$n.json"; shift; "$R" "$@" >"$f" 2>>"$T/stderr"; echo "$f"; }
reports="$(out report report --cluster "$EX" --json) $(out report report --torus "$DATA/torus/xe6.conf" --json)
 $(out report report --ib-cache "$DATA/ib/ibsim-fattree.cache" --json)
 $(out report report --ib "$DATA/ib/ndr-fattree-582ca.ibnetdiscover" --json)
 $(out report report --ib "$DATA/ib/subnet-a.topo" --ib "$DATA/ib/subnet-c.topo" --json)
 $(out report report --hwloc "$DATA/hwloc-v1-diffs" --json)"
# shellcheck disable=SC2086
expect "report --json (example cluster, torus, libibnetdisc cache, NDR, two unconnected subnets, hwloc only)" $CHK file report $reports
distances="$(out distance distance --cluster "$EX" --json fourmi001 fourmi017)
 $(out distance distance --cluster "$EX" --json fourmi001 riri)
 $(out distance distance --hwloc "$DATA/daemon/hwloc" --json bonobo001 bonobo002)
 $(out distance distance --ib "$DATA/ib/subnet-a.topo" --ib "$DATA/ib/subnet-c.topo" --json n1 m1)"
# shellcheck disable=SC2086
expect "distance --json offline (connected, no HCA, no fabric, no subnet joins them)" $CHK file distance $distances
maps="$(out map map --cart 4x2 --topology 'tleaf 2 2 10 4 1' --json)
 $(out map map --pattern "$DATA/patterns/ring8.mtx" --cluster "$EX" --hosts 'fourmi[001-002]' --json)"
# shellcheck disable=SC2086
expect "map --json offline" $CHK file map $maps
expect "explain --json" $CHK file explain "$(out explain explain --pattern "$DATA/patterns/ring8.mtx" --topology 'tleaf 2 2 10 4 1' --json)"
expect "simulate --json" $CHK file simulate "$(out simulate simulate --dims 4x4x4 --jobs 50 --json)"
mkdir -p "$T/learn"
expect "patterns list --json (no pattern learned)" $CHK file patterns_list "$(out patterns patterns list --dir "$T/learn" --json)"

# ---- through rankmapd ------------------------------------------------------------------------------
printf 'cluster = %s\n' "$EX" >"$T/rankmapd.conf"
expect "rankmapd is up" start_rankmapd "$T/rankmapd.conf" "$T/sock" "$T/d.log" --state-dir "$T/state"
S="--socket $T/sock"
# shellcheck disable=SC2086
{
	expect "ping --json" $CHK file ctl_ping "$(out ping ping $S --json)"
	expect "register --json" $CHK file ctl_register "$(out register register $S --json --xml "$DATA/daemon/hwloc/bonobo001.xml" --host zaza --force)"
	expect "reload --json" $CHK file ctl_reload "$(out reload reload $S --json)"
	expect "report --json through rankmapd" $CHK file report "$(out report report $S --json)"
	expect "map --json through rankmapd" $CHK file map "$(out map map $S --cart 4x2 --hosts fourmi001 --json)"
	expect "distance --json through rankmapd (connected, and riri with no HCA)" \
		$CHK file response_distance "$(out distance distance $S --json fourmi001 fourmi017)" \
		"$(out distance distance $S --json fourmi001 riri)"
}
# Two learned patterns (a Cartesian call and a graph) in the text form the MPI library stores, given to
# rankmapd as the library gives them (pattern_put), so that patterns list/show have something to print.
U=$(id -u)
cat >"$T/cart.pattern" <<EOF
rankmap-pattern = 1
uid = $U
program = build-id:0123456789abcdef
path = /opt/app/stencil
fn = MPI_Cart_create
order = 0
shape = cart 2 1,0
runs = 3
updated = 1712345678
ranks = 16
dim = 0 1000.5 1000.5 10 10
dim = 1 250 0.1 2 1
other = 12.25 3
cmdline = 00000000deadbeef
drift = 0.05
EOF
cat >"$T/graph.pattern" <<EOF
rankmap-pattern = 1
uid = $U
program = file:0123456789abcdef:4096:1712345000
path = /opt/app/ring
fn = MPI_Graph_create
order = 1
shape = graph 3 4 00000000000000aa
runs = 1
updated = 1712345679
ranks = 3
edges = 4
edge = 0 1 100 1
edge = 1 0 50 1
edge = 1 2 75.5 2
edge = 2 1 0.3 1
other = 0 0
EOF
expect "every kind of rankmapd answer, over the socket (ping, hosts, report, report with svg, distance, map, slurm_topology, reload, pattern_put/get/list/forget, and failures)" \
	$CHK daemon "$T/sock" "$T/cart.pattern" "$T/graph.pattern"

# ---- learned patterns, through rankmapd and offline (the directory rankmapd keeps them in) ---------
ids() { python3 -c 'import json, sys; print(" ".join(p["pattern"] for p in json.load(open(sys.argv[1]))["patterns"]))' "$1"; }
# shellcheck disable=SC2086
{
	L=$(out patterns patterns list $S --json)
	expect "patterns list --json through rankmapd" $CHK file patterns_list "$L"
	expect "... lists the two patterns stored" test "$(ids "$L" | wc -w)" -eq 2
	shows=""
	for id in $(ids "$L"); do shows="$shows $(out pattern patterns show "$id" $S --json)"; done
	expect "patterns show --json through rankmapd (Cartesian and graph)" $CHK file pattern $shows
	expect "... one Cartesian (dims), one graph (heaviest_edges)" test "$(cat $shows | grep -c '"dims"\|"heaviest_edges"')" -eq 2
	D="$T/state/patterns/$U"
	L=$(out patterns patterns list --dir "$D" --json)
	expect "patterns list --json offline (the directory rankmapd keeps, in the MPI library's format)" $CHK file patterns_list "$L"
	expect "... lists the two patterns" test "$(ids "$L" | wc -w)" -eq 2
	offline=""
	for id in $(ids "$L"); do offline="$offline $(out pattern patterns show "$id" --dir "$D" --json)"; done
	expect "patterns show --json offline" $CHK file pattern $offline
}
# the checker can fail: a shown pattern with its drift as text, no stable flag and edges that are no count
# shellcheck disable=SC2086
python3 -c '
import json, sys
docs = [json.load(open(f)) for f in sys.argv[1:-1]]
cart = next(d for d in docs if "dims" in d)
cart["drift"] = str(cart["drift"])
del cart["stable"]
cart["edges"] = "many"
open(sys.argv[-1], "w").write(json.dumps(cart, indent=2))
' $shows "$T/badpat.json"
$CHK file pattern "$T/badpat.json" >"$T/badpat.out"
expect_fail "... a wrong pattern document is refused" grep -q ' 0 problems' "$T/badpat.out"
expect "... naming the drift" grep -q "drift: '" "$T/badpat.out"
expect "... the missing key" grep -q "'stable' is a required" "$T/badpat.out"
expect "... and the edges" grep -q "edges: 'many'" "$T/badpat.out"
finish
