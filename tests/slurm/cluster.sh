#!/bin/sh
# tests/slurm/cluster.sh: start and stop a throw-away local Slurm cluster for the SPANK tests.
#
#   cluster.sh start DIR [PLUGIN_SO [PLUGIN_ARGS...]]   start munged, slurmctld and slurmd n1..n4 under DIR
#   cluster.sh stop DIR                                 stop every daemon started under DIR, by PID
#   cluster.sh conf DIR [PLUGIN_SO [PLUGIN_ARGS...]]    only write DIR's slurm.conf, topology.conf and
#                                                       plugstack.conf and make its directories (for a
#                                                       caller that starts the daemons itself)
#   cluster.sh env DIR                                  print the environment lines (SLURM_CONF=...)
#   cluster.sh stepds DIR                               list the PIDs of this cluster's slurmstepd
#
# PLUGSTACK_MODE=required|optional (default required) is the plugstack.conf keyword of the plugin.
# slurmd inherits the caller's environment (e.g. the test-only RANKMAP_FAKE_NODE of the plugin).
# Everything (key, sockets, state, logs, spool, TmpFS) lives under DIR; nothing is written to /etc.
# The cluster: n[1-4], CPUs=16 as 2 sockets x 8 cores each, a two-leaf topology/tree (s1: n1,n2; s2:
# n3,n4), proctrack/linuxproc, task/none, SlurmdParameters=config_overrides. By default all on one host
# (127.0.0.1, free ports picked here) with munged at DIR/munge/munge.sock. For hosts of their own (conf
# only), the caller sets:
#   RM_SLURM_CTLD=NAME(ADDR)              slurmctld's host (port 6817; every slurmd on 6818)
#   RM_SLURM_NODES="n1=ADDR ... n4=ADDR"  each node's host address (the names are n1..n4)
#   RM_SLURM_MUNGE=SOCKET                 munged's socket as every host sees it
# GPU nodes (any setup): RM_SLURM_NODE_HW="CPUs=... SocketsPerBoard=... CoresPerSocket=... ThreadsPerCore=..."
# replaces the nodes' hardware (e.g. that of the HWLOC_XMLFILE slurmd is given), RM_SLURM_GRES="gpu:TYPE:N"
# adds GresTypes=gpu and the nodes' Gres= (the caller writes DIR/gres.conf).
die() { echo "cluster.sh: $*" >&2; exit 1; }

# free_port_base: print a base port P such that P..P+4 are free on 127.0.0.1.
free_port_base() {
	used=$(ss -Htan 2>/dev/null | awk '{print $4}' | sed 's/.*://')
	tries=0
	while [ $tries -lt 50 ]; do
		base=$(( ( $(od -An -N2 -tu2 /dev/urandom) % 20000 ) + 20000 ))
		clash=0
		for p in $base $((base+1)) $((base+2)) $((base+3)) $((base+4)); do
			echo "$used" | grep -qx "$p" && clash=1
		done
		[ $clash -eq 0 ] && { echo $base; return 0; }
		tries=$((tries+1))
	done
	return 1
}

# node_lines PORT: the NodeName lines (one host: consecutive slurmd ports after slurmctld's PORT)
node_lines() {
	hw="${RM_SLURM_NODE_HW:-CPUs=16 SocketsPerBoard=2 CoresPerSocket=8 ThreadsPerCore=1} RealMemory=1000${RM_SLURM_GRES:+ Gres=$RM_SLURM_GRES}"
	if [ -z "${RM_SLURM_NODES:-}" ]; then
		echo "NodeName=n[1-4] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[$(($1 + 1))-$(($1 + 4))] $hw"
		return
	fi
	for na in $RM_SLURM_NODES; do echo "NodeName=${na%%=*} NodeHostname=${na%%=*} NodeAddr=${na#*=} $hw"; done
}

write_conf() { # dir port plugin args...
	d=$1; port=$2; plugin=$3; shift 3
	if [ -n "${RM_SLURM_NODES:-}" ]; then ports="SlurmctldPort=6817
SlurmdPort=6818"; else ports="SlurmctldPort=$port"; fi
	cat >"$d/slurm.conf" <<EOC
${RM_SLURM_GRES:+GresTypes=gpu}
ClusterName=rmtest
SlurmctldHost=${RM_SLURM_CTLD:-localhost(127.0.0.1)}
$ports
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${RM_SLURM_MUNGE:-$d/munge/munge.sock}
StateSaveLocation=$d/ctld
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
TopologyPlugin=topology/tree
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
# batch jobs are scheduled at once, not up to 3 s later (the default batch_sched_delay)
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
PlugStackConfig=$d/plugstack.conf
TmpFS=$d/tmp/%n
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
KillWait=5
MessageTimeout=10
InactiveLimit=0
$(node_lines "$port")
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOC
	cat >"$d/topology.conf" <<EOC
SwitchName=s1 Nodes=n[1-2]
SwitchName=s2 Nodes=n[3-4]
SwitchName=top Switches=s[1-2]
EOC
	if [ -n "$plugin" ]; then
		echo "${PLUGSTACK_MODE:-required} $plugin $*" >"$d/plugstack.conf"
	else
		: >"$d/plugstack.conf"
	fi
}

# wait_for CMD...: retry CMD for up to 30 s (0.2 s steps).
wait_for() {
	i=0
	while [ $i -lt 150 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2; i=$((i+1))
	done
	return 1
}

start_munge() {
	d=$1
	mkdir -p "$d/munge" && chmod 700 "$d/munge" || return 1
	# munged wants a 0700 key directory but an executable-by-all path to its socket.
	chmod 755 "$d" "$d/munge"
	mungekey --create --keyfile="$d/munge/munge.key" >/dev/null 2>&1 ||
		dd if=/dev/urandom of="$d/munge/munge.key" bs=128 count=1 2>/dev/null
	chmod 600 "$d/munge/munge.key"
	munged --force --socket="$d/munge/munge.sock" --key-file="$d/munge/munge.key" \
		--pid-file="$d/run/munged.pid" --log-file="$d/log/munged.log" \
		--seed-file="$d/munge/munged.seed" || return 1
	wait_for sh -c "munge -S '$d/munge/munge.sock' -n | unmunge -S '$d/munge/munge.sock'"
}

nodes_idle() {
	n=$(sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')
	[ "$n" -eq 4 ]
}

# prepare DIR PLUGIN ARGS...: DIR's directories and configuration files
prepare() {
	d=$1; plugin=$2; shift 2
	mkdir -p "$d" "$d/run" "$d/log" "$d/ctld" "$d/spool" && chmod 755 "$d" || die "cannot create $d"
	for n in n1 n2 n3 n4; do mkdir -p "$d/spool/$n" "$d/tmp/$n"; done
	port=0
	[ -n "${RM_SLURM_NODES:-}" ] || port=$(free_port_base) || die "no free ports"
	write_conf "$d" "$port" "$plugin" "$@"
}

cmd_conf() {
	d=$1; plugin=${2:-}; [ $# -ge 2 ] && shift 2 || shift $#
	prepare "$d" "$plugin" "$@"
}

cmd_start() {
	d=$1; plugin=${2:-}; [ $# -ge 2 ] && shift 2 || shift $#
	[ -z "${RM_SLURM_NODES:-}" ] || die "start runs every daemon on this host: unset RM_SLURM_NODES"
	prepare "$d" "$plugin" "$@"
	export SLURM_CONF="$d/slurm.conf"
	start_munge "$d" || die "munged did not start (see $d/log/munged.log)"
	slurmctld -i -f "$SLURM_CONF" || die "slurmctld did not start (see $d/log/slurmctld.log)"
	wait_for scontrol ping || die "slurmctld does not answer (see $d/log/slurmctld.log)"
	# The four at once: each runs the plugin's registration (bounded by its timeout) before it detaches.
	for n in n1 n2 n3 n4; do
		slurmd -N "$n" -f "$SLURM_CONF" &
		eval "spid_$n=\$!"
	done
	bad=""
	for n in n1 n2 n3 n4; do eval "wait \$spid_$n" || bad="$bad $n"; done
	[ -z "$bad" ] || die "slurmd -N$bad did not start (see $d/log/slurmd.*.log)"
	wait_for nodes_idle || { sinfo -N >&2; die "nodes did not become idle (see $d/log)"; }
	echo "SLURM_CONF=$SLURM_CONF"
}

# gone PID: the process has exited (a zombie counts: the daemons detached, and whoever inherited them
# may reap them only later).
gone() {
	[ -r "/proc/$1/stat" ] || return 0
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^Z'
}

# kill_pidfiles FILE...: TERM the daemons named in the FILEs at once, wait for them, KILL them after 10 s.
kill_pidfiles() {
	pids=""
	for f in "$@"; do
		[ -s "$f" ] && pid=$(cat "$f") && kill "$pid" 2>/dev/null && pids="$pids $pid"
	done
	i=0
	while [ $i -lt 100 ]; do
		left=""
		for pid in $pids; do gone "$pid" || left="$left $pid"; done
		[ -z "$left" ] && return 0
		sleep 0.1; i=$((i+1))
	done
	for pid in $left; do kill -9 "$pid" 2>/dev/null; done
	return 0
}

# stepd_pids DIR: slurmstepd processes of this cluster (their working directory is under DIR).
stepd_pids() {
	for p in $(pgrep -x slurmstepd 2>/dev/null); do
		case "$(readlink "/proc/$p/cwd" 2>/dev/null)" in "$1"/*) echo "$p" ;; esac
	done
}

cmd_stop() {
	d=$1
	kill_pidfiles "$d/run/slurmd.n1.pid" "$d/run/slurmd.n2.pid" "$d/run/slurmd.n3.pid" "$d/run/slurmd.n4.pid"
	# A step whose tasks hang outlives slurmd: end it (and its tasks, in its process group) by PID.
	for p in $(stepd_pids "$d"); do kill -9 "$p" 2>/dev/null; done
	kill_pidfiles "$d/run/slurmctld.pid" "$d/run/munged.pid"
}

case "${1:-}" in
start) shift; [ $# -ge 1 ] || die "usage: cluster.sh start DIR [PLUGIN [ARGS...]]"; cmd_start "$@" ;;
conf) shift; [ $# -ge 1 ] || die "usage: cluster.sh conf DIR [PLUGIN [ARGS...]]"; cmd_conf "$@" ;;
stop) [ $# -eq 2 ] || die "usage: cluster.sh stop DIR"; cmd_stop "$2" ;;
env) [ $# -eq 2 ] || die "usage: cluster.sh env DIR"; echo "SLURM_CONF=$2/slurm.conf" ;;
stepds) [ $# -eq 2 ] || die "usage: cluster.sh stepds DIR"; stepd_pids "$2" ;;
*) die "usage: cluster.sh start|stop|conf|env|stepds DIR ..." ;;
esac
