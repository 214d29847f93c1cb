#!/bin/sh
# The engine guard of the PMPI library ("In jobs"): the root rank runs the mapping engine in a
# child process (RANKMAP_GUARD=fork, the default; mapping/map_guard.c). With the test-only fault hook
# RANKMAP_FAKE_ENGINE_FAULT the engine really crashes (segv), spins (hang: stopped by RANKMAP_GUARD_CPU),
# blocks (sleep: stopped by the wall-clock bound, 2 x CPU + 1 s) or grows (oom: stopped by
# RANKMAP_GUARD_MEM). Under real mpirun, Open MPI and MPICH, each job must complete within a bound,
# unreordered, with correct neighbours and exactly one "rankmap:" warning naming the engine's fate, and
# leave no process behind. Controls: without the hook the job is reordered (guarded); with the guard
# off, the same segv kills the job (so the hook is real and the guard is what saves the job).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
. "$TOP/tests/faults/lib.sh"
pmpi_check_built
T=$(mktmp) || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT PIPE TERM
BOUND=${FAULT_BOUND:-90}
unset RANKMAP_GUARD RANKMAP_GUARD_CPU RANKMAP_GUARD_MEM RANKMAP_FAKE_ENGINE_FAULT

# frun MPI NP PROG ARGS...: pmpi_run, with the ASan runtime preloaded first for a SANITIZE=1 library
frun() {
	_m=$1; _np=$2; _p=$3; shift 3
	_lib=$(pmpi_lib "$_m"); _pre=$_lib
	_rt=$(ldd "$_lib" 2>/dev/null | sed -n 's/^[[:space:]]*libasan\.so[^ ]* => \([^ ]*\).*/\1/p' | head -n 1)
	[ -n "$_rt" ] && _pre=$_rt:$_lib && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	case $_m in
	openmpi) timeout -k 5 "$PMPI_TIMEOUT" mpirun.openmpi --oversubscribe --allow-run-as-root -np "$_np" \
			-x LD_PRELOAD="$_pre" "$BIN/tests/mpi/$_m/$_p" "$@" ;;
	mpich) timeout -k 5 "$PMPI_TIMEOUT" mpirun.mpich -np "$_np" -genv LD_PRELOAD "$_pre" "$BIN/tests/mpi/$_m/$_p" "$@" ;;
	esac
}
# The jobs: 4 ranks on 2 virtual hosts, cyclic; cart_halo on a periodic ring of 4 (every edge crosses
# hosts, a reordering halves that), distgraph on its graph of 4
export RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE='pack:2 core:4' RANKMAP_FAKE_PLACEMENT=cyclic

# left MPI: processes of this build's test programs still running (ranks or engine children)
left() { pgrep -f "$BIN/tests/mpi/$1/" | wc -l; }
# gone MPI: waits until no such process is left (at most 2 s: processes still being reaped after mpirun
# returned); false when some are still there then
gone() {
	_i=0
	while [ "$(left "$1")" != 0 ]; do
		[ $_i -ge 20 ] && return 1
		sleep 0.1; _i=$((_i + 1))
	done
}

# faulty MPI FAULT TEXT PROG ARGS...: the job completes, unreordered, one warning containing TEXT
faulty() {
	m=$1; f=$2; text=$3; shift 3
	t0=$(date +%s)
	RANKMAP_FAKE_ENGINE_FAULT=$f frun "$m" 4 "$@" >"$T/out" 2>"$T/err"
	rc=$?; s=$(elapsed_since "$t0")
	[ $rc -eq 0 ] && [ "$s" -le "$BOUND" ] && ok "$m $f ($1): job completed in ${s}s" ||
		{ notok "$m $f ($1): exit $rc after ${s}s"; tail -n 5 "$T/err"; }
	[ "$(field moved "$T/out")" = 0 ] && [ "$(field errors "$T/out")" = 0 ] &&
		ok "$m $f: unreordered, neighbours correct" || notok "$m $f: $(cat "$T/out")"
	n=$(warnings "$T/err")
	[ "$n" -eq 1 ] && grep '^rankmap:' "$T/err" | grep -q "$text" &&
		ok "$m $f: one warning: $(grep '^rankmap:' "$T/err")" ||
		{ notok "$m $f: $n warnings, wanted one with \"$text\""; grep -v '^ *$' "$T/err" | head -n 5; }
	gone "$m" && ok "$m $f: no process left" || notok "$m $f: $(left "$m") processes left"
}

# an ASan build's child reports the failed allocation itself and exits with status 1
oom_text="out of memory after [0-9]* MiB"
ldd "$BIN/librankmap_mpi_openmpi.so" 2>/dev/null | grep -q libasan && oom_text="ended (status 1) without a result"
for m in $PMPI_MPIS; do
	frun "$m" 4 cart_halo 1 4 1 >"$T/out" 2>"$T/err"
	rc=$?; mv=$(field moved "$T/out")
	[ $rc -eq 0 ] && [ -n "$mv" ] && [ "$mv" -gt 0 ] && [ "$(field errors "$T/out")" = 0 ] &&
		[ "$(warnings "$T/err")" = 0 ] && ok "$m control, guarded: reordered ($mv moved), no warning" ||
		notok "$m control, guarded: $(cat "$T/out" "$T/err" | head -n 5)"

	faulty "$m" segv "engine 'auto': crashed (signal 11" cart_halo 1 4 1
	# spinning: the CPU limit, or on this oversubscribed 2-core machine the wall bound, whichever first
	RANKMAP_GUARD_CPU=1 faulty "$m" hang "engine 'auto': \(CPU time limit of 1 s reached\|no result within 3000 ms\)" \
		cart_halo 1 4 1
	RANKMAP_GUARD_CPU=1 faulty "$m" sleep "engine 'auto': no result within 3000 ms" cart_halo 1 4 1
	RANKMAP_GUARD_MEM=128 faulty "$m" oom "$oom_text" cart_halo 1 4 1
	faulty "$m" segv "MPI_Dist_graph_create_adjacent: engine 'auto': crashed (signal 11" distgraph

	# the same crash, unguarded: the job dies (the hook is real; the guard is what saves the job)
	RANKMAP_GUARD=off RANKMAP_FAKE_ENGINE_FAULT=segv frun "$m" 4 cart_halo 1 4 1 >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -ne 0 ] && [ -z "$(field moved "$T/out")" ] && ok "$m RANKMAP_GUARD=off: the same segv kills the job (exit $rc)" ||
		notok "$m RANKMAP_GUARD=off: the job survived the segv (exit $rc): the hook did not crash"
	gone "$m" || echo "# $m: stray processes after the unguarded crash: $(left "$m")"

	RANKMAP_GUARD=sometimes frun "$m" 4 cart_halo 1 4 1 >"$T/out" 2>"$T/err"
	[ "$(field moved "$T/out")" = 0 ] && [ "$(warnings "$T/err")" = 1 ] && grep -q "RANKMAP_GUARD" "$T/err" &&
		ok "$m RANKMAP_GUARD=sometimes: refused with one warning" || notok "$m bad RANKMAP_GUARD: $(cat "$T/err" | head -3)"
done
finish
