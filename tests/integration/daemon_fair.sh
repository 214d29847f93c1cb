#!/bin/sh
# tests/integration/daemon_fair.sh: one user cannot stall another's maps. Two real
# unprivileged uids (test users rankmap-fair-a and rankmap-fair-b, created when missing; their clients run
# under setpriv, so the daemon sees them through SO_PEERCRED) against a real rankmapd with 2 workers:
#  1. A keeps two map requests running that never end by themselves (the test-only engine test:sleep,
#     RANKMAP_TEST_FAULTS=1: a stand-in for any long map, whatever the machine's load); then B sends five
#     4-rank maps one after the other, each with the MPI library's 5 s deadline: all five are answered
#     within it (on the reserve worker: A holds both regular ones). With the old single FIFO, A's two
#     requests held both workers and B's first map got no answer. root's map is served as well. In both
#     isolation modes (process: the reserve has its own worker process).
#  1b. One user alone uses every regular worker (the pool is work-conserving): A's two maps that take 5 s
#     each (test:nap:5000) run at once, both answered about 5 s after they were sent (one worker at a
#     time would answer the second after 10 s); A's third, sent while they run, waits for a regular
#     worker (about 10 s after the first two were sent), never the reserve, which is kept for users with
#     nothing running.
#  2. A asks for a `refine` map with time_budget_ms 60000 (the issue's request): the daemon cuts the
#     budget to max_time_budget (2 s by default, 500 ms when configured) and says so in the response's
#     warnings; root's request is not cut, nor B's within the cap.
#  3. The new settings' bounds: max_time_budget above 60 s, max_workers_per_uid above 256 or negative are
#     errors naming the file and line.
. "$(dirname "$0")/../lib.sh"

PY=/usr/bin/python3 # the test users cannot reach a python under /root
[ -x "$PY" ] || PY=python3
T=$(mktmp)
chmod 755 "$T"
BG_PIDS=
rankmapd_on_exit() { for p in $BG_PIDS; do kill "$p" 2>/dev/null; done; }
rankmapd_cleanup "$T"

if [ "$(id -u)" -ne 0 ]; then
	notok "this test runs clients as two other uids: it needs root"
	finish
	exit 1
fi
for u in rankmap-fair-a rankmap-fair-b; do
	id "$u" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$u" 2>/dev/null
done
AUID=$(id -u rankmap-fair-a)
BUID=$(id -u rankmap-fair-b)
expect "two test users exist (uids $AUID and $BUID)" test -n "$AUID" -a -n "$BUID" -a "$AUID" != "$BUID"
asuser() { u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups "$@"; }

# One map request, by tests/raw_client.py (mode map; the test users run it as $PY "$RAW" unix SOCK map ...):
# it prints "<code> <elapsed ms> <warnings or message>", "noanswer <elapsed ms>" when none came in time.
# req SOCK ALGO CART BUDGET_MS TIMEOUT_S: one, as root.
RAW=$TOP/tests/raw_client.py
req() { $PY "$RAW" unix "$1" map "$2" --cart "$3" --budget "$4" --timeout "$5"; }

conf() { # dir, extra lines
	mkdir -p "$T/$1"
	chmod 755 "$T/$1"
	printf 'hwloc_dir = %s/daemon/hwloc\nsocket_mode = 0666\nworker_threads = 2\nworker_time_limit = 90s\n%s\n' \
		"$DATA" "$2" >"$T/$1/rankmapd.conf"
}

# ---- 1. A holds long maps, B's small maps are served within the MPI library's deadline -------------------
mkdir "$T/a" && chown "$AUID" "$T/a" # where A's clients say they sent
hold() { # isolation mode
	conf "one-$1" "isolation = $1"
	SOCK=$T/one-$1/sock
	if ! start_rankmapd_env RANKMAP_TEST_FAULTS=1 "$T/one-$1/rankmapd.conf" "$SOCK" "$T/one-$1/log" --state-dir "$T/one-$1/state"; then
		notok "$1: rankmapd did not start: $(tail -3 "$T/one-$1/log")"
		return
	fi
	rm -f "$T/a/"*.sent "$T/a1.out" "$T/a2.out"
	for i in 1 2; do
		asuser rankmap-fair-a $PY "$RAW" unix "$SOCK" map test:sleep --cart 2x2 --budget 0 --timeout 300 --sent "$T/a/$i.sent" >"$T/a$i.out" 2>&1 &
		BG_PIDS="$BG_PIDS $!"
	done
	n=0
	while [ $n -lt 100 ] && ! { [ -e "$T/a/1.sent" ] && [ -e "$T/a/2.sent" ]; }; do sleep 0.1; n=$((n + 1)); done
	expect "$1: A's two long maps are sent" test -e "$T/a/1.sent" -a -e "$T/a/2.sent"
	sleep 1 # the daemon has queued both (frames of a few hundred bytes, read at once)
	worst=0 okn=0
	for i in 1 2 3 4 5; do
		r=$(asuser rankmap-fair-b $PY "$RAW" unix "$SOCK" map treematch --cart 2x2 --budget 0 --timeout 5)
		echo "$1: B map $i: $r"
		set -- "$1" $r
		[ "$2" = ok ] && [ "$3" -lt 5000 ] && okn=$((okn + 1))
		[ "${3:-99999}" -gt "$worst" ] && worst=${3:-99999}
	done
	expect "$1: while A holds long maps on both workers, B's five maps are all answered within 5 s (worst $worst ms)" \
		test "$okn" -eq 5
	r=$(req "$SOCK" treematch 2x2 0 5)
	set -- "$1" $r
	expect "$1: root's map too ($r)" test "$2" = ok
	expect "$1: A's two long maps are still running (no answer yet)" test ! -s "$T/a1.out" -a ! -s "$T/a2.out"
	for p in $BG_PIDS; do kill "$p" 2>/dev/null; done
	BG_PIDS=
	stop_rankmapd
}
# both isolation modes: the reserve is a thread, and with isolation = process its own worker process
# (GCC 12's ASan cannot fork worker processes from a threaded rankmapd: thread only under SANITIZE=1)
ldd "$BIN/rankmapd" 2>/dev/null | grep -q libasan || hold process
hold thread

# ---- 1b. one user alone uses every regular worker; the reserve is not for it -------------------------------
conf solo ""
SOCK=$T/solo/sock
if start_rankmapd_env RANKMAP_TEST_FAULTS=1 "$T/solo/rankmapd.conf" "$SOCK" "$T/solo/log" --state-dir "$T/solo/state"; then
	rm -f "$T/a/"*.sent
	for i in 1 2; do
		asuser rankmap-fair-a $PY "$RAW" unix "$SOCK" map test:nap:5000 --cart 2x2 --budget 0 --timeout 60 --sent "$T/a/$i.sent" >"$T/n$i.out" 2>&1 &
		eval "N$i=\$!"
	done
	n=0
	while [ $n -lt 100 ] && ! { [ -e "$T/a/1.sent" ] && [ -e "$T/a/2.sent" ]; }; do sleep 0.1; n=$((n + 1)); done
	sleep 1 # both started (or the second queued, with one worker at a time)
	asuser rankmap-fair-a $PY "$RAW" unix "$SOCK" map test:nap:5000 --cart 2x2 --budget 0 --timeout 60 >"$T/n3.out" 2>&1 &
	N3=$!
	wait "$N1" "$N2" "$N3"
	for i in 1 2 3; do echo "A nap $i: $(cat "$T/n$i.out")"; done
	set -- $(cat "$T/n1.out") x 99999
	e1=$2
	set -- $(cat "$T/n2.out") x 99999
	e2=$2
	set -- $(cat "$T/n3.out") x 0
	e3=$2 c3=$1
	expect "one user alone: its two 5 s maps ran at once on the 2 workers (answered after $e1 and $e2 ms; one at a time would take 10 s for the second)" \
		test "$e1" -ge 5000 -a "$e1" -lt 7500 -a "$e2" -ge 5000 -a "$e2" -lt 7500
	expect "its third waited for a regular worker, not the reserve (answered after $e3 ms, about 4 s later than on the reserve; $c3)" \
		test "$c3" = failed -a "$e3" -ge 7000
	stop_rankmapd
else
	notok "rankmapd (solo) did not start: $(tail -3 "$T/solo/log")"
fi

# ---- 2. time budgets a waiting MPI job can afford ------------------------------------------------------------
check_budget() { # conf dir, extra, cap
	conf "$1" "$2"
	SOCK=$T/$1/sock
	if ! start_rankmapd "$T/$1/rankmapd.conf" "$SOCK" "$T/$1/log" --state-dir "$T/$1/state"; then
		notok "rankmapd ($1) did not start: $(tail -3 "$T/$1/log")"
		return
	fi
	r=$(asuser rankmap-fair-a $PY "$RAW" unix "$SOCK" map refine --cart 4x4 --budget 60000 --timeout 120)
	case "$r" in
	ok*"time_budget_ms 60000 cut to max_time_budget $3 ms"*) ok "A's refine with time_budget_ms 60000: cut to $3 ms, with a warning" ;;
	*) notok "A's refine with time_budget_ms 60000 is not cut to $3 ms: $r" ;;
	esac
	r=$(req "$SOCK" refine 4x4 $(($3 + 100)) 120)
	case "$r" in
	"ok "*"[]") ok "root's budget above the cap is not cut" ;;
	*) notok "root's budget: $r" ;;
	esac
	r=$(asuser rankmap-fair-b $PY "$RAW" unix "$SOCK" map refine --cart 4x4 --budget $(($3 / 2)) --timeout 120)
	case "$r" in
	"ok "*"[]") ok "B's budget within the cap is not cut" ;;
	*) notok "B's budget within the cap: $r" ;;
	esac
	stop_rankmapd
}
check_budget two "" 2000
check_budget three "max_time_budget = 500ms" 500

# ---- 3. the settings' bounds ---------------------------------------------------------------------------------
for bad in "max_time_budget = 61s" "max_time_budget = 0" "max_workers_per_uid = 257" "max_workers_per_uid = -1"; do
	printf 'state_dir = %s/x\n%s\n' "$T" "$bad" >"$T/bad.conf"
	out=$("$BIN/rankmapd" --config "$T/bad.conf" --print-config 2>&1)
	rc=$?
	case "$out" in
	*"$T/bad.conf:2"*"${bad%% *}"*) [ $rc -ne 0 ] && ok "'$bad' refused naming the file and line" || notok "'$bad': exit 0" ;;
	*) notok "'$bad' not refused as expected (exit $rc): $out" ;;
	esac
done
out=$("$BIN/rankmapd" --config "$T/two/rankmapd.conf" --print-config 2>&1)
case "$out" in
*"max_workers_per_uid = 0"*"max_time_budget = 2s"*) ok "defaults: max_workers_per_uid 0 (no bound), max_time_budget 2 s" ;;
*) notok "defaults not printed: $out" ;;
esac
finish
