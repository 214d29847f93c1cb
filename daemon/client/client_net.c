/*
 * daemon/client/client_net.c: server lists, TCP and MUNGE (see rm_client.h, "Servers").
 *
 * A list "ENTRY[,ENTRY...]" is tried in order, every try within the call's one timeout: each entry gets
 * at most its share of the time left (time left / entries left) to be resolved, connected and to
 * accept the credential, so that a dead first server (refused, unresolvable, or a black hole that
 * never answers the SYN or the credential) leaves time for the next. Names are resolved with
 * getaddrinfo_a() and waited for with gai_suspend(), so that a slow DNS cannot hold the call beyond its
 * share; numeric addresses never wait. munged's socket is tried with a non-blocking connect first:
 * libmunge retries a refused connection for about two seconds, and a dead munged must fail at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <munge.h>

#include "rm_client.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int left_ms(long long deadline)
{
	long long l = deadline - now_ms();

	return l < 1 ? 0 : l > 3600000 ? 3600000 : (int)l;
}

/* ---- server lists ----------------------------------------------------------------------------- */

int rm_client_server_count(const char *list)
{
	int n = 1;

	if (!list || !*list)
		return 0;
	for (; *list; list++)
		n += *list == ',';
	return n;
}

int rm_client_server_entry(const char *list, int i, char *buf, size_t len)
{
	const char *p = list, *end;
	size_t n;

	for (; p && i > 0; i--)
		if ((p = strchr(p, ',')))
			p++;
	if (!p || i < 0 || !len) {
		errno = ERANGE;
		return -1;
	}
	end = p + strcspn(p, ",");
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	n = (size_t)(end - p);
	if (n >= len) {
		errno = ERANGE;
		return -1;
	}
	memcpy(buf, p, n);
	buf[n] = '\0';
	return 0;
}

/* Parses a port: digits only, 1..65535. */
static int parse_port(const char *s, int *port)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 65535)
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*port = (int)v;
	return 0;
}

int rm_client_server_parse(const char *entry, char *host, size_t hlen, int *port, rm_error_t *err)
{
	const char *colon, *h = entry, *hend;

	errno = EINVAL;
	*port = RM_PORT_DEFAULT;
	if (!entry || !*entry)
		return rm_error_set(err, "server list", 0, 0, "empty entry");
	if (*entry == '/')
		return rm_error_set(err, "server list", 0, 0, "'%s': a Unix socket path, not HOST:PORT", entry);
	if (*entry == '[') {
		h = entry + 1;
		if (!(hend = strchr(h, ']')))
			return rm_error_set(err, "server list", 0, 0,
					    "'%s': "
					    "missing ']' after an IPv6 address",
					    entry);
		colon = hend[1] == ':' ? hend + 1 : NULL;
		if (hend[1] && !colon)
			return rm_error_set(err, "server list", 0, 0,
					    "'%s': "
					    "expected ':PORT' after ']'",
					    entry);
	} else {
		colon = strrchr(entry, ':');
		if (colon && strchr(entry, ':') != colon)
			return rm_error_set(err, "server list", 0, 0,
					    "'%s': "
					    "an IPv6 address needs brackets: [ADDR]:PORT",
					    entry);
		hend = colon ? colon : entry + strlen(entry);
	}
	if (hend == h)
		return rm_error_set(err, "server list", 0, 0,
				    "'%s': "
				    "empty host name (expected HOST:PORT)",
				    entry);
	if ((size_t)(hend - h) >= hlen)
		return rm_error_set(err, "server list", 0, 0, "'%s': host name longer than %zu bytes", entry, hlen - 1);
	if (colon && parse_port(colon + 1, port) < 0)
		return rm_error_set(err, "server list", 0, 0, "'%s': port '%s' is not a number in 1..65535", entry,
				    colon + 1);
	memcpy(host, h, (size_t)(hend - h));
	host[hend - h] = '\0';
	errno = 0;
	return 0;
}

/* ---- TCP connection ----------------------------------------------------------------------------- */

/* A getaddrinfo_a() request; left behind (never freed) when it cannot be cancelled in time. */
typedef struct gai_req {
	struct gaicb cb;
	struct addrinfo hints;
	char host[256], port[8];
} gai_req_t;

/* Resolves a name by deadline. Returns the addresses (freeaddrinfo) or NULL with err set. */
static struct addrinfo *resolve_name(const char *entry, const char *host, const char *port, long long deadline,
				     rm_error_t *err)
{
	gai_req_t *q = calloc(1, sizeof(*q));
	struct gaicb *list[1];
	struct addrinfo *res;
	int r;

	if (!q)
		return rm_error_set(err, entry, 0, 0, "out of memory"), NULL;
	snprintf(q->host, sizeof(q->host), "%s", host);
	snprintf(q->port, sizeof(q->port), "%s", port);
	q->hints.ai_socktype = SOCK_STREAM;
	q->hints.ai_flags = AI_NUMERICSERV;
	q->cb = (struct gaicb){ .ar_name = q->host, .ar_service = q->port, .ar_request = &q->hints };
	list[0] = &q->cb;
	if ((r = getaddrinfo_a(GAI_NOWAIT, list, 1, NULL)) != 0) {
		free(q);
		return rm_error_set(err, entry, 0, 0, "cannot resolve '%s': %s", host, gai_strerror(r)), NULL;
	}
	while ((r = gai_error(&q->cb)) == EAI_INPROGRESS && left_ms(deadline) > 0) {
		int l = left_ms(deadline);
		struct timespec ts = { l / 1000, (long)(l % 1000) * 1000000 };
		gai_suspend((const struct gaicb *const *)list, 1, &ts);
	}
	if (r == EAI_INPROGRESS) {
		r = gai_cancel(&q->cb);
		if (r == EAI_ALLDONE && gai_error(&q->cb) == 0)
			freeaddrinfo(q->cb.ar_result);
		if (r == EAI_CANCELED || r == EAI_ALLDONE)
			free(q); /* else the resolver still uses q: left behind */
		errno = ETIMEDOUT;
		return rm_error_set(err, entry, 0, 0, "resolving '%s' timed out", host), NULL;
	}
	if (r != 0) {
		free(q);
		errno = EHOSTUNREACH;
		return rm_error_set(err, entry, 0, 0, "cannot resolve '%s': %s", host, gai_strerror(r)), NULL;
	}
	res = q->cb.ar_result;
	free(q);
	return res;
}

/* The addresses of host:port: numeric ones at once, names through resolve_name(). */
static struct addrinfo *resolve(const char *entry, const char *host, int port, long long deadline, rm_error_t *err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }, *res;
	char ps[8];

	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo(host, ps, &hints, &res) == 0)
		return res;
	return resolve_name(entry, host, ps, deadline, err);
}

/* Non-blocking connect to one address, waiting until deadline. Returns the socket or -1 (errno). */
static int connect_addr(const struct addrinfo *ai, long long deadline)
{
	struct pollfd p;
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), r, soerr = 0, one = 1, e;
	socklen_t sl = sizeof(soerr);

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS)
		goto fail;
	p = (struct pollfd){ .fd = fd, .events = POLLOUT };
	do
		r = poll(&p, 1, left_ms(deadline));
	while (r < 0 && errno == EINTR);
	if (r == 0)
		errno = ETIMEDOUT;
	if (r <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		goto fail;
	if (!soerr)
		return fd;
	errno = soerr;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/* Connects to a TCP entry by deadline: every address of its host in turn. */
static int tcp_connect(const char *entry, long long deadline, rm_error_t *err)
{
	char host[256];
	struct addrinfo *res, *ai;
	int port, fd = -1, e = ECONNREFUSED;

	if (rm_client_server_parse(entry, host, sizeof(host), &port, err) < 0)
		return -1;
	if (!(res = resolve(entry, host, port, deadline, err)))
		return -1;
	for (ai = res; ai && fd < 0 && left_ms(deadline) > 0; ai = ai->ai_next)
		if ((fd = connect_addr(ai, deadline)) < 0)
			e = errno;
	freeaddrinfo(res);
	if (fd >= 0)
		return fd;
	if (left_ms(deadline) == 0)
		e = ETIMEDOUT;
	rm_error_set(err, entry, 0, 0, "cannot connect to rankmapd: %s", strerror(e));
	errno = e;
	return -1;
}

/* ---- MUNGE ------------------------------------------------------------------------------------ */

void rm_auth_munge_path(const char *path, char *buf, size_t len)
{
	munge_ctx_t c;
	char *def = NULL;

	if (path && *path) {
		snprintf(buf, len, "%s", path);
		return;
	}
	snprintf(buf, len, "/run/munge/munge.socket.2");
	if ((c = munge_ctx_create())) {
		if (munge_ctx_get(c, MUNGE_OPT_SOCKET, &def) == EMUNGE_SUCCESS && def)
			snprintf(buf, len, "%s", def);
		munge_ctx_destroy(c);
	}
}

int rm_auth_munged_alive(const char *path, rm_error_t *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r, e;

	if (strlen(path) >= sizeof(sa.sun_path))
		return errno = ENAMETOOLONG, rm_error_set(err, "munge", 0, 0, "munged socket path too long: %s", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return rm_error_set(err, "munge", 0, 0, "socket: %s", strerror(errno));
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	e = errno;
	close(fd);
	if (r == 0 || e == EINPROGRESS || e == EAGAIN)
		return 0;
	rm_error_set(err, "munge", 0, 0, "munged is not running here (cannot connect to %s: %s)", path, strerror(e));
	errno = e;
	return -1;
}

/* A munge context on munged at path (checked alive first), or NULL with err set. */
static munge_ctx_t munge_ctx(const char *munge_socket, char *path, size_t plen, rm_error_t *err)
{
	munge_ctx_t c;

	rm_auth_munge_path(munge_socket, path, plen);
	if (rm_auth_munged_alive(path, err) < 0)
		return NULL;
	if (!(c = munge_ctx_create()))
		return rm_error_set(err, "munge", 0, 0, "out of memory"), NULL;
	if (munge_ctx_set(c, MUNGE_OPT_SOCKET, path) != EMUNGE_SUCCESS) {
		munge_ctx_destroy(c);
		errno = EINVAL;
		return rm_error_set(err, "munge", 0, 0, "cannot use munged's socket %s", path), NULL;
	}
	return c;
}

/* A fresh credential (free it) of payload, restricted to uid, made through c (on munged at path), or
 * NULL with err set. */
static char *make_cred(munge_ctx_t c, const char *path, const char *payload, unsigned uid, rm_error_t *err)
{
	char *cred = NULL;
	munge_err_t e;

	e = munge_ctx_set(c, MUNGE_OPT_UID_RESTRICTION, (uid_t)uid);
	if (e == EMUNGE_SUCCESS)
		e = munge_encode(&cred, c, payload, (int)strlen(payload));
	if (e != EMUNGE_SUCCESS) {
		rm_error_set(err, "munge", 0, 0, "cannot make a credential through munged at %s: %s", path,
			     munge_ctx_strerror(c) ? munge_ctx_strerror(c) : munge_strerror(e));
		free(cred);
		cred = NULL;
		errno = EACCES;
	}
	return cred;
}

/* Why our munged refused the server's credential, as the client says it. */
static const char *server_cred_refusal(munge_err_t e)
{
	switch (e) {
	case EMUNGE_CRED_INVALID:
	case EMUNGE_BAD_MAC:
	case EMUNGE_BAD_CIPHER:
	case EMUNGE_BAD_ZIP: return "not made with this site's MUNGE key: not a rankmapd of this site";
	case EMUNGE_CRED_REPLAYED: return "replayed: not a rankmapd answering this connection";
	case EMUNGE_CRED_EXPIRED:
	case EMUNGE_CRED_REWOUND: return "expired or made in the future (clock skew between the hosts?)";
	case EMUNGE_CRED_UNAUTHORIZED: return "restricted to another user";
	default: return "refused by munged";
	}
}

/* Step 3: checks the server's answer to the hello (resp: its frame) on fd. Returns 0 with *srv filled,
 * or -1 with err: the daemon's refusal, or "auth" saying why the server is not the one expected. */
static int check_server(int fd, const char *host, munge_ctx_t c, const json_t *resp, const char *cnonce, unsigned uid,
			rm_auth_server_t *srv, rm_error_t *err)
{
	const char *cred = NULL;
	char why[200], peer[RM_AUTH_IDENT_MAX + 8], *copy;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	void *payload = NULL;
	int plen = 0, rc;
	uid_t u = (uid_t)-1;
	gid_t g;
	munge_err_t e;

	if (rm_proto_check_response(resp, err) < 0)
		return -1;
	errno = EACCES;
	if (json_unpack((json_t *)resp, "{s:s}", "cred", &cred) < 0 ||
	    json_integer_value(json_object_get(resp, "auth_version")) != RM_AUTH_VERSION)
		return rm_error_set(err, RM_ERR_AUTH, 0, 0,
				    "the server did not answer the hello with a credential (not a rankmapd of TCP "
				    "authentication version %d)",
				    RM_AUTH_VERSION);
	if (rm_auth_frame_check(cred, strlen(cred), why, sizeof(why)) < 0)
		return rm_error_set(err, RM_ERR_AUTH, 0, 0, "the server's credential: %s", why);
	if (!(copy = strdup(cred)))
		return rm_error_set(err, "munge", 0, 0, "out of memory");
	e = munge_decode(copy, c, &payload, &plen, &u, &g);
	free(copy);
	if (e != EMUNGE_SUCCESS) {
		rc = e == EMUNGE_SOCKET || e == EMUNGE_TIMEOUT
			     ? rm_error_set(err, "munge", 0, 0, "cannot check the server's credential: %s",
					    munge_strerror(e))
			     : rm_error_set(err, RM_ERR_AUTH, 0, 0, "the server's credential is %s",
					    server_cred_refusal(e));
		free(payload);
		return rc;
	}
	rc = rm_auth_server_parse(payload, (size_t)plen, srv, why, sizeof(why));
	free(payload);
	if (rc < 0)
		return rm_error_set(err, RM_ERR_AUTH, 0, 0, "%s", why);
	if ((unsigned)u != uid)
		return rm_error_set(err, RM_ERR_AUTH, 0, 0,
				    "the server's credential is of uid %u, not %u: not the rankmapd expected "
				    "(%s or --server-uid names the uid rankmapd runs as)",
				    (unsigned)u, uid, RM_SERVER_UID_ENV);
	if (strcmp(srv->cnonce, cnonce))
		return rm_error_set(err, RM_ERR_AUTH, 0, 0,
				    "the server's credential does not answer this connection's hello (replayed?)");
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
		return rm_error_set(err, "socket", 0, 0, "getpeername: %s", strerror(errno));
	rm_auth_format_addr((struct sockaddr *)&ss, peer, sizeof(peer));
	if (strcmp(srv->ident, peer) && !(*srv->name && host && !strcasecmp(srv->name, host)))
		return rm_error_set(
			err, RM_ERR_AUTH, 0, 0,
			"the server's credential is for %s%s%s%s, not for %s, the endpoint dialed (a relay? "
			"behind NAT or port forwarding, set server_name in rankmapd.conf to the name "
			"clients dial)",
			srv->ident, *srv->name ? " (" : "", srv->name, *srv->name ? ")" : "", peer);
	return 0;
}

/* The handshake on fd, with a munge context c on munged at path (its creator destroys it). */
static int client_auth(int fd, const char *host, munge_ctx_t c, const char *path, unsigned uid, long long deadline,
		       rm_error_t *err)
{
	char cnonce[RM_AUTH_NONCE_HEX + 1], hello[RM_AUTH_HELLO_LEN + 1], payload[RM_AUTH_PAYLOAD_MAX];
	char *cred = NULL;
	rm_auth_server_t srv;
	rm_error_t serr = { 0 }; /* a send cut off: the daemon's frame that says why may be waiting, and wins */
	json_t *resp;
	int rc, sent;

	if (rm_auth_nonce(cnonce) < 0)
		return rm_error_set(err, "auth", 0, 0, "getrandom: %s", strerror(errno));
	snprintf(hello, sizeof(hello), "%s%s", RM_AUTH_HELLO_PREFIX, cnonce);
	sent = rm_frame_send_raw(fd, hello, strlen(hello), left_ms(deadline), &serr);
	resp = rm_frame_recv(fd, RM_AUTH_FRAME_MAX + 1024, sent == 0 ? left_ms(deadline) : 1000,
			     sent == 0 ? err : NULL);
	if (!resp && sent < 0 && err && !rm_error_isset(err))
		*err = serr;
	rc = resp ? check_server(fd, host, c, resp, cnonce, uid, &srv, err) : -1;
	json_decref(resp);
	if (rc < 0)
		goto out;
	rm_auth_client_payload(payload, sizeof(payload), cnonce, srv.snonce, srv.ident);
	if (!(cred = make_cred(c, path, payload, uid, err)))
		return -1;
	memset(&serr, 0, sizeof(serr));
	sent = rm_frame_send_raw(fd, cred, strlen(cred), left_ms(deadline), &serr);
	free(cred);
	/* A refused client may find its send cut off; the frame that says why is waiting (client.c). */
	resp = rm_frame_recv(fd, 65536,
			     sent == 0 ? left_ms(deadline) : (left_ms(deadline) > 1000 ? 1000 : left_ms(deadline)),
			     sent == 0 ? err : NULL);
	if (!resp) {
		if (sent < 0 && err && !rm_error_isset(err))
			*err = serr;
		return -1;
	}
	rc = rm_proto_check_response(resp, err);
	json_decref(resp);
out:
	if (rc < 0 && errno == EREMOTEIO)
		errno = EACCES;
	return rc;
}

int rm_client_auth(int fd, const char *host, const char *munge_socket, const char *server_uid, int timeout_ms,
		   rm_error_t *err)
{
	long long deadline = now_ms() + (timeout_ms < 0 ? 3600000 : timeout_ms);
	char path[4096];
	munge_ctx_t c;
	unsigned uid;
	int rc, e;

	if (!munge_socket)
		munge_socket = rm_client_munge_socket_from_env();
	if (rm_auth_server_uid(server_uid, &uid, err) < 0)
		return -1;
	if (!(c = munge_ctx(munge_socket, path, sizeof(path), err)))
		return -1;
	rc = client_auth(fd, host, c, path, uid, deadline, err);
	e = errno;
	munge_ctx_destroy(c);
	errno = e;
	return rc;
}

/* ---- trying the list ------------------------------------------------------------------------------- */

/* Connects to one entry by deadline (and authenticates over TCP). Returns the socket or -1. */
static int open_entry(const char *entry, const rm_client_opts_t *o, long long deadline, rm_error_t *err)
{
	const char *msock = o && o->munge_socket ? o->munge_socket : rm_client_munge_socket_from_env();
	char host[256], path[4096];
	munge_ctx_t c;
	unsigned uid;
	int fd = -1, e, port;

	if (!*entry) {
		errno = EINVAL;
		return rm_error_set(err, "server list", 0, 0, "empty entry");
	}
	if (*entry == '/')
		return rm_client_connect(entry, left_ms(deadline), err);
	if (rm_client_server_parse(entry, host, sizeof(host), &port, err) < 0)
		return -1;
	/* munged and the uid first: a dead munged fails before any connection, and the hello follows the
	 * connection at once (a server may close a connection that stays silent) */
	if (rm_auth_server_uid(o ? o->server_uid : NULL, &uid, err) < 0 ||
	    !(c = munge_ctx(msock, path, sizeof(path), err)))
		return -1;
	if ((fd = tcp_connect(entry, deadline, err)) >= 0 && client_auth(fd, host, c, path, uid, deadline, err) < 0) {
		e = errno;
		close(fd);
		errno = e;
		fd = -1;
	}
	e = errno;
	munge_ctx_destroy(c);
	errno = e;
	return fd;
}

/* Codes after which the next server may do better. */
static int worth_next(const rm_error_t *e)
{
	return !strcmp(e->source, RM_ERR_BUSY) || !strcmp(e->source, RM_ERR_SHUTDOWN) ||
	       !strcmp(e->source, RM_ERR_NO_MODEL);
}

typedef struct tries {
	int n, nfailed, last_errno;
	char why[RM_ERROR_TEXT_LEN]; /* "E1: r1; E2: r2" */
	rm_error_t single;           /* the error of a one-entry list, kept as is */
	char single_entry[256];      /* and that entry */
} tries_t;

/* Records that entry failed with e (also in info). */
static void tried(tries_t *t, rm_client_info_t *info, const char *entry, const rm_error_t *e)
{
	char msg[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN], one[RM_ERROR_TEXT_LEN * 2];
	size_t used = strlen(t->why);

	t->last_errno = errno ? errno : EIO;
	rm_error_format(e, msg, sizeof(msg));
	if (strncmp(msg, entry, strlen(entry)) == 0) /* the message already names the entry */
		snprintf(one, sizeof(one), "%s", msg);
	else
		snprintf(one, sizeof(one), "%.200s: %.300s", entry, msg);
	if (!t->nfailed++) {
		t->single = *e;
		snprintf(t->single_entry, sizeof(t->single_entry), "%s", entry);
		if (info)
			snprintf(info->failed, sizeof(info->failed), "%.*s", (int)sizeof(info->failed) - 1, one);
	}
	if (info)
		info->nfailed = t->nfailed;
	snprintf(t->why + used, sizeof(t->why) - used, "%s%s", used ? "; " : "", one);
}

/* The error of a call where no entry answered. Returns -1. */
static int none_answered(const tries_t *t, rm_error_t *err)
{
	if (t->n == 1 && t->nfailed == 1) {
		char msg[RM_ERROR_TEXT_LEN + RM_ERROR_SOURCE_LEN];

		/* the one server is named, whoever made the error (munged, the socket, the daemon's auth) */
		rm_error_format(&t->single, msg, sizeof(msg));
		if (err && !rm_error_isset(err) && strstr(msg, t->single_entry))
			*err = t->single;
		else
			rm_error_set(err, t->single_entry, 0, 0, "%s", msg);
	} else {
		rm_error_set(err, "rankmapd", 0, 0, "no server answered: %s", t->why);
	}
	errno = t->last_errno;
	return -1;
}

static const char *servers_of(const rm_client_opts_t *o)
{
	const char *s = o && o->servers ? o->servers : rm_client_socket_from_env();

	return s ? s : RM_SOCKET_DEFAULT;
}

static int timeout_of(const rm_client_opts_t *o)
{
	return o && o->timeout_ms > 0 ? o->timeout_ms : RM_CLIENT_TIMEOUT_MS;
}

static void info_init(rm_client_info_t *info)
{
	if (info)
		*info = (rm_client_info_t){ .server = -1 };
}

static void info_answered(rm_client_info_t *info, int i, const char *entry)
{
	if (!info)
		return;
	info->server = i;
	snprintf(info->entry, sizeof(info->entry), "%s", entry);
}

/* Connects to entry i of list, its share of the time to deadline. Returns the socket, or -1 recorded in t. */
static int open_nth(const char *list, int i, tries_t *t, const rm_client_opts_t *o, long long deadline, char *entry,
		    size_t elen, rm_client_info_t *info)
{
	rm_error_t e = { 0 };
	long long share = (deadline - now_ms()) / (t->n - i);
	int fd;

	if (rm_client_server_entry(list, i, entry, elen) < 0) {
		snprintf(entry, elen, "entry %d", i + 1);
		errno = ENAMETOOLONG;
		rm_error_set(&e, "server", 0, 0, "entry longer than %zu bytes", elen - 1);
	} else if ((fd = open_entry(entry, o, now_ms() + share, &e)) >= 0) {
		return fd;
	}
	tried(t, info, entry, &e);
	return -1;
}

int rm_client_open(const rm_client_opts_t *o, rm_client_info_t *info, rm_error_t *err)
{
	const char *list = servers_of(o);
	long long deadline = now_ms() + timeout_of(o);
	tries_t t = { .n = rm_client_server_count(list) };
	char entry[256];
	int i, fd;

	info_init(info);
	if (t.n > RM_SERVERS_MAX) {
		errno = E2BIG;
		return rm_error_set(err, "server", 0, 0, "%d servers in the list (at most %d)", t.n, RM_SERVERS_MAX);
	}
	for (i = 0; i < t.n && left_ms(deadline) > 0; i++) {
		if ((fd = open_nth(list, i, &t, o, deadline, entry, sizeof(entry), info)) >= 0) {
			info_answered(info, i, entry);
			return fd;
		}
	}
	if (!t.nfailed) {
		errno = ETIMEDOUT;
		return rm_error_set(err, "rankmapd", 0, 0, "no server tried within the timeout");
	}
	return none_answered(&t, err);
}

/* Fills in "version" and "id" when the caller left them out. */
static int complete_request(json_t *req)
{
	if (!json_object_get(req, "version") && json_object_set_new(req, "version", json_integer(RM_PROTO_VERSION)) < 0)
		return -1;
	if (!json_object_get(req, "id") && json_object_set_new(req, "id", json_integer(1)) < 0)
		return -1;
	return 0;
}

/* One try of request on entry i. Returns 0 answered (ok or not: *response), 1 to try the next entry. */
static int call_nth(const char *list, int i, tries_t *t, const rm_client_opts_t *o, long long deadline,
		    const json_t *request, json_t **response, rm_client_info_t *info, rm_error_t *err)
{
	rm_error_t e = { 0 };
	char entry[256];
	int fd = open_nth(list, i, t, o, deadline, entry, sizeof(entry), info), rc;

	if (fd < 0)
		return 1;
	rc = rm_client_exchange(fd, request, response, left_ms(deadline) ? left_ms(deadline) : 1, &e);
	close(fd);
	if (rc == 0 && rm_proto_check_response(*response, &e) == 0) {
		info_answered(info, i, entry);
		return 0;
	}
	if (rc == 0 && (!worth_next(&e) || i == t->n - 1)) {
		info_answered(info, i, entry);
		if (err && !rm_error_isset(err))
			*err = e;
		return 0;
	}
	json_decref(*response);
	*response = NULL;
	tried(t, info, entry, &e);
	return 1;
}

int rm_client_call_opts(const rm_client_opts_t *o, json_t *request, json_t **response, rm_client_info_t *info,
			rm_error_t *err)
{
	const char *list = servers_of(o);
	long long deadline = now_ms() + timeout_of(o);
	tries_t t = { .n = rm_client_server_count(list) };
	int i, rc = 1;

	*response = NULL;
	info_init(info);
	if (!json_is_object(request) || complete_request(request) < 0) {
		json_decref(request);
		errno = EINVAL;
		return rm_error_set(err, "request", 0, 0, "request is not a JSON object");
	}
	if (t.n > RM_SERVERS_MAX) {
		json_decref(request);
		errno = E2BIG;
		return rm_error_set(err, "server", 0, 0, "%d servers in the list (at most %d)", t.n, RM_SERVERS_MAX);
	}
	for (i = 0; i < t.n && rc == 1 && left_ms(deadline) > 0; i++)
		rc = call_nth(list, i, &t, o, deadline, request, response, info, err);
	json_decref(request);
	if (rc == 0)
		return json_is_true(json_object_get(*response, "ok")) ? 0 : (errno = EREMOTEIO, -1);
	if (!t.nfailed) {
		errno = ETIMEDOUT;
		return rm_error_set(err, "rankmapd", 0, 0, "no server tried within the timeout");
	}
	return none_answered(&t, err);
}

int rm_client_call(const char *socket_path, json_t *request, json_t **response, int timeout_ms, rm_error_t *err)
{
	rm_client_opts_t o = { .servers = socket_path, .timeout_ms = timeout_ms };

	return rm_client_call_opts(&o, request, response, NULL, err);
}
