#!/bin/sh
# tests/integration/spank_register_retry.sh: slurmd's registration (plugin/spank/spank_register.c) is sent
# again when rankmapd answers `timeout`, the transient refusal of a registration whose hwloc parse gave
# no answer in time (nothing of it kept: daemon/PROTOCOL.md), within the plugin's timeout (tests/FAULTS.md).
#
# The real thing, no fake: a real rankmapd whose hwloc parser child is really hung (SIGSTOP, as
# daemon_register_hang.sh does), then a real local Slurm cluster (tests/slurm/cluster.sh: munged,
# slurmctld, slurmd n1..n4) whose nodes bring hardware new to the daemon, with the plugin's timeout at
# 60 s (the parse limit is 30 s). The daemon answers the nodes' registrations `timeout` once the parse
# limit is reached and kills the stopped child; each slurmd sends its registration again after a short
# backoff, a new parser child reads it, and every node is registered (slurmd logs it with the send
# number) and in the daemon's model; the daemon logged the timeout; slurmd started anyway.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/slurm/common.sh"

H=$TOP/tests/slurm
T=$(mktmp) || exit 1
chmod 755 "$T"
C=$T/cluster
P=""

rankmapd_on_exit() {
	sh "$H/cluster.sh" stop "$C" 2>/dev/null
	[ -n "$P" ] && kill -CONT "$P" 2>/dev/null
}
rankmapd_cleanup "$T"

for c in munged mungekey slurmctld slurmd python3; do
	command -v "$c" >/dev/null || { notok "required command $c is missing (make deps)"; finish; exit 1; }
done
for f in spank_rankmap.so rankmapd rankmapctl; do
	[ -f "$BIN/$f" ] || { notok "$BIN/$f is not built"; finish; exit 1; }
done
[ -z "$SAN" ] || echo "# sanitized build: Slurm daemons run with: $SAN"

mkdir -p "$T/rmstate"
printf 'state_dir = %s\nallow_register = yes\nlog_level = info\n' "$T/rmstate" >"$T/rankmapd.conf"
expect "rankmapd starts on a temporary socket" start_rankmapd "$T/rankmapd.conf" "$T/rankmapd.sock" "$T/rankmapd.log"
# the parser child exists once some new hardware was parsed: a PlaFRIM node registered by hand
expect "a first node (bonobo001) registers by hand" "$BIN/rankmapctl" register --socket "$T/rankmapd.sock" \
	--xml "$DATA/plafrim/hwloc/bonobo001.xml" --host bonobo001
for c in $(ps -o pid= --ppid "$D_PID"); do
	tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null | grep -q -- "--hwloc-parser-child $D_PID" && P=$c
done
if [ -z "$P" ]; then
	notok "rankmapd has no hwloc parser child to hang (children: $(ps -o pid=,args= --ppid "$D_PID" | tr '\n' ';'))"
	finish; exit 1
fi
kill -STOP "$P"
ok "rankmapd's hwloc parser child ($P) is stopped"

# the nodes' hardware is new to the daemon: their parse hangs until the daemon's 30 s limit
export RANKMAP_FAKE_NODE='pack:2 core:8 pu:1'
t0=$(date +%s)
if ! $SAN sh "$H/cluster.sh" start "$C" "$BIN/spank_rankmap.so" socket="$T/rankmapd.sock" libdir="$BIN" \
	timeout=60000 >"$T/cluster.out" 2>&1; then
	cat "$T/cluster.out"
	notok "local Slurm cluster starts"
	finish; exit 1
fi
unset RANKMAP_FAKE_NODE
ok "local Slurm cluster starts while rankmapd's parser hangs ($(( $(date +%s) - t0 )) s)"

grep -q "hwloc's parser no result within 30000 ms" "$T/rankmapd.log" &&
	ok "rankmapd answered a registration timeout (its parse limit)" ||
	notok "no parse timeout in rankmapd's log: $(tail -n 5 "$T/rankmapd.log")"
resent=0
for n in n1 n2 n3 n4; do
	grep -q "registered $n's topology with rankmapd" "$C/log/slurmd.$n.log" ||
		{ notok "slurmd $n did not register: $(grep rankmap "$C/log/slurmd.$n.log" | tail -n 3)"; continue; }
	! grep -q "registering $n with rankmapd .* failed" "$C/log/slurmd.$n.log" &&
		ok "slurmd $n registered, no failure logged" || notok "slurmd $n logged a failure: $(grep failed "$C/log/slurmd.$n.log")"
	grep -q "registered $n's topology with rankmapd at .* (send [23] of 3)" "$C/log/slurmd.$n.log" && resent=$((resent + 1))
done
[ "$resent" -ge 1 ] && ok "$resent of the nodes registered on a later send, after the daemon's timeout" ||
	notok "no node registered on a later send: $(grep -h 'rankmap:' "$C"/log/slurmd.n*.log | head -n 8)"
python3 "$H/rmcall.py" "$T/rankmapd.sock" '{"type":"hosts"}' >"$T/hosts.json"
in_model=0
for n in n1 n2 n3 n4; do grep -q "\"$n\"" "$T/hosts.json" && in_model=$((in_model + 1)); done
[ "$in_model" = 4 ] && ok "rankmapd's model has the four nodes" || notok "the model has $in_model of the 4 nodes: $(head -c 300 "$T/hosts.json")"
[ ! -e "/proc/$P" ] || [ "$(awk '{print $3}' "/proc/$P/stat" 2>/dev/null)" = Z ] &&
	ok "the hung parser child was ended by rankmapd" || notok "parser child $P still there"
finish
