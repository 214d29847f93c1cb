/* Fuzz target: rankmapd's JSON request decoding: a frame payload (rm_frame_parse), the envelope check
 * and every request handler on a real model (see fuzz_daemon_common.h). */
#include "fuzz_daemon_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_daemon_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rm_error_t err = { 0 };
	json_t *req = rm_frame_parse((const char *)data, size, &err);

	if (req) {
		fz_dispatch(req);
		json_decref(req);
	}
	return 0;
}
