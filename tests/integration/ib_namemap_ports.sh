#!/bin/sh
# tests/integration/ib_namemap_ports.sh: a node-name map keyed by node GUID on a -p ports report (which
# shows port GUIDs only): unmatched entries are a report anomaly, and a host's hwloc XML that records
# the HCA's NodeGUID and port GID pairs the two so that the map names the port.
. "$(dirname "$0")/../lib.sh"

CTL=$BIN/rankmapctl
T=$(mktmp)
trap 'rm -rf "$T"' EXIT INT TERM
PORTS=$DATA/ib/subnet-b.ports
# node GUIDs of n1's and n3's HCAs (not in the ports report, which lists port GUIDs 0xb0001, 0xb0003)
printf '0x00000000000a0001 "renamed1"\n0x00000000000a0003 "renamed3"\n' >"$T/map"

"$CTL" report --json --ib "$PORTS" --node-name-map "$T/map" >"$T/r1.json"
expect "unmatched node-GUID entries are an anomaly on -p input" \
	grep -q '"text": "2 node-name map entries matched no node or port GUID' "$T/r1.json"
expect "which tells how to fix it" grep -q 'key the map by port GUID, or give the hosts' "$T/r1.json"
expect_fail "and names nothing" grep -q renamed "$T/r1.json"

# n1's hwloc XML records NodeGUID 0xa0001 and port 1 GID ...:000b:0001 (its -p port GUID)
mkdir "$T/hw"
sed -e 's/0002:c903:0002:a0ce/0000:0000:000a:0001/' \
	-e 's/fe80:0000:0000:0000:0002:c903:0002:a0cf/fe80:0000:0000:0000:0000:0000:000b:0001/' \
	-e 's/"bonobo001"/"n1"/' "$DATA/daemon/hwloc/bonobo001.xml" >"$T/hw/n1.xml"
"$CTL" report --json --hwloc "$T/hw" --ib "$PORTS" --node-name-map "$T/map" >"$T/r2.json"
expect "the hwloc XML pairs port and node GUID: the map names the port" grep -q 'host renamed1 is in the fabric' "$T/r2.json"
expect "the other entry is still counted" \
	grep -q '"text": "1 node-name map entries matched' "$T/r2.json"

# a topology-file fabric (node GUIDs) gets no such anomaly
"$CTL" report --json --ib "$DATA/ib/subnet-a.topo" --node-name-map "$T/map" >"$T/r3.json"
expect_fail "no -p subnet: no unmatched_name_map anomaly" grep -q unmatched_name_map "$T/r3.json"
finish
