#!/bin/sh
# Patterns that are not what they claim, in the PMPI library, under Open MPI and MPICH:
# - RANKMAP_PATTERN applies to every topology call alike, MPI_Dist_graph_create(_adjacent) included (it
#   was silently ignored there): a pattern with one vertex per rank replaces the call's graph (its
#   weights too), a missing one or one of another size is one warning and no reordering. The applied
#   pattern is told apart from the call's own weights: distgraph's heavy pairs are k and k + 4 (8 ranks),
#   which the cyclic placement over 2 virtual hosts already keeps together, so its own graph moves
#   nothing heavy; the pattern's heavy groups are ranks 0..3 and 4..7, which the mapping then puts on
#   one host each, splitting the program's own heavy pairs (heavy_cross_mapped > heavy_cross_identity).
# - RANKMAP_FAKE_* sizes are bounded: RANKMAP_FAKE_NODE='core:99999999' hung the job (hwloc built every
#   object); now one warning naming it and no reordering. RANKMAP_FAKE_HOSTS=1000000 on 8 ranks took as
#   long; now it builds the hosts that hold ranks only, with the result of RANKMAP_FAKE_HOSTS=8.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
PMPI_TIMEOUT=60 # a hang is a failure, not a wait
T=$(mktmp)
trap 'rm -rf "$T"' EXIT

# the pattern: heavy (100) among ranks 0..3 and among ranks 4..7, light (1) between k and k + 4; 1-based
{
	echo '%%MatrixMarket matrix coordinate real general'
	echo '8 8 32'
	for k in 0 1 2 3 4 5 6 7; do
		for j in 0 1 2 3 4 5 6 7; do
			[ $j != $k ] && [ $((j / 4)) = $((k / 4)) ] && echo "$((k + 1)) $((j + 1)) 100"
		done
		echo "$((k + 1)) $(((k + 4) % 8 + 1)) 1"
	done
} >"$T/blocks.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n4 4 1\n1 2 10\n' >"$T/small.mtx"
# cases of one job share a process, where a cause is warned about once: the second function
# of each pair gets a file of its own name, so that its warning is a cause of its own
cp "$T/small.mtx" "$T/small-g.mtx"

# check MPI DESC OUT ERR MOVED NWARN [TEXT]: exit status ($rc), errors=0, moved (0 or "some"), NWARN
# warnings, the warning naming TEXT
check() {
	m=$1; d=$2; o=$3; e=$4; mv=$5; nw=$6; txt=${7:-}
	[ -s "$o" ] && [ "$(field errors "$o")" = 0 ] && ok "$m $d: completed, checks passed" ||
		{ notok "$m $d: exit $rc, $(cat "$o")"; head -3 "$e"; return; }
	moved=$(field moved "$o")
	case $mv in
	0) [ "$moved" = 0 ] && ok "  unreordered" || notok "  moved=$moved" ;;
	some) [ "$moved" -gt 0 ] && ok "  reordered (moved=$moved)" || notok "  not reordered: $(cat "$o")" ;;
	esac
	n=$(warnings "$e")
	[ "$n" = "$nw" ] && ok "  $nw warning(s)${txt:+: $(grep '^rankmap: ' "$e" | head -n 1)}" ||
		{ notok "  $n warnings, not $nw"; grep '^rankmap: ' "$e" | head -3; }
	[ -z "$txt" ] || grep '^rankmap: ' "$e" | grep -qF -- "$txt" || notok "  the warning does not name '$txt'"
}

D=$T/dg
cases_new "$D"
case_add "$D" "" RANKMAP_PATTERN="$T/missing.mtx" >/dev/null           # 1
case_add "$D" "-g" RANKMAP_PATTERN="$T/missing-g.mtx" >/dev/null       # 2
case_add "$D" "" RANKMAP_PATTERN="$T/small.mtx" >/dev/null             # 3
case_add "$D" "-g" RANKMAP_PATTERN="$T/small-g.mtx" >/dev/null         # 4
case_add "$D" "" RANKMAP_PATTERN="$T/blocks.mtx" >/dev/null             # 5
case_add "$D" "-g" RANKMAP_PATTERN="$T/blocks.mtx" >/dev/null           # 6
case_add "$D" "" >/dev/null                                            # 7: no pattern (control)
R=$T/rr
cases_new "$R"
case_add "$R" "2 4" RANKMAP_PATTERN="$T/missing.mtx" >/dev/null        # Graph_create
F=$T/fake
cases_new "$F"
G="2 2 4 1 0"
case_add "$F" "$G" RANKMAP_FAKE_NODE='core:99999999' >/dev/null                        # 1
case_add "$F" "$G" RANKMAP_FAKE_NODE='pack:100000 core:100000 pu:100000' >/dev/null    # 2: overflows
case_add "$F" "$G" RANKMAP_FAKE_HOSTS= RANKMAP_FAKE_NODE='core:88888888' >/dev/null    # 3: real hosts
case_add "$F" "$G" RANKMAP_FAKE_HOSTS=1000000 >/dev/null                               # 4
case_add "$F" "$G" RANKMAP_FAKE_HOSTS=8 >/dev/null                                     # 5
case_add "$F" "$G" RANKMAP_FAKE_NODE='2 99999999' >/dev/null                           # 6: bare arities

for m in $PMPI_MPIS; do
	export RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic
	cases_run "$m" 8 "$D" distgraph; rc=$?
	check "$m" "Dist_graph_create_adjacent, missing RANKMAP_PATTERN" "$D.1.out" "$D.1.err" 0 1 "$T/missing.mtx"
	check "$m" "Dist_graph_create, missing RANKMAP_PATTERN" "$D.2.out" "$D.2.err" 0 1 "$T/missing-g.mtx"
	check "$m" "Dist_graph_create_adjacent, pattern of 4 ranks" "$D.3.out" "$D.3.err" 0 1 "pattern has 4 ranks, the call has 8"
	check "$m" "Dist_graph_create, pattern of 4 ranks" "$D.4.out" "$D.4.err" 0 1 "pattern has 4 ranks, the call has 8"
	for k in 5 6; do
		[ $k = 5 ] && f=Dist_graph_create_adjacent || f=Dist_graph_create
		check "$m" "$f, an 8-rank pattern" "$D.$k.out" "$D.$k.err" some 0
		a=$(field heavy_cross_identity "$D.$k.out"); b=$(field heavy_cross_mapped "$D.$k.out")
		[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ] &&
			ok "  mapped by the pattern, not by the call's weights (the call's heavy pairs: $a crossing before, $b after)" ||
			notok "  the pattern was not applied: $(cat "$D.$k.out")"
	done
	a=$(field heavy_cross_identity "$D.7.out"); b=$(field heavy_cross_mapped "$D.7.out")
	expect "$m control, no pattern: the call's own weights keep its heavy pairs together ($a crossing before, $b after)" \
		test -n "$b" -a "$b" = "$a"
	cases_run "$m" 8 "$R" ring_of_rings; rc=$?
	check "$m" "Graph_create, missing RANKMAP_PATTERN" "$R.1.out" "$R.1.err" 0 1 "$T/missing.mtx"

	t0=$(date +%s)
	cases_run "$m" 8 "$F" cart_halo; rc=$?
	expect "$m RANKMAP_FAKE_* cases: the job ended by itself (exit $rc) in $(($(date +%s) - t0)) s" test $rc -ne 124 -a $rc -ne 137
	check "$m" "RANKMAP_FAKE_NODE='core:99999999'" "$F.1.out" "$F.1.err" 0 1 "RANKMAP_FAKE_NODE: 'core:99999999' describes more than"
	check "$m" "RANKMAP_FAKE_NODE of 10^15 PUs" "$F.2.out" "$F.2.err" 0 1 "RANKMAP_FAKE_NODE: 'pack:100000"
	check "$m" "RANKMAP_FAKE_NODE='core:88888888' on the real hosts" "$F.3.out" "$F.3.err" 0 1 "RANKMAP_FAKE_NODE: 'core:88888888'"
	check "$m" "RANKMAP_FAKE_NODE='2 99999999'" "$F.6.out" "$F.6.err" 0 1 "RANKMAP_FAKE_NODE: '2 99999999'"
	check "$m" "RANKMAP_FAKE_HOSTS=1000000" "$F.4.out" "$F.4.err" any 0
	expect "  the same result as RANKMAP_FAKE_HOSTS=8" test "$(sed 's/^case=4 //' "$F.4.out")" = "$(sed 's/^case=5 //' "$F.5.out")"
	unset RANKMAP_FAKE_HOSTS RANKMAP_FAKE_PLACEMENT
done
finish
