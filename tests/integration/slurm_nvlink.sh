#!/bin/sh
# tests/integration/slurm_nvlink.sh: blocks for multi-node NVLink domains (GB200 NVL72 racks and the like):
# the cluster file's `nvlink_domain = NAME HOSTLIST` lines and `slurm-topology --format block|yaml`.
#
# The domains are made here from the NDR capture's host names (one per chassis prefix, a05-p1-dgx-01-c01..
# c18: up to 18 hosts each, as an NVL72 rack has), read from the fabric file itself. The block file must
# have one block per domain with exactly the domain's hosts, in the order of their first host in the
# fat-tree order (order --method fattree), BlockSizes= from the smallest domain doubling up to the largest
# power of two of domains (computed here), and pass topology.conf(5)'s grammar; the check is shown to
# reject a host moved between blocks. rankmapd on the same cluster file writes the same file. Bad lines
# exit 1 naming the file and line. Slurm loads the file
# where it has topology/block (23.11 and later: the Debian 13 suite, debian13, with Slurm 24.11); Debian
# 12's 22.05 has none (skipped with the reason).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/slurm/ctld_topo.sh"

R=$BIN/rankmapctl
FC="python3 $TOP/tests/integration/slurm_formats_check.py"
NDR=$DATA/ib/ndr-fattree-582ca.ibnetdiscover
T=$(mktmp) || exit 1
rankmapd_on_exit() { ctld_kill; }
rankmapd_cleanup "$T"

# the fabric's named hosts, and one domain per chassis (the name without its -cNN suffix; the UFM host and
# the one named ubuntu are in none)
python3 -c "
import sys; sys.path.insert(0, '$TOP/tests/integration')
from slurm_formats_check import parse_fabric
_, hosts = parse_fabric('$NDR')
print('\n'.join(sorted({h for hs in hosts.values() for h in hs if not h.startswith('0x')})))" >"$T/hosts"
{
	echo "ib = $NDR"
	grep -- '-c[0-9]*$' "$T/hosts" | sed 's/-c[0-9]*$//' | sort -u | while read -r d; do
		echo "nvlink_domain = $d $(grep "^$d-c" "$T/hosts" | paste -sd, -)"
	done
} >"$T/nvl.conf"
nd=$(grep -c '^nvlink_domain' "$T/nvl.conf")
expect "the NDR capture has several chassis ($nd) for domains" test "$nd" -gt 2

expect "--format block with nvlink_domain lines" sh -c "'$R' slurm-topology --cluster '$T/nvl.conf' --format block --out '$T/nvl.block' 2>'$T/err'"
expect "the block file: topology.conf(5) grammar, BlockSizes rules" $FC block "$T/nvl.block"
"$R" order --method fattree --ib "$NDR" --output "$T/order" 2>/dev/null
# want: the domains of the cluster file, ordered by the fat-tree position of their first host
python3 - "$T/nvl.conf" "$T/order" "$T/want" <<'EOPY'
import sys
pos = {h.strip(): i for i, h in enumerate(open(sys.argv[2]))}
doms = []
for line in open(sys.argv[1]):
    if line.startswith('nvlink_domain'):
        name, hl = line.split('=', 1)[1].split()
        hosts = sorted(h for h in hl.split(',') if h in pos)
        doms.append((min(pos[h] for h in hosts), name, hosts))
with open(sys.argv[3], 'w') as f:
    for _, name, hosts in sorted(doms):
        f.write(name + ' ' + ','.join(hosts) + '\n')
EOPY
# got FILE: the blocks of a block file as "NAME host,host,..." (hosts sorted), in file order
got() {
	python3 -c "
import sys; sys.path.insert(0, '$TOP/tests/integration')
from slurm_formats_check import parse_block
for n, h in parse_block('$1')[0]: print(n + ' ' + ','.join(sorted(h)))"
}
got "$T/nvl.block" >"$T/got"
expect "one block per domain ($nd), exactly its hosts, in the fat-tree order of their first hosts" cmp -s "$T/got" "$T/want"
sizes=$(awk '{ n = split($2, a, ","); if (!m || n < m) m = n; k++ } END { s = m; for (b = 1; b <= k; b *= 2) { printf "%s%d", (b > 1 ? "," : ""), m * b } }' "$T/want")
expect "BlockSizes=$sizes (smallest domain, doubling up to the largest power of two of $nd domains)" \
	grep -qx "BlockSizes=$sizes" "$T/nvl.block"
awk 'NR == 1 { sub(/,[^,]*$/, ""); print; next } NR == 2 { print $0 ",a05-p1-dgx-01-c01"; next } { print }' "$T/got" >"$T/bad.got"
expect "the comparison rejects a host moved to another block" sh -c "! cmp -s '$T/bad.got' '$T/want'"
expect "--format yaml: the same blocks, grammar of topology.yaml(5)" sh -c "'$R' slurm-topology --cluster '$T/nvl.conf' --format yaml --out '$T/nvl.yaml' 2>/dev/null && '$R' slurm-topology --cluster '$T/nvl.conf' --out '$T/nvl.tree' 2>/dev/null && $FC yaml '$T/nvl.yaml' --block '$T/nvl.block'"
expect "the block comment names NVLink domains" grep -q "^# Blocks: the $nd NVLink domains" "$T/nvl.block"

# a node list that leaves some domain hosts out: they are named in a comment, the rest stay in blocks
keep=$(head -n 40 "$T/order" | tee "$T/k40" | paste -sd, -)
expect "--nodes: block file" sh -c "'$R' slurm-topology --cluster '$T/nvl.conf' --format block --nodes '$keep' --out '$T/kept.block' 2>/dev/null"
n=$(grep -c -- '-c[0-9]*$' "$T/hosts")
got "$T/kept.block" | cut -d' ' -f2 | tr ',' '\n' | sort >"$T/k40.g"
expect "--nodes: the $((n - 40)) domain hosts left out are named in a comment" \
	grep -q "^# $((n - 40)) hosts of the NVLink domains are not in the fabric's tree" "$T/kept.block"
expect "--nodes: the blocks hold exactly the 40 kept hosts" \
	sh -c "grep -v -e '^B11-P1-CUFM-02\$' -e '^ubuntu\$' '$T/k40' | sort >'$T/k40.d'; cmp -s '$T/k40.g' '$T/k40.d'"
# a domain of part of the fabric: the other hosts are in no block, named in a comment
printf 'ib = %s\nnvlink_domain = one %s\n' "$NDR" "$(head -n 18 "$T/order" | paste -sd, -)" >"$T/one.conf"
"$R" slurm-topology --cluster "$T/one.conf" --format block --out "$T/one.block" 2>/dev/null
all=$(grep -c . "$T/hosts")
expect "one domain of 18: one block, BlockSizes=18, the $((all - 18)) other hosts named in a comment" \
	sh -c "[ \$(grep -c '^BlockName=' '$T/one.block') = 1 ] && grep -qx 'BlockSizes=18' '$T/one.block' && grep -q '^# $((all - 18)) hosts of the fabric are in no NVLink domain' '$T/one.block'"

# rankmapd with the same cluster file answers slurm_topology with the same blocks (its model keeps the domains)
printf 'cluster = %s\n' "$T/nvl.conf" >"$T/d.conf"
if start_rankmapd "$T/d.conf" "$T/sock" "$T/d.log" --state-dir "$T/state"; then
	"$R" slurm-topology --socket "$T/sock" --format block --out "$T/remote.block" 2>/dev/null
	expect "rankmapd (cluster file with nvlink_domain lines): the same block file as offline" cmp -s "$T/remote.block" "$T/nvl.block"
else
	notok "rankmapd starts on the cluster file with nvlink_domain lines: $(tail -n 3 "$T/d.log")"
fi

# ---- bad lines: exit 1, file and line -------------------------------------------------------------
bad() { # DESC LINE CONTENT...: the cluster file (ib line, then CONTENT) fails naming the file and line LINE
	d=$1 l=$2; shift 2
	{ echo "ib = $NDR"; printf '%s\n' "$@"; } >"$T/bad.conf"
	"$R" slurm-topology --cluster "$T/bad.conf" --format block >/dev/null 2>"$T/bad.err"; rc=$?
	expect "$d: exit 1, bad.conf:$l ($(head -c 150 "$T/bad.err"))" sh -c "[ $rc = 1 ] && grep -q 'bad.conf:$l:' '$T/bad.err'"
}
bad "a domain without hosts" 2 "nvlink_domain = rackA"
bad "a name Slurm cannot take" 2 "nvlink_domain = rack/A n[1-2]"
bad "a malformed host list" 2 "nvlink_domain = rackA n[1-"
bad "words after the host list" 2 "nvlink_domain = rackA n[1-2] n3"
bad "a domain declared twice" 3 "nvlink_domain = rackA n[1-2]" "nvlink_domain = rackA n[3-4]"
bad "a host in two domains" 3 "nvlink_domain = rackA n[1-2]" "nvlink_domain = rackB n[2-3]"
bad "a host twice in one domain" 2 "nvlink_domain = rackA n1,n2,n1"
# the names of all nvlink_domain lines together are bounded (admin input must not exhaust memory): at most
# 1,000,000 while the file is read (each line alone stays under it here), then at most max(100,000, twice the
# fabric's hosts); refused at the line where the count passes, saying the bound
bad "three lines of 400,000 names (1,200,000 in all)" 4 "nvlink_domain = a x[0-399999]" "nvlink_domain = b y[0-399999]" "nvlink_domain = c z[0-399999]"
expect "... the error says the bound across the file" grep -q "at most 1000000 hosts in all, 800000 before this line" "$T/bad.err"
# ... and long names: a name pattern of at most 255 characters, a line's names at most 16 MiB (fewer names
# when they are long: 1,000,000 names of 1,000 characters would be 1 GB)
long=$(printf 'n%.0s' $(seq 300))
bad "a host name pattern of 300 characters" 2 "nvlink_domain = a ${long}[1-2]"
expect "... the error says the name's bound" grep -q "a host name pattern of 30[0-9] characters (at most 255)" "$T/bad.err"
long=$(printf 'n%.0s' $(seq 200))
bad "100,000 names of 206 characters (20 MiB) on one line" 2 "nvlink_domain = a ${long}[000000-099999]"
expect "... the error says the line's bound" grep -q "one line at most 16 MiB of names" "$T/bad.err"
bad "two lines of 60,000 names (more than 100,000 and twice the fabric's hosts)" 3 "nvlink_domain = a x[0-59999]" "nvlink_domain = b y[0-59999]"
expect "... the error names the count and the bound" grep -q "name 120000 hosts, more than the fabric's .* hosts allow (at most 100000" "$T/bad.err"
printf 'ib = %s\nnvlink_domain = one %s\nnvlink_domain = far x[0-%d]\n' "$NDR" "$(head -n 18 "$T/order" | paste -sd, -)" $((100000 - 18 - 1)) >"$T/cap.conf"
expect "exactly 100,000 names (18 of the fabric, the rest outside it) are accepted" \
	sh -c "'$R' slurm-topology --cluster '$T/cap.conf' --format block --out '$T/cap.block' 2>'$T/cap.err' && grep -qx 'BlockSizes=18' '$T/cap.block'"
printf 'nvlink_domain = rackA n[1-2]\ntorus = %s\n' "$DATA/torus/xe6.conf" >"$T/nofab.conf"
"$R" slurm-topology --cluster "$T/nofab.conf" >/dev/null 2>"$T/nofab.err"; rc=$?
expect "nvlink_domain without a fabric: exit 1, nofab.conf:1" sh -c "[ $rc = 1 ] && grep -q 'nofab.conf:1:' '$T/nofab.err'"
printf 'ib = %s\nnvlink_domain = x y[1-2]\n' "$NDR" >"$T/none.conf"
"$R" slurm-topology --cluster "$T/none.conf" --format block >/dev/null 2>"$T/none.err"; rc=$?
expect "domains none of whose hosts is in the fabric: exit 1, no empty block file" \
	sh -c "[ $rc = 1 ] && grep -q 'no host of the NVLink domains' '$T/none.err'"

# ---- Slurm loads it ---------------------------------------------------------------------------------
v=$(slurm_version)
vs=$((v / 100)).$(printf %02d $((v % 100)))
if [ "$v" = 0 ]; then
	skip "slurmctld is not installed (make deps installs it): Slurm's loading of the NVLink block file not checked"
elif [ "$v" -lt 2311 ]; then
	skip "Slurm $vs: topology/block is in Slurm 23.11 and later, in no Debian 12 package (the Debian 13 suite, debian13, loads the file)"
else
	# slurm_loads NAME BLOCKS: slurmctld (ctld_topology) loads BLOCKS with topology/block, logs no topology
	# error, and scontrol lists every block with its nodes
	slurm_loads() {
		sd=$T/slurm-$1
		ctld_topology "$sd" topology/block "$2" "$T/hosts" || return 1
		if grep -qi "error.*\(topology\|block\)\|fatal\|invalid hostnames" "$sd/out" "$sd/log/ctld.log"; then
			grep -i "error\|fatal" "$sd/out" "$sd/log/ctld.log" | head -n 5 >&2; return 1
		fi
		$FC slurm-blocks "$sd/topo.out" "$2"
	}
	expect "Slurm $vs loads the NVLink block file: scontrol show topology lists every domain with its nodes" \
		slurm_loads nvl "$T/nvl.block"
	# the Slurm check can fail: a domain naming a node Slurm lacks
	sed '0,/^BlockName=/s/^\(BlockName=.* Nodes=.*\)$/\1,gb-missing-c01/' "$T/nvl.block" >"$T/nvlbad.block"
	quiet() { "$@" 2>/dev/null >/dev/null; }
	expect_fail "the Slurm check refuses a domain naming a node Slurm lacks" quiet slurm_loads nvlbad "$T/nvlbad.block"
fi
finish
