/* SPDX-License-Identifier: MIT */
/*
 * fsize.h - growing a file without SIGXFSZ.
 *
 * Beyond RLIMIT_FSIZE (ulimit -f), write(), ftruncate() and fallocate()
 * fail with EFBIG and the kernel also sends the calling thread SIGXFSZ,
 * whose default action kills the process.  The library never lets its
 * own file growth raise that signal: every call that may grow a file (the
 * store's posix_fallocate() and ftruncate(), a file console's write())
 * goes between pk__fsize_hold() and pk__fsize_release(), and a caller
 * sees -EFBIG instead.
 */
#ifndef PK_FSIZE_H
#define PK_FSIZE_H

#include <signal.h>
#include <stdbool.h>

struct pk__fsize_hold {
	sigset_t old;		/* the thread's mask before */
	bool was_pending;	/* SIGXFSZ was pending on entry: not ours */
};

/*
 * Block SIGXFSZ on this thread (only), noting whether one was pending
 * already.  Async-signal-safe.
 */
void pk__fsize_hold(struct pk__fsize_hold *h);

/*
 * Discard a SIGXFSZ the calls in between raised, then restore the mask.
 * A SIGXFSZ that was pending on entry stays pending.  Async-signal-safe
 * (sigtimedwait() is a plain system call).
 */
void pk__fsize_release(struct pk__fsize_hold *h);

#endif /* PK_FSIZE_H */
