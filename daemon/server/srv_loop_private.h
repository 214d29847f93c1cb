/*
 * daemon/server/srv_loop_private.h: what the event loop (srv_loop.c), the TCP handshake it runs
 * (srv_handshake.c) and the connection functions both use (srv_conn.c) share: a connection, the loop,
 * and those functions.
 */
#ifndef RANKMAP_SRV_LOOP_PRIVATE_H
#define RANKMAP_SRV_LOOP_PRIVATE_H

#include <stdint.h>

#include "rm_client.h"
#include "srv.h"

#define TAG_LISTEN UINT64_MAX
#define TAG_WORKERS (UINT64_MAX - 1)
#define TAG_AUTH (UINT64_MAX - 2)
#define TAG_TCP(i) (UINT64_MAX - 16 - (uint64_t)(i)) /* TCP listener i < SRV_MAX_LISTEN */
/* MUNGE operations queued at once; beyond, a new one is refused (munged too slow). */
#define AUTH_INFLIGHT_MAX 1024
/* MUNGE operations of one source address with the auth threads at once; its next ones wait their turn,
 * so that one address cannot keep munged from the others. */
#define AUTH_ADDR_INFLIGHT 2
/* Silent connections looked at for one displacement (the first without a complete hello waiting). */
#define DISPLACE_LOOK 16
enum { AUTH_HELLO, AUTH_MUNGED, AUTH_CRED };
#define SLOT_BITS 20
#define TICK_MS 100
/* A client that does not read its responses: stop reading its requests beyond this backlog. */
#define OUT_BACKLOG_MAX (1u << 20)

typedef struct conn {
	int fd;
	uint64_t id;
	srv_peer_t peer;
	uid_t uid;        /* accounted under (srv_limits); SRV_UID_UNKNOWN until conn_set_uid() */
	int counted;      /* counts as one of uid's connections */
	size_t in_charge; /* bytes charged for the frame being read */
	unsigned char hdr[RM_FRAME_HEADER];
	size_t hdr_got;
	char *in; /* payload being read: in_cap bytes allocated so far, grown as data comes */
	size_t in_len, in_got, in_cap;
	char *out; /* encoded responses waiting to be sent */
	size_t out_len, out_off;
	long long last_active, frame_start, out_start;
	int busy;   /* a request is with the workers, or a MUNGE operation of its handshake with the auth threads */
	int authed; /* Unix: at once; TCP: once its credential was accepted */
	long long auth_by; /* TCP: closed when the handshake's current step is not done by then */
	/* TCP until authenticated: the handshake (PROTOCOL.md "TCP and MUNGE"; rm_client.h) */
	int auth_state;             /* AUTH_HELLO, AUTH_MUNGED, AUTH_CRED */
	srv_addr_t *ae;             /* its source address's entry (counted in ae->unauth) */
	int silent;                 /* no hello yet: on the silent lists, may be displaced */
	unsigned long born_turn;    /* the loop's turn when it was accepted */
	struct conn *sprev, *snext; /* all silent connections, oldest first */
	struct conn *aprev, *anext; /* the silent connections of its address, oldest first */
	int tokens;                 /* failure tokens its handshake holds (given back when it completes) */
	char cnonce[RM_AUTH_NONCE_HEX + 1], snonce[RM_AUTH_NONCE_HEX + 1];
	char ident[RM_AUTH_IDENT_MAX + 1]; /* its server end, as the daemon sees it */
	int closing;                       /* refused or failed: its last frame is in out; closed by close_by */
	int draining;                      /* closing, last frame sent, write side shut: reading and dropping */
	size_t drain_left;
	long long close_by;
	uint32_t events; /* current epoll mask */
} conn_t;

typedef struct loop {
	srv_ctx_t *ctx;
	int epfd;
	conn_t **conns; /* nslots = max_clients + SRV_DRAIN_SLOTS slots */
	int nslots;
	int nconns;   /* slots in use */
	int nclosing; /* connections closing (at most SRV_DRAIN_SLOTS are kept to drain) */
	srv_limits_t *lim;
	int *free_slots; /* stack of unused slots, nfree of them */
	int nfree;
	uint64_t seq;
	int internal_inflight;
	int auth_inflight;  /* MUNGE operations with the auth threads or waiting for their address's turn */
	srv_addrs_t *addrs; /* source addresses of unauthenticated TCP connections (srv_net.c) */
	conn_t *silent_head, *silent_tail;
	unsigned long turn; /* turns of the loop (epoll_wait) */
	long long next_refresh;
	int reserve_fd; /* /dev/null, given up to accept one client when out of descriptors */
	long long last_emfile_log;
	void (*readable)(struct loop *l, conn_t *c); /* conn_readable: reads what a connection sent */
} loop_t;

/* srv_conn.c */
conn_t *conn_lookup(loop_t *l, uint64_t id);
void silent_leave(loop_t *l, conn_t *c);
void silent_join(loop_t *l, conn_t *c);
void addr_leave(loop_t *l, conn_t *c);
void conn_update(loop_t *l, conn_t *c);
int conn_respond(loop_t *l, conn_t *c, json_t *resp);
int conn_fail(loop_t *l, conn_t *c, const char *code, const char *msg);
int conn_set_uid(loop_t *l, conn_t *c, uid_t uid);
void conn_uncount_frame(loop_t *l, conn_t *c);
void conn_uncount(loop_t *l, conn_t *c);
void conn_close(loop_t *l, conn_t *c);
void conn_drain_start(loop_t *l, conn_t *c);
void conn_drain(loop_t *l, conn_t *c);
int conn_flush(loop_t *l, conn_t *c);
int conn_queue(loop_t *l, conn_t *c, char *buf, size_t len);
int conn_refuse(loop_t *l, conn_t *c, srv_limit_t lim, size_t n, const char *what);

/* srv_loop.c (the handshake calls it through l->readable) */
void conn_readable(loop_t *l, conn_t *c);

/* srv_handshake.c: TCP authentication (PROTOCOL.md "TCP and MUNGE") and the bounds on connections that
 * have not authenticated */
int conn_auth_fail(loop_t *l, conn_t *c, const char *code, const char *why);
int conn_hello(loop_t *l, conn_t *c);
int conn_cred(loop_t *l, conn_t *c);
void make_room(loop_t *l, srv_addr_t *a);
int tcp_client(loop_t *l, conn_t *c, srv_addr_t *a);
void collect_auth(loop_t *l);

#endif
