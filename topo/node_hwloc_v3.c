/*
 * topo/node_hwloc_v3.c: hwloc 3.0 XML read by hwloc 2.x.
 *
 * hwloc's master (3.0) writes <topology version="3.0">, which hwloc 2.x (Debian 12 has 2.9) refuses as
 * malformed. The differences that matter to 2.x, found by comparing the 2.x and 3.0 exports of the same
 * machines (the .xml and .v3.xml files of tests/hwloc/xml in hwloc):
 *   - the version attribute: "3.0" is rewritten "2.0";
 *   - OS device types: 3.0 writes osdev_type as a bit mask (STORAGE 1, MEMORY 2, GPU 4, COPROC 8,
 *     NETWORK 16, OPENFABRICS 32, DMA 64; a CUDA device is GPU|COPROC = 12, an InfiniBand HCA
 *     NETWORK|OPENFABRICS = 48) where 2.x has an enum (BLOCK 0, GPU 1, NETWORK 2, OPENFABRICS 3,
 *     DMA 4, COPROC 5). Each mask is mapped to the one 2.x type: OPENFABRICS -> 3; COPROC -> 5 unless
 *     the device is an NVML or RSMI one (GPU in 2.x) -> 1; GPU -> 1; NETWORK -> 2; DMA -> 4; else 0;
 *   - the root's <info> elements are written after the root object (2.x wants them inside it): they
 *     are dropped there (rankmap reads the HostName from the original bytes);
 *   - attributes 2.x does not know (id="obj12", a fifth pci_type field) are ignored by 2.x as they are.
 * The translation is a byte scan of the document, not a parse; what it produces goes to hwloc's parser
 * in its child process as any host file does (node_parse.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_private.h"

/* Is this buffer hwloc 3.x XML? */
int topo_hwloc_is_v3(const char *buf, size_t len)
{
	const char *t = memmem(buf, len < 4096 ? len : 4096, "<topology version=\"3.", 21);

	return t != NULL;
}

/* The 2.x osdev type of a 3.0 mask, given the element's subtype (may be NULL). */
static int osdev_v2(unsigned long mask, const char *sub, size_t sublen)
{
	int gpu_sub = sub && ((sublen == 4 && !strncmp(sub, "NVML", 4)) || (sublen == 4 && !strncmp(sub, "RSMI", 4)));

	if (mask & 32)
		return 3;
	if ((mask & 8) && !gpu_sub)
		return 5;
	if (mask & 4)
		return 1;
	if (mask & 16)
		return 2;
	if (mask & 64)
		return 4;
	return 0;
}

/* The value of attribute name inside tag [s, e), length in *len; NULL when absent. */
static const char *attr(const char *s, const char *e, const char *name, size_t *len)
{
	char pat[32];
	const char *a, *q;

	snprintf(pat, sizeof(pat), " %s=\"", name);
	if (!(a = memmem(s, (size_t)(e - s), pat, strlen(pat))))
		return NULL;
	a += strlen(pat);
	if (!(q = memchr(a, '"', (size_t)(e - a))))
		return NULL;
	*len = (size_t)(q - a);
	return a;
}

char *topo_hwloc_v3_to_v2(const char *buf, size_t len, size_t *out_len)
{
	/* A rewritten tag grows by 2 bytes at most ("<topology version=\"3.>", 22 bytes, becomes 24; an
	 * empty osdev_type value becomes one digit) and is 20 bytes or more: len / 8 bounds the growth. */
	char *out = malloc(len + len / 8 + 64), *o = out;
	const char *p = buf, *end = buf + len;
	int depth = 0, root_done = 0;

	if (!out)
		return errno = ENOMEM, NULL;
	while (p < end) {
		const char *lt = memchr(p, '<', (size_t)(end - p)), *gt;

		if (!lt) {
			memcpy(o, p, (size_t)(end - p));
			o += end - p;
			break;
		}
		memcpy(o, p, (size_t)(lt - p));
		o += lt - p;
		if (!(gt = memchr(lt, '>', (size_t)(end - lt)))) {
			memcpy(o, lt, (size_t)(end - lt));
			o += end - lt;
			break;
		}
		gt++;
		if (!strncmp(lt, "<topology ", 10) && memmem(lt, (size_t)(gt - lt), "version=\"3.", 11)) {
			o += sprintf(o, "<topology version=\"2.0\">");
		} else if (!strncmp(lt, "<object ", 8)) {
			size_t sl = 0, vl = 0;
			const char *sub = attr(lt, gt, "subtype", &sl), *v = attr(lt, gt, "osdev_type", &vl);

			if (v) {
				unsigned long mask = strtoul(v, NULL, 10);

				memcpy(o, lt, (size_t)(v - lt));
				o += v - lt;
				o += sprintf(o, "%d", osdev_v2(mask, sub, sl));
				memcpy(o, v + vl, (size_t)(gt - (v + vl)));
				o += gt - (v + vl);
			} else {
				memcpy(o, lt, (size_t)(gt - lt));
				o += gt - lt;
			}
			if (gt[-2] != '/')
				depth++;
		} else if (!strncmp(lt, "</object>", 9)) {
			memcpy(o, lt, (size_t)(gt - lt));
			o += gt - lt;
			if (--depth == 0)
				root_done = 1;
		} else if (root_done && depth == 0 && !strncmp(lt, "<info ", 6)) {
			/* a root info written after the root: dropped */
		} else {
			memcpy(o, lt, (size_t)(gt - lt));
			o += gt - lt;
		}
		p = gt;
	}
	*o = '\0';
	*out_len = (size_t)(o - out);
	return out;
}
