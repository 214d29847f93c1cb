#!/bin/sh
# tests/bench/e2e/run.sh: the end-to-end benchmark: what reordering does to run time (`make bench-e2e`, also run by `make bench`).
# Simulated communication time under SimGrid SMPI for block, cyclic and rankmap-reordered placements;
# prints the table and the targets, writes tests/bench/e2e/out/{table.txt,chart.svg,results.json,runs.log}.
# Environment: B (build directory), E2E_QUICK=1 (fewer iterations, no 1024-rank cases), E2E_ONLY='pattern'
# (scenario names), E2E_JOBS (parallel simulations, default 2), E2E_OUT (output directory).
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top" || exit 1
B=${B:-build}
if ! command -v smpirun >/dev/null 2>&1 || ! command -v smpicc >/dev/null 2>&1; then
	echo "e2e: skip: SimGrid SMPI is not installed (make bench-e2e installs libsimgrid-dev)"
	exit 0
fi
# always through make (incremental): programs left from an older build would measure older code
make --no-print-directory B="$B" bench-e2e-progs >/dev/null || { echo "e2e: cannot build the SMPI programs"; exit 1; }
set -- --bin "$top/$B/tests/e2e" --jobs "${E2E_JOBS:-2}" --only "${E2E_ONLY:-*}"
[ -n "$E2E_OUT" ] && set -- "$@" --out "$E2E_OUT"
[ "${E2E_QUICK:-0}" = 1 ] && set -- "$@" --quick
exec python3 tests/bench/e2e/e2e.py "$@"
