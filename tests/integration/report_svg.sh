#!/bin/sh
# tests/integration/report_svg.sh: `rankmapctl report --svg FILE`.
#
# Pictures of a small hand-written fabric (every link drawn; its two slow links - leaf-3 to spine-1
# DDR, leaf-3 to spine-2 1x - in red), the 582-HCA NDR fat tree (bundled links, 193 hosts in 22 leaf
# boxes), the PlaFRIM cluster and a torus-only cluster (the order picture embedded). Each SVG must
# parse (xmllint) and hold the expected boxes (report_svg_check.py, Python's XML parser). Then headless
# Chromium renders each to a 1600x1200 PNG, which must decode to a non-blank picture. `make deps` installs
# Chromium; without it the rendering checks are skipped (a skip CI fails).
. "$(dirname "$0")/../lib.sh"

R=$BIN/rankmapctl
CHK="python3 $TOP/tests/integration/report_svg_check.py"
T=$(mktmp) || exit 1
rankmapd_on_exit() { [ -n "$KEEP" ] && cp "$T"/*.png "$KEEP"/ 2>/dev/null; }
rankmapd_cleanup "$T"

svg() { out=$1; shift; "$R" report "$@" --svg "$T/$out.svg" >"$T/$out.txt" 2>"$T/$out.err" &&
	"$R" report "$@" --json >"$T/$out.json"; }
# the picture against the report of the same cluster (every host counted, problems named in the boxes
# with a mark, hosts with no HCA in a box, degraded switch links coloured as the anomalies say), no text
# out of its box or the picture, lateral links short
REP() { echo --report "$T/$1.json" --in-boxes --lateral-short; }

expect "small 2-level fabric: report --svg writes the picture" svg small --ib "$DATA/ib/small-2level.topo"
expect "small: xmllint accepts it" xmllint --noout "$T/small.svg"
# a topology file gives active rates only: the two links below the norm are notes (orange), not red
expect "small: 7 hosts in 3 leaf boxes, 2 links below the norm in orange, none red, switch names shown" \
	$CHK svg "$T/small.svg" --hosts 7 --leaves 3 --bad-links 0 --note-links 2 --names leaf-1,leaf-2,leaf-3,spine-1,spine-2 \
	$(REP small)
# ibsim fat tree (cache file): leaf3-spine1 is 1x and leaf4-spine2 DDR among 4x QDR (by hand, .net file)
expect "small: labels inside their boxes, lists broken between items, switches in name order" \
	$CHK svg "$T/small.svg" --in-boxes --list-breaks --sorted
# names longer than the boxes (node-name map in the NDR fabric's style), lists longer than a line
expect "long names: picture written" svg long --ib "$DATA/ib/small-2level.topo" --node-name-map "$DATA/reports/long-names.map"
expect "long names: every label fits its box (cut, full name in the tooltip), lists broken between items" \
	$CHK svg "$T/long.svg" --in-boxes --list-breaks --sorted --hosts 7 --leaves 3 \
	--names MF0_A09-P1-IBLEAF-04-04_MQM9701_U1,login-node-with-a-very-long-name-01
expect "the box check can fail: a 30-character bold label is refused" sh -c "sed 's|>ibsw2<|>ibsw2-with-a-much-longer-name-xx<|' '$T/long.svg' >'$T/long-bad.svg'"
expect_fail "... (checked)" $CHK svg "$T/long-bad.svg" --in-boxes
# a host with HCAs in two subnets (n2: subnet A leaf a-1, subnet B leaf b-2) is drawn in both
expect "two subnets: picture written" svg sub --ib "$DATA/ib/subnet-a.topo" --ib "$DATA/ib/subnet-b.ports"
expect "two subnets: n1, n2, n3 (HCAs in both) in two host boxes, n4 (subnet B only) in one" sh -c "for h in n1=2 n2=2 n3=2 n4=1; do $CHK svg '$T/sub.svg' --host-boxes \$h || exit 1; done"
expect "two subnets: 4 leaf boxes, in name order" $CHK svg "$T/sub.svg" --leaves 4 --sorted --in-boxes
expect "ibsim cache: picture written" svg cache --ib-cache "$DATA/ib/ibsim-fattree.cache"
# a libibnetdisc cache knows what the ports support: ibsim's support 12x, so every uplink could be wider
# (as iblinkinfo says): the 8 switch links red, none orange
expect "ibsim cache: 8 hosts, 4 leaves, the 8 uplinks that could be wider in red" \
	$CHK svg "$T/cache.svg" --hosts 8 --leaves 4 --bad-links 8 --note-links 0 --names leaf1,leaf4,spine1,spine2 \
	$(REP cache)
expect "ibsim cache: leaves in name order although the cache lists leaf4 first" $CHK svg "$T/cache.svg" --sorted
sed 's|<title>ibsw1:|<title>ibswX:|; s|<title>ibsw4:|<title>ibsw1:|; s|<title>ibswX:|<title>ibsw4:|' "$T/cache.svg" >"$T/cache-swapped.svg"
expect_fail "the order check can fail: two leaves' names swapped" $CHK svg "$T/cache-swapped.svg" --sorted
expect "NDR fat tree: picture written" svg ndr --ib "$DATA/ib/ndr-fattree-582ca.ibnetdiscover"
expect "NDR: xmllint accepts it" xmllint --noout "$T/ndr.svg"
# 193 = the distinct host names of the file (named HCAs by first word, generic ones by GUID), and 22
# leaves keep hosts once dual-rail hosts sit under their first HCA's leaf (as slurm-topology lists them)
nh=$(python3 -c "
import sys; sys.path.insert(0, '$TOP/tests/integration')
import report_topo_check as c
adj, hosts = c.parse_topofile('$DATA/ib/ndr-fattree-582ca.ibnetdiscover')
print(len(set().union(*hosts.values())))")
expect "NDR: the host boxes hold all $nh hosts of the file, in 22 leaf boxes, no box per host" \
	$CHK svg "$T/ndr.svg" --hosts "$nh" --leaves 22
expect "NDR: bundled links (not 300+ lines)" grep -q "Links bundled" "$T/ndr.svg"
expect "PlaFRIM cluster: picture written" svg plafrim --cluster "$DATA/example/cluster.conf"
expect "PlaFRIM: xmllint accepts it" xmllint --noout "$T/plafrim.svg"
expect "PlaFRIM: 125 hosts in 7 leaf boxes" $CHK svg "$T/plafrim.svg" --hosts 125 --leaves 7
expect "PlaFRIM: 128 hosts counted as the report does, riri, fifi, loulou (no HCA) drawn, hosts without hwloc data and below-norm links named in their boxes" \
	$CHK svg "$T/plafrim.svg" $(REP plafrim)
expect "PlaFRIM: the box of bonobo's leaf names its hosts below the norm without hovering" \
	grep -q 'class="problem">26 below the norm:' "$T/plafrim.svg"
expect "PlaFRIM: the headline counts the report's 128 hosts" grep -q '>128 hosts: 125 under 7 leaf switches' "$T/plafrim.svg"
# the checks can fail: the picture before (125 hosts, problems only in tooltips, arcs) is refused
sed 's|>128 hosts: |>125 hosts: |; s|class="problem">26 below the norm:|>26 below the norm:|' "$T/plafrim.svg" >"$T/plafrim-bad.svg"
expect_fail "... (checked: a wrong host count and a problem line gone are refused)" $CHK svg "$T/plafrim-bad.svg" $(REP plafrim)
sed 's|<line \(x1="[0-9.]*" y1="[0-9.]*" x2="\)[0-9.]*\(" y2="[0-9.]*" stroke="[^"]*" stroke-width="[^"]*"[^>]*><title>lateral\)|<line \19999\2|' \
	"$T/plafrim.svg" >"$T/plafrim-long.svg"
expect_fail "... (checked: a lateral link drawn across the picture is refused)" $CHK svg "$T/plafrim-long.svg" --lateral-short
# ---- a 500-host fabric with defects: 25 leaves, 4 spines, 9 host links at 4x EDR among 4x HDR, 12 hosts
# without hwloc data, 3 hosts with hwloc data but no HCA ---------------------------------------------
python3 "$TOP/tests/integration/report_gen_fattree.py" 25 20 4 |
	sed -E '/"n(00003|00047|0015[0-5]|00333) HCA-1"/s/4xHDR/4xEDR/' >"$T/f500.topo"
expect "500 hosts: picture written" svg f500 --ib "$T/f500.topo" --hwloc 'synthetic:pack:2 core:8 pu:2@n[00000-00487],login[1-3]'
expect "500 hosts: 503 counted, 9 slow host links and 12 hosts without hwloc data named in their boxes, login[1-3] drawn" \
	$CHK svg "$T/f500.svg" --hosts 500 --leaves 25 --list-breaks --sorted $(REP f500)
# real data: 33 HCA cables (bonobo, dancharia, devel...) run below the subnet's usual 4x QDR; the
# checker counts them in the ports report itself
expect "PlaFRIM: every slow HCA link of the ports report drawn red dashed, as the legend says" \
	$CHK svg "$T/plafrim.svg" --bad-hca-ports "$DATA/plafrim/ib/ib-subnet0.txt" --in-boxes --list-breaks --sorted
expect "torus only: picture written" svg torus --torus "$DATA/torus/xe6.conf"
expect "torus: xmllint accepts it" xmllint --noout "$T/torus.svg"
expect "torus: the order picture is embedded" $CHK svg "$T/torus.svg" --torus
expect "torus: text report has the order summary" grep -q "^Torus order" "$T/torus.txt"
expect_fail "--svg into a missing directory fails" "$R" report --ib "$DATA/ib/small-2level.topo" --svg "$T/no/such/dir.svg"
expect "... naming the file" sh -c "'$R' report --ib '$DATA/ib/small-2level.topo' --svg '$T/no/x.svg' 2>&1 | grep -q 'no/x.svg'"

# ---- through rankmapd: the daemon draws its model (here a fabric file and one registered host) -----
printf 'ib_file = %s\n' "$DATA/ib/small-2level.topo" >"$T/rankmapd.conf"
expect "rankmapd is up" start_rankmapd "$T/rankmapd.conf" "$T/sock" "$T/d.log" --state-dir "$T/state"
expect "register h1" "$R" register --socket "$T/sock" --xml "$DATA/daemon/hwloc/bonobo001.xml" --host h1 --force
expect "report --svg through the daemon writes the picture" sh -c "'$R' report --socket '$T/sock' --svg '$T/daemon.svg' >'$T/daemon.txt'"
"$R" report --socket "$T/sock" --json >"$T/daemon.json"
expect "daemon: xmllint accepts it" xmllint --noout "$T/daemon.svg"
expect "daemon: the picture of its model, checked against its own report" \
	$CHK svg "$T/daemon.svg" --hosts 7 --leaves 3 --note-links 2 $(REP daemon)
expect "daemon: the registered h1 has hwloc data, the hosts of its leaf without are named (dual, h2)" \
	grep -q 'class="problem">dual,h2<' "$T/daemon.svg"
expect_fail "daemon: h1 is not named as without hwloc data" grep -q 'class="problem">[^<]*h1' "$T/daemon.svg"

# ---- scale: 10,000 hosts under 250 leaves and 20 spines (generated) ---------------------------------
python3 "$TOP/tests/integration/report_gen_fattree.py" 250 40 20 >"$T/big.topo"
expect "10,000 hosts: picture written" svg big --ib "$T/big.topo"
expect "10,000 hosts: xmllint accepts it" xmllint --noout "$T/big.svg"
expect "10,000 hosts: 250 leaf boxes hold them all" $CHK svg "$T/big.svg" --hosts 10000 --leaves 250
n=$(grep -c '<line' "$T/big.svg")
expect "10,000 hosts: bundled, $n lines for 5,000 links and 10,000 hosts (< 2,000)" test "$n" -lt 2000
s=$(wc -c <"$T/big.svg")
expect "10,000 hosts: $s bytes (< 2 MB)" test "$s" -lt 2000000

# ---- rendering -------------------------------------------------------------------------------------
# a blank PNG must be refused by the checker (the check can fail)
python3 -c "
import struct, zlib
def chunk(k, b): return struct.pack('>I', len(b)) + k + b + struct.pack('>I', zlib.crc32(k + b))
raw = b''.join(b'\x00' + b'\xff' * 600 for _ in range(200))
open('$T/blank.png', 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 200, 200, 8, 2, 0, 0, 0))
	+ chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))"
expect_fail "the PNG check refuses a blank picture" $CHK png "$T/blank.png"

render() {
	u=$(mktemp -d "$T/chromium.XXXXXX")
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$u" \
		--screenshot="$T/$1.png" --window-size=1600,1200 "file://$T/$1.svg" >"$T/$1.chromium.log" 2>&1
	[ -s "$T/$1.png" ] || { tail -5 "$T/$1.chromium.log" >&2; return 1; }
	$CHK png "$T/$1.png"
}
if command -v chromium >/dev/null 2>&1; then
	for p in small ndr torus long sub plafrim f500 daemon; do # links drawn, bundled, torus; long names, subnets, slow HCAs
		expect "headless Chromium renders $p.svg to a non-blank 1600x1200 PNG" render "$p"
	done
else
	skip "chromium is not installed (make deps installs it): SVG rendering not checked"
fi
# librsvg, the other renderer (rsvg-convert: GNOME, ImageMagick, Inkscape's import): the same pictures
if command -v rsvg-convert >/dev/null 2>&1; then
	for p in plafrim f500 daemon; do
		expect "rsvg-convert renders $p.svg to a non-blank PNG" sh -c "rsvg-convert '$T/$p.svg' -o '$T/$p.rsvg.png' && $CHK png '$T/$p.rsvg.png'"
	done
else
	skip "rsvg-convert is not installed (make deps installs librsvg2-bin): librsvg rendering not checked"
fi
finish
