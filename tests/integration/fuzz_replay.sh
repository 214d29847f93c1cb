#!/bin/sh
# tests/integration/fuzz_short.sh: the short fuzz run of `make test`. Builds every libFuzzer target of
# tests/fuzz/ with clang (make fuzz-build, into $B/fuzz/), runs each for FUZZ_SECONDS seconds (default
# 20: 14 targets, about 5 minutes on 2 cores) seeded from tests/data, and replays every input kept under
# tests/data/fuzz-regressions/<target>/. Fails on any crash, sanitizer report, timeout or out-of-memory.
# The long run for release checks is `make fuzz FUZZ_SECONDS=3600` (tests/FAULTS.md).
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
command -v clang-14 >/dev/null || { notok "clang-14 is missing (make deps)"; finish; exit 1; }
if [ "${SANITIZE:-}" = 1 ]; then
	ok "# SKIP under SANITIZE=1: the fuzz targets carry ASan and UBSan themselves and run in the plain suite"
	finish; exit $?
fi
if make --no-print-directory -j2 B="$B" fuzz-build >"$BIN/fuzz-build.log" 2>&1; then
	ok "fuzz targets build ($(ls "$BIN"/fuzz/fuzz_* | grep -vc '\.log$') targets)"
else
	tail -n 20 "$BIN/fuzz-build.log"
	notok "fuzz targets build (log: $BIN/fuzz-build.log)"
	finish; exit 1
fi
B=$B FUZZ_SECONDS=${FUZZ_SECONDS:-20} sh tests/fuzz/run.sh >"$BIN/fuzz-run.out" 2>&1
rc=$?
grep -v ' passed, ' "$BIN/fuzz-run.out" | sed 's/^/# /'
res=$(tail -n 1 "$BIN/fuzz-run.out")
p=$(echo "$res" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
f=$(echo "$res" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
if [ -n "$p" ] && [ "$rc" -eq 0 ] && [ "$f" = 0 ]; then
	ok "every fuzz target ran without a crash, and every regression input replayed ($p checks)"
else
	notok "fuzz run: $res (exit $rc)"
fi
finish
