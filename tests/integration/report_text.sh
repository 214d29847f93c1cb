#!/bin/sh
# tests/integration/report_text.sh: `rankmapctl report` sections on real data, and its text against its
# JSON (report_text_check.py parses both and compares every number the text shows). Small-fabric
# figures are derived by hand from tests/data/ib/small-2level.topo (see its NOTES).
. "$(dirname "$0")/../lib.sh"

R=$BIN/rankmapctl
CHK="python3 $TOP/tests/integration/report_text_check.py"
T=$(mktmp) || exit 1
trap 'rm -rf "$T"' EXIT

both() { # name args...: text and JSON of one report
	n=$1; shift
	"$R" report "$@" >"$T/$n.txt" && "$R" report "$@" --json >"$T/$n.json"
}
for c in "plafrim --cluster $DATA/example/cluster.conf" "ndr --ib $DATA/ib/ndr-fattree-582ca.ibnetdiscover" \
	"small --ib $DATA/ib/small-2level.topo" "torus --torus $DATA/torus/xe6.conf" \
	"subnets --ib $DATA/ib/subnet-a.topo --ib $DATA/ib/subnet-b.ports"; do
	set -- $c
	expect "$1: report runs (text and --json)" both "$@"
	expect "$1: the text shows the JSON's numbers" $CHK "$T/$1.json" "$T/$1.txt"
done
for s in "Node types" "InfiniBand fabric" "Leaf switches: 7" "Link quality" "Coverage" "Hop counts" "Anomalies"; do
	expect "PlaFRIM text has the section '$s'" grep -q "^$s" "$T/plafrim.txt"
done
expect "PlaFRIM: 64 hosts share the X5550 node type" grep -Eq '^ +64 +2 +2 +8 +8 .*X5550' "$T/plafrim.txt"
# small-2level by hand: leaf-3's uplinks are 4x DDR (to spine-1) and 1x QDR (to spine-2) among 4x QDR
# a topology file gives active rates only: below the norm, not known to be slower than the ports allow
expect "small: 2 links below the norm (notes)" grep -Eq "links below the subnet norm \(supported unknown\) +2$" "$T/small.txt"
expect "small: no link known to be slow" grep -Eq "links that could be faster +0$" "$T/small.txt"
expect "small: the notes list them" grep -Eq "^Notes: 2$" "$T/small.txt"
# --all: every anomaly listed, none cut off (PlaFRIM has 38 notes, more than the 20 shown per kind)
expect "plafrim: without --all the text cuts the notes off" grep -q "more below_norm_link (--all lists them)" "$T/plafrim.txt"
expect "plafrim: report --all runs" sh -c "'$R' report --cluster '$DATA/example/cluster.conf' --all >'$T/plafrim-all.txt'"
expect_fail "plafrim: --all cuts nothing off" grep -q "more .*(--all lists them)" "$T/plafrim-all.txt"
expect "plafrim: --all lists every anomaly of the JSON" $CHK "$T/plafrim.json" "$T/plafrim-all.txt" all
expect "small: 1 HCA named only by GUID" grep -Eq "HCAs named only by GUID +1$" "$T/small.txt"
# leaf-1: h1, h2, dual's first port down, 2 spines up -> 3 down, 2 up, 1.50:1
expect "small: leaf-1 has 3 down, 2 up, 1.50:1" grep -Eq "^ +3 +2 +0 +[0-9]+ +1.50:1 +ibsw[0-9]+ +leaf-1$" "$T/small.txt"
# one name per switch: the report's leaf rows and anomalies name switches as topology.conf does
"$R" slurm-topology --ib "$DATA/ib/small-2level.topo" >"$T/small.conf" 2>/dev/null
"$R" slurm-topology --cluster "$DATA/example/cluster.conf" >"$T/plafrim.conf" 2>/dev/null
for n in small plafrim; do
	expect "$n: the report's switch names are topology.conf's" python3 -c "
import json, re, sys
r = json.load(open(sys.argv[1]))
conf = set(re.findall(r'^SwitchName=(\S+)', open(sys.argv[2]).read(), re.M))
names = {e['switch'] for e in r['fabric']['leaves']} | {a['switch'] for a in r['anomalies'] if 'switch' in a} \
    | {e['name'] for a in r['anomalies'] for e in a.get('ends', []) if e['type'] == 'switch'}
sys.exit(0 if names and names <= conf else print(sorted(names - conf), sorted(conf)) or 1)" "$T/$n.json" "$T/$n.conf"
done
expect "torus: the order summary" grep -q "^Torus order" "$T/torus.txt"
expect "torus: --order hilbert is honoured" sh -c "'$R' report --torus '$DATA/torus/xe6.conf' --order hilbert --json | grep -q '\"method\": \"hilbert\"'"
expect_fail "torus: unknown --order is an error" "$R" report --torus "$DATA/torus/xe6.conf" --order nosuch
finish
