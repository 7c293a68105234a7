/* SPDX-License-Identifier: MIT */
/*
 * stint.h - a pass-through console driver that measures printing stints.
 *
 * A stint is a run of consecutive console writes by one thread: one turn
 * of console ownership.  Under legacy the lock holder's stint lasts as
 * long as others keep logging; under handoff a caller that sees a waiter
 * passes the console on after a record or two.  Measured at the console,
 * stints are not blurred by the time a caller spends waiting for a CPU,
 * which on an oversubscribed machine dominates the tail of call times.
 *
 * Built on the public driver interface only: it wraps another driver.
 */
#ifndef PKB_STINT_H
#define PKB_STINT_H

#include <stdint.h>

#include <printk/console.h>

struct pkb_stint_stats {
	uint64_t stints;	/* stints by calling threads that began before the stop */
	uint64_t max_writes;	/* most writes in one such stint, counted up to the stop */
	uint64_t max_ns;	/* its length: first write's start to last write's end */
	uint32_t max_tid;
};

struct pkb_stint;

/*
 * Wrap @inner (taken over).  @stop_at: when the storm stopped (0 while it
 * runs); writes that start later do not count.  @is_caller: whether a tid
 * is a calling thread (printer threads and the main thread's final flush
 * are not callers' stints).
 */
struct pkb_stint *pkb_stint_make(const struct pk_console_driver *inner,
				 const _Atomic uint64_t *stop_at, int (*is_caller)(uint32_t tid),
				 struct pk_console_driver *out);
/* Read the counters; call when no thread writes to the console any more. */
void pkb_stint_get(struct pkb_stint *s, struct pkb_stint_stats *st);

#endif /* PKB_STINT_H */
