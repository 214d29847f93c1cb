#!/bin/sh
# tests/integration/hwloc_v3.sh: hwloc 3.0 XML (tests/data/hwloc-v3: one machine exported by hwloc 2.x and
# by hwloc 3.0). What hwloc itself does with the 3.0 file (lstopo-no-graphics) decides what rankmap must
# do: where this hwloc imports it (hwloc 2.12, Debian 13's), `rankmapctl report --hwloc` loads both hosts
# with the PUs and cores lstopo counts in each file; where it refuses it (hwloc 2.9, Debian 12's), rankmap
# still loads it (translated to the 2.x form, issue #25) as the same machine as the 2.x file, and a file
# of a later version (4.0) is a bad host file that --strict refuses naming the file and its version. Both halves run in CI: the first in the Debian 13 suite (debian13), the second in
# the plain suite.
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
X=$DATA/hwloc-v3
T=$(mktmp) || exit 1
trap 'rm -rf "$T"' EXIT
mkdir "$T/dir"
cp "$X/32em64t-2n8c2t-pci-wholeio.xml" "$T/dir/v2host.xml"
cp "$X/32em64t-2n8c2t-pci-wholeio.v3.xml" "$T/dir/v3host.xml"
jv() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }
# count FILE TYPE: the objects of TYPE (pu, core) lstopo finds in FILE; nothing when it refuses the file
count() { lstopo-no-graphics --if xml -i "$1" --only "$2" 2>/dev/null | grep -c . || :; }

ver=$(hwloc-info --version 2>/dev/null)
expect "the 3.0 file says so (<topology version=\"3.0\">)" grep -q '<topology version="3.0"' "$T/dir/v3host.xml"
p2=$(count "$T/dir/v2host.xml" pu) c2=$(count "$T/dir/v2host.xml" core)
expect "lstopo reads the 2.x file ($p2 PUs, $c2 cores)" test "${p2:-0}" -gt 0 -a "${c2:-0}" -gt 0
"$CTL" report --hwloc "$T/dir" --json >"$T/r.json" 2>"$T/r.err"
expect "rankmapctl report --hwloc: exit 0 whatever the 3.0 file gives" test $? -eq 0
if lstopo-no-graphics --if xml -i "$T/dir/v3host.xml" --of console >/dev/null 2>"$T/lstopo.err"; then
	echo "$ver imports hwloc 3.0 XML"
	p3=$(count "$T/dir/v3host.xml" pu) c3=$(count "$T/dir/v3host.xml" core)
	expect "lstopo: the same machine in both files ($p3 PUs, $c3 cores)" test "$p3" = "$p2" -a "$c3" = "$c2"
	n=$(jv "$T/r.json" "r['hosts_with_hardware']")
	expect "both hosts load (got $n)" test "$n" = 2
	n=$(jv "$T/r.json" "r['pus']") m=$(jv "$T/r.json" "r['cores']")
	expect "the PUs and cores lstopo counts: $n PUs (want $((p2 + p3))), $m cores (want $((c2 + c3)))" \
		test "$n" = $((p2 + p3)) -a "$m" = $((c2 + c3))
	n=$(jv "$T/r.json" "len([a for a in r['anomalies'] if a['kind'] == 'bad_host_file'])")
	expect "no bad host file (got $n)" test "$n" = 0
	expect "--strict passes" "$CTL" report --hwloc "$T/dir" --strict >"$T/strict.txt"
else
	# rankmap reads 3.0 XML even where this hwloc does not (topo/node_hwloc_v3.c translates it to the
	# 2.x form first): both hosts load, as the same machine
	echo "$ver refuses hwloc 3.0 XML: $(head -n 1 "$T/lstopo.err")"
	n=$(jv "$T/r.json" "r['hosts_with_hardware']")
	expect "both hosts load, the 3.0 one translated (got $n)" test "$n" = 2
	n=$(jv "$T/r.json" "r['pus']") m=$(jv "$T/r.json" "r['cores']")
	expect "the 3.0 host is the 2.x host's machine: $n PUs (want $((2 * p2))), $m cores (want $((2 * c2)))" \
		test "$n" = $((2 * p2)) -a "$m" = $((2 * c2))
	n=$(jv "$T/r.json" "len([a for a in r['anomalies'] if a['kind'] == 'bad_host_file'])")
	expect "no bad host file (got $n)" test "$n" = 0
	expect "--strict passes" "$CTL" report --hwloc "$T/dir" --strict >"$T/strict.txt"
	# a version this translation does not know is still refused, naming it
	sed 's/<topology version="3.0"/<topology version="4.0"/' "$T/dir/v3host.xml" >"$T/dir/v4host.xml"
	expect_fail "--strict fails on a 4.0 file" "$CTL" report --hwloc "$T/dir" --strict >"$T/strict4.txt"
	expect "--strict names the 4.0 file and its version" sh -c "'$CTL' report --hwloc '$T/dir' --strict 2>&1 >/dev/null | grep 'v4host.xml' | grep -q 'version 4.0'"
fi
finish
