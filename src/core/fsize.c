// SPDX-License-Identifier: MIT
/*
 * fsize.c - growing a file without SIGXFSZ (see fsize.h).
 *
 * The kernel sends the SIGXFSZ of a write, truncate or fallocate past
 * RLIMIT_FSIZE to the calling thread (thread-directed, like a fault), so
 * blocking it in this thread's mask is enough: no other thread of the
 * process can take it.  Blocked, it stays pending on this thread; left
 * there, it would be delivered the moment the mask is restored, so it is
 * taken off with a zero-timeout sigtimedwait() first.  Standard signals
 * do not queue: a SIGXFSZ pending before the hold (the thread blocked it
 * already, and something raised it earlier) cannot be told apart from
 * ours, so then nothing is taken: the earlier one must not be lost, and
 * ours merged into it.  A SIGXFSZ that another process sends in the few
 * microseconds of a hold, while every thread blocks it, is taken with
 * ours: nothing sends SIGXFSZ on purpose.
 *
 * Every call here is async-signal-safe (sigtimedwait() is a plain system
 * call in every C library libprintk builds on), since a file console
 * writes from signal handlers too.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "core/fsize.h"

void pk__fsize_hold(struct pk__fsize_hold *h)
{
	sigset_t set, pending;

	sigemptyset(&set);
	sigaddset(&set, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &set, &h->old);
	h->was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
}

void pk__fsize_release(struct pk__fsize_hold *h)
{
	static const struct timespec zero = { 0, 0 };
	sigset_t set, pending;
	int saved = errno;

	if (!h->was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1) {
		sigemptyset(&set);
		sigaddset(&set, SIGXFSZ);
		while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &h->old, NULL);
	errno = saved;
}
