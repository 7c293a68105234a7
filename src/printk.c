// SPDX-License-Identifier: MIT
/*
 * printk.c - the front door: levels, continuation, formatting, storing,
 * then asking the flush mode to print.  Also the library's life cycle
 * (pk_init, lazy init, pk_shutdown) and its counters.
 *
 * pk_vprintk() takes no lock and calls no malloc: the text is formatted by
 * stb_sprintf into a buffer on the caller's stack and stored with the
 * lock-free pk__ring_write().  All per-thread state is initial-exec TLS,
 * which a signal handler may use.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "consoles.h"
#include "flush.h"
#include "futex.h"
#include "internal.h"
#include "panic.h"

struct pk__global pk__g = { .mem_fd = -1 };
PK__TLS struct pk__thread pk__self;
static PK__TLS bool in_init;

/* pk_config.default_level and .facility; pk_init() may change them. */
static _Atomic int def_level = PK_WARNING;
static _Atomic int facility = 1;
/* Store pk_printk()'s format and arguments, formatting later (PK_CFG_EAGER unset). */
static _Atomic bool defer_on = true;

/*
 * The store in use: its file (cur_path[0] == 0: anonymous memory) and its
 * data ring's size.  Written by pk_init() only, under init_lock.
 */
static char cur_path[4096];
static unsigned cur_l2;
/* The store file that could not be used last (said once on stderr), and why. */
static char failed_path[4096];
static int failed_err;

static void note_failed(const char *path, int err)
{
	failed_path[0] = '\0';
	failed_err = err;
	if (path && err < 0 && strlen(path) < sizeof(failed_path))
		strcpy(failed_path, path);
}
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
void (*pk__switch_hook)(void);
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
static bool slot_key_made;
static _Atomic bool slot_key_ok;

/*
 * Unloaded (dlclose() of an object that links libprintk in, or exit()):
 * no destructor may stay registered in code about to be unmapped.  The
 * slots of threads still alive are then not freed at their exit.
 */
__attribute__((destructor)) static void gates_fini(void)
{
	if (!slot_key_made)
		return;
	atomic_store_explicit(&slot_key_ok, false, memory_order_relaxed);
	pthread_key_delete(slot_key);
	slot_key_made = false;
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
static void gates_setup(void)
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
		slot_key_made = true;
		/* Release: slot_claim() reads the key after its acquire load of this. */
		atomic_store_explicit(&slot_key_ok, slot_key < 32, memory_order_release);
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
static bool gates_drain(unsigned ms)
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
 * After a fork() a store file is shared by two processes; anonymous
 * memory is not (MAP_PRIVATE: the child writes into its own copy).
 */
static void fork_shares_store(void)
{
	if (pk__g.mem && pk__g.mem_fd >= 0)
		atomic_store_explicit(&pk__g.store_shared, true, memory_order_relaxed);
}

/*
 * Before the fork: the child may store, and lose, records before the
 * parent runs again; from here on the parent counts only what it noted.
 */
/*
 * FORK AND A FIRST INITIALISATION
 *
 * pk_init() holds init_lock from the moment it marks the library
 * INITIALIZING (a first init takes it right after its compare-and-swap,
 * before it touches anything) until it is done; so does a later pk_init()
 * for the whole of its work.  fork() takes it too (atfork_prepare(), its
 * handler registered before the first init begins), waiting up to
 * FORK_INIT_WAIT_MS: a child never starts in the middle of another
 * thread's initialisation, which it could not finish (no thread of the
 * parent but the forking one exists there).  What is left:
 *   - the initialiser had made its compare-and-swap but not yet taken the
 *     lock: it has done nothing else, and the child starts uninitialised;
 *   - the forking thread holds init_lock itself (a signal handler, or a
 *     console's set-up, that forks): the child goes on with what that
 *     thread was doing, and a first initialisation starts the library's
 *     threads at its end;
 *   - the wait timed out (an initialisation stuck for that long): the
 *     child starts uninitialised, and its first pk_init() drops what the
 *     parent's had set up so far (stale_init), said once on stderr.
 */
#define FORK_INIT_WAIT_MS	5000
/* This thread took init_lock in atfork_prepare() (the same thread runs the other handlers). */
static PK__TLS bool fork_locked;
/*
 * This thread holds init_lock (pk_init(), pk_shutdown()): a fork() from a
 * signal handler on it must not wait for itself, and its child goes on
 * with what the thread was doing.
 */
static PK__TLS bool lock_mine;
/* A fork child whose parent was initialising: set-up left half done (see above). */
static bool stale_init;
/* pk__g.fork_gen when this thread's first init began (a fork from inside it). */
static PK__TLS uint32_t init_fork_gen;

static void atfork_prepare(void)
{
	struct timespec until;

	fork_locked = false;
	if (!lock_mine) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += FORK_INIT_WAIT_MS / 1000;
		fork_locked = pthread_mutex_timedlock(&init_lock, &until) == 0;
	}
	fork_shares_store();
	pk__flush_atfork_prepare();
}

static void atfork_parent(void)
{
	pk__flush_atfork_parent();
	if (fork_locked)
		pthread_mutex_unlock(&init_lock);
	fork_locked = false;
}

/*
 * The child's view of an initialisation the parent had under way (the
 * header above).  Relaxed: the child has one thread.
 */
static void atfork_child_init(void)
{
	int st = atomic_load_explicit(&pk__g.state, memory_order_relaxed);

	pthread_mutex_init(&init_lock, NULL);
	if (lock_mine) {
		/* This thread initialises (or re-): it goes on, and unlocks at the end. */
		pthread_mutex_lock(&init_lock);
	} else if (st == PK__INITIALIZING) {
		if (!fork_locked)
			stale_init = true;
		atomic_store_explicit(&pk__g.state, PK__UNINIT, memory_order_relaxed);
	}
	fork_locked = false;
}

static void atfork_child(void)
{
	fork_shares_store();
	/*
	 * Relaxed: the child has one thread, which reads the counter itself;
	 * a new generation only makes each thread re-read its tid once.
	 */
	atomic_fetch_add_explicit(&pk__g.fork_gen, 1, memory_order_relaxed);
	/* Relaxed: the child's only thread is the one running this. */
	atomic_store_explicit(&pk__g.pid, (uint32_t)getpid(), memory_order_relaxed);
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
	atfork_child_init();
	pk__flush_atfork_child();
}

static void register_atfork(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

uint32_t pk__tid(void)
{
	uint32_t gen = atomic_load_explicit(&pk__g.fork_gen, memory_order_relaxed);

	if (!pk__self.tid || pk__self.fork_gen != gen) {
		pk__self.tid = (uint32_t)syscall(SYS_gettid);
		pk__self.fork_gen = gen;
	}
	return pk__self.tid;
}

uint64_t pk__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int check_config(const struct pk_config *c)
{
	if (c->buffer_size < PK_BUFFER_SIZE_MIN || c->buffer_size > PK_BUFFER_SIZE_MAX)
		return -EINVAL;
	if (c->mode != PK_MODE_HANDOFF && c->mode != PK_MODE_LEGACY && c->mode != PK_MODE_THREAD)
		return -EINVAL;
	if (c->console_loglevel < 0 || c->console_loglevel > 8)
		return -EINVAL;
	if (c->default_level < PK_EMERG || c->default_level > PK_DEBUG)
		return -EINVAL;
	if (c->facility < 0 || c->facility > 23)
		return -EINVAL;
	return 0;
}

/*
 * Set up the record store: @cfg's store file, or anonymous memory.  A
 * store file that cannot be used (pk__persist_open() has said why, once,
 * on stderr) is not fatal: its error goes to *@store_err and records are
 * kept in anonymous memory instead, so that the consoles keep printing.
 * Return: 0, or a negative errno if not even anonymous memory could be had.
 */
struct store {
	void *mem;
	size_t size;
	int fd;			/* a store file, or -1 */
	struct pk_ring ring;
};

/*
 * Give @ring a table of the seqs this process takes (ringbuf.c, "OWN
 * RECORDS"), so that its consoles count only their own lost records.
 * Populated now: a first touch in pk_printk() would cost a page fault
 * (several us) per 512 records until the table's first lap.  Without it
 * (mmap failed) every lost seq is counted, as it was.
 */
static void own_setup(struct pk_ring *ring)
{
	uint64_t words = pk__ring_own_words(ring);
	void *t = mmap(NULL, words * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (t == MAP_FAILED)
		return;
	/*
	 * And touched: on a virtual machine a page's first access can exit
	 * to the hypervisor even when populated (measured here: 41 calls of
	 * 20000 over 3 us, one per page of table, none once touched).
	 */
	memset(t, 0, words * sizeof(uint64_t));
	ring->own = t;
	ring->own_mask = words - 1;
}

static void own_release(struct pk_ring *ring)
{
	if (ring->own)
		munmap((void *)ring->own, (ring->own_mask + 1) * sizeof(uint64_t));
	ring->own = NULL;
}

/*
 * Note whether another process may store into the store just adopted.
 * The count of joins first: one who joins after it is seen either way.
 */
static void store_share_note(void)
{
	bool shared = false;

	if (pk__g.mem_fd >= 0) {
		pk__g.joins_seen = atomic_load_explicit(&pk__g.ring.h->joins, memory_order_seq_cst);
		shared = pk__persist_live(pk__g.mem_fd, pk__g.mem);
	}
	atomic_store_explicit(&pk__g.store_shared, shared, memory_order_relaxed);
}

bool pk__store_sole(void)
{
	if (pk__g.mem_fd < 0)
		return true;	/* anonymous and private: a fork child has its own copy */
	/* Relaxed: a join seen late costs, at most, records counted as lost. */
	return !atomic_load_explicit(&pk__g.store_shared, memory_order_relaxed) &&
	       atomic_load_explicit(&pk__g.ring.h->joins, memory_order_relaxed) == pk__g.joins_seen;
}

static void store_release(struct store *st)
{
	own_release(&st->ring);
	if (st->fd >= 0)
		pk__persist_close(st->mem, st->size, st->fd);
	else
		munmap(st->mem, st->size);
}

/*
 * Map @cfg's store into @st.  @fallback: if the file cannot be used, map
 * anonymous memory instead (its error in *@store_err).  Return: 0, or a
 * negative errno (without @fallback, the file's).
 */
static int store_map(const struct pk_config *cfg, bool fallback, struct store *st, int *store_err)
{
	unsigned l2;
	void *mem;
	size_t size;
	int ret, fd = -1;

	*store_err = 0;
	if (cfg->buffer_path) {
		ret = pk__persist_open(cfg, &mem, &size, &fd);
		if (ret < 0) {
			*store_err = ret;
			fd = -1;
			if (!fallback)
				return ret;
		}
	}
	if (fd < 0) {
		l2 = pk__ring_data_log2_for(cfg->buffer_size);
		if (!l2)
			return -EINVAL;
		size = pk__ring_region_size(l2);
		mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return -errno;
		pk__ring_format(mem, l2, 0);
	}
	st->mem = mem;
	st->size = size;
	st->fd = fd;
	ret = pk__ring_attach(&st->ring, mem, size);
	if (ret < 0) {
		store_release(st);
		return ret;
	}
	own_setup(&st->ring);
	return 0;
}

/* Remember which store @st is (@cfg's, unless it fell back to memory). */
static void store_note(const struct pk_config *cfg, const struct store *st)
{
	cur_path[0] = '\0';
	if (st->fd >= 0 && cfg->buffer_path && strlen(cfg->buffer_path) < sizeof(cur_path))
		strcpy(cur_path, cfg->buffer_path);
	cur_l2 = (unsigned)__builtin_ctzll(st->ring.data_size);
}

static int store_open(const struct pk_config *cfg, int *store_err)
{
	struct store st;
	int ret;

	ret = store_map(cfg, true, &st, store_err);
	if (ret < 0)
		return ret;
	store_note(cfg, &st);
	pk__g.ring = st.ring;
	pk__g.mem = st.mem;
	pk__g.mem_size = st.size;
	pk__g.mem_fd = st.fd;
	/*
	 * Relaxed: both are read only after pk__g.state is published
	 * (release), or by this thread.  A record of another process stored
	 * before this load is not ours; one stored after it is told apart by
	 * its pid.
	 */
	atomic_store_explicit(&pk__g.pid, (uint32_t)getpid(), memory_order_relaxed);
	pk__g.attach_seq = atomic_load_explicit(&pk__g.ring.h->seq_head, memory_order_relaxed);
	store_share_note();
	return 0;
}

static void store_close(void)
{
	if (!pk__g.mem)
		return;
	own_release(&pk__g.ring);
	if (pk__g.mem_fd >= 0)
		pk__persist_close(pk__g.mem, pk__g.mem_size, pk__g.mem_fd);
	else
		munmap(pk__g.mem, pk__g.mem_size);
	pk__g.mem = NULL;
	pk__g.mem_fd = -1;
}

/* Is @path the store PK_BUFFER names (as pk_config_init() reads it)? */
static bool store_from_env(const char *path)
{
	const char *v = secure_getenv("PK_BUFFER");

	return path && v && !strcmp(v, path);
}

/* Is @cfg's store the one in use? */
static bool same_store(const struct pk_config *cfg)
{
	if (cfg->buffer_path)
		return !strcmp(cur_path, cfg->buffer_path);
	return !cur_path[0] && pk__ring_data_log2_for(cfg->buffer_size) == cur_l2;
}

/* Old seq -> new seq of the records copied into another store. */
struct seq_map {
	uint64_t *old_seq;
	uint64_t new_first;	/* new seq of old_seq[0]; the others follow */
	size_t n, cap;
	uint64_t new_head;
};

/* Where a console at old @seq goes on: the first copied record at or after it. */
static uint64_t map_seq(uint64_t seq, void *arg)
{
	const struct seq_map *m = arg;
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->old_seq[mid] < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n ? m->new_first + lo : m->new_head;
}

/*
 * A lost note in @st for the seqs [@from, @to) of the store in use, all
 * lost to its reader: those of them each console level would have printed.
 */
static void copy_note(struct store *st, struct seq_map *m, uint64_t from, uint64_t to)
{
	struct pk_ring_filter f;
	struct pk__lost_note note = { { 0 }, 0 };
	struct pk_ring_lost l;
	uint64_t seq;
	int lvl;

	f.pid = atomic_load_explicit(&pk__g.pid, memory_order_relaxed);
	f.own = true;
	f.sole = pk__store_sole();
	for (lvl = 0; lvl <= 8; lvl++) {
		l.counted = l.unknown = 0;
		f.max_level = lvl;
		pk__ring_lost_counted(&pk__g.ring, &f, from, to, &l);
		note.cum[lvl] = l.counted;
		if (lvl == 8)
			note.unknown = l.unknown;
	}
	if (!note.cum[8] || m->n >= m->cap)
		return;
	if (pk__lost_note_write(&st->ring, &note, &seq) == 0 && seq == m->new_first + m->n)
		m->old_seq[m->n++] = from;
}

/*
 * The seqs [@from, @to) of the store in use were lost to the copy: note
 * them, cut where a console stands, so that each console, wherever in
 * them it stood, goes on at a note of all it missed (map_seq()).
 */
static void copy_gap(struct store *st, struct seq_map *m, const uint64_t *pos, unsigned npos,
		     uint64_t from, uint64_t to)
{
	uint64_t cut;
	unsigned i;

	while (from < to) {
		cut = to;
		for (i = 0; i < npos; i++)
			if (pos[i] > from && pos[i] < cut)
				cut = pos[i];
		copy_note(st, m, from, cut);
		from = cut;
	}
}

/*
 * Copy this process's records from the store in use into @st, in order,
 * keeping their time, thread, level and flags.  No writer is inside the
 * gate: the old store is still.  Records lost in it that a console has
 * not passed yet (overwritten before it got there, or given up on) are
 * counted by lost notes in their place: the copy numbers the survivors
 * afresh, and a console would see no gap.  Return: 0 or -ENOMEM.
 */
static int store_copy(struct store *st, struct seq_map *m)
{
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint32_t pid = atomic_load_explicit(&pk__g.pid, memory_order_relaxed);
	uint64_t seq, expect, head, cap = pk__g.ring.desc_mask + 1, pos[PK_MAX_CONSOLES];
	unsigned npos, i;
	int ret = 0;

	/* Each record copied, and at most one note before each and one per console. */
	m->cap = 2 * cap + 2 * PK_MAX_CONSOLES + 2;
	m->old_seq = calloc(m->cap, sizeof(*m->old_seq));
	if (!m->old_seq)
		return -ENOMEM;
	m->n = 0;
	m->new_first = pk__ring_next_seq(&st->ring);
	/* Postmortem: a record still in progress has no writer left to finish it. */
	pk__ring_reader_init(&rd, &pk__g.ring, true);
	if (rd.next < pk__g.attach_seq)
		rd.next = pk__g.attach_seq;
	/* Losses before every console's position were reported already. */
	npos = pk__con_positions(pos, PK_MAX_CONSOLES);
	head = pk__ring_next_seq(&pk__g.ring);
	expect = head;
	for (i = 0; i < npos; i++)
		if (pos[i] < expect)
			expect = pos[i];
	if (expect < pk__g.attach_seq)
		expect = pk__g.attach_seq;
	while (m->n + 2 * PK_MAX_CONSOLES + 1 < m->cap && (ret = pk__ring_read(&rd, &rec)) == 1) {
		if (rec.seq > expect)
			copy_gap(st, m, pos, npos, expect, rec.seq);
		if (rec.seq + 1 > expect)
			expect = rec.seq + 1;
		if (rec.meta.pid != pid)
			continue;	/* another process's, in a shared store file */
		rec.meta.flags &= (uint16_t)~PK_REC_NOEOL;
		if (pk__ring_write(&st->ring, &rec.meta, rec.text, rec.len, false, &seq) == 0 &&
		    seq == m->new_first + m->n)
			m->old_seq[m->n++] = rec.seq;
	}
	/* And what was lost after the last record read (given up on in progress). */
	if (ret != 1 && expect < head)
		copy_gap(st, m, pos, npos, expect, head);
	m->new_head = pk__ring_next_seq(&st->ring);
	return 0;
}

/*
 * THE SWITCH WORD
 *
 * A store switch holds callers out for as long as it takes to wait for
 * those inside, copy the records and move the consoles (milliseconds;
 * gates_drain() bounds the wait at 2 s).  A caller that cannot wait
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

static void switch_begin(void)
{
	uint32_t w = atomic_load_explicit(&switch_word, memory_order_relaxed);

	in_switch = true;
	/* LMM(switch:A) */
	atomic_store_explicit(&switch_word, w | 1u, memory_order_relaxed);
}

static void switch_end(void)
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
static bool switch_wait(uint64_t *until)
{
	uint32_t w = atomic_load_explicit(&switch_word, memory_order_acquire);	/* switch:A/B */
	uint64_t now;

	if (!(w & 1u)) {
		/* No switch (any more): the gate may let it in now (switch:B). */
		return atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY &&
		       (!*until || pk__now_ns() < *until);
	}
	if (in_switch || pk__self.gate_depth || pk__self.in_console || pk__self.in_printk)
		return false;
	now = pk__now_ns();
	if (!*until) {
		/* Asked once a call: a look at every signal's disposition. */
		if (!pk__early_init_safe_here())
			return false;
		*until = now + SWITCH_WAIT_NS;
	}
	if (now >= *until)
		return false;
	pk__futex_wait(&switch_word, w, *until - now);
	return true;
}

/*
 * Adopt @cfg's store: open it, keep callers out (they wait for the switch,
 * or store into the early store if they cannot: see THE SWITCH WORD), copy
 * the records over, move every console's position, release the old store.
 * The library's threads are stopped.  Return: 0, or a negative errno with
 * the store in use unchanged.
 */
static int store_switch(const struct pk_config *cfg)
{
	struct store st, old = { pk__g.mem, pk__g.mem_size, pk__g.mem_fd, pk__g.ring };
	struct seq_map m = { 0 };
	uint64_t attach;
	int ret, err;

	ret = store_map(cfg, false, &st, &err);
	if (ret < 0)
		return ret;
	attach = atomic_load_explicit(&st.ring.h->seq_head, memory_order_relaxed);
	switch_begin();
	/* LMM(gate:B), LMM(switch:A) */
	atomic_store_explicit(&pk__g.state, PK__INITIALIZING, memory_order_seq_cst);
	if (!gates_drain(2000)) {
		atomic_store_explicit(&pk__g.state, PK__READY, memory_order_release);
		switch_end();
		store_release(&st);
		return -EBUSY;
	}
	if (pk__switch_hook)
		pk__switch_hook();
	ret = store_copy(&st, &m);
	if (ret < 0) {
		atomic_store_explicit(&pk__g.state, PK__READY, memory_order_release);
		switch_end();
		store_release(&st);
		return ret;
	}
	pk__ring_finalize_last(&pk__g.ring);
	pk__g.ring = st.ring;
	pk__g.mem = st.mem;
	pk__g.mem_size = st.size;
	pk__g.mem_fd = st.fd;
	pk__g.attach_seq = attach;
	store_share_note();
	/* A thread's open record (pk_cont) was in the old store. */
	atomic_fetch_add_explicit(&pk__g.store_gen, 1, memory_order_relaxed);
	pk__self.open_valid = false;
	pk__con_rebase(map_seq, &m);
	free(m.old_seq);
	store_note(cfg, &st);
	/* Publishes the new store to the callers (pk__gate_enter, printk_ready). */
	atomic_store_explicit(&pk__g.state, PK__READY, memory_order_release);
	switch_end();
	store_release(&old);
	/* What callers stored meanwhile. */
	if (pk__early_pending())
		pk__early_migrate();
	return 0;
}

/*
 * pk_init() on a library set up already: apply @cfg (see printk.h).
 * Serialised by init_lock; pk_printk() goes on meanwhile.
 */
static int reinit(const struct pk_config *cfg)
{
	struct timespec until, nap = { 0, 100000 };
	int ret = 0, fret, store_err = 0, st, cancel;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	/* Another thread may be initialising (a first pk_printk()): wait for it, 10 s at most. */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	for (;;) {
		if (pthread_mutex_timedlock(&init_lock, &until)) {
			pthread_setcancelstate(cancel, NULL);
			return -EAGAIN;
		}
		st = atomic_load_explicit(&pk__g.state, memory_order_acquire);
		if (st != PK__INITIALIZING)
			break;
		/*
		 * A first initialisation between its compare-and-swap and taking
		 * init_lock (pk_init()): let it have the lock.
		 */
		pthread_mutex_unlock(&init_lock);
		nanosleep(&nap, NULL);
	}
	lock_mine = true;
	if (st != PK__READY) {
		lock_mine = false;
		pthread_mutex_unlock(&init_lock);
		pthread_setcancelstate(cancel, NULL);
		return st == PK__UNINIT ? pk_init(cfg) : -EAGAIN;
	}
	/* The old consoles print what they have before they go. */
	pk_flush(1000);
	pk__flush_stop_threads();
	if (cfg->buffer_path && failed_err < 0 && !strcmp(cfg->buffer_path, failed_path)) {
		store_err = failed_err;	/* said already: not again on each call */
	} else if (!same_store(cfg)) {
		store_err = store_switch(cfg);
		note_failed(cfg->buffer_path, store_err);
	}
	pk__g.cfg.mode = cfg->mode;
	pk__g.cfg.console_loglevel = cfg->console_loglevel;
	pk__g.cfg.print_budget_us = cfg->print_budget_us;
	pk__g.cfg.flags = cfg->flags;
	/* Relaxed: gate_fast's own rule (a caller that still reads it true enters by its slot). */
	if (cfg->flags & PK_CFG_GATE_COUNTERS)
		atomic_store_explicit(&gate_fast, false, memory_order_relaxed);
	atomic_store_explicit(&def_level, cfg->default_level, memory_order_relaxed);
	atomic_store_explicit(&defer_on, !(cfg->flags & PK_CFG_EAGER), memory_order_relaxed);
	atomic_store_explicit(&facility, cfg->facility, memory_order_relaxed);
	pk__con_set_global_loglevel(cfg->console_loglevel);
	pk__con_update_utc_offset();
	fret = pk__flush_reconfigure(cfg);
	pk__con_replace_config((cfg->flags & PK_CFG_NO_CONSOLE) ? NULL :
			       cfg->consoles ? cfg->consoles : "stderr");
	lock_mine = false;
	pthread_mutex_unlock(&init_lock);
	pthread_setcancelstate(cancel, NULL);
	if (store_err < 0 && !store_from_env(cfg->buffer_path))
		ret = store_err;
	return ret < 0 ? ret : fret;
}

int pk_init(const struct pk_config *cfg)
{
	static pthread_once_t atfork_once = PTHREAD_ONCE_INIT, gates_once = PTHREAD_ONCE_INIT;
	struct pk_config def;
	int expect = PK__UNINIT;
	int ret, store_err, cancel;

	if (!cfg) {
		pk_config_init(&def);
		cfg = &def;
	}
	ret = check_config(cfg);
	if (ret < 0)
		return ret;
	if (pk__self.in_console)
		return -EDEADLK;	/* the consoles may change under their own write() */
	/* Before the library is marked INITIALIZING: a fork() from then on waits for it. */
	pthread_once(&atfork_once, register_atfork);
	if (!atomic_compare_exchange_strong_explicit(&pk__g.state, &expect, PK__INITIALIZING,
						     memory_order_acquire, memory_order_acquire))
		return in_init ? -EALREADY : reinit(cfg);
	/*
	 * A thread cancelled inside (a store file's or a console's open() is
	 * a cancellation point) would leave the library INITIALIZING for good.
	 */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&init_lock);
	lock_mine = true;
	in_init = true;
	init_fork_gen = atomic_load_explicit(&pk__g.fork_gen, memory_order_relaxed);
	if (stale_init) {
		/* A fork child of a parent whose initialisation had stalled: start afresh. */
		stale_init = false;
		fprintf(stderr, "libprintk: fork() while another thread's initialisation was "
			"stalled; initialising afresh in the child\n");
		pk__con_unregister_all();
		store_close();
	}
	pk__g.cfg = *cfg;
	atomic_store_explicit(&def_level, cfg->default_level, memory_order_relaxed);
	atomic_store_explicit(&defer_on, !(cfg->flags & PK_CFG_EAGER), memory_order_relaxed);
	atomic_store_explicit(&facility, cfg->facility, memory_order_relaxed);
	pk__con_set_global_loglevel(cfg->console_loglevel);
	pk__con_update_utc_offset();
	ret = store_open(cfg, &store_err);
	note_failed(cfg->buffer_path, store_err);
	if (ret == 0) {
		/* Records stored before now come first, before any console exists. */
		pk__early_migrate();
		ret = pk__flush_init(&pk__g.cfg);
		if (ret < 0)
			store_close();
	}
	/* Strings in cfg may not outlive the call; keep none of them. */
	pk__g.cfg.buffer_path = NULL;
	pk__g.cfg.consoles = NULL;
	if (ret == 0) {
		pthread_once(&gates_once, gates_setup);
		/* This thread forked from inside its own initialisation: this is the child. */
		if (init_fork_gen != atomic_load_explicit(&pk__g.fork_gen, memory_order_relaxed))
			pk__flush_threads_resume();
	}
	in_init = false;
	/* Publishes pk__g.ring and the flush state to pk__ensure_init(). */
	atomic_store_explicit(&pk__g.state, ret == 0 ? PK__READY : PK__UNINIT, memory_order_release);
	lock_mine = false;
	pthread_mutex_unlock(&init_lock);
	if (ret == 0 && pk__early_pending()) {
		/* Stragglers: callers that saw the library not ready yet. */
		pk__early_migrate();
		pk__flush_kick();
	}
	pthread_setcancelstate(cancel, NULL);
	/*
	 * Set up all the same, with records in memory.  The program that
	 * named the store itself is told; a store named by PK_BUFFER is the
	 * user's, who was told on stderr, and must not make the program fail.
	 */
	if (ret == 0 && store_err < 0 && !store_from_env(cfg->buffer_path))
		return store_err;
	return ret;
}

/* The level of a message that names none (before init: the default config's). */
static int default_level(bool early)
{
	return early ? PK_WARNING : atomic_load_explicit(&def_level, memory_order_relaxed);
}

/*
 * May pk_printk() go on to the configured store?  0 yes; -EINPROGRESS no,
 * use the early store (another thread is initialising, this one is
 * initialising already, or this may be a signal handler, where
 * initialising is not safe); another negative errno: initialising failed.
 */
static int printk_ready(void)
{
	int st = atomic_load_explicit(&pk__g.state, memory_order_acquire);
	int ret;

	if (__builtin_expect(st == PK__READY, 1))
		return 0;
	if (st == PK__UNINIT && !in_init && pk__early_init_safe_here()) {
		ret = pk_init(NULL);
		if (ret == 0)
			return 0;
		if (ret != -EALREADY)
			return ret;
	}
	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY)
		return 0;
	return -EINPROGRESS;
}

int pk__ensure_init(void)
{
	int st = atomic_load_explicit(&pk__g.state, memory_order_acquire);
	int i, ret;

	if (__builtin_expect(st == PK__READY, 1))
		return 0;
	if (st == PK__UNINIT) {
		if (in_init)
			return -EAGAIN;
		ret = pk_init(NULL);
		if (ret != -EALREADY)
			return ret;
	}
	/* Someone else is initialising.  Never wait for our own thread. */
	if (in_init)
		return -EAGAIN;
	for (i = 0; i < 10000; i++) {
		st = atomic_load_explicit(&pk__g.state, memory_order_acquire);
		if (st == PK__READY)
			return 0;
		if (st == PK__UNINIT)
			return -ENODEV;
		sched_yield();
	}
	return -EAGAIN;
}

bool pk__init_settle(unsigned ms)
{
	struct timespec until;
	uint64_t ns;

	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) != PK__INITIALIZING ||
	    in_init)
		return atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY;
	clock_gettime(CLOCK_REALTIME, &until);
	ns = (uint64_t)until.tv_nsec + (uint64_t)(ms % 1000) * 1000000ull;
	until.tv_sec += (time_t)(ms / 1000 + ns / 1000000000ull);
	until.tv_nsec = (long)(ns % 1000000000ull);
	/* The initialiser holds init_lock until it is done (atfork_prepare()'s header). */
	if (!lock_mine && pthread_mutex_timedlock(&init_lock, &until) == 0)
		pthread_mutex_unlock(&init_lock);
	return atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY;
}

static void refuse(void)
{
	if (pk__gate_enter()) {
		atomic_fetch_add_explicit(&pk__g.ring.h->refused, 1, memory_order_relaxed);
		pk__gate_exit();
	}
}

int pk__store(int level, unsigned flags, const char *text, size_t len, uint64_t *seqp)
{
	struct pk_ring_meta m;
	uint64_t *slot, seq = PK__NO_SEQ;
	unsigned depth;
	size_t max = PK_RECORD_MAX;
	int ret;

	pk__crash_stack_lazy();
	/* A module prefix (pk__mod_prefix()) comes on top of the text's maximum. */
	if ((flags & PK__REC_MODULE) && len)
		max += 1 + (size_t)(unsigned char)text[0];
	if (len > max) {
		len = max;
		flags |= PK_REC_TRUNC;
	}
	if (flags & PK_REC_TRUNC)
		atomic_fetch_add_explicit(&pk__g.ring.h->truncated, 1, memory_order_relaxed);
	if (pk__self.emergency)
		flags |= PK_REC_EMERG;
	m.ts_ns = pk__now_ns();
	m.tid = pk__tid();
	m.pid = atomic_load_explicit(&pk__g.pid, memory_order_relaxed);
	m.level = (uint8_t)level;
	m.facility = (uint8_t)atomic_load_explicit(&facility, memory_order_relaxed);
	m.flags = (uint16_t)flags;
	/*
	 * Announce the record to a crash handler on this thread before the
	 * store takes its seq; a handler nested deeper than the slots has
	 * its records waited for like other threads' (bounded).
	 */
	depth = pk__self.wdepth;
	slot = depth < PK__ARRAY_SIZE(pk__self.wseq) ? &pk__self.wseq[depth] : &seq;
	*(volatile uint64_t *)slot = PK__NO_SEQ;
	*(volatile unsigned *)&pk__self.wdepth = depth + 1;
	ret = pk__ring_write(&pk__g.ring, &m, text, (uint32_t)len, (flags & PK_REC_NOEOL) != 0, slot);
	seq = *slot;
	*(volatile unsigned *)&pk__self.wdepth = depth;
	if (seqp)
		*seqp = seq;
	return ret;
}

uint64_t pk__self_inflight(void)
{
	uint64_t min = PK__NO_SEQ;
	unsigned i, n = pk__self.wdepth;

	for (i = 0; i < n && i < PK__ARRAY_SIZE(pk__self.wseq); i++)
		if (pk__self.wseq[i] < min)
			min = pk__self.wseq[i];
	return min;
}

size_t pk__text_settle(const char *buf, int n, unsigned *flags)
{
	size_t len = (size_t)n < PK__TEXT_BUF - 1 ? (size_t)n : PK__TEXT_BUF - 1;

	if ((size_t)n == len && len && buf[len - 1] == '\n')
		return len - 1;			/* a complete line */
	if (len > PK_RECORD_MAX || (size_t)n > len) {
		*flags |= PK_REC_TRUNC;		/* cut: the record is complete */
		return PK_RECORD_MAX;
	}
	*flags |= PK_REC_NOEOL;			/* open: pk_cont may extend it */
	return len;
}

size_t pk__mod_prefix(char *dst, const struct pk_module *mod)
{
	const char *name = mod ? mod->name : NULL;
	/* Relaxed: 0 (not yet registered) takes the slow path below. */
	size_t i = mod ? __atomic_load_n(&mod->namelen, __ATOMIC_RELAXED) : 0;

	if (!name)
		return 0;
	/* Registered: checked then (module.c), its length kept. */
	if (i && i <= PK_MODULE_NAME_MAX) {
		dst[0] = (char)i;
		memcpy(dst + 1, name, i);
		return i + 1;
	}
	/*
	 * Never registered (or not yet): only a name registration would take
	 * is written; another (too long, other characters) gives the record
	 * no module rather than a name no pattern can select.
	 */
	for (i = 0; name[i]; i++) {
		if (i == PK_MODULE_NAME_MAX || !pk__mod_name_char((unsigned char)name[i]))
			return 0;
		dst[1 + i] = name[i];
	}
	dst[0] = (char)i;
	return i ? i + 1 : 0;
}

bool pk__rec_module(const struct pk_ring_rec *rec, char *name)
{
	unsigned n = rec->len ? (unsigned char)rec->text[0] : 0, i;

	if (!(rec->meta.flags & PK__REC_MODULE) || n < 1 || n > PK_MODULE_NAME_MAX ||
	    n + 1 > rec->len)
		return false;
	for (i = 0; i < n; i++) {
		if (!pk__mod_name_char((unsigned char)rec->text[1 + i]))
			return false;
		name[i] = rec->text[1 + i];
	}
	name[n] = '\0';
	return true;
}

/*
 * Move a record's module prefix into rec->module.  A prefix that is not
 * one (a damaged or hostile store) stays in the text, where it is seen.
 */
static void mod_split(struct pk_ring_rec *rec)
{
	unsigned n;

	if (!pk__rec_module(rec, rec->module)) {
		rec->module[0] = '\0';
		rec->meta.flags &= (uint16_t)~PK__REC_MODULE;
		return;
	}
	rec->meta.flags &= (uint16_t)~PK__REC_MODULE;
	n = (unsigned char)rec->text[0];
	rec->len -= n + 1;
	memmove(rec->text, rec->text + 1 + n, rec->len);
	rec->text[rec->len] = '\0';
}

/*
 * LOST NOTES
 *
 * A console counts lost records by the gaps in the seqs it reads.  Some
 * records are lost where it sees no gap: those overwritten in a store
 * that pk_init() replaces before the console reached them (the copy
 * numbers the survivors afresh, store_copy()), and those the early store
 * could not hold (they never had a seq in the store).  For them a record
 * of its own is stored where the loss is, flagged PK__REC_LOSTNOTE, whose
 * body counts them by the console level that would have printed them
 * (the own table's levels, ringbuf.c "OWN RECORDS"; those of unknown
 * level count for every console).  A console prints it as its drop notice
 * and counts it in its `dropped' (console.c, pk__con_emit()); a reader
 * (pkmsg, pk_reader) sees the notice as the record's text.  A body of
 * another size (a damaged or hostile store) is shown as text, nothing
 * counted.
 */
static bool lost_note_get(const struct pk_ring_rec *rec, struct pk__lost_note *note)
{
	if (!(rec->meta.flags & PK__REC_LOSTNOTE) || rec->len != sizeof(*note))
		return false;
	memcpy(note, rec->text, sizeof(*note));
	return true;
}

uint64_t pk__lost_note_count(const struct pk_ring_rec *rec, int max_level)
{
	struct pk__lost_note note;

	if (!lost_note_get(rec, &note))
		return 0;
	if (max_level < 0)
		max_level = 0;
	return note.cum[max_level > 8 ? 8 : max_level];
}

uint64_t pk__lost_note_unknown(const struct pk_ring_rec *rec)
{
	struct pk__lost_note note;

	return lost_note_get(rec, &note) ? note.unknown : 0;
}

static void lost_note_render(struct pk_ring_rec *rec)
{
	struct pk__lost_note note;
	int n;

	rec->meta.flags &= (uint16_t)~(PK__REC_LOSTNOTE | PK__REC_MODULE | PK__REC_PACKED);
	if (!lost_note_get(rec, &note)) {
		static const char bad[] = "<a lost note that cannot be decoded>";

		memcpy(rec->text, bad, sizeof(bad));
		rec->len = sizeof(bad) - 1;
		rec->meta.flags |= PK_REC_TRUNC;
		return;
	}
	n = pk__stbsp_snprintf(rec->text, (int)sizeof(rec->text), "** %llu printk messages dropped **",
			       (unsigned long long)note.cum[8]);
	rec->len = n > 0 ? (uint32_t)n : 0;
}

int pk__lost_note_write(struct pk_ring *ring, const struct pk__lost_note *note, uint64_t *seq)
{
	struct pk_ring_meta m = { 0 };

	if (!note->cum[8])
		return 0;
	atomic_fetch_add_explicit(&ring->h->lost, note->cum[8], memory_order_relaxed);
	m.ts_ns = pk__now_ns();
	m.tid = pk__tid();
	m.pid = atomic_load_explicit(&pk__g.pid, memory_order_relaxed);
	m.level = PK_EMERG;
	m.facility = (uint8_t)atomic_load_explicit(&facility, memory_order_relaxed);
	m.flags = PK__REC_LOSTNOTE;
	return pk__ring_write(ring, &m, (const char *)note, sizeof(*note), false, seq);
}

void pk__rec_render(struct pk_ring_rec *rec)
{
	unsigned char pkg[PK_RING_TEXT_MAX];
	unsigned flags;
	size_t len;
	int n;

	_Static_assert(PK_MODULE_NAME_MAX + 1 <= PK_RING_MOD_MAX, "a module prefix fits");
	_Static_assert(PK_RING_TEXT_MAX >= PK_RECORD_MAX + PK_RING_MOD_MAX, "room for a prefix");
	rec->module[0] = '\0';
	if (rec->meta.flags & PK__REC_LOSTNOTE) {
		lost_note_render(rec);
		return;
	}
	if (rec->meta.flags & PK__REC_MODULE)
		mod_split(rec);
	flags = rec->meta.flags & ~PK__REC_PACKED;
	if (!(rec->meta.flags & PK__REC_PACKED)) {
		/*
		 * The store holds up to PK_RING_TEXT_MAX bytes for a record;
		 * only a prefix may take it past PK_RECORD_MAX.  One longer
		 * without (a damaged or hostile store) is cut, as written.
		 */
		if (rec->len > PK_RECORD_MAX) {
			rec->len = PK_RECORD_MAX;
			rec->text[rec->len] = '\0';
			rec->meta.flags |= PK_REC_TRUNC;
		}
		return;
	}
	len = rec->len < sizeof(pkg) ? rec->len : sizeof(pkg);
	memcpy(pkg, rec->text, len);
	_Static_assert(sizeof(rec->text) >= PK__TEXT_BUF, "room to render a record");
	n = pk__unpack(rec->text, PK__TEXT_BUF, pkg, len);
	if (n < 0) {
		static const char bad[] = "<a packed record that cannot be decoded>";

		memcpy(rec->text, bad, sizeof(bad));
		len = sizeof(bad) - 1;
		flags |= PK_REC_TRUNC;
	} else {
		len = pk__text_settle(rec->text, n, &flags);
		/* A package always ends its line: it is never left open. */
		flags &= ~(unsigned)PK_REC_NOEOL;
		rec->text[len] = '\0';
	}
	rec->len = (uint32_t)len;
	rec->meta.flags = (uint16_t)flags;
}

/*
 * Store package @pkg (@n bytes, a whole line, after a module prefix of
 * @plen bytes) as a record; then print as the mode says.
 */
static int store_package(int level, const unsigned char *pkg, size_t plen, int n)
{
	uint64_t seq;
	int ret;

	pk__self.in_printk++;
	ret = pk__store(level, PK__REC_PACKED | (plen ? PK__REC_MODULE : 0), (const char *)pkg,
			plen + (size_t)n, &seq);
	pk__self.open_valid = false;
	if (ret == 0) {
		pk__self.open_seq = seq;	/* the thread's newest, closed */
		pk__self.open_gen = atomic_load_explicit(&pk__g.store_gen, memory_order_relaxed);
		pk__self.open_level = (uint8_t)level;
		pk__flush_after_store(level, seq);
	}
	pk__self.in_printk--;
	return ret < 0 ? ret : n;
}

/* Is another thread panicking?  Then this record is not stored (counted). */
static bool panic_suppressed(void)
{
	/* LMM(gate:D): seq_cst, after the gate's seq_cst increment. */
	if (__builtin_expect(atomic_load_explicit(&pk__panic_tid, memory_order_seq_cst) != 0, 0) &&
	    pk__panicking_other(pk__tid())) {
		atomic_fetch_add_explicit(&pk__g.ring.h->suppressed, 1, memory_order_relaxed);
		return true;
	}
	return false;
}

/*
 * A record dropped by its module's level: if it leaves a line open (its
 * format has no final newline), the continuations of that line go with
 * it; a complete line leaves the thread's open line, if any, as it was.
 */
static void mod_note_dropped(const char *fmt)
{
	size_t n = fmt ? strlen(fmt) : 0;

	if (!n || fmt[n - 1] != '\n')
		pk__self.mod_dropped = true;
}

/*
 * Does module @mod drop a record of @level (a continuation: @cont)?  A
 * continuation goes with the line it continues: dropped if that line was.
 * A record stored starts a new line: its continuations are kept.
 */
static bool mod_drops(const struct pk_module *mod, int level, bool cont, const char *fmt)
{
	if (cont)
		return pk__self.mod_dropped;
	if (mod && level > __atomic_load_n(&mod->level, __ATOMIC_RELAXED)) {
		mod_note_dropped(fmt);
		return true;
	}
	pk__self.mod_dropped = false;
	return false;
}

int pk_module_dropped(const char *fmt)
{
	mod_note_dropped(fmt);
	return 0;
}

static int vprintk(const struct pk_module *mod, int level, const char *fmt, va_list ap, bool early)
{
	char mbuf[PK_RING_MOD_MAX + PK__TEXT_BUF];
	char *buf;
	unsigned flags = 0, fmt_flags = 0;
	bool cont = false;
	uint64_t seq;
	size_t len, plen;
	int n, ret, err = errno;	/* the caller's, for %m (pk_vprintk() restored it) */
	/*
	 * While another thread panics, it prints everything stored before;
	 * new records from the others would only push the panic report out
	 * of the store before a slow console reaches it (as Linux keeps
	 * non-panic CPUs out of the ring buffer).  Counted, not stored.
	 */
	if (panic_suppressed())
		return -EBUSY;

	/* A kernel format: %p takes the kernel's extensions (printk/kernel.h). */
	if (level == PK_LEVEL_KERNEL) {
		fmt_flags = PK__FMT_KERNEL;
		level = PK_LEVEL_DEFAULT;
	}
	/* Kernel-style prefixes: "\001" followed by a digit, 'c', 'd' or 'k'. */
	while (fmt[0] == '\001' && fmt[1]) {
		if (fmt[1] >= '0' && fmt[1] <= '7')
			level = fmt[1] - '0';
		else if (fmt[1] == 'c')
			level = PK_LEVEL_CONT;
		else if (fmt[1] == 'd')
			level = PK_LEVEL_DEFAULT;
		else if (fmt[1] == 'k')
			fmt_flags = PK__FMT_KERNEL;
		else
			break;
		fmt += 2;
	}
	if (level == PK_LEVEL_CONT) {
		cont = true;
		level = pk__self.open_valid ? pk__self.open_level : default_level(early);
	} else if (level < PK_EMERG || level > PK_DEBUG) {
		level = default_level(early);
	}
	if (mod_drops(mod, level, cont, fmt))
		return 0;
	/*
	 * The record's module name goes first (PK__REC_MODULE).  A
	 * continuation that cannot join its line (printed meanwhile) becomes
	 * a record of that line's module, whoever's code continues it.
	 */
	if (cont && pk__self.open_valid) {
		plen = pk__self.open_plen;
		memcpy(mbuf, pk__self.open_prefix, plen);
	} else {
		plen = mod ? pk__mod_prefix(mbuf, mod) : 0;
	}
	buf = mbuf + plen;
	if (plen)
		flags |= PK__REC_MODULE;

	/*
	 * Deferred formatting: a line (its format ends with a newline) is
	 * stored as its format and arguments, and formatted when a console
	 * prints it or a reader reads it (pk__rec_render()).  Continuations,
	 * lines left open, the early store and what cannot be packed are
	 * formatted now; those stored here are counted in `eager' (the early
	 * store's are not: they are moved into the store later).
	 */
	if (!early && __builtin_expect(pk__self.early_stored, 0)) {
		pk__early_settle(pk__self.early_seq);	/* this thread's early ones go first */
		pk__self.early_stored = false;
		errno = err;	/* the move may have changed it */
	}
	if (!early && !cont && atomic_load_explicit(&defer_on, memory_order_relaxed)) {
		unsigned char pkg[PK_RING_TEXT_MAX];

		if (plen)
			memcpy(pkg, mbuf, plen);
		n = pk__vpack(pkg + plen, PK_RECORD_MAX, fmt, ap, fmt_flags, err);
		if (n == -1) {
			refuse();
			return -EINVAL;
		}
		if (n > 0 && pkg[plen + (size_t)n - 1] == '\n')
			return store_package(level, pkg, plen, n);
	}

	/*
	 * The formatter refuses %n itself, in every spelling its conversion
	 * parser accepts, before it would write through the pointer.
	 */
	n = pk__vsnprintf_flags(buf, PK__TEXT_BUF, fmt, ap, fmt_flags);
	if (n < 0) {
		refuse();
		return -EINVAL;
	}
	len = pk__text_settle(buf, n, &flags);

	if (early) {
		uint64_t eseq = PK__NO_SEQ;

		ret = pk__early_store(level, flags | (cont ? PK_REC_CONT : 0), mbuf, plen + len, &eseq);
		if (eseq != PK__NO_SEQ) {
			pk__self.early_seq = eseq;
			pk__self.early_stored = true;
		}
		/*
		 * The library may have become ready since we looked, and moved
		 * the early records before ours arrived: move it ourselves.
		 */
		if (atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY &&
		    pk__early_migrate())
			pk__flush_kick();
		return ret < 0 ? ret : (int)len;
	}
	pk__self.in_printk++;
	if (cont && pk__self.open_valid &&
	    pk__self.open_gen == atomic_load_explicit(&pk__g.store_gen, memory_order_relaxed)) {
		uint64_t open_seq = pk__self.open_seq;

		unsigned depth = pk__self.wdepth;

		/* In progress while extended: see pk__store(). */
		if (depth < PK__ARRAY_SIZE(pk__self.wseq))
			*(volatile uint64_t *)&pk__self.wseq[depth] = open_seq;
		*(volatile unsigned *)&pk__self.wdepth = depth + 1;
		ret = pk__ring_extend(&pk__g.ring, open_seq, buf, (uint32_t)len,
				      (flags & PK_REC_NOEOL) != 0,
				      PK_RECORD_MAX + pk__self.open_plen);
		*(volatile unsigned *)&pk__self.wdepth = depth;
		if (ret == 0) {
			seq = open_seq;
			/*
			 * Still open: note it again.  The watcher may have
			 * taken the last note and tried to finalise the record
			 * while this extension held it (a no-op then).
			 */
			if (flags & PK_REC_NOEOL)
				pk__flush_note_open();
			goto stored;
		}
	}
	if (cont && !len) {
		/*
		 * An empty continuation ("\n" or "") whose record was finalised
		 * already (printed: its line is ended) or never existed: it
		 * would only make an empty line.  Nothing to store.
		 */
		pk__self.open_valid = false;
		pk__self.in_printk--;
		return 0;
	}
	if (cont)
		flags |= PK_REC_CONT;
	ret = pk__store(level, flags, mbuf, plen + len, &seq);
	if (ret < 0) {
		pk__self.open_valid = false;
		pk__self.in_printk--;
		return ret;
	}
	if (flags & PK_REC_NOEOL) {
		/* A new open line: its module, for continuations (joining or not). */
		pk__self.open_plen = (uint8_t)plen;
		memcpy(pk__self.open_prefix, mbuf, plen);
	}
	if (flags & PK_REC_NOEOL)
		pk__flush_note_open();
stored:
	/* Formatted at the call (not deferred), and stored. */
	atomic_fetch_add_explicit(&pk__g.ring.h->eager, 1, memory_order_relaxed);
	pk__self.open_valid = (flags & PK_REC_NOEOL) != 0;
	pk__self.open_seq = seq;
	pk__self.open_gen = atomic_load_explicit(&pk__g.store_gen, memory_order_relaxed);
	pk__self.open_level = (uint8_t)level;
	pk__flush_after_store(level, seq);
	pk__self.in_printk--;
	return (int)len;
}

int pk_vprintk(int level, const char *fmt, va_list ap)
{
	return pk_vprintk_mod(NULL, level, fmt, ap);
}

int pk_vprintk_mod(const struct pk_module *mod, int level, const char *fmt, va_list ap)
{
	int err = errno;	/* %m prints the caller's errno, whatever init does */
	uint64_t until = 0;
	bool gated;
	int ret;

	if (!fmt) {
		refuse();
		return -EINVAL;
	}
	ret = printk_ready();
	if (ret < 0 && ret != -EINPROGRESS)
		return ret;
	/*
	 * pk_init() changing the store: wait for it if this caller can
	 * (switch_wait()); else the early store takes the record meanwhile.
	 */
	gated = ret == 0 && pk__gate_enter();
	while (!gated && switch_wait(&until))
		gated = pk__gate_enter();
	errno = err;
	ret = vprintk(mod, level, fmt, ap, !gated);
	if (gated)
		pk__gate_exit();
	errno = err;
	return ret;
}

/*
 * CALL SITES (pk_printk_site(), printk.h "STATIC PACKAGING")
 *
 * A site's state word: NEW (zero, as the static storage starts), BUSY
 * while one thread classifies its format, then PACKED or VARIADIC for
 * good.
 *   site:A  the classifying thread writes fmt and cl, then stores the
 *           state with release; a caller loads it with acquire and reads
 *           fmt and cl only when it saw PACKED: it sees them whole.
 *           The state only ever leaves NEW through the CAS, so one thread
 *           writes them, once.  A caller that finds BUSY (another thread,
 *           or a signal handler interrupting the classifier on its own
 *           thread) takes the variadic path this once.
 */
enum { SITE_NEW = 0, SITE_BUSY, SITE_PACKED, SITE_VARIADIC };

struct site {
	_Atomic unsigned state;
	const char *fmt;
	struct pk__site_class cl;
};
_Static_assert(sizeof(struct site) <= sizeof(struct pk_site), "struct pk_site holds a site");
_Static_assert(_Alignof(struct site) <= _Alignof(struct pk_site), "struct pk_site's alignment");

static bool classify_site(struct site *s, const char *fmt, const unsigned char *sig, unsigned n)
{
	unsigned want = SITE_NEW;
	bool ok;

	/* Relaxed: the CAS only elects the writer; site:A publishes. */
	if (!atomic_compare_exchange_strong_explicit(&s->state, &want, SITE_BUSY,
						     memory_order_relaxed, memory_order_relaxed))
		return false;
	s->fmt = fmt;
	ok = n <= PK_SITE_ARGS && pk__site_classify(fmt, &s->cl) == 0 &&
	     pk__site_matches(&s->cl, sig, n);
	/* LMM(site:A) */
	atomic_store_explicit(&s->state, ok ? SITE_PACKED : SITE_VARIADIC, memory_order_release);
	return ok;
}

int pk_printk_site(struct pk_site *site, int level, const char *fmt, const unsigned char *sig,
		   unsigned n, const union pk_arg *args)
{
	return pk_printk_site_mod(NULL, site, level, fmt, sig, n, args);
}

int pk_printk_site_mod(const struct pk_module *mod, struct pk_site *site, int level,
		       const char *fmt, const unsigned char *sig, unsigned n,
		       const union pk_arg *args)
{
	unsigned char pkg[PK_RING_TEXT_MAX];
	struct site *s = (struct site *)site;
	int err = errno, len, ret;
	size_t plen;
	/* LMM(site:A) */
	unsigned st = atomic_load_explicit(&s->state, memory_order_acquire);

	if (__builtin_expect(st != SITE_PACKED, 0) &&
	    (st != SITE_NEW || !classify_site(s, fmt, sig, n)))
		return PK_SITE_VARIADIC;
	/*
	 * Another format at the same site (not a literal after all), a
	 * level pk_printk() must read, or no deferring: the variadic path.
	 */
	if (s->fmt != fmt || level < PK_EMERG || level > PK_DEBUG ||
	    !atomic_load_explicit(&defer_on, memory_order_relaxed))
		return PK_SITE_VARIADIC;
	/* Not set up (pk_printk() initialises), or pk_init() changing the store. */
	if (!pk__gate_enter())
		return PK_SITE_VARIADIC;
	if (panic_suppressed()) {
		ret = -EBUSY;
		goto out;
	}
	if (mod_drops(mod, level, false, fmt)) {
		ret = 0;
		goto out;
	}
	plen = mod ? pk__mod_prefix((char *)pkg, mod) : 0;
	len = pk__site_pack(pkg + plen, PK_RECORD_MAX, fmt, &s->cl, sig, args, err);
	if (len < 0) {
		ret = PK_SITE_VARIADIC;	/* longer than a record: formatted at the call */
		goto out;
	}
	if (__builtin_expect(pk__self.early_stored, 0)) {
		pk__early_settle(pk__self.early_seq);	/* this thread's early ones go first */
		pk__self.early_stored = false;
	}
	ret = store_package(level, pkg, plen, len);
out:
	pk__gate_exit();
	errno = err;
	return ret;
}

int pk_printk(int level, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pk_vprintk(level, fmt, ap);
	va_end(ap);
	return ret;
}

int pk_printk_mod(const struct pk_module *mod, int level, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pk_vprintk_mod(mod, level, fmt, ap);
	va_end(ap);
	return ret;
}

void pk_shutdown(void)
{
	int cancel;

	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) != PK__READY)
		return;
	/* From inside a console's write(): it would free the console under us. */
	if (pk__self.in_console)
		return;
	/* Under init_lock: a fork() meanwhile waits (atfork_prepare()). */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&init_lock);
	lock_mine = true;
	if (atomic_load_explicit(&pk__g.state, memory_order_acquire) != PK__READY) {
		lock_mine = false;
		pthread_mutex_unlock(&init_lock);
		pthread_setcancelstate(cancel, NULL);
		return;
	}
	pk__ring_finalize_last(&pk__g.ring);
	pk__flush_shutdown();
	atomic_store_explicit(&pk__g.state, PK__INITIALIZING, memory_order_release);
	/* Readers of this store see it gone (reader.c, view_enter()). */
	atomic_fetch_add_explicit(&pk__g.store_gen, 1, memory_order_relaxed);
	store_close();
	memset(&pk__g.ring, 0, sizeof(pk__g.ring));
	pk__self.open_valid = false;
	atomic_store_explicit(&pk__g.state, PK__UNINIT, memory_order_release);
	lock_mine = false;
	pthread_mutex_unlock(&init_lock);
	pthread_setcancelstate(cancel, NULL);
}

int pk_stats_get(struct pk_stats *st)
{
	const struct pk_ring *ring = &pk__g.ring;
	const struct pk_ring_hdr *h;

	if (!st)
		return -EINVAL;
	if (!pk__gate_enter())
		return -ENODEV;
	h = ring->h;
	memset(st, 0, sizeof(*st));
	st->first_seq = h->first_seq;
	st->next_seq = atomic_load_explicit(&h->seq_head, memory_order_acquire);
	st->oldest_seq = pk__ring_oldest(ring, false);
	st->stored = st->next_seq - st->first_seq;
	st->overwritten = st->oldest_seq - st->first_seq;
	st->truncated = atomic_load_explicit(&h->truncated, memory_order_relaxed);
	st->lost = atomic_load_explicit(&h->lost, memory_order_relaxed);
	st->reserve_failed = atomic_load_explicit(&h->reserve_failed, memory_order_relaxed);
	st->refused = atomic_load_explicit(&h->refused, memory_order_relaxed);
	st->suppressed = atomic_load_explicit(&h->suppressed, memory_order_relaxed);
	st->eager = atomic_load_explicit(&h->eager, memory_order_relaxed);
	st->data_size = ring->data_size;
	st->desc_count = ring->desc_mask + 1;
	pk__gate_exit();
	return 0;
}

const char *pk_strerror(int err)
{
	const char *desc;

	/* What the error means when libprintk returns it: */
	if (err == INT_MIN)	/* has no negation; no errno is that large */
		return "unknown error";
	switch (err < 0 ? -err : err) {
	case 0:		return "success";
	case ENOBUFS:	return "record lost: the store was overrun while it was written";
	case EAGAIN:	return "try again: libprintk is busy initialising";
	case EALREADY:	return "libprintk is already initialised";
	case ENODEV:	return "libprintk is not initialised";
	case EPROTO:	return "store file has another format version";
	case EBUSY:	return "busy: another thread is panicking; the record was not stored";
	case EPIPE:	return "console closed";
	}
	/*
	 * Every other errno: the C library's description.  Not strerror():
	 * strerrordesc_np() looks nothing up (no locale, no buffer, no lock;
	 * it indexes glibc's constant table), so this stays callable from a
	 * signal handler.  NULL for a number glibc does not know.
	 */
	desc = strerrordesc_np(err < 0 ? -err : err);
	return desc ? desc : "unknown error";
}
