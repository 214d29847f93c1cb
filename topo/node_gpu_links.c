/*
 * topo/node_gpu_links.c: site overrides of the GPU link matrix (topo_load_gpu_links; the format is in
 * topo_gpu.h, the MI250X example in topo/COST-GPU.md), and the link matrix of a host with them applied.
 *
 * hwloc's link data can be wrong: on MI250X blades it gives every GCD pair the same XGMIBandwidth and
 * an all-ones XGMIHops (hwloc issue 775), although the two GCDs of a package are joined by four links
 * and other pairs by two, one or none. A section of the file names the GPU model and count it applies
 * to; hosts whose GPUs match get its links, the pairs it does not name keep hwloc's values.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cluster_private.h"
#include "rm_file.h"
#include <pthread.h>

struct gpu_link {
	unsigned a, b;
	double bw; /* 0: no link */
	int hops;
};

struct topo_gpu_override {
	long refs; /* shared by derived clusters */
	char *source;
	struct section {
		char *model;
		unsigned ngpus;
		struct gpu_link *links;
		size_t nlinks;
	} * sec;
	size_t nsec;
	struct topo_gpu_override *next; /* an earlier file */
};

void topo_gpu_overrides_free(struct topo_gpu_override *o)
{
	while (o) {
		struct topo_gpu_override *next = o->next;
		size_t i;

		if (__atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) > 0)
			return;
		for (i = 0; i < o->nsec; i++) {
			free(o->sec[i].model);
			free(o->sec[i].links);
		}
		free(o->sec);
		free(o->source);
		free(o);
		o = next;
	}
}

struct topo_gpu_override *topo_gpu_overrides_ref(struct topo_gpu_override *o)
{
	if (o)
		__atomic_add_fetch(&o->refs, 1, __ATOMIC_RELAXED);
	return o;
}

static int add_section(struct topo_gpu_override *o)
{
	struct section *n = realloc(o->sec, (o->nsec + 1) * sizeof(*n));

	if (!n)
		return -1;
	o->sec = n;
	memset(&n[o->nsec++], 0, sizeof(*n));
	return 0;
}

static int parse_uint(const char *s, unsigned *out)
{
	char *e;
	unsigned long v;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoul(s, &e, 10);
	if (*e || errno || v > 4096)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_line(struct topo_gpu_override *o, char *line, const char *path, int ln, rm_error_t *err)
{
	char *w[32], *save = NULL, *t;
	int n = 0;
	struct section *s;

	for (t = strtok_r(line, " \t\r", &save); t && n < 32; t = strtok_r(NULL, " \t\r", &save))
		w[n++] = t;
	if (!n)
		return 0;
	errno = EINVAL;
	if (t) /* words past the 32nd were dropped unseen (a model's past its fifth, once) */
		return rm_error_set(err, path, ln, 0, "more than 32 words");
	if (!strcmp(w[0], "model")) {
		char *rest = n > 1 ? w[1] : NULL;

		if (!rest)
			return rm_error_set(err, path, ln, 0, "model: needs the text the GPU model must contain");
		if (add_section(o) < 0)
			return rm_error_set(err, path, ln, 0, "out of memory");
		{ /* the words after "model", joined by one space */
			size_t k, len = 0;
			char *m;

			for (k = 1; k < (size_t)n; k++)
				len += strlen(w[k]) + 1;
			if (!(m = malloc(len + 1)))
				return rm_error_set(err, path, ln, 0, "out of memory");
			m[0] = '\0';
			for (k = 1; k < (size_t)n; k++) {
				if (k > 1)
					strcat(m, " ");
				strcat(m, w[k]);
			}
			o->sec[o->nsec - 1].model = m;
		}
		return 0;
	}
	if (!o->nsec)
		return rm_error_set(err, path, ln, 0, "'%s' before any 'model' line", w[0]);
	s = &o->sec[o->nsec - 1];
	if (!strcmp(w[0], "gpus")) {
		if (n != 2 || parse_uint(w[1], &s->ngpus) < 0 || !s->ngpus)
			return rm_error_set(err, path, ln, 0, "gpus: expected a GPU count (1 to 4096)");
		return 0;
	}
	if (!strcmp(w[0], "link") || !strcmp(w[0], "nolink")) {
		int nolink = w[0][0] == 'n';
		struct gpu_link l = { 0, 0, 0.0, nolink ? -1 : 1 };
		struct gpu_link *nl;
		char *e;

		if (!s->ngpus)
			return rm_error_set(err, path, ln, 0, "%s: give the section's 'gpus' count first", w[0]);
		if (n < 3 || parse_uint(w[1], &l.a) < 0 || parse_uint(w[2], &l.b) < 0)
			return rm_error_set(err, path, ln, 0, "%s: expected two GPU indices", w[0]);
		if (l.a >= s->ngpus || l.b >= s->ngpus || l.a == l.b)
			return rm_error_set(err, path, ln, 0, "%s: GPU indices must differ and be below %u", w[0],
					    s->ngpus);
		if (nolink && n != 3)
			return rm_error_set(err, path, ln, 0, "nolink: expected 'nolink A B'");
		if (!nolink) {
			if (n < 4 || n > 5)
				return rm_error_set(err, path, ln, 0, "link: expected 'link A B GB/s [hops]'");
			errno = 0;
			l.bw = strtod(w[3], &e);
			if (*e || errno || !(l.bw > 0) || l.bw > 1e6)
				return errno = EINVAL,
				       rm_error_set(err, path, ln, 0,
						    "link: bandwidth '%s' is not a positive GB/s value", w[3]);
			if (n == 5 && (parse_uint(w[4], (unsigned *)&l.hops) < 0 || l.hops < 1))
				return errno = EINVAL, rm_error_set(err, path, ln, 0, "link: hops must be 1 or more");
		}
		if (!(nl = realloc(s->links, (s->nlinks + 1) * sizeof(*nl))))
			return rm_error_set(err, path, ln, 0, "out of memory");
		s->links = nl;
		s->links[s->nlinks++] = l;
		return 0;
	}
	return rm_error_set(err, path, ln, 0, "unknown directive '%s' (model, gpus, link, nolink)", w[0]);
}

int topo_load_gpu_links(topo_cluster_t c, const char *path, rm_error_t *err)
{
	size_t len, i;
	char *buf = rm_file_read(path, RM_FILE_CONFIG, &len, err), *line;
	struct topo_gpu_override *o;
	int ln = 0;

	if (!buf)
		return -1;
	if (!(o = calloc(1, sizeof(*o))) || !(o->source = strdup(path))) {
		free(o);
		free(buf);
		errno = ENOMEM;
		return rm_error_set(err, path, 0, 0, "out of memory");
	}
	o->refs = 1;
	for (i = 0, line = buf; i <= len; i++) { /* line by line, keeping empty lines counted */
		if (i < len && buf[i] != '\n')
			continue;
		buf[i < len ? i : len] = '\0';
		ln++;
		{
			char *hash = strchr(line, '#');

			if (hash)
				*hash = '\0';
		}
		if (parse_line(o, line, path, ln, err) < 0) {
			int e = errno && errno != ERANGE ? errno : EINVAL; /* parse_uint clears errno */

			topo_gpu_overrides_free(o);
			free(buf);
			errno = e;
			return -1;
		}
		line = buf + i + 1;
	}
	free(buf);
	for (i = 0; i < o->nsec; i++)
		if (!o->sec[i].ngpus) {
			rm_error_set(err, path, 0, 0, "section 'model %s' has no 'gpus' line", o->sec[i].model);
			topo_gpu_overrides_free(o);
			errno = EINVAL;
			return -1;
		}
	o->next = c->gpu_links;
	c->gpu_links = o;
	return 0;
}

/* The section (latest file first, then its first section) that applies to model m with n GPUs. */
static const struct section *section_for(const struct topo_gpu_override *o, const struct topo_gpumodel *m,
					 const char **source)
{
	size_t i;

	if (!m->ngpus)
		return NULL;
	for (; o; o = o->next)
		for (i = 0; i < o->nsec; i++)
			if (o->sec[i].ngpus == m->ngpus && m->gpus[0].model &&
			    strcasestr(m->gpus[0].model, o->sec[i].model)) {
				*source = o->source;
				return &o->sec[i];
			}
	return NULL;
}

/*
 * Matrices with overrides are per (node type, section): small (n x n), built when asked and kept in a
 * per-cluster list so that the pointers handed out stay valid as long as the cluster.
 */
struct merged {
	const struct topo_gpumodel *m;
	const struct section *s;
	double *bw;
	int *hops;
	char *source;
	struct merged *next;
};

static struct merged *merged_list(topo_cluster_t c)
{
	return c->gpu_merged;
}

void topo_gpu_merged_free(topo_cluster_t c)
{
	struct merged *x = merged_list(c), *n;

	for (; x; x = n) {
		n = x->next;
		free(x->bw);
		free(x->hops);
		free(x->source);
		free(x);
	}
	c->gpu_merged = NULL;
}

int topo_host_gpu_links(topo_cluster_t c, size_t h, topo_gpu_links_t *out)
{
	const struct topo_gpumodel *m = h < c->nhosts && c->hosts[h].type ? c->hosts[h].type->gpu : NULL;
	const struct section *s;
	const char *src = NULL;
	struct merged *x;
	size_t i, n;

	if (!m || !out)
		return errno = EINVAL, -1;
	out->n = (unsigned)m->ngpus;
	out->bw = m->bw;
	out->hops = m->hops;
	out->source = m->source;
	out->nswitches = m->nswitches;
	out->asymmetric = m->asymmetric;
	if (!(s = section_for(c->gpu_links, m, &src)))
		return 0;
	pthread_mutex_lock(&c->gpu_lock);
	for (x = merged_list(c); x && !(x->m == m && x->s == s); x = x->next)
		;
	if (!x && (x = calloc(1, sizeof(*x)))) {
		n = m->ngpus;
		x->m = m;
		x->s = s;
		x->bw = malloc(n * n * sizeof(*x->bw));
		x->hops = malloc(n * n * sizeof(*x->hops));
		x->source = malloc(strlen(src) + 16);
		if (!x->bw || !x->hops || !x->source) {
			free(x->bw);
			free(x->hops);
			free(x->source);
			free(x);
			x = NULL;
		} else {
			memcpy(x->bw, m->bw, n * n * sizeof(*x->bw));
			memcpy(x->hops, m->hops, n * n * sizeof(*x->hops));
			sprintf(x->source, "site file %s", src);
			for (i = 0; i < s->nlinks; i++) {
				const struct gpu_link *l = &s->links[i];

				x->bw[l->a * n + l->b] = x->bw[l->b * n + l->a] = l->bw;
				x->hops[l->a * n + l->b] = x->hops[l->b * n + l->a] = l->hops;
			}
			x->next = c->gpu_merged;
			c->gpu_merged = x;
		}
	}
	pthread_mutex_unlock(&c->gpu_lock);
	if (!x)
		return errno = ENOMEM, -1;
	out->bw = x->bw;
	out->hops = x->hops;
	out->source = x->source;
	out->asymmetric = 0;
	return 0;
}
