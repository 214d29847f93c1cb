#!/bin/sh
# tests/integration/cluster_slurm_learn.sh: srun --rankmap-learn with rankmapd reached over TCP + MUNGE
# only, through a primary/backup server list.
#
# The cluster of cluster_slurm_tcp.sh: network namespaces svc (slurmctld and the primary rankmapd), bak
# (the backup rankmapd), n1..n4 (one slurmd each), lgn (runs srun), each with its munged (one key); the
# plugin is configured with server=svc:PORT,bak:PORT (the tasks get RANKMAP_SERVER, no RANKMAP_SOCKET).
# Before, the library stored the learned pattern at MPI_Finalize through RANKMAP_SOCKET only: under a
# server list it went silently to the user's directory, and no run ever used it. Checks, for an MPICH
# (--mpi=pmi2) and an Open MPI (--mpi=pmix) program: the first srun --rankmap-learn stores its pattern in
# the primary rankmapd (rankmapctl patterns list --server svc:PORT: one MPI_Cart_create pattern of the
# program, 1 run), the second run uses it (report: learned=ID/runs=1) and merges into it (2 runs); the
# per-user directory (RANKMAP_LEARN_DIR) is never written. With the primary killed (SIGKILL), the same
# through the backup (which shares nothing with the primary: it learns from scratch), with the one
# failover warning and nothing else. And, cheap here, the other MPI's library preloaded into a program
# under srun: the step completes with one warning.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/netns.sh"
. "$TOP/tests/slurm/tcp_cluster.sh"

registered() { # the nodes registered with both servers (the daemons' models, for the mapping)
	for srv in svc bak; do
		on lgn "$CTL" report --server "$srv:$PORT" --json >"$T/hosts.$srv" 2>&1 || { cat "$T/hosts.$srv" >&2; return 1; }
		grep -q '"hosts_with_hardware": 4,' "$T/hosts.$srv" || return 1
	done
}
expect "each slurmd registered its node with svc and bak" wait_for 100 registered

# ---- learning runs ------------------------------------------------------------------------------
mpicc.openmpi -O2 -o "$T/cart_ompi" "$H/cart_check.c" && mpicc.mpich -O2 -o "$T/cart_mpich" "$H/cart_check.c"
expect "cart_check builds (Open MPI, MPICH)" test -x "$T/cart_ompi" -a -x "$T/cart_mpich"
field() { sed -n "s/^cart:.* $1=\([0-9]*\).*/\1/p" "$2" | head -n 1; }
idle() { wait_for 100 all_idle; }
LDIR=$T/learndir # the per-user directory the tasks would fall back to: must stay unwritten
# The same Open MPI start-up crash in an Open MPI program with the MPICH library preloaded: that library
# loads MPICH and with it UCX, whose signal handler reports the jump to address 0 first.
ucx_start_crash() { grep -q 'Caught signal 11 (Segmentation fault: address not mapped to object at address (nil))' "$1"; }
# run_cart OUT SRUN_ARGS...: srun from the login node; $T/OUT.{out,err} (Open MPI start-up crash retried,
# see cluster_slurm_tcp.sh)
run_cart() {
	o=$1; shift
	for attempt in 1 2 3 4; do
		idle
		on lgn env OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=$NETNS_NET.0/24 OMPI_MCA_mpi_yield_when_idle=1 RANKMAP_VERBOSE=1 \
			RANKMAP_LEARN_DIR="$LDIR" SLURM_CONF="$SLURM_CONF" timeout -k 5 90 srun --kill-on-bad-exit=1 "$@" >"$T/$o.out" 2>"$T/$o.err"
		rc=$?
		grep -q '^cart:' "$T/$o.out" || ! { ompi_start_crash "$T/$o.err" || ucx_start_crash "$T/$o.err"; } && return $rc
		echo "# $o: attempt $attempt: MPI crashed in MPI_Init before main's output; retrying"
	done
	return $rc
}
warnings() { grep '^rankmap:' "$T/$1.err" | grep -vc '^rankmap: report \|^rankmap: place '; }
# learned OUT: the learned=... field of the run's report line
learned() { sed -n 's/^rankmap: report .* learned=\([^ ]*\).*/\1/p' "$T/$1.err" | head -n 1; }
# stored SRV PROG: "ID RUNS" of each pattern SRV keeps for PROG's MPI_Cart_create (uid 0)
stored() {
	on lgn "$CTL" patterns list --server "$1:$PORT" >"$T/patterns.$1" 2>&1 || { cat "$T/patterns.$1" >&2; return 1; }
	awk -v prog="$T/$2" '$2 == 0 && $3 == "MPI_Cart_create" && $NF == prog { print $1, $5 }' "$T/patterns.$1"
}
# learn MPI PROG SRV NWARN TAG: two srun --rankmap-learn runs of PROG; SRV must hold its pattern after the
# first (1 run), the second must use it and merge into it (2 runs); NWARN warnings in each run
learn() {
	m=$1; prog=$2; srv=$3; nw=$4; tag=$5
	[ "$m" = mpich ] && mpi=--mpi=pmi2 || mpi=--mpi=pmix
	run_cart "$tag.1" $mpi -N4 --ntasks-per-node=2 -m cyclic --rankmap-learn "$T/$prog" 4x2
	first_ok() {
		[ "$(field neighbours_ok "$T/$tag.1.out")" = 1 ] && [ "$(learned "$tag.1")" = none ] &&
			[ "$(warnings "$tag.1")" = "$nw" ] || { cat "$T/$tag.1.out" "$T/$tag.1.err" >&2; return 1; }
	}
	expect "$m ($tag) first srun --rankmap-learn: correct neighbours, no pattern yet (learned=none), $nw warning(s)" first_ok
	st=$(stored "$srv" "$prog")
	LID=${st%% *}
	expect "  rankmapd on $srv stored its pattern (patterns list --server $srv:$PORT: one MPI_Cart_create of $prog, 1 run)" \
		test "$(echo "$st" | grep -c .)" = 1 -a "${st#* }" = 1
	[ -n "$st" ] || { echo "# patterns on $srv:"; sed 's/^/#   /' "$T/patterns.$srv"; grep '^rankmap' "$T/$tag.1.err" | sed 's/^/#   /'; }
	expect "  the per-user directory was not written" test ! -e "$LDIR"
	run_cart "$tag.2" $mpi -N4 --ntasks-per-node=2 -m cyclic --rankmap-learn "$T/$prog" 4x2
	second_ok() {
		[ "$(field neighbours_ok "$T/$tag.2.out")" = 1 ] && [ -n "$LID" ] && [ "$(learned "$tag.2")" = "$LID/runs=1" ] &&
			[ "$(warnings "$tag.2")" = "$nw" ] && [ "$(stored "$srv" "$prog")" = "$LID 2" ] ||
			{ echo "learned=$(learned "$tag.2"), stored: $(stored "$srv" "$prog")" >&2; cat "$T/$tag.2.err" >&2; return 1; }
	}
	expect "  the second run used it (learned=$LID/runs=1) and merged its own (2 runs on $srv)" second_ok
}
learn mpich cart_mpich svc 0 mpich
learn openmpi cart_ompi svc 0 ompi

# ---- the other MPI's library under srun (pmpi_wrong_mpi.sh covers mpirun): one warning -------
# without --rankmap the plugin preloads nothing: the task preloads the wrong library itself
wrong_lib() { # TAG MPI-OPTION PROG LIB
	run_cart "$1" "$2" -N4 --ntasks-per-node=2 -m cyclic env LD_PRELOAD="$BIN/librankmap_mpi_$4.so" "$T/$3" 4x2
	[ "$(field neighbours_ok "$T/$1.out")" = 1 ] && [ "$(field moved "$T/$1.out")" = 0 ] && [ "$(warnings "$1")" = 1 ] &&
		grep -q "^rankmap: MPI_Init: librankmap_mpi_$4.so is built for" "$T/$1.err" || { cat "$T/$1.out" "$T/$1.err" >&2; return 1; }
}
expect "srun --mpi=pmi2, MPICH program with the Open MPI library: completes unreordered, correct neighbours, one warning" \
	wrong_lib wrong_mpich --mpi=pmi2 cart_mpich openmpi
expect "srun --mpi=pmix, Open MPI program with the MPICH library: completes unreordered, correct neighbours, one warning" \
	wrong_lib wrong_ompi --mpi=pmix cart_ompi mpich

# ---- the primary killed: the backup learns, the primary's patterns are out of reach -----------------
netns_kill "$svc_PID" KILL
# the step's probe finds bak and puts it first in the tasks' RANKMAP_SERVER: no warning in the job (the old
# plugin kept the plugstack order: the library tried svc first at every call and warned once per job)
learn mpich cart_mpich bak 0 mpich_fo
expect "  the step's probe went on to bak, and said so in the slurmd log" \
	sh -c "cat '$S'/log/slurmd.n?.log | grep -q 'rankmap: svc:$PORT: .*this step uses rankmapd at bak:$PORT'"
learn openmpi cart_ompi bak 0 ompi_fo

echo "# run time: $(( $(date +%s) - t_start )) s"
finish
