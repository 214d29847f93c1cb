#!/bin/sh
# tests/integration/auth_flood.sh: floods without credentials never keep an authenticated client out
#, real components across network hosts (tests/netns.sh): s (rankmapd, its defaults:
# auth_timeout 2 s, max_unauth_per_addr 32, auth_failure_burst 64, auth_failure_rate 8/s), x (the
# attacker), c (a user's client node); one munged per host, one key.
# One process on x churns unauthenticated connections (tests/integration/auth_churn.py), in three
# phases: every kind mixed (silent ones, connect-and-close, a hello then nothing, a hello then a bogus
# credential, a bogus credential first, garbage; 400 at once), silent ones and bogus credentials first
# (1,500 at once: before the bounds on unauthenticated connections, 87 of 100 pings were served and munged wrote 36,621 lines), and
# hellos then bogus credentials (400). In each, user nobody on c runs 100 TCP pings one after the other:
# 100 of 100 are served. What reaches
# munged on s from x is bounded (its log lines are counted against the failure budget), the daemon's
# own log is rate-limited, and the daemon is still up and serving after.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/netns.sh"

CTL=$BIN/rankmapctl
netns_setup rankmapd rankmapctl
NB="setpriv --reuid=nobody --regid=nogroup --clear-groups"
PY=/usr/bin/python3
PINGS=${AUTH_FLOOD_PINGS:-100}

netns_add_host s x c
for h in s x c; do expect "munged on $h (shared key)" netns_munged "$h"; done
PORT=7117
S=s:$PORT
cat >"$T/cluster.conf" <<EOC
hwloc = $DATA/plafrim/hwloc
ib = $DATA/plafrim/ib/ib-subnet0.txt
EOC
cat >"$T/s.conf" <<EOC
cluster = $T/cluster.conf
listen = $(netns_addr s):$PORT
munge_socket = $NETNS_MUNGE_SOCK
state_dir = $T/s.state
EOC
netns_rankmapd s "$T/s.conf" "$T/s.log"
D=$NETNS_PID
on() { h=$1; shift; netns_exec "$h" env RANKMAP_MUNGE_SOCKET="$NETNS_MUNGE_SOCK" "$@"; }
expect "rankmapd on s answers c" on c "$CTL" ping --server "$S"

MLOG=$NS_DIR/s/munge/munged.stderr # munged --foreground logs there (netns_munged)
# phase NAME KINDS MAX: a churn of KINDS (auth_churn.py), MAX connections at once, while c pings
phase() {
	m0=$(cat "$MLOG" 2>/dev/null | wc -l)
	rm -f "$T/stop"
	netns_spawn x env AUTH_CHURN_KINDS="$2" $PY "$TOP/tests/integration/auth_churn.py" s $PORT 120 "$3" "$T/stop" \
		>"$T/churn.$1" 2>&1
	CH=$NETNS_PID
	sleep 2 # the churn is in full swing
	t0=$(date +%s%N)
	ok=0; i=0; slow=0
	while [ $i -lt "$PINGS" ]; do
		p0=$(date +%s%N)
		on c $NB "$CTL" ping --server "$S" --timeout 5000 >"$T/o" 2>&1 && ok=$((ok + 1)) || cat "$T/o" >&2
		p=$(( ($(date +%s%N) - p0) / 1000000 ))
		[ $p -gt $slow ] && slow=$p
		i=$((i + 1))
	done
	secs=$(( ($(date +%s%N) - t0) / 1000000000 + 2 ))
	touch "$T/stop"
	n=0; while [ $n -lt 50 ] && [ ! -s "$T/churn.$1" ]; do sleep 0.1; n=$((n + 1)); done
	netns_kill "$CH"
	m1=$(cat "$MLOG" 2>/dev/null | wc -l)
	echo "# $1: churn from x: $(cat "$T/churn.$1")"
	conns=$(sed -n 's/^connections \([0-9]*\) .*/\1/p' "$T/churn.$1")
	expect "$1: the churn ran: ${conns:-0} unauthenticated connections from x in about $secs s" test "${conns:-0}" -ge 1000
	expect "$1: $ok of $PINGS TCP pings of user nobody on c served during the churn (slowest $slow ms)" \
		test "$ok" = "$PINGS"
	ml=$((m1 - m0)); bound=$((64 + 8 * (secs + 3) + 20))
	expect "$1: munged on s wrote $ml lines during the churn (bound: the failure budget, $bound)" test $ml -le $bound
}
phase mixed "silent,closed,hello,bogus,first-bogus,garbage" 400
phase silent-and-bogus-first "silent,first-bogus" 1500
phase hello-then-bogus "hello,bogus" 400
expect "the daemon refused x's connections, naming the bounds" \
	grep -q "refused tcp $(netns_addr x):[0-9]* uid ?: busy: too many" "$T/s.log"
ll=$(wc -l <"$T/s.log")
expect "the daemon's log stays small ($ll lines: refusals logged once per host and reason every 10 s)" test "$ll" -lt 200
expect "rankmapd is still up" kill -0 "$D"
expect "and serves root on c after the churn" on c "$CTL" ping --server "$S"
finish
