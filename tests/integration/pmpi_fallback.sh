#!/bin/sh
# Failures inside the PMPI library never break the job: with a bad pattern, a bad cluster file, an
# unknown engine, a bad setting, too small virtual nodes or ranks that disagree on the dimensions, the
# program completes with the unreordered result and exactly one "rankmap: " warning, from one rank.
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

# fallback MPI DESC PROG NP ARGS... (environment set by the caller)
fallback() {
	m=$1; d=$2; p=$3; np=$4; shift 4
	pmpi_run "$m" "$np" "$p" "$@" >"$T/out" 2>"$T/err"; rc=$?
	[ $rc -eq 0 ] && ok "$m $d: job completed" || { notok "$m $d: exit $rc"; head -5 "$T/err"; }
	[ "$(field moved "$T/out")" = 0 ] && [ "$(field errors "$T/out")" = 0 ] && ok "$m $d: unreordered result" ||
		notok "$m $d: $(cat "$T/out")"
	n=$(warnings "$T/err")
	[ "$n" -eq 1 ] && ok "$m $d: one warning: $(grep '^rankmap:' "$T/err")" ||
		{ notok "$m $d: $n warnings"; grep '^rankmap:' "$T/err" | head -3; }
}

# named TEXT: the last job's warning says TEXT (names the file and why)
named() { grep '^rankmap:' "$T/err" | grep -qF -- "$1" && ok "  its warning says '$1'" || notok "  warning without '$1'"; }

for m in $PMPI_MPIS; do
	export RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic
	RANKMAP_PATTERN=$T/missing.mtx fallback "$m" "missing pattern" cart_halo 8 2 4 2 1 1
	RANKMAP_PATTERN=$T/garbage.mtx fallback "$m" "garbage pattern" cart_halo 8 2 4 2 1 1
	RANKMAP_PATTERN=$T/small.mtx fallback "$m" "pattern of 4 ranks" cart_halo 8 2 4 2 1 1
	RANKMAP_PATTERN=$T/fifo.mtx fallback "$m" "pattern is a FIFO" cart_halo 8 2 4 2 1 1
	named "$T/fifo.mtx: not a regular file (a FIFO)"
	RANKMAP_PATTERN=$T/zero.mtx fallback "$m" "pattern is a symlink to /dev/zero" cart_halo 8 2 4 2 1 1
	named "$T/zero.mtx: not a regular file (a character device)"
	RANKMAP_PATTERN=$T/huge.mtx fallback "$m" "pattern declaring 400000000 ranks" cart_halo 8 2 4 2 1 1
	named "huge.mtx:2: declares 400000000 ranks"
	RANKMAP_PATTERN=$T/eight.mtx RANKMAP_FILE_LIMIT_PATTERN=32 fallback "$m" "pattern over RANKMAP_FILE_LIMIT_PATTERN" \
		cart_halo 8 2 4 2 1 1
	named "eight.mtx: file too large"
	RANKMAP_CLUSTER=$T/fifo.cluster fallback "$m" "cluster file is a FIFO" cart_halo 8 2 4 2 1 1
	named "$T/fifo.cluster: not a regular file (a FIFO)"
	RANKMAP_CLUSTER=$T/missing.cluster fallback "$m" "missing cluster file" cart_halo 8 2 4 2 1 1
	RANKMAP_CLUSTER=$T/bad.cluster fallback "$m" "bad cluster file" cart_halo 8 2 4 2 1 1
	RANKMAP_ALGO=nosuch fallback "$m" "unknown engine" cart_halo 8 2 4 2 1 1
	RANKMAP_METRIC=volume fallback "$m" "bad RANKMAP_METRIC" cart_halo 8 2 4 2 1 1
	RANKMAP_FAKE_NODE='core:2' fallback "$m" "virtual nodes too small" cart_halo 8 2 4 2 1 1
	fallback "$m" "ranks disagree on dims" cart_halo 8 -d 2 4 2 1 1
	RANKMAP_ALGO=nosuch fallback "$m" "unknown engine (Graph_create)" ring_of_rings 8 2 4
	RANKMAP_ALGO=nosuch fallback "$m" "unknown engine (Dist_graph_create_adjacent)" distgraph 8
	RANKMAP_ALGO=nosuch fallback "$m" "unknown engine (Dist_graph_create)" distgraph 8 -g
	unset RANKMAP_FAKE_HOSTS RANKMAP_FAKE_PLACEMENT
done
finish
