#!/bin/sh
# tests/integration/hwloc_faults.sh: real cluster data whose files no test had seen.
# - Per-host fault isolation: a bad diff, a truncated reference (its diffs too), an unreadable file
#   (run as an unprivileged user: root reads anyway), a symlink loop, a FIFO, an empty file and a PU
#   index above 65535 (refused with that reason, not hwloc's generic one), each
#   among good files: `rankmapctl report` keeps the other hosts and lists the bad one (kind, host,
#   file, line, reason); --strict fails naming the file. rankmapd on a directory holding all of them
#   starts, warns once per bad host, serves ping and the anomalies through `report --socket`; on a
#   directory where nothing loads it refuses to start.
# - hwloc 1.x diffs (tests/data/hwloc-v1-diffs, refused by hwloc 2's hwloc-patch): memory hunks apply;
#   each host's memory is checked against the sum the files give (computed here with awk).
# - Restricted cpusets (tests/data/hwloc-restricted): cores counted as hwloc-calc --disallowed counts
#   them, and one restricted_cpuset anomaly names the hosts.
# - HCAs named only through hwloc NodeGUIDs (tests/data/hwloc-guid-fabric): the expected names come
#   from the XML files' Port1GID0 infos and the ports report's generic HCAs, matched here with awk.
. "$(dirname "$0")/../lib.sh"
T=$(mktmp)
rankmapd_on_exit() { chmod -R u+rwX "$T" 2>/dev/null; }
rankmapd_cleanup "$T"
CTL=$BIN/rankmapctl
TMO=60
V1=$DATA/hwloc-v1-diffs

# jq-like checks with python3: js FILE EXPR (EXPR sees r, the report)
js() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }
jv() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# ---- one bad entry among good files ------------------------------------------------------------------
# case NAME KIND HOST FILE-PART REASON-PART: $T/NAME holds the data; the good hosts are every *.xml file
# but HOST's and those of the diffs naming a bad reference (counted with ls/grep, not by rankmap).
check_case() {
	name=$1 kind=$2 host=$3 file=$4 reason=$5 bad=$6 strict=${7:-strict}
	dir=$T/$name
	nfiles=$(ls "$dir" | grep -c '\.xml$')
	good=$((nfiles - bad))
	$RUNAS timeout -k 5 $TMO "$CTL" report --hwloc "$dir" --json >"$T/$name.json" 2>"$T/$name.err"
	rc=$?
	if [ $rc -ne 0 ]; then notok "$name: report exit $rc: $(head -c 300 "$T/$name.err")"; return; fi
	js "$T/$name.json" "r['hosts_with_hardware'] == $good" &&
		ok "$name: the $good other hosts load" ||
		notok "$name: $(jv "$T/$name.json" "r['hosts_with_hardware']") hosts loaded, want $good"
	js "$T/$name.json" "any(a['kind'] == '$kind' and a.get('host') == '$host' and '$file' in a['file'] and
		\"$reason\" in a['reason'] for a in r['anomalies'])" &&
		ok "$name: anomaly $kind for $host: $(jv "$T/$name.json" "[a['text'] for a in r['anomalies'] if a.get('host') == '$host'][0]")" ||
		notok "$name: no $kind anomaly for $host ($file: $reason): $(jv "$T/$name.json" "[a['text'] for a in r['anomalies']]")"
	js "$T/$name.json" "sum(a['kind'] in ('bad_host_file', 'bad_reference') for a in r['anomalies']) == $bad" &&
		ok "$name: $bad host(s) reported left out" || notok "$name: left-out count differs from $bad"
	[ "$strict" = strict ] || return
	$RUNAS timeout -k 5 $TMO "$CTL" report --strict --hwloc "$dir" >/dev/null 2>"$T/$name.serr"
	rc=$?
	[ $rc -eq 1 ] && grep -q "$file" "$T/$name.serr" && ok "$name: --strict fails: $(cat "$T/$name.serr")" ||
		notok "$name: --strict exit $rc: $(cat "$T/$name.serr")"
}

# the good files: the 1.x diff directory without node011.diff.xml (its one hunk that cannot apply would
# make --strict fail on it first)
mkcase() { mkdir -p "$T/$1" && cp "$V1"/*.xml "$T/$1/" && rm "$T/$1/node011.diff.xml"; }
RUNAS=
mkcase baddiff && echo '<topologydiff refname=' >"$T/baddiff/zz.diff.xml"
check_case baddiff bad_host_file zz zz.diff.xml "malformed hwloc topology diff" 1
mkcase truncref && head -c 6000 "$V1/node001.xml" >"$T/truncref/node001.xml"
nref=$(grep -l 'refname="node001.xml"' "$T/truncref"/*.diff.xml | wc -l)
check_case truncref bad_host_file node001 node001.xml "truncated" $((nref + 1))
check_case truncref bad_reference node003 node003.diff.xml "reference topology 'node001.xml'" $((nref + 1)) nostrict
mkcase loop && ln -s loop.xml "$T/loop/loop.xml"
check_case loop bad_host_file loop loop.xml "symbolic links" 1
mkcase fifo && mkfifo "$T/fifo/ff.xml"
check_case fifo bad_host_file ff ff.xml "not a regular file (a FIFO)" 1
mkcase empty && : >"$T/empty/ee.xml"
check_case empty bad_host_file ee ee.xml "empty file" 1
# a processor index no machine has (fuzz_hwloc_xml's regression input): refused with its own reason
mkcase bigidx && cp "$DATA/fuzz-regressions/fuzz_hwloc_xml/hwloc-pu-index-2p32" "$T/bigidx/bi.xml"
check_case bigidx bad_host_file bi bi.xml "index above 65535: no machine has one" 1
mkcase unreadable && cp "$V1/node002.xml" "$T/unreadable/yy.xml" && chmod 000 "$T/unreadable/yy.xml"
if [ "$(id -u)" -ne 0 ]; then
	check_case unreadable bad_host_file yy yy.xml "Permission denied" 1
elif setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	chmod 755 "$T" "$T/unreadable" && chmod 644 "$T/unreadable"/[bnp]*.xml
	RUNAS="setpriv --reuid=65534 --regid=65534 --clear-groups"
	check_case unreadable bad_host_file yy yy.xml "Permission denied" 1
	RUNAS=
else
	echo "skip - unreadable file: running as root and setpriv cannot drop to uid 65534 (root reads mode 000 files)"
fi

# ---- the cluster file's hwloc source, and its strict key ------------------------------------------------
printf 'hwloc = fifo\n' >"$T/cl.conf"
timeout -k 5 $TMO "$CTL" report --cluster "$T/cl.conf" --json >"$T/cl.json" 2>"$T/cl.err" &&
	js "$T/cl.json" "any(a.get('host') == 'ff' for a in r['anomalies'])" &&
	ok "cluster file: the FIFO's host is an anomaly, the rest loads" || notok "cluster file: $(cat "$T/cl.err")"
printf 'hwloc = fifo\nstrict = yes\n' >"$T/cl.conf"
timeout -k 5 $TMO "$CTL" report --cluster "$T/cl.conf" >/dev/null 2>"$T/cl.err"
rc=$?
[ $rc -eq 1 ] && grep -q "ff.xml: not a regular file" "$T/cl.err" && ok "cluster file with strict = yes (after the hwloc line) fails: $(cat "$T/cl.err")" ||
	notok "cluster file strict = yes: exit $rc: $(cat "$T/cl.err")"

# ---- rankmapd on a directory holding every bad case ----------------------------------------------------
mkcase all && cp "$T/baddiff/zz.diff.xml" "$T/empty/ee.xml" "$T/all/" &&
	head -c 6000 "$V1/node001.xml" >"$T/all/node001.xml" && ln -s loop.xml "$T/all/loop.xml" &&
	mkfifo "$T/all/ff.xml"
nbad=$((nref + 5))   # node001 and its diffs, zz, ee, loop, ff
SOCK=$T/d.sock
printf 'hwloc_dir = %s\nstate_dir = %s/state\n' "$T/all" "$T" >"$T/d.conf"
expect "rankmapd starts on a directory with $nbad bad hosts and answers ping" start_rankmapd "$T/d.conf" "$SOCK" "$T/d.log"
"$CTL" report --socket "$SOCK" --json >"$T/d.json" 2>"$T/d.err"
js "$T/d.json" "sum(a['kind'] in ('bad_host_file', 'bad_reference') for a in r['anomalies']) == $nbad and
	r['hosts_with_hardware'] == $(ls "$V1" | grep -c '\.xml$') - 1 - $nref - 1" &&
	ok "report --socket lists the $nbad bad hosts and serves the others" ||
	notok "report --socket: $(head -c 400 "$T/d.json" "$T/d.err")"
"$CTL" report --socket "$SOCK" >"$T/d.txt" 2>&1
grep -q "bad_host_file *host ff left out: .*ff.xml: not a regular file (a FIFO)" "$T/d.txt" &&
	ok "text report: $(grep -m1 'host ff' "$T/d.txt" | sed 's/  */ /g')" || notok "text report lacks ff: $(grep -A3 Anomal "$T/d.txt")"
w=$(grep -c "warning.*left out" "$T/d.log")
[ "$w" -eq "$nbad" ] && ok "rankmapd logged one warning per bad host ($w)" ||
	notok "rankmapd logged $w warnings for $nbad bad hosts: $(head -5 "$T/d.log")"
expect "rankmapd still answers ping" "$CTL" ping --socket "$SOCK"
term_rankmapd

mkdir "$T/nothing" && : >"$T/nothing/a.xml" && mkfifo "$T/nothing/b.xml"
printf 'hwloc_dir = %s\nsocket = %s\nstate_dir = %s/state2\n' "$T/nothing" "$T/d2.sock" "$T" >"$T/d2.conf"
timeout -k 5 $TMO "$BIN/rankmapd" --config "$T/d2.conf" --foreground >"$T/d2.log" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q "a.xml" "$T/d2.log" &&
	ok "rankmapd refuses to start when no host loads: $(tail -1 "$T/d2.log")" ||
	notok "rankmapd with nothing usable: exit $rc: $(tail -3 "$T/d2.log")"

# ---- hwloc 1.x diffs: memory hunks --------------------------------------------------------------------
"$CTL" report --hwloc "$V1" --json >"$T/v1.json" 2>"$T/v1.err"
expect "report on hwloc 1.x diffs" test -s "$T/v1.json"
# Expected memory of each host: its reference's NUMA local_memory total, plus new - old of every memory
# hunk (obj_attr_type 0) whose old value is one of the reference's NUMA nodes' values.
for f in "$V1"/*.xml; do
	h=$(basename "$f" | sed 's/\.diff\.xml$//; s/\.xml$//')
	ref=$f
	case $f in *.diff.xml) ref=$V1/$(grep -o 'refname="[^"]*"' "$f" | cut -d'"' -f2) ;; esac
	awk -v h="$h" -v diff="$f" '
		FNR == NR { while (match($0, /type="NUMANode"[^>]*local_memory="[0-9]+"/)) {
				s = substr($0, RSTART, RLENGTH); sub(/.*local_memory="/, "", s); sub(/"/, "", s)
				numa[s] = 1; tot += s; $0 = substr($0, RSTART + RLENGTH) } next }
		/obj_attr_type="0"/ { o = $0; sub(/.*obj_attr_oldvalue="/, "", o); sub(/".*/, "", o)
				n = $0; sub(/.*obj_attr_newvalue="/, "", n); sub(/".*/, "", n)
				if (o in numa) tot += n - o }
		END { printf "%s %.0f\n", h, tot }' "$ref" "$([ "$f" = "$ref" ] && echo /dev/null || echo "$f")"
done >"$T/v1.want"
python3 - "$T/v1.json" "$T/v1.want" <<'EOF' >"$T/v1.check"
import json, sys, re
r = json.load(open(sys.argv[1]))
want = dict((l.split()[0], int(l.split()[1])) for l in open(sys.argv[2]))
def expand(hl):
    out = []
    for part in re.findall(r'[^,\[]+(?:\[[^\]]*\])?', hl):
        m = re.match(r'(.*)\[(.*)\]$', part)
        if not m: out.append(part); continue
        for rg in m.group(2).split(','):
            a, _, b = rg.partition('-'); b = b or a
            for i in range(int(a), int(b) + 1): out.append('%s%0*d' % (m.group(1), len(a), i))
    return out
got = {}
for t in r['node_types']:
    for h in expand(t['host_list']): got[h] = t['memory_bytes']
bad = [h for h in want if h not in got or abs(got[h] - want[h]) >= (1 << 30)]
print('%d hosts, %d differ: %s' % (len(want), len(bad), ', '.join('%s %s != %s' % (h, got.get(h), want[h]) for h in bad)))
sys.exit(1 if bad else 0)
EOF
[ $? -eq 0 ] && ok "1.x diffs: memory per host as the files give it: $(cat "$T/v1.check")" || notok "1.x diffs: $(cat "$T/v1.check")"
js "$T/v1.json" "any(a['kind'] == 'diff_hunk' and a['host'] == 'node011' and a['line'] == 5 for a in r['anomalies'])
	and sum(a['kind'] == 'diff_hunk' for a in r['anomalies']) == 1" &&
	ok "1.x diffs: the one hunk that cannot apply is reported (node011.diff.xml:5)" ||
	notok "1.x diffs: diff_hunk anomalies: $(jv "$T/v1.json" "[a['text'] for a in r['anomalies']]")"
hwloc-patch "$V1/bigmem01.xml" "$V1/bigmem05.diff.xml" "$T/p.xml" >/dev/null 2>&1
expect "(hwloc 2's own hwloc-patch refuses the same 1.x memory diff)" test $? -ne 0

# ---- restricted cpusets -------------------------------------------------------------------------------
R=$DATA/hwloc-restricted
want=0; for f in "$R"/*.xml; do want=$((want + $(hwloc-calc -i "$f" --disallowed --number-of core all))); done
"$CTL" report --hwloc "$R" --json >"$T/r.json"
js "$T/r.json" "r['cores'] == $want" && ok "restricted cpusets: $want cores, as hwloc-calc --disallowed counts" ||
	notok "restricted cpusets: $(jv "$T/r.json" "r['cores']") cores, hwloc-calc --disallowed says $want"
js "$T/r.json" "[a['hosts'] for a in r['anomalies'] if a['kind'] == 'restricted_cpuset'] == ['mirage[001-002],phi01,uv2000']" &&
	ok "one restricted_cpuset anomaly: $(jv "$T/r.json" "[a['text'] for a in r['anomalies'] if a['kind'] == 'restricted_cpuset'][0]")" ||
	notok "restricted_cpuset: $(jv "$T/r.json" "r['anomalies']")"

# ---- HCAs named through hwloc NodeGUIDs -----------------------------------------------------------------
G=$DATA/hwloc-guid-fabric/ib-subnet0-generic.txt
# port GUIDs of generic CAs (ports report lines "CA lid port 0xGUID ... ( 'MT25408 ...' - ...")
grep "^CA .*( 'MT25408 ConnectX" "$G" | awk '{ print tolower($4) }' | sed 's/^0x//' | sort -u >"$T/generic"
# port GUIDs in the XML files (Port1GID0: the low 64 bits of the GID), with their host
for f in "$DATA"/plafrim/hwloc/*.xml; do
	sed -n 's/.*"Port[0-9]*GID0" value="[0-9a-f:]*:\([0-9a-f]\{4\}\):\([0-9a-f]\{4\}\):\([0-9a-f]\{4\}\):\([0-9a-f]\{4\}\)".*/\1\2\3\4/p' "$f" |
		sed "s|\$| $(basename "$f" .xml)|"
done | sort >"$T/xmlguids"
named=$(join "$T/generic" "$T/xmlguids" | wc -l); total=$(wc -l <"$T/generic")
"$CTL" report --hwloc "$DATA/plafrim/hwloc" --ib "$G" --json >"$T/g.json"
js "$T/g.json" "r['fabric']['hcas_named_by_hwloc'] == $named and sum(a['kind'] == 'generic_hca' for a in r['anomalies']) == $total - $named" &&
	ok "NodeGUIDs: $named of the $total generic HCAs named by hosts' hwloc XML, $((total - named)) left generic" ||
	notok "NodeGUIDs: named $(jv "$T/g.json" "r['fabric']['hcas_named_by_hwloc']"), want $named of $total"
hosts=$(join "$T/generic" "$T/xmlguids" | awk '{ print $2 }' | tr '\n' ' ')
js "$T/g.json" "not any(a['kind'] in ('no_hardware', 'not_in_fabric') and any(' %s ' % h in a['text'] for h in '$hosts'.split())
	for a in r['anomalies'])" && ok "NodeGUIDs: $hosts joined with their hardware" ||
	notok "NodeGUIDs: hosts still unjoined: $(jv "$T/g.json" "[a['text'] for a in r['anomalies'] if a['kind'] in ('no_hardware', 'not_in_fabric')]")"
finish
