#!/bin/sh
# The PMPI library on hosts that span unconnected InfiniBand subnets (tests/data/ib/subnet-a.topo holds
# n1, subnet-c.topo m1): the job is reordered, not refused, and the warning naming the pair rides in the
# one report line (RANKMAP_VERBOSE on stderr, RANKMAP_REPORT in the file), with RANKMAP_CLUSTER and through
# rankmapd, under Open MPI and MPICH: no other "rankmap:" line.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
D_PID=
cleanup() {
	[ -n "$D_PID" ] && kill "$D_PID" 2>/dev/null && wait "$D_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
# the first two hosts (the virtual hosts of RANKMAP_FAKE_HOSTS=2) are n1 and m1
cat >"$T/c.conf" <<EOC
hwloc = synthetic:pack:2 core:4 pu:1@n1,m1,n2,n3,m2
ib = $DATA/ib/subnet-a.topo
ib = $DATA/ib/subnet-c.topo
EOC
WANT='warning="hosts n1 and m1 cannot reach each other over InfiniBand'
SOCK=$T/sock
echo "cluster = $T/c.conf" >"$T/rankmapd.conf"
"$BIN/rankmapd" --config "$T/rankmapd.conf" --socket "$SOCK" --state-dir "$T/state" --foreground >"$T/d.log" 2>&1 &
D_PID=$!
n=0; while [ $n -lt 300 ] && ! "$BIN/rankmapctl" ping --socket "$SOCK" >/dev/null 2>&1; do sleep 0.1; n=$((n + 1)); done
expect "rankmapd is up" "$BIN/rankmapctl" ping --socket "$SOCK"

# run MPI WHAT VAR=VALUE: a 4x4 periodic halo on 16 ranks, cyclic over n1 and m1
run() {
	m=$1; what=$2; shift 2
	(export "$@" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_VERBOSE=1 RANKMAP_REPORT="$T/report"
	 pmpi_run "$m" 16 cart_halo 2 4 4 1 1) >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(field errors "$T/out")" = 0 ] && ok "$m $what: halo checks pass" ||
		{ notok "$m $what: exit $rc"; head -5 "$T/err"; }
	mv=$(field moved "$T/out")
	[ -n "$mv" ] && [ "$mv" -gt 0 ] && ok "$m $what: reordered ($mv moved), not refused" ||
		{ notok "$m $what: nothing moved"; head -3 "$T/err"; }
	grep -q "^rankmap: report .*$WANT" "$T/report" && ok "$m $what: the warning in RANKMAP_REPORT's line" ||
		notok "$m $what: report: $(cat "$T/report")"
	grep -q "^rankmap: report .*$WANT" "$T/err" && ok "$m $what: the warning in RANKMAP_VERBOSE's line" ||
		notok "$m $what: stderr: $(grep rankmap "$T/err")"
	[ "$(grep -c '^rankmap' "$T/err")" -eq 1 ] && [ "$(warnings "$T/err")" -eq 0 ] &&
		ok "$m $what: exactly one rankmap line" || notok "$m $what: $(grep rankmap "$T/err")"
	rm -f "$T/report"
}
for m in $PMPI_MPIS; do
	run "$m" "RANKMAP_CLUSTER" RANKMAP_CLUSTER="$T/c.conf"
	run "$m" "rankmapd" RANKMAP_SOCKET="$SOCK"
done
finish
