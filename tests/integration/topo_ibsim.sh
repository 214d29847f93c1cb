#!/bin/sh
# tests/integration/topo_ibsim.sh: live InfiniBand discovery against the ibsim fabric simulator.
# Starts `ibsim -s -n tests/data/ib/ibsim-fattree.net` on a private socket name (IBSIM_SOCKNAME), then,
# under LD_PRELOAD=libumad2sim.so: runs ibnetdiscover (three output forms and --cache), and the test
# program build/tests/test_topo_ib_live --live, which discovers the fabric through libibnetdisc
# (topo_fabric_load_live), checks it against the net file, writes and reloads a libibnetdisc cache,
# and compares with ibnetdiscover's outputs (topology file, -s -p ports report, -g grouped file) parsed
# by rankmap. Stops ibsim by its PID.
. "$(dirname "$0")/../lib.sh"

NET=$DATA/ib/ibsim-fattree.net
UMAD2SIM=
for d in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib; do
	[ -f "$d/umad2sim/libumad2sim.so" ] && { UMAD2SIM=$d/umad2sim/libumad2sim.so; break; }
done
T=$(mktmp)
IBSIM_PID=
cleanup() {
	[ -n "$IBSIM_PID" ] && kill "$IBSIM_PID" 2>/dev/null && wait "$IBSIM_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

if ! command -v ibsim >/dev/null 2>&1 || [ -z "$UMAD2SIM" ]; then
	notok "ibsim and libumad2sim.so are required (make deps installs ibsim-utils, libumad2sim0)"
	finish
	exit 1
fi
expect "test program built" test -x "$BIN/tests/test_topo_ib_live"

# A private abstract socket name, so that parallel runs do not talk to each other's simulator.
IBSIM_SOCKNAME=rankmap-ibsim-$$
export IBSIM_SOCKNAME
ibsim -s -n "$NET" </dev/null >"$T/ibsim.log" 2>&1 &
IBSIM_PID=$!
i=0
while [ $i -lt 50 ] && ! grep -q 'simulator ready' "$T/ibsim.log" 2>/dev/null; do
	sleep 0.2
	i=$((i + 1))
done
expect "ibsim started on $NET" grep -q 'simulator ready' "$T/ibsim.log"

# umad2sim writes a fake sysfs tree (sys-<pid>/) into the working directory: run it inside $T.
sim() { (cd "$T" && RANKMAP_TEST_DATA=$DATA LD_PRELOAD=$UMAD2SIM timeout 60 "$@"); }

# The reference tool on the same simulated fabric.
sim ibnetdiscover --cache "$T/ibnetdiscover.cache" >"$T/fabric.topo" 2>"$T/ibnetdiscover.err"
expect "ibnetdiscover ran under umad2sim" test -s "$T/fabric.topo"
expect "ibnetdiscover sees the 6 switches of the net file" \
	test "$(grep -c '^Switch' "$T/fabric.topo")" -eq 6
expect "ibnetdiscover sees the 8 HCAs of the net file" test "$(grep -c '^Ca' "$T/fabric.topo")" -eq 8
# the ports report with -s discovery lines, stderr mixed in as careless captures have it
sim ibnetdiscover -s -p >"$T/fabric.ports" 2>&1
expect "ibnetdiscover -s -p ran" grep -q '^DR path' "$T/fabric.ports"
sim ibnetdiscover -g >"$T/fabric.grouped" 2>"$T/ibnetdiscover-g.err"
expect "ibnetdiscover -g ran" grep -q 'Non-Chassis Nodes' "$T/fabric.grouped"

# rankmap's live discovery, cache round trip, and comparison with ibnetdiscover's file.
sim "$BIN/tests/test_topo_ib_live" --live "$T/live.cache" "$T/fabric.topo" "$T/fabric.ports" "$T/fabric.grouped" \
	>"$T/live.out" 2>&1
rc=$?
cat "$T/live.out"
if [ $rc -eq 0 ] && tail -n 1 "$T/live.out" | grep -q ' 0 failed'; then
	ok "live discovery, its cache and the three ibnetdiscover outputs agree with the net file"
else
	notok "live discovery checks (exit $rc)"
fi
expect "libibnetdisc cache written" test -s "$T/live.cache"

# The cache ibnetdiscover wrote loads through rankmap too (checked like the checked-in one).
mkdir -p "$T/data/ib" && cp "$T/ibnetdiscover.cache" "$T/data/ib/ibsim-fattree.cache"
RANKMAP_TEST_DATA=$T/data "$BIN/tests/test_topo_ib_live" >"$T/cache.out" 2>&1
expect "ibnetdiscover --cache file loads and matches the net file" grep -q ' 0 failed' "$T/cache.out"

# The CLI, once `rankmapctl report` knows --ib-live.
if [ -x "$BIN/rankmapctl" ] && "$BIN/rankmapctl" report --help 2>&1 | grep -q -- '--ib-live'; then
	sim "$BIN/rankmapctl" report --ib-live --json >"$T/report.json" 2>"$T/report.err"
	expect "rankmapctl report --ib-live counts 6 switches" grep -q '"switches": *6' "$T/report.json"
fi

kill "$IBSIM_PID" 2>/dev/null
wait "$IBSIM_PID" 2>/dev/null
IBSIM_PID=
# Extended speeds (FDR, EDR, HDR) and a 1x link, on a second simulated fabric.
ibsim -s -n "$DATA/ib/ibsim-speeds.net" </dev/null >"$T/ibsim2.log" 2>&1 &
IBSIM_PID=$!
i=0
while [ $i -lt 50 ] && ! grep -q 'simulator ready' "$T/ibsim2.log" 2>/dev/null; do
	sleep 0.2
	i=$((i + 1))
done
sim ibnetdiscover >"$T/speeds.topo" 2>/dev/null
expect "ibnetdiscover reports the HDR link" grep -q '4xHDR' "$T/speeds.topo"
sim "$BIN/tests/test_topo_ib_live" --speeds "$T/speeds.topo" >"$T/speeds.out" 2>&1
cat "$T/speeds.out"
expect "live discovery decodes FDR, EDR, HDR and 1x like ibnetdiscover" grep -q ' 0 failed' "$T/speeds.out"
kill "$IBSIM_PID" 2>/dev/null
wait "$IBSIM_PID" 2>/dev/null
IBSIM_PID=

# Without umad2sim this machine has no HCA (no ib_umad): discovery must fail with a clear error, not
# crash. (With umad2sim and no simulator, umad2sim itself waits forever, so that case is not run.)
unset IBSIM_SOCKNAME
timeout 60 "$BIN/tests/test_topo_ib_live" --live "$T/none.cache" >"$T/none.out" 2>&1
rc=$?
if [ $rc -eq 1 ]; then ok "discovery without any HCA fails cleanly"; else notok "discovery without HCA (exit $rc)"; fi
expect "the failure says what is missing" grep -q 'InfiniBand discovery failed' "$T/none.out"
finish
