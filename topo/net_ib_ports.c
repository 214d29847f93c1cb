/*
 * topo/net_ib_ports.c: parser of ibnetdiscover's -p ports report.
 *
 *   CA    44  1 0x78e7d10300215995 4x QDR - SW   142 32 0x0008f10500108c9e ( 'host HCA-1' - 'switch' )
 *   SW   142 35 0x0008f10500108c9e 4x ???                                    'switch'
 *
 * Fields: node type (SW, CA, RT), LID, port, port GUID, width, speed, then either "-" and the peer's
 * type, LID, port and port GUID followed by both descriptions, or (unconnected port) the description
 * alone. Nodes are keyed by port GUID (a switch's ports share one, a CA port has its own). Each link
 * is listed from both ends; the two must agree. "DR path" lines of -s are skipped.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net_ib_private.h"

struct end {
	uint8_t type;
	unsigned lid, port;
	uint64_t guid;
};

static int bad(struct ib_build *b, int line, const char *what)
{
	errno = EINVAL;
	return rm_error_set(b->err, b->source, line, 0, "malformed ports report line: %s", what);
}

static const char *word(const char *p, char *buf, size_t len)
{
	size_t n = 0;

	p = ib_skip_ws(p);
	while (*p && *p != ' ' && *p != '\t') {
		if (n + 1 < len)
			buf[n++] = *p;
		p++;
	}
	buf[n] = '\0';
	return p;
}

/* "SW   142 36 0x0008f10500108c9e" */
static const char *parse_end(const char *p, struct end *e)
{
	char w[32], *x;

	p = word(p, w, sizeof(w));
	e->type = !strcmp(w, "SW") ? IBN_SW : !strcmp(w, "CA") ? IBN_CA : !strcmp(w, "RT") ? IBN_RT : 0;
	if (!e->type)
		return NULL;
	p = word(p, w, sizeof(w));
	e->lid = (unsigned)strtoul(w, &x, 10);
	if (!*w || *x)
		return NULL;
	p = word(p, w, sizeof(w));
	e->port = (unsigned)strtoul(w, &x, 10);
	if (!*w || *x || e->port > 65535)
		return NULL;
	p = ib_skip_ws(p);
	if (ib_parse_guid(&p, &e->guid) < 0 || (*p && *p != ' ' && *p != '\t'))
		return NULL;
	return p;
}

static uint32_t node_of(struct ib_build *b, int line, const struct end *e, const char *desc, size_t dlen)
{
	uint32_t n = ib_build_add_node(b, line, e->type, e->guid, desc, dlen, 0);

	if (n != IB_NONE && !b->nodes[n].lid)
		b->nodes[n].lid = e->lid;
	return n;
}

static int unconnected(struct ib_build *b, int line, const struct end *e, const char *p)
{
	const char *q = strchr(p, '\''), *r = strrchr(p, '\'');
	uint32_t n;

	if (!q || q == r)
		return bad(b, line, "expected '-' and the peer port, or the quoted node description");
	if (e->port == 0 || e->port > IB_MAX_PORTS)
		return bad(b, line, "port number out of range (1-254)");
	n = node_of(b, line, e, q + 1, (size_t)(r - q - 1));
	if (n == IB_NONE || ib_build_grow_ports(b, line, n, e->port) < 0)
		return -1;
	if (b->nodes[n].port_link[e->port] == IB_NONE)
		b->nodes[n].down_ports++;
	return 0;
}

static int connected(struct ib_build *b, int line, const struct end *a, const char *p, uint8_t width, uint8_t speed)
{
	const char *d1, *m, *d2, *e2;
	struct end c;
	uint32_t na, nc;

	p = parse_end(p, &c);
	if (!p)
		return bad(b, line, "expected the peer as TYPE LID PORT GUID after '-'");
	p = ib_skip_ws(p);
	if (strncmp(p, "( '", 3) || !(m = strstr(p + 3, "' - '")) || !(e2 = strrchr(p, '\'')) || e2 < m + 5)
		return bad(b, line, "expected ( 'description' - 'description' ) after the peer");
	d1 = p + 3;
	d2 = m + 5;
	if (strncmp(ib_skip_ws(e2 + 1), ")", 1))
		return bad(b, line, "missing ')' after the descriptions");
	na = node_of(b, line, a, d1, (size_t)(m - d1));
	if (na == IB_NONE)
		return -1;
	nc = node_of(b, line, &c, d2, (size_t)(e2 - d2));
	if (nc == IB_NONE)
		return -1;
	return ib_build_link(b, line, na, a->port, nc, c.port, width, speed);
}

static int ports_line(struct ib_build *b, int line, const char *s)
{
	char w[32], sp[32];
	uint8_t width, speed;
	struct end a;
	const char *p;

	p = parse_end(s, &a);
	if (!p)
		return bad(b, line, "expected TYPE LID PORT GUID (TYPE one of SW, CA, RT)");
	p = word(p, w, sizeof(w));
	p = word(p, sp, sizeof(sp));
	if (ib_parse_width(w, &width) < 0 || ib_parse_speed(sp, &speed) < 0)
		return bad(b, line, "expected a link width and speed such as \"4x QDR\" or \"4x ???\"");
	p = ib_skip_ws(p);
	if (p[0] == '-' && (p[1] == ' ' || p[1] == '\t'))
		return connected(b, line, &a, p + 1, width, speed);
	return unconnected(b, line, &a, p);
}

static int ports_parse(struct ib_build *b, struct ib_lines *ln)
{
	char *s;

	while ((s = ib_next_line(ln))) {
		s = (char *)ib_skip_ws(s);
		if (ib_line_is_noise(s))
			continue;
		if (ports_line(b, ln->lineno, s) < 0)
			return -1;
	}
	return 0;
}

static int ports_detect(const char *s)
{
	return (!strncmp(s, "SW", 2) || !strncmp(s, "CA", 2) || !strncmp(s, "RT", 2)) && (s[2] == ' ' || s[2] == '\t');
}

const struct ib_format ib_format_ports = {
	.name = "ibnetdiscover ports report",
	.detect = ports_detect,
	.parse = ports_parse,
};
