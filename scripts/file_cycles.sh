#!/bin/sh
# scripts/file_cycles.sh OBJ...: the file graph of a module from its object files, by symbol (nm): file A
# uses file B when A's object refers to a function or object that B's defines. Prints each edge as
# "A -> B (symbol, ...)" with -v, and each group of files that use each other in a loop as
# "cycle: A B C"; exit status 1 when there is a cycle, 2 on bad use.
verbose=0
[ "$1" = -v ] && { verbose=1; shift; }
[ $# -ge 1 ] || { echo "usage: $0 [-v] OBJ..." >&2; exit 2; }
for o in "$@"; do
	[ -f "$o" ] || { echo "$0: $o: no such object" >&2; exit 2; }
	f=$(basename "$o" .o)
	nm "$o" | awk -v f="$f" '$1 == "U" { print "U", f, $2 } NF == 3 && $2 ~ /^[TDBRVW]$/ { print "D", f, $3 }'
done | awk -v verbose="$verbose" '
$1 == "D" { def[$3] = $2; files[$2] = 1; next }
$1 == "U" { use[++nu] = $2 " " $3; files[$2] = 1 }
END {
	for (i = 1; i <= nu; i++) {
		split(use[i], u, " ")
		if (!(u[2] in def) || def[u[2]] == u[1]) continue
		e = u[1] SUBSEP def[u[2]]
		if (!(e in edge)) edge[e] = u[2]; else if (length(edge[e]) < 120) edge[e] = edge[e] ", " u[2]
		reach[u[1], def[u[2]]] = 1
	}
	n = 0
	for (f in files) name[++n] = f
	if (verbose) for (e in edge) { split(e, p, SUBSEP); print p[1] " -> " p[2] " (" edge[e] ")" }
	for (k = 1; k <= n; k++) for (i = 1; i <= n; i++) if (reach[name[i], name[k]])
		for (j = 1; j <= n; j++) if (reach[name[k], name[j]]) reach[name[i], name[j]] = 1
	bad = 0
	for (i = 1; i <= n; i++) {
		if (done[name[i]]) continue
		grp = name[i]; cyc = 0
		for (j = 1; j <= n; j++) if (j != i && reach[name[i], name[j]] && reach[name[j], name[i]]) {
			grp = grp " " name[j]; done[name[j]] = 1; cyc = 1
		}
		if (cyc) { print "cycle: " grp; bad = 1 }
	}
	exit bad
}'
