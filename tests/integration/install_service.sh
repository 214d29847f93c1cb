#!/bin/sh
# tests/integration/install_service.sh: rankmapd as its unit runs it. Installed with PREFIX=$T/inst
# (so SYSCONFDIR=$T/inst/etc, no DESTDIR), rankmapd without --config reads the installed
# $T/inst/etc/rankmap/rankmapd.conf (here pointed at the installed example cluster), says READY=1 on
# NOTIFY_SOCKET once it serves, serves report, map (in worker processes), distance and a reload, and
# every system call it and its worker processes make (traced with strace) is allowed by the unit's
# SystemCallFilter (systemd-analyze syscall-filter's sets), so the hardened service does not get EPERM.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
T=$(mktmp)
trap 'stop_rankmapd; [ -n "$N_PID" ] && kill "$N_PID" 2>/dev/null; rm -rf "$T"' EXIT
SAN=
ldd "$BIN/rankmapd" 2>/dev/null | grep -q libasan && SAN=SANITIZE=1
cp -a "$BIN" "$T/b" || exit 1
P=$T/inst
expect "make install PREFIX=\$T/inst" sh -c "make --no-print-directory B='$T/b' $SAN install PREFIX='$P' >'$T/log' 2>&1"
[ -x "$P/sbin/rankmapd" ] || { cat "$T/log"; finish; exit 1; }
C=$P/etc/rankmap/rankmapd.conf
expect "SYSCONFDIR defaults to PREFIX/etc: $C installed" test -s "$C"
expect "rankmapd's compiled default is SYSCONFDIR/rankmap/rankmapd.conf" \
	sh -c "'$P/sbin/rankmapd' --help | grep -q 'default $C'"
echo "cluster = $P/etc/rankmap/cluster.conf.example" >>"$C"
# sanitized: worker threads, not processes (GCC 12's ASan cannot fork worker processes from a threaded
# rankmapd safely: a forked worker can hang on its first allocation; daemon_isolation skips the same)
[ -n "$SAN" ] && echo "isolation = thread" >>"$C"

mkdir -m 700 "$T/state"
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); s.settimeout(120)
out = open(sys.argv[2], "w")
for _ in range(2):
    try: out.write(s.recv(4096).decode() + "\n"); out.flush()
    except socket.timeout: break
' "$T/notify" "$T/notified" &
N_PID=$!
n=0
while [ ! -S "$T/notify" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
TRACE=
if command -v strace >/dev/null 2>&1; then
	TRACE="strace -f -c -o $T/strace"
fi
# LeakSanitizer cannot stop the world of a process strace traces: leaks are checked by the other tests
[ -n "$SAN" ] && [ -n "$TRACE" ] && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
NOTIFY_SOCKET=$T/notify $TRACE "$P/sbin/rankmapd" --socket "$T/sock" --state-dir "$T/state" --foreground \
	>"$T/d.log" 2>&1 &
D_PID=$!
PID=$D_PID # the daemon itself (under strace, strace's child)
if [ -n "$TRACE" ]; then
	n=0
	while PID=$(ps -o pid= --ppid "$D_PID" | tr -d ' ') && [ -z "$PID" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
fi
n=0
while ! grep -q READY=1 "$T/notified" 2>/dev/null && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
expect "rankmapd without --config says READY=1" grep -q '^READY=1' "$T/notified"
# under strace, the daemon is the child of strace that runs rankmapd (looked up again once it is ready:
# strace's own short-lived children are not it)
[ -n "$TRACE" ] && PID=$(ps -o pid=,comm= --ppid "$D_PID" | awk '$2 == "rankmapd" { print $1; exit }')
CTL=$P/bin/rankmapctl
"$CTL" report --socket "$T/sock" >"$T/report" 2>&1
expect "it serves the installed default configuration's cluster (122 hosts with hardware)$(grep -q 'hosts with hardware *122$' "$T/report" || head -c 300 "$T/report")" \
	grep -q 'hosts with hardware *122$' "$T/report"
expect "map through it (worker processes)" \
	sh -c "'$CTL' map --cart 4x4 --socket '$T/sock' --hosts 'bonobo[001-004]' >'$T/map' 2>&1"
expect "distance through it" sh -c "'$CTL' distance bonobo001 bonobo002 --socket '$T/sock' >/dev/null 2>&1"
kill -HUP "$PID"
n=0
while ! "$CTL" ping --socket "$T/sock" 2>/dev/null | grep -q 'generation 2' && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
expect "a reload (SIGHUP) builds generation 2" sh -c "'$CTL' ping --socket '$T/sock' | grep -q 'generation 2'"
kill "$PID"
wait "$D_PID"
rc=$?
expect "rankmapd stops cleanly (status $rc)$([ $rc -eq 0 ] || tail -c 400 "$T/d.log")" test $rc -eq 0
D_PID=
wait "$N_PID"
N_PID=
expect "and says STOPPING=1" grep -q '^STOPPING=1' "$T/notified"
grep -q 'no configuration file' "$T/d.log" && notok "rankmapd said it had no configuration file"

if [ -z "$TRACE" ]; then
	skip "strace is not installed (make deps installs it): the unit's SystemCallFilter is not checked"
elif ! command -v systemd-analyze >/dev/null 2>&1; then
	skip "systemd-analyze is not installed (systemd): the unit's SystemCallFilter is not checked"
else
	U=$P/lib/systemd/system/rankmapd.service
	systemd-analyze syscall-filter 2>/dev/null >"$T/sets"
	awk '$NF ~ /^[a-z_0-9]+$/ && $1 != "%" && $1 != "------" { print $NF }' "$T/strace" | grep -v '^total$' | sort -u >"$T/used"
	expect "strace saw the daemon's system calls" test "$(wc -l <"$T/used")" -gt 20
	cat >"$T/filter.py" <<'EOF'
import re, sys
sets, cur = {}, None
for line in open(sys.argv[1]):
    s = line.strip()
    if not s or s.startswith("#"):
        continue
    if not line.startswith(" "):
        cur = sets.setdefault(s, set())
    else:
        cur.add(s)
def expand(name, seen=()):
    if not name.startswith("@"):
        return {name}
    out = set()
    for m in sets.get(name, ()):
        if m not in seen:
            out |= expand(m, seen + (name,))
    return out
allow, deny = set(expand("@default")), set()
for line in open(sys.argv[2]):
    m = re.match(r"^SystemCallFilter=(~?)(.*)$", line.strip())
    if m:
        names = set().union(*[expand(x) for x in m.group(2).split()])
        (deny if m.group(1) else allow).update(names)
allowed = allow - deny
for sc in open(sys.argv[3]):
    sc = sc.strip()
    if sc and sc not in allowed:
        print(sc)
EOF
	python3 "$T/filter.py" "$T/sets" "$U" "$T/used" >"$T/denied"
	expect "every system call of rankmapd and its workers passes the unit's SystemCallFilter: $(tr '\n' ' ' <"$T/denied")" \
		test ! -s "$T/denied"
	echo reboot >>"$T/used"
	expect "the filter check can fail (reboot is denied)" \
		sh -c "python3 '$T/filter.py' '$T/sets' '$U' '$T/used' | grep -qx reboot"
fi
finish
