// SPDX-License-Identifier: MIT
/*
 * Crash, panic, exit and fork, in every mode, each in a forked child whose
 * console is a file the parent reads afterwards.
 */
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
#include <unistd.h>

#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

#define K 200
#define PK__N(a) (sizeof(a) / sizeof((a)[0]))

static const enum pk_mode modes[] = { PK_MODE_LEGACY, PK_MODE_HANDOFF, PK_MODE_THREAD };
static const char *const mode_names[] = { "handoff", "legacy", "thread" };
static const char *const how_names[] = { "crash", "crash with a stuck console", "hostile takeover",
					 "crash during a flood", "crash with a broken pipe",
					 "panic", "exit", "crash inside a console",
					 "crash with a console faulting in the report",
					 "stack overflow on a worker",
					 "crash inside a console, one driver function" };

/* A child that takes longer than this has hung (a hang guard only). */
#define CHILD_MS 60000

/* The child's libprintk: no default console, crash handler on. */
static void child_init(enum pk_mode mode, size_t buffer_size)
{
	struct pk_config cfg;
	struct rlimit no_core = { 0, 0 };

	setrlimit(RLIMIT_CORE, &no_core);
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_CRASH_HANDLER;
	cfg.mode = mode;
	cfg.buffer_size = buffer_size;
	if (pk_init(&cfg))
		_exit(90);
}

/* A file console that takes its time: 50 KB/s. */
static struct pk_console *slow_con;

static void add_slow_file(const char *path)
{
	struct pk_console_driver f, t;

	if (pk_console_file_make(path, 0, &f) || pk_console_throttle_make(&f, 50000, &t) ||
	    !(slow_con = pk_console_register_driver(&t, -1)))
		_exit(91);
}

/* A console whose write() blocks for ever; write_atomic, if any, appends to a file. */
static int never_fd[2];
static int atomic_fd = -1;
static _Atomic int inside;

static _Noreturn void block_for_ever(void)
{
	char c;

	for (;;)
		if (read(never_fd[0], &c, 1) < 0 && errno != EINTR)
			pause();
}

static long never_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	(void)len;
	atomic_store(&inside, 1);
	block_for_ever();
}

static long atomic_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	return write(atomic_fd, buf, len);
}

static const struct pk_console_ops never_ops = { .name = "never", .write = never_write };
static const struct pk_console_ops never_atomic_ops = {
	.name = "never-atomic", .write = never_write, .write_atomic = atomic_write
};

static void *get_stuck(void *arg)
{
	(void)arg;
	pk_info("this thread gets stuck in a console\n");
	return NULL;
}

/* Register a console that blocks for ever and have a thread stuck in it. */
static void add_stuck_console(const struct pk_console_ops *ops)
{
	pthread_t t;

	if (pipe(never_fd) || !pk_console_register(ops, NULL, -1))
		_exit(92);
	pthread_create(&t, NULL, get_stuck, NULL);
	if (!tu_wait_until(atomic_load(&inside), CHILD_MS / 2))
		_exit(94);
}

static void *flood(void *arg)
{
	(void)arg;
	for (;;)
		pk_info("flood: other threads go on logging as fast as they can\n");
	return NULL;
}

static void store_k(void)
{
	int k;

	for (k = 0; k < K; k++)
		pk_info("record %d of %d\n", k, K);
}

/*
 * A real fault, from a store to a page with no access: neither the
 * compiler nor UBSan's null check can see it coming.
 */
static void crash_now(void)
{
	volatile int *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	*p = 1;
}

static void crash_now(void);

enum how { CRASH, CRASH_STUCK, CRASH_TAKEOVER, CRASH_FLOOD, CRASH_BROKEN_PIPE, PANIC, EXIT,
	   CRASH_IN_CONSOLE, CRASH_ATOMIC_FAULT, CRASH_WORKER_OVERFLOW, CRASH_IN_CONSOLE_SAME };

/*
 * A console that faults: on the record "record BOMB_AT of" in write() and
 * write_atomic() alike (bomb_ops), or in every write_atomic() call
 * (bomb_atomic_ops, whose write() works).
 */
#define BOMB_AT 100

static long bomb_write(void *ctx, const char *buf, size_t len)
{
	char want[32];

	(void)ctx;
	snprintf(want, sizeof(want), "record %d of", BOMB_AT);
	if (memmem(buf, len, want, strlen(want)))
		crash_now();
	return (long)len;
}

static long bomb_always(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	(void)len;
	crash_now();
	return (long)len;
}

static long fine_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	return (long)len;
}

/* Another function, faulting the same way: tried last, and the guard catches it. */
static long bomb_write_atomic(void *ctx, const char *buf, size_t len)
{
	return bomb_write(ctx, buf, len);
}

static const struct pk_console_ops bomb_ops = {
	.name = "bomb", .write = bomb_write, .write_atomic = bomb_write_atomic
};
static const struct pk_console_ops bomb_same_ops = {
	.name = "bomb-same", .write = bomb_write, .write_atomic = bomb_write
};
static const struct pk_console_ops bomb_atomic_ops = {
	.name = "bomb-atomic", .write = fine_write, .write_atomic = bomb_always
};

static void add_bomb(const struct pk_console_ops *ops)
{
	if (!pk_console_register(ops, NULL, -1))
		_exit(92);
}

/* Recurse until the stack is gone. */
static volatile int deeper = 1;

static int __attribute__((noinline)) overflow(volatile char *up)
{
	volatile char pad[512];

	pad[0] = up ? up[0] : 0;
	if (!deeper)
		return pad[0];
	return overflow(pad) + pad[1];
}

static void *worker_overflow(void *arg)
{
	(void)arg;
	store_k();
	overflow(NULL);
	return NULL;
}

/* A console on a pipe whose reader is gone, with SIGPIPE's default action. */
static void add_broken_pipe(void)
{
	struct pk_console_driver d;
	int p[2];

	signal(SIGPIPE, SIG_DFL);
	if (pipe(p) || pk_console_fd_make(p[1], &d) || !pk_console_register_driver(&d, -1))
		_exit(92);
	close(p[0]);
}

/* Runs in the child, which owns its copies of @path and @path2. */
static void child(enum pk_mode mode, enum how how, char *path, char *path2)
{
	/* The flood fills a store of any size; keep the backlog short to print. */
	child_init(mode, how == CRASH_FLOOD ? 32 << 10 : 1 << 20);
	if (how == CRASH_BROKEN_PIPE)
		add_broken_pipe();	/* first: the crash path meets it first */
	if (how == CRASH_IN_CONSOLE)
		add_bomb(&bomb_ops);	/* first, as above */
	if (how == CRASH_IN_CONSOLE_SAME)
		add_bomb(&bomb_same_ops);
	if (how == CRASH_ATOMIC_FAULT)
		add_bomb(&bomb_atomic_ops);
	add_slow_file(path);
	if (how == CRASH_STUCK)
		add_stuck_console(&never_ops);
	if (how == CRASH_TAKEOVER) {
		atomic_fd = open(path2, O_WRONLY | O_CREAT | O_APPEND, 0644);
		add_stuck_console(&never_atomic_ops);
	}
	free(path);	/* so that LeakSanitizer has nothing to say at exit */
	free(path2);
	if (how == CRASH_FLOOD) {
		pthread_t t;
		int i;

		struct pk_console_stats st = { 0 };

		for (i = 0; i < 4; i++)
			pthread_create(&t, NULL, flood, NULL);
		/* Until the flood has overrun the store (however slow this build is). */
		for (i = 0; i < 1000 && !st.dropped; i++) {
			usleep(10000);
			pk_console_stats_get(slow_con, &st);
		}
	}
	if (how == CRASH_WORKER_OVERFLOW) {
		pthread_t t;

		pthread_create(&t, NULL, worker_overflow, NULL);
		pthread_join(t, NULL);
		_exit(93);
	}
	store_k();
	switch (how) {
	case PANIC:
		pk_panic("the end %d", 42);
	case EXIT:
		exit(0);
	default:
		crash_now();
		_exit(93);
	}
}

static char *run(enum pk_mode mode, enum how how, int *status, char **text2)
{
	char *path = tu_tmp_path("crash"), *path2 = tu_tmp_path("crash2"), *text, what[80];
	pid_t pid;

	snprintf(what, sizeof(what), "%s, %s mode", how_names[how], mode_names[mode]);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0)
		child(mode, how, path, path2);
	tu_waitpid(pid, status, CHILD_MS, what);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	if (text2)
		*text2 = tu_read_file(path2, NULL);
	unlink(path);
	unlink(path2);
	free(path);
	free(path2);
	return text;
}

/* Records 0 .. @n - 1 are all in @text. */
static void check_k(const char *text, int n)
{
	char want[64];
	int k;

	for (k = 0; k < n; k++) {
		snprintf(want, sizeof(want), "] record %d of %d\n", k, K);
		if (!strstr(text, want))
			fail_msg("missing: %s", want);
	}
}

static void check_all_k(const char *text)
{
	check_k(text, K);
}

static void test_crash_every_mode(void **state)
{
	int st;
	size_t i;

	(void)state;
	for (i = 0; i < PK__N(modes); i++) {
		char *text = run(modes[i], CRASH, &st, NULL);

		print_message("%s: crash report and %d records\n", mode_names[modes[i]], K);
		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGSEGV);
		check_all_k(text);
		assert_non_null(strstr(text, "Unable to handle SIGSEGV (segmentation fault) at address 0x7"));
		assert_non_null(strstr(text, "Call trace:"));
		free(text);
	}
}

/* Another thread is stuck for ever inside a second console's write(). */
static void test_crash_with_stuck_console(void **state)
{
	int st;
	size_t i;

	(void)state;
	for (i = 0; i < PK__N(modes); i++) {
		char *text = run(modes[i], CRASH_STUCK, &st, NULL);

		print_message("%s: stuck console, crash path took over\n", mode_names[modes[i]]);
		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGSEGV);
		check_all_k(text);
		assert_non_null(strstr(text, "Unable to handle SIGSEGV"));
		free(text);
	}
}

/* The stuck console has write_atomic(): panic takes it by force and uses that. */
static void test_crash_hostile_takeover(void **state)
{
	char *text, *text2;
	int st;
	size_t i;

	(void)state;
	for (i = 0; i < PK__N(modes); i++) {
		text = run(modes[i], CRASH_TAKEOVER, &st, &text2);
		assert_int_equal(WTERMSIG(st), SIGSEGV);
		check_all_k(text);
		assert_non_null(text2);
		check_all_k(text2);
		assert_non_null(strstr(text2, "Unable to handle SIGSEGV"));
		free(text);
		free(text2);
	}
}

/*
 * One console's reader is gone: its writes fail with EPIPE instead of
 * killing the process with SIGPIPE, before the crash and in the crash
 * path, so the other console gets everything and the process still dies
 * of its own signal.
 */
static void test_crash_broken_pipe(void **state)
{
	int st;
	size_t i;

	(void)state;
	for (i = 0; i < PK__N(modes); i++) {
		char *text = run(modes[i], CRASH_BROKEN_PIPE, &st, NULL);

		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGSEGV);
		check_all_k(text);
		assert_non_null(strstr(text, "Unable to handle SIGSEGV"));
		free(text);
	}
}

/*
 * Other threads flood the store while one crashes: they are kept out of
 * it from the moment the crash handler takes over, so the slow console
 * still gets the report.
 */
static void test_crash_during_flood(void **state)
{
	int st;
	size_t i;

	(void)state;
	for (i = 0; i < PK__N(modes); i++) {
		char *text = run(modes[i], CRASH_FLOOD, &st, NULL);

		assert_int_equal(WTERMSIG(st), SIGSEGV);
		assert_non_null(strstr(text, "Unable to handle SIGSEGV"));
		assert_non_null(strstr(text, "Call trace:"));
		assert_non_null(strstr(text, " printk messages dropped **"));
		free(text);
	}
}

/*
 * The crashing thread was inside a console's driver (a thread of the
 * program's in handoff and legacy modes, a printer in thread mode), which
 * faults again on the same record: the crash report goes to the other
 * console first, which gets every record up to the one that crashed, and
 * the report.  The faulting console is tried last through a separate
 * write_atomic() (which faults too, and is left out), and not at all
 * where write_atomic() is the function that faulted.
 */
static void test_crash_inside_console(void **state)
{
	int st;
	size_t i;

	(void)state;
	for (i = 0; i < 2 * PK__N(modes); i++) {
		char *text = run(modes[i % PK__N(modes)],
				 i < PK__N(modes) ? CRASH_IN_CONSOLE : CRASH_IN_CONSOLE_SAME, &st, NULL);

		print_message("%s: crash inside a console, the other has the report\n",
			      mode_names[modes[i % PK__N(modes)]]);
		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGSEGV);
		check_k(text, BOMB_AT + 1);
		assert_non_null(strstr(text, "Unable to handle SIGSEGV (segmentation fault)"));
		assert_non_null(strstr(text, "Call trace:"));
		free(text);
	}
}

/*
 * A crash elsewhere, and the first console's write_atomic() faults each
 * time the crash path calls it: that console is left out from its first
 * fault on, and the next still gets every record and the report.
 */
static void test_crash_console_faults_in_report(void **state)
{
	int st;
	size_t i;

	(void)state;
	for (i = 0; i < PK__N(modes); i++) {
		char *text = run(modes[i], CRASH_ATOMIC_FAULT, &st, NULL);

		print_message("%s: a console faults in the report, the other has it\n",
			      mode_names[modes[i]]);
		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGSEGV);
		check_all_k(text);
		assert_non_null(strstr(text, "Unable to handle SIGSEGV (segmentation fault) at address 0x7"));
		assert_non_null(strstr(text, "Call trace:"));
		free(text);
	}
}

/*
 * A worker thread (not the one that installed the crash handler) logs,
 * then overflows its stack: it has an alternate signal stack of its own,
 * so the report is made and every record printed.
 */
static void test_crash_worker_stack_overflow(void **state)
{
	int st;
	size_t i;

	(void)state;
	for (i = 0; i < PK__N(modes); i++) {
		char *text = run(modes[i], CRASH_WORKER_OVERFLOW, &st, NULL);

		print_message("%s: a worker's stack overflow, report and %d records\n",
			      mode_names[modes[i]], K);
		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGSEGV);
		check_all_k(text);
		assert_non_null(strstr(text, "Unable to handle SIGSEGV (segmentation fault)"));
		assert_non_null(strstr(text, "Call trace:"));
		free(text);
	}
}

/* Is the page just below @addr mapped with no access at all? */
static bool guarded_below(const void *addr)
{
	uintptr_t a = (uintptr_t)addr - 1, lo, hi;
	char line[512], perms[8];
	bool ok = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && a >= lo && a < hi)
			ok = !strcmp(perms, "---p");
	fclose(f);
	return ok;
}

/* 0: this thread has an alternate signal stack with a guard page below it. */
static int stack_check(void)
{
	stack_t ss;

	if (sigaltstack(NULL, &ss) < 0 || (ss.ss_flags & SS_DISABLE))
		return 1;
	if (ss.ss_size < 64 * 1024)
		return 2;
	return guarded_below(ss.ss_sp) ? 0 : 3;
}

static void *stack_check_thread(void *arg)
{
	int *ret = arg;

	*ret = stack_check();
	if (*ret == 1) {	/* none before it logs; one once it has */
		pk_info("a thread logs\n");
		*ret = stack_check();
	} else {
		*ret = 10 + *ret;
	}
	return NULL;
}

/*
 * Every thread that logs gets a crash stack of its own, the installing
 * thread at once; each has a guard page below it, where the old single
 * stack had the library's own data.
 */
static void test_crash_stacks_guarded(void **state)
{
	int st;
	pid_t pid;

	(void)state;
	pid = tu_fork();
	assert_true(pid >= 0);
	if (!pid) {
		pthread_t t;
		int ret = 0, i;

		child_init(PK_MODE_HANDOFF, 1 << 20);
		if (stack_check())
			_exit(20 + stack_check());
		for (i = 0; i < 3; i++) {
			pthread_create(&t, NULL, stack_check_thread, &ret);
			pthread_join(t, NULL);
			if (ret)
				_exit(30 + ret);
		}
		_exit(0);
	}
	tu_waitpid(pid, &st, CHILD_MS, "crash stacks");
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_panic_every_mode(void **state)
{
	int st;
	size_t i;

	(void)state;
	for (i = 0; i < PK__N(modes); i++) {
		char *text = run(modes[i], PANIC, &st, NULL);

		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGABRT);
		check_all_k(text);
		assert_non_null(strstr(text, "] Kernel panic - not syncing: the end 42\n"));
		/* Printed once, not again by the crash handler on abort(). */
		assert_int_equal(tu_count(text, "Kernel panic"), 1);
		assert_null(strstr(text, "Unable to handle"));
		free(text);
	}
}

static void test_exit_flush_every_mode(void **state)
{
	int st;
	size_t i;

	(void)state;
	for (i = 0; i < PK__N(modes); i++) {
		char *text = run(modes[i], EXIT, &st, NULL);

		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
		check_all_k(text);
		free(text);
	}
}

/* fork() during a storm: the child can log at once. */
static _Atomic int fstop;

static void *fork_stormer(void *arg)
{
	(void)arg;
	while (!atomic_load(&fstop))
		pk_info("parent storm record with some text to make it about 80 bytes long\n");
	return NULL;
}

static void run_fork_storm(enum pk_mode mode)
{
	char *path, *text, want[64];
	struct pk_config cfg;
	struct pk_console_driver f, t;
	struct pk_console *con;
	struct pk_console_stats cs;
	struct pk_stats ps;
	pthread_t th[4];
	int i, st;
	pid_t pid;
	char what[64];

	/*
	 * The child starts its printer threads.  ThreadSanitizer refuses to
	 * start threads in the child of a threaded fork; AddressSanitizer's
	 * allocator (gcc 12) takes no lock around fork(), so that child can
	 * deadlock in it when a storming parent thread held it (seen about
	 * once in five runs under load).  Both are sanitizer limits.
	 */
	if (mode == PK_MODE_THREAD && (tu_sanitized_thread() || tu_sanitized_address()))
		tu_skip("printer threads in the child of a threaded fork, under a sanitizer");
	path = tu_tmp_path("fork");
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.mode = mode;
	cfg.buffer_size = 32 << 10;
	assert_int_equal(pk_init(&cfg), 0);
	assert_int_equal(pk_console_file_make(path, 0, &f), 0);
	assert_int_equal(pk_console_throttle_make(&f, 400000, &t), 0);
	con = pk_console_register_driver(&t, -1);
	assert_non_null(con);
	atomic_store(&fstop, 0);
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, fork_stormer, NULL);
	for (i = 0; i < 10; i++) {
		pid = tu_fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			pk_info("child %d alive\n", i);
			/* Before its flush: the child's console caught up or still printing. */
			if (!tu_printing_or_caught_up(&con, 1, 10000))
				_exit(2);
			_exit(pk_flush(20000) == 0 ? 0 : 1);
		}
		snprintf(what, sizeof(what), "fork storm, %s mode, child %d", mode_names[mode], i);
		tu_waitpid(pid, &st, CHILD_MS, what);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
	atomic_store(&fstop, 1);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	/* The parent's storm: nothing stranded before the flush, all accounted after. */
	assert_true(tu_printing_or_caught_up(&con, 1, 10000));
	assert_int_equal(pk_flush(20000), 0);
	assert_int_equal(pk_console_stats_get(con, &cs), 0);
	assert_int_equal(pk_stats_get(&ps), 0);
	assert_int_equal(cs.next_seq, ps.next_seq);
	assert_int_equal(cs.records + cs.dropped + cs.skipped, ps.stored);
	pk_shutdown();
	text = tu_read_file(path, NULL);
	for (i = 0; i < 10; i++) {
		snprintf(want, sizeof(want), "] child %d alive\n", i);
		assert_non_null(strstr(text, want));
	}
	free(text);
	unlink(path);
	free(path);
}

static void test_fork_storm_handoff(void **state) { (void)state; run_fork_storm(PK_MODE_HANDOFF); }
static void test_fork_storm_legacy(void **state) { (void)state; run_fork_storm(PK_MODE_LEGACY); }
static void test_fork_storm_thread(void **state) { (void)state; run_fork_storm(PK_MODE_THREAD); }

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crash_every_mode),
		cmocka_unit_test(test_crash_with_stuck_console),
		cmocka_unit_test(test_crash_hostile_takeover),
		cmocka_unit_test(test_crash_broken_pipe),
		cmocka_unit_test(test_crash_during_flood),
		cmocka_unit_test(test_crash_inside_console),
		cmocka_unit_test(test_crash_console_faults_in_report),
		cmocka_unit_test(test_crash_worker_stack_overflow),
		cmocka_unit_test(test_crash_stacks_guarded),
		cmocka_unit_test(test_panic_every_mode),
		cmocka_unit_test(test_exit_flush_every_mode),
		cmocka_unit_test(test_fork_storm_handoff),
		cmocka_unit_test(test_fork_storm_legacy),
		cmocka_unit_test(test_fork_storm_thread),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
