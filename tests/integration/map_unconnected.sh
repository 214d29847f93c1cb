#!/bin/sh
# tests/integration/map_unconnected.sh: `rankmapctl map` (and `explain`) on hosts that span unconnected
# InfiniBand subnets (tests/data/ib/subnet-a.topo: n1-n3, subnet-c.topo: m1-m2) maps them with exactly
# one warning naming an unconnected pair and the groups: on stderr in text mode, in a `warnings` array
# with --json, offline and through rankmapd; the mapping keeps the heavy traffic inside each group. A
# connected host set gets no warning.
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
T=$(mktmp)
rankmapd_cleanup "$T"
cat >"$T/c.conf" <<EOC
hwloc = synthetic:pack:1 core:4 pu:1@n1,n2,n3,m1,m2
ib = $DATA/ib/subnet-a.topo
ib = $DATA/ib/subnet-c.topo
EOC
# a pattern of two heavy cliques (ranks 0-3 and 4-7) and a light ring; hosts n1 and m1 hold 4 slots each,
# and the identity puts ranks 0-3 on n1 and 4-7 on m1: the interleaved placement below is worse
{
	echo '%%MatrixMarket matrix coordinate real general'
	echo '8 8 20'
	for a in 1 3 5 7; do for b in 1 3 5 7; do [ $a -lt $b ] && echo "$a $b 100"; done; done
	for a in 2 4 6 8; do for b in 2 4 6 8; do [ $a -lt $b ] && echo "$a $b 100"; done; done
	for a in 1 2 3 4 5 6 7 8; do echo "$a $((a % 8 + 1)) 1"; done
} >"$T/p.mtx"
WANT='hosts n1 and m1 cannot reach each other over InfiniBand'

"$CTL" map --pattern "$T/p.mtx" --cluster "$T/c.conf" --hosts n1,m1 >"$T/o.out" 2>"$T/o.err"; rc=$?
expect "offline: mapped (exit 0)" test $rc -eq 0
expect "offline text: the warning on stderr" grep -q "^rankmapctl map: warning: $WANT" "$T/o.err"
expect "offline text: exactly one warning line" test "$(grep -c warning "$T/o.err")" -eq 1
expect "offline text: the summary on stdout" grep -q '^engine ' "$T/o.out"
expect "offline text: no warning on stdout" sh -c "! grep -q warning '$T/o.out'"
# the mapping keeps each clique on one host: no clique traffic crosses the cut
"$CTL" map --pattern "$T/p.mtx" --cluster "$T/c.conf" --hosts n1,m1 --json >"$T/o.json" 2>"$T/oj.err"
python3 - "$T/o.json" >"$T/check.out" 2>&1 <<'EOP'
import json, sys
s = json.load(open(sys.argv[1]))
w = s.get("warnings")
assert isinstance(w, list) and len(w) == 1, w
assert w[0].startswith("hosts n1 and m1 cannot reach each other over InfiniBand"), w
assert "2 groups of 1 and 1 hosts" in w[0], w
root = [l for l in s["breakdown"] if l["level"] == "root"][0]
idroot = [l for l in s["identity_breakdown"] if l["level"] == "root"][0]
# identity: ranks 0-3 on n1, 4-7 on m1: 8 clique edges x 100 cross (+ ring); mapped: only the ring
assert idroot["traffic"] >= 800, idroot
assert root["traffic"] < 100, root
print("ok", root["traffic"], idroot["traffic"])
EOP
expect "offline --json: one warning in 'warnings', the cliques stay within a group ($(cat "$T/check.out"))" grep -q '^ok' "$T/check.out"
expect "offline --json: nothing on stderr" test ! -s "$T/oj.err"

"$CTL" map --cart 20 --cluster "$T/c.conf" --hosts n1,n2,n3,m1,m2 >/dev/null 2>"$T/g.err"
expect "five hosts: the groups are counted" grep -q "the 5 hosts form 2 groups of 3 and 2 hosts" "$T/g.err"
"$CTL" map --cart 12 --cluster "$T/c.conf" --hosts n1,n2,n3 >/dev/null 2>"$T/n.err"
expect "a connected host set: no warning" test ! -s "$T/n.err"

"$CTL" explain --pattern "$T/p.mtx" --cluster "$T/c.conf" --hosts n1,m1 >"$T/e.out" 2>"$T/e.err"
expect "explain: the same warning on stderr" grep -q "^rankmapctl explain: warning: $WANT" "$T/e.err"
"$CTL" explain --pattern "$T/p.mtx" --cluster "$T/c.conf" --hosts n1,m1 --json >"$T/e.json"
expect "explain --json: in 'warnings'" python3 -c "import json,sys; w=json.load(open('$T/e.json'))['warnings']; sys.exit(not (len(w) == 1 and w[0].startswith('$WANT')))"

# through rankmapd: the same answer
SOCK=$T/sock
echo "cluster = $T/c.conf" >"$T/rankmapd.conf"
expect "rankmapd is up" start_rankmapd "$T/rankmapd.conf" "$SOCK" "$T/d.log" --state-dir "$T/state"
"$CTL" map --pattern "$T/p.mtx" --socket "$SOCK" --hosts n1,m1 >"$T/d.out" 2>"$T/d.err"; rc=$?
expect "daemon: mapped (exit 0), not bad_request" test $rc -eq 0
expect "daemon text: the warning on stderr" grep -q "^rankmapctl map: warning: $WANT" "$T/d.err"
expect "daemon text: exactly one warning line" test "$(grep -c warning "$T/d.err")" -eq 1
"$CTL" map --pattern "$T/p.mtx" --socket "$SOCK" --hosts n1,m1 --json >"$T/d.json" 2>/dev/null
expect "daemon --json: the same warnings as offline" python3 -c "
import json; a=json.load(open('$T/o.json')); b=json.load(open('$T/d.json'))
assert a['warnings'] == b['warnings'], (a['warnings'], b['warnings'])"
expect "the daemon is still up" "$CTL" ping --socket "$SOCK"
finish
