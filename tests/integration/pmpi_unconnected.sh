#!/bin/sh
# The PMPI library on hosts that span unconnected InfiniBand subnets (tests/data/ib/subnet-a.topo holds
# n1, subnet-c.topo m1): the job is reordered, not refused, and the warning naming the pair rides in the
# one report line (RANKMAP_VERBOSE on stderr, RANKMAP_REPORT in the file), with RANKMAP_CLUSTER and through
# rankmapd, under Open MPI and MPICH: no other "rankmap:" line.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
rankmapd_cleanup "$T"
# the first two hosts (the virtual hosts of RANKMAP_FAKE_HOSTS=2) are n1 and m1
cat >"$T/c.conf" <<EOC
hwloc = synthetic:pack:2 core:4 pu:1@n1,m1,n2,n3,m2
ib = $DATA/ib/subnet-a.topo
ib = $DATA/ib/subnet-c.topo
EOC
WANT='warning="hosts n1 and m1 cannot reach each other over InfiniBand'
SOCK=$T/sock
echo "cluster = $T/c.conf" >"$T/rankmapd.conf"
start_rankmapd "$T/rankmapd.conf" "$SOCK" "$T/d.log" --state-dir "$T/state"
expect "rankmapd is up" "$BIN/rankmapctl" ping --socket "$SOCK"

# Both ways in one job per MPI (cart_halo -c, tests/mpi/common.sh): an open 4x2 grid on 8 ranks, cyclic
# over n1 and m1 (the best cut crosses 2 edges, the cyclic placement 4), RANKMAP_CLUSTER, then rankmapd.
C=$T/cases
cases_new "$C"
k=1
for how in RANKMAP_CLUSTER="$T/c.conf" RANKMAP_SOCKET="$SOCK"; do
	case_add "$C" "2 4 2 0 0" "$how" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_VERBOSE=1 \
		RANKMAP_REPORT="$T/report.$k" >/dev/null
	k=$((k + 1))
done

# check MPI WHAT K: the checks of case K ($rc: the job's exit status)
check() {
	m=$1; what=$2; out=$C.$3.out; err=$C.$3.err; rep=$T/report.$3
	[ $rc -eq 0 ] && [ "$(field errors "$out")" = 0 ] && ok "$m $what: halo checks pass" ||
		{ notok "$m $what: exit $rc"; head -5 "$err" "$C.err"; }
	mv=$(field moved "$out")
	[ -n "$mv" ] && [ "$mv" -gt 0 ] && ok "$m $what: reordered ($mv moved), not refused" ||
		{ notok "$m $what: nothing moved"; head -3 "$err"; }
	grep -q "^rankmap: report .*$WANT" "$rep" && ok "$m $what: the warning in RANKMAP_REPORT's line" ||
		notok "$m $what: report: $(cat "$rep")"
	grep -q "^rankmap: report .*$WANT" "$err" && ok "$m $what: the warning in RANKMAP_VERBOSE's line" ||
		notok "$m $what: stderr: $(grep rankmap "$err")"
	[ "$(grep -c '^rankmap: report' "$err")" -eq 1 ] && [ "$(warnings "$err")" -eq 0 ] && ! grep -q '^rankmap' "$C.err" &&
		ok "$m $what: exactly one report line, no warning" || notok "$m $what: $(grep -h rankmap "$err" "$C.err")"
}
for m in $PMPI_MPIS; do
	rm -f "$T"/report.*
	cases_run "$m" 8 "$C"; rc=$?
	check "$m" RANKMAP_CLUSTER 1
	check "$m" rankmapd 2
done
finish
