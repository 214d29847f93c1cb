#!/bin/sh
# What a preloaded rank holds (plugin/mpi/pmpi_local.c): the MPI libraries link no engine or fabric library;
# Scotch and libibnetdisc/libibmad/libibumad are in librankmap_local.so, which only a rank that maps in its
# own process opens. Under Open MPI and MPICH, with tests/mpi/preload_libs (a program that defines
# functions named as Scotch's and as rankmap's internals, exported with -rdynamic as an application
# linking its own copies would export them):
#   - mapped by a real rankmapd: no rank maps Scotch, the InfiniBand libraries or the helper;
#   - mapped locally with RANKMAP_ALGO=scotch: rank 0 alone opens the helper, the mapping succeeds without
#     one warning, and none of the program's look-alike functions is ever called (the helper holds its own
#     Scotch, local to it: a static link, -Bsymbolic, a version script; true under AddressSanitizer too);
#   - the helper missing: the job completes unreordered with one warning that names it.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
rankmapd_cleanup "$T"
HEAVY='scotch|ibnetdisc|ibmad|ibumad|rankmap_local'
for m in $PMPI_MPIS; do
	lib=$(pmpi_lib "$m")
	heavy=$(ldd "$lib" | grep -E "lib($HEAVY)" | awk '{ print $1 }' | tr '\n' ' ')
	[ -z "$heavy" ] && ok "$m: the MPI library links no engine or fabric library" || notok "$m: links $heavy"
done
helper=$BIN/librankmap_local.so
exp=$(nm -D --defined-only "$helper" 2>/dev/null | awk '{ print $3 }' | sort | tr '\n' ' ')
[ "$exp" = "map_engine_scotch topo_fabric_load_cache topo_fabric_load_live " ] &&
	ok "the helper exports its three entry points only" || notok "helper exports: $exp"
nm "$helper" | grep -q ' t SCOTCH_graphMap$' && ! ldd "$helper" | grep -q libscotch &&
	ok "the helper holds its own Scotch, local to it" || notok "the helper's Scotch: $(ldd "$helper" | grep scotch)"

[ -x "$BIN/rankmapd" ] || { notok "$BIN/rankmapd not built"; finish; exit 1; }
cat >"$T/rankmapd.conf" <<EOC
hwloc_dir = $DATA/daemon/hwloc
ib_file = $DATA/plafrim/ib/ib-subnet0.txt
EOC
start_rankmapd "$T/rankmapd.conf" "$T/sock" "$T/d.log" --state-dir "$T/state"
expect "rankmapd is up" "$BIN/rankmapctl" ping --socket "$T/sock"

# lines OUT: the program's per-rank lines; rank R's field: rankfield OUT R KEY
rankfield() { sed -n "s/^rank=$2 .*[ ]$3=\([^ ]*\).*/\1/p" "$1" | tail -n 1; }
clashes() { sed -n 's/.* clash=\([0-9]*\) .*/\1/p' "$1" | awk '{ s += $1 } END { print s + 0 }'; }
# job MPI OUT NAME=VALUE...: preload_libs on 8 ranks in the test-only cyclic placement on 2 virtual hosts,
# RANKMAP_ALGO=scotch, with the settings given; stdout in OUT.out, stderr in OUT.err
job() {
	_m=$1 _o=$2; shift 2
	(export RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic RANKMAP_ALGO=scotch "RANKMAP_FAKE_NODE=pack:2 core:4"
	 for _v; do export "$_v"; done
	 pmpi_run "$_m" 8 preload_libs) >"$_o.out" 2>"$_o.err"
}
for m in $PMPI_MPIS; do
	# through the daemon
	rm -f "$T/report"
	job "$m" "$T/d" RANKMAP_SOCKET="$T/sock" RANKMAP_REPORT="$T/report"
	rc=$?
	[ $rc -eq 0 ] && [ "$(grep -c '^rank=' "$T/d.out")" = 8 ] && ok "$m: daemon: 8 ranks ran" || { notok "$m: daemon: exit $rc"; head -5 "$T/d.err"; }
	grep -q 'algo=rankmapd:' "$T/report" 2>/dev/null && ok "$m: daemon: mapped by rankmapd" || notok "$m: daemon: report: $(cat "$T/report" 2>/dev/null)"
	bad=$(grep '^rank=' "$T/d.out" | grep -E "maps=[^ ]*($HEAVY)")
	[ -z "$bad" ] && ok "$m: daemon: no rank maps Scotch, the InfiniBand libraries or the helper" || notok "$m: daemon: $bad"
	[ "$(warnings "$T/d.err")" -eq 0 ] && ok "$m: daemon: no warning" || notok "$m: daemon: $(grep rankmap "$T/d.err")"

	# locally, with Scotch
	rm -f "$T/report"
	job "$m" "$T/l" RANKMAP_REPORT="$T/report"
	rc=$?
	[ $rc -eq 0 ] && [ "$(grep -c '^rank=' "$T/l.out")" = 8 ] && ok "$m: local: 8 ranks ran" || { notok "$m: local: exit $rc"; head -5 "$T/l.err"; }
	grep -q ' algo=scotch ' "$T/report" 2>/dev/null && ok "$m: local: mapped by Scotch in the rank" ||
		notok "$m: local: report: $(cat "$T/report" 2>/dev/null)"
	[ "$(warnings "$T/l.err")" -eq 0 ] && ok "$m: local: no warning" || notok "$m: local: $(grep rankmap "$T/l.err")"
	echo "$(rankfield "$T/l.out" 0 maps)" | grep -q 'rankmap_local' &&
		ok "$m: local: rank 0 opened the helper" || notok "$m: local: rank 0 maps $(rankfield "$T/l.out" 0 maps)"
	bad=$(grep '^rank=' "$T/l.out" | grep -v '^rank=0 ' | grep -E "maps=[^ ]*($HEAVY)")
	[ -z "$bad" ] && ok "$m: local: the other ranks did not" || notok "$m: local: $bad"
	[ "$(clashes "$T/l.out")" = 0 ] && ok "$m: local: none of the program's look-alike functions was called" ||
		notok "$m: local: the program's functions were called $(clashes "$T/l.out") times"
	# the same unguarded (the engine in the rank itself, where a call of the program's functions would count)
	rm -f "$T/report"
	job "$m" "$T/u" RANKMAP_GUARD=off RANKMAP_REPORT="$T/report"
	grep -q ' algo=scotch ' "$T/report" 2>/dev/null && [ "$(clashes "$T/u.out")" = 0 ] && [ "$(warnings "$T/u.err")" -eq 0 ] &&
		ok "$m: local, unguarded: mapped by Scotch, no look-alike called, no warning" ||
		notok "$m: local, unguarded: clash=$(clashes "$T/u.out") $(grep rankmap "$T/u.err" "$T/report" 2>/dev/null | head -3)"

	# the helper missing
	job "$m" "$T/n" RANKMAP_LOCAL_LIB="$T/none/librankmap_local.so"
	rc=$?
	[ $rc -eq 0 ] && [ "$(grep -c '^rank=' "$T/n.out")" = 8 ] && ok "$m: helper missing: the job completes" || { notok "$m: helper missing: exit $rc"; head -5 "$T/n.err"; }
	[ "$(warnings "$T/n.err")" -eq 1 ] && grep -q '^rankmap: .*librankmap_local.so' "$T/n.err" &&
		ok "$m: helper missing: one warning naming it: $(grep '^rankmap' "$T/n.err")" ||
		notok "$m: helper missing: $(grep rankmap "$T/n.err")"
done
finish
