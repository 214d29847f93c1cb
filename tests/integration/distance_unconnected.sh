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
"$CTL" distance --hwloc "$DATA/daemon/hwloc" --json bonobo001 bonobo002 >"$T/nofab.json"
expect "offline --json without a fabric: JSON, hops null, hops_unknown no_fabric" python3 -c "
import json, sys; r = json.load(open(sys.argv[1]))
sys.exit(not (r['hops'] is None and r['hops_unknown'] == 'no_fabric' and r['distance'] > 0))" "$T/nofab.json"
# a host with hardware data but no HCA in the fabric (riri in the example cluster): no hop count, so
# no 'hops -1' and exit 0, but a message naming it and exit 1; --json prints hops null all the same
EX="--cluster $DATA/example/cluster.conf"
# shellcheck disable=SC2086
"$CTL" distance $EX fourmi001 riri >"$T/riri.out" 2>"$T/riri.err"; rc=$?
expect "offline: a host outside the fabric exits 1" test $rc -eq 1
expect "offline: the message names it" grep -q 'host riri has no HCA in the InfiniBand fabric' "$T/riri.err"
expect_fail "offline: no 'hops -1'" grep -q 'hops -1' "$T/riri.out"
# shellcheck disable=SC2086
"$CTL" distance $EX --json fourmi001 riri >"$T/riri.json" 2>/dev/null; rc=$?
expect "offline --json: exit 1, hops null, not_in_fabric" python3 -c "
import json, sys; r = json.load(open(sys.argv[1]))
sys.exit(not ($rc == 1 and r['hops'] is None and r['hops_unknown'] == 'not_in_fabric' and 'riri' in r['note']))" "$T/riri.json"
# shellcheck disable=SC2086
"$CTL" distance $IB --json n1 n3 >"$T/ok.json"
expect "offline --json of a connected pair is JSON with hops 3" python3 -c "
import json, sys; r = json.load(open(sys.argv[1])); sys.exit(not (r['hops'] == 3 and r['schema_version'] == 1))" "$T/ok.json"

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
expect "daemon --json: hops null (PROTOCOL.md), not -1" grep -q '"hops": null' "$T/d.json"
expect "the daemon is still up" "$CTL" ping --socket "$SOCK"
finish
