/* SPDX-License-Identifier: MIT */
/*
 * conlock.h - console ownership.
 *
 * Two locks, both a single atomic word:
 *
 * struct pk__conlock is the console lock of the legacy and handoff modes:
 * Linux's console_sem together with the console_owner/console_waiter pair
 * that Linux 4.16 added.  Its holder prints for everyone.  In handoff mode
 * the holder marks itself active around each record; one caller at a time
 * may become the waiter, and the holder hands the lock to it at the next
 * record boundary without ever letting go of it in between.
 *
 * struct pk__conown is the ownership of one console, nbcon-style: taken
 * for one record at a time at NORMAL priority (the console lock holder, a
 * printer thread), and by EMERGENCY and PANIC printers, which ask the
 * owner to yield at its next record boundary and, in panic, take the
 * console by force if it does not.
 *
 * Neither knows anything of records or consoles.
 */
#ifndef PK_CONLOCK_H
#define PK_CONLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"

struct pk__conlock {
	_Atomic uint64_t word;		/* owner | waiter << 30 | ACTIVE | BUDGET */
	_Atomic uint32_t handoff_seq;	/* futex word: bumped at each handoff */
	_Atomic uint64_t progress;	/* records printed by holders */
	_Atomic uint64_t stuck_at;	/* progress + 1 when a waiter gave up */
	_Atomic uint64_t handoffs, waits, wait_timeouts, stuck_skips;
	/* pk__cl_reap(): the owner last seen, the progress then, since when */
	_Atomic uint64_t seen_owner, seen_progress, seen_ns;
	_Atomic uint64_t dead_takeovers;
};

enum pk__cl_result {
	PK_CL_OWNER,	/* the caller holds the lock now and must print, then unlock */
	PK_CL_LEFT,	/* someone else holds it and will print the caller's record */
	PK_CL_SELF,	/* this very thread holds it (signal re-entry): just return */
	PK_CL_STUCK,	/* the holder is known to be stuck: do not wait again */
	PK_CL_TIMEOUT,	/* waited for a handoff that never came; now known stuck */
};

/*
 * pk__cl_trylock() - take the lock if it is free.  @budget: the taker is
 * the budget printer thread, which callers never wait for.
 * Context: any thread or signal handler; wait-free.
 */
bool pk__cl_trylock(struct pk__conlock *l, uint32_t tid, bool budget);

/*
 * pk__cl_lock_spinning() - handoff mode's console_trylock_spinning().
 * Try the lock; if the holder is printing a record and nobody waits yet,
 * become the waiter: spin for @spin_ns, then sleep on a futex for the
 * handoff, giving up after @wait_ns in all.
 * Context: any thread or signal handler (a handler never waits for its own
 * thread: PK_CL_SELF).
 */
enum pk__cl_result pk__cl_lock_spinning(struct pk__conlock *l, uint32_t tid, uint64_t spin_ns,
					uint64_t wait_ns);

/* Legacy mode: try once; never wait. */
enum pk__cl_result pk__cl_lock_legacy(struct pk__conlock *l, uint32_t tid);

/* The holder brackets each record it prints. */
void pk__cl_record_begin(struct pk__conlock *l);
/*
 * @hand_over: the holder printed something (a record, a drop notice) or
 * found nothing to do; false after it only passed over filtered records,
 * which, as in Linux (console_unlock()'s suppressed records), is no place
 * to hand over: a waiter woken there would take the lock only to pass
 * over the next batch, and each handoff to a sleeping waiter leaves the
 * lock with a thread that is not running.
 * Return: true if a waiter was found and the lock handed to it; the caller
 * no longer holds the lock and must stop printing at once.
 */
bool pk__cl_record_end(struct pk__conlock *l, bool hand_over);

/* Release (handing over to a waiter if one appeared). */
void pk__cl_unlock(struct pk__conlock *l, uint32_t tid);

/* Is a caller waiting for a handoff right now? */
bool pk__cl_has_waiter(const struct pk__conlock *l);

/* Does @tid hold it? */
bool pk__cl_held_by(const struct pk__conlock *l, uint32_t tid);

/*
 * pk__cl_reap() - take the lock over from an owner whose thread is gone
 * (cancelled asynchronously, or killed by pthread_exit() from a console)
 * while holding it.  Only an owner seen holding the lock, with no record
 * printed, for @bound_ns across calls is looked up (one system call:
 * tgkill(pid, tid, 0) fails with ESRCH), so a live owner costs nothing but
 * a clock read per call.  A tid reused meanwhile by a new thread of this
 * process reads as alive: the takeover then waits for that thread to go.
 * Return: the dead owner's tid if the caller (@tid) holds the lock now
 * (and must print, then unlock), else 0.
 * Context: any thread but a signal handler.
 */
uint32_t pk__cl_reap(struct pk__conlock *l, uint32_t tid, uint64_t bound_ns);

/* Does thread @tid of this process no longer exist (tgkill: ESRCH)? */
bool pk__tid_gone(uint32_t tid);

/* After fork(): the holder and waiter may be threads that did not survive. */
void pk__cl_reset(struct pk__conlock *l);

enum pk__prio { PK_PRIO_NONE, PK_PRIO_NORMAL, PK_PRIO_EMERGENCY, PK_PRIO_PANIC };

/* struct pk__conown: core/core.h (a console carries it). */

/* NORMAL: take the console if free and no higher priority asks for it. */
bool pk__own_try(struct pk__conown *o, uint32_t tid);

/*
 * pk__own_acquire() - take the console at EMERGENCY or PANIC priority.
 * Asks the owner to yield at its next record boundary and waits up to
 * @wait_ns.  With @hostile, takes the console by force after that.
 *
 * Errors (what the caller does next):
 *   0          friendly: the console is ours; write() is safe
 *   1          hostile takeover: the old owner may be inside write(); use
 *              write_atomic() only, or skip the console
 *   -EDEADLK   this thread owns it (we interrupted ourselves): with
 *              @hostile treated as 1, else skip
 *   -EBUSY     not free within @wait_ns and not @hostile: skip, the record
 *              stays stored for the owner
 */
int pk__own_acquire(struct pk__conown *o, uint32_t tid, enum pk__prio prio, uint64_t wait_ns,
		    bool hostile);

/*
 * pk__own_reap() - take the console at NORMAL priority from @dead, an
 * owner whose thread is gone (pk__tid_gone), keeping any waiting request.
 * The caller then restarts the console's position at its last published
 * record boundary.  Return: true if @tid owns it now.
 */
bool pk__own_reap(struct pk__conown *o, uint32_t dead, uint32_t tid);

/* Release.  Return: false if the console was taken from us meanwhile. */
bool pk__own_release(struct pk__conown *o, uint32_t tid);

/* Owner's check at a record boundary: does a higher priority wait? */
bool pk__own_yield_wanted(const struct pk__conown *o);

/* Has a hostile takeover happened (normal write() is no longer safe)? */
bool pk__own_unsafe(const struct pk__conown *o);

/* Who owns it (0: nobody)? */
uint32_t pk__own_owner(const struct pk__conown *o);

void pk__own_reset(struct pk__conown *o);

#endif /* PK_CONLOCK_H */
