// SPDX-License-Identifier: MIT
/*
 * panic.c - emergency sections, pk_panic() and the crash handler.
 *
 * One thread at a time may panic or handle a crash: the first to set
 * pk__panic_tid.  From then on normal printing stops (printer loops check
 * pk__panicking() at every record boundary) and that thread prints every
 * pending record to every console it can take: at a record boundary, or
 * by force after PANIC_WAIT_NS when the owner is stuck inside write().
 * After a takeover only write_atomic() is used; a console without one is
 * skipped, since nothing can safely interrupt the stuck write().  The
 * console a thread crashed inside gets its crash report last, if at all,
 * and one that faults while the report is printed is left out from then
 * on (flush.c, "THE CRASH PATH'S CONSOLES").
 *
 * Everything here runs in signal handlers: only async-signal-safe calls,
 * plus backtrace(), which is made safe by loading libgcc beforehand.
 * Frames are named from the loaded objects' dynamic symbol tables
 * (symtab.c), not by dladdr(), which takes the loader's lock.
 */
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "flush/flush.h"
#include "format/format.h"
#include "store/store.h"
#include "flush/panic.h"
#include "format/symtab.h"

_Atomic uint32_t pk__panic_tid;

#ifdef PK_COVERAGE
/*
 * Coverage builds only: a process that dies by a signal writes no coverage
 * data, and the crash path is what most needs measuring.  __gcov_dump() is
 * not async-signal-safe; it never runs in a normal build.
 */
void __gcov_dump(void);
#define coverage_dump() __gcov_dump()
#else
#define coverage_dump() ((void)0)
#endif

void pk_emergency_enter(void)
{
	pk__self.emergency++;
}

void pk_emergency_exit(void)
{
	if (pk__self.emergency > 0)
		pk__self.emergency--;
}

static bool ready(void)
{
	return atomic_load_explicit(&pk__g.state, memory_order_acquire) == PK__READY;
}

/*
 * The report as the panicking thread stored it, and its seqs: a writer
 * that another thread left preempted in the middle of a record (before
 * the panic kept the others out of the store) can come back and store
 * into the space the report took, destroying it.  check_report() finds
 * that and writes this copy instead.  Only the panicking thread writes it.
 */
static char report[8192];
static size_t report_len;
static uint64_t report_first[PK_LANES_MAX], report_last[PK_LANES_MAX];
static bool report_stored;

/*
 * Store one line as an emergency record without flushing; before the
 * library is initialised (never done from here: this may be a signal
 * handler), in the early store.  @mine: a line of this thread's report.
 */
static void store_one(const char *text, size_t len, bool mine)
{
	uint64_t seq = PK__NO_SEQ;
	unsigned lane = 0;

	if (ready())
		pk__store(PK_EMERG, 0, text, len, &lane, &seq);
	else
		pk__early_store(PK_EMERG, 0, text, len, NULL);
	if (!mine)
		return;
	if (report_len + len + 1 <= sizeof(report)) {
		memcpy(report + report_len, text, len);
		report_len += len;
		report[report_len++] = '\n';
	}
	/* By lane: the thread may move to another CPU between two lines. */
	if (seq != PK__NO_SEQ && lane < PK_LANES_MAX) {
		if (!report_first[lane] && !report_last[lane])
			report_first[lane] = seq + 1;	/* 0: none yet */
		report_last[lane] = seq;
		report_stored = true;
	}
}

static void store_line(const char *text, size_t len)
{
	store_one(text, len, true);
}

/* After printing: was the report stored intact?  If not, write our copy. */
static void check_report(void)
{
	static const char note[] = "** the crash report was damaged in the store by a writer "
				   "preempted mid-record; as written: **\n";

	unsigned i;
	bool intact = true;

	if (!ready() || !report_stored)
		return;
	for (i = 0; i < pk__st.lanes.n; i++)
		if (report_first[i] &&
		    !pk__flush_seqs_intact(i, report_first[i] - 1, report_last[i]))
			intact = false;
	if (intact)
		return;
	pk__flush_write_all(note, sizeof(note) - 1);
	pk__flush_write_all(report, report_len);
}

static int fmt_line(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = pk__stbsp_vsnprintf(buf, (int)size, fmt, ap);
	va_end(ap);
	if (n < 0)
		return 0;
	return (size_t)n < size ? n : (int)size - 1;
}

static void store_backtrace(int skip)
{
	void *frames[64];
	char line[256];
	int i, n = backtrace(frames, 64);

	store_line("Call trace:", 11);
	for (i = skip; i < n; i++)
		store_line(line, pk__sym_frame(line, sizeof(line), i - skip, (uintptr_t)frames[i]));
}

/* Become the one panicking thread.  false: another thread already is. */
static bool panic_begin(uint32_t tid)
{
	uint32_t expect = 0;

	/*
	 * Printers read pk__panic_tid with acquire (pk__panicking()) at each
	 * record boundary; from the moment they see it they leave the
	 * consoles to us.  seq_cst, not only release: LMM(gate:D) in
	 * printk.c, the store-then-load pattern against callers entering a
	 * store gate (pk__gates_quiesce()).  The acquire side of a failed CAS
	 * lets a second panicking thread see who won.
	 */
	return atomic_compare_exchange_strong_explicit(&pk__panic_tid, &expect, tid,
						       memory_order_seq_cst, memory_order_acquire) ||
	       expect == tid;
}

/* Another thread panics: give it time to print, then go down ourselves. */
static void wait_for_other_panic(void)
{
	struct timespec ts = { 10, 0 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/*
 * Wait (bounded: QUIESCE_MS) for callers that were inside pk_printk()
 * when the panic began and passed its panic check (LMM(gate:D) in
 * printk.c): their pk_printk() returns success, so their records must be
 * committed before the flush meets them, or the flush would skip them as
 * records in progress (counted, but not printed) and never come back.
 * Then print everything, and once more if a record was reserved during
 * that flush.  The wait comes first: a thread parked inside pk_printk()
 * for good, or stuck in a console's write(), delays the first output by
 * QUIESCE_MS, and nothing else does.
 */
#define QUIESCE_MS	100

/* The sum of the lanes' seq_heads: it grows with every record reserved. */
static uint64_t heads_sum(void)
{
	uint64_t sum = 0;
	unsigned i;

	for (i = 0; i < pk__st.lanes.n; i++)
		sum += pk__ring_next_seq(pk__lane(i));
	return sum;
}

static void flush_everything(void)
{
	uint64_t next;

	if (!ready()) {
		/* No console yet: standard error, as the kernel's early console. */
		pk__early_print_raw(STDERR_FILENO);
		return;
	}
	pk__gates_quiesce(QUIESCE_MS);
	next = heads_sum();
	pk__store_finalize_last();
	pk__flush_direct(PK_PRIO_PANIC);
	if (heads_sum() == next)
		return;		/* nothing reserved since the flush began */
	pk__store_finalize_last();
	pk__flush_direct(PK_PRIO_PANIC);
}

_Noreturn void pk_panic(const char *fmt, ...)
{
	uint32_t tid = pk__tid();
	char buf[PK_RECORD_MAX + 1], line[PK_RECORD_MAX + 64];
	struct sigaction dfl;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = pk__stbsp_vsnprintf(buf, (int)sizeof(buf), fmt ? fmt : "(null)", ap);
	va_end(ap);
	n = n < 0 ? 0 : n < (int)sizeof(buf) ? n : (int)sizeof(buf) - 1;
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';

	if (atomic_load_explicit(&pk__panic_tid, memory_order_acquire) == tid)
		goto die;		/* panic while panicking: just go */
	if (!panic_begin(tid)) {
		/* Someone else panics: leave our reason in the store and wait. */
		store_one(buf, (size_t)n, false);
		wait_for_other_panic();
		goto die;
	}
	pk__self.emergency++;
	pk__flush_panic_skip(pk__self.in_con, pk__self.in_con_atomic);
	store_line(line, (size_t)fmt_line(line, sizeof(line), "Kernel panic - not syncing: %s", buf));
	store_backtrace(1);
	flush_everything();
	check_report();
die:
	coverage_dump();
	/* The abort() below must not run our crash handler again. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGABRT, &dfl, NULL);
	abort();
}

/* ---- crash handler ---- */

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

/*
 * The program's own handlers, installed before ours (pk_crash_handler_install()
 * keeps what it replaced): after the report the signal goes on to them.
 * Written before our handler is installed, read only by it.
 */
static struct sigaction prev_action[PK__ARRAY_SIZE(crash_signals)];
static bool prev_handler[PK__ARRAY_SIZE(crash_signals)];

/*
 * Hand @sig on to the handler the program had installed: put it back and
 * let the signal come again.  A fault the kernel raised for an
 * instruction comes again when we return (the instruction is retried);
 * any other (abort(), kill) is raised again, and stays pending until we
 * return (the kernel blocks a signal while its handler runs).  false: the
 * program had none.
 */
static bool chain(int sig, const siginfo_t *si)
{
	size_t i;

	for (i = 0; i < PK__ARRAY_SIZE(crash_signals); i++) {
		if (crash_signals[i] != sig || !prev_handler[i])
			continue;
		if (sigaction(sig, &prev_action[i], NULL) < 0)
			return false;
		coverage_dump();
		if (!si || si->si_code <= 0 || sig == SIGABRT)
			raise(sig);
		return true;
	}
	return false;
}

static const char *sig_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV (segmentation fault)";
	case SIGBUS: return "SIGBUS (bus error)";
	case SIGILL: return "SIGILL (illegal instruction)";
	case SIGFPE: return "SIGFPE (arithmetic exception)";
	case SIGABRT: return "SIGABRT (abort)";
	default: return "signal";
	}
}

static void unblock_crash_signals(void)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < PK__ARRAY_SIZE(crash_signals); i++)
		sigaddset(&set, crash_signals[i]);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static void reraise(int sig)
{
	struct sigaction dfl;
	sigset_t set;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	coverage_dump();
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	/*
	 * A fault raised by an instruction faults again when we return, now
	 * with the default action, and dumps core at the right place.  Other
	 * signals (abort(), kill) need raising.
	 */
	raise(sig);
}

static void crash_handler(int sig, siginfo_t *si, void *uctx)
{
	uint32_t tid = pk__tid();
	char line[256];
	int saved = errno, l;

	(void)uctx;
	if (atomic_load_explicit(&pk__panic_tid, memory_order_acquire) == tid) {
		/*
		 * A fault inside a console's driver while we report: back to
		 * the guard, which leaves that console out (flush.c, "THE
		 * CRASH PATH'S CONSOLES").  Any other crash inside our own
		 * crash handling: go down.
		 */
		if (pk__panic_jmp_armed) {
			pk__panic_jmp_armed = 0;
			siglongjmp(pk__panic_jmp, 1);
		}
		reraise(sig);
		return;
	}
	if (!panic_begin(tid)) {
		wait_for_other_panic();
		reraise(sig);
		return;
	}
	pk__self.emergency++;
	/* The console we crashed in comes last: its driver may well fault again. */
	pk__flush_panic_skip(pk__self.in_con, pk__self.in_con_atomic);
	/*
	 * A fault while its signal is blocked kills at once: unblock them,
	 * so that a console faulting while we report reaches the guard.
	 */
	unblock_crash_signals();
	l = fmt_line(line, sizeof(line), "Unable to handle %s at address 0x%lx in thread %u (code %d)",
		     sig_name(sig), si ? (unsigned long)(uintptr_t)si->si_addr : 0ul, tid, si ? si->si_code : 0);
	store_line(line, (size_t)l);
	store_backtrace(1);
	flush_everything();
	check_report();
	errno = saved;
	if (!chain(sig, si))
		reraise(sig);
}

/*
 * ALTERNATE SIGNAL STACKS
 *
 * A stack overflow faults with no stack left to run a handler on, so the
 * crash handler runs on an alternate signal stack (SA_ONSTACK), and
 * sigaltstack() is per thread.  Each thread gets its own, lazily: the
 * installing thread at once, any other at its first pk_printk() (or, for
 * printer threads, their first record) after the handler was installed
 * (pk__crash_stack_lazy()).  A thread that never logs gets none, and its
 * stack overflow kills the process with no report; a thread that has a
 * stack of the program's keeps it.
 *
 * Each stack is CRASH_STACK bytes of its own mapping with a PROT_NONE
 * guard page below it (stacks grow down), so that a handler that
 * overflows it faults instead of writing over whatever lies below.
 *
 * The mapping is freed when its thread exits, by a thread-specific key's
 * destructor.  The lazy first call may be inside a signal handler, so the
 * key is used only when pthread_setspecific() there is a plain store
 * (glibc: one of the first 32 keys, as the gate slots' key in core/gate.c);
 * with a later key, only the installing thread gets a stack, since others
 * would leak theirs at exit.
 */
#define CRASH_STACK	(64 * 1024)

static pthread_key_t stack_key;
static _Atomic bool stack_key_ok;
static size_t stack_guard;	/* the page size, set before pk__crash_stack_gen */

/* A thread exits: unhook and free its crash stack @p (the guard page's address). */
static void stack_free(void *p)
{
	stack_t cur, off;

	if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE) &&
	    cur.ss_sp == (char *)p + stack_guard) {
		if (cur.ss_flags & SS_ONSTACK)
			return;		/* cannot be: exiting on it; keep it then */
		memset(&off, 0, sizeof(off));
		off.ss_flags = SS_DISABLE;
		if (sigaltstack(&off, NULL) < 0)
			return;
	}
	munmap(p, stack_guard + CRASH_STACK);
}

/* Unloaded: no destructor may stay registered in code about to be unmapped. */
__attribute__((destructor)) static void stacks_fini(void)
{
	if (atomic_exchange_explicit(&stack_key_ok, false, memory_order_relaxed))
		pthread_key_delete(stack_key);
}

/* Map a crash stack with its guard page and make it this thread's.  @keep: key it. */
static void stack_make(bool keep)
{
	size_t total = stack_guard + CRASH_STACK;
	stack_t ss, old;
	char *p;

	if (sigaltstack(NULL, &old) < 0 || !(old.ss_flags & SS_DISABLE))
		return;		/* the program's own, or one of ours already */
	p = mmap(NULL, total, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (p == MAP_FAILED)
		return;
	memset(&ss, 0, sizeof(ss));
	ss.ss_sp = p + stack_guard;
	ss.ss_size = CRASH_STACK;
	if (mprotect(p, stack_guard, PROT_NONE) < 0 || sigaltstack(&ss, NULL) < 0) {
		munmap(p, total);
		return;
	}
	if (keep)
		pthread_setspecific(stack_key, p);
}

static void crash_stack_thread(void)
{
	/*
	 * Acquire: stack_guard and the key, set before the generation was
	 * published (release in pk_crash_handler_install()).
	 */
	uint32_t gen = atomic_load_explicit(&pk__crash_stack_gen, memory_order_acquire);

	pk__self.stack_gen = gen;
	/* Relaxed: stack_key_ok is ordered by the acquire above. */
	if (gen && atomic_load_explicit(&stack_key_ok, memory_order_relaxed))
		stack_make(true);
}

int pk_crash_handler_install(void)
{
	static _Atomic int stack_set;
	struct sigaction sa;
	void *warm[2];
	size_t i;

	/* backtrace() loads libgcc on first use: do that now, not in the handler. */
	backtrace(warm, 2);
	if (!atomic_exchange(&stack_set, 1)) {
		long page = sysconf(_SC_PAGESIZE);

		stack_guard = page > 0 ? (size_t)page : 4096;
		if (pthread_key_create(&stack_key, stack_free) == 0)
			atomic_store_explicit(&stack_key_ok, stack_key < 32, memory_order_relaxed);
		/* The installing thread survives its stack overflow in any case. */
		stack_make(atomic_load_explicit(&stack_key_ok, memory_order_relaxed));
		pk__self.stack_gen = 1;
		/* The hook first: a thread that sees the generation finds it (core/state.c). */
		pk__crash_stack_register(crash_stack_thread);
		/* Release: stack_guard and the key, for crash_stack_thread()'s acquire. */
		atomic_store_explicit(&pk__crash_stack_gen, 1, memory_order_release);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = crash_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < PK__ARRAY_SIZE(crash_signals); i++) {
		struct sigaction old;

		/* The program's own handler, kept to chain to (once: not ours again). */
		if (sigaction(crash_signals[i], NULL, &old) < 0)
			return -errno;
		if (!((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == crash_handler)) {
			prev_handler[i] = (old.sa_flags & SA_SIGINFO) ||
					  (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
			prev_action[i] = old;
		}
		if (sigaction(crash_signals[i], &sa, NULL) < 0)
			return -errno;
	}
	return 0;
}
