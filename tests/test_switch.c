// SPDX-License-Identifier: MIT
/*
 * A store switch under load: pk_init() with another store while many
 * threads log.  What must hold, in every mode and with both kinds of
 * store gate (slots, and PK_GATE=counters):
 *   - every call that returned success is printed, or counted as dropped
 *     in-band (a drop notice on the console);
 *   - when the new store has room for every record, nothing is dropped:
 *     callers outside a signal handler wait for the switch (bounded)
 *     instead of overflowing the small early store;
 *   - a signal handler that logs while the switch holds callers out stores
 *     into the early store, and its record is printed;
 *   - records the early store cannot hold are counted: a notice on every
 *     console, and pk_stats_get()'s `lost'.
 * Each run is a forked child.  PK_TEST_SEED replays a run (the delay
 * before the switch, the records' lengths); PK_TEST_RUNS sets how many
 * runs each switch case makes.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/format.h"
#include "store/store.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

#define THREADS		200
#define RECORDS		100
#define CALLS		(1 + THREADS * RECORDS)	/* the early call, then the threads' */
#define STORE_SIZE	(16u << 20)
#define CHILD_MS	120000

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 8) & 0xffffff;
}

static unsigned base_seed(void)
{
	static unsigned seed;
	const char *e;

	if (!seed) {
		e = getenv("PK_TEST_SEED");
		seed = e && *e ? (unsigned)strtoul(e, NULL, 0)
			       : ((unsigned)time(NULL) ^ (unsigned)getpid()) | 1u;
		fprintf(stderr, "PK_TEST_SEED=%u\n", seed);
	}
	return seed;
}

static unsigned runs(void)
{
	const char *e = getenv("PK_TEST_RUNS");

	return e && *e ? (unsigned)strtoul(e, NULL, 0) : tu_scaled(1);
}

/* What a child reports back through its pipe. */
struct result {
	unsigned ok;		/* calls that returned success */
	unsigned failed;	/* calls that returned an error but -ENOBUFS */
	unsigned overrun;	/* calls that returned -ENOBUFS (lost, and counted) */
	int init;		/* pk_init()'s return */
	int flush;		/* pk_flush()'s return */
	unsigned long long lost;	/* pk_stats_get().lost after the switch */
	unsigned during;	/* calls made while pk_init() ran */
};

/* ---- the switch under 200 threads ---- */

/*
 * How the threads' logging meets the switch:
 *   ISSUE   as the issue reported it: the threads log at once while the
 *           main thread calls pk_init(); the first store is the default
 *           store (anonymous memory), sized by PK_BUFFER_SIZE to hold all
 *           the records too, so that whatever is dropped is the switch's
 *           (both stores hold the 20,001 records, call sites included,
 *           with the head less than half a data ring ahead of a console:
 *           beyond that a reader stops waiting for a record still being
 *           written, and a writer preempted there loses it, counted);
 *   WINDOW  the same, but the threads start logging only once the switch
 *           holds callers out (pk__switch_hook), and the switch holds them
 *           out until every thread has made its first call and 20 ms more:
 *           every record meets the switch;
 *   SMALL   ISSUE with the default store's default size (1 MiB of data),
 *           which 20,000 records overrun on their own before the switch
 *           comes when the threads outrun the console: records may be
 *           dropped, but each is counted;
 *   SLOW    a first store of 256 KiB and a console of 100 KB/s: the
 *           threads overrun the first store long before the console gets
 *           there, so at the switch the console stands before the oldest
 *           record and the store's 4 KiB chunks leave holes among the
 *           records copied over; each of those must be counted too.
 */
enum shape { ISSUE, WINDOW, SMALL, SLOW };

static const char *const shape_name[] = { "issue", "window", "small", "slow" };

static pthread_barrier_t go;
static _Atomic unsigned ok_calls, failed_calls, overrun_calls, entered;
static _Atomic bool released;
static unsigned pad_of[THREADS];
static _Atomic uint64_t init_from, init_to;
static _Atomic unsigned during;	/* calls made while pk_init() ran */

static void *writer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg, c;
	struct timespec nap = { 0, 100000 };
	uint64_t t0, from;
	char text[160];
	int ret;

	pthread_barrier_wait(&go);
	while (!atomic_load(&released))
		nanosleep(&nap, NULL);
	for (c = 0; c < RECORDS; c++) {
		tu_make_text(text, sizeof(text), w, c, pad_of[w]);
		t0 = tu_now_ns();
		if (!c)
			atomic_fetch_add(&entered, 1);
		ret = pk_info("%s\n", text);
		from = atomic_load(&init_from);
		if (from && t0 >= from && (!atomic_load(&init_to) || t0 < atomic_load(&init_to)))
			atomic_fetch_add(&during, 1);
		if (ret > 0)
			atomic_fetch_add(&ok_calls, 1);
		else if (ret == -ENOBUFS)
			atomic_fetch_add(&overrun_calls, 1);	/* overrun while written: counted */
		else
			atomic_fetch_add(&failed_calls, 1);
	}
	return NULL;
}

/* WINDOW: the switch holds callers out; let the threads at it. */
static void window_hook(void)
{
	struct timespec ms20 = { 0, 20000000 };

	atomic_store(&released, true);
	/* A hang guard only: each thread makes its first call at once. */
	tu_wait_until(atomic_load(&entered) == THREADS, 10000);
	nanosleep(&ms20, NULL);
}

static const char *mode_name(enum pk_mode m)
{
	return m == PK_MODE_HANDOFF ? "handoff" : m == PK_MODE_LEGACY ? "legacy" : "thread";
}

static void switch_child(int fd, enum pk_mode mode, bool counters, enum shape shape,
			 unsigned seed, const char *con, const char *store)
{
	static pthread_t t[THREADS];
	struct result r = { 0 };
	struct pk_config cfg;
	struct pk_stats st;
	char spec[600], text[160];
	unsigned i, delay_us;

	snprintf(spec, sizeof(spec), "file:%s%s", con, shape == SLOW ? "%100000" : "");
	if (counters)
		setenv("PK_GATE", "counters", 1);
	setenv("PK_CONSOLE", spec, 1);
	setenv("PK_MODE", mode_name(mode), 1);
	setenv("PK_LOGLEVEL", "8", 1);
	unsetenv("PK_BUFFER");
	if (shape == SMALL)
		unsetenv("PK_BUFFER_SIZE");
	else
		setenv("PK_BUFFER_SIZE", shape == SLOW ? "256k" : "8m", 1);
	for (i = 0; i < THREADS; i++)
		pad_of[i] = 4 + rnd(&seed) % 24;
	delay_us = rnd(&seed) % 2000;

	/* The early call: it sets the library up with the default store. */
	tu_make_text(text, sizeof(text), THREADS, 0, 4);
	if (pk_warn("%s\n", text) > 0)
		atomic_fetch_add(&ok_calls, 1);
	else
		atomic_fetch_add(&failed_calls, 1);

	pthread_barrier_init(&go, NULL, THREADS + 1);
	for (i = 0; i < THREADS; i++)
		TU_CHECK(pthread_create(&t[i], NULL, writer, (void *)(uintptr_t)i) == 0);
	if (shape == WINDOW)
		pk__switch_hook = window_hook;
	else
		atomic_store(&released, true);
	pthread_barrier_wait(&go);
	if (delay_us)
		usleep(delay_us);

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_ATEXIT;
	cfg.mode = mode;
	cfg.consoles = spec;
	cfg.console_loglevel = 8;
	cfg.buffer_path = store;
	cfg.buffer_size = STORE_SIZE;
	atomic_store(&init_from, tu_now_ns());
	r.init = pk_init(&cfg);
	atomic_store(&init_to, tu_now_ns());
	pk__switch_hook = NULL;
	atomic_store(&released, true);	/* had the switch failed */

	for (i = 0; i < THREADS; i++)
		TU_CHECK(pthread_join(t[i], NULL) == 0);
	r.flush = pk_flush(30000);
	r.ok = atomic_load(&ok_calls);
	r.failed = atomic_load(&failed_calls);
	r.overrun = atomic_load(&overrun_calls);
	r.during = atomic_load(&during);
	if (pk_stats_get(&st) == 0)
		r.lost = (unsigned long long)st.lost;
	TU_CHECK(write(fd, &r, sizeof(r)) == (ssize_t)sizeof(r));
	_exit(0);
}

/* Per case, over its runs: for the summary line. */
struct tally {
	unsigned runs, lossy, bad;
	unsigned long long during;
	unsigned long long printed, dropped, max_dropped, silent;
};

/* One run: the child logs and switches; the console file is counted here. */
static void switch_run(enum pk_mode mode, bool counters, enum shape shape, unsigned seed,
		       struct tally *ty)
{
	char *con = tu_tmp_path("switch-con"), *store = tu_tmp_path("switch-store");
	struct result r = { 0 };
	struct tu_lines l;
	int fds[2], status;
	bool wrong;
	char *text;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(fds[0]);
		switch_child(fds[1], mode, counters, shape, seed, con, store);
	}
	close(fds[1]);
	tu_waitpid(pid, &status, CHILD_MS, "store switch under 200 threads");
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(read(fds[0], &r, sizeof(r)), (ssize_t)sizeof(r));
	close(fds[0]);

	text = tu_read_file(con, NULL);
	assert_non_null(text);
	assert_int_equal(tu_parse_lines(text, THREADS + 1, &l), 0);
	free(text);
	if (getenv("PK_TEST_KEEP")) {
		fprintf(stderr, "kept %s and %s\n", con, store);
	} else {
		unlink(con);
		unlink(store);
	}
	free(con);
	free(store);

	/* A call that returned -ENOBUFS was stored and overrun: counted as dropped. */
	wrong = r.init || r.flush || r.failed || r.ok + r.overrun != CALLS ||
		l.lines + l.dropped != CALLS || (shape <= WINDOW && (l.dropped || r.overrun));
	ty->runs++;
	ty->during += r.during;
	ty->printed += l.lines;
	ty->dropped += l.dropped;
	ty->silent += CALLS > l.lines + l.dropped ? CALLS - l.lines - l.dropped : 0;
	if (l.dropped > ty->max_dropped)
		ty->max_dropped = l.dropped;
	ty->lossy += l.dropped != 0;
	ty->bad += wrong;
	if (wrong)
		print_message("%s, %s, %s, seed %u: pk_init %d, pk_flush %d, %u calls ok, %u "
			      "failed; %zu printed, %llu counted dropped (%zu notices), %llu lost "
			      "in stats: %lld neither printed nor counted\n",
			      mode_name(mode), counters ? "counters" : "slots", shape_name[shape],
			      seed, r.init, r.flush, r.ok, r.failed, l.lines,
			      (unsigned long long)l.dropped, l.notices, r.lost,
			      (long long)CALLS - (long long)l.lines - (long long)l.dropped);
}

/* Every shape, runs() times each (PK_TEST_RUNS), seeds from base_seed(). */
static void switch_case(enum pk_mode mode, bool counters)
{
	unsigned seed = base_seed(), i, n = runs();
	const char *only = getenv("PK_TEST_SHAPE");
	struct tally ty;
	enum shape sh;

	for (sh = ISSUE; sh <= SLOW; sh++) {
		if (only && strcmp(only, shape_name[sh]))
			continue;
		memset(&ty, 0, sizeof(ty));
		for (i = 0; i < n; i++)
			switch_run(mode, counters, sh, seed + i * 7919u, &ty);
		fprintf(stderr, "%s, %s, %s: %u runs from seed %u: %llu calls during pk_init(), "
			"%llu printed, %llu dropped (at most %llu in a run, %u runs with any), "
			"%llu neither, %u runs wrong\n", mode_name(mode),
			counters ? "counters" : "slots", shape_name[sh], ty.runs, seed, ty.during,
			ty.printed, ty.dropped, ty.max_dropped, ty.lossy, ty.silent, ty.bad);
		/*
		 * Each run: pk_init() and pk_flush() returned 0, every call
		 * returned success, and each was printed or counted as dropped
		 * in-band; with room in both stores, none was dropped.
		 */
		assert_int_equal(ty.bad, 0);
	}
}

static void test_switch_handoff_slots(void **state)
{
	(void)state;
	switch_case(PK_MODE_HANDOFF, false);
}

static void test_switch_legacy_slots(void **state)
{
	(void)state;
	switch_case(PK_MODE_LEGACY, false);
}

static void test_switch_thread_slots(void **state)
{
	(void)state;
	switch_case(PK_MODE_THREAD, false);
}

static void test_switch_handoff_counters(void **state)
{
	(void)state;
	switch_case(PK_MODE_HANDOFF, true);
}

static void test_switch_legacy_counters(void **state)
{
	(void)state;
	switch_case(PK_MODE_LEGACY, true);
}

static void test_switch_thread_counters(void **state)
{
	(void)state;
	switch_case(PK_MODE_THREAD, true);
}

/* ---- a signal handler and the switching thread log during the switch ---- */

#define SIG_CONSOLES	2

static pthread_t sig_thread;
static _Atomic bool sig_done, sig_stop;
static unsigned sig_records;

static void sig_handler(int sig)
{
	char text[160];
	unsigned c;

	(void)sig;
	/* SIGUSR1 is blocked while this runs: a handler, which cannot wait. */
	for (c = 0; c < sig_records; c++) {
		tu_make_text(text, sizeof(text), 0, c, 8);
		pk_info("%s\n", text);
	}
	atomic_store(&sig_done, true);
}

static void *sig_main(void *arg)
{
	struct timespec nap = { 0, 200000 };

	(void)arg;
	while (!atomic_load(&sig_stop))
		nanosleep(&nap, NULL);
	return NULL;
}

/* During the switch: a handler on another thread logs, then this thread does. */
static void sig_hook(void)
{
	char text[160];

	TU_CHECK(pthread_kill(sig_thread, SIGUSR1) == 0);
	tu_wait_until(atomic_load(&sig_done), 30000);
	/* The switching thread itself: it must not wait for its own switch. */
	tu_make_text(text, sizeof(text), 1, 0, 8);
	TU_CHECK(pk_info("%s\n", text) > 0);
}

struct sig_result {
	int init, flush, stats;
	unsigned long long lost;
	bool done;
};

static void sig_child(int fd, enum pk_mode mode, const char *const con[SIG_CONSOLES],
		      const char *store)
{
	struct sigaction sa;
	struct sig_result r = { 0 };
	struct pk_config cfg;
	struct pk_stats st;
	char spec[1300];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_handler;
	sigemptyset(&sa.sa_mask);
	TU_CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	snprintf(spec, sizeof(spec), "file:%s,file:%s", con[0], con[1]);
	setenv("PK_CONSOLE", spec, 1);
	setenv("PK_MODE", mode_name(mode), 1);
	setenv("PK_LOGLEVEL", "8", 1);
	unsetenv("PK_BUFFER");
	unsetenv("PK_BUFFER_SIZE");
	TU_CHECK(pk_warn("first\n") > 0);
	TU_CHECK(pthread_create(&sig_thread, NULL, sig_main, NULL) == 0);

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_ATEXIT;
	cfg.mode = mode;
	cfg.consoles = spec;
	cfg.console_loglevel = 8;
	cfg.buffer_path = store;
	cfg.buffer_size = STORE_SIZE;
	pk__switch_hook = sig_hook;
	r.init = pk_init(&cfg);
	pk__switch_hook = NULL;
	r.done = atomic_load(&sig_done);
	atomic_store(&sig_stop, true);
	TU_CHECK(pthread_join(sig_thread, NULL) == 0);
	r.flush = pk_flush(30000);
	r.stats = pk_stats_get(&st);
	r.lost = (unsigned long long)st.lost;
	TU_CHECK(write(fd, &r, sizeof(r)) == (ssize_t)sizeof(r));
	_exit(0);
}

/*
 * @records from the handler: all printed on both consoles (few), or, more
 * than the early store holds, each printed or counted on both consoles
 * and in pk_stats_get()'s `lost'.
 */
static void sig_case(unsigned records, bool overflow)
{
	enum pk_mode modes[] = { PK_MODE_HANDOFF, PK_MODE_LEGACY, PK_MODE_THREAD };
	unsigned k, i;

	for (k = 0; k < 3; k++) {
		char *con[SIG_CONSOLES] = { tu_tmp_path("sig-con"), tu_tmp_path("sig-con") };
		char *store = tu_tmp_path("sig-store");
		struct sig_result r = { 0 };
		int fds[2], status;
		pid_t pid;

		sig_records = records;
		assert_int_equal(pipe(fds), 0);
		pid = tu_fork();
		assert_true(pid >= 0);
		if (!pid) {
			close(fds[0]);
			sig_child(fds[1], modes[k], (const char *const *)con, store);
		}
		close(fds[1]);
		tu_waitpid(pid, &status, CHILD_MS, "a signal handler logs during the switch");
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_int_equal(read(fds[0], &r, sizeof(r)), (ssize_t)sizeof(r));
		close(fds[0]);
		assert_int_equal(r.init, 0);
		assert_int_equal(r.flush, 0);
		assert_int_equal(r.stats, 0);
		assert_true(r.done);
		for (i = 0; i < SIG_CONSOLES; i++) {
			char *text = tu_read_file(con[i], NULL);
			struct tu_lines l;

			assert_non_null(text);
			assert_int_equal(tu_parse_lines(text, 2, &l), 0);
			fprintf(stderr, "%s, console %u: %u from the handler and 1 from the switching "
				"thread: %zu printed, %llu dropped (%zu notices); stats: %llu lost\n",
				mode_name(modes[k]), i, records, l.lines,
				(unsigned long long)l.dropped, l.notices, r.lost);
			/* Every record printed or counted, on every console. */
			assert_int_equal(l.lines + l.dropped, records + 1);
			assert_true(strstr(text, "first") != NULL);
			if (overflow) {
				assert_true(l.dropped > 0 && l.notices > 0);
				assert_true(r.lost >= l.dropped);
			} else {
				assert_int_equal(l.dropped, 0);
			}
			free(text);
			unlink(con[i]);
			free(con[i]);
		}
		unlink(store);
		free(store);
	}
}

static void test_signal_during_switch(void **state)
{
	(void)state;
	sig_case(20, false);
}

static void test_early_overflow_counted(void **state)
{
	(void)state;
	/* The early store holds 2048 records at most, fewer of these. */
	sig_case(6000, true);
}

/* ---- switching to a store smaller than the backlog ---- */

/*
 * 8 threads log 1000 self-checking lines each while the main thread
 * switches the store four times between 1 MiB and 512 KiB of data, each
 * pk_init() also replacing the configuration's file console (the same
 * name: it goes on where the old one stopped).  The console lags, so a
 * switch to the smaller store meets a backlog larger than the store: the
 * copy keeps what fits and counts the rest, and every record is printed or
 * counted.  Before, the copy overwrote its own first records (thousands
 * lost without a count), and where it did not, writers overwrote the lost
 * note standing for the records left out before the replaced console got
 * to it (counted as one record: thread mode, 3 runs of 30).
 */
#define SHRINK_THREADS	8
#define SHRINK_LINES	1000

/*
 * A call may lose its record to an overrun while it writes it (-ENOBUFS:
 * the writer was preempted mid-record while the others went round its
 * lane, seen once under ThreadSanitizer on a loaded machine); the record
 * is then counted dropped like any other, which the sum below checks.
 * Any other error fails.
 */
static void *shrink_writer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg, i;
	char text[96];
	int ret;

	for (i = 0; i < SHRINK_LINES; i++) {
		tu_make_text(text, sizeof(text), w, i, (w * 7 + i) % 40);
		ret = pk_info("%s\n", text);
		if (ret < 0 && ret != -ENOBUFS)
			fprintf(stderr, "writer %u line %u: pk_info() returned %d (%s)\n", w, i, ret,
				strerror(-ret));
		TU_CHECK(ret >= 0 || ret == -ENOBUFS);
	}
	return NULL;
}

/* Hostile takeovers in the child: a printer starved for TAKEOVER_MS (flush.c). */
static _Atomic uint64_t *shrink_takeovers;

static void shrink_child(enum pk_mode mode, const char *con)
{
	struct pk_flush_stats fs;
	char spec[600];
	struct pk_config cfg;
	pthread_t t[SHRINK_THREADS];
	int k, rc = 0;
	uintptr_t i;

	snprintf(spec, sizeof(spec), "file:%s", con);
	pk_config_init(&cfg);
	cfg.mode = mode;
	cfg.consoles = spec;
	cfg.buffer_size = 1u << 20;
	cfg.flags |= PK_CFG_NO_ATEXIT;
	if (pk_init(&cfg))
		_exit(2);
	for (i = 0; i < SHRINK_THREADS; i++)
		if (pthread_create(&t[i], NULL, shrink_writer, (void *)i))
			_exit(3);
	for (k = 0; k < 4; k++) {
		cfg.buffer_size = k % 2 ? 1u << 20 : 1u << 19;
		rc |= pk_init(&cfg);
		usleep(5000);
	}
	for (i = 0; i < SHRINK_THREADS; i++)
		pthread_join(t[i], NULL);
	rc |= pk_flush(10000);
	if (pk_flush_stats_get(&fs) == 0)
		atomic_store(shrink_takeovers, fs.takeovers);
	pk_shutdown();
	_exit(rc ? 4 : 0);
}

static void test_shrink_counted(void **state)
{
	static const enum pk_mode modes[] = { PK_MODE_HANDOFF, PK_MODE_LEGACY, PK_MODE_THREAD };
	unsigned m, run, n = 4 * tu_scaled(1);
	struct tu_lines l;
	int status;
	pid_t pid;

	(void)state;
	shrink_takeovers = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				-1, 0);
	assert_true(shrink_takeovers != MAP_FAILED);
	for (m = 0; m < 3; m++) {
		for (run = 0; run < n; run++) {
			char *con = tu_tmp_path("shrink"), *text;
			uint64_t sum, tk;

			atomic_store(shrink_takeovers, 0);
			pid = fork();
			assert_true(pid >= 0);
			if (!pid)
				shrink_child(modes[m], con);
			tu_waitpid(pid, &status, CHILD_MS, "switches to a smaller store");
			assert_true(WIFEXITED(status));
			assert_int_equal(WEXITSTATUS(status), 0);
			text = tu_read_file(con, NULL);
			assert_non_null(text);
			assert_int_equal(tu_parse_lines(text, SHRINK_THREADS, &l), 0);
			sum = l.lines + l.dropped;
			tk = atomic_load(shrink_takeovers);
			if (sum != SHRINK_THREADS * SHRINK_LINES && getenv("PK_TEST_KEEP")) {
				fprintf(stderr, "kept %s\n", con);
				FILE *kf = fopen("/tmp/lb/shrink.txt", "w");
				fputs(text, kf);
				fclose(kf);
			}
			if (sum != SHRINK_THREADS * SHRINK_LINES)
				fprintf(stderr, "mode %u run %u: %zu printed + %llu dropped != %u "
					"(%llu takeovers)\n", m, run, l.lines,
					(unsigned long long)l.dropped, SHRINK_THREADS * SHRINK_LINES,
					(unsigned long long)tk);
			/*
			 * Exact, unless pk_flush() took a console from a printer
			 * that made no progress for a second (a loaded sanitizer
			 * run): then one record a takeover may miss or repeat
			 * (seen once, 7999 of 8000, under AddressSanitizer; the
			 * takeover path does not move a switch's position state).
			 */
			if (!tk)
				assert_int_equal(sum, SHRINK_THREADS * SHRINK_LINES);
			else
				assert_true(sum + tk >= SHRINK_THREADS * SHRINK_LINES &&
					    sum <= SHRINK_THREADS * SHRINK_LINES + tk);
			free(text);
			unlink(con);
			free(con);
		}
	}
	munmap((void *)shrink_takeovers, 4096);
}

/* ---- a switch that fits, racing registration, and a shared store ---- */

/* Slow (100 ms a record) until the switch is done: the console lags it. */
static _Atomic bool slow_phase = true;

static long slow_con_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	if (atomic_load(&slow_phase))
		usleep(100000);
	return (long)len;
}

static const struct pk_console_ops slow_con_ops = { .name = "slow", .write = slow_con_write };

/*
 * A store as large as the one in use holds all it holds: nothing is
 * dropped, whatever the margin a smaller store needs (at a fixed three
 * quarters, up to 22 % was dropped).  And onto a store file another
 * process keeps writing into: the copies interleave with its records, and
 * every console still goes on where its records went, every record
 * printed or counted (it jumped to the head before: 195 of 1000 printed,
 * none counted).
 */
static void fits_child(const char *store, bool shared)
{
	struct pk_console_stats cs;
	struct pk_config cfg;
	struct pk_console *c;
	struct pk_stats st;
	uint64_t want;
	char pad[200];
	int i;

	pk_config_init(&cfg);
	cfg.mode = PK_MODE_THREAD;
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.buffer_size = 1u << 20;
	if (pk_init(&cfg))
		_exit(2);
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	/*
	 * Until the store is full (its first records overwritten): the
	 * console, registered then, starts at the oldest record, and all it
	 * finds must reach it.
	 */
	for (i = 0; i < 100000; i++) {
		pk_info("%d %s\n", i, pad);
		if (pk_stats_get(&st) || st.oldest_seq > st.first_seq)
			break;
	}
	c = pk_console_register(&slow_con_ops, NULL, 8);
	if (!c || pk_stats_get(&st))
		_exit(3);
	want = st.next_seq - st.oldest_seq;
	cfg.buffer_path = store;
	if (shared)
		cfg.flags &= ~(unsigned)PK_CFG_BUFFER_CLEAR;
	if (pk_init(&cfg))
		_exit(4);
	atomic_store(&slow_phase, false);
	if (pk_flush(60000))
		_exit(4);
	if (pk_console_stats_get(c, &cs))
		_exit(5);
	fprintf(stderr, "%s: %llu printed, %llu dropped of %llu\n", shared ? "shared" : "same size",
		(unsigned long long)cs.records, (unsigned long long)cs.dropped,
		(unsigned long long)want);
	/* Shared: the other process's records push ours out too, counted. */
	if (cs.records + cs.dropped != want || (!shared && cs.dropped) || !cs.records)
		_exit(6);
	_exit(0);
}

static void test_switch_fits_and_shared(void **state)
{
	char *store = tu_tmp_path("fits");
	int status, round;
	pid_t pid, other;

	(void)state;
	for (round = 0; round < 2; round++) {
		bool shared = round == 1;

		unlink(store);
		other = -1;
		if (shared) {
			other = fork();
			assert_true(other >= 0);
			if (!other) {
				struct pk_config cfg;
				long k;

				pk_config_init(&cfg);
				cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
				cfg.buffer_size = 1u << 20;
				cfg.buffer_path = store;
				if (pk_init(&cfg))
					_exit(2);
				for (k = 0;; k++) {
					pk_info("other %ld\n", k);
					if (k % 64 == 0)
						usleep(50);
				}
			}
			usleep(200000);
		}
		pid = fork();
		assert_true(pid >= 0);
		if (!pid)
			fits_child(store, shared);
		tu_waitpid(pid, &status, CHILD_MS, "a switch that fits");
		if (other > 0) {
			kill(other, SIGKILL);
			waitpid(other, NULL, 0);
		}
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	unlink(store);
	free(store);
}

/*
 * Consoles registered and unregistered on two threads while the main
 * thread switches the store 200 times: a console set up in a store the
 * switch then released faulted (SIGSEGV in 3 of 3 runs).
 */
static _Atomic bool reg_stop;

static void *reg_loop(void *arg)
{
	struct pk_console *c;

	(void)arg;
	while (!atomic_load(&reg_stop)) {
		c = pk_console_register(&slow_con_ops, NULL, 0);	/* prints nothing */
		if (c)
			pk_console_unregister(c);
	}
	return NULL;
}

static void test_register_during_switch(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct pk_config cfg;
		pthread_t t[2];
		int k, i;

		pk_config_init(&cfg);
		cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
		if (pk_init(&cfg))
			_exit(2);
		for (i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, reg_loop, NULL);
		for (k = 0; k < 200; k++) {
			cfg.buffer_size = k % 2 ? 1u << 20 : 1u << 19;
			pk_info("switch %d\n", k);
			if (pk_init(&cfg))
				_exit(3);
		}
		atomic_store(&reg_stop, true);
		for (i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		_exit(0);
	}
	tu_waitpid(pid, &status, CHILD_MS, "registering during switches");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_switch_handoff_slots),
		cmocka_unit_test(test_switch_legacy_slots),
		cmocka_unit_test(test_switch_thread_slots),
		cmocka_unit_test(test_switch_handoff_counters),
		cmocka_unit_test(test_switch_legacy_counters),
		cmocka_unit_test(test_switch_thread_counters),
		cmocka_unit_test(test_signal_during_switch),
		cmocka_unit_test(test_early_overflow_counted),
		cmocka_unit_test(test_shrink_counted),
		cmocka_unit_test(test_switch_fits_and_shared),
		cmocka_unit_test(test_register_during_switch),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
