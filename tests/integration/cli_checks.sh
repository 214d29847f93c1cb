#!/bin/sh
# tests/integration/cli_checks.sh: rankmapctl refuses inputs that used to be accepted wrongly or
# failed without a word, each with exit status 1 and one message naming the file or the field:
#  - patterns whose weights are each finite but sum beyond a double (Matrix Market, both metric
#    columns, dense), Cartesian weights doing the same, and a cost (weights x distances) that
#    overflows: before, `map` exited 1 with no message;
#  - order/simulate --dims with an extent that does not fit an int (2^32+4 used to wrap to 4).
. "$(dirname "$0")/../lib.sh"

R=$BIN/rankmapctl
P=$DATA/patterns
T=$(mktmp)
trap 'rm -rf "$T"' EXIT INT TERM

# refused DESC PATTERN CMD...: exit 1 (not a crash, not a usage error) and stderr matches PATTERN
refused() {
	d=$1 pat=$2; shift 2
	"$@" >"$T/out" 2>"$T/err"; rc=$?
	if [ "$rc" -eq 1 ] && grep -q -e "$pat" "$T/err"; then
		ok "$d"
	else
		notok "$d (exit $rc, stderr: $(head -c 300 "$T/err"))"
	fi
}

# ---- weights whose total overflows ----------------------------------------------------------------
refused "Matrix Market: total weight not finite, file named" "bad-total.mtx: .*not finite" \
	"$R" map --pattern "$DATA/bad/patterns/bad-total.mtx" --topology 'tleaf 1 4 1'
refused "message column summing beyond a double (metric bytes), file named" "bad-total-msgs.mtx: the message counts" \
	"$R" map --pattern "$DATA/bad/patterns/bad-total-msgs.mtx" --topology 'tleaf 1 4 1'
refused "the same with --metric messages" "bad-total-msgs.mtx: .*not finite" \
	"$R" map --pattern "$DATA/bad/patterns/bad-total-msgs.mtx" --metric messages --topology 'tleaf 1 4 1'
refused "dense pattern whose pair weight overflows, file named" "bad-total-dense.txt: .*not finite" \
	"$R" map --pattern "$DATA/bad/patterns/bad-total-dense.txt" --topology 'tleaf 1 4 1'
refused "Cartesian weights summing beyond a double, field named" "cart weights: .*not finite" \
	"$R" map --cart 4x4:1,1:1e308,1 --topology 'tleaf 1 16 1'
refused "a cost that overflows (finite weights x distance 1000)" "cost: .*overflows a double" \
	"$R" map --pattern "$P/cost-overflow.mtx" --topology 'tleaf 2 2 1000 2 1'
# the same weights with small distances are fine: the check is on the total, not on big weights
expect "the same pattern maps with distance 1 (cost 3e307 is finite)" \
	sh -c "'$R' map --pattern '$P/cost-overflow.mtx' --topology 'tleaf 1 4 1' --json | grep -q '\"cost\":'"

# ---- torus extents beyond an int ------------------------------------------------------------------
for cmd in order simulate; do
	refused "$cmd --dims 4294967300x4x4: refused, naming --dims" "\-\-dims: .*must be 1 to" \
		"$R" $cmd --dims 4294967300x4x4
	refused "$cmd --dims 4x4x99999999999999999999: refused, naming --dims" "\-\-dims: .*must be 1 to" \
		"$R" $cmd --dims 4x4x99999999999999999999
	refused "$cmd --dims 4x4x4:4294967297 (nodes per router): refused" "\-\-dims: .*nodes per router" \
		"$R" $cmd --dims 4x4x4:4294967297
done
refused "torus file with an extent of 2^32+4: file, line and dimension named" \
	"bad-huge-dim.conf:2: dimension x is 4294967300" "$R" order --torus "$DATA/bad/torus-conf/bad-huge-dim.conf"
refused "torus file with an extent beyond a long: file, line and dimension named" \
	"bad-overflow-dim.conf:2: dimension z is out of range" "$R" order --torus "$DATA/bad/torus-conf/bad-overflow-dim.conf"
expect "order --dims 4x4x4 still works" sh -c "'$R' order --dims 4x4x4 >/dev/null"
finish
