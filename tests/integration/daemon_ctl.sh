#!/bin/sh
# tests/integration/daemon_ctl.sh: rankmapctl's daemon subcommands (ping, register, reload, distance, and
# explain on targets that are not one uniform tree: hosts of different hardware, a torus)
# against a real rankmapd on a temporary socket and state directory, including a client running as
# user nobody (setpriv), an unreachable daemon, and --help of each subcommand.
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
T=$(mktmp)
chmod 755 "$T"
rankmapd_cleanup "$T"
SOCK=$T/sock
cat >"$T/rankmapd.conf" <<EOC
hwloc_dir = $DATA/daemon/hwloc
ib_file = $DATA/plafrim/ib/ib-subnet0.txt
socket_mode = 0666
EOC

expect "the documented example conf/rankmapd.conf is valid" "$BIN/rankmapd" --config "$TOP/conf/rankmapd.conf" --print-config
expect "rankmapd --help" sh -c "'$BIN/rankmapd' --help | grep -q 'Usage: rankmapd \[--config FILE\]'"
expect "rankmapd --version" sh -c "'$BIN/rankmapd' --version | grep -q 'rankmapd 0.1.0'"
"$BIN/rankmapd" --foreground stray >/dev/null 2>&1; rc=$?
expect "rankmapd with an argument: usage error (2)" test "$rc" -eq 2
# without --config: the default file (SYSCONFDIR/rankmap/rankmapd.conf) when it exists, else the defaults
DEF=$("$BIN/rankmapd" --help | sed -n 's/.*; default \(\/[^ ]*\)$/\1/p')
expect "rankmapd --help names its default configuration ($DEF)" test -n "$DEF"
if [ ! -e "$DEF" ]; then
	"$BIN/rankmapd" --print-config >"$T/defaults" 2>&1
	expect "without --config nor $DEF: the built-in defaults" grep -qx 'socket = /run/rankmapd/rankmapd.sock' "$T/defaults"
else
	skip "$DEF exists on this machine: rankmapd's built-in defaults not checked (install.sh checks the file is read)"
fi
for c in ping register reload distance; do
	expect "$c --help" sh -c "'$CTL' $c --help | grep -q 'Usage: rankmapctl $c'"
done
expect_fail "ping with no daemon fails" "$CTL" ping --socket "$T/nothing.sock" --timeout 500
"$CTL" ping --socket "$T/nothing.sock" --timeout 500 2>"$T/err" >/dev/null
expect "and names the socket" grep -q "$T/nothing.sock" "$T/err"
RANKMAP_SOCKET=$T/nothing.sock "$CTL" ping --timeout 500 2>"$T/err2" >/dev/null
expect "RANKMAP_SOCKET is used" grep -q "$T/nothing.sock" "$T/err2"
expect_fail "bad option is a usage error" "$CTL" ping --frobnicate
"$CTL" register --socket "$SOCK" >/dev/null 2>&1; rc=$?
expect "register without --xml/--live: exit 2" test "$rc" -eq 2

expect "rankmapd starts" start_rankmapd "$T/rankmapd.conf" "$SOCK" "$T/d.log" --state-dir "$T/state"
expect "ping" sh -c "'$CTL' ping --socket '$SOCK' | grep -q 'rankmapd 0.1.0'"
expect "ping through RANKMAP_SOCKET" env RANKMAP_SOCKET="$SOCK" "$CTL" ping
expect "register --xml" "$CTL" register --socket "$SOCK" --xml "$DATA/plafrim/hwloc/mirage002.xml" --host mirage002
expect "registration saved" test -s "$T/state/registrations/mirage002.xml"
# the host name comes from the XML's HostName; an explicit --host against it needs --force
cp "$DATA/plafrim/hwloc/mirage005.xml" "$T/node.xml"
"$CTL" register --socket "$SOCK" --xml "$T/node.xml" >"$T/r.out" 2>&1
expect "register --xml without --host files the node under the XML's HostName" grep -q "registered mirage005 " "$T/r.out"
expect "and saves it under that name" test -s "$T/state/registrations/mirage005.xml"
cp "$DATA/plafrim/hwloc/mirage004.xml" "$T/node.xml"
"$CTL" register --socket "$SOCK" --xml "$T/node.xml" --host notmirage >/dev/null 2>"$T/r.err"; rc=$?
expect "register --host against another HostName: exit 1" test "$rc" -eq 1
expect "which names both names" grep -q 'HostName "mirage004", not "notmirage"' "$T/r.err"
expect "nothing registered" test ! -e "$T/state/registrations/notmirage.xml"
expect "--force registers it under --host" "$CTL" register --socket "$SOCK" --xml "$T/node.xml" --host notmirage --force
expect "forced registration saved" test -s "$T/state/registrations/notmirage.xml"
expect "register --live" "$CTL" register --socket "$SOCK" --live --host thismachine
expect "registered node answers distance" "$CTL" distance --socket "$SOCK" thismachine:0 thismachine:0
"$CTL" distance --socket "$SOCK" --json bonobo001 bonobo002 >"$T/d.json"
expect "distance --json gives hops" grep -q '"hops"' "$T/d.json"
"$CTL" distance --socket "$SOCK" bonobo001 bonobo002 >"$T/dd.out"
"$CTL" distance --hwloc "$DATA/daemon/hwloc" --ib "$DATA/plafrim/ib/ib-subnet0.txt" bonobo001 bonobo002 >"$T/do.out"
expect "offline distance equals the daemon's" cmp -s "$T/dd.out" "$T/do.out"
expect_fail "distance to an unknown host fails" "$CTL" distance --socket "$SOCK" bonobo001 nosuchnode
expect_fail "distance with a bad slot is a usage error" "$CTL" distance --socket "$SOCK" bonobo001 bonobo002:x
expect "reload" sh -c "'$CTL' reload --socket '$SOCK' | grep -q 'reloaded: model generation'"

# user nobody: may ping, may not register or reload
if command -v setpriv >/dev/null 2>&1; then
	NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	expect "nobody can ping" $NOBODY "$CTL" ping --socket "$SOCK"
	$NOBODY "$CTL" register --socket "$SOCK" --xml "$DATA/plafrim/hwloc/mirage003.xml" --host mirage003 \
		>/dev/null 2>"$T/nobody.err"; rc=$?
	expect "nobody cannot register (exit 1)" test "$rc" -eq 1
	expect "and is told why" grep -q 'permission_denied' "$T/nobody.err"
	expect "nothing saved for nobody" test ! -e "$T/state/registrations/mirage003.xml"
	expect_fail "nobody cannot reload" $NOBODY "$CTL" reload --socket "$SOCK"
else
	notok "setpriv is required for the permission test"
fi

stop_rankmapd
expect "restarts after kill -9" start_rankmapd "$T/rankmapd.conf" "$SOCK" "$T/d.log" --state-dir "$T/state"
# (thismachine has no HCA in the fabric: distance answers with hops null and exits 1; an unknown host
# would get no answer at all)
expect "registrations served after kill -9 and restart" sh -c "'$CTL' distance --socket '$SOCK' --json mirage002 thismachine 2>/dev/null | grep -q '\"same_host\": false'"
kill -HUP "$D_PID"
n=0; while [ $n -lt 100 ] && ! grep -q 'SIGHUP' "$T/d.log"; do sleep 0.1; n=$((n + 1)); done
expect "SIGHUP reloads" grep -q 'SIGHUP' "$T/d.log"
expect "still serving after SIGHUP" "$CTL" ping --socket "$SOCK"
term_rankmapd; rc=$?
expect "SIGTERM: exit 0" test "$rc" -eq 0

# the bundled example cluster as a `cluster` source (make run's cluster)
printf 'cluster = %s\nsocket_mode = 0666\n' "$DATA/example/cluster.conf" >"$T/example.conf"
expect "rankmapd starts on the example cluster" start_rankmapd "$T/example.conf" "$SOCK" "$T/d2.log" --state-dir "$T/state2"
"$CTL" distance --socket "$SOCK" bonobo001 mirage005 >"$T/ex.out"
"$CTL" distance --cluster "$DATA/example/cluster.conf" bonobo001 mirage005 >"$T/ex2.out"
expect "cluster-file source serves the example cluster like the same files offline" cmp -s "$T/ex.out" "$T/ex2.out"
# explain through the daemon on targets that are not one uniform tree: hosts of different hardware here,
# a torus below; the daemon's answer must give what the same files give offline
explain_same() { # DESC CLUSTER_FILE EXPLAIN_ARGS...
	_d=$1 _c=$2
	shift 2
	"$CTL" explain --socket "$SOCK" "$@" >"$T/e.remote" 2>"$T/e.err"; _rc=$?
	"$CTL" explain --cluster "$_c" "$@" >"$T/e.local" 2>&1
	if [ $_rc -eq 0 ] && cmp -s "$T/e.remote" "$T/e.local"; then
		ok "$_d"
	else
		notok "$_d: exit $_rc: $(head -c 300 "$T/e.err"; diff "$T/e.remote" "$T/e.local" | head -5)"
	fi
}
explain_same "explain through rankmapd on hosts of different hardware = offline" "$DATA/example/cluster.conf" \
	--cart 4x4 --hosts bonobo001,mirage005
explain_same "explain --json through rankmapd on hosts of different hardware = offline" \
	"$DATA/example/cluster.conf" --cart 4x4 --hosts bonobo001,mirage005 --json
term_rankmapd

# a torus (tests/data/torus/small-table.conf) with 4 cores on 7 neighbouring hosts, one of them alone on
# its router (torus blocks, routers, no uniform tree): 28 slots
TH='c0-0c0s0n0,c0-0c0s0n1,c0-0c0s1n0,c0-0c0s1n1,c0-0c1s0n0,c0-0c1s0n1,c0-0c1s1n0'
printf 'torus = %s\nhwloc = synthetic:pack:1 core:4 pu:1@%s\n' "$DATA/torus/small-table.conf" "$TH" >"$T/torus.conf"
printf 'cluster = %s\nsocket_mode = 0666\n' "$T/torus.conf" >"$T/dtorus.conf"
expect "rankmapd starts on a torus" start_rankmapd "$T/dtorus.conf" "$SOCK" "$T/d3.log" --state-dir "$T/state3"
explain_same "explain through rankmapd on a torus = offline" "$T/torus.conf" --cart 4x2 --hosts "$TH"
expect "and names the job's 28 slots" grep -q '^8 ranks on 28 slots' "$T/e.remote"
explain_same "explain --json through rankmapd on a torus = offline" "$T/torus.conf" --cart 4x2 --hosts "$TH" --json
explain_same "explain --perm through rankmapd on a torus = offline" "$T/torus.conf" \
	--pattern "$DATA/reports/explain-levels.mtx" --perm "$DATA/reports/explain-swap.perm" --hosts "$TH"
term_rankmapd
finish
