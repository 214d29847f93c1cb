/*
 * tests/mpi/cases.h: several cases of a test program in one MPI job ("-c CASES"), so that a test that
 * checks many settings does not start a job for each. The PMPI library reads its settings at each
 * topology call, so a case's settings can be set in the running job.
 *
 * CASES is a file of lines "env NAME=VALUE" (VALUE to the end of the line) and "run ARGS..." (the
 * program's usual arguments, separated by blanks). Each run line is one case, K = 1, 2, ... in file
 * order, run with the env lines since the previous case set in every rank (and unset after it). Every
 * rank writes its standard error of case K to CASES.K.err; the program prints case K's result line
 * prefixed with "case=K " (case_prefix).
 */
#ifndef RANKMAP_TESTS_CASES_H
#define RANKMAP_TESTS_CASES_H

#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CASES_MAXENV 16
#define CASES_MAXARGS 32

/* CHECK(COND, FORMAT, ...): a check; when COND is false, counts a failure in the program's own `errors`
 * (a static int it defines) and prints "FAIL: " and the message on standard error. */
#define CHECK(c, ...)                                          \
	do {                                                   \
		if (!(c)) {                                    \
			errors++;                              \
			fprintf(stderr, "FAIL: " __VA_ARGS__); \
		}                                              \
	} while (0)

/* One case: its n arguments args[], its number K (0 outside a case file). Returns the number of failed
 * checks of this rank, or -1 when the arguments are bad (every rank then returns -1 without any MPI
 * call). */
typedef int (*case_fn)(int n, char **args, int casenum);

/* Prints "case=K " before a result line (nothing for K = 0). */
static inline void case_prefix(int casenum)
{
	if (casenum > 0)
		printf("case=%d ", casenum);
}

/* Unsets the variables of env[0..n) ("NAME=VALUE" strings). */
static inline void cases_unset(char **env, int n)
{
	for (int i = 0; i < n; i++) {
		char name[256];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(env[i], "="), env[i]);
		unsetenv(name);
	}
}

/* Case K of the file cases: the settings env[0..nenv), the run line runline (split in place), standard
 * error to cases.K.err. Returns the case's failed checks (1 when it could not run). */
static inline int cases_one(const char *cases, int k, char **env, int nenv, char *runline, case_fn one)
{
	char *args[CASES_MAXARGS], path[4096];
	int n = 0, bad = 0;

	for (char *t = strtok(runline, " \t"); t && n < CASES_MAXARGS; t = strtok(NULL, " \t"))
		args[n++] = t;
	for (int i = 0; i < nenv; i++)
		bad |= putenv(env[i]) != 0;
	snprintf(path, sizeof(path), "%s.%d.err", cases, k);
	fflush(stderr);
	int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);

	if (saved < 0 || fd < 0 || dup2(fd, 2) < 0 || bad) {
		fprintf(stderr, "%s: case %d: cannot set its environment or open %s\n", cases, k, path);
		return 1;
	}
	close(fd);
	int e = one(n, args, k);

	if (e < 0)
		fprintf(stderr, "%s: case %d: bad arguments\n", cases, k);
	else
		MPI_Barrier(MPI_COMM_WORLD);
	fflush(stdout);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	cases_unset(env, nenv);
	return e < 0 ? 1 : e;
}

/* Runs every case of the file cases with one(). Returns the total of failed checks of this rank. */
static inline int cases_run(const char *cases, case_fn one)
{
	FILE *f = fopen(cases, "r");
	char line[4096], *env[CASES_MAXENV];
	int nenv = 0, k = 0, e = 0;

	if (!f) {
		fprintf(stderr, "cannot open %s\n", cases);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, "env ", 4) == 0 && strchr(line + 4, '=') && nenv < CASES_MAXENV)
			env[nenv++] = strdup(line + 4); /* putenv keeps it: never freed (a short test program) */
		else if (strncmp(line, "run ", 4) == 0 || strcmp(line, "run") == 0)
			e += cases_one(cases, ++k, env, nenv, line + 3, one), nenv = 0;
	}
	fclose(f);
	return e;
}

/* main's dispatch: "-c CASES" runs the file's cases, anything else is one case of argv[1..]. Returns the
 * failed checks of this rank, or -1 for bad arguments. */
static inline int cases_main(int argc, char **argv, case_fn one)
{
	if (argc == 3 && strcmp(argv[1], "-c") == 0)
		return cases_run(argv[2], one);
	return one(argc - 1, argv + 1, 0);
}

/* The whole of main: MPI_Init, cases_main, MPI_Finalize. Exit status 0 when every check passed, 1 when
 * some failed, 2 for bad arguments. */
static inline int cases_program(int argc, char **argv, case_fn one)
{
	MPI_Init(&argc, &argv);
	int e = cases_main(argc, argv, one);

	MPI_Finalize();
	return e < 0 ? 2 : e ? 1 : 0;
}

#endif
