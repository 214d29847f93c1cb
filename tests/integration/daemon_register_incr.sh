#!/bin/sh
# tests/integration/daemon_register_incr.sh: registrations applied by what changed, and the
# backup reaching the same model (daemon/PROTOCOL.md, "Failover": every node registers with each server).
#  - A primary and a backup on the same sources (PlaFRIM's fabric, an hwloc directory) receive the 122
#    PlaFRIM nodes' registrations, 8 at a time, in opposite orders. Every registration is ok, most models
#    are derived from the previous one (the log says "N changed"), and both serve the same model: their
#    reports (hosts, node types and their hosts, the fabric's joins and anomalies) are equal.
#  - The primary restarted (a full build from its saved registrations) serves the model it served before;
#    so does the backup after `reload`. A full build is the reference the derived models are checked against.
#  - A node that registers again with other hardware replaces its old type in both ways of building.
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
T=$(mktmp)
chmod 755 "$T"
rankmapd_cleanup "$T"
cat >"$T/rankmapd.conf" <<EOC
hwloc_dir = $DATA/daemon/hwloc
ib_file = $DATA/plafrim/ib/ib-subnet0.txt
socket_mode = 0666
EOC
H=$DATA/plafrim/hwloc
ls "$H"/*.xml >"$T/files"
n=$(wc -l <"$T/files")

# report SOCK OUT: the model as a canonical JSON (node types sorted by their hosts, anomalies sorted; hosts
# are not in the same order in two daemons, so a row's memory, its first host's, is left out)
report() {
	"$CTL" report --socket "$1" --json >"$T/raw.json" 2>"$T/raw.err" || return 1
	python3 - "$T/raw.json" "$2" <<'PY'
import json, sys
import re
def expand(hl):  # a Slurm host list, in any order, as the sorted names
    out = []
    for part in re.findall(r'[^,\[]+(?:\[[^\]]*\])?', hl):
        m = re.match(r'(.*)\[(.*)\]$', part)
        if not m:
            out.append(part)
            continue
        for rg in m.group(2).split(','):
            a, _, b = rg.partition('-')
            for i in range(int(a), int(b or a) + 1):
                out.append('%s%0*d' % (m.group(1), len(a), i))
    return sorted(out)
r = json.load(open(sys.argv[1]))
for t in r['node_types']:  # a row shows its first host's memory: host order is not the model
    t.pop('index', None)
    t.pop('memory_bytes', None)
    t['host_list'] = expand(t['host_list'])
r['node_types'].sort(key=lambda t: t['host_list'])
r['anomalies'].sort(key=lambda a: json.dumps(a, sort_keys=True))
json.dump(r, open(sys.argv[2], 'w'), sort_keys=True, indent=1)
PY
}
same() { cmp -s "$1" "$2" || { diff -U8 "$1" "$2" | head -60; return 1; }; }

expect "primary starts" start_rankmapd "$T/rankmapd.conf" "$T/a.sock" "$T/a.log" --state-dir "$T/a"
A_PID=$D_PID
expect "backup starts" start_rankmapd "$T/rankmapd.conf" "$T/b.sock" "$T/b.log" --state-dir "$T/b"
D_PID=$A_PID # the primary again (term_rankmapd below); the cleanup stops both

# the same registrations to both, 8 at a time, in opposite orders
reg() { # SOCK < files
	xargs -P 8 -I{} sh -c '"$0" register --socket "$1" --xml "{}" >/dev/null 2>>"$2" || echo "{}" >>"$3"' \
		"$CTL" "$1" "$T/reg.err" "$T/reg.failed"
}
: >"$T/reg.failed"
reg "$T/a.sock" <"$T/files" &
p1=$!
sort -r "$T/files" | reg "$T/b.sock" &
p2=$!
wait $p1 $p2
[ ! -s "$T/reg.failed" ] && ok "$n registrations to each server, all ok" ||
	notok "$(wc -l <"$T/reg.failed") registrations failed: $(head -3 "$T/reg.err")"
derived=$(grep -c "registered, [0-9]* changed in" "$T/a.log")
full=$(grep -c "built in .* (in full)" "$T/a.log")
[ "$derived" -gt 0 ] && ok "primary: $derived models derived by what changed, $full built in full" ||
	notok "primary: no model derived ($full built in full): $(grep model "$T/a.log" | tail -3)"
report "$T/a.sock" "$T/a1.json" && report "$T/b.sock" "$T/b1.json"
expect "primary and backup serve the same model" same "$T/a1.json" "$T/b1.json"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r['hosts_with_hardware'] >= $n else 1)" "$T/a1.json" &&
	ok "every registered host has its hardware ($(json_num hosts_with_hardware "$T/raw.json") hosts with hardware)" ||
	notok "hosts with hardware: $(grep -m1 hosts_with_hardware "$T/a1.json")"

# a node that comes back with other hardware (a registration replaces the previous one)
expect "bonobo001 registers again with fourmi001's hardware" "$CTL" register --socket "$T/a.sock" --force \
	--xml "$H/fourmi001.xml" --host bonobo001
"$CTL" register --socket "$T/b.sock" --force --xml "$H/fourmi001.xml" --host bonobo001 >/dev/null
report "$T/a.sock" "$T/a2.json" && report "$T/b.sock" "$T/b2.json"
expect "after it, primary and backup still agree" same "$T/a2.json" "$T/b2.json"
python3 - "$T/a2.json" <<'PY' && ok "bonobo001 now has fourmi001's node type" || notok "bonobo001's node type did not change"
import json, sys
r = json.load(open(sys.argv[1]))
t = [t for t in r['node_types'] if 'fourmi001' in t['host_list']]
sys.exit(0 if t and 'bonobo001' in t[0]['host_list'] else 1)
PY

# full builds: the primary restarted from its saved registrations, the backup reloaded
term_rankmapd
expect "primary restarts" start_rankmapd "$T/rankmapd.conf" "$T/a.sock" "$T/a.log" --state-dir "$T/a"
report "$T/a.sock" "$T/a3.json"
expect "the restarted primary (a full build) serves the model it had derived" same "$T/a2.json" "$T/a3.json"
expect "backup reloads" "$CTL" reload --socket "$T/b.sock"
report "$T/b.sock" "$T/b3.json"
expect "the reloaded backup (a full build) serves the model it had derived" same "$T/b2.json" "$T/b3.json"
finish
