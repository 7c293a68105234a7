/* SPDX-License-Identifier: MIT */
#ifndef PK_TESTUTIL_H
#define PK_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

/*
 * How much longer than `make check` to run: PK_TEST_SCALE (a factor, default
 * 1; CI sets more).  Stress phases and repeated cases multiply by it.
 */
double tu_scale(void);
/* @n scaled by tu_scale(), at least 1. */
unsigned tu_scaled(unsigned n);
/*
 * Seconds a stress phase runs: PK_TEST_SECONDS, else @dflt times
 * tu_scale() (halved under sanitizers).
 */
double tu_seconds(double dflt);
/* Built with ThreadSanitizer?  With AddressSanitizer? */
int tu_sanitized_thread(void);
int tu_sanitized_address(void);
/* Monotonic nanoseconds. */
uint64_t tu_now_ns(void);
/* A small self-check: FNV-1a over @len bytes. */
uint32_t tu_sum(const void *p, size_t len);
/* Build a self-validating text "w=<w> c=<c> pad=<...> sum=<hex>" into @buf; returns length. */
size_t tu_make_text(char *buf, size_t size, unsigned w, uint64_t c, size_t pad);
/* Parse and verify such a text; 0 if intact (fills @w, @c), -1 if not. */
int tu_check_text(const char *text, size_t len, unsigned *w, uint64_t *c);
/* Fresh temporary path under TMPDIR for @tag; caller frees. */
char *tu_tmp_path(const char *tag);
/* Whole file as a NUL-terminated string (caller frees), or NULL. */
char *tu_read_file(const char *path, size_t *len);
/* "@dir/@name" (caller frees). */
char *tu_join(const char *dir, const char *name);
/* A fresh directory under TMPDIR for @tag, with exactly @mode (no umask); caller frees. */
#include <sys/types.h>
char *tu_make_dir(const char *tag, mode_t mode);
/* stderr captured into a file between tu_grab_start() and tu_grab_end(). */
struct tu_grab {
	int saved;
	char *path;
};
void tu_grab_start(struct tu_grab *g);
/* What was written to stderr since tu_grab_start() (caller frees). */
char *tu_grab_end(struct tu_grab *g);

/*
 * A console that keeps what it is given, for tests: the text, and for each
 * write the thread that made it.  @delay_us: each write takes this long
 * (a slow line).  @hook: called at the start of each write.
 */
#include <pthread.h>
#include "printk/console.h"
struct tu_capture {
	pthread_mutex_t lock;
	char *buf;
	size_t len, cap;
	uint32_t *tids;
	size_t writes, tcap;
	unsigned delay_us;
	void (*hook)(struct tu_capture *cap);
};
extern const struct pk_console_ops tu_capture_ops;
struct tu_capture *tu_capture_new(unsigned delay_us);
/* Copy of the text so far (caller frees). */
char *tu_capture_text(struct tu_capture *cap);
void tu_capture_free(struct tu_capture *cap);
/* Flush (10 s at most, which must suffice), then empty @cap. */
void tu_capture_clear(struct tu_capture *cap);
/*
 * Run program @argv (argv[0] its path) in a child, with environment @envp
 * (NULL: this one), stdout and stderr captured into *@out and *@err
 * (caller frees); it must exit within 60 s, not by a signal.
 * Return: its exit status.
 */
int tu_run(const char *const argv[], char *const envp[], char **out, char **err);
/*
 * Lines "<tag> <i>\n" for i in [0, n) each appear exactly once in @text,
 * in that order.
 */
bool tu_tagged_in_order(const char *text, const char *tag, unsigned n);
/* Number of lines in @s containing @needle. */
size_t tu_count(const char *s, const char *needle);

/*
 * Invariant before flushing: each of the @n consoles either has caught up
 * with the store (its next_seq is the store's) or is still printing (its
 * next_seq moves at least every @timeout_ms, a hang bound), until it has
 * caught up.  So a record stranded with nobody printing fails it, where a
 * pk_flush() would print it itself.  Call it after the writers stopped.
 * Return: 1 all caught up; 0 one stood still (it says which).
 */
struct pk_console;
int tu_printing_or_caught_up(struct pk_console *const *cons, int n, int timeout_ms);
/*
 * The same up to seq @target (not the store's end; 0: the store's end): for
 * a store shared with another process, whose records these consoles leave
 * to it, @target is one past this process's last record.
 */
int tu_printing_or_caught_up_to(struct pk_console *const *cons, int n, uint64_t target,
				int timeout_ms);

/*
 * Captured output of self-checking lines (tu_make_text, anywhere in the
 * line, after the console's prefix) parsed back: each writer's counters
 * must rise, each text must be intact.  Drop notices are summed.
 */
struct tu_lines {
	size_t lines;		/* intact lines of writers 0..writers-1 */
	size_t notices;		/* "** N printk messages dropped **" lines */
	uint64_t dropped;	/* the sum of their N */
	size_t corrupt;		/* text that fails its checksum, or an unknown writer */
	size_t dups;		/* a writer's line right after itself, again */
	size_t disorder;	/* a writer's counter lower than one printed before */
	size_t other;		/* lines that are neither */
};
/* Return: 0 if no line is corrupt, repeated or out of order; else -1. */
int tu_parse_lines(const char *text, unsigned writers, struct tu_lines *r);

/*
 * TU_CHECK: an assertion for threads other than the test's own (cmocka's
 * assert_* must run on the thread that runs the test).  Aborts loudly.
 */
#define TU_CHECK(cond)                                                                  \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                        \
		}                                                                       \
	} while (0)

/*
 * Honest skips.  cmocka's skip() marks a case skipped but the program still
 * exits 0, which CTest reports as "Passed".  skip() is redefined here to
 * count, and tu_run_group() exits TU_SKIP_CODE (registered as CTest's
 * SKIP_RETURN_CODE) when every case it ran was skipped.
 */
#define TU_SKIP_CODE 77
extern int tu__skipped;
#undef skip
#define skip() (tu__skipped++, _skip(__FILE__, __LINE__))
/* Skip the running case, saying why (printf-style). */
#define tu_skip(...)                                                                    \
	do {                                                                            \
		print_message("skipped: " __VA_ARGS__);                                 \
		print_message("\n");                                                    \
		skip();                                                                 \
	} while (0)

/*
 * tu_run_group() - run the cases of @tests whose names the command line
 * selects: no arguments, all of them; otherwise each argument is a glob
 * (fnmatch) that adds the cases it matches, or, after a '-', removes them
 * ("-test_real_*").  CMake runs one program as several CTest tests this
 * way, so that a case that may skip is reported on its own.
 * Return: what main() returns: 0 all passed; 1 a case failed, or the
 * arguments selected nothing; TU_SKIP_CODE every case run was skipped.
 */
int tu_run_group(const char *name, const struct CMUnitTest *tests, size_t n,
		 CMFixtureFunction setup, CMFixtureFunction teardown, int argc, char **argv);
#define TU_RUN_GROUP(tests, setup, teardown, argc, argv)                                 \
	tu_run_group((argc) > 0 ? tu_basename((argv)[0]) : #tests, tests,                     \
		     sizeof(tests) / sizeof((tests)[0]), setup, teardown, argc, argv)
/* The last component of @path. */
const char *tu_basename(const char *path);

/*
 * Children that cannot outlive a failure.  tu_fork() forks a child that
 * gets SIGKILL when the thread that forked it ends (PR_SET_PDEATHSIG: the
 * test's own thread, the one that runs cmocka), so a parent that fails or
 * is killed leaves nothing behind.  In the child it returns 0 like fork();
 * it only makes async-signal-safe calls there, so it may be used from a
 * threaded parent.
 */
#include <sys/types.h>
pid_t tu_fork(void);
/*
 * The crash signals back to their default action (tu_fork() and fc_fork()
 * children): cmocka's own handlers, which the crash handler would chain
 * to (pk_panic(3)), belong to the test runner, not to the child.
 */
void tu_default_crash_signals(void);
/*
 * tu_waitpid() - wait for child @pid at most @timeout_ms.  A child still
 * running then is killed (SIGKILL) and reaped, and the running case fails
 * naming @what, so a hang costs a bounded time instead of the CTest timeout.
 * Call it from the test's own thread (it may fail the case).
 * Return: @pid, with its wait status in *@status.
 */
pid_t tu_waitpid(pid_t pid, int *status, int timeout_ms, const char *what);

/*
 * Synchronisation by state: wait until @cond holds, looking again after a
 * short pause that grows to 1 ms, for at most @timeout_ms (a hang guard,
 * never a timing assertion).  Evaluates to whether @cond came true.
 */
void tu_backoff(unsigned *round);
#define tu_wait_until(cond, timeout_ms)                                                 \
	({                                                                              \
		uint64_t end_ = tu_now_ns() + (uint64_t)(timeout_ms) * 1000000ull;      \
		unsigned round_ = 0;                                                    \
		int ok_;                                                                \
		while (!(ok_ = !!(cond)) && tu_now_ns() < end_)                         \
			tu_backoff(&round_);                                            \
		ok_;                                                                    \
	})

/*
 * Coverage builds: a forked child that leaves by _exit() (to skip the
 * parent's atexit handlers) still writes its coverage data.
 */
#ifdef PK_COVERAGE
#include <unistd.h>
void __gcov_dump(void);
#define _exit(n) (__gcov_dump(), _exit(n))
#endif

#endif
