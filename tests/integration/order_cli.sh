#!/bin/sh
# tests/integration/order_cli.sh: rankmapctl order and simulate end to end. Host lists are checked
# with real Slurm (scontrol show hostnames), the SVG with xmllint, JSON with jq-free grep checks.
. "$(dirname "$0")/../lib.sh"
CTL=$BIN/rankmapctl
T=$(mktmp)
trap 'rm -rf "$T"' EXIT INT TERM
printf 'ClusterName=rankmaptest\nSlurmctldHost=localhost\n' > "$T/slurm.conf"
hostnames() { SLURM_CONF="$T/slurm.conf" scontrol show hostnames "$1"; }

# --- help and usage errors (exit 2) ---
expect "order --help exits 0" "$CTL" order --help >"$T/h1"
expect "order --help has a synopsis and exit status" grep -q "EXIT STATUS" "$T/h1"
expect "simulate --help exits 0" "$CTL" simulate --help >"$T/h2"
grep -q "SYNOPSIS" "$T/h2" && ok "simulate --help has a synopsis" || notok "simulate --help"
for args in "order --dims 4x4x4 --torus x" "order --dims 4x4x4 --method zigzag" \
	"order --dims 4x4x4 --format png" "order --dims 4x4x4 --bogus" "order --dims 4x4x4 --axes xxy" \
	"simulate --dims 4x4x4 --load 2" "simulate --dims 4x4x4 --jobs x"; do
	$CTL $args >/dev/null 2>"$T/err"; rc=$?
	[ "$rc" -eq 2 ] && ok "usage error exits 2: $args" || notok "usage error exits 2: $args (got $rc)"
done

# --- input errors (exit 1, file and line named) ---
for f in "$DATA"/bad/torus-conf/bad-*.conf; do
	want=$(head -n 1 "$f" | sed 's/^# \([0-9]*\): .*/\1/')
	$CTL order --torus "$f" >/dev/null 2>"$T/err"; rc=$?
	if [ "$want" -gt 0 ]; then pat="$(basename "$f"):$want:"; else pat="$(basename "$f"): "; fi
	if [ "$rc" -eq 1 ] && grep -q "$pat" "$T/err"; then ok "bad config $(basename "$f"): exit 1, '$pat'"
	else notok "bad config $(basename "$f") (exit $rc: $(cat "$T/err"))"; fi
done
$CTL order --dims 17x8x24:2 --method bbb:20x2x8 >/dev/null 2>"$T/err"; rc=$?
[ "$rc" -eq 1 ] && grep -q "does not fit" "$T/err" && ok "block that does not fit: exit 1" || notok "block fit ($rc)"
$CTL order --dims 4x0x4 >/dev/null 2>"$T/err"; rc=$?
[ "$rc" -eq 1 ] && grep -q -- "--dims" "$T/err" && ok "zero --dims: exit 1" || notok "zero --dims ($rc)"
$CTL simulate --dims 4x4x4:4 --swf "$DATA/bad/swf/bad-fields.swf" >/dev/null 2>"$T/err"; rc=$?
[ "$rc" -eq 1 ] && grep -q "bad-fields.swf:6:" "$T/err" && ok "malformed SWF: exit 1, file:line" || notok "bad swf ($rc: $(cat "$T/err"))"

# --- list ---
expect "list on XE6 to --output" "$CTL" order --torus "$DATA/torus/xe6.conf" --method bbb --format list --output "$T/list"
n=$(wc -l < "$T/list"); u=$(sort -u "$T/list" | wc -l)
[ "$n" -eq 6528 ] && [ "$u" -eq 6528 ] && ok "list: 6528 distinct hosts" || notok "list: $n lines, $u distinct"
$CTL order --dims 4x2x6:2 --method mdf > "$T/coords"
n=$(awk 'NF==4 && $1>=0 && $1<4 && $2>=0 && $2<2 && $3>=0 && $3<6 && $4>=0 && $4<2' "$T/coords" | sort -u | wc -l)
[ "$n" -eq 96 ] && ok "list without names: 96 distinct 'x y z n' lines" || notok "coords list ($n)"
$CTL order --torus "$DATA/torus/small-table.conf" --method hilbert > "$T/tab"
grep -q '^c1-0c1s1n1$' "$T/tab" && [ "$(wc -l < "$T/tab")" -eq 24 ] && ok "list with table names (24 nodes)" || notok "table list"

# --- slurm-nodes: real Slurm expands our list back to the same order ---
for m in xyz mdf gray hilbert bbb; do
	$CTL order --torus "$DATA/torus/xe6.conf" --method $m --format list > "$T/l.$m"
	$CTL order --torus "$DATA/torus/xe6.conf" --method $m --format slurm-nodes > "$T/s.$m"
	hostnames "$(cat "$T/s.$m")" > "$T/e.$m"
	cmp -s "$T/l.$m" "$T/e.$m" && ok "slurm-nodes $m: scontrol expands to the list order" || notok "slurm-nodes $m"
done
[ "$(wc -c < "$T/s.xyz")" -lt 40 ] && ok "xyz host list compresses to one range" || notok "xyz compress: $(cat "$T/s.xyz")"

# --- weights ---
$CTL order --torus "$DATA/torus/xe6.conf" --method bbb --format weights > "$T/w"
grep -v '^#' "$T/w" | sed 's/NodeName=\([^ ]*\) Weight=.*/\1/' > "$T/wn"
cmp -s "$T/wn" "$T/l.bbb" && ok "weights: nodes in order" || notok "weights order"
grep -v '^#' "$T/w" | awk -F'Weight=' 'NR>1 && $2<=prev {bad=1} {prev=$2} END {exit bad}' \
	&& ok "weights increase" || notok "weights increase"

# --- topology.conf: every node under exactly one leaf switch, every leaf under a group ---
$CTL order --torus "$DATA/torus/xe6.conf" --method bbb --format topology.conf > "$T/topo"
: > "$T/tn"
grep '^SwitchName=blk' "$T/topo" | sed 's/.*Nodes=//' | while read -r l; do hostnames "$l" >> "$T/tn"; done
[ "$(sort "$T/tn" | uniq | wc -l)" -eq 6528 ] && [ "$(wc -l < "$T/tn")" -eq 6528 ] && ok "topology.conf: 6528 nodes once each" || notok "topology nodes"
nb=$(grep -c '^SwitchName=blk' "$T/topo")
# default BBB block on 17x8x24 is 3x2x8 (odd x split into 3-wide blocks): ceil(17/3) * 8/2 * 24/8 = 72
[ "$nb" -eq 72 ] && ok "topology.conf: 72 BBB leaf switches (3x2x8 blocks)" || notok "leaf count $nb"
: > "$T/tb"
grep '^SwitchName=grp' "$T/topo" | sed 's/.*Switches=//' | while read -r l; do hostnames "$l" >> "$T/tb"; done
[ "$(sort -u "$T/tb" | wc -l)" -eq "$nb" ] && ok "every leaf switch in a group" || notok "groups"
grep -q '^SwitchName=top Switches=' "$T/topo" && ok "a top switch" || notok "top switch"

# --- svg ---
$CTL order --dims 17x8x24:2 --link-cost 1,2,0.67 --method bbb --format svg > "$T/o.svg"
expect "svg is well-formed XML (xmllint)" xmllint --noout "$T/o.svg"
[ "$(grep -c '<rect' "$T/o.svg")" -eq 3264 ] && ok "svg: one square per router" || notok "svg rects"
grep -q 'stroke="black"' "$T/o.svg" && ok "svg: path drawn" || notok "svg path"

# --- simulate ---
$CTL simulate --dims 17x8x24:2 --link-cost 1,2,0.67 --compare --jobs 300 > "$T/cmp"
rc=$?
[ "$rc" -eq 0 ] && ok "simulate --compare" || notok "simulate --compare ($rc)"
grep -E '^class +metric +xyz +mdf +gray +hilbert +bbb' "$T/cmp" >/dev/null && ok "table has every ordering" || notok "table header"
for c in 2-16 32-128 256+ all; do grep -q "^$c " "$T/cmp" && ok "class $c" || notok "class $c"; done
$CTL simulate --dims 17x8x24:2 --compare --jobs 300 --seed 5 > "$T/c1"
$CTL simulate --dims 17x8x24:2 --compare --jobs 300 --seed 5 > "$T/c2"
cmp -s "$T/c1" "$T/c2" && ok "same seed, same table" || notok "reproducible"
$CTL simulate --dims 17x8x24:2 --method hilbert --jobs 200 --json > "$T/j"
grep -q '"hilbert"' "$T/j" && grep -q '"interference"' "$T/j" && grep -q '"256+"' "$T/j" && ok "--json" || notok "--json"
$CTL simulate --torus "$DATA/torus/small-table.conf" --swf "$DATA/swf/small.swf" --procs-per-node 4 --method bbb > "$T/swf" 2>&1
rc=$?
[ "$rc" -eq 0 ] && grep -q '^11 jobs' "$T/swf" && ok "SWF trace: 11 jobs simulated" || notok "swf run ($rc: $(head -2 "$T/swf"))"
finish
