# tests/slurm/ctld_topo.sh: sourced (after tests/lib.sh) by the tests that let a real slurmctld read a
# topology file rankmap wrote. No munged, no slurmd: auth/none, every node at 127.0.0.1, everything
# under the caller's scratch directory, the daemon stopped by its PID.
#
#   ctld_topology DIR PLUGIN FILE NODES [LINE]
#                                         writes DIR/slurm.conf (TopologyPlugin=PLUGIN, one NodeName
#                                         line per name of the file NODES, one a line, and LINE, e.g.
#                                         TopologyParam=Dragonfly), copies FILE to
#                                         DIR/topology.conf, starts slurmctld, waits until it answers,
#                                         saves `scontrol show topology` in DIR/topo.out and stops it.
#                                         slurmctld's messages: DIR/out and DIR/log/ctld.log. Returns 1
#                                         when slurmctld never answered.
#   ctld_kill                             the EXIT trap's part: stops a slurmctld still running
#   slurm_version                         slurmctld's version as MAJOR*100+MINOR (2205 for 22.05), or 0
CTLD_PID=""

ctld_free_port() {
	_used=$(ss -Htan 2>/dev/null | awk '{print $4}' | sed 's/.*://')
	while :; do
		_p=$(( ( $(od -An -N2 -tu2 /dev/urandom) % 20000 ) + 30000 ))
		echo "$_used" | grep -qx "$_p" || { echo "$_p"; return; }
	done
}

ctld_kill() {
	if [ -n "$CTLD_PID" ]; then kill "$CTLD_PID" 2>/dev/null; wait "$CTLD_PID" 2>/dev/null; fi
	CTLD_PID=""
}

slurm_version() {
	slurmctld -V 2>/dev/null | awk '{ split($2, v, "."); if (v[2] != "") print v[1] * 100 + v[2]; else print 0; exit }'
}

ctld_topology() {
	_d=$1; mkdir -p "$_d/state" "$_d/log"
	cp "$3" "$_d/topology.conf"
	{
		printf 'ClusterName=rmtopo\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=%s\n' "$(ctld_free_port)"
		printf 'SlurmUser=root\nAuthType=auth/none\nCredType=cred/none\nStateSaveLocation=%s/state\n' "$_d"
		printf 'SlurmctldPidFile=%s/ctld.pid\nSlurmctldLogFile=%s/log/ctld.log\n' "$_d" "$_d"
		printf 'TopologyPlugin=%s\nSwitchType=switch/none\nProctrackType=proctrack/linuxproc\n' "$2"
		printf 'SelectType=select/cons_tres\nMailProg=/bin/true\nNodeName=DEFAULT CPUs=1 State=UNKNOWN\n'
		awk 'NF { print "NodeName=" $1 " NodeAddr=127.0.0.1" }' "$4"
		printf 'PartitionName=all Nodes=ALL Default=YES\n'
		[ -n "${5:-}" ] && printf '%s\n' "$5"
	} >"$_d/slurm.conf"
	slurmctld -D -i -f "$_d/slurm.conf" >"$_d/out" 2>&1 &
	CTLD_PID=$!
	_i=0
	while [ $_i -lt 150 ] && ! SLURM_CONF=$_d/slurm.conf scontrol ping >/dev/null 2>&1; do
		kill -0 "$CTLD_PID" 2>/dev/null || break
		sleep 0.2; _i=$((_i + 1))
	done
	SLURM_CONF=$_d/slurm.conf scontrol show topology >"$_d/topo.out" 2>&1
	_up=$?
	ctld_kill
	[ $_up = 0 ]
}
