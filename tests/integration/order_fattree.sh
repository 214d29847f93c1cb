#!/bin/sh
# tests/integration/order_fattree.sh: `rankmapctl order --method fattree`, the fat-tree node order (hosts in
# leaf order, the leaves in the order the spines reach them) beside the torus orders.
#
# The order is checked against the raw fabric file, parsed here (slurm_formats_check.py fattree-order:
# every named host once, each leaf's hosts together, the hosts under each part of the tree one level up
# together, a dragonfly's groups together), on the bundled example (PlaFRIM, through its cluster file), a
# three-level fabric, the NDR capture and the generated dragonfly; each check is first shown to reject
# an order that breaks it. Its formats agree with one another and with slurm-topology --format weights,
# --nodes / --slurm-conf keep only Slurm's nodes, rankmapd on the same fabric gives the same order, bad
# input exits 1 naming the file and line, misuse 2.
. "$(dirname "$0")/../lib.sh"

R=$BIN/rankmapctl
FC="python3 $TOP/tests/integration/slurm_formats_check.py"
NDR=$DATA/ib/ndr-fattree-582ca.ibnetdiscover
PLA=$DATA/plafrim/ib/ib-subnet0.txt
S3=$DATA/ib/small-3level.ports
DF=$DATA/ib/df-5x4x4.topo
T=$(mktmp) || exit 1
rankmapd_cleanup "$T"
# rejects CMD...: the checker finds a problem (exit 1), not a crash (a traceback)
rejects() { _o=$("$@" 2>&1); _r=$?; [ $_r = 1 ] && ! printf '%s' "$_o" | grep -q Traceback || { printf '%s\n' "$_o" | tail -3 >&2; return 1; }; }
# fo NAME ARGS...: order --method fattree ARGS into $T/NAME (stderr in $T/NAME.err)
fo() { _n=$1; shift; "$R" order --method fattree "$@" --output "$T/$_n" 2>"$T/$_n.err"; }

# ---- the order, against the fabric files ----------------------------------------------------------------
expect "--help documents --method fattree" sh -c "'$R' order --help | grep -q 'fattree the fabric'"
expect "bundled example (cluster file): the order" fo pla --cluster "$DATA/example/cluster.conf"
expect "bundled example: every host once, leaves together, each part of the tree together (read from $(basename "$PLA"))" \
	$FC fattree-order "$T/pla" "$PLA"
expect "three-level fabric: the order" fo s3 --ib "$S3"
expect "three-level fabric: leaves together, pods (the leaves under one aggregation pair) together" \
	$FC fattree-order "$T/s3" "$S3"
expect "NDR capture: the order" fo ndr --ib "$NDR"
# 4 rails: each host has an HCA on 4 leaves and is listed under its lowest rail's leaf, the leaf of its
# HCA with the lowest label (mlx5_0 before mlx5_1...), read from the file
expect "NDR capture: every named host once, each host's lowest-label leaf together (9 leaves)" \
	$FC fattree-order "$T/ndr" "$NDR" --lowest-label
sort -V "$T/ndr" >"$T/bad.ndr.names"
expect "the check rejects the NDR hosts in name order (Slurm's default: one leaf split)" \
	rejects $FC fattree-order "$T/bad.ndr.names" "$NDR" --lowest-label
expect "dragonfly: the order" fo df --ib "$DF"
expect "dragonfly: every host once, each router's hosts together, each group (found here) together" \
	$FC fattree-order "$T/df" "$DF" --groups
# the checks can fail: Slurm's name order on PlaFRIM, pods interleaved, a host moved out of its group
sort -V "$T/pla" >"$T/bad.pla"
expect "the check rejects PlaFRIM in name order (Slurm's default)" rejects $FC fattree-order "$T/bad.pla" "$PLA"
awk '{ a[NR] = $0 } END { print a[1]; print a[2]; print a[5]; print a[6]; print a[3]; print a[4]; for (i = 7; i <= NR; i++) print a[i] }' \
	"$T/s3" >"$T/bad.s3"
expect "the check rejects the three-level order with pods interleaved (each leaf still together)" \
	rejects $FC fattree-order "$T/bad.s3" "$S3"
awk 'NR == 1 { first = $0; next } { print } END { print first }' "$T/df" >"$T/bad.df"
expect "the check rejects a dragonfly host moved to another group's end" rejects $FC fattree-order "$T/bad.df" "$DF" --groups
head -n 20 "$T/ndr" >"$T/bad.ndr"
expect "the check rejects an order that lacks hosts" rejects $FC fattree-order "$T/bad.ndr" "$NDR"

# ---- formats: one order, shared with slurm-topology --format weights -----------------------------------
for f in ndr:"$NDR" df:"$DF" pla:"$PLA"; do
	n=${f%%:*} ib=${f#*:}
	fo "$n.w" --ib "$ib" --format weights
	"$R" slurm-topology --ib "$ib" --format weights --out "$T/$n.st" 2>/dev/null
	expect "$n: --format weights is slurm-topology --format weights (but for the header line)" \
		sh -c "diff '$T/$n.w' '$T/$n.st' | grep -c '^[<>]' | grep -qx 2"
	expect "$n: weights 1..N in the order of --format list" \
		sh -c "grep '^NodeName=' '$T/$n.w' | sed 's/^NodeName=\([^ ]*\) Weight=\([0-9]*\)$/\2 \1/' | sort -n | awk '{ print \$2; if (\$1 != NR) exit 1 }' | cmp -s - '$T/$n'"
	fo "$n.sn" --ib "$ib" --format slurm-nodes
	expect "$n: --format slurm-nodes is the list as one Slurm host list, in order" \
		sh -c "python3 -c \"import sys; sys.path.insert(0, '$TOP/tests/integration'); from report_topo_check import expand; print('\\\\n'.join(expand(open('$T/$n.sn').read().strip())))\" | cmp -s - '$T/$n'"
	fo "$n.tc" --ib "$ib" --format topology.conf
	"$R" slurm-topology --ib "$ib" --out "$T/$n.tree" 2>/dev/null
	expect "$n: --format topology.conf is slurm-topology's tree" cmp -s "$T/$n.tc" "$T/$n.tree"
done

# ---- only Slurm's nodes -----------------------------------------------------------------------------------
expect "--slurm-conf: the order" fo kept --ib "$PLA" --slurm-conf "$DATA/slurm/slurm.conf.nodes"
grep -v '^\(oss\|mds\|reine\)' "$T/pla" >"$T/want.kept"
expect "--slurm-conf: the file servers (oss, mds01, reine) left out, the rest in the same order" cmp -s "$T/kept" "$T/want.kept"
expect "--slurm-conf: a note names the count left out" grep -q 'note: 6 fabric hosts are no Slurm node (--slurm-conf)' "$T/kept.err"
expect "--nodes: the order" fo kn --ib "$NDR" --nodes "$(head -n 30 "$T/ndr" | tr '\n' ',' | sed 's/,$//')"
expect "--nodes: exactly those hosts, checked against the fabric" $FC fattree-order "$T/kn" "$NDR" --keep "$T/kn" --lowest-label
expect "--nodes: weights list the others in a comment" \
	sh -c "'$R' order --method fattree --ib '$NDR' --nodes '$(head -n 1 "$T/ndr")' --format weights 2>/dev/null | grep -q '^# [0-9]* hosts of the fabric are not Slurm nodes'"

# ---- through rankmapd: its model's fabric, the same order ----------------------------------------------
printf 'cluster = %s\n' "$DATA/example/cluster.conf" >"$T/d.conf"
if start_rankmapd "$T/d.conf" "$T/sock" "$T/d.log" --state-dir "$T/state"; then
	for fmt in list slurm-nodes topology.conf; do
		"$R" order --method fattree --cluster "$DATA/example/cluster.conf" --format $fmt --output "$T/off.$fmt" 2>/dev/null
		"$R" order --method fattree --server "$T/sock" --format $fmt --output "$T/rem.$fmt" 2>"$T/rem.err"
		expect "rankmapd: --format $fmt as offline" cmp -s "$T/off.$fmt" "$T/rem.$fmt"
	done
	"$R" order --method fattree --cluster "$DATA/example/cluster.conf" --format weights --slurm-conf "$DATA/slurm/slurm.conf.nodes" --output "$T/off.w" 2>/dev/null
	RANKMAP_SERVER=$T/sock "$R" order --method fattree --format weights --slurm-conf "$DATA/slurm/slurm.conf.nodes" --output "$T/rem.w" 2>"$T/rem.w.err"
	expect "rankmapd (RANKMAP_SERVER, no fabric option): --slurm-conf weights as offline (but for the header line)" \
		sh -c "diff '$T/off.w' '$T/rem.w' | grep -c '^[<>]' | grep -qx 2"
	expect "rankmapd: the note on the hosts left out" grep -q 'note: 6 fabric hosts are no Slurm node' "$T/rem.w.err"
else
	notok "rankmapd starts on the example cluster: $(tail -n 3 "$T/d.log")"
fi
# a daemon's answer of lines shorter than rankmapd's own "NodeName=x Weight=n" (tests/faults/fake_rankmapd.py
# shortnames: 20,000 lines "NodeName=a"): every name listed, none lost (the client sized its list by 16
# bytes a line and wrote past it)
. "$TOP/tests/faults/lib.sh"
if fake_start shortnames "$T/fake.sock"; then
	"$R" order --method fattree --server "$T/fake.sock" --format list --output "$T/short" 2>"$T/short.err"; rc=$?
	expect "a daemon's short NodeName lines: exit 0, its 20000 names as sent ($(wc -l <"$T/short") lines)" \
		sh -c "[ $rc = 0 ] && [ \$(grep -cx a '$T/short') = 20000 ] && [ \$(wc -l <'$T/short') = 20000 ]"
	fake_stop
else
	notok "the fake daemon starts"
fi

# ---- errors -------------------------------------------------------------------------------------------------
printf 'Switch 2 "S-000000000000000a"\n[1] "H-000000000000000b"[1] # "x" lid 1\n[2] "S-bogus\n' >"$T/bad.topo"
"$R" order --method fattree --ib "$T/bad.topo" >/dev/null 2>"$T/e1"; rc=$?
expect "a malformed fabric file: exit 1 naming the file and line ($(head -c 120 "$T/e1"))" \
	sh -c "[ $rc = 1 ] && grep -q 'bad.topo:[0-9]' '$T/e1'"
printf 'switch s1\nhost h1 switch s2\n' >"$T/bad.fabric"
"$R" order --method fattree --ib "$T/bad.fabric" >/dev/null 2>"$T/e2"; rc=$?
expect "a site fabric file naming an unknown switch: exit 1, file:line 2" sh -c "[ $rc = 1 ] && grep -q 'bad.fabric:2:' '$T/e2'"
printf 'NodeName=n[1-2 CPUs=4\n' >"$T/bad.conf"
"$R" order --method fattree --ib "$S3" --slurm-conf "$T/bad.conf" >/dev/null 2>"$T/e3"; rc=$?
expect "a malformed slurm.conf: exit 1 naming the file and line" sh -c "[ $rc = 1 ] && grep -q 'bad.conf:1' '$T/e3'"
"$R" order --method fattree --ib "$S3" --nodes 'zz[1-3]' >/dev/null 2>"$T/e4"; rc=$?
expect "a node list that keeps no host: exit 1" sh -c "[ $rc = 1 ] && grep -q 'nothing to write' '$T/e4'"
RANKMAP_SERVER= RANKMAP_SOCKET=$T/none "$R" order --method fattree >/dev/null 2>"$T/e5"; rc=$?
expect "no fabric option and no rankmapd: exit 1 naming the socket" sh -c "[ $rc = 1 ] && grep -q '$T/none' '$T/e5'"
for args in "--method fattree --ib $S3 --dims 2x2x2" "--method fattree --ib $S3 --format svg" \
	"--method fattree --ib $S3 --nodes a --slurm-conf b" "--dims 2x2x2 --ib $S3" "--method fattree --ib $S3 --server /x" \
	"--method fattree --ib $S3 --host-pattern n{id}"; do
	"$R" order $args >/dev/null 2>&1; rc=$?
	expect "usage error exits 2: order $args" test "$rc" = 2
done
finish
