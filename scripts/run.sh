#!/bin/sh
# `make run`: the main job on the bundled example cluster (tests/data/example: PlaFRIM's hwloc trees
# and InfiniBand fabric), end to end:
#   1. start rankmapd on that cluster with a temporary socket and state directory;
#   2. print the cluster report through the daemon (rankmapctl report --socket);
#   3. run a small Cartesian MPI program (4x4 periodic halo exchange, 16 ranks, Open MPI) with the
#      rankmap library preloaded and RANKMAP_SOCKET set, in the test-only cyclic placement over two
#      virtual hosts, and print the mapping cost before and after reordering;
#   4. stop the daemon.
# Usage: make run   (or sh scripts/run.sh after make all; B= names the build directory)
set -eu
cd "$(dirname "$0")/.."
TOP=$(pwd)
B=${B:-build}
BIN=$TOP/$B
NP=16
PROG=$BIN/tests/mpi/openmpi/cart_halo
LIB=$BIN/librankmap_mpi_openmpi.so

die() { echo "make run: $*" >&2; exit 1; }

[ -x "$BIN/rankmapd" ] && [ -x "$BIN/rankmapctl" ] || die "$B/rankmapd not built: run make all (after make deps)"
[ -f "$LIB" ] || die "$B/librankmap_mpi_openmpi.so not built: run make all (after make deps)"
command -v mpirun.openmpi >/dev/null || die "mpirun.openmpi not found: run make deps"
# The MPI program is a test program; build just that one (quietly) if it is missing.
[ -x "$PROG" ] || make --no-print-directory -s B="$B" "$B/tests/mpi/openmpi/cart_halo" >/dev/null || die "cannot build $PROG"

T=$(mktemp -d "${TMPDIR:-/tmp}/rankmap-run.XXXXXX")
SOCK=$T/rankmapd.sock
DPID=
stop_daemon() {
	if [ -n "$DPID" ]; then
		kill "$DPID" 2>/dev/null || true
		wait "$DPID" 2>/dev/null || true
		DPID=
	fi
}
cleanup() { trap '' PIPE; stop_daemon; rm -rf "$T"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
# A closed output pipe (make run | head) must not kill the shell before it stops the daemon: the
# shell's own writes then raise SIGPIPE, which ends the script through the EXIT trap instead.
trap 'exit 141' PIPE

echo "== 1. rankmapd on tests/data/example/cluster.conf (socket $SOCK)"
cat >"$T/rankmapd.conf" <<EOF
cluster = $TOP/tests/data/example/cluster.conf
socket = $SOCK
state_dir = $T/state
log_level = warning
EOF
"$BIN/rankmapd" --config "$T/rankmapd.conf" --foreground 2>"$T/rankmapd.log" &
DPID=$!
n=0
until "$BIN/rankmapctl" ping --socket "$SOCK" >/dev/null 2>&1; do
	n=$((n + 1))
	if [ $n -gt 100 ] || ! kill -0 "$DPID" 2>/dev/null; then
		cat "$T/rankmapd.log" >&2
		die "rankmapd did not start"
	fi
	sleep 0.1
done
"$BIN/rankmapctl" ping --socket "$SOCK" | sed 's/^/   /'

echo
echo "== 2. rankmapctl report --socket $SOCK   (anomalies counted; the full list: add --all)"
"$BIN/rankmapctl" report --socket "$SOCK" >"$T/report.txt"
sed '/^Anomalies:/q' "$T/report.txt"

echo
echo "== 3. 4x4 periodic halo exchange, $NP ranks (Open MPI), librankmap_mpi_openmpi.so preloaded,"
echo "      RANKMAP_SOCKET set, cyclic placement over 2 virtual hosts of 2 sockets x 4 cores"
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
RANKMAP_SOCKET=$SOCK RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE='pack:2 core:4' RANKMAP_FAKE_PLACEMENT=cyclic \
	RANKMAP_REPORT=$T/report mpirun.openmpi --oversubscribe --allow-run-as-root -np $NP \
	-x LD_PRELOAD="$LIB" -x RANKMAP_SOCKET -x RANKMAP_FAKE_HOSTS -x RANKMAP_FAKE_NODE \
	-x RANKMAP_FAKE_PLACEMENT -x RANKMAP_REPORT "$PROG" 2 4 4 1 1 >"$T/mpi.out" 2>"$T/mpi.err" ||
	{ cat "$T/mpi.err" >&2; die "the MPI program failed"; }
[ -s "$T/report" ] || { cat "$T/mpi.err" >&2; die "the rankmap library wrote no report"; }
# rank 0 of the library wrote one line: fn=... algo=... cost_before=X cost_after=Y moved=M ...
field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | head -1; }
before=$(field "$T/report" cost_before)
after=$(field "$T/report" cost_after)
pct=$(awk -v b="$before" -v a="$after" 'BEGIN { printf "%.0f", (b > 0 ? 100 * (1 - a / b) : 0) }')
echo "   mapping cost before reordering: $before"
echo "   mapping cost after reordering:  $after ($pct% lower; engine $(field "$T/report" algo)," \
	"$(field "$T/report" moved) of $NP ranks moved)"
echo "   halo edges between the two hosts (counted by the program): $(field "$T/mpi.out" cross_identity) before," \
	"$(field "$T/mpi.out" cross_mapped) after; halo checks failed: $(field "$T/mpi.out" errors)"
grep '^rankmap' "$T/mpi.err" | sed 's/^/   /' || true
echo
echo "== 4. stopping rankmapd (pid $DPID)"
stop_daemon
echo "done"
