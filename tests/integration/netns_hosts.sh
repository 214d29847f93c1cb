#!/bin/sh
# tests/integration/netns_hosts.sh: the separate-hosts library (tests/netns.sh) itself. Two users of it
# run at once: each gets its own namespaces (named by its PID), the same addresses without meeting,
# host names, hosts file and munged per host; nothing has a route out of the test's namespaces; at exit
# no namespace or process is left; namespaces of a user killed with SIGKILL are reaped by the next one.
. "$(dirname "$0")/../lib.sh"
T=$(mktmp) || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM

# user.sh DIR HOLD: sets up hosts a and b, checks them, writes DIR/tag and DIR/result, holds HOLD s
cat >"$T/user.sh" <<'EOS'
. "$RM_TOP/tests/lib.sh" >/dev/null
. "$RM_TOP/tests/netns.sh"
D=$1
netns_init "$D"
echo "$NS_TAG" >"$D/tag"
netns_add_host a b
r=ok
netns_munged a && netns_munged b || r="munged"
[ "$(netns_exec b hostname)" = b ] || r="hostname"
netns_exec a getent hosts b | grep -q "^10.77.0.2 " || r="hosts file"
[ -z "$(netns_exec a ip route show default)" ] || r="a default route"
netns_spawn b python3 -c 'import socket; s=socket.socket(); s.bind(("10.77.0.2",7000)); s.listen(); c,a=s.accept(); c.send(a[0].encode())'
sleep 0.5
got=$(netns_exec a python3 -c 'import socket; s=socket.create_connection(("b",7000),5); print(s.recv(64).decode())')
[ "$got" = 10.77.0.1 ] || r="tcp a->b gave '$got'"
printf 'rankmap' | netns_exec a munge -S "$NETNS_MUNGE_SOCK" | netns_exec b unmunge -S "$NETNS_MUNGE_SOCK" >"$D/unmunge" 2>&1
grep -q '^ENCODE_HOST: .*(10.77.0.1)' "$D/unmunge" || r="munge origin: $(head -3 "$D/unmunge")"
netns_spawn b sleep 300
echo "$NETNS_PID" >"$D/sleeper"
echo "$r" >"$D/result"
sleep "$2"
EOS
RM_TOP=$TOP; export RM_TOP
mkdir "$T/u1" "$T/u2" "$T/u3"
sh "$T/user.sh" "$T/u1" 2 >"$T/u1.log" 2>&1 &
p1=$!
sh "$T/user.sh" "$T/u2" 2 >"$T/u2.log" 2>&1 &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
expect "two users at once: both exit 0" test "$r1$r2" = 00
for u in u1 u2; do
	expect "$u: hosts reach each other by name, host names, hosts file, munge origin, no route out ($(cat "$T/$u/result" 2>/dev/null))" \
		test "$(cat "$T/$u/result" 2>/dev/null)" = ok
done
expect "the two users had different namespace names" test "$(cat "$T/u1/tag")" != "$(cat "$T/u2/tag")"
left() { ip netns list | grep -c "^$(cat "$1/tag")-"; }
# running PID: the process exists and is not a zombie (an orphan may wait a moment to be reaped)
running() { [ -r "/proc/$1/stat" ] && ! sed 's/^.*) //' "/proc/$1/stat" | grep -q '^Z'; }
expect "no namespace left by either" test "$(left "$T/u1")$(left "$T/u2")" = 00
# gone U: user U's sleeper is no longer running (waits up to 2 s)
gone() {
	n=0; while [ $n -lt 20 ] && running "$(cat "$T/$1/sleeper")"; do sleep 0.1; n=$((n + 1)); done
	! running "$(cat "$T/$1/sleeper")"
}
expect "no process left by u1 (its sleeper, started in a namespace)" gone u1
expect "no process left by u2" gone u2
expect "the host's own namespace has no 10.77.0.0/24 address" sh -c "! ip -4 addr | grep -q ' 10\.77\.0\.'"

# A user killed with SIGKILL leaves its namespaces; the next user's netns_init reaps them.
sh "$T/user.sh" "$T/u3" 60 >"$T/u3.log" 2>&1 &
p3=$!
n=0; while [ $n -lt 200 ] && [ ! -s "$T/u3/result" ]; do sleep 0.1; n=$((n + 1)); done
kill -9 $p3; wait $p3 2>/dev/null
expect "a killed user leaves its namespaces behind" test "$(left "$T/u3")" -gt 0
mkdir "$T/u4"
sh "$T/user.sh" "$T/u4" 0 >"$T/u4.log" 2>&1
expect "the next user reaps them: namespaces" test "$(left "$T/u3")" = 0
expect "  and processes" gone u3
finish
