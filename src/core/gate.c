// SPDX-License-Identifier: MIT
/*
 * gate.c - the store gate and the switch word.  Owns the gate counters and
 * slots through which every user of the store in use (pk_printk(),
 * pk_flush(), readers, pk_stats_get()) enters and leaves, the waits of
 * whoever replaces the store (gates_drain) or panics (pk__gates_quiesce),
 * and the switch word that holds callers out while the store is replaced.
 * Knows nothing of what the store holds.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "core/futex.h"

/* A store switch holds callers out while odd (THE SWITCH WORD, below). */
static _Atomic uint32_t switch_word;
static PK__TLS bool in_switch;	/* this thread is switching the store */

/*
 * THE STORE GATE
 *
 * pk_init() may replace the store while other threads call pk_printk().
 * A caller counts itself in a gate (one of GATES cache lines, by thread,
 * so that callers do not share one line) and then checks that the library
 * is READY; pk_init() sets the state to INITIALIZING and then waits for
 * every gate to be empty.
 *   gate:A  the caller's seq_cst increment, then its seq_cst load of the
 *           state, pairs with gate:B, pk_init()'s seq_cst store of the
 *           state, then its seq_cst loads of the gates: either the caller
 *           sees INITIALIZING (and stores into the early store instead), or
 *           pk_init() sees the caller and waits for it.  Without it a
 *           caller could write into a store being unmapped.
 *   gate:C  the caller's release decrement pairs with pk_init()'s acquire
 *           load of the gate: the caller's writes to the old store happen
 *           before pk_init() copies it.
 *   gate:D  the same Dekker pattern against a panic: the caller's seq_cst
 *           increment, then vprintk()'s seq_cst load of pk__panic_tid,
 *           pairs with panic_begin()'s seq_cst compare-and-swap of
 *           pk__panic_tid, then pk__gates_quiesce()'s seq_cst loads of the
 *           gates.  Either the caller sees the panic (and stores nothing),
 *           or the panicking thread sees the caller inside and waits for it
 *           (bounded) before it flushes: a record whose pk_printk()
 *           returned success before the process died is printed, even if
 *           its writer was preempted between the panic check and the
 *           store, or between reserving its record and committing it.
 *           With gate:C (release decrement, acquire loads below) the
 *           caller's record is committed before the flush looks for it.
 * pk__self.gate_depth counts this thread's own entries, so that a crash
 * handler interrupting its own thread inside a gate does not wait for
 * itself.  It is raised before the shared increment and lowered after the
 * decrement: a signal between the two sees one entry too many of its own
 * and may miss one other thread that shares the gate (a window of a few
 * instructions, the tid's lookup among them); it never waits for itself.  A fork() inside a gate (a
 * console's write() that forks) keeps the thread's entries in the
 * child, under the gate of its new tid (atfork_child()); a fork() from a
 * signal handler in that same window leaves one entry
 * counted for ever in the child, which only makes a later pk_init() or
 * panic wait its bound.
 *
 * GATE SLOTS.  The two locked instructions of a shared counter (full
 * barriers on x86) measured 13 ns of a 114 ns call.  When the kernel
 * offers membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) and the process
 * registered for it (gates_setup(), the first pk_init()), a thread takes
 * a slot of its own (SLOTS of them, 128 bytes apart, claimed by tid with a
 * compare-and-swap on its first entry) and counts its entries there with
 * plain loads and stores: only the thread and its own signal handlers,
 * which leave the count as they found it, ever write it.  No hardware
 * fence on the caller's side: the waiter's membarrier() is it.
 *   gate:E  the caller's store to its slot, a compiler barrier, then its
 *           load of the state (or of pk__panic_tid, gate:D), against the
 *           waiter's seq_cst store of the state (or CAS of pk__panic_tid),
 *           membarrier(), then its loads of the slots.  membarrier()
 *           makes every thread of the process that runs meanwhile execute
 *           a full barrier (a thread that does not run passes one when it
 *           is switched in), so a caller's compiler barrier acts as a full
 *           one against it: either the caller's load comes after that
 *           barrier and sees the new state, or its store came before and
 *           the waiter's loads, all after membarrier() returned, see it.
 *           The same store-then-load outcome as gate:A.
 *   gate:F  the caller leaves with a release store of its slot's count,
 *           which the waiter's acquire loads pair with, as gate:C.
 * A thread that gets no slot (all taken by live threads), or enters before
 * the library is set up, uses the shared counters; pk__self.gate_by_slot
 * records, entry by entry, which way the thread went in, so that it leaves
 * the same way (a signal handler's entry nests inside its thread's, at
 * the next depth: the depth rises before the bit is written).  A slot
 * whose thread exited is taken over once its count is 0 (its owner no
 * longer exists: tgkill(pid, tid, 0) fails with ESRCH), always by a
 * compare-and-swap of its owner.  PK_GATE=counters, or a kernel without
 * the command, keeps every caller on the shared counters; a membarrier()
 * refused after setup turns the slots off for new callers (slots_wait()).
 */
#define LMM(label)
#define GATES	16
#define SLOTS	256
#define SLOT_PROBES	32
#define DEAD_SLOT_NS	(100 * 1000000ull)	/* a waiter looks up a slot's owner after this */

/* Slots whose thread died inside the gate, freed by slots_wait(). */
static _Atomic uint64_t dead_slots;

/*
 * 128 bytes apart: CPUs fetch lines in aligned pairs, so gates 64 bytes
 * apart in one pair would still move between two threads' cores.
 */
static struct {
	_Alignas(128) _Atomic unsigned long n;
} gates[GATES];

static struct gate_slot {
	_Alignas(128) _Atomic unsigned long n;
	_Atomic uint32_t owner;		/* the tid that claimed it, 0 free */
} slots[SLOTS];

/* Set once, before the library is first READY; cleared only if membarrier() fails later. */
static _Atomic bool gate_fast;
/* Ever set: the waiters read the slots (callers that went in by one may still be inside). */
static _Atomic bool slots_ever;

/*
 * Frees a thread's slot when it exits (gates_setup() creates it).  Set by
 * slot_claim() only when the key is one of the first 32, which glibc
 * keeps in the thread's own block (pthread_setspecific() then only stores
 * a pointer: safe in a signal handler); otherwise the slot waits to be
 * taken over.
 */
static pthread_key_t slot_key;
/*
 * slot_key_made: set (release, after the key exists) by gates_setup() in
 * the first pk_init(), which may still run in another thread when exit()
 * runs the destructor; the destructor's acquire exchange pairs with it,
 * so that it deletes a key that exists, once.
 */
static _Atomic bool slot_key_made;
static _Atomic bool slot_key_ok;

/*
 * Unloaded (dlclose() of an object that links libprintk in, or exit()):
 * no destructor may stay registered in code about to be unmapped.  The
 * slots of threads still alive are then not freed at their exit.
 */
__attribute__((destructor)) static void gates_fini(void)
{
	if (!atomic_exchange_explicit(&slot_key_made, false, memory_order_acquire))
		return;
	atomic_store_explicit(&slot_key_ok, false, memory_order_relaxed);
	pthread_key_delete(slot_key);
}

/*
 * The shared counter this thread uses, chosen by tid on its first entry
 * and kept, also in a fork child: an entry and its exit always use the
 * same one, whatever fork() comes between (atfork_child() counts the
 * thread's entries there).
 */
static unsigned gate_idx(void)
{
	unsigned i = pk__self.gate_idx;

	if (__builtin_expect(!i, 0)) {
		i = pk__tid() % GATES + 1;
		pk__self.gate_idx = i;
	}
	return i - 1;
}

#ifndef MEMBARRIER_CMD_PRIVATE_EXPEDITED
#define MEMBARRIER_CMD_QUERY				0
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED		(1 << 3)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED	(1 << 4)
#endif

static long membarrier_call(int cmd)
{
#ifdef SYS_membarrier
	return syscall(SYS_membarrier, cmd, 0, 0);
#else
	(void)cmd;
	errno = ENOSYS;
	return -1;
#endif
}

/* A thread exits (slot_key's destructor): its slot is free for the next. */
static void slot_release(void *p)
{
	struct gate_slot *s = p;
	uint32_t tid = pk__tid();

	/*
	 * Forget it first: a signal handler that logs from here on claims
	 * another slot (which the next round of destructors frees) instead
	 * of counting in one that may have a new owner already.
	 */
	if (pk__self.gate_slot > 0 && &slots[pk__self.gate_slot - 1] == s)
		pk__self.gate_slot = 0;
	atomic_signal_fence(memory_order_seq_cst);
	/* Release: its last count before the next owner's acquire. */
	if (!atomic_load_explicit(&s->n, memory_order_relaxed))
		atomic_compare_exchange_strong_explicit(&s->owner, &tid, 0, memory_order_release,
							memory_order_relaxed);
}

/* First pk_init(), before the state is first READY: may callers use slots? */
void pk__gates_setup(void)
{
	const char *v = secure_getenv("PK_GATE");
	long cmds;

	if ((v && !strcmp(v, "counters")) || (pk__g.cfg.flags & PK_CFG_GATE_COUNTERS))
		return;
	cmds = membarrier_call(MEMBARRIER_CMD_QUERY);
	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ||
	    membarrier_call(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) < 0)
		return;
	if (pthread_key_create(&slot_key, slot_release) == 0) {
		/* Release, both: slot_claim() and gates_fini() read the key after their acquire. */
		atomic_store_explicit(&slot_key_ok, slot_key < 32, memory_order_release);
		atomic_store_explicit(&slot_key_made, true, memory_order_release);
	}
	/*
	 * Relaxed, both: pk_init()'s release store of READY publishes them to
	 * callers and waiters.  A caller that still reads gate_fast false
	 * takes the counters, and its entry records which way it went.
	 */
	atomic_store_explicit(&slots_ever, true, memory_order_relaxed);
	atomic_store_explicit(&gate_fast, true, memory_order_relaxed);
}

/*
 * Make every caller's slot store visible to the loads that follow
 * (gate:E).  false: the barrier could not be had, and slots cannot be
 * trusted to be seen.
 */
static bool gates_barrier(void)
{
	int e = errno;
	bool ok;

	if (!atomic_load_explicit(&slots_ever, memory_order_relaxed))
		return true;
	ok = membarrier_call(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
	if (!ok && errno == EPERM) {
		/* A child whose fork did not keep the registration. */
		ok = membarrier_call(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
		     membarrier_call(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
	}
	errno = e;
	return ok;
}

/* Does thread @tid of this process no longer exist? */
static bool tid_gone(uint32_t tid)
{
	int e = errno;
	bool gone = syscall(SYS_tgkill, getpid(), (pid_t)tid, 0) < 0 && errno == ESRCH;

	errno = e;
	return gone;
}

/*
 * The first entry of this thread (in this process): claim a slot, a free
 * one first, else one whose thread exited (at most SLOT_PROBES of those
 * looked at, a system call each).  A slot is taken only by a
 * compare-and-swap of its owner, never because it names this tid: a slot
 * of an exited thread whose tid this thread reuses stays as it is until
 * this thread exits (a slot lost, never one shared).  NULL: none.
 */
static __attribute__((noinline)) struct gate_slot *slot_claim(void)
{
	uint32_t tid, gen, cur;
	unsigned i, k, probes;
	int pass, mine;

retry:
	tid = pk__tid();
	gen = pk__self.fork_gen;
	mine = pk__self.gate_slot;
	if (mine < 0 && pk__self.gate_slot_gen == gen)
		return NULL;
	/* Its own still: a fork child's atfork_child() gave it the child's tid. */
	if (mine > 0 && atomic_load_explicit(&slots[mine - 1].owner, memory_order_relaxed) == tid)
		goto publish;
	mine = -1;
	probes = 0;
	for (pass = 0; pass < 2 && mine < 0; pass++) {
		for (k = 0; k < SLOTS; k++) {
			i = (tid + k) % SLOTS;
			cur = atomic_load_explicit(&slots[i].owner, memory_order_relaxed);
			if (cur) {
				if (!pass || atomic_load_explicit(&slots[i].n, memory_order_relaxed))
					continue;
				if (probes++ >= SLOT_PROBES)
					break;
				if (!tid_gone(cur))
					continue;
			}
			/* Acquire: the last count of a thread that left it. */
			if (atomic_compare_exchange_strong_explicit(&slots[i].owner, &cur, tid,
								    memory_order_acquire,
								    memory_order_relaxed)) {
				mine = (int)i + 1;
				break;
			}
		}
	}
	/*
	 * A signal handler that entered a gate meanwhile claimed a slot for
	 * this thread itself: keep that one, give this one back.
	 */
	if (mine > 0 && pk__self.gate_slot > 0 && pk__self.gate_slot != mine &&
	    pk__self.gate_slot_gen == gen &&
	    atomic_load_explicit(&slots[pk__self.gate_slot - 1].owner, memory_order_relaxed) == tid) {
		atomic_store_explicit(&slots[mine - 1].owner, 0, memory_order_release);
		mine = pk__self.gate_slot;
	}
publish:
	pk__self.gate_slot = mine;
	pk__self.gate_slot_gen = gen;
	if (mine > 0 && atomic_load_explicit(&slot_key_ok, memory_order_acquire))
		pthread_setspecific(slot_key, &slots[mine - 1]);
	atomic_signal_fence(memory_order_seq_cst);
	/*
	 * A fork() from a signal handler since gen was read: the child's
	 * atfork_child() freed every slot but the one published then.  Claim
	 * again in the child's terms.
	 */
	if (atomic_load_explicit(&pk__g.fork_gen, memory_order_relaxed) != gen)
		goto retry;
	return mine > 0 ? &slots[mine - 1] : NULL;
}

/* This thread's slot; NULL: none. */
static inline struct gate_slot *my_slot(void)
{
	int i = pk__self.gate_slot;

	/* Relaxed: see pk__tid(). */
	if (__builtin_expect(i > 0 && pk__self.gate_slot_gen ==
					     atomic_load_explicit(&pk__g.fork_gen, memory_order_relaxed),
			     1))
		return &slots[i - 1];
	return slot_claim();
}

/*
 * The way in is chosen and written to bit d of gate_by_slot, then the
 * depth rises, then the count, then the bit is written again: a signal
 * handler that entered before the depth rose nested at depth d too and
 * may have left its own way in bit d.  Between the depth's rise and the
 * count (one instruction) a fork() from a handler counts the entry in the
 * child once too often, as before the slots.
 */
bool pk__gate_enter(void)
{
	unsigned d = pk__self.gate_depth;
	struct gate_slot *s = NULL;
	_Atomic unsigned long *g = NULL;
	uint64_t bit = d < 64 ? 1ull << d : 0;

	if (bit && atomic_load_explicit(&gate_fast, memory_order_relaxed))
		s = my_slot();
	if (!s)
		g = &gates[gate_idx()].n;
	pk__self.gate_by_slot = s ? pk__self.gate_by_slot | bit : pk__self.gate_by_slot & ~bit;
	atomic_signal_fence(memory_order_seq_cst);
	*(volatile unsigned *)&pk__self.gate_depth = d + 1;
	atomic_signal_fence(memory_order_seq_cst);
	if (s) {
		/* LMM(gate:E) */
		atomic_store_explicit(&s->n, atomic_load_explicit(&s->n, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
		pk__self.gate_by_slot |= bit;
		atomic_signal_fence(memory_order_seq_cst);
		if (atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY)
			return true;
		/* LMM(gate:F) */
		atomic_store_explicit(&s->n, atomic_load_explicit(&s->n, memory_order_relaxed) - 1,
				      memory_order_release);
	} else {
		/* LMM(gate:A), LMM(gate:D) */
		atomic_fetch_add_explicit(g, 1, memory_order_seq_cst);
		pk__self.gate_by_slot &= ~bit;
		if (atomic_load_explicit(&pk__g.state, memory_order_seq_cst) == PK__READY)
			return true;
		atomic_fetch_sub_explicit(g, 1, memory_order_release);
	}
	atomic_signal_fence(memory_order_seq_cst);
	*(volatile unsigned *)&pk__self.gate_depth = d;
	return false;
}

void pk__gate_exit(void)
{
	unsigned d = pk__self.gate_depth - 1;
	struct gate_slot *s;

	if (d < 64 && (pk__self.gate_by_slot >> d & 1)) {
		s = &slots[pk__self.gate_slot - 1];
		/* LMM(gate:F) */
		atomic_store_explicit(&s->n, atomic_load_explicit(&s->n, memory_order_relaxed) - 1,
				      memory_order_release);
	} else {
		/* LMM(gate:C) */
		atomic_fetch_sub_explicit(&gates[gate_idx()].n, 1, memory_order_release);
	}
	atomic_signal_fence(memory_order_seq_cst);
	*(volatile unsigned *)&pk__self.gate_depth = d;
}

int pk__gate_slot_self(void)
{
	return pk__self.gate_slot > 0 && pk__self.gate_slot_gen == pk__self.fork_gen
		       ? pk__self.gate_slot - 1 : -1;
}

bool pk__gate_slots_on(void)
{
	return atomic_load_explicit(&gate_fast, memory_order_relaxed);
}

void pk__gate_slots_set(bool on)
{
	atomic_store_explicit(&gate_fast, on, memory_order_relaxed);
}

unsigned long pk__gate_count(void)
{
	unsigned long n = 0;
	unsigned i;

	for (i = 0; i < GATES; i++)
		n += atomic_load_explicit(&gates[i].n, memory_order_relaxed) != 0;
	for (i = 0; i < SLOTS; i++)
		n += atomic_load_explicit(&slots[i].n, memory_order_relaxed) != 0;
	return n;
}

/* Wait until the slots hold no entry but @mine in this thread's own.  false: timed out. */
static bool slots_wait(uint64_t until, unsigned long mine_in_own)
{
	struct timespec nap = { 0, 50000 };
	int own = pk__self.gate_slot_gen == pk__self.fork_gen ? pk__self.gate_slot - 1 : -1;
	uint64_t since = pk__now_ns();
	unsigned i;

	if (!atomic_load_explicit(&slots_ever, memory_order_relaxed))
		return true;
	if (!gates_barrier()) {
		/*
		 * membarrier() refused since setup (a seccomp filter installed
		 * later): callers from now on take the shared counters, and the
		 * slots' stores get a millisecond to show, which is no proof
		 * but all that is left.
		 */
		struct timespec ms1 = { 0, 1000000 };

		atomic_store_explicit(&gate_fast, false, memory_order_relaxed);
		nanosleep(&ms1, NULL);
	}
	for (i = 0; i < SLOTS; i++) {
		unsigned long mine = (int)i == own ? mine_in_own : 0;
		uint64_t now;
		uint32_t owner;

		/* LMM(gate:E), LMM(gate:F) */
		while (atomic_load_explicit(&slots[i].n, memory_order_acquire) > mine) {
			now = pk__now_ns();
			if (now >= until)
				return false;
			/*
			 * Waited DEAD_SLOT_NS (for all the slots together): is
			 * its thread gone (cancelled asynchronously inside the
			 * gate)?  Then it never leaves: its entries are dropped,
			 * and the slot is free for the next thread.  Only its thread ever raises the count,
			 * so none can come after the look-up.  A tid reused by a
			 * new thread reads as alive: we wait as before.
			 */
			owner = atomic_load_explicit(&slots[i].owner, memory_order_relaxed);
			if ((int)i != own && now - since >= DEAD_SLOT_NS && owner &&
			    tid_gone(owner)) {
				atomic_store_explicit(&slots[i].n, 0, memory_order_relaxed);
				atomic_compare_exchange_strong_explicit(&slots[i].owner, &owner, 0,
									memory_order_release,
									memory_order_relaxed);
				atomic_fetch_add_explicit(&dead_slots, 1, memory_order_relaxed);
				break;
			}
			nanosleep(&nap, NULL);
		}
	}
	return true;
}

/* This thread's entries made through its slot, or through the shared counters. */
static unsigned long own_entries(bool by_slot)
{
	unsigned d = pk__self.gate_depth, k;
	unsigned long n = 0;

	for (k = 0; k < d; k++)
		if (k >= 64 ? !by_slot : (bool)(pk__self.gate_by_slot >> k & 1) == by_slot)
			n++;
	return n;
}

bool pk__gates_quiesce(unsigned ms)
{
	struct timespec nap = { 0, 50000 };
	uint64_t until = pk__now_ns() + (uint64_t)ms * 1000000ull;
	unsigned i, own = gate_idx();
	unsigned long mine;

	for (i = 0; i < GATES; i++) {
		mine = i == own ? own_entries(false) : 0;
		/* LMM(gate:D), LMM(gate:C) */
		while (atomic_load_explicit(&gates[i].n, memory_order_seq_cst) > mine) {
			if (pk__now_ns() >= until)
				return false;
			nanosleep(&nap, NULL);
		}
	}
	return slots_wait(until, own_entries(true));
}

/* pk_init(): wait (at most @ms) until no caller is inside the gate. */
bool pk__gates_drain(unsigned ms)
{
	struct timespec nap = { 0, 50000 };
	uint64_t until = pk__now_ns() + (uint64_t)ms * 1000000ull;
	unsigned i;

	for (i = 0; i < GATES; i++) {
		/* LMM(gate:B), LMM(gate:C) */
		while (atomic_load_explicit(&gates[i].n, memory_order_seq_cst)) {
			if (pk__now_ns() >= until)
				return false;
			nanosleep(&nap, NULL);
		}
	}
	return slots_wait(until, 0);
}

/*
 * THE SWITCH WORD
 *
 * A store switch holds callers out for as long as it takes to wait for
 * those inside, copy the records and move the consoles (milliseconds;
 * pk__gates_drain() bounds the wait at 2 s).  A caller that cannot wait
 * stores into the early store meanwhile (64 KiB of text, 2048 records at
 * most), which 200 threads logging at once overflow in a millisecond:
 * so those that can wait, do (switch_wait()), and the early store is left
 * to those that cannot: a signal handler (it may have interrupted this
 * thread inside a gate, or the switch itself), a thread inside a gate or
 * a console's write() (the switch waits for it), the switching thread.
 * switch_word is odd while a switch holds callers out; each switch adds
 * 2 (one at its start, one at its end), and wakes the waiters (futex).
 *   switch:A  the switch's relaxed store of the odd word comes before its
 *             seq_cst store of INITIALIZING (gate:B), a release: a caller
 *             whose acquire (or seq_cst) load of the state in
 *             pk__gate_enter() read INITIALIZING from it then reads the
 *             word odd, or a later value, in switch_wait().
 *   switch:B  the switch's release store of the even word comes after its
 *             release store of READY: a caller that read the even word
 *             with acquire sees READY (or a later state) when it tries
 *             the gate again.  The futex compares the word in the kernel,
 *             so a wake between the load and the sleep is not missed.
 * The wait is bounded (SWITCH_WAIT_NS, well past the switch's own
 * bounds); a caller still held out then stores into the early store, as
 * one that cannot wait does, and what that store loses is counted
 * (early.c, a lost note).
 */
#define SWITCH_WAIT_NS	(5000ull * 1000000ull)

bool pk__switch_pending(void)
{
	/* Relaxed: a hint; a printer that misses it stops at its next look. */
	return atomic_load_explicit(&switch_word, memory_order_relaxed) & 1u;
}

void pk__switch_begin(void)
{
	uint32_t w = atomic_load_explicit(&switch_word, memory_order_relaxed);

	in_switch = true;
	/* LMM(switch:A) */
	atomic_store_explicit(&switch_word, w | 1u, memory_order_relaxed);
}

void pk__switch_end(void)
{
	uint32_t w = atomic_load_explicit(&switch_word, memory_order_relaxed);

	/* LMM(switch:B) */
	atomic_store_explicit(&switch_word, (w | 1u) + 1u, memory_order_release);
	pk__futex_wake(&switch_word, INT_MAX);
	in_switch = false;
}

/*
 * The gate refused this caller: if a store switch holds it out and it
 * can wait, wait for the switch to end (bounded by *@until, set on the
 * first call).  Return: true to try the gate again; false to store into
 * the early store.
 */
bool pk__switch_wait(uint64_t *until, bool (*safe_here)(void))
{
	uint32_t w = atomic_load_explicit(&switch_word, memory_order_acquire);	/* switch:A/B */
	uint64_t now;

	if (!(w & 1u)) {
		/* No switch (any more): the gate may let it in now (switch:B). */
		if (atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY)
			return !*until || pk__now_ns() < *until;
		/*
		 * Not ready, and no switch when the word was read: a switch that
		 * began since then set the state INITIALIZING after its odd word
		 * (switch:A), so the word reads odd now, and this caller waits
		 * for that switch like the others.  Still even: a first
		 * initialisation or pk_shutdown(), where the early store it is.
		 */
		w = atomic_load_explicit(&switch_word, memory_order_acquire);
		if (!(w & 1u))
			return false;
	}
	if (in_switch || pk__self.gate_depth || pk__self.in_console || pk__self.in_printk)
		return false;
	now = pk__now_ns();
	if (!*until) {
		/* Asked once a call: a look at every signal's disposition. */
		if (!safe_here())
			return false;
		*until = now + SWITCH_WAIT_NS;
	}
	if (now >= *until)
		return false;
	pk__futex_wait(&switch_word, w, *until - now);
	return true;
}

/* In a fork child, from the front door's atfork handler (init.c). */
void pk__gate_atfork_child(void)
{
	/*
	 * The other threads, inside the gate or not, did not survive; this
	 * one keeps its own entries (a fork from inside a gate), under its
	 * new tid's gate, where its exits will go.
	 */
	for (unsigned i = 0; i < GATES; i++)
		atomic_store_explicit(&gates[i].n,
				      i == gate_idx() ? own_entries(false) : 0,
				      memory_order_relaxed);
	/* Its slot, if it has one, goes on with its new tid; the others are free. */
	for (int i = 0; i < SLOTS; i++) {
		bool own = pk__self.gate_slot == i + 1;

		atomic_store_explicit(&slots[i].n, own ? own_entries(true) : 0,
				      memory_order_relaxed);
		atomic_store_explicit(&slots[i].owner, own ? pk__tid() : 0, memory_order_relaxed);
	}
	if (pk__self.gate_slot > 0)
		pk__self.gate_slot_gen = pk__self.fork_gen;
	/*
	 * A switch another thread was making did not survive: nobody will
	 * end it, so the child's callers must not wait for it (they store
	 * into the early store, as they did before the switch word).
	 */
	if (!in_switch)
		atomic_store_explicit(&switch_word,
				      (atomic_load_explicit(&switch_word, memory_order_relaxed) + 1u) &
				      ~1u, memory_order_relaxed);
}
