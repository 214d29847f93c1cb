#!/bin/sh
# tests/integration/man_pages.sh: the manual pages (man/mkman.py, built by make all) render without
# groff warnings, and hold every line of the help they are made from: rankmapctl --help and each
# command's --help in rankmapctl(1), rankmapd --help in rankmapd(8), the documented examples in
# rankmapd.conf(5) and spank_rankmap(8). rankmapd --help's reference to rankmapd.conf(5) is served.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
T=$(mktmp)
trap 'rm -rf "$T"' EXIT
M=$BIN/man

# contains PAGE TEXTFILE DESC: every non-blank line of TEXTFILE (leading blanks dropped) is a line of
# the rendered page (leading blanks dropped).
contains() {
	MANWIDTH=250 man -l "$1" 2>/dev/null | sed 's/^ *//' >"$T/page.txt"
	sed 's/^ *//' "$2" | grep -v '^$' >"$T/want.txt"
	missing=$(grep -vxF -f "$T/page.txt" "$T/want.txt" | head -3)
	if [ -z "$missing" ]; then ok "$3"; else notok "$3: missing: $missing"; fi
}

for p in rankmapctl.1 rankmapd.8 rankmapd.conf.5 spank_rankmap.8; do
	expect "$p built" test -s "$M/$p"
	w=$(groff -ww -z -man "$M/$p" 2>&1)
	expect "$p renders without groff warnings${w:+: $w}" test -z "$w"
done
"$BIN/rankmapctl" --help >"$T/ctl.txt"
contains "$M/rankmapctl.1" "$T/ctl.txt" "rankmapctl(1) holds rankmapctl --help"
for c in $(sed -n '/^Commands:/,/^$/p' "$T/ctl.txt" | awk 'NR > 1 && NF { print $1 }'); do
	"$BIN/rankmapctl" "$c" --help >"$T/c.txt" 2>&1
	contains "$M/rankmapctl.1" "$T/c.txt" "rankmapctl(1) holds rankmapctl $c --help"
done
"$BIN/rankmapd" --help >"$T/d.txt"
contains "$M/rankmapd.8" "$T/d.txt" "rankmapd(8) holds rankmapd --help"
contains "$M/rankmapd.conf.5" conf/rankmapd.conf "rankmapd.conf(5) holds the documented configuration"
contains "$M/spank_rankmap.8" conf/plugstack.conf.example "spank_rankmap(8) holds the plugin's documented options"
expect "rankmapd --help cites a page that exists" sh -c "grep -q 'rankmapd.conf(5)' '$T/d.txt' && test -s '$M/rankmapd.conf.5'"
# the check itself can fail: a line the page does not hold is found
echo "a line that no manual page holds" >"$T/x.txt"
MANWIDTH=250 man -l "$M/rankmapd.8" 2>/dev/null | sed 's/^ *//' >"$T/page.txt"
expect "the checker finds a missing line" sh -c "grep -vxF -f '$T/page.txt' '$T/x.txt' | grep -q ."
finish
