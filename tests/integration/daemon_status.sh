#!/bin/sh
# tests/integration/daemon_status.sh: what rankmapd tells its admin: ping and report show the
# last reload's time and result (none, ok, then a failure with its reason while the previous model
# serves); every refused or failed request is logged once, and a burst is rate-limited (at most 10
# lines a second, then a count of those not logged); SIGTERM on an idle daemon exits at once.
# A real rankmapd on a temporary socket and state directory, stopped by PID.
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
T=$(mktmp) || exit 1
rankmapd_cleanup "$T"
SOCK=$T/sock
cp "$DATA/plafrim/ib/ib-subnet0.txt" "$T/ib.txt"
printf 'hwloc_dir = %s\nib_file = %s\nsocket_mode = 0666\n' "$DATA/daemon/hwloc" "$T/ib.txt" >"$T/rankmapd.conf"
start_rankmapd "$T/rankmapd.conf" "$SOCK" "$T/d.log" --state-dir "$T/state"

# ---- the last reload ---------------------------------------------------------------------------------
expect "ping before any reload: none since start" sh -c "'$CTL' ping --socket '$SOCK' | grep -q '^last reload: none since start'"
expect "ping --json: last_reload null" sh -c "'$CTL' ping --socket '$SOCK' --json | grep -q '\"last_reload\": null'"
expect "reload" "$CTL" reload --socket "$SOCK"
expect "ping after it: its time and ok" sh -c "'$CTL' ping --socket '$SOCK' | grep -q '^last reload: [0-9-]* [0-9:]*, ok$'"
printf 'not a fabric\n' >"$T/ib.txt"
expect_fail "a reload of a broken source fails" "$CTL" reload --socket "$SOCK"
expect "ping: the failure and its reason (file and line)" \
	sh -c "'$CTL' ping --socket '$SOCK' | grep -q '^last reload: .*FAILED.*ib.txt:1:1: not ibnetdiscover output'"
expect "ping --json: ok false and the error" sh -c "'$CTL' ping --socket '$SOCK' --json | python3 -c '
import json, sys; r = json.load(sys.stdin)[\"last_reload\"]; sys.exit(not (r[\"ok\"] is False and \"ib.txt\" in r[\"error\"] and r[\"at\"] > 0))'"
expect "report (text): the failed reload on stderr (stdout stays the offline form)" \
	sh -c "'$CTL' report --socket '$SOCK' 2>&1 >/dev/null | grep -q '^rankmapctl report: rankmapd at .*: last reload: .*FAILED.*ib.txt'"
expect "the daemon's report response: daemon.last_reload" sh -c "python3 - '$SOCK' <<'PY'
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
b = json.dumps({'version': 1, 'type': 'report', 'id': 1}).encode(); s.sendall(struct.pack('>I', len(b)) + b)
n = struct.unpack('>I', s.recv(4, socket.MSG_WAITALL))[0]
r = json.loads(s.recv(n, socket.MSG_WAITALL))['daemon']['last_reload']
sys.exit(not (r['ok'] is False and 'ib.txt' in r['error']))
PY"
expect "the previous model still serves" sh -c "'$CTL' report --socket '$SOCK' | grep -q '125'"
cp "$DATA/plafrim/ib/ib-subnet0.txt" "$T/ib.txt"
kill -HUP "$D_PID"
n=0; while [ $n -lt 100 ] && ! "$CTL" ping --socket "$SOCK" | grep -q ', ok$'; do sleep 0.1; n=$((n + 1)); done
expect "SIGHUP reload: recorded as ok again" sh -c "'$CTL' ping --socket '$SOCK' | grep -q '^last reload: .*, ok$'"

# ---- refused and failed requests in the log ------------------------------------------------------
"$CTL" distance --socket "$SOCK" nosuchhost bonobo001 >/dev/null 2>&1
"$CTL" map --socket "$SOCK" --cart 4x4 --hosts nosuchhost2 >/dev/null 2>&1
sleep 0.3
n=$(grep -c "refused distance request of uid [0-9]* (pid [0-9]*): not_found: .*nosuchhost" "$T/d.log")
expect "a refused distance request (answered in a worker process): logged once ($n)" test "$n" = 1
n=$(grep -c "refused map request of uid .*: bad_request: nosuchhost2" "$T/d.log")
expect "a refused map request: logged once ($n)" test "$n" = 1
n=$(grep -c "failed reload request of uid .*: failed: reload failed" "$T/d.log")
expect "the failed reload request: logged once ($n)" test "$n" = 1
# a burst of 60 bad requests on one connection (small frames: answered by the event loop)
python3 - "$SOCK" <<'PY'
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
for i in range(60):
    b = json.dumps({"version": 1, "type": "frobnicate", "id": i}).encode()
    s.sendall(struct.pack('>I', len(b)) + b)
    n = struct.unpack('>I', s.recv(4, socket.MSG_WAITALL))[0]; s.recv(n, socket.MSG_WAITALL)
PY
sleep 1.1
"$CTL" distance --socket "$SOCK" nosuchhost3 bonobo001 >/dev/null 2>&1
sleep 0.3
n=$(grep -c "refused frobnicate request .*unknown_type" "$T/d.log")
expect "a burst of 60 refused requests: rate-limited to at most 2 seconds' worth of lines ($n)" \
	sh -c "[ $n -ge 1 ] && [ $n -le 20 ]"
expect "... then a count of those not logged" grep -q "more refused requests were not logged (at most 10 a second)" "$T/d.log"
expect "the daemon still answers" "$CTL" ping --socket "$SOCK"

# ---- SIGTERM on an idle daemon ------------------------------------------------------------------------
# idle: no request in flight (every answer above was read), the log's rate limit past
sleep 1.1
ms=$(sigterm_ms "$D_PID"); wait "$D_PID"; rc=$?; D_PID=
echo "# idle rankmapd: SIGTERM to exit in $ms ms (its threads and the measure at nice -20; load $(cut -d' ' -f1 /proc/loadavg))"
expect "idle SIGTERM: clean exit (status $rc) in well under a second ($ms ms; 500 ms allowed)" \
	sh -c "[ $rc -eq 0 ] && [ ${ms:-10000} -lt 500 ]"
expect "the socket file is removed" test ! -e "$SOCK"
finish
