#!/bin/sh
# tests/integration/make_run.sh: `make run` (scripts/run.sh) end to end, and its clean-up when its
# output pipe closes early (make run | head): no daemon and no temporary directory may be left behind.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
T=$(mktmp)
trap 'rm -rf "$T"' EXIT

mkdir "$T/full" "$T/head"
TMPDIR="$T/full" B=$B sh scripts/run.sh >"$T/full.out" 2>&1
expect "make run succeeds" [ $? -eq 0 ]
expect "make run prints the mapping cost after reordering" grep -q 'mapping cost after reordering' "$T/full.out"
expect "make run stops the daemon and ends with done" sh -c "tail -n 1 '$T/full.out' | grep -qx done"

# The reader goes away after two lines. SIGPIPE is restored to its default for the script, as in an
# interactive shell (a test runner may ignore it, which would hide the bug).
python3 -c '
import signal, subprocess, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
subprocess.run(sys.argv[1], shell=True)
' "TMPDIR='$T/head' B=$B sh scripts/run.sh 2>/dev/null | head -n 2 >/dev/null"
n=0; while [ $n -lt 50 ] && [ -n "$(ls -A "$T/head")" ]; do sleep 0.1; n=$((n + 1)); done
expect "make run | head leaves no temporary directory" [ -z "$(ls -A "$T/head")" ]
left=$(ps -eo pid=,args= | grep -F "$T/head/" | grep -v grep | awk '{print $1}')
expect "make run | head leaves no daemon running" [ -z "$left" ]
for p in $left; do kill "$p" 2>/dev/null; done
finish
