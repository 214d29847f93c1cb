/*
 * tests/unit/test_spank_opts.c: plugstack.conf arguments, --rankmap* options, LD_PRELOAD prepending,
 * the task environment, CPU lists and the binding of the calling process (plugin/spank).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rm_client.h"
#include "spank_bind.h"
#include "spank_opts.h"
#include "tests/harness.h"

/* 1 when vars (n of them) export name with value. */
static int env_has(const rm_spank_envvar_t *vars, size_t n, const char *name, const char *value)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(vars[i].name, name))
			return !strcmp(vars[i].value, value);
	return 0;
}

static void test_conf(void)
{
	rm_spank_conf_t c;
	rm_error_t err = { 0 };
	char *good[] = { "socket=/tmp/s.sock", "libdir=/opt/rm/lib", "default=on",
			 "bind=yes",           "register=off",       "timeout=500" };
	char *bad[][1] = { { "socket=relative" }, { "default=maybe" }, { "colour=blue" },
			   { "timeout=0" },       { "noequals" },      { "timeout=12x" } };

	check(rm_spank_conf_parse(0, NULL, &c, &err) == 0, "empty arguments");
	check(!strcmp(c.socket, RM_SOCKET_DEFAULT) && !strcmp(c.libdir, RANKMAP_LIBDIR), "default paths");
	check(c.default_on == 0 && c.bind_default == 0 && c.register_on == 1 &&
		      c.timeout_ms == RM_SPANK_TIMEOUT_DEFAULT,
	      "default switches");
	check(rm_spank_conf_parse(6, good, &c, &err) == 0, "good arguments (%s)", err.text);
	check(!strcmp(c.socket, "/tmp/s.sock") && !strcmp(c.libdir, "/opt/rm/lib") && c.default_on && c.bind_default &&
		      !c.register_on && c.timeout_ms == 500,
	      "good arguments applied");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rm_error_t e = { 0 };
		check(rm_spank_conf_parse(1, bad[i], &c, &e) == -1 && errno == EINVAL, "'%s' refused", bad[i][0]);
		check(strstr(e.text, bad[i][0]) || strstr(e.text, "colour"), "'%s': message names it (%s)", bad[i][0],
		      e.text);
	}
}

static void test_job(void)
{
	rm_spank_job_t j = { 0 };
	rm_spank_conf_t c;
	rm_error_t err = { 0 };

	rm_spank_conf_parse(0, NULL, &c, NULL);
	check(!rm_spank_job_active(&j, &c), "nothing given, default off: inactive");
	c.default_on = 1;
	check(rm_spank_job_active(&j, &c), "default=on: active");
	check(rm_spank_job_set(&j, RM_SPANK_OPT_RANKMAP, "off", 1, &err) == 0 && !rm_spank_job_active(&j, &c),
	      "--rankmap=off");
	c.default_on = 0;
	memset(&j, 0, sizeof(j));
	check(rm_spank_job_set(&j, RM_SPANK_OPT_RANKMAP, NULL, 1, &err) == 0 && j.mode == RM_SPANK_MODE_ON &&
		      !strcmp(j.algo, "auto"),
	      "--rankmap alone is auto");
	check(rm_spank_job_set(&j, RM_SPANK_OPT_RANKMAP, "scotch", 1, &err) == 0 && !strcmp(j.algo, "scotch"),
	      "scotch");
	check(rm_spank_job_set(&j, RM_SPANK_OPT_RANKMAP, "required", 1, &err) == 0 &&
		      j.mode == RM_SPANK_MODE_REQUIRED && !strcmp(j.algo, "scotch"),
	      "required keeps the algorithm");
	check(rm_spank_job_set(&j, RM_SPANK_OPT_RANKMAP, "fast", 1, &err) == -1 && strstr(err.text, "fast"),
	      "bad mode");
	memset(&j, 0, sizeof(j));
	check(rm_spank_job_set(&j, RM_SPANK_OPT_BIND, NULL, 1, NULL) == 0 && rm_spank_job_active(&j, &c) &&
		      rm_spank_job_binds(&j, &c) == RM_SPANK_BIND_CORES,
	      "--rankmap-bind implies --rankmap, binds to cores");
	memset(&j, 0, sizeof(j));
	check(rm_spank_job_set(&j, RM_SPANK_OPT_BIND, "cores", 1, NULL) == 0 &&
		      rm_spank_job_binds(&j, &c) == RM_SPANK_BIND_CORES,
	      "--rankmap-bind=cores");
	check(rm_spank_job_set(&j, RM_SPANK_OPT_BIND, "gpu", 1, NULL) == 0 && rm_spank_job_active(&j, &c) &&
		      rm_spank_job_binds(&j, &c) == RM_SPANK_BIND_GPU,
	      "--rankmap-bind=gpu");
	rm_error_clear(&err);
	check(rm_spank_job_set(&j, RM_SPANK_OPT_BIND, "gpus", 1, &err) == -1 && errno == EINVAL &&
		      !strcmp(err.source, "--rankmap-bind") && strstr(err.text, "'gpus'") &&
		      strstr(err.text, "cores or gpu"),
	      "a bad --rankmap-bind value names the option and the values (%s)", err.text);
	memset(&j, 0, sizeof(j));
	check(rm_spank_job_set(&j, RM_SPANK_OPT_METRIC, "loggp", 1, NULL) == 0 && rm_spank_job_active(&j, &c),
	      "metric loggp");
	check(!rm_spank_job_binds(&j, &c), "no binding unless asked");
	c.bind_default = 1;
	check(rm_spank_job_binds(&j, &c) == RM_SPANK_BIND_CORES, "bind=on binds active jobs to cores");
	rm_error_clear(&err);
	check(rm_spank_job_set(&j, RM_SPANK_OPT_METRIC, "bandwidth", 1, &err) == -1 && strstr(err.text, "bandwidth"),
	      "bad metric");
	check(rm_spank_job_set(&j, RM_SPANK_OPT_METRIC, "default", 1, NULL) == -1, "'default' is not a user metric");
	check(rm_spank_job_set(&j, RM_SPANK_OPT_PATTERN, "", 1, NULL) == -1, "empty pattern");
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_files(void)
{
	char dir[] = "/tmp/rankmap-spank-opts.XXXXXX", good[256], bad[256], trace[256];
	rm_spank_job_t j = { 0 };
	rm_error_t err = { 0 };

	if (!mkdtemp(dir)) {
		fail("mkdtemp");
		return;
	}
	snprintf(good, sizeof(good), "%s/good.mtx", dir);
	snprintf(bad, sizeof(bad), "%s/bad.mtx", dir);
	write_text(good, "%%MatrixMarket matrix coordinate real general\n4 4 3\n1 2 10\n2 3 5\n3 4 1\n");
	write_text(bad, "%%MatrixMarket matrix coordinate real general\n4 4 2\n1 2 10\nx y z\n");
	check(rm_spank_job_set(&j, RM_SPANK_OPT_PATTERN, good, 1, &err) == 0, "good pattern accepted (%s)", err.text);
	check(rm_spank_job_set(&j, RM_SPANK_OPT_PATTERN, bad, 1, &err) == -1, "bad pattern refused");
	check(strstr(err.source, "bad.mtx") && err.line == 4, "error names file and line 4 (%s:%d)", err.source,
	      err.line);
	check(rm_spank_job_set(&j, RM_SPANK_OPT_PATTERN, bad, 0, NULL) == 0, "remote side does not re-read the file");
	rm_error_clear(&err);
	check(rm_spank_job_set(&j, RM_SPANK_OPT_PATTERN, "/nonexistent/p.mtx", 1, &err) == -1 &&
		      strstr(err.source, "p.mtx"),
	      "missing pattern refused (%s)", err.source);
	snprintf(trace, sizeof(trace), "%s/trace.mtx", dir);
	check(rm_spank_job_set(&j, RM_SPANK_OPT_TRACE, trace, 1, NULL) == 0, "trace in a writable directory");
	rm_error_clear(&err);
	check(rm_spank_job_set(&j, RM_SPANK_OPT_TRACE, "/nonexistent/dir/t.mtx", 1, &err) == -1 &&
		      strstr(err.text, "/nonexistent/dir"),
	      "trace directory must exist (%s)", err.text);
	unlink(good);
	unlink(bad);
	rmdir(dir);
}

/* Every message about the matrix names the option as the user typed it: --rankmap-matrix, or its old
 * name --rankmap-pattern (issue 28). */
static void test_option_names(void)
{
	static const struct {
		int opt;
		const char *name, *other;
	} names[] = { { RM_SPANK_OPT_PATTERN, "--rankmap-matrix", "--rankmap-pattern" },
		      { RM_SPANK_OPT_PATTERN_OLD, "--rankmap-pattern", "--rankmap-matrix" } };
	char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN], out[PATH_MAX], long_path[PATH_MAX + 10];
	rm_spank_conf_t c;
	rm_spank_envvar_t v[2][RM_SPANK_ENV_MAX];
	rm_spank_job_t js[2] = { { 0 } }; /* the values of v are borrowed from them */
	size_t nv[2];

	rm_spank_conf_parse(0, NULL, &c, NULL);
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[sizeof(long_path) - 1] = '\0';
	check(!strcmp(rm_spank_opt_name(RM_SPANK_OPT_METRIC), "--rankmap-metric") &&
		      !strcmp(rm_spank_opt_name(RM_SPANK_OPT_LEARN), "--rankmap-learn") &&
		      !strcmp(rm_spank_opt_name(RM_SPANK_OPT_RANKMAP), "--rankmap"),
	      "option names");
	check(!strcmp(rm_spank_pattern_opt(NULL), "--rankmap-matrix"), "no job: the current name");
	for (int i = 0; i < 2; i++) {
		rm_spank_job_t *jp = &js[i];
		rm_error_t err = { 0 };
		const char *n = names[i].name, *o = names[i].other;

		check(!strcmp(rm_spank_opt_name(names[i].opt), n), "%s: its name", n);
		check(rm_spank_job_set(jp, names[i].opt, "", 1, &err) == -1 && !strcmp(err.source, n) &&
			      !strstr(rm_error_format(&err, buf, sizeof(buf)), o),
		      "%s with no value: the message names %s, not %s (%s)", n, n, o, buf);
		rm_error_clear(&err);
		check(rm_spank_job_set(jp, names[i].opt, long_path, 1, &err) == -1 && errno == ENAMETOOLONG &&
			      !strcmp(err.source, n) && !strstr(rm_error_format(&err, buf, sizeof(buf)), o),
		      "%s too long: the message names %s (%s)", n, n, buf);
		rm_error_clear(&err);
		check(rm_spank_job_set(jp, names[i].opt, "p.mtx", 0, NULL) == 0 && !strcmp(jp->pattern, "p.mtx") &&
			      !strcmp(rm_spank_pattern_opt(jp), n),
		      "%s p.mtx: recorded, and the job remembers the name %s", n, n);
		check(spank_path_resolve(NULL, jp->pattern, out, sizeof(out), rm_spank_pattern_opt(jp), &err) == -1 &&
			      !strcmp(err.source, n) && !strstr(rm_error_format(&err, buf, sizeof(buf)), o),
		      "%s: slurmstepd's resolution error names %s (%s)", n, n, buf);
		nv[i] = rm_spank_job_env(jp, &c, v[i]);
	}
	int same = nv[0] == nv[1];

	for (size_t k = 0; same && k < nv[0]; k++)
		same = !strcmp(v[0][k].name, v[1][k].name) && !strcmp(v[0][k].value, v[1][k].value);
	check(same && nv[0] > 0, "both names give the tasks the same environment (%zu variables)", nv[0]);
	rm_spank_job_t j = { 0 };

	rm_spank_job_set(&j, RM_SPANK_OPT_PATTERN_OLD, "a.mtx", 0, NULL);
	rm_spank_job_set(&j, RM_SPANK_OPT_PATTERN, "b.mtx", 0, NULL);
	check(!strcmp(j.pattern, "b.mtx") && !strcmp(rm_spank_pattern_opt(&j), "--rankmap-matrix"),
	      "both given: the last one, by its name");
}

static void test_preload(void)
{
	struct {
		const char *old, *want;
	} cases[] = {
		{ NULL, "/l/librm.so" },
		{ "", "/l/librm.so" },
		{ " : ", "/l/librm.so" },
		{ "/u/mine.so", "/l/librm.so:/u/mine.so" },
		{ "/u/a.so /u/b.so", "/l/librm.so:/u/a.so /u/b.so" },
		{ "/u/a.so:/l/librm.so", "/u/a.so:/l/librm.so" },     /* already there: unchanged */
		{ "/l/librm.so.bak", "/l/librm.so:/l/librm.so.bak" }, /* a prefix is not the same entry */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *v = rm_spank_preload_prepend("/l/librm.so", cases[i].old);
		check(v && !strcmp(v, cases[i].want), "prepend to '%s': got '%s', want '%s'",
		      cases[i].old ? cases[i].old : "(unset)", v ? v : "(null)", cases[i].want);
		free(v);
	}
}

static void test_env(void)
{
	rm_spank_conf_t c;
	rm_spank_job_t j = { 0 };
	rm_spank_envvar_t v[RM_SPANK_ENV_MAX];
	char lib[PATH_MAX];
	size_t n;
	char *args[] = { "libdir=/opt/rm", "socket=/run/x.sock" };

	rm_spank_conf_parse(2, args, &c, NULL);
	check(rm_spank_mpi_library(&c, RM_SPANK_MPI_OPENMPI, lib, sizeof(lib)) == 0 &&
		      !strcmp(lib, "/opt/rm/librankmap_mpi_openmpi.so"),
	      "Open MPI library path (%s)", lib);
	check(rm_spank_mpi_library(&c, RM_SPANK_MPI_MPICH, lib, sizeof(lib)) == 0 &&
		      !strcmp(lib, "/opt/rm/librankmap_mpi_mpich.so"),
	      "MPICH library path (%s)", lib);
	check(rm_spank_mpi_library(&c, RM_SPANK_MPI_NONE, lib, sizeof(lib)) == -1, "no library without MPI");
	check(rm_spank_mpi_library(&c, RM_SPANK_MPI_MPICH, lib, 10) == -1 && errno == ENAMETOOLONG, "short buffer");
	rm_spank_job_set(&j, RM_SPANK_OPT_RANKMAP, "treematch", 0, NULL);
	rm_spank_job_set(&j, RM_SPANK_OPT_PATTERN, "p.mtx", 0, NULL);
	rm_spank_job_set(&j, RM_SPANK_OPT_METRIC, "bytes", 0, NULL);
	n = rm_spank_job_env(&j, &c, v);
	check(n == 7, "7 variables (%zu)", n);
	check(n >= 4 && !strcmp(v[0].name, "RANKMAP_SOCKET") && !strcmp(v[0].value, "/run/x.sock"), "socket");
	check(n >= 4 && !strcmp(v[1].name, "RANKMAP_ALGO") && !strcmp(v[1].value, "treematch"), "algo");
	check(n >= 4 && !strcmp(v[2].name, "RANKMAP_PATTERN") && !strcmp(v[2].value, "p.mtx"), "pattern");
	check(n >= 4 && !strcmp(v[3].name, "RANKMAP_METRIC") && !strcmp(v[3].value, "bytes"), "metric");
	check(n >= 5 && !strcmp(v[4].name, "RANKMAP_TIMEOUT_MS") && !strcmp(v[4].value, "2000"), "timeout");
	check(n >= 7 && !strcmp(v[5].name, "RANKMAP_ENGINE") && !strcmp(v[5].value, "treematch") &&
		      !strcmp(v[6].name, "RANKMAP_MATRIX") && !strcmp(v[6].value, "p.mtx"),
	      "the current names too: RANKMAP_ENGINE, RANKMAP_MATRIX");
}

/* server=LIST and munge_socket=PATH: checked at parse, exported as RANKMAP_SERVER and
 * RANKMAP_MUNGE_SOCKET; after a failover the answering entry goes first. */
static void test_server(void)
{
	rm_spank_conf_t c;
	rm_spank_job_t j = { 0 };
	rm_spank_envvar_t v[RM_SPANK_ENV_MAX];
	rm_error_t e = { 0 };
	char *args[] = { "server=svc1:7117, svc2:7117,/run/x.sock", "munge_socket=/run/m.sock", "timeout=1500" };
	char *bad[][1] = {
		{ "server=svc1:99999" }, { "server=:" }, { "server=" }, { "server=a:1,,b:2" }, { "munge_socket=rel" }
	};
	char list[PATH_MAX] = "a:1,b:2,c:3";
	size_t n, i;

	check(rm_spank_conf_parse(3, args, &c, &e) == 0 && c.server_set && c.timeout_ms == 1500, "server= (%s)",
	      e.text);
	n = rm_spank_job_env(&j, &c, v);
	check(n >= 1 && !strcmp(v[0].name, "RANKMAP_SERVER") && !strcmp(v[0].value, "svc1:7117, svc2:7117,/run/x.sock"),
	      "RANKMAP_SERVER exported");
	check(env_has(v, n, "RANKMAP_MUNGE_SOCKET", "/run/m.sock"), "RANKMAP_MUNGE_SOCKET exported");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&e, 0, sizeof(e));
		check(rm_spank_conf_parse(1, bad[i], &c, &e) == -1 && strstr(e.text, bad[i][0]), "'%s' refused (%s)",
		      bad[i][0], e.text);
	}
	{ /* server_uid=UID|USER: checked at parse, exported as RANKMAP_SERVER_UID */
		char *u[] = { "server=svc1:7117", "server_uid=nobody" }, *ubad[] = { "server_uid=no-such-user-x" };
		memset(&e, 0, sizeof(e));
		check(rm_spank_conf_parse(2, u, &c, &e) == 0 && !strcmp(c.server_uid, "nobody"), "server_uid= (%s)",
		      e.text);
		n = rm_spank_job_env(&j, &c, v);
		check(env_has(v, n, "RANKMAP_SERVER_UID", "nobody"), "RANKMAP_SERVER_UID exported");
		check(rm_spank_conf_parse(1, ubad, &c, &e) == -1 && strstr(e.text, "no-such-user-x"),
		      "an unknown server_uid is refused (%s)", e.text);
		memset(&e, 0, sizeof(e));
	}
	rm_spank_servers_first(list, 2);
	check(!strcmp(list, "c:3,a:1,b:2"), "entry 2 first (%s)", list);
	rm_spank_servers_first(list, 0);
	check(!strcmp(list, "c:3,a:1,b:2"), "entry 0: unchanged");
}

/* RANKMAP_LEARN in the task environment: --rankmap-learn[=on|off] and plugstack learn=on. */
static int env_has_learn(const rm_spank_job_t *j, const rm_spank_conf_t *c)
{
	rm_spank_envvar_t v[RM_SPANK_ENV_MAX];
	size_t n = rm_spank_job_active(j, c) ? rm_spank_job_env(j, c, v) : 0;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, "RANKMAP_LEARN") && !strcmp(v[i].value, "1"))
			return 1;
	return 0;
}

static void test_learn(void)
{
	rm_spank_conf_t c;
	char *on[] = { "learn=on" }, *bad[] = { "learn=sometimes" };
	rm_error_t err = { 0 };

	rm_spank_conf_parse(0, NULL, &c, NULL);
	rm_spank_job_t j = { .mode = RM_SPANK_MODE_UNSET }, k = j, off = j, none = j;

	check(!env_has_learn(&none, &c), "no option, no learn=: no RANKMAP_LEARN");
	check(rm_spank_job_set(&j, RM_SPANK_OPT_LEARN, NULL, 0, NULL) == 0 && rm_spank_job_active(&j, &c) &&
		      env_has_learn(&j, &c),
	      "--rankmap-learn implies --rankmap and exports RANKMAP_LEARN=1");
	check(rm_spank_job_set(&k, RM_SPANK_OPT_LEARN, "on", 0, NULL) == 0 && env_has_learn(&k, &c),
	      "--rankmap-learn=on");
	check(rm_spank_job_set(&off, RM_SPANK_OPT_LEARN, "off", 0, NULL) == 0 && !env_has_learn(&off, &c),
	      "--rankmap-learn=off");
	check(rm_spank_job_set(&k, RM_SPANK_OPT_LEARN, "maybe", 0, &err) == -1 && strstr(err.text, "maybe"),
	      "--rankmap-learn=maybe refused, naming the value");
	check(rm_spank_conf_parse(1, on, &c, NULL) == 0 && c.learn_default, "plugstack learn=on");
	check(env_has_learn(&none, &c), "learn=on: a step without options learns");
	check(!env_has_learn(&off, &c), "learn=on: --rankmap-learn=off turns it off");
	rm_spank_job_t disabled = { .mode = RM_SPANK_MODE_UNSET };

	rm_spank_job_set(&disabled, RM_SPANK_OPT_RANKMAP, "off", 0, NULL);
	check(!env_has_learn(&disabled, &c), "learn=on: --rankmap=off turns everything off");
	check(rm_spank_conf_parse(1, bad, &c, NULL) == -1, "learn=sometimes refused");
}

static void test_lists(void)
{
	size_t n = 0;
	uint32_t *ids = rm_spank_list_parse("8,0-3,10-11,2", 1000, &n, NULL);
	uint32_t want[] = { 0, 1, 2, 3, 8, 10, 11 };
	char buf[64];
	const char *bad[] = { "", "a", "3-1", "1,,2", "1-", "5-2000", "1;2", NULL };

	check(ids && n == 7 && !memcmp(ids, want, sizeof(want)), "parse sorts and merges");
	check(ids && rm_spank_list_format(ids, n, buf, sizeof(buf)) == 0 && !strcmp(buf, "0-3,8,10-11"), "format (%s)",
	      buf);
	check(ids && rm_spank_list_format(ids, n, buf, 5) == -1 && errno == ENOSPC, "format into a short buffer");
	free(ids);
	for (int i = 0; bad[i]; i++) {
		rm_error_t err = { 0 };
		ids = rm_spank_list_parse(bad[i], 1000, &n, &err);
		check(!ids && errno == EINVAL && err.text[0], "'%s' refused", bad[i]);
		free(ids);
	}
}

/* Binds this process to each single CPU it may use, in turn, and reads the kernel's view back. */
static void test_apply(void)
{
	cpu_set_t orig, now;
	char cpus[64], plan[256] = "";
	int ncpu = 0, cpu[4];

	sched_getaffinity(0, sizeof(orig), &orig);
	for (int c = 0; c < CPU_SETSIZE && ncpu < 4; c++)
		if (CPU_ISSET(c, &orig))
			cpu[ncpu++] = c;
	for (int i = 0; i < ncpu; i++)
		snprintf(plan + strlen(plan), sizeof(plan) - strlen(plan), "%s%d", i ? ";" : "", cpu[i]);
	for (int i = 0; i < ncpu; i++) {
		check(rm_spank_bind_apply(plan, (uint32_t)i, cpus, sizeof(cpus), NULL) == 0, "apply entry %d of %s", i,
		      plan);
		sched_getaffinity(0, sizeof(now), &now);
		check(CPU_COUNT(&now) == 1 && CPU_ISSET(cpu[i], &now), "bound to CPU %d only", cpu[i]);
		check(atoi(cpus) == cpu[i], "reported CPU list %s", cpus);
	}
	check(rm_spank_bind_apply(plan, (uint32_t)ncpu, cpus, sizeof(cpus), NULL) == -1 && errno == EINVAL,
	      "no entry past the end");
	check(rm_spank_bind_apply("4000", 0, cpus, sizeof(cpus), NULL) == -1, "a CPU that does not exist");
	sched_setaffinity(0, sizeof(orig), &orig);
}

/* slurmd's registration: sent again only after a daemon's `timeout`, a bounded number of times, with a
 * growing backoff, and only while the server's share leaves time for the send */
static void test_register_retry(void)
{
	int w1 = rm_spank_register_retry_ms("timeout", 1, 60000), w2 = rm_spank_register_retry_ms("timeout", 2, 60000);

	check(w1 > 0 && w2 > w1, "timeout: sent again, the second wait longer (%d ms, then %d ms)", w1, w2);
	check(rm_spank_register_retry_ms("timeout", RM_SPANK_REGISTER_TRIES, 60000) < 0,
	      "timeout: at most %d sends in all", RM_SPANK_REGISTER_TRIES);
	check(rm_spank_register_retry_ms("timeout", 1, w1 + RM_SPANK_REGISTER_MIN_TRY_MS) == w1 &&
		      rm_spank_register_retry_ms("timeout", 1, w1 + RM_SPANK_REGISTER_MIN_TRY_MS - 1) < 0,
	      "timeout: sent again only when the wait leaves %d ms of the share", RM_SPANK_REGISTER_MIN_TRY_MS);
	check(rm_spank_register_retry_ms("timeout", 1, 0) < 0 && rm_spank_register_retry_ms("timeout", 1, -5) < 0,
	      "timeout: not sent again past the share");
	check(rm_spank_register_retry_ms("socket", 1, 60000) < 0 &&
		      rm_spank_register_retry_ms("bad_request", 1, 60000) < 0 &&
		      rm_spank_register_retry_ms("failed", 1, 60000) < 0 &&
		      rm_spank_register_retry_ms(NULL, 1, 60000) < 0,
	      "other failures (the client's own timeout, a refusal) are not sent again");
}

int main(void)
{
	test_conf();
	test_job();
	test_files();
	test_option_names();
	test_preload();
	test_env();
	test_server();
	test_learn();
	test_lists();
	test_apply();
	test_register_retry();
	return harness_done();
}
