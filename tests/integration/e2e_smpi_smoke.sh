#!/bin/sh
# tests/integration/e2e_smpi_smoke.sh: the SMPI variant of the rankmap MPI library, end to end, small.
# Needs SimGrid SMPI (smpicc, smpirun: libsimgrid-dev, which `make deps` installs); without it the test
# is skipped, and CI fails on that skip. Under SANITIZE=1 it is skipped (allowed in CI): smpirun runs the
# program inside SimGrid's simulator, which is not built with ASan.
# Builds librankmap_mpi_smpi.a and the ring-of-rings program, then on 4 simulated hosts x 4 cores:
#   - cyclic placement, rankmap disabled: every token hop crosses the network (offnode by hand);
#   - cyclic placement, rankmap treematch: each ring lands on one host (offnode by hand), faster;
#   - a bad RANKMAP_CLUSTER: one warning, the job still completes unreordered;
#   - a traced 4x4 Cartesian run, then Cart_create reordered with the tracer's pattern (offnode by hand);
#   - learning (RANKMAP_LEARN=1) of the ring of rings declared without weights, by
#     MPI_Dist_graph_create_adjacent and by MPI_Graph_create: the stored per-edge pattern (by hand), then
#     the second run applies it.
. "$(dirname "$0")/../lib.sh"

if ! command -v smpirun >/dev/null 2>&1 || ! command -v smpicc >/dev/null 2>&1; then
	skip "SimGrid SMPI (smpicc, smpirun) is not installed (make deps installs libsimgrid-dev)"
	finish
	exit $?
fi
# smpirun loads the program into the (uninstrumented) simulator, where an ASan-built program cannot run.
if ldd "$BIN/rankmapctl" 2>/dev/null | grep -q libasan; then
	skip "SANITIZE=1: a sanitized build cannot run inside the uninstrumented SMPI simulator"
	finish
	exit $?
fi
cd "$TOP" || exit 1
if make --no-print-directory B="$B" bench-e2e-progs >/dev/null 2>&1; then
	ok "SMPI library and benchmark programs build"
else
	notok "SMPI library and benchmark programs build (make B=$B bench-e2e-progs)"
	finish
	exit 1
fi
T=$(mktmp)
trap 'rm -rf "$T"' EXIT INT TERM
python3 - "$T" <<'EOF' || notok "platform generation"
import sys
sys.path.insert(0, "tests/bench/e2e")
from e2e_platform import Platform
d = sys.argv[1]
p = Platform("flat", 4, 4, node="core:4 pu:1")
files = {d + "/platform.xml": p.xml(), d + "/cyclic.hosts": p.hostfile("cyclic", 16),
         d + "/block.hosts": p.hostfile("block", 16)}
files.update(p.rankmap_files(d + "/rankmap"))
for k, v in files.items():
    open(k, "w").write(v)
EOF
CFG="--cfg=smpi/simulate-computation:no --cfg=smpi/privatization:no --cfg=smpi/coll-selector:mpich
 --cfg=smpi/host-speed:1Gf --log=root.thres:critical"
run() { # output file, env assignments...
	out=$1; shift
	(cd "$T" && env TMPDIR="$T" "$@" smpirun -platform platform.xml -hostfile cyclic.hosts -np 16 $CFG \
		"$BIN/tests/e2e/ring_of_rings" --ring 4 --token 1024 --laps 4 --gather 1024 --iters 5 $RR_ARGS) \
		>"$T/$out" 2>&1
}
cart() { # output file, env assignments...: 4x4 torus, dimension 0 carries 64 KiB, dimension 1 1 KiB
	out=$1; shift
	(cd "$T" && env TMPDIR="$T" "$@" smpirun -platform platform.xml -hostfile block.hosts -np 16 $CFG \
		"$BIN/tests/e2e/cart_bench" --dims 4x4 --bytes 65536,1024 --iters 3) >"$T/$out" 2>&1
}
field() { sed -n "s/^E2E .*$1=\([0-9.]*\).*/\1/p" "$T/$2"; }

# By hand: 4 rings x 4 token edges x 4 KiB = 64 KiB; 4 leaders x 3 peers x 1 KiB = 12 KiB.
# Cyclic: ring members sit on 4 different hosts, the leaders (ranks 0, 4, 8, 12) all on h0: 64/76 off node.
# Reordered: each ring on one host, leaders necessarily on 4 hosts: 12/76 off node.
run plain.out RANKMAP_DISABLE=1
expect "unreordered run completes" grep -q '^E2E time=' "$T/plain.out"
expect "cyclic placement sends 64/76 of the bytes between hosts" [ "$(field offnode plain.out)" = 0.8421 ]
run reord.out RANKMAP_ALGO=treematch RANKMAP_CLUSTER="$T/rankmap.cluster"
expect "reordered run completes" grep -q '^E2E time=' "$T/reord.out"
expect "reordered run prints no rankmap warning" sh -c "! grep -q '^rankmap:' '$T/reord.out'"
expect "reordering keeps rings on one host: 12/76 of the bytes between hosts" \
	[ "$(field offnode reord.out)" = 0.1579 ]
tp=$(field time plain.out); tr=$(field time reord.out)
expect "reordered simulated time ($tr s) below cyclic ($tp s)" awk -v a="$tr" -v b="$tp" 'BEGIN { exit !(a < b) }'

run bad.out RANKMAP_ALGO=treematch RANKMAP_CLUSTER="$T/missing.cluster"
expect "bad cluster file: the job still completes" grep -q '^E2E time=' "$T/bad.out"
expect "bad cluster file: exactly one warning" [ "$(grep -c '^rankmap:' "$T/bad.out")" = 1 ]
expect "bad cluster file: unreordered result" [ "$(field offnode bad.out)" = 0.8421 ]

# Tracer under SMPI, then its pattern as weights. Block placement puts row i (ranks 4i..4i+3) on host i:
# the heavy dimension-0 neighbours are all off node, 131072 of 133120 bytes per rank. The traced pattern
# has 16 ranks x 4 distinct neighbours = 64 entries. Reordered with it, each host holds a column: only
# the light bytes leave the host, 2048 of 133120.
cart trace.out RANKMAP_TRACE="$T/trace.mtx"
expect "traced Cartesian run completes, block offnode 131072/133120" [ "$(field offnode trace.out)" = 0.9846 ]
expect "tracer wrote a 16x16 pattern with 64 entries" grep -q '^16 16 64$' "$T/trace.mtx"
cart cart.out RANKMAP_ALGO=scotch RANKMAP_CLUSTER="$T/rankmap.cluster" RANKMAP_PATTERN="$T/trace.mtx"
expect "Cart_create reordered with the traced weights: offnode 2048/133120" [ "$(field offnode cart.out)" = 0.0154 ]
tb=$(field time trace.out); tc=$(field time cart.out)
expect "reordered Cartesian time ($tc s) below block ($tb s)" awk -v a="$tc" -v b="$tb" 'BEGIN { exit !(a < b) }'

# Learning a graph call. Under SMPI a graph communicator reports no topology: the library takes
# each process's neighbours from the call's structure at its vertex (its new rank). The structure has 44
# entries (16 ranks x 2 ring neighbours, 4 leaders x 3 others), stored by vertex then neighbour. By hand,
# per rank of the run: v -> right(v) carries the token, 4 laps x 1 KiB x 5 iterations / 16 = 1280 bytes;
# every other entry nothing (the leaders' Allgather is a collective, which is not traced).
learn_graph() { # TOPO FN
	topo=$1 fn=$2 L=$T/learn-$1
	mkdir -m 700 "$L"
	RR_ARGS="--weights off --topo $topo"
	set -- RANKMAP_LEARN=1 RANKMAP_LEARN_DIR="$L" RANKMAP_ALGO=treematch RANKMAP_CLUSTER="$T/rankmap.cluster"
	run "learn1-$topo.out" "$@" RANKMAP_REPORT="$T/learn1-$topo.rep"
	expect "$fn: learning run completes, no warning" sh -c "grep -q '^E2E time=' '$T/learn1-$topo.out' &&
		! grep -q '^rankmap:' '$T/learn1-$topo.out'"
	f=$(ls "$L"/*.pattern 2>/dev/null)
	expect "$fn: one pattern stored" [ "$(echo "$f" | grep -c .)" = 1 ]
	expect "$fn: the pattern has the call's 44 entries in the structure's order, 1280 bytes on v -> right(v)" \
		awk -v fn="$fn" '/^fn = /{ okfn = $3 == fn } /^shape = graph 16 44 /{ shape = 1 }
		/^edge = /{ n++; v = $3; u = $4; r = v - v % 4 + (v % 4 + 1) % 4
			if (v < pv || (v == pv && u <= pu) || $5 != (u == r ? 1280 : 0) || $6 != (u == r ? 1.25 : 0)) bad++
			pv = v; pu = u }
		END { exit !(okfn && shape && n == 44 && !bad) }' "$f"
	run "learn2-$topo.out" "$@" RANKMAP_REPORT="$T/learn2-$topo.rep"
	id=$(basename "$f" .pattern)
	expect "$fn: the second run applies the learned pattern" grep -q "learned=$id/runs=1\$" "$T/learn2-$topo.rep"
	# another structure (rings of 8: 2 leaders) on as many ranks: another key, nothing applied
	RR_ARGS="$RR_ARGS --ring 8"
	run "learn3-$topo.out" "$@" RANKMAP_REPORT="$T/learn3-$topo.rep"
	expect "$fn: another graph of the same size gets no pattern, and stores its own" \
		sh -c "grep -q 'learned=none\$' '$T/learn3-$topo.rep' && [ \$(ls '$L' | grep -c 'pattern\$') = 2 ]"
	RR_ARGS=
}
learn_graph dist MPI_Dist_graph_create_adjacent
learn_graph graph MPI_Graph_create
finish
