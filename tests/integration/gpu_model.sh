#!/bin/sh
# tests/integration/gpu_model.sh: GPU nodes end to end (issue #25), over the recorded GPU nodes of
# tests/data/gpu. For every file, the GPUs and NICs rankmapctl report --json counts are those a python
# reading of the XML counts (a GPU: a PCI device with OS devices of a GPU backend, cuda/nvml/rsmi/ze/
# opencl, one per partition; a NIC: a PCI device with network or OpenFabrics OS devices; hwloc 3.0
# files read as hwloc 3.0 writes them), and the report is valid against the schema. The issue's case:
# a 4x8 Cartesian job with one rank per GPU on 4 MI250X nodes (map --cluster --slots gpu) puts 8 ranks
# on each node, each on its own GPU, the cpus named for each rank being that GPU's nearest cores in
# the report; with the cluster file's `slots = gpu` the same without the option; explain takes --slots.
# Then through a real rankmapd: the map request's slot_kind "gpu" (rankmapctl map --server --slots gpu)
# answers each slot's GPU, [host, gpu] slots by index, OS device name and bus id, and refuses a GPU
# the host lacks.
. "$(dirname "$0")/../lib.sh"

R=$BIN/rankmapctl
G=$DATA/gpu
T=$(mktmp) || exit 1
rankmapd_cleanup "$T"
CHK="python3 $TOP/tests/integration/json_schema_check.py $TOP/daemon/rankmap.schema.json"

# ---- counts from the XML, independently of rankmap ----------------------------------------------------
count_xml() { # FILE -> "GPUS NICS"
	python3 - "$1" <<'PY'
import re, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
v3 = root.get('version', '').startswith('3')
gpu_re = re.compile(r'^(cuda|nvml|rsmi|ze|opencl)[0-9]')
def osdev_net(o):
    t = int(o.get('osdev_type', '-1'))
    return (t & (16 | 32)) != 0 if v3 else t in (2, 3)
gpus = nics = 0
def walk(pci):
    global gpus, nics
    per_backend, net = {}, False
    for o in pci.iter('object'):
        if o.get('type') != 'OSDev':
            continue
        # only OS devices whose nearest PCI ancestor is this device
        name = o.get('name', '')
        m = gpu_re.match(name)
        if m:
            per_backend[m.group(1)] = per_backend.get(m.group(1), 0) + 1
        if osdev_net(o):
            net = True
    return per_backend, net
def visit(node):
    global gpus, nics
    for ch in node.findall('object'):
        if ch.get('type') == 'PCIDev':
            # this device's own OS devices (children), not those of devices below it
            own = [o for o in ch.findall('object') if o.get('type') == 'OSDev']
            per, net = {}, False
            for o in own:
                m = gpu_re.match(o.get('name', ''))
                if m:
                    per[m.group(1)] = per.get(m.group(1), 0) + 1
                net = net or osdev_net(o)
            gpus += max(per.values()) if per else 0
            nics += 1 if net else 0
        visit(ch)
visit(root)
print(gpus, nics)
PY
}

for f in "$G"/*/*.xml; do
	name=${f#"$G"/}
	want=$(count_xml "$f")
	"$R" report --hwloc "$f" --json >"$T/r.json" 2>"$T/r.err" || { notok "$name: report failed: $(cat "$T/r.err")"; continue; }
	got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["gpus"], r["nics"])' "$T/r.json")
	[ "$got" = "$want" ] && ok "$name: $got GPUs and NICs, as the XML holds" || notok "$name: report $got, XML $want"
	$CHK file report "$T/r.json" >"$T/chk.out" 2>&1
	grep -q ' 0 problems' "$T/chk.out" || notok "$name: report --json fails the schema: $(cat "$T/chk.out")"
done
ok "every GPU node's report --json is valid against the schema (or named above)"
# the counts can fail: a reading that counted every OS device of a GPU would find more on ipa20 (3 each)
n3=$(python3 -c 'import re,sys; print(len(set(re.findall(r"name=\"((?:cuda|nvml|opencl0d)[0-9]+)\"", open(sys.argv[1]).read()))))' "$G/flux-core/ipa20.xml")
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gpus"])' "$T/r.json")
"$R" report --hwloc "$G/flux-core/ipa20.xml" --json | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["gpus"] * 3 == int(sys.argv[1]) else 1)' "$n3" &&
	ok "ipa20: CUDA, NVML and OpenCL devices of one GPU count once ($n3 OS devices)" || notok "ipa20 counted by OS device"
# Sierra (hwloc 1.x): the GPUs' HBM is not host memory
"$R" report --hwloc "$G/flux-core/sierra.xml" --json >"$T/s.json"
expect "Sierra: 2 host NUMA nodes and 4 of GPU memory" python3 -c '
import json,sys; t=json.load(open(sys.argv[1]))["node_types"][0]
sys.exit(0 if t["numa_nodes"] == 2 and t["gpu_memory_numa_nodes"] == 4 and t["memory_bytes"] < 300 * 2**30 else 1)' "$T/s.json"
expect "ipa20: the GPU without a NIC on its NUMA node is an anomaly" python3 -c '
import json,sys; r=json.load(open(sys.argv[1]))
sys.exit(0 if any(a["kind"] == "gpu_no_local_nic" for a in r["anomalies"]) else 1)' "$T/r.json"

# ---- the issue's case: 4x8, one rank per GPU, 4 MI250X nodes -------------------------------------------
mkdir "$T/hw"
for i in 1 2 3 4; do cp "$G/mpibind/eas-tioga.xml" "$T/hw/tioga$i.xml"; done
printf 'hwloc = %s\ngpu_links = %s\n' "$T/hw" "$TOP/conf/gpu-links-mi250x.conf" >"$T/cluster.conf"
"$R" report --cluster "$T/cluster.conf" --json >"$T/rep.json"
"$R" report --cluster "$T/cluster.conf" --svg "$T/rep.svg" >/dev/null
expect "report --svg draws each GPU of the MI250X nodes, its NIC and the links" python3 -c '
import sys, xml.dom.minidom as M
d = M.parse(sys.argv[1]); t = [e.firstChild.data for e in d.getElementsByTagName("title") if e.firstChild]
gpus = [x for x in t if x.startswith("GPU ") and x.split()[1].isdigit() and " - " not in x]; links = [x for x in t if " - GPU " in x]
ok = len(gpus) == 8 and all("NIC hsi" in x for x in gpus) and len(links) == 12
ok or print(t)
sys.exit(0 if ok else 1)' "$T/rep.svg"
"$R" map --cart 4x8 --cluster "$T/cluster.conf" --slots gpu --json >"$T/map.json" 2>"$T/map.err" &&
	ok "map --slots gpu on 4 MI250X nodes" || notok "map --slots gpu: $(cat "$T/map.err")"
check_gpu_map() { # MAP_JSON REPORT_JSON: 8 ranks per node, each on its own GPU, with that GPU's cores
	python3 - "$1" "$2" <<'PY'
import json, sys, collections
m, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
gpus = {g["name"]: g for g in r["node_types"][0]["gpu_list"]}
pl = m["placement"]
per = collections.Counter(p["host"] for p in pl)
assert len(pl) == 32 and sorted(per.values()) == [8, 8, 8, 8], per
assert len({(p["host"], p["gpu"]) for p in pl}) == 32, "a GPU twice"
for p in pl:
    assert p["cpus"] == gpus[p["gpu"]]["cpus"] and p["busid"] == gpus[p["gpu"]]["busid"], p
    assert p["nic"] == gpus[p["gpu"]]["nic"], p
PY
}
expect "... 8 ranks per node, each on its own GPU and that GPU's nearest cores and NIC" check_gpu_map "$T/map.json" "$T/rep.json"
$CHK file map "$T/map.json" | grep -q ' 0 problems' && ok "... map --json is valid" || notok "map --json schema"
"$R" map --cart 4x8 --cluster "$T/cluster.conf" --slots gpu >"$T/map.txt"
expect "... the text names each rank's GPU" sh -c "[ \$(grep -c '^rank [0-9]*: host tioga[1-4] gpu rsmi[0-7] ' '$T/map.txt') = 32 ]"
"$R" map --cart 4x8 --cluster "$T/cluster.conf" --json >"$T/core.json"
expect "... without --slots: core slots, as before (256 slots)" python3 -c '
import json,sys; m=json.load(open(sys.argv[1])); sys.exit(0 if m["slots"] == 256 and "placement" not in m else 1)' "$T/core.json"
printf 'slots = gpu\n' >>"$T/cluster.conf"
"$R" map --cart 4x8 --cluster "$T/cluster.conf" --json >"$T/map2.json"
expect "... the cluster file's 'slots = gpu' makes GPU slots the default" check_gpu_map "$T/map2.json" "$T/rep.json"
"$R" explain --cart 4x8 --cluster "$T/cluster.conf" --hosts 'tioga[1-4]' --slots gpu --engine auto --json >"$T/ex.json" &&
	expect "explain --slots gpu: 32 slots, GPU group levels" python3 -c '
import json,sys; e=json.load(open(sys.argv[1])); sys.exit(0 if e["slots"] == 32 and any(l["level"].startswith("gpu") for l in e["levels"]) else 1)' "$T/ex.json" ||
	notok "explain --slots gpu failed"
expect_fail "map --slots tpu is a usage error" "$R" map --cart 4x8 --cluster "$T/cluster.conf" --slots tpu
expect_fail "--slots gpu with --topology is refused" "$R" map --cart 2x2 --topology 'tleaf 1 4 1' --slots gpu
printf 'slots = tpu\n' >"$T/badslots.conf"
"$R" map --cart 2x2 --cluster "$T/badslots.conf" 2>"$T/bs.err"
expect "a cluster file's bad 'slots' names file and line" grep -q 'badslots.conf:1.*slots: expected core or gpu' "$T/bs.err"

# ---- through rankmapd ----------------------------------------------------------------------------------
SOCK=$T/d.sock
printf 'cluster = %s\nsocket_mode = 0600\n' "$T/cluster.conf" >"$T/d.conf"
if ! start_rankmapd "$T/d.conf" "$SOCK" "$T/d.log" --state-dir "$T/state"; then
	notok "rankmapd did not start: $(tail -5 "$T/d.log")"
	finish
	exit 1
fi
"$R" map --cart 4x8 --socket "$SOCK" --hosts 'tioga[1-4]' --slots gpu --json >"$T/dmap.json" 2>"$T/dmap.err" &&
	ok "rankmapd maps with slot_kind gpu" || notok "rankmapd map --slots gpu: $(cat "$T/dmap.err")"
expect "... 8 ranks per node, each on its own GPU, named" python3 -c '
import json,sys,collections; m=json.load(open(sys.argv[1])); pl=m["placement"]
c=collections.Counter(p["host"] for p in pl)
sys.exit(0 if len(pl) == 32 and sorted(c.values()) == [8]*4 and len({(p["host"],p["gpu"]) for p in pl}) == 32 and all(p["gpu"].startswith("rsmi") for p in pl) else 1)' "$T/dmap.json"
raw_map() { # SLOTS_JSON -> the answer (JSON) on stdout
	python3 "$TOP/tests/raw_client.py" unix "$SOCK" json \
		'{"version": 1, "type": "map", "id": 7, "cart": "2x2", "slot_kind": "gpu", "index": "request", "slots": '"$1"'}'
}
raw_map '[["tioga1", 0], ["tioga1", "rsmi1"], ["tioga2", "0000:c9:00.0"], ["tioga2", 3]]' >"$T/raw.json"
expect "[host, gpu] slots by index, OS device name and bus id" python3 -c '
import json,sys; a=json.load(open(sys.argv[1])); sys.exit(0 if a.get("gpus") == [0, 1, 2, 3] and a.get("gpu_names") == ["rsmi0", "rsmi1", "rsmi2", "rsmi3"] and sorted(a["permutation"]) == [0, 1, 2, 3] else 1)' "$T/raw.json"
expect "... the answer is valid against the schema (response_map)" python3 -c '
import json, sys, jsonschema
s = json.load(open(sys.argv[1]))
v = jsonschema.Draft202012Validator({"$ref": "#/$defs/response_map", "$defs": s["$defs"]})
errs = list(v.iter_errors(json.load(open(sys.argv[2]))))
print(*errs, sep="\n")
sys.exit(1 if errs else 0)' "$TOP/daemon/rankmap.schema.json" "$T/raw.json"
raw_map '[["tioga1", 8]]' >"$T/raw2.json"
expect "a GPU the host lacks is refused" grep -q 'no such GPU' "$T/raw2.json"
# a [host, pu] request with pu_index (the MPI library's core slots) on this model whose cluster file says
# "slots = gpu": PU slots, as the request says (it was read as [host, gpu] and refused)
python3 "$TOP/tests/raw_client.py" unix "$SOCK" json '{"version": 1, "type": "map", "id": 8, "cart": "2x2",
	"index": "request", "pu_index": "os", "slots": [["tioga1", null], ["tioga1", null], ["tioga2", 9], ["tioga2", 17]]}' \
	>"$T/raw3.json"
expect "[host, pu] slots with pu_index on a 'slots = gpu' model: PU slots" python3 -c '
import json,sys; a=json.load(open(sys.argv[1])); sys.exit(0 if a.get("ok") and "slot_kind" not in a and a["pu_os"][2:] == [9, 17] else 1)' "$T/raw3.json"
finish
