/*
 * tests/unit/test_json_out.c: rm_json_dumps (daemon/client/json_out.c) writes every real in the
 * shortest form that reads back as the same double, leaves integers and strings alone, and the JSON
 * stays valid (jansson reads back an equal document). Checked on hand-picked values (9.94, 0.1, 1e300,
 * 3.0, a string that looks like a number) and on 100,000 pseudo-random doubles of every magnitude.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rm_client.h"
#include "tests/harness.h"

static void hand_picked(void)
{
	json_t *j =
		json_pack("{s:f, s:f, s:f, s:f, s:f, s:I, s:s, s:[ff]}", "a", 9.94, "b", 0.1, "c", 1e300, "d", 3.0, "e",
			  -2.5e-7, "i", (json_int_t)12, "s", "9.9399999999999995 \"1.10\"", "arr", 0.67, 1.0 / 3);
	char *s = rm_json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_t *back = s ? json_loads(s, 0, NULL) : NULL;

	check(s && !strcmp(s,
			   "{\"a\":9.94,\"b\":0.1,\"c\":1e+300,\"d\":3.0,\"e\":-2.5e-07,\"i\":12,"
			   "\"s\":\"9.9399999999999995 \\\"1.10\\\"\",\"arr\":[0.67,0.3333333333333333]}"),
	      "shortest reals, integers and strings untouched: %s", s ? s : "(null)");
	check(back && json_equal(j, back), "reads back equal");
	free(s);
	json_decref(back);
	json_decref(j);
}

static void random_doubles(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	json_t *arr = json_array(), *back;
	size_t i, bad = 0, n = 100000;
	char *s;

	for (i = 0; i < n; i++) {
		double v;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(&v, &x, sizeof(v));
		if (!isfinite(v))
			v = (double)(x >> 11) / 9007199254740992.0;
		json_array_append_new(arr, json_real(v));
	}
	s = rm_json_dumps(arr, JSON_COMPACT);
	back = s ? json_loads(s, 0, NULL) : NULL;
	for (i = 0; back && i < n; i++)
		bad += json_real_value(json_array_get(back, i)) != json_real_value(json_array_get(arr, i)) ||
		       !json_is_real(json_array_get(back, i));
	check(back && json_array_size(back) == n && bad == 0, "%zu random doubles round-trip (%zu differ)", n, bad);
	free(s);
	json_decref(back);
	json_decref(arr);
}

int main(void)
{
	hand_picked();
	random_doubles();
	return harness_done();
}
