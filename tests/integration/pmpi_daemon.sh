#!/bin/sh
# RANKMAP_SOCKET: the PMPI library maps through a real rankmapd (started here on a temporary socket,
# with the PlaFRIM hwloc trees and InfiniBand fabric of tests/data), under Open MPI and MPICH; with the
# daemon down, the job completes unreordered with one warning.
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
[ -x "$BIN/rankmapd" ] || { notok "$BIN/rankmapd not built"; finish; exit 1; }
SOCK=$T/sock
cat >"$T/rankmapd.conf" <<EOC
hwloc_dir = $DATA/daemon/hwloc
ib_file = $DATA/plafrim/ib/ib-subnet0.txt
EOC
"$BIN/rankmapd" --config "$T/rankmapd.conf" --socket "$SOCK" --state-dir "$T/state" --foreground >"$T/d.log" 2>&1 &
D_PID=$!
n=0; while [ $n -lt 100 ] && ! "$BIN/rankmapctl" ping --socket "$SOCK" >/dev/null 2>&1; do sleep 0.1; n=$((n + 1)); done
expect "rankmapd is up" "$BIN/rankmapctl" ping --socket "$SOCK"

for m in $PMPI_MPIS; do
	RANKMAP_SOCKET=$SOCK RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE='pack:2 core:4' RANKMAP_FAKE_PLACEMENT=cyclic \
		RANKMAP_REPORT=$T/report pmpi_run "$m" 16 cart_halo 2 4 4 1 1 >"$T/out" 2>"$T/err"; rc=$?
	[ $rc -eq 0 ] && [ "$(field errors "$T/out")" = 0 ] && ok "$m: halo checks pass" ||
		{ notok "$m: exit $rc"; head -5 "$T/err"; }
	grep -q 'algo=rankmapd:' "$T/report" && ok "$m: mapped by rankmapd" || notok "$m: report: $(cat "$T/report")"
	ci=$(field cross_identity "$T/out"); cm=$(field cross_mapped "$T/out")
	[ -n "$cm" ] && [ "$cm" -lt "$ci" ] && ok "$m: host-crossing edges $ci -> $cm" || notok "$m: crossing $ci -> $cm"
	[ "$(warnings "$T/err")" -eq 0 ] && ok "$m: no warning" || notok "$m: $(grep rankmap "$T/err")"
	rm -f "$T/report"

	RANKMAP_SOCKET=$T/nothing.sock RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic \
		pmpi_run "$m" 8 cart_halo 2 4 2 1 1 >"$T/out" 2>"$T/err"; rc=$?
	[ $rc -eq 0 ] && [ "$(field moved "$T/out")" = 0 ] && ok "$m: daemon down: unreordered" || notok "$m: daemon down"
	[ "$(warnings "$T/err")" -eq 1 ] && ok "$m: daemon down: one warning: $(grep '^rankmap' "$T/err")" ||
		notok "$m: daemon down: $(warnings "$T/err") warnings"
done
finish
