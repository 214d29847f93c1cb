#!/bin/sh
# tests/integration/file_inputs.sh: every file input of rankmapctl and rankmapd goes through rm_file.
# For each kind (hwloc XML, ibnetdiscover file, fabric cache, node-name map, torus, cluster file and a
# file it names, pattern, permutation, SWF trace, register --xml, rankmapd.conf): a FIFO, /dev/zero, a
# symlink to a FIFO, a symlink to /dev/zero, a directory and an oversized file (the kind's
# RANKMAP_FILE_LIMIT_<KIND> lowered) are refused at once, exit status 1, with a message naming the file
# and saying why; so is a FIFO named *.xml in an hwloc directory. Every command runs under `timeout`,
# so a hang fails its check instead of blocking the suite.
# Declared sizes (tests/data/bad/declared-*, and a dense first row of 16M+1 values made here) are
# refused under `ulimit -v` 512 MiB (sanitized builds: no allocation over 256 MiB), so that
# allocating the declared size would fail the check.
# rankmapd: a FIFO named *.xml dropped into hwloc_dir makes `reload` answer promptly with an error
# naming it while the old model keeps serving, and SIGTERM still stops the daemon promptly; a FIFO as
# state.json or as a saved registration does not block the start.
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
T=$(mktmp)
chmod 755 "$T"
rankmapd_cleanup "$T"
TMO=20      # seconds: a refusal takes milliseconds, a blocked open forever
VMEM=524288 # KiB for ulimit -v: an allocation of a declared size would not fit

mkfifo "$T/fifo" && ln -s "$T/fifo" "$T/link-fifo" && ln -s /dev/zero "$T/link-zero" ||
	{ notok "set-up: mkfifo, symlinks"; finish; exit 1; }
{ echo "# rank i runs on slot i (a comment that takes the file past 64 bytes)"; seq 0 7; } >"$T/perm.txt"
printf 'socket = %s/d.sock\nstate_dir = %s/state\n' "$T" "$T" >"$T/rankmapd.conf"

# run KIND FILE [VAR=VALUE...]: the command that reads FILE as an input of KIND, in the environment
# given, bounded by timeout (stdout discarded, stderr in $T/err)
run() {
	k=$1; f=$2; shift 2
	case $k in cluster_ib) printf 'ib = %s\n' "$f" >"$T/cl.conf" ;; esac
	set -- timeout -k 5 "$TMO" env "$@"
	case $k in
	hwloc) "$@" "$CTL" report --strict --hwloc "$f" ;; # lenient directories: hwloc_faults.sh
	ib) "$@" "$CTL" report --ib "$f" ;;
	ib_cache) "$@" "$CTL" report --ib-cache "$f" ;;
	namemap) "$@" "$CTL" report --ib "$DATA/ib/small-2level.topo" --node-name-map "$f" ;;
	torus) "$@" "$CTL" report --torus "$f" ;;
	cluster) "$@" "$CTL" report --cluster "$f" ;;
	cluster_ib) "$@" "$CTL" report --cluster "$T/cl.conf" ;;
	pattern) "$@" "$CTL" map --pattern "$f" --topology 'tleaf 1 8 1' ;;
	perm) "$@" "$CTL" explain --pattern "$DATA/patterns/ring8.mtx" --topology 'tleaf 1 8 1' --perm "$f" ;;
	swf) "$@" "$CTL" simulate --dims 4x4x4 --swf "$f" ;;
	register) "$@" "$CTL" register --force --xml "$f" --host h1 --socket "$T/nothing.sock" --timeout 500 ;;
	rankmapd) "$@" "$BIN/rankmapd" --config "$f" --print-config ;;
	esac >/dev/null 2>"$T/err"
}

# refused DESC KIND FILE WHY [VAR=VALUE...]: exit 1 within TMO seconds, a message naming FILE, saying WHY
refused() {
	d=$1; k=$2; f=$3; why=$4; shift 4
	t0=$(date +%s)
	run "$k" "$f" "$@"
	rc=$?; s=$(($(date +%s) - t0))
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		notok "$k $d: still running after ${TMO}s (blocked)"
	elif [ "$rc" -ne 1 ]; then
		notok "$k $d: exit $rc, want 1: $(head -c 300 "$T/err")"
	elif ! grep -qF -- "$f" "$T/err" || ! grep -q -- "$why" "$T/err"; then
		notok "$k $d: message does not name '$f' with '$why': $(head -c 300 "$T/err")"
	else
		ok "$k $d (${s}s): $(head -n 1 "$T/err")"
	fi
}

# ---- every kind: KIND GOOD-FILE LIMIT (a good file is read first, to prove the command works) ----
set -- \
	hwloc "$DATA/daemon/hwloc/bonobo001.xml" HWLOC \
	ib "$DATA/plafrim/ib/ib-subnet0.txt" IB \
	ib_cache "$DATA/ib/ibsim-fattree.cache" IB \
	namemap "$DATA/ib/small-2level.map" NAMEMAP \
	torus "$DATA/torus/small-table.conf" TORUS \
	cluster "$DATA/example/cluster.conf" CONFIG \
	cluster_ib "$DATA/plafrim/ib/ib-subnet0.txt" IB \
	pattern "$DATA/patterns/ring8.mtx" PATTERN \
	perm "$T/perm.txt" PERM \
	swf "$DATA/swf/small.swf" SWF \
	register "$DATA/daemon/hwloc/bonobo001.xml" HWLOC \
	rankmapd "$T/rankmapd.conf" CONFIG
while [ $# -ge 3 ]; do
	k=$1; good=$2; lim=$3; shift 3
	run "$k" "$good"; rc=$?
	if [ "$k" = register ]; then # no daemon: it gets past the file and fails on the socket
		grep -q "nothing.sock" "$T/err" && ok "$k: the good file is read (then: no daemon)" ||
			notok "$k: good file: $(head -c 300 "$T/err")"
	else
		[ "$rc" -eq 0 ] && ok "$k: the good file is read" || notok "$k: good file: exit $rc: $(head -c 300 "$T/err")"
	fi
	refused "FIFO" "$k" "$T/fifo" "not a regular file (a FIFO)"
	refused "/dev/zero" "$k" /dev/zero "not a regular file (a character device)"
	refused "symlink to a FIFO" "$k" "$T/link-fifo" "not a regular file (a FIFO)"
	refused "symlink to /dev/zero" "$k" "$T/link-zero" "not a regular file (a character device)"
	[ "$k" = hwloc ] || refused "directory" "$k" "$T" "not a regular file (a directory)"
	refused "over RANKMAP_FILE_LIMIT_$lim=64" "$k" "$good" "file too large: .* bytes, the limit" \
		"RANKMAP_FILE_LIMIT_$lim=64"
done

# ---- hwloc directories: every entry is checked before any is parsed --------------------------------
mkdir "$T/hw"
cp "$DATA"/daemon/hwloc/*.xml "$T/hw/"
run hwloc "$T/hw"
[ $? -eq 0 ] && ok "hwloc directory: good directory read" || notok "hwloc directory: $(cat "$T/err")"
mkfifo "$T/hw/zz-evil.xml"
refused "directory holding a FIFO *.xml" hwloc "$T/hw" "zz-evil.xml: not a regular file (a FIFO)"
rm -f "$T/hw/zz-evil.xml"
ln -s /dev/zero "$T/hw/evil.diff.xml"
refused "directory holding a *.diff.xml symlink to /dev/zero" hwloc "$T/hw" "evil.diff.xml: not a regular file"
rm -f "$T/hw/evil.diff.xml"
refused "directory holding an XML over RANKMAP_FILE_LIMIT_HWLOC=1K" hwloc "$T/hw" "file too large" \
	RANKMAP_FILE_LIMIT_HWLOC=1K
refused "hwloc_dir that is a FIFO" hwloc "$T/fifo" "not a regular file (a FIFO)"

# ---- declared sizes: refused before allocating (ulimit -v) ------------------------------------------
# limited CMD...: CMD with memory bounded: ulimit -v, or in a sanitized build (ASan reserves terabytes
# of address space, so ulimit -v cannot be used) no single allocation over 256 MiB
if ldd "$CTL" 2>/dev/null | grep -q libasan; then
	echo "# sanitized build: ASAN_OPTIONS max_allocation_size_mb=256 instead of ulimit -v"
	limited() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=256:allocator_may_return_null=1" "$@"; }
else
	limited() { (ulimit -v "$VMEM" && "$@"); }
fi
# declared CASE-DIR: the case of tests/data/bad/ with memory bounded, exit 1 and its expected error
declared() {
	d=$1; c=$(basename "$d")
	set --
	while IFS= read -r a; do set -- "$@" "$a"; done <"$d/args"
	cmd=report; [ -f "$d/command" ] && cmd=$(cat "$d/command")
	(cd "$d" && limited timeout -k 5 "$TMO" "$CTL" "$cmd" "$@") >/dev/null 2>"$T/err"
	rc=$?
	good=1
	while IFS= read -r want; do grep -qF -- "$want" "$T/err" || good=0; done <"$d/expected-error"
	[ "$rc" -eq 1 ] && [ $good = 1 ] && ok "$c with memory bounded: $(cat "$T/err")" ||
		notok "$c with memory bounded: exit $rc: $(head -c 300 "$T/err")"
}
for d in "$DATA"/bad/declared-*/; do declared "$d"; done
# the checker itself: the same bound stops rankmapctl building a 16M-rank graph (over 2 GiB)
limited timeout -k 5 "$TMO" "$CTL" map --cart 4096x4096 --topology 'tleaf 1 8 1' >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q "out of memory" "$T/err" &&
	ok "the memory bound stops a 16M-rank graph: $(head -n 1 "$T/err")" ||
	notok "the memory bound does not stop a 16M-rank graph (exit $rc): the checks above prove nothing"
# a dense first row of 16M+1 values (33 MB): refused at the bound, not as a 16M-rank graph
awk 'BEGIN { for (i = 0; i <= 16777216; i++) printf "1 "; printf "\n" }' >"$T/dense-huge.txt"
limited timeout -k 5 "$TMO" "$CTL" map --pattern "$T/dense-huge.txt" --topology 'tleaf 1 8 1' >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "dense-huge.txt:1:.*more than 16777216 values" "$T/err" &&
	ok "dense row of 16777217 values with memory bounded: $(cat "$T/err")" ||
	notok "dense row of 16777217 values: exit $rc: $(head -c 300 "$T/err")"
rm -f "$T/dense-huge.txt"

# ---- rankmapd: reload with a FIFO in hwloc_dir, SIGTERM, start with FIFOs in its state ------------
SOCK=$T/d.sock
cat >"$T/d.conf" <<EOC
hwloc_dir = $T/hw
strict = yes
socket = $SOCK
state_dir = $T/state
socket_mode = 0666
EOC
quiet() { "$@" >/dev/null; }
start_daemon() {
	start_rankmapd "$T/d.conf" "$SOCK" "$T/d.log"
}
# stop_daemon DESC: SIGTERM, the daemon must be gone within 10 s
stop_daemon() {
	kill -TERM "$D_PID"
	n=0; while [ $n -lt 100 ] && kill -0 "$D_PID" 2>/dev/null; do sleep 0.1; n=$((n + 1)); done
	if kill -0 "$D_PID" 2>/dev/null; then
		notok "$1: rankmapd still running 10 s after SIGTERM"
		kill -9 "$D_PID"
	else
		ok "$1: rankmapd stopped on SIGTERM in $((n / 10)).$((n % 10)) s"
	fi
	stop_rankmapd # reaps it
}
start_daemon
expect "rankmapd serves the hwloc directory" quiet "$CTL" distance --socket "$SOCK" bonobo001 bonobo002
mkfifo "$T/hw/zz-evil.xml"
t0=$(date +%s)
timeout -k 5 "$TMO" "$CTL" reload --socket "$SOCK" >"$T/out" 2>"$T/err"
rc=$?; s=$(($(date +%s) - t0))
[ "$rc" -eq 1 ] && grep -q "zz-evil.xml: not a regular file (a FIFO)" "$T/err" &&
	ok "reload with a FIFO *.xml in hwloc_dir: error in ${s}s: $(cat "$T/err")" ||
	notok "reload with a FIFO *.xml in hwloc_dir: exit $rc after ${s}s: $(cat "$T/err" "$T/out" | head -c 300)"
expect "the old model keeps serving" quiet "$CTL" distance --socket "$SOCK" bonobo001 bonobo002
kill -HUP "$D_PID" # SIGHUP reloads too: it must not wedge the daemon either
sleep 1
expect "ping after SIGHUP with the FIFO in place" quiet timeout -k 5 "$TMO" "$CTL" ping --socket "$SOCK"
stop_daemon "FIFO in hwloc_dir"
rm -f "$T/hw/zz-evil.xml"

mkdir -p "$T/state/registrations"
rm -f "$T/state/state.json"
mkfifo "$T/state/state.json" "$T/state/registrations/fifo1.xml"
ln -s /dev/zero "$T/state/registrations/zero1.xml"
start_daemon
expect "rankmapd starts with FIFOs as state.json and as registrations" quiet timeout -k 5 "$TMO" "$CTL" ping --socket "$SOCK"
expect "and serves the hwloc directory" quiet "$CTL" distance --socket "$SOCK" bonobo001 bonobo002
grep -q "registrations/fifo1.xml: not a regular file (a FIFO)" "$T/d.log" &&
	grep -q "registrations/zero1.xml: not a regular file (a character device)" "$T/d.log" &&
	grep -q "state.json: not a regular file (a FIFO)" "$T/d.log" &&
	ok "each named in a warning: $(grep -c 'not a regular file' "$T/d.log") warnings" ||
	notok "warnings naming the FIFOs: $(tail -n 5 "$T/d.log")"
stop_daemon "FIFOs in the state directory"
finish
