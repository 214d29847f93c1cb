#!/bin/sh
# tests/integration/mtx_readers.sh: rankmap's Matrix Market reader and the traces RANKMAP_TRACE writes
# agree with another reader, scipy.io.mmread (python3-scipy): every accepted input of tests/data/patterns
# (array and coordinate, general and symmetric, real, integer and pattern fields, keywords in any case,
# comments) gives the same pairs and weights, and a traced MPI run's files (bytes, and the messages file
# its header names) read the same through rankmap (bytes and messages metrics) and through scipy.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
PY=/usr/bin/python3
DUMP="$BIN/tests/test_map_pattern"
T=$(mktmp)
trap 'rm -rf "$T"' EXIT INT TERM

$PY -c 'import scipy.io' 2>/dev/null || { notok "python3-scipy is not installed (make deps)"; finish; exit 1; }

# same FILE METRIC [MESSAGES_FILE]: rankmap's reading of FILE under METRIC equals scipy's (to 1e-12)
same() {
	"$DUMP" --dump "$1" "$2" >"$T/rm.txt" 2>"$T/rm.err" || { cat "$T/rm.err" >&2; return 1; }
	$PY "$TOP/tests/integration/mtx_readers.py" "$1" $3 >"$T/py.txt" 2>"$T/py.err" || { cat "$T/py.err" >&2; return 1; }
	[ "$(wc -l <"$T/rm.txt")" -gt 1 ] || { echo "no edge read" >&2; return 1; }
	awk 'NR == FNR { w[$1 " " $2] = $3; n++; next }
	     { if (!(($1 " " $2) in w)) { print "scipy only: " $0; bad = 1 }
	       else { d = w[$1 " " $2] - $3; if (d < 0) d = -d; if (d > 1e-12 * ($3 < 0 ? -$3 : $3) + 1e-12) {
	              print "differs: " $0 " rankmap " w[$1 " " $2]; bad = 1 } }
	       m++ }
	     END { if (n != m) { print "rankmap " n " lines, scipy " m; bad = 1 } exit bad }' \
		"$T/rm.txt" "$T/py.txt" >&2
}

for f in ring8.mtx ring8-sym.mtx pattern4.mtx selfloop.mtx disconnected.mtx array4.mtx array4-sym.mtx \
	mixed-case.mtx traced2.mtx; do
	expect "$f: rankmap and scipy.io.mmread read the same pairs and weights" same "$DATA/patterns/$f" bytes
done
expect "traced2.mtx: messages metric reads traced2.messages.mtx as scipy does" \
	same "$DATA/patterns/traced2.mtx" messages "$DATA/patterns/traced2.messages.mtx"

# a real traced run (cart_halo, 4 ranks) under each MPI: both files are standard Matrix Market
pmpi_check_built
for m in $PMPI_MPIS; do
	RANKMAP_TRACE=$T/ring.mtx pmpi_run "$m" 4 cart_halo -p 1 4 1 >"$T/out" 2>"$T/err"
	if [ -s "$T/ring.mtx" ] && [ -s "$T/ring.messages.mtx" ]; then
		ok "$m: the trace is two files, bytes and messages"
	else
		notok "$m: trace files: $(ls "$T")"; continue
	fi
	grep -q '^% rankmap-messages: ring.messages.mtx$' "$T/ring.mtx" && ok "$m: the bytes file names the messages file" ||
		notok "$m: no rankmap-messages header"
	expect "$m: trace bytes read the same by rankmap and scipy" same "$T/ring.mtx" bytes
	expect "$m: trace messages read the same by rankmap and scipy" same "$T/ring.mtx" messages "$T/ring.messages.mtx"
	$PY -c 'import scipy.io, sys
for p in sys.argv[1:]:
    i = scipy.io.mminfo(p)
    assert i[3:] == ("coordinate", "integer", "general"), i' "$T/ring.mtx" "$T/ring.messages.mtx" &&
		ok "$m: both trace files are coordinate integer general for scipy" || notok "$m: mminfo"
	rm -f "$T"/ring*
done
finish
