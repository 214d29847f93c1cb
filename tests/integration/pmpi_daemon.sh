#!/bin/sh
# RANKMAP_SOCKET: the PMPI library maps through a real rankmapd (started here on a temporary socket,
# with the PlaFRIM hwloc trees and InfiniBand fabric of tests/data), under Open MPI and MPICH; with the
# daemon down, the job completes unreordered with one warning. An open 4x2 grid on 8 ranks in the
# test-only cyclic placement (2 virtual hosts): the best cut crosses 2 edges, the cyclic placement 4.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
rankmapd_cleanup "$T"
[ -x "$BIN/rankmapd" ] || { notok "$BIN/rankmapd not built"; finish; exit 1; }
SOCK=$T/sock
cat >"$T/rankmapd.conf" <<EOC
hwloc_dir = $DATA/daemon/hwloc
ib_file = $DATA/plafrim/ib/ib-subnet0.txt
EOC
start_rankmapd "$T/rankmapd.conf" "$SOCK" "$T/d.log" --state-dir "$T/state"
expect "rankmapd is up" "$BIN/rankmapctl" ping --socket "$SOCK"

# both cases in one job per MPI (cart_halo -c, tests/mpi/common.sh): through the daemon, and with the
# socket naming nothing
C=$T/cases
cases_new "$C"
case_add "$C" "2 4 2 0 0" RANKMAP_SOCKET="$SOCK" RANKMAP_FAKE_HOSTS=2 "RANKMAP_FAKE_NODE=pack:2 core:4" \
	RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_REPORT="$T/report" >/dev/null
case_add "$C" "2 4 2 1 1" RANKMAP_SOCKET="$T/nothing.sock" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic >/dev/null
for m in $PMPI_MPIS; do
	rm -f "$T/report"
	cases_run "$m" 8 "$C"; rc=$?
	[ $rc -eq 0 ] && [ "$(field errors "$C.1.out")" = 0 ] && ok "$m: halo checks pass" ||
		{ notok "$m: exit $rc"; head -5 "$C.1.err" "$C.err"; }
	grep -q 'algo=rankmapd:' "$T/report" && ok "$m: mapped by rankmapd" || notok "$m: report: $(cat "$T/report")"
	ci=$(field cross_identity "$C.1.out"); cm=$(field cross_mapped "$C.1.out")
	[ -n "$cm" ] && [ "$cm" -lt "$ci" ] && ok "$m: host-crossing edges $ci -> $cm" || notok "$m: crossing $ci -> $cm"
	[ "$(warnings "$C.1.err")" -eq 0 ] && [ "$(warnings "$C.err")" -eq 0 ] && ok "$m: no warning" ||
		notok "$m: $(grep -h rankmap "$C.1.err" "$C.err")"

	[ $rc -eq 0 ] && [ "$(field moved "$C.2.out")" = 0 ] && ok "$m: daemon down: unreordered" || notok "$m: daemon down"
	[ "$(warnings "$C.2.err")" -eq 1 ] && ok "$m: daemon down: one warning: $(grep '^rankmap' "$C.2.err")" ||
		notok "$m: daemon down: $(warnings "$C.2.err") warnings"
done
finish
