#!/bin/sh
# tests/integration/daemon_register_batch.sh: registrations that arrive together are made durable together
# (group commit, issue 31: daemon/server/srv_commit.c), and none is answered before it is durable.
# A real rankmapd, traced by strace (every thread: each fsync, rename and send, descriptors shown as paths):
#  1. 32 registrations sent at once on 32 connections: all answered ok and "saved": true; the
#     registrations directory is fsync'ed fewer times than there are registrations (the daemon before
#     group commit fsync'ed it once per registration, 32 times here), and so is state.json written;
#  2. for each registration the trace shows, in this order: its file fsync'ed under its temporary name,
#     renamed to registrations/<host>.xml, the directory fsync'ed after the rename, and only then the
#     answer naming the host sent to the client;
#  3. kill -9 right after the last answer: the restarted daemon serves all 32, from their files.
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
N=32
T=$(mktmp)
chmod 755 "$T"
S_PID=
rankmapd_on_exit() { [ -n "$S_PID" ] && kill "$S_PID" 2>/dev/null && wait "$S_PID" 2>/dev/null; }
rankmapd_cleanup "$T"
if ! command -v strace >/dev/null 2>&1; then
	skip "strace is not installed (scripts/deps.sh installs it)"
	finish
	exit
fi
cat >"$T/rankmapd.conf" <<EOC
hwloc_dir = $DATA/daemon/hwloc
socket_mode = 0666
worker_threads = 2
EOC
SOCK=$T/sock
XML=$DATA/plafrim/hwloc/bonobo010.xml

expect "daemon starts" start_rankmapd "$T/rankmapd.conf" "$SOCK" "$T/d.log" --state-dir "$T/state"
strace -f -y -s 400 -e trace=fsync,fdatasync,rename,renameat,renameat2,sendto,sendmsg,write -o "$T/trace" \
	-p "$D_PID" 2>"$T/strace.err" &
S_PID=$!
# traced once a ping's answer (sent by the event loop, attached after every other thread) is in the trace
n=0
while [ $n -lt 300 ] && ! { "$CTL" ping --socket "$SOCK" >/dev/null 2>&1 && grep -q 'sendto(' "$T/trace" 2>/dev/null; }; do
	sleep 0.1; n=$((n + 1))
done
expect "strace attached to every thread of the daemon" grep -q 'sendto(' "$T/trace"

# 1. N registrations at once: N connections, every frame sent before any answer is read
python3 - "$SOCK" "$XML" "$N" >"$T/answers" <<'PY'
import json, socket, struct, sys
sock, xml, n = sys.argv[1], open(sys.argv[2]).read(), int(sys.argv[3])
conns = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(120)
    s.connect(sock)
    conns.append(s)
for i, s in enumerate(conns):
    b = json.dumps({"version": 1, "type": "register", "id": i, "host": "batch%02d" % i, "xml": xml}).encode()
    s.sendall(struct.pack('>I', len(b)) + b)
for i, s in enumerate(conns):
    try:
        hdr = s.recv(4, socket.MSG_WAITALL)
        r = json.loads(s.recv(struct.unpack('>I', hdr)[0], socket.MSG_WAITALL))
        print("batch%02d" % i, "ok" if r.get("ok") else "error", "saved" if r.get("saved") else "unsaved",
              r.get("error", {}).get("message", "") if isinstance(r.get("error"), dict) else r.get("error", ""))
    except Exception as e:
        print("batch%02d" % i, "noanswer", e)
PY
kill -9 "$D_PID"
wait "$D_PID" 2>/dev/null
D_PID=
wait "$S_PID" 2>/dev/null
S_PID=
nok=$(grep -c ' ok saved' "$T/answers")
expect "all $N registrations answered ok and saved ($nok; $(grep -v ' ok saved' "$T/answers" | head -2 | tr '\n' ' '))" \
	test "$nok" -eq "$N"

# 2. the trace: counts and, per host, file fsync < rename < directory fsync < answer
python3 - "$T/trace" "$T/state" "$N" >"$T/check" <<'PY'
import re, sys
trace, state, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
regs = state + "/registrations"
lines = open(trace, errors="replace").read().splitlines()
start = {}    # (pid, syscall) -> index of the line that started the call still unfinished
calls = []    # (syscall, args text, start index, end index, result)
for i, l in enumerate(lines):
    m = re.match(r'(\d+)\s+(\w+)\((.*)', l)
    r = re.match(r'(\d+)\s+<\.\.\. (\w+) resumed>(.*)', l)
    if r:
        key = (r.group(1), r.group(2))
        if key in start:
            j, args = start.pop(key)
            calls.append((r.group(2), args + r.group(3), j, i, r.group(3).rsplit('=', 1)[-1].strip()))
    elif m:
        if l.endswith(' <unfinished ...>'):
            start[(m.group(1), m.group(2))] = (i, m.group(3)[:-len(' <unfinished ...>')])
        else:
            calls.append((m.group(2), m.group(3), i, i, l.rsplit('=', 1)[-1].strip()))
calls.sort(key=lambda c: c[2])
dir_syncs = [c for c in calls if c[0] == 'fsync' and re.match(r'\d+<' + re.escape(regs) + r'>\)', c[1])]
state_renames = [c for c in calls if c[0] == 'rename' and c[1].rstrip().split(', ')[-1].startswith('"%s/state.json"' % state)]
print("dir_fsyncs", len(dir_syncs))
print("state_writes", len(state_renames))
bad = 0
for h in ["batch%02d" % i for i in range(n)]:
    ren = [c for c in calls if c[0] == 'rename' and ('"%s/%s.xml")' % (regs, h)) in c[1] and c[4].startswith('0')]
    if not ren:
        print("host", h, "no rename into place"); bad += 1; continue
    tmp = re.match(r'"([^"]+)"', ren[0][1]).group(1)
    fs = [c for c in calls if c[0] in ('fsync', 'fdatasync') and ('<%s>' % tmp) in c[1] and c[4].startswith('0')]
    ds = [c for c in dir_syncs if c[2] > ren[0][3] and c[4].startswith('0')]
    ans = [c for c in calls if c[0] in ('sendto', 'write', 'sendmsg') and '\\"host\\":\\"%s\\"' % h in c[1]]
    if not fs or fs[0][3] > ren[0][2]:
        print("host", h, "renamed before its file was fsync'ed"); bad += 1
    elif not ds:
        print("host", h, "no directory fsync after its rename"); bad += 1
    elif not ans:
        print("host", h, "no answer in the trace"); bad += 1
    elif ans[0][2] < ds[0][3]:
        print("host", h, "answered (line %d) before the directory fsync ended (line %d)" % (ans[0][2], ds[0][3])); bad += 1
print("bad", bad)
PY
sed 's/^/# /' "$T/check"
dirs=$(sed -n 's/^dir_fsyncs //p' "$T/check")
states=$(sed -n 's/^state_writes //p' "$T/check")
bad=$(sed -n 's/^bad //p' "$T/check")
expect "the trace was read: $N registrations, ${dirs:-no} fsyncs of their directory" test "${dirs:-0}" -gt 0
expect "$N registrations at once: their directory fsync'ed fewer times than $N (${dirs:-?} times)" \
	test "${dirs:-99}" -lt "$N"
expect "state.json written fewer times than $N (${states:-?}: the model updated once per batch)" \
	test "${states:-99}" -lt "$N"
expect "each answer after its file's fsync, its rename and the directory's fsync (${bad:-?} out of order)" \
	test "${bad:-1}" -eq 0

# 3. kill -9 after the last answer: every acknowledged registration is back
expect "restart after kill -9" start_rankmapd "$T/rankmapd.conf" "$SOCK" "$T/d.log" --state-dir "$T/state"
missing=0
for h in $(grep ' ok saved' "$T/answers" | cut -d' ' -f1); do
	"$CTL" distance --socket "$SOCK" "$h" "$h" >/dev/null 2>&1 || missing=$((missing + 1))
done
expect "all $nok acknowledged registrations served after the restart (missing: $missing)" test "$missing" -eq 0
finish
