#!/bin/sh
# scripts/trixie.sh: the Debian 13 ("trixie") test root, the second test environment (README.md, "Debian
# 13"). A root made by debootstrap (variant minbase) from Debian's archive, with the packages of
# scripts/trixie-packages installed without recommends: Slurm 24.11, Open MPI 5.0.7, MPICH 4.2.1, hwloc 2.12
# and the build dependencies. Entered with chroot inside private mount, PID, network and UTS namespaces.
#
#   sh scripts/trixie.sh build             makes the root unless the cache holds a current one; prints its
#                                          path, and how long it took and its size when it made it
#   sh scripts/trixie.sh path              prints the current root's path; exit 1, the reason on stderr, when
#                                          there is none
#   sh scripts/trixie.sh run SRC CMD...    runs CMD (as root) in the root, with the source tree SRC at /src
#   sh scripts/trixie.sh suite SRC         builds SRC in the root into SRC/build-trixie and runs the second
#                                          suite there (tests/trixie/suite.sh)
#   sh scripts/trixie.sh clean             removes the cache
#
# The cache: RANKMAP_TRIXIE_CACHE (default /var/tmp/rankmap-trixie, outside every checkout: `make clean`
# keeps it), one root per key, root-<key>, the key being the SHA-256 of the package list, the suite and the
# mirror (RANKMAP_TRIXIE_MIRROR, default http://deb.debian.org/debian): a changed list makes a new root and
# removes the old one. A build holds the cache's lock exclusively, a run holds it shared.
#
# Every run gets its own mounts, made in a private mount namespace: proc, /dev (bound, with a tmpfs of its
# own at /dev/shm), /sys (bound), tmpfs at /tmp and /run, and SRC at /src. They are unmounted one by one
# in reverse order when the command ends (whatever its status); the namespace guarantees that none is
# ever seen outside it nor outlives it, even when the run is killed. The PID namespace ends every process
# the command left (daemons of a failed test included) when it ends; the network namespace has only a
# loopback interface and a veth pair of its own (the tests' Slurm clusters and MPI jobs cannot meet other
# runs' ports), the UTS
# namespace's host name is "trixie".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
self=$top/scripts/trixie.sh
cache=${RANKMAP_TRIXIE_CACHE:-/var/tmp/rankmap-trixie}
mirror=${RANKMAP_TRIXIE_MIRROR:-http://deb.debian.org/debian}
suite=trixie
list=$top/scripts/trixie-packages
die() { echo "trixie: $*" >&2; exit 1; }

pkgs() { sed 's/#.*//' "$list" | tr -s ' \t' '\n\n' | grep .; }
# the cache key: what the root is made from (the "layout" word changes when this script makes it differently)
key() { { echo "layout 1 $suite $mirror"; pkgs; } | sha256sum | cut -c1-16; }
root() { echo "$cache/root-$(key)"; }
ready() { [ -f "$1/.rankmap-root" ]; }

cmd_path() {
	[ -r "$list" ] || die "no package list $list"
	r=$(root)
	ready "$r" || die "no Debian 13 root at $r (\`make trixie-root\` or \`sh scripts/trixie.sh build\` makes it: 3 to 6 minutes and 1.1 GB from Debian's archive)"
	echo "$r"
}

# enter ROOT host|private SRC CMD...: CMD in ROOT in new mount and PID namespaces (and network and UTS ones
# when private); SRC ('' for none) at /src.
enter() {
	_net=$2
	if [ "$_net" = private ]; then
		unshare --mount --propagation private --pid --fork --kill-child --net --uts sh "$self" _inside "$@"
	else
		unshare --mount --propagation private --pid --fork --kill-child sh "$self" _inside "$@"
	fi
}

# _inside ROOT NET SRC CMD...: runs as PID 1 of the new namespaces (from enter).
cmd_inside() {
	r=$1 net=$2 src=$3
	shift 3
	made="" # the mounts made here, last made first
	undo() {
		for m in $made; do
			umount -R "$m" 2>/dev/null || umount -R -l "$m" || echo "trixie: cannot unmount $m" >&2
		done
		made=""
	}
	trap undo EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
	mnt() { # TARGET MOUNT-ARGS...
		_t=$1
		shift
		mount "$@" "$_t" || die "cannot mount $_t (mount $*)"
		made="$_t $made"
	}
	mnt "$r/proc" -t proc proc
	mnt "$r/dev" --rbind /dev
	mnt "$r/dev/shm" -t tmpfs -o mode=1777,nosuid,nodev tmpfs
	mnt "$r/sys" --rbind /sys
	mnt "$r/tmp" -t tmpfs -o mode=1777,nosuid,nodev tmpfs
	mnt "$r/run" -t tmpfs -o mode=755,nosuid,nodev tmpfs
	if [ -n "$src" ]; then
		mkdir -p "$r/src" || die "cannot make $r/src"
		mnt "$r/src" --bind "$src"
	fi
	if [ "$net" = private ]; then
		ip link set lo up || die "cannot bring up the loopback interface (ip link set lo up)"
		# an interface besides the loopback one: Slurm 24.11 resolves its listening addresses with
		# AI_ADDRCONFIG, which finds no address family on a loopback alone (a veth pair, both ends here)
		{ ip link add rm0 type veth peer name rm1 && ip addr add 10.254.0.1/24 dev rm0 &&
			ip link set rm0 up && ip link set rm1 up; } || die "cannot make the namespace's veth pair"
		hostname trixie || die "cannot set the host name"
	fi
	# the environment: a clean one, with the run's settings of the suite
	for v in RANKMAP_NO_SKIP CI TESTS TEST_TIMEOUT RANKMAP_TEST_JOBS TRIXIE_JOBS; do
		eval "_set=\${$v+x}"
		[ -n "$_set" ] && eval "set -- \"$v=\$$v\" \"\$@\""
	done
	# (no Python bytecode written into the checkout at /src: its __pycache__ would be Python 3.13's)
	chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 "$@"
	rc=$?
	undo
	exit $rc
}

cmd_build() {
	[ "$(id -u)" = 0 ] || die "making the root needs root (debootstrap, chroot, mount)"
	command -v debootstrap >/dev/null || die "debootstrap is not installed (make deps installs it)"
	for c in unshare chroot mount ip sha256sum flock; do
		command -v "$c" >/dev/null || die "$c is not installed"
	done
	[ -r "$list" ] || die "no package list $list"
	mkdir -p "$cache" || die "cannot make the cache directory $cache"
	exec 9>"$cache/lock"
	flock 9 || die "cannot lock $cache/lock"
	r=$(root)
	if ready "$r"; then
		echo "$r"
		return 0
	fi
	t0=$(date +%s)
	new=$(mktemp -d "$cache/new.XXXXXX") || die "cannot make a directory in $cache"
	chmod 755 "$new" # mktemp's 0700 would keep the root's own users (munge, slurm) out of it
	log=$new.log
	# a failed build leaves nothing but its log (a partial root never runs)
	trap 'rm -rf --one-file-system "$new"' EXIT
	trap 'exit 1' HUP INT TERM
	echo "trixie: debootstrap --variant=minbase $suite from $mirror (log: $log)" >&2
	if ! debootstrap --variant=minbase "$suite" "$new" "$mirror" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		die "debootstrap failed (is $mirror reachable? log: $log)"
	fi
	# no service starts inside the root; the apt lists and packages are not kept
	printf '#!/bin/sh\nexit 101\n' >"$new/usr/sbin/policy-rc.d" && chmod 755 "$new/usr/sbin/policy-rc.d"
	printf '127.0.0.1\tlocalhost\n127.0.1.1\ttrixie\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$new/etc/hosts"
	echo trixie >"$new/etc/hostname"
	# every package of the list, checked by name first: a missing one is named
	pkgs >"$new/root/packages"
	cat >"$new/root/install.sh" <<'EOF'
export DEBIAN_FRONTEND=noninteractive
apt-get update -q || { echo "trixie: apt-get update failed" >&2; exit 1; }
missing=""
for p in $(cat /root/packages); do
	apt-cache show --no-all-versions "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] || { echo "trixie: not in Debian 13 (scripts/trixie-packages):$missing" >&2; exit 1; }
apt-get install -y -q --no-install-recommends $(cat /root/packages) || { echo "trixie: apt-get install failed" >&2; exit 1; }
apt-get clean && rm -rf /var/lib/apt/lists/*
EOF
	echo "trixie: installing $(wc -l <"$new/root/packages") packages and their dependencies" >&2
	if ! enter "$new" host "" sh /root/install.sh >>"$log" 2>&1; then
		grep '^trixie: \|^E: ' "$log" >&2 || tail -n 20 "$log" >&2
		die "the packages could not be installed (log: $log)"
	fi
	t1=$(date +%s)
	size=$(du -sm "$new" | cut -f1)
	printf 'suite=%s\nmirror=%s\nmade=%s\nseconds=%s\nmegabytes=%s\n' "$suite" "$mirror" \
		"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$((t1 - t0))" "$size" >"$new/.rankmap-root"
	mv "$new" "$r" || die "cannot move $new to $r"
	trap - EXIT
	rm -f "$log"
	# the roots of other package lists: gone (no run uses them: a run holds the lock shared)
	for o in "$cache"/root-* "$cache"/new.*; do
		[ -e "$o" ] && [ "$o" != "$r" ] && rm -rf --one-file-system "$o"
	done
	echo "trixie: made $r in $((t1 - t0)) s, $size MB" >&2
	echo "$r"
}

cmd_run() {
	[ $# -ge 2 ] || die "usage: trixie.sh run SRC CMD..."
	src=$1
	shift
	[ "$(id -u)" = 0 ] || die "entering the root needs root (chroot, mount)"
	r=$(cmd_path) || exit 1
	[ -d "$src" ] || die "no source tree $src"
	src=$(cd "$src" && pwd)
	exec 9>"$cache/lock"
	flock -s 9 || die "cannot lock $cache/lock"
	ready "$r" || die "the root $r went away"
	enter "$r" private "$src" "$@"
}

case "${1:-}" in
build) cmd_build ;;
path) cmd_path ;;
run) shift; cmd_run "$@" ;;
suite) [ $# -eq 2 ] || die "usage: trixie.sh suite SRC"; cmd_run "$2" sh /src/tests/trixie/suite.sh ;;
clean)
	[ -d "$cache" ] || exit 0
	exec 9>"$cache/lock" && flock 9 || die "cannot lock $cache/lock"
	rm -rf --one-file-system "$cache"/root-* "$cache"/new.* ;;
_inside) shift; cmd_inside "$@" ;;
*) die "usage: trixie.sh build|path|run SRC CMD...|suite SRC|clean" ;;
esac
