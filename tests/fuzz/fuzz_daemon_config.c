/* Fuzz target: rankmapd.conf (daemon/server/srv_config.c: the table-driven parser), the check of the
 * assembled configuration, and printing it back. */
#include "fuzz_util.h"
#include "daemon/server/srv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	srv_config_t cfg;
	rm_error_t err = { 0 };

	if (!null && !(null = fopen("/dev/null", "w")))
		fz_die("/dev/null");
	srv_config_defaults(&cfg);
	if (srv_config_load(&cfg, fz_path(data, size), &err) == 0 && srv_config_check(&cfg, &err) == 0)
		srv_config_print(&cfg, null);
	srv_config_free(&cfg);
	return 0;
}
