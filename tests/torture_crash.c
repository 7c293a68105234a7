// SPDX-License-Identifier: MIT
/*
 * torture scenarios where the process dies: a crash at a random point, a
 * SIGABRT delivered inside pk_printk(), pk_panic() while other threads are
 * parked mid-record, and SIGKILL of a writer of a persistent store.
 *
 * The children tell the parent which records pk_printk() accepted (struct
 * acc, shared memory); the parent then checks that each of them came out,
 * or is counted in a drop notice, and that the report is there.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "printk/console.h"
#include "printk/reader.h"
#include "testutil.h"
#include "torture.h"

static void add_file_console(const char *path)
{
	struct pk_console_driver d;

	if (pk_console_file_make(path, 0, &d) || !pk_console_register_driver(&d, -1))
		_exit(91);
}

static char *read_and_tally(const char *path, struct tally *t)
{
	char *text = tu_read_file(path, NULL);

	if (!text)
		text = strdup("");
	tally_text(t, text);
	return text;
}

/* ---- crash: a random thread faults after a random number of records ---- */

#define CR_W	4
#define CR_C	2000

struct writer {
	pthread_t thread;
	unsigned w;
	uint64_t seed;
	struct acc *acc;
	uint64_t count;			/* records to log */
	uint64_t crash_at;		/* crash once counter crash_at - 1 is stored; 0: never */
	bool linger;			/* once done, wait for a signal instead of ending */
	_Atomic int inside;		/* inside pk_printk() now */
	_Atomic uint64_t done;		/* calls made */
	_Atomic int *go;
	_Atomic int *stop;
};

static void *writer_main(void *arg)
{
	struct writer *wr = arg;
	struct rng g = { wr->seed };
	char text[256];
	uint64_t c;
	int ret;

	while (!atomic_load(wr->go))
		;
	for (c = 0; c < wr->count && !(wr->stop && atomic_load(wr->stop)); c++) {
		tt_text(text, sizeof(text), wr->w, c, &g);
		atomic_store(&wr->inside, 1);
		ret = pk_printk(PK_INFO, "%s", text);
		atomic_store(&wr->inside, 0);
		if (ret >= 0)
			acc_set(wr->acc, wr->w, c);
		else
			atomic_fetch_add(&wr->acc->failed, 1);
		atomic_fetch_add(&wr->done, 1);
		if (wr->crash_at && c + 1 == wr->crash_at)
			tt_crash_now();
	}
	while (wr->linger)
		pause();	/* a signal aimed at this thread must still find it */
	return NULL;
}

static void start_writers(struct writer *ws, unsigned n, struct acc *a, uint64_t seed, uint64_t count,
			  _Atomic int *go, _Atomic int *stop, bool linger)
{
	unsigned w;

	for (w = 0; w < n; w++) {
		ws[w].linger = linger;
		ws[w].w = w;
		ws[w].seed = seed ^ (0x51ed27u * (w + 1));
		ws[w].acc = a;
		ws[w].count = count;
		ws[w].go = go;
		ws[w].stop = stop;
		pthread_create(&ws[w].thread, NULL, writer_main, &ws[w]);
	}
}

static bool crash_run(struct trun *r)
{
	char *path = tu_tmp_path("torture-crash"), *text;
	struct acc *a = acc_new(CR_W, CR_C);
	unsigned victim = (unsigned)rng_below(&r->rng, CR_W);
	uint64_t after = rng_below(&r->rng, CR_C);
	struct tally t;
	bool ok;
	int st;
	pid_t pid;

	tt_note(r, "thread %u crashes after %llu records", victim, (unsigned long long)after + 1);
	pid = fc_fork();
	if (pid == 0) {
		static struct writer ws[CR_W];
		static _Atomic int go;
		unsigned w;

		tt_child_init(r->mode, PK_CFG_CRASH_HANDLER, 1 << 20, NULL);
		add_file_console(path);
		ws[victim].crash_at = after + 1;
		start_writers(ws, CR_W, a, r->seed, CR_C, &go, NULL, false);
		atomic_store(&go, 1);
		for (w = 0; w < CR_W; w++)
			pthread_join(ws[w].thread, NULL);
		_exit(3);	/* the crash never came */
	}
	ok = tt_wait(r, pid, 30000, &st) && tt_died_of(r, st, SIGSEGV);
	tally_init(&t, CR_W, CR_C);
	text = read_and_tally(path, &t);
	if (!strstr(text, "Unable to handle SIGSEGV"))
		ok = tt_fail(r, "no crash report");
	ok &= tt_check_stored(r, a, &t, "file console", 0);
	tally_free(&t);
	free(text);
	tt_discard(path, ok);
	free(path);
	acc_free(a);
	return ok;
}

const struct scenario tt_crash = {
	.name = "crash",
	.what = "4 threads log to a file; a random one faults after a random number of records",
	.full_runs = 1000,
	.ci_runs = 40,
	.run = crash_run,
};

/* ---- sigabrt: SIGABRT delivered to a thread while it is inside pk_printk() ---- */

#define SA_W	2
#define SA_C	100000

static bool sigabrt_run(struct trun *r)
{
	char *path = tu_tmp_path("torture-abrt"), *text;
	struct acc *a = acc_new(SA_W, SA_C);
	unsigned target = (unsigned)rng_below(&r->rng, SA_W);
	uint64_t warm = rng_below(&r->rng, 3000), spin = rng_below(&r->rng, 20000);
	struct tally t;
	bool ok;
	int st;
	pid_t pid;

	tt_note(r, "SIGABRT to thread %u after %llu records and %llu spins", target,
		(unsigned long long)warm, (unsigned long long)spin);
	if (tu_sanitized_thread()) {
		/* Its runtime runs the handler inside its own atomics and deadlocks there. */
		tt_note(r, "not under ThreadSanitizer: it delivers the signal inside its own locks");
		r->skipped = true;
		ok = true;
		goto out;
	}
	pid = fc_fork();
	if (pid == 0) {
		static struct writer ws[SA_W];
		static _Atomic int go;
		volatile uint64_t i;
		unsigned w;

		tt_child_init(r->mode, PK_CFG_CRASH_HANDLER, 1 << 20, NULL);
		add_file_console(path);
		start_writers(ws, SA_W, a, r->seed, SA_C, &go, NULL, true);
		atomic_store(&go, 1);
		if (!tu_wait_until(atomic_load(&ws[target].done) >= warm, 20000))
			_exit(4);
		for (i = 0; i < spin; i++)
			;
		/* Aim for a moment when it is inside pk_printk(), in a bounded number of tries. */
		for (i = 0; i < 100000000 && !atomic_load(&ws[target].inside); i++)
			;
		pthread_kill(ws[target].thread, SIGABRT);
		for (w = 0; w < SA_W; w++)
			pthread_join(ws[w].thread, NULL);
		_exit(3);
	}
	ok = tt_wait(r, pid, 30000, &st) && tt_died_of(r, st, SIGABRT);
	tally_init(&t, SA_W, SA_C);
	text = read_and_tally(path, &t);
	if (!strstr(text, "Unable to handle SIGABRT"))
		ok = tt_fail(r, "no crash report");
	ok &= tt_check_stored(r, a, &t, "file console", 1);
	tally_free(&t);
	free(text);
	tt_discard(path, ok);
out:
	free(path);
	acc_free(a);
	return ok;
}

const struct scenario tt_sigabrt = {
	.name = "sigabrt",
	.what = "SIGABRT sent to a logging thread while it is inside pk_printk",
	.full_runs = 300,
	.ci_runs = 25,
	.run = sigabrt_run,
};

/* ---- panic-parked: pk_panic while other threads are parked mid-record ---- */

#define PP_W	3
#define PP_C	100000
#define PP_MAIN	PP_W		/* the panicking thread's own records */

static struct writer pp_ws[PP_W + 1];
static _Atomic int pp_parked[PP_W];
static __thread int pp_self = -1;

/*
 * SIGUSR1: park this thread for ever, wherever it was.  A loaded machine
 * may not have run the thread's start routine yet (pp_self unset): find
 * it by its thread ID, which pthread_create() stored before the signal
 * was sent, or the run waits for a park it never sees.
 */
static void park(int sig)
{
	int k = pp_self;

	(void)sig;
	for (int w = 0; k < 0 && w < PP_W; w++)
		if (pthread_equal(pp_ws[w].thread, pthread_self()))
			k = w;
	if (k >= 0 && k < PP_W)
		atomic_store(&pp_parked[k], atomic_load(&pp_ws[k].inside) ? 2 : 1);
	for (;;)
		pause();
}

static void *pp_writer(void *arg)
{
	pp_self = (int)((struct writer *)arg)->w;
	return writer_main(arg);
}

static uint64_t pp_done(void)
{
	uint64_t total = 0;
	unsigned w;

	for (w = 0; w < PP_W; w++)
		total += atomic_load(&pp_ws[w].done);
	return total;
}

/* The first record the console is offered blocks its write() for ever. */
static enum fc_fault block_first(const struct fc_console *fc, unsigned w, uint64_t c)
{
	(void)w;
	(void)c;
	return fc->test_records == 1 ? FC_BLOCK : FC_NONE;
}

static bool panic_parked_run(struct trun *r)
{
	char *path = tu_tmp_path("torture-panic"), *text;
	struct acc *a = acc_new(PP_W + 1, PP_C);
	uint64_t warm = 100 + rng_below(&r->rng, 3000);
	unsigned parked = 1 + (unsigned)rng_below(&r->rng, PP_W);
	bool blocked = rng_below(&r->rng, 2);
	struct tally t;
	bool ok;
	int st;
	pid_t pid;

	tt_note(r, "%u of %d threads parked after %llu records%s", parked, PP_W,
		(unsigned long long)warm, blocked ? ", one blocked in a console's write()" : "");
	pid = fc_fork();
	if (pid == 0) {
		static _Atomic int go;
		struct sigaction sa;
		struct rng g = { r->seed ^ 0xabcdef };
		struct fc_console *fc = NULL;
		char line[256];
		unsigned w, k;
		uint64_t c;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = park;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
		tt_child_init(r->mode, 0, 1 << 20, NULL);
		add_file_console(path);
		if (blocked) {
			fc = fc_new(block_first, 0);
			if (!pk_console_register(&fc_ops, fc, -1))
				_exit(91);
		}
		for (w = 0; w < PP_W; w++) {
			pp_ws[w].w = w;
			pp_ws[w].seed = r->seed ^ (0x51ed27u * (w + 1));
			pp_ws[w].acc = a;
			pp_ws[w].count = PP_C;
			pp_ws[w].go = &go;
			pp_ws[w].linger = true;
			if (pthread_create(&pp_ws[w].thread, NULL, pp_writer, &pp_ws[w]))
				_exit(7);
		}
		atomic_store(&go, 1);
		if (!tu_wait_until(pp_done() >= warm, 20000))
			_exit(4);
		/*
		 * A thread (a writer or a printer) is stuck in the blocking
		 * write() before the panic: otherwise the panicking thread
		 * would be the first to call it and block for ever itself,
		 * which nothing can prevent.
		 */
		if (blocked && !tu_wait_until(atomic_load(&fc->blocks) > 0, 20000))
			_exit(6);
		for (k = 0; k < parked; k++) {
			volatile uint64_t i, spin = rng_below(&g, 20000);

			for (i = 0; i < spin; i++)
				;
			for (i = 0; i < 100000000 && !atomic_load(&pp_ws[k].inside); i++)
				;
			if (pthread_kill(pp_ws[k].thread, SIGUSR1))
				_exit(8);
			/* Exit 50 + k: writer k never ran its SIGUSR1 handler. */
			if (!tu_wait_until(atomic_load(&pp_parked[k]), 30000))
				_exit(50 + (int)k);
		}
		for (c = 0; c < 20; c++) {
			tt_text(line, sizeof(line), PP_MAIN, c, &g);
			if (pk_printk(PK_INFO, "%s", line) >= 0)
				acc_set(a, PP_MAIN, c);
		}
		pk_panic("torture panic with %u threads parked", parked);
	}
	ok = tt_wait(r, pid, 30000, &st) && tt_died_of(r, st, SIGABRT);
	tally_init(&t, PP_W + 1, PP_C);
	text = read_and_tally(path, &t);
	if (!strstr(text, "Kernel panic - not syncing: torture panic"))
		ok = tt_fail(r, "no panic report");
	ok &= tt_check_stored(r, a, &t, "file console", parked + blocked);
	tally_free(&t);
	free(text);
	tt_discard(path, ok);
	free(path);
	acc_free(a);
	return ok;
}

const struct scenario tt_panic_parked = {
	.name = "panic-parked",
	.what = "pk_panic while other threads are parked inside pk_printk or a console's write",
	.full_runs = 200,
	.ci_runs = 15,
	.run = panic_parked_run,
};

/* ---- sigkill-store: SIGKILL of a writer of a persistent store ---- */

#define SK_W	4
#define SK_C	200000

static bool sigkill_store_run(struct trun *r)
{
	char *path = tu_tmp_path("torture-store"), *text = NULL;
	struct acc *a = acc_new(SK_W, SK_C);
	size_t size = rng_below(&r->rng, 2) ? 64 << 10 : 1 << 20, len = 0, cap = 0;
	bool console = rng_below(&r->rng, 2);
	uint64_t delay_us = rng_below(&r->rng, 30000);
	uint64_t gaps = 0, next = 0, missing = 0, c;
	struct pk_store_info info;
	struct pk_reader *rd;
	struct pk_record rec;
	struct writer *ws = fc_shared(sizeof(*ws) * SK_W);
	uint64_t first_c[SK_W];
	char desc[512];
	struct tally t;
	unsigned w;
	bool ok;
	int st, n;
	pid_t pid;

	tt_note(r, "%zu KiB store%s, killed %llu us into the storm", size >> 10,
		console ? ", a console" : "", (unsigned long long)delay_us);
	pid = fc_fork();
	if (pid == 0) {
		static _Atomic int go;

		tt_child_init(r->mode, PK_CFG_BUFFER_CLEAR, size, path);
		if (console)
			add_file_console("/dev/null");
		start_writers(ws, SK_W, a, r->seed, SK_C, &go, NULL, false);
		atomic_store(&go, 1);
		for (w = 0; w < SK_W; w++)
			pthread_join(ws[w].thread, NULL);
		_exit(0);
	}
	ok = tu_wait_until(atomic_load(&ws[0].done) > 0, 20000);
	if (!ok)
		tt_fail(r, "the writers never started");
	tt_usleep(delay_us);
	kill(pid, SIGKILL);
	ok &= tt_wait(r, pid, 10000, &st);

	rd = pk_reader_open_file(path);
	if (!rd) {
		ok = tt_fail(r, "pk_reader_open_file: %s", strerror(errno));
		goto out;
	}
	pk_reader_info(rd, &info);
	next = pk_reader_tell(rd);
	while ((n = pk_reader_next(rd, &rec)) == 1) {
		if (rec.seq > next)
			gaps += rec.seq - next;
		next = rec.seq + 1;
		if (len + rec.len + 2 > cap) {
			cap = (len + rec.len + 2) * 2;
			text = realloc(text, cap);
		}
		memcpy(text + len, rec.text, rec.len);
		len += rec.len;
		text[len++] = '\n';
		text[len] = '\0';
	}
	if (n < 0)
		ok = tt_fail(r, "pk_reader_next: %d", n);
	pk_reader_close(rd);
	tally_init(&t, SK_W, SK_C);
	tally_text(&t, text ? text : "");
	tally_describe(&t, desc, sizeof(desc));
	if (tally_damaged(&t))
		ok = tt_fail(r, "damaged store: %s", desc);
	/*
	 * Records older than a writer's oldest surviving one were overwritten
	 * (only if the store wrapped); every later one it stored must be there
	 * unless the reader saw that many seqs lost.
	 */
	for (w = 0; w < SK_W; w++) {
		first_c[w] = 0;
		if (info.oldest_seq != info.first_seq)
			for (first_c[w] = 0; first_c[w] < SK_C && !tally_seen(&t, w, first_c[w]);
			     first_c[w]++)
				;
		for (c = first_c[w]; c < SK_C; c++)
			if (acc_get(a, w, c) && !tally_seen(&t, w, c))
				missing++;
	}
	if (missing > gaps)
		ok = tt_fail(r,
			     "%llu committed records missing from the store, %llu seqs lost (seqs "
			     "%llu..%llu, oldest %llu): %s",
			     (unsigned long long)missing, (unsigned long long)gaps,
			     (unsigned long long)info.first_seq, (unsigned long long)info.next_seq,
			     (unsigned long long)info.oldest_seq, desc);
	tally_free(&t);
out:
	free(text);
	tt_discard(path, ok);
	free(path);
	fc_unshare(ws, sizeof(*ws) * SK_W);
	acc_free(a);
	return ok;
}

const struct scenario tt_sigkill_store = {
	.name = "sigkill-store",
	.what = "SIGKILL of 4 threads writing a persistent store; read it back",
	.full_runs = 200,
	.ci_runs = 15,
	.run = sigkill_store_run,
};
