#!/bin/sh
# tests/integration/cluster_slurm_tcp.sh: Slurm and the SPANK plugin across separate network hosts,
# with rankmapd reached over TCP + MUNGE only (issue 16).
#
# Hosts (network namespaces, tests/netns.sh): svc (slurmctld and the primary rankmapd), bak (the backup
# rankmapd), n1..n4 (one slurmd -N nX each, NodeAddr = the namespace's address), lgn (a login node that
# runs srun). Every host has its own munged, all with one key (Slurm and rankmap both use it). The
# plugin is configured with server=svc:PORT,bak:PORT and munge_socket=...; no rankmapd has a Unix
# socket. Checks: each slurmd registers its node with both servers at start (over TCP: the daemon checks
# the name against the credential's origin address); Open MPI (--mpi=pmix) and MPICH (--mpi=pmi2) jobs
# across the four hosts are reordered with correct neighbours and no warning; with the primary killed
# (SIGKILL) they are reordered through the backup; with both gone they run with one warning.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/netns.sh"

H=$TOP/tests/slurm
T=$(mktmp) || exit 1
netns_on_exit() { [ -n "${KEEP:-}" ] && echo "# kept $T" || rm -rf "$T"; }
netns_init "$T"
for c in slurmctld slurmd srun sinfo mpicc.openmpi mpicc.mpich; do
	command -v "$c" >/dev/null || { notok "required command $c is missing (make deps)"; finish; exit 1; }
done
for f in spank_rankmap.so librankmap_mpi_openmpi.so librankmap_mpi_mpich.so rankmapd rankmapctl; do
	[ -f "$BIN/$f" ] || { notok "$BIN/$f is not built"; finish; exit 1; }
done
if ldd "$BIN/spank_rankmap.so" 2>/dev/null | grep -q libasan; then
	skip "SANITIZE=1: slurmd would need the ASan runtime preloaded (see spank_cluster.sh)"
	finish; exit 0
fi
t_start=$(date +%s)
CTL=$BIN/rankmapctl
NODES="n1 n2 n3 n4"
netns_add_host svc bak lgn $NODES
for h in svc bak lgn $NODES; do
	netns_munged "$h" || { notok "munged on $h"; finish; exit 1; }
done
ok "hosts svc, bak, lgn, n1..n4 (own network namespaces), each with its munged (one key)"
PORT=7117
SERVERS=svc:$PORT,bak:$PORT
on() { h=$1; shift; netns_exec "$h" env RANKMAP_MUNGE_SOCKET="$NETNS_MUNGE_SOCK" "$@"; }

# ---- rankmapd, TCP only, on svc and bak (empty models: the nodes register) ----------------------
start_daemon() {
	printf 'listen = %s:%s\nmunge_socket = %s\nstate_dir = %s\nallow_register = yes\nlog_level = info\n' \
		"$(netns_addr "$1")" "$PORT" "$NETNS_MUNGE_SOCK" "$T/$1.state" >"$T/$1.conf"
	netns_spawn "$1" "$BIN/rankmapd" --config "$T/$1.conf" --foreground >>"$T/$1.log" 2>&1
	eval "$1_PID=$NETNS_PID"
	n=0
	while [ $n -lt 150 ]; do
		on lgn "$CTL" ping --server "$1:$PORT" --timeout 1000 >/dev/null 2>&1 && return 0
		kill -0 "$NETNS_PID" 2>/dev/null || break
		sleep 0.2; n=$((n + 1))
	done
	cat "$T/$1.log" >&2
	return 1
}
expect "rankmapd on svc (TCP only)" start_daemon svc
expect "rankmapd on bak (TCP only)" start_daemon bak

# ---- Slurm: slurmctld on svc, slurmd -N nX on each node -----------------------------------------
S=$T/slurm
nodes=""; for n in $NODES; do nodes="$nodes $n=$(netns_addr "$n")"; done
RM_SLURM_CTLD="svc($(netns_addr svc))" RM_SLURM_NODES=$nodes RM_SLURM_MUNGE=$NETNS_MUNGE_SOCK \
	sh "$H/cluster.sh" conf "$S" "$BIN/spank_rankmap.so" server="$SERVERS" munge_socket="$NETNS_MUNGE_SOCK" \
	libdir="$BIN" timeout=3000 || { notok "Slurm configuration under $S"; finish; exit 1; }
export SLURM_CONF=$S/slurm.conf

wait_for() { # tries (0.2 s apart), command...
	t=$1; shift; i=0
	while [ $i -lt "$t" ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; i=$((i + 1)); done
	return 1
}
netns_spawn svc slurmctld -D -i -f "$SLURM_CONF" 2>"$S/log/slurmctld.stderr"
expect "slurmctld on svc answers from lgn" wait_for 150 netns_exec lgn scontrol ping
# The nodes register the hardware slurm.conf gives them (test-only override, see spank_register.c).
for n in $NODES; do
	netns_spawn "$n" env RANKMAP_FAKE_NODE='pack:2 core:8 pu:1' slurmd -D -N "$n" -f "$SLURM_CONF" 2>"$S/log/slurmd.$n.stderr"
done
all_idle() { [ "$(netns_exec lgn sinfo -h -N -t idle -o %N | sort -u | wc -l)" = 4 ]; }
expect "slurmd n1..n4, each on its own host, are idle" wait_for 300 all_idle

registered() {
	for n in $NODES; do
		grep -q "registered $n's topology" "$S/log/slurmd.$n.log" ||
			{ echo "# no registration in slurmd.$n.log:" >&2; grep rankmap "$S/log/slurmd.$n.log" >&2; return 1; }
	done
	for srv in svc bak; do
		on lgn "$CTL" report --server "$srv:$PORT" --json >"$T/hosts.$srv" 2>&1 || { cat "$T/hosts.$srv" >&2; return 1; }
		grep -q '"hosts_with_hardware": 4,' "$T/hosts.$srv" || { echo "# $srv's model:" >&2; head -n 12 "$T/hosts.$srv" >&2; return 1; }
		for n in $NODES; do
			grep -q "registered $n (tcp $(netns_addr "$n"):[0-9]* uid 0)" "$T/$srv.log" ||
				{ echo "# $srv.log: no registration of $n from $(netns_addr "$n")" >&2; return 1; }
		done
	done
}
expect "each slurmd registered its node, over TCP from its own address, with svc and bak" registered

# ---- jobs across the hosts --------------------------------------------------------------------------
mpicc.openmpi -O2 -o "$T/cart_ompi" "$H/cart_check.c" && mpicc.mpich -O2 -o "$T/cart_mpich" "$H/cart_check.c"
expect "cart_check builds (Open MPI, MPICH)" test -x "$T/cart_ompi" -a -x "$T/cart_mpich"
field() { sed -n "s/^cart:.* $1=\([0-9]*\).*/\1/p" "$2" | head -n 1; }
idle() { wait_for 100 all_idle; }
# run_cart OUT SRUN_ARGS...: srun from the login node; $T/OUT.{out,err}. Open MPI 4.1's TCP transport
# crashes in MPI_Init in a few percent of start-ups (lib.sh, ompi_start_crash): retried, and said.
# --kill-on-bad-exit ends the step as soon as one task dies, instead of its other ranks spinning in
# MPI_Init until the timeout. The ranks outnumber the 2 real cores: Open MPI's waiting ranks yield.
run_cart() {
	o=$1; shift
	for attempt in 1 2 3 4; do
		idle
		on lgn env OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=$NETNS_NET.0/24 OMPI_MCA_mpi_yield_when_idle=1 RANKMAP_VERBOSE=1 \
			SLURM_CONF="$SLURM_CONF" timeout -k 5 90 srun --kill-on-bad-exit=1 "$@" >"$T/$o.out" 2>"$T/$o.err"
		rc=$?
		grep -q '^cart:' "$T/$o.out" || ! ompi_start_crash "$T/$o.err" && return $rc
		echo "# $o: attempt $attempt: MPI crashed in MPI_Init before main's output; retrying"
	done
	return $rc
}
reordered() {
	[ "$(field neighbours_ok "$T/$1.out")" = 1 ] || { cat "$T/$1.out" "$T/$1.err" >&2; return 1; }
	moved=$(field moved "$T/$1.out"); a=$(field offnode_identity "$T/$1.out"); b=$(field offnode_cart "$T/$1.out")
	[ -n "$moved" ] && [ "$moved" -gt 0 ] && [ "$b" -lt "$a" ] || { cat "$T/$1.out" "$T/$1.err" >&2; return 1; }
}
unreordered() { [ "$(field neighbours_ok "$T/$1.out")" = 1 ] && [ "$(field moved "$T/$1.out")" = 0 ]; }
warnings() { grep '^rankmap:' "$T/$1.err" | grep -vc '^rankmap: report'; }

nodes_used() { # the four hosts really ran the ranks (node names printed by the program)
	[ "$(sed -n 's/^rank [0-9]* node \(n[1-4]\) .*/\1/p' "$T/$1.out" | sort -u | wc -l)" = 4 ]
}
GRID="-N4 --ntasks-per-node=2 -m cyclic"

run_cart ompi_plain --mpi=pmix $GRID "$T/cart_ompi" 4x2
expect "Open MPI control run across n1..n4 without --rankmap: not reordered" unreordered ompi_plain
expect "  its ranks ran on the four hosts" nodes_used ompi_plain
run_cart ompi --mpi=pmix $GRID --rankmap "$T/cart_ompi" 4x2
expect "Open MPI (srun --mpi=pmix from lgn, 8 ranks cyclic over n1..n4): reordered, correct neighbours" reordered ompi
expect "  mapped by rankmapd, no warning" sh -c "grep -q 'algo=rankmapd:' '$T/ompi.err' && [ $(warnings ompi) = 0 ]"
run_cart mpich --mpi=pmi2 $GRID --rankmap "$T/cart_mpich" 4x2
expect "MPICH (srun --mpi=pmi2 from lgn, 8 ranks cyclic over n1..n4): reordered, correct neighbours" reordered mpich
expect "  mapped by rankmapd, no warning" sh -c "grep -q 'algo=rankmapd:' '$T/mpich.err' && [ $(warnings mpich) = 0 ]"

# ---- the primary killed: the backup serves --------------------------------------------------------
kill -9 "$svc_PID"; wait "$svc_PID" 2>/dev/null
run_cart ompi_fo --mpi=pmix $GRID --rankmap "$T/cart_ompi" 4x2
expect "primary killed: Open MPI job reordered, correct neighbours" reordered ompi_fo
expect "  mapped by rankmapd on bak, one warning naming svc" sh -c "by_daemon() { grep -q 'algo=rankmapd:' \"\$1\"; }; by_daemon '$T/ompi_fo.err' &&
	[ $(warnings ompi_fo) = 1 ] && grep -q 'svc:$PORT: .*using rankmapd at bak:$PORT' '$T/ompi_fo.err'"
expect "  the step's probe (slurmstepd) went on to bak, and said so in the slurmd log" \
	sh -c "cat '$S'/log/slurmd.n?.log | grep -q 'rankmap: svc:$PORT: .*this step uses rankmapd at bak:$PORT'"
run_cart mpich_fo --mpi=pmi2 $GRID --rankmap "$T/cart_mpich" 4x2
expect "primary killed: MPICH job reordered, correct neighbours" reordered mpich_fo
expect "  mapped by rankmapd on bak, one warning" sh -c "grep -q 'algo=rankmapd:' '$T/mpich_fo.err' && [ $(warnings mpich_fo) = 1 ] &&
	grep -q 'using rankmapd at bak:$PORT' '$T/mpich_fo.err'"

# ---- both gone: unreordered by the daemon, one warning --------------------------------------------
kill -9 "$bak_PID"; wait "$bak_PID" 2>/dev/null
run_cart ompi_down --mpi=pmix $GRID --rankmap "$T/cart_ompi" 4x2
expect "both servers down: Open MPI job runs, correct neighbours, not mapped by a daemon" \
	sh -c "[ \"\$(sed -n 's/^cart:.* neighbours_ok=\([01]\).*/\1/p' '$T/ompi_down.out')\" = 1 ] && ! grep -q 'algo=rankmapd' '$T/ompi_down.err'"
expect "  exactly one warning" test "$(warnings ompi_down)" = 1
expect "  naming both servers and why" grep -q "svc:$PORT: cannot connect.*bak:$PORT: cannot connect" "$T/ompi_down.err"

echo "# run time: $(( $(date +%s) - t_start )) s"
finish
