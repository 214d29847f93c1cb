#!/bin/sh
# tests/integration/daemon_state.sh: rankmapd's state under faults.
#  1. kill -9 while registrations are being saved, five times: after each restart every registration
#     the daemon had acknowledged as saved is there, and leftovers of interrupted saves are ignored;
#  2. a full disk on the state directory (a 256 KiB tmpfs filled up): register is answered with
#     "saved": false and the reason, the daemon keeps serving, and saves again once space is back.
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
T=$(mktmp)
chmod 755 "$T"
MNT=
rankmapd_on_exit() { [ -n "$MNT" ] && umount "$MNT" 2>/dev/null; }
rankmapd_cleanup "$T"
SOCK=$T/sock
XML=$DATA/plafrim/hwloc/bonobo010.xml
cat >"$T/rankmapd.conf" <<EOC
hwloc_dir = $DATA/daemon/hwloc
socket_mode = 0666
EOC

start() { # state dir
	start_rankmapd "$T/rankmapd.conf" "$SOCK" "$T/d.log" --state-dir "$1"
}
has_host() { "$CTL" distance --socket "$SOCK" "$1" "$1" >/dev/null 2>&1; }

# 1. kill -9 during saves
: >"$T/acked"; : >"$T/unsaved"
for round in 1 2 3 4 5; do
	expect "round $round: daemon starts" start "$T/state"
	( k=0; while :; do
		k=$((k + 1))
		"$CTL" register --force --socket "$SOCK" --xml "$XML" --host "r$round-$k" >/dev/null 2>"$T/reg.err" || break
		# acknowledged as saved; a "could not save" warning is the daemon saying it is not durable
		if grep -q 'could not save' "$T/reg.err"; then echo "r$round-$k" >>"$T/unsaved"; else echo "r$round-$k" >>"$T/acked"; fi
	done ) &
	REG=$!
	sleep "0.$(( (round * 37) % 9 + 1 ))"
	stop_rankmapd
	wait "$REG" 2>/dev/null
done
printf 'garbage' >"$T/state/registrations/.r9-9.xml.tmp" # what a save interrupted before rename leaves
expect "restart after five kill -9" start "$T/state"
missing=0
while read -r h; do has_host "$h" || { missing=$((missing + 1)); echo "missing $h"; }; done <"$T/acked"
expect "all $(wc -l <"$T/acked") acknowledged registrations survived (missing: $missing; answered but not saved: $(wc -l <"$T/unsaved"))" test "$missing" -eq 0
expect "some registrations were made" test "$(wc -l <"$T/acked")" -gt 5
expect "the interrupted save's leftover is ignored" sh -c "! '$CTL' distance --socket '$SOCK' r9-9 r9-9 2>/dev/null"
term_rankmapd

# 2. full disk
MNT=$T/small
mkdir -p "$MNT"
if mount -t tmpfs -o size=256k,mode=0700 tmpfs "$MNT" 2>"$T/mount.err"; then
	expect "daemon starts on a small state filesystem" start "$MNT"
	dd if=/dev/zero of="$MNT/fill" bs=4k count=1000 2>/dev/null # fills it up
	"$CTL" register --force --socket "$SOCK" --xml "$XML" --host full01 --json >"$T/full.json" 2>"$T/full.err"; rc=$?
	expect "register on a full disk still succeeds" test "$rc" -eq 0
	expect "the response says it was not saved" grep -q '"saved": false' "$T/full.json"
	expect "and why" grep -q 'No space left' "$T/full.json"
	expect "rankmapctl warns" grep -q 'could not save' "$T/full.err"
	expect "the daemon logs it" grep -q 'not saved' "$T/d.log"
	expect "the unsaved registration serves" has_host full01
	expect "ping on a full disk" "$CTL" ping --socket "$SOCK"
	expect "no temporary file left behind" sh -c "! ls -a '$MNT/registrations' | grep -q tmp"
	rm -f "$MNT/fill"
	"$CTL" register --force --socket "$SOCK" --xml "$XML" --host full02 --json >"$T/ok.json" 2>&1
	expect "saved again once space is back" grep -q '"saved": true' "$T/ok.json"
	term_rankmapd
	umount "$MNT" && MNT=
else
	notok "cannot mount a tmpfs for the full-disk case: $(cat "$T/mount.err")"
fi
finish
