#!/bin/sh
# The PMPI library preloaded into a program of the other MPI: librankmap_mpi_openmpi.so
# into an MPICH program (under mpirun.mpich), librankmap_mpi_mpich.so into an Open MPI program (under
# mpirun.openmpi). Before, MPICH ended the job with "Invalid MPI_Op" and Open MPI with a SIGSEGV. Now the
# library sees it at load time (plugin/mpi/pmpi_check.c) and stays out of the way: every job completes,
# with the very output the program gives with no library preloaded, and exactly one "rankmap: " warning
# (from the launcher's rank 0) naming the mismatch; with RANKMAP_LEARN and RANKMAP_TRACE set nothing is
# learned nor traced. Each entry point kind is used: MPI_Init (MPI_Init_thread takes the same path, untested),
# Cart_create (with sends, persistent sends, neighbourhood collectives), Graph_create and both
# Dist_graph_create forms (reorder=1). A singleton run (no launcher) warns once too, and so does a job
# of the program under the other MPI's mpirun (two singletons, the launcher's rank variable set).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
trap 'rm -rf "$T"' EXIT
export RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_VERBOSE=1

other() { [ "$1" = openmpi ] && echo mpich || echo openmpi; }

# plain MPI NP PROG ARGS...: the program under its own launcher, no library (the expected output)
plain() {
	_m=$1; _np=$2; _p=$3; shift 3
	case $_m in
	openmpi) timeout -k 5 "$PMPI_TIMEOUT" mpirun.openmpi --oversubscribe --allow-run-as-root -np "$_np" \
			"$BIN/tests/mpi/$_m/$_p" "$@" ;;
	mpich) timeout -k 5 "$PMPI_TIMEOUT" mpirun.mpich -np "$_np" "$BIN/tests/mpi/$_m/$_p" "$@" ;;
	esac
}

# wrong MPI NAME NP PROG ARGS...: PROG of MPI under MPI's launcher with the other MPI's library; checks
# the exit status, the output (as without the library) and the one warning
wrong() {
	m=$1; n=$2; np=$3; p=$4; shift 4
	lib=$(other "$m")
	plain "$m" "$np" "$p" "$@" >"$T/$n.want" 2>"$T/$n.want.err" ||
		{ notok "$m $n: control run without the library failed (exit $?)"; grep -v '^\[' "$T/$n.want.err" | head -5; return; }
	# pmpi_run preloads the library named by its first argument into the program of its own MPI: here the
	# library of the other MPI goes into this MPI's program, so the path is given through pmpi_lib
	case $m in
	openmpi) timeout -k 5 "$PMPI_TIMEOUT" mpirun.openmpi --oversubscribe --allow-run-as-root -np "$np" \
			-x LD_PRELOAD="$(pmpi_lib "$lib")" "$BIN/tests/mpi/$m/$p" "$@" ;;
	mpich) timeout -k 5 "$PMPI_TIMEOUT" mpirun.mpich -np "$np" -genv LD_PRELOAD "$(pmpi_lib "$lib")" \
			"$BIN/tests/mpi/$m/$p" "$@" ;;
	esac >"$T/$n.out" 2>"$T/$n.err"
	rc=$?
	[ $rc -eq 0 ] && ok "$m program, $lib library, $n: job completed" ||
		{ notok "$m program, $lib library, $n: exit $rc"; grep -v '^\[' "$T/$n.err" | head -5; }
	[ -s "$T/$n.want" ] && cmp -s "$T/$n.want" "$T/$n.out" && ! grep -q '^FAIL' "$T/$n.err" &&
		ok "  output as without the library: $(head -n 1 "$T/$n.out")" ||
		{ notok "  output differs"; diff "$T/$n.want" "$T/$n.out" | head -5; }
	one_warning "$T/$n.err" "$lib"
}

# one_warning ERR LIB: exactly one warning, the mismatch's
one_warning() {
	w=$(warnings "$1")
	[ "$w" = 1 ] && grep '^rankmap: ' "$1" | grep -q "librankmap_mpi_$2.so is built for .*but this program runs another MPI" &&
		ok "  one warning: $(grep '^rankmap: ' "$1")" || { notok "  $w warnings"; grep '^rankmap: ' "$1" | head -3; }
}

for m in $PMPI_MPIS; do
	lib=$(other "$m")
	# learning and tracing asked for: the library must not start them
	RANKMAP_LEARN=1 RANKMAP_LEARN_DIR="$T/learn.$m" wrong "$m" "cart learn" 8 cart_halo -p 2 2 4 1 0
	expect "  nothing learned ($T/learn.$m not created)" test ! -e "$T/learn.$m"
	RANKMAP_TRACE="$T/trace.$m.mtx" wrong "$m" "cart trace" 8 cart_halo -p 2 2 4 1 0
	expect "  nothing traced ($T/trace.$m.mtx not written)" test ! -e "$T/trace.$m.mtx"
	RANKMAP_LEARN=1 RANKMAP_LEARN_DIR="$T/learn.$m" wrong "$m" "persistent sends" 8 persist_halo 2 4 1 0 3
	wrong "$m" "Graph_create" 8 ring_of_rings 2 4
	wrong "$m" "Dist_graph_create_adjacent" 8 distgraph
	wrong "$m" "Dist_graph_create" 8 distgraph -g
	# singleton (no launcher variable): every process warns, here the one
	env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK -u PMI_RANK -u SLURM_PROCID LD_PRELOAD="$(pmpi_lib "$lib")" \
		timeout -k 5 "$PMPI_TIMEOUT" "$BIN/tests/mpi/$m/cart_halo" 1 1 0 >"$T/single.out" 2>"$T/single.err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(field errors "$T/single.out")" = 0 ] && ok "$m program, $lib library, singleton: completed" ||
		{ notok "$m singleton: exit $rc"; head -5 "$T/single.err"; }
	one_warning "$T/single.err" "$lib"
done

# under the other launcher too (each process an independent singleton of its MPI; the launcher's rank
# variable still names rank 0): the program of MPI started by the other MPI's mpirun, with the library
# of that other MPI
for m in $PMPI_MPIS; do
	lib=$(other "$m")
	case $lib in
	openmpi) set -- mpirun.openmpi --oversubscribe --allow-run-as-root -np 2 -x LD_PRELOAD="$(pmpi_lib "$lib")" ;;
	mpich) set -- mpirun.mpich -np 2 -genv LD_PRELOAD "$(pmpi_lib "$lib")" ;;
	esac
	timeout -k 5 "$PMPI_TIMEOUT" "$@" "$BIN/tests/mpi/$m/cart_halo" 1 1 0 >"$T/x.out" 2>"$T/x.err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(grep -c 'errors=0$' "$T/x.out")" = 2 ] &&
		ok "$m program under $1 with the $lib library (2 singletons): completed, checks passed" ||
		{ notok "$m program under $1: exit $rc"; head -5 "$T/x.err"; }
	one_warning "$T/x.err" "$lib"
done

# the matching pairing is unchanged: no warning, reordered
for m in $PMPI_MPIS; do
	pmpi_run "$m" 8 cart_halo 2 2 4 1 0 >"$T/match.out" 2>"$T/match.err"
	expect "$m program, $m library: reordered as before, no warning" \
		sh -c "[ \"\$(sed -n 's/.*moved=\([0-9]*\).*/\1/p' '$T/match.out')\" -gt 0 ] && [ $(warnings "$T/match.err") = 0 ]"
done
finish
