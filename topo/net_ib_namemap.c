/*
 * topo/net_ib_namemap.c: node-name maps as ibnetdiscover --node-name-map reads them:
 *
 *   # comment
 *   0x0002c903000c8c90 "node001"
 *   0002c903000c8c91   node001      (bare hex GUID, unquoted one-word name)
 *
 * A GUID is a node GUID or a port GUID. A map is applied all or nothing; a later map overrides the
 * names an earlier one gave.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"

struct entry {
	uint64_t guid;
	char *name;
	int line;
};

static int bad(rm_error_t *err, const char *path, int line, int col, const char *what)
{
	errno = EINVAL;
	return rm_error_set(err, path, line, col, "malformed node-name map line: %s", what);
}

/* Parses one non-comment line into e (name malloc'd); -1 with err set. */
static int parse_entry(const char *path, int line, const char *s, struct entry *e, rm_error_t *err)
{
	const char *p = s, *q, *end;

	if (ib_parse_guid(&p, &e->guid) < 0 || (*p && *p != ' ' && *p != '\t'))
		return bad(err, path, line, 1, "expected a GUID (0x...) followed by a name");
	if (!*ib_skip_ws(p) || *ib_skip_ws(p) == '#')
		return bad(err, path, line, (int)(p - s) + 1, "missing name after the GUID");
	p = ib_skip_ws(p);
	if (*p == '"') {
		q = strchr(++p, '"');
		if (!q)
			return bad(err, path, line, (int)(p - s), "unterminated quoted name");
		end = q + 1;
	} else {
		for (q = p; *q && *q != ' ' && *q != '\t' && *q != '#'; q++)
			;
		end = q;
	}
	if (q == p)
		return bad(err, path, line, (int)(p - s) + 1, "empty name");
	end = ib_skip_ws(end);
	if (*end && *end != '#')
		return bad(err, path, line, (int)(end - s) + 1, "unexpected text after the name");
	e->name = ib_strndup(p, (size_t)(q - p));
	if (!e->name) {
		errno = ENOMEM;
		return rm_error_set(err, path, line, 0, "out of memory");
	}
	e->line = line;
	return 0;
}

static void free_entries(struct entry *v, size_t n)
{
	while (n)
		free(v[--n].name);
	free(v);
}

static int read_entries(const char *path, char *buf, size_t len, struct entry **out, size_t *n, rm_error_t *err)
{
	struct ib_lines ln = { buf, buf + len, 0 };
	struct entry *v = NULL, *nv;
	size_t cap = 0;
	char *s;

	*n = 0;
	while ((s = ib_next_line(&ln))) {
		s = (char *)ib_skip_ws(s);
		if (!*s || *s == '#')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				errno = ENOMEM;
				rm_error_set(err, path, ln.lineno, 0, "out of memory");
				goto fail;
			}
			v = nv;
		}
		if (parse_entry(path, ln.lineno, s, &v[*n], err) < 0)
			goto fail;
		(*n)++;
	}
	*out = v;
	return 0;
fail:
	free_entries(v, *n);
	return -1;
}

/* One GUID, one name inside a map. */
static int check_dups(const char *path, const struct entry *v, size_t n, rm_error_t *err)
{
	struct ib_u64map seen = { 0 };
	size_t i;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		uint32_t j = ib_u64map_get(&seen, v[i].guid);

		if (j != IB_NONE && strcmp(v[j].name, v[i].name)) {
			errno = EINVAL;
			rc = rm_error_set(err, path, v[i].line, 1, "GUID 0x%016llx already named \"%s\" at line %d",
					  (unsigned long long)v[i].guid, v[j].name, v[j].line);
		} else if (ib_u64map_put(&seen, v[i].guid, (uint32_t)i) < 0) {
			errno = ENOMEM;
			rc = rm_error_set(err, path, v[i].line, 0, "out of memory");
		}
	}
	ib_u64map_free(&seen);
	return rc;
}

/* Builds the merged map aside and swaps it in, so that a failure leaves f as it was. */
static int commit(struct topo_fabric *f, struct entry *v, size_t n)
{
	size_t i, total = f->nmap_names + n;
	struct ib_u64map m = { 0 };
	char **names = malloc((total ? total : 1) * sizeof(*names));

	if (!names)
		return -1;
	for (i = 0; i < f->name_by_guid.cap; i++)
		if (f->name_by_guid.keys[i] && ib_u64map_put(&m, f->name_by_guid.keys[i], f->name_by_guid.vals[i]) < 0)
			goto fail;
	for (i = 0; i < n; i++)
		if (ib_u64map_put(&m, v[i].guid, (uint32_t)(f->nmap_names + i)) < 0)
			goto fail;
	if (f->nmap_names)
		memcpy(names, f->map_names, f->nmap_names * sizeof(*names));
	for (i = 0; i < n; i++) {
		names[f->nmap_names + i] = v[i].name;
		v[i].name = NULL;
	}
	free(f->map_names);
	ib_u64map_free(&f->name_by_guid);
	f->map_names = names;
	f->nmap_names = f->map_names_cap = total;
	f->name_by_guid = m;
	return 0;
fail:
	ib_u64map_free(&m);
	free(names);
	return -1;
}

int ib_namemap_load(struct topo_fabric *f, const char *path, rm_error_t *err)
{
	struct entry *v = NULL;
	size_t len, n = 0;
	char *buf = ib_read_file(path, RM_FILE_NAMEMAP, &len, err);
	int rc;

	if (!buf)
		return -1;
	rc = read_entries(path, buf, len, &v, &n, err);
	free(buf);
	if (rc < 0)
		return -1;
	rc = check_dups(path, v, n, err);
	if (rc == 0 && commit(f, v, n) < 0) {
		errno = ENOMEM;
		rc = rm_error_set(err, path, 0, 0, "out of memory");
	}
	free_entries(v, n);
	return rc;
}

const char *ib_namemap_lookup(const struct topo_fabric *f, uint64_t guid)
{
	uint32_t i = ib_u64map_get(&f->name_by_guid, guid);

	return i == IB_NONE ? NULL : f->map_names[i];
}

/* ---- names from hosts' hwloc XML ---------------------------------------------------------------- */

void ib_hwloc_names_free(struct topo_fabric *f)
{
	ib_u64map_free(&f->hw_by_guid);
	free(f->hw_names);
	free(f->hw_node_of);
	f->hw_names = NULL;
	f->hw_node_of = NULL;
}

int topo_fabric_set_hwloc_names(struct topo_fabric *f, unsigned long gen, const uint64_t *guids,
				const char *const *names, const uint64_t *node_of, size_t n)
{
	struct ib_u64map m = { 0 };
	const char **v = NULL;
	uint64_t *no = NULL;
	size_t i;

	if (f->hw_gen == gen && (f->hw_names || !n))
		return 0;
	if (n && (!(v = malloc(n * sizeof(*v))) || !(no = calloc(n, sizeof(*no))))) {
		free(v);
		return -1;
	}
	if (n && node_of)
		memcpy(no, node_of, n * sizeof(*no));
	for (i = 0; i < n; i++) {
		uint32_t k = ib_u64map_get(&m, guids[i]);

		v[i] = names[i];
		if (k != IB_NONE && k != IB_HW_AMBIGUOUS && strcmp(v[k], names[i]))
			k = IB_HW_AMBIGUOUS; /* cloned XML: two hosts claim one HCA */
		else if (k == IB_NONE)
			k = (uint32_t)i;
		if (guids[i] && ib_u64map_put(&m, guids[i], k) < 0) {
			ib_u64map_free(&m);
			free(v);
			free(no);
			return -1;
		}
	}
	ib_hwloc_names_free(f);
	f->hw_by_guid = m;
	f->hw_names = v;
	f->hw_node_of = no;
	f->hw_gen = gen;
	f->finalized = 0; /* the hosts' names may change */
	return 0;
}

const char *ib_hwloc_lookup(const struct topo_fabric *f, uint64_t guid)
{
	uint32_t i = ib_u64map_get(&f->hw_by_guid, guid);

	return i == IB_NONE || i == IB_HW_AMBIGUOUS ? NULL : f->hw_names[i];
}

uint64_t ib_hwloc_node_of(const struct topo_fabric *f, uint64_t guid)
{
	uint32_t i = ib_u64map_get(&f->hw_by_guid, guid);

	return i == IB_NONE || i == IB_HW_AMBIGUOUS || !f->hw_node_of ? 0 : f->hw_node_of[i];
}

static void hit(const struct topo_fabric *f, uint8_t *seen, uint64_t guid)
{
	uint32_t i = guid ? ib_u64map_get(&f->name_by_guid, guid) : IB_NONE;

	if (i != IB_NONE)
		seen[i] = 1;
}

int ib_namemap_count_unmatched(struct topo_fabric *f)
{
	uint8_t *seen;
	size_t i;

	f->map_unmatched = 0;
	if (!f->name_by_guid.n)
		return 0;
	if (!(seen = calloc(f->nmap_names, 1)))
		return -1;
	for (i = 0; i < f->nnodes; i++) {
		hit(f, seen, f->nodes[i].guid);
		hit(f, seen, f->nodes[i].port_guid);
		if (f->nodes[i].type == IBN_CA) {
			hit(f, seen, ib_hwloc_node_of(f, f->nodes[i].guid));
			hit(f, seen, ib_hwloc_node_of(f, f->nodes[i].port_guid));
		}
	}
	for (i = 0; i < f->name_by_guid.cap; i++)
		if (f->name_by_guid.keys[i] && !seen[f->name_by_guid.vals[i]])
			f->map_unmatched++;
	free(seen);
	return 0;
}
