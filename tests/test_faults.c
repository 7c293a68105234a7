// SPDX-License-Identifier: MIT
/*
 * Fault injection: a console whose write() fails in every way a driver
 * can (tests/faultcon.c) sits between two healthy consoles, in every flush
 * mode.  Each case runs in a forked child that cannot outlive the test.
 *
 * What must hold:
 *  - the healthy consoles get every record, in the same order, intact
 *    (their text is compared, not their counters);
 *  - the faulty console gets every record that its faults let through,
 *    whole and in the same order, and loses exactly the others;
 *  - its counters say exactly what happened: records offered, one write
 *    error per record lost, the bytes it really took, nothing dropped;
 *  - no pk_printk() call hangs (a generous bound, not a timing);
 *  - pk_panic() and the crash handler still print everything to every
 *    healthy console while a thread is blocked for ever inside the faulty
 *    console's write().
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "faultcon.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

#define WRITERS		3
#define PER		40		/* records per writer */
#define TOTAL		(WRITERS * PER)
#define CALL_BOUND_NS	(2000ull * 1000000ull)	/* a hang, not a timing */
#define CASE_TIMEOUT_MS	60000
#define FC_MIXED	FC_NR		/* every fault but SLOW and BLOCK, record by record */

static const enum pk_mode modes[] = { PK_MODE_HANDOFF, PK_MODE_LEGACY, PK_MODE_THREAD };

static const char *mode_name(enum pk_mode m)
{
	return m == PK_MODE_HANDOFF ? "handoff" : m == PK_MODE_LEGACY ? "legacy" : "thread";
}

static const char *case_name(unsigned fault)
{
	return fault == FC_MIXED ? "mixed" : fc_fault_name((enum fc_fault)fault);
}

/* ---- fault plans ---- */

static const enum fc_fault mixed[] = {
	FC_NONE, FC_EAGAIN, FC_EINTR, FC_ZERO, FC_SHORT, FC_BIG,
	FC_EPIPE, FC_ENOSPC, FC_ENOSPC_PARTIAL, FC_EAGAIN_ALWAYS, FC_ZERO_ALWAYS,
};

#define BLOCK_W	1
#define BLOCK_C	(PER / 4)

static enum fc_fault plan_of(unsigned fault, unsigned w, uint64_t c)
{
	switch (fault) {
	case FC_MIXED:
		return mixed[(w * 7 + c) % (sizeof(mixed) / sizeof(mixed[0]))];
	case FC_SLOW:
		return c % 10 == 3 ? FC_SLOW : FC_NONE;	/* 12 writes of 50 ms */
	case FC_BLOCK:
		return w == BLOCK_W && c == BLOCK_C ? FC_BLOCK : FC_NONE;
	default:
		return c % 4 == w % 4 ? (enum fc_fault)fault : FC_NONE;
	}
}

static enum fc_fault plan(const struct fc_console *fc, unsigned w, uint64_t c)
{
	return plan_of(fc->param, w, c);
}

/* ---- one case, in a child ---- */

/* What the child tells the parent beside its failures. */
struct outcome {
	double max_call_ms;
	char info[512];
};

static struct fc_report *rep;
static struct outcome *out;

struct writer {
	pthread_t thread;
	unsigned w;
	_Atomic uint32_t tid;
	int ret[PER];
	uint64_t t0[PER], t1[PER];
};

static struct writer writers[WRITERS];

static void *writer_main(void *arg)
{
	struct writer *wr = arg;
	char text[256];
	uint64_t c;

	atomic_store(&wr->tid, (uint32_t)syscall(SYS_gettid));
	for (c = 0; c < PER; c++) {
		tu_make_text(text, sizeof(text), wr->w, c, 10 + (wr->w * 13 + c) % 40);
		wr->t0[c] = tu_now_ns();
		wr->ret[c] = pk_info("%s\n", text);
		wr->t1[c] = tu_now_ns();
	}
	return NULL;
}

static void child_init(enum pk_mode mode, unsigned flags)
{
	struct pk_config cfg;
	struct rlimit no_core = { 0, 0 };

	setrlimit(RLIMIT_CORE, &no_core);
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT | flags;
	cfg.mode = mode;
	cfg.buffer_size = 1 << 20;
	cfg.console_loglevel = 7;
	if (pk_init(&cfg))
		_exit(90);
}

static size_t capture_records(struct tu_capture *cap)
{
	char *s = tu_capture_text(cap);
	struct tally t;
	size_t n;

	tally_init(&t, WRITERS, PER);
	tally_text(&t, s);
	n = t.records;
	tally_free(&t);
	free(s);
	return n;
}

/* Each line of @text whose record the plan lets through: what the faulty console must hold. */
static char *expected_faulty(const char *text, unsigned fault)
{
	char *res = malloc(strlen(text) + 1), *o = res;
	const char *p = text, *nl;
	unsigned w;
	uint64_t c;

	TU_CHECK(res);
	for (; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		if (fc_parse_line(p, (size_t)(nl - p), &w, &c) == 1 &&
		    fc_fault_permanent(plan_of(fault, w, c)))
			continue;
		memcpy(o, p, (size_t)(nl - p) + 1);
		o += nl - p + 1;
	}
	*o = '\0';
	return res;
}

/* A healthy console: every record exactly once, nothing else. */
static void check_healthy(const char *name, const char *text, struct pk_console *con)
{
	struct pk_console_stats st;
	struct tally t;
	char desc[512];
	unsigned w;
	uint64_t c;

	tally_init(&t, WRITERS, PER);
	tally_text(&t, text);
	tally_describe(&t, desc, sizeof(desc));
	if (tally_damaged(&t) || t.records != TOTAL || t.notices || t.other)
		fc_failf(rep, "healthy console %s: %s (want %d records)", name, desc, TOTAL);
	for (w = 0; w < WRITERS; w++)
		for (c = 0; c < PER; c++)
			if (tally_seen(&t, w, c) != 1) {
				fc_failf(rep, "healthy console %s: record w=%u c=%llu printed %u times",
					 name, w, (unsigned long long)c, tally_seen(&t, w, c));
				goto counters;
			}
counters:
	tally_free(&t);
	pk_console_stats_get(con, &st);
	if (st.records != TOTAL || st.write_errors || st.dropped || st.notices ||
	    st.bytes != strlen(text))
		fc_failf(rep,
			 "healthy console %s counters: records %llu (want %d), write_errors %llu, "
			 "dropped %llu, notices %llu, bytes %llu (it took %zu)",
			 name, (unsigned long long)st.records, TOTAL,
			 (unsigned long long)st.write_errors, (unsigned long long)st.dropped,
			 (unsigned long long)st.notices, (unsigned long long)st.bytes, strlen(text));
}

static void check_faulty(struct fc_console *fc, struct pk_console *con, const char *healthy,
			 unsigned fault)
{
	struct pk_console_stats st;
	char *got = fc_text(fc), *want = expected_faulty(healthy, fault);
	uint64_t planned[FC_NR] = { 0 }, lose = 0;
	unsigned w, f;
	uint64_t c;

	for (w = 0; w < WRITERS; w++)
		for (c = 0; c < PER; c++)
			planned[plan_of(fault, w, c)]++;
	for (f = 0; f < FC_NR; f++) {
		if (fc_fault_permanent((enum fc_fault)f))
			lose += planned[f];
		if (f != FC_NONE && fc->injected[f] != planned[f])
			fc_failf(rep, "faulty console: %llu records met fault %s, %llu planned",
				 (unsigned long long)fc->injected[f], fc_fault_name((enum fc_fault)f),
				 (unsigned long long)planned[f]);
	}
	if (strcmp(got, want)) {
		struct tally t;
		char desc[512];

		tally_init(&t, WRITERS, PER);
		tally_text(&t, got);
		tally_describe(&t, desc, sizeof(desc));
		fc_failf(rep,
			 "faulty console: its text differs from the healthy console's less the %llu "
			 "records lost (%zu bytes, want %zu): %s",
			 (unsigned long long)lose, strlen(got), strlen(want), desc);
		tally_free(&t);
	}
	if (fc->lost != lose || fc->test_records != TOTAL || fc->records != TOTAL)
		fc_failf(rep,
			 "faulty console: offered %llu records (%llu of the test), lost %llu; want %d "
			 "offered, %llu lost",
			 (unsigned long long)fc->records, (unsigned long long)fc->test_records,
			 (unsigned long long)fc->lost, TOTAL, (unsigned long long)lose);
	pk_console_stats_get(con, &st);
	if (st.records != TOTAL || st.write_errors != lose || st.dropped || st.notices ||
	    st.bytes != fc->bytes)
		fc_failf(rep,
			 "faulty console counters: records %llu (want %d), write_errors %llu (want "
			 "%llu), dropped %llu, notices %llu (want 0), bytes %llu (the driver took %llu)",
			 (unsigned long long)st.records, TOTAL, (unsigned long long)st.write_errors,
			 (unsigned long long)lose, (unsigned long long)st.dropped,
			 (unsigned long long)st.notices, (unsigned long long)st.bytes,
			 (unsigned long long)fc->bytes);
	free(got);
	free(want);
}

static void run_case(enum pk_mode mode, unsigned fault)
{
	struct tu_capture *a = tu_capture_new(0), *b = tu_capture_new(0);
	struct fc_console *fc = fc_new(plan, fault);
	struct pk_console *ca, *cf, *cb;
	uint64_t max_ns = 0, d;
	uint32_t stuck = 0;
	char *ta, *tb;
	unsigned w, c;
	int ret;

	child_init(mode, 0);
	fc->slow_ms = 50;
	ca = pk_console_register(&tu_capture_ops, a, -1);
	cf = pk_console_register(&fc_ops, fc, -1);
	cb = pk_console_register(&tu_capture_ops, b, -1);
	if (!ca || !cf || !cb)
		_exit(91);
	pk_console_set_format(ca, PK_FMT_RAW);
	pk_console_set_format(cf, PK_FMT_RAW);
	pk_console_set_format(cb, PK_FMT_RAW);

	for (w = 0; w < WRITERS; w++) {
		writers[w].w = w;
		pthread_create(&writers[w].thread, NULL, writer_main, &writers[w]);
	}
	if (fault == FC_BLOCK) {
		if (!tu_wait_until(atomic_load(&fc->blocks) > 0, 20000)) {
			fc_failf(rep, "the blocking write was never entered");
			_exit(1);
		}
		stuck = atomic_load(&fc->blocked_tid);
		for (w = 0; w < WRITERS; w++)
			if (atomic_load(&writers[w].tid) != stuck)
				pthread_join(writers[w].thread, NULL);
		/*
		 * In thread mode each console has its own printer: the healthy
		 * ones must not wait for the blocked one.  In handoff and
		 * legacy the blocked thread holds the console lock, so the
		 * others get the rest once it is released (measured only).
		 */
		if (mode == PK_MODE_THREAD) {
			if (!tu_wait_until(capture_records(a) == TOTAL && capture_records(b) == TOTAL,
				      10000))
				fc_failf(rep,
					 "healthy consoles while one is blocked: %zu and %zu of %d "
					 "records after 10 s",
					 capture_records(a), capture_records(b), TOTAL);
		}
		snprintf(out->info, sizeof(out->info),
			 "while blocked the healthy consoles had %zu and %zu of %d records",
			 capture_records(a), capture_records(b), TOTAL);
		fc_release(fc);
	}
	for (w = 0; w < WRITERS; w++)
		if (fault != FC_BLOCK || atomic_load(&writers[w].tid) == stuck)
			pthread_join(writers[w].thread, NULL);

	for (w = 0; w < WRITERS; w++) {
		/* The one call that blocked inside the faulty write() is not bounded. */
		unsigned skip = PER;

		if (fault == FC_BLOCK && stuck && atomic_load(&writers[w].tid) == stuck)
			for (skip = 0, c = 1; c < PER; c++)
				if (writers[w].t1[c] - writers[w].t0[c] >
				    writers[w].t1[skip] - writers[w].t0[skip])
					skip = c;
		for (c = 0; c < PER; c++) {
			if (writers[w].ret[c] < 0)
				fc_failf(rep, "pk_info w=%u c=%u returned %d", w, c, writers[w].ret[c]);
			d = writers[w].t1[c] - writers[w].t0[c];
			if (c != skip && d > max_ns)
				max_ns = d;
		}
	}
	out->max_call_ms = (double)max_ns / 1e6;
	if (max_ns > CALL_BOUND_NS)
		fc_failf(rep, "a pk_info call took %.0f ms", (double)max_ns / 1e6);

	ret = pk_flush(10000);
	if (ret)
		fc_failf(rep, "pk_flush(10000) returned %d", ret);
	fc_settle(fc);
	ta = tu_capture_text(a);
	tb = tu_capture_text(b);
	check_healthy("A", ta, ca);
	check_healthy("B", tb, cb);
	if (strcmp(ta, tb))
		fc_failf(rep, "the healthy consoles printed different text");
	check_faulty(fc, cf, ta, fault);
	free(ta);
	free(tb);
	pk_shutdown();
	_exit(atomic_load(&rep->failed) ? 1 : 0);
}

/* Run one case in a child.  Return: false (the failure printed) if it failed. */
static bool run_in_child(enum pk_mode mode, unsigned fault)
{
	char st[64];
	int status, r;
	pid_t pid;

	fc_report_reset(rep);
	memset(out, 0, sizeof(*out));
	pid = fc_fork();
	assert_true(pid >= 0);
	if (pid == 0)
		run_case(mode, fault);
	r = fc_wait(pid, CASE_TIMEOUT_MS, &status);
	fc_status_str(status, st, sizeof(st));
	print_message("%-8s %-18s max call %7.1f ms  %s%s%s\n", mode_name(mode), case_name(fault),
		      out->max_call_ms, st, out->info[0] ? "; " : "", out->info);
	if (r == -ETIMEDOUT) {
		print_error("%s %s: hung; killed after %d s\n%s", mode_name(mode), case_name(fault),
			    CASE_TIMEOUT_MS / 1000, rep->msg);
		return false;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		print_error("%s %s: %s\n%s", mode_name(mode), case_name(fault), st, rep->msg);
		return false;
	}
	return true;
}

/* Every mode, each whatever the others did; then fail if one failed. */
static void each_mode(unsigned fault)
{
	unsigned failed = 0;
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		failed += !run_in_child(modes[i], fault);
	if (failed)
		fail_msg("%s: %u of 3 modes failed", case_name(fault), failed);
}

static void test_transient(void **state)
{
	static const enum fc_fault f[] = { FC_EAGAIN, FC_EINTR, FC_ZERO, FC_SHORT, FC_BIG };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		each_mode(f[i]);
}

static void test_permanent(void **state)
{
	static const enum fc_fault f[] = { FC_EPIPE, FC_ENOSPC, FC_ENOSPC_PARTIAL,
					   FC_EAGAIN_ALWAYS, FC_ZERO_ALWAYS };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		each_mode(f[i]);
}

static void test_mixed(void **state)
{
	(void)state;
	each_mode(FC_MIXED);
}

static void test_slow(void **state)
{
	(void)state;
	each_mode(FC_SLOW);
}

static void test_block(void **state)
{
	(void)state;
	each_mode(FC_BLOCK);
}

/* ---- panic and crash while a thread is blocked inside a write() ---- */

#define PK	50	/* records logged while the faulty console is blocked */

static void *block_main(void *arg)
{
	char text[128];

	(void)arg;
	tu_make_text(text, sizeof(text), 9, 0, 20);
	pk_info("%s\n", text);	/* handoff, legacy: this thread blocks in the faulty write() */
	return NULL;
}

static enum fc_fault plan_block_9(const struct fc_console *fc, unsigned w, uint64_t c)
{
	(void)fc;
	return w == 9 && c == 0 ? FC_BLOCK : FC_NONE;
}

static void crash_now(void)
{
	volatile int *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	*p = 1;
}

static _Noreturn void blocked_child(enum pk_mode mode, bool crash, const char *pa, const char *pb)
{
	struct pk_console_driver da, db;
	struct fc_console *fc = fc_new(plan_block_9, 0);
	pthread_t t;
	char text[128];
	unsigned c;

	child_init(mode, PK_CFG_CRASH_HANDLER);
	if (pk_console_file_make(pa, 0, &da) || !pk_console_register_driver(&da, -1) ||
	    !pk_console_register(&fc_ops, fc, -1) || pk_console_file_make(pb, 0, &db) ||
	    !pk_console_register_driver(&db, -1))
		_exit(91);
	pthread_create(&t, NULL, block_main, NULL);
	if (!tu_wait_until(atomic_load(&fc->blocks) > 0, 20000)) {
		fc_failf(rep, "the blocking write was never entered");
		_exit(92);
	}
	for (c = 0; c < PK; c++) {
		tu_make_text(text, sizeof(text), 0, c, 10 + c % 30);
		if (pk_info("%s\n", text) < 0)
			fc_failf(rep, "pk_info c=%u failed", c);
	}
	if (crash)
		crash_now();
	pk_panic("fault injection: %d records behind a blocked console", PK);
}

/* Return: false (the failure printed) unless @path holds the report and every record once. */
static bool check_blocked_file(const char *what, const char *path, const char *report)
{
	char *text = tu_read_file(path, NULL), desc[512];
	bool ok = true;
	struct tally t;
	unsigned c;

	if (!text) {
		print_error("%s: no output file %s\n", what, path);
		return false;
	}
	tally_init(&t, 10, PK);
	tally_text(&t, text);
	tally_describe(&t, desc, sizeof(desc));
	if (!strstr(text, report)) {
		print_error("%s: no \"%s\" in the output (%s)\n", what, report, desc);
		ok = false;
	}
	if (tally_damaged(&t) || tally_seen(&t, 9, 0) != 1) {
		print_error("%s: the record stored before the block: %u times; %s\n", what,
			    tally_seen(&t, 9, 0), desc);
		ok = false;
	}
	for (c = 0; c < PK; c++) {
		if (tally_seen(&t, 0, c) != 1) {
			print_error("%s: record w=0 c=%u printed %u times; %s\n", what, c,
				    tally_seen(&t, 0, c), desc);
			ok = false;
			break;
		}
	}
	tally_free(&t);
	free(text);
	return ok;
}

static bool run_blocked(enum pk_mode mode, bool crash)
{
	char *pa = tu_tmp_path("faults-a"), *pb = tu_tmp_path("faults-b"), st[64], what[64];
	const char *report = crash ? "Unable to handle SIGSEGV" :
				     "Kernel panic - not syncing: fault injection";
	uint64_t t0 = tu_now_ns();
	int status, r, want = crash ? SIGSEGV : SIGABRT;
	bool ok = true;
	pid_t pid;

	fc_report_reset(rep);
	pid = fc_fork();
	assert_true(pid >= 0);
	if (pid == 0)
		blocked_child(mode, crash, pa, pb);
	r = fc_wait(pid, CASE_TIMEOUT_MS, &status);
	fc_status_str(status, st, sizeof(st));
	snprintf(what, sizeof(what), "%s %s with a blocked console", mode_name(mode),
		 crash ? "crash" : "panic");
	print_message("%-36s %s after %.0f ms\n", what, st, (double)(tu_now_ns() - t0) / 1e6);
	if (r == -ETIMEDOUT) {
		print_error("%s: hung; killed after %d s\n%s", what, CASE_TIMEOUT_MS / 1000, rep->msg);
		ok = false;
	} else if (atomic_load(&rep->failed)) {
		print_error("%s: %s", what, rep->msg);
		ok = false;
	} else if (!WIFSIGNALED(status) || WTERMSIG(status) != want) {
		print_error("%s: ended with %s, want signal %d\n", what, st, want);
		ok = false;
	}
	ok &= check_blocked_file(what, pa, report);
	ok &= check_blocked_file(what, pb, report);
	unlink(pa);
	unlink(pb);
	free(pa);
	free(pb);
	return ok;
}

static void each_mode_blocked(bool crash)
{
	unsigned failed = 0;
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		failed += !run_blocked(modes[i], crash);
	if (failed)
		fail_msg("%u of 3 modes failed", failed);
}

static void test_panic_blocked(void **state)
{
	(void)state;
	each_mode_blocked(false);
}

static void test_crash_blocked(void **state)
{
	(void)state;
	each_mode_blocked(true);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transient),
		cmocka_unit_test(test_permanent),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_slow),
		cmocka_unit_test(test_block),
		cmocka_unit_test(test_panic_blocked),
		cmocka_unit_test(test_crash_blocked),
	};
	int ret;

	rep = fc_report_new();
	out = fc_shared(sizeof(*out));
	ret = TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
	fc_unshare(out, sizeof(*out));
	fc_report_free(rep);
	return ret;
}
