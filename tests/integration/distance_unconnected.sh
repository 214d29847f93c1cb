#!/bin/sh
# tests/integration/distance_unconnected.sh: `rankmapctl distance` between hosts that no InfiniBand
# subnet joins (tests/data/ib/subnet-a.topo holds n1-n3, subnet-c.topo m1-m2) is an error naming both
# hosts, offline and through rankmapd, in text and JSON; connected pairs still answer with exit 0.
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
T=$(mktmp)
rankmapd_cleanup "$T"
IB="--ib $DATA/ib/subnet-a.topo --ib $DATA/ib/subnet-c.topo"

# shellcheck disable=SC2086
"$CTL" distance $IB n1 n3 >"$T/ok.out"
expect "offline: a connected pair answers (exit 0)" grep -q '^hops 3, distance' "$T/ok.out"
# shellcheck disable=SC2086
expect_fail "offline: an unconnected pair exits non-zero" "$CTL" distance $IB n1 m1
# shellcheck disable=SC2086
"$CTL" distance $IB n1 m1 >"$T/o.out" 2>"$T/o.err"
expect "offline: the error names both hosts" grep -q '"n1" and "m1" are not connected' "$T/o.err"
expect "offline: nothing on stdout" test ! -s "$T/o.out"

# without any fabric the network is unknown, not cut: the cost model's flat network answers
expect "offline: hosts without fabric data still answer (exit 0)" sh -c "'$CTL' distance --hwloc '$DATA/daemon/hwloc' bonobo001 bonobo002 | grep -q distance"

SOCK=$T/sock
printf 'ib_file = %s\nib_file = %s\n' "$DATA/ib/subnet-a.topo" "$DATA/ib/subnet-c.topo" >"$T/rankmapd.conf"
expect "rankmapd is up" start_rankmapd "$T/rankmapd.conf" "$SOCK" "$T/d.log" --state-dir "$T/state"
"$CTL" distance --socket "$SOCK" n1 n3 >"$T/dok.out"
expect "daemon: a connected pair answers like offline" cmp -s "$T/ok.out" "$T/dok.out"
expect_fail "daemon: an unconnected pair exits non-zero" "$CTL" distance --socket "$SOCK" m2 n2
"$CTL" distance --socket "$SOCK" m2 n2 2>"$T/d.err" >/dev/null
expect "daemon: the error names both hosts" grep -q '"m2" and "n2" are not connected' "$T/d.err"
"$CTL" distance --socket "$SOCK" --json m2 n2 >"$T/d.json" 2>/dev/null; rc=$?
expect "daemon --json: exit 1, the answer still printed" sh -c "[ $rc -eq 1 ] && grep -q '\"distance\": null' '$T/d.json'"
expect "the daemon is still up" "$CTL" ping --socket "$SOCK"
finish
