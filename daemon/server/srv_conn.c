/*
 * daemon/server/srv_conn.c: what the event loop (srv_loop.c) and the TCP handshake (srv_handshake.c) do
 * to a connection: find it, keep the silent (no hello yet) lists, queue and send its responses, fail,
 * drain and close it, and account what it holds to its uid (srv_limits.c). It calls neither of them:
 * the handshake goes back to reading a connection through the loop's l->readable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "rm_client.h"
#include "srv.h"

#include "srv_loop_private.h"

conn_t *conn_lookup(loop_t *l, uint64_t id)
{
	uint64_t slot = id & ((1u << SLOT_BITS) - 1);
	conn_t *c;

	if (slot >= (uint64_t)l->nslots)
		return NULL;
	c = l->conns[slot];
	return c && c->id == id ? c : NULL;
}

/* Takes c off the silent lists. */
void silent_leave(loop_t *l, conn_t *c)
{
	srv_addr_t *a = c->ae;

	if (!c->silent)
		return;
	c->silent = 0;
	*(c->sprev ? &c->sprev->snext : &l->silent_head) = c->snext;
	*(c->snext ? &c->snext->sprev : &l->silent_tail) = c->sprev;
	c->sprev = c->snext = NULL;
	if (a) {
		*(c->aprev ? &c->aprev->anext : (conn_t **)&a->silent_head) = c->anext;
		*(c->anext ? &c->anext->aprev : (conn_t **)&a->silent_tail) = c->aprev;
	}
	c->aprev = c->anext = NULL;
}

/* Puts a new TCP connection at the end of the silent lists. */
void silent_join(loop_t *l, conn_t *c)
{
	srv_addr_t *a = c->ae;

	c->silent = 1;
	c->sprev = l->silent_tail;
	*(l->silent_tail ? &l->silent_tail->snext : &l->silent_head) = c;
	l->silent_tail = c;
	if (a) {
		c->aprev = a->silent_tail;
		*(a->silent_tail ? &((conn_t *)a->silent_tail)->anext : (conn_t **)&a->silent_head) = c;
		a->silent_tail = c;
	}
}

/* c no longer counts as an unauthenticated connection of its address. */
void addr_leave(loop_t *l, conn_t *c)
{
	silent_leave(l, c);
	if (c->ae)
		c->ae->unauth--;
	c->ae = NULL;
}

/* Stops counting c as a connection of its uid and drops the frame it was sending. */
void conn_uncount(loop_t *l, conn_t *c)
{
	addr_leave(l, c);
	if (c->counted)
		srv_limits_conn_del(l->lim, c->uid);
	c->counted = 0;
	srv_limits_release(l->lim, c->uid, c->in_charge);
	c->in_charge = 0;
	free(c->in);
	c->in = NULL;
	c->in_len = c->in_got = c->in_cap = 0;
}

void conn_close(loop_t *l, conn_t *c)
{
	uint64_t slot = c->id & ((1u << SLOT_BITS) - 1);

	conn_uncount(l, c);
	srv_limits_release(l->lim, c->uid, c->out_len - c->out_off);
	if (c->closing)
		l->nclosing--;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	l->conns[slot] = NULL;
	l->free_slots[l->nfree++] = (int)slot;
	l->nconns--;
	free(c->out);
	free(c);
}

/* Sets the epoll mask the connection's state calls for. */
void conn_update(loop_t *l, conn_t *c)
{
	uint32_t ev = 0;
	struct epoll_event e;

	if (c->draining || (!c->busy && !c->closing && c->out_len - c->out_off < OUT_BACKLOG_MAX))
		ev |= EPOLLIN;
	if (c->out_off < c->out_len)
		ev |= EPOLLOUT;
	if (ev == c->events)
		return;
	e.events = ev;
	e.data.u64 = c->id;
	if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, c->fd, &e) == 0)
		c->events = ev;
}

/* The last frame of a closing connection is out: shut the write side (the client reads the frame, then
 * end of file) and read and drop what it still sends (at most one largest frame, until close_by), so
 * that it is not cut off in the middle of sending and never reads the frame. */
void conn_drain_start(loop_t *l, conn_t *c)
{
	shutdown(c->fd, SHUT_WR);
	c->draining = 1;
	c->drain_left = l->ctx->cfg.max_frame + RM_FRAME_HEADER;
}

/* Reads and drops what a draining client sends; closes at its end of file or at drain_left. */
void conn_drain(loop_t *l, conn_t *c)
{
	static char sink[65536];
	ssize_t r;
	int i;

	for (i = 0; i < 16; i++) {
		r = recv(c->fd, sink, c->drain_left < sizeof(sink) ? c->drain_left : sizeof(sink), MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r <= 0 || (c->drain_left -= (size_t)r) == 0) {
			conn_close(l, c);
			return;
		}
	}
}

/* Sends what can be sent now. Returns -1 when the connection was closed. A client must keep
 * reading: request_timeout without progress drops it (out_start is the last progress). */
int conn_flush(loop_t *l, conn_t *c)
{
	size_t before = c->out_off;

	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w <= 0) {
			conn_close(l, c);
			return -1;
		}
		c->out_off += (size_t)w;
		srv_limits_release(l->lim, c->uid, (size_t)w);
	}
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
		if (c->closing && !c->draining)
			conn_drain_start(l, c);
	}
	c->last_active = srv_now_ms();
	if (c->out_off != before)
		c->out_start = c->last_active;
	conn_update(l, c);
	return 0;
}

/* Queues an encoded frame (stolen; NULL: encoding failed), charged to the connection's uid until it is
 * written, and tries to send it. Returns -1 when the connection was closed. */
int conn_queue(loop_t *l, conn_t *c, char *buf, size_t len)
{
	if (!buf) {
		srv_log(SRV_LOG_ERR, "cannot encode a response for pid %d", (int)c->peer.pid);
		conn_close(l, c);
		return -1;
	}
	if (c->out_off == c->out_len) {
		free(c->out);
		c->out = buf;
		c->out_len = len;
		c->out_off = 0;
		c->out_start = srv_now_ms();
	} else {
		char *n = realloc(c->out, c->out_len + len);
		if (!n) {
			free(buf);
			conn_close(l, c);
			return -1;
		}
		memcpy(n + c->out_len, buf, len);
		free(buf);
		c->out = n;
		c->out_len += len;
	}
	srv_limits_charge(l->lim, c->uid, len);
	return conn_flush(l, c);
}

/* Queues a response (stolen) and tries to send it. Returns -1 when the connection was closed. */
int conn_respond(loop_t *l, conn_t *c, json_t *resp)
{
	size_t len = 0;
	char *buf = resp ? rm_frame_encode(resp, &len) : NULL;

	if (resp && json_is_false(json_object_get(resp, "ok")))
		__atomic_add_fetch(&l->ctx->n_errors, 1, __ATOMIC_RELAXED);
	json_decref(resp);
	return conn_queue(l, c, buf, len);
}

/* Sends a final error: c no longer counts as a connection nor holds a frame, and is closed once the
 * error is out and drained (conn_drain_start), by SRV_DRAIN_MS at the latest. Beyond SRV_DRAIN_SLOTS
 * connections closing at once, c is closed as soon as the error was handed to the socket. Returns -1. */
int conn_fail(loop_t *l, conn_t *c, const char *code, const char *msg)
{
	int crowded = l->nclosing >= SRV_DRAIN_SLOTS;

	if (c->closing)
		return -1;
	conn_uncount(l, c);
	c->closing = 1;
	c->close_by = srv_now_ms() + SRV_DRAIN_MS;
	l->nclosing++;
	if (conn_respond(l, c, rm_proto_error(NULL, code, "%s", msg)) == 0 && crowded)
		conn_close(l, c);
	return -1;
}

/* Refuses c past lim (for a byte limit: n bytes of what, e.g. "frame"): "busy" with the reason, logged
 * (rate-limited). Returns -1 (c is closing). */
int conn_refuse(loop_t *l, conn_t *c, srv_limit_t lim, size_t n, const char *what)
{
	char why[400];

	srv_limits_describe(l->lim, lim, c->uid, n, what, why, sizeof(why));
	srv_limits_refused(l->lim, lim, c->uid, c->peer.pid, why);
	__atomic_add_fetch(&l->ctx->n_rejected, 1, __ATOMIC_RELAXED);
	return conn_fail(l, c, RM_ERR_BUSY, why);
}

/* Sets the uid c is accounted under and counts c as one of its connections: at accept from
 * SO_PEERCRED; a transport that authenticates its peer later (first frame) calls it again, and what c
 * holds moves to the new uid. Past a connection limit of that uid, c is refused. Returns 0, or -1 when
 * c was refused (closing). */
int conn_set_uid(loop_t *l, conn_t *c, uid_t uid)
{
	size_t held = c->in_charge + (c->out_len - c->out_off);
	srv_limit_t lim;

	if (c->counted)
		srv_limits_conn_del(l->lim, c->uid);
	c->counted = 0;
	srv_limits_release(l->lim, c->uid, held);
	c->uid = uid;
	srv_limits_charge(l->lim, uid, held);
	if ((lim = srv_limits_conn_check(l->lim, uid)) != SRV_LIM_NONE)
		return conn_refuse(l, c, lim, 0, NULL);
	if (srv_limits_conn_add(l->lim, uid) < 0)
		return conn_fail(l, c, RM_ERR_INTERNAL, "no memory");
	c->counted = 1;
	return 0;
}

/* Releases the bytes charged for the frame just read (answered here, not queued). */
void conn_uncount_frame(loop_t *l, conn_t *c)
{
	srv_limits_release(l->lim, c->uid, c->in_charge);
	c->in_charge = 0;
}
