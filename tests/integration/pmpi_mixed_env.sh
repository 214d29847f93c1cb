#!/bin/sh
# Ranks of one job that disagree on RANKMAP_DISABLE, RANKMAP_LEARN or RANKMAP_TRACE (a wrapper sets the
# variable on odd ranks only), under Open MPI and MPICH: the agreement (rmp_agree) carries each rank's
# setting, so every rank takes the job-wide path (no rank waits in a collective the others skip). Each job
# must complete within a bound (it hung before: some ranks took the observed or the plain path, the others
# not), with correct neighbours, and exactly one "rankmap: " warning. Job-wide decisions: any rank disabled
# or tracing makes the call plain (unreordered); a trace is written only when every rank traces (agreed at
# MPI_Finalize, also in a program without topology calls); learning
# records a call only when every rank learns.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT PIPE TERM
BOUND=${MIXED_BOUND:-60} # seconds a job may take on a loaded machine (4 ranks, one Cart_create)

# the wrapper: RM_VAR=RM_VAL on odd ranks only, then the library under test
cat >"$T/wrap" <<'EOW'
#!/bin/sh
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
[ $((r % 2)) -eq 1 ] && export "$RM_VAR=$RM_VAL"
[ -n "$RM_ONEHOST" ] && unset RANKMAP_FAKE_HOSTS RANKMAP_FAKE_PLACEMENT
LD_PRELOAD=$RM_LIB exec "$@"
EOW
chmod +x "$T/wrap"

# lib MPI: the library under test; built with SANITIZE=1, the ASan runtime preloaded before it (full ASan
# in the library; leak checks off: MPI's own exit-time leaks)
lib() {
	_rt=$(ldd "$(pmpi_lib "$1")" 2>/dev/null | sed -n 's/^[[:space:]]*libasan\.so[^ ]* => \([^ ]*\).*/\1/p' | head -n 1)
	echo "${_rt:+$_rt:}$(pmpi_lib "$1")"
}
ldd "$(pmpi_lib openmpi)" | grep -q libasan && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" &&
	echo "# sanitized build: jobs run with the ASan runtime preloaded before the library"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}"

# job MPI VAR VALUE: cart_halo (a periodic ring of 4 ranks on 2 virtual hosts, cyclic: a reordering
# would move ranks) with VAR=VALUE on odd ranks
job() {
	m=$1 RM_VAR=$2 RM_VAL=$3
	RM_ONEHOST=${RM_ONEHOST:-}
	export RM_VAR RM_VAL RM_ONEHOST RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_LEARN_DIR=$T/learn
	t0=$(date +%s)
	case $m in
	openmpi) RM_LIB=$(lib openmpi) timeout -k 5 "$BOUND" mpirun.openmpi --oversubscribe \
			--allow-run-as-root -np 4 -x RM_LIB -x ASAN_OPTIONS -x RM_VAR -x RM_VAL -x RM_ONEHOST -x RANKMAP_FAKE_HOSTS \
			-x RANKMAP_FAKE_PLACEMENT -x RANKMAP_LEARN_DIR "$T/wrap" "$BIN/tests/mpi/openmpi/cart_halo" 1 4 1 ;;
	mpich) timeout -k 5 "$BOUND" mpirun.mpich -np 4 -genv RM_LIB "$(lib mpich)" "$T/wrap" \
			"$BIN/tests/mpi/mpich/cart_halo" 1 4 1 ;;
	esac >"$T/out" 2>"$T/err"
	rc=$?; s=$(($(date +%s) - t0))
	d="$2=$3 on odd ranks"
	[ $rc -eq 0 ] && ok "$m $d: job completed in ${s}s" || { notok "$m $d: exit $rc after ${s}s"; tail -n 5 "$T/err"; }
	[ "$(field errors "$T/out")" = 0 ] && ok "$m $d: neighbours correct" || notok "$m $d: $(cat "$T/out")"
	# one real host of a few PUs oversubscribed: the observed path's placement says so (its own cause)
	[ -n "$RM_ONEHOST" ] && sed -i '/^rankmap: .*: more ranks on this host than its /d' "$T/err"
	n=$(warnings "$T/err")
	[ "$n" -eq 1 ] && ok "$m $d: one warning: $(grep '^rankmap:' "$T/err")" ||
		{ notok "$m $d: $n warnings"; grep '^rankmap:' "$T/err" | head -n 3; }
}

for m in $PMPI_MPIS; do
	job "$m" RANKMAP_DISABLE 1
	[ "$(field moved "$T/out")" = 0 ] && ok "$m DISABLE on odd ranks: unreordered (job-wide)" ||
		notok "$m DISABLE on odd ranks: $(cat "$T/out")"
	job "$m" RANKMAP_TRACE "$T/trace.$m"
	[ "$(field moved "$T/out")" = 0 ] && ok "$m TRACE on odd ranks: unreordered (job-wide)" ||
		notok "$m TRACE on odd ranks: $(cat "$T/out")"
	[ ! -e "$T/trace.$m" ] && ok "$m TRACE on odd ranks: no partial trace written" ||
		notok "$m TRACE on odd ranks: $T/trace.$m written"
	# no topology call at all (trace_split: a split and sends): the ranks agree at MPI_Finalize alone, where
	# the tracing ranks gathered their tables and the others had left
	t0=$(date +%s)
	case $m in
	openmpi) RM_VAR=RANKMAP_TRACE RM_VAL=$T/split.$m RM_LIB=$(lib openmpi) timeout -k 5 "$BOUND" mpirun.openmpi \
			--oversubscribe --allow-run-as-root -np 4 -x RM_LIB -x ASAN_OPTIONS -x RM_VAR -x RM_VAL -x RM_ONEHOST \
			"$T/wrap" "$BIN/tests/mpi/openmpi/trace_split" ;;
	mpich) RM_VAR=RANKMAP_TRACE RM_VAL=$T/split.$m timeout -k 5 "$BOUND" mpirun.mpich -np 4 -genv RM_LIB "$(lib mpich)" \
			-genv RM_VAR RANKMAP_TRACE -genv RM_VAL "$T/split.$m" "$T/wrap" "$BIN/tests/mpi/mpich/trace_split" ;;
	esac >"$T/out" 2>"$T/err"
	rc=$?; s=$(($(date +%s) - t0))
	[ $rc -eq 0 ] && grep -q '^ok' "$T/out" && ok "$m TRACE on odd ranks, no topology call: job completed in ${s}s" ||
		{ notok "$m TRACE on odd ranks, no topology call: exit $rc after ${s}s"; tail -n 5 "$T/err"; }
	n=$(warnings "$T/err")
	[ "$n" -eq 1 ] && [ ! -e "$T/split.$m" ] &&
		ok "$m TRACE on odd ranks, no topology call: no trace, one warning: $(grep '^rankmap:' "$T/err")" ||
		{ notok "$m TRACE on odd ranks, no topology call: $n warnings"; ls "$T"; grep '^rankmap:' "$T/err" | head -n 3; }
	job "$m" RANKMAP_LEARN 1
	# one real host, no rank bound: the others would take the one-host shortcut, the learning ranks not
	RM_ONEHOST=1; job "$m" RANKMAP_LEARN 1; RM_ONEHOST=
done
finish
