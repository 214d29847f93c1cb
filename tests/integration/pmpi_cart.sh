#!/bin/sh
# MPI_Cart_create with the PMPI library under Open MPI and MPICH: Cartesian halo exchanges (2D and 3D,
# periodic and not) stay consistent after reordering (cart_halo checks coordinates, shifts and where
# the data comes from); in the test-only cyclic placement the reordering really happens and puts fewer
# grid edges across virtual hosts, as counted by the test program from the placement's definition;
# reorder=0 and RANKMAP_DISABLE=1 leave ranks alone.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
trap 'rm -rf "$T"' EXIT

# reordered MPI NP DESC ARGS...: runs cart_halo in the cyclic fake placement (2 virtual hosts) and checks
# the outcome. The grids are chosen so that the cyclic placement is not already a best cut (it is for a
# 2x2x2 cube, where nothing can improve).
reordered() {
	m=$1; np=$2; d=$3; shift 3
	out=$T/out; err=$T/err
	RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE='pack:2 core:4' RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_REPORT=$T/report \
		pmpi_run "$m" "$np" cart_halo "$@" >"$out" 2>"$err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(field errors "$out")" = 0 ] && ok "$m $d: halo checks pass" ||
		{ notok "$m $d: exit $rc, errors $(field errors "$out")"; cat "$err" | head -5; }
	mv=$(field moved "$out"); ci=$(field cross_identity "$out"); cm=$(field cross_mapped "$out")
	[ -n "$mv" ] && [ "$mv" -gt 0 ] && ok "$m $d: ranks reordered ($mv moved)" || notok "$m $d: nothing moved"
	[ -n "$cm" ] && [ "$cm" -lt "$ci" ] && ok "$m $d: host-crossing edges $ci -> $cm" ||
		notok "$m $d: host-crossing edges $ci -> $cm"
	b=$(field cost_before "$T/report"); a=$(field cost_after "$T/report")
	lt "$a" "$b" && ok "$m $d: report cost $b -> $a" || notok "$m $d: report cost $b -> $a"
	[ "$(warnings "$err")" -eq 0 ] && ok "$m $d: no warning" || notok "$m $d: warnings: $(grep rankmap "$err")"
	rm -f "$T/report"
}

for m in $PMPI_MPIS; do
	reordered "$m" 16 "2D 4x4 periodic" 2 4 4 1 1
	reordered "$m" 8 "2D 4x2 open" 2 4 2 0 0
	reordered "$m" 16 "3D 2x2x4 periodic" 3 2 2 4 1 1 1
	reordered "$m" 12 "3D 2x2x3 open" 3 2 2 3 0 0 0

	# a grid smaller than the job: the rank left out gets MPI_COMM_NULL, the rest stay consistent
	RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic pmpi_run "$m" 10 cart_halo 2 3 3 1 0 >"$T/out" 2>"$T/err"
	[ $? -eq 0 ] && [ "$(field errors "$T/out")" = 0 ] && ok "$m: 3x3 grid on 10 ranks" ||
		{ notok "$m: 3x3 grid on 10 ranks"; head -5 "$T/err"; }

	# reorder=0: exactly the real call, no report
	RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_VERBOSE=1 pmpi_run "$m" 8 cart_halo -n 2 4 2 1 1 \
		>"$T/out" 2>"$T/err"
	[ "$(field moved "$T/out")" = 0 ] && ! grep -q '^rankmap:' "$T/err" && ok "$m: reorder=0 untouched" ||
		notok "$m: reorder=0 moved $(field moved "$T/out")"

	# RANKMAP_DISABLE=1: untouched, silent
	RANKMAP_DISABLE=1 RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_VERBOSE=1 \
		pmpi_run "$m" 8 cart_halo 2 4 2 1 1 >"$T/out" 2>"$T/err"
	[ $? -eq 0 ] && [ "$(field moved "$T/out")" = 0 ] && ! grep -q '^rankmap:' "$T/err" &&
		ok "$m: RANKMAP_DISABLE=1 untouched" || notok "$m: RANKMAP_DISABLE=1 moved $(field moved "$T/out")"

	# block placement of a 4x4 grid on 2 hosts of 8 is already optimal: never made worse
	RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE='pack:2 core:4' RANKMAP_REPORT=$T/report \
		pmpi_run "$m" 16 cart_halo 2 4 4 0 0 >"$T/out" 2>"$T/err"
	b=$(field cost_before "$T/report"); a=$(field cost_after "$T/report")
	[ "$(field errors "$T/out")" = 0 ] && ! lt "$b" "$a" && ok "$m: block placement not made worse ($b -> $a)" ||
		notok "$m: block placement $b -> $a"
	rm -f "$T/report"

	# a cluster file (the bundled PlaFRIM example: real hwloc trees and InfiniBand fabric); the virtual
	# hosts are the cluster's first hosts, their hardware the cluster's
	RANKMAP_CLUSTER=$DATA/example/cluster.conf RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic \
		RANKMAP_REPORT=$T/report pmpi_run "$m" 16 cart_halo 2 4 4 1 1 >"$T/out" 2>"$T/err"
	ci=$(field cross_identity "$T/out"); cm=$(field cross_mapped "$T/out")
	[ "$(field errors "$T/out")" = 0 ] && [ -n "$cm" ] && [ "$cm" -lt "$ci" ] && [ "$(warnings "$T/err")" -eq 0 ] &&
		ok "$m: RANKMAP_CLUSTER example cluster: crossing edges $ci -> $cm" ||
		{ notok "$m: RANKMAP_CLUSTER: $ci -> $cm"; head -3 "$T/err"; }
	rm -f "$T/report"

	# real placement (no fake): 2 ranks bound to the 2 cores, the live hwloc tree; and 4 unbound ranks
	# on 2 PUs, which cannot be placed on distinct PUs: one warning
	case $m in openmpi) bind="--bind-to core" ;; mpich) bind="-bind-to core" ;; esac
	RANKMAP_REPORT=$T/report PMPI_BIND=$bind pmpi_run "$m" 2 cart_halo 1 2 1 >"$T/out" 2>"$T/err"
	[ "$(field errors "$T/out")" = 0 ] && grep -q 'ranks=2 ' "$T/report" && [ "$(warnings "$T/err")" -eq 0 ] &&
		ok "$m: real placement, 2 bound ranks mapped" || { notok "$m: real placement"; head -3 "$T/err"; }
	rm -f "$T/report"
	npu=$(nproc)
	pmpi_run "$m" $((npu * 2)) cart_halo 1 $((npu * 2)) 1 >"$T/out" 2>"$T/err"
	[ "$(field errors "$T/out")" = 0 ] && [ "$(warnings "$T/err")" -eq 1 ] &&
		ok "$m: real placement, more ranks than PUs: $(grep '^rankmap' "$T/err")" ||
		notok "$m: oversubscribed real placement: $(warnings "$T/err") warnings"

	# RANKMAP_FAKE_NODE alone: the real host with invented hardware, ranks filling its PUs in order
	RANKMAP_FAKE_NODE='pack:2 core:8' RANKMAP_REPORT=$T/report pmpi_run "$m" 8 cart_halo 2 4 2 1 1 >"$T/out" 2>"$T/err"
	[ "$(field errors "$T/out")" = 0 ] && grep -q 'ranks=8 ' "$T/report" && [ "$(warnings "$T/err")" -eq 0 ] &&
		ok "$m: RANKMAP_FAKE_NODE on the real host" || { notok "$m: RANKMAP_FAKE_NODE alone"; head -3 "$T/err"; }
	rm -f "$T/report"

	# every engine by name
	for algo in treematch scotch; do
		RANKMAP_ALGO=$algo RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_REPORT=$T/report \
			pmpi_run "$m" 8 cart_halo 2 4 2 1 1 >"$T/out" 2>"$T/err"
		b=$(field cost_before "$T/report"); a=$(field cost_after "$T/report")
		[ "$(field errors "$T/out")" = 0 ] && lt "$a" "$b" && ok "$m: RANKMAP_ALGO=$algo ($b -> $a)" ||
			{ notok "$m: RANKMAP_ALGO=$algo ($b -> $a)"; head -3 "$T/err"; }
		rm -f "$T/report"
	done
done
finish
