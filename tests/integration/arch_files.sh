#!/bin/sh
# tests/integration/arch_files.sh: ARCHITECTURE.md names every source file of the tree exactly once.
# The source files are the *.c and *.h files of the modules (common/ topo/ order/ mapping/ daemon/
# plugin/; tests/ are not modules). A file is named by its path from the top of the tree
# (`topo/cluster.c`); bare names (`cluster.c`, `topo.h`) are references, not listings. Checked: every
# source file is named, none twice, and no path that looks like a source file names one that is gone.
# The checker is first shown to reject a planted missing, doubled and stale name.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
T=$(mktmp)
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT PIPE TERM

MODULES="common topo order mapping daemon plugin"

# check_arch ROOT DOC: prints one line per problem ("missing: F", "named N times: F", "no such file: F");
# exit status 1 when there is one.
check_arch() {
	(cd "$1" && find $MODULES \( -name '*.c' -o -name '*.h' \) -type f 2>/dev/null) | sort >"$T/files"
	# every path-like token of the doc: a module folder, then folders and a name ending in .c or .h
	grep -oE "(^|[^A-Za-z0-9_./-])($(echo $MODULES | tr ' ' '|'))/[A-Za-z0-9_/.-]*[A-Za-z0-9_]\.[ch]([^A-Za-z0-9_/-]|$)" "$2" |
		sed -E 's#^[^a-z]##; s#[^A-Za-z0-9_]$##' | sort | uniq -c | awk '{ print $2, $1 }' >"$T/named"
	awk 'NR == FNR { named[$1] = $2; next }
	     { n = named[$1] + 0; if (n == 0) print "missing: " $1; else if (n > 1) print "named " n " times: " $1; seen[$1] = 1 }
	     END { for (f in named) if (!(f in seen)) print "no such file: " f }' "$T/named" "$T/files" | sort >"$T/problems"
	cat "$T/problems"
	[ ! -s "$T/problems" ]
}

# The checker rejects a planted tree and doc.
mkdir -p "$T/tree/topo" "$T/tree/order"
: >"$T/tree/topo/a.c"
: >"$T/tree/topo/a.h"
: >"$T/tree/order/b.c"
printf '# doc\n`topo/a.c` twice: `topo/a.c`, and `order/gone.c`; `a.h` bare.\n' >"$T/doc"
out=$(check_arch "$T/tree" "$T/doc"); rc=$?
expect "checker fails on a planted doc" [ "$rc" -ne 0 ]
expect "checker names a file named twice" [ -n "$(echo "$out" | grep -x 'named 2 times: topo/a.c')" ]
expect "checker names files not named (bare names do not count)" \
	[ -n "$(echo "$out" | grep -x 'missing: topo/a.h')" -a -n "$(echo "$out" | grep -x 'missing: order/b.c')" ]
expect "checker names a file that does not exist" [ -n "$(echo "$out" | grep -x 'no such file: order/gone.c')" ]
printf '`topo/a.c`, `topo/a.h` and order/b.c.\n' >"$T/doc"
out=$(check_arch "$T/tree" "$T/doc"); rc=$?
expect "checker accepts a doc that names each file once ($out)" [ "$rc" -eq 0 ]

# The tree.
n=$(find $MODULES \( -name '*.c' -o -name '*.h' \) -type f | wc -l)
out=$(check_arch "$TOP" "$TOP/ARCHITECTURE.md"); rc=$?
[ -n "$out" ] && echo "$out"
expect "ARCHITECTURE.md names each of the $n source files exactly once, and no other" [ "$rc" -eq 0 ]
finish
