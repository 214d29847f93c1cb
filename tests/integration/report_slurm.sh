#!/bin/sh
# tests/integration/report_slurm.sh: `rankmapctl slurm-topology`.
#
# Small fabrics against topology.conf structures written by hand (tests/data/reports/*.expected);
# the real NDR fat tree against its ibnetdiscover file parsed independently (report_topo_check.py);
# PlaFRIM's ports report against the invariants (names valid, every host under one leaf, no cycle).
# Then Slurm itself reads each file: a throw-away slurmctld (auth/none, every host at 127.0.0.1, all
# under a temporary directory, stopped by PID) loads topology/tree, and `scontrol show topology` must
# list every switch at the level the file implies. Skipped (a skip CI fails) when slurmctld is not installed.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/slurm/ctld_topo.sh"

R=$BIN/rankmapctl
CHK="python3 $TOP/tests/integration/report_topo_check.py"
T=$(mktmp) || exit 1
cleanup() {
	ctld_kill
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- structures derived by hand ------------------------------------------------------------------
gen() { out=$1; shift; "$R" slurm-topology "$@" --out "$T/$out" 2>"$T/$out.err"; }

gen s3.conf --ib "$DATA/ib/small-3level.ports" &&
	expect "small-3level: structure as derived by hand" $CHK "$T/s3.conf" --expected "$DATA/reports/small-3level.expected" --invariants --hosts 8
gen s2map.conf --ib "$DATA/ib/small-2level.topo" --node-name-map "$DATA/ib/small-2level.map" &&
	expect "small-2level + node-name map: hosts and switch renamed, dual-HCA host once" \
		$CHK "$T/s2map.conf" --expected "$DATA/reports/small-2level-map.expected" --invariants --hosts 7
gen s2.conf --ib "$DATA/ib/small-2level.topo" &&
	expect "small-2level without map: generic HCA left out, checked against the raw file" \
		$CHK "$T/s2.conf" --expected "$DATA/reports/small-2level-guid.expected" --invariants --hosts 6 \
		--topofile "$DATA/ib/small-2level.topo"
n=$(grep -c "named only by their GUID" "$T/s2.conf.err")
expect "a GUID-named HCA: one warning on stderr (got $n)" test "$n" = 1
expect "... and a comment naming it" grep -q "^#   0x0002c90300000020 on ibsw2$" "$T/s2.conf"
expect "... and no GUID in Nodes=" sh -c "! grep '^SwitchName=.*Nodes=.*0x' '$T/s2.conf'"
gen cache.conf --ib-cache "$DATA/ib/ibsim-fattree.cache" &&
	expect "libibnetdisc cache (ibsim fat tree): structure as derived by hand from the net file" \
		$CHK "$T/cache.conf" --expected "$DATA/reports/ibsim-fattree.expected" --invariants --hosts 8
gen names.conf --ib "$DATA/reports/names.topo" --node-name-map "$DATA/reports/names.map" &&
	expect "map names with blanks, quotes, '#', ';', '/' sanitised; duplicates made unique; unmapped ibsw<N>" \
		$CHK "$T/names.conf" --expected "$DATA/reports/names.expected" --invariants --hosts 4 \
		--topofile "$DATA/reports/names.topo"
gen namesnomap.conf --ib "$DATA/reports/names.topo" &&
	expect "without a map: odd descriptions unused, every switch ibsw<N> in GUID order" \
		$CHK "$T/namesnomap.conf" --expected "$DATA/reports/names-nomap.expected" --invariants --hosts 4 \
		--topofile "$DATA/reports/names.topo"
expect "the description and GUID are in the comment above the switch" \
	grep -B1 '^SwitchName=core_switch_1_rack_7 ' "$T/names.conf" | grep -q "^# \"core switch #1; rack/7\" guid 0x0000000000009001,"

# names stay when a second switch of a model is added (names by GUID order; the new one's is higher)
gen modela.conf --ib "$DATA/reports/model-a.topo" && gen modelb.conf --ib "$DATA/reports/model-b.topo"
expect "model-a: checked against its file" $CHK "$T/modela.conf" --invariants --hosts 2 --topofile "$DATA/reports/model-a.topo"
expect "model-b: checked against its file" $CHK "$T/modelb.conf" --invariants --hosts 4 --topofile "$DATA/reports/model-b.topo"
# guid_names CONF: "GUID NAME" per switch, the GUID from the comment line above its SwitchName line
guid_names() {
	awk '/^# .* guid 0x/ { for (i = 1; i < NF; i++) if ($i == "guid") g = $(i + 1); sub(",", "", g); next }
	     /^SwitchName=/ { split($1, a, "="); if (g != "") print g, a[2]; g = "" }' "$1" | sort
}
stable() { # every switch of model-a keeps its name (found by its GUID) in model-b
	guid_names "$T/modela.conf" >"$T/names.a" && guid_names "$T/modelb.conf" >"$T/names.b" &&
		[ "$(wc -l <"$T/names.a")" -eq 2 ] && [ "$(wc -l <"$T/names.b")" -eq 3 ] &&
		[ -z "$(comm -23 "$T/names.a" "$T/names.b")" ]
}
expect "adding a second 'Voltaire 4036' leaf renames no switch" stable
expect "names are short (no description in SwitchName=)" sh -c "! grep -i '^SwitchName=.*\(voltaire\|MF0\)' '$T/modela.conf' '$T/modelb.conf'"
expect "leaves in order of their names" sh -c "grep '^SwitchName=.*Nodes=' '$T/s3.conf' | cut -d' ' -f1 | sort -c -V"
gen sub.conf --ib "$DATA/ib/subnet-a.topo" --ib "$DATA/ib/subnet-b.ports" --top top &&
	expect "two subnets joined under --top" $CHK "$T/sub.conf" --expected "$DATA/reports/subnets-top.expected" --invariants --hosts 4
gen subnotop.conf --ib "$DATA/ib/subnet-a.topo" --ib "$DATA/ib/subnet-b.ports"
expect "two subnets without --top: warning about 3 separate trees" grep -q "3 separate switch trees" "$T/subnotop.conf.err"
gen s3top.conf --ib "$DATA/ib/small-3level.ports" --top top
expect "one tree: --top adds nothing, no warning" sh -c "! grep -q '^SwitchName=top' '$T/s3top.conf' && ! grep -q warning '$T/s3top.conf.err'"
expect "without --top no joining switch" sh -c "! grep -q '^SwitchName=top' '$T/subnotop.conf'"

# ---- real fabrics --------------------------------------------------------------------------------
gen ndr.conf --ib "$DATA/ib/ndr-fattree-582ca.ibnetdiscover" &&
	expect "NDR fat tree: every host under one leaf it is cabled to, spines list exactly their kept leaves" \
		$CHK "$T/ndr.conf" --invariants --topofile "$DATA/ib/ndr-fattree-582ca.ibnetdiscover"
gen ndrall.conf --ib "$DATA/ib/ndr-fattree-582ca.ibnetdiscover" --all-leaves &&
	expect "NDR --all-leaves: each of the 31 leaves lists exactly the hosts cabled to it" \
		$CHK "$T/ndrall.conf" --invariants --all-leaves --topofile "$DATA/ib/ndr-fattree-582ca.ibnetdiscover"
n=$(grep -c '^SwitchName=.*Nodes=' "$T/ndrall.conf")
expect "NDR --all-leaves: 31 leaves (got $n)" test "$n" = 31
gen s2all.conf --ib "$DATA/ib/small-2level.topo" --node-name-map "$DATA/ib/small-2level.map" --all-leaves &&
	expect "small-2level --all-leaves: dual under leaf-1 and leaf-2, as derived by hand" \
		$CHK "$T/s2all.conf" --expected "$DATA/reports/small-2level-all.expected" --invariants --all-leaves --hosts 7
n=$(grep -c '^SwitchName=.*Switches=' "$T/ndr.conf")
expect "NDR fat tree: 9 spines above the leaves (got $n)" test "$n" = 9
gen plafrim.conf --ib "$DATA/plafrim/ib/ib-subnet0.txt" &&
	expect "PlaFRIM: invariants" $CHK "$T/plafrim.conf" --invariants
n=$($CHK "$T/plafrim.conf" --list-hosts | wc -l)
expect "PlaFRIM: every fabric host listed ($n)" test "$n" -gt 100

python3 "$TOP/tests/integration/report_gen_fattree.py" 250 40 20 >"$T/big.topo"
gen big.conf --ib "$T/big.topo" &&
	expect "generated 10,000-host fat tree: 250 leaves of 40 hosts, 20 spines listing every leaf" \
		$CHK "$T/big.conf" --invariants --hosts 10000 --topofile "$T/big.topo"
expect "generated fat tree: one tree, no warning" test ! -s "$T/big.conf.err"

# ---- errors ---------------------------------------------------------------------------------------
expect_fail "no fabric option: rankmapd is asked at its default socket (none here): an error" env -u RANKMAP_SERVER -u RANKMAP_SOCKET "$R" slurm-topology
expect_fail "missing file is an error" "$R" slurm-topology --ib "$T/nope"
expect "missing file: message names the file" sh -c "'$R' slurm-topology --ib '$T/nope' 2>&1 | grep -q nope"
expect_fail "--top with a blank is refused" "$R" slurm-topology --ib "$DATA/ib/small-3level.ports" --top "a b"
printf 'garbage line\n' >"$T/garbage.txt"
expect_fail "garbage input is an error" "$R" slurm-topology --ib "$T/garbage.txt"
"$R" slurm-topology --ib "$T/garbage.txt" --out "$T/err.conf" 2>/dev/null
expect "--out is not created on error" test ! -e "$T/err.conf"

# ---- Slurm reads the files -------------------------------------------------------------------------
# slurm_reads NAME CONF: slurmctld loads CONF as topology.conf; scontrol shows every switch at its level.
slurm_reads() {
	sd=$T/slurm-$1
	mkdir -p "$sd"
	$CHK "$2" --list-hosts | grep -v '^0x' >"$sd/nodes"
	ctld_topology "$sd" topology/tree "$2" "$sd/nodes" || { cat "$sd/out" >&2; return 1; }
	if grep -qi "error.*topology\|fatal\|invalid hostnames" "$sd/out" "$sd/log/ctld.log"; then
		cat "$sd/out" "$sd/log/ctld.log" >&2; return 1
	fi
	$CHK "$2" --slurm-levels "$sd/topo.out" || { head -5 "$sd/topo.out" >&2; return 1; }
}

if command -v slurmctld >/dev/null && command -v scontrol >/dev/null; then
	expect "Slurm (slurmctld + scontrol show topology) reads the 3-level file, levels as derived" slurm_reads s3 "$T/s3.conf"
	expect "Slurm reads the sanitised names file" slurm_reads names "$T/names.conf"
	expect "Slurm reads the joined subnets file" slurm_reads sub "$T/sub.conf"
	expect "Slurm reads the NDR fat tree file (GUID-only HCAs left out), no 'Invalid hostnames'" slurm_reads ndr "$T/ndr.conf"
	expect "Slurm reads the 2-level file with its GUID-only HCA left out" slurm_reads s2 "$T/s2.conf"
	expect "Slurm reads the model-b file" slurm_reads modelb "$T/modelb.conf"
	# the check can fail: a GUID put back into Nodes= (as the writer once did) makes Slurm warn
	sed 's/^\(SwitchName=ibsw2 Nodes=.*\)$/\1,0x0002c90300000020/' "$T/s2.conf" >"$T/s2guid.conf"
	quiet() { "$@" 2>/dev/null; }
	expect_fail "the Slurm check refuses a file with a GUID in Nodes= (Slurm: Invalid hostnames)" quiet slurm_reads s2guid "$T/s2guid.conf"
	expect "Slurm reads the PlaFRIM file" slurm_reads plafrim "$T/plafrim.conf"
	expect "Slurm reads the NDR --all-leaves file (hosts under several leaves)" slurm_reads ndrall "$T/ndrall.conf"
else
	skip "slurmctld/scontrol not installed (make deps installs them): Slurm parsing not checked"
fi
finish
