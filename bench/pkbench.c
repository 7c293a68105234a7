// SPDX-License-Identifier: MIT
/*
 * pkbench.c - command line of the libprintk benchmark.
 *
 *   pkbench storm    the 2017 printk storm, every flush mode side by side
 *   pkbench latency  per-call time of libprintk and its peers
 *   pkbench crash    records that survive abort(), per logger
 *   pkbench net      records/s to rsyslogd over TCP and RELP, caller latency
 *                    while the receiver is down (skipped without rsyslog)
 *   pkbench sim      a simulation of the flush modes and the store on 1 to 1024
 *                    CPUs, with costs measured here; --validate: beside the
 *                    real storm (simcmd.c, sim.c)
 *   pkbench demo     storm (D and 2D) + latency + crash, chart and JSON
 *
 * Exit status: 0 when every run ran and every completeness check passed,
 * 1 otherwise, 2 for a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"
#include "sim.h"

enum { OPT_MODES = 256, OPT_BUDGET, OPT_JSON, OPT_PLOT, OPT_DOUBLE, OPT_BUFSIZE, OPT_BURST,
       OPT_SUSTAINED, OPT_RATE, OPT_THREADS, OPT_DRAIN, OPT_ROUNDS };

static const struct option long_opts[] = {
	{ "duration", required_argument, NULL, 'D' },
	{ "bytes-per-sec", required_argument, NULL, 'B' },
	{ "watchdog-ms", required_argument, NULL, 'W' },
	{ "records", required_argument, NULL, 'N' },
	{ "modes", required_argument, NULL, OPT_MODES },
	{ "budget-us", required_argument, NULL, OPT_BUDGET },
	{ "buffer-size", required_argument, NULL, OPT_BUFSIZE },
	{ "double", no_argument, NULL, OPT_DOUBLE },
	{ "drain-timeout", required_argument, NULL, OPT_DRAIN },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "sustained", required_argument, NULL, OPT_SUSTAINED },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "rounds", required_argument, NULL, OPT_ROUNDS },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "help", no_argument, NULL, 'h' },
	{ 0, 0, 0, 0 },
};

static void usage(FILE *f)
{
	fputs("usage: pkbench storm [-T threads] [-D seconds] [-B bytes_per_sec] [-W watchdog_ms]\n"
	      "                     [--modes legacy,handoff,budget,thread] [--budget-us N]\n"
	      "                     [--buffer-size BYTES] [--double] [--drain-timeout S]\n"
	      "                     [--json FILE] [--plot FILE.png]\n"
	      "       pkbench latency [--burst N] [--sustained SECONDS] [--rate CALLS_PER_S]\n"
	      "                       [--threads 1,2] [--rounds N] [--json FILE]\n"
	      "       pkbench crash [-N records] [--json FILE]\n"
	      "       pkbench net [-n records] [-m records_while_down] [-r runs]\n"
	      "       pkbench sim [--cpus N,...] [--mode M] [--seconds S] [--seed K] [--validate] ...\n"
	      "       pkbench demo [storm, latency and crash options] [--json FILE] [--plot FILE]\n"
	      "See pkbench(1).\n",
	      f);
}

static int bad(const char *opt, const char *val)
{
	fprintf(stderr, "pkbench: bad value for %s: '%s'\n", opt, val);
	return 2;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s)
		return -1;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_modes(const char *s, unsigned *out)
{
	char buf[128], *tok, *save = NULL;
	unsigned m = 0;
	int i, found;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		found = 0;
		for (i = 0; i < PKB_NSMODES; i++) {
			if (!strcmp(tok, pkb_smode_names[i])) {
				m |= 1u << i;
				found = 1;
			}
		}
		if (!strcmp(tok, "all")) {
			m |= (1u << PKB_NSMODES) - 1;
			found = 1;
		}
		if (!found)
			return -1;
	}
	if (!m)
		return -1;
	*out = m;
	return 0;
}

static int parse_threads(const char *s, struct pkb_latency_opts *o)
{
	char buf[64], *tok, *save = NULL;
	long v;

	snprintf(buf, sizeof(buf), "%s", s);
	o->nthreads = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nthreads == (int)(sizeof(o->threads) / sizeof(o->threads[0])) ||
		    parse_long(tok, 1, PKB_MAX_THREADS, &v) < 0)
			return -1;
		o->threads[o->nthreads++] = (int)v;
	}
	return o->nthreads ? 0 : -1;
}

/* Make the directory part of @path exist (out/ for the demo). */
static void make_parent(const char *path)
{
	char dir[512], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	mkdir(dir, 0755);
}

int main(int argc, char **argv)
{
	struct pkb_storm_opts so = {
		.threads = 16, .seconds = 10, .bps = 11520, .watchdog_ms = 1000,
		.modes = (1u << PKB_NSMODES) - 1, .budget_us = 20000, .buffer_size = 32u << 10,
		.doubled = 0, .drain_timeout_s = 0,
	};
	struct pkb_latency_opts lo = {
		.burst = 10000, .sustained_s = 2, .rate = 5000, .threads = { 1, 2 }, .nthreads = 2,
		.rounds = 1,
	};
	struct pkb_crash_opts co = { .records = 1001 };
	struct pkb_net_opts no = { .records = 20000, .down = 2000, .runs = 3 };
	static struct pkb_storm_result storm[PKB_MAX_STORM_RUNS];
	static struct pkb_lat_result lat[PKB_MAX_LAT_RUNS];
	static struct pkb_crash_result crash[PKB_MAX_CRASH_RUNS];
	struct pkb_report rep;
	const char *cmd, *json = NULL, *plot = NULL;
	int c, i, do_storm = 0, do_lat = 0, do_crash = 0, do_net = 0, status = 0;
	long v;
	double d;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "sim"))
		return pkb_sim_main(argc, argv);
	if (!strcmp(cmd, "storm")) {
		do_storm = 1;
	} else if (!strcmp(cmd, "latency")) {
		do_lat = 1;
	} else if (!strcmp(cmd, "crash")) {
		do_crash = 1;
	} else if (!strcmp(cmd, "net")) {
		do_net = 1;
	} else if (!strcmp(cmd, "demo")) {
		do_storm = do_lat = do_crash = 1;
		so.seconds = 4;
		so.doubled = 1;
		lo.sustained_s = 1;
		json = "out/pkbench.json";
		plot = "out/pkbench.png";
	} else {
		fprintf(stderr, "pkbench: unknown command '%s'\n", cmd);
		usage(stderr);
		return 2;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "T:D:B:W:N:n:m:r:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'T':
			if (parse_long(optarg, 1, PKB_MAX_THREADS, &v) < 0)
				return bad("-T", optarg);
			so.threads = (int)v;
			break;
		case 'D':
			if (parse_double(optarg, 0.01, 86400, &d) < 0)
				return bad("-D", optarg);
			so.seconds = d;
			break;
		case 'B':
			if (parse_long(optarg, 100, 1L << 34, &v) < 0)
				return bad("-B", optarg);
			so.bps = (unsigned long)v;
			break;
		case 'W':
			if (parse_long(optarg, 1, 86400000, &v) < 0)
				return bad("-W", optarg);
			so.watchdog_ms = (unsigned)v;
			break;
		case 'N':
			if (parse_long(optarg, 1, 10000000, &v) < 0)
				return bad("-N", optarg);
			co.records = v;
			break;
		case 'n':
			if (parse_long(optarg, 1, 1000000, &v) < 0)
				return bad("-n", optarg);
			no.records = v;
			break;
		case 'm':
			if (parse_long(optarg, 1, 1000000, &v) < 0)
				return bad("-m", optarg);
			no.down = v;
			break;
		case 'r':
			if (parse_long(optarg, 1, 15, &v) < 0)
				return bad("-r", optarg);
			no.runs = (int)v;
			break;
		case OPT_MODES:
			if (parse_modes(optarg, &so.modes) < 0)
				return bad("--modes", optarg);
			break;
		case OPT_BUDGET:
			if (parse_long(optarg, 1, 100000000, &v) < 0)
				return bad("--budget-us", optarg);
			so.budget_us = (unsigned)v;
			break;
		case OPT_BUFSIZE:
			if (parse_long(optarg, PK_BUFFER_SIZE_MIN, 1L << 30, &v) < 0)
				return bad("--buffer-size", optarg);
			so.buffer_size = (size_t)v;
			break;
		case OPT_DOUBLE:
			so.doubled = 1;
			break;
		case OPT_DRAIN:
			if (parse_long(optarg, 1, 86400, &v) < 0)
				return bad("--drain-timeout", optarg);
			so.drain_timeout_s = (int)v;
			break;
		case OPT_BURST:
			if (parse_long(optarg, 1, 100000000, &v) < 0)
				return bad("--burst", optarg);
			lo.burst = v;
			break;
		case OPT_SUSTAINED:
			if (parse_double(optarg, 0.01, 86400, &d) < 0)
				return bad("--sustained", optarg);
			lo.sustained_s = d;
			break;
		case OPT_RATE:
			if (parse_long(optarg, 1, 10000000, &v) < 0)
				return bad("--rate", optarg);
			lo.rate = (unsigned)v;
			break;
		case OPT_ROUNDS:
			if (parse_long(optarg, 1, PKB_MAX_ROUNDS, &v) < 0)
				return bad("--rounds", optarg);
			lo.rounds = (int)v;
			break;
		case OPT_THREADS:
			if (parse_threads(optarg, &lo) < 0)
				return bad("--threads", optarg);
			break;
		case OPT_JSON:
			json = optarg;
			break;
		case OPT_PLOT:
			plot = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pkbench: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!so.drain_timeout_s)
		so.drain_timeout_s = (int)(4 * (double)so.buffer_size / (double)so.bps) + 30;
	if (plot && !do_storm) {
		fprintf(stderr, "pkbench: --plot draws the storm; it needs 'storm' or 'demo'\n");
		return 2;
	}

	memset(&rep, 0, sizeof(rep));
	pkb_machine_get(&rep.machine);
	setvbuf(stdout, NULL, _IOLBF, 0);
	pkb_report_machine(stdout, &rep.machine);
	if (!pkb_tmpdir()[0])
		return 1;
	if (do_storm) {
		rep.storm_opts = &so;
		rep.storm = storm;
		rep.nstorm = pkb_storm_run(&so, storm, PKB_MAX_STORM_RUNS);
		pkb_report_storm(stdout, &rep);
		for (i = 0; i < rep.nstorm; i++)
			if (storm[i].status < 0 ||
			    (storm[i].mode != PKB_BASELINE && !storm[i].complete))
				status = 1;
	}
	if (do_lat) {
		rep.lat_opts = &lo;
		rep.lat = lat;
		rep.nlat = pkb_latency_run(&lo, lat, PKB_MAX_LAT_RUNS);
		pkb_report_latency(stdout, &rep);
		for (i = 0; i < rep.nlat; i++)
			if (lat[i].status < 0)
				status = 1;
	}
	if (do_crash) {
		rep.crash_opts = &co;
		rep.crash = crash;
		rep.ncrash = pkb_crash_run(&co, crash, PKB_MAX_CRASH_RUNS);
		pkb_report_crash(stdout, &rep);
		for (i = 0; i < rep.ncrash; i++)
			if (crash[i].status < 0)
				status = 1;
	}
	if (do_net && pkb_net_run(&no))
		status = 1;
	if (json) {
		int rc;

		make_parent(json);
		rc = pkb_json_write(json, &rep);
		if (rc < 0) {
			fprintf(stderr, "pkbench: writing %s: %s\n", json, strerror(-rc));
			status = 1;
		} else {
			printf("\nwrote %s\n", json);
		}
	}
	if (plot) {
		int rc;

		make_parent(plot);
		rc = pkb_plot_write(plot, &rep);
		if (rc < 0) {
			fprintf(stderr, "pkbench: drawing %s with gnuplot: %s\n", plot, strerror(-rc));
			status = 1;
		} else {
			printf("wrote %s\n", plot);
		}
	}
	pkb_tmpdir_remove();
	return status;
}
