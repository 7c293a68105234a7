// SPDX-License-Identifier: MIT
/*
 * The crash path, for each way a process can go down: every crash signal
 * the handler takes (a real SIGBUS, SIGILL, SIGFPE, abort()), a crash
 * inside a console's write() on the thread that owns the console, two
 * threads panicking at once, pk_panic() from a signal handler, a crash
 * inside the crash handling itself and a crash before the library was
 * initialised.  Each case runs in a forked child whose console is a file;
 * the parent checks how the child died and what the file holds.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

#define CHILD_MS 60000
#define K 100

static const enum pk_mode modes[] = { PK_MODE_HANDOFF, PK_MODE_LEGACY, PK_MODE_THREAD };
static const char *const mode_names[] = { "handoff", "legacy", "thread" };

static char *out_path;

static void child_init(enum pk_mode mode, bool handler)
{
	struct pk_console_driver d;
	struct pk_config cfg;
	struct rlimit no_core = { 0, 0 };

	setrlimit(RLIMIT_CORE, &no_core);
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | (handler ? PK_CFG_CRASH_HANDLER : 0);
	cfg.mode = mode;
	TU_CHECK(pk_init(&cfg) == 0);
	TU_CHECK(pk_console_file_make(out_path, 0, &d) == 0);
	TU_CHECK(pk_console_register_driver(&d, -1));
}

static void store_k(void)
{
	int k;

	for (k = 0; k < K; k++)
		pk_info("record %d of %d\n", k, K);
}

/* Every "record k of K" once, in order. */
static void check_records(const char *s)
{
	char want[64];
	const char *p = s, *q;
	int k;

	for (k = 0; k < K; k++) {
		snprintf(want, sizeof(want), "record %d of %d\n", k, K);
		q = strstr(p, want);
		if (!q)
			fail_msg("\"record %d of %d\" missing", k, K);
		p = q + strlen(want);
	}
}

/* Run @fn in a child; return the file's text and the wait status. */
static char *run(void (*fn)(enum pk_mode), enum pk_mode mode, int *status, const char *what)
{
	pid_t pid;
	char *s;

	out_path = tu_tmp_path("panic");
	pid = tu_fork();
	assert_true(pid >= 0);
	if (!pid) {
		fn(mode);
		_exit(0);
	}
	tu_waitpid(pid, status, CHILD_MS, what);
	s = tu_read_file(out_path, NULL);
	unlink(out_path);
	free(out_path);
	return s ? s : strdup("");
}

static void expect_signal(int status, int sig, const char *what, enum pk_mode mode)
{
	if (!WIFSIGNALED(status) || WTERMSIG(status) != sig)
		fail_msg("%s (%s): status 0x%x, wanted death by signal %d", what, mode_names[mode],
			 status, sig);
}

/* ---- a crash while the dynamic loader's lock is held ---- */

static void *dlopen_blocker(void *arg)
{
	(void)arg;
	dlopen(PLUGIN_BLOCK_PATH, RTLD_NOW);	/* its constructor never returns */
	return NULL;
}

static void die_in_dlopen(enum pk_mode mode)
{
	int block[2], inside[2];
	char fds[32], c;
	pthread_t t;

	child_init(mode, true);
	TU_CHECK(pipe(block) == 0 && pipe(inside) == 0);
	snprintf(fds, sizeof(fds), "%d %d", block[0], inside[1]);
	setenv("PK_TEST_BLOCK_FDS", fds, 1);
	TU_CHECK(pthread_create(&t, NULL, dlopen_blocker, NULL) == 0);
	TU_CHECK(read(inside[0], &c, 1) == 1);	/* the loader's lock is held now */
	store_k();
	{
		volatile int *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		*p = 1;	/* SIGSEGV */
	}
	_exit(93);
}

/*
 * A crash while another thread is inside dlopen() (a constructor that never
 * returns keeps the loader's lock): the report, backtrace included, must
 * come out and the process die of SIGSEGV.  Naming frames with dladdr(),
 * which takes that lock, deadlocked here until the hang guard.
 */
static void test_crash_while_loader_locked(void **state)
{
	int status, m;
	char *s;

	(void)state;
	for (m = 0; m < 3; m++) {
		s = run(die_in_dlopen, modes[m], &status, "crash while dlopen() holds the loader lock");
		expect_signal(status, SIGSEGV, "crash while dlopen() holds the loader lock", modes[m]);
		assert_non_null(strstr(s, "Unable to handle SIGSEGV"));
		assert_int_equal(tu_count(s, "Call trace:"), 1);
		check_records(s);
		free(s);
	}
}

/* ---- every crash signal ---- */

static void die_sigbus(enum pk_mode mode)
{
	char *path = tu_tmp_path("panic-bus");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	volatile char *p;

	child_init(mode, true);
	store_k();
	/* A mapping past the end of its (empty) file: the access faults with SIGBUS. */
	TU_CHECK(fd >= 0 && ftruncate(fd, 0) == 0);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	TU_CHECK(p != MAP_FAILED);
	unlink(path);
	p[0] = 1;
	_exit(93);
}

static void die_sigill(enum pk_mode mode)
{
	child_init(mode, true);
	store_k();
	__builtin_trap();	/* ud2 on x86: SIGILL */
}

static volatile int zero, seven = 7;

static void die_sigfpe(enum pk_mode mode)
{
	volatile int x;

	child_init(mode, true);
	store_k();
#if defined(__x86_64__) || defined(__i386__)
	{
		/* A real idiv, out of reach of the compiler and of UBSan's check. */
		int q, d = zero;

		__asm__ __volatile__("cltd; idivl %2" : "=a"(q) : "a"(seven), "r"(d) : "edx");
		x = q;
	}
#else
	x = seven / zero;
#endif
	(void)x;
	_exit(93);
}

static void die_abort(enum pk_mode mode)
{
	child_init(mode, true);
	store_k();
	abort();
}

static const struct {
	const char *name;
	void (*fn)(enum pk_mode);
	int sig;
	const char *report;
} deaths[] = {
	{ "SIGBUS", die_sigbus, SIGBUS, "Unable to handle SIGBUS (bus error)" },
	{ "SIGILL", die_sigill, SIGILL, "Unable to handle SIGILL (illegal instruction)" },
	{ "SIGFPE", die_sigfpe, SIGFPE, "Unable to handle SIGFPE (arithmetic exception)" },
	{ "abort()", die_abort, SIGABRT, "Unable to handle SIGABRT (abort)" },
};

static void test_every_crash_signal(void **state)
{
	unsigned d, m;
	int status;
	char *s;

	(void)state;
	for (d = 0; d < sizeof(deaths) / sizeof(deaths[0]); d++) {
		for (m = 0; m < 3; m++) {
			s = run(deaths[d].fn, modes[m], &status, deaths[d].name);
			expect_signal(status, deaths[d].sig, deaths[d].name, modes[m]);
			check_records(s);
			if (tu_count(s, deaths[d].report) != 1)
				fail_msg("%s (%s): no \"%s\" in the console's file", deaths[d].name,
					 mode_names[m], deaths[d].report);
			assert_int_equal(tu_count(s, "Call trace:"), 1);
			free(s);
		}
	}
}

/* ---- a crash inside write() on the thread that owns the console ---- */

static int boom_fd = -1;
static _Atomic int boom_armed;

static long boom_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	if (atomic_load(&boom_armed) && memmem(buf, len, "boom", 4)) {
		volatile int *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		*p = 1;	/* the owner faults inside the driver */
	}
	return write(boom_fd, buf, len);
}

static long boom_write_atomic(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	return write(boom_fd, buf, len);
}

static const struct pk_console_ops boom_ops = {
	.name = "boom", .write = boom_write, .write_atomic = boom_write_atomic
};

static void die_in_write(enum pk_mode mode)
{
	struct pk_config cfg;
	struct rlimit no_core = { 0, 0 };

	setrlimit(RLIMIT_CORE, &no_core);
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_CRASH_HANDLER;
	cfg.mode = mode;
	TU_CHECK(pk_init(&cfg) == 0);
	boom_fd = open(out_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	TU_CHECK(boom_fd >= 0 && pk_console_register(&boom_ops, NULL, -1));
	store_k();
	TU_CHECK(pk_flush(10000) == 0);
	atomic_store(&boom_armed, 1);
	pk_info("boom\n");
	for (int k = 0; k < 10; k++)
		pk_info("after the boom %d\n", k);
	/*
	 * The printer (this thread, the rescue thread or a printer thread)
	 * crashes; the crash handler prints and re-raises.  Wait for that:
	 * leaving first would race with it.
	 */
	for (;;)
		pause();
}

static void test_crash_inside_write(void **state)
{
	unsigned m;
	int status;
	char *s;

	(void)state;
	for (m = 0; m < 3; m++) {
		s = run(die_in_write, modes[m], &status, "crash inside write()");
		expect_signal(status, SIGSEGV, "crash inside write()", modes[m]);
		if (tu_count(s, "Unable to handle SIGSEGV") != 1)
			fprintf(stderr, "%s:\n%s\n", mode_names[m], s);
		check_records(s);
		assert_int_equal(tu_count(s, "Unable to handle SIGSEGV"), 1);
		free(s);
	}
}

/* ---- two threads panic at once ---- */

static pthread_barrier_t both;

static void *panicker(void *arg)
{
	pthread_barrier_wait(&both);
	pk_panic("second panicker %d", (int)(intptr_t)arg);
	return NULL;
}

static void two_panics(enum pk_mode mode)
{
	pthread_t t;

	child_init(mode, true);
	store_k();
	pthread_barrier_init(&both, NULL, 2);
	pthread_create(&t, NULL, panicker, (void *)(intptr_t)2);
	pthread_barrier_wait(&both);
	pk_panic("first panicker %d", 1);
}

static void test_two_threads_panic(void **state)
{
	unsigned m;
	int status;
	char *s;

	(void)state;
	for (m = 0; m < 3; m++) {
		s = run(two_panics, modes[m], &status, "two panics");
		expect_signal(status, SIGABRT, "two panics", modes[m]);
		check_records(s);
		/* One report; the other thread's reason is at most a plain line. */
		assert_int_equal(tu_count(s, "Kernel panic - not syncing:"), 1);
		assert_int_equal(tu_count(s, "Call trace:"), 1);
		free(s);
	}
}

/* ---- pk_panic() from a signal handler ---- */

static void on_usr1(int sig)
{
	(void)sig;
	pk_panic("from a signal handler");
}

static void panic_in_handler(enum pk_mode mode)
{
	child_init(mode, true);
	signal(SIGUSR1, on_usr1);
	store_k();
	raise(SIGUSR1);
	_exit(93);
}

static void test_panic_from_signal_handler(void **state)
{
	unsigned m;
	int status;
	char *s;

	(void)state;
	for (m = 0; m < 3; m++) {
		s = run(panic_in_handler, modes[m], &status, "panic in a handler");
		expect_signal(status, SIGABRT, "panic in a handler", modes[m]);
		check_records(s);
		assert_int_equal(tu_count(s, "Kernel panic - not syncing: from a signal handler"), 1);
		free(s);
	}
}

/* ---- a writer held up inside pk_printk() when the panic begins ---- */

/*
 * A writer thread logs "late N" for ever and, after each call that
 * returned success, writes N to a pipe.  Its SIGUSR1 handler sleeps 30 ms
 * wherever the signal finds it: often inside pk_printk(), between the
 * panic check and the store or between reserving the record and
 * committing it.  The main thread signals it, then panics.  Whatever the
 * writer last saw succeed must be on the console (the panic waits for
 * writers inside the store gate before it flushes).
 */
#define LATE_RUNS	30

static int late_pipe = -1;

static void late_nap(int sig)
{
	struct timespec ts = { 0, 30000000 };

	(void)sig;
	nanosleep(&ts, NULL);
}

static void *late_writer(void *arg)
{
	char b[24];
	unsigned i;
	int n;

	(void)arg;
	for (i = 1;; i++) {
		if (pk_info("late %u\n", i) > 0) {
			n = snprintf(b, sizeof(b), "%u\n", i);
			(void)!write(late_pipe, b, (size_t)n);
		}
	}
	return NULL;
}

static unsigned late_run_no;

static void panic_late_writer(enum pk_mode mode)
{
	struct timespec warm = { 0, 20000000 + (long)(late_run_no % 10) * 100000 }, gap = { 0, 2000000 };
	struct sigaction sa;
	pthread_t th;

	child_init(mode, false);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = late_nap;
	sigaction(SIGUSR1, &sa, NULL);
	TU_CHECK(pthread_create(&th, NULL, late_writer, NULL) == 0);
	nanosleep(&warm, NULL);
	pthread_kill(th, SIGUSR1);
	nanosleep(&gap, NULL);
	pk_panic("a writer held up");
}

static void test_panic_waits_for_writers(void **state)
{
	unsigned m, r, last, v, lost = 0;
	char want[48], buf[64], *s;
	int p[2], status;
	ssize_t n;
	size_t len;

	(void)state;
	for (m = 0; m < 3; m++) {
		for (r = 0; r < LATE_RUNS; r++) {
			assert_int_equal(pipe(p), 0);
			fcntl(p[1], F_SETPIPE_SZ, 1 << 20);	/* the writer never waits on it */
			late_pipe = p[1];
			late_run_no = r;
			s = run(panic_late_writer, modes[m], &status, "panic with a writer held up");
			close(p[1]);
			expect_signal(status, SIGABRT, "panic with a writer held up", modes[m]);
			/* The last number the writer saw succeed (the pipe holds them all). */
			last = 0;
			len = 0;
			while ((n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0) {
				len += (size_t)n;
				buf[len] = '\0';
				while (len && strchr(buf, '\n')) {
					char *nl = strchr(buf, '\n');

					if (sscanf(buf, "%u", &v) == 1)
						last = v;
					len -= (size_t)(nl + 1 - buf);
					memmove(buf, nl + 1, len + 1);
				}
			}
			close(p[0]);
			assert_int_equal(tu_count(s, "Kernel panic - not syncing: a writer held up"), 1);
			snprintf(want, sizeof(want), "] late %u\n", last);
			if (last && !strstr(s, want)) {
				print_message("%s run %u: \"late %u\" returned success, not printed\n",
					      mode_names[modes[m]], r, last);
				lost++;
			}
			free(s);
		}
	}
	print_message("%u runs in each mode, a writer signalled into a 30 ms sleep before the "
		      "panic: %u accepted records not printed\n", LATE_RUNS, lost);
	assert_int_equal(lost, 0);
}

/* ---- a crash inside the crash handling; a crash before init ---- */

static int crash_twice_fd = -1;

static long crash_twice_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	if (memmem(buf, len, "Unable to handle", 16)) {
		volatile int *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		(void)!write(crash_twice_fd, buf, len);
		*p = 2;	/* a fault while printing the report */
	}
	return write(crash_twice_fd, buf, len);
}

static const struct pk_console_ops crash_twice_ops = {
	.name = "crash-twice", .write = crash_twice_write, .write_atomic = crash_twice_write
};

static void crash_in_crash(enum pk_mode mode)
{
	struct pk_config cfg;
	struct rlimit no_core = { 0, 0 };
	volatile int *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	setrlimit(RLIMIT_CORE, &no_core);
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_CRASH_HANDLER;
	cfg.mode = mode;
	TU_CHECK(pk_init(&cfg) == 0);
	crash_twice_fd = open(out_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	TU_CHECK(crash_twice_fd >= 0 && pk_console_register(&crash_twice_ops, NULL, -1));
	store_k();
	TU_CHECK(pk_flush(10000) == 0);
	*p = 1;
	_exit(93);
}

static void test_crash_inside_crash_handling(void **state)
{
	int status;
	char *s;

	(void)state;
	s = run(crash_in_crash, PK_MODE_HANDOFF, &status, "crash in the crash path");
	/* It still dies, of the first signal's kind, and does not loop. */
	expect_signal(status, SIGSEGV, "crash in the crash path", PK_MODE_HANDOFF);
	check_records(s);
	assert_true(tu_count(s, "Unable to handle SIGSEGV") >= 1);
	free(s);
}

static void crash_before_init(enum pk_mode mode)
{
	volatile int *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rlimit no_core = { 0, 0 };

	(void)mode;
	setrlimit(RLIMIT_CORE, &no_core);
	TU_CHECK(pk_crash_handler_install() == 0);
	*p = 1;
	_exit(93);
}

static void test_crash_before_init(void **state)
{
	int status;
	char *s;

	(void)state;
	s = run(crash_before_init, PK_MODE_HANDOFF, &status, "crash before init");
	expect_signal(status, SIGSEGV, "crash before init", PK_MODE_HANDOFF);
	free(s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_crash_signal),
		cmocka_unit_test(test_crash_inside_write),
		cmocka_unit_test(test_two_threads_panic),
		cmocka_unit_test(test_panic_from_signal_handler),
		cmocka_unit_test(test_panic_waits_for_writers),
		cmocka_unit_test(test_crash_inside_crash_handling),
		cmocka_unit_test(test_crash_before_init),
		cmocka_unit_test(test_crash_while_loader_locked),
	};

	setvbuf(stdout, NULL, _IONBF, 0);
	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
