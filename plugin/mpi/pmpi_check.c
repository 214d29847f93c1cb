/*
 * plugin/mpi/pmpi_check.c: does the program run the MPI this library was built for?
 *
 * librankmap_mpi_openmpi.so preloaded into an MPICH program (or the MPICH one into an Open MPI program)
 * loads the other implementation's libmpi as its own dependency, and its PMPI_ calls then reach the
 * program's MPI with handles of the wrong kind (Open MPI's are pointers, MPICH's are integers): MPICH
 * ends the job with "Invalid MPI_Op", Open MPI with a SIGSEGV. So the library looks, at load time and
 * without any MPI call, where PMPI_Init resolves (dlsym(RTLD_DEFAULT): the definition the library's own
 * calls bind to, since the library defines no PMPI_ symbol) and asks that object (and what it depends
 * on, dlsym on its handle) for a function only the implementation of the library's mpi.h exports:
 * ompi_mpi_init (Open MPI) or MPIR_Err_return_comm (MPICH and its derivatives). Functions, not data:
 * an executable may hold a copy-relocated ompi_mpi_comm_world, so a variable's address names the wrong
 * object. Symbols alone would not do either: both implementations are loaded in the wrong pairing.
 *
 * On a mismatch every wrapper passes straight through to PMPI_ (the entries that take handles by value
 * are pmpi_entry.h's stubs, which jump there before touching an argument: with the MPICH library, an
 * Open MPI handle is wider than the MPI_Comm the library was compiled with; the others take pointers and
 * ints, and do nothing else while the tracer and learning are off), the tracer and learning never
 * start, and the process whose launcher rank is 0 prints one warning at MPI_Init (every process when no
 * launcher variable says).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi.h"

#if defined(OPEN_MPI)
#define BUILT_FOR "Open MPI"
#define MARKER "ompi_mpi_init"
#elif defined(MPICH)
#define BUILT_FOR "MPICH"
#define MARKER "MPIR_Err_return_comm"
#endif

int rmp_foreign;
static char foreign_why[RM_ERROR_TEXT_LEN];

#if defined(MARKER) && !defined(RANKMAP_SMPI)
/* Whether the object defining PMPI_Init (or what it depends on) defines MARKER; where: that object. */
static int same_mpi(const char **where)
{
	void *init = dlsym(RTLD_DEFAULT, "PMPI_Init"), *h, *m;
	Dl_info di, dm;

	*where = "?";
	if (!init || !dladdr(init, &di))
		return 0;
	if (di.dli_fname && di.dli_fname[0])
		*where = di.dli_fname;
	h = di.dli_fname && di.dli_fname[0] ? dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD) : NULL;
	if (h) {
		int ok = dlsym(h, MARKER) != NULL;

		dlclose(h);
		return ok;
	}
	/* PMPI_Init in the executable (an MPI linked in statically): the marker must be there too */
	m = dlsym(RTLD_DEFAULT, MARKER);
	return m && dladdr(m, &dm) && dm.dli_fbase == di.dli_fbase;
}

/* At load time, before main: the decision only (the warning waits for MPI_Init). */
__attribute__((constructor)) static void check_mpi(void)
{
	const char *where, *self = "librankmap_mpi";
	Dl_info me;

	if (same_mpi(&where))
		return;
	if (dladdr((void *)check_mpi, &me) && me.dli_fname && me.dli_fname[0])
		self = strrchr(me.dli_fname, '/') ? strrchr(me.dli_fname, '/') + 1 : me.dli_fname;
	snprintf(foreign_why, sizeof(foreign_why),
		 "%s is built for " BUILT_FOR
		 ", but this program runs another MPI (PMPI_Init is in %s); "
		 "rankmap stays out of the way (no tracing, no learning)",
		 self, where);
	rmp_foreign = 1;
}
#endif

/* Whether this process warns: the launcher's rank 0, or every process when no launcher says. */
static int launcher_rank0(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v && *v)
			return strcmp(v, "0") == 0;
	}
	return 1;
}

void rmp_foreign_warn(void)
{
	static int warned;
	rmp_call_t call;

	if (!rmp_foreign || warned++ || !launcher_rank0())
		return;
	memset(&call, 0, sizeof(call));
	call.fn = "MPI_Init";
	rm_error_set(&call.err, "", 0, 0, "%s", foreign_why);
	rmp_warn(&call);
}
