// SPDX-License-Identifier: MIT
/*
 * conlock.c - console ownership: the console lock with owner/waiter
 * handoff (Linux 4.16) and per-console ownership with priorities and
 * hostile takeover (nbcon).
 *
 * THE CONSOLE LOCK WORD
 *
 *   bits  0..29  owner tid (0: free)
 *   bits 30..59  waiter tid (0: none)
 *   bit  60      ACTIVE: the owner is printing a record right now
 *   bit  61      BUDGET: the owner is the budget printer thread
 *
 * Linux thread ids are below 2^22 (PID_MAX_LIMIT), so 30 bits are ample.
 * Everything that must change together changes in one CAS: in particular
 * a caller becomes the waiter only in the same CAS that checks that the
 * owner is ACTIVE and nobody waits yet, and the owner hands over by
 * replacing owner with waiter in one CAS, so the lock is never free
 * during a handoff and no third thread can take it.
 *
 * The waiter spins for a while, then sleeps on handoff_seq, which the
 * owner bumps (after the handoff CAS) before waking it.  The waiter reads
 * handoff_seq before re-checking the word, so a handoff between the two
 * makes FUTEX_WAIT return at once instead of sleeping through it.
 *
 * If the handoff does not come within the bound (the owner is stuck in a
 * console's write()), the waiter withdraws and records stuck_at =
 * progress + 1.  Later callers that see stuck_at == progress + 1 know the
 * owner has not printed a record since and return at once instead of each
 * waiting again.  The first record the owner completes makes the marker
 * stale.
 *
 * MEMORY ORDERING
 *
 *   cl:A  trylock CAS, seq_cst (acquire at least): pairs with cl:C/cl:D so
 *         the new holder sees the console state the last holder wrote
 *         (reader positions, buffers).  seq_cst because of cl:E.
 *   cl:B  the waiter's loads of the word, acquire: pair with cl:C.
 *   cl:C  handoff CAS, release (acq_rel): publishes the console state to
 *         the waiter that now holds the lock.
 *   cl:D  unlock CAS, seq_cst.
 *   cl:E  Dekker between a caller and a holder that is about to leave:
 *         the caller commits its record (seq_cst, ringbuf write:E) then
 *         tries the lock (cl:A, seq_cst); the holder unlocks (cl:D,
 *         seq_cst) then looks for pending records (seq_cst loads in
 *         flush.c).  At least one of them sees the other, so a stored
 *         record is never left with nobody to print it.
 *   cl:G  a dead owner's takeover (pk__cl_reap): the thread is gone, so it
 *         released nothing; its writes to the console state are ordered
 *         before our look-up by the kernel (its exit and tgkill() both
 *         take the task list's lock), and the CAS is seq_cst as cl:A.
 *         The new holder restarts each console the dead thread owned at
 *         its published position (flush.c), so what the thread left half
 *         done is printed again, never skipped.
 *   cl:F  ACTIVE set/cleared with fetch_or/fetch_and, acq_rel: the flag is
 *         a hint for would-be waiters; what matters is that the waiter
 *         field is read in the same atomic step that clears ACTIVE, so a
 *         waiter that got in before it is always seen and served.
 *
 * PER-CONSOLE OWNERSHIP WORD
 *
 *   bits  0..31  owner tid (0: free)
 *   bits 32..33  owner priority
 *   bits 34..35  highest priority waiting for the console
 *   bit  36      UNSAFE: taken by force; the old owner may still be in write()
 *
 *   own:A acquire CAS when taking it: pairs with own:B so the new owner
 *         sees the console state (reader position, counters) the last
 *         owner left.
 *   own:B release CAS when releasing; seq_cst, because a direct printer
 *         looks for pending records right after it (flush.c fl:C).
 *   A waiting request survives a release, so a NORMAL owner cannot take the
 *   console again in front of an EMERGENCY or PANIC printer waiting for it.
 */
#include "flush/conlock.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/futex.h"

#define LMM(label)

#define CL_TID_BITS	30
#define CL_TID_MASK	((1ull << CL_TID_BITS) - 1)
#define CL_WAITER_SHIFT	CL_TID_BITS
#define CL_WAITER_MASK	(CL_TID_MASK << CL_WAITER_SHIFT)
#define CL_ACTIVE	(1ull << 60)
#define CL_BUDGET	(1ull << 61)

static inline uint32_t cl_owner(uint64_t w) { return (uint32_t)(w & CL_TID_MASK); }
static inline uint32_t cl_waiter(uint64_t w) { return (uint32_t)((w >> CL_WAITER_SHIFT) & CL_TID_MASK); }

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

bool pk__cl_trylock(struct pk__conlock *l, uint32_t tid, bool budget)
{
	uint64_t w = 0;

	/* LMM(cl:A) */
	return atomic_compare_exchange_strong_explicit(&l->word, &w,
						       (tid & CL_TID_MASK) | (budget ? CL_BUDGET : 0),
						       memory_order_seq_cst, memory_order_relaxed);
}

bool pk__cl_has_waiter(const struct pk__conlock *l)
{
	return cl_waiter(atomic_load_explicit(&l->word, memory_order_relaxed)) != 0;
}

bool pk__cl_held_by(const struct pk__conlock *l, uint32_t tid)
{
	return cl_owner(atomic_load_explicit(&l->word, memory_order_relaxed)) == (tid & CL_TID_MASK);
}

enum pk__cl_result pk__cl_lock_legacy(struct pk__conlock *l, uint32_t tid)
{
	uint64_t w;

	if (pk__cl_trylock(l, tid, false))
		return PK_CL_OWNER;
	w = atomic_load_explicit(&l->word, memory_order_relaxed);
	return cl_owner(w) == (tid & CL_TID_MASK) ? PK_CL_SELF : PK_CL_LEFT;
}

static bool known_stuck(struct pk__conlock *l)
{
	uint64_t prog = atomic_load_explicit(&l->progress, memory_order_relaxed);

	return atomic_load_explicit(&l->stuck_at, memory_order_relaxed) == prog + 1;
}

enum pk__cl_result pk__cl_lock_spinning(struct pk__conlock *l, uint32_t tid, uint64_t spin_ns,
					uint64_t wait_ns)
{
	uint64_t me = tid & CL_TID_MASK;
	uint64_t w, t0, now, prog0;
	uint32_t hs;
	unsigned i;

	w = atomic_load_explicit(&l->word, memory_order_seq_cst);
	for (;;) {
		if (!cl_owner(w)) {
			/* LMM(cl:A) */
			if (atomic_compare_exchange_weak_explicit(&l->word, &w, me,
								  memory_order_seq_cst,
								  memory_order_seq_cst))
				return PK_CL_OWNER;
			continue;
		}
		if (cl_owner(w) == me || cl_waiter(w) == me)
			return PK_CL_SELF;	/* never wait for our own thread */
		if (known_stuck(l)) {
			atomic_fetch_add_explicit(&l->stuck_skips, 1, memory_order_relaxed);
			return PK_CL_STUCK;
		}
		/* Spin only for an owner that is printing, and only one of us. */
		if (!(w & CL_ACTIVE) || cl_waiter(w) || (w & CL_BUDGET))
			return PK_CL_LEFT;
		if (atomic_compare_exchange_weak_explicit(&l->word, &w, w | me << CL_WAITER_SHIFT,
							  memory_order_seq_cst,
							  memory_order_seq_cst))
			break;
	}
	atomic_fetch_add_explicit(&l->waits, 1, memory_order_relaxed);
	prog0 = atomic_load_explicit(&l->progress, memory_order_relaxed);
	t0 = mono_ns();
	for (i = 0;; i++) {
		/* LMM(cl:B) */
		w = atomic_load_explicit(&l->word, memory_order_acquire);
		if (cl_owner(w) == me)
			return PK_CL_OWNER;
		if (i % 64)
			goto relax;
		now = mono_ns() - t0;
		if (now < spin_ns)
			goto relax;
		if (now >= wait_ns)
			break;
		hs = atomic_load_explicit(&l->handoff_seq, memory_order_acquire);
		w = atomic_load_explicit(&l->word, memory_order_acquire);
		if (cl_owner(w) == me)
			return PK_CL_OWNER;
		now = wait_ns - now;
		pk__futex_wait(&l->handoff_seq, hs, now < 5000000 ? now : 5000000);
		continue;
relax:
		cpu_relax();
	}
	/* Give up: withdraw, unless the handoff wins the race. */
	for (;;) {
		if (cl_owner(w) == me)
			return PK_CL_OWNER;
		if (cl_waiter(w) != me)
			return PK_CL_LEFT;
		if (atomic_compare_exchange_weak_explicit(&l->word, &w, w & ~CL_WAITER_MASK,
							  memory_order_acquire,
							  memory_order_acquire))
			break;
	}
	atomic_fetch_add_explicit(&l->wait_timeouts, 1, memory_order_relaxed);
	if (atomic_load_explicit(&l->progress, memory_order_relaxed) == prog0)
		atomic_store_explicit(&l->stuck_at, prog0 + 1, memory_order_relaxed);
	return PK_CL_TIMEOUT;
}

void pk__cl_record_begin(struct pk__conlock *l)
{
	/* LMM(cl:F) */
	atomic_fetch_or_explicit(&l->word, CL_ACTIVE, memory_order_acq_rel);
}

/* Hand the lock from its owner to the waiter in @w.  false if none. */
static bool handoff(struct pk__conlock *l, uint64_t w)
{
	for (;;) {
		if (!cl_waiter(w))
			return false;
		/* LMM(cl:C) */
		if (atomic_compare_exchange_weak_explicit(&l->word, &w, (uint64_t)cl_waiter(w),
							  memory_order_acq_rel,
							  memory_order_relaxed))
			break;
	}
	atomic_fetch_add_explicit(&l->handoffs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&l->handoff_seq, 1, memory_order_release);
	pk__futex_wake(&l->handoff_seq, INT_MAX);
	return true;
}

bool pk__cl_record_end(struct pk__conlock *l, bool hand_over)
{
	/* LMM(cl:F) */
	uint64_t w = atomic_fetch_and_explicit(&l->word, ~CL_ACTIVE, memory_order_acq_rel);

	atomic_fetch_add_explicit(&l->progress, 1, memory_order_relaxed);
	/*
	 * Not at a skip: the waiter stays registered and is served at the
	 * next record printed, or at the unlock, whichever comes first.
	 */
	return hand_over && handoff(l, w & ~CL_ACTIVE);
}

void pk__cl_unlock(struct pk__conlock *l, uint32_t tid)
{
	uint64_t w = atomic_load_explicit(&l->word, memory_order_relaxed);

	for (;;) {
		if (cl_owner(w) != (tid & CL_TID_MASK))
			return;
		if (cl_waiter(w) && handoff(l, w))
			return;
		/* LMM(cl:D) */
		if (atomic_compare_exchange_weak_explicit(&l->word, &w, 0, memory_order_seq_cst,
							  memory_order_relaxed))
			return;
	}
}

bool pk__tid_gone(uint32_t tid)
{
	int e = errno;
	bool gone = syscall(SYS_tgkill, getpid(), (pid_t)tid, 0) < 0 && errno == ESRCH;

	errno = e;
	return gone;
}

uint32_t pk__cl_reap(struct pk__conlock *l, uint32_t tid, uint64_t bound_ns)
{
	uint64_t w = atomic_load_explicit(&l->word, memory_order_relaxed);
	uint64_t prog = atomic_load_explicit(&l->progress, memory_order_relaxed);
	uint64_t now = mono_ns(), o = cl_owner(w);

	if (!o || o == (tid & CL_TID_MASK))
		return 0;
	/* Relaxed, all three: a stale look only moves the takeover by one bound. */
	if (atomic_load_explicit(&l->seen_owner, memory_order_relaxed) != o ||
	    atomic_load_explicit(&l->seen_progress, memory_order_relaxed) != prog) {
		atomic_store_explicit(&l->seen_owner, o, memory_order_relaxed);
		atomic_store_explicit(&l->seen_progress, prog, memory_order_relaxed);
		atomic_store_explicit(&l->seen_ns, now, memory_order_relaxed);
		return 0;
	}
	if (now - atomic_load_explicit(&l->seen_ns, memory_order_relaxed) < bound_ns)
		return 0;
	if (!pk__tid_gone((uint32_t)o)) {
		atomic_store_explicit(&l->seen_ns, now, memory_order_relaxed);
		return 0;	/* alive (stuck in a console, or its tid reused) */
	}
	/* LMM(cl:G): the waiter, if any, is dropped: it withdraws at its bound. */
	while (cl_owner(w) == o)
		if (atomic_compare_exchange_weak_explicit(&l->word, &w, tid & CL_TID_MASK,
							  memory_order_seq_cst,
							  memory_order_relaxed)) {
			atomic_fetch_add_explicit(&l->dead_takeovers, 1, memory_order_relaxed);
			atomic_store_explicit(&l->stuck_at, 0, memory_order_relaxed);
			atomic_fetch_add_explicit(&l->handoff_seq, 1, memory_order_release);
			pk__futex_wake(&l->handoff_seq, INT_MAX);
			return (uint32_t)o;
		}
	return 0;
}

void pk__cl_reset(struct pk__conlock *l)
{
	atomic_store_explicit(&l->word, 0, memory_order_relaxed);
	atomic_store_explicit(&l->stuck_at, 0, memory_order_relaxed);
}

/* ---- per-console ownership ---- */

#define OWN_TID_MASK	0xffffffffull
#define OWN_PRIO_SHIFT	32
#define OWN_REQ_SHIFT	34
#define OWN_REQ_MASK	(3ull << OWN_REQ_SHIFT)
#define OWN_UNSAFE	(1ull << 36)

static inline uint32_t own_tid(uint64_t w) { return (uint32_t)(w & OWN_TID_MASK); }
static inline unsigned own_req(uint64_t w) { return (unsigned)((w >> OWN_REQ_SHIFT) & 3); }

bool pk__own_try(struct pk__conown *o, uint32_t tid)
{
	uint64_t w = atomic_load_explicit(&o->word, memory_order_relaxed);

	/*
	 * UNSAFE: a panic took the console by force and its old owner may
	 * still be inside write(); a NORMAL printer never writes to it again
	 * (found by the SPIN model: a printer preempted across the whole
	 * panic wait would otherwise write concurrently with that owner).
	 */
	if (own_tid(w) || own_req(w) || (w & OWN_UNSAFE))
		return false;
	/* LMM(own:A) */
	return atomic_compare_exchange_strong_explicit(
		&o->word, &w, (w & OWN_UNSAFE) | (uint64_t)PK_PRIO_NORMAL << OWN_PRIO_SHIFT | tid,
		memory_order_acquire, memory_order_relaxed);
}

int pk__own_acquire(struct pk__conown *o, uint32_t tid, enum pk__prio prio, uint64_t wait_ns,
		    bool hostile)
{
	uint64_t w, nw, t0 = 0;
	struct timespec nap = { 0, 20000 };
	unsigned i;

	for (i = 0;; i++) {
		w = atomic_load_explicit(&o->word, memory_order_acquire);
		if (own_tid(w) == tid)
			return -EDEADLK;
		if (!own_tid(w)) {
			nw = (w & OWN_UNSAFE) | (uint64_t)prio << OWN_PRIO_SHIFT | tid;
			if (own_req(w) > (unsigned)prio)
				nw |= w & OWN_REQ_MASK;	/* someone even more urgent waits */
			/* LMM(own:A) */
			if (atomic_compare_exchange_strong_explicit(&o->word, &w, nw,
								    memory_order_acquire,
								    memory_order_relaxed))
				return (nw & OWN_UNSAFE) ? 1 : 0;
			continue;
		}
		if (own_req(w) < (unsigned)prio) {
			nw = (w & ~OWN_REQ_MASK) | (uint64_t)prio << OWN_REQ_SHIFT;
			atomic_compare_exchange_strong_explicit(&o->word, &w, nw,
								memory_order_relaxed,
								memory_order_relaxed);
			continue;
		}
		if (!t0)
			t0 = mono_ns();
		if (mono_ns() - t0 >= wait_ns) {
			if (hostile) {
				nw = OWN_UNSAFE | (uint64_t)prio << OWN_PRIO_SHIFT | tid;
				if (atomic_compare_exchange_strong_explicit(&o->word, &w, nw,
									    memory_order_acquire,
									    memory_order_relaxed))
					return 1;
				continue;
			}
			/*
			 * Withdraw our request so NORMAL owners may go on.  If the
			 * word changed meanwhile (the owner released), look again:
			 * a request left behind would keep the console from every
			 * NORMAL printer for good.
			 */
			if (own_req(w) == (unsigned)prio &&
			    !atomic_compare_exchange_strong_explicit(
				    &o->word, &w, w & ~OWN_REQ_MASK, memory_order_relaxed,
				    memory_order_relaxed))
				continue;
			return -EBUSY;
		}
		if (i < 100)
			cpu_relax();
		else
			nanosleep(&nap, NULL);
	}
}

bool pk__own_reap(struct pk__conown *o, uint32_t dead, uint32_t tid)
{
	uint64_t w = atomic_load_explicit(&o->word, memory_order_relaxed);

	while (own_tid(w) == dead)
		/* LMM(own:A), as a dead owner's lock (cl:G) */
		if (atomic_compare_exchange_weak_explicit(
			    &o->word, &w,
			    (w & (OWN_REQ_MASK | OWN_UNSAFE)) | (uint64_t)PK_PRIO_NORMAL << OWN_PRIO_SHIFT |
				    tid,
			    memory_order_seq_cst, memory_order_relaxed))
			return true;
	return false;
}

bool pk__own_release(struct pk__conown *o, uint32_t tid)
{
	uint64_t w = atomic_load_explicit(&o->word, memory_order_relaxed);

	for (;;) {
		if (own_tid(w) != tid)
			return false;	/* taken from us by force */
		/* LMM(own:B) */
		if (atomic_compare_exchange_weak_explicit(&o->word, &w,
							  w & (OWN_REQ_MASK | OWN_UNSAFE),
							  memory_order_seq_cst,
							  memory_order_relaxed))
			return true;
	}
}

bool pk__own_yield_wanted(const struct pk__conown *o)
{
	uint64_t w = atomic_load_explicit(&o->word, memory_order_relaxed);

	return own_req(w) > (unsigned)((w >> OWN_PRIO_SHIFT) & 3);
}

bool pk__own_unsafe(const struct pk__conown *o)
{
	return atomic_load_explicit(&o->word, memory_order_relaxed) & OWN_UNSAFE;
}

uint32_t pk__own_owner(const struct pk__conown *o)
{
	/* seq_cst: one side of the fl:C pattern in flush.c */
	return own_tid(atomic_load_explicit(&o->word, memory_order_seq_cst));
}

void pk__own_reset(struct pk__conown *o)
{
	atomic_store_explicit(&o->word, 0, memory_order_relaxed);
}
