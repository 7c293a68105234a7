// SPDX-License-Identifier: MIT
/*
 * torture scenarios where the process lives on: a signal storm, a fork
 * storm with a shared store, filtered floods, and console registration
 * and thread cancellation during a storm.
 *
 * The child checks what its consoles printed itself (it has them in
 * memory) and reports each broken promise through tt_rep.  Completeness
 * is checked before any pk_flush() (a record nobody prints would be
 * printed by pk_flush itself, and the test would see nothing), then again
 * after it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "printk/console.h"
#include "testutil.h"
#include "torture.h"

#define CALL_BOUND_MS	2000.0	/* a call longer than this hangs (never a timing) */

static struct pk_console *add_sink(struct tt_sink *sink, int loglevel)
{
	struct pk_console *con = pk_console_register(&tt_sink_ops, sink, loglevel);

	if (!con)
		_exit(91);
	pk_console_set_format(con, PK_FMT_RAW);
	return con;
}

static char *file_text(void *arg)
{
	char *s = tu_read_file(arg, NULL);

	return s ? s : strdup("");
}

/* Every stored record of writers [@w0, @w1) in @text or counted; nothing damaged. */
static void child_check(const struct acc *a, const char *text, unsigned w0, unsigned w1,
			const char *what)
{
	char desc[512], first[64] = "";
	struct tally t;
	uint64_t missing;

	tally_init(&t, a->nw, a->nc);
	tally_text(&t, text);
	tally_describe(&t, desc, sizeof(desc));
	missing = acc_missing(a, &t, w0, w1, first, sizeof(first));
	if (tally_damaged(&t))
		fc_failf(tt_rep, "%s: damaged output: %s", what, desc);
	if (missing > t.dropped)
		fc_failf(tt_rep, "%s: %llu stored records missing (first %s), %llu counted dropped: %s",
			 what, (unsigned long long)missing, first, (unsigned long long)t.dropped, desc);
	tally_free(&t);
}

/* ---- signal-storm: handlers log at a high rate while main logs filtered and printable ---- */

#define SS_MAIN		0	/* main's printable records */
#define SS_SIG		1	/* the handler's */
#define SS_FILT		2	/* main's filtered records */
#define SS_C		200000

static struct acc *ss_acc;
static volatile sig_atomic_t ss_count;
static int ss_level;

static void ss_handler(int sig)
{
	uint64_t c = (uint64_t)ss_count;
	int saved = errno;
	char text[160];

	(void)sig;
	if (c < SS_C) {
		tt_text_safe(text, sizeof(text), SS_SIG, c, (unsigned)(c % 50));
		if (pk_printk(ss_level, "%s", text) >= 0)
			acc_set(ss_acc, SS_SIG, c);
		ss_count = (sig_atomic_t)(c + 1);
	}
	errno = saved;
}

static void ss_main_record(unsigned w, uint64_t *c, struct rng *g)
{
	char text[256];

	tt_text(text, sizeof(text), w, *c, g);
	if (pk_printk(w == SS_FILT ? PK_DEBUG : PK_INFO, "%s", text) >= 0)
		acc_set(ss_acc, w, *c);
	++*c;
}

static bool signal_storm_run(struct trun *r)
{
	static const unsigned every[] = { 2, 10, 100 };
	unsigned n_main = r->ci ? 10000 : 30000;
	unsigned printable_every = every[rng_below(&r->rng, 3)];
	long us = tu_sanitized_thread() ? 500 : 20 + (long)rng_below(&r->rng, 100);
	bool err = rng_below(&r->rng, 2);
	struct acc *a = acc_new(3, SS_C);
	int st;
	pid_t pid;
	bool ok;

	tt_note(r, "%u main records, 1 in %u printable; SIGALRM every %ld us logs pk_%s; then 8 "
		"single signals", n_main, printable_every, us, err ? "err" : "info");
	pid = fc_fork();
	if (pid == 0) {
		struct itimerval it = { { 0, us }, { 0, us } }, off = { { 0, 0 }, { 0, 0 } };
		struct tt_sink *sink = tt_sink_new(256 << 20);
		struct rng g = { r->seed ^ 0x5157 };
		struct tt_watch watch;
		struct sigaction sa;
		sigset_t set;
		char what[64], *out;
		uint64_t c[3] = { 0, 0, 0 }, i, k;
		sig_atomic_t before;
		int ret;

		ss_acc = a;
		ss_level = err ? PK_ERR : PK_INFO;
		tt_child_init(r->mode, 0, 4 << 20, NULL);
		add_sink(sink, -1);
		tt_watch_init(&watch, a, tt_sink_text, sink);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = ss_handler;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		for (i = 0; i < n_main; i++) {
			unsigned w = rng_below(&g, printable_every) ? SS_FILT : SS_MAIN;

			ss_main_record(w, &c[w], &g);
		}
		setitimer(ITIMER_REAL, &off, NULL);
		/* Before any pk_flush: everything printed, or somebody still printing. */
		tt_child_printed(&watch, a, SS_MAIN, SS_SIG + 1, "after the storm", 2000, 60000);
		/*
		 * One signal at a random point of a thread that logs filtered
		 * records only: its handler's record must not wait behind the
		 * interrupted one for a printable record that never comes.
		 */
		for (k = 0; k < 8; k++) {
			struct itimerval one = { { 0, 0 }, { 0, 1 + (long)rng_below(&g, 300) } };

			before = ss_count;
			setitimer(ITIMER_REAL, &one, NULL);
			for (i = 0; ss_count == before && i < 10000000; i++)
				ss_main_record(SS_FILT, &c[SS_FILT], &g);
			for (i = 0; i < 10; i++)
				ss_main_record(SS_FILT, &c[SS_FILT], &g);
			snprintf(what, sizeof(what), "after single signal %llu", (unsigned long long)k);
			if (!tt_child_printed(&watch, a, SS_MAIN, SS_SIG + 1, what, 2000, 30000))
				break;
		}
		sigemptyset(&set);
		sigaddset(&set, SIGALRM);
		sigprocmask(SIG_BLOCK, &set, NULL);
		ret = pk_flush(10000);
		if (ret)
			fc_failf(tt_rep, "pk_flush(10000) returned %d", ret);
		out = tt_sink_text(sink);
		child_check(a, out, SS_MAIN, SS_SIG + 1, "after pk_flush");
		if (tu_count(out, "w=2 c="))
			fc_failf(tt_rep, "filtered records reached the console");
		free(out);
		_exit(0);
	}
	ok = tt_wait(r, pid, 120000, &st) && tt_exited_clean(r, st);
	acc_free(a);
	return ok;
}

const struct scenario tt_signal_storm = {
	.name = "signal-storm",
	.what = "SIGALRM handlers log at a high rate while main logs filtered and printable records",
	.full_runs = 40,
	.ci_runs = 4,
	.run = signal_storm_run,
};

/* ---- fork-storm: children of a storming process share its store ---- */

#define FS_W	3	/* the parent's storming threads */
#define FS_G	8	/* children, writers FS_W.. */
#define FS_K	30	/* records per child */
#define FS_C	400000

/* A console that appends to PREFIX.<pid>: each process's output apart. */
static char pf_prefix[512];
static int pf_fd = -1;
static pid_t pf_pid;

static long pidfile_write(void *ctx, const char *buf, size_t len)
{
	pid_t me = getpid();
	char path[600];
	ssize_t n;

	(void)ctx;
	if (pf_pid != me) {
		snprintf(path, sizeof(path), "%s.%d", pf_prefix, (int)me);
		pf_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		pf_pid = me;
	}
	n = write(pf_fd, buf, len);
	return n < 0 ? -errno : n;
}

static const struct pk_console_ops pidfile_ops = {
	.name = "pidfile",
	.write = pidfile_write,
	.write_atomic = pidfile_write,
};

struct fs_shared {
	pid_t pids[FS_G];
	_Atomic uint64_t failed_parent;
	_Atomic uint64_t failed_child[FS_G];
	/*
	 * Each process's console's dropped minus unattributed drops
	 * (pk_console_stats, since the process began), plus one; 0: not
	 * known (the process left by exit()).  Read from the stats, not the
	 * text: the console goes on printing (the drops of other processes'
	 * records given up on) after the process's last look.
	 */
	_Atomic uint64_t attr_parent, attr_child[FS_G];
};

static struct pk_console *fs_con;

/*
 * fs_con's attributed drops (dropped - unattributed) so far; a fork
 * child's copy starts with its parent's.
 */
static uint64_t fs_attr(void)
{
	struct pk_console_stats st;

	/* A notice between the two counters' reads: count it as unattributed. */
	if (pk_console_stats_get(fs_con, &st) < 0 || st.unattributed > st.dropped)
		return 0;
	return st.dropped - st.unattributed;
}

/* Note fs_con's attributed drops since @base, plus one, in *@slot. */
static void fs_note_attr(_Atomic uint64_t *slot, uint64_t base)
{
	uint64_t now = fs_attr();

	atomic_store(slot, (now > base ? now - base : 0) + 1);
}

struct fs_writer {
	pthread_t thread;
	unsigned w;
	struct acc *acc;
	struct fs_shared *sh;
	uint64_t seed;
	_Atomic int *stop;
};

static void *fs_storm(void *arg)
{
	struct fs_writer *fw = arg;
	struct rng g = { fw->seed };
	char text[256];
	uint64_t c;

	for (c = 0; c < FS_C && !atomic_load(fw->stop); c++) {
		tt_text(text, sizeof(text), fw->w, c, &g);
		if (pk_printk(PK_INFO, "%s", text) >= 0)
			acc_set(fw->acc, fw->w, c);
		else
			atomic_fetch_add(&fw->sh->failed_parent, 1);
	}
	return NULL;
}

static bool check_pid_file(struct trun *r, const struct acc *a, const char *prefix, pid_t pid,
			   unsigned w0, unsigned w1, uint64_t lost_calls, uint64_t lost_calls_all,
			   uint64_t attr, const char *what)
{
	char path[600], desc[512], first[64] = "", *text;
	uint64_t missing, others = 0, c, stored;
	struct tally t;
	unsigned w;
	bool ok = true;

	snprintf(path, sizeof(path), "%s.%d", prefix, (int)pid);
	text = tu_read_file(path, NULL);
	unlink(path);
	tally_init(&t, a->nw, a->nc);
	tally_text(&t, text ? text : "");
	tally_describe(&t, desc, sizeof(desc));
	missing = acc_missing(a, &t, w0, w1, first, sizeof(first));
	for (w = 0; w < a->nw; w++)
		if (w < w0 || w >= w1)
			for (c = 0; c < a->nc; c++)
				others += tally_seen(&t, w, c);
	if (tally_damaged(&t))
		ok = tt_fail(r, "%s: damaged output: %s", what, desc);
	if (others)
		ok = tt_fail(r, "%s: printed %llu records of other processes", what,
			     (unsigned long long)others);
	if (missing > t.dropped)
		ok = tt_fail(r, "%s: %llu stored records missing (first %s), %llu counted dropped: %s",
			     what, (unsigned long long)missing, first, (unsigned long long)t.dropped,
			     desc);
	/*
	 * A drop notice counts this process's own lost records (its own
	 * table, ringbuf.c "OWN RECORDS") and, where its console fell more
	 * than the table's span behind, seqs of unknown owner and level,
	 * which it reports as unattributed.  The rest is never more than its
	 * records missing plus its calls that failed (a record overrun before
	 * its commit used a seq): never another process's, never one from
	 * before the fork (the child's consoles start at the fork).  Where the
	 * unattributed count is not known (the process left by exit()), all
	 * processes together stored the most it can claim.
	 */
	for (w = 0, stored = lost_calls_all; w < a->nw; w++)
		for (c = 0; c < a->nc; c++)
			stored += acc_get(a, w, c);
	if (attr && attr - 1 > missing + lost_calls)
		ok = tt_fail(r,
			     "%s: drop notices attribute %llu lost records to it (%llu dropped in "
			     "all), but only %llu of its own are missing and %llu of its calls "
			     "failed: %s",
			     what, (unsigned long long)(attr - 1), (unsigned long long)t.dropped,
			     (unsigned long long)missing, (unsigned long long)lost_calls, desc);
	if (!attr && t.dropped > stored)
		ok = tt_fail(r, "%s: drop notices claim %llu records, all processes stored %llu: %s",
			     what, (unsigned long long)t.dropped, (unsigned long long)stored, desc);
	if (attr)
		tt_note(r, "%s: %llu dropped, %llu attributed", what,
			(unsigned long long)t.dropped, (unsigned long long)(attr - 1));
	tally_free(&t);
	free(text);
	return ok;
}

static bool fork_storm_run(struct trun *r)
{
	char *prefix = tu_tmp_path("torture-fork"), store[600];
	size_t size = rng_below(&r->rng, 2) ? 64 << 10 : 256 << 10;
	struct acc *a = acc_new(FS_W + FS_G, FS_C);
	struct fs_shared *sh = fc_shared(sizeof(*sh));
	bool use_exit = rng_below(&r->rng, 2);
	unsigned g;
	int st;
	pid_t pid;
	bool ok;

	tt_note(r, "%zu KiB shared store, %d children%s", size >> 10, FS_G,
		use_exit ? " flushing at exit()" : " calling pk_flush()");
	if (tu_sanitized_thread() || tu_sanitized_address()) {
		/*
		 * A child forked from a storming process deadlocks inside the
		 * sanitizers' own locks (seen with ThreadSanitizer in every mode;
		 * test_crash.c says the same of AddressSanitizer).
		 */
		tt_note(r, "not under a sanitizer: its runtime cannot fork a storming process");
		r->skipped = true;
		ok = true;
		goto out;
	}
	snprintf(store, sizeof(store), "%s.store", prefix);
	snprintf(pf_prefix, sizeof(pf_prefix), "%s", prefix);
	pid = fc_fork();
	if (pid == 0) {
		static struct fs_writer ws[FS_W];
		static _Atomic int stop;
		struct rng gr = { r->seed ^ 0xf0f0 };
		char text[256];
		unsigned w;
		uint64_t c;
		int gst, ret;

		tt_child_init(r->mode, PK_CFG_BUFFER_CLEAR | (use_exit ? TT_ATEXIT : 0), size, store);
		fs_con = pk_console_register(&pidfile_ops, NULL, -1);
		if (!fs_con)
			_exit(91);
		for (w = 0; w < FS_W; w++) {
			ws[w] = (struct fs_writer){ .w = w, .acc = a, .sh = sh,
						   .seed = r->seed ^ (w + 1), .stop = &stop };
			pthread_create(&ws[w].thread, NULL, fs_storm, &ws[w]);
		}
		for (g = 0; g < FS_G; g++) {
			pid_t gp;

			tt_usleep(rng_below(&gr, 3000));
			gp = fc_fork();
			if (gp == 0) {
				uint64_t base = fs_attr();

				for (c = 0; c < FS_K; c++) {
					tt_text(text, sizeof(text), FS_W + g, c, &gr);
					if (pk_printk(PK_INFO, "%s", text) >= 0)
						acc_set(a, FS_W + g, c);
					else
						atomic_fetch_add(&sh->failed_child[g], 1);
				}
				if (use_exit && !tu_sanitized_address())
					exit(0);	/* the exit flush prints them */
				ret = pk_flush(10000);
				fs_note_attr(&sh->attr_child[g], base);
				_exit(ret ? 1 : 0);
			}
			sh->pids[g] = gp;
			if (fc_wait(gp, 30000, &gst) == -ETIMEDOUT)
				fc_failf(tt_rep, "child %u hung; killed", g);
			else if (!WIFEXITED(gst) || WEXITSTATUS(gst))
				fc_failf(tt_rep, "child %u: its pk_flush failed (status 0x%x)", g, gst);
		}
		atomic_store(&stop, 1);
		for (w = 0; w < FS_W; w++)
			pthread_join(ws[w].thread, NULL);
		ret = pk_flush(10000);
		if (ret)
			fc_failf(tt_rep, "pk_flush(10000) returned %d", ret);
		fs_note_attr(&sh->attr_parent, 0);
		_exit(0);
	}
	ok = tt_wait(r, pid, 120000, &st) && tt_exited_clean(r, st);
	ok &= check_pid_file(r, a, prefix, pid, 0, FS_W, atomic_load(&sh->failed_parent),
			     atomic_load(&sh->failed_parent), atomic_load(&sh->attr_parent),
			     "the storming process's console");
	for (g = 0; g < FS_G; g++) {
		char what[64];

		if (!sh->pids[g])
			continue;
		snprintf(what, sizeof(what), "child %u's console", g);
		ok &= check_pid_file(r, a, prefix, sh->pids[g], FS_W + g, FS_W + g + 1,
				     atomic_load(&sh->failed_child[g]),
				     atomic_load(&sh->failed_parent),
				     atomic_load(&sh->attr_child[g]), what);
	}
	unlink(store);
out:
	free(prefix);
	fc_unshare(sh, sizeof(*sh));
	acc_free(a);
	return ok;
}

const struct scenario tt_fork_storm = {
	.name = "fork-storm",
	.what = "children of a storming process log to a shared store and exit",
	.full_runs = 40,
	.ci_runs = 4,
	.run = fork_storm_run,
};

/* ---- filtered-flood: 8 threads flood filtered records while one logs errors ---- */

#define FF_FLOOD	8
#define FF_C		1000

struct ff_shared {
	_Atomic uint64_t max_call_ns;
	_Atomic int stop;
};

static void note_max(_Atomic uint64_t *max, uint64_t v)
{
	uint64_t cur = atomic_load(max);

	while (v > cur && !atomic_compare_exchange_weak(max, &cur, v))
		;
}

static void *ff_flood(void *arg)
{
	struct ff_shared *sh = arg;
	uint64_t t0, t1, max = 0, i;

	for (i = 0; !atomic_load(&sh->stop); i++) {
		t0 = tu_now_ns();
		pk_debug("flood %llu: a filtered debug record nobody prints\n", (unsigned long long)i);
		t1 = tu_now_ns();
		if (t1 - t0 > max)
			max = t1 - t0;
	}
	note_max(&sh->max_call_ns, max);
	return NULL;
}

static bool filtered_flood_run(struct trun *r)
{
	unsigned errors = r->ci ? 50 : 100;
	uint64_t pace_us = rng_below(&r->rng, 4000);
	struct ff_shared *sh = fc_shared(sizeof(*sh));
	struct acc *a = acc_new(1, FF_C);
	int st;
	pid_t pid;
	bool ok;

	tt_note(r, "%d threads flood pk_debug; %u pk_err about %llu us apart", FF_FLOOD, errors,
		(unsigned long long)pace_us);
	pid = fc_fork();
	if (pid == 0) {
		struct tt_sink *sink = tt_sink_new(64 << 20);
		struct rng g = { r->seed ^ 0xff };
		pthread_t t[FF_FLOOD];
		struct tt_watch watch;
		char text[256], *out;
		uint64_t t0, t1;
		unsigned i;
		int ret;

		tt_child_init(r->mode, 0, 1 << 20, NULL);
		add_sink(sink, -1);
		for (i = 0; i < FF_FLOOD; i++)
			pthread_create(&t[i], NULL, ff_flood, sh);
		for (i = 0; i < errors; i++) {
			tt_usleep(rng_below(&g, 2 * pace_us + 1));
			tt_text(text, sizeof(text), 0, i, &g);
			t0 = tu_now_ns();
			ret = pk_printk(PK_ERR, "%s", text);
			t1 = tu_now_ns();
			note_max(&sh->max_call_ns, t1 - t0);
			if (ret >= 0)
				acc_set(a, 0, i);
		}
		/* While the flood goes on, every error must reach the console. */
		tt_watch_init(&watch, a, tt_sink_text, sink);
		tt_child_printed(&watch, a, 0, 1, "errors during the flood", 5000, 5000);
		tt_watch_free(&watch);
		atomic_store(&sh->stop, 1);
		for (i = 0; i < FF_FLOOD; i++)
			pthread_join(t[i], NULL);
		out = tt_sink_text(sink);
		child_check(a, out, 0, 1, "the console");
		if (tu_count(out, "flood "))
			fc_failf(tt_rep, "filtered records reached the console");
		free(out);
		if ((double)atomic_load(&sh->max_call_ns) / 1e6 > CALL_BOUND_MS)
			fc_failf(tt_rep, "a call lasted %.0f ms",
				 (double)atomic_load(&sh->max_call_ns) / 1e6);
		ret = pk_flush(10000);
		if (ret)
			fc_failf(tt_rep, "pk_flush(10000) returned %d", ret);
		_exit(0);
	}
	ok = tt_wait(r, pid, 120000, &st) && tt_exited_clean(r, st);
	if (r->verbose || !ok)
		tt_note(r, "%d threads flood pk_debug; %u pk_err about %llu us apart; longest call %.1f ms",
			FF_FLOOD, errors, (unsigned long long)pace_us,
			(double)atomic_load(&sh->max_call_ns) / 1e6);
	fc_unshare(sh, sizeof(*sh));
	acc_free(a);
	return ok;
}

const struct scenario tt_filtered_flood = {
	.name = "filtered-flood",
	.what = "8 threads flood filtered pk_debug while one logs pk_err",
	.full_runs = 20,
	.ci_runs = 2,
	.run = filtered_flood_run,
};

/* ---- error-flood: pk_err() behind 8 threads flooding 600-byte filtered lines ---- */

#define EF_FLOOD	8
#define EF_ERRORS	100
#define EF_LATE_NS	(100 * 1000000ull)	/* the goal: within this at the 99th percentile */
#define EF_WATCH_NS	(2000 * 1000000ull)

struct ef_shared {
	_Atomic int stop;
	_Atomic uint64_t seen[EF_ERRORS];	/* when the console got error i */
	_Atomic unsigned twice, stray;
	/* the counts, for the run's note */
	unsigned late, late_1s, never, uncounted;
	uint64_t dropped, worst_ns;
};

static struct ef_shared *ef_sh;
static char ef_line[601];

static long ef_write(void *ctx, const char *buf, size_t len)
{
	const char *p = memmem(buf, len, "ef-error ", 9);
	long i;

	(void)ctx;
	if (memmem(buf, len, "yyyyyyyyyy", 10))
		atomic_fetch_add(&ef_sh->stray, 1);
	if (!p)
		return (long)len;
	i = strtol(p + 9, NULL, 10);
	if (i >= 0 && i < EF_ERRORS) {
		uint64_t zero = 0;

		if (!atomic_compare_exchange_strong(&ef_sh->seen[i], &zero, tu_now_ns()))
			atomic_fetch_add(&ef_sh->twice, 1);
	}
	return (long)len;
}

static const struct pk_console_ops ef_ops = { .name = "ef", .write = ef_write };

static void *ef_flood(void *arg)
{
	(void)arg;
	while (!atomic_load(&ef_sh->stop))
		pk_printk(PK_DEBUG, "%s\n", ef_line);
	return NULL;
}

static void *ef_burn(void *arg)
{
	volatile uint64_t x = 0;

	(void)arg;
	while (!atomic_load(&ef_sh->stop))
		x++;
	return NULL;
}

static bool error_flood_run(struct trun *r)
{
	unsigned burners = (unsigned)rng_below(&r->rng, 5);	/* more runnable threads than cores */
	unsigned pace_us = 500 + (unsigned)rng_below(&r->rng, 4000);
	struct ef_shared *sh = fc_shared(sizeof(*sh));
	int st;
	pid_t pid;
	bool ok;

	ef_sh = sh;
	tt_note(r, "%d threads flood 600-byte pk_debug, %u busy threads; %d pk_err about %u us apart",
		EF_FLOOD, burners, EF_ERRORS, pace_us);
	pid = fc_fork();
	if (pid == 0) {
		struct pk_console_stats cs;
		pthread_t t[EF_FLOOD + 4];
		uint64_t t0[EF_ERRORS], s, d;
		struct pk_console *con;
		unsigned i;

		memset(ef_line, 'y', 600);
		tt_child_init(r->mode, 0, 1 << 20, NULL);
		con = pk_console_register(&ef_ops, NULL, 7);
		if (!con)
			_exit(91);
		for (i = 0; i < EF_FLOOD + burners; i++)
			pthread_create(&t[i], NULL, i < EF_FLOOD ? ef_flood : ef_burn, NULL);
		tt_usleep(20000);
		for (i = 0; i < EF_ERRORS; i++) {
			t0[i] = tu_now_ns();
			if (pk_printk(PK_ERR, "ef-error %u\n", i) < 0)
				fc_failf(tt_rep, "pk_err %u failed", i);
			while (!atomic_load(&sh->seen[i]) && tu_now_ns() - t0[i] < EF_WATCH_NS)
				tt_usleep(200);
			tt_usleep(pace_us);
		}
		for (i = 0; i < EF_ERRORS; i++)
			while (!atomic_load(&sh->seen[i]) && tu_now_ns() - t0[EF_ERRORS - 1] < EF_WATCH_NS)
				tt_usleep(1000);
		atomic_store(&sh->stop, 1);
		for (i = 0; i < EF_FLOOD + burners; i++)
			pthread_join(t[i], NULL);
		if (pk_flush(10000))
			fc_failf(tt_rep, "pk_flush(10000) failed");
		pk_console_stats_get(con, &cs);
		for (i = 0; i < EF_ERRORS; i++) {
			s = atomic_load(&sh->seen[i]);
			d = s ? s - t0[i] : UINT64_MAX;
			if (!s)
				sh->never++;
			else if (d > sh->worst_ns)
				sh->worst_ns = d;
			if (d > EF_LATE_NS)
				sh->late++;
			if (d > 1000000000ull)
				sh->late_1s++;
		}
		sh->dropped = cs.dropped;
		sh->uncounted = sh->never > cs.dropped ? sh->never - (unsigned)cs.dropped : 0;
		if (sh->uncounted)
			fc_failf(tt_rep, "%u errors neither printed nor counted", sh->uncounted);
		if (atomic_load(&sh->stray))
			fc_failf(tt_rep, "filtered records reached the console");
		if (atomic_load(&sh->twice))
			fc_failf(tt_rep, "an error printed twice");
		/* The goal is 100 ms at p99; a hang-style bound only fails a run. */
		if (sh->late_1s > 5)
			fc_failf(tt_rep, "%u errors later than 1 s", sh->late_1s);
		_exit(0);
	}
	ok = tt_wait(r, pid, 300000, &st) && tt_exited_clean(r, st);
	/* One line per run, for the counts over many runs (tests/torture.c --verbose). */
	fprintf(stderr, "error-flood %s: late>100ms %u late>1s %u never %u dropped %llu uncounted %u "
		"slowest %.1f ms burners %u\n", tt_mode_name(r->mode), sh->late, sh->late_1s,
		sh->never, (unsigned long long)sh->dropped, sh->uncounted, (double)sh->worst_ns / 1e6,
		burners);
	fc_unshare(sh, sizeof(*sh));
	return ok;
}

const struct scenario tt_error_flood = {
	.name = "error-flood",
	.what = "pk_err behind 8 threads flooding 600-byte filtered lines, some busy threads",
	.full_runs = 20,
	.ci_runs = 1,
	.run = error_flood_run,
};

/* ---- cancel-storm: register/unregister consoles and cancel loggers during a storm ---- */

#define CS_W		3	/* stable writers 0..2 */
#define CS_VICTIM	3	/* cancelled threads' records */
#define CS_MARK		4	/* the record after the storm */
#define CS_C		100000

struct cs_victim {
	struct acc *acc;
	_Atomic uint64_t *next;
	uint64_t seed;
};

static void *cs_victim_main(void *arg)
{
	struct cs_victim *v = arg;
	struct rng g = { v->seed };
	char text[256];
	uint64_t c;

	for (;;) {
		c = atomic_fetch_add(v->next, 1);
		if (c >= CS_C)
			return NULL;
		tt_text(text, sizeof(text), CS_VICTIM, c, &g);
		if (pk_printk(PK_INFO, "%s", text) >= 0)
			acc_set(v->acc, CS_VICTIM, c);
		pthread_testcancel();
	}
}

struct cs_writer {
	pthread_t thread;
	unsigned w;
	uint64_t count, seed;
	struct acc *acc;
};

static void *cs_writer_main(void *arg)
{
	struct cs_writer *cw = arg;
	struct rng g = { cw->seed };
	char text[256];
	uint64_t c;

	for (c = 0; c < cw->count; c++) {
		tt_text(text, sizeof(text), cw->w, c, &g);
		if (pk_printk(PK_INFO, "%s", text) >= 0)
			acc_set(cw->acc, cw->w, c);
	}
	return NULL;
}

struct cs_registrar {
	struct acc *acc;
	unsigned rounds;
	uint64_t seed;
	_Atomic int *stop;
};

static void *cs_registrar_main(void *arg)
{
	struct cs_registrar *cr = arg;
	struct rng g = { cr->seed };
	struct tu_capture *cap;
	struct pk_console *con;
	struct tally t;
	char desc[512], *out;
	unsigned i;
	int ret;

	for (i = 0; i < cr->rounds && !atomic_load(cr->stop); i++) {
		cap = tu_capture_new(0);
		con = pk_console_register(&tu_capture_ops, cap, -1);
		if (!con) {
			fc_failf(tt_rep, "pk_console_register: %s", strerror(errno));
			tu_capture_free(cap);
			continue;
		}
		pk_console_set_format(con, PK_FMT_RAW);
		tt_usleep(rng_below(&g, 5000));
		ret = pk_console_unregister(con);
		if (ret) {
			fc_failf(tt_rep, "pk_console_unregister during the storm returned %d", ret);
			continue;	/* it may still be used: keep it */
		}
		out = tu_capture_text(cap);
		tally_init(&t, cr->acc->nw, cr->acc->nc);
		tally_text(&t, out);
		if (tally_damaged(&t)) {
			tally_describe(&t, desc, sizeof(desc));
			fc_failf(tt_rep, "a console registered for a while: damaged output: %s", desc);
		}
		tally_free(&t);
		free(out);
		tu_capture_free(cap);
	}
	return NULL;
}

static bool cancel_storm_run(struct trun *r)
{
	char *path = tu_tmp_path("torture-cancel");
	unsigned victims = r->ci ? 10 : 30, rounds = r->ci ? 5 : 15;
	uint64_t count = r->ci ? 1500 : 4000;
	struct acc *a = acc_new(CS_MARK + 1, CS_C);
	int st;
	pid_t pid;
	bool ok;

	tt_note(r, "%u cancelled loggers, %u console registrations beside %d writers", victims,
		rounds, CS_W);
	pid = fc_fork();
	if (pid == 0) {
		static struct cs_writer ws[CS_W];
		static _Atomic uint64_t vnext;
		static _Atomic int stop;
		struct cs_registrar reg = { a, rounds, r->seed ^ 0x7e, &stop };
		struct cs_victim vic = { a, &vnext, r->seed ^ 0x71c };
		struct rng g = { r->seed ^ 0xca };
		struct pk_console_driver d;
		struct pk_console *con;
		struct tt_watch watch;
		pthread_t regt, vt;
		char text[256], *out;
		unsigned i;
		int ret;

		tt_child_init(r->mode, 0, 1 << 20, NULL);
		if (pk_console_file_make(path, 0, &d) || !(con = pk_console_register_driver(&d, -1)))
			_exit(91);
		pk_console_set_format(con, PK_FMT_RAW);
		for (i = 0; i < CS_W; i++) {
			ws[i] = (struct cs_writer){ .w = i, .count = count, .seed = r->seed ^ (i + 1),
						   .acc = a };
			pthread_create(&ws[i].thread, NULL, cs_writer_main, &ws[i]);
		}
		pthread_create(&regt, NULL, cs_registrar_main, &reg);
		for (i = 0; i < victims; i++) {
			pthread_create(&vt, NULL, cs_victim_main, &vic);
			tt_usleep(rng_below(&g, 3000));
			pthread_cancel(vt);
			pthread_join(vt, NULL);
		}
		for (i = 0; i < CS_W; i++)
			pthread_join(ws[i].thread, NULL);
		atomic_store(&stop, 1);
		pthread_join(regt, NULL);

		/* After the storm, one more record: printed without pk_flush's help. */
		tt_text(text, sizeof(text), CS_MARK, 0, &g);
		if (pk_printk(PK_INFO, "%s", text) >= 0)
			acc_set(a, CS_MARK, 0);
		tt_watch_init(&watch, a, file_text, path);
		tt_child_printed(&watch, a, 0, CS_MARK + 1, "after the storm", 2000, 30000);
		tt_watch_free(&watch);
		ret = pk_flush(10000);
		if (ret)
			fc_failf(tt_rep, "pk_flush(10000) after the storm returned %d", ret);
		out = tu_read_file(path, NULL);
		child_check(a, out ? out : "", 0, CS_MARK + 1, "after pk_flush");
		free(out);
		_exit(0);
	}
	ok = tt_wait(r, pid, 120000, &st) && tt_exited_clean(r, st);
	tt_discard(path, ok);
	free(path);
	acc_free(a);
	return ok;
}

const struct scenario tt_cancel_storm = {
	.name = "cancel-storm",
	.what = "consoles registered and unregistered, logging threads cancelled, during a storm",
	.full_runs = 40,
	.ci_runs = 4,
	.run = cancel_storm_run,
};
