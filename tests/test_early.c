// SPDX-License-Identifier: MIT
/*
 * The first call, wherever it comes from.  Before the library is set up, a
 * call from a signal handler must not initialise it (allocating inside a
 * handler that interrupted malloc() corrupts the heap or deadlocks): the
 * record goes to the static early store and comes out once the library is
 * set up at a safe point (a later ordinary call, pk_init(), or exit), and
 * a panic before that writes it to standard error.  Each case runs in a
 * forked child, many times where a race is the point.
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
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

#define CHILD_MS 30000

static char *out_path;


static char *run(void (*fn)(void), int *status, const char *what)
{
	pid_t pid;
	char *s;

	out_path = tu_tmp_path("early");
	pid = tu_fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct rlimit no_core = { 0, 0 };
		char spec[600];

		setrlimit(RLIMIT_CORE, &no_core);
		snprintf(spec, sizeof(spec), "file:%s", out_path);
		setenv("PK_CONSOLE", spec, 1);
		fn();
		_exit(0);
	}
	tu_waitpid(pid, status, CHILD_MS, what);
	s = tu_read_file(out_path, NULL);
	unlink(out_path);
	free(out_path);
	return s ? s : strdup("");
}

/* Lines "<tag> <i>" for i in [0, n): each exactly once, in any order. */
static bool each_once(const char *text, const char *tag, unsigned n)
{
	char want[64];
	unsigned i;

	for (i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "%s %u\n", tag, i);
		if (tu_count(text, want) != 1)
			return false;
	}
	return true;
}

/* ---- the first call from a handler that interrupted malloc() ---- */

static _Atomic unsigned alarms;
static _Atomic int stop_mallocs;
static _Atomic int stop_alarms;	/* handlers run on either thread */

static void on_alarm(int sig)
{
	unsigned n;

	(void)sig;
	if (atomic_load(&stop_alarms))
		return;
	n = atomic_fetch_add(&alarms, 1);
	if (n < 100)
		pk_err("alarm %u\n", n);
}

static void *mallocs(void *arg)
{
	unsigned i = 0;
	void *p[16] = { 0 };

	(void)arg;
	while (!atomic_load(&stop_mallocs)) {
		free(p[i % 16]);
		p[i % 16] = malloc(16 + (i * 7919) % 4096);
		i++;
	}
	for (i = 0; i < 16; i++)
		free(p[i]);
	return NULL;
}

static void malloc_child_main(void)
{
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	pthread_t t[2];
	void *p[16] = { 0 };
	unsigned i = 0;

	pthread_create(&t[0], NULL, mallocs, NULL);
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	/* The handler runs on this thread, mostly inside malloc() or free(). */
	while (atomic_load(&alarms) < 100) {
		free(p[i % 16]);
		p[i % 16] = malloc(16 + (i * 7919) % 4096);
		i++;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	atomic_store(&stop_alarms, 1);
	atomic_store(&stop_mallocs, 1);
	pthread_join(t[0], NULL);
	for (i = 0; i < 16; i++)
		free(p[i]);
	/* The first ordinary call: the safe point. */
	pk_err("ordinary call\n");
	exit(0);	/* the exit flush prints everything */
}

static void test_first_call_in_handler_during_malloc(void **state)
{
	unsigned run_i, runs = (unsigned)(tu_seconds(20) * 2);
	int status;
	char *s;

	(void)state;
	if (runs < 10)
		runs = 10;
	for (run_i = 0; run_i < runs; run_i++) {
		s = run(malloc_child_main, &status, "first call in a handler during malloc");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail_msg("run %u: child status 0x%x", run_i, status);
		/* Two threads take the alarms: their handlers' numbers interleave. */
		if (!each_once(s, "alarm", 100) || !strstr(s, "ordinary call\n")) {
			fprintf(stderr, "%s\n", s);
			fail_msg("run %u: the handler's records are not all there (above)", run_i);
		}
		free(s);
	}
	printf("%u runs: heap intact, no deadlock, 100 handler records each\n", runs);
}

/* ---- only handlers log: exit is the safe point ---- */

static void on_usr1(int sig)
{
	unsigned i;

	(void)sig;
	for (i = 0; i < 20; i++)
		pk_err("handler only %u\n", i);
}

static void exit_child(void)
{
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	exit(0);
}

static void test_exit_prints_early_records(void **state)
{
	int status;
	char *s;

	(void)state;
	s = run(exit_child, &status, "exit after handler-only logging");
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!tu_tagged_in_order(s, "handler only", 20))
		fail_msg("early records not printed at exit:\n%s", s);
	free(s);
}

/* ---- pk_init() after early records: they come first, on its consoles ---- */

static void init_child(void)
{
	struct pk_console_driver d;
	struct pk_config cfg;
	unsigned i;

	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE;
	cfg.mode = PK_MODE_THREAD;
	TU_CHECK(pk_init(&cfg) == 0);
	TU_CHECK(pk_console_file_make(out_path, 0, &d) == 0);
	TU_CHECK(pk_console_register_driver(&d, -1));
	for (i = 0; i < 5; i++)
		pk_err("configured %u\n", i);
	TU_CHECK(pk_flush(10000) == 0);
	_exit(0);
}

static void test_init_takes_early_records(void **state)
{
	int status;
	char *s;

	(void)state;
	s = run(init_child, &status, "pk_init after early records");
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!tu_tagged_in_order(s, "handler only", 20) || !tu_tagged_in_order(s, "configured", 5) ||
	    strstr(s, "configured 0") < strstr(s, "handler only 19"))
		fail_msg("early records missing or out of order:\n%s", s);
	free(s);
}

/* ---- a panic before the library was set up ---- */

static void panic_child(void)
{
	int fd = open(out_path, O_WRONLY | O_CREAT | O_APPEND, 0600);

	TU_CHECK(fd >= 0 && dup2(fd, STDERR_FILENO) == STDERR_FILENO);
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	pk_panic("before init %d", 5);
}

static void test_panic_before_init(void **state)
{
	int status;
	char *s;

	(void)state;
	s = run(panic_child, &status, "panic before init");
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	if (!tu_tagged_in_order(s, "handler only", 20) ||
	    !strstr(s, "Kernel panic - not syncing: before init 5"))
		fail_msg("early records or report missing on stderr:\n%s", s);
	free(s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_call_in_handler_during_malloc),
		cmocka_unit_test(test_exit_prints_early_records),
		cmocka_unit_test(test_init_takes_early_records),
		cmocka_unit_test(test_panic_before_init),
	};

	setvbuf(stdout, NULL, _IONBF, 0);
	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
