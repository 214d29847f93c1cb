/*
 * plugin/mpi/pmpi_learn_key.c: learned patterns at the root of a topology call: the key (user, program,
 * call, shape), the weights a stored pattern gives (Cartesian: per dimension; graphs: per edge), and, at
 * MPI_Finalize, the run's pattern summed from every rank and merged into the store.
 *
 * Weights: the metric of RANKMAP_METRIC (bytes by default) of the traffic both ways, normalised by the
 * largest; a dimension or edge that carried nothing weighs 1/1000 of the largest (the graph keeps its
 * edges). A pattern that recorded no traffic at all is not applied.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pmpi_learn.h"

#define MIN_WEIGHT RM_PATTERN_MIN_WEIGHT

void rmp_learn_warn(const rm_error_t *err, const char *what)
{
	rmp_learn_t *l = rmp_learn_ctx();
	char buf[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN + 64];

	if (l && l->warned++)
		return;
	rm_error_format(err, buf, sizeof(buf));
	fprintf(stderr, "rankmap: learn: %s; %s\n", rm_error_isset(err) ? buf : strerror(errno), what);
	fflush(stderr);
}

void rmp_learn_call_begin(rmp_call_t *call)
{
	rmp_learn_t *l = rmp_learn_ctx();

	call->observed = rmp_learn_on(); /* a learning run records every call: the full path for all */
	if (!l || !call->observed)
		return;
	rmp_learn_call_t *lc = rmp_learn_of(call);

	lc->on = 1;
	lc->order = (uint32_t)l->calls++;
	snprintf(lc->used, sizeof(lc->used), "none");
}

/* ---- the program ------------------------------------------------------------------------------- */

/* dl_iterate_phdr callback: the build-id note of the first object (the executable). */
static int build_id_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	char *out = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;

		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const unsigned char *name = p + sizeof(*nh), *desc = name + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
			    nh->n_descsz > 0 && nh->n_descsz <= 40) {
				int n = snprintf(out, RM_PATTERN_PROGRAM_LEN, "build-id:");

				for (unsigned j = 0; j < nh->n_descsz; j++)
					n += snprintf(out + n, RM_PATTERN_PROGRAM_LEN - (size_t)n, "%02x", desc[j]);
				return 1;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1; /* only the first object */
}

int rmp_learn_program(rm_pattern_key_t *k, char *path, size_t pathlen)
{
	struct stat st;
	ssize_t n = readlink("/proc/self/exe", path, pathlen - 1);

	path[n > 0 ? n : 0] = 0;
	k->uid = (uint32_t)getuid();
	k->program[0] = 0;
	if (!getenv("RANKMAP_LEARN_NO_BUILD_ID")) /* test-only: exercise the fallback */
		dl_iterate_phdr(build_id_cb, k->program);
	if (k->program[0])
		return 0;
	if (n <= 0 || stat(path, &st) != 0) {
		errno = ENOENT;
		return -1;
	}
	uint64_t h = RMP_HASH_INIT;

	for (ssize_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)path[i]) * 1099511628211ULL;
	snprintf(k->program, sizeof(k->program), "file:%016llx:%lld:%lld", (unsigned long long)h, (long long)st.st_size,
		 (long long)st.st_mtime);
	return 0;
}

/* The key of a call (root), from its function, order and shape already in k->shape. */
static int call_key(const char *fn, uint32_t order, rm_pattern_key_t *k, char *path, size_t pathlen, rm_error_t *err)
{
	if (rmp_learn_program(k, path, pathlen) != 0)
		return rm_error_set(err, "/proc/self/exe", 0, 0, "cannot identify the program");
	snprintf(k->fn, sizeof(k->fn), "%s", fn);
	k->order = order;
	return 0;
}

/* Root: the stored pattern of key k, or NULL (none, or an error already warned about). */
static rm_pattern_t *lookup(rmp_call_t *call, rm_pattern_key_t *k)
{
	char path[512];
	rm_pattern_t *p = NULL;
	rm_error_t err = { 0 };
	int rc = call_key(call->fn, rmp_learn_of(call)->order, k, path, sizeof(path), &err);

	if (rc == 0)
		rc = rmp_store_get(call->env.socket, k, &p, &err);
	if (rc < 0)
		rmp_learn_warn(&err, "continuing without a learned pattern");
	return rc > 0 ? p : NULL;
}

static void applied(rmp_call_t *call, const rm_pattern_t *p, const char *how)
{
	char id[17];

	rm_pattern_key_id(&p->key, id);
	rmp_learn_call_t *lc = rmp_learn_of(call);

	snprintf(lc->used, sizeof(lc->used), "%s%s/runs=%u", id, how, p->runs);
}

/* Whether p applies to this run (rm_pattern_usable: not while its runs drift, nor to another input at
 * the same size). When not, the report says why (learned=ID:why/runs=N), p is freed and 0 returned. */
static int usable(rmp_call_t *call, rm_pattern_t *p)
{
	rmp_learn_t *l = rmp_learn_ctx();
	const char *why = NULL;
	char how[24];

	if (rm_pattern_usable(p, call->nverts, rmp_learn_cmdline(l), &why))
		return 1;
	snprintf(how, sizeof(how), ":%s", why);
	applied(call, p, how);
	rm_pattern_free(p);
	return 0;
}

int rmp_learn_cart_weights(rmp_call_t *call, int ndims, const int periods[], double weights[])
{
	rm_pattern_key_t k;

	memset(&k, 0, sizeof(k));
	if (!rmp_learn_of(call)->on || call->env.pattern || rm_pattern_shape_cart(&k, ndims, periods) != 0)
		return 0;
	rm_pattern_t *p = lookup(call, &k);
	double w[RM_PATTERN_MAXDIMS], max = 0;

	if (!p || p->ndims != ndims) { /* the shape is in the key: a mismatch is another program's file */
		rm_pattern_free(p);
		return 0;
	}
	if (!usable(call, p))
		return 0;
	for (int d = 0; d < ndims; d++) {
		w[d] = map_metric_weight(call->env.metric, p->dim[d][0] + p->dim[d][1], p->dim[d][2] + p->dim[d][3], 1);
		max = w[d] > max ? w[d] : max;
	}
	if (!(max > 0)) {
		applied(call, p, ":empty");
		rm_pattern_free(p);
		return 0;
	}
	for (int d = 0; d < ndims; d++)
		weights[d] = w[d] / max > MIN_WEIGHT ? w[d] / max : MIN_WEIGHT;
	applied(call, p, "");
	rm_pattern_free(p);
	return 1;
}

/* Index of u among adj[lo..hi) (sorted), or -1. */
static int64_t adj_find(const uint32_t *adj, uint64_t lo, uint64_t hi, uint32_t u)
{
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (adj[mid] < u)
			lo = mid + 1;
		else if (adj[mid] > u)
			hi = mid;
		else
			return (int64_t)mid;
	}
	return -1;
}

/* Root: keeps g's structure in call and hashes it. 0 or -1 (out of memory). */
static int keep_structure(rmp_learn_call_t *lc, const map_graph_t *g)
{
	uint64_t m = g->xadj[g->n], h = rmp_hash_ints(RMP_HASH_INIT, (const int *)&g->n, 1);

	lc->xadj = malloc(sizeof(uint64_t) * (g->n + 1));
	lc->adj = malloc(sizeof(uint32_t) * (m + 1));
	if (!lc->xadj || !lc->adj) {
		free(lc->xadj), free(lc->adj);
		lc->xadj = NULL, lc->adj = NULL;
		return -1;
	}
	memcpy(lc->xadj, g->xadj, sizeof(uint64_t) * (g->n + 1));
	memcpy(lc->adj, g->adj, sizeof(uint32_t) * m);
	for (uint32_t v = 0; v < g->n; v++) {
		int deg = (int)(g->xadj[v + 1] - g->xadj[v]);

		h = rmp_hash_ints(h, &deg, 1);
		h = rmp_hash_ints(h, (const int *)&g->adj[g->xadj[v]], (size_t)deg);
	}
	lc->n = g->n, lc->hash = h;
	return 0;
}

int rmp_learn_graph_weights(rmp_call_t *call, map_graph_t *g)
{
	rm_pattern_key_t k;
	rmp_learn_call_t *lc = rmp_learn_of(call);

	if (!lc->on || !g || keep_structure(lc, g) != 0 || call->weighted || call->env.pattern)
		return 0;
	memset(&k, 0, sizeof(k));
	rm_pattern_shape_graph(&k, g->n, g->xadj[g->n], lc->hash);
	rm_pattern_t *p = lookup(call, &k);
	uint64_t m = g->xadj[g->n];
	double max = 0;

	for (uint32_t v = 0; p && p->nedges == m && v < g->n; v++) /* the very same structure, entry by entry */
		for (uint64_t e = g->xadj[v]; p && e < g->xadj[v + 1]; e++)
			if (p->ends[2 * e] != v || p->ends[2 * e + 1] != g->adj[e])
				rm_pattern_free(p), p = NULL;
	if (!p || p->nedges != m) {
		rm_pattern_free(p);
		return 0;
	}
	if (!usable(call, p))
		return 0;
	double *w = malloc(sizeof(double) * (m + 1));

	for (uint32_t v = 0; w && v < g->n; v++)
		for (uint64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
			uint32_t u = g->adj[e];
			int64_t r = adj_find(g->adj, g->xadj[u], g->xadj[u + 1], v); /* the same edge, from u */
			double b = p->edge[2 * e] + (r >= 0 ? p->edge[2 * r] : 0);
			double n = p->edge[2 * e + 1] + (r >= 0 ? p->edge[2 * r + 1] : 0);

			w[e] = map_metric_weight(call->env.metric, b, n, 1);
			max = w[e] > max ? w[e] : max;
		}
	if (w && max > 0) {
		for (uint64_t e = 0; e < m; e++)
			g->w[e] = w[e] / max > MIN_WEIGHT ? w[e] / max : MIN_WEIGHT;
		applied(call, p, "");
	} else if (w) {
		applied(call, p, ":empty");
	}
	free(w);
	rm_pattern_free(p);
	return w && max > 0;
}

/* ---- at MPI_Finalize: the run's pattern ---------------------------------------------------------- */

/* Root: merges run into the stored pattern and stores the result; warns (once) on failure. */
static void store_run(rmp_learn_rec_t *c, rm_pattern_t *run)
{
	/* the lookup's daemons: RANKMAP_SERVER, else RANKMAP_SOCKET, as for the map call */
	const char *socket = rmp_env_server();
	rm_pattern_t *stored = NULL, *merged;
	rm_error_t err = { 0 }, gerr = { 0 };
	char note[512] = "";

	/* a stored pattern that cannot be read (corrupt, truncated) is replaced, and kept as .bad */
	if (rmp_store_get(socket, &run->key, &stored, &gerr) < 0)
		stored = NULL;
	merged = rm_pattern_merge(stored, run, time(NULL));
	if (!merged) {
		rm_error_set(&err, "learn", 0, 0, "out of memory");
		rmp_learn_warn(&err, "this run's pattern was not stored");
	} else if (rmp_store_put(socket, merged, note, sizeof(note), &err) != 0) {
		rmp_learn_warn(&err, "this run's pattern was not stored");
	} else if (note[0]) {
		rmp_learn_warn(&err, note);
	} else if (rm_error_isset(&gerr)) {
		rmp_learn_warn(&gerr,
			       "the unreadable pattern was replaced by this run's (the old file is kept as .bad)");
	}
	if (merged != stored)
		rm_pattern_free(merged);
	rm_pattern_free(stored);
	(void)c;
}

/* Cartesian: counters per dimension, summed over c->priv at its root. */
static void collect_cart(rmp_learn_rec_t *c, rm_pattern_t *run)
{
	int nd = c->ndims, n = 4 * RM_PATTERN_MAXDIMS + 2; /* one size on every rank, whatever it passed */
	uint64_t in[4 * RM_PATTERN_MAXDIMS + 2] = { 0 }, out[4 * RM_PATTERN_MAXDIMS + 2] = { 0 };

	if (c->nslots == 2 * nd)
		for (int d = 0; d < nd; d++) {
			in[4 * d] = c->cnt[4 * d];         /* bytes to the -1 neighbour (slot 2d) */
			in[4 * d + 1] = c->cnt[4 * d + 2]; /* bytes to the +1 neighbour (slot 2d + 1) */
			in[4 * d + 2] = c->cnt[4 * d + 1];
			in[4 * d + 3] = c->cnt[4 * d + 3];
		}
	in[n - 2] = c->other[0], in[n - 1] = c->other[1];
	PMPI_Reduce(in, out, n, MPI_UINT64_T, MPI_SUM, 0, c->priv);
	if (c->rank != 0 || !run)
		return;
	run->ndims = nd;
	for (int d = 0; d < nd; d++)
		for (int j = 0; j < 4; j++)
			run->dim[d][j] = (double)out[4 * d + j] / c->nverts;
	run->other[0] = (double)out[n - 2] / c->nverts, run->other[1] = (double)out[n - 1] / c->nverts;
}

/* Graphs: every rank's (vertex, slots: neighbour, bytes, msgs, other) gathered at the root, which adds
 * them to the entries of the call's structure. O(edges) at the root only. */
static int collect_graph(rmp_learn_rec_t *c, rm_pattern_t *run, int size)
{
	int mine = 4 + 3 * c->nslots, *counts = NULL, *displs = NULL;
	uint64_t *buf = malloc(sizeof(uint64_t) * (size_t)mine), *all = NULL;
	long total = 0;

	if (!buf)
		mine = 0;
	if (buf) {
		buf[0] = (uint64_t)(int64_t)c->vertex, buf[1] = (uint64_t)c->nslots;
		buf[2] = c->other[0], buf[3] = c->other[1];
		for (int s = 0; s < c->nslots; s++) {
			buf[4 + 3 * s] = (uint64_t)(int64_t)c->slot_rank[s];
			buf[5 + 3 * s] = c->cnt[2 * s], buf[6 + 3 * s] = c->cnt[2 * s + 1];
		}
	}
	if (c->rank == 0) {
		counts = calloc((size_t)size, sizeof(int));
		displs = calloc((size_t)size, sizeof(int));
	}
	PMPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, c->priv);
	int go = 1;

	if (c->rank == 0) {
		for (int r = 0; counts && displs && r < size; r++)
			displs[r] = (int)total, total += counts[r];
		go = counts && displs && total < INT32_MAX && (all = malloc(sizeof(uint64_t) * (size_t)(total + 1)));
	}
	PMPI_Bcast(&go, 1, MPI_INT, 0, c->priv);
	if (go)
		PMPI_Gatherv(buf, mine, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0, c->priv);
	if (go && c->rank == 0 && run) {
		for (int r = 0; r < size; r++) {
			const uint64_t *b = all + displs[r];
			int64_t v = (int64_t)b[0];

			if (counts[r] < 4)
				continue;
			run->other[0] += (double)b[2], run->other[1] += (double)b[3];
			for (int s = 0; v >= 0 && (uint32_t)v < c->gn && s < (int)b[1] && 4 + 3 * s + 2 < counts[r];
			     s++) {
				int64_t u = (int64_t)b[4 + 3 * s],
					e = u >= 0 ? adj_find(c->adj, c->xadj[v], c->xadj[v + 1], (uint32_t)u) : -1;
				double *t = e >= 0 ? &run->edge[2 * e] : run->other;

				t[0] += (double)b[5 + 3 * s], t[1] += (double)b[6 + 3 * s];
			}
		}
		for (size_t i = 0; i < 2 * run->nedges; i++)
			run->edge[i] /= c->nverts;
		for (uint32_t v = 0; v < c->gn; v++)
			for (uint64_t e = c->xadj[v]; e < c->xadj[v + 1]; e++)
				run->ends[2 * e] = v, run->ends[2 * e + 1] = c->adj[e];
		run->other[0] /= c->nverts, run->other[1] /= c->nverts;
	}
	free(buf), free(counts), free(displs), free(all);
	return go ? 0 : -1;
}

void rmp_learn_collect(rmp_learn_rec_t *c)
{
	rm_pattern_key_t k;
	rm_pattern_t *run = NULL;
	int size = 0;

	PMPI_Comm_size(c->priv, &size);
	memset(&k, 0, sizeof(k));
	if (c->rank == 0 && c->nverts > 0 &&
	    (c->ndims ? rm_pattern_shape_cart(&k, c->ndims, c->periods) == 0 : c->xadj != NULL)) {
		char path[256];
		rm_error_t err = { 0 };

		if (!c->ndims)
			rm_pattern_shape_graph(&k, c->gn, c->xadj[c->gn], c->ghash);
		if (call_key(c->fn, c->order, &k, path, sizeof(path), &err) == 0 &&
		    (run = rm_pattern_new(&k, c->ndims ? 0 : c->xadj[c->gn]))) {
			memcpy(run->path, path, sizeof(run->path));
			run->ranks = c->nverts;
			run->cmdline = rmp_learn_cmdline(rmp_learn_ctx());
		}
	}
	int ok = 1;

	if (c->ndims)
		collect_cart(c, run);
	else
		ok = collect_graph(c, run, size) == 0;
	if (run && ok)
		store_run(c, run);
	rm_pattern_free(run);
}
