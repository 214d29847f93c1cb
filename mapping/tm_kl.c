/*
 * mapping/tm_kl.c: Kernighan-Lin passes between pairs of groups of one TreeMatch level.
 *
 * Single swaps (tm_group.c) stop at local optima that a sequence of swaps escapes: two lines of 8
 * grid points that should be two 4x2 blocks, for example. For a group A and each of the groups B it
 * talks to most, a KL pass swaps the best pair of unlocked units a times (gains may be negative on
 * the way) and keeps the best prefix when it moves traffic inside the groups. Only for arities up to
 * KL_MAX_ARITY (each pass is O(a^3) at worst).
 *
 * Cost at arity 16: a pass on two groups that found nothing is not run again while both
 * stay as they were (it would find nothing again: it reads only their members and the traffic among
 * them), and a later pass skips a group when neither it nor a group next to it changed; the pair's
 * traffic matrix is cleared, summed and updated only where it is not zero (bit masks of its rows and
 * columns); a step takes the first unlocked unit of each side in the scan order (O(a), no sorted
 * lists kept) when the two do not talk to each other, their pair being then the best, and sorts the
 * sides only otherwise (about 6 % of the steps on Cartesian graphs). The mappings are the same as
 * without these; on a 64x64x16 Cartesian graph over 16-core packages this step took 1.71 G
 * instructions, now 0.38 G (tests/bench/SCALE.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tm_private.h"

#define KL_MAX_ARITY 16
#define KL_PARTNERS 3
#define KL_PASSES 3

_Static_assert(2 * KL_MAX_ARITY <= 32, "a pair's units are bits of a uint32_t");

struct kl {
	const tm_units_t *u;
	uint32_t a, *members, *grp;
	/* loc[x]: (pair << 5) + the local index of unit x in the pair it was last in (pair: 1, 2, ...
	 * counted by kl_matrix); column 2 * KL_MAX_ARITY of m gathers the traffic to the other units */
	uint32_t *loc, pair;
	double m[2 * KL_MAX_ARITY][2 * KL_MAX_ARITY + 1], D[2 * KL_MAX_ARITY];
	/* where m is not zero: row[i] bit j, col[j] bit i (the rest of m stays zero between pairs) */
	uint32_t row[2 * KL_MAX_ARITY], col[2 * KL_MAX_ARITY + 1];
	uint32_t idx[2 * KL_MAX_ARITY];
	unsigned char side[2 * KL_MAX_ARITY], locked[2 * KL_MAX_ARITY], moved[2 * KL_MAX_ARITY];
	double *gconn;
	uint32_t *touched;
	/* ver[g] counts group g's changes; memo[g * KL_PARTNERS + i] remembers a pass (g, b) that found
	 * nothing while g and b were at versions va and vb: run again on the same groups it would find
	 * nothing again (a pass reads only the two groups' members and the traffic among them) */
	uint32_t *ver;
	/* mark[g]: the clock (improvements so far) when group g or a group next to it last changed; since[g]:
	 * the clock when g's partners were last looked at. A group neither changed nor next to a change since
	 * has the same partners, and every pass with them is known to find nothing (or it would have changed) */
	uint32_t *mark, *since, clock;
	struct kl_memo {
		uint32_t b, va, vb;
	} * memo;
};

/* Groups A and B changed: marks them and every group next to one of their units. */
static void kl_mark(struct kl *k, uint32_t A, uint32_t B)
{
	const tm_units_t *u = k->u;
	uint32_t i, g[2] = { A, B };

	k->clock++;
	for (i = 0; i < 2 * k->a; i++) {
		uint32_t x = k->members[(size_t)g[i / k->a] * k->a + i % k->a];
		uint64_t e;

		k->mark[g[i / k->a]] = k->clock;
		for (e = x < u->nreal ? u->xadj[x] : 0; x < u->nreal && e < u->xadj[x + 1]; e++)
			k->mark[k->grp[u->adj[e]]] = k->clock;
	}
}

/* 1 when the pass (A, B) is known to find nothing at the groups' current versions. */
static int kl_known_idle(const struct kl *k, uint32_t A, uint32_t B)
{
	const struct kl_memo *m = k->memo + (size_t)A * KL_PARTNERS;
	uint32_t i;

	for (i = 0; i < KL_PARTNERS; i++)
		if (m[i].b == B && m[i].va == k->ver[A] && m[i].vb == k->ver[B])
			return 1;
	return 0;
}

/* Traffic between the 2a units of groups A and B (local indices: A's members then B's). */
static void kl_matrix(struct kl *k, uint32_t A, uint32_t B)
{
	const tm_units_t *u = k->u;
	uint32_t i, a = k->a;

	for (i = 0; i < 2 * KL_MAX_ARITY; i++) { /* clears what the last pair set */
		uint32_t r = k->row[i];

		for (; r; r &= r - 1)
			k->m[i][__builtin_ctz(r)] = 0;
		k->m[i][2 * KL_MAX_ARITY] = 0;
		k->row[i] = k->col[i] = 0;
	}
	if (++k->pair >= 1u << 27) { /* the pair count would not fit in loc: starts again */
		memset(k->loc, 0, (size_t)u->n * sizeof(*k->loc));
		k->pair = 1;
	}
	for (i = 0; i < 2 * a; i++) {
		k->idx[i] = k->members[(size_t)(i < a ? A : B) * a + i % a];
		k->loc[k->idx[i]] = k->pair << 5 | i;
	}
	for (i = 0; i < 2 * a; i++) {
		uint32_t x = k->idx[i];
		uint64_t e;

		for (e = x < u->nreal ? u->xadj[x] : 0; x < u->nreal && e < u->xadj[x + 1]; e++) {
			uint32_t l = k->loc[u->adj[e]];
			/* one of the pair's units, or the column of the others (no branch to mispredict) */
			uint32_t in = -(uint32_t)(l >> 5 == k->pair), j = (in & (l & 31)) | (~in & 2 * KL_MAX_ARITY);

			k->m[i][j] += u->w[e];
			k->row[i] |= (uint32_t)((uint64_t)1 << j);
			k->col[j] |= 1u << i;
		}
	}
}

/* The order of the scan for the best pair: decreasing D, the lower index first among equals. */
static int kl_before(const struct kl *k, uint32_t x, uint32_t y)
{
	return k->D[x] > k->D[y] || (k->D[x] == k->D[y] && x < y);
}

/* Insertion sort of s[0..n) in that order: O(n) when only a few D changed since it was sorted. */
static void kl_sort(const struct kl *k, uint32_t *s, uint32_t n)
{
	uint32_t i, j, x;

	for (i = 1; i < n; i++) {
		x = s[i];
		for (j = i; j > 0 && kl_before(k, x, s[j - 1]); j--)
			s[j] = s[j - 1];
		s[j] = x;
	}
}

/* Best unlocked pair (x on side 0, y on side 1); returns its gain. Since gain <= D[x] + D[y], the
 * scan over both sides by decreasing D stops as soon as no pair can beat the best so far; it takes
 * the first best pair in that order. s0[0..n0) and s1[0..n1) are the unlocked units of each side, in
 * that order (kl_sort). */
static double kl_best_pair(const struct kl *k, const uint32_t *s0, const uint32_t *s1, uint32_t n0, uint32_t n1,
			   uint32_t *bx, uint32_t *by)
{
	uint32_t i, j;
	double best = -1e300;

	for (i = 0; i < n0; i++) {
		if (k->D[s0[i]] + k->D[s1[0]] <= best)
			break;
		for (j = 0; j < n1; j++) {
			double g;

			if (k->D[s0[i]] + k->D[s1[j]] <= best)
				break;
			if (k->u->type && k->u->type[k->idx[s0[i]]] != k->u->type[k->idx[s1[j]]])
				continue; /* typed groups keep their shapes */
			g = k->D[s0[i]] + k->D[s1[j]] - 2 * k->m[s0[i]][s1[j]];
			if (g > best)
				best = g, *bx = s0[i], *by = s1[j];
		}
	}
	return best;
}

/* The first unit of the scan order (decreasing D, lower index first) among the bits of r (not 0). */
static uint32_t kl_top(const struct kl *k, uint32_t r)
{
	uint32_t t = (uint32_t)__builtin_ctz(r);

	for (r &= r - 1; r; r &= r - 1) {
		uint32_t x = (uint32_t)__builtin_ctz(r);

		uint32_t c = -(uint32_t)(k->D[x] > k->D[t]); /* bits go up: an equal D keeps the lower index */

		t = (c & x) | (~c & t); /* (no branch to mispredict) */
	}
	return t;
}

/* The unlocked units of r, in the scan order, into s; returns how many. */
static uint32_t kl_sorted(const struct kl *k, uint32_t r, uint32_t *s)
{
	uint32_t n = 0;

	for (; r; r &= r - 1)
		s[n++] = (uint32_t)__builtin_ctz(r);
	kl_sort(k, s, n);
	return n;
}

/* The pair kl_best_pair would take from the unlocked units r0 (side 0) and r1 (side 1), and its gain.
 * Every gain is at most D[x] + D[y]: when the first unit of each side in the scan order do not talk
 * to each other (and have one type), their pair reaches that bound and comes first among the pairs
 * that do; otherwise both sides are sorted and scanned. */
static double kl_best(const struct kl *k, uint32_t r0, uint32_t r1, uint32_t *bx, uint32_t *by)
{
	uint32_t x = kl_top(k, r0), y = kl_top(k, r1), s0[KL_MAX_ARITY], s1[KL_MAX_ARITY], n0, n1;

	if (k->m[x][y] == 0 && (!k->u->type || k->u->type[k->idx[x]] == k->u->type[k->idx[y]])) {
		*bx = x, *by = y;
		return k->D[x] + k->D[y];
	}
	n0 = kl_sorted(k, r0, s0);
	n1 = kl_sorted(k, r1, s1);
	return kl_best_pair(k, s0, s1, n0, n1, bx, by);
}

/* One KL pass on groups A and B; applies the best prefix of swaps. Returns 1 when it improved. */
static int kl_pair(struct kl *k, uint32_t A, uint32_t B)
{
	uint32_t n = 2 * k->a, i, j, step, bestk = 0, sx[KL_MAX_ARITY], sy[KL_MAX_ARITY], pa = 0, pb = 0;
	uint32_t unlocked = n == 32 ? UINT32_MAX : (1u << n) - 1, r, side0 = (1u << k->a) - 1;
	double cum = 0, best = 0, tol;

	kl_matrix(k, A, B);
	for (i = 0, tol = 0; i < n; i++) { /* the sums over every j, without the zeros */
		uint32_t r = k->row[i];

		k->side[i] = i >= k->a, k->locked[i] = 0, k->moved[i] = 0, k->D[i] = 0;
		for (; r; r &= r - 1) {
			j = (uint32_t)__builtin_ctz(r);
			k->D[i] += k->m[i][j] * ((i >= k->a) != (j >= k->a) ? 1 : -1), tol += k->m[i][j];
		}
	}
	tol = 1e-12 * (tol + 1);
	for (step = 0; step < k->a; step++) {
		uint32_t x = UINT32_MAX, y = UINT32_MAX;

		cum += kl_best(k, unlocked & side0, unlocked & ~side0, &x, &y);
		if (x == UINT32_MAX)
			break; /* no pair of one type left: no later prefix can be the best */
		k->locked[x] = k->locked[y] = 1;
		sx[step] = x, sy[step] = y;
		if (cum > best + tol)
			best = cum, bestk = step + 1;
		unlocked &= ~(1u << x) & ~(1u << y);
		for (r = (k->col[x] | k->col[y]) & unlocked; r; r &= r - 1) { /* the others' D are unchanged */
			i = (uint32_t)__builtin_ctz(r);
			if (i < k->a) /* unlocked units keep their sides */
				k->D[i] += 2 * k->m[i][x] - 2 * k->m[i][y];
			else
				k->D[i] -= 2 * k->m[i][x] - 2 * k->m[i][y];
		}
		k->side[x] = 1, k->side[y] = 0;
	}
	if (!bestk)
		return 0;
	for (step = 0; step < bestk; step++)
		k->moved[sx[step]] = k->moved[sy[step]] = 1;
	for (i = 0; i < n; i++) {
		int to_b = (i >= k->a) != k->moved[i];
		uint32_t g = to_b ? B : A, p = to_b ? pb++ : pa++;

		k->members[(size_t)g * k->a + p] = k->idx[i];
		k->grp[k->idx[i]] = g;
	}
	return 1;
}

/* The KL_PARTNERS groups that group A talks to most, into out[]; returns how many. */
static uint32_t kl_partners(struct kl *k, uint32_t A, uint32_t *out)
{
	const tm_units_t *u = k->u;
	uint32_t p, nt = 0, i, n = 0;

	for (p = 0; p < k->a; p++) {
		uint32_t x = k->members[(size_t)A * k->a + p];
		uint64_t e;

		for (e = x < u->nreal ? u->xadj[x] : 0; x < u->nreal && e < u->xadj[x + 1]; e++) {
			uint32_t g = k->grp[u->adj[e]];

			/* (A itself is left out without a branch: its sum stays 0 and it is not kept) */
			k->touched[nt] = g;
			nt += (g != A) & (k->gconn[g] == 0);
			k->gconn[g] += u->w[e] * (g != A);
		}
	}
	for (n = 0; n < KL_PARTNERS; n++) {
		double bw = 0;
		uint32_t bi = UINT32_MAX;

		for (i = 0; i < nt; i++)
			if (k->gconn[k->touched[i]] > bw)
				bw = k->gconn[k->touched[i]], bi = i;
		if (bi == UINT32_MAX)
			break;
		out[n] = k->touched[bi];
		k->gconn[k->touched[bi]] = -1; /* taken */
	}
	for (i = 0; i < nt; i++)
		k->gconn[k->touched[i]] = 0;
	return n;
}

int tm_group_kl(const tm_units_t *u, uint32_t a, uint32_t *members, double deadline)
{
	struct kl *k;
	uint32_t ng = u->n / a, A, i, pass, improved = 1, partners[KL_PARTNERS];

	if (a < 2 || a > KL_MAX_ARITY || ng < 2)
		return 0;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -1;
	k->u = u, k->a = a, k->members = members;
	k->grp = malloc((size_t)u->n * sizeof(uint32_t));
	k->loc = calloc(u->n, sizeof(uint32_t));
	k->gconn = calloc(ng, sizeof(double));
	k->touched = malloc(((size_t)u->xadj[u->nreal] + 1) * sizeof(uint32_t));
	k->ver = calloc(ng, sizeof(*k->ver));
	k->memo = malloc((size_t)ng * KL_PARTNERS * sizeof(*k->memo));
	k->mark = calloc(ng, sizeof(*k->mark));
	k->since = calloc(ng, sizeof(*k->since));
	if (!k->grp || !k->loc || !k->gconn || !k->touched || !k->ver || !k->memo || !k->mark || !k->since) {
		free(k->grp), free(k->loc), free(k->gconn), free(k->touched), free(k->ver), free(k->memo),
			free(k->mark), free(k->since), free(k);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < u->n; i++)
		k->grp[members[i]] = i / a;
	for (i = 0; i < ng * KL_PARTNERS; i++)
		k->memo[i].b = UINT32_MAX;
	for (pass = 0; improved && pass < KL_PASSES; pass++) {
		improved = 0;
		for (A = 0; A < ng && (deadline >= 1e300 || map_now_ms() < deadline); A++) { /* no clock without one */
			uint32_t np;

			if (pass > 0 && k->mark[A] <= k->since[A])
				continue; /* nothing changed around A since its partners were looked at */
			k->since[A] = k->clock;
			np = kl_partners(k, A, partners);
			for (i = 0; i < np; i++) {
				uint32_t B = partners[i];

				if (kl_known_idle(k, A, B))
					continue;
				if (kl_pair(k, A, B)) {
					k->ver[A]++, k->ver[B]++;
					kl_mark(k, A, B);
					improved++;
				} else {
					k->memo[(size_t)A * KL_PARTNERS + i] =
						(struct kl_memo){ B, k->ver[A], k->ver[B] };
				}
			}
		}
	}
	free(k->grp), free(k->loc), free(k->gconn), free(k->touched), free(k->ver), free(k->memo), free(k->mark),
		free(k->since), free(k);
	return 0;
}
