// SPDX-License-Identifier: MIT
/*
 * resolve.c - a network console's host name, resolved off the caller's
 * path (resolve.h says why and how).
 */
#include "core/core.h"
#include "resolve.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LMM(label)
#define RETRY_MAX_MS	60000u
#define NAP_MS		20u	/* a retry's wait looks for release this often */

_Atomic unsigned pk__resolve_retry_ms = 1000;

struct pk__resolver {
	_Atomic int refs;		/* the console's and the thread's */
	atomic_bool stop;		/* released: the thread gives up */
	atomic_bool ready;		/* @addr is complete */
	_Atomic unsigned failures;
	_Atomic int last_err;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int socktype;
	char serv[8];
	char host[];
};

static void put_ref(struct pk__resolver *r)
{
	/* acq_rel: the last one to drop it sees all the other wrote */
	if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1)
		free(r);
}

/* One getaddrinfo(); true if it resolved (then published). */
static bool try_resolve(struct pk__resolver *r, int flags)
{
	struct addrinfo hints = { 0 }, *res;
	int ret;

	hints.ai_socktype = r->socktype;
	hints.ai_flags = AI_NUMERICSERV | flags;
	ret = getaddrinfo(r->host, r->serv, &hints, &res);
	if (ret) {
		atomic_store_explicit(&r->last_err, ret, memory_order_relaxed);
		return false;
	}
	memcpy(&r->addr, res->ai_addr, res->ai_addrlen);
	r->addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	/* LMM(resolve:A) pairs with LMM(resolve:B) in pk__resolve_get() */
	atomic_store_explicit(&r->ready, true, memory_order_release);
	return true;
}

static void *resolve_main(void *arg)
{
	struct pk__resolver *r = arg;
	const struct timespec nap = { 0, NAP_MS * 1000000l };
	unsigned wait_ms = atomic_load_explicit(&pk__resolve_retry_ms, memory_order_relaxed), t;

	pk__thread_name("pk-resolve");
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed) && !try_resolve(r, 0)) {
		atomic_fetch_add_explicit(&r->failures, 1, memory_order_relaxed);
		for (t = 0; t < wait_ms && !atomic_load_explicit(&r->stop, memory_order_relaxed);
		     t += NAP_MS)
			nanosleep(&nap, NULL);
		wait_ms = wait_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : wait_ms * 2;
	}
	put_ref(r);
	return NULL;
}

int pk__resolve_start(struct pk__resolver **out, const char *host, unsigned port, int socktype)
{
	size_t hl = strlen(host);
	struct pk__resolver *r = calloc(1, sizeof(*r) + hl + 1);
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int ret;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	memcpy(r->host, host, hl + 1);
	snprintf(r->serv, sizeof(r->serv), "%u", port);
	r->socktype = socktype;
	atomic_init(&r->refs, 1);
	*out = r;
	if (try_resolve(r, AI_NUMERICHOST))
		return 0;	/* an address: nothing to wait for */
	atomic_store_explicit(&r->refs, 2, memory_order_relaxed);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&t, &attr, resolve_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret) {
		*out = NULL;	/* the callers' failure paths release *out */
		free(r);
		return -ret;
	}
	return 0;
}

int pk__resolve_get(struct pk__resolver *r, struct sockaddr_storage *addr, socklen_t *len)
{
	/* LMM(resolve:B) pairs with LMM(resolve:A) in try_resolve() */
	if (!atomic_load_explicit(&r->ready, memory_order_acquire))
		return 0;
	memcpy(addr, &r->addr, r->addrlen);
	*len = r->addrlen;
	return 1;
}

unsigned pk__resolve_failures(struct pk__resolver *r, int *last)
{
	if (last)
		*last = atomic_load_explicit(&r->last_err, memory_order_relaxed);
	return atomic_load_explicit(&r->failures, memory_order_relaxed);
}

void pk__resolve_release(struct pk__resolver *r)
{
	if (!r)
		return;
	atomic_store_explicit(&r->stop, true, memory_order_relaxed);
	put_ref(r);
}
