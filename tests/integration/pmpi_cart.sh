#!/bin/sh
# MPI_Cart_create with the PMPI library under Open MPI and MPICH: Cartesian halo exchanges (2D and 3D,
# periodic and not) stay consistent after reordering (cart_halo checks coordinates, shifts and where
# the data comes from); in the test-only cyclic placement the reordering really happens and puts fewer
# grid edges across virtual hosts, as counted by the test program from the placement's definition;
# reorder=0 and RANKMAP_DISABLE=1 leave ranks alone.
# Cases that need no launcher option of their own run one after another in one job of 16 and one of 8
# ranks per MPI (cart_halo -c, tests/mpi/common.sh): each case has its own settings, report file,
# standard error and result line.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
trap 'rm -rf "$T"' EXIT

# reordered MPI DESC OUT ERR REPORT: the checks of a case in the test-only cyclic placement (2 virtual
# hosts; $rc: its job's exit status): the halo checks pass, ranks moved, fewer host-crossing edges
# (counted by the program), a lower cost in the report, no warning. The grids are chosen so that the
# cyclic placement is not already a best cut (it is for a 2x2x2 cube, where nothing can improve).
reordered() {
	m=$1; d=$2; out=$3; err=$4; rep=$5
	[ $rc -eq 0 ] && [ "$(field errors "$out")" = 0 ] && ok "$m $d: halo checks pass" ||
		{ notok "$m $d: exit $rc, errors $(field errors "$out")"; cat "$err" | head -5; }
	mv=$(field moved "$out"); ci=$(field cross_identity "$out"); cm=$(field cross_mapped "$out")
	[ -n "$mv" ] && [ "$mv" -gt 0 ] && ok "$m $d: ranks reordered ($mv moved)" || notok "$m $d: nothing moved"
	[ -n "$cm" ] && [ "$cm" -lt "$ci" ] && ok "$m $d: host-crossing edges $ci -> $cm" ||
		notok "$m $d: host-crossing edges $ci -> $cm"
	b=$(field cost_before "$rep"); a=$(field cost_after "$rep")
	lt "$a" "$b" && ok "$m $d: report cost $b -> $a" || notok "$m $d: report cost $b -> $a"
	[ "$(warnings "$err")" -eq 0 ] && ok "$m $d: no warning" || notok "$m $d: warnings: $(grep rankmap "$err")"
}

# ---- the job of 16 ranks -------------------------------------------------------------------------------
C16=$T/c16
cases_new "$C16"
add16() { case_add "$C16" "$@" >/dev/null; }
add16 "2 4 4 1 1" RANKMAP_FAKE_HOSTS=2 "RANKMAP_FAKE_NODE=pack:2 core:4" RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_REPORT="$T/r16.1"
add16 "3 2 2 4 1 1 1" RANKMAP_FAKE_HOSTS=2 "RANKMAP_FAKE_NODE=pack:2 core:4" RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_REPORT="$T/r16.2"
# a grid smaller than the job: the ranks left out get MPI_COMM_NULL, the rest stay consistent
add16 "2 3 3 1 0" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic
# block placement of a 4x4 grid on 2 hosts of 8 is already optimal: never made worse
add16 "2 4 4 0 0" RANKMAP_FAKE_HOSTS=2 "RANKMAP_FAKE_NODE=pack:2 core:4" RANKMAP_REPORT="$T/r16.4"
# a cluster file (the bundled PlaFRIM example: real hwloc trees and InfiniBand fabric); the virtual
# hosts are the cluster's first hosts, their hardware the cluster's
add16 "2 4 4 1 1" RANKMAP_CLUSTER="$DATA/example/cluster.conf" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic \
	RANKMAP_REPORT="$T/r16.5"

# ---- the job of 8 ranks --------------------------------------------------------------------------------
C8=$T/c8
cases_new "$C8"
add8() { case_add "$C8" "$@" >/dev/null; }
add8 "2 4 2 0 0" RANKMAP_FAKE_HOSTS=2 "RANKMAP_FAKE_NODE=pack:2 core:4" RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_REPORT="$T/r8.1"
# reorder=0: exactly the real call, no report
add8 "-n 2 4 2 1 1" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_VERBOSE=1
# RANKMAP_DISABLE=1: untouched, silent
add8 "2 4 2 1 1" RANKMAP_DISABLE=1 RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_VERBOSE=1
# RANKMAP_FAKE_NODE alone: the real host with invented hardware, ranks filling its PUs in order
add8 "2 4 2 1 1" "RANKMAP_FAKE_NODE=pack:2 core:8" RANKMAP_REPORT="$T/r8.4"
# every engine by name
add8 "2 4 2 1 1" RANKMAP_ALGO=treematch RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_REPORT="$T/r8.5"
add8 "2 4 2 1 1" RANKMAP_ALGO=scotch RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_REPORT="$T/r8.6"

for m in $PMPI_MPIS; do
	rm -f "$T"/r16.* "$T"/r8.*
	cases_run "$m" 16 "$C16"; rc16=$?
	cases_run "$m" 8 "$C8"; rc8=$?
	# nothing of the library outside the cases
	[ "$(warnings "$C16.err")" -eq 0 ] && [ "$(warnings "$C8.err")" -eq 0 ] ||
		{ notok "$m: warnings outside the cases"; grep -h '^rankmap:' "$C16.err" "$C8.err" | head -3; }

	rc=$rc16 reordered "$m" "2D 4x4 periodic" "$C16.1.out" "$C16.1.err" "$T/r16.1"
	rc=$rc8 reordered "$m" "2D 4x2 open" "$C8.1.out" "$C8.1.err" "$T/r8.1"
	rc=$rc16 reordered "$m" "3D 2x2x4 periodic" "$C16.2.out" "$C16.2.err" "$T/r16.2"
	# a job of its own: 12 ranks
	RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE='pack:2 core:4' RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_REPORT=$T/r12 \
		pmpi_run "$m" 12 cart_halo 3 2 2 3 0 0 0 >"$T/out" 2>"$T/err"; rc=$?
	reordered "$m" "3D 2x2x3 open" "$T/out" "$T/err" "$T/r12"
	rm -f "$T/r12"

	o=$C16.3.out
	[ $rc16 -eq 0 ] && [ "$(field errors "$o")" = 0 ] && ok "$m: 3x3 grid on 16 ranks" ||
		{ notok "$m: 3x3 grid on 16 ranks"; head -5 "$C16.3.err"; }

	o=$C8.2.out
	[ "$(field moved "$o")" = 0 ] && ! grep -q '^rankmap:' "$C8.2.err" && ok "$m: reorder=0 untouched" ||
		notok "$m: reorder=0 moved $(field moved "$o")"

	o=$C8.3.out
	[ $rc8 -eq 0 ] && [ "$(field moved "$o")" = 0 ] && ! grep -q '^rankmap:' "$C8.3.err" &&
		ok "$m: RANKMAP_DISABLE=1 untouched" || notok "$m: RANKMAP_DISABLE=1 moved $(field moved "$o")"

	b=$(field cost_before "$T/r16.4"); a=$(field cost_after "$T/r16.4")
	[ "$(field errors "$C16.4.out")" = 0 ] && ! lt "$b" "$a" && ok "$m: block placement not made worse ($b -> $a)" ||
		notok "$m: block placement $b -> $a"

	o=$C16.5.out
	ci=$(field cross_identity "$o"); cm=$(field cross_mapped "$o")
	[ "$(field errors "$o")" = 0 ] && [ -n "$cm" ] && [ "$cm" -lt "$ci" ] && [ "$(warnings "$C16.5.err")" -eq 0 ] &&
		ok "$m: RANKMAP_CLUSTER example cluster: crossing edges $ci -> $cm" ||
		{ notok "$m: RANKMAP_CLUSTER: $ci -> $cm"; head -3 "$C16.5.err"; }

	# real placement (no fake): 2 ranks bound to the 2 cores, the live hwloc tree; and 4 unbound ranks
	# on 2 PUs: every rank on one host and none bound, so no order is better than another: no
	# reordering and no warning (no more "more ranks than PUs" at every call); the same job
	# on the real host described as one PU (RANKMAP_FAKE_NODE) cannot be placed: one warning (jobs of
	# their own: their own launcher options and rank counts)
	case $m in openmpi) bind="--bind-to core" ;; mpich) bind="-bind-to core" ;; esac
	RANKMAP_REPORT=$T/report PMPI_BIND=$bind pmpi_run "$m" 2 cart_halo 1 2 1 >"$T/out" 2>"$T/err"
	[ "$(field errors "$T/out")" = 0 ] && grep -q 'ranks=2 ' "$T/report" && [ "$(warnings "$T/err")" -eq 0 ] &&
		ok "$m: real placement, 2 bound ranks mapped" || { notok "$m: real placement"; head -3 "$T/err"; }
	rm -f "$T/report"
	npu=$(nproc)
	pmpi_run "$m" $((npu * 2)) cart_halo 1 $((npu * 2)) 1 >"$T/out" 2>"$T/err"
	[ "$(field errors "$T/out")" = 0 ] && [ "$(field moved "$T/out")" = 0 ] && [ ! -s "$T/err" ] &&
		ok "$m: real placement, more unbound ranks than PUs on one host: unreordered, silent" ||
		{ notok "$m: oversubscribed real placement: moved $(field moved "$T/out")"; head -3 "$T/err"; }
	RANKMAP_FAKE_NODE=core:1 pmpi_run "$m" $((npu * 2)) cart_halo 1 $((npu * 2)) 1 >"$T/out" 2>"$T/err"
	[ "$(field errors "$T/out")" = 0 ] && [ "$(warnings "$T/err")" -eq 1 ] &&
		ok "$m: real host as one PU, more ranks than PUs: $(grep '^rankmap' "$T/err")" ||
		notok "$m: real host as one PU: $(warnings "$T/err") warnings"

	o=$C8.4.out
	[ "$(field errors "$o")" = 0 ] && grep -q 'ranks=8 ' "$T/r8.4" && [ "$(warnings "$C8.4.err")" -eq 0 ] &&
		ok "$m: RANKMAP_FAKE_NODE on the real host" || { notok "$m: RANKMAP_FAKE_NODE alone"; head -3 "$C8.4.err"; }

	k=5
	for algo in treematch scotch; do
		b=$(field cost_before "$T/r8.$k"); a=$(field cost_after "$T/r8.$k")
		[ "$(field errors "$C8.$k.out")" = 0 ] && lt "$a" "$b" && ok "$m: RANKMAP_ALGO=$algo ($b -> $a)" ||
			{ notok "$m: RANKMAP_ALGO=$algo ($b -> $a)"; head -3 "$C8.$k.err"; }
		k=$((k + 1))
	done
done
finish
