#!/bin/sh
# One slot identity through rankmapd, under Open MPI and MPICH: 8 unbound ranks in the real placement on
# 4 hosts of the daemon's model (tests/data/daemon/hwloc), each rank's host named by a wrapper
# (SLURMD_NODENAME = host r % 4: ranks that talk are on different hosts, so the mapping moves them).
# Checks: the root gathers no hardware when the daemon holds it (report hw_bytes=0; the same job mapping
# here gathers hwloc XML: hw_bytes > 0, one XML for hosts whose XML differs only in HostName); the report has one "place" line per rank (old rank, new rank,
# host, pu_os, bound) agreeing with the program's own count of moved ranks and with the host each rank was
# given; the PUs the daemon resolved are distinct on each host; RANKMAP_ALGO is case-insensitive ("Auto")
# and a wrong one is reported naming the variable. Ranks whose environment differs (RANKMAP_SOCKET on
# some ranks only) follow rank 0's choice: no hang, whichever rank lacks it.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpi/common.sh"
pmpi_check_built
T=$(mktmp)
rankmapd_cleanup "$T"
[ -x "$BIN/rankmapd" ] || { notok "$BIN/rankmapd not built"; finish; exit 1; }
cat >"$T/rankmapd.conf" <<EOC
hwloc_dir = $DATA/daemon/hwloc
ib_file = $DATA/plafrim/ib/ib-subnet0.txt
EOC
start_rankmapd "$T/rankmapd.conf" "$T/sock" "$T/d.log" --state-dir "$T/state"
expect "rankmapd is up" "$BIN/rankmapctl" ping --socket "$T/sock"
HOSTS="bonobo001 bonobo002 fourmi004 mirage001"

# the wrapper: the rank's host, then the library under test (given to the launcher as RM_LIB)
cat >"$T/wrap" <<EOW
#!/bin/sh
r=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-0}}
set -- $HOSTS "\$@"
shift \$((r % 4)); SLURMD_NODENAME=\$1; shift \$((4 - r % 4))
export SLURMD_NODENAME
case " \$RM_NOSOCK " in *" \$r "*) unset RANKMAP_SOCKET ;; esac
# RM_UTS: the rank runs in a UTS namespace of its own named after its host, so that hwloc's export of
# this one machine carries that host's name (HostName), as on real nodes
[ -n "\$RM_UTS" ] && exec unshare --uts sh -c 'hostname "\$SLURMD_NODENAME" && LD_PRELOAD=\$RM_LIB exec "\$@"' sh "\$@"
LD_PRELOAD=\$RM_LIB exec "\$@"
EOW
chmod +x "$T/wrap"

C=$T/cases
cases_new "$C"
case_add "$C" "2 4 2 1 1" RANKMAP_SOCKET="$T/sock" RANKMAP_REPORT="$T/r1" >/dev/null
case_add "$C" "2 4 2 1 1" RANKMAP_REPORT="$T/r2" >/dev/null
case_add "$C" "2 4 2 1 1" RANKMAP_SOCKET="$T/sock" RANKMAP_ALGO=Auto RANKMAP_REPORT="$T/r3" >/dev/null
case_add "$C" "2 4 2 1 1" RANKMAP_SOCKET="$T/sock" RANKMAP_ALGO=nosuch >/dev/null
case_add "$C" "2 4 2 1 1" RANKMAP_SOCKET="$T/sock" RANKMAP_VERBOSE=1 >/dev/null

run_cases() { # MPI
	rm -f "$C".*.out "$C".*.err "$T"/r?
	case $1 in
	openmpi) RM_LIB=$(pmpi_lib openmpi) timeout -k 5 "$PMPI_TIMEOUT" mpirun.openmpi --oversubscribe --allow-run-as-root \
			-np 8 -x RM_LIB "$T/wrap" "$BIN/tests/mpi/openmpi/cart_halo" -c "$C" ;;
	mpich) timeout -k 5 "$PMPI_TIMEOUT" mpirun.mpich -np 8 -genv RM_LIB "$(pmpi_lib mpich)" "$T/wrap" \
			"$BIN/tests/mpi/mpich/cart_halo" -c "$C" ;;
	esac >"$C.out" 2>"$C.err"
	_rc=$?
	for _k in 1 2 3 4 5; do grep "^case=$_k " "$C.out" >"$C.$_k.out"; touch "$C.$_k.err"; done
	return $_rc
}

# check_places FILE MOVED: the per-rank lines of FILE: ranks 0..7 once each, new ranks a permutation of
# 0..7 whose moved ranks are MOVED, each rank on the host the wrapper gave it, distinct PUs on a host
check_places() {
	awk -v moved="$2" -v hosts="$HOSTS" '
	BEGIN { split(hosts, h, " ") }
	/^rankmap: place / {
		n++
		for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		r = f["rank"]; nr = f["new_rank"]
		if (r in seen) bad = bad " rank " r " twice"
		seen[r] = 1; if (nr in nseen) bad = bad " new_rank " nr " twice"
		nseen[nr] = 1
		if (r != nr) m++
		if (f["host"] != h[r % 4 + 1]) bad = bad " rank " r " on " f["host"]
		if (f["bound"] != "no") bad = bad " rank " r " bound=" f["bound"]
		if (f["pu_os"] !~ /^[0-9]+$/) bad = bad " rank " r " pu_os=" f["pu_os"]
		if ((f["host"] SUBSEP f["pu_os"]) in pu) bad = bad " PU " f["host"] ":" f["pu_os"] " twice"
		pu[f["host"], f["pu_os"]] = 1
	}
	END {
		for (r = 0; r < 8; r++) if (!(r in seen) || !(r in nseen)) bad = bad " rank " r " missing"
		if (n != 8) bad = bad " " n + 0 " lines"
		if (m + 0 != moved + 0) bad = bad " " m + 0 " moved, the program says " moved
		if (bad) { print bad; exit 1 }
	}' "$1"
}

for m in $PMPI_MPIS; do
	run_cases "$m"; rc=$?
	for k in 1 2 3 5; do
		[ "$(field errors "$C.$k.out")" = 0 ] || { notok "$m: case $k: exit $rc: $(head -c 400 "$C.$k.err" "$C.err")"; }
	done
	# 1. through rankmapd: no hardware gathered, placement per rank
	sum=$(grep '^rankmap: report ' "$T/r1")
	case $sum in *algo=rankmapd:* | *algo=current*) ok "$m: mapped through rankmapd" ;; *) notok "$m: report: $sum" ;; esac
	[ "$(field hw_bytes "$T/r1")" = 0 ] && ok "$m: rankmapd holds the hardware: rank 0 gathered none (hw_bytes=0)" ||
		notok "$m: hw_bytes=$(field hw_bytes "$T/r1")"
	mv=$(field moved "$C.1.out")
	[ -n "$mv" ] && [ "$mv" -gt 0 ] && ok "$m: the mapping moved $mv ranks" || notok "$m: moved=$mv"
	why=$(check_places "$T/r1" "$mv") && ok "$m: one place line per rank, hosts and moves agree" || notok "$m: place lines:$why"
	case $sum in *cost_unit=weight\*distance*) ok "$m: costs carry their unit" ;; *) notok "$m: no cost_unit: $sum" ;; esac
	# 2. mapping here: the hardware is gathered (the counter counts)
	hb=$(field hw_bytes "$T/r2")
	[ -n "$hb" ] && [ "$hb" -gt 0 ] && ok "$m: mapping here gathers hwloc XML (hw_bytes=$hb)" || notok "$m: local hw_bytes=$hb"
	why=$(check_places "$T/r2" "$(field moved "$C.2.out")") && ok "$m: local: place lines agree" ||
		notok "$m: local place lines:$why"
	# 2b. hosts whose hwloc XML differs only in its infos (HostName: one UTS namespace per rank, named
	# after its host) are one node type: rank 0 gathers one XML for the 4 hosts, as for identical ones
	case $m in
	openmpi) RM_LIB=$(pmpi_lib openmpi) RM_UTS=1 RANKMAP_REPORT=$T/r6 timeout -k 5 60 mpirun.openmpi --oversubscribe \
			--allow-run-as-root -np 8 -x RM_LIB -x RM_UTS -x RANKMAP_REPORT "$T/wrap" \
			"$BIN/tests/mpi/openmpi/cart_halo" 2 4 2 1 1 ;;
	mpich) timeout -k 5 60 mpirun.mpich -np 8 -genv RM_LIB "$(pmpi_lib mpich)" -genv RM_UTS 1 -genv RANKMAP_REPORT \
			"$T/r6" "$T/wrap" "$BIN/tests/mpi/mpich/cart_halo" 2 4 2 1 1 ;;
	esac >"$T/uts.out" 2>"$T/uts.err"
	rc=$?
	h6=$(field hw_bytes "$T/r6")
	[ $rc -eq 0 ] && [ "$(field errors "$T/uts.out")" = 0 ] && [ -n "$h6" ] && [ -n "$hb" ] && [ "$h6" -gt 0 ] &&
		[ "$h6" -lt $((hb * 3 / 2)) ] &&
		ok "$m: 4 hosts named apart in their XML: one XML gathered (hw_bytes=$h6, one host's: $hb)" ||
		notok "$m: hosts named apart: exit $rc hw_bytes=$h6 (one host's: $hb) $(head -c 300 "$T/uts.err")"
	why=$(check_places "$T/r6" "$(field moved "$T/uts.out")") &&
		ok "$m: hosts named apart: place lines agree" || notok "$m: hosts named apart: place lines:$why"
	# 3. Auto: the engine auto
	[ "$(warnings "$C.3.err")" -eq 0 ] && grep -q '^rankmap: report ' "$T/r3" && ok "$m: RANKMAP_ALGO=Auto accepted" ||
		notok "$m: Auto: $(grep -h '^rankmap' "$C.3.err")"
	# 4. a wrong engine: one warning naming the variable
	w=$(grep '^rankmap: ' "$C.4.err" | grep -v '^rankmap: report\|^rankmap: place')
	case $w in *RANKMAP_ALGO*nosuch*) ok "$m: a wrong RANKMAP_ALGO is named: $w" ;; *) notok "$m: wrong engine: $w" ;; esac
	[ "$(field moved "$C.4.out")" = 0 ] && ok "$m: wrong engine: unreordered" || notok "$m: wrong engine moved ranks"
	# 5. RANKMAP_VERBOSE: the same lines on standard error
	why=$(check_places "$C.5.err" "$(field moved "$C.5.out")") && ok "$m: RANKMAP_VERBOSE prints the place lines" ||
		notok "$m: verbose place lines:$why"
	# ranks without RANKMAP_SOCKET beside ranks with it: rank 0 decides for all (RM_NOSOCK: the ranks
	# whose wrapper unsets it)
	for nosock in "1 3 5 7" "0 2 4 6"; do
		case $m in
		openmpi) RM_LIB=$(pmpi_lib openmpi) RM_NOSOCK=$nosock RANKMAP_SOCKET=$T/sock timeout -k 5 60 mpirun.openmpi \
				--oversubscribe --allow-run-as-root -np 8 -x RM_LIB -x RM_NOSOCK -x RANKMAP_SOCKET "$T/wrap" \
				"$BIN/tests/mpi/openmpi/cart_halo" 2 4 2 1 1 ;;
		mpich) timeout -k 5 60 mpirun.mpich -np 8 -genv RM_LIB "$(pmpi_lib mpich)" -genv RM_NOSOCK "$nosock" \
				-genv RANKMAP_SOCKET "$T/sock" "$T/wrap" "$BIN/tests/mpi/mpich/cart_halo" 2 4 2 1 1 ;;
		esac >"$T/het.out" 2>"$T/het.err"
		rc=$?
		[ $rc -eq 0 ] && [ "$(field errors "$T/het.out")" = 0 ] &&
			ok "$m: RANKMAP_SOCKET unset on ranks $nosock only: completes, checks pass" ||
			notok "$m: RANKMAP_SOCKET unset on ranks $nosock: exit $rc $(head -c 300 "$T/het.err")"
	done
done
finish
