#!/bin/sh
# tests/trixie/suite.sh: the second suite, inside the Debian 13 root (scripts/trixie.sh suite SRC, which
# runs it with SRC at /src; tests/integration/debian13.sh runs that in `make test`). Checks that the root
# is the stack this suite is about, builds the tree into /src/build-trixie (the checkout's own build/ is
# untouched), and runs the tests below with tests/run.sh. Prints the build's and the tests' times, then
# run.sh's report, whose last line is the total.
#
# The tests: what Debian 13's Slurm 24.11 (SPANK API, slurmctld and slurmd, topology/tree and
# topology/block), Open MPI 5.0.7 (PRRTE and PMIx launch), MPICH 4.2.1 and hwloc 2.12 change under the
# project: the SPANK plugin's units and a local cluster's `srun --rankmap`, the PMPI library under both
# MPIs, Slurm's reading of rankmap's tree and block files, hwloc XML (2.x and 3.0 files, hwloc-diff and
# hwloc-compress-dir), Scotch and libibnetdisc through the local mapping helper (test_map_engines). TESTS (blank-separated
# patterns) replaces the list.
TRIXIE_TESTS="test_topo_hwloc test_spank_* test_report_slurm test_topo_ib_files test_map_engines
 hwloc_doctype hwloc_faults hwloc_v3 report_slurm report_slurm_formats slurm_block slurm_nvlink
 pmpi_cart pmpi_graph pmpi_preload pmpi_exports pmpi_wrong_mpi spank_cluster spank_exports"
B=build-trixie
export B
cd /src || { echo "trixie suite: no source tree at /src"; echo "0 passed, 1 failed"; exit 1; }

# the stack: each version as this suite expects it, or the suite fails here, naming what differs
bad=0
want() { # WHAT PATTERN OUTPUT
	if printf '%s\n' "$3" | grep -Eq "$2"; then
		echo "trixie suite: $1: $(printf '%s\n' "$3" | grep -E "$2" | head -n 1)"
	else
		echo "trixie suite: $1 is not what this suite is about (want /$2/): $(printf '%s' "$3" | head -n 1)"
		bad=1
	fi
}
want "Debian" '^13' "$(cat /etc/debian_version 2>&1)"
want "Slurm" '^slurm(-wlm)? 24\.11\.' "$(slurmctld -V 2>&1)"
want "Open MPI" '\(Open MPI\) 5\.0\.' "$(mpirun.openmpi --version 2>&1)"
want "PRRTE" 'prte .*3\.' "$(prte --version 2>&1)"
want "MPICH" 'Version: *4\.2\.' "$(mpichversion 2>&1)"
want "hwloc" 'hwloc-info 2\.12\.' "$(hwloc-info --version 2>&1)"
want "GCC" '^gcc .* 14\.' "$(gcc --version 2>&1)"
if [ $bad -ne 0 ]; then
	echo "0 passed, 1 failed"
	exit 1
fi

mkdir -p "$B" || exit 1
t0=$(date +%s)
if ! make --no-print-directory -j"${TRIXIE_JOBS:-2}" B="$B" all test-progs >"$B/build.log" 2>&1; then
	grep -E ': (error|undefined reference)|cannot find|No such file' "$B/build.log" | head -n 20
	tail -n 20 "$B/build.log"
	echo "trixie suite: the build failed in the Debian 13 root (log: $B/build.log)"
	echo "0 passed, 1 failed"
	exit 1
fi
t1=$(date +%s)
echo "trixie suite: built in $((t1 - t0)) s"
rep=$B/test-logs.report
TESTS=${TESTS:-$TRIXIE_TESTS} sh tests/run.sh >"$rep" 2>&1
rc=$?
t2=$(date +%s)
# run.sh's report, the times before its total
sed '$d' "$rep"
echo "trixie suite: built in $((t1 - t0)) s, tests ran in $((t2 - t1)) s"
tail -n 1 "$rep"
exit $rc
