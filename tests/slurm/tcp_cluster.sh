# tests/slurm/tcp_cluster.sh: sourced (after tests/lib.sh and tests/netns.sh) by the tests that run Slurm
# and the SPANK plugin across network namespaces with rankmapd reached over TCP + MUNGE only
# (cluster_slurm_tcp.sh, cluster_slurm_learn.sh). It sets up, with one check each:
#   hosts svc (slurmctld and the primary rankmapd), bak (the backup rankmapd), n1..n4 (one slurmd -N nX
#   each, NodeAddr = the namespace's address), lgn (runs srun); every host has its munged (one key);
#   rankmapd (TCP only, empty model, allow_register) on svc and bak; slurm.conf under $T/slurm with the
#   plugin configured with server=svc:PORT,bak:PORT; slurmctld on svc; the slurmd n1..n4, idle.
# It defines H, T (scratch directory, tests/netns.sh's netns_setup), t_start, CTL, NODES, PORT, SERVERS, S, SLURM_CONF (exported),
# $svc_PID, $bak_PID and the functions on HOST CMD... (runs CMD on HOST with RANKMAP_MUNGE_SOCKET),
# start_daemon HOST (starts rankmapd on svc or bak, waits until it answers), wait_for TRIES CMD... (0.2 s
# apart) and all_idle. A missing dependency fails the test and exits; under SANITIZE=1 it skips and exits.

H=$TOP/tests/slurm
netns_setup
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
	netns_rankmapd "$1" "$T/$1.conf" "$T/$1.log"
	_rc=$?
	eval "$1_PID=$NETNS_PID"
	return $_rc
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
