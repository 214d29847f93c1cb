#!/bin/sh
# tests/integration/daemon_tcp.sh: rankmapd over TCP on loopback, authenticated by a real munged (a
# temporary key, socket and state):
# - rankmapctl --server ping/report/map give the same output as --socket and as offline;
# - refusals (TCP authentication version 2), each with its code: a request without
#   authentication, a client of version 1, a replayed credential, one naming another server, one
#   restricted to another uid or to none, one made with another key (a second munged), one made for
#   something else, a malformed or oversized first frame, no hello within auth_timeout, an unprivileged user's register, a node registering another node's name (and the
#   same allowed from a trusted registrar, on a second daemon);
# - server lists: a refused, an unresolvable and a black-hole first entry each cost one warning and the
#   second entry answers, within the timeout; bad entries are errors naming the entry;
# - munged down: clients get an error naming munged, the daemon stays up and serves its Unix socket;
# - a flood of connections that never authenticate leaves authenticated clients served.
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
T=$(mktmp)
chmod 755 "$T"
PIDS= # the test's other processes
rankmapd_on_exit() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	for f in "$T"/munge*/pid; do [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
	wait 2>/dev/null
}
rankmapd_cleanup "$T"
command -v munged >/dev/null || { notok "munged not installed (scripts/deps.sh)"; finish; exit 1; }

# start_munged NAME KEYFILE: a munged of our own on $T/NAME/sock, origin 127.0.0.1
start_munged() {
	mkdir -p "$T/$1" && chmod 755 "$T/$1"
	munged --socket="$T/$1/sock" --key-file="$2" --pid-file="$T/$1/pid" --log-file="$T/$1/log" \
		--seed-file="$T/$1/seed" --origin=127.0.0.1 || return 1
	n=0; while [ $n -lt 50 ] && [ ! -S "$T/$1/sock" ]; do sleep 0.1; n=$((n + 1)); done
	[ -S "$T/$1/sock" ]
}
stop_munged() {
	p=$(cat "$T/$1/pid" 2>/dev/null) && kill "$p" 2>/dev/null
	n=0; while [ $n -lt 50 ] && kill -0 "$p" 2>/dev/null; do sleep 0.1; n=$((n + 1)); done
	rm -f "$T/$1/pid"
}
head -c 1024 /dev/urandom >"$T/key.a" && head -c 1024 /dev/urandom >"$T/key.b" && chmod 600 "$T"/key.*
expect "munged A starts (temporary key and socket)" start_munged munge "$T/key.a"
expect "munged B starts (another key)" start_munged mungeb "$T/key.b"
export RANKMAP_MUNGE_SOCKET="$T/munge/sock"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
PORT2=$(free_port)
CLOSED=$(free_port) # nothing listens there
CLUSTER=$T/cluster.conf
cat >"$CLUSTER" <<EOC
hwloc = $DATA/plafrim/hwloc
ib = $DATA/plafrim/ib/ib-subnet0.txt
EOC
# start_daemon NAME PORT EXTRA: rankmapd with a Unix socket and a TCP listener
start_daemon() {
	cat >"$T/$1.conf" <<EOC
cluster = $CLUSTER
socket = $T/$1.sock
listen = 127.0.0.1:$2
munge_socket = $T/munge/sock
request_timeout = 2s
auth_timeout = 1s
max_clients_per_uid = 32
$3
EOC
	start_rankmapd "$T/$1.conf" "$T/$1.sock" "$T/$1.log" --state-dir "$T/$1.state"
	eval "$1_PID=$D_PID"
	n=0; while [ $n -lt 100 ] && ! "$CTL" ping --server "127.0.0.1:$2" --timeout 1000 >/dev/null 2>&1; do
		sleep 0.1; n=$((n + 1)); done
}
start_daemon d "$PORT" ""
S=127.0.0.1:$PORT
expect "rankmapd answers over TCP" "$CTL" ping --server "$S"
"$CTL" ping --server "$S" >"$T/ping.out"
expect "ping shows tcp, the peer address and the authenticated uid 0" \
	grep -Eq "at $S: .*; tcp from 127\.0\.0\.1:[0-9]+, uid 0$" "$T/ping.out"
"$CTL" ping --socket "$T/d.sock" >"$T/ping.unix"
expect "ping on the Unix socket shows unix and uid 0" grep -q "; unix, uid 0$" "$T/ping.unix"
expect "RANKMAP_SERVER names the server" env RANKMAP_SERVER="$S" "$CTL" ping
expect "RANKMAP_SERVER wins over RANKMAP_SOCKET" env RANKMAP_SERVER="$S" RANKMAP_SOCKET="$T/nothing" "$CTL" ping

# ---- same output over TCP, over the Unix socket and offline
same() {
	sed 's/"time_ms": *[0-9.e+-]*/"time_ms"/; s/, [0-9.]* ms$/, ms/' "$2" >"$2.n"
	sed 's/"time_ms": *[0-9.e+-]*/"time_ms"/; s/, [0-9.]* ms$/, ms/' "$3" >"$3.n"
	if cmp -s "$2.n" "$3.n"; then ok "$1"; else notok "$1"; diff "$2.n" "$3.n" | head -5; fi
}
"$CTL" report --server "$S" --json >"$T/r.tcp"; rc=$?
"$CTL" report --socket "$T/d.sock" --json >"$T/r.unix"
"$CTL" report --cluster "$CLUSTER" --json >"$T/r.off"
[ $rc -eq 0 ] && same "report --json: tcp = unix" "$T/r.tcp" "$T/r.unix" || notok "report over tcp: exit $rc"
same "report --json: tcp = offline" "$T/r.tcp" "$T/r.off"
"$CTL" report --server "$S" >"$T/rt.tcp"
"$CTL" report --cluster "$CLUSTER" >"$T/rt.off"
same "report text: tcp = offline" "$T/rt.tcp" "$T/rt.off"
for args in "--cart 8x4:1,1:10,1 --algo treematch --hosts fourmi[001-004]" \
	"--pattern $DATA/patterns/ring8.mtx --algo treematch --hosts fourmi[001-002]"; do
	"$CTL" map $args --server "$S" --json >"$T/m.tcp"; rc=$?
	"$CTL" map $args --socket "$T/d.sock" --json >"$T/m.unix"
	"$CTL" map $args --cluster "$CLUSTER" --json >"$T/m.off"
	[ $rc -eq 0 ] && same "map $args: tcp = unix" "$T/m.tcp" "$T/m.unix" || notok "map $args over tcp: exit $rc"
	same "map $args: tcp = offline" "$T/m.tcp" "$T/m.off"
done

# ---- refusals of raw clients (python3): each gets its error frame, then the connection is closed
raw() { python3 "$TOP/tests/raw_client.py" 127.0.0.1 "$PORT" "$@" 2>&1; }
raw request >"$T/o"
expect "a request without authentication: auth, closed" grep -q "^auth a request without authentication" "$T/o"
expect "  and the connection is closed" grep -q "^then closed" "$T/o"
raw garbage >"$T/o"
expect "a first frame that is not a hello: auth" grep -q "^auth the first frame is not a rankmap hello" "$T/o"
raw huge >"$T/o"
expect "a first frame announcing 1 GiB: auth, nothing read" grep -q "^auth first frame of 1073741824 bytes" "$T/o"
printf 'rankmap-auth 1' | munge -S "$T/munge/sock" >"$T/cred"
raw v1 "$T/cred" >"$T/o"
expect "a client of protocol version 1 (a credential without a hello): auth naming the version" \
	grep -q "^auth a credential without a hello: a client of TCP authentication version 1; this rankmapd speaks version 2" "$T/o"
raw hello >"$T/o"
expect "a hello is answered by the server's credential: uid 0, for the address the client dialed" \
	grep -q "^server uid=0 ident=127.0.0.1:$PORT name=-$" "$T/o"
raw login --save "$T/cred" >"$T/o"
expect "the handshake (munge, unmunge): accepted, then serves a request as uid 0" grep -q "^ok uid=0 transport=tcp" "$T/o"
raw login --cred "$T/cred" >"$T/o"
expect "the same credential again: auth, replayed" grep -q "^auth credential replayed" "$T/o"
raw login --ident "127.0.0.1:1" >"$T/o"
expect "a credential naming another server: auth" grep -q "^auth credential made for another server or connection" "$T/o"
raw login --restrict 1234 >"$T/o"
expect "a credential restricted to another uid: auth" grep -q "^auth credential restricted to another user" "$T/o"
raw login --restrict none >"$T/o"
expect "a credential restricted to no uid: auth" grep -q "^auth credential not restricted to this daemon's uid 0" "$T/o"
munge -n -S "$T/mungeb/sock" >"$T/credb"
raw login --cred "$T/credb" >"$T/o"
expect "a credential made with another key: auth, invalid" grep -q "^auth invalid credential (made with another MUNGE key?)" "$T/o"
raw login --payload 'rankmap-auth 1' >"$T/o"
expect "a credential made for something else: auth" grep -q "^auth credential not made for rankmap" "$T/o"
t0=$(date +%s%N)
raw silent >"$T/o"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect "no hello within auth_timeout (1 s here, not request_timeout's 2 s): timeout, closed (${ms} ms)" \
	sh -c "grep -q '^timeout no hello within auth_timeout' '$T/o' && [ $ms -lt 3000 ]"
expect "refusals are logged with the peer and the reason" grep -q "refused tcp 127.0.0.1:[0-9]* uid ?: auth: credential replayed" "$T/d.log"

# ---- who may do what over TCP
if command -v setpriv >/dev/null 2>&1; then
	NB="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	$NB "$CTL" ping --server "$S" >"$T/o" 2>&1
	expect "user nobody may ping over TCP, authenticated as its own uid" grep -q "uid $(id -u nobody)$" "$T/o"
	$NB "$CTL" map --cart 4x2 --hosts fourmi001 --server "$S" >/dev/null 2>&1
	expect "user nobody may map over TCP" test $? -eq 0
	$NB "$CTL" register --force --server "$S" --xml "$DATA/plafrim/hwloc/mirage002.xml" --host localhost >"$T/o" 2>&1; rc=$?
	expect "user nobody's register over TCP: permission_denied (exit $rc)" grep -q "permission_denied" "$T/o"
else
	notok "setpriv missing: the unprivileged user's checks cannot run"
fi
"$CTL" register --force --server "$S" --xml "$DATA/plafrim/hwloc/mirage002.xml" --host bonobo001 >"$T/o" 2>&1; rc=$?
expect "root registering another node's name over TCP: permission_denied (exit $rc)" \
	grep -q "permission_denied: register: 'bonobo001' does not resolve to 127.0.0.1" "$T/o"
expect "  logged with the peer" grep -q "register of bonobo001 refused to tcp 127.0.0.1:[0-9]* uid 0" "$T/d.log"
expect "root registering its own name (localhost -> 127.0.0.1, the credential's origin) over TCP" \
	"$CTL" register --force --server "$S" --xml "$DATA/plafrim/hwloc/mirage002.xml" --host localhost
expect "the Unix socket keeps SO_PEERCRED: root may register any name there" \
	"$CTL" register --force --socket "$T/d.sock" --xml "$DATA/plafrim/hwloc/mirage002.xml" --host bonobo001

# ---- server lists
"$CTL" ping --server "127.0.0.1:$CLOSED,$S" >"$T/o" 2>"$T/e"; rc=$?
expect "closed port first, then the daemon: answered" test $rc -eq 0
expect "  with one warning naming the closed entry" test "$(grep -c "warning: 127.0.0.1:$CLOSED: cannot connect" "$T/e")" -eq 1
expect "  answered by the second" grep -q "at $S:" "$T/o"
"$CTL" ping --server "nosuchhost.invalid:1,$S" >"$T/o" 2>"$T/e"; rc=$?
expect "unresolvable name first: answered, one warning naming it" \
	sh -c "[ $rc -eq 0 ] && [ \$(grep -c 'warning: nosuchhost.invalid:1: cannot resolve' '$T/e') -eq 1 ]"
# a black hole: listening but never accepting nor answering (a stopped daemon, a half-open listener)
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$T/bh.port" &
PIDS="$PIDS $!"
n=0; while [ $n -lt 50 ] && [ ! -s "$T/bh.port" ]; do sleep 0.1; n=$((n + 1)); done
BH=127.0.0.1:$(cat "$T/bh.port")
# The slack over each timeout: 500 ms, plus twice what a plain ping to the live server takes right now
# (process start and authentication; seconds on a machine under heavy load, where a fixed slack failed).
t0=$(date +%s%N)
"$CTL" ping --server "$S" >/dev/null 2>&1
base=$(( ($(date +%s%N) - t0) / 1000000 ))
t0=$(date +%s%N)
"$CTL" ping --server "$BH,$S" --timeout 3000 >"$T/o" 2>"$T/e"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect "black-hole first entry: answered by the second within the 3 s timeout ($ms ms; a plain ping $base ms)" \
	sh -c "[ $rc -eq 0 ] && [ $ms -lt $((3500 + 2 * base)) ] && grep -q 'warning: $BH' '$T/e'"
t0=$(date +%s%N)
"$CTL" ping --server "$BH,127.0.0.1:$CLOSED" --timeout 2000 >/dev/null 2>"$T/e"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect "no server answers: error within the 2 s timeout ($ms ms; a plain ping $base ms), naming both" \
	sh -c "[ $rc -eq 1 ] && [ $ms -lt $((2500 + 2 * base)) ] && grep -q 'no server answered: $BH: .*; 127.0.0.1:$CLOSED: cannot connect' '$T/e'"
for bad in "host:99999|port '99999' is not a number in 1..65535" ":|':': empty host name" \
	"nosuchhost.invalid:1|nosuchhost.invalid:1: cannot resolve 'nosuchhost.invalid'" \
	"host:7117x|port '7117x' is not a number" "::1:7117|IPv6 address needs brackets" \
	"127.0.0.1:$CLOSED|127.0.0.1:$CLOSED: cannot connect to rankmapd: Connection refused"; do
	entry=${bad%%|*}; msg=${bad#*|}
	"$CTL" ping --server "$entry" --timeout 2000 >/dev/null 2>"$T/e"; rc=$?
	expect "bad entry '$entry': exit 1, names it ($msg)" sh -c "[ $rc -eq 1 ] && grep -qF \"$msg\" '$T/e'"
done
expect "IPv6 entry [::1]:PORT parses (refused: nothing listens there)" \
	sh -c "'$CTL' ping --server '[::1]:$CLOSED' --timeout 1000 2>&1 | grep -q 'cannot connect'"

# ---- a second daemon, trusted registrar; failover between the two
start_daemon b "$PORT2" "trusted_registrars = nosuchhost.invalid, 127.0.0.1"
expect "trusted registrar (127.0.0.1): may register another node's name over TCP" \
	"$CTL" register --force --server "127.0.0.1:$PORT2" --xml "$DATA/plafrim/hwloc/mirage002.xml" --host bonobo002
stop_rankmapd "$d_PID"
"$CTL" map --cart 8x4 --algo treematch --hosts "fourmi[001-004]" --server "$S,127.0.0.1:$PORT2" --json \
	>"$T/m.fo" 2>"$T/e"; rc=$?
expect "primary killed: the backup maps, one warning" sh -c "[ $rc -eq 0 ] && [ \$(wc -l <'$T/e') -eq 1 ]"

# ---- munged down: clear errors, the daemon stays up and serves its Unix socket
stop_munged munge
"$CTL" ping --server "127.0.0.1:$PORT2" --timeout 2000 >/dev/null 2>"$T/e"; rc=$?
expect "munged down: the client's error names munged (exit $rc)" \
	sh -c "[ $rc -eq 1 ] && grep -q 'munged is not running here' '$T/e'"
python3 "$TOP/tests/raw_client.py" 127.0.0.1 "$PORT2" hello >"$T/o" 2>&1
expect "munged down at the daemon: auth naming munged" grep -q "^auth munged on the server cannot be reached" "$T/o"
expect "the daemon is up and serves its Unix socket" "$CTL" ping --socket "$T/b.sock"
start_munged munge "$T/key.a" && "$CTL" ping --server "127.0.0.1:$PORT2" >/dev/null 2>&1
expect "  ping over TCP after munged's restart" test $? -eq 0

# ---- a flood of connections that never authenticate, from the clients' own address (127.0.0.1): at
# most max_unauth_per_addr (32) of them are held, the oldest silent one makes room for a new one, and
# the flood reconnects what is closed (for 8 s at most)
python3 -c '
import socket, sys, time
c, n, end = [], 0, time.time() + 8
while time.time() < end:
    c = [x for x in c if x.fileno() >= 0]
    while len(c) < 200 and time.time() < end:
        try: c.append(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)); n += 1
        except OSError: time.sleep(0.01)
        if n == 200: print(n, flush=True)
    for x in c:
        x.setblocking(False)
        try:
            if x.recv(1 << 16) == b"": x.close()
        except BlockingIOError: pass
        except OSError: x.close()
    time.sleep(0.05)' "$PORT2" >"$T/flood" &
FP=$!; PIDS="$PIDS $FP"
n=0; while [ $n -lt 100 ] && [ ! -s "$T/flood" ]; do sleep 0.1; n=$((n + 1)); done
ok=0; i=0
while [ $i -lt 10 ]; do "$CTL" ping --server "127.0.0.1:$PORT2" --timeout 3000 >/dev/null 2>>"$T/flood.err" && ok=$((ok + 1)); i=$((i + 1)); done
expect "200 silent connections from the same address: 10 of 10 authenticated pings answered ($ok)" test "$ok" -eq 10
[ "$ok" -eq 10 ] || cat "$T/flood.err"
expect "  the oldest silent ones were closed, and logged" grep -q "too many connections from this address waiting to authenticate" "$T/b.log"
kill "$FP" 2>/dev/null
expect "the daemon is still up" kill -0 "$b_PID"
finish
