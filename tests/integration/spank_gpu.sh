#!/bin/sh
# tests/integration/spank_gpu.sh: the SPANK plugin on a local Slurm cluster of GPU nodes: four slurmd -N
# n1..n4 that all see the recorded H100 node flux-core/ipa20.xml (4 H100, 4 ConnectX functions) through
# hwloc's HWLOC_XMLFILE, with a gres.conf written by `rankmapctl slurm-gres` over device nodes made in a
# scratch root, so that Slurm gives each task a GPU (--gpus-per-task=1) and sets its device variables.
# Checks:
#   - registration keeps the I/O devices: the XML each slurmd registered with rankmapd holds the GPUs'
#     and NICs' OS devices and the HCAs' NodeGUIDs, and the model built from it has the node's 4 GPUs and
#     4 NICs (rankmapctl slurm-gres over the registered file);
#   - --rankmap-bind=gpu: each of 4 tasks has its own GPU (Slurm's CUDA_VISIBLE_DEVICES /
#     SLURM_STEP_GPUS), RANKMAP_GPU names that GPU's PCI bus id (the XML's GPUs in PCI order, read here),
#     RANKMAP_NIC a ConnectX on the GPU's package (hwloc-calc), UCX_NET_DEVICES=<nic>:1 and
#     OMPI_MCA_btl_openib_if_include the same; the GPU variables Slurm set are unchanged; each task is
#     bound to the CPUs its plan names (the allocated cores near its GPU), or, where those CPUs do not exist
#     on this machine (the XML has 224), the task runs unbound with one warning naming sched_setaffinity;
#   - a user's own UCX_NET_DEVICES is kept; --rankmap-bind=bogus is refused at submission; a task
#     without a GPU gets one warning and runs.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/slurm/common.sh"

H=$TOP/tests/slurm
T=$(mktmp) || exit 1
chmod 755 "$T"
C=$T/cluster

rankmapd_on_exit() { sh "$H/cluster.sh" stop "$C" 2>/dev/null; }
rankmapd_cleanup "$T"

for c in munged slurmctld slurmd srun python3 hwloc-calc mknod; do
	command -v "$c" >/dev/null || { notok "required command $c is missing (make deps)"; finish; exit 1; }
done
for f in spank_rankmap.so rankmapd rankmapctl; do
	[ -f "$BIN/$f" ] || { notok "$BIN/$f is not built"; finish; exit 1; }
done
if ldd "$BIN/spank_rankmap.so" 2>/dev/null | grep -q libasan; then
	skip "SANITIZE=1: the ASan-built plugin would need libasan preloaded into slurmd and every task (test_spank_gpu runs its GPU and NIC choices sanitized)"
	finish; exit 0
fi

XML=$DATA/gpu/flux-core/ipa20.xml
mkdir -p "$T/hw" "$T/root" "$C"
for n in n1 n2 n3 n4; do cp "$XML" "$T/hw/$n.xml"; done
# the XML's GPUs in PCI bus id order: "index busid osdev"
python3 - "$XML" >"$T/gpus" <<'EOP'
import sys
import xml.etree.ElementTree as ET
out = []
for pci in ET.parse(sys.argv[1]).iter("object"):
    if pci.get("type") == "PCIDev":
        names = [o.get("name") for o in pci.findall("object") if o.get("type") == "OSDev" and o.get("name", "").startswith("cuda")]
        if names:
            out.append((pci.get("pci_busid"), names[0]))
out.sort()
for k, (b, n) in enumerate(out):
    print(k, b, n)
EOP
[ "$(wc -l <"$T/gpus")" = 4 ] || { notok "the XML's GPUs: $(cat "$T/gpus")"; finish; exit 1; }

# gres.conf from the model, its device nodes in the scratch root
if ! "$BIN/rankmapctl" slurm-gres --hwloc "$T/hw" --dev-root "$T/root" >"$T/gres.out" 2>"$T/gres.err"; then
	notok "rankmapctl slurm-gres: $(cat "$T/gres.err")"; finish; exit 1
fi
grep '^NodeName=' "$T/gres.out" >"$C/gres.conf"
for f in $(sed -n 's/.* File=\([^ ]*\).*/\1/p' "$C/gres.conf" | sort -u); do
	mkdir -p "$(dirname "$f")" && mknod "$f" c 195 "${f##*nvidia}" || { notok "mknod $f"; finish; exit 1; }
done
type=$(sed -n 's/^# .*Gres=gpu:\([^:]*\):4$/\1/p' "$T/gres.out" | head -1)
p=$(hwloc-calc --input "$XML" --number-of package all); co=$(hwloc-calc --input "$XML" --number-of core all)
pu=$(hwloc-calc --input "$XML" --number-of pu all)
export RM_SLURM_GRES="gpu:$type:4" RM_SLURM_NODE_HW="CPUs=$pu SocketsPerBoard=$p CoresPerSocket=$((co / p)) ThreadsPerCore=$((pu / co))"

mkdir -p "$T/rmstate"
printf 'state_dir = %s\nallow_register = yes\nlog_level = info\n' "$T/rmstate" >"$T/rankmapd.conf"
expect "rankmapd starts on a temporary socket" start_rankmapd "$T/rankmapd.conf" "$T/rankmapd.sock" "$T/rankmapd.log"
# every slurmd (and the plugin's registration, and the steps' hwloc) sees the recorded H100 node
export HWLOC_XMLFILE="$T/hw/n1.xml"
if ! sh "$H/cluster.sh" start "$C" "$BIN/spank_rankmap.so" socket="$T/rankmapd.sock" libdir="$BIN" \
	timeout=3000 >"$T/cluster.out" 2>&1; then
	cat "$T/cluster.out" "$C"/log/slurmd.n1.log 2>/dev/null | tail -20
	notok "local Slurm cluster of GPU nodes starts"
	finish; exit 1
fi
unset HWLOC_XMLFILE
ok "local Slurm cluster starts (4 nodes of 4 H100 each, gres.conf from rankmapctl slurm-gres)"
export SLURM_CONF="$C/slurm.conf"
cd "$T" || exit 1

# ---- registration --------------------------------------------------------------------------------
R=$T/rmstate/registrations/n1.xml
registered_io() {
	[ -s "$R" ] || { ls -R "$T/rmstate" >&2; return 1; }
	for w in '"cuda0"' '"nvml3"' '"mlx5_0"' 'NodeGUID" value="a088:c203:0009:704e'; do
		grep -q "$w" "$R" || { echo "registered XML lacks $w" >&2; return 1; }
	done
}
expect "n1 registered its XML with its GPUs, NICs and HCA NodeGUIDs" registered_io
# rankmapd's model of n1 (its report through the daemon): the XML's GPUs and NICs, counted here from the
# XML's OS devices (PCI devices with a network or OpenFabrics device: osdev_type 2 or 3)
nnics=$(python3 - "$XML" <<'EOP'
import sys
import xml.etree.ElementTree as ET
print(sum(1 for p in ET.parse(sys.argv[1]).iter("object") if p.get("type") == "PCIDev" and
          any(o.get("type") == "OSDev" and o.get("osdev_type") in ("2", "3") for o in p.findall("object"))))
EOP
)
model_gpus() {
	"$BIN/rankmapctl" report --server "$T/rankmapd.sock" --json >"$T/reg.json" 2>&1 || { cat "$T/reg.json" >&2; return 1; }
	python3 - "$T/reg.json" "$nnics" <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
t = [t for t in d["node_types"] if "n1" in t["host_list"] or t["host_list"].startswith("n[")]
assert t and t[0]["gpus"] == 4 and t[0]["nics"] == int(sys.argv[2]), (t, sys.argv[2])
assert any(n.get("kind") == "openfabrics" for n in t[0]["nic_list"]), t[0]["nic_list"]
EOP
}
expect "rankmapd's model of the registered nodes has their 4 GPUs and $nnics NICs (report through the daemon)" model_gpus
# its HCA GUIDs name a generic HCA of a fabric (two HCAs back to back; mlx5_0's NodeGUID described only as
# "MT4123 ConnectX6 ...", as on a cluster without rdma-ndd): the HCA takes the host's name
guids_name_hca() {
	mkdir -p "$T/reghw" && cp "$R" "$T/reghw/n1.xml" || return 1
	printf '%s\n' '# two HCAs back to back (hand-written)' 'caguid=0xa088c2030009704e' \
		'Ca	1 "H-a088c2030009704e"		# "MT4123 ConnectX6 Mellanox Technologies"' \
		'[1](a088c2030009704e) 	"H-0000000000000b02"[1]		# lid 1 lmc 0 "beta HCA-1" lid 2 4xHDR' '' \
		'caguid=0xb02' 'Ca	1 "H-0000000000000b02"		# "beta HCA-1"' \
		'[1](b02) 	"H-a088c2030009704e"[1]		# lid 2 lmc 0 "MT4123 ConnectX6 Mellanox Technologies" lid 1 4xHDR' >"$T/fab.topo"
	"$BIN/rankmapctl" report --hwloc "$T/reghw" --ib "$T/fab.topo" >"$T/fab.report" 2>&1 || return 1
	! grep -q 'generic_hca\|not_in_fabric' "$T/fab.report" || { cat "$T/fab.report" >&2; return 1; }
}
expect "the registered XML's NodeGUID names the fabric's generic HCA after n1" guids_name_hca

# ---- --rankmap-bind=gpu ----------------------------------------------------------------------------
cat >"$T/probe.sh" <<'EOS'
#!/bin/sh
echo "task $SLURM_PROCID cvd=${CUDA_VISIBLE_DEVICES-unset} step=${SLURM_STEP_GPUS-unset} gpu=${RANKMAP_GPU-unset} nic=${RANKMAP_NIC-unset} ucx=${UCX_NET_DEVICES-unset} ompi=${OMPI_MCA_btl_openib_if_include-unset} bound=${RANKMAP_BIND_CPUS-unset} allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"
EOS
chmod +x "$T/probe.sh"
# field NAME LINE: the value of NAME=value in a probe line (values up to the next " name=")
pf() { echo "$2" | sed -n "s/.* $1=\(.*\)/\1/p" | sed 's/ [a-z]*=.*//'; }
pkg_of() { hwloc-calc --input "$XML" -I package "os=$1" | cut -d, -f1; }
# check_bind OUT STEP: the four tasks' GPUs, NICs, transport variables and binding
check_bind() {
	out=$1; step=$2; bad=""; seen=""
	[ "$(grep -c '^task ' "$out")" = 4 ] || { echo "$(cat "$out")" >&2; return 1; }
	while read -r line; do
		t=$(echo "$line" | cut -d' ' -f2)
		cvd=$(pf cvd "$line"); g=$cvd
		[ "$cvd" = "$(pf step "$line")" ] || bad="$bad task$t: cvd=$cvd step=$(pf step "$line");"
		case " $seen " in *" $g "*) bad="$bad GPU $g twice;" ;; esac
		seen="$seen $g"
		busid=$(awk -v g="$g" '$1 == g { print $2 }' "$T/gpus"); osdev=$(awk -v g="$g" '$1 == g { print $3 }' "$T/gpus")
		[ "$(pf gpu "$line" | cut -d' ' -f1)" = "$busid" ] || bad="$bad task$t: RANKMAP_GPU=$(pf gpu "$line") not $busid;"
		nic=$(pf nic "$line")
		case $nic in mlx5_*) ;; *) bad="$bad task$t: nic=$nic;" ;; esac
		[ "$(pkg_of "$nic")" = "$(pkg_of "$osdev")" ] || bad="$bad task$t: $nic not on $osdev's package;"
		[ "$(pf ucx "$line")" = "$nic:1" ] && [ "$(pf ompi "$line")" = "$nic:1" ] || bad="$bad task$t: ucx/ompi;"
		plan=$(grep "\[$step\] rankmap: task $t: GPU .*, CPUs " "$C"/log/slurmd.n1.log | sed -n 's/.*, CPUs \([^ ]*\), NIC .*/\1/p' | tail -1)
		pus=",$(hwloc-calc --input "$XML" --po -I pu "package:$(pkg_of "$osdev")"),"
		for c in $(echo "$plan" | tr ',' ' '); do case $pus in *",$c,"*) ;; *) bad="$bad task$t: CPU $c not on the GPU's package;" ;; esac; done
		[ -n "$plan" ] || bad="$bad task$t: no plan logged;"
		b=$(pf bound "$line")
		if [ "$b" = unset ]; then
			grep -q "\[$step\] rankmap: task $t: .*sched_setaffinity: CPUs $plan: Invalid argument; task not bound" "$C"/log/slurmd.n1.log ||
				bad="$bad task$t: unbound without the sched_setaffinity warning;"
		else
			[ "$b" = "$plan" ] || bad="$bad task$t: bound=$b plan=$plan;"
		fi
	done <<EOL
$(grep '^task ' "$out")
EOL
	[ -z "$bad" ] || { echo "$bad" >&2; cat "$out" >&2; return 1; }
}
timeout 120 srun -N1 -n4 --gpus-per-task=1 --rankmap-bind=gpu "$T/probe.sh" >"$T/bind.out" 2>"$T/bind.err"
expect "--rankmap-bind=gpu: each task's own GPU named (PCI bus id), its package's NIC in UCX_NET_DEVICES and OMPI_MCA_btl_openib_if_include, bound to the allocated cores of its GPU's package (or unbound where this machine lacks those CPUs, saying why)" check_bind "$T/bind.out" 1.0
timeout 120 srun -N1 -n4 --gpus-per-task=1 --gres-flags=enforce-binding --rankmap-bind=gpu "$T/probe.sh" >"$T/bind2.out" 2>"$T/bind2.err"
expect "--rankmap-bind=gpu with --gres-flags=enforce-binding: the same" check_bind "$T/bind2.out" 2.0
mine() {
	UCX_NET_DEVICES=mine timeout 120 srun -N1 -n1 --gpus-per-task=1 --rankmap-bind=gpu "$T/probe.sh" >"$T/mine.out" 2>&1 &&
		grep -q ' ucx=mine ' "$T/mine.out" && grep -q ' nic=mlx5_' "$T/mine.out" || { cat "$T/mine.out" >&2; return 1; }
}
expect "a user's own UCX_NET_DEVICES is kept" mine
bogus() {
	srun -N1 -n1 --rankmap-bind=bogus true >"$T/bogus.out" 2>&1 && return 1
	grep -q "invalid value 'bogus' (expected cores or gpu)" "$T/bogus.out" || { cat "$T/bogus.out" >&2; return 1; }
}
expect "--rankmap-bind=bogus is refused at submission" bogus
nogpu() {
	timeout 120 srun -N1 -n1 --rankmap-bind=gpu "$T/probe.sh" >"$T/nogpu.out" 2>"$T/nogpu.err" || return 1
	grep -q '^task 0 ' "$T/nogpu.out" && [ "$(grep -c '^rankmap:' "$T/nogpu.err")" = 1 ] &&
		grep -q 'rankmap: warning: --rankmap-bind=gpu: task 0: .*task not bound' "$T/nogpu.err" || { cat "$T/nogpu.out" "$T/nogpu.err" >&2; return 1; }
}
expect "a task without a GPU runs, with one warning" nogpu

# ---- clean up ------------------------------------------------------------------------------------
cd "$TOP" || exit 1
sh "$H/cluster.sh" stop "$C"
term_rankmapd >/dev/null 2>&1
left=$( (pgrep -f "$T"; sh "$H/cluster.sh" stepds "$C") 2>/dev/null | wc -l)
expect "every daemon stopped (none left running from $T)" test "$left" = 0
finish
