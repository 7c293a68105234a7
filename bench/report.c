// SPDX-License-Identifier: MIT
/*
 * report.c - the terminal tables: machine, storm, latency, crash.
 *
 * Everything printed here was measured by the runs; nothing is a constant.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define NS(b, v) pkb_fmt_ns(b, sizeof(b), (v))

void pkb_machine_get(struct pkb_machine *m)
{
	struct utsname u;
	FILE *f;
	char line[256];
	time_t now = time(NULL);

	memset(m, 0, sizeof(*m));
	m->cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (uname(&u) == 0)
		snprintf(m->kernel, sizeof(m->kernel), "%s %s %s", u.sysname, u.release, u.machine);
	f = fopen("/proc/cpuinfo", "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char *p = strchr(line, ':');

			if (!strncmp(line, "model name", 10) && p) {
				p += 2;
				p[strcspn(p, "\n")] = '\0';
				snprintf(m->cpu_model, sizeof(m->cpu_model), "%s", p);
				break;
			}
		}
		fclose(f);
	}
	strftime(m->date, sizeof(m->date), "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
}

void pkb_report_machine(FILE *f, const struct pkb_machine *m)
{
	fprintf(f, "machine: %ld CPUs online, %s, %s; %s\n", m->cpus,
		m->cpu_model[0] ? m->cpu_model : "unknown CPU", m->kernel, m->date);
}

/* Mean time one record took inside the console's write(): busy / records. */
static double record_write_ns(const struct pkb_storm_result *r)
{
	return r->con_records ? (double)r->con_busy_ns / (double)r->con_records : 0;
}

/* The thread that wrote most console bytes, and its share. */
static double top_share(const struct pkb_storm_result *r, char *who, size_t n)
{
	uint64_t total = 0, best = 0;
	int i, bi = -1;

	for (i = 0; i < r->nshares; i++) {
		total += r->shares[i].bytes;
		if (r->shares[i].bytes > best) {
			best = r->shares[i].bytes;
			bi = i;
		}
	}
	if (bi < 0 || !total) {
		snprintf(who, n, "-");
		return 0;
	}
	if (r->shares[bi].printer_thread)
		snprintf(who, n, "printer");
	else if (r->shares[bi].who >= 0)
		snprintf(who, n, "w%d", r->shares[bi].who);
	else if (r->shares[bi].who == PKB_WHO_MAIN)
		snprintf(who, n, "main");
	else
		snprintf(who, n, "T%u", r->shares[bi].tid);
	return (double)best / (double)total;
}

/* Threads that wrote at least one console byte. */
static int printers(const struct pkb_storm_result *r)
{
	int i, n = 0;

	for (i = 0; i < r->nshares; i++)
		n += r->shares[i].bytes > 0;
	return n;
}

void pkb_report_storm(FILE *f, const struct pkb_report *rep)
{
	const struct pkb_storm_opts *o = rep->storm_opts;
	char b[6][24], who[16];
	int i, fails = 0;

	fprintf(f, "\nstorm: T=%d threads, ~80-byte records, one file console throttled to %lu B/s, "
		   "W=%u ms, store %zu KiB, budget %u us\n",
		o->threads, o->bps, o->watchdog_ms, o->buffer_size >> 10, o->budget_us);
	fprintf(f, "%-8s %5s %9s %8s %8s %8s %8s %8s %6s %12s %4s %5s %5s %8s %7s %s\n", "mode",
		"D", "calls", "p50", "p99", "p99.9", "max", "max<stop", "stint", "top printer", "wdog",
		"busy", "line", "dropped", "drain", "complete");
	for (i = 0; i < rep->nstorm; i++) {
		const struct pkb_storm_result *r = &rep->storm[i];
		double share;
		char dur[16], sh[24], mr[16], util[8], line[8], drain[16];

		snprintf(dur, sizeof(dur), "%gs", r->seconds);
		if (r->status < 0) {
			fprintf(f, "%-8s %5s FAILED: %s\n", pkb_smode_names[r->mode], dur, r->error);
			fails++;
			continue;
		}
		if (r->mode == PKB_BASELINE) {
			fprintf(f, "%-8s %5s %9lu %8s %8s %8s %8s %8s %6s %12s %4lu %5s %5s %8s %7s %s\n",
				pkb_smode_names[r->mode], dur, (unsigned long)r->calls,
				NS(b[0], pkb_hist_quantile(&r->hist, 0.50)),
				NS(b[1], pkb_hist_quantile(&r->hist, 0.99)),
				NS(b[2], pkb_hist_quantile(&r->hist, 0.999)), NS(b[3], r->hist.max),
				NS(b[4], r->max_in_storm_ns), "-", "-", (unsigned long)r->watchdog, "-",
				"-", "-", "-", "n/a");
			continue;
		}
		share = top_share(r, who, sizeof(who));
		snprintf(sh, sizeof(sh), "%s %.1f%%", who, share * 100);
		snprintf(mr, sizeof(mr), "%lu", (unsigned long)r->stint_max_writes);
		if (r->backlog_s > 0) {
			snprintf(util, sizeof(util), "%.0f%%", 100 * r->backlog_busy_s / r->backlog_s);
			snprintf(line, sizeof(line), "%.0f%%",
				 100 * (double)r->backlog_bytes / ((double)o->bps * r->backlog_s));
		} else {
			snprintf(util, sizeof(util), "-");
			snprintf(line, sizeof(line), "-");
		}
		if (r->caught_up_s >= 0)
			snprintf(drain, sizeof(drain), "%.2fs", r->caught_up_s);
		else
			snprintf(drain, sizeof(drain), "never");
		fprintf(f, "%-8s %5s %9lu %8s %8s %8s %8s %8s %6s %12s %4lu %5s %5s %8lu %7s %s\n",
			pkb_smode_names[r->mode], dur, (unsigned long)r->calls,
			NS(b[0], pkb_hist_quantile(&r->hist, 0.50)),
			NS(b[1], pkb_hist_quantile(&r->hist, 0.99)),
			NS(b[2], pkb_hist_quantile(&r->hist, 0.999)), NS(b[3], r->hist.max),
			NS(b[4], r->max_in_storm_ns), mr, sh, (unsigned long)r->watchdog, util, line,
			(unsigned long)r->con_dropped, drain, r->complete ? "OK" : "FAIL");
		if (!r->complete) {
			fprintf(f, "         completeness FAIL: %s\n", r->complete_why);
			fails++;
		}
	}
	fprintf(f, "\nstorm, flush machinery (libprintk's counters) and the console:\n");
	fprintf(f, "%-8s %4s %8s %8s %8s %8s %9s %9s %9s %8s %9s %9s %8s %s\n", "mode", "D",
		"printers", "handoffs", "waits", "w-tmo", "budget->t", "direct", "thread", "maxprint",
		"stint-len", "rec-write", "stored", "printed+dropped+filtered");
	for (i = 0; i < rep->nstorm; i++) {
		const struct pkb_storm_result *r = &rep->storm[i];
		char dur[16];

		if (r->status < 0 || r->mode == PKB_BASELINE)
			continue;
		snprintf(dur, sizeof(dur), "%gs", r->seconds);
		fprintf(f, "%-8s %4s %8d %8lu %8lu %8lu %9lu %9lu %9lu %8s %9s %9s %8lu %lu+%lu+%lu\n",
			pkb_smode_names[r->mode], dur, printers(r), (unsigned long)r->fs.handoffs,
			(unsigned long)r->fs.waits, (unsigned long)r->fs.wait_timeouts,
			(unsigned long)r->fs.budget_deferrals, (unsigned long)r->fs.direct_records,
			(unsigned long)r->fs.thread_records, NS(b[0], r->fs.max_print_ns),
			NS(b[2], r->stint_max_ns), NS(b[1], (uint64_t)record_write_ns(r)),
			(unsigned long)(r->store_next_seq - r->start_seq), (unsigned long)r->con_records,
			(unsigned long)r->con_dropped, (unsigned long)r->con_skipped);
	}
	if (o->doubled) {
		int m;

		fprintf(f, "\nstorm, D doubled (at D, then at 2D; same T, B and store):\n");
		for (m = 0; m < PKB_NSMODES; m++) {
			const struct pkb_storm_result *a = NULL, *c = NULL;

			for (i = 0; i < rep->nstorm; i++) {
				const struct pkb_storm_result *r = &rep->storm[i];

				if (r->mode != (enum pkb_smode)m || r->status < 0)
					continue;
				if (r->seconds == o->seconds)
					a = r;
				else if (r->seconds == 2 * o->seconds)
					c = r;
			}
			if (!a || !c || !a->hist.max)
				continue;
			if (m == PKB_BASELINE) {
				fprintf(f, "  %-8s max %8s -> %8s (x%.2f)   (no printing: preemption only)\n",
					pkb_smode_names[m], NS(b[0], a->hist.max), NS(b[1], c->hist.max),
					(double)c->hist.max / (double)a->hist.max);
				continue;
			}
			fprintf(f, "  %-8s max %8s -> %8s (x%.2f)   max<stop %8s -> %8s (x%.2f)   "
				   "longest caller stint %lu -> %lu writes\n",
				pkb_smode_names[m], NS(b[0], a->hist.max), NS(b[1], c->hist.max),
				(double)c->hist.max / (double)a->hist.max, NS(b[2], a->max_in_storm_ns),
				NS(b[3], c->max_in_storm_ns),
				a->max_in_storm_ns ? (double)c->max_in_storm_ns / (double)a->max_in_storm_ns : 0,
				(unsigned long)a->stint_max_writes, (unsigned long)c->stint_max_writes);
		}
	}
	for (i = 0; i < rep->nstorm; i++)
		if (rep->storm[i].mode == PKB_BASELINE && rep->storm[i].status == 0)
			break;
	if (i < rep->nstorm)
		fprintf(f, "\nbaseline: the same threads only format the message (no libprintk);"
			   " its tail is what\npreemption alone costs a call on this machine at T=%d.\n",
			o->threads);
	if (fails)
		fprintf(f, "\nstorm: %d problem%s above\n", fails, fails == 1 ? "" : "s");
}

static const struct pkb_lat_result *find_lat(const struct pkb_report *rep, const char *name,
					     const char *where, int threads,
					     enum pkb_lat_variant v)
{
	int i;

	for (i = 0; i < rep->nlat; i++) {
		const struct pkb_lat_result *r = &rep->lat[i];

		if (r->threads == threads && r->variant == v && !strcmp(r->name, name) &&
		    !strcmp(r->where, where))
			return r;
	}
	return NULL;
}

static void lat_cells(FILE *f, const struct pkb_lat_result *r)
{
	char b[4][24];

	if (!r || r->status != 0) {
		fprintf(f, " %8s %8s %8s %8s", "-", "-", "-", "-");
		return;
	}
	fprintf(f, " %8s %8s %8s %8s", NS(b[0], pkb_hist_quantile(&r->hist, 0.50)),
		NS(b[1], pkb_hist_quantile(&r->hist, 0.99)),
		NS(b[2], pkb_hist_quantile(&r->hist, 0.999)), NS(b[3], r->hist.max));
}

/* found/calls, or found+dropped/calls when drop notices reported losses. */
static void lat_lines(FILE *f, const struct pkb_lat_result *r)
{
	if (!r || r->status != 0) {
		fprintf(f, " -");
		return;
	}
	if (r->file_dropped)
		fprintf(f, " %lu+%lud/%lu", (unsigned long)r->file_lines,
			(unsigned long)r->file_dropped, (unsigned long)r->calls);
	else
		fprintf(f, " %lu/%lu", (unsigned long)r->file_lines, (unsigned long)r->calls);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of a burst row's round p50s, or p99.9s (the lower middle one); 0 if none. */
static uint64_t median_of(const struct pkb_lat_result *r, bool p999)
{
	uint64_t v[PKB_MAX_ROUNDS];

	if (!r || r->status != 0 || r->nrounds < 1)
		return 0;
	memcpy(v, p999 ? r->p999 : r->p50, sizeof(v[0]) * (size_t)r->nrounds);
	qsort(v, (size_t)r->nrounds, sizeof(v[0]), cmp_u64);
	return v[(r->nrounds - 1) / 2];
}

/*
 * --rounds: each burst row's p50 in every round, their median and range,
 * and the store rows' medians against the recording LTTng-UST tracepoint's
 * and spdlog async's, which ran in the same rounds.
 */
static void report_rounds(FILE *f, const struct pkb_report *rep, int w, int ow)
{
	const struct pkb_latency_opts *o = rep->lat_opts;
	char b[4][24];
	int ti, i, k;

	if (o->rounds < 2)
		return;
	fprintf(f, "\np50 of the burst runs over %d rounds (each round runs every row once, in "
		   "this order)\n", o->rounds);
	for (ti = 0; ti < o->nthreads; ti++) {
		int th = o->threads[ti];
		const struct pkb_lat_result *lt, *sp;
		uint64_t mlt, msp;
		char head[24];


		snprintf(head, sizeof(head), "%d thread%s", th, th == 1 ? "" : "s");
		fprintf(f, "%-*s %-*s %8s %8s %8s %8s  %s\n", w, head, ow, "output", "p50 med",
			"min", "max", "p99.9 med", "rounds");
		for (i = 0; i < rep->nlat; i++) {
			const struct pkb_lat_result *r = &rep->lat[i];
			uint64_t lo = UINT64_MAX, hi = 0;

			if (r->threads != th || r->variant != PKB_BURST || r->status != 0 ||
			    r->nrounds < 1)
				continue;
			for (k = 0; k < r->nrounds; k++) {
				lo = r->p50[k] < lo ? r->p50[k] : lo;
				hi = r->p50[k] > hi ? r->p50[k] : hi;
			}
			fprintf(f, "%-*s %-*s %8s %8s %8s %9s  %d\n", w, r->name, ow, r->where,
				NS(b[0], median_of(r, false)), NS(b[1], lo), NS(b[2], hi),
				NS(b[3], median_of(r, true)), r->nrounds);
		}
		lt = find_lat(rep, "lttng-ust tracepoint (recording)", "lttng trace", th, PKB_BURST);
		sp = find_lat(rep, "spdlog async", "file", th, PKB_BURST);
		mlt = median_of(lt, false);
		msp = median_of(sp, false);
		for (i = 0; i < rep->nlat; i++) {
			const struct pkb_lat_result *r = &rep->lat[i];
			uint64_t m = median_of(r, false);

			if (r->threads != th || r->variant != PKB_BURST || !m ||
			    strncmp(r->where, "store", 5))
				continue;
			fprintf(f, "  %s, %s: median p50 ", r->name, r->where);
			if (mlt)
				fprintf(f, "%.2fx the LTTng-UST tracepoint's", (double)m / (double)mlt);
			else
				fprintf(f, "(no LTTng-UST row)");
			if (msp)
				fprintf(f, ", %.2fx spdlog async's; median p99.9 %.3fx spdlog "
					   "async's", (double)m / (double)msp,
					(double)median_of(r, true) / (double)median_of(sp, true));
			if (!strcmp(r->where, "store, open line")) {
				const struct pkb_lat_result *cl =
					find_lat(rep, r->name, "store only", th, PKB_BURST);

				if (median_of(cl, false))
					fprintf(f, "; %.2fx the same line closed (store only)",
						(double)m / (double)median_of(cl, false));
			}
			fputc('\n', f);
		}
		if (ti + 1 < o->nthreads)
			fputc('\n', f);
	}
}

void pkb_report_latency(FILE *f, const struct pkb_report *rep)
{
	const struct pkb_latency_opts *o = rep->lat_opts;
	int ti, i, w = 18, ow = 12;

	/* The logger and output columns fit the longest name. */
	for (i = 0; i < rep->nlat; i++) {
		if ((int)strlen(rep->lat[i].name) > w)
			w = (int)strlen(rep->lat[i].name);
		if ((int)strlen(rep->lat[i].where) > ow)
			ow = (int)strlen(rep->lat[i].where);
	}

	fprintf(f, "\nlatency: per-call time, message \"%s\"\n",
		"buffer has consumed %ld bytes of extra storage, current allocation: %ld bytes");
	fprintf(f, "  burst: %ld calls per thread back to back; sustained: %g s at %u calls/s per thread\n",
		o->burst, o->sustained_s, o->rate);
	for (ti = 0; ti < o->nthreads; ti++) {
		int th = o->threads[ti];

		fprintf(f, "\n%d thread%s  %-*s %-36s %-36s %s\n", th, th == 1 ? " " : "s", w + ow - 1, "",
			"| burst", "| sustained", "| lines in file");
		fprintf(f, "%-*s %-*s %8s %8s %8s %8s %8s %8s %8s %8s  %s\n", w, "logger", ow, "output",
			"p50", "p99", "p99.9", "max", "p50", "p99", "p99.9", "max", "burst/sust.");
		for (i = 0; i < rep->nlat; i++) {
			const struct pkb_lat_result *r = &rep->lat[i], *s;

			if (r->threads != th || r->variant != PKB_BURST)
				continue;
			fprintf(f, "%-*s %-*s", w, r->name, ow, r->where);
			if (r->status == 1) {
				fprintf(f, " skipped: %s\n", r->why);
				continue;
			}
			if (r->status < 0) {
				fprintf(f, " FAILED: %s\n", r->why);
				continue;
			}
			s = find_lat(rep, r->name, r->where, th, PKB_SUSTAINED);
			lat_cells(f, r);
			lat_cells(f, s);
			if (!strcmp(r->where, "syslog daemon") || !strcmp(r->where, "reference")) {
				fprintf(f, "  n/a");
			} else {
				lat_lines(f, r);
				fputc(' ', f);
				lat_lines(f, s);
			}
			if (s && s->status < 0)
				fprintf(f, "  (sustained FAILED: %s)", s->why);
			fputc('\n', f);
		}
	}
	report_rounds(f, rep, w, ow);
	pkb_report_throughput(f, rep, w, ow);
}

/*
 * Throughput (PKB_FLAT runs): all threads' calls over the wall time from
 * the first thread's first call to the last thread's last, each thread
 * calling back to back with no clock read in between, at each thread count
 * against one thread.  Store-path rows and the peers that do not write a
 * file in the caller (pkb_flat_row()).
 */
void pkb_report_throughput(FILE *f, const struct pkb_report *rep, int w, int ow)
{
	const struct pkb_latency_opts *o = rep->lat_opts;
	int i, ti, shown = 0;

	for (i = 0; i < rep->nlat; i++) {
		const struct pkb_lat_result *r = &rep->lat[i], *one, *m;
		double r1, rm;

		if (r->threads != 1 || r->variant != PKB_FLAT || r->status != 0 ||
		    pkb_lat_rate_median(r) <= 0)
			continue;
		one = r;
		r1 = pkb_lat_rate_median(one);
		if (!shown++) {
			fprintf(f, "\nthroughput: %ld calls per thread back to back, all threads' calls per "
				"second of wall time (median of the rounds run, as p50 above)\n",
				o->burst * PKB_FLAT_FACTOR);
			fprintf(f, "%-*s %-*s %12s", w, "logger", ow, "output", "1 thread");
			for (ti = 0; ti < o->nthreads; ti++)
				if (o->threads[ti] != 1)
					fprintf(f, " %10d threads   ratio", o->threads[ti]);
			fputc('\n', f);
		}
		fprintf(f, "%-*s %-*s %10.0f/s", w, one->name, ow, one->where, r1);
		for (ti = 0; ti < o->nthreads; ti++) {
			if (o->threads[ti] == 1)
				continue;
			m = find_lat(rep, one->name, one->where, o->threads[ti], PKB_FLAT);
			rm = m && m->status == 0 ? pkb_lat_rate_median(m) : 0;
			if (rm <= 0) {
				fprintf(f, " %18s %7s", "-", "-");
				continue;
			}
			fprintf(f, " %16.0f/s %6.2fx", rm, rm / r1);
		}
		fputc('\n', f);
	}
	/* The store rows against the LTTng-UST tracepoint's, at each thread count. */
	for (i = 0; shown && i < rep->nlat; i++) {
		const struct pkb_lat_result *r = &rep->lat[i], *lt;
		double rm, rl;

		if (r->threads != 1 || r->variant != PKB_FLAT || r->status != 0 ||
		    strncmp(r->name, "libprintk", 9) || strcmp(r->where, "store only"))
			continue;
		fprintf(f, "  %s, store only: median throughput", r->name);
		for (ti = 0; ti < o->nthreads; ti++) {
			const struct pkb_lat_result *m =
				find_lat(rep, r->name, r->where, o->threads[ti], PKB_FLAT);

			lt = find_lat(rep, "lttng-ust tracepoint (recording)", "lttng trace",
				      o->threads[ti], PKB_FLAT);
			rm = m && m->status == 0 ? pkb_lat_rate_median(m) : 0;
			rl = lt && lt->status == 0 ? pkb_lat_rate_median(lt) : 0;
			if (rm > 0 && rl > 0)
				fprintf(f, "%s %.2fx the LTTng-UST tracepoint's at %d thread%s",
					ti ? ";" : "", rm / rl, o->threads[ti],
					o->threads[ti] == 1 ? "" : "s");
		}
		fputc('\n', f);
	}
}

void pkb_report_crash(FILE *f, const struct pkb_report *rep)
{
	int i;

	fprintf(f, "\ncrash: each logger logs %ld records to a file in a child, then abort()s\n",
		rep->crash_opts->records);
	fprintf(f, "%-30s %8s %8s %8s %-8s %s\n", "logger", "logged", "in file", "lost", "signal",
		"crash report in file");
	for (i = 0; i < rep->ncrash; i++) {
		const struct pkb_crash_result *r = &rep->crash[i];
		char sig[16];

		if (r->status == 1) {
			fprintf(f, "%-30s skipped: %s\n", r->name, r->why);
			continue;
		}
		if (r->term_signal)
			snprintf(sig, sizeof(sig), "SIG%s", sigabbrev_np(r->term_signal));
		else
			snprintf(sig, sizeof(sig), "-");
		fprintf(f, "%-30s %8ld %8ld %8ld %-8s %s", r->name, r->logged, r->found,
			r->logged - r->found, sig, r->crash_report ? "yes" : "no");
		if (r->status < 0)
			fprintf(f, "  (FAILED: %s)", r->why);
		fputc('\n', f);
	}
}
