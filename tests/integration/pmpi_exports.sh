#!/bin/sh
# The PMPI libraries export only MPI_* symbols (version script) and leave no rankmap symbol unresolved.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
for m in $PMPI_MPIS; do
	lib=$(pmpi_lib "$m")
	if [ ! -f "$lib" ]; then notok "$lib missing"; continue; fi
	syms=$(nm -D --defined-only "$lib" | awk '{ print $3 }')
	bad=$(echo "$syms" | grep -v '^MPI_' | grep -v '^$')
	[ -z "$bad" ] && ok "$m: only MPI_ symbols exported" || notok "$m: exports non-MPI symbols: $bad"
	for s in MPI_Cart_create MPI_Graph_create MPI_Dist_graph_create MPI_Dist_graph_create_adjacent MPI_Init \
		MPI_Finalize MPI_Send MPI_Isend MPI_Start MPI_Neighbor_alltoall; do
		echo "$syms" | grep -qx "$s" && ok "$m: exports $s" || notok "$m: $s not exported"
	done
	und=$(nm -D --undefined-only "$lib" | awk '{ print $2 }' | grep -E '^(topo|map|rm|rmp|order)_')
	[ -z "$und" ] && ok "$m: no unresolved rankmap symbols" || notok "$m: unresolved: $und"
	mpilib=$(ldd "$lib" | grep -Ec 'libmpi\.so|libmpich\.so')
	[ "$mpilib" -eq 1 ] && ok "$m: linked against its MPI" || notok "$m: MPI library dependency ($mpilib)"
done
finish
