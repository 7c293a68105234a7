// SPDX-License-Identifier: MIT
/*
 * storm.c - the 2017 printk storm: T threads log as fast as they can for D
 * seconds into one console throttled to B bytes/s.
 *
 * Each mode runs in its own child (child.c) with a fresh library:
 *
 *   main thread   pk_init, registers the throttled file console, starts the
 *                 workers and the sampler, sleeps D, raises the stop flag,
 *                 joins the workers, pk_flush()es, collects the counters and
 *                 reads the console's file back.
 *   workers (T)   time every pk_printk() call with CLOCK_MONOTONIC into a
 *                 per-thread histogram until the stop flag.
 *   sampler       every SAMPLE_NS reads the store's next seq, the console's
 *                 next seq and busy time: an interval whose start found the
 *                 console behind the store counts as backlogged, and the
 *                 console's busy time inside such intervals is summed
 *                 (console utilisation while a backlog existed).  It also
 *                 notes when the console caught up after the stop.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/printk.h>

#include "bench.h"
#include "stint.h"

#define SAMPLE_NS	5000000u	/* sampler period: 5 ms */
#define MSG_MARK	"storm: worker "

const char *const pkb_smode_names[PKB_NSMODES] = {
	[PKB_LEGACY] = "legacy",
	[PKB_HANDOFF] = "handoff",
	[PKB_BUDGET] = "budget",
	[PKB_THREAD] = "thread",
	[PKB_BASELINE] = "baseline",
};

struct job {
	const struct pkb_storm_opts *o;
	enum pkb_smode mode;
	double seconds;
	char path[512];
};

struct worker {
	int idx;
	uint32_t tid;
	uint64_t calls;
	uint64_t errors;
	uint64_t watchdog;
	uint64_t max_in_storm_ns;	/* call time up to the stop, see worker_main */
	struct pkb_hist hist;
} __attribute__((aligned(64)));

struct sampler {
	struct pk_console *con;
	int nworkers;
	uint64_t backlog_ns;
	uint64_t backlog_busy_ns;
	uint64_t backlog_bytes;
	uint64_t caught_up_at;	/* first sample after the stop with no backlog */
};

static _Atomic int stop;		/* workers: leave the loop */
static _Atomic uint64_t stop_at;	/* when the stop flag was raised */
static _Atomic int stop_sampler;
static _Atomic int workers_done;
static struct worker *workers;		/* for is_caller() */
static int nworkers;
static struct pkb_stint *stint;
static pthread_barrier_t start_line;
static uint64_t watchdog_ns;
static int baseline;			/* PKB_BASELINE: snprintf() instead of pk_printk() */

/*
 * The baseline's call: the same formatting into a local buffer, no store,
 * no console.  Its tail is what preemption alone costs a call when T
 * threads share the CPUs.
 */
static __attribute__((noinline)) int format_only(int idx, unsigned long n)
{
	char buf[160];
	int rc = snprintf(buf, sizeof(buf),
			  MSG_MARK "%2d call %8lu: the quick brown fox jumps over the lazy dog\n", idx, n);

	__asm__ volatile("" : : "r"(buf) : "memory");
	return rc;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t n;

	w->tid = (uint32_t)gettid();
	pthread_barrier_wait(&start_line);
	for (n = 0; !atomic_load_explicit(&stop, memory_order_relaxed); n++) {
		uint64_t t0, t1, d, end;
		int rc;

		t0 = pkb_now_ns();
		if (baseline)
			rc = format_only(w->idx, (unsigned long)n);
		else
			rc = pk_printk(PK_INFO,
				       MSG_MARK "%2d call %8lu: the quick brown fox jumps over the lazy dog\n",
				       w->idx, (unsigned long)n);
		t1 = pkb_now_ns();
		d = t1 - t0;
		pkb_hist_add(&w->hist, d);
		if (rc < 0)
			w->errors++;
		if (d > watchdog_ns)
			w->watchdog++;
		/*
		 * The part of the call that lay inside the storm: a call still
		 * running at the stop (the one left printing the backlog) counts
		 * only up to the stop.  Separates "printing while others keep
		 * logging" from "printing what was left afterwards".
		 */
		end = atomic_load_explicit(&stop_at, memory_order_relaxed);
		if (!end || t1 < end)
			end = t1;
		if (end > t0 && end - t0 > w->max_in_storm_ns)
			w->max_in_storm_ns = end - t0;
	}
	w->calls = n;
	atomic_fetch_add_explicit(&workers_done, 1, memory_order_release);
	return NULL;
}

/* Whether @tid is one of the storm's workers (a calling thread). */
static int is_caller(uint32_t tid)
{
	int i;

	for (i = 0; i < nworkers; i++)
		if (workers[i].tid == tid)
			return 1;
	return 0;
}

/* One sample: time, the console's busy time and bytes, whether it is behind. */
static void sample(struct pk_console *con, uint64_t *t, uint64_t *busy, uint64_t *bytes,
		   int *behind)
{
	struct pk_stats st;
	struct pk_console_stats cs;

	*t = pkb_now_ns();
	pk_stats_get(&st);
	pk_console_stats_get(con, &cs);
	*busy = cs.busy_ns;
	*bytes = cs.bytes;
	*behind = cs.next_seq < st.next_seq;
}

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	uint64_t pt, pbusy, pbytes, t, busy, bytes;
	int pbehind, behind, last = 0;

	sample(s->con, &pt, &pbusy, &pbytes, &pbehind);
	while (!last) {
		last = atomic_load_explicit(&stop_sampler, memory_order_acquire);
		if (!last)
			pkb_sleep_ns(SAMPLE_NS);
		sample(s->con, &t, &busy, &bytes, &behind);
		if (pbehind) {
			s->backlog_ns += t - pt;
			s->backlog_busy_ns += busy - pbusy;
			s->backlog_bytes += bytes - pbytes;
		}
		if (!behind && !s->caught_up_at && atomic_load(&stop) &&
		    atomic_load_explicit(&workers_done, memory_order_acquire) == s->nworkers)
			s->caught_up_at = t;
		pt = t;
		pbusy = busy;
		pbytes = bytes;
		pbehind = behind;
	}
	return NULL;
}

/* Read the console's file back: records, drop notices and their sum. */
static void scan_file(const char *path, struct pkb_storm_result *r)
{
	struct pkb_file_scan sc;

	pkb_scan_file(path, MSG_MARK, &sc);
	r->file_data_lines = sc.data_lines;
	r->file_notice_lines = sc.notice_lines;
	r->file_notice_sum = sc.notice_sum;
	r->file_other_lines = sc.other_lines;
}

/*
 * Completeness: every seq the console was responsible for was printed,
 * skipped by loglevel or reported dropped, and the file agrees.
 */
static void check_complete(struct pkb_storm_result *r)
{
	uint64_t span = r->store_next_seq - r->start_seq;
	uint64_t accounted = r->con_records + r->con_dropped + r->con_skipped;
	uint64_t lines = r->file_data_lines + r->file_other_lines;

	r->complete = 0;
	if (r->flush_rc != 0)
		snprintf(r->complete_why, sizeof(r->complete_why),
			 "pk_flush: %s: console %lu records behind", pk_strerror(r->flush_rc),
			 (unsigned long)(r->store_next_seq - r->con_next_seq));
	else if (r->con_next_seq != r->store_next_seq)
		snprintf(r->complete_why, sizeof(r->complete_why),
			 "console next seq %lu != store next seq %lu", (unsigned long)r->con_next_seq,
			 (unsigned long)r->store_next_seq);
	else if (accounted != span)
		snprintf(r->complete_why, sizeof(r->complete_why),
			 "stored %lu != printed %lu + dropped %lu + filtered %lu", (unsigned long)span,
			 (unsigned long)r->con_records, (unsigned long)r->con_dropped,
			 (unsigned long)r->con_skipped);
	else if (lines != r->con_records)
		snprintf(r->complete_why, sizeof(r->complete_why),
			 "file holds %lu record lines, console counted %lu printed",
			 (unsigned long)lines, (unsigned long)r->con_records);
	else if (r->file_notice_sum != r->con_dropped)
		snprintf(r->complete_why, sizeof(r->complete_why),
			 "drop notices in the file sum to %lu, console counted %lu dropped",
			 (unsigned long)r->file_notice_sum, (unsigned long)r->con_dropped);
	else
		r->complete = 1;
}

static void fail(struct pkb_storm_result *r, int err, const char *what)
{
	r->status = err < 0 ? err : -EIO;
	snprintf(r->error, sizeof(r->error), "%s: %s", what, strerror(-r->status));
}

static int setup(const struct job *j, struct pkb_storm_result *r, struct pk_console **conp)
{
	const struct pkb_storm_opts *o = j->o;
	struct pk_config cfg;
	struct pk_console_driver file, slow, measured;
	struct pk_console_stats cs;
	struct pk_console *con;
	int rc;

	pk_config_init(&cfg);
	cfg.buffer_path = NULL;
	cfg.buffer_size = o->buffer_size;
	cfg.mode = j->mode == PKB_LEGACY ? PK_MODE_LEGACY :
		   j->mode == PKB_THREAD ? PK_MODE_THREAD : PK_MODE_HANDOFF;
	cfg.print_budget_us = j->mode == PKB_BUDGET ? o->budget_us : PK_PRINT_BUDGET_UNBOUNDED;
	cfg.console_loglevel = PK_DEBUG + 1;
	cfg.flags = PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.consoles = NULL;
	rc = pk_init(&cfg);
	if (rc < 0) {
		fail(r, rc, "pk_init");
		return -1;
	}
	rc = pk_console_file_make(j->path, 0, &file);
	if (rc < 0) {
		fail(r, rc, "pk_console_file_make");
		return -1;
	}
	rc = pk_console_throttle_make(&file, o->bps, &slow);
	if (rc < 0) {
		fail(r, rc, "pk_console_throttle_make");
		return -1;
	}
	stint = pkb_stint_make(&slow, &stop_at, is_caller, &measured);
	if (!stint) {
		fail(r, -ENOMEM, "pkb_stint_make");
		return -1;
	}
	con = pk_console_register_driver(&measured, PK_DEBUG + 1);
	if (!con) {
		fail(r, -errno, "pk_console_register_driver");
		return -1;
	}
	pk_console_stats_get(con, &cs);
	r->start_seq = cs.next_seq;
	pk_flush_stats_reset();
	*conp = con;
	return 0;
}

static void collect_shares(struct pkb_storm_result *r, const struct worker *w, int nw,
			   uint32_t main_tid)
{
	struct pk_printer_share sh[PKB_MAX_SHARES];
	int n, i, k;

	n = pk_printer_shares(sh, PKB_MAX_SHARES);
	r->shares_known = n;
	if (n > PKB_MAX_SHARES)
		n = PKB_MAX_SHARES;
	for (i = 0; i < n; i++) {
		struct pkb_share *s = &r->shares[i];

		s->tid = sh[i].tid;
		s->printer_thread = (int)sh[i].printer_thread;
		s->bytes = sh[i].bytes;
		s->records = sh[i].records;
		s->who = sh[i].tid == main_tid ? PKB_WHO_MAIN : PKB_WHO_OTHER;
		for (k = 0; k < nw; k++)
			if (w[k].tid == sh[i].tid)
				s->who = k;
	}
	r->nshares = n;
}

static int storm_child(void *arg, void *out)
{
	const struct job *j = arg;
	const struct pkb_storm_opts *o = j->o;
	struct pkb_storm_result *r = out;
	struct pk_console *con = NULL;
	struct pk_stats st;
	struct pk_console_stats cs;
	struct sampler smp;
	struct worker *w;
	pthread_t *tids, stid;
	uint64_t t_start, t_stop, t_join, t_flush;
	int i, n = o->threads;

	memset(r, 0, sizeof(*r));
	r->mode = j->mode;
	r->threads = n;
	r->seconds = j->seconds;
	pkb_hist_init(&r->hist);
	baseline = j->mode == PKB_BASELINE;
	if (!baseline && setup(j, r, &con) < 0)
		return 1;
	watchdog_ns = (uint64_t)o->watchdog_ms * 1000000u;
	w = aligned_alloc(64, sizeof(*w) * (size_t)n);
	tids = calloc((size_t)n, sizeof(*tids));
	if (!w || !tids) {
		fail(r, -ENOMEM, "allocating workers");
		return 1;
	}
	memset(w, 0, sizeof(*w) * (size_t)n);
	workers = w;
	nworkers = n;
	pthread_barrier_init(&start_line, NULL, (unsigned)n + 1);
	for (i = 0; i < n; i++) {
		w[i].idx = i;
		pkb_hist_init(&w[i].hist);
		if (pthread_create(&tids[i], NULL, worker_main, &w[i]) != 0) {
			fail(r, -EAGAIN, "pthread_create");
			_exit(1);	/* the started workers wait at the barrier */
		}
	}
	memset(&smp, 0, sizeof(smp));
	smp.con = con;
	smp.nworkers = n;
	if (!baseline)
		pthread_create(&stid, NULL, sampler_main, &smp);

	pthread_barrier_wait(&start_line);
	t_start = pkb_now_ns();
	pkb_sleep_ns((uint64_t)(j->seconds * 1e9));
	t_stop = pkb_now_ns();
	atomic_store(&stop_at, t_stop);
	atomic_store(&stop, 1);
	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	t_join = pkb_now_ns();
	r->flush_rc = baseline ? 0 : pk_flush(o->drain_timeout_s * 1000);
	t_flush = pkb_now_ns();
	atomic_store_explicit(&stop_sampler, 1, memory_order_release);
	if (!baseline)
		pthread_join(stid, NULL);

	for (i = 0; i < n; i++) {
		pkb_hist_merge(&r->hist, &w[i].hist);
		r->calls += w[i].calls;
		r->call_errors += w[i].errors;
		r->watchdog += w[i].watchdog;
		if (w[i].max_in_storm_ns > r->max_in_storm_ns)
			r->max_in_storm_ns = w[i].max_in_storm_ns;
		if (i < PKB_MAX_THREADS) {
			r->worker_calls[i] = w[i].calls;
			r->worker_max_ns[i] = w[i].hist.max;
		}
	}
	r->storm_s = (double)(t_stop - t_start) / 1e9;
	r->join_s = (double)(t_join - t_stop) / 1e9;
	r->flush_s = (double)(t_flush - t_join) / 1e9;
	if (baseline) {
		r->caught_up_s = -1;
		return 0;
	}
	collect_shares(r, w, n, (uint32_t)gettid());
	{
		struct pkb_stint_stats ss;

		pkb_stint_get(stint, &ss);
		r->stints = ss.stints;
		r->stint_max_writes = ss.max_writes;
		r->stint_max_ns = ss.max_ns;
		r->stint_max_who = -1;
		for (i = 0; i < n; i++)
			if (w[i].tid == ss.max_tid)
				r->stint_max_who = i;
	}
	pk_flush_stats_get(&r->fs);
	pk_stats_get(&st);
	pk_console_stats_get(con, &cs);
	r->store_next_seq = st.next_seq;
	r->store_lost = st.lost;
	r->con_next_seq = cs.next_seq;
	r->con_records = cs.records;
	r->con_bytes = cs.bytes;
	r->con_dropped = cs.dropped;
	r->con_skipped = cs.skipped;
	r->con_write_errors = cs.write_errors;
	r->con_busy_ns = cs.busy_ns;
	scan_file(j->path, r);
	check_complete(r);

	r->caught_up_s = smp.caught_up_at ? (double)(smp.caught_up_at - t_stop) / 1e9 : -1;
	r->backlog_s = (double)smp.backlog_ns / 1e9;
	r->backlog_busy_s = (double)smp.backlog_busy_ns / 1e9;
	r->backlog_bytes = smp.backlog_bytes;
	pk_shutdown();
	return 0;
}

int pkb_storm_run(const struct pkb_storm_opts *o, struct pkb_storm_result *res, int max)
{
	const char *dir = pkb_tmpdir();
	int nd = o->doubled ? 2 : 1, d, m, nres = 0, total = 0, k = 0;
	double drain_est = (double)o->buffer_size / (double)o->bps;
	char why[160];

	for (m = 0; m < PKB_NSMODES; m++)
		if (o->modes & (1u << m))
			total += nd;
	for (d = 0; d < nd; d++) {
		for (m = 0; m < PKB_NSMODES && nres < max; m++) {
			struct job j = { .o = o, .mode = (enum pkb_smode)m,
					 .seconds = o->seconds * (d ? 2 : 1) };
			struct pkb_storm_result *r = &res[nres];
			char label[128];
			int rc;

			if (!(o->modes & (1u << m)))
				continue;
			k++;
			snprintf(j.path, sizeof(j.path), "%s/storm-%s-%d.log", dir, pkb_smode_names[m], d);
			unlink(j.path);
			snprintf(label, sizeof(label), "storm %d/%d: %s, T=%d, D=%g s", k, total,
				 pkb_smode_names[m], o->threads, j.seconds);
			rc = pkb_child_run(label, j.seconds + drain_est, j.seconds * 2 + drain_est * 4 +
					   o->drain_timeout_s + 60, storm_child, &j, r, sizeof(*r), why,
					   sizeof(why));
			if (rc < 0) {
				memset(r, 0, sizeof(*r));
				r->status = rc;
				r->mode = (enum pkb_smode)m;
				r->threads = o->threads;
				r->seconds = j.seconds;
				pkb_hist_init(&r->hist);
				snprintf(r->error, sizeof(r->error), "%s", why);
			} else if (r->status == 0 && why[0]) {
				r->status = -ECHILD;
				snprintf(r->error, sizeof(r->error), "%s", why);
			}
			unlink(j.path);
			nres++;
		}
	}
	return nres;
}
