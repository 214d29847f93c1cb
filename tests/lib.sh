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
