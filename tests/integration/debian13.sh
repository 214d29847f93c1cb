#!/bin/sh
# tests/integration/debian13.sh: the second test environment (README.md, "Debian 13"). Runs the second
# suite (tests/trixie/suite.sh: the tree built in the Debian 13 root with Slurm 24.11, Open MPI 5.0.7, MPICH
# 4.2.1 and hwloc 2.12, and the tests that these change under the project) in the root that
# scripts/trixie.sh made (`make trixie-root`; CI makes it before the suites). Its results are this test's:
# the inner report is printed, its counts are this test's counts, its skips are listed here. Skipped when
# there is no root (the reason says how to make one), or in the sanitized suite (the second suite builds
# its own plain tree, build-trixie, whatever this suite's build is). Afterwards no mount of the run is left
# anywhere (checked).
. "$(dirname "$0")/../lib.sh"

if ldd "$BIN/rankmapctl" 2>/dev/null | grep -q libasan; then
	skip "SANITIZE=1: the Debian 13 suite builds its own plain tree (build-trixie) and runs in the plain suite"
	finish
	exit $?
fi
if [ "$(id -u)" != 0 ]; then
	skip "not root: the Debian 13 root is entered with chroot in new namespaces (run the suite as root)"
	finish
	exit $?
fi
T=$(mktmp) || exit 1
trap 'rm -rf "$T"' EXIT
if ! root=$(sh "$TOP/scripts/trixie.sh" path 2>"$T/why"); then
	skip "$(sed 's/^trixie: //' "$T/why")"
	finish
	exit $?
fi
echo "the Debian 13 root: $root ($(tr '\n' ' ' <"$root/.rankmap-root"))"
# TESTS chose this test: the second suite runs its own list
env -u TESTS sh "$TOP/scripts/trixie.sh" suite "$TOP" >"$T/out" 2>&1
rc=$?
sed 's/^/  | /' "$T/out"
# no mount of the run left, here or anywhere (the namespaces' mounts never show outside them)
if grep -q " $root[/ ]" /proc/self/mountinfo; then
	notok "mounts under $root left after the run: $(grep -c " $root[/ ]" /proc/self/mountinfo)"
else
	ok "no mount under $root left after the run"
fi
last=$(tail -n 1 "$T/out")
if printf '%s\n' "$last" | grep -Eq '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$'; then
	p=${last%% passed*}
	f=$(printf '%s\n' "$last" | sed 's/^[0-9]* passed, \([0-9]*\) failed.*/\1/')
	s=$(printf '%s\n' "$last" | sed -n 's/.* failed, \([0-9]*\) skipped$/\1/p')
	_pass=$((_pass + p)) _fail=$((_fail + f)) _skip=$((_skip + ${s:-0}))
	# the inner skips, with their reasons, as this test's
	sed -n '/^skipped:$/,/^[^ ]/s/^  \(.*\)/SKIP - debian13: \1/p' "$T/out"
	[ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || notok "the second suite exited $rc"
else
	notok "the second suite gave no total (exit $rc): $last"
fi
finish
