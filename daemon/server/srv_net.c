/*
 * daemon/server/srv_net.c: rankmapd's TCP side: listening sockets ("listen = ADDR:PORT", set up as
 * carefully as the Unix socket: the entry checked, SO_REUSEADDR so that a restart after kill -9 binds
 * at once, IPV6_V6ONLY so that [::]:P and 0.0.0.0:P are separate entries), peer addresses, and the
 * register rule: over TCP a node may register only itself, i.e. the name it registers must resolve to
 * the origin address of its MUNGE credential, unless that address is a trusted registrar's.
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

/* Formats an address as "A.B.C.D:P" or "[V6]:P". */
static void format_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, len, "?");
	}
}

void srv_net_peer_tcp(srv_peer_t *peer, const struct sockaddr *sa, socklen_t len)
{
	peer->transport = SRV_PEER_TCP;
	peer->pid = 0;
	peer->uid = SRV_UID_UNKNOWN;
	peer->gid = (gid_t)-1;
	peer->origin4 = 0;
	if (len >= sizeof(struct sockaddr_in))
		format_addr(sa, peer->addr, sizeof(peer->addr));
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
