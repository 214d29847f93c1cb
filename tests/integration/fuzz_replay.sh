#!/bin/sh
# tests/integration/fuzz_replay.sh: the fuzz targets in `make test`, without fuzzing. Builds every libFuzzer
# target of tests/fuzz/ with clang (make fuzz-build, into $B/fuzz/), then runs each once on every seed
# (from tests/data), on every input of the corpus kept in $B/fuzz/corpus/<target>/ (grown by timed runs)
# and on every input kept under tests/data/fuzz-regressions/<target>/ (FUZZ_SECONDS=0 sh tests/fuzz/run.sh).
# Fails on any crash, sanitizer report, timeout or out-of-memory.
# Timed runs: `make fuzz FUZZ_SECONDS=N` (CI runs a short one after the suites; releases an hour,
# tests/FAULTS.md). Under SANITIZE=1 it is skipped (allowed in CI): the fuzz targets carry ASan and
# UBSan themselves, and the plain suite runs them.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
command -v clang-14 >/dev/null || { notok "clang-14 is missing (make deps)"; finish; exit 1; }
if [ "${SANITIZE:-}" = 1 ]; then
	skip "SANITIZE=1: the fuzz targets carry ASan and UBSan themselves, and the plain suite replays them"
	finish; exit $?
fi
if make --no-print-directory -j2 B="$B" fuzz-build >"$BIN/fuzz-build.log" 2>&1; then
	ok "fuzz targets build ($(ls "$BIN"/fuzz/fuzz_* | grep -vc '\.log$') targets)"
else
	tail -n 20 "$BIN/fuzz-build.log"
	notok "fuzz targets build (log: $BIN/fuzz-build.log)"
	finish; exit 1
fi
B=$B FUZZ_SECONDS=0 sh tests/fuzz/run.sh >"$BIN/fuzz-replay.out" 2>&1
rc=$?
grep -v ' passed, ' "$BIN/fuzz-replay.out" | sed 's/^/# /'
res=$(tail -n 1 "$BIN/fuzz-replay.out")
p=$(echo "$res" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
f=$(echo "$res" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
if [ -n "$p" ] && [ "$rc" -eq 0 ] && [ "$f" = 0 ]; then
	ok "every fuzz target replayed its seeds, corpus and regression inputs without a crash ($p checks)"
else
	notok "fuzz replay: $res (exit $rc)"
fi
finish
