/*
 * common/rm_slot.c: the slot type's small helpers (rm_slot.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rm_slot.h"

const char *rm_slot_pu_name(rm_slot_pu_t pu)
{
	return pu == RM_SLOT_PU_OS ? "os" : "logical";
}

int rm_slot_pu_parse(const char *name, rm_slot_pu_t *out)
{
	if (name && strcmp(name, "logical") == 0)
		*out = RM_SLOT_PU_LOGICAL;
	else if (name && strcmp(name, "os") == 0)
		*out = RM_SLOT_PU_OS;
	else {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

char *rm_slot_format(const rm_slot_t *s, char *buf, size_t len)
{
	if (s->pu == RM_SLOT_ANY)
		snprintf(buf, len, "%s:any", s->host ? s->host : "?");
	else
		snprintf(buf, len, "%s:%ld", s->host ? s->host : "?", (long)s->pu);
	return buf;
}
