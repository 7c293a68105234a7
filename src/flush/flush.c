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
 * print_budget_us (on by default), a holder that printed longer than the
 * budget (or passed over filtered records for SKIP_BUDGETS budgets) with no
 * waiter in sight passes the rest to the rescue thread
 * instead of printing the whole backlog itself.
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
 * NOTHING STRANDS
 *
 * A holder can meet a record that is still being written (a writer
 * preempted between reserving and committing: in the kernel a few
 * instructions with preemption off, here a whole time slice or more).  It
 * does not wait for it: it publishes the seq it stalled at (stall_seq) and
 * leaves, and whoever commits a record at or after that seq takes part in
 * printing whatever its level (fl:D), if a record printable by level waits
 * (print_hi, fl:J): two writers of filtered records otherwise take the
 * lock in turn on every record, each stalling at the other's record in
 * progress (2 threads storing a filtered flood ran at half the rate of
 * one).  A filtered record takes part too
 * once the consoles lag a sixty-fourth of the descriptor ring behind it
 * (low_water): in every mode its writer passes over filtered records
 * itself under each lagging console's ownership, has a record to print
 * printed (or its printer woken), and holds back, bounded, while a console
 * twice that far behind (or its next record a quarter of the data ring
 * behind the head) moves under someone else's ownership (help_skip()).
 * So the flood's producers pay for it, as every caller of Linux's
 * printk() takes part in console_unlock(), and a printable record behind
 * a filtered flood is printed in milliseconds instead of waiting for (or
 * being overwritten before) the one thread that prints, at its share of
 * the CPU.  The holder passes over filtered records without handing over
 * to a waiter in between (Linux hands over only around a printed record).
 * The rescue thread (handoff and legacy) retries a stall until the store
 * gives up on an abandoned record, and takes over what a bounded stint
 * (pk_flush, exit, a recursing console) left.
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
 *   fl:D  A holder that stalled at a record in progress stores stall_seq
 *         (seq_cst), unlocks (seq_cst) and looks whether the record became
 *         readable (seq_cst loads in pk__ring_readable); the writer of that
 *         record (or of a later one) commits (seq_cst, write:E) and loads
 *         stall_seq (seq_cst).  Store-buffering again: either the holder
 *         sees the record and prints it, or the writer sees the stall and
 *         takes part in printing, whatever its level.  Without it a
 *         filtered record committed behind a holder that had just left
 *         strands every printable record queued after it.
 *   fl:E  low_water is a hint (relaxed both sides): a stale value only
 *         makes a filtered writer take part early or late by one batch.
 *         lag_limit is one too: a store switch rewrites it while writers
 *         of the old store still read it (relaxed both sides), and either
 *         value only moves the point where a filtered writer helps.
 *   fl:G  The exit's last flush (flush_fini()) stores exit_sync (seq_cst)
 *         and then loads the store's head (after a seq_cst fence); a
 *         caller commits its record (seq_cst, write:E) and then loads
 *         exit_sync (seq_cst).  Either the flush's target covers the
 *         record, or the caller sees exit_sync and waits until its record
 *         is printed before it returns: a record whose pk_printk()
 *         returned while the process exits is printed.
 *   fl:H  A helper (a filtered writer past the lag limit) releases the
 *         consoles it passed over (seq_cst, own:B) and then looks at the
 *         stall and the owners and the store (seq_cst); a holder that found
 *         a console owned by the helper and left unlocks (seq_cst) and then
 *         looks at the owners (seq_cst, pending_any()).  Same pattern as
 *         fl:C: one of them sees the record left to print (the helper
 *         through print_hi, fl:J).
 *   fl:J  print_hi: a writer whose record is printable by level raises
 *         its lane's print_hi (seq_cst CAS) after its commit and before it
 *         tries the lock; a filtered writer that found a stall (fl:D), or
 *         a helper (fl:H), loads print_hi and the consoles' next_seq
 *         (seq_cst) and takes part only if some console is short of it.
 *         If that load misses the printable writer's raise, it came first
 *         in the single order of seq_cst operations: before the printable
 *         writer's failed trylock, so before the holder's unlock and the
 *         holder's look at the store that follows it, which then sees our
 *         commit (fl:D) or the console free (fl:H) and goes on printing.
 *         A record that became printable after it was stored (a loglevel
 *         raised, records a store switch moved) or a gap to report is not
 *         in print_hi: the holder's stall kicks the rescue thread, which
 *         retries (the printers poll, in thread mode); where neither runs
 *         (not started, unloading), a filtered writer at a stall takes
 *         part as before (retried()).  The SPIN model (verify/conlock.pml,
 *         PRINT_HI) checks the order; a helper's stall_clear() is not in it:
 *         stall_at() reads the stall with an RMW, so a holder never skips
 *         publishing on a stall a helper cleared meanwhile.
 *   fl:I  help_stuck is a hint (relaxed both sides): a stale value makes
 *         one more helper wait for a console that does not move, or one
 *         give up early; neither loses a record.
 *   fl:F  open_at (below) is a time, exchanged and compare-exchanged
 *         relaxed: no other data is published through it (the record it
 *         stands for is read through the store's own ordering, after
 *         pk__ring_finalize_last()'s seq_cst).  A stale value only moves
 *         a finalisation by one poll.
 *   fl:K  A note that finds open_at under OPEN_NOTE_SLACK_NS old leaves it
 *         (the watcher then finalises the newest line at most that much
 *         sooner).  Its writer commits the open record (seq_cst, write:E)
 *         and then loads open_at (seq_cst); the watcher takes the note
 *         with a seq_cst CAS and then loads the store's head (seq_cst, in
 *         pk__ring_finalize_last()).  Store-buffering: either the load
 *         sees the watcher's 0 and the writer notes its line afresh, or
 *         the watcher's look at the store sees the committed record and
 *         finalises it.  (The time compared is the one the store read,
 *         before the commit: a writer held up between them may find a
 *         note the watcher is about to take; the order above still
 *         covers it.)
 *
 * OPEN LINES
 *
 * A record stored without its newline is OPEN: pk_cont() may still
 * extend it, and no console prints it until it is finalised, which
 * normally happens when the next record is stored.  A program that logs
 * "listening on port 80" and then idles would never show it.  So a writer
 * that stores an open record notes the time (pk__flush_note_open(); the
 * first note wakes the thread that watches), and the rescue thread
 * (handoff, legacy) or the printers (thread mode) finalise the newest
 * record once OPEN_LINE_NS have passed since the last note, then print
 * it: an open line reaches the consoles within about OPEN_LINE_NS and a
 * print, whatever else is logged.  A pk_cont() after that stores a
 * continuation record of its own (format.c marks it with its caller).  The
 * note is one time for all threads: a writer preempted between its store
 * and its note can see its line finalised early (its next pk_cont() then
 * makes a record of its own); nothing is lost either way.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/atomics.h"
#include "flush/conlock.h"
#include "console/wfd.h"
#include "console/consoles.h"
#include "flush/flush.h"
#include "core/futex.h"
#include "format/format.h"
#include "store/store.h"
#include "flush/panic.h"

#define LMM(label)

#define SPIN_NS		(20 * 1000ull)		/* a waiter spins this long ... */
#define WAIT_NS		(1000 * 1000000ull)	/* ... and waits this long in all */
#define EMERG_WAIT_NS	(200 * 1000000ull)	/* emergency: for a record boundary */
#define EXIT_STALL_MS	5000			/* exit flush: give up without progress */
#define EXIT_DEADLINE_MS 10000			/* exit flush: give up in any case */
#define EXIT_INIT_WAIT_MS 5000			/* exit: wait this long for an init under way */
#define EXIT_FINAL_MS	2000			/* exit: after the threads stopped, print the rest */
#define TAKEOVER_MS	1000			/* a flush without progress: take over (takeover()) */
#define EXIT_SYNC_MS	1000			/* exiting: a caller waits this long for its record */
#define RESCUE_POLL_NS	(100 * 1000000ull)	/* rescue thread: look again this often */
#define OPEN_LINE_NS	(50 * 1000000ull)	/* an open line is printed after this */
#define STALL_POLL_NS	(1000000ull)		/* printer: a record in progress, look again */
#define SKIP_BUDGETS	10			/* a holder passes over filtered records this
						   many print budgets at most */
#define PANIC_STALL_NS	(5 * 1000000ull)	/* panic: wait this long for one record ... */
#define PANIC_STALL_ALL_NS (50 * 1000000ull)	/* ... and this long for all of them */
#define DEAD_OWNER_NS	(200 * 1000000ull)	/* an owner this long without progress is looked up */

/* Thread mode: the printer of the console in the same slot. */
struct printer {
	struct pk_console *con;
	pthread_t thread;
	bool running;
	_Atomic int stop;
	_Atomic int sleeping;		/* (about to be) asleep on @wake */
	_Atomic uint32_t wake;
};

/* A holder's stint: when it stops printing. */
struct stint {
	bool handoff;		/* mark records active, hand over to a waiter */
	uint64_t budget_ns;	/* pass the rest to the rescue thread after this */
	const struct pk__spos *target;	/* stop once every console reached it (all_seqs: never) */
	uint64_t deadline;	/* stop at this time (0: none) */
};

/*
 * A lane's words, on a cache line of their own: each is read on every call
 * storing in the lane (fl:D, fl:E, fl:J) and written by the lane's helpers
 * and holders.  Packed as three arrays, a helper's store to one lane's
 * low_water took the line from every other lane's writers.
 */
struct fl_lane {
	_Atomic uint64_t low_water;	/* the slowest console's next_seq (a hint) */
	_Atomic uint64_t stall_seq;	/* fl:D: a holder left at this record */
	_Atomic uint64_t print_hi;	/* fl:J: newest printable seq + 1 */
} __attribute__((aligned(64)));

static struct {
	struct fl_lane ln[PK_LANES_MAX];
	/* Read on every call, written by pk_init() and a store switch. */
	_Atomic int mode;		/* enum pk_mode; pk_init() may change it */
	_Atomic uint64_t budget_ns;
	_Atomic uint64_t lag_limit;	/* fl:E: filtered records before taking part */
	struct pk__conlock lock __attribute__((aligned(64)));
	/* fl:I: next_seq + 1, a helper gave up */
	_Atomic uint64_t help_stuck[PK_MAX_CONSOLES] __attribute__((aligned(64)));
	struct pk__spos fork_head;	/* seq_head of every lane when fork() began */

	/* the rescue thread (handoff and legacy) */
	pthread_t rescue_thread;
	_Atomic bool rescue_running;
	_Atomic int rescue_stop;
	_Atomic int rescue_sleeping;
	_Atomic uint32_t rescue_wake;
	_Atomic int threads_stopped;	/* unloading: callers print themselves */
	_Atomic uint64_t open_at;	/* fl:F: the last open record's note; 0: none */

	_Atomic uint64_t direct_records, thread_records, max_print_ns, budget_deferrals;
	_Atomic uint64_t max_call_records;
	_Atomic uint64_t takeovers;
	_Atomic uint64_t dead_consoles;	/* consoles taken from a thread that was gone */
} F;

/* A target no console reaches: print until nothing is pending. */
static const struct pk__spos all_seqs = { { [0 ... PK_LANES_MAX - 1] = UINT64_MAX } };

/* Every lane's stall_seq to @v (no writer stores meanwhile, or a hint). */
static void stall_reset(void)
{
	unsigned i;

	for (i = 0; i < PK_LANES_MAX; i++) {
		atomic_store_explicit(&F.ln[i].stall_seq, PK__NO_SEQ, memory_order_relaxed);
		atomic_store_explicit(&F.ln[i].print_hi, 0, memory_order_relaxed);
	}
}

/* Is a holder stalled in some lane (fl:D)? */
static bool stalled_any(memory_order mo)
{
	unsigned i;

	for (i = 0; i < pk__st.lanes.n; i++)
		if (atomic_load_explicit(&F.ln[i].stall_seq, mo) != PK__NO_SEQ)
			return true;
	return false;
}

/*
 * Never freed: a writer may hold a pointer to one while its console goes,
 * and a printer stuck inside write() keeps its own.  A slot whose printer
 * was given up on gets a fresh one.
 */
static struct printer *_Atomic printers[PK_MAX_CONSOLES];
/* Printers given up on inside write(): their threads may still use them. */
static struct printer *given_up[PK_MAX_CONSOLES * 4];
static unsigned nr_given_up;	/* registry lock */

/*
 * A thread the mode needs could not be started (pthread_create() failed:
 * no memory, RLIMIT_AS, RLIMIT_NPROC).  Printing goes on without it, said
 * once on stderr: without the rescue thread the callers print everything
 * (no print budget); without a printer, thread mode prints as handoff
 * mode does, from the callers, for every console.
 */
static _Atomic bool said_no_rescue, said_no_printer;

static void no_rescue(int err)
{
	atomic_store_explicit(&F.rescue_running, false, memory_order_relaxed);
	if (!atomic_exchange_explicit(&said_no_rescue, true, memory_order_relaxed))
		fprintf(stderr, "libprintk: cannot start the rescue thread (%s); callers print "
			"everything themselves\n", strerror(err));
}

static void no_printer(struct pk_console *c, int err)
{
	/* Relaxed: a caller that still sees THREAD wakes the printers that run (mode_of()). */
	atomic_store_explicit(&F.mode, PK_MODE_HANDOFF, memory_order_relaxed);
	if (!atomic_exchange_explicit(&said_no_printer, true, memory_order_relaxed))
		fprintf(stderr, "libprintk: cannot start a printer thread for console \"%s\" (%s); "
			"printing from the callers (handoff mode) instead\n",
			c->name ? c->name : "?", strerror(err));
}

static bool rescue_on(void)
{
	return atomic_load_explicit(&F.rescue_running, memory_order_relaxed);
}

static void note_max(_Atomic uint64_t *max, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(max, memory_order_relaxed);

	while (v > cur && !atomic_compare_exchange_weak_explicit(max, &cur, v, memory_order_relaxed,
								  memory_order_relaxed))
		;
}

static enum pk_mode mode_of(void)
{
	/*
	 * Relaxed: a caller that sees the old mode after pk_init() changed
	 * it prints (or wakes the printers) once more the old way, which is
	 * safe in every mode: each record is printed under its console's
	 * ownership whoever prints it.
	 */
	return (enum pk_mode)atomic_load_explicit(&F.mode, memory_order_relaxed);
}

static uint64_t budget_now(void)
{
	return atomic_load_explicit(&F.budget_ns, memory_order_relaxed);
}

static enum pk_mode mode_now(void)
{
	/* Once the library's threads are gone (unloading), callers print. */
	if (atomic_load_explicit(&F.threads_stopped, memory_order_relaxed))
		return mode_of() == PK_MODE_LEGACY ? PK_MODE_LEGACY : PK_MODE_HANDOFF;
	return mode_of();
}

static void wake_printer(struct printer *p)
{
	/* LMM(fl:A) */
	if (p && atomic_load_explicit(&p->sleeping, memory_order_seq_cst)) {
		atomic_fetch_add_explicit(&p->wake, 1, memory_order_release);
		pk__futex_wake(&p->wake, 1);
	}
}

/*
 * Call @fn for each registered console, pinned while it runs, until @fn
 * returns non-zero.  Return: that value, or 0.  Any context.
 */
static uint64_t each_console(uint64_t (*fn)(struct pk_console *c, uint64_t arg), uint64_t arg)
{
	struct pk_console *c;
	uint32_t m = pk__con_slots();
	uint64_t ret = 0;
	int i;

	pk__con_each_slot(i, m) {
		if (ret)
			break;
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

static uint64_t con_behind(struct pk_console *c, uint64_t target)
{
	return pk__con_behind(c, (const struct pk__spos *)(uintptr_t)target);
}

static uint64_t con_wake(struct pk_console *c, uint64_t arg)
{
	(void)arg;
	wake_printer(atomic_load_explicit(&printers[c->slot], memory_order_acquire));
	return 0;
}

static bool pending_any(void)
{
	return each_console(con_pending, 0);
}

/* Note that lane @lane's record @seq is printable by level (fl:J). */
static void note_printable(unsigned lane, uint64_t seq)
{
	uint64_t cur = atomic_load_explicit(&F.ln[lane].print_hi, memory_order_relaxed);

	/* LMM(fl:J) */
	while (cur < seq + 1 &&
	       !atomic_compare_exchange_weak_explicit(&F.ln[lane].print_hi, &cur, seq + 1,
						      memory_order_seq_cst, memory_order_relaxed))
		;
}

static uint64_t con_before_printable(struct pk_console *c, uint64_t arg)
{
	unsigned l;

	(void)arg;
	for (l = 0; l < c->pos.n && l < pk__st.lanes.n; l++)
		/* LMM(fl:J) */
		if (atomic_load_explicit(&c->lp[l].next_seq, memory_order_seq_cst) <
		    atomic_load_explicit(&F.ln[l].print_hi, memory_order_seq_cst))
			return 1;
	return 0;
}

/*
 * Does a thread retry stalls (fl:J)?  The rescue thread in handoff and
 * legacy modes, the printers in thread mode.  Without one (it could not be
 * started, the library is unloading or being set up again), a filtered
 * writer at a stall takes part whatever print_hi says: records printable
 * but not in print_hi (a loglevel raised after they were stored, records
 * moved by a store switch, a gap to report) have nobody else.
 */
static bool retried(void)
{
	/* mode_now() is not thread mode once the threads are stopped. */
	if (mode_now() == PK_MODE_THREAD)
		return !atomic_load_explicit(&said_no_printer, memory_order_relaxed);
	return rescue_on();
}

/*
 * Has some console not yet reached a record that was printable by level
 * when it was stored (fl:J)?  Only then must a filtered record's writer
 * take part in printing because of a stall.
 */
static bool printable_pending(void)
{
	return each_console(con_before_printable, 0);
}

static void wake_printers(void)
{
	each_console(con_wake, 0);
}

/* The slowest console's position in each lane, for low_water (UINT64_MAX: none).  Any context. */
static void slowest(struct pk__spos *min)
{
	struct pk_console *c;
	uint64_t v;
	unsigned l;
	uint32_t m = pk__con_slots();
	int i;

	for (l = 0; l < PK_LANES_MAX; l++)
		min->s[l] = UINT64_MAX;
	pk__con_each_slot(i, m) {
		c = pk__con_get(i);
		if (!c)
			continue;
		for (l = 0; l < pk__st.lanes.n; l++) {
			v = atomic_load_explicit(&c->lp[l].next_seq, memory_order_relaxed);
			if (v < min->s[l])
				min->s[l] = v;
		}
		pk__con_put(i);
	}
}

static void update_low_water_to(struct pk__spos *v)
{
	unsigned l;

	slowest(v);
	/* LMM(fl:E) */
	for (l = 0; l < pk__st.lanes.n; l++)
		if (v->s[l] != UINT64_MAX)
			atomic_store_explicit(&F.ln[l].low_water, v->s[l], memory_order_relaxed);
}

static void update_low_water(void)
{
	struct pk__spos v;

	update_low_water_to(&v);
}

static void kick_rescue(void)
{
	if (!rescue_on())
		return;
	if (atomic_load_explicit(&F.rescue_sleeping, memory_order_seq_cst)) {
		atomic_fetch_add_explicit(&F.rescue_wake, 1, memory_order_release);
		pk__futex_wake(&F.rescue_wake, 1);
	}
}

/*
 * Has this thread stored records from inside a console's write() that @c
 * has reached?  They are printed later, by another call chain.
 */
static bool recursion_reached(struct pk_console *c)
{
	return pk__self.recurse_seq != PK__NO_SEQ &&
	       !pk__con_behind_seq(c, pk__self.recurse_lane, pk__self.recurse_seq);
}

/* Lower lane @lane's stall_seq to @seq (fl:D). */
static void stall_at(unsigned lane, uint64_t seq)
{
	/*
	 * An RMW reads the newest value: a plain load could return a stall a
	 * helper has cleared since (help_skip()), and we would not publish ours.
	 */
	uint64_t cur = atomic_fetch_or_explicit(&F.ln[lane].stall_seq, 0, memory_order_seq_cst);

	/* LMM(fl:D) */
	while (seq < cur && !atomic_compare_exchange_weak_explicit(&F.ln[lane].stall_seq, &cur, seq,
								   memory_order_seq_cst,
								   memory_order_relaxed))
		;
}

/* A stint got past @upto in @lane: the stall there (if any) is over. */
static void stall_clear(unsigned lane, uint64_t upto)
{
	uint64_t cur = atomic_load_explicit(&F.ln[lane].stall_seq, memory_order_relaxed);

	while (cur < upto && !atomic_compare_exchange_weak_explicit(&F.ln[lane].stall_seq, &cur,
								    PK__NO_SEQ,
								    memory_order_seq_cst,
								    memory_order_relaxed))
		;
}

/*
 * Mark a stall in every lane where some console is behind the lane's
 * head (fl:D).  Return: whether there was one.
 */
static bool stall_behind_head(void)
{
	struct pk__spos min;
	unsigned l;
	bool any = false;

	slowest(&min);
	for (l = 0; l < pk__st.lanes.n; l++) {
		if (min.s[l] < pk__ring_next_seq(pk__lane(l))) {
			stall_at(l, min.s[l]);
			any = true;
		}
	}
	return any;
}

/*
 * The console lock holder's loop (console_unlock()).  Prints one record
 * (or skips one batch of filtered records) per console per round until
 * nothing is pending or the stint says stop.  Returns with the lock
 * released or handed over.
 */
static void console_unlock(const struct stint *stint)
{
	struct stint s = *stint, *st = &s;
	uint32_t tid = pk__tid();
	uint64_t t0 = pk__now_ns(), t1, spent = 0, printed = 0, head, pos;
	struct pk__spos stalled;
	bool progress, bounded_out = false, any_stall;
	struct pk_console *c;
	enum pk__emit r;
	unsigned l;
	int i;

	pk__self.recurse_seq = PK__NO_SEQ;
again:
	for (;;) {
		progress = false;
		any_stall = false;
		for (l = 0; l < PK_LANES_MAX; l++)
			stalled.s[l] = PK__NO_SEQ;
		if ((st->deadline && pk__now_ns() >= st->deadline) ||
		    (pk__self.printer && atomic_load_explicit(&F.rescue_stop, memory_order_relaxed)) ||
		    pk__switch_pending()) {
			/*
			 * Out of time, or the library stops, or a store switch
			 * waits for this caller to leave its gate: the rest is
			 * printed after the switch (pk__flush_reconfigure()).
			 */
			bounded_out = true;
			goto unlock;
		}
		for (i = 0; i < PK_MAX_CONSOLES; i++) {
			if (pk__panicking())
				goto unlock;	/* panic prints from now on */
			c = pk__con_get(i);
			if (!c)
				continue;
			if (!pk__con_behind(c, st->target) || recursion_reached(c) ||
			    !pk__own_try(&c->own, tid)) {
				/* Done, or an emergency printer has it and prints it all. */
				pk__con_put(i);
				continue;
			}
			if (st->handoff)
				pk__cl_record_begin(&F.lock);
			t1 = st->budget_ns ? pk__now_ns() : 0;
			r = pk__con_emit(c, NULL, NULL, false, tid);
			pk__own_release(&c->own, tid);
			if (st->budget_ns && r != PK_EMIT_SKIPPED)
				spent += pk__now_ns() - t1;
			if (r == PK_EMIT_NONE) {
				/*
				 * A record in progress (in a lane, or holding up
				 * the merge of the others): every lane behind its
				 * head may be the one.
				 */
				for (l = 0; l < pk__st.lanes.n; l++) {
					head = pk__ring_next_seq(pk__lane(l));
					pos = atomic_load_explicit(&c->lp[l].next_seq,
								   memory_order_relaxed);
					if (pos < head && pos < stalled.s[l]) {
						stalled.s[l] = pos;
						any_stall = true;
					}
				}
			} else {
				progress = true;
			}
			pk__con_put(i);
			if (r == PK_EMIT_PRINTED) {
				printed++;
				atomic_fetch_add_explicit(&F.direct_records, 1, memory_order_relaxed);
			}
			if (st->handoff && pk__cl_record_end(&F.lock, r != PK_EMIT_SKIPPED))
				goto out;	/* the waiter holds the lock now */
			/*
			 * The budget is for printing: passing over a filtered
			 * flood is the flood's writers' share too (help_skip()),
			 * and a rescue thread holding the lock, which they do
			 * not take from it, at its share of the CPU would let the
			 * flood overwrite what is to print.  A holder passes over
			 * filtered records for SKIP_BUDGETS budgets at most.
			 */
			if (st->budget_ns && (spent > st->budget_ns ||
					      pk__now_ns() - t0 > SKIP_BUDGETS * st->budget_ns)) {
				/* Pass the rest to the rescue thread. */
				atomic_fetch_add_explicit(&F.budget_deferrals, 1,
							  memory_order_relaxed);
				bounded_out = true;
				goto unlock;
			}
			if (st->deadline && pk__now_ns() >= st->deadline) {
				bounded_out = true;
				goto unlock;
			}
		}
		if (!progress)
			break;
	}
unlock:
	/* LMM(fl:D) */
	if (any_stall) {
		for (l = 0; l < pk__st.lanes.n; l++)
			if (stalled.s[l] != PK__NO_SEQ)
				stall_at(l, stalled.s[l]);
	} else if (!bounded_out) {
		struct pk__spos min;

		slowest(&min);
		for (l = 0; l < pk__st.lanes.n; l++)
			stall_clear(l, min.s[l]);
	}
	update_low_water();
	pk__cl_unlock(&F.lock, tid);
	if (pk__panicking())
		goto out;
	if (bounded_out || pk__self.recurse_seq != PK__NO_SEQ) {
		/* Left on purpose: the rescue thread takes over. */
		kick_rescue();
		goto out;
	}
	/*
	 * At a record in progress the rescue thread retries, unless the
	 * record's writer takes over first (fl:D).
	 */
	if (any_stall)
		kick_rescue();
	/* LMM(fl:B), LMM(fl:D) */
	if (!pending_any()) {
		/*
		 * A record may have been reserved after our last look and
		 * still be in progress, with a printable one committed behind
		 * it by a caller that found us holding the lock (found by the
		 * SPIN model, F4): mark the stall now, then look once more.
		 */
		if (!stall_behind_head())
			goto out;
		kick_rescue();
		if (!pending_any())
			goto out;
	}
	if (st->target != &all_seqs && rescue_on()) {
		/* A flush reached its target: what came since is the rescuer's. */
		kick_rescue();
		goto out;
	}
	if (pk__cl_trylock(&F.lock, tid, false)) {
		st->target = &all_seqs;	/* nobody else will: go on, to the deadline */
		goto again;
	}
out:
	note_max(&F.max_print_ns, pk__now_ns() - t0);
	if (!pk__self.printer)
		note_max(&F.max_call_records, printed);
}

static const struct stint stint_unbounded = { false, 0, &all_seqs, 0 };

/*
 * Take each console that thread @dead owned (it is gone: pk__tid_gone)
 * and restart it at its last published record boundary, as panic's
 * takeover does: a record the thread was writing is printed again, and
 * records that left the store meanwhile are counted as dropped.  The
 * caller holds the console lock (taken from @dead too), or is about to
 * flush.  Return: the consoles taken.
 */
static unsigned reap_consoles(uint32_t dead, uint32_t tid)
{
	struct pk_console *c;
	unsigned n = 0;
	int i;

	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		if (pk__own_owner(&c->own) == dead && pk__own_reap(&c->own, dead, tid)) {
			/* A store switch's count not reported yet stays with the console. */
			struct pk__con_lane keep[PK_LANES_MAX];
			struct pk__spos next;
			unsigned l;

			memcpy(keep, c->pos.l, sizeof(keep));
			pk__con_next(c, &next);
			pk__con_pos_init(&c->pos, &next, true);
			for (l = 0; l < pk__st.lanes.n; l++) {
				c->pos.l[l].carry = keep[l].carry;
				c->pos.l[l].has_carry = keep[l].has_carry;
				atomic_store_explicit(&c->lp[l].undecided, UINT64_MAX,
						      memory_order_relaxed);
			}
			pk__own_release(&c->own, tid);
			n++;
		}
		pk__con_put(i);
	}
	if (n)
		atomic_fetch_add_explicit(&F.dead_consoles, n, memory_order_relaxed);
	return n;
}

/*
 * A thread that died holding the console lock (asynchronous cancellation,
 * or pthread_exit() from a console's write()) would keep every record from
 * the consoles for good: after DEAD_OWNER_NS without progress its tid is
 * looked up, and if it is gone the caller takes the lock over and prints.
 * A console owned by a thread that is gone is taken over the same way,
 * whoever holds the lock (thread mode has none).  Return: true if the
 * caller holds the console lock now (it must print, then unlock).
 */
static bool reap_dead(uint32_t tid, bool consoles)
{
	uint32_t dead = pk__cl_reap(&F.lock, tid, DEAD_OWNER_NS), o;
	struct pk_console *c;
	int i;

	if (dead) {
		reap_consoles(dead, tid);
		return true;
	}
	if (!consoles)
		return false;
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		o = pk__own_owner(&c->own);
		pk__con_put(i);
		if (o && o != tid && pk__tid_gone(o))
			reap_consoles(o, tid);
	}
	return false;
}

/*
 * The process exits (fl:G): from the exit's last flush on, a caller waits
 * (EXIT_SYNC_MS at most) until its own record is printed before it
 * returns.  Threads still logging then are killed at any moment, and a
 * record left to a holder or a printer that dies with them would be lost.
 */
static _Atomic bool exit_sync;
static int flush_until(const struct pk__spos *target, int timeout_ms, int stall_ms);

/*
 * A note this recent stands for ours: the watcher finalises at most
 * OPEN_NOTE_SLACK_NS sooner after our line than OPEN_LINE_NS.  Without
 * it, a flood of open lines from several threads exchanged this one
 * shared word on every call.
 */
#define OPEN_NOTE_SLACK_NS	(OPEN_LINE_NS / 64)

void pk__flush_note_open(uint64_t now)
{
	uint64_t at;

	if (!now)
		now = pk__now_ns();

	/* LMM(fl:K) */
	at = atomic_load_explicit(&F.open_at, memory_order_seq_cst);
	if (at && now >= at && now - at < OPEN_NOTE_SLACK_NS)
		return;		/* noted a moment ago: the watcher knows */
	if (atomic_exchange_explicit(&F.open_at, now ? now : 1, memory_order_relaxed))
		return;		/* the watcher knows of an open line already */
	if (mode_now() == PK_MODE_THREAD)
		wake_printers();
	else
		kick_rescue();
}

/*
 * The watcher (the rescue thread, or a printer): finalise the newest
 * record if the last open line was noted OPEN_LINE_NS ago (the header's
 * "Open lines").  Return how long the caller may sleep before it looks
 * again, at most @poll_ns.
 */
static uint64_t finalize_open(uint64_t poll_ns)
{
	uint64_t at = atomic_load_explicit(&F.open_at, memory_order_relaxed), now, due;

	while (at) {
		now = pk__now_ns();
		due = at + OPEN_LINE_NS;
		if (now < due)
			return due - now < poll_ns ? due - now : poll_ns;
		/* LMM(fl:F), LMM(fl:K) */
		if (atomic_compare_exchange_weak_explicit(&F.open_at, &at, 0, memory_order_seq_cst,
							  memory_order_relaxed)) {
			pk__store_finalize_last();
			if (mode_now() == PK_MODE_THREAD)
				wake_printers();	/* each printer its console */
			break;
		}
	}
	return poll_ns;
}

/*
 * The rescue thread: takes over what the budget, a bounded stint or a
 * recursing console left, and retries a stall at a record in progress
 * until its writer commits it or the store gives up on it.  Callers never
 * wait for it (it takes the lock as BUDGET).
 */
static void *rescue_main(void *arg)
{
	uint64_t poll;
	uint32_t tid, w;

	(void)arg;
	pk__thread_name("pk-rescue");
	/* start_thread() blocked every signal, SIGPIPE included. */
	pk__wfd_sigpipe_blocked();
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pk__self.printer = true;
	tid = pk__tid();
	while (!atomic_load_explicit(&F.rescue_stop, memory_order_acquire)) {
		/* Early records whose writer found a migration under way (in the gate: pk_flush()). */
		if (pk__early_pending() && pk__gate_enter()) {
			pk__early_migrate();
			pk__gate_exit();
		}
		w = atomic_load_explicit(&F.rescue_wake, memory_order_acquire);
		atomic_store_explicit(&F.rescue_sleeping, 1, memory_order_seq_cst);
		poll = finalize_open(RESCUE_POLL_NS);
		if ((!pending_any() && !stalled_any(memory_order_seq_cst)) ||
		    pk__panicking() ||
		    (!pk__cl_trylock(&F.lock, tid, true) && !reap_dead(tid, false))) {
			pk__futex_wait(&F.rescue_wake, w, poll);
			atomic_store_explicit(&F.rescue_sleeping, 0, memory_order_relaxed);
			continue;
		}
		atomic_store_explicit(&F.rescue_sleeping, 0, memory_order_relaxed);
		console_unlock(&stint_unbounded);
		if (stalled_any(memory_order_relaxed))
			pk__futex_wait(&F.rescue_wake, w, RESCUE_POLL_NS / 10);
	}
	return NULL;
}

/* ---- thread mode ---- */

static void *printer_main(void *arg)
{
	struct printer *p = arg;
	struct pk_console *c = p->con;
	struct timespec nap = { 0, 200000 };
	enum pk__emit r;
	uint64_t poll;
	uint32_t tid, w;
	char name[16];

	/* As the console's slot in PK_CONSOLE order: pk-printer/0 prints the first. */
	snprintf(name, sizeof(name), "pk-printer/%d", c->slot);
	pk__thread_name(name);
	/* start_thread() blocked every signal, SIGPIPE included. */
	pk__wfd_sigpipe_blocked();
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pk__self.printer = true;
	tid = pk__tid();
	while (!atomic_load_explicit(&p->stop, memory_order_acquire)) {
		if (pk__panicking()) {
			nanosleep(&nap, NULL);
			continue;
		}
		w = atomic_load_explicit(&p->wake, memory_order_acquire);
		/* LMM(fl:A) */
		atomic_store_explicit(&p->sleeping, 1, memory_order_seq_cst);
		poll = finalize_open(RESCUE_POLL_NS);
		if (!pk__con_pending(c)) {
			update_low_water();
			/*
			 * A record in progress is looked at again after the
			 * poll, soon: records after it may be overwritten
			 * meanwhile (the reader gives it up when they would be).
			 */
			if (pk__con_behind(c, NULL) && poll > STALL_POLL_NS)
				poll = STALL_POLL_NS;
			pk__futex_wait(&p->wake, w, poll);
			atomic_store_explicit(&p->sleeping, 0, memory_order_relaxed);
			if (!pk__con_pending(c) && pk__con_behind(c, NULL) &&
			    pk__own_try(&c->own, tid)) {
				/* Let the reader time out an abandoned record. */
				pk__con_emit(c, NULL, NULL, false, tid);
				pk__own_release(&c->own, tid);
			}
			continue;
		}
		atomic_store_explicit(&p->sleeping, 0, memory_order_relaxed);
		if (!pk__own_try(&c->own, tid)) {
			/* An emergency printer has it: it prints everything anyway. */
			nanosleep(&nap, NULL);
			continue;
		}
		/*
		 * One record (or batch) per ownership: a higher priority, or a
		 * flood's writer passing over filtered records (help_skip()),
		 * gets the console between two; a printer preempted while it
		 * owns the console holds up neither for long.
		 */
		r = pk__con_emit(c, NULL, NULL, false, tid);
		pk__own_release(&c->own, tid);
		/*
		 * Told to stop while inside write(): our console was given up
		 * on (unregistered or shut down meanwhile, perhaps re-initialised);
		 * touch nothing but the console itself, which is kept for us.
		 */
		if (atomic_load_explicit(&p->stop, memory_order_acquire))
			break;
		if (r == PK_EMIT_PRINTED)
			atomic_fetch_add_explicit(&F.thread_records, 1, memory_order_relaxed);
		/*
		 * Readable but nothing out: a record held while another lane's
		 * record in progress could still come before it (lanes.c).
		 * Look again after a short poll, as at a record in progress.
		 */
		if (r == PK_EMIT_NONE) {
			struct timespec stall = { 0, STALL_POLL_NS };

			nanosleep(&stall, NULL);
		}
	}
	return NULL;
}

/*
 * Start one of the library's threads with every signal blocked from its
 * first instruction: signals belong to the application's threads.  All
 * but the crash signals: a fault inside a console's write() on our thread
 * must reach the crash handler (a blocked fault kills the process without
 * it), and abort() unblocks SIGABRT anyway.
 * 0 or a positive error number, as pthread_create().
 */
static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	static const int crash[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS };
	sigset_t all, old;
	unsigned i;
	int ret;

	sigfillset(&all);
	for (i = 0; i < PK__ARRAY_SIZE(crash); i++)
		sigdelset(&all, crash[i]);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/* Registry lock held (or the only thread, after fork). */
static int start_printer(struct pk_console *c)
{
	struct printer *p = atomic_load_explicit(&printers[c->slot], memory_order_relaxed);
	int ret;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		atomic_store_explicit(&printers[c->slot], p, memory_order_release);
	}
	p->con = c;
	atomic_store_explicit(&p->stop, 0, memory_order_relaxed);
	atomic_store_explicit(&p->sleeping, 0, memory_order_relaxed);
	ret = start_thread(&p->thread, printer_main, p);
	if (ret)
		return -ret;
	p->running = true;
	return 0;
}

/* Stop @c's printer, waiting up to 5 s.  0, or -EBUSY: stuck in write(). */
static int stop_printer(struct pk_console *c)
{
	struct printer *p = atomic_load_explicit(&printers[c->slot], memory_order_relaxed);
	struct timespec until;

	if (!p || !p->running || p->con != c)
		return 0;
	atomic_store_explicit(&p->stop, 1, memory_order_release);
	atomic_fetch_add_explicit(&p->wake, 1, memory_order_release);
	pk__futex_wake(&p->wake, 1);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	p->running = false;
	if (pthread_timedjoin_np(p->thread, NULL, &until)) {
		/* Stuck inside the driver's write(): leave it its own struct. */
		pthread_detach(p->thread);
		if (nr_given_up < PK__ARRAY_SIZE(given_up))
			given_up[nr_given_up++] = p;	/* kept, and reachable */
		atomic_store_explicit(&printers[c->slot], NULL, memory_order_release);
		return -EBUSY;
	}
	return 0;
}

static int hook_added(struct pk_console *c)
{
	int ret;

	if (mode_of() != PK_MODE_THREAD ||
	    atomic_load_explicit(&F.threads_stopped, memory_order_relaxed))
		return 0;
	ret = start_printer(c);
	if (ret < 0)
		no_printer(c, -ret);	/* registered all the same, printed by the callers */
	return 0;
}

static int hook_removing(struct pk_console *c)
{
	return stop_printer(c);
}

static void hook_kick(void)
{
	pk__flush_kick();
}

static const struct pk__con_hooks hooks = { hook_added, hook_removing, hook_kick };

/* ---- direct printing: emergency, panic, crash ---- */

static struct pk__con_scratch takeover_scratch;
static struct pk__con_pos takeover_pos;
static struct pk_ring_rec takeover_recs[PK_LANES_MAX];

/* How long a panic has waited for records in progress, in all. */
struct panic_wait {
	uint64_t spent_ns;
};

/*
 * Print what is pending on @c from this thread at @prio, up to @target
 * (panic: UINT64_MAX, everything; other threads no longer store then).
 * An emergency printer stops at the records that were stored when it
 * began: under a flood faster than the console it would otherwise print
 * for ever, the legacy pathology.  Return: records printed.
 *
 * After a hostile takeover (or when this thread interrupted itself while
 * owning the console) the old owner may come back to the console's
 * position and buffers at any moment: we use private ones, starting where
 * the console last published its progress, and never touch its own.
 *
 * Panic never stops at a record in progress: this thread's own
 * interrupted record is skipped at once (it can never be finished), other
 * threads' are waited for PANIC_STALL_NS each and PANIC_STALL_ALL_NS in
 * all, then skipped; the console reports them as dropped.
 *
 * Two rules the SPIN model (verify/conlock.pml, model 2) found necessary:
 * stop at a record boundary as soon as the console is no longer ours (a
 * panic took it by force), and after releasing it, look again: a caller
 * that stored a record while we held the console found it owned and left
 * the record to us.  That re-check pairs with pending_any() in a caller
 * (fl:C): our seq_cst release then seq_cst look at the store, against its
 * seq_cst commit then seq_cst look at the owner; one of us sees the other.
 */
static int direct_one(struct pk_console *c, uint32_t tid, enum pk__prio prio,
		      const struct pk__spos *target, struct panic_wait *pw)
{
	bool panic = prio == PK_PRIO_PANIC;
	struct timespec nap = { 0, 100000 };
	struct pk__con_scratch *scratch;
	struct pk__con_pos *pos;
	bool unsafe, atomic, released;
	struct pk__spos next;
	enum pk__emit r;
	unsigned l;
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
		scratch = NULL;
		pos = &c->pos;
		if (unsafe) {
			scratch = &takeover_scratch;
			pos = &takeover_pos;
			pos->mr.buf = takeover_recs;
			pk__con_next(c, &next);
			pk__con_pos_init(pos, &next, true);
		}
		if (panic) {
			for (l = 0; l < pk__st.lanes.n; l++) {
				pos->mr.l[l].rd.skip_seq = pk__self_inflight(l);
				pos->mr.l[l].rd.stall_limit_ns =
					pw->spent_ns < PANIC_STALL_ALL_NS ? PANIC_STALL_NS : 0;
			}
		}
		atomic = c->ops->write_atomic != NULL;
		while (pk__own_owner(&c->own) == tid && pk__con_behind(c, target)) {
			r = pk__con_emit(c, pos, scratch, atomic, tid);
			if (r == PK_EMIT_PRINTED)
				printed++;
			if (r == PK_EMIT_PRINTED || r == PK_EMIT_SKIPPED)
				continue;
			if (r == PK_EMIT_LOST || !panic)
				break;
			/* Nothing readable: caught up, or a record in progress. */
			if (!pk__con_behind(c, NULL) || pw->spent_ns >= 4 * PANIC_STALL_ALL_NS)
				break;
			nanosleep(&nap, NULL);
			pw->spent_ns += 100000;
			if (pw->spent_ns >= PANIC_STALL_ALL_NS)
				for (l = 0; l < pk__st.lanes.n; l++)	/* skip the rest at once */
					pos->mr.l[l].rd.stall_limit_ns = 0;
		}
		/* LMM(fl:C) */
		released = ret >= 0 && pk__own_release(&c->own, tid);
	} while (released && !pk__panicking_other(tid) && pk__con_behind(c, target) &&
		 pk__con_pending(c));
	return printed;
}

/*
 * THE CRASH PATH'S CONSOLES
 *
 * A console whose driver faults must not take the crash report from the
 * others.  The thread that crashed inside a driver (pk__self.in_con,
 * set by con_write()) prints every other console first, and that one
 * last, and only if its write_atomic() is another function than the one
 * that faulted (a crash in write() of a driver whose write_atomic() is
 * separate still gets the report there); the same function would most
 * likely fault, or wait for ever on whatever the fault left held.  Every
 * console's output in the crash path runs under a sigsetjmp() guard: a
 * fault inside it reaches the crash handler again on this thread (the
 * handler unblocks the crash signals first; a fault while its signal is
 * blocked kills at once), which siglongjmp()s back here; that console is
 * marked dead and the report goes on with the next.
 *
 * Leaving a driver by siglongjmp() is safe because nothing of it is ever
 * called again in this process, which is about to die: whatever state it
 * was changing (its own, a console position, the console's ownership,
 * which the panicking thread holds) is abandoned, never read back.  The
 * signal mask is restored by siglongjmp() (sigsetjmp(.., 1)) to the one the
 * guard was set with.  The state the thread itself keeps (in_console,
 * in_con) is put back by hand.  Only the panicking thread runs this, so
 * the jump buffer and the set of dead consoles are plain statics.
 */
sigjmp_buf pk__panic_jmp;
volatile sig_atomic_t pk__panic_jmp_armed;
static const void *panic_skip;		/* the console the crash happened in */
static bool panic_skip_atomic;		/* ... in its write_atomic() */
static unsigned panic_dead;		/* bit i: console slot i is left out */
_Static_assert(PK_MAX_CONSOLES <= 32, "panic_dead has a bit per console");

void pk__flush_panic_skip(const void *con, bool atomic)
{
	panic_skip = con;
	panic_skip_atomic = atomic;
}

/*
 * May the crash path use console @c in slot @i now?  @last: the second
 * pass, for the console the crash happened in alone.
 */
static bool panic_usable(int i, const struct pk_console *c, bool last)
{
	if (panic_dead >> i & 1)
		return false;
	if (c != panic_skip)
		return !last;
	return last && !panic_skip_atomic && c->ops->write_atomic &&
	       c->ops->write_atomic != c->ops->write;
}

/* Console @c in slot @i faulted in the crash path: leave it out. */
static void panic_faulted(int i, struct pk_console *c)
{
	panic_dead |= 1u << i;
	atomic_fetch_add_explicit(&c->write_errors, 1, memory_order_relaxed);
}

/* direct_one() for a panic, under the guard; @last: the second pass. */
static int panic_one(int i, struct pk_console *c, uint32_t tid, const struct pk__spos *target,
		     struct panic_wait *pw, bool last)
{
	int in_console = pk__self.in_console;
	const void *in_con = pk__self.in_con;
	bool in_con_atomic = pk__self.in_con_atomic;
	int printed;

	if (!panic_usable(i, c, last))
		return 0;
	if (sigsetjmp(pk__panic_jmp, 1)) {
		pk__self.in_console = in_console;
		pk__self.in_con = in_con;
		pk__self.in_con_atomic = in_con_atomic;
		panic_faulted(i, c);
		return 0;
	}
	pk__panic_jmp_armed = 1;
	printed = direct_one(c, tid, PK_PRIO_PANIC, target, pw);
	pk__panic_jmp_armed = 0;
	return printed;
}

int pk__flush_direct(enum pk__prio prio)
{
	uint32_t tid = pk__tid();
	bool panic = prio == PK_PRIO_PANIC;
	struct pk__spos heads;
	const struct pk__spos *target = &all_seqs;
	struct panic_wait pw = { 0 };
	struct pk_console *c;
	int i, pass, printed = 0;

	if (!panic) {
		pk__store_heads(&heads);
		target = &heads;
	}
	/* A panic's second pass: the console the crash happened in, last. */
	for (pass = 0; pass < (panic ? 2 : 1); pass++) {
		for (i = 0; i < PK_MAX_CONSOLES; i++) {
			c = pk__con_get(i);
			if (!c)
				continue;
			if (panic)
				printed += panic_one(i, c, tid, target, &pw, pass == 1);
			else
				printed += direct_one(c, tid, prio, target, &pw);
			pk__con_put(i);
		}
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

bool pk__flush_seqs_intact(unsigned lane, uint64_t first, uint64_t last)
{
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint64_t want = first;

	if (lane >= pk__st.lanes.n)
		return false;
	pk__ring_reader_init(&rd, pk__lane(lane), false);
	rd.next = first;
	rd.stall_limit_ns = 0;
	while (want <= last && pk__ring_read(&rd, &rec) == 1 && rec.seq == want)
		want++;
	return want > last;
}

/*
 * All of @buf to console @c in slot @i with write_atomic(), under the
 * crash path's guard; @last: the second pass.
 */
static void write_all_one(int i, struct pk_console *c, const char *buf, size_t len, bool last)
{
	const void *in_con = pk__self.in_con;
	bool in_con_atomic = pk__self.in_con_atomic;
	size_t done;
	long n;

	if (!c->ops->write_atomic || !panic_usable(i, c, last))
		return;
	if (sigsetjmp(pk__panic_jmp, 1)) {
		pk__self.in_con = in_con;
		pk__self.in_con_atomic = in_con_atomic;
		panic_faulted(i, c);
		return;
	}
	pk__panic_jmp_armed = 1;
	pk__self.in_con = c;
	pk__self.in_con_atomic = true;
	for (done = 0; done < len; done += (size_t)n) {
		n = c->ops->write_atomic(c->ctx, buf + done, len - done);
		if (n <= 0)
			break;
	}
	pk__self.in_con = in_con;
	pk__self.in_con_atomic = in_con_atomic;
	pk__panic_jmp_armed = 0;
}

void pk__flush_write_all(const char *buf, size_t len)
{
	struct pk_console *c;
	int i, pass;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < PK_MAX_CONSOLES; i++) {
			c = pk__con_get(i);
			if (!c)
				continue;
			write_all_one(i, c, buf, len, pass == 1);
			pk__con_put(i);
		}
	}
}

/* ---- the entry points ---- */

/* Is @seq of @lane lag_limit or more ahead of the slowest console there (fl:E)? */
static bool lagging(unsigned lane, uint64_t seq)
{
	/* LMM(fl:E) */
	uint64_t low = atomic_load_explicit(&F.ln[lane].low_water, memory_order_relaxed);

	return seq > low &&
	       seq - low >= atomic_load_explicit(&F.lag_limit, memory_order_relaxed);
}

/*
 * Must a caller whose record no console prints take part anyway?  At a
 * stall, only if a printable record waits behind it (fl:D, fl:J): two
 * filtered writers would otherwise hand the console lock back and forth
 * on every record, each leaving a stall at the other's record in progress.
 */
static bool must_take_part(unsigned lane, uint64_t seq)
{
	/* LMM(fl:D) */
	if (atomic_load_explicit(&F.ln[lane].stall_seq, memory_order_seq_cst) <= seq &&
	    (printable_pending() || !retried()))
		return true;
	return lagging(lane, seq);
}

/*
 * A filtered record stored lag_limit or more ahead of a console: its
 * writer passes over filtered records on that console itself, a batch at
 * a time under the console's ownership, until the console is within half
 * the limit of @seq, its next record is one to print (or a gap to
 * report: both left to the mode's printers), or HELP_BATCHES batches.
 * A console less than twice the limit behind gets one batch from each
 * such writer: the next writer to cross the limit passes the next one
 * over, so every writer pays about one record passed for one stored, a
 * call at most one batch (PK__CON_HELP_BATCH records).  Passing the
 * console down to half the limit in one call made one call in 250 take
 * 3 to 5 us (p99.9 of a store-only pk_info() with a filtering console
 * 3.0-4.7 us, against 0.5 us without the console).  A batch is 64
 * records: each takes the console's ownership word, which two writers on
 * two lanes pass between their CPUs, and passing a record over reads one
 * word of the lane's own table (ringbuf.c, OWN FILTERED SKIP).  Batches
 * of 16 cost two such writers 12 % of their aggregate rate.  Far behind,
 * a call passes over at most HELP_BATCHES batches: 256 records.  The
 * rounds in which the console did not move (its next record is one to
 * print: nudged, then a yield) are counted apart, up to HELP_HELD: they
 * are how long the flood's writer holds back while a printer comes to
 * that record, and the record after it, not yet copied, survives only
 * as long as the flood leaves it.  Counted as batches (4 rounds, not
 * 16), they let a thread-mode flood in a 16 KiB store overwrite 6 to 10
 * times as many printable records (counted dropped).
 * The flood's producers pay for the flood, in every mode, as every
 * caller of Linux's printk() takes part in console_unlock(), suppressed
 * records included; otherwise the one thread that prints (a holder, a
 * printer thread) passes over them at its share of the CPU, falls behind
 * the producers, and a printable record behind the flood waits (or is
 * overwritten) meanwhile.
 *
 * A console owned by someone else (the holder or printer at a record, a
 * helper), less than twice the limit behind and with its next record
 * less than a quarter of the data ring behind the head, is left to its
 * owner: the next call looks again.  Further behind, it is given a few
 * yields: an owner preempted at a record runs then, and the flood's
 * producers hold back.  Any context but a console's write().
 */
#define HELP_BATCHES	4
#define HELP_HELD	16
#define HELP_STALL_NS	(50 * 1000000ull)	/* its owner did not move: give up */
#define HELP_WAIT_NS	(100 * 1000000ull)	/* in all */

/* Have @c's next record printed (it is one to print, or a gap to report). */
static void nudge(struct pk_console *c, uint32_t tid)
{
	struct stint st = { mode_now() == PK_MODE_HANDOFF, 0, &all_seqs, 0 };

	if (mode_now() == PK_MODE_THREAD) {
		wake_printer(atomic_load_explicit(&printers[c->slot], memory_order_acquire));
	} else if (pk__cl_trylock(&F.lock, tid, false)) {
		st.budget_ns = st.handoff && rescue_on() ? budget_now() : 0;
		console_unlock(&st);
	}
}

static void help_one(struct pk_console *c, unsigned lane, uint64_t seq, uint32_t tid)
{
	_Atomic uint64_t *stuck = &F.help_stuck[c->slot];
	uint64_t pos, last = PK__NO_SEQ, t0 = 0, t_moved = 0, now, limit;
	unsigned batches = 0, held = 0;

	for (;;) {
		pos = atomic_load_explicit(&c->lp[lane].next_seq, memory_order_relaxed);
		/* LMM(fl:E) */
		limit = atomic_load_explicit(&F.lag_limit, memory_order_relaxed);
		if (pos >= seq || batches >= HELP_BATCHES || held >= HELP_HELD ||
		    seq - pos < limit / 2 || ((batches || held) && seq - pos < 2 * limit))
			return;
		if (pk__own_try(&c->own, tid)) {
			if (pk__con_skip_filtered(c, lane, tid)) {
				batches++;
				pk__own_release(&c->own, tid);
				continue;
			}
			held++;
			/*
			 * A record to print, a gap, or one in progress.  LMM(fl:C):
			 * our seq_cst release, then the lock (seq_cst) in
			 * nudge(), against a holder's unlock, then its look at
			 * the owner (seq_cst, pending_any()).
			 */
			pk__own_release(&c->own, tid);
			if (pk__con_pending(c))
				nudge(c, tid);
		} else if (pk__own_owner(&c->own) == tid) {
			/*
			 * Owned by the code this signal handler interrupted
			 * (a helper's batch, a holder at a record): it cannot
			 * move until the handler returns, so waiting only
			 * stalled the handler HELP_STALL_NS.
			 */
			return;
		} else if (seq - pos < 2 * limit &&
			   pk__ring_data_lag(pk__lane(lane), pos) < pk__lane(lane)->data_size / 4) {
			/*
			 * Owned by another writer's batch or by a printer, and
			 * the console's next record is well inside the data
			 * ring (lag_limit counts records: 2 * limit records of
			 * 1 KiB fill a whole ring): nothing is at risk yet, and
			 * this writer's next call looks again.  A yield here
			 * cost two writers on two lanes 1-3 us whenever one
			 * crossed the limit during the other's batch.
			 */
			return;
		}
		/* Wait while its owner moves it: the flood's producers hold back. */
		/* LMM(fl:I) */
		if (atomic_load_explicit(stuck, memory_order_relaxed) == pos + 1)
			return;	/* it has not moved since one of us gave up */
		now = pk__now_ns();
		if (pos != last) {
			last = pos;
			t_moved = now;
			if (!t0)
				t0 = now;
		} else if (now - t_moved >= HELP_STALL_NS) {
			atomic_store_explicit(stuck, pos + 1, memory_order_relaxed);
			return;
		}
		if (now - t0 >= HELP_WAIT_NS)
			return;
		sched_yield();
	}
}

static void help_skip(unsigned lane, uint64_t seq, uint32_t tid)
{
	uint64_t min = UINT64_MAX, v;
	uint32_t m = pk__con_slots();
	struct pk_console *c;
	int i;

	pk__con_each_slot(i, m) {
		c = pk__con_get(i);
		if (!c)
			continue;
		help_one(c, lane, seq, tid);
		v = atomic_load_explicit(&c->lp[lane].next_seq, memory_order_relaxed);
		if (v < min)
			min = v;
		pk__con_put(i);
	}
	/*
	 * This lane's low water only, read while each console was pinned:
	 * the other lanes' writers keep theirs (a store to their line would
	 * take it from them), and an unchanged one is not stored.
	 */
	/* LMM(fl:E) */
	if (min != UINT64_MAX &&
	    atomic_load_explicit(&F.ln[lane].low_water, memory_order_relaxed) != min)
		atomic_store_explicit(&F.ln[lane].low_water, min, memory_order_relaxed);
	/*
	 * A stall every console has passed is over: cleared here too, since
	 * in a filtered flood no holder may come by to clear it (a new stall
	 * is at some console's position, at or past the slowest one read).
	 */
	stall_clear(lane, min);
}

static void print_as_mode(uint32_t tid)
{
	enum pk__cl_result r;
	struct stint st = { false, 0, &all_seqs, 0 };

	switch (mode_now()) {
	case PK_MODE_THREAD:
		wake_printers();
		return;
	case PK_MODE_LEGACY:
		r = pk__cl_lock_legacy(&F.lock, tid);
		if (r == PK_CL_OWNER)
			console_unlock(&st);
		return;
	case PK_MODE_HANDOFF:
	default:
		r = pk__cl_lock_spinning(&F.lock, tid, SPIN_NS, WAIT_NS);
		st.handoff = true;
		st.budget_ns = rescue_on() ? budget_now() : 0;
		if (r == PK_CL_OWNER)
			console_unlock(&st);
		return;
	}
}

void pk__flush_after_store(int level, unsigned lane, uint64_t seq)
{
	int cancel;

	if (!pk__con_count())
		return;
	if (pk__panicking())
		return;		/* the panicking thread prints everything */
	if (level < pk__con_max_loglevel())
		note_printable(lane, seq);
	if (pk__self.in_console) {
		/*
		 * Stored from inside a console's write(): printed later, by
		 * another call chain (the holder leaves it to the rescue
		 * thread; printer threads go on anyway).
		 */
		if (pk__self.recurse_seq == PK__NO_SEQ ||
		    (lane == pk__self.recurse_lane && seq < pk__self.recurse_seq)) {
			pk__self.recurse_lane = lane;
			pk__self.recurse_seq = seq;
		}
		if (mode_now() == PK_MODE_THREAD)
			wake_printers();
		return;
	}
	if (level >= pk__con_max_loglevel() && !must_take_part(lane, seq))
		return;		/* no console prints it: nothing to do now */
	/* A cancelled thread must never leave a console or the lock held. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	if (level >= pk__con_max_loglevel()) {
		if (lagging(lane, seq)) {
			help_skip(lane, seq, pk__tid());
			/*
			 * LMM(fl:H): our seq_cst releases of the consoles, then
			 * seq_cst looks at the owners and the store; a holder
			 * that found a console ours unlocks (seq_cst) and looks
			 * at the owners (seq_cst).  Either it saw the console
			 * free, or we see what is left to print.
			 */
			if (!printable_pending() && retried())
				goto out;
		}
	}
	if (pk__self.emergency)
		pk__flush_direct(PK_PRIO_EMERGENCY);
	else if (level >= pk__con_max_loglevel())
		/*
		 * Takes the lock only if it is free, never as the waiter: a
		 * flood's writer put to sleep as the waiter is handed the lock
		 * at the next record printed and holds it, not running, while
		 * whatever follows waits.  Nothing rests on it waiting: a
		 * caller that finds the lock held may leave its record to the
		 * holder (cl:E, fl:D; the SPIN model's callers may all do so).
		 */
		pk__flush_kick();
	else
		print_as_mode(pk__tid());
	/* LMM(fl:G) */
	if (atomic_load_explicit(&exit_sync, memory_order_seq_cst) && !pk__self.printer &&
	    !pk__cl_held_by(&F.lock, pk__tid())) {
		struct pk__spos mine = { { 0 } };

		mine.s[lane] = seq + 1;
		flush_until(&mine, EXIT_SYNC_MS, 0);
	}
out:
	pthread_setcancelstate(cancel, NULL);
}

void pk__flush_kick(void)
{
	int cancel;

	if (pk__panicking() || pk__self.in_console)
		return;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	if (mode_now() == PK_MODE_THREAD) {
		wake_printers();
	} else if (pk__cl_trylock(&F.lock, pk__tid(), false)) {
		struct stint st = { mode_now() == PK_MODE_HANDOFF, 0, &all_seqs, 0 };

		st.budget_ns = st.handoff && rescue_on() ? budget_now() : 0;
		console_unlock(&st);
	}
	pthread_setcancelstate(cancel, NULL);
}

int pk__flush_max_loglevel(void)
{
	return pk__con_max_loglevel();
}

/* Have all consoles printed (or skipped) every record before @target? */
static bool caught_up(const struct pk__spos *target)
{
	return !each_console(con_behind, (uint64_t)(uintptr_t)target);
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
		sum += pk__con_progress(c);
		pk__con_put(i);
	}
	return sum;
}

/*
 * TAKING OVER A STALLED FLUSH
 *
 * In handoff and legacy modes one holder of the console lock prints every
 * console; a holder stuck inside one console's write() (a driver that
 * blocks for good), or parked in a signal handler, stops them all, and
 * no caller waits for it twice (conlock.c, PK_CL_STUCK).  A flush that
 * has seen no progress for TAKEOVER_MS (pk_flush(), the exit flush) then
 * prints as an emergency section does (pk__flush_direct()): each console
 * is taken at a record boundary, never from inside its owner's write(),
 * so every console but the stuck one is printed.  What the stuck one has
 * not printed is then said in-band, as an alert record on the others:
 * once per console each time it stalls at another place.
 */
static uint64_t stuck_said[PK_MAX_CONSOLES];	/* next_seq + 1 when last said */
static pthread_mutex_t stuck_lock = PTHREAD_MUTEX_INITIALIZER;

/* Has every console behind @target an owner stuck inside its write()? */
static uint64_t con_behind_free(struct pk_console *c, uint64_t target)
{
	return pk__con_behind(c, (const struct pk__spos *)(uintptr_t)target) &&
	       !pk__own_owner(&c->own);
}

/* The records @c has yet to account for before @target, over all lanes. */
static uint64_t behind_by(struct pk_console *c, const struct pk__spos *target)
{
	uint64_t n = 0, pos;
	unsigned l;

	for (l = 0; l < pk__st.lanes.n; l++) {
		pos = atomic_load_explicit(&c->lp[l].next_seq, memory_order_relaxed);
		if (pos < target->s[l])
			n += target->s[l] - pos;
	}
	return n;
}

static void takeover(const struct pk__spos *target, unsigned stalled_ms)
{
	struct {
		char name[64];
		uint64_t n;
	} stuck[PK_MAX_CONSOLES];
	struct pk_console *c;
	uint64_t pos;
	int i, k = 0;

	pk__flush_direct(PK_PRIO_EMERGENCY);
	pthread_mutex_lock(&stuck_lock);
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		pos = pk__con_progress(c);
		if (behind_by(c, target) && pk__own_owner(&c->own) && stuck_said[i] != pos + 1) {
			stuck_said[i] = pos + 1;
			snprintf(stuck[k].name, sizeof(stuck[k].name), "%s", c->name ? c->name : "?");
			stuck[k++].n = behind_by(c, target);
		}
		pk__con_put(i);
	}
	pthread_mutex_unlock(&stuck_lock);
	/* Stored and printed at once (emergency) on every console that can be taken. */
	pk_emergency_enter();
	for (i = 0; i < k; i++)
		pk__front_printk(PK_ALERT, "** console \"%s\" is stuck in write() (no progress for %u ms): "
			  "up to %llu records not printed on it **\n", stuck[i].name, stalled_ms,
			  (unsigned long long)stuck[i].n);
	pk_emergency_exit();
}

/*
 * Wait until every console reached @target, printing like any holder
 * (handing over to a waiter, passing the rest on at the deadline).
 * @timeout_ms < 0: no limit; @stall_ms > 0: give up after that long
 * without progress; @takeover_ms > 0: take over after that long without
 * progress (takeover()), and with @leave_stuck return once the consoles
 * still behind are those stuck in write().  Return: 0 or -ETIMEDOUT.
 */
static int flush_until_ex(const struct pk__spos *target, int timeout_ms, int stall_ms,
			  int takeover_ms, bool leave_stuck)
{
	struct timespec nap = { 0, 500000 };
	uint64_t t0 = pk__now_ns(), last_t = t0, last_p = progress_sum(), p, now;
	uint64_t deadline = timeout_ms >= 0 ? t0 + (uint64_t)timeout_ms * 1000000ull : 0;
	uint32_t tid = pk__tid();
	bool took_over = false;
	int cancel, ret;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	for (;;) {
		if (caught_up(target)) {
			ret = 0;
			break;
		}
		if (mode_now() == PK_MODE_THREAD || pk__panicking()) {
			wake_printers();
		} else if (pk__cl_trylock(&F.lock, tid, false)) {
			struct stint st = { mode_now() == PK_MODE_HANDOFF, 0, target, deadline };

			console_unlock(&st);
		}
		if (caught_up(target)) {
			ret = 0;
			break;
		}
		now = pk__now_ns();
		p = progress_sum();
		if (p != last_p) {
			last_p = p;
			last_t = now;
			took_over = false;	/* it moved: a later stall is another one */
		} else if (now - last_t >= DEAD_OWNER_NS && !pk__panicking() &&
			   reap_dead(tid, true)) {
			struct stint st = { mode_now() == PK_MODE_HANDOFF, 0, target, deadline };

			console_unlock(&st);
			continue;
		}
		ret = -ETIMEDOUT;
		if (deadline && now >= deadline)
			break;
		if (stall_ms > 0 && now - last_t >= (uint64_t)stall_ms * 1000000ull)
			break;
		if (takeover_ms > 0 && !took_over &&
		    now - last_t >= (uint64_t)takeover_ms * 1000000ull) {
			took_over = true;
			takeover(target, (unsigned)((now - last_t) / 1000000ull));
			if (caught_up(target)) {
				ret = 0;
				break;
			}
			if (leave_stuck && !each_console(con_behind_free, (uint64_t)(uintptr_t)target))
				break;
			last_p = progress_sum();
			last_t = pk__now_ns();
			continue;
		}
		nanosleep(&nap, NULL);
	}
	pthread_setcancelstate(cancel, NULL);
	return ret;
}

static int flush_until(const struct pk__spos *target, int timeout_ms, int stall_ms)
{
	return flush_until_ex(target, timeout_ms, stall_ms, 0, false);
}

int pk_flush(int timeout_ms)
{
	struct pk__spos heads;
	int ret = pk__ensure_init();

	if (ret < 0)
		return ret == -ENODEV ? 0 : ret;
	if (pk__self.in_console || pk__cl_held_by(&F.lock, pk__tid()))
		return -EDEADLK;	/* called from inside a console write */
	/* pk_init() may be changing the store: wait until it is done. */
	while (!pk__gate_enter()) {
		ret = pk__ensure_init();
		if (ret < 0)
			return ret == -ENODEV ? 0 : ret;
	}
	/*
	 * A first call that lost the race with pk_init(): its early records
	 * move into the store in use, inside the gate (a switch must not copy
	 * and release that store under the migration).
	 */
	pk__early_drain();
	pk__store_finalize_last();
	pk__store_heads(&heads);
	ret = flush_until_ex(&heads, timeout_ms, 0, TAKEOVER_MS, false);
	pk__gate_exit();
	return ret;
}

static bool exit_registered;
static _Atomic bool exit_flushed;

/*
 * The process exits while another thread's initialisation has not
 * finished within EXIT_INIT_WAIT_MS: what was stored meanwhile is in the
 * early store, and no console exists.  Standard error, as a panic before
 * initialisation does.
 */
static void exit_early_raw(void)
{
	static const char note[] = "libprintk: exiting while another thread was still "
				   "initialising; records stored meanwhile:\n";

	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) != PK__INITIALIZING ||
	    !pk__early_pending())
		return;
	if (write(STDERR_FILENO, note, sizeof(note) - 1) < 0)
		return;
	pk__early_print_raw(STDERR_FILENO);
}

/*
 * The exit flush (atexit(), or the library's destructor when the process
 * exits before the first initialisation could register it): once.
 */
static void exit_flush(void)
{
	struct pk__spos heads;

	if (atomic_exchange_explicit(&exit_flushed, true, memory_order_relaxed))
		return;
	/* A first pk_printk() on another thread may be initialising: wait for it. */
	if (!pk__init_settle(EXIT_INIT_WAIT_MS)) {
		exit_early_raw();
		return;
	}
	if (pk__self.in_console || pk__cl_held_by(&F.lock, pk__tid()))
		return;
	/* A straggler of the first call's race, moved inside the gate (pk_flush()). */
	if (pk__gate_enter()) {
		pk__early_drain();
		pk__gate_exit();
	}
	pk__store_finalize_last();
	/*
	 * While the consoles make progress, wait, but not for ever: a console
	 * that logs on every write, or a storm from threads still running,
	 * must not keep the process from exiting.  A console stuck in
	 * write() is left once the others are printed (takeover()).
	 */
	pk__store_heads(&heads);
	flush_until_ex(&heads, EXIT_DEADLINE_MS, EXIT_STALL_MS, TAKEOVER_MS, true);
}

static void stop_rescue(void)
{
	struct timespec until;

	if (!rescue_on())
		return;
	atomic_store_explicit(&F.rescue_stop, 1, memory_order_release);
	atomic_fetch_add_explicit(&F.rescue_wake, 1, memory_order_release);
	pk__futex_wake(&F.rescue_wake, 1);
	atomic_store_explicit(&F.rescue_running, false, memory_order_relaxed);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	/* It ends its stint at the next record; a write() stuck for good is left be. */
	if (pthread_timedjoin_np(F.rescue_thread, NULL, &until))
		pthread_detach(F.rescue_thread);
}

/*
 * The exit's flushes ran out of time with records left to print (a slow
 * console, which in handoff and legacy modes also paces the others, or
 * threads still logging): each console behind says, with one drop
 * notice, how many it leaves.  They were neither printed nor counted.  A
 * console another thread owns (stuck in write()) is left: the others
 * said so already.
 */
static void give_up_unprinted(void)
{
	struct pk__spos head;
	uint32_t tid = pk__tid();
	struct pk_console *c;
	int i;

	pk__store_heads(&head);
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		if (pk__con_behind(c, &head) && pk__own_try(&c->own, tid)) {
			pk__con_give_up(c, &head, tid);
			pk__own_release(&c->own, tid);
		}
		pk__con_put(i);
	}
}

/*
 * The library is being unloaded (dlclose of a plugin that links it
 * statically) or the process is exiting: no thread of ours may run its
 * code any more.  Callers print for themselves from now on.
 */
__attribute__((destructor)) static void flush_fini(void)
{
	struct pk__spos heads;
	struct pk_console *c;
	bool at_exit;
	int i;

	/*
	 * Another thread's first initialisation still under way (main()
	 * returned meanwhile): it may not have registered the exit flush yet.
	 */
	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__INITIALIZING) {
		if (!pk__init_settle(EXIT_INIT_WAIT_MS)) {
			exit_early_raw();
			return;
		}
		if (!(pk__g.cfg.flags & PK_CFG_NO_ATEXIT))
			exit_flush();
	}

	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__UNINIT &&
	    pk__early_pending()) {
		/*
		 * Every record so far came from a signal handler (or before
		 * the library could initialise): exiting is the safe point.
		 */
		struct pk_config cfg;

		pk_config_init(&cfg);
		cfg.flags |= PK_CFG_NO_ATEXIT;
		if (pk__front_init(&cfg) == 0) {
			pk__store_heads(&heads);
			flush_until(&heads, EXIT_DEADLINE_MS, EXIT_STALL_MS);
		}
	}
	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) != PK__READY)
		return;
	if (pk__self.in_console)
		return;
	at_exit = atomic_load_explicit(&exit_flushed, memory_order_relaxed);
	atomic_store_explicit(&F.threads_stopped, 1, memory_order_relaxed);
	stop_rescue();
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		stop_printer(c);
		pk__con_put(i);
	}
	/*
	 * What the threads left: records stored after the exit flush took its
	 * target (threads still logging), which thread mode's printers would
	 * have printed, or a caller that woke a printer just as it stopped.
	 * From here on callers print their own (threads_stopped).
	 */
	if (at_exit && !pk__cl_held_by(&F.lock, pk__tid()) &&
	    pk__gate_enter()) {
		/* LMM(fl:G) */
		atomic_store_explicit(&exit_sync, true, memory_order_seq_cst);
		atomic_thread_fence(memory_order_seq_cst);
		pk__store_finalize_last();
		pk__store_heads(&heads);
		flush_until_ex(&heads, EXIT_FINAL_MS, EXIT_STALL_MS, TAKEOVER_MS, true);
		give_up_unprinted();
		pk__gate_exit();
	}
}

/* Who owns a console, as the registry asks it (console/consoles.h). */
static const struct pk__con_owner_ops con_owner_ops = {
	.owner = pk__own_owner,
	.reset = pk__own_reset,
};

int pk__flush_init(const struct pk_config *cfg)
{
	const char *spec = cfg->consoles ? cfg->consoles : "stderr";
	uint64_t n;
	unsigned l;
	int ret;

	pk__con_owner_register(&con_owner_ops);
	memset(&F, 0, sizeof(F));
	atomic_store_explicit(&F.mode, cfg->mode, memory_order_relaxed);
	atomic_store_explicit(&F.budget_ns, (uint64_t)cfg->print_budget_us * 1000ull,
			      memory_order_relaxed);
	n = pk__lane(0)->desc_mask + 1;
	atomic_store_explicit(&F.lag_limit, n / 64 > 8 ? n / 64 : 8, memory_order_relaxed);
	for (l = 0; l < pk__st.lanes.n; l++)
		atomic_store_explicit(&F.ln[l].low_water, pk__st.attach_seq[l], memory_order_relaxed);
	stall_reset();
	pk__con_set_hooks(&hooks);
	if (cfg->mode != PK_MODE_THREAD) {
		ret = start_thread(&F.rescue_thread, rescue_main, NULL);
		if (ret)
			no_rescue(ret);	/* set up all the same: callers print */
		else
			atomic_store_explicit(&F.rescue_running, true, memory_order_relaxed);
	}
	if (!(cfg->flags & PK_CFG_NO_CONSOLE))
		pk__console_register_env(spec);
	else
		atomic_store_explicit(&pk__g.consoles_failed, 0, memory_order_relaxed);
	if (!(cfg->flags & PK_CFG_NO_ATEXIT)) {
		if (!exit_registered && atexit(exit_flush) == 0)
			exit_registered = true;
	}
	if (cfg->flags & PK_CFG_CRASH_HANDLER)
		pk_crash_handler_install();
	return 0;
}

static void stop_printer_cb(struct pk_console *c)
{
	stop_printer(c);
}

static int start_errors;

static void start_printer_cb(struct pk_console *c)
{
	struct printer *p = atomic_load_explicit(&printers[c->slot], memory_order_relaxed);
	int ret;

	if (mode_of() != PK_MODE_THREAD || (p && p->running && p->con == c))
		return;		/* running, or fallen back to handoff already (no_printer()) */
	ret = start_printer(c);
	if (ret < 0) {
		no_printer(c, -ret);
		start_errors++;
	}
}

void pk__flush_threads_resume(void)
{
	int ret;

	if (atomic_load_explicit(&F.threads_stopped, memory_order_relaxed))
		return;
	if (mode_of() != PK_MODE_THREAD) {
		if (rescue_on())
			return;
		atomic_store_explicit(&F.rescue_stop, 0, memory_order_relaxed);
		ret = start_thread(&F.rescue_thread, rescue_main, NULL);
		if (ret)
			no_rescue(ret);
		else
			atomic_store_explicit(&F.rescue_running, true, memory_order_relaxed);
		return;
	}
	pk__con_each_locked(start_printer_cb);
}

void pk__flush_stop_threads(void)
{
	int cancel;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	stop_rescue();
	pk__con_each_locked(stop_printer_cb);
	pthread_setcancelstate(cancel, NULL);
}

int pk__flush_reconfigure(const struct pk_config *cfg)
{
	uint64_t n = pk__lane(0)->desc_mask + 1;
	struct pk__spos low;
	unsigned l;
	int ret = 0, cancel;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	/* The store may be another one: its size, and every console's place in it. */
	atomic_store_explicit(&F.lag_limit, n / 64 > 8 ? n / 64 : 8, memory_order_relaxed);
	slowest(&low);
	for (l = 0; l < pk__st.lanes.n; l++)
		atomic_store_explicit(&F.ln[l].low_water,
				      low.s[l] != UINT64_MAX ? low.s[l] : pk__st.attach_seq[l],
				      memory_order_relaxed);
	stall_reset();
	atomic_store_explicit(&F.budget_ns, (uint64_t)cfg->print_budget_us * 1000ull,
			      memory_order_relaxed);
	atomic_store_explicit(&F.mode, cfg->mode, memory_order_relaxed);
	if (!atomic_load_explicit(&F.threads_stopped, memory_order_relaxed)) {
		if (cfg->mode != PK_MODE_THREAD) {
			atomic_store_explicit(&F.rescue_stop, 0, memory_order_relaxed);
			ret = start_thread(&F.rescue_thread, rescue_main, NULL);
			if (ret == 0) {
				atomic_store_explicit(&F.rescue_running, true, memory_order_relaxed);
			} else {
				no_rescue(ret);
				ret = -EAGAIN;
			}
		} else {
			start_errors = 0;
			pk__con_each_locked(start_printer_cb);
			if (start_errors)
				ret = -EAGAIN;
		}
	}
	if (!(cfg->flags & PK_CFG_NO_ATEXIT)) {
		if (!exit_registered && atexit(exit_flush) == 0)
			exit_registered = true;
	}
	if (cfg->flags & PK_CFG_CRASH_HANDLER)
		pk_crash_handler_install();
	pthread_setcancelstate(cancel, NULL);
	/* What the callers stored meanwhile. */
	pk__flush_kick();
	return ret;
}

void pk__flush_shutdown(void)
{
	struct pk__spos heads;

	pk__store_heads(&heads);
	flush_until(&heads, EXIT_DEADLINE_MS, EXIT_STALL_MS);
	stop_rescue();
	pk__con_unregister_all();
	pk__cl_reset(&F.lock);
}

void pk__flush_atfork_prepare(void)
{
	pk__con_atfork_prepare();
	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY)
		pk__store_heads(&F.fork_head);
}

void pk__flush_atfork_parent(void)
{
	pk__con_atfork_parent();
}

void pk__flush_atfork_child(void)
{
	struct pk_console *c;
	struct printer *p;
	bool had_rescue = rescue_on();
	unsigned l;
	int i, ret;

	pk__cl_reset(&F.lock);
	stall_reset();
	/* Threads do not survive fork(): none of the library's runs in the child. */
	atomic_store_explicit(&F.rescue_running, false, memory_order_relaxed);
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		p = atomic_load_explicit(&printers[i], memory_order_relaxed);
		if (p)
			p->running = false;
	}
	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) != PK__READY) {
		/* An initialisation this thread goes on with starts them (pk__flush_threads_resume()). */
		static const struct pk__spos zero;

		pk__con_atfork_child(&zero);
		return;
	}
	/*
	 * The parent prints its own records, those before the fork included:
	 * the child's consoles start at the head as of the fork.
	 */
	pk__con_atfork_child(&F.fork_head);
	for (l = 0; l < pk__st.lanes.n; l++) {
		atomic_store_explicit(&F.ln[l].low_water, F.fork_head.s[l], memory_order_relaxed);
		/*
		 * A private store was copied with the records other threads
		 * were writing; those threads did not survive fork(), so
		 * retire their records.  A shared (file) store is still
		 * written by the parent.
		 */
		if (pk__st.mem_fd < 0)
			pk__ring_recover(pk__lane(l));
		else
			/*
			 * The copy of the own table names the seqs the
			 * parent's threads took up to the fork: from the fork
			 * on they are another process's records, not the
			 * child's to count.
			 */
			pk__ring_own_forget(pk__lane(l), F.fork_head.s[l],
					    pk__ring_next_seq(pk__lane(l)));
	}
#ifdef PK_TSAN
	/*
	 * ThreadSanitizer cannot start threads in the child of a threaded
	 * process: there, callers print for themselves, as after unloading.
	 */
	atomic_store_explicit(&F.threads_stopped, 1, memory_order_relaxed);
	atomic_store_explicit(&F.rescue_running, false, memory_order_relaxed);
#endif
	if (atomic_load_explicit(&F.threads_stopped, memory_order_relaxed))
		return;
	/* Start this process's own. */
	if (had_rescue) {
		atomic_store_explicit(&F.rescue_stop, 0, memory_order_relaxed);
		ret = start_thread(&F.rescue_thread, rescue_main, NULL);
		if (ret)
			no_rescue(ret);
		else
			atomic_store_explicit(&F.rescue_running, true, memory_order_relaxed);
	}
	if (mode_of() != PK_MODE_THREAD)
		return;
	for (i = 0; i < PK_MAX_CONSOLES && mode_of() == PK_MODE_THREAD; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		ret = start_printer(c);
		if (ret < 0)
			no_printer(c, -ret);
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
	st->dead_owners = atomic_load_explicit(&F.lock.dead_takeovers, memory_order_relaxed) +
			  atomic_load_explicit(&F.dead_consoles, memory_order_relaxed);
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
	atomic_store_explicit(&F.lock.dead_takeovers, 0, memory_order_relaxed);
	atomic_store_explicit(&F.dead_consoles, 0, memory_order_relaxed);
	atomic_store_explicit(&F.takeovers, 0, memory_order_relaxed);
	atomic_store_explicit(&F.budget_deferrals, 0, memory_order_relaxed);
	atomic_store_explicit(&F.direct_records, 0, memory_order_relaxed);
	atomic_store_explicit(&F.thread_records, 0, memory_order_relaxed);
	atomic_store_explicit(&F.max_print_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&F.max_call_records, 0, memory_order_relaxed);
	pk__share_reset();
}
