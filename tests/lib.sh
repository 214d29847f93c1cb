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
ompi_start_crash() {
	grep -q -e 'Process received signal' \
		-e 'SEGV on unknown address 0x000000000000 (pc 0x000000000000' "$1"
}
# start_rankmapd CONF SOCK LOG [OPTION...]: starts a real rankmapd in the foreground with --config CONF
# and --socket SOCK (and the options given), its output appended to LOG; sets D_PID. Waits until it
# answers ping on SOCK (at most 30 s). Returns 0 once it answers, 1 when it died or never answered.
start_rankmapd() {
	_conf=$1 _sock=$2 _log=$3
	shift 3
	"$BIN/rankmapd" --config "$_conf" --socket "$_sock" --foreground "$@" >>"$_log" 2>&1 &
	D_PID=$!
	_n=0
	while [ $_n -lt 300 ]; do
		"$BIN/rankmapctl" ping --socket "$_sock" --timeout 1000 >/dev/null 2>&1 && return 0
		kill -0 "$D_PID" 2>/dev/null || return 1
		sleep 0.1
		_n=$((_n + 1))
	done
	return 1
}
# stop_rankmapd: kills (SIGKILL) the rankmapd that start_rankmapd started, by its PID, and reaps it;
# nothing when there is none. For cleanup traps: a test of shutdown sends its own SIGTERM.
stop_rankmapd() {
	[ -n "$D_PID" ] && kill -9 "$D_PID" 2>/dev/null && wait "$D_PID" 2>/dev/null
	D_PID=
}
