# tests/mpi/common.sh: sourced by tests/integration/pmpi_*.sh after tests/lib.sh.
# Runs the MPI test programs of tests/mpi/ with the rankmap PMPI library preloaded, under Open MPI and
# MPICH. RANKMAP_* variables are passed through the environment (both launchers forward it to local
# ranks); LD_PRELOAD is given to the launcher only, so that mpirun itself does not load the library.
PMPI_MPIS="openmpi mpich"
PMPI_TIMEOUT=${PMPI_TIMEOUT:-120}
# Open MPI as root in a container: allow root, oversubscribe, no CMA single-copy (ptrace restrictions).
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Start-up and polling settings for jobs of up to 16 ranks on one host, every rank on one machine (the
# tests' jobs are short: their time is start-up and waits). Open MPI: the ob1 messaging layer over shared
# memory (self,vader) instead of probing UCX and the TCP interfaces: 8 ranks start in about 0.35 s
# instead of 0.55 s; ranks yield the CPU when idle (more ranks than cores). MPICH (ch4:ucx): UCX on
# shared memory only, without probing network devices (about 10% less per job). None of them changes
# what the library under test sees (the same ranks, hosts and communicators).
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_mpi_yield_when_idle=1
export UCX_TLS=self,sm
unset RANKMAP_DISABLE RANKMAP_ALGO RANKMAP_PATTERN RANKMAP_METRIC RANKMAP_CLUSTER RANKMAP_SOCKET RANKMAP_TRACE \
	RANKMAP_VERBOSE RANKMAP_REPORT RANKMAP_FAKE_HOSTS RANKMAP_FAKE_NODE RANKMAP_FAKE_PLACEMENT

# pmpi_lib MPI: path of the library built for MPI
pmpi_lib() { echo "$BIN/librankmap_mpi_$1.so"; }

# pmpi_run MPI NP PROG ARGS...: runs $BIN/tests/mpi/MPI/PROG on NP ranks with the library preloaded
# ($PMPI_BIND: extra launcher options, e.g. binding).
pmpi_run() {
	_m=$1; _np=$2; _p=$3; shift 3
	_lib=$(pmpi_lib "$_m")
	case $_m in
	openmpi) timeout -k 5 "$PMPI_TIMEOUT" mpirun.openmpi $PMPI_BIND --oversubscribe --allow-run-as-root -np "$_np" \
			-x LD_PRELOAD="$_lib" "$BIN/tests/mpi/$_m/$_p" "$@" ;;
	mpich) timeout -k 5 "$PMPI_TIMEOUT" mpirun.mpich $PMPI_BIND -np "$_np" -genv LD_PRELOAD "$_lib" \
			"$BIN/tests/mpi/$_m/$_p" "$@" ;;
	esac
}

# pmpi_run_rank MPI NP R 'NAME=VALUE ...' PROG ARGS...: as pmpi_run, with the settings (values without
# blanks) in rank R's environment only (a job of up to three program contexts: ranks before R, R, after)
pmpi_run_rank() {
	_m=$1; _np=$2; _r=$3; _set=$4; _p=$BIN/tests/mpi/$1/$5; shift 5
	_lib=$(pmpi_lib "$_m"); _after=$((_np - _r - 1)); _mine=
	case $_m in
	openmpi)
		for _v in $_set; do _mine="$_mine -x $_v"; done
		set -- "$_p" "$@"
		timeout -k 5 "$PMPI_TIMEOUT" mpirun.openmpi --oversubscribe --allow-run-as-root \
			$([ "$_r" -gt 0 ] && echo "-np $_r -x LD_PRELOAD=$_lib $* :") \
			-np 1 -x LD_PRELOAD="$_lib" $_mine "$@" \
			$([ "$_after" -gt 0 ] && echo ": -np $_after -x LD_PRELOAD=$_lib $*") ;;
	mpich)
		for _v in $_set; do _mine="$_mine -env ${_v%%=*} ${_v#*=}"; done
		set -- "$_p" "$@"
		timeout -k 5 "$PMPI_TIMEOUT" mpirun.mpich -genv LD_PRELOAD "$_lib" \
			$([ "$_r" -gt 0 ] && echo "-np $_r $* :") -np 1 $_mine "$@" $([ "$_after" -gt 0 ] && echo ": -np $_after $*") ;;
	esac
}

# field KEY FILE: value of KEY=value in the last line of FILE that has it
field() { sed -n "s/.*[ ]$1=\([^ ]*\).*/\1/p; s/^$1=\([^ ]*\).*/\1/p" "$2" | tail -n 1; }

# warnings FILE: number of lines starting with "rankmap: " that are not reports (the summary line and
# the per-rank "place" lines)
warnings() { grep '^rankmap: ' "$1" | grep -vc '^rankmap: report \|^rankmap: place ' ; }

# pmpi_check_built: fails the test when a library or program is missing
pmpi_check_built() {
	for _m in $PMPI_MPIS; do
		[ -f "$(pmpi_lib "$_m")" ] || { notok "$(pmpi_lib "$_m") is not built (make all test-progs)"; finish; exit 1; }
		for _p in cart_halo ring_of_rings distgraph; do
			[ -x "$BIN/tests/mpi/$_m/$_p" ] || { notok "$BIN/tests/mpi/$_m/$_p is not built"; finish; exit 1; }
		done
	done
}

# lt A B: A < B numerically (decimals allowed)
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }'; }

# Several cases in one job (-c CASES of cart_halo, ring_of_rings and distgraph, tests/mpi/cases.h): the
# library reads its settings at each topology call, so one job can run cases that would otherwise each
# start a job. cases_new FILE: an empty case file. case_add FILE RUN [NAME=VALUE...]: appends a case (the
# program's arguments RUN, run with the settings NAME=VALUE) and prints its number K. cases_run MPI NP
# FILE [PROG]: runs them with PROG (default cart_halo); the job's output in FILE.out and FILE.err, case
# K's result line in FILE.K.out and its standard error (every rank's) in FILE.K.err. Returns the job's
# exit status.
cases_new() { : >"$1"; }
case_add() {
	_f=$1 _r=$2
	shift 2
	for _e in "$@"; do echo "env $_e"; done >>"$_f"
	echo "run $_r" >>"$_f"
	grep -c '^run' "$_f"
}
cases_run() {
	_f=$3
	rm -f "$_f".*.out "$_f".*.err
	pmpi_run "$1" "$2" "${4:-cart_halo}" -c "$_f" >"$_f.out" 2>"$_f.err"
	_rc=$?
	for _k in $(seq "$(grep -c '^run' "$_f")"); do
		grep "^case=$_k " "$_f.out" >"$_f.$_k.out"
		touch "$_f.$_k.err"
	done
	return $_rc
}
