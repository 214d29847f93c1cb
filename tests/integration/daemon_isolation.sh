#!/bin/sh
# tests/integration/daemon_isolation.sh: no engine takes rankmapd down or holds a worker for good.
# A real rankmapd (isolation = process, the default) on the bundled example cluster, started with the
# test-only RANKMAP_TEST_FAULTS=1 so that `map` engines test:segv, test:abort, test:spin, test:sleep and
# test:hog misbehave on demand; plus the real Scotch crash on the example cluster (answered or an
# `internal` error, whether or not Scotch is fixed). Each fault must cost one request its error while
# ping and later maps are served, be logged once with the peer's uid, and leave a fresh worker process.
# SIGTERM during hung requests exits well under 1 s and leaves none of the daemon's processes, in both
# isolation modes. Processes are tracked by the PIDs this script started and their children.
. "$(dirname "$0")/../lib.sh"
# GCC 12's ASan does not lock its allocator around fork(): a worker process forked while another
# thread allocates can hang on its first malloc, so an ASan rankmapd defaults to isolation = thread
# (srv_config.c) and this test of worker processes runs in the plain suite only.
if ldd "$BIN/rankmapd" 2>/dev/null | grep -q libasan; then
	skip "SANITIZE=1: GCC 12's ASan cannot fork worker processes from a threaded rankmapd safely"
	finish
	exit $?
fi

CTL=$BIN/rankmapctl
T=$(mktmp)
chmod 755 "$T"
rankmapd_cleanup "$T"

# req SOCK ALGO: sends one map request (tests/raw_client.py, mode map: a raw frame, as rankmapctl refuses
# unknown engine names) and prints "<code> <ms> <message>" of the response, "ok <ms> <warnings>" on
# success, "noanswer <ms>" when none came.
req() { python3 "$TOP/tests/raw_client.py" unix "$1" map "$2"; }

# children PID: the daemon's child processes (its worker processes), one per line.
children() { cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | grep . | sort; }

# start CONF LOG: starts the daemon with the test engines in the background (D_PID) and waits until it
# answers ping.
start() { start_rankmapd_env RANKMAP_TEST_FAULTS=1 "$1" "$T/sock" "$2" --state-dir "$T/state"; }

# sigterm_fast NAME: SIGTERM to the daemon must end it within 1 s (measured by sigterm_ms, tests/lib.sh:
# the daemon's own delay, whatever the machine's load), leaving none of its children (each gone within
# 5 s: killed by the daemon, or on its death).
sigterm_fast() {
	kids=$(children "$D_PID")
	ms=$(sigterm_ms "$D_PID")
	wait "$D_PID"; rc=$?
	D_PID=
	echo "# $1: SIGTERM to exit: $ms ms (limit 1000 ms), exit status $rc"
	expect "$1: SIGTERM exits in under 1 s ($ms ms) with status 0" test "${ms:-10000}" -lt 1000 -a "$rc" -eq 0
	n=0
	while :; do
		left=
		for k in $kids; do [ -d /proc/"$k" ] && left="$left $k"; done
		[ -z "$left" ] || [ $n -ge 100 ] && break
		sleep 0.05; n=$((n + 1))
	done
	expect "$1: no worker process left behind (had:$(echo $kids | tr '\n' ' '); left:${left:- none})" test -z "$left"
}

# started LOG FAULT N: waits (at most 60 s) until LOG shows N starts of the test fault FAULT (srv_fault.c
# logs each when it takes its worker): a fault known to hold its worker, however loaded the machine.
started() {
	n=0
	while [ "$(grep -c "test fault $2 starts" "$1")" -lt "$3" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
	[ "$(grep -c "test fault $2 starts" "$1")" -ge "$3" ]
}

cat >"$T/process.conf" <<EOC
cluster = $DATA/example/cluster.conf
socket_mode = 0666
worker_threads = 2
isolation = process
worker_time_limit = 10s
worker_cpu_limit = 1s
worker_memory_limit = 256M
EOC

# ---- configuration ------------------------------------------------------------------------------
# the default: process, thread in an ASan build (srv_config.c: GCC 12's ASan cannot fork a threaded process)
want=process; ldd "$BIN/rankmapd" 2>/dev/null | grep -q libasan && want=thread
printf 'cluster = %s\n' "$DATA/example/cluster.conf" >"$T/default.conf"
expect "isolation defaults to $want" sh -c "'$BIN/rankmapd' --config '$T/default.conf' --print-config | grep -qx 'isolation = $want'"
printf 'isolation = fork\n' >"$T/bad.conf"
"$BIN/rankmapd" --config "$T/bad.conf" --print-config >/dev/null 2>"$T/bad.err"; rc=$?
expect "isolation = fork is refused (exit 1)" test "$rc" -eq 1
expect "naming the file and line" grep -q "bad.conf:1.*isolation: expected process or thread" "$T/bad.err"
printf 'worker_memory_limit = 1M\n' >"$T/bad2.conf"
expect_fail "worker_memory_limit below 64M is refused" "$BIN/rankmapd" --config "$T/bad2.conf" --print-config

# ---- faults in process mode ------------------------------------------------------------------------
expect "daemon started" start "$T/process.conf" "$T/d.log"
r=$(req "$T/sock" treematch)
expect "the checker sees a normal map answered ok ($r)" test "${r%% *}" = ok
w0=$(children "$D_PID")
expect "three worker processes at start (worker_threads 2 and the reserve one)" test "$(echo "$w0" | grep -c .)" -eq 3

check_fault() { # ALGO CODE PATTERN
	r=$(req "$T/sock" "$1")
	echo "# $1: $r"
	expect "$1: the request gets $2" test "${r%% *}" = "$2"
	expect "$1: and the message says why" sh -c "echo \"\$1\" | grep -q \"\$2\"" sh "$r" "$3"
	expect "$1: the daemon still answers ping" "$CTL" ping --socket "$T/sock"
	r=$(req "$T/sock" treematch)
	expect "$1: a later map is answered ok" test "${r%% *}" = ok
	expect "$1: three worker processes again" test "$(children "$D_PID" | grep -c .)" -eq 3
}
# Under AddressSanitizer (make SANITIZE=1) the worker reports a SEGV and a failed allocation itself and
# exits with status 1: the request still gets `internal` and the daemon goes on.
if ldd "$BIN/rankmapd" 2>/dev/null | grep -q libasan; then
	SEGV="exited with status 1" HOG="exited with status 1" NLOG=5
else
	SEGV="signal 11 (SIGSEGV" HOG="out of memory after" NLOG=4
fi
check_fault test:segv internal "$SEGV"
check_fault test:abort internal "signal 6 (SIGABRT"
# a machine loaded by other work may reach the wall-clock limit before 1 s of CPU: either limit is the right answer
check_fault test:spin timeout "worker_cpu_limit (1 s of CPU)\\|worker_time_limit"
check_fault test:sleep timeout "worker_time_limit (10 s wall-clock)"
check_fault test:hog internal "$HOG"
w1=$(children "$D_PID")
dead=$(sed -n 's/.*: worker process \([0-9]*\) .*/\1/p' "$T/d.log")
same=
for k in $dead; do echo "$w1" | grep -qx "$k" && same="$same $k"; done
expect "the failed worker processes ($(echo $dead)) were replaced (now: $(echo $w1))" \
	test -z "$same" -a "$(echo "$dead" | grep -c .)" -eq "$NLOG"
uid=$(id -u)
expect "each crash and overrun is logged once, with the peer's uid" \
	test "$(grep -c "map request of uid $uid (pid [0-9]*): worker process [0-9]* " "$T/d.log")" -eq "$NLOG"
expect "the crash log names the cause" grep -q "worker process [0-9]* died of signal 6 (SIGABRT" "$T/d.log"
# the real Scotch fault on the example cluster: an answer or an error, never a dead daemon
"$CTL" map --socket "$T/sock" --cart 32x32 --algo scotch >"$T/scotch.out" 2>&1; rc=$?
echo "# scotch 32x32: exit $rc: $(tail -1 "$T/scotch.out")"
expect "scotch 32x32 on the example: answered or an error, exit 0 or 1 (got $rc)" test "$rc" -le 1
if [ "$rc" -eq 1 ]; then
	expect "scotch failure is the error of a dead or stopped worker" \
		grep -q -e "internal: the worker process" -e "timeout: the map request" "$T/scotch.out"
fi
expect "the daemon answers ping after the Scotch request" "$CTL" ping --socket "$T/sock"
expect "and serves a map after it" "$CTL" map --socket "$T/sock" --cart 8x8 --algo treematch
expect "the daemon process itself never died" kill -0 "$D_PID"

# ---- SIGTERM during hung requests ----------------------------------------------------------------------
sed 's/^worker_time_limit = .*/worker_time_limit = 10m/; s/^worker_cpu_limit = .*/worker_cpu_limit = 10m/' \
	"$T/process.conf" >"$T/hang.conf"
"$CTL" ping --socket "$T/sock" >/dev/null
term_rankmapd
expect "daemon started (no limits)" start "$T/hang.conf" "$T/d2.log"
req "$T/sock" test:sleep >"$T/h1" &
H1=$!
req "$T/sock" test:spin >"$T/h2" &
H2=$!
both_started() { started "$T/d2.log" test:sleep 1 && started "$T/d2.log" test:spin 1; }
expect "process mode: both faults hold their workers" both_started
expect "process mode: ping is answered while both workers hang" "$CTL" ping --socket "$T/sock"
sigterm_fast "process mode"
wait "$H1" "$H2"
expect "the hung clients see the connection closed" grep -q noanswer "$T/h1" "$T/h2"

sed -e '/^isolation = /d' -e 's/^worker_threads = .*/worker_threads = 2\nisolation = thread/' "$T/hang.conf" >"$T/thread.conf"
expect "daemon started (isolation = thread)" start "$T/thread.conf" "$T/d3.log"
r=$(req "$T/sock" treematch)
expect "thread mode: a map is answered ok ($r)" test "${r%% *}" = ok
expect "thread mode: no worker process" test -z "$(children "$D_PID")"
req "$T/sock" test:sleep >"$T/h3" &
H3=$!
expect "thread mode: the fault holds its worker thread" started "$T/d3.log" test:sleep 1
sigterm_fast "thread mode"
expect "thread mode: the stuck thread is reported" grep -q "still running a request" "$T/d3.log"
wait "$H3"

finish
