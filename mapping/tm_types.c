/*
 * mapping/tm_types.c: TreeMatch on irregular targets and with spare slots.
 *
 * TreeMatch groups units into groups of the tree's arity. When the target embeds in its uniform tree
 * with holes (hosts of different sizes or shapes), or there are fewer ranks than slots, groups must
 * also have the right shape: a group bound for an 8-core host must not hold 16 ranks. Quotas decide
 * how many ranks go under each virtual position (compactly: children with the most real slots
 * first), and a position's type is the multiset of its children's types. The grouping of each level
 * then forms, for every position of the level above, a group whose members have exactly that
 * position's child types (tm_group_typed), and the swaps of tm_group.c / tm_kl.c only trade units of
 * one type. Positions of one type are interchangeable, so the top-down placement matches types.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tm_private.h"

void tm_types_free(tm_types_t *ty)
{
	int d;

	for (d = 0; d < 64; d++)
		free(ty->ptype[d]), free(ty->child[d]), free(ty->load[d]), free(ty->count[d]);
	memset(ty, 0, sizeof(*ty));
}

static uint64_t npos(const struct tm_tree *tr, int d)
{
	uint64_t p = 1;
	int k;

	for (k = 1; k <= d; k++)
		p *= tr->A[k];
	return p;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Real slots under every position (cap[d]) and the quota of ranks of each (quota[d]). */
static int quotas(const struct tm_tree *tr, const uint32_t *vslot, uint64_t V, uint32_t n, uint32_t **cap,
		  uint32_t **quota)
{
	int d, L = tr->L;
	uint64_t i;

	for (d = 0; d < L; d++) {
		cap[d] = calloc(npos(tr, d) + 1, sizeof(uint32_t));
		quota[d] = calloc(npos(tr, d) + 1, sizeof(uint32_t));
		if (!cap[d] || !quota[d])
			return -1;
	}
	for (i = 0; i < V; i++)
		cap[L - 1][i] = vslot[i] != UINT32_MAX;
	for (d = L - 1; d > 0; d--)
		for (i = 0; i < npos(tr, d); i++)
			cap[d - 1][i / tr->A[d]] += cap[d][i];
	quota[0][0] = n;
	for (d = 0; d + 1 < L; d++) {
		uint32_t a = tr->A[d + 1], idx[4096];

		if (a > 4096)
			return -1;
		for (i = 0; i < npos(tr, d); i++) {
			uint32_t rem = quota[d][i], k, j;

			for (k = 0; k < a; k++) { /* children by capacity, largest first (stable) */
				for (j = k; j > 0 && cap[d + 1][i * a + idx[j - 1]] < cap[d + 1][i * a + k]; j--)
					idx[j] = idx[j - 1];
				idx[j] = k;
			}
			for (k = 0; k < a; k++) {
				uint32_t c = cap[d + 1][i * a + idx[k]], q = rem < c ? rem : c;

				quota[d + 1][i * a + idx[k]] = q;
				rem -= q;
			}
		}
	}
	return 0;
}

/* Types of depth d from the types of depth d + 1. */
static int types_of_depth(tm_types_t *ty, const struct tm_tree *tr, int d, const uint32_t *quota)
{
	uint32_t a = tr->A[d + 1], *list = malloc((a + 1) * sizeof(*list)), cap = 16, t;
	uint64_t i, np = npos(tr, d), *hash = malloc(cap * sizeof(*hash));

	ty->ptype[d] = malloc((np + 1) * sizeof(uint32_t));
	ty->child[d] = malloc((size_t)cap * a * sizeof(uint32_t));
	ty->load[d] = malloc(cap * sizeof(uint32_t));
	ty->count[d] = calloc(cap, sizeof(uint32_t));
	if (!list || !hash || !ty->ptype[d] || !ty->child[d] || !ty->load[d] || !ty->count[d])
		goto oom;
	for (i = 0; i < np; i++) {
		uint64_t h = 1469598103934665603ull;
		uint32_t k;

		for (k = 0; k < a; k++)
			list[k] = ty->ptype[d + 1][i * a + k];
		qsort(list, a, sizeof(*list), cmp_u32);
		for (k = 0; k < a; k++)
			h = (h ^ list[k]) * 1099511628211ull;
		for (t = 0; t < ty->ntypes[d]; t++)
			if (hash[t] == h && !memcmp(ty->child[d] + (size_t)t * a, list, a * sizeof(*list)))
				break;
		if (t == ty->ntypes[d]) { /* a new type */
			if (t == cap) {
				uint32_t *nc, *nl, *nn;
				uint64_t *nh;

				cap *= 2;
				nc = realloc(ty->child[d], (size_t)cap * a * sizeof(uint32_t));
				ty->child[d] = nc ? nc : ty->child[d];
				nl = realloc(ty->load[d], cap * sizeof(uint32_t));
				ty->load[d] = nl ? nl : ty->load[d];
				nn = realloc(ty->count[d], cap * sizeof(uint32_t));
				ty->count[d] = nn ? nn : ty->count[d];
				nh = realloc(hash, cap * sizeof(*hash));
				hash = nh ? nh : hash;
				if (!nc || !nl || !nn || !nh)
					goto oom;
			}
			memcpy(ty->child[d] + (size_t)t * a, list, a * sizeof(*list));
			hash[t] = h, ty->load[d][t] = quota[i], ty->count[d][t] = 0;
			ty->ntypes[d]++;
		}
		ty->ptype[d][i] = t;
		ty->count[d][t]++;
	}
	free(list), free(hash);
	return 0;
oom:
	free(list), free(hash);
	return -1;
}

int tm_types_build(tm_types_t *ty, const struct tm_tree *tr, const uint32_t *vslot, uint64_t V, uint32_t n)
{
	uint32_t *cap[64] = { 0 }, *quota[64] = { 0 };
	int d, L = tr->L, rc = -1, uniform = 1;
	uint64_t i;

	memset(ty, 0, sizeof(*ty));
	ty->L = L;
	if (quotas(tr, vslot, V, n, cap, quota) < 0)
		goto out;
	ty->ptype[L - 1] = malloc((V + 1) * sizeof(uint32_t));
	ty->load[L - 1] = malloc(2 * sizeof(uint32_t));
	ty->count[L - 1] = calloc(2, sizeof(uint32_t));
	if (!ty->ptype[L - 1] || !ty->load[L - 1] || !ty->count[L - 1])
		goto out;
	ty->ntypes[L - 1] = 2, ty->load[L - 1][0] = 0, ty->load[L - 1][1] = 1;
	for (i = 0; i < V; i++)
		ty->count[L - 1][ty->ptype[L - 1][i] = quota[L - 1][i]]++;
	for (d = L - 2; d >= 0; d--)
		if (types_of_depth(ty, tr, d, quota[d]) < 0)
			goto out;
	for (d = 0; d < L - 1; d++)
		uniform &= ty->ntypes[d] == 1;
	rc = !uniform || ty->count[L - 1][0] > 0; /* leaves: spare slots or holes make it typed */
out:
	for (d = 0; d < L; d++)
		free(cap[d]), free(quota[d]);
	if (rc < 0) {
		tm_types_free(ty);
		errno = ENOMEM;
	}
	return rc;
}

struct typed {
	tm_grow_t g;
	uint32_t *pool, *start, *cursor, *need; /* units by type (degree order), per-type cursors */
};

static int by_type_deg(const void *a, const void *b, void *arg)
{
	const struct typed *s = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (s->g.u->type[x] != s->g.u->type[y])
		return s->g.u->type[x] < s->g.u->type[y] ? -1 : 1;
	if (s->g.deg[x] != s->g.deg[y])
		return s->g.deg[x] > s->g.deg[y] ? -1 : 1;
	return (x > y) - (x < y);
}

/* The free candidate most connected to the group among the types still needed, else the first free
 * unit of the needed type with the most ranks. */
static uint32_t typed_pick(struct typed *s, const tm_types_t *ty, int l)
{
	uint32_t i, best = UINT32_MAX, t, bt = UINT32_MAX;

	double bscore = -1;

	for (i = 0; i < s->g.ncand; i++) {
		uint32_t y = s->g.cand[i];
		double score;

		if (s->g.used[y] || !s->need[s->g.u->type[y]])
			continue;
		if (best != UINT32_MAX && s->g.conn[y] < s->g.conn[best])
			continue;
		score = tm_grow_lookahead(&s->g, y); /* ties: closes squares and cubes, as tm_group.c does */
		if (best == UINT32_MAX || s->g.conn[y] > s->g.conn[best] || score > bscore ||
		    (score == bscore && s->g.deg[y] < s->g.deg[best]))
			best = y, bscore = score;
	}
	if (best != UINT32_MAX)
		return best;
	for (t = 0; t < ty->ntypes[l]; t++)
		if (s->need[t] && (bt == UINT32_MAX || ty->load[l][t] > ty->load[l][bt]))
			bt = t;
	if (bt == UINT32_MAX)
		return UINT32_MAX;
	while (s->cursor[bt] < s->start[bt + 1] && s->g.used[s->pool[s->cursor[bt]]])
		s->cursor[bt]++;
	return s->cursor[bt] < s->start[bt + 1] ? s->pool[s->cursor[bt]] : UINT32_MAX;
}

static int typed_init(struct typed *s, const tm_units_t *u, const tm_types_t *ty, int l)
{
	uint32_t i, nt = ty->ntypes[l];

	s->g.deg = calloc(u->n + 1, sizeof(double));
	s->g.conn = calloc(u->n + 1, sizeof(double));
	s->g.used = calloc(u->n + 1, 1);
	s->g.cand = malloc(((size_t)u->xadj[u->nreal] + 1) * sizeof(uint32_t));
	s->pool = malloc(((size_t)u->n + 1) * sizeof(uint32_t));
	s->start = calloc(nt + 2, sizeof(uint32_t));
	s->cursor = calloc(nt + 1, sizeof(uint32_t));
	s->need = calloc(nt + 1, sizeof(uint32_t));
	if (!s->g.deg || !s->g.conn || !s->g.used || !s->g.cand || !s->pool || !s->start || !s->cursor || !s->need)
		return -1;
	for (i = 0; i < u->nreal; i++)
		for (uint64_t k = u->xadj[i]; k < u->xadj[i + 1]; k++)
			s->g.deg[i] += u->w[k];
	for (i = 0; i < u->n; i++) {
		if (u->type[i] >= nt)
			return -1;
		s->pool[i] = i;
		s->start[u->type[i] + 1]++;
	}
	qsort_r(s->pool, u->n, sizeof(uint32_t), by_type_deg, s);
	for (i = 0; i < nt; i++)
		s->start[i + 1] += s->start[i], s->cursor[i] = s->start[i];
	return 0;
}

static void typed_free(struct typed *s)
{
	free(s->g.deg), free(s->g.conn), free(s->g.used), free(s->g.cand), free(s->pool), free(s->start),
		free(s->cursor);
	free(s->need);
}

int tm_group_typed(const tm_units_t *u, uint32_t a, uint32_t *members, const tm_types_t *ty, int l, uint32_t *gtype)
{
	struct typed s = { .g = { .u = u, .members = members } };
	uint32_t T, c, i, g = 0, *order = malloc((ty->ntypes[l - 1] + 1) * sizeof(*order));
	int rc = typed_init(&s, u, ty, l);

	for (T = 0; order && T < ty->ntypes[l - 1]; T++) { /* group types with most ranks first */
		for (i = T; i > 0 && ty->load[l - 1][order[i - 1]] < ty->load[l - 1][T]; i--)
			order[i] = order[i - 1];
		order[i] = T;
	}
	for (i = 0; rc == 0 && order && i < ty->ntypes[l - 1]; i++) {
		T = order[i];
		for (c = 0; rc == 0 && c < ty->count[l - 1][T]; c++, g++) {
			uint32_t k;

			for (k = 0; k < a; k++)
				s.need[ty->child[l - 1][(size_t)T * a + k]]++;
			for (k = 0; rc == 0 && k < a; k++) {
				uint32_t y = typed_pick(&s, ty, l);

				if (y == UINT32_MAX)
					rc = -1; /* the unit types do not add up: cannot happen when built by tm_types */
				else
					s.need[u->type[y]]--, tm_grow_add(&s.g, y);
			}
			for (k = 0; k < s.g.ncand; k++)
				s.g.conn[s.g.cand[k]] = 0;
			s.g.ncand = 0;
			gtype[g] = T;
		}
	}
	if (!order)
		rc = -1;
	free(order);
	typed_free(&s);
	return rc;
}
