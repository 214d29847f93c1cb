/* Fuzz target: Standard Workload Format traces (order/sim_swf.c: sim_jobs_swf). */
#include "fuzz_util.h"
#include "order.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sim_jobs_t jobs;
	rm_error_t err = { 0 };

	if (sim_jobs_swf(&jobs, fz_path(data, size), 16, 1024, &err) == 0) {
		for (size_t i = 0; i < jobs.njobs; i++)
			if (jobs.job[i].nodes == 0 || jobs.job[i].nodes > 1024 || !(jobs.job[i].runtime > 0))
				abort(); /* promised: sizes fit the machine, run times > 0 */
		sim_jobs_free(&jobs);
	}
	return 0;
}
