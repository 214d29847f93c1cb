/*
 * tests/unit/test_spank_bind.c: the --rankmap-bind plan's failures before and at the daemon
 * (plugin/spank/spank_bind.c): a dead socket is reported as unreachable, impossible requests are not.
 * The successful path runs against a real rankmapd in tests/integration/spank_cluster.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spank_bind.h"
#include "tests/harness.h"

int main(void)
{
	uint32_t global[4] = { 0, 1, 2, 3 };
	rm_spank_bind_req_t req = { .socket = "/nonexistent/rankmapd.sock",
				    .timeout_ms = 500,
				    .node = "n1",
				    .alloc_cores = "0",
				    .ntasks = 1,
				    .global = global,
				    .total_tasks = 4,
				    .algo = "auto" };
	rm_error_t err = { 0 };
	int unreachable = -1;
	char *plan;

	plan = rm_spank_bind_plan(&req, &unreachable, &err);
	check(!plan && unreachable == 1, "no daemon: no plan, unreachable (%d, %s)", unreachable, err.text);
	check(strstr(err.source, "rankmapd.sock") || strstr(err.text, "rankmapd"), "error names the socket (%s: %s)",
	      err.source, err.text);
	free(plan);

	rm_error_clear(&err);
	unreachable = -1;
	req.ntasks = 4; /* four tasks on one core */
	plan = rm_spank_bind_plan(&req, &unreachable, &err);
	check(!plan && unreachable == 0 && strstr(err.text, "4 tasks on 1 allocated cores"),
	      "more tasks than cores (%d, %s)", unreachable, err.text);
	free(plan);

	rm_error_clear(&err);
	unreachable = -1;
	req.ntasks = 1;
	req.alloc_cores = "100000";
	plan = rm_spank_bind_plan(&req, &unreachable, &err);
	check(!plan && unreachable == 0 && strstr(err.text, "does not exist on this host"),
	      "a core this host lacks (%s)", err.text);
	free(plan);

	rm_error_clear(&err);
	req.alloc_cores = "0-x";
	plan = rm_spank_bind_plan(&req, &unreachable, &err);
	check(!plan && unreachable == 0 && err.column == 3, "a malformed core list names the column (%d: %s)",
	      err.column, err.text);
	free(plan);
	return harness_done();
}
