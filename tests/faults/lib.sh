# tests/faults/lib.sh: helpers of the fault-injection tests (tests/integration/fault_*.sh), sourced after
# tests/lib.sh. fake_start MODE SOCK starts tests/faults/fake_rankmapd.py (FAKE_PID); fake_stop kills it
# by PID. elapsed_since T0: seconds since T0 (date +%s).
FAKE_PID=""
fake_start() { # MODE SOCK
	rm -f "$2.ready"
	python3 "$TOP/tests/faults/fake_rankmapd.py" "$1" "$2" "$2.ready" 2>>"$2.log" &
	FAKE_PID=$!
	_i=0
	while [ ! -f "$2.ready" ] && [ $_i -lt 200 ]; do sleep 0.1; _i=$((_i + 1)); done
	[ -f "$2.ready" ]
}
fake_stop() {
	[ -n "$FAKE_PID" ] || return 0
	kill "$FAKE_PID" 2>/dev/null
	wait "$FAKE_PID" 2>/dev/null
	FAKE_PID=""
}
# fake_clients SOCK: number of clients the fake daemon has seen
fake_clients() { cat "$1.log" 2>/dev/null | grep -c client; }
elapsed_since() { echo $(( $(date +%s) - $1 )); }
