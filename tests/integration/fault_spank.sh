#!/bin/sh
# Fault injection for the SPANK plugin (plugin/spank) on a real local Slurm cluster (tests/slurm/):
# rankmapd stalls (accepts connections, never answers: tests/faults/fake_rankmapd.py stall) while
# slurmd registers its node at start and while steps run with --rankmap-bind.
# Promised (tests/FAULTS.md): slurmd starts anyway (registration is bounded by the plugin's
# timeout, here 1 s, and never fatal); a --rankmap-bind step completes within a bound, its tasks are
# left unbound, with exactly one "rankmap:" warning; Open MPI and MPICH programs with --rankmap-bind
# complete with correct neighbours and one warning. The fake daemon must have been asked each time.
# The daemon simply down is covered by spank_cluster.sh ("rankmapd down" checks).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/faults/lib.sh"
. "$TOP/tests/slurm/common.sh"

H=$TOP/tests/slurm
T=$(mktmp) || exit 1
chmod 755 "$T"
C=$T/cluster
SOCK=$T/stall.sock
BOUND=${FAULT_BOUND:-120}

cleanup() {
	fake_stop
	sh "$H/cluster.sh" stop "$C" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' HUP INT PIPE TERM

for c in munged slurmctld slurmd srun mpicc.openmpi mpicc.mpich python3; do
	command -v "$c" >/dev/null || { notok "required command $c is missing (make deps)"; finish; exit 1; }
done
for f in spank_rankmap.so librankmap_mpi_openmpi.so librankmap_mpi_mpich.so; do
	[ -f "$BIN/$f" ] || { notok "$BIN/$f is not built"; finish; exit 1; }
done
build() { mpicc.openmpi -O2 -o "$T/cart_ompi" "$H/cart_check.c" && mpicc.mpich -O2 -o "$T/cart_mpich" "$H/cart_check.c"; }
expect "test programs build (Open MPI, MPICH)" build
expect "fake rankmapd (stall) listens" fake_start stall "$SOCK"

# A plugin built with SANITIZE=1 is loaded by slurmd, slurmstepd and srun, none built with ASan: they run
# with the ASan runtime preloaded ($SAN, tests/slurm/common.sh).
[ -z "$SAN" ] || echo "# sanitized build: Slurm daemons and srun run with: $SAN"
# The jobs' ranks outnumber the 2 real cores: Open MPI's waiting ranks yield instead of spinning.
export OMPI_MCA_mpi_yield_when_idle=1
export RANKMAP_FAKE_NODE='pack:2 core:8 pu:1'
t0=$(date +%s)
if ! $SAN sh "$H/cluster.sh" start "$C" "$BIN/spank_rankmap.so" socket="$SOCK" libdir="$BIN" timeout=1000 \
	>"$T/cluster.out" 2>&1; then
	cat "$T/cluster.out"
	notok "local Slurm cluster starts with rankmapd stalling"
	finish; exit 1
fi
unset RANKMAP_FAKE_NODE
ok "local Slurm cluster starts with rankmapd stalling ($(elapsed_since "$t0")s)"
export SLURM_CONF="$C/slurm.conf"
cd "$T" || exit 1
regs_tried() { [ "$(fake_clients "$SOCK")" -ge 4 ] || { cat "$SOCK.log" >&2; return 1; }; }
expect "each slurmd tried to register with the stalling daemon (fake daemon saw $(fake_clients "$SOCK") clients)" regs_tried

warnings() { grep '^rankmap:' "$1" | grep -vc '^rankmap: report'; }

cat >"$T/bindprobe.sh" <<'EOC'
#!/bin/sh
echo "bind $SLURMD_NODENAME $SLURM_LOCALID ${RANKMAP_BIND_CPUS:-none} $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"
EOC
chmod 755 "$T/bindprobe.sh"
all=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)

bind_stalled() {
	idle
	before=$(fake_clients "$SOCK"); t0=$(date +%s)
	timeout -k 5 "$BOUND" $SAN srun -N4 --ntasks-per-node=2 -m block:block --rankmap-bind "$T/bindprobe.sh" \
		>"$T/bind.out" 2>"$T/bind.err"
	rc=$?; s=$(elapsed_since "$t0")
	echo "# --rankmap-bind step: exit $rc in ${s}s"
	[ $rc -eq 0 ] || { cat "$T/bind.err" >&2; return 1; }
	[ "$(grep -c "^bind n[1-4] [01] none $all\$" "$T/bind.out")" = 8 ] || { cat "$T/bind.out" >&2; return 1; }
	[ "$(warnings "$T/bind.err")" = 1 ] || { cat "$T/bind.err" >&2; return 1; }
	grep '^rankmap:' "$T/bind.err" | sed 's/^/# warning: /'
	[ "$(fake_clients "$SOCK")" -gt "$before" ] || { echo "the plugin never asked the daemon" >&2; return 1; }
}
expect "--rankmap-bind with rankmapd stalling: completes, 8 tasks unbound, one warning, daemon was asked" bind_stalled

# cart MPI SRUN_ARGS...: an MPI Cartesian program with --rankmap-bind; completes with correct neighbours
cart_stalled() {
	m=$1; shift
	for attempt in 1 2 3 4; do
		idle
		t0=$(date +%s)
		OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo timeout -k 5 "$BOUND" $SAN srun --kill-on-bad-exit=1 "$@" \
			>"$T/$m.out" 2>"$T/$m.err"
		rc=$?
		grep -q '^cart:' "$T/$m.out" || ! ompi_start_crash "$T/$m.err" && break
		echo "# $m: attempt $attempt: MPI crashed at start-up before main's output (Open MPI TCP transport); retrying"
	done
	echo "# $m: exit $rc in $(elapsed_since "$t0")s: $(grep '^cart:' "$T/$m.out")"
	[ $rc -eq 0 ] && grep -q '^cart:.* neighbours_ok=1' "$T/$m.out" || { cat "$T/$m.out" "$T/$m.err" >&2; return 1; }
	[ "$(warnings "$T/$m.err")" = 1 ] || { cat "$T/$m.err" >&2; return 1; }
	grep '^rankmap:' "$T/$m.err" | sed 's/^/# warning: /'
}
expect "Open MPI, --rankmap-bind, rankmapd stalling: completes, correct neighbours, one warning" \
	cart_stalled ompi --mpi=pmix -N4 --ntasks-per-node=2 -m cyclic --rankmap-bind "$T/cart_ompi" 4x2
expect "MPICH, --rankmap-bind, rankmapd stalling: completes, correct neighbours, one warning" \
	cart_stalled mpich --mpi=pmi2 -N4 --ntasks-per-node=2 -m cyclic --rankmap-bind "$T/cart_mpich" 4x2

cd "$TOP" || exit 1
sh "$H/cluster.sh" stop "$C"
fake_stop
left=$( (pgrep -f "$T"; sh "$H/cluster.sh" stepds "$C") 2>/dev/null | wc -l)
expect "every daemon stopped (none left running from $T)" test "$left" = 0
finish
