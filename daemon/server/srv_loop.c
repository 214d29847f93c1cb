/*
 * daemon/server/srv_loop.c: rankmapd's event loop. One thread, epoll, non-blocking sockets, a buffer per
 * connection. Every frame is size-limited and must arrive within request_timeout once started; idle
 * connections are closed after idle_timeout. Quick requests (ping) are answered here; the others go to
 * the worker pool, and the connection reads nothing more until their response is queued.
 *
 * Bounds (srv_limits.c): every connection counts under its uid, and every byte held for it is charged
 * to that uid: a frame's declared length from its header on (before its buffer exists), then the job it
 * becomes until the worker hands it back, then the response until it is written. A client past a limit
 * gets a "busy" frame saying which limit; a connection that is refused or failed is given its last
 * frame, its write side is shut and what it still sends is drained for a moment, so that the client
 * reads the frame rather than "Broken pipe".
 *
 * A TCP connection's handshake, until it is authenticated, is in srv_handshake.c; what both do to a
 * connection (answer, fail, close, drain, account) is in srv_conn.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "rm_client.h"
#include "srv.h"

#include "srv_loop_private.h"

/* Frames up to this size are parsed by the loop (ping is answered at once); larger ones are parsed
 * by a worker, so that the loop never spends long on one client. Small frames are charged but never
 * refused (at most 512 bytes a connection), so that ping gets through a full queue; a request queued
 * for a worker is charged its length, at least JOB_MIN_CHARGE (its job and parsed request: this also
 * bounds the number of jobs queued), and may be refused. */
#define LOOP_PARSE_MAX 512
#define JOB_MIN_CHARGE 1024

static size_t job_charge(size_t n)
{
	return n < JOB_MIN_CHARGE ? JOB_MIN_CHARGE : n;
}

/* Hands a job to the workers; the bytes charged for its frame go with it. */
static void submit(loop_t *l, conn_t *c, srv_job_t *job)
{
	job->conn_id = c->id;
	job->peer = c->peer;
	job->charged = c->in_charge;
	job->charged_uid = c->uid;
	c->in_charge = 0;
	c->busy = 1;
	conn_update(l, c);
	srv_workers_submit(l->ctx->workers, job);
}

/* A "busy" response for a request refused past lim (n bytes): the connection stays usable. */
static json_t *refused_response(loop_t *l, conn_t *c, srv_limit_t lim, size_t n, const json_t *id)
{
	char why[400];

	srv_limits_describe(l->lim, lim, c->uid, n, "request", why, sizeof(why));
	srv_limits_refused(l->lim, lim, c->uid, c->peer.pid, why);
	__atomic_add_fetch(&l->ctx->n_rejected, 1, __ATOMIC_RELAXED);
	return rm_proto_error(id, RM_ERR_BUSY, "%s", why);
}

/* Handles one complete frame payload (c->in, c->in_len). Returns -1 when c was closed. */
static int conn_dispatch(loop_t *l, conn_t *c)
{
	rm_error_t err = { 0 };
	json_t *req, *resp = NULL;
	srv_job_t *job = calloc(1, sizeof(*job));
	srv_limit_t lim = SRV_LIM_NONE;
	srv_handler_t h;
	size_t extra;
	int flags = 0;

	__atomic_add_fetch(&l->ctx->n_requests, 1, __ATOMIC_RELAXED);
	c->frame_start = 0;
	c->hdr_got = 0;
	if (!job) {
		conn_uncount_frame(l, c);
		return conn_respond(l, c, rm_proto_error(NULL, RM_ERR_INTERNAL, "no memory"));
	}
	/* With isolation = process, a request that runs in a worker process goes there unparsed: the worker
	 * process parses it, once (srv_child.c); a large frame goes unparsed to a worker thread, which sends
	 * it on to its worker process or parses it itself (srv_workers.c). */
	if (c->in_len <= LOOP_PARSE_MAX && l->ctx->cfg.isolation == SRV_ISOLATE_PROCESS &&
	    (flags = srv_request_peek(c->in, c->in_len)) > 0 && (flags & SRV_REQ_ISOLATED) &&
	    srv_limits_bytes_check(l->lim, c->uid, (extra = job_charge(c->in_charge) - c->in_charge)) == SRV_LIM_NONE) {
		srv_limits_charge(l->lim, c->uid, extra);
		c->in_charge += extra;
		job->flags = flags; /* refused past a limit: parsed below, for the answer's id */
	}
	flags = 0;
	if (c->in_len > LOOP_PARSE_MAX || job->flags) {
		job->payload = c->in;
		job->payload_len = c->in_len;
		c->in = NULL;
		c->in_len = c->in_got = c->in_cap = 0;
		submit(l, c, job);
		return 0;
	}
	req = srv_frame_parse(l->ctx, c->in, c->in_len, &err);
	job->text = c->in; /* kept (below) only for a request a worker process runs: its text as is */
	job->text_len = c->in_len;
	c->in = NULL;
	c->in_len = c->in_got = c->in_cap = 0;
	if (!req) {
		char buf[RM_ERROR_TEXT_LEN + 64];
		conn_uncount_frame(l, c);
		free(job->text);
		free(job);
		resp = rm_proto_error(NULL, RM_ERR_BAD_FRAME, "%s", rm_error_format(&err, buf, sizeof(buf)));
		srv_log_refused(NULL, &c->peer, resp);
		return conn_respond(l, c, resp);
	}
	h = srv_request_lookup(l->ctx, req, &c->peer, &flags, &resp);
	extra = job_charge(c->in_charge) - c->in_charge;
	if (!h || (flags & SRV_REQ_INLINE) || (lim = srv_limits_bytes_check(l->lim, c->uid, extra))) {
		if (h && !(flags & SRV_REQ_INLINE))
			resp = refused_response(l, c, lim, c->in_charge + extra, json_object_get(req, "id"));
		else if (h)
			resp = h(l->ctx, req, json_object_get(req, "id"), &c->peer);
		if (json_is_false(json_object_get(resp, "ok")))
			srv_log_refused(json_string_value(json_object_get(req, "type")), &c->peer, resp);
		json_decref(req);
		free(job->text);
		free(job);
		conn_uncount_frame(l, c);
		return conn_respond(l, c, resp);
	}
	if (!(flags & SRV_REQ_ISOLATED) || l->ctx->cfg.isolation != SRV_ISOLATE_PROCESS) {
		free(job->text);
		job->text = NULL;
	}
	srv_limits_charge(l->lim, c->uid, extra);
	c->in_charge += extra;
	job->req = req;
	job->id = json_incref(json_object_get(req, "id"));
	job->handler = h;
	job->flags = flags;
	submit(l, c, job);
	return 0;
}

/* Memory follows the bytes that really arrived, not the length a client announces. */
#define PAYLOAD_CHUNK 65536

static int grow_payload(conn_t *c)
{
	size_t cap = c->in_cap ? c->in_cap * 2 : PAYLOAD_CHUNK;
	char *n;

	if (cap > c->in_len)
		cap = c->in_len;
	if (!(n = realloc(c->in, cap)))
		return -1;
	c->in = n;
	c->in_cap = cap;
	return 0;
}

/* Reads into the header, then the payload. Returns 1 for progress, 0 to stop, -1 closed. */
static int conn_read_some(loop_t *l, conn_t *c)
{
	char *dst;
	size_t want;
	ssize_t r;

	if (c->hdr_got < RM_FRAME_HEADER) {
		dst = (char *)c->hdr + c->hdr_got;
		want = RM_FRAME_HEADER - c->hdr_got;
	} else {
		if (c->in_got == c->in_cap && grow_payload(c) < 0) {
			conn_fail(l, c, RM_ERR_INTERNAL, "no memory for the frame");
			return -1;
		}
		dst = c->in + c->in_got;
		want = c->in_cap - c->in_got;
	}
	r = recv(c->fd, dst, want, MSG_DONTWAIT);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	if (r <= 0) { /* peer gone, possibly mid-frame: nothing to answer */
		conn_close(l, c);
		return -1;
	}
	c->last_active = srv_now_ms();
	if (!c->frame_start)
		c->frame_start = c->last_active;
	if (c->hdr_got < RM_FRAME_HEADER)
		c->hdr_got += (size_t)r;
	else
		c->in_got += (size_t)r;
	return 1;
}

/* Checks a just-completed header, charges the declared length to the connection's uid, or refuses it past a limit before anything is allocated, and allocates the
 * payload's first chunk. Returns -1 when c was closed/closing. */
static int conn_header(loop_t *l, conn_t *c)
{
	uint32_t n = rm_frame_length(c->hdr);
	size_t cost = n > LOOP_PARSE_MAX ? job_charge(n) : n;
	srv_limit_t lim;
	char msg[128];

	if (n == 0)
		return conn_fail(l, c, RM_ERR_BAD_FRAME, "frame length is 0"), -1;
	if (!c->authed && n > RM_AUTH_FRAME_MAX) {
		snprintf(msg, sizeof(msg), "%s frame of %u bytes: a %s of at most %d bytes is expected",
			 c->auth_state == AUTH_HELLO ? "first" : "authentication", n,
			 c->auth_state == AUTH_HELLO ? "hello" : "MUNGE credential", RM_AUTH_FRAME_MAX);
		return conn_auth_fail(l, c, RM_ERR_AUTH, msg);
	}
	if (n > l->ctx->cfg.max_frame) {
		snprintf(msg, sizeof(msg), "frame of %u bytes exceeds the limit of %zu bytes", n,
			 l->ctx->cfg.max_frame);
		return conn_fail(l, c, RM_ERR_TOO_LARGE, msg), -1;
	}
	if (n > LOOP_PARSE_MAX && (lim = srv_limits_bytes_check(l->lim, c->uid, cost)) != SRV_LIM_NONE)
		return conn_refuse(l, c, lim, cost, "frame");
	srv_limits_charge(l->lim, c->uid, cost);
	c->in_charge = cost;
	c->in_len = n;
	c->in_got = c->in_cap = 0;
	if (grow_payload(c) < 0)
		return conn_fail(l, c, RM_ERR_INTERNAL, "no memory for the frame"), -1;
	return 0;
}

/* Reads and handles what a client sent, at most FRAMES_PER_TURN frames per turn so that a client
 * streaming requests does not starve the others (epoll reports it again). */
#define FRAMES_PER_TURN 16

void conn_readable(loop_t *l, conn_t *c)
{
	int r, frames = 0;

	while (!c->busy && !c->closing && frames < FRAMES_PER_TURN && c->out_len - c->out_off < OUT_BACKLOG_MAX) {
		r = conn_read_some(l, c);
		if (r <= 0)
			return;
		if (c->hdr_got == RM_FRAME_HEADER && !c->in && conn_header(l, c) < 0)
			return;
		if (c->in && c->in_got == c->in_len) {
			frames++;
			if ((c->authed                     ? conn_dispatch(l, c)
			     : c->auth_state == AUTH_HELLO ? conn_hello(l, c)
							   : conn_cred(l, c)) < 0)
				return;
		}
	}
}

/* Refuses a client when no slot is left (max_clients and SRV_DRAIN_SLOTS closing ones, or out of
 * memory or descriptors): one "busy" error frame, best effort, then close. */
static void reject_client(loop_t *l, int fd)
{
	struct ucred cred = { .uid = SRV_UID_UNKNOWN };
	socklen_t sl = sizeof(cred);
	char why[400];
	size_t len;
	json_t *e;
	char *buf;

	getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &sl);
	srv_limits_describe(l->lim, SRV_LIM_CLIENTS, cred.uid, 0, NULL, why, sizeof(why));
	srv_limits_refused(l->lim, SRV_LIM_CLIENTS, cred.uid, cred.pid, why);
	e = rm_proto_error(NULL, RM_ERR_BUSY, "%s", why);
	buf = rm_frame_encode(e, &len);
	if (buf && send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		srv_log(SRV_LOG_DEBUG, "busy frame not sent: %s", strerror(errno));
	free(buf);
	json_decref(e);
	close(fd);
	__atomic_add_fetch(&l->ctx->n_rejected, 1, __ATOMIC_RELAXED);
}

/* Takes a new client into a slot and counts it under its peer's uid: SO_PEERCRED on the Unix socket;
 * over TCP (sa: the peer's address) SRV_UID_UNKNOWN until its hello, then SRV_UID_HANDSHAKE until its
 * credential is decoded. Past a connection limit it gets its "busy" frame there (conn_set_uid). */
static void add_client(loop_t *l, int fd, const struct sockaddr *sa, socklen_t salen)
{
	struct ucred cred = { .uid = SRV_UID_UNKNOWN, .gid = (gid_t)-1 };
	socklen_t sl = sizeof(cred);
	struct epoll_event e;
	srv_addr_t *a = NULL;
	conn_t *c;
	int slot, one = 1;

	if (sa) {
		a = srv_addrs_get(l->addrs, sa);
		make_room(l, a);
	}
	if (!l->nfree || (!sa && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &sl) < 0) ||
	    !(c = calloc(1, sizeof(*c)))) {
		reject_client(l, fd);
		return;
	}
	slot = l->free_slots[--l->nfree];
	c->fd = fd;
	c->id = (++l->seq << SLOT_BITS) | (uint64_t)slot;
	c->uid = SRV_UID_UNKNOWN;
	c->peer.pid = cred.pid;
	c->peer.uid = cred.uid;
	c->peer.gid = cred.gid;
	c->authed = !sa;
	snprintf(c->peer.addr, sizeof(c->peer.addr), "unix");
	if (sa) {
		srv_net_peer_tcp(&c->peer, sa, salen);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	c->last_active = srv_now_ms();
	c->events = EPOLLIN;
	e.events = EPOLLIN;
	e.data.u64 = c->id;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &e) < 0) {
		l->free_slots[l->nfree++] = slot;
		free(c);
		reject_client(l, fd);
		return;
	}
	l->conns[slot] = c;
	l->nconns++;
	__atomic_add_fetch(&l->ctx->n_connections, 1, __ATOMIC_RELAXED);
	if (sa && tcp_client(l, c, a) < 0)
		return;
	conn_set_uid(l, c, cred.uid);
}

/* Out of descriptors: a client still gets its "busy" frame, through the descriptor kept in reserve
 * for this, instead of the listening socket firing forever. Logged at most once a minute. */
static void accept_no_fd(loop_t *l, int lfd, int err)
{
	long long now = srv_now_ms();
	int fd;

	if (now - l->last_emfile_log > 60000) {
		srv_log(SRV_LOG_ERR, "accept: %s (raise the open-file limit or lower max_clients)", strerror(err));
		l->last_emfile_log = now;
	}
	if (l->reserve_fd < 0)
		return;
	close(l->reserve_fd);
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0)
		reject_client(l, fd);
	l->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* Accepts what waits on listening socket lfd (tcp: a TCP listener), at most ACCEPT_PER_TURN at a time:
 * under a flood of connections the clients already connected are read between turns (epoll reports the
 * listener again). */
#define ACCEPT_PER_TURN 64

static void accept_clients(loop_t *l, int lfd, int tcp)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, n;

	for (n = 0; n < ACCEPT_PER_TURN; n++) {
		sl = sizeof(ss);
		fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE)
				accept_no_fd(l, lfd, errno);
			else if (errno != EAGAIN && errno != EWOULDBLOCK)
				srv_log(SRV_LOG_ERR, "accept: %s", strerror(errno));
			return;
		}
		add_client(l, fd, tcp ? (struct sockaddr *)&ss : NULL, sl);
	}
}

/* Queues a worker's response (stolen) on c; one that would pass a byte limit of c's uid is replaced by
 * a "busy" error saying so (the request's id is not known here: null). Returns -1 when c was closed. */
static int deliver(loop_t *l, conn_t *c, char *out, size_t len)
{
	srv_limit_t lim = out ? srv_limits_bytes_check(l->lim, c->uid, len) : SRV_LIM_NONE;
	char why[400];
	json_t *e;

	if (lim == SRV_LIM_NONE)
		return conn_queue(l, c, out, len);
	free(out);
	srv_limits_describe(l->lim, lim, c->uid, len, "response", why, sizeof(why));
	srv_limits_refused(l->lim, lim, c->uid, c->peer.pid, why);
	__atomic_add_fetch(&l->ctx->n_rejected, 1, __ATOMIC_RELAXED);
	e = rm_proto_error(NULL, RM_ERR_BUSY, "%s", why);
	out = rm_frame_encode(e, &len);
	json_decref(e);
	return conn_queue(l, c, out, len);
}

/* Delivers finished worker jobs to their connections (if still open); what their frames held is
 * released either way. */
static void collect_jobs(loop_t *l)
{
	srv_job_t *j = srv_workers_done(l->ctx->workers), *next;
	conn_t *c;

	for (; j; j = next) {
		next = j->next;
		srv_limits_release(l->lim, j->charged_uid, j->charged);
		if (!j->conn_id) {
			l->internal_inflight--;
		} else if ((c = conn_lookup(l, j->conn_id))) {
			c->busy = 0;
			if (deliver(l, c, j->out, j->out_len) == 0)
				conn_readable(l, c); /* frames that arrived meanwhile */
			j->out = NULL;
		}
		srv_job_free(j);
	}
}

static void conn_check_time(loop_t *l, conn_t *c, long long now)
{
	const srv_config_t *cfg = &l->ctx->cfg;
	int pending = 0;

	if (c->closing) {
		if (now > c->close_by)
			conn_close(l, c);
	} else if (!c->authed && now > c->auth_by && !c->busy && now <= c->auth_by + cfg->auth_timeout_ms &&
		   ioctl(c->fd, FIONREAD, &pending) == 0 && pending > 0) {
		conn_readable(l, c); /* its step arrived in time, the loop was late (a flood): read it now */
	} else if (!c->authed && now > c->auth_by) {
		conn_auth_fail(l, c, RM_ERR_TIMEOUT,
			       c->auth_state == AUTH_HELLO  ? "no hello within auth_timeout: not authenticated"
			       : c->auth_state == AUTH_CRED ? "no credential within auth_timeout: not authenticated"
							    : "munged did not answer within the request timeout");
	} else if (c->out_off < c->out_len && now - c->out_start > cfg->request_timeout_ms) {
		srv_log(SRV_LOG_INFO, "client pid %d does not read its responses: closed", (int)c->peer.pid);
		conn_close(l, c);
	} else if (c->frame_start && now - c->frame_start > cfg->request_timeout_ms) {
		srv_log(SRV_LOG_INFO, "client pid %d: frame not completed within %d ms", (int)c->peer.pid,
			cfg->request_timeout_ms);
		conn_fail(l, c, RM_ERR_TIMEOUT, "frame not completed within the request timeout");
	} else if (!c->busy && !c->frame_start && c->out_off == c->out_len &&
		   now - c->last_active > cfg->idle_timeout_ms) {
		conn_fail(l, c, RM_ERR_TIMEOUT, "idle connection closed");
	}
}

static void internal_job(loop_t *l, void (*fn)(srv_ctx_t *))
{
	srv_job_t *job = calloc(1, sizeof(*job));

	if (!job)
		return;
	job->internal = fn;
	l->internal_inflight++;
	srv_workers_submit(l->ctx->workers, job);
}

static void tick(loop_t *l, volatile sig_atomic_t *reload)
{
	long long now = srv_now_ms();
	int i;

	for (i = 0; i < l->nslots; i++)
		if (l->conns[i])
			conn_check_time(l, l->conns[i], now);
	srv_addrs_sweep(l->addrs, now);
	if (*reload) {
		*reload = 0;
		srv_log(SRV_LOG_NOTICE, "SIGHUP: reloading the sources");
		internal_job(l, srv_job_reload);
	}
	if (l->ctx->cfg.ib_live && l->ctx->cfg.ib_refresh_s > 0 && now >= l->next_refresh) {
		l->next_refresh = now + l->ctx->cfg.ib_refresh_s * 1000LL;
		if (!l->internal_inflight)
			internal_job(l, srv_job_ib_refresh);
	}
}

static int loop_init(loop_t *l, srv_ctx_t *ctx, int efd)
{
	struct epoll_event e = { .events = EPOLLIN };
	int i;

	memset(l, 0, sizeof(*l));
	l->readable = conn_readable;
	l->ctx = ctx;
	l->nslots = ctx->cfg.max_clients + SRV_DRAIN_SLOTS;
	l->conns = calloc((size_t)l->nslots, sizeof(conn_t *));
	l->free_slots = calloc((size_t)l->nslots, sizeof(int));
	l->lim = srv_limits_create(&ctx->cfg);
	l->addrs = srv_addrs_create(4 * ctx->cfg.max_clients, ctx->cfg.auth_failure_burst, ctx->cfg.auth_failure_rate);
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!l->conns || !l->free_slots || !l->lim || !l->addrs || l->epfd < 0)
		return -1;
	for (i = l->nslots - 1; i >= 0; i--) /* lowest slots first */
		l->free_slots[l->nfree++] = i;
	l->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	e.data.u64 = TAG_LISTEN;
	if (ctx->listen_fd >= 0 && epoll_ctl(l->epfd, EPOLL_CTL_ADD, ctx->listen_fd, &e) < 0)
		return -1;
	for (i = 0; i < ctx->n_tcp; i++) {
		e.data.u64 = TAG_TCP(i);
		if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, ctx->tcp_fd[i], &e) < 0)
			return -1;
	}
	e.data.u64 = TAG_AUTH;
	if (ctx->auth && epoll_ctl(l->epfd, EPOLL_CTL_ADD, srv_auth_notify_fd(ctx->auth), &e) < 0)
		return -1;
	e.data.u64 = TAG_WORKERS;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, efd, &e) < 0)
		return -1;
	l->next_refresh = srv_now_ms() + ctx->cfg.ib_refresh_s * 1000LL;
	return 0;
}

static void loop_event(loop_t *l, const struct epoll_event *ev)
{
	conn_t *c;

	if (ev->data.u64 == TAG_LISTEN) {
		accept_clients(l, l->ctx->listen_fd, 0);
		return;
	}
	if (ev->data.u64 == TAG_AUTH) {
		collect_auth(l);
		return;
	}
	if (ev->data.u64 <= TAG_TCP(0) && ev->data.u64 > TAG_TCP(SRV_MAX_LISTEN)) {
		accept_clients(l, l->ctx->tcp_fd[TAG_TCP(0) - ev->data.u64], 1);
		return;
	}
	if (ev->data.u64 == TAG_WORKERS) {
		collect_jobs(l);
		return;
	}
	c = conn_lookup(l, ev->data.u64);
	if (!c)
		return;
	if ((ev->events & EPOLLOUT) && conn_flush(l, c) < 0)
		return;
	if (c->draining) {
		if (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR))
			conn_drain(l, c);
		return;
	}
	if (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
		if (c->busy || c->closing) {
			if (ev->events & (EPOLLHUP | EPOLLERR))
				conn_close(l, c);
			return;
		}
		conn_readable(l, c);
	}
}

int srv_loop_run(srv_ctx_t *ctx, volatile sig_atomic_t *stop, volatile sig_atomic_t *reload)
{
	struct epoll_event evs[256];
	long long last_tick = 0;
	loop_t l = { 0 };
	int i, n, efd = -1;

	if (srv_workers_notify_fd(ctx->workers, &efd) < 0 || loop_init(&l, ctx, efd) < 0) {
		srv_log(SRV_LOG_ERR, "event loop set-up failed: %s", strerror(errno));
		free(l.conns);
		free(l.free_slots);
		srv_limits_destroy(l.lim);
		srv_addrs_destroy(l.addrs);
		if (l.epfd > 0)
			close(l.epfd);
		return -1;
	}
	while (!*stop) {
		n = epoll_wait(l.epfd, evs, 256, TICK_MS);
		l.turn++;
		if (n < 0 && errno != EINTR) {
			srv_log(SRV_LOG_ERR, "epoll_wait: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++)
			loop_event(&l, &evs[i]);
		if (srv_now_ms() - last_tick >= TICK_MS || *reload) {
			last_tick = srv_now_ms();
			tick(&l, reload);
		}
	}
	for (i = 0; i < l.nslots; i++)
		if (l.conns[i])
			conn_close(&l, l.conns[i]);
	free(l.conns);
	free(l.free_slots);
	srv_limits_destroy(l.lim);
	srv_addrs_destroy(l.addrs);
	if (l.reserve_fd >= 0)
		close(l.reserve_fd);
	close(l.epfd);
	return 0;
}
