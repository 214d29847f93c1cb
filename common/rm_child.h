/*
 * common/rm_child.h: work that must not take its caller down, run in a forked child process.
 *
 * rm_child_run() forks, runs a function in the child under resource limits and returns the bytes the
 * function produced, sent back through a pipe. The caller waits a bounded time: a child that crashes,
 * runs past its CPU or wall-clock limit, or exceeds its memory limit costs the caller one error, never
 * a signal, a hang or unbounded memory. Used for the mapping engines at an MPI job's root rank
 * (mapping/map_guard.c) and for reading a user's pattern file inside slurmstepd (plugin/spank).
 *
 * The child: returns fatal signals to their default action (an MPI library's crash handler must not
 * report the child's crash as the job's), has stdin, stdout and stderr on /dev/null and every other
 * inherited descriptor closed (it keeps no socket, pipe or device of its parent busy), dumps no core,
 * dies with its parent (PR_SET_PDEATHSIG), and ends with _exit() (no atexit handlers, no library
 * finalizers). It must not call MPI or anything that relies on a thread of its parent.
 *
 * Error rule: a pointer on success; NULL with errno set on failure (ETIMEDOUT: a time limit was reached;
 * ECHILD: the child died or ended without a result; EMSGSIZE: its result was too large; else the
 * function's own errno or fork's) and the caller's rm_error_t (may be NULL) filled, the first error
 * winning.
 */
#ifndef RANKMAP_RM_CHILD_H
#define RANKMAP_RM_CHILD_H

#include <stddef.h>

#include "rm_error.h"

typedef struct rm_child_limits {
	double wall_ms;   /* wall-clock bound, > 0: past it the child is killed (SIGKILL) */
	unsigned cpu_s;   /* RLIMIT_CPU of the child in seconds (0: unchanged) */
	size_t mem_bytes; /* RLIMIT_AS of the child: its address space at fork plus this (0: unchanged) */
	size_t max_out;   /* largest result accepted, bytes (0: 256 MiB) */
} rm_child_limits_t;

/* Runs in the child. Returns a malloc'd result of *len bytes (len may be 0 with a non-NULL result), or
 * NULL with err filled and errno set. */
typedef void *(*rm_child_fn)(void *arg, size_t *len, rm_error_t *err);

/* Runs fn(arg) in a child process under lim. what names the work in error messages ("engine 'scotch'").
 * Returns fn's result, copied into a new buffer the caller frees (*len: its size), or NULL (see the
 * error rule above): fn's own error, or "<what>: crashed (signal 11, Segmentation fault)", "<what>: CPU
 * time limit of N s reached", "<what>: no result within N ms (stopped)". */
void *rm_child_run(const char *what, rm_child_fn fn, void *arg, const rm_child_limits_t *lim, size_t *len,
		   rm_error_t *err);

/*
 * A child that serves requests one after another (rm_child_srv_*): the same hygiene and memory limit as
 * rm_child_run, one fork for many pieces of work. A call sends one request and waits at most wall_ms for
 * its answer; a child that crashes, hangs or answers badly costs that request one error (the child is
 * killed and reaped), and the next call starts a new child. For parsing untrusted inputs one by one: a
 * batch costs one fork, and the input a parser dies on costs that input only.
 */
typedef struct rm_child_srv rm_child_srv_t;

/* Runs in the child for each request of reqlen bytes: returns a malloc'd answer of *len bytes, or NULL
 * with err filled and errno set (the function's own error, the child goes on serving). */
typedef void *(*rm_child_req_fn)(void *arg, const void *req, size_t reqlen, size_t *len, rm_error_t *err);

/* A server of fn(arg) under lim (cpu_s is ignored: wall_ms bounds each request). No child is started
 * before the first call. Returns NULL with errno ENOMEM or EINVAL. what is copied. */
rm_child_srv_t *rm_child_srv_create(const char *what, rm_child_req_fn fn, void *arg, const rm_child_limits_t *lim);
/* Sends one request (forking a child when none runs). Returns the answer, a new buffer the caller frees
 * (*len: its size), or NULL under the error rule above (ECHILD: the child died on this request). */
void *rm_child_srv_call(rm_child_srv_t *s, const void *req, size_t reqlen, size_t *len, rm_error_t *err);
/* Children of s from now on are a new program instead of forks of the caller: path run with argv (argv[0]
 * first, NULL-terminated; the caller's pid is appended as one more argument), started with posix_spawn,
 * so nothing of the caller runs in the child before exec. That program calls rm_child_srv_serve() with
 * the same function. For a threaded caller: a fork runs the function in a copy of a process whose other
 * threads may hold locks the copy then waits for forever (GCC 12's AddressSanitizer allocator and stack
 * depot, a library's own). Returns 0, or -1 with errno ENOMEM or EINVAL. path and argv are copied. */
int rm_child_srv_exec(rm_child_srv_t *s, const char *path, char *const argv[]);
/* In a program started by an exec'ing server (rm_child_srv_exec): parent is the pid the server appended
 * to its argv (a string). Sets the child up as a forked one is (signals, death with its parent, stdin,
 * stdout and stderr on /dev/null, every other descriptor but the request socket closed, lim's memory
 * limit on top of this program's own size), then serves fn's requests until the server closes the
 * socket. Never returns. */
__attribute__((noreturn)) void rm_child_srv_serve(const char *parent, rm_child_req_fn fn, void *arg,
						  const rm_child_limits_t *lim);
/* How many children the server has started so far. */
unsigned rm_child_srv_forks(const rm_child_srv_t *s);
/* Ends the child (if any), reaps it and frees s. NULL is fine. */
void rm_child_srv_destroy(rm_child_srv_t *s);

#endif
