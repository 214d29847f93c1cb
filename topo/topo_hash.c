/*
 * topo/topo_hash.c: the hash of topo/ (host names, node type keys, fabric signatures, diff references)
 * and a small string set for duplicate checks inside one load. Calls nothing else of topo/.
 */
#include <stdlib.h>
#include <string.h>

#include "cluster_private.h"

/* Eight bytes at a time (multiply and fold), the tail byte by byte (FNV-1a): node type keys hash whole
 * XML files, so this is on the load path of every host. */
uint64_t topo_hash_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
		h ^= h >> 29;
	}
	for (; len > 0; s++, len--) {
		h ^= *s;
		h *= 1099511628211ULL;
	}
	return h;
}

static uint64_t hash_name(const char *s)
{
	return topo_hash_bytes(TOPO_HASH_SEED, s, strlen(s));
}

struct topo_nameset {
	char **slot;
	size_t cap, n;
};

struct topo_nameset *topo_nameset_create(size_t hint)
{
	struct topo_nameset *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cap = 64;
	while (s->cap < hint * 2)
		s->cap *= 2;
	s->slot = calloc(s->cap, sizeof(*s->slot));
	if (!s->slot) {
		free(s);
		return NULL;
	}
	return s;
}

static void nameset_put(char **slot, size_t cap, char *name)
{
	size_t i = hash_name(name) & (cap - 1);

	while (slot[i])
		i = (i + 1) & (cap - 1);
	slot[i] = name;
}

int topo_nameset_add(struct topo_nameset *s, const char *name)
{
	size_t i, m = s->cap - 1;
	char *copy;

	for (i = hash_name(name) & m; s->slot[i]; i = (i + 1) & m)
		if (!strcmp(s->slot[i], name))
			return 0;
	if ((s->n + 1) * 2 > s->cap) {
		char **n = calloc(s->cap * 2, sizeof(*n));

		if (!n)
			return -1;
		for (i = 0; i < s->cap; i++)
			if (s->slot[i])
				nameset_put(n, s->cap * 2, s->slot[i]);
		free(s->slot);
		s->slot = n;
		s->cap *= 2;
	}
	copy = strdup(name);
	if (!copy)
		return -1;
	nameset_put(s->slot, s->cap, copy);
	s->n++;
	return 1;
}

void topo_nameset_destroy(struct topo_nameset *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->cap; i++)
		free(s->slot[i]);
	free(s->slot);
	free(s);
}
