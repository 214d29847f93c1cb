#!/bin/sh
# tests/integration/slurm_block.sh: rankmap's block file for Slurm's topology/block (Slurm 23.11 and later).
#
# The file comes from `rankmapctl slurm-topology --format block` where rankmapctl has it; before that
# (a tree only), from the tree file by the documented rules (slurm_block_check.py from-tree: one block
# per leaf switch, BlockSizes= the smallest block's size doubling up to the largest power of two of
# blocks). Either way it is checked against the tree file of the same fabric, parsed independently
# (slurm_block_check.py check), and Slurm itself loads it: a throw-away slurmctld (every node at
# 127.0.0.1, all under a temporary directory, stopped by PID) with TopologyPlugin=topology/block, and
# `scontrol show topology` must list every block with its nodes. Debian 12's Slurm 22.05 has no
# topology/block: there the loading is skipped (a skip CI allows: the Debian 13 suite, debian13, loads it
# with Slurm 24.11).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/slurm/ctld_topo.sh"

R=$BIN/rankmapctl
CHK="python3 $TOP/tests/integration/slurm_block_check.py"
TREECHK="python3 $TOP/tests/integration/report_topo_check.py"
T=$(mktmp) || exit 1
cleanup() {
	ctld_kill
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# block NAME ARGS...: NAME.tree (the tree file) and NAME.block (the block file) for the fabric of ARGS
if "$R" slurm-topology --help 2>&1 | grep -q -- '--format'; then
	how="rankmapctl slurm-topology --format block"
	block() { n=$1; shift; "$R" slurm-topology "$@" --out "$T/$n.tree" && "$R" slurm-topology --format block "$@" --out "$T/$n.block"; }
else
	how="the tree file by the documented rules (rankmapctl has no --format block yet)"
	block() { n=$1; shift; "$R" slurm-topology "$@" --out "$T/$n.tree" && $CHK from-tree "$T/$n.tree" >"$T/$n.block"; }
fi
echo "block files from: $how"

block s3 --ib "$DATA/ib/small-3level.ports" 2>"$T/s3.err"
expect "small-3level: one block per leaf, its hosts, BlockSizes by the rules" $CHK check "$T/s3.block" "$T/s3.tree"
block ndr --ib "$DATA/ib/ndr-fattree-582ca.ibnetdiscover" 2>"$T/ndr.err"
expect "NDR fat tree: one block per leaf, its hosts, BlockSizes by the rules" $CHK check "$T/ndr.block" "$T/ndr.tree"
n=$(grep -c '^BlockName=' "$T/ndr.block") l=$(grep -c '^SwitchName=.*Nodes=' "$T/ndr.tree")
expect "NDR fat tree: a block for each of the $l leaves with hosts (got $n)" test "$n" = "$l" -a "$n" -gt 1
# the checker can fail: a host moved into a second block, a size that is no power of two larger
sed '0,/^BlockName=/s/^\(BlockName=.* Nodes=.*\)$/\1,ndr-node-x/' "$T/s3.block" >"$T/bad1.block"
expect_fail "the check refuses a block with a host its leaf lacks" $CHK check "$T/bad1.block" "$T/s3.tree"
sed 's/^BlockSizes=\([0-9]*\),.*/BlockSizes=\1,3/' "$T/ndr.block" >"$T/bad2.block"
expect_fail "the check refuses BlockSizes that do not double" $CHK check "$T/bad2.block" "$T/ndr.tree"

# slurm_loads NAME BLOCKS TREE: slurmctld loads BLOCKS as topology.conf with topology/block (ctld_topology);
# scontrol lists every block with its nodes, slurmctld logs no topology error.
slurm_loads() {
	sd=$T/slurm-$1
	$TREECHK "$3" --list-hosts | grep -v '^0x' | awk '{print $1}' >"$T/$1.nodes"
	ctld_topology "$sd" topology/block "$2" "$T/$1.nodes" || return 1
	if grep -qi "error.*\(topology\|block\)\|fatal\|invalid hostnames" "$sd/out" "$sd/log/ctld.log"; then
		grep -i "error\|fatal" "$sd/out" "$sd/log/ctld.log" | head -n 5 >&2; return 1
	fi
	$CHK slurm "$2" "$sd/topo.out" || { head -5 "$sd/topo.out" >&2; return 1; }
}

v=$(slurm_version)
vs=$((v / 100)).$(printf %02d $((v % 100)))
if [ "$v" = 0 ]; then
	skip "slurmctld is not installed (make deps installs it): Slurm's loading of the block file not checked"
elif [ "$v" -lt 2311 ]; then
	skip "Slurm $vs: topology/block is in Slurm 23.11 and later, in no Debian 12 package (the Debian 13 suite, debian13, loads the file)"
else
	expect "Slurm $vs loads the small-3level block file (scontrol show topology: every block, its nodes)" \
		slurm_loads s3 "$T/s3.block" "$T/s3.tree"
	expect "Slurm loads the NDR fat tree's block file (GUID-only HCAs left out)" \
		slurm_loads ndr "$T/ndr.block" "$T/ndr.tree"
	# the Slurm check can fail: a node Slurm does not know put into a block
	sed '0,/^BlockName=/s/^\(BlockName=.* Nodes=.*\)$/\1,0x0002c90300000020/' "$T/s3.block" >"$T/s3guid.block"
	quiet() { "$@" 2>/dev/null; }
	expect_fail "the Slurm check refuses a block naming a node Slurm lacks" quiet slurm_loads s3guid "$T/s3guid.block" "$T/s3.tree"
fi
finish
