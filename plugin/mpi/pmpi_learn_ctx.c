/*
 * plugin/mpi/pmpi_learn_ctx.c: a learning run's context (one per process, per rank under SMPI), made at
 * MPI_Init when RANKMAP_LEARN is on, and the hash of the run's arguments and input files that a learned
 * pattern is checked against (rm_pattern_usable). Below the rest of learning: pmpi_learn.c (records,
 * the observer) and pmpi_learn_key.c (keys, patterns) use it, it uses neither.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmpi.h"
#include "pmpi_learn.h"

static rmp_slot_t learn_slot;
static const rmp_observer_t *self;

void rmp_learn_self(const rmp_observer_t *o)
{
	self = o;
}

rmp_learn_call_t *rmp_learn_of(rmp_call_t *call)
{
	static rmp_learn_call_t off; /* learning not registered (the registry full): never on */
	rmp_learn_call_t *lc = rmp_call_state(call, self);

	return lc ? lc : memset(&off, 0, sizeof(off));
}

rmp_learn_t *rmp_learn_ctx(void)
{
	return rmp_slot_get(&learn_slot);
}

void rmp_learn_ctx_set(rmp_learn_t *l)
{
	rmp_active.learn = rmp_slot_set(&learn_slot, l);
}

int rmp_learn_on(void)
{
	const char *v = getenv("RANKMAP_LEARN");

	return v && *v && strcmp(v, "0") != 0 && strcmp(v, "off") != 0;
}

#define FNV_PRIME 1099511628211ULL
#define INPUT_FILES_MAX 16      /* input files looked at per run */
#define INPUT_SAMPLE 4096       /* bytes read at each end of one */
#define CMDLINE_MAX (64 * 1024) /* bytes of /proc/self/cmdline read */

static uint64_t fold(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * FNV_PRIME;
	return h;
}

/* The hash of the program's arguments (argv[1..]; without them, /proc/self/cmdline's), never 0. */
static uint64_t cmdline_hash(const int *argc, char ***argv)
{
	uint64_t h = RMP_HASH_INIT;

	if (argc && argv && *argv && *argc > 0) {
		for (int i = 1; i < *argc && (*argv)[i]; i++)
			h = fold(h, (*argv)[i], strlen((*argv)[i]) + 1);
		return h | 1;
	}
	FILE *f = fopen("/proc/self/cmdline", "r");
	int c, first = 1;

	if (!f)
		return 0;
	while ((c = getc(f)) != EOF) {
		if (!first)
			h = (h ^ (unsigned char)c) * FNV_PRIME;
		first &= c != 0; /* argv[0] (the program is in the key) */
	}
	fclose(f);
	return h | 1;
}

/* Folds into h the size and both ends' first INPUT_SAMPLE bytes of the regular file open as fd (read
 * with pread: the offset of a shared descriptor such as standard input does not move). 1 folded, 0 not
 * a regular file. */
static int fold_file(uint64_t *h, int fd)
{
	struct stat st;
	char buf[INPUT_SAMPLE];
	ssize_t n;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	*h = fold(*h, &st.st_size, sizeof(st.st_size));
	if ((n = pread(fd, buf, sizeof(buf), 0)) > 0)
		*h = fold(*h, buf, (size_t)n);
	if (st.st_size > INPUT_SAMPLE && (n = pread(fd, buf, sizeof(buf), st.st_size - INPUT_SAMPLE)) > 0)
		*h = fold(*h, buf, (size_t)n);
	return 1;
}

/* Folds one argument into h when it names a regular file ("FILE" or "--opt=FILE"). 1 folded, else 0. */
static int fold_arg(uint64_t *h, const char *arg)
{
	const char *eq = arg[0] == '-' ? strchr(arg, '=') : NULL;
	const char *path = eq ? eq + 1 : arg;
	struct stat st;
	int fd, done;

	/* only regular files are opened: opening a device may have effects (a tape rewinds, a watchdog arms) */
	if (!*path || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) < 0)
		return 0;
	done = fold_file(h, fd);
	close(fd);
	return done;
}

/* The program's input: the files its arguments name, and standard input when it is a file (size and
 * samples; at most INPUT_FILES_MAX files), folded into h. Only the roots of topology calls ask (lazily:
 * a million ranks do not all open the input). */
static uint64_t inputs_hash(uint64_t h)
{
	char *buf = malloc(CMDLINE_MAX + 1);
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), files = fold_file(&h, 0);
	ssize_t len = 0, n;

	while (buf && fd >= 0 && len < CMDLINE_MAX && (n = read(fd, buf + len, (size_t)(CMDLINE_MAX - len))) > 0)
		len += n;
	if (fd >= 0)
		close(fd);
	if (buf) {
		buf[len] = 0;
		for (char *a = buf + strlen(buf) + 1; a < buf + len && files < INPUT_FILES_MAX; a += strlen(a) + 1)
			files += fold_arg(&h, a);
	}
	free(buf);
	return h;
}

uint64_t rmp_learn_cmdline(rmp_learn_t *l)
{
	if (!l || !l->cmdline)
		return 0;
	if (!l->inputs) {
		l->cmdline = inputs_hash(l->cmdline) | 1;
		l->inputs = 1;
	}
	return l->cmdline;
}

void rmp_learn_init(const int *argc, char ***argv)
{
	if (!rmp_learn_on() || rmp_disabled() || rmp_learn_ctx())
		return;
	rmp_learn_t *l = calloc(1, sizeof(*l));

	if (l) {
		rmp_learn_entry(l)->dest = RMP_LEARN_NOHIT;
		l->cmdline = cmdline_hash(argc, argv);
		rmp_learn_ctx_set(l);
	}
}
