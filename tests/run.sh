#!/bin/sh
# tests/run.sh: runs every C test binary ($B/tests/test_*: tests/unit/test_*.c, and the C tests that start
# rankmapd, tests/integration/test_*.c) and every integration script (tests/integration/*.sh), RANKMAP_TEST_JOBS of them at a time (default 2), then prints one line per
# test in a stable order (unit tests, then integration scripts, each by name), the skipped checks with
# their reasons, and last the total:
#   N passed, N failed, N skipped
# Every test prints "N passed, N failed" as its last line, followed by ", N skipped" when it skipped
# checks, and one "SKIP - reason" line per skipped check (tests/lib.sh skip, tests/harness.h skip()).
#
#   TESTS='pattern...'    only the tests whose name matches one of the blank-separated shell patterns
#                         (e.g. 'daemon_*', 'pmpi_cart spank_*')
#   TEST_TIMEOUT=s        per-test timeout (default 900)
#   RANKMAP_TEST_JOBS=n   tests run at once (default 2: the machine has 2 cores)
#   RANKMAP_NO_SKIP=1     a skip fails its test unless allowed_skip accepts it (set by CI=true, and by
#                         .ci/run): in CI every dependency `make deps` installs is present
# Logs: $B/test-logs/<name>.log (kept), durations of the last run in $B/test-logs/<name>.res.
#
# A skip is not a pass. The skips CI accepts are the ones no installable package can remove; they are
# listed, with their reasons, in allowed_skip below and in tests/README.md.
#
# Tests of one serial group never overlap each other: the group runs as one job, its tests one after
# another (serial_group below says why each is there). The other tests are independent. Jobs start
# longest first, by the durations of the last run.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

# Some tests run programs of the tree as unprivileged users (nobody, users they create), so the tree must
# be reachable by them. A checkout under a private directory (mktemp -d makes it 0700) is not: then, as
# root, the suite runs from a bind mount of the tree at a reachable path, unmounted at the end.
reachable() { setpriv --reuid=nobody --regid=nogroup --clear-groups test -r "$1/tests/lib.sh" 2>/dev/null; }
if [ "$(id -u)" = 0 ] && [ -z "$RM_TESTS_TREE_MOUNT" ] && ! reachable "$top"; then
	mnt=$(mktemp -d "${TMPDIR:-/tmp}/rankmap-tree.XXXXXX") && chmod 755 "$mnt" &&
		if mount --bind "$top" "$mnt" 2>/dev/null && reachable "$mnt"; then
			echo "tests: $top is not reachable by unprivileged users: running from a bind mount at $mnt"
			# the sanitizers' options name files of the tree (suppressions): the same files, reachable
			for v in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS; do
				eval "val=\${$v:-}"
				[ -n "$val" ] && export "$v=$(printf '%s' "$val" | sed "s#$top/#$mnt/#g")"
			done
			RM_TESTS_TREE_MOUNT=$mnt sh "$mnt/tests/run.sh" "$@"
			rc=$?
			umount "$mnt" && rmdir "$mnt"
			exit $rc
		else
			umount "$mnt" 2>/dev/null
			rmdir "$mnt"
			echo "tests: $top is not reachable by unprivileged users; their checks will fail"
		fi
fi
unset RM_TESTS_TREE_MOUNT # tests check their environment
B=${B:-build}
export B
logdir=$B/test-logs
tmo=${TEST_TIMEOUT:-900}

# serial_group NAME: the group of a test that must not overlap others of its group, or nothing.
serial_group() {
	case $1 in
	# each runs MPI jobs of more ranks than cores (busy-polling), on a local Slurm cluster (munged,
	# slurmctld, four slurmd) or under mpirun: two at once starve each other on 2 cores (spank_cluster
	# took 31 s alone and 160 to 390 s beside another of them, where its timeouts fired; 19 s alone now)
	spank_cluster | fault_spank | fault_pmpi | pmpi_cart | pmpi_fallback | pmpi_graph | pmpi_trace | pmpi_daemon | \
	fault_spank_pattern | fault_pmpi_guard | pmpi_learn | pmpi_unconnected | cluster_tcp | cluster_slurm_tcp | make_run | \
	pmpi_wrong_mpi | pmpi_pattern_fake | cluster_slurm_learn | map_placement | mtx_readers | pmpi_preload | pmpi_slots | \
	pmpi_gpu | spank_gpu | pmpi_mixed_env | pmpi_conform | auth_flood | spank_register_retry | debian13) echo mpi ;; # auth_flood: a churn of connections takes both cores for a minute;
	# debian13: the second suite (its own MPI jobs and Slurm cluster, in the Debian 13 root)
	# each runs make in $B: concurrent makes would write the same files
	fuzz_replay | e2e_smpi_smoke | install | install_service) echo make ;;
	esac
}

# allowed_skip NAME REASON: true when CI accepts this skip (keep in step with tests/README.md).
allowed_skip() {
	case "$1|$2" in
	# the fuzz targets carry ASan and UBSan themselves: the plain suite replays them, the sanitized
	# suite would replay the same binaries again
	"fuzz_replay|SANITIZE=1: "*) return 0 ;;
	# smpirun runs the program inside SimGrid's simulator, which is not built with ASan
	"e2e_smpi_smoke|SANITIZE=1: "*) return 0 ;;
	# an ASan plugin needs the ASan runtime preloaded into slurmd, slurmstepd and srun, which shows up
	# in every task's LD_PRELOAD that this test checks; fault_spank.sh runs the sanitized plugin
	"spank_cluster|SANITIZE=1: "*) return 0 ;;
	# the same for the cluster of GPU nodes (test_spank_gpu runs the plugin's GPU and NIC choices sanitized)
	"spank_gpu|SANITIZE=1: "*) return 0 ;;
	# the same for the Slurm cluster across network namespaces (and its learning runs)
	"cluster_slurm_tcp|SANITIZE=1: "* | "cluster_slurm_learn|SANITIZE=1: "*) return 0 ;;
	# worker processes are forked from a threaded daemon, which GCC 12's ASan runtime cannot do safely
	"daemon_isolation|SANITIZE=1: "*) return 0 ;;
	# the same for the process half of the one-parse-per-request check (its thread half runs sanitized)
	"daemon_parses|SANITIZE=1: "*) return 0 ;;
	# the second suite (Debian 13) builds its own plain tree in its root: it runs in the plain suite
	"debian13|SANITIZE=1: "*) return 0 ;;
	# Slurm's topology/block is in Slurm 23.11 and later, in no Debian 12 package: the block file is
	# checked there, and Slurm loads it in the Debian 13 suite (debian13)
	"slurm_block|Slurm 22.05: "*) return 0 ;;
	"slurm_nvlink|Slurm 22.05: "*) return 0 ;;
	# Debian 12's Slurm is 22.05, which has no topology/block (23.11): the Debian 13 root loads the file
	"report_slurm_formats|topology/block needs Slurm 23.11 "*) return 0 ;;
	esac
	return 1
}

# run_test NAME: runs one test with its log; writes "exit-code seconds" to $logdir/NAME.res
run_test() {
	name=$1
	case $name in
	test_*) set -- "$B/tests/$name" ;;
	*) set -- sh "tests/integration/$name.sh" ;;
	esac
	start=$(date +%s)
	timeout -k 10 "$tmo" "$@" >"$logdir/$name.log" 2>&1 </dev/null
	rc=$?
	echo "$rc $(($(date +%s) - start))" >"$logdir/$name.res"
	[ -t 2 ] && echo "  $name: exit $rc, $(($(date +%s) - start)) s" >&2
	return 0
}

# A job of the pool (xargs below): one test, or a serial group's tests in turn.
if [ "$1" = --job ]; then
	for n in $2; do run_test "$n"; done
	exit 0
fi

pat=${TESTS:-*}
jobs=${RANKMAP_TEST_JOBS:-2}
noskip=${RANKMAP_NO_SKIP:-}
[ "${CI:-}" = true ] && [ -z "$noskip" ] && noskip=1
[ "$noskip" = 0 ] && noskip=
# Settings of this runner, not of rankmap: tests check that no stray RANKMAP_* reaches a job.
unset RANKMAP_TEST_JOBS RANKMAP_NO_SKIP
mkdir -p "$logdir" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/rankmap-run.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP

# The tests, in the order of the report.
: >"$work/names"
for t in "$B"/tests/test_*; do
	[ -x "$t" ] && echo "${t##*/}"
done >>"$work/names"
for t in tests/integration/*.sh; do
	[ -f "$t" ] && basename "$t" .sh
done >>"$work/names"
: >"$work/selected"
set -f # the patterns are matched, not expanded here
while read -r n; do
	for p in $pat; do
		case $n in $p) echo "$n" >>"$work/selected" && break ;; esac
	done
done <"$work/names"
set +f

# The jobs, longest first: "seconds<TAB>names". A test not run before counts 1 s.
last() { [ -f "$logdir/$1.res" ] && cut -d' ' -f2 "$logdir/$1.res" || echo 1; }
: >"$work/jobs"
while read -r n; do
	g=$(serial_group "$n")
	if [ -n "$g" ]; then echo "$n" >>"$work/group.$g"; else printf '%s\t%s\n' "$(last "$n")" "$n" >>"$work/jobs"; fi
done <"$work/selected"
for f in "$work"/group.*; do
	[ -f "$f" ] || continue
	s=0; for n in $(cat "$f"); do s=$((s + $(last "$n"))); done
	printf '%s\t%s\n' "$s" "$(tr '\n' ' ' <"$f")" >>"$work/jobs"
done
while read -r n; do rm -f "$logdir/$n.res"; done <"$work/selected"

t0=$(date +%s)
sort -rn "$work/jobs" | cut -f2 | xargs -d '\n' -r -n 1 -P "$jobs" sh "$top/tests/run.sh" --job
wall=$(($(date +%s) - t0))

# The report, in the order of $work/names.
tp=0; tf=0; ts=0; ntests=0; broken=""
: >"$work/skips"
while read -r name; do
	log=$logdir/$name.log
	ntests=$((ntests + 1))
	if [ -f "$logdir/$name.res" ]; then read -r rc secs <"$logdir/$name.res"; else rc=125; secs=0; fi
	last=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$log" 2>/dev/null |
		tail -n 1 | sed 's/^[A-Za-z]*: //')
	p=$(echo "$last" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
	f=$(echo "$last" | sed -n 's/^[0-9]* passed, \([0-9]*\) failed.*/\1/p')
	s=$(echo "$last" | sed -n 's/^[0-9]* passed, [0-9]* failed, \([0-9]*\) skipped.*/\1/p')
	[ -n "$p" ] || { p=0; f=1; }
	s=${s:-0}
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	notes=""
	[ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && notes=" (timed out after ${tmo}s)"
	if [ "$s" -gt 0 ]; then
		grep '^SKIP - ' "$log" | sed 's/^SKIP - //' >"$work/reasons"
		[ -s "$work/reasons" ] || echo "(no reason given)" >"$work/reasons"
		while IFS= read -r r; do
			if [ -n "$noskip" ] && ! allowed_skip "$name" "$r"; then
				f=$((f + 1))
				echo "  $name: $r  [not allowed in CI: counted as a failure]" >>"$work/skips"
			else
				echo "  $name: $r" >>"$work/skips"
			fi
		done <"$work/reasons"
	fi
	tp=$((tp + p)); tf=$((tf + f)); ts=$((ts + s))
	status=ok
	[ "$p" -eq 0 ] && [ "$s" -gt 0 ] && status=SKIP
	[ "$f" -ne 0 ] && { status=FAIL; broken="$broken $name"; }
	printf '%-40s %-4s %4d passed %3d failed %3d skipped %4ss%s\n' "$name" "$status" "$p" "$f" "$s" "$secs" "$notes"
	if [ "$status" = FAIL ]; then
		echo "---- last lines of $log (exit $rc) ----"
		grep -E 'FAIL|fail|error|Error' "$log" | tail -n 15
		tail -n 15 "$log"
		echo "----"
	fi
done <"$work/selected"
if [ "$ntests" -eq 0 ]; then
	echo "no test matches TESTS='$pat'"
	tf=1
fi
if [ -s "$work/skips" ]; then
	echo "skipped:"
	cat "$work/skips"
fi
[ -n "$broken" ] && echo "failing:$broken"
echo "$ntests tests in ${wall}s, $jobs at a time${noskip:+ (skips fail unless allowed: RANKMAP_NO_SKIP)}"
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" -eq 0 ]
