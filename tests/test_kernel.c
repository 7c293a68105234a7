// SPDX-License-Identifier: MIT
/*
 * <printk/kernel.h>: runs the kernel-style code of kernel_style.c with a
 * capturing console and compares each line with the kernel's formats
 * (levels and pr_fmt, continuation, once, ratelimit with its suppressed
 * reports, WARN/WARN_ON/_ONCE reports, dump_stack(), BUG_ON() in a child,
 * hex dumps computed by hand from lib/hexdump.c's rules), and checks
 * once and ratelimit from many threads and signal handlers at once.
 *
 * This file itself includes kernel.h without DEBUG, as most kernel code
 * is built: pr_debug() and friends must then print and evaluate nothing.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "printk/console.h"
#include "printk/kernel.h"
#include "testutil.h"

#include "kernel_style.h"

#define MAX_LINES 256

static struct tu_capture *cap;
static int dflt;	/* the configured default level, as a digit */

static int setup(void **state)
{
	struct pk_console *con;
	struct pk_config cfg;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.buffer_size = 1 << 20;
	if (pk_init(&cfg))
		return -1;
	dflt = cfg.default_level;
	cap = tu_capture_new(0);
	con = pk_console_register(&tu_capture_ops, cap, 8);
	if (!con || pk_console_set_format(con, PK_FMT_KMSG))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	tu_capture_free(cap);
	return 0;
}

static int case_setup(void **state)
{
	(void)state;
	tu_capture_clear(cap);
	return 0;
}

/*
 * The console's lines so far, each as "<level>|<text>" (the kmsg format
 * "<prio>,<seq>,<us>,<flag>;<text>" reduced to what the test compares).
 */
static char *lines[MAX_LINES];
static int nlines;

static void free_lines(void)
{
	while (nlines > 0)
		free(lines[--nlines]);
}

static void collect(void)
{
	char *text, *p, *eol, *semi;
	int prio;

	free_lines();
	assert_int_equal(pk_flush(10000), 0);
	text = tu_capture_text(cap);
	for (p = text; *p; p = eol + 1) {
		eol = strchr(p, '\n');
		assert_non_null(eol);
		*eol = '\0';
		/* A dictionary line (CODE_FILE= of the call site, ...): not a record. */
		if (*p == ' ')
			continue;
		semi = strchr(p, ';');
		assert_non_null(semi);
		prio = atoi(p);
		assert_true(nlines < MAX_LINES);
		assert_true(asprintf(&lines[nlines++], "%d|%s", prio & 7, semi + 1) > 0);
	}
	free(text);
}

static void dump_lines(void)
{
	int i;

	for (i = 0; i < nlines; i++)
		print_message("  [%d] \"%s\"\n", i, lines[i]);
}

/* The console shows exactly @want, in order. */
static void expect_lines(const char *const *want, int n)
{
	int i;

	collect();
	for (i = 0; i < n && i < nlines; i++) {
		if (strcmp(lines[i], want[i])) {
			dump_lines();
			fail_msg("line %d: got \"%s\", want \"%s\"", i, lines[i], want[i]);
		}
	}
	if (nlines != n) {
		dump_lines();
		fail_msg("%d lines, want %d", nlines, n);
	}
}

static unsigned tid(void)
{
	return (unsigned)syscall(SYS_gettid);
}

static int count_lines(const char *text)
{
	int i, n = 0;

	for (i = 0; i < nlines; i++)
		n += strcmp(lines[i], text) == 0;
	return n;
}

/* ---- levels, pr_fmt, continuation, debug ---- */

static void test_levels_and_pr_fmt(void **state)
{
	char want[13][64];
	const char *w[13];
	int i;
	static const char *const fixed[] = {
		"0|kstyle: emerg 0", "1|kstyle: alert 1", "2|kstyle: crit 2",
		"3|kstyle: err 3", "4|kstyle: warn 4", "5|kstyle: notice 5",
		"6|kstyle: info 6", "7|kstyle: debug 7", "7|kstyle: devel 7",
		"6|kstyle: eth0: link up at 1000 Mb/s", "3|raw printk without pr_fmt",
	};

	(void)state;
	assert_true(kst_levels("eth0", 1000) > 0);
	for (i = 0; i < 11; i++)
		w[i] = fixed[i];
	snprintf(want[11], sizeof(want[11]), "%d|no level given", dflt);
	snprintf(want[12], sizeof(want[12]), "%d|KERN_DEFAULT given", dflt);
	w[11] = want[11];
	w[12] = want[12];
	expect_lines(w, 13);
}

static int evaluated;

static int bump(void)
{
	return ++evaluated;
}

static void test_debug_off_prints_nothing(void **state)
{
	static const unsigned char data[4] = { 1, 2, 3, 4 };

	(void)state;
	/* No DEBUG here: no output, and the arguments are not evaluated. */
	pr_debug("debug %d\n", bump());	/* a dynamic debug site: a statement, as in the kernel */
	assert_int_equal(pr_devel("devel %d\n", bump()), 0);
	assert_int_equal(pr_debug_once("once %d\n", bump()), 0);
	assert_int_equal(pr_debug_ratelimited("rl %d\n", bump()), 0);
	assert_int_equal(no_printk("%d\n", bump()), 0);
	print_hex_dump_bytes("x: ", DUMP_PREFIX_NONE, data, sizeof(data));
	print_hex_dump_debug("x: ", DUMP_PREFIX_NONE, 16, 1, data, sizeof(data), true);
	assert_int_equal(evaluated, 0);
	assert_true(pr_info("shown %d\n", bump()) > 0);
	assert_int_equal(evaluated, 1);
	expect_lines((const char *const[]){ "6|shown 1" }, 1);
}

static void test_kern_level_helpers(void **state)
{
	(void)state;
	assert_int_equal(printk_get_level(KERN_ERR "x"), '3');
	assert_int_equal(printk_get_level(KERN_CONT "x"), 'c');
	assert_int_equal(printk_get_level("x"), 0);
	assert_string_equal(printk_skip_level(KERN_INFO "abc"), "abc");
	assert_string_equal(printk_skip_level("abc"), "abc");
	assert_int_equal(HZ, 1000);
	assert_true(time_after(jiffies + 1, jiffies));
	assert_true(time_before(ULONG_MAX, 1ul));	/* wraps as the kernel's */
	assert_int_equal(msecs_to_jiffies(250), 250);
}

/* ---- once ---- */

#define ONCE_THREADS 16
static pthread_barrier_t barrier;
static _Atomic int warn_on_once_true;

static void *once_thread(void *arg)
{
	int i, n = (int)(intptr_t)arg;

	pthread_barrier_wait(&barrier);
	for (i = 0; i < 200; i++) {
		kst_once(n);
		atomic_fetch_add(&warn_on_once_true, kst_warn_on_once(42));
		kst_warn_on_once(0);
	}
	return NULL;
}

static void test_once_from_many_threads(void **state)
{
	pthread_t t[ONCE_THREADS];
	int i, probes = 0;

	(void)state;
	pthread_barrier_init(&barrier, NULL, ONCE_THREADS);
	for (i = 0; i < ONCE_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, once_thread, (void *)(intptr_t)i), 0);
	for (i = 0; i < ONCE_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&barrier);
	/* WARN_ON_ONCE returns the condition every time, reports once. */
	assert_int_equal(atomic_load(&warn_on_once_true), ONCE_THREADS * 200);
	collect();
	for (i = 0; i < nlines; i++) {
		int n;
		char tail[64];

		if (sscanf(lines[i], "6|kstyle: probe %d: firmware is %63[a-z]", &n, tail) == 2) {
			assert_true(n >= 0 && n < ONCE_THREADS);
			assert_string_equal(tail, "old");
			probes++;
		}
	}
	assert_int_equal(probes, 1);
	assert_int_equal(count_lines("4|------------[ cut here ]------------"), 1);
	for (i = 0, probes = 0; i < nlines; i++)
		probes += strncmp(lines[i], "4|WARNING: CPU:", 15) == 0;
	assert_int_equal(probes, 1);
	/* printk_once is true at every call (the kernel's DO_ONCE_LITE), prints once. */
	tu_capture_clear(cap);
	assert_true(kst_once_return());
	assert_true(kst_once_return());
	expect_lines((const char *const[]){ "5|printk_once" }, 1);
}

/* Once and ratelimit from threads and signal handlers at once. */
#define SIG_WORKERS 2
static _Atomic int sig_passed, sig_handled, sig_stop;

static void on_sigusr1(int sig)
{
	(void)sig;
	kst_sig_once();
	atomic_fetch_add(&sig_passed, kst_sig_ratelimit());
	atomic_fetch_add(&sig_handled, 1);
}

static void *sig_worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&sig_stop)) {
		kst_sig_once();
		atomic_fetch_add(&sig_passed, kst_sig_ratelimit());
	}
	return NULL;
}

static void test_once_ratelimit_signal_safe(void **state)
{
	pthread_t t[SIG_WORKERS];
	struct sigaction sa, old;
	int i, sent;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	for (i = 0; i < SIG_WORKERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, sig_worker, NULL), 0);
	/* One signal at a time, each into a worker busy in the same calls. */
	for (sent = 0; sent < 200; sent++) {
		pthread_kill(t[sent % SIG_WORKERS], SIGUSR1);
		assert_true(tu_wait_until(atomic_load(&sig_handled) > sent, 10000));
	}
	atomic_store(&sig_stop, 1);
	for (i = 0; i < SIG_WORKERS; i++)
		pthread_join(t[i], NULL);
	sigaction(SIGUSR1, &old, NULL);
	/* Burst 5 in a 60 s interval: exactly 5 calls went ahead in all. */
	assert_int_equal(atomic_load(&sig_passed), 5);
	expect_lines((const char *const[]){ "6|once from anywhere" }, 1);
}

/* ---- ratelimit ---- */

static void test_ratelimit_burst_interval_report(void **state)
{
	(void)state;
	/* HZ / 2 interval, burst 3: three of ten go ahead, seven are missed. */
	assert_int_equal(kst_burst(10), 3);
	expect_lines((const char *const[]){ "6|kstyle: event 0", "6|kstyle: event 1",
					    "6|kstyle: event 2" }, 3);
	tu_capture_clear(cap);
	assert_true(tu_wait_until(kst_burst_window_over(), 5000));
	/* The first call of the new interval reports the seven, then goes ahead. */
	assert_int_equal(kst_burst(2), 2);
	assert_int_equal(kst_burst(1), 1);
	assert_int_equal(kst_burst(1), 0);
	expect_lines((const char *const[]){ "4|kst_burst: 7 callbacks suppressed",
					    "6|kstyle: event 0", "6|kstyle: event 1",
					    "6|kstyle: event 0" }, 4);
}

static void test_printk_ratelimited_default_burst(void **state)
{
	const char *w[10];
	char want[10][48];
	int i;

	(void)state;
	kst_ratelimited(25);	/* DEFAULT_RATELIMIT_BURST (10) per 5 s */
	for (i = 0; i < 10; i++) {
		snprintf(want[i], sizeof(want[i]), "4|kstyle: rx overrun %d", i);
		w[i] = want[i];
	}
	expect_lines(w, 10);
}

static void test_ratelimit_msg_on_release(void **state)
{
	char name[17] = { 0 };

	(void)state;
	prctl(PR_GET_NAME, name, 0, 0, 0);
	prctl(PR_SET_NAME, "kst-main", 0, 0, 0);
	kst_release_init();
	assert_int_equal(kst_release_use(6), 2);
	expect_lines(NULL, 0);		/* nothing until the exit */
	kst_release_exit();
	kst_release_exit();		/* reported once */
	prctl(PR_SET_NAME, name, 0, 0, 0);
	expect_lines((const char *const[]){ "4|kst-main: 4 output lines suppressed due to ratelimiting" },
		     1);
}

/*
 * Every call is counted: two threads on one state, a burst larger than
 * all their calls, an interval of 2 jiffies.  The only calls refused are
 * those that found the other thread inside; each must be in a later
 * "callbacks suppressed" report, so passed + reported == calls.
 */
#define HAMMER_CALLS 200000
static struct pk_ratelimit_state hammer_rs;
static _Atomic long hammer_passed;

static void *hammer(void *arg)
{
	long i, passed = 0;

	(void)arg;
	for (i = 0; i < HAMMER_CALLS; i++)
		passed += pk_ratelimit(&hammer_rs, "rl_hammer");
	atomic_fetch_add(&hammer_passed, passed);
	return NULL;
}

static void test_ratelimit_contended_calls_counted(void **state)
{
	long calls = 2L * HAMMER_CALLS, passed, reported = 0;
	const char *p;
	pthread_t t[2];
	char *text;
	int i, n;

	(void)state;
	pk_ratelimit_state_init(&hammer_rs, 2, INT_MAX);
	atomic_store(&hammer_passed, 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hammer, NULL), 0);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	/* One more call, alone, once the interval is over: it reports what is left. */
	usleep(5000);
	calls++;
	passed = atomic_load(&hammer_passed) + pk_ratelimit(&hammer_rs, "rl_hammer");
	assert_int_equal(pk_flush(10000), 0);
	text = tu_capture_text(cap);
	for (p = text; (p = strstr(p, "rl_hammer: ")); p++)
		if (sscanf(p, "rl_hammer: %d callbacks suppressed", &n) == 1)
			reported += n;
	free(text);
	print_message("%ld calls: %ld passed, %ld suppressed (contended) and reported\n", calls,
		      passed, reported);
	if (passed + reported != calls)
		fail_msg("%ld calls, %ld passed + %ld reported suppressed: %ld vanished", calls,
			 passed, reported, calls - passed - reported);
}

static void test_ratelimit_disabled_and_zero_burst(void **state)
{
	struct ratelimit_state off = RATELIMIT_STATE_INIT_DISABLED;
	DEFINE_RATELIMIT_STATE(none, HZ, 0);
	int i, passed = 0, refused = 0;

	(void)state;
	for (i = 0; i < 100; i++) {
		passed += __ratelimit(&off);
		refused += !__ratelimit(&none);
	}
	assert_int_equal(passed, 100);
	assert_int_equal(refused, 100);
	assert_int_equal(none.missed, 100);
	expect_lines(NULL, 0);
}

/* ---- WARN, dump_stack ---- */

/*
 * The trace from line @i on: "Call trace:", frame #00 in @func of this
 * program, frames numbered in order, then the end marker.
 */
static void expect_trace(int i, const char *func)
{
	unsigned long addr, off;
	char sym[128], obj[128], want[32];
	int k;

	assert_true(nlines > i + 2);
	snprintf(want, sizeof(want), "%d|Call trace:", dflt);
	assert_string_equal(lines[i], want);
	for (k = 0; i + 1 + k < nlines && strstr(lines[i + 1 + k], "| #"); k++) {
		char prefix[16];

		snprintf(prefix, sizeof(prefix), "%d| #%02d 0x", dflt, k);
		if (strncmp(lines[i + 1 + k], prefix, strlen(prefix)))
			fail_msg("frame %d: \"%s\"", k, lines[i + 1 + k]);
	}
	assert_true(k >= 2);
	assert_int_equal(sscanf(lines[i + 1], "%*d| #00 0x%lx %127[^+]+0x%lx [%127[^]]]", &addr, sym,
				&off, obj), 4);
	assert_string_equal(sym, func);
	assert_string_equal(obj, "test_kernel");
	assert_true(off > 0 && off < 4096);
	assert_int_equal(i + 1 + k, nlines - 1);
	assert_string_equal(lines[nlines - 1], "4|---[ end trace 0000000000000000 ]---");
}

/* Line @i is "CPU: <n> PID: <this thread> Comm: <name>" at the default level. */
static void expect_task_line(int i)
{
	char want[128], name[17] = { 0 };
	int cpu;

	prctl(PR_GET_NAME, name, 0, 0, 0);
	assert_int_equal(sscanf(lines[i], "%*d|CPU: %d", &cpu), 1);
	snprintf(want, sizeof(want), "%d|CPU: %d PID: %u Comm: %s", dflt, cpu, tid(), name);
	assert_string_equal(lines[i], want);
}

/* Line @i is "WARNING: CPU: <n> PID: <tid> at <...>kernel_style.c:<line> <func>". */
static void expect_warning_line(int i, int line, const char *func)
{
	char file[512], want[1024];
	int cpu, got_line;
	unsigned pid;

	assert_int_equal(sscanf(lines[i], "4|WARNING: CPU: %d PID: %u at %511[^:]:%d", &cpu, &pid, file,
				&got_line), 4);
	assert_true(strlen(file) >= strlen("tests/kernel_style.c"));
	assert_string_equal(file + strlen(file) - strlen("tests/kernel_style.c"),
			    "tests/kernel_style.c");
	snprintf(want, sizeof(want), "4|WARNING: CPU: %d PID: %u at %s:%d %s", cpu, tid(), file,
		 line, func);
	assert_string_equal(lines[i], want);
}

static void test_warn_report(void **state)
{
	char *text;

	(void)state;
	assert_int_equal(kst_check_range(3), 0);
	collect();
	assert_int_equal(nlines, 0);

	assert_int_equal(kst_check_range(7), -22);
	/* Printed inside an emergency section: on the console before WARN returns. */
	text = tu_capture_text(cap);
	assert_non_null(strstr(text, "---[ end trace 0000000000000000 ]---\n"));
	free(text);
	collect();
	assert_string_equal(lines[0], "4|------------[ cut here ]------------");
	assert_string_equal(lines[1], "4|value 7 out of range");	/* no pr_fmt in WARN */
	expect_warning_line(2, kst_warn_line, "kst_check_range");
	expect_task_line(3);
	expect_trace(4, "kst_check_range");
}

static void test_warn_on_report(void **state)
{
	(void)state;
	assert_int_equal(kst_check_sign(1), 0);
	collect();
	assert_int_equal(nlines, 0);
	assert_int_equal(kst_check_sign(-1), 1);
	collect();
	assert_string_equal(lines[0], "4|------------[ cut here ]------------");
	expect_warning_line(1, kst_warn_on_line, "kst_check_sign");
	expect_task_line(2);
	expect_trace(3, "kst_check_sign");
}

static void test_warn_once(void **state)
{
	(void)state;
	assert_int_equal(kst_warn_once(1), 0);
	assert_int_equal(kst_warn_once(43), 1);
	assert_int_equal(kst_warn_once(43), 1);
	assert_int_equal(kst_warn_once(2), 0);
	collect();
	assert_int_equal(count_lines("4|------------[ cut here ]------------"), 1);
	assert_int_equal(count_lines("4|v is 43"), 1);
	assert_string_equal(lines[1], "4|v is 43");
	assert_string_equal(lines[nlines - 1], "4|---[ end trace 0000000000000000 ]---");
}

static void test_dump_stack(void **state)
{
	unsigned long addr, off;
	char sym[128];

	(void)state;
	kst_dump();
	collect();
	expect_task_line(0);
	assert_true(nlines >= 3);
	assert_int_equal(sscanf(lines[2], "%*d| #00 0x%lx %127[^+]+0x%lx", &addr, sym, &off), 3);
	assert_string_equal(sym, "kst_dump");
	assert_string_equal(lines[nlines - 1], "6|kstyle: stack dumped");
	assert_int_equal(count_lines("4|---[ end trace 0000000000000000 ]---"), 0);
}

/* ---- BUG_ON ---- */

static void test_bug_on_panics(void **state)
{
	struct pk_console_driver d;
	struct rlimit no_core = { 0, 0 };
	char *path = tu_tmp_path("kernel-bug"), *text, want[640];
	const char *p;
	int status;
	pid_t pid;

	(void)state;
	kst_bug_check(0);		/* false: nothing happens */
	collect();
	assert_int_equal(nlines, 0);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (!pid) {
		setrlimit(RLIMIT_CORE, &no_core);
		TU_CHECK(pk_console_file_make(path, 0, &d) == 0);
		TU_CHECK(pk_console_register_driver(&d, 8));
		pr_info("before the bug\n");
		kst_bug_check(13);
		_exit(0);
	}
	tu_waitpid(pid, &status, 60000, "BUG_ON child");
	text = tu_read_file(path, NULL);
	unlink(path);
	free(path);
	assert_non_null(text);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
		fail_msg("status 0x%x, wanted death by SIGABRT; output:\n%s", status, text);
	/* In order: the cut-here line, the BUG line, the panic, its trace. */
	p = strstr(text, "] before the bug\n");
	assert_non_null(p);
	p = strstr(p, "] ------------[ cut here ]------------\n");
	assert_non_null(p);
	p = strstr(p, "] kernel BUG at ");
	assert_non_null(p);
	snprintf(want, sizeof(want), "tests/kernel_style.c:%d!\n", kst_bug_line);
	assert_non_null(strstr(p, want));
	assert_true(strstr(p, want) < strchr(p, '\n') + 1);
	p = strstr(p, "] Kernel panic - not syncing: Fatal exception in kst_bug_check()\n");
	assert_non_null(p);
	assert_non_null(strstr(p, "] Call trace:\n"));
	free(text);
}

/* ---- hex dumps ---- */

static unsigned char data[32];

static void fill_data(void)
{
	int i;

	for (i = 0; i < 32; i++)
		data[i] = (unsigned char)(0x3c + i);	/* "<=>?@ABC...Z[" */
}

static char *spaces(int n)
{
	static char s[128];

	memset(s, ' ', (size_t)n);
	s[n] = '\0';
	return s;
}

/* One hex_dump_to_buffer() call: its text and its return value. */
static void row(size_t len, int rowsize, int groupsize, bool ascii, size_t buflen,
		const char *want, int want_ret)
{
	char buf[200];
	int ret;

	memset(buf, 'X', sizeof(buf));
	ret = kst_hexline(data, len, rowsize, groupsize, buf, buflen, ascii);
	if (ret != want_ret || (buflen && strcmp(buf, want)))
		fail_msg("len %zu row %d group %d ascii %d buflen %zu: got %d \"%s\", want %d \"%s\"",
			 len, rowsize, groupsize, ascii, buflen, ret, buflen ? buf : "", want_ret,
			 want);
	if (!buflen)
		assert_int_equal(buf[0], 'X');	/* untouched */
	/* The pk_ name is the same function. */
	assert_int_equal(pk_hex_dump_to_buffer(data, len, rowsize, groupsize, buf, buflen, ascii),
			 want_ret);
}

static void test_hex_dump_to_buffer(void **state)
{
	char want[320];

	(void)state;
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) {
		tu_skip("the expected groups are written for a little-endian machine");
		return;
	}
	fill_data();
	/* Whole rows of 16: groups of 1, 2, 4, 8; ASCII column at 49, 41, 37, 35. */
	row(16, 16, 1, true, 200,
	    "3c 3d 3e 3f 40 41 42 43 44 45 46 47 48 49 4a 4b  <=>?@ABCDEFGHIJK", 65);
	row(16, 16, 2, true, 200, "3d3c 3f3e 4140 4342 4544 4746 4948 4b4a  <=>?@ABCDEFGHIJK", 57);
	row(16, 16, 4, true, 200, "3f3e3d3c 43424140 47464544 4b4a4948  <=>?@ABCDEFGHIJK", 53);
	row(16, 16, 8, true, 200, "434241403f3e3d3c 4b4a494847464544  <=>?@ABCDEFGHIJK", 51);
	row(16, 16, 1, false, 200, "3c 3d 3e 3f 40 41 42 43 44 45 46 47 48 49 4a 4b", 47);
	row(16, 16, 8, false, 200, "434241403f3e3d3c 4b4a494847464544", 33);
	/* A row of 32: hex 95 characters, ASCII at 97. */
	row(32, 32, 1, true, 200,
	    "3c 3d 3e 3f 40 41 42 43 44 45 46 47 48 49 4a 4b "
	    "4c 4d 4e 4f 50 51 52 53 54 55 56 57 58 59 5a 5b  "
	    "<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[", 129);
	row(32, 32, 4, false, 200,
	    "3f3e3d3c 43424140 47464544 4b4a4948 4f4e4d4c 53525150 57565554 5b5a5958", 71);
	/* More than a row is cut to the row; other row sizes mean 16. */
	row(32, 16, 1, false, 200, "3c 3d 3e 3f 40 41 42 43 44 45 46 47 48 49 4a 4b", 47);
	row(16, 20, 2, false, 200, "3d3c 3f3e 4140 4342 4544 4746 4948 4b4a", 39);
	/* Short rows keep the ASCII column of a full one. */
	snprintf(want, sizeof(want), "3c 3d 3e 3f 40%s<=>?@", spaces(49 - 14));
	row(5, 16, 1, true, 200, want, 54);
	snprintf(want, sizeof(want), "3d3c 3f3e 4140%s<=>?@A", spaces(41 - 14));
	row(6, 16, 2, true, 200, want, 47);
	/* A group size that does not divide the length, or is no power of 2 up to 8, means 1. */
	row(6, 16, 4, false, 200, "3c 3d 3e 3f 40 41", 17);
	row(6, 16, 3, false, 200, "3c 3d 3e 3f 40 41", 17);
	row(16, 16, 16, false, 200, "3c 3d 3e 3f 40 41 42 43 44 45 46 47 48 49 4a 4b", 47);
	row(4, 16, -4, false, 200, "3c 3d 3e 3f", 11);
	row(0, 16, 1, true, 200, "", 0);
	/* Too short a buffer: what the kernel leaves, and the whole row's length. */
	row(16, 16, 1, true, 0, "", 65);
	row(16, 16, 1, true, 10, "3c 3d 3e ", 65);
	row(16, 16, 4, false, 12, "3f3e3d3c 43", 35);
	row(16, 16, 2, true, 5, "3d3c", 57);
	row(16, 16, 1, false, 48, "3c 3d 3e 3f 40 41 42 43 44 45 46 47 48 49 4a 4b", 47);
	row(16, 16, 1, true, 60,
	    "3c 3d 3e 3f 40 41 42 43 44 45 46 47 48 49 4a 4b  <=>?@ABCDE", 65);
	row(16, 16, 1, true, 49, "3c 3d 3e 3f 40 41 42 43 44 45 46 47 48 49 4a 4b ", 65);
}

static void test_hex_dump_bytes_not_printable(void **state)
{
	static const unsigned char odd[8] = { 0x7e, 0x7f, 0x80, 0xff, 0x00, 0x0a, 0x20, 0x41 };
	char buf[PK_HEX_DUMP_LINE_MAX], want[320];

	(void)state;
	snprintf(want, sizeof(want), "7e 7f 80 ff 00 0a 20 41%s~..... A", spaces(49 - 23));
	assert_int_equal(hex_dump_to_buffer(odd, 8, 16, 1, buf, sizeof(buf), true), 57);
	assert_string_equal(buf, want);
}

static void test_print_hex_dump(void **state)
{
	char want[8][320];
	const char *w[8];
	int i;

	(void)state;
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) {
		tu_skip("the expected groups are written for a little-endian machine");
		return;
	}
	fill_data();
	kst_hexdump(data, 20);
	snprintf(want[0], sizeof(want[0]),
		 "6|kstyle: 00000000: 3c 3d 3e 3f 40 41 42 43 44 45 46 47 48 49 4a 4b  <=>?@ABCDEFGHIJK");
	snprintf(want[1], sizeof(want[1]), "6|kstyle: 00000010: 4c 4d 4e 4f%sLMNO", spaces(49 - 11));
	/* DUMP_PREFIX_ADDRESS: the address as %px prints it. */
	snprintf(want[2], sizeof(want[2]),
		 "5|%0*lx: 3f3e3d3c 43424140 47464544 4b4a4948 4f4e4d4c%s<=>?@ABCDEFGHIJKLMNO",
		 (int)(2 * sizeof(void *)), (unsigned long)(uintptr_t)data, spaces(73 - 44));
	snprintf(want[3], sizeof(want[3]), "3|raw 3d3c 3f3e 4140 4342 4544 4746 4948 4b4a");
	snprintf(want[4], sizeof(want[4]), "3|raw 4d4c 4f4e");
	/* print_hex_dump_bytes() under DEBUG: KERN_DEBUG, 16 a row, bytes, ASCII. */
	snprintf(want[5], sizeof(want[5]),
		 "7|bytes: 3c 3d 3e 3f 40 41 42 43 44 45 46 47 48 49 4a 4b  <=>?@ABCDEFGHIJK");
	snprintf(want[6], sizeof(want[6]), "7|bytes: 4c 4d 4e 4f%sLMNO", spaces(49 - 11));
	for (i = 0; i < 7; i++)
		w[i] = want[i];
	expect_lines(w, 7);
	tu_capture_clear(cap);
	kst_hexdump(data, 0);
	expect_lines(NULL, 0);
}

/* ---- error pointers, dev_* and netdev_* ---- */

static void test_err_ptr(void **state)
{
	static const long errs[] = { -1, -EINVAL, -ENOMEM, -4095, -4096, 0, 5 };
	bool is_err, or_null;
	long back;
	int zero;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		long e = errs[i];
		bool in = e < 0 && e >= -4095;

		/* Any pointer-sized value comes back, and only -4095..-1 is an error. */
		assert_int_equal(kst_err_ptr(e, &back, &is_err, &or_null, &zero), 0);
		assert_int_equal(back, e);
		assert_int_equal(is_err, in);
		assert_int_equal(or_null, in || e == 0);
		assert_int_equal(zero, in ? e : 0);
	}
}

static void test_dev_printk(void **state)
{
	/* Once: one line; rate limited: the default burst of 10 of the 15. */
	static const char *const w[] = {
		"0|e1000e 0000:00:19.0: emerg 0", "1|e1000e 0000:00:19.0: alert",
		"2|e1000e 0000:00:19.0: crit", "3|e1000e 0000:00:19.0: err -ETIMEDOUT",
		"4|e1000e 0000:00:19.0: warn", "5|e1000e 0000:00:19.0: notice",
		"6|e1000e 0000:00:19.0: info", "7|e1000e 0000:00:19.0: dbg 7",
		"6|platform-7: no driver", "6|(NULL device *): no device",
		"4|e1000e 0000:00:19.0: once 0",
		"3|e1000e 0000:00:19.0: overrun 0", "3|e1000e 0000:00:19.0: overrun 1",
		"3|e1000e 0000:00:19.0: overrun 2", "3|e1000e 0000:00:19.0: overrun 3",
		"3|e1000e 0000:00:19.0: overrun 4", "3|e1000e 0000:00:19.0: overrun 5",
		"3|e1000e 0000:00:19.0: overrun 6", "3|e1000e 0000:00:19.0: overrun 7",
		"3|e1000e 0000:00:19.0: overrun 8", "3|e1000e 0000:00:19.0: overrun 9",
	};

	(void)state;
	kst_dev_messages(15);
	expect_lines(w, 21);
}

static void test_dev_err_probe(void **state)
{
	static const char *const w[] = {
		"3|e1000e 0000:00:19.0: error -ENOMEM: cannot map BAR 0",
		"7|e1000e 0000:00:19.0: error -EPROBE_DEFER: cannot map BAR 0",
		"6|e1000e 0000:00:19.0: mapped",
	};

	(void)state;
	/* It returns the error, as the kernel's, for "return dev_err_probe(...)". */
	assert_int_equal(kst_probe(-ENOMEM), -ENOMEM);
	assert_int_equal(kst_probe(-517), -517);	/* -EPROBE_DEFER: at debug level */
	assert_int_equal(kst_probe(0), 0);
	expect_lines(w, 3);
}

static void test_netdev_printk(void **state)
{
	static const char *const w[] = {
		"0|e1000e 0000:00:19.0 eth0: emerg", "1|e1000e 0000:00:19.0 eth0: alert",
		"2|e1000e 0000:00:19.0 eth0: crit", "3|e1000e 0000:00:19.0 eth0: err 3",
		"4|e1000e 0000:00:19.0 eth0: warn", "5|e1000e 0000:00:19.0 eth0: notice",
		"6|e1000e 0000:00:19.0 eth0: NIC Link is Up 1000 Mbps",
		"7|e1000e 0000:00:19.0 eth0: dbg", "6|lo0: no parent",
		"6|(unnamed net_device): not named yet", "3|(NULL net_device): no device",
	};

	(void)state;
	kst_netdev_messages();
	expect_lines(w, 11);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_levels_and_pr_fmt, case_setup),
		cmocka_unit_test_setup(test_debug_off_prints_nothing, case_setup),
		cmocka_unit_test_setup(test_kern_level_helpers, case_setup),
		cmocka_unit_test_setup(test_err_ptr, case_setup),
		cmocka_unit_test_setup(test_dev_printk, case_setup),
		cmocka_unit_test_setup(test_dev_err_probe, case_setup),
		cmocka_unit_test_setup(test_netdev_printk, case_setup),
		cmocka_unit_test_setup(test_once_from_many_threads, case_setup),
		cmocka_unit_test_setup(test_once_ratelimit_signal_safe, case_setup),
		cmocka_unit_test_setup(test_ratelimit_burst_interval_report, case_setup),
		cmocka_unit_test_setup(test_printk_ratelimited_default_burst, case_setup),
		cmocka_unit_test_setup(test_ratelimit_msg_on_release, case_setup),
		cmocka_unit_test_setup(test_ratelimit_contended_calls_counted, case_setup),
		cmocka_unit_test_setup(test_ratelimit_disabled_and_zero_burst, case_setup),
		cmocka_unit_test_setup(test_warn_report, case_setup),
		cmocka_unit_test_setup(test_warn_on_report, case_setup),
		cmocka_unit_test_setup(test_warn_once, case_setup),
		cmocka_unit_test_setup(test_dump_stack, case_setup),
		cmocka_unit_test_setup(test_bug_on_panics, case_setup),
		cmocka_unit_test_setup(test_hex_dump_to_buffer, case_setup),
		cmocka_unit_test_setup(test_hex_dump_bytes_not_printable, case_setup),
		cmocka_unit_test_setup(test_print_hex_dump, case_setup),
	};
	int ret = TU_RUN_GROUP(tests, setup, teardown, argc, argv);

	free_lines();
	return ret;
}
