// SPDX-License-Identifier: MIT
/*
 * simcmd.c - pkbench sim: options, the tables, JSON, the chart, and
 * --validate (the real storm beside the simulated one on this machine).
 *
 * Standard output depends only on the options and the costs: with the
 * costs fixed (--costs FILE, --cost name=value), the same seed gives the
 * same bytes.  How long each run took on the host goes to standard error.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <printk/reader.h>

#include "store/lanes.h"
#include "store/store.h"
#include "sim.h"

#define NS(b, v) pkb_fmt_ns(b, sizeof(b), (v))
/* pkbench storm's record: "storm: worker %2d call %8lu: the quick ... dog\n". */
#define STORM_REC_BYTES	76
#define NSMODES	4	/* legacy, handoff, budget, thread: enum pkb_smode's first four */

enum { O_CPUS = 256, O_THREADS, O_MODE, O_SECONDS, O_SEED, O_RECORD, O_RATE, O_BURST, O_CONSOLE,
       O_SLICE, O_BUDGET, O_WATCHDOG, O_BUFSIZE, O_EMERG, O_STORE, O_WINDOW, O_COSTS, O_COST,
       O_LANES, O_JSON, O_PNG, O_VALIDATE, O_ROUNDS, O_VTHREADS, O_VSECONDS, O_VBPS, O_HELP };

static const struct option opts[] = {
	{ "cpus", required_argument, NULL, O_CPUS },
	{ "threads", required_argument, NULL, O_THREADS },
	{ "mode", required_argument, NULL, O_MODE },
	{ "seconds", required_argument, NULL, O_SECONDS },
	{ "seed", required_argument, NULL, O_SEED },
	{ "record-bytes", required_argument, NULL, O_RECORD },
	{ "rate", required_argument, NULL, O_RATE },
	{ "burst", required_argument, NULL, O_BURST },
	{ "console", required_argument, NULL, O_CONSOLE },
	{ "slice-us", required_argument, NULL, O_SLICE },
	{ "budget-us", required_argument, NULL, O_BUDGET },
	{ "watchdog-ms", required_argument, NULL, O_WATCHDOG },
	{ "buffer-size", required_argument, NULL, O_BUFSIZE },
	{ "emergency", required_argument, NULL, O_EMERG },
	{ "store", required_argument, NULL, O_STORE },
	{ "store-window-ms", required_argument, NULL, O_WINDOW },
	{ "lanes", required_argument, NULL, O_LANES },
	{ "costs", required_argument, NULL, O_COSTS },
	{ "cost", required_argument, NULL, O_COST },
	{ "json", required_argument, NULL, O_JSON },
	{ "png", required_argument, NULL, O_PNG },
	{ "validate", no_argument, NULL, O_VALIDATE },
	{ "rounds", required_argument, NULL, O_ROUNDS },
	{ "validate-threads", required_argument, NULL, O_VTHREADS },
	{ "validate-seconds", required_argument, NULL, O_VSECONDS },
	{ "validate-bps", required_argument, NULL, O_VBPS },
	{ "help", no_argument, NULL, O_HELP },
	{ 0, 0, 0, 0 },
};

struct simopts {
	int cpus[PKB_SIM_MAX_LIST], ncpus;
	int threads[PKB_SIM_MAX_LIST], nthreads;
	unsigned modes;
	struct pkb_sim_params p;
	double window_ms;
	const char *json, *png, *costs_file, *cost_spec;
	int validate, rounds;
	int vthreads[PKB_SIM_MAX_LIST], nvthreads;
	double vseconds;
	unsigned long vbps;
	int bps_given, buf_given;
	unsigned lanes_want;	/* --lanes, as PK_LANES (0: the library's default) */
};

static void usage(FILE *f)
{
	fputs("usage: pkbench sim [--cpus N[,N...]] [--threads T[,T...]]\n"
	      "                   [--mode legacy|handoff|budget|thread|all[,...]] [--seconds S]\n"
	      "                   [--seed K] [--record-bytes N] [--rate CALLS_PER_S [--burst N]]\n"
	      "                   [--console serial|file|socket|BYTES_PER_S] [--slice-us N]\n"
	      "                   [--budget-us N] [--watchdog-ms N] [--buffer-size BYTES]\n"
	      "                   [--emergency FRACTION] [--store ring|lanes] [--store-window-ms N]\n"
	      "                   [--lanes N]\n"
	      "                   [--costs FILE] [--cost name=value[,...]] [--json FILE] [--png FILE]\n"
	      "       pkbench sim --validate [--validate-threads 1,2,4,8,16] [--rounds N]\n"
	      "                   [--validate-seconds S] [--validate-bps B] [--mode ...]\n"
	      "See pkbench(1).\n",
	      f);
}

static int bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "pkbench sim: bad value for %s: '%s'%s%s\n", opt, val, why ? ": " : "",
		why ? why : "");
	return 2;
}

static int num(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < lo || v > hi)
		return -1;
	if (*end == 'k' || *end == 'K')
		v *= 1024, end++;
	else if (*end == 'm' || *end == 'M')
		v *= 1024 * 1024, end++;
	if (*end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int list(const char *s, int lo, int hi, int *out, int *n)
{
	char buf[256], *tok, *save = NULL;
	double v;

	if (strlen(s) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", s);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == PKB_SIM_MAX_LIST || num(tok, lo, hi, &v) < 0 || v != floor(v))
			return -1;
		out[(*n)++] = (int)v;
	}
	return *n ? 0 : -1;
}

static int modes(const char *s, unsigned *out)
{
	char buf[128], *tok, *save = NULL;
	unsigned m = 0;
	int i, found;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		found = !strcmp(tok, "all");
		if (found)
			m |= (1u << NSMODES) - 1;
		for (i = 0; i < NSMODES; i++)
			if (!strcmp(tok, pkb_smode_names[i]))
				m |= 1u << i, found = 1;
		if (!found)
			return -1;
	}
	*out = m;
	return m ? 0 : -1;
}

static int console_bps(const char *s, double *bps)
{
	if (!strcmp(s, "serial"))
		*bps = 11520;		/* 115200 baud, 8N1 */
	else if (!strcmp(s, "file"))
		*bps = 0;		/* no line: write()'s own cost only */
	else if (!strcmp(s, "socket"))
		*bps = 125000000;	/* 1 Gbit/s */
	else if (num(s, 100, 1e12, bps) < 0)
		return -1;
	return 0;
}

static int parse(int argc, char **argv, struct simopts *o)
{
	double d;
	int c;

	memset(o, 0, sizeof(*o));
	o->ncpus = 7;
	for (c = 0; c < 7; c++)
		o->cpus[c] = 16 << c;
	o->modes = (1u << NSMODES) - 1;
	o->p.seconds = 10;
	o->p.seed = 1;
	o->p.rec_bytes = 80;
	o->p.burst = 1;
	o->p.bps = 11520;
	o->p.slice_ns = 3000000;
	o->p.budget_ns = 20000000;
	o->p.watchdog_ns = 1000000000;
	o->p.buffer_size = 32u << 10;
	o->window_ms = 1;
	o->rounds = 3;
	o->nvthreads = 5;
	for (c = 0; c < 5; c++)
		o->vthreads[c] = 1 << c;
	o->vseconds = 1;
	o->vbps = 40000;
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_CPUS:
			if (list(optarg, 1, PKB_SIM_MAX_CPUS, o->cpus, &o->ncpus) < 0)
				return bad("--cpus", optarg, "CPU counts 1 to 1024, comma-separated");
			break;
		case O_THREADS:
			if (list(optarg, 1, PKB_SIM_MAX_THREADS, o->threads, &o->nthreads) < 0)
				return bad("--threads", optarg, "thread counts 1 to 4096");
			break;
		case O_MODE:
			if (modes(optarg, &o->modes) < 0)
				return bad("--mode", optarg, "legacy, handoff, budget, thread or all");
			break;
		case O_SECONDS:
			if (num(optarg, 0.001, 3600, &o->p.seconds) < 0)
				return bad("--seconds", optarg, "0.001 to 3600");
			break;
		case O_SEED:
			if (num(optarg, 0, 1e18, &d) < 0)
				return bad("--seed", optarg, NULL);
			o->p.seed = (uint64_t)d;
			break;
		case O_RECORD:
			if (num(optarg, 1, PK_RECORD_MAX, &d) < 0)
				return bad("--record-bytes", optarg, NULL);
			o->p.rec_bytes = (int)d;
			break;
		case O_RATE:
			if (num(optarg, 0, 1e9, &o->p.rate) < 0)
				return bad("--rate", optarg, "calls per second per producer");
			break;
		case O_BURST:
			if (num(optarg, 1, 1e6, &d) < 0)
				return bad("--burst", optarg, NULL);
			o->p.burst = (int)d;
			break;
		case O_CONSOLE:
			if (console_bps(optarg, &o->p.bps) < 0)
				return bad("--console", optarg, "serial, file, socket or bytes per second");
			o->bps_given = 1;
			break;
		case O_SLICE:
			if (num(optarg, 1, 1e7, &d) < 0)
				return bad("--slice-us", optarg, NULL);
			o->p.slice_ns = (int64_t)(d * 1000);
			break;
		case O_BUDGET:
			if (num(optarg, 1, 1e8, &d) < 0)
				return bad("--budget-us", optarg, NULL);
			o->p.budget_ns = (int64_t)(d * 1000);
			break;
		case O_WATCHDOG:
			if (num(optarg, 1, 86400000, &d) < 0)
				return bad("--watchdog-ms", optarg, NULL);
			o->p.watchdog_ns = (int64_t)(d * 1e6);
			break;
		case O_BUFSIZE:
			if (num(optarg, PK_BUFFER_SIZE_MIN, 1 << 30, &d) < 0)
				return bad("--buffer-size", optarg, NULL);
			o->p.buffer_size = (size_t)d;
			o->buf_given = 1;
			break;
		case O_EMERG:
			if (num(optarg, 0, 1, &o->p.emergency) < 0)
				return bad("--emergency", optarg, "a fraction of calls, 0 to 1");
			break;
		case O_STORE:
			if (!strcmp(optarg, "ring"))
				o->p.store = PKB_SIM_RING;
			else if (!strcmp(optarg, "lanes"))
				o->p.store = PKB_SIM_LANES;
			else
				return bad("--store", optarg, "ring or lanes");
			break;
		case O_LANES:
			if (num(optarg, 1, PK_LANES_MAX, &d) < 0)
				return bad("--lanes", optarg, "1 to 64, as PK_LANES");
			o->lanes_want = (unsigned)d;
			break;
		case O_WINDOW:
			if (num(optarg, 0.001, 10000, &o->window_ms) < 0)
				return bad("--store-window-ms", optarg, NULL);
			break;
		case O_COSTS:
			o->costs_file = optarg;
			break;
		case O_COST:
			o->cost_spec = optarg;
			break;
		case O_JSON:
			o->json = optarg;
			break;
		case O_PNG:
			o->png = optarg;
			break;
		case O_VALIDATE:
			o->validate = 1;
			break;
		case O_ROUNDS:
			if (num(optarg, 1, 15, &d) < 0)
				return bad("--rounds", optarg, "1 to 15");
			o->rounds = (int)d;
			break;
		case O_VTHREADS:
			if (list(optarg, 1, PKB_MAX_THREADS, o->vthreads, &o->nvthreads) < 0)
				return bad("--validate-threads", optarg, "1 to 64");
			break;
		case O_VSECONDS:
			if (num(optarg, 0.05, 600, &o->vseconds) < 0)
				return bad("--validate-seconds", optarg, NULL);
			break;
		case O_VBPS:
			if (num(optarg, 100, 1e9, &d) < 0)
				return bad("--validate-bps", optarg, NULL);
			o->vbps = (unsigned long)d;
			break;
		case O_HELP:
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pkbench sim: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (o->nthreads > 1 && o->nthreads != o->ncpus) {
		fprintf(stderr, "pkbench sim: --threads gives %d counts for %d CPU counts: give one, "
			"or one per CPU count\n", o->nthreads, o->ncpus);
		return 2;
	}
	/* The validation's store, so that the costs measure its capacity. */
	if (o->validate && !o->buf_given)
		o->p.buffer_size = 16u << 10;
	return 0;
}

static int get_costs(struct simopts *o)
{
	char why[256];
	int rc;

	if (o->costs_file) {
		rc = pkb_sim_costs_load(o->costs_file, &o->p.c, why, sizeof(why));
		if (rc < 0) {
			fprintf(stderr, "pkbench sim: --costs %s\n", why);
			return -1;
		}
	} else {
		rc = pkb_sim_costs_measure(&o->p.c, o->p.buffer_size, o->p.rec_bytes);
		if (rc < 0) {
			fprintf(stderr, "pkbench sim: measuring the costs failed: %s\n", strerror(-rc));
			return -1;
		}
	}
	if (o->cost_spec) {
		rc = pkb_sim_costs_set(&o->p.c, o->cost_spec, why, sizeof(why));
		if (rc < 0) {
			fprintf(stderr, "pkbench sim: --cost: %s\n", why);
			return -1;
		}
	}
	return 0;
}

/* ---- the simulation table ---- */

struct row {
	struct pkb_sim_result r;
	int ok;
};

struct srow {
	int cpus, threads, nlanes;
	struct pkb_sim_store_result ring, lanes;
};

static void print_row(FILE *f, const struct pkb_sim_result *r)
{
	char b[4][24], sh[32], use[16];

	snprintf(sh, sizeof(sh), "%s %.1f%%", r->top_who, 100 * r->top_share);
	if (r->backlog_s > 0 && r->p.bps > 0)
		snprintf(use, sizeof(use), "%.0f%%", 100 * r->busy_s / r->backlog_s);
	else
		snprintf(use, sizeof(use), "-");
	fprintf(f, "%5d %6d %-8s %11lu %8s %8s %8s %8s %14s %5d %6lu %5s %9lu %11.4g\n", r->p.cpus,
		r->p.threads, pkb_smode_names[r->p.mode], (unsigned long)r->calls,
		NS(b[0], pkb_hist_quantile(&r->hist, 0.5)), NS(b[1], pkb_hist_quantile(&r->hist, 0.99)),
		NS(b[2], r->hist.max), NS(b[3], r->max_in_storm_ns), sh, r->printers,
		(unsigned long)r->watchdog, use, (unsigned long)(r->dropped), r->store_rate);
}

static void print_head(FILE *f)
{
	fprintf(f, "%5s %6s %-8s %11s %8s %8s %8s %8s %14s %5s %6s %5s %9s %11s\n", "cpus",
		"thr", "mode", "calls", "p50", "p99", "max", "max<stop", "top printer", "prtrs",
		"wdog", "use", "dropped", "stored/s");
}

static int write_json(const char *path, const struct simopts *o, const struct row *rows, int nr,
		      const struct srow *sr, int ns)
{
	FILE *f = fopen(path, "w");
	const struct pkb_sim_costs *c = &o->p.c;
	int i;

	if (!f)
		return -errno;
	fprintf(f, "{\n  \"seed\": %llu, \"seconds\": %g, \"record_bytes\": %d, \"console_bps\": %g,\n"
		   "  \"buffer_size\": %zu, \"slice_ns\": %lld, \"budget_ns\": %lld, \"watchdog_ns\": %lld,\n"
		   "  \"rate\": %g, \"burst\": %d, \"emergency\": %g, \"store\": \"%s\",\n",
		(unsigned long long)o->p.seed, o->p.seconds, o->p.rec_bytes, o->p.bps, o->p.buffer_size,
		(long long)o->p.slice_ns, (long long)o->p.budget_ns, (long long)o->p.watchdog_ns,
		o->p.rate, o->p.burst, o->p.emergency, o->p.store == PKB_SIM_LANES ? "lanes" : "ring");
	fprintf(f, "  \"costs\": {\"measured\": %s, \"fmt_ns\": %lld, \"cs_ns\": %lld, \"xfer_ns\": %lld, "
		   "\"lane_ns\": %lld, \"lock_ns\": %lld, \"wake_ns\": %lld, \"wakeup_ns\": %lld, "
		   "\"write_ns\": %lld, \"write_kb_ns\": %lld, \"rec_overhead\": %lld},\n"
		   "  \"runs\": [\n",
		c->measured ? "true" : "false", (long long)c->fmt_ns, (long long)c->cs_ns,
		(long long)c->xfer_ns, (long long)c->lane_ns, (long long)c->lock_ns,
		(long long)c->wake_ns,
		(long long)c->wakeup_ns, (long long)c->write_ns, (long long)c->write_kb_ns,
		(long long)c->rec_overhead);
	for (i = 0; i < nr; i++) {
		const struct pkb_sim_result *r = &rows[i].r;

		fprintf(f, "    {\"cpus\": %d, \"threads\": %d, \"mode\": \"%s\", \"ok\": %s, "
			   "\"calls\": %lu, \"p50_ns\": %lu, \"p99_ns\": %lu, \"p999_ns\": %lu, "
			   "\"max_ns\": %lu, \"max_in_storm_ns\": %lu, \"top_printer\": \"%s\", "
			   "\"top_share\": %.6f, \"printers\": %d, \"watchdog\": %lu, "
			   "\"console_busy_s\": %.6f, \"backlog_s\": %.6f, \"stored\": %lu, "
			   "\"printed\": %lu, \"dropped\": %lu, \"drop_notices\": %lu, "
			   "\"stored_per_s\": %.6g, \"handoffs\": %lu, \"waits\": %lu, "
			   "\"wait_timeouts\": %lu, \"budget_deferrals\": %lu, \"direct_calls\": %lu, "
			   "\"end_s\": %.6f, \"events\": %lu}%s\n",
			r->p.cpus, r->p.threads, pkb_smode_names[r->p.mode], rows[i].ok ? "true" : "false",
			(unsigned long)r->calls, (unsigned long)pkb_hist_quantile(&r->hist, 0.5),
			(unsigned long)pkb_hist_quantile(&r->hist, 0.99),
			(unsigned long)pkb_hist_quantile(&r->hist, 0.999), (unsigned long)r->hist.max,
			(unsigned long)r->max_in_storm_ns, r->top_who, r->top_share, r->printers,
			(unsigned long)r->watchdog, r->busy_s, r->backlog_s, (unsigned long)r->stored,
			(unsigned long)r->printed, (unsigned long)r->dropped, (unsigned long)r->notices,
			r->store_rate, (unsigned long)r->handoffs, (unsigned long)r->waits,
			(unsigned long)r->wait_timeouts, (unsigned long)r->budget_deferrals,
			(unsigned long)r->direct, r->end_s, (unsigned long)r->events,
			i + 1 < nr ? "," : "");
	}
	fprintf(f, "  ],\n  \"store\": [\n");
	for (i = 0; i < ns; i++)
		fprintf(f, "    {\"cpus\": %d, \"threads\": %d, \"ring_per_s\": %.6g, "
			   "\"lanes\": %d, \"lanes_per_s\": %.6g}%s\n", sr[i].cpus, sr[i].threads,
			sr[i].ring.rate, sr[i].nlanes, sr[i].lanes.rate, i + 1 < ns ? "," : "");
	fprintf(f, "  ]\n}\n");
	if (fclose(f))
		return -errno;
	return 0;
}

static const char *const colors[NSMODES] = { "#d62728", "#1f77b4", "#2ca02c", "#9467bd" };

static int write_png(const char *path, const struct simopts *o, const struct row *rows, int nr,
		     const struct srow *sr, int ns)
{
	const char *dir = pkb_tmpdir();
	char data[600];
	FILE *f, *g;
	int i, m, st, first;

	for (m = 0; m < NSMODES; m++) {
		snprintf(data, sizeof(data), "%s/sim-%d.dat", dir, m);
		f = fopen(data, "w");
		if (!f)
			return -errno;
		for (i = 0; i < nr; i++)
			if (rows[i].ok && rows[i].r.p.mode == (enum pkb_smode)m)
				fprintf(f, "%d %.9g %.6f\n", rows[i].r.p.cpus,
					(double)rows[i].r.hist.max / 1e9, 100 * rows[i].r.top_share);
		fclose(f);
	}
	snprintf(data, sizeof(data), "%s/sim-store.dat", dir);
	f = fopen(data, "w");
	if (!f)
		return -errno;
	for (i = 0; i < ns; i++)
		fprintf(f, "%d %.6g %.6g\n", sr[i].cpus, sr[i].ring.rate, sr[i].lanes.rate);
	fclose(f);
	g = popen("gnuplot", "w");
	if (!g)
		return -errno;
	fprintf(g, "set terminal pngcairo size 1800,560 font 'sans,11'\nset output '%s'\n", path);
	fprintf(g, "set multiplot layout 1,3 title \"pkbench sim: %g s storm, %d-byte records, "
		   "console %g B/s, %zu KiB store, seed %llu\" font 'sans,13'\n",
		o->p.seconds, o->p.rec_bytes, o->p.bps, o->p.buffer_size >> 10,
		(unsigned long long)o->p.seed);
	fprintf(g, "set logscale x 2\nset grid\nset key top left\nset xlabel 'CPUs'\n");
	fprintf(g, "set logscale y\nset format y '10^{%%L}'\nset ylabel 'longest pk\\_printk() call, s'\n"
		   "set title 'longest call'\nplot ");
	first = 1;
	for (m = 0; m < NSMODES; m++) {
		if (!(o->modes & (1u << m)))
			continue;
		fprintf(g, "%s'%s/sim-%d.dat' using 1:2 with linespoints lw 2 pt 7 lc rgb '%s' title '%s'",
			first ? "" : ", ", dir, m, colors[m], pkb_smode_names[m]);
		first = 0;
	}
	fprintf(g, "\nunset logscale y\nset format y '%%g%%%%'\nset yrange [0:105]\n"
		   "set ylabel 'top printer share of console bytes'\nset title 'printer share'\nplot ");
	first = 1;
	for (m = 0; m < NSMODES; m++) {
		if (!(o->modes & (1u << m)))
			continue;
		fprintf(g, "%s'%s/sim-%d.dat' using 1:3 with linespoints lw 2 pt 7 lc rgb '%s' title '%s'",
			first ? "" : ", ", dir, m, colors[m], pkb_smode_names[m]);
		first = 0;
	}
	fprintf(g, "\nset autoscale y\nset logscale y\nset format y '10^{%%L}'\n"
		   "set ylabel 'records stored per second, all CPUs'\n"
		   "set title 'store throughput (one producer per CPU)'\n"
		   "plot '%s/sim-store.dat' using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' "
		   "title 'one shared ring', '' using 1:3 with linespoints lw 2 pt 5 "
		   "lc rgb '#1f77b4' title 'per-CPU lanes'\n",
		dir);
	fputs("unset multiplot\n", g);
	st = pclose(g);
	for (m = 0; m < NSMODES; m++) {
		snprintf(data, sizeof(data), "%s/sim-%d.dat", dir, m);
		remove(data);
	}
	snprintf(data, sizeof(data), "%s/sim-store.dat", dir);
	remove(data);
	if (st == -1)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

static int run_sims(struct simopts *o)
{
	/* The store table's store: the library's default size, or --buffer-size. */
	size_t table_bytes = o->buf_given ? o->p.buffer_size : PK_BUFFER_SIZE_DEFAULT;
	int nrows = o->ncpus * NSMODES, nr = 0, ns = 0, i, m, status = 0;
	struct row *rows = calloc((size_t)nrows, sizeof(*rows));
	struct srow *sr = calloc((size_t)o->ncpus, sizeof(*sr));

	if (!rows || !sr) {
		free(rows);
		free(sr);
		return 1;
	}
	printf("sim: %g simulated s, %d-byte records, console %g B/s%s, store %zu KiB (%s), "
	       "W=%lld ms, slice %lld us, budget %lld us, seed %llu",
	       o->p.seconds, o->p.rec_bytes, o->p.bps, o->p.bps > 0 ? "" : " (no line limit)",
	       o->p.buffer_size >> 10, o->p.store == PKB_SIM_LANES ? "lanes" : "one ring",
	       (long long)(o->p.watchdog_ns / 1000000), (long long)(o->p.slice_ns / 1000),
	       (long long)(o->p.budget_ns / 1000), (unsigned long long)o->p.seed);
	if (o->p.rate > 0)
		printf(", %g calls/s per producer in bursts of %d", o->p.rate, o->p.burst);
	else
		printf(", producers back to back (a storm)");
	if (o->p.emergency > 0)
		printf(", %g of calls in emergency sections", o->p.emergency);
	printf("\n");
	pkb_sim_costs_print(stdout, &o->p.c);
	printf("\n");
	print_head(stdout);
	for (i = 0; i < o->ncpus; i++) {
		for (m = 0; m < NSMODES; m++) {
			struct pkb_sim_params p = o->p;
			struct row *rw = &rows[nr];
			int rc;

			if (!(o->modes & (1u << m)))
				continue;
			p.cpus = o->cpus[i];
			p.threads = o->nthreads == 0 ? p.cpus :
				    o->nthreads == 1 ? o->threads[0] : o->threads[i];
			p.mode = (enum pkb_smode)m;
			p.lanes = pkb_sim_lanes(p.cpus, p.buffer_size, o->lanes_want);
			pkb_progress("sim: %d CPUs, %s", p.cpus, pkb_smode_names[m]);
			rc = pkb_sim_run(&p, &rw->r);
			pkb_progress_clear();
			nr++;
			rw->ok = rc == 0;
			if (rc < 0) {
				printf("%5d %6d %-8s FAILED: %s\n", p.cpus, p.threads, pkb_smode_names[m],
				       strerror(-rc));
				status = 1;
				continue;
			}
			print_row(stdout, &rw->r);
			fprintf(stderr, "sim: %d CPUs, %d threads, %s: %.2f s host time, %lu events\n",
				p.cpus, p.threads, pkb_smode_names[m], rw->r.wall_s,
				(unsigned long)rw->r.events);
		}
	}
	printf("\nstore throughput, records/s of all producers (simulated over %g ms; lanes: as "
	       "many as the library makes for a %zu KiB store%s, CPU c storing in lane c mod lanes)\n",
	       o->window_ms, table_bytes >> 10, o->lanes_want ? " with --lanes (PK_LANES)" : "");
	printf("%5s %6s %14s %6s %14s %8s\n", "cpus", "thr", "one ring", "lanes", "lanes",
	       "lanes/ring");
	for (i = 0; i < o->ncpus; i++) {
		struct pkb_sim_params p = o->p;
		struct srow *s = &sr[ns];

		p.cpus = o->cpus[i];
		p.threads = o->nthreads == 0 ? p.cpus : o->nthreads == 1 ? o->threads[0] : o->threads[i];
		p.store = PKB_SIM_RING;
		if (pkb_sim_store_run(&p, o->window_ms / 1e3, &s->ring) < 0)
			status = 1;
		p.store = PKB_SIM_LANES;
		p.lanes = pkb_sim_lanes(p.cpus, table_bytes, o->lanes_want);
		if (pkb_sim_store_run(&p, o->window_ms / 1e3, &s->lanes) < 0)
			status = 1;
		s->cpus = p.cpus;
		s->threads = p.threads;
		s->nlanes = p.lanes;
		printf("%5d %6d %14.4g %6d %14.4g %8.1f\n", s->cpus, s->threads, s->ring.rate,
		       s->nlanes, s->lanes.rate, s->ring.rate > 0 ? s->lanes.rate / s->ring.rate : 0);
		fprintf(stderr, "sim: store, %d CPUs: %.2f s host time\n", p.cpus,
			s->ring.wall_s + s->lanes.wall_s);
		ns++;
	}
	if (o->json) {
		int rc = write_json(o->json, o, rows, nr, sr, ns);

		if (rc < 0) {
			fprintf(stderr, "pkbench sim: writing %s: %s\n", o->json, strerror(-rc));
			status = 1;
		} else {
			printf("\nwrote %s\n", o->json);
		}
	}
	if (o->png) {
		int rc = write_png(o->png, o, rows, nr, sr, ns);

		if (rc < 0) {
			fprintf(stderr, "pkbench sim: drawing %s with gnuplot: %s\n", o->png,
				strerror(-rc));
			status = 1;
		} else {
			printf("wrote %s\n", o->png);
		}
	}
	free(rows);
	free(sr);
	return status;
}

/* ---- --validate ---- */

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double med(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double real_share(const struct pkb_storm_result *r)
{
	uint64_t total = 0, best = 0;
	int i;

	for (i = 0; i < r->nshares; i++) {
		total += r->shares[i].bytes;
		if (r->shares[i].bytes > best)
			best = r->shares[i].bytes;
	}
	return total ? (double)best / (double)total : 0;
}

/*
 * The store rows.  Each round runs two children, each with one fresh
 * library (no console, a 1 MiB store): one whose store is one ring
 * (pk_config.lanes = 1, as PK_LANES=1) and one with the default lanes (one
 * per CPU), so that the model's one ring and its lanes are each compared
 * with the store they stand for.  Each child times the same operation
 * twice, one right after the other, so that the host's load is the same
 * for both:
 *
 *   costs  short bursts (SCOST_CALLS calls a thread): pk_printk() alone,
 *          pk__store() of the same length alone (the store's section,
 *          cs_ns; the rest of the call is fmt_ns), and two threads
 *          calling pk_printk() at once (the contended rate, from which
 *          xfer_ns (one ring) or lane_ns (lanes) is fitted: contention on
 *          the ring's shared lines, or what two lanes still share, and on
 *          whatever else the call touches, measured, not assumed)
 *   real   SREAL_CALLS calls a thread, 1 and 2 threads: the throughput
 *          the table compares against the model run on those costs
 *
 * Every thread reads the clock itself after the start barrier, so a
 * thread that starts before its parent is scheduled again is timed all
 * the same (the rate is all calls over the first start to the last end).
 * The threads are not pinned: each stores in the lane of the CPU it runs
 * on, as an application's would.
 */
#define SCOST_CALLS	20000
#define SREAL_CALLS	200000
#define SBUF_SIZE	(1u << 20)

struct sres {
	double real[2];		/* records/s, 1 and 2 threads */
	double p1_ns, s1_ns;	/* one pk_printk(), one pk__store(), alone */
	double p2_rate;		/* records/s, two threads calling pk_printk() at once */
	unsigned lanes;		/* the store's lanes, as pk_reader_info() gives them */
};

/* The two stores: pk_config.lanes of each (0: the default, one per CPU). */
static const unsigned store_lanes[2] = { 1, 0 };
static const enum pkb_sim_store store_model[2] = { PKB_SIM_RING, PKB_SIM_LANES };

struct sworker {
	pthread_t t;
	long calls;
	int raw;		/* pk__store() instead of pk_printk() */
	uint64_t t0, t1;
};

static pthread_barrier_t sbar;

static void *store_worker(void *arg)
{
	struct sworker *w = arg;
	char text[128];
	uint64_t seq;
	long i;

	/* What pk_printk() stores: the storm's line, 79 bytes and its newline. */
	memset(text, 'x', sizeof(text));
	pthread_barrier_wait(&sbar);
	w->t0 = pkb_now_ns();
	if (w->raw) {
		for (i = 0; i < w->calls; i++)
			pk__store(PK_INFO, 0, text, 80, NULL, &seq);
	} else {
		for (i = 0; i < w->calls; i++)
			pk_printk(PK_INFO, "storm: worker %2d call %8lu: the quick brown fox jumps "
				  "over the lazy dog\n", 1, (unsigned long)i);
	}
	w->t1 = pkb_now_ns();
	return NULL;
}

/* @threads threads making @calls calls each: records/s of all, or 0. */
static double store_rate(int threads, long calls, int raw)
{
	struct sworker w[2];
	uint64_t t0 = UINT64_MAX, t1 = 0;
	int i, n = 0;

	pthread_barrier_init(&sbar, NULL, (unsigned)threads);
	for (i = 0; i < threads; i++) {
		w[i] = (struct sworker){ .calls = calls, .raw = raw };
		if (pthread_create(&w[i].t, NULL, store_worker, &w[i]))
			break;
		n++;
	}
	if (n < threads) {
		/* The barrier would never open: nothing was timed. */
		_exit(1);
	}
	for (i = 0; i < n; i++) {
		pthread_join(w[i].t, NULL);
		t0 = w[i].t0 < t0 ? w[i].t0 : t0;
		t1 = w[i].t1 > t1 ? w[i].t1 : t1;
	}
	pthread_barrier_destroy(&sbar);
	return t1 > t0 ? (double)calls * threads * 1e9 / (double)(t1 - t0) : 0;
}

/*
 * Once round every lane first, so that no run pays for its first touch: a
 * thread stores in its CPU's lane, so it goes round on each CPU it may
 * run on in turn (one lane warmed and the other not made the first burst,
 * whichever CPU it ran on, twice as slow as the next).
 */
static void warm_lanes(void)
{
	cpu_set_t all, one;
	int c;

	if (sched_getaffinity(0, sizeof(all), &all) < 0) {
		store_rate(1, SBUF_SIZE / 64, 1);
		return;
	}
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (sched_setaffinity(0, sizeof(one), &one) == 0)
			store_rate(1, SBUF_SIZE / 64, 1);
	}
	sched_setaffinity(0, sizeof(all), &all);
}

static int store_child(void *arg, void *out)
{
	const unsigned *lanes = arg;
	struct sres *r = out;
	struct pk_config cfg;
	struct pk_store_info info;
	struct pk_reader *rd;

	pk_config_init(&cfg);
	cfg.buffer_path = NULL;
	cfg.buffer_size = SBUF_SIZE;
	cfg.flags = PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.consoles = NULL;
	cfg.lanes = *lanes;	/* whatever PK_LANES says */
	if (pk_init(&cfg) < 0)
		return 1;
	rd = pk_reader_open();
	if (!rd || pk_reader_info(rd, &info) < 0)
		return 1;
	r->lanes = info.lanes;
	pk_reader_close(rd);
	warm_lanes();
	r->p1_ns = 1e9 / store_rate(1, SCOST_CALLS, 0);
	r->s1_ns = 1e9 / store_rate(1, SCOST_CALLS, 1);
	r->p2_rate = store_rate(2, SCOST_CALLS, 0);
	r->real[0] = store_rate(1, SREAL_CALLS, 0);
	r->real[1] = store_rate(2, SREAL_CALLS, 0);
	pk_shutdown();
	return 0;
}

/*
 * The model's store costs from one round's bursts: fmt_ns + cs_ns is one
 * call alone, cs_ns the store's part; xfer_ns (one ring) or lane_ns
 * (lanes) the one that makes the simulated two-thread rate the measured
 * one (the simulated rate falls as either grows: bisection).
 */
static void store_costs(const struct sres *m, struct pkb_sim_params *p, enum pkb_sim_store store)
{
	struct pkb_sim_store_result sr;
	int64_t lo = 0, hi = 1000000, *fit = store == PKB_SIM_LANES ? &p->c.lane_ns : &p->c.xfer_ns;

	/* A store alone measured slower than a whole call is the host's noise. */
	p->c.cs_ns = (int64_t)(m->s1_ns < m->p1_ns ? m->s1_ns : m->p1_ns);
	p->c.fmt_ns = (int64_t)m->p1_ns - p->c.cs_ns;
	if (p->c.cs_ns < 1)
		p->c.cs_ns = 1;
	if (p->c.fmt_ns < 1)
		p->c.fmt_ns = 1;
	p->threads = 2;
	p->store = store;
	p->lanes = store == PKB_SIM_LANES ? (int)m->lanes : 0;	/* the real store's */
	while (hi - lo > 1) {
		*fit = (lo + hi) / 2;
		if (pkb_sim_store_run(p, 0.02, &sr) < 0 || sr.rate < m->p2_rate)
			hi = *fit;
		else
			lo = *fit;
	}
	*fit = lo;
}

static double pct(double sim, double real)
{
	if (real <= 0)
		return sim <= 0 ? 0 : 100;
	return 100 * fabs(sim - real) / real;
}

static int run_validate(struct simopts *o)
{
	struct pkb_storm_opts so = {
		.seconds = o->vseconds, .bps = o->vbps, .watchdog_ms = (unsigned)(o->p.watchdog_ns / 1000000),
		.budget_us = (unsigned)(o->p.budget_ns / 1000),
		.buffer_size = o->p.buffer_size, .doubled = 0,
	};
	static struct pkb_storm_result res[PKB_MAX_STORM_RUNS];
	long host = sysconf(_SC_NPROCESSORS_ONLN);
	double worst = 0;
	int lineb[PKB_SIM_MAX_LIST] = { 0 }, line_bytes = 0;	/* 0: as T=1 measured, or rec */
	int ti, m, k, i, nres, status = 0;

	so.modes = o->modes;
	so.drain_timeout_s = (int)(4 * (double)so.buffer_size / (double)so.bps) + 30;
	o->p.bps = (double)so.bps;
	o->p.buffer_size = so.buffer_size;
	o->p.seconds = so.seconds;
	if (host < 1)
		host = 1;
	if (host > PKB_SIM_MAX_CPUS)
		host = PKB_SIM_MAX_CPUS;
	printf("validate: the real storm and the simulated one on this machine (%ld CPUs), "
	       "D=%g s, console %lu B/s, store %zu KiB, median of %d rounds\n",
	       host, so.seconds, so.bps, so.buffer_size >> 10, o->rounds);
	pkb_sim_costs_print(stdout, &o->p.c);
	printf("\n%3s %-8s %10s %10s %5s %9s %9s %5s %9s %9s %5s %10s %10s\n", "T", "mode",
	       "share real", "share sim", "diff", "max real", "max sim", "diff", "p50 real",
	       "p50 sim", "diff", "<stop real", "<stop sim");
	for (ti = 0; ti < o->nvthreads; ti++) {
		double share[NSMODES][15], maxc[NSMODES][15], maxs[NSMODES][15], p50[NSMODES][15];
		double line[3 * 15];
		int nline = 0;
		int n[NSMODES] = { 0 };

		so.threads = o->vthreads[ti];
		for (k = 0; k < o->rounds; k++) {
			nres = pkb_storm_run(&so, res, PKB_MAX_STORM_RUNS);
			for (i = 0; i < nres; i++) {
				const struct pkb_storm_result *r = &res[i];

				if (r->status < 0 || r->mode >= NSMODES)
					continue;
				share[r->mode][n[r->mode]] = real_share(r);
				maxc[r->mode][n[r->mode]] = (double)r->hist.max;
				p50[r->mode][n[r->mode]] = (double)pkb_hist_quantile(&r->hist, 0.5);
				/* Drop notices are bytes without a record: only runs without. */
				if (r->con_records && !r->file_notice_lines && nline < 3 * 15)
					line[nline++] = (double)r->con_bytes / (double)r->con_records;
				maxs[r->mode][n[r->mode]++] = (double)r->max_in_storm_ns;
			}
		}
		for (m = 0; m < NSMODES; m++) {
			struct pkb_sim_params p = o->p;
			struct pkb_sim_result sr;
			double rs, rm, rstop, rp, ds, dm, dp;
			const char *mark;
			char b[6][24];
			int rc;

			if (!(o->modes & (1u << m)))
				continue;
			if (!n[m]) {
				printf("%3d %-8s the real storm failed in every round\n", so.threads,
				       pkb_smode_names[m]);
				status = 1;
				continue;
			}
			p.cpus = (int)host;
			p.threads = so.threads;
			p.mode = (enum pkb_smode)m;
			/*
			 * The storm's record is its 76-byte line; the console
			 * writes it with the prefix the library puts before
			 * every record: the bytes a record took on the real line.
			 */
			p.rec_bytes = STORM_REC_BYTES;
			if (nline)
				line_bytes = (int)(med(line, nline) + 0.5);
			p.line_bytes = lineb[ti] = line_bytes;
			rc = pkb_sim_run(&p, &sr);
			if (rc < 0) {
				printf("%3d %-8s simulation failed: %s\n", so.threads, pkb_smode_names[m],
				       strerror(-rc));
				status = 1;
				continue;
			}
			rs = med(share[m], n[m]);
			rm = med(maxc[m], n[m]);
			rstop = med(maxs[m], n[m]);
			ds = pct(100 * sr.top_share, 100 * rs);
			rp = med(p50[m], n[m]);
			dm = pct((double)sr.hist.max, rm);
			dp = pct((double)pkb_hist_quantile(&sr.hist, 0.5), rp);
			/* What the longest call is when it is not the protocol: the notes below. */
			mark = m == PKB_THREAD ? "*" : so.threads == 1 ? "+" : " ";
			printf("%3d %-8s %9.1f%% %9.1f%% %4.0f%% %9s %9s %4.0f%%%s %9s %9s %4.0f%% "
			       "%10s %10s\n",
			       so.threads, pkb_smode_names[m], 100 * rs, 100 * sr.top_share, ds,
			       NS(b[0], (uint64_t)rm), NS(b[1], sr.hist.max), dm, mark,
			       NS(b[4], (uint64_t)rp), NS(b[5], pkb_hist_quantile(&sr.hist, 0.5)), dp,
			       NS(b[2], (uint64_t)rstop), NS(b[3], sr.max_in_storm_ns));
			if (ds > worst)
				worst = ds;
			if (*mark == ' ' && dm > worst)
				worst = dm;
			if (so.threads == 1 && m != PKB_THREAD && dp > worst)
				worst = dp;
		}
	}
	printf("  console line: what a record took on the real line, prefix and all (bytes):");
	for (ti = 0; ti < o->nvthreads; ti++)
		printf(" %d", lineb[ti]);
	printf("\n");
	printf("  * thread mode's longest call is a caller preempted or descheduled, not printing:\n"
	       "    shown, not counted in the largest difference (docs/sim.md)\n"
	       "  + one thread: every call prints its own record and sleeps until the line has\n"
	       "    sent it, so the longest call is one record plus the host's longest wake-up\n"
	       "    delay, which the model does not have: shown, not counted; the median call\n"
	       "    (the protocol: one record at the line's rate) is counted instead\n");
	printf("\nstore throughput, records/s of all threads (real: pk_printk() with no console, "
	       "%d calls a thread, a %u KiB store of one ring (PK_LANES=1) and of the default "
	       "lanes; sim: the model's one ring and lanes on costs measured in the same round; "
	       "median of %d rounds)\n", SREAL_CALLS, SBUF_SIZE >> 10, o->rounds);
	{
		struct sres sr[2][15];
		double v[2][2][15], sim[2][2][15], fmt[2][15], cs[2][15], fit[2][15], nl[15];
		char why[160];
		int got[2] = { 0, 0 }, st;

		for (k = 0; k < o->rounds; k++) {
			/* Side by side, and neither always first. */
			for (i = 0; i < 2; i++) {
				struct pkb_sim_params p = o->p;
				struct pkb_sim_store_result res;
				struct sres *r;

				st = (k + i) % 2;
				r = &sr[st][got[st]];
				if (pkb_child_run("validate: store", 2, 120, store_child,
						  (void *)&store_lanes[st], r, sizeof(*r), why,
						  sizeof(why)) != 0 ||
				    !(r->real[0] > 0) || !(r->real[1] > 0) || !(r->p2_rate > 0))
					continue;
				p.cpus = (int)host;
				store_costs(r, &p, store_model[st]);
				fmt[st][got[st]] = (double)p.c.fmt_ns;
				cs[st][got[st]] = (double)p.c.cs_ns;
				fit[st][got[st]] = (double)(st ? p.c.lane_ns : p.c.xfer_ns);
				if (st)
					nl[got[st]] = r->lanes;
				for (ti = 0; ti < 2; ti++) {
					p.threads = ti + 1;
					pkb_sim_store_run(&p, 0.02, &res);
					v[st][ti][got[st]] = r->real[ti];
					sim[st][ti][got[st]] = res.rate;
				}
				got[st]++;
			}
		}
		for (st = 0; st < 2; st++) {
			if (got[st])
				continue;
			printf("  the real store run (%s) failed in every round: %s\n",
			       st ? "lanes" : "one ring", why);
			status = 1;
		}
		if (got[0] && got[1]) {
			printf("  store costs (median): one ring fmt_ns=%.0f cs_ns=%.0f xfer_ns=%.0f; "
			       "lanes (%.0f) fmt_ns=%.0f cs_ns=%.0f lane_ns=%.0f\n",
			       med(fmt[0], got[0]), med(cs[0], got[0]), med(fit[0], got[0]),
			       med(nl, got[1]), med(fmt[1], got[1]), med(cs[1], got[1]),
			       med(fit[1], got[1]));
			printf("%3s %14s %14s %6s %14s %14s %6s\n", "T", "ring real", "ring sim", "diff",
			       "lanes real", "lanes sim", "diff");
			for (ti = 0; ti < 2; ti++) {
				double d[2], rr[2], ss[2];

				for (st = 0; st < 2; st++) {
					rr[st] = med(v[st][ti], got[st]);
					ss[st] = med(sim[st][ti], got[st]);
					d[st] = pct(ss[st], rr[st]);
					if (d[st] > worst)
						worst = d[st];
				}
				printf("%3d %14.4g %14.4g %5.0f%% %14.4g %14.4g %5.0f%%\n", ti + 1,
				       rr[0], ss[0], d[0], rr[1], ss[1], d[1]);
			}
		}
	}
	printf("\nvalidation: largest difference %.0f %%\n", worst);
	return status;
}

int pkb_sim_main(int argc, char **argv)
{
	struct simopts o;
	int rc = parse(argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!pkb_tmpdir()[0])
		return 1;
	if (get_costs(&o) < 0) {
		pkb_tmpdir_remove();
		return 1;
	}
	rc = o.validate ? run_validate(&o) : run_sims(&o);
	pkb_tmpdir_remove();
	return rc;
}
