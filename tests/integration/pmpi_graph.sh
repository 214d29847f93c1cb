#!/bin/sh
# MPI_Graph_create (ring of rings) and MPI_Dist_graph_create(_adjacent) with weights, under Open MPI and
# MPICH with the PMPI library: the programs check neighbour lists, a token around each ring, the leaders'
# Allgather and a neighbourhood alltoall's received values; the reordering must put fewer (heavy) edges
# across virtual hosts than the placement it started from, counted by the programs themselves.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
trap 'rm -rf "$T"' EXIT

check_run() { # MPI DESC KEY_IDENTITY KEY_MAPPED
	m=$1; d=$2
	[ "$rc" -eq 0 ] && [ "$(field errors "$T/out")" = 0 ] && ok "$m $d: program checks pass" ||
		{ notok "$m $d: exit $rc errors $(field errors "$T/out")"; head -5 "$T/err"; }
	i=$(field "$3" "$T/out"); p=$(field "$4" "$T/out")
	[ -n "$p" ] && [ "$p" -lt "$i" ] && ok "$m $d: $3 $i -> $p" || notok "$m $d: $3 $i -> $p"
	[ "$(warnings "$T/err")" -eq 0 ] && ok "$m $d: no warning" || notok "$m $d: $(grep rankmap "$T/err")"
}

# Cases that share a rank count run in one job (-c, tests/mpi/common.sh), each with its own settings,
# standard error and result line.
R8=$T/r8
cases_new "$R8"
# Mercier-Jeannot: 2 rings of 4 (and below 4 rings of 4), Round Robin placement over virtual hosts
case_add "$R8" "2 4" RANKMAP_FAKE_HOSTS=2 "RANKMAP_FAKE_NODE=pack:2 core:2" RANKMAP_FAKE_PLACEMENT=cyclic >/dev/null
case_add "$R8" "-n 2 4" RANKMAP_FAKE_HOSTS=2 >/dev/null
# weighted dist graphs: heavy partners k, k+p/2 start on different hosts (block placement)
DG=$T/dg
cases_new "$DG"
case_add "$DG" "" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE=core:4 >/dev/null
case_add "$DG" "-g" RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_NODE=core:4 >/dev/null
case_add "$DG" "-n" RANKMAP_FAKE_HOSTS=2 >/dev/null

for m in $PMPI_MPIS; do
	cases_run "$m" 8 "$R8" ring_of_rings; rc8=$?
	cases_run "$m" 8 "$DG" distgraph; rcd=$?
	[ "$(warnings "$R8.err")" -eq 0 ] && [ "$(warnings "$DG.err")" -eq 0 ] ||
		{ notok "$m: warnings outside the cases"; grep -h '^rankmap:' "$R8.err" "$DG.err" | head -3; }

	rc=$rc8; cp "$R8.1.out" "$T/out"; cp "$R8.1.err" "$T/err"
	check_run "$m" "ring of rings 2x4" cross_identity cross_mapped
	RANKMAP_FAKE_HOSTS=4 RANKMAP_FAKE_NODE='pack:2 core:2' RANKMAP_FAKE_PLACEMENT=cyclic \
		pmpi_run "$m" 16 ring_of_rings 4 4 >"$T/out" 2>"$T/err"; rc=$?
	check_run "$m" "ring of rings 4x4" cross_identity cross_mapped
	# best by hand: each ring on its own host, only the 4 edges of the leaders' ring cross
	[ "$(field cross_mapped "$T/out")" = 4 ] && ok "$m: 4x4 rings: each ring on one host" ||
		notok "$m: 4x4 rings cross $(field cross_mapped "$T/out") edges, 4 expected"
	# fewer graph nodes than ranks: the ranks left out get MPI_COMM_NULL, the others stay consistent
	RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic pmpi_run "$m" 10 ring_of_rings 2 4 >"$T/out" 2>"$T/err"
	[ $? -eq 0 ] && [ "$(field errors "$T/out")" = 0 ] && [ "$(warnings "$T/err")" -eq 0 ] &&
		ok "$m: ring of rings of 8 on 10 ranks" || { notok "$m: 8 nodes on 10 ranks"; head -3 "$T/err"; }
	[ "$(field moved "$R8.2.out")" = 0 ] && [ "$(field errors "$R8.2.out")" = 0 ] && ok "$m: Graph_create reorder=0" ||
		notok "$m: Graph_create reorder=0"

	k=1
	for v in "" -g; do
		rc=$rcd; cp "$DG.$k.out" "$T/out"; cp "$DG.$k.err" "$T/err"
		check_run "$m" "dist graph ${v:-adjacent}" heavy_cross_identity heavy_cross_mapped
		[ "$(field heavy_cross_mapped "$T/out")" = 0 ] && ok "$m ${v:-adjacent}: every heavy pair on one host" ||
			notok "$m ${v:-adjacent}: heavy pairs across hosts: $(field heavy_cross_mapped "$T/out")"
		k=$((k + 1))
	done
	[ "$(field moved "$DG.3.out")" = 0 ] && [ "$(field errors "$DG.3.out")" = 0 ] && ok "$m: Dist_graph reorder=0" ||
		notok "$m: Dist_graph reorder=0"
done
finish
