#!/bin/sh
# Failures inside the PMPI library never break the job: with a bad pattern, a bad cluster file, an
# unknown engine, a bad setting (on every rank, or on one only), too small virtual nodes or ranks that
# disagree on the dimensions, the program completes with the unreordered result and exactly one
# "rankmap: " warning, from one rank.
# The MPI_Cart_create cases run one after another in one job per MPI (cart_halo -c: the library reads its
# settings at each call; each case's standard error goes to a file of its own, its result line is
# numbered), the graph calls in jobs of their own.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
trap 'rm -rf "$T"' EXIT
printf 'hello\n' >"$T/garbage.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n4 4 1\n1 2 10\n' >"$T/small.mtx"
printf 'this is = not a cluster file\n' >"$T/bad.cluster"
# file inputs that must be refused at once (rm_file): a FIFO would block rank 0 forever, /dev/zero
# would grow it without bound, a 3-line .mtx of 400000000 ranks would allocate gigabytes
mkfifo "$T/fifo.mtx" "$T/fifo.cluster"
ln -s /dev/zero "$T/zero.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n400000000 400000000 1\n1 2 10\n' >"$T/huge.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n8 8 2\n1 2 10\n2 3 10\n' >"$T/eight.mtx"

# fallback MPI DESC PROG NP ARGS... (environment set by the caller): one job, one case
fallback() {
	m=$1; d=$2; p=$3; np=$4; shift 4
	pmpi_run "$m" "$np" "$p" "$@" >"$T/out" 2>"$T/err"; rc=$?
	outcome "$m" "$d" "$T/out" "$T/err"
}

# outcome MPI DESC OUT ERR: the checks of one case ($rc: its job's exit status), from its result line in
# OUT and its standard error ERR
outcome() {
	[ $rc -eq 0 ] && [ -s "$3" ] && ok "$1 $2: job completed" || { notok "$1 $2: exit $rc"; head -5 "$4"; }
	[ "$(field moved "$3")" = 0 ] && [ "$(field errors "$3")" = 0 ] && ok "$1 $2: unreordered result" ||
		notok "$1 $2: $(cat "$3")"
	n=$(warnings "$4")
	[ "$n" -eq 1 ] && ok "$1 $2: one warning: $(grep '^rankmap:' "$4")" ||
		{ notok "$1 $2: $n warnings"; grep '^rankmap:' "$4" | head -3; }
}

# named ERR TEXT: the case's warning says TEXT (names the file and why)
named() { grep '^rankmap:' "$1" | grep -qF -- "$2" && ok "  its warning says '$2'" || notok "  warning without '$2'"; }

# case DESC NAMED RUN [NAME=VALUE...]: a case of cart_halo on 8 ranks: its arguments RUN, its settings;
# NAMED, when not empty, is a text its warning must contain
C=$T/cases
cases_new "$C"
case_() {
	d=$1; n=$2; shift 2
	k=$(case_add "$C" "$@")
	printf '%s\n' "$d" >"$C.$k.desc"; printf '%s' "$n" >"$C.$k.named"
}
G="2 4 2 1 1"
case_ "missing pattern" "" "$G" RANKMAP_PATTERN="$T/missing.mtx"
case_ "garbage pattern" "" "$G" RANKMAP_PATTERN="$T/garbage.mtx"
case_ "pattern of 4 ranks" "" "$G" RANKMAP_PATTERN="$T/small.mtx"
case_ "pattern is a FIFO" "$T/fifo.mtx: not a regular file (a FIFO)" "$G" RANKMAP_PATTERN="$T/fifo.mtx"
case_ "pattern is a symlink to /dev/zero" "$T/zero.mtx: not a regular file (a character device)" "$G" \
	RANKMAP_PATTERN="$T/zero.mtx"
case_ "pattern declaring 400000000 ranks" "huge.mtx:2: declares 400000000 ranks" "$G" RANKMAP_PATTERN="$T/huge.mtx"
case_ "pattern over RANKMAP_FILE_LIMIT_PATTERN" "eight.mtx: file too large" "$G" RANKMAP_PATTERN="$T/eight.mtx" \
	RANKMAP_FILE_LIMIT_PATTERN=32
case_ "cluster file is a FIFO" "$T/fifo.cluster: not a regular file (a FIFO)" "$G" RANKMAP_CLUSTER="$T/fifo.cluster"
case_ "missing cluster file" "" "$G" RANKMAP_CLUSTER="$T/missing.cluster"
case_ "bad cluster file" "" "$G" RANKMAP_CLUSTER="$T/bad.cluster"
case_ "unknown engine" "" "$G" RANKMAP_ALGO=nosuch
case_ "bad RANKMAP_METRIC" "" "$G" RANKMAP_METRIC=volume
case_ "virtual nodes too small" "" "$G" RANKMAP_FAKE_NODE=core:2
# last: the program is erroneous from here on
case_ "ranks disagree on dims" "" "-d $G"
nc=$(grep -c '^run ' "$C")

# the two forms of MPI_Dist_graph_create in one job
DG=$T/dg
cases_new "$DG"
case_add "$DG" "" RANKMAP_ALGO=nosuch >/dev/null
case_add "$DG" "-g" RANKMAP_ALGO=nosuch >/dev/null

for m in $PMPI_MPIS; do
	export RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic
	cases_run "$m" 8 "$C"; rc=$?
	# nothing of the library outside the cases
	[ "$(warnings "$C.err")" -eq 0 ] || { notok "$m: warnings outside the cases"; grep '^rankmap:' "$C.err" | head -3; }
	for k in $(seq "$nc"); do
		outcome "$m" "$(cat "$C.$k.desc")" "$C.$k.out" "$C.$k.err"
		[ -s "$C.$k.named" ] && named "$C.$k.err" "$(cat "$C.$k.named")"
	done
	RANKMAP_ALGO=nosuch fallback "$m" "unknown engine (Graph_create)" ring_of_rings 8 2 4
	cases_run "$m" 8 "$DG" distgraph; rc=$?
	outcome "$m" "unknown engine (Dist_graph_create_adjacent)" "$DG.1.out" "$DG.1.err"
	# the second case of the job meets the same cause: one line per cause per process over the run
	[ "$(field moved "$DG.2.out")" = 0 ] && [ "$(field errors "$DG.2.out")" = 0 ] && [ "$(warnings "$DG.2.err")" -eq 0 ] &&
		ok "$m unknown engine (Dist_graph_create), same cause again in the job: unreordered, no second line" ||
		{ notok "$m unknown engine (Dist_graph_create) again: $(cat "$DG.2.out")"; grep '^rankmap:' "$DG.2.err" | head -3; }
	# a bad setting on one rank only (rank 5): that rank's failure is elected by the call's allreduce,
	# every rank falls back (MPICH 4.0 compared the election as signed and lost it: the job hung)
	pmpi_run_rank "$m" 8 5 RANKMAP_METRIC=volume cart_halo $G >"$T/out" 2>"$T/err"; rc=$?
	outcome "$m" "bad RANKMAP_METRIC on rank 5 only" "$T/out" "$T/err"
	named "$T/err" "RANKMAP_METRIC: 'volume'"
	unset RANKMAP_FAKE_HOSTS RANKMAP_FAKE_PLACEMENT
done
finish
