#!/bin/sh
# tests/integration/auth_relay.sh: credentials bound to one server and one connection
# (TCP authentication version 2, daemon/PROTOCOL.md "TCP and MUNGE"), real components across network hosts
# (tests/netns.sh): p (the primary's address; its rankmapd is down), b (the backup rankmapd, server_name
# b), c (a client node). Each runs its own munged, all with one key.
# (a) An unprivileged impostor (user nobody) listens on the down primary's address and port and relays
#     everything to the backup, both ways (then, in a second run, answers "busy" as the old attack did):
#     root's `rankmapctl ping --server P,B` fails over to B directly with one warning naming the refusal,
#     the impostor captures no credential (only a hello), B authenticates nothing from the impostor's
#     address but the impostor's own uid, and the impostor's best login on B is its own uid.
# (b) A credential captured for the primary (a raw handshake by root with the munge commands, accepted
#     by a rankmapd running on p) is refused by the backup, naming why.
# (c) A credential restricted to another uid, or to none, is refused.
# (d) A rankmapd run by an ordinary user (nobody): a client expecting root sends it no credential
#     (refusal naming both uids); told the uid (--server-uid, RANKMAP_SERVER_UID) it is served, as root.
# (e) server_name: through a port forward on b (another port), a client dialing b's name is served; one
#     dialing the address is refused (the forward is a relay unless the name matches).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/netns.sh"

CTL=$BIN/rankmapctl
netns_setup rankmapd rankmapctl
command -v setpriv >/dev/null 2>&1 || { notok "setpriv missing"; finish; exit 1; }
NB="setpriv --reuid=nobody --regid=nogroup --clear-groups"
NBUID=$(id -u nobody)
PY=/usr/bin/python3 # not a shim of the invoking user's: nobody runs it too

netns_add_host p b c
for h in p b c; do expect "munged on $h (shared key)" netns_munged "$h"; done
PORT=7117
P=p:$PORT
B=b:$PORT
PA=$(netns_addr p)
BA=$(netns_addr b)
cat >"$T/cluster.conf" <<EOC
hwloc = $DATA/plafrim/hwloc
ib = $DATA/plafrim/ib/ib-subnet0.txt
EOC
# start_daemon HOST PORT NAME [EXTRA [RUNAS]]: rankmapd NAME on HOST:PORT, TCP only (PID in NAME_PID)
start_daemon() {
	mkdir -p "$T/$3.state" && chmod 755 "$T" && : >"$T/$3.log"
	[ -n "${5:-}" ] && chown "$5" "$T/$3.state" "$T/$3.log"
	cat >"$T/$3.conf" <<EOC
cluster = $T/cluster.conf
listen = $(netns_addr "$1"):$2
munge_socket = $NETNS_MUNGE_SOCK
state_dir = $T/$3.state
log_level = debug
${4:-}
EOC
	# shellcheck disable=SC2086 # PREFIX: words without blanks
	netns_rankmapd "$1" "$T/$3.conf" "$T/$3.log" ${5:+setpriv --reuid=$5 --regid=nogroup --clear-groups}
	_rc=$?
	eval "$3_PID=$NETNS_PID"
	return $_rc
}
# on HOST CMD...: CMD on HOST with its munged
on() { h=$1; shift; netns_exec "$h" env RANKMAP_MUNGE_SOCKET="$NETNS_MUNGE_SOCK" "$@"; }
raw() { h=$1; shift; on "$h" $PY "$TOP/tests/raw_client.py" "$@" 2>&1; }

expect "the backup rankmapd starts on b ($B, server_name b)" start_daemon b $PORT bak "server_name = b"
expect "root on c is served by the backup directly" on c "$CTL" ping --server "$B"

# ---- (a) an impostor on the down primary's address ----------------------------------------------------
for mode in relay busy; do
	mkdir -p "$T/cap.$mode" && chmod 777 "$T/cap.$mode"
	: >"$T/imp.$mode.out" && chmod 666 "$T/imp.$mode.out"
	netns_spawn p $NB $PY "$TOP/tests/integration/auth_impostor.py" "$PA" $PORT $mode "$BA" $PORT "$T/cap.$mode" 30 \
		>"$T/imp.$mode.out" 2>&1
	IMP=$NETNS_PID
	n=0; while [ $n -lt 50 ] && ! grep -q listening "$T/imp.$mode.out"; do sleep 0.1; n=$((n + 1)); done
	expect "$mode: an impostor (uid nobody) listens on the primary's $PA:$PORT" grep -q listening "$T/imp.$mode.out"
	lines_before=$(grep -c "authenticated tcp $PA:" "$T/bak.log")
	on c "$CTL" ping --server "$P,$B" --timeout 5000 >"$T/o" 2>"$T/e"; rc=$?
	expect "$mode: root's ping --server $P,$B: answered by the backup (exit $rc)" \
		sh -c "[ $rc = 0 ] && grep -q 'at $B:.*uid 0$' '$T/o'"
	expect "$mode:   with one warning, naming the primary and the refusal" \
		sh -c "[ \$(wc -l <'$T/e') = 1 ] && grep -q 'warning: $P: ' '$T/e'"
	[ $mode = relay ] && expect "relay:   the client refused the relayed server credential: it names the backup, not $PA:$PORT" \
		grep -q "auth: the server's credential is for $BA:$PORT (b), not for $PA:$PORT" "$T/e"
	[ $mode = busy ] && expect "busy:   the warning is the impostor's busy" grep -q "$P: busy" "$T/e"
	netns_kill "$IMP"
	nf=$(ls "$T/cap.$mode" | wc -l)
	ncred=$(grep -l '^MUNGE:' "$T/cap.$mode"/* 2>/dev/null | wc -l)
	nhello=$(grep -l '^rankmap-hello 2 ' "$T/cap.$mode"/* 2>/dev/null | wc -l)
	expect "$mode:   the impostor captured $nf frame(s): $nhello hello, $ncred credential" \
		sh -c "[ $nf -ge 1 ] && [ $nhello = $nf ] && [ $ncred = 0 ]"
	expect "$mode:   the backup authenticated nobody from the impostor's address" \
		test "$(grep -c "authenticated tcp $PA:" "$T/bak.log")" = "$lines_before"
	for f in "$T/cap.$mode"/*; do # whatever it captured, sent to the backup as a credential
		netns_exec p $NB $PY "$TOP/tests/raw_client.py" b $PORT v1 "$f" >>"$T/imp.$mode.use" 2>&1
	done
	expect "$mode:   what it captured, sent to the backup by the impostor: a challenge it cannot answer, never a login" \
		sh -c "! grep -q '^ok' '$T/imp.$mode.use' && grep -q '^challenged' '$T/imp.$mode.use'"
done
# the impostor (nobody) cannot make a credential of uid 0: its own best login is as itself
netns_exec p env RANKMAP_MUNGE_SOCKET="$NETNS_MUNGE_SOCK" $NB $PY "$TOP/tests/raw_client.py" b $PORT login >"$T/o" 2>&1
expect "the impostor's own handshake with the backup: authenticated as nobody ($NBUID), never root" \
	grep -q "^ok uid=$NBUID transport=tcp" "$T/o"

# ---- (b) a credential captured for the primary, presented to the backup ---------------------------------
expect "a rankmapd on p now ($P)" start_daemon p $PORT prim
raw c p $PORT login --save "$T/cap.prim" >"$T/o"
expect "root's raw handshake with the primary: accepted (uid 0); its credential kept" \
	sh -c "grep -q '^ok uid=0 transport=tcp' '$T/o' && grep -q '^MUNGE:' '$T/cap.prim'"
raw c b $PORT login --cred "$T/cap.prim" >"$T/o"
expect "the primary's credential presented to the backup: auth, made for another server or connection" \
	grep -q "^auth credential made for another server or connection" "$T/o"
raw c p $PORT login --cred "$T/cap.prim" >"$T/o"
expect "  and to the primary again: auth, replayed" grep -q "^auth credential replayed" "$T/o"
raw c b $PORT login --ident "$PA:$PORT" >"$T/o"
expect "a fresh credential naming the primary, on a connection to the backup: auth" \
	grep -q "^auth credential made for another server or connection" "$T/o"

# ---- (c) restrictions --------------------------------------------------------------------------------
raw c b $PORT login --restrict 1234 >"$T/o"
expect "a credential restricted to uid 1234: auth, restricted to another user" \
	grep -q "^auth credential restricted to another user" "$T/o"
raw c b $PORT login --restrict none >"$T/o"
expect "a credential restricted to no uid: auth" grep -q "^auth credential not restricted to this daemon's uid 0" "$T/o"

# ---- (d) a rankmapd run by an ordinary user --------------------------------------------------------------
UP=7118
expect "a rankmapd run by nobody on b:$UP" start_daemon b $UP user "" nobody
on c "$CTL" ping --server "b:$UP" --timeout 3000 >"$T/o" 2>&1; rc=$?
expect "a client expecting root: no credential sent, auth naming both uids (exit $rc)" \
	sh -c "[ $rc = 1 ] && grep -q \"auth: the server's credential is of uid $NBUID, not 0\" '$T/o'"
expect "  and the daemon authenticated nobody" sh -c "! grep -q 'authenticated tcp' '$T/user.log'"
on c "$CTL" ping --server "b:$UP" --server-uid nobody >"$T/o" 2>&1; rc=$?
expect "told --server-uid nobody: served, as root (exit $rc)" grep -q "uid 0$" "$T/o"
on c env RANKMAP_SERVER_UID="$NBUID" "$CTL" ping --server "b:$UP" >"$T/o" 2>&1; rc=$?
expect "told RANKMAP_SERVER_UID=$NBUID: served (exit $rc)" grep -q "uid 0$" "$T/o"
raw c b $UP login --restrict 0 >"$T/o"
expect "  a credential restricted to root, presented to it: auth, restricted to another user" \
	grep -q "^auth credential restricted to another user" "$T/o"
on c "$CTL" ping --server "$P,b:$UP" --server-uid nobody --timeout 4000 >"$T/o" 2>"$T/e"; rc=$?
expect "  a list whose first server runs as root and second as nobody, told nobody: the second, one warning (exit $rc)" \
	sh -c "[ $rc = 0 ] && grep -q 'at b:$UP' '$T/o' && [ \$(wc -l <'$T/e') = 1 ] && grep -q 'uid 0, not $NBUID' '$T/e'"

# ---- (e) server_name through a port forward -------------------------------------------------------------
FW=9117
netns_spawn b $PY -c '
import socket, sys, threading, time
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((sys.argv[1], int(sys.argv[2]))); ls.listen(8); print("listening", flush=True)
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d: break
            b.sendall(d)
    except OSError: pass
    for s in (a, b):
        try: s.shutdown(socket.SHUT_RDWR)
        except OSError: pass
ls.settimeout(30)
end = time.time() + 30
while time.time() < end:
    try: c, _ = ls.accept()
    except OSError: break
    s = socket.create_connection((sys.argv[1], int(sys.argv[3])))
    for x, y in ((c, s), (s, c)): threading.Thread(target=pipe, args=(x, y), daemon=True).start()
' "$BA" $FW $PORT >"$T/fw.out" 2>&1
FWP=$NETNS_PID
n=0; while [ $n -lt 50 ] && ! grep -q listening "$T/fw.out"; do sleep 0.1; n=$((n + 1)); done
on c "$CTL" ping --server "b:$FW" >"$T/o" 2>&1; rc=$?
expect "a port forward b:$FW -> b:$PORT, dialed by the name b (= server_name): served (exit $rc)" grep -q "uid 0$" "$T/o"
on c "$CTL" ping --server "$BA:$FW" >"$T/o" 2>&1; rc=$?
expect "  the same forward dialed by address: auth, the credential is for $BA:$PORT (exit $rc)" \
	sh -c "[ $rc = 1 ] && grep -q \"the server's credential is for $BA:$PORT (b), not for $BA:$FW\" '$T/o'"
netns_kill "$FWP"
expect "the backup is still up" kill -0 "$bak_PID"
finish
