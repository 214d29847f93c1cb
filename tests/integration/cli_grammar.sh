#!/bin/sh
# tests/integration/cli_grammar.sh: one command-line grammar across rankmapctl's commands: `help CMD`,
# -V/--version, -j/--json, -s/--server (--socket alias), -t/--timeout on every command that can ask
# rankmapd (a server that never answers is given up on in time), every error prefixed "rankmapctl CMD:",
# report/map/slurm-topology/order/simulate asking the daemon when given no files (its default socket, then
# a real one through RANKMAP_SOCKET or RANKMAP_SERVER), hwloc's own reason for a bad synthetic description, `patterns list` with
# nothing learned, progress on standard error past 2 s, and the aliases --engine/--algo,
# --matrix/--pattern with JSON's one "engine" key. And rankmapd: a start-up error printed once in the
# foreground, --print-config in one style of units.
. "$(dirname "$0")/../lib.sh"

R=$BIN/rankmapctl
PY=/usr/bin/python3
T=$(mktmp)
rankmapd_cleanup "$T"
SILENT_PID=
rankmapd_on_exit() { [ -n "$SILENT_PID" ] && kill "$SILENT_PID" 2>/dev/null && wait "$SILENT_PID" 2>/dev/null; }
ALL="report map order simulate slurm-topology explain patterns distance ping register reload"
DAEMON_CMDS=$ALL # every command can ask rankmapd
JSON_CMDS="report map simulate explain patterns distance ping register reload"
VERSION=$("$R" --version)

# help, version
for c in $ALL; do
	"$R" help "$c" >"$T/h1" 2>&1; r1=$?
	"$R" "$c" --help >"$T/h2" 2>&1
	[ $r1 -eq 0 ] && [ -s "$T/h1" ] && cmp -s "$T/h1" "$T/h2" && ok "help $c prints $c --help" || notok "help $c"
	[ "$("$R" "$c" -V)" = "$VERSION" ] && [ "$("$R" "$c" --version)" = "$VERSION" ] && ok "$c -V and --version" ||
		notok "$c -V: $("$R" "$c" -V 2>&1 | head -1)"
done
for c in $ALL; do
	"$R" help "$c" >"$T/h" 2>&1
	grep -q -- "-t, --timeout MS" "$T/h" && grep -q -- "--progress" "$T/h" && grep -q -- "-V, --version" "$T/h" &&
		grep -q -- "-s, --server LIST" "$T/h" && ok "$c --help lists the common options" || notok "$c --help lacks a common option"
done
[ "$("$R" -V)" = "$VERSION" ] && ok "rankmapctl -V" || notok "rankmapctl -V: $("$R" -V 2>&1)"
"$R" help nosuch >/dev/null 2>"$T/e"; [ $? -eq 2 ] && grep -q "^rankmapctl help: unknown command 'nosuch'" "$T/e" &&
	ok "help of an unknown command: 2" || notok "help nosuch: $(cat "$T/e")"

# errors start "rankmapctl CMD:" (getopt's own too), usage errors exit 2
for c in $ALL; do
	"$R" "$c" --no-such-option >/dev/null 2>"$T/e"; r=$?
	[ $r -eq 2 ] && head -n 1 "$T/e" | grep -q "^rankmapctl $c: .*no-such-option" && ok "$c: unknown option: 'rankmapctl $c:', 2" ||
		notok "$c --no-such-option: exit $r, $(head -n 1 "$T/e")"
done
# -j is --json wherever there is one: known as a short option (the error is about the next option)
for c in $JSON_CMDS; do
	"$R" "$c" -j --no-such-option >/dev/null 2>"$T/e"
	head -n 1 "$T/e" | grep -q "no-such-option" && ! grep -q "invalid option -- 'j'" "$T/e" && ok "$c -j is --json" ||
		notok "$c -j: $(head -n 1 "$T/e")"
	"$R" help "$c" | grep -q -- "-j, --json" && ok "$c --help lists -j, --json" || notok "$c --help: no -j"
done
# --timeout on every command that asks the daemon: checked, and obeyed (a server that accepts and never answers)
for c in $DAEMON_CMDS; do
	"$R" "$c" --timeout abc >/dev/null 2>"$T/e"; r=$?
	[ $r -eq 2 ] && grep -q "^rankmapctl $c: --timeout: 'abc'" "$T/e" && ok "$c: --timeout checked" ||
		notok "$c --timeout abc: exit $r, $(head -n 1 "$T/e")"
done
$PY -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(64)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)' "$T/silent.sock" &
SILENT_PID=$!
n=0; while [ ! -S "$T/silent.sock" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
# (distance needs two hosts, map a matrix, explain a matrix, patterns a verb; ping, reload, report,
# slurm-topology, simulate none)
for args in "ping" "reload" "report" "slurm-topology" "distance a b" "map --cart 2x2 --hosts h1" \
	"explain --cart 2x2 --hosts h1" "patterns list" "simulate --dims 4x4x4 --jobs 10" "order --method xyz"; do
	s=$(date +%s)
	# shellcheck disable=SC2086
	timeout 60 "$R" $args -s "$T/silent.sock" -t 700 >/dev/null 2>"$T/e"; r=$?
	el=$(($(date +%s) - s))
	[ $r -eq 1 ] && [ $el -le 15 ] && grep -q "^rankmapctl ${args%% *}: " "$T/e" && ok "${args%% *} -t 700 gives up on a silent server (${el} s)" ||
		notok "${args%% *} -t 700: exit $r after $el s: $(head -n 1 "$T/e")"
done

# no files: report, map, slurm-topology, order and simulate (no --torus, no --dims) ask the daemon; without
# any address, its default socket
for args in "report" "map --cart 2x2" "slurm-topology" "order" "simulate --jobs 5"; do
	env -u RANKMAP_SERVER -u RANKMAP_SOCKET "$R" $args >/dev/null 2>"$T/e"; r=$?
	[ $r -eq 1 ] && grep -q "/run/rankmapd/rankmapd.sock" "$T/e" && ok "${args%% *} without files asks the default socket" ||
		notok "${args%% *} without files: exit $r, $(head -n 1 "$T/e")"
done
printf 'cluster = %s\nsocket_mode = 0666\n' "$DATA/example/cluster.conf" >"$T/d.conf"
if start_rankmapd "$T/d.conf" "$T/d.sock" "$T/d.log" --state-dir "$T/state"; then
	RANKMAP_SOCKET=$T/d.sock "$R" report -j >"$T/rep.json" 2>"$T/e" && grep -q '"hosts"' "$T/rep.json" &&
		ok "report -j without files: the daemon's report" || notok "report through RANKMAP_SOCKET: $(cat "$T/e")"
	RANKMAP_SOCKET=$T/d.sock "$R" map --cart 4x4 --hosts 'fourmi[001-002]' -j >"$T/m.json" 2>"$T/e" &&
		grep -q '"engine"' "$T/m.json" && ok "map without files: the daemon maps" || notok "map through RANKMAP_SOCKET: $(cat "$T/e")"
	RANKMAP_SOCKET=$T/d.sock "$R" slurm-topology >"$T/topo.conf" 2>"$T/e" && grep -q '^SwitchName=' "$T/topo.conf" &&
		ok "slurm-topology without files: the daemon's topology.conf" || notok "slurm-topology through RANKMAP_SOCKET: $(cat "$T/e")"
	"$R" ping --server "$T/d.sock" >/dev/null && "$R" ping --socket "$T/d.sock" >/dev/null && "$R" ping -s "$T/d.sock" >/dev/null &&
		ok "--server, --socket and -s name the same daemon" || notok "--server/--socket/-s"
else
	notok "rankmapd did not start: $(tail -3 "$T/d.log")"
fi
# order and simulate without --torus or --dims: the torus of the daemon's model (a second rankmapd, whose
# cluster has one), through RANKMAP_SOCKET and RANKMAP_SERVER, the same as offline on that torus file
TORUS=$DATA/torus/small-table.conf
printf 'torus = %s\n' "$TORUS" >"$T/torus-cluster.conf"
printf 'cluster = %s\nsocket_mode = 0666\n' "$T/torus-cluster.conf" >"$T/t.conf"
if start_rankmapd "$T/t.conf" "$T/t.sock" "$T/t.log" --state-dir "$T/tstate"; then
	"$R" order --torus "$TORUS" --method hilbert >"$T/o.local" 2>"$T/e"
	env -u RANKMAP_SERVER RANKMAP_SOCKET="$T/t.sock" "$R" order --method hilbert >"$T/o.sock" 2>>"$T/e" &&
		[ -s "$T/o.local" ] && cmp -s "$T/o.local" "$T/o.sock" &&
		ok "order without --torus or --dims (RANKMAP_SOCKET): the daemon's torus, as offline" ||
		notok "order through RANKMAP_SOCKET: $(head -n 2 "$T/e")"
	env -u RANKMAP_SOCKET RANKMAP_SERVER="$T/t.sock" "$R" order --method hilbert >"$T/o.srv" 2>"$T/e" &&
		cmp -s "$T/o.local" "$T/o.srv" && ok "order (RANKMAP_SERVER): the same" ||
		notok "order through RANKMAP_SERVER: $(head -n 2 "$T/e")"
	"$R" simulate --torus "$TORUS" --jobs 20 --seed 3 -j >"$T/s.local" 2>"$T/e"
	env -u RANKMAP_SERVER RANKMAP_SOCKET="$T/t.sock" "$R" simulate --jobs 20 --seed 3 -j >"$T/s.sock" 2>>"$T/e" &&
		grep -q '"methods"' "$T/s.sock" && cmp -s "$T/s.local" "$T/s.sock" &&
		ok "simulate without --torus or --dims (RANKMAP_SOCKET): the daemon's torus, as offline" ||
		notok "simulate through RANKMAP_SOCKET: $(head -n 2 "$T/e"; diff "$T/s.local" "$T/s.sock" | head -4)"
	env -u RANKMAP_SERVER RANKMAP_SOCKET="$T/t.sock" "$R" order --dims 4x4x4 --method xyz >"$T/o.dims" 2>"$T/e" &&
		[ "$(wc -l <"$T/o.dims")" -eq 64 ] && ok "order --dims stays offline (64 nodes of the 4x4x4 torus)" ||
		notok "order --dims: $(head -n 2 "$T/e")"
else
	notok "the torus rankmapd did not start: $(tail -3 "$T/t.log")"
fi

# hwloc's reason for a synthetic description it refuses
"$R" report --hwloc 'synthetic:pack:2 core:4@h' >/dev/null 2>"$T/e"; r=$?
[ $r -eq 1 ] && grep -q "^rankmapctl report: .*non-PU type for last level" "$T/e" && ok "--hwloc synthetic: hwloc's reason" ||
	notok "--hwloc synthetic: exit $r, $(cat "$T/e")"

"$R" distance a b --hwloc 'synthetic:pack:2 core:4@a,b' >/dev/null 2>"$T/e"
grep -q "^rankmapctl distance: .*non-PU type for last level" "$T/e" && ok "distance --hwloc synthetic: hwloc's reason" ||
	notok "distance --hwloc synthetic: $(cat "$T/e")"

# patterns list, nothing learned: no pattern, exit 0
HOME=$T/newhome RANKMAP_LEARN_DIR= "$R" patterns list >"$T/pl" 2>"$T/e"; r=$?
[ $r -eq 0 ] && [ ! -s "$T/e" ] && [ ! -s "$T/pl" ] && ok "patterns list with nothing learned: nothing, 0" ||
	notok "patterns list: exit $r, $(cat "$T/e")"
HOME=$T/newhome RANKMAP_LEARN_DIR= "$R" patterns list -j >"$T/pl" 2>&1 && grep -q '"patterns": \[\]' "$T/pl" &&
	ok "patterns list -j with nothing learned: []" || notok "patterns list -j: $(cat "$T/pl")"

# progress: past 2 s on standard error with --progress (a silent server keeps map waiting 3 s); nothing
# without it when standard error is not a terminal; nothing for quick work
"$R" map --cart 2x2 --hosts h1 -s "$T/silent.sock" -t 3500 --progress >/dev/null 2>"$T/e"
grep -q "^rankmapctl map: [2-9] s, rankmapd is mapping" "$T/e" && ok "--progress: elapsed time and phase past 2 s" ||
	notok "--progress: $(cat "$T/e")"
"$R" map --cart 2x2 --hosts h1 -s "$T/silent.sock" -t 3500 >/dev/null 2>"$T/e"
! grep -q " s, " "$T/e" && ok "no progress when standard error is not a terminal" || notok "progress without --progress: $(cat "$T/e")"
"$R" map --cart 2x2 --topology 'tleaf 1 4 1' --progress >/dev/null 2>"$T/e"
[ ! -s "$T/e" ] && ok "no progress for work under 2 s" || notok "quick work: $(cat "$T/e")"
if command -v script >/dev/null; then
	script -qec "'$R' map --cart 2x2 --hosts h1 -s '$T/silent.sock' -t 3500" /dev/null >"$T/tty" 2>&1
	grep -q "rankmapd is mapping" "$T/tty" && ok "progress on a terminal without --progress" || notok "tty progress: $(cat -v "$T/tty")"
fi

# aliases: --engine/--algo, --matrix/--pattern; JSON has engine, not algo
TL='tleaf 2 2 10 4 1'
"$R" map --matrix "$DATA/patterns/ring8.mtx" --topology "$TL" --engine treematch --out "$T/p1" -j >"$T/j1" &&
	"$R" map --pattern "$DATA/patterns/ring8.mtx" --topology "$TL" --algo treematch --out "$T/p2" >/dev/null &&
	cmp -s "$T/p1" "$T/p2" && ok "--matrix/--engine and --pattern/--algo: the same mapping" || notok "aliases differ"
grep -q '"engine": *"treematch"' "$T/j1" && ! grep -q '"algo"' "$T/j1" && ok "map --json: engine, no algo" || notok "map JSON: $(cat "$T/j1")"
"$R" explain --matrix "$DATA/patterns/ring8.mtx" --topology "$TL" --engine treematch -j >"$T/x1" &&
	grep -q '"engine": *"treematch"' "$T/x1" && ! grep -q '"algo"' "$T/x1" && ok "explain --matrix --engine, JSON engine" ||
	notok "explain JSON: $(cat "$T/x1")"
"$R" map --cart 2x2 --topology "$TL" --engine metis >/dev/null 2>"$T/e"; r=$?
[ $r -eq 2 ] && grep -q "^rankmapctl map: unknown --engine 'metis'" "$T/e" && ok "unknown --engine: 2, named" || notok "bad engine: $(cat "$T/e")"

# rankmapd: a start-up error printed once in the foreground; --print-config in one style of units,
# stated, and read back to the same settings
printf 'cluster = %s/nonexistent\n' "$T" >"$T/bad.conf"
"$BIN/rankmapd" --config "$T/bad.conf" --socket "$T/bad.sock" --state-dir "$T/badstate" --foreground >"$T/e" 2>&1
[ "$(grep -c nonexistent "$T/e")" = 1 ] && ok "rankmapd: a start-up error is printed once in the foreground" ||
	notok "rankmapd prints: $(cat "$T/e")"
"$BIN/rankmapd" --config "$TOP/conf/rankmapd.conf" --print-config >"$T/pc1" &&
	"$BIN/rankmapd" --config "$T/pc1" --print-config >"$T/pc2" && cmp -s "$T/pc1" "$T/pc2" &&
	ok "rankmapd --print-config reads back to the same settings" || notok "--print-config round trip"
grep -q '^# .*Units: durations in seconds' "$T/pc1" && ! grep -Eq '^[a-z_]+ = [0-9]+000ms$' "$T/pc1" &&
	grep -qx 'auth_timeout = 2s' "$T/pc1" && grep -qx 'ib_refresh = 600s' "$T/pc1" && grep -qx 'max_frame_size = 16M' "$T/pc1" &&
	ok "--print-config: whole seconds in s, sizes with k/M/G, units stated" || notok "--print-config units: $(grep -E 'timeout|refresh|size' "$T/pc1")"
finish
