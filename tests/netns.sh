# tests/netns.sh: separate network hosts on one machine, for the tests of rankmap across a network.
# Sourced by tests/integration/*.sh after tests/lib.sh (POSIX sh; needs root, ip, unshare, munged).
#
#   netns_init DIR               DIR: the test's mktemp -d directory (made 0755 here). Names every
#                                namespace rmt<PID>-<host> (PID: the test's $$) and installs the
#                                EXIT trap that runs netns_cleanup (then the test's netns_on_exit, if
#                                it defines one).
#   netns_setup PROG...          the usual start of such a test: T=$(mktmp) (its scratch directory,
#                                removed at exit unless KEEP is set: this defines netns_on_exit),
#                                netns_init "$T", and the test fails and exits when one of PROG is not
#                                built ($BIN/PROG not executable).
#   netns_add_host NAME...       one network namespace per host, its veth to a bridge that lives in a
#                                namespace of its own (rmt<PID>-br), an address 10.77.0.K/24 (K: 1, 2,
#                                ... in the order hosts are added), loopback up. No route leaves them.
#   netns_addr NAME              the host's address
#   netns_exec NAME CMD...       runs CMD on host NAME (see below), in the foreground
#   netns_spawn NAME CMD...      runs CMD on host NAME in the background; its PID is recorded for the
#                                cleanup and left in NETNS_PID (the command's own PID: nsenter,
#                                unshare and sh all exec)
#   netns_kill PID [SIG]         signals a process started by netns_spawn (default TERM) and reaps it
#   netns_munged NAME [KEY [TAG [ENV...]]]
#                                starts a munged (foreground, by netns_spawn) on host NAME with key file
#                                KEY (default: the test's one shared key, made by netns_init: every
#                                node's munged has the same key, as on a cluster), origin = the host's
#                                address. TAG (default "munge") names its directory $NS_DIR/NAME/TAG.
#                                ENV (e.g. FAKETIME=-600s, with libfaketime preloaded) is set for it.
#                                Waits until it answers; prints nothing; NETNS_PID is its PID.
#   netns_munge_sock NAME [TAG]  the munged socket as seen from outside the host's namespaces
#   netns_rankmapd NAME CONF LOG [PREFIX...]
#                                lib.sh's start_rankmapd on host NAME: rankmapd --config CONF
#                                --foreground (through PREFIX when given, e.g. setpriv to run it as
#                                another user) by netns_spawn, its output appended to LOG; waits until
#                                it logs that it serves (its listeners open). 0 then, NETNS_PID its PID;
#                                1 with LOG shown when it died or did not serve within 15 s.
#   netns_cleanup                kills what netns_spawn started (by PID), then whatever still runs in
#                                this test's namespaces (ip netns pids, i.e. by the names it created),
#                                deletes the namespaces. Idempotent.
#
# What a command run by netns_exec/netns_spawn sees, besides the namespace's network (nsenter into the
# namespace ip netns made; not `ip netns exec`, whose fresh /sys hides /sys/fs/cgroup, which slurmd
# needs): host name NAME (a UTS namespace), a private mount namespace (unshare, mounts propagate in but
# not out) with the test's /etc/hosts (every host's name and address, bind-mounted), an /etc/resolv.conf naming only 127.0.0.1 (a name that is not in the
# hosts file fails at once, inside the namespace), and NETNS_MUNGE_SOCK: one path that is, on every
# host, the socket of that host's own munged (its directory is bind-mounted per host). Slurm's AuthInfo,
# rankmapd.conf's munge_socket and RANKMAP_MUNGE_SOCKET can therefore name the same path everywhere.
#
# Why one munged per host rather than one for all: a MUNGE credential carries the address of the
# munged that made it (its origin), and rankmapd checks a registering node against it; one munged for
# every namespace would give every credential the same origin. All of them share one key, as on a
# cluster, and every socket is a file that the test's other namespaces could reach.
#
# Two runs at once do not meet: namespace names carry the test's PID, interfaces and addresses exist
# only inside the test's own namespaces, and ports are those of each namespace's own stack.

NETNS_NET=10.77.0
NETNS_FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1

# netns_die MSG: fails the test (lib.sh's notok/finish) and exits; the EXIT trap cleans up.
netns_die() { notok "netns: $*"; finish; exit 1; }

netns_setup() {
	T=$(mktmp) || exit 1
	netns_on_exit() { [ -n "${KEEP:-}" ] && echo "# kept $T" || rm -rf "$T"; }
	netns_init "$T"
	for _f in "$@"; do [ -x "$BIN/$_f" ] || { notok "$BIN/$_f is not built"; finish; exit 1; }; done
}

netns_init() {
	NS_DIR=$1/netns
	NS_TAG=rmt$$
	NS_HOSTS=""
	NS_NEXT=1
	[ "$(id -u)" = 0 ] || netns_die "network namespaces need root"
	for c in ip nsenter unshare munged mungekey munge unmunge mount hostname; do
		command -v "$c" >/dev/null 2>&1 || netns_die "required command $c is missing (make deps)"
	done
	chmod 755 "$1" && mkdir -p "$NS_DIR/munge" && chmod 755 "$NS_DIR" "$NS_DIR/munge" || netns_die "cannot create $NS_DIR"
	: >"$NS_DIR/pids"
	NETNS_MUNGE_SOCK=$NS_DIR/munge/munge.sock
	trap 'netns_cleanup; command -v netns_on_exit >/dev/null 2>&1 && netns_on_exit' EXIT
	trap 'exit 1' HUP INT PIPE TERM
	netns_reap_stale
	ip netns list 2>/dev/null | grep -q "^$NS_TAG-" && netns_die "namespaces $NS_TAG-* exist already"
	printf '127.0.0.1 localhost\n::1 localhost\n' >"$NS_DIR/hosts"
	printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"$NS_DIR/resolv.conf"
	mkdir -m 700 "$NS_DIR/key" && mungekey --create --keyfile="$NS_DIR/key/munge.key" >/dev/null 2>&1 ||
		netns_die "mungekey failed"
	ip netns add "$NS_TAG-br" || netns_die "ip netns add $NS_TAG-br failed"
	ip -n "$NS_TAG-br" link set lo up &&
	ip -n "$NS_TAG-br" link add br0 type bridge &&
	ip -n "$NS_TAG-br" link set br0 up || netns_die "cannot make the bridge in $NS_TAG-br"
}

# netns_reap_stale: namespaces rmt<P>-* left by a test whose process P no longer exists (killed before
# its trap ran): their processes are killed and the namespaces deleted. Live tests' are never touched.
netns_reap_stale() {
	for n in $(ip netns list 2>/dev/null | sed -n 's/^\(rmt[0-9][0-9]*-[A-Za-z0-9]*\).*/\1/p'); do
		p=${n#rmt}; p=${p%%-*}
		[ -d "/proc/$p" ] && continue
		for q in $(ip netns pids "$n" 2>/dev/null); do kill -9 "$q" 2>/dev/null; done
		ip netns del "$n" 2>/dev/null
	done
}

netns_add_host() {
	for h in "$@"; do
		case $h in *[!A-Za-z0-9]* | "" | br) netns_die "bad host name '$h'" ;; esac
		[ ${#h} -le 11 ] || netns_die "host name '$h' longer than 11 characters"
		ns=$NS_TAG-$h
		a=$NETNS_NET.$NS_NEXT
		ip netns add "$ns" || netns_die "ip netns add $ns failed"
		ip -n "$ns" link set lo up &&
		ip -n "$NS_TAG-br" link add "v$h" type veth peer name eth0 netns "$ns" &&
		ip -n "$NS_TAG-br" link set "v$h" master br0 &&
		ip -n "$NS_TAG-br" link set "v$h" up &&
		ip -n "$ns" addr add "$a/24" dev eth0 &&
		ip -n "$ns" link set eth0 up || netns_die "cannot wire $ns"
		mkdir -p "$NS_DIR/$h/munge" && chmod 755 "$NS_DIR/$h" "$NS_DIR/$h/munge" || netns_die "mkdir $NS_DIR/$h"
		echo "$a" >"$NS_DIR/$h/addr"
		echo "$a $h" >>"$NS_DIR/hosts"
		NS_HOSTS="$NS_HOSTS $h"
		NS_NEXT=$((NS_NEXT + 1))
	done
}

netns_addr() { cat "$NS_DIR/$1/addr"; }

# The program run inside: host name, hosts file, resolver, the host's munge directory, then CMD.
_netns_inner='h=$1; d=$2; shift 2
hostname "$h" && mount --bind "$d/hosts" /etc/hosts && mount --bind "$d/resolv.conf" /etc/resolv.conf &&
mount --bind "$d/$h/munge" "$d/munge" || { echo "netns: cannot set up host $h" >&2; exit 125; }
exec "$@"'

netns_exec() {
	h=$1; shift
	[ -f "$NS_DIR/$h/addr" ] || { echo "netns: no host $h" >&2; return 125; }
	nsenter --net="/run/netns/$NS_TAG-$h" unshare --mount --propagation slave --uts \
		sh -c "$_netns_inner" sh "$h" "$NS_DIR" "$@"
}

netns_spawn() {
	h=$1; shift
	[ -f "$NS_DIR/$h/addr" ] || { echo "netns: no host $h" >&2; return 125; }
	# Not through netns_exec: a function in the background is a subshell, and $! would be its PID.
	nsenter --net="/run/netns/$NS_TAG-$h" unshare --mount --propagation slave --uts \
		sh -c "$_netns_inner" sh "$h" "$NS_DIR" "$@" &
	NETNS_PID=$!
	echo "$NETNS_PID" >>"$NS_DIR/pids"
}

netns_kill() {
	_netns_ours "$1" && kill "-${2:-TERM}" "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

netns_rankmapd() {
	_h=$1 _c=$2 _l=$3
	shift 3
	_from=1
	[ -f "$_l" ] && _from=$(($(wc -l <"$_l") + 1)) # a restart appends: only its own lines count
	netns_spawn "$_h" "$@" "$BIN/rankmapd" --config "$_c" --foreground >>"$_l" 2>&1
	_i=0
	while [ $_i -lt 150 ]; do
		tail -n +"$_from" "$_l" | grep -q ' serving ' && return 0
		kill -0 "$NETNS_PID" 2>/dev/null || break
		sleep 0.1; _i=$((_i + 1))
	done
	cat "$_l" >&2
	return 1
}

netns_munge_sock() { echo "$NS_DIR/$1/${2:-munge}/munge.sock"; }

netns_munged() {
	h=$1; key=${2:-$NS_DIR/key/munge.key}; tag=${3:-munge}
	[ $# -ge 3 ] && shift 3 || shift $#
	md=$NS_DIR/$h/$tag
	mkdir -p "$md" && chmod 755 "$md" || return 1
	# Inside the host, the default directory is reached through the bind-mounted $NS_DIR/munge.
	[ "$tag" = munge ] && sd=$NS_DIR/munge || sd=$md
	netns_spawn "$h" env "$@" munged --foreground --force --socket="$sd/munge.sock" --key-file="$key" \
		--pid-file="$sd/munged.pid" --log-file="$sd/munged.log" --seed-file="$sd/munged.seed" \
		--origin="$(netns_addr "$h")" 2>>"$md/munged.stderr"
	i=0
	while [ $i -lt 100 ]; do
		munge -S "$md/munge.sock" -n 2>/dev/null | unmunge -S "$md/munge.sock" >/dev/null 2>&1 && return 0
		kill -0 "$NETNS_PID" 2>/dev/null || break
		sleep 0.1; i=$((i + 1))
	done
	cat "$md/munged.log" >&2 2>/dev/null
	return 1
}

# _netns_ours PID: the process exists, is not a zombie, and runs in one of this test's namespaces (a
# recorded PID that ended and was reused elsewhere is never signalled).
_netns_ours() {
	[ -r "/proc/$1/stat" ] && ! sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^Z' || return 1
	case "$(ip netns identify "$1" 2>/dev/null)" in "$NS_TAG"-*) return 0 ;; esac
	return 1
}

netns_cleanup() {
	[ -n "${NS_DIR:-}" ] && [ -f "$NS_DIR/pids" ] || return 0
	for p in $(cat "$NS_DIR/pids"); do _netns_ours "$p" && kill "$p" 2>/dev/null; done
	i=0
	while [ $i -lt 30 ]; do
		alive=0
		for p in $(cat "$NS_DIR/pids"); do _netns_ours "$p" && alive=1; done
		[ $alive = 0 ] && break
		sleep 0.1; i=$((i + 1))
	done
	for h in $NS_HOSTS br; do
		for p in $(ip netns pids "$NS_TAG-$h" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	done
	for h in $NS_HOSTS br; do
		i=0
		while [ -n "$(ip netns pids "$NS_TAG-$h" 2>/dev/null)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		ip netns del "$NS_TAG-$h" 2>/dev/null
	done
	for p in $(cat "$NS_DIR/pids"); do wait "$p" 2>/dev/null; done
	rm -f "$NS_DIR/pids"
}
