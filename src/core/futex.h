/* SPDX-License-Identifier: MIT */
/*
 * futex.h - the two futex calls libprintk sleeps and wakes with.
 * Process-private: the words live in this process's memory.
 */
#ifndef PK_FUTEX_H
#define PK_FUTEX_H

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleep while *word == val, at most @timeout_ns (0: no limit).  Async-signal-safe. */
static inline void pk__futex_wait(_Atomic uint32_t *word, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000ull), (long)(timeout_ns % 1000000000ull) };
	int saved = errno;

	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, timeout_ns ? &ts : NULL, NULL, 0);
	errno = saved;
}

static inline void pk__futex_wake(_Atomic uint32_t *word, int n)
{
	int saved = errno;

	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
	errno = saved;
}

#endif /* PK_FUTEX_H */
