#!/bin/sh
# tests/integration/spank_exports.sh: spank_rankmap.so exports only what Slurm's SPANK loader looks up
# (slurm_spank_* and the plugin identification symbols), and needs from its host process only the
# SPANK/log API that srun, sbatch, salloc, slurmd and slurmstepd provide.
. "$(dirname "$0")/../lib.sh"

so=$BIN/spank_rankmap.so
[ -f "$so" ] || { notok "$so is not built"; finish; exit 1; }

defined=$(nm -D --defined-only "$so" | awk '{print $3}' | sort)
extra=$(echo "$defined" | grep -Ev '^(slurm_spank_[a-z_]+|plugin_name|plugin_type|plugin_version|spank_plugin_version)$')
expect "exports nothing beyond slurm_spank_* and the plugin symbols (extra: ${extra:-none})" test -z "$extra"
for s in slurm_spank_init slurm_spank_user_init slurm_spank_task_init plugin_name plugin_type plugin_version \
	spank_plugin_version; do
	expect "exports $s" sh -c "echo '$defined' | grep -qx $s"
done
expect "plugin_type is \"spank\"" sh -c "strings -a '$so' | grep -qx spank"

# Undefined symbols that no shared library it links provides must come from Slurm itself.
from_host=$(nm -D --undefined-only "$so" | awk '$2 !~ /@/ {print $2}' | grep -Ev '^(_ITM_|__gmon_start__|__cxa_finalize)' |
	while read -r s; do
		found=0
		for lib in $(ldd "$so" | awk '/=>/ {print $3}'); do
			nm -D --defined-only "$lib" 2>/dev/null | awk '{print $3}' | grep -qx "$s" && { found=1; break; }
		done
		[ $found = 0 ] && echo "$s"
	done | sort | tr '\n' ' ')
bad=$(echo "$from_host" | tr ' ' '\n' | grep -Ev '^$|^(spank_[a-z_]+|slurm_(error|info|verbose|debug[23]?))$')
expect "needs from Slurm only spank_* and slurm_ logging (${from_host})" test -z "$bad"
finish
