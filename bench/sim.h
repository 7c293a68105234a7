/* SPDX-License-Identifier: MIT */
/*
 * sim.h - pkbench sim: a discrete-event simulation of the flush modes and
 * the record store on 1 to 1024 CPUs.
 *
 * The machine this project runs on has 2 CPUs; the failure the console
 * handoff fixed happens on a hundred and more.  The model follows the
 * protocols as src/flush/ implements them (see sim.c) with costs measured
 * on this host by pkbench itself (simcost.c) or given on the command line,
 * and is deterministic: no wall clock inside, its own PRNG, so fixed costs
 * and one seed give the same output byte for byte.
 */
#ifndef PKB_SIM_H
#define PKB_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "bench.h"

#define PKB_SIM_MAX_CPUS	1024
#define PKB_SIM_MAX_THREADS	4096
#define PKB_SIM_MAX_LIST	16

/* What one step costs, in nanoseconds (measured: simcost.c). */
struct pkb_sim_costs {
	int64_t fmt_ns;		/* a call's own part: packing, clock, thread id (parallel) */
	int64_t cs_ns;		/* storing one record (pk__store(): reserve, copy, commit) */
	int64_t xfer_ns;	/* one cache-line transfer, per other CPU storing at once */
	int64_t lane_ns;	/* lanes: what a call loses per other CPU storing at once in
				 * its own lane (nothing serialized; measured, not assumed 0) */
	int64_t lock_ns;	/* console lock: trylock, record begin and end, unlock */
	int64_t wake_ns;	/* a futex wake system call, the waker's CPU time */
	int64_t wakeup_ns;	/* woken to running: futex wake to the sleeper running */
	int64_t write_ns;	/* one console write(): CPU time per record ... */
	int64_t write_kb_ns;	/* ... and per KiB */
	int64_t rec_overhead;	/* store bytes a record takes beyond its text */
	int measured;		/* 1: measured on this host now; 0: given */
};

enum pkb_sim_store { PKB_SIM_RING, PKB_SIM_LANES };

struct pkb_sim_params {
	int cpus;
	int threads;			/* producers */
	enum pkb_smode mode;		/* legacy, handoff, budget, thread */
	enum pkb_sim_store store;	/* the store the storm uses */
	double seconds;			/* simulated storm length */
	uint64_t seed;
	int rec_bytes;			/* one record's text */
	int line_bytes;			/* what the console writes for it (prefix and
					 * all); 0: rec_bytes */
	double rate;			/* calls/s per producer; 0: back to back (a storm) */
	int burst;			/* calls per arrival with rate */
	double bps;			/* console bytes/s; 0: no line limit (a file) */
	int64_t slice_ns;		/* time slice when threads share a CPU */
	int64_t budget_ns;		/* print budget of the budget variant */
	int64_t watchdog_ns;		/* W */
	size_t buffer_size;		/* store bytes */
	/*
	 * PKB_SIM_LANES: the store's lanes, CPU c storing in lane c % lanes,
	 * as many as the library makes (pkb_sim_lanes()); 0: one per CPU.
	 */
	int lanes;
	double emergency;		/* fraction of calls made in an emergency section */
	struct pkb_sim_costs c;
};

struct pkb_sim_result {
	struct pkb_sim_params p;
	uint64_t calls, watchdog;
	struct pkb_hist hist;		/* call times */
	uint64_t max_in_storm_ns;	/* longest call, counted up to the stop */
	uint64_t stored, printed, dropped, notices;
	double top_share;		/* of console bytes, the thread that wrote most */
	char top_who[16];		/* "w3", "rescue", "printer" */
	int printers;			/* threads that wrote console bytes */
	double busy_s, backlog_s;	/* line busy time, time with a backlog */
	double store_rate;		/* records stored per second of the storm */
	uint64_t handoffs, waits, wait_timeouts, budget_deferrals, direct;
	double end_s;			/* simulated: everything printed or dropped */
	uint64_t events;
	double wall_s;			/* host time the run took (not part of the output) */
};

/* Store throughput of @threads producers that only store, on @cpus CPUs. */
struct pkb_sim_store_result {
	int cpus, threads;
	enum pkb_sim_store store;
	double rate;			/* records/s, all producers */
	uint64_t events;
	double wall_s;
};

/* sim.c */
/*
 * The lanes the library gives a store of @bytes on a machine of @cpus
 * CPUs: pk__lanes_for_cpus() with @want as PK_LANES (0: the default, one
 * per CPU up to 16, each keeping 128 KiB of data).
 */
int pkb_sim_lanes(int cpus, size_t bytes, unsigned want);
int pkb_sim_run(const struct pkb_sim_params *p, struct pkb_sim_result *r);
int pkb_sim_store_run(const struct pkb_sim_params *p, double window_s,
		      struct pkb_sim_store_result *r);
/* simcost.c */
int pkb_sim_costs_measure(struct pkb_sim_costs *c, size_t buffer_size, int rec_bytes);
int pkb_sim_costs_load(const char *path, struct pkb_sim_costs *c, char *why, size_t n);
int pkb_sim_costs_set(struct pkb_sim_costs *c, const char *spec, char *why, size_t n);
void pkb_sim_costs_print(FILE *f, const struct pkb_sim_costs *c);
/* simcmd.c */
int pkb_sim_main(int argc, char **argv);

#endif /* PKB_SIM_H */
