#!/bin/sh
# What other people's MPI test suites check of topology calls, under Open MPI and MPICH with
# the PMPI library preloaded (tests/mpi/topomap.c does the checks on every rank):
#   - MPI_Cart_map / MPI_Graph_map answer the rank the constructor gives, map first or create first,
#     periodic or not, on all ranks and on fewer; with the test-only multi-host placement the library
#     really reorders (some pairs must move ranks), and without it;
#   - Cartesian helpers, MPI_Cart_sub, MPI_Comm_dup, graph neighbours, distributed graphs with weights,
#     MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY, MPI_Neighbor_alltoall;
#   - many topology calls in one run (46 per case, 5 cases in one job): nothing on standard error where
#     nothing fails (more ranks than PUs on one host included), exactly one warning line for a cause met
#     by every call, more with RANKMAP_VERBOSE=1; 30 shapes on one communicator with MPI_Cart_map on one
#     rank only (what that rank remembers beyond the others must not change its branch);
#   - 16 ranks on this machine's cores (oversubscribed), distributed graphs with reorder=1 called over
#     and over: within a bound set by the same run with RANKMAP_DISABLE=1 (MPICH's distgraph1 under
#     Open MPI stalled at 7 and 16 ranks).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
trap 'rm -rf "$T"' EXIT
for m in $PMPI_MPIS; do
	[ -x "$BIN/tests/mpi/$m/topomap" ] || { notok "$BIN/tests/mpi/$m/topomap is not built"; finish; exit 1; }
done

C=$T/cases
cases_new "$C"
case_add "$C" "" >/dev/null
case_add "$C" "" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE=core:3 RANKMAP_FAKE_PLACEMENT=cyclic >/dev/null
# every call meets the same cause: 3 ranks on a virtual host of 1 PU
case_add "$C" "" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE=core:1 >/dev/null
case_add "$C" "" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE=core:1 RANKMAP_VERBOSE=1 >/dev/null
# 30 shapes on one communicator, MPI_Cart_map on rank 0 only: what rank 0 remembers beyond the others
# (its promises) never sends it down another branch (the job would hang)
case_add "$C" "-e" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE=core:3 RANKMAP_FAKE_PLACEMENT=cyclic >/dev/null

for m in $PMPI_MPIS; do
	cases_run "$m" 5 "$C" topomap
	rc=$?
	[ "$rc" -eq 0 ] && ok "$m: 5 cases ran (exit 0)" || { notok "$m: exit $rc"; tail -5 "$C.err"; }
	[ ! -s "$C.err" ] && ok "$m: nothing on standard error outside the cases" ||
		{ notok "$m: standard error outside the cases:"; head -3 "$C.err"; }
	for k in 1 2 3 4 5; do
		e=$(field errors "$C.$k.out"); n=$(field calls "$C.$k.out")
		[ "$e" = 0 ] && [ "${n:-0}" -gt 0 ] && ok "$m case $k: $n topology calls, every check passes" ||
			{ notok "$m case $k: errors=$e calls=$n"; grep FAIL "$C.$k.err" | head -3; }
	done
	# real placement: more ranks than PUs on one host, or every rank on one host unbound: silent
	[ ! -s "$C.1.err" ] && ok "$m: default setting, $(field calls "$C.1.out") calls: standard error empty" ||
		{ notok "$m: default setting printed:"; sort "$C.1.err" | uniq -c | head -3; }
	r=$(field reordered "$C.2.out")
	[ "${r:-0}" -gt 0 ] && ok "$m: multi-host placement: $r map/create pairs moved ranks, all agreed" ||
		notok "$m: multi-host placement: nothing reordered ($r), the agreement is not tested"
	[ ! -s "$C.2.err" ] && ok "$m: multi-host placement: standard error empty" ||
		{ notok "$m: multi-host placement printed:"; head -3 "$C.2.err"; }
	w=$(warnings "$C.3.err"); l=$(wc -l <"$C.3.err")
	[ "$w" -eq 1 ] && [ "$l" -eq 1 ] && grep -q 'fewer than its' "$C.3.err" &&
		ok "$m: one cause met by $(field calls "$C.3.out") calls: one line in all ($(cut -c1-60 "$C.3.err")...)" ||
		{ notok "$m: $w warnings, $l lines for one cause:"; sort "$C.3.err" | uniq -c | head -3; }
	w=$(warnings "$C.4.err")
	[ "$w" -gt 1 ] && ok "$m: RANKMAP_VERBOSE=1: $w warning lines" || notok "$m: RANKMAP_VERBOSE=1: $w warning lines"
done

# oversubscribed: 16 ranks, 6 rounds of 6 distributed graphs with reorder=1, beside the same run with
# the library off (RANKMAP_DISABLE=1: the real calls only)
for m in $PMPI_MPIS; do
	t0=$(date +%s.%N)
	RANKMAP_DISABLE=1 pmpi_run "$m" 16 topomap -d -r 6 >"$T/plain.out" 2>"$T/plain.err"
	rc0=$?
	t1=$(date +%s.%N)
	pmpi_run "$m" 16 topomap -d -r 6 >"$T/out" 2>"$T/err"
	rc=$?
	t2=$(date +%s.%N)
	plain=$(echo "$t1 - $t0" | bc); lib=$(echo "$t2 - $t1" | bc); bound=$(echo "3 * $plain + 10" | bc)
	[ "$rc0" -eq 0 ] || notok "$m: 16 ranks, library off: exit $rc0 ($(tail -1 "$T/plain.err"))"
	[ "$rc" -eq 0 ] && [ "$(field errors "$T/out")" = 0 ] && [ "$(field calls "$T/out")" = 36 ] &&
		ok "$m: 16 oversubscribed ranks, 36 dist-graph calls: checks pass" ||
		{ notok "$m: 16 ranks: exit $rc $(tail -1 "$T/out")"; tail -3 "$T/err"; }
	lt "$lib" "$bound" && ok "$m: 16 ranks: ${lib} s with the library, ${plain} s without (bound ${bound} s)" ||
		notok "$m: 16 ranks: ${lib} s with the library, ${plain} s without (bound ${bound} s)"
	[ ! -s "$T/err" ] && ok "$m: 16 ranks: standard error empty" || { notok "$m: 16 ranks printed:"; head -3 "$T/err"; }
done
finish
