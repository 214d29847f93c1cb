#!/bin/sh
# tests/integration/man_pages.sh: the manual pages (man/*.in made by man/mkman.py, built by make all)
# render without warnings (groff -ww, man --warnings), have the sections a reader looks for, and cannot
# drift from what they document: every option of rankmapd --help, every command's --help of rankmapctl,
# every key rankmapd knows (--print-config), every RANKMAP_* variable the sources read, every cluster-file
# key and every plugstack argument the plugin accepts is in its page; no page names a source-tree path
# or a make variable.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
T=$(mktmp)
trap 'rm -rf "$T"' EXIT
M=$BIN/man
PAGES="rankmapctl.1 rankmapd.8 rankmapd.conf.5 spank_rankmap.8 rankmap.7"

render() { MANWIDTH=250 man -l "$1" 2>/dev/null; }
# contains PAGE TEXTFILE DESC: every non-blank line of TEXTFILE (leading blanks dropped) is a line of
# the rendered page (leading blanks dropped).
contains() {
	render "$1" | sed 's/^ *//' >"$T/page.txt"
	sed 's/^ *//' "$2" | grep -v '^$' >"$T/want.txt"
	missing=$(grep -vxF -f "$T/page.txt" "$T/want.txt" | head -3)
	if [ -z "$missing" ]; then ok "$3"; else notok "$3: missing: $missing"; fi
}
# words PAGE WORDFILE DESC: every word of WORDFILE is in the rendered page.
words() {
	render "$1" >"$T/page.txt"
	missing=$(while read -r w; do grep -qF -e "$w" "$T/page.txt" || echo "$w"; done <"$2" | head -5 | tr '\n' ' ')
	if [ -z "$missing" ]; then ok "$3"; else notok "$3: missing: $missing"; fi
}

git ls-files | grep / >"$T/tree"
for p in $PAGES; do
	expect "$p built" test -s "$M/$p"
	w=$(groff -ww -z -man "$M/$p" 2>&1)
	expect "$p renders without groff warnings${w:+: $w}" test -z "$w"
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$M/$p" 2>&1 >/dev/null)
	expect "$p renders without man --warnings${w:+: $w}" test -z "$w"
	render "$M/$p" | grep -E '^[A-Z][A-Z ]+$' >"$T/sections"
	case $p in
	rankmapctl.1) want="NAME SYNOPSIS DESCRIPTION COMMANDS ENVIRONMENT FILES EXAMPLES SEE_ALSO" ;;
	rankmapd.conf.5) want="NAME SYNOPSIS DESCRIPTION KEYS ENVIRONMENT FILES EXAMPLES SEE_ALSO" ;;
	rankmap.7) want="NAME SYNOPSIS DESCRIPTION ENVIRONMENT FILES EXAMPLES SEE_ALSO" ;;
	*) want="NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT FILES EXAMPLES SEE_ALSO" ;;
	esac
	for s in $want; do
		expect "$p has a $s section" grep -qx "$(echo "$s" | tr _ ' ')" "$T/sections"
	done
	syn=$(render "$M/$p" | sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | wc -l)
	expect "$p: SYNOPSIS is short ($syn lines)" test "$syn" -le 10
	bad=$(grep -noF -f "$T/tree" "$M/$p" | head -2)
	expect "$p names no source-tree path${bad:+: $bad}" test -z "$bad"
	bad=$(grep -no '\$([A-Z]*)\|@[A-Z]*@' "$M/$p" | head -2)
	expect "$p names no make variable or placeholder${bad:+: $bad}" test -z "$bad"
done

"$BIN/rankmapctl" --help >"$T/ctl.txt"
for c in $(sed -n '/^Commands:/,/^$/p' "$T/ctl.txt" | awk 'NR > 1 && NF { print $1 }'); do
	"$BIN/rankmapctl" "$c" --help >"$T/c.txt" 2>&1
	contains "$M/rankmapctl.1" "$T/c.txt" "rankmapctl(1) holds rankmapctl $c --help"
done
grep -o -- '--[a-z][a-z-]*' "$T/ctl.txt" | sort -u >"$T/w"
words "$M/rankmapctl.1" "$T/w" "rankmapctl(1) names every option rankmapctl --help names"
"$BIN/rankmapd" --help | sed -n '/^Options:/,/^$/p' | grep -o -- '-\{1,2\}[a-zA-Z][a-z-]*' | sort -u >"$T/w"
expect "rankmapd --help has options" test -s "$T/w"
words "$M/rankmapd.8" "$T/w" "rankmapd(8) lists every option of rankmapd --help"
"$BIN/rankmapd" --help | grep -o 'RANKMAP_[A-Z_]*' | sort -u >"$T/w"
words "$M/rankmapd.8" "$T/w" "rankmapd(8) lists every variable of rankmapd --help"
: >"$T/empty.conf"
"$BIN/rankmapd" --config "$T/empty.conf" --print-config | sed -n 's/^#\{0,1\}\([a-z_]*\) =.*/\1/p' | sort -u >"$T/keys"
expect "rankmapd --print-config lists keys" test "$(wc -l <"$T/keys")" -gt 30
render "$M/rankmapd.conf.5" | sed -n 's/^       \([a-z_]*\)\( .*\)\{0,1\}$/\1/p' | sort -u >"$T/terms"
missing=$(comm -23 "$T/keys" "$T/terms" | tr '\n' ' ')
expect "rankmapd.conf(5) describes every key rankmapd knows${missing:+: missing $missing}" test -z "$missing"
# the variables the libraries, the plugin and the client read, and the cluster file's keys
grep -rhoE '"RANKMAP_[A-Z_]+"' plugin common daemon/client mapping | tr -d '"' | sort -u >"$T/vars"
expect "the sources read RANKMAP_* variables" test "$(wc -l <"$T/vars")" -gt 20
for p in $PAGES; do render "$M/$p"; done >"$T/all.txt"
missing=$(while read -r w; do grep -qF -e "$w" "$T/all.txt" || echo "$w"; done <"$T/vars" | tr '\n' ' ')
expect "the pages name every RANKMAP_* variable the sources read${missing:+: missing $missing}" test -z "$missing"
sed -n 's/^\s*{ "\([a-z_]*\)", K_[A-Z_]*,.*/\1/p; s/^\s*COST(\([a-z_]*\),.*/\1/p' topo/cluster_file.c | sort -u >"$T/ckeys"
expect "topo/cluster_file.c has keys" test "$(wc -l <"$T/ckeys")" -gt 15
words "$M/rankmap.7" "$T/ckeys" "rankmap(7) describes every cluster-file key"
grep -ao 'known: [a-z_, ]*' "$BIN/spank_rankmap.so" | sed 's/^known: //' | tr ', ' '\n\n' |
	grep . | sed 's/$/=/' >"$T/args"
expect "the plugin's error message lists its arguments" test "$(wc -l <"$T/args")" -gt 5
words "$M/spank_rankmap.8" "$T/args" "spank_rankmap(8) describes every plugstack argument the plugin accepts"
render "$M/rankmap.7" | sed -n '/^REPORT LINE/,/^[A-Z]/p' >"$T/r"
# the fields the library prints (plugin/mpi/pmpi_reorder.c's report line), each a term of REPORT LINE
grep -hoE '[a-z_]+=(\\")?%' plugin/mpi/pmpi_reorder.c | sed 's/=.*//' | sort -u >"$T/fields"
expect "the report line has fields" test "$(wc -l <"$T/fields")" -ge 10
missing=$(while read -r f; do grep -qE "^ +(.*, )?$f(,| |$)" "$T/r" || echo "$f"; done <"$T/fields" | tr '\n' ' ')
expect "rankmap(7) REPORT LINE describes every field of the line${missing:+: missing $missing}" test -z "$missing"
expect "rankmapd --help cites a page that exists" sh -c "'$BIN/rankmapd' --help | grep -q 'rankmapd.conf(5)' && test -s '$M/rankmapd.conf.5'"
# the checks themselves can fail
echo "a line that no manual page holds" >"$T/x.txt"
render "$M/rankmapd.8" | sed 's/^ *//' >"$T/page.txt"
expect "the line checker finds a missing line" sh -c "grep -vxF -f '$T/page.txt' '$T/x.txt' | grep -q ."
echo "RANKMAP_NO_SUCH_VARIABLE" >"$T/x.txt"
expect "the word checker finds a missing word" sh -c "! grep -qF RANKMAP_NO_SUCH_VARIABLE '$T/page.txt'"
finish
