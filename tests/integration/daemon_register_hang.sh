#!/bin/sh
# tests/integration/daemon_register_hang.sh: hwloc's parser in rankmapd is a program of its own, and a
# registration whose parse hangs is refused as transient, with nothing of it kept (tests/FAULTS.md).
#  - rankmapd's parser child is rankmapd exec'd again ("--hwloc-parser-child PID", one thread), not a fork
#    of the threaded daemon: a fork inherits the locks its other threads held (GCC 12's ASan allocator:
#    the sanitized daemon_register_incr hung a parse to its 30 s limit in CI).
#  - The parser really hung (SIGSTOP): the registration of new hardware gets `timeout` within the parse
#    limit (30 s) plus a margin, naming the parser and saying to register again; the host is neither in
#    the model nor in the state directory; the stopped child is killed and reaped.
#  - The same registration sent again is ok (a new parser child), saved, and the host has its hardware.
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
T=$(mktmp)
chmod 755 "$T"
rankmapd_cleanup "$T"
H=$DATA/plafrim/hwloc
printf 'hwloc_dir = %s\n' "$DATA/daemon/hwloc" >"$T/rankmapd.conf"

# known HOST: the daemon's model has HOST (a distance from it to itself), its answer in $T/dist
known() { "$CTL" distance --socket "$T/sock" "$1" "$1" >"$T/dist" 2>&1; }
# parser_child: the PID of the daemon's hwloc parser child (none: empty)
parser_child() {
	for c in $(ps -o pid= --ppid "$D_PID"); do
		tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null | grep -q -- "--hwloc-parser-child $D_PID" && echo "$c"
	done
}

expect "rankmapd starts" start_rankmapd "$T/rankmapd.conf" "$T/sock" "$T/log" --state-dir "$T/state"
expect "bonobo001 registers" "$CTL" register --socket "$T/sock" --xml "$H/bonobo001.xml" --host bonobo001
P=$(parser_child)
[ -n "$P" ] && ok "the parser child ($P) is rankmapd exec'd with --hwloc-parser-child $D_PID" ||
	notok "no child of rankmapd runs as --hwloc-parser-child (children: $(ps -o pid=,args= --ppid "$D_PID" | tr '\n' ';'))"
[ -n "$P" ] && [ "$(awk '/^Threads:/ {print $2}' "/proc/$P/status")" = 1 ] &&
	ok "the parser child has one thread" || notok "parser child threads: $(grep Threads "/proc/$P/status" 2>/dev/null)"
[ -n "$P" ] && [ "$(readlink "/proc/$P/exe")" = "$(readlink -f "$BIN/rankmapd")" ] &&
	ok "the parser child runs rankmapd's binary" || notok "parser child's program: $(readlink "/proc/$P/exe" 2>/dev/null)"

# the parser hangs for real: a registration of new hardware waits for it, then is refused as transient
if [ -n "$P" ]; then
	kill -STOP "$P"
	t0=$(date +%s)
	"$CTL" register --socket "$T/sock" --xml "$H/fourmi001.xml" --host fourmi001 --timeout 120000 >"$T/out" 2>"$T/err"
	rc=$? t1=$(date +%s)
	[ "$rc" -ne 0 ] && grep -q "timeout" "$T/err" && grep -q "hwloc's parser.*no result within 30000 ms" "$T/err" &&
		grep -q "register again" "$T/err" && ok "a hung parse is refused as timeout, saying to register again (exit $rc, $((t1 - t0)) s)" ||
		notok "hung parse: exit $rc: $(cat "$T/err" "$T/out")"
	[ $((t1 - t0)) -le 60 ] && ok "refused within the 30 s parse limit and a margin ($((t1 - t0)) s)" ||
		notok "refused after $((t1 - t0)) s"
	known bonobo001 && ! known fourmi001 && grep -q "unknown host 'fourmi001'" "$T/dist" &&
		ok "the model has bonobo001 and not fourmi001" || notok "distance to fourmi001: $(cat "$T/dist")"
	! ls "$T/state/registrations" 2>/dev/null | grep -q fourmi001 && ls "$T/state/registrations" | grep -q bonobo001 &&
		ok "fourmi001's registration was not saved" || notok "saved: $(ls "$T/state/registrations" 2>&1 | tr '\n' ' ')"
	n=0
	while [ -e "/proc/$P" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
	[ ! -e "/proc/$P" ] && ok "the hung parser child was killed and reaped" || notok "parser child $P still there: $(cat "/proc/$P/stat")"
	kill -CONT "$P" 2>/dev/null
	expect "fourmi001 registers again: ok" "$CTL" register --socket "$T/sock" --xml "$H/fourmi001.xml" --host fourmi001
	known fourmi001 && ls "$T/state/registrations" | grep -q fourmi001 &&
		ok "fourmi001 is now in the model and saved" || notok "after the second registration: $(cat "$T/dist")"
	P2=$(parser_child)
	[ -n "$P2" ] && [ "$P2" != "$P" ] && ok "a new parser child ($P2) served it" || notok "parser child after: '$P2'"
else
	notok "no parser child to hang"
fi
expect "rankmapd stops cleanly" term_rankmapd
finish
