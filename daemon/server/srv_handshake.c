/*
 * daemon/server/srv_handshake.c: the TCP side of rankmapd's event loop (srv_loop.c) until a connection is
 * authenticated: the version 2 handshake (a hello, the server's MUNGE credential, the client's; PROTOCOL.md
 * "TCP and MUNGE"), its MUNGE operations queued per source address for the auth threads (srv_auth.c), and
 * the bounds on connections that have not authenticated (per source address, silent ones displaced).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "srv_loop_private.h"

/* Refuses a TCP connection before or at its authentication: the error frame (code "auth", "timeout"
 * or "busy") and a close, logged once per peer host and reason (srv_limits_log_peer). Returns -1. */
int conn_auth_fail(loop_t *l, conn_t *c, const char *code, const char *why)
{
	srv_limits_log_peer(l->lim, &c->peer, code, why);
	__atomic_add_fetch(&l->ctx->n_rejected, 1, __ATOMIC_RELAXED);
	return conn_fail(l, c, code, why);
}

/* Queues a MUNGE operation of c's handshake: with the auth threads when its address has fewer than
 * AUTH_ADDR_INFLIGHT there, else after its address's others (auth_next). c reads nothing meanwhile. */
static void auth_queue(loop_t *l, conn_t *c, srv_auth_job_t *job)
{
	srv_addr_t *a = c->ae;

	job->conn_id = c->id;
	job->addr = a;
	c->busy = 1;
	c->auth_state = AUTH_MUNGED;
	c->auth_by = srv_now_ms() + l->ctx->cfg.request_timeout_ms; /* munged's time, not the client's */
	l->auth_inflight++;
	conn_update(l, c);
	if (a->inflight < AUTH_ADDR_INFLIGHT) {
		a->inflight++;
		srv_auth_submit(l->ctx->auth, job);
		return;
	}
	job->next = NULL;
	*(a->wait_tail ? &a->wait_tail->next : &a->wait_head) = job;
	a->wait_tail = job;
}

/* A job of address a came back: its next waiting ones (of connections still open) go to the threads. */
static void auth_next(loop_t *l, srv_addr_t *a)
{
	srv_auth_job_t *j;
	conn_t *c;

	while (a->inflight < AUTH_ADDR_INFLIGHT && (j = a->wait_head)) {
		if (!(a->wait_head = j->next))
			a->wait_tail = NULL;
		if (!(c = conn_lookup(l, j->conn_id)) || c->closing) {
			l->auth_inflight--;
			srv_auth_job_free(j);
			continue;
		}
		a->inflight++;
		srv_auth_submit(l->ctx->auth, j);
	}
}

/* A new MUNGE operation for c: refused ("busy") when too many wait for munged or c's address has no
 * failure token left. Returns the job (zeroed), or NULL when c is closing. */
static srv_auth_job_t *auth_job(loop_t *l, conn_t *c)
{
	srv_auth_job_t *job;
	char why[200];

	if (!l->ctx->auth || l->auth_inflight >= AUTH_INFLIGHT_MAX)
		return conn_auth_fail(l, c, RM_ERR_BUSY, "too many credentials waiting for munged; try again later"),
		       NULL;
	if (srv_addr_take(l->addrs, c->ae, srv_now_ms()) < 0) {
		snprintf(why, sizeof(why),
			 "too many failed or abandoned authentications from this address (auth_failure_burst %d, "
			 "auth_failure_rate %d/s); try again later",
			 l->ctx->cfg.auth_failure_burst, l->ctx->cfg.auth_failure_rate);
		return conn_auth_fail(l, c, RM_ERR_BUSY, why), NULL;
	}
	c->tokens++;
	if (!(job = calloc(1, sizeof(*job))))
		return conn_fail(l, c, RM_ERR_INTERNAL, "no memory"), NULL;
	return job;
}

/* Takes the frame just read out of c (its charge released): *len bytes, owned by the caller. */
static char *take_frame(loop_t *l, conn_t *c, size_t *len)
{
	char *in = c->in;

	*len = c->in_len;
	c->in = NULL;
	c->in_len = c->in_got = c->in_cap = 0;
	c->frame_start = 0;
	c->hdr_got = 0;
	conn_uncount_frame(l, c);
	return in;
}

/* Step 1 of the handshake: a hello, checked for its exact form (nothing is parsed). c leaves the silent
 * connections for those in the middle of a handshake (SRV_UID_HANDSHAKE, never displaced), and the
 * server's credential is made for it (step 2). Returns -1 when c is closing. */
int conn_hello(loop_t *l, conn_t *c)
{
	char why[300], payload[RM_AUTH_PAYLOAD_MAX], *in;
	srv_auth_job_t *job;
	size_t len;
	int rc;

	in = take_frame(l, c, &len);
	rc = rm_auth_hello_check(in, len, c->cnonce, why, sizeof(why));
	free(in);
	if (rc < 0)
		return conn_auth_fail(l, c, RM_ERR_AUTH, why);
	silent_leave(l, c);
	if (srv_limits_conn_check(l->lim, SRV_UID_HANDSHAKE) != SRV_LIM_NONE) {
		snprintf(why, sizeof(why),
			 "too many connections in the middle of authentication (max_clients_per_uid %d); try again "
			 "later",
			 l->ctx->cfg.max_clients_per_uid);
		return conn_auth_fail(l, c, RM_ERR_BUSY, why);
	}
	if (conn_set_uid(l, c, SRV_UID_HANDSHAKE) < 0)
		return -1;
	if (rm_auth_nonce(c->snonce) < 0)
		return conn_fail(l, c, RM_ERR_INTERNAL, "no random numbers");
	if (rm_auth_server_payload(payload, sizeof(payload), c->cnonce, c->snonce, c->ident, l->ctx->cfg.server_name) <
	    0)
		return conn_fail(l, c, RM_ERR_INTERNAL, "cannot write the server's credential");
	if (!(job = auth_job(l, c)))
		return -1;
	job->encode = 1;
	snprintf(job->payload, sizeof(job->payload), "%s", payload);
	auth_queue(l, c, job);
	return 0;
}

/* Step 4: the client's credential, after a check of its form (nothing is parsed), goes to the auth
 * threads with the payload it must carry for this connection. Returns -1 when c is closing. */
int conn_cred(loop_t *l, conn_t *c)
{
	char why[200], *in;
	srv_auth_job_t *job;
	size_t len;

	in = take_frame(l, c, &len);
	if (rm_auth_frame_check(in, len, why, sizeof(why)) < 0) {
		free(in);
		return conn_auth_fail(l, c, RM_ERR_AUTH, why);
	}
	if (!(job = auth_job(l, c))) {
		free(in);
		return -1;
	}
	job->cred = in;
	job->len = len;
	rm_auth_client_payload(job->payload, sizeof(job->payload), c->cnonce, c->snonce, c->ident);
	auth_queue(l, c, job);
	return 0;
}

/* Has c's whole hello arrived (read or waiting in its socket)? */
static int hello_waiting(const conn_t *c)
{
	int pending = 0;

	if (ioctl(c->fd, FIONREAD, &pending) < 0)
		pending = 0;
	return c->hdr_got + c->in_got + (size_t)pending >= RM_FRAME_HEADER + RM_AUTH_HELLO_LEN;
}

/* Closes the oldest silent connection (no complete hello, nor one waiting in its socket) among the first
 * DISPLACE_LOOK of a list (next: its link), to make room for a new one: first one accepted in an earlier
 * turn of the loop, so that it had the chance to be read; else, when every one of them came in this turn
 * (a flood that reconnects faster than the loop turns), one of this turn with nothing waiting in its
 * socket (a client sends its hello as soon as it is connected, so a real one has it waiting), rather than
 * refusing the new connection, which may be the real client's. Returns 0 when one was closed. */
static int displace_silent(loop_t *l, conn_t *first, int by_addr)
{
	conn_t *c;
	int i, pass;

	for (pass = 0; pass < 2; pass++)
		for (c = first, i = 0; c && i < DISPLACE_LOOK; i++, c = by_addr ? c->anext : c->snext) {
			if ((pass == 0 && c->born_turn == l->turn) || hello_waiting(c))
				continue;
			conn_auth_fail(l, c, RM_ERR_BUSY,
				       by_addr ? "too many connections from this address waiting to authenticate: the "
						 "oldest silent one is closed"
					       : "too many connections waiting to authenticate: the oldest silent "
						 "one is closed");
			return 0;
		}
	return -1;
}

/* Room for a new TCP connection from address a: past max_unauth_per_addr of its connections waiting to
 * authenticate, its own oldest silent one is closed; past max_clients_per_uid of all the silent ones
 * (SRV_UID_UNKNOWN), the oldest silent one. Connections that sent their hello are never closed for
 * this: a flood of connections that never authenticate cannot keep real clients out. */
void make_room(loop_t *l, srv_addr_t *a)
{
	if (a && a->unauth >= l->ctx->cfg.max_unauth_per_addr)
		displace_silent(l, a->silent_head, 1);
	if (srv_limits_conn_check(l->lim, SRV_UID_UNKNOWN) == SRV_LIM_UID_CLIENTS)
		displace_silent(l, l->silent_head, 0);
}

/* The TCP side of a new connection: its address's entry, its server end (its identity in the
 * handshake), the silent lists, and the per-address bound. Returns -1 when c was refused (closing). */
int tcp_client(loop_t *l, conn_t *c, srv_addr_t *a)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char why[200];

	c->ae = a;
	c->born_turn = l->turn;
	c->auth_state = AUTH_HELLO;
	c->auth_by = c->last_active + l->ctx->cfg.auth_timeout_ms;
	if (a)
		a->unauth++;
	silent_join(l, c);
	if (getsockname(c->fd, (struct sockaddr *)&ss, &sl) < 0)
		return conn_fail(l, c, RM_ERR_INTERNAL, "getsockname failed");
	rm_auth_format_addr((struct sockaddr *)&ss, c->ident, sizeof(c->ident));
	if (!a)
		return conn_auth_fail(l, c, RM_ERR_BUSY, "too many addresses authenticating at once; try again later");
	if (a->unauth > l->ctx->cfg.max_unauth_per_addr) {
		snprintf(why, sizeof(why),
			 "too many connections from this address waiting to authenticate (max_unauth_per_addr %d); "
			 "try again later",
			 l->ctx->cfg.max_unauth_per_addr);
		return conn_auth_fail(l, c, RM_ERR_BUSY, why);
	}
	return 0;
}

/* The server's credential was made (step 2): it goes to the client, which has auth_timeout to send
 * its own. */
static void auth_encoded(loop_t *l, conn_t *c, const srv_auth_job_t *j)
{
	json_t *ok;

	if (!j->ok) {
		conn_auth_fail(l, c, RM_ERR_AUTH, j->why);
		return;
	}
	c->auth_state = AUTH_CRED;
	c->auth_by = srv_now_ms() + l->ctx->cfg.auth_timeout_ms;
	ok = rm_proto_ok(NULL);
	json_object_set_new(ok, "auth", json_string("munge"));
	json_object_set_new(ok, "auth_version", json_integer(RM_AUTH_VERSION));
	json_object_set_new(ok, "cred", json_stringn(j->cred, j->len));
	if (conn_respond(l, c, ok) == 0)
		l->readable(l, c);
}

/* The client's credential was decoded (step 5): an accepted one gives its address's failure tokens back
 * and makes c count under its uid (which may refuse it past a connection limit) and gets {"ok": true,
 * "auth": "munge", "uid", "gid"}; a refused one gets "auth" and a close. Frames that arrived meanwhile
 * are read next. */
static void auth_result(loop_t *l, conn_t *c, const srv_auth_job_t *j)
{
	char who[128];
	json_t *ok;

	if (!j->ok) {
		conn_auth_fail(l, c, RM_ERR_AUTH, j->why);
		return;
	}
	c->authed = 1;
	c->peer.uid = j->uid;
	c->peer.gid = j->gid;
	c->peer.origin4 = j->origin4;
	if (c->ae)
		srv_addr_give(l->addrs, c->ae, c->tokens);
	addr_leave(l, c);
	if (conn_set_uid(l, c, j->uid) < 0)
		return;
	srv_log(SRV_LOG_DEBUG, "authenticated %s (munge_decode %.2f ms)", srv_peer_describe(&c->peer, who, sizeof(who)),
		j->decode_ms);
	ok = rm_proto_ok(NULL);
	json_object_set_new(ok, "auth", json_string("munge"));
	json_object_set_new(ok, "uid", json_integer((json_int_t)j->uid));
	json_object_set_new(ok, "gid", json_integer((json_int_t)j->gid));
	if (conn_respond(l, c, ok) == 0)
		l->readable(l, c);
}

void collect_auth(loop_t *l)
{
	srv_auth_job_t *j = srv_auth_done(l->ctx->auth), *next;
	srv_addr_t *a;
	conn_t *c;

	for (; j; j = next) {
		next = j->next;
		l->auth_inflight--;
		a = j->addr;
		a->inflight--;
		if ((c = conn_lookup(l, j->conn_id)) && !c->closing) {
			c->busy = 0;
			if (j->encode)
				auth_encoded(l, c, j);
			else
				auth_result(l, c, j);
		}
		srv_auth_job_free(j);
		auth_next(l, a);
	}
}
