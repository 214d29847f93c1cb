/*
 * daemon/server/srv_limits.c: what rankmapd holds for whom, and when to say no. The event loop counts every
 * connection and every byte it holds (partial frames from their length header on, frames queued for or
 * with the workers, responses waiting to be written) under the uid of the connection, and asks here
 * before it takes more: max_clients, reserved_clients, max_clients_per_uid, max_queued_bytes,
 * reserved_queued_bytes and max_queued_bytes_per_uid (rankmapd.conf, PROTOCOL.md "Limits").
 *
 * Root and slurm_user are "privileged": no per-user cap, and they may use the reserves (the last
 * reserved_clients connections, the last reserved_queued_bytes bytes) that other users may not.
 * Only the loop thread calls these functions: no locks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srv.h"

typedef struct uid_entry {
	uid_t uid;
	int used;
	int conns;
	size_t bytes;
} uid_entry_t;

/* Refusals logged at most once per uid and limit in this interval (the others are counted). */
#define LOG_INTERVAL_MS 10000
#define LOG_SLOTS 256

typedef struct log_slot {
	uid_t uid;
	srv_limit_t lim;
	long long at;
	unsigned long suppressed;
} log_slot_t;

/* Refused or failed peers (authentication...), logged at most once per peer address and reason. */
typedef struct peer_log_slot {
	unsigned long key;
	long long at;
	unsigned long suppressed;
} peer_log_slot_t;

struct srv_limits {
	const srv_config_t *cfg;
	uid_entry_t *tab; /* open addressing, linear probing; cap is a power of two */
	size_t cap, n;
	int conns;    /* connections counted */
	size_t bytes; /* bytes charged, all users */
	size_t peak;  /* highest bytes seen */
	unsigned long refused[SRV_LIM_COUNT];
	log_slot_t logs[LOG_SLOTS];
	peer_log_slot_t peer_logs[LOG_SLOTS];
};

static size_t hash_uid(const srv_limits_t *l, uid_t uid)
{
	return ((size_t)uid * 2654435761u) & (l->cap - 1);
}

static uid_entry_t *find(const srv_limits_t *l, uid_t uid)
{
	size_t i = hash_uid(l, uid);

	while (l->tab[i].used) {
		if (l->tab[i].uid == uid)
			return &l->tab[i];
		i = (i + 1) & (l->cap - 1);
	}
	return NULL;
}

static int grow(srv_limits_t *l)
{
	uid_entry_t *old = l->tab;
	size_t oldcap = l->cap, i, j;

	if (!(l->tab = calloc(oldcap * 2, sizeof(*l->tab)))) {
		l->tab = old;
		return -1;
	}
	l->cap = oldcap * 2;
	for (i = 0; i < oldcap; i++) {
		if (!old[i].used)
			continue;
		for (j = hash_uid(l, old[i].uid); l->tab[j].used; j = (j + 1) & (l->cap - 1))
			;
		l->tab[j] = old[i];
	}
	free(old);
	return 0;
}

/* The entry of uid, created when missing. NULL only when out of memory. */
static uid_entry_t *get(srv_limits_t *l, uid_t uid)
{
	uid_entry_t *e = find(l, uid);
	size_t i;

	if (e)
		return e;
	if ((l->n + 1) * 2 > l->cap && grow(l) < 0)
		return NULL;
	for (i = hash_uid(l, uid); l->tab[i].used; i = (i + 1) & (l->cap - 1))
		;
	l->tab[i] = (uid_entry_t){ .uid = uid, .used = 1 };
	l->n++;
	return &l->tab[i];
}

/* Removes an entry that holds nothing any more (backward-shift deletion keeps the probe chains). */
static void put(srv_limits_t *l, uid_entry_t *e)
{
	size_t mask = l->cap - 1, i = (size_t)(e - l->tab), j = i, k;

	if (e->conns || e->bytes)
		return;
	e->used = 0;
	l->n--;
	for (;;) {
		j = (j + 1) & mask;
		if (!l->tab[j].used)
			return;
		k = hash_uid(l, l->tab[j].uid);
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue; /* already between its home and the hole */
		l->tab[i] = l->tab[j];
		l->tab[j].used = 0;
		i = j;
	}
}

srv_limits_t *srv_limits_create(const srv_config_t *cfg)
{
	srv_limits_t *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->cfg = cfg;
	l->cap = 64;
	if (!(l->tab = calloc(l->cap, sizeof(*l->tab)))) {
		free(l);
		return NULL;
	}
	return l;
}

void srv_limits_destroy(srv_limits_t *l)
{
	if (!l)
		return;
	free(l->tab);
	free(l);
}

int srv_limits_privileged(const srv_limits_t *l, uid_t uid)
{
	return uid == 0 || (l->cfg->has_slurm_uid && uid == l->cfg->slurm_uid);
}

srv_limit_t srv_limits_conn_check(const srv_limits_t *l, uid_t uid)
{
	const srv_config_t *cfg = l->cfg;
	const uid_entry_t *e;

	if (l->conns >= cfg->max_clients)
		return SRV_LIM_CLIENTS;
	if (srv_limits_privileged(l, uid))
		return SRV_LIM_NONE;
	if (l->conns >= cfg->max_clients - cfg->reserved_clients)
		return SRV_LIM_RESERVED;
	e = find(l, uid);
	if (e && e->conns >= cfg->max_clients_per_uid)
		return SRV_LIM_UID_CLIENTS;
	return SRV_LIM_NONE;
}

int srv_limits_conn_add(srv_limits_t *l, uid_t uid)
{
	uid_entry_t *e = get(l, uid);

	if (!e)
		return -1;
	e->conns++;
	l->conns++;
	return 0;
}

void srv_limits_conn_del(srv_limits_t *l, uid_t uid)
{
	uid_entry_t *e = find(l, uid);

	if (!e || !e->conns)
		return;
	e->conns--;
	l->conns--;
	put(l, e);
}

srv_limit_t srv_limits_bytes_check(const srv_limits_t *l, uid_t uid, size_t n)
{
	const srv_config_t *cfg = l->cfg;
	const uid_entry_t *e;

	if (srv_limits_privileged(l, uid))
		return l->bytes + n > cfg->max_queued_bytes ? SRV_LIM_BYTES : SRV_LIM_NONE;
	e = find(l, uid);
	if ((e ? e->bytes : 0) + n > cfg->max_queued_bytes_per_uid)
		return SRV_LIM_UID_BYTES;
	if (l->bytes + n > cfg->max_queued_bytes - cfg->reserved_queued_bytes)
		return SRV_LIM_BYTES;
	return SRV_LIM_NONE;
}

int srv_limits_charge(srv_limits_t *l, uid_t uid, size_t n)
{
	uid_entry_t *e;

	if (!n)
		return 0;
	if (!(e = get(l, uid)))
		return -1;
	e->bytes += n;
	l->bytes += n;
	if (l->bytes > l->peak)
		l->peak = l->bytes;
	return 0;
}

void srv_limits_release(srv_limits_t *l, uid_t uid, size_t n)
{
	uid_entry_t *e = n ? find(l, uid) : NULL;

	if (!e)
		return;
	if (n > e->bytes)
		n = e->bytes; /* never happens when charges and releases pair up; keeps the totals sane */
	e->bytes -= n;
	l->bytes -= n;
	put(l, e);
}

size_t srv_limits_queued(const srv_limits_t *l, size_t *peak)
{
	if (peak)
		*peak = l->peak;
	return l->bytes;
}

/* The reason a client is given (and the log says): which limit, its value, and what was held. */
int srv_limits_describe(const srv_limits_t *l, srv_limit_t lim, uid_t uid, size_t n, const char *what, char *buf,
			size_t len)
{
	const srv_config_t *cfg = l->cfg;
	const uid_entry_t *e = find(l, uid);
	size_t held = e ? e->bytes : 0;

	switch (lim) {
	case SRV_LIM_CLIENTS:
		return snprintf(buf, len, "too many clients (limit %d); try again later", cfg->max_clients);
	case SRV_LIM_RESERVED:
		return snprintf(buf, len,
				"all %d unreserved connections are in use (max_clients %d, reserved_clients "
				"%d kept for root and slurm_user); try again later",
				cfg->max_clients - cfg->reserved_clients, cfg->max_clients, cfg->reserved_clients);
	case SRV_LIM_UID_CLIENTS:
		return snprintf(buf, len, "per-user connection limit %d reached (uid %u); try again later",
				cfg->max_clients_per_uid, (unsigned)uid);
	case SRV_LIM_UID_BYTES:
		return snprintf(buf, len,
				"per-user queued-bytes limit %zu reached (uid %u holds %zu bytes, %s of %zu "
				"bytes); try again later",
				cfg->max_queued_bytes_per_uid, (unsigned)uid, held, what, n);
	case SRV_LIM_BYTES:
		if (srv_limits_privileged(l, uid))
			return snprintf(buf, len,
					"queued-bytes limit %zu reached (%zu bytes held, %s of %zu bytes); "
					"try again later",
					cfg->max_queued_bytes, l->bytes, what, n);
		return snprintf(buf, len,
				"queued-bytes limit %zu reached (%zu bytes held, %zu of them reserved for "
				"root and slurm_user; %s of %zu bytes); try again later",
				cfg->max_queued_bytes, l->bytes, cfg->reserved_queued_bytes, what, n);
	default: return snprintf(buf, len, "no limit reached");
	}
}

void srv_limits_refused(srv_limits_t *l, srv_limit_t lim, uid_t uid, pid_t pid, const char *msg)
{
	log_slot_t *s = &l->logs[((size_t)uid * 31 + (size_t)lim) % LOG_SLOTS];
	long long now = srv_now_ms();

	if (lim <= SRV_LIM_NONE || lim >= SRV_LIM_COUNT)
		return;
	l->refused[lim]++;
	if (s->uid == uid && s->lim == lim && s->at && now - s->at < LOG_INTERVAL_MS) {
		s->suppressed++;
		return;
	}
	if (s->uid == uid && s->lim == lim && s->suppressed)
		srv_log(SRV_LOG_WARNING,
			"refused uid %u (pid %d): %s (and %lu more refusals of this uid for this "
			"limit in the last %d s)",
			(unsigned)uid, (int)pid, msg, s->suppressed, LOG_INTERVAL_MS / 1000);
	else
		srv_log(SRV_LOG_WARNING, "refused uid %u (pid %d): %s", (unsigned)uid, (int)pid, msg);
	*s = (log_slot_t){ .uid = uid, .lim = lim, .at = now };
}

/* A hash of the peer's host (its address without the port, or "unix" and the uid), the code and the
 * reason up to its first '(' (details such as munged's own words or sizes stay out of the key). */
static unsigned long peer_key(const srv_peer_t *peer, const char *code, const char *why)
{
	unsigned long h = 5381;
	const char *p = peer->addr, *end = strrchr(peer->addr, ':');

	if (peer->transport != SRV_PEER_TCP || !end)
		end = p + strlen(p);
	for (; p < end; p++)
		h = h * 33 + (unsigned char)*p;
	for (p = code; *p; p++)
		h = h * 33 + (unsigned char)*p;
	for (p = why; *p && *p != '('; p++)
		h = h * 33 + (unsigned char)*p;
	return (h * 33 + (unsigned long)peer->uid) | 1;
}

void srv_limits_log_peer(srv_limits_t *l, const srv_peer_t *peer, const char *code, const char *why)
{
	unsigned long key = peer_key(peer, code, why);
	peer_log_slot_t *s = &l->peer_logs[key % LOG_SLOTS];
	long long now = srv_now_ms();
	char who[128];

	if (s->key == key && s->at && now - s->at < LOG_INTERVAL_MS) {
		s->suppressed++;
		return;
	}
	if (peer->transport == SRV_PEER_TCP) /* as srv_peer_describe, here so that this file stands alone */
		snprintf(who, sizeof(who), "tcp %s uid ", peer->addr);
	else
		snprintf(who, sizeof(who), "unix pid %d uid ", (int)peer->pid);
	if (peer->uid == SRV_UID_UNKNOWN)
		snprintf(who + strlen(who), sizeof(who) - strlen(who), "?");
	else
		snprintf(who + strlen(who), sizeof(who) - strlen(who), "%u", (unsigned)peer->uid);
	if (s->key == key && s->suppressed)
		srv_log(SRV_LOG_WARNING,
			"refused %s: %s: %s (and %lu more from this host for this reason in the last "
			"%d s)",
			who, code, why, s->suppressed, LOG_INTERVAL_MS / 1000);
	else
		srv_log(SRV_LOG_WARNING, "refused %s: %s: %s", who, code, why);
	*s = (peer_log_slot_t){ .key = key, .at = now };
}
