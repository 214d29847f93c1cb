#!/bin/sh
# rankmapctl report, map, order, simulate, explain and slurm-topology through a real rankmapd (--socket and RANKMAP_SOCKET) give
# the same output as offline on the same files (the example cluster and a small torus); the daemon's
# answers are also checked against facts derived from the input files; an unreachable daemon is an
# error naming the socket (exit 1); --socket with file sources is a usage error (exit 2); a bad
# --server-uid is an error naming the option.
. "$(dirname "$0")/../lib.sh"
T=$(mktmp)
rankmapd_cleanup "$T"
CTL=$BIN/rankmapctl
[ -x "$BIN/rankmapd" ] || { notok "$BIN/rankmapd not built"; finish; exit 1; }
CLUSTER=$DATA/example/cluster.conf
TORUS=$DATA/torus/small-table.conf
SOCK=$T/sock
# the offline runs read the same sources through one cluster file, so reports name the same paths
cat >"$T/cluster.conf" <<EOC
hwloc = $DATA/plafrim/hwloc
ib = $DATA/plafrim/ib/ib-subnet0.txt
torus = $TORUS
EOC
printf 'cluster = %s\n' "$T/cluster.conf" >"$T/rankmapd.conf"
expect "rankmapd is up" start_rankmapd "$T/rankmapd.conf" "$SOCK" "$T/d.log" --state-dir "$T/state"

# same: DESC FILE_A FILE_B (time_ms fields differ from run to run and are blanked)
same() {
	sed 's/"time_ms": *[0-9.e+-]*/"time_ms"/; s/, [0-9.]* ms$/, ms/' "$2" >"$2.n"
	sed 's/"time_ms": *[0-9.e+-]*/"time_ms"/; s/, [0-9.]* ms$/, ms/' "$3" >"$3.n"
	if cmp -s "$2.n" "$3.n"; then ok "$1"; else notok "$1"; diff "$2.n" "$3.n" | head -5; fi
}

# ---- report
"$CTL" report --socket "$SOCK" --json >"$T/r.remote"; rc=$?
"$CTL" report --cluster "$T/cluster.conf" --json >"$T/r.local"
[ $rc -eq 0 ] && same "report --json: daemon = offline" "$T/r.remote" "$T/r.local" || notok "report --json exit $rc"
nxml=$(ls "$DATA/plafrim/hwloc" | grep -c '\.xml$')
hw=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hosts_with_hardware"])' "$T/r.remote")
[ "$hw" = "$nxml" ] && ok "report: $hw hosts with hardware = $nxml XML files" || notok "report: $hw hosts with hardware, $nxml XML files"
RANKMAP_SOCKET=$SOCK "$CTL" report >"$T/r.remote"
"$CTL" report --cluster "$T/cluster.conf" >"$T/r.local"
same "report text through RANKMAP_SOCKET = offline" "$T/r.remote" "$T/r.local"
grep -q '^Torus order' "$T/r.remote" && ok "report: torus order summarised" || notok "report: no torus order"

# ---- map (deterministic engines; a pattern file, a Cartesian spec, PUs)
for args in "--cart 8x4:1,1:10,1 --algo treematch --hosts fourmi[001-004]" \
	"--pattern $DATA/patterns/ring8.mtx --algo treematch --hosts fourmi[001-002]" \
	"--pattern $DATA/patterns/traced.mtx --metric messages --algo identity --hosts fourmi003" \
	"--cart 2x4 --algo treematch --hosts fourmi005 --per-pu"; do
	"$CTL" map $args --socket "$SOCK" --json >"$T/m.remote"; rc=$?
	"$CTL" map $args --cluster "$T/cluster.conf" --json >"$T/m.local"
	[ $rc -eq 0 ] && same "map --json $args: daemon = offline" "$T/m.remote" "$T/m.local" || notok "map $args: exit $rc"
	"$CTL" map $args --socket "$SOCK" --out "$T/p.remote" >"$T/m.remote"
	"$CTL" map $args --cluster "$T/cluster.conf" --out "$T/p.local" >"$T/m.local"
	same "map text and permutation $args" "$T/m.remote" "$T/m.local"
	cmp -s "$T/p.remote" "$T/p.local" && ok "map --out: same permutation" || notok "map --out: permutations differ"
done
# the permutation of 32 ranks onto the 32 cores of fourmi[001-004] (8 cores each) is a bijection
"$CTL" map --cart 8x4 --algo treematch --hosts 'fourmi[001-004]' --socket "$SOCK" --out - 2>/dev/null >"$T/perm"
[ "$(sort -un "$T/perm" | wc -l)" = 32 ] && [ "$(sort -n "$T/perm" | tail -1)" = 31 ] &&
	ok "map: 32 distinct slots 0..31" || notok "map: permutation $(tr '\n' ' ' <"$T/perm")"

# ---- order
for f in list slurm-nodes weights topology.conf svg; do
	"$CTL" order --socket "$SOCK" --format $f --method hilbert >"$T/o.remote"; rc=$?
	"$CTL" order --torus "$TORUS" --format $f --method hilbert >"$T/o.local"
	[ $rc -eq 0 ] && same "order --format $f: daemon = offline" "$T/o.remote" "$T/o.local" || notok "order $f: exit $rc"
done
RANKMAP_SOCKET=$SOCK "$CTL" order --format list >"$T/o.remote"
# 2x2x3 routers, 2 nodes each: 24 lines; the nodes the table names appear by name, once each
grep -v '^#\|^dims\|^link\|^nodes\|^\[' "$TORUS" | awk 'NF {print $1}' | sort >"$T/o.names"
grep -v '^nid[0-9]*$' "$T/o.remote" | sort >"$T/o.sorted"
[ "$(wc -l <"$T/o.remote")" = 24 ] && [ -s "$T/o.names" ] && cmp -s "$T/o.sorted" "$T/o.names" &&
	ok "order list (RANKMAP_SOCKET): 24 nodes, the named ones once each, the others nidNNNNN" || notok "order list: $(head -3 "$T/o.remote")"
"$CTL" order --socket "$SOCK" --dims 4x4x4:2 --link-cost 1,2,1 --mesh --format weights >"$T/o.remote"
"$CTL" order --dims 4x4x4:2 --link-cost 1,2,1 --mesh --format weights >"$T/o.local"
same "order --dims with --socket = offline" "$T/o.remote" "$T/o.local"

# ---- simulate
"$CTL" simulate --socket "$SOCK" --jobs 300 --seed 3 --json >"$T/s.remote"; rc=$?
"$CTL" simulate --torus "$TORUS" --jobs 300 --seed 3 --json >"$T/s.local"
[ $rc -eq 0 ] && same "simulate --json: daemon = offline" "$T/s.remote" "$T/s.local" || notok "simulate exit $rc"
jobs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"])' "$T/s.remote")
[ "$jobs" = 300 ] && ok "simulate: 300 jobs" || notok "simulate: $jobs jobs"
"$CTL" simulate --socket "$SOCK" --dims 6x4x4:2 --link-cost 1,2,1 --compare --jobs 200 >"$T/s.remote"
"$CTL" simulate --dims 6x4x4:2 --link-cost 1,2,1 --compare --jobs 200 >"$T/s.local"
same "simulate --compare table: daemon = offline" "$T/s.remote" "$T/s.local"
"$CTL" simulate --socket "$SOCK" --dims 40x40x40:4 --jobs 100000 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'more work than one request' "$T/err" && ok "simulate: oversized request refused" ||
	notok "simulate oversized: exit $rc $(cat "$T/err")"

# ---- protocol level: simulate validation, map breakdown, a slots map measured against the placement given
cat >"$T/raw.py" <<'EOPY'
import json, socket, struct, sys
def call(req):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(20)
    b = json.dumps(dict(version=1, id=1, **req)).encode(); s.sendall(struct.pack(">I", len(b)) + b)
    def rd(n):
        d = b""
        while len(d) < n: d += s.recv(n - len(d))
        return d
    r = json.loads(rd(struct.unpack(">I", rd(4))[0])); s.close(); return r
def err(r): return r.get("error", {}).get("code", "ok") + ": " + r.get("error", {}).get("message", "")
checks = []
r = call({"type": "simulate", "jobs": 50, "colour": "red"})
checks.append(("simulate unknown field named", not r["ok"] and "colour" in err(r)))
r = call({"type": "simulate", "jobs": 0})
checks.append(("simulate jobs 0 refused", not r["ok"] and err(r).startswith("bad_request")))
r = call({"type": "simulate", "method": "nope", "jobs": 10})
checks.append(("simulate unknown method refused", not r["ok"] and err(r).startswith("bad_request")))
r = call({"type": "simulate", "method": "xyz", "compare": True})
checks.append(("simulate method and compare refused", not r["ok"]))
r = call({"type": "simulate", "jobs": 40, "dims": [4, 4, 2], "nodes_per_router": 2})
checks.append(("simulate on dims: 40 jobs, class 'all' counts them",
               r["ok"] and r["jobs"] == 40 and r["methods"]["bbb"]["classes"]["all"]["jobs"] == 40))
r = call({"type": "map", "cart": "4x2", "hosts": ["fourmi001"], "breakdown": "yes"})
checks.append(("map breakdown of the wrong type refused", not r["ok"] and "breakdown" in err(r)))
# a ring of 8 ranks on 4 cores of each of two hosts, given alternating hosts: in the placement given
# every ring edge crosses hosts, so identity_cost = 8 x the daemon's host-to-host distance; the
# engines (even "identity", rank i on the i-th slot of the returned depth-first list) do better
slots = [["fourmi001", 0], ["fourmi002", 0], ["fourmi001", 1], ["fourmi002", 1],
         ["fourmi001", 2], ["fourmi002", 2], ["fourmi001", 3], ["fourmi002", 3]]
d = call({"type": "distance", "hosts": ["fourmi001", "fourmi002"]})["distance"]
for algo in ("identity", "treematch"):
    r = call({"type": "map", "cart": "8", "slots": slots, "engine": algo})
    checks.append(("slots map (%s): identity_cost = 8 x %g, the placement given; cost below it" % (algo, d),
                   r["ok"] and abs(r["identity_cost"] - 8 * d) < 1e-9 * d and r["cost"] < r["identity_cost"] and
                   sorted(r["permutation"]) == list(range(8))))
for d, c in checks: print(("ok " if c else "FAIL ") + d)
EOPY
python3 "$T/raw.py" "$SOCK" >"$T/raw.out" 2>&1 || echo "FAIL raw.py crashed" >>"$T/raw.out"
while read -r verdict desc; do
	[ "$verdict" = ok ] && ok "protocol: $desc" || notok "protocol: $desc"
done <"$T/raw.out"

# ---- errors
for cmd in "report" "map --cart 4x4" "order" "simulate --jobs 10"; do
	"$CTL" $cmd --socket "$T/nothing.sock" >"$T/out" 2>"$T/err"; rc=$?
	[ $rc -eq 1 ] && grep -q "$T/nothing.sock" "$T/err" && [ ! -s "$T/out" ] &&
		ok "$cmd: dead daemon: exit 1 naming the socket" || notok "$cmd: dead daemon: exit $rc: $(cat "$T/err")"
done
"$CTL" report --socket "$SOCK" --cluster "$CLUSTER" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok "report --socket with --cluster: usage error" || notok "report --socket --cluster: exit $rc"
"$CTL" map --cart 4x4 --socket "$SOCK" --topology 'tleaf 1 16 1' >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok "map --socket with --topology: usage error" || notok "map --socket --topology: exit $rc"

# ---- explain and slurm-topology -----------------------------------------------------------
H='fourmi[001-004]'
for args in "--cart 8x4 --algo treematch" "--pattern $DATA/reports/explain-levels.mtx --perm $DATA/reports/explain-swap.perm" \
	"--pattern $DATA/patterns/traced.mtx --metric messages --algo identity --json"; do
	"$CTL" explain $args --hosts "$H" --socket "$SOCK" >"$T/e.remote"; rc=$?
	"$CTL" explain $args --hosts "$H" --cluster "$T/cluster.conf" >"$T/e.local"
	[ $rc -eq 0 ] && same "explain $args: daemon = offline" "$T/e.remote" "$T/e.local" || notok "explain $args: exit $rc"
done
RANKMAP_SOCKET=$SOCK "$CTL" explain --cart 4x2 --hosts fourmi001 >"$T/e.remote"; rc=$?
"$CTL" explain --cart 4x2 --hosts fourmi001 --cluster "$T/cluster.conf" >"$T/e.local"
[ $rc -eq 0 ] && same "explain through RANKMAP_SOCKET = offline" "$T/e.remote" "$T/e.local" || notok "explain env: exit $rc"
"$CTL" explain --cart 4x4 --socket "$SOCK" --cluster "$T/cluster.conf" --hosts fourmi001 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok "explain --socket with --cluster: usage error" || notok "explain --socket --cluster: exit $rc"
"$CTL" explain --cart 4x4 --socket "$T/nothing.sock" --hosts fourmi001 >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "nothing.sock" "$T/err" && ok "explain: unreachable daemon is an error naming the socket" \
	|| notok "explain unreachable: exit $rc"
for args in "" "--all-leaves" "--top top" "--format block --slurm-conf $DATA/slurm/slurm.conf.nodes" \
	"--format yaml --nodes fourmi[001-040],nothere1" "--format weights"; do
	"$CTL" slurm-topology $args --socket "$SOCK" --out "$T/st.remote" 2>"$T/st.remote.err"; rc=$?
	"$CTL" slurm-topology $args --cluster "$T/cluster.conf" --out "$T/st.local" 2>"$T/st.local.err"
	[ $rc -eq 0 ] && same "slurm-topology $args: daemon = offline (file)" "$T/st.remote" "$T/st.local" \
		|| notok "slurm-topology $args: exit $rc"
	same "slurm-topology $args: daemon = offline (warnings)" "$T/st.remote.err" "$T/st.local.err"
done
RANKMAP_SOCKET=$SOCK "$CTL" slurm-topology >"$T/st.remote" 2>/dev/null; rc=$?
"$CTL" slurm-topology --cluster "$T/cluster.conf" >"$T/st.local" 2>/dev/null
[ $rc -eq 0 ] && same "slurm-topology through RANKMAP_SOCKET = offline" "$T/st.remote" "$T/st.local" || notok "slurm-topology env: exit $rc"
"$CTL" slurm-topology --socket "$SOCK" --ib "$DATA/plafrim/ib/ib-subnet0.txt" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok "slurm-topology --socket with --ib: usage error" || notok "slurm-topology --socket --ib: exit $rc"
"$CTL" map --cart 4x4 --socket "$SOCK" --hosts nosuchhost >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q nosuchhost "$T/err" && ok "map: unknown host from the daemon: exit 1, named" ||
	notok "map unknown host: exit $rc $(cat "$T/err")"

# ---- a bad --server-uid is named as the user gave it (the option, not the variable it once went through)
for cmd in "ping" "register --xml $DATA/plafrim/hwloc/bonobo001.xml" "report" "map --cart 4x4 --hosts fourmi001"; do
	for srv in 127.0.0.1:1 "$SOCK"; do
		"$CTL" $cmd --server "$srv" --server-uid no-such-user-x >/dev/null 2>"$T/err"; rc=$?
		if [ $rc -ne 0 ] && grep -q -- "--server-uid: 'no-such-user-x' is neither a uid nor a user name" "$T/err" &&
			! grep -q RANKMAP_SERVER_UID "$T/err"; then
			ok "${cmd%% *} --server $srv --server-uid no-such-user-x: exit $rc, the error names --server-uid"
		else
			notok "${cmd%% *} --server $srv --server-uid no-such-user-x: exit $rc: $(cat "$T/err")"
		fi
	done
done
RANKMAP_SERVER_UID=no-such-user-x "$CTL" ping --server 127.0.0.1:1 >/dev/null 2>"$T/err"; rc=$?
[ $rc -ne 0 ] && grep -q "RANKMAP_SERVER_UID: 'no-such-user-x' is neither" "$T/err" &&
	ok "RANKMAP_SERVER_UID=no-such-user-x: exit $rc, the error names the variable" ||
	notok "RANKMAP_SERVER_UID=no-such-user-x: exit $rc: $(cat "$T/err")"
"$CTL" ping --socket "$SOCK" --server-uid 0 >/dev/null 2>"$T/err"; rc=$?
expect "ping --server-uid 0 over the Unix socket: served (exit $rc)" test "$rc" -eq 0
kill -0 "$D_PID" 2>/dev/null && ok "rankmapd still running" || notok "rankmapd died"
finish
