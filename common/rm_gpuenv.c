/*
 * common/rm_gpuenv.c: device variables (CUDA_VISIBLE_DEVICES and the others, rm_gpuenv.h) to the GPU a
 * process drives.
 */
#include "rm_gpuenv.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_INDEX 1000000 /* no node has a million GPUs: a larger number is garbage */

/* Parses a non-negative decimal at s (at most len characters); returns it or -1. */
static long dec(const char *s, size_t len)
{
	long v = 0;

	if (len == 0 || len > 7)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v <= MAX_INDEX ? v : -1;
}

/* A UUID body: hex digits and dashes, at least one hex digit. */
static int uuid_body(const char *s, size_t len)
{
	size_t hex = 0;

	for (size_t i = 0; i < len; i++) {
		if (isxdigit((unsigned char)s[i]))
			hex++;
		else if (s[i] != '-')
			return 0;
	}
	return hex > 0;
}

/* One entry s[0..len) as a UUID: "GPU-<hex>", "MIG-GPU-<hex>/<gi>/<ci>" (its GPU), "MIG-<hex>". */
static int entry_uuid(const char *s, size_t len, rm_gpu_id_t *id)
{
	const char *slash;

	if (len >= RM_GPU_UUID_LEN)
		return -1;
	if (len > 4 && !strncasecmp(s, "GPU-", 4) && uuid_body(s + 4, len - 4)) {
		memcpy(id->uuid, s, len);
		id->uuid[len] = '\0';
		return 0;
	}
	if (len > 8 && !strncasecmp(s, "MIG-GPU-", 8)) { /* the form before CUDA 11.4: the GPU's UUID first */
		slash = memchr(s, '/', len);
		if (slash && uuid_body(s + 8, (size_t)(slash - s) - 8)) {
			memcpy(id->uuid, s + 4, (size_t)(slash - s) - 4);
			id->uuid[slash - s - 4] = '\0';
			return 0;
		}
		return -1;
	}
	if (len > 4 && !strncasecmp(s, "MIG-", 4) && uuid_body(s + 4, len - 4)) {
		memcpy(id->uuid, s, len);
		id->uuid[len] = '\0';
		return 0;
	}
	return -1;
}

/* One entry s[0..len) in syntax; 0 with id filled (ids may be NULL: only checked), 1 for a Slurm range
 * (*hi its end), -1 when it is no device. */
static int entry_parse(const char *s, size_t len, rm_gpu_syntax_t syntax, rm_gpu_id_t *id, long *hi)
{
	const char *dot, *dash;
	long v;

	*id = (rm_gpu_id_t){ .index = -1, .sub = -1 };
	while (len && isspace((unsigned char)*s))
		s++, len--;
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if ((v = dec(s, len)) >= 0) {
		id->index = (int32_t)v;
		return 0;
	}
	switch (syntax) {
	case RM_GPU_SYNTAX_CUDA:
	case RM_GPU_SYNTAX_ROCR: return entry_uuid(s, len, id);
	case RM_GPU_SYNTAX_ZE:
		dot = memchr(s, '.', len);
		if (!dot || (v = dec(s, (size_t)(dot - s))) < 0)
			return -1;
		id->index = (int32_t)v;
		/* a sub-sub-device (0.1.2, tiles of a tile) keeps only its tile */
		const char *dot2 = memchr(dot + 1, '.', len - (size_t)(dot + 1 - s));
		size_t sl = dot2 ? (size_t)(dot2 - dot - 1) : len - (size_t)(dot + 1 - s);

		if ((v = dec(dot + 1, sl)) < 0 || (dot2 && dec(dot2 + 1, len - (size_t)(dot2 + 1 - s)) < 0))
			return -1;
		id->sub = (int32_t)v;
		return 0;
	case RM_GPU_SYNTAX_SLURM:
		dash = memchr(s, '-', len);
		if (!dash || (v = dec(s, (size_t)(dash - s))) < 0 ||
		    (*hi = dec(dash + 1, len - (size_t)(dash + 1 - s))) < v)
			return -1;
		id->index = (int32_t)v;
		return 1;
	default: return -1;
	}
}

int rm_gpu_list_parse(const char *name, const char *value, rm_gpu_syntax_t syntax, rm_gpu_id_t *ids, size_t max,
		      size_t *n, rm_error_t *err)
{
	const char *p = value;

	*n = 0;
	if (!value || !strcmp(value, "NoDevFiles"))
		return 0;
	while (*p == ' ')
		p++;
	if (!*p)
		return 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		rm_gpu_id_t id;
		long hi = 0;
		int rc = entry_parse(p, len, syntax, &id, &hi);

		if (rc < 0) {
			/* CUDA: the first invalid entry ends the list, the devices before it stay visible */
			if (syntax == RM_GPU_SYNTAX_CUDA && *n > 0)
				return 0;
			errno = EINVAL;
			return rm_error_set(err, name, 0, (int)(p - value) + 1, "'%.*s' names no device in '%s'",
					    (int)(len < 40 ? len : 40), p, value);
		}
		for (long i = id.index; rc == 0 || i <= hi; i++) {
			if (*n < max) {
				ids[*n] = id;
				ids[*n].index = rc == 1 ? (int32_t)i : id.index;
			}
			(*n)++;
			if (rc == 0 || *n > MAX_INDEX)
				break;
		}
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/* ---- the pick ---- */

static const struct {
	const char *name;
	rm_gpu_syntax_t syntax;
} runtime_vars[] = {
	{ "CUDA_VISIBLE_DEVICES", RM_GPU_SYNTAX_CUDA }, { "ROCR_VISIBLE_DEVICES", RM_GPU_SYNTAX_ROCR },
	{ "HIP_VISIBLE_DEVICES", RM_GPU_SYNTAX_ROCR },  { "GPU_DEVICE_ORDINAL", RM_GPU_SYNTAX_INDEX },
	{ "ZE_AFFINITY_MASK", RM_GPU_SYNTAX_ZE },
};

#define SLURM_MAX 4096 /* GPUs of a step on one node that are looked at */

/* The step's (else the job's) GPUs on this node, Slurm's global indices: count (0: none set), ids in g. */
static int slurm_gpus(const char *(*get)(const char *, void *), void *arg, rm_gpu_id_t *g, size_t *n, const char **name,
		      rm_error_t *err)
{
	const char *v;

	*n = 0;
	*name = "SLURM_STEP_GPUS";
	if (!(v = get(*name, arg))) {
		*name = "SLURM_JOB_GPUS";
		v = get(*name, arg);
	}
	if (!v)
		return 0;
	return rm_gpu_list_parse(*name, v, RM_GPU_SYNTAX_SLURM, g, SLURM_MAX, n, err);
}

/* An index i read from a runtime variable, against Slurm's list g (n entries): the global index, or -1
 * (ambiguous or impossible) with err set. */
static long resolve_index(long i, const rm_gpu_id_t *g, size_t n, const char *gname, const char *src, rm_error_t *err)
{
	int in = 0;
	size_t m = n < SLURM_MAX ? n : SLURM_MAX;

	if (n == 0)
		return i;
	for (size_t k = 0; k < m && !in; k++)
		in = g[k].index == i;
	if (in && ((size_t)i >= m || g[i].index == i))
		return i;
	if (!in && (size_t)i < m)
		return g[i].index;
	errno = EINVAL;
	if (in)
		rm_error_set(err, src, 0, 0,
			     "index %ld is both a global GPU of %s and a position in it (GPU %d): ambiguous", i, gname,
			     g[i].index);
	else
		rm_error_set(err, src, 0, 0, "index %ld is neither a GPU of %s nor a position in it (%zu GPUs)", i,
			     gname, m);
	return -1;
}

/* Fills pick from a runtime variable's single device (index already global, or UUID). */
static void pick_set(rm_gpu_pick_t *pick, const rm_gpu_id_t *id, long global, const char *name, const char *value)
{
	pick->id = *id;
	if (id->uuid[0]) {
		pick->ns = RM_GPU_NS_UUID;
	} else {
		pick->ns = RM_GPU_NS_PCI;
		pick->id.index = (int32_t)global;
	}
	snprintf(pick->source, sizeof(pick->source), "%s=%.*s", name, (int)(sizeof(pick->source) / 2), value);
}

/* Whether two picks name the same device. */
static int same(const rm_gpu_pick_t *a, const rm_gpu_pick_t *b)
{
	if (a->ns != b->ns)
		return 0;
	return a->ns == RM_GPU_NS_UUID
		       ? rm_gpu_uuid_match(a->id.uuid, b->id.uuid) || rm_gpu_uuid_match(b->id.uuid, a->id.uuid)
		       : a->id.index == b->id.index;
}

int rm_gpu_env_pick(const char *(*get)(const char *name, void *arg), void *arg, rm_gpu_pick_t *pick, rm_error_t *err)
{
	rm_gpu_id_t *g = malloc(sizeof(*g) * SLURM_MAX), one;
	rm_gpu_pick_t uuid = { 0 }, idx = { 0 }, cur;
	const char *gname, *several = NULL, *sv = NULL;
	size_t ng = 0, n;
	int set = 0, rc = -1;

	memset(pick, 0, sizeof(*pick));
	if (!g)
		return rm_error_set(err, "GPU variables", 0, 0, "out of memory");
	if (slurm_gpus(get, arg, g, &ng, &gname, err) < 0)
		goto out;
	for (size_t k = 0; k < sizeof(runtime_vars) / sizeof(runtime_vars[0]); k++) {
		const char *name = runtime_vars[k].name, *v = get(name, arg);
		long gi = 0;

		if (!v)
			continue;
		set++;
		if (rm_gpu_list_parse(name, v, runtime_vars[k].syntax, &one, 1, &n, err) < 0)
			goto out;
		if (n != 1) {
			if (!several)
				several = name, sv = v;
			continue;
		}
		if (!one.uuid[0] && (gi = resolve_index(one.index, g, ng, gname, name, err)) < 0)
			goto out;
		pick_set(&cur, &one, gi, name, v);
		rm_gpu_pick_t *slot = cur.ns == RM_GPU_NS_UUID ? &uuid : &idx;

		if (slot->ns && !same(slot, &cur)) {
			errno = EINVAL;
			rm_error_set(err, "GPU variables", 0, 0, "%s and %s name different devices", slot->source,
				     cur.source);
			goto out;
		}
		if (!slot->ns)
			*slot = cur;
	}
	if (uuid.ns || idx.ns) {
		*pick = uuid.ns ? uuid : idx;
		rc = 1;
	} else if (several) {
		errno = EINVAL;
		rm_error_set(err, several, 0, 0, "%s: %s", sv,
			     *sv && strcmp(sv, "NoDevFiles")
				     ? "several devices are visible: which one the process drives "
				       "is its own choice"
				     : "no device is visible");
	} else if (!set && ng == 1) {
		pick->ns = RM_GPU_NS_PCI;
		pick->id = g[0];
		snprintf(pick->source, sizeof(pick->source), "%s=%d", gname, g[0].index);
		rc = 1;
	} else if (!set && ng > 1) {
		errno = EINVAL;
		rm_error_set(err, gname, 0, 0,
			     "%zu GPUs on this node and no device variable says which one the "
			     "process drives",
			     ng);
	} else {
		rc = 0;
	}
out:
	free(g);
	return rc;
}

/* ---- UUIDs ---- */

int rm_gpu_uuid_match(const char *want, const char *uuid)
{
	size_t n;

	if (!want || !uuid)
		return 0;
	if (!strncasecmp(want, "GPU-", 4))
		want += 4;
	if (!strncasecmp(uuid, "GPU-", 4))
		uuid += 4;
	n = strlen(want);
	return n > 0 && strlen(uuid) >= n && !strncasecmp(want, uuid, n);
}
