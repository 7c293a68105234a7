// SPDX-License-Identifier: MIT
/*
 * Continuation lines on consoles, in every mode:
 *   - a line stored without its newline reaches the consoles although
 *     nothing else is logged (flush.c "Open lines": about 50 ms);
 *   - pk_cont() soon after still joins it: one console line; a line
 *     kept open by continuations across its finalisation still comes out;
 *   - a continuation that comes too late, or after another thread's
 *     record, is its own line, marked with its caller ("[T<tid>] ");
 *   - no console line is ever empty because of a continuation, also with
 *     four threads building lines from three pieces at once.
 * Times are measured and printed; the only time asserted is a generous
 * bound on a hang.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

static struct tu_capture *cap;

static void start_sized(enum pk_mode mode, size_t size)
{
	struct pk_config cfg;
	struct pk_console *con;

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.mode = mode;
	cfg.buffer_size = size;
	assert_int_equal(pk_init(&cfg), 0);
	cap = tu_capture_new(0);
	con = pk_console_register(&tu_capture_ops, cap, -1);
	assert_non_null(con);
}

static void start(enum pk_mode mode)
{
	start_sized(mode, 1 << 20);
}

static void stop(void)
{
	pk_shutdown();
	tu_capture_free(cap);
	cap = NULL;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Wait (bounded: a hang) until @want is in the console's text; ms waited, or -1. */
static double wait_for(const char *want, double bound_ms)
{
	double t0 = now_ms(), t;
	char *s;

	for (;;) {
		s = tu_capture_text(cap);
		t = now_ms() - t0;
		if (strstr(s, want)) {
			free(s);
			return t;
		}
		free(s);
		if (t > bound_ms)
			return -1;
		usleep(500);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* No line of @text is empty once its prefix "[    t.tttttt] " is taken off. */
static unsigned empty_lines(const char *text)
{
	const char *p = text, *nl, *b;
	unsigned n = 0;

	for (; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		b = memchr(p, ']', (size_t)(nl - p));
		b = b ? b + 1 : p;
		while (b < nl && *b == ' ')
			b++;
		if (b == nl)
			n++;
	}
	return n;
}

#define OPEN_RUNS 20

static void open_line_reaches_console(enum pk_mode mode)
{
	double t[OPEN_RUNS];
	char want[64];
	unsigned i;

	start(mode);
	for (i = 0; i < OPEN_RUNS; i++) {
		snprintf(want, sizeof(want), "listening on port %u\n", 8000 + i);
		pk_info("listening on port %u", 8000 + i);
		t[i] = wait_for(want, 5000);
		if (t[i] < 0)
			fail_msg("mode %d: the open line \"%.*s\" is not on the console after 5 s",
				 mode, (int)strlen(want) - 1, want);
		usleep(1000 * (i % 7));
	}
	qsort(t, OPEN_RUNS, sizeof(t[0]), cmp_double);
	print_message("mode %d: an open line on the console after %.1f ms (median of %d), "
		      "%.1f ms at most\n", mode, t[OPEN_RUNS / 2], OPEN_RUNS, t[OPEN_RUNS - 1]);
	stop();
}

static void test_open_line_handoff(void **state)
{
	(void)state;
	open_line_reaches_console(PK_MODE_HANDOFF);
}

static void test_open_line_legacy(void **state)
{
	(void)state;
	open_line_reaches_console(PK_MODE_LEGACY);
}

static void test_open_line_thread(void **state)
{
	(void)state;
	open_line_reaches_console(PK_MODE_THREAD);
}

/*
 * A line kept open by continuations across the moment the watcher
 * finalises it (each pk_cont() reopens the record for its extension; a
 * finalisation that meets it reopened does nothing): the line must still
 * come out, the extension noting the open line again.
 */
static void extended_across_finalise(enum pk_mode mode)
{
	char want[64];
	double t0;
	unsigned r;

	start(mode);
	for (r = 0; r < 10; r++) {
		snprintf(want, sizeof(want), "line %u\n", r);
		t0 = now_ms();
		pk_info("line %u", r);
		/* Empty: each reopens the record, none makes it longer. */
		while (now_ms() - t0 < 150)
			pk_cont("%s", "");
		if (wait_for(want, 5000) < 0)
			fail_msg("mode %d: \"%s\" kept open by pk_cont() is not on the console after "
				 "5 s", mode, want);
		pk_cont("\n");
	}
	stop();
}

static void test_extended_across_finalise(void **state)
{
	(void)state;
	extended_across_finalise(PK_MODE_HANDOFF);
	extended_across_finalise(PK_MODE_THREAD);
}

/* Joined within the window; a late part is marked with its caller; no empty line. */
static void test_join_and_late(void **state)
{
	static const enum pk_mode modes[] = { PK_MODE_HANDOFF, PK_MODE_LEGACY, PK_MODE_THREAD };
	char want[128], *s;
	unsigned m;

	(void)state;
	for (m = 0; m < 3; m++) {
		start(modes[m]);
		pk_info("probe");
		pk_cont(" 1");
		pk_cont(" 2\n");
		assert_true(wait_for("probe 1 2\n", 5000) >= 0);
		pk_info("early part");
		assert_true(wait_for("early part\n", 5000) >= 0);	/* finalised: printed */
		assert_int_equal(pk_cont(" late part"), 10);
		assert_int_equal(pk_cont("\n"), 0);	/* ends nothing: no empty line */
		pk_info("after\n");
		snprintf(want, sizeof(want), "[T%ld]  late part\n", (long)syscall(SYS_gettid));
		assert_true(wait_for(want, 5000) >= 0);
		assert_true(wait_for("after\n", 5000) >= 0);
		s = tu_capture_text(cap);
		if (empty_lines(s))
			fail_msg("mode %d: empty console line in:\n%s", modes[m], s);
		assert_null(strstr(s, "early part late"));
		free(s);
		stop();
	}
}

/* Four threads, lines from three pieces each: no empty line, every piece once. */
#define CW	4
#define CL	200

static void *cont_writer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg, i;

	for (i = 0; i < CL; i++) {
		pk_info("w%u l%u a", w, i);
		if (i % 3 == 0)
			sched_yield();
		pk_cont(" w%u l%u b", w, i);
		pk_cont(" w%u l%u c\n", w, i);
	}
	return NULL;
}

static unsigned count(const char *s, const char *needle)
{
	unsigned n = 0;

	while ((s = strstr(s, needle))) {
		n++;
		s += strlen(needle);
	}
	return n;
}

static void test_concurrent_pieces(void **state)
{
	pthread_t th[CW];
	unsigned w, i, joined = 0, lines;
	char piece[64], *s;

	(void)state;
	start(PK_MODE_HANDOFF);
	for (w = 0; w < CW; w++)
		assert_int_equal(pthread_create(&th[w], NULL, cont_writer, (void *)(uintptr_t)w), 0);
	for (w = 0; w < CW; w++)
		pthread_join(th[w], NULL);
	assert_int_equal(pk_flush(10000), 0);
	s = tu_capture_text(cap);
	if (empty_lines(s))
		fail_msg("%u empty console lines", empty_lines(s));
	for (w = 0; w < CW; w++) {
		for (i = 0; i < CL; i++) {
			snprintf(piece, sizeof(piece), "w%u l%u a", w, i);
			assert_int_equal(count(s, piece), 1);
			snprintf(piece, sizeof(piece), "w%u l%u b", w, i);
			assert_int_equal(count(s, piece), 1);
			snprintf(piece, sizeof(piece), "w%u l%u c", w, i);
			assert_int_equal(count(s, piece), 1);
			snprintf(piece, sizeof(piece), "w%u l%u a w%u l%u b w%u l%u c\n", w, i, w, i,
				 w, i);
			joined += count(s, piece);
		}
	}
	lines = count(s, "\n");
	/* A piece on a line of its own is a marked continuation. */
	assert_int_equal(lines - CW * CL, count(s, "] [T"));
	print_message("%u lines from %u threads: %u joined whole, %u continuation lines marked "
		      "with their caller, none empty\n", lines, CW, joined, lines - CW * CL);
	free(s);
	stop();
}

/*
 * Open lines stored as packages (their formats end in a letter) while a
 * signal handler stores and continues its own between the pieces of the
 * main thread's: every piece once, no line but those made of whole
 * pieces (a package extended as if it were text would show its bytes).
 */
#define SL	20000
static volatile sig_atomic_t sig_n;

static void on_alarm(int sig)
{
	unsigned n = (unsigned)sig_n++;

	(void)sig;
	pk_info("sig %u x", n);
	pk_cont(" sig %u y\n", n);
}

static unsigned char main_seen[SL][3], sig_seen[1u << 16][2];

/*
 * The console of this case: the handler's pk_info() may print through it
 * (handoff), so it keeps what it is given in a buffer allocated before,
 * with no malloc and no lock (the capture console reallocates).  The
 * library calls one console's write() at a time.
 */
#define SINK_SIZE	(16u << 20)
static char *sink_buf;
static size_t sink_len;
static int sink_full;

static long sink_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	if (sink_len + len + 1 > SINK_SIZE) {
		sink_full = 1;
		return (long)len;
	}
	memcpy(sink_buf + sink_len, buf, len);
	sink_len += len;
	sink_buf[sink_len] = '\0';
	return (long)len;
}

static const struct pk_console_ops sink_ops = {
	.name = "sink",
	.write = sink_write,
};

/* One piece at @p: "main I a|b|c" or "sig N x|y"; counted.  Its length, or 0. */
static int piece_at(const char *p)
{
	unsigned i;
	char k[2];
	int used = 0;

	if (sscanf(p, "main %u %1[abc]%n", &i, k, &used) == 2 && used && i < SL) {
		main_seen[i][k[0] - 'a']++;
		return used;
	}
	if (sscanf(p, "sig %u %1[xy]%n", &i, k, &used) == 2 && used && i < (1u << 16)) {
		sig_seen[i][k[0] - 'x']++;
		return used;
	}
	return 0;
}

/*
 * "main I a[ main I b][ main I c]", "sig N x[ sig N y]", or a
 * continuation alone after its caller's mark "[Tn]  ": whole pieces only.
 */
static bool line_ok(const char *b, const char *nl)
{
	const char *p = b;
	int u;

	if (*p == '[') {
		p = strstr(p, "]  ");
		if (!p || p > nl)
			return false;
		p += 3;
	}
	if (!(u = piece_at(p)))
		return false;
	for (p += u; p < nl && *p == ' '; p += u)
		if (!(u = piece_at(p + 1)))
			return false;
		else
			u++;
	return p == nl;
}

static void test_signal_open_packages(void **state)
{
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	unsigned i, bad = 0, n, k;
	char *s, *p, *nl, *b;

	struct pk_config cfg;

	(void)state;
	memset(main_seen, 0, sizeof(main_seen));
	memset(sig_seen, 0, sizeof(sig_seen));
	sink_buf = calloc(1, SINK_SIZE);
	assert_non_null(sink_buf);
	sink_len = 0;
	sink_full = 0;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.mode = PK_MODE_HANDOFF;
	cfg.buffer_size = 64u << 20;	/* room for every record */
	assert_int_equal(pk_init(&cfg), 0);
	assert_non_null(pk_console_register(&sink_ops, NULL, -1));
	sig_n = 0;
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < SL; i++) {
		pk_info("main %u a", i);
		pk_cont(" main %u b", i);
		pk_cont(" main %u c\n", i);
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
	assert_int_equal(pk_flush(10000), 0);
	pk_shutdown();
	assert_int_equal(sink_full, 0);
	s = sink_buf;
	for (p = s; (nl = strchr(p, '\n')); p = nl + 1) {
		b = memchr(p, ']', (size_t)(nl - p));
		b = b ? b + 1 : p;
		while (*b == ' ')
			b++;
		if (!line_ok(b, nl) && bad++ < 5)
			print_message("not a line of whole pieces: %.*s\n", (int)(nl - p), p);
	}
	n = (unsigned)sig_n;
	assert_true(n > 0 && n < (1u << 16));
	for (i = 0; i < SL; i++)
		for (k = 0; k < 3; k++)
			if (main_seen[i][k] != 1)
				fail_msg("main %u %c: %u times", i, 'a' + k, main_seen[i][k]);
	for (i = 0; i < n; i++)
		for (k = 0; k < 2; k++)
			if (sig_seen[i][k] != 1)
				fail_msg("sig %u %c: %u times", i, 'x' + k, sig_seen[i][k]);
	print_message("%u lines of 3 pieces, %u handler lines of 2: every piece once, %u lines "
		      "not made of whole pieces\n", SL, n, bad);
	assert_int_equal(bad, 0);
	free(sink_buf);
	sink_buf = NULL;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_line_handoff),
		cmocka_unit_test(test_open_line_legacy),
		cmocka_unit_test(test_open_line_thread),
		cmocka_unit_test(test_join_and_late),
		cmocka_unit_test(test_extended_across_finalise),
		cmocka_unit_test(test_concurrent_pieces),
		cmocka_unit_test(test_signal_open_packages),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
