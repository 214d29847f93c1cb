/*
 * plugin/spank/spank_opts.h: the SPANK plugin's configuration (plugstack.conf arguments), the user's
 * job options (--rankmap...), their validation, and the task environment they produce.
 *
 * Pure C, no Slurm calls: spank_rankmap.c feeds these from the SPANK handle; the unit tests call them
 * directly. Error rule: 0 on success, -1 with errno set on failure; the caller's rm_error_t (may be
 * NULL) names the argument, option or file at fault (first error wins).
 */
#ifndef RANKMAP_SPANK_OPTS_H
#define RANKMAP_SPANK_OPTS_H

#include <limits.h>
#include <stddef.h>

#include "rm_error.h"
#include "spank_elf.h"

#ifndef RANKMAP_LIBDIR
#define RANKMAP_LIBDIR "/usr/local/lib/rankmap"
#endif
#define RM_SPANK_TIMEOUT_DEFAULT 2000          /* ms, one daemon round trip */
#define RM_SPANK_PATTERN_TIMEOUT_DEFAULT 10000 /* ms, reading the user's pattern in slurmstepd */

/* plugstack.conf arguments: socket=PATH server=LIST munge_socket=PATH server_uid=UID|USER libdir=PATH
 * default=on|off bind=on|off register=on|off timeout=MS pattern_timeout=MS learn=on|off. */
typedef struct rm_spank_conf {
	char socket[PATH_MAX];       /* rankmapd: socket=PATH or server=HOST:PORT[,...] (a server list, rm_client.h),
				 * default RM_SOCKET_DEFAULT */
	int server_set;              /* server= given: exported to tasks as RANKMAP_SERVER (else RANKMAP_SOCKET) */
	char munge_socket[PATH_MAX]; /* munged's socket for TCP ("": libmunge's default), RANKMAP_MUNGE_SOCKET */
	char server_uid[64];         /* TCP: the uid rankmapd runs as ("": root), RANKMAP_SERVER_UID */
	char libdir[PATH_MAX];       /* where librankmap_mpi_<mpi>.so live, default RANKMAP_LIBDIR */
	int default_on;              /* rankmap without --rankmap (default off) */
	int bind_default;            /* --rankmap-bind without asking (default off) */
	int register_on;             /* slurmd registers its hwloc topology (default on) */
	int timeout_ms;              /* per daemon call, every server of the list included, 1..60000 (default
				 * RM_SPANK_TIMEOUT_DEFAULT); exported to tasks as RANKMAP_TIMEOUT_MS */
	char timeout_text[16];       /* timeout_ms as text, for the export */
	int pattern_timeout_ms;      /* slurmstepd's read of --rankmap-pattern, 1..600000 (default
				 * RM_SPANK_PATTERN_TIMEOUT_DEFAULT) */
	int learn_default;           /* learn=on: steps learn their patterns (RANKMAP_LEARN=1) unless the user
				 * gives --rankmap-learn=off or --rankmap=off; implies rankmap (default off) */
} rm_spank_conf_t;

/* Parses the plugstack.conf arguments (argv[0..argc-1], each NAME=VALUE). Unknown names and bad values
 * are errors naming the argument. Returns 0 or -1 (EINVAL); conf holds the defaults for what is unset. */
int rm_spank_conf_parse(int argc, char *const argv[], rm_spank_conf_t *conf, rm_error_t *err);

typedef enum rm_spank_mode {
	RM_SPANK_MODE_UNSET = 0, /* no --rankmap given: plugstack default applies */
	RM_SPANK_MODE_OFF,
	RM_SPANK_MODE_ON,
	RM_SPANK_MODE_REQUIRED /* like ON, but a failure fails the step */
} rm_spank_mode_t;

/* The user's options, as given to srun/sbatch/salloc. Strings are "" when unset. */
typedef struct rm_spank_job {
	rm_spank_mode_t mode;
	char algo[16]; /* auto | treematch | scotch */
	char pattern[PATH_MAX];
	char metric[16]; /* bytes | messages | loggp */
	char trace[PATH_MAX];
	int pattern_old; /* the matrix was given by its old name, --rankmap-pattern: messages name that */
	int bind;        /* --rankmap-bind given: RM_SPANK_BIND_CORES or RM_SPANK_BIND_GPU; 0 when not */
	int learn;       /* --rankmap-learn[=on]: 1, --rankmap-learn=off: -1, not given: 0 */
} rm_spank_job_t;

/* Option values of struct spank_option.val, one per option. */
enum {
	RM_SPANK_OPT_RANKMAP = 1,
	RM_SPANK_OPT_PATTERN,
	RM_SPANK_OPT_METRIC,
	RM_SPANK_OPT_TRACE,
	RM_SPANK_OPT_BIND,
	RM_SPANK_OPT_LEARN,
	RM_SPANK_OPT_PATTERN_OLD /* --rankmap-pattern, the old name of --rankmap-matrix (RM_SPANK_OPT_PATTERN) */
};

/* The option's name as the user types it ("--rankmap-matrix" for RM_SPANK_OPT_PATTERN, "--rankmap-pattern"
 * for RM_SPANK_OPT_PATTERN_OLD), "option" for an unknown value. */
const char *rm_spank_opt_name(int opt);
/* The name under which the user gave the matrix (--rankmap-matrix, or the old --rankmap-pattern): every
 * message about it names what the user typed. */
const char *rm_spank_pattern_opt(const rm_spank_job_t *job);

/* Validates one option's argument (optarg may be NULL for --rankmap and --rankmap-bind) and records it
 * in job. check_files: also open --rankmap-pattern (a regular file within the pattern size cap of
 * common/rm_file.h, opened without blocking) and parse it completely (the submission-time check; errors
 * name file and line), and check that --rankmap-trace's directory exists and is writable. A relative
 * pattern is checked from the current directory: the submission directory, which the step finds again
 * in SLURM_SUBMIT_DIR (spank_path_resolve).
 * Returns 0 or -1 (EINVAL, or the file's errno) with err explaining. */
int rm_spank_job_set(rm_spank_job_t *job, int opt, const char *optarg, int check_files, rm_error_t *err);

/* Makes a relative --rankmap-pattern absolute against dir (the step's SLURM_SUBMIT_DIR, the directory
 * srun, sbatch or salloc checked it from; never the job's --chdir directory, which the submission side
 * cannot see). An absolute path is copied. Writes into out (size len). Returns 0, or -1 (EINVAL: no
 * directory or a relative one; ENAMETOOLONG) with err naming opt (the option as the user gave it,
 * rm_spank_pattern_opt; NULL: --rankmap-matrix). */
int spank_path_resolve(const char *dir, const char *path, char *out, size_t len, const char *opt, rm_error_t *err);

/* Whether rankmap applies to this step: mode ON/REQUIRED, or UNSET with any other option given or the
 * plugstack default on. */
int rm_spank_job_active(const rm_spank_job_t *job, const rm_spank_conf_t *conf);
/* Whether the step's tasks learn their communication patterns (RANKMAP_LEARN=1): active, and
 * --rankmap-learn given, or learn=on in plugstack.conf and not --rankmap-learn=off. */
int rm_spank_job_learns(const rm_spank_job_t *job, const rm_spank_conf_t *conf);
/* --rankmap-bind's values: cores (also the option alone, and plugstack.conf's bind=on): each task on a core
 * placed by rankmapd; gpu: each task on its GPU's nearest cores, its nearest NIC exported (spank_gpu.h). */
enum { RM_SPANK_BIND_CORES = 1, RM_SPANK_BIND_GPU = 2 };

/* How tasks are to be bound (active and --rankmap-bind, or bind=on in plugstack.conf): RM_SPANK_BIND_CORES,
 * RM_SPANK_BIND_GPU, or 0 when they are not. */
int rm_spank_job_binds(const rm_spank_job_t *job, const rm_spank_conf_t *conf);

/* Returns a malloc'd LD_PRELOAD value with lib first and the existing value (may be NULL or "") kept
 * after it, separated by a colon; when lib is already an entry of existing, a copy of existing.
 * NULL on ENOMEM. */
char *rm_spank_preload_prepend(const char *lib, const char *existing);

/* Writes "<libdir>/librankmap_mpi_<mpi>.so" into buf. Returns 0, or -1 (ENAMETOOLONG, or EINVAL for
 * RM_SPANK_MPI_NONE). */
int rm_spank_mpi_library(const rm_spank_conf_t *conf, rm_spank_mpi_t mpi, char *buf, size_t len);

/* One environment variable to export to the tasks. */
typedef struct rm_spank_envvar {
	const char *name;
	const char *value; /* borrowed from job/conf */
} rm_spank_envvar_t;
#define RM_SPANK_ENV_MAX 13

/* Fills vars with the RANKMAP_* variables the MPI library reads (socket, engine, pattern, metric,
 * trace) for an active job. Returns the count (<= RM_SPANK_ENV_MAX). */
size_t rm_spank_job_env(const rm_spank_job_t *job, const rm_spank_conf_t *conf, rm_spank_envvar_t *vars);

/* Moves entry i of the server list in list (edited in place) to the front, the others keeping their
 * order: after a failover, the step's tasks try the server that answered first. */
void rm_spank_servers_first(char *list, int i);

/* slurmd's registration with one server (spank_register.c) is sent again when the daemon answers
 * `timeout` (transient: its hwloc parse gave no answer in time and it kept nothing), at most
 * RM_SPANK_REGISTER_TRIES sends in all, after a backoff doubling from RM_SPANK_REGISTER_BACKOFF_MS, and
 * only while the server's share of the plugin's timeout leaves RM_SPANK_REGISTER_MIN_TRY_MS for the send. */
#define RM_SPANK_REGISTER_TRIES 3
#define RM_SPANK_REGISTER_BACKOFF_MS 250
#define RM_SPANK_REGISTER_MIN_TRY_MS 500
/* After send number tries (1 = the first) failed with code (the daemon's error code, or the client's
 * "socket", "frame"...: rm_client_call_opts's err->source) and left_ms of the server's share remain:
 * returns how many ms to wait before sending again, or -1 to give up. */
int rm_spank_register_retry_ms(const char *code, int tries, long left_ms);

#endif
