/*
 * daemon/server/srv_schema.c: the validation helper every request handler shares. A handler validates its
 * request with json_unpack_ex(..., JSON_STRICT, ...); when that fails, srv_request_invalid() names the
 * offending field from the request's schema (srv_requests.h). Apart from the request table
 * (srv_requests.c) so that the handlers, which the table calls, call nothing back in it.
 */
#include <string.h>

#include "rm_client.h"
#include "srv.h"
#include "srv_requests.h"

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "real";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	default: return "null";
	}
}

/* Does v have the type of schema letter t? (s string, i integer, f number, b boolean, a array,
 * o object, * anything, I integer or string) */
static int type_ok(const json_t *v, char t)
{
	switch (t) {
	case 's': return json_is_string(v);
	case 'i': return json_is_integer(v);
	case 'f': return json_is_number(v);
	case 'b': return json_is_boolean(v);
	case 'a': return json_is_array(v);
	case 'o': return json_is_object(v);
	case 'I': return json_is_integer(v) || json_is_string(v);
	default: return 1;
	}
}

/* Is key one of the schema's names? */
static int schema_has(const char *schema, const char *key)
{
	size_t kl = strlen(key), n;
	const char *p = schema;

	while (*p) {
		n = strcspn(p, ":?");
		if (!p[n])
			return 0;
		if (n == kl && !strncmp(p, key, n))
			return 1;
		p += n + 2;
		while (*p == ' ')
			p++;
	}
	return 0;
}

json_t *srv_request_invalid(const json_t *req, const json_t *id, const char *schema, const json_error_t *jerr)
{
	/* schema: space-separated "name:T" (required) or "name?T" (optional) */
	char name[64];
	const char *p = schema, *key;
	json_t *v;
	size_t n;

	while (*p) {
		n = strcspn(p, ":?");
		if (n >= sizeof(name) || !p[n])
			break;
		memcpy(name, p, n);
		name[n] = 0;
		v = json_object_get(req, name);
		if (!v && p[n] == ':')
			return rm_proto_error(id, RM_ERR_BAD_REQUEST, "missing field '%s'", name);
		if (v && !type_ok(v, p[n + 1]))
			return rm_proto_error(id, RM_ERR_BAD_REQUEST, "field '%s': wrong type %s", name, type_name(v));
		p += n + 2;
		while (*p == ' ')
			p++;
	}
	json_object_foreach ((json_t *)req, key, v)
		if (!schema_has(schema, key))
			return rm_proto_error(id, RM_ERR_BAD_REQUEST, "unknown field '%.*s'", rm_utf8_prefix(key, 64),
					      key);
	return rm_proto_error(id, RM_ERR_BAD_REQUEST, "invalid request: %s", jerr ? jerr->text : "bad field");
}
