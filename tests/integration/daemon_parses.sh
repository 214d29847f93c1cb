#!/bin/sh
# tests/integration/daemon_parses.sh: rankmapd parses each request frame once, where it runs, in both
# isolation modes. A real rankmapd on the bundled example cluster answers one connection a mix of
# requests: answered on the event loop (ping, refusals), run by a worker thread (hosts), run by a worker
# process (map, distance, report), large frames (over the loop's 512 bytes, whitespace-padded), a map on
# a model newer than its worker process (after a reload), and bad frames; then the daemon's own counters
# in the report (daemon.parses, every worker process's parses included; daemon.requests, the report
# included) must be equal, and each answer's outcome the same in both modes. Before, with isolation = process, a small frame for a worker process was
# parsed on the loop and again in the worker process, and a large frame that runs in the daemon (hosts,
# register) in the worker process and again in its thread.
. "$(dirname "$0")/../lib.sh"

T=$(mktmp) || exit 1
rankmapd_cleanup "$T"
modes="thread process"
# GCC 12's ASan cannot fork worker processes from a threaded daemon (tests/README.md, daemon_isolation)
if ldd "$BIN/rankmapd" 2>/dev/null | grep -q libasan; then
	modes=thread
	skip "SANITIZE=1: isolation = process (GCC 12's ASan cannot fork worker processes from a threaded rankmapd)"
fi

for mode in $modes; do
	printf 'cluster = %s\nsocket_mode = 0600\nworker_threads = 2\nisolation = %s\n' \
		"$DATA/example/cluster.conf" "$mode" >"$T/$mode.conf"
	start_rankmapd "$T/$mode.conf" "$T/$mode.sock" "$T/$mode.log" --state-dir "$T/$mode.state"
	expect "$mode: rankmapd started" test -n "$D_PID"
	out=$(python3 - "$T/$mode.sock" "$T/$mode.answers" <<'PY'
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
def call(b):
    s.sendall(struct.pack('>I', len(b)) + b)
    n = struct.unpack('>I', s.recv(4, socket.MSG_WAITALL))[0]
    return json.loads(s.recv(n, socket.MSG_WAITALL))
def req(t, i, **kw):
    return dict({"version": 1, "type": t, "id": i}, **kw)
hosts = ["bonobo001", "bonobo002"]
m = req("map", 0, cart="4x4", hosts=hosts)
frames = [json.dumps(req("ping", 1)), json.dumps(req("hosts", 2)), json.dumps(dict(m, id=3)),
          json.dumps(req("distance", 4, hosts=hosts)), json.dumps(req("report", 5)),
          json.dumps(dict(m, id=6), indent=60), json.dumps(req("hosts", 7), indent=300),
          json.dumps(dict(m, id=8, version=99)), json.dumps(req("frobnicate", 9)), 'not json',
          json.dumps(dict(m, id=10, bogus=1)), json.dumps(req("reload", 11)), json.dumps(dict(m, id=12)),
          json.dumps(req("order", 13, method="xyz", dims=[2, 2, 2]))]
big = sum(len(f) > 512 for f in frames)
with open(sys.argv[2], "w") as a:  # each answer's outcome, the same in both modes
    for f in frames:
        r = call(f.encode())
        a.write("%s %s\n" % (r.get("ok"), json.dumps(r.get("error"))))
d = call(json.dumps(req("report", 14)).encode())["daemon"]
print(len(frames) + 1, big, d["requests"], d.get("parses"))
PY
)
	set -- $out
	echo "# $mode: frames sent $1 (over 512 bytes: $2); daemon: requests $3, parses $4"
	expect "$mode: the daemon counted every request ($3, $1 sent after its pings)" test "$3" -ge "$1"
	expect "$mode: large frames among them ($2)" test "${2:-0}" -ge 2
	expect "$mode: one parse per request ($4 parses, $3 requests)" test "$4" = "$3"
	term_rankmapd
done
[ "$modes" = "thread process" ] &&
	expect "the same answers (ok, error code and message) in both modes" cmp "$T/thread.answers" "$T/process.answers"
finish
