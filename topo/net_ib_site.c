/*
 * topo/net_ib_site.c: site fabric files, for fabrics ibnetdiscover cannot see (HPE Slingshot, Ethernet
 * or anything else with switches, groups and cables). One statement per line, words separated by
 * blanks, '#' starts a comment:
 *
 *   group NAME                                   declares a dragonfly group (optional: "switch ...
 *                                                group NAME" declares it too)
 *   switch NAME [group NAME] [ports N]           a switch, in a group or none; N ports at most
 *   host NAME switch SWITCH [rail N] [rate R] [hca LABEL]
 *                                                one NIC port of host NAME, cabled to SWITCH (a host
 *                                                with several NICs has several lines); rail N sets
 *                                                its rail (else found as for InfiniBand, from the
 *                                                label LABEL, default "nic<k>" for its k-th line)
 *   link SWITCH SWITCH [rate R] [count N]        N parallel cables (default 1) between two switches
 *
 * R is a width and a lane speed as ibnetdiscover writes them, e.g. 4xHDR (200 Gb/s, a Slingshot 200
 * port) or 4xNDR (400 Gb/s); without it the rate is unknown (global links are then costed by count).
 * Names are one word; a switch must be declared before a host or link line names it. Every error names
 * the file and line. A site file is one subnet; its switches and NICs get GUIDs made from their names
 * (0x5e.. / 0x5f.. followed by 56 bits of the name's FNV-1a hash).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"

#define SITE_MAX_WORDS 12
#define SITE_MAX_PORTS IB_MAX_PORTS

struct site {
	struct ib_build *b;
	struct ib_strmap sw_by_name; /* keys borrowed from the nodes' descriptions */
	struct ib_strmap group_by_name;
	char **group_names; /* owned keys of group_by_name */
	size_t ngroups, groups_cap;
	uint16_t *next_port; /* per build node: next free switch port */
	size_t next_cap;
	struct ib_strmap nics_of_host; /* host name -> NIC lines so far (keys owned in host_names) */
	char **host_names;
	size_t nhost_names, host_names_cap;
};

static int site_err(struct site *st, int line, const char *fmt, const char *arg)
{
	errno = EINVAL;
	return rm_error_set(st->b->err, st->b->source, line, 0, fmt, arg);
}

static uint64_t name_guid(uint8_t top, const char *kind, const char *name, unsigned k)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *p;

	for (p = kind; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	for (p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	h = (h ^ (k + 1)) * 0x100000001b3ULL;
	return ((uint64_t)top << 56) | (h & 0x00ffffffffffffffULL);
}

static int site_detect(const char *s)
{
	static const char *const words[] = { "switch", "host", "link", "group", NULL };
	int i;

	for (i = 0; words[i]; i++) {
		size_t n = strlen(words[i]);

		if (!strncmp(s, words[i], n) && (s[n] == ' ' || s[n] == '\t'))
			return 1;
	}
	return 0;
}

/* Splits line s in place into words; '#' ends the line. Returns the count, -1 beyond max. */
static int split(char *s, char **w, int max)
{
	int n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (!*s || *s == '#')
			return n;
		if (n == max)
			return -1;
		w[n++] = s;
		while (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '#')
			s++;
		if (*s == '#') {
			*s = '\0';
			return n;
		}
		if (*s)
			*s++ = '\0';
	}
}

static int parse_uint(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	v = strtoul(s, &end, 10);
	if (*end || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* "4xHDR": width and speed. */
static int parse_rate(const char *s, uint8_t *width, uint8_t *speed)
{
	char buf[32];
	const char *x = strpbrk(s, "xX");
	size_t n;

	if (!x || (n = (size_t)(x - s) + 1) >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return ib_parse_width(buf, width) < 0 || ib_parse_speed(x + 1, speed) < 0 || !*speed ? -1 : 0;
}

static int grow_ports(struct site *st, int line)
{
	if (st->b->nnodes <= st->next_cap)
		return 0;
	{
		size_t cap = st->b->nodes_cap > st->b->nnodes ? st->b->nodes_cap : st->b->nnodes;
		uint16_t *np = realloc(st->next_port, cap * sizeof(*np));

		if (!np)
			return site_err(st, line, "out of memory%s", "");
		memset(np + st->next_cap, 0, (cap - st->next_cap) * sizeof(*np));
		st->next_port = np;
		st->next_cap = cap;
	}
	return 0;
}

/* Next free port of switch node n (1-based), -1 with the error set when it has none left. */
static int take_port(struct site *st, int line, uint32_t n)
{
	struct ib_node *nd = &st->b->nodes[n];
	unsigned p;

	if (grow_ports(st, line) < 0)
		return -1;
	p = ++st->next_port[n];
	if (p > SITE_MAX_PORTS || (nd->declared && p > nd->nports))
		return site_err(st, line, "switch '%s' has no free port left", nd->desc);
	if (!nd->declared && p > nd->nports && ib_build_grow_ports(st->b, line, n, p) < 0)
		return -1;
	return (int)p;
}

static uint32_t group_id(struct site *st, int line, const char *name, int declare)
{
	uint32_t g = ib_strmap_get(&st->group_by_name, name);
	char *key;

	if (g != IB_NONE) {
		if (declare) {
			site_err(st, line, "group '%s' is declared twice", name);
			return IB_NONE - 1;
		}
		return g;
	}
	if (st->ngroups == st->groups_cap) {
		size_t cap = st->groups_cap ? st->groups_cap * 2 : 16;
		char **nn = realloc(st->group_names, cap * sizeof(*nn));

		if (!nn)
			goto oom;
		st->group_names = nn;
		st->groups_cap = cap;
	}
	if (!(key = strdup(name)))
		goto oom;
	st->group_names[st->ngroups] = key;
	if (ib_strmap_put(&st->group_by_name, key, (uint32_t)st->ngroups) < 0) {
		free(key);
		goto oom;
	}
	return (uint32_t)st->ngroups++;
oom:
	site_err(st, line, "out of memory%s", "");
	return IB_NONE - 1;
}

static uint32_t find_switch(struct site *st, int line, const char *name)
{
	uint32_t n = ib_strmap_get(&st->sw_by_name, name);

	if (n == IB_NONE)
		site_err(st, line, "unknown switch '%s' (declare it with a switch line first)", name);
	return n;
}

static int do_switch(struct site *st, int line, char **w, int n)
{
	unsigned ports = 0;
	uint32_t g = IB_NONE, nd;
	int i;

	if (n < 2)
		return site_err(st, line, "switch: expected 'switch NAME [group NAME] [ports N]'%s", "");
	if (ib_strmap_get(&st->sw_by_name, w[1]) != IB_NONE)
		return site_err(st, line, "switch '%s' is declared twice", w[1]);
	for (i = 2; i < n; i += 2) {
		if (i + 1 >= n)
			return site_err(st, line, "switch: '%s' needs a value", w[i]);
		if (!strcmp(w[i], "group")) {
			if ((g = group_id(st, line, w[i + 1], 0)) == IB_NONE - 1)
				return -1;
		} else if (!strcmp(w[i], "ports")) {
			if (parse_uint(w[i + 1], SITE_MAX_PORTS, &ports) < 0 || !ports)
				return site_err(st, line, "switch: ports '%s' is not a number from 1 to 254", w[i + 1]);
		} else {
			return site_err(st, line, "switch: unknown word '%s' (group, ports)", w[i]);
		}
	}
	nd = ib_build_add_node(st->b, line, IBN_SW, name_guid(0x5e, "switch:", w[1], 0), w[1], strlen(w[1]), ports);
	if (nd == IB_NONE)
		return -1;
	st->b->nodes[nd].declared = ports > 0;
	st->b->nodes[nd].site_group = g;
	if (ib_strmap_put(&st->sw_by_name, st->b->nodes[nd].desc, nd) < 0)
		return site_err(st, line, "out of memory%s", "");
	return grow_ports(st, line);
}

static int do_host(struct site *st, int line, char **w, int n)
{
	const char *sw = NULL, *label = NULL;
	unsigned rail = IB_RAIL_NONE, k;
	uint8_t width = 0, speed = 0;
	uint32_t s, ca, cnt;
	char desc[512];
	int i, p;

	if (n < 2)
		return site_err(st, line, "host: expected 'host NAME switch SWITCH [rail N] [rate R] [hca LABEL]'%s",
				"");
	for (i = 2; i < n; i += 2) {
		if (i + 1 >= n)
			return site_err(st, line, "host: '%s' needs a value", w[i]);
		if (!strcmp(w[i], "switch"))
			sw = w[i + 1];
		else if (!strcmp(w[i], "rail")) {
			if (parse_uint(w[i + 1], TOPO_MAX_RAILS - 1, &rail) < 0)
				return site_err(st, line, "host: rail '%s' is not a number from 0 to 63", w[i + 1]);
		} else if (!strcmp(w[i], "rate")) {
			if (parse_rate(w[i + 1], &width, &speed) < 0)
				return site_err(st, line, "host: rate '%s' is not WIDTHxSPEED (e.g. 4xHDR)", w[i + 1]);
		} else if (!strcmp(w[i], "hca"))
			label = w[i + 1];
		else
			return site_err(st, line, "host: unknown word '%s' (switch, rail, rate, hca)", w[i]);
	}
	if (!sw)
		return site_err(st, line, "host '%s': missing 'switch SWITCH'", w[1]);
	if ((s = find_switch(st, line, sw)) == IB_NONE)
		return -1;
	cnt = ib_strmap_get(&st->nics_of_host, w[1]);
	k = cnt == IB_NONE ? 0 : cnt;
	if (label)
		snprintf(desc, sizeof(desc), "%s %s", w[1], label);
	else
		snprintf(desc, sizeof(desc), "%s nic%u", w[1], k);
	ca = ib_build_add_node(st->b, line, IBN_CA, name_guid(0x5f, "host:", w[1], k), desc, strlen(desc), 1);
	if (ca == IB_NONE)
		return -1;
	st->b->nodes[ca].declared = 1;
	st->b->nodes[ca].site_rail = (uint8_t)rail;
	if (cnt == IB_NONE) {
		char *key = strdup(w[1]);
		char **nh;

		if (!key)
			return site_err(st, line, "out of memory%s", "");
		if (st->nhost_names == st->host_names_cap) {
			size_t cap = st->host_names_cap ? st->host_names_cap * 2 : 64;

			if (!(nh = realloc(st->host_names, cap * sizeof(*nh))))
				return free(key), site_err(st, line, "out of memory%s", "");
			st->host_names = nh;
			st->host_names_cap = cap;
		}
		st->host_names[st->nhost_names++] = key;
		if (ib_strmap_put(&st->nics_of_host, key, 1) < 0)
			return site_err(st, line, "out of memory%s", "");
	} else if (ib_strmap_put(&st->nics_of_host, w[1], cnt + 1) < 0) { /* the key stays the first line's */
		return site_err(st, line, "out of memory%s", "");
	}
	if ((p = take_port(st, line, s)) < 0)
		return -1;
	return ib_build_link(st->b, line, s, (unsigned)p, ca, 1, width, speed);
}

static int do_link(struct site *st, int line, char **w, int n)
{
	unsigned count = 1, c;
	uint8_t width = 0, speed = 0;
	uint32_t a, b;
	int i;

	if (n < 3)
		return site_err(st, line, "link: expected 'link SWITCH SWITCH [rate R] [count N]'%s", "");
	for (i = 3; i < n; i += 2) {
		if (i + 1 >= n)
			return site_err(st, line, "link: '%s' needs a value", w[i]);
		if (!strcmp(w[i], "rate")) {
			if (parse_rate(w[i + 1], &width, &speed) < 0)
				return site_err(st, line, "link: rate '%s' is not WIDTHxSPEED (e.g. 4xHDR)", w[i + 1]);
		} else if (!strcmp(w[i], "count")) {
			if (parse_uint(w[i + 1], SITE_MAX_PORTS, &count) < 0 || !count)
				return site_err(st, line, "link: count '%s' is not a number from 1 to 254", w[i + 1]);
		} else {
			return site_err(st, line, "link: unknown word '%s' (rate, count)", w[i]);
		}
	}
	if ((a = find_switch(st, line, w[1])) == IB_NONE || (b = find_switch(st, line, w[2])) == IB_NONE)
		return -1;
	if (a == b)
		return site_err(st, line, "link: switch '%s' is linked to itself", w[1]);
	for (c = 0; c < count; c++) {
		int pa = take_port(st, line, a), pb;

		if (pa < 0 || (pb = take_port(st, line, b)) < 0)
			return -1;
		if (ib_build_link(st->b, line, a, (unsigned)pa, b, (unsigned)pb, width, speed) < 0)
			return -1;
	}
	return 0;
}

static int site_parse(struct ib_build *b, struct ib_lines *ln)
{
	struct site st = { .b = b };
	char *s, *w[SITE_MAX_WORDS];
	size_t i;
	int rc = 0, n;

	while (rc == 0 && (s = ib_next_line(ln)) != NULL) {
		n = split(s, w, SITE_MAX_WORDS);
		if (n == 0)
			continue;
		if (n < 0)
			rc = site_err(&st, ln->lineno, "more than %s words", "12");
		else if (!strcmp(w[0], "switch"))
			rc = do_switch(&st, ln->lineno, w, n);
		else if (!strcmp(w[0], "host"))
			rc = do_host(&st, ln->lineno, w, n);
		else if (!strcmp(w[0], "link"))
			rc = do_link(&st, ln->lineno, w, n);
		else if (!strcmp(w[0], "group"))
			rc = n != 2 ? site_err(&st, ln->lineno, "group: expected 'group NAME'%s", "")
			     : group_id(&st, ln->lineno, w[1], 1) == IB_NONE - 1 ? -1
										 : 0;
		else
			rc = site_err(&st, ln->lineno, "unknown statement '%s' (expected switch, host, link or group)",
				      w[0]);
	}
	if (rc == 0 && !b->nnodes)
		rc = site_err(&st, 0, "no switch or host%s", "");
	ib_strmap_free(&st.sw_by_name);
	ib_strmap_free(&st.group_by_name);
	ib_strmap_free(&st.nics_of_host);
	for (i = 0; i < st.ngroups; i++)
		free(st.group_names[i]);
	free(st.group_names);
	for (i = 0; i < st.nhost_names; i++)
		free(st.host_names[i]);
	free(st.host_names);
	free(st.next_port);
	return rc;
}

const struct ib_format ib_format_site = {
	.name = "site fabric file",
	.detect = site_detect,
	.parse = site_parse,
};
