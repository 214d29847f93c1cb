#!/bin/sh
# Runs every unit test binary (build/tests/test_*) and every integration script (tests/integration/*.sh).
# Each prints "N passed, N failed" as its last line; this sums them and prints the total as ours.
# TESTS='pattern' limits the run to names matching the shell pattern. Per-test timeout: TEST_TIMEOUT (s).
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
B=${B:-build}
pat=${TESTS:-*}
tmo=${TEST_TIMEOUT:-900}
logdir=$B/test-logs
mkdir -p "$logdir"
tp=0; tf=0; broken=""
run_one() { # name, command...
	name=$1; shift
	case "$name" in $pat) ;; *) return ;; esac
	log="$logdir/$name.log"
	start=$(date +%s)
	timeout -k 10 "$tmo" "$@" >"$log" 2>&1
	rc=$?
	end=$(date +%s)
	last=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 | sed 's/^[A-Za-z]*: //')
	p=$(echo "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
	f=$(echo "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
	if [ -z "$p" ]; then p=0; f=1; fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	tp=$((tp + p)); tf=$((tf + f))
	status=ok; [ "$f" -ne 0 ] && { status=FAIL; broken="$broken $name"; }
	printf '%-40s %-4s %4d passed %3d failed  %4ss\n' "$name" "$status" "$p" "$f" "$((end - start))"
	if [ "$f" -ne 0 ]; then
		echo "---- last lines of $log (exit $rc) ----"
		grep -E 'FAIL|fail|error|Error' "$log" | tail -n 15
		tail -n 15 "$log"
		echo "----"
	fi
}
for t in "$B"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	run_one "$(basename "$t" .sh)" sh "$t"
done
[ -n "$broken" ] && echo "failing:$broken"
echo "$tp passed, $tf failed"
[ "$tf" -eq 0 ]
