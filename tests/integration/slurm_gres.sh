#!/bin/sh
# tests/integration/slurm_gres.sh: `rankmapctl slurm-gres` on recorded GPU nodes, accepted by a real
# `slurmd -G` (Debian 12's Slurm 22.05): for each node, the lines are written for a scratch root
# (--dev-root), the device nodes they name are created there (mknod, NVIDIA's major 195, DRM's 226),
# slurmd reads them with hwloc pointed at the same XML (HWLOC_XMLFILE) and a slurm.conf whose node has the
# XML's sockets, cores and threads, and prints the GRES it parsed. Checks: no error from slurmd; as many
# GPUs as the XML has (counted here from its OS devices, independently of rankmap); each GPU's Cores= are
# the cores of the NUMA node hwloc-calc gives for that GPU; Links= as written, -1 on the diagonal,
# symmetric, and on the MI250X blade with its site link file 4 between the two GCDs of one package
# (packages from the XML's AMDSerial); the slurm.conf Gres= of the comment line matches. Then the usage
# and input errors.
. "$(dirname "$0")/../lib.sh"
T=$(mktmp)
trap 'rm -rf "$T"' EXIT
for c in slurmd hwloc-calc python3 mknod; do
	command -v "$c" >/dev/null || { notok "required command $c is missing (make deps)"; finish; exit 1; }
done
CTL=$BIN/rankmapctl
[ -x "$CTL" ] || { notok "$CTL is not built"; finish; exit 1; }

# gpus XML: "index osdev busid serial" of the XML's compute GPUs in PCI bus id order (from its OS devices)
gpus() {
	python3 - "$1" <<'EOP'
import sys
import xml.etree.ElementTree as ET
out = []
for pci in ET.parse(sys.argv[1]).iter("object"):
    if pci.get("type") != "PCIDev":
        continue
    names, serial = [], "-"
    for os in pci.findall("object"):
        n = os.get("name", "")
        if os.get("type") == "OSDev" and n.rstrip("0123456789") in ("cuda", "nvml", "rsmi", "ze") and n[-1:].isdigit():
            names.append(n)
            for i in os.findall("info"):
                if i.get("name") == "AMDSerial":
                    serial = i.get("value")
    if names:
        out.append((pci.get("pci_busid"), sorted(names)[0], serial))
out.sort()
for k, (b, n, s) in enumerate(out):
    print(k, n, b, s)
EOP
}

# compress "0,1,2,5" -> "0-2,5"
compress() {
	echo "$1" | tr ',' '\n' | awk 'NF { if (n && $1 == last + 1) { last = $1; next } if (n) out = out (out ? "," : "") (first == last ? first : first "-" last); first = last = $1; n = 1 }
		END { if (n) out = out (out ? "," : "") (first == last ? first : first "-" last); print out }'
}

# node_line XML: the slurm.conf hardware of the XML (CPUs, sockets, cores per socket, threads per core)
node_hw() {
	p=$(HWLOC_XMLFILE=$1 hwloc-calc --number-of package all)
	c=$(HWLOC_XMLFILE=$1 hwloc-calc --number-of core all)
	u=$(HWLOC_XMLFILE=$1 hwloc-calc --number-of pu all)
	echo "CPUs=$u SocketsPerBoard=$p CoresPerSocket=$((c / p)) ThreadsPerCore=$((u / c))"
}

# check_node NAME XML [CLUSTER_FILE_LINES]: the whole round trip for one recorded node
check_node() {
	name=$1; xml=$2; extra=$3
	D=$T/$name
	mkdir -p "$D/hw" "$D/root"
	cp "$xml" "$D/hw/n1.xml"
	printf 'hwloc = %s\n%s' "$D/hw" "$extra" >"$D/cluster.conf"
	if ! "$CTL" slurm-gres --cluster "$D/cluster.conf" --dev-root "$D/root" >"$D/gres.out" 2>"$D/gres.err"; then
		notok "$name: slurm-gres failed: $(cat "$D/gres.err")"
		return
	fi
	gpus "$D/hw/n1.xml" >"$D/gpus"
	ng=$(wc -l <"$D/gpus")
	[ "$(grep -c '^NodeName=n1 Name=gpu ' "$D/gres.out")" = "$ng" ] && [ "$ng" -gt 0 ] &&
		ok "$name: one gres.conf line per GPU ($ng)" || notok "$name: $(cat "$D/gres.out")"
	# the device nodes, as the driver would make them
	for f in $(sed -n 's/.* File=\([^ ]*\).*/\1/p' "$D/gres.out"); do
		mkdir -p "$(dirname "$f")"
		case $f in
		*/nvidia*) mknod "$f" c 195 "${f##*nvidia}" ;;
		*/renderD*) mknod "$f" c 226 "${f##*renderD}" ;;
		*) notok "$name: unexpected File=$f" ;;
		esac || { notok "$name: mknod $f failed (needs root)"; return; }
	done
	sh "$TOP/tests/slurm/cluster.sh" conf "$D/c" >/dev/null || { notok "$name: slurm.conf"; return; }
	type=$(sed -n 's/^# n1: .*Gres=gpu:\([^:]*\):[0-9]*$/\1/p' "$D/gres.out")
	[ -n "$type" ] && ok "$name: the comment gives slurm.conf's Gres=gpu:$type:$ng" || notok "$name: no Gres= comment"
	sed -i "s/^NodeName=n\[1-4\] \(.*\) CPUs=16 SocketsPerBoard=2 CoresPerSocket=8 ThreadsPerCore=1 \(.*\)$/NodeName=n[1-4] \1 $(node_hw "$xml") \2 Gres=gpu:$type:$ng/" "$D/c/slurm.conf"
	sed -i '1i GresTypes=gpu' "$D/c/slurm.conf"
	grep '^NodeName=n1 ' "$D/gres.out" >"$D/c/gres.conf"
	HWLOC_XMLFILE=$D/hw/n1.xml timeout 60 slurmd -N n1 -f "$D/c/slurm.conf" -G >"$D/slurmd.out" 2>&1
	if grep -q 'error' "$D/slurmd.out" || [ "$(grep -c 'Gres Name=gpu ' "$D/slurmd.out")" != "$ng" ]; then
		notok "$name: slurmd -G: $(grep -m3 'error\|Gres' "$D/slurmd.out")"
		return
	fi
	ok "$name: slurmd -G accepts the lines: $ng GPUs, no error"
	bad=""
	while read -r k osdev busid serial; do
		line=$(grep "Gres Name=gpu " "$D/slurmd.out" | sed -n "$((k + 1))p") # in the order written (Index= is the file's number)
		numa=$(HWLOC_XMLFILE=$D/hw/n1.xml hwloc-calc -I numa "os=$osdev" | cut -d, -f1)
		want=$(compress "$(HWLOC_XMLFILE=$D/hw/n1.xml hwloc-calc -I core "numa:$numa")")
		echo "$line" | grep -q " Cores=$want " || bad="$bad GPU$k($osdev) Cores: want $want in '$line';"
		mine=$(sed -n "$((k + 1))p" "$D/c/gres.conf" | sed -n 's/.* Links=\([^ ]*\).*/\1/p')
		[ -z "$mine" ] && continue
		echo "$line" | grep -q " Links=$mine\$" || bad="$bad GPU$k Links differ from slurmd's;"
		[ "$(echo "$mine" | cut -d, -f$((k + 1)))" = -1 ] || bad="$bad GPU$k not -1 on the diagonal;"
	done <"$D/gpus"
	[ -z "$bad" ] && ok "$name: slurmd's Cores= are each GPU's NUMA node cores (hwloc-calc), Links= as written" ||
		notok "$name:$bad"
	# symmetric matrix
	sed -n 's/.* Links=\([^ ]*\).*/\1/p' "$D/c/gres.conf" >"$D/links"
	if [ -s "$D/links" ]; then
		awk -F, '{ for (j = 1; j <= NF; j++) m[NR, j] = $j; n = NR } END { for (i = 1; i <= n; i++) for (j = 1; j <= n; j++) if (m[i, j] != m[j, i]) exit 1 }' "$D/links" &&
			ok "$name: Links= symmetric" || notok "$name: Links= not symmetric: $(cat "$D/links")"
	fi
}

check_node h100 "$DATA/gpu/flux-core/ipa20.xml"
check_node ac922 "$DATA/gpu/mpibind/coral-lassen.xml"
check_node mi250x "$DATA/gpu/mpibind/eas-tioga.xml" "gpu_links = $TOP/conf/gpu-links-mi250x.conf
"
# the MI250X's quad links join the two GCDs of one package (same AMDSerial), and only them
D=$T/mi250x
if [ -s "$D/links" ]; then
	bad=""
	while read -r k osdev busid serial; do
		row=$(sed -n "$((k + 1))p" "$D/links")
		while read -r j o2 b2 s2; do
			[ "$j" = "$k" ] && continue
			l=$(echo "$row" | cut -d, -f$((j + 1)))
			if [ "$serial" = "$s2" ]; then [ "$l" = 4 ] || bad="$bad $k-$j=$l"; else [ "$l" -lt 4 ] || bad="$bad $k-$j=$l"; fi
		done <"$D/gpus"
	done <"$D/gpus"
	[ -z "$bad" ] && ok "mi250x: Links=4 exactly between the two GCDs of each package" || notok "mi250x: links$bad"
fi

# ---- usage and input errors ----
out=$("$CTL" slurm-gres --help 2>&1)
echo "$out" | grep -q -- '--dev-root' && echo "$out" | grep -q 'Links' && ok "slurm-gres --help documents its options" ||
	notok "slurm-gres --help: $out"
"$CTL" --help 2>&1 | grep -q 'slurm-gres' && ok "rankmapctl --help lists slurm-gres" || notok "rankmapctl --help lacks slurm-gres"
err_case() { # want-rc want-text args...
	want=$1; text=$2; shift 2
	"$CTL" slurm-gres "$@" >"$T/e.out" 2>"$T/e.err"
	rc=$?
	[ "$rc" = "$want" ] && grep -q -- "$text" "$T/e.err" && ok "slurm-gres $*: exit $want ($(head -1 "$T/e.err"))" ||
		notok "slurm-gres $*: exit $rc: $(cat "$T/e.err")"
}
err_case 2 "give --hwloc SPEC or --cluster FILE"
err_case 2 "--type 'a b'" --hwloc "$DATA/gpu/flux-core/ipa20.xml" --type 'a b'
err_case 2 "--dev-root 'rel'" --hwloc "$DATA/gpu/flux-core/ipa20.xml" --dev-root rel
err_case 1 "nosuch: no such host" --hwloc "$DATA/gpu/flux-core/ipa20.xml" --hosts nosuch
err_case 1 "no host has a GPU" --hwloc "$DATA/daemon/hwloc/bonobo001.xml"
err_case 1 "missing.xml" --hwloc "$T/missing.xml"
"$CTL" slurm-gres --hwloc "$DATA/gpu/flux-core/ipa20.xml" --type h100 --out "$T/g.conf" &&
	[ "$(grep -c 'Type=h100 ' "$T/g.conf")" = 4 ] && ok "--type and --out" || notok "--type/--out: $(cat "$T/g.conf")"
finish
