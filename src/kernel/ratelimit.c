// SPDX-License-Identifier: MIT
/*
 * ratelimit.c - the kernel's interval/burst rate limit (printk/ratelimit.h).
 *
 * A state is guarded by a busy flag taken with one atomic exchange.  A
 * caller that finds it taken is refused at once, as the kernel's
 * raw_spin_trylock() refuses: waiting could deadlock a signal handler
 * against the code it interrupted on the same thread.  Unlike the kernel,
 * the refused call is counted: one atomic increment of @missed, so the
 * next "N callbacks suppressed" report covers it.  Uncounted, a thread
 * that keeps finding the state busy (another thread calling in a loop
 * holds it most of the time) would lose every one of its messages
 * without a trace.  So every call is lock-free, async-signal-safe, and
 * either goes ahead or is counted.
 *
 * The state lives in a public struct that C++ includes too, so its fields
 * are plain ints reached through the __atomic builtins.
 *
 * Ordering pairs:
 *   LMM(ratelimit_take:A) acquire exchange of rs->lock pairs with
 *   LMM(ratelimit_give:A) release store of it: the next holder sees the
 *   counters (begin, printed) as the last holder left them.
 *   @missed is the exception: refused callers add to it without holding
 *   the state, so every access to it is an atomic read-modify-write (or
 *   load), relaxed: it is a count that orders nothing else.  Each
 *   increment lands either before the holder's exchange that takes the
 *   count for a report (and is in that report) or after it (and is in the
 *   next one); none is lost or reported twice.
 */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "printk/printk.h"
#include "printk/ratelimit.h"

unsigned long pk_jiffies(void)
{
	struct timespec ts;
	unsigned long j;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	j = (unsigned long)ts.tv_sec * PK_HZ + (unsigned long)ts.tv_nsec / (1000000000ul / PK_HZ);
	return j ? j : 1;
}

/* true: we hold @rs; false: someone is inside. */
static bool take(struct pk_ratelimit_state *rs)
{
	/* LMM(ratelimit_take:A) pairs with LMM(ratelimit_give:A) in give(). */
	return __atomic_exchange_n(&rs->lock, 1, __ATOMIC_ACQUIRE) == 0;
}

static void give(struct pk_ratelimit_state *rs)
{
	/* LMM(ratelimit_give:A): what we changed is seen by the next take(). */
	__atomic_store_n(&rs->lock, 0, __ATOMIC_RELEASE);
}

/* Has jiffy @a passed @b (the kernel's time_after(), wrap-safe)? */
static bool after(unsigned long a, unsigned long b)
{
	return (long)(b - a) < 0;
}

int pk_ratelimit(struct pk_ratelimit_state *rs, const char *func)
{
	int interval = __atomic_load_n(&rs->interval, __ATOMIC_RELAXED);
	unsigned long now;
	int report = 0, ret;

	if (!interval)
		return 1;
	if (!take(rs)) {
		/* Busy: refused, and counted for the next report (see the top). */
		__atomic_fetch_add(&rs->missed, 1, __ATOMIC_RELAXED);
		return 0;
	}
	now = pk_jiffies();
	if (!rs->begin)
		rs->begin = now;
	if (after(now, rs->begin + (unsigned long)interval)) {
		if (__atomic_load_n(&rs->missed, __ATOMIC_RELAXED) &&
		    !(rs->flags & PK_RATELIMIT_MSG_ON_RELEASE))
			report = __atomic_exchange_n(&rs->missed, 0, __ATOMIC_RELAXED);
		rs->begin = now;
		rs->printed = 0;
	}
	if (rs->burst && rs->burst > rs->printed) {
		rs->printed++;
		ret = 1;
	} else {
		__atomic_fetch_add(&rs->missed, 1, __ATOMIC_RELAXED);
		ret = 0;
	}
	give(rs);
	/*
	 * The kernel prints this while holding the state (printk_deferred);
	 * we print after giving it back, so that a slow console never makes
	 * the state look busy.  The text and its place (before the caller's
	 * own message) are the same.
	 */
	if (report)
		pk_printk(PK_WARNING, "%s: %d callbacks suppressed\n", func ? func : "?", report);
	return ret;
}

void pk_ratelimit_state_init(struct pk_ratelimit_state *rs, int interval, int burst)
{
	rs->printed = 0;
	__atomic_store_n(&rs->missed, 0, __ATOMIC_RELAXED);
	rs->begin = 0;
	rs->flags = 0;
	rs->burst = burst;
	__atomic_store_n(&rs->interval, interval, __ATOMIC_RELAXED);
	__atomic_store_n(&rs->lock, 0, __ATOMIC_RELEASE);
}

void pk_ratelimit_state_exit(struct pk_ratelimit_state *rs)
{
	char comm[16 + 1];
	int missed;

	if (!(rs->flags & PK_RATELIMIT_MSG_ON_RELEASE) || !take(rs))
		return;
	missed = __atomic_exchange_n(&rs->missed, 0, __ATOMIC_RELAXED);
	give(rs);
	if (!missed)
		return;
	memset(comm, 0, sizeof(comm));
	if (prctl(PR_GET_NAME, comm, 0, 0, 0) < 0)
		strcpy(comm, "?");
	pk_printk(PK_WARNING, "%s: %d output lines suppressed due to ratelimiting\n", comm, missed);
}

static struct pk_ratelimit_state printk_rs =
	PK_RATELIMIT_STATE_INIT(PK_RATELIMIT_INTERVAL_DEFAULT, PK_RATELIMIT_BURST_DEFAULT);

int pk_printk_ratelimit(const char *func)
{
	return pk_ratelimit(&printk_rs, func);
}
