#!/bin/sh
# GPU slots in MPI jobs, under Open MPI and MPICH: each rank's device variable is set by a wrapper from
# its rank (as site wrappers and Slurm's --gpu-bind do), the hardware is a recorded GPU node
# (RANKMAP_FAKE_XML: the MI250X blade eas-tioga, 8 GCDs, two per MI250X package), its xGMI links from the
# site link file conf/gpu-links-mi250x.conf (a cluster file's gpu_links: hwloc's own matrix for this
# blade gives every pair the same bandwidth, hwloc issue 775).
# Checks, for 8 ranks on the real host (real placement, ranks unbound) with a matrix of four heavy pairs
# and the GPUs handed out so that every heavy pair starts on two packages:
#   - the call maps onto GPU slots (report slots=gpu), one place line per rank naming the GPU the wrapper
#     gave it (by index, and again by UUID: ROCR_VISIBLE_DEVICES=GPU-<AMDUUID of the XML>);
#   - reordering only renumbers: every process drives the same GPU before and after (its variables
#     unchanged, the program checks), and the Cartesian communicator is consistent (halo);
#   - the new order follows the GPU costs: each heavy pair of new ranks is run by the two GCDs of one
#     MI250X package (packages read from the XML's AMDSerial, independently of rankmap), which core slots
#     (RANKMAP_SLOTS=core) do not give;
#   - a rank without a device variable, a rank whose variable is garbage, or two ranks on one GPU: core
#     slots and exactly one warning naming the rank or GPU; RANKMAP_SLOTS=core: no warning;
#   - 16 ranks on two virtual hosts of that blade (RANKMAP_FAKE_HOSTS=2): GPU slots across hosts;
#   - through rankmapd (its model holds the blade as host gpunode, which each rank names as its
#     SLURMD_NODENAME): the map request carries [host, gpu] slots (slot_kind gpu), the same pairing,
#     each place line names the rank's GPU; a rank without a GPU: core slots through the daemon, one
#     warning; ranks on two hosts whose names have the same 32-bit hash, GPUs 0-3 on each: GPU slots, no
#     warning (the check that no two ranks share a GPU compares the names).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
rankmapd_cleanup "$T"
XML=$DATA/gpu/mpibind/eas-tioga.xml
for m in $PMPI_MPIS; do
	[ -x "$BIN/tests/mpi/$m/gpu_halo" ] || { notok "$BIN/tests/mpi/$m/gpu_halo is not built"; finish; exit 1; }
done

# The XML's GCDs in PCI bus order: "index busid serial uuid" (the package of a GCD is its AMDSerial)
python3 - "$XML" >"$T/gcds" <<'EOP' || { notok "cannot read $XML"; finish; exit 1; }
import sys
import xml.etree.ElementTree as ET
out = []
for pci in ET.parse(sys.argv[1]).iter("object"):
    if pci.get("type") != "PCIDev":
        continue
    for os in pci.findall("object"):
        if os.get("type") == "OSDev" and os.get("name", "").startswith("rsmi"):
            info = {i.get("name"): i.get("value") for i in os.findall("info")}
            out.append((pci.get("pci_busid"), info["AMDSerial"], info["AMDUUID"]))
out.sort()
for i, (b, s, u) in enumerate(out):
    print(i, b, s, u)
EOP
mkdir -p "$T/dhw" && cp "$XML" "$T/dhw/gpunode.xml"
# two more blades whose names have the same 32-bit FNV-1a hash (found by a search): two hosts all the same
HA=gn184969 HB=gn1271020
cp "$XML" "$T/dhw/$HA.xml" && cp "$XML" "$T/dhw/$HB.xml"
printf 'hwloc = %s\ngpu_links = %s\n' "$T/dhw" "$TOP/conf/gpu-links-mi250x.conf" >"$T/dcluster.conf"
printf 'cluster = %s\n' "$T/dcluster.conf" >"$T/rankmapd.conf"
start_rankmapd "$T/rankmapd.conf" "$T/sock" "$T/d.log" --state-dir "$T/state"
[ "$(wc -l <"$T/gcds")" = 8 ] && ok "the blade's 8 GCDs read from the XML" || { notok "GCDs: $(cat "$T/gcds")"; finish; exit 1; }
serial() { awk -v g="$1" '$1 == g { print $3 }' "$T/gcds"; }
uuid() { awk -v g="$1" '$1 == g { print $4 }' "$T/gcds"; }
# the two GCDs of a package must be two indices: check the pairing the test relies on below
for g in 0 2 4 6; do
	[ "$(serial $g)" = "$(serial $((g + 1)))" ] || { notok "GCDs $g and $((g + 1)) are not one package"; finish; exit 1; }
done

# the wrapper: rank r's device variable is word r of RM_GPUS ("-": unset), then the library under test
cat >"$T/wrap" <<'EOW'
#!/bin/sh
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
set -- $RM_GPUS "$@"
shift $r; v=$1; shift $(( $(echo $RM_GPUS | wc -w) - r ))
[ "$v" = - ] || export "$RM_GPUVAR=$v"
[ -z "$RM_NODE" ] || export SLURMD_NODENAME=$RM_NODE
[ -z "$RM_NODES" ] || export SLURMD_NODENAME="$(echo $RM_NODES | cut -d' ' -f$((r + 1)))"
LD_PRELOAD=$RM_LIB exec "$@"
EOW
chmod +x "$T/wrap"

# four heavy pairs of ranks (0,1) (2,3) (4,5) (6,7), a light ring under them
{
	echo '%%MatrixMarket matrix coordinate real general'
	echo '8 8 16'
	for i in 1 3 5 7; do echo "$i $((i + 1)) 1000"; echo "$((i + 1)) $i 1000"; done
	for i in 1 2 3 4 5 6 7 8; do echo "$i $((i % 8 + 1)) 1"; done
} >"$T/pairs.mtx"

# gpu_job MPI NP VAR "GPUS" OUT ARGS...: the job, its output in OUT (stdout) and OUT.err
gpu_job() {
	_m=$1; _np=$2; _var=$3; _gpus=$4; _out=$5; shift 5
	case $_m in
	openmpi) RM_LIB=$(pmpi_lib openmpi) RM_GPUVAR=$_var RM_GPUS=$_gpus RM_NODE=${RM_NODE:-} RM_NODES=${RM_NODES:-} timeout -k 5 "$PMPI_TIMEOUT" \
			mpirun.openmpi --oversubscribe --allow-run-as-root -np "$_np" -x RM_LIB -x RM_GPUVAR -x RM_GPUS -x RM_NODE -x RM_NODES \
			"$T/wrap" "$BIN/tests/mpi/openmpi/gpu_halo" "$@" ;;
	mpich) timeout -k 5 "$PMPI_TIMEOUT" mpirun.mpich -np "$_np" -genv RM_LIB "$(pmpi_lib mpich)" \
			-genv RM_GPUVAR "$_var" -genv RM_GPUS "$_gpus" -genv RM_NODE "${RM_NODE:-}" -genv RM_NODES "${RM_NODES:-}" "$T/wrap" "$BIN/tests/mpi/mpich/gpu_halo" "$@" ;;
	esac >"$_out" 2>"$_out.err"
}

# same_devices OUT VAR "GPUS": every process reports the variable the wrapper set, unchanged
same_devices() {
	awk -v var="$2" -v gpus="$3" '
	BEGIN { n = split(gpus, g, " ") }
	/^gpu_halo world=/ {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = substr($i, length(kv[1]) + 2) }
		w = f["world"]; seen++
		want = g[w + 1] == "-" ? "none" : var "=" g[w + 1]
		if (f["dev"] != want) bad = bad " rank " w " dev " f["dev"] " (set " want ")"
		if (f["same"] != 1) bad = bad " rank " w " changed"
	}
	/^gpu_halo errors=/ { split($2, kv, "="); if (kv[2] != 0) bad = bad " " kv[2] " halo errors" }
	END { if (seen != n) bad = bad " " seen + 0 " ranks"; if (bad) { print bad; exit 1 } }' "$1"
}

# place_gpus REPORT "GPUS": the place lines name, for each rank, the GPU index the wrapper gave it
place_gpus() {
	awk -v gpus="$2" '
	BEGIN { n = split(gpus, g, " ") }
	/^rankmap: place / {
		for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		seen++; if (f["gpu"] != g[f["rank"] + 1]) bad = bad " rank " f["rank"] " gpu=" f["gpu"]
	}
	END { if (seen != n) bad = bad " " seen + 0 " lines"; if (bad) { print bad; exit 1 } }' "$1"
}

# pairs_packaged OUT "GPUS": each heavy pair of new (Cartesian) ranks (2k, 2k+1) is run by the two GCDs of
# one package; prints how many of the 4 pairs are
pairs_packaged() {
	awk -v gpus="$2" -v map="$(awk '{ printf "%s:%s ", $1, $3 }' "$T/gcds")" '
	BEGIN { split(gpus, g, " "); k = split(map, m, " "); for (i = 1; i <= k; i++) { split(m[i], a, ":"); ser[a[1]] = a[2] } }
	/^gpu_halo world=/ {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		gpu_of[f["cart"]] = g[f["world"] + 1]
	}
	END { for (c = 0; c < 8; c += 2) ok += ser[gpu_of[c]] == ser[gpu_of[c + 1]]; print ok + 0 }' "$1"
}

echo "gpu_links = $TOP/conf/gpu-links-mi250x.conf" >"$T/links.conf"
# ranks 2k and 2k+1 start on two packages (GCD 0 2 4 6 1 3 5 7)
SCRAMBLED="0 2 4 6 1 3 5 7"
for m in $PMPI_MPIS; do
	export RANKMAP_FAKE_XML="$XML" RANKMAP_MATRIX="$T/pairs.mtx" RANKMAP_CLUSTER="$T/links.conf"
	R=$T/$m.r1
	rm -f "$R"
	if RANKMAP_REPORT=$R gpu_job "$m" 8 ROCR_VISIBLE_DEVICES "$SCRAMBLED" "$T/$m.o1" 1 8 0; then
		ok "$m: the job of 8 ranks on GPUs ran"
	else
		notok "$m: job failed: $(tail -3 "$T/$m.o1.err")"
	fi
	[ "$(field slots "$R")" = gpu ] && ok "$m: mapped onto GPU slots (slots=gpu)" ||
		notok "$m: slots=$(field slots "$R") $(grep warning "$R" | head -1)"
	out=$(place_gpus "$R" "$SCRAMBLED") && ok "$m: each place line names the rank's own GPU" || notok "$m: place:$out"
	out=$(same_devices "$T/$m.o1" ROCR_VISIBLE_DEVICES "$SCRAMBLED") &&
		ok "$m: every process keeps its GPU (device variables unchanged), halo consistent" || notok "$m:$out"
	[ "$(field moved "$R")" -gt 0 ] 2>/dev/null && ok "$m: ranks renumbered ($(field moved "$R") moved)" ||
		notok "$m: moved=$(field moved "$R")"
	n=$(pairs_packaged "$T/$m.o1" "$SCRAMBLED")
	[ "$n" = 4 ] && ok "$m: each heavy pair is now run by the two GCDs of one MI250X package" ||
		notok "$m: $n of 4 heavy pairs on one package"
	[ "$(warnings "$T/$m.o1.err")" = 0 ] && ok "$m: no warning" || notok "$m: $(cat "$T/$m.o1.err")"

	# the same GPUs named by UUID (ROCm's GPU-<hex>)
	U=""
	for g in $SCRAMBLED; do U="$U GPU-$(uuid "$g")"; done
	R=$T/$m.r2
	rm -f "$R"
	RANKMAP_REPORT=$R gpu_job "$m" 8 ROCR_VISIBLE_DEVICES "$U" "$T/$m.o2" 1 8 0
	[ "$(field slots "$R")" = gpu ] && out=$(place_gpus "$R" "$SCRAMBLED") &&
		[ "$(pairs_packaged "$T/$m.o2" "$SCRAMBLED")" = 4 ] &&
		ok "$m: GPUs named by UUID: the same GPU slots and pairs" || notok "$m: by UUID: slots=$(field slots "$R") $out"

	# core slots on request: quiet, and the GPU packages are not what the mapping sees
	R=$T/$m.r3
	rm -f "$R"
	RANKMAP_SLOTS=core RANKMAP_REPORT=$R gpu_job "$m" 8 ROCR_VISIBLE_DEVICES "$SCRAMBLED" "$T/$m.o3" 1 8 0
	[ "$(field slots "$R")" = core ] && [ "$(warnings "$T/$m.o3.err")" = 0 ] &&
		out=$(same_devices "$T/$m.o3" ROCR_VISIBLE_DEVICES "$SCRAMBLED") &&
		ok "$m: RANKMAP_SLOTS=core: core slots, no warning, GPUs kept" || notok "$m: core: slots=$(field slots "$R") $out"
	n=$(pairs_packaged "$T/$m.o3" "$SCRAMBLED")
	[ "$n" != 4 ] && ok "$m: core slots do not pair the GCDs ($n of 4 pairs): the GPU result came from GPU costs" ||
		notok "$m: core slots also paired every GCD pair (the check above proves nothing)"

	# fallbacks: core slots and one warning naming the cause
	fallback() { # name GPUS want-in-warning [VAR]
		R=$T/$m.fb
		rm -f "$R"
		RANKMAP_REPORT=$R gpu_job "$m" 8 "${4:-ROCR_VISIBLE_DEVICES}" "$2" "$T/$m.fb.o" 1 8 0
		w=$(grep '^rankmap: ' "$T/$m.fb.o.err" | grep -v '^rankmap: report\|^rankmap: place')
		if [ "$(field slots "$R")" = core ] && [ "$(warnings "$T/$m.fb.o.err")" = 1 ] &&
			echo "$w" | grep -q "GPU slots not used.*$3" && same_devices "$T/$m.fb.o" "${4:-ROCR_VISIBLE_DEVICES}" "$2" >/dev/null; then
			ok "$m: $1: core slots, one warning ($w)"
		else
			notok "$m: $1: slots=$(field slots "$R") warnings: $(cat "$T/$m.fb.o.err")"
		fi
	}
	fallback "a rank without a device variable" "0 2 4 - 1 3 5 7" "rank 3 names no GPU"
	fallback "a rank whose variable is garbage" "0 2 4 6 1 x 5 7" "rank 5: its device variables do not name one GPU" CUDA_VISIBLE_DEVICES
	fallback "two ranks on one GPU" "0 2 4 6 1 3 5 5" "two ranks drive GPU 5"
	fallback "a GPU the node lacks" "0 2 4 6 1 3 5 9" "rank 7: GPU 9, but .* has 8 GPUs"

	# two virtual hosts of the blade, 16 ranks, a 2 x 8 grid: GPU slots across hosts
	R=$T/$m.r4
	rm -f "$R"
	G16="0 4 1 5 2 6 3 7 7 3 6 2 5 1 4 0"
	RANKMAP_CLUSTER= RANKMAP_MATRIX= RANKMAP_FAKE_HOSTS=2 RANKMAP_REPORT=$R gpu_job "$m" 16 ROCR_VISIBLE_DEVICES "$G16" "$T/$m.o4" 2 2 8 0 0
	[ "$(field slots "$R")" = gpu ] && out=$(place_gpus "$R" "$G16") && out=$(same_devices "$T/$m.o4" ROCR_VISIBLE_DEVICES "$G16") &&
		lt "$(field cost_after "$R")" "$(field cost_before "$R")" &&
		ok "$m: 16 ranks on two virtual MI250X blades: GPU slots, GPUs kept, cost $(field cost_before "$R") -> $(field cost_after "$R")" ||
		notok "$m: two hosts: slots=$(field slots "$R") $out $(tail -2 "$T/$m.o4.err")"
	unset RANKMAP_FAKE_XML RANKMAP_CLUSTER

	# through rankmapd: GPU slots of the daemon's model
	R=$T/$m.r5
	rm -f "$R"
	RM_NODE=gpunode RANKMAP_SOCKET=$T/sock RANKMAP_REPORT=$R gpu_job "$m" 8 ROCR_VISIBLE_DEVICES "$SCRAMBLED" "$T/$m.o5" 1 8 0
	[ "$(field slots "$R")" = gpu ] && out=$(place_gpus "$R" "$SCRAMBLED") && out=$(same_devices "$T/$m.o5" ROCR_VISIBLE_DEVICES "$SCRAMBLED") &&
		[ "$(pairs_packaged "$T/$m.o5" "$SCRAMBLED")" = 4 ] && [ "$(warnings "$T/$m.o5.err")" = 0 ] &&
		case $(field algo "$R") in rankmapd:*) true ;; *) false ;; esac &&
		ok "$m: through rankmapd: GPU slots ([host, gpu]), each heavy pair on one package, GPUs kept" ||
		notok "$m: through rankmapd: slots=$(field slots "$R") algo=$(field algo "$R") $out $(head -3 "$T/$m.o5.err")"
	R=$T/$m.r6
	rm -f "$R"
	RM_NODE=gpunode RANKMAP_SOCKET=$T/sock RANKMAP_REPORT=$R gpu_job "$m" 8 ROCR_VISIBLE_DEVICES "0 2 4 - 1 3 5 7" "$T/$m.o6" 1 8 0
	[ "$(field slots "$R")" = core ] && [ "$(warnings "$T/$m.o6.err")" = 1 ] && grep -q "GPU slots not used (rank 3 names no GPU" "$T/$m.o6.err" &&
		ok "$m: through rankmapd, a rank without a GPU: core slots, one warning" ||
		notok "$m: through rankmapd, mixed: slots=$(field slots "$R") $(cat "$T/$m.o6.err")"
	# through rankmapd, GPUs named by UUID on some ranks and by index on others: the daemon resolves both on
	# its model: distinct GPUs are GPU slots with no warning; two ranks on one GPU (its UUID on rank 0, its
	# index on rank 1) are core slots with one warning naming the daemon's refusal (the job ran unreordered)
	set -- $SCRAMBLED
	MIX="GPU-$(uuid "$1") $2 GPU-$(uuid "$3") $4 $5 GPU-$(uuid "$6") $7 $8"
	R=$T/$m.r8
	rm -f "$R"
	RM_NODE=gpunode RANKMAP_SOCKET=$T/sock RANKMAP_REPORT=$R gpu_job "$m" 8 ROCR_VISIBLE_DEVICES "$MIX" "$T/$m.o8" 1 8 0
	[ "$(field slots "$R")" = gpu ] && out=$(place_gpus "$R" "$SCRAMBLED") && [ "$(warnings "$T/$m.o8.err")" = 0 ] &&
		case $(field algo "$R") in rankmapd:*) true ;; *) false ;; esac &&
		ok "$m: through rankmapd, GPUs named by UUID and by index: GPU slots, no warning" ||
		notok "$m: through rankmapd, UUIDs and indices: slots=$(field slots "$R") algo=$(field algo "$R") $out $(head -3 "$T/$m.o8.err")"
	SAME="GPU-$(uuid "$1") $1 $3 $4 $5 $6 $7 $8"
	R=$T/$m.r9
	rm -f "$R"
	RM_NODE=gpunode RANKMAP_SOCKET=$T/sock RANKMAP_REPORT=$R gpu_job "$m" 8 ROCR_VISIBLE_DEVICES "$SAME" "$T/$m.o9" 1 8 0
	[ "$(field slots "$R")" = core ] && [ "$(warnings "$T/$m.o9.err")" = 1 ] &&
		grep -q "GPU slots not used (rankmapd: .*given twice" "$T/$m.o9.err" &&
		case $(field algo "$R") in rankmapd:* | current) true ;; *) false ;; esac &&
		out=$(same_devices "$T/$m.o9" ROCR_VISIBLE_DEVICES "$SAME") &&
		ok "$m: through rankmapd, one GPU named by its UUID and its index: core slots, one warning, GPUs kept" ||
		notok "$m: through rankmapd, one GPU two ways: slots=$(field slots "$R") algo=$(field algo "$R") $out $(cat "$T/$m.o9.err")"
	# through rankmapd, two hosts whose names hash alike, GPUs 0-3 on each: GPU slots, no warning
	R=$T/$m.r7
	rm -f "$R"
	RM_NODES="$HA $HA $HA $HA $HB $HB $HB $HB" RANKMAP_SOCKET=$T/sock RANKMAP_REPORT=$R gpu_job "$m" 8 ROCR_VISIBLE_DEVICES "0 1 2 3 0 1 2 3" "$T/$m.o7" 1 8 0
	[ "$(field slots "$R")" = gpu ] && [ "$(warnings "$T/$m.o7.err")" = 0 ] &&
		ok "$m: through rankmapd, GPU 0-3 of two hosts whose names hash alike: GPU slots, no warning" ||
		notok "$m: through rankmapd, hash-alike hosts: slots=$(field slots "$R") $(head -3 "$T/$m.o7.err")"
	unset RANKMAP_MATRIX
done
finish
