/*
 * daemon/server/srv_net.c: rankmapd's TCP side: listening sockets ("listen = ADDR:PORT", set up as
 * carefully as the Unix socket: the entry checked, SO_REUSEADDR so that a restart after kill -9 binds
 * at once, IPV6_V6ONLY so that [::]:P and 0.0.0.0:P are separate entries), peer addresses, and the
 * register rule: over TCP a node may register only itself, i.e. the name it registers must resolve to
 * the origin address of its MUNGE credential, unless that address is a trusted registrar's; and the
 * table of source addresses whose connections are authenticating (bounds per address, PROTOCOL.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "rm_client.h"
#include "srv.h"

int srv_net_listen(const char *spec, rm_error_t *err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *res;
	char host[256], port_s[8];
	int port, fd, one = 1, r, e;

	if (rm_client_server_parse(spec, host, sizeof(host), &port, err) < 0)
		return -1;
	snprintf(port_s, sizeof(port_s), "%d", port);
	if ((r = getaddrinfo(host, port_s, &hints, &res)) != 0)
		return rm_error_set(err, spec, 0, 0, "listen: cannot resolve '%s': %s", host, gai_strerror(r));
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		e = errno;
		freeaddrinfo(res);
		return rm_error_set(err, spec, 0, 0, "listen: socket: %s", strerror(e));
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (res->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	r = bind(fd, res->ai_addr, res->ai_addrlen);
	if (r == 0)
		r = listen(fd, SOMAXCONN);
	e = errno;
	freeaddrinfo(res);
	if (r < 0) {
		close(fd);
		return rm_error_set(err, spec, 0, 0, "listen: %s", strerror(e));
	}
	return fd;
}

void srv_net_peer_tcp(srv_peer_t *peer, const struct sockaddr *sa, socklen_t len)
{
	peer->transport = SRV_PEER_TCP;
	peer->pid = 0;
	peer->uid = SRV_UID_UNKNOWN;
	peer->gid = (gid_t)-1;
	peer->origin4 = 0;
	if (len >= sizeof(struct sockaddr_in))
		rm_auth_format_addr(sa, peer->addr, sizeof(peer->addr));
	else
		snprintf(peer->addr, sizeof(peer->addr), "?");
}

const char *srv_peer_describe(const srv_peer_t *peer, char *buf, size_t len)
{
	char uid[16] = "?";

	if (peer->uid != SRV_UID_UNKNOWN)
		snprintf(uid, sizeof(uid), "%u", (unsigned)peer->uid);
	if (peer->transport == SRV_PEER_TCP)
		snprintf(buf, len, "tcp %s uid %s", peer->addr, uid);
	else
		snprintf(buf, len, "unix pid %d uid %s", (int)peer->pid, uid);
	return buf;
}

/* Does name resolve to the IPv4 address a (network order)? */
static int resolves_to(const char *name, uint32_t a)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res, *ai;
	int hit = 0;

	if (getaddrinfo(name, NULL, &hints, &res) != 0)
		return 0;
	for (ai = res; ai && !hit; ai = ai->ai_next)
		hit = ((const struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr == a;
	freeaddrinfo(res);
	return hit;
}

/* Is a (network order) one of the hosts of the list "h1,h2"? */
static int trusted(const char *list, uint32_t a)
{
	char name[256];
	int i, n = rm_client_server_count(list);

	for (i = 0; i < n; i++)
		if (rm_client_server_entry(list, i, name, sizeof(name)) == 0 && *name && resolves_to(name, a))
			return 1;
	return 0;
}

int srv_net_register_allowed(const srv_ctx_t *ctx, const srv_peer_t *peer, const char *host, char *why, size_t len)
{
	char origin[INET_ADDRSTRLEN] = "none";
	struct in_addr in = { .s_addr = peer->origin4 };

	if (peer->transport != SRV_PEER_TCP)
		return 1;
	if (peer->origin4)
		inet_ntop(AF_INET, &in, origin, sizeof(origin));
	if (!peer->origin4) {
		snprintf(why, len,
			 "the credential carries no origin address (munged could not tell its host's "
			 "address): a node may register only itself");
		return 0;
	}
	if (ctx->cfg.trusted_registrars && trusted(ctx->cfg.trusted_registrars, peer->origin4))
		return 1;
	if (resolves_to(host, peer->origin4))
		return 1;
	snprintf(why, len,
		 "'%.64s' does not resolve to %s, the origin of the credential: a node may register "
		 "only itself (trusted_registrars lists hosts that may register others)",
		 host, origin);
	return 0;
}

/* ---- source addresses of unauthenticated connections ------------------------------------------------ */

#define ADDR_BUCKETS 4096

struct srv_addrs {
	srv_addr_t *b[ADDR_BUCKETS];
	int n, max;
	double burst, rate;
};

srv_addrs_t *srv_addrs_create(int max_entries, int burst, double rate)
{
	srv_addrs_t *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->max = max_entries;
	t->burst = burst;
	t->rate = rate;
	return t;
}

void srv_addrs_destroy(srv_addrs_t *t)
{
	srv_addr_t *a, *next;
	int i;

	if (!t)
		return;
	for (i = 0; i < ADDR_BUCKETS; i++)
		for (a = t->b[i]; a; a = next) {
			next = a->next;
			while (a->wait_head) {
				srv_auth_job_t *j = a->wait_head;
				a->wait_head = j->next;
				srv_auth_job_free(j);
			}
			free(a);
		}
	free(t);
}

/* The key of sa's address (an IPv4-mapped IPv6 address counts as IPv4). Returns 0, or -1 for another family. */
static int addr_key(const struct sockaddr *sa, unsigned char key[17])
{
	memset(key, 0, 17);
	if (sa->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a)) {
			key[0] = 4;
			memcpy(key + 1, &a->s6_addr[12], 4);
		} else {
			key[0] = 6;
			memcpy(key + 1, a, 16);
		}
	} else {
		return -1;
	}
	return 0;
}

static unsigned addr_hash(const unsigned char key[17])
{
	unsigned h = 2166136261u;
	int i;

	for (i = 0; i < 17; i++)
		h = (h ^ key[i]) * 16777619u;
	return h % ADDR_BUCKETS;
}

srv_addr_t *srv_addrs_get(srv_addrs_t *t, const struct sockaddr *sa)
{
	unsigned char key[17];
	srv_addr_t *a;
	unsigned h;

	if (addr_key(sa, key) < 0)
		return NULL;
	h = addr_hash(key);
	for (a = t->b[h]; a; a = a->next)
		if (!memcmp(a->key, key, sizeof(key)))
			return a;
	if (t->n >= t->max || !(a = calloc(1, sizeof(*a))))
		return NULL;
	memcpy(a->key, key, sizeof(key));
	a->tokens = t->burst;
	a->refilled = srv_now_ms();
	a->next = t->b[h];
	t->b[h] = a;
	t->n++;
	return a;
}

static void refill(const srv_addrs_t *t, srv_addr_t *a, long long now)
{
	if (now > a->refilled) {
		a->tokens += (double)(now - a->refilled) * t->rate / 1000.0;
		if (a->tokens > t->burst)
			a->tokens = t->burst;
	}
	a->refilled = now;
}

int srv_addr_take(srv_addrs_t *t, srv_addr_t *a, long long now)
{
	refill(t, a, now);
	if (a->tokens < 1.0)
		return -1;
	a->tokens -= 1.0;
	return 0;
}

void srv_addr_give(srv_addrs_t *t, srv_addr_t *a, int n)
{
	a->tokens += n;
	if (a->tokens > t->burst)
		a->tokens = t->burst;
}

void srv_addrs_sweep(srv_addrs_t *t, long long now)
{
	srv_addr_t **pp, *a;
	int i;

	for (i = 0; i < ADDR_BUCKETS; i++)
		for (pp = &t->b[i]; (a = *pp);) {
			refill(t, a, now);
			if (!a->unauth && !a->inflight && !a->wait_head && a->tokens >= t->burst) {
				*pp = a->next;
				free(a);
				t->n--;
			} else {
				pp = &a->next;
			}
		}
}

int srv_addrs_count(const srv_addrs_t *t)
{
	return t->n;
}
