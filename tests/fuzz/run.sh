#!/bin/sh
# tests/fuzz/run.sh: runs every libFuzzer target of $B/fuzz/ for FUZZ_SECONDS seconds (default 30), then
# replays the inputs of tests/data/fuzz-regressions/<target>/. Prints, per target, the executions and
# crashes, and "N passed, N failed" last (one check per target run and per regression directory).
# FUZZ_SECONDS=0 fuzzes nothing: it replays, once each, the seeds, the corpus kept in $B/fuzz/corpus/
# and the regression inputs (what `make test` runs, tests/integration/fuzz_replay.sh).
# Seeds come from tests/data at run time (see seed() below); the corpus grows in $B/fuzz/corpus/<target>
# (kept between runs, so long runs build on short ones). Crashing inputs are kept in
# $B/fuzz/artifacts/<target>/ and named in the output.
# FUZZ_TARGETS='pattern' limits the targets (shell pattern on the name, e.g. 'fuzz_ib_*').
# Run from the repository top (make fuzz does).
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
B=${B:-build}
S=${FUZZ_SECONDS:-30}
pat=${FUZZ_TARGETS:-fuzz_*}
D=$top/tests/data
REG=$D/fuzz-regressions
FUZZ_DATA=$D
export FUZZ_DATA
T=$(mktemp -d "${TMPDIR:-/tmp}/rankmap-fuzzrun.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM HUP
TMPDIR=$T
export TMPDIR
pass=0; fail=0
# Leaks inside hwloc on malformed input are suppressed by function name (tests/fuzz/lsan.supp), which
# needs full stacks: targets that load hwloc XML unwind malloc stacks slowly.
LSAN_OPTIONS=suppressions=$top/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
export LSAN_OPTIONS
asan_opts() {
	case $1 in
	fuzz_hwloc_* | fuzz_cluster_file) echo "fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" ;;
	*) echo "${ASAN_OPTIONS:-}" ;;
	esac
}

# frame FILE JSON: writes JSON as one rankmapd frame (4-byte big-endian length + payload)
frame() {
	python3 -c 'import sys, struct; p = sys.argv[2].encode(); open(sys.argv[1], "ab").write(struct.pack(">I", len(p)) + p)' "$1" "$2"
}

requests() { # one JSON request a line, seeds of the daemon targets
	cat <<'JSON'
{"version":1,"type":"ping","id":1}
{"version":1,"type":"hosts","id":"a"}
{"version":1,"type":"report","id":2}
{"version":1,"type":"distance","id":3,"hosts":["bonobo001","fourmi004"]}
{"version":1,"type":"distance","id":4,"slots":[["bonobo001",0],["mirage001",3]]}
{"version":1,"type":"map","id":5,"cart":"4x4:1,0:2,1","hosts":["bonobo001","bonobo002"],"engine":"treematch"}
{"version":1,"type":"map","id":6,"pattern":{"n":4,"edges":[[0,1,10],[1,2,1.5],[2,3,4]]},"slots":[["bonobo001",0],["bonobo001",1],["mirage001",0],["mirage001",1]],"engine":"scotch"}
{"version":1,"type":"map","id":7,"pattern":{"n":8,"edges_text":"0 1 5 1 2 5 2 3 1 3 4 9 4 5 1 5 6 2 6 7 3 7 0 1"},"hosts":["fourmi004"],"per_core":false,"algorithm":"auto","seed":3,"time_budget_ms":5}
{"version":1,"type":"order","id":8,"method":"hilbert","dims":[4,4,2],"wrap":[true,true,false]}
{"version":1,"type":"register","id":9,"host":"n1","xml":"<topology/>"}
{"version":1,"type":"reload","id":10}
{"version":1,"type":"slurm_topology","id":13,"nodes":"bonobo[001-002],nosuch[1-3]","format":"block"}
{"version":1,"type":"slurm_topology","id":14,"nodes":""}
{"version":1,"type":"slurm_topology","id":15,"nodes":"x[0-999999]"}
{"version":1,"type":"slurm_topology","id":16,"nodes":"x[0-999][0-999]"}
{"version":2,"type":"ping","id":11}
{"version":1,"type":"nosuch","id":12}
JSON
}

# seed TARGET DIR: copies or writes the seed inputs of TARGET into DIR
seed() {
	case $1 in
	fuzz_ib_topofile) cp "$D"/ib/*.topo "$D"/ib/*.ibnetdiscover "$D"/ib/*.net "$D"/bad/ib-files/*.topo "$D"/reports/*.topo \
		"$D"/plafrim/ib/*.txt "$2"/ ;;
	fuzz_ib_ports) cp "$D"/ib/*.ports "$D"/bad/ib-files/*.ports "$2"/ ;;
	fuzz_ib_site) cp "$D"/ib/*.fabric "$2"/
		for d in "$D"/bad/site-fabric-*; do cp "$d/site.fabric" "$2/$(basename "$d").fabric"; done ;;
	fuzz_ib_namemap) cp "$D"/ib/*.map "$D"/bad/ib-files/*.map "$2"/
		for f in "$D"/bad/node-name-map-bad/*; do cp "$f" "$2/bad-$(basename "$f")"; done ;;
	fuzz_torus) cp "$D"/torus/*.conf "$D"/bad/torus-conf/*.conf conf/torus.conf.example "$2"/ && cp "$D"/bad/torus-disagree/torus.conf "$2"/disagree.conf &&
		cp "$D"/bad/declared-torus-nodes/torus.conf "$2"/declared-nodes.conf ;;
	fuzz_hwloc_xml) cp "$D"/daemon/hwloc/*.xml "$2"/
		for d in hwloc-garbage hwloc-truncated; do
			find "$D/bad/$d" -name '*.xml' -exec sh -c 'cp "$1" "$2/$3-$(basename "$1")"' _ {} "$2" "$d" \; ; done ;;
	fuzz_hwloc_diff) cp "$D"/bad/hwloc-missing-ref/hwloc/*.diff.xml "$2"/missing-ref.diff.xml
		for h in bonobo002 mirage001 fourmi004; do
			hwloc-diff --refname bonobo001.xml "$D/daemon/hwloc/bonobo001.xml" "$D/daemon/hwloc/$h.xml" \
				"$2/$h.diff.xml" >/dev/null 2>&1 || rm -f "$2/$h.diff.xml"
		done ;;
	fuzz_pattern_mtx) cp "$D"/patterns/*.mtx "$D"/bad/patterns/*.mtx "$D"/reports/*.mtx "$2"/
		for d in "$D"/bad/declared-mtx-*; do cp "$d/pattern.mtx" "$2/$(basename "$d").mtx"; done ;;
	fuzz_pattern_dense) cp "$D"/patterns/*.txt "$D"/bad/patterns/*.txt "$D"/patterns/ring8.mtx "$2"/ &&
		cp "$D"/bad/declared-dense-rows/pattern.txt "$2"/declared-rows.txt ;;
	fuzz_cart) i=0; for s in 8x4 8x4:1,0 8x4:1,1:10,1 2x2x2 16 4x4:0,0:1.5,2 3x3x3x3:1,0,1,0 1x1; do
			i=$((i + 1)); printf '%s' "$s" >"$2/cart$i"; done ;;
	fuzz_swf) cp "$D"/swf/*.swf "$D"/bad/swf/*.swf "$2"/ && cp "$D"/bad/declared-swf-jobs/trace.swf "$2"/declared-jobs.swf ;;
	fuzz_cluster_file)
		printf 'hwloc = ../data/daemon/hwloc\nib = ../data/plafrim/ib/ib-subnet0.txt\n' >"$2/hwloc-ib"
		printf 'hwloc = synthetic:pack:2 core:4@n1,n2\nib = ../data/ib/small-2level.topo\nnode_name_map = ../data/ib/small-2level.map\nlat_net = 1.5\nbw_net = 12\n' >"$2/synthetic-map"
		printf '# torus\ntorus = ../data/torus/small-table.conf\nlat_hop = 0.2\n' >"$2/torus"
		printf 'hwloc = ../data/daemon/hwloc/bonobo001.xml\nib_cache = ../data/ib/ibsim-fattree.cache\n' >"$2/cache"
		for d in "$D"/bad/cluster-*; do cp "$d/cluster.conf" "$2/$(basename "$d")"; done ;;
	fuzz_daemon_config) cp conf/rankmapd.conf "$2"/ ;;
	fuzz_slurm_conf) cp "$D"/slurm/slurm.conf.nodes "$D"/slurm/nodes.inc "$2"/
		printf 'NodeName=ok[1-2]\n\nNodeName=bad[1-\n' >"$2/bad-hostlist"
		printf 'NodeName=a[01-03] \\\n  CPUs=1\nnodename=DEFAULT\nInclude /nonexistent.conf\n' >"$2/include-missing" ;;
	fuzz_gpu_env) printf '3\n' >"$2/cuda"; printf '\nGPU-4b2c1a9f,1\n' >"$2/rocr"
		printf '1\n\n\n\n\n4,6\n' >"$2/relative"; printf '\n\n\n\n1.2,0.1.2\n' >"$2/ze"
		printf 'MIG-GPU-8932f937-d72c-4106-c12f-20bd9faed9f6/1/0\n' >"$2/mig"; printf '\n\n\n\n\n0-3,8\n2-5\n' >"$2/slurm"
		printf '=\nNoDevFiles\n' >"$2/empty" ;;
	fuzz_rm_file) i=0; for v in 64M 1G 3K 0 18446744073709551615 99999999999G 12x; do
			i=$((i + 1)); printf '%s' "$v" >"$2/size$i"; done
		cp conf/rankmapd.conf "$2"/ ;;
	fuzz_daemon_request) i=0; requests | while IFS= read -r l; do i=$((i + 1)); printf '%s' "$l" >"$2/req$i"; done ;;
	fuzz_daemon_frame) i=0; requests | while IFS= read -r l; do i=$((i + 1)); frame "$2/frame$i" "$l"; done
		requests | head -n 3 | while IFS= read -r l; do frame "$2/three" "$l"; done
		printf '\000\000\000\010{"versi' >"$2/half"
		# TCP: the authentication frame first (a MUNGE credential of rankmap's form), then requests; a
		# real one when munge is there (its key does not matter: only the form is checked here)
		cred=$(printf 'rankmap-auth 1' | munge 2>/dev/null) || cred="MUNGE:AwQFAAAxXxs3p6d0QVxk0sNn5lhwHrTlo5Rm0jFR4Dq0yV8pOo2yYRQ=:"
		frame "$2/auth" "$cred"; requests | head -n 2 | while IFS= read -r l; do frame "$2/auth" "$l"; done
		frame "$2/auth-bad" "MUNGE:not base64!:"; frame "$2/auth-json" '{"version":1,"type":"ping","id":1}'
		printf '\000\000\020\001MUNGE:' >"$2/auth-huge"
		# TCP authentication version 2: a hello first; a server's credential payload as a whole input
		frame "$2/hello" "rankmap-hello 2 0123456789abcdef0123456789abcdef"
		frame "$2/hello-v3" "rankmap-hello 3 0123456789abcdef0123456789abcdef"
		printf 'rankmap-server 2 0123456789abcdef0123456789abcdef fedcba9876543210fedcba9876543210 10.0.0.1:7117 -' \
			>"$2/server-payload"
		printf 'rankmap-server 2 0123456789abcdef0123456789abcdef fedcba9876543210fedcba9876543210 [fd00::1]:7117 svc.example' \
			>"$2/server-payload-name" ;;
	esac
}

# corpus_replay TARGET: runs every seed of TARGET and every input of its kept corpus once
corpus_replay() {
	t=$1; bin=$B/fuzz/$t; corpus=$B/fuzz/corpus/$t; seeds=$T/seeds/$t
	mkdir -p "$seeds"
	seed "$t" "$seeds" 2>"$T/seed.err" || { echo "$t: seeding failed: $(cat "$T/seed.err")"; fail=$((fail + 1)); return; }
	n=$(find "$seeds" "$corpus" -type f 2>/dev/null | wc -l)
	if find "$seeds" "$corpus" -type f -print0 2>/dev/null | ASAN_OPTIONS=$(asan_opts "$t") \
		timeout -k 10 600 xargs -0 -r "$bin" -timeout=60 -rss_limit_mb=2560 >"$T/log" 2>&1; then
		pass=$((pass + 1)); echo "$t: seeds and corpus ok ($n inputs replayed)"
	else
		fail=$((fail + 1)); echo "$t: FAIL replaying its seeds and $corpus/"
		grep 'Running:' "$T/log" | tail -n 1
		grep -E 'ERROR|SUMMARY|runtime error' "$T/log" | head -n 10
		cp "$T/log" "$B/fuzz/$t.log"
		echo "  (log: $B/fuzz/$t.log)"
	fi
}

# run TARGET: fuzzes TARGET for S seconds; a check passes when it exits 0 with no crash artifact
run() {
	t=$1; bin=$B/fuzz/$t
	corpus=$B/fuzz/corpus/$t; art=$B/fuzz/artifacts/$t; seeds=$T/seeds/$t
	mkdir -p "$corpus" "$art" "$seeds"
	seed "$t" "$seeds" 2>"$T/seed.err" || { echo "$t: seeding failed: $(cat "$T/seed.err")"; fail=$((fail + 1)); return; }
	before=$(ls "$art" | wc -l)
	ASAN_OPTIONS=$(asan_opts "$t") timeout -k 10 $((S + 180)) "$bin" -max_total_time="$S" -timeout=60 -rss_limit_mb=2560 -print_final_stats=1 \
		-artifact_prefix="$art/" "$corpus" "$seeds" >"$T/log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$T/log" | tail -n 1)
	crashes=$(( $(ls "$art" | wc -l) - before ))
	cp "$T/log" "$B/fuzz/$t.log"
	if [ "$rc" -eq 0 ] && [ "$crashes" -eq 0 ] && [ -n "$execs" ]; then
		pass=$((pass + 1)); st=ok
	else
		fail=$((fail + 1)); st=FAIL
	fi
	printf '%-22s %-4s %9s executions in %ss, %d crashes, corpus %d (exit %d)\n' "$t" "$st" "${execs:-?}" "$S" \
		"$crashes" "$(ls "$corpus" | wc -l)" "$rc"
	if [ "$st" = FAIL ]; then
		grep -E 'ERROR|SUMMARY|==[0-9]+==|runtime error|Test unit written' "$T/log" | head -n 12
		echo "  (log: $B/fuzz/$t.log, inputs: $art/)"
	fi
}

# replay TARGET: runs each input of tests/data/fuzz-regressions/TARGET/ once
replay() {
	t=$1; dir=$REG/$t
	[ -d "$dir" ] || return 0
	set -- $(find "$dir" -type f ! -name 'README*' | sort)
	[ $# -gt 0 ] || return 0
	if ASAN_OPTIONS=$(asan_opts "$t") timeout -k 10 600 "$B/fuzz/$t" -timeout=60 -rss_limit_mb=2560 "$@" >"$T/replay" 2>&1; then
		pass=$((pass + 1)); echo "$t: regressions ok ($# inputs replayed)"
	else
		fail=$((fail + 1)); echo "$t: FAIL replaying tests/data/fuzz-regressions/$t/"
		grep -E 'ERROR|SUMMARY|runtime error|Running:' "$T/replay" | head -n 12
	fi
}

n=0
for bin in "$B"/fuzz/fuzz_*; do
	t=$(basename "$bin")
	case $t in *.log | *.a) continue ;; esac
	case $t in $pat) ;; *) continue ;; esac
	[ -x "$bin" ] || continue
	n=$((n + 1))
	if [ "$S" = 0 ]; then corpus_replay "$t"; else run "$t"; fi
	replay "$t"
done
[ "$n" -gt 0 ] || { echo "no fuzz targets in $B/fuzz (make fuzz-build B=$B)"; fail=$((fail + 1)); }
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
