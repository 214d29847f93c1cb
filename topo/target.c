/*
 * topo/target.c: targets from Scotch tleaf strings, their tleaf form, and destruction.
 *
 * "tleaf N a1 c1 ... aN cN" has N levels below the root; level i has arity a_i and c_i is the distance
 * between slots that first differ at level i. In a topo_target_t, level 0 is the root and level N the
 * slots: cost[i - 1] = c_i (the deepest level the two slots share is i - 1) and cost[N] = 0.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

#define TLEAF_MAX_SLOTS (1u << 22) /* 4,194,304 slots: a million-rank job with room */

void topo_target_destroy(topo_target_t *t)
{
	int l;
	uint32_t h;

	if (!t)
		return;
	if (t->level_name)
		for (l = 0; l < t->nlevels; l++)
			free(t->level_name[l]);
	if (t->host_name)
		for (h = 0; h < t->nhosts; h++)
			free(t->host_name[h]);
	if (t->net_free && t->net_ctx)
		t->net_free(t->net_ctx);
	if (t->host_free && t->host_ctx)
		t->host_free(t->host_ctx);
	topo_links_free(t->links);
	free(t->level_name);
	free(t->host_name);
	free(t->group);
	free(t->ngroups);
	free(t->cost);
	free(t->kind);
	free(t->slot_host);
	free(t->slot);
	free(t->slot_pu_os);
	free(t->slot_gpu);
	free(t->given);
	free(t->warning);
	free(t);
}

/* Reads the next whitespace-separated number of a tleaf string; field names it in errors. */
static int tleaf_number(const char **p, const char *s, const char *field, int integer, double *out, rm_error_t *err)
{
	char *q;
	double v;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	if (**p == '\0')
		return rm_error_set(err, field, 0, (int)(*p - s) + 1, "missing value in tleaf string");
	errno = 0;
	v = strtod(*p, &q);
	if (q == *p || errno || (*q && *q != ' ' && *q != '\t') || !isfinite(v) || v < 0 ||
	    (integer && (v != floor(v) || v < 1)))
		return rm_error_set(err, field, 0, (int)(*p - s) + 1, "expected %s in tleaf string",
				    integer ? "a positive integer" : "a non-negative number");
	*p = q;
	*out = v;
	return 0;
}

static topo_target_t *tleaf_alloc(int nlevels, uint32_t nslots)
{
	topo_target_t *t = calloc(1, sizeof(*t));
	int l;

	if (!t)
		return NULL;
	t->nslots = nslots;
	t->nlevels = nlevels;
	t->host_level = -1;
	t->group = malloc((size_t)nslots * nlevels * sizeof(*t->group));
	t->ngroups = calloc(nlevels, sizeof(*t->ngroups));
	t->cost = calloc(nlevels, sizeof(*t->cost));
	t->kind = calloc(nlevels, sizeof(*t->kind));
	t->level_name = calloc(nlevels, sizeof(*t->level_name));
	if (!t->group || !t->ngroups || !t->cost || !t->kind || !t->level_name) {
		topo_target_destroy(t);
		return NULL;
	}
	for (l = 0; l < nlevels; l++) {
		char name[32];

		snprintf(name, sizeof(name), l == 0 ? "root" : l == nlevels - 1 ? "slot" : "level%d", l);
		t->level_name[l] = strdup(name);
		t->kind[l] = l == 0 ? TOPO_LEVEL_ROOT : TOPO_LEVEL_OTHER;
		if (!t->level_name[l]) {
			topo_target_destroy(t);
			return NULL;
		}
	}
	return t;
}

topo_target_t *topo_target_from_tleaf(const char *s, rm_error_t *err)
{
	double nlev, ar[64], co[64], slots = 1;
	const char *p = s;
	topo_target_t *t;
	uint32_t sl, below;
	int i, l, n;

	if (!s || strncmp(s, "tleaf", 5) || (s[5] != ' ' && s[5] != '\t')) {
		rm_error_set(err, "tleaf", 0, 1, "expected 'tleaf N a1 c1 ... aN cN'");
		errno = EINVAL;
		return NULL;
	}
	p = s + 5;
	if (tleaf_number(&p, s, "tleaf levels", 1, &nlev, err) < 0 ||
	    (nlev > 63 && rm_error_set(err, "tleaf levels", 0, 0, "at most 63 levels") < 0))
		goto inval;
	n = (int)nlev;
	for (i = 0; i < n; i++) {
		char f1[48], f2[48];

		snprintf(f1, sizeof(f1), "tleaf arity of level %d", i + 1);
		snprintf(f2, sizeof(f2), "tleaf cost of level %d", i + 1);
		if (tleaf_number(&p, s, f1, 1, &ar[i], err) < 0 || tleaf_number(&p, s, f2, 0, &co[i], err) < 0)
			goto inval;
		slots *= ar[i];
		if (slots > TLEAF_MAX_SLOTS) {
			rm_error_set(err, f1, 0, 0, "more than %u slots", TLEAF_MAX_SLOTS);
			goto inval;
		}
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p) {
		rm_error_set(err, "tleaf", 0, (int)(p - s) + 1, "unexpected text after level %d", n);
		goto inval;
	}
	t = tleaf_alloc(n + 1, (uint32_t)slots);
	if (!t) {
		rm_error_set(err, "tleaf", 0, 0, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	below = t->nslots;
	for (l = 0; l <= n; l++) {
		if (l > 0)
			below /= (uint32_t)ar[l - 1];
		t->ngroups[l] = t->nslots / below;
		t->cost[l] = l < n ? co[l] : 0;
		for (sl = 0; sl < t->nslots; sl++)
			t->group[(size_t)sl * t->nlevels + l] = sl / below;
	}
	return t;
inval:
	errno = EINVAL;
	return NULL;
}

/* Arity of every group of level l (l >= 1) under its parent, or 0 when groups differ. */
static uint32_t uniform_arity(const topo_target_t *t, int l)
{
	uint32_t *count = calloc(t->ngroups[l - 1], sizeof(*count));
	unsigned char *seen = calloc(t->ngroups[l], 1);
	uint32_t s, a = 0, g;

	if (!count || !seen) {
		free(count), free(seen);
		return 0;
	}
	for (s = 0; s < t->nslots; s++) {
		const uint32_t *gr = t->group + (size_t)s * t->nlevels;

		if (!seen[gr[l]]) {
			seen[gr[l]] = 1;
			count[gr[l - 1]]++;
		}
	}
	a = count[0];
	for (g = 1; g < t->ngroups[l - 1]; g++)
		if (count[g] != a)
			a = 0;
	free(count), free(seen);
	return a;
}

int topo_target_tleaf_string(const topo_target_t *t, char *buf, size_t len)
{
	size_t off;
	int l, k;

	if (!t || !buf || t->net_dist || t->slot_net_dist || t->slot_host_dist || t->nlevels < 2) {
		errno = EINVAL;
		return -1;
	}
	off = (size_t)snprintf(buf, len, "tleaf %d", t->nlevels - 1);
	for (l = 1; l < t->nlevels; l++) {
		uint32_t a = uniform_arity(t, l);

		if (!a) {
			errno = EINVAL;
			return -1;
		}
		k = snprintf(buf + (off < len ? off : len), off < len ? len - off : 0, " %u %.15g", a, t->cost[l - 1]);
		off += (size_t)k;
	}
	if (off >= len) {
		errno = ENOSPC;
		return -1;
	}
	return 0;
}
