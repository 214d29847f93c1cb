/*
 * plugin/mpi/pmpi_entry.h: the exported entry of a wrapper that takes MPI handles by value.
 *
 * Under another MPI's program (pmpi_check.c: rmp_foreign) the arguments must reach the program's
 * PMPI_ function exactly as they came: an Open MPI handle is a 64-bit pointer, the MPI_Comm of the MPICH
 * library a 32-bit int, and C code that keeps such an argument in a variable of the library's type may
 * cut it (at -O2 a wrapper that is only a test and a tail jump leaves it whole; at -O1 or with
 * AddressSanitizer it does not). So on x86-64 the exported MPI_<fn> is a three-instruction stub in
 * assembly: when rmp_foreign it jumps through the GOT to PMPI_<fn>, registers and stack untouched;
 * otherwise it jumps to the C wrapper rmp_w_<fn> (hidden). Elsewhere MPI_<fn> is that test in C, and
 * under SMPI (never foreign) a plain call.
 *
 * Usage: RMP_ENTRY(fn, (params), (args)) then define int rmp_w_<fn>(params) { ... }.
 */
#ifndef RANKMAP_PMPI_ENTRY_H
#define RANKMAP_PMPI_ENTRY_H

#include "pmpi.h"

#if defined(__x86_64__) && defined(__ELF__) && !defined(RANKMAP_SMPI)
/* endbr64: the entry is reached by indirect jumps from the program's PLT (a no-op without CET) */
#define RMP_ENTRY(fn, params, args)                                        \
	__attribute__((visibility("hidden"), used)) int rmp_w_##fn params; \
	__asm__(".text\n"                                                  \
		".globl MPI_" #fn                                          \
		"\n"                                                       \
		".type MPI_" #fn                                           \
		", @function\n"                                            \
		".p2align 4\n"                                             \
		"MPI_" #fn                                                 \
		":\n"                                                      \
		"\tendbr64\n"                                              \
		"\tcmpl $0, rmp_foreign(%rip)\n"                           \
		"\tjne 1f\n"                                               \
		"\tjmp rmp_w_" #fn                                         \
		"\n"                                                       \
		"1:\tjmp *PMPI_" #fn                                       \
		"@GOTPCREL(%rip)\n"                                        \
		".size MPI_" #fn ", . - MPI_" #fn "\n");
#elif !defined(RANKMAP_SMPI)
#define RMP_ENTRY(fn, params, args)                                  \
	__attribute__((visibility("hidden"))) int rmp_w_##fn params; \
	int MPI_##fn params                                          \
	{                                                            \
		if (rmp_foreign)                                     \
			return PMPI_##fn args;                       \
		return rmp_w_##fn args;                              \
	}
#else
#define RMP_ENTRY(fn, params, args)                                  \
	__attribute__((visibility("hidden"))) int rmp_w_##fn params; \
	int MPI_##fn params                                          \
	{                                                            \
		return rmp_w_##fn args;                              \
	}
#endif

#endif
