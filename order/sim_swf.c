/*
 * order/sim_swf.c: job sequences for the simulator: a seeded synthetic mix, or a Parallel Workloads
 * Archive trace in the Standard Workload Format (18 whitespace-separated numeric fields per line:
 * job, submit, wait, run time, allocated processors, average CPU time, used memory, requested
 * processors, requested time, requested memory, status, user, group, executable, queue, partition,
 * preceding job, think time; header and comment lines start with ';').
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "rm_file.h"

#define SWF_FIELDS 18

void sim_jobs_free(sim_jobs_t *jobs)
{
	if (!jobs)
		return;
	free(jobs->job);
	memset(jobs, 0, sizeof(*jobs));
}

/* splitmix64: small, seedable, good enough for a job mix. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s)
{
	return ((double)(rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

/* Log-uniform integer in [lo, hi]. */
static uint32_t log_uniform(uint64_t *s, double lo, double hi)
{
	double v = exp(log(lo) + rng_unit(s) * (log(hi + 1) - log(lo)));

	return (uint32_t)(v > hi ? hi : v);
}

int sim_jobs_synthetic(sim_jobs_t *jobs, size_t nnodes, size_t njobs, uint64_t seed, double load, rm_error_t *err)
{
	uint64_t s = seed ^ 0x5DEECE66DULL;
	double mean_work = 0, t = 0, rate;
	size_t i;

	memset(jobs, 0, sizeof(*jobs));
	if (nnodes < 2 || njobs == 0 || !(load > 0) || load > 1) {
		errno = EINVAL;
		return rm_error_set(err, "simulate", 0, 0,
				    "synthetic mix needs at least 2 nodes, 1 job and a load in (0, 1]");
	}
	jobs->job = calloc(njobs, sizeof(sim_job_t));
	if (!jobs->job)
		return rm_error_set(err, "simulate", 0, 0, "out of memory");
	for (i = 0; i < njobs; i++) {
		sim_job_t *j = &jobs->job[i];
		double u = rng_unit(&s), big = nnodes / 4.0 > 256 ? nnodes / 4.0 : 256;

		if (u < 0.5 || nnodes < 32)
			j->nodes = log_uniform(&s, 2, 16);
		else if (u < 0.85 || nnodes < 256)
			j->nodes = log_uniform(&s, 32, 128);
		else
			j->nodes = log_uniform(&s, 256, big > 2048 ? 2048 : big);
		if (j->nodes > nnodes)
			j->nodes = (uint32_t)nnodes;
		j->runtime = 60 + -log(rng_unit(&s)) * 3600;
		mean_work += (double)j->nodes * j->runtime / (double)njobs;
	}
	rate = load * (double)nnodes / mean_work;
	for (i = 0; i < njobs; i++) {
		t += -log(rng_unit(&s)) / rate;
		jobs->job[i].submit = t;
	}
	jobs->njobs = njobs;
	return 0;
}

static int cmp_submit(const void *a, const void *b)
{
	const sim_job_t *x = a, *y = b;

	return (x->submit > y->submit) - (x->submit < y->submit);
}

/* Parses the 18 fields of one SWF line into f; returns the number of fields or -1 on a bad number. */
static int swf_fields(char *line, double f[SWF_FIELDS], char **bad)
{
	char *tok, *save = NULL;
	int n = 0;

	for (tok = strtok_r(line, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
		char *end;

		if (n == SWF_FIELDS)
			return n + 1;
		f[n] = strtod(tok, &end);
		if (end == tok || *end || !isfinite(f[n])) {
			*bad = tok;
			return -1;
		}
		n++;
	}
	return n;
}

static int swf_push(sim_jobs_t *jobs, size_t *cap, const sim_job_t *j)
{
	if (jobs->njobs == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		sim_job_t *v = realloc(jobs->job, c * sizeof(*v));

		if (!v)
			return -1;
		jobs->job = v;
		*cap = c;
	}
	jobs->job[jobs->njobs++] = *j;
	return 0;
}

/* Turns one parsed line into a job; returns 1 when it is kept, 0 when skipped. */
static int swf_job(const double f[SWF_FIELDS], unsigned ppn, size_t max_nodes, sim_job_t *j)
{
	double procs = f[4] > 0 ? f[4] : f[7], nodes;

	if (procs <= 0 || f[3] <= 0 || f[1] < 0)
		return 0;
	nodes = ceil(procs / ppn);
	if (!(nodes >= 1 && nodes <= (double)max_nodes && nodes <= UINT32_MAX))
		return 0; /* checked before the conversion: a huge count must not wrap into range */
	j->submit = f[1];
	j->runtime = f[3];
	j->nodes = (uint32_t)nodes;
	return 1;
}

int sim_jobs_swf(sim_jobs_t *jobs, const char *path, unsigned procs_per_node, size_t max_nodes, rm_error_t *err)
{
	FILE *fp;
	char *line = NULL, *bad = NULL;
	size_t lcap = 0, cap = 0;
	ssize_t got;
	int lineno = 0, rc = 0;

	memset(jobs, 0, sizeof(*jobs));
	if (!(fp = rm_file_fopen(path, RM_FILE_SWF, NULL, err)))
		return -1;
	if (procs_per_node == 0)
		procs_per_node = 1;
	while (rc == 0 && (got = getline(&line, &lcap, fp)) >= 0) {
		double f[SWF_FIELDS];
		char *s = line;
		sim_job_t j;
		int n;

		lineno++;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == ';' || *s == '\n' || *s == '\r' || *s == '\0')
			continue;
		if ((size_t)got != strlen(line)) {
			rc = rm_error_set(err, path, lineno, 0, "binary data (NUL byte)");
			break;
		}
		n = swf_fields(s, f, &bad);
		if (n < 0)
			rc = rm_error_set(err, path, lineno, 0, "field '%.*s' is not a number", rm_utf8_prefix(bad, 40),
					  bad);
		else if (n != SWF_FIELDS)
			rc = rm_error_set(err, path, lineno, 0, "%s fields: SWF lines have 18",
					  n > SWF_FIELDS ? "more than 18"
					  : n < 5        ? "too few"
							 : "missing");
		else if (swf_job(f, procs_per_node, max_nodes, &j))
			rc = swf_push(jobs, &cap, &j) < 0 ? rm_error_set(err, path, lineno, 0, "out of memory") : 0;
		else
			jobs->skipped++;
	}
	if (rc == 0)
		rc = rm_file_stream_error(fp, path, RM_FILE_SWF, err);
	free(line);
	fclose(fp);
	if (rc == 0 && jobs->njobs == 0)
		rc = rm_error_set(err, path, 0, 0, "no usable job in the trace (%zu skipped)", jobs->skipped);
	if (rc < 0) {
		sim_jobs_free(jobs);
		errno = EINVAL;
		return -1;
	}
	qsort(jobs->job, jobs->njobs, sizeof(sim_job_t), cmp_submit);
	return 0;
}
