# tests/lib.sh: sourced by tests/integration/*.sh (". tests/lib.sh" relative to the top).
# ok/notok record results; finish prints "N passed, N failed" and exits accordingly.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=${B:-build}
BIN=$TOP/$B
DATA=$TOP/tests/data
_pass=0; _fail=0
ok()    { _pass=$((_pass + 1)); echo "ok - $*"; }
notok() { _fail=$((_fail + 1)); echo "FAIL - $*"; }
# expect DESC CMD...: pass when CMD exits 0
expect() { d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }
# expect_fail DESC CMD...: pass when CMD exits non-zero (and did not crash with a signal)
expect_fail() {
	d=$1; shift
	"$@"; rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ]; then ok "$d"; else notok "$d (exit $rc)"; fi
}
mktmp() { mktemp -d "${TMPDIR:-/tmp}/rankmap-test.XXXXXX"; }
finish() { echo "$_pass passed, $_fail failed"; [ "$_fail" -eq 0 ]; }
