// SPDX-License-Identifier: MIT
/*
 * test_lifecycle.c - the library's life cycle at its edges: a first
 * initialisation that another thread forks, cancels or exits during;
 * threads that cannot be started; a console stuck in write() at a flush
 * and at exit; thread mode's records at exit(); the gate's counters as a
 * config flag; the crash handler chaining to the program's own.
 *
 * Every case runs each scenario in a child of its own (a fresh library),
 * under a hang bound, and reads what reached the console file.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "format/format.h"
#include "store/store.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

static int state_now(void)
{
	return atomic_load(&pk__g.state);
}

/* Wait (bounded) until some thread has marked the library initialising; false if it never did. */
static bool wait_initialising(void)
{
	uint64_t until = tu_now_ns() + 2000000000ull;

	while (tu_now_ns() < until) {
		int st = state_now();

		if (st == PK__INITIALIZING)
			return true;
		if (st == PK__READY)
			return false;	/* too late: it finished already */
	}
	return false;
}

static void *first_call(void *arg)
{
	(void)arg;
	pk_info("first call\n");
	return NULL;
}

/* A store file and a file console: an initialisation with cancellation points, 10-40 ms. */
struct files {
	char *store, *out, spec[600];
};

static void files_make(struct files *f, const char *tag)
{
	f->store = tu_tmp_path(tag);
	f->out = tu_tmp_path(tag);
	snprintf(f->spec, sizeof(f->spec), "file:%s", f->out);
}

static void files_env(const struct files *f)
{
	setenv("PK_BUFFER", f->store, 1);
	setenv("PK_BUFFER_SIZE", "4m", 1);
	setenv("PK_CONSOLE", f->spec, 1);
}

static void files_free(struct files *f)
{
	unlink(f->store);
	unlink(f->out);
	free(f->store);
	free(f->out);
}

/* Lines of @path that contain @needle. */
static size_t count_in(const char *path, const char *needle)
{
	char *text = tu_read_file(path, NULL);
	size_t n = text ? tu_count(text, needle) : 0;

	free(text);
	return n;
}

/*
 * Exit codes of the scenario children: 0 it held; 10 + n a check failed;
 * 2 the first initialisation was over before the scenario could hit it
 * (the run does not count).
 */
#define MISSED	2

/* ---- fork while another thread initialises ---- */

static int fork_scenario(void)
{
	pthread_t t;
	int status, ret;
	pid_t pid;

	pthread_create(&t, NULL, first_call, NULL);
	if (!wait_initialising()) {
		pthread_join(t, NULL);
		return MISSED;
	}
	pid = fork();
	if (pid == 0) {
		/* The child: its records are printed, and its flush returns. */
		ret = pk_err("child record\n");
		if (ret < 0)
			_exit(11);
		ret = pk_flush(5000);
		_exit(ret == 0 ? 0 : 12);
	}
	if (pid < 0)
		return 13;
	pthread_join(t, NULL);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 14;
	if (pk_flush(5000) != 0)
		return 15;
	return WEXITSTATUS(status);
}

/*
 * Run @fn in @runs fresh children; the record @needle must be printed
 * once: on the console, or (@raw_ok: an exit that could not wait for the
 * initialisation to finish) on stderr after the library's note.
 */
static void run_scenarios(const char *what, const char *tag, int (*fn)(void),
			  const char *needle, unsigned runs, bool raw_ok)
{
	unsigned r, hit = 0, raw = 0;
	struct tu_grab g;
	struct files f;
	size_t on_con, on_err;
	char *err;
	int status;
	pid_t pid;

	for (r = 0; r < runs; r++) {
		files_make(&f, tag);
		tu_grab_start(&g);
		pid = tu_fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			files_env(&f);
			exit(fn());
		}
		tu_waitpid(pid, &status, 60000, what);
		err = tu_grab_end(&g);
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status) == MISSED) {
			free(err);
			files_free(&f);
			continue;
		}
		on_con = count_in(f.out, needle);
		on_err = raw_ok && strstr(err, "still initialising") ? tu_count(err, needle) : 0;
		if (WEXITSTATUS(status) != 0 || on_con + on_err != 1)
			print_message("%s, run %u: exit %d, \"%s\" printed %zu times, %zu on "
				      "stderr:\n%s", what, r, WEXITSTATUS(status), needle, on_con,
				      on_err, err);
		assert_int_equal(WEXITSTATUS(status), 0);
		assert_int_equal(on_con + on_err, 1);
		raw += on_err;
		hit++;
		free(err);
		files_free(&f);
	}
	print_message("%s: %u runs, %u hit the initialisation in progress\n", what, runs, hit);
	if (raw_ok)
		print_message("%s: %u of them printed on stderr (the initialisation outlasted "
			      "the exit's wait)\n", what, raw);
	assert_true(hit > 0);
}

static void test_fork_during_first_init(void **state)
{
	(void)state;
	/*
	 * The child's library starts threads of its own, and ThreadSanitizer
	 * refuses to start threads in the child of a threaded fork (it kills
	 * the child): a sanitizer limit.  The plain and ASan builds run it.
	 */
	if (tu_sanitized_thread())
		tu_skip("threads in the child of a threaded fork, under ThreadSanitizer");
	run_scenarios("fork during first init", "lc-fork", fork_scenario, "child record",
		      tu_scaled(20), false);
}

/* ---- the initialising thread is cancelled ---- */

static int cancel_scenario(void)
{
	pthread_t t;

	pthread_create(&t, NULL, first_call, NULL);
	if (!wait_initialising()) {
		pthread_join(t, NULL);
		return MISSED;
	}
	pthread_cancel(t);
	pthread_join(t, NULL);
	if (pk_err("after the cancel\n") < 0)
		return 11;
	if (pk_flush(5000) != 0)
		return 12;
	return 0;
}

static void test_cancel_during_first_init(void **state)
{
	(void)state;
	run_scenarios("cancel during first init", "lc-cancel", cancel_scenario,
		      "after the cancel", tu_scaled(20), false);
}

/* ---- main() returns while another thread initialises ---- */

static int exit_scenario(void)
{
	pthread_t t;

	pthread_create(&t, NULL, first_call, NULL);
	if (!wait_initialising()) {
		pthread_join(t, NULL);
		return MISSED;
	}
	pthread_detach(t);	/* never joined: the process ends with it */
	if (pk_err("main returns\n") < 0)
		return 11;
	return 0;	/* exit() with the first call still initialising */
}

static void test_exit_during_first_init(void **state)
{
	(void)state;
	run_scenarios("exit during first init", "lc-exit", exit_scenario, "main returns",
		      tu_scaled(20), true);
}

/* ---- no thread can be started ---- */

#define NOTHREAD_RECORDS 100

/*
 * pthread_create() fails from here on: every new thread's stack (1 TiB)
 * is more than the address space allows (RLIMIT_AS 4 GiB).
 */
static int no_threads(void)
{
	struct rlimit rl = { 4ull << 30, 4ull << 30 };
	pthread_attr_t a;
	pthread_t t;

	if (setrlimit(RLIMIT_AS, &rl) < 0 || pthread_attr_init(&a) ||
	    pthread_attr_setstacksize(&a, (size_t)1 << 40) || pthread_setattr_default_np(&a))
		return 20;
	pthread_attr_destroy(&a);
	if (pthread_create(&t, NULL, first_call, NULL) == 0)
		return 21;	/* threads can still be had: the case cannot show anything */
	return 0;
}

static void nothread_mode(enum pk_mode mode, const char *name)
{
	struct tu_grab g;
	struct files f;
	char *err, tag[64];
	int status;
	pid_t pid;

	if (tu_sanitized_address() || tu_sanitized_thread())
		tu_skip("sanitizers reserve address space of their own");
	snprintf(tag, sizeof(tag), "lc-nothr-%s", name);
	files_make(&f, tag);
	tu_grab_start(&g);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int i, ret;

		files_env(&f);
		setenv("PK_MODE", name, 1);
		ret = no_threads();
		if (ret)
			_exit(ret);
		for (i = 0; i < NOTHREAD_RECORDS; i++)
			if (pk_info("no threads %d\n", i) < 0)
				_exit(11);
		ret = pk_flush(5000);
		_exit(ret == 0 ? 0 : 12);
	}
	tu_waitpid(pid, &status, 60000, "no threads");
	err = tu_grab_end(&g);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0 || count_in(f.out, "no threads") != NOTHREAD_RECORDS)
		print_message("%s: exit %d, %zu of %d printed; stderr:\n%s", name,
			      WEXITSTATUS(status), count_in(f.out, "no threads"), NOTHREAD_RECORDS,
			      err);
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(count_in(f.out, "no threads"), NOTHREAD_RECORDS);
	/* Said once. */
	assert_int_equal(tu_count(err, mode == PK_MODE_THREAD ? "cannot start a printer thread"
							       : "cannot start the rescue thread"),
			 1);
	free(err);
	files_free(&f);
}

static void test_no_threads_thread(void **state)
{
	(void)state;
	nothread_mode(PK_MODE_THREAD, "thread");
}

static void test_no_threads_handoff(void **state)
{
	(void)state;
	nothread_mode(PK_MODE_HANDOFF, "handoff");
}

static void test_no_threads_legacy(void **state)
{
	(void)state;
	nothread_mode(PK_MODE_LEGACY, "legacy");
}

/* ---- a console stuck in write() ---- */

#define STUCK_RECORDS 50

/* Blocks for good once armed (a driver waiting on something that never comes). */
static _Atomic int stuck_armed;

static long stuck_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	while (atomic_load(&stuck_armed))
		pause();
	return (long)len;
}

static const struct pk_console_ops stuck_ops = { .name = "stuck", .write = stuck_write };

static void *stuck_logger(void *arg)
{
	(void)arg;
	pk_info("the record that sticks\n");
	return NULL;
}

/*
 * A helper thread gets stuck inside the stuck console's write(), holding
 * the console lock (handoff, legacy) and that console.  @flush: then
 * pk_flush() must print the file console; else exit() must.
 */
static int stuck_scenario(bool flush)
{
	struct pk_console *con;
	pthread_t t;
	int i, ret;

	if (pk_info("before\n") < 0)
		return 11;
	/* The stuck one first: a holder prints to it before the file console. */
	pk_console_unregister(pk_console_find(getenv("PK_CONSOLE")));
	con = pk_console_register(&stuck_ops, NULL, -1);
	if (!con || !pk_console_register_spec(getenv("PK_CONSOLE")))
		return 12;
	if (pk_flush(5000) != 0)
		return 13;
	atomic_store(&stuck_armed, 1);
	pthread_create(&t, NULL, stuck_logger, NULL);
	pthread_detach(t);
	usleep(100000);
	for (i = 0; i < STUCK_RECORDS; i++)
		pk_info("after stuck %d\n", i);
	if (!flush)
		return 0;	/* exit() prints them */
	ret = pk_flush(3000);
	/* Still behind on the stuck one, but every other console got them. */
	return ret == -ETIMEDOUT ? 0 : 14;
}

static int stuck_flush(void)
{
	return stuck_scenario(true);
}

static int stuck_exit(void)
{
	return stuck_scenario(false);
}

static void stuck_mode(const char *mode, bool flush)
{
	struct files f;
	int status;
	pid_t pid;
	uint64_t t0;

	files_make(&f, "lc-stuck");
	t0 = tu_now_ns();
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		files_env(&f);
		setenv("PK_MODE", mode, 1);
		exit(flush ? stuck_flush() : stuck_exit());
	}
	tu_waitpid(pid, &status, 60000, "stuck console");
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0 || count_in(f.out, "after stuck") != STUCK_RECORDS)
		print_message("%s, %s: exit %d, %zu of %d printed, %zu stuck notices\n", mode,
			      flush ? "pk_flush" : "exit", WEXITSTATUS(status),
			      count_in(f.out, "after stuck"), STUCK_RECORDS,
			      count_in(f.out, "is stuck in write()"));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(count_in(f.out, "after stuck"), STUCK_RECORDS);
	assert_int_equal(count_in(f.out, "the record that sticks"), 1);
	/* What the stuck one did not print is said on the other, once. */
	assert_int_equal(count_in(f.out, "console \"stuck\" is stuck in write()"), 1);
	print_message("stuck console, %s mode, %s: all %d printed on the other console in %.1f s\n",
		      mode, flush ? "pk_flush" : "exit", STUCK_RECORDS,
		      (double)(tu_now_ns() - t0) / 1e9);
	files_free(&f);
}

static void test_stuck_console_flush(void **state)
{
	(void)state;
	stuck_mode("handoff", true);
	stuck_mode("legacy", true);
}

static void test_stuck_console_exit(void **state)
{
	(void)state;
	stuck_mode("handoff", false);
	stuck_mode("legacy", false);
	stuck_mode("thread", false);
}

/* ---- thread mode: records of threads still logging at exit() ---- */

#define EXIT_WRITERS 4

/* Shared with the test: the last record each writer's pk_printk() returned for. */
static _Atomic int64_t *returned;

static void *exit_writer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	int64_t c;

	/*
	 * In bursts: printers are behind when exit() comes, but the console
	 * keeps up on average (a writer that outruns it for good is a storm,
	 * which the exit flush leaves after EXIT_DEADLINE_MS).
	 */
	for (c = 0;; c++) {
		if (pk_info("exit writer %u rec %lld\n", w, (long long)c) < 0)
			break;
		atomic_store(&returned[w], c);
		if (c % 50 == 49)
			usleep(2000);
	}
	return NULL;
}

/*
 * Records of writer @w from 0 to @upto not printed in @text; *@dropped:
 * the sum of the drop notices' counts.
 */
static int64_t missing(const char *text, unsigned w, int64_t upto, uint64_t *dropped)
{
	const char *p = text, *e;
	unsigned ww;
	long long c;
	int64_t n = 0;
	unsigned long long d;
	char *seen = calloc((size_t)upto + 2, 1);

	*dropped = 0;
	/* Line by line, each search bounded by its line: linear in the text. */
	for (; *p; p = *e ? e + 1 : e) {
		const char *q, *k;
		size_t len;

		e = strchr(p, '\n');
		if (!e)
			e = p + strlen(p);
		len = (size_t)(e - p);
		q = memmem(p, len, "exit writer ", 12);
		k = memmem(p, len, "** ", 3);
		if (q && sscanf(q, "exit writer %u rec %lld", &ww, &c) == 2 && ww == w && c >= 0 &&
		    c <= upto)
			seen[c] = 1;
		if (k && sscanf(k, "** %llu printk messages dropped **", &d) == 1)
			*dropped += d;
	}
	for (c = 0; c <= upto; c++)
		n += !seen[c];
	free(seen);
	return n;
}

static void test_thread_mode_exit(void **state)
{
	unsigned runs = tu_scaled(20), r, w, bad = 0;
	uint64_t dropped, lost_total = 0, dropped_total = 0;
	struct files f;
	char *text;
	int status;
	pid_t pid;

	(void)state;
	returned = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(returned != MAP_FAILED);
	for (r = 0; r < runs; r++) {
		int64_t miss = 0;

		files_make(&f, "lc-texit");
		for (w = 0; w < EXIT_WRITERS; w++)
			atomic_store(&returned[w], -1);
		pid = tu_fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			pthread_t t;
			uintptr_t i;

			files_env(&f);
			setenv("PK_BUFFER_SIZE", "16m", 1);
			setenv("PK_MODE", "thread", 1);
			pk_info("start\n");
			for (i = 0; i < EXIT_WRITERS; i++)
				pthread_create(&t, NULL, exit_writer, (void *)i);
			usleep(10000 + (useconds_t)(r % 7) * 3000);
			exit(0);	/* the writers are still logging */
		}
		tu_waitpid(pid, &status, 60000, "thread mode exit");
		assert_true(WIFEXITED(status));
		text = tu_read_file(f.out, NULL);
		assert_non_null(text);
		/* Every record whose call returned before the process ended is printed or counted. */
		for (w = 0; w < EXIT_WRITERS; w++)
			miss += missing(text, w, atomic_load(&returned[w]), &dropped);
		if ((uint64_t)miss > dropped) {
			print_message("run %u: %lld records returned but not printed, %llu counted "
				      "as dropped\n", r, (long long)miss, (unsigned long long)dropped);
			bad++;
		}
		lost_total += (uint64_t)miss;
		dropped_total += dropped;
		free(text);
		files_free(&f);
	}
	print_message("thread mode exit: %u runs x %d writers, %u runs with records returned but "
		      "neither printed nor counted (%llu not printed, %llu counted dropped)\n", runs,
		      EXIT_WRITERS, bad, (unsigned long long)lost_total,
		      (unsigned long long)dropped_total);
	munmap((void *)returned, 4096);
	assert_int_equal(bad, 0);
}

/* ---- exit with a slow console beside a healthy one ---- */

/*
 * A console that works, slowly (200 ms a record): in handoff mode it
 * paces the file console beside it, and the exit flush runs out of time
 * with records left on both.  Each says how many it leaves: the file
 * holds every record printed or counted.  (Before, the file was left
 * 60-65 % full with no notice at all.)
 */
static long slow_ok_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	usleep(200 * 1000);
	return (long)len;
}

static const struct pk_console_ops slow_ok_ops = { .name = "slow-ok", .write = slow_ok_write };

static void *slow_exit_writer(void *arg)
{
	int i;

	for (i = 0; i < 25; i++)
		pk_info("slow exit writer %u rec %d\n", (unsigned)(uintptr_t)arg, i);
	return NULL;
}

static void test_slow_console_exit_counted(void **state)
{
	struct files f;
	uint64_t dropped, total_dropped = 0;
	int64_t miss = 0;
	char *text;
	int status;
	unsigned w;
	pid_t pid;

	(void)state;
	files_make(&f, "lc-slowexit");
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pthread_t t[4];
		uintptr_t i;

		files_env(&f);
		setenv("PK_MODE", "handoff", 1);
		pk_info("start\n");
		if (!pk_console_register(&slow_ok_ops, NULL, -1))
			_exit(3);
		for (i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, slow_exit_writer, (void *)i);
		for (i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		exit(0);	/* 100 records at 200 ms each: more than the exit waits */
	}
	tu_waitpid(pid, &status, 60000, "exit with a slow console");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	text = tu_read_file(f.out, NULL);
	assert_non_null(text);
	/* "slow exit writer W rec C": missing() finds "exit writer W rec C" in it. */
	for (w = 0; w < 4; w++) {
		miss += missing(text, w, 24, &dropped);
		total_dropped = dropped;	/* every notice in the file, each time */
	}
	print_message("slow console at exit: %lld of 100 not printed on the file, %llu counted\n",
		      (long long)miss, (unsigned long long)total_dropped);
	assert_int_equal((uint64_t)miss, total_dropped);
	free(text);
	files_free(&f);
}

/* ---- PK_CFG_GATE_COUNTERS ---- */

static void test_gate_counters_flag(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pk_config cfg;

		unsetenv("PK_GATE");
		pk_config_init(&cfg);
		cfg.flags |= PK_CFG_GATE_COUNTERS | PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
		if (pk_init(&cfg) != 0)
			_exit(11);
		if (pk_info("x\n") < 0)
			_exit(12);
		/* No slot taken, and none in use: membarrier(2) is never needed. */
		_exit(!pk__gate_slots_on() && pk__gate_slot_self() < 0 ? 0 : 13);
	}
	tu_waitpid(pid, &status, 30000, "gate counters");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	/* PK_GATE=counters sets the flag in pk_config_init(). */
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pk_config cfg;

		setenv("PK_GATE", "counters", 1);
		pk_config_init(&cfg);
		_exit(cfg.flags & PK_CFG_GATE_COUNTERS ? 0 : 11);
	}
	tu_waitpid(pid, &status, 30000, "gate counters env");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- the crash handler chains to the program's own ---- */

static void own_segv(int sig, siginfo_t *si, void *uc)
{
	static const char msg[] = "own handler ran\n";

	(void)sig;
	(void)si;
	(void)uc;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(43);
	_exit(42);
}

static int *volatile bad_ptr;

static void chain_case(int sig)
{
	struct files f;
	char *out = NULL;
	int status, p[2];
	pid_t pid;

	files_make(&f, "lc-chain");
	assert_int_equal(pipe(p), 0);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sigaction sa = { .sa_sigaction = own_segv, .sa_flags = SA_SIGINFO };

		dup2(p[1], STDOUT_FILENO);
		files_env(&f);
		setenv("PK_CRASH_HANDLER", "1", 1);
		sigaction(sig, &sa, NULL);
		pk_info("before the fault\n");	/* installs the crash handler */
		/* A real fault, at an address that is not NULL (UBSan would stop
		 * a store through NULL before it faults). */
		bad_ptr = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (bad_ptr == MAP_FAILED)
			_exit(12);
		if (sig == SIGSEGV)
			*bad_ptr = 1;
		else
			abort();
		_exit(11);
	}
	close(p[1]);
	tu_waitpid(pid, &status, 30000, "crash chain");
	out = calloc(1, 256);
	assert_true(read(p[0], out, 255) >= 0);
	close(p[0]);
	if (!WIFEXITED(status))
		print_message("signal %d: ended by signal %d, stdout \"%s\"\n", sig,
			      WIFSIGNALED(status) ? WTERMSIG(status) : 0, out);
	/* The report first, then the program's own handler. */
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 42);
	assert_non_null(strstr(out, "own handler ran"));
	assert_int_equal(count_in(f.out, "Unable to handle"), 1);
	assert_int_equal(count_in(f.out, "before the fault"), 1);
	free(out);
	files_free(&f);
}

static void test_crash_handler_chains(void **state)
{
	(void)state;
	chain_case(SIGSEGV);
	chain_case(SIGABRT);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_during_first_init),
		cmocka_unit_test(test_cancel_during_first_init),
		cmocka_unit_test(test_exit_during_first_init),
		cmocka_unit_test(test_no_threads_thread),
		cmocka_unit_test(test_no_threads_handoff),
		cmocka_unit_test(test_no_threads_legacy),
		cmocka_unit_test(test_stuck_console_flush),
		cmocka_unit_test(test_stuck_console_exit),
		cmocka_unit_test(test_thread_mode_exit),
		cmocka_unit_test(test_slow_console_exit_counted),
		cmocka_unit_test(test_gate_counters_flag),
		cmocka_unit_test(test_crash_handler_chains),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
