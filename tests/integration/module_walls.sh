#!/bin/sh
# Module walls (ARCHITECTURE.md): checks the two rules that keep rankmap's modules apart.
#   1. A *_private.h is included only by files of its own folder (topo/report/ is not topo/).
#   2. Each module compiles with the include paths of the modules it may use, and no others: the -I
#      options of every compile command `make -n` prints are checked against the table below.
# tests/ are exempt from both: unit tests and fuzzers test internals (test_topo_* includes
# net_ib_private.h, the daemon fuzzers srv.h) and get every module's folder (tests/module.mk).
# Each checker is first shown to reject a planted violation, so that a silent checker cannot pass.
. tests/lib.sh
cd "$TOP" || exit 1
T=$(mktmp)
trap 'rm -rf "$T"' EXIT

# The include paths each module may use (project folders only; system paths such as -I/usr/include/...
# come from pkg-config and are not checked). Longest prefix first: topo/report/ before topo/.
allowed() { # source file -> allowed -I folders, or "exempt"
	case "$1" in
	tests/*) echo exempt ;;
	common/*) echo "common" ;;
	topo/report/*) echo "common topo topo/report" ;;
	topo/*) echo "common topo" ;;
	order/*) echo "common topo order" ;;
	mapping/*) echo "common topo mapping" ;;
	daemon/client/*) echo "common daemon/client" ;;
	daemon/server/*) echo "common topo topo/report order mapping daemon/client daemon/server" ;;
	daemon/ctl/*) echo "common topo topo/report order mapping daemon/client daemon/ctl" ;;
	plugin/mpi/*) echo "common topo mapping daemon/client plugin/mpi" ;;
	plugin/spank/*) echo "common topo mapping daemon/client plugin/spank" ;;
	*) echo "" ;;
	esac
}

# check_private ROOT: prints one line per file outside tests/ that includes a *_private.h that is not
# in its own folder (or that names it by a path); exit status 1 when there is one.
check_private() {
	(cd "$1" && find . -path ./tests -prune -o -path ./build -prune -o \( -name '*.c' -o -name '*.h' \) -print |
		sed 's|^\./||' | while read -r f; do
			grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*_private\.h"' "$f" |
				while IFS= read -r line; do
					h=$(echo "$line" | sed 's/.*"\([^"]*\)".*/\1/')
					if [ "$h" != "${h#*/}" ] || [ ! -f "$(dirname "$f")/$h" ]; then
						echo "$f:${line%%:*}: includes $h from outside its folder"
					fi
				done
		done) | grep . && return 1
	return 0
}

# check_flags FILE: FILE holds compile commands; prints each source compiled with an -I folder its
# module may not use, or from no module at all; exit status 1 when there is one.
check_flags() {
	bad=0
	while IFS= read -r cmd; do
		src=$(printf '%s\n' "$cmd" | tr ' ' '\n' | grep '\.c$' | tail -n 1)
		[ -n "$src" ] || continue
		ok_dirs=$(allowed "$src")
		[ "$ok_dirs" = exempt ] && continue
		if [ -z "$ok_dirs" ]; then
			echo "$src: compiled but belongs to no module"; bad=1; continue
		fi
		for inc in $(printf '%s\n' "$cmd" | tr ' ' '\n' | sed -n 's/^-I\([^/].*\)/\1/p'); do
			case " $ok_dirs " in *" ${inc%/} "*) ;; *) echo "$src: -I$inc is not among: $ok_dirs"; bad=1 ;; esac
		done
	done <"$1"
	return $bad
}

# The checkers reject planted violations.
mkdir -p "$T/tree/topo/report" "$T/tree/order"
printf '#include "topo_private.h"\n' >"$T/tree/topo/report/view.c"
printf '/* private */\n' >"$T/tree/topo/topo_private.h"
printf '#include "order_private.h"\n' >"$T/tree/order/ok.c"
printf '/* private */\n' >"$T/tree/order/order_private.h"
out=$(check_private "$T/tree"); rc=$?
expect "private-header checker rejects topo/report/ including topo_private.h" \
	[ "$rc" -ne 0 -a -n "$(echo "$out" | grep 'topo/report/view.c')" ]
expect "private-header checker accepts an include inside the folder" \
	[ -z "$(echo "$out" | grep 'order/ok.c')" ]
printf 'cc -c -Icommon -Itopo -Idaemon/server -o build/plugin/spank/x.o plugin/spank/x.c\n' >"$T/bad-flags"
printf 'cc -c -Icommon -I/usr/include/scotch -o build/common/x.o common/x.c\n' >>"$T/bad-flags"
printf 'cc -c -Icommon -o build/stray/x.o stray/x.c\n' >>"$T/bad-flags"
out=$(check_flags "$T/bad-flags"); rc=$?
expect "flag checker rejects -Idaemon/server for plugin/spank" [ "$rc" -ne 0 ]
expect "flag checker names the offending source" [ -n "$(echo "$out" | grep 'plugin/spank/x.c: -Idaemon/server')" ]
expect "flag checker rejects a source of no module" [ -n "$(echo "$out" | grep 'stray/x.c')" ]
expect "flag checker ignores system include paths" [ -z "$(echo "$out" | grep 'common/x.c')" ]

# The tree.
out=$(check_private "$TOP"); rc=$?
[ -n "$out" ] && echo "$out"
expect "no *_private.h included outside its folder (tests/ exempt)" [ "$rc" -eq 0 ]

make --no-print-directory -n -B B="$T/build" all test-progs >"$T/cmds" 2>"$T/make.err"
expect "make -n prints the build's commands" [ -s "$T/cmds" ]
n=$(grep -c -- ' -c ' "$T/cmds")
expect "the commands include compiles of every module ($n)" [ "$n" -gt 50 ]
grep -- ' -c ' "$T/cmds" >"$T/compiles"
out=$(check_flags "$T/compiles"); rc=$?
[ -n "$out" ] && echo "$out"
expect "every module compiles with only the include paths it may use" [ "$rc" -eq 0 ]
# The global include path is gone: a module cannot reach another one's folder through -I.
expect "no compile of a module gets -I. (the top of the tree)" \
	[ -z "$(grep -v ' tests/' "$T/compiles" | grep -E -- '(^| )-I\.( |$)')" ]

finish
