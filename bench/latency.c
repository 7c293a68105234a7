// SPDX-License-Identifier: MIT
/*
 * latency.c - per-call time of each logger, same message, same harness.
 *
 * For every thread count and variant, each logger runs in its own child:
 *
 *   burst      each thread makes N calls back to back;
 *   sustained  each thread makes calls at a fixed rate for S seconds
 *              (absolute deadlines; a thread that falls behind calls
 *              again at once), so background work such as spdlog's
 *              worker or libprintk's printer thread runs alongside.
 *
 * Every call is timed with CLOCK_MONOTONIC into a per-thread histogram.
 * Afterwards the logger is closed (flushed) and the lines that reached its
 * file are counted.
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "peers.h"

struct ljob {
	const struct pkb_logger *lg;
	const struct pkb_latency_opts *o;
	int threads;
	enum pkb_lat_variant variant;
	char path[512];
};

struct lthread {
	const struct ljob *j;
	int idx;
	uint64_t calls;
	uint64_t start_ns, end_ns;	/* this thread's first and last call */
	struct pkb_hist hist;
} __attribute__((aligned(64)));

/* Does the throughput table show this logger (store paths, peers that do not write in the caller)? */
bool pkb_flat_row(const char *name, const char *where)
{
	return !strncmp(where, "store", 5) || !strcmp(where, "lttng trace") ||
	       !strcmp(name, "spdlog async");
}

static pthread_barrier_t start_line;

/* Lines carrying the message, and the records drop notices report lost. */
static void scan_file(const char *path, struct pkb_lat_result *r)
{
	struct pkb_file_scan sc;

	pkb_scan_file(path, PKB_PEER_MARK, &sc);
	r->file_lines = sc.data_lines;
	r->file_dropped = sc.notice_sum;
}

static void *lthread_main(void *arg)
{
	struct lthread *t = arg;
	const struct ljob *j = t->j;
	void (*log)(long, long) = j->lg->log;
	long base = (long)t->idx << 32;
	uint64_t i, t0, d;

	pthread_barrier_wait(&start_line);
	t->start_ns = pkb_now_ns();
	if (j->variant == PKB_FLAT) {
		uint64_t n = (uint64_t)j->o->burst * PKB_FLAT_FACTOR;

		for (i = 0; i < n; i++)
			log(base + (long)i, 4096 + (long)i * 64);
		t->end_ns = pkb_now_ns();
		t->calls = n;
		return NULL;
	}
	if (j->variant == PKB_BURST) {
		for (i = 0; i < (uint64_t)j->o->burst; i++) {
			t0 = pkb_now_ns();
			log(base + (long)i, 4096 + (long)i * 64);
			d = pkb_now_ns() - t0;
			pkb_hist_add(&t->hist, d);
		}
	} else {
		uint64_t period = 1000000000u / (j->o->rate ? j->o->rate : 1);
		uint64_t start = pkb_now_ns(), end = start + (uint64_t)(j->o->sustained_s * 1e9);
		uint64_t next = start;

		for (i = 0;; i++) {
			t0 = pkb_now_ns();
			if (t0 >= end)
				break;
			log(base + (long)i, 4096 + (long)i * 64);
			d = pkb_now_ns() - t0;
			pkb_hist_add(&t->hist, d);
			next += period;
			if (next > t0 + d) {
				struct timespec ts = { .tv_sec = (time_t)(next / 1000000000u),
						       .tv_nsec = (long)(next % 1000000000u) };

				while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
					;
			}
		}
	}
	t->calls = t->hist.count;
	t->end_ns = pkb_now_ns();
	return NULL;
}

static int latency_child(void *arg, void *out)
{
	const struct ljob *j = arg;
	struct pkb_lat_result *r = out;
	struct lthread *t;
	pthread_t tid[PKB_MAX_THREADS];
	uint64_t t0, t1;
	int i, rc;

	r->status = 0;
	pkb_peer_why[0] = '\0';
	rc = j->lg->open(j->lg, j->path, 0);
	if (rc < 0) {
		r->status = rc;
		snprintf(r->why, sizeof(r->why), "open: %s",
			 pkb_peer_why[0] ? pkb_peer_why : strerror(-rc));
		return 1;
	}
	t = aligned_alloc(64, sizeof(*t) * (size_t)j->threads);
	if (!t) {
		r->status = -ENOMEM;
		snprintf(r->why, sizeof(r->why), "out of memory");
		return 1;
	}
	memset(t, 0, sizeof(*t) * (size_t)j->threads);
	pthread_barrier_init(&start_line, NULL, (unsigned)j->threads + 1);
	for (i = 0; i < j->threads; i++) {
		t[i].j = j;
		t[i].idx = i;
		pkb_hist_init(&t[i].hist);
		pthread_create(&tid[i], NULL, lthread_main, &t[i]);
	}
	pthread_barrier_wait(&start_line);
	t0 = pkb_now_ns();
	for (i = 0; i < j->threads; i++) {
		pthread_join(tid[i], NULL);
		pkb_hist_merge(&r->hist, &t[i].hist);
		r->calls += t[i].calls;
	}
	t1 = pkb_now_ns();
	/*
	 * From the first thread's first call to the last thread's last: the
	 * main thread may wake from the start line late.
	 */
	if (j->threads > 0) {
		uint64_t first = t[0].start_ns, last = t[0].end_ns;

		for (i = 1; i < j->threads; i++) {
			if (t[i].start_ns < first)
				first = t[i].start_ns;
			if (t[i].end_ns > last)
				last = t[i].end_ns;
		}
		t0 = first;
		t1 = last;
	}
	r->wall_s = (double)(t1 - t0) / 1e9;
	j->lg->close();
	if (!strcmp(j->lg->where, "file") || !strcmp(j->lg->where, "store only"))
		scan_file(j->path, r);
	else if (j->lg->count && j->lg->count(r->calls, &r->file_lines, &r->file_dropped) < 0) {
		r->status = -EIO;
		snprintf(r->why, sizeof(r->why), "%s could not say what it recorded", j->lg->name);
	}
	return 0;
}

/*
 * --rounds: run every burst row that ran once more per round, round after
 * round, and keep each run's p50 and p99.9 in the row (the first run's histogram
 * stays the row's).  A run that fails ends that row's rounds.
 */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double pkb_lat_rate_median(const struct pkb_lat_result *r)
{
	double v[PKB_MAX_ROUNDS];
	int n = r->nrounds;

	if (r->variant != PKB_FLAT || n <= 0)
		return 0;
	memcpy(v, r->rate, (size_t)n * sizeof(v[0]));
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void more_rounds(const struct pkb_latency_opts *o, struct pkb_lat_result *res, int nres,
			const char *dir)
{
	static struct pkb_lat_result tmp;
	int round, i, l;

	for (round = 1; round < o->rounds; round++) {
		for (i = 0; i < nres; i++) {
			struct pkb_lat_result *r = &res[i];
			struct ljob j = { .o = o, .threads = r->threads, .variant = r->variant };
			char label[160], why[120];
			int rc;

			if (r->variant == PKB_SUSTAINED || r->status != 0 || r->nrounds != round)
				continue;
			for (l = 0; l < pkb_nloggers; l++)
				if (!strcmp(pkb_loggers[l].name, r->name) &&
				    pkb_loggers[l].where == r->where)
					j.lg = &pkb_loggers[l];
			if (!j.lg)
				continue;
			pkb_peer_size_store((unsigned long)j.threads * (unsigned long)o->burst *
					    (j.variant == PKB_FLAT ? PKB_FLAT_FACTOR : 1));
			snprintf(j.path, sizeof(j.path), "%s/latency-round.log", dir);
			unlink(j.path);
			snprintf(label, sizeof(label), "latency round %d/%d: %s (%s), %d thread%s%s",
				 round + 1, o->rounds, r->name, r->where, j.threads,
				 j.threads == 1 ? "" : "s", j.variant == PKB_FLAT ? ", throughput" : "");
			memset(&tmp, 0, sizeof(tmp));
			pkb_hist_init(&tmp.hist);
			rc = pkb_child_run(label, 0, o->sustained_s + 120, latency_child, &j, &tmp,
					   sizeof(tmp), why, sizeof(why));
			unlink(j.path);
			if (rc >= 0 && tmp.status == 0 && j.variant == PKB_FLAT && tmp.wall_s > 0)
				r->rate[r->nrounds++] = (double)tmp.calls / tmp.wall_s;
			else if (rc >= 0 && tmp.status == 0 && tmp.hist.count) {
				r->p50[r->nrounds] = pkb_hist_quantile(&tmp.hist, 0.5);
				r->p999[r->nrounds++] = pkb_hist_quantile(&tmp.hist, 0.999);
			}
		}
	}
}

int pkb_latency_run(const struct pkb_latency_opts *o, struct pkb_lat_result *res, int max)
{
	const char *dir = pkb_tmpdir();
	int ti, v, l, nres = 0, total = 0, k = 0;

	for (l = 0; l < pkb_nloggers; l++)
		if (pkb_loggers[l].tables & PKB_IN_LATENCY)
			total++;
	total *= o->nthreads * 2;
	for (ti = 0; ti < o->nthreads; ti++) {
		for (v = PKB_BURST; v <= PKB_FLAT; v++) {
			for (l = 0; l < pkb_nloggers; l++) {
				const struct pkb_logger *lg = &pkb_loggers[l];
				struct ljob j = { .lg = lg, .o = o, .threads = o->threads[ti],
						  .variant = (enum pkb_lat_variant)v };
				struct pkb_lat_result *r;
				char label[160], why[120];
				int rc;

				if (!(lg->tables & PKB_IN_LATENCY))
					continue;
				if (v == PKB_FLAT && !pkb_flat_row(lg->name, lg->where))
					continue;
				if (nres == max) {
					fprintf(stderr, "pkbench: more than %d latency rows; the rest are "
						"left out\n", max);
					break;
				}
				r = &res[nres++];
				k++;
				memset(r, 0, sizeof(*r));
				pkb_hist_init(&r->hist);
				snprintf(r->name, sizeof(r->name), "%s", lg->name);
				r->where = lg->where;
				r->threads = j.threads;
				r->variant = j.variant;
				if (!lg->available(lg, r->why, sizeof(r->why))) {
					r->status = 1;
					continue;
				}
				pkb_peer_size_store((unsigned long)j.threads *
						    (v == PKB_BURST ? (unsigned long)o->burst :
						     v == PKB_FLAT ? (unsigned long)o->burst * PKB_FLAT_FACTOR :
						     (unsigned long)(o->rate * o->sustained_s) + 1));
				snprintf(j.path, sizeof(j.path), "%s/latency-%d.log", dir, l);
				unlink(j.path);
				snprintf(label, sizeof(label), "latency %d/%d: %s (%s), %d thread%s, %s", k,
					 total, lg->name, lg->where, j.threads, j.threads == 1 ? "" : "s",
					 v == PKB_BURST ? "burst" : v == PKB_FLAT ? "throughput" : "sustained");
				rc = pkb_child_run(label, v == PKB_SUSTAINED ? o->sustained_s : 0,
						   o->sustained_s + 120, latency_child, &j, r, sizeof(*r),
						   why, sizeof(why));
				/* The child's copy set name and where too; restore the pointer. */
				r->where = lg->where;
				if (rc < 0) {
					r->status = rc;
					snprintf(r->why, sizeof(r->why), "%s", why);
				}
				unlink(j.path);
				if (rc >= 0 && r->status == 0 && v == PKB_BURST) {
					r->p50[r->nrounds] = pkb_hist_quantile(&r->hist, 0.5);
					r->p999[r->nrounds++] = pkb_hist_quantile(&r->hist, 0.999);
				}
				if (rc >= 0 && r->status == 0 && v == PKB_FLAT && r->wall_s > 0)
					r->rate[r->nrounds++] = (double)r->calls / r->wall_s;
			}
		}
	}
	more_rounds(o, res, nres, dir);
	return nres;
}
