#!/bin/sh
# tests/integration/daemon_bounds.sh: rankmapd's memory and connection bounds. The
# "user" is an unprivileged uid (test user rankmap-bounds, created when missing; its clients run under
# setpriv); root is root.
#  1. memory: BOUNDS_CONNS connections (default 300) of the user each send a complete frame of
#     BOUNDS_FRAME_MB MiB (default 16) while the only worker is busy (two simulate requests). The daemon takes
#     at most max_queued_bytes of them, tells the others "busy" with the limit, and its peak RSS (VmHWM)
#     stays within max_queued_bytes + the base allowance: its RSS before the flood, plus two frames per
#     worker (the one being parsed and the parsed copy), plus 64 MiB of allocator slack. Printed beside
#     the limit. root's register (through the reserve) and ping get through meanwhile.
#  2. connections: the user holds every unreserved connection; its next one gets "busy" naming the
#     reserve (rankmapctl prints the reason); root's ping and register still get through. With
#     max_clients_per_uid, the user's connection beyond it gets "busy" naming the per-user limit.
#     Refusals are logged, once per uid and limit in 10 s.
#  3. stalled partial frames (one byte short) are counted from their header: the user's next frame is
#     refused naming the per-user limit; root's stalled frames fill the shared queue up to the user's
#     share (the rest is reserved), so the user is refused and root is not. After request_timeout the
#     stalled frames get "timeout" and are closed, and the same frames are taken.
#  4. a daemon that refuses a client in the middle of its send: rankmapctl reports the reason, not
#     "Broken pipe" (fake daemon, tests/faults/fake_rankmapd.py busy).
#  5. the configuration reader's bounds on the new settings.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/faults/lib.sh"

CTL=$BIN/rankmapctl
CLIENT=$TOP/tests/integration/daemon_bounds_client.py
PY=/usr/bin/python3 # the test user cannot reach a python under /root
[ -x "$PY" ] || PY=python3
CONNS=${BOUNDS_CONNS:-300}
FRAME_MB=${BOUNDS_FRAME_MB:-16}
TUSER=rankmap-bounds
T=$(mktmp)
chmod 755 "$T"
HOLD_PID=
BG_PIDS=
rankmapd_on_exit() {
	[ -n "$HOLD_PID" ] && kill "$HOLD_PID" 2>/dev/null
	for p in $BG_PIDS; do kill "$p" 2>/dev/null; done
	fake_stop
}
rankmapd_cleanup "$T"

if [ "$(id -u)" -ne 0 ]; then
	notok "this test runs clients as another uid: it needs root"
	finish
	exit 1
fi
id "$TUSER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$TUSER" 2>/dev/null
TUID=$(id -u "$TUSER")
TGID=$(id -g "$TUSER")
expect "test user $TUSER exists (uid $TUID)" test -n "$TUID"
U=$T/user # where the user's clients write their summaries
mkdir "$U"
chown "$TUID" "$U"
asuser() { setpriv --reuid="$TUID" --regid="$TGID" --clear-groups "$@"; }
# in the background, setpriv itself (not a subshell running it), so that $! is the client's PID
ASUSER="setpriv --reuid=$TUID --regid=$TGID --clear-groups"

start() { # name, extra config lines
	mkdir -p "$T/$1"
	chmod 755 "$T/$1"
	printf 'hwloc_dir = %s/daemon/hwloc\nsocket_mode = 0666\n%s\n' "$DATA" "$2" >"$T/$1/rankmapd.conf"
	SOCK=$T/$1/sock
	LOG=$T/$1/log
	start_rankmapd "$T/$1/rankmapd.conf" "$SOCK" "$LOG" --state-dir "$T/$1/state"
}
status_kb() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$D_PID/status"; }
jget() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))' "$1" "$2"; }
XML=$DATA/daemon/hwloc/bonobo001.xml

# ---- 1. memory under a flood of complete frames -------------------------------------------------
LIMIT_MB=256
expect "daemon starts (1 worker, ${FRAME_MB} MiB frames, max_queued_bytes ${LIMIT_MB}M)" start mem "worker_threads = 1
max_frame_size = ${FRAME_MB}M
max_queued_bytes = ${LIMIT_MB}M
reserved_queued_bytes = 32M
max_queued_bytes_per_uid = ${LIMIT_MB}M
max_clients_per_uid = $((CONNS + 16))
request_timeout = 120s
idle_timeout = 300s"
BASE_KB=$(status_kb VmRSS)
for i in 1 2; do # ~6 s of CPU each on one worker: the flood's frames wait in the queue
	"$CTL" simulate --socket "$SOCK" --dims 32x32x16 --method bbb --jobs 100000 >/dev/null 2>&1 &
	BG_PIDS="$BG_PIDS $!"
done
sleep 0.5
t0=$(date +%s)
asuser "$PY" "$CLIENT" flood "$SOCK" "$CONNS" $((FRAME_MB * 1048576)) >"$T/flood.json" 2>"$T/flood.err"
echo "flood: $(cat "$T/flood.json") in $(elapsed_since "$t0") s"
# answered once the queue ahead of it is done: minutes under sanitizers on a loaded machine
"$CTL" register --force --socket "$SOCK" --xml "$XML" --host flood-root --timeout 600000 >"$T/reg.out" 2>&1
expect "root's register is taken while the user's frames fill the queue" grep -q "^registered flood-root" "$T/reg.out"
expect "root's ping meanwhile" "$CTL" ping --socket "$SOCK"
HWM_KB=$(status_kb VmHWM)
ALLOW_KB=$((BASE_KB + 2 * FRAME_MB * 1024 + 64 * 1024))
echo "peak RSS (VmHWM) $((HWM_KB / 1024)) MiB for $CONNS x $FRAME_MB MiB frames; max_queued_bytes $LIMIT_MB MiB +" \
	"allowance $((ALLOW_KB / 1024)) MiB (RSS before $((BASE_KB / 1024)) MiB + 2 frames + 64 MiB) =" \
	"$((LIMIT_MB + ALLOW_KB / 1024)) MiB"
busy=$(jget "$T/flood.json" 'answers.get("busy", 0)')
held=$(jget "$T/flood.json" 'unanswered + sum(v for k, v in answers.items() if k not in ("busy", "none"))')
expect "the user's frames beyond the limit were refused ($busy busy)" test "$busy" -ge $((CONNS - LIMIT_MB / FRAME_MB))
expect "the frames taken fit in the limit ($held x $FRAME_MB MiB <= $LIMIT_MB MiB)" \
	test $((held * FRAME_MB)) -le "$LIMIT_MB"
expect "every refused client read its busy frame (none unanswered beyond those taken)" \
	test "$(jget "$T/flood.json" 'answers.get("none", 0)')" -le "$held"
expect "the reason names the queued-bytes limit and the reserve" \
	grep -q "queued-bytes limit $((LIMIT_MB * 1048576)) reached (.*reserved for root" "$T/flood.json"
expect "peak RSS $((HWM_KB / 1024)) MiB <= limit + allowance $((LIMIT_MB + ALLOW_KB / 1024)) MiB" \
	test "$HWM_KB" -le $((LIMIT_MB * 1024 + ALLOW_KB))
expect "the refusals are logged" grep -q "refused uid $TUID .*queued-bytes limit" "$LOG"
secs=$(elapsed_since "$t0")
expect "once per uid and limit in 10 s ($(grep -c "refused uid $TUID" "$LOG") lines in $secs s)" \
	test "$(grep -c "refused uid $TUID" "$LOG")" -le $((1 + secs / 10))
for p in $BG_PIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
BG_PIDS=
term_rankmapd

# ---- 2. connections: the reserve and the per-user cap --------------------------------------------
hold_start() { # N: the user holds N connections; waits for its summary in $T/hold.json
	rm -f "$U/hold.json"
	$ASUSER "$PY" "$CLIENT" hold "$SOCK" "$1" "$U/hold.json" &
	HOLD_PID=$!
	n=0
	while [ ! -f "$U/hold.json" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
	[ -f "$U/hold.json" ]
}
hold_stop() { kill "$HOLD_PID" 2>/dev/null; wait "$HOLD_PID" 2>/dev/null; HOLD_PID=; }
expect "daemon starts (max_clients 40, reserved_clients 8)" start conn "max_clients = 40
reserved_clients = 8
max_clients_per_uid = 40
idle_timeout = 300s"
expect "the user opens 33 connections" hold_start 33
expect "it holds the 32 unreserved ones ($(jget "$U/hold.json" held))" test "$(jget "$U/hold.json" held)" -eq 32
expect "the 33rd got busy naming the reserve" \
	grep -q 'all 32 unreserved connections are in use (max_clients 40, reserved_clients 8' "$U/hold.json"
asuser "$CTL" ping --socket "$SOCK" >"$T/uping.out" 2>&1; rc=$?
expect "the user's rankmapctl ping fails" test "$rc" -ne 0
expect "and prints the reason (no Broken pipe)" grep -q 'busy: all 32 unreserved connections' "$T/uping.out"
expect "root's ping gets through" "$CTL" ping --socket "$SOCK"
"$CTL" register --force --socket "$SOCK" --xml "$XML" --host reserve-root >"$T/reg2.out" 2>&1
expect "root's register gets through" grep -q "^registered reserve-root" "$T/reg2.out"
expect "the refusal is logged with the uid" grep -q "refused uid $TUID .*unreserved connections" "$LOG"
expect "two refusals within 10 s, one log line" test "$(grep -c "refused uid $TUID .*unreserved" "$LOG")" -eq 1
hold_stop
term_rankmapd
expect "daemon starts (max_clients_per_uid 10)" start cap "max_clients = 40
reserved_clients = 8
max_clients_per_uid = 10
idle_timeout = 300s"
expect "the user opens 11 connections" hold_start 11
expect "it holds 10 ($(jget "$U/hold.json" held))" test "$(jget "$U/hold.json" held)" -eq 10
expect "the 11th got busy naming the per-user limit" \
	grep -q "per-user connection limit 10 reached (uid $TUID)" "$U/hold.json"
expect "root is not capped: ping" "$CTL" ping --socket "$SOCK"
expect "the refusal is logged" grep -q "refused uid $TUID .*per-user connection limit 10" "$LOG"
hold_stop
term_rankmapd

# ---- 3. stalled partial frames count, then time out -------------------------------------------------
stall_start() { # who (user|root), N, output
	if [ "$1" = user ]; then
		$ASUSER "$PY" "$CLIENT" stall "$SOCK" "$2" 1048576 "$3" &
	else
		"$PY" "$CLIENT" stall "$SOCK" "$2" 1048576 "$3" &
	fi
	BG_PIDS="$BG_PIDS $!"
}
expect "daemon starts (1 MiB frames, 8 MiB queue, 1 MiB reserve, 2.5 MiB per user, 5 s request timeout)" \
	start stall "max_frame_size = 1M
max_queued_bytes = 8M
reserved_queued_bytes = 1M
max_queued_bytes_per_uid = 2560k
request_timeout = 5s
idle_timeout = 300s"
stall_start user 2 "$U/ustall.json"
sleep 0.5
asuser "$PY" "$CLIENT" send "$SOCK" 1048576 >"$T/usend.out" 2>&1
expect "2 stalled frames of the user count: its next 1 MiB frame is refused" grep -q '^busy ' "$T/usend.out"
expect "naming the per-user limit and what the user holds" \
	grep -q "per-user queued-bytes limit 2621440 reached (uid $TUID holds 2097152 bytes, frame of 1048576" \
	"$T/usend.out"
stall_start root 5 "$T/rstall.json"
sleep 0.5
asuser "$PY" "$CLIENT" send "$SOCK" 400000 >"$T/usend2.out" 2>&1
expect "root's 5 and the user's 2 stalled frames fill the users' share: a 400 kB frame of the user is refused" \
	grep -q "^busy queued-bytes limit 8388608 reached (7340032 bytes held, 1048576 of them reserved" "$T/usend2.out"
"$PY" "$CLIENT" send "$SOCK" 400000 >"$T/rsend.out" 2>&1
expect "root's 400 kB frame is taken (the reserve): answered, not busy ($(cut -c1-40 "$T/rsend.out"))" \
	sh -c "! grep -q -e '^busy' -e '^none' '$T/rsend.out'"
for p in $BG_PIDS; do wait "$p" 2>/dev/null; done
BG_PIDS=
expect "the user's stalled frames got timeout" test "$(jget "$U/ustall.json" 'answers.get("timeout", 0)')" -eq 2
expect "root's stalled frames got timeout" test "$(jget "$T/rstall.json" 'answers.get("timeout", 0)')" -eq 5
expect "after about request_timeout ($(jget "$U/ustall.json" seconds) s)" \
	test "$(jget "$U/ustall.json" 'int(all(4.5 <= s <= 20 for s in seconds))')" -eq 1
expect "and were closed" test "$(jget "$U/ustall.json" closed)" -eq 2
asuser "$PY" "$CLIENT" send "$SOCK" 1048576 >"$T/usend3.out" 2>&1
expect "once they are gone, the user's 1 MiB frame is taken ($(cut -c1-40 "$T/usend3.out"))" \
	sh -c "! grep -q -e '^busy' -e '^none' '$T/usend3.out'"
expect "daemon still running" kill -0 "$D_PID"
term_rankmapd

# ---- 4. refused in the middle of a send: the client reads the reason ---------------------------------
head -c $((8 * 1048576)) /dev/zero | tr '\0' 'x' >"$T/big.xml"
if fake_start busy "$T/fake.sock"; then
	"$CTL" register --force --socket "$T/fake.sock" --xml "$T/big.xml" --host big >"$T/fake.out" 2>&1; rc=$?
	expect "rankmapctl fails" test "$rc" -ne 0
	expect "with the daemon's reason, not Broken pipe ($(head -c 160 "$T/fake.out"))" \
		grep -q 'busy: fake limit 7 reached' "$T/fake.out"
	fake_stop
else
	notok "fake daemon did not start"
fi

# ---- 5. the configuration reader ----------------------------------------------------------------
conf_err() { # expected text, config lines
	printf 'socket = %s/x.sock\nstate_dir = %s/x\n%s\n' "$T" "$T" "$2" >"$T/bad.conf"
	"$BIN/rankmapd" --config "$T/bad.conf" --print-config >/dev/null 2>"$T/bad.err"; rc=$?
	[ "$rc" -eq 1 ] && grep -q -e "$1" "$T/bad.err" || { cat "$T/bad.err"; return 1; }
}
expect "reserved_clients must be below max_clients" conf_err 'reserved_clients (64) must be below max_clients (64)' \
	"max_clients = 64
reserved_clients = 64"
expect "per-user bytes within the global limit" conf_err 'max_queued_bytes_per_uid (536870912) exceeds' \
	"max_queued_bytes_per_uid = 512M"
expect "reserved bytes below the global limit" conf_err 'reserved_queued_bytes (268435456) must be below' \
	"reserved_queued_bytes = 256M"
expect "the global limit holds a largest frame" conf_err 'max_queued_bytes (8388608) is below max_frame_size' \
	"max_queued_bytes = 8M
reserved_queued_bytes = 1M
max_queued_bytes_per_uid = 4M"
expect "out of range: file and line" conf_err 'bad.conf:3: max_queued_bytes: .1k. is not a number in 65536' \
	"max_queued_bytes = 1k"
expect "max_clients_per_uid at least 1" conf_err 'bad.conf:3: max_clients_per_uid' "max_clients_per_uid = 0"
printf 'socket = %s/x.sock\nstate_dir = %s/x\n' "$T" "$T" >"$T/good.conf"
"$BIN/rankmapd" --config "$T/good.conf" --print-config >"$T/defaults.out" 2>&1
for kv in "max_queued_bytes = 256M" "reserved_queued_bytes = 32M" "max_queued_bytes_per_uid = 64M" \
	"max_clients_per_uid = 256" "reserved_clients = 16"; do
	expect "default $kv" grep -qx "$kv" "$T/defaults.out"
done
finish
