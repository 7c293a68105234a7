// SPDX-License-Identifier: MIT
/*
 * The flush modes under the storm of the 2017 printk discussion: more
 * threads than cores printing to one slow console.  Assertions are on
 * what each mode promises whatever the scheduler does (how long one
 * thread keeps the console while another waits, who may print), never on
 * wall-clock times or on how the printing was shared out: the shares are
 * printed, for the reader.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "flush/flush.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

#define STORMERS 8

static _Atomic int storm_stop;
static _Atomic uint64_t storm_calls;
static _Atomic uint32_t stormer_tids[STORMERS];

/*
 * @arg: this stormer's slot in stormer_tids; its index is the writer
 * number in its self-checking lines (tu_make_text: writer, counter,
 * checksum), which check_text() parses back.
 */
static void *stormer(void *arg)
{
	_Atomic uint32_t *slot = arg;
	unsigned w = (unsigned)(slot - stormer_tids);
	char text[96];
	uint64_t i;

	atomic_store(slot, (uint32_t)syscall(SYS_gettid));
	for (i = 0; !atomic_load(&storm_stop); i++) {
		tu_make_text(text, sizeof(text), w, i, 36);	/* about 80 bytes a line */
		pk_info("%s\n", text);
	}
	atomic_fetch_add(&storm_calls, i);
	return NULL;
}

/* Printer shares as they stood when the storm was told to stop. */
static struct pk_printer_share storm_shares[600];
static int storm_nshares;

/*
 * Stints: runs of consecutive console writes by one thread, as the capture
 * console sees them (stint_hook).  The longest, as it stood when the storm
 * was told to stop.
 */
static _Atomic uint32_t stint_tid;
static _Atomic unsigned stint_len, stint_max, stint_writes;
static unsigned storm_stint_max;

static void stint_note(void)
{
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	unsigned n, m;

	atomic_fetch_add(&stint_writes, 1);
	if (atomic_exchange(&stint_tid, tid) != tid)
		atomic_store(&stint_len, 0);
	n = atomic_fetch_add(&stint_len, 1) + 1;
	m = atomic_load(&stint_max);
	while (n > m && !atomic_compare_exchange_weak(&stint_max, &m, n))
		;
}

static void stint_hook(struct tu_capture *cap)
{
	(void)cap;
	stint_note();
}

static void stint_reset(void)
{
	atomic_store(&stint_tid, 0);
	atomic_store(&stint_len, 0);
	atomic_store(&stint_max, 0);
	atomic_store(&stint_writes, 0);
}

/*
 * Storm for @secs seconds or, with @writes, until the console has seen
 * that many writes (a stint_hook console; however slow the machine).
 */
static void storm_for(double secs, unsigned writes)
{
	pthread_t t[STORMERS];
	int i;

	atomic_store(&storm_stop, 0);
	atomic_store(&storm_calls, 0);
	stint_reset();
	for (i = 0; i < STORMERS; i++)
		pthread_create(&t[i], NULL, stormer, (void *)&stormer_tids[i]);
	if (writes)
		assert_true(tu_wait_until(atomic_load(&stint_writes) >= writes, 120000));
	else
		usleep((useconds_t)(secs * 1e6));	/* how long the storm lasts */
	/*
	 * Who printed during the storm.  Afterwards the backlog (at most one
	 * store's worth) is drained by whoever holds the console then: that is
	 * the last-caller problem the handoff budget answers, not the storm.
	 */
	storm_nshares = pk_printer_shares(storm_shares, 600);
	storm_stint_max = atomic_load(&stint_max);
	atomic_store(&storm_stop, 1);
	for (i = 0; i < STORMERS; i++)
		pthread_join(t[i], NULL);
}

static void storm(double secs)
{
	storm_for(secs, 0);
}

/* @budget_us 0: unbounded, as Linux 4.16. */
static void init_mode(enum pk_mode mode, unsigned budget_us)
{
	struct pk_config cfg;

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.mode = mode;
	cfg.buffer_size = 64 << 10;
	cfg.print_budget_us = budget_us ? budget_us : PK_PRINT_BUDGET_UNBOUNDED;
	assert_int_equal(pk_init(&cfg), 0);
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	return 0;
}

/* Top printer share in percent, and how many threads printed. */
static unsigned top_share(int *nthreads, bool *callers_printed)
{
	struct pk_printer_share *sh = storm_shares;
	uint64_t total = 0, top = 0;
	int i, n = storm_nshares;

	*callers_printed = false;
	for (i = 0; i < n; i++) {
		total += sh[i].bytes;
		if (sh[i].bytes > top)
			top = sh[i].bytes;
		if (!sh[i].printer_thread)
			*callers_printed = true;
	}
	*nthreads = n;
	return total ? (unsigned)(top * 100 / total) : 0;
}

/*
 * Completeness: records printed + filtered + dropped == all stored.  First,
 * before any flush (which would print a stranded backlog itself): the
 * console caught up, or is still printing until it does.
 */
static void check_complete(struct pk_console *con)
{
	struct pk_console_stats st;
	struct pk_stats ps;

	assert_true(tu_printing_or_caught_up(&con, 1, 10000));
	assert_int_equal(pk_flush(60000), 0);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	assert_int_equal(pk_stats_get(&ps), 0);
	print_message("console: %llu printed, %llu dropped, %llu filtered of %llu stored\n",
		      (unsigned long long)st.records, (unsigned long long)st.dropped,
		      (unsigned long long)st.skipped, (unsigned long long)ps.stored);
	assert_int_equal(st.records + st.dropped + st.skipped, ps.stored);
	assert_int_equal(st.next_seq, ps.next_seq);
}

/*
 * The text a storm of self-checking lines left on @cap (all the store's
 * records are such lines, from @writers writers): none corrupt, none
 * twice, each writer's in order, nothing else; and the lines plus the
 * drop notices' counts account for every record stored.  After
 * check_complete().
 */
static void check_text(struct pk_console *con, struct tu_capture *cap, unsigned writers)
{
	struct pk_console_stats st;
	struct tu_lines l;
	struct pk_stats ps;
	char *text = tu_capture_text(cap);
	int ret = tu_parse_lines(text, writers, &l);

	free(text);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	assert_int_equal(pk_stats_get(&ps), 0);
	print_message("text: %zu lines, %zu drop notices for %llu records, %zu corrupt, "
		      "%zu repeated, %zu out of order, %zu other; %llu stored\n", l.lines,
		      l.notices, (unsigned long long)l.dropped, l.corrupt, l.dups, l.disorder,
		      l.other, (unsigned long long)ps.stored);
	assert_int_equal(ret, 0);
	assert_int_equal(l.other, 0);
	assert_int_equal(l.lines, st.records);
	assert_int_equal(l.dropped, st.dropped);
	assert_int_equal(l.lines + l.dropped, ps.stored);
}

/*
 * A slow line: 120 us per write, about 700 KB/s for 80-byte lines; ten
 * times slower under ThreadSanitizer, whose producers are that much slower.
 */
#define SLOW_US (tu_sanitized_thread() ? 1200u : 120u)

/*
 * Legacy: whoever holds the console prints until nothing is pending, so
 * under a storm faster than the console one stint lasts as long as the
 * storm does.  The invariant: the longest stint grows with the run (a
 * storm that lasts three times as many console writes has a longer one).
 * Which thread held it, and how the rest was shared, is printed only.
 */
static unsigned legacy_storm(struct tu_capture *cap, unsigned writes)
{
	struct pk_console *con;
	unsigned share;
	int n;
	bool callers;

	init_mode(PK_MODE_LEGACY, 0);
	pthread_mutex_lock(&cap->lock);
	cap->len = 0;		/* this run's text only */
	cap->writes = 0;
	pthread_mutex_unlock(&cap->lock);
	con = pk_console_register(&tu_capture_ops, cap, -1);
	pk_flush_stats_reset();
	storm_for(0, writes);
	check_complete(con);
	check_text(con, cap, STORMERS);
	share = top_share(&n, &callers);
	print_message("legacy, a storm of %u console writes: longest stint %u writes, "
		      "top printer share %u%% over %d threads\n", writes, storm_stint_max, share, n);
	pk_console_unregister(con);
	pk_shutdown();
	return storm_stint_max;
}

static void test_legacy_stint_grows(void **state)
{
	struct tu_capture *cap = tu_capture_new(SLOW_US);
	unsigned writes = (unsigned)(tu_seconds(0.2) * 1e6 / SLOW_US), short_stint, long_stint;

	(void)state;
	cap->hook = stint_hook;
	short_stint = legacy_storm(cap, writes);
	long_stint = legacy_storm(cap, 3 * writes);
	assert_true(long_stint > short_stint);
	tu_capture_free(cap);
}

/* Handoff: writes of the thread that holds the console while a waiter waits. */
static _Atomic uint32_t run_tid;
static _Atomic unsigned run_with_waiter, max_run_with_waiter, writes_with_waiter;

static _Atomic uint64_t run_handoffs;

/*
 * Called at the start of each console write.  A "run" is one holding of
 * the console lock: it ends when another thread writes or a handoff
 * happened (the lock may come back to the same thread later).
 */
static void handoff_hook(struct tu_capture *cap)
{
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	struct pk_flush_stats fs;
	unsigned n, m;

	(void)cap;
	stint_note();
	pk_flush_stats_get(&fs);
	if (atomic_exchange(&run_tid, tid) != tid ||
	    atomic_exchange(&run_handoffs, fs.handoffs) != fs.handoffs)
		atomic_store(&run_with_waiter, 0);
	if (!pk__flush_waiter_present())
		return;
	atomic_fetch_add(&writes_with_waiter, 1);
	n = atomic_fetch_add(&run_with_waiter, 1) + 1;
	m = atomic_load(&max_run_with_waiter);
	while (n > m && !atomic_compare_exchange_weak(&max_run_with_waiter, &m, n))
		;
}

static void test_handoff_spreads_printing(void **state)
{
	struct tu_capture *cap;
	struct pk_console *con;
	struct pk_flush_stats fs;
	unsigned share, attempt;
	int n;
	bool callers;

	(void)state;
	/*
	 * That a waiter came while a write was under way is what makes the
	 * bound below say something.  A storm in which every holder began its
	 * write before the next caller queued (once, under AddressSanitizer)
	 * shows nothing either way: it is run again, three storms at most.
	 */
	for (attempt = 0;; attempt++) {
		cap = tu_capture_new(SLOW_US);
		init_mode(PK_MODE_HANDOFF, 0);
		atomic_store(&writes_with_waiter, 0);
		atomic_store(&max_run_with_waiter, 0);
		cap->hook = handoff_hook;
		con = pk_console_register(&tu_capture_ops, cap, -1);
		pk_flush_stats_reset();
		storm(tu_seconds(1.5));
		check_complete(con);
		check_text(con, cap, STORMERS);
		share = top_share(&n, &callers);
		assert_int_equal(pk_flush_stats_get(&fs), 0);
		print_message("handoff: top printer share %u%% over %d threads, %llu handoffs, "
			      "longest stint %u writes, longest run while a waiter waited: %u "
			      "writes (%u writes with a waiter)\n",
			      share, n, (unsigned long long)fs.handoffs, storm_stint_max,
			      atomic_load(&max_run_with_waiter), atomic_load(&writes_with_waiter));
		if (atomic_load(&writes_with_waiter) > 0 || attempt == 2)
			break;
		pk_console_unregister(con);
		tu_capture_free(cap);
		pk_shutdown();
	}
	/*
	 * While another caller waits, the holder finishes the record in hand
	 * and hands over: at most two writes, that record and the drop notice
	 * that may precede it.  (That a waiter came and the console was
	 * handed over at all is what makes this say something.)
	 */
	assert_true(atomic_load(&writes_with_waiter) > 0);
	assert_true(fs.handoffs > 0);
	assert_true(atomic_load(&max_run_with_waiter) <= 2);
	print_message("handoff: most records one call printed: %llu\n",
		      (unsigned long long)fs.max_call_records);
	pk_console_unregister(con);
	tu_capture_free(cap);
}

static void test_thread_callers_never_print(void **state)
{
	struct tu_capture *cap = tu_capture_new(SLOW_US);
	struct pk_console *con;
	struct pk_flush_stats fs;
	unsigned share;
	size_t w, writes, by_callers = 0;
	int i, n;
	bool callers;

	(void)state;
	init_mode(PK_MODE_THREAD, 0);
	con = pk_console_register(&tu_capture_ops, cap, -1);
	pk_flush_stats_reset();
	storm(tu_seconds(1.0));
	check_complete(con);
	check_text(con, cap, STORMERS);
	share = top_share(&n, &callers);
	print_message("thread: top printer share %u%% over %d threads\n", share, n);
	assert_int_equal(pk_flush_stats_get(&fs), 0);
	assert_false(callers);
	assert_int_equal(n, 1);
	assert_int_equal(fs.direct_records, 0);
	assert_true(fs.thread_records > 0);
	/* Every write the console saw, storm and drain: none by a caller. */
	pthread_mutex_lock(&cap->lock);
	writes = cap->writes;
	for (w = 0; w < cap->writes; w++)
		for (i = 0; i < STORMERS; i++)
			if (cap->tids[w] == atomic_load(&stormer_tids[i]))
				by_callers++;
	pthread_mutex_unlock(&cap->lock);
	assert_true(writes > 0);
	assert_int_equal(by_callers, 0);
	pk_console_unregister(con);
	tu_capture_free(cap);
}

/* Handoff with a budget: a lone caller does not print the whole backlog. */
static int records_by(bool printer_thread)
{
	struct pk_printer_share sh[16];
	int i, n = pk_printer_shares(sh, 16), sum = 0;

	for (i = 0; i < n && i < 16; i++)
		if ((sh[i].printer_thread != 0) == printer_thread)
			sum += (int)sh[i].records;
	return sum;
}

static void test_handoff_budget(void **state)
{
	struct tu_capture *cap = tu_capture_new(500);
	struct pk_console *con;
	struct pk_console_stats st;
	struct pk_flush_stats fs;
	int i, by_caller;

	(void)state;
	init_mode(PK_MODE_HANDOFF, 2000);
	pk_flush_stats_reset();
	for (i = 0; i < 200; i++)	/* a backlog, before any console exists */
		pk_info("backlog record %d\n", i);
	con = pk_console_register(&tu_capture_ops, cap, -1);
	pk_info("the caller that finds the backlog\n");
	by_caller = records_by(false);
	/* Let the printer thread drain it; do not print ourselves. */
	tu_wait_until((pk_console_stats_get(con, &st), st.next_seq == 201), 60000);
	assert_int_equal(pk_flush_stats_get(&fs), 0);
	print_message("budget: %llu deferrals, %d records by the caller, %d by the printer thread\n",
		      (unsigned long long)fs.budget_deferrals, by_caller, records_by(true));
	assert_int_equal(st.next_seq, 201);
	assert_true(fs.budget_deferrals >= 1);
	assert_true(by_caller < 100);
	assert_true(records_by(true) > 100);
	check_complete(con);
	pk_console_unregister(con);
	tu_capture_free(cap);
}

/* A console whose write() never returns (until the test lets it go). */
static int gate[2];
static _Atomic int stuck_inside, stuck_writes_done;

static long stuck_write(void *ctx, const char *buf, size_t len)
{
	char c;
	long ret = (long)len;

	(void)ctx;
	(void)buf;
	atomic_store(&stuck_inside, 1);
	if (read(gate[0], &c, 1) != 1)
		ret = -EIO;
	atomic_fetch_add(&stuck_writes_done, 1);
	return ret;
}

static const struct pk_console_ops stuck_ops = { .name = "stuck", .write = stuck_write };

static void *print_one(void *arg)
{
	(void)arg;
	pk_info("this call gets stuck inside the console\n");
	return NULL;
}

static void run_stuck(enum pk_mode mode)
{
	struct tu_capture *cap = tu_capture_new(0);
	struct pk_console *good, *bad;
	struct pk_flush_stats fs;
	pthread_t t;
	char *text;
	int i;

	init_mode(mode, 0);
	assert_int_equal(pipe(gate), 0);
	atomic_store(&stuck_inside, 0);
	atomic_store(&stuck_writes_done, 0);
	good = pk_console_register(&tu_capture_ops, cap, -1);
	bad = pk_console_register(&stuck_ops, NULL, -1);
	pk_flush_stats_reset();
	pthread_create(&t, NULL, print_one, NULL);
	assert_true(tu_wait_until(atomic_load(&stuck_inside), 60000));
	/* Other callers return: at most one waits the bound, the rest see it stuck. */
	for (i = 0; i < 20; i++)
		assert_true(pk_info("caller %d goes on\n", i) > 0);
	assert_int_equal(pk_flush_stats_get(&fs), 0);
	print_message("stuck owner: %llu wait timeouts, %llu stuck skips\n",
		      (unsigned long long)fs.wait_timeouts, (unsigned long long)fs.stuck_skips);
	if (mode == PK_MODE_HANDOFF) {
		assert_int_equal(fs.wait_timeouts, 1);
		assert_true(fs.stuck_skips >= 19);
	}
	if (mode == PK_MODE_THREAD) {
		/* The other console keeps printing. */
		assert_int_equal(pk_flush(50), -ETIMEDOUT);
		assert_true(tu_wait_until(({
			text = tu_capture_text(cap);
			bool there_ = strstr(text, "caller 19 goes on") != NULL;
			free(text);
			there_;
		}), 60000));
		/* Unregistering it gives up after a bound instead of hanging. */
		assert_int_equal(pk_console_unregister(bad), -EBUSY);
		bad = NULL;
	}
	/* Let it go: everything comes out. */
	for (i = 0; i < 1000; i++)
		if (write(gate[1], "x", 1) != 1)
			break;
	assert_int_equal(pk_flush(10000), 0);
	pthread_join(t, NULL);
	text = tu_capture_text(cap);
	assert_non_null(strstr(text, "caller 19 goes on"));
	free(text);
	pk_console_unregister(good);
	if (bad)
		assert_int_equal(pk_console_unregister(bad), 0);
	/* The detached printer may still be on its way out of read(). */
	assert_true(tu_wait_until(atomic_load(&stuck_writes_done), 60000));
	close(gate[0]);
	close(gate[1]);
	tu_capture_free(cap);
}

static void test_stuck_handoff(void **state) { (void)state; run_stuck(PK_MODE_HANDOFF); }
static void test_stuck_legacy(void **state) { (void)state; run_stuck(PK_MODE_LEGACY); }
static void test_stuck_thread(void **state) { (void)state; run_stuck(PK_MODE_THREAD); }

/* A signal handler calling pk_printk on the thread that is printing. */
static _Atomic int reentered;

static void on_usr1(int sig)
{
	(void)sig;
	pk_info("from the signal handler\n");
	atomic_store(&reentered, 1);
}

static void reenter_hook(struct tu_capture *cap)
{
	(void)cap;
	if (!atomic_load(&reentered))
		raise(SIGUSR1);
}

static void run_reentry(enum pk_mode mode)
{
	struct tu_capture *cap = tu_capture_new(0);
	struct pk_console *con;
	struct sigaction sa;
	char *text;

	init_mode(mode, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	atomic_store(&reentered, 0);
	cap->hook = reenter_hook;
	con = pk_console_register(&tu_capture_ops, cap, -1);
	pk_info("the owner's record\n");
	assert_int_equal(pk_flush(5000), 0);
	assert_true(atomic_load(&reentered));
	text = tu_capture_text(cap);
	assert_non_null(strstr(text, "the owner's record"));
	assert_non_null(strstr(text, "from the signal handler"));
	free(text);
	pk_console_unregister(con);
	tu_capture_free(cap);
	signal(SIGUSR1, SIG_DFL);
}

static void test_reentry_handoff(void **state) { (void)state; run_reentry(PK_MODE_HANDOFF); }
static void test_reentry_legacy(void **state) { (void)state; run_reentry(PK_MODE_LEGACY); }

/* Emergency records are printed by the caller before pk_printk returns. */
static void run_emergency(enum pk_mode mode)
{
	struct tu_capture *cap = tu_capture_new(0);
	struct pk_console *con;
	char *text;

	init_mode(mode, 0);
	con = pk_console_register(&tu_capture_ops, cap, -1);
	pk_emergency_enter();
	pk_emergency_enter();
	pk_crit("in an emergency\n");
	pk_emergency_exit();
	text = tu_capture_text(cap);	/* no flush: it must be there already */
	assert_non_null(strstr(text, "in an emergency"));
	free(text);
	pk_emergency_exit();
	pk_emergency_exit();		/* unbalanced exit is harmless */
	pk_console_unregister(con);
	tu_capture_free(cap);
}

static void test_emergency_thread(void **state) { (void)state; run_emergency(PK_MODE_THREAD); }
static void test_emergency_handoff(void **state) { (void)state; run_emergency(PK_MODE_HANDOFF); }
static void test_emergency_legacy(void **state) { (void)state; run_emergency(PK_MODE_LEGACY); }

/*
 * Emergency sections while other threads keep printing: direct printing
 * takes the console at record boundaries from the normal printers and
 * gives it back; every record comes out exactly once, in any mode.  The
 * others are paced so that the console keeps up: under a flood faster than
 * the console, an emergency record can be overwritten before its turn
 * (printing stays in order, as in the kernel) and is then reported in the
 * drop notice instead.
 */
static void *paced_stormer(void *arg)
{
	uint64_t i;

	(void)arg;
	for (i = 0; !atomic_load(&storm_stop); i++) {
		pk_info("paced record %llu\n", (unsigned long long)i);
		usleep(200);
	}
	return NULL;
}

static void *emergency_loop(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 200; i++) {
		pk_emergency_enter();
		pk_crit("emergency %d\n", i);
		pk_emergency_exit();
		usleep(500);
	}
	atomic_store(&storm_stop, 1);
	return NULL;
}

static void run_emergency_storm(enum pk_mode mode)
{
	struct tu_capture *cap = tu_capture_new(0);
	struct pk_console_stats st;
	struct pk_console *con;
	pthread_t t[4], em;
	char *text, want[32];
	size_t n, missing = 0;
	int i;

	init_mode(mode, 0);
	con = pk_console_register(&tu_capture_ops, cap, -1);
	atomic_store(&storm_stop, 0);
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, paced_stormer, NULL);
	pthread_create(&em, NULL, emergency_loop, NULL);
	pthread_join(em, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	check_complete(con);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	text = tu_capture_text(cap);
	for (i = 0; i < 200; i++) {
		snprintf(want, sizeof(want), "] emergency %d\n", i);
		n = tu_count(text, want);
		assert_true(n <= 1);	/* never twice */
		missing += n == 0;
	}
	free(text);
	/*
	 * The pacing keeps the console ahead of the storm on an idle machine,
	 * but a busy one may leave it behind: an emergency record overwritten
	 * before its turn is then in a drop notice, never silently gone.
	 */
	print_message("emergency storm: %zu of 200 emergency records missing, %llu records "
		      "dropped\n", missing, (unsigned long long)st.dropped);
	assert_true(missing <= st.dropped);
	pk_console_unregister(con);
	tu_capture_free(cap);
}

static void test_emergency_storm_handoff(void **state) { (void)state; run_emergency_storm(PK_MODE_HANDOFF); }
static void test_emergency_storm_legacy(void **state) { (void)state; run_emergency_storm(PK_MODE_LEGACY); }
static void test_emergency_storm_thread(void **state) { (void)state; run_emergency_storm(PK_MODE_THREAD); }

/* Registering and unregistering consoles while a storm prints. */
static void *churn(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 60; i++) {
		struct tu_capture *cap = tu_capture_new(0);
		struct pk_console *c = pk_console_register(&tu_capture_ops, cap, -1);

		TU_CHECK(c != NULL);
		usleep(2000);
		TU_CHECK(pk_console_unregister(c) == 0);
		tu_capture_free(cap);
	}
	atomic_store(&storm_stop, 1);
	return NULL;
}

static void run_unregister_storm(enum pk_mode mode)
{
	struct tu_capture *cap = tu_capture_new(0);
	struct pk_console *con;
	pthread_t t[4], ch;
	int i;

	init_mode(mode, 0);
	con = pk_console_register(&tu_capture_ops, cap, -1);
	atomic_store(&storm_stop, 0);
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, stormer, (void *)&stormer_tids[i]);
	pthread_create(&ch, NULL, churn, NULL);
	pthread_join(ch, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	check_complete(con);
	check_text(con, cap, STORMERS);
	pk_console_unregister(con);
	tu_capture_free(cap);
}

static void test_unregister_storm_handoff(void **state) { (void)state; run_unregister_storm(PK_MODE_HANDOFF); }
static void test_unregister_storm_thread(void **state) { (void)state; run_unregister_storm(PK_MODE_THREAD); }

/*
 * Filtered and printable levels mixed, with a signal handler that logs:
 * threads store pk_debug records (below the console's loglevel) and pk_err
 * ones, and a SIGALRM every 100 us interrupts them to store a pk_info.  A
 * record a handler stores while its thread is inside pk_printk must still
 * be printed by someone: the console catches up with no pk_flush, in
 * every mode.  Writers 0..MIXERS-1 are the threads' pk_err lines, writer
 * MIXERS + i the handler's on thread i.
 */
#define MIXERS 4

static _Thread_local int mix_index = -1;
static _Thread_local uint64_t mix_handler_count;
static _Atomic uint64_t mix_debug, mix_printable, mix_failed, mix_handled;

static void on_alarm(int sig)
{
	char text[96];
	int e = errno;

	(void)sig;
	if (mix_index < 0)
		return;
	tu_make_text(text, sizeof(text), MIXERS + (unsigned)mix_index, mix_handler_count++, 8);
	atomic_fetch_add(&mix_handled, 1);
	if (pk_info("%s\n", text) > 0)
		atomic_fetch_add(&mix_printable, 1);
	else
		atomic_fetch_add(&mix_failed, 1);
	errno = e;
}

static void *mixer(void *arg)
{
	sigset_t alrm;
	char text[96];
	uint64_t i;

	mix_index = (int)(uintptr_t)arg;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	for (i = 0; !atomic_load(&storm_stop); i++) {
		if (pk_debug("filtered debug record %llu\n", (unsigned long long)i) > 0)
			atomic_fetch_add(&mix_debug, 1);
		else
			atomic_fetch_add(&mix_failed, 1);
		if (i % 4)
			continue;
		tu_make_text(text, sizeof(text), (unsigned)mix_index, i / 4, 24);
		if (pk_err("%s\n", text) > 0)
			atomic_fetch_add(&mix_printable, 1);
		else
			atomic_fetch_add(&mix_failed, 1);
	}
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	return NULL;
}

/*
 * The handlers' records are printed by whoever holds the console, a handler
 * included: a console that only makes async-signal-safe calls (no malloc,
 * no mutex), appending to one big buffer.
 */
#define MIX_CAP ((size_t)64 << 20)
static char *mix_buf;
static _Atomic size_t mix_len;

static long mix_write(void *ctx, const char *buf, size_t len)
{
	size_t off = atomic_fetch_add(&mix_len, len);

	(void)ctx;
	if (off + len < MIX_CAP)
		memcpy(mix_buf + off, buf, len);
	return (long)len;
}

static const struct pk_console_ops mix_ops = { .name = "sigsafe", .write = mix_write };

static void run_mixed_signal_storm(enum pk_mode mode)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } }, off = { { 0, 0 }, { 0, 0 } };
	struct pk_console_stats st;
	struct pk_console *con;
	struct sigaction sa;
	struct tu_lines l;
	struct pk_stats ps;
	sigset_t alrm, old;
	pthread_t t[MIXERS];
	char *text;
	uintptr_t i;

	init_mode(mode, mode == PK_MODE_HANDOFF ? PK_PRINT_BUDGET_DEFAULT_US : 0);
	mix_buf = mmap(NULL, MIX_CAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(mix_buf != MAP_FAILED);
	atomic_store(&mix_len, 0);
	con = pk_console_register(&mix_ops, NULL, PK_DEBUG);	/* not debug */
	atomic_store(&mix_debug, 0);
	atomic_store(&mix_printable, 0);
	atomic_store(&mix_failed, 0);
	atomic_store(&mix_handled, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	/* Only the mixers take the signal: they unblock it themselves. */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, &old);
	atomic_store(&storm_stop, 0);
	for (i = 0; i < MIXERS; i++)
		pthread_create(&t[i], NULL, mixer, (void *)i);
	setitimer(ITIMER_REAL, &it, NULL);
	usleep((useconds_t)(tu_seconds(0.5) * 1e6));	/* how long the storm lasts */
	atomic_store(&storm_stop, 1);
	for (i = 0; i < MIXERS; i++)
		pthread_join(t[i], NULL);
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_IGN);	/* discards one still pending */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	signal(SIGALRM, SIG_DFL);

	/* Before any flush: nothing stranded with nobody printing. */
	assert_true(tu_printing_or_caught_up(&con, 1, 10000));
	assert_int_equal(pk_flush(60000), 0);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	assert_int_equal(pk_stats_get(&ps), 0);
	assert_true(atomic_load(&mix_len) < MIX_CAP);
	text = mix_buf;
	text[atomic_load(&mix_len)] = '\0';
	tu_parse_lines(text, 2 * MIXERS, &l);
	assert_int_equal(tu_count(text, "filtered debug"), 0);
	print_message("mixed storm: %llu records from the handler; "
		      "%llu debug and %llu printable stored, %llu calls failed "
		      "(%llu lost, %llu found no slot); %llu stored in all; "
		      "%zu lines, %llu dropped in %zu notices, %llu filtered; %zu corrupt, "
		      "%zu repeated, %zu out of order, %zu other\n",
		      (unsigned long long)atomic_load(&mix_handled),
		      (unsigned long long)atomic_load(&mix_debug),
		      (unsigned long long)atomic_load(&mix_printable),
		      (unsigned long long)atomic_load(&mix_failed), (unsigned long long)ps.lost,
		      (unsigned long long)ps.reserve_failed, (unsigned long long)ps.stored,
		      l.lines, (unsigned long long)l.dropped, l.notices,
		      (unsigned long long)st.skipped, l.corrupt, l.dups, l.disorder, l.other);
	assert_int_equal(l.corrupt + l.dups + l.disorder + l.other, 0);
	/* A call that failed may have used a seq: a record overrun before its commit. */
	assert_true(ps.stored >= atomic_load(&mix_debug) + atomic_load(&mix_printable));
	assert_true(ps.stored <= atomic_load(&mix_debug) + atomic_load(&mix_printable) +
				 atomic_load(&mix_failed));
	assert_int_equal(l.lines, st.records);
	assert_int_equal(l.dropped, st.dropped);
	/*
	 * Every printable record accepted is printed or counted dropped; a
	 * drop notice counts no filtered record, only, at most, the seqs of
	 * failed calls (a record overrun before its commit).
	 */
	assert_true(l.lines + l.dropped >= atomic_load(&mix_printable));
	/* Unattributed: a console more than the own table's span behind. */
	assert_true(l.lines + l.dropped - st.unattributed <=
		    atomic_load(&mix_printable) + atomic_load(&mix_failed));
	assert_true(l.lines + l.dropped + st.skipped <= ps.stored);
	assert_true(l.lines <= atomic_load(&mix_printable));
	/* Skipped: the debug records, and the seqs of failed debug calls. */
	assert_true(st.skipped <= atomic_load(&mix_debug) + atomic_load(&mix_failed));
	assert_true(atomic_load(&mix_handled) > 0);
	pk_console_unregister(con);
	munmap(mix_buf, MIX_CAP);
}

static void test_mixed_signal_storm_handoff(void **state) { (void)state; run_mixed_signal_storm(PK_MODE_HANDOFF); }
static void test_mixed_signal_storm_legacy(void **state) { (void)state; run_mixed_signal_storm(PK_MODE_LEGACY); }
static void test_mixed_signal_storm_thread(void **state) { (void)state; run_mixed_signal_storm(PK_MODE_THREAD); }

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_legacy_stint_grows, teardown),
		cmocka_unit_test_teardown(test_handoff_spreads_printing, teardown),
		cmocka_unit_test_teardown(test_thread_callers_never_print, teardown),
		cmocka_unit_test_teardown(test_handoff_budget, teardown),
		cmocka_unit_test_teardown(test_stuck_handoff, teardown),
		cmocka_unit_test_teardown(test_stuck_legacy, teardown),
		cmocka_unit_test_teardown(test_stuck_thread, teardown),
		cmocka_unit_test_teardown(test_reentry_handoff, teardown),
		cmocka_unit_test_teardown(test_reentry_legacy, teardown),
		cmocka_unit_test_teardown(test_emergency_thread, teardown),
		cmocka_unit_test_teardown(test_emergency_handoff, teardown),
		cmocka_unit_test_teardown(test_emergency_legacy, teardown),
		cmocka_unit_test_teardown(test_emergency_storm_handoff, teardown),
		cmocka_unit_test_teardown(test_emergency_storm_legacy, teardown),
		cmocka_unit_test_teardown(test_emergency_storm_thread, teardown),
		cmocka_unit_test_teardown(test_unregister_storm_handoff, teardown),
		cmocka_unit_test_teardown(test_unregister_storm_thread, teardown),
		cmocka_unit_test_teardown(test_mixed_signal_storm_handoff, teardown),
		cmocka_unit_test_teardown(test_mixed_signal_storm_legacy, teardown),
		cmocka_unit_test_teardown(test_mixed_signal_storm_thread, teardown),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
