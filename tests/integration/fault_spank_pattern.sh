#!/bin/sh
# A user's --rankmap-pattern must never wedge slurmstepd, on a real local Slurm
# cluster (tests/slurm/cluster.sh) with a real rankmapd:
#   - chdir: q.mtx is a regular file in srun's directory A and a FIFO in B, and the step runs with
#     --chdir=B. Submission and step both use A/q.mtx (relative patterns are taken from the submission
#     directory, SLURM_SUBMIT_DIR): the step completes, bound by the pattern, no warning; the tasks get
#     the absolute A/q.mtx.
#   - swapped for a FIFO, for a symlink to /dev/zero, or made unreadable to the job's user (nobody)
#     after the submission check, while the job waits for nodes: the step completes within a bound with
#     exactly one "rankmap:" warning naming the file, tasks unbound and the MPI library disabled; the
#     slurmstepd's peak RSS stays small. The three cases (a file each) wait behind one job that holds
#     every node, and then run at once, each on a node of its own.
# After every case its node is idle again (no `completing`) and no slurmstepd of its job is left.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/faults/lib.sh"
. "$TOP/tests/slurm/common.sh"

H=$TOP/tests/slurm
T=$(mktmp) || exit 1
chmod 755 "$T"
C=$T/cluster
BOUND=${FAULT_BOUND:-120}
HOLD=""

rankmapd_on_exit() {
	[ -n "$HOLD" ] && scancel "$HOLD" 2>/dev/null
	sh "$H/cluster.sh" stop "$C" 2>/dev/null
}
rankmapd_cleanup "$T"

for c in munged slurmctld slurmd srun sbatch scancel mpicc.mpich python3 setpriv; do
	command -v "$c" >/dev/null || { notok "required command $c is missing (make deps)"; finish; exit 1; }
done
for f in spank_rankmap.so librankmap_mpi_mpich.so rankmapd; do
	[ -f "$BIN/$f" ] || { notok "$BIN/$f is not built"; finish; exit 1; }
done
[ -z "$SAN" ] || echo "# sanitized build: Slurm daemons and srun run with: $SAN"

# An MPI program that prints what the plugin left in its environment (no topology call: the library
# itself reads no pattern here).
cat >"$T/envprobe.c" <<'EOC'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static const char *e(const char *n) { const char *v = getenv(n); return v && *v ? v : "-"; }
int main(int argc, char **argv)
{
	int r;
	char cwd[4096];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	printf("probe rank=%d pattern=%s disable=%s cpus=%s cwd=%s\n", r, e("RANKMAP_PATTERN"), e("RANKMAP_DISABLE"),
	       e("RANKMAP_BIND_CPUS"), cwd);
	fflush(stdout);
	if (argc > 1)
		sleep((unsigned)atoi(argv[1]));
	MPI_Finalize();
	return 0;
}
EOC
expect "test program builds (MPICH)" mpicc.mpich -O2 -o "$T/envprobe" "$T/envprobe.c"

mkdir -p "$T/rmstate"
printf 'state_dir = %s\nallow_register = yes\nlog_level = info\n' "$T/rmstate" >"$T/rankmapd.conf"
expect "rankmapd starts on a temporary socket" start_rankmapd "$T/rankmapd.conf" "$T/rankmapd.sock" "$T/rankmapd.log"
export RANKMAP_FAKE_NODE='pack:2 core:8 pu:1'
if ! $SAN sh "$H/cluster.sh" start "$C" "$BIN/spank_rankmap.so" socket="$T/rankmapd.sock" libdir="$BIN" \
	timeout=3000 pattern_timeout=5000 >"$T/cluster.out" 2>&1; then
	cat "$T/cluster.out"
	notok "local Slurm cluster starts"
	finish; exit 1
fi
unset RANKMAP_FAKE_NODE
ok "local Slurm cluster starts (munged, slurmctld, slurmd n1..n4, rankmapd)"
export SLURM_CONF="$C/slurm.conf"

no_stepd() { # no slurmstepd of this cluster left (up to 10 s)
	i=0
	while [ $i -lt 100 ]; do
		[ -z "$(sh "$H/cluster.sh" stepds "$C")" ] && return 0
		sleep 0.1; i=$((i + 1))
	done
	ps -o pid,etimes,rss,args -p "$(sh "$H/cluster.sh" stepds "$C" | tr '\n' ',' | sed 's/,$//')" >&2
	return 1
}
warnings() { grep -c '^rankmap:' "$1"; }
mkdir -p "$T/A" "$T/B"
chmod 755 "$T/A" "$T/B"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 10\n' >"$T/A/q.mtx"
mkfifo "$T/B/q.mtx"

# ---- chdir: the submission's file is the step's file ---------------------------------------------
chdir_case() {
	idle || return 1
	t0=$(date +%s)
	(cd "$T/A" && timeout -k 5 "$BOUND" $SAN srun -N1 -n2 -m block:block --mpi=pmi2 --chdir="$T/B" --rankmap-bind \
		--rankmap-pattern=q.mtx "$T/envprobe") >"$T/chdir.out" 2>"$T/chdir.err"
	rc=$?
	echo "# --chdir=B, pattern q.mtx (regular in A, FIFO in B): exit $rc in $(elapsed_since "$t0")s"
	sed 's/^/# /' "$T/chdir.out"
	[ $rc -eq 0 ] || { cat "$T/chdir.err" >&2; return 1; }
	[ "$(warnings "$T/chdir.err")" = 0 ] || { cat "$T/chdir.err" >&2; return 1; }
	[ "$(grep -c "^probe rank=[01] pattern=$T/A/q.mtx disable=- cpus=[0-9][0-9]* cwd=$T/B\$" "$T/chdir.out")" = 2 ] ||
		{ cat "$T/chdir.out" >&2; return 1; }
}
expect "--chdir=B with q.mtx a FIFO in B: the step uses A/q.mtx (absolute), binds, no warning" chdir_case
expect "after the --chdir step: nodes idle" idle
expect "after the --chdir step: no slurmstepd left" no_stepd

# ---- swapped after the submission check ----------------------------------------------------------
# hold: occupies every node, so that the next jobs pass their submission check and then wait.
hold() {
	HOLD=$(sbatch --parsable -N4 --exclusive -o /dev/null --wrap 'sleep 600') || return 1
	i=0
	while [ $i -lt 300 ]; do
		[ "$(squeue -h -j "$HOLD" -o %T)" = RUNNING ] && return 0
		sleep 0.1; i=$((i + 1))
	done
	return 1
}
# pending NAME [RUNAS...]: srun with A/NAME.mtx (good at submission) in the background, its PID in
# spid_NAME; the task sleeps 1 s, for its slurmstepd to be sampled.
pending() {
	name=$1; shift
	printf '%%%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 10\n' >"$T/A/$name.mtx"
	chmod 644 "$T/A/$name.mtx"
	(cd "$T/A" && exec timeout -k 5 "$BOUND" "$@" $SAN srun -N1 -n2 -m block:block --mpi=pmi2 --rankmap-bind \
		--rankmap-pattern="$name.mtx" "$T/envprobe" 1) >"$T/$name.out" 2>"$T/$name.err" &
	eval "spid_$name=\$!"
}
# jobid NAME: the job srun NAME waited in (srun says "job N queued and waiting for resources")
jobid() { sed -n 's/^srun: job \([0-9]*\) queued and waiting.*/\1/p' "$T/$1.err" | head -n 1; }
# job_stepds ID: the slurmstepd of job ID (their command line is "slurmstepd: [ID.STEP]")
job_stepds() {
	for p in $(sh "$H/cluster.sh" stepds "$C"); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "\[$1\." && echo "$p"
	done
}
to_fifo() { rm -f "$T/A/fifo.mtx" && mkfifo -m 644 "$T/A/fifo.mtx"; }
to_zero() { rm -f "$T/A/zero.mtx" && ln -s /dev/zero "$T/A/zero.mtx"; }
to_private() { chmod 600 "$T/A/private.mtx"; }
CASES="fifo zero private"
running() { for c in $CASES; do eval "kill -0 \$spid_$c" 2>/dev/null && return 0; done; return 1; }

# swapped: every node held; the three sruns wait; each file is swapped; the nodes are freed; each
# slurmstepd's peak RSS (VmHWM) is sampled while its task sleeps; every srun is waited for (bounded).
swapped() {
	idle && hold || { echo "cannot hold the nodes" >&2; return 1; }
	# As nobody: the file is readable at submission, then only root may read it. slurmstepd (root) must
	# read it as the job's user and be refused.
	chmod 777 "$T/A"
	pending fifo
	pending zero
	pending private setpriv --reuid=nobody --regid=nogroup --clear-groups
	i=0
	while [ "$(squeue -h -t PD -o %i | wc -l)" -lt 3 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(squeue -h -t PD -o %i | wc -l)" -ge 3 ] || { echo "the sruns' jobs never all waited" >&2; cat "$T"/*.err >&2; return 1; }
	for c in $CASES; do "to_$c"; done
	t0=$(date +%s)
	scancel "$HOLD"; HOLD=""
	for c in $CASES; do eval "peak_$c=0 job_$c=\$(jobid $c)"; done
	while running; do
		for c in $CASES; do
			for p in $(eval "job_stepds \$job_$c"); do
				k=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$p/status" 2>/dev/null)
				[ -n "$k" ] && eval "[ $k -gt \$peak_$c ] && peak_$c=$k"
			done
		done
		sleep 0.1
	done
	for c in $CASES; do eval "wait \$spid_$c; rc_$c=\$?"; done
	echo "# all three steps ended $(elapsed_since "$t0")s after the nodes were freed"
}
# completed NAME: srun NAME exited 0, and its slurmstepd was seen, with a small peak RSS
completed() {
	eval "rc=\$rc_$1 peak=\$peak_$1 job=\$job_$1"
	echo "# $1: job $job, exit $rc, slurmstepd peak RSS ${peak} kB"
	[ "$rc" = 0 ] || { cat "$T/$1.out" "$T/$1.err" >&2; return 1; }
	[ "$peak" -gt 0 ] && [ "$peak" -lt 262144 ] || { echo "slurmstepd of job $job: peak $peak kB" >&2; return 1; }
}
# one_warning NAME TEXT: exactly one rankmap: line, naming the file and TEXT; tasks unbound, library off.
one_warning() {
	grep '^rankmap:' "$T/$1.err" | sed 's/^/# warning: /'
	[ "$(warnings "$T/$1.err")" = 1 ] || { cat "$T/$1.err" >&2; return 1; }
	grep '^rankmap:' "$T/$1.err" | grep -q "$T/A/$1.mtx: $2.*tasks not bound, MPI ranks not reordered" ||
		{ cat "$T/$1.err" >&2; return 1; }
	[ "$(grep -c '^probe rank=[01] pattern=- disable=1 cpus=- ' "$T/$1.out")" = 2 ] || { cat "$T/$1.out" >&2; return 1; }
}
# node_idle NAME: the job of srun NAME completed and its node is idle (none completing; up to 30 s)
node_idle() {
	eval "job=\$job_$1"
	scontrol show job "$job" >"$T/$1.job" 2>&1
	node=$(sed -n 's/^ *NodeList=\(n[1-4]\)$/\1/p' "$T/$1.job")
	grep -q 'JobState=COMPLETED' "$T/$1.job" && [ -n "$node" ] || { cat "$T/$1.job" >&2; return 1; }
	i=0
	while [ $i -lt 300 ]; do
		[ "$(sinfo -h -N -n "$node" -o %t)" = idle ] && return 0
		sleep 0.1; i=$((i + 1))
	done
	sinfo -h -N -o '%N %T' >&2
	return 1
}
# no_job_stepd NAME: no slurmstepd of the job of srun NAME left (up to 10 s)
no_job_stepd() {
	eval "job=\$job_$1"
	i=0
	while [ $i -lt 100 ]; do
		[ -z "$(job_stepds "$job")" ] && return 0
		sleep 0.1; i=$((i + 1))
	done
	ps -o pid,etimes,rss,args -p "$(job_stepds "$job" | tr '\n' ',' | sed 's/,$//')" >&2
	return 1
}
if ! swapped; then
	notok "the three swapped-pattern steps could not run"
fi

expect "fifo.mtx swapped for a FIFO while the job waits: the step completes, bounded" completed fifo
expect "FIFO: exactly one warning naming the file; tasks unbound, library disabled" one_warning fifo "not a regular file (a FIFO)"
expect "after the FIFO step: its node idle (none completing)" node_idle fifo
expect "after the FIFO step: no slurmstepd of its job left" no_job_stepd fifo

expect "zero.mtx swapped for a symlink to /dev/zero: the step completes, bounded, slurmstepd RSS small" completed zero
expect "/dev/zero: exactly one warning naming the file" one_warning zero "not a regular file (a character device)"
expect "after the /dev/zero step: its node idle" node_idle zero
expect "after the /dev/zero step: no slurmstepd of its job left" no_job_stepd zero

expect "private.mtx made root-only while nobody's job waits: the step completes, bounded" completed private
expect "root-only file: exactly one warning (Permission denied): read as the user, not as root" \
	one_warning private "cannot open: Permission denied"
expect "after nobody's step: its node idle" node_idle private
expect "after nobody's step: no slurmstepd of its job left" no_job_stepd private
expect "after the three steps: every node idle" idle
expect "after the three steps: no slurmstepd left" no_stepd

cd "$TOP" || exit 1
sh "$H/cluster.sh" stop "$C"
stop_rankmapd
left=$( (pgrep -f "$T"; sh "$H/cluster.sh" stepds "$C") 2>/dev/null | wc -l)
expect "every daemon stopped (none left running from $T)" test "$left" = 0
finish
