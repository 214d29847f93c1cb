/*
 * plugin/spank/spank_elf.c: DT_NEEDED entries of an ELF file, read through its program headers (so
 * stripped binaries without section headers work too), and the MPI detection built on them.
 *
 * Only bounded preads: a hostile or truncated file yields ENOEXEC, never a crash or a large allocation.
 */
#include "spank_elf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ELF_MAX_PHNUM 4096
#define ELF_MAX_DYN (1u << 20)     /* bytes of dynamic section read */
#define ELF_MAX_STRTAB (16u << 20) /* bytes of dynamic string table read */

typedef struct elf_file {
	int fd;
	int is64, swap;
	uint64_t phoff;
	unsigned phnum, phentsize;
	uint64_t dyn_off, dyn_size; /* PT_DYNAMIC */
} elf_file_t;

typedef struct elf_dyn {
	uint64_t strtab, strsz, runpath, rpath;
	int has_runpath, has_rpath;
	size_t nneeded;
	uint64_t *needed; /* offsets into the string table */
} elf_dyn_t;

static uint16_t rd16(const elf_file_t *f, const unsigned char *p)
{
	return f->swap ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static uint32_t rd32(const elf_file_t *f, const unsigned char *p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)p[f->swap ? 3 - i : i] << (8 * i);
	return v;
}

static uint64_t rd64(const elf_file_t *f, const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[f->swap ? 7 - i : i] << (8 * i);
	return v;
}

/* Reads exactly len bytes at off. Returns 0 or -1 (ENOEXEC on a short read). */
static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			if (errno == EINVAL) /* offset beyond what a file can hold: a corrupt header */
				errno = ENOEXEC;
			return -1;
		}
		if (r == 0) {
			errno = ENOEXEC;
			return -1;
		}
		done += (size_t)r;
	}
	return 0;
}

/* Parses the ELF header. Returns 0 or -1 (ENOEXEC). */
static int elf_header(elf_file_t *f)
{
	unsigned char h[64];

	if (read_at(f->fd, h, EI_NIDENT, 0) < 0 || memcmp(h, ELFMAG, SELFMAG) != 0)
		goto noexec;
	if (h[EI_CLASS] != ELFCLASS32 && h[EI_CLASS] != ELFCLASS64)
		goto noexec;
	if (h[EI_DATA] != ELFDATA2LSB && h[EI_DATA] != ELFDATA2MSB)
		goto noexec;
	f->is64 = h[EI_CLASS] == ELFCLASS64;
	/* rd* assemble little-endian values unless swap is set, whatever the host order. */
	f->swap = h[EI_DATA] == ELFDATA2MSB;
	if (read_at(f->fd, h, f->is64 ? 64 : 52, 0) < 0)
		goto noexec;
	f->phoff = f->is64 ? rd64(f, h + 32) : rd32(f, h + 28);
	f->phentsize = rd16(f, h + (f->is64 ? 54 : 42));
	f->phnum = rd16(f, h + (f->is64 ? 56 : 44));
	if (f->phnum == 0 || f->phnum > ELF_MAX_PHNUM || f->phentsize < (f->is64 ? 56u : 32u))
		goto noexec;
	return 0;
noexec:
	errno = ENOEXEC;
	return -1;
}

/* Reads program header i into type/offset/vaddr/filesz. Returns 0 or -1. */
static int elf_phdr(const elf_file_t *f, unsigned i, uint32_t *type, uint64_t *off, uint64_t *vaddr, uint64_t *filesz)
{
	unsigned char p[56];

	if (read_at(f->fd, p, f->is64 ? 56 : 32, f->phoff + (uint64_t)i * f->phentsize) < 0)
		return -1;
	*type = rd32(f, p);
	if (f->is64) {
		*off = rd64(f, p + 8);
		*vaddr = rd64(f, p + 16);
		*filesz = rd64(f, p + 32);
	} else {
		*off = rd32(f, p + 4);
		*vaddr = rd32(f, p + 8);
		*filesz = rd32(f, p + 16);
	}
	return 0;
}

/* Finds the file offset of virtual address addr through the PT_LOAD segments. Returns 0 or -1. */
static int elf_vaddr_to_off(const elf_file_t *f, uint64_t addr, uint64_t *off_out)
{
	for (unsigned i = 0; i < f->phnum; i++) {
		uint32_t type;
		uint64_t off, vaddr, filesz;
		if (elf_phdr(f, i, &type, &off, &vaddr, &filesz) < 0)
			return -1;
		if (type == PT_LOAD && addr >= vaddr && addr - vaddr < filesz) {
			*off_out = off + (addr - vaddr);
			return 0;
		}
	}
	errno = ENOEXEC;
	return -1;
}

/* Locates PT_DYNAMIC. Returns 0, or -1 (ENOEXEC: none, i.e. a static program). */
static int elf_find_dynamic(elf_file_t *f)
{
	for (unsigned i = 0; i < f->phnum; i++) {
		uint32_t type;
		uint64_t off, vaddr, filesz;
		if (elf_phdr(f, i, &type, &off, &vaddr, &filesz) < 0)
			return -1;
		if (type == PT_DYNAMIC) {
			f->dyn_off = off;
			f->dyn_size = filesz > ELF_MAX_DYN ? ELF_MAX_DYN : filesz;
			return 0;
		}
	}
	errno = ENOEXEC;
	return -1;
}

/* Reads the dynamic entries we need. Returns 0 or -1; d->needed is malloc'd (caller frees). */
static int elf_read_dynamic(const elf_file_t *f, elf_dyn_t *d)
{
	size_t esz = f->is64 ? 16 : 8, n = f->dyn_size / esz;
	unsigned char *buf = malloc(f->dyn_size ? f->dyn_size : 1);

	if (!buf)
		return -1;
	if (read_at(f->fd, buf, f->dyn_size, f->dyn_off) < 0) {
		free(buf);
		return -1;
	}
	d->needed = calloc(n ? n : 1, sizeof(*d->needed));
	if (!d->needed) {
		free(buf);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const unsigned char *e = buf + i * esz;
		uint64_t tag = f->is64 ? rd64(f, e) : rd32(f, e);
		uint64_t val = f->is64 ? rd64(f, e + 8) : rd32(f, e + 4);
		if (tag == DT_NULL)
			break;
		if (tag == DT_NEEDED)
			d->needed[d->nneeded++] = val;
		else if (tag == DT_STRTAB)
			d->strtab = val;
		else if (tag == DT_STRSZ)
			d->strsz = val;
		else if (tag == DT_RUNPATH)
			d->runpath = val, d->has_runpath = 1;
		else if (tag == DT_RPATH)
			d->rpath = val, d->has_rpath = 1;
	}
	free(buf);
	return 0;
}

/* Reads the dynamic string table. Returns a malloc'd, NUL-terminated copy, or NULL. */
static char *elf_read_strtab(const elf_file_t *f, const elf_dyn_t *d)
{
	uint64_t off;
	char *s;

	if (d->strsz == 0 || d->strsz > ELF_MAX_STRTAB || elf_vaddr_to_off(f, d->strtab, &off) < 0) {
		errno = ENOEXEC;
		return NULL;
	}
	s = malloc(d->strsz + 1);
	if (!s)
		return NULL;
	if (read_at(f->fd, s, d->strsz, off) < 0) {
		free(s);
		return NULL;
	}
	s[d->strsz] = '\0';
	return s;
}

static int elf_fail(rm_error_t *err, const char *path, const char *what)
{
	int e = errno;
	rm_error_set(err, path, 0, 0, "%s: %s", what, strerror(e));
	errno = e;
	return -1;
}

int rm_spank_elf_needed(const char *path, int (*fn)(const char *name, void *arg), void *arg, char *runpath,
			size_t runpath_len, rm_error_t *err)
{
	elf_file_t f = { .fd = -1 };
	elf_dyn_t d = { 0 };
	char *str = NULL;
	int rc = 0;

	if (runpath && runpath_len)
		runpath[0] = '\0';
	f.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f.fd < 0)
		return elf_fail(err, path, "cannot open");
	if (elf_header(&f) < 0 || elf_find_dynamic(&f) < 0 || elf_read_dynamic(&f, &d) < 0 ||
	    !(str = elf_read_strtab(&f, &d))) {
		rc = elf_fail(err, path, "no dynamic section");
		goto out;
	}
	if (runpath && runpath_len && (d.has_runpath || d.has_rpath)) {
		uint64_t o = d.has_runpath ? d.runpath : d.rpath;
		if (o < d.strsz)
			snprintf(runpath, runpath_len, "%s", str + o);
	}
	for (size_t i = 0; i < d.nneeded && rc == 0; i++)
		if (d.needed[i] < d.strsz)
			rc = fn(str + d.needed[i], arg);
out:
	free(str);
	free(d.needed);
	close(f.fd);
	return rc;
}

/* ---- MPI detection ---- */

rm_spank_mpi_t rm_spank_mpi_from_soname(const char *so)
{
	if (strncmp(so, "libmpich", 8) == 0 && strstr(so, ".so"))
		return RM_SPANK_MPI_MPICH;
	if (strcmp(so, "libmpi.so.12") == 0 || strncmp(so, "libmpi.so.12.", 13) == 0)
		return RM_SPANK_MPI_MPICH; /* the MPICH ABI (MPICH's own libmpi, Intel MPI) */
	if (strncmp(so, "libmpi.so", 9) == 0 || (strncmp(so, "libmpi_", 7) == 0 && strstr(so, ".so")))
		return RM_SPANK_MPI_OPENMPI;
	return RM_SPANK_MPI_NONE;
}

const char *rm_spank_mpi_name(rm_spank_mpi_t mpi)
{
	switch (mpi) {
	case RM_SPANK_MPI_OPENMPI: return "openmpi";
	case RM_SPANK_MPI_MPICH: return "mpich";
	default: return "none";
	}
}

static int classify_cb(const char *name, void *arg)
{
	rm_spank_mpi_t m = rm_spank_mpi_from_soname(name);
	if (m != RM_SPANK_MPI_NONE) {
		*(rm_spank_mpi_t *)arg = m;
		return 1;
	}
	return 0;
}

/* Libraries every program has: never worth opening. */
static int is_system_lib(const char *name)
{
	static const char *const skip[] = { "libc.so",  "libm.so",     "libpthread.so", "libdl.so",       "librt.so",
					    "ld-linux", "libgcc_s.so", "libstdc++.so",  "libgfortran.so", NULL };
	for (int i = 0; skip[i]; i++)
		if (strncmp(name, skip[i], strlen(skip[i])) == 0)
			return 1;
	return 0;
}

typedef struct detect_ctx {
	char origin[PATH_MAX];
	const char *runpath, *ld_library_path;
	rm_spank_mpi_t found;
} detect_ctx_t;

/* Tries each directory of a colon-separated list for name; classifies the first file found.
 * Returns 1 when a file was found (whatever its MPI), 0 otherwise. */
static int try_dirs(detect_ctx_t *c, const char *dirs, const char *name)
{
	const char *p = dirs;

	while (p && *p) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char dir[PATH_MAX], path[2 * PATH_MAX + 16];
		int n = -1;
		if (len > 0 && len < sizeof(dir)) {
			memcpy(dir, p, len);
			dir[len] = '\0';
			if (strncmp(dir, "$ORIGIN", 7) == 0 || strncmp(dir, "${ORIGIN}", 9) == 0) {
				const char *rest = dir + (dir[1] == '{' ? 9 : 7);
				n = snprintf(path, sizeof(path), "%s%s/%s", c->origin, rest, name);
			} else {
				n = snprintf(path, sizeof(path), "%s/%s", dir, name);
			}
			if (n > 0 && (size_t)n < sizeof(path) && access(path, R_OK) == 0) {
				rm_spank_mpi_t m = RM_SPANK_MPI_NONE;
				if (rm_spank_elf_needed(path, classify_cb, &m, NULL, 0, NULL) > 0)
					c->found = m;
				return 1;
			}
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static const char system_dirs[] =
	"/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib/aarch64-linux-gnu:"
	"/usr/lib/aarch64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib:/usr/local/lib";

/* Looks one level down: the direct dependency name, resolved as the dynamic loader would. */
static int deps_cb(const char *name, void *arg)
{
	detect_ctx_t *c = arg;

	if (is_system_lib(name))
		return 0;
	if (strchr(name, '/')) {
		rm_spank_mpi_t m = RM_SPANK_MPI_NONE;
		if (rm_spank_elf_needed(name, classify_cb, &m, NULL, 0, NULL) > 0)
			c->found = m;
	} else if (!try_dirs(c, c->runpath, name) && !try_dirs(c, c->ld_library_path, name)) {
		try_dirs(c, system_dirs, name);
	}
	return c->found != RM_SPANK_MPI_NONE;
}

rm_spank_mpi_t rm_spank_mpi_detect(const char *path, const char *ld_library_path)
{
	rm_spank_mpi_t direct = RM_SPANK_MPI_NONE;
	char runpath[4096];
	detect_ctx_t c = { .ld_library_path = ld_library_path, .runpath = runpath };
	char *slash;

	if (rm_spank_elf_needed(path, classify_cb, &direct, runpath, sizeof(runpath), NULL) < 0)
		return RM_SPANK_MPI_NONE;
	if (direct != RM_SPANK_MPI_NONE)
		return direct;
	snprintf(c.origin, sizeof(c.origin), "%s", path);
	slash = strrchr(c.origin, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(c.origin, sizeof(c.origin), ".");
	rm_spank_elf_needed(path, deps_cb, &c, NULL, 0, NULL);
	return c.found;
}

int rm_spank_which(const char *argv0, const char *path_env, char *out, size_t len)
{
	const char *p = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
	struct stat st;

	if (!argv0 || !*argv0) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(argv0, '/')) {
		if ((size_t)snprintf(out, len, "%s", argv0) >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		return 0;
	}
	while (*p) {
		size_t dl = strcspn(p, ":");
		int n = dl ? snprintf(out, len, "%.*s/%s", (int)dl, p, argv0) : snprintf(out, len, "./%s", argv0);
		if (n > 0 && (size_t)n < len && stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		p += dl;
		if (*p == ':')
			p++;
	}
	errno = ENOENT;
	return -1;
}
