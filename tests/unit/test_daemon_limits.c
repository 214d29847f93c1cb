/*
 * tests/unit/test_daemon_limits.c: rankmapd's accounting of connections and bytes per uid
 * (daemon/server/srv_limits.c): the decisions of each limit against values worked out here, the reserves
 * and the privileged users, the reasons given, and the uid table against a plain array under a long
 * random sequence of connections, charges and releases (entries come and go: the table's deletions).
 */
#include "tests/harness.h"

#include "daemon/server/srv_limits.c"
#include "daemon/server/srv_log.c"

enum { NUIDS = 3000 };

static srv_config_t config(void)
{
	srv_config_t cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.max_clients = 100;
	cfg.reserved_clients = 10;
	cfg.max_clients_per_uid = 5;
	cfg.max_queued_bytes = 1000000;
	cfg.reserved_queued_bytes = 100000;
	cfg.max_queued_bytes_per_uid = 300000;
	cfg.has_slurm_uid = 1;
	cfg.slurm_uid = 64030;
	return cfg;
}

static void test_connections(void)
{
	srv_config_t cfg = config();
	srv_limits_t *l = srv_limits_create(&cfg);
	char why[400];
	int i;

	for (i = 0; i < 5; i++)
		srv_limits_conn_add(l, 1000);
	check(srv_limits_conn_check(l, 1000) == SRV_LIM_UID_CLIENTS, "a user's 6th connection is past its cap");
	check(srv_limits_conn_check(l, 1001) == SRV_LIM_NONE, "another user's first is not");
	check(srv_limits_conn_check(l, 0) == SRV_LIM_NONE, "root is not capped");
	srv_limits_describe(l, SRV_LIM_UID_CLIENTS, 1000, 0, NULL, why, sizeof(why));
	check(strstr(why, "per-user connection limit 5 reached (uid 1000)") != NULL, "reason: %s", why);
	for (i = 5; i < 90; i++) /* 90 = max_clients - reserved_clients */
		srv_limits_conn_add(l, (uid_t)(2000 + i));
	check(srv_limits_conn_check(l, 1001) == SRV_LIM_RESERVED, "the 91st of a user falls in the reserve");
	check(srv_limits_conn_check(l, 0) == SRV_LIM_NONE, "root may take the reserve");
	check(srv_limits_conn_check(l, 64030) == SRV_LIM_NONE, "slurm_user may take the reserve");
	srv_limits_describe(l, SRV_LIM_RESERVED, 1001, 0, NULL, why, sizeof(why));
	check(strstr(why, "all 90 unreserved connections are in use (max_clients 100, reserved_clients 10") != NULL,
	      "reason: %s", why);
	for (i = 90; i < 100; i++)
		srv_limits_conn_add(l, 0);
	check(srv_limits_conn_check(l, 0) == SRV_LIM_CLIENTS, "root too stops at max_clients");
	srv_limits_conn_del(l, 0);
	check(srv_limits_conn_check(l, 0) == SRV_LIM_NONE, "one left: root may connect again");
	check(srv_limits_conn_check(l, 1001) == SRV_LIM_RESERVED, "the user still may not");
	srv_limits_destroy(l);
}

static void test_bytes(void)
{
	srv_config_t cfg = config();
	srv_limits_t *l = srv_limits_create(&cfg);
	size_t peak = 0;
	char why[400];

	check(srv_limits_bytes_check(l, 1000, 300000) == SRV_LIM_NONE, "a user may queue up to its cap");
	check(srv_limits_bytes_check(l, 1000, 300001) == SRV_LIM_UID_BYTES, "not a byte more");
	check(srv_limits_bytes_check(l, 0, 900000) == SRV_LIM_NONE, "root has no per-user cap");
	srv_limits_charge(l, 1000, 250000);
	srv_limits_charge(l, 1001, 250000);
	srv_limits_charge(l, 1002, 250000);
	check(srv_limits_bytes_check(l, 1003, 150000) == SRV_LIM_NONE, "users together up to 900000");
	check(srv_limits_bytes_check(l, 1003, 150001) == SRV_LIM_BYTES, "the rest is reserved");
	check(srv_limits_bytes_check(l, 0, 250000) == SRV_LIM_NONE, "root may use the reserve");
	check(srv_limits_bytes_check(l, 64030, 250001) == SRV_LIM_BYTES, "but not beyond max_queued_bytes");
	srv_limits_describe(l, SRV_LIM_BYTES, 1003, 150001, "frame", why, sizeof(why));
	check(strstr(why,
		     "queued-bytes limit 1000000 reached (750000 bytes held, 100000 of them reserved for root "
		     "and slurm_user; frame of 150001 bytes)") != NULL,
	      "reason: %s", why);
	srv_limits_describe(l, SRV_LIM_UID_BYTES, 1000, 60000, "frame", why, sizeof(why));
	check(strstr(why, "per-user queued-bytes limit 300000 reached (uid 1000 holds 250000 bytes, frame of 60000") !=
		      NULL,
	      "reason: %s", why);
	srv_limits_release(l, 1001, 250000);
	check(srv_limits_queued(l, &peak) == 500000 && peak == 750000, "held %zu, peak %zu", srv_limits_queued(l, NULL),
	      peak);
	srv_limits_release(l, 1001, 5); /* nothing charged any more: ignored */
	check(srv_limits_queued(l, NULL) == 500000, "a release without a charge changes nothing");
	srv_limits_destroy(l);
}

/* Random connections and charges over NUIDS uids; the table must agree with a plain array. */
static void test_table(void)
{
	static int conns[NUIDS];
	static size_t bytes[NUIDS];
	srv_config_t cfg = config();
	srv_limits_t *l;
	unsigned seed = 19;
	size_t total = 0, tb = 0;
	int i, step, bad = 0, tc = 0, nc = 0;

	cfg.max_clients = 100000;
	cfg.max_clients_per_uid = 1 << 30;
	cfg.max_queued_bytes = cfg.max_queued_bytes_per_uid = (size_t)1 << 40;
	l = srv_limits_create(&cfg);
	for (step = 0; step < 400000; step++) {
		uid_t u = (uid_t)(rand_r(&seed) % NUIDS) * 7919u + 1; /* spread, never 0 */
		int k = (int)((u - 1) / 7919u), op = rand_r(&seed) % 4;
		size_t n = (size_t)(rand_r(&seed) % 5000) + 1;
		if (op == 0) {
			srv_limits_conn_add(l, u);
			conns[k]++, nc++;
		} else if (op == 1 && conns[k]) {
			srv_limits_conn_del(l, u);
			conns[k]--, nc--;
		} else if (op == 2) {
			srv_limits_charge(l, u, n);
			bytes[k] += n, total += n;
		} else if (op == 3 && bytes[k]) {
			n = n > bytes[k] ? bytes[k] : n;
			srv_limits_release(l, u, n);
			bytes[k] -= n, total -= n;
		}
	}
	for (i = 0; i < NUIDS; i++) {
		const uid_entry_t *e = find(l, (uid_t)i * 7919u + 1);
		if ((conns[i] || bytes[i]) ? !e || e->conns != conns[i] || e->bytes != bytes[i] : e != NULL)
			bad++;
		if (e)
			tc += e->conns, tb += e->bytes;
	}
	check(bad == 0, "uid table agrees with the model for all %d uids (%d differ)", NUIDS, bad);
	check(tc == nc && l->conns == nc && tb == total && srv_limits_queued(l, NULL) == total,
	      "totals agree: %d connections, %zu bytes", nc, total);
	for (i = 0; i < NUIDS; i++) {
		uid_t u = (uid_t)i * 7919u + 1;
		while (conns[i]--)
			srv_limits_conn_del(l, u);
		srv_limits_release(l, u, bytes[i]);
	}
	check(l->n == 0 && l->conns == 0 && l->bytes == 0, "every entry gone once nothing is held (%zu left)", l->n);
	srv_limits_destroy(l);
}

int main(void)
{
	test_connections();
	test_bytes();
	test_table();
	return harness_done();
}
