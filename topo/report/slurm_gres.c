/*
 * topo/report/slurm_gres.c: gres.conf lines for the GPUs of a cluster (topo_gres.h says the format).
 */
#include "topo_gres.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "topo_gpu.h"

const char *topo_gres_type(const char *model, char *buf, size_t len)
{
	size_t o = 0;

	for (const char *p = model; p && *p && o + 1 < len; p++) {
		char ch = (char)tolower((unsigned char)*p);

		if (!isalnum((unsigned char)ch) && ch != '.' && ch != '-')
			ch = '_';
		if (ch == '_' && (o == 0 || buf[o - 1] == '_'))
			continue; /* no leading or doubled '_' */
		buf[o++] = ch;
	}
	while (o > 0 && buf[o - 1] == '_')
		o--;
	buf[o] = '\0';
	return buf;
}

/* A growing text buffer. */
typedef struct text {
	char *s;
	size_t len, cap;
	int oom;
} text_t;

static void add(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text_t *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->oom = 1;
			return;
		}
		if (t->s && t->len + (size_t)n < t->cap) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = (t->cap + (size_t)n + 1) * 2;
		char *s = realloc(t->s, cap);

		if (!s) {
			t->oom = 1;
			return;
		}
		t->s = s, t->cap = cap;
	}
}

/* Appends the compressed list of the ints v[0..n) (ascending): "0-13,28". */
static void add_list(text_t *t, const unsigned *v, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && v[j + 1] == v[j] + 1)
			j++;
		if (j > i)
			add(t, "%s%u-%u", i ? "," : "", v[i], v[j]);
		else
			add(t, "%s%u", i ? "," : "", v[i]);
		i = j + 1;
	}
}

/* The logical cores of the NUMA node(s) GPU g is attached to, into t. */
static void add_cores(text_t *t, hwloc_topology_t topo, const topo_gpu_t *g)
{
	hwloc_obj_t o = hwloc_get_obj_covering_cpuset(topo, g->locality), c = NULL;
	unsigned *v;
	size_t n = 0;
	int total = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);

	while (o && o->parent && o->memory_arity == 0)
		o = o->parent;
	if (!o || total <= 0 || !(v = malloc(sizeof(*v) * (size_t)total))) {
		t->oom |= total > 0;
		return;
	}
	while ((c = hwloc_get_next_obj_inside_cpuset_by_type(topo, o->cpuset, HWLOC_OBJ_CORE, c)) && n < (size_t)total)
		v[n++] = c->logical_index;
	add_list(t, v, n);
	free(v);
}

/* The device file of GPU i of host h: its DRM render node, else the driver's usual node (topo_gres.h). */
static void add_file(text_t *t, const char *root, const topo_gpu_t *g, unsigned nvidia_k, unsigned drm_k)
{
	const char *r = g->osdevs ? strstr(g->osdevs, "renderD") : NULL;

	if (r) {
		add(t, "%s/dev/dri/%.*s", root, (int)strcspn(r, " "), r);
		return;
	}
	if (g->backends & (TOPO_GPU_CUDA | TOPO_GPU_NVML))
		add(t, "%s/dev/nvidia%u", root, nvidia_k);
	else
		add(t, "%s/dev/dri/renderD%u", root, 128 + drm_k);
}

/* The lines of host h (without NodeName), and its slurm.conf Gres= in gres. 0 or -1. */
static int host_lines(topo_cluster_t c, size_t h, const topo_gres_opts_t *o, text_t *t, char *gres, size_t glen)
{
	size_t n = topo_host_ngpus(c, h);
	hwloc_topology_t topo = topo_host_hwloc(c, h);
	topo_gpu_links_t L = { 0 };
	double narrow = 0;
	unsigned nv = 0, drm = 0;
	char type[128] = "";

	if (n == 0 || !topo)
		return 0;
	if (topo_host_gpu_links(c, h, &L) == 0 && L.bw && L.n == n)
		for (size_t i = 0; i < n * n; i++)
			if (i / n != i % n && L.bw[i] > 0 && (narrow == 0 || L.bw[i] < narrow))
				narrow = L.bw[i];
	const topo_gpu_t *g0 = topo_host_gpu(c, h, 0);

	if (o->type)
		snprintf(type, sizeof(type), "%s", o->type);
	else if (g0 && g0->model)
		topo_gres_type(g0->model, type, sizeof(type));
	snprintf(gres, glen, "gpu%s%s:%zu", type[0] ? ":" : "", type, n);
	for (size_t i = 0; i < n; i++) {
		const topo_gpu_t *g = topo_host_gpu(c, h, i);
		char gt[128] = "";

		if (!g)
			return -1;
		if (o->type)
			snprintf(gt, sizeof(gt), "%s", o->type);
		else if (g->model)
			topo_gres_type(g->model, gt, sizeof(gt));
		add(t, "Name=gpu%s%s File=", gt[0] ? " Type=" : "", gt);
		add_file(t, o->dev_root ? o->dev_root : "", g, nv, drm);
		if (g->backends & (TOPO_GPU_CUDA | TOPO_GPU_NVML))
			nv++;
		else
			drm++;
		add(t, " Cores=");
		add_cores(t, topo, g);
		if (narrow > 0) {
			add(t, " Links=");
			for (size_t j = 0; j < n; j++)
				add(t, "%s%ld", j ? "," : "", j == i ? -1L : lround(L.bw[i * n + j] / narrow));
		}
		add(t, "\n");
	}
	return t->oom ? -1 : 0;
}

typedef struct host_text {
	size_t host;
	uint64_t hash;
	char *lines;
	char gres[160];
} host_text_t;

static uint64_t hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int cmp_text(const void *a, const void *b)
{
	const host_text_t *x = a, *y = b;
	int r = x->hash < y->hash ? -1 : x->hash > y->hash;

	if (!r)
		r = strcmp(x->lines, y->lines);
	return r ? r : (x->host < y->host ? -1 : x->host > y->host);
}

/* The hosts to write: the named ones (each must have hardware), or all. */
static size_t *pick_hosts(topo_cluster_t c, const topo_gres_opts_t *o, size_t *n, rm_error_t *err)
{
	size_t cap = o->hosts ? o->nhosts : topo_nhosts(c);
	size_t *v = malloc(sizeof(*v) * (cap + 1));

	*n = 0;
	if (!v)
		return rm_error_set(err, "slurm-gres", 0, 0, "out of memory"), NULL;
	for (size_t i = 0; i < cap; i++) {
		long h = o->hosts ? topo_host_find(c, o->hosts[i]) : (long)i;

		if (h < 0 || !topo_host_hwloc(c, (size_t)h)) {
			rm_error_set(err, o->hosts[i], 0, 0, h < 0 ? "no such host" : "host has no hardware data");
			free(v);
			errno = ENOENT;
			return NULL;
		}
		v[(*n)++] = (size_t)h;
	}
	return v;
}

long topo_slurm_gres_write(topo_cluster_t c, const topo_gres_opts_t *o, FILE *f, rm_error_t *err)
{
	size_t nh = 0, nt = 0, *hosts = pick_hosts(c, o, &nh, err);
	host_text_t *ht = hosts ? calloc(nh + 1, sizeof(*ht)) : NULL;
	long lines = -1;

	if (!ht) {
		free(hosts);
		return hosts ? rm_error_set(err, "slurm-gres", 0, 0, "out of memory") : -1;
	}
	for (size_t i = 0; i < nh; i++) {
		text_t t = { 0 };

		if (host_lines(c, hosts[i], o, &t, ht[nt].gres, sizeof(ht[nt].gres)) < 0) {
			free(t.s);
			rm_error_set(err, topo_host_name(c, hosts[i]), 0, 0, "out of memory");
			goto out;
		}
		if (!t.s)
			continue; /* no GPU */
		ht[nt].host = hosts[i], ht[nt].lines = t.s, ht[nt].hash = hash_str(t.s);
		nt++;
	}
	qsort(ht, nt, sizeof(*ht), cmp_text);
	lines = 0;
	for (size_t i = 0; i < nt;) {
		size_t j = i;
		const char **names;

		while (j < nt && ht[j].hash == ht[i].hash && !strcmp(ht[j].lines, ht[i].lines))
			j++;
		if (!(names = malloc(sizeof(*names) * (j - i)))) {
			lines = rm_error_set(err, "slurm-gres", 0, 0, "out of memory");
			goto out;
		}
		for (size_t k = i; k < j; k++)
			names[k - i] = topo_host_name(c, ht[k].host);
		char *list = hostlist_compress(names, j - i);
		const topo_gpu_t *g = topo_host_gpu(c, ht[i].host, 0);

		free(names);
		if (!list) {
			lines = rm_error_set(err, "slurm-gres", 0, 0, "out of memory");
			goto out;
		}
		fprintf(f, "# %s: %zu x %s; slurm.conf: NodeName=%s ... Gres=%s\n", list,
			topo_host_ngpus(c, ht[i].host), g && g->model ? g->model : "GPU", list, ht[i].gres);
		for (const char *p = ht[i].lines; *p;) {
			size_t len = strcspn(p, "\n");

			fprintf(f, "NodeName=%s %.*s\n", list, (int)len, p);
			lines++;
			p += len + (p[len] == '\n');
		}
		free(list);
		i = j;
	}
	if (ferror(f))
		lines = rm_error_set(err, "slurm-gres", 0, 0, "write error");
out:
	for (size_t i = 0; i < nt; i++)
		free(ht[i].lines);
	free(ht);
	free(hosts);
	return lines;
}
