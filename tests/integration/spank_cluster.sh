#!/bin/sh
# tests/integration/spank_cluster.sh: the SPANK plugin on a real local Slurm cluster.
#
# Starts munged (fresh key), rankmapd, slurmctld and four virtual nodes (slurmd -N n1..n4) under a
# temporary directory (tests/slurm/cluster.sh), then checks: the options in srun/sbatch/salloc --help;
# bad options refused at submission; node registration at slurmd start; Open MPI (--mpi=pmix) and
# MPICH (--mpi=pmi2) programs really reordered with correct neighbours; LD_PRELOAD kept and MPI detected
# one level down; --rankmap-bind binding as rankmapd's mapping says; learned patterns (--rankmap-learn,
# plugstack learn=on, --rankmap-learn=off) kept by the job's rankmapd; with rankmapd stopped, the same
# jobs run with one warning; --rankmap=required. Every daemon is stopped by PID; nothing is written to /etc.
#
# Open MPI runs use OMPI_MCA_btl=self,tcp: the virtual nodes share one host, and Open MPI's shared
# memory transport names its segments by host name, job and local rank, which collide across them.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/slurm/common.sh"

H=$TOP/tests/slurm
T=$(mktmp) || exit 1
chmod 755 "$T"
C=$T/cluster

rankmapd_on_exit() { sh "$H/cluster.sh" stop "$C" 2>/dev/null; }
rankmapd_cleanup "$T"

for c in munged mungekey slurmctld slurmd srun sbatch salloc mpicc.openmpi mpicc.mpich python3 cc; do
	command -v "$c" >/dev/null || { notok "required command $c is missing (make deps)"; finish; exit 1; }
done
for f in spank_rankmap.so librankmap_mpi_openmpi.so librankmap_mpi_mpich.so rankmapd; do
	[ -f "$BIN/$f" ] || { notok "$BIN/$f is not built"; finish; exit 1; }
done
# A SANITIZE=1 plugin needs the ASan runtime preloaded into slurmd, slurmstepd and srun, which would also
# show up in every task's LD_PRELOAD that this test checks exactly. The sanitized plugin is exercised on a
# real cluster by fault_spank.sh instead; here the run is skipped (a skip CI allows, tests/README.md).
if ldd "$BIN/spank_rankmap.so" 2>/dev/null | grep -q libasan; then
	skip "SANITIZE=1: the ASan-built plugin would need libasan in every task's LD_PRELOAD (fault_spank.sh runs it on a real cluster)"
	finish; exit 0
fi
etc_before=$(ls -la --time-style=+%s /etc/slurm /etc/munge 2>&1 | md5sum)

# ---- programs ------------------------------------------------------------------------------------
build_programs() {
	mpicc.openmpi -O2 -o "$T/cart_ompi" "$H/cart_check.c" &&
	mpicc.mpich -O2 -o "$T/cart_mpich" "$H/cart_check.c" || return 1
	# A program that reaches Open MPI only through a library of its own (one level down).
	mkdir -p "$T/lib"
	cat >"$T/wrap.c" <<'EOC'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int wrap_main(int argc, char **argv)
{
	int r;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	printf("task %d LD_PRELOAD=%s RANKMAP_ALGO=%s SLURMD_NODENAME=%s\n", r, getenv("LD_PRELOAD"),
	       getenv("RANKMAP_ALGO"), getenv("SLURMD_NODENAME"));
	MPI_Finalize();
	return 0;
}
EOC
	printf 'int wrap_main(int, char **);\nint main(int c, char **v) { return wrap_main(c, v); }\n' >"$T/app.c"
	printf 'int rankmap_test_noop;\n' >"$T/noop.c"
	mpicc.openmpi -shared -fPIC -o "$T/lib/libwrap.so" "$T/wrap.c" &&
	cc -o "$T/wrapped_app" "$T/app.c" -L"$T/lib" -lwrap -Wl,-rpath,'$ORIGIN/lib' &&
	cc -shared -fPIC -o "$T/libnoop.so" "$T/noop.c"
}
expect "test programs build (Open MPI, MPICH, one-level wrapper)" build_programs
# Every job's ranks outnumber the 2 real cores: Open MPI's waiting ranks yield the CPU instead of spinning
# (it cannot tell, each virtual node having 16 CPUs). MPICH yields by itself.
export OMPI_MCA_mpi_yield_when_idle=1

# ---- rankmapd and the cluster --------------------------------------------------------------------
mkdir -p "$T/rmstate"
printf 'state_dir = %s\nallow_register = yes\nlog_level = info\n' "$T/rmstate" >"$T/rankmapd.conf"
expect "rankmapd starts on a temporary socket" start_rankmapd "$T/rankmapd.conf" "$T/rankmapd.sock" "$T/rankmapd.log"

# Virtual nodes register the hardware slurm.conf gives them (test-only override, see spank_register.c).
export RANKMAP_FAKE_NODE='pack:2 core:8 pu:1'
if ! sh "$H/cluster.sh" start "$C" "$BIN/spank_rankmap.so" socket="$T/rankmapd.sock" libdir="$BIN" \
	timeout=3000 >"$T/cluster.out" 2>&1; then
	cat "$T/cluster.out"
	notok "local Slurm cluster starts"
	finish; exit 1
fi
unset RANKMAP_FAKE_NODE
ok "local Slurm cluster starts (munged, slurmctld, slurmd n1..n4)"
export SLURM_CONF="$C/slurm.conf"
cd "$T" || exit 1

# ---- options at submission -----------------------------------------------------------------------
help_lists() { # command
	out=$("$1" --help 2>&1)
	for o in --rankmap= --rankmap-matrix=FILE --rankmap-pattern=FILE --rankmap-metric=METRIC --rankmap-trace=FILE --rankmap-bind; do
		echo "$out" | grep -q -- "$o" || { echo "$1 --help lacks $o" >&2; return 1; }
	done
}
for cmd in srun sbatch salloc; do expect "$cmd --help lists the --rankmap options" help_lists $cmd; done

printf '%%%%MatrixMarket matrix coordinate real general\n8 8 3\n1 2 10\n2 3 5\n3 99 1\n' >"$T/bad.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n8 8 2\n1 2 10\n2 3 5\n' >"$T/good.mtx"
njobs() { scontrol show jobs 2>/dev/null | grep -c '^JobId='; }
refused() { # description-free: command... ; must fail, print the file and line, and create no job
	before=$(njobs)
	"$@" >"$T/refused.out" 2>&1 && { echo "accepted: $*" >&2; return 1; }
	grep -q 'bad.mtx:5' "$T/refused.out" || { cat "$T/refused.out" >&2; return 1; }
	[ "$(njobs)" = "$before" ]
}
expect "srun refuses a bad --rankmap-pattern at submission (file:line)" refused srun --rankmap-pattern="$T/bad.mtx" true
expect "sbatch refuses a bad --rankmap-pattern at submission" refused sbatch --rankmap-pattern="$T/bad.mtx" --wrap true
expect "salloc refuses a bad --rankmap-pattern at submission" refused salloc --rankmap-pattern="$T/bad.mtx" true
bad_metric() {
	srun --rankmap-metric=bandwidth true >"$T/m.out" 2>&1 && return 1
	grep -q "invalid value 'bandwidth'" "$T/m.out"
}
expect "a bad --rankmap-metric is refused with a clear message" bad_metric
expect "a good pattern is accepted" srun -N1 -n1 --rankmap-pattern="$T/good.mtx" true
expect "srun refuses a bad --rankmap-matrix (the current name of --rankmap-pattern) at submission" \
	refused srun --rankmap-matrix="$T/bad.mtx" true
expect "... the message names --rankmap-matrix, as typed" grep -q -- '--rankmap-matrix: .*bad.mtx:5' "$T/refused.out"
expect_fail "... and not the old name" grep -q -- '--rankmap-pattern' "$T/refused.out"
refused srun --rankmap-pattern="$T/bad.mtx" true
expect "the old name's message names --rankmap-pattern, as typed" grep -q -- '--rankmap-pattern: .*bad.mtx:5' "$T/refused.out"
empty_matrix() { # the option with no value: refused, naming it
	srun --rankmap-matrix= true >"$T/e.out" 2>&1 && return 1
	grep -q -- '--rankmap-matrix: needs a value' "$T/e.out" && ! grep -q -- '--rankmap-pattern' "$T/e.out"
}
expect "an empty --rankmap-matrix is refused, naming --rankmap-matrix" empty_matrix
expect "a good --rankmap-matrix is accepted" srun -N1 -n1 --rankmap-matrix="$T/good.mtx" true

# ---- registration --------------------------------------------------------------------------------
registered() {
	for n in n1 n2 n3 n4; do
		grep -q "registered $n's topology" "$C/log/slurmd.$n.log" || { echo "no registration in slurmd.$n.log" >&2; return 1; }
	done
	python3 "$H/rmcall.py" "$T/rankmapd.sock" '{"type":"hosts"}' >"$T/hosts.json" || return 1
	for n in n1 n2 n3 n4; do grep -q "\"$n\"" "$T/hosts.json" || { cat "$T/hosts.json" >&2; return 1; }; done
}
expect "each slurmd registered its node with rankmapd at start" registered

# ---- reordering ----------------------------------------------------------------------------------
# A 4x2 grid dealt cyclically over n1..n4 (2 ranks per node: without rankmapd the library sizes each
# node by the real host's hwloc, 2 PUs): the identity cuts all 10 grid edges between nodes, a good
# mapping keeps the 4 row pairs together (6 cut).
# field NAME FILE: value of NAME=... on the program's "cart:" line
field() { sed -n "s/^cart:.* $1=\([0-9]*\).*/\1/p" "$2" | head -n 1; }

# run_cart OUT SRUN_ARGS...: runs srun with the given arguments, output in $T/OUT.{out,err}.
# Open MPI 4.1's TCP transport (and 5.0's ob1, lib.sh) crashes inside MPI_Init in a few percent of runs on these virtual nodes
# (all on 127.0.0.1), with or without rankmap (backtrace: a NULL callback called from mca_btl_tcp.so's
# event handler under ompi_mpi_init; measured here: 0 of 60 runs, 5 of 60 with yield_when_idle); a run
# that dies that way before main's output is retried, up to four attempts, and says so.
# --kill-on-bad-exit ends the step as soon as one task dies, instead of its other ranks waiting in
# MPI_Init until the timeout.
run_cart() {
	o=$1; shift
	for attempt in 1 2 3 4; do
		idle
		OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo RANKMAP_VERBOSE=1 timeout 120 srun --kill-on-bad-exit=1 "$@" \
			>"$T/$o.out" 2>"$T/$o.err"
		rc=$?
		grep -q '^cart:' "$T/$o.out" || ! ompi_start_crash "$T/$o.err" && return $rc
		echo "# $o: attempt $attempt: MPI crashed in MPI_Init before main's output; retrying"
	done
	return $rc
}

# reordered OUT: the run exited 0, moved ranks, kept correct neighbours and cut fewer grid edges
# between nodes than the identity placement (counted by the program itself from node names).
reordered() {
	[ "$(field neighbours_ok "$T/$1.out")" = 1 ] || { cat "$T/$1.out" "$T/$1.err" >&2; return 1; }
	moved=$(field moved "$T/$1.out"); a=$(field offnode_identity "$T/$1.out"); b=$(field offnode_cart "$T/$1.out")
	[ -n "$moved" ] && [ "$moved" -gt 0 ] && [ "$b" -lt "$a" ] || { cat "$T/$1.out" "$T/$1.err" >&2; return 1; }
}
unreordered() {
	[ "$(field neighbours_ok "$T/$1.out")" = 1 ] && [ "$(field moved "$T/$1.out")" = 0 ]
}
# warnings OUT: number of lines starting "rankmap:" other than the verbose report
warnings() { grep '^rankmap:' "$T/$1.err" | grep -vc '^rankmap: report \|^rankmap: place '; }

run_cart ompi_plain --mpi=pmix -N4 --ntasks-per-node=2 -m cyclic "$T/cart_ompi" 4x2
expect "Open MPI control run without --rankmap is not reordered" unreordered ompi_plain
run_cart ompi --mpi=pmix -N4 --ntasks-per-node=2 -m cyclic --rankmap "$T/cart_ompi" 4x2
expect "Open MPI (srun --mpi=pmix, 8 ranks cyclic over n1..n4): reordered, correct neighbours" reordered ompi
expect "Open MPI run printed no warning" test "$(warnings ompi)" = 0

run_cart mpich_plain --mpi=pmi2 -N4 --ntasks-per-node=2 -m cyclic "$T/cart_mpich" 4x2
expect "MPICH control run without --rankmap is not reordered" unreordered mpich_plain
run_cart mpich --mpi=pmi2 -N4 --ntasks-per-node=2 -m cyclic --rankmap "$T/cart_mpich" 4x2
expect "MPICH (srun --mpi=pmi2, 8 ranks cyclic over n1..n4): reordered, correct neighbours" reordered mpich
expect "MPICH run printed no warning" test "$(warnings mpich)" = 0

# --rankmap-trace records the run's traffic; the recorded pattern is then accepted at submission and
# drives a reordered run (the library's tracer and RANKMAP_PATTERN, reached through the plugin).
traced() {
	run_cart traced --mpi=pmix -N4 --ntasks-per-node=2 -m cyclic --rankmap-trace="$T/trace.mtx" "$T/cart_ompi" 4x2 ||
		return 1
	head -n 1 "$T/trace.mtx" 2>/dev/null | grep -q '^%%MatrixMarket matrix coordinate' ||
		{ cat "$T/traced.err" >&2; return 1; }
}
expect "--rankmap-trace writes the run's pattern (Matrix Market)" traced
run_cart patterned --mpi=pmix -N4 --ntasks-per-node=2 -m cyclic --rankmap-pattern="$T/trace.mtx" --rankmap-metric=bytes \
	"$T/cart_ompi" 4x2
expect "--rankmap-pattern (the traced pattern) + --rankmap-metric=bytes: reordered, correct neighbours" reordered patterned
trace_dir_refused() { ! srun --rankmap-trace="$T/no/such/dir/t.mtx" true 2>"$T/tr.err" && grep -q "$T/no/such/dir" "$T/tr.err"; }
expect "a --rankmap-trace into a missing directory is refused at submission" trace_dir_refused

# srun_mpi OUTFILE SRUN_ARGS...: an Open MPI srun of wrapped_app (stdout and stderr in OUTFILE), with
# the same retry as run_cart when Open MPI crashes in MPI_Init before the program prints.
srun_mpi() {
	f=$1; shift
	for attempt in 1 2 3 4; do
		idle
		OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo timeout 120 srun --kill-on-bad-exit=1 "$@" >"$f" 2>&1
		rc=$?
		grep -q '^task ' "$f" || ! ompi_start_crash "$f" && return $rc
		echo "# $(basename "$f"): attempt $attempt: MPI crashed in MPI_Init before main's output; retrying"
	done
	return $rc
}

# ---- LD_PRELOAD, detection one level down, node name ---------------------------------------------
preload_kept() {
	LD_PRELOAD="$T/libnoop.so" srun_mpi "$T/wrapped.out" --mpi=pmix -N2 -n2 --rankmap "$T/wrapped_app" ||
		{ cat "$T/wrapped.out" >&2; return 1; }
	n0=$(sed -n "s|^task 0 LD_PRELOAD=$BIN/librankmap_mpi_openmpi.so:$T/libnoop.so RANKMAP_ALGO=auto SLURMD_NODENAME=\(n[1-4]\)\$|\1|p" \
		"$T/wrapped.out")
	n1=$(sed -n 's/^task 1 .*SLURMD_NODENAME=\(n[1-4]\)$/\1/p' "$T/wrapped.out")
	[ -n "$n0" ] && [ -n "$n1" ] && [ "$n0" != "$n1" ] || { cat "$T/wrapped.out" >&2; return 1; }
}
expect "Open MPI found one level down; library prepended, user's LD_PRELOAD kept; SLURMD_NODENAME set" preload_kept
no_mpi_untouched() {
	LD_PRELOAD="$T/libnoop.so" srun -N1 -n1 --rankmap /usr/bin/env >"$T/env.out" 2>&1; rc=$?
	[ $rc -eq 0 ] && grep -qx "LD_PRELOAD=$T/libnoop.so" "$T/env.out" && ! grep -q '^RANKMAP_' "$T/env.out" &&
		return 0
	echo "# srun exit $rc, $(wc -l <"$T/env.out") lines of output; not the environment:"
	grep -v -e '^[A-Za-z_][A-Za-z0-9_]*=' "$T/env.out" | head -n 5 | sed 's/^/# srun: /'
	grep -e '^LD_PRELOAD=' -e '^RANKMAP_' "$T/env.out" | sed 's/^/# task: /'
	return 1
}
expect "a program without MPI is left alone (LD_PRELOAD unchanged, no RANKMAP_*)" no_mpi_untouched
off_untouched() {
	srun_mpi "$T/off.out" --mpi=pmix -N1 -n1 --rankmap=off "$T/wrapped_app" || return 1
	grep -q '^task 0 LD_PRELOAD=(null)' "$T/off.out"
}
expect "--rankmap=off preloads nothing" off_untouched

# sbatch: options given to sbatch reach the steps srun starts inside the batch script.
sbatch_options() {
	idle
	id=$(sbatch --parsable -N2 -o "$T/sbatch.out" --rankmap=scotch --rankmap-metric=bytes --wrap \
		"OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo srun --mpi=pmix -n2 $T/wrapped_app") || return 1
	i=0
	while [ -n "$(squeue -h -j "$id" 2>/dev/null)" ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done
	grep -q "^task 0 LD_PRELOAD=$BIN/librankmap_mpi_openmpi.so RANKMAP_ALGO=scotch SLURMD_NODENAME=n[1-4]\$" \
		"$T/sbatch.out" || { cat "$T/sbatch.out" >&2; return 1; }
}
expect "sbatch --rankmap=scotch: the batch job's srun steps get the library and RANKMAP_ALGO=scotch" sbatch_options

# ---- --rankmap-bind ------------------------------------------------------------------------------
# Each task prints: node, local id, RANKMAP_BIND_CPUS, and the kernel's Cpus_allowed_list; task 0 also
# saves the job's per-node core allocation (scontrol show job -d).
cat >"$T/bindprobe.sh" <<'EOC'
#!/bin/sh
[ "$SLURM_PROCID" = 0 ] && scontrol show job -d "$SLURM_JOB_ID" >"$1"
echo "bind $SLURMD_NODENAME $SLURM_LOCALID ${RANKMAP_BIND_CPUS:-none} $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"
EOC
chmod 755 "$T/bindprobe.sh"

# bound_as_mapped OUT: each node's plan (the mapping rankmapd returned, logged by the plugin in the
# slurmd log) places the node's tasks on distinct cores of the allocation Slurm reported, and every task
# is bound (RANKMAP_BIND_CPUS and the kernel's Cpus_allowed_list) to its plan entry. rankmapd, asked
# again here by an independent client (tests/slurm/rmcall.py), maps the same tasks onto the same cores.
# (With 2 real CPUs, 2 tasks per node: every placement costs the same, so ties may break either way.)
bound_as_mapped() {
	python3 - "$T/$1.out" "$T/$1.alloc" "$T/rankmapd.sock" "$H" "$C/log" <<'EOP'
import re, subprocess, sys
out, alloc, sock, h, logdir = sys.argv[1:6]
tasks = {}
for line in open(out):
    f = line.split()
    if f and f[0] == "bind":
        tasks.setdefault(f[1], {})[int(f[2])] = (f[3], f[4])
text = open(alloc).read()
job = re.search(r"JobId=(\d+)", text).group(1)
cores = {}
for nodes, ids in re.findall(r"Nodes=(\S+) CPU_IDs=(\S+)", text):
    m = re.match(r"^(\w+?)\[(\d+)-(\d+)\]$", nodes)
    names = [m.group(1) + str(i) for i in range(int(m.group(2)), int(m.group(3)) + 1)] if m else nodes.split(",")
    for n in names:
        cores[n] = ids
if set(tasks) != {"n1", "n2", "n3", "n4"} or set(cores) != set(tasks):
    sys.exit("tasks on %s, allocation on %s" % (sorted(tasks), sorted(cores)))
expand = lambda l: sorted(int(x) for part in l.split(",") for x in
                          range(int(part.split("-")[0]), int(part.split("-")[-1]) + 1))
for node, t in sorted(tasks.items()):
    log = open("%s/slurmd.%s.log" % (logdir, node)).read()
    m = re.search(r"\[%s\.0\] rankmap: binding plan on %s \(cores ([0-9,-]+)\): (\S+)" % (job, node), log)
    if not m:
        sys.exit("%s: no binding plan logged for job %s" % (node, job))
    plan = m.group(2).split(";")
    if expand(m.group(1)) != expand(cores[node]) or len(plan) != len(t) or len(set(plan)) != len(plan) or \
       not set(int(p) for p in plan) <= set(expand(cores[node])):
        sys.exit("%s: plan %s is not a placement on cores %s" % (node, plan, cores[node]))
    for lid, (env, allowed) in sorted(t.items()):
        if env != plan[lid] or allowed != plan[lid]:
            sys.exit("%s task %d: RANKMAP_BIND_CPUS=%s Cpus_allowed_list=%s, plan says %s" % (node, lid, env, allowed, plan[lid]))
    want = subprocess.run([sys.executable, h + "/rmcall.py", sock, "--bind-expect", node, cores[node], str(len(t))],
                          capture_output=True, text=True, check=True).stdout.split()
    if sorted(want) != sorted(plan):
        sys.exit("%s: rankmapd maps the tasks onto %s, the plan uses %s" % (node, want, plan))
EOP
}
# The host has one PU per core (core c = CPU c), which rmcall.py --bind-expect assumes.
one_pu_per_core() {
	for f in /sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list; do
		c=${f#/sys/devices/system/cpu/cpu}; c=${c%%/*}
		[ "$(cat "$f")" = "$c" ] || return 1
	done
}
if one_pu_per_core; then
	srun -N4 --ntasks-per-node=2 -m block:block --rankmap-bind "$T/bindprobe.sh" "$T/bind.alloc" >"$T/bind.out" 2>"$T/bind.err"
	expect "--rankmap-bind: each task bound (Cpus_allowed_list) to its core in rankmapd's mapping" bound_as_mapped bind
	expect "--rankmap-bind printed no warning" test "$(grep -c '^rankmap:' "$T/bind.err")" = 0
	# With a pattern the plan is built from the pattern's edges among each node's tasks.
	srun -N4 --ntasks-per-node=2 -m block:block --rankmap-bind --rankmap-pattern="$T/good.mtx" "$T/bindprobe.sh" \
		"$T/bindpat.alloc" >"$T/bindpat.out" 2>"$T/bindpat.err"
	bound_distinct() {
		[ "$(grep -c '^rankmap:' "$T/bindpat.err")" = 0 ] || { cat "$T/bindpat.err" >&2; return 1; }
		awk '$1 == "bind" { if ($4 != $5 || $4 !~ /^[0-9]+$/ || seen[$2 " " $4]++) bad = 1; n++ }
		     END { exit !(n == 8 && !bad) }' "$T/bindpat.out" || { cat "$T/bindpat.out" >&2; return 1; }
	}
	expect "--rankmap-bind with --rankmap-pattern: tasks bound to distinct single CPUs, no warning" bound_distinct
else
	notok "--rankmap-bind check needs a host with one PU per core"
fi

# ---- --rankmap=required --------------------------------------------------------------------------
required_fails() {
	srun -N1 -n2 --rankmap=required /bin/true >"$T/req.out" 2>&1 && return 1
	grep -q '^rankmap: error: /bin/true: not linked with Open MPI or MPICH' "$T/req.out"
}
expect "--rankmap=required fails a step it cannot apply to, with a message" required_fails
expect "--rankmap (not required) runs the same step" srun -N1 -n2 --rankmap /bin/true

# ---- plugstack.conf changes (read again by every srun and slurmstepd) ------------------------------
cp "$C/plugstack.conf" "$T/plugstack.orig"
# The MPI libraries missing on the nodes (libdir pointing to an empty directory).
mkdir -p "$T/emptylib"
sed "s|libdir=[^ ]*|libdir=$T/emptylib|" "$T/plugstack.orig" >"$C/plugstack.conf"
run_cart nolib --mpi=pmix -N4 --ntasks-per-node=2 -m cyclic --rankmap "$T/cart_ompi" 4x2
nolib_ok() {
	unreordered nolib && test "$(warnings nolib)" = 1 &&
		grep -q "^rankmap: warning: $T/emptylib/librankmap_mpi_openmpi.so: No such file" "$T/nolib.err" ||
		{ cat "$T/nolib.out" "$T/nolib.err" >&2; return 1; }
}
expect "library missing: the job runs unreordered with one warning naming the library" nolib_ok
nolib_required() {
	OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo srun --mpi=pmix -N2 -n2 --rankmap=required "$T/cart_ompi" 2x1 \
		>"$T/nolibreq.out" 2>&1 && return 1
	grep -q '^rankmap: error: .*librankmap_mpi_openmpi.so' "$T/nolibreq.out"
}
expect "library missing with --rankmap=required: the step fails with a message" nolib_required
# An unknown plugstack.conf argument: said once at submission; the plugin stays out of the way.
sed 's|$| colour=blue|' "$T/plugstack.orig" >"$C/plugstack.conf"
badconf() {
	srun_mpi "$T/badconf.out" --mpi=pmix -N2 -n2 --rankmap "$T/wrapped_app" || { cat "$T/badconf.out" >&2; return 1; }
	[ "$(grep -c "unknown plugstack.conf argument 'colour'" "$T/badconf.out")" = 1 ] &&
		grep -q '^task 0 LD_PRELOAD=(null)' "$T/badconf.out" || { cat "$T/badconf.out" >&2; return 1; }
}
expect "a bad plugstack.conf argument: one error at submission, jobs run without rankmap" badconf
# default=on bind=on: rankmap and binding without options; --rankmap=off still opts out.
sed 's|$| default=on bind=on|' "$T/plugstack.orig" >"$C/plugstack.conf"
defaults_on() {
	srun_mpi "$T/defon.out" --mpi=pmix -N2 -n2 "$T/wrapped_app" &&
		grep -q "^task 0 LD_PRELOAD=$BIN/librankmap_mpi_openmpi.so RANKMAP_ALGO=auto" "$T/defon.out" ||
		{ cat "$T/defon.out" >&2; return 1; }
	srun -N1 -n1 -m block:block "$T/bindprobe.sh" "$T/defon.alloc" >"$T/defon.bind" 2>&1 &&
		grep -Eq '^bind n[1-4] 0 ([0-9]+) \1$' "$T/defon.bind" || { cat "$T/defon.bind" >&2; return 1; }
	srun_mpi "$T/defoff.out" --mpi=pmix -N2 -n2 --rankmap=off "$T/wrapped_app" && grep -q '^task 0 LD_PRELOAD=(null)' "$T/defoff.out" || { cat "$T/defoff.out" >&2; return 1; }
}
expect "plugstack default=on bind=on: preloaded and bound without options; --rankmap=off opts out" defaults_on
cp "$T/plugstack.orig" "$C/plugstack.conf"

# ---- learned patterns: --rankmap-learn, plugstack learn=on, --rankmap-learn=off ------------
# The plugin gives the tasks RANKMAP_LEARN=1 and the job's rankmapd (RANKMAP_SOCKET): the library records
# what the run sent at MPI_Finalize and the daemon keeps it (state_dir/patterns/UID, per user: here root);
# the next run's report names the pattern it used (learned=ID/runs=N). RANKMAP_LEARN_DIR (the per-user
# directory, used only without a daemon) must stay unused.
export RANKMAP_LEARN_DIR="$T/learndir"
# learned OUT: the learned=... field of the run's report line ("" when the report has none)
learned() { sed -n 's/^rankmap: report .* learned=\([^ ]*\).*/\1/p' "$T/$1.err" | head -n 1; }
# stored: "ID RUNS" of each pattern rankmapd keeps for cart_mpich's MPI_Cart_create (uid 0)
stored() {
	"$BIN/rankmapctl" patterns list --socket "$T/rankmapd.sock" >"$T/patterns.list" 2>&1 || { cat "$T/patterns.list" >&2; return 1; }
	awk -v prog="$T/cart_mpich" '$2 == 0 && $3 == "MPI_Cart_create" && $NF == prog { print $1, $5 }' "$T/patterns.list"
}
learn_run() { # OUT SRUN_OPTIONS...: an MPICH Cartesian run (4x2, cyclic over n1..n4) with the given options
	o=$1; shift
	run_cart "$o" --mpi=pmi2 -N4 --ntasks-per-node=2 -m cyclic "$@" "$T/cart_mpich" 4x2
}
learn_first() {
	learn_run learn1 --rankmap-learn || { cat "$T/learn1.err" >&2; return 1; }
	reordered learn1 && [ "$(warnings learn1)" = 0 ] && [ "$(learned learn1)" = none ] ||
		{ cat "$T/learn1.err" >&2; return 1; }
}
expect "srun --rankmap-learn (MPICH): reordered, no warning, no learned pattern yet (learned=none)" learn_first
learn_stored() {
	st=$(stored) || return 1
	[ "$(echo "$st" | grep -c .)" = 1 ] && [ "${st#* }" = 1 ] || { echo "stored: '$st'" >&2; cat "$T/patterns.list" >&2; return 1; }
	LID=${st%% *}
	[ -f "$T/rmstate/patterns/0/$LID.pattern" ] || { find "$T/rmstate" >&2; return 1; }
	[ ! -e "$RANKMAP_LEARN_DIR" ] || { echo "$RANKMAP_LEARN_DIR was written" >&2; return 1; }
}
LID=none
expect "  the job's rankmapd stored its pattern (patterns list: one MPI_Cart_create of cart_mpich, uid 0, 1 run)" learn_stored
learn_second() {
	learn_run learn2 --rankmap-learn || { cat "$T/learn2.err" >&2; return 1; }
	reordered learn2 && [ "$(warnings learn2)" = 0 ] && [ "$(learned learn2)" = "$LID/runs=1" ] &&
		[ "$(stored)" = "$LID 2" ] || { echo "learned=$(learned learn2), stored: $(stored)" >&2; cat "$T/learn2.err" >&2; return 1; }
}
expect "a second srun --rankmap-learn uses it (report: learned=$LID/runs=1) and merges its run (2 runs)" learn_second
sed 's|$| learn=on|' "$T/plugstack.orig" >"$C/plugstack.conf"
learn_site() {
	learn_run learn3 || { cat "$T/learn3.err" >&2; return 1; }
	reordered learn3 && [ "$(learned learn3)" = "$LID/runs=2" ] && [ "$(stored)" = "$LID 3" ] ||
		{ echo "learned=$(learned learn3), stored: $(stored)" >&2; cat "$T/learn3.err" >&2; return 1; }
}
expect "plugstack learn=on, no option: the job uses and records the pattern (learned=$LID/runs=2, 3 runs)" learn_site
learn_off() {
	learn_run learn4 --rankmap --rankmap-learn=off || { cat "$T/learn4.err" >&2; return 1; }
	reordered learn4 && grep -q '^rankmap: report ' "$T/learn4.err" && [ -z "$(learned learn4)" ] &&
		[ "$(warnings learn4)" = 0 ] && [ "$(stored)" = "$LID 3" ] ||
		{ echo "learned=$(learned learn4), stored: $(stored)" >&2; cat "$T/learn4.err" >&2; return 1; }
}
expect "plugstack learn=on, --rankmap --rankmap-learn=off: reordered without learning, nothing recorded (still 3 runs)" learn_off
cp "$T/plugstack.orig" "$C/plugstack.conf"
unset RANKMAP_LEARN_DIR

# ---- rankmapd stopped ----------------------------------------------------------------------------
expect "rankmapd stopped (by PID)" term_rankmapd
one_warning() { test "$(warnings "$1")" = 1 || { cat "$T/$1.err" >&2; return 1; }; }
run_cart ompi_down --mpi=pmix -N4 --ntasks-per-node=2 -m cyclic --rankmap "$T/cart_ompi" 4x2
expect "rankmapd down: Open MPI job runs, reordered on the local model" reordered ompi_down
expect "rankmapd down: Open MPI job printed exactly one warning" one_warning ompi_down
run_cart mpich_down --mpi=pmi2 -N4 --ntasks-per-node=2 -m cyclic --rankmap "$T/cart_mpich" 4x2
expect "rankmapd down: MPICH job runs, reordered on the local model" reordered mpich_down
expect "rankmapd down: MPICH job printed exactly one warning" one_warning mpich_down
run_cart ompi_down_bind --mpi=pmix -N4 --ntasks-per-node=2 -m cyclic --rankmap-bind "$T/cart_ompi" 4x2
expect "rankmapd down, --rankmap-bind: job runs, reordered" reordered ompi_down_bind
expect "rankmapd down, --rankmap-bind: exactly one warning" one_warning ompi_down_bind
unbound() {
	srun -N4 --ntasks-per-node=2 -m block:block --rankmap-bind "$T/bindprobe.sh" "$T/unbound.alloc" >"$T/unbound.out" 2>"$T/unbound.err" || return 1
	all=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
	[ "$(grep -c "^bind n[1-4] [01] none $all\$" "$T/unbound.out")" = 8 ] && [ "$(grep -c '^rankmap:' "$T/unbound.err")" = 1 ] ||
		{ cat "$T/unbound.out" "$T/unbound.err" >&2; return 1; }
}
expect "rankmapd down, --rankmap-bind: tasks left unbound, one warning" unbound

# ---- clean up ------------------------------------------------------------------------------------
cd "$TOP" || exit 1
sh "$H/cluster.sh" stop "$C"
left=$( (pgrep -f "$T"; sh "$H/cluster.sh" stepds "$C") 2>/dev/null | wc -l)
expect "every daemon stopped (none left running from $T)" test "$left" = 0
expect "nothing written to /etc/slurm or /etc/munge" test "$(ls -la --time-style=+%s /etc/slurm /etc/munge 2>&1 | md5sum)" = "$etc_before"
finish
