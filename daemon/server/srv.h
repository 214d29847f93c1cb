/*
 * daemon/server/srv.h: internals of rankmapd shared by rankmapd.c and srv_*.c (not installed, not used by
 * clients: those use daemon/client/rm_client.h).
 *
 * Threads: one event-loop thread owns the sockets and connections (srv_loop.c); a small pool of
 * workers (srv_workers.c) runs requests that take time. The model (srv_model.c) is immutable once
 * published and reference-counted: readers take a reference under a short mutex, register/reload
 * build a new one and swap it in. Registrations (srv_state.c) are saved before they are answered, those
 * that arrive together in one batch (srv_commit.c).
 *
 * Error rule: 0 on success, -1 on failure with the rm_error_t (may be NULL) filled; the first error
 * wins. Nothing here exits: only main() decides to stop.
 */
#ifndef RANKMAP_SRV_H
#define RANKMAP_SRV_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <jansson.h>

#include "rm_error.h"
#include "topo.h"

/* ---- logging (srv_log.c) ---------------------------------------------------------------------- */

enum { SRV_LOG_ERR = 3, SRV_LOG_WARNING = 4, SRV_LOG_NOTICE = 5, SRV_LOG_INFO = 6, SRV_LOG_DEBUG = 7 };

/* Sends messages to stderr (foreground != 0) or syslog from now on; level is the most verbose kept. */
void srv_log_open(int foreground, int level);
void srv_log_close(void);
/* Logs one line. Control characters in the message (whatever its arguments hold) are escaped
 * (srv_log_escape), so no field can break the line or forge another. */
void srv_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copies in to out (len bytes, always terminated; cut at a whole escape) with C0 controls and DEL as
 * \n, \r, \t or \xNN and the UTF-8 C1 controls (U+0080..U+009F) as \u00NN. Returns the length. */
size_t srv_log_escape(const char *in, char *out, size_t len);
/* Around fork() (srv_child.c): prepare takes the log lock, parent releases it, child re-initialises it
 * and closes syslog's connection; srv_log_child_reopen() reconnects once the child closed its other
 * descriptors. */
void srv_log_fork_prepare(void);
void srv_log_fork_parent(void);
void srv_log_fork_child(void);
void srv_log_child_reopen(void);
/* Logs a refused or failed request once, at notice level: "refused TYPE request of uid U (pid P):
 * CODE: message" ("failed ..." for the codes failed, internal and timeout) from the error response resp (borrowed; type NULL when unknown). At most
 * SRV_LOG_REFUSED_MAX lines per second; the next line after a full second says how many were not
 * logged. srv_log_refused_frame does the same from an encoded response frame (decoded only when it
 * is logged). */
#define SRV_LOG_REFUSED_MAX 10
struct srv_peer;
void srv_log_refused(const char *type, const struct srv_peer *peer, const json_t *resp);
void srv_log_refused_frame(const char *type, const struct srv_peer *peer, const char *frame, size_t len);

/* ---- configuration (srv_config.c) -------------------------------------------------------------- */

#define SRV_MAX_IB_FILES 64
#define SRV_MAX_LISTEN 16

enum { SRV_ISOLATE_THREAD = 0, SRV_ISOLATE_PROCESS = 1 };

typedef struct srv_config {
	char *path;        /* the config file (NULL: defaults only) */
	char *socket_path; /* Unix socket; NULL: none (only when listen is given) */
	unsigned socket_mode;
	char *listen[SRV_MAX_LISTEN]; /* TCP listeners "ADDR:PORT" (srv_net.c) */
	int n_listen;
	char *munge_socket;       /* munged's socket for decoding credentials (NULL: libmunge's default) */
	char *trusted_registrars; /* "host,host": may register any node over TCP (NULL: none) */
	char *server_name;        /* TCP: the name clients dial, announced in the handshake (NULL: none) */
	int auth_timeout_ms;      /* TCP: time for each of the client's steps of the handshake */
	int max_unauth_per_addr;  /* TCP: connections of one source address not authenticated yet */
	int auth_failure_burst;   /* TCP: failed handshakes one address may accumulate... */
	int auth_failure_rate;    /* ...forgiven at this rate per second */
	char *state_dir;
	char *hwloc_dir;    /* per-node XML directory (optional) */
	int allow_register; /* nodes may send their XML */
	int strict;         /* a bad hwloc file fails the model build (else it is an anomaly) */
	char *cluster_file; /* a topo cluster description file (optional) */
	char *ib_files[SRV_MAX_IB_FILES];
	int n_ib_files;
	char *node_name_map;
	int ib_live; /* discover the fabric through libibnetdisc */
	char *ib_ca;
	int ib_port;
	int ib_refresh_s; /* 0: discover at start and on reload only */
	char *torus;      /* torus config file (optional) */
	char *slurm_user; /* user allowed to register/reload besides root */
	uid_t slurm_uid;
	int has_slurm_uid;
	size_t max_frame;
	int max_clients;
	/* memory and connection bounds (srv_limits.c) */
	int reserved_clients;            /* the last connections are for root and slurm_user only */
	int max_clients_per_uid;         /* connections of one other user */
	size_t max_queued_bytes;         /* bytes held for all clients: partial frames, queued jobs, responses */
	size_t reserved_queued_bytes;    /* the last of those are for root and slurm_user only */
	size_t max_queued_bytes_per_uid; /* bytes held for one other user */
	int request_timeout_ms;          /* a started frame must arrive, a response must leave, within this */
	int idle_timeout_ms;             /* a connection without a request in progress is closed after this */
	int workers;
	int isolation;              /* SRV_ISOLATE_*: where the requests flagged SRV_REQ_ISOLATED run */
	int worker_time_limit_s;    /* wall-clock limit of one isolated request */
	int worker_cpu_limit_s;     /* CPU limit of one isolated request (RLIMIT_CPU) */
	size_t worker_memory_limit; /* bytes a worker process may map beyond the daemon's size (RLIMIT_AS) */
	size_t pattern_quota;       /* bytes of learned patterns kept per user (LRU beyond) */
	int max_workers_per_uid;    /* workers one user's requests may hold at once (0: no bound) */
	int max_time_budget_ms;     /* the largest map time_budget_ms a user other than root/slurm_user gets */
	int log_level;
	int foreground;
} srv_config_t;

/* Sets the defaults. */
void srv_config_defaults(srv_config_t *cfg);
/* Parses a config file over cfg; errors name the file and line. */
int srv_config_load(srv_config_t *cfg, const char *path, rm_error_t *err);
/* Checks the assembled configuration (after command-line overrides); resolves slurm_user. */
int srv_config_check(srv_config_t *cfg, rm_error_t *err);
/* Frees the strings of cfg. */
void srv_config_free(srv_config_t *cfg);
/* Writes the effective configuration in the file format (for --print-config). */
void srv_config_print(const srv_config_t *cfg, FILE *f);

/* ---- readiness for systemd (srv_notify.c) ------------------------------------------------------- */

/* Reads NOTIFY_SOCKET (sd_notify(3)'s protocol, Type=notify) and removes it from the environment. */
void srv_notify_init(void);
/* Sends state ("READY=1\nSTATUS=...", "STOPPING=1") to the service manager, if there is one. Returns 0,
 * or -1 (logged) when the datagram cannot be sent. */
int srv_notify(const char *state);

/* ---- socket and lock (srv_sock.c) ------------------------------------------------------------- */

/* Takes the lock file <state_dir>/rankmapd.lock (flock, non-blocking). Returns its fd, or -1 when
 * another rankmapd holds it (err names the holder's pid when known). */
int srv_lock_state_dir(const char *state_dir, rm_error_t *err);
/* Creates the listening socket: checks the path length, removes a stale socket (refuses to remove a
 * live one or a non-socket), binds under a umask, chmods to mode. Returns the fd (non-blocking). */
int srv_sock_listen(const char *path, unsigned mode, dev_t *dev, ino_t *ino, rm_error_t *err);
/* Removes the socket file at shutdown if it is still ours (same inode). */
void srv_sock_unlink(const char *path, dev_t dev, ino_t ino);

/* ---- TCP and peers (srv_net.c) ------------------------------------------------------------------ */

typedef struct srv_ctx srv_ctx_t;

enum { SRV_PEER_UNIX = 0, SRV_PEER_TCP = 1 };

/* Who sent a request. Unix socket: SO_PEERCRED. TCP: the MUNGE credential's uid and gid, the peer's
 * address, and the credential's origin address (as munged recorded it where it was made). Plain data:
 * copied to worker processes as is. */
typedef struct srv_peer {
	pid_t pid; /* 0 over TCP */
	uid_t uid;
	gid_t gid;
	int transport;    /* SRV_PEER_* */
	char addr[64];    /* "unix", or the TCP peer "ADDR:PORT" ("[V6]:PORT") */
	uint32_t origin4; /* credential's origin IPv4 address, network order (0: none) */
} srv_peer_t;

/* Creates a TCP listening socket for spec "ADDR:PORT" / "[V6]:PORT" (SO_REUSEADDR, IPV6_V6ONLY,
 * non-blocking, close-on-exec). Returns the fd, or -1 with err naming the entry. */
int srv_net_listen(const char *spec, rm_error_t *err);
/* Fills peer's transport and address from an accepted TCP socket's address. */
void srv_net_peer_tcp(srv_peer_t *peer, const struct sockaddr *sa, socklen_t len);
/* Writes "unix pid P uid U" or "tcp ADDR:PORT uid U" (uid "?" before authentication). Returns buf. */
const char *srv_peer_describe(const srv_peer_t *peer, char *buf, size_t len);
/* The register rule over TCP: host must resolve to the credential's origin address, unless that
 * address is one of trusted_registrars'. Returns 1 when allowed, 0 with the reason in why. Unix-socket
 * peers are allowed (their privilege is checked by uid). May block on name resolution (worker thread). */
int srv_net_register_allowed(const srv_ctx_t *ctx, const srv_peer_t *peer, const char *host, char *why, size_t len);

/* ---- MUNGE authentication of TCP connections (srv_auth.c) ----------------------------------------- */

/* One MUNGE operation of a TCP handshake (PROTOCOL.md "TCP and MUNGE"), then its result. The loop fills
 * conn_id, encode, payload (and cred to decode), the auth thread the rest.
 * - encode: make the server's credential of payload (rm_auth_server_payload), left in cred;
 * - decode: decode cred (the client's frame), which must be of payload exactly (rm_auth_client_payload
 *   for this connection) and restricted to the daemon's own uid. */
#define SRV_AUTH_PAYLOAD_MAX 512
typedef struct srv_auth_job {
	struct srv_auth_job *next;
	uint64_t conn_id;
	int encode;
	char payload[SRV_AUTH_PAYLOAD_MAX];
	char *cred; /* decode: the frame's payload (at most RM_AUTH_FRAME_MAX bytes); encode: the result (owned) */
	size_t len;
	void *addr;          /* the loop's entry of the peer's address (srv_addr_t), for its accounting */
	long long queued_us; /* when the loop queued it (CLOCK_MONOTONIC) */
	int ok;
	uid_t uid;
	gid_t gid;
	uint32_t origin4;
	int munged_down;  /* munged could not be reached */
	char why[200];    /* the reason of a refusal */
	double decode_ms; /* time in munge_decode / munge_encode */
} srv_auth_job_t;

typedef struct srv_auth srv_auth_t;

/* Starts nthreads decoding threads using munged at munge_socket (NULL: libmunge's default; borrowed). */
srv_auth_t *srv_auth_start(const char *munge_socket, int nthreads, rm_error_t *err);
/* The eventfd that becomes readable when jobs are done. */
int srv_auth_notify_fd(const srv_auth_t *a);
/* Queues a job (the pool owns it until srv_auth_done returns it). */
void srv_auth_submit(srv_auth_t *a, srv_auth_job_t *job);
/* Takes the list of decoded jobs (NULL when none). */
srv_auth_job_t *srv_auth_done(srv_auth_t *a);
/* Frees a job. */
void srv_auth_job_free(srv_auth_job_t *job);
/* Stops the threads (a thread stuck in munged is left behind after SRV_STOP_WAIT_MS). NULL is fine. */
void srv_auth_stop(srv_auth_t *a);
/* Runs one job now (encode or decode), in the calling thread (used by the threads and by tests). */
void srv_auth_run(const char *munge_socket, srv_auth_job_t *job);

/* ---- unauthenticated TCP peers, per source address (srv_net.c) ----------------------------------- */

/* What the loop holds for one source address while its connections authenticate: how many, the MUNGE
 * operations it has with the auth threads and those waiting for their turn, and a bucket of failures
 * (handshakes that cost munged work and did not complete): each costs a token, tokens come back at
 * auth_failure_rate a second up to auth_failure_burst; an address without one is refused at once. Only
 * the loop thread uses these. */
typedef struct srv_addr {
	struct srv_addr *next;                 /* hash chain */
	unsigned char key[17];                 /* family byte + 16 address bytes (IPv4 in the first 4) */
	int unauth;                            /* its connections not authenticated yet */
	int inflight;                          /* its jobs with the auth threads */
	srv_auth_job_t *wait_head, *wait_tail; /* its jobs waiting for their turn */
	void *silent_head, *silent_tail;       /* its connections that have sent nothing (oldest first; srv_loop.c) */
	double tokens;
	long long refilled; /* ms of the last refill */
} srv_addr_t;

typedef struct srv_addrs srv_addrs_t;

/* A table of at most max_entries addresses, each with a bucket of burst tokens refilled at rate a second.
 * NULL on ENOMEM. */
srv_addrs_t *srv_addrs_create(int max_entries, int burst, double rate);
void srv_addrs_destroy(srv_addrs_t *t);
/* The entry of sa's address, created when there is none (then NULL when the table is full or ENOMEM). */
srv_addr_t *srv_addrs_get(srv_addrs_t *t, const struct sockaddr *sa);
/* Takes one failure token from a (refilled first). Returns 0, or -1 when it has none. */
int srv_addr_take(srv_addrs_t *t, srv_addr_t *a, long long now);
/* Gives n tokens back to a (a handshake completed), up to the burst. */
void srv_addr_give(srv_addrs_t *t, srv_addr_t *a, int n);
/* Removes the entries that hold nothing (no connection, no job, a full bucket). Call now and then. */
void srv_addrs_sweep(srv_addrs_t *t, long long now);
/* The number of entries. */
int srv_addrs_count(const srv_addrs_t *t);

/* ---- model (srv_model.c) ---------------------------------------------------------------------- */

/* Targets built for recent map requests, reused by identical host/slot lists (read-only, shared). */
#define SRV_TCACHE 64
#define SRV_TCACHE_MAX_SLOTS 65536
#define SRV_TCACHE_MAX_KEY 4096

typedef struct srv_tcache {
	char *key;
	topo_target_t *t;
	int refs;           /* requests using it */
	unsigned long used; /* LRU clock */
} srv_tcache_t;

typedef struct srv_model {
	int refs; /* atomic */
	pthread_mutex_t tc_lock;
	srv_tcache_t tc[SRV_TCACHE];
	unsigned long tc_clock;
	topo_cluster_t cluster;
	unsigned long generation;
	long long built_at; /* seconds since the epoch */
	double build_ms;
	size_t nregistered;
	unsigned long reg_seq; /* registrations it includes */
	json_t *sources;       /* description of what was loaded (for "report") */
	json_t *warnings;      /* sources that failed to load */
	json_t *reg_ignored;   /* host -> why its registration could not be loaded */
} srv_model_t;

/* Builds a model from the configured sources, the live fabric cache and the registrations. Returns a
 * new model (one reference) or NULL. */
srv_model_t *srv_model_build(srv_ctx_t *ctx, rm_error_t *err);
/* Takes a reference on the current model (NULL when none). */
srv_model_t *srv_model_get(srv_ctx_t *ctx);
/* Drops a reference. NULL is fine. */
void srv_model_put(srv_model_t *m);
/* A target of m for key (any string naming the slot set): the cached one, or build(arg, err) cached
 * from now on. *handle must be passed to srv_model_target_put() when done. NULL with err on failure. */
const topo_target_t *srv_model_target(srv_model_t *m, const char *key,
				      topo_target_t *(*build)(void *arg, rm_error_t *err), void *arg, void **handle,
				      rm_error_t *err);
void srv_model_target_put(srv_model_t *m, void *handle);
/* A handle for a target built outside the cache (the put destroys it). */
void srv_model_target_private(const topo_target_t *t, void **handle);
/* Publishes m (steals the reference) and drops the previous model's. */
void srv_model_publish(srv_ctx_t *ctx, srv_model_t *m);
/* Rebuilds and publishes unless a model already covering registrations up to reg_seq exists (0:
 * always). Serialised: concurrent callers share one build. */
int srv_model_rebuild(srv_ctx_t *ctx, unsigned long reg_seq, rm_error_t *err);
/* Loads one registration into the pool (hwloc parses it in a child, only when its hardware is new) and
 * marks the host pending. Returns the pool sequence that includes it, or 0 with err and errno (EINVAL,
 * ECHILD, EMSGSIZE: the XML is bad; ETIMEDOUT: the parser gave no answer in time; ENOMEM), the pool then
 * unchanged. */
unsigned long srv_model_pool_add(srv_ctx_t *ctx, const char *host, const char *xml, size_t len, rm_error_t *err);
/* Loads every saved registration (srv_state_load_registrations) into the pool, once at start; one that
 * cannot be loaded is logged and reported as ignored. */
void srv_model_pool_restore(srv_ctx_t *ctx);
/* Publishes a model that includes the pool up to seq: unless one already does, the current model with the
 * pending hosts changed (topo_cluster_derive: nothing re-read), or a full build when that cannot be done.
 * Serialised: registrations that arrive together share one update. */
int srv_model_update(srv_ctx_t *ctx, unsigned long seq, rm_error_t *err);
/* Frees the pool (at exit). */
void srv_model_pool_free(srv_ctx_t *ctx);
/* Discovers the fabric live and stores it as the cache file in the state directory. */
int srv_model_ib_discover(srv_ctx_t *ctx, rm_error_t *err);

/* ---- state (srv_state.c) ---------------------------------------------------------------------- */

/* Writes data to dir/name atomically and durably: tmp file, fsync, rename, fsync dir. */
int srv_state_write_file(const char *dir, const char *name, const void *data, size_t len, rm_error_t *err);
/* A file written under a temporary name of its own, waiting to be made durable and put in place. */
typedef struct srv_staged {
	char path[4400]; /* where it goes */
	char tmp[4450];  /* where it is */
	int fd;          /* open on tmp; -1 once synced or given up */
	int synced;      /* its data durable under tmp (srv_state_sync) */
	int ok;          /* durable and in place (srv_state_place) */
} srv_staged_t;
/* Writes data to a fresh temporary file beside dir/name (and starts its write-back), neither fsync'ed
 * nor renamed yet. Returns 0, or -1 with err (nothing is left behind). */
int srv_state_stage(const char *dir, const char *name, const void *data, size_t len, srv_staged_t *f, rm_error_t *err);
/* Gives up a staged file: closes it and removes its temporary (nothing if already committed). */
void srv_state_unstage(srv_staged_t *f);
/* Makes a staged file's data durable under its temporary name (fsync) and closes it. Returns 0, or -1
 * with err (the temporary is removed). Files of one batch may be synced by threads of their own. */
int srv_state_sync(srv_staged_t *f, rm_error_t *err);
/* Puts n synced files of dir in place, together: each renamed over its name in order, then dir
 * fsync'ed once for all. files[i]->ok tells which are durable and in place; for each other one synced,
 * its reason goes to *errs[i] and its temporary is removed. Returns how many are. */
size_t srv_state_place(const char *dir, srv_staged_t **files, size_t n, rm_error_t **errs);
/* srv_state_sync of each file in turn, then srv_state_place. */
size_t srv_state_commit(const char *dir, srv_staged_t **files, size_t n, rm_error_t **errs);
/* Prepares the state directory (creates it and its registrations/ subdirectory, mode 0700). Refuses
 * (err names the path, its owner and mode) either of them when it is not owned by the daemon's
 * effective uid or root, or is writable by its group or others (srv_state_check_owner). */
int srv_state_init(const char *state_dir, rm_error_t *err);
/* 0 when the file or directory path (its stat st) is owned by the daemon's uid or root and not
 * writable by group or others; else -1 with errno EPERM and err naming path, owner and mode. */
struct stat;
int srv_state_check_owner(const char *path, const struct stat *st, rm_error_t *err);
/* Loads every saved registration into ctx (called once at start). */
int srv_state_load_registrations(srv_ctx_t *ctx, rm_error_t *err);
/* Stages host's registration (srv_state_stage into registrations/<host>.xml). */
int srv_state_stage_registration(srv_ctx_t *ctx, const char *host, const char *xml, size_t len, srv_staged_t *f,
				 rm_error_t *err);
/* srv_state_place of synced registrations (their directory fsync'ed once). */
size_t srv_state_place_registrations(srv_ctx_t *ctx, srv_staged_t **files, size_t n, rm_error_t **errs);
/* Continues the model generations of the previous run (state.json), so clients never see one go back. */
void srv_state_load_generation(srv_ctx_t *ctx);
/* Saves the model's description (sources, generation, hosts) as state.json. */
int srv_state_save_model(srv_ctx_t *ctx, const srv_model_t *m, rm_error_t *err);
/* True when name is acceptable as a host name in a file name: [A-Za-z0-9._-], not starting with '.'. */
int srv_state_host_ok(const char *name);

/* ---- registrations (kept in ctx, srv_state.c) ---------------------------------------------------- */

/* Records host's registration (replacing an older one): its saved file, or (file NULL, when the save
 * failed) its XML. Returns the new registration sequence. */
unsigned long srv_reg_put(srv_ctx_t *ctx, const char *host, const char *file, const char *xml, size_t len);
/* Calls fn(arg, host, file or NULL, xml or NULL, xml length) for each registration under the
 * registration lock; *seq_out receives the sequence they amount to. */
typedef void (*srv_reg_fn_t)(void *arg, const char *host, const char *file, const char *xml, size_t len);
void srv_reg_foreach(srv_ctx_t *ctx, srv_reg_fn_t fn, void *arg, unsigned long *seq_out);

/* ---- requests (srv_requests.c) ---------------------------------------------------------------- */

typedef json_t *(*srv_handler_t)(srv_ctx_t *ctx, const json_t *req, const json_t *id, const srv_peer_t *peer);

/* INLINE: answered by the event loop; PRIVILEGED: root and slurm_user only; ISOLATED: runs engines or
 * heavy code on the model without changing state, so it runs in a worker process in isolation =
 * process mode (srv_child.c). */
enum { SRV_REQ_INLINE = 1, SRV_REQ_PRIVILEGED = 2, SRV_REQ_ISOLATED = 4 };

/* Checks the envelope (version, type, id) of a request and finds its handler. Returns the handler,
 * or NULL with *error set to an error response (new reference). *flags receives SRV_REQ_*. */
srv_handler_t srv_request_lookup(srv_ctx_t *ctx, const json_t *req, const srv_peer_t *peer, int *flags, json_t **error);
/* The SRV_REQ_* flags of the request type a frame's text (n bytes) names plainly at its top level
 * ("type": "map"), found without parsing the frame, so that it is parsed once, where it runs; -1 when
 * the text does not show one plainly (an escaped key or value, not an object...): the parse decides. */
int srv_request_peek(const char *text, size_t n);
/* Parses a request frame, counting the parse (ctx->n_parses: one per request, in every isolation mode). */
json_t *srv_frame_parse(srv_ctx_t *ctx, const char *buf, size_t len, rm_error_t *err);
/* Internal jobs of the loop (SIGHUP reload, periodic fabric refresh). */
void srv_job_reload(srv_ctx_t *ctx);
void srv_job_ib_refresh(srv_ctx_t *ctx);

/* ---- workers (srv_workers.c) ------------------------------------------------------------------ */

typedef struct srv_job {
	struct srv_job *next;
	uint64_t conn_id; /* 0: internal job without a connection */
	char *payload;    /* a frame the worker parses and dispatches itself, or NULL */
	size_t payload_len;
	json_t *req; /* or a request the loop already parsed, with its handler */
	json_t *id;
	char *text; /* the parsed request's frame payload, kept for a worker process (isolation = process,
		     * SRV_REQ_ISOLATED), which gets it as is: never serialised again; NULL otherwise */
	size_t text_len;
	srv_peer_t peer;
	srv_handler_t handler;
	int flags; /* SRV_REQ_* of a request the loop parsed, or of the type srv_request_peek found in payload */
	void (*internal)(srv_ctx_t *ctx);
	char *out; /* filled by the worker: the encoded response frame */
	size_t out_len;
	size_t charged;                    /* the loop's accounting (srv_limits), released when the job comes back; */
	uid_t charged_uid;                 /* the pool does not touch these */
	struct srv_sched_user *sched_user; /* srv_sched.c: the user whose queue it is in (NULL: internal) */
	struct srv_workers *pool;          /* a deferred job: its pool, and how many of its worker and its */
	int holds;                         /* answerer still hold it (srv_job_defer) */
	void (*complete)(struct srv_job *job, json_t *resp); /* its pool's answer (srv_job_complete) */
} srv_job_t;

/* ---- fair service (srv_sched.c) ---------------------------------------------------------------- */

/* The order in which queued jobs start: one FIFO per uid (job->peer.uid); a free regular worker takes the
 * next job of the user with the fewest jobs running (round robin among equals), whoever that is (work-
 * conserving: one user alone may use every regular worker); the one reserve worker beyond them takes
 * only the oldest job of a user with nothing running, and only while every regular worker is busy; a
 * user never runs more than max_per_uid (0: no bound). Internal jobs (conn_id 0) go first, on regular
 * workers. Not thread-safe: the pool calls it under its lock. */
typedef struct srv_sched srv_sched_t;

/* NULL on ENOMEM. */
srv_sched_t *srv_sched_create(int workers, int max_per_uid);
/* Frees s (not the jobs: srv_sched_drain them first). NULL is fine. */
void srv_sched_destroy(srv_sched_t *s);
/* Queues job (borrowed until popped or drained). */
void srv_sched_push(srv_sched_t *s, srv_job_t *job);
/* The job a free worker runs now (counted as running), or NULL when none may start now; reserve: the
 * caller is the reserve worker. */
srv_job_t *srv_sched_pop(srv_sched_t *s, int reserve);
/* Whether the reserve worker would get a job now (srv_sched_pop(s, 1) != NULL). */
int srv_sched_reserve_wanted(const srv_sched_t *s);
/* A popped job finished. */
void srv_sched_done(srv_sched_t *s, srv_job_t *job);
/* Takes every queued job out (a list through ->next). */
srv_job_t *srv_sched_drain(srv_sched_t *s);
/* Jobs of uid running now; jobs queued in all. */
int srv_sched_running(const srv_sched_t *s, uid_t uid);
int srv_sched_queued(const srv_sched_t *s);

typedef struct srv_workers srv_workers_t;

/* Starts n regular worker threads and the reserve one (srv_sched.c), each with its worker process when
 * isolation = process. */
srv_workers_t *srv_workers_start(srv_ctx_t *ctx, int n, rm_error_t *err);
/* The eventfd that becomes readable when jobs finish. Returns 0. */
int srv_workers_notify_fd(srv_workers_t *w, int *fd);
/* Queues a job (ownership passes to the pool until it comes back from srv_workers_done()). */
void srv_workers_submit(srv_workers_t *w, srv_job_t *job);
/* Takes the list of finished jobs (NULL when none). */
srv_job_t *srv_workers_done(srv_workers_t *w);
/* Number of jobs queued, running or deferred. */
int srv_workers_pending(srv_workers_t *w);
/* ---- deferred answers (srv_defer.c) -------------------------------------------------------------- */

/* For a handler that a worker thread runs: the job is answered later, by srv_job_complete (from any
 * thread), not by the handler's return value (the handler returns NULL), and the worker goes on to the
 * next job meanwhile. Returns the job, or NULL when the caller is not a worker running a request (a
 * handler called directly, as the fuzzers do: it must answer itself). */
srv_job_t *srv_job_defer(void);
/* Answers a deferred job with resp (stolen; NULL: an `internal` error), through the job's pool
 * (job->complete). */
void srv_job_complete(srv_job_t *job, json_t *resp);
/* For the worker thread: job is the request it runs now (srv_job_defer's), until srv_job_ran, which
 * returns 1 when its handler deferred it. */
void srv_job_running(srv_job_t *job);
int srv_job_ran(void);
/* Stops the pool without waiting on a stuck request: worker processes are killed at once, threads
 * get SRV_STOP_WAIT_MS to finish. Returns 0 when every thread ended (the pool and queued jobs are
 * freed), -1 when a thread is still running a request in the daemon (nothing is freed: the caller
 * must leave with _exit()). */
#define SRV_STOP_WAIT_MS 300
int srv_workers_stop(srv_workers_t *w);
/* Frees a job and what it holds. */
void srv_job_free(srv_job_t *job);

/* ---- registrations made durable together (srv_commit.c) ------------------------------------------ */

typedef struct srv_commit srv_commit_t;

/* Starts the committer thread. Returns NULL with err on failure. */
srv_commit_t *srv_commit_start(srv_ctx_t *ctx, rm_error_t *err);
/* Commits and answers every registration queued, then ends the thread, waiting for it until deadline
 * (CLOCK_REALTIME). Returns 0 (c freed), or -1 when it still runs at the deadline (nothing freed: the
 * caller must leave with _exit()). NULL is fine. */
int srv_commit_stop(srv_commit_t *c, const struct timespec *deadline);
/* Saves host's registration (its XML already in the pool at sequence seq) with the others that arrive
 * together: written to a temporary file now, then, in a batch, fsync'ed and renamed into place, the
 * directory fsync'ed once, recorded (srv_reg_put), the model updated once, and only then answered.
 * Run by a worker thread (ctx->commit set), the job is deferred and NULL returned: the committer
 * answers it (srv_job_complete). Else the batch is this registration alone, and the answer is
 * returned. host, xml and id are borrowed from the request, which lives until the answer. */
json_t *srv_commit_register(srv_ctx_t *ctx, const char *host, const char *xml, size_t len, unsigned long seq,
			    const json_t *id, const srv_peer_t *peer);

/* ---- worker processes (srv_child.c) ----------------------------------------------------------- */

typedef struct srv_child srv_child_t;

enum { SRV_CHILD_DONE, SRV_CHILD_DELEGATE, SRV_CHILD_STOPPED };

/* The worker process of one worker thread (none is started yet). stop_fd becomes readable when the
 * pool stops. Returns NULL with err on failure. */
srv_child_t *srv_child_new(srv_ctx_t *ctx, int stop_fd, rm_error_t *err);
/* Starts the process now if there is none (the thread that calls this becomes its parent: the child
 * dies with it). Returns 0 or -1 (logged). */
int srv_child_start(srv_child_t *ch);
/* Runs job (a raw payload, or a parsed request flagged SRV_REQ_ISOLATED) in the worker process.
 * SRV_CHILD_DONE: job->out holds the response frame (an `internal` or `timeout` error when the
 * process died or overran; a fresh one replaces it). SRV_CHILD_DELEGATE: the request must run in the
 * daemon (register, reload, hosts, ping). SRV_CHILD_STOPPED: the pool is stopping, job unanswered. */
int srv_child_run(srv_child_t *ch, srv_job_t *job);
/* The process's pid, or 0 (readable from any thread). */
pid_t srv_child_pid(srv_child_t *ch);
/* Kills and reaps the process, frees ch. NULL is fine. */
void srv_child_free(srv_child_t *ch);

/* Test-only engine faults (srv_fault.c): with RANKMAP_TEST_FAULTS=1 in rankmapd's environment at start
 * (never in production), a map request whose engine is test:segv, test:abort, test:spin,
 * test:sleep or test:hog misbehaves that way. Returns NULL when algo is not one of them or the hook
 * is off; else the response (only test:hog returns). */
json_t *srv_test_fault(srv_ctx_t *ctx, const char *algo, const json_t *id);

/* ---- limits (srv_limits.c) ------------------------------------------------------------------- */

/* What the event loop holds, counted per uid, and which limit refuses more. Only the loop thread uses
 * it. Root and slurm_user are privileged: no per-user caps, and they may use the reserves. */
typedef enum {
	SRV_LIM_NONE,
	SRV_LIM_CLIENTS,     /* max_clients */
	SRV_LIM_RESERVED,    /* max_clients - reserved_clients, for the others */
	SRV_LIM_UID_CLIENTS, /* max_clients_per_uid */
	SRV_LIM_BYTES,       /* max_queued_bytes (minus reserved_queued_bytes for the others) */
	SRV_LIM_UID_BYTES,   /* max_queued_bytes_per_uid */
	SRV_LIM_COUNT
} srv_limit_t;

/* The uid a connection counts under until its peer is known (one more user for the per-user caps). */
#define SRV_UID_UNKNOWN ((uid_t)-1)
/* The uid a TCP connection counts under once its hello was accepted, until its credential is: a bucket
 * of its own (max_clients_per_uid), so that connections that never send a hello cannot displace them. */
#define SRV_UID_HANDSHAKE ((uid_t)-3)
/* Connections refused or failed are given their error frame and drained for at most SRV_DRAIN_MS
 * (srv_loop.c); at most SRV_DRAIN_SLOTS at a time, in descriptors beyond max_clients. */
#define SRV_DRAIN_SLOTS 64
#define SRV_DRAIN_MS 2000

typedef struct srv_limits srv_limits_t;

/* Creates the accounting for cfg (borrowed; must outlive it). NULL on ENOMEM. */
srv_limits_t *srv_limits_create(const srv_config_t *cfg);
/* Frees l (NULL is fine). */
void srv_limits_destroy(srv_limits_t *l);
/* True for root and slurm_user. */
int srv_limits_privileged(const srv_limits_t *l, uid_t uid);
/* The limit one more connection of uid would pass, or SRV_LIM_NONE. */
srv_limit_t srv_limits_conn_check(const srv_limits_t *l, uid_t uid);
/* Counts a connection of uid (0, or -1 on ENOMEM) / stops counting it. */
int srv_limits_conn_add(srv_limits_t *l, uid_t uid);
void srv_limits_conn_del(srv_limits_t *l, uid_t uid);
/* The limit n more bytes held for uid would pass, or SRV_LIM_NONE. */
srv_limit_t srv_limits_bytes_check(const srv_limits_t *l, uid_t uid, size_t n);
/* Charges n bytes to uid without a check (0, or -1 on ENOMEM) / releases them. */
int srv_limits_charge(srv_limits_t *l, uid_t uid, size_t n);
void srv_limits_release(srv_limits_t *l, uid_t uid, size_t n);
/* Bytes held now; *peak (may be NULL) the most ever held. */
size_t srv_limits_queued(const srv_limits_t *l, size_t *peak);
/* Writes the reason given to a client refused by lim: which limit and its value; for byte limits what
 * (e.g. "frame") of n bytes. Returns snprintf's value. */
int srv_limits_describe(const srv_limits_t *l, srv_limit_t lim, uid_t uid, size_t n, const char *what, char *buf,
			size_t len);
/* Counts a refusal and logs it (msg: the reason), at most once per uid and limit every 10 s. */
void srv_limits_refused(srv_limits_t *l, srv_limit_t lim, uid_t uid, pid_t pid, const char *msg);
/* Logs a peer refused with code (e.g. "auth") for why, naming the peer (address or "unix") and uid; at
 * most once per peer host, code and reason every 10 s (the next line says how many were not logged). */
void srv_limits_log_peer(srv_limits_t *l, const srv_peer_t *peer, const char *code, const char *why);

/* ---- event loop (srv_loop.c) ------------------------------------------------------------------ */

/* Serves connections until *stop becomes non-zero; *reload set triggers a reload job. */
int srv_loop_run(srv_ctx_t *ctx, volatile sig_atomic_t *stop, volatile sig_atomic_t *reload);

/* ---- the daemon's context ---------------------------------------------------------------------- */

/* The result of the last reload (SIGHUP, `reload`, periodic fabric refresh); at 0: none since start. */
typedef struct srv_reload_status {
	long long at; /* wall-clock time, seconds since the epoch */
	int ok;
	char error[240]; /* why it failed ("" when ok) */
} srv_reload_status_t;

struct srv_ctx {
	srv_config_t cfg;
	int lock_fd;
	int listen_fd;              /* the Unix socket, -1 when none */
	int tcp_fd[SRV_MAX_LISTEN]; /* TCP listeners (cfg.listen) */
	int n_tcp;
	srv_auth_t *auth; /* decoding threads, when there are TCP listeners */
	dev_t sock_dev;
	ino_t sock_ino;
	long long started_at;
	srv_workers_t *workers;
	srv_commit_t *commit; /* the committer of registrations (started and stopped with the workers) */
	int test_faults;      /* RANKMAP_TEST_FAULTS was set at start (srv_test_fault) */
	/* current model */
	pthread_mutex_t model_lock;
	srv_model_t *model;
	unsigned long generation;
	/* registrations: host -> {"file": path} or {"xml": text} (see srv_reg_put) */
	pthread_mutex_t reg_lock;
	json_t *registrations;
	unsigned long reg_seq;
	/* one model build at a time */
	pthread_mutex_t build_lock;
	unsigned long built_reg_seq; /* the pool sequence the current model includes */
	/* every registered host's hardware, each registration parsed once when it arrives (srv_model.c);
	 * pool_pending: hosts registered since the current model (names), pool_ignored: host -> why its
	 * saved registration could not be loaded at start */
	pthread_mutex_t pool_lock;
	topo_cluster_t pool;
	json_t *pool_pending, *pool_ignored;
	unsigned long pool_seq;
	/* live fabric: cache file in the state dir, discovered at start/refresh */
	pthread_mutex_t ib_lock;
	int ib_cached;
	char *ib_cache_path;
	json_t *ib_status;               /* last discovery result (under ib_lock) */
	srv_reload_status_t last_reload; /* under ib_lock */
	/* statistics (atomics) */
	unsigned long n_requests, n_errors, n_connections, n_rejected;
	unsigned long n_parses; /* request frames parsed, worker processes' parses included (report: parses) */
};

/* Milliseconds of CLOCK_MONOTONIC (for deadlines and durations, never for dates). */
long long srv_now_ms(void);
/* The last reload's result as {"at": seconds since the epoch, "ok": bool[, "error": text]}, or JSON
 * null when there was none since start (new reference; srv_requests.c). */
json_t *srv_reload_json(srv_ctx_t *ctx);

#endif
