// SPDX-License-Identifier: MIT
/*
 * flush.c - the flush modes: who writes stored records to the consoles.
 *
 * LEGACY (before Linux 4.16): the caller that wins the trylock on the
 * console lock prints every pending record to every console, unlocks,
 * re-checks and goes on while there is more.  Under a storm this one
 * caller prints for everybody, for as long as the storm lasts.
 *
 * HANDOFF (Linux 4.16, the default): the holder marks itself active
 * around each record.  A caller that fails the trylock while the holder is
 * active, and finds no waiter, becomes the waiter: it spins briefly, then
 * sleeps until the holder hands the lock over at the next record boundary.
 * Printing circulates between the callers that produce output.  With
 * print_budget_us, a holder that printed longer than the budget with no
 * waiter in sight passes the rest to a printer thread instead of printing
 * the whole backlog itself.
 *
 * THREAD (nbcon): a printer thread per console prints; callers only store
 * and wake it (no system call when it is awake).
 *
 * In every mode, records stored in an emergency section are printed by
 * the caller at once (pk__flush_direct), taking each console at a record
 * boundary; panic and the crash handler do the same at PANIC priority and
 * take a console by force from an owner stuck inside write().
 *
 * Every printer takes a console's ownership (pk__conown) for one record at
 * a time, so emergency printers never wait longer than one record.
 *
 * MEMORY ORDERING
 *   fl:A  A caller commits its record (seq_cst, ringbuf write:E) and then
 *         loads the printer's `sleeping` flag (seq_cst); the printer stores
 *         sleeping = 1 (seq_cst) and then checks for readable records
 *         (seq_cst loads in pk__ring_readable).  One of them sees the
 *         other: a record is never left with its printer asleep.
 *   fl:B  The console-lock holder unlocks (seq_cst, conlock cl:D), then
 *         looks for pending records (seq_cst); a caller commits then tries
 *         the lock (seq_cst, cl:A).  Same pattern: somebody prints it.
 *   fl:C  A direct (emergency) printer releases a console (seq_cst,
 *         own:B) and then looks for pending records (seq_cst); a caller
 *         that found the console owned commits (seq_cst) and looks at the
 *         owner (seq_cst, in pending_any()).  Same pattern again.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conlock.h"
#include "console/wfd.h"
#include "consoles.h"
#include "flush.h"
#include "futex.h"
#include "internal.h"
#include "panic.h"

#define LMM(label)

#define SPIN_NS		(20 * 1000ull)		/* a waiter spins this long ... */
#define WAIT_NS		(1000 * 1000000ull)	/* ... and waits this long in all */
#define EMERG_WAIT_NS	(200 * 1000000ull)	/* emergency: for a record boundary */
#define EXIT_STALL_MS	5000			/* exit flush: give up without progress */

static struct {
	enum pk_mode mode;
	uint64_t budget_ns;
	struct pk__conlock lock;

	/* the budget printer thread (handoff with print_budget_us) */
	pthread_t budget_thread;
	bool budget_running;
	_Atomic int budget_stop;
	_Atomic int budget_sleeping;
	_Atomic uint32_t budget_wake;

	_Atomic uint64_t direct_records, thread_records, max_print_ns, budget_deferrals;
	_Atomic uint64_t max_call_records;
	_Atomic uint64_t takeovers;
	bool atexit_done;
} F;

static void note_max(_Atomic uint64_t *max, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(max, memory_order_relaxed);

	while (v > cur && !atomic_compare_exchange_weak_explicit(max, &cur, v, memory_order_relaxed,
								  memory_order_relaxed))
		;
}

static void wake_printer(struct pk_console *c)
{
	/* LMM(fl:A) */
	if (atomic_load_explicit(&c->sleeping, memory_order_seq_cst)) {
		atomic_fetch_add_explicit(&c->wake, 1, memory_order_release);
		pk__futex_wake(&c->wake, 1);
	}
}

/*
 * Call @fn for each registered console, pinned while it runs, until @fn
 * returns non-zero.  Return: that value, or 0.  Any context.
 */
static uint64_t each_console(uint64_t (*fn)(struct pk_console *c, uint64_t arg), uint64_t arg)
{
	struct pk_console *c;
	uint64_t ret = 0;
	int i;

	for (i = 0; i < PK_MAX_CONSOLES && !ret; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		ret = fn(c, arg);
		pk__con_put(i);
	}
	return ret;
}

/* Something readable that nobody else is printing? */
static uint64_t con_pending(struct pk_console *c, uint64_t arg)
{
	(void)arg;
	return !pk__own_owner(&c->own) && pk__con_pending(c);
}

/*
 * Behind a record that is still being written (seq < @head)?  A writer
 * preempted between reserving and committing would otherwise make the
 * holder leave, and the writer take over when it commits: in the kernel
 * that window is a few instructions with preemption off; here it is not.
 */
static uint64_t con_behind_free(struct pk_console *c, uint64_t head)
{
	return !pk__own_owner(&c->own) &&
	       atomic_load_explicit(&c->next_seq, memory_order_relaxed) < head;
}

static uint64_t con_behind(struct pk_console *c, uint64_t target)
{
	return atomic_load_explicit(&c->next_seq, memory_order_acquire) < target;
}

static uint64_t con_wake(struct pk_console *c, uint64_t arg)
{
	(void)arg;
	wake_printer(c);
	return 0;
}

static bool pending_any(void)
{
	return each_console(con_pending, 0);
}

static bool in_progress_any(void)
{
	return each_console(con_behind_free, pk__ring_next_seq(&pk__g.ring));
}

static void kick_budget_thread(void)
{
	if (atomic_load_explicit(&F.budget_sleeping, memory_order_seq_cst)) {
		atomic_fetch_add_explicit(&F.budget_wake, 1, memory_order_release);
		pk__futex_wake(&F.budget_wake, 1);
	}
}

/*
 * The console lock holder's loop (console_unlock()).  Prints one record
 * per console per round until nothing is pending.  @handoff: mark each
 * record active and hand over to a waiter at record boundaries.
 * @budget_ns: 0 or the handoff budget.  Returns with the lock released or
 * handed over.
 */
static void console_unlock(bool handoff, uint64_t budget_ns)
{
	uint32_t tid = pk__tid();
	uint64_t t0 = pk__now_ns();
	struct pk_console *c;
	enum pk__emit r;
	unsigned patience;
	uint64_t printed = 0;
	bool progress;
	int i;

again:
	for (patience = 0;;) {
		progress = false;
		for (i = 0; i < PK_MAX_CONSOLES; i++) {
			if (pk__panicking())
				goto unlock;	/* panic prints from now on */
			c = pk__con_get(i);
			if (!c)
				continue;
			if (!pk__own_try(&c->own, tid)) {
				pk__con_put(i);
				continue;
			}
			if (handoff)
				pk__cl_record_begin(&F.lock);
			do
				r = pk__con_emit(c, NULL, false);
			while (r == PK_EMIT_SKIPPED);
			pk__own_release(&c->own, tid);
			pk__con_put(i);
			if (r == PK_EMIT_PRINTED) {
				progress = true;
				printed++;
				atomic_fetch_add_explicit(&F.direct_records, 1, memory_order_relaxed);
			}
			if (handoff && pk__cl_record_end(&F.lock))
				goto out;	/* the waiter holds the lock now */
			if (budget_ns && pk__now_ns() - t0 > budget_ns) {
				/* Pass the rest to the printer thread. */
				atomic_fetch_add_explicit(&F.budget_deferrals, 1,
							  memory_order_relaxed);
				pk__cl_unlock(&F.lock, tid);
				kick_budget_thread();
				goto out;
			}
		}
		if (progress) {
			patience = 0;
			continue;
		}
		if (patience++ < 20 && in_progress_any()) {
			sched_yield();	/* let a preempted writer commit */
			continue;
		}
		break;
	}
unlock:
	pk__cl_unlock(&F.lock, tid);
	/* LMM(fl:B) */
	if (!pk__panicking() && pending_any() && pk__cl_trylock(&F.lock, tid, false))
		goto again;
out:
	note_max(&F.max_print_ns, pk__now_ns() - t0);
	if (!pk__self.printer)
		note_max(&F.max_call_records, printed);
}

static void *budget_main(void *arg)
{
	uint32_t tid, w;

	(void)arg;
	/* start_thread() blocked every signal, SIGPIPE included. */
	pk__wfd_sigpipe_blocked();
	pk__self.printer = true;
	tid = pk__tid();
	while (!atomic_load_explicit(&F.budget_stop, memory_order_acquire)) {
		w = atomic_load_explicit(&F.budget_wake, memory_order_acquire);
		atomic_store_explicit(&F.budget_sleeping, 1, memory_order_seq_cst);
		if (!pending_any() || !pk__cl_trylock(&F.lock, tid, true)) {
			pk__futex_wait(&F.budget_wake, w, 100000000ull);
			atomic_store_explicit(&F.budget_sleeping, 0, memory_order_relaxed);
			continue;
		}
		atomic_store_explicit(&F.budget_sleeping, 0, memory_order_relaxed);
		console_unlock(false, 0);
	}
	return NULL;
}

/* ---- thread mode ---- */

static void *printer_main(void *arg)
{
	struct pk_console *c = arg;
	struct timespec nap = { 0, 200000 };
	enum pk__emit r;
	uint32_t tid, w;

	/* start_thread() blocked every signal, SIGPIPE included. */
	pk__wfd_sigpipe_blocked();
	pk__self.printer = true;
	tid = pk__tid();
	while (!atomic_load_explicit(&c->thread_stop, memory_order_acquire)) {
		if (pk__panicking()) {
			nanosleep(&nap, NULL);
			continue;
		}
		w = atomic_load_explicit(&c->wake, memory_order_acquire);
		/* LMM(fl:A) */
		atomic_store_explicit(&c->sleeping, 1, memory_order_seq_cst);
		if (!pk__con_pending(c)) {
			pk__futex_wait(&c->wake, w, 100000000ull);
			atomic_store_explicit(&c->sleeping, 0, memory_order_relaxed);
			continue;
		}
		atomic_store_explicit(&c->sleeping, 0, memory_order_relaxed);
		if (!pk__own_try(&c->own, tid)) {
			/* An emergency printer has it: it prints everything anyway. */
			nanosleep(&nap, NULL);
			continue;
		}
		/* Yield to a higher priority at each record boundary. */
		do
			r = pk__con_emit(c, NULL, false);
		while (r == PK_EMIT_SKIPPED && !pk__own_yield_wanted(&c->own));
		pk__own_release(&c->own, tid);
		/*
		 * Told to stop while inside write(): our console was given up
		 * on (unregistered or shut down meanwhile, perhaps re-initialised);
		 * touch nothing but the console itself, which is kept for us.
		 */
		if (atomic_load_explicit(&c->thread_stop, memory_order_acquire))
			break;
		if (r == PK_EMIT_PRINTED)
			atomic_fetch_add_explicit(&F.thread_records, 1, memory_order_relaxed);
	}
	return NULL;
}


static void wake_printers(void)
{
	each_console(con_wake, 0);
}

/*
 * Start one of the library's threads with every signal blocked from its
 * first instruction: signals belong to the application's threads.
 * 0 or a positive error number, as pthread_create().
 */
static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

static int start_printer(struct pk_console *c)
{
	int ret;

	atomic_store_explicit(&c->thread_stop, 0, memory_order_relaxed);
	ret = start_thread(&c->thread, printer_main, c);
	if (ret)
		return -ret;
	c->has_thread = true;
	return 0;
}

int pk__flush_console_added(struct pk_console *c)
{
	if (F.mode != PK_MODE_THREAD)
		return 0;
	return start_printer(c);
}

int pk__flush_console_removing(struct pk_console *c)
{
	struct timespec until;

	if (!c->has_thread)
		return 0;
	atomic_store_explicit(&c->thread_stop, 1, memory_order_release);
	atomic_fetch_add_explicit(&c->wake, 1, memory_order_release);
	pk__futex_wake(&c->wake, 1);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	if (pthread_timedjoin_np(c->thread, NULL, &until)) {
		/* Stuck inside the driver's write(): leave it be. */
		pthread_detach(c->thread);
		c->has_thread = false;
		return -EBUSY;
	}
	c->has_thread = false;
	return 0;
}

/* ---- direct printing: emergency, panic, crash ---- */

static struct pk__con_scratch takeover_scratch;

/* Has @c still to print records before @target? */
static bool behind(struct pk_console *c, uint64_t target)
{
	return atomic_load_explicit(&c->next_seq, memory_order_acquire) < target;
}

/*
 * Print what is pending on @c from this thread at @prio, up to @target
 * (panic: UINT64_MAX, everything; other threads no longer store then).
 * An emergency printer stops at the records that were stored when it
 * began: under a flood faster than the console it would otherwise print
 * for ever, the legacy pathology.  Return: records printed.
 *
 * Two rules the SPIN model (verify/conlock.pml, model 2) found necessary:
 * stop at a record boundary as soon as the console is no longer ours (a
 * panic took it by force), and after releasing it, look again: a caller
 * that stored a record while we held the console found it owned and left
 * the record to us.  That re-check pairs with pending_any() in a caller
 * (fl:C): our seq_cst release then seq_cst look at the store, against its
 * seq_cst commit then seq_cst look at the owner; one of us sees the other.
 */
static int direct_one(struct pk_console *c, uint32_t tid, enum pk__prio prio, uint64_t target)
{
	bool panic = prio == PK_PRIO_PANIC;
	struct pk__con_scratch *scratch;
	bool unsafe, atomic, released;
	int ret, printed = 0;

	do {
		ret = pk__own_acquire(&c->own, tid, prio, panic ? PANIC_WAIT_NS : EMERG_WAIT_NS,
				      panic);
		if (ret == -EBUSY || (ret == -EDEADLK && !panic))
			break;	/* not ours to take: its owner prints it */
		unsafe = ret != 0;
		if (ret == 1)
			atomic_fetch_add_explicit(&F.takeovers, 1, memory_order_relaxed);
		if (unsafe && !c->ops->write_atomic) {
			/* The old owner is inside write(): nothing can safely interrupt it. */
			if (ret == 1)
				pk__own_release(&c->own, tid);
			break;
		}
		/* After a takeover the console's own buffers may still be in use. */
		scratch = unsafe ? &takeover_scratch : NULL;
		atomic = c->ops->write_atomic != NULL;
		while (pk__own_owner(&c->own) == tid && behind(c, target) &&
		       pk__con_emit(c, scratch, atomic) != PK_EMIT_NONE)
			printed++;
		/* LMM(fl:C) */
		released = ret >= 0 && pk__own_release(&c->own, tid);
	} while (released && !pk__panicking_other(tid) && behind(c, target) && pk__con_pending(c));
	return printed;
}

int pk__flush_direct(enum pk__prio prio)
{
	uint32_t tid = pk__tid();
	bool panic = prio == PK_PRIO_PANIC;
	uint64_t target = panic ? UINT64_MAX : pk__ring_next_seq(&pk__g.ring);
	struct pk_console *c;
	int i, printed = 0;

	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		printed += direct_one(c, tid, prio, target);
		pk__con_put(i);
	}
	atomic_fetch_add_explicit(&F.direct_records, (uint64_t)printed, memory_order_relaxed);
	/*
	 * What others stored meanwhile (some of them found a console owned by
	 * us and left their record to us) goes to the mode's own printers.
	 */
	if (!panic && pending_any())
		pk__flush_kick();
	return printed;
}

/* ---- the entry points ---- */

void pk__flush_after_store(int level, uint64_t seq)
{
	uint32_t tid;
	enum pk__cl_result r;

	(void)seq;
	if (!pk__con_count())
		return;
	if (pk__panicking())
		return;		/* the panicking thread prints everything */
	if (pk__self.emergency) {
		pk__flush_direct(PK_PRIO_EMERGENCY);
		return;
	}
	if (level >= pk__con_max_loglevel())
		return;		/* no console prints it: nothing to do now */
	tid = pk__tid();
	switch (F.mode) {
	case PK_MODE_THREAD:
		wake_printers();
		return;
	case PK_MODE_LEGACY:
		r = pk__cl_lock_legacy(&F.lock, tid);
		if (r == PK_CL_OWNER)
			console_unlock(false, 0);
		return;
	case PK_MODE_HANDOFF:
	default:
		r = pk__cl_lock_spinning(&F.lock, tid, SPIN_NS, WAIT_NS);
		if (r == PK_CL_OWNER)
			console_unlock(true, F.budget_ns);
		return;
	}
}

void pk__flush_kick(void)
{
	if (pk__panicking())
		return;
	if (F.mode == PK_MODE_THREAD)
		wake_printers();
	else if (pk__cl_trylock(&F.lock, pk__tid(), false))
		console_unlock(F.mode == PK_MODE_HANDOFF, F.budget_ns);
}

int pk__flush_max_loglevel(void)
{
	return pk__con_max_loglevel();
}

/* Have all consoles printed (or skipped) every record before @target? */
static bool caught_up(uint64_t target)
{
	return !each_console(con_behind, target);
}

static uint64_t progress_sum(void)
{
	struct pk_console *c;
	uint64_t sum = 0;
	int i;

	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		sum += atomic_load_explicit(&c->next_seq, memory_order_relaxed);
		pk__con_put(i);
	}
	return sum;
}

/*
 * Wait until every console reached @target.  @timeout_ms < 0: no limit;
 * @stall_ms > 0: give up after that long without progress.
 */
static int flush_until(uint64_t target, int timeout_ms, int stall_ms)
{
	struct timespec nap = { 0, 500000 };
	uint64_t t0 = pk__now_ns(), last_t = t0, last_p = progress_sum(), p, now;
	uint32_t tid = pk__tid();

	for (;;) {
		if (caught_up(target))
			return 0;
		if (F.mode == PK_MODE_THREAD || pk__panicking()) {
			wake_printers();
		} else if (pk__cl_trylock(&F.lock, tid, false)) {
			console_unlock(false, 0);
			continue;
		}
		now = pk__now_ns();
		p = progress_sum();
		if (p != last_p) {
			last_p = p;
			last_t = now;
		}
		if (timeout_ms >= 0 && now - t0 >= (uint64_t)timeout_ms * 1000000ull)
			return -ETIMEDOUT;
		if (stall_ms > 0 && now - last_t >= (uint64_t)stall_ms * 1000000ull)
			return -ETIMEDOUT;
		nanosleep(&nap, NULL);
	}
}

int pk_flush(int timeout_ms)
{
	int ret = pk__ensure_init();

	if (ret < 0)
		return ret == -ENODEV ? 0 : ret;
	if (pk__cl_held_by(&F.lock, pk__tid()))
		return -EDEADLK;	/* called from inside a console write */
	pk__ring_finalize_last(&pk__g.ring);
	return flush_until(pk__ring_next_seq(&pk__g.ring), timeout_ms, 0);
}

static void exit_flush(void)
{
	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) != PK__READY)
		return;
	if (pk__cl_held_by(&F.lock, pk__tid()))
		return;
	pk__ring_finalize_last(&pk__g.ring);
	/* As long as the consoles make progress, wait: nothing pending is lost. */
	flush_until(pk__ring_next_seq(&pk__g.ring), -1, EXIT_STALL_MS);
}

int pk__flush_init(const struct pk_config *cfg)
{
	const char *spec = cfg->consoles ? cfg->consoles : "stderr";
	int ret;

	memset(&F, 0, sizeof(F));
	F.mode = cfg->mode;
	F.budget_ns = (uint64_t)cfg->print_budget_us * 1000ull;
	if (F.mode == PK_MODE_HANDOFF && F.budget_ns) {
		ret = start_thread(&F.budget_thread, budget_main, NULL);
		if (ret)
			return -ret;
		F.budget_running = true;
	}
	if (!(cfg->flags & PK_CFG_NO_CONSOLE))
		pk_console_register_spec(spec);
	if (!(cfg->flags & PK_CFG_NO_ATEXIT)) {
		static bool registered;

		if (!registered && atexit(exit_flush) == 0)
			registered = true;
	}
	if (cfg->flags & PK_CFG_CRASH_HANDLER)
		pk_crash_handler_install();
	return 0;
}

void pk__flush_shutdown(void)
{
	flush_until(pk__ring_next_seq(&pk__g.ring), -1, EXIT_STALL_MS);
	if (F.budget_running) {
		atomic_store_explicit(&F.budget_stop, 1, memory_order_release);
		atomic_fetch_add_explicit(&F.budget_wake, 1, memory_order_release);
		pk__futex_wake(&F.budget_wake, 1);
		pthread_join(F.budget_thread, NULL);
		F.budget_running = false;
	}
	pk__con_unregister_all();
	pk__cl_reset(&F.lock);
}

void pk__flush_atfork_prepare(void)
{
	pk__con_atfork_prepare();
}

void pk__flush_atfork_parent(void)
{
	pk__con_atfork_parent();
}

void pk__flush_atfork_child(void)
{
	struct pk_console *c;
	int i;

	pk__cl_reset(&F.lock);
	pk__con_atfork_child();
	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) != PK__READY)
		return;
	/*
	 * A private store was copied with the records other threads were
	 * writing; those threads did not survive fork(), so retire their
	 * records.  A shared (file) store is still written by the parent.
	 */
	if (pk__g.mem_fd < 0)
		pk__ring_recover(&pk__g.ring);
	/* Threads do not survive fork(): start this process's own. */
	if (F.budget_running) {
		atomic_store_explicit(&F.budget_stop, 0, memory_order_relaxed);
		F.budget_running = start_thread(&F.budget_thread, budget_main, NULL) == 0;
	}
	if (F.mode != PK_MODE_THREAD)
		return;
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		start_printer(c);
		pk__con_put(i);
	}
}

bool pk__flush_waiter_present(void)
{
	return pk__cl_has_waiter(&F.lock);
}

int pk_flush_stats_get(struct pk_flush_stats *st)
{
	if (!st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->handoffs = atomic_load_explicit(&F.lock.handoffs, memory_order_relaxed);
	st->waits = atomic_load_explicit(&F.lock.waits, memory_order_relaxed);
	st->wait_timeouts = atomic_load_explicit(&F.lock.wait_timeouts, memory_order_relaxed);
	st->stuck_skips = atomic_load_explicit(&F.lock.stuck_skips, memory_order_relaxed);
	st->takeovers = atomic_load_explicit(&F.takeovers, memory_order_relaxed);
	st->budget_deferrals = atomic_load_explicit(&F.budget_deferrals, memory_order_relaxed);
	st->direct_records = atomic_load_explicit(&F.direct_records, memory_order_relaxed);
	st->thread_records = atomic_load_explicit(&F.thread_records, memory_order_relaxed);
	st->max_print_ns = atomic_load_explicit(&F.max_print_ns, memory_order_relaxed);
	st->max_call_records = atomic_load_explicit(&F.max_call_records, memory_order_relaxed);
	return 0;
}

void pk_flush_stats_reset(void)
{
	atomic_store_explicit(&F.lock.handoffs, 0, memory_order_relaxed);
	atomic_store_explicit(&F.lock.waits, 0, memory_order_relaxed);
	atomic_store_explicit(&F.lock.wait_timeouts, 0, memory_order_relaxed);
	atomic_store_explicit(&F.lock.stuck_skips, 0, memory_order_relaxed);
	atomic_store_explicit(&F.takeovers, 0, memory_order_relaxed);
	atomic_store_explicit(&F.budget_deferrals, 0, memory_order_relaxed);
	atomic_store_explicit(&F.direct_records, 0, memory_order_relaxed);
	atomic_store_explicit(&F.thread_records, 0, memory_order_relaxed);
	atomic_store_explicit(&F.max_print_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&F.max_call_records, 0, memory_order_relaxed);
	pk__share_reset();
}
