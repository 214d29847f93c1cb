#!/bin/sh
# tests/integration/hwloc_v3.sh: hwloc 3.0 XML (tests/data/hwloc-v3: one machine exported by hwloc 2.x and
# by hwloc 3.0). What hwloc itself does with the 3.0 file (lstopo-no-graphics) decides what rankmap must
# do: where this hwloc imports it (hwloc 2.12, Debian 13's), `rankmapctl report --hwloc` loads both hosts
# with the PUs and cores lstopo counts in each file; where it refuses it (hwloc 2.9, Debian 12's), the
# other host loads, the 3.0 file is a bad_host_file anomaly that names its XML version, and --strict
# fails naming the file. Both halves run in CI: the first in the Debian 13 suite (debian13), the second in
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
	echo "$ver refuses hwloc 3.0 XML: $(head -n 1 "$T/lstopo.err")"
	n=$(jv "$T/r.json" "r['hosts_with_hardware']")
	expect "the 2.x host loads, the 3.0 one does not (got $n)" test "$n" = 1
	n=$(jv "$T/r.json" "r['pus']")
	expect "the 2.x host's PUs (got $n, lstopo $p2)" test "$n" = "$p2"
	r=$(jv "$T/r.json" "[a['reason'] for a in r['anomalies'] if a['kind'] == 'bad_host_file' and a['host'] == 'v3host'][0]" 2>/dev/null)
	expect "the 3.0 file is a bad_host_file anomaly naming its version: $r" sh -c 'echo "$1" | grep -q "hwloc XML version 3\.0"' sh "$r"
	expect_fail "--strict fails" "$CTL" report --hwloc "$T/dir" --strict >"$T/strict.txt"
	expect "--strict names the file and its version" sh -c "'$CTL' report --hwloc '$T/dir' --strict 2>&1 >/dev/null | grep 'v3host.xml' | grep -q 'version 3.0'"
fi
finish
