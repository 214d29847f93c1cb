# tests/lib.sh: sourced by tests/integration/*.sh (". tests/lib.sh" relative to the top).
# ok/notok record results; skip REASON records a check that cannot run here (not a pass: tests/run.sh
# lists it, and CI fails it unless tests/README.md allows it); finish prints "N passed, N failed" (and
# ", N skipped" when there were skips) and exits accordingly.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=${B:-build}
BIN=$TOP/$B
DATA=$TOP/tests/data
_pass=0; _fail=0; _skip=0
ok()    { _pass=$((_pass + 1)); echo "ok - $*"; }
notok() { _fail=$((_fail + 1)); echo "FAIL - $*"; }
skip()  { _skip=$((_skip + 1)); echo "SKIP - $*"; }
# expect DESC CMD...: pass when CMD exits 0
expect() { d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }
# expect_fail DESC CMD...: pass when CMD exits non-zero (and did not crash with a signal)
expect_fail() {
	d=$1; shift
	"$@"; rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ]; then ok "$d"; else notok "$d (exit $rc)"; fi
}
mktmp() { mktemp -d "${TMPDIR:-/tmp}/rankmap-test.XXXXXX"; }
finish() {
	if [ "$_skip" -gt 0 ]; then echo "$_pass passed, $_fail failed, $_skip skipped"; else echo "$_pass passed, $_fail failed"; fi
	[ "$_fail" -eq 0 ]
}
# ompi_start_crash FILE: FILE (a run's stderr) shows the crash Open MPI 4.1's TCP transport has in a few
# percent of start-ups on virtual Slurm nodes, with or without rankmap: a call through a NULL callback
# in mca_btl_tcp's event handler. Open MPI's own handler reports "Process received signal"; under
# SANITIZE=1 ASan reports it first, as a jump to address 0. Callers retry only runs that crashed so
# before the program's first output.
# Open MPI 5.0 (Debian 13's 5.0.7) crashes in the same start-ups in ob1's matching of an arriving TCP
# fragment (mca_pml_ob1_recv_frag_callback_match under ompi_mpi_init), with or without rankmap; UCX's
# handler (Open MPI 5 loads UCX) reports it as "Caught signal 11".
ompi_start_crash() {
	grep -q -e 'Process received signal' \
		-e 'SEGV on unknown address 0x000000000000 (pc 0x000000000000' "$1" && return 0
	grep -q 'Caught signal 11 (Segmentation fault' "$1" && grep -q 'mca_pml_ob1_recv_frag_callback_match' "$1" &&
		grep -q 'ompi_mpi_init' "$1"
}
# ---- rankmapd in a test: one way to start it, one way to stop it, one cleanup -------------------------
# A test that needs a real rankmapd:
#   T=$(mktmp)
#   rankmapd_on_exit() { ...; }       # optional: what else the test started (called by the cleanup)
#   rankmapd_cleanup "$T"             # the cleanup trap, before the first start
#   start_rankmapd "$T/d.conf" "$T/sock" "$T/d.log" --state-dir "$T/state"   # sets D_PID
#   term_rankmapd                     # SIGTERM and its exit status; stop_rankmapd: SIGKILL
# Every rankmapd is started in the foreground on a socket of the test's scratch directory, waited for
# until it answers ping, and known by its PID only (RM_D_PIDS): the cleanup stops each one still running,
# never a process found by name.

# rankmapd_cleanup DIR: no rankmapd started yet; on EXIT stops (SIGKILL, by PID) every rankmapd that
# start_rankmapd or start_rankmapd_env started and that was not stopped since, then runs the test's
# rankmapd_on_exit if it defines one, and removes DIR (the test's scratch directory, from mktmp). HUP, INT,
# PIPE and TERM exit 1, which runs the same EXIT trap once.
rankmapd_cleanup() {
	D_PID= RM_D_PIDS=
	# shellcheck disable=SC2064
	trap "_rankmapd_exit '$1'" EXIT
	trap 'exit 1' HUP INT PIPE TERM
}
_rankmapd_exit() {
	for _p in $RM_D_PIDS; do kill -9 "$_p" 2>/dev/null && wait "$_p" 2>/dev/null; done
	D_PID= RM_D_PIDS=
	command -v rankmapd_on_exit >/dev/null 2>&1 && rankmapd_on_exit
	rm -rf "$1"
}
# _rankmapd_forget PID: PID is no longer a rankmapd of this test (stopped and reaped).
_rankmapd_forget() {
	RM_D_PIDS=$(printf '%s\n' $RM_D_PIDS | grep -vx "$1" | tr '\n' ' ')
}
# start_rankmapd CONF SOCK LOG [OPTION...]: starts a real rankmapd in the foreground with --config CONF
# and --socket SOCK (and the options given), its output appended to LOG; sets D_PID (and records it for
# the cleanup). Waits until it answers ping on SOCK (at most 30 s). Returns 0 once it answers, 1 when it
# died or never answered. A second daemon: save D_PID before starting it.
start_rankmapd() {
	start_rankmapd_env "" "$@"
}
# start_rankmapd_env ENV CONF SOCK LOG [OPTION...]: start_rankmapd with ENV, blank-separated VAR=VALUE
# words (values without blanks), added to rankmapd's environment only, not to the rankmapctl that waits
# for it (e.g. LD_PRELOAD of a simulator, RANKMAP_TEST_FAULTS=1). Sets D_PID; returns as start_rankmapd.
start_rankmapd_env() {
	_env=$1 _conf=$2 _sock=$3 _log=$4
	shift 4
	# shellcheck disable=SC2086
	env $_env "$BIN/rankmapd" --config "$_conf" --socket "$_sock" --foreground "$@" >>"$_log" 2>&1 &
	D_PID=$!
	RM_D_PIDS="$RM_D_PIDS $D_PID"
	wait_rankmapd "$_sock"
}
# wait_rankmapd SOCK: waits until the rankmapd at SOCK answers ping (at most 30 s); returns 0 once it
# answers, 1 when it never did or the process D_PID (when set) died meanwhile.
wait_rankmapd() {
	_n=0
	while [ $_n -lt 300 ]; do
		"$BIN/rankmapctl" ping --socket "$1" --timeout 1000 >/dev/null 2>&1 && return 0
		[ -z "$D_PID" ] || kill -0 "$D_PID" 2>/dev/null || return 1
		sleep 0.1
		_n=$((_n + 1))
	done
	return 1
}
# stop_rankmapd [PID]: kills (SIGKILL) the rankmapd D_PID (or PID, another one this test started) and
# reaps it; nothing when there is none. For a crash in a test; term_rankmapd stops it cleanly.
stop_rankmapd() {
	_p=${1:-$D_PID}
	[ -n "$_p" ] || return 0
	kill -9 "$_p" 2>/dev/null && wait "$_p" 2>/dev/null
	_rankmapd_forget "$_p"
	[ "$_p" = "$D_PID" ] && D_PID=
	return 0
}
# term_rankmapd [PID]: sends SIGTERM to the rankmapd D_PID (or PID) and waits for it to exit; returns
# its exit status (1 when there is none). For a clean stop between parts of a test.
term_rankmapd() {
	_p=${1:-$D_PID}
	[ -n "$_p" ] || return 1
	kill "$_p" 2>/dev/null
	wait "$_p"
	_rc=$?
	_rankmapd_forget "$_p"
	[ "$_p" = "$D_PID" ] && D_PID=
	return $_rc
}
# is_perm FILE N SLOTS: FILE (a permutation file, one slot a line) is a bijection of N ranks onto distinct
# slots below SLOTS: N lines, N distinct values, each a whole number < SLOTS. Returns 0 when it is.
is_perm() {
	[ "$(wc -l <"$1")" -eq "$2" ] || return 1
	[ "$(sort -n "$1" | uniq | wc -l)" -eq "$2" ] || return 1
	awk -v s="$3" '$1 !~ /^[0-9]+$/ || $1 >= s { bad = 1 } END { exit bad }' "$1"
}
# json_num KEY FILE: prints the number of the first "KEY": NUMBER in FILE (JSON as rankmapctl --json writes it).
json_num() {
	sed -n "s/.*\"$1\": *\([0-9.e+-]*\).*/\1/p" "$2" | head -n 1
}
# sigterm_ms PID: sends SIGTERM to PID (a rankmapd this test started and has not reaped yet) and prints
# the milliseconds until it has exited (a zombie, or gone), 10000 when it still runs by then. What is
# measured is the daemon's own delay, not the machine's load: as root, PID's threads and child processes
# and the measuring loop run at nice -20 first, so other processes' CPU use does not stretch it (a daemon
# that waits on a timer or a stuck thread still shows the wait).
sigterm_ms() {
	for _t in /proc/"$1"/task/*; do
		renice -n -20 -p "${_t##*/}" >/dev/null 2>&1
		for _c in $(cat "$_t/children" 2>/dev/null); do renice -n -20 -p "$_c" >/dev/null 2>&1; done
	done
	nice -n -20 sh -c '
		t0=$(date +%s%N); kill -TERM "$1"; n=0
		while [ $n -lt 2000 ] && [ -r /proc/"$1"/stat ] && [ "$(cut -d" " -f3 /proc/"$1"/stat 2>/dev/null)" != Z ]; do
			sleep 0.005; n=$((n + 1))
		done
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		[ $n -lt 2000 ] && echo "$ms" || echo 10000' sh "$1" 2>/dev/null
}
