#!/bin/sh
# tests/mpi/run_example.sh: the `make run` demonstration of the PMPI library. A small Cartesian MPI
# program (4x4 periodic halo exchange, Open MPI, 16 ranks) runs on the bundled example cluster
# (tests/data/example/cluster.conf: PlaFRIM's hwloc trees and InfiniBand fabric) with
# librankmap_mpi_openmpi.so preloaded, in the test-only cyclic placement over 2 of its hosts, and the
# library's report line shows the mapping cost before and after reordering.
# Usage: sh tests/mpi/run_example.sh   (from the repository top; B=build directory)
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${B:-build}
BIN=$top/$B
prog=$BIN/tests/mpi/openmpi/cart_halo
lib=$BIN/librankmap_mpi_openmpi.so
if [ ! -x "$prog" ] || [ ! -f "$lib" ]; then
	echo "run_example: build first: make B=$B all test-progs" >&2
	exit 1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "== 4x4 periodic Cartesian halo exchange, 16 ranks, Open MPI, librankmap_mpi_openmpi.so preloaded"
echo "   cluster: tests/data/example/cluster.conf, test-only cyclic placement over 2 of its hosts"
RANKMAP_CLUSTER=$top/tests/data/example/cluster.conf RANKMAP_FAKE_HOSTS=2 RANKMAP_FAKE_PLACEMENT=cyclic \
	RANKMAP_VERBOSE=1 mpirun.openmpi --oversubscribe --allow-run-as-root -np 16 -x LD_PRELOAD="$lib" \
	"$prog" 2 4 4 1 1 2>&1 | sed 's/^rankmap: report /rankmap: /'
