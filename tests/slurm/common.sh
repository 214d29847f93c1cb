# tests/slurm/common.sh: sourced by the tests that run a local Slurm cluster (tests/slurm/cluster.sh:
# spank_cluster.sh, fault_spank.sh, fault_spank_pattern.sh), after tests/lib.sh. SLURM_CONF must be set
# before the functions are called.
#
#   idle [SECONDS]   waits (default 30 s) until no job is left and the four nodes are idle (none
#                    allocated or completing); prints the node states and returns 1 otherwise
#   SAN              after sourcing: empty, or, when the plugin is built with SANITIZE=1, the command
#                    prefix that runs a Slurm program (slurmd, slurmctld through cluster.sh, srun) with
#                    the ASan runtime preloaded (full ASan in the plugin; leak checks off: Slurm's own
#                    exit-time leaks). The plugin puts the MPI library before it in the tasks' LD_PRELOAD
#                    (it keeps the user's), hence the link-order check is off. Only Slurm's programs get
#                    it: procps' pgrep deadlocks with libasan preloaded.

idle() {
	_n=$((${1:-30} * 10)) _i=0
	while [ $_i -lt $_n ]; do
		[ -z "$(squeue -h 2>/dev/null)" ] && [ "$(sinfo -h -N -t idle -o %N | wc -l)" = 4 ] && return 0
		sleep 0.1; _i=$((_i + 1))
	done
	sinfo -h -N -o '%N %T' >&2
	return 1
}

SAN=""
_rt=$(ldd "$BIN/spank_rankmap.so" 2>/dev/null | sed -n 's/^[[:space:]]*libasan\.so[^ ]* => \([^ ]*\).*/\1/p' | head -n 1)
if [ -n "$_rt" ]; then
	SAN="env LD_PRELOAD=$_rt${LD_PRELOAD:+:$LD_PRELOAD} ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
fi
