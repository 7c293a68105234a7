/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what the parts of pkbench share: options, results, helpers.
 *
 * Every scenario run (one mode of the storm, one logger of the latency
 * table, one crash) happens in a forked child, so each starts from a fresh
 * library state and a hung or crashed run cannot take the others with it.
 * The child sends its result struct back through a pipe (child.c).
 */
#ifndef PKB_BENCH_H
#define PKB_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <printk/printk.h>

#include "hist.h"

#define PKB_MAX_THREADS		64
#define PKB_MAX_SHARES		(PKB_MAX_THREADS + 8)
#define PKB_MAX_STORM_RUNS	16
/* Rows of pkbench latency: every logger, 3 variants, 4 thread counts (--threads). */
#define PKB_MAX_LAT_RUNS	256
#define PKB_MAX_CRASH_RUNS	16

/* The storm's flush-mode variants. */
enum pkb_smode {
	PKB_LEGACY, PKB_HANDOFF, PKB_BUDGET, PKB_THREAD,
	PKB_BASELINE,	/* control: no libprintk, the workers only format the message */
	PKB_NSMODES
};

extern const char *const pkb_smode_names[PKB_NSMODES];

struct pkb_storm_opts {
	int threads;			/* T */
	double seconds;			/* D */
	unsigned long bps;		/* B: console bytes per second */
	unsigned watchdog_ms;		/* W */
	unsigned modes;			/* bit (1 << enum pkb_smode) */
	unsigned budget_us;		/* print_budget_us of the budget variant */
	size_t buffer_size;		/* record store bytes */
	int doubled;			/* run D, then 2 D */
	int drain_timeout_s;		/* pk_flush() limit after the storm */
};

/* Console bytes written by one thread. */
struct pkb_share {
	uint32_t tid;
	int who;		/* worker index, PKB_WHO_MAIN or PKB_WHO_OTHER */
	int printer_thread;	/* a libprintk printer thread */
	uint64_t bytes;
	uint64_t records;
};
#define PKB_WHO_MAIN	(-1)
#define PKB_WHO_OTHER	(-2)

struct pkb_storm_result {
	int status;			/* 0 ran; < 0 failed (see error) */
	char error[160];
	enum pkb_smode mode;
	int threads;
	double seconds;			/* requested D */
	/* callers */
	uint64_t calls;
	uint64_t call_errors;		/* pk_printk() < 0 */
	uint64_t watchdog;		/* calls longer than W */
	uint64_t max_in_storm_ns;	/* longest call, counted up to the stop */
	/* printing stints of calling threads before the stop (stint.h) */
	uint64_t stints;
	uint64_t stint_max_writes;
	uint64_t stint_max_ns;
	int stint_max_who;		/* worker index */
	uint64_t worker_calls[PKB_MAX_THREADS];
	uint64_t worker_max_ns[PKB_MAX_THREADS];
	struct pkb_hist hist;		/* call times, all workers */
	/* printing */
	int nshares;			/* entries in shares */
	int shares_known;		/* threads libprintk knows */
	struct pkb_share shares[PKB_MAX_SHARES];
	struct pk_flush_stats fs;
	/* store and console */
	uint64_t start_seq;		/* console's next seq at registration */
	uint64_t store_next_seq;
	uint64_t store_lost;
	uint64_t con_next_seq;
	uint64_t con_records;
	uint64_t con_bytes;
	uint64_t con_dropped;
	uint64_t con_skipped;
	uint64_t con_write_errors;
	uint64_t con_busy_ns;
	uint64_t file_data_lines;	/* lines the workers' records became */
	uint64_t file_notice_lines;	/* "** N printk messages dropped **" */
	uint64_t file_notice_sum;	/* sum of N */
	uint64_t file_other_lines;
	int complete;			/* the completeness check passed */
	char complete_why[160];
	/* time */
	double storm_s;			/* producers ran (start to stop flag) */
	double join_s;			/* stop flag to last worker returned */
	double caught_up_s;		/* stop flag to console caught up, sampled */
	double flush_s;			/* pk_flush() after the join */
	int flush_rc;
	double backlog_s;		/* sampled time with a backlog */
	double backlog_busy_s;		/* console busy time inside it */
	uint64_t backlog_bytes;		/* console bytes written inside it */
};

struct pkb_latency_opts {
	long burst;			/* calls per thread, back to back */
	double sustained_s;		/* paced run length */
	unsigned rate;			/* sustained: calls per second per thread */
	int threads[4];
	int nthreads;
	int rounds;			/* burst runs of each row, interleaved (1..PKB_MAX_ROUNDS) */
};

/* --rounds: at most this many burst runs of each row. */
#define PKB_MAX_ROUNDS	15

/*
 * PKB_FLAT: the throughput run, each thread making PKB_FLAT_FACTOR * burst
 * calls back to back with no clock read between them, for the rows whose
 * store path the throughput table compares (pkb_flat_row()).
 */
enum pkb_lat_variant { PKB_BURST, PKB_SUSTAINED, PKB_FLAT };
#define PKB_FLAT_FACTOR	20

struct pkb_lat_result {
	int status;		/* 0 ran, 1 skipped, < 0 failed */
	char why[120];
	char name[48];
	const char *where;	/* where the lines went */
	int threads;
	enum pkb_lat_variant variant;
	uint64_t calls;
	uint64_t file_lines;	/* lines with the message found afterwards */
	uint64_t file_dropped;	/* sum of N in "** N printk messages dropped **" */
	double wall_s;
	struct pkb_hist hist;
	/*
	 * Burst rows: the p50 and p99.9 of each round (--rounds), the first being the
	 * run whose histogram is above; the later rounds run every row once
	 * more, in the table's order, so that each row is measured across the
	 * same stretch of the machine's time.
	 */
	uint64_t p50[PKB_MAX_ROUNDS];
	uint64_t p999[PKB_MAX_ROUNDS];	/* and its p99.9 */
	/* Throughput rows: all threads' calls a second in each round, the first being calls / wall_s. */
	double rate[PKB_MAX_ROUNDS];
	int nrounds;
};

/* The median of a throughput row's rounds (0 if none ran). */
double pkb_lat_rate_median(const struct pkb_lat_result *r);

struct pkb_crash_opts {
	long records;
};

struct pkb_crash_result {
	int status;		/* 0 ran, 1 skipped, < 0 failed */
	char why[120];
	char name[48];
	long logged;		/* calls made before abort() */
	long found;		/* records found in the file */
	int term_signal;	/* the child's terminating signal, 0 if it exited */
	int crash_report;	/* the file holds libprintk's crash report */
};

struct pkb_machine {
	long cpus;
	char cpu_model[96];
	char kernel[240];
	char date[40];
};

/* Everything one pkbench invocation measured, for the reports. */
struct pkb_report {
	struct pkb_machine machine;
	const struct pkb_storm_opts *storm_opts;
	struct pkb_storm_result *storm;
	int nstorm;
	const struct pkb_latency_opts *lat_opts;
	struct pkb_lat_result *lat;
	int nlat;
	const struct pkb_crash_opts *crash_opts;
	struct pkb_crash_result *crash;
	int ncrash;
};

/* storm.c */
int pkb_storm_run(const struct pkb_storm_opts *o, struct pkb_storm_result *res, int max);
/* latency.c */
int pkb_latency_run(const struct pkb_latency_opts *o, struct pkb_lat_result *res, int max);
/* crash.c */
int pkb_crash_run(const struct pkb_crash_opts *o, struct pkb_crash_result *res, int max);

/* report.c: terminal tables */
void pkb_machine_get(struct pkb_machine *m);
void pkb_report_machine(FILE *f, const struct pkb_machine *m);
void pkb_report_storm(FILE *f, const struct pkb_report *r);
void pkb_report_latency(FILE *f, const struct pkb_report *r);
/* The throughput of the burst runs, by thread count (called by pkb_report_latency). */
void pkb_report_throughput(FILE *f, const struct pkb_report *r, int name_w, int where_w);
/* latency.c: is this logger in the throughput runs? */
bool pkb_flat_row(const char *name, const char *where);
void pkb_report_crash(FILE *f, const struct pkb_report *r);
/* json.c */
int pkb_json_write(const char *path, const struct pkb_report *r);
/* net.c: the network console against a private rsyslogd */
struct pkb_net_opts {
	long records;			/* -n: stored with the receiver up */
	long down;			/* -m: logged while it is down */
	int runs;			/* -r */
};

struct pkb_net_result {
	int status;			/* 0 ran; < 0 failed (see error) */
	char error[160];
	int transport;			/* 0 TCP, 1 RELP */
	double store_s;			/* the N calls */
	double deliver_s;		/* first call to the N-th record in the file */
	double rate;			/* N / deliver_s */
	uint64_t lat_med, lat_p99, lat_max;	/* pk_printk() with the receiver down */
	int resumed;			/* a record logged after the restart arrived */
	double resume_s;		/* restart to that record in the file */
	uint64_t stored, distinct, dups, dropped, lost;
};

/* Exit status: 0 ran (or skipped: no rsyslogd or imrelp), 1 a run failed. */
int pkb_net_run(const struct pkb_net_opts *o);

/* plot.c */
int pkb_plot_write(const char *path, const struct pkb_report *r);

/* child.c */
/**
 * pkb_child_run() - run @fn in a forked child and fetch its result.
 * @label:     shown on the progress line
 * @expect_s:  expected run time, for the progress line
 * @timeout_s: kill the child after this long
 * @fn:        fills @out (of @size bytes) in the child; its return value is
 *             the child's exit status
 * Return: 0 with @out filled; -ETIMEDOUT (killed), -ECHILD (died or sent
 * a short result, @why says how), other negative errno.
 */
int pkb_child_run(const char *label, double expect_s, double timeout_s,
		  int (*fn)(void *arg, void *out), void *arg, void *out, size_t size,
		  char *why, size_t whylen);

/* progress.c: one \r-updated line on stderr, only when it is a terminal */
void pkb_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pkb_progress_clear(void);

/* util.c */
uint64_t pkb_now_ns(void);
void pkb_sleep_ns(uint64_t ns);
/* A fresh private directory for the run's files; "" on failure. */
const char *pkb_tmpdir(void);
void pkb_tmpdir_remove(void);
/* Count the lines of @path containing @needle; -1 if unreadable. */
long pkb_count_lines(const char *path, const char *needle);
/* What a console's file holds: lines with @mark, drop notices and their sum, the rest. */
struct pkb_file_scan {
	uint64_t data_lines, notice_lines, notice_sum, other_lines;
};
void pkb_scan_file(const char *path, const char *mark, struct pkb_file_scan *out);
/* Human units: "812ns", "12.3us", "4.56ms", "7.89s". */
const char *pkb_fmt_ns(char *buf, size_t n, uint64_t ns);

#endif /* PKB_BENCH_H */
