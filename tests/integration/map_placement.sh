#!/bin/sh
# tests/integration/map_placement.sh: `rankmapctl map --rankfile FILE --slurm-hostfile FILE` are used as
# their programs mean them: on a local Slurm cluster (tests/slurm/cluster.sh, nodes n1..n4 whose hwloc
# data is this machine's own: 4 x its cores), srun --distribution=arbitrary with SLURM_HOSTFILE starts each rank on the
# host of its line, and Open MPI's mpirun --rankfile (inside salloc) starts each rank on the rankfile's
# host, bound to the logical core it names (checked against hwloc-calc and the rank's own CPU mask).
# The pattern pairs rank i with rank i+4 (heavy) on 4 hosts of 2 cores: a good mapping puts each pair
# on one host, which block placement does not; checked in what the ranks report, offline and through
# rankmapd.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/slurm/common.sh"

H=$TOP/tests/slurm
R=$BIN/rankmapctl
T=$(mktmp) || exit 1
chmod 755 "$T"
C=$T/cluster
rankmapd_on_exit() { sh "$H/cluster.sh" stop "$C" 2>/dev/null; }
rankmapd_cleanup "$T"

for c in munged slurmctld slurmd srun salloc mpirun.openmpi lstopo-no-graphics hwloc-calc; do
	command -v "$c" >/dev/null || { notok "required command $c is missing (make deps)"; finish; exit 1; }
done

# the nodes' hardware: this machine's (the ranks really run here), its first two cores per node
mkdir "$T/hw"
lstopo-no-graphics --of xml "$T/hw/n1.xml" 2>/dev/null || { notok "lstopo failed"; finish; exit 1; }
ncores=$(hwloc-calc --number-of core all 2>/dev/null)
[ "${ncores:-0}" -ge 2 ] || { skip "this machine has fewer than 2 cores"; finish; exit 0; }
for n in 2 3 4; do cp "$T/hw/n1.xml" "$T/hw/n$n.xml"; done
printf 'hwloc = %s\n' "$T/hw" >"$T/cluster.conf"
# ranks i and i+4 exchange 100, neighbours i, i+1 exchange 1
{
	echo '%%MatrixMarket matrix coordinate integer symmetric'
	echo '8 8 11'
	for i in 1 2 3 4; do echo "$((i + 4)) $i 100"; done
	for i in 1 2 3 4 5 6 7; do echo "$((i + 1)) $i 1"; done
} >"$T/pairs.mtx"
# 8 ranks on 4 nodes of ncores cores (on a machine of more than 2 cores, fewer ranks than slots)
hosts_opt='n[1-4]'
"$R" map --pattern "$T/pairs.mtx" --cluster "$T/cluster.conf" --hosts "$hosts_opt" --algo treematch \
	--rankfile "$T/rf" --slurm-hostfile "$T/hf" --out "$T/perm" >"$T/map.out" 2>"$T/map.err"
[ $? -eq 0 ] && ok "map writes a rankfile and a Slurm host list" || { notok "map: $(cat "$T/map.err")"; finish; exit 1; }
[ "$(grep -c '^rank ' "$T/rf")" = 8 ] && [ "$(wc -l <"$T/hf")" = 8 ] && ok "8 ranks in each file" ||
	notok "lines: $(grep -c '^rank ' "$T/rf") rankfile, $(wc -l <"$T/hf") host list"
# the two files say the same host for every rank
awk 'NR == FNR { h[NR - 1] = $1; next } /^rank / { split($2, a, "="); if (h[substr(a[1], 1) + 0] != a[2]) bad = 1 }
     END { exit bad }' "$T/hf" "$T/rf" && ok "rankfile and host list agree on each rank's host" || notok "files disagree"
# pairs i, i+4 on one host: the mapping did what the pattern asks
pairs_together() { # FILE with lines "rank host": every rank i < 4 shares its host with i + 4
	awk '{ h[$1] = $2 } END { for (i = 0; i < 4; i++) if (!(i in h) || h[i] != h[i + 4]) exit 1 }' "$1"
}
awk '{ print NR - 1, $1 }' "$T/hf" >"$T/hf.ranks"
expect "the host list puts each heavy pair on one host" pairs_together "$T/hf.ranks"

if ! sh "$H/cluster.sh" start "$C" >"$T/cluster.log" 2>&1; then
	notok "the local Slurm cluster did not start"; cat "$T/cluster.log" >&2; finish; exit 1
fi
export SLURM_CONF="$C/slurm.conf"
idle 30 || notok "nodes not idle"

# srun --distribution=arbitrary: rank R on line R's host
SLURM_HOSTFILE=$T/hf timeout 120 $SAN srun -n 8 --distribution=arbitrary sh -c 'echo "$SLURM_PROCID $SLURMD_NODENAME"' \
	>"$T/srun.out" 2>"$T/srun.err"
sort -n "$T/srun.out" >"$T/srun.sorted"
if [ "$(wc -l <"$T/srun.sorted")" = 8 ] && cmp -s "$T/srun.sorted" "$T/hf.ranks"; then
	ok "srun --distribution=arbitrary starts every rank on its line's host"
else
	notok "srun placement"; diff "$T/hf.ranks" "$T/srun.sorted" | head >&2; cat "$T/srun.err" >&2
fi
expect "srun: each heavy pair ran on one host" pairs_together "$T/srun.sorted"
idle 30 >/dev/null

# mpirun --rankfile inside an allocation of the four nodes: host and core of every rank
cat >"$T/where.sh" <<'EOS'
#!/bin/sh
echo "$OMPI_COMM_WORLD_RANK $SLURMD_NODENAME $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"
EOS
chmod +x "$T/where.sh"
timeout 180 $SAN salloc -N4 --ntasks-per-node="$ncores" mpirun.openmpi --allow-run-as-root --rankfile "$T/rf" -np 8 \
	"$T/where.sh" >"$T/mpirun.out" 2>"$T/mpirun.err"
sort -n "$T/mpirun.out" | grep '^[0-9]' >"$T/mpirun.sorted"
# expected: host from the rankfile, CPUs = the OS indexes of the PUs of that logical core (hwloc-calc)
sed -n 's/^rank \([0-9]*\)=\([^ ]*\) slot=\([0-9]*\)$/\1 \2 \3/p' "$T/rf" | sort -n | while read -r r h c; do
	echo "$r $h $(hwloc-calc --physical-output --intersect PU "core:$c" | tr -d '\n')"
done >"$T/mpirun.want"
# the kernel prints a CPU list as ranges ("0-1"); hwloc-calc as a comma list: compare as expanded sets
expand() { awk '{ n = split($3, p, ","); s = ""; for (i = 1; i <= n; i++) { if (split(p[i], q, "-") == 2)
	for (k = q[1]; k <= q[2]; k++) s = s "," k; else s = s "," p[i] } print $1, $2, substr(s, 2) }' "$1"; }
expand "$T/mpirun.want" >"$T/want.x"; expand "$T/mpirun.sorted" >"$T/got.x"
if [ "$(wc -l <"$T/got.x")" = 8 ] && cmp -s "$T/want.x" "$T/got.x"; then
	ok "mpirun --rankfile starts every rank on the rankfile's host, bound to its logical core"
else
	notok "mpirun placement"; diff "$T/want.x" "$T/got.x" | head >&2; tail -5 "$T/mpirun.err" >&2
fi
cut -d' ' -f1,2 "$T/mpirun.sorted" >"$T/mpirun.hosts"
expect "mpirun: each heavy pair ran on one host" pairs_together "$T/mpirun.hosts"

# through rankmapd (no --cluster: the daemon's socket): the same files, valid the same way
printf 'cluster = %s\nsocket_mode = 0666\n' "$T/cluster.conf" >"$T/rankmapd.conf"
if start_rankmapd "$T/rankmapd.conf" "$T/d.sock" "$T/d.log" --state-dir "$T/state"; then
	RANKMAP_SERVER=$T/d.sock "$R" map --pattern "$T/pairs.mtx" --hosts "$hosts_opt" --algo treematch \
		--rankfile "$T/rf.d" --slurm-hostfile "$T/hf.d" >/dev/null 2>"$T/mapd.err" &&
		ok "through rankmapd: map writes both files" || notok "through rankmapd: $(cat "$T/mapd.err")"
	awk '{ print NR - 1, $1 }' "$T/hf.d" >"$T/hfd.ranks"
	expect "through rankmapd: each heavy pair on one host" pairs_together "$T/hfd.ranks"
	sed -n 's/^rank \([0-9]*\)=\([^ ]*\) slot=\([0-9]*\)$/\2 \3/p' "$T/rf.d" | sort | uniq -d >"$T/dup"
	[ ! -s "$T/dup" ] && [ "$(grep -c '^rank ' "$T/rf.d")" = 8 ] &&
		awk '/^rank / { split($3, s, "="); if (s[2] + 0 >= n) bad = 1 } END { exit bad }' n="$ncores" "$T/rf.d" &&
		ok "through rankmapd: 8 ranks on distinct cores that exist" || notok "through rankmapd: rankfile $(cat "$T/rf.d")"
else
	notok "rankmapd did not start: $(tail -3 "$T/d.log")"
fi
finish
