#!/bin/sh
# tests/integration/topo_report.sh: `rankmapctl report` on the real PlaFRIM data (counts checked
# against grep/ls on the input files), text and JSON agreeing, hwloc-compress-dir output, and every
# bad-input case of tests/data/bad/ (exit status 1, message naming the file).
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
P=$DATA/plafrim
T=$(mktmp)
trap 'rm -rf "$T"' EXIT

# json_vars FILE: one python start (slow on a busy machine) prints every top-level integer of the
# report, the key list, the anomaly count and the histogram's pair count as shell assignments J_*.
json_vars() {
	python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for k, v in r.items():
    if isinstance(v, int) and not isinstance(v, bool):
        print("J_%s=%d" % (k, v))
print("J_keys='%s'" % " ".join(r.keys()))
print("J_nanomalies=%d" % sum(a["severity"] == "warning" for a in r.get("anomalies", [])))
print("J_nnotes=%d" % sum(a["severity"] == "note" for a in r.get("anomalies", [])))
print("J_pairs=%d" % sum(e["pairs"] for e in r.get("hop_histogram", [])))
PY
}
json_get() { # FILE KEY
	(eval "$(json_vars "$1")"; eval "echo \$J_$2")
}

# ---- the real cluster --------------------------------------------------------------------------
expect "report on the example cluster" "$CTL" report --cluster "$DATA/example/cluster.conf" >"$T/text"
expect "report --json" sh -c "\"$CTL\" report --cluster \"$DATA/example/cluster.conf\" --json > \"$T/json\""
if vars=$(json_vars "$T/json"); then ok "JSON parses"; eval "$vars"; else notok "JSON parses"; fi
for k in hosts hosts_with_hardware switches hca_ports subnets cores pus anomalies; do
	case " $J_keys " in *" $k "*) ok "JSON has key $k" ;; *) notok "JSON has key $k" ;; esac
done

# independent counts from the input files
nxml=$(ls "$P/hwloc" | grep -c '\.xml$')
ls "$P/hwloc" | sed 's/\.xml$//' | sort >"$T/hw"
grep '^CA' "$P/ib/ib-subnet0.txt" | sed "s/.*( '\([^ ']*\) .*/\1/" | sort -u >"$T/fab"
nunion=$(sort -u "$T/hw" "$T/fab" | wc -l)
ncaports=$(grep -c '^CA' "$P/ib/ib-subnet0.txt")
nsw=$(grep -E '^(SW|CA) ' "$P/ib/ib-subnet0.txt" | grep -o 'SW *[0-9]* *[0-9]* 0x[0-9a-f]*' | awk '{print $4}' | sort -u | wc -l)
fab_only=$(comm -13 "$T/hw" "$T/fab" | wc -l)
hw_only=$(comm -23 "$T/hw" "$T/fab" | wc -l)
[ "$J_hosts_with_hardware" = "$nxml" ] && ok "hosts_with_hardware = $nxml files" ||
	notok "hosts_with_hardware $J_hosts_with_hardware != $nxml"
[ "$J_hosts" = "$nunion" ] && ok "hosts = union of hwloc and fabric names ($nunion)" ||
	notok "hosts $J_hosts != $nunion"
[ "$J_hca_ports" = "$ncaports" ] && ok "hca_ports = $ncaports CA lines" ||
	notok "hca_ports $J_hca_ports != $ncaports"
[ "$J_switches" = "$nsw" ] && ok "switches = $nsw distinct switch GUIDs" ||
	notok "switches $J_switches != $nsw"
[ "$J_subnets" = 1 ] && ok "one subnet" || notok "subnets"
nohw=$(grep -c 'no_hardware' "$T/json")
notin=$(grep -c 'not_in_fabric' "$T/json")
[ "$nohw" = "$fab_only" ] && ok "no_hardware anomalies = $fab_only fabric-only hosts" || notok "no_hardware $nohw != $fab_only"
[ "$notin" = "$hw_only" ] && ok "not_in_fabric anomalies = $hw_only hwloc-only hosts" || notok "not_in_fabric $notin != $hw_only"
# histogram: all host pairs of the fabric are counted
pairs=$J_pairs
nfab=$(wc -l <"$T/fab")
[ "$pairs" = $((nfab * (nfab - 1) / 2)) ] && ok "hop histogram covers all $nfab*($nfab-1)/2 pairs" || notok "pairs $pairs"

# text and JSON agree
for k in hosts cores pus; do
	label=$k; [ "$k" = pus ] && label=PUs
	tv=$(awk -v l="$label" '$1 == l && NF == 2 {print $2}' "$T/text" | head -n 1)
	eval "jv=\$J_$k"
	[ "$tv" = "$jv" ] && ok "text $label = JSON $k" || notok "text $label '$tv'"
done
grep -q "^Anomalies: $J_nanomalies\$" "$T/text" && grep -q "^Notes: $J_nnotes\$" "$T/text" &&
	ok "anomaly and note counts agree" || notok "anomaly count"

# the same cluster from options instead of the cluster file
"$CTL" report --hwloc "$P/hwloc" --ib "$P/ib/ib-subnet0.txt" --json >"$T/json2"
# (only the spelling of the fabric file's path may differ)
grep -v 'ib-subnet0.txt"' "$T/json" >"$T/j1"
grep -v 'ib-subnet0.txt"' "$T/json2" >"$T/j2"
cmp -s "$T/j1" "$T/j2" && ok "options and cluster file give the same report" || notok "options vs file"
RANKMAP_CLUSTER="$DATA/example/cluster.conf" "$CTL" report --json >"$T/json3" 2>/dev/null
cmp -s "$T/json" "$T/json3" && ok "RANKMAP_CLUSTER" || notok "RANKMAP_CLUSTER"

# hwloc-compress-dir output (topology diffs) gives the same hardware counts
mkdir -p "$T/src" "$T/compressed"
cp "$P"/hwloc/fourmi00[1-8].xml "$P"/hwloc/devel*.xml "$T/src/"
if hwloc-compress-dir "$T/src" "$T/compressed" >/dev/null 2>&1 && ls "$T/compressed" | grep -q diff.xml; then
	"$CTL" report --hwloc "$T/src" --json >"$T/a.json"
	"$CTL" report --hwloc "$T/compressed" --json >"$T/b.json"
	a=$(json_vars "$T/a.json" | grep -E '^J_(hosts|hosts_with_hardware|cores|pus|packages)=')
	b=$(json_vars "$T/b.json" | grep -E '^J_(hosts|hosts_with_hardware|cores|pus|packages)=')
	same=0
	[ -n "$a" ] && [ "$a" = "$b" ] && same=1
	[ $same = 1 ] && ok "compressed directory: same counts" || notok "compressed directory differs"
else
	notok "hwloc-compress-dir"
fi

# ---- usage ---------------------------------------------------------------------------------------
"$CTL" report --help >"$T/help" && grep -q SYNOPSIS "$T/help" && grep -q 'EXIT STATUS' "$T/help" && ok "--help" || notok "--help"
env -u RANKMAP_CLUSTER -u RANKMAP_SERVER -u RANKMAP_SOCKET "$CTL" report >/dev/null 2>"$T/nosrc"
[ $? = 1 ] && grep -q 'rankmapd.sock' "$T/nosrc" && ok "no source: rankmapd asked at its default socket (none here): 1" ||
	notok "no source: $(cat "$T/nosrc")"
"$CTL" report --bogus >/dev/null 2>&1; [ $? = 2 ] && ok "unknown option: usage error" || notok "unknown option"
"$CTL" report --hwloc synthetic:pack:2\ core:2\ pu:2@a,b --json >"$T/s.json" &&
	[ "$(json_get "$T/s.json" pus)" = 16 ] && ok "synthetic hosts: 2 x 8 PUs" || notok "synthetic"
# under ASan, without hwloc's PCI plugin (Debian 12's leaks about 1 KB at exit: tests/unit/test_topo_hwloc.c)
san_env=; ldd "$CTL" | grep -q libasan && san_env="HWLOC_COMPONENTS=-pci"
env $san_env "$CTL" report --hwloc live --json >"$T/l.json" && [ "$(json_get "$T/l.json" hosts_with_hardware)" = 1 ] &&
	ok "live machine" || notok "live"

# ---- bad inputs ----------------------------------------------------------------------------------
for d in "$DATA"/bad/*/; do
	[ -f "$d/args" ] || continue # a set of parser cases (CASES or README), not a rankmapctl report case
	case=$(basename "$d")
	set --
	while IFS= read -r a; do set -- "$@" "$a"; done <"$d/args"
	cmd=report; [ -f "$d/command" ] && cmd=$(cat "$d/command")
	(cd "$d" && "$CTL" "$cmd" "$@") >/dev/null 2>"$T/err"
	rc=$?
	if [ $rc -ne 1 ]; then
		notok "bad/$case: exit $rc, want 1"
		continue
	fi
	good=1
	while IFS= read -r want; do
		grep -qF -- "$want" "$T/err" || good=0
	done <"$d/expected-error"
	[ "$(wc -l <"$T/err")" = 1 ] && grep -qE '^rankmapctl( [a-z-]+)?: ' "$T/err" || good=0
	[ $good = 1 ] && ok "bad/$case: $(cat "$T/err")" || notok "bad/$case: got '$(cat "$T/err")'"
done

finish
