#!/bin/sh
# plugin/mpi is a core and its observers, with no cycle among its files (pmpi_core.c): the file graph
# built from the objects' symbols (scripts/file_cycles.sh) has no cycle, the core (pmpi_core.o) uses no
# other file of the library, and no file of the topology call's path or of the wrappers names a feature
# (tracing, learning) other than through the observers' hooks. The checker is first shown to find a
# planted cycle, so that a silent checker cannot pass.
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
