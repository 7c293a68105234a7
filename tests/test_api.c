// SPDX-License-Identifier: MIT
/*
 * Promises of the API that no storm exercises: the -EBUSY return and the
 * suppressed counter while another thread panics, pk_printk() racing
 * pk_init(), the throttle's rate, the syslog console's reconnect, and
 * pk_console_set_loglevel() taking effect at once.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	return 0;
}

static void init_mode(enum pk_mode mode, const char *consoles)
{
	struct pk_config cfg;

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_ATEXIT;
	if (!consoles)
		cfg.flags |= PK_CFG_NO_CONSOLE;
	cfg.consoles = consoles;
	cfg.mode = mode;
	cfg.buffer_size = 64 << 10;
	assert_int_equal(pk_init(&cfg), 0);
}

/* ---- -EBUSY and the suppressed counter ---- */

/* What the child tells its parent, in a MAP_SHARED page. */
struct busy_page {
	_Atomic int panic_writing;	/* the panic report is in the console's write() */
	_Atomic int other_done;		/* the other thread has its answer */
	int other_ret;			/* its pk_printk()'s return */
	uint64_t suppressed;		/* pk_stats suppressed after it */
	_Atomic int saw_panic;
};

static struct busy_page *busy;

/* A console that holds the panic report until the other thread has tried. */
static long busy_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	if (memmem(buf, len, "Kernel panic - not syncing: busy test", 37)) {
		atomic_store(&busy->saw_panic, 1);
		atomic_store(&busy->panic_writing, 1);
		tu_wait_until(atomic_load(&busy->other_done), 20000);
	}
	return (long)len;
}

static const struct pk_console_ops busy_ops = {
	.name = "busy", .write = busy_write, .write_atomic = busy_write,
};

static void *busy_other(void *arg)
{
	struct pk_stats ps;

	(void)arg;
	if (!tu_wait_until(atomic_load(&busy->panic_writing), 20000))
		return NULL;
	busy->other_ret = pk_info("from another thread while the first panics\n");
	pk_stats_get(&ps);
	busy->suppressed = ps.suppressed;
	atomic_store(&busy->other_done, 1);
	return NULL;
}

static void test_busy_while_panicking(void **state)
{
	pthread_t t;
	int status;
	pid_t pid;

	(void)state;
	busy = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(busy != MAP_FAILED);
	memset(busy, 0, sizeof(*busy));
	busy->other_ret = 1;
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		init_mode(PK_MODE_HANDOFF, NULL);
		pk_console_register(&busy_ops, NULL, -1);
		pthread_create(&t, NULL, busy_other, NULL);
		pk_panic("busy test");
	}
	tu_waitpid(pid, &status, 60000, "busy while panicking");
	print_message("other thread's pk_printk: %d (%s), suppressed %llu\n", busy->other_ret,
		      pk_strerror(busy->other_ret), (unsigned long long)busy->suppressed);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	assert_true(atomic_load(&busy->saw_panic));
	assert_true(atomic_load(&busy->other_done));
	assert_int_equal(busy->other_ret, -EBUSY);
	assert_int_equal(busy->suppressed, 1);
	munmap(busy, 4096);
}

/* ---- pk_printk() concurrent with pk_init() ---- */

#define INIT_THREADS 4
/*
 * What the racers store before pk_init() has set up the store goes to the
 * early store (16 KiB, some 150 records): 120 records fit.  More would be
 * overwritten there before they move, and are then missing with no drop
 * notice.
 */
#define INIT_RECORDS 30

static _Atomic int init_go;

static void *init_racer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	char text[96];
	uint64_t c;

	while (!atomic_load(&init_go))
		;
	for (c = 0; c < INIT_RECORDS; c++) {
		tu_make_text(text, sizeof(text), w, c, 16);
		TU_CHECK(pk_info("%s\n", text) > 0);
	}
	return NULL;
}

static void test_printk_during_init(void **state)
{
	unsigned runs = tu_scaled(50), r, won = 0;
	struct tu_lines lines;
	char *path, *text, spec[512];
	int status;
	pid_t pid;

	(void)state;
	for (r = 0; r < runs; r++) {
		path = tu_tmp_path("initrace");
		snprintf(spec, sizeof(spec), "file:%s", path);
		pid = tu_fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			pthread_t t[INIT_THREADS];
			struct pk_config cfg;
			uintptr_t i;
			int ret;

			/* A racer that initialises first uses the default config: the same console. */
			setenv("PK_CONSOLE", spec, 1);
			for (i = 0; i < INIT_THREADS; i++)
				pthread_create(&t[i], NULL, init_racer, (void *)i);
			pk_config_init(&cfg);
			cfg.flags |= PK_CFG_NO_ATEXIT;
			cfg.consoles = spec;
			cfg.buffer_size = 256 << 10;
			atomic_store(&init_go, 1);
			ret = pk_init(&cfg);
			for (i = 0; i < INIT_THREADS; i++)
				pthread_join(t[i], NULL);
			if (pk_flush(10000) != 0)
				_exit(3);
			pk_shutdown();
			_exit(ret == 0 ? 0 : ret == -EALREADY ? 1 : 2);
		}
		tu_waitpid(pid, &status, 60000, "printk during init");
		assert_true(WIFEXITED(status));
		assert_true(WEXITSTATUS(status) <= 1);
		won += WEXITSTATUS(status) == 0;
		text = tu_read_file(path, NULL);
		assert_non_null(text);
		if (tu_parse_lines(text, INIT_THREADS, &lines) < 0 ||
		    lines.lines != INIT_THREADS * INIT_RECORDS)
			print_message("run %u (exit %d): %zu lines, %zu corrupt, %zu repeated, %zu out of "
				      "order, %llu dropped\n", r, WEXITSTATUS(status), lines.lines, lines.corrupt,
				      lines.dups, lines.disorder, (unsigned long long)lines.dropped);
		assert_int_equal(lines.corrupt + lines.dups + lines.disorder, 0);
		assert_int_equal(lines.dropped, 0);
		assert_int_equal(lines.lines, INIT_THREADS * INIT_RECORDS);
		free(text);
		unlink(path);
		free(path);
	}
	print_message("printk during init: %u runs, pk_init won the race in %u\n", runs, won);
}

/* ---- the throttle's rate ---- */

static _Atomic uint64_t counted_bytes;

static long count_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	atomic_fetch_add(&counted_bytes, len);
	return (long)len;
}

static const struct pk_console_ops count_ops = { .name = "count", .write = count_write };

static void test_throttle_rate(void **state)
{
	const unsigned long bps = 20000;
	struct pk_console_driver inner = { .ops = &count_ops, .format = PK_FMT_HUMAN }, drv;
	struct pk_console *con;
	uint64_t t0, t1, b0, b1;
	double rate;
	int i;

	(void)state;
	atomic_store(&counted_bytes, 0);
	init_mode(PK_MODE_THREAD, NULL);
	assert_int_equal(pk_console_throttle_make(&inner, bps, &drv), 0);
	con = pk_console_register_driver(&drv, -1);
	assert_non_null(con);
	/*
	 * A backlog of about 40 KB: two seconds of line time.  pk_printk():
	 * a level macro's call site would make each record some 60 bytes
	 * longer in the store, and the 64 KiB store would overrun.
	 */
	for (i = 0; i < 400; i++)
		pk_printk(PK_INFO, "throttled record %03d, padded to about a hundred bytes ................"
			"................\n", i);
	assert_true(tu_wait_until(atomic_load(&counted_bytes) >= 1000, 10000));
	b0 = atomic_load(&counted_bytes);
	t0 = tu_now_ns();
	/* One second's worth at the nominal rate, within a hang bound. */
	assert_true(tu_wait_until(atomic_load(&counted_bytes) >= b0 + (uint64_t)bps, 10000));
	t1 = tu_now_ns();
	b1 = atomic_load(&counted_bytes);
	rate = (double)(b1 - b0) * 1e9 / (double)(t1 - t0);
	print_message("throttle at %lu B/s: %llu bytes in %.3f s, %.0f B/s\n", bps,
		      (unsigned long long)(b1 - b0), (double)(t1 - t0) / 1e9, rate);
	assert_true(rate < 2.0 * (double)bps);
	assert_true(rate > (double)bps / 3.0);
	pk_console_unregister(con);
}

/* ---- syslog reconnect ---- */

static int dgram_server(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Receive datagrams until one contains @want (at most @timeout_ms). */
static bool receive(int fd, const char *want, int timeout_ms)
{
	uint64_t end = tu_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	char buf[4096];
	ssize_t n;

	while (tu_now_ns() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 50) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		if (strstr(buf, want))
			return true;
	}
	return false;
}

static void test_syslog_reconnect(void **state)
{
	char *path = tu_tmp_path("syslog");
	struct pk_console_driver drv;
	struct pk_console_stats st;
	struct pk_console *con;
	int srv;

	(void)state;
	init_mode(PK_MODE_HANDOFF, NULL);
	srv = dgram_server(path);
	assert_int_equal(pk_console_syslog_make(path, "pktest", &drv), 0);
	con = pk_console_register_driver(&drv, -1);
	assert_non_null(con);
	pk_info("before the restart\n");
	assert_true(receive(srv, "before the restart", 5000));

	/* The daemon restarts: a new socket at the same path, nothing in between. */
	close(srv);
	srv = dgram_server(path);
	pk_info("after the first restart\n");
	assert_true(receive(srv, "after the first restart", 5000));

	/* Again, with a record while nobody listens: lost, but the next ones arrive. */
	close(srv);
	unlink(path);
	pk_info("while nobody listens\n");
	srv = dgram_server(path);
	pk_info("after the second restart\n");
	assert_true(receive(srv, "after the second restart", 5000));
	pk_info("and the one after\n");
	assert_true(receive(srv, "and the one after", 5000));
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	print_message("syslog: %llu records, %llu write errors\n", (unsigned long long)st.records,
		      (unsigned long long)st.write_errors);
	pk_console_unregister(con);
	close(srv);
	unlink(path);
	free(path);
}

/* ---- pk_console_set_loglevel ---- */

/* Wait (no flush) for @con to catch up, then: is @needle in @cap's text? */
static bool printed(struct pk_console *con, struct tu_capture *cap, const char *needle)
{
	char *text;
	bool there;

	assert_true(tu_printing_or_caught_up(&con, 1, 10000));
	text = tu_capture_text(cap);
	there = strstr(text, needle) != NULL;
	free(text);
	return there;
}

static void run_set_loglevel(enum pk_mode mode)
{
	struct tu_capture *cap = tu_capture_new(0);
	struct pk_console *con;
	int i;

	init_mode(mode, NULL);
	con = pk_console_register(&tu_capture_ops, cap, 5);	/* up to warnings */
	assert_non_null(con);
	for (i = 0; i < 50; i++)	/* filtered by every console: the fast path */
		pk_info("filtered info %d\n", i);
	pk_warn("printed warning\n");
	assert_true(printed(con, cap, "printed warning"));
	assert_false(printed(con, cap, "filtered info"));

	/* Raised: debug records print from the next call on. */
	assert_int_equal(pk_console_set_loglevel(con, 8), 0);
	pk_debug("debug after raising\n");
	assert_true(printed(con, cap, "debug after raising"));

	/* Lowered: only emergencies and alerts. */
	assert_int_equal(pk_console_set_loglevel(con, 2), 0);
	pk_err("error after lowering\n");
	pk_alert("alert after lowering\n");
	assert_true(printed(con, cap, "alert after lowering"));
	assert_false(printed(con, cap, "error after lowering"));

	/* Raised again after records that took the fast path. */
	for (i = 0; i < 50; i++)
		pk_debug("filtered debug %d\n", i);
	assert_int_equal(pk_console_set_loglevel(con, 7), 0);
	pk_info("info after raising again\n");
	assert_true(printed(con, cap, "info after raising again"));
	assert_false(printed(con, cap, "filtered debug"));
	assert_int_equal(pk_console_set_loglevel(con, 9), -EINVAL);
	pk_console_unregister(con);
	tu_capture_free(cap);
}

static void test_set_loglevel_handoff(void **state) { (void)state; run_set_loglevel(PK_MODE_HANDOFF); }
static void test_set_loglevel_legacy(void **state) { (void)state; run_set_loglevel(PK_MODE_LEGACY); }
static void test_set_loglevel_thread(void **state) { (void)state; run_set_loglevel(PK_MODE_THREAD); }

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy_while_panicking),
		cmocka_unit_test(test_printk_during_init),
		cmocka_unit_test_teardown(test_throttle_rate, teardown),
		cmocka_unit_test_teardown(test_syslog_reconnect, teardown),
		cmocka_unit_test_teardown(test_set_loglevel_handoff, teardown),
		cmocka_unit_test_teardown(test_set_loglevel_legacy, teardown),
		cmocka_unit_test_teardown(test_set_loglevel_thread, teardown),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
