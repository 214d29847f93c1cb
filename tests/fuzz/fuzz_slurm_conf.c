/* Fuzz target: slurm.conf's NodeName= lines and Include files (common/rm_slurmconf.c). */
#include "fuzz_util.h"
#include "hostlist.h"
#include "rm_slurmconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rm_error_t err = { 0 };
	size_t n = 0, i;
	char **names = rm_slurm_conf_nodes(fz_path(data, size), &n, &err);

	if (!names) {
		if (!err.text[0])
			abort(); /* promised: a failure says why */
		return 0;
	}
	for (i = 0; i < n; i++) /* promised: n names, non-empty, sorted, unique, then NULL */
		if (!names[i] || !names[i][0] || (i && strcmp(names[i - 1], names[i]) >= 0))
			abort();
	if (names[n])
		abort();
	hostlist_free(names);
	return 0;
}
