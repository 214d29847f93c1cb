/*
 * topo/net_ib_topofile.c: parser of ibnetdiscover's topology file.
 *
 *   vendid=0x2c9 / devid= / sysimgguid= / switchguid=0x..(..) / caguid= / rtguid=   (skipped)
 *   Switch  36 "S-0008f10400410015"  # "desc" enhanced port 0 lid 3 lmc 0
 *   [1]     "H-0008f10403960984"[1](8f10403960985)  # "desc" lid 16 4xQDR
 *   Ca      2 "H-0008f10403960984"   # "desc"
 *   [1](8f10403960985)  "S-0008f10400410015"[6]   # lid 16 lmc 1 "desc" lid 3 4xQDR
 *
 * plus "Chassis"/"Non-Chassis Nodes" grouping headers, "[ext N]" external port numbers and comments.
 * Nodes may be referenced before their block, so port lines are resolved after the whole file is read:
 * an unknown GUID, a type that disagrees with its prefix, a port beyond the declared count or two
 * sides that disagree are errors naming the line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"

struct pending {
	int line;
	uint32_t node;
	uint16_t port, rport;
	uint8_t rtype, width, speed;
	uint64_t rguid;
};

struct topo_parse {
	struct ib_build *b;
	uint32_t cur; /* node of the current block, IB_NONE before the first */
	struct pending *pend;
	size_t npend, pend_cap;
};

static int bad(struct topo_parse *tp, int line, const char *what)
{
	errno = EINVAL;
	return rm_error_set(tp->b->err, tp->b->source, line, 0, "malformed topology file line: %s", what);
}

static int type_of(char c)
{
	return c == 'S' ? IBN_SW : c == 'H' ? IBN_CA : c == 'R' ? IBN_RT : 0;
}

/* Parses "X-guid" with its quotes at *p: node type from the prefix letter. */
static int parse_qguid(const char **p, uint8_t *type, uint64_t *guid)
{
	const char *s = *p;

	if (*s++ != '"' || !(*type = (uint8_t)type_of(*s)) || s[1] != '-')
		return -1;
	s += 2;
	if (ib_parse_guid(&s, guid) < 0 || *s++ != '"')
		return -1;
	*p = s;
	return 0;
}

/* Parses "[N]" (and an optional "[ext N]" and "(portguid)") at *p. */
static int parse_port(const char **p, uint16_t *port, uint64_t *pguid)
{
	const char *s = *p;
	char *end;
	long v;

	if (*s++ != '[' || !isdigit((unsigned char)*s))
		return -1;
	v = strtol(s, &end, 10);
	if (*end != ']' || v < 0 || v > 65535)
		return -1;
	s = end + 1;
	*port = (uint16_t)v;
	if (!strncmp(s, "[ext ", 5)) {
		if (!(s = strchr(s, ']')))
			return -1;
		s++;
	}
	if (*s == '(') {
		s++;
		if (ib_parse_guid(&s, pguid) < 0 || *s++ != ')')
			return -1;
	}
	*p = s;
	return 0;
}

/* Description: between the first quote after '#' and the last quote of the line. */
static const char *comment_desc(const char *s, size_t *len)
{
	const char *h = strchr(s, '#'), *q, *e;

	if (!h || !(q = strchr(h, '"')) || (e = strrchr(h, '"')) == q) {
		*len = 0;
		return "";
	}
	*len = (size_t)(e - q - 1);
	return q + 1;
}

/* "4xNDR" (last word of the line) -> width and speed; unknown stays 0. */
static void link_rate(const char *s, uint8_t *width, uint8_t *speed)
{
	const char *w = s + strlen(s), *x;
	char wbuf[8];

	while (w > s && (w[-1] == ' ' || w[-1] == '\t'))
		w--;
	while (w > s && !isspace((unsigned char)w[-1]) && w[-1] != '"')
		w--;
	*width = *speed = 0;
	x = strpbrk(w, "xX");
	if (!x || x == w || x - w > 3)
		return;
	memcpy(wbuf, w, (size_t)(x - w) + 1);
	wbuf[x - w + 1] = '\0';
	if (ib_parse_width(wbuf, width) < 0 || ib_parse_speed(ib_skip_ws(x + 1), speed) < 0)
		*width = *speed = 0;
}

static int node_line(struct topo_parse *tp, int line, const char *s, uint8_t type)
{
	const char *p = s, *desc, *lid;
	uint8_t qtype;
	uint64_t guid;
	size_t dlen;
	char *end;
	long nports;

	while (isalpha((unsigned char)*p))
		p++;
	p = ib_skip_ws(p);
	nports = strtol(p, &end, 10);
	if (end == p || nports < 1 || nports > IB_MAX_PORTS)
		return bad(tp, line, "expected a port count (1-254) after the node type");
	p = ib_skip_ws(end);
	if (parse_qguid(&p, &qtype, &guid) < 0)
		return bad(tp, line, "expected \"S-<guid>\", \"H-<guid>\" or \"R-<guid>\"");
	if (qtype != type)
		return bad(tp, line, "GUID prefix does not match the node type");
	desc = comment_desc(p, &dlen);
	tp->cur = ib_build_add_node(tp->b, line, type, guid, desc, dlen, (unsigned)nports);
	if (tp->cur == IB_NONE)
		return -1;
	lid = strstr(desc + dlen, " lid ");
	if (lid)
		tp->b->nodes[tp->cur].lid = (uint32_t)strtoul(lid + 5, NULL, 10);
	return 0;
}

static int port_line(struct topo_parse *tp, int line, const char *s)
{
	struct pending pd = { .line = line, .node = tp->cur };
	uint64_t pguid = 0, rpguid = 0;
	const char *p = s;

	if (tp->cur == IB_NONE)
		return bad(tp, line, "port line before any Switch, Ca or Rt line");
	if (parse_port(&p, &pd.port, &pguid) < 0)
		return bad(tp, line, "expected [port](portguid)");
	p = ib_skip_ws(p);
	if (parse_qguid(&p, &pd.rtype, &pd.rguid) < 0 || parse_port(&p, &pd.rport, &rpguid) < 0)
		return bad(tp, line, "expected \"S-<guid>\"[port] or \"H-<guid>\"[port]");
	if (*p && *p != ' ' && *p != '\t')
		return bad(tp, line, "unexpected text after the peer port");
	link_rate(p, &pd.width, &pd.speed);
	if (pguid && !tp->b->nodes[tp->cur].port_guid)
		tp->b->nodes[tp->cur].port_guid = pguid;
	if (tp->npend == tp->pend_cap) {
		size_t ncap = tp->pend_cap ? tp->pend_cap * 2 : 256;
		struct pending *np = realloc(tp->pend, ncap * sizeof(*np));

		if (!np) {
			errno = ENOMEM;
			return rm_error_set(tp->b->err, tp->b->source, line, 0, "out of memory");
		}
		tp->pend = np;
		tp->pend_cap = ncap;
	}
	tp->pend[tp->npend++] = pd;
	return 0;
}

static int starts(const char *s, const char *w)
{
	size_t n = strlen(w);

	return !strncmp(s, w, n) && (s[n] == ' ' || s[n] == '\t');
}

static int skipped(const char *s)
{
	static const char *const keys[] = { "vendid=",           "devid=",   "sysimgguid=",
					    "switchguid=",       "caguid=",  "rtguid=",
					    "Non-Chassis Nodes", "Chassis ", NULL };
	int i;

	if (ib_line_is_noise(s))
		return 1;
	for (i = 0; keys[i]; i++)
		if (!strncmp(s, keys[i], strlen(keys[i])))
			return 1;
	return 0;
}

static int one_line(struct topo_parse *tp, int line, const char *s)
{
	s = ib_skip_ws(s);
	if (skipped(s))
		return 0;
	if (starts(s, "Switch"))
		return node_line(tp, line, s, IBN_SW);
	if (starts(s, "Ca"))
		return node_line(tp, line, s, IBN_CA);
	if (starts(s, "Rt"))
		return node_line(tp, line, s, IBN_RT);
	if (*s == '[')
		return port_line(tp, line, s);
	return bad(tp, line, "expected a Switch, Ca or Rt line, a [port] line or a vendid=/devid=/...guid= line");
}

static int resolve(struct topo_parse *tp)
{
	struct ib_build *b = tp->b;
	size_t i;

	for (i = 0; i < tp->npend; i++) {
		const struct pending *pd = &tp->pend[i];
		uint32_t r = ib_u64map_get(&b->by_guid, pd->rguid);

		if (r == IB_NONE) {
			errno = EINVAL;
			return rm_error_set(
				b->err, b->source, pd->line, 0,
				"port %u references unknown GUID %016llx (no Switch/Ca/Rt block declares it)", pd->port,
				(unsigned long long)pd->rguid);
		}
		if (b->nodes[r].type != pd->rtype) {
			errno = EINVAL;
			return rm_error_set(b->err, b->source, pd->line, 0,
					    "port %u references GUID %016llx with the wrong node type prefix", pd->port,
					    (unsigned long long)pd->rguid);
		}
		if (ib_build_link(b, pd->line, pd->node, pd->port, r, pd->rport, pd->width, pd->speed) < 0)
			return -1;
	}
	return 0;
}

static int topofile_parse(struct ib_build *b, struct ib_lines *ln)
{
	struct topo_parse tp = { .b = b, .cur = IB_NONE };
	char *s;
	int rc = 0;

	while (rc == 0 && (s = ib_next_line(ln)))
		rc = one_line(&tp, ln->lineno, s);
	if (rc == 0)
		rc = resolve(&tp);
	free(tp.pend);
	return rc;
}

static int topofile_detect(const char *s)
{
	return skipped(s) || starts(s, "Switch") || starts(s, "Ca") || starts(s, "Rt");
}

const struct ib_format ib_format_topofile = {
	.name = "ibnetdiscover topology file",
	.detect = topofile_detect,
	.parse = topofile_parse,
};
