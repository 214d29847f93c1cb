#!/bin/sh
# The tracer (RANKMAP_TRACE) under Open MPI and MPICH: the pattern of a known program matches the
# traffic counted by hand, and a traced run's pattern (RANKMAP_PATTERN) then drives a reordered run.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
trap 'rm -rf "$T"' EXIT

# cart_halo -p on a periodic ring of 4, by hand (see tests/mpi/cart_halo.c), to the +1 neighbour:
# 10 x (MPI_Send 100 ints + MPI_Isend 10 doubles + persistent 1 int) = 4840 B in 30 messages,
# the halo Sendrecv of 2 ints (8 B, 1) and the neighbour alltoall's 2 ints (8 B, 1): 4856 B, 32 messages;
# to the -1 neighbour only the alltoall: 8 B, 1 message.
expected_ring() {
	echo "4 4 8"
	for k in 0 1 2 3; do
		echo "$((k + 1)) $(((k + 1) % 4 + 1)) 4856 32"
		echo "$((k + 1)) $(((k + 3) % 4 + 1)) 8 1"
	done | sort
}

# trace_split on 8 ranks, by hand: halves {6,4,2,0} and {7,5,3,1} in that sub-rank order, each sending
# 10 bytes to the next of its half: 6->4 4->2 2->0 0->6 7->5 5->3 3->1 1->7 (world ranks; 1-based below)
expected_split() {
	echo "8 8 8"
	for p in "6 4" "4 2" "2 0" "0 6" "7 5" "5 3" "3 1" "1 7"; do
		set -- $p; echo "$(($1 + 1)) $(($2 + 1)) 10 1"
	done | sort
}

# rows PATH: the trace at PATH (bytes) and its messages file as the size line, then sorted
# "sender receiver bytes messages" lines (both files list the same entries in the same order)
rows() {
	grep -v '^%' "$1" | head -n 1
	grep -v '^%' "$1" | tail -n +2 >"$T/rows.b"
	grep -v '^%' "${1%.mtx}.messages.mtx" | tail -n +2 | awk '{ print $3 }' >"$T/rows.m"
	paste -d ' ' "$T/rows.b" "$T/rows.m" | sort
}

for m in $PMPI_MPIS; do
	RANKMAP_TRACE=$T/split.mtx pmpi_run "$m" 8 trace_split >"$T/out" 2>"$T/err"
	rows "$T/split.mtx" >"$T/got"
	expected_split >"$T/want"
	cmp -s "$T/got" "$T/want" && ok "$m: traffic on a reordered sub-communicator recorded in world ranks" ||
		{ notok "$m: sub-communicator translation"; diff "$T/want" "$T/got" | head; }
	rm -f "$T/split.mtx" "$T/split.messages.mtx"

	RANKMAP_TRACE=$T/ring.mtx pmpi_run "$m" 4 cart_halo -p 1 4 1 >"$T/out" 2>"$T/err"
	[ $? -eq 0 ] && [ -f "$T/ring.mtx" ] && ok "$m: traced run wrote the pattern" || notok "$m: no pattern written"
	head -n 1 "$T/ring.mtx" | grep -q '^%%MatrixMarket matrix coordinate' && ok "$m: Matrix Market header" ||
		notok "$m: header: $(head -n 1 "$T/ring.mtx")"
	rows "$T/ring.mtx" >"$T/got"
	expected_ring >"$T/want"
	cmp -s "$T/got" "$T/want" && ok "$m: counts match the hand count" ||
		{ notok "$m: counts differ"; diff "$T/want" "$T/got" | head; }
	ls -A "$T" | grep -q '\.tmp\.' && notok "$m: temporary file left behind" || ok "$m: no temporary file left"
	rm -f "$T/ring.mtx" "$T/ring.messages.mtx"

	# 4x2 open grid: the traffic phase loads dimension 0 only. Traced run, then a reordered run on 2
	# virtual hosts in block placement: unweighted, block is already a best cut (2 edges of dim 0 cross);
	# with the pattern the heavy dimension 0 must stay inside hosts.
	RANKMAP_TRACE=$T/grid.mtx pmpi_run "$m" 8 cart_halo -p 2 4 2 0 0 >"$T/out" 2>"$T/err"
	[ -s "$T/grid.mtx" ] && ok "$m: grid traced" || notok "$m: grid not traced"
	# the three metrics and the control run in one job (cart_halo -c): each case has its own settings
	C=$T/cases; cases_new "$C"
	for metric in bytes messages loggp; do
		case_add "$C" "2 4 2 0 0" RANKMAP_PATTERN="$T/grid.mtx" RANKMAP_METRIC=$metric RANKMAP_FAKE_HOSTS=2 \
			RANKMAP_FAKE_NODE=core:4 RANKMAP_REPORT="$T/report" >/dev/null
	done
	case_add "$C" "2 4 2 0 0" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE=core:4 >/dev/null
	# the current names: RANKMAP_MATRIX (old RANKMAP_PATTERN) and RANKMAP_ENGINE (old RANKMAP_ALGO), read
	case_add "$C" "2 4 2 0 0" RANKMAP_MATRIX="$T/grid.mtx" RANKMAP_METRIC=messages RANKMAP_ENGINE=treematch \
		RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE=core:4 >/dev/null
	case_add "$C" "2 4 2 0 0" RANKMAP_ENGINE=nosuch RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE=core:4 >/dev/null
	cases_run "$m" 8 "$C"
	k=1
	for metric in bytes messages loggp; do
		c0=$(field cross0_mapped "$C.$k.out"); c0i=$(field cross0_identity "$C.$k.out")
		[ "$(field errors "$C.$k.out")" = 0 ] && [ "$c0i" = 2 ] && [ "$c0" = 0 ] &&
			ok "$m: pattern ($metric) keeps dimension 0 inside hosts (2 -> 0)" ||
			{ notok "$m: pattern ($metric): dimension 0 crossings $c0i -> $c0"; head -3 "$C.$k.err"; }
		[ "$(warnings "$C.$k.err")" -eq 0 ] && ok "$m: $metric: no warning" || notok "$m: $(grep rankmap "$C.$k.err")"
		k=$((k + 1))
	done
	rm -f "$T/report"
	[ "$(field cross0_mapped "$C.4.out")" = 2 ] && ok "$m: without the pattern dimension 0 still crosses (control)" ||
		notok "$m: control run: $(cat "$C.4.out")"
	[ "$(field errors "$C.5.out")" = 0 ] && [ "$(field cross0_mapped "$C.5.out")" = 0 ] &&
		[ "$(warnings "$C.5.err")" -eq 0 ] && ok "$m: RANKMAP_MATRIX and RANKMAP_ENGINE: the matrix keeps dimension 0 inside hosts" ||
		notok "$m: RANKMAP_MATRIX/RANKMAP_ENGINE: $(cat "$C.5.out") $(grep rankmap "$C.5.err")"
	[ "$(warnings "$C.6.err")" -ge 1 ] && grep -q nosuch "$C.6.err" && ok "$m: RANKMAP_ENGINE=nosuch is read: one warning" ||
		notok "$m: RANKMAP_ENGINE=nosuch: $(cat "$C.6.err")"
	rm -f "$T/grid.mtx" "$T/grid.messages.mtx"
done
finish
