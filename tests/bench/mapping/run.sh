#!/bin/sh
# tests/bench/mapping/run.sh: auto at its two default budgets (a job's, and rankmapctl map's offline
# default: at least 100 ms), 1 s and 10 s beside Scotch 7 and the identity
# on gen_instances.py's instances (bench_quality.c), every mapping then costed again by score.py, the
# scorer that shares no code with the engines; the figures of VieM, Mt-KaHyPar and SharedMap are in
# RESULTS.md (peers.txt, when present, puts them beside auto: bench_quality.c).
#   BENCH_QUALITY_BUDGETS=1000,10000   auto's budgets beyond the default (CPU ms, all threads)
#   BENCH_MAPPING_ONLY=TEXT            only the instances whose name contains TEXT
#   BENCH_MAPPING_LARGE=1              the 65,536-rank grid too
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top" || exit 1
B=${B:-build}
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT PIPE TERM
python3 tests/bench/mapping/gen_instances.py "$T/in" ${BENCH_MAPPING_LARGE:+--large} \
	${BENCH_MAPPING_ONLY:+--only "$BENCH_MAPPING_ONLY"} >/dev/null || exit 1
mkdir "$T/out"
"$B/tests/mapping/bench_quality" "$T/in" "$T/out" || exit 1
n=0 bad=0
for p in "$T"/out/*.perm; do
	[ -f "$p" ] || continue
	b=$(basename "$p" .perm) name=${b%%.*}
	got=$(python3 tests/bench/mapping/score.py "$T/in/$name.graph" "$T/in/$name.tleaf" "$p" | awk '{ print $3 }')
	want=$(cat "$T/out/$b.cost")
	n=$((n + 1))
	if [ "$got" != "$want" ]; then
		echo "score.py: $b costs $got, the bench printed $want"
		bad=$((bad + 1))
	fi
done
echo "score.py costed the $n mappings again: $bad differ from the figures above"
[ "$bad" -eq 0 ]
