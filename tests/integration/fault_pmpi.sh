#!/bin/sh
# Fault injection for the PMPI library (plugin/mpi), Open MPI and MPICH, real mpirun and the test
# programs of tests/mpi/: a rankmapd that stalls past the library's timeout, answers half a frame,
# announces a 1 GiB frame, answers garbage or hangs up (tests/faults/fake_rankmapd.py); a pattern that
# is a directory, and a pattern the user cannot read (chmod 000, job run as an unprivileged user).
# Each job must complete (bounded by timeout: never hang), unreordered with correct neighbours, with
# exactly one "rankmap: " warning, and the fake daemon must really have been asked (the fault was hit).
# Covered elsewhere, not repeated here (tests/FAULTS.md): daemon missing (pmpi_daemon.sh), ranks
# disagreeing on Cart_create dims, missing or garbage patterns, bad settings (pmpi_fallback.sh).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
. "$TOP/tests/faults/lib.sh"
pmpi_check_built
T=$(mktmp)
chmod 755 "$T"
trap 'fake_stop; rm -rf "$T"' EXIT
trap 'exit 1' HUP INT PIPE TERM
BOUND=${FAULT_BOUND:-90}   # seconds a faulty job may take on a loaded machine (library timeout: 5 s)
# The daemon faults run with a 1 s daemon timeout (RANKMAP_TIMEOUT_MS): the library's reaction is the same
# at any timeout, and five stalls of 5 s under two MPIs would be most of this test's time. One case, Open
# MPI against the stalling daemon, keeps the default 5 s.
FAST_TIMEOUT_MS=1000

# job MPI DESC [RUNAS...]: runs cart_halo (a periodic ring of 4 ranks on 2 virtual hosts, cyclic: every
# edge crosses hosts, a reordering would halve that) and checks the outcome
job() {
	m=$1; d=$2; shift 2
	t0=$(date +%s)
	"$@" sh -c '. "$1"; shift; frun "$@"' _ "${ENVSH:-$T/env.sh}" "$m" 4 cart_halo 1 4 1 >"$T/out" 2>"$T/err"
	rc=$?; s=$(elapsed_since "$t0")
	[ $rc -eq 0 ] && [ "$s" -le "$BOUND" ] && ok "$m $d: job completed in ${s}s" ||
		{ notok "$m $d: exit $rc after ${s}s"; tail -n 5 "$T/err"; }
	[ "$(field moved "$T/out")" = 0 ] && [ "$(field errors "$T/out")" = 0 ] &&
		ok "$m $d: unreordered, neighbours correct" || notok "$m $d: $(cat "$T/out")"
	n=$(warnings "$T/err")
	[ "$n" -eq 1 ] && ok "$m $d: one warning: $(grep '^rankmap:' "$T/err")" ||
		{ notok "$m $d: $n warnings"; grep '^rankmap:' "$T/err" | head -n 3; }
}

# env.sh: what pmpi_run needs in a fresh shell (also as another user); envfile TOP BIN writes it
envfile() {
	echo "TOP='$1'; BIN='$2'"
	echo ". '$1/tests/mpi/common.sh'"
	echo "export RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic"
	echo '[ -n "$FAULT_SOCKET" ] && export RANKMAP_SOCKET=$FAULT_SOCKET'
	echo '[ -n "$FAULT_PATTERN" ] && export RANKMAP_PATTERN=$FAULT_PATTERN'
	echo '[ -n "$FAULT_TIMEOUT_MS" ] && export RANKMAP_TIMEOUT_MS=$FAULT_TIMEOUT_MS'
	cat <<'EOS'
# frun MPI NP PROG ARGS...: pmpi_run, except that a library built with SANITIZE=1 gets the ASan runtime
# preloaded before it (full ASan in the library; leak checks off: MPI's own exit-time leaks)
frun() {
	_m=$1; _np=$2; _p=$3; shift 3
	_lib=$(pmpi_lib "$_m"); _pre=$_lib
	_rt=$(ldd "$_lib" 2>/dev/null | sed -n 's/^[[:space:]]*libasan\.so[^ ]* => \([^ ]*\).*/\1/p' | head -n 1)
	if [ -n "$_rt" ]; then
		_pre=$_rt:$_lib
		export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	fi
	case $_m in
	openmpi) timeout -k 5 "$PMPI_TIMEOUT" mpirun.openmpi --oversubscribe --allow-run-as-root -np "$_np" \
			-x LD_PRELOAD="$_pre" "$BIN/tests/mpi/$_m/$_p" "$@" ;;
	mpich) timeout -k 5 "$PMPI_TIMEOUT" mpirun.mpich -np "$_np" -genv LD_PRELOAD "$_pre" "$BIN/tests/mpi/$_m/$_p" "$@" ;;
	esac
}
EOS
}
envfile "$TOP" "$BIN" >"$T/env.sh"
if ldd "$(pmpi_lib openmpi)" | grep -q libasan; then
	echo "# sanitized build: jobs run with the ASan runtime preloaded before the library (LD_PRELOAD=libasan:lib)"
fi

for mode in stall half huge garbage close; do
	sock=$T/$mode.sock
	fake_start "$mode" "$sock" || { notok "fake rankmapd ($mode) starts"; continue; }
	for m in $PMPI_MPIS; do
		before=$(fake_clients "$sock")
		tmo=$FAST_TIMEOUT_MS d="rankmapd $mode"
		[ "$m $mode" = "openmpi stall" ] && tmo= d="rankmapd $mode (default timeout)"
		FAULT_SOCKET=$sock FAULT_TIMEOUT_MS=$tmo job "$m" "$d"
		[ "$(fake_clients "$sock")" -gt "$before" ] && ok "$m rankmapd $mode: the library did reach the faulty daemon" ||
			notok "$m rankmapd $mode: the fake daemon saw no client (fault not exercised)"
	done
	fake_stop
done

mkdir "$T/pattern.d"
for m in $PMPI_MPIS; do
	FAULT_PATTERN=$T/pattern.d job "$m" "pattern is a directory"
done

# chmod 000 only stops a non-root user: as root, the job runs as nobody, from a copy of the libraries,
# cart_halo and common.sh under $T (mode 755), so that it does not depend on where the tree is checked out.
printf '%%%%MatrixMarket matrix coordinate real general\n4 4 1\n1 2 10\n' >"$T/secret.mtx"
chmod 000 "$T/secret.mtx"
RUNAS="setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env"
NB=$T/nobody
mkdir -p "$NB/tests/mpi" && cp "$TOP/tests/mpi/common.sh" "$NB/tests/mpi/"
for m in $PMPI_MPIS; do
	mkdir -p "$NB/tests/mpi/$m" && cp "$BIN/tests/mpi/$m/cart_halo" "$NB/tests/mpi/$m/" && cp "$(pmpi_lib "$m")" "$NB/"
done
chmod -R a+rX "$NB"
envfile "$NB" "$NB" >"$T/env-nobody.sh"
chmod 644 "$T/env-nobody.sh"
if [ "$(id -u)" != 0 ]; then
	for m in $PMPI_MPIS; do FAULT_PATTERN=$T/secret.mtx job "$m" "unreadable pattern (chmod 000)"; done
elif $RUNAS test -x "$NB/tests/mpi/openmpi/cart_halo" && ! $RUNAS test -r "$T/secret.mtx"; then
	for m in $PMPI_MPIS; do
		ENVSH=$T/env-nobody.sh FAULT_PATTERN=$T/secret.mtx job "$m" "unreadable pattern (chmod 000, as nobody)" \
			$RUNAS env FAULT_PATTERN="$T/secret.mtx" HOME=/tmp TMPDIR=/tmp PATH="$PATH"
	done
else
	notok "unreadable pattern: user nobody cannot run $NB/tests/mpi/openmpi/cart_halo, or can read a chmod 000 file"
fi
finish
