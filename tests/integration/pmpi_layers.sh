#!/bin/sh
# plugin/mpi is a core and its observers, with no cycle among its files (pmpi_core.c): the file graph
# built from the objects' symbols (scripts/file_cycles.sh) has no cycle, the core (pmpi_core.o) uses no
# other file of the library, and no file of the topology call's path or of the wrappers names a feature
# (tracing, learning) other than through the observers' hooks. The core's sources (pmpi.h, pmpi_core.c)
# and the topology call's (pmpi_env.c, pmpi_reorder.c, pmpi_topo.c) name no identifier of a feature: the
# call state is opaque to the features (each observer's own area, rmp_call_state), and they include no
# header of one. The checkers are first shown to find a planted cycle and a planted name, so that a
# silent checker cannot pass.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
T=$(mktmp)
trap 'rm -rf "$T"' EXIT

# a planted cycle: a.o uses b.o's function and b.o a.o's
printf 'int b(void);\nint a(void) { return b(); }\n' >"$T/a.c"
printf 'int a(void);\nint b(void) { return a() + 1; }\n' >"$T/b.c"
printf 'int a(void);\nint c(void) { return a(); }\n' >"$T/c.c"
for f in a b c; do cc -c -o "$T/$f.o" "$T/$f.c" || notok "cannot compile the planted files"; done
out=$(sh scripts/file_cycles.sh "$T/a.o" "$T/b.o" "$T/c.o")
rc=$?
if [ $rc -eq 1 ] && { [ "$out" = "cycle: a b" ] || [ "$out" = "cycle: b a" ]; }; then
	ok "the checker finds a planted cycle ($out)"
else
	notok "the checker missed a planted cycle: exit $rc, '$out'"
fi
sh scripts/file_cycles.sh "$T/b.o" "$T/c.o" >/dev/null && ok "and passes the same files without it" || notok "false cycle"

# feature_names FILE: the identifiers and strings of FILE's code (comments removed) that name a feature
feature_names() {
	cc -fpreprocessed -dD -E -P "$1" 2>/dev/null | grep -oiE '[A-Za-z0-9_]*(learn|trac)[A-Za-z0-9_]*' | sort -u | tr '\n' ' '
	grep -nE '#include "pmpi_(obs|learn|trace)' "$1" | tr '\n' ' '
}
printf '/* learning and tracing: comments are fine */\nstruct c { int learned; };\nint f(struct c *c) { return c->learned; }\n' >"$T/planted.c"
printf '#include "pmpi_obs.h"\nint g(void);\n' >"$T/planted2.c"
out=$(feature_names "$T/planted.c")
[ "$out" = "learned " ] && ok "the name checker finds a planted field (and skips comments)" || notok "name checker: '$out'"
out=$(feature_names "$T/planted2.c")
[ -n "$out" ] && ok "the name checker finds a planted include" || notok "name checker missed an include"
for f in pmpi.h pmpi_core.c pmpi_env.c pmpi_reorder.c pmpi_topo.c; do
	[ -f "plugin/mpi/$f" ] || { notok "no plugin/mpi/$f"; continue; }
	out=$(feature_names "plugin/mpi/$f")
	[ -z "$out" ] && ok "$f names no feature" || notok "$f names a feature: $out"
done
# One neighbour table (pmpi_nbr.c): the tracer and learning translate ranks to world ranks there only.
tr=$(grep -l 'Group_translate_ranks' plugin/mpi/*.c | tr '\n' ' ')
[ "$tr" = "plugin/mpi/pmpi_nbr.c " ] && ok "ranks are translated to world ranks in pmpi_nbr.c only" ||
	notok "rank translation outside the neighbour table: $tr"

for m in openmpi mpich; do
	objs=$(ls "$BIN/plugin/$m/"*.o 2>/dev/null)
	[ -n "$objs" ] || { notok "$m: no objects in $BIN/plugin/$m"; continue; }
	# only the objects of current sources (a renamed file's old object may linger in the build folder)
	set --
	for o in $objs; do [ -f "plugin/mpi/$(basename "$o" .o).c" ] && set -- "$@" "$o"; done
	out=$(sh scripts/file_cycles.sh "$@")
	[ $? -eq 0 ] && ok "$m: no cycle among the $# files of plugin/mpi" || notok "$m: $out"
	edges=$(sh scripts/file_cycles.sh -v "$@" | grep ' -> ')
	from_core=$(echo "$edges" | grep '^pmpi_core -> ')
	[ -z "$from_core" ] && ok "$m: the core uses no other file" || notok "$m: $from_core"
	named=$(echo "$edges" | grep -E '^pmpi_(env|memo|graph|place|daemon|reorder|topo|wrap|check|local) -> pmpi_(trace|learn)')
	[ -z "$named" ] && ok "$m: the call path and the wrappers reach tracing and learning only through hooks" ||
		notok "$m: $named"
done
finish
