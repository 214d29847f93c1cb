#!/bin/sh
# tests/integration/hwloc_doctype.sh: host files that crash hwloc's XML parser.
# tests/data/hwloc-doctype holds an XML topology and a topology diff with an empty internal DTD subset
# (<!DOCTYPE topology []>), on which hwloc 2.9's libxml2 backend dies with SIGSEGV (checked first with
# lstopo, hwloc's own tool). rankmap parses host files in a child process, so each costs its host only:
# - rankmapctl report --hwloc DIR and --cluster FILE: exit 0, the other hosts load, each file is a
#   bad_host_file anomaly naming the crash; --strict fails naming the file;
# - a `register` request with the XML is refused (bad_request, the crash named) and the daemon goes on
#   serving, and registering; a `reload` after such files appear in hwloc_dir keeps the daemon and adds
#   their anomalies; rankmapd started with the files in hwloc_dir lists the anomalies and logs one
#   warning per host;
# - HWLOC_LIBXML_IMPORT=0 (hwloc's minimalistic parser) reads the same XML: what that setting changes.
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
T=$(mktmp)
chmod 755 "$T"
rankmapd_cleanup "$T"
X=$DATA/hwloc-doctype
TMO=60
# how a parser's crash reads: a signal, or (SANITIZE=1) ASan's report and its exit status
CRASH='crashed \(signal|ended \(status'
js() { python3 -c "import json,sys; crashed = lambda t: 'crashed (signal' in t or 'ended (status' in t; r=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }
jv() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# the input really crashes hwloc (else this test proves nothing: say so)
timeout -k 5 $TMO lstopo --if xml --input "$X/bonobo003.xml" --of console >/dev/null 2>&1
rc=$?
[ $rc -gt 128 ] && [ $rc -lt 160 ] && ok "lstopo itself dies on bonobo003.xml (status $rc)" ||
	skip "lstopo exits $rc on bonobo003.xml: this hwloc does not crash on an empty DTD subset"

# a directory: 4 good hosts, the crashing topology, a diff whose parse crashes (and its good reference)
mkdir "$T/dir"
cp "$DATA"/plafrim/hwloc/bonobo00[124].xml "$DATA/hwloc-v1-diffs/bigmem01.xml" "$X/bonobo003.xml" \
	"$X/bigmem02.diff.xml" "$T/dir/"
check_report() { # NAME JSON: the 4 good hosts load, bonobo003 and bigmem02 are crash anomalies
	js "$2" "r['hosts_with_hardware'] == 4" && ok "$1: the 4 other hosts load" ||
		notok "$1: $(jv "$2" "r['hosts_with_hardware']") hosts with hardware, want 4"
	for h in bonobo003 bigmem02; do
		js "$2" "any(a['kind'] == 'bad_host_file' and a['host'] == '$h' and crashed(a['reason'])
			for a in r['anomalies'])" &&
			ok "$1: $h is a bad_host_file anomaly: $(jv "$2" "[a['text'] for a in r['anomalies'] if a['host'] == '$h'][0]")" ||
			notok "$1: no crash anomaly for $h: $(jv "$2" "[a['text'] for a in r['anomalies']]")"
	done
}
timeout -k 5 $TMO "$CTL" report --hwloc "$T/dir" --json >"$T/r.json" 2>"$T/r.err"
rc=$?
expect "report --hwloc exits 0 (status $rc)" test $rc -eq 0
check_report "report --hwloc" "$T/r.json"
printf 'hwloc = dir\n' >"$T/cl.conf"
timeout -k 5 $TMO "$CTL" report --cluster "$T/cl.conf" --json >"$T/c.json" 2>"$T/c.err"
rc=$?
expect "report --cluster exits 0 (status $rc)" test $rc -eq 0
check_report "report --cluster" "$T/c.json"
timeout -k 5 $TMO "$CTL" report --strict --hwloc "$T/dir" >/dev/null 2>"$T/s.err"
rc=$?
[ $rc -eq 1 ] && grep -qE "$CRASH" "$T/s.err" && ok "--strict fails naming the file: $(cat "$T/s.err")" ||
	notok "--strict: exit $rc: $(cat "$T/s.err")"

# rankmapd: register, reload, start (each on its own: one crash must not hide the next)
SOCK=$T/d.sock
mkdir "$T/good" && cp "$DATA"/plafrim/hwloc/bonobo00[124].xml "$DATA/hwloc-v1-diffs/bigmem01.xml" "$T/good/"
printf 'hwloc_dir = %s\nsocket_mode = 0666\n' "$T/good" >"$T/g.conf"
expect "rankmapd starts on good files" start_rankmapd "$T/g.conf" "$SOCK" "$T/g.log" --state-dir "$T/state"
"$CTL" register --socket "$SOCK" --xml "$X/bonobo003.xml" --host reg01 --force >"$T/reg.out" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -qE "reg01: hwloc's parser ($CRASH)" "$T/reg.out" &&
	ok "register with the XML is refused: $(cat "$T/reg.out")" || notok "register: exit $rc: $(cat "$T/reg.out")"
expect "rankmapd still answers ping" "$CTL" ping --socket "$SOCK"
expect "and registers a good node" "$CTL" register --socket "$SOCK" --xml "$DATA/plafrim/hwloc/bonobo010.xml"
cp "$X/bonobo003.xml" "$T/good/"
sed 's/bonobo003/bonobo005/' "$X/bonobo003.xml" >"$T/good/bonobo005.xml"
"$CTL" reload --socket "$SOCK" >"$T/reload.out" 2>&1
expect "reload with two such files in hwloc_dir succeeds: $(cat "$T/reload.out")" test $? -eq 0
"$CTL" report --socket "$SOCK" --json >"$T/g.json" 2>&1
js "$T/g.json" "sum(a['host'] in ('bonobo003', 'bonobo005') and crashed(a['reason']) for a in r['anomalies']) == 2
	and r['hosts_with_hardware'] == 5" &&
	ok "after reload bonobo003 and bonobo005 are anomalies, the 5 others served" ||
	notok "after reload: $(head -c 300 "$T/g.json")"
expect "rankmapd stops cleanly" term_rankmapd

printf 'hwloc_dir = %s\nsocket_mode = 0666\n' "$T/dir" >"$T/d.conf"
expect "rankmapd starts with both files in hwloc_dir" start_rankmapd "$T/d.conf" "$SOCK" "$T/d.log" --state-dir "$T/state2"
"$CTL" report --socket "$SOCK" --json >"$T/d.json" 2>"$T/d.err"
check_report "rankmapd at start" "$T/d.json"
w=$(grep -cE "warning: bad_host_file.*($CRASH)" "$T/d.log")
expect "rankmapd logged one warning per crashing host ($w)" test "$w" -eq 2
expect "rankmapd stops cleanly" term_rankmapd

# hwloc's minimalistic XML parser (HWLOC_LIBXML_IMPORT=0) reads the same file without libxml2
HWLOC_LIBXML_IMPORT=0 timeout -k 5 $TMO "$CTL" report --hwloc "$T/dir" --json >"$T/m.json" 2>"$T/m.err"
js "$T/m.json" "not any(a['host'] == 'bonobo003' for a in r['anomalies'])" &&
	ok "with HWLOC_LIBXML_IMPORT=0 hwloc's own parser reads bonobo003.xml ($(jv "$T/m.json" "r['hosts_with_hardware']") hosts)" ||
	notok "HWLOC_LIBXML_IMPORT=0: $(jv "$T/m.json" "[a['text'] for a in r['anomalies']]")"
finish
