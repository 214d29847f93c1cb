#!/bin/sh
# Runs every benchmark: build/tests/bench_* programs and tests/bench/*/run.sh scripts.
# Each prints its figures beside the baseline it must beat. BENCH='pattern' limits the run.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
B=${B:-build}
pat=${BENCH:-*}
rc=0
for t in "$B"/tests/bench_*; do
	[ -x "$t" ] || continue
	n=$(basename "$t"); case "$n" in $pat) ;; *) continue ;; esac
	echo "==== $n"
	"$t" || rc=1
done
for t in tests/bench/*/run.sh; do
	[ -f "$t" ] || continue
	n=$(basename "$(dirname "$t")"); case "$n" in $pat) ;; *) continue ;; esac
	echo "==== $n"
	sh "$t" || rc=1
done
exit $rc
