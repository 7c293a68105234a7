/* SPDX-License-Identifier: MIT */
/*
 * resolve.h - a network console's host name, resolved off the caller's
 * path.
 *
 * getaddrinfo() of a name may wait for a resolver for seconds (4 s with
 * one that never answers) and a failure may be passing (the network is
 * not up yet at boot).  So a console made with a name that is not a
 * numeric address resolves it on a thread of its own: made at once, the
 * console counts what it cannot send until the name resolves (reported
 * in-band by the driver once it can send), and a failure is retried,
 * after pk__resolve_retry_ms, doubling up to a minute, for as long as the
 * console lives.
 *
 * Ordering: resolve:A (the thread publishes the address, release) pairs
 * with resolve:B (pk__resolve_get(), acquire): a reader that sees it
 * ready sees the whole address.  The reference count is acq_rel: whoever
 * drops the last reference sees everything the other did.
 */
#ifndef PK_CONSOLE_RESOLVE_H
#define PK_CONSOLE_RESOLVE_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

struct pk__resolver;

/*
 * pk__resolve_start() - resolve @host, port @port, for @socktype
 * (SOCK_DGRAM, SOCK_STREAM).  A numeric address is resolved here, at
 * once, and nothing else; a name on a thread (every signal blocked) that
 * tries until it succeeds or pk__resolve_release().
 * Context: normal (allocates, creates a thread).
 * Return: 0 with *@out set; -ENOMEM, -EAGAIN (no thread), *@out NULL.
 */
int pk__resolve_start(struct pk__resolver **out, const char *host, unsigned port, int socktype);

/*
 * pk__resolve_get() - the address, once resolved.
 * Context: any, async-signal-safe, lock-free.
 * Return: 1 with *@addr and *@len set; 0 not (yet).
 */
int pk__resolve_get(struct pk__resolver *r, struct sockaddr_storage *addr, socklen_t *len);

/* Attempts that failed so far (the last one's EAI_ code in *@last if not NULL). */
unsigned pk__resolve_failures(struct pk__resolver *r, int *last);

/* Stop (a lookup in progress is left to finish on its thread) and free. */
void pk__resolve_release(struct pk__resolver *r);

/* The first retry's delay, in ms (1000; tests shorten it). */
extern _Atomic unsigned pk__resolve_retry_ms;

#endif /* PK_CONSOLE_RESOLVE_H */
