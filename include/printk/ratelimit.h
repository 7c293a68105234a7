/* SPDX-License-Identifier: MIT */
/*
 * printk/ratelimit.h - rate limiting with the kernel's interval/burst rule.
 *
 * A struct pk_ratelimit_state lets at most @burst callers through in each
 * @interval; the others are counted as missed.  The first caller let
 * through once an interval has passed prints "<func>: N callbacks
 * suppressed" at warning level first (unless PK_RATELIMIT_MSG_ON_RELEASE
 * is set: then pk_ratelimit_state_exit() reports them), as Linux's
 * ___ratelimit() does.
 *
 * Time is counted in jiffies of PK_HZ (1000) per second: one jiffy is one
 * millisecond of CLOCK_MONOTONIC, so intervals are in milliseconds.
 *
 * Synchronization table:
 *
 *   pk_ratelimit               any thread, signal handlers, all at once on
 *                              one state; a caller that finds the state
 *                              busy (another caller inside, or the thread
 *                              it interrupted) is refused at once, as the
 *                              kernel's trylock refuses, and counted as
 *                              missed (one atomic increment), so the next
 *                              report covers it
 *   pk_ratelimit_state_init    before the state is shared
 *   pk_ratelimit_state_exit    any thread; refused (nothing printed) while
 *                              another caller is inside
 *   pk_jiffies                 any thread, signal handlers
 */
#ifndef PRINTK_RATELIMIT_H
#define PRINTK_RATELIMIT_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Building libprintk: what this header declares is its exported API. */
#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* Jiffies per second: a jiffy is one millisecond of CLOCK_MONOTONIC. */
#define PK_HZ				1000
/* The kernel's DEFAULT_RATELIMIT_INTERVAL (5 * HZ) and _BURST. */
#define PK_RATELIMIT_INTERVAL_DEFAULT	(5 * PK_HZ)
#define PK_RATELIMIT_BURST_DEFAULT	10
/* pk_ratelimit_state.flags: report the missed count at exit, not on release. */
#define PK_RATELIMIT_MSG_ON_RELEASE	0x1ul

/*
 * The fields keep the kernel's names and meaning.  @lock is a busy flag
 * taken with an atomic exchange (never waited for); the other counters are
 * only touched by its holder, but for @missed, which a refused caller
 * increments atomically without holding it.
 */
struct pk_ratelimit_state {
	int lock;		/* 0 free, 1 held */
	int interval;		/* jiffies (ms); 0: no limit */
	int burst;		/* callers let through per interval; 0: none */
	int printed;		/* let through in this interval */
	int missed;		/* refused since the last report */
	unsigned long begin;	/* jiffy the interval began; 0: not yet */
	unsigned long flags;	/* PK_RATELIMIT_MSG_ON_RELEASE */
};

/* A static initialiser (C and C++): interval in jiffies (ms), burst. */
#define PK_RATELIMIT_STATE_INIT_FLAGS(interval, burst, flags) \
	{ 0, (interval), (burst), 0, 0, 0, (flags) }
#define PK_RATELIMIT_STATE_INIT(interval, burst) \
	PK_RATELIMIT_STATE_INIT_FLAGS(interval, burst, 0)

/**
 * pk_ratelimit() - may this caller go ahead?
 * @rs:   the state; its interval and burst as set at initialisation.
 * @func: the caller's name for the "N callbacks suppressed" report.
 *
 * With an interval of 0 everyone goes ahead.  Otherwise the first call
 * starts an interval; in it, the first @burst calls go ahead and the rest
 * are counted as missed.  The first call after the interval has passed
 * starts a new one and, if calls were missed and the state does not have
 * PK_RATELIMIT_MSG_ON_RELEASE, first prints "<func>: <missed> callbacks
 * suppressed" at PK_WARNING and resets the count.  A call that finds
 * another inside (a concurrent thread, or the code a signal handler
 * interrupted) is refused at once and counted as missed, so every call
 * either goes ahead or is in a later report (the kernel's trylock
 * refuses such a call without counting it).
 *
 * Context: any thread, async-signal-safe; lock-free (never waits).
 * Return: 1 go ahead; 0 suppressed.
 */
int pk_ratelimit(struct pk_ratelimit_state *rs, const char *func);

/**
 * pk_ratelimit_state_init() - set @rs to @interval jiffies and @burst,
 * with nothing printed or missed and no flags.
 * @rs:       the state.
 * @interval: jiffies (milliseconds); 0: no limit.
 * @burst:    callers let through per interval.
 * Context: any thread, async-signal-safe; not concurrently with other
 * calls on @rs.
 * Return: nothing.
 */
void pk_ratelimit_state_init(struct pk_ratelimit_state *rs, int interval, int burst);

/**
 * pk_ratelimit_state_exit() - with PK_RATELIMIT_MSG_ON_RELEASE set and
 * calls missed, print "<comm>: <missed> output lines suppressed due to
 * ratelimiting" at PK_WARNING (comm: the thread's name) and reset the
 * count.  Without the flag it does nothing.
 * @rs: the state.
 * Calls refused meanwhile are counted for a later exit.
 * Context: any thread, async-signal-safe.
 * Return: nothing.
 */
void pk_ratelimit_state_exit(struct pk_ratelimit_state *rs);

/**
 * pk_printk_ratelimit() - the kernel's printk_ratelimit(): one state
 * shared by the whole program, PK_RATELIMIT_INTERVAL_DEFAULT and
 * PK_RATELIMIT_BURST_DEFAULT.
 * @func: the caller's name for the "callbacks suppressed" report.
 * Context: any thread, async-signal-safe.
 * Return: 1 go ahead; 0 suppressed.
 */
int pk_printk_ratelimit(const char *func);

/**
 * pk_jiffies() - milliseconds of CLOCK_MONOTONIC, never 0 (0 means "not
 * started" in a pk_ratelimit_state).  Wraps like the kernel's jiffies:
 * compare with the kernel's time_after() rule, not with '<'.
 * Context: any thread, async-signal-safe.
 * Return: the current jiffy.
 */
unsigned long pk_jiffies(void);

#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* PRINTK_RATELIMIT_H */
