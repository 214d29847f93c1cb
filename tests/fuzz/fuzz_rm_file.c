/* Fuzz target: common/rm_file.c, the way every input file is opened. The input is parsed as a size
 * (RANKMAP_FILE_LIMIT_<KIND> values), then read as a file through rm_file_read and rm_file_fopen
 * with a cap set by its first byte. Checks what rm_file promises: a parsed size is > 0; a file within
 * the cap is read whole and exactly; a file over it is refused with an error naming it; a stream
 * never delivers more than the cap. */
#include "fuzz_util.h"
#include "rm_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rm_error_t err = { 0 };
	char *s = fz_string(data, size), *b, buf[4096];
	const char *path;
	size_t v = 0, len = 0, cap = size ? (size_t)data[0] * 4 + 1 : 1, got = 0, r;
	FILE *f;

	if (rm_file_parse_size(s, &v) == 0 && v == 0)
		abort(); /* promised: a parsed size is positive */
	free(s);
	if (rm_file_set_limit(RM_FILE_CONFIG, cap) < 0)
		abort();
	path = fz_path(data, size);
	b = rm_file_read(path, RM_FILE_CONFIG, &len, &err);
	if (size <= cap && (!b || len != size || memcmp(b, data, size) || b[len]))
		abort(); /* within the cap: read whole, exactly, NUL-terminated */
	if (size > cap && (b || strcmp(err.source, path) || !strstr(err.text, "too large")))
		abort(); /* over it: refused, naming the file */
	free(b);
	if ((f = rm_file_fopen(path, RM_FILE_CONFIG, NULL, NULL))) {
		while ((r = fread(buf, 1, sizeof(buf), f)) > 0)
			got += r;
		if (got > cap || (got != size && !ferror(f)))
			abort();
		fclose(f);
	} else if (size <= cap) {
		abort();
	}
	return 0;
}
