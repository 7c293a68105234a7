// SPDX-License-Identifier: MIT
/*
 * plot.c - the storm chart, drawn by gnuplot.
 *
 * Left: the distribution of pk_printk() call times per mode as a CCDF on
 * log-log axes (the fraction of calls that took at least x); the curve's
 * right end is the longest call.  With D doubled, the 2D runs are dashed.
 * Right: each thread's share of the console bytes, threads sorted by
 * share, for the longest run of each mode.
 *
 * The data go to files in the run's private directory; the script is
 * piped to gnuplot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bench.h"

static const char *const colors[PKB_NSMODES] = {
	[PKB_LEGACY] = "#d62728",
	[PKB_HANDOFF] = "#1f77b4",
	[PKB_BUDGET] = "#2ca02c",
	[PKB_THREAD] = "#9467bd",
	[PKB_BASELINE] = "#7f7f7f",
};

static int write_ccdf(const char *path, const struct pkb_hist *h)
{
	FILE *f = fopen(path, "w");
	uint64_t above = h->count;
	unsigned i;

	if (!f)
		return -errno;
	for (i = 0; i < PKB_HIST_BUCKETS && above; i++) {
		uint64_t lo;

		if (!h->bucket[i])
			continue;
		lo = pkb_hist_bucket_lo(i);
		if (lo < h->min)
			lo = h->min;
		fprintf(f, "%.9g %.9g\n", (double)lo / 1e9, (double)above / (double)h->count);
		above -= h->bucket[i];
	}
	/* The exact longest call: one call in count. */
	fprintf(f, "%.9g %.9g\n", (double)h->max / 1e9, 1.0 / (double)h->count);
	fclose(f);
	return 0;
}

/* One point: the longest call, drawn as a marker so it stands out. */
static int write_max(const char *path, const struct pkb_hist *h)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "%.9g %.9g\n", (double)h->max / 1e9, 1.0 / (double)h->count);
	fclose(f);
	return 0;
}

static int cmp_share(const void *a, const void *b)
{
	const struct pkb_share *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

static int write_shares(const char *path, const struct pkb_storm_result *r)
{
	struct pkb_share s[PKB_MAX_SHARES];
	uint64_t total = 0;
	FILE *f = fopen(path, "w");
	int i, n = r->nshares, rank = 0, present = 0;

	if (!f)
		return -errno;
	memcpy(s, r->shares, sizeof(s[0]) * (size_t)n);
	qsort(s, (size_t)n, sizeof(s[0]), cmp_share);
	for (i = 0; i < n; i++)
		total += s[i].bytes;
	/* Every worker gets a point, printers or not; then other threads that printed. */
	for (i = 0; i < n && total; i++) {
		char lbl[16] = "";
		double share = (double)s[i].bytes / (double)total;

		/* Name the dominant printer; small bars stay unlabelled. */
		if (share < 0.5)
			lbl[0] = '\0';
		else if (s[i].printer_thread)
			snprintf(lbl, sizeof(lbl), "printer");
		else if (s[i].who == PKB_WHO_MAIN)
			snprintf(lbl, sizeof(lbl), "main");
		else if (s[i].who >= 0)
			snprintf(lbl, sizeof(lbl), "w%d", s[i].who);
		fprintf(f, "%d %.6f \"%s\"\n", ++rank, 100.0 * (double)s[i].bytes / (double)total, lbl);
	}
	for (i = 0; i < n; i++)
		present += s[i].who >= 0;
	for (i = present; i < r->threads; i++)
		fprintf(f, "%d 0 \"\"\n", ++rank);
	fclose(f);
	return 0;
}

int pkb_plot_write(const char *path, const struct pkb_report *rep)
{
	const char *dir = pkb_tmpdir();
	const struct pkb_storm_result *longest[PKB_NSMODES] = { 0 };
	char data[512];
	uint64_t longest_call = 1;
	FILE *g;
	int i, m, st, first = 1;

	if (!rep->nstorm)
		return -EINVAL;
	for (i = 0; i < rep->nstorm; i++) {
		const struct pkb_storm_result *r = &rep->storm[i];

		if (r->status < 0 || !r->hist.count)
			continue;
		snprintf(data, sizeof(data), "%s/ccdf-%d.dat", dir, i);
		if (write_ccdf(data, &r->hist) < 0)
			return -errno;
		snprintf(data, sizeof(data), "%s/max-%d.dat", dir, i);
		if (write_max(data, &r->hist) < 0)
			return -errno;
		if (!longest[r->mode] || r->seconds > longest[r->mode]->seconds)
			longest[r->mode] = r;
		if (r->hist.max > longest_call)
			longest_call = r->hist.max;
	}
	longest[PKB_BASELINE] = NULL;	/* nothing printed */
	for (m = 0; m < PKB_NSMODES; m++) {
		if (!longest[m])
			continue;
		snprintf(data, sizeof(data), "%s/share-%d.dat", dir, m);
		if (write_shares(data, longest[m]) < 0)
			return -errno;
	}
	g = popen("gnuplot", "w");
	if (!g)
		return -errno;
	fprintf(g, "set terminal pngcairo size 1500,620 font 'sans,11'\n");
	fprintf(g, "set output '%s'\n", path);
	fprintf(g, "set multiplot layout 1,2 title \"pkbench storm: T=%d threads, console %lu B/s, "
		   "%zu KiB store (%s)\" font 'sans,13'\n",
		rep->storm_opts->threads, rep->storm_opts->bps, rep->storm_opts->buffer_size >> 10,
		rep->machine.date);
	fprintf(g, "set xrange [*:%.9g]\n", (double)longest_call / 1e9 * 4);
	fprintf(g, "set logscale xy\nset grid\nset key top right\n"
		   "set format x '10^{%%L}'\nset format y '10^{%%L}'\n"
		   "set xlabel 'pk\\_printk() call time, seconds'\n"
		   "set ylabel 'fraction of calls that took at least x'\n"
		   "set title 'call time (CCDF, log-log; dashed, open marker: D doubled; "
		   "marker: longest call)'\n");
	fputs("plot ", g);
	for (i = 0; i < rep->nstorm; i++) {
		const struct pkb_storm_result *r = &rep->storm[i];
		int dashed = rep->storm_opts->doubled && r->seconds > rep->storm_opts->seconds;

		if (r->status < 0 || !r->hist.count)
			continue;
		fprintf(g, "%s'%s/ccdf-%d.dat' using 1:2 with steps lw 2 dt %d lc rgb '%s' "
			   "title '%s, D=%g s', '%s/max-%d.dat' using 1:2 with points pt %d ps 1.6 "
			   "lc rgb '%s' notitle",
			first ? "" : ", ", dir, i, dashed ? 2 : 1, colors[r->mode],
			pkb_smode_names[r->mode], r->seconds, dir, i, dashed ? 6 : 7, colors[r->mode]);
		first = 0;
	}
	fputs("\n", g);
	fprintf(g, "unset logscale\nset format x '%%g'\nset format y '%%g%%%%'\n"
		   "set xrange [0.5:%d.5]\nset yrange [0:110]\nset xtics 1\n"
		   "set style fill solid 0.85 noborder\nset boxwidth 0.19\n"
		   "set xlabel 'threads, by console bytes written (largest first)'\n"
		   "set ylabel 'share of console bytes'\n"
		   "set title 'printer share per thread (longest run of each mode)'\n",
		rep->storm_opts->threads + 1);
	fputs("plot ", g);
	first = 1;
	for (m = 0; m < PKB_NSMODES; m++) {
		double off = -0.3 + 0.2 * m;

		if (!longest[m])
			continue;
		fprintf(g, "%s'%s/share-%d.dat' using ($1%+.2f):2 with boxes lc rgb '%s' "
			   "title '%s', '' using ($1%+.2f):2:3 with labels left rotate by 90 "
			   "offset 0,0.5 tc rgb '%s' font 'sans,9' notitle",
			first ? "" : ", ", dir, m, off, colors[m], pkb_smode_names[m], off, colors[m]);
		first = 0;
	}
	fputs("\nunset multiplot\n", g);
	st = pclose(g);
	for (i = 0; i < rep->nstorm; i++) {
		snprintf(data, sizeof(data), "%s/ccdf-%d.dat", dir, i);
		remove(data);
		snprintf(data, sizeof(data), "%s/max-%d.dat", dir, i);
		remove(data);
	}
	for (m = 0; m < PKB_NSMODES; m++) {
		snprintf(data, sizeof(data), "%s/share-%d.dat", dir, m);
		remove(data);
	}
	if (st == -1)
		return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -EIO;
	return 0;
}
