#!/bin/sh
# tests/bench/pmpi/run.sh: costs of the rankmap PMPI library, beside the library's cost targets and the
# seed implementations' figures (REFERENCE.md sections 1 and 2).
#
# 1. Extra time of MPI_Cart_create(reorder=1) over the plain call (reorder=0, same binary, library
#    preloaded: the plain call goes straight through) at 8, 16, 32 and 64 ranks, Open MPI and MPICH, in
#    the test-only cyclic placement on virtual hosts of 'pack:2 core:4' (so the mapping really works).
#    This machine has 2 cores: 64 ranks are oversubscribed 32 times, and every collective then costs
#    scheduling rounds, which dominates the wall-clock figure. The root's CPU time for placement and
#    mapping (map_cpu_ms, from the library's report) is what remains of the extra on dedicated cores,
#    besides three small collectives and the communicator split.
# 2. Tracer overhead on a message-rate loop (2 ranks, 8-byte MPI_Isend/Irecv in windows of 64):
#    library preloaded without and with RANKMAP_TRACE, and with RANKMAP_LEARN=1 (on MPI_COMM_WORLD and
#    on a Cartesian communicator). The wrapper's cost per MPI_Isend is measured inside each run (windows
#    of MPI_Isend alternate with windows of PMPI_Isend), median over PMPI_BENCH_ROUNDS rounds of
#    alternated runs; a mode's cost over the same with nothing on, relative to the loop's cost per
#    message, is checked against the targets. The older figure across runs (fastest window of each mode,
#    minimum over the rounds) is printed beside it. That older figure also moves with MPICH's own state:
#    on this loop MPICH's PMPI_Isend is 1.5-2.5 ns faster or slower depending on how many messages the
#    two processes exchanged before it. With the library preloaded and nothing on, one or two extra
#    MPI_Allreduce (2 ints, on MPI_COMM_WORLD or on the Cartesian communicator), MPI_Barrier or
#    MPI_Sendrecv in the program after MPI_Cart_create make it slower, three make it fast again, and an
#    MPI_Comm_dup does not count. Learning used to add one such MPI_Allreduce at the topology call
#    (rmp_learn_track; a program making two of its own then ran faster with learning than without); now
#    whether every rank can record the call rides on the call's own agreement (rmp_agree), and only the
#    private MPI_Comm_dup remains. MPICH, Cartesian, same session (2026-11-24): across runs +6.7, +6.9 %
#    before, +4.0, +4.3 % after (2 bench runs each, 20 rounds, alternated; learn, world, which has no
#    topology call, in the same four runs: +2.0..4.0 %). In 40 further alternated runs of each, the
#    fastest windows' median: PMPI_Isend 25.6 ns without learning, 27.9 with learning before, 25.3
#    after; MPI_Isend 26.4, 29.3 before, 26.5 after. The within-run figure did not move (+1.3..2.5 %):
#    what remains across runs is the wrapper's own cost seen through the fastest windows, as on
#    MPI_COMM_WORLD, and the minimum's noise. Open MPI shows no such effect (PMPI_Isend 34.5 ns, 34.7
#    with one extra MPI_Allreduce; learn, cart across runs +1.5, 0.0 % before, +1.3, -0.9 % after).
# 3. Cost of the engine guard (RANKMAP_GUARD=fork, the default: the root maps in a child process with
#    limits, plugin/mpi/pmpi_env.c) beside the same calls unguarded (RANKMAP_GUARD=off), MPI_Cart_create
#    and MPI_Dist_graph_create_adjacent (reorder=1, the same grid), 16 and 64 ranks, Open MPI and MPICH,
#    median of ITERS calls, alternated runs; guard_ms = guarded - unguarded.
# 4. Cost of a call that ends without reordering, beside the plain call (reorder=0, straight
#    through), at 2 ranks bound to the 2 cores and at 4, 16 and 64 ranks (oversubscribed): a cause
#    already known (every virtual host has 1 PU and several ranks: the placement
#    fails once, and the communicator remembers it), every rank on one host and unbound (this machine's
#    real placement: one allreduce, then remembered), a previous identical call (RANKMAP_ALGO=identity on
#    virtual hosts: the first call maps and keeps the current order, the next ones reuse it). The first
#    call of each run is cartbench's warm-up; the median is over the calls after it. One rank: the plain
#    call (nothing can move, no communication at all).
# 5. The first topology call through rankmapd (RANKMAP_SOCKET) in the real placement: 8 ranks named after
#    4 hosts of the daemon's model (SLURMD_NODENAME set per rank by a wrapper: 2 ranks a host), unbound,
#    MPI_Cart_create(reorder=1): the first call's time (slowest rank), the median of the calls after it,
#    and the memory the ranks hold afterwards (heap in use, resident set; largest rank). With
#    PMPI_BENCH_OTHER=DIR (another build directory, e.g. a copy of the build before a change) the same
#    runs with DIR's library alternate with this build's in one session: compare the two there.
# Env: B (build dir), PMPI_BENCH_ITERS (default 10), PMPI_BENCH_NPS (default "8 16 32 64"),
#      PMPI_BENCH_MPIS (part 4, default "openmpi mpich"),
#      PMPI_BENCH_GUARD_NPS (default "16 64"), PMPI_BENCH_ROUNDS (part 2, default 12);
#      PMPI_BENCH_NOREORDER_NPS (part 4, default "2 4 16 64"),
#      PMPI_BENCH_PARTS: "cart guard trace noreorder daemon" (the default: all five), "trace" runs only
#      part 2; PMPI_BENCH_OTHER (part 5), PMPI_BENCH_DAEMON_ROUNDS (part 5, default 5).
# Exit status 1 when a run failed or a learning target of part 2 is not met.
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top" || exit 1
B=${B:-build}
BIN=$top/$B
ITERS=${PMPI_BENCH_ITERS:-10}
NPS=${PMPI_BENCH_NPS:-8 16 32 64}
T=$(mktemp -d "${TMPDIR:-/tmp}/rankmap-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
unset RANKMAP_DISABLE RANKMAP_ALGO RANKMAP_PATTERN RANKMAP_CLUSTER RANKMAP_SOCKET RANKMAP_TRACE RANKMAP_VERBOSE \
	RANKMAP_GUARD RANKMAP_GUARD_CPU RANKMAP_GUARD_MEM RANKMAP_LEARN RANKMAP_LEARN_DIR
GUARD_NPS=${PMPI_BENCH_GUARD_NPS:-16 64}

run() { # MPI NP PROG ARGS...   ($BIND: binding options for the launcher)
	m=$1; np=$2; p=$3; shift 3
	lib=$BIN/librankmap_mpi_$m.so
	case $m in
	openmpi) timeout -k 5 600 mpirun.openmpi $BIND --oversubscribe --allow-run-as-root -np "$np" -x LD_PRELOAD="$lib" \
			"$BIN/tests/bench/pmpi/$m/$p" "$@" ;;
	mpich) timeout -k 5 600 mpirun.mpich $BIND -np "$np" -genv LD_PRELOAD "$lib" "$BIN/tests/bench/pmpi/$m/$p" "$@" ;;
	esac
}
val() { tr ' ' '\n' | sed -n "s/^$1=\(-\{0,1\}[0-9.]*\)$/\1/p" | tail -n 1; } # KEY=number on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "nan" }'; }

for m in openmpi mpich; do
	if [ ! -x "$BIN/tests/bench/pmpi/$m/cart_bench" ] || [ ! -f "$BIN/librankmap_mpi_$m.so" ]; then
		echo "pmpi bench: $m programs not built (make B=$B all test-progs)"; exit 1
	fi
done

PARTS=${PMPI_BENCH_PARTS:-cart guard trace noreorder daemon}
ROUNDS=${PMPI_BENCH_ROUNDS:-12}
rc=0
case $PARTS in *cart*)
echo "MPI_Cart_create, extra time of reorder=1 over the plain call (median of $ITERS calls, slowest rank)"
printf '%-8s %5s %10s %12s %10s %13s   %s\n' MPI ranks plain_ms reorder_ms extra_ms root_cpu_ms "baseline"
for m in openmpi mpich; do
	for np in $NPS; do
		hosts=$(( (np + 7) / 8 ))
		plain=$(run "$m" "$np" cart_bench 0 "$ITERS" 2>/dev/null | val median_ms)
		rm -f "$T/report"
		re=$(RANKMAP_FAKE_HOSTS=$hosts RANKMAP_FAKE_NODE='pack:2 core:4' RANKMAP_FAKE_PLACEMENT=cyclic \
			RANKMAP_REPORT=$T/report run "$m" "$np" cart_bench 1 "$ITERS" 2>/dev/null | val median_ms)
		cpu=$(sed -n 's/.*map_cpu_ms=\([0-9.]*\).*/\1/p' "$T/report" | median)
		extra=$(awk -v a="$re" -v b="$plain" 'BEGIN { if (a == "" || b == "") print "nan"; else printf "%.2f", a - b }')
		case $np in
		32) base="seed: 9 ms (Rashti et al., network-aware, 32 ranks)" ;;
		64) base="target < 5 ms; seed: 140 ms (Mercier-Jeannot, 64 ranks)" ;;
		*) base="" ;;
		esac
		printf '%-8s %5s %10s %12s %10s %13s   %s\n' "$m" "$np" "${plain:-nan}" "${re:-nan}" "$extra" "${cpu:-nan}" "$base"
		[ -n "$re" ] || rc=1
	done
done
echo "(64 ranks on 2 cores: wall-clock figures are dominated by oversubscription; root_cpu_ms is the"
echo " placement + mapping work the root adds, RANKMAP_TIME_BUDGET_MS bounds the 'auto' engine)"
;; esac

case $PARTS in *guard*)
echo
echo "Engine guard (RANKMAP_GUARD=fork, the default) beside the same call unguarded (RANKMAP_GUARD=off):"
echo "reorder=1, cyclic placement on virtual hosts; median of $ITERS calls, slowest rank; min over 3 runs each"
printf '%-8s %-10s %5s %10s %10s %9s\n' MPI call ranks off_ms fork_ms guard_ms
for m in openmpi mpich; do
	for call in cart dist; do
		for np in $GUARD_NPS; do
			hosts=$(( (np + 7) / 8 )); off=""; on=""
			for i in 1 2 3; do
				for g in off fork; do
					v=$(RANKMAP_GUARD=$g RANKMAP_FAKE_HOSTS=$hosts RANKMAP_FAKE_NODE='pack:2 core:4' \
						RANKMAP_FAKE_PLACEMENT=cyclic run "$m" "$np" cart_bench 1 "$ITERS" "$call" 2>/dev/null |
						val median_ms)
					[ "$g" = off ] && off="$off $v" || on="$on $v"
				done
			done
			boff=$(echo $off | tr ' ' '\n' | sort -n | head -n 1)
			bon=$(echo $on | tr ' ' '\n' | sort -n | head -n 1)
			d=$(awk -v a="$bon" -v b="$boff" 'BEGIN { if (a == "" || b == "") print "nan"; else printf "%+.2f", a - b }')
			printf '%-8s %-10s %5s %10s %10s %9s\n' "$m" "$call" "$np" "${boff:-nan}" "${bon:-nan}" "$d"
			[ -n "$bon" ] || rc=1
		done
	done
done
echo "(guard_ms: fork of the root rank, pipe, wait; the child's CPU time is counted in root_cpu_ms above)"
;; esac

case $PARTS in *trace*)
echo
echo "Tracer overhead, message-rate loop (2 ranks bound to the 2 cores, 8-byte MPI_Isend/Irecv, windows of"
echo "64 sends). The sender alternates windows of MPI_Isend (through the preloaded library) and of PMPI_Isend"
echo "(straight into MPI), so the wrapper's own cost is measured inside each run, under the same load:"
echo "wrap_ns = median over adjacent window pairs of the difference per call, then the median over $ROUNDS"
echo "rounds of alternated runs; off_wrap: the same with the library preloaded and nothing on. msg_ns: the"
echo "loop's cost per message from its fastest windows (the slower side, sends or receives and their wait;"
echo "robust to load, and below the loop's average, so the percentages err high), minimum over the runs with"
echo "nothing on. overhead = (wrap_ns - off_wrap) / msg_ns, the mode's cost over the library with nothing on:"
echo "the figure checked against the target; all = wrap_ns / msg_ns, everything the library adds to a send."
echo "across runs: the older figure, extra MPI_Isend time (fastest window) over separate runs with nothing"
echo "on, relative to msg_ns, minimum of each mode over the rounds; it also moves with the MPI library's own"
echo "cost in each run (MPICH's PMPI_Isend is 1.5-2.5 ns faster or slower depending on how many messages"
echo "were exchanged before the loop: one extra MPI_Allreduce in the program, without learning, makes it"
echo "slower, three do not; at the topology call learning adds only its private MPI_Comm_dup, which does"
echo "not count) and with the load of this shared machine. Rows: RANKMAP_TRACE (the full tracer, per-peer"
echo "hash table) on MPI_COMM_WORLD; RANKMAP_LEARN=1 on MPI_COMM_WORLD, and on a 1-D periodic"
echo "MPI_Cart_create(reorder=1) communicator."
printf '%-8s %-13s %8s %8s %7s %9s %7s %-8s %12s   %s\n' MPI mode off_wrap wrap_ns msg_ns overhead all verdict \
	"across runs" "target; measured before"
L=$T/learn; mkdir -m 700 "$L"
for m in openmpi mpich; do
	case $m in openmpi) bind="--bind-to core" ;; mpich) bind="-bind-to core" ;; esac
	: >"$T/v"
	i=0
	while [ $i -lt "$ROUNDS" ]; do # one round: the five modes back to back, the order turning each round
		set -- off_w trace_w learn_w off_c learn_c
		k=0
		while [ $k -lt $((i % 5)) ]; do first=$1; shift; set -- "$@" "$first"; k=$((k + 1)); done
		for mode in "$@"; do
			case $mode in
			off_w) BIND=$bind run "$m" 2 msgrate 200000 5 ;;
			trace_w) BIND=$bind RANKMAP_TRACE=$T/trace.mtx run "$m" 2 msgrate 200000 5 ;;
			learn_w) BIND=$bind RANKMAP_LEARN=1 RANKMAP_LEARN_DIR=$L run "$m" 2 msgrate 200000 5 ;;
			off_c) BIND=$bind run "$m" 2 msgrate 200000 5 cart ;;
			learn_c) BIND=$bind RANKMAP_LEARN=1 RANKMAP_LEARN_DIR=$L run "$m" 2 msgrate 200000 5 cart ;;
			esac >"$T/out" 2>/dev/null
			echo "$i $mode $(val isend_ns <"$T/out") $(val win_msg_ns <"$T/out") $(val wrap_ns <"$T/out")" >>"$T/v"
		done
		i=$((i + 1))
	done
	row() { # LABEL OFF WITH TARGET% BASELINE: exit 0 met, 1 not met, 2 failed runs
		awk -v m="$m" -v lab="$1" -v off="$2" -v on="$3" -v tgt="$4" -v base="$5" '
		NF < 5 { bad = 1 }
		$2 ~ /^off_/ { msg = (msg == "" || $4 < msg) ? $4 : msg } # the loop with nothing on, either communicator
		$2 == off { lo = (lo == "" || $3 < lo) ? $3 : lo; wo[++no] = $5 }
		$2 == on { lw = (lw == "" || $3 < lw) ? $3 : lw; wn[++nn] = $5 }
		function med(a, n, i, j, t) {
			for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		END {
			mns = msg
			if (bad || !no || !nn || mns <= 0) {
				printf "%-8s %-13s %8s %8s %7s %9s %7s %-8s %12s   %s\n", m, lab, "nan", "nan", "nan", "nan", "nan", "FAILED", "", base
				exit 2
			}
			w = med(wn, nn); wo0 = med(wo, no); ovh = 100 * (w - wo0) / mns
			printf "%-8s %-13s %8.2f %8.2f %7.1f %+8.1f%% %+6.1f%% %-8s %+11.1f%%   < %s %%; %s\n", m, lab, wo0, w, mns, ovh,
				100 * w / mns, (ovh < tgt ? "met" : "NOT MET"), 100 * (lw - lo) / mns, tgt, base
			exit (ovh < tgt ? 0 : 1)
		}' "$T/v"
	}
	case $m in
	openmpi) bt="+7.9 %"; bw="+1.1 %"; bc="+2.1..3.1 %" ;;
	mpich) bt="+12.8 %"; bw="+2.8..3.1 %"; bc="+3.1..4.0 %" ;;
	esac
	row "trace, world" off_w trace_w 5 "first tracer $bt"
	[ $? -ne 2 ] || rc=1 # the full tracer (RANKMAP_TRACE, opt-in per run) is shown, not required here
	row "learn, world" off_w learn_w 3 "before: $bw across runs" || rc=1
	row "learn, cart" off_c learn_c 3 "before: $bc across runs" || rc=1
	[ -s "$T/trace.mtx" ] || { echo "  (no trace written by $m)"; rc=1; }
	[ -n "$(ls "$L"/*.pattern 2>/dev/null)" ] || { echo "  (no pattern learned by $m)"; rc=1; }
	rm -f "$T/trace.mtx" "$L"/*.pattern
done
;; esac

case $PARTS in *noreorder*)
echo
echo "Calls that end without reordering, reorder=1, beside the plain call (reorder=0); median of $ITERS calls"
echo "after a first one, slowest rank, ms"
printf '%-8s %-5s %5s %9s %9s %9s %9s %9s\n' MPI call ranks plain off known one_host identical
for m in ${PMPI_BENCH_MPIS:-openmpi mpich}; do
	for np in ${PMPI_BENCH_NOREORDER_NPS:-2 4 16 64}; do
		BIND= # 2 ranks: bound to the 2 cores, not oversubscribed (the 'known' case: a virtual host of 1 PU)
		[ "$np" = 2 ] && case $m in openmpi) BIND="--bind-to core" ;; mpich) BIND="-bind-to core" ;; esac
		for call in cart dist; do
			plain=$(run "$m" "$np" cart_bench 0 "$ITERS" "$call" 2>/dev/null | val median_ms)
			off=$(RANKMAP_DISABLE=1 run "$m" "$np" cart_bench 1 "$ITERS" "$call" 2>/dev/null | val median_ms)
			known=$(RANKMAP_FAKE_HOSTS=$((np / 4 + 1)) RANKMAP_FAKE_NODE=core:1 run "$m" "$np" cart_bench 1 "$ITERS" "$call" \
				2>/dev/null | val median_ms)
			one=$(run "$m" "$np" cart_bench 1 "$ITERS" "$call" 2>/dev/null | val median_ms)
			same=nan
			[ "$call" = cart ] && same=$(RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE=core:32 RANKMAP_ALGO=identity \
				run "$m" "$np" cart_bench 1 "$ITERS" "$call" 2>/dev/null | val median_ms)
			printf '%-8s %-5s %5s %9s %9s %9s %9s %9s\n' "$m" "$call" "$np" "${plain:-nan}" "${off:-nan}" \
				"${known:-nan}" "${one:-nan}" "${same:-nan}"
			[ -n "$known" ] && [ -n "$one" ] || rc=1
		done
	done
done
echo "(plain: reorder=0, straight through; off: reorder=1 with RANKMAP_DISABLE=1, the MPI library's own"
echo " reorder=1 call, which a dist-graph call that rankmap does not reorder passes on (Open MPI's treematch"
echo " does its own work there). Dist graphs have no 'identical' column: their arguments differ from rank"
echo " to rank, so only causes that do not depend on them are remembered. More ranks than the 2 cores:"
echo " every collective waits for the scheduler, figures vary by several ms from run to run. At 2 bound"
echo " ranks 'one_host' is no such case: bound ranks on one host can gain from an order, so a dist-graph"
echo " call there pays the whole path each time (placement, guarded engine), a Cartesian one only once)"
;; esac

case $PARTS in *daemon*)
echo
echo "First MPI_Cart_create(reorder=1) through rankmapd, real placement: 8 unbound ranks on 4 hosts of the"
echo "daemon's model (2 a host); median over ${PMPI_BENCH_DAEMON_ROUNDS:-5} runs of each library, alternated"
printf '%-8s %-34s %9s %10s %12s %10s %8s\n' MPI library first_ms median_ms heap_kb_max heap_kb_root rss_kb_max
cat >"$T/d.conf" <<EOC
hwloc_dir = $top/tests/data/daemon/hwloc
ib_file = $top/tests/data/plafrim/ib/ib-subnet0.txt
EOC
"$BIN/rankmapd" --config "$T/d.conf" --socket "$T/d.sock" --state-dir "$T/dstate" --foreground >"$T/d.log" 2>&1 &
dpid=$!
n=0
until "$BIN/rankmapctl" ping --socket "$T/d.sock" --timeout 1000 >/dev/null 2>&1; do
	n=$((n + 1)); [ $n -lt 300 ] && kill -0 $dpid 2>/dev/null || { echo "rankmapd did not start"; rc=1; break; }
	sleep 0.1
done
cat >"$T/wrap" <<'EOW'
#!/bin/sh
# the rank's host name (2 ranks a host) and the library under test, then the program
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
set -- "$@"
i=0
for h in bonobo001 bonobo002 fourmi004 mirage001; do
	[ $i -eq $((r / 2)) ] && SLURMD_NODENAME=$h && export SLURMD_NODENAME
	i=$((i + 1))
done
LD_PRELOAD=$BENCH_LIB exec "$@"
EOW
chmod +x "$T/wrap"
drun() { # MPI LIB: one run, its figures on stdout
	case $1 in
	openmpi) BENCH_LIB=$2/librankmap_mpi_$1.so RANKMAP_SOCKET=$T/d.sock RANKMAP_REPORT=$T/dreport \
		timeout -k 5 600 mpirun.openmpi --oversubscribe --allow-run-as-root -np 8 -x BENCH_LIB -x RANKMAP_SOCKET \
		-x RANKMAP_REPORT "$T/wrap" "$BIN/tests/bench/pmpi/$1/cart_bench" 1 "$ITERS" ;;
	mpich) BENCH_LIB=$2/librankmap_mpi_$1.so RANKMAP_SOCKET=$T/d.sock RANKMAP_REPORT=$T/dreport \
		timeout -k 5 600 mpirun.mpich -np 8 "$T/wrap" "$BIN/tests/bench/pmpi/$1/cart_bench" 1 "$ITERS" ;;
	esac 2>"$T/derr"
}
for m in openmpi mpich; do
	: >"$T/dv"
	for i in $(seq "${PMPI_BENCH_DAEMON_ROUNDS:-5}"); do
		for lib in "$BIN" ${PMPI_BENCH_OTHER:+"$PMPI_BENCH_OTHER"}; do
			rm -f "$T/dreport"
			out=$(drun "$m" "$lib")
			if ! grep -q 'algo=\(rankmapd:\|current\)' "$T/dreport" 2>/dev/null || grep -q '^rankmap: .*continuing' "$T/derr"; then
				echo "  $m $lib: not mapped through rankmapd: $(head -c 300 "$T/derr")"; rc=1; continue
			fi
			echo "$lib $(echo "$out" | val first_ms) $(echo "$out" | val median_ms) $(echo "$out" | val heap_kb_max)" \
				"$(echo "$out" | val heap_kb_root) $(echo "$out" | val rss_kb_max)" >>"$T/dv"
		done
	done
	for lib in "$BIN" ${PMPI_BENCH_OTHER:+"$PMPI_BENCH_OTHER"}; do
		printf '%-8s %-34s' "$m" "$(echo "$lib" | tail -c 34)"
		for k in 2 3 4 5 6; do
			printf ' %10s' "$(awk -v l="$lib" -v k=$k '$1 == l { print $k }' "$T/dv" | median)"
		done
		echo
	done
done
kill $dpid 2>/dev/null; wait $dpid 2>/dev/null
;; esac

exit $rc
