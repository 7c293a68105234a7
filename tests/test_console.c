// SPDX-License-Identifier: MIT
/*
 * Consoles: registration, per-console progress, loglevel and format,
 * drop notices, counters, the built-in drivers and PK_CONSOLE.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

static int init_mode(enum pk_mode mode, size_t size)
{
	struct pk_config cfg;

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.mode = mode;
	cfg.buffer_size = size;
	return pk_init(&cfg);
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	return 0;
}

/* Every mode prints every record, in order, in the human format. */
static void run_basic(enum pk_mode mode)
{
	struct tu_capture *cap = tu_capture_new(0);
	struct pk_console *con;
	struct pk_console_stats st;
	char *text, want[64];
	const char *p;
	int i;

	assert_int_equal(init_mode(mode, 256 << 10), 0);
	con = pk_console_register(&tu_capture_ops, cap, -1);
	assert_non_null(con);
	for (i = 0; i < 100; i++)
		pk_info("line %d\n", i);
	pk_debug("debug is below the default console_loglevel\n");
	/* Before any flush: printed already, or being printed. */
	assert_true(tu_printing_or_caught_up(&con, 1, 10000));
	assert_int_equal(pk_flush(10000), 0);
	text = tu_capture_text(cap);
	/* In order: each line after the one before, one line each. */
	for (i = 0, p = text; i < 100; i++) {
		snprintf(want, sizeof(want), "] line %d\n", i);
		p = strstr(p, want);
		assert_non_null(p);
		assert_int_equal(tu_count(text, want), 1);
		p += strlen(want);
	}
	assert_null(strstr(text, "debug"));
	assert_true(text[0] == '[' && text[13] == ']');
	assert_int_equal(tu_count(text, "\n"), 100);
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	assert_int_equal(st.records, 100);
	assert_int_equal(st.skipped, 1);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.bytes, strlen(text));
	assert_int_equal(st.next_seq, 101);
	free(text);
	assert_int_equal(pk_console_unregister(con), 0);
	assert_int_equal(pk_console_unregister(con), -EINVAL);
	tu_capture_free(cap);
}

static void test_basic_legacy(void **state) { (void)state; run_basic(PK_MODE_LEGACY); }
static void test_basic_handoff(void **state) { (void)state; run_basic(PK_MODE_HANDOFF); }
static void test_basic_thread(void **state) { (void)state; run_basic(PK_MODE_THREAD); }

/* Formats, loglevels, and a console registered late prints the backlog. */
static void test_format_loglevel_backlog(void **state)
{
	struct tu_capture *a = tu_capture_new(0), *b = tu_capture_new(0);
	struct pk_console *ca, *cb;
	char *ta, *tb;

	(void)state;
	assert_int_equal(init_mode(PK_MODE_HANDOFF, 256 << 10), 0);
	pk_err("early error\n");
	pk_info("early info\n");
	/* Registering prints the backlog at once, in the driver's format. */
	ca = pk_console_register(&tu_capture_ops, a, PK_ERR + 1);	/* errors and worse */
	cb = pk_console_register_driver(&(struct pk_console_driver){ .ops = &tu_capture_ops,
								    .ctx = b, .format = PK_FMT_KMSG },
					8);
	assert_non_null(ca);
	assert_non_null(cb);
	ta = tu_capture_text(a);
	assert_non_null(strstr(ta, "early error"));	/* before any flush */
	free(ta);
	assert_int_equal(pk_console_set_format(cb, PK_FMT_KMSG), 0);
	assert_int_equal(pk_console_set_format(cb, 77), -EINVAL);
	pk_debug("late debug\n");
	pk_printk(PK_INFO, "tab\there\n");
	assert_true(tu_printing_or_caught_up((struct pk_console *[]){ ca, cb }, 2, 10000));
	assert_int_equal(pk_flush(5000), 0);
	ta = tu_capture_text(a);
	tb = tu_capture_text(b);
	assert_non_null(strstr(ta, "early error"));
	assert_null(strstr(ta, "early info"));
	assert_null(strstr(ta, "late debug"));
	/* kmsg: prio,seq,usec,flags;text with escapes */
	assert_non_null(strstr(tb, "11,0,"));
	assert_non_null(strstr(tb, ",-;early error\n"));
	assert_non_null(strstr(tb, "15,2,"));
	assert_non_null(strstr(tb, "tab\\x09here"));
	free(ta);
	free(tb);
	assert_int_equal(pk_console_set_loglevel(ca, 9), -EINVAL);
	pk_console_unregister(ca);
	pk_console_unregister(cb);
	tu_capture_free(a);
	tu_capture_free(b);
}

/* Records overwritten before a console printed them become one notice. */
static int block_fd[2];
static _Atomic int gate_armed, gate_inside;

static void wait_gate(struct tu_capture *cap)
{
	char c;

	(void)cap;
	if (!atomic_exchange(&gate_armed, 0))
		return;
	atomic_store(&gate_inside, 1);
	if (read(block_fd[0], &c, 1) != 1)
		abort();
}

static void test_drop_notice(void **state)
{
	struct tu_capture *cap = tu_capture_new(0);
	struct pk_console *con;
	struct pk_console_stats st;
	char *text;
	int i;

	(void)state;
	assert_int_equal(init_mode(PK_MODE_THREAD, 16 << 10), 0);
	assert_int_equal(pipe(block_fd), 0);
	atomic_store(&gate_armed, 1);
	atomic_store(&gate_inside, 0);
	cap->hook = wait_gate;
	con = pk_console_register(&tu_capture_ops, cap, -1);
	pk_info("first\n");
	/* Until the printer is blocked inside write(), with "first" in hand. */
	assert_true(tu_wait_until(atomic_load(&gate_inside), 60000));
	for (i = 0; i < 2000; i++)
		pk_info("filler %d that takes some room in the store\n", i);
	assert_int_equal(write(block_fd[1], "x", 1), 1);
	assert_true(tu_printing_or_caught_up(&con, 1, 10000));
	assert_int_equal(pk_flush(10000), 0);
	text = tu_capture_text(cap);
	assert_non_null(strstr(text, "first"));
	assert_non_null(strstr(text, " printk messages dropped **\n"));
	assert_non_null(strstr(text, "filler 1999 "));
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	assert_true(st.dropped > 1000);
	assert_int_equal(st.notices, tu_count(text, " printk messages dropped **\n"));
	/* Completeness: every record printed, filtered or reported dropped. */
	assert_int_equal(st.records + st.skipped + st.dropped, 2001);
	free(text);
	pk_console_unregister(con);
	tu_capture_free(cap);
	close(block_fd[0]);
	close(block_fd[1]);
}

static void test_file_fd_throttle_drivers(void **state)
{
	char *path = tu_tmp_path("con-file"), *text;
	struct pk_console_driver drv, thr;
	struct pk_console *c1, *c2;
	int fds[2];
	char buf[4096];
	ssize_t n;

	(void)state;
	assert_int_equal(init_mode(PK_MODE_LEGACY, 64 << 10), 0);
	assert_int_equal(pk_console_file_make(path, PK_FILE_FSYNC, &drv), 0);
	assert_int_equal(pk_console_throttle_make(&drv, 100000, &thr), 0);
	c1 = pk_console_register_driver(&thr, -1);
	assert_non_null(c1);
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(pk_console_fd_make(fds[1], &drv), 0);
	c2 = pk_console_register_driver(&drv, -1);
	assert_non_null(c2);
	pk_warn("to file and pipe\n");
	assert_true(tu_printing_or_caught_up((struct pk_console *[]){ c1, c2 }, 2, 10000));
	assert_int_equal(pk_flush(5000), 0);
	text = tu_read_file(path, NULL);
	assert_non_null(strstr(text, "to file and pipe"));
	free(text);
	n = read(fds[0], buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "to file and pipe"));
	pk_console_unregister(c1);
	pk_console_unregister(c2);
	close(fds[0]);
	close(fds[1]);
	/* Bad arguments. */
	assert_int_equal(pk_console_file_make("/nonexistent-dir/x", 0, &drv), -ENOENT);
	assert_int_equal(pk_console_file_make(path, 0x80, &drv), -EINVAL);
	assert_int_equal(pk_console_fd_make(-1, &drv), -EINVAL);
	assert_int_equal(pk_console_throttle_make(NULL, 10, &thr), -EINVAL);
	assert_null(pk_console_register(NULL, NULL, -1));
	unlink(path);
	free(path);
}

/* A console whose write fails is counted, and the others go on. */
static long failing_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	(void)len;
	return -EIO;
}

static const struct pk_console_ops failing_ops = { .name = "failing", .write = failing_write };

static void test_write_errors(void **state)
{
	struct tu_capture *cap = tu_capture_new(0);
	struct pk_console *bad, *good;
	struct pk_console_stats st;
	char *text;

	(void)state;
	assert_int_equal(init_mode(PK_MODE_HANDOFF, 64 << 10), 0);
	bad = pk_console_register(&failing_ops, NULL, -1);
	good = pk_console_register(&tu_capture_ops, cap, -1);
	pk_info("one\n");
	pk_info("two\n");
	assert_int_equal(pk_flush(5000), 0);
	assert_int_equal(pk_console_stats_get(bad, &st), 0);
	assert_int_equal(st.write_errors, 2);
	text = tu_capture_text(cap);
	assert_non_null(strstr(text, "two"));
	free(text);
	pk_console_unregister(bad);
	pk_console_unregister(good);
	tu_capture_free(cap);
}

static bool sigpipe_pending(void)
{
	sigset_t set;

	assert_int_equal(sigpending(&set), 0);
	return sigismember(&set, SIGPIPE);
}

/*
 * Consoles whose reader went away, with SIGPIPE at its default action
 * (which would kill the process): a pipe and a socket with no reader, and
 * a FIFO whose reader left, all give write errors.  No SIGPIPE is left
 * pending, and one that was pending before (not ours) is left alone.  A
 * FIFO with no reader at all is refused when the console is made.
 */
/*
 * A console's write() that forks: the child's only thread returns from
 * write() and releases the pin it held at the fork, which must leave the
 * slot's count at zero in the child (it used to be zeroed at the fork, and
 * the release wrapped it: the child's unregister waited 5 s and gave the
 * console up, -EBUSY, and the next pin in that group brought the count
 * back to zero under a user).
 */
static _Atomic pid_t forked_child;
static _Atomic int forked_once;
static pid_t test_tid;

static long forking_write(void *ctx, const char *buf, size_t len)
{
	pid_t pid;

	(void)ctx;
	(void)buf;
	/*
	 * Only from the test's thread: the library's own threads print too
	 * (the rescue thread), and a child of one of them would never come
	 * back to this test.
	 */
	if ((pid_t)syscall(SYS_gettid) != test_tid || atomic_exchange(&forked_once, 1))
		return (long)len;
	pid = tu_fork();
	if (pid > 0)
		atomic_store(&forked_child, pid);
	return (long)len;
}

static const struct pk_console_ops forking_ops = { .name = "forking", .write = forking_write };

static void test_fork_inside_write(void **state)
{
	pid_t parent = getpid(), pid;
	struct pk_console *con;
	struct timespec t0, t1;
	int status, rc;

	(void)state;
	test_tid = (pid_t)syscall(SYS_gettid);
	assert_int_equal(init_mode(PK_MODE_LEGACY, 256 << 10), 0);
	con = pk_console_register(&forking_ops, NULL, -1);
	assert_non_null(con);
	for (int i = 0; i < 200 && !atomic_load(&forked_child) && getpid() == parent; i++) {
		pk_info("the record whose write() forks (%d)\n", i);
		pk_flush(5000);
	}
	if (getpid() != parent) {
		/* The child: its thread came back out of write() and pk_info(). */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = pk_console_unregister(con);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		_exit(rc == 0 && t1.tv_sec - t0.tv_sec < 2 ? 0 : rc == -EBUSY ? 2 : 3);
	}
	pid = atomic_load(&forked_child);
	assert_true(pid > 0);
	assert_int_equal(tu_waitpid(pid, &status, 30000, "fork inside write"), pid);
	assert_true(WIFEXITED(status));
	print_message("child's unregister: exit %d (0: done at once, 2: -EBUSY)\n",
		      WEXITSTATUS(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(pk_console_unregister(con), 0);
}

static void test_reader_gone(void **state)
{
	char *fifo = tu_tmp_path("fifo");
	struct pk_console_driver pipe_drv, sock_drv, fifo_drv;
	struct pk_console *con[3];
	struct pk_console_stats st;
	sigset_t pipe_set, old;
	int p[2], sv[2], rfd, i;

	(void)state;
	signal(SIGPIPE, SIG_DFL);
	assert_int_equal(init_mode(PK_MODE_HANDOFF, 64 << 10), 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(pk_console_file_make(fifo, 0, &fifo_drv), -ENXIO);
	rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(rfd >= 0);
	assert_int_equal(pk_console_file_make(fifo, 0, &fifo_drv), 0);
	assert_int_equal(pk_console_fd_make(p[1], &pipe_drv), 0);
	assert_int_equal(pk_console_fd_make(sv[0], &sock_drv), 0);
	close(p[0]);
	close(sv[1]);
	close(rfd);
	con[0] = pk_console_register_driver(&pipe_drv, -1);
	con[1] = pk_console_register_driver(&sock_drv, -1);
	con[2] = pk_console_register_driver(&fifo_drv, -1);
	for (i = 0; i < 3; i++)
		assert_non_null(con[i]);
	pk_info("nobody reads this\n");
	assert_int_equal(pk_flush(5000), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(pk_console_stats_get(con[i], &st), 0);
		assert_int_equal(st.write_errors, 1);
		assert_int_equal(st.records, 1);	/* handed to the driver */
		assert_int_equal(st.bytes, 0);
	}
	assert_false(sigpipe_pending());

	/* A SIGPIPE pending before the write is the program's: it stays. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	raise(SIGPIPE);
	assert_true(sigpipe_pending());
	pk_info("still nobody\n");
	assert_int_equal(pk_flush(5000), 0);
	assert_true(sigpipe_pending());
	assert_int_equal(sigtimedwait(&pipe_set, NULL, &(struct timespec){ 0, 0 }), SIGPIPE);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	assert_int_equal(pk_console_stats_get(con[0], &st), 0);
	assert_int_equal(st.write_errors, 2);

	for (i = 0; i < 3; i++)
		pk_console_unregister(con[i]);
	close(p[1]);
	close(sv[0]);
	unlink(fifo);
	free(fifo);
}

static _Atomic int usr1_taken;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_store(&usr1_taken, 1);
}

/*
 * Threads of this process other than the calling one, and how many of them
 * leave @sig unblocked (SigBlk in /proc/self/task/TID/status).
 */
static int threads_taking(int sig, int *others)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char path[300], line[128];
	unsigned long long blk;
	int n = 0, me = (int)syscall(SYS_gettid);
	FILE *f;

	assert_non_null(d);
	*others = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == me)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* gone meanwhile */
		(*others)++;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "SigBlk: %llx", &blk) == 1 && !(blk & (1ull << (sig - 1))))
				n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

/*
 * The library's threads (printer threads, the handoff budget thread) take
 * none of the application's signals: each blocks them, so with SIGUSR1
 * blocked in the only application thread, a SIGUSR1 sent to the process
 * stays pending for it instead of running the handler on a library
 * thread.  Checked on the threads' signal masks, which is what decides
 * it, then by sending one.
 */
static void test_library_threads_take_no_signals(void **state)
{
	struct tu_capture *cap = tu_capture_new(0);
	struct pk_console *con;
	struct pk_config cfg;
	sigset_t usr1, old;
	int m, sig, others;

	(void)state;
	signal(SIGUSR1, on_usr1);
	for (m = 0; m < 2; m++) {
		pk_config_init(&cfg);
		cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
		cfg.mode = m ? PK_MODE_THREAD : PK_MODE_HANDOFF;
		cfg.print_budget_us = m ? PK_PRINT_BUDGET_UNBOUNDED : 1000;	/* handoff: a budget thread */
		assert_int_equal(pk_init(&cfg), 0);	/* SIGUSR1 unblocked here */
		con = pk_console_register(&tu_capture_ops, cap, -1);
		assert_non_null(con);
		pk_info("threads started\n");
		assert_int_equal(pk_flush(5000), 0);

		assert_int_equal(threads_taking(SIGUSR1, &others), 0);
		print_message("%s mode: %d library threads, all with SIGUSR1 blocked\n",
			      m ? "thread" : "handoff", others);
		if (m)
			assert_true(others >= 1);	/* the printer thread */

		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &usr1, &old);
		atomic_store(&usr1_taken, 0);
		kill(getpid(), SIGUSR1);
		assert_int_equal(sigwait(&usr1, &sig), 0);	/* still ours */
		assert_int_equal(sig, SIGUSR1);
		assert_int_equal(atomic_load(&usr1_taken), 0);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pk_console_unregister(con);
		pk_shutdown();
	}
	signal(SIGUSR1, SIG_DFL);
	tu_capture_free(cap);
}

static void test_spec(void **state)
{
	char *path = tu_tmp_path("con-spec"), spec[600], *text;

	(void)state;
	assert_int_equal(init_mode(PK_MODE_HANDOFF, 64 << 10), 0);
	snprintf(spec, sizeof(spec), "file:%s@err%%200000,bogus,fd:notanumber,fd:999,stdout@zzz,,", path);
	/* Only the file console is valid; the rest are reported and skipped. */
	assert_int_equal(pk_console_register_spec(spec), 1);
	pk_err("an error\n");
	pk_info("not shown\n");
	assert_int_equal(pk_flush(5000), 0);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	assert_non_null(strstr(text, "an error"));
	assert_null(strstr(text, "not shown"));
	free(text);
	pk_shutdown();
	/* Through the environment. */
	setenv("PK_CONSOLE", "nonsense:1", 1);
	assert_true(pk_info("nobody hears this\n") > 0);	/* lazily, no console */
	unsetenv("PK_CONSOLE");
	unlink(path);
	free(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_basic_legacy, teardown),
		cmocka_unit_test_teardown(test_basic_handoff, teardown),
		cmocka_unit_test_teardown(test_basic_thread, teardown),
		cmocka_unit_test_teardown(test_format_loglevel_backlog, teardown),
		cmocka_unit_test_teardown(test_drop_notice, teardown),
		cmocka_unit_test_teardown(test_file_fd_throttle_drivers, teardown),
		cmocka_unit_test_teardown(test_write_errors, teardown),
		cmocka_unit_test_teardown(test_fork_inside_write, teardown),
		cmocka_unit_test_teardown(test_reader_gone, teardown),
		cmocka_unit_test_teardown(test_library_threads_take_no_signals, teardown),
		cmocka_unit_test_teardown(test_spec, teardown),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
