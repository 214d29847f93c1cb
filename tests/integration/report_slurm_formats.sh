#!/bin/sh
# tests/integration/report_slurm_formats.sh: `rankmapctl slurm-topology --format block|yaml|weights` and
# `--nodes` / `--slurm-conf` (only Slurm's nodes).
#
# Each format is checked against the grammar of Slurm's manual pages and against the tree of the same
# fabric (slurm_formats_check.py, written from topology.conf(5) and topology.yaml(5); the tree itself is
# checked against the raw fabric file by report_topo_check.py), and each checker first proves that it
# rejects a broken file. The filter is checked against the node lists computed here from slurm.conf and
# the fabric file, and by a real slurmctld (Debian 12: Slurm 22.05, topology/tree; tests/slurm/ctld_topo.sh):
# the unfiltered PlaFRIM file makes it log "Invalid hostnames in switch configuration", the filtered one
# loads cleanly and `scontrol show topology` has every switch at its level and every kept node once.
# topology/block needs Slurm 23.11: the block file is loaded when slurmctld is that recent (the Debian 13
# root), else that check is skipped with the reason. topology.yaml needs Slurm 25.05, in no Debian
# release: grammar only.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/slurm/ctld_topo.sh"

R=$BIN/rankmapctl
TC="python3 $TOP/tests/integration/report_topo_check.py"
FC="python3 $TOP/tests/integration/slurm_formats_check.py"
NDR=$DATA/ib/ndr-fattree-582ca.ibnetdiscover
PLA=$DATA/plafrim/ib/ib-subnet0.txt
SCONF=$DATA/slurm/slurm.conf.nodes
T=$(mktmp) || exit 1
cleanup() { ctld_kill; rm -rf "$T"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

quiet() { "$@" >/dev/null 2>&1; }
# rejects CMD...: the checker CMD finds a problem (exit 1), as opposed to not running at all (exit 2, a
# traceback): a broken checker must not pass as a rejection
rejects() { _o=$("$@" 2>&1); _r=$?; [ $_r = 1 ] && ! printf '%s' "$_o" | grep -q Traceback || { printf '%s\n' "$_o" | tail -3 >&2; return 1; }; }
# gen NAME ARGS...: slurm-topology ARGS into $T/NAME (stderr in $T/NAME.err)
gen() { out=$1; shift; "$R" slurm-topology "$@" --out "$T/$out" 2>"$T/$out.err"; }

# ---- every format, three fabrics --------------------------------------------------------------------
for f in ndr:"$NDR" s3:"$DATA/ib/small-3level.ports" pla:"$PLA"; do
	n=${f%%:*} ib=${f#*:}
	for fmt in tree block yaml weights; do
		gen "$n.$fmt" --ib "$ib" --format "$fmt" || notok "$n: --format $fmt failed: $(cat "$T/$n.$fmt.err")"
	done
	expect "$n: the tree keeps its invariants" $TC "$T/$n.tree" --invariants
	expect "$n: block: topology.conf(5) grammar, BlockSizes rules, the tree's leaves in spine order" \
		$FC block "$T/$n.block" --tree "$T/$n.tree"
	expect "$n: yaml: topology.yaml(5) grammar (JSON Schema + rules); its tree and blocks are the files'" \
		$FC yaml "$T/$n.yaml" --tree "$T/$n.tree" --block "$T/$n.block"
	expect "$n: weights: 1..N, hosts in leaf order, leaves in the order the spines reach them" \
		$FC weights "$T/$n.weights" --tree "$T/$n.tree"
done
expect "--format tree is the default output" cmp -s "$T/ndr.tree" "$(gen ndr.default --ib "$NDR"; echo "$T/ndr.default")"
expect "NDR tree: checked against the raw fabric file" $TC "$T/ndr.tree" --invariants --topofile "$NDR"
n=$(grep -c '^BlockName=' "$T/ndr.block"); l=$(grep -c '^SwitchName=.*Nodes=' "$T/ndr.tree")
expect "NDR: one block per leaf ($n blocks, $l leaves)" test "$n" = "$l" -a "$n" -gt 1
expect "NDR: a note that the 2-host leaf (B11-P1-CUFM-02, ubuntu) sets the base block size" \
	grep -q '^# Note: leaf switch ibsw32 (2 nodes) sets the base block size' "$T/ndr.block"
expect "PlaFRIM: the note names ibsw9 (devel, 6 hosts; leaves of 6-27, median 17)" \
	grep -q '^# Note: leaf switch ibsw9 (6 nodes) sets the base block size, far below the median block (17$' "$T/pla.block"
expect "3-level fabric: no note (every leaf has 2 hosts)" sh -c "! grep -q '^# Note:' '$T/s3.block'"
expect "3-level fabric: the leaves come pod by pod (ibsw6,7 under ibsw2; ibsw8,9 under ibsw4)" \
	test "$($FC leaf-order "$T/s3.tree" | tr '\n' ' ')" = "ibsw6 ibsw7 ibsw8 ibsw9 "
expect "yaml: a partition example in comments" grep -q '^#   PartitionName=.* Topology=block' "$T/ndr.yaml"
expect "yaml: three topologies, tree the cluster default" \
	sh -c "grep -c '^- topology: ' '$T/ndr.yaml' | grep -qx 3 && grep -A1 '^- topology: tree' '$T/ndr.yaml' | grep -q 'cluster_default: true'"

# ---- a dragonfly: its groups as one level of the tree, as the blocks ---------------------------------
DF=$DATA/ib/df-5x4x4.topo
for fmt in tree block yaml weights; do
	gen "df.$fmt" --ib "$DF" --format "$fmt" || notok "dragonfly: --format $fmt failed: $(cat "$T/df.$fmt.err")"
done
expect "dragonfly tree: invariants, one tree (no warning)" sh -c "$TC '$T/df.tree' --invariants && ! grep -q warning '$T/df.tree.err'"
expect "dragonfly tree: a switch per group above exactly its routers (5 groups, 10 global links found here)" \
	$FC dragonfly "$T/df.tree" "$DF"
expect "dragonfly tree: the TopologyParam=Dragonfly advice in comments" \
	sh -c "grep -q '^#   TopologyParam=Dragonfly' '$T/df.tree' && grep -q '^#   TopologyPlugin=topology/tree' '$T/df.tree'"
expect "dragonfly block: one block per group, every host of the group, BlockSizes rules" \
	$FC block "$T/df.block" --tree "$T/df.tree" --groups
expect "dragonfly yaml: grammar; its tree and blocks are the files'" $FC yaml "$T/df.yaml" --tree "$T/df.tree" --block "$T/df.block"
expect "dragonfly weights: group by group, leaf by leaf" $FC weights "$T/df.weights" --tree "$T/df.tree"
sed 's/^SwitchName=group1 Switches=.*/SwitchName=group1 Switches=ibsw[5-7]/; s/^SwitchName=group4 Switches=.*/SwitchName=group4 Switches=ibsw[8,17-20]/' \
	"$T/df.tree" >"$T/bad.df"
expect "dragonfly check rejects a router in the wrong group" rejects $FC dragonfly "$T/bad.df" "$DF"
expect "block check rejects blocks that are not the dragonfly's groups" rejects $FC block "$T/ndr.block" --tree "$T/df.tree" --groups

# a Dragonfly+ (written here): 4 groups of 2 leaves (3 hosts each) under 2 spines, 12 global links
python3 "$TOP/tests/integration/report_gen_dfplus.py" 4 2 3 2 >"$T/dfp.topo"
for fmt in tree block weights; do gen "dfp.$fmt" --ib "$T/dfp.topo" --format "$fmt"; done
expect "Dragonfly+ tree: leaves, spines, a switch per group above its spines, the top (groups found here)" \
	sh -c "$TC '$T/dfp.tree' --invariants && $FC dragonfly '$T/dfp.tree' '$T/dfp.topo'"
expect "Dragonfly+ block: the 4 groups, 6 hosts each" \
	sh -c "$FC block '$T/dfp.block' --tree '$T/dfp.tree' --groups && [ \$(grep -c '^BlockName=group' '$T/dfp.block') = 4 ]"
expect "Dragonfly+ weights: group by group" $FC weights "$T/dfp.weights" --tree "$T/dfp.tree"

# ---- the checkers reject broken files -----------------------------------------------------------------
sed 's/^BlockSizes=.*/BlockSizes=6,10/' "$T/pla.block" >"$T/bad1.block"
expect "block check rejects BlockSizes=6,10 (10 is not 6 times a power of two)" rejects $FC block "$T/bad1.block"
sed 's/^BlockSizes=.*/BlockSizes=7,14/' "$T/pla.block" >"$T/bad2.block"
expect "block check rejects a base block size above the smallest block" rejects $FC block "$T/bad2.block"
sed 's/^\(BlockName=ibsw2 Nodes=.*\)$/\1,devel01/' "$T/pla.block" >"$T/bad3.block"
expect "block check rejects a node in two blocks" rejects $FC block "$T/bad3.block"
awk '/^BlockName=ibsw2 /{ keep = $0; next } { print } /^BlockName=ibsw5 /{ print keep }' "$T/pla.block" >"$T/bad4.block"
expect "block check rejects leaves out of spine order" rejects $FC block "$T/bad4.block" --tree "$T/pla.tree"
awk '/^- topology: tree/{ print "- cluster_default: true"; print "  topology: tree"; getline; next } { print }' \
	"$T/ndr.yaml" >"$T/bad1.yaml"
expect "yaml check rejects a topology whose first attribute is not topology" rejects $FC yaml "$T/bad1.yaml"
sed 's/^  flat: true/  flat: true\n  tree:\n    switches: []/' "$T/ndr.yaml" >"$T/bad2.yaml"
expect "yaml check rejects a topology with two types" rejects $FC yaml "$T/bad2.yaml"
sed 's/^      - \([0-9]*\)$/      - "\1"/' "$T/ndr.yaml" >"$T/bad3.yaml"
expect "yaml check rejects block sizes that are strings" rejects $FC yaml "$T/bad3.yaml"
# Slurm's default without weights: nodes by name. On the NDR fabric that is not the fat-tree order.
grep '^NodeName=' "$T/ndr.weights" | cut -d' ' -f1 | sort -V | awk '{ print $0 " Weight=" NR }' >"$T/alpha.weights"
expect "weights check rejects nodes in name order (Slurm's order without weights)" \
	rejects $FC weights "$T/alpha.weights" --tree "$T/ndr.tree"

# ---- only Slurm's nodes -------------------------------------------------------------------------------
# slurm_nodes: the names the NodeName= lines of slurm.conf.nodes and its Include define (read here).
slurm_nodes() {
	python3 - "$SCONF" <<'EOPY'
import os, re, sys
sys.path.insert(0, os.environ['TOP'] + '/tests/integration')
from report_topo_check import expand
names, files = set(), [sys.argv[1]]
while files:
    path = files.pop(0)
    text = re.sub(r'\\\n', ' ', open(path).read())
    for line in text.splitlines():
        line = line.split('#')[0]
        m = re.match(r'\s*include\s+(\S+)', line, re.I)
        if m:
            files.append(os.path.join(os.path.dirname(path), m.group(1)))
        for v in re.findall(r'(?i)(?:^|\s)nodename=(\S+)', line):
            if v.upper() != 'DEFAULT':
                names.update(expand(v))
print('\n'.join(sorted(names)))
EOPY
}
export TOP
slurm_nodes >"$T/slurm.nodes"
$TC "$T/pla.tree" --list-hosts | sort >"$T/fabric.hosts"
comm -12 "$T/fabric.hosts" "$T/slurm.nodes" >"$T/want.kept"
comm -23 "$T/fabric.hosts" "$T/slurm.nodes" >"$T/want.out"
comm -13 "$T/fabric.hosts" "$T/slurm.nodes" >"$T/want.missing"
expect "PlaFRIM: the file servers are in the fabric but no Slurm node" \
	test "$(tr '\n' ' ' <"$T/want.out")" = "mds01 oss01 oss02 oss03 oss04 reine "
for fmt in tree block yaml weights; do
	gen "f.$fmt" --ib "$PLA" --format "$fmt" --slurm-conf "$SCONF" ||
		notok "--slurm-conf --format $fmt failed: $(cat "$T/f.$fmt.err")"
done
expect "--slurm-conf: the tree lists exactly the fabric hosts that are Slurm nodes ($(wc -l <"$T/want.kept"))" \
	sh -c "$TC '$T/f.tree' --invariants --list-hosts | sort | cmp -s - '$T/want.kept'"
# comment_hosts FILE HEAD: the host list in the comment lines after the comment line matching HEAD
comment_hosts() {
	awk -v h="$2" 'index($0, h) { on = 1; next } on && /^ *#   / { sub(/^ *#   /, ""); printf "%s", $0; next } { on = 0 }' "$1" |
		python3 -c "import sys; sys.path.insert(0, '$TOP/tests/integration'); from report_topo_check import expand; print('\n'.join(sorted(expand(sys.stdin.read().strip()))))"
}
for fmt in tree block yaml weights; do
	comment_hosts "$T/f.$fmt" 'are not Slurm nodes' >"$T/got.out"
	comment_hosts "$T/f.$fmt" 'have no HCA in the fabric' >"$T/got.missing"
	expect "--slurm-conf $fmt: the left-out hosts are named in a comment, exactly" cmp -s "$T/got.out" "$T/want.out"
	expect "--slurm-conf $fmt: no left-out host outside comments" \
		sh -c "! grep -v '^ *#' '$T/f.$fmt' | grep -qw -e oss01 -e mds01 -e reine"
	expect "--slurm-conf $fmt: the Slurm nodes the fabric lacks are named in a comment" cmp -s "$T/got.missing" "$T/want.missing"
done
expect "without a filter no host is said to be left out (extras in Nodes=)" \
	sh -c "! grep -q 'not Slurm nodes' '$T/pla.tree' && grep -q '^SwitchName=.*Nodes=.*oss\[01-04\]' '$T/pla.tree'"
expect "--slurm-conf: a note on standard error" grep -q "6 fabric hosts are no Slurm node" "$T/f.tree.err"
gen n.tree --ib "$PLA" --nodes "$(tr '\n' ',' <"$T/slurm.nodes" | sed 's/,$//')"
expect "--nodes with the same names writes the same file" cmp -s "$T/n.tree" "$T/f.tree"
expect "--slurm-conf block: BlockSizes still follow the rules" $FC block "$T/f.block" --tree "$T/f.tree"
expect "--slurm-conf yaml: grammar" $FC yaml "$T/f.yaml" --tree "$T/f.tree" --block "$T/f.block"
expect "--slurm-conf weights: Slurm's nodes only, fat-tree order" $FC weights "$T/f.weights" --tree "$T/f.tree"

# ---- errors ---------------------------------------------------------------------------------------------
printf 'NodeName=ok[1-2]\n\nNodeName=bad[1-\n' >"$T/bad.conf"
"$R" slurm-topology --ib "$PLA" --slurm-conf "$T/bad.conf" >/dev/null 2>"$T/err"; rc=$?
expect "a bad host list in slurm.conf: exit 1 ($rc), the message names file and line 3" \
	sh -c "[ $rc = 1 ] && grep -q 'bad.conf:3:.*NodeName=bad\[1-' '$T/err'"
printf 'Include %s/none.conf\n' "$T" >"$T/inc.conf"
"$R" slurm-topology --ib "$PLA" --slurm-conf "$T/inc.conf" >/dev/null 2>"$T/err"; rc=$?
expect "an Include of a missing file: exit 1 ($rc), named with the including file and line" \
	sh -c "[ $rc = 1 ] && grep -q 'none.conf: .*(included from $T/inc.conf:1)' '$T/err'"
"$R" slurm-topology --ib "$PLA" --slurm-conf "$T/nope.conf" >/dev/null 2>"$T/err"; rc=$?
expect "a missing slurm.conf: exit 1 ($rc), named" sh -c "[ $rc = 1 ] && grep -q 'nope.conf' '$T/err'"
"$R" slurm-topology --ib "$PLA" --nodes 'a[1-' >/dev/null 2>"$T/err"; rc=$?
expect "--nodes with a bad host list: exit 1 ($rc)" sh -c "[ $rc = 1 ] && grep -q -- '--nodes' '$T/err'"
"$R" slurm-topology --ib "$PLA" --nodes 'nothere[1-3]' --out "$T/none.conf" 2>"$T/err"; rc=$?
expect "--nodes naming no host of the fabric: exit 1 ($rc), said, no file" \
	sh -c "[ $rc = 1 ] && grep -q 'no host of the fabric' '$T/err' && [ ! -e '$T/none.conf' ]"
usage2() { "$R" slurm-topology --ib "$PLA" "$@" >/dev/null 2>&1; [ $? = 2 ]; }
expect "--format nope: usage error" usage2 --format nope
expect "--all-leaves with --format block: usage error (a node is in one block)" usage2 --all-leaves --format block
expect "--nodes and --slurm-conf together: usage error" usage2 --nodes a1 --slurm-conf "$SCONF"
"$R" slurm-topology --ib "$PLA" --format yaml --slurm-conf "$T/bad.conf" --out "$T/none.yaml" 2>/dev/null
expect "--out is not created on error" test ! -e "$T/none.yaml"

# ---- a real slurmctld reads the files ---------------------------------------------------------------------
if command -v slurmctld >/dev/null && command -v scontrol >/dev/null; then
	invalid() { grep -qi "invalid hostnames in switch configuration" "$1/out" "$1/log/ctld.log"; }
	clean() { ! grep -qi "error.*topology\|fatal\|invalid hostnames\|lookup failure" "$1/out" "$1/log/ctld.log"; }
	ctld_topology "$T/c-all" topology/tree "$T/pla.tree" "$T/slurm.nodes" ||
		notok "slurmctld with the unfiltered file did not answer: $(tail -3 "$T/c-all/out")"
	expect "the check can fail: unfiltered, slurmctld logs 'Invalid hostnames in switch configuration'" invalid "$T/c-all"
	ctld_topology "$T/c-f" topology/tree "$T/f.tree" "$T/slurm.nodes" ||
		notok "slurmctld with the filtered file did not answer: $(tail -3 "$T/c-f/out")"
	expect "--slurm-conf: slurmctld (Slurm $(slurm_version)) loads the file with no 'Invalid hostnames', no error" clean "$T/c-f"
	expect "scontrol show topology: every switch at the level the file implies" $TC "$T/f.tree" --slurm-levels "$T/c-f/topo.out"
	got=$(python3 -c "
import re, sys
sys.path.insert(0, '$TOP/tests/integration')
from report_topo_check import expand
print(sum(len(expand(m.group(1))) for m in (re.search(r' Level=0 .*Nodes=(\S+)', l) for l in open('$T/c-f/topo.out')) if m))")
	expect "scontrol show topology: the leaves hold $(wc -l <"$T/want.kept") nodes, Slurm's nodes of the fabric (got $got)" \
		test "$got" = "$(wc -l <"$T/want.kept")"
	ctld_topology "$T/c-ndr" topology/tree "$T/ndr.tree" "$(
		$TC "$T/ndr.tree" --list-hosts >"$T/ndr.nodes"
		echo "$T/ndr.nodes"
	)" || notok "slurmctld with the NDR file did not answer"
	expect "NDR: slurmctld loads the tree file cleanly" clean "$T/c-ndr"
	$TC "$T/df.tree" --list-hosts >"$T/df.nodes"
	ctld_topology "$T/c-df" topology/tree "$T/df.tree" "$T/df.nodes" TopologyParam=Dragonfly ||
		notok "slurmctld with the dragonfly file did not answer: $(tail -3 "$T/c-df/out")"
	expect "dragonfly: slurmctld (TopologyParam=Dragonfly) loads the tree file cleanly" clean "$T/c-df"
	expect "dragonfly: scontrol show topology: every switch at its level" $TC "$T/df.tree" --slurm-levels "$T/c-df/topo.out"
	expect "dragonfly: scontrol show topology: below the top, the fabric's 5 groups, each with its hosts" \
		$FC dragonfly "$T/df.tree" "$DF" --slurm "$T/c-df/topo.out"
	$TC "$T/dfp.tree" --list-hosts >"$T/dfp.nodes"
	ctld_topology "$T/c-dfp" topology/tree "$T/dfp.tree" "$T/dfp.nodes" TopologyParam=Dragonfly ||
		notok "slurmctld with the Dragonfly+ file did not answer: $(tail -3 "$T/c-dfp/out")"
	expect "Dragonfly+: slurmctld loads it cleanly, every switch at its level, the 4 groups below the top" \
		sh -c "! grep -qi 'error.*topology\|fatal\|invalid hostnames' '$T/c-dfp/out' '$T/c-dfp/log/ctld.log' &&
			$TC '$T/dfp.tree' --slurm-levels '$T/c-dfp/topo.out' && $FC dragonfly '$T/dfp.tree' '$T/dfp.topo' --slurm '$T/c-dfp/topo.out'"
	if [ "$(slurm_version)" -ge 2311 ]; then
		ctld_topology "$T/c-blkall" topology/block "$T/pla.block" "$T/slurm.nodes" ||
			notok "slurmctld with the unfiltered block file did not answer: $(tail -3 "$T/c-blkall/out")"
		expect "topology/block, the check can fail: unfiltered, slurmctld cannot find the file servers" \
			grep -qi 'lookup failure for node "oss01"\|invalid hostnames in block' "$T/c-blkall/out" "$T/c-blkall/log/ctld.log"
		ctld_topology "$T/c-blk" topology/block "$T/f.block" "$T/slurm.nodes" ||
			notok "slurmctld with topology/block did not answer: $(tail -3 "$T/c-blk/out")"
		expect "topology/block: slurmctld loads the block file cleanly" clean "$T/c-blk"
		expect "topology/block: scontrol show topology lists every block with its nodes" \
			$FC slurm-blocks "$T/c-blk/topo.out" "$T/f.block"
	else
		skip "topology/block needs Slurm 23.11 (slurmctld here: $(slurmctld -V 2>/dev/null)): the block file is checked against topology.conf(5) only; the Debian 13 root (Slurm 24.11) loads it"
	fi
else
	skip "slurmctld/scontrol not installed (make deps installs them): Slurm parsing not checked"
fi
finish
