/*
 * tests/mpi/fakeplace.h: the test programs' own, independent reading of the test-only placement
 * (RANKMAP_FAKE_HOSTS / RANKMAP_FAKE_PLACEMENT): which virtual host a MPI_COMM_WORLD rank sits on.
 * Used to count how much traffic crosses hosts before and after reordering, without asking the
 * library under test.
 */
#ifndef RANKMAP_TESTS_FAKEPLACE_H
#define RANKMAP_TESTS_FAKEPLACE_H

#include <stdlib.h>
#include <string.h>

/* Virtual host of world rank w among size ranks; 0 when no fake placement is set. */
static inline int fake_host_of(int w, int size)
{
	const char *h = getenv("RANKMAP_FAKE_HOSTS"), *p = getenv("RANKMAP_FAKE_PLACEMENT");
	int n = h ? atoi(h) : 1;

	if (n < 1)
		n = 1;
	if (p && strcmp(p, "cyclic") == 0)
		return w % n;
	return w / ((size + n - 1) / n);
}

#endif
