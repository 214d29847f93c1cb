#!/bin/sh
# tests/integration/cluster_tcp.sh: rankmapd across separate network hosts, real components.
#
# Hosts are network namespaces made here (tests/netns.sh): svc (the service node), bak (the backup
# service node), n1 and n2 (compute nodes). Each runs its own munged, all with one key. rankmapd runs on
# svc with a TCP listener only (no `socket`: nothing to reach through the shared filesystem). From the
# nodes:
# - rankmapctl --server ping, report and map give the same output as offline;
# - real mpirun jobs (Open MPI and MPICH) on n1 with RANKMAP_SERVER (and RANKMAP_MUNGE_SOCKET, munged
#   not being at its default path) are reordered by the daemon's model and check their neighbours;
# - refusals, each with its code: a raw TCP request without authentication, a replayed credential (TCP
#   authentication version 2: raw handshakes with munge and unmunge), one made by a munged with another key
#   (and a client on such a munged, which refuses the server's credential and sends none), an unprivileged user's register, a node registering another
#   node's name (and its own name accepted);
# - faults: clock skew past the TTL (a munged under libfaketime), munged down (node and server), bad
#   server-list entries, a half-open listener (accepts, never answers), a backup never started, a flood
#   of unauthenticated connections: the daemon stays up and serves, the client names the server and
#   the reason, jobs run unreordered with one warning;
# - failover: primary (svc) and backup (bak); the primary is killed with SIGKILL while jobs start in a
#   loop; each job is reordered (by the backup once the primary is gone) or runs unreordered with exactly
#   one warning, none fails or hangs; the counts are printed.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
. "$TOP/tests/netns.sh"

CTL=$BIN/rankmapctl
netns_setup rankmapd rankmapctl
pmpi_check_built
t_start=$(date +%s)

netns_add_host svc bak n1 n2
for h in svc bak n1 n2; do
	expect "munged on $h (shared key, origin $(netns_addr "$h"))" netns_munged "$h"
	eval "${h}_MUNGED=$NETNS_PID"
done
PORT=7117
SVC=svc:$PORT
BAK=bak:$PORT

cat >"$T/cluster.conf" <<EOC
hwloc = $DATA/plafrim/hwloc
ib = $DATA/plafrim/ib/ib-subnet0.txt
EOC
# start_daemon HOST [EXTRA]: rankmapd on HOST, TCP only; its PID in HOST_PID
start_daemon() {
	cat >"$T/$1.conf" <<EOC
cluster = $T/cluster.conf
listen = $(netns_addr "$1"):$PORT
munge_socket = $NETNS_MUNGE_SOCK
state_dir = $T/$1.state
request_timeout = 2s
max_clients_per_uid = 64
log_level = info
${2:-}
EOC
	netns_rankmapd "$1" "$T/$1.conf" "$T/$1.log"
	_rc=$?
	eval "$1_PID=$NETNS_PID"
	return $_rc
}
# has FILE ERE: FILE has a line matching ERE (else FILE is shown)
has() { grep -Eq -- "$2" "$1" || { echo "# $1:" >&2; head -n 8 "$1" >&2; return 1; }; }
# rc_has DESC WANT GOT FILE ERE: a command exited with WANT (it did with GOT) and FILE matches ERE
rc_has() { if [ "$3" = "$2" ] && has "$4" "$5"; then ok "$1"; else notok "$1 (exit $3)"; fi; }
# on HOST CMD...: CMD on HOST, with MUNGE's socket of that host
on() { h=$1; shift; netns_exec "$h" env RANKMAP_MUNGE_SOCKET="$NETNS_MUNGE_SOCK" "$@"; }

expect "rankmapd starts on svc, TCP only ($SVC)" start_daemon svc
no_unix() {
	! grep -q '^socket' "$T/svc.conf" && [ -z "$(netns_exec svc ss -xlp 2>/dev/null | grep rankmapd)" ] &&
		"$BIN/rankmapd" --config "$T/svc.conf" --print-config | grep -q '^#socket =$'
}
expect "  with no Unix socket (none configured, none listening)" no_unix

# ---- rankmapctl from a node ----------------------------------------------------------------------
on n1 "$CTL" ping --server "$SVC" >"$T/ping.out" 2>&1
expect "ping from n1: tcp from n1's address, uid 0" grep -Eq "tcp from $(netns_addr n1):[0-9]+, uid 0$" "$T/ping.out"
same() {
	sed 's/"time_ms": *[0-9.e+-]*/"time_ms"/; s/, [0-9.]* ms$/, ms/' "$2" >"$2.n"
	sed 's/"time_ms": *[0-9.e+-]*/"time_ms"/; s/, [0-9.]* ms$/, ms/' "$3" >"$3.n"
	if [ -s "$2.n" ] && cmp -s "$2.n" "$3.n"; then ok "$1"; else notok "$1"; diff "$2.n" "$3.n" | head -5; fi
}
on n1 "$CTL" report --server "$SVC" --json >"$T/r.net" 2>"$T/r.err"
"$CTL" report --cluster "$T/cluster.conf" --json >"$T/r.off"
same "report --json from n1 over TCP = offline" "$T/r.net" "$T/r.off"
on n2 "$CTL" report --server "$SVC" >"$T/rt.net" 2>"$T/rt.err"
"$CTL" report --cluster "$T/cluster.conf" >"$T/rt.off"
same "report (text) from n2 over TCP = offline" "$T/rt.net" "$T/rt.off"
for args in "--cart 8x4:1,1:10,1 --algo treematch --hosts fourmi[001-004]" \
	"--pattern $DATA/patterns/ring8.mtx --algo treematch --hosts fourmi[001-002]"; do
	on n1 "$CTL" map $args --server "$SVC" --json >"$T/m.net" 2>"$T/m.err"
	"$CTL" map $args --cluster "$T/cluster.conf" --json >"$T/m.off"
	same "map $args from n1 over TCP = offline" "$T/m.net" "$T/m.off"
done

# ---- MPI jobs on n1 ------------------------------------------------------------------------------
# job NAME MPI SERVERS [ENV...]: an 8-rank cart_halo (4x2 grid, 2 virtual hosts of the daemon's model,
# cyclic: the identity cuts the 4 edges of dimension 1, a good mapping 2) launched by the MPI's real
# mpirun on n1; $T/NAME.{out,err,report}, exit status in $T/NAME.rc.
job() {
	o=$1; m=$2; s=$3; shift 3
	lib=$(pmpi_lib "$m")
	case $m in
	openmpi) launch="mpirun.openmpi --oversubscribe --allow-run-as-root -np 8 -x LD_PRELOAD=$lib" ;;
	mpich) launch="mpirun.mpich -np 8 -genv LD_PRELOAD $lib" ;;
	esac
	on n1 env RANKMAP_SERVER="$s" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE='pack:2 core:4' \
		RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_REPORT="$T/$o.report" "$@" \
		timeout -k 5 "$PMPI_TIMEOUT" $launch "$BIN/tests/mpi/$m/cart_halo" 2 4 2 0 0 >"$T/$o.out" 2>"$T/$o.err"
	echo $? >"$T/$o.rc"
}
# by_daemon NAME: exit 0, halo checks pass, mapped by rankmapd, fewer host-crossing edges, no warning
by_daemon() {
	[ "$(cat "$T/$1.rc")" = 0 ] && [ "$(field errors "$T/$1.out")" = 0 ] &&
		grep -q 'algo=rankmapd:' "$T/$1.report" 2>/dev/null &&
		[ "$(field cross_mapped "$T/$1.out")" -lt "$(field cross_identity "$T/$1.out")" ] &&
		[ "$(warnings "$T/$1.err")" -le "${2:-0}" ] || { tail -n 5 "$T/$1.out" "$T/$1.err" >&2; return 1; }
}
# fell_back NAME: exit 0, checks pass, not reordered, exactly one warning
fell_back() {
	[ "$(cat "$T/$1.rc")" = 0 ] && [ "$(field errors "$T/$1.out")" = 0 ] && [ "$(field moved "$T/$1.out")" = 0 ] &&
		[ "$(warnings "$T/$1.err")" = 1 ] || { tail -n 5 "$T/$1.out" "$T/$1.err" >&2; return 1; }
}
for m in $PMPI_MPIS; do
	job "$m" "$m" "$SVC"
	expect "$m: mpirun on n1, RANKMAP_SERVER=$SVC: reordered by rankmapd, neighbours checked, no warning" by_daemon "$m"
	job "$m.bad" "$m" "nosuchhost.invalid:$PORT"
	expect "$m: unresolvable server: unreordered, one warning" fell_back "$m.bad"
	expect "  naming the server and why" has "$T/$m.bad.err" "nosuchhost.invalid:$PORT: cannot resolve"
done

# ---- refusals, each with its error code ------------------------------------------------------------
raw() { h=$1; shift; on "$h" python3 "$TOP/tests/raw_client.py" svc "$PORT" "$@" 2>&1; }
raw n1 request >"$T/o"
expect "raw request without authentication from n1: auth, closed" \
	sh -c "grep -q '^auth a request without authentication' '$T/o' && grep -q '^then closed' '$T/o'"
raw n1 login --save "$T/cred" >"$T/o"
expect "a handshake from n1 (raw, munge on n1) is accepted (uid 0, tcp)" grep -q '^ok uid=0 transport=tcp' "$T/o"
raw n1 login --cred "$T/cred" >"$T/o"
expect "the same credential replayed from n1: auth, replayed" grep -q '^auth credential replayed' "$T/o"
raw n2 login --cred "$T/cred" >"$T/o"
expect "the same credential replayed from another host (n2): auth, replayed" grep -q '^auth credential replayed' "$T/o"
mungekey --create --keyfile="$T/other.key" >/dev/null 2>&1 && chmod 600 "$T/other.key"
expect "a second munged on n2 with another key" netns_munged n2 "$T/other.key" otherkey
OTHER=$(netns_munge_sock n2 otherkey)
printf 'rankmap-auth 1' | munge -S "$OTHER" >"$T/credb"
raw n2 login --cred "$T/credb" >"$T/o"
expect "a credential made with another key: auth, invalid" grep -q '^auth invalid credential (made with another MUNGE key?)' "$T/o"
netns_exec n2 env RANKMAP_MUNGE_SOCKET="$OTHER" "$CTL" ping --server "$SVC" >"$T/o" 2>&1; rc=$?
rc_has "rankmapctl with the other key's munged: exit 1, names the server; the client finds the server's credential not of its key and sends none" 1 $rc "$T/o" \
	"$SVC.*auth.*the server's credential is not made with this site's MUNGE key"
XML=$DATA/plafrim/hwloc/mirage002.xml
on n1 "$CTL" register --force --server "$SVC" --xml "$XML" --host n2 >"$T/o" 2>&1; rc=$?
expect "n1 registering n2's name: permission_denied, names n1's address (exit $rc)" \
	grep -q "permission_denied: register: 'n2' does not resolve to $(netns_addr n1)" "$T/o"
expect "  logged by the daemon with the peer" grep -q "register of n2 refused to tcp $(netns_addr n1):[0-9]* uid 0" "$T/svc.log"
expect "n1 registering its own name" on n1 "$CTL" register --force --server "$SVC" --xml "$XML" --host n1
on n2 "$CTL" map --cart 4x2 --hosts n1 --server "$SVC" --json >"$T/o" 2>&1
expect "  n1 is then in the daemon's model (a map on n1 from n2)" has "$T/o" '"ranks": 8,'
if command -v setpriv >/dev/null 2>&1; then
	NB="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	on n2 $NB "$CTL" ping --server "$SVC" >"$T/o" 2>&1
	expect "user nobody on n2 may ping, authenticated as its uid" grep -q "uid $(id -u nobody)$" "$T/o"
	on n2 $NB "$CTL" register --force --server "$SVC" --xml "$XML" --host n2 >"$T/o" 2>&1; rc=$?
	expect "user nobody's register of its own node: permission_denied (exit $rc)" grep -q permission_denied "$T/o"
else
	notok "setpriv missing: the unprivileged user's checks cannot run"
fi

# ---- faults ----------------------------------------------------------------------------------------
# Clock skew: n2's munged runs 10 minutes behind (libfaketime); its credentials are past the TTL.
if [ -r "$NETNS_FAKETIME_LIB" ]; then
	expect "a munged on n2 whose clock is 10 min behind (libfaketime)" \
		netns_munged n2 "" skew LD_PRELOAD="$NETNS_FAKETIME_LIB" FAKETIME=-600s
	netns_exec n2 env RANKMAP_MUNGE_SOCKET="$(netns_munge_sock n2 skew)" "$CTL" ping --server "$SVC" >"$T/o" 2>&1; rc=$?
	rc_has "clock skew past the TTL: exit 1, auth, expired, naming the server" 1 $rc "$T/o" \
		"$SVC.*auth.*the server's credential is expired or made in the future \\(clock skew"
	job skew openmpi "$SVC" RANKMAP_MUNGE_SOCKET="$(netns_munge_sock n2 skew)"
	expect "clock skew: an Open MPI job runs unreordered with one warning" fell_back skew
else
	notok "libfaketime missing (scripts/deps.sh installs faketime): clock skew not tested"
fi
# Bad server-list entries: each bad entry is named; a good entry after them answers.
for bad in "svc:99999|port '99999' is not a number in 1..65535" "nosuchhost.invalid:1|cannot resolve 'nosuchhost.invalid'" \
	"svc:7117x|port '7117x' is not a number" "n2:$PORT|n2:$PORT: cannot connect to rankmapd: Connection refused"; do
	entry=${bad%%|*}; msg=${bad#*|}
	on n1 "$CTL" ping --server "$entry" --timeout 2000 >/dev/null 2>"$T/e"; rc=$?
	expect "bad entry '$entry' alone: exit 1, names it ($msg)" sh -c "[ $rc = 1 ] && grep -qF \"$msg\" '$T/e'"
	on n1 "$CTL" ping --server "$entry,$SVC" --timeout 3000 >"$T/o" 2>"$T/e"; rc=$?
	expect "  '$entry,$SVC': answered by svc, one warning" \
		sh -c "[ $rc = 0 ] && grep -q 'at $SVC' '$T/o' && [ \$(grep -c warning '$T/e') = 1 ]"
done
# A half-open listener on bak: accepts and never answers.
netns_spawn bak python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", '"$PORT"')); s.listen(64); held = []
while True:
    c, a = s.accept(); held.append(c)'
HALF_PID=$NETNS_PID
sleep 0.5
t0=$(date +%s%N)
on n1 "$CTL" ping --server "$BAK,$SVC" --timeout 3000 >"$T/o" 2>"$T/e"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect "half-open listener first: svc answers within the 3 s timeout ($ms ms), one warning naming bak" \
	sh -c "[ $rc = 0 ] && [ $ms -lt 4000 ] && grep -q 'at $SVC' '$T/o' && [ \$(grep -c 'warning: $BAK' '$T/e') = 1 ]"
# (a call's timeout of 3 s here, RANKMAP_TIMEOUT_MS: the library's default is 5 s)
job half openmpi "$BAK" RANKMAP_TIMEOUT_MS=3000
expect "half-open listener only: an Open MPI job runs unreordered with one warning" fell_back half
expect "  naming the server" has "$T/half.err" "$BAK"
netns_kill "$HALF_PID"
# A backup that was never started (nothing listens on bak).
on n1 "$CTL" ping --server "$SVC,$BAK" >"$T/o" 2>"$T/e"
expect "backup never started, primary up: answered by svc, no warning" \
	sh -c "grep -q 'at $SVC' '$T/o' && [ ! -s '$T/e' ]"
job nobak mpich "$SVC,$BAK"
expect "backup never started: an MPICH job is reordered by the primary, no warning" by_daemon nobak
# A flood of connections that never authenticate, from n2; authenticated clients on n1 are served.
netns_spawn n2 python3 -c '
import socket, sys, time
c = []
for i in range(300):
    try: c.append(socket.create_connection(("svc", '"$PORT"'), timeout=5))
    except OSError: pass
print(len(c), flush=True); time.sleep(30)' >"$T/flood"
FLOOD_PID=$NETNS_PID
n=0; while [ $n -lt 150 ] && [ ! -s "$T/flood" ]; do sleep 0.1; n=$((n + 1)); done
served=0; i=0
while [ $i -lt 10 ]; do
	on n1 "$CTL" ping --server "$SVC" --timeout 3000 >/dev/null 2>&1 && served=$((served + 1)); i=$((i + 1))
done
expect "flood of $(cat "$T/flood") unauthenticated connections from n2: 10 of 10 pings from n1 answered ($served)" \
	test "$served" = 10
job flood openmpi "$SVC"
expect "  and an Open MPI job during the flood is reordered by rankmapd" by_daemon flood
netns_kill "$FLOOD_PID"
expect "rankmapd on svc is still up" kill -0 "$svc_PID"
# munged down on the node: the client names munged; a job falls back with one warning.
stop_munged() { eval "netns_kill \$${1}_MUNGED"; }
stop_munged n1
on n1 "$CTL" ping --server "$SVC" --timeout 2000 >"$T/o" 2>&1; rc=$?
expect "munged down on n1: exit 1, the error names munged" sh -c "[ $rc = 1 ] && grep -qi 'munged' '$T/o'"
job nomunge mpich "$SVC"
expect "munged down on n1: an MPICH job runs unreordered with one warning" fell_back nomunge
expect "munged on n1 restarts" netns_munged n1
stop_munged svc
on n1 "$CTL" ping --server "$SVC" --timeout 3000 >"$T/o" 2>&1; rc=$?
expect "munged down on svc: exit 1, auth naming munged on the server" \
	sh -c "[ $rc = 1 ] && grep -q 'auth.*munged on the server cannot be reached' '$T/o'"
expect "  rankmapd on svc is still up" kill -0 "$svc_PID"
expect "munged on svc restarts" netns_munged svc
expect "  and svc serves n1 again" on n1 "$CTL" ping --server "$SVC" --timeout 3000

# ---- failover ------------------------------------------------------------------------------------
expect "backup rankmapd starts on bak" start_daemon bak
NJOBS=${FAILOVER_JOBS:-8}
KILL_AT=3
primary=0; backup=0; fallback=0; failed=0; i=1
while [ $i -le "$NJOBS" ]; do
	m=openmpi; [ $((i % 2)) = 0 ] && m=mpich
	if [ $i = $KILL_AT ]; then
		(sleep 0.5; kill -9 "$svc_PID" 2>/dev/null) &
		KILLER=$!
	fi
	t0=$(date +%s)
	job "fo$i" "$m" "$SVC,$BAK"
	dt=$(( $(date +%s) - t0 ))
	[ $i = $KILL_AT ] && wait "$KILLER"
	if by_daemon "fo$i" 0 2>/dev/null; then
		primary=$((primary + 1)); what="reordered by the primary (no warning)"
	elif by_daemon "fo$i" 1 2>/dev/null && grep -q "using rankmapd at $BAK" "$T/fo$i.err"; then
		backup=$((backup + 1)); what="reordered by the backup, one warning"
	elif fell_back "fo$i" 2>/dev/null; then
		fallback=$((fallback + 1)); what="unreordered, one warning"
	else
		failed=$((failed + 1)); what="FAILED (exit $(cat "$T/fo$i.rc"), $(warnings "$T/fo$i.err") warnings)"
	fi
	echo "# failover job $i ($m, ${dt} s): $what: $(grep '^rankmap' "$T/fo$i.err" | head -n 1)"
	i=$((i + 1))
done
echo "# failover: $NJOBS jobs, primary killed (SIGKILL) as job $KILL_AT started: $primary reordered by the primary," \
	"$backup reordered by the backup, $fallback unreordered with one warning, $failed failed or hung"
expect "failover: every job reordered or unreordered with one warning; none failed or hung" test "$failed" = 0
expect "failover: the jobs after the kill were reordered by the backup ($backup of $((NJOBS - KILL_AT + 1)))" \
	test "$backup" -ge $((NJOBS - KILL_AT))
expect "the primary is gone, the backup still up" sh -c "! kill -0 $svc_PID 2>/dev/null && kill -0 $bak_PID"

# The primary comes back: jobs go to it again, without a warning.
expect "the primary restarts on svc" start_daemon svc
job back openmpi "$SVC,$BAK"
expect "primary back: a job is reordered by it, no warning" by_daemon back
# The primary's host drops off the network (its link down: connections time out instead of being
# refused): the backup maps, one warning, the job start stays bounded by the call's timeout (3 s here,
# RANKMAP_TIMEOUT_MS; each server gets its share of it).
ip -n "$NS_TAG-svc" link set eth0 down
t0=$(date +%s%N)
job cut mpich "$SVC,$BAK" RANKMAP_TIMEOUT_MS=3000
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
cut_ok() { by_daemon cut 1 && has "$T/cut.err" "using rankmapd at $BAK"; }
expect "primary's host unreachable: the MPICH job is reordered by the backup, one warning (${ms} ms)" cut_ok
job cut0 mpich "$SVC,$BAK" RANKMAP_DISABLE=1
ms0=$(( ($(date +%s%N) - t0) / 1000000 - ms ))
expect "  its start took at most the call's 3 s timeout more than an unmapped run (${ms} ms vs ${ms0} ms)" \
	test $((ms - ms0)) -le 3500
ip -n "$NS_TAG-svc" link set eth0 up

echo "# run time: $(( $(date +%s) - t_start )) s"
finish
