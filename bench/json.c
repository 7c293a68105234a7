// SPDX-License-Identifier: MIT
/*
 * json.c - everything pkbench measured, as one JSON document.
 *
 * Times are in nanoseconds (integers) or seconds (fields ending in _s).
 * Histograms are given as percentiles plus their non-empty buckets,
 * [lower bound ns, count], so a reader can redraw any distribution.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void jhist(FILE *f, const struct pkb_hist *h)
{
	unsigned i;
	int first = 1;

	fprintf(f, "{\"count\": %lu, \"min_ns\": %lu, \"mean_ns\": %.1f, \"p50_ns\": %lu, "
		   "\"p99_ns\": %lu, \"p999_ns\": %lu, \"max_ns\": %lu, \"buckets\": [",
		(unsigned long)h->count, (unsigned long)(h->count ? h->min : 0),
		h->count ? (double)h->sum / (double)h->count : 0.0,
		(unsigned long)pkb_hist_quantile(h, 0.50), (unsigned long)pkb_hist_quantile(h, 0.99),
		(unsigned long)pkb_hist_quantile(h, 0.999), (unsigned long)h->max);
	for (i = 0; i < PKB_HIST_BUCKETS; i++) {
		if (!h->bucket[i])
			continue;
		fprintf(f, "%s[%lu, %lu]", first ? "" : ", ", (unsigned long)pkb_hist_bucket_lo(i),
			(unsigned long)h->bucket[i]);
		first = 0;
	}
	fputs("]}", f);
}

static void jstorm(FILE *f, const struct pkb_storm_result *r)
{
	int i;

	fputs("    {\"mode\": ", f);
	jstr(f, pkb_smode_names[r->mode]);
	fprintf(f, ", \"threads\": %d, \"seconds\": %g, \"status\": %d, \"error\": ", r->threads,
		r->seconds, r->status);
	jstr(f, r->error);
	fprintf(f, ",\n     \"calls\": %lu, \"call_errors\": %lu, \"watchdog_firings\": %lu, "
		   "\"max_in_storm_ns\": %lu,\n     \"stints\": %lu, \"stint_max_writes\": %lu, "
		   "\"stint_max_ns\": %lu, \"stint_max_worker\": %d,\n     \"call_ns\": ",
		(unsigned long)r->calls, (unsigned long)r->call_errors, (unsigned long)r->watchdog,
		(unsigned long)r->max_in_storm_ns, (unsigned long)r->stints,
		(unsigned long)r->stint_max_writes, (unsigned long)r->stint_max_ns, r->stint_max_who);
	jhist(f, &r->hist);
	fputs(",\n     \"worker_calls\": [", f);
	for (i = 0; i < r->threads && i < PKB_MAX_THREADS; i++)
		fprintf(f, "%s%lu", i ? ", " : "", (unsigned long)r->worker_calls[i]);
	fputs("],\n     \"worker_max_ns\": [", f);
	for (i = 0; i < r->threads && i < PKB_MAX_THREADS; i++)
		fprintf(f, "%s%lu", i ? ", " : "", (unsigned long)r->worker_max_ns[i]);
	fputs("],\n     \"printer_shares\": [", f);
	for (i = 0; i < r->nshares; i++) {
		const struct pkb_share *s = &r->shares[i];

		fprintf(f, "%s{\"tid\": %u, \"worker\": %d, \"printer_thread\": %s, \"bytes\": %lu, "
			   "\"records\": %lu}",
			i ? ", " : "", s->tid, s->who, s->printer_thread ? "true" : "false",
			(unsigned long)s->bytes, (unsigned long)s->records);
	}
	fprintf(f, "],\n     \"flush\": {\"handoffs\": %lu, \"waits\": %lu, \"wait_timeouts\": %lu, "
		   "\"takeovers\": %lu, \"budget_deferrals\": %lu, \"direct_records\": %lu, "
		   "\"thread_records\": %lu, \"max_print_ns\": %lu, \"stuck_skips\": %lu},\n",
		(unsigned long)r->fs.handoffs, (unsigned long)r->fs.waits,
		(unsigned long)r->fs.wait_timeouts, (unsigned long)r->fs.takeovers,
		(unsigned long)r->fs.budget_deferrals, (unsigned long)r->fs.direct_records,
		(unsigned long)r->fs.thread_records, (unsigned long)r->fs.max_print_ns,
		(unsigned long)r->fs.stuck_skips);
	fprintf(f, "     \"console\": {\"start_seq\": %lu, \"next_seq\": %lu, \"records\": %lu, "
		   "\"bytes\": %lu, \"dropped\": %lu, \"filtered\": %lu, \"write_errors\": %lu, "
		   "\"busy_ns\": %lu},\n",
		(unsigned long)r->start_seq, (unsigned long)r->con_next_seq,
		(unsigned long)r->con_records, (unsigned long)r->con_bytes,
		(unsigned long)r->con_dropped, (unsigned long)r->con_skipped,
		(unsigned long)r->con_write_errors, (unsigned long)r->con_busy_ns);
	fprintf(f, "     \"store\": {\"next_seq\": %lu, \"lost\": %lu},\n",
		(unsigned long)r->store_next_seq, (unsigned long)r->store_lost);
	fprintf(f, "     \"file\": {\"record_lines\": %lu, \"other_lines\": %lu, "
		   "\"drop_notices\": %lu, \"drop_notice_sum\": %lu},\n",
		(unsigned long)r->file_data_lines, (unsigned long)r->file_other_lines,
		(unsigned long)r->file_notice_lines, (unsigned long)r->file_notice_sum);
	fprintf(f, "     \"complete\": %s, \"complete_why\": ", r->complete ? "true" : "false");
	jstr(f, r->complete_why);
	fprintf(f, ",\n     \"storm_s\": %.6f, \"join_s\": %.6f, \"caught_up_s\": %.6f, "
		   "\"flush_s\": %.6f, \"flush_rc\": %d, \"backlog_s\": %.6f, "
		   "\"backlog_busy_s\": %.6f, \"backlog_bytes\": %lu}",
		r->storm_s, r->join_s, r->caught_up_s, r->flush_s, r->flush_rc, r->backlog_s,
		r->backlog_busy_s, (unsigned long)r->backlog_bytes);
}

static void jlat(FILE *f, const struct pkb_lat_result *r)
{
	fputs("    {\"logger\": ", f);
	jstr(f, r->name);
	fputs(", \"output\": ", f);
	jstr(f, r->where);
	fprintf(f, ", \"threads\": %d, \"variant\": \"%s\", \"status\": %d, \"why\": ", r->threads,
		r->variant == PKB_BURST ? "burst" : r->variant == PKB_FLAT ? "throughput" : "sustained",
		r->status);
	jstr(f, r->why);
	fprintf(f, ",\n     \"calls\": %lu, \"file_lines\": %lu, \"file_dropped\": %lu, "
		   "\"wall_s\": %.6f, \"call_ns\": ",
		(unsigned long)r->calls, (unsigned long)r->file_lines, (unsigned long)r->file_dropped,
		r->wall_s);
	jhist(f, &r->hist);
	if (r->variant == PKB_BURST) {
		int k;

		/* --rounds: every round's p50 and p99.9, the first being call_ns's. */
		fputs(", \"round_p50_ns\": [", f);
		for (k = 0; k < r->nrounds; k++)
			fprintf(f, "%s%lu", k ? ", " : "", (unsigned long)r->p50[k]);
		fputs("], \"round_p999_ns\": [", f);
		for (k = 0; k < r->nrounds; k++)
			fprintf(f, "%s%lu", k ? ", " : "", (unsigned long)r->p999[k]);
		fputc(']', f);
	}
	if (r->variant == PKB_FLAT) {
		int k;

		/* --rounds: every round's calls a second, the first being calls / wall_s. */
		fputs(", \"round_calls_per_s\": [", f);
		for (k = 0; k < r->nrounds; k++)
			fprintf(f, "%s%.0f", k ? ", " : "", r->rate[k]);
		fprintf(f, "], \"median_calls_per_s\": %.0f", pkb_lat_rate_median(r));
	}
	fputc('}', f);
}

static void jcrash(FILE *f, const struct pkb_crash_result *r)
{
	fputs("    {\"logger\": ", f);
	jstr(f, r->name);
	fprintf(f, ", \"status\": %d, \"why\": ", r->status);
	jstr(f, r->why);
	fprintf(f, ", \"logged\": %ld, \"in_file\": %ld, \"lost\": %ld, \"signal\": %d, "
		   "\"crash_report\": %s}",
		r->logged, r->found, r->logged - r->found, r->term_signal,
		r->crash_report ? "true" : "false");
}

int pkb_json_write(const char *path, const struct pkb_report *r)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f)
		return -errno;
	fputs("{\n  \"machine\": {\"cpus\": ", f);
	fprintf(f, "%ld, \"cpu\": ", r->machine.cpus);
	jstr(f, r->machine.cpu_model);
	fputs(", \"kernel\": ", f);
	jstr(f, r->machine.kernel);
	fputs(", \"date\": ", f);
	jstr(f, r->machine.date);
	fputs("}", f);
	if (r->storm_opts) {
		const struct pkb_storm_opts *o = r->storm_opts;

		fprintf(f, ",\n  \"storm_settings\": {\"threads\": %d, \"seconds\": %g, "
			   "\"bytes_per_sec\": %lu, \"watchdog_ms\": %u, \"budget_us\": %u, "
			   "\"buffer_size\": %zu, \"doubled\": %s},\n  \"storm\": [\n",
			o->threads, o->seconds, o->bps, o->watchdog_ms, o->budget_us, o->buffer_size,
			o->doubled ? "true" : "false");
		for (i = 0; i < r->nstorm; i++) {
			jstorm(f, &r->storm[i]);
			fputs(i + 1 < r->nstorm ? ",\n" : "\n", f);
		}
		fputs("  ]", f);
	}
	if (r->lat_opts) {
		fprintf(f, ",\n  \"latency_settings\": {\"burst\": %ld, \"sustained_s\": %g, "
			   "\"rate\": %u, \"rounds\": %d},\n  \"latency\": [\n",
			r->lat_opts->burst, r->lat_opts->sustained_s, r->lat_opts->rate,
			r->lat_opts->rounds);
		for (i = 0; i < r->nlat; i++) {
			jlat(f, &r->lat[i]);
			fputs(i + 1 < r->nlat ? ",\n" : "\n", f);
		}
		fputs("  ]", f);
	}
	if (r->crash_opts) {
		fprintf(f, ",\n  \"crash_settings\": {\"records\": %ld},\n  \"crash\": [\n",
			r->crash_opts->records);
		for (i = 0; i < r->ncrash; i++) {
			jcrash(f, &r->crash[i]);
			fputs(i + 1 < r->ncrash ? ",\n" : "\n", f);
		}
		fputs("  ]", f);
	}
	fputs("\n}\n", f);
	if (fclose(f) != 0)
		return -errno;
	return 0;
}
